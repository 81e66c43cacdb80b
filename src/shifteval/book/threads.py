"""The thread count a chapter computes on: fixed, so that a machine's core count does not move its numbers.

Torch's CPU kernels, and the BLAS under numpy and scikit-learn, split sums by thread count, so a network
trained on two threads and one trained on eight differ in their last digits, and training amplifies the
difference over epochs. Every chapter's kernel therefore runs with the same count on every machine,
:data:`DEFAULT_THREADS` unless ``SHIFTEVAL_THREADS`` names another. The count is part of a chapter's
cache key and of its provenance. The zoo's models train on one thread each, in one process per core
(:func:`shifteval.zoo.build_zoo`), whatever this count is.
"""

from __future__ import annotations

import os

#: Threads of a chapter's kernel (torch's intra-op pool, OpenMP, BLAS) unless ``SHIFTEVAL_THREADS`` is set.
#: Two: the cores of a small laptop. A machine with fewer cores still runs torch on two threads, in turn.
DEFAULT_THREADS = 2

#: The variables that size the thread pools of torch, OpenMP (scikit-learn), OpenBLAS and MKL at start-up.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def chapter_threads() -> int:
    """The thread count chapters compute on: ``SHIFTEVAL_THREADS``, or :data:`DEFAULT_THREADS`.

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
    """
    requested = os.environ.get("SHIFTEVAL_THREADS") or str(DEFAULT_THREADS)
    count = int(requested) if requested.strip().isdigit() else 0
    if count < 1:
        raise ValueError(
            f"SHIFTEVAL_THREADS must be a positive integer (threads per chapter), got {requested!r}"
        )
    return count


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
    """Size this process's thread pools to ``threads``: torch's intra-op pool, and BLAS/OpenMP pools loaded.

    The kernel calls it at start-up (before the chapter's first cell). The environment alone
    (:func:`kernel_variables`) is not enough: torch caps the count it reads from ``OMP_NUM_THREADS`` at
    the machine's cores, so a one-core machine would otherwise train on one thread where others use two.

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
    import threadpoolctl
    import torch

    torch.set_num_threads(int(threads))
    threadpoolctl.threadpool_limits(int(threads))


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
