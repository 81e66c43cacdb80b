"""Pretrained timm models, loaded offline, and batched prediction in the project's format.

Weights come from a local file (``.safetensors``, or ``.pth``/``.bin`` read with
``torch.load(weights_only=True)``) or from the Hugging Face cache that timm uses; the cache is read
with ``HF_HUB_OFFLINE=1`` unless the caller explicitly allows downloads. Preprocessing is timm's own
data configuration for the model; inference runs on CUDA when available, otherwise on the CPU.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..utils.compat import import_timm
from . import decode, inference


def load_model(
    name: str,
    weights: str | os.PathLike | None = None,
    num_classes: int | None = None,
    allow_download: bool = False,
    in_chans: int = 3,
) -> Any:
    """A timm model by name with pretrained weights, in eval mode.

    Parameters
    ----------
    name : str
        timm model name, e.g. ``"resnet50"``.
    weights : path, "cache" or None
        A local weights file, ``"cache"`` for timm's pretrained weights from the local Hugging Face
        cache (downloaded only when ``allow_download``), or ``None`` for random initialisation.
    num_classes : int, optional
        Output classes (defaults to the architecture's own, 1,000 for ImageNet models).
    allow_download : bool
        With ``weights="cache"``, let timm download missing weights (otherwise ``HF_HUB_OFFLINE=1``
        is set for the process).
    in_chans : int
        Input channels.

    Returns
    -------
    torch.nn.Module
        The timm model, in eval mode, on the CPU.

    Raises
    ------
    FileNotFoundError
        If ``weights="cache"`` and the weights are not cached (and downloads are not allowed), or a
        weights file does not exist.
    RuntimeError
        If a weights file does not fit the architecture (from ``load_state_dict``).

    Examples
    --------
    Random initialisation, then a round trip through a local safetensors file (never the network):

    >>> from safetensors.torch import save_file
    >>> model = load_model("resnet10t", None, num_classes=3)
    >>> model.num_classes, model.training
    (3, False)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "w.safetensors")
    ...     save_file({k: v.contiguous() for k, v in model.state_dict().items()}, path)
    ...     again = load_model("resnet10t", path, num_classes=3)
    >>> all(bool((a == b).all()) for a, b in zip(model.state_dict().values(), again.state_dict().values()))
    True
    """
    timm = import_timm()
    kwargs = {"in_chans": in_chans}
    if num_classes is not None:
        kwargs["num_classes"] = num_classes
    if weights == "cache":
        try:
            with contextlib.nullcontext() if allow_download else _offline():
                model = timm.create_model(name, pretrained=True, **kwargs)
        except Exception as exc:  # the hub client raises several types when offline
            raise FileNotFoundError(
                f"pretrained weights of {name!r} are not in the local cache and downloads are not allowed; "
                f"pass a weights file or allow the download ({type(exc).__name__}: {exc})"
            ) from None
    else:
        model = timm.create_model(name, pretrained=False, **kwargs)
        if weights is not None:
            model.load_state_dict(load_state_dict(weights))
    return model.eval()


@contextlib.contextmanager
def _offline():
    """The Hugging Face hub client in offline mode: a missing file fails at once, with no network retry.

    The client reads ``HF_HUB_OFFLINE`` once, when it is imported, so the environment variable set later
    has no effect; its module constant is switched for the call and restored afterwards.
    """
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = before


def load_state_dict(path: str | os.PathLike) -> dict:
    """Read a state dict safely: safetensors, or ``torch.load(weights_only=True)``.

    Parameters
    ----------
    path : str or path-like
        A ``.safetensors`` file, or a ``.pth``/``.bin`` checkpoint (a state dict, or a dict whose
        ``"state_dict"`` entry is one).

    Returns
    -------
    dict
        Parameter names to tensors.

    Raises
    ------
    FileNotFoundError
        If ``path`` is not a file.

    Examples
    --------
    >>> import tempfile, torch
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "ckpt.pth"
    ...     torch.save({"state_dict": {"w": torch.ones(2)}}, path)
    ...     state = load_state_dict(path)
    >>> sorted(state), state["w"].tolist()
    (['w'], [1.0, 1.0])
    >>> load_state_dict("/no/such.pth")
    Traceback (most recent call last):
    ...
    FileNotFoundError: weights file /no/such.pth does not exist
    """
    import torch

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"weights file {path} does not exist")
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return load_file(str(path))
    state = torch.load(path, map_location="cpu", weights_only=True)
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    return state


def device() -> str:
    """``cuda`` when a GPU is available, else ``cpu``.

    Returns
    -------
    str
        ``"cuda"`` or ``"cpu"``.

    Examples
    --------
    >>> device() in ("cuda", "cpu")
    True
    """
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def predict(
    model: Any,
    images: np.ndarray | Sequence[ArrayLike],
    batch_size: int = 64,
    progress: bool = True,
    desc: str = "predicting",
    workers: int | None = 0,
    precision: str = "fp32",
) -> np.ndarray:
    """Softmax probabilities of a timm model on images, with timm's preprocessing for the model.

    One model, one pass: images are decoded and transformed by :func:`shifteval.zoo.decode.loader`
    and run through :class:`shifteval.zoo.inference.Runner` (for several models sharing a pass, and a
    prediction store, see :mod:`shifteval.zoo.predict`).

    Parameters
    ----------
    model : torch.nn.Module
        A timm model (e.g. from :func:`load_model`); moved to :func:`device`.
    images : ndarray (N, H, W[, C]) of uint8, or a sequence of such arrays (e.g. ``ImageFiles``)
        Grayscale images are repeated to three channels when the model expects three.
    batch_size : int
        Images per decoded batch.
    progress : bool
        Show a progress bar over the images.
    desc : str
        The progress bar's label.
    workers : int or None
        Decoding processes (0: in this process; None: one per core,
        :func:`shifteval.zoo.decode.decode_workers`).
    precision : {"fp32", "bf16", "fp16"}
        See :mod:`shifteval.zoo.inference`; the reduced precisions need CUDA.

    Returns
    -------
    numpy.ndarray of float32, shape (N, K)
        Softmax probabilities, rows summing to 1; on the CPU independent of ``batch_size`` and
        ``workers``, bit for bit.

    Examples
    --------
    >>> model = load_model("resnet10t", None, num_classes=3)
    >>> imgs = np.random.default_rng(0).integers(0, 256, (5, 32, 32), dtype=np.uint8)  # grayscale
    >>> p = predict(model, imgs, batch_size=2, progress=False)
    >>> p.shape, p.dtype, bool(np.allclose(p.sum(axis=1), 1, atol=1e-5))
    ((5, 3), dtype('float32'), True)
    >>> bool((p == predict(model, imgs, batch_size=5, progress=False)).all())
    True
    """
    from tqdm import tqdm

    dev = device()
    runner = inference.Runner(model, dev, precision)
    cfg = decode.data_config(model)
    workers = decode.decode_workers(workers, dev == "cuda")
    with tqdm(total=len(images), desc=desc, unit="img", disable=not progress) as bar:
        for batch in decode.loader(images, cfg, batch_size, workers, pin=dev == "cuda"):
            runner.feed(batch)
            bar.update(len(batch))
    return runner.probabilities()
