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
