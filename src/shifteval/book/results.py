"""How a chapter records its headline numbers.

A chapter ends with ``results.record(results_path, {...})``. The pipeline passes
``results_path`` as a parameter, then adds the provenance (parameter set, library version,
cache key, git commit) and publishes ``<chapter>.results.json`` next to the executed notebook.
Run interactively, ``results_path`` is ``None`` and nothing is written.
"""

from __future__ import annotations

import json
import math

import numpy as np

from ..utils.io import atomic_write_json, to_json


def _nan_to_none(obj):
    """Missing values (NaN) become JSON ``null``; infinities are still refused by :func:`to_json`."""
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nan_to_none(v) for v in obj]
    if isinstance(obj, (float, np.floating)) and math.isnan(obj):
        return None
    if isinstance(obj, np.ndarray):
        return _nan_to_none(obj.tolist())
    return obj


def record(results_path, results: dict) -> dict:
    """Write a chapter's results as JSON (atomically) and return them, JSON-normalised.

    Parameters
    ----------
    results_path : str, path or None
        Where the pipeline wants the results; ``None`` when run outside the pipeline.
    results : dict
        Headline numbers; numpy scalars and arrays are converted, NaN is refused.
    """
    if not isinstance(results, dict):
        raise ValueError(f"results must be a dict, got {type(results).__name__}")
    normalised = json.loads(to_json(_nan_to_none(results)))
    if results_path is not None:
        atomic_write_json(results_path, normalised)
    return normalised
