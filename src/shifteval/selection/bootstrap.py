"""Uncertainty of the selection-adjusted accuracy estimates (Engstrom et al. 2020, §5.2, App. F.1).

- :func:`bootstrap_parametric`: the paper's bootstrap of the parametric estimate over images (App. F.1);
- :func:`bootstrap_jackknife`: a bootstrap of the jackknife estimate over images *and* votes.

The first refits a :class:`~shifteval.selection.parametric.ParametricEstimator` on each resample; the
second calls the jackknife of :mod:`shifteval.selection.estimators`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from tqdm import tqdm

from ..utils import validation
from ..utils.validation import check_vote_matrix
from .estimators import jackknife_adjusted_accuracy
from .parametric import BetaBinomialMixture, ParametricEstimator, fit_betabinomial_mixture, vote_levels


def posterior_frequencies(
    mixture: BetaBinomialMixture, counts: ArrayLike, annotators: int | ArrayLike, rng: np.random.Generator
) -> np.ndarray:
    """Draw each item's true selection frequency from its posterior under a fitted mixture.

    With prior ``Σ_j γ_j Beta(α_j, β_j)`` and ``k`` "yes" votes out of ``n`` annotators, the posterior is
    the mixture of ``Beta(α_j + k, β_j + n − k)`` with weights ``∝ γ_j BetaBinom(k; n, α_j, β_j)``.

    Parameters
    ----------
    mixture : BetaBinomialMixture
    counts : array_like of int
        "Yes" votes per item.
    annotators : int or array_like of int
        Annotators per item: one number, or one per item.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of float, one draw per item

    Examples
    --------
    >>> mix = BetaBinomialMixture(np.array([1.0]), np.array([2.0]), np.array([2.0]), 0.0, 10, 0, True)
    >>> s = posterior_frequencies(mix, np.full(20_000, 10), 10, np.random.default_rng(0))
    >>> round(float(s.mean()), 2)  # Beta(12, 2) has mean 12/14
    0.86
    >>> s = posterior_frequencies(mix, np.full(20_000, 10), np.full(20_000, 20), np.random.default_rng(0))
    >>> round(float(s.mean()), 2)  # Beta(12, 12)
    0.5
    """
    k = np.asarray(counts, dtype=np.int64)
    # the responsibilities depend on (k, n) alone: one column per distinct pair, not one per item
    pairs = vote_levels(k, np.asarray(annotators, dtype=np.int64))
    logp = np.stack([
        np.log(w) + stats.betabinom.logpmf(pairs.levels, pairs.annotators, a, b)
        for w, a, b in zip(mixture.weights, mixture.alphas, mixture.betas, strict=True)
    ])  # fmt: skip
    resp = np.exp(logp - logp.max(axis=0))
    resp = (resp / resp.sum(axis=0))[:, pairs.item_level]
    comp = np.minimum((rng.random(len(k))[None, :] > np.cumsum(resp, axis=0)).sum(axis=0), len(resp) - 1)
    return rng.beta(mixture.alphas[comp] + k, mixture.betas[comp] + annotators - k)


def normal_interval(estimate: ArrayLike, se: ArrayLike, ci: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The interval ``θ̂ ± z·SE`` around an estimate, ``z`` the normal quantile of coverage ``ci``.

    Parameters
    ----------
    estimate, se : array_like
        Estimates and their standard errors (broadcast together).
    ci : float
        Nominal coverage.

    Returns
    -------
    low, high : ndarray

    Examples
    --------
    >>> low, high = normal_interval([0.5], [0.01])
    >>> round(float(low[0]), 4), round(float(high[0]), 4)
    (0.4804, 0.5196)
    """
    z = stats.norm.ppf((1 + validation.fraction(ci, "ci")) / 2)
    est, se = np.asarray(estimate, dtype=float), np.asarray(se, dtype=float)
    return est - z * se, est + z * se


def percentile_interval(samples: ArrayLike, ci: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The bootstrap percentile interval (Engstrom et al. 2020, App. F.1: the 2.5% and 97.5% percentiles).

    Parameters
    ----------
    samples : array_like, shape (n_boot,) or (n_boot, models)
        Bootstrap estimates.
    ci : float
        Nominal coverage: the ``(1 − ci)/2`` and ``(1 + ci)/2`` quantiles.

    Returns
    -------
    low, high : ndarray
        One bound per model.

    Examples
    --------
    >>> low, high = percentile_interval(np.arange(1001.0))
    >>> round(float(low), 6), round(float(high), 6)
    (25.0, 975.0)
    """
    ci = validation.fraction(ci, "ci")
    low, high = np.quantile(np.asarray(samples, dtype=float), [(1 - ci) / 2, (1 + ci) / 2], axis=0)
    return low, high


def bootstrap_jackknife(
    votes_v1: ArrayLike,
    votes_v2: ArrayLike,
    correct_v2: ArrayLike,
    n_boot: int = 200,
    ci: float = 0.95,
    seed: int | np.random.Generator = 0,
    k: int = 3,
    progress: bool = False,
) -> dict:
    """Bootstrap of the jackknife estimate over images *and* votes (both sources of its error).

    The jackknife's own standard error (§5.2) measures only how the naive estimate moves when one
    annotator is left out; with a few thousand images the images' sampling error matters too (the
    paper's App. E assumes it away at 10⁴ images). Resampling images *with their votes* does not work
    here: a duplicated image repeats its votes, the leave-one-annotator-out differences become
    correlated, and the jackknife's ``(n − 1)``-fold amplification of them inflates the spread (by about
    2x on the default world, as does resampling annotator columns). So each sample resamples v1 and v2
    images (a v2 image keeps every model's correctness), draws each resampled image's true frequency
    from its posterior under a ``k``-component beta-binomial mixture fitted to its set
    (:func:`posterior_frequencies`), draws fresh votes from it — from the same annotators as the
    image's own votes, NaN where one of them did not vote — and recomputes the jackknife. Ours, not
    the paper's.

    The interval is ``θ̂ ± z·SE`` around the full-sample jackknife estimate θ̂ (:func:`normal_interval`),
    not the percentiles of the samples: the samples draw votes from the fitted mixture, so they centre
    near the mixture model's value, not on θ̂ (a percentile interval can miss its own estimate), while
    their spread is the estimate's. A basic-bootstrap interval ``2θ̂ − q`` would carry the same offset
    between model and jackknife, mirrored.

    Parameters
    ----------
    votes_v1, votes_v2 : array_like, shape (images, annotators)
        0/1 votes, the same number of annotator columns in both; NaN where an annotator did not vote
        (every image needs at least two votes).
    correct_v2 : array_like of bool, shape (n_v2,) or (models, n_v2)
    n_boot : int
        Bootstrap samples.
    ci : float
        Nominal coverage of the interval.
    seed : int or numpy.random.Generator
    k : int
        Mixture components.
    progress : bool
        Show a progress bar.

    Returns
    -------
    dict
        ``estimate`` (the jackknife estimate), ``low``, ``high`` (``estimate ± z·se``), ``se`` (the
        samples' standard deviation), ``percentile_low``, ``percentile_high`` (App. F.1's form, see
        :func:`percentile_interval`), per model, and ``samples`` (n_boot x models).

    Raises
    ------
    ValueError
        On malformed votes or correctness, an image with fewer than two votes, or ``n_boot < 2``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> v1 = (rng.random((300, 6)) < 0.8).astype(float)
    >>> v2 = (rng.random((300, 6)) < 0.6).astype(float)
    >>> v2[:100, 0] = np.nan  # a third of v2 has 5 votes, the rest 6
    >>> boot = bootstrap_jackknife(v1, v2, rng.random(300) < 0.7, n_boot=20, k=1)
    >>> boot["samples"].shape, bool(boot["se"][0] > 0), bool(boot["low"][0] < boot["estimate"][0] < boot["high"][0])
    ((20, 1), True, True)
    """
    v1, v2 = check_vote_matrix(votes_v1, "votes_v1"), check_vote_matrix(votes_v2, "votes_v2")
    if v1.shape[1] != v2.shape[1]:
        raise ValueError(f"votes_v1 has {v1.shape[1]} annotators but votes_v2 has {v2.shape[1]}")
    f = validation.correctness(correct_v2, len(v2), "correct_v2", "v2 image")
    n_boot = validation.positive_int(n_boot, "n_boot", minimum=2)
    ci = validation.fraction(ci, "ci")
    estimate = jackknife_adjusted_accuracy(v1, v2, f).corrected  # also checks two votes per image
    rng = np.random.default_rng(seed)
    seen1, seen2 = ~np.isnan(v1), ~np.isnan(v2)
    annotators_v1, annotators_v2 = seen1.sum(1), seen2.sum(1)
    c1, c2 = np.nansum(v1, 1).astype(np.int64), np.nansum(v2, 1).astype(np.int64)
    p1, p2 = (
        fit_betabinomial_mixture(c, a, k=k, seed=rng) for c, a in ((c1, annotators_v1), (c2, annotators_v2))
    )
    draws = np.empty((n_boot, len(f)))
    for b in tqdm(range(n_boot), desc="bootstrap (jackknife)", unit="sample", disable=not progress):
        i1, i2 = rng.integers(0, len(c1), len(c1)), rng.integers(0, len(c2), len(c2))
        fresh = []
        for p, c, a, seen, i in ((p1, c1, annotators_v1, seen1, i1), (p2, c2, annotators_v2, seen2, i2)):
            s = posterior_frequencies(p, c[i], a[i], rng)
            fresh.append(np.where(seen[i], rng.random(seen[i].shape) < s[:, None], np.nan))
        draws[b] = jackknife_adjusted_accuracy(fresh[0], fresh[1], f[:, i2]).corrected
    se = draws.std(axis=0, ddof=1)
    (low, high), (plow, phigh) = normal_interval(estimate, se, ci), percentile_interval(draws, ci)
    out = {"estimate": estimate, "low": low, "high": high, "se": se, "samples": draws}
    return out | {"percentile_low": plow, "percentile_high": phigh}


def bootstrap_parametric(
    counts_v1: ArrayLike,
    counts_v2: ArrayLike,
    correct_v2: ArrayLike,
    annotators: int | ArrayLike | tuple,
    n_boot: int = 450,
    ci: float = 0.95,
    seed: int | np.random.Generator = 0,
    k: int = 3,
    n_basis: int = 8,
    progress: bool = False,
) -> dict:
    """Bootstrap of the parametric estimate, resampling images (Engstrom et al. 2020, App. F.1).

    v1 and v2 images are resampled with replacement independently (a v2 image keeps its counts, its
    number of annotators and every model's correctness); the paper used 450 samples (App. F.1). Each
    sample refits the full-sample :class:`~shifteval.selection.parametric.ParametricEstimator` on the
    resampled images (:meth:`~shifteval.selection.parametric.ParametricEstimator.refit`): both mixtures
    and every spline, with the resampled share of each number of annotators (see
    :func:`shifteval.selection.parametric.annotator_shares`). The mixtures start from the full-sample fit
    (quasi-Newton from there; EM to convergence only where that fails), not from fresh random starts: the resampled
    likelihood's maximum is near the full-sample one, and this makes a sample several times cheaper
    (``benchmarks/bench_selection_bootstrap.py``).

    The interval is ``θ̂ ± z·SE`` around the full-sample estimate (:func:`normal_interval`), as for
    :func:`bootstrap_jackknife`, so both estimators' intervals are built alike and each contains its
    estimate; the samples' percentiles are returned too (``percentile_low``, ``percentile_high``).

    Parameters
    ----------
    counts_v1, counts_v2, correct_v2, annotators, k, n_basis
        As for :func:`~shifteval.selection.estimators.parametric_adjusted_accuracy` (per-image numbers of annotators on either set
        allowed).
    n_boot : int
        Bootstrap samples.
    ci : float
        Nominal coverage of the interval.
    seed : int or numpy.random.Generator
        Seed of the resampling and of the full-sample fit's random starts (with an integer seed the
        full-sample estimate is :func:`~shifteval.selection.estimators.parametric_adjusted_accuracy`'s with the same seed).
    progress : bool
        Show a progress bar.

    Returns
    -------
    dict
        ``low``, ``high`` (ndarrays, one per model), ``se`` (standard deviation over samples, per model),
        ``percentile_low``, ``percentile_high``, ``samples`` (n_boot x models) and ``estimate`` (the
        full-sample estimate).

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> s1, s2 = rng.beta(5, 2, 2000), rng.beta(4, 2, 2000)
    >>> annotators_v1, annotators_v2 = rng.integers(8, 12, 2000), rng.integers(8, 12, 2000)
    >>> c1, c2 = rng.binomial(annotators_v1, s1), rng.binomial(annotators_v2, s2)
    >>> correct = rng.random(2000) < s2
    >>> boot = bootstrap_parametric(c1, c2, correct, (annotators_v1, annotators_v2), n_boot=20, k=2)
    >>> boot["samples"].shape, bool(boot["low"][0] < boot["estimate"][0] < boot["high"][0])
    ((20, 1), True)
    """
    n_boot = validation.positive_int(n_boot, "n_boot", minimum=2)
    ci = validation.fraction(ci, "ci")
    # the full-sample fit as parametric_adjusted_accuracy makes it with the same seed: the interval is
    # built around the estimate that function returns
    estimator = ParametricEstimator(k=k, n_basis=n_basis, seed=seed)
    fitted = estimator.fit(counts_v1, counts_v2, correct_v2, annotators)
    est = fitted.estimates_
    rng = np.random.default_rng(seed)
    images_v1, images_v2 = len(fitted.levels_v1_.item_level), len(fitted.levels_v2_.item_level)
    draws = np.empty((n_boot, len(est)))
    for b in tqdm(range(n_boot), desc="bootstrap", unit="sample", disable=not progress):
        rows_v1 = rng.integers(0, images_v1, images_v1)
        rows_v2 = rng.integers(0, images_v2, images_v2)
        draws[b] = fitted.refit(rows_v1, rows_v2).estimates_
    se = draws.std(axis=0, ddof=1)
    low, high = normal_interval(est, se, ci)
    plow, phigh = percentile_interval(draws, ci)
    return {
        "low": low,
        "high": high,
        "se": se,
        "percentile_low": plow,
        "percentile_high": phigh,
        "samples": draws,
        "estimate": est,
    }
