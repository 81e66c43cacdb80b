"""A tiny replication, in memory: four models, two classes, twenty images (for examples and tests)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .folder import ReplicationData


def tiny(votes: bool = False, unlabeled: bool = False, seed: int = 0) -> ReplicationData:
    """Four models of growing skill on a 10-image original and a 10-image new set (two classes).

    Parameters
    ----------
    votes : bool
        Add votes (``n`` = 4 on every image; new images get fewer "yes" votes).
    unlabeled : bool
        Add an unlabeled set of 6 images.
    seed : int
        Seed of the probabilities.

    Returns
    -------
    ReplicationData

    Examples
    --------
    >>> d = tiny()
    >>> d.models, d.correct["original"].mean(1).tolist(), d.correct["new"].mean(1).tolist()
    (('m0', 'm1', 'm2', 'm3'), [0.6, 0.7, 0.8, 0.9], [0.4, 0.5, 0.6, 0.8])
    """
    rng = np.random.default_rng(seed)
    labels = {"original": np.arange(10) % 2, "new": (np.arange(10) + 1) % 2}
    right = {"original": (6, 7, 8, 9), "new": (4, 5, 6, 8)}
    models = tuple(f"m{i}" for i in range(4))
    probs: dict = {"original": {}, "new": {}, "unlabeled": {}}
    correct = {}
    for s, y in labels.items():
        rows = []
        for m, r in zip(models, right[s], strict=True):
            ok = np.arange(10) < r
            conf = rng.uniform(0.55, 0.99, 10) - (s == "new") * 0.04
            pred = np.where(ok, y, 1 - y)
            p = np.zeros((10, 2))
            p[np.arange(10), pred] = conf
            p[np.arange(10), 1 - pred] = 1 - conf
            probs[s][m] = p.astype(np.float32)
            rows.append(ok)
        correct[s] = np.stack(rows)
    if unlabeled:
        for m in models:
            c = rng.uniform(0.5, 0.95, 6)
            probs["unlabeled"][m] = np.stack([c, 1 - c], axis=1).astype(np.float32)
    v = {}
    if votes:
        v = {"original": (np.arange(10) % 5, np.full(10, 4)), "new": (np.arange(10) % 4, np.full(10, 4))}
    return ReplicationData(
        root=Path("."),
        names={"original": "original", "new": "new", "unlabeled": "unlabeled"},
        labels=labels,
        models=models,
        correct=correct,
        probs=probs,
        votes=v,
        n_classes=2,
        kinds=dict.fromkeys(models, "probs"),
    )
