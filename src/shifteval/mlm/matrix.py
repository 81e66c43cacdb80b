"""The Misclassification Likelihood Matrix (Sikar et al., §3.3-3.4).

From a trained classifier's softmax outputs:

1. class centroids ``c_k`` = mean softmax output of the correctly classified training examples of class
   ``k`` (Eq. 1), refined by k-means initialised at them (:func:`refine_centroids`, Table 1 reports how
   far each moved);
2. the nearest-distance matrix ``D[i, j] = min over test examples x of class i of ‖σ(x) − c_j‖₂`` for
   ``j ≠ i`` (Eqs. 2-3);
3. the MLM ``M[i, j] = (1 / D[i, j]) / Σ_{k≠i} 1 / D[i, k]`` for ``j ≠ i`` and ``M[i, i] = 0`` (Eq. 4):
   reciprocal distances, rows normalised to one;
4. one MLM per perturbation level ``ℓ`` from the perturbed test examples, then the element-wise mean
   ``M̄ = (1/L) Σ_ℓ M_ℓ`` and standard deviation ``S = sqrt((1/L) Σ_ℓ (M_ℓ − M̄)²)`` (Eqs. 5-8).

The paper's CNN is :func:`shifteval.nets.paper_cnn`; its training and perturbed predictions are in
:mod:`shifteval.mlm.study`, the perturbations' calibration in :mod:`shifteval.mlm.calibration`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from ..utils import validation


def _check_probs(probs: ArrayLike, name: str = "probs", n_classes: int | None = None) -> NDArray[np.float64]:
    return validation.probabilities(probs, name, n_classes=n_classes)


def _check_labels(labels: ArrayLike, n: int, n_classes: int) -> NDArray[np.int64]:
    return validation.labels(labels, "labels", n=n, n_classes=n_classes)


def initial_centroids(probs: ArrayLike, labels: ArrayLike) -> np.ndarray:
    """Mean softmax output of the correctly classified examples of each class (Eq. 1).

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Softmax outputs on the training set.
    labels : array_like, shape (N,)
        True classes, 0..K-1.

    Returns
    -------
    ndarray, shape (K, K)
        Row ``k`` is class ``k``'s centroid.

    Raises
    ------
    ValueError
        If the inputs are not probabilities and labels, or a class has no correctly classified example.

    Examples
    --------
    >>> P = np.array([[.8, .1, .1], [.6, .3, .1], [.1, .8, .1], [.2, .7, .1], [.1, .1, .8], [.1, .3, .6]])
    >>> initial_centroids(P, [0, 0, 1, 1, 2, 2]).round(2).tolist()
    [[0.7, 0.2, 0.1], [0.15, 0.75, 0.1], [0.1, 0.2, 0.7]]
    """
    probs = _check_probs(probs)
    k = probs.shape[1]
    labels = _check_labels(labels, len(probs), k)
    correct = probs.argmax(axis=1) == labels
    missing = [c for c in range(k) if not np.any(correct & (labels == c))]
    if missing:
        raise ValueError(f"class(es) {missing} have no correctly classified example: no centroid (Eq. 1)")
    return np.stack([probs[correct & (labels == c)].mean(axis=0) for c in range(k)])


def refine_centroids(
    probs: ArrayLike, labels: ArrayLike, centroids: ArrayLike | None = None, subset: str = "correct"
) -> tuple[np.ndarray, np.ndarray]:
    """k-means on softmax outputs, initialised at the class centroids (§3.3a, Table 1).

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Softmax outputs on the training set.
    labels : array_like, shape (N,)
        True classes, 0..K-1.
    centroids : array_like, shape (K, K), optional
        Initial centroids; default :func:`initial_centroids` (Eq. 1).
    subset : {"correct", "all"}
        Which outputs k-means clusters. §3.3a says "each softmax output"; ``"correct"`` (our reading, the
        one whose shifts have the magnitudes of the paper's Table 1) clusters only the correctly classified
        outputs, the ones the initial centroids average; ``"all"`` clusters every training output.

    Returns
    -------
    refined : ndarray, shape (K, K)
    shift : ndarray, shape (K,)
        Euclidean distance each centroid moved (the paper's Table 1).

    Raises
    ------
    ValueError
        If ``subset`` is neither ``"correct"`` nor ``"all"``, or the inputs are invalid.

    Examples
    --------
    >>> p = np.array([[0.9, 0.1], [0.8, 0.2], [0.45, 0.55], [0.1, 0.9]])
    >>> refined, shift = refine_centroids(p, np.array([0, 0, 0, 1]), subset="all")
    >>> bool(shift[1] > 0.1)
    True
    """
    from sklearn.cluster import KMeans

    if subset not in ("correct", "all"):
        raise ValueError(f"subset must be 'correct' or 'all', got {subset!r}")
    probs = _check_probs(probs)
    labels = _check_labels(labels, len(probs), probs.shape[1])
    init = (
        initial_centroids(probs, labels) if centroids is None else _check_centroids(centroids, probs.shape[1])
    )
    points = probs[probs.argmax(axis=1) == labels] if subset == "correct" else probs
    km = KMeans(n_clusters=len(init), init=init, n_init=1, random_state=0).fit(points)
    refined = km.cluster_centers_
    return refined, np.linalg.norm(refined - init, axis=1)


def _check_centroids(centroids: ArrayLike, n_classes: int) -> NDArray[np.float64]:
    centroids = np.asarray(centroids, dtype=np.float64)
    if centroids.ndim != 2 or centroids.shape[1] != n_classes:
        raise ValueError(f"centroids must be a (K, {n_classes}) array, got shape {centroids.shape}")
    if len(centroids) != n_classes:
        raise ValueError(f"there are {n_classes} classes but {len(centroids)} centroids: need one per class")
    if not np.all(np.isfinite(centroids)):
        raise ValueError("centroids must be finite")
    return centroids


def centroid_distances(probs: ArrayLike, centroids: ArrayLike) -> np.ndarray:
    """Euclidean distance from every softmax output to every centroid (Eq. 2).

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Softmax outputs.
    centroids : array_like, shape (K, K)
        One centroid per class.

    Returns
    -------
    ndarray, shape (N, K)
        ``‖σ(x_n) − c_k‖₂``.

    Raises
    ------
    ValueError
        If ``probs`` are not probabilities or ``centroids`` is not a finite (K, K) array.

    Examples
    --------
    >>> centroid_distances([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]).round(4).tolist()
    [[0.0, 1.4142]]
    """
    probs = _check_probs(probs)
    centroids = _check_centroids(centroids, probs.shape[1])
    return np.linalg.norm(probs[:, None, :] - centroids[None, :, :], axis=2)


def nearest_distance_matrix(
    probs: ArrayLike, labels: ArrayLike, centroids: ArrayLike, aggregate: str = "min", chunk: int = 100_000
) -> np.ndarray:
    """``D[i, j]``: smallest distance from a class-``i`` example's softmax output to centroid ``j`` (Eq. 3).

    Parameters
    ----------
    probs, labels, centroids
        As in :func:`misclassification_likelihood_matrix`.
    aggregate : {"min", "mean", "max"}
        How the distances of a class's examples are combined. ``"min"`` is the paper's Eq. 3; the others
        exist to show what that choice does.
    chunk : int
        Examples processed at a time (memory stays O(chunk·K²)).

    Returns
    -------
    ndarray, shape (K, K)
        The diagonal is NaN (the MLM only concerns ``j ≠ i``). Every class needs at least one example.

    Raises
    ------
    ValueError
        For an unknown ``aggregate``, invalid inputs, or a class without examples.

    Examples
    --------
    >>> P = np.array([[.8, .1, .1], [.6, .3, .1], [.1, .8, .1], [.2, .7, .1], [.1, .1, .8], [.1, .3, .6]])
    >>> Y = np.array([0, 0, 1, 1, 2, 2])
    >>> nearest_distance_matrix(P, Y, initial_centroids(P, Y)).round(3)[0].tolist()
    [nan, 0.636, 0.787]
    """
    if aggregate not in ("min", "mean", "max"):
        raise ValueError(f"aggregate must be 'min', 'mean' or 'max', got {aggregate!r}")
    probs = _check_probs(probs)
    k = probs.shape[1]
    labels = _check_labels(labels, len(probs), k)
    centroids = _check_centroids(centroids, k)
    present = np.bincount(labels, minlength=k)
    if np.any(present == 0):
        raise ValueError(
            f"class(es) {np.flatnonzero(present == 0).tolist()} have no example: their row of D is undefined"
        )
    d = np.full((k, k), {"min": np.inf, "max": -np.inf, "mean": 0.0}[aggregate])
    for start in range(0, len(probs), chunk):
        dist = centroid_distances(probs[start : start + chunk], centroids)
        y = labels[start : start + chunk]
        if aggregate == "min":
            np.minimum.at(d, y, dist)
        elif aggregate == "max":
            np.maximum.at(d, y, dist)
        else:
            np.add.at(d, y, dist)
    if aggregate == "mean":
        d = d / present[:, None]
    np.fill_diagonal(d, np.nan)
    return d


def misclassification_likelihood_matrix(
    probs: ArrayLike, labels: ArrayLike, centroids: ArrayLike, aggregate: str = "min", chunk: int = 100_000
) -> np.ndarray:
    """The Misclassification Likelihood Matrix (Eq. 4).

    Parameters
    ----------
    probs : ndarray, shape (N, K)
        Softmax outputs of the evaluated examples (rows of the probability simplex).
    labels : ndarray, shape (N,)
        Their true classes, 0..K-1; every class must occur.
    centroids : ndarray, shape (K, K)
        One centroid per class (see :func:`refine_centroids`).
    aggregate : {"min", "mean", "max"}
        Passed to :func:`nearest_distance_matrix`; the paper's MLM is ``"min"``.
    chunk : int
        Passed to :func:`nearest_distance_matrix` (memory ~ ``chunk * K * K`` floats: lower it for
        1,000 classes).

    Returns
    -------
    ndarray, shape (K, K)
        ``M[i, j]`` = likelihood that a class-``i`` example is taken for class ``j``: reciprocal nearest
        distances (Eq. 3), zero diagonal, every row summing to 1. A distance of exactly zero (a softmax
        output sitting on another class's centroid) is clamped to 1e-12, giving that entry all the mass.

    Raises
    ------
    ValueError
        As :func:`nearest_distance_matrix`.

    Examples
    --------
    >>> P = np.array([[.8, .1, .1], [.6, .3, .1], [.1, .8, .1], [.2, .7, .1], [.1, .1, .8], [.1, .3, .6]])
    >>> Y = np.array([0, 0, 1, 1, 2, 2])
    >>> M = misclassification_likelihood_matrix(P, Y, initial_centroids(P, Y))
    >>> M.round(3)[0].tolist(), M.sum(axis=1).round(6).tolist()
    ([0.0, 0.553, 0.447], [1.0, 1.0, 1.0])
    """
    d = nearest_distance_matrix(probs, labels, centroids, aggregate, chunk)
    inv = 1.0 / np.maximum(d, 1e-12)
    np.fill_diagonal(inv, 0.0)
    return inv / inv.sum(axis=1, keepdims=True)


def level_matrices(
    probs_by_level: Sequence[ArrayLike], labels_by_level: Sequence[ArrayLike], centroids: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One MLM per level (Eqs. 5-6), their element-wise mean (Eq. 7) and standard deviation (Eq. 8).

    Parameters
    ----------
    probs_by_level, labels_by_level : sequence of arrays
        The perturbed test set's softmax outputs and labels at each level.
    centroids : array_like, shape (K, K)
        One centroid per class.

    Returns
    -------
    matrices : ndarray, shape (L, K, K)
    mean, std : ndarray, shape (K, K)

    Raises
    ------
    ValueError
        Without levels, or with different numbers of output and label arrays.

    Examples
    --------
    >>> P = np.array([[.8, .1, .1], [.6, .3, .1], [.1, .8, .1], [.2, .7, .1], [.1, .1, .8], [.1, .3, .6]])
    >>> Y = np.array([0, 0, 1, 1, 2, 2])
    >>> mats, mean, std = level_matrices([P, P[::-1]], [Y, Y[::-1]], initial_centroids(P, Y))
    >>> mats.shape, float(std.max())  # the same examples, reordered: identical MLMs
    ((2, 3, 3), 0.0)
    """
    if len(probs_by_level) == 0 or len(probs_by_level) != len(labels_by_level):
        raise ValueError("need one (probs, labels) pair per level, and at least one level")
    mats = np.stack(
        [
            misclassification_likelihood_matrix(p, y, centroids)
            for p, y in zip(probs_by_level, labels_by_level, strict=False)
        ]
    )
    return mats, mats.mean(axis=0), mats.std(axis=0)


def top_confusions(matrix: ArrayLike, n: int = 10, std: ArrayLike | None = None) -> pd.DataFrame:
    """The ``n`` largest off-diagonal entries of a K×K matrix, as (true, confused_with, likelihood[, std]).

    Parameters
    ----------
    matrix : array_like, shape (K, K)
        An MLM or a confusion-rate matrix.
    n : int
        How many entries to keep.
    std : array_like, shape (K, K), optional
        Standard deviations, added as a ``std`` column.

    Returns
    -------
    pandas.DataFrame
        Columns ``true``, ``confused_with``, ``likelihood`` (and ``std``), largest first (ties in row order).

    Raises
    ------
    ValueError
        If ``matrix`` is not square.

    Examples
    --------
    >>> top_confusions([[0, 0.9, 0.1], [0.3, 0, 0.7], [0.5, 0.5, 0]], n=2).values.tolist()
    [[0.0, 1.0, 0.9], [1.0, 2.0, 0.7]]
    """
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"matrix must be square, got shape {m.shape}")
    i, j = np.where(~np.eye(len(m), dtype=bool))
    table = pd.DataFrame({"true": i, "confused_with": j, "likelihood": m[i, j]})
    if std is not None:
        table["std"] = np.asarray(std)[i, j]
    return table.sort_values("likelihood", ascending=False, kind="stable").head(n).reset_index(drop=True)


def confusion_rates(labels: ArrayLike, predicted: ArrayLike, n_classes: int) -> np.ndarray:
    """Row-normalised confusion matrix: ``R[i, j]`` = share of class-``i`` examples predicted as ``j``.

    Parameters
    ----------
    labels, predicted : array_like, shape (N,)
        True and predicted classes, 0..n_classes-1.
    n_classes : int
        K.

    Returns
    -------
    ndarray, shape (K, K)
        Rows sum to 1 (a class without examples has a row of zeros).

    Examples
    --------
    >>> confusion_rates([0, 0, 1, 1], [0, 1, 1, 1], 3).tolist()
    [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    from sklearn.metrics import confusion_matrix

    cm = confusion_matrix(labels, predicted, labels=np.arange(n_classes)).astype(float)
    return cm / np.maximum(cm.sum(axis=1, keepdims=True), 1)


def rank_agreement(mlm: ArrayLike, rates: ArrayLike) -> tuple[float, float]:
    """Spearman correlation between off-diagonal MLM entries and observed confusion rates.

    Parameters
    ----------
    mlm, rates : array_like, shape (K, K)
        An MLM and a confusion-rate matrix (:func:`confusion_rates`).

    Returns
    -------
    rho, p_value : float
        From :func:`scipy.stats.spearmanr` over the K(K-1) off-diagonal pairs.

    Examples
    --------
    >>> m = [[0, 0.9, 0.1], [0.3, 0, 0.7], [0.5, 0.5, 0]]
    >>> round(rank_agreement(m, m)[0], 6)
    1.0
    """
    from scipy.stats import spearmanr

    mlm, rates = np.asarray(mlm), np.asarray(rates)
    off = ~np.eye(len(mlm), dtype=bool)
    res = spearmanr(mlm[off], rates[off])
    return float(res.statistic), float(res.pvalue)


def partial_rank_agreement(mlm: ArrayLike, control: ArrayLike, rates: ArrayLike) -> tuple[float, float]:
    """Spearman correlation of MLM entries with observed confusion rates, given a second predictor.

    The first-order partial correlation of the off-diagonal entries' ranks (Spearman's ρ of each
    pair, then ``(r_xy - r_xz r_yz) / sqrt((1 - r_xz²)(1 - r_yz²))``): how much the MLM ranks the
    observed confusions beyond what ``control`` (e.g. the clean confusion rates) already ranks.
    Written out because scipy has no partial correlation; the p-value is the usual t test with
    ``n - 3`` degrees of freedom (scipy.stats.t).

    Parameters
    ----------
    mlm, control, rates : array_like, shape (K, K)
        The predictor, the predictor held fixed, and the observed confusion rates.

    Returns
    -------
    rho, p_value : float
        Partial Spearman correlation over the K(K-1) off-diagonal pairs and its two-sided p-value
        (NaN when ``control`` ranks either of the others perfectly).

    Examples
    --------
    An MLM that is the control plus an independent part the rates share:

    >>> rng = np.random.default_rng(0)
    >>> c, extra = rng.random((10, 10)), rng.random((10, 10))
    >>> rho, p = partial_rank_agreement(c + extra, c, c + extra + 0.1 * rng.random((10, 10)))
    >>> rho > 0.8, p < 0.001
    (True, True)
    >>> partial_rank_agreement(c, c, extra)[0]  # the control ranks the MLM perfectly: nothing is left
    nan
    """
    from scipy.stats import spearmanr, t

    x, z, y = (np.asarray(a, dtype=float) for a in (mlm, control, rates))
    off = ~np.eye(len(x), dtype=bool)
    r = spearmanr(np.column_stack([x[off], y[off], z[off]])).statistic
    rxy, rxz, ryz = r[0, 1], r[0, 2], r[1, 2]
    denom = np.sqrt((1 - rxz**2) * (1 - ryz**2))
    if not denom > 0:
        return float("nan"), float("nan")
    rho = float(np.clip((rxy - rxz * ryz) / denom, -1, 1))
    dof = int(off.sum()) - 3
    p = float(2 * t.sf(abs(rho) * np.sqrt(dof / max(1 - rho**2, 1e-300)), dof))
    return rho, p


def most_frequent_error(counts: ArrayLike) -> tuple[int, int, int]:
    """The largest off-diagonal cell of a confusion matrix of counts: the most frequent error.

    Sikar et al. compare their MLM with "digit 9 misclassified as 7, which is the highest in the testing
    dataset" (§4.5): the most frequent error of the clean confusion matrix (their Figure 1).

    Parameters
    ----------
    counts : array_like, shape (K, K)
        Confusion matrix of counts (rows: true class).

    Returns
    -------
    true, predicted, count : int
        The cell (the first in row order among ties) and its count.

    Raises
    ------
    ValueError
        If ``counts`` is not square with K >= 2.

    Examples
    --------
    >>> most_frequent_error([[50, 1, 2], [0, 40, 7], [3, 7, 30]])
    (1, 2, 7)
    """
    cm = np.asarray(counts)
    if cm.ndim != 2 or cm.shape[0] != cm.shape[1] or len(cm) < 2:
        raise ValueError(f"counts must be a square matrix with K >= 2, got shape {cm.shape}")
    off = np.where(np.eye(len(cm), dtype=bool), -np.inf, cm.astype(float))
    i, j = np.unravel_index(int(np.argmax(off)), cm.shape)
    return int(i), int(j), int(cm[i, j])


def likeliest_pairs_rates(matrix: ArrayLike, rates: Sequence[ArrayLike], n: int = 10) -> pd.DataFrame:
    """Observed confusion rates of the ``n`` likeliest class pairs of an MLM against those of the others.

    Sikar et al.'s hypothesis (§3.4): the class pairs with the highest mean likelihood over the
    perturbation levels (Eq. 7) "are more prone to misclassification compared to other digit pairs".
    Each level's observed confusion rates (:func:`confusion_rates`) are averaged over the ``n`` pairs
    with the largest entries of ``matrix`` and over the other off-diagonal pairs.

    Parameters
    ----------
    matrix : array_like, shape (K, K)
        The MLM whose largest off-diagonal entries pick the pairs (ties in row order, as
        :func:`top_confusions`).
    rates : sequence of array_like, shape (K, K)
        Observed confusion rates, one matrix per level.
    n : int
        How many pairs to pick, 1 <= n < K(K-1).

    Returns
    -------
    pandas.DataFrame
        One row per level (1, 2, ...): ``likeliest`` and ``others``, the mean rates of the two groups.

    Raises
    ------
    ValueError
        If ``n`` is out of range or a rate matrix does not match ``matrix``.

    Examples
    --------
    Pair (0, 1) is the likeliest; it is confused at 30%, the other five pairs at 2% on average:

    >>> m = [[0, 0.9, 0.1], [0.3, 0, 0.7], [0.5, 0.5, 0]]
    >>> r = np.array([[0, 0.3, 0.0], [0.02, 0, 0.04], [0.0, 0.04, 0]])
    >>> likeliest_pairs_rates(m, [r], n=1).round(3).to_dict(orient="index")
    {1: {'likeliest': 0.3, 'others': 0.02}}
    """
    m = np.asarray(matrix, dtype=float)
    k = len(m)
    if not 1 <= n < k * (k - 1):
        raise ValueError(f"n must lie in [1, {k * (k - 1)}), got {n}")
    top = top_confusions(m, n)
    picked = np.zeros_like(m, dtype=bool)
    picked[top.true.to_numpy(), top.confused_with.to_numpy()] = True
    others = ~picked & ~np.eye(k, dtype=bool)
    rows = {}
    for level, r in enumerate(rates, start=1):
        r = np.asarray(r, dtype=float)
        if r.shape != m.shape:
            raise ValueError(f"rates at level {level} have shape {r.shape}, the matrix {m.shape}")
        rows[level] = {"likeliest": float(r[picked].mean()), "others": float(r[others].mean())}
    return pd.DataFrame.from_dict(rows, orient="index")


def confidence_mirrors_distance(probs: ArrayLike, distances: ArrayLike, k: int = 2) -> np.ndarray:
    """Whether each output's ``k`` highest softmax classes are the classes of its ``k`` nearest centroids.

    Sikar et al. note "the inverse relation" between their Figures 3 and 4: "the highest bars (network
    confidence) in the first set correspond to the lowest bars (distance to class centroid)" (§4.3).

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Softmax outputs.
    distances : array_like, shape (N, K)
        Their distances to the K centroids (:func:`centroid_distances`).
    k : int
        How many of the highest outputs and nearest centroids are compared (as sets), 1 <= k <= K.

    Returns
    -------
    numpy.ndarray of bool, shape (N,)

    Raises
    ------
    ValueError
        If the shapes differ or ``k`` is out of range.

    Examples
    --------
    A 6 with a large 5 component, nearest to the centroids of 5 and 6 (first) or of 6 and 9 (second):

    >>> p = np.array([[0, 0, 0, 0, 0, 0.45, 0.55, 0, 0, 0]] * 2)
    >>> d = np.ones((2, 10)); d[0, [5, 6]] = 0.3, 0.4; d[1, [6, 9]] = 0.3, 0.5
    >>> confidence_mirrors_distance(p, d).tolist()
    [True, False]
    """
    p, d = np.asarray(probs, dtype=float), np.asarray(distances, dtype=float)
    if p.ndim != 2 or p.shape != d.shape:
        raise ValueError(f"probs and distances must be (N, K) of the same shape, got {p.shape} and {d.shape}")
    if not 1 <= k <= p.shape[1]:
        raise ValueError(f"k must lie in [1, {p.shape[1]}], got {k}")
    high = np.sort(np.argsort(-p, axis=1, kind="stable")[:, :k], axis=1)
    near = np.sort(np.argsort(d, axis=1, kind="stable")[:, :k], axis=1)
    return (high == near).all(axis=1)


def ambiguous_examples(
    probs: ArrayLike, labels: ArrayLike, centroids: ArrayLike, n: int = 2
) -> tuple[np.ndarray, int, int]:
    """Correctly classified examples whose output lies nearest another class's centroid (§4.3, Figs. 3-4).

    Most ambiguous first (largest second output); if fewer than ``n`` exist, the correct ones with the
    smallest margin between the two largest outputs.

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Softmax outputs.
    labels : array_like, shape (N,)
        True classes.
    centroids : array_like, shape (K, K)
        One centroid per class.
    n : int
        How many examples to return.

    Returns
    -------
    indices : ndarray of int
        At most ``n`` example indices.
    n_misclustered, n_correct : int
        Correct examples nearest another class's centroid, and all correct examples.

    Examples
    --------
    >>> P = np.array([[.8, .1, .1], [.6, .3, .1], [.1, .8, .1], [.2, .7, .1], [.1, .1, .8], [.1, .3, .6]])
    >>> Y = np.array([0, 0, 1, 1, 2, 2])
    >>> idx, n_mis, n_ok = ambiguous_examples(P, Y, initial_centroids(P, Y))
    >>> idx.tolist(), n_mis, n_ok  # none misclustered: the two smallest margins
    ([1, 5], 0, 6)
    """
    probs = _check_probs(probs)
    labels = _check_labels(labels, len(probs), probs.shape[1])
    dist = centroid_distances(probs, centroids)
    correct = probs.argmax(1) == labels
    misclustered = np.flatnonzero(correct & (dist.argmin(1) != labels))
    top2 = np.sort(probs, axis=1)
    if len(misclustered) >= n:
        order = misclustered[np.argsort(top2[misclustered, -2])[::-1]]
    else:
        order = np.flatnonzero(correct)[np.argsort((top2[:, -1] - top2[:, -2])[correct])]
    return order[:n], len(misclustered), int(correct.sum())


def row_rank(matrix: ArrayLike, i: int, j: int) -> int:
    """Rank (1 = largest) of the off-diagonal entry ``(i, j)`` within row ``i`` of a K×K matrix.

    Parameters
    ----------
    matrix : array_like, shape (K, K)
        An MLM or confusion-rate matrix.
    i, j : int
        Row and column, ``i ≠ j``; the diagonal entry is left out of the ranking.

    Returns
    -------
    int
        1 + the number of off-diagonal entries of row ``i`` strictly larger than ``(i, j)``.

    Raises
    ------
    ValueError
        If ``i == j``.

    Examples
    --------
    >>> m = [[9, 0.2, 0.5, 0.3], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    >>> row_rank(m, 0, 2), row_rank(m, 0, 1)
    (1, 3)
    """
    m = np.asarray(matrix, dtype=float)
    if i == j:
        raise ValueError("row_rank concerns off-diagonal entries: i must differ from j")
    row = np.delete(m[i], i)
    return int(1 + np.sum(row > m[i, j]))
