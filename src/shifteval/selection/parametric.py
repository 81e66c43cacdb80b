"""The parametric estimator of selection-adjusted accuracy (Engstrom et al. 2020, §5.3 and App. F).

- a mixture of beta distributions for the true selection frequencies, fitted through the
  beta-binomial likelihood of the votes by EM (:func:`fit_betabinomial_mixture`, App. F);
- a cubic B-spline ``g(s) = P(correct | s)`` fitted through Eq. (7)-(8) (:func:`fit_accuracy_spline`);
- exact integrals of the spline against the mixtures, for ``∫ g(s) p₁(s) ds`` (Eq. 6), which
  :func:`shifteval.selection.parametric_adjusted_accuracy` and its bootstrap use.

Every integral against a beta density is exact: a cubic B-spline is a cubic polynomial between knots,
and ``∫ sʲ Beta(s; α, β) ds`` over an interval is a difference of regularized incomplete beta
functions. Each item may have its own number of annotators: ``annotators`` is one number or an array
with one entry per item (for two sets, a tuple of two such values). :class:`ParametricEstimator` holds
a fit of the whole model; the bootstrap refits it on resampled images.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special, stats
from scipy.interpolate import BSpline, PPoly

from ..utils import validation

_LOG_BOUNDS = (np.log(1e-2), np.log(1e4))  # bounds on log alpha, log beta in the M-step
_DEGREE = 3  # cubic splines
_MASS_TOL = 1e-8  # how far the basis expectations under a beta density may sum from 1


def per_set(annotators: int | ArrayLike | tuple) -> tuple:
    """Split ``annotators`` into (v1, v2) values: one value for both, or a tuple ``(annotators_v1, annotators_v2)``.

    Parameters
    ----------
    annotators : int, array_like or tuple
        Annotators per image: one number or per-image array for both sets, or a pair
        ``(annotators_v1, annotators_v2)``.

    Returns
    -------
    tuple
        ``(annotators_v1, annotators_v2)``.

    Raises
    ------
    ValueError
        If ``annotators`` is a tuple of other than two entries.

    Examples
    --------
    >>> per_set(40)
    (40, 40)
    >>> per_set(([10, 12], [11]))
    ([10, 12], [11])
    """
    if isinstance(annotators, tuple):
        if len(annotators) != 2:
            raise ValueError(
                f"annotators as a tuple must be (annotators_v1, annotators_v2), got {len(annotators)} entries"
            )
        return annotators
    return annotators, annotators


class VoteLevels(NamedTuple):
    """The distinct (count, annotators) pairs of a set of items (see :func:`vote_levels`)."""

    levels: np.ndarray
    """Positive votes of each pair (int64)."""
    annotators: np.ndarray
    """Annotators of each pair (int64)."""
    hist: np.ndarray
    """Items per pair (float)."""
    item_level: np.ndarray
    """Each item's pair (int64)."""

    def resample(self, rows: ArrayLike) -> VoteLevels:
        """The pairs of the items ``rows`` (indices into the items, repeats allowed), empty pairs kept.

        Parameters
        ----------
        rows : array_like of int
            Items drawn, e.g. with replacement by a bootstrap.

        Returns
        -------
        VoteLevels
            The same pairs, with the drawn items' multiplicities and pairs.

        Examples
        --------
        >>> vote_levels(np.array([2, 0, 2]), np.array([2, 3, 2])).resample([0, 0, 0]).hist.tolist()
        [0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0]
        """
        item_level = self.item_level[np.asarray(rows)]
        hist = np.bincount(item_level, minlength=len(self.levels)).astype(float)
        return VoteLevels(self.levels, self.annotators, hist, item_level)


def vote_levels(counts: NDArray[np.int64], annotators: int | NDArray[np.int64]) -> VoteLevels:
    """The distinct (count, annotators) pairs, each pair's number of items, and each item's pair.

    The likelihoods of this module depend on the votes only through these pairs; with one number of
    annotators for every item (one number, or an array whose entries are all equal) the pairs are all
    ``annotators + 1`` count values (empty ones included), so equal per-item numbers take exactly the
    scalar path. With per-item numbers the pairs are likewise every count ``0..n`` of every number ``n``
    that occurs, empty ones included: an empty pair is an observation too (no item, and so no correct
    item, has it), and the accuracy spline's least squares (Eq. 8) drifts upwards without the empty
    pairs, which with many distinct ``n`` are most of them (``tests/test_selection_perimage.py`` measures
    the upward bias left without them, about +1.2 points with 32-48 annotators per image).

    Parameters
    ----------
    counts : ndarray of int
        Positive votes of each item.
    annotators : int or ndarray of int
        Annotators of every item, or of each item.

    Returns
    -------
    VoteLevels
        ``levels`` and ``annotators`` (int64): count and annotators of each pair; ``hist`` (float): items
        per pair; ``item_level`` (int64): each item's pair.

    Examples
    --------
    >>> levels, annotators, hist, item_level = vote_levels(np.array([2, 0, 2]), np.array([2, 3, 2]))
    >>> levels.tolist(), annotators.tolist()
    ([0, 1, 2, 0, 1, 2, 3], [2, 2, 2, 3, 3, 3, 3])
    >>> hist.tolist(), item_level.tolist()
    ([0.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0], [2, 3, 2])
    """
    annotators = np.asarray(annotators)
    if annotators.ndim > 0 and len(annotators) and np.all(annotators == annotators[0]):  # the scalar path
        annotators = np.asarray(annotators[0])
    if annotators.ndim == 0:
        annotators = int(annotators)
        hist = np.bincount(counts, minlength=annotators + 1).astype(float)
        return VoteLevels(np.arange(annotators + 1), np.full(annotators + 1, annotators), hist, counts)
    numbers = np.unique(annotators).astype(np.int64)
    start = np.concatenate([[0], np.cumsum(numbers + 1)[:-1]])  # each number's first pair
    levels = np.concatenate([np.arange(n + 1) for n in numbers])
    item_level = (start[np.searchsorted(numbers, annotators)] + counts).astype(np.int64)
    hist = np.bincount(item_level, minlength=len(levels)).astype(float)
    return VoteLevels(levels, np.repeat(numbers, numbers + 1), hist, item_level)


# --- beta-binomial mixture (§5.3, App. F) ---------------------------------------------------------


@dataclass(frozen=True)
class BetaBinomialMixture:
    """A mixture of beta distributions for true selection frequencies, fitted through binomial votes."""

    weights: np.ndarray
    alphas: np.ndarray
    betas: np.ndarray
    loglik: float
    annotators: int | np.ndarray
    n_iter: int
    converged: bool

    @property
    def means(self) -> np.ndarray:
        """Mean of each beta component."""
        return self.alphas / (self.alphas + self.betas)

    @property
    def variance(self) -> float:
        """Variance of the mixture density (law of total variance)."""
        a, b = self.alphas, self.betas
        within = a * b / ((a + b) ** 2 * (a + b + 1))
        return float(self.weights @ (within + self.means**2) - (self.weights @ self.means) ** 2)

    def pdf(self, s: ArrayLike) -> np.ndarray:
        """Mixture density of the true selection frequency at ``s``."""
        s = np.asarray(s, dtype=float)
        return sum(
            w * stats.beta.pdf(s, a, b) for w, a, b in zip(self.weights, self.alphas, self.betas, strict=True)
        )

    def pmf(self, k: ArrayLike, annotators: int | ArrayLike | None = None) -> np.ndarray:
        """Implied probability of ``k`` "yes" votes out of ``annotators`` (default: the fitted ``annotators``)."""
        annotators = self.annotators if annotators is None else annotators
        return sum(
            w * stats.betabinom.pmf(k, annotators, a, b)
            for w, a, b in zip(self.weights, self.alphas, self.betas, strict=True)
        )

    def basis_expectations(self, n_basis: int) -> np.ndarray:
        """``E[B_b(S)]`` under the mixture for each cubic B-spline basis function (exact)."""
        return self.weights @ beta_basis_expectations(self.alphas, self.betas, n_basis)


def _component_loglik(levels, annotators, log_a, log_b):
    """Beta-binomial log-pmf at every count level; equals ``scipy.stats.betabinom.logpmf`` (tested)."""
    a, b = np.exp(log_a), np.exp(log_b)
    const = (
        special.gammaln(annotators + 1)
        - special.gammaln(levels + 1)
        - special.gammaln(annotators - levels + 1)
    )
    return (
        const
        + special.gammaln(levels + a)
        + special.gammaln(annotators - levels + b)
        - special.gammaln(annotators + a + b)
        - special.gammaln(a)
        - special.gammaln(b)
        + special.gammaln(a + b)
    )


def _m_step(levels, annotators, weights_k, log_ab):
    """Weighted beta-binomial MLE on the distinct (count, annotators) pairs, log-parameterized and bounded.

    The gradient is analytic (digamma functions), so L-BFGS-B needs no finite differences.
    """
    total = weights_k.sum()
    digamma = special.digamma

    def neg(theta):
        a, b = np.exp(theta)
        ll = np.dot(weights_k, _component_loglik(levels, annotators, theta[0], theta[1]))
        common = np.dot(weights_k, digamma(a + b) - digamma(annotators + a + b))
        da = np.dot(weights_k, digamma(levels + a)) - total * digamma(a) + common
        db = np.dot(weights_k, digamma(annotators - levels + b)) - total * digamma(b) + common
        return -ll, -np.array([da * a, db * b])

    res = optimize.minimize(neg, log_ab, jac=True, method="L-BFGS-B", bounds=[_LOG_BOUNDS, _LOG_BOUNDS])
    return res.x


class _EMRun(NamedTuple):
    """Where an EM run ended."""

    loglik: float
    weights: np.ndarray
    log_ab: np.ndarray
    iterations: int
    converged: bool


def _em(levels, annotators, hist, weights, log_ab, iterations, tol) -> _EMRun:
    k = len(weights)
    prev, loglik, converged, it = -np.inf, -np.inf, False, 0
    for it in range(1, iterations + 1):  # noqa: B007 (the count is returned)
        comp = np.stack([_component_loglik(levels, annotators, *log_ab[j]) for j in range(k)])
        comp += np.log(np.maximum(weights, 1e-300))[:, None]
        mix = np.logaddexp.reduce(comp, axis=0)  # log p(count level)
        loglik = float(np.dot(hist, mix))
        if loglik - prev <= tol * abs(loglik):
            converged = True
            break
        prev = loglik
        resp = np.exp(comp - mix[None, :]) * hist[None, :]  # component x level, times multiplicity
        weights = resp.sum(axis=1) / hist.sum()
        log_ab = np.stack([_m_step(levels, annotators, resp[j], log_ab[j]) for j in range(k)])
    return _EMRun(loglik, weights, log_ab, it, converged)


def _polish(levels, annotators, hist, weights, log_ab):
    """One L-BFGS-B run on the full mixture likelihood (weights as softmax logits), analytic gradient."""
    k = len(weights)
    digamma = special.digamma

    def neg(theta):
        logits, la, lb = theta[:k], theta[k : 2 * k], theta[2 * k :]
        logw = logits - np.logaddexp.reduce(logits)
        comp = (
            np.stack([_component_loglik(levels, annotators, la[j], lb[j]) for j in range(k)]) + logw[:, None]
        )
        mix = np.logaddexp.reduce(comp, axis=0)
        resp = np.exp(comp - mix[None, :]) * hist[None, :]
        a, b = np.exp(la)[:, None], np.exp(lb)[:, None]
        common = digamma(a + b) - digamma(annotators + a + b)
        da = (resp * (digamma(levels[None, :] + a) - digamma(a) + common)).sum(1) * a[:, 0]
        db = (resp * (digamma(annotators - levels[None, :] + b) - digamma(b) + common)).sum(1) * b[:, 0]
        dlogit = resp.sum(1) - hist.sum() * np.exp(logw)
        return -float(np.dot(hist, mix)), -np.concatenate([dlogit, da, db])

    theta0 = np.concatenate([np.log(np.maximum(weights, 1e-12)), log_ab[:, 0], log_ab[:, 1]])
    bounds = [(None, None)] * k + [_LOG_BOUNDS] * (2 * k)
    res = optimize.minimize(
        neg, theta0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 2000}
    )
    logits = res.x[:k]
    w = np.exp(logits - np.logaddexp.reduce(logits))
    return -float(res.fun), w, np.stack([res.x[k : 2 * k], res.x[2 * k :]], axis=1), bool(res.success)


def _fit_levels(pairs: VoteLevels, k, rng, *, n_restarts, tol, max_iter, init, annotators):
    """The mixture fit on the (count, annotators) pairs; ``annotators`` (per item) is stored with it."""
    levels, level_annotators, hist = pairs.levels, pairs.annotators, pairs.hist
    if init is not None:  # the bootstrap starts at the full-sample fit: quasi-Newton from there
        if len(init.weights) != k:
            raise ValueError(f"init has {len(init.weights)} components, expected k={k}")
        start = (init.weights, np.log(np.stack([init.alphas, init.betas], axis=1)))
        loglik, weights, log_ab, ok = _polish(levels, level_annotators, hist, *start)
        if ok:
            return _sorted_mixture(loglik, weights, log_ab, annotators, 0, True)
        run = _em(levels, level_annotators, hist, *start, max_iter, tol)
    else:  # short runs from several random starts, then the best one continues to convergence
        starts = []
        for _ in range(max(1, int(n_restarts))):
            weights = rng.dirichlet(np.full(k, 5.0))
            means = np.sort(rng.uniform(0.1, 0.9, k))
            conc = rng.uniform(2, 20, k)
            log_ab = np.log(np.stack([means * conc, (1 - means) * conc], axis=1))
            starts.append(_em(levels, level_annotators, hist, weights, log_ab, 10, tol))
        best = max(starts, key=lambda r: r.loglik)
        if not best.converged:
            best = _em(levels, level_annotators, hist, best.weights, best.log_ab, max_iter, tol)
        run = best
    loglik, weights, log_ab, it, converged = run
    # EM crawls near the optimum; a final quasi-Newton step on the full likelihood, started from the
    # EM solution and within the same bounds, polishes it (kept only if it does not lower the likelihood).
    *polished, polish_ok = _polish(levels, level_annotators, hist, weights, log_ab)
    if polished[0] >= loglik:
        loglik, weights, log_ab = polished
        converged = converged or polish_ok
    return _sorted_mixture(loglik, weights, log_ab, annotators, it, converged)


def _sorted_mixture(loglik, weights, log_ab, annotators, iterations, converged):
    alphas, betas = np.exp(log_ab[:, 0]), np.exp(log_ab[:, 1])
    order = np.argsort(alphas / (alphas + betas))
    return BetaBinomialMixture(
        weights[order], alphas[order], betas[order], loglik, annotators, iterations, converged
    )


def fit_betabinomial_mixture(
    counts: ArrayLike,
    annotators: int | ArrayLike,
    k: int = 3,
    seed: int | np.random.Generator = 0,
    n_restarts: int = 4,
    tol: float = 1e-6,
    max_iter: int = 100,
    init: BetaBinomialMixture | None = None,
) -> BetaBinomialMixture:
    """Maximum-likelihood mixture of ``k`` beta-binomials for vote counts, by EM (Engstrom et al. 2020, App. F).

    Each item's count is modelled as ``k_i ~ BetaBinomial(n_i, α_j, β_j)`` (``n_i`` its annotators) for a
    latent component j of weight γ_j. Differences from the released code, which runs 200 EM rounds with an
    unbounded M-step: the E- and M-steps work on the distinct (count, annotators) pairs with their (responsibility-weighted)
    multiplicities — the likelihood depends on the data only through them — the M-step maximises over
    (log α, log β) within bounds [1e-2, 1e4] with L-BFGS-B and an analytic gradient, iterations stop when
    the log-likelihood improves by less than ``tol`` (relative) or after ``max_iter`` rounds, and the best
    of ``n_restarts`` short random starts (10 rounds each) is continued. EM then hands its solution to
    one L-BFGS-B run on the full mixture likelihood (same bounds), which removes EM's slow final crawl;
    the result is kept only if it does not lower the likelihood.

    Parameters
    ----------
    counts : array_like of int
        "Yes" votes per item, ``0 <= counts[i] <= annotators[i]``.
    annotators : int or array_like of int
        Annotators per item: one number for all items, or one per item.
    k : int
        Number of mixture components (>= 1; the paper uses 3).
    seed : int or numpy.random.Generator
        Seed of the random starts.
    n_restarts, tol, max_iter : int, float, int
        Random starts, relative convergence tolerance of EM, and its largest number of rounds.
    init : BetaBinomialMixture, optional
        Start from this solution instead of random starts (as :meth:`ParametricEstimator.refit` does).

    Returns
    -------
    BetaBinomialMixture
        Components sorted by mean.

    Raises
    ------
    ValueError
        On counts that are not whole numbers in ``[0, annotators[i]]``, or ``k < 1``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = np.where(rng.random(4000) < 0.3, rng.beta(2, 8, 4000), rng.beta(9, 2, 4000))
    >>> mix = fit_betabinomial_mixture(rng.binomial(20, s), 20, k=2)
    >>> np.round(mix.weights, 1).tolist(), np.round(mix.means, 1).tolist()
    ([0.3, 0.7], [0.2, 0.8])
    """
    counts, annotators = validation.check_votes(counts, annotators)
    if int(k) < 1:
        raise ValueError(f"k must be at least 1, got {k!r}")
    rng, options = np.random.default_rng(seed), {"n_restarts": n_restarts, "tol": tol, "max_iter": max_iter}
    return _fit_levels(
        vote_levels(counts, annotators), int(k), rng, init=init, annotators=annotators, **options
    )


# --- exact integrals of cubic B-splines against beta densities ------------------------------------


def _knots(n_basis: int):
    inner = np.linspace(0, 1, validation.positive_int(n_basis, "n_basis", minimum=_DEGREE + 1) - _DEGREE + 1)
    return inner, np.concatenate([[0] * _DEGREE, inner, [1] * _DEGREE])


def _bspline_basis(s, n_basis: int):
    _, knots = _knots(n_basis)
    return np.stack(
        [BSpline(knots, np.eye(n_basis)[b], _DEGREE, extrapolate=False)(s) for b in range(n_basis)], axis=1
    )


@lru_cache(maxsize=8)
def _power_coefficients(n_basis: int):
    """Each basis function on each knot interval as ``Σ_j c[b, i, j] sʲ`` (j = 0..3), and the interval edges."""
    edges, knots = _knots(n_basis)
    coef = np.zeros((n_basis, len(edges) - 1, _DEGREE + 1))
    for b in range(n_basis):
        pp = PPoly.from_spline(BSpline(knots, np.eye(n_basis)[b], _DEGREE))
        for i, lo in enumerate(edges[:-1]):
            piece = np.searchsorted(pp.x, lo, side="right") - 1  # PPoly stores c[m] (s − x)^(3−m)
            local = np.polynomial.Polynomial(pp.c[::-1, piece])  # in powers of (s − x)
            shifted = local(np.polynomial.Polynomial([-pp.x[piece], 1.0]))
            coef[b, i, : len(shifted.coef)] = shifted.coef
    coef.setflags(write=False)
    return edges, coef


def beta_basis_expectations(alpha: ArrayLike, beta: ArrayLike, n_basis: int) -> np.ndarray:
    """``E[B_b(S)]``, ``S ~ Beta(α, β)``, for every cubic B-spline basis function, computed exactly.

    Between knots ``x_i < x_{i+1}`` each basis function is a cubic ``Σ_j c_j sʲ``, and
    ``∫ sʲ Beta(s; α, β) ds = B(α + j, β) / B(α, β) · [I_{x_{i+1}}(α + j, β) − I_{x_i}(α + j, β)]``
    with ``I`` the regularized incomplete beta function. No grid: a spike component (α or β near the
    bounds 1e-2 / 1e4) loses no mass. The basis sums to one on [0, 1], so the expectations must too.

    Parameters
    ----------
    alpha, beta : array_like
        Beta parameters (broadcast together).
    n_basis : int
        Number of basis functions (>= 4).

    Returns
    -------
    ndarray, shape (len(alpha), n_basis)

    Raises
    ------
    FloatingPointError
        When the expectations are not finite or do not sum to one (mass lost in the integration).

    Examples
    --------
    >>> e = beta_basis_expectations([2.0, 1e4], [5.0, 1e-2], 6)
    >>> np.round(e.sum(axis=1), 12).tolist(), round(float(e[1, -1]), 4)
    ([1.0, 1.0], 1.0)
    """
    a, b = np.broadcast_arrays(
        np.atleast_1d(np.asarray(alpha, float)), np.atleast_1d(np.asarray(beta, float))
    )
    edges, coef = _power_coefficients(int(n_basis))
    j = np.arange(_DEGREE + 1)
    steps = (a[:, None] + j[:-1]) / (a[:, None] + b[:, None] + j[:-1])  # B(α+j, β)/B(α, β) = Π (α+m)/(α+β+m)
    ratio = np.cumprod(np.concatenate([np.ones((len(a), 1)), steps], axis=1), axis=1)
    cdf = special.betainc(a[:, None, None] + j, b[:, None, None], edges[None, :, None])  # (P, edges, j)
    pieces = np.diff(cdf, axis=1) * ratio[:, None, :]  # ∫ over each interval of sʲ Beta(s)
    out = np.einsum("pij,bij->pb", pieces, coef)
    total = out.sum(axis=1)
    bad = ~np.isfinite(total) | (np.abs(total - 1) > _MASS_TOL) | (pieces < -_MASS_TOL).any(axis=(1, 2))
    if bad.any():
        w = int(np.flatnonzero(bad)[0])
        raise FloatingPointError(
            f"integration against Beta({a[w]:.6g}, {b[w]:.6g}) lost mass: its B-spline expectations sum to "
            f"{total[w]!r}, not 1"
        )
    return out


# --- spline model of accuracy given true selection frequency (§5.3, Eq. 6-8) ---------------------


@dataclass(frozen=True)
class AccuracySpline:
    """g(s) = P(correct | true selection frequency s), a cubic B-spline with coefficients in [0, 1]."""

    coef: np.ndarray

    def __call__(self, s: ArrayLike) -> np.ndarray:
        """Accuracy at true frequency ``s`` (clipped to [0, 1])."""
        s = np.clip(np.asarray(s, dtype=float), 0, 1)
        return np.nan_to_num(_bspline_basis(np.atleast_1d(s), len(self.coef))) @ self.coef

    def integrate(self, mixture: BetaBinomialMixture) -> float:
        """``∫ g(s) p(s) ds`` for the mixture density ``p`` (Eq. 6), exactly."""
        return float(mixture.basis_expectations(len(self.coef)) @ self.coef)


def annotator_shares(annotators: ArrayLike, hist: ArrayLike) -> np.ndarray:
    """Each (count, annotators) pair's ``P(n)``: the share of the items with that pair's number of annotators.

    Parameters
    ----------
    annotators : array_like of int
        Annotators of each pair (``VoteLevels.annotators``, from :func:`vote_levels`).
    hist : array_like of float
        Items per pair.

    Returns
    -------
    ndarray of float, one share per pair (all ones when every item has the same number of annotators).

    Examples
    --------
    >>> annotator_shares([20, 20, 21], [1.0, 2.0, 1.0]).tolist()
    [0.75, 0.75, 0.25]
    """
    annotators, hist = np.asarray(annotators), np.asarray(hist, dtype=float)
    _, inverse = np.unique(annotators, return_inverse=True)
    per_number = np.bincount(inverse.ravel(), weights=hist)
    return per_number[inverse.ravel()] / hist.sum()


def _design(levels, annotators, p2: BetaBinomialMixture, n_basis: int, share):
    """Eq. (7) as a matrix: ``P(ŝ = k/n, basis b) = P(n) ∫ B_b(s) Binom(k; n, s) p₂(s) ds`` per (count, n) pair.

    ``n`` is a pair's number of annotators. For one component,
    ``Binom(k; n, s) Beta(s; α, β) = BetaBinom(k; n, α, β) · Beta(s; α + k, β + n − k)``. With per-item
    numbers of annotators the observed joint frequencies sum to one over *all* pairs, so each pair's row is
    weighted by its ``n``'s share ``P(n)`` of the items (``share``, see :func:`annotator_shares`; all ones
    for one ``n``); without it the fit shrinks g by about one over the number of distinct ``n``.
    """
    rows = np.zeros((len(levels), n_basis))
    for w, a, b in zip(p2.weights, p2.alphas, p2.betas, strict=True):
        pmf = np.exp(_component_loglik(levels, annotators, np.log(a), np.log(b)))
        rows += w * pmf[:, None] * beta_basis_expectations(a + levels, b + annotators - levels, n_basis)
    return rows * np.asarray(share, dtype=float)[:, None]


def _fit_splines(pairs: VoteLevels, correct, p2: BetaBinomialMixture, n_basis: int) -> list[AccuracySpline]:
    """Eq. (8): the bounded least-squares spline per model on the (count, annotators) pairs of v2."""
    share = annotator_shares(pairs.annotators, pairs.hist)
    design = _design(pairs.levels, pairs.annotators, p2, n_basis, share)
    n_pairs = len(pairs.levels)
    joint = (
        np.stack([np.bincount(pairs.item_level, weights=row, minlength=n_pairs) for row in correct])
        / correct.shape[1]
    )
    return [AccuracySpline(optimize.lsq_linear(design, row, bounds=(0, 1), method="bvls").x) for row in joint]


def fit_accuracy_spline(
    counts_v2: ArrayLike,
    correct_v2: ArrayLike,
    annotators: int | ArrayLike,
    p2: BetaBinomialMixture,
    n_basis: int = 8,
) -> list[AccuracySpline]:
    """Fit g(s) for each model from noisy counts (Engstrom et al. 2020, Eq. (7)-(8)).

    Eq. (7): ``P(f = 1, ŝ = k/n) = ∫ g(s) Binom(k; n, s) p₂(s) ds`` for an image with ``n`` annotators;
    with a per-image number of annotators the right side is multiplied by ``P(n)``, the share of v2's
    images with ``n`` annotators. With g a cubic B-spline
    ``Σ_b ω_b B_b(s)``, the right side is linear in ω (its entries are computed exactly, see
    :func:`beta_basis_expectations`); ω is fitted by least squares to the observed joint frequencies
    (Eq. 8) under 0 <= ω_b <= 1, which keeps 0 <= g <= 1 (a B-spline lies in the convex hull of its
    coefficients). Uses ``scipy.optimize.lsq_linear``.

    Parameters
    ----------
    counts_v2 : array_like of int
        "Yes" votes per v2 image.
    correct_v2 : array_like of bool, shape (n_v2,) or (models, n_v2)
    annotators : int or array_like of int
        Annotators per image (one number, or one per image).
    p2 : BetaBinomialMixture
        The fitted distribution of v2's true selection frequencies.
    n_basis : int
        Number of B-spline basis functions.

    Returns
    -------
    list of AccuracySpline
        One per model (row of ``correct_v2``).

    Raises
    ------
    ValueError
        If the counts are not valid vote counts or ``correct_v2`` has not one column per v2 image.

    Examples
    --------
    A model right on 70% of the images, whatever their frequency: g averages to 0.70 under p₂, and
    where p₂ has its mass g is close to flat:

    >>> rng = np.random.default_rng(1)
    >>> counts = rng.binomial(10, rng.beta(3, 2, 5000))
    >>> p2 = fit_betabinomial_mixture(counts, 10, k=1)
    >>> g = fit_accuracy_spline(counts, rng.random(5000) < 0.7, 10, p2)[0]
    >>> round(g.integrate(p2), 2), np.round(g([0.5, 0.8]), 2).tolist()
    (0.7, [0.7, 0.65])
    """
    c2, annotators = validation.check_votes(counts_v2, annotators, "counts_v2")
    f = validation.correctness(correct_v2, len(c2), "correct_v2", "v2 image")
    return _fit_splines(vote_levels(c2, annotators), f, p2, int(n_basis))


# --- the whole model, fitted and refitted (§5.3, Eq. 6; App. F.1) ----------------------------------


class ParametricEstimator:
    """The parametric estimator of selection-adjusted v2 accuracy (Engstrom et al. 2020, §5.3, Eq. (6)).

    :meth:`fit` fits beta-binomial mixtures p₁ and p₂ to the v1 and v2 counts
    (:func:`fit_betabinomial_mixture`), a spline g per model (:func:`fit_accuracy_spline`, Eq. 7-8), and
    integrates ``∫ g(s) p₁(s) ds`` exactly. :meth:`refit` fits the same model to a resample of the fitted
    images, starting from this fit's mixtures, as App. F.1's bootstrap does
    (:func:`shifteval.selection.bootstrap_parametric`).

    Parameters
    ----------
    k : int
        Mixture components (the paper uses 3).
    n_basis : int
        Spline basis functions.
    seed : int or numpy.random.Generator
        Seed of the mixtures' random starts (each mixture starts from ``numpy.random.default_rng(seed)``).

    Attributes
    ----------
    mixture_v1_, mixture_v2_ : BetaBinomialMixture
        The fitted distributions p₁ and p₂ of the true selection frequencies.
    splines_ : list of AccuracySpline
        g for each model (row of ``correct_v2``).
    estimates_ : ndarray
        The selection-adjusted v2 accuracy of each model.
    annotators_v1_, annotators_v2_ : int or ndarray of int64
        Annotators per image of each set (one number, or one per image).
    levels_v1_, levels_v2_ : VoteLevels
        The (count, annotators) pairs of each set's images (:func:`vote_levels`).
    correct_v2_ : ndarray of float, shape (models, n_v2)
        Whether each model classifies each v2 image correctly.

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> s1, s2 = rng.beta(5, 2, 3000), rng.beta(5, 2, 3000)
    >>> correct = rng.random(3000) < s2
    >>> fit = ParametricEstimator(k=2).fit(rng.binomial(10, s1), rng.binomial(10, s2), correct, 10)
    >>> bool(abs(fit.estimates_[0] - correct.mean()) < 0.02), len(fit.splines_)
    (True, 1)
    >>> again = fit.refit(np.arange(3000), np.arange(3000))  # the same images: the same fit
    >>> bool(abs(again.estimates_[0] - fit.estimates_[0]) < 1e-5)
    True
    """

    mixture_v1_: BetaBinomialMixture
    mixture_v2_: BetaBinomialMixture
    splines_: list[AccuracySpline]
    estimates_: np.ndarray
    annotators_v1_: int | np.ndarray
    annotators_v2_: int | np.ndarray
    levels_v1_: VoteLevels
    levels_v2_: VoteLevels
    correct_v2_: np.ndarray

    def __init__(self, k: int = 3, n_basis: int = 8, seed: int | np.random.Generator = 0):
        self.k = k
        self.n_basis = n_basis
        self.seed = seed

    def fit(
        self,
        counts_v1: ArrayLike,
        counts_v2: ArrayLike,
        correct_v2: ArrayLike,
        annotators: int | ArrayLike | tuple,
        init: ParametricEstimator | None = None,
    ) -> ParametricEstimator:
        """Fit both mixtures and every model's spline, and integrate (Engstrom et al. 2020, Eq. (6)).

        Parameters
        ----------
        counts_v1, counts_v2 : array_like of int
            "Yes" votes per image of each set.
        correct_v2 : array_like of bool, shape (n_v2,) or (models, n_v2)
            Whether each model classifies each v2 image correctly.
        annotators : int, array_like, or tuple (annotators_v1, annotators_v2)
            Annotators per image: one number for both sets, or a tuple of one value per set (each a
            number or one entry per image).
        init : ParametricEstimator, optional
            A fitted estimator whose mixtures start this fit's, instead of random starts.

        Returns
        -------
        ParametricEstimator
            ``self``, fitted.

        Raises
        ------
        ValueError
            On counts that are not whole numbers in ``[0, annotators]``, ``correct_v2`` without one
            column per v2 image, or an ``init`` that is not fitted.
        """
        annotators_v1, annotators_v2 = per_set(annotators)
        c1, annotators_v1 = validation.check_votes(counts_v1, annotators_v1, "counts_v1")
        c2, annotators_v2 = validation.check_votes(counts_v2, annotators_v2, "counts_v2")
        f = validation.correctness(correct_v2, len(c2), "correct_v2", "v2 image")
        starts = (None, None) if init is None else (_fitted(init, "init").mixture_v1_, init.mixture_v2_)
        p1 = fit_betabinomial_mixture(c1, annotators_v1, k=self.k, seed=self.seed, init=starts[0])
        p2 = fit_betabinomial_mixture(c2, annotators_v2, k=self.k, seed=self.seed, init=starts[1])
        levels = (vote_levels(c1, annotators_v1), vote_levels(c2, annotators_v2))
        splines = _fit_splines(levels[1], f, p2, int(self.n_basis))
        return _store_fit(self, p1, p2, splines, levels, f, (annotators_v1, annotators_v2))

    def refit(self, rows_v1: ArrayLike, rows_v2: ArrayLike) -> ParametricEstimator:
        """The same model fitted to the images ``rows_v1`` of v1 and ``rows_v2`` of v2 (App. F.1).

        The rows are indices into the fitted images, repeats allowed (a bootstrap draws them with
        replacement); a v2 image keeps its counts, its number of annotators and every model's
        correctness. Both mixtures start from this fit's (quasi-Newton, then EM to convergence if that
        fails), not from random starts: the resampled likelihood's maximum is near the full-sample one.
        Every spline is refitted, with the resampled share of each number of annotators
        (:func:`annotator_shares`).

        Parameters
        ----------
        rows_v1, rows_v2 : array_like of int
            Drawn images of each set.

        Returns
        -------
        ParametricEstimator
            A new fitted estimator (this one is left as it is).

        Raises
        ------
        ValueError
            If this estimator has not been fitted.
        """
        rows = (np.asarray(rows_v1), np.asarray(rows_v2))
        levels = (_fitted(self, "refit").levels_v1_.resample(rows[0]), self.levels_v2_.resample(rows[1]))
        annotators = tuple(
            a[r] if isinstance(a, np.ndarray) else a
            for a, r in zip((self.annotators_v1_, self.annotators_v2_), rows, strict=True)
        )
        k = int(self.k)
        p1, p2 = (
            _fit_levels(pairs, k, None, n_restarts=0, tol=1e-6, max_iter=100, init=start, annotators=a)
            for pairs, start, a in zip(levels, (self.mixture_v1_, self.mixture_v2_), annotators, strict=True)
        )
        f = self.correct_v2_[:, rows[1]]
        splines = _fit_splines(levels[1], f, p2, int(self.n_basis))
        refitted = ParametricEstimator(self.k, self.n_basis, self.seed)
        return _store_fit(refitted, p1, p2, splines, levels, f, annotators)


def _fitted(estimator: ParametricEstimator, role: str) -> ParametricEstimator:
    """``estimator``, checked to be fitted (a ValueError naming ``role`` otherwise)."""
    if not hasattr(estimator, "estimates_"):
        raise ValueError(f"{role} needs a fitted ParametricEstimator; call fit(...) first")
    return estimator


def _store_fit(estimator, p1, p2, splines, levels, correct, annotators) -> ParametricEstimator:
    """Set a :class:`ParametricEstimator`'s fitted attributes; the estimates integrate g against p₁ (Eq. 6)."""
    expectations = p1.basis_expectations(int(estimator.n_basis))
    estimator.mixture_v1_, estimator.mixture_v2_, estimator.splines_ = p1, p2, splines
    estimator.estimates_ = np.array([float(expectations @ g.coef) for g in splines])
    estimator.levels_v1_, estimator.levels_v2_ = levels
    estimator.annotators_v1_, estimator.annotators_v2_ = annotators
    estimator.correct_v2_ = correct
    return estimator
