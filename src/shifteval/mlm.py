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

The paper's CNN and its training are :func:`shifteval.zoo.models.paper_cnn` and :func:`train_classifier`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _check_probs(probs, name: str = "probs", n_classes: int | None = None):
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 2 or len(probs) == 0:
        raise ValueError(
            f"{name} must be a non-empty (N, K) array of softmax outputs, got shape {probs.shape}"
        )
    if n_classes is not None and probs.shape[1] != n_classes:
        raise ValueError(f"{name} has {probs.shape[1]} columns but there are {n_classes} classes")
    if not np.all(np.isfinite(probs)) or probs.min() < -1e-6:
        raise ValueError(f"{name} must be finite and non-negative (rows of a probability simplex)")
    sums = probs.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1) > 1e-3)
    if len(bad):
        raise ValueError(
            f"{name}: row {bad[0]} sums to {sums[bad[0]]:.4f}, not 1 (are these logits, not softmax outputs?)"
        )
    return probs


def _check_labels(labels, n: int, n_classes: int):
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise ValueError(f"labels must have shape ({n},) to match probs, got {labels.shape}")
    if not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"labels must be integers, got dtype {labels.dtype}")
    if labels.min() < 0 or labels.max() >= n_classes:
        raise ValueError(f"labels must lie in 0..{n_classes - 1}; found {labels.min()}..{labels.max()}")
    return labels.astype(np.int64)


def initial_centroids(probs, labels):
    """Mean softmax output of the correctly classified examples of each class (Eq. 1).

    Parameters
    ----------
    probs : ndarray, shape (N, K)
        Softmax outputs on the training set.
    labels : ndarray, shape (N,)

    Returns
    -------
    ndarray, shape (K, K)
        Row ``k`` is class ``k``'s centroid.
    """
    probs = _check_probs(probs)
    k = probs.shape[1]
    labels = _check_labels(labels, len(probs), k)
    correct = probs.argmax(axis=1) == labels
    missing = [c for c in range(k) if not np.any(correct & (labels == c))]
    if missing:
        raise ValueError(f"class(es) {missing} have no correctly classified example: no centroid (Eq. 1)")
    return np.stack([probs[correct & (labels == c)].mean(axis=0) for c in range(k)])


def refine_centroids(probs, labels, centroids=None):
    """k-means on the correctly classified softmax outputs, initialised at the class centroids (§3.3a).

    Returns
    -------
    refined : ndarray, shape (K, K)
    shift : ndarray, shape (K,)
        Euclidean distance each centroid moved (the paper's Table 1).
    """
    from sklearn.cluster import KMeans

    probs = _check_probs(probs)
    labels = _check_labels(labels, len(probs), probs.shape[1])
    init = (
        initial_centroids(probs, labels) if centroids is None else _check_centroids(centroids, probs.shape[1])
    )
    correct = probs.argmax(axis=1) == labels
    km = KMeans(n_clusters=len(init), init=init, n_init=1, random_state=0).fit(probs[correct])
    refined = km.cluster_centers_
    return refined, np.linalg.norm(refined - init, axis=1)


def _check_centroids(centroids, n_classes: int):
    centroids = np.asarray(centroids, dtype=np.float64)
    if centroids.ndim != 2 or centroids.shape[1] != n_classes:
        raise ValueError(f"centroids must be a (K, {n_classes}) array, got shape {centroids.shape}")
    if len(centroids) != n_classes:
        raise ValueError(f"there are {n_classes} classes but {len(centroids)} centroids: need one per class")
    if not np.all(np.isfinite(centroids)):
        raise ValueError("centroids must be finite")
    return centroids


def centroid_distances(probs, centroids):
    """Euclidean distance from every softmax output to every centroid (Eq. 2), shape (N, K)."""
    probs = _check_probs(probs)
    centroids = _check_centroids(centroids, probs.shape[1])
    return np.linalg.norm(probs[:, None, :] - centroids[None, :, :], axis=2)


def nearest_distance_matrix(probs, labels, centroids):
    """``D[i, j]``: smallest distance from a class-``i`` example's softmax output to centroid ``j`` (Eq. 3).

    The diagonal is NaN (the MLM only concerns ``j ≠ i``). Every class needs at least one example.
    """
    probs = _check_probs(probs)
    k = probs.shape[1]
    labels = _check_labels(labels, len(probs), k)
    dist = centroid_distances(probs, centroids)
    present = np.bincount(labels, minlength=k)
    if np.any(present == 0):
        raise ValueError(
            f"class(es) {np.flatnonzero(present == 0).tolist()} have no example: their row of D is undefined"
        )
    d = np.full((k, k), np.inf)
    np.minimum.at(d, labels, dist)  # row i: minimum over class-i examples
    np.fill_diagonal(d, np.nan)
    return d


def misclassification_likelihood_matrix(probs, labels, centroids):
    """The Misclassification Likelihood Matrix (Eq. 4).

    Parameters
    ----------
    probs : ndarray, shape (N, K)
        Softmax outputs of the evaluated examples (rows of the probability simplex).
    labels : ndarray, shape (N,)
        Their true classes, 0..K-1; every class must occur.
    centroids : ndarray, shape (K, K)
        One centroid per class (see :func:`refine_centroids`).

    Returns
    -------
    ndarray, shape (K, K)
        ``M[i, j]`` = likelihood that a class-``i`` example is taken for class ``j``: reciprocal nearest
        distances (Eq. 3), zero diagonal, every row summing to 1. A distance of exactly zero (a softmax
        output sitting on another class's centroid) is clamped to 1e-12, giving that entry all the mass.
    """
    d = nearest_distance_matrix(probs, labels, centroids)
    inv = 1.0 / np.maximum(d, 1e-12)
    np.fill_diagonal(inv, 0.0)
    return inv / inv.sum(axis=1, keepdims=True)


def level_matrices(probs_by_level, labels_by_level, centroids):
    """One MLM per level (Eqs. 5-6), their element-wise mean (Eq. 7) and standard deviation (Eq. 8).

    Parameters
    ----------
    probs_by_level, labels_by_level : sequence of arrays
        The perturbed test set's softmax outputs and labels at each level.

    Returns
    -------
    matrices : ndarray, shape (L, K, K)
    mean, std : ndarray, shape (K, K)
    """
    if len(probs_by_level) == 0 or len(probs_by_level) != len(labels_by_level):
        raise ValueError("need one (probs, labels) pair per level, and at least one level")
    mats = np.stack(
        [
            misclassification_likelihood_matrix(p, y, centroids)
            for p, y in zip(probs_by_level, labels_by_level)
        ]
    )
    return mats, mats.mean(axis=0), mats.std(axis=0)


def top_confusions(matrix, n: int = 10, std=None) -> pd.DataFrame:
    """The ``n`` largest off-diagonal entries of a K×K matrix, as (true, confused_with, likelihood[, std])."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"matrix must be square, got shape {m.shape}")
    i, j = np.where(~np.eye(len(m), dtype=bool))
    table = pd.DataFrame({"true": i, "confused_with": j, "likelihood": m[i, j]})
    if std is not None:
        table["std"] = np.asarray(std)[i, j]
    return table.sort_values("likelihood", ascending=False, kind="stable").head(n).reset_index(drop=True)


def confusion_rates(labels, predicted, n_classes: int):
    """Row-normalised confusion matrix: ``R[i, j]`` = share of class-``i`` examples predicted as ``j``."""
    from sklearn.metrics import confusion_matrix

    cm = confusion_matrix(labels, predicted, labels=np.arange(n_classes)).astype(float)
    return cm / np.maximum(cm.sum(axis=1, keepdims=True), 1)


def rank_agreement(mlm, rates):
    """Spearman correlation between off-diagonal MLM entries and observed confusion rates.

    Returns
    -------
    (rho, p_value) from :func:`scipy.stats.spearmanr` over the K(K-1) off-diagonal pairs.
    """
    from scipy.stats import spearmanr

    mlm, rates = np.asarray(mlm), np.asarray(rates)
    off = ~np.eye(len(mlm), dtype=bool)
    res = spearmanr(mlm[off], rates[off])
    return float(res.statistic), float(res.pvalue)


def train_classifier(
    images,
    labels,
    *,
    epochs: int = 10,
    lr: float = 0.01,
    lr_decay: float = 0.7,
    batch_size: int = 64,
    seed: int = 0,
    progress=None,
):
    """Train the paper's CNN (§3.1, :func:`~shifteval.zoo.models.paper_cnn`) with SGD and cross-entropy.

    SGD with momentum 0.9, learning rate ``lr`` multiplied by ``lr_decay`` after each epoch ("lr 0.01
    decaying"), batch 64, as in the paper. Returns the model in eval mode.
    """
    import torch

    from .zoo.models import fit_torch, paper_cnn

    images = np.asarray(images, dtype=np.float32)
    if images.ndim != 3 or images.shape[1] != images.shape[2]:
        raise ValueError(f"training images must be (N, S, S) squares, got shape {images.shape}")
    torch.manual_seed(int(seed))
    model = paper_cnn(images.shape[1])
    return fit_torch(
        model,
        images,
        labels,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        seed=seed,
        optimizer="sgd",
        lr_decay=lr_decay,
        weight_decay=0.0,
        progress=progress,
    )
