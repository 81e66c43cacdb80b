"""Two hypotheses Recht et al. (2019) tested and rejected, run on the replication world.

- :func:`cross_validation` — App. B.2.7, Table 4 (and Table 13 for ImageNet): a fresh split of the
  original data shows no drop. Models are retrained with one fold of the training set held out and as many
  original test images put in its place, then tested on the held-out fold.
- :func:`discriminator` — App. B.2.8, Table 5: a classifier trained to tell original from new test images
  (1,600 + 1,600 training and 400 + 400 test images, class-balanced), from scratch and starting from a
  network trained on the classification task.

Both return numbers of correct predictions and of images, so intervals can be drawn around them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedGroupKFold

from ..zoo.build import train_many
from ..zoo.models import ModelSpec

if TYPE_CHECKING:
    from ..datasets.world import World
    from ..zoo import Zoo


def _balanced_sample(
    labels: np.ndarray, index: np.ndarray, per_class: int, rng: np.random.Generator
) -> np.ndarray:
    return np.concatenate(
        [rng.choice(index[labels[index] == c], per_class, replace=False) for c in range(10)]
    )


def cross_validation(world: World, zoo: Zoo, specs: Sequence[ModelSpec], folds: int = 5, new: str = "matchedfrequency",
                     seed: int = 0) -> pd.DataFrame:  # fmt: skip
    """Accuracy on cross-validation folds of the training set (Recht et al. 2019, App. B.2.7, Table 4).

    The paper divides CIFAR-10's training set into five class-balanced folds, trains each model on four
    folds together with the original test set (so the training set keeps its size) and tests it on the fifth.
    Here the folds are split by base digit (:class:`sklearn.model_selection.StratifiedGroupKFold`), so a
    held-out fold shares no base digit with the training folds — as v1 shares none with the training set —
    and the original test images put in the fold's place are a random draw from v1 of the fold's size. The rows ``v1`` and ``new`` are the zoo's own models (trained on the whole training set).

    Parameters
    ----------
    world : shifteval.datasets.world.World
        The world (its ``train`` and ``v1`` splits, its images and base digits).
    zoo : shifteval.zoo.Zoo
        The world's zoo, which holds every spec's accuracy on ``v1`` and ``new``.
    specs : sequence of ModelSpec
        The models to retrain on each fold (the paper: three).
    folds : int
        Number of folds (>= 2; the paper uses 5).
    new : str
        The replicated test set shown beside the folds.
    seed : int
        Seed of the folds, the v1 draws and the training.

    Returns
    -------
    pandas.DataFrame
        One row per (model, set) with ``set`` in ``v1``, ``fold 1`` … ``fold k``, ``new``: columns ``model``,
        ``set``, ``correct``, ``n``, ``accuracy``.

    Raises
    ------
    ValueError
        If ``folds`` < 2 or a spec is not in the zoo.

    Examples
    --------
    >>> from shifteval.datasets import world as worlds
    >>> from shifteval import zoo as zoos
    >>> w = worlds.build_world({"n_train": 500, "n_v1": 500, "n_pool": 1200, "per_class": 20})
    >>> z = zoos.build_zoo(w, zoos.default_zoo("smoke")[:1], store_root=tempfile.mkdtemp(), progress=False)
    >>> t = cross_validation(w, z, zoos.default_zoo("smoke")[:1], folds=2)
    >>> t["set"].tolist(), int(t["n"].iloc[1] + t["n"].iloc[2])
    (['v1', 'fold 1', 'fold 2', 'new'], 500)
    """
    if int(folds) < 2:
        raise ValueError(f"folds must be at least 2, got {folds!r}")
    missing = [s.name for s in specs if s.name not in zoo.names]
    if missing:
        raise ValueError(f"not in the zoo: {missing}; the v1 and new rows come from the zoo's models")
    ex = world.examples
    labels, groups = ex.label.to_numpy(), ex.base_id.to_numpy()
    train, v1 = world.split_index("train"), world.split_index("v1")
    rng = np.random.default_rng(seed)
    splitter = StratifiedGroupKFold(int(folds), shuffle=True, random_state=seed)
    rows, tasks = [], []
    for spec in specs:
        for name, split in (("v1", "v1"), ("new", new)):
            p = zoo.predictions(spec.name, split)
            rows.append((spec.name, name, int(p.correct.sum()), len(p.correct)))
        for k, (keep, held) in enumerate(splitter.split(train, labels[train], groups[train]), start=1):
            held = train[held]
            extra = rng.choice(v1, len(held), replace=False)  # the original test images take the fold's place
            tasks.append((spec, np.r_[train[keep], extra], {"fold": held}, k))
    # the folds' models train side by side, one process per core, each on one thread (the same numbers)
    outputs = train_many([t[:3] for t in tasks], world.images, labels, seed=seed, what="the folds")
    for (spec, _, predict, k), out in zip(tasks, outputs, strict=True):
        held = predict["fold"]
        rows.append((spec.name, f"fold {k}", int((out["fold"].argmax(1) == labels[held]).sum()), len(held)))
    out = pd.DataFrame(rows, columns=["model", "set", "correct", "n"])
    order = {s: i for i, s in enumerate(["v1", *[f"fold {k}" for k in range(1, folds + 1)], "new"])}
    out = out.sort_values(
        ["model", "set"], key=lambda c: c.map(order) if c.name == "set" else c, kind="stable"
    )
    out["accuracy"] = out["correct"] / out["n"]
    return out.reset_index(drop=True)


def discriminator(world: World, zoo: Zoo, model: str, new: str = "matchedfrequency", n_train: int = 1600,
                  n_test: int = 400, c: float = 0.01, seed: int = 0) -> pd.DataFrame:  # fmt: skip
    """How well a classifier tells original from new test images (Recht et al. 2019, App. B.2.8, Table 5).

    ``n_train`` images of each set train the discriminator and ``n_test`` of each test it, class-balanced,
    as in the paper (1,600 and 400). The paper trains ResNets from random initialisation and from a network
    pre-trained on CIFAR-10; here an L2-regularised logistic regression (inverse strength ``c``) learns from
    the pixels ("from scratch") or from the log-probabilities of ``model``, a network of the zoo trained on
    the classification task ("pre-trained").

    Parameters
    ----------
    world : shifteval.datasets.world.World
        The world.
    zoo : shifteval.zoo.Zoo
        Its zoo (for the pre-trained variant's inputs).
    model : str
        The zoo model whose outputs the pre-trained variant learns from.
    new : str
        The replicated test set.
    n_train, n_test : int
        Images per set for training and testing (multiples of 10; together at most a set's size).
    c : float
        Inverse regularisation strength of the logistic regression.
    seed : int
        Seed of the draws.

    Returns
    -------
    pandas.DataFrame
        Index ``from scratch`` and ``pre-trained``; columns ``correct``, ``n`` (test images), ``accuracy``.

    Raises
    ------
    ValueError
        If the sizes are not multiples of 10 or exceed a set.

    Examples
    --------
    >>> from shifteval.datasets import world as worlds
    >>> from shifteval import zoo as zoos
    >>> w = worlds.build_world({"n_train": 500, "n_v1": 500, "n_pool": 1200, "per_class": 20})
    >>> z = zoos.build_zoo(w, zoos.default_zoo("smoke")[:1], store_root=tempfile.mkdtemp(), progress=False)
    >>> discriminator(w, z, "gaussian_nb", n_train=100, n_test=100)["n"].tolist()
    [200, 200]
    """
    if n_train % 10 or n_test % 10 or min(n_train, n_test) < 10:
        raise ValueError(f"n_train and n_test must be positive multiples of 10, got {n_train} and {n_test}")
    labels = world.examples.label.to_numpy()
    rng = np.random.default_rng(seed)
    sets = {}
    for name, split in (("v1", "v1"), ("new", new)):
        index = world.split_index(split)
        if (n_train + n_test) // 10 > np.bincount(labels[index], minlength=10).min():
            raise ValueError(f"{split} has fewer than {(n_train + n_test) // 10} images in some class")
        per = _balanced_sample(labels, index, (n_train + n_test) // 10, rng).reshape(10, -1)
        sets[name] = (per[:, : n_train // 10].ravel(), per[:, n_train // 10 :].ravel())
    y_fit, y_test = np.r_[np.zeros(n_train), np.ones(n_train)], np.r_[np.zeros(n_test), np.ones(n_test)]
    logp = {
        s: np.log(np.clip(zoo.predictions(model, sp).probs, 1e-12, None))
        for s, sp in (("v1", "v1"), ("new", new))
    }
    position = {
        s: {int(i): k for k, i in enumerate(world.split_index(sp))} for s, sp in (("v1", "v1"), ("new", new))
    }
    inputs = {
        "from scratch": lambda s, idx: world.images[idx].reshape(len(idx), -1),
        "pre-trained": lambda s, idx: logp[s][[position[s][int(i)] for i in idx]],
    }
    rows = {}
    for variant, features in inputs.items():
        fit = np.r_[features("v1", sets["v1"][0]), features("new", sets["new"][0])]
        test = np.r_[features("v1", sets["v1"][1]), features("new", sets["new"][1])]
        clf = LogisticRegression(C=c, max_iter=5000).fit(fit, y_fit)
        rows[variant] = {"correct": int((clf.predict(test) == y_test).sum()), "n": len(y_test)}
    out = pd.DataFrame(rows).T
    out["accuracy"] = out["correct"] / out["n"]
    return out


def interval_table(frame: pd.DataFrame, rows: str, columns: str | None = None) -> pd.DataFrame:
    """Accuracies as ``"93.6 [93.1, 94.1]"`` (percent) in a rows × columns table, as Recht et al. print them.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``accuracy``, ``low``, ``high`` (fractions), ``rows`` and, if given, ``columns``.
    rows : str
        The column whose values become the rows (in order of appearance).
    columns : str, optional
        The column whose values become the columns; without it the one column is ``accuracy (%)``.

    Returns
    -------
    pandas.DataFrame
        Strings, one per cell.

    Examples
    --------
    >>> f = pd.DataFrame({"set": ["v1", "new"], "accuracy": [0.936, 0.849], "low": [0.931, 0.832],
    ...                   "high": [0.941, 0.864]})
    >>> interval_table(f, "set")["accuracy (%)"].tolist()
    ['93.6 [93.1, 94.1]', '84.9 [83.2, 86.4]']
    """
    cell = frame.apply(lambda r: f"{100 * r.accuracy:.1f} [{100 * r.low:.1f}, {100 * r.high:.1f}]", axis=1)
    out = frame.assign(cell=cell)
    if columns is None:
        return out.set_index(rows)[["cell"]].rename(columns={"cell": "accuracy (%)"}).rename_axis(None)
    table = out.pivot(index=rows, columns=columns, values="cell")
    order_rows, order_cols = list(dict.fromkeys(frame[rows])), list(dict.fromkeys(frame[columns]))
    return table.loc[order_rows, order_cols].rename_axis(index=None, columns=None)
