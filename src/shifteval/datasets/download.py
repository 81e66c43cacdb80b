"""Fetch the papers' datasets from their official locations and check them against shipped checksums.

The table of sources is package data (``shifteval/data/sources.json``): for every dataset its
homepage, licence and files (path inside ``<root>/<name>``, URL with a pinned commit where the host is
GitHub, size, sha256 and/or md5 as published). :func:`get` downloads with HTTP ``Range`` resumption
into ``<file>.part`` and moves a file to its final path only after its checksum passed, so a final
path always holds verified bytes. ``mirror`` replaces every file's URL by ``<mirror>/<path>``
(tests serve a local copy of the official files this way).

Examples
--------
>>> from shifteval.datasets import download
>>> src = download.source("mnist")
>>> [f.path for f in src.files][:2]
['train-images-idx3-ubyte.gz', 'train-labels-idx1-ubyte.gz']
>>> download.mirror_url("http://127.0.0.1:8000/{name}", "mnist", "t10k-labels-idx1-ubyte.gz")
'http://127.0.0.1:8000/mnist/t10k-labels-idx1-ubyte.gz'
"""

from __future__ import annotations

import fnmatch
import hashlib
import http.client
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from tqdm import tqdm

_CHUNK = 1 << 20


class DownloadError(RuntimeError):
    """A dataset could not be fetched (unknown name, network failure, unverifiable file)."""


class ChecksumError(DownloadError):
    """A file's bytes differ from the checksum recorded for it."""


@dataclass(frozen=True)
class FileSpec:
    """One file of a dataset: where it goes, where it comes from, and how to recognise it."""

    path: str
    url: str
    size: int | None = None
    sha256: str | None = None
    md5: str | None = None

    @property
    def recorded(self) -> bool:
        """Whether a checksum is recorded for the file."""
        return bool(self.sha256 or self.md5)


@dataclass(frozen=True)
class Source:
    """A dataset the project knows: provenance, licence and files."""

    name: str
    title: str
    homepage: str
    citation: str
    licence: str
    notes: str
    files: tuple[FileSpec, ...]
    size: int | None = None
    instructions: str | None = None

    @property
    def downloadable(self) -> bool:
        """False for datasets that must be obtained by hand (e.g. ImageNet, behind a login)."""
        return bool(self.files)


@cache
def sources() -> dict[str, Source]:
    """Every dataset in the shipped table, by name.

    Returns
    -------
    dict of str to Source
        Read once from ``shifteval/data/sources.json`` (cached).

    Examples
    --------
    >>> "cifar10.1" in sources(), sources()["imagenet"].downloadable
    (True, False)
    """
    text = resources.files("shifteval.data").joinpath("sources.json").read_text(encoding="utf-8")
    out = {}
    for name, entry in json.loads(text).items():
        files = tuple(FileSpec(**f) for f in entry.pop("files"))
        out[name] = Source(name=name, files=files, **entry)
    return out


def source(name: str) -> Source:
    """Return the table entry of one dataset (``ValueError`` naming the known ones otherwise).

    Parameters
    ----------
    name : str
        A key of :func:`sources`.

    Returns
    -------
    Source

    Raises
    ------
    ValueError
        If ``name`` is not in the table.

    Examples
    --------
    >>> source("svhn")
    Traceback (most recent call last):
    ...
    ValueError: unknown dataset 'svhn'; known datasets: mnist, fashion-mnist, cifar10, cifar10.1, cifar10.2, cifar10.1-predictions, imagenetv2-predictions, imagenet, imagenetv2
    """
    table = sources()
    if name not in table:
        raise ValueError(f"unknown dataset {name!r}; known datasets: {', '.join(table)}")
    return table[name]


def mirror_url(mirror: str, name: str, path: str) -> str:
    """URL of ``path`` of dataset ``name`` on a mirror.

    ``{name}`` in ``mirror`` is replaced by the dataset name; a mirror without a URL scheme is a
    local folder.

    Parameters
    ----------
    mirror : str
        Base URL or local folder, optionally containing ``{name}``.
    name, path : str
        Dataset name; the file's path inside the dataset (URL-quoted in the result).

    Returns
    -------
    str
        The file's URL (``file://`` for a local folder).

    Examples
    --------
    >>> mirror_url("https://example.org/{name}/", "c", "a b.npy"), mirror_url("/srv/data", "mnist", "x.gz")
    ('https://example.org/c/a%20b.npy', 'file:///srv/data/x.gz')
    """
    base = mirror.replace("{name}", name).rstrip("/")
    if "://" not in base:
        base = Path(base).resolve().as_uri()
    return f"{base}/{urllib.parse.quote(path)}"


def _select(src: Source, include: list[str] | None) -> list[FileSpec]:
    if not include:
        return list(src.files)
    files = [f for f in src.files if any(fnmatch.fnmatch(f.path, pat) for pat in include)]
    if not files:
        raise ValueError(f"no file of {src.name} matches {include}")
    return files


def file_digests(path: str | os.PathLike) -> dict[str, str]:
    """sha256 and md5 hex digests of a file, read in one pass.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    dict
        ``{"sha256": hex, "md5": hex}``.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (f := Path(tmp) / "a").write_bytes(b"abc")
    ...     file_digests(f)["md5"]
    '900150983cd24fb0d6963f7d28e17f72'
    """
    sha, md5 = hashlib.sha256(), hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as fh:
        while block := fh.read(_CHUNK):
            sha.update(block)
            md5.update(block)
    return {"sha256": sha.hexdigest(), "md5": md5.hexdigest()}


def check_file(path: Path, spec: FileSpec) -> None:
    """Raise :class:`ChecksumError` unless ``path`` matches every checksum (and size) recorded in ``spec``.

    The message names the file and gives the expected and actual checksum (and size, if that differs).

    Parameters
    ----------
    path, spec : Path, FileSpec
        The file; its recorded size and checksums (unrecorded ones are not checked).

    Raises
    ------
    ChecksumError
        On any mismatch.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (f := Path(tmp) / "a").write_bytes(b"abc")
    ...     check_file(f, FileSpec("a", "", size=3, md5="900150983cd24fb0d6963f7d28e17f72"))  # passes
    ...     check_file(f, FileSpec("a", "", size=4))
    Traceback (most recent call last):
    ...
    shifteval.datasets.download.ChecksumError: a: size mismatch: expected 4 bytes, got 3
    """
    size = path.stat().st_size
    digests = file_digests(path)
    problems = [
        f"checksum mismatch ({kind}): expected {getattr(spec, kind)}, got {digests[kind]}"
        for kind in ("sha256", "md5")
        if getattr(spec, kind) and digests[kind] != getattr(spec, kind).lower()
    ]
    if spec.size is not None and size != spec.size:
        problems.append(f"size mismatch: expected {spec.size} bytes, got {size}")
    if problems:
        raise ChecksumError(f"{spec.path}: " + "; ".join(problems))


def _fetch(url: str, part: Path, spec: FileSpec, *, progress: bool, timeout: float) -> None:
    """Append the missing bytes of ``url`` to ``part`` (one HTTP request)."""
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"User-Agent": "shifteval"})
    if have and url.startswith(("http://", "https://")):
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 (http/https/file only)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and spec.size is not None and have == spec.size:
            return  # the part file is already complete
        if exc.code == 416:
            part.unlink()
            raise DownloadError(f"{spec.path}: server refused to resume at byte {have}; restarting") from exc
        raise DownloadError(f"{spec.path}: HTTP {exc.code} from {url}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise DownloadError(f"{spec.path}: cannot reach {url}: {exc}") from exc
    with response:
        resumed = getattr(response, "status", 200) == 206
        if not resumed:
            have = 0  # the server sent the whole file
        total = spec.size or (have + int(response.headers.get("Content-Length") or 0)) or None
        bar = tqdm(
            total=total, initial=have, unit="B", unit_scale=True, desc=spec.path,
            disable=not progress, file=sys.stderr, leave=False,
        )  # fmt: skip
        with bar, open(part, "ab" if resumed else "wb") as fh:
            while block := response.read(_CHUNK):
                fh.write(block)
                bar.update(len(block))


def fetch_file(
    url: str, dest: Path, spec: FileSpec, *, progress: bool = True, retries: int = 3, timeout: float = 60.0
) -> Path:
    """Download ``url`` to ``dest``, resuming ``dest.part``; ``dest`` appears only once verified.

    Parameters
    ----------
    url : str
        http(s) or file URL.
    dest : Path
        Final path; ``<dest>.part`` holds the bytes received so far.
    spec : FileSpec
        The checksums (and size) ``dest`` must match. With none recorded the file is accepted unverified.
    progress : bool
        Show a tqdm progress bar on stderr.
    retries : int
        Further attempts after a dropped connection, each resuming where the last one stopped.
    timeout : float
        Socket timeout in seconds.

    Returns
    -------
    Path
        ``dest``, mode 0644.

    Raises
    ------
    ChecksumError
        The complete download does not match; the part file is removed and nothing is at ``dest``.
    DownloadError
        The download failed ``retries + 1`` times.

    Examples
    --------
    >>> import tempfile  # from a file:// URL, no network
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (src := Path(tmp) / "src.bin").write_bytes(b"abc")
    ...     spec = FileSpec("a.bin", src.as_uri(), size=3, md5="900150983cd24fb0d6963f7d28e17f72")
    ...     out = fetch_file(src.as_uri(), Path(tmp) / "out" / "a.bin", spec, progress=False)
    ...     print(out.read_bytes(), sorted(p.name for p in out.parent.iterdir()))
    b'abc' ['a.bin']
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    for attempt in range(retries + 1):
        try:
            _fetch(url, part, spec, progress=progress, timeout=timeout)
        except (DownloadError, http.client.HTTPException, OSError) as exc:
            if attempt == retries:
                raise DownloadError(
                    f"{spec.path}: download failed after {retries + 1} attempts: {exc}"
                ) from exc
            continue
        if spec.size is not None and part.stat().st_size < spec.size:
            if attempt < retries:
                continue  # connection closed early: resume
            raise DownloadError(
                f"{spec.path}: incomplete after {retries + 1} attempts ({part.stat().st_size} of {spec.size} "
                f"bytes in {part}); run the command again to resume"
            )
        break
    try:
        check_file(part, spec)
    except ChecksumError:
        part.unlink(missing_ok=True)
        raise
    os.chmod(part, 0o644)
    os.replace(part, dest)
    return dest


def get(
    name: str,
    root: str | os.PathLike,
    *,
    mirror: str | None = None,
    include: list[str] | None = None,
    allow_unrecorded: bool = False,
    progress: bool = True,
    retries: int = 3,
) -> list[Path]:
    """Download dataset ``name`` into ``root/name`` and verify every file.

    Files already present and matching their checksums are kept; a present file that does not
    match is downloaded again.

    Parameters
    ----------
    name : str
        A dataset of :func:`sources` with files (``shifteval data list``).
    root : path-like
        Parent folder; files go to ``root/name/<path>``.
    mirror : str, optional
        Fetch ``<mirror>/<path>`` instead of the official URL; ``{name}`` is replaced by ``name``.
    include : list of str, optional
        Shell patterns; only files whose path matches one are fetched.
    allow_unrecorded : bool
        Accept files for which no checksum is recorded (unverified). Without it such files are refused.
    progress : bool
        Progress bars on stderr.
    retries : int
        Resumed attempts per file after a dropped connection.

    Returns
    -------
    list of Path
        Final paths of the files.

    Raises
    ------
    DownloadError
        Not downloadable, unrecorded checksums, a failed download; :class:`ChecksumError`: a mismatch.
    ValueError
        If ``name`` is unknown or ``include`` matches no file.

    Examples
    --------
    >>> import tempfile  # a local-folder mirror of stand-in files; CIFAR-10.1 records no checksums
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for f in source("cifar10.1").files:
    ...         _ = (Path(tmp) / f.path).write_bytes(b"x")
    ...     paths = get("cifar10.1", Path(tmp) / "data", mirror=tmp, include=["*_v6_*"], allow_unrecorded=True)
    ...     print([p.relative_to(tmp).as_posix() for p in paths])
    ['data/cifar10.1/cifar10.1_v6_data.npy', 'data/cifar10.1/cifar10.1_v6_labels.npy']
    """
    src = source(name)
    if not src.downloadable:
        raise DownloadError(f"{name} cannot be downloaded by shifteval: {src.instructions or src.notes}")
    files = _select(src, include)
    unrecorded = [f.path for f in files if not f.recorded]
    if unrecorded and not allow_unrecorded:
        raise DownloadError(
            f"{name}: no checksum is recorded for {len(unrecorded)} file(s) ({', '.join(unrecorded[:3])}"
            f"{', …' if len(unrecorded) > 3 else ''}), so they cannot be verified; "
            "pass --allow-unrecorded (allow_unrecorded=True) to download them unverified"
        )
    folder = Path(root) / name
    out = []
    for spec in files:
        dest = folder / spec.path
        if dest.exists():
            try:
                check_file(dest, spec)
                out.append(dest)
                continue
            except ChecksumError:
                dest.unlink()
        url = mirror_url(mirror, name, spec.path) if mirror else spec.url
        out.append(fetch_file(url, dest, spec, progress=progress, retries=retries))
    return out


def verify(name: str, root: str | os.PathLike, *, include: list[str] | None = None) -> dict[str, str]:
    """Re-check the files of ``name`` under ``root/name`` in place.

    Parameters
    ----------
    name, root : str, path-like
        A dataset of :func:`sources`; the parent folder of ``root/name``.
    include : list of str, optional
        Shell patterns selecting the files to check.

    Returns
    -------
    dict
        ``path -> status`` with status ``"ok"``, ``"missing"``, ``"unrecorded"`` (present, no
        checksum to check) or the mismatch message.

    Raises
    ------
    ValueError
        If ``name`` is unknown or ``include`` matches no file.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     (Path(tmp) / "mnist").mkdir()
    ...     _ = (Path(tmp) / "mnist" / "t10k-labels-idx1-ubyte.gz").write_bytes(b"x")
    ...     report = verify("mnist", tmp, include=["t10k-*"])
    >>> report["t10k-images-idx3-ubyte.gz"], report["t10k-labels-idx1-ubyte.gz"][:52]
    ('missing', 't10k-labels-idx1-ubyte.gz: checksum mismatch (sha256')
    """
    src = source(name)
    folder = Path(root) / name
    report = {}
    for spec in _select(src, include):
        path = folder / spec.path
        if not path.exists():
            report[spec.path] = "missing"
        elif not spec.recorded:
            report[spec.path] = "unrecorded"
        else:
            try:
                check_file(path, spec)
                report[spec.path] = "ok"
            except ChecksumError as exc:
                report[spec.path] = str(exc)
    return report


def human_size(n: float | None) -> str:
    """``1.6 MB``-style size; ``?`` when unknown.

    Parameters
    ----------
    n : int or None
        Size in bytes (decimal units).

    Returns
    -------
    str

    Examples
    --------
    >>> human_size(999), human_size(1_648_877), human_size(None)
    ('999 B', '1.6 MB', '?')
    """
    if n is None:
        return "?"
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return "?"  # pragma: no cover
