"""Replication linear fits (Recht, Roelofs, Schmidt & Shankar 2019, *Do ImageNet Classifiers Generalize to ImageNet?*).

- :mod:`.fits` — linear and probit fits of new against original accuracy with bootstrap bands
  (§3.3, App. B), Clopper-Pearson intervals (Figure 1) and the Gaussian difficulty model (§5.3);
- :mod:`.recht2019` — the computations on the paper's published tables (Tables 2, 11-13 and App. C);
- :mod:`.testbeds` — fits over any accuracy table (a model testbed, the world's zoo): per-column fits,
  residuals, bands, subsets;
- :mod:`.perimage` — the release's per-image predictions: Tables 14-19 recomputed, per-class drops and a
  bootstrap over models and images.

Every public name of these modules is importable from ``shifteval.linfit``.
"""

from .fits import (
    SCALES,
    LinearFit,
    bootstrap_lines,
    clopper_pearson,
    fit_linear,
    fit_table,
    gaussian_difficulty_line,
    inverse_transform,
    mean_change,
    row_lines,
    simulate_gaussian_difficulty,
    simulated_line_spread,
    transform,
)
from .perimage import (
    MATCHED_FREQUENCY,
    ORIGINAL,
    PAPER_TABLES,
    always_wrong,
    bootstrap_comparison,
    compare_with_paper,
    drop_consistency,
    only_ties_differ,
    per_class_accuracy,
    per_class_drops,
    recompute_table,
    resampled_lines,
    two_level_bootstrap,
)
from .recht2019 import (
    STRATEGIES,
    TOPK,
    clopper_pearson_deviation,
    fit_recht2019,
    interval_agreement,
    paired_change,
    paper_agreement,
    rank_summary,
    recht2019_interval_deviation,
)
from .testbeds import (
    bootstrap_seed_spread,
    clopper_pearson_max_halfwidth,
    evenly_spaced_subset,
    fit_columns,
    fits_frame,
    line_residuals,
    rounding_interval_spread,
    rounding_spread,
    subset_slope_width,
    widest_band,
)

__all__ = [
    "MATCHED_FREQUENCY",
    "ORIGINAL",
    "PAPER_TABLES",
    "SCALES",
    "STRATEGIES",
    "TOPK",
    "always_wrong",
    "bootstrap_comparison",
    "bootstrap_lines",
    "bootstrap_seed_spread",
    "clopper_pearson",
    "clopper_pearson_deviation",
    "clopper_pearson_max_halfwidth",
    "compare_with_paper",
    "drop_consistency",
    "evenly_spaced_subset",
    "fit_columns",
    "fit_linear",
    "fit_recht2019",
    "fit_table",
    "fits_frame",
    "gaussian_difficulty_line",
    "interval_agreement",
    "inverse_transform",
    "line_residuals",
    "LinearFit",
    "mean_change",
    "only_ties_differ",
    "paired_change",
    "paper_agreement",
    "per_class_accuracy",
    "per_class_drops",
    "rank_summary",
    "recht2019_interval_deviation",
    "recompute_table",
    "resampled_lines",
    "rounding_interval_spread",
    "rounding_spread",
    "row_lines",
    "simulate_gaussian_difficulty",
    "simulated_line_spread",
    "subset_slope_width",
    "transform",
    "two_level_bootstrap",
    "widest_band",
]
