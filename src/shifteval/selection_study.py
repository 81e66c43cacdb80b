"""The selection-bias chapter's experiments on the replication world (Engstrom et al. 2020).

:mod:`shifteval.selection` holds the paper's estimators; this module runs them the way the chapter
needs: a fresh annotation round of v1 and MatchedFrequency (§3's remeasurement design), the naive
estimator's error against the number of annotators (§5.1, Figure 5), the estimators over several fresh
vote draws (what their error is made of), and the mass the fitted mixtures put at high frequencies
(App. F, Figure 7).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from . import selection
from .datasets import world as worlds
from .utils import validation


def reannotate(s_v1: ArrayLike, s_v2: ArrayLike, annotators: int, seed, round: int = 0):
    """Fresh votes for v1 and v2 images from their true frequencies (Engstrom et al., §3).

    Each ``round`` is an independent draw from ``SeedSequence([seed, 7, round])``.

    Returns
    -------
    votes_v1, votes_v2 : ndarray of uint8, shapes (N1, annotators), (N2, annotators)

    Examples
    --------
    >>> a, b = reannotate([0.9, 0.1], [0.5], 4, seed=0)
    >>> a.shape, b.shape
    ((2, 4), (1, 4))
    """
    annotators = validation.positive_int(annotators, "annotators")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 7, int(round)]))
    return worlds.annotate(np.asarray(s_v1), annotators, rng), worlds.annotate(
        np.asarray(s_v2), annotators, rng
    )


def frequency_table(in_sample: tuple, votes: tuple, true: tuple) -> pd.DataFrame:
    """Mean selection frequency of v1 and v2 on the matching votes, on fresh votes and the true one (§3, Table 1).

    Parameters
    ----------
    in_sample, true : tuple of two arrays
        Per-image frequencies of v1 and v2 from the votes used for matching, and the true ones.
    votes : tuple of two arrays
        Fresh votes (images × annotators) of v1 and v2.
    """
    return pd.DataFrame(
        {
            "in-sample ŝ (votes used for matching)": [np.mean(in_sample[0]), np.mean(in_sample[1])],
            f"held-out ŝ ({votes[0].shape[1]} fresh votes)": [votes[0].mean(), votes[1].mean()],
            "true s": [np.mean(true[0]), np.mean(true[1])],
        },
        index=["v1", "MatchedFrequency"],
    )


def naive_error_curve(sizes, naive_curve: ArrayLike, truth: ArrayLike) -> dict:
    """How the naive estimator's error (mean over models) falls with the annotators ``m``.

    Returns the error in points per ``m`` and the largest distance of those points from the
    least-squares line in ``1/m`` (a straight line would be the jackknife's assumption, App. E).
    """
    m = np.asarray(sizes, dtype=float)
    err = 100 * (np.asarray(naive_curve).mean(axis=1) - np.mean(truth))
    coef = np.polyfit(1 / m, err, 1)
    resid = err - np.polyval(coef, 1 / m)
    return {"annotators": m.astype(int).tolist(), "error_points": err.tolist(),
            "line_in_1_over_m": coef.tolist(), "max_line_distance": float(np.abs(resid).max())}  # fmt: skip


def redraw_errors(s_v1, s_v2, correct_v2, annotators: int, rounds: int, seed, k: int = 3) -> dict:
    """Each estimator's error over independent fresh vote rounds (points).

    Engstrom et al. could annotate ImageNetV2 once; the world can re-annotate at will, which separates
    an estimator's bias (the mean of its errors) from its variance (their spread), and checks the
    standard errors it reports.

    Returns
    -------
    dict
        ``mean_error``: estimator → error of the mean over models, averaged over rounds;
        ``sd_of_mean_error``: its standard deviation over rounds; ``per_model_sd``: estimator → the
        standard deviation over rounds of each model's estimate, averaged over models (what a per-model
        standard error should match); ``jackknife_se``: the jackknife's reported standard error, averaged
        over models and rounds; ``rounds``.
    """
    correct_v2 = np.asarray(correct_v2)
    truth = selection.true_adjusted_accuracy(s_v1, s_v2, correct_v2)
    est = {"naive": [], "jackknife": [], "parametric": []}
    se = []
    for r in range(1, validation.positive_int(rounds, "rounds") + 1):
        v1, v2 = reannotate(s_v1, s_v2, annotators, seed, round=r)
        c1, c2 = v1.sum(1), v2.sum(1)
        jack = selection.jackknife_adjusted_accuracy(v1, v2, correct_v2)
        param, _ = selection.parametric_adjusted_accuracy(c1, c2, correct_v2, annotators, k=k, seed=seed)
        est["naive"].append(selection.naive_adjusted_accuracy(c1, c2, correct_v2, annotators))
        est["jackknife"].append(jack.corrected)
        est["parametric"].append(np.asarray(param))
        se.append(np.mean(jack.std_error))
    err = {name: 100 * (np.asarray(v) - truth) for name, v in est.items()}  # rounds x models
    ddof = 1 if rounds > 1 else 0
    return {
        "rounds": int(rounds),
        "mean_error": {n: float(e.mean()) for n, e in err.items()},
        "sd_of_mean_error": {n: float(e.mean(axis=1).std(ddof=ddof)) for n, e in err.items()},
        "per_model_sd": {n: float(e.std(axis=0, ddof=ddof).mean()) for n, e in err.items()},
        "jackknife_se": float(100 * np.mean(se)),
    }


def mass_above(
    counts: ArrayLike, annotators: int, mixture, true_s: ArrayLike, threshold: float = 0.9
) -> dict:
    """Share of images above ``threshold``: observed ŝ, the fitted mixture's P(s > t), and the true s.

    Examples
    --------
    >>> from shifteval.selection import BetaBinomialMixture
    >>> mix = BetaBinomialMixture(np.array([1.0]), np.array([9.0]), np.array([1.0]), 0.0, 10, 1, True)
    >>> round(mass_above([10, 5], 10, mix, [0.95, 0.5])["fitted"], 3)
    0.613
    """
    counts = np.asarray(counts)
    fitted = float(sum(w * stats.beta.sf(threshold, a, b)
                       for w, a, b in zip(mixture.weights, mixture.alphas, mixture.betas, strict=True)))  # fmt: skip
    return {"observed": float((counts / annotators > threshold).mean()), "fitted": fitted,
            "true": float((np.asarray(true_s) > threshold).mean())}  # fmt: skip
