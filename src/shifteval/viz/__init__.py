"""Figures and tables of the book.

:mod:`shifteval.viz.common` holds the style and the hand-over of a figure or a table to the book
(:func:`figure`, :func:`table`); each chapter's figures live in a module named after the chapter
(:mod:`shifteval.viz.linear_fits`, …; figures beyond the paper's own in ``…_extra`` / ``…_appendix``
modules), one function per figure of the paper it reproduces.
"""

import inspect as _inspect

from . import (
    linear_fits,
    linear_fits_extra,
    matched_evaluation,
    mlm,
    ood_autoeval,
    replication_world,
    selection_bias,
    selection_bias_appendix,
    your_replication,
)
from .common import figure, image_grid, set_style, table, traced

# Trace every figure function of the chapter modules (see common.traced).
_CHAPTER_MODULES = (linear_fits, linear_fits_extra, matched_evaluation, mlm, ood_autoeval, replication_world,
                    selection_bias, selection_bias_appendix, your_replication)  # fmt: skip
for _module in _CHAPTER_MODULES:
    for _name, _function in _inspect.getmembers(_module, _inspect.isfunction):
        if _function.__module__ == _module.__name__ and not _name.startswith("_"):
            if not getattr(_function, "_shifteval_traced", False):
                setattr(_module, _name, traced(_function))

__all__ = [
    "figure", "image_grid", "linear_fits", "linear_fits_extra", "matched_evaluation", "mlm", "ood_autoeval", "replication_world",
    "selection_bias", "selection_bias_appendix", "set_style", "table", "traced", "your_replication",
]  # fmt: skip
