"""The headline results of the two chapters that train their own networks, with their default parameters.

These are the numbers the book prints; each assertion is a finding of the paper the chapter reproduces
(or the calibration the chapter relies on), checked on a full default run (about 2½ minutes together).
"""

import json

import numpy as np
import pytest
from conftest import copy_project, shifteval

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("defaults") / "project")


def _run(project, chapter):
    out = shifteval("run", chapter, cwd=project, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads((project / "book" / "chapters" / f"{chapter}.results.json").read_text())


def test_mlm_accuracy_falls_linearly_to_about_half(project):
    """The severity table's calibration (Sikar et al. §4: mean accuracy ~98% at level 1 to ~49% at 10)."""
    res = _run(project, "mlm")
    acc = np.array(res["accuracy_by_level"])
    assert np.all(np.diff(acc) < 0), acc
    assert res["accuracy_clean"] - 0.03 <= acc[0] <= res["accuracy_clean"]
    assert 0.44 <= acc[-1] <= 0.54
    assert np.corrcoef(np.arange(1, 11), acc)[0, 1] < -0.99
    for name, per_level in res["accuracy"].items():  # every perturbation, not only their mean, degrades
        assert per_level[-1] < per_level[0] - 0.25, name
    m = np.array(res["mlm_mean"])
    assert np.allclose(m.sum(axis=1), 1) and np.allclose(np.diag(m), 0)


def test_ood_autoeval_energy_detection_helps_at_ten_percent_ood(project):
    """Zhu et al. Table 1: with 10% OOD images, OOD-aware AutoEval has a lower RMSE than AutoEval; and the
    OOD share sweep (their Figure 4): the advantage grows with the share."""
    res = _run(project, "ood-autoeval")
    rmse = res["rmse_at_10pct_ood"]
    assert rmse["autoeval_energy_ood"] < rmse["autoeval"]
    shares = res["ood_share_sweep"]
    gain = {float(s): row["autoeval"] - row["autoeval_energy_ood"] for s, row in shares.items()}
    assert gain[0.4] > gain[0.1] > 0
    # outlier exposure makes the detector better than the classifier's own energies on every source
    det = res["detection"]
    for source in ("natural_patches", "letters", "textures"):
        assert det[f"detector (outlier exposure): {source}"]["AUROC"] > det[f"classifier: {source}"]["AUROC"], source
