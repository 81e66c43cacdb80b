"""Figures of the OOD-aware AutoEval chapter (Zhu et al. 2023)."""

from __future__ import annotations

import numpy as np


def energy_histograms(ax, energies: dict, threshold: float, title: str | None = None, bins: int = 60):
    """Step histograms of energy scores, one per set (``{label: energies}``), with the OOD threshold.

    Zhu et al. (§3.5) exclude every image whose energy lies right of the line.
    """
    values = np.concatenate([np.asarray(v, float) for v in energies.values()])
    lo, hi = np.percentile(values, [0.5, 99.5])
    edges = np.linspace(min(lo, threshold), max(hi, threshold), bins + 1)
    for label, e in energies.items():
        ax.hist(
            np.clip(e, edges[0], edges[-1]), bins=edges, density=True, histtype="step", lw=1.6, label=label
        )
    ax.axvline(threshold, color="black", ls="--", lw=1.2, label="threshold")
    ax.set(xlabel="energy E(x)", ylabel="density", title=title)
    ax.legend(fontsize="x-small")
    return ax
