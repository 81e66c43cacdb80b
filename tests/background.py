"""Chapter runs that go on in the background while tests that use one core go on beside them.

The thread test (``test_threads.py``) re-runs the torch-trained chapters, which compute on one thread, on
:data:`OTHER_THREADS` each. The tests marked ``one_core`` (the book's pages in a browser, Sphinx rebuilds)
need about one core, so beside them the re-runs go one at a time (they then share a core with those tests:
slower, the same numbers). ``conftest.py`` starts these runs
when the first ``one_core`` test starts, keeps the ``one_core`` tests together, and makes every other
slow test wait until the runs have finished, so the runs never compete with a test that computes on
every core.
"""

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

#: The thread count of the re-runs: another arithmetic than the book's one thread.
OTHER_THREADS = 2


def cores() -> int:
    """The machine's cores (at least one)."""
    return max(1, os.cpu_count() or 1)


class OtherThreadRuns:
    """Default runs of ``chapters`` on :data:`OTHER_THREADS` threads, each in its own project copy made by
    ``make_project``, whose chapter source declares that count instead of one.

    ``start(lanes)`` begins them, at most ``lanes`` at a time, and returns at once; ``wait()`` blocks
    until all have ended (and lets them use every core meanwhile); ``results()`` waits and returns
    ``{chapter: (exit status, stderr, results path)}``.
    """

    def __init__(self, chapters, make_project):
        self.chapters = list(chapters)
        self._make_project = make_project
        self._lanes = 1
        self._changed = threading.Condition()
        self._driver: threading.Thread | None = None
        self._processes: dict[str, tuple[subprocess.Popen, Path]] = {}
        self._stopped = False
        self._failure: BaseException | None = None

    @property
    def running(self) -> bool:
        return self._driver is not None and self._driver.is_alive()

    def start(self, lanes: int) -> None:
        """Begin the runs (once; a later call changes nothing), at most ``lanes`` side by side."""
        if self._driver is not None or not self.chapters:
            return
        self._lanes = max(1, lanes)
        self._driver = threading.Thread(target=self._drive, name="thread re-runs", daemon=True)
        self._driver.start()

    def _launch(self, chapter) -> subprocess.Popen:
        project = self._make_project()
        source = project / "notebooks" / f"{chapter}.py"
        header = "#   shifteval:\n#     threads: 1\n"
        if header not in source.read_text(encoding="utf-8"):
            raise RuntimeError(f"{source}: expected its header to declare one thread")
        source.write_text(
            source.read_text(encoding="utf-8").replace(
                header, f"#   shifteval:\n#     threads: {OTHER_THREADS}\n", 1
            ),
            encoding="utf-8",
        )
        threads = {"SHIFTEVAL_THREADS": str(OTHER_THREADS)}
        with open(project / "stderr.txt", "w") as log:  # a file, not a pipe: nothing blocks on a full pipe
            process = subprocess.Popen(
                [sys.executable, "-m", "shifteval.cli", "run", chapter], cwd=project,
                env={**os.environ, **threads}, stdout=subprocess.DEVNULL, stderr=log,
                start_new_session=True,  # its own process group (its kernel ends when it does)
            )  # fmt: skip
        self._processes[chapter] = (process, project)
        return process

    def _drive(self) -> None:
        try:
            self._run_all()
        except BaseException as exc:  # kept for results(): a thread's exception would otherwise be lost
            self._failure = exc

    def _run_all(self) -> None:
        running: list[subprocess.Popen] = []
        for chapter in self.chapters:
            with self._changed:
                while True:
                    running = [p for p in running if p.poll() is None]
                    if self._stopped:
                        return
                    if len(running) < self._lanes:
                        break
                    self._changed.wait(timeout=0.5)  # a run ending, or more lanes granted
                running.append(self._launch(chapter))
        for process in running:
            process.wait()

    def wait(self) -> None:
        """Block until every run has ended; nothing else computes meanwhile, so they may use every core."""
        if self._driver is None:
            return
        with self._changed:
            self._lanes = max(1, cores() // OTHER_THREADS)
            self._changed.notify_all()
        self._driver.join()

    def results(self) -> dict:
        """Start the runs if nobody did (side by side, as many as the cores hold), wait, and return what each
        left."""
        self.start(max(1, cores() // OTHER_THREADS))
        self.wait()
        if self._failure is not None:
            raise RuntimeError("the thread test's re-runs could not be started") from self._failure
        out = {}
        for chapter, (process, project) in self._processes.items():
            stderr = (project / "stderr.txt").read_text()
            out[chapter] = (process.wait(), stderr, project / "book" / "chapters" / f"{chapter}.results.json")
        return out

    def stop(self) -> None:
        """End every run still going (the session is over: nobody will read them)."""
        with self._changed:
            self._stopped = True
        for process, _ in self._processes.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):  # it may have ended since
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
