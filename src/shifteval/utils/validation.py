"""Input checks shared by the library's public functions, with one numerical tolerance.

Each check returns the input as a numpy array of the documented dtype, or raises ``ValueError`` naming
the argument (and, with ``where``, the file or object it came from) and what was expected. Modules call
these instead of keeping their own copies, so two functions never disagree about what a valid
probability row is.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

TOLERANCE = 1e-3  # how far a probability row's sum may be from 1, and a probability outside [0, 1]


def _prefix(name: str, where: str | None) -> str:
    return f"{where}: {name!r}" if where else f"{name!r}"


def probabilities(
    probs: ArrayLike, name: str = "probs", n_classes: int | None = None, where: str | None = None
) -> NDArray[np.float64]:
    """Check an N×K array of probability rows (softmax outputs).

    Parameters
    ----------
    probs : array-like, shape (N, K)
        Finite values in [0, 1] (within :data:`TOLERANCE`), each row summing to 1 within :data:`TOLERANCE`.
    name, where : str
        How the message names the argument and where it came from.
    n_classes : int, optional
        Required number of columns.

    Returns
    -------
    numpy.ndarray of float64
        ``probs`` as a float64 array (values unchanged).

    Raises
    ------
    ValueError
        If ``probs`` is not a non-empty 2-D numeric array, has the wrong number of columns, holds
        NaN/infinite values or values outside [0, 1], or has a row not summing to 1.

    Examples
    --------
    >>> probabilities([[0.2, 0.8], [1.0, 0.0]]).shape
    (2, 2)
    >>> probabilities([[0.2, 1.3]])
    Traceback (most recent call last):
    ...
    ValueError: 'probs' must hold probabilities in [0, 1]; found 1.3 (logits? apply a softmax first)
    """
    who = _prefix(name, where)
    arr = np.asarray(probs)
    if arr.ndim != 2 or arr.shape[0] == 0 or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(
            f"{who} must be a non-empty N×K numeric array, got shape {arr.shape} dtype {arr.dtype}"
        )
    arr = arr.astype(np.float64)
    if n_classes is not None and arr.shape[1] != n_classes:
        raise ValueError(f"{who} must have {n_classes} columns (one per class), got {arr.shape[1]}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{who} contains NaN or infinite values")
    bad = arr[(arr < -TOLERANCE) | (arr > 1 + TOLERANCE)]
    if bad.size:
        raise ValueError(
            f"{who} must hold probabilities in [0, 1]; found {bad[0]:.4g} (logits? apply a softmax first)"
        )
    sums = arr.sum(axis=1)
    worst = int(np.argmax(np.abs(sums - 1)))
    if abs(sums[worst] - 1) > TOLERANCE:
        raise ValueError(f"{who}: every row must sum to 1; row {worst} sums to {sums[worst]:.4f}")
    return arr


def labels(
    values: ArrayLike,
    name: str = "labels",
    n: int | None = None,
    n_classes: int | None = None,
    where: str | None = None,
) -> NDArray[np.int64]:
    """Check a 1-D array of integer class labels (length ``n``, values in ``[0, n_classes)``).

    Parameters
    ----------
    values : array-like, shape (N,)
        Integer labels (an empty array of any dtype is accepted).
    name : str
        How the message names the argument.
    n : int, optional
        Required length.
    n_classes : int, optional
        Number of classes; labels must lie in ``[0, n_classes)``.
    where : str, optional
        The file or object the labels came from, for the message.

    Returns
    -------
    numpy.ndarray of int64
        ``values`` as an int64 array.

    Raises
    ------
    ValueError
        If ``values`` is not a 1-D integer array, has not ``n`` entries, or has a label outside
        ``[0, n_classes)``.

    Examples
    --------
    >>> labels([0, 2, 1], n_classes=3).tolist()
    [0, 2, 1]
    >>> labels([0, 3], n_classes=3)
    Traceback (most recent call last):
    ...
    ValueError: 'labels' must lie in [0, 3); found 3
    """
    who = _prefix(name, where)
    arr = np.asarray(values)
    if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise ValueError(f"{who} must be a 1-D integer array, got shape {arr.shape} dtype {arr.dtype}")
    if n is not None and len(arr) != n:
        raise ValueError(f"{who} must have {n} entries (one per example), got {len(arr)}")
    if n_classes is not None and arr.size and (arr.min() < 0 or arr.max() >= n_classes):
        bad = arr[(arr < 0) | (arr >= n_classes)][0]
        raise ValueError(f"{who} must lie in [0, {n_classes}); found {bad}")
    return arr.astype(np.int64)


def same_length(**arrays: ArrayLike) -> int:
    """Check that the named arrays have one common length; return it.

    Parameters
    ----------
    **arrays : array-like
        The arrays, by the names the message should use (scalars count as length 1).

    Returns
    -------
    int
        The common length (0 when no array is given).

    Raises
    ------
    ValueError
        If two arrays differ in length.

    Examples
    --------
    >>> same_length(a=[1, 2], b=np.zeros(2))
    2
    >>> same_length(y_true=[1, 2, 3], y_pred=[1, 2])
    Traceback (most recent call last):
    ...
    ValueError: arguments must have one length; got y_true: 3, y_pred: 2
    """
    lengths = {k: len(np.atleast_1d(np.asarray(v))) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(
            "arguments must have one length; got " + ", ".join(f"{k}: {v}" for k, v in lengths.items())
        )
    return next(iter(lengths.values()), 0)


def fraction(value: float, name: str, closed: bool = False) -> float:
    """Check a number in (0, 1) (``closed=True``: [0, 1]).

    Parameters
    ----------
    value : float
        The number to check.
    name : str
        How the message names the argument.
    closed : bool
        Accept the end points 0 and 1.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    ValueError
        If ``value`` lies outside the interval.

    Examples
    --------
    >>> fraction(1, "weight", closed=True)
    1.0
    >>> fraction(0.95, "ci")
    0.95
    >>> fraction(1.0, "ci")
    Traceback (most recent call last):
    ...
    ValueError: 'ci' must lie in (0, 1), got 1.0
    """
    value = float(value)
    ok = 0 <= value <= 1 if closed else 0 < value < 1
    if not ok:
        raise ValueError(f"{name!r} must lie in {'[0, 1]' if closed else '(0, 1)'}, got {value}")
    return value


def positive_int(value: int | np.integer, name: str, minimum: int = 1) -> int:
    """Check an integer ``>= minimum`` (booleans refused).

    Parameters
    ----------
    value : int or numpy integer
        The number to check; floats and booleans are refused.
    name : str
        How the message names the argument.
    minimum : int
        Smallest accepted value.

    Returns
    -------
    int
        ``value`` as a Python int.

    Raises
    ------
    ValueError
        If ``value`` is not an integer (or is a bool) or is below ``minimum``.

    Examples
    --------
    >>> positive_int(3, "n_boot")
    3
    >>> positive_int(0, "n_boot")
    Traceback (most recent call last):
    ...
    ValueError: 'n_boot' must be an integer >= 1, got 0
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name!r} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def images(values: ArrayLike, name: str = "images", where: str | None = None) -> NDArray[np.float32]:
    """Check a stack of grayscale images, shape (N, H, W), values in [0, 1].

    Parameters
    ----------
    values : array-like, shape (N, H, W)
        Pixel values in [0, 1] (within :data:`TOLERANCE`).
    name : str
        How the message names the argument.
    where : str, optional
        The file or object the images came from, for the message.

    Returns
    -------
    numpy.ndarray of float32
        ``values`` as a float32 array.

    Raises
    ------
    ValueError
        If ``values`` is not a non-empty 3-D array or holds non-finite values or values outside [0, 1].

    Examples
    --------
    >>> images(np.zeros((2, 8, 8))).dtype
    dtype('float32')
    >>> images(np.full((1, 2, 2), 255.0), where="batch.npz")
    Traceback (most recent call last):
    ...
    ValueError: batch.npz: 'images' must hold finite pixel values in [0, 1]
    """
    who = _prefix(name, where)
    arr = np.asarray(values)
    if arr.ndim != 3 or arr.shape[0] == 0:
        raise ValueError(f"{who} must be a non-empty (N, H, W) array, got shape {arr.shape}")
    arr = arr.astype(np.float32)
    if not np.isfinite(arr).all() or arr.min() < -TOLERANCE or arr.max() > 1 + TOLERANCE:
        raise ValueError(f"{who} must hold finite pixel values in [0, 1]")
    return arr


def check_votes(
    counts: ArrayLike, annotators: int | ArrayLike, name: str = "counts"
) -> tuple[NDArray[np.int64], int | NDArray[np.int64]]:
    """Check positive-vote counts out of ``annotators`` votes per item.

    ``annotators`` is the number of annotators per item: one number for every item or one per item
    (real annotation data gives items different numbers of votes, e.g. ImageNetV2's "at least 10").

    Parameters
    ----------
    counts : array_like of int
        Positive ("yes") votes per item.
    annotators : int or array_like of int
        Annotators per item: one number, or one per item.
    name : str
        The argument's name in error messages.

    Returns
    -------
    counts : ndarray of int64
    annotators : int, or ndarray of int64 with one entry per item

    Raises
    ------
    ValueError
        On counts that are not whole numbers in ``[0, annotators_i]``, or a malformed ``annotators``.

    Examples
    --------
    >>> check_votes([3, 0, 10], 10)
    (array([ 3,  0, 10]), 10)
    >>> check_votes([3, 12], [10, 12])[1]
    array([10, 12])
    >>> check_votes([3, 11], [10, 10])
    Traceback (most recent call last):
    ...
    ValueError: counts must not exceed annotators=10; found 11
    """
    counts = np.asarray(counts)
    if counts.ndim != 1 or len(counts) == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of vote counts")
    checked: int | NDArray[Any]
    checked = np.asarray(annotators)
    if checked.ndim == 0:
        if checked != np.round(checked) or int(checked) < 1:
            raise ValueError(f"annotators must be at least 1, got {annotators!r}")
        checked = int(checked)
    elif checked.shape != counts.shape:
        raise ValueError(
            f"annotators must be one number or one per item ({len(counts)}), got shape {checked.shape}"
        )
    elif not np.all(np.isfinite(checked)) or np.any(checked != np.round(checked)) or checked.min() < 1:
        raise ValueError("annotators must be whole numbers, at least 1")
    else:
        checked = checked.astype(np.int64)
    if not np.all(np.isfinite(counts)) or np.any(counts != np.round(counts)):
        raise ValueError(f"{name} must be whole numbers of votes")
    if counts.min() < 0:
        raise ValueError(f"{name} must be non-negative; found {counts.min()}")
    over = counts > checked
    if over.any():
        limit = checked if np.ndim(checked) == 0 else int(np.asarray(checked)[over][0])
        raise ValueError(f"{name} must not exceed annotators={limit}; found {counts[over][0]}")
    return counts.astype(np.int64), checked


def check_vote_matrix(votes: ArrayLike, name: str = "votes") -> NDArray[np.float64]:
    """Check an (images, annotators) array of 0/1 votes, NaN where an annotator did not vote on an image.

    Parameters
    ----------
    votes : array_like, shape (images, annotators)
        One column per annotator: 1 (yes), 0 (no) or NaN (no vote).
    name : str
        The argument's name in error messages.

    Returns
    -------
    ndarray of float, shape (images, annotators)

    Raises
    ------
    ValueError
        Unless ``votes`` is a 2-D array with at least one image and one annotator, holding only 0, 1
        and NaN.

    Examples
    --------
    >>> check_vote_matrix([[1, 0], [np.nan, 1]]).tolist()
    [[1.0, 0.0], [nan, 1.0]]
    >>> check_vote_matrix([[2, 0]])
    Traceback (most recent call last):
    ...
    ValueError: votes must contain only 0/1 votes (NaN where an annotator did not vote)
    """
    votes = np.asarray(votes, dtype=float)
    if votes.ndim != 2 or votes.shape[0] == 0 or votes.shape[1] < 1:
        raise ValueError(f"{name} must be a (images, annotators) array of 0/1 votes, got shape {votes.shape}")
    if not np.isin(votes[~np.isnan(votes)], (0, 1)).all():
        raise ValueError(f"{name} must contain only 0/1 votes (NaN where an annotator did not vote)")
    return votes


def correctness(
    correct: ArrayLike, n_items: int, name: str = "correct", what: str = "item"
) -> NDArray[np.float64]:
    """Check per-item correctness, shape (items,) or (models, items), entries 0/1; return it 2-D as floats.

    Parameters
    ----------
    correct : array_like of bool
        Whether each model classifies each item correctly.
    n_items : int
        The number of items expected.
    name, what : str
        The argument's name and what one item is, for error messages.

    Returns
    -------
    ndarray of float, shape (models, items)

    Raises
    ------
    ValueError
        On a wrong shape or entries other than 0/1.

    Examples
    --------
    >>> correctness([1, 0, True], 3).tolist()
    [[1.0, 0.0, 1.0]]
    >>> correctness([[1, 0]], 3)
    Traceback (most recent call last):
    ...
    ValueError: correct must have one entry per item (3); got shape (1, 2)
    """
    correct = np.asarray(correct)
    if correct.ndim == 1:
        correct = correct[None, :]
    if correct.ndim != 2 or correct.shape[1] != n_items:
        raise ValueError(f"{name} must have one entry per {what} ({n_items}); got shape {np.shape(correct)}")
    if not np.isin(correct, (0, 1)).all():
        raise ValueError(f"{name} must be boolean (1 = correctly classified)")
    return correct.astype(float)
