"""The matched-evaluation chapter: the book's results, real-format inputs, error messages."""

import json

import pytest
from conftest import run_default, shifteval


def test_matched_evaluation_results_on_the_book_page(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "matched-evaluation.results.json").read_text())
    narrower = res["fraction_models_gap_narrower"]
    assert set(narrower) == {"matchedfrequency", "threshold0.7", "topimages"}
    for strategy in narrower.values():
        assert set(strategy) == {"label_and_prob", "prob"}
        assert all(0 <= v <= 1 for v in strategy.values())
    per_model = res["per_model"]["matchedfrequency"]["label_and_prob"]
    assert len(per_model) == 31
    assert all(0 <= m["fraction_unmatched"] <= 1 for m in per_model.values())


@pytest.mark.slow
def test_matched_evaluation_runs_on_real_format_prediction_files(tmp_path):
    """real.yaml's path: CIFAR-10 against CIFAR-10.1, CIFAR-10.2 and CINIC-10, in the project's format."""
    import numpy as np
    from conftest import copy_project

    from shifteval.zoo import PredictionStore

    rng = np.random.default_rng(0)
    store = PredictionStore(tmp_path / "preds")
    for m, skill in enumerate((0.6, 0.75, 0.9)):
        sets = (
            ("cifar10", 1000, 0.0),
            ("cifar10.1", 400, 0.1),
            ("cifar10.2", 400, 0.15),
            ("cinic10", 1200, 0.2),
        )
        for dataset, n, shift in sets:
            labels = rng.integers(0, 10, n)
            logits = rng.normal(0, 1, (n, 10))
            logits[np.arange(n), labels] += 3 * (skill - shift)
            probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
            store.save(f"model{m}", dataset, labels, probs)
    project = copy_project(tmp_path / "project")
    out = shifteval(
        "run",
        "matched-evaluation",
        "--params",
        "real",
        "-p",
        f"predictions_dir={tmp_path / 'preds'}",
        "-p",
        "n_runs=2",
        "-p",
        "eps_grid=[0.005, 0.05]",
        cwd=project,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads((project / "book" / "chapters" / "matched-evaluation.results.json").read_text())
    assert res["source"] == "cifar10" and res["targets"] == ["cifar10.1", "cifar10.2", "cinic10"]
    for target in res["targets"]:  # CINIC-10's test set is the larger one: it plays the source there
        assert set(res["per_model"][target]["prob"]) == {"model0", "model1", "model2"}


@pytest.mark.slow
def test_matched_evaluation_names_missing_prediction_files(tmp_path):
    from conftest import copy_project

    (tmp_path / "preds" / "model0").mkdir(parents=True)
    project = copy_project(tmp_path / "project")
    out = shifteval(
        "run",
        "matched-evaluation",
        "--params",
        "real",
        "-p",
        f"predictions_dir={tmp_path / 'preds'}",
        cwd=project,
    )
    assert out.returncode == 1
    assert "no model in" in out.stderr and "cifar10.1.npz" in out.stderr


@pytest.mark.slow
def test_matched_evaluation_default_run(default_project):
    """The default run: at least 6 claims, all holding, and the headline numbers it records."""
    res = run_default(default_project, "matched-evaluation")
    claims = res["claims"]
    assert len(claims) >= 6
    assert all(c["holds"] for c in claims), [c["id"] for c in claims if not c["holds"]]
    assert len({c["id"] for c in claims}) == len(claims)
    # v1 is five times a replicated set, as in both papers' pairs, and plays the source
    assert res["set_sizes"] == {"source": 10000, "target": 2000}
    assert all(r == {"source": "v1", "target": t} for t, r in res["roles"].items())
    # the ε sweep is on a model with continuous probabilities, and its curve is not flat
    sweep = res["eps_sweep"]
    assert sweep["distinct_probabilities"] >= 0.99 * res["set_sizes"]["source"]
    assert sweep["eps"] == sorted(sweep["eps"]) and len(sweep["eps"]) == len(sweep["matched_gap"]) >= 4
    assert sweep["fraction_unmatched"][0] - sweep["fraction_unmatched"][-1] > 0.2
    assert sweep["model"] not in {m for m, q in res["quantisation"].items() if q["kind"] != "continuous"}
    # Figure 5: the strong model's unmatched targets are less accurate than its targets overall
    strong = res["fig5"]["strong"]
    per_model = res["per_model"]["matchedfrequency"]["label_and_prob"]
    assert 0 <= res["unmatched_accuracy"] == strong["unmatched_accuracy"] < 1
    assert abs(strong["matched_gap"]) < abs(strong["accuracy_gap"])
    assert strong["accuracy_gap"] == pytest.approx(per_model[strong["model"]]["gap"])
    # quantised models exist in the zoo (k-NN at least) and match through ties at a near-zero ε
    assert res["quantisation"]["knn_1"]["kind"] == "quantised"
    assert res["quantisation"]["knn_1"]["distinct_source"] == 1


@pytest.mark.slow
def test_matched_evaluation_names_the_roles_when_the_second_set_is_larger(tmp_path):
    """CIFAR-10 (1,000 here) against a larger CINIC-10 (3,000): CINIC-10 plays the source everywhere."""
    import numpy as np
    from conftest import copy_project

    from shifteval.zoo import PredictionStore

    rng = np.random.default_rng(1)
    store = PredictionStore(tmp_path / "preds")
    for m, skill in enumerate((0.6, 0.9)):
        for dataset, n, shift in (("cifar10", 1000, 0.0), ("cinic10", 3000, 0.3)):
            labels = rng.integers(0, 10, n)
            logits = rng.normal(0, 1, (n, 10))
            logits[np.arange(n), labels] += 3 * (skill - shift)
            store.save(f"model{m}", dataset, labels, np.exp(logits) / np.exp(logits).sum(1, keepdims=True))
    project = copy_project(tmp_path / "project")
    args = ["-p", f"predictions_dir={tmp_path / 'preds'}", "-p", "targets=[cinic10]", "-p", "n_runs=2"]
    out = shifteval(
        "run", "matched-evaluation", "--params", "real", *args, "-p", "eps_grid=[0.005, 0.05]", cwd=project
    )
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads((project / "book" / "chapters" / "matched-evaluation.results.json").read_text())
    assert res["roles"] == {"cinic10": {"source": "cinic10", "target": "cifar10"}}
    assert res["set_sizes"] == {"source": 3000, "target": 1000}
    assert res["fig5"]["strong"]["roles"] == {"source": "cinic10", "target": "cifar10"}
    # CINIC-10 is the harder set here, so its (source) accuracy is lower: every gap source − target is negative
    assert all(m["gap"] < 0 for m in res["per_model"]["cinic10"]["label_and_prob"].values())
    larger = next(c for c in res["claims"] if c["id"] == "source-is-the-larger-set")
    assert larger["holds"] is False and "cifar10" in larger["text"]
