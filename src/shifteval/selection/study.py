"""The selection-bias chapter's experiments on the replication world (Engstrom et al. 2020).

:mod:`shifteval.selection` holds the paper's estimators; this module runs them the way the chapter
needs: a fresh annotation round of v1 and MatchedFrequency (§3's remeasurement design), the naive
estimator's error against the number of annotators (§5.1, Figure 5), the estimators over several fresh
vote draws (what their error is made of), and the mass the fitted mixtures put at high frequencies
(App. F, Figure 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from ..datasets import world as worlds
from ..utils import validation
from . import estimators as selection
from .bootstrap import bootstrap_jackknife, bootstrap_parametric, normal_interval, percentile_interval
from .parametric import BetaBinomialMixture, ParametricEstimator

if TYPE_CHECKING:
    from ..zoo import Zoo


def reannotate(
    s_v1: ArrayLike, s_v2: ArrayLike, annotators: int | Sequence[int], seed: int, round: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Fresh votes for v1 and v2 images from their true frequencies (Engstrom et al., §3).

    Each ``round`` is an independent draw from ``SeedSequence([seed, 7, round])``. With a range
    ``[lo, hi]`` every image of both sets gets its own number of annotators, uniform on ``lo..hi`` (real
    crowds give images different numbers of annotators); an image's annotators fill the first of ``hi``
    columns and NaN marks the others, so the first ``lo`` columns are complete.

    Parameters
    ----------
    s_v1, s_v2 : array_like
        True selection frequencies of the v1 and the v2 images.
    annotators : int or sequence of two ints
        Fresh annotators per image, or the range ``[lo, hi]`` of a per-image number.
    seed, round : int (round default 0)
        Seed of the draws; which independent round of votes.

    Returns
    -------
    votes_v1, votes_v2 : ndarray of uint8, shapes (N1, annotators), (N2, annotators); float with NaN,
        shapes (N1, hi), (N2, hi), for a range

    Raises
    ------
    ValueError
        If ``annotators`` is not a positive integer or a range ``[lo, hi]``.

    Examples
    --------
    >>> a, b = reannotate([1.0, 0.0], [0.5], 4, seed=0)
    >>> a.shape, b.shape, a.sum(axis=1).tolist()  # s = 1 / 0: all votes / none
    ((2, 4), (1, 4), [4, 0])
    >>> a, b = reannotate([1.0, 0.0], [0.5], [2, 4], seed=0)
    >>> a.shape, np.nansum(a, axis=1).tolist()[1], bool(2 <= (~np.isnan(a[0])).sum() <= 4)
    ((2, 4), 0.0, True)
    """
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 7, int(round)]))
    if not isinstance(annotators, (int, np.integer)):
        bounds = annotator_range(annotators)
        return _annotate_range(np.asarray(s_v1, float), bounds, rng), _annotate_range(
            np.asarray(s_v2, float), bounds, rng
        )
    annotators = validation.positive_int(annotators, "annotators")
    return worlds.annotate(np.asarray(s_v1), annotators, rng), worlds.annotate(
        np.asarray(s_v2), annotators, rng
    )


def annotator_range(annotators: Sequence[int]) -> tuple[int, int]:
    """Check a per-image range of annotators ``[lo, hi]``.

    Parameters
    ----------
    annotators : sequence of two ints
        Fewest and most annotators of an image.

    Returns
    -------
    lo, hi : int

    Raises
    ------
    ValueError
        Unless ``annotators`` is two integers with ``1 <= lo <= hi``.

    Examples
    --------
    >>> annotator_range([32, 48])
    (32, 48)
    """
    values = list(annotators)
    if len(values) != 2 or any(int(v) != v for v in values) or not 1 <= values[0] <= values[1]:
        raise ValueError(
            f"a per-image range of annotators must be [lo, hi] with 1 <= lo <= hi, got {annotators!r}"
        )
    return int(values[0]), int(values[1])


def _annotate_range(s, bounds, rng):
    """Votes of ``Uniform{fewest..most}`` annotators per image: their first columns of ``most``, NaN after."""
    fewest, most = bounds
    annotators = rng.integers(fewest, most + 1, len(s))
    votes = (rng.random((len(s), most)) < s[:, None]).astype(float)
    votes[np.arange(most)[None, :] >= annotators[:, None]] = np.nan
    return votes


def frequency_table(in_sample: tuple, votes: tuple, true: tuple) -> pd.DataFrame:
    """Mean selection frequency of v1 and v2 on the matching votes, on fresh votes and the true one (§3, Table 1).

    Parameters
    ----------
    in_sample, true : tuple of two arrays
        Per-image frequencies of v1 and v2 from the votes used for matching, and the true ones.
    votes : tuple of two arrays
        Fresh votes (images × annotators) of v1 and v2.

    Returns
    -------
    DataFrame
        Rows ``v1`` and ``MatchedFrequency``; columns in-sample ŝ, held-out ŝ and true s.

    Examples
    --------
    >>> t = frequency_table(([0.8, 0.6], [0.7]), (np.ones((2, 4)), np.zeros((1, 4))), ([0.7, 0.7], [0.6]))
    >>> t.round(2).to_numpy().tolist()
    [[0.7, 1.0, 0.7], [0.7, 0.0, 0.6]]
    """
    return pd.DataFrame(
        {
            "in-sample ŝ (votes used for matching)": [np.mean(in_sample[0]), np.mean(in_sample[1])],
            f"held-out ŝ ({votes[0].shape[1]} fresh votes)": [votes[0].mean(), votes[1].mean()],
            "true s": [np.mean(true[0]), np.mean(true[1])],
        },
        index=["v1", "MatchedFrequency"],
    )


def naive_error_curve(annotator_counts: ArrayLike, naive_curve: ArrayLike, truth: ArrayLike) -> dict:
    """How the naive estimator's error (mean over models) falls with the annotators ``m``.

    Returns the error in points per ``m`` and the largest distance of those points from the
    least-squares line in ``1/m`` (a straight line would be the jackknife's assumption, App. E).

    Parameters
    ----------
    annotator_counts : array_like
        Numbers of annotators ``m``.
    naive_curve : array_like, shape (len(annotator_counts), models)
        The naive estimate per ``m`` and model (e.g. :func:`shifteval.selection.naive_by_annotators`).
    truth : array_like
        True adjusted accuracy per model.

    Returns
    -------
    dict
        ``annotators``, ``error_points``, ``line_in_1_over_m`` (slope, intercept), ``max_line_distance``.

    Examples
    --------
    >>> c = naive_error_curve([1, 2], [[0.6], [0.55]], [0.5])
    >>> [round(e, 6) for e in c["error_points"]], c["max_line_distance"] < 1e-9  # on the line 10/m
    ([10.0, 5.0], True)
    """
    annotators = np.asarray(annotator_counts, dtype=float)
    err = 100 * (np.asarray(naive_curve).mean(axis=1) - np.mean(np.asarray(truth)))
    coef = np.polyfit(1 / annotators, err, 1)
    resid = err - np.polyval(coef, 1 / annotators)
    return {"annotators": annotators.astype(int).tolist(), "error_points": err.tolist(),
            "line_in_1_over_m": coef.tolist(), "max_line_distance": float(np.abs(resid).max())}  # fmt: skip


def redraw_errors(
    s_v1: ArrayLike, s_v2: ArrayLike, correct_v2: ArrayLike, annotators: int, rounds: int, seed: int,
    k: int = 3,
) -> dict:  # fmt: skip
    """Each estimator's error over independent fresh vote rounds (points).

    Engstrom et al. could annotate ImageNetV2 once; the world can re-annotate at will, which separates
    an estimator's bias (the mean of its errors) from its variance (their spread), and checks the
    standard errors it reports.

    Parameters
    ----------
    s_v1, s_v2 : array_like
        True selection frequencies of the v1 and the v2 images.
    correct_v2 : array_like, shape (models, N2)
        Whether each model classifies each v2 image correctly.
    annotators, rounds : int
        Fresh annotators per image in each round; independent rounds (1, 2, … of :func:`reannotate`).
    seed, k : int, k default 3
        Seed of the votes and of the parametric fits; beta components of the parametric estimator.

    Returns
    -------
    dict
        ``mean_error``: estimator → error of the mean over models, averaged over rounds;
        ``sd_of_mean_error``: its standard deviation over rounds; ``per_model_sd``: estimator → the
        standard deviation over rounds of each model's estimate, averaged over models (what a per-model
        standard error should match); ``jackknife_se``: the jackknife's reported standard error, averaged
        over models and rounds; ``rounds``.

    Raises
    ------
    ValueError
        If ``rounds`` or ``annotators`` is not a positive integer, or ``correct_v2`` does not fit ``s_v2``.

    Examples
    --------
    >>> s1, s2 = np.random.default_rng(0).beta([[5], [3]], 2, (2, 60))
    >>> r = redraw_errors(s1, s2, np.random.default_rng(1).random((1, 60)) < s2, 4, rounds=1, seed=0, k=1)
    >>> sorted(r["mean_error"]), r["sd_of_mean_error"]["naive"]  # one round: no spread
    (['jackknife', 'naive', 'parametric'], 0.0)
    """
    correct_v2 = np.asarray(correct_v2)
    truth = selection.true_adjusted_accuracy(s_v1, s_v2, correct_v2)
    est: dict[str, list] = {"naive": [], "jackknife": [], "parametric": []}
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


def redraw_coverage(
    s_v1: ArrayLike,
    s_v2: ArrayLike,
    correct_v2: ArrayLike,
    annotators: int | Sequence[int],
    se: dict,
    redraws: int,
    seed: int,
    k: int = 3,
    ci: float = 0.95,
    fitted: ParametricEstimator | None = None,
) -> dict:
    """Coverage of the intervals ``θ̂ ± z·SE`` over redraws of images *and* votes from the world.

    Each redraw resamples v1 and v2 images with replacement from the world's v1 and MatchedFrequency
    (a v2 image keeps every model's correctness), draws fresh votes for them from their true selection
    frequencies (per-image numbers of annotators for a range ``[lo, hi]``), and recomputes the jackknife
    (§5.2) and the parametric estimate (§5.3). The estimand is the world's selection-adjusted accuracy
    (:func:`shifteval.selection.true_adjusted_accuracy` on the whole sets). An interval covers when
    ``|θ̂ − truth| <= z·SE`` with ``SE`` the standard error the build's bootstrap reported for that model
    (:func:`shifteval.selection.bootstrap_jackknife`, :func:`shifteval.selection.bootstrap_parametric`):
    rerunning both bootstraps on every redraw would cost hundreds of times the build's two, so the
    redraws check the reported standard error and the centring on the estimate, not the bootstrap's own
    redraw-to-redraw variation. The parametric fits of a redraw start from ``fitted`` (the build's
    :class:`~shifteval.selection.parametric.ParametricEstimator`, its two mixtures) when given, as the
    bootstrap's do, instead of from random starts.

    Parameters
    ----------
    s_v1, s_v2 : array_like
        True selection frequencies of the v1 and the v2 images.
    correct_v2 : array_like, shape (models, N2)
        Whether each model classifies each v2 image correctly.
    annotators : int or sequence of two ints
        Fresh annotators per image, or the range ``[lo, hi]`` of a per-image number.
    se : dict
        ``{"jackknife": se per model, "parametric": se per model}``.
    redraws, seed, k : int
        Redraws; their seed; beta components of the parametric estimator.
    ci : float
        Nominal coverage.
    fitted : ParametricEstimator, optional
        A fit whose mixtures start the redraws' fits.

    Returns
    -------
    dict
        ``coverage``: estimator → ``{"nominal", "empirical", "redraws"}`` (``empirical`` the share of
        (redraw, model) intervals that contain the truth); ``mean_error`` and ``per_model_sd`` (points):
        estimator → the mean error over redraws and models, and each model's spread over redraws averaged
        over models (what a per-model standard error should match); ``sd_of_mean_error`` (points): the
        spread over redraws of the mean error over models; ``reported_se`` (points, mean over models);
        ``redraws``.

    Raises
    ------
    ValueError
        If ``redraws`` is not a positive integer, ``ci`` not in (0, 1), or ``se`` lacks an estimator.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s1, s2 = rng.beta(5, 2, 300), rng.beta(3, 2, 300)
    >>> correct = rng.random((2, 300)) < s2
    >>> out = redraw_coverage(s1, s2, correct, 6, {"jackknife": [0.05] * 2, "parametric": [0.05] * 2}, 3, 0, k=1)
    >>> sorted(out["coverage"]), out["coverage"]["jackknife"]["redraws"]
    (['jackknife', 'parametric'], 3)
    """
    correct_v2 = np.asarray(correct_v2)
    s_v1, s_v2 = np.asarray(s_v1, dtype=float), np.asarray(s_v2, dtype=float)
    redraws = validation.positive_int(redraws, "redraws")
    ci = validation.fraction(ci, "ci")
    missing = {"jackknife", "parametric"} - set(se)
    if missing:
        raise ValueError(f"se needs a standard error per model for {sorted(missing)}")
    truth = selection.true_adjusted_accuracy(s_v1, s_v2, correct_v2)
    est: dict[str, list] = {"jackknife": [], "parametric": []}
    for r in range(redraws):
        jackknife, parametric = _redraw_estimates(s_v1, s_v2, correct_v2, annotators, seed, r, k, fitted)
        est["jackknife"].append(jackknife)
        est["parametric"].append(parametric)
    return _coverage_summary(est, se, truth, ci, redraws)


def _redraw_data(s_v1, s_v2, correct_v2, annotators, seed, r):
    """Redraw ``r`` of :func:`redraw_coverage`: resampled images with fresh votes, and v2's correctness."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 11, r]))
    i1, i2 = rng.integers(0, len(s_v1), len(s_v1)), rng.integers(0, len(s_v2), len(s_v2))
    v1, v2 = reannotate(s_v1[i1], s_v2[i2], annotators, seed, round=1000 + r)
    return v1, v2, correct_v2[:, i2]


def _redraw_estimates(s_v1, s_v2, correct_v2, annotators, seed, r, k, fitted):
    """Redraw ``r`` of :func:`redraw_coverage`: both estimates per model."""
    v1, v2, f = _redraw_data(s_v1, s_v2, correct_v2, annotators, seed, r)
    jackknife = selection.jackknife_adjusted_accuracy(v1, v2, f).corrected
    (c1, annotators_v1), (c2, annotators_v2) = (vote_counts(v) for v in (v1, v2))
    estimator = ParametricEstimator(k=k, seed=seed)
    parametric = estimator.fit(c1, c2, f, (annotators_v1, annotators_v2), init=fitted).estimates_
    return jackknife, parametric


def _coverage_summary(est, se, truth, ci, redraws):
    """:func:`redraw_coverage`'s summary of the estimates (redraws x models) of each estimator."""
    out: dict[str, Any] = {
        "coverage": {},
        "mean_error": {},
        "sd_of_mean_error": {},
        "per_model_sd": {},
        "reported_se": {},
    }
    out["redraws"] = redraws
    for name, drawn in est.items():
        values = np.asarray(drawn)  # redraws x models
        width = np.asarray(se[name], dtype=float)
        low, high = normal_interval(values, width[None, :], ci)
        inside = (low <= truth[None, :]) & (truth[None, :] <= high)
        out["coverage"][name] = {"nominal": ci, "empirical": float(inside.mean()), "redraws": redraws}
        out["mean_error"][name] = float(100 * (values - truth).mean())
        mean_over_models = 100 * (values - truth).mean(axis=1)
        out["sd_of_mean_error"][name] = float(mean_over_models.std(ddof=1)) if redraws > 1 else 0.0
        out["per_model_sd"][name] = float(100 * values.std(axis=0, ddof=1).mean()) if redraws > 1 else 0.0
        out["reported_se"][name] = float(100 * width.mean())
    return out


def percentile_coverage(
    s_v1: ArrayLike,
    s_v2: ArrayLike,
    correct_v2: ArrayLike,
    annotators: int | Sequence[int],
    boots: dict,
    redraws: int,
    n_boot: int,
    seed: int,
    k: int = 3,
    ci: float = 0.95,
) -> dict:
    """Percentile intervals (App. F.1) against ``θ̂ ± z·SE`` over the same redraws of images and votes.

    App. F.1 reports the 2.5% and 97.5% percentiles of its bootstrap; the chapter uses the estimate ± 1.96
    bootstrap standard errors. The two differ in where they are centred: on the bootstrap samples, or
    on the estimate. Each of the first ``redraws`` redraws of :func:`redraw_coverage` (the same images
    and votes) reruns both bootstraps (:func:`shifteval.selection.bootstrap_jackknife`,
    :func:`shifteval.selection.bootstrap_parametric`) with ``n_boot`` samples, which place the redraw's
    own percentile interval: its samples' mean plus the build's percentiles measured from the build's
    samples' mean (``boots``, the build's bootstraps; a few samples place the centre well, the tails
    need the build's hundreds). The normal interval is the redraw's estimate ± z times the build's
    standard error, as in :func:`redraw_coverage`. Both intervals therefore have the build's spread and
    differ only in their centre.

    Parameters
    ----------
    s_v1, s_v2, correct_v2, annotators
        As for :func:`redraw_coverage`.
    boots : dict
        ``{"jackknife": …, "parametric": …}``: the build's bootstraps (each with ``samples`` and ``se``).
    redraws, n_boot : int
        Redraws (the first of :func:`redraw_coverage`'s) and bootstrap samples per redraw (at least 2).
    seed, k : int
        Seed of the redraws and bootstraps; beta components of the parametric estimator.
    ci : float
        Nominal coverage.

    Returns
    -------
    dict
        estimator → ``{"percentile", "normal"}``: the share of (redraw, model) intervals that contain
        the truth; ``"centre_offset"`` (points): the bootstrap mean's distance from the estimate,
        averaged over redraws and models; plus ``redraws`` and ``n_boot``.

    Raises
    ------
    ValueError
        If ``redraws`` or ``n_boot`` is out of range or ``boots`` lacks an estimator.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s1, s2 = rng.beta(5, 2, 300), rng.beta(3, 2, 300)
    >>> correct = rng.random((2, 300)) < s2
    >>> boot = {"samples": rng.normal(0.6, 0.02, (50, 2)), "se": np.full(2, 0.02)}
    >>> out = percentile_coverage(s1, s2, correct, 6, {"jackknife": boot, "parametric": boot}, 1, 3, 0, k=1)
    >>> sorted(out["parametric"]), out["redraws"]
    (['centre_offset', 'normal', 'percentile'], 1)
    """
    correct_v2 = np.asarray(correct_v2)
    s_v1, s_v2 = np.asarray(s_v1, dtype=float), np.asarray(s_v2, dtype=float)
    redraws, n_boot = (
        validation.positive_int(redraws, "redraws"),
        validation.positive_int(n_boot, "n_boot", 2),
    )
    if {"jackknife", "parametric"} - set(boots):
        raise ValueError(
            f"boots needs the build's bootstraps for {sorted({'jackknife', 'parametric'} - set(boots))}"
        )
    truth = selection.true_adjusted_accuracy(s_v1, s_v2, correct_v2)
    out: dict[str, Any] = {"redraws": redraws, "n_boot": n_boot}
    runs: dict[str, list] = {"jackknife": [], "parametric": []}
    for r in range(redraws):
        v1, v2, f = _redraw_data(s_v1, s_v2, correct_v2, annotators, seed, r)
        (c1, a1), (c2, a2) = (vote_counts(v) for v in (v1, v2))
        runs["jackknife"].append(bootstrap_jackknife(v1, v2, f, n_boot=n_boot, seed=seed + r, k=k))
        runs["parametric"].append(bootstrap_parametric(c1, c2, f, (a1, a2), n_boot, seed=seed + r, k=k))
    for name, done in runs.items():
        samples = np.asarray(boots[name]["samples"], dtype=float)
        q_lo, q_hi = percentile_interval(samples - samples.mean(0), ci)
        est = np.array([b["estimate"] for b in done])
        centre = np.array([b["samples"].mean(0) for b in done])
        low, high = normal_interval(est, np.asarray(boots[name]["se"], dtype=float)[None, :], ci)
        out[name] = {
            "percentile": float(((centre + q_lo <= truth) & (truth <= centre + q_hi)).mean()),
            "normal": float(((low <= truth) & (truth <= high)).mean()),
            "centre_offset": float(100 * np.abs(centre - est).mean()),
        }
    return out


def vote_counts(votes: ArrayLike) -> tuple[np.ndarray, int | np.ndarray]:
    """The "yes" votes and the annotators of each image of a vote array (NaN where an annotator did not vote).

    Parameters
    ----------
    votes : array_like, shape (images, annotators)
        0/1 votes, NaN where an annotator did not vote.

    Returns
    -------
    counts : ndarray of int64
    annotators : int (no vote missing) or ndarray of int64, one per image

    Examples
    --------
    >>> vote_counts(np.array([[1, 0, 1], [1, 1, 0]]))
    (array([2, 2]), 3)
    >>> vote_counts(np.array([[1, 0, np.nan], [1, 1, 0]]))
    (array([1, 2]), array([2, 3]))
    """
    votes = np.asarray(votes)
    seen = ~np.isnan(votes) if votes.dtype.kind == "f" else np.ones(votes.shape, bool)
    annotators = seen.sum(1)
    return np.nansum(votes, 1).astype(np.int64), (int(annotators[0]) if seen.all() else annotators)


def mass_above(
    counts: ArrayLike, annotators: int, mixture: BetaBinomialMixture, true_s: ArrayLike,
    threshold: float = 0.9,
) -> dict:  # fmt: skip
    """Share of images above ``threshold``: observed ŝ, the fitted mixture's P(s > t), and the true s.

    Parameters
    ----------
    counts, annotators : array_like, int
        Positive votes per image; annotators per image.
    mixture : BetaBinomialMixture
        The fitted mixture (its weights, alphas and betas are used).
    true_s, threshold : array_like, float (default 0.9)
        True selection frequencies of the same images; the frequency t.

    Returns
    -------
    dict
        ``observed``, ``fitted``, ``true``: shares in [0, 1].

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


# --- the appendix experiments (App. D.1, D.2, E, F.2, F.3) ------------------------------------------


def gap_vs_annotators(world: worlds.World, zoo: Zoo, annotator_counts: ArrayLike, rounds: int = 3) -> dict:
    """The v1 - MatchedFrequency gap when the replication is re-matched on ``m`` votes (App. D.1, Fig. 11).

    For each ``m``, ``rounds`` independent replication rounds (:meth:`World.replicate`: fresh votes on v1
    and the pool, new sampling draws) match the pool to v1 on ``m``-vote frequencies. Two gaps, mean over
    the zoo's models, in points: v1 accuracy minus accuracy on the re-matched set (ours: the paper did
    not re-sample), and minus Eq. (9), the naive estimator of the pool reweighted to v1's ``m``-vote
    frequencies (D.1's measurement and Figure 11: 14% at 5 workers, 12.3% at 10 on ImageNet).
    Noise-free matching (``annotators=None``) is the limit ``m → ∞``.

    Parameters
    ----------
    world : World
        The replication world (its splits ``v1`` and ``pool``, and :meth:`World.replicate`).
    zoo : Zoo
        Models; only ``zoo.correct(split)`` (models × images) of ``v1`` and ``pool`` is used.
    annotator_counts, rounds : array_like, int (default 3)
        Annotators per image ``m`` to re-match on; replication rounds per ``m``.

    Returns
    -------
    dict
        ``by_annotators``: list of ``{"annotators", "gap", "gap_sd", "reweighted_gap"}`` (SD over rounds);
        ``noise_free``: the gap of noise-free matching (mean over the same rounds); ``rounds``.

    Raises
    ------
    ValueError
        If ``rounds`` is not a positive integer.

    Examples
    --------
    >>> from shifteval.datasets.world import WorldConfig, build_world
    >>> world = build_world(WorldConfig(n_train=100, n_v1=200, n_pool=600, per_class=2))
    >>> class Zoo:  # a stand-in: two "models", right exactly where s > 0.5 and s > 0.3
    ...     def correct(self, split):
    ...         return np.stack([world.examples["s"].to_numpy()[world.split_index(split)] > c for c in (0.5, 0.3)])
    >>> out = gap_vs_annotators(world, Zoo(), [5], rounds=2)
    >>> out["rounds"], out["by_annotators"][0]["gap"] > out["noise_free"]  # noisy matching: larger gap
    (2, True)
    """
    rounds = validation.positive_int(rounds, "rounds")
    acc_v1 = zoo.correct("v1").mean(axis=1)
    pool = world.split_index("pool")
    position = pd.Series(np.arange(len(pool)), index=pool)
    correct_pool = zoo.correct("pool")
    images_v1 = len(world.split_index("v1"))

    def gap(rep):
        rows = position[rep.sets["matchedfrequency"]].to_numpy()
        return 100 * float(np.mean(acc_v1 - correct_pool[:, rows].mean(axis=1)))

    out = []
    for annotators in np.asarray(annotator_counts, dtype=np.int64).tolist():
        reps = [world.replicate(annotators, round=r) for r in range(1, rounds + 1)]
        gaps = [gap(rep) for rep in reps]
        eq9 = [
            selection.naive_adjusted_accuracy(
                np.asarray(rep.votes)[:images_v1].sum(1), np.asarray(rep.votes)[images_v1:].sum(1),
                correct_pool, annotators,
            )
            for rep in reps  # annotators >= 1: every round has votes
        ]  # fmt: skip
        out.append({"annotators": annotators, "gap": float(np.mean(gaps)), "gap_sd": float(np.std(gaps, ddof=1)) if rounds > 1 else 0.0,
                    "reweighted_gap": 100 * float(np.mean([np.mean(acc_v1 - e) for e in eq9]))})  # fmt: skip
    noise_free = float(np.mean([gap(world.replicate(None, round=r)) for r in range(1, rounds + 1)]))
    return {"by_annotators": out, "noise_free": noise_free, "rounds": rounds}


def heldout_matching(world: worlds.World, train: int = 5, heldout: int = 5, seed: int = 0) -> pd.DataFrame:
    """Matching on ``train`` votes per image, measured on ``heldout`` others (App. D.2, its Table 1).

    Every v1 and pool image gets ``train + heldout`` fresh votes; MatchedFrequency is re-sampled from
    the pool on the first ``train`` votes (v1's reference frequencies from all votes — the paper's top
    table — or from the ``train`` votes only — its bottom table), and both sets' mean frequencies are
    measured on the matching votes, on the held-out votes and, which only the world can, on the truth.

    Parameters
    ----------
    world : World
        The replication world (splits ``v1`` and ``pool``, true ``s``, labels, ``config.per_class``).
    train, heldout : int, default 5
        Votes per image used for matching; further votes per image, used only to measure.
    seed : int, default 0
        Seed of the votes and of the matching draws.

    Returns
    -------
    DataFrame
        Index ``(v1 reference votes, measure)``, columns ``v1`` and ``replication``.

    Raises
    ------
    ValueError
        If ``train`` or ``heldout`` is not a positive integer.

    Examples
    --------
    >>> from shifteval.datasets.world import WorldConfig, build_world
    >>> world = build_world(WorldConfig(n_train=100, n_v1=200, n_pool=600, per_class=2))
    >>> t = heldout_matching(world, train=5, heldout=5, seed=0)
    >>> t.shape, bool(t["replication"].iloc[0] > t["replication"].iloc[1])  # in-sample ŝ above held-out
    ((6, 2), True)
    """
    train = validation.positive_int(train, "train")
    heldout = validation.positive_int(heldout, "heldout")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 11]))
    v1, pool = world.split_index("v1"), world.split_index("pool")
    s, labels = world.examples["s"].to_numpy(), world.examples["label"].to_numpy()
    votes = worlds.annotate(s[np.concatenate([v1, pool])], train + heldout, rng)
    fit, held = votes[:, :train].mean(axis=1), votes[:, train:].mean(axis=1)
    rows = {}
    for reference in (train + heldout, train):
        ref = votes[: len(v1), :reference].mean(axis=1)
        matched, _ = worlds.sample_matched_frequency(
            ref, labels[v1], fit[len(v1) :], labels[pool], world.config.per_class, rng
        )
        key = f"v1 from {reference} votes"
        rows[(key, f"in-sample (v1: {reference}, replication: {train} votes)")] = [
            ref.mean(),
            fit[len(v1) :][matched].mean(),
        ]
        rows[(key, f"held-out ({heldout} other votes)")] = [
            held[: len(v1)].mean(),
            held[len(v1) :][matched].mean(),
        ]
        rows[(key, "true s")] = [s[v1].mean(), s[pool][matched].mean()]  # fmt: skip
    return pd.DataFrame(rows, index=["v1", "replication"]).T


def source_filter_matching(world: worlds.World, zoo: Zoo, train: int = 5, heldout: int = 4, keep_at_least: int = 2,
                           seed: int = 0) -> pd.DataFrame:  # fmt: skip
    """Statistic matching from the candidate pool and from an easier pool (Engstrom et al., App. D.3).

    Every v1 and pool image gets ``train + heldout`` fresh votes. The easier pool ("Flickr-E") keeps the
    pool images that at least ``keep_at_least`` of the ``heldout`` votes selected. MatchedFrequency is
    sampled from each pool on the first ``train`` votes, matched to v1's frequencies on its first ``train``
    votes. Without bias the source would not matter; the paper finds the two replications' selection
    frequencies within 0.2% of each other and the easier pool's accuracy about 3% higher.

    Parameters
    ----------
    world : World
        The replication world (splits ``v1`` and ``pool``, true ``s``, labels, ``config.per_class``).
    zoo : Zoo
        Its zoo (accuracies on the matched images are read from its predictions on the pool).
    train, heldout : int
        Votes per image used for matching; further votes used only to filter the easier pool.
    keep_at_least : int
        Held-out "yes" votes an image needs to enter the easier pool.
    seed : int
        Seed of the votes and of the matching draws.

    Returns
    -------
    DataFrame
        Index ``pool`` and ``easier pool``; columns ``candidates``, ``observed`` (mean frequency of the
        matched images on the matching votes), ``true`` (mean true frequency), ``accuracy`` (mean over the
        zoo's models).

    Raises
    ------
    ValueError
        If a count is not a positive integer, or ``keep_at_least`` exceeds ``heldout``.

    Examples
    --------
    >>> from shifteval.datasets.world import WorldConfig, build_world
    >>> from shifteval import zoo as zoos
    >>> world = build_world(WorldConfig(n_train=200, n_v1=300, n_pool=900, per_class=5))
    >>> z = zoos.build_zoo(world, zoos.default_zoo("smoke")[:1], store_root=tempfile.mkdtemp(), progress=False)
    >>> t = source_filter_matching(world, z)
    >>> t.index.tolist(), bool(t.loc["easier pool", "candidates"] < t.loc["pool", "candidates"])
    (['pool', 'easier pool'], True)
    """
    train, heldout = validation.positive_int(train, "train"), validation.positive_int(heldout, "heldout")
    if not 1 <= int(keep_at_least) <= heldout:
        raise ValueError(f"keep_at_least must be between 1 and heldout ({heldout}), got {keep_at_least!r}")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 13]))
    v1, pool = world.split_index("v1"), world.split_index("pool")
    s, labels = world.examples["s"].to_numpy(), world.examples["label"].to_numpy()
    votes = worlds.annotate(s[np.concatenate([v1, pool])], train + heldout, rng)
    fit = votes[:, :train].mean(axis=1)
    easier = votes[len(v1) :, train:].sum(axis=1) >= int(keep_at_least)
    rows = {}
    for name, members in (("pool", np.ones(len(pool), dtype=bool)), ("easier pool", easier)):
        cand = np.flatnonzero(members)
        matched, _ = worlds.sample_matched_frequency(
            fit[: len(v1)], labels[v1], fit[len(v1) :][cand], labels[pool][cand], world.config.per_class, rng
        )
        chosen = cand[matched]
        rows[name] = {
            "candidates": len(cand),
            "observed": float(fit[len(v1) :][chosen].mean()),
            "true": float(s[pool][chosen].mean()),
            "accuracy": float(zoo.accuracy_on(world, pool[chosen]).mean()),
        }
    return pd.DataFrame(rows).T


def jackknife_by_annotators(
    votes_v1: ArrayLike, votes_v2: ArrayLike, correct_v2: ArrayLike, annotator_counts: ArrayLike
) -> np.ndarray:
    """The jackknife estimate from the first ``n`` annotators, for each ``n`` in ``annotator_counts`` (App. E, Fig. 12).

    Parameters
    ----------
    votes_v1, votes_v2 : array_like, shapes (N1, annotators), (N2, annotators)
        Complete votes of v1 and v2 (0/1).
    correct_v2 : array_like, shape (models, N2)
        Whether each model classifies each v2 image correctly.
    annotator_counts : array_like
        Numbers of leading annotators to use.

    Returns
    -------
    ndarray, shape (len(annotator_counts), models)

    Examples
    --------
    >>> v1, v2 = reannotate(np.linspace(0.1, 0.9, 20), np.linspace(0.1, 0.9, 20), 6, seed=0)
    >>> jackknife_by_annotators(v1, v2, [[1] * 20, [0] * 20], [3, 6]).round(3).tolist()  # always right/wrong
    [[1.0, 0.0], [1.0, 0.0]]
    """
    votes_v1, votes_v2 = np.asarray(votes_v1), np.asarray(votes_v2)
    return np.stack([
        selection.jackknife_adjusted_accuracy(votes_v1[:, :annotators], votes_v2[:, :annotators], correct_v2).corrected
        for annotators in np.asarray(annotator_counts, dtype=np.int64).tolist()
    ])  # fmt: skip


def parametric_sweeps(
    votes_v1: ArrayLike, votes_v2: ArrayLike, correct_v2: ArrayLike, truth: ArrayLike,
    annotator_counts: ArrayLike, components: ArrayLike, k: int = 3, seed: int = 0,
) -> dict:  # fmt: skip
    """The parametric estimate with fewer annotators and with more or fewer components (App. F.2, F.3).

    F.2 (Figure 13) refits with the first ``m`` annotators' votes for each ``m`` in ``annotator_counts``;
    F.3 (Figure 14) with ``k`` beta components for each ``k`` in ``components`` (all annotators). A setting
    both sweeps hold (all annotators with ``k`` components) is fitted once: the same votes, components and
    seed give the same fit.

    Parameters
    ----------
    votes_v1, votes_v2 : array_like, shapes (N1, annotators), (N2, annotators)
        Complete votes of v1 and v2 (0/1).
    correct_v2 : array_like, shape (models, N2)
        Whether each model classifies each v2 image correctly.
    truth : array_like
        True adjusted accuracy per model.
    annotator_counts, components : array_like
        Numbers of leading annotators for F.2 (``k`` components) and of components for F.3 (all
        annotators).
    k, seed : int, defaults 3 and 0
        Components in the F.2 sweep; seed of the mixture fits.

    Returns
    -------
    dict
        ``annotators`` and ``components``: lists of ``{"annotators"/"components", "estimates"
        (per model), "mean_error" (points, against ``truth``), "mean_abs_error" (points)}``.

    Examples
    --------
    >>> v1, v2 = reannotate(np.linspace(0.05, 0.95, 60), np.linspace(0.05, 0.95, 60), 4, seed=0)
    >>> r = parametric_sweeps(v1, v2, np.ones((1, 60)), [1.0], annotator_counts=[2], components=[1], k=1)
    >>> r["components"][0]["components"], round(r["annotators"][0]["estimates"][0], 3)  # right everywhere
    (1, 1.0)
    """
    votes_v1, votes_v2, truth = np.asarray(votes_v1), np.asarray(votes_v2), np.asarray(truth, dtype=float)
    done: dict[tuple[int, int], dict] = {}  # (annotators, components) -> its row, each setting fitted once

    def run(annotators, k):
        if (annotators, k) in done:
            return done[annotators, k]
        counts_v1, counts_v2 = votes_v1[:, :annotators].sum(1), votes_v2[:, :annotators].sum(1)
        est, _ = selection.parametric_adjusted_accuracy(
            counts_v1, counts_v2, correct_v2, annotators, k=k, seed=seed
        )
        err = 100 * (est - truth)
        done[annotators, k] = {
            "estimates": est.tolist(),
            "mean_error": float(err.mean()),
            "mean_abs_error": float(np.abs(err).mean()),
        }
        return done[annotators, k]

    all_annotators = votes_v1.shape[1]
    by_annotators = [{"annotators": m, **run(m, k)} for m in np.asarray(annotator_counts, np.int64).tolist()]
    by_components = [
        {"components": c, **run(all_annotators, c)} for c in np.asarray(components, np.int64).tolist()
    ]
    return {"annotators": by_annotators, "components": by_components}


def sweep_table(sweeps: dict) -> pd.DataFrame:
    """:func:`parametric_sweeps` as a table: mean and mean absolute error per setting (points).

    Parameters
    ----------
    sweeps : dict
        The output of :func:`parametric_sweeps` (``estimates`` may be left out).

    Returns
    -------
    DataFrame
        One row per setting; columns mean error and mean absolute error (points).

    Examples
    --------
    >>> sweeps = {"annotators": [{"annotators": 10, "mean_error": -1.0, "mean_abs_error": 1.5}],
    ...           "components": [{"components": 2, "mean_error": 0.5, "mean_abs_error": 0.7}]}
    >>> sweep_table(sweeps).index.tolist()
    ['annotators m = 10', 'components k = 2']
    """
    rows = {
        f"{key} {symbol} = {row[key]}": {"mean error (points)": row["mean_error"], "mean |error| (points)": row["mean_abs_error"]}
        for key, symbol in (("annotators", "m"), ("components", "k"))
        for row in sweeps[key]
    }  # fmt: skip
    return pd.DataFrame(rows).T


def gap_sequence(acc_v1: ArrayLike, versions: dict) -> dict:
    """Mean over models of v1 accuracy minus each version of v2 accuracy, in points.

    Engstrom et al. (2020), §5.1-5.2: on ImageNet the naive estimator reduces the gap to 5.7% and the
    jackknife from 5.7% to 4.6%.

    Parameters
    ----------
    acc_v1 : array_like
        v1 accuracy per model.
    versions : dict
        Name → v2 accuracy per model (observed, or an adjusted estimate).

    Returns
    -------
    dict
        Name → mean gap in points (rounded to 10 decimals).

    Examples
    --------
    >>> gap_sequence([0.8, 0.6], {"observed": [0.7, 0.5], "naive": [0.75, 0.55]})
    {'observed': 10.0, 'naive': 5.0}
    """
    acc_v1 = np.asarray(acc_v1, dtype=float)
    return {
        name: round(100 * float(np.mean(acc_v1 - np.asarray(v, dtype=float))), 10)
        for name, v in versions.items()
    }
