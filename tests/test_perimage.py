"""Per-image analyses on hand-computable correctness matrices, and on the shipped ImageNetV2 table."""

import numpy as np
import pandas as pd
import pytest

from shifteval import linfit
from shifteval.datasets import released
from shifteval.linfit import perimage

ORIG, NEW = perimage.ORIGINAL, perimage.MATCHED_FREQUENCY


def corr_of(x1, x2, y1, y2, models=None):
    x1, x2 = np.asarray(x1, bool), np.asarray(x2, bool)
    models = tuple(models or [f"m{i}" for i in range(len(x1))])
    return released.Correctness(
        models, (ORIG, NEW), {ORIG: x1, NEW: x2}, {ORIG: x1.copy(), NEW: x2.copy()},
        {ORIG: np.asarray(y1, np.int64), NEW: np.asarray(y2, np.int64)},
    )  # fmt: skip


@pytest.fixture
def small():
    # 3 models, original: 4 images (classes 0,0,1,1), new: 4 images (classes 0,0,1,1)
    x1 = [[1, 1, 1, 1], [1, 1, 1, 0], [1, 0, 1, 0]]
    x2 = [[1, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]]
    return corr_of(x1, x2, [0, 0, 1, 1], [0, 0, 1, 1])


def test_recompute_table_by_hand(small):
    t = perimage.recompute_table(small, NEW)
    assert t.orig_acc.tolist() == [100.0, 75.0, 50.0] and t.new_acc.tolist() == [75.0, 25.0, 0.0]
    assert t.gap.tolist() == [25.0, 50.0, 50.0]
    assert t.orig_rank.tolist() == [1, 2, 3] and t.new_rank.tolist() == [1, 2, 3]
    assert (t.orig_ci_low <= t.orig_acc).all() and (t.orig_ci_high >= t.orig_acc).all()
    assert t.orig_ci_high[0] == 100.0 and t.new_ci_low[2] == 0.0  # Clopper-Pearson at k = n and k = 0


def test_per_class_accuracy_and_drops(small):
    acc = perimage.per_class_accuracy(small, ORIG, n_classes=3)
    assert acc.loc["m2"].tolist()[:2] == [0.5, 0.5] and acc[2].isna().all()  # class 2 has no images
    drops = perimage.per_class_drops(small)
    assert list(drops.columns) == [0, 1]  # the empty class is dropped
    assert drops.loc["m0"].tolist() == [0.0, 50.0] and drops.loc["m1"].tolist() == [50.0, 50.0]
    assert drops.loc["m2"].tolist() == [50.0, 50.0]


def test_drop_consistency_invariants():
    rng = np.random.default_rng(0)
    base = rng.normal(size=20)
    same = perimage.drop_consistency(pd.DataFrame([base, 2 * base + 1, base**3]))
    assert same["mean_spearman"] == pytest.approx(1.0) and same["min_spearman"] == pytest.approx(1.0)
    opposite = perimage.drop_consistency(pd.DataFrame([base, -base]))
    assert opposite["mean_spearman"] == pytest.approx(-1.0)
    all_drop = perimage.drop_consistency(pd.DataFrame(np.abs(rng.normal(size=(10, 5))) + 1))
    assert all_drop["frac_classes_drop_most"] == 1.0 and all_drop["frac_classes_gain_most"] == 0.0
    # a class drops "for most" only if >= 90% of models drop: 9 of 10 yes, 8 of 10 no
    d = np.ones((10, 2))
    d[:1, 0] = -1
    d[:2, 1] = -1
    assert perimage.drop_consistency(pd.DataFrame(d))["frac_classes_drop_most"] == 0.5
    with pytest.raises(ValueError, match="share"):
        perimage.drop_consistency(pd.DataFrame(d), share=0)
    with pytest.raises(ValueError, match="models × classes"):
        perimage.drop_consistency(pd.DataFrame([[1.0, np.nan], [1.0, 2.0]]))


def test_always_wrong_by_hand(small):
    t = perimage.always_wrong(small)
    assert t.loc[ORIG, ["images", "all_wrong", "all_right"]].tolist() == [4, 0, 2]
    assert t.loc[NEW, ["all_wrong", "all_right", "models"]].tolist() == [1, 0, 3]
    assert t.loc[NEW, "all_wrong_frac"] == 0.25


def test_resampled_lines_without_resampling_is_the_plain_fit():
    rng = np.random.default_rng(1)
    p = np.linspace(0.3, 0.9, 6)[:, None]
    x1, x2 = rng.random((6, 200)) < p, rng.random((6, 150)) < p - 0.2
    ident = np.arange(6)[None, :]
    for scale in ("linear", "probit"):
        s, i = perimage.resampled_lines(x1, x2, ident, np.ones((1, 200)), np.ones((1, 150)), scale)
        fit = linfit.fit_linear(x1.mean(1), x2.mean(1), scale=scale, n_boot=1)
        assert s[0] == pytest.approx(fit.slope) and i[0] == pytest.approx(fit.intercept)
    # weight 2 on the first half of the images and 0 on the rest = fitting the first half
    half = np.r_[np.full(100, 2), np.zeros(100)][None, :]
    s3, _ = perimage.resampled_lines(x1, x2, ident, half, np.ones((1, 150)), "linear")
    fit_half = linfit.fit_linear(x1[:, :100].mean(1), x2.mean(1), n_boot=1)
    assert s3[0] == pytest.approx(fit_half.slope)
    # repeating a model twice in a replicate weighs it twice
    rep = np.array([[0, 0, 1, 2, 3, 4]])
    s4, _ = perimage.resampled_lines(x1, x2, rep, np.ones((1, 200)), np.ones((1, 150)), "linear")
    a1, a2 = x1.mean(1)[rep[0]], x2.mean(1)[rep[0]]
    assert s4[0] == pytest.approx(np.polyfit(a1, a2, 1)[0])


def _loop(x1, x2, n_boot, rng, scale):
    """Reference: one replicate at a time, drawing in the same order as the vectorised version."""
    m, n1, n2 = x1.shape[0], x1.shape[1], x2.shape[1]
    out = np.empty((n_boot, 2))
    for b in range(n_boot):
        mi = rng.integers(0, m, size=(1, m))[0]
        i1, i2 = rng.integers(0, n1, size=(1, n1))[0], rng.integers(0, n2, size=(1, n2))[0]
        a1, a2 = x1[:, i1].mean(1)[mi], x2[:, i2].mean(1)[mi]
        out[b] = np.polyfit(linfit.transform(a1, scale), linfit.transform(a2, scale), 1)
    return out[:, 0], out[:, 1]


def test_two_level_bootstrap_matches_a_loop_on_the_same_draws():
    rng = np.random.default_rng(2)
    p = np.linspace(0.4, 0.95, 8)[:, None]
    x1, x2 = rng.random((8, 300)) < p, rng.random((8, 100)) < p - 0.1
    fast = perimage.two_level_bootstrap(x1, x2, 30, np.random.default_rng(5), "probit", chunk=1)
    slow = _loop(x1, x2, 30, np.random.default_rng(5), "probit")
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-6)
    np.testing.assert_allclose(fast[1], slow[1], rtol=1e-6, atol=1e-9)
    # chunking changes the stream, not the distribution's support; same seed, same answer
    a = perimage.two_level_bootstrap(x1, x2, 50, np.random.default_rng(5), "probit", chunk=7)
    b = perimage.two_level_bootstrap(x1, x2, 50, np.random.default_rng(5), "probit", chunk=7)
    assert np.array_equal(a[0], b[0])


def test_bootstrap_comparison_on_the_shipped_table():
    corr = released.imagenetv2_correctness()
    t = perimage.bootstrap_comparison(corr, n_boot=200, seed=0)
    assert list(t.index) == ["models", "models+images"] and (t.n_models == 64).all()  # no Fisher vectors
    m, mi = t.loc["models"], t.loc["models+images"]
    assert m.slope == mi.slope and m.slope_low < m.slope < m.slope_high
    # resampling images adds noise: the interval can only widen (on these data, clearly)
    assert mi.slope_high - mi.slope_low > m.slope_high - m.slope_low
    assert mi.intercept_high - mi.intercept_low > m.intercept_high - m.intercept_low
    pd.testing.assert_frame_equal(t, perimage.bootstrap_comparison(corr, n_boot=200, seed=0))


def test_validation(small):
    with pytest.raises(ValueError, match="n_boot"):
        perimage.bootstrap_comparison(small, n_boot=0)
    with pytest.raises(ValueError, match="unknown"):
        perimage.bootstrap_comparison(small, models=["m0", "m1", "zz"])
    with pytest.raises(ValueError, match="not in the correctness table"):
        perimage.recompute_table(small, "imagenetv2-a-44")
    with pytest.raises(ValueError, match="top must be 1 or 5"):
        perimage.always_wrong(small, top=3)
    with pytest.raises(ValueError, match="missing from the correctness table"):
        perimage.compare_with_paper(small)


def test_shipped_table_findings():
    corr = released.imagenetv2_correctness()
    wrong = perimage.always_wrong(corr)
    assert (wrong.all_wrong > 0).all()  # every test set has images no model gets right
    drops = perimage.per_class_drops(corr)
    assert drops.shape == (67, 1000)
    summary = perimage.drop_consistency(drops)
    assert 0 < summary["mean_spearman"] < 1
    assert summary["frac_classes_mean_drop"] > 0.5  # the drop is spread over most classes
