"""Matched evaluation (Anzaku et al.): invariants, equivalence with the pseudocode, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from shifteval import matching

EPS_VALUES = st.sampled_from([0.005, 0.05, 0.2])


@st.composite
def prediction_sets(draw):
    n_src = draw(st.integers(1, 40))
    n_tgt = draw(st.integers(1, 40))
    k = draw(st.integers(1, 4))
    # probabilities on a coarse grid make exact ties and boundary cases |Δp| == ε frequent
    grid = st.integers(0, 20).map(lambda v: v / 20)
    src_pred = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n_src, max_size=n_src)))
    tgt_pred = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n_tgt, max_size=n_tgt)))
    src_conf = np.array(draw(st.lists(grid, min_size=n_src, max_size=n_src)))
    tgt_conf = np.array(draw(st.lists(grid, min_size=n_tgt, max_size=n_tgt)))
    return src_pred, src_conf, tgt_pred, tgt_conf


def _candidates(src_pred, src_conf, p_pred, p_conf, unused, eps, by):
    ok = unused & (np.abs(src_conf - p_conf) <= eps)
    if by == "label_and_prob":
        ok &= src_pred == p_pred
    return ok


@given(prediction_sets(), EPS_VALUES, st.sampled_from(matching.METHODS), st.integers(0, 2**16))
@settings(max_examples=300, deadline=None)
def test_invariants(sets, eps, by, seed):
    src_pred, src_conf, tgt_pred, tgt_conf = sets
    m = matching.match_predictions(src_pred, src_conf, tgt_pred, tgt_conf, eps=eps, by=by, seed=seed)
    s, t, u = m.source_index, m.target_index, m.unmatched_target_index
    # counts add up, and every target is either matched or unmatched, once
    assert len(s) == len(t)
    assert sorted(np.concatenate([t, u]).tolist()) == list(range(len(tgt_pred)))
    # no source is used twice
    assert len(set(s.tolist())) == len(s)
    # matched pairs satisfy the criterion
    assert np.all(np.abs(src_conf[s] - tgt_conf[t]) <= eps)
    if by == "label_and_prob":
        assert np.all(src_pred[s] == tgt_pred[t])
    # every unmatched target truly had no unused candidate when its turn came (replayed in order)
    used_before = np.zeros(len(src_pred), dtype=bool)
    pair = dict(zip(t.tolist(), s.tolist()))
    for ti in range(len(tgt_pred)):
        if ti in pair:
            assert _candidates(src_pred, src_conf, tgt_pred[ti], tgt_conf[ti], ~used_before, eps, by)[
                pair[ti]
            ]
            used_before[pair[ti]] = True
        else:
            assert not _candidates(
                src_pred, src_conf, tgt_pred[ti], tgt_conf[ti], ~used_before, eps, by
            ).any()
    assert m.fraction_unmatched == pytest.approx(len(u) / len(tgt_pred))


@given(prediction_sets(), EPS_VALUES, st.sampled_from(matching.METHODS), st.integers(0, 2**16))
@settings(max_examples=100, deadline=None)
def test_reference_satisfies_the_same_invariants(sets, eps, by, seed):
    src_pred, src_conf, tgt_pred, tgt_conf = sets
    m = matching.match_predictions_reference(
        src_pred, src_conf, tgt_pred, tgt_conf, eps=eps, by=by, seed=seed
    )
    assert len(set(m.source_index.tolist())) == len(m.source_index)
    assert np.all(np.abs(src_conf[m.source_index] - tgt_conf[m.target_index]) <= eps)


def test_same_seed_same_matching():
    rng = np.random.default_rng(0)
    sp, sc = rng.integers(0, 5, 500), rng.random(500)
    tp, tc = rng.integers(0, 5, 300), rng.random(300)
    a = matching.match_predictions(sp, sc, tp, tc, eps=0.02, seed=4)
    b = matching.match_predictions(sp, sc, tp, tc, eps=0.02, seed=4)
    c = matching.match_predictions(sp, sc, tp, tc, eps=0.02, seed=5)
    assert np.array_equal(a.source_index, b.source_index)
    assert not np.array_equal(a.source_index, c.source_index)


def _outcomes(fn, n_seeds, **data):
    """Per seed: the source matched to target 0, and the number of matched pairs."""
    first, counts = [], []
    for seed in range(n_seeds):
        m = fn(**data, eps=0.1, by="prob", seed=seed)
        first.append(int(m.source_index[0]) if len(m.target_index) and m.target_index[0] == 0 else -1)
        counts.append(len(m.target_index))
    return np.array(first), np.array(counts)


def test_fast_and_reference_give_the_same_distribution_of_outcomes():
    """Over many seeds, the fast matching and the pseudocode transcription agree in distribution."""
    data = dict(
        src_pred=np.zeros(8, dtype=int),
        src_conf=np.array([0.50, 0.55, 0.58, 0.62, 0.70, 0.75, 0.90, 0.95]),
        tgt_pred=np.zeros(5, dtype=int),
        tgt_conf=np.array([0.60, 0.66, 0.52, 0.80, 0.61]),
    )
    n = 3000
    fast_first, fast_count = _outcomes(matching.match_predictions, n, **data)
    ref_first, ref_count = _outcomes(matching.match_predictions_reference, n, **data)
    # target 0 (p = 0.60) has candidates 0.50-0.70: each chosen with probability 1/5
    assert set(fast_first) == set(ref_first) == {0, 1, 2, 3, 4}
    for a, b in ((fast_first, ref_first), (fast_count, ref_count)):
        values = sorted(set(a) | set(b))
        table = np.array([[np.sum(a == v) for v in values], [np.sum(b == v) for v in values]])
        assert stats.chi2_contingency(table).pvalue > 1e-3
    assert stats.chisquare(np.bincount(fast_first, minlength=5)).pvalue > 1e-3  # uniform choice


def test_closed_interval_boundary():
    # |0.3 - 0.25| == 0.05 exactly in binary? use values whose difference is exactly representable
    m = matching.match_predictions([0], [0.5], [0], [0.75], eps=0.25)
    assert len(m.target_index) == 1
    m = matching.match_predictions([0], [0.5], [0], [0.75], eps=0.2499)
    assert len(m.target_index) == 0


def test_algorithm_1_requires_the_same_label_and_algorithm_2_does_not():
    m1 = matching.match_predictions([1], [0.9], [2], [0.9], by="label_and_prob")
    m2 = matching.match_predictions([1], [0.9], [2], [0.9], by="prob")
    assert len(m1.unmatched_target_index) == 1 and len(m2.target_index) == 1


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([0, 1], [0.5], [0], [0.5]), {}, "source: 2 predicted labels but 1"),
        (([0], [1.5], [0], [0.5]), {}, r"lie in \[0, 1\]"),
        (([0], [np.nan], [0], [0.5]), {}, "NaN"),
        (([], [], [0], [0.5]), {}, "source: the set is empty"),
        (([0], [0.5], [], []), {}, "target: the set is empty"),
        (([0], [0.5], [0], [0.5]), {"eps": 0}, r"eps must be a number in \(0, 1\)"),
        (([0], [0.5], [0], [0.5]), {"eps": 1.0}, r"eps must be a number in \(0, 1\)"),
        (([0], [0.5], [0], [0.5]), {"by": "label"}, "by must be one of"),
        (([0.5], [0.5], [0], [0.5]), {}, "predicted labels must be integers"),
    ],
)
def test_bad_input(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        matching.match_predictions(*args, **kwargs)


def _probs(pred, conf, k=3):
    """Rows with max ``conf`` at ``pred`` and the rest spread evenly."""
    p = np.tile(((1 - conf) / (k - 1))[:, None], (1, k))
    p[np.arange(len(pred)), pred] = conf
    return p


def test_matched_accuracy_statistics_and_roles():
    rng = np.random.default_rng(0)
    n_src, n_tgt = 400, 300
    src_pred, tgt_pred = rng.integers(0, 3, n_src), rng.integers(0, 3, n_tgt)
    src_conf, tgt_conf = rng.uniform(0.4, 1, n_src), rng.uniform(0.4, 1, n_tgt)
    src_labels = np.where(rng.random(n_src) < src_conf, src_pred, (src_pred + 1) % 3)
    tgt_labels = np.where(rng.random(n_tgt) < tgt_conf - 0.2, tgt_pred, (tgt_pred + 1) % 3)
    out = matching.matched_accuracy(
        src_labels, _probs(src_pred, src_conf), tgt_labels, _probs(tgt_pred, tgt_conf), eps=0.01, n_runs=5
    )
    assert out["roles"] == {"source": "src", "target": "tgt"}
    assert out["accuracy"]["source"] == pytest.approx((src_labels == src_pred).mean())
    assert out["gap"] == pytest.approx(out["accuracy"]["source"] - out["accuracy"]["target"])
    assert out["matched_gap"]["mean"] == pytest.approx(
        out["matched_accuracy_source"]["mean"] - out["matched_accuracy_target"]["mean"]
    )
    assert 0 <= out["fraction_unmatched"]["mean"] <= 1 and out["n_runs"] == 5
    # the smaller first set becomes the target: roles swap
    swapped = matching.matched_accuracy(
        tgt_labels, _probs(tgt_pred, tgt_conf), src_labels, _probs(src_pred, src_conf), eps=0.01, n_runs=2
    )
    assert swapped["roles"] == {"source": "tgt", "target": "src"}
    assert swapped["accuracy"]["source"] == pytest.approx(out["accuracy"]["source"])


def test_matched_accuracy_bad_input():
    p = np.array([[0.6, 0.4]])
    with pytest.raises(ValueError, match="rows must sum to 1"):
        matching.matched_accuracy([0], np.array([[0.6, 0.6]]), [0], p)
    with pytest.raises(ValueError, match="1 labels but 2 rows"):
        matching.matched_accuracy([0], np.array([[0.6, 0.4], [0.5, 0.5]]), [0], p)
    with pytest.raises(ValueError, match="n_runs"):
        matching.matched_accuracy([0], p, [0], p, n_runs=0)
    with pytest.raises(ValueError, match="probability columns"):
        matching.matched_accuracy([0], p, [0], np.array([[0.2, 0.3, 0.5]]))
