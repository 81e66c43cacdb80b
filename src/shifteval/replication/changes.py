"""How the zoo's accuracies change from the original test set to the replicated ones.

The replication world's version of Recht et al. (2019), Table 2: per sampling strategy, the mean change
in accuracy over the zoo and the share of models that drop (:func:`accuracy_changes`), on the world's own
replication round or on another one (:func:`replication_changes`), and the tables the chapter shows
(:func:`change_table`, :func:`table2`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

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


def table2(changes: dict, frequencies: dict) -> pd.DataFrame:
    """The world's version of Recht et al. (2019), Table 2: change, share dropping, mean frequencies.

    Parameters
    ----------
    changes : dict
        Output of :func:`accuracy_changes`.
    frequencies : dict
        ``{strategy: {"observed": float, "true": float}}``, mean selection frequencies per set.

    Returns
    -------
    pandas.DataFrame
        One row per strategy: change in points, share of models dropping, mean frequencies.

    Examples
    --------
    >>> ch = {"top": {"mean_change": -0.05, "fraction_dropping": 0.75}}
    >>> t = table2(ch, {"top": {"observed": 0.9, "true": 0.8}})
    >>> round(float(t.loc["top", "mean change (points)"]), 2), t.loc["top", "models dropping"]
    (-5.0, '75%')
    """
    return pd.DataFrame({
        s: {
            "mean change (points)": 100 * c["mean_change"],
            "models dropping": f"{c['fraction_dropping']:.0%}",
            "mean observed ŝ": frequencies[s]["observed"],
            "mean true s": frequencies[s]["true"],
        }
        for s, c in changes.items()
    }).T  # fmt: skip
