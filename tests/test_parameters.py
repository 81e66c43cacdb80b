"""Each chapter parameter is declared once — default, type and meaning in the chapter's parameters cell."""

import pytest
import yaml
from conftest import ROOT, shifteval

from shifteval.book import project

CHAPTERS = [c.name for c in project.chapters(ROOT)]


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_parameter_says_what_it_means(name):
    chapter = project.get_chapter(name, ROOT)
    docs = project.parameter_docs(chapter.source.read_text(encoding="utf-8"))
    assert docs, f"{name}: no parameters"
    undocumented = [d["name"] for d in docs if len(d["description"]) < 8]
    assert not undocumented, (
        f"{name}: parameters without a one-line meaning in the parameters cell: {undocumented}"
    )


@pytest.mark.parametrize("name", CHAPTERS)
def test_the_default_set_cannot_drift_from_the_notebook(name):
    """``default.yaml`` describes the default run; its values are the parameters cell's, declared nowhere else."""
    data = yaml.safe_load((ROOT / "notebooks" / "params" / name / "default.yaml").read_text())
    assert data.get("description"), f"{name}: default.yaml has no description"
    assert not data.get("parameters"), f"{name}: default.yaml redeclares {sorted(data['parameters'])}"


def test_list_prints_a_chapters_parameters_with_default_type_and_meaning():
    out = shifteval("list", "matched-evaluation", cwd=ROOT)
    assert out.returncode == 0, out.stderr
    line = next(row for row in out.stdout.splitlines() if row.split()[:1] == ["eps"])
    assert "0.005" in line and "(float)" in line and "tolerance" in line
    unknown = shifteval("list", "no-such-chapter", cwd=ROOT)
    assert unknown.returncode == 1 and "no-such-chapter" in unknown.stderr
