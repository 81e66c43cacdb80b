"""The model zoo: specifications, training, and the prediction store (see :mod:`shifteval.zoo.store`).

:func:`build_zoo` trains every model of a zoo on a world's training set, predicts every split, and
stores the predictions under a key covering the world's configuration, the model specification and
the library files that produce them (``datasets/world.py``, ``zoo/models.py``, ``nets.py`` and everything they import; see :mod:`shifteval.utils.cache`). Models already in the store
are not trained again, so chapters share one zoo.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..utils import cache
from ..utils.cache import cache_dir
from .models import ModelSpec, default_zoo, epochs_of, train_and_predict
from .store import Predictions, PredictionStore, validate_predictions

if TYPE_CHECKING:
    from ..datasets.world import Replication, World

__all__ = [
    "ModelSpec", "PredictionStore", "Predictions", "Zoo", "build_zoo", "default_zoo",
    "validate_predictions", "accuracy_changes", "replication_changes", "change_table", "table2",
]  # fmt: skip


def _code_hash() -> str:
    """Hash of the code that determines predictions: the world, the model definitions and their imports."""
    return cache.key(
        modules=["shifteval.datasets.world", "shifteval.zoo.models"],
        packages=["numpy", "scikit-learn", "torch", "timm"],
    )


@dataclass
class Zoo:
    """Predictions of every model of a zoo on every split of a world."""

    specs: list
    store: PredictionStore
    splits: tuple

    @property
    def names(self) -> list[str]:
        """Model names, in zoo order."""
        return [s.name for s in self.specs]

    def predictions(self, model: str, split: str) -> Predictions:
        """Stored predictions of ``model`` on ``split``."""
        return self.store.load(model, split)

    def accuracy_table(self) -> pd.DataFrame:
        """Accuracy (fraction) of each model (rows) on each split (columns), plus the model family."""
        rows = {}
        for spec in self.specs:
            rows[spec.name] = {split: self.predictions(spec.name, split).accuracy for split in self.splits}
            rows[spec.name]["family"] = spec.family
        return pd.DataFrame(rows).T[["family", *self.splits]].astype({s: float for s in self.splits})

    def accuracy_on(self, world: World, indices: ArrayLike, within: str = "pool") -> pd.Series:
        """Accuracy of every model on a subset of a split, given as world example indices.

        Used for replications re-sampled after the zoo was trained (e.g. the noise-free ablation):
        the subset's predictions are read from the stored predictions on ``within``.
        """
        base = world.split_index(within)
        pos = np.full(len(world.examples), -1)
        pos[base] = np.arange(len(base))
        rows = pos[np.asarray(indices)]
        if (rows < 0).any():
            raise ValueError(f"some indices are not examples of the {within!r} split")
        return pd.Series({n: float(self.predictions(n, within).correct[rows].mean()) for n in self.names})

    def correct(self, split: str) -> np.ndarray:
        """Boolean matrix (models × examples) of correct predictions on a split."""
        return np.stack([self.predictions(n, split).correct for n in self.names])


def build_zoo(
    world: World,
    specs: Iterable[ModelSpec] | None = None,
    store_root: str | Path | None = None,
    progress: bool = True,
) -> Zoo:
    """Train (or load from the store) every model of ``specs`` on ``world`` and predict every split.

    Parameters
    ----------
    world : shifteval.datasets.world.World
        The world whose ``train`` split the models are fitted on; every split is predicted.
    specs : list of ModelSpec, optional
        The zoo; :func:`default_zoo` by default.
    store_root : path, optional
        Folder of the prediction store; by default ``cache_dir()/zoo/<world key>-<code hash>``.
    progress : bool
        Show a progress bar over training epochs.

    Returns
    -------
    Zoo
        The specifications, the prediction store and the world's split names.

    Raises
    ------
    ValueError
        If two specifications share a name.

    Examples
    --------
    >>> from shifteval.datasets.world import build_world
    >>> world = build_world({"n_train": 100, "n_v1": 50, "n_pool": 300, "per_class": 3})
    >>> specs = [ModelSpec("nb", "sklearn", "gaussian_nb"), ModelSpec("lr", "sklearn", "logistic")]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     z = build_zoo(world, specs, store_root=tmp, progress=False)
    ...     table = z.accuracy_table()
    ...     again = build_zoo(world, specs, store_root=tmp, progress=False)  # loaded, not retrained
    ...     same = bool((again.accuracy_table() == table).all().all())
    ...     shape = z.correct("v1").shape  # predictions are read from the store on demand
    >>> z.names, list(table.columns[:3]), shape, same
    (['nb', 'lr'], ['family', 'train', 'v1'], (2, 50), True)
    >>> bool(((table["v1"] > 0.1) & (table["v1"] <= 1)).all())  # better than chance (10 classes)
    True
    """
    specs = list(specs) if specs is not None else default_zoo()
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ValueError("model names in a zoo must be unique")
    root = (
        Path(store_root) if store_root else cache_dir() / "zoo" / f"world-{world.config.key()}-{_code_hash()}"
    )
    store = PredictionStore(root)
    splits = world.split_names
    with cache.locked(root):  # a second process filling the same zoo waits, then finds it complete
        _fill(world, specs, store, splits, progress)
    return Zoo(specs, store, splits)


def _fill(world, specs, store, splits, progress) -> None:
    from tqdm import tqdm

    todo = [s for s in specs if not _complete(store, s, splits)]
    if todo:
        images = {split: world.images[world.split_index(split)] for split in splits}
        labels = {split: world.labels[world.split_index(split)] for split in splits}
        train = world.split_index("train")
        bar = tqdm(
            total=sum(epochs_of(s) for s in todo),
            desc="training zoo",
            unit="epoch",
            disable=not progress,
            mininterval=2,
        )
        for spec in todo:
            bar.set_postfix_str(spec.name)
            probs = train_and_predict(
                spec, world.images[train], world.labels[train], images, seed=world.config.seed, progress=bar
            )
            if spec.family == "sklearn":
                bar.update(1)
            # the sidecar of the last split marks the model complete, so write it last
            for split in splits:
                store.save(
                    spec.name,
                    split,
                    labels[split],
                    probs[split],
                    {"spec": _spec_dict(spec), "spec_key": spec.key(), "world": world.config.key()},
                )
        bar.close()


def _spec_dict(spec: ModelSpec) -> dict:
    return {"name": spec.name, "family": spec.family, "kind": spec.kind, "params": spec.params}


def _complete(store: PredictionStore, spec: ModelSpec, splits) -> bool:
    if not all(store.has(spec.name, split) for split in splits):
        return False
    try:
        return store.load(spec.name, splits[-1]).meta.get("parameters", {}).get("spec_key") == spec.key()
    except (ValueError, FileNotFoundError):
        return False


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
    zoo : Zoo
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
