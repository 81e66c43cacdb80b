"""The labs: built by `shifteval labs`, graded offline by Otter.

`make test`: every lab's solution scores full marks and its untouched notebook zero, the editions and bundles
hold what they should and no solution, the grade command's report, CSV and manual export, the pages' links,
and every master's shape (8-12 questions, one graded by hand, no `shifteval`). `make test-all` adds, per lab,
a planted wrong answer that must lose exactly its question, and grading in a fresh virtual environment that
holds only the bundle's requirements.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jupytext
import pytest
from conftest import PROJECT_CACHE, shifteval

from shifteval.labs import LABS, LabError, grade, lab_questions
from shifteval.labs import manual as manual_export
from shifteval.labs.build import master_questions, master_source

ROOT = Path(__file__).resolve().parents[1]

#: One plausible wrong answer per lab: (question, text in the solution, its replacement).
WRONG = {
    "replication-world": (  # TopImages takes the least selected candidates of each class
        "q5",
        "np.argsort(-freq[members]",
        "np.argsort(freq[members]",
    ),
    "linear-fits": ("q1", "stats.beta.ppf(alpha / 2,", "stats.beta.ppf(alpha,"),  # alpha not halved
    "selection-bias": (  # Eq. 4's weights not renormalised over the levels v2 takes
        "q5",
        "np.sum(acc[keep] * p1[keep]) / p1[keep].sum()",
        "np.sum(acc[keep] * p1[keep])",
    ),
    "matched-evaluation": ("q5", "unused[s] = False", "pass"),  # a source image matched more than once
    "ood-autoeval": (  # the ID share left out: the foreign images removed are not counted as errors
        "q9",
        "return float(keep.mean() * g(representation(",
        "return float(g(representation(",
    ),
    "mlm": ("q2", "probs[right & (labels == k)]", "probs[labels == k]"),  # every example, not the correct
    "your-replication": ("q6", "fit_line(x[r], y[r])[0]", "fit_line(x, y[r])[0]"),  # x not resampled with y
}

#: How many questions a lab has (a lab session of one to two hours), and how many are graded by hand.
QUESTIONS = range(8, 13)


@pytest.fixture(scope="module")
def labs(default_project):
    """The labs as ``make book`` builds them (``shifteval labs``, from the project's cache; the book's
    build later finds them current)."""
    out = shifteval("labs", cwd=default_project, env={"SHIFTEVAL_CACHE": str(PROJECT_CACHE)})
    assert out.returncode == 0, out.stderr[-3000:]
    return default_project / "_build" / "labs"


def _points(scores):
    return {q: p for q, (_, p) in scores.items()}


def _bundle(labs, lab):
    return labs / lab / "autograder" / f"{lab}-autograder.zip"


@pytest.mark.slow
@pytest.mark.parametrize("lab", LABS)
def test_solution_full_marks_untouched_notebook_zero(labs, lab):
    folder, bundle = labs / lab, _bundle(labs, lab)
    solution = grade(bundle, folder / "solution" / f"{lab}.ipynb", strict=True)  # a cell that raises fails
    assert all(score == points > 0 for score, points in solution.values()), solution
    student = grade(bundle, folder / "student" / f"{lab}.ipynb")
    assert _points(student) == _points(solution)
    assert all(score == 0 for score, _ in student.values()), student
    questions = lab_questions(bundle)
    if questions:  # the bundle lists every question; Otter scores exactly the autograded ones
        assert {q["name"] for q in questions if not q["manual"]} == set(solution)
        assert all(solution[q["name"]][1] == q["points"] for q in questions if not q["manual"])


#: The line that opens, in a lab's solution code, the assertions of its model answers' statements on the run.
CHECKS = "# Checks the statements of Question "


@pytest.mark.parametrize("lab", LABS)
def test_every_model_answer_has_its_statements_checked(lab):
    """Each master's written model answers state what the run shows by the names of its variables, and the
    solution asserts those statements (in a ``# BEGIN SOLUTION NO PROMPT`` block, which the student never sees)."""
    source = master_source(ROOT, lab).read_text(encoding="utf-8")
    blocks = re.findall(r"# BEGIN SOLUTION NO PROMPT\n(.*?)# END SOLUTION", source, flags=re.S)
    assert any(b.startswith(CHECKS) and "assert " in b for b in blocks), f"{lab}: no checks of a model answer"


@pytest.mark.slow
def test_a_false_statement_check_fails_the_solution(labs, tmp_path):
    """Otter grades ignoring errors, so a failing check would cost no points: strict grading catches it."""
    folder, lab = labs / "mlm", "mlm"
    nb = json.loads((folder / "solution" / f"{lab}.ipynb").read_text(encoding="utf-8"))
    (cell,) = [c for c in nb["cells"] if c["cell_type"] == "code" and CHECKS in "".join(c["source"])]
    source = "".join(cell["source"])
    cell["source"] = source.replace(CHECKS, 'assert False, "a planted false statement"\n' + CHECKS)
    planted = tmp_path / f"{lab}.ipynb"
    planted.write_text(json.dumps(nb), encoding="utf-8")
    lenient = grade(_bundle(labs, lab), planted)
    assert all(score == points for score, points in lenient.values()), lenient  # unnoticed without strict
    with pytest.raises(LabError, match="a planted false statement"):
        grade(_bundle(labs, lab), planted, strict=True)


def _solution_texts(lab):
    """Text only a solution holds: the lines of each solution region, the first line of each written one."""
    texts, inside = [], False
    for cell in jupytext.read(master_source(ROOT, lab), fmt="py:percent").cells:
        if cell.cell_type == "raw" and cell.source.strip() in ("# BEGIN SOLUTION", "# END SOLUTION"):
            inside = cell.source.strip() == "# BEGIN SOLUTION"
        elif inside and cell.cell_type == "markdown":
            texts.append(cell.source.splitlines()[0])
        elif inside and cell.cell_type == "code":
            region = False
            for line in cell.source.splitlines():
                if line.strip() in ("# BEGIN SOLUTION", "# BEGIN SOLUTION NO PROMPT", "# END SOLUTION"):
                    region = line.strip() != "# END SOLUTION"
                elif region or line.endswith("  # SOLUTION"):
                    texts.append(line.removesuffix("  # SOLUTION").strip())
    return [t for t in texts if len(t) > 20]


@pytest.mark.slow
def test_the_editions_hold_their_files_and_no_solution(labs):
    for lab in LABS:
        student = (labs / lab / "student" / f"{lab}.ipynb").read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in student and '"hidden": true' not in student, lab
        assert '"hidden": false' in student, lab  # the public tests travel with the notebook
        leaked = [t for t in _solution_texts(lab) if json.dumps(t)[1:-1] in student]
        assert not leaked, f"{lab}: the student notebook holds solution text: {leaked}"
        handed_out = sorted([f"{lab}-data.npz", f"{lab}.ipynb", "requirements.txt"])
        assert sorted(p.name for p in (labs / lab / "student").iterdir()) == handed_out
        with zipfile.ZipFile(labs / f"{lab}-student.zip") as z:
            assert sorted(Path(n).name for n in z.namelist()) == handed_out, lab
        assert (labs / f"{lab}-solution.zip").is_file()
        with zipfile.ZipFile(_bundle(labs, lab)) as z:
            names = z.namelist()
            assert not [n for n in names if n.endswith(".ipynb")], f"{lab}: the bundle holds a notebook"
            assert {"requirements.txt", "lab.json", f"files/{lab}-data.npz", "environment.yml"} <= set(names)
            requirements = z.read("requirements.txt").decode().split()
            environment = z.read("environment.yml").decode()
        assert [r.split("==")[0] for r in requirements[:4]] == [
            "numpy", "pandas", "matplotlib", "otter-grader[grading]",
        ], lab  # fmt: skip
        assert all(re.fullmatch(r"[\w.\[\]-]+==[\w.]+", r) for r in requirements), requirements
        assert all(f"- {r}" in environment for r in requirements), environment  # Otter's own list: the same
        assert lab_questions(_bundle(labs, lab)) == master_questions(master_source(ROOT, lab))


@pytest.mark.slow
def test_the_grade_command_scores_writes_a_csv_and_exports_the_manual_answers(labs, tmp_path):
    solution = labs / "mlm" / "solution" / "mlm.ipynb"
    csv, manual = tmp_path / "g.csv", tmp_path / "manual"
    out = shifteval(
        "grade", "mlm", str(solution), "--labs", str(labs), "--csv", str(csv), "--manual", str(manual), cwd=ROOT
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.splitlines() == [
        f"{solution}: 15/15 autograded (q1 1/1, q2 2/2, q3 2/2, q4 1/1, q5 1/1, q6 2/2, q7 2/2, q9 1/1, "
        "q10 1/1, q11 2/2); by hand: q8, q12 (5 points)",
        f"answers to the manually graded questions (q8, q12): {manual / 'index.md'}",
    ]
    assert csv.read_text().splitlines() == [
        "submission,q1,q2,q3,q4,q5,q6,q7,q8 (manual: 2 points),q9,q10,q11,q12 (manual: 3 points),autograded",
        f"{solution},1.0,2.0,2.0,1.0,1.0,2.0,2.0,,1.0,1.0,2.0,,15.0",
    ]
    answers = (manual / "submissions" / "mlm.md").read_text(encoding="utf-8")  # named by the notebook's stem
    assert "## q8 (2 points, graded by hand)" in answers and "## q12 (3 points, graded by hand)" in answers
    assert "Only roughly. `rho` is positive but far from 1" in answers  # the written solution
    assert "_Type your answer here" not in answers  # the solution edition has no empty answer cell
    assert (manual / "questions" / "q12.md").is_file() and (manual / "index.md").is_file()
    bad = shifteval("grade", "mlms", str(solution), cwd=ROOT)
    assert bad.returncode == 1 and "unknown lab 'mlms'" in bad.stderr


def test_a_lab_error_is_one_line_naming_the_file(tmp_path, capsys):
    """A grading error (here, a submitted notebook that does not exist) reads as one line, not a traceback."""
    from shifteval.cli import main

    bundle = tmp_path / "mlm" / "autograder" / "mlm-autograder.zip"
    bundle.parent.mkdir(parents=True)
    zipfile.ZipFile(bundle, "w").close()
    missing = tmp_path / "no-such.ipynb"
    assert main(["grade", "mlm", str(missing), "--labs", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err == f"shifteval: error: {missing}: no such submitted notebook (.ipynb)\n", err


@pytest.mark.slow
def test_every_chapter_page_links_its_lab_in_each_edition(built_book):
    project, out = built_book
    assert out.returncode == 0, out.stderr[-3000:]
    html = project / "_build" / "html"
    for lab in LABS:
        page = (html / "book" / "chapters" / f"{lab}.html").read_text(encoding="utf-8")
        assert f'href="../../labs/{lab}-solution.zip"' in page, lab
        assert (html / "labs" / f"{lab}-solution.zip").is_file()
    teaching = (html / "book" / "teaching.html").read_text(encoding="utf-8")
    assert all(f">{lab}<" in teaching for lab in LABS), "the page on teaching names every lab"


# --- make test-all -----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.parametrize("lab", LABS)
def test_a_planted_wrong_answer_loses_exactly_its_question(labs, lab, tmp_path):
    folder, bundle = labs / lab, _bundle(labs, lab)
    question, right, wrong = WRONG[lab]
    nb = json.loads((folder / "solution" / f"{lab}.ipynb").read_text(encoding="utf-8"))
    hits = [c for c in nb["cells"] if c["cell_type"] == "code" and right in "".join(c["source"])]
    assert len(hits) == 1, f"{lab}: the solution text to replace is not in exactly one cell"
    hits[0]["source"] = "".join(hits[0]["source"]).replace(right, wrong)
    submission = tmp_path / f"{lab}.ipynb"
    submission.write_text(json.dumps(nb), encoding="utf-8")
    scores = grade(bundle, submission)
    lost = {q: points - score for q, (score, points) in scores.items() if score != points}
    assert lost == {question: scores[question][1]}, scores


@pytest.fixture(scope="module")
def clean_environments(tmp_path_factory):
    """Fresh virtual environments, one per distinct ``requirements.txt``, holding only what it names."""
    made: dict[str, Path] = {}

    def environment(requirements: str) -> Path:
        if requirements not in made:
            venv = tmp_path_factory.mktemp("clean-venv") / "venv"
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            (venv.parent / "requirements.txt").write_text(requirements, encoding="utf-8")
            pip = [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ]
            out = subprocess.run(
                [*pip, "-r", str(venv.parent / "requirements.txt")], env=_clean_env(venv), capture_output=True, text=True
            )  # fmt: skip
            assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
            made[requirements] = venv
        return made[requirements]

    return environment


def _clean_env(venv: Path) -> dict[str, str]:
    """The environment of a process in ``venv``: its ``bin`` first, nothing of this project's on any path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "JUPYTER", "VIRTUAL_ENV"))}
    project_bin = str(Path(sys.executable).parent)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != project_bin]
    env.update(
        PATH=os.pathsep.join([str(venv / "bin"), *path]),
        VIRTUAL_ENV=str(venv),
        PYTHONNOUSERSITE="1",
        JUPYTER_DATA_DIR=str(venv / "share" / "jupyter"),
        JUPYTER_CONFIG_DIR=str(venv / "etc" / "jupyter"),
        MPLBACKEND="Agg",
    )
    return env


@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.parametrize("lab", LABS)
def test_the_bundle_grades_in_a_fresh_environment_holding_only_its_requirements(
    labs, lab, clean_environments, tmp_path
):
    bundle = _bundle(labs, lab)
    with zipfile.ZipFile(bundle) as z:
        venv = clean_environments(z.read("requirements.txt").decode())
    env = _clean_env(venv)
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import shifteval"], env=env, capture_output=True
    )
    assert probe.returncode != 0, "the clean environment can import shifteval"
    results = {}
    for kind in ("solution", "student"):
        work = tmp_path / kind
        work.mkdir()
        shutil.copy2(labs / lab / kind / f"{lab}.ipynb", work)
        out = subprocess.run(
            [str(venv / "bin" / "otter"), "run", "-a", str(bundle), "-o", str(work), "--no-logo", f"{lab}.ipynb"],
            cwd=work, env=env, capture_output=True, text=True,
        )  # fmt: skip
        assert out.returncode == 0 and (work / "results.json").is_file(), (
            out.stdout[-2000:] + out.stderr[-3000:]
        )
        tests = json.loads((work / "results.json").read_text(encoding="utf-8"))["tests"]
        results[kind] = {t["name"]: (t["score"], t["max_score"]) for t in tests if "max_score" in t}
    assert results["solution"] and all(s == p > 0 for s, p in results["solution"].values()), (
        f"{lab}: the solution loses points in an environment holding only the bundle's requirements.txt "
        f"(does the lab import something it does not list, such as shifteval?): {results}"
    )
    assert _points(results["student"]) == _points(results["solution"])
    assert all(s == 0 for s, _ in results["student"].values()), results


# --- the masters, without building anything ------------------------------------------------------------


def test_an_unknown_lab_and_missing_files_are_named():
    with pytest.raises(LabError, match="unknown lab 'nope'; labs: replication-world"):
        master_source(ROOT, "nope")
    with pytest.raises(LabError, match="no such autograder bundle"):
        grade(ROOT / "missing.zip", ROOT / "missing.ipynb")


def test_every_chapter_has_a_lab():
    chapters = {p.stem for p in (ROOT / "notebooks").glob("*.py")}
    assert chapters == set(LABS)


@pytest.mark.parametrize("lab", LABS)
def test_a_lab_has_8_to_12_questions_one_graded_by_hand(lab):
    questions = master_questions(master_source(ROOT, lab))
    manual = [q["name"] for q in questions if q["manual"]]
    assert len(questions) in QUESTIONS and manual, (
        f"notebooks/labs/{lab}.py has {len(questions)} questions, {len(manual)} of them graded by hand: a lab "
        f"has {QUESTIONS.start}-{QUESTIONS.stop - 1} questions that build to one of the paper's findings, a plot "
        "and a written interpretation among them (manual: true); see 'Writing a lab' in book/teaching.md"
    )


@pytest.mark.parametrize("lab", LABS)
def test_no_lab_master_mentions_shifteval(lab):
    source = master_source(ROOT, lab).read_text(encoding="utf-8")
    lines = [i for i, line in enumerate(source.splitlines(), 1) if "shifteval" in line]
    assert not lines, (
        f"notebooks/labs/{lab}.py mentions shifteval on line(s) {lines}: a lab's notebook and its tests use only "
        "numpy, pandas, matplotlib and the lab's data file, and the autograder bundle grades without the library"
    )


def test_the_teaching_page_lists_every_lab_with_its_questions_and_points():
    rows = {}
    for line in (ROOT / "book" / "teaching.md").read_text(encoding="utf-8").splitlines():
        found = re.match(
            r"\| \{doc\}`([\w-]+) <chapters/\1>` \|.*\| (\d+) \| (\d+)(?: \((\d+) by hand\))? \|$", line
        )
        if found:
            rows[found[1]] = (int(found[2]), int(found[3]), int(found[4] or 0))
    assert list(rows) == list(LABS), (
        "book/teaching.md: the labs' table needs one row per lab, in the book's order"
    )
    for lab, row in rows.items():
        questions = master_questions(master_source(ROOT, lab))
        actual = (
            len(questions),
            round(sum(q["points"] for q in questions)),
            round(sum(q["points"] for q in questions if q["manual"])),
        )
        assert row == actual, (
            f"book/teaching.md: {lab}'s row says (questions, points, by hand) = {row}, the lab {actual}"
        )


def _notebook(path: Path, cells: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()


def test_the_manual_export_writes_answers_figures_and_notes(tmp_path):
    questions = [
        {"name": "q1", "points": 1.0, "manual": False},
        {"name": "q2", "points": 2.0, "manual": True},
        {"name": "q3", "points": 3.0, "manual": True},
    ]
    plot = {"cell_type": "code", "source": "plt.plot(x)", "outputs": [
        {"output_type": "display_data", "data": {"image/png": PNG, "text/plain": "<Figure size 640x480 with 1 Axes>"}},
    ]}  # fmt: skip
    cells = [
        {"cell_type": "code", "source": "x = 1", "outputs": []},
        {"cell_type": "markdown", "source": "<!-- BEGIN QUESTION -->\n\n**Question 2.** Plot x."},
        plot,
        {
            "cell_type": "markdown",
            "source": "<!-- END QUESTION -->\n\n<!-- BEGIN QUESTION -->\n\n**Question 3.** Why?",
        },
        {"cell_type": "markdown", "source": "Because the votes are noisy."},
        {"cell_type": "markdown", "source": "<!-- END QUESTION -->\n\nThe end."},
    ]
    alice = _notebook(tmp_path / "alice" / "lab.ipynb", cells)
    blank = [dict(c) for c in cells]
    blank[2] = {"cell_type": "code", "source": "...", "outputs": []}
    blank[4] = {"cell_type": "markdown", "source": "_Type your answer here, replacing this text._"}
    bob = _notebook(tmp_path / "bob" / "lab.ipynb", blank)
    broken = _notebook(tmp_path / "carol" / "lab.ipynb", cells[:1] + cells[4:])  # a locked cell deleted
    index = manual_export.export([alice, bob, broken], questions, tmp_path / "out", lab="demo")
    out = index.parent
    assert sorted(p.name for p in (out / "submissions").iterdir()) == [
        "alice-lab.md",
        "bob-lab.md",
        "carol-lab.md",
    ]
    text = (out / "submissions" / "alice-lab.md").read_text()
    assert "## q2 (2 points, graded by hand)" in text and "> **Question 2.** Plot x." in text
    assert "![q2, figure 1](../figures/alice-lab-q2-1.png)" in text and "<Figure" not in text
    assert (out / "figures" / "alice-lab-q2-1.png").read_bytes() == base64.b64decode(PNG)
    assert "Because the votes are noisy." in text and "Not answered" not in text
    assert (out / "submissions" / "bob-lab.md").read_text().count(
        "*Not answered: the answer cells are as handed out.*"
    ) == 2
    assert "were not found in the submission" in (out / "submissions" / "carol-lab.md").read_text()
    by_question = (out / "questions" / "q3.md").read_text()
    assert by_question.index(str(alice)) < by_question.index(str(bob)) < by_question.index(str(broken))
    assert "[q2](questions/q2.md): 2 points" in index.read_text()
