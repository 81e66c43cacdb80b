"""Decoding images for timm models in worker processes: one pass over a dataset, batches of tensors.

A model's preprocessing is timm's data configuration for it (input size, interpolation, crop, mean and
std); models whose configurations agree (:func:`config_key`) can share one decoded pass
(:mod:`shifteval.zoo.predict`). Images are decoded and transformed in ``torch.utils.data`` worker
processes (:func:`loader`), sized to the machine's cores (:func:`decode_workers`); on CUDA the batches
are pinned so that the copy to the GPU does not block. The transform is built inside each worker from the
configuration (a plain dict), so the dataset pickles cheaply and every worker imports timm through
:func:`shifteval.utils.compat.import_timm`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..utils.compat import import_timm

if TYPE_CHECKING:
    import torch

#: The keys of timm's data configuration that decide what a model is fed.
CONFIG_KEYS = ("input_size", "interpolation", "crop_pct", "crop_mode", "mean", "std")


def data_config(model: Any) -> dict:
    """The timm data configuration for ``model`` (``timm.data.resolve_data_config``), as plain values.

    Parameters
    ----------
    model : torch.nn.Module
        A timm model.

    Returns
    -------
    dict
        :data:`CONFIG_KEYS` to tuples, strings and floats (hashable, JSON-friendly), plus ``in_chans``.

    Examples
    --------
    >>> from shifteval.zoo import pretrained
    >>> cfg = data_config(pretrained.load_model("resnet10t", None, num_classes=3))
    >>> cfg["input_size"], cfg["interpolation"], cfg["in_chans"]
    ((3, 176, 176), 'bicubic', 3)
    >>> gray = data_config(pretrained.load_model("resnet10t", None, num_classes=3, in_chans=1))
    >>> gray["input_size"], len(gray["mean"]), gray["in_chans"]
    ((1, 176, 176), 1, 1)
    """
    timm = import_timm()
    resolved = timm.data.resolve_data_config({}, model=model)
    cfg = {key: _plain(resolved.get(key)) for key in CONFIG_KEYS}
    chans = int(getattr(model, "in_chans", None) or cfg["input_size"][0])
    if chans != cfg["input_size"][0]:  # e.g. a one-channel model on a three-channel pretrained configuration
        cfg["input_size"] = (chans, *cfg["input_size"][1:])
        cfg["mean"], cfg["std"] = _channels(cfg["mean"], chans), _channels(cfg["std"], chans)
    cfg["in_chans"] = chans
    return cfg


def _channels(values: tuple, chans: int) -> tuple:
    """Per-channel statistics for ``chans`` channels: their mean for one channel, else repeated or cut."""
    if chans == 1:
        return (float(np.mean(values)),)
    return tuple(values[i % len(values)] for i in range(chans))


def _plain(value):
    """Tuples for sequences, floats for numbers: configurations compare and hash by value."""
    if isinstance(value, (list, tuple)):
        return tuple(float(v) if isinstance(v, float) else v for v in value)
    return value


def config_key(cfg: dict) -> tuple:
    """What two models must share to be fed the same tensors: the configuration's values, in order.

    Parameters
    ----------
    cfg : dict
        :func:`data_config` of a model.

    Returns
    -------
    tuple
        The values of :data:`CONFIG_KEYS` and ``in_chans``; equal tuples, equal inputs.

    Examples
    --------
    >>> a = {"input_size": (3, 32, 32), "interpolation": "bilinear", "crop_pct": 0.875, "crop_mode": "center",
    ...      "mean": (0.5,) * 3, "std": (0.5,) * 3, "in_chans": 3}
    >>> config_key(a) == config_key(dict(a)), config_key(a) == config_key({**a, "crop_pct": 1.0})
    (True, False)
    """
    return tuple(cfg[key] for key in (*CONFIG_KEYS, "in_chans"))


class Decoded:
    """A dataset of transformed images: ``decoded[i]`` is image ``i`` as the model's input tensor.

    Parameters
    ----------
    images : ndarray (N, H, W[, C]) of uint8, a sequence of such arrays, or ``ImageFiles``
        Image files (:class:`shifteval.datasets.real.ImageFiles`) are opened by path in the worker;
        grayscale images are repeated to three channels when the model expects three.
    cfg : dict
        :func:`data_config` of the model(s) fed.

    Examples
    --------
    >>> cfg = {"input_size": (3, 8, 8), "interpolation": "bilinear", "crop_pct": 1.0, "crop_mode": "center",
    ...        "mean": (0.5,) * 3, "std": (0.5,) * 3, "in_chans": 3}
    >>> decoded = Decoded(np.zeros((2, 16, 16), np.uint8), cfg)  # grayscale
    >>> len(decoded), tuple(decoded[1].shape), float(decoded[1].min())
    (2, (3, 8, 8), -1.0)
    """

    def __init__(self, images: np.ndarray | Sequence[ArrayLike], cfg: dict):
        self.images = images
        self.cfg = dict(cfg)
        self._transform = None  # built on first use, in the process that decodes

    def __len__(self) -> int:
        return len(self.images)

    def __getstate__(self) -> dict:
        return {"images": self.images, "cfg": self.cfg, "_transform": None}

    def transform(self):
        """The timm evaluation transform for the configuration (PIL image → normalised tensor)."""
        if self._transform is None:
            timm = import_timm()
            fields = {k: v for k, v in self.cfg.items() if k in CONFIG_KEYS}
            self._transform = timm.data.create_transform(**fields, is_training=False)
        return self._transform

    def __getitem__(self, i: int):
        return self.transform()(self._image(i))

    def _image(self, i: int):
        """Image ``i`` as a PIL image in the mode the model reads (RGB, or L for one channel)."""
        from PIL import Image

        paths = getattr(self.images, "paths", None)
        if paths is not None:  # a file: decoded here, straight to PIL, without an array in between
            with Image.open(Path(paths[i])) as im:
                return im.convert("RGB" if self.cfg["in_chans"] == 3 else "L")
        arr = np.asarray(self.images[i], dtype=np.uint8)
        if arr.ndim == 3 and arr.shape[2] == 1:
            arr = arr[:, :, 0]
        return Image.fromarray(arr).convert("RGB" if self.cfg["in_chans"] == 3 else "L")


def decode_workers(requested: int | None, cuda: bool) -> int:
    """Decoding workers for this machine: one per core, less one for the process feeding a GPU.

    ``requested`` (or ``SHIFTEVAL_DECODE_WORKERS``) overrides the count. On the CPU the model shares the
    cores with the workers; workers that run ahead only fill the loader's bounded queue and wait. A
    daemonic process (a Dask worker under its nanny, by default) may not start processes, so it decodes
    in itself (0); set Dask's ``distributed.worker.daemon: false`` to decode in workers there too.

    Parameters
    ----------
    requested : int or None
        A count asked for (``--workers``); None for the machine's.
    cuda : bool
        Whether the models run on a GPU.

    Returns
    -------
    int
        0 (decode in this process) or more.

    Raises
    ------
    ValueError
        If the requested count is negative.

    Examples
    --------
    >>> decode_workers(None, cuda=False) >= 1, decode_workers(3, cuda=True)
    (True, 3)
    """
    import multiprocessing

    if requested is None and os.environ.get("SHIFTEVAL_DECODE_WORKERS"):
        try:
            requested = int(os.environ["SHIFTEVAL_DECODE_WORKERS"])
        except ValueError:
            raise ValueError(
                f"SHIFTEVAL_DECODE_WORKERS must be a whole number, got {os.environ['SHIFTEVAL_DECODE_WORKERS']!r}"
            ) from None
    if requested is not None and requested < 0:
        raise ValueError(f"workers must be 0 (decode in this process) or more, got {requested}")
    if multiprocessing.current_process().daemon:
        return 0
    if requested is not None:
        return requested
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores - 1) if cuda else max(1, cores)


def loader(
    images: np.ndarray | Sequence[ArrayLike], cfg: dict, batch_size: int, workers: int, pin: bool
) -> torch.utils.data.DataLoader:
    """Batches of decoded images in order, decoded by ``workers`` processes (0: in this process).

    Parameters
    ----------
    images : ndarray or sequence
        See :class:`Decoded`.
    cfg : dict
        :func:`data_config` of the model(s) fed.
    batch_size : int
        Images per batch.
    workers : int
        Worker processes; 0 decodes in the calling process.
    pin : bool
        Pin batches in page-locked memory (for non-blocking copies to a GPU).

    Returns
    -------
    torch.utils.data.DataLoader
        Yields float32 tensors (B, C, H, W), in the images' order.

    Raises
    ------
    ValueError
        If ``batch_size`` is below 1 or ``workers`` below 0.

    Examples
    --------
    >>> cfg = {"input_size": (3, 8, 8), "interpolation": "bilinear", "crop_pct": 1.0, "crop_mode": "center",
    ...        "mean": (0.5,) * 3, "std": (0.5,) * 3, "in_chans": 3}
    >>> imgs = np.random.default_rng(0).integers(0, 256, (5, 12, 12, 3), dtype=np.uint8)
    >>> [tuple(b.shape) for b in loader(imgs, cfg, batch_size=2, workers=0, pin=False)]
    [(2, 3, 8, 8), (2, 3, 8, 8), (1, 3, 8, 8)]
    """
    import torch

    if batch_size < 1:
        raise ValueError(f"batch size must be at least 1, got {batch_size}")
    if workers < 0:
        raise ValueError(f"workers must be 0 (decode in this process) or more, got {workers}")
    dataset: Any = Decoded(images, cfg)  # a map-style dataset: __len__ and __getitem__
    return torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=False, num_workers=workers, pin_memory=pin,
        prefetch_factor=2 if workers else None,
    )  # fmt: skip
