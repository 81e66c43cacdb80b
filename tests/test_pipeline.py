"""The chapter pipeline and the `shifteval` command line."""

import json

import pytest
from conftest import shifteval

from shifteval.book import pipeline

BROKEN = """# %% [markdown]
# # A chapter that fails

# %% tags=["parameters"]
divisor = 1
results_path = None

# %%
from shifteval.book import results

value = 1 / divisor

# %%
raise ValueError(f"deliberate failure with divisor={divisor}")

# %%
results.record(results_path, {"value": value})
"""

TINY = """# %% [markdown]
# # A tiny chapter

# %% tags=["parameters"]
scale = 2
label = "x"
results_path = None

# %%
from shifteval.book import results

summary = results.record(results_path, {"doubled": 21 * scale, "label": label})
"""


def _add_chapter(project, name, source, params=None, first=False):
    """Add a chapter after linear-fits, or (``first``) as the first part of the book."""
    (project / "notebooks" / f"{name}.py").write_text(source)
    pdir = project / "notebooks" / "params" / name
    pdir.mkdir(parents=True)
    (pdir / "default.yaml").write_text(params or "description: test\nparameters: {}\n")
    toc = (project / "_toc.yml").read_text()
    if first:
        toc = toc.replace(
            "parts:\n", f"parts:\n  - caption: Test\n    chapters:\n      - file: book/chapters/{name}\n", 1
        )
    else:
        toc = toc.replace(
            "      - file: book/chapters/linear-fits",
            f"      - file: book/chapters/linear-fits\n      - file: book/chapters/{name}",
        )
    (project / "_toc.yml").write_text(toc)


def test_list_shows_chapters_in_toc_order_with_parameter_sets(project):
    _add_chapter(project, "tiny", TINY)
    out = shifteval("list", cwd=project)
    assert out.returncode == 0, out.stderr
    names = [line.split()[0] for line in out.stdout.strip().splitlines()]
    assert names == [
        "replication-world",
        "linear-fits",
        "tiny",
        "selection-bias",
        "matched-evaluation",
        "ood-autoeval",
        "mlm",
    ]
    assert "default, real, smoke" in out.stdout.splitlines()[0]


def test_every_chapter_has_the_three_parameter_sets():
    for chapter in pipeline.chapters():
        assert {"default", "smoke", "real"} <= set(chapter.param_sets()), chapter.name
        for name in chapter.param_sets():
            ps = pipeline.load_param_set(chapter, name)
            pipeline.resolve_parameters(chapter, ps, {})  # every key is a real parameter
            assert ps.description


def test_unknown_parameter_is_refused_before_anything_runs(project):
    out = shifteval("run", "linear-fits", "-p", "n_bot=10", cwd=project)
    assert out.returncode != 0
    assert "unknown parameter(s) n_bot" in out.stderr
    assert "valid names: ci, gaussian_images, gaussian_models, n_boot, seed, world, zoo_size" in out.stderr
    assert not (project / "book" / "chapters" / "linear-fits.ipynb").exists()
    assert not (project / "_build").exists()


def test_unknown_chapter_and_parameter_set(project):
    out = shifteval("run", "linear-fit", cwd=project)
    assert (
        out.returncode != 0
        and "unknown chapter 'linear-fit'; chapters: replication-world, linear-fits, selection-bias, matched-evaluation, ood-autoeval, mlm"
        in out.stderr
    )
    out = shifteval("run", "linear-fits", "--params", "huge", cwd=project)
    assert out.returncode != 0 and "no parameter set 'huge'; available: default, real, smoke" in out.stderr


def test_reserved_parameter_cannot_be_set(project):
    out = shifteval("run", "linear-fits", "-p", "results_path=/tmp/x", cwd=project)
    assert out.returncode != 0 and "unknown parameter(s) results_path" in out.stderr


def test_failing_chapter_reports_cell_and_exception_and_is_kept_out_of_the_book(project):
    _add_chapter(project, "broken", BROKEN, first=True)
    out = shifteval("run", "broken", "-p", "divisor=3", cwd=project)
    assert out.returncode == 1
    assert "chapter 'broken' failed in cell" in out.stderr
    assert "ValueError: deliberate failure with divisor=3" in out.stderr
    failed = project / "_build" / "failed" / "broken.ipynb"
    assert failed.is_file() and "deliberate failure" in failed.read_text()
    assert not (project / "book" / "chapters" / "broken.ipynb").exists()
    assert not (project / "book" / "chapters" / "broken.results.json").exists()
    # a build stops at the failure (the first chapter) and never runs jupyter-book
    out = shifteval("build", cwd=project, timeout=600)
    assert out.returncode == 1 and "chapter 'broken' failed" in out.stderr
    assert not (project / "_build" / "html").exists()


def test_results_cache_hit_miss_and_force(project):
    _add_chapter(project, "tiny", TINY, "description: tiny\ntimeout: 60\nparameters:\n  scale: 3\n")
    first = shifteval("run", "tiny", cwd=project)
    assert first.returncode == 0, first.stderr
    nb_path = project / "book" / "chapters" / "tiny.ipynb"
    res = json.loads((project / "book" / "chapters" / "tiny.results.json").read_text())
    assert res["doubled"] == 63 and res["label"] == "x"
    prov = res["provenance"]
    assert prov["parameter_set"] == "default" and prov["parameters"] == {"scale": 3}
    meta = json.loads(nb_path.read_text())["metadata"]["shifteval"]
    assert meta["cache_key"] == prov["cache_key"] and meta["library_version"] == prov["library_version"]
    assert "duration_s" in meta and "git_commit" in meta
    mtime = nb_path.stat().st_mtime_ns

    again = shifteval("run", "tiny", cwd=project)
    assert "up to date" in again.stderr and nb_path.stat().st_mtime_ns == mtime  # cache hit

    changed = shifteval("run", "tiny", "-p", "label=y", cwd=project)  # parameters changed: miss
    assert "executing" in changed.stderr
    assert json.loads((project / "book" / "chapters" / "tiny.results.json").read_text())["label"] == "y"

    src = project / "notebooks" / "tiny.py"
    src.write_text(src.read_text() + "\n# %%\nprint('edited')\n")  # source changed: miss
    edited = shifteval("run", "tiny", "-p", "label=y", cwd=project)
    assert "executing" in edited.stderr

    forced = shifteval("run", "tiny", "-p", "label=y", "--force", cwd=project)
    assert "executing" in forced.stderr


def test_out_folder_and_parameter_file(project, tmp_path):
    _add_chapter(project, "tiny", TINY)
    mine = tmp_path / "mine.yaml"
    mine.write_text("description: mine\nparameters:\n  scale: 5\n")
    out = shifteval("run", "tiny", "--params", str(mine), "--out", str(tmp_path / "elsewhere"), cwd=project)
    assert out.returncode == 0, out.stderr
    res = json.loads((tmp_path / "elsewhere" / "tiny.results.json").read_text())
    assert res["doubled"] == 105 and res["provenance"]["parameter_set"] == "mine"


def test_cache_key_covers_data_files_named_by_parameters(project):
    _add_chapter(project, "tiny", TINY)
    chapter = pipeline.get_chapter("tiny", project)
    data = project / "data.csv"
    data.write_text("a,b\n1,2\n")
    key1 = pipeline.cache_key(chapter, {"label": "data.csv"})
    data.write_text("a,b\n1,3\n")
    assert pipeline.cache_key(chapter, {"label": "data.csv"}) != key1
    assert pipeline.cache_key(chapter, {"label": "data.csv"}) == pipeline.cache_key(
        chapter, {"label": "data.csv"}
    )


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        (["n=3"], {"n": 3}),
        (["x=0.5", "t=[a, b]"], {"x": 0.5, "t": ["a", "b"]}),
        (["s=hello"], {"s": "hello"}),
    ],
)
def test_parse_overrides(pairs, expected):
    assert pipeline.parse_overrides(pairs) == expected


def test_parse_overrides_refuses_malformed_pairs():
    with pytest.raises(pipeline.PipelineError, match="key=value"):
        pipeline.parse_overrides(["novalue"])


def test_malformed_parameter_file(project, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("description: x\nparameter:\n  n_boot: 3\n")
    out = shifteval("run", "linear-fits", "--params", str(bad), cwd=project)
    assert out.returncode == 1 and "expected keys description, timeout, parameters" in out.stderr
