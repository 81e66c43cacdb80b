"""The linear-fits chapter: the book's results against the paper, its claims and fits; the smoke set."""

import json

import pytest
from conftest import run_default, shifteval

from shifteval.datasets import published

STRATEGIES = ("matchedfrequency", "threshold0.7", "topimages")
FIT_MODELS = {
    "cifar10": 34,
    "cifar10_balanced": 34,
    "imagenet_top1_matchedfrequency": 64,
    "imagenet_top1_matchedfrequency_all_linear": 67,
    "engstrom2020_linear": 136,
    "engstrom2020_probit": 136,
    **{f"imagenet_{k}_{s}_cnn": 64 for k in ("top1", "top5") for s in STRATEGIES},
    **{f"imagenet_{k}_{s}_all_probit": 67 for k in ("top1", "top5") for s in STRATEGIES},
}
FIT_FIELDS = {"scale", "n", "slope", "intercept", "slope_ci", "intercept_ci", "r", "ci", "n_boot"}


def _check_fits(res, n_boot):
    fits = res["fits"]
    assert {k: fits[k]["n"] for k in FIT_MODELS} == FIT_MODELS
    for key, fit in fits.items():
        assert set(fit) == FIT_FIELDS, key
        assert fit["n_boot"] == n_boot
        assert fit["slope_ci"][0] <= fit["slope"] <= fit["slope_ci"][1], key
        assert fit["scale"] == ("probit" if key.endswith("_probit") else "linear"), key


def test_linear_fits_results_reproduce_the_paper(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "linear-fits.results.json").read_text())
    ref = published.reported()["recht2019"]
    _check_fits(res, n_boot=100_000)
    cifar, imnet = res["fits"]["cifar10"], res["fits"]["imagenet_top1_matchedfrequency"]
    assert cifar["slope"] == pytest.approx(ref["cifar10_fit"]["slope"], abs=0.006)
    assert cifar["intercept"] == pytest.approx(ref["cifar10_fit"]["intercept"], abs=0.1)
    assert imnet["slope"] == pytest.approx(ref["imagenet_top1_matchedfrequency_fit"]["slope"], abs=0.006)
    assert cifar["slope_ci"] == pytest.approx(ref["cifar10_fit"]["slope_ci"], abs=0.03)
    for strategy, changes in res["table2"].items():
        for k in ("top1", "top5"):
            assert round(changes[k], 1) == ref["table2"][strategy][k]
    assert max(max(v.values()) for v in res["clopper_pearson_max_deviation"].values()) <= 0.1 + 1e-9
    assert len(res["claims"]) >= 6 and all(isinstance(c["holds"], bool) for c in res["claims"])
    assert all(f["n"] == 31 for f in res["zoo_fits"].values())


@pytest.mark.slow
def test_linear_fits_smoke_set_runs(project):
    """``--params smoke``: the same code path in seconds (2,000 bootstrap replicates, the six-model zoo);
    a smoke run records its claims too, holding or not."""
    out = shifteval("run", "linear-fits", "--params", "smoke", cwd=project)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads((project / "book" / "chapters" / "linear-fits.results.json").read_text())
    assert res["provenance"]["parameter_set"] == "smoke"
    _check_fits(res, n_boot=2000)
    assert len(res["claims"]) >= 6 and all(isinstance(c["holds"], bool) for c in res["claims"])
    assert all(f["n"] == 6 for f in res["zoo_fits"].values())
    _check_per_image(res)  # the per-image section at smoke size too


@pytest.mark.slow
def test_linear_fits_default_run_claims_hold(default_project):
    res = run_default(default_project, "linear-fits")
    claims = res["claims"]
    assert len(claims) >= 12
    assert all(c["holds"] for c in claims), [c["id"] for c in claims if not c["holds"]]
    assert len({c["id"] for c in claims}) == len(claims)
    # the sentences the audit found false are now claims, stated as the numbers show them
    ids = {c["id"] for c in claims}
    assert {
        "ranks-spearman",
        "gaussian-shift-slope-one",
        "zoo-mf-linear-slope",
        "fig12-top5-topimages",
    } <= ids
    _check_fits(res, n_boot=100_000)
    ref = published.reported()["recht2019"]["imagenet_top5_topimages_slope"]
    t5 = res["fits"]["imagenet_top5_topimages_cnn"]
    assert round(t5["slope"], 2) == ref["slope"]
    assert t5["slope_ci"] == pytest.approx(ref["slope_ci"], abs=0.01)
    # a pure mean shift gives slope 1 on probit axes (§5.3); the narrower spread gives more than 1
    g = res["gaussian_model"]
    assert g["mean shift only"]["analytic"]["slope"] == 1.0
    assert g["mean shift only"]["fitted"]["slope"] == pytest.approx(1.0, abs=0.02)
    assert g["mean shift, narrower spread"]["fitted"]["slope"] > 1.05
    # the zoo is the default one, fitted on all three replicated sets and both scales
    assert len(res["zoo_fits"]) == 6 and all(f["n"] == 31 for f in res["zoo_fits"].values())
    # every claim's text is on the page: in the executed notebook's markdown (a sentence of the prose,
    # written there by the run) or in a cell's outputs (a claim stated in code)
    nb = json.loads((default_project / "book" / "chapters" / "linear-fits.ipynb").read_text())
    page = json.dumps(
        ["".join(c["source"]) if c["cell_type"] == "markdown" else c["outputs"] for c in nb["cells"]]
    )
    for c in claims:
        assert json.dumps(c["text"])[1:-1] in page, c["id"]


def _check_per_image(res):
    """The per-image section on the shipped ImageNetV2 table (no download), at any size."""
    per = res["per_image"]
    assert per["models"] == 67 and per["tables_agree"] and per["tables_max_abs_diff"] <= 0.05 + 1e-9
    lo2, hi2 = per["two_level_slope_ci"]
    lo1, hi1 = per["model_only_slope_ci"]
    assert lo2 <= per["slope"] <= hi2 and lo1 <= per["slope"] <= hi1
    assert hi2 - lo2 > hi1 - lo1  # images add uncertainty the model-only bootstrap leaves out
    wrong = per["all_wrong"]
    assert (
        wrong["imagenetv2-b-33"]["all_wrong"] == 936
        and wrong["imagenet-validation-original"]["all_wrong"] == 2384
    )
    assert 0 < per["class_drops"]["mean_spearman"] < 1
    assert "linear-fits-per-image-classes" in res["figures"]


def test_linear_fits_per_image_section_on_the_released_predictions(built_book):
    project, _ = built_book
    _check_per_image(json.loads((project / "book" / "chapters" / "linear-fits.results.json").read_text()))
