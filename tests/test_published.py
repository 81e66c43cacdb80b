"""The transcribed tables: row counts, spot values against the papers, provenance."""

import numpy as np
import pytest

from shifteval import linfit
from shifteval.datasets import published

RECHT_COLUMNS = [
    "model", "orig_acc", "orig_ci_low", "orig_ci_high", "new_acc", "new_ci_low", "new_ci_high",
    "gap", "orig_rank", "new_rank", "delta_rank",
]  # fmt: skip
EXPECTED_ROWS = {
    "recht2019_cifar10": 34,
    "recht2019_cifar10_balanced": 34,
    **{
        f"recht2019_imagenet_{k}_{s}": 67
        for k in ("top1", "top5")
        for s in ("matchedfrequency", "threshold0.7", "topimages")
    },
    "engstrom2020_imagenet": 136,
}


def test_every_table_is_listed_with_its_row_count():
    assert published.list_tables() == sorted(EXPECTED_ROWS)
    for name, rows in EXPECTED_ROWS.items():
        table = published.load_table(name)
        assert len(table) == rows, name
        assert table["model"].is_unique, name


@pytest.mark.parametrize("name", [n for n in EXPECTED_ROWS if n.startswith("recht")])
def test_recht_tables_are_internally_consistent(name):
    t = published.load_table(name)
    assert list(t.columns) == RECHT_COLUMNS
    assert (t.orig_ci_low <= t.orig_acc).all() and (t.orig_acc <= t.orig_ci_high).all()
    assert (t.new_ci_low <= t.new_acc).all() and (t.new_acc <= t.new_ci_high).all()
    # gap is printed from unrounded accuracies: it matches the rounded ones to 0.1 point
    assert np.allclose(t.gap, t.orig_acc - t.new_acc, atol=0.11)
    # ranks follow original accuracy; the paper prints a few tied rows out of rank order
    assert sorted(t.orig_rank) == list(range(1, len(t) + 1))
    assert (t.sort_values("orig_rank").orig_acc.diff().dropna() <= 0).all()
    assert (t.delta_rank == t.orig_rank - t.new_rank).all()
    assert sorted(t.new_rank) == list(range(1, len(t) + 1))


def test_spot_values_against_the_papers():
    cifar = published.load_table("recht2019_cifar10").set_index("model")
    assert cifar.loc["autoaug_pyramid_net_tf", ["orig_acc", "new_acc"]].tolist() == [98.4, 95.5]
    assert cifar.loc["random_features_32k", ["orig_ci_low", "new_ci_high", "gap"]].tolist() == [
        82.6,
        70.0,
        15.4,
    ]
    top1 = published.load_table("recht2019_imagenet_top1_matchedfrequency").set_index("model")
    assert top1.loc["resnet50", ["orig_acc", "new_acc", "new_rank"]].tolist() == [76.1, 63.3, 39]
    assert top1.loc["fv_4k", ["orig_acc", "new_acc"]].tolist() == [21.2, 15.0]
    top5 = published.load_table("recht2019_imagenet_top5_topimages")
    assert top5.iloc[0]["model"] == "pnasnet_large_tf"
    eng = published.load_table("engstrom2020_imagenet").set_index("model")
    assert eng.loc["tf_mobilenetv3_small_minimal_100"].tolist() == [63.07, 48.27]
    assert eng.loc["tf_efficientnet_b7_ap"].tolist() == [85.46, 75.11]


def test_printed_intervals_are_clopper_pearson_of_the_printed_accuracies():
    sizes = published.reported()["recht2019"]["test_set_sizes"]
    for name, n_orig, n_new in [
        ("recht2019_cifar10", sizes["cifar10_orig"], sizes["cifar10_new"]),
        ("recht2019_cifar10_balanced", sizes["cifar10_orig"], sizes["cifar10_new_balanced"]),
        ("recht2019_imagenet_top1_threshold0.7", sizes["imagenet_orig"], sizes["imagenet_new"]),
    ]:
        t = published.load_table(name)
        for prefix, n in (("orig", n_orig), ("new", n_new)):
            low, high = linfit.clopper_pearson(np.round(t[f"{prefix}_acc"] / 100 * n).astype(int), n)
            # printed accuracies are rounded to 0.1 point, so the recomputed bounds can move by that much
            assert np.abs(100 * low - t[f"{prefix}_ci_low"]).max() <= 0.1 + 1e-9, (name, prefix)
            assert np.abs(100 * high - t[f"{prefix}_ci_high"]).max() <= 0.1 + 1e-9, (name, prefix)


def test_provenance_notes():
    for name in published.list_tables():
        note = published.provenance(name)
        assert note["name"] == name
        assert "Table" in note["source"] and note["caption"] and note["paper"]


def test_unknown_table_names_the_choices():
    with pytest.raises(ValueError, match="unknown table 'cifar11'.*recht2019_cifar10"):
        published.load_table("cifar11")


def test_loaded_tables_are_copies():
    a = published.load_table("recht2019_cifar10")
    a.loc[0, "orig_acc"] = -1
    assert published.load_table("recht2019_cifar10").loc[0, "orig_acc"] == 98.4


def test_mlm_table1_as_printed():
    # MLM paper §4.2, Table 1: "on the order of 1e-14 to 1e-15" for seven digits, about 1e-4 for 5, 6 and 8
    t1 = published.reported()["mlm"]["table1_centroid_shift"]
    d = np.asarray(t1["distance"])
    assert d.shape == (10,) and d[0] == 1.1694e-14 and d[6] == 2.3118e-04
    large = np.flatnonzero(d > 1e-6)
    assert large.tolist() == [5, 6, 8]
    assert (d[large] > 1e-4).all() and (np.delete(d, large) < 1e-13).all()
