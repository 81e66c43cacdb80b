"""The labeled image splits the chapters draw from: the replication world or MNIST.

Used by the OOD-aware AutoEval chapter (:mod:`shifteval.autoeval`) and the MLM chapter
(:mod:`shifteval.mlm`): both train a classifier on ``train`` and evaluate it on held-out splits.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .world import World

#: :attr:`Data.dataset` of the replication world.
WORLD = "replication world"


@dataclass
class Data:
    """The labeled splits a chapter draws from and where they come from.

    ``splits`` maps a split name to ``(images, labels)`` (float32 in [0, 1]); ``world`` and
    ``train_index`` locate the training images in the replication world (``None`` for real data);
    ``dataset`` names the kind of data (:data:`WORLD` or ``"mnist"``), which decides what a table made for
    one kind of data (e.g. perturbation severities) may be applied to.
    """

    splits: dict
    label: str
    world: World | None = None
    train_index: np.ndarray | None = None
    dataset: str = WORLD


def load_data(
    world: dict | None = None, dataset: str | None = None, data_dir: str | Path | None = None
) -> Data:
    """Load the replication world or MNIST.

    Parameters
    ----------
    world : dict, optional
        :class:`~shifteval.datasets.world.WorldConfig` overrides (``dataset=None`` only).
    dataset : {None, "mnist"}
        ``None``: the replication world; ``"mnist"``: MNIST's official idx files (splits ``train``, ``test``).
    data_dir : path, optional
        The folder holding MNIST's four idx files.

    Returns
    -------
    Data
        Images as float32 in [0, 1].

    Raises
    ------
    ValueError
        For an unknown ``dataset``, or ``"mnist"`` without ``data_dir``.

    Examples
    --------
    >>> data = load_data({"n_train": 200, "n_v1": 60, "n_pool": 600, "per_class": 3})
    >>> data.splits["train"][0].shape, data.splits["v1"][0].dtype.name, len(data.train_index)
    ((200, 16, 16), 'float32', 200)
    """
    if dataset is None:
        from . import world as worlds

        w = worlds.build_world(world or {})
        splits = {
            s: (w.images[w.split_index(s)].astype(np.float32), w.labels[w.split_index(s)])
            for s in w.split_names
        }
        return Data(splits, f"replication world {w.config.key()}", w, w.split_index("train"))
    if dataset == "mnist":
        from . import real

        if data_dir is None:
            raise ValueError("dataset 'mnist' needs data_dir: the folder holding MNIST's four idx files")
        splits = {}
        for s in ("train", "test"):
            images, labels = real.load("mnist", data_dir, s)
            splits[s] = (np.asarray(images, dtype=np.float32) / 255.0, labels)
        return Data(splits, f"MNIST idx files in {data_dir}", dataset="mnist")
    raise ValueError(f"dataset must be None (the replication world) or 'mnist', got {dataset!r}")


def image_splits(
    world: dict | None = None, dataset: str | None = None, data_dir: str | Path | None = None
) -> tuple[dict, str]:
    """``(splits, label)`` of :func:`load_data`.

    Parameters
    ----------
    world, dataset, data_dir
        As in :func:`load_data`.

    Returns
    -------
    splits : dict of str -> (images, labels)
    label : str
        Where the data come from.

    Raises
    ------
    ValueError
        As :func:`load_data`.

    Examples
    --------
    >>> from shifteval.datasets.real import encode_idx
    >>> with tempfile.TemporaryDirectory() as d:  # three 8×8 "digits" in MNIST's idx layout
    ...     for part in ("train", "t10k"):
    ...         _ = (Path(d) / f"{part}-images-idx3-ubyte").write_bytes(encode_idx(np.full((3, 8, 8), 255)))
    ...         _ = (Path(d) / f"{part}-labels-idx1-ubyte").write_bytes(encode_idx(np.arange(3)))
    ...     splits, label = image_splits(dataset="mnist", data_dir=d)
    >>> sorted(splits), float(splits["test"][0].max()), splits["train"][1].tolist()
    (['test', 'train'], 1.0, [0, 1, 2])
    """
    data = load_data(world, dataset, data_dir)
    return data.splits, data.label
