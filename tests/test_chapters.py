"""Smoke execution of every chapter, the linear-fits numbers, and a warning-free book build."""

import json

import pytest
from conftest import shifteval

from shifteval import pipeline
from shifteval.datasets import published

CHAPTERS = [c.name for c in pipeline.chapters()]


@pytest.fixture(scope="module")
def built_book(tmp_path_factory):
    """Every chapter executed with its smoke parameters and the book built, once for this module."""
    from conftest import copy_project

    project = copy_project(tmp_path_factory.mktemp("book") / "project")
    out = shifteval("build", "--params", "smoke", cwd=project, timeout=1800)
    return project, out


def test_smoke_build_succeeds_without_warnings(built_book):
    project, out = built_book
    assert out.returncode == 0, out.stderr[-4000:]
    assert (project / "_build" / "html" / "index.html").is_file()
    log = out.stdout + out.stderr
    assert "WARNING" not in log and "build succeeded" in log
    for name in CHAPTERS:
        assert (project / "_build" / "html" / "book" / "chapters" / f"{name}.html").is_file(), name


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_chapter_executes_and_records_results(built_book, name):
    project, out = built_book
    nb = json.loads((project / "book" / "chapters" / f"{name}.ipynb").read_text())
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors
    res = json.loads((project / "book" / "chapters" / f"{name}.results.json").read_text())
    assert res["provenance"]["chapter"] == name and res["provenance"]["parameter_set"] == "smoke"


def test_linear_fits_results_reproduce_the_paper(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "linear-fits.results.json").read_text())
    ref = published.reported()["recht2019"]
    cifar, imnet = res["fits"]["cifar10"], res["fits"]["imagenet_top1_matchedfrequency"]
    assert cifar["n"] == 34 and imnet["n"] == 64
    assert cifar["slope"] == pytest.approx(ref["cifar10_fit"]["slope"], abs=0.006)
    assert cifar["intercept"] == pytest.approx(ref["cifar10_fit"]["intercept"], abs=0.1)
    assert imnet["slope"] == pytest.approx(ref["imagenet_top1_matchedfrequency_fit"]["slope"], abs=0.006)
    assert imnet["intercept"] == pytest.approx(ref["imagenet_top1_matchedfrequency_fit"]["intercept"], abs=0.1)
    # smoke runs 2,000 bootstrap replicates; the 100,000-replicate intervals are tested in test_linfit
    assert cifar["slope_ci"] == pytest.approx(ref["cifar10_fit"]["slope_ci"], abs=0.03)
    for strategy, changes in res["table2"].items():
        for k in ("top1", "top5"):
            assert round(changes[k], 1) == ref["table2"][strategy][k]
    g = res["gaussian_model"]
    assert g["fitted"]["slope"] == pytest.approx(g["analytic"]["slope"], abs=0.1)
    assert max(res["clopper_pearson_max_deviation"].values()) <= 0.1 + 1e-9


def test_warm_build_skips_every_chapter(built_book):
    project, _ = built_book
    out = shifteval("build", "--params", "smoke", cwd=project, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stderr.count("up to date") == len(CHAPTERS)
    assert "executing" not in out.stderr


def test_replication_world_smoke_results_show_the_mechanism(built_book):
    """What can be asserted at smoke size (six models, 40 images per class and set)."""
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "replication-world.results.json").read_text())
    freq = res["selection_frequency"]
    assert set(freq) == {"v1", "matchedfrequency", "threshold0.7", "topimages"}
    # Engstrom's bias: observed frequencies matched, true frequencies lower
    assert abs(freq["matchedfrequency"]["observed"] - freq["v1"]["observed"]) <= 0.02
    assert freq["v1"]["true"] - freq["matchedfrequency"]["true"] >= 0.02
    # Recht's Table 2 ordering of the mean accuracy change
    change = res["accuracy_change"]
    assert change["matchedfrequency"] < change["threshold0.7"] < change["topimages"]
    assert change["matchedfrequency"] < 0
    assert set(res["fraction_models_dropping"]) == set(change)
    # the ablation shrinks the MatchedFrequency drop
    assert res["ablation"]["drop_noise_free"] < res["ablation"]["drop_noisy"] / 2
    assert res["zoo"]["n_models"] == 6


def test_linear_fits_records_the_zoo_fits(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "linear-fits.results.json").read_text())
    assert {f"{s}_{scale}" for s in ("matchedfrequency", "threshold0.7", "topimages") for scale in ("linear", "probit")} == set(res["zoo_fits"])
    assert all(f["n"] == 6 for f in res["zoo_fits"].values())


def test_matched_evaluation_smoke_results(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "matched-evaluation.results.json").read_text())
    narrower = res["fraction_models_gap_narrower"]
    assert set(narrower) == {"matchedfrequency", "threshold0.7", "topimages"}
    for strategy in narrower.values():
        assert set(strategy) == {"label_and_prob", "prob"}
        assert all(0 <= v <= 1 for v in strategy.values())
    per_model = res["per_model"]["matchedfrequency"]["label_and_prob"]
    assert len(per_model) == 6
    assert all(0 <= m["fraction_unmatched"] <= 1 for m in per_model.values())


def test_matched_evaluation_runs_on_real_format_prediction_files(tmp_path):
    """real.yaml's path: a folder of CIFAR-10 / CIFAR-10.1 predictions in the project's format."""
    import numpy as np

    from conftest import copy_project

    from shifteval.zoo import PredictionStore

    rng = np.random.default_rng(0)
    store = PredictionStore(tmp_path / "preds")
    for m, skill in enumerate((0.6, 0.75, 0.9)):
        for dataset, n, shift in (("cifar10", 1000, 0.0), ("cifar10.1", 400, 0.1)):
            labels = rng.integers(0, 10, n)
            logits = rng.normal(0, 1, (n, 10))
            logits[np.arange(n), labels] += 3 * (skill - shift)
            probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
            store.save(f"model{m}", dataset, labels, probs)
    project = copy_project(tmp_path / "project")
    out = shifteval("run", "matched-evaluation", "--params", "real", "-p", f"predictions_dir={tmp_path / 'preds'}",
                    "-p", "n_runs=2", "-p", "eps_grid=[0.005, 0.05]", cwd=project, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads((project / "book" / "chapters" / "matched-evaluation.results.json").read_text())
    assert res["source"] == "cifar10" and res["targets"] == ["cifar10.1"]
    assert set(res["per_model"]["cifar10.1"]["prob"]) == {"model0", "model1", "model2"}


def test_matched_evaluation_names_missing_prediction_files(tmp_path):
    from conftest import copy_project

    (tmp_path / "preds" / "model0").mkdir(parents=True)
    project = copy_project(tmp_path / "project")
    out = shifteval("run", "matched-evaluation", "--params", "real", "-p", f"predictions_dir={tmp_path / 'preds'}", cwd=project)
    assert out.returncode == 1
    assert "no model in" in out.stderr and "cifar10.1.npz" in out.stderr


def test_selection_bias_smoke_results(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "selection-bias.results.json").read_text())
    assert set(res["mean_bias"]) == {"naive", "jackknife", "parametric"}
    assert 0 <= res["fraction_parametric_closer"] <= 1
    assert len(res["per_model"]) == 6
    for row in res["per_model"].values():
        assert set(row) == {"v1", "observed", "naive", "jackknife", "parametric", "ground_truth"}
    # every estimator starts from the observed v2 accuracy and moves towards the truth
    assert res["mean_abs_error"]["naive"] < res["mean_abs_error"]["observed"]
    assert res["toy_model"]["l1_distance"] < 0.05  # 10^5 samples at smoke size
