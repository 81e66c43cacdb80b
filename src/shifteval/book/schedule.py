"""When each chapter of a build starts: the chapters that compute on one thread, in lanes beside the others.

The book build runs the chapters that use every core (replication-world: the zoo's processes) one after
another in this process, and the chapters that declare one thread
(:attr:`~shifteval.book.project.Chapter.threads`) in worker processes, one per core. A one-thread chapter
starts as soon as every chapter its header names in ``after`` (:attr:`~shifteval.book.project.Chapter.after`)
is done; those that name none start at once, beside the first chapters. The lanes run at a lower
priority (:func:`yielding`), all but the longest: the first chapters are what the later ones wait for,
so the chapters beside them take only the cycles they leave (the zoo's last models, a single-threaded
cell). :class:`Lanes` keeps that order:
``concurrent.futures`` runs work but does not start it on other work's completion, and a task-graph
library (Dask, Ray) would be a large dependency for a handful of chapters, so the bookkeeping is written
out here.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from .project import PipelineError
from .threads import ENV_NICE

#: How much the kernels the lanes start lower their priority (:func:`~shifteval.book.threads.lower_priority`).
YIELD = 10


def yielding(name: str, side: list[str]) -> int:
    """How much a one-thread chapter's kernel lowers its priority: 0 for the longest (the first of ``side``), else :data:`YIELD`.

    The longest one-thread chapter is as long as what the first chapters compute (OOD-AutoEval against
    replication-world's zoo), so it keeps its core; the others take the cycles left.

    Examples
    --------
    >>> [yielding(n, ["ood", "mlm"]) for n in ("ood", "mlm")]
    [0, 10]
    """
    return 0 if side and name == side[0] else YIELD


def in_lane(run: Callable[..., Any], name: str, nice: int, kwargs: dict) -> Any:
    """``run(name, **kwargs)`` in a lane, the kernel it starts lowering its priority by ``nice``."""
    from .assemble import log

    log(f"[book] {name}: starts, on one thread" + (" at a lower priority" if nice else ""))
    os.environ[ENV_NICE] = str(nice)
    return run(name, **kwargs)


def check_order(first: list[str], side: list[str], waits: dict[str, tuple[str, ...]]) -> None:
    """Refuse an order that cannot run: a chapter that waits for itself, or a first one that waits for a later one.

    Parameters
    ----------
    first : list of str
        The chapters that run one after another in this process, in their order.
    side : list of str
        The one-thread chapters that run in lanes.
    waits : dict of str -> tuple of str
        Per chapter, the chapters of this run it starts after.

    Raises
    ------
    PipelineError
        If a one-thread chapter waits, directly or through others, for itself, or a chapter of ``first``
        waits for a one-thread chapter or for one after it.

    Examples
    --------
    >>> check_order(["world"], ["fits", "bias"], {"world": (), "fits": ("world",), "bias": ("fits",)})
    >>> check_order([], ["a", "b"], {"a": ("b",), "b": ("a",)})
    Traceback (most recent call last):
    ...
    shifteval.book.project.PipelineError: chapter 'a' waits for itself (after: a -> b -> a)
    """
    for i, name in enumerate(first):
        late = [w for w in waits.get(name, ()) if w not in first[:i]]
        if late:
            raise PipelineError(
                f"chapter {name!r} uses every core, so it can only wait for such chapters before it in the "
                f"book's order, not for {', '.join(late)}"
            )
    for name in side:
        todo = [(name, [name])]
        while todo:
            current, path = todo.pop()
            for w in waits.get(current, ()):
                if w == name:
                    raise PipelineError(
                        f"chapter {name!r} waits for itself (after: {' -> '.join([*path, w])})"
                    )
                if w in side and w not in path:
                    todo.append((w, [*path, w]))


def in_order(side: list[str], waits: dict[str, tuple[str, ...]], done: Iterable[str]) -> list[str]:
    """The one-thread chapters one after another: each after those it waits for, else in the given order.

    Examples
    --------
    >>> in_order(["long", "short"], {"long": ("short",), "short": ()}, done=[])
    ['short', 'long']
    """
    order: list[str] = []
    finished = set(done)
    while len(order) < len(side):
        name = next(n for n in side if n not in order and all(w in finished for w in waits[n]))
        order.append(name)
        finished.add(name)
    return order


class Lanes:
    """One-thread chapters in worker processes, one per lane, each started once those it waits for are done.

    Parameters
    ----------
    side : list of str
        The chapters, in the order they start when several may (longest first).
    waits : dict of str -> tuple of str
        Per chapter, the chapters of this run it starts after.
    lanes : int
        Worker processes.
    submit : callable
        ``submit(pool, name)`` submits a chapter's run to the pool and returns its future.
    """

    def __init__(self, side: list[str], waits: dict[str, tuple[str, ...]], lanes: int,
                 submit: Callable[[ProcessPoolExecutor, str], Future]):  # fmt: skip
        self._side, self._waits, self._submit = side, waits, submit
        self._pool = ProcessPoolExecutor(lanes, mp_context=multiprocessing.get_context("spawn"))
        # re-entrant: a future that is done at once runs its callback in the thread that submits it
        self._changed = threading.Condition(threading.RLock())
        self._done: set[str] = set()
        self._active = 0
        self._stopped = False
        self.futures: dict[str, Future] = {}

    def start(self) -> None:
        """Start the chapters that wait for none."""
        with self._changed:
            self._release()

    def finished(self, name: str) -> None:
        """Record a chapter as done (run without failure) and start those that were waiting for it."""
        with self._changed:
            self._done.add(name)
            self._release()

    def stop(self) -> None:
        """Start no more chapters; those not yet started are dropped (the running ones finish)."""
        with self._changed:
            self._stopped = True
            for future in self.futures.values():
                future.cancel()

    def wait(self) -> dict[str, Future]:
        """Wait until no chapter runs or can start, close the workers; the futures of every chapter started."""
        try:
            with self._changed:
                self._changed.wait_for(lambda: self._active == 0)
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)
        return self.futures

    def _release(self) -> None:
        if self._stopped:
            return
        for name in self._side:
            if name not in self.futures and all(w in self._done for w in self._waits[name]):
                self._active += 1
                future = self.futures[name] = self._submit(self._pool, name)
                future.add_done_callback(functools.partial(self._ended, name))

    def _ended(self, name: str, future: Future) -> None:
        with self._changed:
            if not future.cancelled() and future.exception() is None:
                self._done.add(name)
                self._release()
            self._active -= 1
            self._changed.notify_all()
