"""The type hints are checked, not only written: mypy, configured in pyproject.toml, finds no error."""

from pathlib import Path

import pytest
from conftest import ROOT


@pytest.fixture(scope="module")
def mypy_errors() -> dict[str, list[str]]:
    """mypy's error lines on src/, by file (relative to the repository root)."""
    api = pytest.importorskip("mypy.api", reason="mypy is part of the test extra (pip install -e '.[test]')")
    stdout, stderr, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "--no-error-summary",
            str(ROOT / "src"),
        ]
    )
    assert status in (0, 1), f"mypy did not run (exit {status}):\n{stderr}{stdout[-4000:]}"
    errors: dict[str, list[str]] = {}
    for line in stdout.splitlines():
        path, sep, rest = line.partition(":")
        if sep and ": error:" in rest:
            errors.setdefault(Path(path).resolve().relative_to(ROOT).as_posix(), []).append(line)
    return errors


def test_mypy_finds_no_error(mypy_errors):
    found = [line for _, lines in sorted(mypy_errors.items()) for line in lines]
    assert not found, f"{len(found)} mypy error(s):\n" + "\n".join(found[:200])
