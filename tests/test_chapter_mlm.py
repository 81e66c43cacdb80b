"""The mlm chapter: smoke results, real-format inputs, error messages."""

import json

import numpy as np
import pytest
from conftest import run_default, shifteval, write_idx_dataset


def test_mlm_smoke_results(built_book):
    import numpy as np

    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "mlm.results.json").read_text())
    assert res["levels"] == list(range(1, 11)) and len(res["perturbations"]) == 12
    assert len(res["accuracy_by_level"]) == 10 and all(0 <= a <= 1 for a in res["accuracy_by_level"])
    assert all(len(v) == 10 for v in res["accuracy"].values())
    # the mean over perturbations equals accuracy_by_level
    assert np.allclose(np.mean(list(res["accuracy"].values()), axis=0), res["accuracy_by_level"])
    # stronger perturbation, lower accuracy: level 10 well below level 1 even for the smoke model
    assert res["accuracy_by_level"][-1] < res["accuracy_by_level"][0] - 0.1
    for key in ("mlm_clean", "mlm_mean"):
        m = np.array(res[key])
        assert (
            m.shape == (10, 10) and np.allclose(m.sum(1), 1) and np.allclose(np.diag(m), 0) and (m >= 0).all()
        )
    assert np.array(res["mlm_std"]).shape == (10, 10)
    assert set(res["rank_correlation"]) == {
        "MLM (clean) vs observed",
        "MLM at the level vs observed",
        "clean confusion rates vs observed",
    }
    assert res["n_parameters"] == 71_754  # the paper's CNN on 16×16 inputs


def test_mlm_runs_on_mnist_idx_files(tmp_path):
    """real.yaml's path: MNIST from its four official idx files (tiny ones synthesized here)."""
    import numpy as np
    from conftest import copy_project

    from shifteval.datasets.world import base_digits

    digits, labels = base_digits(28)
    data = tmp_path / "mnist"
    write_idx_dataset(data, np.round(digits[:1500] * 255).astype(np.uint8), labels[:1500], split_at=1200)
    project = copy_project(tmp_path / "project")
    out = shifteval(
        "run",
        "mlm",
        "--params",
        "real",
        "-p",
        f"data_dir={data}",
        "-p",
        "epochs=3",
        "-p",
        "perturbations=[fog, pixelation]",
        "-p",
        "figure_perturbation=fog",
        cwd=project,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads((project / "book" / "chapters" / "mlm.results.json").read_text())
    assert res["n_train"] == 1200 and res["n_test"] == 300 and res["n_parameters"] == 206_922
    assert res["perturbations"] == ["fog", "pixelation"] and len(res["accuracy_by_level"]) == 10


def test_mlm_names_a_wrong_idx_file(tmp_path):
    from conftest import copy_project

    data = tmp_path / "mnist"
    data.mkdir()
    (data / "train-images-idx3-ubyte").write_bytes(b"\x00\x00\x08\x01" + b"\x00" * 8)
    project = copy_project(tmp_path / "project")
    out = shifteval("run", "mlm", "--params", "real", "-p", f"data_dir={data}", cwd=project)
    assert out.returncode == 1
    assert "train-images-idx3-ubyte" in out.stderr and "bad magic number" in out.stderr


@pytest.mark.slow
def test_mlm_accuracy_falls_linearly_to_about_half(default_project):
    """The severity table's calibration (Sikar et al. §4: mean accuracy ~98% at level 1 to ~49% at 10)."""
    res = run_default(default_project, "mlm")
    acc = np.array(res["accuracy_by_level"])
    assert np.all(np.diff(acc) < 0), acc
    assert res["accuracy_clean"] - 0.03 <= acc[0] <= res["accuracy_clean"]
    assert 0.44 <= acc[-1] <= 0.54
    assert np.corrcoef(np.arange(1, 11), acc)[0, 1] < -0.99
    for name, per_level in res["accuracy"].items():  # every perturbation, not only their mean, degrades
        assert per_level[-1] < per_level[0] - 0.25, name
    m = np.array(res["mlm_mean"])
    assert np.allclose(m.sum(axis=1), 1) and np.allclose(np.diag(m), 0)
