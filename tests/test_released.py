"""Released prediction formats: synthetic files in the official layouts, and the real ImageNetV2 release."""

import json
import subprocess
import sys
import tarfile
import warnings

import numpy as np
import pytest
from conftest import ROOT, SHARED

from shifteval.datasets import released
from shifteval.linfit import perimage

REAL = SHARED / "realdata" / "imagenetv2"
WNIDS = ["n0000", "n0001", "n0002"]
PRED_A = "data/predictions/imagenetv2-b-33/a.npy"
SPEC_B = "data/datasets/imagenetv2-b-33.json"


def write_imagenet(root, labels: dict, preds: dict, wnids=WNIDS):
    """The ImageNetV2 repository layout: preds[dataset][model_file_stem] = array N×5."""
    (root / "data" / "metadata").mkdir(parents=True)
    info = [{"cid": i, "wnid": w, "synset": [w], "gloss": ""} for i, w in enumerate(wnids)]
    (root / "data" / "metadata" / "class_info.json").write_text(json.dumps(info))
    (root / "data" / "datasets").mkdir()
    for d, y in labels.items():
        spec = {"image_filenames": [[f"img{i}", wnids[c]] for i, c in enumerate(y)]}
        (root / "data" / "datasets" / f"{d}.json").write_text(json.dumps(spec))
        (root / "data" / "predictions" / d).mkdir(parents=True)
        for model, arr in preds[d].items():
            np.save(root / "data" / "predictions" / d / f"{model}.npy", np.asarray(arr))
    return root


def _top5(top1, others=(5, 6, 7, 8)):
    """N×5 predictions whose column 0 is ``top1`` and other columns never-correct ids."""
    return np.column_stack([np.asarray(top1), np.tile(others, (len(top1), 1))]).astype(np.int64)


@pytest.fixture
def tiny(tmp_path):
    labels = {"imagenet-validation-original": [0, 1, 2, 0], "imagenetv2-b-33": [0, 1]}
    preds = {
        "imagenet-validation-original": {"a": _top5([0, 1, 2, 1]), "b": _top5([0, 0, 0, 0])},
        "imagenetv2-b-33": {"a": _top5([0, 0]), "b": _top5([2, 2])},
    }
    preds["imagenetv2-b-33"]["b"][1, 3] = 1  # b's 4th guess on image 1 is right: top-5 but not top-1
    return write_imagenet(tmp_path / "rel", labels, preds)


def test_accuracy_table_by_hand(tiny):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean release raises no ReleaseWarning
        table = released.accuracy_table("imagenetv2-predictions", tiny)
    t = table.set_index(["dataset", "model"])
    assert t.loc[("imagenet-validation-original", "a"), "top1"] == 75.0
    assert t.loc[("imagenet-validation-original", "b"), "top1"] == 50.0
    assert t.loc[("imagenetv2-b-33", "a"), ["top1", "top5"]].tolist() == [50.0, 50.0]
    assert t.loc[("imagenetv2-b-33", "b"), ["top1", "top5"]].tolist() == [0.0, 50.0]
    assert t.loc[("imagenetv2-b-33", "a"), "n"] == 2 and table.attrs["warnings"] == []
    corr = released.load("imagenetv2-predictions", tiny)
    assert corr.models == ("a", "b") and corr.labels["imagenetv2-b-33"].tolist() == [0, 1]
    assert corr.top1["imagenet-validation-original"].tolist() == [
        [True] * 3 + [False],
        [True, False, False, True],
    ]


def test_reversed_columns_repaired_and_reported(tmp_path):
    y = np.arange(30) % 3
    rev = _top5(y)[:, ::-1]  # top-1 stored last
    rel = write_imagenet(
        tmp_path, {"imagenetv2-b-33": y}, {"imagenetv2-b-33": {"fv_16k": rev, "ok": _top5(y)}}
    )
    with pytest.warns(released.ReleaseWarning, match="reverse order; reversed them"):
        table = released.accuracy_table("imagenetv2-predictions", rel)
    assert table.top1.tolist() == [100.0, 100.0]
    assert any("fv_16k" in w for w in table.attrs["warnings"])
    with pytest.warns(released.ReleaseWarning, match="left as stored"):
        raw = released.accuracy_table("imagenetv2-predictions", rel, repair=False)
    assert raw.set_index("model").top1.to_dict() == {"fv_16k": 0.0, "ok": 100.0}


def test_scrambled_columns_reported_not_repaired(tmp_path):
    y = np.arange(30) % 3
    scrambled = _top5(y)[:, [1, 2, 0, 3, 4]]  # top-1 in the middle: no known repair
    rel = write_imagenet(tmp_path, {"imagenetv2-b-33": y}, {"imagenetv2-b-33": {"m": scrambled}})
    with pytest.warns(released.ReleaseWarning, match="not a ranking; left as stored"):
        table = released.accuracy_table("imagenetv2-predictions", rel)
    assert table.top1.tolist() == [0.0] and table.top5.tolist() == [100.0]
    # on a handful of images a later column may beat column 0 by chance: no warning then
    few = write_imagenet(
        tmp_path / "few", {"imagenetv2-b-33": y[:4]}, {"imagenetv2-b-33": {"m": scrambled[:4]}}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        released.load("imagenetv2-predictions", few)


def test_renamed_and_missing_models_reported(tmp_path):
    y = [0, 1]
    rel = write_imagenet(
        tmp_path,
        {"imagenet-validation-original": y, "imagenetv2-a-44": y},
        {
            "imagenet-validation-original": {"fv_64k": _top5(y), "only_here": _top5(y)},
            "imagenetv2-a-44": {"fv_64k_model": _top5(y)},
        },
    )
    with pytest.warns(released.ReleaseWarning) as record:
        corr = released.load("imagenetv2-predictions", rel)
    messages = " ".join(str(r.message) for r in record)
    assert corr.models == ("fv_64k",)
    assert "fv_64k_model.npy is model fv_64k" in messages and "only_here" in messages
    assert len(corr.warnings) == 2


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda r: np.save(r / PRED_A, np.zeros((2, 5))), r"a\.npy.*integer array"),
        (lambda r: np.save(r / PRED_A, np.zeros((3, 5), int)), r"shape \(2, 5\)"),
        (lambda r: np.save(r / PRED_A, np.full((2, 5), 1000)), "0..999"),
        (lambda r: (r / SPEC_B).write_text('{"image_filenames": [["x", "n9"]]}'),
         r"imagenetv2-b-33\.json: unknown wnid"),
        (lambda r: (r / SPEC_B).unlink(), r"missing file .*imagenetv2-b-33\.json"),
        (lambda r: (r / "data/metadata/class_info.json").unlink(), "missing file .*class_info.json"),
    ],
)  # fmt: skip
def test_wrong_layout_errors_name_file_and_expectation(tiny, mutate, match):
    mutate(tiny)
    with pytest.raises(released.ReleaseFormatError, match=match):
        released.load("imagenetv2-predictions", tiny)


def test_missing_folders_and_unknown_release(tmp_path):
    with pytest.raises(released.ReleaseFormatError, match="missing folder"):
        released.load("imagenetv2-predictions", tmp_path / "nope")
    (tmp_path / "data" / "metadata").mkdir(parents=True)
    (tmp_path / "data" / "metadata" / "class_info.json").write_text("[]")
    with pytest.raises(released.ReleaseFormatError, match="data/predictions"):
        released.load("imagenetv2-predictions", tmp_path)
    with pytest.raises(ValueError, match="unknown release"):
        released.load("cifar10-predictions", tmp_path)


def write_cifar101(root, labels: dict, preds: dict):
    """The CIFAR-10.1 layout: datasets/cifar10.1_<v>_labels.npy, model_predictions/<v>_predictions/."""
    (root / "datasets").mkdir(parents=True)
    for v, y in labels.items():
        if v != "original":
            np.save(root / "datasets" / f"cifar10.1_{v}_labels.npy", np.asarray(y, np.int64))
    for v, models in preds.items():
        folder = root / "model_predictions" / f"{v}_predictions"
        folder.mkdir(parents=True)
        for m, p in models.items():
            (folder / f"{m}_predictions.json").write_text(json.dumps(list(p)))
    return root


def test_cifar101_layout(tmp_path):
    labels = {"original": [0, 1, 2, 3], "v4": [0, 1, 2], "v6": [9, 9]}
    preds = {
        "original": {"resnet": [0, 1, 2, 0], "vgg": [0, 0, 0, 0]},
        "v4": {"resnet": [0, 1, 0], "vgg": [0, 0, 0]},
        "v6": {"resnet": [9, 9], "vgg": [9, 0]},
    }
    root = write_cifar101(tmp_path, labels, preds)
    t = released.accuracy_table("cifar10.1-predictions", root).set_index(["dataset", "model"])
    assert list(t.index.get_level_values(0).unique()) == ["v4", "v6"]
    assert t.loc[("v4", "resnet"), "top1"] == pytest.approx(200 / 3) and t.loc[("v6", "vgg"), "top1"] == 50.0
    assert t.top5.isna().all()
    t = released.accuracy_table("cifar10.1-predictions", root, original_labels=labels["original"])
    t = t.set_index(["dataset", "model"])
    assert t.loc[("original", "resnet"), "top1"] == 75.0 and t.loc[("original", "vgg"), "n"] == 4
    with pytest.raises(ValueError, match="original_labels"):
        released.load("cifar10.1-predictions", root, datasets=["original"])
    (root / "model_predictions" / "v6_predictions" / "vgg_predictions.json").write_text("[9, 0, 1]")
    with pytest.raises(released.ReleaseFormatError, match=r"vgg_predictions\.json: expected a list of 2"):
        released.load("cifar10.1-predictions", root)


def test_packed_roundtrip_is_deterministic(tiny, tmp_path):
    corr = released.load("imagenetv2-predictions", tiny)
    a = released.save_correctness(corr, tmp_path / "a.npz")
    b = released.save_correctness(corr, tmp_path / "b.npz")
    assert a.read_bytes() == b.read_bytes()
    back = released.read_correctness(a)
    assert back.models == corr.models and back.datasets == corr.datasets
    for d in corr.datasets:
        assert np.array_equal(back.top1[d], corr.top1[d]) and np.array_equal(back.top5[d], corr.top5[d])
        assert np.array_equal(back.labels[d], corr.labels[d])


def test_correctness_validates_shapes():
    with pytest.raises(ValueError, match="bool array of shape"):
        released.Correctness(("m",), ("d",), {"d": np.zeros((1, 3))}, {"d": None}, {"d": np.zeros(3, int)})


def test_shipped_table_matches_the_paper():
    corr = released.imagenetv2_correctness()
    assert len(corr.models) == 67 and corr.datasets == released.IMAGENETV2_DATASETS
    assert {len(y) for y in corr.labels.values()} == {50_000, 10_000}
    assert any("reverse order" in w for w in corr.warnings)
    comparison, max_diff = perimage.compare_with_paper(corr)
    assert len(comparison) == 6 * 67 * 9
    assert comparison.agrees.all(), comparison[~comparison.agrees]
    assert max_diff <= 0.05 + 1e-9


# --- real release (../shared/realdata), extracted once per module -------------------------------


@pytest.fixture(scope="module")
def real_release(tmp_path_factory):
    if not REAL.is_dir():
        pytest.skip(f"real data folder {REAL} is absent")
    root = tmp_path_factory.mktemp("imagenetv2")
    with tarfile.open(REAL / "predictions.tar.xz") as tar:
        tar.extractall(root, filter="data")
    for sub in ("datasets", "metadata"):
        for f in (REAL / "data" / sub).iterdir():
            (root / "data" / sub).mkdir(parents=True, exist_ok=True)
            (root / "data" / sub / f.name).write_bytes(f.read_bytes())
    (root / "LICENSE").write_bytes((REAL / "LICENSE").read_bytes())
    return root


def test_real_release_recomputes_tables_14_to_19(real_release):
    with pytest.warns(released.ReleaseWarning):
        corr = released.load("imagenetv2-predictions", real_release)
    table = corr.accuracy_table().set_index(["model", "dataset"])
    assert round(table.loc[("resnet152", "imagenet-validation-original"), "top1"], 1) == 78.3
    assert round(table.loc[("resnet152", "imagenetv2-b-33"), "top1"], 1) == 67.0
    comparison, max_diff = perimage.compare_with_paper(corr)
    assert comparison.agrees.all(), comparison[~comparison.agrees]
    assert max_diff <= 0.05 + 1e-9
    fv = table.loc[("fv_16k", "imagenetv2-b-33")]
    assert round(fv.top1, 1) == 19.2  # the paper's value; 2.5 if read as stored


def test_real_release_without_repair_misses_the_paper(real_release):
    with pytest.warns(released.ReleaseWarning) as record:
        corr = released.load("imagenetv2-predictions", real_release, repair=False)
    assert sum("left as stored" in str(r.message) for r in record) == 3  # fv_16k on the three new sets
    comparison, _ = perimage.compare_with_paper(corr)
    wrong = comparison[~comparison.agrees & ~comparison.column.str.endswith("_rank")]
    assert set(wrong.model) == {"fv_16k"} and set(wrong.column) >= {"new_acc", "gap"}
    assert set(wrong.table) == set(perimage.PAPER_TABLES.values()) - {  # top-5 sets are order-free
        t for t in perimage.PAPER_TABLES.values() if "top5" in t
    }


def test_shipped_table_rederives_byte_for_byte(real_release, tmp_path):
    script = ROOT / "scripts" / "derive_imagenetv2_correctness.py"
    out = subprocess.run(
        [sys.executable, str(script), str(real_release), "--out-dir", str(tmp_path)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    shipped = ROOT / "src" / "shifteval" / "data" / "released"
    for name in (
        "imagenetv2_correctness.npz",
        "imagenetv2_correctness.json",
        "imagenetv2_correctness.LICENSE",
    ):
        assert (tmp_path / name).read_bytes() == (shipped / name).read_bytes(), name
