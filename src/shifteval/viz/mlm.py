"""Figures of the misclassification-likelihood chapter (Sikar et al.), named after the paper's figures."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from .common import image_grid


def class_matrices(panels, size: float = 6.0):
    """Side-by-side annotated K×K heatmaps (confusion matrices, MLMs); returns the figure.

    ``panels`` is a list of ``(matrix, title, fmt, cmap, xlabel)``; rows are always the true class.
    """
    fig, axes = plt.subplots(1, len(panels), figsize=(size * len(panels), size - 1), squeeze=False)
    for ax, (matrix, title, fmt, cmap, xlabel) in zip(axes[0], panels, strict=False):
        sns.heatmap(matrix, annot=True, fmt=fmt, cmap=cmap, cbar=False, ax=ax, annot_kws={"size": 7})
        ax.set(title=title, xlabel=xlabel, ylabel="true")
    fig.tight_layout()
    return fig


def fig1_2_confusion_and_mlm(cm, m_perturbed, m_clean):
    """Figure 1 (clean confusion counts) beside Figure 2 (MLM of all perturbed outputs) and the clean MLM."""
    return class_matrices(
        [
            (cm, "Figure 1: confusion matrix, clean test set", "d", "Blues", "predicted"),
            (m_perturbed, "Figure 2: MLM, all perturbed outputs", ".2f", "Reds", "likely confused with"),
            (m_clean, "MLM, clean test set (ours)", ".2f", "Reds", "likely confused with"),
        ],
        size=5.5,
    )


def fig3_4_ambiguous(images, probs, labels, dist, idx, ids=None):
    """Figures 3 and 4: softmax bars (top) and distances to every centroid (bottom) of chosen images.

    ``idx`` indexes the given arrays; ``ids`` (default ``idx``) are the numbers shown in the titles, e.g.
    the images' indices in the training set.
    """
    ids = list(idx) if ids is None else list(ids)
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


def perturbation_grid(kept, names, show_levels, clean_image, which: int = 0):
    """One test image under each perturbation at a few levels, exactly as the model saw it."""
    rows = [[clean_image] + [kept[n, lvl][which] for lvl in show_levels] for n in names]
    return image_grid(
        np.stack(rows),
        row_labels=[n.replace("_", " ") for n in names],
        col_labels=["clean"] + [f"level {lvl}" for lvl in show_levels],
        cmap="gray",
    )


def fig5_7_accuracy(accuracy, mean_by_level, clean, targets=None):
    """Figure 5 (accuracy against level, per perturbation and mean) and Figure 7 (heatmap)."""
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


def fig6_one_digit(clean_image, clean_probs, kept, probs, name, digit_index, which, label):
    """Figure 6: one test image under increasing levels of one perturbation, and its softmax outputs.

    Top: the perturbed images; bottom: the softmax output of exactly the image above (red: true class).
    """
    levels = sorted(lvl for n, lvl in kept if n == name)
    if not levels:
        raise ValueError(f"figure perturbation {name!r} was not run; run it or choose one of the run ones")
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


def calibration_curves(curves, targets):
    """Calibration model's accuracy against strength per perturbation, with the target accuracies."""
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


def rank_agreement(rank, m_clean, rates_mid, mid):
    """Spearman correlation per level (left) and the clean MLM against observed rates at one level."""
    off = ~np.eye(len(m_clean), dtype=bool)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    rank.plot(ax=axes[0], marker="o")
    axes[0].axhline(0, color="grey", lw=0.8)
    axes[0].set(
        ylabel="Spearman ρ over 90 class pairs",
        xticks=list(rank.index),
        title="rank agreement with observed confusions",
    )
    axes[1].scatter(np.asarray(m_clean)[off], np.asarray(rates_mid)[off], s=14)
    axes[1].set(
        xlabel="clean MLM entry",
        ylabel=f"observed confusion rate, level {mid}",
        title=f"the 90 class pairs at level {mid}",
    )
    fig.tight_layout()
    return fig
