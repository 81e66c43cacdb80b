"""Summaries of a replication world: split sizes, difficulties and selection frequencies.

The numbers the replication-world chapter reports about a :class:`~shifteval.datasets.world.World`.
Every name here is also importable from :mod:`shifteval.datasets.world`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .world_sampling import STRATEGIES

if TYPE_CHECKING:
    from .world import Replication, World


def frequency_summary(world: World, replication: Replication | None = None) -> dict[str, dict[str, float]]:
    """Mean observed and true selection frequency of v1 and each replicated set.

    Observed frequencies are those of the given replication round (the world's own by default),
    which annotates v1 and the pool together, as Recht et al. did.

    Parameters
    ----------
    world : World
        The world (see :func:`~shifteval.datasets.world.build_world`).
    replication : Replication, optional
        A round from :meth:`World.replicate`; the world's own round by default.

    Returns
    -------
    dict
        ``{set: {"observed": mean ŝ, "true": mean s}}`` for ``v1`` and each strategy.

    Examples
    --------
    >>> from shifteval.datasets.world import build_world
    >>> w = build_world({"n_train": 100, "n_v1": 100, "n_pool": 600, "per_class": 5})
    >>> sorted(frequency_summary(w))
    ['matchedfrequency', 'threshold0.7', 'topimages', 'v1']
    >>> noise_free = frequency_summary(w, w.replicate(None))  # observed = true without annotators
    >>> all(round(v["observed"], 9) == round(v["true"], 9) for v in noise_free.values())
    True
    """
    rep = replication or world.replication
    s = world.examples["s"].to_numpy()
    v1 = world.split_index("v1")
    pool = world.split_index("pool")
    pos = np.full(len(s), -1)
    pos[pool] = np.arange(len(pool))
    out = {"v1": {"observed": float(rep.v1_freq.mean()), "true": float(s[v1].mean())}}
    for name, idx in rep.sets.items():
        out[name] = {"observed": float(rep.pool_freq[pos[idx]].mean()), "true": float(s[idx].mean())}
    return out


def size_summary(world: World) -> dict[str, int | str]:
    """Size of every split, the annotators per image and both pools' difficulty distributions.

    Parameters
    ----------
    world : World
        The world (see :func:`~shifteval.datasets.world.build_world`).

    Returns
    -------
    dict
        Readable names to sizes (int) and the Beta difficulty distributions (str).

    Examples
    --------
    >>> from shifteval.datasets.world import build_world
    >>> w = build_world({"n_train": 100, "n_v1": 100, "n_pool": 600, "per_class": 5})
    >>> sizes = size_summary(w)
    >>> sizes["original test set (v1)"], sizes["replicated set: topimages"], sizes["annotators per image"]
    (100, 50, 10)
    >>> sizes["replication pool difficulty"]
    'Beta(2.6, 2.4)'
    """
    cfg = world.config
    return {
        "training images": len(world.split_index("train")),
        "original test set (v1)": len(world.split_index("v1")),
        "replication candidate pool": len(world.split_index("pool")),
        **{f"replicated set: {s}": len(world.split_index(s)) for s in STRATEGIES},
        "annotators per image": cfg.annotators,
        "original pool difficulty": f"Beta{cfg.original_difficulty}",
        "replication pool difficulty": f"Beta{cfg.replication_difficulty}",
    }


def difficulty_summary(world: World) -> dict[str, float]:
    """Mean latent difficulty of the original candidates, v1, the replication pool and each replicated set.

    Parameters
    ----------
    world : World
        The world (see :func:`~shifteval.datasets.world.build_world`).

    Returns
    -------
    dict
        Set name to mean difficulty ``d`` in [0, 1].

    Examples
    --------
    >>> from shifteval.datasets.world import build_world
    >>> w = build_world({"n_train": 100, "n_v1": 100, "n_pool": 600, "per_class": 5})
    >>> d = difficulty_summary(w)
    >>> list(d)
    ['original candidates', 'v1', 'pool', 'matchedfrequency', 'threshold0.7', 'topimages']
    >>> bool(d["pool"] > d["v1"])  # the replication pool is harder than the filtered v1 images
    True
    """
    d = world.examples["d"]
    out = {"original candidates": float(world.candidates_original["d"].mean())}
    for name in ("v1", "pool", *STRATEGIES):
        out[name] = float(d.loc[world.split_index(name)].mean())
    return out


def frequency_table(summary: dict[str, dict[str, float]]) -> pd.DataFrame:
    """:func:`frequency_summary` as a table (rows: sets; columns: mean observed and true frequency).

    Parameters
    ----------
    summary : dict
        The output of :func:`frequency_summary`.

    Returns
    -------
    pandas.DataFrame
        One row per set, columns ``mean observed ŝ`` and ``mean true s``, rounded to 3 decimals.

    Examples
    --------
    >>> table = frequency_table({"v1": {"observed": 0.71234, "true": 0.7}})
    >>> table.columns.tolist(), table.loc["v1", "mean observed ŝ"].item()
    (['mean observed ŝ', 'mean true s'], 0.712)
    """
    table = pd.DataFrame(summary).T.rename(columns={"observed": "mean observed ŝ", "true": "mean true s"})
    return table.round(3)
