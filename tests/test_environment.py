"""The environment files agree, and the torchvision shim makes `import timm` work here."""

import re
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

CONDA_TO_PIP = {"pytorch": "torch"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement.strip(), maxsplit=1)[0].lower()


def test_environment_yml_names_the_same_packages_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip_runtime = {_name(r) for r in project["dependencies"]}
    pip_test = {_name(r) for r in project["optional-dependencies"]["test"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {CONDA_TO_PIP.get(_name(d), _name(d)) for d in env["dependencies"] if isinstance(d, str)}
    # packages conda-forge lacks come from pip, in the file's own pip section
    pip_section = next((d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d), [])
    conda |= {_name(r) for r in pip_section if not r.startswith("-")}
    conda -= {"python", "pip"}
    assert conda == pip_runtime | pip_test, (
        f"only in environment.yml: {sorted(conda - pip_runtime - pip_test)}; "
        f"only in pyproject.toml: {sorted((pip_runtime | pip_test) - conda)}"
    )


def test_jupyter_book_stays_below_2():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (jb,) = [d for d in deps if _name(d) == "jupyter-book"]
    assert "<2" in jb


@pytest.mark.slow
def test_import_timm_works_through_the_shim():
    code = (
        "from shifteval.utils import compat\n"
        "timm = compat.import_timm()\n"
        "import torch\n"
        "m = timm.create_model('resnet18', in_chans=1, num_classes=10, pretrained=False)\n"
        "print(tuple(m(torch.zeros(2, 1, 16, 16)).shape), compat.applied)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("(2, 10)")


def test_shim_is_a_no_op_when_nothing_is_broken():
    code = (
        "import sys, types\n"
        "sys.modules['torchvision'] = types.ModuleType('torchvision')\n"
        "from shifteval.utils import compat\n"
        "print(compat.ensure_torchvision())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
