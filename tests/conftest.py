import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
PROJECT_FILES = ("_config.yml", "_toc.yml", "book", "notebooks")


def copy_project(dest: Path) -> Path:
    """A copy of the book sources (not the outputs) in which chapters can run and the book can build."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("*.ipynb", "*.results.json"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def shifteval(*args, cwd, timeout=900):
    """Run the ``shifteval`` command line in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "shifteval.cli", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


@pytest.fixture
def project(tmp_path):
    return copy_project(tmp_path / "project")
