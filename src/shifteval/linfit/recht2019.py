"""Computations on the published tables of Recht et al. (2019) for the linear-fits chapter.

The tables of Recht et al. (2019, Tables 11-19), transcribed in :mod:`shifteval.datasets.published`,
print each model's accuracy on the original and the new test set with Clopper-Pearson intervals and
ranks. This module fits them (every fit of Figures 1, 6, 12 and 13), compares the fits with the printed
ones, summarises the printed rank changes, recomputes the printed interval bounds (§2 / App. B.1) and
compares the CIFAR-10.1 tables 11 and 12 (App. B.2.9). Everything here is importable from
:mod:`shifteval.linfit.testbeds` too, which holds the computations on any accuracy table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from .fits import LinearFit, clopper_pearson, fit_table

if TYPE_CHECKING:
    import pandas as pd

STRATEGIES = ("matchedfrequency", "threshold0.7", "topimages")
TOPK = ("top1", "top5")


def fit_recht2019(*, n_boot: int = 100_000, ci: float = 0.95, seed: int = 0) -> dict[str, LinearFit]:
    """Every fit of Recht et al. (2019) on the transcribed tables, keyed as the chapter records them.

    - ``cifar10`` and ``cifar10_balanced``: linear fits on Tables 11 and 12 (§3.3, Figure 1;
      App. B.2.9);
    - ``imagenet_{top1,top5}_{strategy}_cnn``: linear fits on the 64 convolutional networks of
      Tables 14-19, the panels of Figure 12 (App. C.4.5; Fisher vectors excluded, App. C.4.4);
    - ``imagenet_{top1,top5}_{strategy}_all_probit``: probit fits on all 67 models, Fisher vectors
      included, the panels of Figure 13;
    - ``imagenet_top1_matchedfrequency_all_linear``: the left panel of Figure 6.

    Parameters
    ----------
    n_boot : int
        Bootstrap replicates per fit (the paper's 100,000).
    ci : float
        Confidence level of the intervals.
    seed : int
        Seed of every fit's bootstrap (the same for each, so a fit does not depend on the others).

    Returns
    -------
    dict of str to LinearFit
        The 15 fits under the keys above.

    Examples
    --------
    A few hundred replicates suffice to look at the fits (the point estimates do not depend on them):
    34 CIFAR-10 models, 64 convolutional networks and all 67 ImageNet models.

    >>> fits = fit_recht2019(n_boot=200)
    >>> len(fits), fits["cifar10"].n, fits["imagenet_top1_matchedfrequency_cnn"].n
    (15, 34, 64)
    >>> fits["imagenet_top5_topimages_all_probit"].n, round(fits["cifar10"].slope, 2)
    (67, 1.69)
    """
    from ..datasets import published

    fits = {
        "cifar10": fit_table(published.load_table("recht2019_cifar10"), n_boot=n_boot, ci=ci, seed=seed),
        "cifar10_balanced": fit_table(
            published.load_table("recht2019_cifar10_balanced"), n_boot=n_boot, ci=ci, seed=seed
        ),
    }
    for k in TOPK:
        for s in STRATEGIES:
            table = published.load_table(f"recht2019_imagenet_{k}_{s}")
            cnn = table[~published.is_fisher_vector(table.model)]
            fits[f"imagenet_{k}_{s}_cnn"] = fit_table(cnn, n_boot=n_boot, ci=ci, seed=seed)
            fits[f"imagenet_{k}_{s}_all_probit"] = fit_table(
                table, scale="probit", n_boot=n_boot, ci=ci, seed=seed
            )
    mf = published.load_table("recht2019_imagenet_top1_matchedfrequency")
    fits["imagenet_top1_matchedfrequency_all_linear"] = fit_table(mf, n_boot=n_boot, ci=ci, seed=seed)
    return fits


def paper_agreement(fit: LinearFit, ref: dict) -> dict:
    """Differences between a linear fit and the paper's printed one (Recht et al. 2019, §3.3).

    Parameters
    ----------
    fit : LinearFit
        A fit on the linear scale.
    ref : dict
        The printed fit: ``slope``, ``slope_ci`` and optionally ``intercept``, ``intercept_ci``
        (percent), as in :func:`shifteval.datasets.published.reported`.

    Returns
    -------
    dict
        Absolute differences ``slope``, ``slope_ci`` (largest endpoint) and, where printed,
        ``intercept`` and ``intercept_ci`` (points).

    Raises
    ------
    ValueError
        When ``fit`` is a probit fit.

    Examples
    --------
    Points on the line y = 1.2 x - 0.2 (offset -20 points) against a printed 1.25 [1.2, 1.3] and
    -21 [-22, -20]:

    >>> from shifteval.linfit import fit_linear
    >>> fit = fit_linear([0.5, 0.75, 1.0], [0.4, 0.7, 1.0], n_boot=50)
    >>> ref = {"slope": 1.25, "slope_ci": [1.2, 1.3], "intercept": -21.0, "intercept_ci": [-22.0, -20.0]}
    >>> {k: round(v, 3) for k, v in paper_agreement(fit, ref).items()}
    {'slope': 0.05, 'slope_ci': 0.1, 'intercept': 1.0, 'intercept_ci': 2.0}
    """
    if fit.scale != "linear":
        raise ValueError("the paper prints linear fits; got a probit fit")
    s = fit.summary()
    out = {
        "slope": abs(s["slope"] - ref["slope"]),
        "slope_ci": float(np.abs(np.subtract(s["slope_ci"], ref["slope_ci"])).max()),
    }
    if "intercept" in ref:
        out["intercept"] = abs(s["intercept"] - ref["intercept"])
        out["intercept_ci"] = float(np.abs(np.subtract(s["intercept_ci"], ref["intercept_ci"])).max())
    return out


def interval_agreement(
    fit: LinearFit, ref: dict, rounding: dict, mc: dict, *, n_sd: float = 2.0
) -> pd.DataFrame:
    """Each printed endpoint of a §3.3 bootstrap interval against ours, and the difference its sources explain.

    Recht et al. (2019, §3.3) print the intervals of their fits to two decimals (slope) and one (offset,
    percent). Three things separate our endpoint from theirs: the paper's own rounding (half a unit of
    its last printed digit), the rounding of the printed accuracies we refit (their spread,
    :func:`shifteval.linfit.testbeds.rounding_interval_spread`) and the Monte Carlo error of the
    bootstrap (:func:`shifteval.linfit.testbeds.bootstrap_seed_spread`, at the fit's number of
    replicates). An endpoint is within them when ``|ours - paper| <= half unit + n_sd * sd``, with ``sd``
    the two spreads combined (``hypot``).

    Parameters
    ----------
    fit : LinearFit
        A linear fit (intervals in fractions; offsets are compared in percent).
    ref : dict
        The printed fit: ``slope_ci`` and ``intercept_ci`` (percent).
    rounding : dict
        ``slope_ci_sd`` and ``intercept_ci_sd``: ``[lower, upper]`` standard deviations from rounding
        (points for the offset).
    mc : dict
        ``slope_ci_sd`` and ``intercept_ci_sd``: the Monte Carlo standard deviation of an endpoint at the
        fit's ``n_boot``.
    n_sd : float
        Standard deviations allowed beyond the paper's rounding (2: about 95%).

    Returns
    -------
    pandas.DataFrame
        One row per endpoint (``slope lower`` … ``offset upper``): ``ours``, ``paper``, ``difference``
        (ours − paper), ``half unit``, ``rounding sd``, ``Monte Carlo sd``, ``tolerance``, ``within``, and
        ours printed as the paper prints, rounded to ``nearest`` and ``outward`` (lower ends down,
        upper ends up).

    Raises
    ------
    ValueError
        When ``fit`` is a probit fit or ``n_sd`` is negative.

    Examples
    --------
    >>> from shifteval.linfit import fit_linear
    >>> fit = fit_linear([0.5, 0.6, 0.75, 0.9, 1.0], [0.4, 0.55, 0.7, 0.86, 1.0], n_boot=500)
    >>> ref = {"slope_ci": [1.1, 1.3], "intercept_ci": [-30.0, -10.0]}
    >>> sd = {"slope_ci_sd": [0.001, 0.001], "intercept_ci_sd": [0.1, 0.1]}
    >>> t = interval_agreement(fit, ref, sd, {"slope_ci_sd": 0.0, "intercept_ci_sd": 0.0})
    >>> list(t.index), t["half unit"].tolist(), t["tolerance"].round(3).tolist()
    (['slope lower', 'slope upper', 'offset lower', 'offset upper'], [0.005, 0.005, 0.05, 0.05], [0.007, 0.007, 0.25, 0.25])
    """
    import pandas as pd

    if fit.scale != "linear":
        raise ValueError("the paper prints linear fits; got a probit fit")
    if not n_sd >= 0:
        raise ValueError(f"n_sd must be >= 0, got {n_sd!r}")
    s = fit.summary()
    rows = {}
    for name, key, unit in (("slope", "slope_ci", 0.01), ("offset", "intercept_ci", 0.1)):
        for j, side in enumerate(("lower", "upper")):
            ours, paper = float(s[key][j]), float(ref[key][j])
            spread = (rounding[f"{key}_sd"][j], mc[f"{key}_sd"])  # from rounding, from the bootstrap
            sd = float(np.hypot(*spread))
            outward = (np.floor if j == 0 else np.ceil)(round(ours / unit, 6)) * unit
            rows[f"{name} {side}"] = {
                "ours": ours,
                "paper": paper,
                "difference": ours - paper,
                "half unit": unit / 2,
                "rounding sd": float(spread[0]),
                "Monte Carlo sd": float(spread[1]),
                "tolerance": unit / 2 + n_sd * sd,
                "within": bool(abs(ours - paper) <= unit / 2 + n_sd * sd),
                "nearest": round(round(ours / unit) * unit, 2),
                "outward": round(float(outward), 2),
            }
    return pd.DataFrame.from_dict(rows, orient="index")


def rank_summary(table: pd.DataFrame) -> dict:
    """How much the printed ranking changes from the original to the new test set.

    Uses the ranks *as printed* (columns ``orig_rank``, ``new_rank``, ``delta_rank``; Recht et al.
    2019, Tables 11-19), which the paper computed from unrounded accuracies; ranks recomputed from
    the printed (rounded) accuracies would differ where accuracies tie after rounding.

    Parameters
    ----------
    table : pandas.DataFrame
        A Recht et al. table with the rank columns.

    Returns
    -------
    dict
        ``spearman`` (rank correlation of the printed ranks), ``max_abs_delta_rank``,
        ``mean_abs_delta_rank``, ``unchanged`` (models keeping their rank) and ``n``.

    Raises
    ------
    ValueError
        When a rank column is missing or ``delta_rank`` is not ``orig_rank - new_rank``.

    Examples
    --------
    >>> t = pd.DataFrame({"orig_rank": [1, 2, 3, 4], "new_rank": [2, 1, 3, 4], "delta_rank": [-1, 1, 0, 0]})
    >>> s = rank_summary(t)
    >>> round(s["spearman"], 2), s["max_abs_delta_rank"], s["unchanged"]
    (0.8, 1, 2)
    """
    missing = {"orig_rank", "new_rank", "delta_rank"} - set(table.columns)
    if missing:
        raise ValueError(f"table lacks the printed rank column(s) {sorted(missing)}")
    orig, new = table["orig_rank"].to_numpy(int), table["new_rank"].to_numpy(int)
    delta = table["delta_rank"].to_numpy(int)
    if not np.array_equal(delta, orig - new):
        raise ValueError("delta_rank must equal orig_rank - new_rank (the paper's convention)")
    return {
        "spearman": float(stats.spearmanr(orig, new)[0]),
        "max_abs_delta_rank": int(np.abs(delta).max()),
        "mean_abs_delta_rank": float(np.abs(delta).mean()),
        "unchanged": int((delta == 0).sum()),
        "n": len(table),
    }


def clopper_pearson_deviation(table: pd.DataFrame, n_orig: int, n_new: int, alpha: float = 0.05) -> dict:
    """Largest difference (points) between recomputed and printed Clopper-Pearson bounds.

    The intervals of Recht et al. (2019, Tables 11-19) are recomputed from the printed accuracy
    (rounded to 0.1 point) and the test-set size; rounding lets a bound move by about 0.1 point.

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``{orig,new}_acc``, ``{orig,new}_ci_low``, ``{orig,new}_ci_high`` in percent.
    n_orig, n_new : int
        Sizes of the original and the new test set.
    alpha : float
        1 - confidence level of the printed intervals.

    Returns
    -------
    dict
        ``{"orig": points, "new": points}``.

    Examples
    --------
    Table 12 (CIFAR-10, 10,000 original and 2,000 new images): the printed bounds are recovered to
    within the 0.1 point of rounding.

    >>> from shifteval.datasets import published
    >>> dev = clopper_pearson_deviation(published.load_table("recht2019_cifar10_balanced"), 10_000, 2_000)
    >>> sorted(dev), all(v <= 0.1 for v in dev.values())
    (['new', 'orig'], True)
    """
    out = {}
    for prefix, n in (("orig", n_orig), ("new", n_new)):
        k = np.round(table[f"{prefix}_acc"].to_numpy(float) / 100 * n).astype(np.int64)
        low, high = clopper_pearson(k, int(n), alpha=alpha)
        out[prefix] = float(
            max(
                np.abs(100 * low - table[f"{prefix}_ci_low"].to_numpy(float)).max(),
                np.abs(100 * high - table[f"{prefix}_ci_high"].to_numpy(float)).max(),
            )
        )
    return out


def recht2019_interval_deviation(sizes: dict, tables: dict | None = None) -> dict:
    """:func:`clopper_pearson_deviation` for every Recht et al. table, keyed by table (and size).

    Table 11's new test set is checked with both candidate sizes: 2,021 images (CIFAR-10.1 v4, the
    release's number) and 2,000 (the paper's text, §3 and App. B.1; v6, Table 12).

    Parameters
    ----------
    sizes : dict
        ``cifar10_orig``, ``cifar10_new``, ``cifar10_new_balanced``, ``imagenet_orig``,
        ``imagenet_new`` (as in ``published.reported()["recht2019"]["test_set_sizes"]``).
    tables : dict, optional
        Tables by name; loaded from :mod:`shifteval.datasets.published` when omitted.

    Returns
    -------
    dict
        Label -> ``{"orig": points, "new": points}``.

    Examples
    --------
    Nine checks (Table 11 twice, Table 12, six ImageNet tables), none off by more than rounding:

    >>> from shifteval.datasets import published
    >>> dev = recht2019_interval_deviation(published.reported()["recht2019"]["test_set_sizes"])
    >>> len(dev), max(max(d.values()) for d in dev.values()) <= 0.1
    (9, True)
    """
    from ..datasets import published

    tables = tables or {n: published.load_table(n) for n in published.list_tables()}
    n_c, n_i = sizes["cifar10_orig"], sizes["imagenet_orig"]
    checks = {
        f"recht2019_cifar10 (n = {sizes['cifar10_new']:,})": ("recht2019_cifar10", n_c, sizes["cifar10_new"]),
        f"recht2019_cifar10 (n = {sizes['cifar10_new_balanced']:,})": (
            "recht2019_cifar10",
            n_c,
            sizes["cifar10_new_balanced"],
        ),
        "recht2019_cifar10_balanced": ("recht2019_cifar10_balanced", n_c, sizes["cifar10_new_balanced"]),
        **{
            f"recht2019_imagenet_{k}_{s}": (f"recht2019_imagenet_{k}_{s}", n_i, sizes["imagenet_new"])
            for k in TOPK
            for s in STRATEGIES
        },
    }
    return {label: clopper_pearson_deviation(tables[n], a, b) for label, (n, a, b) in checks.items()}


def paired_change(main: pd.DataFrame, other: pd.DataFrame, by: str = "orig_acc") -> dict:
    """Change of new accuracy from one table to another for the same models (App. B.2.9, Table 12).

    Parameters
    ----------
    main, other : pandas.DataFrame
        Two Recht et al. tables over the same models (column ``model``), e.g. Tables 11 and 12.
    by : str
        Column of ``main`` whose median splits the models into a lower and an upper half.

    Returns
    -------
    dict
        ``lower_half`` and ``upper_half``: mean of ``other.new_acc - main.new_acc`` (points) over
        the models below / at or above the median; ``best_gap_main`` and ``best_gap_other``: the
        printed gap of the model with the highest original accuracy in each table; ``n_lower``:
        models in the lower half.

    Raises
    ------
    ValueError
        When the two tables list different models.

    Examples
    --------
    The lower two models gain 2 points from one table to the other, the upper two 1 point (the rows of
    ``other`` need not be in the same order):

    >>> main = pd.DataFrame({"model": list("abcd"), "orig_acc": [60, 70, 80, 90], "new_acc": [50, 60, 70, 80], "gap": [10, 10, 10, 10]})
    >>> other = pd.DataFrame({"model": list("dcba"), "new_acc": [81, 71, 62, 52], "gap": [9, 9, 8, 8]})
    >>> paired_change(main, other)
    {'lower_half': 2.0, 'upper_half': 1.0, 'n_lower': 2, 'best_gap_main': 10.0, 'best_gap_other': 9.0}
    """
    if set(main["model"]) != set(other["model"]):
        raise ValueError("the two tables must list the same models")
    o = other.set_index("model").loc[main["model"]].reset_index()
    change = o["new_acc"].to_numpy(float) - main["new_acc"].to_numpy(float)
    lower = (main[by] < main[by].median()).to_numpy()
    best = int(np.argmax(main["orig_acc"].to_numpy(float)))
    return {
        "lower_half": float(change[lower].mean()),
        "upper_half": float(change[~lower].mean()),
        "n_lower": int(lower.sum()),
        "best_gap_main": float(main["gap"].iloc[best]),
        "best_gap_other": float(o["gap"].iloc[best]),
    }
