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
from typing import Any

import numpy as np


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, creating parent folders.

    Parameters
    ----------
    path : str or path-like
        Destination file; missing parent folders are created.
    data : bytes
        The file's new content.

    Returns
    -------
    pathlib.Path
        ``path`` as a :class:`~pathlib.Path`.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = atomic_write_bytes(Path(tmp) / "sub" / "a.bin", b"abc")
    ...     print(out.name, out.read_bytes(), sorted(p.name for p in out.parent.iterdir()))
    a.bin b'abc' ['a.bin']
    """
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


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically.

    Parameters
    ----------
    path : str or path-like
        Destination file; missing parent folders are created.
    text : str
        The file's new content, encoded as UTF-8.

    Returns
    -------
    pathlib.Path
        ``path`` as a :class:`~pathlib.Path`.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     raw = atomic_write_text(Path(tmp) / "a.txt", "héllo").read_bytes()
    >>> len(raw), raw.decode("utf-8")
    (6, 'héllo')
    """
    return atomic_write_bytes(path, text.encode("utf-8"))


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def to_json(obj: Any) -> str:
    """JSON text for ``obj``, accepting numpy scalars and arrays; NaN is refused.

    Keys are sorted and the text is indented by two spaces and ends with a newline, so equal
    objects give byte-identical files.

    Parameters
    ----------
    obj : object
        JSON-able data; numpy scalars, numpy arrays and :class:`~pathlib.Path` objects are
        converted to numbers, lists and strings.

    Returns
    -------
    str
        The JSON text.

    Raises
    ------
    ValueError
        If ``obj`` contains NaN or an infinity.
    TypeError
        If ``obj`` contains a value that cannot be converted.

    Examples
    --------
    >>> print(to_json({"b": np.float64(0.5), "a": np.arange(2)}), end="")
    {
      "a": [
        0,
        1
      ],
      "b": 0.5
    }
    >>> to_json([float("nan")])
    Traceback (most recent call last):
    ...
    ValueError: Out of range float values are not JSON compliant: nan
    """
    return json.dumps(obj, indent=2, sort_keys=True, default=_json_default, allow_nan=False) + "\n"


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically (see :func:`to_json`).

    Parameters
    ----------
    path : str or path-like
        Destination file; missing parent folders are created.
    obj : object
        JSON-able data, numpy scalars and arrays accepted.

    Returns
    -------
    pathlib.Path
        ``path`` as a :class:`~pathlib.Path`.

    Raises
    ------
    ValueError
        If ``obj`` contains NaN or an infinity (nothing is written).

    Examples
    --------
    >>> import json, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = atomic_write_json(Path(tmp) / "r.json", {"acc": np.float32(0.25)})
    ...     print(json.loads(out.read_text()))
    {'acc': 0.25}
    """
    return atomic_write_text(path, to_json(obj))
