"""Shared set-up of the docstring examples (``pytest --doctest-modules`` over ``src/``).

Every Examples section may use ``np``, ``pd``, ``plt`` (the non-interactive Agg backend), ``torch``,
``tempfile`` and ``Path`` without importing them, as numpydoc examples conventionally assume ``np``.
"""

import tempfile
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    import torch

    doctest_namespace.update(np=np, pd=pd, plt=plt, torch=torch, tempfile=tempfile, Path=Path)
