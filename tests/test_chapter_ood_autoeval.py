"""The ood-autoeval chapter: smoke results, real-format inputs, error messages."""

import json

import numpy as np
import pytest
from conftest import run_default, shifteval, write_idx_dataset


def test_ood_autoeval_smoke_results(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "ood-autoeval.results.json").read_text())
    rmse = res["rmse_at_10pct_ood"]
    assert {
        "autoeval",
        "autoeval_energy_ood",
        "rotation",
        "atc",
        "doc",
        "softmax_0.8",
        "softmax_0.9",
        "average_confidence",
    } <= set(rmse)
    assert all(0 <= v <= 100 for v in rmse.values())
    assert len(res["table1"]) == 3 * 3 + 1 and len(res["table2"]) == 3 * 3 + 1  # ID × OOD pairs + all sets
    sweep = res["threshold_sweep"]
    kept = [row["ood_kept"] for row in sweep]
    excluded = [row["id_excluded"] for row in sweep]
    # a higher threshold keeps more OOD images and excludes fewer ID images
    assert kept == sorted(kept) and excluded == sorted(excluded, reverse=True)
    assert set(res["unseen_transforms"]) == {"v1-A (cutout)", "v1-B (shear + contrast)"}
    detection = res["detection"]
    assert {
        f"{d}: {s}"
        for d in ("classifier", "detector (outlier exposure)")
        for s in ("v1", "natural_patches", "letters", "textures")
    } == set(detection)
    assert all(0 <= row["share kept"] <= 1 for row in detection.values())
    assert all(0 <= row["AUROC"] <= 1 for key, row in detection.items() if not key.endswith("v1"))


def test_ood_autoeval_runs_on_mnist_and_fashion_mnist_idx_files(tmp_path):
    """real.yaml's path: MNIST as the training distribution, Fashion-MNIST as a real OOD source (tiny
    files in the official idx format synthesized here)."""
    from conftest import copy_project

    from shifteval import autoeval as ae
    from shifteval.datasets.world import base_digits

    digits, labels = base_digits(28)
    write_idx_dataset(tmp_path / "mnist", np.round(digits * 255).astype(np.uint8), labels, split_at=1300)
    clothes = np.round(ae.ood_images("textures", 300, side=28, seed=5) * 255).astype(np.uint8)
    write_idx_dataset(tmp_path / "fashion", clothes, np.zeros(300, int), split_at=100)
    project = copy_project(tmp_path / "project")
    small = [
        "epochs=2",
        "second_epochs=1",
        "meta_sets=8",
        "meta_val_sets=3",
        "meta_set_size=60",
        "ood_pool=150",
        "set_size=100",
        "repeats=1",
        "outlier_exposure=200",
        "detector_epochs=1",
        "percentile_grid=[99, 99.5]",
        "ood_share_grid=[0.0, 0.1]",
        "id_sources=[test, 'test+fog@3']",
    ]
    out = shifteval(
        "run",
        "ood-autoeval",
        "--params",
        "real",
        "-p",
        f"data_dir={tmp_path / 'mnist'}",
        "-p",
        f"ood_dirs={{fashion-mnist: {tmp_path / 'fashion'}}}",
        *[a for p in small for a in ("-p", p)],
        cwd=project,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads((project / "book" / "chapters" / "ood-autoeval.results.json").read_text())
    assert res["data"].startswith("MNIST idx files") and res["ood_sources"][-1] == "fashion-mnist"
    assert "test + fashion-mnist" in res["table1"] and "test+fog@3 + fashion-mnist" in res["table1"]
    assert set(res["unseen_transforms"]) == {"test-A (cutout)", "test-B (shear + contrast)"}
    assert 0 <= res["rmse_at_10pct_ood"]["autoeval_energy_ood"] <= 100


def test_ood_autoeval_names_a_missing_ood_file(tmp_path):
    from conftest import copy_project

    project = copy_project(tmp_path / "project")
    out = shifteval(
        "run",
        "ood-autoeval",
        "--params",
        "smoke",
        "-p",
        f"ood_dirs={{fashion-mnist: {tmp_path}}}",
        cwd=project,
    )
    assert out.returncode == 1
    assert "fashion-mnist: missing file" in out.stderr and "t10k-images-idx3-ubyte" in out.stderr


@pytest.mark.slow
def test_ood_autoeval_energy_detection_helps_at_ten_percent_ood(default_project):
    """Zhu et al. Table 1: with 10% OOD images, OOD-aware AutoEval has a lower RMSE than AutoEval; and the
    OOD share sweep (their Figure 4): the advantage grows with the share."""
    res = run_default(default_project, "ood-autoeval")
    rmse = res["rmse_at_10pct_ood"]
    assert rmse["autoeval_energy_ood"] < rmse["autoeval"]
    shares = res["ood_share_sweep"]
    gain = {float(s): row["autoeval"] - row["autoeval_energy_ood"] for s, row in shares.items()}
    assert gain[0.4] > gain[0.1] > 0
    # outlier exposure makes the detector better than the classifier's own energies on every source
    det = res["detection"]
    for source in ("natural_patches", "letters", "textures"):
        assert (
            det[f"detector (outlier exposure): {source}"]["AUROC"] > det[f"classifier: {source}"]["AUROC"]
        ), source
