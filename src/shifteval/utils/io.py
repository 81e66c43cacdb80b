"""Atomic file writes and JSON encoding shared by the pipeline, the chapters and the caches.

A write goes to a temporary file in the destination's folder, is flushed to disk and renamed
into place (``os.replace`` is atomic on POSIX and Windows), so an interrupted run never leaves
a half-written file under the final name.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np


def atomic_write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, creating parent folders."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp creates 0600; published files are readable
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def to_json(obj) -> str:
    """JSON text for ``obj``, accepting numpy scalars and arrays; NaN is refused."""
    return json.dumps(obj, indent=2, sort_keys=True, default=_json_default, allow_nan=False) + "\n"


def atomic_write_json(path, obj) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically (see :func:`to_json`)."""
    return atomic_write_text(path, to_json(obj))
