"""The answers to a lab's manually graded questions, found in submissions and written out for marking.

Otter Assign marks each manually graded question (``manual: true`` in its ``# BEGIN QUESTION`` cell) in the
student notebook: the question's prompt cell opens with ``<!-- BEGIN QUESTION -->``, and the first markdown
cell after its answer with ``<!-- END QUESTION -->`` (the comments Otter's PDF export filters on; both cells
are locked). Between them lie the student's answer cells: markdown for a written answer, code and its saved
outputs for a plot. Otter's own export of these answers is a PDF, which needs LaTeX or a browser engine;
:func:`export` writes them as Markdown instead, with the figures as PNG files beside it:

- ``submissions/<submission>.md``: one submission's answers to every manual question (to return as feedback);
- ``questions/<question>.md``: one question's answers from every submission (to mark consistently);
- ``figures/``: the images the answers' code cells produced, as the submitted notebook saved them;
- ``index.md``: the questions with their points, and links to every file.

A submission's figures are those it was saved with: a cell not run before submitting shows none, and the
export says so. ``shifteval grade LAB NOTEBOOK... --manual DIR`` calls :func:`export`.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

BEGIN = "<!-- BEGIN QUESTION -->"
END = "<!-- END QUESTION -->"

#: What Otter Assign leaves in an answer cell: a student who changed nothing answered nothing.
PLACEHOLDERS = ("_Type your answer here, replacing this text._", "...")


@dataclass
class Answer:
    """One submission's answer to one manually graded question.

    Attributes
    ----------
    question : str
        The question's name (``q10``).
    points : float
        Its points, given by hand.
    prompt : str
        The question's text, as the notebook shows it (markers removed).
    cells : list of dict
        The answer's cells (nbformat cells: ``cell_type``, ``source``, and ``outputs`` for code); empty when
        the question's markers were not found in the submission.
    found : bool
        Whether the question's cells were found.
    """

    question: str
    points: float
    prompt: str = ""
    cells: list = field(default_factory=list)
    found: bool = True


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def find_answers(notebook: str | Path, questions: list[dict]) -> list[Answer]:
    r"""The answers to a lab's manually graded questions in one submitted notebook.

    Parameters
    ----------
    notebook : str or pathlib.Path
        The submission (``.ipynb``).
    questions : list of dict
        The lab's questions (:func:`shifteval.labs.build.lab_questions`); the manual ones are matched, in
        order, with the notebook's ``<!-- BEGIN QUESTION -->`` blocks.

    Returns
    -------
    list of Answer
        One per manual question. When the notebook's blocks do not match the manual questions one to one
        (a locked cell deleted by hand), every answer has ``found=False``.

    Raises
    ------
    ValueError
        If the file is not a notebook.

    Examples
    --------
    >>> cells = [{"cell_type": "markdown", "source": "<!-- BEGIN QUESTION -->\n\n**Q2.** Why?"},
    ...          {"cell_type": "markdown", "source": "Because."},
    ...          {"cell_type": "markdown", "source": "<!-- END QUESTION -->\n\nThe end."}]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "a.ipynb").write_text(json.dumps({"cells": cells}))
    ...     (answer,) = find_answers(Path(d) / "a.ipynb", [{"name": "q2", "points": 2.0, "manual": True}])
    >>> answer.question, answer.prompt, [c["source"] for c in answer.cells]
    ('q2', '**Q2.** Why?', ['Because.'])
    """
    try:
        nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
        cells = nb["cells"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{notebook}: not a Jupyter notebook ({exc})") from None
    manual = [q for q in questions if q.get("manual")]
    blocks: list[tuple[str, list]] = []
    inside = False
    for cell in cells:
        text = _source(cell)
        if cell.get("cell_type") != "markdown" or (BEGIN not in text and END not in text):
            if inside:
                blocks[-1][1].append(cell)
            continue
        for piece in re.split(f"({re.escape(BEGIN)}|{re.escape(END)})", text):
            if piece == BEGIN:
                blocks.append(("", []))
                inside = True
            elif piece == END:
                inside = False
            elif inside and not blocks[-1][1]:
                blocks[-1] = (blocks[-1][0] + piece, [])
    if len(blocks) != len(manual):
        return [Answer(q["name"], float(q["points"]), found=False) for q in manual]
    return [
        Answer(q["name"], float(q["points"]), prompt.strip(), answer)
        for q, (prompt, answer) in zip(manual, blocks, strict=True)
    ]


def _labels(paths: list[Path]) -> list[str]:
    """Distinct file names for submissions: the notebook's stem, with as many parent folders as needed."""

    def clean(parts):
        return re.sub(r"[^A-Za-z0-9._-]+", "-", "-".join(parts)).strip("-") or "submission"

    for depth in range(1, max(len(p.parts) for p in paths) + 1):
        labels = [clean([*p.parent.parts[len(p.parent.parts) - depth + 1 :], p.stem]) for p in paths]
        if len(set(labels)) == len(labels):
            return labels
    return [f"{clean([p.stem])}-{i + 1}" for i, p in enumerate(paths)]


def _render(answer: Answer, label: str, dest: Path, heading: str) -> str:
    """Markdown for one answer; its figures are written into ``dest / "figures"``."""
    lines = [f"## {heading}", ""]
    if not answer.found:
        return "\n".join(lines + [
            "*This question's cells were not found in the submission (a locked cell was removed or "
            "edited): read the notebook itself.*", "",
        ])  # fmt: skip
    lines += ["> " + line if line else ">" for line in answer.prompt.splitlines()] + [""]
    answered, figures = False, 0
    for cell in answer.cells:
        source = _source(cell).strip()
        if cell.get("cell_type") == "markdown":
            answered |= bool(source) and source not in PLACEHOLDERS
            lines += [source, ""]
            continue
        if cell.get("cell_type") != "code":
            continue
        answered |= bool(source) and source not in PLACEHOLDERS
        lines += ["```python", source, "```", ""]
        outputs = cell.get("outputs", [])
        if source and source not in PLACEHOLDERS and not outputs:
            lines += ["*No output: the cell was not run before the notebook was saved.*", ""]
        for output in outputs:
            data = output.get("data", {})
            if "image/png" in data:
                figures += 1
                name = f"{label}-{answer.question}-{figures}.png"
                (dest / "figures").mkdir(parents=True, exist_ok=True)
                (dest / "figures" / name).write_bytes(
                    base64.b64decode(_source({"source": data["image/png"]}))
                )
                lines += [f"![{answer.question}, figure {figures}](../figures/{name})", ""]
            elif output.get("output_type") == "stream" or "text/plain" in data:
                text = _source({"source": output.get("text", data.get("text/plain", ""))}).rstrip()
                if text and not re.fullmatch(r"<(Figure|matplotlib)[^>]*>", text):
                    lines += ["```text", text, "```", ""]
            elif output.get("output_type") == "error":
                lines += ["```text", f"{output.get('ename')}: {output.get('evalue')}", "```", ""]
    if not answered:
        lines += ["*Not answered: the answer cells are as handed out.*", ""]
    return "\n".join(lines)


def export(submissions: list[str | Path], questions: list[dict], dest: str | Path, lab: str = "") -> Path:
    r"""Write the submissions' answers to the manual questions into ``dest`` for reading and marking.

    Parameters
    ----------
    submissions : list of str or pathlib.Path
        Submitted notebooks.
    questions : list of dict
        The lab's questions (:func:`shifteval.labs.build.lab_questions`).
    dest : str or pathlib.Path
        The folder to write (created; files of the same names are replaced).
    lab : str
        The lab's name, for the titles.

    Returns
    -------
    pathlib.Path
        ``dest / "index.md"``.

    Examples
    --------
    >>> cells = [{"cell_type": "markdown", "source": "<!-- BEGIN QUESTION -->\n\n**Q2.** Why?"},
    ...          {"cell_type": "markdown", "source": "Because."},
    ...          {"cell_type": "markdown", "source": "<!-- END QUESTION -->"}]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for who in ("alice", "bob"):
    ...         (Path(d) / who).mkdir()
    ...         _ = (Path(d) / who / "lab.ipynb").write_text(json.dumps({"cells": cells}))
    ...     qs = [{"name": "q1", "points": 1.0, "manual": False}, {"name": "q2", "points": 2.0, "manual": True}]
    ...     index = export([Path(d) / "alice" / "lab.ipynb", Path(d) / "bob" / "lab.ipynb"], qs, Path(d) / "out")
    ...     sorted(str(p.relative_to(index.parent)) for p in index.parent.rglob("*.md"))
    ['index.md', 'questions/q2.md', 'submissions/alice-lab.md', 'submissions/bob-lab.md']
    """
    dest = Path(dest)
    manual = [q for q in questions if q.get("manual")]
    paths = [Path(s) for s in submissions]
    labels = _labels(paths)
    for folder in ("submissions", "questions"):
        (dest / folder).mkdir(parents=True, exist_ok=True)
    per_question: dict[str, list[str]] = {q["name"]: [] for q in manual}
    title = f"lab {lab}" if lab else "the lab"
    for path, label in zip(paths, labels, strict=True):
        answers = find_answers(path, questions)
        parts = [f"# {path}: answers to the manually graded questions of {title}", ""]
        for answer in answers:
            heading = f"{answer.question} ({answer.points:g} points, graded by hand)"
            parts.append(_render(answer, label, dest, heading))
            per_question[answer.question].append(_render(answer, label, dest, f"{path}"))
        (dest / "submissions" / f"{label}.md").write_text("\n".join(parts), encoding="utf-8")
    for q in manual:
        text = [
            f"# {q['name']} ({float(q['points']):g} points, graded by hand): every submission's answer",
            "",
        ]
        (dest / "questions" / f"{q['name']}.md").write_text("\n".join(text + per_question[q["name"]]),
                                                            encoding="utf-8")  # fmt: skip
    index = [
        f"# Manually graded questions of {title}", "",
        "Give each answer its points by hand, in the question's column of the grades CSV.", "",
        *[f"- [{q['name']}](questions/{q['name']}.md): {float(q['points']):g} points" for q in manual], "",
        "Submissions:", "",
        *[f"- [{path}](submissions/{label}.md)" for path, label in zip(paths, labels, strict=True)], "",
    ]  # fmt: skip
    (dest / "index.md").write_text("\n".join(index), encoding="utf-8")
    return dest / "index.md"
