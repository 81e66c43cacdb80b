"""Writing replication folders: from arrays, from the world's zoo, from a released correctness table.

:func:`write_folder` writes the layout of :mod:`shifteval.yourrep.folder` (probabilities through
:class:`shifteval.zoo.PredictionStore`, so the files are the project's prediction format);
:func:`export_world` writes the replication world's zoo on v1 and MatchedFrequency, with fresh votes
and an unlabeled third set, the ``your-replication`` chapter's worked example (``shifteval
export-predictions``); :func:`from_correctness` converts a per-image correctness table such as the
ImageNetV2 release's (:func:`shifteval.datasets.released.imagenetv2_correctness`).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from shifteval import zoo
from shifteval.datasets import released
from shifteval.datasets import world as worlds
from shifteval.selection import study as selection_study

from ..utils.io import atomic_write_bytes, atomic_write_json
from .folder import SETS, UNLABELED


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
