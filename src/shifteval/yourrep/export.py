"""Writing replication folders: from arrays, from the world's zoo, from a released correctness table.

:func:`write_folder` writes the layout of :mod:`shifteval.yourrep.folder` (probabilities through
:class:`shifteval.zoo.PredictionStore`, so the files are the project's prediction format);
:func:`export_world` writes the replication world's zoo on v1 and MatchedFrequency, with fresh votes
and an unlabeled third set, the ``your-replication`` chapter's worked example (``shifteval
export-predictions``); :func:`from_correctness` converts a per-image correctness table such as the
ImageNetV2 release's (:func:`shifteval.datasets.released.imagenetv2_correctness`); :func:`from_store`
converts a prediction store (``shifteval predict``'s output), and :func:`store_folder` does it once under
the cache.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np

from shifteval import zoo
from shifteval.datasets import released
from shifteval.datasets import world as worlds
from shifteval.selection import study as selection_study

from ..utils.cache import cache_dir
from ..utils.io import atomic_write_bytes, atomic_write_json
from .folder import SETS, UNLABELED, fingerprint


def _save_npz(path: Path, **arrays) -> None:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    atomic_write_bytes(path, buf.getvalue())


def write_folder(
    out: str | Path,
    labels: dict,
    predictions: dict,
    votes: dict | None = None,
    names: dict | None = None,
    parameters: dict | None = None,
) -> Path:
    """Write a replication folder (layout in :mod:`shifteval.yourrep.folder`).

    Parameters
    ----------
    out : str or pathlib.Path
        The folder (created; files already there are overwritten).
    labels : dict
        ``{"original": (N,) ints, "new": (M,) ints}``.
    predictions : dict
        ``{model: {set: {"probs" | "predicted" | "correct": array}}}`` for sets ``original``, ``new``
        and optionally ``unlabeled`` (``probs`` only).
    votes : dict, optional
        ``{"original": (k, n), "new": (k, n)}``.
    names : dict, optional
        Display names (``original``, ``new``, ``unlabeled``) and ``n_classes``, into ``replication.json``.
    parameters : dict, optional
        Free-form provenance, into every prediction's sidecar.

    Returns
    -------
    pathlib.Path
        ``out``.

    Examples
    --------
    >>> import tempfile
    >>> from shifteval.yourrep import folder
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = {f"m{i}": {"original": {"predicted": np.array([0, 1, i % 2])}, "new": {"correct": np.array([1, i % 2])}}
    ...          for i in range(3)}
    ...     d = folder.load_folder(write_folder(tmp, {"original": np.array([0, 1, 1]), "new": np.array([1, 0])}, p))
    ...     d.models, d.correct["new"].sum(1).tolist()
    (('m0', 'm1', 'm2'), [1, 2, 1])
    """
    root = Path(out)
    for s in SETS:
        (root / "labels").mkdir(parents=True, exist_ok=True)
        buf = io.BytesIO()
        np.save(buf, np.asarray(labels[s], np.int64), allow_pickle=False)
        atomic_write_bytes(root / "labels" / f"{s}.npy", buf.getvalue())
    store = zoo.PredictionStore(root / "predictions")
    for model, sets in predictions.items():
        for s, arrays in sets.items():
            path = root / "predictions" / model / f"{s}.npz"
            if "probs" in arrays and s in SETS:
                store.save(model, s, labels[s], arrays["probs"], parameters)
            elif s == UNLABELED:
                _save_npz(path, probs=np.asarray(arrays["probs"], np.float32))
            else:
                ((key, value),) = ((k, v) for k, v in arrays.items() if k in ("predicted", "correct"))
                _save_npz(path, **{key: np.asarray(value)})
    for s, (k, n) in (votes or {}).items():
        (root / "votes").mkdir(exist_ok=True)
        _save_npz(root / "votes" / f"{s}.npz", k=np.asarray(k, np.int64), n=np.asarray(n, np.int64))
    if names:
        atomic_write_json(root / "replication.json", names)
    return root


def export_world(
    out: str | Path,
    world: dict | None = None,
    zoo_size: str = "default",
    new: str = "matchedfrequency",
    unlabeled: str | None = "threshold0.7",
    annotators: int = 40,
    seed: int = 0,
) -> Path:
    """The replication world's zoo as a replication folder: v1 against a replicated set.

    Every model's probabilities on v1 (original) and on ``new``; fresh votes of ``annotators``
    annotators on both, as Engstrom et al. (2020, §3) re-annotated ImageNet and ImageNetV2
    (:func:`shifteval.selection.study.reannotate`); and the probabilities on a third replicated set as
    the unlabeled set. The zoo is read from (or trained into) the shared cache
    (:func:`shifteval.zoo.build.build_zoo`).

    Parameters
    ----------
    out : str or pathlib.Path
        The folder to write.
    world : dict, optional
        World configuration (:func:`shifteval.datasets.world.build_world`); the default world by default.
    zoo_size : {"default", "smoke"}
        Which zoo.
    new : str
        The replicated set playing the new test set.
    unlabeled : str, optional
        The replicated set given without labels (None: no unlabeled set).
    annotators : int
        Fresh votes per image (0: no votes).
    seed : int
        Seed of the fresh votes.

    Returns
    -------
    pathlib.Path
        ``out``.

    Examples
    --------
    >>> import tempfile
    >>> from shifteval.yourrep import folder
    >>> small = {"n_train": 1000, "n_v1": 400, "n_pool": 3000, "per_class": 40}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     d = folder.load_folder(export_world(tmp, small, "smoke"))
    ...     len(d.models), d.names["new"], sorted(d.votes)
    (6, 'matchedfrequency', ['new', 'original'])
    """
    w = worlds.build_world(world or {})
    z = zoo.build_zoo(w, zoo.default_zoo(zoo_size), progress=False)
    sets = {"original": "v1", "new": new} | ({UNLABELED: unlabeled} if unlabeled else {})
    labels = {s: w.labels[w.split_index(split)] for s, split in sets.items()}
    predictions = {
        m: {s: {"probs": z.predictions(m, split).probs} for s, split in sets.items()} for m in z.names
    }
    votes = None
    if annotators:
        s_true = w.examples.s.to_numpy()
        v1, v2 = selection_study.reannotate(
            s_true[w.split_index("v1")], s_true[w.split_index(new)], annotators, seed
        )
        votes = {
            "original": (v1.sum(1), np.full(len(v1), annotators)),
            "new": (v2.sum(1), np.full(len(v2), annotators)),
        }
    names = {"original": "v1", "new": new, "n_classes": int(w.labels.max()) + 1}
    names |= {UNLABELED: unlabeled} if unlabeled else {}
    params = {"world": w.config.key(), "zoo_size": zoo_size, "annotators": annotators, "seed": seed}
    root = write_folder(out, {s: labels[s] for s in SETS}, predictions, votes, names, params)
    atomic_write_json(root / "export.json", {"source": "shifteval export-predictions", **params})
    return root


def from_correctness(
    corr: released.Correctness, out: str | Path, original: str, new: str, models: list[str] | None = None
) -> Path:
    """A per-image correctness table (e.g. the ImageNetV2 release's) as a replication folder.

    Predictions are written as ``correct`` only (no probabilities): the folder allows the fits but
    not matching or the MLM.

    Parameters
    ----------
    corr : shifteval.datasets.released.Correctness
        The table (:func:`shifteval.datasets.released.imagenetv2_correctness`).
    out : str or pathlib.Path
        The folder to write.
    original, new : str
        Dataset names in ``corr`` (e.g. ``imagenet-validation-original``, ``imagenetv2-b-33``).
    models : list of str, optional
        Models to write (all by default).

    Returns
    -------
    pathlib.Path
        ``out``.

    Examples
    --------
    >>> import tempfile
    >>> c = released.Correctness(("a", "b"), ("o", "n"), {"o": np.eye(2, 3, dtype=bool), "n": np.eye(2, dtype=bool)},
    ...                          {"o": None, "n": None}, {"o": np.array([0, 1, 2]), "n": np.array([2, 0])})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     sorted(p.name for p in from_correctness(c, tmp, "o", "n").rglob("*.npz"))
    ['new.npz', 'new.npz', 'original.npz', 'original.npz']
    """
    for d in (original, new):
        if d not in corr.datasets:
            raise ValueError(f"dataset {d!r} is not in the correctness table ({', '.join(corr.datasets)})")
    names = list(models) if models is not None else list(corr.models)
    rows = {m: corr.models.index(m) for m in names}
    predictions = {
        m: {s: {"correct": corr.top1[d][i]} for s, d in (("original", original), ("new", new))}
        for m, i in rows.items()
    }
    labels = {"original": corr.labels[original], "new": corr.labels[new]}
    meta = {"original": original, "new": released.IMAGENETV2_NAMES.get(new, new)}
    root = write_folder(out, labels, predictions, names=meta)
    (root / "README.txt").write_text(
        "Converted from a per-image correctness table: "
        + json.dumps({"original": original, "new": new})
        + "\n"
    )
    return root


def from_store(
    store: str | Path | zoo.PredictionStore,
    out: str | Path,
    original: str,
    new: str,
    unlabeled: str | None = None,
    models: list[str] | None = None,
) -> Path:
    """A prediction store (``shifteval predict``'s output) as a replication folder.

    Every model with predictions on both ``original`` and ``new`` is written with its probabilities;
    the true labels are taken from the store, where every model's copy must agree
    (:meth:`shifteval.zoo.PredictionStore.labels`). With ``unlabeled``, the models that have predictions
    on that dataset contribute their probabilities as the unlabeled set (its labels are not written).

    Parameters
    ----------
    store : str, pathlib.Path or shifteval.zoo.PredictionStore
        The prediction store (``<store>/<model>/<dataset>.npz``).
    out : str or pathlib.Path
        The folder to write.
    original, new : str
        The stored datasets that play the original and the new test set (e.g. ``cifar10``, ``cifar10.1``).
    unlabeled : str, optional
        A stored dataset to treat as unlabeled (e.g. ``cinic10``).
    models : list of str, optional
        Models to write (default: every model with both sets).

    Returns
    -------
    pathlib.Path
        ``out``.

    Raises
    ------
    ValueError
        If no model has both sets, models disagree on a set's labels (the unlabeled set's included) or on
        the number of classes, or no model has ``unlabeled``; each message names the store or the
        dataset and the models.

    Examples
    --------
    >>> import tempfile
    >>> from shifteval.yourrep import folder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = zoo.PredictionStore(Path(tmp.name) / "store")
    >>> for m in ("a", "b"):
    ...     _ = store.save(m, "cifar10", [0, 1, 1], np.eye(2)[[0, 1, 0]])
    ...     _ = store.save(m, "cifar10.1", [1, 0], np.eye(2)[[1, 1]])
    >>> data = folder.load_folder(from_store(store, Path(tmp.name) / "rep", "cifar10", "cifar10.1"))
    >>> data.models, data.names["original"], data.correct["new"].sum(1).tolist()
    (('a', 'b'), 'cifar10', [1, 1])
    >>> _ = store.save("b", "cifar10.1-bad", [0, 0], np.eye(2)[[1, 1]])
    >>> _ = store.save("a", "cifar10.1-bad", [1, 0], np.eye(2)[[1, 1]])
    >>> from_store(store, Path(tmp.name) / "rep2", "cifar10", "cifar10.1-bad")
    Traceback (most recent call last):
    ...
    ValueError: the stored labels of 'cifar10.1-bad' differ between models 'a' and 'b' (first at image 0: 1 vs 0); predictions of one dataset must come from the same files
    >>> tmp.cleanup()
    """
    store = store if isinstance(store, zoo.PredictionStore) else zoo.PredictionStore(store)
    pairs = store.pairs(original, new, models)
    names = list(pairs)
    classes = {m: a.probs.shape[1] for m, (a, _) in pairs.items()}
    if len(set(classes.values())) > 1:
        raise ValueError(f"the models in {store.root} predict different numbers of classes: {classes}")
    labels = {"original": store.labels(original, names), "new": store.labels(new, names)}
    predictions = {
        m: {"original": {"probs": a.probs}, "new": {"probs": b.probs}} for m, (a, b) in pairs.items()
    }
    if unlabeled is not None:
        having = [m for m in names if store.has(m, unlabeled)]
        if not having:
            raise ValueError(
                f"no model in {store.root} with predictions on {original!r} and {new!r} also has {unlabeled!r}"
            )
        store.labels(unlabeled, having)  # the same images, in the same order, for every model
        for m in having:
            probs = store.load(m, unlabeled).probs
            if probs.shape[1] != pairs[m][0].probs.shape[1]:
                raise ValueError(
                    f"model {m!r}: {unlabeled} has {probs.shape[1]} classes but {original} has "
                    f"{pairs[m][0].probs.shape[1]}"
                )
            predictions[m]["unlabeled"] = {"probs": probs}
    meta = {"original": original, "new": new, "n_classes": int(next(iter(pairs.values()))[0].probs.shape[1])}
    if unlabeled is not None:
        meta["unlabeled"] = unlabeled
    meta["store"] = str(store.root.resolve())
    return write_folder(out, labels, predictions, names=meta, parameters={"store": str(store.root.resolve())})


def store_folder(
    store: str | Path, original: str, new: str, unlabeled: str | None = None, root: str | Path | None = None
) -> Path:
    """:func:`from_store` written once under the cache: the same store and sets give the same folder.

    The folder is named by a hash of the store's files (:func:`shifteval.yourrep.folder.fingerprint`)
    and the three set names, written beside its final name and renamed into place, so an interrupted
    conversion is never mistaken for a finished one.

    Parameters
    ----------
    store : str or pathlib.Path
        The prediction store.
    original, new, unlabeled : str
        See :func:`from_store`.
    root : str or pathlib.Path, optional
        Where converted folders live (default: ``<cache>/replication-folders``,
        :func:`shifteval.utils.cache.cache_dir`).

    Returns
    -------
    pathlib.Path
        The replication folder.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = zoo.PredictionStore(Path(tmp.name) / "store")
    >>> _ = store.save("a", "v1", [0, 1], np.eye(2)); _ = store.save("a", "v2", [1], np.eye(2)[[1]])
    >>> first = store_folder(store.root, "v1", "v2", root=Path(tmp.name) / "cache")
    >>> first == store_folder(store.root, "v1", "v2", root=Path(tmp.name) / "cache"), (first / "labels").is_dir()
    (True, True)
    >>> tmp.cleanup()
    """
    base = Path(root) if root is not None else cache_dir() / "replication-folders"
    digest = hashlib.sha256(
        json.dumps([str(Path(store).resolve()), fingerprint(store), original, new, unlabeled]).encode()
    ).hexdigest()[:16]
    final = base / f"{Path(store).name}-{digest}"
    if final.is_dir():
        return final
    base.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=".partial-", dir=base))
    try:
        from_store(store, partial, original, new, unlabeled)
        partial.chmod(0o755)  # mkdtemp's folder is private; the folder is as readable as the store
        partial.rename(final)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        if not final.is_dir():  # another process may have finished the same conversion first
            raise
    return final
