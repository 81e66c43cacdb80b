"""Softmax probabilities of a model on batches of decoded images, at a chosen precision.

``fp32`` (the default) runs the model as it is, with TF32 switched off on CUDA, so fp32 means fp32.
``bf16`` and ``fp16`` run it under CUDA autocast with channels-last tensors, the GPU's fast path; they are
refused on the CPU. On the CPU the model sees fixed chunks of :data:`CPU_CHUNK` images (the last padded
with zeros), so an image's probabilities do not depend on the batch size, the number of decoding workers
or which other images share its batch, bit for bit: the CPU kernels choose their algorithm by the input's
shape, and at a fixed shape each image's row comes out the same wherever it sits in the chunk and whatever
the other rows hold (``tests/test_predict.py`` checks it). On CUDA no such guarantee is made.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Precisions a pass may run at; the reduced ones need CUDA.
PRECISIONS = ("fp32", "bf16", "fp16")

#: Rows per forward pass on the CPU (fixed, so results do not depend on the batch size).
CPU_CHUNK = 16


def check_precision(precision: str, device: str) -> None:
    """Refuse an unknown precision, or a reduced one on the CPU.

    Parameters
    ----------
    precision : str
        One of :data:`PRECISIONS`.
    device : str
        ``"cuda"`` or ``"cpu"``.

    Raises
    ------
    ValueError
        Naming the precisions and the device.

    Examples
    --------
    >>> check_precision("fp32", "cpu")
    >>> check_precision("bf16", "cpu")
    Traceback (most recent call last):
    ...
    ValueError: precision 'bf16' runs under CUDA autocast and needs a GPU; this machine predicts on the CPU (use fp32)
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision != "fp32" and device != "cuda":
        raise ValueError(
            f"precision {precision!r} runs under CUDA autocast and needs a GPU; this machine predicts on the "
            f"CPU (use fp32)"
        )


def _tf32_switches() -> list[tuple[Any, str, Any]]:
    """``(object, attribute, fp32 value)`` of torch's TF32 switches.

    The ``fp32_precision`` settings of torch 2.9 and later, or the older ``allow_tf32`` flags (torch
    refuses a mix of the two).
    """
    import torch

    conv = getattr(torch.backends.cudnn, "conv", None)
    if conv is not None and hasattr(conv, "fp32_precision"):
        return [(conv, "fp32_precision", "ieee"), (torch.backends.cuda.matmul, "fp32_precision", "ieee")]
    return [(torch.backends.cudnn, "allow_tf32", False), (torch.backends.cuda.matmul, "allow_tf32", False)]


@contextlib.contextmanager
def strict_fp32(device: str) -> Iterator[None]:
    """On CUDA, TF32 off for the duration (restored after): fp32 convolutions and matmuls in full fp32.

    The switches are process-wide: passes that run side by side in threads of one process (a Dask worker
    with several threads) should all run at fp32, or in separate processes.

    Parameters
    ----------
    device : str
        ``"cuda"`` (the switches are set, then restored) or ``"cpu"`` (nothing to do).

    Examples
    --------
    >>> with strict_fp32("cpu"):
    ...     pass
    """
    if device != "cuda":
        yield
        return
    switches = _tf32_switches()
    before = [getattr(obj, name) for obj, name, _ in switches]
    for obj, name, value in switches:
        setattr(obj, name, value)
    try:
        yield
    finally:
        for (obj, name, _), value in zip(switches, before, strict=True):
            setattr(obj, name, value)


@dataclass
class Runner:
    """One model on one device at one precision, collecting its probabilities batch by batch.

    Parameters
    ----------
    model : torch.nn.Module
        A timm model in eval mode (moved to ``device`` here).
    device : str
        ``"cuda"`` or ``"cpu"``.
    precision : str
        One of :data:`PRECISIONS`.

    Examples
    --------
    >>> import torch
    >>> from shifteval.zoo import pretrained
    >>> runner = Runner(pretrained.load_model("resnet10t", None, num_classes=3), "cpu", "fp32")
    >>> x = torch.randn(5, 3, 32, 32)
    >>> runner.feed(x[:2]); runner.feed(x[2:])
    >>> p = runner.probabilities()
    >>> p.shape, p.dtype, bool(np.allclose(p.sum(axis=1), 1, atol=1e-6))
    ((5, 3), dtype('float32'), True)
    >>> bool((p == Runner(runner.model, "cpu", "fp32").run_all(x)).all())  # batches do not matter
    True
    """

    model: Any
    device: str
    precision: str = "fp32"
    _out: list = field(default_factory=list, repr=False)
    _cpu_seconds: float = field(default=0.0, repr=False)
    _events: list = field(default_factory=list, repr=False)

    def __post_init__(self):
        import torch

        check_precision(self.precision, self.device)
        self.model = self.model.to(self.device)
        if self.precision != "fp32":
            self.model = self.model.to(memory_format=torch.channels_last)

    def feed(self, batch) -> None:
        """Run the model on one batch (on the device already, or copied there without blocking).

        On CUDA nothing waits for the GPU here: the time is taken by CUDA events and read by
        :meth:`seconds`, so copies, decoding and other models' kernels overlap.
        """
        import torch

        batch = batch.to(self.device, non_blocking=True)
        if self.device == "cuda":
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            with torch.inference_mode(), self._precision_context():
                self._out.append(torch.softmax(self._forward_cuda(batch).double(), dim=1).float())
            end.record()
            self._events.append((begin, end))
            return
        start = time.perf_counter()
        with torch.inference_mode():
            logits = torch.cat([self._forward_cpu(chunk) for chunk in batch.split(CPU_CHUNK)])
            self._out.append(torch.softmax(logits.double(), dim=1).float())
        self._cpu_seconds += time.perf_counter() - start

    def seconds(self) -> float:
        """The model's time on its batches so far (on CUDA, the GPU's time, waiting for it to finish)."""
        import torch

        if not self._events:
            return self._cpu_seconds
        torch.cuda.synchronize()
        return self._cpu_seconds + sum(b.elapsed_time(e) for b, e in self._events) / 1000

    def _precision_context(self):
        """TF32 off for an fp32 model (:func:`strict_fp32`); autocast is applied in :meth:`_forward_cuda`."""
        return strict_fp32(self.device) if self.precision == "fp32" else contextlib.nullcontext()

    def _forward_cuda(self, batch):
        """The model on a CUDA batch: as it is (fp32), or under autocast with channels-last tensors."""
        import torch

        if self.precision == "fp32":
            return self.model(batch).float()
        dtype = torch.bfloat16 if self.precision == "bf16" else torch.float16
        with torch.autocast("cuda", dtype=dtype):
            return self.model(batch.contiguous(memory_format=torch.channels_last)).float()

    def _forward_cpu(self, chunk):
        """The model on :data:`CPU_CHUNK` rows, ``chunk`` padded with zeros to that size and cut back."""
        import torch

        n = len(chunk)
        if n < CPU_CHUNK:
            chunk = torch.cat([chunk, chunk.new_zeros((CPU_CHUNK - n, *chunk.shape[1:]))])
        return self.model(chunk)[:n].float()

    def probabilities(self) -> np.ndarray:
        """Every batch's softmax probabilities so far, as one float32 array (N, K)."""
        import torch

        return torch.cat(self._out).cpu().numpy().astype(np.float32, copy=False)

    def run_all(self, batch) -> np.ndarray:
        """Probabilities of one batch (a convenience for tests and benchmarks)."""
        self._out = []
        self.feed(batch)
        return self.probabilities()
