"""The model zoo: specifications, training, and the prediction store (see :mod:`shifteval.zoo.store`).

:func:`build_zoo` trains every model of a zoo on a world's training set, predicts every split, and
stores the predictions under a key covering the world's configuration, the model specification and
the library files that produce them (``datasets/world.py``, ``zoo/models.py``, ``nets.py`` and everything
they import; see :mod:`shifteval.utils.cache`). Models already in the store are not trained again, so
chapters share one zoo. Models are trained side by side, one process per core, each on one torch thread
(:func:`workers_for`), which also makes the stored predictions independent of the number of processes.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..utils import cache
from ..utils.cache import cache_dir
from ..utils.processes import spawn_safe
from .models import ModelSpec, default_zoo, epochs_of, train_and_predict
from .store import Predictions, PredictionStore, validate_predictions

if TYPE_CHECKING:
    from ..datasets.world import Replication, World

__all__ = [
    "ModelSpec", "PredictionStore", "Predictions", "Zoo", "build_zoo", "default_zoo",
    "validate_predictions", "accuracy_changes", "replication_changes", "change_table", "table2", "workers_for",
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
    workers: int | None = None,
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
        Show a progress bar and one line per trained model.
    workers : int, optional
        Processes that train models side by side (:func:`workers_for`: one per core by default). Each
        trains on one torch thread, so the predictions are the same for any count.

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
        _fill(world, specs, store, splits, progress, workers)
    return Zoo(specs, store, splits)


def workers_for(n_models: int, workers: int | None = None) -> int:
    """How many processes train a zoo: one per core (``os.cpu_count()``), never more than the models.

    Each process trains on one torch thread (:func:`shifteval.zoo.models.one_thread`), so the machine's
    cores are used without oversubscription; ``SHIFTEVAL_ZOO_WORKERS`` overrides the count.

    Parameters
    ----------
    n_models : int
        Models left to train.
    workers : int, optional
        A requested count; by default ``SHIFTEVAL_ZOO_WORKERS`` or the number of cores.

    Returns
    -------
    int
        At least 1, at most ``n_models`` (1 when there is nothing to train).

    Raises
    ------
    ValueError
        If the requested count (argument or ``SHIFTEVAL_ZOO_WORKERS``) is not a positive integer.

    Examples
    --------
    >>> workers_for(5, 2), workers_for(1, 8), workers_for(0, 4)
    (2, 1, 1)
    """
    requested = (
        workers if workers is not None else os.environ.get("SHIFTEVAL_ZOO_WORKERS") or os.cpu_count() or 1
    )
    try:
        count = int(requested)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"zoo workers must be a positive integer (SHIFTEVAL_ZOO_WORKERS), got {requested!r}")
    return max(1, min(count, n_models))


# The training data of a worker process, set once by _start_worker (not pickled again per model).
_WORKER_DATA: dict = {}


def _start_worker(x_train, y_train, images, seed) -> None:
    _WORKER_DATA.update(x_train=x_train, y_train=y_train, images=images, seed=seed)


def _train_in_worker(spec: ModelSpec) -> dict:
    d = _WORKER_DATA
    return train_and_predict(spec, d["x_train"], d["y_train"], d["images"], seed=d["seed"])


def _fill(world, specs, store, splits, progress, workers=None) -> None:
    import multiprocessing
    import time
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from tqdm import tqdm

    todo = [s for s in specs if not _complete(store, s, splits)]
    if not todo:
        return
    images = {split: world.images[world.split_index(split)] for split in splits}
    labels = {split: world.labels[world.split_index(split)] for split in splits}
    train = world.split_index("train")
    data = (world.images[train], world.labels[train], images, world.config.seed)
    n = workers_for(len(todo), workers)
    if n > 1 and not spawn_safe():
        warnings.warn(
            "training the zoo in one process: the main script has no 'if __name__ == \"__main__\":' guard, "
            "which worker processes need (they import it again)",
            stacklevel=3,
        )
        n = 1
    bar = tqdm(total=len(todo), desc=f"training zoo ({n} process{'es' * (n > 1)})", unit="model",
               disable=not progress)  # fmt: skip
    start = time.perf_counter()

    def finished(spec: ModelSpec, probs: dict) -> None:
        # the sidecar of the last split marks the model complete, so write it last
        for split in splits:
            meta = {"spec": _spec_dict(spec), "spec_key": spec.key(), "world": world.config.key()}
            store.save(spec.name, split, labels[split], probs[split], meta)
        bar.update(1)
        if progress:  # one line per model: long work shows that it goes on
            acc = float((probs["v1"].argmax(1) == labels["v1"]).mean()) if "v1" in probs else float("nan")
            bar.write(f"  {spec.name}: trained, v1 accuracy {acc:.3f} ({time.perf_counter() - start:.0f} s)")

    if n == 1:
        _start_worker(*data)
        try:
            for spec in todo:
                finished(spec, _train_in_worker(spec))
        finally:
            _WORKER_DATA.clear()
    else:  # a fresh interpreter per worker ("spawn"): no torch thread pool inherited through fork
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(n, mp_context=context, initializer=_start_worker, initargs=data) as pool:
            # longest first, so that no process is left with one long model at the end
            futures = {pool.submit(_train_in_worker, s): s for s in sorted(todo, key=epochs_of, reverse=True)}
            for future in as_completed(futures):
                finished(futures[future], future.result())
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
