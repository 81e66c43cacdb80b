"""The linear-fits chapter's computations on whole testbeds (Recht et al. 2019).

:mod:`shifteval.linfit` holds the algorithms (least-squares and probit fits with a bootstrap over
models, Clopper-Pearson intervals, the Gaussian difficulty model); this module applies them to the
transcribed tables of Recht et al. (2019) and to a zoo's accuracy table: every fit of Figures 1, 2,
6, 12 and 13, the printed rank changes, the recomputed interval bounds and widths of §2 / App. B.1,
and the Monte Carlo spread of the bootstrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from .linfit import SCALES, LinearFit, clopper_pearson, fit_linear, fit_table

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
    """
    from .datasets import published

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

    Examples
    --------
    >>> import pandas as pd
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


def clopper_pearson_max_halfwidth(n: int, alpha: float = 0.05) -> float:
    """Largest one-sided width ``max(p - low, high - p)`` of a Clopper-Pearson interval over k = 0..n.

    Recht et al. (2019, §2) bound it: with n = 10,000 a 95% interval is at most ±1% and a 99.99%
    interval at most ±2%; App. B.1 uses n = 2,000 (about ±1% at 90% accuracy).

    Parameters
    ----------
    n : int
        Test-set size (>= 1).
    alpha : float
        1 - confidence level.

    Returns
    -------
    float
        The width as a fraction.

    Examples
    --------
    >>> round(clopper_pearson_max_halfwidth(10_000), 4)
    0.0098
    """
    if int(n) < 1:
        raise ValueError(f"n must be at least 1, got {n!r}")
    k = np.arange(int(n) + 1)
    low, high = clopper_pearson(k, int(n), alpha=alpha)
    p = k / int(n)
    return float(max((p - low).max(), (high - p).max()))


def bootstrap_seed_spread(
    table: pd.DataFrame, *, n_boot: int, seeds: Sequence[int], ci: float = 0.95
) -> dict:
    """How much a fit's interval endpoints move between bootstrap seeds (Monte Carlo error).

    Parameters
    ----------
    table : pandas.DataFrame
        A table with ``orig_acc`` and ``new_acc`` in percent.
    n_boot : int
        Replicates per fit.
    seeds : sequence of int
        One fit per seed (at least 2).
    ci : float
        Confidence level.

    Returns
    -------
    dict
        ``slope_ci_sd`` (standard deviation over seeds of the two slope endpoints, averaged),
        ``intercept_ci_sd`` (the same for the offset, in points) and ``slope_ci_width`` (mean width).
    """
    seeds = list(seeds)
    if len(seeds) < 2:
        raise ValueError("bootstrap_seed_spread needs at least 2 seeds")
    fits = [fit_table(table, n_boot=n_boot, ci=ci, seed=s) for s in seeds]
    slope_ci = np.array([f.slope_ci for f in fits])
    icpt_ci = 100 * np.array([f.intercept_ci for f in fits])
    return {
        "slope_ci_sd": float(slope_ci.std(axis=0, ddof=1).mean()),
        "intercept_ci_sd": float(icpt_ci.std(axis=0, ddof=1).mean()),
        "slope_ci_width": float((slope_ci[:, 1] - slope_ci[:, 0]).mean()),
    }


def fit_columns(table: pd.DataFrame, x: str, ys: Sequence[str], *, scales: Sequence[str] = SCALES,
                n_boot: int = 100_000, ci: float = 0.95, seed: int = 0) -> dict[tuple[str, str], LinearFit]:  # fmt: skip
    """Fit every column ``ys`` of an accuracy table against column ``x``, on each scale.

    Parameters
    ----------
    table : pandas.DataFrame
        Accuracies as fractions, one row per model (e.g. a zoo's accuracy table).
    x : str
        The original test set's column.
    ys : sequence of str
        The new test sets' columns.
    scales : sequence of {"linear", "probit"}
    n_boot, ci, seed
        As for :func:`fit_linear`.

    Returns
    -------
    dict of (str, str) to LinearFit
        Keyed by ``(column, scale)``.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"v1": [0.5, 0.75, 1.0], "v2": [0.4, 0.7, 1.0]})
    >>> fit = fit_columns(t, "v1", ["v2"], scales=["linear"], n_boot=50)["v2", "linear"]
    >>> round(fit.slope, 3), fits_frame({"v2": fit}).loc["v2", "slope [CI]"]  # and fits_frame
    (1.2, '1.200 [1.200, 1.200]')
    >>> pct = 100 * t.set_axis(["orig_acc", "new_acc"], axis=1)  # line_residuals, widest_band: points
    >>> round(line_residuals(fit, pct)["rms"], 6), round(widest_band(fit, pct), 6)
    (0.0, 0.0)
    """
    return {
        (y, scale): fit_linear(table[x], table[y], scale=scale, n_boot=n_boot, ci=ci, seed=seed)
        for y in ys
        for scale in scales
    }


def fits_frame(fits: dict, paper: dict | None = None) -> pd.DataFrame:
    """A table of fits: slope and offset with their intervals, r and the number of models.

    Parameters
    ----------
    fits : dict of str to LinearFit
        Row label -> fit.
    paper : dict of str to dict, optional
        Row label -> the paper's printed fit (``slope``, ``slope_ci``, optionally ``intercept``,
        ``intercept_ci`` in percent), shown beside ours.

    Returns
    -------
    pandas.DataFrame
    """
    import pandas as pd

    def interval(v, lo, hi, fmt):
        return f"{v:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"

    rows = {}
    for label, f in fits.items():
        k = 100.0 if f.scale == "linear" else 1.0
        fmt = ".1f" if f.scale == "linear" else ".3f"
        row = {
            "models": f.n,
            "scale": f.scale,
            "slope [CI]": interval(f.slope, *f.slope_ci, ".3f"),
            "offset [CI]": interval(k * f.intercept, k * f.intercept_ci[0], k * f.intercept_ci[1], fmt),
            "r": f"{f.r:.4f}",
        }
        ref = (paper or {}).get(label)
        if ref is not None:
            row["slope (paper)"] = interval(ref["slope"], *ref["slope_ci"], ".2f")
            if "intercept" in ref:
                row["offset (paper)"] = interval(ref["intercept"], *ref["intercept_ci"], ".1f")
        rows[label] = row
    return pd.DataFrame(rows).T.fillna("")


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


def line_residuals(fit: LinearFit, table: pd.DataFrame) -> dict:
    """Distance (points) of a table's models from a fitted line: mean signed and root-mean-square.

    Parameters
    ----------
    fit : LinearFit
        The line (any scale; residuals are measured in accuracy points).
    table : pandas.DataFrame
        ``orig_acc`` and ``new_acc`` in percent.

    Returns
    -------
    dict
        ``mean`` (new minus the line, points) and ``rms`` (points).
    """
    res = 100 * (
        table["new_acc"].to_numpy(float) / 100 - fit.predict(table["orig_acc"].to_numpy(float) / 100)
    )
    return {"mean": float(res.mean()), "rms": float(np.sqrt(np.mean(res**2)))}


def widest_band(fit: LinearFit, table: pd.DataFrame, n_grid: int = 100) -> float:
    """Widest pointwise bootstrap band (points) over the range of a table's original accuracies.

    Parameters
    ----------
    fit, table : LinearFit, pandas.DataFrame
        The line (with its bootstrap) and a table with ``orig_acc`` in percent.
    n_grid : int
        Grid points over the table's range of original accuracies.

    Returns
    -------
    float
    """
    x = table["orig_acc"].to_numpy(float) / 100
    low, high = fit.band(np.linspace(x.min(), x.max(), n_grid))
    return float(100 * np.max(high - low))


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
        printed gap of the model with the highest original accuracy in each table.
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


def evenly_spaced_subset(values: pd.Series, k: int) -> pd.Index:
    """Index labels of ``k`` entries of a Series spread evenly over its sorted values.

    Parameters
    ----------
    values : pandas.Series
        The values to spread over (e.g. original accuracies).
    k : int
        Entries to pick, 2 <= k <= len(values) (ValueError otherwise).

    Returns
    -------
    pandas.Index

    Examples
    --------
    >>> import pandas as pd
    >>> list(evenly_spaced_subset(pd.Series([3, 1, 2, 5, 4], index=list("abcde")), 3))
    ['b', 'a', 'd']
    """
    order = values.sort_values().index
    if not 2 <= k <= len(order):
        raise ValueError(f"k must be between 2 and {len(order)}, got {k}")
    return order[np.linspace(0, len(order) - 1, k).round().astype(int)]


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
    """
    from .datasets import published

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


def subset_slope_width(x: ArrayLike, y: ArrayLike, k: int, *, n_subsets: int = 20, n_boot: int = 2000,
                       ci: float = 0.95, seed: int = 0) -> float:  # fmt: skip
    """Mean width of the slope's bootstrap interval when only ``k`` of the models are fitted.

    Draws ``n_subsets`` random subsets of ``k`` models (without replacement) and fits each with
    :func:`shifteval.linfit.fit_linear`; shows how little a handful of models pins a slope down
    (Recht et al. 2019 fit 34 to 67 models).

    Parameters
    ----------
    x, y : array_like, shape (n,)
        Original and new accuracies (fractions).
    k : int
        Models per subset, 3 <= k <= n.
    n_subsets : int
        Subsets drawn.
    n_boot, ci : int, float
        Bootstrap replicates and confidence level of each fit.
    seed : int
        Seed of the subsets and of the fits.

    Returns
    -------
    float
        Mean slope-interval width over the subsets.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if not 3 <= k <= len(x):
        raise ValueError(f"k must be between 3 and {len(x)}, got {k}")
    rng = np.random.default_rng(seed)
    widths = []
    for _ in range(int(n_subsets)):
        idx = rng.choice(len(x), size=k, replace=False)
        if np.ptp(x[idx]) == 0:
            continue
        fit = fit_linear(x[idx], y[idx], n_boot=n_boot, ci=ci, seed=rng)
        widths.append(fit.slope_ci[1] - fit.slope_ci[0])
    return float(np.mean(widths))
