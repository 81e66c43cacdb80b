"""Label-free accuracy estimation with out-of-distribution detection (Zhu et al. 2023).

AutoEval (Deng & Zheng 2021) regresses a classifier's accuracy on an unlabeled test set from a
representation of that set; Zhu et al. first remove the images an energy-based OOD detector (Liu et al.
2020) flags, and multiply by the share kept. The modules follow the paper:

- :mod:`.network` — the classifier (features, logits, rotation head) and its :class:`Outputs`;
- :mod:`.representation` — §3.2: feature mean, variance and Fréchet distance;
- :mod:`.metadataset` — §3.3 meta-dataset (six transformations) and the unseen ones of §4.4;
- :mod:`.energy` — §3.4-3.5 energy and threshold, and the outlier-exposure detector (Liu et al., Eq. 9);
- :mod:`.estimators` — AutoEval and every baseline;
- :mod:`.pools` — data, held-out pools, ID sources and the unseen transformations;
- :mod:`.protocol` — mixing, the RMSE tables and sweeps (re-exporting :mod:`.pools`);
- :mod:`.backbone` — preparation and caching (I/O only);
- :mod:`.streams` — every random stream from one seed.

Synthetic OOD sources and auxiliary outliers live in :mod:`shifteval.datasets.ood`.
"""

from ..datasets.ood import OOD_SOURCES, auxiliary_outliers, ood_images, ood_images_from_files
from .backbone import Backbone, prepare, prepare_backbone
from .energy import auroc, default_margins, energy, energy_threshold, train_detector
from .estimators import (
    METHOD_LABELS,
    METHODS,
    AutoEval,
    atc_threshold,
    fill_missing_classes,
    fit,
    fit_temperature,
    negative_entropy,
    rmse,
)
from .metadataset import TRANSFORMS, affine, cutout, meta_dataset, shear_contrast, transform_set
from .network import Outputs, check_images, compute_outputs, feature_net, train_feature_net
from .protocol import (
    Data,
    Pools,
    clean_bias,
    detection_table,
    evaluate,
    evaluation_sources,
    id_source,
    image_splits,
    load_data,
    meta_validation,
    mix,
    rmse_table,
    share_sweep,
    threshold_sweep,
    training_pools,
    unseen_transforms,
)
from .representation import Reference, frechet_distance, meta_targets, reference, representation
from .streams import PURPOSES, sequence, stream, stream_seed

__all__ = [
    "METHODS", "METHOD_LABELS", "OOD_SOURCES", "PURPOSES", "TRANSFORMS", "AutoEval", "Backbone", "Data",
    "Outputs", "Pools", "Reference", "affine", "atc_threshold", "auroc", "auxiliary_outliers", "check_images",
    "clean_bias", "compute_outputs", "cutout", "default_margins", "detection_table", "energy",
    "energy_threshold", "evaluate", "feature_net", "fill_missing_classes", "fit", "fit_temperature",
    "frechet_distance", "id_source", "image_splits", "load_data", "meta_dataset", "meta_targets", "meta_validation", "mix",
    "negative_entropy", "ood_images", "ood_images_from_files", "prepare", "prepare_backbone", "reference",
    "representation", "rmse", "rmse_table", "sequence", "share_sweep", "shear_contrast", "stream",
    "stream_seed", "evaluation_sources", "threshold_sweep", "train_detector", "train_feature_net", "training_pools",
    "transform_set", "unseen_transforms",
]  # fmt: skip
