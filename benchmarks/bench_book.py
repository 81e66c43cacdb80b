"""The book's build times: the zoo one model after another against side by side, and a cold and a warm build.

``zoo`` (default): the default world's zoo trained twice into fresh stores, first by one process, then by
``os.cpu_count()`` processes (one torch thread each, :func:`shifteval.zoo.build.build_zoo`); prints both times,
their ratio, and checks that both stores hold the same predictions bit for bit.

``book``: ``shifteval build`` with the default parameters of two copies of the project, each with an empty
cache (cold), then of the second again (warm); prints each chapter's execution time from the builds' logs,
the totals, and whether the two cold builds recorded identical results.

``warm``: ``shifteval build`` five times in a built project (``--project``, this one by default), where
nothing is left to execute or render; prints each time and the median.
Targets (2 cores, idle machine): cold ``make book`` <= 5 min, warm <= 5 s, no chapter over 90 s cold
except replication-world <= 150 s.

Run alone: two torch jobs side by side on two cores slow each other down several times.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def bench_zoo() -> None:
    """Time the default zoo by one process and by one process per core; the same predictions."""
    from shifteval.datasets import world as worlds
    from shifteval.zoo import build_zoo, default_zoo, workers_for

    w = worlds.build_world({})
    specs = default_zoo()
    parallel = workers_for(len(specs))
    times, stores = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (1, parallel):
            start = time.perf_counter()
            z = build_zoo(w, specs, store_root=Path(tmp) / str(workers), progress=False, workers=workers)
            times[workers] = time.perf_counter() - start
            stores[workers] = z
            print(f"zoo of {len(specs)} models, {workers} process(es): {times[workers]:.0f} s", flush=True)
        same = all(
            np.array_equal(
                stores[1].predictions(s.name, "v1").probs, stores[parallel].predictions(s.name, "v1").probs
            )
            for s in specs
        )
    print(
        f"ratio one process / {parallel} processes: {times[1] / times[parallel]:.2f}x; same predictions: {same}"
    )


def _build(project: Path, env: dict) -> tuple[float, dict]:
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "shifteval.cli", "build", "--params", "default"],
        cwd=project, env=env, capture_output=True, text=True,
    )  # fmt: skip
    total = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"build failed:\n{out.stderr[-3000:]}")
    chapters = {m[1]: float(m[2]) for m in re.finditer(r"\[([\w-]+)\] done in ([\d.]+) s", out.stderr)}
    return total, chapters


def _recorded(chapters: Path) -> dict:
    """Every chapter's recorded results, without the provenance (times, paths, keys)."""
    import json

    return {
        path.name: {k: v for k, v in json.loads(path.read_text()).items() if k != "provenance"}
        for path in sorted(chapters.glob("*.results.json"))
    }


def bench_book() -> None:
    """Two cold builds of two copies of the project, each with an empty cache, then a warm build.

    Prints each chapter's execution time in both cold builds and their median, the totals, and whether
    the two cold builds recorded identical results (every chapter's ``results.json`` but its provenance).
    """
    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import copy_project

    with tempfile.TemporaryDirectory() as tmp:
        runs, recorded = [], []
        for i in (1, 2):
            project = copy_project(Path(tmp) / f"project{i}")
            env = {**os.environ, "SHIFTEVAL_CACHE": str(Path(tmp) / f"cache{i}")}
            total, chapters = _build(project, env)
            runs.append((total, chapters))
            recorded.append(_recorded(project / "book" / "chapters"))
            print(f"cold build {i}: {total:.1f} s", flush=True)
        for name in runs[0][1]:
            times = [chapters[name] for _, chapters in runs]
            print(
                f"  cold {name:20s} "
                + " ".join(f"{t:7.1f}" for t in times)
                + f"   median {np.median(times):7.1f} s"
            )
        print(f"cold build median: {np.median([total for total, _ in runs]):.1f} s")
        same = recorded[0] == recorded[1]
        print(f"the two cold builds recorded identical results: {same} ({len(recorded[0])} chapters)")
        total, _ = _build(project, env)
        print(f"warm build: {total:.1f} s", flush=True)


def bench_warm(project: Path, runs: int = 5) -> None:
    """``shifteval build`` of an already built project, ``runs`` times: nothing to execute or render."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "shifteval.cli", "build"], cwd=project, capture_output=True, text=True
        )
        times.append(time.perf_counter() - start)
        if out.returncode != 0 or "[book] up to date" not in out.stderr:
            sys.exit(f"not a warm build (build the project first):\n{out.stderr[-3000:]}")
    print("warm builds: " + ", ".join(f"{t:.2f}" for t in times) + f" s; median {np.median(times):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("part", nargs="*", choices=["zoo", "book", "warm"], default=["zoo"])
    parser.add_argument("--project", type=Path, default=ROOT, help="the built project `warm` times")
    args = parser.parse_args()
    for part in args.part:
        {"zoo": bench_zoo, "book": bench_book, "warm": lambda: bench_warm(args.project)}[part]()


if __name__ == "__main__":
    main()
