"""The one cache implementation: keys over values, source closure, versions and data; fill at most once."""

import multiprocessing
import time
from pathlib import Path

import numpy as np
import pytest

from shifteval.utils import cache
from shifteval.utils.io import atomic_write_text


def test_key_depends_on_values_arrays_and_data(tmp_path):
    assert cache.key({"a": 1}) == cache.key({"a": 1})
    assert cache.key({"a": 1}) != cache.key({"a": 2})
    x = np.arange(6.0)
    assert cache.key({"x": x}) != cache.key({"x": x.reshape(2, 3)})  # same bytes, other shape
    y = x.copy()
    y[0] = -1
    assert cache.key({"x": x}) != cache.key({"x": y})
    data = tmp_path / "d.csv"
    data.write_text("1\n")
    k1 = cache.key(paths=[data])
    data.write_text("2\n")
    assert cache.key(paths=[data]) != k1
    with pytest.raises(FileNotFoundError, match="no such file"):
        cache.key(paths=[tmp_path / "missing"])


def test_import_closure_follows_relative_and_absolute_imports():
    closure = cache.import_closure(["shifteval.zoo.models"])
    # zoo/models.py imports ..utils.cache (relative); the package __init__ files come with it
    assert {"shifteval.utils.cache", "shifteval.zoo", "shifteval"} <= set(closure)
    assert "shifteval.linfit" not in closure  # not imported, so not part of the key


def test_source_digest_changes_with_an_imported_module(monkeypatch, tmp_path):
    import shutil

    copy = tmp_path / "shifteval"
    shutil.copytree(cache.PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "PACKAGE_ROOT", copy)
    before = cache.source_digest(["shifteval.zoo.models"])
    io = copy / "utils" / "io.py"  # imported by utils/cache.py, itself imported by zoo/models.py
    io.write_text(io.read_text() + "\n# changed\n")
    assert cache.source_digest(["shifteval.zoo.models"]) != before
    unrelated = copy / "linfit" / "fits.py"
    unrelated.write_text(unrelated.read_text() + "\n# changed\n")
    after = cache.source_digest(["shifteval.zoo.models"])
    assert cache.source_digest(["shifteval.zoo.models"]) == after


def _fill(path, counter):
    def compute():
        with open(counter, "a") as fh:
            fh.write("x")
        time.sleep(0.5)
        return "value"

    return cache.load_or_compute(path, compute, lambda p: Path(p).read_text(), atomic_write_text)


def test_concurrent_load_or_compute_computes_once(tmp_path):
    path, counter = tmp_path / "entry", tmp_path / "count"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_fill, args=(path, counter)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert path.read_text() == "value" and counter.read_text() == "x"
