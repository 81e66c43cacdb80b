"""The selection-bias chapter: the book's results, claims and interval coverage."""

import json


def test_selection_bias_results_on_the_book_page(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "selection-bias.results.json").read_text())
    assert set(res["mean_bias"]) == {"naive", "jackknife", "parametric"}
    assert 0 <= res["fraction_parametric_closer"] <= 1
    assert len(res["per_model"]) == 31
    for row in res["per_model"].values():
        assert set(row) == {"v1", "observed", "naive", "jackknife", "parametric", "ground_truth"}
    # every estimator starts from the observed v2 accuracy and moves towards the truth
    assert res["mean_abs_error"]["naive"] < res["mean_abs_error"]["observed"]
    assert res["toy_model"]["l1_distance"] < 0.05


def test_selection_bias_default_run_claims_and_coverage(default_project):
    from conftest import run_default

    res = run_default(default_project, "selection-bias")
    claims = res["claims"]
    assert len(claims) >= 6 and all(c["holds"] for c in claims), [c["id"] for c in claims if not c["holds"]]
    # intervals checked against >= 50 redraws of images and votes from the world
    coverage = res["coverage"]
    assert set(coverage) == {"jackknife", "parametric"}
    for values in coverage.values():
        assert set(values) == {"nominal", "empirical", "redraws"}
        assert values["nominal"] == 0.95 and values["redraws"] >= 50
        assert 0.90 <= values["empirical"] <= 0.99
    # App. F.1's percentile intervals against the normal ones on the same redraws, each rerunning both bootstraps
    pct = res["percentile_coverage"]
    assert pct["redraws"] == 8 and pct["n_boot"] == 20
    for name in ("jackknife", "parametric"):
        assert set(pct[name]) == {"percentile", "normal", "centre_offset"} and pct[name]["centre_offset"] >= 0
    assert pct["parametric"]["percentile"] < pct["parametric"]["normal"]  # as the page says for this run
    # Figure 6: no estimate outside its own interval
    assert res["fig6_outside_interval"] == {"jackknife": 0, "parametric": 0}
    assert res["bootstrap_samples"] == 450  # App. F.1: "we perform 450 bootstrapped estimates"
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
