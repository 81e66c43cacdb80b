"""Building the labs with Otter-Grader, and grading submissions offline.

A lab is a master notebook, ``notebooks/labs/<lab>.py`` (jupytext percent, in Otter Assign's format:
``# BEGIN QUESTION`` … raw cells, solutions between ``# BEGIN SOLUTION`` / ``# END SOLUTION``, public and
hidden tests), and a data writer in :mod:`shifteval.labs.data`. :func:`build_lab` makes, under
``_build/labs/<lab>/``:

- ``student/``: the notebook without solutions and hidden tests (its public tests travel in its metadata,
  for ``grader.check``), its data file ``<lab>-data.npz``, and ``requirements.txt`` (below: what the
  notebook needs to run);
- ``solution/``: the notebook with solutions, the data file and ``requirements.txt``;
- ``autograder/<lab>-autograder.zip``: Otter's bundle (public and hidden tests, the data file, Otter's
  configuration and ``environment.yml``) with two files added at its top, which also lie beside it:
  ``requirements.txt``, what grading installs (:func:`requirements`: numpy, pandas, matplotlib and
  Otter-Grader, pinned to this environment's versions; Otter itself writes them only into the bundle's
  ``environment.yml``), and ``lab.json``, the lab's questions in order with their points and whether each
  is graded by hand (:func:`lab_questions`).

``_build/labs/<lab>-student.zip`` and ``<lab>-solution.zip`` pack the two folders for handing out; the book
links them (the student edition the first, the full edition the second).

**The bundle grades anywhere.** A lab's notebook imports only numpy, pandas and matplotlib and reads its
data file with ``np.load(..., allow_pickle=False)``; no master mentions ``shifteval``, hidden tests
included. A fresh virtual environment holding nothing but the bundle's ``requirements.txt`` therefore grades
it (``otter run -a <lab>-autograder.zip <notebook>``), and a student who imports the library gains nothing:
the grader does not have it.

**Hidden tests carry their own reference.** Each hidden test reloads the data file and recomputes the
expected value in a few numpy lines, rather than comparing with numbers fixed at build time: the test reads
as the definition it checks, holds on whatever data the writer produced, and can add a random case the
public tests do not show. A question that builds on an earlier answer is tested against the student's own
earlier function or value, so that one mistake costs its own question only. Public tests are ``assert``
statements whose message says what was expected (a shape, a range, a small case checkable by hand) and
what came instead. Names a test defines start with an underscore: tests run in the notebook's namespace.

**Manually graded questions** (``manual: true``: the written interpretation, a plot) have no tests. Otter
leaves them out of its scores; ``lab.json`` lists them, and :mod:`shifteval.labs.manual` exports a
submission's answers to them for reading and marking (``shifteval grade LAB ... --manual DIR``).

Grading (:func:`grade`) runs ``otter run`` on a submission with the bundle: no Docker, no network, the
notebook executed in the environment that runs the command.

How to write a lab (the master's skeleton, the test styles, the data writer, the planted wrong answer the
tests check) is the section *Writing a lab* of the book's page on teaching (``book/teaching.md``).

Otter-Grader was chosen over nbgrader: its autograder is a single zip that grades one notebook with one
command and no course database, which is what "hand out a folder, collect notebooks, grade locally" needs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import jupytext
import yaml

from shifteval.book import project
from shifteval.book.sphinxext import copy_lab_zips

from .data import LABS, data_name, write

#: Folder of the labs' master notebooks, relative to the project root.
SOURCES = Path("notebooks") / "labs"

#: What grading a lab needs, whatever the lab: the packages a student notebook may import, and Otter-Grader
#: with its grading extra (the kernel and its client). :func:`requirements` pins them.
GRADING_PACKAGES = ("numpy", "pandas", "matplotlib", "otter-grader[grading]")


class LabError(Exception):
    """A lab could not be built or graded."""


def master_source(root: Path, lab: str) -> Path:
    """The master notebook of a lab (jupytext percent).

    Parameters
    ----------
    root : pathlib.Path
        The project root.
    lab : str
        One of :data:`~shifteval.labs.data.LABS`.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    LabError
        For an unknown lab or a missing master.

    Examples
    --------
    >>> master_source(project.find_root(), "mlm").relative_to(project.find_root()).as_posix()
    'notebooks/labs/mlm.py'
    """
    if lab not in LABS:
        raise LabError(f"unknown lab {lab!r}; labs: {', '.join(LABS)}")
    path = root / SOURCES / f"{lab}.py"
    if not path.is_file():
        raise LabError(f"{path}: the lab's master notebook is missing")
    return path


def _otter(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("otter")
    cmd = [str(exe) if exe.exists() else "otter", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)


def _zip_folder(folder: Path, target: Path) -> None:
    """Zip ``folder`` (as its own name) into ``target``, atomically, with fixed timestamps."""
    tmp = target.with_suffix(".zip.part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                info = zipfile.ZipInfo(str(Path(target.stem) / f.relative_to(folder)), (2020, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, f.read_bytes())
    os.replace(tmp, target)


def requirements(extra: tuple[str, ...] | list[str] = ()) -> list[str]:
    """The lines of an autograder bundle's ``requirements.txt``: each package pinned to its version here.

    Parameters
    ----------
    extra : sequence of str
        Distributions a lab needs beyond :data:`GRADING_PACKAGES` (its master's ``requirements`` list).

    Returns
    -------
    list of str
        ``name==version`` (with its extras, as in ``otter-grader[grading]==7.0.0``), in the order given.

    Raises
    ------
    LabError
        If a package is not installed in this environment (its version cannot be pinned).

    Examples
    --------
    >>> lines = requirements()
    >>> [line.split("==")[0] for line in lines]
    ['numpy', 'pandas', 'matplotlib', 'otter-grader[grading]']
    >>> lines[0] == f"numpy=={np.__version__}"
    True
    >>> requirements(["no-such-distribution-xyz"])
    Traceback (most recent call last):
    ...
    shifteval.labs.build.LabError: no-such-distribution-xyz: not installed here, so the bundle cannot pin its version
    """
    from importlib import metadata

    lines = []
    for spec in [*GRADING_PACKAGES, *extra]:
        name = spec.split("[")[0].strip()
        try:
            lines.append(f"{spec}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            raise LabError(f"{name}: not installed here, so the bundle cannot pin its version") from None
    return lines


def _cell_config(cell, marker: str) -> dict | None:
    """The YAML under a raw cell's first line ``marker`` (``# ASSIGNMENT CONFIG``, ``# BEGIN QUESTION``)."""
    lines = cell.source.splitlines()
    if cell.cell_type != "raw" or not lines or lines[0].strip() != marker:
        return None
    return yaml.safe_load("\n".join(lines[1:])) or {}


def _assignment_config(cell) -> dict | None:
    return _cell_config(cell, "# ASSIGNMENT CONFIG")


def master_questions(source: Path) -> list[dict]:
    """A master's questions in order: name, points, and whether each is graded by hand.

    Parameters
    ----------
    source : pathlib.Path
        The master notebook (jupytext percent).

    Returns
    -------
    list of dict
        ``{"name": str, "points": float, "manual": bool}`` per ``# BEGIN QUESTION`` cell.

    Raises
    ------
    LabError
        If a question has no name, a manual question no points, or two questions share a name.

    Examples
    --------
    >>> qs = master_questions(master_source(project.find_root(), "mlm"))
    >>> qs[0]["name"], all(q["points"] > 0 for q in qs), any(q["manual"] for q in qs)
    ('q1', True, True)
    """
    nb = jupytext.read(source, fmt="py:percent")
    found: list[dict] = []
    for cell in nb.cells:
        config = _cell_config(cell, "# BEGIN QUESTION")
        if config is None:
            continue
        name, points, manual = config.get("name"), config.get("points"), bool(config.get("manual", False))
        if not name:
            raise LabError(f"{source}: a question without a name")
        if any(q["name"] == name for q in found):
            raise LabError(f"{source}: two questions are named {name!r}")
        if not isinstance(points, (int, float)) or points <= 0:
            raise LabError(f"{source}: question {name!r} needs a positive number of points, got {points!r}")
        found.append({"name": str(name), "points": float(points), "manual": manual})
    return found


def _configure(nb, source: Path, lab: str) -> list[str]:
    """Point the master's assignment config at the bundle's requirements (Otter Assign's own keys).

    A master's config may list ``requirements``: distributions its lab needs beyond
    :data:`GRADING_PACKAGES`, by name; they are pinned here like the others. Returns the pinned lines.
    """
    configs = [(i, c) for i, c in enumerate(map(_assignment_config, nb.cells)) if c is not None]
    if len(configs) != 1:
        raise LabError(f"{source}: needs exactly one '# ASSIGNMENT CONFIG' raw cell, found {len(configs)}")
    index, config = configs[0]
    if config.get("name") != lab:
        raise LabError(f"{source}: the assignment config's name must be {lab!r}, got {config.get('name')!r}")
    reqs = requirements(list(config.get("requirements") or []))
    config.update(
        requirements="requirements.txt",  # written beside the notebook by build_lab
        overwrite_requirements=True,  # exactly these, not Otter's default list
        python_version=f"{sys.version_info.major}.{sys.version_info.minor}",  # environment.yml's Python
    )
    nb.cells[index].source = "# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False)
    return reqs


def lab_questions(bundle: str | Path) -> list[dict]:
    """The questions a lab's autograder bundle lists in its ``lab.json`` (:func:`master_questions`).

    Parameters
    ----------
    bundle : str or pathlib.Path
        A ``<lab>-autograder.zip`` built by :func:`build_lab`.

    Returns
    -------
    list of dict
        ``{"name", "points", "manual"}`` per question, in the lab's order; empty for a bundle without
        ``lab.json`` (one not built here: its manual questions are then unknown).

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with zipfile.ZipFile(Path(d) / "x.zip", "w") as z:
    ...         z.writestr("lab.json", '{"questions": [{"name": "q1", "points": 2.0, "manual": true}]}')
    ...     lab_questions(Path(d) / "x.zip")
    [{'name': 'q1', 'points': 2.0, 'manual': True}]
    """
    with zipfile.ZipFile(bundle) as z:
        if "lab.json" not in z.namelist():
            return []
        return json.loads(z.read("lab.json").decode("utf-8"))["questions"]


def build_lab(lab: str, out: Path, root: Path) -> Path:
    """Build one lab into ``out/<lab>`` (student, solution, autograder) and its two zips.

    Parameters
    ----------
    lab : str
        One of :data:`~shifteval.labs.data.LABS`.
    out : pathlib.Path
        The labs' folder (``_build/labs``).
    root : pathlib.Path
        The project root.

    Returns
    -------
    pathlib.Path
        ``out/<lab>``.

    Raises
    ------
    LabError
        For an unknown lab, a master whose configuration or questions are malformed, a requirement not
        installed here, or when Otter Assign fails (its output is in the message).

    Examples
    --------
    >>> build_lab("chapter-9", Path(tempfile.mkdtemp()), project.find_root())
    Traceback (most recent call last):
    ...
    shifteval.labs.build.LabError: unknown lab 'chapter-9'; labs: replication-world, linear-fits, selection-bias, matched-evaluation, ood-autoeval, mlm, your-replication
    """
    return _build(root, out, [lab])[lab]


def _build(root: Path, out: Path, labs: list[str], progress: bool = False) -> dict[str, Path]:
    """Build ``labs`` into ``out`` (see :func:`build_lab`), running Otter Assign once for all those not up to date."""
    out.mkdir(parents=True, exist_ok=True)
    sources = {lab: master_source(root, lab) for lab in labs}
    inputs = {lab: _inputs_digest(root, lab, sources[lab]) for lab in labs}
    stale = [lab for lab in labs if not _up_to_date(out, lab, inputs[lab])]
    with contextlib.ExitStack() as stack:
        works = {lab: Path(stack.enter_context(tempfile.TemporaryDirectory(dir=out))) for lab in stale}
        extras = {lab: _prepare(lab, sources[lab], works[lab], root) for lab in stale}
        _assign({works[lab] / f"{lab}.ipynb": sources[lab] for lab in stale})
        for lab in labs:
            if lab in works:
                _stage(lab, works[lab], out, extras[lab])
                (out / lab / ".inputs").write_text(inputs[lab], encoding="utf-8")
            if progress:
                print(f"[labs] {lab}: {out / lab}/{{student,solution,autograder}}", file=sys.stderr)
    return {lab: out / lab for lab in labs}


def _up_to_date(out: Path, lab: str, inputs: str) -> bool:
    stamp = out / lab / ".inputs"
    zips = [out / f"{lab}-{kind}.zip" for kind in ("student", "solution")]
    return stamp.is_file() and stamp.read_text(encoding="utf-8") == inputs and all(z.is_file() for z in zips)


def _prepare(lab: str, source: Path, work: Path, root: Path) -> dict[str, str]:
    """Write into ``work`` what Otter Assign reads: the master as a notebook, the data file, the requirements.

    Returns the files the autograder bundle gains afterwards (``requirements.txt``, ``lab.json``).
    """
    nb = jupytext.read(source, fmt="py:percent")
    reqs = _configure(nb, source, lab)
    questions = master_questions(source)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    write(lab, work, root)
    extras = {
        "requirements.txt": "\n".join(reqs) + "\n",
        "lab.json": json.dumps({"lab": lab, "questions": questions}, indent=2) + "\n",
    }
    (work / "requirements.txt").write_text(extras["requirements.txt"], encoding="utf-8")
    jupytext.write(nb, work / f"{lab}.ipynb", fmt="ipynb")
    return extras


#: Otter Assign on every notebook named on the command line, into ``dist`` beside each, in one process:
#: Otter's start-up (about 3 s) is most of an assignment's time (well under a second each). A process of
#: its own, because Otter Assign changes the working directory, which this process's threads share.
_ASSIGN = """
import pathlib, sys
import otter.assign
for nb in sys.argv[1:]:
    print("[assign]", nb, file=sys.stderr, flush=True)
    otter.assign.main(nb, str(pathlib.Path(nb).with_name("dist")), no_run_tests=True)
"""


def _assign(notebooks: dict[Path, Path]) -> None:
    """Run Otter Assign on each notebook (without running its tests); a failure names the lab's master."""
    if not notebooks:
        return
    proc = subprocess.run(
        [sys.executable, "-c", _ASSIGN, *map(str, notebooks)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        started = [line.split(" ", 1)[1] for line in proc.stderr.splitlines() if line.startswith("[assign] ")]
        source = notebooks.get(Path(started[-1]), "the labs' masters") if started else "the labs' masters"
        raise LabError(f"otter assign failed on {source}:\n{proc.stdout}\n{proc.stderr}")


def _stage(lab: str, work: Path, out: Path, extras: dict[str, str]) -> None:
    """Move Otter's output into ``out/<lab>`` (student, solution, autograder) and zip the two editions."""
    final = out / lab
    dist = work / "dist"
    staged = work / lab
    (staged / "autograder").mkdir(parents=True)
    (staged / "student").mkdir()
    (staged / "solution").mkdir()
    for kind, notebook in (("student", dist / "student"), ("solution", dist / "autograder")):
        shutil.copy2(notebook / f"{lab}.ipynb", staged / kind / f"{lab}.ipynb")
        shutil.copy2(work / data_name(lab), staged / kind / data_name(lab))
        shutil.copy2(work / "requirements.txt", staged / kind / "requirements.txt")  # what runs it
    _drop_answer_placeholders(staged / "solution" / f"{lab}.ipynb")
    (bundle,) = (dist / "autograder").glob(f"{lab}-autograder_*.zip")
    target = staged / "autograder" / f"{lab}-autograder.zip"
    shutil.copy2(bundle, target)
    with zipfile.ZipFile(target, "a") as z:
        for name, text in extras.items():
            z.writestr(name, text)
            (staged / "autograder" / name).write_text(text, encoding="utf-8")
    shutil.rmtree(final, ignore_errors=True)
    os.replace(staged, final)
    for kind in ("student", "solution"):
        _zip_folder(final / kind, out / f"{lab}-{kind}.zip")


def _drop_answer_placeholders(path: Path) -> None:
    """Remove, from a solution notebook, the empty answer cell Otter puts before a written solution."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = nb["cells"]
    keep = [
        cell
        for cell, after in zip(cells, [*cells[1:], None], strict=True)
        if not (
            cell["cell_type"] == "markdown"
            and "".join(cell["source"]).strip() == "_Type your answer here, replacing this text._"
            and after is not None
            and after["cell_type"] == "markdown"
        )
    ]
    if len(keep) != len(cells):
        nb["cells"] = keep
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _inputs_digest(root: Path, lab: str, source: Path) -> str:
    """What a built lab depends on: its master, the library, its chapter's parameter sets, Otter's version."""
    from shifteval.utils import cache

    digest = hashlib.sha256(source.read_bytes())
    for path in sorted((root / "notebooks").glob("*.py")) + sorted(
        (root / "notebooks" / "params").rglob("*.yaml")
    ):
        digest.update(path.read_bytes())
    extra = {
        "library": cache.source_digest(["shifteval"]),
        "packages": cache.package_versions([p.split("[")[0] for p in GRADING_PACKAGES]),
    }
    digest.update(json.dumps(extra, sort_keys=True).encode())
    return digest.hexdigest()


def build_labs(root: str | Path | None = None, out: str | Path | None = None,
               labs: list[str] | None = None, progress: bool = True) -> Path:  # fmt: skip
    """Build every lab (or ``labs``) into ``out`` (default ``<root>/_build/labs``).

    Parameters
    ----------
    root : str or pathlib.Path, optional
        The project root (found from the working directory when None).
    out : str or pathlib.Path, optional
        The labs' folder.
    labs : list of str, optional
        Which labs; all by default.
    progress : bool
        Print a line per lab.

    Returns
    -------
    pathlib.Path
        The labs' folder.

    Raises
    ------
    LabError
        For an unknown lab, or when Otter Assign fails.

    Examples
    --------
    Every name is checked before anything is built:

    >>> build_labs(labs=["mlm", "mlms"])
    Traceback (most recent call last):
    ...
    shifteval.labs.build.LabError: unknown lab 'mlms'; labs: replication-world, linear-fits, selection-bias, matched-evaluation, ood-autoeval, mlm, your-replication
    """
    root = project.find_root(root)
    out = Path(out) if out is not None else root / "_build" / "labs"
    names = list(LABS if labs is None else labs)
    for name in names:
        master_source(root, name)  # every name checked before anything is built
    _build(root, out, names, progress)
    for edition, kind in (("html", "solution"), ("student/html", "student"), ("real/html", "solution")):
        html = root / "_build" / edition
        if out.resolve() == (root / "_build" / "labs").resolve() and (html / "index.html").is_file():
            copy_lab_zips(out, html, kind)  # the pages of a built edition link these zips
    return out


def grade(
    autograder: str | Path, submission: str | Path, strict: bool = False
) -> dict[str, tuple[float, float]]:
    """Grade one submitted notebook with a lab's autograder bundle (``otter run``: local, no Docker).

    Otter executes the notebook ignoring errors, so that a student's failing cell costs only the questions
    that need it. ``strict`` grades without ignoring them (``otter run --debug``): for a lab's own solution,
    whose solution code also asserts the statements of its model answers on the run (a false one must fail).

    Parameters
    ----------
    autograder : str or pathlib.Path
        The lab's ``<lab>-autograder.zip``.
    submission : str or pathlib.Path
        The student's notebook (``.ipynb``).
    strict : bool
        Fail (:class:`LabError`) on the first cell that raises, instead of grading on.

    Returns
    -------
    dict
        Question -> (score, points) for every autograded question, public and hidden tests together.
        Manually graded questions have no tests and are not in it (:func:`lab_questions` lists them).

    Raises
    ------
    LabError
        If a file is missing or Otter fails before grading; with ``strict``, if a cell raises.

    Examples
    --------
    >>> grade("_build/labs/mlm/autograder/no-such.zip", "mlm.ipynb")
    Traceback (most recent call last):
    ...
    shifteval.labs.build.LabError: _build/labs/mlm/autograder/no-such.zip: no such autograder bundle (.zip)
    """
    autograder, submission = Path(autograder), Path(submission)
    for path, what in ((autograder, "autograder bundle (.zip)"), (submission, "submitted notebook (.ipynb)")):
        if not path.is_file():
            raise LabError(f"{path}: no such {what}")
    with tempfile.TemporaryDirectory() as tmp:
        nb = Path(tmp) / submission.name
        shutil.copy2(submission, nb)
        flags = ["--debug"] if strict else []
        proc = _otter(
            "run", "-a", str(autograder.resolve()), "-o", tmp, "--no-logo", *flags, nb.name, cwd=Path(tmp)
        )
        results = Path(tmp) / "results.json"
        if proc.returncode != 0 or not results.is_file():
            raise LabError(f"otter run failed on {submission}:\n{proc.stdout}\n{proc.stderr}")
        tests = json.loads(results.read_text(encoding="utf-8"))["tests"]
    return {t["name"]: (float(t["score"]), float(t["max_score"])) for t in tests if "max_score" in t}
