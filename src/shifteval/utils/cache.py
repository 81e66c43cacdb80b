"""Content-addressed caching, one implementation for every cache of the library.

A cache entry's **key** hashes everything its content depends on:

- values (parameters, configurations; numpy arrays by their bytes),
- the source of the library modules that compute it **and every ``shifteval`` module they import**,
  found by reading their ``import`` statements (so moving a function to another module changes the
  key: no hand-kept file lists),
- the versions of the third-party packages involved,
- the bytes of data files or folders it reads.

:func:`load_or_compute` fills an entry at most once even when several processes ask for it at the same
time (an exclusive ``fcntl`` lock beside the entry), and writes it atomically, so a reader never sees
half an entry. Users of this module: the chapter pipeline (``shifteval.book.provenance.cache_key``), the
zoo's prediction store, the replication world's and the model specifications' keys, and the
OOD-aware AutoEval backbones.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, cast

import numpy as np

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # src/shifteval
KEY_LENGTH = 16


def _module_file(name: str) -> Path | None:
    """The source file of ``shifteval.x.y`` (a package's ``__init__.py``), or None if not ours."""
    parts = name.split(".")
    if parts[0] != "shifteval":
        return None
    base = PACKAGE_ROOT.joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path, module: str) -> set[str]:
    """The ``shifteval`` modules a source file imports (absolute and relative imports)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            found.add(prefix)
            found.update(f"{prefix}.{a.name}" for a in node.names)  # "from . import world"
    return {m for m in found if m.split(".")[0] == "shifteval" and _module_file(m) is not None}


def import_closure(modules: Iterable[str]) -> list[str]:
    """Every ``shifteval`` module reachable from ``modules`` through imports (with parent packages).

    Parameters
    ----------
    modules : iterable of str
        Dotted module names; names outside ``shifteval`` (or without a source file) are ignored.

    Returns
    -------
    list of str
        The sorted dotted names of the modules reached, ``modules`` themselves included.

    Examples
    --------
    >>> "shifteval.utils.io" in import_closure(["shifteval.book.results"])
    True
    >>> import_closure(["shifteval.utils.io"])
    ['shifteval', 'shifteval.utils', 'shifteval.utils.io']
    >>> import_closure(["numpy"])
    []
    """
    todo, seen = list(modules), set()
    while todo:
        name = todo.pop()
        if name in seen or (path := _module_file(name)) is None:
            continue
        seen.add(name)
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # parent packages run first
        todo.extend(_imports(path, name))
    return sorted(seen)


@lru_cache(maxsize=64)
def _source_digest(modules: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for name in import_closure(modules):
        h.update(name.encode())
        path = cast(Path, _module_file(name))  # import_closure keeps only modules with a source file
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def source_digest(modules: Iterable[str]) -> str:
    """SHA-256 over the source of ``modules`` and of every ``shifteval`` module they import.

    ``"shifteval"`` alone stands for the whole package: every file under it (sources and data).

    Parameters
    ----------
    modules : iterable of str
        Dotted ``shifteval`` module names (order does not matter).

    Returns
    -------
    str
        64 hex digits.

    Examples
    --------
    >>> d = source_digest(["shifteval.utils.io"])
    >>> len(d), d == source_digest(["shifteval.utils.io"]) != source_digest(["shifteval.utils.cache"])
    (64, True)
    """
    modules = tuple(sorted(modules))
    if modules == ("shifteval",):
        return path_digest(PACKAGE_ROOT)
    _source_digest.cache_clear()  # sources may change within a session (tests, notebooks)
    return _source_digest(modules)


def path_digest(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes, or of a folder's files (relative names and bytes; no ``__pycache__``).

    A file's digest is the SHA-256 of its bytes' SHA-256 digest (so a file and a one-file folder
    differ: the folder's also covers the name).

    Parameters
    ----------
    path : str or path-like
        A file or a folder (hashed recursively, in sorted order of relative names).

    Returns
    -------
    str
        64 hex digits.

    Raises
    ------
    FileNotFoundError
        If ``path`` is neither a file nor a folder.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     f = Path(tmp) / "a.txt"
    ...     _ = f.write_bytes(b"abc")
    ...     print(path_digest(f) == hashlib.sha256(hashlib.sha256(b"abc").digest()).hexdigest(), len(path_digest(tmp)))
    True 64
    >>> path_digest("/no/such/file")
    Traceback (most recent call last):
    ...
    FileNotFoundError: cannot hash /no/such/file: no such file or folder
    """
    path = Path(path)
    h = hashlib.sha256()
    if path.is_dir():
        for sub in sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            h.update(sub.relative_to(path).as_posix().encode())
            h.update(hashlib.sha256(sub.read_bytes()).digest())
    elif path.is_file():
        h.update(hashlib.sha256(path.read_bytes()).digest())
    else:
        raise FileNotFoundError(f"cannot hash {path}: no such file or folder")
    return h.hexdigest()


def _canonical(value):
    """A JSON-able stand-in for ``value`` (arrays by dtype, shape and a digest of their bytes)."""
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return {"ndarray": [str(data.dtype), list(data.shape), hashlib.sha256(data.tobytes()).hexdigest()]}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def package_versions(packages: Iterable[str]) -> dict[str, str | None]:
    """Installed versions of ``packages`` (None where not installed).

    Parameters
    ----------
    packages : iterable of str
        Distribution names as ``pip`` knows them (``"numpy"``, ``"scikit-learn"``).

    Returns
    -------
    dict of str to str or None
        Version string per name; None for a distribution that is not installed.

    Examples
    --------
    >>> v = package_versions(["numpy", "no-such-distribution-xyz"])
    >>> v["numpy"] == np.__version__, v["no-such-distribution-xyz"]
    (True, None)
    """
    versions: dict[str, str | None] = {}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def key(
    values: Any = None,
    modules: Iterable[str] = (),
    packages: Iterable[str] = (),
    paths: Iterable[str | os.PathLike] = (),
) -> str:
    """A cache key (16 hex digits) over values, library source, package versions and data files.

    Parameters
    ----------
    values : JSON-able object, optional
        Parameters and configurations; numpy arrays and scalars are accepted.
    modules : iterable of str
        ``shifteval`` modules whose source (with everything they import) determines the result.
    packages : iterable of str
        Third-party distributions whose versions matter (``"torch"``, ``"scikit-learn"``).
    paths : iterable of path
        Data files or folders the result is computed from.

    Returns
    -------
    str
        The first :data:`KEY_LENGTH` (16) hex digits of a SHA-256 over all of the above.

    Raises
    ------
    FileNotFoundError
        If one of ``paths`` does not exist.

    Examples
    --------
    >>> key({"a": 1}) == key({"a": 1}) != key({"a": 2})
    True
    >>> len(key({"a": 1}, modules=["shifteval.utils.io"]))
    16
    """
    h = hashlib.sha256()
    h.update(json.dumps(_canonical(values), sort_keys=True, default=repr).encode())
    modules = list(modules)
    if modules:
        h.update(source_digest(modules).encode())
    packages = sorted(packages)
    if packages:
        h.update(json.dumps(package_versions(packages), sort_keys=True).encode())
    for path in sorted(str(p) for p in paths):
        h.update(path.encode())
        h.update(path_digest(path).encode())
    return h.hexdigest()[:KEY_LENGTH]


@contextlib.contextmanager
def locked(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive lock named after ``path`` (``<path>.lock``), across processes.

    Parameters
    ----------
    path : str or path-like
        The entry the lock guards; the lock file is created beside it (parents too).

    Yields
    ------
    None
        While the ``with`` block runs, the lock is held.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     with locked(Path(tmp) / "sub" / "entry"):
    ...         print(sorted(p.name for p in (Path(tmp) / "sub").iterdir()))
    ['entry.lock']
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def load_or_compute(
    path: str | os.PathLike,
    compute: Callable[[], Any],
    load: Callable[[Path], Any],
    save: Callable[[Path, Any], Any],
) -> Any:
    """Return the cached entry at ``path``, computing and saving it first if it is missing.

    ``save(path, value)`` must write atomically (see :mod:`shifteval.utils.io`). Concurrent callers
    wait for the first one and then load its entry instead of computing it again.

    Parameters
    ----------
    path : str or path-like
        Where the entry lives.
    compute : callable
        ``compute()`` returns the value; called only when the entry is missing.
    load : callable
        ``load(path)`` reads an existing entry.
    save : callable
        ``save(path, value)`` writes a freshly computed value (atomically).

    Returns
    -------
    object
        The loaded value, or the freshly computed one (as ``compute`` returned it).

    Examples
    --------
    >>> from shifteval.utils.io import atomic_write_text
    >>> folder = Path(tempfile.mkdtemp())
    >>> calls = []
    >>> def compute():
    ...     calls.append(1)
    ...     return "42"
    >>> read = lambda p: Path(p).read_text()
    >>> [load_or_compute(folder / "x", compute, read, atomic_write_text) for _ in range(2)], len(calls)
    (['42', '42'], 1)
    """
    path = Path(path)
    if path.exists():
        return load(path)
    with locked(path):
        if path.exists():  # filled by another process while we waited
            return load(path)
        value = compute()
        save(path, value)
        return value


def project_root(start: str | os.PathLike | None = None) -> Path | None:
    """The shifteval project at or above ``start``: the nearest folder holding ``_toc.yml`` and ``notebooks/``.

    Parameters
    ----------
    start : str or path-like, optional
        Where to start looking; the current directory by default.

    Returns
    -------
    pathlib.Path or None
        The project's root, resolved, or None outside a project.

    Examples
    --------
    >>> project_root(Path(__file__).parent) == project_root()
    True
    >>> project_root("/") is None
    True
    """
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file() and (folder / "notebooks").is_dir():
            return folder
    return None


def cache_dir() -> Path:
    """Where caches live: ``$SHIFTEVAL_CACHE``, else the project's ``.cache/shifteval``.

    Inside a project (:func:`project_root`, also from ``notebooks/``, where a notebook's kernel starts) the
    cache is the project's own, so a chapter run in JupyterLab reuses what ``make book`` trained; outside
    one, ``.cache/shifteval`` under the working directory.

    Returns
    -------
    pathlib.Path
        The folder (not created here).

    Examples
    --------
    >>> import unittest.mock
    >>> with unittest.mock.patch.dict(os.environ, {"SHIFTEVAL_CACHE": "/tmp/sc"}):
    ...     print(cache_dir())
    /tmp/sc
    >>> with unittest.mock.patch.dict(os.environ, {"SHIFTEVAL_CACHE": ""}):
    ...     print(cache_dir() == (project_root() or Path.cwd()) / ".cache" / "shifteval")
    True
    """
    if os.environ.get("SHIFTEVAL_CACHE"):
        return Path(os.environ["SHIFTEVAL_CACHE"])
    return (project_root() or Path.cwd()) / ".cache" / "shifteval"
