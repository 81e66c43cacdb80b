"""Per-image vote numbers on both sets (Engstrom et al. 2020, §5) and intervals around estimates."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shifteval import selection
from shifteval.selection import study as selection_study
from shifteval.selection.bootstrap import normal_interval, posterior_frequencies

N = 20_000  # images per set: large enough that the parametric estimator's spread is well below TOL
TOL = 0.02  # the parametric estimate recovers the truth within 2 accuracy points
A1, B1, A2, B2 = 5.0, 2.0, 3.0, 2.0  # v1 ~ Beta(5, 2), v2 ~ Beta(3, 2): v2 is harder


def g(s):
    """The known accuracy given true selection frequency."""
    return 0.2 + 0.6 * s


TRUTH = 0.2 + 0.6 * A1 / (A1 + B1)  # ∫ g(s) p₁(s) ds


@st.composite
def vote_numbers(draw):
    """A pattern of per-image vote numbers in [2, 60]: a few distinct values or a whole range."""
    if draw(st.booleans()):
        values = draw(st.lists(st.integers(2, 60), min_size=1, max_size=4, unique=True))
    else:
        lo = draw(st.integers(2, 50))
        values = list(range(lo, draw(st.integers(lo + 5, 60)) + 1))
    return np.asarray(values)


def _draw(seed, values1, values2):
    rng = np.random.default_rng(seed)
    s1, s2 = rng.beta(A1, B1, N), rng.beta(A2, B2, N)
    n1, n2 = rng.choice(values1, N), rng.choice(values2, N)
    correct = rng.random(N) < g(s2)
    return rng.binomial(n1, s1), rng.binomial(n2, s2), correct, n1, n2


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values1=vote_numbers(), values2=vote_numbers(), seed=st.integers(0, 2**16))
def test_parametric_recovers_truth_with_per_image_counts_on_both_sets(values1, values2, seed):
    c1, c2, correct, n1, n2 = _draw(seed, values1, values2)
    est, fitted = selection.parametric_adjusted_accuracy(c1, c2, correct, (n1, n2), k=1, seed=seed)
    assert abs(est[0] - TRUTH) < TOL
    # the fitted g integrates to v2's own accuracy under p₂ (Eq. 7 sums to P(f = 1) over all pairs)
    assert abs(fitted.splines_[0].integrate(fitted.mixture_v2_) - correct.mean()) < TOL


def test_issue_example_two_vote_numbers_on_v2():
    """n ∈ {20, 21} on v2 returned 0.372 for a model right on 75% of the images."""
    rng = np.random.default_rng(0)
    s1, s2 = rng.beta(5, 2, N), rng.beta(4, 2, N)
    n1, n2 = rng.integers(20, 22, N), rng.integers(20, 22, N)
    correct = rng.random(N) < 0.75
    est, _ = selection.parametric_adjusted_accuracy(
        rng.binomial(n1, s1), rng.binomial(n2, s2), correct, (n1, n2), k=2
    )
    assert abs(est[0] - correct.mean()) < 0.01


@pytest.mark.parametrize("n", [2, 17, 60])
def test_equal_per_image_counts_reproduce_the_scalar_path(n):
    rng = np.random.default_rng(n)
    m = 3000
    c1, c2 = rng.binomial(n, rng.beta(5, 2, m)), rng.binomial(n, rng.beta(3, 2, m))
    correct = rng.random((2, m)) < 0.6
    full = np.full(m, n)
    for args in ((c1, c2, correct), (c1[:500], c2, correct)):
        k1 = len(args[0])
        scalar = selection.naive_adjusted_accuracy(*args, n)
        assert np.allclose(
            selection.naive_adjusted_accuracy(*args, (full[:k1], full)), scalar, atol=1e-9, rtol=0
        )
    est, _ = selection.parametric_adjusted_accuracy(c1, c2, correct, n, k=2, seed=1)
    est_arr, _ = selection.parametric_adjusted_accuracy(c1, c2, correct, (full, full), k=2, seed=1)
    assert np.allclose(est_arr, est, atol=1e-9, rtol=0)
    boot = selection.bootstrap_parametric(c1, c2, correct, n, n_boot=3, k=2, seed=2)
    boot_arr = selection.bootstrap_parametric(c1, c2, correct, (full, full), n_boot=3, k=2, seed=2)
    for key in ("estimate", "samples", "low", "high"):
        assert np.allclose(boot_arr[key], boot[key], atol=1e-9, rtol=0)
    mix = selection.fit_betabinomial_mixture(c2, n, k=2)
    assert np.array_equal(
        posterior_frequencies(mix, c2, n, np.random.default_rng(0)),
        posterior_frequencies(mix, c2, full, np.random.default_rng(0)),
    )


def _votes_with_gaps(rng, s, lo, hi, width):
    """Votes from ``width`` annotator columns of which each image gets between ``lo`` and ``hi``."""
    n = rng.integers(lo, hi + 1, len(s))
    votes = (rng.random((len(s), width)) < s[:, None]).astype(float)
    votes[np.arange(width)[None, :] >= n[:, None]] = np.nan
    for row in votes:  # which annotators voted varies from image to image
        rng.shuffle(row)
    return votes


def test_bootstrap_jackknife_takes_missing_votes_on_both_sets():
    rng = np.random.default_rng(4)
    s1, s2 = rng.beta(5, 2, 800), rng.beta(3, 2, 800)
    v1, v2 = _votes_with_gaps(rng, s1, 4, 8, 8), _votes_with_gaps(rng, s2, 3, 8, 8)
    correct = rng.random((3, 800)) < g(s2)
    boot = selection.bootstrap_jackknife(v1, v2, correct, n_boot=10, k=1, seed=0)
    jack = selection.jackknife_adjusted_accuracy(v1, v2, correct)
    assert np.allclose(boot["estimate"], jack.corrected)
    assert np.all(boot["se"] > 0) and np.all(np.isfinite(boot["samples"]))
    assert np.all((boot["low"] < boot["estimate"]) & (boot["estimate"] < boot["high"]))
    one_vote = v2.copy()
    one_vote[0] = np.nan
    one_vote[0, 0] = 1.0
    with pytest.raises(ValueError, match="at least 2 votes"):
        selection.bootstrap_jackknife(v1, one_vote, correct, n_boot=2, k=1)


def test_intervals_are_centred_on_the_estimate():
    rng = np.random.default_rng(5)
    n1, n2 = rng.integers(8, 14, 1500), rng.integers(8, 14, 1500)
    s2 = rng.beta(3, 2, 1500)
    c1, c2 = rng.binomial(n1, rng.beta(5, 2, 1500)), rng.binomial(n2, s2)
    boot = selection.bootstrap_parametric(c1, c2, rng.random((2, 1500)) < g(s2), (n1, n2), n_boot=10, k=1)
    low, high = normal_interval(boot["estimate"], boot["se"])
    assert np.allclose(boot["low"], low) and np.allclose(boot["high"], high)
    assert np.allclose((boot["low"] + boot["high"]) / 2, boot["estimate"])
    assert np.allclose(boot["high"] - boot["low"], 2 * 1.959963984540054 * boot["se"])


def test_reannotate_draws_a_per_image_number_of_annotators_on_both_sets():
    from shifteval.selection import study as selection_study

    s1, s2 = np.full(2000, 0.7), np.full(1500, 0.4)
    v1, v2 = selection_study.reannotate(s1, s2, [32, 48], seed=0)
    for votes, s in ((v1, 0.7), (v2, 0.4)):
        counts, annotators = selection_study.vote_counts(votes)
        assert votes.shape[1] == 48 and annotators.min() == 32 and annotators.max() == 48
        assert len(np.unique(annotators)) == 17
        assert not np.isnan(votes[:, :32]).any()  # the first lo columns are complete
        assert abs(counts.sum() / annotators.sum() - s) < 0.01
    with pytest.raises(ValueError, match=r"\[lo, hi\]"):
        selection_study.reannotate(s1, s2, [48, 32], seed=0)


def test_redraw_coverage_of_intervals_around_the_estimates():
    """Nominal coverage with the spread the redraws show; no coverage with a tiny standard error."""
    from shifteval.selection import study as selection_study

    rng = np.random.default_rng(6)
    s1, s2 = rng.beta(A1, B1, 1500), rng.beta(A2, B2, 1500)
    correct = rng.random((3, 1500)) < g(s2)
    tiny = {"jackknife": np.full(3, 1e-6), "parametric": np.full(3, 1e-6)}
    out = selection_study.redraw_coverage(s1, s2, correct, [6, 10], tiny, 8, seed=0, k=1)
    assert {c["empirical"] for c in out["coverage"].values()} == {0.0}
    wide = {k: np.full(3, v / 100) for k, v in out["per_model_sd"].items()}  # the redraws' own spread
    out = selection_study.redraw_coverage(s1, s2, correct, [6, 10], wide, 8, seed=0, k=1)
    assert all(c["empirical"] >= 0.6 and c["redraws"] == 8 for c in out["coverage"].values())
    with pytest.raises(ValueError, match="parametric"):
        selection_study.redraw_coverage(s1, s2, correct, 6, {"jackknife": [0.1] * 3}, 2, seed=0)


def test_fig6_refuses_an_estimate_outside_its_interval():
    import matplotlib

    matplotlib.use("Agg")
    from shifteval.viz import selection_bias

    v1 = np.array([0.7, 0.8, 0.9])
    est = {"jackknife": v1 - 0.05, "parametric": v1 - 0.04}
    with pytest.raises(ValueError, match="jackknife estimate"):
        selection_bias.fig6_estimates(v1, v1 - 0.1, est, v1, v1 - 0.04, v1, v1 - 0.06, v1, n_boot=10)


def test_bootstrap_interval_is_around_the_estimate_parametric_returns():
    rng = np.random.default_rng(7)
    n1, n2 = rng.integers(5, 9, 800), rng.integers(5, 9, 800)
    s2 = rng.beta(3, 2, 800)
    c1, c2 = rng.binomial(n1, rng.beta(5, 2, 800)), rng.binomial(n2, s2)
    correct = rng.random((2, 800)) < g(s2)
    est, _ = selection.parametric_adjusted_accuracy(c1, c2, correct, (n1, n2), k=2, seed=3)
    boot = selection.bootstrap_parametric(c1, c2, correct, (n1, n2), n_boot=2, k=2, seed=3)
    assert np.array_equal(boot["estimate"], est)
    assert np.all((boot["low"] <= est) & (est <= boot["high"]))


def test_vote_levels_keep_every_count_of_every_number_of_annotators():
    """Empty (count, n) pairs are observations too: the spline's least squares (Eq. 8) needs them."""
    rng = np.random.default_rng(0)
    n = rng.integers(5, 9, 50)
    counts = rng.binomial(n, 0.9)
    pairs = selection.vote_levels(counts, n)
    expected = [(k, m) for m in np.unique(n) for k in range(m + 1)]
    assert list(zip(pairs.levels.tolist(), pairs.annotators.tolist(), strict=True)) == expected
    assert pairs.hist.sum() == 50 and (pairs.hist == 0).any()
    assert (pairs.levels[pairs.item_level] == counts).all() and (
        pairs.annotators[pairs.item_level] == n
    ).all()


def test_parametric_is_not_biased_upwards_by_many_numbers_of_annotators():
    """32-48 votes per image, as the selection-bias chapter's `real` set: the mean error over six draws.

    Fitting the spline on the occupied (count, n) pairs only biased the estimate by about +1.2 points
    here; with every pair the mean error is about +0.4.
    """
    errors = []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        s1, s2 = rng.beta(A1, B1, 3000), rng.beta(A2, B2, 3000)
        n1, n2 = rng.integers(32, 49, 3000), rng.integers(32, 49, 3000)
        correct = rng.random(3000) < g(s2)
        c1, c2 = rng.binomial(n1, s1), rng.binomial(n2, s2)
        est, _ = selection.parametric_adjusted_accuracy(c1, c2, correct, (n1, n2), k=2, seed=0)
        errors.append(float(est[0]) - TRUTH)
    assert abs(np.mean(errors)) < 0.008


def test_jackknife_on_unequal_counts_uses_every_images_first_votes():
    rng = np.random.default_rng(1)
    v1 = (rng.random((400, 8)) < 0.8).astype(float)
    v2 = (rng.random((400, 8)) < 0.6).astype(float)
    v1[rng.random((400, 8)) < 0.2] = np.nan
    v1[:, :2] = 1.0  # at least two votes everywhere
    correct = rng.random(400) < 0.7
    t1, t2 = selection.first_votes(v1, v2)
    m = int(min((~np.isnan(v1)).sum(1).min(), 8))
    assert t1.shape == (400, m) and t2.shape == (400, m) and not np.isnan(t1).any()
    first = [row[~np.isnan(row)][:m].tolist() for row in v1[:5]]
    assert t1[:5].tolist() == first
    truncated = selection.jackknife_adjusted_accuracy(v1, v2, correct)
    assert np.allclose(truncated.corrected, selection.jackknife_adjusted_accuracy(t1, t2, correct).corrected)
    columns = selection.jackknife_adjusted_accuracy(v1, v2, correct, unequal="columns")
    assert not np.allclose(columns.corrected, truncated.corrected)
    with pytest.raises(ValueError, match="unequal must be 'truncate' or 'columns'"):
        selection.jackknife_adjusted_accuracy(v1, v2, correct, unequal="drop")


def test_percentile_intervals_are_checked_over_the_same_redraws():
    """Both intervals on the same redraws; they share the build's spread and differ in their centre."""
    rng = np.random.default_rng(0)
    s1, s2 = rng.beta(5, 2, 300), rng.beta(3, 2, 300)
    correct = rng.random((2, 300)) < s2
    wide = {"samples": rng.normal(0, 0.5, (400, 2)), "se": np.full(2, 0.5)}  # ± about 100 points
    out = selection_study.percentile_coverage(
        s1, s2, correct, 6, {"jackknife": wide, "parametric": wide}, 2, 3, 0, k=1
    )
    assert out["redraws"] == 2 and out["n_boot"] == 3
    for name in ("jackknife", "parametric"):
        assert (
            out[name]["percentile"] == 1.0 and out[name]["normal"] == 1.0 and out[name]["centre_offset"] >= 0
        )
    narrow = {"samples": rng.normal(0, 1e-6, (400, 2)), "se": np.full(2, 1e-6)}  # intervals of width ~0
    out = selection_study.percentile_coverage(
        s1, s2, correct, 6, {"jackknife": narrow, "parametric": narrow}, 2, 3, 0, k=1
    )
    assert out["parametric"]["percentile"] == 0.0 and out["parametric"]["normal"] == 0.0
    with pytest.raises(ValueError, match=r"boots needs the build's bootstraps for \['parametric'\]"):
        selection_study.percentile_coverage(s1, s2, correct, 6, {"jackknife": wide}, 2, 3, 0, k=1)
    with pytest.raises(ValueError, match="n_boot"):
        selection_study.percentile_coverage(
            s1, s2, correct, 6, {"jackknife": wide, "parametric": wide}, 2, 1, 0
        )


def test_percentile_interval_takes_the_quantiles_of_the_samples():
    low, high = selection.percentile_interval(np.arange(101.0)[:, None] * [1, 2], ci=0.9)
    assert np.allclose(low, [5.0, 10.0]) and np.allclose(high, [95.0, 190.0])
