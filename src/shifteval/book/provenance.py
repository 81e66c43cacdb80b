"""What a chapter's outputs depend on, and the provenance published with them.

The cache key of an executed chapter (:func:`cache_key`), the provenance admonition at the top of its
page (:func:`provenance_box`) and the scrubbing of this machine's paths from what is published
(:func:`scrub_local_paths`).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..utils import cache
from .project import RESERVED_PARAMETERS, Chapter
from .threads import DEFAULT_THREADS

KEY_PACKAGES = (
    "numpy", "scipy", "pandas", "matplotlib", "seaborn", "scikit-learn", "torch", "timm",
    "papermill", "jupytext", "nbformat", "ipykernel",
)  # fmt: skip


def library_hash() -> str:
    """SHA-256 over every file of the installed ``shifteval`` package (sources and data).

    Returns
    -------
    str
        64 hex digits; the page's provenance box shows the first 12.

    Examples
    --------
    >>> h = library_hash()
    >>> len(h), h == library_hash()
    (64, True)
    """
    return cache.source_digest(["shifteval"])


def _data_paths(value, root: Path) -> list[Path]:
    """Files or folders named by a parameter value (strings, recursively in lists and dicts)."""
    if isinstance(value, str) and value and len(value) < 4096:
        path = Path(value) if Path(value).is_absolute() else root / value
        try:
            return [path] if path.exists() else []
        except OSError:
            return []
    if isinstance(value, (list, tuple)):
        return [p for v in value for p in _data_paths(v, root)]
    if isinstance(value, dict):
        return [p for v in value.values() for p in _data_paths(v, root)]
    return []


def package_versions() -> dict[str, str | None]:
    """Versions of the packages whose behaviour a chapter's numbers depend on.

    Returns
    -------
    dict
        Each of :data:`KEY_PACKAGES` to its installed version (``None`` where not installed).

    Examples
    --------
    >>> versions = package_versions()
    >>> list(versions) == list(KEY_PACKAGES), isinstance(versions["numpy"], str)
    (True, True)
    """
    return cache.package_versions(KEY_PACKAGES)


def cache_key(
    chapter: Chapter, parameters: dict[str, Any], threads: int = DEFAULT_THREADS, strict: bool = False
) -> str:
    r"""Content hash of everything a chapter's output depends on.

    It hashes the notebook source, the resolved parameters, whether the run enforces its claims, the
    kernel's thread count (see :mod:`shifteval.book.threads`), every file of the ``shifteval`` package,
    the data files or folders that string parameters name (when they exist, relative to the project
    root), and the versions of :data:`KEY_PACKAGES` (see :func:`shifteval.utils.cache.key`).

    Parameters
    ----------
    chapter : Chapter
        The chapter.
    parameters : dict
        Its resolved parameters (see :func:`~shifteval.book.project.resolve_parameters`).
    threads : int
        The thread count the kernel computes on (:func:`~shifteval.book.threads.chapter_threads`).
    strict : bool
        Whether a claim that does not hold fails the run (the default set without overrides): a run that
        only reported its claims never stands in for one that enforced them, even with equal values.

    Returns
    -------
    str
        The key (16 hex digits), stored in the executed notebook's metadata.

    Examples
    --------
    >>> from shifteval.book.project import Chapter
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     chapter = Chapter("tiny", Path(tmp))
    ...     (chapter.root / "notebooks").mkdir()
    ...     _ = chapter.source.write_text("n = 1\n")
    ...     _ = (chapter.root / "data.csv").write_text("1,2\n")
    ...     key = cache_key(chapter, {"table": "data.csv"})
    ...     same = cache_key(chapter, {"table": "data.csv"}) == key
    ...     _ = (chapter.root / "data.csv").write_text("1,3\n")  # the named file changed
    ...     one_thread = cache_key(chapter, {"table": "data.csv"}, threads=1) == key  # another thread count
    ...     strict = cache_key(chapter, {"table": "data.csv"}, strict=True) == key  # claims enforced
    ...     len(key), same, cache_key(chapter, {"table": "data.csv"}) == key, one_thread, strict
    (16, True, False, False, False)
    """
    return cache.key(
        {
            "source": chapter.source.read_text(encoding="utf-8"),
            "parameters": parameters,
            "threads": threads,
            "strict": strict,
        },  # fmt: skip
        modules=["shifteval"],  # a notebook may import anything of the library
        packages=KEY_PACKAGES,
        paths=_data_paths(parameters, chapter.root),
    )


def git_commit(root: Path) -> str | None:
    """``HEAD`` of the project's repository, suffixed ``-dirty`` when the tree has changes.

    Parameters
    ----------
    root : pathlib.Path
        A folder in the repository.

    Returns
    -------
    str or None
        The commit hash (``-dirty`` when tracked files changed), or ``None`` when ``root`` is not in a
        git repository or git is missing.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     print(git_commit(Path(tmp)))
    None
    """
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("-dirty" if dirty else "")


def cached_key(notebook_path: Path) -> str | None:
    """The cache key recorded in an executed notebook, or None.

    Parameters
    ----------
    notebook_path : pathlib.Path
        An executed notebook ``<chapter>.ipynb``.

    Returns
    -------
    str or None
        The key in its ``shifteval`` metadata; ``None`` when the notebook or its
        ``<chapter>.results.json`` is missing, or the notebook is unreadable or has no key.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     nb = Path(tmp) / "tiny.ipynb"
    ...     _ = nb.write_text(json.dumps({"metadata": {"shifteval": {"cache_key": "abc"}}}))
    ...     alone = cached_key(nb)  # no results.json beside it: not a complete pair
    ...     _ = (Path(tmp) / "tiny.results.json").write_text("{}")
    ...     alone, cached_key(nb)
    (None, 'abc')
    """
    results = notebook_path.with_name(notebook_path.name.replace(".ipynb", ".results.json"))
    if not (notebook_path.is_file() and results.is_file()):
        return None
    try:
        meta = json.loads(notebook_path.read_text(encoding="utf-8"))["metadata"]
        return meta.get("shifteval", {}).get("cache_key")
    except (OSError, ValueError, KeyError):
        return None


def scrub_local_paths(text: str, root: str | Path) -> str:
    """Replace this machine's paths in a published notebook's text by neutral names.

    Executed notebooks carry papermill's input and output paths in their metadata, and warnings in
    stderr name files of the Python environment; neither may reach a page or a download.

    Parameters
    ----------
    text : str
        The notebook's JSON text (paths appear JSON-escaped).
    root : str or pathlib.Path
        The project root, replaced by ``<project>``; the Python environment becomes ``<python>``,
        ``$SHIFTEVAL_CACHE`` ``<cache>`` and the home folder ``~``.

    Returns
    -------
    str
        The text with those paths replaced, longest first.

    Examples
    --------
    >>> scrub_local_paths('{"input_path": "/nonexistent/proj/notebooks/a.py"}', "/nonexistent/proj")
    '{"input_path": "<project>/notebooks/a.py"}'
    """
    places = {
        str(Path(root).resolve()): "<project>",
        str(root): "<project>",
        sys.prefix: "<python>",
        sys.base_prefix: "<python>",
        str(Path(sys.executable).resolve().parent.parent): "<python>",
        os.environ.get("SHIFTEVAL_CACHE", ""): "<cache>",
        str(Path.home()): "~",
    }
    for path in sorted((p for p in places if len(p) > 1), key=len, reverse=True):
        text = text.replace(json.dumps(path)[1:-1], places[path])
    return text


def strip_injected_internals(nb) -> None:
    r"""Keep papermill's injected-parameters cell off the page, without lines naming pipeline internals.

    Readers see one parameters cell (the chapter's, with each parameter's meaning); this run's values are
    in the page's top notice and its *Run it yourself* table. The notebook offered for download keeps the
    cell (tagged ``remove-cell``).

    Parameters
    ----------
    nb : nbformat.NotebookNode
        An executed notebook, changed in place (papermill's input and output paths are dropped from its
        metadata too).

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook()
    >>> cell = nbformat.v4.new_code_cell("n = 5\nresults_path = '/tmp/x'")
    >>> cell.metadata["tags"] = ["injected-parameters"]
    >>> nb.cells.append(cell)
    >>> strip_injected_internals(nb)
    >>> nb.cells[0].source, nb.cells[0].metadata["tags"]
    ('n = 5', ['injected-parameters', 'remove-cell'])
    """
    for key in ("input_path", "output_path"):
        nb.metadata.get("papermill", {}).pop(key, None)
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "injected-parameters" in tags:
            if "remove-cell" not in tags:
                cell.metadata["tags"] = [*tags, "remove-cell"]
            lines = cell.source.splitlines()
            cell.source = "\n".join(
                line for line in lines if line.split("=")[0].strip() not in RESERVED_PARAMETERS
            )


def after_title(nb) -> int:
    """Index just after the first markdown cell (the chapter's title and introduction).

    Parameters
    ----------
    nb : nbformat.NotebookNode
        A notebook.

    Returns
    -------
    int
        Where a note that opens the page goes (0 when the notebook has no markdown cell).

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook()
    >>> nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_markdown_cell("# Title")]
    >>> after_title(nb)
    2
    """
    return next((i + 1 for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), 0)


def last_run(notebook_path: Path) -> tuple[str, dict[str, Any]] | None:
    """The parameter set and overrides a chapter's published notebook was executed with, or None.

    ``shifteval build`` re-runs a chapter with these (a cache hit when nothing else changed), so a
    student's ``shifteval run CH -p k=v`` is what the next build shows.

    Parameters
    ----------
    notebook_path : pathlib.Path
        An executed notebook ``<chapter>.ipynb``.

    Returns
    -------
    (str, dict) or None
        The parameter set (a name or a YAML path, as it was given) and the ``-p`` overrides; ``None``
        when the notebook is missing or unreadable.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     nb = Path(tmp) / "tiny.ipynb"
    ...     meta = {"shifteval": {"parameter_set": "default", "params": "default", "overrides": {"n": 2}}}
    ...     _ = nb.write_text(json.dumps({"metadata": meta}))
    ...     last_run(nb), last_run(Path(tmp) / "missing.ipynb")
    (('default', {'n': 2}), None)
    """
    try:
        meta = json.loads(notebook_path.read_text(encoding="utf-8"))["metadata"]["shifteval"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    params = meta.get("params") or meta.get("parameter_set") or "default"
    overrides = meta.get("overrides") or {}
    return str(params), dict(overrides)


def student_notice(chapter: str, param_set: str, overrides: dict[str, Any]) -> str | None:
    r"""The note at the top of a page that shows a run other than the book's default, or None.

    Parameters
    ----------
    chapter : str
        The chapter's name.
    param_set : str
        The parameter set's name.
    overrides : dict
        The ``-p`` overrides of the run.

    Returns
    -------
    str or None
        A MyST admonition saying which parameters the page shows and the command that goes back to the
        defaults; ``None`` for a default run without overrides (and for the real-data edition, whose
        pages say what data they use).

    Examples
    --------
    >>> student_notice("mlm", "default", {}) is None
    True
    >>> print(student_notice("mlm", "default", {"epochs": 2}).splitlines()[2])
    This page shows a run with the parameter set `default` and `-p epochs=2`, not the book's defaults.
    """
    if param_set == "real" or (param_set == "default" and not overrides):
        return None
    changes = ", ".join(f"`-p {k}={json.dumps(v)}`" for k, v in overrides.items())
    shown = f"the parameter set `{param_set}`" + (f" and {changes}" if changes else "")
    return "\n".join([
        ":::{admonition} Not the default parameters",
        ":class: important shifteval-not-default",
        f"This page shows a run with {shown}, not the book's defaults.",
        "`shifteval build` keeps each chapter's last run; to go back to the defaults run",
        f"`shifteval build --only {chapter} --reset`.",
        ":::",
    ])  # fmt: skip


def lab_paragraph(chapter: str) -> str:
    """The paragraph that points a chapter's page to its autograded lab (:mod:`shifteval.labs`).

    Parameters
    ----------
    chapter : str
        The chapter's name (its lab has the same name).

    Returns
    -------
    str
        Markdown with the ``{lab}`` role of :mod:`shifteval.book.sphinxext`.

    Examples
    --------
    >>> "{lab}`mlm`" in lab_paragraph("mlm")
    True
    """
    return (
        f"**Lab.** A notebook in which you implement a piece of this chapter's method and check it on the "
        f"embedded world, graded by Otter-Grader's public and hidden tests: {{lab}}`{chapter}`. "
        "The page *Teaching with this book* says how to hand labs out and grade them."
    )


def run_it_yourself(chapter: Chapter, parameters: dict[str, Any]) -> str:
    r"""The box that ends every chapter page: the commands that re-run it, and its parameters explained.

    Parameters
    ----------
    chapter : Chapter
        The executed chapter (its ``parameters`` cell gives the names, defaults and meanings).
    parameters : dict
        The values this run used.

    Returns
    -------
    str
        A MyST admonition: ``shifteval run`` and ``shifteval build --only`` as the README installs them,
        then one table row per parameter (this run's value, the default, the meaning).

    Examples
    --------
    >>> from shifteval.book.project import Chapter
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     chapter = Chapter("tiny", Path(tmp))
    ...     (chapter.root / "notebooks").mkdir()
    ...     _ = chapter.source.write_text('# %% tags=["parameters"]\nn = 1  # how many\n')
    ...     box = run_it_yourself(chapter, {"n": 2})
    >>> box.splitlines()[0], box.splitlines()[-2]
    (':::{admonition} Run it yourself', '| `n` | `2` | `1` | how many |')
    """
    from .project import parameter_docs

    docs = parameter_docs(chapter.source.read_text(encoding="utf-8"))
    numbers = [d for d in docs if type(d["default"]) in (int, float) and d["name"] != "seed"]
    change = f" -p {numbers[0]['name']}={json.dumps(numbers[0]['default'])}" if numbers else ""

    def cell(value: Any) -> str:
        return "`" + json.dumps(value).replace("|", "\\|") + "`"

    rows = [
        f"| `{d['name']}` | {cell(parameters.get(d['name'], d['default']))} | {cell(d['default'])} | "
        f"{d['description']} |"
        for d in docs
    ]
    return "\n".join([
        ":::{admonition} Run it yourself",
        ":class: tip run-it-yourself",
        "From the project folder (`make book` installs the environment into `.venv` the first time):",
        "",
        "```bash",
        f".venv/bin/shifteval run {chapter.name}{change}    # this chapter with one value changed",
        f".venv/bin/shifteval build --only {chapter.name}{change}    # the same, and the book rebuilt",
        f".venv/bin/shifteval list {chapter.name}    # its parameters",
        "```",
        "",
        "| parameter | this run | default | meaning |",
        "|---|---|---|---|",
        *rows,
        ":::",
    ])  # fmt: skip


def provenance_box(
    chapter: Chapter,
    param_set: str,
    overrides: dict[str, Any],
    provenance: dict[str, Any],
    figures: dict[str, dict[str, Any]] | None = None,
    description: str = "",
) -> str:
    r"""The provenance admonition that closes every executed chapter, collapsed (MyST markdown).

    ``figures`` (from ``results.json``) maps each glued figure to the library functions that drew it
    and the cell that glued it; they are listed with links into the library reference.

    Parameters
    ----------
    chapter : Chapter
        The executed chapter (its source is hashed).
    param_set : str
        Name of the parameter set it ran with.
    overrides : dict
        Parameter overrides, shown in the re-run command.
    provenance : dict
        The provenance recorded in the notebook's metadata; ``library_version`` and ``duration_s`` are
        required, ``git_commit`` and ``note`` optional.
    figures : dict, optional
        Figure or table name to ``{"functions": [...], "cell": n}``.
    description : str
        The parameter set's description, shown for sets other than ``default``.

    Returns
    -------
    str
        The admonition, one line per item.

    Examples
    --------
    >>> from shifteval.book.project import Chapter
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     chapter = Chapter("tiny", Path(tmp))
    ...     (chapter.root / "notebooks").mkdir()
    ...     _ = chapter.source.write_text("n = 1\n")
    ...     box = provenance_box(chapter, "smoke", {"n": 2}, {"library_version": "1.0", "duration_s": 1.5})
    >>> lines = box.splitlines()
    >>> lines[0], lines[-1], [line for line in lines if "Re-run" in line]
    (':::{admonition} Provenance of this page', ':::', ["- **Re-run it:** `shifteval run tiny --params smoke -p 'n=2'`"])
    """
    source_hash = hashlib.sha256(chapter.source.read_bytes()).hexdigest()[:12]
    command = f"shifteval run {chapter.name} --params {param_set}"
    command += "".join(f" -p '{k}={json.dumps(v)}'" for k, v in overrides.items())
    commit = provenance.get("git_commit") or "not a git checkout"
    about = (
        f"- **About this parameter set:** {description}" if description and param_set != "default" else None
    )
    note = f"- **Note:** {provenance['note']}" if provenance.get("note") else None
    return "\n".join(line for line in [
        ":::{admonition} Provenance of this page",
        ":class: note dropdown",
        f"- **Parameter set:** `{param_set}`" + (f", with {len(overrides)} override(s)" if overrides else ""),
        f"- **Library:** shifteval {provenance['library_version']} (library hash `{library_hash()[:12]}`, "
        f"commit `{commit[:12]}`)",
        f"- **Chapter source:** `notebooks/{chapter.source.name}`, SHA-256 `{source_hash}`",
        f"- **Executed in:** {provenance['duration_s']} s"
        + (f" on {provenance['threads']} thread(s)" if provenance.get("threads") else ""),
        f"- **Re-run it:** `{command}`",
        f"- **Download:** {{download}}`the executed notebook <{chapter.name}.ipynb>` · "
        f"{{download}}`its jupytext source <../../notebooks/{chapter.source.name}>`",
        about,
        note,
        *_figure_lines(figures or {}),
        ":::",
    ] if line is not None)  # fmt: skip


def _figure_lines(figures: dict) -> list[str]:
    if not figures:
        return []
    lines = ["- **Figures and tables, and the library functions that drew them:**"]
    for name, trace in sorted(figures.items()):
        drawn = (
            ", ".join(f"{{py:func}}`{f}`" for f in trace.get("functions") or []) or "the chapter's own code"
        )
        lines.append(f"  - {name.replace('-', ' ')}: {drawn}")
    return lines
