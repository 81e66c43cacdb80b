"""The linear-fits chapter's computations on whole testbeds (Recht et al. 2019).

:mod:`shifteval.linfit` holds the algorithms (least-squares and probit fits with a bootstrap over
models, Clopper-Pearson intervals, the Gaussian difficulty model); this module applies them to any
accuracy table (a zoo's or a transcribed one): fits of several columns, their tables, the distance of
models from a line and its band, the widest Clopper-Pearson interval (§2 / App. B.1), and the Monte
Carlo spread of the bootstrap. The computations specific to the transcribed tables of Recht et al.
(2019) (every fit of Figures 1, 2, 6, 12 and 13, the printed rank changes, the recomputed interval
bounds) are in :mod:`shifteval.linfit.recht2019`; every public name of theirs is importable from here
too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .fits import SCALES, LinearFit, clopper_pearson, fit_linear, fit_table, row_lines

if TYPE_CHECKING:
    import pandas as pd


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

    Raises
    ------
    ValueError
        When ``n`` < 1.

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

    Raises
    ------
    ValueError
        When fewer than 2 seeds are given.

    Examples
    --------
    Three fits of 20 noisy models with 200 replicates each: the endpoints move between seeds, but by
    much less than the interval is wide.

    >>> rng = np.random.default_rng(0)
    >>> x = np.linspace(60, 95, 20)
    >>> t = pd.DataFrame({"orig_acc": x, "new_acc": 1.5 * x - 50 + rng.normal(0, 1, 20)})
    >>> s = bootstrap_seed_spread(t, n_boot=200, seeds=[0, 1, 2])
    >>> sorted(s), 0 < s["slope_ci_sd"] < s["slope_ci_width"] / 5
    (['intercept_ci_sd', 'slope_ci_sd', 'slope_ci_width'], True)
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


def rounding_spread(table: pd.DataFrame, *, step: float = 0.1, n: int = 2000, seed: int = 0) -> dict:
    """How far the rounding of printed accuracies alone moves a least-squares line.

    Each accuracy of a printed table is exact only to ``step`` points; the true value lies within
    ``±step/2`` of it. This adds independent uniform noise of that width to every original and new
    accuracy, ``n`` times, refits the line of Recht et al. (2019, §3.3) each time (ordinary least
    squares, as :func:`shifteval.linfit.fit_linear`) and reports the spread of the refits. The offset
    is an extrapolation to 0% original accuracy, far from the models, so it moves much more than the
    accuracies do.

    Parameters
    ----------
    table : pandas.DataFrame
        ``orig_acc`` and ``new_acc`` in percent, as printed.
    step : float
        The printed precision in points (0.1 for one decimal).
    n : int
        Noisy refits (at least 2).
    seed : int
        Seed of the noise.

    Returns
    -------
    dict
        ``slope_sd`` and ``intercept_sd`` (points): standard deviations over the refits.

    Raises
    ------
    ValueError
        When ``step`` is not positive or ``n`` is below 2.

    Examples
    --------
    Ten models spread over 20 points: the offset, extrapolated about 80 points, moves more than any
    single accuracy can (0.05 points).

    >>> t = pd.DataFrame({"orig_acc": np.linspace(75, 95, 10), "new_acc": np.linspace(60, 90, 10)})
    >>> s = rounding_spread(t, n=500)
    >>> s["intercept_sd"] > 0.05 > s["slope_sd"]
    True
    """
    if not step > 0 or int(n) < 2:
        raise ValueError(f"rounding_spread needs step > 0 and n >= 2, got step={step!r}, n={n!r}")
    rng = np.random.default_rng(seed)
    x, y = (table[c].to_numpy(float) for c in ("orig_acc", "new_acc"))
    noise = rng.uniform(-step / 2, step / 2, size=(2, int(n), len(x)))
    slopes, intercepts = row_lines(x + noise[0], y + noise[1])
    return {"slope_sd": float(slopes.std(ddof=1)), "intercept_sd": float(intercepts.std(ddof=1))}


def rounding_interval_spread(
    table: pd.DataFrame, *, step: float = 0.1, n: int = 200, n_boot: int = 20_000, ci: float = 0.95,
    seed: int = 0,
) -> dict:  # fmt: skip
    """How far the rounding of printed accuracies alone moves the endpoints of a fit's bootstrap intervals.

    As :func:`rounding_spread`, for the percentile intervals of Recht et al. (2019, §3.3) instead of the
    point estimates: uniform noise of ``±step/2`` is added to every original and new accuracy, ``n``
    times, and each noisy table is refitted with ``n_boot`` bootstrap replicates. Every refit resamples
    the same models (one set of resampling indices for all of them), so the spread of an endpoint over
    the refits is that of the rounding, not the Monte Carlo error of the bootstrap (which
    :func:`bootstrap_seed_spread` measures).

    Parameters
    ----------
    table : pandas.DataFrame
        ``orig_acc`` and ``new_acc`` in percent, as printed.
    step : float
        The printed precision in points (0.1 for one decimal).
    n : int
        Noisy refits (at least 2).
    n_boot : int
        Bootstrap replicates of each refit (at least 100).
    ci : float
        Confidence level of the intervals, in (0, 1).
    seed : int
        Seed of the noise and of the resampling.

    Returns
    -------
    dict
        ``slope_ci_sd`` and ``intercept_ci_sd`` (points): the standard deviation over the refits of the
        lower and of the upper endpoint, each a ``[lower, upper]`` list.

    Raises
    ------
    ValueError
        When ``step`` is not positive, ``n`` is below 2, ``n_boot`` below 100 or ``ci`` outside (0, 1).

    Examples
    --------
    Twenty models on a line: rounding moves the slope's endpoints by a few thousandths.

    >>> x = np.linspace(70, 95, 20)
    >>> t = pd.DataFrame({"orig_acc": x, "new_acc": 1.5 * x - 50 + np.sin(x)})
    >>> s = rounding_interval_spread(t, n=50, n_boot=2000)
    >>> len(s["slope_ci_sd"]), 0 < min(s["slope_ci_sd"]) < 0.01
    (2, True)
    """
    if not step > 0 or int(n) < 2 or int(n_boot) < 100 or not 0 < ci < 1:
        raise ValueError(
            f"rounding_interval_spread needs step > 0, n >= 2, n_boot >= 100 and 0 < ci < 1, got "
            f"step={step!r}, n={n!r}, n_boot={n_boot!r}, ci={ci!r}"
        )
    rng = np.random.default_rng(seed)
    x, y = (table[c].to_numpy(float) for c in ("orig_acc", "new_acc"))
    idx = rng.integers(0, len(x), size=(int(n_boot), len(x)))  # the same resamples for every refit
    q = [(1 - ci) / 2, (1 + ci) / 2]
    ends = np.empty((int(n), 4))
    for i in range(int(n)):
        xn, yn = (v + rng.uniform(-step / 2, step / 2, len(v)) for v in (x, y))
        slopes, intercepts = row_lines(xn[idx], yn[idx])
        ends[i] = [*np.nanquantile(slopes, q), *np.nanquantile(intercepts, q)]
    sd = ends.std(axis=0, ddof=1)
    return {"slope_ci_sd": [float(v) for v in sd[:2]], "intercept_ci_sd": [float(v) for v in sd[2:]]}


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
        One row per fit: ``models``, ``scale`` (only where the fits' scales differ), ``slope [CI]``,
        ``offset [CI]`` (points on the linear scale), ``r`` and, where ``paper`` has the row,
        ``slope (paper)`` and ``offset (paper)``.

    Examples
    --------
    Points on the line y = 1.2 x - 0.2 (offset -20 points) beside a printed fit:

    >>> from shifteval.linfit import fit_linear
    >>> fit = fit_linear([0.5, 0.75, 1.0], [0.4, 0.7, 1.0], n_boot=50)
    >>> f = fits_frame({"v2": fit}, {"v2": {"slope": 1.25, "slope_ci": [1.2, 1.3]}})
    >>> f.loc["v2", ["models", "offset [CI]", "slope (paper)"]].tolist()
    [3, '-20.0 [-20.0, -20.0]', '1.25 [1.20, 1.30]']
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
            "slope [CI]": interval(f.slope, f.slope_ci[0], f.slope_ci[1], ".3f"),
            "offset [CI]": interval(k * f.intercept, k * f.intercept_ci[0], k * f.intercept_ci[1], fmt),
            "r": f"{f.r:.4f}",
        }
        ref = (paper or {}).get(label)
        if ref is not None:
            row["slope (paper)"] = interval(ref["slope"], ref["slope_ci"][0], ref["slope_ci"][1], ".2f")
            if "intercept" in ref:
                row["offset (paper)"] = interval(
                    ref["intercept"], ref["intercept_ci"][0], ref["intercept_ci"][1], ".1f"
                )
        rows[label] = row
    frame = pd.DataFrame(rows).T.fillna("")
    return frame if len({f.scale for f in fits.values()}) > 1 else frame.drop(columns="scale")


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

    Examples
    --------
    Models 1 point above, 1 point below and on the line y = 1.2 x - 0.2: mean 0, rms sqrt(2/3).

    >>> from shifteval.linfit import fit_linear
    >>> fit = fit_linear([0.5, 0.75, 1.0], [0.4, 0.7, 1.0], n_boot=50)
    >>> r = line_residuals(fit, pd.DataFrame({"orig_acc": [50, 75, 100], "new_acc": [41, 69, 100]}))
    >>> abs(round(r["mean"], 6)), round(r["rms"], 3)
    (0.0, 0.816)
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
        The largest ``high - low`` of :meth:`LinearFit.band` over the grid, in points.

    Examples
    --------
    Exact points leave no band; noise around the same line opens one.

    >>> from shifteval.linfit import fit_linear
    >>> x = np.linspace(0.6, 0.95, 20)
    >>> noise = np.random.default_rng(0).normal(0, 0.01, 20)
    >>> t = pd.DataFrame({"orig_acc": 100 * x})
    >>> exact, noisy = (fit_linear(x, 1.5 * x - 0.5 + e, n_boot=200, seed=0) for e in (0, noise))
    >>> round(widest_band(exact, t), 6), widest_band(noisy, t) > 0.5
    (0.0, True)
    """
    x = table["orig_acc"].to_numpy(float) / 100
    low, high = fit.band(np.linspace(x.min(), x.max(), n_grid))
    return float(100 * np.max(high - low))


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
        The labels, in order of increasing value.

    Raises
    ------
    ValueError
        When ``k`` is outside [2, len(values)].

    Examples
    --------
    >>> list(evenly_spaced_subset(pd.Series([3, 1, 2, 5, 4], index=list("abcde")), 3))
    ['b', 'a', 'd']
    """
    order = values.sort_values().index
    if not 2 <= k <= len(order):
        raise ValueError(f"k must be between 2 and {len(order)}, got {k}")
    return order[np.linspace(0, len(order) - 1, k).round().astype(int)]


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

    Raises
    ------
    ValueError
        When ``k`` is outside [3, n].

    Examples
    --------
    30 noisy models on a line of slope 1.5: 4 of them pin the slope down far less than 20 do.

    >>> rng = np.random.default_rng(0)
    >>> x = np.linspace(0.6, 0.95, 30)
    >>> y = 1.5 * x - 0.5 + rng.normal(0, 0.01, 30)
    >>> few, many = (subset_slope_width(x, y, k, n_subsets=5, n_boot=200) for k in (4, 20))
    >>> few > 2 * many
    True
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
