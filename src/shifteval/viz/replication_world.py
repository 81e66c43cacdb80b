"""Figures of the replication-world chapter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from .common import subplots, traced
from .names import display_name

if TYPE_CHECKING:
    import pandas as pd

    from ..datasets.world import World


@traced
def frequency_histograms(ax: Axes, observed: ArrayLike, true: ArrayLike, title: str | None = None) -> Axes:
    """Observed (annotator) vs. true selection frequencies of one test set (Engstrom et al. 2020, Fig. 4).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw; returned.
    observed : array_like
        Observed selection frequencies ŝ (share of annotators who selected each image).
    true : array_like
        True selection frequencies s of the same images.
    title : str, optional
        Panel title.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> ax = frequency_histograms(plt.figure().gca(), [0.5, 1.0], [0.6, 0.8], title="v1")
    >>> [t.get_text() for t in ax.get_legend().get_texts()], ax.get_title()
    (['observed ŝ (mean 0.750)', 'true s (mean 0.700)'], 'v1')
    >>> plt.close("all")
    """
    ax.hist(
        np.asarray(observed),
        bins=np.linspace(-0.05, 1.05, 12).tolist(),
        alpha=0.55,
        color="#2980b9",
        label=f"observed ŝ (mean {np.asarray(observed).mean():.3f})",
        density=True,
    )
    ax.hist(
        np.asarray(true),
        bins=np.linspace(0, 1, 21).tolist(),
        histtype="step",
        lw=1.8,
        color="#c0392b",
        label=f"true s (mean {np.asarray(true).mean():.3f})",
        density=True,
    )
    ax.set_xlabel("selection frequency")
    ax.set_ylabel("density")
    ax.legend(fontsize="x-small", loc="upper left")
    if title:
        ax.set_title(title)
    return ax


@traced
def accuracy_change_panel(
    ax: Axes,
    table: pd.DataFrame,
    strategies: Sequence[str],
    reference: str = "v1",
    labels: dict[str, str] | None = None,
) -> Axes:
    """Each model's accuracy on each replicated set against its v1 accuracy (points), with y = x.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw; returned.
    table : pandas.DataFrame
        Accuracies (fractions), one row per model, one column per test set.
    strategies : sequence of str
        The replicated sets (columns of ``table``), one colour each.
    reference : str
        The column on the x axis.
    labels : dict of str -> str, optional
        Legend label of each strategy (default: its name).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> table = pd.DataFrame({"v1": [0.7, 0.9], "topimages": [0.75, 0.93]})
    >>> ax = accuracy_change_panel(plt.figure().gca(), table, ["topimages"], labels={"topimages": "TopImages"})
    >>> [t.get_text() for t in ax.get_legend().get_texts()], [round(float(v), 2) for v in ax.get_xlim()]
    (['TopImages', 'y = x'], [0.68, 0.95])
    >>> plt.close("all")
    """
    colors = sns.color_palette("deep", len(strategies))
    lo = min(table[[reference, *strategies]].min()) - 0.02
    hi = min(1.0, max(table[[reference, *strategies]].max()) + 0.02)
    for color, s in zip(colors, strategies, strict=True):
        ax.plot(
            table[reference], table[s], "o", ms=4, color=color, label=(labels or {}).get(s, display_name(s))
        )
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


@traced
def fig1_example_grid(world: World, levels: int = 9, seed: int | None = None) -> Figure:
    """One base digit per class rendered at increasing difficulty (rows: classes; columns: ``d``).

    The world's analogue of the example images of Recht et al. (2019), Figure 15: what a rising
    latent difficulty does to an image.

    Parameters
    ----------
    world : World
        The world (its seed is the default seed).
    levels : int
        Number of difficulties, evenly spaced on [0, 1].
    seed : int, optional
        Seed of the digits picked and of the rendering (default: the world's).

    Returns
    -------
    matplotlib.figure.Figure
        A 10 × ``levels`` grid of images in one panel (see :func:`shifteval.viz.common.image_grid`).

    Examples
    --------
    >>> from shifteval.datasets.world import build_world
    >>> world = build_world({"n_train": 20, "n_v1": 50, "n_pool": 200, "per_class": 2})
    >>> fig = fig1_example_grid(world, levels=3)
    >>> len(fig.axes), [t.get_text() for t in fig.axes[0].get_xticklabels()]
    (1, ['d=0.00', 'd=0.50', 'd=1.00'])
    >>> plt.close("all")
    """
    from ..datasets import world as worlds
    from .common import image_grid

    rng = np.random.default_rng(world.config.seed if seed is None else seed)
    bases, base_labels = worlds.base_digits(16)
    ds = np.linspace(0, 1, levels)
    picks = [int(rng.choice(np.flatnonzero(base_labels == c))) for c in range(10)]
    grid = np.stack([worlds.render(np.repeat(bases[[b]], len(ds), axis=0), ds, rng) for b in picks])
    return image_grid(grid, row_labels=[str(c) for c in range(10)], col_labels=[f"d={v:.2f}" for v in ds])


@traced
def fig2_difficulty(world: World) -> Figure:
    """Difficulty histograms of both candidate pools, v1 after the majority filter, and the replicated sets.

    Parameters
    ----------
    world : World
        The world (its candidate pools, splits and replicated sets).

    Returns
    -------
    matplotlib.figure.Figure
        One panel.

    Examples
    --------
    >>> from shifteval.datasets.world import build_world
    >>> world = build_world({"n_train": 20, "n_v1": 50, "n_pool": 200, "per_class": 2})
    >>> [t.get_text() for t in fig2_difficulty(world).axes[0].get_legend().get_texts()][:3]
    ['original candidate pool', 'v1 (kept by majority)', 'replication pool']
    >>> plt.close("all")
    """
    from ..datasets.world import STRATEGIES

    ex = world.examples
    fig, ax = plt.subplots(figsize=(7, 3.6))
    bins = np.linspace(0, 1, 26).tolist()  # a list: the stubs type hist's bins as Sequence[float]
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


@traced
def fig3_frequencies(world: World) -> Figure:
    """Observed vs true selection frequencies of v1 and the three replicated sets (Engstrom et al., Fig. 4).

    Parameters
    ----------
    world : World
        The world (its replication round's observed frequencies and its true ones).

    Returns
    -------
    matplotlib.figure.Figure
        Four panels, two by two (see :func:`frequency_histograms`).

    Examples
    --------
    >>> from shifteval.datasets.world import build_world
    >>> world = build_world({"n_train": 20, "n_v1": 50, "n_pool": 200, "per_class": 2})
    >>> [ax.get_title() for ax in fig3_frequencies(world).axes]
    ['v1', 'matchedfrequency', 'threshold0.7', 'topimages']
    >>> plt.close("all")
    """
    from ..datasets.world import STRATEGIES

    s_true = world.examples["s"].to_numpy()
    pool = world.split_index("pool")
    position = {int(i): k for k, i in enumerate(pool)}
    fig, axes = subplots(2, 2, height=5.6, sharey=True)
    axes = axes.flatten()
    frequency_histograms(axes[0], world.replication.v1_freq, s_true[world.split_index("v1")], title="v1")
    for ax, s in zip(axes[1:], STRATEGIES, strict=True):
        idx = world.split_index(s)
        rows = [position[int(i)] for i in idx]
        frequency_histograms(ax, world.replication.pool_freq[rows], s_true[idx], title=s)
    return fig


@traced
def fig4_accuracy_change(table: pd.DataFrame, strategies: Sequence[str]) -> Figure:
    """Every model's replicated-set accuracy against its v1 accuracy (Recht et al., Figure 1's layout).

    Parameters
    ----------
    table : pandas.DataFrame
        Accuracies (fractions), one row per model, columns ``v1`` and each strategy.
    strategies : sequence of str
        The replicated sets drawn.

    Returns
    -------
    matplotlib.figure.Figure
        One panel (see :func:`accuracy_change_panel`).

    Examples
    --------
    >>> table = pd.DataFrame({"v1": [0.7, 0.9], "a": [0.6, 0.85], "b": [0.65, 0.8]})
    >>> ax = fig4_accuracy_change(table, ["a", "b"]).axes[0]
    >>> [line.get_label() for line in ax.lines], ax.get_xlabel()
    (['a', 'b', 'y = x'], 'accuracy on v1 (%)')
    >>> plt.close("all")
    """
    fig, ax = plt.subplots(figsize=(6.2, 6))
    accuracy_change_panel(ax, table, strategies)
    return fig


@traced
def fig5_ablation(
    changes: dict[str, dict], ablation_changes: dict[str, dict], built_label: str, ablation_label: str
) -> Figure:
    """Mean accuracy change per strategy, as built and with the ablation's frequencies (points).

    Parameters
    ----------
    changes, ablation_changes : dict of str -> dict
        Per strategy, a dict with ``mean_change`` (fraction): the world as built and the ablation.
    built_label, ablation_label : str
        Legend labels of the two sets of bars.

    Returns
    -------
    matplotlib.figure.Figure
        One panel of paired bars, in percentage points.

    Examples
    --------
    >>> built, ablation = {"topimages": {"mean_change": 0.05}}, {"topimages": {"mean_change": 0.01}}
    >>> ax = fig5_ablation(built, ablation, "as built", "no noise").axes[0]
    >>> [round(float(p.get_height()), 6) for p in ax.patches]
    [5.0, 1.0]
    >>> plt.close("all")
    """
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


@traced
def fig15_17_frequency_bins(table: pd.DataFrame, by_bin: dict, strategy: str = "matchedfrequency") -> Figure:
    """Recht et al. (2019), Figures 15-17: accuracy stratified into five selection-frequency bins.

    Parameters
    ----------
    table : pandas.DataFrame
        The zoo's accuracy table (``v1`` and ``strategy`` columns, fractions).
    by_bin : dict
        :func:`shifteval.replication.accuracy_by_frequency_bin`.
    strategy : str
        The replicated set's column of ``table``.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels, one point per model and bin (colour): new set per bin against v1 overall (Figure 15),
        v1 per bin against v1 overall (Figure 16), new set per bin against v1 per bin (Figure 17), in percent.

    Examples
    --------
    >>> t = pd.DataFrame({"v1": [0.8, 0.9], "matchedfrequency": [0.7, 0.85]}, index=["a", "b"])
    >>> b = {"v1": pd.DataFrame({"[0.0, 0.2)": [0.5, 0.6]}, index=["a", "b"]),
    ...      "new": pd.DataFrame({"[0.0, 0.2)": [0.4, 0.5]}, index=["a", "b"]), "n_v1": [2], "n_new": [2]}
    >>> len(fig15_17_frequency_bins(t, b).axes)
    3
    >>> plt.close("all")
    """
    fig, axes = subplots(1, 3, height=3.6)
    x_all = 100 * table["v1"].to_numpy(float)
    colors = sns.color_palette("viridis", len(by_bin["v1"].columns))
    panels = (
        ("Figure 15: new set by bin", "v1 accuracy, all images (%)", f"{strategy} accuracy in the bin (%)"),
        ("Figure 16: v1 by bin", "v1 accuracy, all images (%)", "v1 accuracy in the bin (%)"),
        ("Figure 17: both by bin", "v1 accuracy in the bin (%)", f"{strategy} accuracy in the bin (%)"),
    )
    for i, name in enumerate(by_bin["v1"].columns):
        v1_bin = 100 * by_bin["v1"][name].reindex(table.index).to_numpy(float)
        new_bin = 100 * by_bin["new"][name].reindex(table.index).to_numpy(float)
        for ax, (x, y) in zip(axes, ((x_all, new_bin), (x_all, v1_bin), (v1_bin, new_bin)), strict=True):
            ax.plot(
                x,
                y,
                "o",
                ms=3.5,
                color=colors[i],
                label=f"{name} (v1 {by_bin['n_v1'][i]}, new {by_bin['n_new'][i]})",
            )
    for ax, (title, xl, yl) in zip(axes, panels, strict=True):
        ax.plot([0, 100], [0, 100], "--", color="0.4", lw=1)
        ax.set(title=title, xlabel=xl, ylabel=yl, xlim=(0, 100), ylim=(0, 100))
    axes[0].legend(fontsize=7, title="bin (images)", title_fontsize=7, loc="upper left")
    return fig
