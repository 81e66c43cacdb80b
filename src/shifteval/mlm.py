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

from .utils import validation


def _check_probs(probs, name: str = "probs", n_classes: int | None = None):
    return validation.probabilities(probs, name, n_classes=n_classes)


def _check_labels(labels, n: int, n_classes: int):
    return validation.labels(labels, "labels", n=n, n_classes=n_classes)


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


def refine_centroids(probs, labels, centroids=None, subset: str = "correct"):
    """k-means on softmax outputs, initialised at the class centroids (§3.3a, Table 1).

    Parameters
    ----------
    probs : array_like, shape (N, K)
        Softmax outputs on the training set.
    labels : array_like, shape (N,)
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

    Examples
    --------
    >>> import numpy as np
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


def nearest_distance_matrix(probs, labels, centroids, aggregate: str = "min", chunk: int = 100_000):
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


def misclassification_likelihood_matrix(probs, labels, centroids, aggregate: str = "min"):
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

    Returns
    -------
    ndarray, shape (K, K)
        ``M[i, j]`` = likelihood that a class-``i`` example is taken for class ``j``: reciprocal nearest
        distances (Eq. 3), zero diagonal, every row summing to 1. A distance of exactly zero (a softmax
        output sitting on another class's centroid) is clamped to 1e-12, giving that entry all the mass.
    """
    d = nearest_distance_matrix(probs, labels, centroids, aggregate)
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
            for p, y in zip(probs_by_level, labels_by_level, strict=False)
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

    The paper gives SGD, learning rate 0.01, batch 64, 10 epochs and the 0.5/0.5 normalisation (§3.1,
    §4.1). Ours, not the paper's: momentum 0.9 and the learning rate multiplied by ``lr_decay`` after
    each epoch (``lr_decay=1`` keeps it constant). Returns the model in eval mode.
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


# --- the paper's setting: severities calibrated on a separate model, perturbed predictions -------------

#: The paper's mean accuracy over the twelve perturbations, level 1 and level 10 (§4.4), and its clean
#: test accuracy (§4.1). The calibration target is the straight line between the two levels.
PAPER_LEVEL1, PAPER_LEVEL10, PAPER_CLEAN = 0.9761, 0.4883, 0.9846


def calibration_targets(clean_accuracy: float) -> np.ndarray:
    """The paper's average accuracy profile (§4.4), relative to clean accuracy, for levels 1-10.

    Level ``ℓ`` targets ``clean_accuracy · P_ℓ / 0.9846`` where ``P`` falls linearly from 0.9761 (level 1)
    to 0.4883 (level 10) and 0.9846 is the paper's clean test accuracy; on MNIST (clean ≈ 0.985) this is
    the paper's profile itself.

    Examples
    --------
    >>> calibration_targets(0.9846)[[0, -1]].round(4).tolist()
    [0.9761, 0.4883]
    """
    if not 0 < clean_accuracy <= 1:
        raise ValueError(f"clean_accuracy must lie in (0, 1], got {clean_accuracy}")
    return clean_accuracy * np.linspace(PAPER_LEVEL1, PAPER_LEVEL10, 10) / PAPER_CLEAN


def calibration_split(n: int, n_calibration: int, seed: int = 0):
    """Indices ``(fit, calibration)`` splitting ``n`` training images (disjoint, random, sorted).

    The calibration model learns from ``fit``; severities are set on ``calibration``.
    """
    if not 0 < n_calibration < n:
        raise ValueError(f"n_calibration must lie in 1..{n - 1}, got {n_calibration}")
    perm = np.random.default_rng([int(seed), 15]).permutation(n)
    return np.sort(perm[n_calibration:]), np.sort(perm[:n_calibration])


def count_shared_images(a, b) -> int:
    """How many images of ``a`` are byte-for-byte equal to some image of ``b`` (overlap check)."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    seen = {img.tobytes() for img in b}
    return int(sum(img.tobytes() in seen for img in a))


def same_weights(model_a, model_b) -> bool:
    """True when two torch models are the same object or hold identical parameters."""
    import torch

    if model_a is model_b:
        return True
    pa, pb = list(model_a.parameters()), list(model_b.parameters())
    return len(pa) == len(pb) and all(
        x.shape == y.shape and torch.equal(x, y) for x, y in zip(pa, pb, strict=False)
    )


def calibrate_severities(model, images, labels, *, points: int = 24, seed: int = 0, names=None):
    """Severity table from a calibration model on calibration images (the paper's "trial and error", §3.2).

    For every perturbation, accuracy is measured on a grid of ``points`` strengths
    (:data:`shifteval.corruptions.GRIDS`) and each level's strength is interpolated where accuracy
    crosses :func:`calibration_targets` (:func:`shifteval.corruptions.calibrate`).

    Parameters
    ----------
    model : torch.nn.Module
        The calibration model (never the evaluated one).
    images, labels : ndarray
        Calibration images (never the evaluated test images), float in [0, 1].
    points : int
        Grid size per perturbation.
    seed : int
        Seed of the perturbations' randomness.
    names : sequence of str, optional
        Perturbations to calibrate (default all twelve).

    Returns
    -------
    dict with ``severity`` (name -> 10 strengths), ``targets``, ``clean`` (calibration accuracy),
    ``clamped`` (name -> 10 bools) and ``curves`` (name -> (grid, accuracy)).
    """
    from . import corruptions
    from .zoo.models import predict_torch

    names = list(corruptions.CORRUPTIONS if names is None else names)
    unknown = sorted(set(names) - set(corruptions.CORRUPTIONS))
    if unknown:
        raise ValueError(f"unknown perturbation(s) {unknown}; valid: {', '.join(corruptions.CORRUPTIONS)}")
    if points < 2:
        raise ValueError(f"points must be at least 2, got {points}")
    labels = np.asarray(labels)
    clean = float((predict_torch(model, images).argmax(1) == labels).mean())
    targets = calibration_targets(clean)
    curves, severity, clamped = {}, {}, {}

    def accuracy_at(name, t):
        acc = float(
            (predict_torch(model, corruptions.apply(images, name, t, seed)).argmax(1) == labels).mean()
        )
        curves[name][1].append(acc)
        return acc

    for name in names:
        grid = np.linspace(*corruptions.GRIDS[name], points)
        curves[name] = (grid.tolist(), [])
        severity[name], clamped[name] = corruptions.calibrate(accuracy_at, name, grid, targets, True)
    return {"severity": severity, "targets": targets, "clean": clean, "clamped": clamped, "curves": curves}


def perturbed_predictions(
    model, images, labels, names, *, severity=None, seed: int = 0, keep=(), progress=None
):
    """Softmax outputs of ``model`` on ``images`` under every perturbation at levels 1-10 (§3.2).

    Parameters
    ----------
    model : torch.nn.Module
    images, labels : ndarray
        The evaluated test images and their classes.
    names : sequence of str
        Perturbations.
    severity : dict, optional
        Strength table (default :data:`shifteval.corruptions.SEVERITY`).
    seed : int
        Seed of the perturbations' randomness.
    keep : sequence of int
        Indices of images whose perturbed versions are returned, exactly as the model saw them (the same
        noise draw as their softmax outputs).
    progress : tqdm-like, optional
        Advanced once per perturbation.

    Returns
    -------
    probs : dict (name, level) -> ndarray (N, K)
    accuracy : pandas.DataFrame, perturbations × levels
    kept : dict (name, level) -> ndarray (len(keep), H, W)
    """
    from . import corruptions
    from .zoo.models import predict_torch

    labels, keep = np.asarray(labels), np.asarray(keep, dtype=int)
    probs, kept = {}, {}
    for name in names:
        for lvl in corruptions.LEVELS:
            x = corruptions.corrupt(images, name, lvl, seed, severity)
            probs[name, lvl] = predict_torch(model, x)
            kept[name, lvl] = x[keep]
        if progress is not None:
            progress.update(1)
    accuracy = pd.DataFrame(
        {
            lvl: {n: float((probs[n, lvl].argmax(1) == labels).mean()) for n in names}
            for lvl in corruptions.LEVELS
        }
    )
    return probs, accuracy, kept


def ambiguous_examples(probs, labels, centroids, n: int = 2):
    """Correctly classified examples whose output lies nearest another class's centroid (§4.3, Figs. 3-4).

    Most ambiguous first; if fewer than ``n`` exist, the correct ones with the smallest margin between
    the two largest outputs. Returns ``(indices, n_misclustered, n_correct)``.
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


def row_rank(matrix, i: int, j: int) -> int:
    """Rank (1 = largest) of the off-diagonal entry ``(i, j)`` within row ``i`` of a K×K matrix."""
    m = np.asarray(matrix, dtype=float)
    if i == j:
        raise ValueError("row_rank concerns off-diagonal entries: i must differ from j")
    row = np.delete(m[i], i)
    return int(1 + np.sum(row > m[i, j]))


def pooled(probs: dict, labels, names, levels=None):
    """All perturbed outputs stacked: ``(probs, labels)`` over the given perturbations and levels."""
    levels = sorted({lvl for _, lvl in probs}) if levels is None else list(levels)
    keys = [(n, lvl) for n in names for lvl in levels]
    return np.concatenate([probs[k] for k in keys]), np.tile(np.asarray(labels), len(keys))


def confusion_summary(counts, top: int = 3) -> str:
    """A §4.1-style reading of a confusion matrix of counts, as one sentence.

    Least and most misclassified classes, and the classes the paper discusses (8 and 3) with their most
    frequent wrong predictions.
    """
    cm = np.asarray(counts)
    k = len(cm)
    wrong = cm.sum(axis=1) - np.diag(cm)
    parts = [f"{int(wrong.argmin())} is the least misclassified digit ({int(wrong.min())} errors)",
             f"{int(wrong.argmax())} the most ({int(wrong.max())})"]  # fmt: skip
    for c in (8, 3):
        if c < k:
            row = np.where(np.arange(k) == c, -1, cm[c])
            best = [int(j) for j in np.argsort(row, kind="stable")[::-1][:top] if row[j] > 0]
            parts.append(f"{c} is mostly taken for {', '.join(map(str, best)) or 'nothing'}")
    return "; ".join(parts)


def calibration_record(cal: dict, cal_model, model, calibration_images, test_images, n_fit: int) -> dict:
    """What the chapter records about a calibration, computed rather than typed.

    How many calibration images equal a test image, whether the calibration model is the evaluated one,
    sizes, targets, strengths and how many levels were clamped to the grid's ends
    (see :func:`calibrate_severities`).
    """
    return {
        "images_overlap_evaluation": count_shared_images(calibration_images, test_images),
        "uses_evaluated_model": same_weights(cal_model, model),
        "n_calibration_images": len(calibration_images),
        "n_calibration_model_training_images": int(n_fit),
        "calibration_clean_accuracy": cal["clean"],
        "targets": np.asarray(cal["targets"]).tolist(),
        "severity": cal["severity"],
        "clamped_levels": {n: int(sum(c)) for n, c in cal["clamped"].items()},
    }
