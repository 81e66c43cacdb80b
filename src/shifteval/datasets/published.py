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
from numpy.typing import ArrayLike

_PACKAGE = "shifteval.data.published"


def _files():
    return resources.files(_PACKAGE)


def list_tables() -> list[str]:
    """Names of the transcribed tables, sorted.

    Returns
    -------
    list of str
        Table names, usable with :func:`load_table` and :func:`provenance`.

    Examples
    --------
    >>> names = list_tables()
    >>> "recht2019_cifar10" in names, names == sorted(names)
    (True, True)
    """
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

    Returns
    -------
    pandas.DataFrame
        One row per model, columns as printed (for Recht et al.: ``model``, ``orig_acc``, ``new_acc``,
        their Clopper-Pearson bounds, ``gap`` and the ranks).

    Raises
    ------
    ValueError
        If ``name`` is not one of :func:`list_tables`.

    Examples
    --------
    >>> t = load_table("recht2019_cifar10")
    >>> t.shape, list(t.columns[:2])
    ((34, 11), ['model', 'orig_acc'])
    >>> t.loc[0, "new_acc"] = 0.0
    >>> float(load_table("recht2019_cifar10").loc[0, "new_acc"])  # a fresh copy each time
    95.5
    """
    _check(name)
    return _read(name).copy()


def provenance(name: str) -> dict:
    """The provenance note of a table: paper, table number, caption, units, columns.

    Parameters
    ----------
    name : str
        One of :func:`list_tables`.

    Returns
    -------
    dict
        The parsed YAML note (keys such as ``paper``, ``source``, ``caption``, ``units``, ``columns``).

    Raises
    ------
    ValueError
        If ``name`` is not one of :func:`list_tables`.

    Examples
    --------
    >>> provenance("recht2019_cifar10")["source"]
    'Appendix B.3.3, Table 11'
    """
    _check(name)
    return yaml.safe_load(_files().joinpath(f"{name}.yaml").read_text(encoding="utf-8"))


def ci_fractions(table: pd.DataFrame, prefix: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``(low, high)`` Clopper-Pearson bounds of a table's ``orig`` or ``new`` accuracy, as fractions.

    Parameters
    ----------
    table : pandas.DataFrame
        A table with columns ``{prefix}_ci_low`` and ``{prefix}_ci_high`` in percent.
    prefix : {"orig", "new"}
        Which test set's interval.

    Returns
    -------
    low, high : ndarray
        The bounds divided by 100.

    Raises
    ------
    ValueError
        If ``prefix`` is neither ``"orig"`` nor ``"new"``.

    Examples
    --------
    >>> low, high = ci_fractions(pd.DataFrame({"new_ci_low": [94.5], "new_ci_high": [96.4]}), "new")
    >>> round(float(low[0]), 3), round(float(high[0]), 3)
    (0.945, 0.964)
    """
    if prefix not in ("orig", "new"):
        raise ValueError(f"prefix must be 'orig' or 'new', got {prefix!r}")
    return table[f"{prefix}_ci_low"].to_numpy(float) / 100, table[f"{prefix}_ci_high"].to_numpy(float) / 100


def is_fisher_vector(models: ArrayLike) -> np.ndarray:
    """Boolean mask of the Fisher-vector baselines (``fv_*``) that Recht et al. exclude from §3.3's fits.

    Parameters
    ----------
    models : array_like of str
        Model names, e.g. a table's ``model`` column.

    Returns
    -------
    ndarray of bool
        True where the name starts with ``fv_``.

    Examples
    --------
    >>> is_fisher_vector(["fv_64k", "resnet50"]).tolist()
    [True, False]
    """
    return pd.Series(models).astype(str).str.startswith("fv_").to_numpy()


def reported() -> dict:
    """Headline numbers as printed in the papers (fits, Table 2, test-set sizes), with sources.

    Returns
    -------
    dict
        Keyed by paper (``"recht2019"``, ``"engstrom2020"``, ``"mlm"``); every entry carries a ``source``.

    Examples
    --------
    >>> fit = reported()["recht2019"]["cifar10_fit"]
    >>> fit["slope"], fit["intercept"]
    (1.69, -72.7)
    """
    return yaml.safe_load(_files().joinpath("reported.yaml").read_text(encoding="utf-8"))
