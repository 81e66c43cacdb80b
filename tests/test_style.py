"""The project's style is enforced, not only configured: ruff (lint with numpydoc docstring rules, format)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT


def _ruff():
    exe = Path(sys.executable).with_name("ruff")
    found = str(exe) if exe.is_file() else shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed; it is part of the test extra (pip install -e '.[test]')")
    return found


def test_ruff_lint_is_clean():
    out = subprocess.run([_ruff(), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def test_ruff_format_is_clean():
    out = subprocess.run(
        [_ruff(), "format", "--check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


# A code cell of a chapter is a short call into the library; the parameters cell only declares values.
MAX_CELL_LINES = 15


def _code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def test_notebook_code_cells_are_short():
    import jupytext

    long_cells = []
    for path in sorted((ROOT / "notebooks").glob("*.py")):
        for i, cell in enumerate(jupytext.read(path).cells):
            if cell.cell_type != "code" or "parameters" in cell.metadata.get("tags", []):
                continue
            n = _code_lines(cell.source)
            if n > MAX_CELL_LINES:
                long_cells.append(f"{path.name} cell {i} ({n} lines): {cell.source.splitlines()[0][:60]}")
    assert not long_cells, f"code cells over {MAX_CELL_LINES} non-comment lines:\n" + "\n".join(long_cells)


def test_notebooks_are_formatted_without_exemptions():
    # the line count above is only meaningful on formatted code: `# fmt: skip` could pack a cell into few lines
    hits = [
        f"{path.name}:{i}"
        for path in sorted((ROOT / "notebooks").glob("*.py"))
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "fmt: skip" in line or "fmt: off" in line
    ]
    assert not hits, "formatter exemptions in chapters: " + ", ".join(hits)


def _public_functions():
    import importlib
    import inspect
    import pkgutil

    import shifteval

    for info in pkgutil.walk_packages(shifteval.__path__, "shifteval."):
        if info.name.startswith("shifteval.book"):  # book machinery; the science API is below
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            # defined here under its own name (aliases and re-exports are checked where they are defined)
            if (
                not name.startswith("_")
                and inspect.isfunction(obj)
                and obj.__module__ == info.name
                and obj.__name__ == name
            ):
                yield f"{info.name}.{name}", obj


def test_public_functions_have_numpydoc_sections_examples_and_hints():
    import inspect

    problems = []
    functions = list(_public_functions())
    for qualname, func in functions:
        doc = inspect.getdoc(func) or ""
        sig = inspect.signature(func)
        params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
        missing = []
        if params and "Parameters\n----------" not in doc:
            missing.append("Parameters section")
        if "Examples\n--------" not in doc:
            missing.append("Examples section")
        unhinted = [
            p.name
            for p in params
            if p.annotation is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        if unhinted:
            missing.append(f"type hints for {unhinted}")
        if sig.return_annotation is inspect.Signature.empty:
            missing.append("return type hint")
        if missing:
            problems.append(f"{qualname}: {', '.join(missing)}")
    assert len(functions) > 200, "the walk found too few public functions"
    assert not problems, "\n".join(problems)


def test_captions_carry_one_number():
    """A caption's title names what it shows, not a paper's figure or table: the book numbers it."""
    import re

    titled = []
    for path in sorted((ROOT / "notebooks").glob("*.py")):
        for block in re.findall(r"# ```\{glue:figure\}(.*?)# ```", path.read_text(), re.S):
            title = re.search(r"\*\*(.+?)\*\*", block)
            if title and re.search(r"\b(Fig\.|Figures?|Tables?) ?\d", title.group(1)):
                titled.append(f"{path.name}: {title.group(1)}")
    assert not titled, "caption titles with a second number:\n" + "\n".join(titled)


def test_hidden_input_is_at_most_two_fifths_of_a_chapters_code():
    """Opened in Jupyter, a chapter reads as prose, analysis and figures: its claims' sentences are in the
    markdown (``shifteval.book.prose``), so the bookkeeping in cells the book hides stays a minority."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "hidden_share", ROOT / "benchmarks" / "hidden_input_share.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    over = {
        name: f"{hidden} of {total}"
        for name, (hidden, total) in module.shares().items()
        if hidden > 0.4 * total
    }
    assert not over, f"chapters whose hidden code lines exceed 40%: {over}"
