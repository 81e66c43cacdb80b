"""Every random stream of the OOD-aware AutoEval chapter, from one seed.

Each purpose (the data split, the training meta-sets, the detector's fine-tuning, each test OOD source,
the test-set mixing, ...) gets its own spawn key of one :class:`numpy.random.SeedSequence`, so no two
purposes can ever draw from the same stream, whatever the seed.
"""

from __future__ import annotations

import numpy as np

from ..datasets.ood import name_key

#: Purpose -> first element of its spawn key. Distinct by construction (tested).
PURPOSES = {
    "split": 1,
    "classifier": 2,
    "detector": 3,
    "meta_train": 4,
    "meta_val": 5,
    "auxiliary": 6,
    "ood_source": 7,
    "id_perturbation": 8,
    "test_mix": 9,
    "unseen": 10,
    "regressor": 11,
    "calibration": 12,
}


def sequence(seed: int, purpose: str, *index: int | str) -> np.random.SeedSequence:
    """The seed sequence of ``purpose`` (and an optional index path: a source name, a set number).

    Parameters
    ----------
    seed : int
        The chapter's one seed.
    purpose : str
        A key of :data:`PURPOSES`.
    *index : int or str
        Further spawn-key elements; strings are hashed with :func:`shifteval.datasets.ood.name_key`.

    Returns
    -------
    numpy.random.SeedSequence

    Raises
    ------
    ValueError
        If ``purpose`` is not a key of :data:`PURPOSES`.

    Examples
    --------
    >>> a = np.random.default_rng(sequence(0, "meta_train", 3)).random()
    >>> b = np.random.default_rng(sequence(0, "meta_val", 3)).random()
    >>> a != b
    True
    """
    if purpose not in PURPOSES:
        raise ValueError(f"unknown random-stream purpose {purpose!r}; known: {', '.join(PURPOSES)}")
    key = (PURPOSES[purpose], *(name_key(i) if isinstance(i, str) else int(i) for i in index))
    return np.random.SeedSequence(int(seed), spawn_key=key)


def stream(seed: int, purpose: str, *index: int | str) -> np.random.Generator:
    """A generator on :func:`sequence` ``(seed, purpose, *index)``.

    Parameters
    ----------
    seed : int
        The chapter's one seed.
    purpose : str
        A key of :data:`PURPOSES`.
    *index : int or str
        Further spawn-key elements (see :func:`sequence`).

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    ValueError
        For an unknown ``purpose``.

    Examples
    --------
    >>> a = stream(0, "test_mix", "v1", "noise", 0).random(3)
    >>> bool((a == stream(0, "test_mix", "v1", "noise", 0).random(3)).all())  # same key, same draws
    True
    >>> bool((a == stream(0, "test_mix", "v1", "noise", 1).random(3)).any())
    False
    """
    return np.random.default_rng(sequence(seed, purpose, *index))


def stream_seed(seed: int, purpose: str, *index: int | str) -> int:
    """A 31-bit integer seed from :func:`sequence` (for torch, scikit-learn and seed-taking helpers).

    Parameters
    ----------
    seed : int
        The chapter's one seed.
    purpose : str
        A key of :data:`PURPOSES`.
    *index : int or str
        Further spawn-key elements (see :func:`sequence`).

    Returns
    -------
    int
        In ``0 .. 2**31 - 1``, deterministic for the arguments.

    Raises
    ------
    ValueError
        For an unknown ``purpose``.

    Examples
    --------
    >>> s = stream_seed(0, "classifier", "cnn")
    >>> 0 <= s < 2**31, s == stream_seed(0, "classifier", "cnn"), s == stream_seed(1, "classifier", "cnn")
    (True, True, False)
    """
    return int(sequence(seed, purpose, *index).generate_state(1)[0] >> 1)
