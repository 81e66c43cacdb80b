"""Selection-frequency bias: Engstrom, Ilyas, Santurkar, Tsipras, Steinhardt & Mądry (2020), *Identifying Statistical Bias in Dataset Replication*.

- :mod:`.estimators` — the gap decomposition (Eq. 2) and the naive (Eq. 4), jackknife (§5.2, App. E) and
  parametric (§5.3) selection-adjusted accuracies;
- :mod:`.parametric` — the parametric estimator's model: the beta-binomial mixture and the accuracy
  spline of Eq. (7) (App. F), fitted as a whole (and refitted by the bootstrap) by
  :class:`ParametricEstimator`;
- :mod:`.bootstrap` — App. F.1's bootstrap of the parametric estimator and a bootstrap of the jackknife;
- :mod:`.toy` — the toy model of statistic matching with noisy frequencies (§2, Eq. 1, App. C);
- :mod:`.study` — the chapter's experiments on the replication world (App. D, F.3 sweeps).

Every public name of these modules is importable from ``shifteval.selection``.
"""

from .bootstrap import (
    bootstrap_jackknife,
    bootstrap_parametric,
    percentile_interval,
    posterior_frequencies,
)
from .estimators import (
    JackknifeResult,
    first_votes,
    gap_decomposition,
    jackknife_adjusted_accuracy,
    naive_adjusted_accuracy,
    naive_by_annotators,
    parametric_adjusted_accuracy,
    true_adjusted_accuracy,
)
from .parametric import (
    AccuracySpline,
    BetaBinomialMixture,
    ParametricEstimator,
    VoteLevels,
    beta_basis_expectations,
    fit_accuracy_spline,
    fit_betabinomial_mixture,
    per_set,
    vote_levels,
)
from .study import (
    frequency_table,
    gap_sequence,
    gap_vs_annotators,
    heldout_matching,
    jackknife_by_annotators,
    mass_above,
    naive_error_curve,
    parametric_sweeps,
    reannotate,
    redraw_errors,
    sweep_table,
)
from .toy import (
    simulate_toy_replication,
    toy_l1_distance,
    toy_v2_density,
)

__all__ = [
    "AccuracySpline",
    "beta_basis_expectations",
    "BetaBinomialMixture",
    "bootstrap_jackknife",
    "bootstrap_parametric",
    "fit_accuracy_spline",
    "fit_betabinomial_mixture",
    "frequency_table",
    "gap_decomposition",
    "gap_sequence",
    "gap_vs_annotators",
    "heldout_matching",
    "first_votes",
    "jackknife_adjusted_accuracy",
    "jackknife_by_annotators",
    "JackknifeResult",
    "mass_above",
    "naive_adjusted_accuracy",
    "naive_by_annotators",
    "naive_error_curve",
    "parametric_adjusted_accuracy",
    "ParametricEstimator",
    "parametric_sweeps",
    "per_set",
    "percentile_interval",
    "posterior_frequencies",
    "reannotate",
    "redraw_errors",
    "simulate_toy_replication",
    "sweep_table",
    "toy_l1_distance",
    "toy_v2_density",
    "true_adjusted_accuracy",
    "vote_levels",
    "VoteLevels",
]
