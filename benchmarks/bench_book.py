"""The book's build times: a cold build of this commit against a baseline commit's, the zoo one model after
another against side by side, and a cold and a warm build.

``compare --baseline COMMIT`` (the cost target): a cold ``make book`` of the baseline commit and of this
checkout, one after the other on this machine, each from a fresh copy of its sources (``git archive``) with an
empty model cache, run by this environment's Python with that copy's library first on the path. Prints each
chapter's execution time, the HTML, the labs (where the commit has them) and the total, for both, and the
ratios this / baseline. ``--order this-first`` runs this checkout first. Uncommitted changes are included
in "this" (the working tree is copied).

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


def _copy_commit(commit: str, dest: Path) -> Path:
    """The sources of ``commit`` (``git archive``), or of the working tree for ``"WORKTREE"``, in ``dest``."""
    import io
    import shutil
    import tarfile

    dest.mkdir(parents=True)
    if commit == "WORKTREE":
        files = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT, capture_output=True, check=True,
        ).stdout.decode().split("\0")  # fmt: skip
        for name in filter(None, files):
            if (ROOT / name).is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, dest / name)
        return dest
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def _cold_make_book(project: Path, cache: Path) -> dict:
    """What the commit's ``make book`` runs, timed: one ``shifteval build --labs`` where its Makefile builds the
    labs beside the HTML so, else the chapters and HTML, then the labs where the commit has them."""
    cli = "shifteval.cli" if (project / "src" / "shifteval" / "cli.py").is_file() else "shifteval.book.cli"
    env = {**os.environ, "SHIFTEVAL_CACHE": str(cache), "PYTHONPATH": str(project / "src")}
    env.pop("SHIFTEVAL_THREADS", None)
    together = "--labs" in (project / "Makefile").read_text(encoding="utf-8")
    times: dict = {}
    start = time.perf_counter()
    args = ["build", "--labs"] if together else ["build", "--params", "default"]
    out = subprocess.run(
        [sys.executable, "-m", cli, *args], cwd=project, env=env, capture_output=True, text=True
    )
    times["chapters, HTML and labs" if together else "chapters and HTML"] = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"build failed in {project}:\n{out.stderr[-3000:]}")
    chapters = {m[1]: float(m[2]) for m in re.finditer(r"\[([\w-]+)\] done in ([\d.]+) s", out.stderr)}
    if not together and (project / "src" / "shifteval" / "labs").is_dir():
        start = time.perf_counter()
        labs = subprocess.run([sys.executable, "-m", cli, "labs"], cwd=project, env=env, capture_output=True,
                              text=True)  # fmt: skip
        times["labs"] = time.perf_counter() - start
        if labs.returncode != 0:
            sys.exit(f"labs failed in {project}:\n{labs.stderr[-3000:]}")
    times["total"] = sum(times.values())
    return {"chapters": chapters, **times}


def bench_compare(baseline: str, order: str = "baseline-first") -> None:
    """A cold ``make book`` of ``baseline`` and of this checkout, one after the other; the table and ratios."""
    label = subprocess.run(["git", "rev-parse", "--short", baseline], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip()  # fmt: skip
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip
    runs = [(f"baseline {label}", baseline), (f"this {head}+", "WORKTREE")]
    if order == "this-first":
        runs.reverse()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, commit) in enumerate(runs):
            project = _copy_commit(commit, Path(tmp) / f"project{i}")
            results[name] = _cold_make_book(project, Path(tmp) / f"cache{i}")
            print(f"{name}: cold make book {results[name]['total']:.1f} s", flush=True)
    base, this = (results[n] for n, _ in sorted(runs, key=lambda r: not r[0].startswith("baseline")))
    names = list(dict.fromkeys([*base["chapters"], *this["chapters"]]))
    rows = [(f"  {n}", base["chapters"].get(n), this["chapters"].get(n)) for n in names]
    rows += [("chapters and HTML (wall)", base.get("chapters and HTML"), this.get("chapters and HTML")),
             ("labs", base.get("labs"), this.get("labs")),
             ("chapters, HTML and labs", base.get("chapters, HTML and labs"), this.get("chapters, HTML and labs")),
             ("cold make book", base["total"], this["total"])]  # fmt: skip
    print(f"\n{'':28s} {'baseline ' + label:>14s} {'this':>10s} {'this/baseline':>14s}")
    for what, b, t in rows:
        ratio = f"{t / b:14.2f}" if b and t else f"{'':>14s}"
        fmt = lambda v: f"{v:10.1f}" if v is not None else f"{'—':>10s}"  # noqa: E731
        print(f"{what:28s} {fmt(b):>14s} {fmt(t)} {ratio}")
    print("(chapter times: execution as each build logged it; one-thread chapters run side by side, so they")
    print(" overlap; the wall times are what a person waits for)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("part", nargs="*", choices=["compare", "zoo", "book", "warm"], default=["compare"])
    parser.add_argument("--project", type=Path, default=ROOT, help="the built project `warm` times")
    parser.add_argument("--baseline", default="37036ce", help="the commit `compare` measures against")
    parser.add_argument("--order", choices=["baseline-first", "this-first"], default="baseline-first")
    args = parser.parse_args()
    for part in args.part:
        {"zoo": bench_zoo, "book": bench_book, "warm": lambda: bench_warm(args.project),
         "compare": lambda: bench_compare(args.baseline, args.order)}[part]()  # fmt: skip


if __name__ == "__main__":
    main()
