"""The Misclassification Likelihood Matrix: invariants, the equations on hand-made cases, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shifteval import mlm

K = 4


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _data(seed, n=200, k=K, sharp=3.0):
    rng = np.random.default_rng(seed)
    labels = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), labels] += sharp
    return _softmax(logits), labels


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 8))
def test_mlm_invariants(seed, k):
    probs, labels = _data(seed, n=120, k=k)
    centroids = (
        mlm.initial_centroids(probs, labels)
        if all(np.any((probs.argmax(1) == labels) & (labels == c)) for c in range(k))
        else np.eye(k)
    )
    m = mlm.misclassification_likelihood_matrix(probs, labels, centroids)
    assert m.shape == (k, k)
    assert np.all(m >= 0) and np.allclose(np.diag(m), 0) and np.allclose(m.sum(axis=1), 1)


def test_equations_on_a_hand_computed_case():
    centroids = np.eye(3)
    probs = np.array([[0.8, 0.2, 0.0], [0.6, 0.0, 0.4], [0.1, 0.9, 0.0], [0.0, 0.2, 0.8]])
    labels = np.array([0, 0, 1, 2])
    d = mlm.nearest_distance_matrix(probs, labels, centroids)
    # class 0 to centroid 1: min(|(0.8,-0.8,0)|, |(0.6,-1,0.4)|) = 0.8·√2
    assert d[0, 1] == pytest.approx(0.8 * np.sqrt(2))
    assert d[0, 2] == pytest.approx(min(np.linalg.norm([0.8, 0.2, -1]), np.linalg.norm([0.6, 0, -0.6])))
    m = mlm.misclassification_likelihood_matrix(probs, labels, centroids)
    inv = 1 / np.array([d[0, 1], d[0, 2]])
    assert m[0, 1:] == pytest.approx(inv / inv.sum())
    assert np.isnan(d[0, 0]) and m[0, 0] == 0


def test_initial_centroids_use_only_correct_examples():
    probs = np.array([[0.9, 0.1], [0.7, 0.3], [0.6, 0.4], [0.2, 0.8]])
    labels = np.array([0, 0, 1, 1])  # the third is misclassified
    c = mlm.initial_centroids(probs, labels)
    assert c == pytest.approx(np.array([[0.8, 0.2], [0.2, 0.8]]))


def test_refined_centroids_barely_move_for_separated_classes():
    probs, labels = _data(1, n=400, sharp=8.0)
    init = mlm.initial_centroids(probs, labels)
    refined, shift = mlm.refine_centroids(probs, labels, init)
    assert shift.shape == (K,) and np.all(shift < 1e-10)
    assert refined == pytest.approx(init)


def test_level_matrices_mean_and_std():
    (p1, y1), (p2, y2) = _data(2), _data(3, sharp=1.0)
    c = np.eye(K)
    mats, mean, std = mlm.level_matrices([p1, p2], [y1, y2], c)
    assert mats.shape == (2, K, K)
    assert mean == pytest.approx((mats[0] + mats[1]) / 2)
    assert std == pytest.approx(np.abs(mats[0] - mats[1]) / 2)


def test_top_confusions_and_rank_agreement():
    m = np.array([[0, 0.7, 0.3], [0.5, 0, 0.5], [0.1, 0.9, 0]])
    top = mlm.top_confusions(m, 2)
    assert top[["true", "confused_with"]].values.tolist() == [[2, 1], [0, 1]]
    rho, _ = mlm.rank_agreement(m, m * 2)
    assert rho == pytest.approx(1.0)
    rates = mlm.confusion_rates([0, 0, 1, 2], [0, 1, 1, 1], 3)
    assert rates.tolist() == [[0.5, 0.5, 0], [0, 1, 0], [0, 1, 0]]


@pytest.mark.parametrize(
    ("probs", "labels", "centroids", "message"),
    [
        (np.array([[2.0, -1.0]]), [0], np.eye(2), r"must hold probabilities in \[0, 1\]; found 2"),
        (np.array([[0.5, 0.2]]), [0], np.eye(2), "row 0 sums to 0.7000"),
        (np.array([0.5, 0.5]), [0], np.eye(2), "non-empty N×K"),
        (np.array([[0.5, 0.5], [0.4, 0.6]]), [0, 2], np.eye(2), r"'labels' must lie in \[0, 2\); found 2"),
        (np.array([[0.5, 0.5], [0.4, 0.6]]), [0, 1, 1], np.eye(2), "must have 2 entries"),
        (np.array([[0.5, 0.5], [0.4, 0.6]]), [0, 1], np.eye(3)[:, :2], "3 centroids"),
        (np.array([[0.5, 0.5], [0.4, 0.6]]), [0, 1], np.eye(3), r"\(K, 2\)"),
        (np.array([[0.5, 0.5], [0.4, 0.6]]), [0, 0], np.eye(2), r"class\(es\) \[1\] have no example"),
        (np.array([[0.5, 0.5], [0.4, 0.6]]), [0.0, 1.0], np.eye(2), "1-D integer array"),
    ],
)
def test_bad_input(probs, labels, centroids, message):
    with pytest.raises(ValueError, match=message):
        mlm.misclassification_likelihood_matrix(probs, np.asarray(labels), centroids)


def test_centroids_need_a_correct_example_per_class():
    with pytest.raises(ValueError, match=r"class\(es\) \[1\] have no correctly classified"):
        mlm.initial_centroids(np.array([[0.9, 0.1], [0.8, 0.2]]), np.array([0, 1]))


def _aggregation_case():
    centroids = np.eye(3)
    probs = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    return probs, np.array([0, 0, 0, 1, 2]), centroids


def test_min_mean_max_aggregation_differ_on_a_hand_matrix():
    probs, labels, centroids = _aggregation_case()
    # distances of the three class-0 outputs to centroid 1: √2, √0.5, √1.5
    to1 = np.array([np.sqrt(2), np.sqrt(0.5), np.sqrt(1.5)])
    to2 = np.array([np.sqrt(2), np.sqrt(1.5), np.sqrt(0.5)])
    d = {
        a: mlm.nearest_distance_matrix(probs, labels, centroids, aggregate=a) for a in ("min", "mean", "max")
    }
    assert d["min"][0, 1] == pytest.approx(to1.min())
    assert d["mean"][0, 1] == pytest.approx(to1.mean())
    assert d["max"][0, 1] == pytest.approx(to1.max())
    assert d["mean"][0, 2] == pytest.approx(to2.mean())
    # row 1 and row 2 have one example each: the three aggregations agree there
    for a in ("mean", "max"):
        assert np.allclose(d[a][1:], d["min"][1:], equal_nan=True)
    # a tilted case where the MLM rows differ between the aggregations
    probs2 = np.array([[0.9, 0.1, 0.0], [0.2, 0.8, 0.0], [0.6, 0.0, 0.4], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    m = {
        a: mlm.misclassification_likelihood_matrix(probs2, labels, centroids, a)
        for a in ("min", "mean", "max")
    }
    assert not np.allclose(m["min"][0], m["mean"][0]) and not np.allclose(m["mean"][0], m["max"][0])
    assert m["min"][0, 1] > m["min"][0, 2]  # the nearest 0 → 1 output (0.2, 0.8) dominates under min
    with pytest.raises(ValueError, match="aggregate"):
        mlm.nearest_distance_matrix(probs, labels, centroids, aggregate="median")


def test_nearest_distance_matrix_in_chunks_equals_one_pass():
    probs, labels = _data(3, n=500)
    c = mlm.initial_centroids(probs, labels)
    for a in ("min", "mean", "max"):
        one = mlm.nearest_distance_matrix(probs, labels, c, a)
        chunked = mlm.nearest_distance_matrix(probs, labels, c, a, chunk=37)
        assert np.allclose(one, chunked, equal_nan=True)


def test_refine_centroids_moves_and_clusters_only_what_it_claims():
    # class 0: two confident outputs and one correct but ambiguous output nearer class 1's mean
    probs = np.array([[0.95, 0.05], [0.9, 0.1], [0.52, 0.48], [0.1, 0.9], [0.05, 0.95], [0.4, 0.6]])
    labels = np.array([0, 0, 0, 1, 1, 0])  # the last is a misclassified 0
    init = mlm.initial_centroids(probs, labels)
    assert init[0] == pytest.approx(probs[:3].mean(0))
    refined, shift = mlm.refine_centroids(probs, labels, subset="correct")
    # (0.52, 0.48) is nearer class 0's mean (0.79, 0.21) than class 1's (0.075, 0.925), so k-means on
    # the correct outputs reproduces the class means; with the misclassified (0.4, 0.6) included, that
    # point joins cluster 1 and centroid 1 moves to the mean of three outputs.
    assert shift == pytest.approx([0, 0], abs=1e-12)
    refined_all, shift_all = mlm.refine_centroids(probs, labels, subset="all")
    assert shift_all[0] == pytest.approx(0, abs=1e-12) and shift_all[1] > 0.1
    assert refined_all[1] == pytest.approx(probs[[3, 4, 5]].mean(0))
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=2, init=init, n_init=1).fit(probs)
    assert refined_all == pytest.approx(km.cluster_centers_)
    # moving under "correct": an ambiguous correct output nearer the other class's mean
    probs2 = np.array([[0.99, 0.01], [0.99, 0.01], [0.55, 0.45], [0.3, 0.7], [0.35, 0.65]])
    labels2 = np.array([0, 0, 0, 1, 1])  # means 0.843 and 0.325: the 0.55 output is nearer class 1's
    refined2, shift2 = mlm.refine_centroids(probs2, labels2)
    assert shift2[0] > 0.1 and shift2[1] > 0.05
    assert refined2[0] == pytest.approx(probs2[:2].mean(0)) and refined2[1] == pytest.approx(
        probs2[2:].mean(0)
    )
    with pytest.raises(ValueError, match="subset"):
        mlm.refine_centroids(probs, labels, subset="some")


def test_calibration_helpers():
    t = mlm.calibration_targets(0.9846)
    assert t[0] == pytest.approx(0.9761) and t[-1] == pytest.approx(0.4883)
    assert np.allclose(np.diff(t), np.diff(t)[0])  # linear
    assert mlm.calibration_targets(0.5)[-1] == pytest.approx(0.5 * 0.4883 / 0.9846)
    fit, cal = mlm.calibration_split(100, 20, seed=1)
    assert (
        len(fit) == 80
        and len(cal) == 20
        and not set(fit) & set(cal)
        and set(fit) | set(cal) == set(range(100))
    )
    with pytest.raises(ValueError, match="n_calibration"):
        mlm.calibration_split(10, 10)
    a = np.arange(24, dtype=np.float32).reshape(6, 2, 2)
    assert mlm.count_shared_images(a[:3], a[2:]) == 1 and mlm.count_shared_images(a[:2], a[2:]) == 0


def test_same_weights():
    import torch

    from shifteval.nets import paper_cnn

    torch.manual_seed(0)
    a = paper_cnn(16)
    torch.manual_seed(0)
    b = paper_cnn(16)
    torch.manual_seed(1)
    c = paper_cnn(16)
    assert mlm.same_weights(a, a) and mlm.same_weights(a, b) and not mlm.same_weights(a, c)


def test_row_rank_pooled_and_confusion_summary():
    m = np.array([[0, 0.5, 0.3, 0.2], [0.1, 0, 0.6, 0.3], [0.3, 0.3, 0, 0.4], [0.2, 0.2, 0.6, 0]])
    assert mlm.row_rank(m, 0, 1) == 1 and mlm.row_rank(m, 0, 3) == 3 and mlm.row_rank(m, 2, 0) == 2
    with pytest.raises(ValueError):
        mlm.row_rank(m, 1, 1)
    probs = {("a", 1): np.ones((2, 3)) / 3, ("a", 2): np.eye(3)[:2], ("b", 1): np.eye(3)[1:]}
    p, y = mlm.pooled(probs, [0, 1], ["a"])
    assert p.shape == (4, 3) and y.tolist() == [0, 1, 0, 1]
    cm = np.diag([10] * 10)
    cm[8, 0], cm[8, 6], cm[3, 5] = 3, 1, 2
    text = mlm.confusion_summary(cm)
    assert (
        "8 the most (4)" in text
        and "8 is mostly taken for 0, 6" in text
        and "3 is mostly taken for 5" in text
    )


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=3, max_value=12), st.integers(min_value=0, max_value=10_000))
def test_partial_rank_agreement_equals_the_correlation_of_rank_residuals(k, seed):
    # the first-order partial Spearman correlation is the Pearson correlation of the rank residuals
    # after regressing both ranks on the control's ranks
    from scipy.stats import rankdata

    rng = np.random.default_rng(seed)
    control = rng.random((k, k))
    m, rates = control + rng.random((k, k)), control + rng.random((k, k))
    rho, p = mlm.partial_rank_agreement(m, control, rates)
    off = ~np.eye(k, dtype=bool)
    rx, ry, rz = (rankdata(a[off]) for a in (m, rates, control))
    design = np.column_stack([np.ones_like(rz), rz])
    res = [v - design @ np.linalg.lstsq(design, v, rcond=None)[0] for v in (rx, ry)]
    if np.isnan(rho):  # the control ranks one of them perfectly: no residual is left to correlate
        assert min(np.abs(r).max() for r in res) < 1e-9 and np.isnan(p)
    else:
        assert rho == pytest.approx(np.corrcoef(*res)[0, 1], abs=1e-9)
        assert 0 <= p <= 1


def test_per_perturbation_profiles_keep_the_papers_statements_and_average():
    from shifteval.corruptions import CORRUPTIONS

    profiles = {n: mlm.paper_profile(n) for n in CORRUPTIONS}
    assert profiles["brightness"] == (0.9852, 0.50)  # "from 0.99 at intensity 1 to 0.50", the 98.52% maximum
    assert profiles["contrast"][1] == profiles["fog"][1] == 0.50 and profiles["pixelation"][1] == 0.3632
    first, last = np.array(list(profiles.values())).mean(0)
    assert first == pytest.approx(0.9761) and last == pytest.approx(0.4883)  # the paper's averages (§4.4)
    assert max(p[0] for p in profiles.values()) == 0.9852 and min(p[1] for p in profiles.values()) == 0.3632
    own = mlm.calibration_targets(0.9846, "pixelation")
    assert own[0] == pytest.approx(profiles["pixelation"][0]) and own[-1] == pytest.approx(0.3632)
    assert np.allclose(np.diff(own), np.diff(own)[0])
    with pytest.raises(ValueError, match="unknown perturbation 'blurr'"):
        mlm.calibration_targets(0.9, "blurr")


def test_paper_statements_rescale_to_the_papers_clean_accuracy():
    import pandas as pd

    rows = [np.linspace(0.9, 0.5, 10), np.linspace(0.9, 0.2, 10), np.linspace(0.9, 0.3, 10)]
    acc = pd.DataFrame(rows, index=["brightness", "pixelation", "snow"], columns=range(1, 11))
    out = mlm.paper_statements(acc, clean=0.9846 / 2)  # everything doubles
    assert out["brightness"] == pytest.approx((1.8, 1.0)) and out["min"] == pytest.approx(
        (0.4, "pixelation", 10)
    )
    # "others" are the perturbations the paper states nothing about: snow, not the targeted pixelation
    assert out["resilient_10"] == pytest.approx(1.0) and out["others_10"] == pytest.approx(0.6)
    assert out["harsh_10"] == pytest.approx({"pixelation": 0.4})
    assert out["rank_10"] == {"brightness": 1, "pixelation": 3, "snow": 2}
    with pytest.raises(ValueError, match="levels 1-10"):
        mlm.paper_statements(acc.iloc[:, :5], 0.9)
    with pytest.raises(ValueError, match=r"clean must lie in \(0, 1\]"):
        mlm.paper_statements(acc, 0.0)


def test_most_frequent_error_likeliest_pairs_and_mirrored_distances():
    """The readings behind the chapter's findings of §4.5, §3.4 and §4.3, on hand-made matrices."""
    cm = np.array([[50, 3, 1], [2, 40, 9], [9, 0, 30]])
    assert mlm.most_frequent_error(cm) == (1, 2, 9)  # ties (1, 2) and (2, 0): the first in row order
    with pytest.raises(ValueError, match="square"):
        mlm.most_frequent_error(np.ones((2, 3)))
    m = np.array([[0, 0.8, 0.2], [0.1, 0, 0.9], [0.6, 0.4, 0]])  # likeliest: (1, 2), (0, 1)
    rates = [np.array([[0, 0.3, 0.0], [0.1, 0, 0.5], [0.1, 0.1, 0]])] * 2
    out = mlm.likeliest_pairs_rates(m, rates, n=2)
    assert out.index.tolist() == [1, 2]
    assert out.loc[1].to_dict() == pytest.approx({"likeliest": 0.4, "others": 0.075})
    with pytest.raises(ValueError, match="n must lie"):
        mlm.likeliest_pairs_rates(m, rates, n=6)
    with pytest.raises(ValueError, match="level 1"):
        mlm.likeliest_pairs_rates(m, [np.zeros((2, 2))], n=2)
    probs = np.array([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]])
    dist = np.array([[0.9, 0.2, 0.4], [0.3, 0.1, 0.9]])  # nearest: {1, 2} and {1, 0}
    assert mlm.confidence_mirrors_distance(probs, dist).tolist() == [True, False]
    assert mlm.confidence_mirrors_distance(probs, dist, k=1).tolist() == [True, False]
    with pytest.raises(ValueError, match="k must lie"):
        mlm.confidence_mirrors_distance(probs, dist, k=4)
