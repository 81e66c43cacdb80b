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
    for color, s in zip(colors, strategies, strict=True):
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


def fig1_example_grid(world, levels: int = 9, seed: int | None = None):
    """One base digit per class rendered at increasing difficulty (rows: classes; columns: ``d``).

    The world's analogue of the example images of Recht et al. (2019), Figure 15: what a rising
    latent difficulty does to an image.
    """
    from ..datasets import world as worlds
    from .common import image_grid

    rng = np.random.default_rng(world.config.seed if seed is None else seed)
    bases, base_labels = worlds.base_digits(16)
    ds = np.linspace(0, 1, levels)
    picks = [int(rng.choice(np.flatnonzero(base_labels == c))) for c in range(10)]
    grid = np.stack([worlds.render(np.repeat(bases[[b]], len(ds), axis=0), ds, rng) for b in picks])
    return image_grid(grid, row_labels=[str(c) for c in range(10)], col_labels=[f"d={v:.2f}" for v in ds])


def fig2_difficulty(world):
    """Difficulty histograms of both candidate pools, v1 after the majority filter, and the replicated sets."""
    from ..datasets.world import STRATEGIES

    ex = world.examples
    fig, ax = plt.subplots(figsize=(7, 3.6))
    bins = np.linspace(0, 1, 26)
    ax.hist(
        world.candidates_original["d"], bins=bins, density=True, alpha=0.4, label="original candidate pool"
    )
    ax.hist(ex.loc[world.split_index("v1"), "d"], bins=bins, density=True, histtype="step", lw=2,
            label="v1 (kept by majority)")  # fmt: skip
    ax.hist(
        ex.loc[world.split_index("pool"), "d"], bins=bins, density=True, alpha=0.4, label="replication pool"
    )
    for s in STRATEGIES:
        ax.hist(
            ex.loc[world.split_index(s), "d"],
            bins=bins,
            density=True,
            histtype="step",
            lw=1.2,
            ls="--",
            label=s,
        )
    ax.set_xlabel("difficulty d")
    ax.set_ylabel("density")
    ax.legend(fontsize="x-small", ncol=2)
    return fig


def fig3_frequencies(world):
    """Observed vs true selection frequencies of v1 and the three replicated sets (Engstrom et al., Fig. 4)."""
    from ..datasets.world import STRATEGIES

    s_true = world.examples["s"].to_numpy()
    pool = world.split_index("pool")
    position = {int(i): k for k, i in enumerate(pool)}
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.4), sharey=True)
    frequency_histograms(axes[0], world.replication.v1_freq, s_true[world.split_index("v1")], title="v1")
    for ax, s in zip(axes[1:], STRATEGIES, strict=True):
        idx = world.split_index(s)
        rows = [position[int(i)] for i in idx]
        frequency_histograms(ax, world.replication.pool_freq[rows], s_true[idx], title=s)
    fig.tight_layout()
    return fig


def fig4_accuracy_change(table, strategies):
    """Every model's replicated-set accuracy against its v1 accuracy (Recht et al., Figure 1's layout)."""
    fig, ax = plt.subplots(figsize=(6.2, 6))
    accuracy_change_panel(ax, table, strategies)
    return fig


def fig5_ablation(changes: dict, ablation_changes: dict, built_label: str, ablation_label: str):
    """Mean accuracy change per strategy, as built and with the ablation's frequencies (points)."""
    labels = list(changes)
    x = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(7, 3.4))
    ax.bar(x - 0.2, [100 * changes[s]["mean_change"] for s in labels], 0.4, label=built_label)
    ax.bar(x + 0.2, [100 * ablation_changes[s]["mean_change"] for s in labels], 0.4, label=ablation_label)
    ax.axhline(0, color="0.3", lw=1)
    ax.set_xticks(x, labels)
    ax.set_ylabel("mean accuracy change vs v1 (points)")
    ax.legend(fontsize="small")
    return fig
