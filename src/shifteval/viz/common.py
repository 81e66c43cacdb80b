"""The book's plotting style and how a figure or a table is handed to the book.

Each function draws on a Matplotlib ``Axes`` it is given (or creates one) and returns it, so a
chapter composes panels with ``plt.subplots`` and keeps its cells short.
"""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ..linfit import transform

FIT_COLOR = "#c0392b"
POINT_COLOR = "#2c3e50"


def traced(function):
    """Mark what ``function`` returns (a figure, axes, or a tuple holding them) as drawn by it.

    A figure keeps the list of traced functions that drew on it, in order.

    :func:`figure` reads the mark and records, in the chapter's ``results.json`` and provenance box,
    which library function drew each figure of the book. Every public function of the chapters' figure
    modules is wrapped by ``shifteval.viz`` on import, so a new figure function is traced without
    ceremony.
    """
    where = f"{function.__module__}.{function.__qualname__}"

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        out = function(*args, **kwargs)
        for item in out if isinstance(out, tuple) else (out,):
            fig = getattr(item, "figure", None) if not isinstance(item, plt.Figure) else item
            if isinstance(fig, plt.Figure):
                drawn = getattr(fig, "_shifteval_drawn_by", [])
                fig._shifteval_drawn_by = drawn if where in drawn else [*drawn, where]
        return out

    wrapper._shifteval_traced = True
    return wrapper


def set_style() -> None:
    """The book's plotting style (seaborn whitegrid, readable sizes)."""
    sns.set_theme(style="whitegrid", context="notebook", font_scale=0.95)
    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "figure.autolayout": False})


def _percent_ticks(ax, lo: float, hi: float, scale: str, n: int = 6, which: str = "xy") -> None:
    """Tick labels in accuracy percent on the ``which`` axes, wherever the scale puts them."""
    axes = [a for key, a in (("x", ax.xaxis), ("y", ax.yaxis)) if key in which]
    if scale == "linear":
        for axis in axes:
            axis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{100 * v:.0f}"))
        return
    candidates = np.array(
        [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995]
    )
    ticks = candidates[(candidates >= lo) & (candidates <= hi)]
    if len(ticks) > n:
        ticks = ticks[:: int(np.ceil(len(ticks) / n))]
    pos = transform(ticks, "probit")
    labels = [f"{100 * t:g}" for t in ticks]
    for axis in axes:
        axis.set_ticks(pos, labels)


@traced
def image_grid(images, row_labels=None, col_labels=None, cell: float = 0.9, cmap: str = "gray_r"):
    """A grid of small grayscale images: ``images`` has shape (rows, cols, H, W). Returns the figure."""
    images = np.asarray(images)
    rows, cols = images.shape[:2]
    fig, axes = plt.subplots(rows, cols, figsize=(cols * cell, rows * cell), squeeze=False)
    for r in range(rows):
        for c in range(cols):
            ax = axes[r, c]
            ax.imshow(images[r, c], cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.grid(False)
            if c == 0 and row_labels is not None:
                ax.set_ylabel(row_labels[r], rotation=0, ha="right", va="center", fontsize=8)
            if r == 0 and col_labels is not None:
                ax.set_title(col_labels[c], fontsize=8)
    fig.subplots_adjust(wspace=0.05, hspace=0.05)
    return fig


def figure(name: str, fig=None) -> None:
    """Hand a figure to the book as a numbered, captioned figure (myst-nb ``glue``).

    The figure is stored in the cell's output under ``name`` (hidden there) and closed; a following
    markdown cell places it with ``{glue:figure} name`` and its caption, which Sphinx numbers and makes
    cross-referenceable (``{numref}`fig-<name>```). Without myst-nb the figure is simply shown.
    """
    from ..book.results import trace_figure

    fig = fig or plt.gcf()
    trace_figure(name, getattr(fig, "_shifteval_drawn_by", None))
    try:
        from myst_nb import glue
    except ImportError:  # pragma: no cover - myst-nb comes with jupyter-book
        plt.show()
        return
    glue(name, fig, display=False)
    plt.close(fig)


def table(name: str, frame) -> None:
    """Hand a table (a DataFrame or its ``Styler``) to the book as a numbered, captioned table.

    Like :func:`figure`: the table is glued under ``name`` and not shown in place; a following markdown
    cell places it with ``{glue:figure} name`` and ``:name: tbl-<name>``, which the book's Sphinx
    extension numbers as a table (``{numref}`tbl-<name>```). Without myst-nb the table is displayed.
    """
    from ..book.results import trace_figure

    trace_figure(name, getattr(frame, "_shifteval_drawn_by", None), kind="table")
    try:
        from myst_nb import glue
    except ImportError:  # pragma: no cover - myst-nb comes with jupyter-book
        from IPython.display import display

        display(frame)
        return
    glue(name, frame, display=False)
