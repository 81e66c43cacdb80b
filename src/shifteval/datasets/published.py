"""Per-model accuracy tables transcribed from the papers.

Each table is a CSV in ``shifteval/data/published`` with a YAML provenance note beside it
(paper, table number, caption, units). Accuracies are in percent, exactly as printed.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import numpy as np
import pandas as pd
import yaml

_PACKAGE = "shifteval.data.published"


def _files():
    return resources.files(_PACKAGE)


def list_tables() -> list[str]:
    """Names of the transcribed tables, sorted."""
    return sorted(p.name.removesuffix(".csv") for p in _files().iterdir() if p.name.endswith(".csv"))


def _check(name: str) -> None:
    if name not in list_tables():
        raise ValueError(f"unknown table {name!r}; available tables: {', '.join(list_tables())}")


@cache
def _read(name: str) -> pd.DataFrame:
    with _files().joinpath(f"{name}.csv").open("r", encoding="utf-8") as fh:
        return pd.read_csv(fh)


def load_table(name: str) -> pd.DataFrame:
    """A transcribed table as a DataFrame (a fresh copy; accuracies in percent).

    Parameters
    ----------
    name : str
        One of :func:`list_tables`, e.g. ``"recht2019_cifar10"`` (Recht et al. 2019, Table 11)
        or ``"engstrom2020_imagenet"`` (Engstrom et al. 2020, App. G, Table 2).
    """
    _check(name)
    return _read(name).copy()


def provenance(name: str) -> dict:
    """The provenance note of a table: paper, table number, caption, units, columns."""
    _check(name)
    return yaml.safe_load(_files().joinpath(f"{name}.yaml").read_text(encoding="utf-8"))


def ci_fractions(table, prefix: str):
    """The ``(low, high)`` Clopper-Pearson bounds of a table's ``orig`` or ``new`` accuracy, as fractions."""
    if prefix not in ("orig", "new"):
        raise ValueError(f"prefix must be 'orig' or 'new', got {prefix!r}")
    return table[f"{prefix}_ci_low"].to_numpy(float) / 100, table[f"{prefix}_ci_high"].to_numpy(float) / 100


def is_fisher_vector(models) -> np.ndarray:
    """Boolean mask of the Fisher-vector baselines (``fv_*``) that Recht et al. exclude from §3.3's fits."""
    return pd.Series(models).astype(str).str.startswith("fv_").to_numpy()


def reported() -> dict:
    """Headline numbers as printed in the papers (fits, Table 2, test-set sizes), with sources."""
    return yaml.safe_load(_files().joinpath("reported.yaml").read_text(encoding="utf-8"))
