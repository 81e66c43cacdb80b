"""Figures of the misclassification-likelihood chapter (Sikar et al.), named after the paper's figures."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from .common import MAX_PANELS_PER_ROW, image_grid, subplots, traced

if TYPE_CHECKING:
    import pandas as pd


@traced
def class_matrices(panels: Sequence[tuple[ArrayLike, str, str, str, str]], size: float = 3.8) -> Figure:
    """Side-by-side annotated K×K heatmaps (confusion matrices, MLMs); returns the figure.

    ``panels`` is a list of ``(matrix, title, fmt, cmap, xlabel)``; rows are always the true class.

    Parameters
    ----------
    panels : sequence of (array_like, str, str, str, str)
        Per panel: the K×K matrix, its title, the annotation format (e.g. ``"d"``, ``".2f"``), the
        colormap and the x-axis label.
    size : float
        Height of one row of panels in inches; the figure is as wide as the book's content.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per matrix, two to a row; long titles are wrapped.

    Examples
    --------
    >>> fig = class_matrices([(np.eye(2), "identity", ".1f", "Blues", "predicted")], size=3)
    >>> len(fig.axes), fig.axes[0].get_title(), fig.axes[0].get_ylabel()
    (1, 'identity', 'true')
    >>> plt.close("all")
    """
    cols = min(len(panels), 2)  # ten annotated columns need half the content width
    rows = -(-len(panels) // cols)
    fig, axes = subplots(rows, cols, height=size * rows, squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.remove()
    for ax, (matrix, title, fmt, cmap, xlabel) in zip(axes.flat, panels, strict=False):
        sns.heatmap(matrix, annot=True, fmt=fmt, cmap=cmap, cbar=False, ax=ax, annot_kws={"size": 7})
        ax.set(title=textwrap.fill(title, 90 // cols), xlabel=xlabel, ylabel="true")
    return fig


@traced
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
        Three panels, two above and one below (see :func:`class_matrices`).

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
    )


@traced
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
    fig, axes = subplots(2, 1 + len(idx), height=4.6, width_ratios=[0.6] + [1] * len(idx))
    for col, i in enumerate(idx):
        axes[0, 1 + col].bar(range(k), probs[i], color="tab:blue")
        axes[0, 1 + col].set(ylabel="softmax", xticks=range(k))
        axes[0, 1 + col].set_title(
            f"image {ids[col]}: label {labels[i]}, nearest centroid {dist[i].argmin()}", fontsize="small"
        )
        axes[1, 1 + col].bar(range(k), dist[i], color="tab:orange")
        axes[1, 1 + col].set(ylabel="distance to centroid", xlabel="class", xticks=range(k))
    for row in range(2):
        if row < len(idx):
            axes[row, 0].imshow(images[idx[row]], cmap="gray_r")
            axes[row, 0].set(title=f"image {ids[row]}")
        axes[row, 0].set(xticks=[], yticks=[])
    return fig


@traced
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
    >>> ax = fig.axes[0]
    >>> [t.get_text() for t in ax.get_xticklabels()], [t.get_text() for t in ax.get_yticklabels()]
    (['clean', 'level 1', 'level 5'], ['gaussian noise'])
    >>> plt.close("all")
    """
    rows = [[clean_image] + [kept[n, lvl][which] for lvl in show_levels] for n in names]
    return image_grid(
        np.stack(rows),
        row_labels=[n.replace("_", " ") for n in names],
        col_labels=["clean"] + [f"level {lvl}" for lvl in show_levels],
        cmap="gray",
    )


@traced
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
        Two panels, one above the other (the heatmap adds a colour-bar axes).

    Examples
    --------
    >>> acc = pd.DataFrame([[0.9, 0.5], [0.8, 0.3]], index=["blur", "gaussian_noise"], columns=[1, 2])
    >>> fig = fig5_7_accuracy(acc, acc.mean().to_numpy(), clean=0.95)
    >>> fig.axes[0].get_title(), fig.axes[1].get_title()
    ('Figure 5: accuracy against level', 'Figure 7: accuracy, perturbation × level')
    >>> plt.close("all")
    """
    levels = list(accuracy.columns)
    fig, axes = subplots(2, 1, height=8.5)
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
    axes[0].legend(fontsize="x-small", ncol=2, loc="center left", bbox_to_anchor=(1, 0.5))
    sns.heatmap(
        accuracy, annot=True, fmt=".2f", cmap="RdBu_r", ax=axes[1], annot_kws={"size": 7},
        yticklabels=[n.replace("_", " ") for n in accuracy.index],
    )  # fmt: skip
    axes[1].set(xlabel="perturbation level", title="Figure 7: accuracy, perturbation × level")
    return fig


def _mean_over(probs: Mapping, names: Sequence[str], levels: list, index: int) -> list:
    """One image's softmax output at each level, averaged over the perturbations ``names``."""
    return [np.mean([probs[n, lvl][index] for n in names], axis=0) for lvl in levels]


@traced
def fig6_one_digit(
    clean_image: np.ndarray,
    clean_probs: ArrayLike,
    kept: Mapping[tuple[str, int], np.ndarray],
    probs: Mapping[tuple[str, int], np.ndarray],
    name: str,
    digit_index: int,
    which: int,
    label: int,
    average_over: Sequence[str] | None = None,
) -> Figure:
    """Figure 6: one test image under increasing levels of one perturbation, and its softmax outputs.

    Top: the perturbed images; below: the softmax output of exactly the image above (red: true class), and
    with ``average_over`` the paper's last row, that output averaged over those perturbations.

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
    average_over : sequence of str, optional
        Perturbations whose outputs the last row averages (each must have been run at every level shown).

    Returns
    -------
    matplotlib.figure.Figure
        The images side by side (clean, then one per level) over their softmax bars (and the averages).

    Raises
    ------
    ValueError
        When ``name`` has no level in ``kept``.

    Examples
    --------
    >>> kept, probs = {("blur", 1): np.zeros((1, 4, 4))}, {("blur", 1): np.array([[0.3, 0.7]])}
    >>> fig = fig6_one_digit(np.zeros((4, 4)), [0.9, 0.1], kept, probs, "blur", 0, 0, label=0)
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['clean', 'level 1']
    >>> len(fig6_one_digit(np.zeros((4, 4)), [0.9, 0.1], kept, probs, "blur", 0, 0, 0, average_over=["blur"]).axes)
    3
    >>> plt.close("all")
    >>> fig6_one_digit(np.zeros((4, 4)), [0.9, 0.1], kept, probs, "rotate", 0, 0, label=0)
    Traceback (most recent call last):
    ValueError: figure perturbation 'rotate' was not run; run it or choose one of the run ones
    """
    levels = sorted(lvl for n, lvl in kept if n == name)
    if not levels:
        raise ValueError(f"figure perturbation {name!r} was not run; run it or choose one of the run ones")
    clean_probs = np.asarray(clean_probs)
    k = len(clean_probs)
    images = [clean_image] + [kept[name, lvl][which] for lvl in levels]
    softmax = [clean_probs] + [probs[name, lvl][digit_index] for lvl in levels]
    rows = [softmax] + (
        [[clean_probs, *_mean_over(probs, average_over, levels, digit_index)]] if average_over else []
    )
    h, w = np.shape(clean_image)
    fig, (top, *bars) = subplots(
        1 + len(rows), 1, height=2.0 + 1.2 * len(rows), sharex=True, height_ratios=[1] + [1.4] * len(rows)
    )
    # one strip of images, one pixel apart; each image's bars sit under it, on the same x axis
    strip = np.full((h, len(images) * (w + 1) - 1), np.nan)
    for col, img in enumerate(images):
        strip[:, col * (w + 1) : col * (w + 1) + w] = img
    top.imshow(strip, cmap=plt.get_cmap("gray").with_extremes(bad="white"), vmin=0, vmax=1, aspect="auto")
    top.set_box_aspect(h / strip.shape[1])
    top.set_anchor("S")
    top.grid(False)
    top.tick_params(length=0, bottom=False, labelbottom=False, labeltop=True)
    centres = np.arange(len(images)) * (w + 1) + (w - 1) / 2
    top.set(xticks=centres, yticks=[])
    top.set_xticklabels(["clean"] + [f"level {lvl}" for lvl in levels], fontsize="small")
    colors = ["tab:red" if c == label else "tab:grey" for c in range(k)]
    slot = w / k
    labels = ["softmax", f"mean of {len(average_over or [])}"]
    for ax, row, ylabel in zip(bars, rows, labels, strict=False):
        for col, soft in enumerate(row):
            ax.bar(col * (w + 1) - 0.5 + slot * (np.arange(k) + 0.5), soft, 0.8 * slot, color=colors)
        ax.set(ylim=(0, 1), yticks=[0, 0.5, 1], ylabel=ylabel)
        ax.tick_params(labelbottom=False)
        ax.grid(axis="x", visible=False)
    fig.suptitle(
        f"Figure 6: test image {digit_index} (class {label}, red bar) under {name.replace('_', ' ')}"
    )
    return fig


@traced
def calibration_curves(
    curves: Mapping[str, tuple[ArrayLike, ArrayLike]],
    targets: Sequence[float] | Mapping[str, Sequence[float]],
) -> Figure:
    """Calibration model's accuracy against strength per perturbation, with the target accuracies.

    Parameters
    ----------
    curves : mapping of str -> (array_like, array_like)
        Per perturbation: the strength grid and the calibration model's accuracy on it.
    targets : sequence of float, or mapping of str -> sequence of float
        Target accuracies (horizontal lines): the same for every perturbation, or each its own.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels per row; unused panels are hidden.

    Examples
    --------
    >>> fig = calibration_curves({"gaussian_noise": ([0, 1, 2], [0.9, 0.6, 0.2])}, targets=[0.5])
    >>> len(fig.axes), fig.axes[0].get_title(), fig.axes[1].axison
    (3, 'gaussian noise', False)
    >>> plt.close("all")
    """
    names = list(curves)
    cols = MAX_PANELS_PER_ROW
    rows = -(-len(names) // cols)
    fig, axes = subplots(rows, cols, height=1.9 * rows + 0.3, squeeze=False)
    for ax, name in zip(axes.flat, names, strict=False):
        grid, acc = curves[name]
        ax.plot(grid, acc, marker=".", lw=1)
        for t in targets[name] if isinstance(targets, Mapping) else targets:
            ax.axhline(t, color="grey", lw=0.4)
        ax.set(title=name.replace("_", " "), ylim=(0, 1))
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    return fig


@traced
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
    fig, axes = subplots(1, 2, height=3.6)
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
    return fig
