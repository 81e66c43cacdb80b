"""Figures of the misclassification-likelihood chapter (Sikar et al.), named after the paper's figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from .common import image_grid

if TYPE_CHECKING:
    import pandas as pd


def class_matrices(panels: Sequence[tuple[ArrayLike, str, str, str, str]], size: float = 6.0) -> Figure:
    """Side-by-side annotated K×K heatmaps (confusion matrices, MLMs); returns the figure.

    ``panels`` is a list of ``(matrix, title, fmt, cmap, xlabel)``; rows are always the true class.

    Parameters
    ----------
    panels : sequence of (array_like, str, str, str, str)
        Per panel: the K×K matrix, its title, the annotation format (e.g. ``"d"``, ``".2f"``), the
        colormap and the x-axis label.
    size : float
        Width of one panel in inches (the height is ``size - 1``).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per matrix.

    Examples
    --------
    >>> fig = class_matrices([(np.eye(2), "identity", ".1f", "Blues", "predicted")], size=3)
    >>> len(fig.axes), fig.axes[0].get_title(), fig.axes[0].get_ylabel()
    (1, 'identity', 'true')
    >>> plt.close("all")
    """
    fig, axes = plt.subplots(1, len(panels), figsize=(size * len(panels), size - 1), squeeze=False)
    for ax, (matrix, title, fmt, cmap, xlabel) in zip(axes[0], panels, strict=False):
        sns.heatmap(matrix, annot=True, fmt=fmt, cmap=cmap, cbar=False, ax=ax, annot_kws={"size": 7})
        ax.set(title=title, xlabel=xlabel, ylabel="true")
    fig.tight_layout()
    return fig


def fig1_2_confusion_and_mlm(cm: ArrayLike, m_perturbed: ArrayLike, m_clean: ArrayLike) -> Figure:
    """Figure 1 (clean confusion counts) beside Figure 2 (MLM of all perturbed outputs) and the clean MLM.

    Parameters
    ----------
    cm : array_like of int, shape (K, K)
        Confusion counts on the clean test set (rows: true class).
    m_perturbed, m_clean : array_like, shape (K, K)
        Misclassification-likelihood matrices of all perturbed outputs and of the clean test set.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels (see :func:`class_matrices`).

    Examples
    --------
    >>> m = np.full((2, 2), 0.5)
    >>> fig = fig1_2_confusion_and_mlm(np.array([[5, 1], [2, 4]]), m, m)
    >>> [ax.get_title().split(":")[0] for ax in fig.axes]
    ['Figure 1', 'Figure 2', 'MLM, clean test set (ours)']
    >>> plt.close("all")
    """
    return class_matrices(
        [
            (cm, "Figure 1: confusion matrix, clean test set", "d", "Blues", "predicted"),
            (m_perturbed, "Figure 2: MLM, all perturbed outputs", ".2f", "Reds", "likely confused with"),
            (m_clean, "MLM, clean test set (ours)", ".2f", "Reds", "likely confused with"),
        ],
        size=5.5,
    )


def fig3_4_ambiguous(
    images: ArrayLike,
    probs: np.ndarray,
    labels: ArrayLike,
    dist: np.ndarray,
    idx: Sequence[int],
    ids: Sequence[int] | None = None,
) -> Figure:
    """Figures 3 and 4: softmax bars (top) and distances to every centroid (bottom) of chosen images.

    ``idx`` indexes the given arrays; ``ids`` (default ``idx``) are the numbers shown in the titles, e.g.
    the images' indices in the training set.

    Parameters
    ----------
    images : array_like, shape (N, H, W)
        The images (the first two chosen ones are shown in the left column).
    probs : ndarray, shape (N, K)
        Softmax outputs.
    labels : array_like of int, shape (N,)
        True classes.
    dist : ndarray, shape (N, K)
        Distance of each image to every class centroid.
    idx : sequence of int
        The chosen images (indices into the arrays), one column each.
    ids : sequence of int, optional
        Numbers shown in the titles.

    Returns
    -------
    matplotlib.figure.Figure
        A 2 × (1 + ``len(idx)``) grid of panels.

    Examples
    --------
    >>> probs, dist = np.array([[0.6, 0.4], [0.1, 0.9]]), np.array([[2.0, 1.0], [3.0, 0.5]])
    >>> fig = fig3_4_ambiguous(np.zeros((2, 4, 4)), probs, [0, 1], dist, idx=[0, 1], ids=[10, 11])
    >>> len(fig.axes), fig.axes[1].get_title()
    (6, 'image 10: label 0, nearest centroid 1')
    >>> plt.close("all")
    """
    ids = list(idx) if ids is None else list(ids)
    images, labels = np.asarray(images), np.asarray(labels)
    k = probs.shape[1]
    fig, axes = plt.subplots(2, 1 + len(idx), figsize=(4 + 5 * len(idx), 5.5))
    for col, i in enumerate(idx):
        axes[0, 1 + col].bar(range(k), probs[i], color="tab:blue")
        axes[0, 1 + col].set(
            title=f"image {ids[col]}: label {labels[i]}, nearest centroid {dist[i].argmin()}",
            ylabel="softmax",
            xticks=range(k),
        )
        axes[1, 1 + col].bar(range(k), dist[i], color="tab:orange")
        axes[1, 1 + col].set(ylabel="distance to centroid", xlabel="class", xticks=range(k))
    for row in range(2):
        if row < len(idx):
            axes[row, 0].imshow(images[idx[row]], cmap="gray_r")
            axes[row, 0].set(title=f"image {ids[row]}")
        axes[row, 0].set(xticks=[], yticks=[])
    fig.tight_layout()
    return fig


def perturbation_grid(
    kept: Mapping[tuple[str, int], np.ndarray],
    names: Sequence[str],
    show_levels: Sequence[int],
    clean_image: np.ndarray,
    which: int = 0,
) -> Figure:
    """One test image under each perturbation at a few levels, exactly as the model saw it.

    Parameters
    ----------
    kept : mapping of (str, int) -> ndarray, shape (n, H, W)
        Perturbed images kept per ``(perturbation, level)``.
    names : sequence of str
        Perturbations, one row each.
    show_levels : sequence of int
        Levels, one column each (after the clean image).
    clean_image : ndarray, shape (H, W)
        The unperturbed image.
    which : int
        Which of the kept images to show.

    Returns
    -------
    matplotlib.figure.Figure
        See :func:`shifteval.viz.common.image_grid`.

    Examples
    --------
    >>> kept = {("gaussian_noise", lvl): np.full((1, 4, 4), lvl / 10) for lvl in (1, 5)}
    >>> fig = perturbation_grid(kept, ["gaussian_noise"], [1, 5], np.zeros((4, 4)))
    >>> [ax.get_title() for ax in fig.axes], fig.axes[0].get_ylabel()
    (['clean', 'level 1', 'level 5'], 'gaussian noise')
    >>> plt.close("all")
    """
    rows = [[clean_image] + [kept[n, lvl][which] for lvl in show_levels] for n in names]
    return image_grid(
        np.stack(rows),
        row_labels=[n.replace("_", " ") for n in names],
        col_labels=["clean"] + [f"level {lvl}" for lvl in show_levels],
        cmap="gray",
    )


def fig5_7_accuracy(
    accuracy: pd.DataFrame, mean_by_level: ArrayLike, clean: float, targets: ArrayLike | None = None
) -> Figure:
    """Figure 5 (accuracy against level, per perturbation and mean) and Figure 7 (heatmap).

    Parameters
    ----------
    accuracy : pandas.DataFrame
        Accuracy per perturbation (rows) and level (columns).
    mean_by_level : array_like
        Mean accuracy over perturbations at each level.
    clean : float
        Accuracy on the clean test set (dotted line).
    targets : array_like, optional
        Calibration target accuracy at each level (dashed line).

    Returns
    -------
    matplotlib.figure.Figure
        Two panels (the heatmap adds a colour-bar axes).

    Examples
    --------
    >>> acc = pd.DataFrame([[0.9, 0.5], [0.8, 0.3]], index=["blur", "gaussian_noise"], columns=[1, 2])
    >>> fig = fig5_7_accuracy(acc, acc.mean().to_numpy(), clean=0.95)
    >>> fig.axes[0].get_title(), fig.axes[1].get_title()
    ('Figure 5: accuracy against level', 'Figure 7: accuracy, perturbation × level')
    >>> plt.close("all")
    """
    levels = list(accuracy.columns)
    fig, axes = plt.subplots(1, 2, figsize=(14, 5), gridspec_kw={"width_ratios": [1, 1.25]})
    for name in accuracy.index:
        axes[0].plot(levels, accuracy.loc[name], marker=".", lw=1, label=name.replace("_", " "))
    axes[0].plot(levels, mean_by_level, color="black", lw=3, label="mean")
    if targets is not None:
        axes[0].plot(levels, targets, color="black", ls="--", lw=1, label="calibration target")
    axes[0].axhline(clean, color="grey", ls=":", label="clean")
    axes[0].set(
        xlabel="perturbation level",
        ylabel="accuracy",
        title="Figure 5: accuracy against level",
        xticks=levels,
    )
    axes[0].legend(fontsize=7, ncol=2)
    sns.heatmap(
        accuracy, annot=True, fmt=".2f", cmap="RdBu_r", ax=axes[1], annot_kws={"size": 7},
        yticklabels=[n.replace("_", " ") for n in accuracy.index],
    )  # fmt: skip
    axes[1].set(xlabel="perturbation level", title="Figure 7: accuracy, perturbation × level")
    fig.tight_layout()
    return fig


def fig6_one_digit(
    clean_image: np.ndarray,
    clean_probs: ArrayLike,
    kept: Mapping[tuple[str, int], np.ndarray],
    probs: Mapping[tuple[str, int], np.ndarray],
    name: str,
    digit_index: int,
    which: int,
    label: int,
) -> Figure:
    """Figure 6: one test image under increasing levels of one perturbation, and its softmax outputs.

    Top: the perturbed images; bottom: the softmax output of exactly the image above (red: true class).

    Parameters
    ----------
    clean_image : ndarray, shape (H, W)
        The unperturbed image.
    clean_probs : array_like, shape (K,)
        Its softmax output.
    kept : mapping of (str, int) -> ndarray, shape (n, H, W)
        Perturbed images kept per ``(perturbation, level)``.
    probs : mapping of (str, int) -> ndarray, shape (N, K)
        Softmax outputs on the whole perturbed test set per ``(perturbation, level)``.
    name : str
        The perturbation to show.
    digit_index : int
        The image's index in the test set (row of ``probs``).
    which : int
        The image's index among the kept images.
    label : int
        Its true class.

    Returns
    -------
    matplotlib.figure.Figure
        Two rows, one column for the clean image and one per level.

    Raises
    ------
    ValueError
        When ``name`` has no level in ``kept``.

    Examples
    --------
    >>> kept, probs = {("blur", 1): np.zeros((1, 4, 4))}, {("blur", 1): np.array([[0.3, 0.7]])}
    >>> fig = fig6_one_digit(np.zeros((4, 4)), [0.9, 0.1], kept, probs, "blur", 0, 0, label=0)
    >>> [ax.get_title() for ax in fig.axes[:2]]
    ['clean', 'level 1']
    >>> fig6_one_digit(np.zeros((4, 4)), [0.9, 0.1], kept, probs, "rotate", 0, 0, label=0)
    Traceback (most recent call last):
    ValueError: figure perturbation 'rotate' was not run; run it or choose one of the run ones
    >>> plt.close("all")
    """
    levels = sorted(lvl for n, lvl in kept if n == name)
    if not levels:
        raise ValueError(f"figure perturbation {name!r} was not run; run it or choose one of the run ones")
    clean_probs = np.asarray(clean_probs)
    k = len(clean_probs)
    fig, axes = plt.subplots(2, len(levels) + 1, figsize=(1.5 * (len(levels) + 1), 3.6))
    colors = ["tab:red" if c == label else "tab:grey" for c in range(k)]
    for col, lvl in enumerate([0] + levels):
        img = clean_image if lvl == 0 else kept[name, lvl][which]
        soft = clean_probs if lvl == 0 else probs[name, lvl][digit_index]
        axes[0, col].imshow(img, cmap="gray", vmin=0, vmax=1)
        axes[0, col].set(xticks=[], yticks=[], title="clean" if lvl == 0 else f"level {lvl}")
        axes[1, col].bar(range(k), soft, color=colors)
        axes[1, col].set(ylim=(0, 1), xticks=[], yticks=[] if col else [0, 0.5, 1])
    fig.suptitle(
        f"Figure 6: test image {digit_index} (class {label}, red bar) under {name.replace('_', ' ')}", y=1.02
    )
    fig.tight_layout()
    return fig


def calibration_curves(curves: Mapping[str, tuple[ArrayLike, ArrayLike]], targets: Sequence[float]) -> Figure:
    """Calibration model's accuracy against strength per perturbation, with the target accuracies.

    Parameters
    ----------
    curves : mapping of str -> (array_like, array_like)
        Per perturbation: the strength grid and the calibration model's accuracy on it.
    targets : sequence of float
        Target accuracies (horizontal lines).

    Returns
    -------
    matplotlib.figure.Figure
        Four panels per row; unused panels are hidden.

    Examples
    --------
    >>> fig = calibration_curves({"gaussian_noise": ([0, 1, 2], [0.9, 0.6, 0.2])}, targets=[0.5])
    >>> len(fig.axes), fig.axes[0].get_title(), fig.axes[1].axison
    (4, 'gaussian noise', False)
    >>> plt.close("all")
    """
    names = list(curves)
    cols = 4
    fig, axes = plt.subplots(
        int(np.ceil(len(names) / cols)), cols, figsize=(14, 2.6 * np.ceil(len(names) / cols)), squeeze=False
    )
    for ax, name in zip(axes.flat, names, strict=False):
        grid, acc = curves[name]
        ax.plot(grid, acc, marker=".", lw=1)
        for t in targets:
            ax.axhline(t, color="grey", lw=0.4)
        ax.set(title=name.replace("_", " "), ylim=(0, 1))
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def rank_agreement(rank: pd.DataFrame, m_clean: ArrayLike, rates_mid: ArrayLike, mid: int) -> Figure:
    """Spearman correlation per level (left) and the clean MLM against observed rates at one level.

    Parameters
    ----------
    rank : pandas.DataFrame
        Spearman correlations, one row per level (the index), one column per compared matrix.
    m_clean : array_like, shape (K, K)
        The clean MLM.
    rates_mid : array_like, shape (K, K)
        Observed confusion rates at level ``mid``.
    mid : int
        The level shown on the right.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels; the right one plots the K(K - 1) off-diagonal pairs.

    Examples
    --------
    >>> rank = pd.DataFrame({"clean MLM": [0.2, 0.5]}, index=[1, 2])
    >>> m = np.arange(9.0).reshape(3, 3)
    >>> fig = rank_agreement(rank, m, m / 10, mid=2)
    >>> len(fig.axes[1].collections[0].get_offsets()), fig.axes[1].get_title()  # 3 × 2 off-diagonal pairs
    (6, 'the 6 class pairs at level 2')
    >>> plt.close("all")
    """
    off = ~np.eye(len(np.asarray(m_clean)), dtype=bool)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    rank.plot(ax=axes[0], marker="o")
    axes[0].axhline(0, color="grey", lw=0.8)
    axes[0].set(
        ylabel=f"Spearman ρ over {int(off.sum())} class pairs",
        xticks=list(rank.index),
        title="rank agreement with observed confusions",
    )
    axes[1].scatter(np.asarray(m_clean)[off], np.asarray(rates_mid)[off], s=14)
    axes[1].set(
        xlabel="clean MLM entry",
        ylabel=f"observed confusion rate, level {mid}",
        title=f"the {int(off.sum())} class pairs at level {mid}",
    )
    fig.tight_layout()
    return fig
