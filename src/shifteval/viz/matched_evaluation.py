"""Figures of the matched-evaluation chapter (Anzaku et al.)."""

from __future__ import annotations

import numpy as np


def reliability_diagram(ax, confidence, correct, label: str, bins: int = 10, color=None):
    """Accuracy against confidence in equal-width bins (Anzaku et al., Figures 5 and 8).

    Bins with no example are skipped; marker size grows with the number of examples in the bin.
    """
    confidence, correct = np.asarray(confidence, float), np.asarray(correct, float)
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.digitize(confidence, edges) - 1, 0, bins - 1)
    counts = np.bincount(which, minlength=bins)
    ok = counts > 0
    acc = np.bincount(which, weights=correct, minlength=bins)[ok] / counts[ok]
    conf = np.bincount(which, weights=confidence, minlength=bins)[ok] / counts[ok]
    ax.plot(conf, acc, "-o", color=color, ms=3, lw=1.2, label=f"{label} (n={len(confidence)})")
    ax.scatter(conf, acc, s=8 + 60 * counts[ok] / max(counts.max(), 1), color=color, alpha=0.4)
    ax.plot([0, 1], [0, 1], ls="--", color="0.5", lw=1)
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("predicted probability p̂")
    ax.set_ylabel("accuracy")
    return ax
