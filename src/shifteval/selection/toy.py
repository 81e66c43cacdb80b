"""The toy model of statistic matching with noisy selection frequencies (Engstrom et al. 2020, §2, App. C).

Candidates have true selection frequency ``s ~ Beta(α, β)``, the original test set ``Beta(α + 1, β)``;
matching on the average of the noisy votes of ``n`` annotators per candidate leaves the replication
between the two (Eq. 1).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

# --- the toy model (§2, Eq. 1, App. C) -----------------------------------------------------------


def toy_v2_density(s: ArrayLike, alpha: float, beta: float, annotators: int) -> np.ndarray:
    """Density of true selection frequencies in v2 under the toy model (Engstrom et al. 2020, Eq. (1)).

    Candidates have true frequency ``s ~ Beta(α, β)`` (p_flickr), v1 has ``Beta(α + 1, β)`` (p_1), the
    observed frequency averages the Bernoulli(s) votes of ``n = annotators`` annotators, and a candidate is accepted with probability
    proportional to ``p_1(ŝ) / p_flickr(ŝ)``. Then

        p_2(s) = n / (n + α + β) · Beta(α + 1, β)(s) + (α + β) / (n + α + β) · Beta(α, β)(s),

    which tends to p_flickr as n → 0 and to p_1 as n → ∞.

    Parameters
    ----------
    s : array_like
        True selection frequencies in [0, 1] at which to evaluate the density.
    alpha, beta : float
        Beta parameters of the candidates' true frequencies (both positive).
    annotators : int
        Annotators per candidate, whose votes average into its observed frequency (non-negative).

    Returns
    -------
    ndarray
        The density p_2 at ``s`` (a 0-d array for a scalar ``s``).

    Raises
    ------
    ValueError
        If ``alpha`` or ``beta`` is not positive, or ``annotators`` is negative.

    Examples
    --------
    With α = β = 1 and n = 2 the weight is 1/2, so p_2(s) = s + 1/2:

    >>> [round(float(toy_v2_density(0.9, 1.0, 1.0, n)), 3) for n in (2, 0)]
    [1.4, 1.0]
    """
    if alpha <= 0 or beta <= 0:
        raise ValueError("alpha and beta must be positive")
    if annotators < 0:
        raise ValueError("annotators must be non-negative")
    w = annotators / (annotators + alpha + beta)
    return w * stats.beta.pdf(s, alpha + 1, beta) + (1 - w) * stats.beta.pdf(s, alpha, beta)


def simulate_toy_replication(
    alpha: float, beta: float, annotators: int, n_candidates: int, seed: int | np.random.Generator = 0
) -> np.ndarray:
    """Monte-Carlo version of the toy model: true frequencies of the accepted candidates.

    Draws ``n_candidates`` candidates with ``s ~ Beta(α, β)``, observes ``k ~ Binomial(n, s)`` positive
    votes of ``n = annotators`` annotators and accepts with probability ``p_1(k) / p_flickr(k)`` scaled to
    at most 1, where both are beta-binomial pmfs; that ratio is ``(k + α)(α + β) / (α (n + α + β))``, largest at ``k = n``.

    Parameters
    ----------
    alpha, beta : float
        Beta parameters of the candidates' true frequencies.
    annotators : int
        Annotators per candidate.
    n_candidates : int
        Number of candidates drawn (at least 1).
    seed : int or Generator, default 0
        Seed of (or generator for) every random draw.

    Returns
    -------
    ndarray
        True frequencies of the accepted candidates (fewer than ``n_candidates``).

    Raises
    ------
    ValueError
        If ``n_candidates`` is less than 1.

    Examples
    --------
    With α = β = 1 and n = 2, Eq. (1) has mean (2/3 + 1/2) / 2 ≈ 0.583:

    >>> v2 = simulate_toy_replication(1.0, 1.0, 2, 1000, seed=0)
    >>> v2.shape, round(float(v2.mean()), 3)
    ((664,), 0.578)
    """
    if n_candidates < 1:
        raise ValueError("n_candidates must be at least 1")
    rng = np.random.default_rng(seed)
    s = rng.beta(alpha, beta, size=n_candidates)
    k = rng.binomial(annotators, s)
    accept = rng.random(n_candidates) < (k + alpha) / (annotators + alpha)
    return s[accept]


def toy_l1_distance(samples: ArrayLike, alpha: float, beta: float, annotators: int, bins: int = 40) -> float:
    """L1 distance between a histogram of simulated v2 frequencies and Eq. (1), bin by bin.

    The closed form enters through its exact bin probabilities (differences of Beta CDFs), so the
    distance measures only Monte-Carlo error and any mismatch of the model.

    Parameters
    ----------
    samples : array_like
        Simulated true frequencies of v2 (e.g. from :func:`simulate_toy_replication`).
    alpha, beta : float
        Beta parameters of the candidates' true frequencies.
    annotators : int
        Annotators per candidate.
    bins : int, default 40
        Number of equal-width bins on [0, 1].

    Returns
    -------
    float
        Sum over bins of |observed share − Eq. (1)'s probability| (between 0 and 2).

    Raises
    ------
    ValueError
        If ``samples`` is empty.

    Examples
    --------
    >>> v2 = simulate_toy_replication(1.0, 1.0, 2, 1000, seed=0)
    >>> round(toy_l1_distance(v2, 1.0, 1.0, 2, bins=10), 3)
    0.08
    """
    samples = np.asarray(samples, dtype=float)
    if len(samples) == 0:
        raise ValueError("no samples")
    edges = np.linspace(0, 1, bins + 1)
    w = annotators / (annotators + alpha + beta)
    cdf = w * stats.beta.cdf(edges, alpha + 1, beta) + (1 - w) * stats.beta.cdf(edges, alpha, beta)
    observed = np.histogram(samples, edges)[0] / len(samples)
    return float(np.abs(observed - np.diff(cdf)).sum())
