"""Selection-frequency bias (Engstrom et al. 2020): toy model, estimators, mixture EM, bad input."""

import numpy as np
import pytest
from scipy import integrate, stats

from shifteval import selection
from shifteval.selection import parametric


def test_toy_density_integrates_to_one_and_has_the_right_limits():
    for n in (0, 1, 10, 100):
        total, _ = integrate.quad(lambda s, n=n: selection.toy_v2_density(s, 2.0, 3.0, n), 0, 1)
        assert total == pytest.approx(1, abs=1e-8)
    s = np.linspace(0.01, 0.99, 50)
    assert np.allclose(selection.toy_v2_density(s, 2, 3, 0), stats.beta.pdf(s, 2, 3))
    assert np.allclose(selection.toy_v2_density(s, 2, 3, 10**9), stats.beta.pdf(s, 3, 3), atol=1e-6)


def test_toy_simulation_agrees_with_the_closed_form():
    """Eq. (1) against rejection sampling: L1 distance of the histogram <= 0.02 at 10^6 samples."""
    alpha, beta, n = 2.0, 3.0, 10
    s = selection.simulate_toy_replication(alpha, beta, n, 2_500_000, seed=0)
    assert len(s) >= 1_000_000
    assert selection.toy_l1_distance(s, alpha, beta, n) <= 0.02
    # and the test can fail: the same samples against the wrong number of annotators
    assert selection.toy_l1_distance(s, alpha, beta, 1) > 0.02


def test_betabinomial_loglik_matches_scipy():
    levels = np.arange(41)
    ours = parametric._component_loglik(levels, 40, np.log(2.3), np.log(0.7))
    assert np.allclose(ours, stats.betabinom.logpmf(levels, 40, 2.3, 0.7), atol=1e-10)


def test_mixture_recovers_known_components():
    """10,000 items x 40 annotators from a known 3-component mixture: means within 0.02."""
    rng = np.random.default_rng(1)
    w, a, b = np.array([0.2, 0.3, 0.5]), np.array([2.0, 8.0, 30.0]), np.array([8.0, 8.0, 3.0])
    z = rng.choice(3, 10_000, p=w)
    counts = rng.binomial(40, rng.beta(a[z], b[z]))
    fit = selection.fit_betabinomial_mixture(counts, 40, k=3, seed=0)
    assert fit.converged
    assert np.abs(fit.means - a / (a + b)).max() <= 0.02
    assert fit.weights.sum() == pytest.approx(1)
    assert fit.pmf(np.arange(41)).sum() == pytest.approx(1)
    # the fitted likelihood is at least that of the true parameters
    true_ll = np.sum(
        np.log(sum(wj * stats.betabinom.pmf(counts, 40, aj, bj) for wj, aj, bj in zip(w, a, b, strict=True)))
    )
    assert fit.loglik >= true_ll - 1e-6


def test_mixture_bad_input():
    with pytest.raises(ValueError, match="must not exceed annotators=10"):
        selection.fit_betabinomial_mixture([3, 11], 10)
    with pytest.raises(ValueError, match="non-negative"):
        selection.fit_betabinomial_mixture([-1, 3], 10)
    with pytest.raises(ValueError, match="k must be at least 1"):
        selection.fit_betabinomial_mixture([1, 3], 10, k=0)
    with pytest.raises(ValueError, match="whole numbers"):
        selection.fit_betabinomial_mixture([1.5, 3], 10)


def _world_like(n_images=4000, n=10, seed=0):
    """v1 with high true s, v2 matched on noisy counts from a lower-s pool: the bias in miniature."""
    rng = np.random.default_rng(seed)
    s1 = rng.beta(4, 1.5, n_images)
    pool = rng.beta(2, 2, 20 * n_images)
    k_pool = rng.binomial(n, pool)
    k1_hist = np.bincount(rng.binomial(n, s1), minlength=n + 1) / n_images
    accept = (
        rng.random(len(pool))
        < (k1_hist[k_pool] / np.bincount(k_pool, minlength=n + 1)[k_pool]) * n_images / 2
    )
    s2 = pool[accept][:n_images]
    v1 = (rng.random((n_images, n)) < s1[:, None]).astype(int)
    v2 = (rng.random((len(s2), n)) < s2[:, None]).astype(int)
    correct = (rng.random((3, len(s2))) < (0.3 + np.array([[0.3], [0.5], [0.6]]) * s2[None, :])).astype(int)
    return s1, s2, v1, v2, correct


def test_naive_estimator_and_jackknife_move_towards_the_truth():
    s1, s2, v1, v2, correct = _world_like()
    truth = selection.true_adjusted_accuracy(s1, s2, correct)
    plain = correct.mean(axis=1)
    naive = selection.naive_adjusted_accuracy(v1.sum(1), v2.sum(1), correct, v1.shape[1])
    jack = selection.jackknife_adjusted_accuracy(v1, v2, correct)
    assert np.all(plain < naive) and np.all(naive < truth)  # the naive estimator under-corrects
    assert np.allclose(jack.naive, naive)
    assert np.all(np.abs(jack.corrected - truth) < np.abs(naive - truth))
    assert np.all(jack.std_error > 0)


def test_naive_estimator_with_identical_sets_is_the_plain_accuracy():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 11, 500)
    correct = rng.integers(0, 2, 500)
    assert selection.naive_adjusted_accuracy(counts, counts, correct, 10) == pytest.approx(correct.mean())


def test_naive_by_annotators_uses_the_first_m_annotators_and_shrinks_the_bias():
    s1, s2, v1, v2, correct = _world_like(n_images=1000)
    truth = selection.true_adjusted_accuracy(s1, s2, correct)
    out = selection.naive_by_annotators(v1, v2, correct, [2, 5, 10])
    assert out.shape == (3, 3)
    # each row is the naive estimator on the first m annotator columns (not a random or last-m subset)
    for row, m in zip(out, [2, 5, 10], strict=True):
        expected = selection.naive_adjusted_accuracy(v1[:, :m].sum(1), v2[:, :m].sum(1), correct, m)
        assert np.allclose(row, expected)
    assert not np.allclose(
        out[0], selection.naive_adjusted_accuracy(v1[:, -2:].sum(1), v2[:, -2:].sum(1), correct, 2)
    )
    # more annotators bring the naive estimate closer to the truth (Engstrom et al., Fig. 5)
    assert np.all(np.abs(out[2] - truth) < np.abs(out[0] - truth))
    with pytest.raises(ValueError, match="outside 1..10"):
        selection.naive_by_annotators(v1, v2, correct, [11])


def test_parametric_estimate_is_closer_to_the_truth_than_naive():
    s1, s2, v1, v2, correct = _world_like()
    truth = selection.true_adjusted_accuracy(s1, s2, correct)
    naive = selection.naive_adjusted_accuracy(v1.sum(1), v2.sum(1), correct, 10)
    est, fitted = selection.parametric_adjusted_accuracy(v1.sum(1), v2.sum(1), correct, 10, seed=0)
    assert est.shape == (3,)
    assert np.mean(np.abs(est - truth)) < np.mean(np.abs(naive - truth))
    for g in fitted.splines_:
        values = g(np.linspace(0, 1, 101))
        assert values.min() >= -1e-9 and values.max() <= 1 + 1e-9


def test_gap_decomposition_matches_hand_values():
    # Eq. (2): gap = (acc_v1 - adjusted_v2) + (adjusted_v2 - acc_v2); components differ so a swap fails
    d = selection.gap_decomposition([0.8, 0.7], [0.7, 0.6], [0.72, 0.65])
    assert np.allclose(d["accuracy_gap"], [0.10, 0.10])
    assert np.allclose(d["bias_corrected_gap"], [0.08, 0.05])
    assert np.allclose(d["selection_gap"], [0.02, 0.05])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: selection.naive_adjusted_accuracy([1, 2], [1, 2, 3], [1, 0], 5), "one entry per v2 image"),
        (
            lambda: selection.naive_adjusted_accuracy([1, 7], [1, 2], [1, 0], 5),
            "must not exceed annotators=5",
        ),
        (
            lambda: selection.jackknife_adjusted_accuracy(np.ones((3, 4)), np.ones((3, 5)), [1, 0, 1]),
            "4 annotators but votes_v2 has 5",
        ),
        (
            lambda: selection.jackknife_adjusted_accuracy(np.full((3, 4), 2), np.ones((3, 4)), [1, 0, 1]),
            "only 0/1 votes",
        ),
        (lambda: selection.toy_v2_density(0.5, -1, 2, 3), "alpha and beta must be positive"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_bootstrap_jackknife_covers_images_and_votes():
    """Its SE matches the jackknife estimate's SD over freshly drawn worlds (images and votes), which the
    jackknife's own SE (annotator leave-outs only) understates."""
    fresh = []
    for seed in range(1, 16):
        _, _, v1, v2, correct = _world_like(n_images=1500, seed=seed)
        fresh.append(selection.jackknife_adjusted_accuracy(v1, v2, correct).corrected)
    sd = np.std(fresh, axis=0, ddof=1)
    _, _, v1, v2, correct = _world_like(n_images=1500, seed=0)
    boot = selection.bootstrap_jackknife(v1, v2, correct, n_boot=200, seed=0)
    jack = selection.jackknife_adjusted_accuracy(v1, v2, correct)
    ratio = boot["se"] / sd
    assert np.all((ratio > 0.5) & (ratio < 2)), ratio
    assert np.all(boot["se"] > jack.std_error)
    assert np.all(boot["low"] < jack.corrected) and np.all(jack.corrected < boot["high"])


def test_parametric_sweeps_fit_a_setting_both_sweeps_hold_once(monkeypatch):
    from shifteval.selection import estimators, study

    v1, v2 = study.reannotate(np.linspace(0.05, 0.95, 80), np.linspace(0.1, 0.9, 80), 6, seed=0)
    correct = np.random.default_rng(1).random((2, 80)) < 0.7
    fitted, fit = [], estimators.parametric_adjusted_accuracy

    def counted(counts_v1, counts_v2, correct_v2, annotators, k, seed):
        fitted.append((annotators, k))
        return fit(counts_v1, counts_v2, correct_v2, annotators, k=k, seed=seed)

    monkeypatch.setattr(estimators, "parametric_adjusted_accuracy", counted)
    r = study.parametric_sweeps(v1, v2, correct, [0.7, 0.6], [3, 6], [1, 2], k=2)
    # (6, 2) is in both sweeps: fitted once, the same row in both
    assert sorted(fitted) == [(3, 2), (6, 1), (6, 2)]
    assert r["annotators"][1]["estimates"] == r["components"][1]["estimates"]
    assert r["annotators"][1]["mean_error"] == r["components"][1]["mean_error"]
