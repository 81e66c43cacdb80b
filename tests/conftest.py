import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from background import OTHER_THREADS, OtherThreadRuns, cores

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
PROJECT_FILES = ("_config.yml", "_toc.yml", "book", "notebooks")


def pytest_addoption(parser):
    parser.addoption(
        "--book-first",
        action="store_true",
        help="build the session's book before any test starts (with -n: once, before the workers start, "
        "so that it has every core; the tests that read it then share it)",
    )


def _worker() -> bool:
    """Whether this process is a pytest-xdist worker (one of several processes running the tests)."""
    return bool(os.environ.get("PYTEST_XDIST_WORKER"))


def shared_dir(tmp_path_factory) -> Path:
    """The folder every process of the session shares: the controller's base temporary folder.

    With pytest-xdist each worker has its own base folder inside the controller's; without it, the one.
    """
    base = tmp_path_factory.getbasetemp()
    return base.parent if _worker() else base


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock across the session's processes (the first holder does the work, the others wait)."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


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


#: The cache of trained models the session's runs share (set by :func:`shared_cache`): a smoke zoo or an
#: OOD backbone trained by one test is loaded by the next, not trained again in each project copy. Every
#: process of the session shares it (content-addressed and locked, so runs never disturb each other).
SESSION_CACHE: list[Path] = []

#: The session's book project (:func:`_shared_project`), once made.
BOOK_PROJECTS: list[Path] = []

#: What runs the book's own chapters (the default parameters, as ``make book``): the book's thread counts,
#: whatever a worker process has for the rest of its runs (see :data:`WORKER_THREADS`).
BOOK_THREADS = {"SHIFTEVAL_THREADS": "", "SHIFTEVAL_ZOO_WORKERS": ""}


def shifteval(*args, cwd, env=None):
    """Run the ``shifteval`` command line in a fresh interpreter (``env``: variables to set for it).

    The run uses the session's shared model cache unless ``env`` names another ``SHIFTEVAL_CACHE``; in the
    session's book project (:func:`_shared_project`) it computes on the book's thread counts, so that the
    book's own runs stay up to date (:data:`BOOK_THREADS`).
    """
    shared = {"SHIFTEVAL_CACHE": str(SESSION_CACHE[0])} if SESSION_CACHE else {}
    if any(Path(cwd).resolve().is_relative_to(p) for p in BOOK_PROJECTS):
        shared |= BOOK_THREADS
    return subprocess.run(
        [sys.executable, "-m", "shifteval.cli", *args],
        cwd=cwd, capture_output=True, text=True, env={**os.environ, **shared, **(env or {})},
    )  # fmt: skip


@pytest.fixture(scope="session", autouse=True)
def shared_cache(tmp_path_factory):
    """One model cache for every run of the session (content-addressed, so runs never disturb each other)."""
    SESSION_CACHE[:] = [shared_dir(tmp_path_factory) / "session-cache"]
    SESSION_CACHE[0].mkdir(parents=True, exist_ok=True)
    yield SESSION_CACHE[0]
    SESSION_CACHE.clear()


#: With pytest-xdist, several test processes share the cores: each computes on one thread (its own numpy,
#: torch and numba, and the chapters it runs) and trains a zoo in one process, so that none of them
#: oversubscribes a core. Set in the controller before it starts the workers, which inherit them before
#: they import anything; the book's own runs keep BOOK_THREADS.
WORKER_THREADS = {
    "SHIFTEVAL_THREADS": "1", "SHIFTEVAL_ZOO_WORKERS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1",
}  # fmt: skip


def pytest_sessionstart(session):
    config = session.config
    if _worker() or config.getoption("collectonly"):
        return
    if config.getoption("--book-first"):  # the controller (or the only process) builds the book first
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        write = reporter.write_line if reporter is not None else print
        write("building the session's book once, before the tests (--book-first) ...")
        status = _build_book(config._tmp_path_factory.getbasetemp(), echo=True)
        write(f"the book {'built' if status['returncode'] == 0 else 'FAILED'} in {status['seconds']:.0f} s")
    if getattr(config.option, "numprocesses", None):  # pytest-xdist starts its workers after this hook
        os.environ.update(WORKER_THREADS)


#: Fixtures that execute chapters or build the book: a test using one is slow (``make test-fast`` skips it).
HEAVY_FIXTURES = {"built_book", "default_project", "real_data", "student_book"}


#: The chapters whose default runs this session's tests use (``tests/test_chapter_<name>.py`` with
#: ``default_project``): :func:`run_default` runs the one-thread ones among them side by side.
DEFAULT_RUNS: set[str] = set()


#: The chapters whose re-runs on another thread count this session's thread tests need (fixture ``other_thread_runs``).
THREAD_RERUNS: list[str] = []

BACKGROUND = pytest.StashKey[OtherThreadRuns]()


# Before pytest-xdist's own hook, which reads the xdist_group marks into the test ids ("...@book") that
# --dist loadgroup schedules by (under pytest 9, :class:`GroupIds` writes them). The tests that edit the
# shared book's inputs also hold its "book-inputs.lock", so they stay safe however they are scheduled.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if HEAVY_FIXTURES & fixtures:
            item.add_marker(pytest.mark.slow)
        # with pytest-xdist (--dist loadgroup): the tests that read or rebuild the session's built book run
        # in one process, one after another; so do the thread tests, which share their re-runs
        if {"built_book", "student_book"} & fixtures:
            item.add_marker(pytest.mark.xdist_group("book"))
        elif "other_thread_runs" in fixtures:
            item.add_marker(pytest.mark.xdist_group("threads"))
        module = getattr(item, "module", None)
        if (
            "default_project" in fixtures
            and module is not None
            and module.__name__.startswith("test_chapter_")
        ):
            DEFAULT_RUNS.add(module.__name__.removeprefix("test_chapter_").replace("_", "-"))
    # The one-core tests run one after another, where the first of them stands, so that the thread test's
    # re-runs (started with the first) have the other core for as long as possible.
    one_core = [item for item in items if item.get_closest_marker("one_core")]
    if one_core:
        first = items.index(one_core[0])
        rest = [item for item in items if not item.get_closest_marker("one_core")]
        items[:] = rest[:first] + one_core + rest[first:]


class GroupIds:
    """Puts a test's ``xdist_group`` into the id pytest 9 reports, as pytest-xdist does for older pytest.

    pytest-xdist's ``--dist loadgroup`` sends every test of a group to one worker, reading the group from
    the end of the test's id (``...@book``). Its worker writes that id to ``item._nodeid``, which pytest 9
    no longer reads (the id comes from ``item._id``), so no test was grouped: one worker then sat idle on a
    lock while the other built the student edition or rebuilt the book (about 50 s, twice a session). This
    plugin runs after pytest-xdist's hook and copies the id it wrote to where pytest 9 reads it.
    """

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        try:
            from _pytest.nodeid import NodeId  # pytest 9; earlier, pytest-xdist's own suffix is read
        except ImportError:
            return
        for item in items:
            grouped = getattr(item, "_nodeid", None)  # set by pytest-xdist's worker under --dist loadgroup
            if (
                isinstance(grouped, str)
                and grouped != item.nodeid
                and isinstance(getattr(item, "_id", None), NodeId)
            ):
                item._id = NodeId.parse(grouped)


def pytest_configure(config):
    config.pluginmanager.register(GroupIds(), "shifteval-group-ids")


def pytest_collection_finish(session):
    # after deselection (-k, -m): only the thread tests that will run ask for re-runs
    for item in session.items:
        chapter = getattr(getattr(item, "callspec", None), "params", {}).get("chapter")
        if "other_thread_runs" in getattr(item, "fixturenames", ()) and chapter not in THREAD_RERUNS:
            THREAD_RERUNS.append(chapter)


@pytest.fixture(scope="session", autouse=True)
def background_runs(request, tmp_path_factory):
    """The thread test's re-runs on two threads (:class:`background.OtherThreadRuns`); not started yet."""
    runs = OtherThreadRuns(
        THREAD_RERUNS, lambda: copy_project(tmp_path_factory.mktemp("other-threads") / "project")
    )
    request.config.stash[BACKGROUND] = runs
    yield runs
    runs.stop()


def _background(item):
    """The session's background runs when ``item`` is a slow test (fast tests neither start nor wait).

    None in a pytest-xdist worker: several processes already share the cores, and each worker collects
    every test (it cannot know which thread tests it will run); the thread tests then run their re-runs
    side by side when they need them.
    """
    runs = item.config.stash.get(BACKGROUND, None)
    return runs if runs is not None and item.get_closest_marker("slow") and not _worker() else None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # A slow test that may use more than one core waits until the background runs are done.
    runs = _background(item)
    if runs is not None and runs.running and not item.get_closest_marker("one_core"):
        runs.wait()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    # A slow one-core test leaves the other cores to the thread test's re-runs (after its fixtures have
    # run: the book it reads may first have to be built on every core).
    runs = _background(item)
    if runs is not None and item.get_closest_marker("one_core") and cores() > 1:
        runs.start(max(1, (cores() - 1) // OTHER_THREADS))


@pytest.fixture
def project(tmp_path):
    return copy_project(tmp_path / "project")


#: The project's own store of trained models (zoo, OOD-AutoEval backbones): ``make book`` fills it.
PROJECT_CACHE = ROOT / ".cache" / "shifteval"


def _shared_project(shared: Path) -> Path:
    """The project copy the session's default runs share: it starts with the chapters ``make book`` published.

    Made once per session (the first process to ask makes it; the others wait for it).
    """
    project = shared / "defaults" / "project"
    if project.resolve() not in BOOK_PROJECTS:
        BOOK_PROJECTS.append(project.resolve())
    with _locked(shared / "defaults.lock"):
        if not (project / "_toc.yml").is_file():
            copy_project(project)
            published = ROOT / "book" / "chapters"
            for notebook in published.glob("*.ipynb"):
                results = published / f"{notebook.stem}.results.json"
                if results.is_file():
                    for path in (results, notebook):  # the notebook last: its key marks the pair complete
                        shutil.copy2(path, project / "book" / "chapters" / path.name)
    return project


@pytest.fixture(scope="session")
def default_project(tmp_path_factory):
    """A project copy shared by the tests that run chapters with their default parameters.

    One execution serves both ``make book`` and ``make test``: the copy starts with the chapters this
    project has published (``make book``), and its runs share the project's model store. A published
    chapter whose cache key still matches (same source, parameters, library, data and thread count) is
    not executed again; any other is, and what it trains is stored for the next ``make book``. Every
    process of the session shares the copy.
    """
    return _shared_project(shared_dir(tmp_path_factory))


#: Why the session's book build failed (empty while it has not failed): the tests that read the book, and
#: :func:`run_default`, fail at once with it instead of executing chapters again.
BOOK_FAILURE: list[str] = []


def _build_book(shared: Path, echo: bool = False) -> dict:
    """Build the session's book once (``make book``'s command, in :func:`_shared_project`); its status.

    The first process to ask builds it; the others wait and read what it left: ``returncode``, ``stdout``,
    ``stderr`` and ``seconds`` (in ``book-status.json``). ``echo`` shows the build's progress meanwhile.
    """
    import json
    import time

    status_file = shared / "book-status.json"
    with _locked(shared / "book.lock"):
        if status_file.is_file():
            return json.loads(status_file.read_text())
        project = _shared_project(shared)
        start = time.perf_counter()
        cmd = [sys.executable, "-m", "shifteval.cli", "build", "--params", "default", "--labs"]
        # --params: a chapter published with other parameters (a smoke or a student's run) runs again
        env = {**os.environ, "SHIFTEVAL_CACHE": str(PROJECT_CACHE), **BOOK_THREADS}
        out_file = shared / "book-stdout.txt"
        with open(out_file, "w") as stdout:  # a file: jupyter-book's long output never fills a pipe
            proc = subprocess.Popen(
                cmd, cwd=project, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True
            )
            stderr = []
            for line in proc.stderr:  # the build's progress, shown as it goes when asked
                stderr.append(line)
                if echo and not line.startswith("Executing:"):
                    sys.stderr.write(line)
            returncode = proc.wait()
        status = {"returncode": returncode, "stdout": out_file.read_text(), "stderr": "".join(stderr),
                  "seconds": time.perf_counter() - start}  # fmt: skip
        status_file.write_text(json.dumps(status))
        return status


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """The book as ``make book`` builds it, once per test session: every chapter's default run, then
    the HTML and, beside it, the labs (from the same cache). The runs are those of :func:`run_default`
    (whichever comes first executes), so the pages tested are the pages readers get, and no chapter
    executes twice. Every process of the session shares it (``--book-first`` builds it before any test).

    A failed build fails every test that uses it at once, with the build's own error (pytest keeps a
    session fixture's failure), and :func:`run_default` refuses to execute chapters again after it.
    """
    if BOOK_FAILURE:
        pytest.fail(BOOK_FAILURE[0], pytrace=False)
    shared = shared_dir(tmp_path_factory)
    status = _build_book(shared)
    out = subprocess.CompletedProcess(
        ["shifteval", "build"], status["returncode"], status["stdout"], status["stderr"]
    )
    if out.returncode != 0:
        BOOK_FAILURE.append(f"the book build failed (exit {out.returncode}):\n{out.stderr[-4000:]}")
        pytest.fail(BOOK_FAILURE[0], pytrace=False)
    return _shared_project(shared), out


def run_default(project, chapter):
    """Run ``chapter`` with its default parameters in ``project`` (once: later calls hit the cache).

    A chapter that declares one thread runs side by side with the other such chapters whose default runs
    this session needs (:data:`DEFAULT_RUNS`), as ``make book`` runs them.
    """
    import json

    from shifteval.book.project import chapters

    status = project.parents[1] / "book-status.json"  # the session's book build, in this process or another
    if not BOOK_FAILURE and project.name == "project" and status.is_file():
        built = json.loads(status.read_text())
        if built["returncode"] != 0:
            BOOK_FAILURE.append(
                f"the book build failed (exit {built['returncode']}):\n{built['stderr'][-4000:]}"
            )
    if BOOK_FAILURE:  # the book's runs failed: executing the chapter again would only fail slower
        pytest.fail(BOOK_FAILURE[0], pytrace=False)
    one_thread = {c.name for c in chapters(project) if c.threads == 1}
    names = (
        [chapter, *sorted((one_thread & DEFAULT_RUNS) - {chapter})] if chapter in one_thread else [chapter]
    )
    out = shifteval("run", *names, cwd=project, env={"SHIFTEVAL_CACHE": str(PROJECT_CACHE), **BOOK_THREADS})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads((project / "book" / "chapters" / f"{chapter}.results.json").read_text())


def write_idx_dataset(folder, images, labels, split_at):
    """MNIST's four-file idx layout (images gzipped, labels not) in ``folder``: the first ``split_at``
    images are the training split, the rest the test split."""
    import gzip

    import numpy as np

    from shifteval.datasets.real import encode_idx

    folder.mkdir(parents=True)
    for prefix, sl in (("train", slice(0, split_at)), ("t10k", slice(split_at, None))):
        (folder / f"{prefix}-images-idx3-ubyte.gz").write_bytes(gzip.compress(encode_idx(images[sl])))
        (folder / f"{prefix}-labels-idx1-ubyte").write_bytes(encode_idx(np.asarray(labels[sl], np.uint8)))


@contextlib.contextmanager
def static_server(folder):
    """A quiet static web server for ``folder`` on a free local port; yields its base URL (ending in /)."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def real_data(tmp_path_factory):
    """MNIST and Fashion-MNIST fetched the way users get them: ``shifteval data get`` with checksums,
    here from a local web server mirroring ``../shared/realdata`` (skipped when that folder is absent)."""
    source = SHARED / "realdata"
    if not (source / "mnist").is_dir() or not (source / "fashion-mnist").is_dir():
        pytest.skip(f"real data folder {source} is absent")
    root = tmp_path_factory.mktemp("data")
    with static_server(source) as base_url:
        mirror = f"{base_url}{{name}}"
        out = shifteval(
            "data", "get", "mnist", "fashion-mnist", "--root", str(root), "--mirror", mirror, cwd=ROOT
        )
    assert out.returncode == 0, out.stderr[-3000:]
    return root


@pytest.fixture(scope="session")
def student_book(built_book):
    """The student edition of the session's book (``make book EDITION=student``): its HTML folder.

    Built once, from the same executed chapters (its pages link the labs' student zips, which the build
    copies in); a failed build fails its tests at once.
    """
    project, _ = built_book
    with _locked(project.parent / "student.lock"):
        out = shifteval("build", "--edition", "student", cwd=project)
    if out.returncode != 0:
        pytest.fail(
            f"the student edition did not build (exit {out.returncode}):\n{out.stderr[-4000:]}", pytrace=False
        )
    return project / "_build" / "student" / "html"
