"""Matched evaluation: Anzaku et al., *A Principled Evaluation Protocol for Comparative Investigation of the Effectiveness of DNN Classification Models on Similar-but-non-identical Datasets*.

- :mod:`.algorithms` — Algorithms 1 and 2: matching by predicted label and confidence within ε, the
  matched accuracies and their tables;
- :mod:`.study` — the chapter's experiments: evaluation per target, quantisation, the ε sweep;
- :mod:`.findings` — the readings the chapter states about those experiments' tables.

Every public name of these modules is importable from ``shifteval.matching``.
"""

from .algorithms import (
    METHODS,
    MatchResult,
    match_predictions,
    match_predictions_reference,
    matched_accuracy,
    matched_table,
    role_names,
)
from .findings import (
    case_counts,
    confidence_separates,
    gap_facts,
    narrower,
    quant_facts,
    roles,
    run_noise,
    summary,
    sweep_facts,
)
from .study import (
    CONTINUOUS_SHARE,
    QUANTISED_SHARE,
    distinct_probabilities,
    eps_sweep,
    evaluate,
    fig5_subsets,
    pick_models,
    quantisation_table,
)

__all__ = [
    "CONTINUOUS_SHARE",
    "METHODS",
    "QUANTISED_SHARE",
    "case_counts",
    "confidence_separates",
    "distinct_probabilities",
    "eps_sweep",
    "evaluate",
    "fig5_subsets",
    "gap_facts",
    "match_predictions",
    "match_predictions_reference",
    "matched_accuracy",
    "matched_table",
    "MatchResult",
    "narrower",
    "pick_models",
    "quant_facts",
    "quantisation_table",
    "role_names",
    "roles",
    "run_noise",
    "summary",
    "sweep_facts",
]
