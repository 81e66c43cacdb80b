"""The linear-fits chapter: smoke results, real-format inputs, error messages."""

import json

import pytest

from shifteval.datasets import published


def test_linear_fits_results_reproduce_the_paper(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "linear-fits.results.json").read_text())
    ref = published.reported()["recht2019"]
    cifar, imnet = res["fits"]["cifar10"], res["fits"]["imagenet_top1_matchedfrequency"]
    assert cifar["n"] == 34 and imnet["n"] == 64
    assert cifar["slope"] == pytest.approx(ref["cifar10_fit"]["slope"], abs=0.006)
    assert cifar["intercept"] == pytest.approx(ref["cifar10_fit"]["intercept"], abs=0.1)
    assert imnet["slope"] == pytest.approx(ref["imagenet_top1_matchedfrequency_fit"]["slope"], abs=0.006)
    assert imnet["intercept"] == pytest.approx(
        ref["imagenet_top1_matchedfrequency_fit"]["intercept"], abs=0.1
    )
    # smoke runs 2,000 bootstrap replicates; the 100,000-replicate intervals are tested in test_linfit
    assert cifar["slope_ci"] == pytest.approx(ref["cifar10_fit"]["slope_ci"], abs=0.03)
    for strategy, changes in res["table2"].items():
        for k in ("top1", "top5"):
            assert round(changes[k], 1) == ref["table2"][strategy][k]
    g = res["gaussian_model"]
    assert g["fitted"]["slope"] == pytest.approx(g["analytic"]["slope"], abs=0.1)
    assert max(res["clopper_pearson_max_deviation"].values()) <= 0.1 + 1e-9


def test_linear_fits_records_the_zoo_fits(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "linear-fits.results.json").read_text())
    assert {
        f"{s}_{scale}"
        for s in ("matchedfrequency", "threshold0.7", "topimages")
        for scale in ("linear", "probit")
    } == set(res["zoo_fits"])
    assert all(f["n"] == 6 for f in res["zoo_fits"].values())
