"""The ood-autoeval chapter: the book's results, findings and claims, real-format and real data, errors."""

import json
import re

import numpy as np
import pytest
from conftest import copy_project, run_default, shifteval, write_idx_dataset

METHODS = {
    "autoeval",
    "autoeval_energy_ood",
    "rotation",
    "atc",
    "doc",
    "softmax_0.8",
    "softmax_0.9",
    "average_confidence",
}
SMALL = [
    "epochs=1",
    "second_epochs=1",
    "meta_sets=8",
    "meta_set_sweep=[4, 8]",
    "meta_val_sets=3",
    "meta_set_size=60",
    "ood_pool=150",
    "set_size=100",
    "repeats=1",
    "outlier_exposure=300",
    "detector_epochs=1",
    "percentile_grid=[99, 99.5]",
    "ood_share_grid=[0.0, 0.1, 0.4]",
    "id_sources=[test, 'test+fog@3']",
]


def test_ood_autoeval_results_on_the_book_page(built_book):
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "ood-autoeval.results.json").read_text())
    rmse = res["rmse_at_10pct_ood"]
    assert METHODS <= set(rmse) and all(0 <= v <= 100 for v in rmse.values())
    assert len(res["table1"]) == 5 * 3 + 1 and len(res["table2"]) == 5 * 3 + 1  # ID × OOD pairs + all sets
    kept = [row["ood_kept"] for row in res["threshold_sweep"]]
    excluded = [row["id_excluded"] for row in res["threshold_sweep"]]
    assert kept == sorted(kept) and excluded == sorted(excluded, reverse=True)
    assert set(res["unseen_transforms"]) == {"v1-A (cutout)", "v1-B (shear + contrast)"}
    assert set(res["detector_auroc"]) == {"natural_patches", "letters", "textures"}
    assert res["pools"]["base_digit_overlap"] == {"meta": 0, "validation": 0}
    assert len(res["claims"]) >= 6 and all(isinstance(c["holds"], bool) for c in res["claims"])
    _check_by_source(res, ["v1", "matchedfrequency", "topimages", "v1+fog@3", "v1+gaussian_noise@3"])
    assert res["id_shift_severity"]["made_for"] == "replication world"
    _check_table2_paper(res)
    assert len(res["findings"]) >= 10 and {f["verdict"] for f in res["findings"]} >= {
        "reproduced",
        "not testable",
    }
    doc = res["doc_error"]
    assert doc["error"] == pytest.approx(res["clean_bias"]["doc"], abs=0.01) and doc["se"] > 0


def _check_table2_paper(res):
    """Zhu et al.'s Table 2 as the chapter quotes it: each gain is its own pair's AutoEval minus theirs, and
    the sentence gives the gains in the order of the pairs whose values it gives."""
    rows = res["table2_paper"]
    assert [r["pair"] for r in rows] == ["CIFAR-10.1/ImageNet", "ImageNet/SVHN"]
    assert [r["gain"] for r in rows] == [round(r["autoeval"] - r["ours"], 2) for r in rows] == [1.73, 1.22]
    text = res["numbers"]["ood-autoeval-t2-paper"]
    values, gains = text.split("gains of")
    assert re.findall(r"\d+\.\d\d", gains) == [f"{r['gain']:.2f}" for r in rows]
    positions = [values.index(f"{r['ours']:.2f} against {r['autoeval']:.2f} on {r['pair']}") for r in rows]
    assert positions == sorted(positions)


def _check_by_source(res, id_sources):
    """Table 1 per ID source, the ID accuracies and the remedy, as the chapter records them."""
    rows = ["clean", *id_sources[1:]]
    assert set(res["id_sources"]) == set(id_sources) and all(0 <= a <= 1 for a in res["id_sources"].values())
    assert res["clean_source"] == id_sources[0]
    for key in ("table1_by_source", "table2_by_source"):
        table = res[key]
        assert set(table) == set(rows)
        for row in table.values():
            assert {"autoeval", "autoeval_energy_ood", "excluded_share", "excluded_accuracy"} <= set(row)
            assert 0 <= row["excluded_share"] <= 1
    assert set(res["remedy"]) == {
        "autoeval_energy_ood",
        "autoeval_energy_ood_meta_tau",
        "excluded_share",
        "ood_kept",
    }
    paper = res["remedy"]["autoeval_energy_ood"]
    assert paper["all sets"] == pytest.approx(res["rmse_at_10pct_ood"]["autoeval_energy_ood"])
    assert {r: paper[r] for r in rows} == {r: res["table1_by_source"][r]["autoeval_energy_ood"] for r in rows}


@pytest.mark.slow
def test_ood_autoeval_default_findings(default_project):
    """Zhu et al. Table 1 and Figure 4 on the default run, a detector as good as Liu et al.'s fine-tuning
    makes it, held-out pools that are held out, and every claim true."""
    res = run_default(default_project, "ood-autoeval")
    claims = res["claims"]
    assert len(claims) >= 6 and all(c["holds"] for c in claims), [c["id"] for c in claims if not c["holds"]]
    det = res["detector_auroc"]
    assert det["letters"] > 0.95 and det["natural_patches"] > 0.95 and 0.5 < det["textures"] <= 1
    for source in ("natural_patches", "letters", "textures"):  # better than the classifier's own energies
        assert (
            res["detection"][f"detector (outlier exposure): {source}"]["AUROC"]
            > res["detection"][f"classifier: {source}"]["AUROC"]
        )
    assert res["pools"]["base_digit_overlap"] == {"meta": 0, "validation": 0}
    bias = res["clean_bias"]
    assert {"atc", "doc", "autoeval"} <= set(bias) and all(
        abs(bias[m]) < 3 for m in ("atc", "doc", "autoeval")
    )
    rmse = res["rmse_at_10pct_ood"]
    assert rmse["autoeval_energy_ood"] < rmse["autoeval"]
    assert rmse["autoeval_energy_ood"] < min(v for k, v in rmse.items() if not k.startswith("autoeval"))
    assert min(res["id_sources"].values()) >= 0.4
    by = res["table1_by_source"]
    assert by["clean"]["autoeval_energy_ood"] < by["clean"]["autoeval"]  # the paper's Table 1 setting
    shifted = max(("v1+fog@3", "v1+gaussian_noise@3"), key=lambda s: by[s]["excluded_share"])
    assert by[shifted]["excluded_share"] > by["clean"]["excluded_share"] and by[shifted]["ood_aware_bias"] < 0
    shares = res["ood_share_sweep"]
    gain = {float(s): row["autoeval"] - row["autoeval_energy_ood"] for s, row in shares.items()}
    assert gain[0.4] > gain[0.1] > 0


def _run_real(project, mnist, fashion, extra=()):
    return shifteval(
        "run", "ood-autoeval", "--params", "real", "-p", f"data_dir={mnist}",
        "-p", f"ood_dirs={{fashion-mnist: {fashion}}}", *[a for p in [*SMALL, *extra] for a in ("-p", p)],
        cwd=project,
    )  # fmt: skip


@pytest.mark.slow
def test_ood_autoeval_runs_on_mnist_and_fashion_mnist_idx_files(tmp_path):
    """real.yaml's path on tiny files in the official idx format synthesized here."""
    from shifteval.datasets import ood
    from shifteval.datasets.world import base_digits

    digits, labels = base_digits(28)
    write_idx_dataset(tmp_path / "mnist", np.round(digits * 255).astype(np.uint8), labels, split_at=1300)
    clothes = np.round(ood.ood_images("textures", 300, side=28, rng=5) * 255).astype(np.uint8)
    write_idx_dataset(tmp_path / "fashion", clothes, np.zeros(300, int), split_at=100)
    project = copy_project(tmp_path / "project")
    out = _run_real(project, tmp_path / "mnist", tmp_path / "fashion")
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads((project / "book" / "chapters" / "ood-autoeval.results.json").read_text())
    assert res["data"].startswith("MNIST idx files") and res["ood_sources"][-1] == "fashion-mnist"
    assert "test + fashion-mnist" in res["table1"] and "test+fog@3 + fashion-mnist" in res["table1"]
    assert set(res["unseen_transforms"]) == {"test-A (cutout)", "test-B (shear + contrast)"}
    assert 0 <= res["rmse_at_10pct_ood"]["autoeval_energy_ood"] <= 100
    assert "fashion-mnist" in res["detector_auroc"]
    _check_by_source(res, ["test", "test+fog@3"])


@pytest.mark.heavy
@pytest.mark.slow
def test_ood_autoeval_real_set_on_the_published_mnist_and_fashion_mnist(tmp_path, real_data):
    """The `real` parameter set on the real MNIST and Fashion-MNIST files, fetched by `shifteval data get`
    from a local mirror of ../shared/realdata (reduced epochs and sets; the backbones learn from 20% of
    MNIST's 60,000 training digits, the rest is held out for meta-sets)."""
    mnist, fashion = real_data / "mnist", real_data / "fashion-mnist"
    project = copy_project(tmp_path / "project")
    reduced = ["ood_pool=500", "set_size=400", "meta_set_size=200", "holdout_fraction=0.8"]
    out = _run_real(project, mnist, fashion, reduced)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads((project / "book" / "chapters" / "ood-autoeval.results.json").read_text())
    assert res["data"].startswith("MNIST idx files") and res["pools"]["sizes"]["fit"] == 12000
    assert res["pools"]["base_digit_overlap"]["validation"] < 10  # MNIST has almost no duplicate images
    assert res["clean_bias"] and len(res["claims"]) >= 6
    assert 0.5 < res["detector_auroc"]["fashion-mnist"] <= 1
    assert res["id_shift_severity"]["made_for"] == "mnist"  # calibrated on MNIST, not the world's table
    assert min(res["id_sources"].values()) >= 0.4, res["id_sources"]
    _check_by_source(res, ["test", "test+fog@3"])  # the reduced run's ID sources (SMALL)


@pytest.mark.slow
def test_ood_autoeval_names_a_missing_ood_file(tmp_path):
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
    assert "fashion-mnist" in out.stderr and "t10k-images-idx3-ubyte" in out.stderr
