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
