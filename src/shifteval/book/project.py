"""The project layout: chapters, their parameter sets, and the checks on parameters.

A chapter is a jupytext source ``notebooks/<name>.py`` listed in ``_toc.yml``; its parameter sets are
YAML files in ``notebooks/params/<name>/``. Everything here runs before a kernel starts, so a wrong
chapter, parameter set, parameter name or type is refused before anything executes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CHAPTER_DIR = Path("book/chapters")
RESERVED_PARAMETERS = ("results_path",)  # injected by the pipeline, not settable by users
DEFAULT_TIMEOUT: int | None = None  # no limit: a cell that is working is not hung (a set may give one)


class PipelineError(Exception):
    """A problem with a chapter name, a parameter set or the project layout."""


class ChapterFailed(PipelineError):
    """A chapter raised while executing; the failed notebook is kept outside the book."""


def find_root(start: str | Path | None = None) -> Path:
    r"""The project root: the nearest folder at or above ``start`` holding ``_toc.yml`` and ``notebooks/``.

    Parameters
    ----------
    start : str or pathlib.Path, optional
        Where to start looking; the current directory by default.

    Returns
    -------
    pathlib.Path
        The project root, resolved.

    Raises
    ------
    PipelineError
        If no folder at or above ``start`` holds both.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     root = Path(tmp).resolve()
    ...     _ = (root / "_toc.yml").write_text("root: index\n")
    ...     (root / "notebooks" / "params").mkdir(parents=True)
    ...     find_root(root / "notebooks" / "params") == root
    True
    """
    from ..utils.cache import project_root

    root = project_root(start)
    if root is None:
        here = Path(start or Path.cwd()).resolve()
        raise PipelineError(
            f"no shifteval project found at or above {here} (expected _toc.yml and notebooks/)"
        )
    return root


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

    @property
    def threads(self) -> int | None:
        """The most threads the chapter computes on, where its source's header declares it, else None.

        A chapter that gains less from a second thread than the book gains from running two chapters side
        by side says so in its jupytext header (``shifteval: {threads: 1}``): it then computes on one thread
        on every machine, and the book build runs such chapters side by side, one per core
        (:func:`shifteval.book.pipeline.build`). Two one-thread chapters side by side take about as long as
        the longer alone; a second thread makes OOD-AutoEval 1.5× and the MLM 1.25× faster (2 cores, 2026-12).

        Raises
        ------
        PipelineError
            If the declared value is not a positive integer (the message names the source).
        """
        return self._declared("threads")

    @property
    def seconds(self) -> int | None:
        """About how long the chapter's default run takes cold on one thread, where its header declares it.

        An estimate (``shifteval: {seconds: 200}``), not a limit: the book build starts the chapters it runs
        side by side longest first, so that the longest does not start last
        (:func:`shifteval.book.pipeline.run_all`).

        Raises
        ------
        PipelineError
            If the declared value is not a positive integer (the message names the source).
        """
        return self._declared("seconds")

    @property
    def after(self) -> tuple[str, ...]:
        """The chapters this one starts after when the book runs them together, where its header names them.

        A chapter that reads what another's run builds (the zoo replication-world trains) says so in its
        header (``shifteval: {after: [replication-world]}``): the book build starts it once that chapter is
        done, so that it reads the zoo instead of waiting for it on a core; chapters naming none start at
        once, beside the first (:func:`shifteval.book.pipeline.run_all`). Run alone, a chapter builds what
        it lacks itself, so the order is about time, never about results.

        Raises
        ------
        PipelineError
            If the declared value is not a chapter name or a list of them (the message names the source).
        """
        declared = self._header().get("after", [])
        names = [declared] if isinstance(declared, str) else declared
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise PipelineError(
                f"{self.source}: the header's shifteval.after must be a chapter name or a list of them, "
                f"got {declared!r}"
            )
        return tuple(names)

    def _header(self) -> dict:
        import jupytext

        header = jupytext.read(self.source, fmt="py:percent").metadata.get("shifteval", {})
        if not isinstance(header, dict):
            raise PipelineError(f"{self.source}: the header's shifteval must be a mapping, got {header!r}")
        return header

    def _declared(self, key: str) -> int | None:
        declared = self._header().get(key)
        if declared is None:
            return None
        if isinstance(declared, bool) or not isinstance(declared, int) or declared < 1:
            raise PipelineError(
                f"{self.source}: the header's shifteval.{key} must be a positive integer, got {declared!r}"
            )
        return declared

    def param_sets(self) -> list[str]:
        """Names of its parameter sets."""
        return sorted(p.stem for p in self.params_dir.glob("*.yaml"))


def chapters(root: str | Path | None = None) -> list[Chapter]:
    """The chapters in ``_toc.yml`` order (entries under ``book/chapters/``).

    Parameters
    ----------
    root : str or pathlib.Path, optional
        A folder in the project (see :func:`find_root`); the current directory by default.

    Returns
    -------
    list of Chapter
        One per ``_toc.yml`` entry under ``book/chapters/``, in order.

    Raises
    ------
    PipelineError
        If there is no project, or ``_toc.yml`` lists a chapter whose source does not exist.
    """
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


def get_chapter(name: str, root: str | Path | None = None) -> Chapter:
    """The chapter called ``name``, or a :class:`PipelineError` listing the valid names.

    Parameters
    ----------
    name : str
        The chapter's name (its source is ``notebooks/<name>.py``).
    root : str or pathlib.Path, optional
        A folder in the project; the current directory by default.

    Returns
    -------
    Chapter
        The chapter.

    Raises
    ------
    PipelineError
        If no chapter of ``_toc.yml`` has that name (or there is no project).
    """
    known = chapters(root)
    for chapter in known:
        if chapter.name == name:
            return chapter
    raise PipelineError(f"unknown chapter {name!r}; chapters: {', '.join(c.name for c in known)}")


@dataclass
class ParamSet:
    """A parameter set: ``notebooks/params/<chapter>/<name>.yaml``.

    The YAML file holds ``description`` (text), optionally ``timeout`` (seconds per cell; none by default,
    since a working cell on a busy machine is not a hung one),
    ``parameters`` (a mapping of the chapter's parameter names to values), ``data`` (the datasets of
    ``shifteval data list`` the set reads; string parameters refer to their folder as ``{data}/NAME``)
    and, for a ``real`` set that needs files only its user has (their own predictions),
    ``public_data: false`` — the real-data edition then shows the chapter on its default data and says so.
    """

    name: str
    path: Path | None
    description: str = ""
    timeout: int | None = DEFAULT_TIMEOUT
    parameters: dict = field(default_factory=dict)
    data: list = field(default_factory=list)
    public_data: bool = True


def load_param_set(chapter: Chapter, params: str = "default") -> ParamSet:
    """Read a chapter's parameter set by name (``default``, ``smoke``, ``real``) or from a file.

    Parameters
    ----------
    chapter : Chapter
        The chapter whose ``notebooks/params/<name>/`` folder holds the named sets.
    params : str
        A set's name, or the path of a YAML file (any path ending in ``.yaml``/``.yml``, or an
        existing file).

    Returns
    -------
    ParamSet
        The set, its fields checked (see :class:`ParamSet`).

    Raises
    ------
    PipelineError
        If the set or file does not exist, is not valid YAML, has unknown keys, or a field has the
        wrong type (``data`` not a list of names, ``parameters`` not a mapping, ``timeout`` not a
        positive integer, ``public_data`` not a boolean).
    """
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
    if not isinstance(data, dict):
        raise PipelineError(f"{path}: expected a mapping with keys description, timeout, parameters, data, "
                            f"public_data; found a {type(data).__name__}")  # fmt: skip
    unknown = set(data) - {"description", "timeout", "parameters", "data", "public_data"}
    if unknown:
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
    if timeout is not None and (not isinstance(timeout, int) or timeout <= 0):
        raise PipelineError(f"{path}: 'timeout' must be a positive number of seconds (or absent: no limit)")
    return ParamSet(
        path.stem, path, str(data.get("description", "")), timeout, parameters, datasets,
        data.get("public_data", True),
    )  # fmt: skip


def parse_overrides(pairs: Iterable[str] | None) -> dict[str, Any]:
    """``["n_boot=1000", "tables=[a, b]"]`` → ``{"n_boot": 1000, "tables": ["a", "b"]}`` (values parsed as YAML).

    Parameters
    ----------
    pairs : iterable of str, optional
        ``key=value`` strings (``-p`` on the command line); an empty value means ``None``.

    Returns
    -------
    dict
        Parameter names to parsed values.

    Raises
    ------
    PipelineError
        If a pair has no ``=`` or an empty key.

    Examples
    --------
    >>> parse_overrides(["n_boot=1000", "tables=[a, b]", "note="])
    {'n_boot': 1000, 'tables': ['a', 'b'], 'note': None}
    """
    out = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise PipelineError(f"parameter override {pair!r} must look like key=value")
        out[key.strip()] = yaml.safe_load(value) if value.strip() else None
    return out


def parameter_docs(source_text: str) -> list[dict[str, Any]]:
    r"""Every parameter of a chapter as its ``parameters`` cell declares it: name, default, type, meaning.

    The cell is the one place a parameter is declared: ``name = default  # what it means``. A comment on
    the line(s) just above an assignment also counts, for a meaning too long for one line.

    Parameters
    ----------
    source_text : str
        The chapter's jupytext (``py:percent``) source.

    Returns
    -------
    list of dict
        ``{"name", "default", "type", "description"}`` in the cell's order; ``default`` is the literal
        value (``None`` when the expression is not a literal), ``type`` its Python type name and
        ``description`` the comment ("" when there is none).

    Raises
    ------
    PipelineError
        If no code cell is tagged ``parameters``.

    Examples
    --------
    >>> src = '# %% tags=["parameters"]\n# a long meaning\nn = 3\neps = 0.1  # tolerance\n'
    >>> [(d["name"], d["default"], d["type"], d["description"]) for d in parameter_docs(src)]
    [('n', 3, 'int', 'a long meaning'), ('eps', 0.1, 'float', 'tolerance')]
    """
    import io
    import tokenize

    cell = _parameters_cell(source_text)
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(cell).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
    lines = cell.splitlines()
    docs = []
    for node in ast.parse(cell).body:
        assignment = _assignment(node)
        if assignment is None:
            continue
        name, value = assignment
        try:
            default = ast.literal_eval(value)
        except ValueError:
            default = None
        text = comments.get(node.end_lineno or node.lineno) or comments.get(node.lineno, "")
        if not text:  # the comment lines right above the assignment
            above: list[str] = []
            row = node.lineno - 1
            while row >= 1 and lines[row - 1].lstrip().startswith("#"):
                above.insert(0, comments.get(row, ""))
                row -= 1
            text = " ".join(a for a in above if a)
        accepted = _annotated_types(node)
        docs.append(
            {
                "name": name,
                "default": default,
                "type": " or ".join(a.__name__ for a in accepted) if accepted else _type_name(default),
                "description": text,
            }
        )
    return docs


def _type_name(value: Any) -> str:
    return "optional" if value is None else type(value).__name__


def _assignment(node: ast.stmt) -> tuple[str, ast.expr] | None:
    """The name and value a parameters-cell statement assigns (``n = 3``, ``n: int | list = 3``), else None."""
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id, node.value
    return None


def _annotated_types(node: ast.stmt) -> tuple[type, ...]:
    """The types an annotated parameter declares (``int | list`` → ``(int, list)``); () when none."""
    if not isinstance(node, ast.AnnAssign):
        return ()
    named = {n.id for n in ast.walk(node.annotation) if isinstance(n, ast.Name)}
    return tuple(t for t in _TYPE_NAMES if t.__name__ in named)


def parameter_types(source_text: str) -> dict[str, tuple[type, ...]]:
    r"""The types each annotated parameter of the chapter's ``parameters`` cell accepts.

    A parameter that may take more than one form declares them with an annotation, e.g.
    ``annotators: int | list = 40`` (a number, or a ``[lo, hi]`` range); a plain assignment
    accepts its default's type (see :func:`type_mismatch`).

    Parameters
    ----------
    source_text : str
        The chapter's jupytext (``py:percent``) source.

    Returns
    -------
    dict
        Each annotated parameter's accepted types; parameters without an annotation are left out.

    Raises
    ------
    PipelineError
        If no code cell is tagged ``parameters``.

    Examples
    --------
    >>> parameter_types('# %% tags=["parameters"]\nn: int | list = 3\nname = "x"\n')
    {'n': (<class 'int'>, <class 'list'>)}
    """
    tree = ast.parse(_parameters_cell(source_text))
    return {
        assigned[0]: types
        for node in tree.body
        if (assigned := _assignment(node)) and (types := _annotated_types(node))
    }


def _parameters_cell(source_text: str) -> str:
    """The source of the chapter's first code cell tagged ``parameters``."""
    import jupytext

    nb = jupytext.reads(source_text, fmt="py:percent")
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            return cell.source
    raise PipelineError("the chapter has no cell tagged 'parameters'")


def notebook_parameters(source_text: str) -> dict[str, Any]:
    r"""Names and default values assigned in the chapter's ``parameters`` cell.

    Parameters
    ----------
    source_text : str
        The chapter's jupytext (``py:percent``) source.

    Returns
    -------
    dict
        Each name assigned in the first cell tagged ``parameters``, with its value when that is a
        Python literal and ``None`` otherwise.

    Raises
    ------
    PipelineError
        If no code cell is tagged ``parameters``.

    Examples
    --------
    >>> notebook_parameters('# %% tags=["parameters"]\nn = 3\nname = "x"\nrng = object()\n')
    {'n': 3, 'name': 'x', 'rng': None}
    """
    names: dict[str, Any] = {}
    for node in ast.parse(_parameters_cell(source_text)).body:
        if isinstance(node, ast.Assign):
            targets, expression = [t.id for t in node.targets if isinstance(t, ast.Name)], node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            targets, expression = [node.target.id], node.value
        else:
            continue
        try:
            value = ast.literal_eval(expression)
        except ValueError:
            value = None
        names.update(dict.fromkeys(targets, value))
    return names


def expand_data(value: Any, data_root: str | Path) -> Any:
    """Replace ``{data}`` in string parameter values (recursively) by the data folder.

    Parameters
    ----------
    value : object
        A parameter value: strings are expanded, lists and dicts recursively, anything else is kept.
    data_root : str or pathlib.Path
        The data folder ``{data}`` stands for.

    Returns
    -------
    object
        ``value`` with ``{data}`` replaced (a new list or dict where ``value`` is one).

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


def resolve_parameters(
    chapter: Chapter, param_set: ParamSet, overrides: dict[str, Any], data_root: str | Path = "data"
) -> dict[str, Any]:
    r"""Parameter set plus overrides, checked against the chapter's parameters cell.

    ``{data}`` in string values becomes ``data_root`` (the folder ``shifteval data get`` fills).

    Parameters
    ----------
    chapter : Chapter
        The chapter, whose ``parameters`` cell declares the valid names and their types.
    param_set : ParamSet
        The parameter set (see :func:`load_param_set`).
    overrides : dict
        Values that replace the set's (see :func:`parse_overrides`).
    data_root : str or pathlib.Path
        The data folder ``{data}`` stands for.

    Returns
    -------
    dict
        The merged parameters, ``{data}`` expanded.

    Raises
    ------
    PipelineError
        If a name is not declared by the chapter (or is reserved, like ``results_path``), or a value's
        type does not match its default's (see :func:`type_mismatch`).

    Examples
    --------
    >>> tmp = tempfile.TemporaryDirectory()
    >>> root = Path(tmp.name)
    >>> _ = (root / "_toc.yml").write_text("root: index\nchapters:\n- file: book/chapters/tiny.ipynb\n")
    >>> (root / "notebooks" / "params" / "tiny").mkdir(parents=True)
    >>> _ = (root / "notebooks" / "tiny.py").write_text('# %% tags=["parameters"]\nn = 3\ndata_dir = ""\n')
    >>> _ = (root / "notebooks/params/tiny/default.yaml").write_text("timeout: 60\nparameters: {n: 5}\n")
    >>> chapter = get_chapter("tiny", root)
    >>> [c.name for c in chapters(root)], chapter.param_sets(), load_param_set(chapter).timeout
    (['tiny'], ['default'], 60)
    >>> resolve_parameters(chapter, load_param_set(chapter), {"data_dir": "{data}/mnist"}, "/srv")
    {'n': 5, 'data_dir': '/srv/mnist'}
    >>> resolve_parameters(chapter, load_param_set(chapter), {"n": "many"})
    Traceback (most recent call last):
    ...
    shifteval.book.project.PipelineError: parameter 'n' of chapter 'tiny': expected an integer (like its default 3), got the string 'many'
    >>> tmp.cleanup()
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
    accepted = parameter_types(chapter.source.read_text(encoding="utf-8"))
    for key, value in merged.items():
        problem = type_mismatch(declared[key], value, accepted.get(key))
        if problem:
            raise PipelineError(f"parameter {key!r} of chapter {chapter.name!r}: {problem}")
    return merged


_TYPE_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
               list: "a list", dict: "a mapping"}  # fmt: skip


def type_mismatch(default: Any, value: Any, accepted: tuple[type, ...] | None = None) -> str | None:
    """Why ``value`` cannot replace a parameter whose default is ``default`` (None when it can).

    The expected type is the default's, or each of ``accepted`` where the parameter declares them
    (see :func:`parameter_types`): an integer parameter takes integers, a float parameter
    takes any number, lists and mappings take lists and mappings; a parameter whose default is
    ``None`` (or not a literal) takes anything, and ``None`` is accepted everywhere (meaning "unset").

    Parameters
    ----------
    default : object
        The parameter's default in the chapter's ``parameters`` cell.
    value : object
        The proposed value.
    accepted : tuple of type, optional
        The types an annotated parameter declares (``annotators: int | list = 40``).

    Returns
    -------
    str or None
        The reason, or ``None`` when ``value`` is acceptable.

    Examples
    --------
    >>> type_mismatch(100, "abc")
    "expected an integer (like its default 100), got the string 'abc'"
    >>> type_mismatch(0.5, 1) is None
    True
    >>> type_mismatch(40, [32, 48], (int, list)) is None
    True
    >>> type_mismatch(40, "many", (int, list))
    "expected an integer or a list (like its default 40), got the string 'many'"
    """
    if default is None or value is None:
        return None
    expected = tuple(accepted) if accepted else (type(default),)
    if not all(e in _TYPE_NAMES for e in expected):
        return None
    if any(_is_a(value, e) for e in expected):
        return None
    got = _TYPE_NAMES.get(type(value), type(value).__name__)
    got = got.replace("a ", "the ", 1).replace("an ", "the ", 1)
    wanted = " or ".join(_TYPE_NAMES[e] for e in expected)
    return f"expected {wanted} (like its default {default!r}), got {got} {value!r}"


def _is_a(value: Any, expected: type) -> bool:
    """Whether ``value`` is of the parameter type ``expected`` (a bool is no number; an int is a float)."""
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return True
    return isinstance(value, expected) and not (expected is not bool and isinstance(value, bool))
