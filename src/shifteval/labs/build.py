"""Building the labs with Otter-Grader, and grading submissions offline.

Each lab's master notebook (``notebooks/labs/<lab>.py``, jupytext percent, in Otter Assign's format:
``# BEGIN QUESTION`` … raw cells, solutions between ``# BEGIN SOLUTION`` / ``# END SOLUTION``, public and
hidden tests) becomes, under ``_build/labs/<lab>/``:

- ``student/``: the notebook without solutions, its data file, and ``tests/`` (the public tests that
  ``grader.check`` runs in the notebook);
- ``solution/``: the notebook with solutions and its data file;
- ``autograder/<lab>-autograder.zip``: public and hidden tests, the data file, and Otter's configuration.

``_build/labs/<lab>-student.zip`` and ``<lab>-solution.zip`` pack the two folders for handing out; the
book links them (the student edition the first, the full edition the second).

Grading (:func:`grade`) runs ``otter run`` on a submission with the autograder bundle: no Docker, no
network, the student's notebook executed in this environment.

Otter-Grader was chosen over nbgrader: its autograder is a single zip that grades one notebook with one
command and no course database, which is what "hand out a folder, collect notebooks, grade locally" needs.
"""

from __future__ import annotations

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

from shifteval.book import project
from shifteval.book.sphinxext import copy_lab_zips

from .data import LABS, data_name, write

#: Folder of the labs' master notebooks, relative to the project root.
SOURCES = Path("notebooks") / "labs"


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
        If Otter Assign fails (its output is in the message).

    Examples
    --------
    >>> build_lab("chapter-9", Path(tempfile.mkdtemp()), project.find_root())
    Traceback (most recent call last):
    ...
    shifteval.labs.build.LabError: unknown lab 'chapter-9'; labs: replication-world, linear-fits, selection-bias, matched-evaluation, ood-autoeval, mlm, your-replication
    """
    source = master_source(root, lab)
    out.mkdir(parents=True, exist_ok=True)
    final = out / lab
    stamp = final / ".inputs"
    inputs = _inputs_digest(root, lab, source)
    zips = [out / f"{lab}-{kind}.zip" for kind in ("student", "solution")]
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == inputs and all(z.is_file() for z in zips):
        return final
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        work = Path(tmp)
        write(lab, work, root)
        nb = jupytext.read(source, fmt="py:percent")
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        jupytext.write(nb, work / f"{lab}.ipynb", fmt="ipynb")
        proc = _otter("assign", "--no-run-tests", f"{lab}.ipynb", "dist", cwd=work)
        if proc.returncode != 0:
            raise LabError(f"otter assign failed on {source}:\n{proc.stdout}\n{proc.stderr}")
        dist = work / "dist"
        staged = work / lab
        (staged / "autograder").mkdir(parents=True)
        shutil.copytree(dist / "student", staged / "student")
        (staged / "solution").mkdir()
        shutil.copy2(dist / "autograder" / f"{lab}.ipynb", staged / "solution" / f"{lab}.ipynb")
        shutil.copy2(work / data_name(lab), staged / "solution" / data_name(lab))
        (bundle,) = (dist / "autograder").glob(f"{lab}-autograder_*.zip")
        shutil.copy2(bundle, staged / "autograder" / f"{lab}-autograder.zip")
        shutil.rmtree(final, ignore_errors=True)
        os.replace(staged, final)
    for kind in ("student", "solution"):
        _zip_folder(final / kind, out / f"{lab}-{kind}.zip")
    stamp.write_text(inputs, encoding="utf-8")
    return final


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
        "packages": cache.package_versions(["otter-grader"]),
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
    for name in names:
        folder = build_lab(name, out, root)
        if progress:
            print(f"[labs] {name}: {folder}/{{student,solution,autograder}}", file=sys.stderr)
    for edition, kind in (("html", "solution"), ("student/html", "student"), ("real/html", "solution")):
        html = root / "_build" / edition
        if (html / "index.html").is_file():  # the pages of a built edition link these zips
            copy_lab_zips(out, html, kind)
    return out


def grade(autograder: str | Path, submission: str | Path) -> dict[str, tuple[float, float]]:
    """Grade one submitted notebook with a lab's autograder bundle (``otter run``: local, no Docker).

    Parameters
    ----------
    autograder : str or pathlib.Path
        The lab's ``<lab>-autograder.zip``.
    submission : str or pathlib.Path
        The student's notebook (``.ipynb``).

    Returns
    -------
    dict
        Question -> (score, points), public and hidden tests together.

    Raises
    ------
    LabError
        If a file is missing or Otter fails before grading.

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
        proc = _otter("run", "-a", str(autograder.resolve()), "-o", tmp, "--no-logo", nb.name, cwd=Path(tmp))
        results = Path(tmp) / "results.json"
        if proc.returncode != 0 or not results.is_file():
            raise LabError(f"otter run failed on {submission}:\n{proc.stdout}\n{proc.stderr}")
        tests = json.loads(results.read_text(encoding="utf-8"))["tests"]
    return {t["name"]: (float(t["score"]), float(t["max_score"])) for t in tests if "max_score" in t}
