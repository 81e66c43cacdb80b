"""Figures of the selection-bias chapter's appendix section (Engstrom et al. 2020, App. D-F)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import ArrayLike


def fig11_gap_vs_annotators(gaps: dict) -> plt.Figure:
    """Engstrom et al., Figure 11 (App. D.1): the v1 - replication gap against the matching votes.

    Parameters
    ----------
    gaps : dict
        :func:`shifteval.selection_study.gap_vs_annotators`'s result.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> rows = [{"annotators": m, "gap": 10 / m, "gap_sd": 0.1, "reweighted_gap": 9 / m} for m in (1, 2, 4)]
    >>> fig = fig11_gap_vs_annotators({"by_annotators": rows, "noise_free": 1.0, "rounds": 2})
    >>> fig.axes[0].get_xlabel()
    'annotators per image used for matching (m)'
    >>> plt.close(fig)
    """
    rows = gaps["by_annotators"]
    m = np.array([r["annotators"] for r in rows])
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar(m, [r["gap"] for r in rows], yerr=[1.96 * r["gap_sd"] for r in rows], fmt="o-", capsize=3,
                label=f"re-matched MatchedFrequency (mean of {gaps['rounds']} rounds, ±1.96 SD)")  # fmt: skip
    ax.plot(m, [r["reweighted_gap"] for r in rows], "s--", label="Eq. (9): pool reweighted to v1's m-vote ŝ")
    ax.axhline(gaps["noise_free"], color="k", ls=":", label="noise-free matching (m → ∞)")
    ax.set_xscale("log")
    ax.set_xticks(m, [str(v) for v in m])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("annotators per image used for matching (m)")
    ax.set_ylabel("v1 − replication accuracy (points)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def fig12_jackknife_by_annotators(
    sizes: ArrayLike, estimates: ArrayLike, names: list, truth: ArrayLike, shown: int = 10
) -> plt.Figure:
    """Engstrom et al., Figure 12 (App. E): each model's n-annotator jackknife estimate against 1/n.

    Parameters
    ----------
    sizes : array_like of int
        Annotator counts n.
    estimates : array_like, shape (len(sizes), models)
        :func:`shifteval.selection_study.jackknife_by_annotators`.
    names : list of str
        Model names.
    truth : array_like
        Each model's ground-truth adjusted accuracy, drawn at 1/n = 0.
    shown : int
        Models drawn, spread evenly over the zoo's accuracy range (the paper shows 10).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> fig = fig12_jackknife_by_annotators([2, 4], [[0.5, 0.6], [0.55, 0.65]], ["a", "b"], [0.6, 0.7])
    >>> len(fig.axes[0].lines)
    4
    >>> plt.close(fig)
    """
    est, truth = np.asarray(estimates, dtype=float), np.asarray(truth, dtype=float)
    order = np.argsort(truth)
    pick = order[np.unique(np.linspace(0, len(order) - 1, min(shown, len(order))).round().astype(int))]
    x = 1 / np.asarray(sizes, dtype=float)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, j in enumerate(pick):
        color = plt.cm.viridis(i / max(1, len(pick) - 1))
        ax.plot(x, 100 * est[:, j], "o-", ms=3, color=color, label=names[j])
        ax.plot([0], [100 * truth[j]], "x", ms=7, color=color)
    ax.set_xlabel("1 / n (n annotators)")
    ax.set_ylabel("jackknife-adjusted accuracy (%)")
    ax.set_title("crosses: ground truth at 1/n = 0")
    ax.legend(fontsize="xx-small", ncol=2)
    fig.tight_layout()
    return fig


def fig13_14_sweeps(acc_v1: ArrayLike, acc_v2: ArrayLike, truth: ArrayLike, sweeps: dict) -> plt.Figure:
    """Engstrom et al., Figures 13 and 14 (App. F.2, F.3): the parametric estimate under other settings.

    v1 against parametrically adjusted v2 accuracy with fewer annotators (left) and with more or fewer
    mixture components (right).

    Parameters
    ----------
    acc_v1, acc_v2, truth : array_like
        Per model: v1 accuracy, observed v2 accuracy, ground-truth adjusted v2 accuracy.
    sweeps : dict
        :func:`shifteval.selection_study.parametric_sweeps`'s result.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> sweeps = {"annotators": [{"annotators": 5, "estimates": [0.5, 0.6]}],
    ...           "components": [{"components": 2, "estimates": [0.5, 0.6]}]}
    >>> fig = fig13_14_sweeps([0.6, 0.7], [0.4, 0.5], [0.52, 0.61], sweeps)
    >>> [ax.get_title() for ax in fig.axes]
    ['Figure 13: annotators', 'Figure 14: mixture components']
    >>> plt.close(fig)
    """
    acc_v1, acc_v2, truth = (100 * np.asarray(v, dtype=float) for v in (acc_v1, acc_v2, truth))
    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharey=True)
    lo = min(acc_v1.min(), acc_v2.min()) - 2
    for ax, key, title in ((axes[0], "annotators", "Figure 13: annotators"),
                           (axes[1], "components", "Figure 14: mixture components")):  # fmt: skip
        ax.plot(acc_v1, acc_v2, "o", ms=3, color="0.6", label="v2 observed")
        for i, row in enumerate(sweeps[key]):
            ax.plot(acc_v1, 100 * np.asarray(row["estimates"]), "o", ms=3, color=f"C{i}",
                    label=f"adjusted, {key} = {row[key]}")  # fmt: skip
        ax.plot(acc_v1, truth, "x", ms=5, color="k", label="ground truth")
        ax.plot([lo, 100], [lo, 100], "k--", lw=1)
        ax.set_xlabel("v1 accuracy (%)")
        ax.set_title(title)
        ax.legend(fontsize="x-small", loc="upper left")
    axes[0].set_ylabel("v2 accuracy (%)")
    fig.tight_layout()
    return fig
