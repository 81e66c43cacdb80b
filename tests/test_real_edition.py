"""The real-data edition: `build --params real` fetches what the real sets need and builds _build/real/html."""

import functools
import http.server
import json
import sys
import threading

import pytest
from conftest import SHARED, shifteval

REAL = SHARED / "realdata"

READS_MNIST = """# %% [markdown]
# # Reads MNIST

# %% tags=["parameters"]
data_dir = "nowhere"

# %%
from pathlib import Path

from shifteval.book import results

R = results.Results()
files = sorted(p.name for p in Path(data_dir).iterdir())
R.record({"files": files})
"""

NEEDS_OWN_FILES = """# %% [markdown]
# # Needs the user's own predictions

# %% tags=["parameters"]
predictions_dir = "embedded"

# %%
from shifteval.book import results

R = results.Results()
R.record({"predictions_dir": predictions_dir})
"""


def _mini_project(root):
    (root / "book" / "chapters").mkdir(parents=True)
    (root / "book" / "intro.md").write_text("# A small book\n")
    (root / "_config.yml").write_text(
        'title: mini\nexecute:\n  execute_notebooks: "off"\nonly_build_toc_files: true\n'
    )
    (root / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nchapters:\n  - file: book/chapters/mnist\n  - file: book/chapters/own\n"
    )
    for name, source, real in (
        ("mnist", READS_MNIST, "description: real MNIST\ndata: [mnist]\nparameters:\n  data_dir: '{data}/mnist'\n"),
        ("own", NEEDS_OWN_FILES, "description: Put your predictions in mine/.\npublic_data: false\n"
                                 "parameters:\n  predictions_dir: mine\n"),
    ):  # fmt: skip
        (root / "notebooks" / "params" / name).mkdir(parents=True)
        (root / "notebooks" / f"{name}.py").write_text(source)
        (root / "notebooks" / "params" / name / "default.yaml").write_text(
            "description: embedded\nparameters: {}\n"
        )
        (root / "notebooks" / "params" / name / "real.yaml").write_text(real)
    return root


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def mirror():
    if not (REAL / "mnist").is_dir():
        pytest.skip(f"real data folder {REAL / 'mnist'} is absent")
    handler = functools.partial(_QuietHandler, directory=str(REAL))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/{{name}}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.slow
def test_real_edition_fetches_data_runs_real_sets_and_says_when_there_is_none(tmp_path, mirror, monkeypatch):
    import subprocess

    project = _mini_project(tmp_path / "mini")
    monkeypatch.setenv("SHIFTEVAL_DATA_MIRROR", mirror)
    cmd = [
        sys.executable,
        "-m",
        "shifteval.cli",
        "build",
        "--params",
        "real",
        "--data",
        str(tmp_path / "data"),
    ]
    out = subprocess.run(cmd, cwd=project, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    # the data arrived through `shifteval data get` (verified against the shipped checksums)
    official = sorted(p.name for p in (REAL / "mnist").iterdir() if p.suffix == ".gz" or "ubyte" in p.name)
    got = json.loads(
        (project / "_build" / "real" / "src" / "book" / "chapters" / "mnist.results.json").read_text()
    )
    assert got["files"] == official and got["provenance"]["parameter_set"] == "real"
    own = json.loads(
        (project / "_build" / "real" / "src" / "book" / "chapters" / "own.results.json").read_text()
    )
    assert own["predictions_dir"] == "embedded" and own["provenance"]["parameter_set"] == "default"
    page = (project / "_build" / "real" / "html" / "book" / "chapters" / "own.html").read_text()
    assert "No public real data exists for this chapter" in page and "Put your predictions in mine/." in page
    assert "(real-data edition)" in (project / "_build" / "real" / "html" / "book" / "intro.html").read_text()
    # the default book's chapters are untouched
    assert not list((project / "book" / "chapters").glob("*.ipynb"))
    # a second build finds the data and the chapters current
    again = subprocess.run(cmd, cwd=project, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stderr.count("] up to date (parameter set") == 2, again.stderr[-2000:]  # both chapters
    assert "[book] up to date" in again.stderr  # and the HTML


def test_real_set_keys_are_checked(tmp_path):
    project = _mini_project(tmp_path / "mini")
    (project / "notebooks" / "params" / "own" / "real.yaml").write_text(
        "description: x\npublic_data: maybe\n"
    )
    out = shifteval("run", "own", "--params", "real", cwd=project)
    assert out.returncode == 1 and "'public_data' must be true or false" in out.stderr
