"""The chapters as notebooks: the downloaded notebook reads as its page, the source re-runs outside the
book, and the student edition ships no solution in any file."""

from __future__ import annotations

import html
import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT
from test_labs import _solution_texts

from shifteval.book.project import chapters
from shifteval.book.reader import ROLE
from shifteval.book.results import FAILS_MARK, HOLDS_MARK

pytestmark = pytest.mark.one_core  # reading files and one kernel: one core

CHAPTERS = [c.name for c in chapters()]
MARKUP = {
    "a glued number's role": re.compile(r"\{glue(:\w+)?\}"),
    "a claim span": re.compile(r"<span claim"),
    "a claim's format field": re.compile(r"\{test[\[.:}]"),
    "a MyST role": ROLE,
    "a MyST directive": re.compile(r"^\s*(`{3,}|:{3,})\{[\w:.-]+\}", re.MULTILINE),
}


def _figure_calls(name: str) -> int:
    return len(re.findall(r"^R\.figure\(", (ROOT / "notebooks" / f"{name}.py").read_text(), re.MULTILINE))


def _images(nb: dict) -> int:
    return sum(
        1
        for cell in nb["cells"]
        for o in cell.get("outputs", [])
        if {"image/png", "image/svg+xml"} & set(o.get("data", {}))
    )


def _markdown(nb: dict) -> str:
    texts = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    texts += [
        "".join(o["data"]["text/markdown"])
        for c in nb["cells"]
        for o in c.get("outputs", [])
        if "text/markdown" in o.get("data", {})
    ]
    return "\n".join(texts)


def _downloads(html_root: Path, name: str) -> list[Path]:
    """Every copy of a chapter's notebook that its built page offers for download."""
    copies = sorted((html_root / "_downloads").glob(f"*/{name}.ipynb"))
    copies += [
        p for p in (html_root / "_sources" / "book" / "chapters").glob(f"{name}.ipynb*") if p.is_file()
    ]
    return copies


def _check_reader(nb: dict, name: str, where: str) -> None:
    text = _markdown(nb)
    left = {what: m.group(0) for what, pattern in MARKUP.items() if (m := pattern.search(text))}
    assert not left, f"{where}: markup left in the prose: {left}"
    assert _images(nb) == _figure_calls(name), (where, _images(nb), _figure_calls(name))
    for cell in nb["cells"]:
        tags = cell["metadata"].get("tags", [])
        if cell["cell_type"] == "code" and "remove-cell" in tags:
            assert cell["metadata"].get("jupyter", {}).get("source_hidden"), (
                where,
                "".join(cell["source"])[:80],
            )
    captions = re.findall(r"\*\*(?:Fig\.|Table) \d+\.\d+\.\*\*", text)
    assert len(captions) >= _figure_calls(name), (where, "figures and tables without their page's numbers")


def test_every_download_of_a_chapter_reads_as_its_page(built_book):
    project, _ = built_book
    html_root = project / "_build" / "html"
    for name in CHAPTERS:
        copies = _downloads(html_root, name)
        assert len(copies) >= 2, (name, copies)  # the theme's source link and the provenance box's link
        for path in copies:
            nb = json.loads(path.read_text(encoding="utf-8"))
            _check_reader(nb, name, str(path.relative_to(html_root)))
            assert "<details><summary>Solution to" in _markdown(nb), (
                name,
                "the full edition keeps solutions",
            )
        executed = (project / "book" / "chapters" / f"{name}.ipynb").read_text(encoding="utf-8")
        assert "{glue:md}" not in executed and "<span claim" not in executed, name


# -- the student edition ----------------------------------------------------------------------------------


def _plain(text: str) -> str:
    """Text for matching: markup, quotes and dashes as one reads them, whitespace collapsed."""
    text = html.unescape(re.sub(r"</?[A-Za-z][^<>]*>", " ", text))
    for a, b in (("’", "'"), ("‘", "'"), ("“", '"'), ("”", '"'), ("—", "-"), ("–", "-"), ("−", "-")):
        text = text.replace(a, b)
    text = re.sub(r"[*`\\$]", "", text)
    return " ".join(text.split())


def _solution_blocks(markdown: str) -> list[str]:
    blocks, inside, fence = [], None, ""
    for line in markdown.split("\n"):
        m = re.match(r"^\s*(`{3,}|:{3,})\{solution\}", line)
        if inside is None and m:
            inside, fence = [], m.group(1)
            continue
        if inside is not None:
            if line.strip() == fence:
                blocks.append("\n".join(inside))
                inside = None
            elif not re.match(r"^\s*:[\w-]+:", line):
                inside.append(line)
    return blocks


def solution_texts(project: Path) -> dict[str, list[str]]:
    """Every solution's sentences (chapters' exercises) and code lines (labs), each long enough to be its own.

    A sentence that the chapter also states outside its solutions is left out: it is no solution's text.
    """
    out: dict[str, list[str]] = {}
    for name in CHAPTERS:
        nb = json.loads((project / "book" / "chapters" / f"{name}.ipynb").read_text(encoding="utf-8"))
        md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        blocks = _solution_blocks(md)
        outside = _plain(md)
        for block in blocks:
            outside = outside.replace(_plain(block), " ")
        sentences = [s for b in blocks for s in re.split(r"(?<=[.:;?!])\s+", _plain(b))]
        out[f"chapter {name}"] = [s for s in sentences if len(s) >= 40 and s not in outside]
        assert blocks and out[f"chapter {name}"], name
    for master in sorted((ROOT / "notebooks" / "labs").glob("*.py")):
        # what only the solution holds, cell by cell (a function's signature above its solution is the prompt's)
        texts = [_plain(t) for t in _solution_texts(master.stem)]
        out[f"lab {master.stem}"] = [t for t in texts if len(t) >= 25 and not t.startswith("#")]
        assert out[f"lab {master.stem}"], master
    return out


def _texts(path: Path, data: bytes):
    """``(name, plain text)`` of a file, and of every member of a zip or every string of a notebook."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for member in z.namelist():
                yield from _texts(path / member, z.read(member))
        return
    text = data.decode("utf-8", errors="replace")
    if path.suffix == ".ipynb":
        nb = json.loads(text)
        parts = ["".join(c.get("source", "")) for c in nb.get("cells", [])]
        parts += [json.dumps(o) for c in nb.get("cells", []) for o in c.get("outputs", [])]
        text = "\n".join(parts)
    yield str(path), _plain(text)


def test_no_file_of_the_student_edition_holds_a_solution(student_book, built_book):
    project, _ = built_book
    needles = solution_texts(project)
    files = [
        p
        for p in student_book.rglob("*")
        if p.is_file() and p.suffix not in (".png", ".svg", ".woff2", ".ico")
    ]
    assert any(p.suffix == ".zip" for p in files), "the student edition links the labs' student zips"
    leaks = []
    for path in files:
        for where, text in _texts(path.relative_to(student_book), path.read_bytes()):
            leaks += [(where, source, n[:70]) for source, ns in needles.items() for n in ns if n in text]
    assert not leaks, leaks[:10]
    for name in CHAPTERS:  # and the downloads are the reader's notebooks, without the solutions
        for path in _downloads(student_book, name):
            nb = json.loads(path.read_text(encoding="utf-8"))
            _check_reader(nb, name, str(path))
            assert "Solution to" not in _markdown(nb), path


def test_the_full_edition_holds_the_solutions_the_student_search_looks_for(built_book):
    """The search of the student edition can fail: the same needles are found in the full edition."""
    project, _ = built_book
    needles = solution_texts(project)
    pages = {
        name: _plain((project / "_build" / "html" / "book" / "chapters" / f"{name}.html").read_text("utf-8"))
        for name in CHAPTERS
    }
    for name in CHAPTERS:
        found = [n for n in needles[f"chapter {name}"] if n in pages[name]]
        assert len(found) >= len(needles[f"chapter {name}"]) // 2, (name, needles[f"chapter {name}"][:3])


# -- a chapter re-run outside the book ------------------------------------------------------------------------


def _outside_env() -> dict:
    """The environment of a person at JupyterLab: none of the pipeline's variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHIFTEVAL_") or k == "SHIFTEVAL_CACHE"}
    return env


def _check_outside_run(nb: dict, name: str) -> None:
    assert _images(nb) == _figure_calls(name), (name, _images(nb), _figure_calls(name))
    tables = len(re.findall(r"^R\.table\(", (ROOT / "notebooks" / f"{name}.py").read_text(), re.MULTILINE))
    shown = sum(1 for c in nb["cells"] for o in c.get("outputs", []) if "text/html" in o.get("data", {}))
    assert shown >= tables, (name, shown, tables)
    marks = [
        "".join(o["data"]["text/markdown"])
        for c in nb["cells"]
        for o in c.get("outputs", [])
        if "".join(o.get("data", {}).get("text/markdown", "")).startswith((HOLDS_MARK, FAILS_MARK))
    ]
    checks = len(
        re.findall(r"^\s*R\.check\(|= R\.check\(", (ROOT / "notebooks" / f"{name}.py").read_text(), re.M)
    )
    assert len(marks) >= checks * 0.9 and marks, (name, len(marks), checks)
    # each sentence as its check formatted it: no field left, no bare id
    assert not [m for m in marks if re.search(r"\{[a-z_]+(\[\d\])?(\.[a-z])?(:[^}]*)?\}(?!`)", m)], marks[:3]


@pytest.mark.slow
def test_a_chapter_run_outside_the_book_shows_its_figures_tables_and_sentences(tmp_path):
    """Plain papermill, from ``notebooks/``, without the pipeline: what a person at JupyterLab sees."""
    import jupytext
    import papermill

    from shifteval.book.project import get_chapter, load_param_set

    name = "linear-fits"
    nb = jupytext.read(ROOT / "notebooks" / f"{name}.py", fmt="py:percent")
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    smoke = load_param_set(get_chapter(name), "smoke").parameters
    saved = dict(os.environ)
    try:
        os.environ.clear()
        os.environ.update(_outside_env())
        out = papermill.execute_notebook(
            nb, str(tmp_path / f"{name}.ipynb"), parameters=smoke, cwd=str(ROOT / "notebooks"),
            kernel_name="python3", progress_bar=False,
        )  # fmt: skip
    finally:
        os.environ.clear()
        os.environ.update(saved)
    _check_outside_run(json.loads(json.dumps(out)), name)


@pytest.mark.slow
@pytest.mark.heavy
def test_the_source_converted_and_executed_with_nbconvert_shows_an_image_per_figure(tmp_path):
    """As a reader would: ``jupytext --to ipynb``, then ``jupyter nbconvert --execute`` from ``notebooks/``."""
    name = "linear-fits"
    bin_dir = Path(sys.executable).parent
    target = tmp_path / f"{name}.ipynb"
    subprocess.run(
        [bin_dir / "jupytext", "--to", "ipynb", "--output", target, ROOT / "notebooks" / f"{name}.py"],
        check=True, capture_output=True,
    )  # fmt: skip
    ran = subprocess.run(
        [bin_dir / "jupyter", "nbconvert", "--to", "notebook", "--execute", "--output", target.name,
         "--output-dir", tmp_path, target],
        cwd=ROOT / "notebooks", capture_output=True, text=True, env=_outside_env(),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    _check_outside_run(json.loads(target.read_text(encoding="utf-8")), name)


@pytest.mark.slow
def test_jupyterlab_opens_a_chapter_source_as_a_notebook_on_the_projects_kernel(tmp_path):
    """``make lab``'s server: a chapter's jupytext source opens as a notebook (paired with an .ipynb), and
    the kernel it names is this environment's Python."""
    import socket
    import time
    import urllib.request

    from conftest import copy_project

    project = copy_project(tmp_path / "project")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [Path(sys.executable).parent / "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         "--IdentityProvider.token=t", "--allow-root", "--notebook-dir", project / "notebooks"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}/api"
    try:
        for _ in range(600):  # the server starts in seconds; no limit beyond its starting
            try:
                urllib.request.urlopen(f"{base}/status?token=t", timeout=None)
                break
            except OSError:
                if server.poll() is not None:
                    raise AssertionError(server.stderr.read()[-3000:]) from None
                time.sleep(0.2)
        with urllib.request.urlopen(
            f"{base}/contents/linear-fits.py?type=notebook&token=t", timeout=None
        ) as r:
            model = json.loads(r.read())
        specs = json.loads(urllib.request.urlopen(f"{base}/kernelspecs?token=t", timeout=None).read())
    finally:
        server.terminate()
        server.wait()
    assert model["type"] == "notebook"
    cells = model["content"]["cells"]
    assert any("tags" in c["metadata"] and "parameters" in c["metadata"]["tags"] for c in cells)
    assert model["content"]["metadata"]["kernelspec"]["name"] == "python3"
    kernel = specs["kernelspecs"]["python3"]["spec"]["argv"][0]
    assert Path(kernel).resolve().parent == Path(sys.executable).resolve().parent or kernel == "python"
