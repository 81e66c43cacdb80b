"""How the zoo's accuracies change from the original test set to the replicated ones.

The replication world's version of Recht et al. (2019), Table 2: per sampling strategy, the mean change
in accuracy over the zoo and the share of models that drop (:func:`accuracy_changes`), on the world's own
replication round or on another one (:func:`replication_changes`), and the tables the chapter shows
(:func:`change_table`, :func:`table2`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ..datasets.world import Replication, World
    from ..zoo import Zoo


def accuracy_changes(table: pd.DataFrame, strategies: Iterable[str], reference: str = "v1") -> dict:
    """Per strategy: mean change (strategy − reference accuracy) over models and the share that dropped.

    Recht et al. (2019), Table 2 reports the mean change per sampling strategy; the share of models
    whose accuracy fell is the "every model drops" observation of their §3.

    Parameters
    ----------
    table : pandas.DataFrame
        Accuracies (fractions), one row per model, one column per test set.
    strategies : iterable of str
        Columns of the replicated test sets.
    reference : str
        Column of the original test set.

    Returns
    -------
    dict
        ``{strategy: {"mean_change": float, "fraction_dropping": float}}``.

    Examples
    --------
    >>> t = pd.DataFrame({"v1": [0.9, 0.8], "top": [0.8, 0.9], "thr": [0.7, 0.6]})
    >>> ch = accuracy_changes(t, ["top", "thr"])
    >>> round(ch["top"]["mean_change"], 3), ch["top"]["fraction_dropping"]
    (0.0, 0.5)
    >>> round(ch["thr"]["mean_change"], 3), ch["thr"]["fraction_dropping"]
    (-0.2, 1.0)
    """
    out = {}
    for s in strategies:
        diff = table[s].astype(float) - table[reference].astype(float)
        out[s] = {"mean_change": float(diff.mean()), "fraction_dropping": float((diff < 0).mean())}
    return out


def replication_changes(zoo: Zoo, world: World, replication: Replication, table: pd.DataFrame) -> dict:
    """:func:`accuracy_changes` of the zoo on the sets of another replication round of ``world``.

    The models are the same; only the sampled test sets differ (e.g. noise-free frequencies, or more
    annotators), so the accuracies are read from the stored predictions on the pool.

    Parameters
    ----------
    zoo : shifteval.zoo.build.Zoo
        A zoo built on ``world`` (its ``pool`` predictions are used).
    world : shifteval.datasets.world.World
        The world the replication was sampled from.
    replication : shifteval.datasets.world.Replication
        The other round; its ``sets`` map strategy names to world example indices.
    table : pandas.DataFrame
        The zoo's accuracy table (its ``v1`` column is the reference).

    Returns
    -------
    dict
        As :func:`accuracy_changes`, one entry per set of ``replication``.

    Examples
    --------
    >>> from shifteval.datasets.world import build_world
    >>> from shifteval.zoo import ModelSpec, build_zoo
    >>> world = build_world({"n_train": 100, "n_v1": 50, "n_pool": 300, "per_class": 3})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     z = build_zoo(world, [ModelSpec("nb", "sklearn", "gaussian_nb")], store_root=tmp, progress=False)
    ...     ch = replication_changes(z, world, world.replicate(5, round=1), z.accuracy_table())
    >>> sorted(ch), sorted(ch["topimages"])
    (['matchedfrequency', 'threshold0.7', 'topimages'], ['fraction_dropping', 'mean_change'])
    """
    acc = pd.DataFrame({s: zoo.accuracy_on(world, idx) for s, idx in replication.sets.items()})
    acc["v1"] = table["v1"]
    return accuracy_changes(acc, list(replication.sets))


def matched_change_by_bins(
    zoo: Zoo, world: World, replication: Replication, table: pd.DataFrame, bins: Sequence[int], *,
    draws: int = 5, seed: int = 0,
) -> dict[int, dict[str, float]]:  # fmt: skip
    """MatchedFrequency's mean accuracy change when the histogram has more (or fewer) bins.

    Recht et al. (2019, App. C.1.2) match a five-bin histogram of selection frequencies; within a bin,
    the candidates drawn can still differ from the original images in frequency, and so in difficulty.
    This draws MatchedFrequency again from ``replication``'s frequencies (per class, as
    :func:`shifteval.datasets.world_sampling.sample_matched_frequency`) with ``n`` bins of equal width
    for each ``n`` in ``bins``, ``draws`` times, and averages the zoo's mean change over the draws.

    Parameters
    ----------
    zoo : shifteval.zoo.build.Zoo
        A zoo built on ``world``.
    world : shifteval.datasets.world.World
        The world the replication was sampled from.
    replication : shifteval.datasets.world.Replication
        The round whose v1 and pool frequencies are matched (the noise-free ablation for the true ones).
    table : pandas.DataFrame
        The zoo's accuracy table (its ``v1`` column is the reference).
    bins : sequence of int
        Numbers of bins, each at least 1.
    draws : int
        Independent draws per number of bins (at least 1).
    seed : int
        Seed of the draws.

    Returns
    -------
    dict of int to dict
        Per number of bins: ``change`` (fraction; replicated minus v1 accuracy, averaged over models
        and draws), ``se`` (its standard error over the draws; NaN for one draw) and ``substituted``
        (images per draw taken from another bin than their target because theirs ran out).

    Examples
    --------
    >>> from shifteval.datasets.world import build_world
    >>> from shifteval.zoo import ModelSpec, build_zoo
    >>> world = build_world({"n_train": 100, "n_v1": 50, "n_pool": 300, "per_class": 3})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     z = build_zoo(world, [ModelSpec("nb", "sklearn", "gaussian_nb")], store_root=tmp, progress=False)
    ...     ch = matched_change_by_bins(z, world, world.replication, z.accuracy_table(), [5, 20], draws=2)
    >>> sorted(ch), all(-1 <= v["change"] <= 1 and v["se"] >= 0 for v in ch.values())
    ([5, 20], True)
    """
    from ..datasets.world_sampling import sample_matched_frequency

    if int(draws) < 1 or any(int(n) < 1 for n in bins):
        raise ValueError(
            f"draws and every number of bins must be at least 1, got {draws=}, bins={list(bins)}"
        )
    ex = world.examples
    v1, pool = world.split_index("v1"), world.split_index("pool")
    labels = ex["label"].to_numpy()
    per_class = world.config.per_class
    rng = np.random.default_rng(np.random.SeedSequence([world.config.seed, 11, int(seed)]))
    out = {}
    for n in bins:
        edges = np.arange(int(n)) / int(n)
        changes, moved = [], []
        for _ in range(int(draws)):
            idx, sub = sample_matched_frequency(
                replication.v1_freq, labels[v1], replication.pool_freq, labels[pool], per_class, rng, edges
            )
            changes.append(float((zoo.accuracy_on(world, pool[idx]) - table["v1"]).mean()))
            moved.append(sub["higher"] + sub["lower"])
        se = float(np.std(changes, ddof=1) / np.sqrt(len(changes))) if len(changes) > 1 else float("nan")
        out[int(n)] = {"change": float(np.mean(changes)), "se": se, "substituted": float(np.mean(moved))}
    return out


def accuracy_by_frequency_bin(zoo: Zoo, world: World, strategy: str = "matchedfrequency") -> dict:
    """Every model's accuracy on v1 and on a replicated set, stratified into selection-frequency bins.

    Recht et al. (2019), Figures 15-17 (App. C.4.7): the images of each set are binned by their observed
    selection frequency in the replication's annotation round (the five bins of MatchedFrequency,
    :func:`shifteval.datasets.world_sampling.frequency_bin`) and each model's accuracy is taken per bin.

    Parameters
    ----------
    zoo : shifteval.zoo.build.Zoo
        A zoo built on ``world``.
    world : shifteval.datasets.world.World
        The world; its own replication round gives the observed frequencies.
    strategy : str
        The replicated set.

    Returns
    -------
    dict
        ``v1`` and ``new``: DataFrames of accuracy (fraction), one row per model, one column per bin
        (``"[0.0, 0.2)"`` ... ``"[0.8, 1.0]"``; NaN where a bin is empty); ``n_v1`` and ``n_new``: images per
        bin.

    Examples
    --------
    >>> from shifteval.datasets.world import build_world
    >>> from shifteval.zoo import ModelSpec, build_zoo
    >>> world = build_world({"n_train": 100, "n_v1": 50, "n_pool": 300, "per_class": 3})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     z = build_zoo(world, [ModelSpec("nb", "sklearn", "gaussian_nb")], store_root=tmp, progress=False)
    ...     by_bin = accuracy_by_frequency_bin(z, world)
    >>> list(by_bin["new"].columns)[2], sum(by_bin["n_new"]), sum(by_bin["n_v1"])
    ('[0.4, 0.6)', 30, 50)
    """
    from ..datasets.world_sampling import FREQUENCY_BINS, frequency_bin

    rep = world.replication
    v1, pool, new = world.split_index("v1"), world.split_index("pool"), world.split_index(strategy)
    bins = {
        "v1": (v1, frequency_bin(rep.v1_freq)),
        "new": (new, frequency_bin(rep.pool_freq[np.searchsorted(pool, new)])),
    }
    edges = [*FREQUENCY_BINS.tolist(), 1.0]
    names = [
        f"[{lo:.1f}, {hi:.1f}{']' if i == len(edges) - 2 else ')'}"
        for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True))
    ]
    out: dict = {}
    for key, (index, b) in bins.items():
        within = "v1" if key == "v1" else "pool"
        cols = {
            name: zoo.accuracy_on(world, index[b == i], within=within)
            if (b == i).any()
            else pd.Series(np.nan, index=zoo.names)
            for i, name in enumerate(names)
        }
        out[key] = pd.DataFrame(cols)
        out[f"n_{key}"] = [int((b == i).sum()) for i in range(len(names))]
    return out


def change_table(table: pd.DataFrame, strategies: list[str]) -> pd.DataFrame:
    """Accuracy on v1 and on each replicated set with its change, one cell per set, sorted by v1.

    Parameters
    ----------
    table : pandas.DataFrame
        Accuracy table with ``v1`` and the ``strategies`` columns (fractions).
    strategies : list of str
        Replicated test sets to show.

    Returns
    -------
    pandas.DataFrame
        Text cells: ``v1`` as a percentage, each replicated set as ``"accuracy (change)"``, the change in
        points (replicated − v1); rows sorted by v1 accuracy, best first.

    Examples
    --------
    >>> t = pd.DataFrame({"v1": [0.5, 0.9], "top": [0.4, 0.85]}, index=["m1", "m2"])
    >>> change_table(t, ["top"]).to_dict("index")
    {'m2': {'v1': '90.0%', 'top': '85.0% (−5.0)'}, 'm1': {'v1': '50.0%', 'top': '40.0% (−10.0)'}}
    """
    ordered = table.sort_values("v1", ascending=False)
    shown = pd.DataFrame({"v1": [f"{a:.1%}" for a in ordered["v1"]]}, index=ordered.index)
    for s in strategies:
        change = 100 * (ordered[s] - ordered["v1"])
        shown[s] = [f"{a:.1%} ({d:+.1f})".replace("-", "−") for a, d in zip(ordered[s], change, strict=True)]
    return shown


def table2(changes: dict, frequencies: dict, paper: dict | None = None) -> pd.DataFrame:
    """The world's version of Recht et al. (2019), Table 2: change, share dropping, mean frequencies.

    Parameters
    ----------
    changes : dict
        Output of :func:`accuracy_changes`.
    frequencies : dict
        ``{strategy: {"observed": float, "true": float}}``, mean selection frequencies per set.
    paper : dict, optional
        The paper's Table 2 (``{strategy: {"selection_frequency": float, "top1": float}}``, as in
        :func:`shifteval.datasets.published.reported`); its average MTurk selection frequency and top-1
        change are shown beside the world's.

    Returns
    -------
    pandas.DataFrame
        One row per strategy: change in points, share of models dropping, mean frequencies (and the
        paper's two columns).

    Examples
    --------
    >>> ch = {"top": {"mean_change": -0.05, "fraction_dropping": 0.75}}
    >>> t = table2(ch, {"top": {"observed": 0.9, "true": 0.8}})
    >>> round(float(t.loc["top", "mean change (points)"]), 2), t.loc["top", "models dropping"]
    (-5.0, '75%')
    >>> table2(ch, {"top": {"observed": 0.9, "true": 0.8}}, {"top": {"selection_frequency": 0.93, "top1": 2.1}}
    ...        ).loc["top", "paper: mean ŝ"]
    0.93
    """
    rows = {
        s: {
            "mean change (points)": 100 * c["mean_change"],
            "models dropping": f"{c['fraction_dropping']:.0%}",
            "mean observed ŝ": frequencies[s]["observed"],
            "mean true s": frequencies[s]["true"],
        }
        for s, c in changes.items()
    }
    for s, row in rows.items():
        if paper is not None and s in paper:
            row |= {
                "paper: top-1 change (points)": paper[s]["top1"],
                "paper: mean ŝ": paper[s]["selection_frequency"],
            }
    return pd.DataFrame(rows).T
