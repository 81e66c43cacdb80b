"""The chapter pipeline and the `shifteval` command line."""

import json
import os

import pytest
from conftest import shifteval

from shifteval.book import pipeline, project, schedule
from shifteval.book.project import (
    ChapterFailed,
    PipelineError,
    chapters,
    get_chapter,
    load_param_set,
    resolve_parameters,
)
from shifteval.book.provenance import cache_key

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
        "your-replication",
    ]
    assert "default, real, smoke" in out.stdout.splitlines()[0]


def test_every_chapter_has_the_three_parameter_sets():
    for chapter in chapters():
        assert {"default", "smoke", "real"} <= set(chapter.param_sets()), chapter.name
        for name in chapter.param_sets():
            ps = load_param_set(chapter, name)
            resolve_parameters(chapter, ps, {})  # every key is a real parameter
            assert ps.description


def test_unknown_parameter_is_refused_before_anything_runs(project):
    out = shifteval("run", "linear-fits", "-p", "n_bot=10", cwd=project)
    assert out.returncode != 0
    assert "unknown parameter(s) n_bot" in out.stderr
    assert (
        "valid names: ci, gaussian_images, gaussian_models, n_boot, per_image_boot, seed, world, zoo_size"
        in out.stderr
    )
    assert not (project / "book" / "chapters" / "linear-fits.ipynb").exists()
    assert not (project / "_build").exists()


def test_unknown_chapter_and_parameter_set(project):
    out = shifteval("run", "linear-fit", cwd=project)
    assert (
        out.returncode != 0
        and "unknown chapter 'linear-fit'; chapters: replication-world, linear-fits, selection-bias, matched-evaluation, ood-autoeval, mlm, your-replication"
        in out.stderr
    )
    out = shifteval("run", "linear-fits", "--params", "huge", cwd=project)
    assert out.returncode != 0 and "no parameter set 'huge'; available: default, real, smoke" in out.stderr


def test_reserved_parameter_cannot_be_set(project):
    out = shifteval("run", "linear-fits", "-p", "results_path=/tmp/x", cwd=project)
    assert out.returncode != 0 and "unknown parameter(s) results_path" in out.stderr


@pytest.mark.slow
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
    # a build stops at the failure (the first chapter) and never runs jupyter-book; the chapters that wait
    # for nothing would start beside it and finish first (tested with tiny chapters), so here only those
    # that wait for replication-world stay
    toc = project / "_toc.yml"
    toc.write_text("".join(line for line in toc.read_text().splitlines(keepends=True)
                           if not line.endswith(("chapters/ood-autoeval\n", "chapters/mlm\n"))))  # fmt: skip
    out = shifteval("build", cwd=project)
    assert out.returncode == 1 and "chapter 'broken' failed" in out.stderr
    assert not (project / "_build" / "html").exists()


@pytest.mark.slow
def test_results_cache_hit_miss_and_force(project):
    _add_chapter(project, "tiny", TINY, "description: tiny\ntimeout: 60\nparameters:\n  scale: 3\n")
    first = shifteval("run", "tiny", cwd=project)
    assert first.returncode == 0, first.stderr
    nb_path = project / "book" / "chapters" / "tiny.ipynb"
    res = json.loads((project / "book" / "chapters" / "tiny.results.json").read_text())
    assert res["doubled"] == 63 and res["label"] == "x"
    prov = res["provenance"]
    assert prov["parameter_set"] == "default" and prov["injected"] == {"scale": 3}
    # the record holds every parameter's value: the set's, and the chapter's default for the rest
    assert prov["parameters"] == {"scale": 3, "label": "x", "results_path": None}
    meta = json.loads(nb_path.read_text())["metadata"]["shifteval"]
    assert meta["cache_key"] == prov["cache_key"] and meta["library_version"] == prov["library_version"]
    assert "duration_s" in meta and "git_commit" in meta
    mtime = nb_path.stat().st_mtime_ns

    again = shifteval("run", "tiny", cwd=project)
    assert "up to date" in again.stderr and nb_path.stat().st_mtime_ns == mtime  # cache hit

    # the set's own value as an override: the same parameters, but the run only reports its claims, so it
    # must not stand in for the default run, nor the default run for it
    same_values = shifteval("run", "tiny", "-p", "scale=3", cwd=project)
    assert "executing" in same_values.stderr, same_values.stderr
    assert not json.loads((project / "book" / "chapters" / "tiny.results.json").read_text())["provenance"][
        "strict_claims"
    ]
    default_again = shifteval("run", "tiny", cwd=project)
    assert "executing" in default_again.stderr, default_again.stderr

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
    chapter = get_chapter("tiny", project)
    data = project / "data.csv"
    data.write_text("a,b\n1,2\n")
    key1 = cache_key(chapter, {"label": "data.csv"})
    data.write_text("a,b\n1,3\n")
    assert cache_key(chapter, {"label": "data.csv"}) != key1
    assert cache_key(chapter, {"label": "data.csv"}) == cache_key(chapter, {"label": "data.csv"})


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        (["n=3"], {"n": 3}),
        (["x=0.5", "t=[a, b]"], {"x": 0.5, "t": ["a", "b"]}),
        (["s=hello"], {"s": "hello"}),
    ],
)
def test_parse_overrides(pairs, expected):
    assert project.parse_overrides(pairs) == expected


def test_parse_overrides_refuses_malformed_pairs():
    with pytest.raises(PipelineError, match="key=value"):
        project.parse_overrides(["novalue"])


def test_malformed_parameter_file(project, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("description: x\nparameter:\n  n_boot: 3\n")
    out = shifteval("run", "linear-fits", "--params", str(bad), cwd=project)
    assert out.returncode == 1 and "expected keys description, timeout, parameters" in out.stderr


# --- parameters are type-checked before anything runs -------------------------------------------


def test_type_mismatch_is_refused_before_the_kernel_starts(project):
    _add_chapter(project, "tiny", TINY)
    out = shifteval("run", "tiny", "-p", "scale=abc", cwd=project)
    assert out.returncode == 1
    assert "parameter 'scale' of chapter 'tiny': expected an integer (like its default 2)" in out.stderr
    assert "got the string 'abc'" in out.stderr and "executing" not in out.stderr
    assert not (project / "book" / "chapters" / "tiny.results.json").exists()


@pytest.mark.parametrize(
    ("default", "value", "ok"),
    [(2, 3, True), (2, 2.5, False), (2, True, False), (0.5, 1, True), ("a", 1, False), ([1], [], True),
     ({}, [], False), (None, "anything", True), (True, 1, False), (3, None, True)],
)  # fmt: skip
def test_type_mismatch_rules(default, value, ok):
    assert (project.type_mismatch(default, value) is None) == ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [(40, True), ([32, 48], True), (40.5, False), ("many", False), ({"lo": 32}, False), (True, False)],
)
def test_an_annotated_parameter_takes_each_declared_type(value, ok):
    source = '# %% tags=["parameters"]\nannotators: int | list = 40  # a number, or [lo, hi]\nseed = 0\n'
    accepted = project.parameter_types(source)
    assert accepted == {"annotators": (int, list)}
    assert project.notebook_parameters(source) == {"annotators": 40, "seed": 0}
    assert [d["type"] for d in project.parameter_docs(source)] == ["int or list", "int"]
    assert (project.type_mismatch(40, value, accepted["annotators"]) is None) == ok


# --- claims: false in a default run fails, elsewhere it is shown --------------------------------

CLAIMS = """# %% [markdown]
# # A chapter with a claim

# %% tags=["parameters"]
threshold = 1.0

# %%
from shifteval.book import results
from shifteval.book.claims import above

R = results.Results()
value = 2.0
R.claim("value-above-threshold", "The value {value:.1f} is {test} the threshold {threshold:.1f}.",
        above(value, threshold), value=value, threshold=threshold)

# %%
R.record({"value": value})
"""


@pytest.mark.slow
def test_a_claim_flipped_by_a_parameter_is_rendered_as_not_holding(project):
    _add_chapter(project, "claims", CLAIMS, "description: t\nparameters:\n  threshold: 1.0\n")
    ok = shifteval("run", "claims", cwd=project)
    assert ok.returncode == 0, ok.stderr
    res = json.loads((project / "book" / "chapters" / "claims.results.json").read_text())
    assert res["claims"] == [
        {
            "id": "value-above-threshold",
            "text": "The value 2.0 is above the threshold 1.0.",
            "holds": True,
            "test": "above(2, 1)",
        }
    ]
    assert res["provenance"]["strict_claims"] is True
    flipped = shifteval("run", "claims", "-p", "threshold=5", cwd=project)
    assert flipped.returncode == 0, flipped.stderr
    res = json.loads((project / "book" / "chapters" / "claims.results.json").read_text())
    assert res["claims"][0]["holds"] is False and res["provenance"]["strict_claims"] is False
    nb = (project / "book" / "chapters" / "claims.ipynb").read_text()
    assert "Does not hold in this run" in nb and "threshold = 5" in nb


def test_a_false_claim_fails_a_default_run_naming_it(project):
    _add_chapter(project, "claims", CLAIMS, "description: t\nparameters:\n  threshold: 5.0\n")
    out = shifteval("run", "claims", cwd=project)
    assert out.returncode == 1
    assert "ClaimFailed: claim 'value-above-threshold' does not hold in this default run" in out.stderr
    assert "value = 2, threshold = 5" in out.stderr
    assert not (project / "book" / "chapters" / "claims.results.json").exists()


SPANS = """# %% [markdown]
# # A chapter whose claim is written in its prose

# %% tags=["parameters"]
threshold = 1.0

# %%
from shifteval.book import results
from shifteval.book.claims import above

R = results.Results()
value = 2.0
R.record({"value": value})

# %% [markdown]
# Lead. <span claim="value-above">The value {test.a:.1f} is {test} the threshold {test.b:.1f}.</span>
# Tail.

# %% tags=["remove-cell"]
R.check("value-above", above(value, threshold))
"""


@pytest.mark.slow
def test_a_claim_written_in_the_markdown_reaches_the_page_formatted_or_marked(project):
    _add_chapter(project, "spans", SPANS, "description: t\nparameters:\n  threshold: 1.0\n")
    ok = shifteval("run", "spans", cwd=project)
    assert ok.returncode == 0, ok.stderr
    chapters = project / "book" / "chapters"
    res = json.loads((chapters / "spans.results.json").read_text())
    assert res["claims"] == [
        {
            "id": "value-above",
            "text": "The value 2.0 is above the threshold 1.0.",
            "holds": True,
            "test": "above(2, 1)",
        }
    ]
    assert "spans" not in res
    page = json.loads((chapters / "spans.ipynb").read_text())
    prose = ["".join(c["source"]) for c in page["cells"] if c["cell_type"] == "markdown"]
    assert "Lead. The value 2.0 is above the threshold 1.0.\nTail." in prose
    assert not any("<span claim=" in p for p in prose)
    flipped = shifteval("run", "spans", "-p", "threshold=5", cwd=project)
    assert flipped.returncode == 0, flipped.stderr
    page = (chapters / "spans.ipynb").read_text()
    assert (
        "The value 2.0 is above the threshold 5.0. **[does not hold in this run: no values recorded; " in page
    )
    _add_chapter(
        project,
        "unchecked",
        SPANS.replace('R.check("value-above"', '0 and print("value-above"'),
        "description: t\n",
    )
    out = shifteval("run", "unchecked", cwd=project)
    assert (
        out.returncode == 1 and "claim span(s) ['value-above'] were never checked by the run" in out.stderr
    ), out.stderr[-800:]
    assert not (chapters / "unchecked.ipynb").exists()


def test_a_solution_wraps_its_paragraph_in_a_dropdown_and_marks_a_false_claim():
    from shifteval.book import results

    R = results.Results(path=None, strict=False)
    ok = R.claim("s-ok", "The value {v} is positive.", True, v=2)
    bad = R.claim("s-bad", "The value {v} is negative.", False, v=2)
    text = R.solution("ex-1", "Because.", ok)._repr_markdown_()
    assert text == "````{solution} ex-1\n:class: dropdown\nBecause. The value 2 is positive.\n````"
    failing = R.solution("ex-2", bad).markdown()
    assert failing.startswith("````{solution} ex-2\n") and failing.endswith("\n````")
    assert results.NOT_HOLDING_TITLE in failing and "v = 2" in failing
    assert [c["id"] for c in R.as_dict()["claims"]] == ["s-ok", "s-bad"]


# --- concurrency, faults, permissions ------------------------------------------------------------

SLOW = """# %% [markdown]
# # A chapter that takes a moment

# %% tags=["parameters"]
seed = 0

# %%
import time

import numpy as np

from shifteval.book import results

time.sleep(1.5)
R = results.Results()
R.record({"draw": float(np.random.default_rng(seed).normal()), "seed": seed})
"""


def _numbers(path):
    res = json.loads(path.read_text())
    return {k: v for k, v in res.items() if k != "provenance"}


@pytest.mark.slow
def test_concurrent_runs_each_publish_their_own_results(project, tmp_path):
    import subprocess
    import sys

    _add_chapter(project, "slow", SLOW)
    alone = {}
    for seed in (11, 22):
        out = shifteval(
            "run", "slow", "-p", f"seed={seed}", "--out", str(tmp_path / f"alone{seed}"), cwd=project
        )
        assert out.returncode == 0, out.stderr
        alone[seed] = _numbers(tmp_path / f"alone{seed}" / "slow.results.json")
    assert alone[11] != alone[22]
    cmd = [sys.executable, "-m", "shifteval.cli", "run", "slow", "--force"]
    procs = {
        seed: subprocess.Popen([*cmd, "-p", f"seed={seed}", "--out", str(tmp_path / f"both{seed}")], cwd=project,
                               stderr=subprocess.PIPE, text=True)
        for seed in (11, 22)
    }  # fmt: skip
    shared = subprocess.Popen([*cmd, "-p", "seed=22"], cwd=project, stderr=subprocess.PIPE, text=True)
    for proc in (*procs.values(), shared):
        assert proc.wait() == 0, proc.stderr.read()
    for seed in (11, 22):
        assert _numbers(tmp_path / f"both{seed}" / "slow.results.json") == alone[seed]
    assert _numbers(project / "book" / "chapters" / "slow.results.json") == alone[22]
    assert not list((project / "_build" / ".running").iterdir())  # every staging folder removed


def test_published_files_are_world_readable(project):
    _add_chapter(project, "tiny", TINY)
    assert shifteval("run", "tiny", cwd=project).returncode == 0
    for name in ("tiny.ipynb", "tiny.results.json"):
        mode = (project / "book" / "chapters" / name).stat().st_mode
        assert mode & 0o044 == 0o044, (name, oct(mode))


def _kill_at(cmd, cwd, delay):
    import signal
    import subprocess
    import time

    proc = subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    time.sleep(delay)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)  # the run and its kernel
    proc.wait()


def _no_partial_files(folder):
    leftovers = [p.name for p in folder.rglob("*") if p.name.endswith(".tmp")]
    assert not leftovers, leftovers


@pytest.mark.slow
def test_sigkill_of_run_then_rerun_gives_identical_results_and_no_partial_files(project):
    import random
    import sys

    _add_chapter(project, "slow", SLOW)
    chapters = project / "book" / "chapters"
    reference = shifteval("run", "slow", "-p", "seed=5", cwd=project)
    assert reference.returncode == 0, reference.stderr
    expected = _numbers(chapters / "slow.results.json")
    cmd = [sys.executable, "-m", "shifteval.cli", "run", "slow", "--force", "-p", "seed=5"]
    for delay in sorted(random.Random(0).uniform(0.2, 6.0) for _ in range(3)):
        _kill_at(cmd, project, delay)
        _no_partial_files(chapters)
        again = shifteval("run", "slow", "-p", "seed=5", "--force", cwd=project)
        assert again.returncode == 0, again.stderr
        assert _numbers(chapters / "slow.results.json") == expected
        nb = json.loads((chapters / "slow.ipynb").read_text())
        res = json.loads((chapters / "slow.results.json").read_text())
        assert nb["metadata"]["shifteval"]["cache_key"] == res["provenance"]["cache_key"]
    stale = [p for p in (project / "_build" / ".running").iterdir()]
    assert not stale, stale


@pytest.mark.slow
def test_sigkill_of_build_then_rebuild_gives_identical_results(tmp_path):
    import random
    import sys

    project = tmp_path / "mini"
    (project / "book" / "chapters").mkdir(parents=True)
    (project / "book" / "intro.md").write_text("# A small book\n\nOne chapter.\n")
    (project / "_config.yml").write_text(
        'title: mini\nexecute:\n  execute_notebooks: "off"\nonly_build_toc_files: true\n'
    )
    (project / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nchapters:\n  - file: book/chapters/slow\n"
    )
    (project / "notebooks" / "params" / "slow").mkdir(parents=True)
    (project / "notebooks" / "slow.py").write_text(SLOW)
    (project / "notebooks" / "params" / "slow" / "default.yaml").write_text(
        "description: t\nparameters:\n  seed: 3\n"
    )
    cmd = [sys.executable, "-m", "shifteval.cli", "build", "--force"]
    for delay in sorted(random.Random(1).uniform(0.5, 12.0) for _ in range(3)):
        _kill_at(cmd, project, delay)
        _no_partial_files(project / "book" / "chapters")
    out = shifteval("build", cwd=project)
    assert out.returncode == 0, out.stderr[-3000:]
    res = _numbers(project / "book" / "chapters" / "slow.results.json")
    assert (res["draw"], res["seed"]) == (_draw(3), 3)
    assert (project / "_build" / "html" / "book" / "chapters" / "slow.html").is_file()


def _draw(seed):
    import numpy as np

    return float(np.random.default_rng(seed).normal())


@pytest.mark.parametrize("text", ["3\n", "- a: 1\n- b: 2\n", "just words\n"])
def test_parameter_file_that_is_not_a_mapping(tmp_path, text):
    from shifteval.book import project as proj

    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(proj.PipelineError, match="expected a mapping with keys description"):
        proj.load_param_set(proj.get_chapter("linear-fits"), str(bad))


THREADS = """# %% [markdown]
# # A chapter that reports its thread pools

# %% tags=["parameters"]
label = "x"

# %%
import os

import threadpoolctl
import torch

from shifteval.book import results

pools = {p["user_api"]: p["num_threads"] for p in threadpoolctl.threadpool_info()}
R = results.Results()
R.record({"torch": torch.get_num_threads(), "omp": os.environ.get("OMP_NUM_THREADS"), "pools": pools})
"""


def _run_with_env(project, env, *args):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "shifteval.cli", "run", *args],
        cwd=project, capture_output=True, text=True, env={**os.environ, **env},
    )  # fmt: skip


@pytest.mark.slow
def test_a_chapter_computes_on_the_same_thread_count_whatever_the_callers(project):
    from shifteval.book.threads import DEFAULT_THREADS

    _add_chapter(project, "threads", THREADS)
    res_path = project / "book" / "chapters" / "threads.results.json"
    one = _run_with_env(project, {"OMP_NUM_THREADS": "1", "SHIFTEVAL_THREADS": ""}, "threads")
    assert one.returncode == 0, one.stderr
    res = json.loads(res_path.read_text())
    # the caller ran on one thread; torch, OpenMP and BLAS in the kernel run on the book's count
    assert res["torch"] == DEFAULT_THREADS and res["omp"] == str(DEFAULT_THREADS)
    assert set(res["pools"].values()) == {DEFAULT_THREADS}, res["pools"]
    assert res["provenance"]["threads"] == DEFAULT_THREADS
    key = res["provenance"]["cache_key"]

    three = _run_with_env(project, {"SHIFTEVAL_THREADS": "3"}, "threads")  # another count: another key
    assert "executing" in three.stderr, three.stderr
    res = json.loads(res_path.read_text())
    assert res["torch"] == 3 and res["provenance"]["threads"] == 3 and res["provenance"]["cache_key"] != key

    for bad in ("0", "two", "-1"):
        out = _run_with_env(project, {"SHIFTEVAL_THREADS": bad}, "threads", "--force")
        assert out.returncode != 0 and "SHIFTEVAL_THREADS must be a positive integer" in out.stderr, (
            out.stderr
        )
        assert "executing" not in out.stderr
    assert json.loads(res_path.read_text())["torch"] == 3  # nothing published by the refused runs


def test_the_kernel_start_up_imports_no_library_and_sizes_each_pool_on_import():
    """``pin`` (the kernel's start-up) leaves torch and numpy unimported; each is sized when a cell imports it."""
    import subprocess
    import sys

    from shifteval.book.threads import kernel_variables

    code = (
        "import sys; from shifteval.book.threads import pin; pin(3); "
        "assert not {'numpy', 'torch'} & set(sys.modules), 'imported at start-up'; "
        "import threadpoolctl, torch; "
        "print(torch.get_num_threads(), *sorted({p['num_threads'] for p in threadpoolctl.threadpool_info()}))"
    )
    env = {**os.environ, **kernel_variables(1)}  # the pools' start-up sizes say one thread
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3", "3"], out.stdout


ONE_THREAD_HEADER = "# ---\n# jupyter:\n#   shifteval:\n#     threads: {threads}\n# ---\n\n"

SIDE = """# %% [markdown]
# # A chapter that declares one thread

# %% tags=["parameters"]
fail = False

# %%
import os
import time

import torch

from shifteval.book import results

start = time.time()
time.sleep(3)
if fail:
    raise RuntimeError("deliberate failure beside another chapter")
R = results.Results()
R.record({"start": start, "end": time.time(), "torch": torch.get_num_threads(),
          "tunables": os.environ.get("GLIBC_TUNABLES", ""), "nice": os.nice(0),
          "autogroup": open("/proc/self/autogroup").read() if os.path.exists("/proc/self/autogroup") else None})
"""


def _side_jobs(project, names):
    return {
        n: dict(params="default", overrides={}, force=False, root=project, progress=False,
                data_root=project / "data", out=None, note=None)
        for n in names
    }  # fmt: skip


@pytest.mark.slow
def test_one_thread_chapters_run_side_by_side_each_on_one_thread(project, monkeypatch):
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the chapters run one after another")
    monkeypatch.setenv("SHIFTEVAL_THREADS", "3")  # a declared count is an upper bound
    for name in ("side-a", "side-b"):
        _add_chapter(project, name, ONE_THREAD_HEADER.format(threads=1) + SIDE)
    assert project_threads(project, "side-a") == 1 and project_threads(project, "replication-world") is None
    pipeline.run_all(_side_jobs(project, ["side-a", "side-b"]))
    a, b = (
        json.loads((project / "book" / "chapters" / f"{n}.results.json").read_text())
        for n in ("side-a", "side-b")
    )
    assert a["start"] < b["end"] and b["start"] < a["end"], (a, b)  # they overlapped in time
    for res, nice in ((a, 0), (b, schedule.YIELD)):  # the longest (the first: no estimate) keeps its priority
        assert res["torch"] == 1 and res["provenance"]["threads"] == 1
        assert "glibc.malloc.mmap_threshold=33554432" in res["tunables"]
        assert res["nice"] == min(os.nice(0) + nice, 19)  # the others yield to the chapters on every core
        if res["autogroup"] is not None:  # and so does the kernel's session, where Linux groups by session
            assert res["autogroup"].split()[-1] == str(nice), res["autogroup"]


@pytest.mark.slow
def test_a_failure_beside_another_chapter_stops_the_build_and_names_it(project):
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the chapters run one after another")
    _add_chapter(project, "side-ok", ONE_THREAD_HEADER.format(threads=1) + SIDE)
    _add_chapter(
        project,
        "side-bad",
        ONE_THREAD_HEADER.format(threads=1) + SIDE,
        "description: t\nparameters: {fail: true}\n",
    )
    with pytest.raises(ChapterFailed, match="chapter 'side-bad' failed.*deliberate failure beside"):
        pipeline.run_all(_side_jobs(project, ["side-ok", "side-bad"]))
    chapters = project / "book" / "chapters"
    assert (chapters / "side-ok.results.json").is_file()  # the other finished and published
    assert not (chapters / "side-bad.ipynb").exists() and not (project / "_build" / "html").exists()


AFTER_HEADER = "# ---\n# jupyter:\n#   shifteval:\n#     threads: 1\n#     after: {after}\n# ---\n\n"


def _times(project, name):
    res = json.loads((project / "book" / "chapters" / f"{name}.results.json").read_text())
    return res["start"], res["end"]


@pytest.mark.slow
def test_a_one_thread_chapter_starts_beside_the_first_unless_it_waits_for_it(project):
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the chapters run one after another")
    _add_chapter(project, "first", SIDE)  # declares no thread count: runs in this process, first
    _add_chapter(project, "free", ONE_THREAD_HEADER.format(threads=1) + SIDE)
    _add_chapter(project, "waits", AFTER_HEADER.format(after="[first]") + SIDE)
    assert get_chapter("waits", project).after == ("first",) and get_chapter("free", project).after == ()
    results = pipeline.run_all(_side_jobs(project, ["first", "waits", "free"]))
    assert list(results) == ["first", "waits", "free"]
    first, free, waits = (_times(project, n) for n in ("first", "free", "waits"))
    nice = json.loads((project / "book" / "chapters" / "first.results.json").read_text())["nice"]
    assert nice == os.nice(0)  # the first chapter keeps this process's priority
    assert free[0] < first[1] and first[0] < free[1], (first, free)  # beside the first chapter
    assert waits[0] >= first[1], (first, waits)  # only once the chapter it waits for was done


@pytest.mark.slow
def test_a_failed_first_chapter_starts_none_that_wait_for_it(project):
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the chapters run one after another")
    _add_chapter(project, "bad", SIDE, "description: t\nparameters: {fail: true}\n")
    _add_chapter(project, "free", ONE_THREAD_HEADER.format(threads=1) + SIDE)
    _add_chapter(project, "waits", AFTER_HEADER.format(after="bad") + SIDE)
    with pytest.raises(ChapterFailed, match="chapter 'bad' failed.*deliberate failure beside"):
        pipeline.run_all(_side_jobs(project, ["bad", "waits", "free"]))
    chapters = project / "book" / "chapters"
    assert (chapters / "free.results.json").is_file()  # it was running: it finished and published
    assert not (chapters / "waits.ipynb").exists() and not (chapters / "bad.ipynb").exists()


@pytest.mark.parametrize(
    ("after", "message"),
    [
        ("3", "the header's shifteval.after must be a chapter name or a list of them, got 3"),
        ("[first, 2]", "the header's shifteval.after must be a chapter name or a list of them"),
        ("[nowhere]", "the header's shifteval.after names nowhere, which is not a chapter"),
        ("[loop]", "chapter 'loop' waits for itself \\(after: loop -> loop\\)"),
    ],
)
def test_a_declared_order_that_cannot_run_is_refused_before_anything_runs(project, after, message):
    _add_chapter(project, "first", TINY)
    _add_chapter(project, "loop", AFTER_HEADER.format(after=after) + TINY)
    with pytest.raises(PipelineError, match=message):
        pipeline.run_all(_side_jobs(project, ["first", "loop"]))
    assert not list((project / "book" / "chapters").glob("*.ipynb"))


def test_one_thread_chapters_that_wait_for_each_other_run_in_that_order(project):
    waits = {"long": ("short",), "short": (), "middle": ()}
    assert schedule.in_order(["long", "middle", "short"], waits, done=[]) == ["middle", "short", "long"]
    with pytest.raises(PipelineError, match="waits for itself \\(after: a -> b -> a\\)"):
        schedule.check_order([], ["a", "b"], {"a": ("b",), "b": ("a",)})
    with pytest.raises(PipelineError, match="chapter 'world' uses every core, so it can only wait"):
        schedule.check_order(["world"], ["fits"], {"world": ("fits",), "fits": ()})


@pytest.mark.slow
def test_run_executes_several_chapters_and_refuses_per_chapter_options(project):
    _add_chapter(project, "side-a", ONE_THREAD_HEADER.format(threads=1) + SIDE)
    _add_chapter(project, "tiny", TINY)
    for extra in (["-p", "scale=3"], ["--data", "x"], ["--out", "x"]):
        out = shifteval("run", "tiny", "side-a", *extra, cwd=project)
        assert out.returncode == 1 and "need a single chapter" in out.stderr, out.stderr
    out = shifteval("run", "tiny", "side-a", "nope", cwd=project)
    assert out.returncode == 1 and "unknown chapter 'nope'" in out.stderr
    assert not list((project / "book" / "chapters").glob("*.ipynb"))  # refused before anything ran
    out = shifteval("run", "side-a", "tiny", cwd=project)
    assert out.returncode == 0, out.stderr
    chapters = project / "book" / "chapters"
    assert out.stdout.split() == [str(chapters / "tiny.ipynb"), str(chapters / "side-a.ipynb")]
    assert json.loads((chapters / "tiny.results.json").read_text())["doubled"] == 42


def _dies_at_start(real, deaths):
    """``papermill.execute_notebook`` whose kernel dies at start-up the first ``deaths`` times."""
    calls = []

    def execute(*args, **kwargs):
        calls.append(1)
        if len(calls) <= deaths:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return real(*args, **kwargs)

    return execute, calls


@pytest.mark.slow
def test_a_kernel_that_dies_while_starting_is_started_again(project, monkeypatch, capsys):
    import papermill

    execute, calls = _dies_at_start(papermill.execute_notebook, deaths=pipeline.KERNEL_STARTS - 1)
    monkeypatch.setattr(papermill, "execute_notebook", execute)
    _add_chapter(project, "tiny", TINY)
    result = pipeline.run_chapter("tiny", root=project, progress=False)
    assert result.status == "executed" and len(calls) == pipeline.KERNEL_STARTS
    assert json.loads(result.results.read_text())["doubled"] == 42
    assert "the kernel died while starting" in capsys.readouterr().err


def test_a_kernel_that_keeps_dying_fails_the_run_and_publishes_nothing(project, monkeypatch):
    import papermill

    execute, calls = _dies_at_start(papermill.execute_notebook, deaths=pipeline.KERNEL_STARTS)
    monkeypatch.setattr(papermill, "execute_notebook", execute)
    _add_chapter(project, "tiny", TINY)
    with pytest.raises(ChapterFailed, match="chapter 'tiny': its kernel died while starting, 3 times"):
        pipeline.run_chapter("tiny", root=project, progress=False)
    assert len(calls) == pipeline.KERNEL_STARTS
    assert not (project / "book" / "chapters" / "tiny.ipynb").exists()


def project_threads(root, name):
    return project.get_chapter(name, root).threads


@pytest.mark.parametrize("value", ["0", "two", "true", "-2"])
def test_a_declared_thread_count_must_be_a_positive_integer(project, value):
    _add_chapter(project, "declares", ONE_THREAD_HEADER.format(threads=value) + TINY)
    with pytest.raises(PipelineError, match="declares.py: the header's shifteval.threads must be"):
        project_threads(project, "declares")


@pytest.mark.parametrize("value", ["0", "soon", "false", "-30"])
def test_a_declared_estimate_must_be_a_positive_integer(project, value):
    _add_chapter(
        project, "declares", f"# ---\n# jupyter:\n#   shifteval:\n#     seconds: {value}\n# ---\n\n" + TINY
    )
    with pytest.raises(PipelineError, match="declares.py: the header's shifteval.seconds must be"):
        _ = get_chapter("declares", project).seconds


def test_the_chapters_side_by_side_start_longest_first(project):
    for name, seconds in (("short", 5), ("long", 500), ("unsaid", None), ("middle", 50)):
        extra = f"#     seconds: {seconds}\n" if seconds else ""
        header = f"# ---\n# jupyter:\n#   shifteval:\n#     threads: 1\n{extra}# ---\n\n"
        _add_chapter(project, name, header + TINY)
    _add_chapter(project, "tiny", TINY)  # declares nothing: not side by side
    names = ["short", "tiny", "long", "unsaid", "middle"]
    assert pipeline.side_by_side({n: project for n in names}) == ["long", "middle", "short", "unsaid"]


STARVED = """# %% [markdown]
# # A chapter that needs CPU time

# %% tags=["parameters"]
cpu_seconds = 1.5

# %%
import time

from shifteval.book import results

start, n = time.process_time(), 0
while time.process_time() - start < cpu_seconds:  # busy: wall time grows with every pause of the kernel
    n += 1
R = results.Results()
R.record({"cpu_seconds": cpu_seconds, "iterations_positive": n > 0})
"""


def _throttle(pid, stop_s, run_s, stopped):
    """Pause the process tree of ``pid`` for ``stop_s`` of every ``stop_s + run_s`` seconds until it ends."""
    import contextlib
    import signal
    import time

    import psutil

    root = psutil.Process(pid)
    while True:
        try:
            if root.status() == psutil.STATUS_ZOMBIE:
                return
            tree = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        for p in tree:
            with contextlib.suppress(psutil.NoSuchProcess):
                p.send_signal(signal.SIGSTOP)
        time.sleep(stop_s)
        stopped.append(stop_s)
        for p in tree:
            with contextlib.suppress(psutil.NoSuchProcess):
                p.send_signal(signal.SIGCONT)
        time.sleep(run_s)


@pytest.mark.slow
def test_a_chapter_on_a_tiny_cpu_share_completes_and_publishes(project):
    """The run and its kernel get a quarter of the time they ask for (paused 0.6 s of every 0.8 s): the
    chapter is slow, not hung, so it must complete; no limit of the pipeline may kill it."""
    import subprocess
    import sys
    import threading

    _add_chapter(project, "starved", STARVED)
    proc = subprocess.Popen(
        [sys.executable, "-m", "shifteval.cli", "run", "starved"],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    stopped: list[float] = []
    throttle = threading.Thread(target=_throttle, args=(proc.pid, 0.6, 0.2, stopped), daemon=True)
    throttle.start()
    _, err = proc.communicate()
    throttle.join()
    assert proc.returncode == 0, err[-3000:]
    res = json.loads((project / "book" / "chapters" / "starved.results.json").read_text())
    assert res["iterations_positive"] and res["provenance"]["parameter_set"] == "default"
    cell = json.loads((project / "book" / "chapters" / "starved.ipynb").read_text())["cells"]
    busy = [c for c in cell if c["cell_type"] == "code" and "process_time" in "".join(c["source"])][0]
    # the busy cell really was starved: its wall time is well above the CPU time it used
    assert busy["metadata"]["papermill"]["duration"] > 2.5 * res["cpu_seconds"], busy["metadata"]
    assert sum(stopped) >= 5, sum(stopped)
