"""Building a zoo: train every model of a zoo on a world, predict every split, store the predictions.

:func:`build_zoo` trains every model of a zoo on a world's training set, predicts every split, and
stores the predictions under a key covering the world's configuration, the model specification and
the library files that produce them (``datasets/world.py``, ``zoo/models.py``, ``nets.py`` and everything
they import; see :mod:`shifteval.utils.cache`). Models already in the store are not trained again, so
chapters share one zoo. Models are trained side by side, one process per core, each on one torch thread
(:func:`workers_for`), which also makes the stored predictions independent of the number of processes.
:class:`Zoo` reads the stored predictions back: accuracy tables and correctness matrices.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Sequence
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
from .store import Predictions, PredictionStore

if TYPE_CHECKING:
    from ..datasets.world import World


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


# The images and labels of a worker process, set once by _start_worker (not pickled again per model).
_WORKER_DATA: dict = {}


def _start_worker(images, labels, seed) -> None:
    _WORKER_DATA.update(images=images, labels=labels, seed=seed)


def _train_in_worker(task: tuple) -> dict:
    spec, fit, predict = task
    d = _WORKER_DATA
    inputs = {name: d["images"][index] for name, index in predict.items()}
    return train_and_predict(spec, d["images"][fit], d["labels"][fit], inputs, seed=d["seed"])


def train_many(
    tasks: Sequence[tuple[ModelSpec, ArrayLike, dict[str, ArrayLike]]],
    images: ArrayLike,
    labels: ArrayLike,
    seed: int = 0,
    workers: int | None = None,
    done: Callable[[int, dict], None] | None = None,
    what: str = "the models",
) -> list[dict]:
    """Train and predict several models side by side, one process per core, each on one thread.

    Each task fits its model on some of ``images`` and predicts others
    (:func:`~shifteval.zoo.models.train_and_predict`); one thread per model makes its predictions the same
    however many processes run (:func:`~shifteval.zoo.models.one_thread`). The images travel to each
    process once; a task names them by index.

    Parameters
    ----------
    tasks : sequence of (ModelSpec, index, dict of str -> index)
        The model, the indices of its training images, and per output name the indices of the images to
        predict. They start in this order (longest first keeps a process from being left with one long model).
    images : ndarray (N, H, W)
        Every image a task refers to.
    labels : ndarray (N,)
        Their classes.
    seed : int
        Seed of each model's training (a spec's own ``seed`` parameter overrides it).
    workers : int, optional
        Processes (:func:`workers_for`: one per core by default); 1 trains in this process.
    done : callable(i, probs), optional
        Called in this process as each task finishes (``i`` its position in ``tasks``).
    what : str
        What is trained, for the warning when it must run in one process.

    Returns
    -------
    list of dict
        Per task, its output name -> softmax probabilities (M, 10).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.random((40, 4, 4)), np.arange(40) % 2
    >>> task = (ModelSpec("nb", "sklearn", "gaussian_nb"), np.arange(30), {"held": np.arange(30, 40)})
    >>> [p["held"].shape for p in train_many([task, task], x, y, workers=1)]
    [(10, 10), (10, 10)]
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    tasks = list(tasks)
    n = workers_for(len(tasks), workers)
    if n > 1 and not spawn_safe():
        warnings.warn(
            f"training {what} in one process: the main script has no 'if __name__ == \"__main__\":' guard, "
            "which worker processes need (they import it again)",
            stacklevel=3,
        )
        n = 1
    out: list = [None] * len(tasks)
    if n == 1:
        _start_worker(images, labels, seed)
        try:
            for i, task in enumerate(tasks):
                out[i] = _train_in_worker(task)
                if done is not None:
                    done(i, out[i])
        finally:
            _WORKER_DATA.clear()
        return out
    # a fresh interpreter per worker ("spawn"): no torch thread pool inherited through fork
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        n, mp_context=context, initializer=_start_worker, initargs=(images, labels, seed)
    ) as pool:
        futures = {pool.submit(_train_in_worker, task): i for i, task in enumerate(tasks)}
        for future in as_completed(futures):
            i = futures[future]
            out[i] = future.result()
            if done is not None:
                done(i, out[i])
    return out


def _fill(world, specs, store, splits, progress, workers=None) -> None:
    import time

    from tqdm import tqdm

    todo = [s for s in specs if not _complete(store, s, splits)]
    if not todo:
        return
    # longest first, so that no process is left with one long model at the end
    todo = sorted(todo, key=epochs_of, reverse=True)
    index = {split: world.split_index(split) for split in splits}
    labels = {split: world.labels[i] for split, i in index.items()}
    n = workers_for(len(todo), workers)
    bar = tqdm(total=len(todo), desc=f"training zoo ({n} process{'es' * (n > 1)})", unit="model",
               disable=not progress)  # fmt: skip
    start = time.perf_counter()

    def finished(i: int, probs: dict) -> None:
        spec = todo[i]
        # the sidecar of the last split marks the model complete, so write it last
        for split in splits:
            meta = {"spec": _spec_dict(spec), "spec_key": spec.key(), "world": world.config.key()}
            store.save(spec.name, split, labels[split], probs[split], meta)
        bar.update(1)
        if progress:  # one line per model: long work shows that it goes on
            acc = float((probs["v1"].argmax(1) == labels["v1"]).mean()) if "v1" in probs else float("nan")
            bar.write(f"  {spec.name}: trained, v1 accuracy {acc:.3f} ({time.perf_counter() - start:.0f} s)")

    tasks = [(spec, index["train"], index) for spec in todo]
    train_many(tasks, world.images, world.labels, world.config.seed, n, done=finished, what="the zoo")
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
