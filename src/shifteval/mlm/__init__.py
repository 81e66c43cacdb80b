"""The Misclassification Likelihood Matrix: Sikar et al. (2024), *The Misclassification Likelihood Matrix: Some Classes Are More Likely To Be Misclassified Than Others*.

- :mod:`.matrix` — centroids (Eq. 1-2), distances and the matrix (§3.3), its comparisons with observed
  confusions;
- :mod:`.calibration` — the perturbations' severities calibrated on a separate model (§3.2, §4.4);
- :mod:`.study` — the paper's classifier, its perturbed predictions and the chapter's readings.

Every public name of these modules is importable from ``shifteval.mlm``; the perturbations themselves are
:mod:`shifteval.corruptions`.
"""

from .calibration import (
    calibrate_severities,
    calibration_record,
    calibration_split,
    calibration_targets,
    count_shared_images,
    paper_profile,
    same_weights,
)
from .matrix import (
    ambiguous_examples,
    centroid_distances,
    confidence_mirrors_distance,
    confusion_rates,
    initial_centroids,
    level_matrices,
    likeliest_pairs_rates,
    misclassification_likelihood_matrix,
    most_frequent_error,
    nearest_distance_matrix,
    partial_rank_agreement,
    rank_agreement,
    refine_centroids,
    row_rank,
    top_confusions,
)
from .study import (
    HARSH,
    RESILIENT,
    confusion_summary,
    paper_statements,
    perturbed_predictions,
    pooled,
    train_classifier,
)

__all__ = [
    "HARSH",
    "RESILIENT",
    "ambiguous_examples",
    "calibrate_severities",
    "calibration_record",
    "calibration_split",
    "calibration_targets",
    "centroid_distances",
    "confidence_mirrors_distance",
    "confusion_rates",
    "confusion_summary",
    "count_shared_images",
    "initial_centroids",
    "level_matrices",
    "likeliest_pairs_rates",
    "misclassification_likelihood_matrix",
    "most_frequent_error",
    "nearest_distance_matrix",
    "paper_profile",
    "paper_statements",
    "perturbed_predictions",
    "pooled",
    "partial_rank_agreement",
    "rank_agreement",
    "refine_centroids",
    "row_rank",
    "same_weights",
    "top_confusions",
    "train_classifier",
]
