"""Selection-frequency bias in dataset replication, and estimators that correct for it.

Engstrom, Ilyas, Santurkar, Tsipras, Steinhardt & Mądry (2020), *Identifying Statistical Bias in
Dataset Replication*:

- §2, Eq. (1) and App. C: a toy model of statistic matching with noisy selection frequencies
  (:func:`toy_v2_density`, :func:`simulate_toy_replication`);
- §4, Eq. (2): the decomposition of the v1-v2 accuracy gap (:func:`gap_decomposition`);
- §5.1, Eq. (4): the naive selection-adjusted accuracy (:func:`naive_adjusted_accuracy`);
- §5.2 and App. E: the leave-one-annotator-out jackknife (:func:`jackknife_adjusted_accuracy`);
- §5.3 and App. F: a beta-binomial mixture for the true selection frequencies
  (:func:`fit_betabinomial_mixture`) and a spline model of accuracy given true selection frequency,
  Eq. (6)-(8) (:func:`fit_accuracy_spline`, :func:`parametric_adjusted_accuracy`);
- App. F.1: bootstrap confidence intervals resampling images (:func:`bootstrap_parametric`).

Votes are arrays of shape (images, annotators) with entries 0/1; counts are the number of "yes"
votes per image out of ``n`` annotators.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats
from scipy.interpolate import BSpline
from scipy.special import digamma, gammaln

_LOG_BOUNDS = (np.log(1e-2), np.log(1e4))  # bounds on log alpha, log beta in the M-step


# --- validation ----------------------------------------------------------------------------------


def _check_counts(counts, n_annotators, name="counts"):
    if int(n_annotators) < 1:
        raise ValueError(f"n_annotators must be at least 1, got {n_annotators!r}")
    counts = np.asarray(counts)
    if counts.ndim != 1 or len(counts) == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of vote counts")
    if not np.all(np.isfinite(counts)) or np.any(counts != np.round(counts)):
        raise ValueError(f"{name} must be whole numbers of votes")
    if counts.min() < 0:
        raise ValueError(f"{name} must be non-negative; found {counts.min()}")
    if counts.max() > n_annotators:
        raise ValueError(f"{name} must not exceed n_annotators={n_annotators}; found {counts.max()}")
    return counts.astype(np.int64)


def _check_votes(votes, name):
    votes = np.asarray(votes)
    if votes.ndim != 2 or votes.shape[0] == 0 or votes.shape[1] < 1:
        raise ValueError(f"{name} must be a (images, annotators) array of 0/1 votes, got shape {votes.shape}")
    if not np.isin(votes, (0, 1)).all():
        raise ValueError(f"{name} must contain only 0/1 votes")
    return votes.astype(np.int64)


def _check_correct(correct, n_images, name="correct"):
    correct = np.asarray(correct)
    if correct.ndim == 1:
        correct = correct[None, :]
    if correct.ndim != 2 or correct.shape[1] != n_images:
        raise ValueError(
            f"{name} must have one entry per v2 image ({n_images}); got shape {np.shape(correct)}"
        )
    if not np.isin(correct, (0, 1)).all():
        raise ValueError(f"{name} must be boolean (1 = correctly classified)")
    return correct.astype(float)


# --- the toy model (§2, Eq. 1, App. C) -----------------------------------------------------------


def toy_v2_density(s, alpha: float, beta: float, n: int):
    """Density of true selection frequencies in v2 under the toy model (Engstrom et al. 2020, Eq. (1)).

    Candidates have true frequency ``s ~ Beta(α, β)`` (p_flickr), v1 has ``Beta(α + 1, β)`` (p_1), the
    observed frequency averages ``n`` Bernoulli(s) votes, and a candidate is accepted with probability
    proportional to ``p_1(ŝ) / p_flickr(ŝ)``. Then

        p_2(s) = n / (n + α + β) · Beta(α + 1, β)(s) + (α + β) / (n + α + β) · Beta(α, β)(s),

    which tends to p_flickr as n → 0 and to p_1 as n → ∞.
    """
    if alpha <= 0 or beta <= 0:
        raise ValueError("alpha and beta must be positive")
    if n < 0:
        raise ValueError("n must be non-negative")
    w = n / (n + alpha + beta)
    return w * stats.beta.pdf(s, alpha + 1, beta) + (1 - w) * stats.beta.pdf(s, alpha, beta)


def simulate_toy_replication(alpha: float, beta: float, n: int, n_candidates: int, seed=0):
    """Monte-Carlo version of the toy model: true frequencies of the accepted candidates.

    Draws ``n_candidates`` candidates with ``s ~ Beta(α, β)``, observes ``k ~ Binomial(n, s)`` votes and
    accepts with probability ``p_1(k) / p_flickr(k)`` scaled to at most 1, where both are beta-binomial
    pmfs; that ratio is ``(k + α)(α + β) / (α (n + α + β))``, largest at ``k = n``.
    """
    if n_candidates < 1:
        raise ValueError("n_candidates must be at least 1")
    rng = np.random.default_rng(seed)
    s = rng.beta(alpha, beta, size=n_candidates)
    k = rng.binomial(n, s)
    accept = rng.random(n_candidates) < (k + alpha) / (n + alpha)
    return s[accept]


def toy_l1_distance(samples, alpha: float, beta: float, n: int, bins: int = 40) -> float:
    """L1 distance between a histogram of simulated v2 frequencies and Eq. (1), bin by bin.

    The closed form enters through its exact bin probabilities (differences of Beta CDFs), so the
    distance measures only Monte-Carlo error and any mismatch of the model.
    """
    samples = np.asarray(samples, dtype=float)
    if len(samples) == 0:
        raise ValueError("no samples")
    edges = np.linspace(0, 1, bins + 1)
    w = n / (n + alpha + beta)
    cdf = w * stats.beta.cdf(edges, alpha + 1, beta) + (1 - w) * stats.beta.cdf(edges, alpha, beta)
    observed = np.histogram(samples, edges)[0] / len(samples)
    return float(np.abs(observed - np.diff(cdf)).sum())


# --- naive estimator and jackknife (§5.1, §5.2) --------------------------------------------------


def naive_adjusted_accuracy(counts_v1, counts_v2, correct_v2, n_annotators: int):
    """Naive selection-adjusted v2 accuracy (Engstrom et al. 2020, Eq. (4)).

    ``Σ_k E[f(x₂) | ŝ(x₂) = k/n] · p₁(ŝ = k/n)``: v2 accuracy per observed-frequency level, weighted by
    v1's distribution of observed frequencies. Levels that no v2 image takes carry no information
    about v2 accuracy; their v1 weight is dropped and the remaining weights renormalised.

    Parameters
    ----------
    counts_v1, counts_v2 : array_like of int
        "Yes" votes per image, out of ``n_annotators``.
    correct_v2 : array_like of bool, shape (n_v2,) or (models, n_v2)
        Whether each model classifies each v2 image correctly.

    Returns
    -------
    float or ndarray
        One estimate per model (a float for a 1-D ``correct_v2``).
    """
    c1 = _check_counts(counts_v1, n_annotators, "counts_v1")
    c2 = _check_counts(counts_v2, n_annotators, "counts_v2")
    single = np.ndim(correct_v2) == 1
    f = _check_correct(correct_v2, len(c2), "correct_v2")
    levels = n_annotators + 1
    p1 = np.bincount(c1, minlength=levels) / len(c1)
    n2 = np.bincount(c2, minlength=levels)
    hits = np.stack([np.bincount(c2, weights=row, minlength=levels) for row in f])
    seen = n2 > 0
    cond = hits[:, seen] / n2[seen]
    est = cond @ (p1[seen] / p1[seen].sum())
    return float(est[0]) if single else est


def naive_by_annotators(votes_v1, votes_v2, correct_v2, sizes):
    """The naive estimator using only the first ``m`` annotators, for each ``m`` in ``sizes``.

    Engstrom et al. (2020), Figure 5 and App. E (Figure 12): the estimate against 1/m shows the bias
    shrinking as annotators are added.
    """
    v1, v2 = _check_votes(votes_v1, "votes_v1"), _check_votes(votes_v2, "votes_v2")
    out = []
    for m in sizes:
        if not 1 <= m <= min(v1.shape[1], v2.shape[1]):
            raise ValueError(f"annotator count {m} outside 1..{min(v1.shape[1], v2.shape[1])}")
        out.append(naive_adjusted_accuracy(v1[:, :m].sum(1), v2[:, :m].sum(1), correct_v2, m))
    return np.asarray(out)


@dataclass(frozen=True)
class JackknifeResult:
    """Leave-one-annotator-out jackknife of the naive estimator (per model)."""

    naive: np.ndarray
    corrected: np.ndarray
    bias: np.ndarray
    std_error: np.ndarray


def jackknife_adjusted_accuracy(votes_v1, votes_v2, correct_v2) -> JackknifeResult:
    """Exact leave-one-annotator-out jackknife of the naive estimator (Engstrom et al. 2020, §5.2).

    With θ_n the n-annotator estimate and θ⁽ⁱ⁾ the estimate without annotator i,
    ``bias = (n − 1)(mean_i θ⁽ⁱ⁾ − θ_n)``, ``corrected = θ_n − bias`` and the jackknife standard error
    ``sqrt((n − 1)/n · Σ_i (θ⁽ⁱ⁾ − mean θ⁽ⁱ⁾)²)`` (Efron & Tibshirani 1994). Every annotator is left out
    once — not a random subsample of leave-outs. Both vote arrays need the same number of annotators.
    """
    v1, v2 = _check_votes(votes_v1, "votes_v1"), _check_votes(votes_v2, "votes_v2")
    if v1.shape[1] != v2.shape[1]:
        raise ValueError(f"votes_v1 has {v1.shape[1]} annotators but votes_v2 has {v2.shape[1]}")
    n = v1.shape[1]
    if n < 2:
        raise ValueError("the jackknife needs at least 2 annotators per image")
    f = _check_correct(correct_v2, len(v2), "correct_v2")
    full = naive_adjusted_accuracy(v1.sum(1), v2.sum(1), f, n)
    c1, c2 = v1.sum(1), v2.sum(1)
    loo = np.stack([naive_adjusted_accuracy(c1 - v1[:, i], c2 - v2[:, i], f, n - 1) for i in range(n)])
    mean = loo.mean(axis=0)
    bias = (n - 1) * (mean - full)
    se = np.sqrt((n - 1) / n * ((loo - mean) ** 2).sum(axis=0))
    return JackknifeResult(naive=full, corrected=full - bias, bias=bias, std_error=se)


# --- beta-binomial mixture (§5.3, App. F) ---------------------------------------------------------


@dataclass(frozen=True)
class BetaBinomialMixture:
    """A mixture of beta distributions for true selection frequencies, fitted through binomial votes."""

    weights: np.ndarray
    alphas: np.ndarray
    betas: np.ndarray
    loglik: float
    n_annotators: int
    n_iter: int
    converged: bool

    @property
    def means(self) -> np.ndarray:
        """Mean of each beta component."""
        return self.alphas / (self.alphas + self.betas)

    def pdf(self, s):
        """Mixture density of the true selection frequency at ``s``."""
        s = np.asarray(s, dtype=float)
        return sum(
            w * stats.beta.pdf(s, a, b)
            for w, a, b in zip(self.weights, self.alphas, self.betas, strict=False)
        )

    def pmf(self, k):
        """Implied probability of ``k`` "yes" votes out of ``n_annotators``."""
        k = np.asarray(k)
        return sum(
            w * stats.betabinom.pmf(k, self.n_annotators, a, b)
            for w, a, b in zip(self.weights, self.alphas, self.betas, strict=False)
        )


def _component_loglik(levels, n, log_a, log_b):
    """Beta-binomial log-pmf at every count level; equals ``scipy.stats.betabinom.logpmf`` (tested)."""
    a, b = np.exp(log_a), np.exp(log_b)
    const = gammaln(n + 1) - gammaln(levels + 1) - gammaln(n - levels + 1)
    return (
        const
        + gammaln(levels + a)
        + gammaln(n - levels + b)
        - gammaln(n + a + b)
        - gammaln(a)
        - gammaln(b)
        + gammaln(a + b)
    )


def _m_step(levels, n, weights_k, log_ab):
    """Weighted beta-binomial MLE on the n + 1 distinct counts, log-parameterized and bounded.

    The gradient is analytic (digamma functions), so L-BFGS-B needs no finite differences.
    """
    total = weights_k.sum()

    def neg(theta):
        a, b = np.exp(theta)
        ll = np.dot(weights_k, _component_loglik(levels, n, theta[0], theta[1]))
        common = total * (digamma(a + b) - digamma(n + a + b))
        da = np.dot(weights_k, digamma(levels + a)) - total * digamma(a) + common
        db = np.dot(weights_k, digamma(n - levels + b)) - total * digamma(b) + common
        return -ll, -np.array([da * a, db * b])

    res = optimize.minimize(neg, log_ab, jac=True, method="L-BFGS-B", bounds=[_LOG_BOUNDS, _LOG_BOUNDS])
    return res.x


def fit_betabinomial_mixture(
    counts, n_annotators: int, k: int = 3, seed=0, n_restarts: int = 4, tol: float = 1e-6, max_iter: int = 100
) -> BetaBinomialMixture:
    """Maximum-likelihood mixture of ``k`` beta-binomials for vote counts, by EM (Engstrom et al. 2020, App. F).

    Each item's count is modelled as ``k_i ~ BetaBinomial(n, α_j, β_j)`` for a latent component j of
    weight γ_j. Differences from the released code, which runs 200 EM rounds with an unbounded M-step:
    the E- and M-steps work on the n + 1 distinct count values with their (responsibility-weighted)
    multiplicities — the likelihood depends on the data only through them — the M-step maximises over
    (log α, log β) within bounds [1e-2, 1e4] with L-BFGS-B and an analytic gradient, iterations stop when
    the log-likelihood improves by less than ``tol`` (relative) or after ``max_iter`` rounds, and the best
    of ``n_restarts`` short random starts (10 rounds each) is continued. EM then hands its solution to
    one L-BFGS-B run on the full mixture likelihood (same bounds), which removes EM's slow final crawl;
    the result is kept only if it does not lower the likelihood.

    Parameters
    ----------
    counts : array_like of int
        "Yes" votes per item, 0 <= count <= n_annotators.
    n_annotators : int
    k : int
        Number of mixture components (>= 1; the paper uses 3).
    seed : int or numpy.random.Generator
        Seed of the random starts.

    Returns
    -------
    BetaBinomialMixture
        Components sorted by mean.
    """
    counts = _check_counts(counts, n_annotators)
    if int(k) < 1:
        raise ValueError(f"k must be at least 1, got {k!r}")
    n = int(n_annotators)
    levels = np.arange(n + 1)
    hist = np.bincount(counts, minlength=n + 1).astype(float)
    rng = np.random.default_rng(seed)

    def em(weights, log_ab, iterations):
        prev, loglik, converged, it = -np.inf, -np.inf, False, 0
        for _ in range(iterations):
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

    # short runs from several random starts, then the best one continues to convergence
    starts = []
    for _ in range(max(1, int(n_restarts))):
        weights = rng.dirichlet(np.full(k, 5.0))
        means = np.sort(rng.uniform(0.1, 0.9, k))
        conc = rng.uniform(2, 20, k)
        log_ab = np.log(np.stack([means * conc, (1 - means) * conc], axis=1))
        starts.append(em(weights, log_ab, 10))
    best = max(starts, key=lambda r: r[0])
    loglik, weights, log_ab, it, converged = best if best[4] else em(best[1], best[2], max_iter)
    # EM crawls near the optimum; a final quasi-Newton step on the full likelihood, started from the
    # EM solution and within the same bounds, polishes it (it never lowers the likelihood).
    *polished, polish_ok = _polish(levels, n, hist, weights, log_ab)
    if polished[0] >= loglik:
        loglik, weights, log_ab = polished
        converged = converged or polish_ok
    alphas, betas = np.exp(log_ab[:, 0]), np.exp(log_ab[:, 1])
    order = np.argsort(alphas / (alphas + betas))
    return BetaBinomialMixture(weights[order], alphas[order], betas[order], loglik, n, it, converged)


def _polish(levels, n, hist, weights, log_ab):
    k = len(weights)

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


# --- spline model of accuracy given true selection frequency (§5.3, Eq. 6-8) ---------------------


def _bspline_basis(s, n_basis: int):
    degree = 3
    inner = np.linspace(0, 1, n_basis - degree + 1)
    knots = np.concatenate([[0] * degree, inner, [1] * degree])
    return np.stack(
        [BSpline(knots, np.eye(n_basis)[b], degree, extrapolate=False)(s) for b in range(n_basis)], axis=1
    )


@dataclass(frozen=True)
class AccuracySpline:
    """g(s) = P(correct | true selection frequency s), a cubic B-spline with coefficients in [0, 1]."""

    coef: np.ndarray

    def __call__(self, s):
        """Accuracy at true frequency ``s`` (clipped to [0, 1])."""
        s = np.clip(np.asarray(s, dtype=float), 0, 1)
        return np.nan_to_num(_bspline_basis(np.atleast_1d(s), len(self.coef))) @ self.coef


_GRID = np.linspace(0.0005, 0.9995, 1000)


def fit_accuracy_spline(counts_v2, correct_v2, n_annotators: int, p2: BetaBinomialMixture, n_basis: int = 8):
    """Fit g(s) for each model from noisy counts (Engstrom et al. 2020, Eq. (7)-(8)).

    Eq. (7): ``P(f = 1, ŝ = k/n) = ∫ g(s) Binom(k; n, s) p₂(s) ds``. With g a cubic B-spline
    ``Σ_b ω_b B_b(s)``, the right side is linear in ω; ω is fitted by least squares to the observed
    joint frequencies (Eq. 8) under 0 <= ω_b <= 1, which keeps 0 <= g <= 1 (a B-spline lies in the
    convex hull of its coefficients). Uses ``scipy.optimize.lsq_linear``.

    Returns
    -------
    list of AccuracySpline
        One per model (row of ``correct_v2``).
    """
    c2 = _check_counts(counts_v2, n_annotators, "counts_v2")
    f = _check_correct(correct_v2, len(c2), "correct_v2")
    n = int(n_annotators)
    basis = np.nan_to_num(_bspline_basis(_GRID, n_basis))  # grid x basis
    lik = stats.binom.pmf(np.arange(n + 1)[None, :], n, _GRID[:, None])  # grid x levels
    ds = _GRID[1] - _GRID[0]
    design = (lik * p2.pdf(_GRID)[:, None]).T @ basis * ds  # levels x basis
    fits = []
    for row in f:
        joint = np.bincount(c2, weights=row, minlength=n + 1) / len(c2)
        res = optimize.lsq_linear(design, joint, bounds=(0, 1))
        fits.append(AccuracySpline(res.x))
    return fits


def parametric_adjusted_accuracy(
    counts_v1, counts_v2, correct_v2, n_annotators: int, k: int = 3, n_basis: int = 8, seed=0
):
    """Selection-adjusted v2 accuracy by the parametric model (Engstrom et al. 2020, §5.3, Eq. (6)).

    Fits beta-binomial mixtures p₁ and p₂ to the v1 and v2 counts, a spline g per model, and
    integrates ``∫ g(s) p₁(s) ds`` numerically.

    Returns
    -------
    estimates : ndarray, one per model
    fitted : dict with ``p1``, ``p2`` (BetaBinomialMixture) and ``g`` (list of AccuracySpline)
    """
    c1 = _check_counts(counts_v1, n_annotators, "counts_v1")
    c2 = _check_counts(counts_v2, n_annotators, "counts_v2")
    p1 = fit_betabinomial_mixture(c1, n_annotators, k=k, seed=seed)
    p2 = fit_betabinomial_mixture(c2, n_annotators, k=k, seed=seed)
    g = fit_accuracy_spline(c2, correct_v2, n_annotators, p2, n_basis=n_basis)
    w = p1.pdf(_GRID)
    w = w / w.sum()
    est = np.array([float(gi(_GRID) @ w) for gi in g])
    return est, {"p1": p1, "p2": p2, "g": g}


def bootstrap_parametric(
    counts_v1, counts_v2, correct_v2, n_annotators: int, n_boot: int = 100, ci: float = 0.95, seed=0, **kwargs
):
    """Percentile bootstrap interval of the parametric estimate, resampling images (App. F.1).

    v1 and v2 images are resampled with replacement independently (a v2 image keeps its counts and
    every model's correctness). Returns ``(low, high)`` arrays, one entry per model.
    """
    c1 = _check_counts(counts_v1, n_annotators, "counts_v1")
    c2 = _check_counts(counts_v2, n_annotators, "counts_v2")
    f = _check_correct(correct_v2, len(c2), "correct_v2")
    rng = np.random.default_rng(seed)
    draws = []
    for _b in range(int(n_boot)):
        i1 = rng.integers(0, len(c1), len(c1))
        i2 = rng.integers(0, len(c2), len(c2))
        est, _ = parametric_adjusted_accuracy(
            c1[i1], c2[i2], f[:, i2], n_annotators, seed=int(rng.integers(2**31)), **kwargs
        )
        draws.append(est)
    draws = np.asarray(draws)
    return tuple(np.quantile(draws, [(1 - ci) / 2, (1 + ci) / 2], axis=0))


def gap_decomposition(acc_v1, acc_v2, adjusted_v2) -> dict:
    """Engstrom et al. (2020), Eq. (2): accuracy gap = bias-corrected gap + selection gap.

    ``acc_v1 − acc_v2 = (acc_v1 − adjusted_v2) + (adjusted_v2 − acc_v2)`` (the finite-sample term is
    treated as zero, as in the paper).
    """
    acc_v1, acc_v2, adjusted_v2 = (np.asarray(v, dtype=float) for v in (acc_v1, acc_v2, adjusted_v2))
    return {
        "accuracy_gap": acc_v1 - acc_v2,
        "bias_corrected_gap": acc_v1 - adjusted_v2,
        "selection_gap": adjusted_v2 - acc_v2,
    }


def true_adjusted_accuracy(s_v1, s_v2, correct_v2, bins: int = 20):
    """Ground-truth selection-adjusted accuracy from *true* selection frequencies (Eq. 3).

    Only a simulated world knows ``s``. v2 accuracy per bin of true s, weighted by v1's distribution of
    true s over the same bins (bins v2 leaves empty drop out, weights renormalised).
    """
    s_v1, s_v2 = np.asarray(s_v1, float), np.asarray(s_v2, float)
    f = _check_correct(correct_v2, len(s_v2), "correct_v2")
    edges = np.linspace(0, 1, bins + 1)
    b1 = np.clip(np.digitize(s_v1, edges) - 1, 0, bins - 1)
    b2 = np.clip(np.digitize(s_v2, edges) - 1, 0, bins - 1)
    p1 = np.bincount(b1, minlength=bins) / len(b1)
    n2 = np.bincount(b2, minlength=bins)
    seen = n2 > 0
    cond = np.stack([np.bincount(b2, weights=row, minlength=bins)[seen] / n2[seen] for row in f])
    return cond @ (p1[seen] / p1[seen].sum())
