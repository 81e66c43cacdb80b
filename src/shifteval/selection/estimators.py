"""Selection-frequency bias in dataset replication, and estimators that correct for it.

Engstrom, Ilyas, Santurkar, Tsipras, Steinhardt & Mądry (2020), *Identifying Statistical Bias in
Dataset Replication*:

- §4, Eq. (2): the decomposition of the v1-v2 accuracy gap (:func:`gap_decomposition`);
- §5.1, Eq. (4): the naive selection-adjusted accuracy (:func:`naive_adjusted_accuracy`);
- §5.2 and App. E: the leave-one-annotator-out jackknife (:func:`jackknife_adjusted_accuracy`);
- §5.3 and App. F: the parametric estimator (:func:`parametric_adjusted_accuracy`); its model —
  the beta-binomial mixture and the accuracy spline (:func:`~shifteval.selection.parametric.fit_betabinomial_mixture`,
  :func:`~shifteval.selection.parametric.fit_accuracy_spline`), fitted as a whole by
  :class:`~shifteval.selection.parametric.ParametricEstimator` — lives in
  :mod:`shifteval.selection.parametric`;
- App. F.1: its bootstrap over images (:func:`~shifteval.selection.bootstrap.bootstrap_parametric`), and a
  bootstrap of the jackknife over images and votes (:func:`~shifteval.selection.bootstrap.bootstrap_jackknife`),
  both in :mod:`shifteval.selection.bootstrap`.

Votes are arrays of shape (images, annotators) with entries 0/1 (NaN where an annotator did not vote
on an image); counts are the number of "yes" votes per image out of ``annotators`` votes, where
``annotators`` is one number or one per image (for two sets, a tuple ``(annotators_v1, annotators_v2)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..utils import validation
from ..utils.validation import check_vote_matrix
from .parametric import ParametricEstimator, per_set

# --- naive estimator and jackknife (§5.1, §5.2) --------------------------------------------------


def naive_adjusted_accuracy(
    counts_v1: ArrayLike, counts_v2: ArrayLike, correct_v2: ArrayLike, annotators: int | ArrayLike | tuple
) -> float | np.ndarray:
    """Naive selection-adjusted v2 accuracy (Engstrom et al. 2020, Eq. (4)).

    ``Σ_ŝ E[f(x₂) | ŝ(x₂) = ŝ] · p₁(ŝ)``: v2 accuracy per observed-frequency level, weighted by v1's
    distribution of observed frequencies. Levels that no v2 image takes carry no information about v2
    accuracy; their v1 weight is dropped and the remaining weights renormalised (the released code does
    not renormalise). With per-image numbers of annotators, a level is an observed frequency ``k/n``
    (2/4 and 1/2 are one level).

    Parameters
    ----------
    counts_v1, counts_v2 : array_like of int
        "Yes" votes per image.
    correct_v2 : array_like of bool, shape (n_v2,) or (models, n_v2)
        Whether each model classifies each v2 image correctly.
    annotators : int, array_like, or tuple (annotators_v1, annotators_v2)
        Annotators per image: one number for both sets, or one value per set (a number or one per image).

    Returns
    -------
    float or ndarray
        One estimate per model (a float for a 1-D ``correct_v2``).

    Examples
    --------
    v2 is accurate on its high-frequency images and has fewer of them than v1:

    >>> naive_adjusted_accuracy([2, 2, 0, 0], [2, 0, 0, 0], [1, 0, 0, 0], 2)
    0.5
    >>> naive_adjusted_accuracy([2, 4, 0, 0], [2, 0, 0, 0], [1, 0, 0, 0], ([2, 4, 2, 2], 2))
    0.5
    """
    annotators_v1, annotators_v2 = per_set(annotators)
    c1, annotators_v1 = validation.check_votes(counts_v1, annotators_v1, "counts_v1")
    c2, annotators_v2 = validation.check_votes(counts_v2, annotators_v2, "counts_v2")
    single = np.ndim(correct_v2) == 1
    f = validation.correctness(correct_v2, len(c2), "correct_v2", "v2 image")
    if np.ndim(annotators_v1) == 0 and np.ndim(annotators_v2) == 0 and annotators_v1 == annotators_v2:
        l1, l2, levels = c1, c2, annotators_v1 + 1
    else:  # a level is an observed frequency k/n, whatever the n
        freq = np.round(np.concatenate([c1 / annotators_v1, c2 / annotators_v2]), 12)
        _, inverse = np.unique(freq, return_inverse=True)
        l1, l2, levels = inverse[: len(c1)], inverse[len(c1) :], int(inverse.max()) + 1
    p1 = np.bincount(l1, minlength=levels) / len(l1)
    n_2 = np.bincount(l2, minlength=levels)
    hits = np.stack([np.bincount(l2, weights=row, minlength=levels) for row in f])
    seen = n_2 > 0
    cond = hits[:, seen] / n_2[seen]
    est = cond @ (p1[seen] / p1[seen].sum())
    return float(est[0]) if single else est


def naive_by_annotators(
    votes_v1: ArrayLike, votes_v2: ArrayLike, correct_v2: ArrayLike, annotator_counts: ArrayLike
) -> np.ndarray:
    """The naive estimator using only the first ``m`` annotators, for each ``m`` in ``annotator_counts``.

    Engstrom et al. (2020), Figure 5 and App. E (Figure 12): the estimate against 1/m shows the bias
    shrinking as annotators are added. Needs complete vote arrays (no missing votes).

    Parameters
    ----------
    votes_v1, votes_v2 : array_like, shape (images, annotators)
        0/1 votes.
    correct_v2 : array_like of bool, shape (n_v2,) or (models, n_v2)
    annotator_counts : iterable of int
        Numbers of annotators ``m``.

    Returns
    -------
    ndarray, shape (len(annotator_counts),) or (len(annotator_counts), models)

    Examples
    --------
    >>> v1, v2 = np.array([[1, 1], [0, 0]]), np.array([[1, 0], [0, 0]])
    >>> naive_by_annotators(v1, v2, [[1, 0]], [1, 2]).tolist()
    [[0.5], [0.0]]
    """
    v1, v2 = check_vote_matrix(votes_v1, "votes_v1"), check_vote_matrix(votes_v2, "votes_v2")
    if np.isnan(v1).any() or np.isnan(v2).any():
        raise ValueError("naive_by_annotators needs complete votes (no NaN)")
    out = []
    for m in np.asarray(annotator_counts, dtype=np.int64).tolist():
        if not 1 <= m <= min(v1.shape[1], v2.shape[1]):
            raise ValueError(f"annotator count {m} outside 1..{min(v1.shape[1], v2.shape[1])}")
        out.append(naive_adjusted_accuracy(v1[:, :m].sum(1), v2[:, :m].sum(1), correct_v2, m))
    return np.asarray(out)


def first_votes(votes_v1: ArrayLike, votes_v2: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Every image's first ``m`` votes, ``m`` the fewest votes of any image of either set.

    Parameters
    ----------
    votes_v1, votes_v2 : array_like, shape (images, annotators)
        0/1 votes, NaN where an annotator did not vote.

    Returns
    -------
    tuple of ndarray, each of shape (images, m)
        The votes, in column order, without NaN.

    Raises
    ------
    ValueError
        If an image has fewer than two votes.

    Examples
    --------
    >>> v1 = np.array([[1, np.nan, 0], [0, 1, 1]])
    >>> first_votes(v1, np.array([[np.nan, 1, 1]]))[0].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    sets = [check_vote_matrix(v, name) for v, name in ((votes_v1, "votes_v1"), (votes_v2, "votes_v2"))]
    seen = [~np.isnan(v) for v in sets]
    m = int(min(s.sum(1).min() for s in seen))
    if m < 2:
        raise ValueError("the jackknife needs at least 2 votes on every image")
    out = [v[s & (np.cumsum(s, axis=1) <= m)].reshape(len(v), m) for v, s in zip(sets, seen, strict=True)]
    return out[0], out[1]


@dataclass(frozen=True)
class JackknifeResult:
    """Leave-one-annotator-out jackknife of the naive estimator (per model; numbers for one model)."""

    naive: float | np.ndarray
    corrected: float | np.ndarray
    bias: float | np.ndarray
    std_error: float | np.ndarray


def jackknife_adjusted_accuracy(
    votes_v1: ArrayLike, votes_v2: ArrayLike, correct_v2: ArrayLike, unequal: str = "truncate"
) -> JackknifeResult:
    """Exact leave-one-annotator-out jackknife of the naive estimator (Engstrom et al. 2020, §5.2).

    With θ_n the n-annotator estimate and θ⁽ⁱ⁾ the estimate without annotator i,
    ``bias = (n − 1)(mean_i θ⁽ⁱ⁾ − θ_n)``, ``corrected = θ_n − bias`` and the jackknife standard error
    ``sqrt((n − 1)/n · Σ_i (θ⁽ⁱ⁾ − mean θ⁽ⁱ⁾)²)`` (Efron & Tibshirani 1994). Every annotator is left out
    once — not a random subsample of leave-outs. Both vote arrays need the same number of annotator
    columns; every image needs at least two votes.

    The correction assumes the naive estimate's bias falls as 1/n with one n for every image (App. E).
    Where images have different numbers of votes (NaN where an annotator did not vote), ``unequal``
    chooses what happens:

    - ``"truncate"`` (default): every image keeps its first ``m`` votes (in column order), ``m`` the
      fewest votes of any image, and the jackknife runs with ``n = m``. Votes beyond ``m`` are unused.
    - ``"columns"``: each annotator column is left out in turn with ``n`` the number of columns; an image
      that annotator did not vote on keeps its votes. The leave-outs then move only some images from a
      level ``k/n_j`` to another, among many sparsely filled levels, and the factor ``n − 1`` amplifies
      that noise: on the world with 32-48 annotators per image its error is several times the
      truncated jackknife's (the selection-bias chapter measures both).

    Parameters
    ----------
    votes_v1, votes_v2 : array_like, shape (images, annotators)
        0/1 votes, NaN where an annotator did not vote.
    correct_v2 : array_like of bool, shape (n_v2,) or (models, n_v2)
    unequal : {"truncate", "columns"}
        How per-image numbers of votes are handled (above); no effect when every image has every vote.

    Returns
    -------
    JackknifeResult
        ``naive``, ``corrected``, ``bias`` and ``std_error``, one entry per model.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> v1 = (rng.random((400, 5)) < 0.8).astype(float)
    >>> v2 = (rng.random((400, 5)) < 0.6).astype(float)
    >>> v2[0, 0] = np.nan  # one missing vote
    >>> jack = jackknife_adjusted_accuracy(v1, v2, rng.random(400) < 0.7)
    >>> jack.corrected.shape, bool(np.allclose(jack.corrected, jack.naive - jack.bias))
    ((1,), True)
    >>> t1, t2 = first_votes(v1, v2)  # what "truncate" uses: every image's first 4 votes
    >>> correct = rng.random(400) < 0.7
    >>> a, b = (jackknife_adjusted_accuracy(x, y, correct).corrected for x, y in ((v1, v2), (t1, t2)))
    >>> t1.shape, bool(np.allclose(a, b))
    ((400, 4), True)
    """
    v1, v2 = check_vote_matrix(votes_v1, "votes_v1"), check_vote_matrix(votes_v2, "votes_v2")
    if v1.shape[1] != v2.shape[1]:
        raise ValueError(f"votes_v1 has {v1.shape[1]} annotators but votes_v2 has {v2.shape[1]}")
    if unequal not in ("truncate", "columns"):
        raise ValueError(f"unequal must be 'truncate' or 'columns', got {unequal!r}")
    if unequal == "truncate" and (np.isnan(v1).any() or np.isnan(v2).any()):
        v1, v2 = first_votes(v1, v2)
    n = v1.shape[1]  # annotators: the n of §5.2
    if n < 2:
        raise ValueError("the jackknife needs at least 2 annotators per image")
    f = validation.correctness(correct_v2, len(v2), "correct_v2", "v2 image")
    if not (np.isnan(v1).any() or np.isnan(v2).any()):
        c1, c2 = v1.sum(1), v2.sum(1)
        full = naive_adjusted_accuracy(c1, c2, f, n)
        loo = np.stack([naive_adjusted_accuracy(c1 - v1[:, i], c2 - v2[:, i], f, n - 1) for i in range(n)])
    else:  # per-image numbers of annotators
        seen1, seen2 = ~np.isnan(v1), ~np.isnan(v2)
        annotators_v1, annotators_v2 = seen1.sum(1), seen2.sum(1)
        if min(annotators_v1.min(), annotators_v2.min()) < 2:
            raise ValueError("the jackknife needs at least 2 votes on every image")
        c1, c2 = np.nansum(v1, 1), np.nansum(v2, 1)
        full = naive_adjusted_accuracy(c1, c2, f, (annotators_v1, annotators_v2))
        loo = np.stack([
            naive_adjusted_accuracy(c1 - np.nan_to_num(v1[:, i]), c2 - np.nan_to_num(v2[:, i]), f,
                                    (annotators_v1 - seen1[:, i], annotators_v2 - seen2[:, i]))
            for i in range(n)
        ])  # fmt: skip
    mean = loo.mean(axis=0)
    bias = (n - 1) * (mean - full)
    se = np.sqrt((n - 1) / n * ((loo - mean) ** 2).sum(axis=0))
    return JackknifeResult(naive=full, corrected=full - bias, bias=bias, std_error=se)


# --- the parametric estimator (§5.3, Eq. 6) ------------------------------------------------------


def parametric_adjusted_accuracy(
    counts_v1: ArrayLike,
    counts_v2: ArrayLike,
    correct_v2: ArrayLike,
    annotators: int | ArrayLike | tuple,
    k: int = 3,
    n_basis: int = 8,
    seed: int | np.random.Generator = 0,
) -> tuple[np.ndarray, ParametricEstimator]:
    """Selection-adjusted v2 accuracy by the parametric model (Engstrom et al. 2020, §5.3, Eq. (6)).

    Fits beta-binomial mixtures p₁ and p₂ to the v1 and v2 counts, a spline g per model, and
    integrates ``∫ g(s) p₁(s) ds`` exactly: ``ParametricEstimator(k, n_basis, seed).fit(...)``
    (:class:`~shifteval.selection.parametric.ParametricEstimator`).

    Parameters
    ----------
    counts_v1, counts_v2 : array_like of int
        "Yes" votes per image of each set.
    correct_v2 : array_like of bool, shape (n_v2,) or (models, n_v2)
    annotators : int, array_like, or tuple (annotators_v1, annotators_v2)
        Annotators per image: one number for both sets, or a tuple of one value per set (each a number
        or one entry per image).
    k, n_basis : int
        Mixture components and spline basis functions.
    seed : int or numpy.random.Generator
        Seed of the mixtures' random starts.

    Returns
    -------
    estimates : ndarray, one per model
    fitted : ParametricEstimator
        The fit: ``mixture_v1_``, ``mixture_v2_`` (BetaBinomialMixture, p₁ and p₂) and ``splines_`` (list
        of AccuracySpline, g per model); :meth:`~ParametricEstimator.refit` refits it on resampled images.

    Examples
    --------
    With v1 and v2 drawn alike, the adjusted accuracy is close to the plain one:

    >>> rng = np.random.default_rng(2)
    >>> s1, s2 = rng.beta(5, 2, 3000), rng.beta(5, 2, 3000)
    >>> correct = rng.random(3000) < s2
    >>> est, fitted = parametric_adjusted_accuracy(rng.binomial(10, s1), rng.binomial(10, s2), correct, 10, k=2)
    >>> bool(abs(est[0] - correct.mean()) < 0.02)
    True
    """
    estimator = ParametricEstimator(k=k, n_basis=n_basis, seed=seed)
    fitted = estimator.fit(counts_v1, counts_v2, correct_v2, annotators)
    return fitted.estimates_, fitted


# --- the accuracy-gap decomposition and the simulated ground truth -------------------------------


def gap_decomposition(acc_v1: ArrayLike, acc_v2: ArrayLike, adjusted_v2: ArrayLike) -> dict:
    """Engstrom et al. (2020), Eq. (2): accuracy gap = bias-corrected gap + selection gap.

    ``acc_v1 − acc_v2 = (acc_v1 − adjusted_v2) + (adjusted_v2 − acc_v2)`` (the finite-sample term is
    treated as zero, as in the paper).

    Parameters
    ----------
    acc_v1, acc_v2 : array_like
        Accuracy (per model, or one value) on the original test set and on the replication.
    adjusted_v2 : array_like
        Selection-adjusted v2 accuracy, e.g. from :func:`jackknife_adjusted_accuracy`.

    Returns
    -------
    dict
        ``accuracy_gap``, ``bias_corrected_gap``, ``selection_gap``: arrays (the first is the sum of the others).

    Examples
    --------
    >>> d = gap_decomposition([0.8], [0.7], [0.75])
    >>> {k: np.round(v, 3).tolist() for k, v in d.items()}
    {'accuracy_gap': [0.1], 'bias_corrected_gap': [0.05], 'selection_gap': [0.05]}
    """
    acc_v1, acc_v2, adjusted_v2 = (np.asarray(v, dtype=float) for v in (acc_v1, acc_v2, adjusted_v2))
    return {
        "accuracy_gap": acc_v1 - acc_v2,
        "bias_corrected_gap": acc_v1 - adjusted_v2,
        "selection_gap": adjusted_v2 - acc_v2,
    }


def true_adjusted_accuracy(
    s_v1: ArrayLike, s_v2: ArrayLike, correct_v2: ArrayLike, bins: int = 20
) -> np.ndarray:
    """Ground-truth selection-adjusted accuracy from *true* selection frequencies (Eq. 3).

    Only a simulated world knows ``s``. v2 accuracy per bin of true s, weighted by v1's distribution of
    true s over the same bins (bins v2 leaves empty drop out, weights renormalised).

    Parameters
    ----------
    s_v1, s_v2 : array_like
        True selection frequencies of the v1 and the v2 images.
    correct_v2 : array_like, shape (models, N2)
        Whether each model classifies each v2 image correctly.
    bins : int, default 20
        Equal-width bins of s on [0, 1].

    Returns
    -------
    ndarray, shape (models,)

    Raises
    ------
    ValueError
        If ``correct_v2`` does not have one column per v2 image.

    Examples
    --------
    v1 puts 3/4 of its mass in the top half, where the model is right, and 1/4 where it is wrong:

    >>> true_adjusted_accuracy([0.9, 0.9, 0.9, 0.2], [0.2, 0.8], [[0, 1]], bins=2).tolist()
    [0.75]
    """
    s_v1, s_v2 = np.asarray(s_v1, float), np.asarray(s_v2, float)
    f = validation.correctness(correct_v2, len(s_v2), "correct_v2", "v2 image")
    edges = np.linspace(0, 1, bins + 1)
    b1 = np.clip(np.digitize(s_v1, edges) - 1, 0, bins - 1)
    b2 = np.clip(np.digitize(s_v2, edges) - 1, 0, bins - 1)
    p1 = np.bincount(b1, minlength=bins) / len(b1)
    images_v2 = np.bincount(b2, minlength=bins)
    seen = images_v2 > 0
    cond = np.stack([np.bincount(b2, weights=row, minlength=bins)[seen] / images_v2[seen] for row in f])
    return cond @ (p1[seen] / p1[seen].sum())
