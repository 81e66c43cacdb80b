"""A student's re-run is what the book shows: `shifteval run CH -p k=v`, then `shifteval build`."""

import html
import json
import re
import shutil

import pytest
from conftest import BOOK_PROJECTS, shifteval

# One chapter that computes on one thread, and Sphinx: one core (tests/background.py).
pytestmark = pytest.mark.one_core

CHAPTER = "matched-evaluation"


def _page(project):
    """The chapter page's text, tags removed (inline code is split into one element per word)."""
    page = (project / "_build" / "html" / "book" / "chapters" / f"{CHAPTER}.html").read_text(encoding="utf-8")
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _results(project):
    return json.loads((project / "book" / "chapters" / f"{CHAPTER}.results.json").read_text())


def _eps(project):
    """The tolerance this run used (the chapter's default unless set) and the run's overrides."""
    provenance = _results(project)["provenance"]
    return provenance["parameters"]["eps"], provenance["overrides"]


@pytest.mark.slow
@pytest.mark.heavy
def test_a_students_run_survives_the_next_build_and_the_page_says_how_to_go_back(built_book, tmp_path):
    built, out = built_book
    assert out.returncode == 0, out.stderr[-3000:]
    project = tmp_path / "project"
    shutil.copytree(built, project, ignore=shutil.ignore_patterns("_build"), symlinks=True)
    BOOK_PROJECTS.append(project.resolve())  # a copy of the book: its runs keep the book's thread counts

    # 1. the student runs one chapter with another value, then builds the book as the README says
    ran = shifteval("run", CHAPTER, "--params", "smoke", "-p", "eps=0.02", cwd=project)
    assert ran.returncode == 0, ran.stderr[-3000:]
    built_again = shifteval("build", cwd=project)
    assert built_again.returncode == 0, built_again.stderr[-3000:]
    assert "executing" not in built_again.stderr  # every chapter keeps its last run: nothing re-executes
    assert _eps(project) == (0.02, {"eps": 0.02})
    page = _page(project)
    assert "Not the default parameters" in page and "-p eps=0.02" in page
    assert f"shifteval build --only {CHAPTER} --reset" in page
    assert "Run it yourself" in page and "shifteval list matched-evaluation" in page

    # 2. run and rebuild in one step, on the set of the chapter's last run (smoke here)
    one_step = shifteval("build", "--only", CHAPTER, "-p", "eps=0.03", cwd=project)
    assert one_step.returncode == 0, one_step.stderr[-3000:]
    assert _eps(project) == (0.03, {"eps": 0.03}) and "-p eps=0.03" in _page(project)
    assert _results(project)["provenance"]["parameter_set"] == "smoke"

    # 3. asking for a parameter set drops the student's values
    back = shifteval("build", "--only", CHAPTER, "--params", "smoke", cwd=project)
    assert back.returncode == 0, back.stderr[-3000:]
    page = _page(project)
    assert _eps(project) == (0.005, {}) and "eps=0.03" not in page and "Not the default parameters" in page


def test_overrides_without_only_are_refused(project):
    out = shifteval("build", "-p", "eps=0.02", cwd=project)
    assert out.returncode == 1 and "need --only CHAPTER" in out.stderr
