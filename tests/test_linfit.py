"""shifteval.linfit against scipy, the paper's printed numbers and a second real testbed."""

import numpy as np
import pandas as pd
import pytest
from conftest import SHARED
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from shifteval import linfit
from shifteval.datasets import published
from shifteval.linfit import recht2019, testbeds


def _imagenet_cnns():
    t = published.load_table("recht2019_imagenet_top1_matchedfrequency")
    return t[~published.is_fisher_vector(t.model)]


def test_point_estimates_match_scipy_linregress():
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 0.95, 40)
    y = np.clip(1.3 * x - 0.3 + rng.normal(0, 0.01, 40), 0, 1)
    for scale in linfit.SCALES:
        fit = linfit.fit_linear(x, y, scale=scale, n_boot=100, seed=0)
        ref = stats.linregress(linfit.transform(x, scale), linfit.transform(y, scale))
        assert fit.slope == pytest.approx(ref.slope, rel=1e-12)
        assert fit.intercept == pytest.approx(ref.intercept, rel=1e-12, abs=1e-12)
        assert fit.r == pytest.approx(ref.rvalue, rel=1e-12)
        assert fit.n == 40


def test_bootstrap_lines_match_polyfit_per_replicate():
    rng = np.random.default_rng(2)
    x, y = rng.uniform(size=12), rng.uniform(size=12)
    slopes, intercepts = linfit.bootstrap_lines(x, y, 50, np.random.default_rng(7), chunk=16)
    idx = np.random.default_rng(7)
    # the same generator stream, drawn chunk by chunk as bootstrap_lines draws it
    draws = np.vstack([idx.integers(0, 12, size=(m, 12)) for m in (16, 16, 16, 2)])
    for b in range(50):
        ref = np.polyfit(x[draws[b]], y[draws[b]], 1)
        assert slopes[b] == pytest.approx(ref[0], rel=1e-9)
        assert intercepts[b] == pytest.approx(ref[1], rel=1e-9, abs=1e-12)


def test_same_seed_same_numbers_different_seed_different_numbers():
    t = published.load_table("recht2019_cifar10")
    a = linfit.fit_table(t, n_boot=5000, seed=3)
    b = linfit.fit_table(t, n_boot=5000, seed=3)
    c = linfit.fit_table(t, n_boot=5000, seed=4)
    assert a.slope_ci == b.slope_ci and np.array_equal(a.boot_slopes, b.boot_slopes)
    assert a.slope_ci != c.slope_ci


def test_reproduces_recht_cifar10_fit():
    """§3.3: slope 1.69, offset -72.7%, 95% CIs [1.63, 1.76] and [-78.6, -67.5]."""
    ref = published.reported()["recht2019"]["cifar10_fit"]
    fit = linfit.fit_table(published.load_table("recht2019_cifar10"), n_boot=100_000, seed=0)
    s = fit.summary()
    # the transcribed accuracies are rounded to 0.1 point, which moves the point estimates this little
    assert s["slope"] == pytest.approx(ref["slope"], abs=0.006)
    assert s["intercept"] == pytest.approx(ref["intercept"], abs=0.1)
    assert s["slope_ci"] == pytest.approx(ref["slope_ci"], abs=0.02)
    assert s["intercept_ci"] == pytest.approx(ref["intercept_ci"], abs=1.0)


def test_reproduces_recht_imagenet_fit_on_the_64_convnets():
    """§3.3: slope 1.11, offset -20.2%, 95% CIs [1.07, 1.19] and [-26.0, -17.8]."""
    ref = published.reported()["recht2019"]["imagenet_top1_matchedfrequency_fit"]
    cnns = _imagenet_cnns()
    assert len(cnns) == 64
    s = linfit.fit_table(cnns, n_boot=100_000, seed=0).summary()
    # the transcribed accuracies are rounded to 0.1 point, which moves the point estimates this little
    assert s["slope"] == pytest.approx(ref["slope"], abs=0.006)
    assert s["intercept"] == pytest.approx(ref["intercept"], abs=0.1)
    assert s["slope_ci"] == pytest.approx(ref["slope_ci"], abs=0.02)
    assert s["intercept_ci"] == pytest.approx(ref["intercept_ci"], abs=1.0)


def test_reproduces_recht_table_2():
    ref = published.reported()["recht2019"]["table2"]
    for strategy in ("matchedfrequency", "threshold0.7", "topimages"):
        for k in ("top1", "top5"):
            change = linfit.mean_change(published.load_table(f"recht2019_imagenet_{k}_{strategy}"))
            assert round(change, 1) == ref[strategy][k], (strategy, k)


def test_top5_topimages_slope_below_one():
    """App. C.4.5, Figure 12's caption: top-5 TopImages slope 0.88, 95% CI [0.81, 0.91] (100,000 samples)."""
    ref = published.reported()["recht2019"]["imagenet_top5_topimages_slope"]
    t = published.load_table("recht2019_imagenet_top5_topimages")
    cnn = t[~published.is_fisher_vector(t.model)]
    assert len(cnn) == 64
    fit = linfit.fit_table(cnn, n_boot=100_000, seed=0)
    # the point estimate rounds to the printed slope; the endpoints agree within rounding (0.005) plus
    # the Monte Carlo error of the percentiles and the 0.1-point rounding of the printed accuracies
    assert round(fit.slope, 2) == ref["slope"]
    assert fit.slope_ci == pytest.approx(ref["slope_ci"], abs=0.01)
    assert fit.slope_ci[1] < 1


def test_engstrom_table_fit_matches_their_unadjusted_slope():
    ref = published.reported()["engstrom2020"]["linear_fit_slope"]
    fit = linfit.fit_table(published.load_table("engstrom2020_imagenet"), n_boot=10_000, seed=0)
    assert abs(fit.slope - ref["unadjusted"]) <= ref["unadjusted_pm"]


@pytest.mark.skipif(
    not (SHARED / "external" / "imagenet_testbed_top1.csv").is_file(), reason="../shared not present"
)
def test_recht_probit_fit_predicts_the_335_model_testbed():
    """A second real check: the published 335-model ImageNet testbed (Taori et al. 2020)."""
    bed = pd.read_csv(SHARED / "external" / "imagenet_testbed_top1.csv")
    v1, v2 = bed["val"] / 100, bed["imagenetv2-matched-frequency-format-val"] / 100
    assert len(bed) == 335 and v1.notna().all() and v2.notna().all()
    recht = published.load_table("recht2019_imagenet_top1_matchedfrequency")
    # models evaluated in both: the testbed's accuracies are the transcribed ones
    both = bed.merge(recht, on="model")
    assert len(both) >= 40
    assert (both["val"] - both["orig_acc"]).abs().max() < 0.1
    assert (both["imagenetv2-matched-frequency-format-val"] - both["new_acc"]).abs().max() < 1.0
    # Recht et al.'s probit line, fitted on their 67 models, predicts the 335 models to ~1 point
    probit = linfit.fit_table(recht, scale="probit", n_boot=1000, seed=0)
    assert probit.residual_rms(v1, v2) < 0.015
    own = linfit.fit_linear(v1, v2, scale="probit", n_boot=1000, seed=0)
    assert own.r > 0.99


def test_band_contains_the_fitted_line_and_is_narrowest_near_the_mean():
    t = published.load_table("recht2019_cifar10")
    fit = linfit.fit_table(t, n_boot=20_000, seed=0)
    grid = np.linspace(0.8, 0.99, 25)
    low, high = fit.band(grid)
    assert np.all(low <= fit.predict(grid)) and np.all(fit.predict(grid) <= high)
    assert np.all(high - low > 0)
    # the band is narrowest near the mean of the fitted x values (within two grid steps)
    width = high - low
    assert abs(grid[np.argmin(width)] - t.orig_acc.mean() / 100) <= 2 * (grid[1] - grid[0])


def test_band_and_intervals_narrow_with_more_models():
    """The bootstrap resamples models: 34 models pin the line better than 9 of them."""
    t = published.load_table("recht2019_cifar10")
    few = t.iloc[testbeds.evenly_spaced_subset(t["orig_acc"], 9)]
    assert len(few) == 9
    full = linfit.fit_table(t, n_boot=20_000, seed=0)
    sub = linfit.fit_table(few, n_boot=20_000, seed=0)
    assert (full.n, sub.n) == (34, 9)
    grid = np.linspace(0.84, 0.98, 15)
    w_full = np.subtract(*full.band(grid)[::-1])
    w_sub = np.subtract(*sub.band(grid)[::-1])
    assert np.all(w_sub > w_full)
    assert np.ptp(sub.slope_ci) > 1.5 * np.ptp(full.slope_ci)


def test_predict_and_band_on_the_probit_scale_stay_in_unit_interval():
    fit = linfit.fit_table(
        published.load_table("recht2019_imagenet_top1_matchedfrequency"), scale="probit", n_boot=2000
    )
    grid = np.linspace(0.001, 0.999, 50)
    low, high = fit.band(grid)
    for arr in (fit.predict(grid), low, high):
        assert np.all((arr > 0) & (arr < 1))


@pytest.mark.parametrize(
    ("x", "y", "kwargs", "message"),
    [
        ([0.5, 0.6, 0.7], [0.5, 0.6], {}, "same length"),
        ([0.5, 0.6], [0.5, 0.6], {}, "at least 3"),
        ([50, 60, 70], [0.5, 0.6, 0.7], {}, r"fractions in \[0, 1\].*percentages"),
        ([0.5, 0.6, 0.7], [0.5, np.nan, 0.7], {}, "NaN"),
        ([0.5, 0.6, 0.7], [0.5, 0.6, 0.7], {"scale": "logit"}, "scale must be one of"),
        ([0.5, 0.6, 0.7], [0.5, 0.6, 0.7], {"ci": 1.5}, r"ci must be in \(0, 1\)"),
        ([0.5, 0.6, 0.7], [0.5, 0.6, 0.7], {"n_boot": 0}, "n_boot must be at least 1"),
        ([0.5, 0.5, 0.5], [0.5, 0.6, 0.7], {}, "slope is undefined"),
        ([[0.5, 0.6, 0.7]], [[0.5, 0.6, 0.7]], {}, "1-D"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(x, y, kwargs, message):
    with pytest.raises(ValueError, match=message):
        linfit.fit_linear(x, y, **{"n_boot": 10, **kwargs})


def test_fit_table_needs_the_accuracy_columns():
    with pytest.raises(ValueError, match="orig_acc"):
        linfit.fit_table(pd.DataFrame({"model": ["a"], "new_acc": [1.0]}))


# --- Clopper-Pearson -------------------------------------------------------------------------


def test_clopper_pearson_known_values():
    # closed forms at the edges: k = 0 -> [0, 1 - (a/2)^(1/n)], k = n -> [(a/2)^(1/n), 1]
    low, high = linfit.clopper_pearson(0, 10)
    assert low == 0 and high == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-10)
    low, high = linfit.clopper_pearson(10, 10)
    assert high == 1 and low == pytest.approx(0.025 ** (1 / 10), rel=1e-10)
    # textbook value: 7 of 10 -> [0.3475, 0.9333]
    low, high = linfit.clopper_pearson(7, 10)
    assert (low, high) == pytest.approx((0.347547, 0.933260), abs=1e-6)


def test_clopper_pearson_agrees_with_scipy_binomtest():
    for k, n in [(1, 7), (13, 40), (999, 1000), (5123, 10_000)]:
        ref = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        low, high = linfit.clopper_pearson(k, n)
        assert (low, high) == pytest.approx((ref.low, ref.high), rel=1e-9)


@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
@settings(max_examples=60, deadline=None)
def test_clopper_pearson_interval_contains_the_estimate(kn):
    k, n = kn
    low, high = linfit.clopper_pearson(k, n)
    assert 0 <= low <= k / n <= high <= 1


def test_clopper_pearson_is_vectorized():
    k = np.array([0, 5, 10])
    low, high = linfit.clopper_pearson(k, 10)
    assert low.shape == high.shape == (3,)
    assert low[0] == 0 and high[2] == 1


@pytest.mark.parametrize(
    ("k", "n", "message"),
    [(11, 10, "0 <= k <= n"), (-1, 10, "0 <= k <= n"), (1, 0, "n must be"), (1.5, 10, "whole numbers")],
)
def test_clopper_pearson_bad_input(k, n, message):
    with pytest.raises(ValueError, match=message):
        linfit.clopper_pearson(k, n)


# --- Gaussian difficulty model (§5.3) --------------------------------------------------------


def test_gaussian_model_analytic_line_matches_simulation():
    mu1, s1, mu2, s2 = 0.0, 1.0, 0.5, 0.8
    u, v = linfit.gaussian_difficulty_line(mu1, s1, mu2, s2)
    assert u == pytest.approx(np.sqrt(2) / np.sqrt(1.64))
    assert v == pytest.approx(-0.5 / np.sqrt(1.64))
    acc1, acc2 = linfit.simulate_gaussian_difficulty(
        np.linspace(-1, 2, 25), mu1, s1, mu2, s2, n_images=200_000, seed=1
    )
    fit = linfit.fit_linear(acc1, acc2, scale="probit", n_boot=200, seed=0)
    assert fit.slope == pytest.approx(u, abs=0.02)
    assert fit.intercept == pytest.approx(v, abs=0.02)


def test_gaussian_model_expected_accuracy_formula():
    # alpha = Phi((s - mu) / sqrt(sigma^2 + 1)); sampled accuracy converges to it
    acc1, _ = linfit.simulate_gaussian_difficulty([0.7], 0.2, 1.5, 0.2, 1.5, n_images=400_000, seed=0)
    assert acc1[0] == pytest.approx(stats.norm.cdf(0.5 / np.sqrt(1.5**2 + 1)), abs=0.003)


def test_gaussian_model_bad_input():
    with pytest.raises(ValueError, match="sigma1 must be non-negative"):
        linfit.gaussian_difficulty_line(0, -1, 0, 1)
    with pytest.raises(ValueError, match="skills"):
        linfit.simulate_gaussian_difficulty([], 0, 1, 0, 1)


# --- shifteval.linfit.testbeds: every fit of the paper, ranks, interval widths ------------------------


@pytest.fixture(scope="module")
def recht_fits():
    return recht2019.fit_recht2019(n_boot=100_000, seed=0)


def test_fit_recht2019_has_every_fit_with_the_right_models(recht_fits):
    strategies = ("matchedfrequency", "threshold0.7", "topimages")
    expected = {"cifar10": 34, "cifar10_balanced": 34, "imagenet_top1_matchedfrequency_all_linear": 67}
    for k in ("top1", "top5"):
        for s in strategies:
            expected[f"imagenet_{k}_{s}_cnn"] = 64
            expected[f"imagenet_{k}_{s}_all_probit"] = 67
    assert {k: f.n for k, f in recht_fits.items()} == expected
    assert all(recht_fits[k].scale == "probit" for k in expected if k.endswith("_probit"))
    assert all(recht_fits[k].scale == "linear" for k in expected if not k.endswith("_probit"))
    # the CNN fits are the fits of the tables without the three fv_* rows
    t = published.load_table("recht2019_imagenet_top5_threshold0.7")
    direct = linfit.fit_table(t[~t.model.str.startswith("fv_")], n_boot=10, seed=0)
    assert recht_fits["imagenet_top5_threshold0.7_cnn"].slope == pytest.approx(direct.slope, rel=1e-12)


def test_fit_recht2019_reproduces_the_printed_fits(recht_fits):
    """§3.3 (CIFAR-10, ImageNet top-1 MatchedFrequency) and Figure 12's caption (top-5 TopImages)."""
    ref = published.reported()["recht2019"]
    for key, printed in [
        ("cifar10", ref["cifar10_fit"]),
        ("imagenet_top1_matchedfrequency_cnn", ref["imagenet_top1_matchedfrequency_fit"]),
        ("imagenet_top5_topimages_cnn", ref["imagenet_top5_topimages_slope"]),
    ]:
        agree = recht2019.paper_agreement(recht_fits[key], printed)
        assert agree["slope"] <= 0.006, key
        assert agree["slope_ci"] <= 0.01, key
        if "intercept" in agree:
            assert agree["intercept"] <= 0.1 and agree["intercept_ci"] <= 0.5, key


def test_probit_fits_with_fisher_vectors_beat_the_linear_fit(recht_fits):
    """Figure 6: on all 67 models the probit line has smaller residuals and a much narrower band."""
    t = published.load_table("recht2019_imagenet_top1_matchedfrequency")
    lin, pro = (recht_fits[f"imagenet_top1_matchedfrequency_all_{s}"] for s in ("linear", "probit"))
    assert testbeds.line_residuals(pro, t)["rms"] < testbeds.line_residuals(lin, t)["rms"] / 2
    assert testbeds.widest_band(pro, t) < testbeds.widest_band(lin, t) / 3
    assert min(recht_fits[k].r for k in recht_fits if k.endswith("_all_probit")) > 0.998


def test_paper_agreement_refuses_probit_fits(recht_fits):
    with pytest.raises(ValueError, match="linear fits"):
        recht2019.paper_agreement(
            recht_fits["imagenet_top1_topimages_all_probit"], {"slope": 1, "slope_ci": [1, 1]}
        )


def test_clopper_pearson_widths_of_section_2_and_b1():
    """§2: n = 10,000 gives at most ±1% (95%) and ±2% (99.99%); App. B.1: 90% of 2,000 -> [88.6%, 91.3%]."""
    w95 = testbeds.clopper_pearson_max_halfwidth(10_000)
    w9999 = testbeds.clopper_pearson_max_halfwidth(10_000, alpha=1e-4)
    # the normal approximation at p = 1/2: 1.96 * 0.005 and 3.89 * 0.005
    assert w95 == pytest.approx(1.96 * 0.005, abs=2e-4) and w95 <= 0.01
    assert w9999 == pytest.approx(3.89 * 0.005, abs=3e-4) and w9999 <= 0.02
    low, high = linfit.clopper_pearson(1800, 2000)
    assert (round(100 * float(low), 1), round(100 * float(high), 1)) == (88.6, 91.3)
    # smaller sets, wider intervals; edge cases are one-sided
    assert testbeds.clopper_pearson_max_halfwidth(2000) > 2 * w95
    assert testbeds.clopper_pearson_max_halfwidth(1) == pytest.approx(0.975)
    with pytest.raises(ValueError, match="n must be at least 1"):
        testbeds.clopper_pearson_max_halfwidth(0)


def test_printed_intervals_are_reproduced_for_every_table():
    dev = recht2019.recht2019_interval_deviation(published.reported()["recht2019"]["test_set_sizes"])
    assert len(dev) == 9  # Table 11 at two sizes, Table 12, Tables 14-19
    assert max(max(v.values()) for v in dev.values()) <= 0.1 + 1e-9
    # a wrong size is caught: ImageNet's new-set bounds with n = 2,000 are far off
    t = published.load_table("recht2019_imagenet_top1_topimages")
    assert recht2019.clopper_pearson_deviation(t, 50_000, 2000)["new"] > 0.5


def test_rank_summary_uses_the_printed_ranks():
    t = published.load_table("recht2019_imagenet_top1_matchedfrequency")
    s = recht2019.rank_summary(t)
    assert s["spearman"] == pytest.approx(stats.spearmanr(t.orig_rank, t.new_rank)[0])
    assert s["max_abs_delta_rank"] == t.delta_rank.abs().max() == 5
    assert s["n"] == 67 and s["unchanged"] == int((t.delta_rank == 0).sum())
    # ranks recomputed from the rounded accuracies differ from the printed new ranks for 10 models
    recomputed = (-t.new_acc.to_numpy()).argsort(kind="stable").argsort() + 1
    assert (recomputed != t.new_rank.to_numpy()).sum() == 10
    cifar = recht2019.rank_summary(published.load_table("recht2019_cifar10"))
    assert 0.98 < cifar["spearman"] < 0.99  # not "above 0.99"
    with pytest.raises(ValueError, match="printed rank"):
        recht2019.rank_summary(t.drop(columns="new_rank"))
    with pytest.raises(ValueError, match="delta_rank"):
        recht2019.rank_summary(t.assign(delta_rank=0))


def test_rank_change_figure_plots_the_printed_ranks():
    import matplotlib

    matplotlib.use("Agg")
    from shifteval.viz import linear_fits

    t = published.load_table("recht2019_imagenet_top1_matchedfrequency")
    fig = linear_fits.table14_rank_change(t)
    points = fig.axes[0].collections[0].get_offsets()
    assert np.array_equal(np.asarray(points), t[["orig_rank", "new_rank"]].to_numpy(float))


def test_class_balanced_table_helps_weaker_models():
    """App. B.2.9: weaker models gain about 0.3 points on Table 12; the best model's drop is unchanged."""
    c = published.load_table("recht2019_cifar10")
    b = published.load_table("recht2019_cifar10_balanced")
    out = recht2019.paired_change(c, b)
    assert out["n_lower"] == 17
    assert out["lower_half"] > out["upper_half"] > 0
    assert out["lower_half"] == pytest.approx(0.388, abs=0.001)
    assert out["best_gap_main"] == out["best_gap_other"] == 2.9
    # identical tables change nothing
    same = recht2019.paired_change(c, c)
    assert same["lower_half"] == same["upper_half"] == 0
    with pytest.raises(ValueError, match="same models"):
        recht2019.paired_change(c, b.iloc[:-1])


def test_bootstrap_seed_spread_shrinks_with_more_replicates():
    t = published.load_table("recht2019_cifar10")
    small = testbeds.bootstrap_seed_spread(t, n_boot=500, seeds=range(8))
    large = testbeds.bootstrap_seed_spread(t, n_boot=20_000, seeds=range(8))
    assert large["slope_ci_sd"] < small["slope_ci_sd"] / 2
    assert large["slope_ci_width"] == pytest.approx(small["slope_ci_width"], rel=0.1)
    with pytest.raises(ValueError, match="at least 2 seeds"):
        testbeds.bootstrap_seed_spread(t, n_boot=10, seeds=[0])


def test_fit_columns_keys_and_line_residuals():
    acc = pd.DataFrame({"v1": [0.5, 0.6, 0.7, 0.8], "a": [0.4, 0.5, 0.6, 0.7], "b": [0.45, 0.6, 0.7, 0.85]})
    fits = testbeds.fit_columns(acc, "v1", ["a", "b"], n_boot=50)
    assert set(fits) == {("a", "linear"), ("a", "probit"), ("b", "linear"), ("b", "probit")}
    assert fits[("a", "linear")].slope == pytest.approx(1.0) and fits[
        ("a", "linear")
    ].intercept == pytest.approx(-0.1)
    table = pd.DataFrame({"orig_acc": [50.0, 60.0, 70.0, 80.0], "new_acc": [41.0, 49.0, 61.0, 69.0]})
    res = testbeds.line_residuals(fits[("a", "linear")], table)
    assert res["mean"] == pytest.approx(0.0) and res["rms"] == pytest.approx(1.0)
    assert list(testbeds.evenly_spaced_subset(acc["b"], 2)) == [0, 3]
    with pytest.raises(ValueError, match="k must be between"):
        testbeds.evenly_spaced_subset(acc["b"], 5)


def test_figure_12_and_13_draw_every_panel_with_the_right_models():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from shifteval.viz import linear_fits

    tables = {n: published.load_table(n) for n in published.list_tables()}
    fits = recht2019.fit_recht2019(n_boot=200, seed=0)
    fig12 = linear_fits.fig12_all_test_sets(tables, fits)
    fig13 = linear_fits.fig13_probit_all_models(tables, fits)
    for fig, fv_points in ((fig12, 0), (fig13, 3)):
        assert len(fig.axes) == 6
        for ax in fig.axes:
            fitted = [c for c in ax.containers if hasattr(c, "lines")]
            assert len(fitted[0].lines[0].get_xdata()) == 64  # the convolutional networks, with error bars
            hollow = [ln for ln in ax.lines if ln.get_label().startswith("Fisher vectors")]
            assert sum(len(ln.get_xdata()) for ln in hollow) == fv_points
        plt.close(fig)


def test_six_model_subsets_pin_the_slope_far_less():
    t = published.load_table("recht2019_cifar10")
    x, y = t.orig_acc / 100, t.new_acc / 100
    full = linfit.fit_table(t, n_boot=20_000, seed=0)
    w6 = testbeds.subset_slope_width(x, y, 6, n_subsets=10, seed=0)
    w34 = testbeds.subset_slope_width(x, y, 34, n_subsets=3, seed=0)
    assert w6 > 2 * np.ptp(full.slope_ci)
    assert w34 == pytest.approx(np.ptp(full.slope_ci), rel=0.15)  # all models: the full fit's interval
    with pytest.raises(ValueError, match="k must be between 3"):
        testbeds.subset_slope_width(x, y, 2)


def test_bootstrap_skips_resamples_with_one_distinct_x():
    """Exactly linear data: every defined bootstrap slope is the true slope 1.2. A resample drawing one model
    three times has x variance 0 up to rounding (~1e-32) and must count as undefined, not as slope 0 or 1."""
    fit = linfit.fit_linear([0.7, 0.8, 0.9], [0.6, 0.72, 0.84], n_boot=2000, seed=0, scale="linear")
    assert fit.slope == pytest.approx(1.2)
    assert fit.slope_ci[0] == pytest.approx(1.2) and fit.slope_ci[1] == pytest.approx(1.2)


@pytest.mark.parametrize("slope", [0.8, 1.7])
def test_rounding_spread_matches_the_first_order_variance_of_an_offset(slope):
    # uniform ±h noise on x and y (variance h²/3): to first order the offset's variance is
    # σ²(1 + a²)(1/n + x̄²/Sxx), the textbook OLS variance with the x noise carried through the slope
    x = np.linspace(70.0, 95.0, 30)
    table = pd.DataFrame({"orig_acc": x, "new_acc": slope * x - 60})
    got = testbeds.rounding_spread(table, step=0.1, n=20_000, seed=1)
    var = (0.05**2 / 3) * (1 + slope**2) * (1 / len(x) + x.mean() ** 2 / ((x - x.mean()) ** 2).sum())
    assert got["intercept_sd"] == pytest.approx(np.sqrt(var), rel=0.05)
    # the offset is extrapolated far from the models: it moves more than any accuracy can (±0.05)
    assert got["intercept_sd"] > 0.05 > got["slope_sd"]


def test_rounding_spread_refuses_a_step_that_is_not_positive():
    table = pd.DataFrame({"orig_acc": [70.0, 80.0, 90.0], "new_acc": [60.0, 70.0, 85.0]})
    with pytest.raises(ValueError, match="step > 0"):
        testbeds.rounding_spread(table, step=0)


def test_rounding_interval_spread_moves_the_endpoints_about_as_much_as_the_slope():
    # the endpoints of a percentile interval shift with the refit line: their spread under rounding is of the
    # order of the slope's own (rounding_spread), not the Monte Carlo error of the bootstrap
    t = published.load_table("recht2019_cifar10")
    ends = testbeds.rounding_interval_spread(t, n=100, n_boot=5000, seed=0)
    line = testbeds.rounding_spread(t, n=2000, seed=0)
    for sd in ends["slope_ci_sd"]:
        assert 0.5 * line["slope_sd"] < sd < 2 * line["slope_sd"]
    for sd in ends["intercept_ci_sd"]:
        assert 0.5 * line["intercept_sd"] < sd < 2 * line["intercept_sd"]
    # the same resamples for every refit: with no rounding noise to add, the endpoints would not move
    same = testbeds.rounding_interval_spread(t, step=1e-9, n=5, n_boot=500, seed=0)
    assert max(same["slope_ci_sd"]) < 1e-6
    with pytest.raises(ValueError, match="n_boot >= 100"):
        testbeds.rounding_interval_spread(t, n_boot=10)


def test_interval_agreement_on_the_paper_fits():
    """§3.3's printed intervals against ours: the slope endpoints are ours rounded outward (lower ends down,
    upper ends up); the tolerance is half the printed digit plus twice the combined spread."""
    paper = published.reported()["recht2019"]["cifar10_fit"]
    fit = linfit.fit_table(published.load_table("recht2019_cifar10"), n_boot=20_000, seed=0)
    rounding = {"slope_ci_sd": [0.003, 0.003], "intercept_ci_sd": [0.3, 0.3]}
    mc = {"slope_ci_sd": 0.0004, "intercept_ci_sd": 0.04}
    t = recht2019.interval_agreement(fit, paper, rounding, mc)
    assert t.loc["slope lower", "tolerance"] == pytest.approx(0.005 + 2 * np.hypot(0.003, 0.0004))
    assert t.loc["offset upper", "tolerance"] == pytest.approx(0.05 + 2 * np.hypot(0.3, 0.04))
    assert t["difference"].tolist() == pytest.approx((t["ours"] - t["paper"]).tolist())
    assert t.loc[["slope lower", "slope upper"], "outward"].tolist() == paper["slope_ci"]
    assert bool(t.within.all())
    tight = recht2019.interval_agreement(fit, paper, rounding, mc, n_sd=0)
    assert not tight.loc["slope lower", "within"]  # 1.64 against the printed 1.63: beyond the rounding alone
    with pytest.raises(ValueError, match="n_sd"):
        recht2019.interval_agreement(fit, paper, rounding, mc, n_sd=-1)


def test_simulated_line_spread_covers_the_fit_of_one_simulation():
    """§5.3: a testbed simulated with one seed lies within a few SD (over other seeds) of the analytic line."""
    skills = np.linspace(-1.5, 2.5, 20)
    u, v = linfit.gaussian_difficulty_line(0.0, 1.0, 0.5, 0.8)
    sd = linfit.simulated_line_spread(skills, 0.0, 1.0, 0.5, 0.8, n_images=5000, seeds=range(1, 11))
    a1, a2 = linfit.simulate_gaussian_difficulty(skills, 0.0, 1.0, 0.5, 0.8, n_images=5000, seed=0)
    fit = stats.linregress(linfit.transform(a1, "probit"), linfit.transform(a2, "probit"))
    assert abs(fit.slope - u) < 4 * sd["slope_sd"] and abs(fit.intercept - v) < 4 * sd["intercept_sd"]
    bigger = linfit.simulated_line_spread(skills, 0.0, 1.0, 0.5, 0.8, n_images=500, seeds=range(1, 11))
    assert bigger["slope_sd"] > sd["slope_sd"]  # smaller test sets scatter more
    with pytest.raises(ValueError, match="at least 2 seeds"):
        linfit.simulated_line_spread(skills, 0.0, 1.0, 0.5, 1.0, seeds=[0])
