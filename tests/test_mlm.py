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
        (np.array([[2.0, -1.0]]), [0], np.eye(2), "non-negative"),
        (np.array([[0.5, 0.2]]), [0], np.eye(2), "sums to 0.7"),
        (np.array([0.5, 0.5]), [0], np.eye(2), r"\(N, K\)"),
        (np.array([[0.5, 0.5], [0.4, 0.6]]), [0, 2], np.eye(2), "labels must lie in 0..1"),
        (np.array([[0.5, 0.5], [0.4, 0.6]]), [0, 1, 1], np.eye(2), "shape"),
        (np.array([[0.5, 0.5], [0.4, 0.6]]), [0, 1], np.eye(3)[:, :2], "3 centroids"),
        (np.array([[0.5, 0.5], [0.4, 0.6]]), [0, 1], np.eye(3), r"\(K, 2\)"),
        (np.array([[0.5, 0.5], [0.4, 0.6]]), [0, 0], np.eye(2), r"class\(es\) \[1\] have no example"),
        (np.array([[0.5, 0.5], [0.4, 0.6]]), [0.0, 1.0], np.eye(2), "integers"),
    ],
)
def test_bad_input(probs, labels, centroids, message):
    with pytest.raises(ValueError, match=message):
        mlm.misclassification_likelihood_matrix(probs, np.asarray(labels), centroids)


def test_centroids_need_a_correct_example_per_class():
    with pytest.raises(ValueError, match=r"class\(es\) \[1\] have no correctly classified"):
        mlm.initial_centroids(np.array([[0.9, 0.1], [0.8, 0.2]]), np.array([0, 1]))
