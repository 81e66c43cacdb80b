"""The parametric estimator of selection-adjusted accuracy (Engstrom et al. 2020, §5.3 and App. F).

- a mixture of beta distributions for the true selection frequencies, fitted through the
  beta-binomial likelihood of the votes by EM (:func:`fit_betabinomial_mixture`, App. F);
- a cubic B-spline ``g(s) = P(correct | s)`` fitted through Eq. (7)-(8) (:func:`fit_accuracy_spline`);
- exact integrals of the spline against the mixtures, for ``∫ g(s) p₁(s) ds`` (Eq. 6), which
  :func:`shifteval.selection.parametric_adjusted_accuracy` and its bootstrap use.

Every integral against a beta density is exact: a cubic B-spline is a cubic polynomial between knots,
and ``∫ sʲ Beta(s; α, β) ds`` over an interval is a difference of regularized incomplete beta
functions. Each item may have its own number of votes: ``n_annotators`` is one number or an array with
one entry per item (for two sets, a tuple of two such values).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special, stats
from scipy.interpolate import BSpline, PPoly

from ..utils import validation

_LOG_BOUNDS = (np.log(1e-2), np.log(1e4))  # bounds on log alpha, log beta in the M-step
_DEGREE = 3  # cubic splines
_MASS_TOL = 1e-8  # how far the basis expectations under a beta density may sum from 1


def per_set(n_annotators: int | ArrayLike | tuple) -> tuple:
    """Split ``n_annotators`` into (v1, v2) values: one value for both, or a tuple ``(n_v1, n_v2)``.

    Parameters
    ----------
    n_annotators : int, array_like or tuple
        Votes per image: one number or per-image array for both sets, or a pair ``(n_v1, n_v2)``.

    Returns
    -------
    tuple
        ``(n_v1, n_v2)``.

    Raises
    ------
    ValueError
        If ``n_annotators`` is a tuple of other than two entries.

    Examples
    --------
    >>> per_set(40)
    (40, 40)
    >>> per_set(([10, 12], [11]))
    ([10, 12], [11])
    """
    if isinstance(n_annotators, tuple):
        if len(n_annotators) != 2:
            raise ValueError(f"n_annotators as a tuple must be (n_v1, n_v2), got {len(n_annotators)} entries")
        return n_annotators
    return n_annotators, n_annotators


def vote_levels(counts: NDArray[np.int64], n: int | NDArray[np.int64]) -> tuple:
    """The distinct (count, n) pairs, each pair's number of items, and each item's pair.

    The likelihoods of this module depend on the votes only through these pairs; with one ``n`` for
    every item (one number, or an array whose entries are all equal) the pairs are all ``n + 1`` count
    values (empty ones included), so equal per-item numbers take exactly the scalar path.

    Parameters
    ----------
    counts : ndarray of int
        Positive votes of each item.
    n : int or ndarray of int
        Votes of every item, or of each item.

    Returns
    -------
    levels, n_levels : ndarray of int64
        Count and number of votes of each pair.
    hist : ndarray of float
        Items per pair.
    index : ndarray of int64
        Each item's pair.

    Examples
    --------
    >>> levels, n, hist, index = vote_levels(np.array([2, 0, 2]), np.array([2, 3, 2]))
    >>> levels.tolist(), n.tolist(), hist.tolist(), index.tolist()
    ([0, 2], [3, 2], [1.0, 2.0], [1, 0, 1])
    """
    per_item = np.asarray(n)
    if per_item.ndim > 0 and len(per_item) and np.all(per_item == per_item[0]):  # one n: the scalar path
        per_item = per_item[0]
    if per_item.ndim == 0:
        m = int(per_item)
        levels = np.arange(m + 1)
        return levels, np.full(m + 1, m), np.bincount(counts, minlength=m + 1).astype(float), counts
    pairs, index, hist = np.unique(
        np.stack([counts, per_item]), axis=1, return_inverse=True, return_counts=True
    )
    return pairs[0], pairs[1], hist.astype(float), index.ravel()


# --- beta-binomial mixture (§5.3, App. F) ---------------------------------------------------------


@dataclass(frozen=True)
class BetaBinomialMixture:
    """A mixture of beta distributions for true selection frequencies, fitted through binomial votes."""

    weights: np.ndarray
    alphas: np.ndarray
    betas: np.ndarray
    loglik: float
    n_annotators: int | np.ndarray
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

    def pmf(self, k: ArrayLike, n: int | ArrayLike | None = None) -> np.ndarray:
        """Implied probability of ``k`` "yes" votes out of ``n`` (default: the fitted ``n_annotators``)."""
        n = self.n_annotators if n is None else n
        return sum(
            w * stats.betabinom.pmf(k, n, a, b)
            for w, a, b in zip(self.weights, self.alphas, self.betas, strict=True)
        )

    def basis_expectations(self, n_basis: int) -> np.ndarray:
        """``E[B_b(S)]`` under the mixture for each cubic B-spline basis function (exact)."""
        return self.weights @ beta_basis_expectations(self.alphas, self.betas, n_basis)


def _component_loglik(levels, n, log_a, log_b):
    """Beta-binomial log-pmf at every count level; equals ``scipy.stats.betabinom.logpmf`` (tested)."""
    a, b = np.exp(log_a), np.exp(log_b)
    const = special.gammaln(n + 1) - special.gammaln(levels + 1) - special.gammaln(n - levels + 1)
    return (
        const
        + special.gammaln(levels + a)
        + special.gammaln(n - levels + b)
        - special.gammaln(n + a + b)
        - special.gammaln(a)
        - special.gammaln(b)
        + special.gammaln(a + b)
    )


def _m_step(levels, n, weights_k, log_ab):
    """Weighted beta-binomial MLE on the distinct (count, n) pairs, log-parameterized and bounded.

    The gradient is analytic (digamma functions), so L-BFGS-B needs no finite differences.
    """
    total = weights_k.sum()
    digamma = special.digamma

    def neg(theta):
        a, b = np.exp(theta)
        ll = np.dot(weights_k, _component_loglik(levels, n, theta[0], theta[1]))
        common = np.dot(weights_k, digamma(a + b) - digamma(n + a + b))
        da = np.dot(weights_k, digamma(levels + a)) - total * digamma(a) + common
        db = np.dot(weights_k, digamma(n - levels + b)) - total * digamma(b) + common
        return -ll, -np.array([da * a, db * b])

    res = optimize.minimize(neg, log_ab, jac=True, method="L-BFGS-B", bounds=[_LOG_BOUNDS, _LOG_BOUNDS])
    return res.x


def _em(levels, n, hist, weights, log_ab, iterations, tol):
    k = len(weights)
    prev, loglik, converged, it = -np.inf, -np.inf, False, 0
    for it in range(1, iterations + 1):  # noqa: B007 (the count is returned)
        comp = np.stack([_component_loglik(levels, n, *log_ab[j]) for j in range(k)])
        comp += np.log(np.maximum(weights, 1e-300))[:, None]
        mix = np.logaddexp.reduce(comp, axis=0)  # log p(count level)
        loglik = float(np.dot(hist, mix))
        if loglik - prev <= tol * abs(loglik):
            converged = True
            break
        prev = loglik
        resp = np.exp(comp - mix[None, :]) * hist[None, :]  # component x level, times multiplicity
        weights = resp.sum(axis=1) / hist.sum()
        log_ab = np.stack([_m_step(levels, n, resp[j], log_ab[j]) for j in range(k)])
    return loglik, weights, log_ab, it, converged


def _polish(levels, n, hist, weights, log_ab):
    """One L-BFGS-B run on the full mixture likelihood (weights as softmax logits), analytic gradient."""
    k = len(weights)
    digamma = special.digamma

    def neg(theta):
        logits, la, lb = theta[:k], theta[k : 2 * k], theta[2 * k :]
        logw = logits - np.logaddexp.reduce(logits)
        comp = np.stack([_component_loglik(levels, n, la[j], lb[j]) for j in range(k)]) + logw[:, None]
        mix = np.logaddexp.reduce(comp, axis=0)
        resp = np.exp(comp - mix[None, :]) * hist[None, :]
        a, b = np.exp(la)[:, None], np.exp(lb)[:, None]
        common = digamma(a + b) - digamma(n + a + b)
        da = (resp * (digamma(levels[None, :] + a) - digamma(a) + common)).sum(1) * a[:, 0]
        db = (resp * (digamma(n - levels[None, :] + b) - digamma(b) + common)).sum(1) * b[:, 0]
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


def _fit_levels(levels, n, hist, k, rng, n_restarts, tol, max_iter, init, n_annotators):
    if init is not None:  # the bootstrap starts at the full-sample fit: quasi-Newton from there
        if len(init.weights) != k:
            raise ValueError(f"init has {len(init.weights)} components, expected k={k}")
        start = (init.weights, np.log(np.stack([init.alphas, init.betas], axis=1)))
        loglik, weights, log_ab, ok = _polish(levels, n, hist, *start)
        if ok:
            return _sorted_mixture(loglik, weights, log_ab, n_annotators, 0, True)
        loglik, weights, log_ab, it, converged = _em(levels, n, hist, *start, max_iter, tol)
    else:  # short runs from several random starts, then the best one continues to convergence
        starts = []
        for _ in range(max(1, int(n_restarts))):
            weights = rng.dirichlet(np.full(k, 5.0))
            means = np.sort(rng.uniform(0.1, 0.9, k))
            conc = rng.uniform(2, 20, k)
            log_ab = np.log(np.stack([means * conc, (1 - means) * conc], axis=1))
            starts.append(_em(levels, n, hist, weights, log_ab, 10, tol))
        best = max(starts, key=lambda r: r[0])
        loglik, weights, log_ab, it, converged = (
            best if best[4] else _em(levels, n, hist, best[1], best[2], max_iter, tol)
        )
    # EM crawls near the optimum; a final quasi-Newton step on the full likelihood, started from the
    # EM solution and within the same bounds, polishes it (kept only if it does not lower the likelihood).
    *polished, polish_ok = _polish(levels, n, hist, weights, log_ab)
    if polished[0] >= loglik:
        loglik, weights, log_ab = polished
        converged = converged or polish_ok
    return _sorted_mixture(loglik, weights, log_ab, n_annotators, it, converged)


def _sorted_mixture(loglik, weights, log_ab, n_annotators, it, converged):
    alphas, betas = np.exp(log_ab[:, 0]), np.exp(log_ab[:, 1])
    order = np.argsort(alphas / (alphas + betas))
    return BetaBinomialMixture(
        weights[order], alphas[order], betas[order], loglik, n_annotators, it, converged
    )


def fit_betabinomial_mixture(
    counts: ArrayLike,
    n_annotators: int | ArrayLike,
    k: int = 3,
    seed: int | np.random.Generator = 0,
    n_restarts: int = 4,
    tol: float = 1e-6,
    max_iter: int = 100,
    init: BetaBinomialMixture | None = None,
) -> BetaBinomialMixture:
    """Maximum-likelihood mixture of ``k`` beta-binomials for vote counts, by EM (Engstrom et al. 2020, App. F).

    Each item's count is modelled as ``k_i ~ BetaBinomial(n_i, α_j, β_j)`` for a latent component j of
    weight γ_j. Differences from the released code, which runs 200 EM rounds with an unbounded M-step:
    the E- and M-steps work on the distinct (count, n) pairs with their (responsibility-weighted)
    multiplicities — the likelihood depends on the data only through them — the M-step maximises over
    (log α, log β) within bounds [1e-2, 1e4] with L-BFGS-B and an analytic gradient, iterations stop when
    the log-likelihood improves by less than ``tol`` (relative) or after ``max_iter`` rounds, and the best
    of ``n_restarts`` short random starts (10 rounds each) is continued. EM then hands its solution to
    one L-BFGS-B run on the full mixture likelihood (same bounds), which removes EM's slow final crawl;
    the result is kept only if it does not lower the likelihood.

    Parameters
    ----------
    counts : array_like of int
        "Yes" votes per item, ``0 <= counts[i] <= n_i``.
    n_annotators : int or array_like of int
        Votes per item: one number for all items, or one per item.
    k : int
        Number of mixture components (>= 1; the paper uses 3).
    seed : int or numpy.random.Generator
        Seed of the random starts.
    n_restarts, tol, max_iter : int, float, int
        Random starts, relative convergence tolerance of EM, and its largest number of rounds.
    init : BetaBinomialMixture, optional
        Start EM from this solution instead of random starts (used by :func:`bootstrap_parametric`).

    Returns
    -------
    BetaBinomialMixture
        Components sorted by mean.

    Raises
    ------
    ValueError
        On counts that are not whole numbers in ``[0, n_i]``, or ``k < 1``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = np.where(rng.random(4000) < 0.3, rng.beta(2, 8, 4000), rng.beta(9, 2, 4000))
    >>> mix = fit_betabinomial_mixture(rng.binomial(20, s), 20, k=2)
    >>> np.round(mix.weights, 1).tolist(), np.round(mix.means, 1).tolist()
    ([0.3, 0.7], [0.2, 0.8])
    """
    counts, n = validation.vote_counts(counts, n_annotators)
    if int(k) < 1:
        raise ValueError(f"k must be at least 1, got {k!r}")
    levels, n_levels, hist, _ = vote_levels(counts, n)
    rng = np.random.default_rng(seed)
    return _fit_levels(levels, n_levels, hist, int(k), rng, n_restarts, tol, max_iter, init, n)


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


def n_shares(n_levels: ArrayLike, hist: ArrayLike) -> np.ndarray:
    """Each (count, n) pair's ``P(n)``: the share of the items whose number of votes is that pair's ``n``.

    Parameters
    ----------
    n_levels : array_like of int
        Number of votes of each pair (from :func:`vote_levels`).
    hist : array_like of float
        Items per pair.

    Returns
    -------
    ndarray of float, one share per pair (all ones when every item has the same ``n``).

    Examples
    --------
    >>> n_shares([20, 20, 21], [1.0, 2.0, 1.0]).tolist()
    [0.75, 0.75, 0.25]
    """
    n_levels, hist = np.asarray(n_levels), np.asarray(hist, dtype=float)
    _, inverse = np.unique(n_levels, return_inverse=True)
    per_n = np.bincount(inverse.ravel(), weights=hist)
    return per_n[inverse.ravel()] / hist.sum()


def _design(levels, n, p2: BetaBinomialMixture, n_basis: int, share=None):
    """Eq. (7) as a matrix: ``P(ŝ = k/n, basis b) = P(n) ∫ B_b(s) Binom(k; n, s) p₂(s) ds`` per (count, n) pair.

    For one component, ``Binom(k; n, s) Beta(s; α, β) = BetaBinom(k; n, α, β) · Beta(s; α + k, β + n − k)``.
    With per-item vote numbers the observed joint frequencies sum to one over *all* pairs, so each pair's
    row is weighted by its ``n``'s share ``P(n)`` of the items (``share``, see :func:`n_shares`; ``None``
    for one ``n``); without it the fit shrinks g by about one over the number of distinct ``n``.
    """
    rows = np.zeros((len(levels), n_basis))
    for w, a, b in zip(p2.weights, p2.alphas, p2.betas, strict=True):
        pmf = np.exp(_component_loglik(levels, n, np.log(a), np.log(b)))
        rows += w * pmf[:, None] * beta_basis_expectations(a + levels, b + n - levels, n_basis)
    return rows if share is None else rows * np.asarray(share, dtype=float)[:, None]


def _fit_splines(design, index, n_levels, f):
    joint = np.stack([np.bincount(index, weights=row, minlength=n_levels) for row in f]) / f.shape[1]
    return [AccuracySpline(optimize.lsq_linear(design, row, bounds=(0, 1), method="bvls").x) for row in joint]


def fit_accuracy_spline(
    counts_v2: ArrayLike,
    correct_v2: ArrayLike,
    n_annotators: int | ArrayLike,
    p2: BetaBinomialMixture,
    n_basis: int = 8,
) -> list[AccuracySpline]:
    """Fit g(s) for each model from noisy counts (Engstrom et al. 2020, Eq. (7)-(8)).

    Eq. (7): ``P(f = 1, ŝ = k/n) = ∫ g(s) Binom(k; n, s) p₂(s) ds``; with a per-image number of votes
    the right side is multiplied by ``P(n)``, the share of v2's images with ``n`` votes. With g a cubic B-spline
    ``Σ_b ω_b B_b(s)``, the right side is linear in ω (its entries are computed exactly, see
    :func:`beta_basis_expectations`); ω is fitted by least squares to the observed joint frequencies
    (Eq. 8) under 0 <= ω_b <= 1, which keeps 0 <= g <= 1 (a B-spline lies in the convex hull of its
    coefficients). Uses ``scipy.optimize.lsq_linear``.

    Parameters
    ----------
    counts_v2 : array_like of int
        "Yes" votes per v2 image.
    correct_v2 : array_like of bool, shape (n_v2,) or (models, n_v2)
    n_annotators : int or array_like of int
        Votes per image (one number, or one per image).
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
    c2, n = validation.vote_counts(counts_v2, n_annotators, "counts_v2")
    f = validation.correctness(correct_v2, len(c2), "correct_v2", "v2 image")
    levels, n_levels, hist, index = vote_levels(c2, n)
    design = _design(levels, n_levels, p2, int(n_basis), n_shares(n_levels, hist))
    return _fit_splines(design, index, len(levels), f)
