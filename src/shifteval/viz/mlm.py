"""Figures of the misclassification-likelihood chapter (Sikar et al.)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns


def class_matrices(panels, size: float = 6.0):
    """Side-by-side annotated K×K heatmaps (confusion matrices, MLMs); returns the figure.

    ``panels`` is a list of ``(matrix, title, fmt, cmap, xlabel)``; rows are always the true class.
    """

    fig, axes = plt.subplots(1, len(panels), figsize=(size * len(panels), size - 1), squeeze=False)
    for ax, (matrix, title, fmt, cmap, xlabel) in zip(axes[0], panels):
        sns.heatmap(matrix, annot=True, fmt=fmt, cmap=cmap, cbar=False, ax=ax, annot_kws={"size": 7})
        ax.set(title=title, xlabel=xlabel, ylabel="true")
    fig.tight_layout()
    return fig
