"""Matched evaluation (Anzaku et al.): invariants, equivalence with the pseudocode, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from shifteval import matching
from shifteval.matching import findings

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
    pair = dict(zip(t.tolist(), s.tolist(), strict=True))
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


# A hand-worked example (K = 3, ε = 0.005). Each target has at most one candidate, so the matching is
# deterministic and every statistic can be computed by hand.
#   source (5): predicted 0 1 2 0 2 with p̂ 0.9 0.6? -- see the arrays below; correct T F T F T -> 0.6
#   target (4): correct T T F F -> 0.5; gap 0.6 - 0.5 = 0.1
# Algorithm 1: t0 (label 0, 0.601) -> s1 (0, 0.600); t1 (1, 0.80) -> s2 (1, 0.80); t2 (2, 0.95) and
#   t3 (1, 0.90) have no candidate. Matched source s1, s2: F T -> 0.5; matched target t0, t1: T T -> 1.0;
#   matched gap -0.5; fraction unmatched 2/4; accuracy on the unmatched targets (t2, t3: F F) 0.
# Algorithm 2: additionally t3 (0.90) -> s0 (0.90). Matched source F T T -> 2/3; matched target
#   T T F -> 2/3; matched gap 0; fraction unmatched 1/4; accuracy on the unmatched target (t2) 0.
HAND_SRC = dict(pred=[0, 0, 1, 2, 2], conf=[0.9, 0.6, 0.8, 0.5, 0.4], labels=[0, 1, 1, 0, 2])
HAND_TGT = dict(pred=[0, 1, 2, 1], conf=[0.601, 0.8, 0.95, 0.9], labels=[0, 1, 0, 2])
HAND = {
    "label_and_prob": {"ms": 0.5, "mt": 1.0, "gap": -0.5, "fu": 0.5, "au": 0.0, "pairs": [(1, 0), (2, 1)]},
    "prob": {"ms": 2 / 3, "mt": 2 / 3, "gap": 0.0, "fu": 0.25, "au": 0.0, "pairs": [(1, 0), (2, 1), (0, 3)]},
}


def _hand(d):
    return np.array(d["labels"]), _probs(np.array(d["pred"]), np.array(d["conf"]))


@pytest.mark.parametrize("by", matching.METHODS)
def test_matched_accuracy_against_hand_computed_values(by):
    want = HAND[by]
    m = matching.match_predictions(
        HAND_SRC["pred"], HAND_SRC["conf"], HAND_TGT["pred"], HAND_TGT["conf"], by=by
    )
    assert list(zip(m.source_index.tolist(), m.target_index.tolist(), strict=True)) == want["pairs"]
    out = matching.matched_accuracy(*_hand(HAND_SRC), *_hand(HAND_TGT), eps=0.005, by=by, n_runs=3)
    assert out["roles"] == {"source": "first", "target": "second"}
    assert out["set_sizes"] == {"source": 5, "target": 4}
    assert out["accuracy"] == {"source": pytest.approx(0.6), "target": pytest.approx(0.5)}
    assert out["gap"] == pytest.approx(0.1)
    assert out["matched_accuracy_source"]["mean"] == pytest.approx(want["ms"])
    assert out["matched_accuracy_target"]["mean"] == pytest.approx(want["mt"])
    assert out["matched_gap"] == {"mean": pytest.approx(want["gap"]), "std": 0.0}
    assert out["fraction_unmatched"]["mean"] == pytest.approx(want["fu"])
    assert out["accuracy_unmatched_target"]["mean"] == pytest.approx(want["au"])
    assert out["mean_confidence"]["unmatched_target"]["mean"] == pytest.approx(
        0.95 if by == "prob" else 0.925
    )


def test_role_swap_when_the_second_set_is_larger():
    """The larger set is the source even when passed second; statistics follow the roles, not the order."""
    out = matching.matched_accuracy(*_hand(HAND_TGT), *_hand(HAND_SRC), eps=0.005, n_runs=2)
    assert out["roles"] == {"source": "second", "target": "first"}
    assert out["set_sizes"] == {"source": 5, "target": 4}
    assert out["accuracy"]["source"] == pytest.approx(0.6) and out["gap"] == pytest.approx(0.1)
    assert out["matched_gap"]["mean"] == pytest.approx(-0.5)
    assert matching.role_names(out["roles"], "cifar10.1", "cinic10") == {
        "source": "cinic10",
        "target": "cifar10.1",
    }


def test_tie_rule_equal_sizes_keep_the_first_set_as_source():
    labels, probs = _hand(HAND_TGT)
    other_labels, other_probs = labels.copy(), probs[[1, 0, 3, 2]]
    other_labels[:] = [1, 0, 2, 0]
    out = matching.matched_accuracy(labels, probs, other_labels, other_probs, n_runs=1)
    assert out["roles"] == {"source": "first", "target": "second"}
    assert out["accuracy"]["source"] == pytest.approx(0.5)
    back = matching.matched_accuracy(other_labels, other_probs, labels, probs, n_runs=1)
    assert back["roles"] == {"source": "first", "target": "second"}
    assert back["accuracy"]["source"] == pytest.approx((other_labels == other_probs.argmax(1)).mean())


def test_role_names_rejects_bad_roles():
    with pytest.raises(ValueError, match="roles must map source and target"):
        matching.role_names({"source": "src", "target": "tgt"}, "a", "b")


def _store_pair(name, first, second):
    from shifteval.zoo.store import Predictions

    return (
        Predictions(name, "small", *_hand(first), {}),
        Predictions(name, "large", *_hand(second), {}),
    )


def test_table_study_and_figures_name_the_roles_when_the_second_set_is_larger():
    import matplotlib

    matplotlib.use("Agg")
    from shifteval.matching import study
    from shifteval.viz import matched_evaluation as vm

    pairs = {"m": _store_pair("m", HAND_TGT, HAND_SRC)}
    tables = study.evaluate({"large": pairs}, "small", n_runs=2)
    tab = tables[("large", "label_and_prob")]
    assert findings.roles(tab) == {"source": "large", "target": "small"}
    assert tab.loc["m", "acc_source"] == pytest.approx(0.6) and tab.loc["m", "n_source"] == 5
    fig = vm.fig3_matched_gaps(tables, "label_and_prob")
    top, bottom = fig.axes[0], fig.axes[1]
    labels = [line.get_label() for line in top.get_lines()]
    assert labels[:2] == ["accuracy, large", "accuracy, small"]
    assert top.get_title() == "large (source) vs small (target)"
    assert bottom.get_ylabel().startswith("gap (large − small)")
    f5 = study.fig5_subsets(*pairs["m"], ("small", "large"), n_runs=2)
    assert f5["roles"] == {"source": "large", "target": "small"}
    assert [len(c) for c, _ in f5["subsets"].values()] == [2, 2, 2]
    assert f5["unmatched_accuracy"] == 0.0 and f5["accuracy_gap"] == pytest.approx(0.1)
    fig5 = vm.fig5_reliability({"strong": ("m", f5)})
    assert "matched source (large)" in [t.get_text() for t in fig5.axes[0].get_legend().get_texts()][0]


def _grid_predictions(name, rng, n, k, grid):
    """Predictions whose max probability lies on a grid of multiples of 1/grid (as k-NN with grid neighbours)."""
    from shifteval.zoo.store import Predictions

    pred = rng.integers(0, k, n)
    conf = rng.integers(int(np.ceil(grid / k)) + 1, grid + 1, n) / grid if grid else rng.uniform(0.3, 1, n)
    labels = np.where(rng.random(n) < conf, pred, (pred + 1) % k)
    return Predictions(name, "d", labels, _probs(pred, conf, k), {})


def test_eps_does_nothing_below_the_grid_of_quantised_probabilities():
    """Probabilities on a 0.1 grid: ε = 1e-6 matches exactly as ε = 0.005 does (exact ties); continuous ones
    leave (almost) every target unmatched at ε = 1e-6."""
    from shifteval.matching import study

    rng = np.random.default_rng(1)
    pairs = {
        "knn_10": (
            _grid_predictions("knn_10", rng, 1000, 3, 10),
            _grid_predictions("knn_10", rng, 200, 3, 10),
        ),
        "smooth": (_grid_predictions("smooth", rng, 1000, 3, 0), _grid_predictions("smooth", rng, 200, 3, 0)),
    }
    q = study.quantisation_table(pairs, eps=0.005, eps_small=1e-6, n_runs=2)
    knn, smooth = q.loc["knn_10"], q.loc["smooth"]
    assert knn.kind == "quantised" and smooth.kind == "continuous"
    assert knn.distinct_source == 6 and knn.min_spacing  # p̂ in {0.5, 0.6, ..., 1.0} == pytest.approx(0.1)
    assert knn.fraction_unmatched_small == knn.fraction_unmatched < 0.05
    assert knn.matched_gap_small == knn.matched_gap
    assert smooth.fraction_unmatched < 0.2 and smooth.fraction_unmatched_small > 0.95
    sweep = study.eps_sweep(
        *pairs["knn_10"], [1e-6, 0.001, 0.005, 0.04], methods=("label_and_prob",), n_runs=2
    )
    assert sweep.fraction_unmatched.nunique() == 1 and sweep.matched_gap.nunique() == 1


def test_distinct_probabilities_and_model_picks():
    from shifteval.matching import study

    assert study.distinct_probabilities(np.array([[0.5, 0.5], [0.5, 0.5], [0.9, 0.1]])) == 2
    with pytest.raises(ValueError, match="non-empty"):
        study.distinct_probabilities(np.zeros((0, 3)))
    import pandas as pd

    table = pd.DataFrame({"acc_source": [0.7, 0.9, 0.5, 0.8]}, index=["a", "b", "c", "d"])
    quant = pd.DataFrame({"kind": ["continuous", "quantised", "continuous", "continuous"]}, index=table.index)
    assert study.pick_models(table, quant) == {"strong": "b", "weak": "c", "continuous": "a"}


def test_matched_accuracy_bad_input():
    p = np.array([[0.6, 0.4]])
    with pytest.raises(
        ValueError, match=r"source set: 'probs': every row must sum to 1; row 0 sums to 1\.2000"
    ):
        matching.matched_accuracy([0], np.array([[0.6, 0.6]]), [0], p)
    with pytest.raises(
        ValueError, match=r"source set: 'labels' must have 2 entries \(one per example\), got 1"
    ):
        matching.matched_accuracy([0], np.array([[0.6, 0.4], [0.5, 0.5]]), [0], p)
    with pytest.raises(ValueError, match="n_runs"):
        matching.matched_accuracy([0], p, [0], p, n_runs=0)
    with pytest.raises(ValueError, match="probability columns"):
        matching.matched_accuracy([0], p, [0], np.array([[0.2, 0.3, 0.5]]))


def test_facts_the_chapter_states():
    """The numbers behind the chapter's claims, on small hand-made tables."""
    import pandas as pd

    sweep = pd.DataFrame({
        "eps": [0.001, 0.001, 0.01, 0.01, 0.1, 0.1],
        "method": ["label_and_prob", "prob"] * 3,
        "gap": [0.08] * 6,
        "matched_gap": [0.01, 0.02, 0.03, 0.03, 0.05, 0.07],
        "fraction_unmatched": [0.6, 0.2, 0.1, 0.05, 0.2, 0.0],
    })  # fmt: skip
    f = findings.sweep_facts(sweep, eps=0.01)
    assert (f["fu0"], f["fu1"], f["monotone"]) == (0.6, 0.2, False)  # 0.1 -> 0.2 rises
    assert f["g"] == pytest.approx(8) and f["m1"] == pytest.approx(7) and f["m0"] == pytest.approx(3)
    quant = pd.DataFrame(
        {
            "kind": ["continuous", "quantised", "saturating", "quantised"],
            "fraction_unmatched": [0.01, 0.02, 0.03, 0.0],
            "fraction_unmatched_small": [0.99, 0.3, 0.6, 0.0],
            "min_spacing": [1e-7, 0.001, 1e-7, 0.1],
        },
        index=["a", "b", "c", "d"],
    )
    q = findings.quant_facts(quant, eps=0.005)
    assert (q["nc"], q["nq"], q["ns"], q["quantised"], q["grid"]) == (1, 2, 1, "b, d", "d")
    assert (q["c_min"], q["q_max"], q["s_min"], q["s_max"]) == (0.99, 0.3, 0.6, 0.6)
    assert q["grid_diff"] == 0.0


def test_case_counts_noise_and_confidence_the_findings_read():
    """The counts behind the chapter's findings: the replicated set is the second set whichever role it plays."""
    import pandas as pd

    tab = pd.DataFrame(
        {
            "gap": [0.05, -0.02, 0.03],
            "matched_gap": [0.01, -0.03, 0.0],
            "source_role": ["first", "second", "first"],
            "conf_source": [0.9, 0.7, 0.8],
            "conf_target": [0.8, 0.8, 0.85],
            "matched_gap_std": [0.01, 0.02, 0.0],
            "acc_target": [0.9, 0.5, 0.8],
            "n_target": [100, 100, 10_000],
        },
        index=["a", "b", "c"],
    )
    c = findings.case_counts({("v2", "prob"): tab, ("v2", "label_and_prob"): tab}, "prob").loc["v2"]
    # a: drop on v2 and less confident; b: v2 is the source, gap -2: v2 less accurate, conf 0.7 < 0.8
    assert c.to_dict() == {"models": 3, "drop": 3, "less_confident": 2, "both": 2, "narrower": 2}
    with pytest.raises(ValueError, match="no table of method"):
        findings.case_counts({("v2", "prob"): tab}, "label_and_prob")
    noise = findings.run_noise({("v2", "prob"): tab}, 4)
    # standard errors 0.5, 1.0 and 0 points against 3.0, 5.0 and 0.4 points of sampling error
    assert noise.se_runs.tolist() == pytest.approx([0.5, 1.0, 0.0])
    assert noise.se_sampling.tolist() == pytest.approx([3.0, 5.0, 0.4])
    assert noise.negligible.all() and noise.model.tolist() == ["a", "b", "c"]
    with pytest.raises(ValueError, match="n_runs >= 2"):
        findings.run_noise({("v2", "prob"): tab}, 1)
    subsets = {
        "right more confident": (np.array([0.9, 0.8, 0.5]), np.array([1, 1, 0])),
        "wrong more confident": (np.array([0.9, 0.5]), np.array([0, 1])),
        "all right": (np.array([0.9, 0.5]), np.array([1, 1])),
        "empty": (np.array([]), np.array([], dtype=bool)),
    }
    assert findings.confidence_separates(subsets) == {
        "right more confident": True,
        "wrong more confident": False,
    }
