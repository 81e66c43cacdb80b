"""The thread count a chapter computes on: fixed, so that a machine's core count does not move its numbers.

Torch's CPU kernels, and the BLAS under numpy and scikit-learn, split sums by thread count, so a network
trained on two threads and one trained on eight differ in their last digits, and training amplifies the
difference over epochs. Every chapter's kernel therefore runs with the same count on every machine,
:data:`DEFAULT_THREADS` unless ``SHIFTEVAL_THREADS`` names another, and at most the count its source
declares (:attr:`shifteval.book.project.Chapter.threads`: one, for the chapters that gain less from a
second thread than from running beside another chapter, which the book build then runs side by side). The count is part of a chapter's cache key
and of its provenance. The zoo's models train on one thread each, in one process per core
(:func:`shifteval.zoo.build.build_zoo`), whatever this count is. The kernel's memory allocator is set up here
too (:func:`allocator_variables`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: Threads of a chapter's kernel (torch's intra-op pool, OpenMP, BLAS) unless ``SHIFTEVAL_THREADS`` is set.
#: Two: the cores of a small laptop. A machine with fewer cores still runs torch on two threads, in turn.
DEFAULT_THREADS = 2

#: The variables that size the thread pools of torch, OpenMP (scikit-learn), OpenBLAS and MKL at start-up.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def chapter_threads(declared: int | None = None) -> int:
    """The thread count chapters compute on: ``SHIFTEVAL_THREADS``, or :data:`DEFAULT_THREADS`.

    Parameters
    ----------
    declared : int, optional
        The most threads a chapter declares it computes on (:attr:`shifteval.book.project.Chapter.threads`):
        the count is then at most this, whatever ``SHIFTEVAL_THREADS`` says.

    Returns
    -------
    int
        A positive count.

    Raises
    ------
    ValueError
        If ``SHIFTEVAL_THREADS`` is set to anything but a positive integer (the message names it).

    Examples
    --------
    >>> import unittest.mock
    >>> with unittest.mock.patch.dict(os.environ, {"SHIFTEVAL_THREADS": ""}):
    ...     chapter_threads() == DEFAULT_THREADS
    True
    >>> with unittest.mock.patch.dict(os.environ, {"SHIFTEVAL_THREADS": "1"}):
    ...     chapter_threads()
    1
    >>> with unittest.mock.patch.dict(os.environ, {"SHIFTEVAL_THREADS": "4"}):
    ...     chapter_threads(declared=1)
    1
    """
    requested = os.environ.get("SHIFTEVAL_THREADS") or str(DEFAULT_THREADS)
    count = int(requested) if requested.strip().isdigit() else 0
    if count < 1:
        raise ValueError(
            f"SHIFTEVAL_THREADS must be a positive integer (threads per chapter), got {requested!r}"
        )
    return count if declared is None else min(count, declared)


def kernel_variables(threads: int) -> dict[str, str]:
    """The environment that makes a chapter's kernel start every thread pool with ``threads`` threads.

    Parameters
    ----------
    threads : int
        From :func:`chapter_threads`.

    Returns
    -------
    dict of str -> str
        One entry per name in :data:`THREAD_VARIABLES`.

    Examples
    --------
    >>> kernel_variables(2)["OMP_NUM_THREADS"]
    '2'
    """
    return {name: str(int(threads)) for name in THREAD_VARIABLES}


def pin(threads: int) -> None:
    """Size this process's thread pools to ``threads``: torch's intra-op pool and the BLAS/OpenMP pools.

    The kernel calls it at start-up (before the chapter's first cell). The environment alone
    (:func:`kernel_variables`) is not enough: torch caps the count it reads from ``OMP_NUM_THREADS`` at
    the machine's cores, so a one-core machine would otherwise train on one thread where others use two.
    Each pool is sized as soon as its library is imported (numpy's BLAS, torch's intra-op pool and its
    OpenMP), before anything computes on it, and at once where it is already imported. Importing torch
    here would cost about two seconds in every kernel whose chapter never uses it, hence the post-import
    hooks (``wrapt``: the standard library has none).

    Parameters
    ----------
    threads : int
        A positive count.

    Examples
    --------
    >>> import threadpoolctl, torch
    >>> before = torch.get_num_threads()
    >>> with threadpoolctl.threadpool_limits(limits=None):  # restores the BLAS/OpenMP pools on exit
    ...     pin(3)
    ...     inside = torch.get_num_threads()
    ...     torch.set_num_threads(before)
    >>> inside
    3
    """
    import wrapt

    count = int(threads)

    def size(module) -> None:
        import threadpoolctl

        if module.__name__ == "torch":
            module.set_num_threads(count)
        threadpoolctl.threadpool_limits(count)  # every BLAS/OpenMP library loaded by now

    for name in ("numpy", "torch"):  # torch imports numpy first: both hooks run, numpy's first
        wrapt.register_post_import_hook(size, name)
    if os.environ.get(ENV_NICE):
        lower_priority(int(os.environ[ENV_NICE]))


#: Set by the book build for the chapters it runs beside others (:mod:`shifteval.book.schedule`): how much
#: their kernels lower their priority at start-up (:func:`lower_priority`).
ENV_NICE = "SHIFTEVAL_NICE"


def lower_priority(nice: int) -> None:
    """Lower this process's CPU priority by ``nice``, and on Linux its session's.

    Linux shares the CPU between sessions first (the scheduler's autogroups, sched(7)) and a chapter's kernel
    starts a session of its own, so ``os.nice`` alone would only order the kernel against its own worker
    processes: the session's nice value (``/proc/self/autogroup``) is what orders it against another
    chapter's kernel. Raising either needs no privilege; where autogroups are off the file is absent
    or refuses the write, and ``os.nice`` is what counts. Priority changes when a process runs, never what it
    computes.

    Parameters
    ----------
    nice : int
        A non-negative increment (0 changes nothing).
    """
    if nice <= 0:
        return
    os.nice(nice)
    try:
        with open("/proc/self/autogroup", "w") as fh:
            fh.write(str(min(nice, 19)))
    except OSError:
        pass


def startup_arguments(threads: int) -> list[str]:
    """The kernel's command-line arguments that call :func:`pin` before the chapter's first cell.

    Parameters
    ----------
    threads : int
        A positive count.

    Returns
    -------
    list of str
        For papermill's ``extra_arguments`` (IPython's ``exec_lines``).

    Examples
    --------
    >>> startup_arguments(2)
    ['--IPKernelApp.exec_lines=["from shifteval.book.threads import pin; pin(2)"]']
    """
    return [f'--IPKernelApp.exec_lines=["from shifteval.book.threads import pin; pin({int(threads)})"]']


#: glibc's allocator settings for a chapter's kernel (``GLIBC_TUNABLES``; other C libraries ignore them).
#: By default glibc returns every freed block above a few MiB to the system and takes it back, page by page,
#: at the next allocation of that size: a training step allocates and frees its activations, so the OOD-AutoEval
#: chapter on one thread took 5.1 million page faults (10.7 s of system time in 115 s). Blocks up to 32 MiB
#: (glibc's largest threshold) come from the heap, and up to 1 GiB of freed heap is kept: 0.43 million
#: faults, 4.2 s of system time, 102 s in all, the same numbers. A page fault costs more on a machine whose
#: memory is full of file cache, so the gain is largest where the machine is busiest.
MALLOC_TUNABLES = {
    "glibc.malloc.mmap_threshold": 32 * 2**20,
    "glibc.malloc.trim_threshold": 2**30,
    "glibc.malloc.top_pad": 256 * 2**20,
}


def allocator_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``GLIBC_TUNABLES`` for a chapter's kernel: :data:`MALLOC_TUNABLES` after the caller's own tunables.

    A tunable the caller already sets (in ``environ``'s ``GLIBC_TUNABLES``) keeps the caller's value.
    The settings change where memory comes from, never a computed value.

    Parameters
    ----------
    environ : dict of str -> str, optional
        The environment the kernel inherits; ``os.environ`` by default.

    Returns
    -------
    dict of str -> str
        ``{"GLIBC_TUNABLES": "name=value:..."}``.

    Examples
    --------
    >>> allocator_variables({})["GLIBC_TUNABLES"].split(":")[0]
    'glibc.malloc.mmap_threshold=33554432'
    >>> mine = allocator_variables({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"})["GLIBC_TUNABLES"]
    >>> mine.count("trim_threshold"), mine.startswith("glibc.malloc.trim_threshold=0:")
    (1, True)
    """
    own = [t for t in (os.environ if environ is None else environ).get("GLIBC_TUNABLES", "").split(":") if t]
    named = {t.partition("=")[0] for t in own}
    ours = [f"{name}={value}" for name, value in MALLOC_TUNABLES.items() if name not in named]
    return {"GLIBC_TUNABLES": ":".join(own + ours)}
