"""Figures of the replication-world chapter."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns


def frequency_histograms(ax, observed, true, title: str | None = None):
    """Observed (annotator) vs. true selection frequencies of one test set (Engstrom et al. 2020, Fig. 4)."""
    ax.hist(
        np.asarray(observed),
        bins=np.linspace(-0.05, 1.05, 12),
        alpha=0.55,
        color="#2980b9",
        label=f"observed ŝ (mean {np.mean(observed):.3f})",
        density=True,
    )
    ax.hist(
        np.asarray(true),
        bins=np.linspace(0, 1, 21),
        histtype="step",
        lw=1.8,
        color="#c0392b",
        label=f"true s (mean {np.mean(true):.3f})",
        density=True,
    )
    ax.set_xlabel("selection frequency")
    ax.set_ylabel("density")
    ax.legend(fontsize="x-small", loc="upper left")
    if title:
        ax.set_title(title)
    return ax


def accuracy_change_panel(ax, table, strategies, reference: str = "v1", labels=None):
    """Each model's accuracy on each replicated set against its v1 accuracy (points), with y = x."""
    colors = sns.color_palette("deep", len(strategies))
    lo = min(table[[reference, *strategies]].min()) - 0.02
    hi = min(1.0, max(table[[reference, *strategies]].max()) + 0.02)
    for color, s in zip(colors, strategies):
        ax.plot(table[reference], table[s], "o", ms=4, color=color, label=(labels or {}).get(s, s))
    ax.plot([lo, hi], [lo, hi], ls="--", color="0.4", lw=1, label="y = x")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{100 * v:.0f}"))
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{100 * v:.0f}"))
    ax.set_xlabel(f"accuracy on {reference} (%)")
    ax.set_ylabel("accuracy on the replicated set (%)")
    ax.legend(fontsize="small", loc="upper left")
    return ax
