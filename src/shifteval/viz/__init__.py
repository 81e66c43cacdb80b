"""Figures and tables of the book.

:mod:`shifteval.viz.common` holds the style and the hand-over of a figure or a table to the book
(:func:`figure`, :func:`table`); each chapter's figures live in a module named after the chapter
(:mod:`shifteval.viz.linear_fits`, …), one function per figure of the paper it reproduces.
"""

from . import linear_fits, matched_evaluation, mlm, ood_autoeval, replication_world, selection_bias
from .common import figure, image_grid, set_style, table

__all__ = [
    "figure", "image_grid", "linear_fits", "matched_evaluation", "mlm", "ood_autoeval", "replication_world",
    "selection_bias", "set_style", "table",
]  # fmt: skip
