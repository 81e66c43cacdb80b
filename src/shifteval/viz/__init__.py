"""Figures and tables of the book: they draw, and record nothing.

:mod:`shifteval.viz.common` holds the style, the measures of a figure's legibility and :func:`traced`, which
marks a figure with the library function that drew it; :mod:`shifteval.viz.names` the names a table shows
for the code's identifiers. Each chapter's figures live in one module named after the chapter
(:mod:`shifteval.viz.linear_fits`, :mod:`shifteval.viz.selection_bias`, …), one function per figure of the
paper it reproduces, then the figures the chapter adds; each is decorated with :func:`traced`. A chapter
hands what they draw to the book with :meth:`shifteval.book.results.Results.figure` and
:meth:`~shifteval.book.results.Results.table`.
"""

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
from .common import image_grid, set_style, traced
from .names import display_name, intervals, readable

__all__ = [
    "display_name",
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
    "traced",
    "your_replication",
]
