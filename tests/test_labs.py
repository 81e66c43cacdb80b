"""The labs: built by `shifteval labs`, graded offline by Otter; full marks, zero, and one wrong answer each."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import shifteval

from shifteval.labs import LABS, LabError, grade
from shifteval.labs.build import master_source

ROOT = Path(__file__).resolve().parents[1]

#: One plausible wrong answer per lab: (question, text in the solution, its replacement).
WRONG = {
    "replication-world": (
        "q3",
        "np.argsort(-freq[members]",
        "np.argsort(freq[members]",
    ),  # the least selected
    "linear-fits": ("q1", "stats.beta.ppf(alpha / 2,", "stats.beta.ppf(alpha,"),  # alpha not halved
    "selection-bias": ("q2", "p1[keep]) / p1[keep].sum())", "1 / keep.sum()))"),  # unweighted over levels
    "matched-evaluation": ("q3", "unused[s] = False", "pass"),  # a source image matched more than once
    "ood-autoeval": ("q1", "return -T * logsumexp", "return T * logsumexp"),  # wrong sign
    "mlm": ("q1", "probs[right & (labels == k)]", "probs[labels == k]"),  # every example, not the correct
    "your-replication": (
        "q2",
        '"original") - accuracy(folder, m, "new")',
        '"new") - accuracy(folder, m, "original")',
    ),
}


@pytest.fixture(scope="module")
def labs(built_book):
    """The labs as ``make book`` builds them (after the chapters, from the same cache)."""
    project, out = built_book
    assert out.returncode == 0, out.stderr[-3000:]
    return project / "_build" / "labs"


def _points(scores):
    return {q: p for q, (_, p) in scores.items()}


@pytest.mark.slow
@pytest.mark.parametrize("lab", LABS)
def test_solution_full_marks_student_zero_and_a_wrong_answer_loses_its_question(labs, lab, tmp_path):
    folder = labs / lab
    bundle = folder / "autograder" / f"{lab}-autograder.zip"
    solution = grade(bundle, folder / "solution" / f"{lab}.ipynb")
    assert len(solution) >= 3, solution
    assert all(score == points > 0 for score, points in solution.values()), solution
    student = grade(bundle, folder / "student" / f"{lab}.ipynb")
    assert _points(student) == _points(solution)
    assert all(score == 0 for score, _ in student.values()), student
    question, right, wrong = WRONG[lab]
    nb = json.loads((folder / "solution" / f"{lab}.ipynb").read_text(encoding="utf-8"))
    hits = [c for c in nb["cells"] if c["cell_type"] == "code" and right in "".join(c["source"])]
    assert len(hits) == 1, f"{lab}: the solution text to replace is not in exactly one cell"
    hits[0]["source"] = "".join(hits[0]["source"]).replace(right, wrong)
    submission = tmp_path / f"{lab}.ipynb"
    submission.write_text(json.dumps(nb), encoding="utf-8")
    shutil.copy2(folder / "solution" / f"{lab}-data.npz", tmp_path)
    scores = grade(bundle, submission)
    lost = {q: points - score for q, (score, points) in scores.items() if score != points}
    assert lost == {question: solution[question][1]}, scores


@pytest.mark.slow
def test_the_bundles_hold_no_solution_and_each_edition_its_files(labs):
    for lab in LABS:
        student = (labs / lab / "student" / f"{lab}.ipynb").read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in student and '"hidden": true' not in student, lab
        assert '"hidden": false' in student, lab  # the public tests travel with the notebook
        assert (labs / lab / "student" / f"{lab}-data.npz").is_file()
        assert (labs / f"{lab}-student.zip").is_file() and (labs / f"{lab}-solution.zip").is_file()


@pytest.mark.slow
def test_the_grade_command_scores_submissions_and_writes_a_csv(labs, tmp_path):
    solution = labs / "mlm" / "solution" / "mlm.ipynb"
    out = shifteval(
        "grade", "mlm", str(solution), "--labs", str(labs), "--csv", str(tmp_path / "g.csv"), cwd=ROOT
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"{solution}: 7/7 (q1 2/2, q2 2/2, q3 3/3)" in out.stdout
    assert (tmp_path / "g.csv").read_text().splitlines() == [
        "submission,q1,q2,q3,total",
        f"{solution},2.0,2.0,3.0,7.0",
    ]
    bad = shifteval("grade", "mlms", str(solution), cwd=ROOT)
    assert bad.returncode == 1 and "unknown lab 'mlms'" in bad.stderr


@pytest.mark.slow
def test_every_chapter_page_links_its_lab_in_each_edition(labs):
    html = labs.parents[1] / "_build" / "html"
    for lab in LABS:
        page = (html / "book" / "chapters" / f"{lab}.html").read_text(encoding="utf-8")
        assert f'href="../../labs/{lab}-solution.zip"' in page, lab
        assert (html / "labs" / f"{lab}-solution.zip").is_file()


def test_an_unknown_lab_and_missing_files_are_named():
    with pytest.raises(LabError, match="unknown lab 'nope'; labs: replication-world"):
        master_source(ROOT, "nope")
    with pytest.raises(LabError, match="no such autograder bundle"):
        grade(ROOT / "missing.zip", ROOT / "missing.ipynb")


def test_every_chapter_has_a_lab():
    chapters = {p.stem for p in (ROOT / "notebooks").glob("*.py")}
    assert chapters == set(LABS)
    for lab in LABS:
        assert master_source(ROOT, lab).read_text(encoding="utf-8").count("# BEGIN QUESTION") >= 3
