"""Loaders for the real datasets of the papers, each in its official published format.

One entry point, :func:`load` ``(name, root, split=None) -> (images, labels)``. Array datasets return
``images`` as a uint8 array (N×H×W or N×H×W×C); folder datasets (CINIC-10, ImageNet, ImageNetV2)
return a lazy :class:`ImageFiles` sequence that decodes one image at a time. ``labels`` is always an
int64 array. Nothing is downloaded: a missing or malformed file raises :class:`DatasetError` naming
the file, the expected layout and where the dataset is published.
"""

from __future__ import annotations

import functools
import gzip
import io
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".JPEG", ".JPG", ".PNG")


class DatasetError(ValueError):
    """A dataset file is missing or not in the expected format."""


@dataclass(frozen=True)
class _Spec:
    layout: str
    published: str
    splits: tuple
    default: str | None


SPECS = {
    "cifar10": _Spec(
        "<root>/cifar-10-batches-py/{data_batch_1..5, test_batch} (the 'CIFAR-10 python version' pickles)",
        "Krizhevsky (2009), https://www.cs.toronto.edu/~kriz/cifar.html",
        ("train", "test"),
        "test",
    ),
    "cifar10.1": _Spec(
        "<root>/cifar10.1_{v6,v4}_data.npy and <root>/cifar10.1_{v6,v4}_labels.npy",
        "Recht et al. (2019), https://github.com/modestyachts/CIFAR-10.1",
        ("v6", "v4"),
        "v6",
    ),
    "cifar10.2": _Spec(
        "<root>/cifar102_{train,test}.npz with arrays 'images' (N×32×32×3 uint8) and 'labels'",
        "Lu et al. (2020), https://github.com/modestyachts/cifar-10.2",
        ("train", "test"),
        "test",
    ),
    "cinic10": _Spec(
        "<root>/{train,valid,test}/<class name>/*.png with the ten CIFAR-10 class names",
        "Darlow et al. (2018), https://github.com/BayesWatch/cinic-10",
        ("train", "valid", "test"),
        "test",
    ),
    "mnist": _Spec(
        "<root>/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (the original idx files)",
        "LeCun et al., the MNIST database (yann.lecun.com/exdb/mnist and its mirrors)",
        ("train", "test"),
        "test",
    ),
    "fashion-mnist": _Spec(
        "<root>/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (idx files named as MNIST's)",
        "Xiao et al. (2017), https://github.com/zalandoresearch/fashion-mnist",
        ("train", "test"),
        "test",
    ),
    "imagenet": _Spec(
        "<root>/val/<WordNet id, e.g. n01440764>/*.JPEG, 1,000 class folders (labels follow sorted WordNet ids)",
        "Russakovsky et al. (2015), https://image-net.org",
        ("val",),
        "val",
    ),
    "imagenetv2": _Spec(
        "<root>/<0..999>/*.jpeg (folder name = class index, e.g. imagenetv2-matched-frequency-format-val)",
        "Recht et al. (2019), https://github.com/modestyachts/ImageNetV2",
        ("matched-frequency", "threshold-0.7", "top-images", None),
        None,
    ),
}


def _fail(name: str, problem: str) -> DatasetError:
    spec = SPECS[name]
    return DatasetError(f"{name}: {problem}\nexpected layout: {spec.layout}\npublished by: {spec.published}")


class ImageFiles(Sequence):
    """A lazy sequence of image files: ``images[i]`` decodes file i to a uint8 array (H×W×C).

    Examples
    --------
    >>> from PIL import Image
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for i in range(3):
    ...         Image.new("L", (4, 2), color=10 * i).save(Path(tmp) / f"{i}.png")
    ...     files = ImageFiles(sorted(Path(tmp).glob("*.png")))
    ...     print(len(files), files[2].shape, int(files[2][0, 0, 0]), len(files[1:]))
    3 (2, 4, 3) 20 2
    """

    def __init__(self, paths: Sequence[str | Path]):
        self.paths = [Path(p) for p in paths]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ImageFiles(self.paths[i])
        from PIL import Image

        with Image.open(self.paths[i]) as im:
            return np.asarray(im.convert("RGB"), dtype=np.uint8)


# --- CIFAR-10 pickles ------------------------------------------------------------------------------


class _CifarUnpickler(pickle.Unpickler):
    """Allows only what the CIFAR-10 batches contain: a dict of bytes, lists and one numpy array.

    ``_codecs.encode`` is how Python 3 pickles bytes at protocol 2 (it only turns a str into bytes).
    """

    ALLOWED = {
        ("_codecs", "encode"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
    }

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}: not part of the CIFAR-10 format")


def _cifar_batch(path: Path):
    try:
        with open(path, "rb") as fh:
            batch = _CifarUnpickler(fh, encoding="bytes").load()
    except FileNotFoundError:
        raise _fail("cifar10", f"missing file {path}") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
        raise _fail("cifar10", f"{path} is not a CIFAR-10 batch: {exc}") from None
    if not isinstance(batch, dict) or b"data" not in batch or b"labels" not in batch:
        raise _fail("cifar10", f"{path} is not a CIFAR-10 batch (no b'data' / b'labels' entries)")
    data = np.asarray(batch[b"data"])
    labels = np.asarray(batch[b"labels"], dtype=np.int64)
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3072 or len(labels) != len(data):
        raise _fail(
            "cifar10",
            f"{path}: expected uint8 data of shape (N, 3072) and N labels, got {data.shape} {data.dtype}",
        )
    return data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1), labels


def _load_cifar10(root: Path, split: str):
    folder = root / "cifar-10-batches-py" if (root / "cifar-10-batches-py").is_dir() else root
    files = [folder / f"data_batch_{i}" for i in range(1, 6)] if split == "train" else [folder / "test_batch"]
    parts = [_cifar_batch(f) for f in files]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


# --- numpy-format datasets ------------------------------------------------------------------------


def _npy(name: str, path: Path):
    if not path.is_file():
        raise _fail(name, f"missing file {path}")
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise _fail(name, f"{path} is not a numeric .npy array: {exc}") from None


def _check_arrays(name, where, images, labels, classes):
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[-1] != 3:
        raise _fail(
            name, f"{where}: expected uint8 images of shape (N, H, W, 3), got {images.shape} {images.dtype}"
        )
    if len(images) != len(labels):
        raise _fail(name, f"{where}: {len(images)} images but {len(labels)} labels")
    labels = np.asarray(labels).astype(np.int64)
    if len(labels) and (labels.min() < 0 or labels.max() >= classes):
        raise _fail(name, f"{where}: labels must lie in [0, {classes})")
    return images, labels


def _load_cifar101(root: Path, split: str):
    images = _npy("cifar10.1", root / f"cifar10.1_{split}_data.npy")
    labels = _npy("cifar10.1", root / f"cifar10.1_{split}_labels.npy")
    return _check_arrays("cifar10.1", root / f"cifar10.1_{split}_*.npy", images, labels, 10)


def _load_cifar102(root: Path, split: str):
    path = root / f"cifar102_{split}.npz"
    if not path.is_file():
        raise _fail("cifar10.2", f"missing file {path}")
    try:
        with np.load(path, allow_pickle=False) as data:
            if not {"images", "labels"} <= set(data.files):
                raise _fail("cifar10.2", f"{path} lacks 'images' or 'labels' (has {data.files})")
            images, labels = data["images"], data["labels"]
    except (OSError, ValueError) as exc:
        if isinstance(exc, DatasetError):
            raise
        raise _fail("cifar10.2", f"{path} is not a readable .npz: {exc}") from None
    return _check_arrays("cifar10.2", path, images, labels, 10)


# --- idx (MNIST) ----------------------------------------------------------------------------------


def _read_idx(name: str, path: Path, expected_dims: int):
    candidates = [path, path.with_name(path.name + ".gz")]
    found = next((p for p in candidates if p.is_file()), None)
    if found is None:
        raise _fail(name, f"missing file {path} (or {path.name}.gz)")
    raw = found.read_bytes()
    if found.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise _fail(name, f"{found} is not a valid gzip file: {exc}") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08 or raw[3] != expected_dims:
        raise _fail(name, f"{found}: not an idx file of {expected_dims}-D unsigned bytes (bad magic number)")
    header = 4 + 4 * expected_dims
    if len(raw) < header:
        raise _fail(name, f"{found}: truncated header")
    dims = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(expected_dims))
    body = np.frombuffer(raw, dtype=np.uint8, offset=header)
    if body.size != int(np.prod(dims)):
        raise _fail(name, f"{found}: header says {dims} but the file holds {body.size} values")
    return body.reshape(dims)


def _load_idx_pair(name: str, root: Path, split: str):
    """MNIST's four-file idx layout, shared by Fashion-MNIST."""
    prefix = "train" if split == "train" else "t10k"
    images = _read_idx(name, root / f"{prefix}-images-idx3-ubyte", 3)
    labels = _read_idx(name, root / f"{prefix}-labels-idx1-ubyte", 1).astype(np.int64)
    if len(images) != len(labels):
        raise _fail(name, f"{prefix}: {len(images)} images but {len(labels)} labels")
    return images.copy(), labels


# --- class folders ---------------------------------------------------------------------------------


def _image_paths(folder: Path):
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in IMAGE_SUFFIXES)


def _load_folders(name: str, folder: Path, classes: list, label_of):
    if not folder.is_dir():
        raise _fail(name, f"missing folder {folder}")
    paths, labels = [], []
    for cls in classes:
        sub = folder / cls
        if not sub.is_dir():
            raise _fail(name, f"missing class folder {sub}")
        files = _image_paths(sub)
        paths += files
        labels += [label_of(cls)] * len(files)
    if not paths:
        raise _fail(name, f"no images under {folder}")
    return ImageFiles(paths), np.asarray(labels, dtype=np.int64)


def _load_cinic10(root: Path, split: str):
    return _load_folders("cinic10", root / split, list(CIFAR10_CLASSES), CIFAR10_CLASSES.index)


def _load_imagenet(root: Path, split: str):
    folder = root / split if (root / split).is_dir() else root
    if not folder.is_dir():
        raise _fail("imagenet", f"missing folder {folder}")
    wnids = sorted(p.name for p in folder.iterdir() if p.is_dir())
    if not wnids or not all(w.startswith("n") and w[1:].isdigit() for w in wnids):
        raise _fail(
            "imagenet", f"{folder} should hold WordNet-id class folders (n01440764, ...); found {wnids[:5]}"
        )
    index = {w: i for i, w in enumerate(wnids)}
    return _load_folders("imagenet", folder, wnids, index.__getitem__)


def _load_imagenetv2(root: Path, split):
    folder = root / f"imagenetv2-{split}-format-val" if split else root
    if not folder.is_dir():
        raise _fail("imagenetv2", f"missing folder {folder}")
    names = [p.name for p in folder.iterdir() if p.is_dir()]
    if not names or not all(n.isdigit() for n in names):
        raise _fail(
            "imagenetv2", f"{folder} should hold class folders named 0..999; found {sorted(names)[:5]}"
        )
    # Folder "10" is class 10: sort numerically and label with int(name), never by string order.
    ordered = sorted(names, key=int)
    if int(ordered[-1]) > 999:
        raise _fail("imagenetv2", f"{folder}: class folder {ordered[-1]} is outside 0..999")
    return _load_folders("imagenetv2", folder, ordered, int)


_LOADERS: dict[str, Callable[[Path, Any], tuple[NDArray[np.uint8] | ImageFiles, NDArray[np.int64]]]] = {
    "cifar10": _load_cifar10,
    "cifar10.1": _load_cifar101,
    "cifar10.2": _load_cifar102,
    "cinic10": _load_cinic10,
    "mnist": functools.partial(_load_idx_pair, "mnist"),
    "fashion-mnist": functools.partial(_load_idx_pair, "fashion-mnist"),
    "imagenet": _load_imagenet,
    "imagenetv2": _load_imagenetv2,
}


def load(
    name: str, root: str | Path, split: str | None = None
) -> tuple[NDArray[np.uint8] | ImageFiles, NDArray[np.int64]]:
    """Load a real dataset from ``root`` in its official published format.

    Parameters
    ----------
    name : {"cifar10", "cifar10.1", "cifar10.2", "cinic10", "mnist", "fashion-mnist", "imagenet", "imagenetv2"}
        The dataset.
    root : path
        The folder holding the dataset as published (see ``SPECS[name].layout``).
    split : str, optional
        ``train``/``test`` (CIFAR-10, CIFAR-10.2, MNIST, Fashion-MNIST), ``train``/``valid``/``test`` (CINIC-10),
        ``v6``/``v4`` (CIFAR-10.1), ``val`` (ImageNet), ``matched-frequency``/``threshold-0.7``/
        ``top-images`` (ImageNetV2, or ``None`` when ``root`` is the class-folder directory itself).
        Defaults to the evaluation split.

    Returns
    -------
    images : ndarray of uint8 or ImageFiles
    labels : ndarray of int64

    Raises
    ------
    ValueError
        If ``name`` or ``split`` is unknown.
    DatasetError
        If a file is missing or malformed (the message gives the expected layout and the publisher).

    Examples
    --------
    Tiny stand-ins in three official formats, written to a temporary folder:

    >>> rng = np.random.default_rng(0)
    >>> imgs = rng.integers(0, 256, (3, 32, 32, 3), dtype=np.uint8)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = Path(tmp)
    ...     np.save(root / "cifar10.1_v6_data.npy", imgs)
    ...     np.save(root / "cifar10.1_v6_labels.npy", np.array([2, 0, 9]))
    ...     x, y = load("cifar10.1", root)
    ...     _ = (root / "t10k-images-idx3-ubyte").write_bytes(encode_idx(imgs[..., 0]))
    ...     _ = (root / "t10k-labels-idx1-ubyte").write_bytes(encode_idx([7, 1, 4]))
    ...     xm, ym = load("mnist", root)
    ...     (root / "cifar-10-batches-py").mkdir()
    ...     _ = (root / "cifar-10-batches-py" / "test_batch").write_bytes(pickle_cifar_batch(imgs, [5, 6, 7]))
    ...     xc, yc = load("cifar10", root)
    >>> x.shape, y.tolist(), bool((x == imgs).all())
    ((3, 32, 32, 3), [2, 0, 9], True)
    >>> xm.shape, ym.tolist(), bool((xc == imgs).all()), yc.dtype
    ((3, 32, 32), [7, 1, 4], True, dtype('int64'))
    >>> load("cifar10.1", "/nonexistent", "v5")
    Traceback (most recent call last):
    ...
    ValueError: cifar10.1: unknown split 'v5'; valid: v6, v4
    """
    if name not in _LOADERS:
        raise ValueError(f"unknown dataset {name!r}; available: {', '.join(_LOADERS)}")
    spec = SPECS[name]
    split = spec.default if split is None else split
    if split not in spec.splits:
        raise ValueError(f"{name}: unknown split {split!r}; valid: {', '.join(str(s) for s in spec.splits)}")
    return _LOADERS[name](Path(root), split)


def encode_idx(array: ArrayLike) -> bytes:
    """The idx encoding of a uint8 array (used to write MNIST-format files, e.g. in tests).

    Parameters
    ----------
    array : array-like
        Values, cast to uint8.

    Returns
    -------
    bytes
        Magic number (``0, 0, 0x08, ndim``), one big-endian uint32 per dimension, then the data.

    Examples
    --------
    >>> encode_idx([[1, 2, 3]]).hex()
    '000008020000000100000003010203'
    """
    array = np.asarray(array, dtype=np.uint8)
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    return header + array.tobytes()


def pickle_cifar_batch(images: ArrayLike, labels: ArrayLike, batch_label: str = "batch") -> bytes:
    """A CIFAR-10 python batch (protocol 2, as published) for N×32×32×3 uint8 images.

    Parameters
    ----------
    images : array-like, shape (N, 32, 32, 3)
        Images, cast to uint8 (stored channel-first, flattened to N×3072).
    labels : array-like, shape (N,)
        Class indices.
    batch_label : str
        The batch's ``b"batch_label"`` entry.

    Returns
    -------
    bytes
        The pickle, readable by :func:`load` (``"cifar10"``).

    Examples
    --------
    >>> raw = pickle_cifar_batch(np.zeros((2, 32, 32, 3)), [3, 4])
    >>> batch = _CifarUnpickler(io.BytesIO(raw), encoding="bytes").load()  # the restricted reader load uses
    >>> batch[b"data"].shape, batch[b"labels"], raw[1]  # protocol 2
    ((2, 3072), [3, 4], 2)
    """
    images = np.asarray(images, dtype=np.uint8)
    data = images.transpose(0, 3, 1, 2).reshape(len(images), -1)
    buf = io.BytesIO()
    pickle.dump(
        {
            b"batch_label": batch_label.encode(),
            b"labels": [int(v) for v in np.asarray(labels)],
            b"data": data,
            b"filenames": [f"img{i}.png".encode() for i in range(len(images))],
        },
        buf,
        protocol=2,
    )
    return buf.getvalue()
