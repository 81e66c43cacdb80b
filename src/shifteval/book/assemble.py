"""Assembling the HTML book: jupyter-book, the real-data edition's sources and its datasets.

The steps :func:`shifteval.book.pipeline.build` takes after (or before) executing the chapters.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

from ..utils.io import atomic_write_bytes, atomic_write_json
from .project import PipelineError


def log(message: str) -> None:
    """Report the pipeline's progress on standard error (standard output carries the commands' results).

    Parameters
    ----------
    message : str
        One line, ``[chapter] what happens`` by convention.
    """
    print(message, file=sys.stderr, flush=True)


def jupyter_book_command() -> list[str]:
    """How to call jupyter-book from this environment.

    Returns
    -------
    list of str
        The command: the ``jupyter-book`` beside this Python, else the one on ``PATH``.

    Raises
    ------
    PipelineError
        If neither exists.
    """
    exe = Path(sys.executable).with_name("jupyter-book")
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("jupyter-book")
    if found is None:
        raise PipelineError("jupyter-book is not installed in this environment")
    return [found]


EDITIONS = ("full", "student")


REAL_EDITION_FILES = ("_config.yml", "_toc.yml", "book", "notebooks")


def real_edition_sources(root: Path) -> Path:
    """A copy of the book's sources (not its executed chapters) for the real-data edition.

    Parameters
    ----------
    root : pathlib.Path
        The project root.

    Returns
    -------
    pathlib.Path
        ``_build/real/src``, holding :data:`REAL_EDITION_FILES` (executed chapters and their results left out).
    """
    source = root / "_build" / "real" / "src"
    for name in REAL_EDITION_FILES:
        src, dest = root / name, source / name
        if src.is_dir():
            shutil.copytree(
                src,
                dest,
                dirs_exist_ok=True,
                ignore=shutil.ignore_patterns("*.ipynb", "*.results.json", ".*.lock"),
            )
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    return source


def fetch_data(names: Sequence[str], data_root: Path) -> None:
    """Make sure each named dataset is in ``data_root/NAME``, verified (``shifteval data get``).

    ``$SHIFTEVAL_DATA_MIRROR`` (e.g. ``http://host/{name}``) is passed on as ``--mirror``.

    Parameters
    ----------
    names : sequence of str
        Dataset names (see ``shifteval data list``); nothing happens when empty.
    data_root : pathlib.Path
        The data folder.

    Raises
    ------
    PipelineError
        If ``shifteval data get`` fails.
    """
    if not names:
        return
    log(f"[data] {', '.join(names)} into {data_root}")
    cmd = [sys.executable, "-m", "shifteval.cli", "data", "get", *names, "--root", str(data_root)]
    if os.environ.get("SHIFTEVAL_DATA_MIRROR"):
        cmd += ["--mirror", os.environ["SHIFTEVAL_DATA_MIRROR"]]
    proc = subprocess.run(cmd)
    if proc.returncode != 0:
        raise PipelineError(
            f"could not fetch {', '.join(names)} into {data_root} (exit {proc.returncode}); "
            "see the message above, or put the official files there yourself"
        )


#: The file in a built HTML folder that holds :func:`book_inputs` of the build that wrote it (JSON).
BUILD_STAMP = ".shifteval-inputs"

#: Packages whose versions change the HTML (the book's builder and its extensions).
BOOK_PACKAGES = ("jupyter-book", "sphinx", "myst-nb", "myst-parser", "sphinx-book-theme", "pydata-sphinx-theme",
                 "sphinx-exercise", "sphinxcontrib-bibtex", "sphinx-togglebutton", "sphinx-design",
                 "sphinx-mathjax-offline", "docutils", "pygments")  # fmt: skip


def book_inputs_digest(source: Path, arguments: Sequence[str], config: Path | None = None) -> str:
    r"""A digest of everything the HTML book is built from.

    A build whose digest matches the stamp of the HTML in place skips ``jupyter-book`` (which would
    otherwise reload every page's doctree to number figures, seconds even when nothing changed). The
    digest covers the book's configuration and table of contents, every file under ``book/`` (pages,
    executed chapters, bibliography, static files) and ``notebooks/`` (offered as downloads), the
    ``shifteval`` package (the library reference is generated from its docstrings), the builder's
    arguments and edition configuration, and the versions of :data:`BOOK_PACKAGES`. Only the built
    folder's ``index.html`` is checked to exist: ``make clean`` (or deleting ``_build``) forces a rebuild.

    Parameters
    ----------
    source : pathlib.Path
        The book's source folder (the project root, or the real-data edition's sources).
    arguments : sequence of str
        ``jupyter-book``'s arguments.
    config : pathlib.Path, optional
        The edition's configuration file, when one replaces ``_config.yml``.

    Returns
    -------
    str
        A SHA-256 hex digest.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = Path(tmp)
    ...     (root / "book").mkdir()
    ...     _ = (root / "book" / "intro.md").write_text("# Intro\n")
    ...     before = book_inputs_digest(root, ["build"])
    ...     same = book_inputs_digest(root, ["build"]) == before
    ...     _ = (root / "book" / "intro.md").write_text("# Introduction\n")
    ...     same, book_inputs_digest(root, ["build"]) == before, book_inputs_digest(root, ["other"]) == before
    (True, False, False)
    """
    import hashlib
    import json

    return hashlib.sha256(
        json.dumps(book_inputs(source, arguments, config), sort_keys=True).encode()
    ).hexdigest()


def book_inputs(source: Path, arguments: Sequence[str], config: Path | None = None) -> dict[str, str]:
    """What :func:`book_inputs_digest` digests: each input file's SHA-256 by its name, and the build's settings.

    Parameters
    ----------
    source, arguments, config
        As for :func:`book_inputs_digest`.

    Returns
    -------
    dict of str to str
        File names (relative to ``source``) to their contents' SHA-256, and ``"(settings)"`` to the
        arguments, the library's digest and the packages' versions.
    """
    import hashlib
    import json

    from ..utils import cache

    files = [source / "_config.yml", source / "_toc.yml", *([config] if config is not None else [])]
    for folder in ("book", "notebooks"):
        # hidden files are no input: locks, an atomic write's temporary file, Jupyter's checkpoints
        files += sorted(
            p
            for p in (source / folder).rglob("*")
            if not any(s.startswith(".") for s in p.relative_to(source).parts)
        )
    # the overview of findings reads the real-data edition's results too (sphinxext.FindingsOverview)
    real = source / "_build" / "real" / "src" / "book" / "chapters"
    files += sorted(real.glob("*.results.json")) if real.is_dir() else []
    inputs: dict[str, str] = {}
    for path in files:
        try:
            content = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            continue  # a folder, or a file removed since it was listed
        inputs[str(path.relative_to(source) if path.is_relative_to(source) else path.name)] = hashlib.sha256(
            content
        ).hexdigest()
    extra = {"arguments": list(arguments), "library": cache.source_digest(["shifteval"]),
             "packages": cache.package_versions(BOOK_PACKAGES)}  # fmt: skip
    inputs["(settings)"] = json.dumps(extra, sort_keys=True)
    return inputs


def _changed_inputs(stamp: Path, inputs: dict[str, str]) -> list[str]:
    """The inputs that differ from those a stamp recorded (all of them when it recorded none)."""
    import json

    try:
        before = json.loads(stamp.read_text(encoding="utf-8"))["inputs"]
    except (OSError, ValueError, KeyError, TypeError):
        return sorted(inputs)
    return sorted(k for k in inputs.keys() | before.keys() if inputs.get(k) != before.get(k))


def build_html(source: Path, out: Path | None, title_suffix: str = "", hide_solutions: bool = False) -> Path:
    """Run ``jupyter-book build`` on ``source``; the HTML lands in ``out/html`` (``_build/html`` if None).

    Skipped when the HTML in place was built from the same inputs (:func:`book_inputs_digest`).

    Parameters
    ----------
    source : pathlib.Path
        The book's source folder (the project root, or the real-data edition's sources).
    out : pathlib.Path or None
        The edition's build folder (its configuration and Sphinx's work go to ``out/work``); ``None``
        builds the default book in place.
    title_suffix : str
        Added to the book's title in brackets, for an edition other than the default.
    hide_solutions : bool
        Leave the exercises' solutions out (the student edition).

    Returns
    -------
    pathlib.Path
        The book's ``index.html``.

    Raises
    ------
    PipelineError
        If ``jupyter-book build`` fails (the failed build's HTML and environment are removed).
    """
    cmd = [*jupyter_book_command(), "build", str(source), "-W", "-n", "--keep-going"]
    work = out / "work" if out is not None else None
    if work is not None:
        config = yaml.safe_load((source / "_config.yml").read_text(encoding="utf-8"))
        if hide_solutions:
            config.setdefault("sphinx", {}).setdefault("config", {})["hide_solutions"] = True
        config["title"] = f"{config.get('title', '')} ({title_suffix})"
        work.mkdir(parents=True, exist_ok=True)
        atomic_write_json(work / "_config.json", config)  # YAML is a superset of JSON
        cmd += ["--config", str(work / "_config.json"), "--path-output", str(work)]
    built = (work if work is not None else source) / "_build"
    final = out / "html" if out is not None else built / "html"
    stamp = final / BUILD_STAMP
    inputs = book_inputs(source, cmd[1:], work / "_config.json" if work is not None else None)
    changed = _changed_inputs(stamp, inputs) if stamp.is_file() else []
    if (final / "index.html").is_file() and stamp.is_file() and not changed:
        log(f"[book] up to date (nothing the HTML is built from changed); skipped: {final / 'index.html'}")
        return final / "index.html"
    if changed:
        log(
            f"[book] changed since the last build: {', '.join(changed[:8])}"
            + (" ..." if len(changed) > 8 else "")
        )
    stamp.unlink(missing_ok=True)  # a build stopped halfway must not leave a matching stamp behind
    log("[book] " + " ".join(cmd[1:]))
    proc = subprocess.run(cmd, cwd=source)
    if proc.returncode != 0:
        # Sphinx builds incrementally: left in place, a failed build's environment would let the next
        # build "succeed" without re-reading the pages that warned. Remove it, and the untrusted HTML.
        for stale in ("html", ".doctrees"):
            shutil.rmtree(built / stale, ignore_errors=True)
        raise PipelineError(f"jupyter-book build failed (exit {proc.returncode}); see the warnings above")
    if out is not None:  # and work is out / "work"
        shutil.rmtree(final, ignore_errors=True)
        os.replace(built / "html", final)
    atomic_write_bytes(stamp, json.dumps({"inputs": inputs}, sort_keys=True).encode("utf-8"))
    index = final / "index.html"
    log(f"[book] ready: {index}")
    return index
