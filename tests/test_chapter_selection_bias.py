"""The selection-bias chapter: smoke results, real-format inputs, error messages."""

import json


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


def test_selection_bias_default_run_claims_and_uncertainty_check(default_project):
    from conftest import run_default

    res = run_default(default_project, "selection-bias")
    claims = res["claims"]
    assert len(claims) >= 6 and all(c["holds"] for c in claims), [c["id"] for c in claims if not c["holds"]]
    check = res["uncertainty_check"]
    assert set(check) >= {"jackknife", "parametric"}
    for values in check.values():
        assert values["empirical_sd"] > 0 and values["reported_se"] > 0
    # the jackknife's reported SE is the naive estimate's: it understates the corrected estimate's spread
    assert check["jackknife"]["reported_se"] < check["jackknife"]["empirical_sd"]
    assert res["bootstrap_samples"] >= 400 and res["redraws"]["rounds"] >= 3  # App. F.1: 400-450
    # App. D.1: the gap against the annotators used for matching, at least four annotator counts
    gaps = res["gap_vs_annotators"]
    assert len(gaps) >= 4 and all(set(g) == {"annotators", "gap"} for g in gaps)
    assert gaps[-1]["gap"] < gaps[0]["gap"]  # more votes per image, less selection bias
    assert res["gap_vs_annotators_detail"]["noise_free"] < min(g["gap"] for g in gaps)
    # §5.1-5.2's sequence: each correction shrinks the observed gap
    seq = res["gap_sequence"]
    assert seq["naive"] < seq["observed"]
    # Table 1 analog: matched on in-sample votes, lower on fresh votes and in truth
    table = res["selection_frequency"]
    assert table["MatchedFrequency"]["true s"] < table["v1"]["true s"]
