"""Linear and probit fits of new-vs-original accuracy, with bootstrap confidence regions.

Recht, Roelofs, Schmidt & Shankar (2019), *Do ImageNet Classifiers Generalize to ImageNet?*:
§3.3 (linear fits, 95% confidence intervals from 100,000 bootstrap samples over models),
App. C.2 (fits on a probit scale) and §5.3 (a Gaussian difficulty model under which probit
accuracies fall exactly on a line).

:mod:`shifteval.linfit.testbeds` applies these to the paper's transcribed tables (every fit of its figures,
the printed ranks, the interval widths of §2 and App. B.1).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

if TYPE_CHECKING:
    import pandas as pd
SCALES = ("linear", "probit")
_PROBIT_CLIP = 1e-6  # probit(0) and probit(1) are infinite; accuracies are clipped this far inside (0, 1)


def _as_accuracies(values, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of accuracies, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if ((arr < 0) | (arr > 1)).any():
        bad = arr[(arr < 0) | (arr > 1)][0]
        raise ValueError(
            f"{name} must hold accuracies as fractions in [0, 1]; found {bad!r} (percentages? divide by 100)"
        )
    return arr


def transform(acc: ArrayLike, scale: str = "linear") -> np.ndarray:
    """Map accuracies to the axis scale of a fit.

    Parameters
    ----------
    acc : array_like
        Accuracies as fractions in [0, 1].
    scale : {"linear", "probit"}
        ``"probit"`` applies the inverse Gaussian CDF Φ⁻¹ (Recht et al. 2019, App. C.2),
        clipping to [1e-6, 1 - 1e-6] so that 0 and 1 stay finite.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        If ``scale`` is not one of :data:`SCALES`.

    Examples
    --------
    >>> [round(float(v), 3) for v in transform([0.5, 0.8413, 1.0], "probit")]
    [0.0, 1.0, 4.753]
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    acc = np.asarray(acc, dtype=float)
    if scale == "linear":
        return acc
    return stats.norm.ppf(np.clip(acc, _PROBIT_CLIP, 1 - _PROBIT_CLIP))


def inverse_transform(values: ArrayLike, scale: str = "linear") -> np.ndarray:
    """Inverse of :func:`transform` (Φ for the probit scale).

    Parameters
    ----------
    values : array_like
        Values on the fit's scale.
    scale : {"linear", "probit"}
        As in :func:`transform`.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        If ``scale`` is not one of :data:`SCALES`.

    Examples
    --------
    >>> [round(float(v), 3) for v in inverse_transform([0.0, 1.0], "probit")]
    [0.5, 0.841]
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    values = np.asarray(values, dtype=float)
    return values if scale == "linear" else stats.norm.cdf(values)


def bootstrap_lines(
    x: np.ndarray, y: np.ndarray, n_boot: int, rng: np.random.Generator, chunk: int = 20_000
) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares slope and intercept of ``y ~ x`` on bootstrap resamples of the points.

    Each replicate resamples the points (models) with replacement, as Recht et al. (2019, §3.3)
    do. All replicates of a chunk are fitted at once from the closed-form least-squares solution
    ``slope = cov(x, y) / var(x)``, which is what makes 100,000 replicates cheap; a resample whose
    x values are all equal has no defined slope and yields NaN.

    Parameters
    ----------
    x, y : ndarray, shape (n,)
        Points on the fit's scale.
    n_boot : int
        Number of bootstrap replicates.
    rng : numpy.random.Generator
        Source of the resampling indices.
    chunk : int
        Replicates drawn per block, bounding memory at ``chunk * n`` indices.

    Returns
    -------
    slopes, intercepts : ndarray, shape (n_boot,)

    Examples
    --------
    >>> s, i = bootstrap_lines(np.arange(4.0), 2 * np.arange(4.0) + 1, 50, np.random.default_rng(0))
    >>> s.shape, round(float(np.nanmean(s)), 3), round(float(np.nanmean(i)), 3)
    ((50,), 2.0, 1.0)
    """
    n = len(x)
    slopes = np.empty(n_boot)
    intercepts = np.empty(n_boot)
    for start in range(0, n_boot, chunk):
        stop = min(start + chunk, n_boot)
        idx = rng.integers(0, n, size=(stop - start, n))
        slopes[start:stop], intercepts[start:stop] = row_lines(x[idx], y[idx])
    return slopes, intercepts


def row_lines(xb: np.ndarray, yb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares slope and intercept of ``yb[i] ~ xb[i]`` for every row ``i`` at once.

    The closed form ``slope = cov(x, y) / var(x)``; a row whose x values are all equal yields NaN.

    Parameters
    ----------
    xb, yb : ndarray, shape (b, n)
        One set of points per row.

    Returns
    -------
    slopes, intercepts : ndarray, shape (b,)

    Examples
    --------
    >>> [v.round(3).tolist() for v in row_lines(np.array([[0.0, 1, 2], [1, 1, 1]]), np.array([[-1.0, 2, 5], [2, 2, 2]]))]
    [[3.0, nan], [-1.0, nan]]
    """
    mx, my = xb.mean(axis=1), yb.mean(axis=1)
    dx = xb - mx[:, None]
    sxx = np.einsum("ij,ij->i", dx, dx)
    sxy = np.einsum("ij,ij->i", dx, yb - my[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        # all-equal x (a resample of one model) is undefined; sxx alone misses it (rounding leaves ~1e-32)
        b = np.where((sxx > 0) & (np.ptp(xb, axis=1) > 0), sxy / sxx, np.nan)
    return b, my - b * mx


@dataclass(frozen=True)
class LinearFit:
    """A least-squares line ``transform(y) = slope * transform(x) + intercept`` with bootstrap CIs.

    Slopes and intercepts are on the fit's scale: fractions for ``"linear"`` (an intercept of
    -0.727 is the paper's -72.7%), probit units for ``"probit"``.
    """

    slope: float
    intercept: float
    slope_ci: tuple[float, float]
    intercept_ci: tuple[float, float]
    r: float
    n: int
    scale: str
    ci: float
    n_boot: int
    boot_slopes: np.ndarray = field(repr=False)
    boot_intercepts: np.ndarray = field(repr=False)

    def predict(self, x: ArrayLike) -> np.ndarray:
        """The fitted new accuracy (fraction) at original accuracies ``x`` (fractions)."""
        return inverse_transform(self.slope * transform(x, self.scale) + self.intercept, self.scale)

    def band(self, x: ArrayLike, ci: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Pointwise bootstrap confidence band of the line at ``x`` (fractions).

        The shaded region of Recht et al. (2019), Figures 1, 2 and 6: for every grid point, the
        ``(1 - ci) / 2`` and ``(1 + ci) / 2`` quantiles of the bootstrap lines' values.
        """
        ci = self.ci if ci is None else ci
        tx = transform(np.atleast_1d(x), self.scale)
        ok = np.isfinite(self.boot_slopes)
        lines = self.boot_slopes[ok, None] * tx[None, :] + self.boot_intercepts[ok, None]
        q = np.quantile(lines, [(1 - ci) / 2, (1 + ci) / 2], axis=0)
        return inverse_transform(q[0], self.scale), inverse_transform(q[1], self.scale)

    def residual_rms(self, x: ArrayLike, y: ArrayLike) -> float:
        """Root-mean-square distance (fraction) between accuracies ``y`` and the line at ``x``."""
        return float(np.sqrt(np.mean((self.predict(x) - np.asarray(y, float)) ** 2)))

    def slope_relation(self, value: float = 1.0) -> str:
        """Words for where the slope's confidence interval lies relative to ``value``."""
        if self.slope_ci[0] > value:
            return f"above {value:g} (the interval excludes {value:g})"
        if self.slope_ci[1] < value:
            return f"below {value:g} (the interval excludes {value:g})"
        return f"not distinguishable from {value:g} (the interval contains {value:g})"

    def summary(self, percent: bool = True) -> dict:
        """The fit as a JSON-ready dict; linear intercepts in percent when ``percent``."""
        k = 100.0 if (percent and self.scale == "linear") else 1.0
        return {
            "scale": self.scale,
            "n": self.n,
            "slope": self.slope,
            "intercept": self.intercept * k,
            "slope_ci": list(self.slope_ci),
            "intercept_ci": [v * k for v in self.intercept_ci],
            "r": self.r,
            "ci": self.ci,
            "n_boot": self.n_boot,
        }


def fit_linear(
    x: ArrayLike, y: ArrayLike, *, scale: str = "linear", n_boot: int = 100_000, ci: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> LinearFit:  # fmt: skip
    """Fit new accuracy against original accuracy, with a bootstrap over models.

    Recht et al. (2019), §3.3: ``acc_new = slope * acc_orig + intercept`` by least squares, and
    95% confidence intervals from 100,000 bootstrap samples (percentile intervals over resampled
    models). With ``scale="probit"`` both axes are first mapped through Φ⁻¹ (App. C.2, Fig. 6).

    Parameters
    ----------
    x, y : array_like, shape (n,)
        Original and new accuracies of the same n models, as fractions in [0, 1]; n >= 3.
    scale : {"linear", "probit"}
        Axis scale of the fit.
    n_boot : int
        Bootstrap replicates (>= 1; the paper uses 100,000).
    ci : float
        Confidence level in (0, 1).
    seed : int or numpy.random.Generator
        Seed of the bootstrap.

    Returns
    -------
    LinearFit

    Raises
    ------
    ValueError
        If x, y are not 1-D fractions in [0, 1], differ in length, n < 3, x is constant, or an option is invalid.

    Examples
    --------
    >>> fit = fit_linear(np.linspace(0.7, 0.9, 5), np.linspace(0.54, 0.78, 5), n_boot=200, seed=0)
    >>> round(fit.slope, 3), round(fit.intercept, 3), round(float(fit.predict(0.8)), 3)
    (1.2, -0.3, 0.66)
    """
    x = _as_accuracies(x, "x (original accuracies)")
    y = _as_accuracies(y, "y (new accuracies)")
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {len(x)} and {len(y)}")
    if len(x) < 3:
        raise ValueError(f"a fit needs at least 3 models, got {len(x)}")
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci!r}")
    if int(n_boot) < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot!r}")
    tx, ty = transform(x, scale), transform(y, scale)
    if np.ptp(tx) == 0:
        raise ValueError("all original accuracies are equal; a slope is undefined")
    res = stats.linregress(tx, ty)
    rng = np.random.default_rng(seed)
    slopes, intercepts = bootstrap_lines(tx, ty, int(n_boot), rng)
    q = [(1 - ci) / 2, (1 + ci) / 2]
    s_lo, s_hi = np.nanquantile(slopes, q)
    i_lo, i_hi = np.nanquantile(intercepts, q)
    return LinearFit(
        slope=float(res.slope),
        intercept=float(res.intercept),
        slope_ci=(float(s_lo), float(s_hi)),
        intercept_ci=(float(i_lo), float(i_hi)),
        r=float(res.rvalue),
        n=len(x),
        scale=scale,
        ci=ci,
        n_boot=int(n_boot),
        boot_slopes=slopes,
        boot_intercepts=intercepts,
    )


def clopper_pearson(k: ArrayLike, n: ArrayLike, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Exact binomial confidence interval for an accuracy k/n.

    Recht et al. (2019) draw these as the error bars of Figures 1 and 2 and print them in
    Tables 11-19. Uses the beta-quantile form ``[B(α/2; k, n-k+1), B(1-α/2; k+1, n-k)]``.

    Parameters
    ----------
    k, n : array_like of int
        Correct predictions and test-set size, 0 <= k <= n, n >= 1.
    alpha : float
        1 - confidence level.

    Returns
    -------
    low, high : ndarray
        Interval bounds in [0, 1]; low = 0 when k = 0 and high = 1 when k = n.

    Raises
    ------
    ValueError
        If k or n are not whole numbers, n < 1, k lies outside [0, n], or alpha is not in (0, 1).

    Examples
    --------
    >>> [[round(float(v), 3) for v in bound] for bound in clopper_pearson([0, 5, 10], 10)]
    [[0.0, 0.187, 0.692], [0.308, 0.813, 1.0]]
    """
    k = np.asarray(k)
    n = np.asarray(n)
    if not (np.issubdtype(k.dtype, np.integer) and np.issubdtype(n.dtype, np.integer)):
        kf, nf = np.asarray(k, float), np.asarray(n, float)
        if np.any(kf != np.round(kf)) or np.any(nf != np.round(nf)):
            raise ValueError("k and n must be whole numbers of predictions")
        k, n = kf.astype(np.int64), nf.astype(np.int64)
    k, n = np.broadcast_arrays(k, n)
    if np.any(n < 1):
        raise ValueError("n must be at least 1")
    if np.any((k < 0) | (k > n)):
        raise ValueError("k must satisfy 0 <= k <= n")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    with np.errstate(invalid="ignore"):
        low = np.where(k == 0, 0.0, stats.beta.ppf(alpha / 2, k, n - k + 1))
        high = np.where(k == n, 1.0, stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def gaussian_difficulty_line(mu1: float, sigma1: float, mu2: float, sigma2: float) -> tuple[float, float]:
    """Slope and intercept of the probit line implied by the Gaussian difficulty model.

    Recht et al. (2019), §5.3: with image difficulty τ ~ N(μ_k, σ_k²) on test set k and
    P(correct | τ) = Φ(s_j − τ) for a model of skill s_j, the accuracy is
    α_{j,k} = Φ((s_j − μ_k) / √(σ_k² + 1)), so Φ⁻¹(α_{j,2}) = u Φ⁻¹(α_{j,1}) + v with
    u = √(σ₁² + 1) / √(σ₂² + 1) and v = (μ₁ − μ₂) / √(σ₂² + 1).

    Parameters
    ----------
    mu1, sigma1, mu2, sigma2 : float
        Mean and standard deviation (>= 0) of the difficulty on test sets 1 and 2.

    Returns
    -------
    u, v : float

    Raises
    ------
    ValueError
        If ``sigma1`` or ``sigma2`` is negative.

    Examples
    --------
    >>> gaussian_difficulty_line(0.0, 0.0, 1.0, 0.0)
    (1.0, -1.0)
    """
    for name, s in (("sigma1", sigma1), ("sigma2", sigma2)):
        if s < 0:
            raise ValueError(f"{name} must be non-negative, got {s!r}")
    u = np.sqrt(sigma1**2 + 1) / np.sqrt(sigma2**2 + 1)
    v = (mu1 - mu2) / np.sqrt(sigma2**2 + 1)
    return float(u), float(v)


def simulate_gaussian_difficulty(
    skills: ArrayLike, mu1: float, sigma1: float, mu2: float, sigma2: float, n_images: int = 10_000,
    seed: int | np.random.Generator = 0,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Accuracies of models with the given skills on two simulated test sets (Recht et al. §5.3).

    Each test set draws ``n_images`` difficulties τ ~ N(μ, σ²); a model of skill s classifies an
    image correctly with probability Φ(s − τ), and each correct/incorrect outcome is sampled.

    Parameters
    ----------
    skills : array_like, shape (m,)
        Skill s of each model; non-empty and 1-D.
    mu1, sigma1, mu2, sigma2 : float
        Mean and standard deviation of the difficulty on test sets 1 and 2.
    n_images, seed : int
        Images per test set (>= 1), and the simulation's seed (or a numpy.random.Generator).

    Returns
    -------
    acc1, acc2 : ndarray, shape (len(skills),)
        Empirical accuracies on test sets 1 and 2.

    Raises
    ------
    ValueError
        If ``skills`` is empty or not 1-D, or ``n_images`` < 1.

    Examples
    --------
    >>> a1, a2 = simulate_gaussian_difficulty([-1.0, 0.0, 1.0], 0.0, 1.0, 0.5, 1.0, n_images=2000)
    >>> a1.shape, bool((np.diff(a1) > 0).all()), bool((a2 < a1).all())
    ((3,), True, True)
    """
    skills = np.asarray(skills, dtype=float)
    if skills.ndim != 1 or len(skills) == 0:
        raise ValueError("skills must be a non-empty 1-D array")
    if n_images < 1:
        raise ValueError("n_images must be at least 1")
    rng = np.random.default_rng(seed)
    out = []
    for mu, sigma in ((mu1, sigma1), (mu2, sigma2)):
        tau = rng.normal(mu, sigma, size=n_images)
        p = stats.norm.cdf(skills[:, None] - tau[None, :])
        out.append((rng.random(p.shape) < p).mean(axis=1))
    return out[0], out[1]


def simulated_line_spread(
    skills: ArrayLike, mu1: float, sigma1: float, mu2: float, sigma2: float, *, n_images: int = 10_000,
    seeds: Iterable[int] = range(1, 21),
) -> dict:  # fmt: skip
    """How much the least-squares probit line of a simulated testbed varies from one simulation to the next.

    Recht et al. (2019, §5.3): under the Gaussian difficulty model the *expected* accuracies lie exactly on
    the line of :func:`gaussian_difficulty_line`; a testbed simulated by :func:`simulate_gaussian_difficulty`
    has finite test sets (one draw of image difficulties each, and of every model's answers), so its
    fitted line scatters around the analytic one. This refits the line on testbeds simulated with each
    seed and reports the spread: how far a fit may sit from the analytic line by sampling alone.

    Parameters
    ----------
    skills, mu1, sigma1, mu2, sigma2, n_images
        As in :func:`simulate_gaussian_difficulty`.
    seeds : iterable of int
        One simulation per seed (at least 2).

    Returns
    -------
    dict
        ``slope_sd`` and ``intercept_sd`` (probit units): standard deviations over the simulations.

    Raises
    ------
    ValueError
        When fewer than 2 seeds are given, or as :func:`simulate_gaussian_difficulty`.

    Examples
    --------
    >>> s = simulated_line_spread(np.linspace(-1, 2, 10), 0.0, 1.0, 0.5, 1.0, n_images=2000, seeds=range(5))
    >>> 0 < s["slope_sd"] < 0.1 and 0 < s["intercept_sd"] < 0.1
    True
    """
    seeds = list(seeds)
    if len(seeds) < 2:
        raise ValueError(f"simulated_line_spread needs at least 2 seeds, got {len(seeds)}")
    lines = []
    for seed in seeds:
        a1, a2 = simulate_gaussian_difficulty(skills, mu1, sigma1, mu2, sigma2, n_images=n_images, seed=seed)
        res = stats.linregress(transform(a1, "probit"), transform(a2, "probit"))
        lines.append((res.slope, res.intercept))
    sd = np.std(lines, axis=0, ddof=1)
    return {"slope_sd": float(sd[0]), "intercept_sd": float(sd[1])}


def fit_table(
    table: pd.DataFrame, *, scale: str = "linear", n_boot: int = 100_000, ci: float = 0.95,
    seed: int | np.random.Generator = 0,
) -> LinearFit:  # fmt: skip
    """:func:`fit_linear` on a published table (columns ``orig_acc``, ``new_acc`` in percent).

    Parameters
    ----------
    table : pandas.DataFrame
        A table from :func:`shifteval.datasets.published.load_table` (or the same columns).
    scale, n_boot, ci, seed
        As in :func:`fit_linear`.

    Returns
    -------
    LinearFit

    Raises
    ------
    ValueError
        If ``orig_acc`` or ``new_acc`` is missing, or as :func:`fit_linear`.

    Examples
    --------
    >>> round(fit_table(pd.DataFrame({"orig_acc": [70, 80, 90], "new_acc": [60, 72, 84]}), n_boot=100).slope, 3)
    1.2
    """
    missing = {"orig_acc", "new_acc"} - set(table.columns)
    if missing:
        raise ValueError(f"table lacks column(s) {sorted(missing)}; expected orig_acc and new_acc in percent")
    return fit_linear(
        table["orig_acc"].to_numpy(float) / 100,
        table["new_acc"].to_numpy(float) / 100,
        scale=scale, n_boot=n_boot, ci=ci, seed=seed,
    )  # fmt: skip


def mean_change(table: pd.DataFrame) -> float:
    """Average ``new_acc - orig_acc`` over a table's models, in points (Recht et al. 2019, Table 2).

    Parameters
    ----------
    table : pandas.DataFrame
        Columns ``orig_acc`` and ``new_acc`` in percent.

    Returns
    -------
    float

    Examples
    --------
    >>> mean_change(pd.DataFrame({"orig_acc": [70.0, 80.0], "new_acc": [60.0, 74.0]}))
    -8.0
    """
    return float((table["new_acc"] - table["orig_acc"]).mean())
