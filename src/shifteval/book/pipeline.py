"""Execute chapters and build the book.

One direction only (DESIGN.md): a parameter set and a jupytext source go in, papermill executes
the notebook in memory, and the executed notebook plus its ``<chapter>.results.json`` come out
in ``book/chapters/``; ``jupyter-book build`` then renders them without executing anything.

A chapter is re-executed only when something it depends on changed: its cache key hashes the
notebook source, the resolved parameters, whether the claims are enforced, the thread count
(``shifteval.book.threads``), every file of the ``shifteval`` package, the data files its parameters
name, and the versions of the key packages. The key is stored in the executed notebook's metadata, beside the provenance readers see (parameters, library version,
git commit, duration).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from ..utils.io import atomic_write_bytes, atomic_write_json
from ..utils.processes import spawn_safe
from . import prose, reader, schedule
from .assemble import EDITIONS, build_html, fetch_data, log, real_edition_sources
from .project import (
    CHAPTER_DIR,
    Chapter,
    ChapterFailed,
    ParamSet,
    PipelineError,
    chapters,
    find_root,
    get_chapter,
    load_param_set,
    notebook_parameters,
    resolve_parameters,
)
from .provenance import (
    after_title,
    cache_key,
    cached_key,
    git_commit,
    lab_paragraph,
    last_run,
    package_versions,
    provenance_box,
    run_it_yourself,
    scrub_local_paths,
    strip_injected_internals,
    student_notice,
)
from .results import ENV_RESULTS, ENV_STRICT
from .threads import allocator_variables, chapter_threads, kernel_variables, startup_arguments

#: Seconds the pipeline waits for a chapter's kernel to start, and for a cell's last outputs once the cell
#: has finished. Papermill's defaults (60 s and 4 s) can pass on a machine under load: the run then
#: failed, or went on without the cell's last outputs. A kernel that exits fails the run at once.
KERNEL_WAIT = 1800

#: Times a chapter's kernel is started when it dies before answering (nothing has executed yet). Two
#: kernels started at one moment (chapters side by side) can be given the same free TCP port, since
#: jupyter_client picks the ports before the kernel binds them; one of them then dies at start-up.
KERNEL_STARTS = 3


@dataclass
class RunResult:
    """What :func:`run_chapter` did: executed or cached, where the outputs are, how long it took."""

    chapter: str
    status: str  # "executed" or "cached"
    notebook: Path
    results: Path
    duration: float


@dataclass
class _ChapterRun:
    """One chapter's run as :func:`run_chapter` carries it from step to step.

    What runs (the chapter, its parameter set as given and as resolved), under which rules (``strict``
    claims, ``threads``), its cache ``key``, and where the executed pair is published (``out``).
    """

    name: str
    chapter: Chapter
    param_set: ParamSet
    params: str
    overrides: dict[str, Any]
    parameters: dict[str, Any]
    root: Path
    out: Path
    strict: bool
    threads: int
    key: str
    note: str | None = None

    @property
    def notebook_path(self) -> Path:
        """Where the executed notebook is published."""
        return self.out / f"{self.name}.ipynb"

    @property
    def results_path(self) -> Path:
        """Where the chapter's results are published."""
        return self.out / f"{self.name}.results.json"


def run_chapter(
    name: str,
    params: str = "default",
    overrides: dict[str, Any] | None = None,
    out: str | Path | None = None,
    force: bool = False,
    root: str | Path | None = None,
    progress: bool = True,
    data_root: str | Path = "data",
    note: str | None = None,
) -> RunResult:
    """Execute one chapter with papermill and publish its notebook and results.

    The steps: resolve what runs (:func:`_plan`), skip it when the published pair is current, execute
    it (:func:`_execute_chapter`), refuse false claims of a default run (:func:`_enforce_claims`),
    record its provenance (:func:`_provenance`), open and close the page with what a reader needs
    (:func:`_decorate_page`) and publish the pair (:func:`_publish`).

    Parameters
    ----------
    name : str
        Chapter name, as listed by ``shifteval list``.
    params : str
        Parameter-set name (``default``, ``smoke``, ``real``) or a path to a YAML file.
    overrides : dict, optional
        Parameter values that replace those of the set (``-p key=value`` on the command line).
    out : str or pathlib.Path, optional
        Output folder; ``book/chapters`` of the project by default (a relative path is taken from the
        current directory).
    force : bool
        Execute even when the cache says nothing changed.
    root : str or pathlib.Path, optional
        A folder in the project (see :func:`~shifteval.book.project.find_root`); the current directory by
        default.
    progress : bool
        Show papermill's progress bar.
    data_root : str or pathlib.Path
        The data folder ``{data}`` stands for in parameter values (relative to the project root).
    note : str, optional
        A sentence for the page's provenance box (the real-data edition explains a fallback with it).

    Returns
    -------
    RunResult
        ``status`` ``"executed"`` or ``"cached"`` (the published pair's key matched; nothing ran),
        the notebook's and results' paths and the execution time.

    Raises
    ------
    PipelineError
        Unknown chapter, parameter set or parameter name -- before anything runs.
    ChapterFailed
        A cell raised; the message names the chapter, the cell and the exception, and the
        failed notebook is kept under ``_build/failed/`` (never in the book). Also when the chapter
        recorded no results, or, in a default run without overrides, a claim does not hold.
    """
    run = _plan(name, params, overrides or {}, out, root, data_root, note)
    if not force and cached_key(run.notebook_path) == run.key:
        log(f"[{name}] up to date (parameter set {run.param_set.name!r}); skipped")
        return RunResult(name, "cached", run.notebook_path, run.results_path, 0.0)
    executed, results, duration = _execute_chapter(run, progress)
    _enforce_claims(run, results)
    provenance = _provenance(run, duration)
    _decorate_page(run, executed, results, provenance)
    results["provenance"] = {k: v for k, v in provenance.items() if k != "packages"}
    _publish(run, executed, results)
    log(f"[{name}] done in {duration:.1f} s -> {run.notebook_path}")
    return RunResult(name, "executed", run.notebook_path, run.results_path, duration)


def _plan(
    name: str,
    params: str,
    overrides: dict[str, Any],
    out: str | Path | None,
    root: str | Path | None,
    data_root: str | Path,
    note: str | None,
) -> _ChapterRun:
    """Resolve what a run of chapter ``name`` executes, under which rules, and its cache key.

    Everything here is checked before a kernel starts: the chapter, its parameter set, the parameters'
    names and types, and the thread count it declares (a :class:`PipelineError` names what is wrong).
    The default set without overrides is *strict*: its claims must hold (any other run only reports them).
    """
    root = find_root(root)
    chapter = get_chapter(name, root)
    param_set = load_param_set(chapter, params)
    parameters = resolve_parameters(chapter, param_set, overrides, data_root)
    out = Path(out) if out is not None else root / CHAPTER_DIR
    out = out if out.is_absolute() else Path.cwd() / out
    # the default set, unchanged: its claims must hold (a run with overrides only reports them)
    strict = param_set.path == chapter.params_dir / "default.yaml" and not overrides
    try:
        threads = chapter_threads(chapter.threads)
    except ValueError as exc:
        raise PipelineError(str(exc)) from None
    key = cache_key(chapter, parameters, threads, strict)
    return _ChapterRun(
        name, chapter, param_set, str(params), overrides, parameters, root, out, strict, threads, key, note
    )


def _execute_chapter(run: _ChapterRun, progress: bool) -> tuple[Any, dict[str, Any], float]:
    """Execute the chapter's notebook in a private staging folder; return it, its results and the time.

    The kernel gets the same thread count on every machine and an allocator that returns memory
    (:mod:`shifteval.book.threads`), and is told where the results go and whether claims are strict.
    A cell that raises fails the run (:func:`_keep_failed`); so does a chapter that records no results.
    The claim spans of its markdown (:mod:`shifteval.book.prose`) go to the kernel as a JSON file, and
    come back written as the run formatted them (:func:`_write_spans`).
    """
    import jupytext
    import papermill

    name = run.name
    nb = jupytext.read(run.chapter.source, fmt="py:percent")
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    log(f"[{name}] executing with parameter set {run.param_set.name!r} ...")
    with _staging(run.root, name) as work:
        running_nb = work / f"{name}.ipynb"
        running_results = work / f"{name}.results.json"
        spans = work / f"{name}.claim-texts.json"
        try:
            atomic_write_json(spans, prose.templates(nb))
        except ValueError as exc:
            raise ChapterFailed(f"chapter {name!r}: {exc}") from None
        start = time.perf_counter()
        try:
            # the same thread count on every machine and glibc's allocator kept from returning memory
            # it takes back at once (shifteval.book.threads), and where results go
            kernel_env = {ENV_RESULTS: str(running_results), ENV_STRICT: "1" if run.strict else "0"}
            kernel_env[prose.ENV_TEMPLATES] = str(spans)
            kernel_env |= kernel_variables(run.threads) | allocator_variables()
            with _kernel_environment(kernel_env):
                executed = _execute(
                    name,
                    nb,
                    str(running_nb),
                    parameters=run.parameters,
                    kernel_name="python3",
                    cwd=str(run.root),
                    progress_bar=progress,
                    execution_timeout=run.param_set.timeout,
                    # a kernel on a busy machine can take minutes to start or to send a cell's outputs;
                    # outputs still missing after that fail the run rather than publish a page without them
                    start_timeout=KERNEL_WAIT,
                    iopub_timeout=KERNEL_WAIT,
                    raise_on_iopub_timeout=True,
                    report_mode=False,
                    # the kernel's own log (not cell output) only says that it talks to us over local TCP
                    extra_arguments=["--IPKernelApp.log_level=ERROR", *startup_arguments(run.threads)],
                )
        except papermill.PapermillExecutionError as exc:
            raise _keep_failed(run, running_nb, exc) from None
        duration = time.perf_counter() - start
        if not running_results.is_file():
            raise ChapterFailed(
                f"chapter {name!r} ran but did not record its results (results.Results().record(...))"
            )
        results = json.loads(running_results.read_text(encoding="utf-8"))
        _write_spans(run, executed, results, running_nb)
    return executed, results, duration


def _write_spans(run: _ChapterRun, executed, results: dict[str, Any], running_nb: Path) -> None:
    """Write each claim span's sentence, as the run formatted it, and each glued number into the page's markdown.

    A span the run never checked, or a number quoted but never glued, fails the chapter (its notebook is kept under ``_build/failed/``).
    """
    try:
        prose.render(executed, results.pop("spans", {}))
        reader.resolve_glue(executed, results.get("numbers", {}))
    except ValueError as exc:
        failed = _failed_notebook(run, running_nb)
        raise ChapterFailed(f"chapter {run.name!r}: {exc}; the failed notebook is kept at {failed}") from None


def _failed_notebook(run: _ChapterRun, running_nb: Path) -> Path:
    """Move a failed run's notebook to ``_build/failed/`` (never in the book); return where it is."""
    failed = run.root / "_build" / "failed" / f"{run.name}.ipynb"
    failed.parent.mkdir(parents=True, exist_ok=True)
    if running_nb.exists():
        os.replace(running_nb, failed)
    return failed


def _keep_failed(run: _ChapterRun, running_nb: Path, exc: Any) -> ChapterFailed:
    """Keep a failed notebook under ``_build/failed/`` (never in the book); the error that says where."""
    failed = _failed_notebook(run, running_nb)
    return ChapterFailed(
        f"chapter {run.name!r} failed in cell {exc.cell_index} (execution count {exc.exec_count}): "
        f"{exc.ename}: {exc.evalue}\n"
        f"The failed notebook is kept for inspection at {failed}; the book was not rebuilt."
    )


def _enforce_claims(run: _ChapterRun, results: dict[str, Any]) -> None:
    """In a strict (default) run, refuse to publish a chapter with a claim that does not hold.

    A chapter that caught :class:`~shifteval.book.results.ClaimFailed` still may not publish: the claims
    are read back from its results.
    """
    false_claims = [c for c in results.get("claims", []) if not c.get("holds")]
    if run.strict and false_claims:
        raise ChapterFailed(
            f"chapter {run.name!r}: claim(s) that do not hold in the default run: "
            + "; ".join(f"{c['id']}: {c['text']!r}" for c in false_claims)
        )


def _provenance(run: _ChapterRun, duration: float) -> dict[str, Any]:
    """The provenance of a run: parameters, library version, cache key, commit, duration, packages."""
    return {
        "chapter": run.name,
        "parameter_set": run.param_set.name,
        "params": run.params,
        "overrides": run.overrides,
        # every parameter's value in this run: the chapter's own defaults under what was injected
        "parameters": {
            **notebook_parameters(run.chapter.source.read_text(encoding="utf-8")),
            **run.parameters,
        },
        "injected": run.parameters,
        "library_version": __version__,
        "cache_key": run.key,
        "git_commit": git_commit(run.root),
        "duration_s": round(duration, 1),
        "threads": run.threads,
        "packages": package_versions(),
        "strict_claims": run.strict,
        **({"note": run.note} if run.note else {}),
    }


def _decorate_page(run: _ChapterRun, executed, results: dict[str, Any], provenance: dict[str, Any]) -> None:
    """Put the provenance in the notebook's metadata and the page's opening and closing cells around it.

    Science first: the page opens with its title (and, for a run other than the default, a note that says
    so); it ends with the commands to re-run it and, collapsed, its provenance.
    """
    import nbformat

    executed.metadata["shifteval"] = provenance
    strip_injected_internals(executed)
    notice = student_notice(run.name, run.param_set.name, run.overrides)
    if notice:
        executed.cells.insert(after_title(executed), nbformat.v4.new_markdown_cell(notice))
    box = provenance_box(
        run.chapter, run.param_set.name, run.overrides, provenance, results.get("figures"),
        " ".join(run.param_set.description.split()),
    )  # fmt: skip
    if (run.chapter.root / "notebooks" / "labs" / f"{run.name}.py").is_file():  # shifteval.labs' masters
        executed.cells.append(nbformat.v4.new_markdown_cell(lab_paragraph(run.name)))
    executed.cells.append(nbformat.v4.new_markdown_cell(run_it_yourself(run.chapter, run.parameters)))
    executed.cells.append(nbformat.v4.new_markdown_cell(box))


def _publish(run: _ChapterRun, executed, results: dict[str, Any]) -> None:
    """Write the results, then the notebook, into the output folder (local paths scrubbed).

    Results first, notebook last: the notebook's key is what marks the pair complete. The lock keeps two
    runs publishing into one folder from interleaving their pairs.
    """
    import nbformat

    with _publish_lock(run.out, run.name):
        _report_verdict_changes(run, results)
        atomic_write_json(run.results_path, results)
        text = scrub_local_paths(nbformat.writes(executed), run.root)
        atomic_write_bytes(run.notebook_path, text.encode("utf-8"))


def _report_verdict_changes(run: _ChapterRun, results: dict[str, Any]) -> None:
    """Say which findings changed their verdict since the results this run replaces (a verdict is a result)."""
    from .findings import changed_verdicts

    try:
        before = json.loads(run.results_path.read_text(encoding="utf-8")).get("findings", [])
    except (OSError, ValueError):
        return  # nothing published before (or unreadable): nothing to compare with
    for line in changed_verdicts(before, results.get("findings", [])) if before else []:
        log(f"[{run.name}] verdict changed: {line}")


@contextlib.contextmanager
def _staging(root: Path, name: str):
    """A private folder for one execution, removed afterwards (also those of killed runs)."""
    base = root / "_build" / ".running"
    base.mkdir(parents=True, exist_ok=True)
    for stale in base.glob("*-pid*"):  # left by a run that was killed: its process is gone
        pid = stale.name.rpartition("-pid")[2].partition(".")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f"{name}-pid{os.getpid()}.", dir=base))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _execute(name: str, *args, **kwargs):
    """``papermill.execute_notebook``, with the kernel started again when it dies before answering.

    Up to :data:`KERNEL_STARTS` starts in all: nothing has executed before the kernel answers, so a new
    start loses nothing. Any other error is raised at once; the last death as :class:`ChapterFailed`.
    """
    import papermill

    from .engine import ENGINE  # papermill's engine, writing the notebook once, at the end

    for start in range(1, KERNEL_STARTS + 1):
        try:
            return papermill.execute_notebook(*args, engine_name=ENGINE, **kwargs)
        except RuntimeError as exc:
            if "before replying to kernel_info" not in str(exc):
                raise
            if start == KERNEL_STARTS:
                raise ChapterFailed(
                    f"chapter {name!r}: its kernel died while starting, {KERNEL_STARTS} times ({exc}); "
                    "nothing was published"
                ) from exc
            log(
                f"[{name}] the kernel died while starting ({exc}); starting another ({start + 1} of {KERNEL_STARTS})"
            )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def _kernel_environment(values: dict):
    """Set environment variables for the kernel papermill starts (it inherits ours)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _publish_lock(out: Path, name: str):
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f".{name}.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def run_chapters(
    names: Iterable[str],
    params: str = "default",
    force: bool = False,
    root: str | Path | None = None,
    progress: bool = True,
) -> dict[str, RunResult]:
    """Execute several chapters, those that declare one thread side by side (``shifteval run A B ...``).

    Parameters
    ----------
    names : iterable of str
        Chapter names (see ``shifteval list``); all are checked before anything runs.
    params : str
        The parameter set every chapter runs (``default``, ``smoke``, ``real`` or a YAML path).
    force : bool
        Execute even when a chapter's cache says nothing changed.
    root : str or pathlib.Path, optional
        A folder in the project; the current directory by default.
    progress : bool
        Show papermill's progress bars (for the chapters that run alone).

    Returns
    -------
    dict of str -> RunResult
        Per chapter, as :func:`run_chapter` returns it.

    Raises
    ------
    PipelineError
        An unknown chapter or parameter set, before anything runs.
    ChapterFailed
        A chapter failed (see :func:`run_all`).
    """
    root = find_root(root)
    names = list(dict.fromkeys(names))
    for name in names:
        load_param_set(get_chapter(name, root), params)
    return run_all({n: dict(params=params, force=force, root=root, progress=progress) for n in names})


def side_by_side(chapters: dict[str, Path]) -> list[str]:
    """The chapters (name -> project root) that run side by side, those declaring one thread, longest first.

    Longest by the estimate each header declares (:attr:`~shifteval.book.project.Chapter.seconds`; none
    counts as 0), so that the longest does not start when the others are done; ties keep the given order.

    Examples
    --------
    >>> root = find_root()
    >>> side_by_side({n: root for n in ("replication-world", "mlm", "linear-fits", "ood-autoeval")})
    ['ood-autoeval', 'mlm', 'linear-fits']
    """
    side = [n for n, root in chapters.items() if get_chapter(n, root).threads == 1]
    return sorted(side, key=lambda n: -(get_chapter(n, chapters[n]).seconds or 0))


def run_all(jobs: dict[str, dict[str, Any]]) -> dict[str, RunResult]:
    """Run the chapters of ``jobs`` (name -> :func:`run_chapter`'s keyword arguments, ``root`` included).

    The chapters that use every core (the zoo's processes, torch's threads) run one after another in the
    order of ``jobs``. Those that declare one thread (:attr:`~shifteval.book.project.Chapter.threads`) run
    beside them in worker processes, one per core, so none shares a core with another one-thread chapter:
    each starts once the chapters its header names in ``after`` (:attr:`~shifteval.book.project.Chapter.after`,
    those of this run) are done, the longest first where several may (the estimate its header declares,
    :attr:`~shifteval.book.project.Chapter.seconds`). So OOD-AutoEval and the MLM, which read no zoo,
    compute while replication-world trains it, and the chapters that read it start when it is done. The
    kernels of all but the longest run at a lower priority (:func:`~shifteval.book.schedule.yielding`), so
    that they take the cycles the zoo leaves. Every chapter computes the same numbers whatever runs beside
    it.

    A failed chapter stops the run: no chapter starts after it, those running finish and publish, and the
    first failure in the order of ``jobs`` is raised.

    Parameters
    ----------
    jobs : dict of str -> dict
        Chapter name to the keyword arguments of its :func:`run_chapter` call (``root`` included).

    Returns
    -------
    dict of str -> RunResult
        Per chapter, as :func:`run_chapter` returns it.

    Raises
    ------
    PipelineError
        Before anything runs, if a header's ``after`` names an unknown chapter or an order that cannot run
        (:func:`~shifteval.book.schedule.check_order`).
    ChapterFailed
        The first chapter that failed, in the order of ``jobs``.
    """
    side = side_by_side({n: kw["root"] for n, kw in jobs.items()})
    first = [n for n in jobs if n not in side]
    waits = _waits(jobs)
    schedule.check_order(first, side, waits)
    lanes = min(len(side), os.cpu_count() or 1)
    if lanes < 2 or not spawn_safe():
        alone = {name: run_chapter(name, **jobs[name]) for name in first}
        return alone | {
            name: run_chapter(name, **jobs[name]) for name in schedule.in_order(side, waits, alone)
        }
    log(f"[book] {', '.join(side)}: one thread each, {lanes} side by side (no per-cell progress)")

    def submit(pool, name):
        kwargs = {**jobs[name], "progress": False}
        return pool.submit(schedule.in_lane, run_chapter, name, schedule.yielding(name, side), kwargs)

    lanes_ = schedule.Lanes(side, waits, lanes, submit)
    done: dict[str, RunResult] = {}
    failures: dict[str, BaseException] = {}
    try:
        lanes_.start()
        for name in first:
            try:
                done[name] = run_chapter(name, **jobs[name])
            except ChapterFailed as exc:
                failures[name] = exc
                lanes_.stop()
                running = [n for n, f in lanes_.futures.items() if not f.done()]
                if running:
                    log(f"[book] {name} failed; {', '.join(running)} finish first (each publishes its run)")
                break
            lanes_.finished(name)
    except BaseException:
        lanes_.stop()
        raise
    finally:
        futures = lanes_.wait()
    for name, future in futures.items():
        if future.cancelled():
            continue
        error = future.exception()
        if error is not None:
            failures[name] = error
        else:
            done[name] = future.result()
    if failures:
        raise next(failures[n] for n in jobs if n in failures)
    return {n: done[n] for n in jobs if n in done}


def _waits(jobs: dict[str, dict[str, Any]]) -> dict[str, tuple[str, ...]]:
    """Per chapter of ``jobs``, the chapters of ``jobs`` its header names in ``after``.

    Raises
    ------
    PipelineError
        If a header names a chapter the project does not have.
    """
    waits = {}
    # per project root, its chapters by name (_toc.yml read once)
    by_root: dict[Path, dict[str, Chapter]] = {}
    for name, kwargs in jobs.items():
        root = kwargs["root"]
        if root not in by_root:
            by_root[root] = {c.name: c for c in chapters(root)}
        known = by_root[root]
        # an unknown name goes to get_chapter, whose error lists the valid ones
        chapter = known[name] if name in known else get_chapter(name, root)
        unknown = [a for a in chapter.after if a not in known]
        if unknown:
            raise PipelineError(
                f"{chapter.source}: the header's shifteval.after names {', '.join(unknown)}, which is not a "
                f"chapter; chapters: {', '.join(sorted(known))}"
            )
        waits[name] = tuple(a for a in chapter.after if a in jobs)
    return waits


def build(
    params: str | None = None,
    force: bool = False,
    only: Iterable[str] | None = None,
    root: str | Path | None = None,
    progress: bool = True,
    edition: str = "full",
    data_root: str | Path = "data",
    overrides: dict[str, Any] | None = None,
    reset: bool = False,
    alongside: Callable[[], Any] | None = None,
) -> Path:
    """Run every chapter (or ``only`` these) and build the HTML book into ``_build/html``.

    Without ``params``, each chapter keeps its last run: a chapter executed before is run again with the
    parameter set and overrides it was last executed with (nothing executes when nothing changed), so a
    student's ``shifteval run CH -p k=v`` is what the book shows; a chapter never executed runs its
    ``default`` set. ``params`` (or ``reset``, which means ``default``) runs the given set instead, and
    ``overrides`` (with ``only``) runs and rebuilds a chapter with other values in one step, on the
    parameter set of its last run unless ``params`` names one (they replace the last run's overrides). A page that
    shows anything but the default run says so at its top, with the command that goes back.

    ``edition="student"`` builds the same book without the exercises' solutions (sphinx-exercise's
    ``hide_solutions``) into ``_build/student/html``. ``params="real"`` builds the **real-data
    edition** into ``_build/real/html``: every chapter runs its ``real`` parameter set (whose page says
    what real data it uses, or that none is public), from a separate copy of the book sources under
    ``_build/real/src`` so the default book's executed chapters are untouched; the datasets the sets
    name are fetched first with ``shifteval data get`` into ``data_root`` unless already there.

    Chapters run in ``_toc.yml`` order, except that those declaring one thread run side by side beside
    them, each once the chapters it waits for are done (see :func:`run_all`); the first failure stops the
    build before ``jupyter-book`` runs, so a failed chapter is never published. The book is built with
    warnings as errors (``-W -n --keep-going``).

    The steps: check the request (:func:`_check_request`), find where the book's sources are and that
    every chapter left out has run (:func:`_book_sources`), choose each chapter's parameter set
    (:func:`_choose_runs`, and :func:`_real_edition_runs` for the real-data edition), run the chapters
    (:func:`run_all`) and build the HTML (:func:`_assemble`).

    Parameters
    ----------
    params : str, optional
        Parameter set every selected chapter runs (``default``, ``smoke``, ``real`` or a YAML path);
        by default each chapter's last run, or ``default`` for a chapter never executed.
    force : bool
        Execute chapters even when their cache says nothing changed.
    only : iterable of str, optional
        Run only these chapters; the others must have been executed before.
    root : str or pathlib.Path, optional
        A folder in the project (see :func:`~shifteval.book.project.find_root`); the current directory by
        default.
    progress : bool
        Show papermill's progress bars.
    edition : str
        ``"full"`` or ``"student"`` (see :data:`~shifteval.book.assemble.EDITIONS`).
    data_root : str or pathlib.Path
        The data folder (relative to the project root unless absolute).
    overrides : dict, optional
        Parameter values (``-p key=value``) for the chapters of ``only``; refused without ``only``.
    reset : bool
        Run the selected chapters with ``params`` (``default`` when not given), dropping their last runs.
    alongside : callable, optional
        Work that needs the executed chapters and their caches but not the HTML (``make book`` builds the
        labs so): called in a thread while ``jupyter-book`` runs in its own process, each on one core; its
        error, if any, is raised after the HTML is built.

    Returns
    -------
    pathlib.Path
        The book's ``index.html``.

    Raises
    ------
    PipelineError
        Before anything runs: an unknown edition or chapter, a student real-data edition, or chapters
        left out by ``only`` that were never executed. Later: data that cannot be fetched, or a failed
        ``jupyter-book build``.
    ChapterFailed
        A chapter failed (see :func:`run_chapter`); the book is not built.
    """
    root = find_root(root)
    names, selected = _check_request(root, params, only, edition, overrides)
    explicit = params is not None or reset
    params = params or "default"
    real = params == "real"
    if real and edition != "full":
        raise PipelineError("the real-data edition has no student variant; use --edition full")
    source = _book_sources(root, real, names, selected)
    chapter_dir = source / CHAPTER_DIR
    data_root = Path(data_root) if Path(data_root).is_absolute() else root / data_root
    sets, chosen = _choose_runs(
        selected, params, overrides or {}, chapter_dir, keep_last=not explicit and not real
    )
    notes = _real_edition_runs(root, selected, sets, data_root) if real else {}
    run_all({
        name: dict(params=sets[name], overrides=chosen[name], force=force, root=root, progress=progress,
                   data_root=data_root, out=chapter_dir if real else None, note=notes.get(name))
        for name in names if name in selected
    })  # fmt: skip
    return _assemble(root, source, real, edition, alongside)


def _check_request(
    root: Path, params: str | None, only: Iterable[str] | None, edition: str, overrides: dict[str, Any] | None
) -> tuple[list[str], list[str]]:
    """Refuse a build request that cannot run, before anything runs; return every chapter and those selected.

    Overrides need ``only`` (parameters differ from chapter to chapter), the edition must be one of
    :data:`~shifteval.book.assemble.EDITIONS`, and every selected chapter must exist.
    """
    if overrides and not only:
        raise PipelineError("-p overrides need --only CHAPTER: parameters differ from chapter to chapter")
    if edition not in EDITIONS:
        raise PipelineError(f"unknown edition {edition!r}; editions: {', '.join(EDITIONS)}")
    names = [c.name for c in chapters(root)]
    selected = list(only) if only else names
    unknown = [n for n in selected if n not in names]
    if unknown:  # fail before anything runs
        raise PipelineError(f"unknown chapter(s) {', '.join(unknown)}; chapters: {', '.join(names)}")
    return names, selected


def _book_sources(root: Path, real: bool, names: list[str], selected: list[str]) -> Path:
    """The folder the book is built from, with every chapter that is not selected executed there before.

    The project root, or for the real-data edition a copy of its sources (see
    :func:`~shifteval.book.assemble.real_edition_sources`).
    """
    source = real_edition_sources(root) if real else root
    chapter_dir = source / CHAPTER_DIR
    missing = [n for n in names if n not in selected and cached_key(chapter_dir / f"{n}.ipynb") is None]
    if missing:
        raise PipelineError(
            f"chapters {', '.join(missing)} have never been executed; run them first or drop --only"
        )
    return source


def _choose_runs(
    selected: list[str], params: str, overrides: dict[str, Any], chapter_dir: Path, keep_last: bool
) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """Each selected chapter's parameter set and overrides.

    ``params`` and ``overrides`` for every chapter; with ``keep_last``, a chapter executed before keeps
    the parameter set of its last run, and its overrides unless new ones replace them (see :func:`build`).
    """
    sets: dict[str, str] = {n: params for n in selected}
    chosen = {n: dict(overrides) for n in selected}
    if keep_last:
        for name in selected:
            last = last_run(chapter_dir / f"{name}.ipynb")
            if last:  # new overrides replace the last ones, on the same parameter set
                sets[name] = last[0]
                chosen[name] = dict(overrides) if overrides else last[1]
    return sets, chosen


def _real_edition_runs(
    root: Path, selected: list[str], sets: dict[str, str], data_root: Path
) -> dict[str, str]:
    """Fall back to the default set where a chapter has no public real data, and fetch the data of the rest.

    Changes ``sets`` in place; returns, per chapter that falls back, the note its provenance box shows.
    """
    notes = {}
    for name in selected:
        real_set = load_param_set(get_chapter(name, root), "real")
        if not real_set.public_data:
            sets[name] = "default"
            notes[name] = (
                "No public real data exists for this chapter, so the real-data edition shows it on the "
                "embedded data (its default parameter set). To run it on your own files: "
                + " ".join(real_set.description.split())
            )
    needed = sorted({d for n in selected if sets[n] == "real"
                     for d in load_param_set(get_chapter(n, root), "real").data})  # fmt: skip
    fetch_data(needed, data_root)
    return notes


def _assemble(
    root: Path, source: Path, real: bool, edition: str, alongside: Callable[[], Any] | None = None
) -> Path:
    """Build the edition's HTML with jupyter-book (:func:`~shifteval.book.assemble.build_html`).

    ``alongside`` runs in a thread meanwhile (jupyter-book runs in its own process); its error, if any, is
    raised once the HTML is built.
    """
    if alongside is None:
        return _html(root, source, real, edition)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="alongside") as pool:
        beside = pool.submit(alongside)
        index = _html(root, source, real, edition)
        beside.result()
    return index


def _html(root: Path, source: Path, real: bool, edition: str) -> Path:
    if real:
        return build_html(source, root / "_build" / "real", title_suffix="real-data edition")
    if edition == "student":
        return build_html(
            root, root / "_build" / "student", title_suffix="student edition", hide_solutions=True
        )
    return build_html(root, None)
