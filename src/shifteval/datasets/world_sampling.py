"""The replication's three sampling strategies (Recht et al. 2019, §4 and App. C.1.2).

MatchedFrequency, Threshold0.7 and TopImages draw a replicated test set from an annotated candidate
pool, per class, from the observed selection frequencies alone. Every name here is also importable
from :mod:`shifteval.datasets.world`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

STRATEGIES = ("matchedfrequency", "threshold0.7", "topimages")
FREQUENCY_BINS = np.array([0.0, 0.2, 0.4, 0.6, 0.8])  # left edges; the last bin is [0.8, 1]
N_CLASSES = 10


def _largest_remainder(weights, total: int):
    """Integer counts proportional to ``weights`` that sum exactly to ``total``."""
    weights = np.asarray(weights, dtype=float)
    if weights.sum() == 0:
        weights = np.ones_like(weights)
    raw = weights / weights.sum() * total
    counts = np.floor(raw).astype(int)
    for i in np.argsort(-(raw - counts), kind="stable")[: total - counts.sum()]:
        counts[i] += 1
    return counts


def frequency_bin(freq: ArrayLike, edges: ArrayLike = FREQUENCY_BINS) -> NDArray[np.intp]:
    """Bin index 0-4 of selection frequencies in [0, .2), [.2, .4), [.4, .6), [.6, .8), [.8, 1].

    The bins are those of MatchedFrequency (Recht et al. 2019, App. C.1.2); other left ``edges``
    give other bins (the last one closed at 1).

    Parameters
    ----------
    freq : array_like of float
        Selection frequencies in [0, 1].
    edges : array_like of float
        Increasing left edges of the bins, the first 0.

    Returns
    -------
    ndarray of int
        The bin of every frequency, the shape of ``freq``.

    Examples
    --------
    >>> frequency_bin([0.0, 0.19, 0.2, 0.79, 0.8, 1.0]).tolist()
    [0, 0, 1, 3, 4, 4]
    >>> frequency_bin([0.0, 0.49, 0.5, 1.0], edges=[0.0, 0.5]).tolist()
    [0, 0, 1, 1]
    """
    edges = np.asarray(edges, dtype=float)
    if edges.ndim != 1 or len(edges) < 1 or edges[0] != 0 or np.any(np.diff(edges) <= 0) or edges[-1] >= 1:
        raise ValueError(f"edges must increase from 0 and stay below 1, got {edges.tolist()}")
    return np.clip(np.searchsorted(edges, np.asarray(freq) + 1e-12, side="right") - 1, 0, len(edges) - 1)


def sample_matched_frequency(
    ref_freq: ArrayLike,
    ref_labels: NDArray[np.integer],
    pool_freq: ArrayLike,
    pool_labels: NDArray[np.integer],
    per_class: int,
    rng: np.random.Generator,
    edges: ArrayLike = FREQUENCY_BINS,
) -> tuple[NDArray[np.int64], dict[str, int]]:
    """MatchedFrequency sampling (Recht et al. 2019, §4 and App. C.1.2).

    Per class, the 5-bin histogram of the reference (v1) images' observed selection frequencies sets
    how many of the class's ``per_class`` images come from each bin; images are drawn at random within
    a bin, and when a bin runs out the remainder is taken from the next higher bin (then the next).
    The paper does not say what happens when even the top bin runs out; here the remainder then comes
    from the nearest lower bin. Both kinds of substitution are counted so they can be reported.

    Parameters
    ----------
    ref_freq : array_like of float
        Observed selection frequencies of the reference (v1) images.
    ref_labels : ndarray of int
        Their classes, 0-9.
    pool_freq : array_like of float
        Observed selection frequencies of the candidate pool.
    pool_labels : ndarray of int
        Their classes, 0-9.
    per_class : int
        Images to sample per class.
    rng : numpy.random.Generator
        Source of the random draws within a bin.
    edges : array_like of float
        Left edges of the histogram's bins (:func:`frequency_bin`); the paper's five by default.

    Returns
    -------
    indices : ndarray of int
        Indices into the pool, grouped by class.
    substituted : dict
        ``{"higher": n, "lower": m}``: images taken from a higher bin than their target because the
        target bin ran out (the paper's rule), and from a lower bin because every higher bin ran out
        (ours).

    Raises
    ------
    ValueError
        If a class has fewer than ``per_class`` candidates in the pool.

    Examples
    --------
    Every v1 image is in the top bin, and each class has two pool images there:

    >>> ref_freq, ref_labels = np.full(40, 0.9), np.repeat(np.arange(10), 4)
    >>> pool_freq = np.tile([0.1, 0.3, 0.5, 0.7, 0.9, 1.0], 10)
    >>> pool_labels = np.repeat(np.arange(10), 6)
    >>> rng = np.random.default_rng(0)
    >>> idx, sub = sample_matched_frequency(ref_freq, ref_labels, pool_freq, pool_labels, 2, rng)
    >>> len(idx), sorted(set(pool_freq[idx].tolist())), sub
    (20, [0.9, 1.0], {'higher': 0, 'lower': 0})
    >>> sample_matched_frequency(ref_freq, ref_labels, pool_freq, pool_labels, 3, rng)[1]
    {'higher': 0, 'lower': 10}
    """
    chosen, substituted = [], {"higher": 0, "lower": 0}
    ref_bins, pool_bins = frequency_bin(ref_freq, edges), frequency_bin(pool_freq, edges)
    n_bins = len(np.asarray(edges))
    for c in range(N_CLASSES):
        members = np.flatnonzero(pool_labels == c)
        if len(members) < per_class:
            raise ValueError(f"class {c}: only {len(members)} candidates in the pool, need {per_class}")
        targets = _largest_remainder(np.bincount(ref_bins[ref_labels == c], minlength=n_bins), per_class)
        available = {b: list(rng.permutation(members[pool_bins[members] == b])) for b in range(n_bins)}
        for b in range(n_bins):
            need = int(targets[b])
            order = list(range(b, n_bins)) + list(range(b - 1, -1, -1))  # higher bins first, then lower
            for bb in order:
                if need == 0:
                    break
                take, available[bb] = available[bb][:need], available[bb][need:]
                chosen.extend(take)
                need -= len(take)
                if bb > b:
                    substituted["higher"] += len(take)
                elif bb < b:
                    substituted["lower"] += len(take)
    return np.asarray(chosen, dtype=np.int64), substituted


def sample_threshold(
    pool_freq: ArrayLike,
    pool_labels: NDArray[np.integer],
    per_class: int,
    threshold: float,
    rng: np.random.Generator,
) -> NDArray[np.int64]:
    """Threshold sampling (Recht et al. 2019, §4): per class, at random among ``ŝ >= threshold``.

    Parameters
    ----------
    pool_freq : array_like of float
        Observed selection frequencies of the candidate pool.
    pool_labels : ndarray of int
        Their classes, 0-9.
    per_class : int
        Images to sample per class.
    threshold : float
        Lowest observed frequency an image may have (0.7 in Recht et al.).
    rng : numpy.random.Generator
        Source of the random draws.

    Returns
    -------
    ndarray of int64
        Indices into the pool, grouped by class.

    Raises
    ------
    ValueError
        If a class has fewer than ``per_class`` candidates reaching ``threshold``.

    Examples
    --------
    >>> pool_freq = np.tile([0.1, 0.3, 0.5, 0.7, 0.9, 1.0], 10)
    >>> pool_labels = np.repeat(np.arange(10), 6)
    >>> idx = sample_threshold(pool_freq, pool_labels, 2, 0.7, np.random.default_rng(0))
    >>> len(idx), bool(np.all(pool_freq[idx] >= 0.7))
    (20, True)
    """
    chosen: list[np.ndarray] = []
    for c in range(N_CLASSES):
        eligible = np.flatnonzero((pool_labels == c) & (np.asarray(pool_freq) >= threshold - 1e-12))
        if len(eligible) < per_class:
            raise ValueError(
                f"class {c}: only {len(eligible)} candidates reach frequency {threshold}; "
                f"need {per_class} (raise n_pool or lower per_class)"
            )
        chosen.extend(rng.choice(eligible, size=per_class, replace=False))
    return np.asarray(chosen, dtype=np.int64)


def sample_top_images(
    pool_freq: ArrayLike, pool_labels: NDArray[np.integer], per_class: int, rng: np.random.Generator
) -> NDArray[np.int64]:
    """TopImages sampling (Recht et al. 2019, §4): per class, the most frequently selected images.

    Ties in the observed frequency are broken at random.

    Parameters
    ----------
    pool_freq : array_like of float
        Observed selection frequencies of the candidate pool.
    pool_labels : ndarray of int
        Their classes, 0-9.
    per_class : int
        Images to take per class.
    rng : numpy.random.Generator
        Source of the tie-breaking.

    Returns
    -------
    ndarray of int64
        Indices into the pool, grouped by class.

    Raises
    ------
    ValueError
        If a class has fewer than ``per_class`` candidates in the pool.

    Examples
    --------
    >>> pool_freq = np.tile([0.1, 0.3, 0.5, 0.7, 0.9, 1.0], 10)
    >>> pool_labels = np.repeat(np.arange(10), 6)
    >>> idx = sample_top_images(pool_freq, pool_labels, 2, np.random.default_rng(0))
    >>> len(idx), sorted(set(pool_freq[idx].tolist()))
    (20, [0.9, 1.0])
    """
    chosen: list[np.ndarray] = []
    pool_freq = np.asarray(pool_freq)
    for c in range(N_CLASSES):
        members = rng.permutation(np.flatnonzero(pool_labels == c))
        if len(members) < per_class:
            raise ValueError(f"class {c}: only {len(members)} candidates in the pool, need {per_class}")
        order = np.argsort(-pool_freq[members], kind="stable")
        chosen.extend(members[order[:per_class]])
    return np.asarray(chosen, dtype=np.int64)
