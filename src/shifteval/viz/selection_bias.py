"""Figures of the selection-bias chapter (Engstrom et al. 2020)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from .. import selection


def fig3_toy_model(sample, alpha: float, beta: float, n: int = 10, ns=(1, 3, 10, 40, 200)):
    """Engstrom et al. (2020), Figure 3: Eq. (1) against a Monte-Carlo run, and v2's density as ``n`` grows."""
    grid = np.linspace(0.001, 0.999, 400)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    axes[0].hist(sample, bins=np.linspace(0, 1, 41), density=True, alpha=0.4,
                 label=f"simulated, n = {n} ({len(sample):,} accepted)")  # fmt: skip
    axes[0].plot(grid, selection.toy_v2_density(grid, alpha, beta, n), lw=2, label=f"Eq. (1), n = {n}")
    axes[0].plot(grid, stats.beta.pdf(grid, alpha + 1, beta), "k--", lw=1.2, label="p₁ (v1)")
    axes[0].plot(grid, stats.beta.pdf(grid, alpha, beta), "k:", lw=1.2, label="p_flickr (candidates)")
    for m in ns:
        axes[1].plot(grid, selection.toy_v2_density(grid, alpha, beta, m), label=f"n = {m}")
    axes[1].plot(grid, stats.beta.pdf(grid, alpha + 1, beta), "k--", lw=1.2, label="p₁")
    for ax in axes:
        ax.set_xlabel("true selection frequency s")
        ax.set_ylabel("density")
        ax.legend(fontsize="x-small")
    fig.tight_layout()
    return fig


def fig4_fresh_frequencies(counts_v1, counts_v2, annotators: int):
    """Engstrom et al., Figure 4: fresh observed frequencies of v1 and MatchedFrequency."""
    bins = np.arange(annotators + 2) / annotators - 0.5 / annotators
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for counts, name in ((counts_v1, "v1"), (counts_v2, "MatchedFrequency")):
        ax.hist(np.asarray(counts) / annotators, bins=bins, density=True, alpha=0.5, label=name)
    ax.set_xlabel(f"observed selection frequency ({annotators} fresh annotators)")
    ax.set_ylabel("density")
    ax.legend(fontsize="small")
    return fig


def fig5_naive(votes_v2, s_v2, correct_best, best_name: str, curve: dict):
    """Engstrom et al., Figure 5: v2's frequencies and accuracy by frequency as annotators grow; naive error."""
    votes_v2, s_v2, correct_best = np.asarray(votes_v2), np.asarray(s_v2), np.asarray(correct_best)
    n = votes_v2.shape[1]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for m in sorted({2, min(10, n), n}):
        axes[0].hist(votes_v2[:, :m].mean(1), bins=np.linspace(-0.025, 1.025, 22), density=True,
                     histtype="step", lw=1.5, label=f"v2, m = {m}")  # fmt: skip
        k = votes_v2[:, :m].sum(1)
        acc = [correct_best[k == j].mean() if np.any(k == j) else np.nan for j in range(m + 1)]
        axes[1].plot(np.arange(m + 1) / m, acc, "o-", ms=3, label=f"observed ŝ, m = {m}")
    axes[0].hist(s_v2, bins=np.linspace(0, 1, 21), density=True, alpha=0.3, label="v2, true s")
    true_bins = np.clip((s_v2 * 10).astype(int), 0, 9)
    acc_true = [correct_best[true_bins == b].mean() if np.any(true_bins == b) else np.nan for b in range(10)]
    axes[1].plot((np.arange(10) + 0.5) / 10, acc_true, "k^-", label="true s")
    axes[0].set_xlabel("selection frequency")
    axes[1].set_xlabel("selection frequency")
    axes[1].set_ylabel(f"accuracy of {best_name}")
    m = np.asarray(curve["annotators"], dtype=float)
    axes[2].plot(1 / m, curve["error_points"], "o-", label="naive − truth (mean over models)")
    axes[2].plot(
        1 / m,
        np.polyval(curve["line_in_1_over_m"], 1 / m),
        ":",
        color="0.4",
        label="least-squares line in 1/m",
    )
    axes[2].axhline(0, color="0.3", lw=1)
    axes[2].set_xlabel("1 / annotators per image")
    axes[2].set_ylabel("points")
    for ax in axes:
        ax.legend(fontsize="x-small")
    fig.tight_layout()
    return fig


def fig6_estimates(acc_v1, acc_v2, estimates, truth, jack_low, jack_high, boot_low, boot_high, n_boot: int):
    """Engstrom et al., Figure 6: v1 against v2 accuracy, observed, adjusted (with intervals) and true."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.5))
    panels = ((axes[0], "jackknife", jack_low, jack_high, "jackknife (±1.96 se)"),
              (axes[1], "parametric", boot_low, boot_high, f"parametric ({n_boot}-sample bootstrap 95% CI)"))  # fmt: skip
    lo = min(np.min(acc_v2), np.min(acc_v1)) - 0.02
    for ax, col, low, high, title in panels:
        ax.plot(acc_v1, acc_v2, "o", ms=4, color="0.6", label="v2 observed")
        ax.vlines(acc_v1, low, high, color="C0", lw=0.8)
        ax.plot(acc_v1, estimates[col], "o", ms=4, color="C0", label=f"v2 adjusted: {col}")
        ax.plot(acc_v1, truth, "x", ms=5, color="C3", label="ground truth (true s)")
        ax.plot([lo, 1], [lo, 1], "k--", lw=1)
        ax.set_xlabel("v1 accuracy")
        ax.set_ylabel("v2 accuracy")
        ax.set_title(title)
        ax.legend(fontsize="x-small", loc="upper left")
    fig.tight_layout()
    return fig


def fig7_mixtures(panels, annotators: int):
    """Engstrom et al., Figure 7: fitted beta mixtures, the ŝ they imply, the observed ŝ and the true s.

    ``panels`` is a list of ``(name, counts, true_s, mixture)``.
    """
    grid = np.linspace(0.001, 0.999, 400)
    bins = np.arange(annotators + 2) / annotators - 0.5 / annotators
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4))
    for ax, (name, counts, s_true, mix) in zip(np.atleast_1d(axes), panels, strict=True):
        ax.hist(np.asarray(counts) / annotators, bins=bins, density=True, alpha=0.35, label="observed ŝ")
        ax.hist(s_true, bins=np.linspace(0, 1, 26), density=True, histtype="step", lw=1.5, color="k",
                label="true s (world)")  # fmt: skip
        ax.plot(grid, mix.pdf(grid), lw=2, label="fitted mixture p(s)")
        k = np.arange(annotators + 1)
        ax.plot(k / annotators, mix.pmf(k) * annotators, ".", label="implied p(ŝ)")
        ax.set_title(name)
        ax.set_xlabel("selection frequency")
        ax.legend(fontsize="x-small", loc="upper left")
    fig.tight_layout()
    return fig
