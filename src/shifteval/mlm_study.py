"""The MLM paper's experimental setting (Sikar et al., §3.1-3.2, §4): training, calibration, perturbation.

The classifier's training (:func:`train_classifier`), the perturbation severities calibrated on a
separate model (:func:`calibrate_severities`, the paper's "trial and error" of §3.2), the perturbed
predictions the MLMs are computed from (:func:`perturbed_predictions`) and the checks the chapter records
about a calibration, and the chapter's readings of the results (:func:`pooled`,
:func:`confusion_summary`). The matrices themselves are in :mod:`shifteval.mlm`, which re-exports every
public name of this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    import torch


def train_classifier(
    images: ArrayLike,
    labels: ArrayLike,
    *,
    epochs: int = 10,
    lr: float = 0.01,
    lr_decay: float = 0.7,
    batch_size: int = 64,
    seed: int = 0,
    progress: Any = None,
) -> torch.nn.Module:
    """Train the paper's CNN (§3.1, :func:`~shifteval.zoo.models.paper_cnn`) with SGD and cross-entropy.

    The paper gives SGD, learning rate 0.01, batch 64, 10 epochs and the 0.5/0.5 normalisation (§3.1,
    §4.1). Ours, not the paper's: momentum 0.9 and the learning rate multiplied by ``lr_decay`` after
    each epoch (``lr_decay=1`` keeps it constant).

    Parameters
    ----------
    images : array_like, shape (N, S, S)
        Square grayscale training images in [0, 1].
    labels : array_like, shape (N,)
        Their classes, 0..9.
    epochs, batch_size : int
        Passes over the training set, and images per SGD step.
    lr, lr_decay : float
        Initial learning rate, and the factor applied to it after every epoch.
    seed : int
        Seeds the initialisation and the batch order.
    progress : tqdm-like, optional
        Advanced once per epoch.

    Returns
    -------
    torch.nn.Module
        The trained model, in eval mode.

    Raises
    ------
    ValueError
        If ``images`` is not an (N, S, S) stack of squares.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> model = train_classifier(rng.random((16, 8, 8)), rng.integers(0, 10, 16), epochs=1, batch_size=8)
    >>> model.training
    False
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

    Parameters
    ----------
    clean_accuracy : float
        The calibration model's accuracy on the unperturbed calibration images, in (0, 1].

    Returns
    -------
    ndarray, shape (10,)
        Target accuracy of levels 1-10, decreasing.

    Raises
    ------
    ValueError
        If ``clean_accuracy`` is not in (0, 1].

    Examples
    --------
    >>> calibration_targets(0.9846)[[0, -1]].round(4).tolist()
    [0.9761, 0.4883]
    >>> calibration_targets(0.5).shape
    (10,)
    """
    if not 0 < clean_accuracy <= 1:
        raise ValueError(f"clean_accuracy must lie in (0, 1], got {clean_accuracy}")
    return clean_accuracy * np.linspace(PAPER_LEVEL1, PAPER_LEVEL10, 10) / PAPER_CLEAN


def calibration_split(n: int, n_calibration: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(fit, calibration)`` splitting ``n`` training images (disjoint, random, sorted).

    The calibration model learns from ``fit``; severities are set on ``calibration``.

    Parameters
    ----------
    n : int
        Number of training images.
    n_calibration : int
        How many go to the calibration set, 1..n-1.
    seed : int
        Seed of the random split.

    Returns
    -------
    fit, calibration : ndarray of int
        Sorted indices, ``n - n_calibration`` and ``n_calibration`` of them, together ``0..n-1``.

    Raises
    ------
    ValueError
        If ``n_calibration`` is not in 1..n-1.

    Examples
    --------
    >>> fit, cal = calibration_split(10, 3)
    >>> len(fit), len(cal), sorted(fit.tolist() + cal.tolist()) == list(range(10))
    (7, 3, True)
    """
    if not 0 < n_calibration < n:
        raise ValueError(f"n_calibration must lie in 1..{n - 1}, got {n_calibration}")
    perm = np.random.default_rng([int(seed), 15]).permutation(n)
    return np.sort(perm[n_calibration:]), np.sort(perm[:n_calibration])


def count_shared_images(a: ArrayLike, b: ArrayLike) -> int:
    """How many images of ``a`` are byte-for-byte equal to some image of ``b`` (overlap check).

    Parameters
    ----------
    a, b : array_like, shape (N, H, W) and (M, H, W)
        Two image stacks of the same dtype.

    Returns
    -------
    int
        Number of images of ``a`` (with multiplicity) that also occur in ``b``.

    Examples
    --------
    >>> a = np.arange(12, dtype=np.uint8).reshape(3, 2, 2)
    >>> count_shared_images(a, a[[0, 2]]), count_shared_images(a, a[:0])
    (2, 0)
    """
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    seen = {img.tobytes() for img in b}
    return int(sum(img.tobytes() in seen for img in a))


def same_weights(model_a: torch.nn.Module, model_b: torch.nn.Module) -> bool:
    """True when two torch models are the same object or hold identical parameters.

    Parameters
    ----------
    model_a, model_b : torch.nn.Module
        The models compared.

    Returns
    -------
    bool
        Whether every parameter tensor has the same shape and values in both.

    Examples
    --------
    >>> import copy, torch
    >>> a = torch.nn.Linear(2, 2)
    >>> same_weights(a, copy.deepcopy(a)), same_weights(a, torch.nn.Linear(3, 2))
    (True, False)
    """
    import torch

    if model_a is model_b:
        return True
    pa, pb = list(model_a.parameters()), list(model_b.parameters())
    return len(pa) == len(pb) and all(
        x.shape == y.shape and torch.equal(x, y) for x, y in zip(pa, pb, strict=False)
    )


def calibrate_severities(
    model: torch.nn.Module,
    images: ArrayLike,
    labels: ArrayLike,
    *,
    points: int = 24,
    seed: int = 0,
    names: Sequence[str] | None = None,
) -> dict:
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
    dict
        ``severity`` (name -> 10 strengths), ``targets``, ``clean`` (calibration accuracy),
        ``clamped`` (name -> 10 bools) and ``curves`` (name -> (grid, accuracy)).

    Raises
    ------
    ValueError
        If a name is not a perturbation of :data:`shifteval.corruptions.CORRUPTIONS`, or ``points < 2``.

    Examples
    --------
    >>> import torch
    >>> from shifteval.zoo.models import paper_cnn
    >>> _ = torch.manual_seed(0)
    >>> x, y = np.random.default_rng(0).random((8, 8, 8)), np.arange(8)
    >>> cal = calibrate_severities(paper_cnn(8).eval(), x, y, points=3, names=["fog"])
    >>> len(cal["severity"]["fog"]), len(cal["curves"]["fog"][1]), sorted(cal)
    (10, 3, ['clamped', 'clean', 'curves', 'severity', 'targets'])
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
    curves: dict[str, tuple[list[float], list[float]]] = {}
    severity: dict[str, list[float]] = {}
    clamped: dict[str, list[bool]] = {}

    def accuracy_at(name, t):
        acc = float(
            (predict_torch(model, corruptions.apply(images, name, t, seed)).argmax(1) == labels).mean()
        )
        curves[name][1].append(acc)
        return acc

    for name in names:
        grid = np.linspace(*corruptions.GRIDS[name], points)
        curves[name] = (grid.tolist(), [])
        both = corruptions.calibrate(accuracy_at, name, grid, list(targets), True)  # return_clamped: a pair
        severity[name], clamped[name] = cast(tuple[list[float], list[bool]], both)
    return {"severity": severity, "targets": targets, "clean": clean, "clamped": clamped, "curves": curves}


def perturbed_predictions(
    model: torch.nn.Module,
    images: ArrayLike,
    labels: ArrayLike,
    names: Sequence[str],
    *,
    severity: dict | None = None,
    seed: int = 0,
    keep: ArrayLike = (),
    progress: Any = None,
) -> tuple[dict, pd.DataFrame, dict]:
    """Softmax outputs of ``model`` on ``images`` under every perturbation at levels 1-10 (§3.2).

    Parameters
    ----------
    model : torch.nn.Module
        The evaluated classifier.
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

    Examples
    --------
    >>> import torch
    >>> from shifteval.zoo.models import paper_cnn
    >>> _ = torch.manual_seed(0)
    >>> x, y = np.random.default_rng(0).random((4, 8, 8)), np.arange(4)
    >>> probs, acc, kept = perturbed_predictions(paper_cnn(8).eval(), x, y, ["fog"], keep=[1])
    >>> probs["fog", 10].shape, acc.shape, kept["fog", 3].shape
    ((4, 10), (1, 10), (1, 8, 8))
    >>> bool(np.allclose(probs["fog", 1].sum(axis=1), 1, atol=1e-5))
    True
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


def calibration_record(
    cal: dict,
    cal_model: torch.nn.Module,
    model: torch.nn.Module,
    calibration_images: ArrayLike,
    test_images: ArrayLike,
    n_fit: int,
) -> dict:
    """What the chapter records about a calibration, computed rather than typed.

    How many calibration images equal a test image, whether the calibration model is the evaluated one,
    sizes, targets, strengths and how many levels were clamped to the grid's ends
    (see :func:`calibrate_severities`).

    Parameters
    ----------
    cal : dict
        The result of :func:`calibrate_severities`.
    cal_model, model : torch.nn.Module
        The calibration model and the evaluated model.
    calibration_images, test_images : array_like, shape (N, H, W)
        The images severities were set on, and the evaluated test images.
    n_fit : int
        How many images the calibration model was trained on.

    Returns
    -------
    dict
        JSON-ready record: overlap count, ``uses_evaluated_model``, sizes, clean accuracy, targets,
        severities and the number of clamped levels per perturbation.

    Examples
    --------
    >>> import torch
    >>> cal = {"clean": 0.9, "targets": calibration_targets(0.9), "severity": {"fog": [0.1] * 10},
    ...        "clamped": {"fog": [False] * 9 + [True]}}
    >>> m, x = torch.nn.Linear(2, 2), np.zeros((3, 8, 8))
    >>> rec = calibration_record(cal, m, m, x, x[:1], n_fit=5)
    >>> rec["images_overlap_evaluation"], rec["uses_evaluated_model"], rec["clamped_levels"]
    (3, True, {'fog': 1})
    """
    return {
        "images_overlap_evaluation": count_shared_images(calibration_images, test_images),
        "uses_evaluated_model": same_weights(cal_model, model),
        "n_calibration_images": len(np.asarray(calibration_images)),
        "n_calibration_model_training_images": int(n_fit),
        "calibration_clean_accuracy": cal["clean"],
        "targets": np.asarray(cal["targets"]).tolist(),
        "severity": cal["severity"],
        "clamped_levels": {n: int(sum(c)) for n, c in cal["clamped"].items()},
    }


def pooled(
    probs: dict, labels: ArrayLike, names: Sequence[str], levels: Sequence[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """All perturbed outputs stacked: ``(probs, labels)`` over the given perturbations and levels.

    Parameters
    ----------
    probs : dict (name, level) -> ndarray (N, K)
        As returned by :func:`perturbed_predictions`.
    labels : array_like, shape (N,)
        The test labels, the same for every key.
    names : sequence of str
        Perturbations to pool.
    levels : sequence of int, optional
        Levels to pool (default every level present in ``probs``).

    Returns
    -------
    probs : ndarray, shape (N · len(names) · len(levels), K)
    labels : ndarray
        ``labels`` repeated once per (name, level).

    Examples
    --------
    >>> d = {("fog", 1): np.eye(2), ("fog", 2): np.eye(2), ("snow", 1): np.eye(2)}
    >>> p, y = pooled(d, [0, 1], ["fog"])
    >>> p.shape, y.tolist()
    ((4, 2), [0, 1, 0, 1])
    """
    levels = sorted({lvl for _, lvl in probs}) if levels is None else list(levels)
    keys = [(n, lvl) for n in names for lvl in levels]
    return np.concatenate([probs[k] for k in keys]), np.tile(np.asarray(labels), len(keys))


def confusion_summary(counts: ArrayLike, top: int = 3) -> str:
    """A §4.1-style reading of a confusion matrix of counts, as one sentence.

    Least and most misclassified classes, and the classes the paper discusses (8 and 3) with their most
    frequent wrong predictions.

    Parameters
    ----------
    counts : array_like, shape (K, K)
        Confusion matrix of counts (rows: true class).
    top : int
        How many wrong predictions to name for classes 8 and 3.

    Returns
    -------
    str
        Clauses joined by ``"; "``.

    Examples
    --------
    >>> confusion_summary([[5, 1, 0, 0], [2, 3, 1, 0], [0, 0, 6, 0], [0, 2, 1, 4]])
    '2 is the least misclassified digit (0 errors); 1 the most (3); 3 is mostly taken for 1, 2'
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
