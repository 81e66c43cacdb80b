"""Label-free accuracy estimation with out-of-distribution detection (Zhu et al. 2023).

AutoEval (Deng & Zheng 2021) regresses a classifier's accuracy on an unlabeled test set from a
representation of that set; Zhu et al. first remove the images an energy-based OOD detector (Liu et al.
2020) flags, and multiply by the share kept. The modules follow the paper:

- :mod:`.network` — the classifier (features, logits, rotation head) and its :class:`Outputs`;
- :mod:`.representation` — §3.2: feature mean, variance and Fréchet distance;
- :mod:`.metadataset` — §3.3 meta-dataset (six transformations) and the unseen ones of §4.4;
- :mod:`.energy` — §3.4-3.5 energy score and threshold;
- :mod:`.detector` — the outlier-exposure detector (Liu et al., Eq. 9);
- :mod:`.estimators` — AutoEval and every baseline;
- :mod:`.pools` — held-out pools, ID sources and the unseen transformations;
- :mod:`.shifts` — the perturbed ID sources' severities, made for the data they perturb;
- :mod:`.protocol` — mixing, the RMSE tables (overall and per ID source), sweeps (threshold, OOD share,
  number of meta-sets) and the threshold's exclusions;
- :mod:`.backbone` — preparation and caching, and more meta-sets through a backbone (I/O only);
- :mod:`.streams` — every random stream from one seed.

Every public name of these modules is importable from ``shifteval.autoeval``. The labeled splits are
:mod:`shifteval.datasets.splits`; synthetic OOD sources and auxiliary outliers
:mod:`shifteval.datasets.ood`.
"""

from .backbone import (
    Backbone,
    extend_meta_sets,
    prepare,
    prepare_backbone,
    state_bytes,
)
from .detector import (
    default_margins,
    outlier_exposure_loss,
    train_detector,
)
from .energy import (
    auroc,
    energy,
    energy_threshold,
)
from .estimators import (
    METHOD_LABELS,
    METHODS,
    AutoEval,
    atc_threshold,
    fit,
    fit_temperature,
    negative_entropy,
    rmse,
)
from .metadataset import (
    TRANSFORMS,
    affine,
    cutout,
    meta_dataset,
    shear_contrast,
    transform_set,
)
from .network import (
    Outputs,
    check_images,
    compute_outputs,
    feature_net,
    rotate,
    train_feature_net,
)
from .pools import (
    Pools,
    evaluation_sources,
    id_source,
    source_groups,
    training_pools,
    unseen_transforms,
)
from .protocol import (
    by_source,
    clean_bias,
    compare_thresholds,
    detection_table,
    doc_error,
    evaluate,
    exclusion,
    meta_set_sweep,
    meta_validation,
    mix,
    rmse_difference,
    rmse_table,
    share_sweep,
    threshold_from,
    threshold_sweep,
)
from .representation import (
    Reference,
    frechet_distance,
    meta_targets,
    reference,
    representation,
)
from .shifts import (
    WORLD_TABLE,
    SeverityTable,
    calibrate_table,
    check_table,
    perturbations,
    severity_table,
)
from .streams import (
    PURPOSES,
    sequence,
    stream,
    stream_seed,
)

__all__ = [
    "affine",
    "atc_threshold",
    "auroc",
    "AutoEval",
    "Backbone",
    "by_source",
    "calibrate_table",
    "check_images",
    "check_table",
    "clean_bias",
    "compare_thresholds",
    "compute_outputs",
    "cutout",
    "default_margins",
    "detection_table",
    "doc_error",
    "energy",
    "energy_threshold",
    "evaluate",
    "evaluation_sources",
    "exclusion",
    "extend_meta_sets",
    "feature_net",
    "fit",
    "fit_temperature",
    "frechet_distance",
    "id_source",
    "meta_dataset",
    "meta_set_sweep",
    "meta_targets",
    "meta_validation",
    "METHOD_LABELS",
    "METHODS",
    "mix",
    "negative_entropy",
    "outlier_exposure_loss",
    "Outputs",
    "perturbations",
    "Pools",
    "prepare",
    "prepare_backbone",
    "PURPOSES",
    "Reference",
    "reference",
    "representation",
    "rmse",
    "rmse_difference",
    "rmse_table",
    "rotate",
    "sequence",
    "severity_table",
    "SeverityTable",
    "share_sweep",
    "source_groups",
    "shear_contrast",
    "state_bytes",
    "stream",
    "stream_seed",
    "threshold_from",
    "threshold_sweep",
    "train_detector",
    "train_feature_net",
    "training_pools",
    "transform_set",
    "TRANSFORMS",
    "unseen_transforms",
    "WORLD_TABLE",
]
