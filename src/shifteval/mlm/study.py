"""The MLM paper's experiment (Sikar et al., §3.1, §4): the classifier, its perturbed predictions, readings.

The classifier's training (:func:`train_classifier`), the perturbed predictions the MLMs are computed
from (:func:`perturbed_predictions`), and the chapter's readings of the results (:func:`pooled`,
:func:`confusion_summary`). The perturbations' severities come from :mod:`shifteval.mlm.calibration`;
the matrices themselves from :mod:`shifteval.mlm.matrix`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .calibration import PAPER_CLEAN, PAPER_STATED

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
    """Train the paper's CNN (§3.1, :func:`~shifteval.nets.paper_cnn`) with SGD and cross-entropy.

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

    from ..nets import fit_torch, paper_cnn

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
    >>> from shifteval.nets import paper_cnn
    >>> _ = torch.manual_seed(0)
    >>> x, y = np.random.default_rng(0).random((4, 8, 8)), np.arange(4)
    >>> probs, acc, kept = perturbed_predictions(paper_cnn(8).eval(), x, y, ["fog"], keep=[1])
    >>> probs["fog", 10].shape, acc.shape, kept["fog", 3].shape
    ((4, 10), (1, 10), (1, 8, 8))
    >>> bool(np.allclose(probs["fog", 1].sum(axis=1), 1, atol=1e-5))
    True
    """
    from .. import corruptions
    from ..nets import predict_torch

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


#: The perturbations the paper calls most resilient, and those whose accuracy drops "below 0.6 at higher
#: intensities" (Sikar et al., §4.4).
RESILIENT = ("brightness", "contrast", "fog")
HARSH = ("pixelation", "shot_noise", "zoom_blur")


def paper_statements(accuracy: pd.DataFrame, clean: float, paper_clean: float = PAPER_CLEAN) -> dict:
    """The quantities of Sikar et al.'s §4.4 statements about Figures 5 and 7, on the paper's scale.

    Accuracies are multiplied by ``paper_clean / clean`` (the paper's clean test accuracy over ours), the
    scale the calibration targets use (:func:`shifteval.mlm.calibration_targets`), so that they compare
    with the paper's numbers.

    Parameters
    ----------
    accuracy : pandas.DataFrame
        Accuracy per perturbation (rows) and level (columns 1-10).
    clean : float
        The evaluated model's clean test accuracy.
    paper_clean : float
        The paper's clean test accuracy (§4.1).

    Returns
    -------
    dict
        ``mean`` (level 1, level 10), ``max`` and ``min`` (value, perturbation, level) over all
        perturbations and levels, ``brightness`` (level 1, level 10; None without brightness),
        ``resilient_10`` and ``others_10`` (the mean at level 10 of :data:`RESILIENT` and of the
        perturbations the paper states nothing about, :data:`~shifteval.mlm.calibration.PAPER_STATED`),
        ``harsh_10`` (each of :data:`HARSH` at level 10) and ``rank_10`` (each perturbation's rank at
        level 10, 1 the most accurate) — the last four over the perturbations run.

    Raises
    ------
    ValueError
        If ``clean`` is not in (0, 1] or the columns are not levels 1-10.

    Examples
    --------
    >>> acc = pd.DataFrame(np.linspace(0.9, 0.4, 10)[None, :].repeat(2, 0), index=["fog", "snow"],
    ...                    columns=range(1, 11))
    >>> out = paper_statements(acc, 0.9846)
    >>> out["max"], out["resilient_10"], out["brightness"]
    ((0.9, 'fog', 1), 0.4, None)
    """
    if not 0 < clean <= 1:
        raise ValueError(f"clean must lie in (0, 1], got {clean}")
    if list(accuracy.columns) != list(range(1, 11)):
        raise ValueError(f"accuracy needs the levels 1-10 as columns, got {list(accuracy.columns)}")
    scaled = accuracy * paper_clean / clean
    stacked = scaled.stack()
    (hi_name, hi_level), (lo_name, lo_level) = stacked.idxmax(), stacked.idxmin()
    resilient = [n for n in scaled.index if n in RESILIENT]
    others = [n for n in scaled.index if n not in RESILIENT and n not in PAPER_STATED]
    rank = scaled[10].rank(ascending=False, method="min").astype(int)
    return {
        "mean": (float(scaled[1].mean()), float(scaled[10].mean())),
        "max": (float(stacked.max()), str(hi_name), int(hi_level)),
        "min": (float(stacked.min()), str(lo_name), int(lo_level)),
        "brightness": (
            (float(scaled.loc["brightness", 1]), float(scaled.loc["brightness", 10]))
            if "brightness" in scaled.index
            else None
        ),
        "resilient_10": float(scaled.loc[resilient, 10].mean()) if resilient else None,
        "others_10": float(scaled.loc[others, 10].mean()) if others else None,
        "harsh_10": {n: float(scaled.loc[n, 10]) for n in HARSH if n in scaled.index},
        "rank_10": {str(n): int(r) for n, r in rank.items()},
    }
