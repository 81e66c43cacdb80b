"""Per-image predictions released with the papers, read in their official layouts.

Two releases (see ``shifteval data list``):

``imagenetv2-predictions``
    modestyachts/ImageNetV2: ``root/data/predictions/<dataset>/<model>.npy`` (int64, N×5 top-5 class
    ids, column 0 the top-1), the ground truth in ``root/data/datasets/<dataset>.json``
    (``image_filenames``: ``[id, wnid]`` in row order) and ``root/data/metadata/class_info.json``
    (cid → wnid). Datasets: ``imagenet-validation-original`` (50,000 images) and the three new test
    sets of Recht et al. (2019, §3): ``imagenetv2-b-33`` = MatchedFrequency, ``imagenetv2-a-44`` =
    Threshold0.7, ``imagenetv2-c-12`` = TopImages (10,000 each).
``cifar10.1-predictions``
    modestyachts/CIFAR-10.1: ``root/model_predictions/<v>_predictions/<model>_predictions.json``
    (a JSON list of predicted class ids in dataset order) and ``root/datasets/cifar10.1_<v>_labels.npy``;
    ``original`` (the CIFAR-10 test set) is scored when its labels are supplied.

The ImageNetV2 release has warts that the loader repairs and reports (as :class:`ReleaseWarning`,
in :attr:`Correctness.warnings` and in ``DataFrame.attrs["warnings"]``): two Fisher-vector models
are stored as ``fv_64k_model.npy`` / ``fv_16k_model.npy`` in some folders, and the ``fv_16k`` files
of the three new test sets hold the top-5 columns in reverse order (column 4 is the top-1
prediction: read as stored it scores ~2.5% top-1 instead of the printed 19-27%).
"""

from __future__ import annotations

import io
import json
import warnings
import zipfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

IMAGENETV2_DATASETS = (
    "imagenet-validation-original",
    "imagenetv2-b-33",
    "imagenetv2-a-44",
    "imagenetv2-c-12",
)
#: Recht et al. (2019) names of the new test sets, by release folder.
IMAGENETV2_NAMES = {
    "imagenetv2-b-33": "matchedfrequency",
    "imagenetv2-a-44": "threshold0.7",
    "imagenetv2-c-12": "topimages",
}
#: File names of the release that differ from the model's name in the paper's tables.
RELEASE_ALIASES = {"fv_64k_model": "fv_64k", "fv_16k_model": "fv_16k"}
RELEASES = ("imagenetv2-predictions", "cifar10.1-predictions")
_SHIPPED = "imagenetv2_correctness.npz"


class ReleaseWarning(UserWarning):
    """A released file deviates from its documented format and was repaired (or left as is)."""


class ReleaseFormatError(ValueError):
    """A released file is missing or not in the expected layout."""


@dataclass(frozen=True)
class Correctness:
    """Per-image correctness of a set of models on a set of test sets.

    Attributes
    ----------
    models : tuple of str
        Model names (the paper's names), one row of every matrix each.
    datasets : tuple of str
        Test-set names.
    top1, top5 : dict of str to ndarray of bool, shape (n_models, n_images)
        Whether each model's top-1 (top-5) prediction on each image is correct; ``top5[d]`` is None
        when the release has only top-1 predictions.
    labels : dict of str to ndarray of int64, shape (n_images,)
        True class id of every image.
    warnings : tuple of str
        Deviations of the release found (and repaired) while reading it.
    """

    models: tuple[str, ...]
    datasets: tuple[str, ...]
    top1: dict[str, np.ndarray]
    top5: dict[str, np.ndarray | None]
    labels: dict[str, np.ndarray]
    warnings: tuple[str, ...] = field(default=())

    def __post_init__(self):  # noqa: D105
        for d in self.datasets:
            n = len(self.labels[d])
            for kind, arr in (("top1", self.top1[d]), ("top5", self.top5[d])):
                if arr is not None and (arr.dtype != bool or arr.shape != (len(self.models), n)):
                    raise ValueError(
                        f"{kind}[{d!r}] must be a bool array of shape ({len(self.models)}, {n}), "
                        f"got {arr.dtype} {arr.shape}"
                    )

    def accuracy(self, dataset: str, top: int = 1) -> np.ndarray:
        """Accuracy (fraction) of every model on ``dataset``; NaN when top-5 is not available."""
        if dataset not in self.datasets:
            raise ValueError(f"unknown dataset {dataset!r}; available: {', '.join(self.datasets)}")
        if top not in (1, 5):
            raise ValueError(f"top must be 1 or 5, got {top!r}")
        arr = (self.top1 if top == 1 else self.top5)[dataset]
        return np.full(len(self.models), np.nan) if arr is None else arr.mean(axis=1)

    def accuracy_table(self) -> pd.DataFrame:
        """Long table ``model, dataset, top1, top5, n`` (accuracies in percent)."""
        rows = []
        for d in self.datasets:
            t1, t5 = 100 * self.accuracy(d, 1), 100 * self.accuracy(d, 5)
            rows += [
                {"model": m, "dataset": d, "top1": t1[i], "top5": t5[i], "n": len(self.labels[d])}
                for i, m in enumerate(self.models)
            ]
        table = pd.DataFrame(rows, columns=["model", "dataset", "top1", "top5", "n"])
        table.attrs["warnings"] = list(self.warnings)
        return table


def _warn(notes: list[str], message: str) -> None:
    notes.append(message)
    warnings.warn(message, ReleaseWarning, stacklevel=3)


def _folder(path: Path, what: str) -> Path:
    if not path.is_dir():
        raise ReleaseFormatError(f"missing folder {path}: expected {what}")
    return path


def _read_json(path: Path, what: str):
    if not path.is_file():
        raise ReleaseFormatError(f"missing file {path}: expected {what}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReleaseFormatError(f"{path} is not valid JSON ({exc}); expected {what}") from exc


def _imagenet_truth(root: Path, dataset: str, wnid_to_cid: dict) -> np.ndarray:
    path = root / "data" / "datasets" / f"{dataset}.json"
    spec = _read_json(path, "the dataset definition with 'image_filenames': [[id, wnid], ...]")
    try:
        wnids = [pair[1] for pair in spec["image_filenames"]]
    except (KeyError, TypeError, IndexError) as exc:
        raise ReleaseFormatError(f"{path}: expected 'image_filenames' as a list of [id, wnid] pairs") from exc
    unknown = sorted(set(wnids) - set(wnid_to_cid))
    if unknown:
        raise ReleaseFormatError(f"{path}: unknown wnid(s) {unknown[:5]} not in class_info.json")
    return np.array([wnid_to_cid[w] for w in wnids], dtype=np.int64)


def _imagenet_predictions(
    path: Path, labels: np.ndarray, model: str, dataset: str, notes: list, repair: bool
):
    try:
        pred = np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise ReleaseFormatError(f"{path}: not a plain .npy array ({exc}); expected int64 N×5") from exc
    n = len(labels)
    if not np.issubdtype(pred.dtype, np.integer) or pred.shape != (n, 5):
        raise ReleaseFormatError(
            f"{path}: expected an integer array of shape ({n}, 5) (top-5 class ids, one row per image "
            f"of {dataset}), got {pred.dtype} {pred.shape}"
        )
    if pred.min() < 0 or pred.max() > 999:
        raise ReleaseFormatError(f"{path}: class ids must lie in 0..999, found {pred.min()}..{pred.max()}")
    hits = (pred == labels[:, None]).mean(axis=0)  # share of images each column gets right
    k0, kmax = len(labels) * hits[0], len(labels) * hits.max()
    if kmax - k0 > 3 * np.sqrt(kmax + k0):  # a later column beats the top-1 beyond chance (sign test, z > 3)
        pct = ", ".join(f"{100 * h:.1f}%" for h in hits)
        what = f"{model} on {dataset}: the top-5 columns are correct for {pct} of images"
        reversed_order = hits[-1] > hits[0] and np.all(np.diff(hits[::-1]) <= 0.01)
        if not reversed_order:
            _warn(notes, what + ": the column order is not a ranking; left as stored, top-1 may be wrong")
        elif repair:
            _warn(notes, what + ": stored in reverse order; reversed them")
            pred = pred[:, ::-1]
        else:
            _warn(notes, what + ": stored in reverse order; left as stored (repair=False)")
    return pred[:, 0] == labels, (pred == labels[:, None]).any(axis=1)


def _load_imagenetv2(root: Path, datasets, repair: bool) -> Correctness:
    notes: list[str] = []
    info = _read_json(root / "data" / "metadata" / "class_info.json", "a list of {cid, wnid, ...}")
    wnid_to_cid = {c["wnid"]: int(c["cid"]) for c in info}
    pred_root = _folder(root / "data" / "predictions", "data/predictions/<dataset>/<model>.npy")
    datasets = tuple(datasets or [d for d in IMAGENETV2_DATASETS if (pred_root / d).is_dir()])
    if not datasets:
        raise ReleaseFormatError(f"{pred_root} holds none of the datasets {IMAGENETV2_DATASETS}")
    files: dict[str, dict[str, Path]] = {}
    for d in datasets:
        folder = _folder(pred_root / d, f"one <model>.npy per model for dataset {d}")
        files[d] = {}
        for path in sorted(folder.glob("*.npy")):
            name = RELEASE_ALIASES.get(path.stem, path.stem)
            if name != path.stem:
                _warn(notes, f"{d}/{path.name} is model {name} (file named differently than elsewhere)")
            files[d][name] = path
    models = sorted(set.intersection(*(set(f) for f in files.values())))
    for d in datasets:
        dropped = sorted(set(files[d]) - set(models))
        if dropped:
            _warn(notes, f"{d}: models {dropped} lack predictions on some dataset and are left out")
    if not models:
        raise ReleaseFormatError(
            f"no model has predictions (<model>.npy) for all of {datasets} in {pred_root}"
        )
    top5: dict[str, np.ndarray | None]
    top1, top5, labels = {}, {}, {}
    for d in datasets:
        labels[d] = _imagenet_truth(root, d, wnid_to_cid)
        rows = [_imagenet_predictions(files[d][m], labels[d], m, d, notes, repair) for m in models]
        top1[d] = np.stack([r[0] for r in rows])
        top5[d] = np.stack([r[1] for r in rows])
    return Correctness(tuple(models), datasets, top1, top5, labels, tuple(notes))


def _load_cifar101(root: Path, datasets, original_labels) -> Correctness:
    versions = list(datasets or ["v4", "v6"])
    labels = {}
    for v in versions:
        if v == "original":
            if original_labels is None:
                raise ValueError("dataset 'original' needs the CIFAR-10 test labels (original_labels=...)")
            labels[v] = np.asarray(original_labels)
        else:
            path = root / "datasets" / f"cifar10.1_{v}_labels.npy"
            if not path.is_file():
                raise ReleaseFormatError(f"missing file {path}: expected the CIFAR-10.1 {v} labels")
            labels[v] = np.load(path, allow_pickle=False)
        if labels[v].ndim != 1 or not np.issubdtype(labels[v].dtype, np.integer):
            raise ReleaseFormatError(
                f"labels of {v} must be a 1-D integer array, got {labels[v].dtype} {labels[v].shape}"
            )
        labels[v] = labels[v].astype(np.int64)
    files = {}
    for v in versions:
        folder = _folder(root / "model_predictions" / f"{v}_predictions", "<model>_predictions.json files")
        files[v] = {p.name.removesuffix("_predictions.json"): p for p in folder.glob("*_predictions.json")}
    models = sorted(set.intersection(*(set(f) for f in files.values())))
    if not models:
        raise ReleaseFormatError(
            f"no model has predictions for all of {versions} under {root / 'model_predictions'}"
        )
    notes: list[str] = []
    for v in versions:
        dropped = sorted(set(files[v]) - set(models))
        if dropped:
            _warn(notes, f"{v}: models {dropped} lack predictions on some dataset and are left out")
    top1 = {}
    for v in versions:
        rows = []
        for m in models:
            pred = np.asarray(_read_json(files[v][m], "a JSON list of predicted class ids"))
            if pred.shape != labels[v].shape or not np.issubdtype(pred.dtype, np.integer):
                raise ReleaseFormatError(
                    f"{files[v][m]}: expected a list of {len(labels[v])} integer class ids, "
                    f"got {pred.dtype} {pred.shape}"
                )
            rows.append(pred == labels[v])
        top1[v] = np.stack(rows)
    return Correctness(tuple(models), tuple(versions), top1, dict.fromkeys(versions), labels, tuple(notes))


def load(
    name: str, root: str | Path, *, datasets: list[str] | None = None, repair: bool = True,
    original_labels: ArrayLike | None = None,
) -> Correctness:  # fmt: skip
    """Per-image correctness of every model of a released prediction set.

    Parameters
    ----------
    name : {"imagenetv2-predictions", "cifar10.1-predictions"}
        The release (``shifteval data get NAME --root DIR`` puts it in ``DIR/NAME``).
    root : path-like
        Folder of the release (the repository's layout; see the module docstring).
    datasets : list of str, optional
        Subset of the release's datasets (default: all present; for CIFAR-10.1 ``["v4", "v6"]``,
        and ``"original"`` when ``original_labels`` is given).
    repair : bool
        Reverse top-5 columns stored in reverse order (detected as column 4 scoring higher than
        column 0). Either way the finding is reported as a :class:`ReleaseWarning`.
    original_labels : array_like of int, optional
        CIFAR-10 test labels (10,000), to score the ``original`` predictions of ``cifar10.1-predictions``.

    Returns
    -------
    Correctness

    Raises
    ------
    ReleaseFormatError
        If a folder or file of the release is missing or not in the documented layout.
    ValueError
        If ``name`` is not one of :data:`RELEASES`, or ``"original"`` is asked for without labels.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = Path(tmp)
    ...     (root / "datasets").mkdir()
    ...     np.save(root / "datasets" / "cifar10.1_v4_labels.npy", np.array([0, 1, 2]))
    ...     (root / "model_predictions" / "v4_predictions").mkdir(parents=True)
    ...     _ = (root / "model_predictions" / "v4_predictions" / "net_predictions.json").write_text("[0, 1, 1]")
    ...     corr = load("cifar10.1-predictions", root, datasets=["v4"])
    >>> corr.models, corr.top1["v4"].tolist(), round(float(corr.accuracy("v4")[0]), 3)
    (('net',), [[True, True, False]], 0.667)
    """
    root = Path(root)
    _folder(root, f"the {name} release")
    if name == "imagenetv2-predictions":
        return _load_imagenetv2(root, datasets, repair)
    if name == "cifar10.1-predictions":
        if datasets is None and original_labels is not None:
            datasets = ["original", "v4", "v6"]
        return _load_cifar101(root, datasets, original_labels)
    raise ValueError(f"unknown release {name!r}; expected one of {RELEASES}")


def accuracy_table(name: str, root: str | Path, **kwargs: Any) -> pd.DataFrame:
    """Accuracies of every model on every dataset of a release (see :func:`load` for the arguments).

    Parameters
    ----------
    name : str
    root : path-like
    **kwargs
        As for :func:`load` (the keyword arguments: ``datasets``, ``repair``, ``original_labels``).

    Returns
    -------
    pandas.DataFrame
        Columns ``model``, ``dataset``, ``top1``, ``top5`` (percent; NaN where the release has no
        top-5 predictions) and ``n`` (images); ``attrs["warnings"]`` lists the release's warts.

    Raises
    ------
    ReleaseFormatError, ValueError
        As :func:`load`.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = Path(tmp)
    ...     (root / "datasets").mkdir()
    ...     np.save(root / "datasets" / "cifar10.1_v6_labels.npy", np.array([3, 3, 5, 5]))
    ...     (root / "model_predictions" / "v6_predictions").mkdir(parents=True)
    ...     _ = (root / "model_predictions" / "v6_predictions" / "m_predictions.json").write_text("[3, 3, 5, 0]")
    ...     table = accuracy_table("cifar10.1-predictions", root, datasets=["v6"])
    >>> table[["model", "dataset", "top1", "n"]].values.tolist(), bool(table["top5"].isna().all())
    ([['m', 'v6', 75.0, 4]], True)
    """
    return load(name, root, **kwargs).accuracy_table()


# ---------------------------------------------------------------------------------------------
# The bit-packed table shipped in the package (scripts/derive_imagenetv2_correctness.py)


def _npy_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
    return buf.getvalue()


def correctness_arrays(corr: Correctness) -> dict[str, np.ndarray]:
    """Return the arrays of the packed format: names, and per dataset packed top-1/top-5 bits and labels.

    Parameters
    ----------
    corr : Correctness
        The correctness to pack.

    Returns
    -------
    dict of str to ndarray
        ``models``, ``datasets``, per dataset ``d`` ``labels.d`` (int16) and ``top1.d`` / ``top5.d`` (packed bits).

    Examples
    --------
    >>> corr = Correctness(("a", "b"), ("v4",), {"v4": np.eye(2, 3, dtype=bool)}, {"v4": None}, {"v4": np.arange(3)})
    >>> arrays = correctness_arrays(corr)
    >>> sorted(arrays), arrays["top1.v4"].shape, arrays["labels.v4"].dtype.name
    (['datasets', 'labels.v4', 'models', 'top1.v4'], (2, 1), 'int16')
    """
    arrays = {"models": np.array(corr.models), "datasets": np.array(corr.datasets)}
    for d in corr.datasets:
        arrays[f"labels.{d}"] = corr.labels[d].astype(np.int16)
        for kind, arr in (("top1", corr.top1[d]), ("top5", corr.top5[d])):
            if arr is not None:
                arrays[f"{kind}.{d}"] = np.packbits(arr, axis=1)
    return arrays


def save_correctness(corr: Correctness, path: str | Path) -> Path:
    """Write ``corr`` as a bit-packed ``.npz`` with deterministic bytes (stored zip, fixed timestamps).

    The same correctness gives the same file on every machine: members are stored uncompressed
    (deflate output depends on the zlib build) in a fixed order with the date 1980-01-01.

    Parameters
    ----------
    corr : Correctness
        The correctness to write.
    path : path-like
        Destination ``.npz`` file (written atomically; parent folders are created).

    Returns
    -------
    Path

    Examples
    --------
    >>> corr = Correctness(("a",), ("v4",), {"v4": np.array([[True, False, True]])}, {"v4": None}, {"v4": np.arange(3)})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     first = save_correctness(corr, Path(tmp) / "one.npz").read_bytes()
    ...     second = save_correctness(corr, Path(tmp) / "two.npz").read_bytes()
    ...     back = read_correctness(Path(tmp) / "one.npz")
    >>> first == second, back.top1["v4"].tolist(), back.top5["v4"] is None
    (True, [[True, False, True]], True)
    """
    from ..utils.io import atomic_write_bytes

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for key, arr in correctness_arrays(corr).items():
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.create_system = 3
            zf.writestr(info, _npy_bytes(arr))
    return atomic_write_bytes(path, buf.getvalue())


def read_correctness(source: str | Path | IO[bytes]) -> Correctness:
    """Read a file written by :func:`save_correctness` (path or binary file object).

    Parameters
    ----------
    source : path-like or binary file object
        The ``.npz`` file.

    Returns
    -------
    Correctness
        Without the ``warnings`` of the original.

    Examples
    --------
    >>> with resources.files("shifteval.data").joinpath("released", "imagenetv2_correctness.npz").open("rb") as fh:
    ...     corr = read_correctness(io.BytesIO(fh.read()))
    >>> len(corr.models), corr.datasets[0], corr.top5["imagenetv2-c-12"].shape
    (67, 'imagenet-validation-original', (67, 10000))
    """
    with np.load(source, allow_pickle=False) as z:
        models = tuple(str(m) for m in z["models"])
        datasets = tuple(str(d) for d in z["datasets"])
        labels = {d: z[f"labels.{d}"].astype(np.int64) for d in datasets}

        def unpack(key, n):
            return np.unpackbits(z[key], axis=1, count=n).astype(bool) if key in z.files else None

        top1 = {d: unpack(f"top1.{d}", len(labels[d])) for d in datasets}
        top5 = {d: unpack(f"top5.{d}", len(labels[d])) for d in datasets}
    return Correctness(models, datasets, top1, top5, labels)


def imagenetv2_correctness() -> Correctness:
    """Per-image top-1/top-5 correctness of the 67 models of Recht et al. (2019), shipped in the package.

    Derived from the official ImageNetV2 release (MIT) by ``scripts/derive_imagenetv2_correctness.py``
    with the release's warts repaired (see the module docstring and the JSON sidecar
    ``imagenetv2_correctness.json``). Needs no download.

    Returns
    -------
    Correctness

    Examples
    --------
    >>> from shifteval.datasets import released
    >>> corr = released.imagenetv2_correctness()
    >>> len(corr.models), corr.top1["imagenetv2-b-33"].shape
    (67, (67, 10000))
    >>> print(round(100 * corr.accuracy("imagenetv2-b-33")[corr.models.index("resnet152")], 1))
    67.0
    """
    files = resources.files("shifteval.data").joinpath("released")
    with files.joinpath(_SHIPPED).open("rb") as fh:
        corr = read_correctness(io.BytesIO(fh.read()))
    meta = json.loads(files.joinpath(_SHIPPED.replace(".npz", ".json")).read_text(encoding="utf-8"))
    return Correctness(corr.models, corr.datasets, corr.top1, corr.top5, corr.labels, tuple(meta["warnings"]))
