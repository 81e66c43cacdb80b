"""Execute chapters and build the book.

One direction only (DESIGN.md): a parameter set and a jupytext source go in, papermill executes
the notebook in memory, and the executed notebook plus its ``<chapter>.results.json`` come out
in ``book/chapters/``; ``jupyter-book build`` then renders them without executing anything.

A chapter is re-executed only when something it depends on changed: its cache key hashes the
notebook source, the resolved parameters, every file of the ``shifteval`` package, the data
files its parameters name, and the versions of the key packages. The key is stored in the
executed notebook's metadata, beside the provenance readers see (parameters, library version,
git commit, duration).
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .. import __version__
from ..utils import cache
from ..utils.io import atomic_write_bytes, atomic_write_json
from .results import ENV_RESULTS, ENV_STRICT

CHAPTER_DIR = Path("book/chapters")
KEY_PACKAGES = (
    "numpy", "scipy", "pandas", "matplotlib", "seaborn", "scikit-learn", "torch", "timm",
    "papermill", "jupytext", "nbformat", "ipykernel",
)  # fmt: skip
RESERVED_PARAMETERS = ("results_path",)  # injected by the pipeline, not settable by users
DEFAULT_TIMEOUT = 1800  # seconds per cell unless a parameter set raises it


class PipelineError(Exception):
    """A problem with a chapter name, a parameter set or the project layout."""


class ChapterFailed(PipelineError):
    """A chapter raised while executing; the failed notebook is kept outside the book."""


def find_root(start=None) -> Path:
    """The project root: the nearest folder at or above ``start`` holding ``_toc.yml`` and ``notebooks/``."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file() and (folder / "notebooks").is_dir():
            return folder
    raise PipelineError(f"no shifteval project found at or above {here} (expected _toc.yml and notebooks/)")


def _toc_files(node) -> list[str]:
    files = []
    if isinstance(node, dict):
        if "file" in node:
            files.append(str(node["file"]))
        for value in node.values():
            if isinstance(value, (dict, list)):
                files.extend(_toc_files(value))
    elif isinstance(node, list):
        for item in node:
            files.extend(_toc_files(item))
    return files


@dataclass(frozen=True)
class Chapter:
    """A chapter: its jupytext source and its parameter sets."""

    name: str
    root: Path

    @property
    def source(self) -> Path:
        """The chapter's jupytext source, ``notebooks/<name>.py``."""
        return self.root / "notebooks" / f"{self.name}.py"

    @property
    def params_dir(self) -> Path:
        """The folder of its parameter sets, ``notebooks/params/<name>/``."""
        return self.root / "notebooks" / "params" / self.name

    def param_sets(self) -> list[str]:
        """Names of its parameter sets."""
        return sorted(p.stem for p in self.params_dir.glob("*.yaml"))


def chapters(root=None) -> list[Chapter]:
    """The chapters in ``_toc.yml`` order (entries under ``book/chapters/``)."""
    root = find_root(root)
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    prefix = CHAPTER_DIR.as_posix() + "/"
    names = [f[len(prefix) :].removesuffix(".ipynb") for f in _toc_files(toc) if f.startswith(prefix)]
    found = []
    for name in names:
        chapter = Chapter(name, root)
        if not chapter.source.is_file():
            raise PipelineError(f"_toc.yml lists chapter {name!r} but {chapter.source} does not exist")
        found.append(chapter)
    return found


def get_chapter(name: str, root=None) -> Chapter:
    """The chapter called ``name``, or a :class:`PipelineError` listing the valid names."""
    known = chapters(root)
    for chapter in known:
        if chapter.name == name:
            return chapter
    raise PipelineError(f"unknown chapter {name!r}; chapters: {', '.join(c.name for c in known)}")


@dataclass
class ParamSet:
    """A parameter set: ``notebooks/params/<chapter>/<name>.yaml``.

    The YAML file holds ``description`` (text), optionally ``timeout`` (seconds per cell),
    ``parameters`` (a mapping of the chapter's parameter names to values), ``data`` (the datasets of
    ``shifteval data list`` the set reads; string parameters refer to their folder as ``{data}/NAME``)
    and, for a ``real`` set that needs files only its user has (their own predictions),
    ``public_data: false`` — the real-data edition then shows the chapter on its default data and says so.
    """

    name: str
    path: Path | None
    description: str = ""
    timeout: int = DEFAULT_TIMEOUT
    parameters: dict = field(default_factory=dict)
    data: list = field(default_factory=list)
    public_data: bool = True


def load_param_set(chapter: Chapter, params: str = "default") -> ParamSet:
    """Read a chapter's parameter set by name (``default``, ``smoke``, ``real``) or from a file."""
    candidate = Path(params)
    if candidate.suffix in (".yaml", ".yml") or candidate.is_file():
        path = candidate
        if not path.is_file():
            raise PipelineError(f"parameter file {path} does not exist")
    else:
        path = chapter.params_dir / f"{params}.yaml"
        if not path.is_file():
            raise PipelineError(
                f"chapter {chapter.name!r} has no parameter set {params!r}; "
                f"available: {', '.join(chapter.param_sets()) or 'none'}"
            )
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise PipelineError(f"{path} is not valid YAML: {exc}") from exc
    unknown = set(data) - {"description", "timeout", "parameters", "data", "public_data"}
    if not isinstance(data, dict) or unknown:
        raise PipelineError(
            f"{path}: expected keys description, timeout, parameters, data, public_data; found {sorted(unknown)}"
        )
    if not isinstance(data.get("public_data", True), bool):
        raise PipelineError(f"{path}: 'public_data' must be true or false")
    datasets = data.get("data") or []
    if not isinstance(datasets, list) or not all(isinstance(d, str) for d in datasets):
        raise PipelineError(f"{path}: 'data' must be a list of dataset names (see `shifteval data list`)")
    parameters = data.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise PipelineError(f"{path}: 'parameters' must be a mapping")
    timeout = data.get("timeout", DEFAULT_TIMEOUT)
    if not isinstance(timeout, int) or timeout <= 0:
        raise PipelineError(f"{path}: 'timeout' must be a positive number of seconds")
    return ParamSet(
        path.stem, path, str(data.get("description", "")), timeout, parameters, datasets,
        data.get("public_data", True),
    )  # fmt: skip


def parse_overrides(pairs) -> dict:
    """``["n_boot=1000", "tables=[a, b]"]`` → ``{"n_boot": 1000, "tables": ["a", "b"]}`` (values parsed as YAML)."""
    out = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise PipelineError(f"parameter override {pair!r} must look like key=value")
        out[key.strip()] = yaml.safe_load(value) if value.strip() else None
    return out


def notebook_parameters(source_text: str) -> dict:
    """Names and default values assigned in the chapter's ``parameters`` cell."""
    import jupytext

    nb = jupytext.reads(source_text, fmt="py:percent")
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            tree = ast.parse(cell.source)
            names = {}
            for node in tree.body:
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            try:
                                names[target.id] = ast.literal_eval(node.value)
                            except ValueError:
                                names[target.id] = None
            return names
    raise PipelineError("the chapter has no cell tagged 'parameters'")


def expand_data(value, data_root):
    """Replace ``{data}`` in string parameter values (recursively) by the data folder.

    Examples
    --------
    >>> expand_data({"data_dir": "{data}/mnist", "n": 3}, "/srv/data")
    {'data_dir': '/srv/data/mnist', 'n': 3}
    """
    if isinstance(value, str):
        return value.replace("{data}", str(data_root))
    if isinstance(value, list):
        return [expand_data(v, data_root) for v in value]
    if isinstance(value, dict):
        return {k: expand_data(v, data_root) for k, v in value.items()}
    return value


def resolve_parameters(chapter: Chapter, param_set: ParamSet, overrides: dict, data_root="data") -> dict:
    """Parameter set plus overrides, checked against the chapter's parameters cell.

    ``{data}`` in string values becomes ``data_root`` (the folder ``shifteval data get`` fills).
    """
    declared = notebook_parameters(chapter.source.read_text(encoding="utf-8"))
    valid = sorted(k for k in declared if k not in RESERVED_PARAMETERS)
    merged = expand_data({**param_set.parameters, **overrides}, data_root)
    unknown = sorted(k for k in merged if k not in valid)
    if unknown:
        raise PipelineError(
            f"unknown parameter(s) {', '.join(unknown)} for chapter {chapter.name!r}; "
            f"valid names: {', '.join(valid)}"
        )
    for key, value in merged.items():
        problem = type_mismatch(declared[key], value)
        if problem:
            raise PipelineError(f"parameter {key!r} of chapter {chapter.name!r}: {problem}")
    return merged


_TYPE_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
               list: "a list", dict: "a mapping"}  # fmt: skip


def type_mismatch(default, value) -> str | None:
    """Why ``value`` cannot replace a parameter whose default is ``default`` (None when it can).

    The expected type is the default's: an integer parameter takes integers, a float parameter
    takes any number, lists and mappings take lists and mappings; a parameter whose default is
    ``None`` (or not a literal) takes anything, and ``None`` is accepted everywhere (meaning "unset").

    Examples
    --------
    >>> type_mismatch(100, "abc")
    "expected an integer (like its default 100), got the string 'abc'"
    >>> type_mismatch(0.5, 1) is None
    True
    """
    if default is None or value is None:
        return None
    expected = type(default)
    if expected not in _TYPE_NAMES:
        return None
    ok = isinstance(value, expected) and not (expected is not bool and isinstance(value, bool))
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    if ok:
        return None
    got = _TYPE_NAMES.get(type(value), type(value).__name__)
    got = got.replace("a ", "the ", 1).replace("an ", "the ", 1)
    return f"expected {_TYPE_NAMES[expected]} (like its default {default!r}), got {got} {value!r}"


def library_hash() -> str:
    """SHA-256 over every file of the installed ``shifteval`` package (sources and data)."""
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


def package_versions() -> dict:
    """Versions of the packages whose behaviour a chapter's numbers depend on."""
    return cache.package_versions(KEY_PACKAGES)


def cache_key(chapter: Chapter, parameters: dict) -> str:
    """Content hash of everything a chapter's output depends on (see module docstring)."""
    return cache.key(
        {"source": chapter.source.read_text(encoding="utf-8"), "parameters": parameters},
        modules=["shifteval"],  # a notebook may import anything of the library
        packages=KEY_PACKAGES,
        paths=_data_paths(parameters, chapter.root),
    )


def git_commit(root: Path) -> str | None:
    """``HEAD`` of the project's repository, suffixed ``-dirty`` when the tree has changes."""
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
    """The cache key recorded in an executed notebook, or None."""
    results = notebook_path.with_name(notebook_path.name.replace(".ipynb", ".results.json"))
    if not (notebook_path.is_file() and results.is_file()):
        return None
    try:
        meta = json.loads(notebook_path.read_text(encoding="utf-8"))["metadata"]
        return meta.get("shifteval", {}).get("cache_key")
    except (OSError, ValueError, KeyError):
        return None


@dataclass
class RunResult:
    """What :func:`run_chapter` did: executed or cached, where the outputs are, how long it took."""

    chapter: str
    status: str  # "executed" or "cached"
    notebook: Path
    results: Path
    duration: float


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_chapter(
    name: str,
    params: str = "default",
    overrides: dict | None = None,
    out=None,
    force: bool = False,
    root=None,
    progress: bool = True,
    data_root="data",
    note: str | None = None,
) -> RunResult:
    """Execute one chapter with papermill and publish its notebook and results.

    Parameters
    ----------
    name : str
        Chapter name, as listed by ``shifteval list``.
    params : str
        Parameter-set name (``default``, ``smoke``, ``real``) or a path to a YAML file.
    overrides : dict, optional
        Parameter values that replace those of the set (``-p key=value`` on the command line).
    out : path, optional
        Output folder; ``book/chapters`` of the project by default.
    force : bool
        Execute even when the cache says nothing changed.
    data_root : path
        The data folder ``{data}`` stands for in parameter values (relative to the project root).
    note : str, optional
        A sentence for the page's provenance box (the real-data edition explains a fallback with it).

    Raises
    ------
    PipelineError
        Unknown chapter, parameter set or parameter name -- before anything runs.
    ChapterFailed
        A cell raised; the message names the chapter, the cell and the exception, and the
        failed notebook is kept under ``_build/failed/`` (never in the book).
    """
    import jupytext
    import nbformat
    import papermill

    root = find_root(root)
    chapter = get_chapter(name, root)
    param_set = load_param_set(chapter, params)
    parameters = resolve_parameters(chapter, param_set, overrides or {}, data_root)
    out = Path(out) if out is not None else root / CHAPTER_DIR
    out = out if out.is_absolute() else Path.cwd() / out
    notebook_path = out / f"{name}.ipynb"
    results_path = out / f"{name}.results.json"
    key = cache_key(chapter, parameters)

    if not force and cached_key(notebook_path) == key:
        _log(f"[{name}] up to date (parameter set {param_set.name!r}); skipped")
        return RunResult(name, "cached", notebook_path, results_path, 0.0)

    strict = param_set.path == chapter.params_dir / "default.yaml" and not overrides
    nb = jupytext.read(chapter.source, fmt="py:percent")
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    _log(f"[{name}] executing with parameter set {param_set.name!r} ...")
    with _staging(root, name) as work:
        running_nb = work / f"{name}.ipynb"
        running_results = work / f"{name}.results.json"
        start = time.perf_counter()
        try:
            with _kernel_environment({ENV_RESULTS: str(running_results), ENV_STRICT: "1" if strict else "0"}):
                executed = papermill.execute_notebook(
                    nb,
                    str(running_nb),
                    parameters=parameters,
                    kernel_name="python3",
                    cwd=str(root),
                    progress_bar=progress,
                    execution_timeout=param_set.timeout,
                    report_mode=False,
                    # the kernel's own log (not cell output) only says that it talks to us over local TCP
                    extra_arguments=["--IPKernelApp.log_level=ERROR"],
                )
        except papermill.PapermillExecutionError as exc:
            failed_dir = root / "_build" / "failed"
            failed_dir.mkdir(parents=True, exist_ok=True)
            failed = failed_dir / f"{name}.ipynb"
            if running_nb.exists():
                os.replace(running_nb, failed)
            raise ChapterFailed(
                f"chapter {name!r} failed in cell {exc.cell_index} (execution count {exc.exec_count}): "
                f"{exc.ename}: {exc.evalue}\n"
                f"The failed notebook is kept for inspection at {failed}; the book was not rebuilt."
            ) from None
        duration = time.perf_counter() - start
        if not running_results.is_file():
            raise ChapterFailed(
                f"chapter {name!r} ran but did not record its results (results.Results().record(...))"
            )
        results = json.loads(running_results.read_text(encoding="utf-8"))
    false_claims = [c for c in results.get("claims", []) if not c.get("holds")]
    if strict and false_claims:  # a chapter that caught ClaimFailed still may not publish
        raise ChapterFailed(
            f"chapter {name!r}: claim(s) that do not hold in the default run: "
            + "; ".join(f"{c['id']}: {c['text']!r}" for c in false_claims)
        )
    provenance = {
        "chapter": name,
        "parameter_set": param_set.name,
        "parameters": parameters,
        "library_version": __version__,
        "cache_key": key,
        "git_commit": git_commit(root),
        "duration_s": round(duration, 1),
        "packages": package_versions(),
        "strict_claims": strict,
        **({"note": note} if note else {}),
    }
    executed.metadata["shifteval"] = provenance
    _strip_injected_internals(executed)
    executed.cells.insert(
        _after_title(executed),
        nbformat.v4.new_markdown_cell(
            provenance_box(
                chapter,
                param_set.name,
                overrides or {},
                provenance,
                results.get("figures"),
                " ".join(param_set.description.split()),
            )  # fmt: skip
        ),
    )
    results["provenance"] = {k: v for k, v in provenance.items() if k != "packages"}
    # Results first, notebook last: the notebook's key is what marks the pair complete. The lock
    # keeps two runs publishing into one folder from interleaving their pairs.
    with _publish_lock(out, name):
        atomic_write_json(results_path, results)
        atomic_write_bytes(notebook_path, scrub_local_paths(nbformat.writes(executed), root).encode("utf-8"))
    _log(f"[{name}] done in {duration:.1f} s -> {notebook_path}")
    return RunResult(name, "executed", notebook_path, results_path, duration)


@contextlib.contextmanager
def _staging(root: Path, name: str):
    """A private folder for one execution, removed afterwards (also those of killed runs)."""
    base = root / "_build" / ".running"
    base.mkdir(parents=True, exist_ok=True)
    for stale in base.glob("*-pid*"):  # left by a run that was killed: its process is gone
        pid = stale.name.rpartition("-pid")[2].partition(".")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f"{name}-pid{os.getpid()}.", dir=base))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def _kernel_environment(values: dict):
    """Set environment variables for the kernel papermill starts (it inherits ours)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _publish_lock(out: Path, name: str):
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f".{name}.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def scrub_local_paths(text: str, root: Path) -> str:
    """Replace this machine's paths in a published notebook's text by neutral names.

    Executed notebooks carry papermill's input and output paths in their metadata, and warnings in
    stderr name files of the Python environment; neither may reach a page or a download.
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


def _strip_injected_internals(nb) -> None:
    """Drop lines of papermill's injected-parameters cell that name pipeline internals (paths)."""
    for key in ("input_path", "output_path"):
        nb.metadata.get("papermill", {}).pop(key, None)
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            lines = cell.source.splitlines()
            cell.source = "\n".join(
                line for line in lines if line.split("=")[0].strip() not in RESERVED_PARAMETERS
            )


def _after_title(nb) -> int:
    """Index just after the first markdown cell (the chapter's title and introduction)."""
    return next((i + 1 for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), 0)


def provenance_box(
    chapter: Chapter,
    param_set: str,
    overrides: dict,
    provenance: dict,
    figures: dict | None = None,
    description: str = "",
) -> str:
    """The provenance admonition shown at the top of every executed chapter (MyST markdown).

    ``figures`` (from ``results.json``) maps each glued figure to the library functions that drew it
    and the cell that glued it; they are listed with links into the library reference.
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
        ":class: note",
        f"- **Parameter set:** `{param_set}`" + (f", with {len(overrides)} override(s)" if overrides else ""),
        f"- **Library:** shifteval {provenance['library_version']} (library hash `{library_hash()[:12]}`, "
        f"commit `{commit[:12]}`)",
        f"- **Chapter source:** `notebooks/{chapter.source.name}`, SHA-256 `{source_hash}`",
        f"- **Executed in:** {provenance['duration_s']} s",
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
        cell = f" (cell {trace['cell']})" if trace.get("cell") is not None else ""
        lines.append(f"  - `{name}`: {drawn}{cell}")
    return lines


def jupyter_book_command() -> list[str]:
    """How to call jupyter-book from this environment."""
    exe = Path(sys.executable).with_name("jupyter-book")
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("jupyter-book")
    if found is None:
        raise PipelineError("jupyter-book is not installed in this environment")
    return [found]


EDITIONS = ("full", "student")


REAL_EDITION_FILES = ("_config.yml", "_toc.yml", "book", "notebooks")


def build(
    params: str = "default",
    force: bool = False,
    only=None,
    root=None,
    progress: bool = True,
    edition: str = "full",
    data_root="data",
) -> Path:
    """Run every chapter (or ``only`` these) and build the HTML book into ``_build/html``.

    ``edition="student"`` builds the same book without the exercises' solutions (sphinx-exercise's
    ``hide_solutions``) into ``_build/student/html``. ``params="real"`` builds the **real-data
    edition** into ``_build/real/html``: every chapter runs its ``real`` parameter set (whose page says
    what real data it uses, or that none is public), from a separate copy of the book sources under
    ``_build/real/src`` so the default book's executed chapters are untouched; the datasets the sets
    name are fetched first with ``shifteval data get`` into ``data_root`` unless already there.

    Chapters run in ``_toc.yml`` order; the first failure stops the build before
    ``jupyter-book`` runs, so a failed chapter is never published. The book is built with
    warnings as errors (``-W -n --keep-going``).

    Returns
    -------
    pathlib.Path
        The book's ``index.html``.
    """
    root = find_root(root)
    if edition not in EDITIONS:
        raise PipelineError(f"unknown edition {edition!r}; editions: {', '.join(EDITIONS)}")
    names = [c.name for c in chapters(root)]
    selected = list(only) if only else names
    unknown = [n for n in selected if n not in names]
    if unknown:  # fail before anything runs
        raise PipelineError(f"unknown chapter(s) {', '.join(unknown)}; chapters: {', '.join(names)}")
    real = params == "real"
    if real and edition != "full":
        raise PipelineError("the real-data edition has no student variant; use --edition full")
    source = _real_edition_sources(root) if real else root
    chapter_dir = source / CHAPTER_DIR
    missing = [n for n in names if n not in selected and cached_key(chapter_dir / f"{n}.ipynb") is None]
    if missing:
        raise PipelineError(
            f"chapters {', '.join(missing)} have never been executed; run them first or drop --only"
        )
    data_root = Path(data_root) if Path(data_root).is_absolute() else root / data_root
    sets = {n: params for n in selected}
    notes = {}
    if real:
        for name in selected:
            real_set = load_param_set(get_chapter(name, root), "real")
            if not real_set.public_data:
                sets[name] = "default"
                notes[name] = (
                    "No public real data exists for this chapter, so the real-data edition shows it on the "
                    "embedded data (its default parameter set). To run it on your own files: "
                    + " ".join(real_set.description.split())
                )
        needed = sorted({d for n in selected if sets[n] == "real"
                         for d in load_param_set(get_chapter(n, root), "real").data})  # fmt: skip
        fetch_data(needed, data_root)
    for name in names:
        if name in selected:
            run_chapter(
                name, sets[name], force=force, root=root, progress=progress, data_root=data_root,
                out=chapter_dir if real else None, note=notes.get(name),
            )  # fmt: skip
    if real:
        return _jupyter_book(source, root / "_build" / "real", title_suffix="real-data edition")
    if edition == "student":
        return _jupyter_book(
            root, root / "_build" / "student", title_suffix="student edition", hide_solutions=True
        )
    return _jupyter_book(root, None)


def _real_edition_sources(root: Path) -> Path:
    """A copy of the book's sources (not its executed chapters) for the real-data edition."""
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


def fetch_data(names, data_root: Path) -> None:
    """Make sure each named dataset is in ``data_root/NAME``, verified (``shifteval data get``).

    ``$SHIFTEVAL_DATA_MIRROR`` (e.g. ``http://host/{name}``) is passed on as ``--mirror``.
    """
    if not names:
        return
    _log(f"[data] {', '.join(names)} into {data_root}")
    cmd = [sys.executable, "-m", "shifteval.book.cli", "data", "get", *names, "--root", str(data_root)]
    if os.environ.get("SHIFTEVAL_DATA_MIRROR"):
        cmd += ["--mirror", os.environ["SHIFTEVAL_DATA_MIRROR"]]
    proc = subprocess.run(cmd)
    if proc.returncode != 0:
        raise PipelineError(
            f"could not fetch {', '.join(names)} into {data_root} (exit {proc.returncode}); "
            "see the message above, or put the official files there yourself"
        )


def _jupyter_book(
    source: Path, out: Path | None, title_suffix: str = "", hide_solutions: bool = False
) -> Path:
    """Run ``jupyter-book build`` on ``source``; the HTML lands in ``out/html`` (``_build/html`` if None)."""
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
    _log("[book] " + " ".join(cmd[1:]))
    proc = subprocess.run(cmd, cwd=source)
    built = (work if work is not None else source) / "_build"
    if proc.returncode != 0:
        # Sphinx builds incrementally: left in place, a failed build's environment would let the next
        # build "succeed" without re-reading the pages that warned. Remove it, and the untrusted HTML.
        for stale in ("html", ".doctrees"):
            shutil.rmtree(built / stale, ignore_errors=True)
        raise PipelineError(f"jupyter-book build failed (exit {proc.returncode}); see the warnings above")
    if work is not None:
        final = out / "html"
        shutil.rmtree(final, ignore_errors=True)
        os.replace(built / "html", final)
    else:
        final = built / "html"
    index = final / "index.html"
    _log(f"[book] ready: {index}")
    return index
