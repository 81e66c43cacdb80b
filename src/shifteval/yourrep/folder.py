"""The replication folder: one documented layout for your models' predictions on two test sets.

A folder ``DIR`` describes one replication (an original test set and a new one) and the models
evaluated on both::

    DIR/
      labels/original.npy            int, shape (N,): true class of every original test image
      labels/new.npy                 int, shape (M,): true class of every new test image
      predictions/<model>/original.npz   that model's predictions on the original set
      predictions/<model>/new.npz        ... and on the new set
      predictions/<model>/unlabeled.npz  optional: its softmax probabilities on an unlabeled third set
      votes/original.npz             optional: per-image annotator votes, arrays ``k`` and ``n``
      votes/new.npz                  optional: the same for the new set (both or neither)
      replication.json               optional: {"original": "CIFAR-10", "new": "CIFAR-10.1",
                                                "unlabeled": "...", "n_classes": 10}

A prediction file is the project's prediction format (:mod:`shifteval.zoo.store`, what
:class:`shifteval.zoo.PredictionStore` writes; the ``.json`` sidecar is optional here) holding, from
most to least informative, one of

- ``probs``: float, N×K softmax probabilities (rows on the simplex); with ``labels`` beside them
  (they must equal the label file);
- ``predicted``: int, shape (N,), the predicted class of every image;
- ``correct``: bool, shape (N,), whether the prediction is right (all the ImageNetV2 release ships,
  :func:`shifteval.datasets.released.imagenetv2_correctness`).

An unlabeled file holds ``probs`` only. Votes are ``k`` (how many annotators selected the image) and
``n`` (how many were asked; it may vary from image to image), integers with ``0 <= k <= n`` and
``n >= 1``, one entry per image of the set, in the label file's order.

:func:`load_folder` checks everything before any analysis runs and refuses a malformed folder with one
:class:`FolderError` listing every problem, each naming the file and what was expected.
:func:`available_analyses` says which analyses of the ``your-replication`` chapter the folder allows
and why the others are skipped.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..utils import validation

SETS = ("original", "new")
UNLABELED = "unlabeled"
KINDS = ("probs", "predicted", "correct")
#: The analyses of the chapter, in page order.
ANALYSES = ("linear_fits", "matching", "selection", "mlm", "label_free")


class FolderError(ValueError):
    """A replication folder that does not follow the layout; the message lists every problem."""


@dataclass(frozen=True)
class ReplicationData:
    """A validated replication folder, loaded.

    Attributes
    ----------
    root : pathlib.Path
        The folder.
    names : dict
        Display names of ``original``, ``new`` and ``unlabeled`` (``replication.json`` or the keys).
    labels : dict of str to ndarray of int64
        True labels of ``original`` and ``new``.
    models : tuple of str
        Models with predictions on both sets, sorted.
    correct : dict of str to ndarray of bool, shape (models, images)
        Per-image correctness on ``original`` and ``new``, rows in ``models`` order.
    probs : dict of str to dict of str to ndarray
        ``probs[set][model]``: softmax probabilities, for the models and sets that have them
        (``original``, ``new``, ``unlabeled``).
    votes : dict of str to (ndarray, ndarray)
        ``votes[set] = (k, n)`` for ``original`` and ``new``, or empty.
    n_classes : int
        Number of classes K.
    kinds : dict of str to str
        How each model's predictions were given: ``probs``, ``predicted`` or ``correct`` (the least
        informative of its two files).
    store : str or None
        The prediction store the folder was converted from (``replication.json``'s ``store``), if any.
    """

    root: Path
    names: dict
    labels: dict
    models: tuple
    correct: dict
    probs: dict
    votes: dict
    n_classes: int
    kinds: dict = field(default_factory=dict)
    store: str | None = None


def _read_npz(path: Path, problems: list) -> dict | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        problems.append(f"{path}: not a readable .npz of numeric arrays ({exc})")
        return None


def _read_labels(path: Path, problems: list) -> np.ndarray | None:
    if not path.is_file():
        problems.append(f"{path}: missing; expected an int array of true labels, one per image (.npy)")
        return None
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        problems.append(f"{path}: not a readable .npy array ({exc})")
        return None
    if arr.ndim != 1 or len(arr) == 0 or not np.issubdtype(arr.dtype, np.integer):
        problems.append(f"{path}: expected a non-empty 1-D integer array, got {arr.dtype} shape {arr.shape}")
        return None
    if arr.min() < 0:
        problems.append(f"{path}: labels must be >= 0; found {int(arr.min())}")
        return None
    return arr.astype(np.int64)


def _check_probs(path: Path, probs: np.ndarray, n: int, k: int | None, problems: list) -> np.ndarray | None:
    if probs.ndim != 2 or len(probs) != n:
        problems.append(f"{path}: 'probs' must have shape ({n}, K) (one row per image), got {probs.shape}")
        return None
    if k is not None and probs.shape[1] != k:
        problems.append(f"{path}: 'probs' must have {k} columns (one per class), got {probs.shape[1]}")
        return None
    try:
        return validation.probabilities(probs, "probs", where=str(path)).astype(np.float32)
    except ValueError as exc:
        problems.append(f"{exc} (expected softmax probabilities: rows in [0, 1] summing to 1)")
        return None


def _read_prediction(path: Path, labels: np.ndarray, k: int | None, problems: list) -> tuple | None:
    """``(kind, correct, probs or None)`` of one prediction file, or None after recording a problem."""
    arrays = _read_npz(path, problems)
    if arrays is None:
        return None
    n = len(labels)
    if "labels" in arrays and not np.array_equal(np.asarray(arrays["labels"]).ravel(), labels):
        problems.append(f"{path}: its 'labels' differ from the label file; expected the same {n} labels")
        return None
    if "probs" in arrays:
        probs = _check_probs(path, np.asarray(arrays["probs"]), n, k, problems)
        return None if probs is None else ("probs", probs.argmax(1) == labels, probs)
    if "predicted" in arrays:
        pred = np.asarray(arrays["predicted"])
        if pred.shape != (n,) or not np.issubdtype(pred.dtype, np.integer):
            problems.append(
                f"{path}: 'predicted' must be {n} integers (one per image), got {pred.dtype} {pred.shape}"
            )
            return None
        if pred.min() < 0 or (k is not None and pred.max() >= k):
            problems.append(
                f"{path}: 'predicted' must lie in [0, {k}); found {int(pred.min())}..{int(pred.max())}"
            )
            return None
        return "predicted", pred == labels, None
    if "correct" in arrays:
        corr = np.asarray(arrays["correct"])
        if corr.shape != (n,) or not (corr.dtype == bool or np.isin(corr, (0, 1)).all()):
            problems.append(
                f"{path}: 'correct' must be {n} booleans (one per image), got {corr.dtype} {corr.shape}"
            )
            return None
        return "correct", corr.astype(bool), None
    problems.append(
        f"{path}: holds {sorted(arrays)}; expected 'probs' (N×K), 'predicted' (N,) or 'correct' (N,)"
    )
    return None


def _read_votes(path: Path, n_images: int, problems: list) -> tuple | None:
    arrays = _read_npz(path, problems)
    if arrays is None:
        return None
    if not {"k", "n"} <= set(arrays):
        problems.append(f"{path}: holds {sorted(arrays)}; expected arrays 'k' and 'n' (votes per image)")
        return None
    k, n = np.asarray(arrays["k"]), np.asarray(arrays["n"])
    if n.ndim == 0:
        n = np.full(k.shape, n)
    for name, arr in (("k", k), ("n", n)):
        if arr.shape != (n_images,) or not np.issubdtype(arr.dtype, np.integer):
            problems.append(
                f"{path}: '{name}' must be {n_images} integers (one per image), got {arr.dtype} {arr.shape}"
            )
            return None
    if n.min() < 1 or k.min() < 0:
        problems.append(
            f"{path}: expected n >= 1 and k >= 0 on every image; found n {int(n.min())}, k {int(k.min())}"
        )
        return None
    over = np.flatnonzero(k > n)
    if len(over):
        i = int(over[0])
        problems.append(
            f"{path}: k > n on {len(over)} image(s) (first: image {i}, k = {int(k[i])} > n = {int(n[i])}); "
            "expected 0 <= k <= n"
        )
        return None
    return k.astype(np.int64), n.astype(np.int64)


def _n_classes(root: Path, meta: dict, problems: list) -> int | None:
    """K from ``replication.json``, else from the first probability file (None: from the labels)."""
    if "n_classes" in meta:
        return int(meta["n_classes"])
    for path in sorted((root / "predictions").glob("*/*.npz")):
        try:
            with np.load(path, allow_pickle=False) as data:
                if "probs" in data.files and np.ndim(data["probs"]) == 2:
                    return int(data["probs"].shape[1])
        except (OSError, ValueError, EOFError, zipfile.BadZipFile):
            return None  # reported when the file is read
    return None


def load_folder(path: str | Path) -> ReplicationData:
    """Validate and load a replication folder (layout in :mod:`shifteval.yourrep.folder`).

    Parameters
    ----------
    path : str or pathlib.Path
        The folder.

    Returns
    -------
    ReplicationData

    Raises
    ------
    FolderError
        Listing every problem found, each with the file and what was expected: missing files, image
        counts that differ from the label file, labels or predicted classes out of range,
        probabilities that are not distributions, votes with ``k > n``.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = Path(tmp)
    ...     (root / "labels").mkdir()
    ...     np.save(root / "labels" / "original.npy", np.array([0, 1, 1]))
    ...     np.save(root / "labels" / "new.npy", np.array([1, 0]))
    ...     (root / "predictions" / "m").mkdir(parents=True)
    ...     np.savez(root / "predictions" / "m" / "original.npz", predicted=np.array([0, 1, 0]))
    ...     np.savez(root / "predictions" / "m" / "new.npz", predicted=np.array([1, 0, 0]))
    ...     try:
    ...         load_folder(root)
    ...     except FolderError as exc:
    ...         print(str(exc).splitlines()[-1].split("/")[-1])
    new.npz: 'predicted' must be 2 integers (one per image), got int64 (3,)
    """
    root = Path(path)
    if not root.is_dir():
        raise FolderError(f"{root}: no such folder; expected a replication folder (labels/, predictions/)")
    problems: list[str] = []
    meta = _read_meta(root, problems)
    labels, k = _read_label_files(root, meta, problems)
    pred_dir = root / "predictions"
    models = sorted(p.name for p in pred_dir.iterdir() if p.is_dir()) if pred_dir.is_dir() else []
    if not models:
        problems.append(
            f"{pred_dir}: no model folders; expected predictions/<model>/original.npz and new.npz"
        )
    correct, probs, kinds = _read_predictions(pred_dir, models, labels, k, problems)
    votes = _read_vote_files(root, labels, problems)
    if problems:
        raise FolderError(f"{root} is not a valid replication folder:\n- " + "\n- ".join(problems))
    if k is None:
        k = int(max(np.asarray(labels[s]).max() for s in SETS)) + 1  # every label file was read
    names = {s: str(meta.get(s, s)) for s in (*SETS, UNLABELED)}
    ok = tuple(m for m in models if m in kinds)
    return ReplicationData(
        root=root,
        names=names,
        labels=labels,
        models=ok,
        correct={s: np.stack(correct[s]) for s in SETS},
        probs=probs,
        votes=votes,
        n_classes=int(k),
        kinds=kinds,
        store=meta.get("store"),
    )


def _read_meta(root: Path, problems: list) -> dict:
    """``replication.json`` as a dict (empty when absent or unreadable; unreadable is a problem)."""
    meta = {}
    if (root / "replication.json").is_file():
        try:
            meta = json.loads((root / "replication.json").read_text(encoding="utf-8"))
        except ValueError as exc:
            problems.append(f"{root / 'replication.json'}: not valid JSON ({exc})")
    return meta


def _read_label_files(root: Path, meta: dict, problems: list) -> tuple[dict, int | None]:
    """Both label files (None where unusable) and K (:func:`_n_classes`); labels must lie below K."""
    labels = {s: _read_labels(root / "labels" / f"{s}.npy", problems) for s in SETS}
    k = _n_classes(root, meta, problems)
    for s, y in labels.items():
        if y is not None and k is not None and y.max() >= k:
            problems.append(
                f"{root / 'labels' / f'{s}.npy'}: labels must lie in [0, {k}); found {int(y.max())}"
            )
            labels[s] = None
    return labels, k


def _read_predictions(pred_dir: Path, models: list, labels: dict, k: int | None, problems: list) -> tuple:
    """``(correct, probs, kinds)`` of every model readable on both sets, with its unlabeled probabilities.

    ``correct`` maps each set to the models' correctness arrays, ``probs`` each set (and the unlabeled
    one) to ``{model: probabilities}`` where the files hold them, ``kinds`` each model to its most
    informative kind of prediction (:data:`KINDS`).
    """
    correct: dict[str, list[np.ndarray]] = {s: [] for s in SETS}
    probs: dict = {s: {} for s in (*SETS, UNLABELED)}
    kinds = {}
    for m in models:
        ready = _read_model(pred_dir / m, labels, k, problems)
        if len(ready) == 2:
            for s in SETS:
                correct[s].append(ready[s][1])
                if ready[s][2] is not None:
                    probs[s][m] = ready[s][2]
            kinds[m] = max((ready[s][0] for s in SETS), key=KINDS.index)
        f = pred_dir / m / f"{UNLABELED}.npz"
        if f.is_file():
            unlabeled = _read_unlabeled(f, k, problems)
            if unlabeled is not None:
                probs[UNLABELED][m] = unlabeled
    return correct, probs, kinds


def _read_model(folder: Path, labels: dict, k: int | None, problems: list) -> dict:
    """One model's readable predictions, ``{set: (kind, correct, probs or None)}``, on sets with labels."""
    got: dict[str, tuple | None] = {}
    for s in SETS:
        f = folder / f"{s}.npz"
        lab = labels[s]
        if not f.is_file():
            problems.append(f"{f}: missing; expected the predictions of model {folder.name!r} on the {s} set")
        elif lab is not None:
            got[s] = _read_prediction(f, lab, k, problems)
    return {s: v for s, v in got.items() if v is not None}


def _read_unlabeled(path: Path, k: int | None, problems: list) -> np.ndarray | None:
    """A model's U×K probabilities on the unlabeled set, or None after recording a problem."""
    arrays = _read_npz(path, problems)
    if arrays is None:
        return None
    if "probs" not in arrays:
        problems.append(f"{path}: holds {sorted(arrays)}; expected 'probs' (U×K softmax probabilities)")
        return None
    raw = np.asarray(arrays["probs"])
    if raw.ndim != 2:
        problems.append(f"{path}: 'probs' must be a U×K array, got shape {raw.shape}")
        return None
    return _check_probs(path, raw, len(raw), k, problems)


def _read_vote_files(root: Path, labels: dict, problems: list) -> dict:
    """``{set: (k, n)}`` of the vote files, given for both sets or neither (one alone is a problem)."""
    votes = {}
    have = [s for s in SETS if (root / "votes" / f"{s}.npz").is_file()]
    if len(have) == 1:
        other = next(s for s in SETS if s not in have)
        problems.append(
            f"{root / 'votes' / f'{other}.npz'}: missing; votes must be given for both sets or neither"
        )
    elif have:
        for s in SETS:
            lab = labels[s]
            if lab is not None:
                v = _read_votes(root / "votes" / f"{s}.npz", len(lab), problems)
                if v is not None:
                    votes[s] = v
    return votes


def available_analyses(data: ReplicationData) -> dict[str, str | None]:
    """Which of the chapter's analyses the folder allows: ``None``, or why it is skipped.

    Parameters
    ----------
    data : ReplicationData
        A loaded folder (:func:`load_folder`).

    Returns
    -------
    dict
        One entry per name of :data:`ANALYSES`, in page order.

    Examples
    --------
    >>> y = np.array([0, 1, 1, 0])
    >>> c = np.ones((2, 4), bool)
    >>> d = ReplicationData(Path("."), {}, {"original": y, "new": y}, ("a", "b"), {"original": c, "new": c},
    ...                     {"original": {}, "new": {}, "unlabeled": {}}, {}, 2)
    >>> available_analyses(d)["linear_fits"]
    'a fit needs at least 3 models; the folder has 2'
    >>> available_analyses(d)["matching"]
    'no model has probabilities on both sets (matching pairs images by predicted probability)'
    """
    out: dict[str, str | None] = {}
    m = len(data.models)
    acc = data.correct["original"].mean(1)
    if m < 3:
        out["linear_fits"] = f"a fit needs at least 3 models; the folder has {m}"
    elif np.ptp(acc) == 0:
        out["linear_fits"] = "every model has the same original accuracy; a slope is undefined"
    else:
        out["linear_fits"] = None
    both = [x for x in data.models if x in data.probs["original"] and x in data.probs["new"]]
    out["matching"] = (
        None
        if both
        else "no model has probabilities on both sets (matching pairs images by predicted probability)"
    )
    out["selection"] = None if data.votes else "no votes were given (votes/original.npz and votes/new.npz)"
    if not both:
        out["mlm"] = "no model has probabilities on both sets (the MLM is built from softmax outputs)"
    else:
        best = max(both, key=lambda x: acc[data.models.index(x)])
        i = data.models.index(best)
        no_centroid = len(np.unique(data.labels["original"][data.correct["original"][i]])) < data.n_classes
        absent = [s for s in SETS if len(np.unique(data.labels[s])) < data.n_classes]
        if no_centroid:
            out["mlm"] = (
                f"the best model ({best}) has a class without a correct original example (no centroid)"
            )
        elif absent:
            out["mlm"] = f"a class has no image in the {absent[0]} set (its row of the MLM is undefined)"
        else:
            out["mlm"] = None
    unl = [x for x in data.models if x in data.probs[UNLABELED] and x in data.probs["original"]]
    out["label_free"] = (
        None
        if unl
        else "no unlabeled set with probabilities (predictions/<model>/unlabeled.npz, and probabilities on the "
        "original set to calibrate against)"
    )
    return out


def fingerprint(path: str | Path) -> str:
    """A hash of a folder's file names, sizes and modification times (to notice a changed folder).

    Parameters
    ----------
    path : str or pathlib.Path
        The folder.

    Returns
    -------
    str
        16 hex digits; ``"missing"`` when there is no such folder.

    Examples
    --------
    >>> fingerprint("/no/such/folder")
    'missing'
    """
    root = Path(path)
    if not root.is_dir():
        return "missing"
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        st = f.stat()
        h.update(f"{f.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]
