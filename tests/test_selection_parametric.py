"""The parametric estimator (Engstrom et al. 2020, §5.3, App. F): exact integrals, spline recovery,
per-image vote numbers, and the bootstrap."""

import numpy as np
import pytest
from scipy import integrate, stats

from shifteval import selection
from shifteval.selection.parametric import _bspline_basis

W, A, B = np.array([0.3, 0.7]), np.array([2.0, 9.0]), np.array([6.0, 2.0])


def _mixture(n=40):
    return selection.BetaBinomialMixture(W, A, B, 0.0, n, 0, True)


def _draw_s(rng, size):
    z = rng.choice(2, size, p=W)
    return rng.beta(A[z], B[z])


def test_basis_expectations_are_exact_integrals():
    """Against adaptive quadrature of B_b(s) Beta(s; a, b) for ordinary parameters."""
    for a, b in [(2.0, 5.0), (0.7, 0.4), (30.0, 3.0)]:
        ours = selection.beta_basis_expectations(a, b, 8)[0]
        for j in range(8):
            quad, _ = integrate.quad(
                lambda s, j=j, a=a, b=b: np.nan_to_num(_bspline_basis(np.array([s]), 8))[0, j]
                * stats.beta.pdf(s, a, b),
                0, 1, points=np.linspace(0, 1, 6)[1:-1], limit=200,
            )  # fmt: skip
            assert ours[j] == pytest.approx(quad, abs=1e-7)


def test_spike_components_lose_no_mass():
    """A spike at s = 1 (the M-step's bounds allow Beta(1e4, 0.01)) keeps all its mass: a constant g
    integrates to that constant, where the former 1,000-point midpoint grid lost 1.4% of the weight."""
    spike = selection.BetaBinomialMixture(
        np.array([0.986, 0.014]), np.array([5.0, 1e4]), np.array([2.0, 1e-2]), 0.0, 40, 0, True
    )
    e = spike.basis_expectations(8)
    assert e.sum() == pytest.approx(1, abs=1e-12)
    g = selection.AccuracySpline(np.full(8, 0.8))
    assert g.integrate(spike) == pytest.approx(0.8, abs=1e-12)
    # the spike's mass sits in the last basis function, ((s - 0.8)/0.2)³ on the last knot interval:
    # E ≈ 1 - 15 E[1 - s] = 1 - 15 β/(α + β), up to O(E[(1 - s)²]) ≈ 1e-8
    assert selection.beta_basis_expectations(1e4, 1e-2, 8)[0, -1] == pytest.approx(
        1 - 15 * 1e-2 / (1e4 + 1e-2), abs=1e-8
    )
    grid = np.linspace(0.0005, 0.9995, 1000)
    assert (spike.pdf(grid) * (grid[1] - grid[0])).sum() < 0.99  # what a grid would have kept


def test_lost_mass_fails_loudly():
    with pytest.raises(FloatingPointError, match="lost mass"):
        selection.beta_basis_expectations(np.nan, 2.0, 8)


def test_spline_recovers_a_known_accuracy_curve():
    """20,000 images, g(s) = 0.2 + 0.7 s², the true p₂: the fitted g within 0.04 where p₂ has mass."""
    rng = np.random.default_rng(0)
    s = _draw_s(rng, 20_000)
    g_true = lambda x: 0.2 + 0.7 * x**2  # noqa: E731
    counts = rng.binomial(40, s)
    correct = rng.random(len(s)) < g_true(s)
    (g,) = selection.fit_accuracy_spline(counts, correct, 40, _mixture())
    x = np.linspace(0.1, 0.95, 18)
    assert np.abs(g(x) - g_true(x)).max() < 0.04
    # and a flat truth is not recovered as this curve (the test can fail)
    (flat,) = selection.fit_accuracy_spline(counts, rng.random(len(s)) < 0.5, 40, _mixture())
    assert np.abs(flat(x) - g_true(x)).max() > 0.2


def test_per_image_vote_numbers():
    """k_i ~ BetaBinomial(n_i, ...) with n_i in 10..63: components recovered; equal n_i = scalar n."""
    rng = np.random.default_rng(2)
    s = _draw_s(rng, 8000)
    n = rng.integers(10, 64, len(s))
    k = rng.binomial(n, s)
    fit = selection.fit_betabinomial_mixture(k, n, k=2, seed=0)
    assert np.abs(fit.means - A / (A + B)).max() < 0.02
    assert np.abs(fit.weights - W).max() < 0.03
    # with every n_i equal the per-item path gives the scalar fit
    k40 = rng.binomial(40, s)
    same = selection.fit_betabinomial_mixture(k40, np.full(len(s), 40), k=2, seed=0)
    scalar = selection.fit_betabinomial_mixture(k40, 40, k=2, seed=0)
    assert same.loglik == pytest.approx(scalar.loglik, rel=1e-9)
    assert np.allclose(same.means, scalar.means, atol=1e-4)
    correct = rng.random(len(s)) < s
    assert selection.naive_adjusted_accuracy(k40, k40, correct, (np.full(len(s), 40), 40)) == pytest.approx(
        selection.naive_adjusted_accuracy(k40, k40, correct, 40)
    )
    est, _ = selection.parametric_adjusted_accuracy(k, k40, correct, (n, 40), k=2)
    assert est[0] == pytest.approx(correct.mean(), abs=0.02)  # v1 and v2 drawn alike
    with pytest.raises(ValueError, match="one number or one per item"):
        selection.fit_betabinomial_mixture(k, n[:-1])
    with pytest.raises(ValueError, match="must not exceed annotators=10"):
        selection.fit_betabinomial_mixture([11, 3], [10, 12])


def test_jackknife_with_missing_votes():
    """Missing votes: by default every image's first m votes (m the fewest); with unequal="columns" a NaN
    vote leaves the image out of that annotator's leave-out. A full array gives the usual result."""
    rng = np.random.default_rng(3)
    s1, s2 = rng.beta(6, 2, 800), rng.beta(4, 2, 800)
    v1 = (rng.random((800, 8)) < s1[:, None]).astype(float)
    v2 = (rng.random((800, 8)) < s2[:, None]).astype(float)
    correct = rng.random(800) < s2
    full = selection.jackknife_adjusted_accuracy(v1, v2, correct)
    v2[:100, 0] = np.nan
    part = selection.jackknife_adjusted_accuracy(v1, v2, correct, unequal="columns")
    n2 = np.where(np.isnan(v2), 0, 1).sum(1)
    assert part.naive == pytest.approx(
        selection.naive_adjusted_accuracy(v1.sum(1), np.nansum(v2, 1), correct, (8, n2))
    )
    assert abs(part.corrected[0] - full.corrected[0]) < 0.05
    first = selection.jackknife_adjusted_accuracy(v1, v2, correct)  # every image's first 7 votes
    t1, t2 = selection.first_votes(v1, v2)
    assert t1.shape == t2.shape == (800, 7)
    assert first.naive == pytest.approx(selection.naive_adjusted_accuracy(t1.sum(1), t2.sum(1), correct, 7))
    v2[5, :7] = np.nan
    with pytest.raises(ValueError, match="at least 2 votes"):
        selection.jackknife_adjusted_accuracy(v1, v2, correct)


@pytest.mark.slow
def test_bootstrap_matches_the_spread_over_fresh_data():
    """The bootstrap SE of the parametric estimate, against its SD over 12 freshly drawn data sets."""

    def draw(rng):
        s1, s2 = _draw_s(rng, 3000), rng.beta(4, 3, 1500)
        correct = rng.random((2, 1500)) < np.array([[0.5], [0.8]]) * (0.4 + 0.6 * s2)
        return rng.binomial(20, s1), rng.binomial(20, s2), correct

    rng = np.random.default_rng(4)
    fresh = np.array([selection.parametric_adjusted_accuracy(*draw(rng), 20, k=2)[0] for _ in range(12)])
    c1, c2, correct = draw(rng)
    boot = selection.bootstrap_parametric(c1, c2, correct, 20, n_boot=150, k=2, seed=0)
    assert boot["samples"].shape == (150, 2)
    ratio = boot["se"] / fresh.std(axis=0, ddof=1)
    assert np.all((ratio > 0.5) & (ratio < 2)), ratio
    assert np.all(boot["low"] < boot["estimate"]) and np.all(boot["estimate"] < boot["high"])
    again = selection.bootstrap_parametric(c1, c2, correct, 20, n_boot=150, k=2, seed=0)
    assert np.array_equal(again["samples"], boot["samples"])  # reproducible
    with pytest.raises(ValueError, match="'n_boot' must be an integer >= 2"):
        selection.bootstrap_parametric(c1, c2, correct, 20, n_boot=1)


def test_posterior_frequencies_draw_from_each_items_posterior_mixture():
    from shifteval.selection.bootstrap import posterior_frequencies

    mix = selection.BetaBinomialMixture(W, A, B, 0.0, 10, 0, True)
    k = np.array([0, 3, 10, 7, 3])
    # per item: component j with probability ∝ γ_j BetaBinom(k; n, α_j, β_j), then Beta(α_j + k, β_j + n − k)
    rng = np.random.default_rng(5)
    u = rng.random(len(k))
    expected = []
    for ki, ui in zip(k, u, strict=True):
        w = mix.weights * stats.betabinom.pmf(ki, 10, mix.alphas, mix.betas)
        j = min(int((ui > np.cumsum(w / w.sum())).sum()), 1)
        expected.append(rng.beta(mix.alphas[j] + ki, mix.betas[j] + 10 - ki))
    got = posterior_frequencies(mix, k, 10, np.random.default_rng(5))
    assert got == pytest.approx(expected, rel=1e-12)
    many = posterior_frequencies(mix, np.full(40_000, 10), 10, np.random.default_rng(0))
    w = mix.weights * stats.betabinom.pmf(10, 10, mix.alphas, mix.betas)
    mean = np.sum(w / w.sum() * (mix.alphas + 10) / (mix.alphas + mix.betas + 10))
    assert many.mean() == pytest.approx(mean, abs=0.003)


def test_parametric_estimate_with_per_image_vote_numbers_is_not_scaled_by_their_shares():
    # Eq. (7) per (count, n) pair is conditional on n: with n spread over six values, the joint
    # frequencies must be divided by the images with that n, or g (and the estimate) shrinks ~6x.
    from shifteval import selection

    rng = np.random.default_rng(1)
    s1, s2 = rng.beta(7, 3, 3000), rng.beta(6, 4, 2000)
    f = rng.random((3, 2000)) < np.array([[0.4], [0.7], [0.95]])  # correctness ignores s
    n1, n2 = rng.integers(8, 14, 3000), rng.integers(8, 14, 2000)
    est, _ = selection.parametric_adjusted_accuracy(rng.binomial(n1, s1), rng.binomial(n2, s2), f, (n1, n2))
    assert np.allclose(est, f.mean(1), atol=0.03)
    boot = selection.bootstrap_parametric(rng.binomial(n1, s1), rng.binomial(n2, s2), f, (n1, n2), n_boot=4)
    # unscaled, every sample is near the accuracy (the scaled fit gave about a sixth of it)
    assert (np.abs(boot["samples"] - f.mean(1)) < 0.1).all()


def test_parametric_estimator_is_the_function_and_the_bootstrap_refits_it():
    """``parametric_adjusted_accuracy`` returns the fitted estimator; each bootstrap sample is its refit."""
    from shifteval.selection.parametric import ParametricEstimator

    rng = np.random.default_rng(4)
    s1, s2 = _draw_s(rng, 1500), _draw_s(rng, 1200)
    annotators_v1, annotators_v2 = rng.integers(8, 12, 1500), 10
    c1, c2 = rng.binomial(annotators_v1, s1), rng.binomial(annotators_v2, s2)
    correct = rng.random((2, 1200)) < s2
    est, fitted = selection.parametric_adjusted_accuracy(c1, c2, correct, (annotators_v1, annotators_v2), k=2)
    assert isinstance(fitted, ParametricEstimator) and np.array_equal(est, fitted.estimates_)
    assert fitted.mixture_v1_.annotators.shape == (1500,) and fitted.mixture_v2_.annotators == 10
    assert [g.integrate(fitted.mixture_v1_) for g in fitted.splines_] == est.tolist()
    # the bootstrap draws the same rows and refits this estimator on them
    boot = selection.bootstrap_parametric(c1, c2, correct, (annotators_v1, annotators_v2), n_boot=2, k=2)
    draw = np.random.default_rng(0)
    for sample in boot["samples"]:
        rows_v1, rows_v2 = draw.integers(0, 1500, 1500), draw.integers(0, 1200, 1200)
        assert np.array_equal(fitted.refit(rows_v1, rows_v2).estimates_, sample)
    # refitting on every image once is the fit itself (up to the polish's tolerance), and leaves it as it was
    same = fitted.refit(np.arange(1500), np.arange(1200))
    assert same is not fitted and same.estimates_ == pytest.approx(est, abs=1e-5)
    assert np.array_equal(fitted.estimates_, est)


def test_an_unfitted_estimator_cannot_be_refitted_or_start_a_fit():
    from shifteval.selection.parametric import ParametricEstimator

    with pytest.raises(ValueError, match="refit needs a fitted ParametricEstimator"):
        ParametricEstimator().refit([0, 1], [0, 1])
    with pytest.raises(ValueError, match="init needs a fitted ParametricEstimator"):
        ParametricEstimator(k=2).fit(
            [1, 2, 3], [1, 2, 3], [[True, False, True]], 4, init=ParametricEstimator()
        )


def test_vote_checks_name_the_annotators():
    from shifteval.utils import validation

    assert validation.check_votes([3, 0], [4, 5])[1].tolist() == [4, 5]
    with pytest.raises(ValueError, match="annotators must be one number or one per item"):
        validation.check_votes([3, 0], [4, 5, 6])
    with pytest.raises(ValueError, match="only 0/1 votes"):
        validation.check_vote_matrix([[0, 2]], "votes_v1")


def test_no_selection_module_uses_another_modules_private_names():
    import ast
    from pathlib import Path

    root = Path(selection.__file__).parent
    for path in [*root.glob("*.py"), root.parent / "utils" / "validation.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert not [a.name for a in node.names if a.name.startswith("_")], path
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                assert isinstance(node.value, ast.Name) and node.value.id == "self", (path, node.attr)
