"""Figures and tables of the book.

:mod:`shifteval.viz.common` holds the style and the hand-over of a figure or a table to the book
(:func:`figure`, :func:`table`); :mod:`shifteval.viz.names` the names a table shows for the code's
identifiers. Each chapter's figures live in one module named after the chapter
(:mod:`shifteval.viz.linear_fits`, :mod:`shifteval.viz.selection_bias`, …), one function per figure of the
paper it reproduces, then the figures the chapter adds.
"""

import inspect as _inspect

from . import (
    linear_fits,
    matched_evaluation,
    mlm,
    names,
    ood_autoeval,
    replication_world,
    selection_bias,
    your_replication,
)
from .common import figure, image_grid, set_style, table, traced
from .names import display_name, intervals, readable

# Trace every figure function of the chapter modules (see common.traced).
_CHAPTER_MODULES = (
    linear_fits,
    matched_evaluation,
    mlm,
    ood_autoeval,
    replication_world,
    selection_bias,
    your_replication,
)
for _module in _CHAPTER_MODULES:
    for _name, _function in _inspect.getmembers(_module, _inspect.isfunction):
        if _function.__module__ == _module.__name__ and not _name.startswith("_"):
            if not getattr(_function, "_shifteval_traced", False):
                setattr(_module, _name, traced(_function))

__all__ = [
    "display_name",
    "figure",
    "image_grid",
    "intervals",
    "linear_fits",
    "matched_evaluation",
    "mlm",
    "names",
    "ood_autoeval",
    "readable",
    "replication_world",
    "selection_bias",
    "set_style",
    "table",
    "traced",
    "your_replication",
]
