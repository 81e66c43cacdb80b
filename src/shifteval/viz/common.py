"""The book's plotting style and how a figure or a table is handed to the book.

Each function draws on a Matplotlib ``Axes`` it is given (or creates one) and returns it, so a
chapter composes panels with ``plt.subplots`` and keeps its cells short.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from ..linfit.fits import transform

if TYPE_CHECKING:
    import pandas as pd
    from pandas.io.formats.style import Styler

FIT_COLOR = "#c0392b"
POINT_COLOR = "#2c3e50"

_F = TypeVar("_F", bound=Callable[..., Any])


def traced(function: _F) -> _F:
    """Mark what ``function`` returns (a figure, axes, or a tuple holding them) as drawn by it.

    A figure keeps the list of traced functions that drew on it, in order.

    :func:`figure` reads the mark and records, in the chapter's ``results.json`` and provenance box,
    which library function drew each figure of the book. Every public function of the chapters' figure
    modules is wrapped by ``shifteval.viz`` on import, so a new figure function is traced without
    ceremony.

    Parameters
    ----------
    function : callable
        A function returning a ``Figure``, an ``Axes`` or a tuple holding them.

    Returns
    -------
    callable
        The wrapped function (same signature, name and docstring; ``_shifteval_traced`` set).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> @traced
    ... def demo():
    ...     return plt.figure()
    >>> fig = demo()
    >>> [name.rsplit(".", 1)[-1] for name in fig._shifteval_drawn_by], demo._shifteval_traced
    (['demo'], True)
    >>> plt.close(fig)
    """
    where = f"{function.__module__}.{function.__qualname__}"

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        out = function(*args, **kwargs)
        for item in out if isinstance(out, tuple) else (out,):
            fig = getattr(item, "figure", None) if not isinstance(item, plt.Figure) else item
            if isinstance(fig, plt.Figure):
                drawn = getattr(fig, "_shifteval_drawn_by", [])
                setattr(fig, "_shifteval_drawn_by", drawn if where in drawn else [*drawn, where])  # noqa: B010
        return out

    setattr(wrapper, "_shifteval_traced", True)  # noqa: B010 (an attribute the types do not declare)
    return cast(_F, wrapper)  # functools.wraps keeps the signature


def set_style() -> None:
    """The book's plotting style (seaborn whitegrid, readable sizes).

    Returns
    -------
    None
        Changes Matplotlib's global ``rcParams``.

    Examples
    --------
    >>> set_style()
    >>> plt.rcParams["savefig.dpi"], plt.rcParams["figure.autolayout"]
    (150.0, False)
    """
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
def image_grid(
    images: ArrayLike,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    cell: float = 0.9,
    cmap: str = "gray_r",
) -> Figure:
    """A grid of small grayscale images: ``images`` has shape (rows, cols, H, W). Returns the figure.

    Parameters
    ----------
    images : array_like, shape (rows, cols, H, W)
        Grayscale images with values in [0, 1].
    row_labels, col_labels : sequence of str, optional
        Labels left of the first column and above the first row.
    cell : float
        Size of one image in inches.
    cmap : str
        Matplotlib colormap.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per image, ticks hidden.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig = image_grid(np.zeros((2, 3, 4, 4)), col_labels=["a", "b", "c"])
    >>> len(fig.axes), fig.axes[1].get_title()
    (6, 'b')
    >>> plt.close(fig)
    """
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


#: The book's content column in CSS pixels: a wider figure is scaled down to it.
CONTENT_WIDTH_PX = 800


def legibility(fig: Figure) -> dict:
    """How a figure reads at the book's content width: its size, smallest text and panel layout.

    The page shows the figure's PNG (``fig.dpi`` pixels per inch, padded tight bounding box) scaled down to
    :data:`CONTENT_WIDTH_PX` when wider; text of ``s`` points is then ``s * dpi / 72 * scale`` pixels high.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A drawn or undrawn figure (it is drawn here to measure its text).

    Returns
    -------
    dict
        ``width_px`` (the PNG's width), ``scale`` (at most 1), ``min_font_pt`` and ``min_text_px`` (the
        smallest visible text at the content width, 0 without text), ``panels_per_row`` (the most axes
        side by side) and ``overlaps`` (pairs of axes whose titles, axis labels or tick labels collide).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig, axes = plt.subplots(1, 2, figsize=(8, 3), dpi=100)
    >>> _ = axes[0].set_title("left", fontsize=12)
    >>> m = legibility(fig)
    >>> m["panels_per_row"], m["overlaps"], m["min_text_px"] > 9
    (2, [], True)
    >>> plt.close(fig)
    """
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    fig.canvas.draw()
    tight = fig.get_tightbbox(renderer)
    # the inline backend saves with bbox_inches="tight", which pads the box on each side
    width_px = float((tight.width + 2 * plt.rcParams["savefig.pad_inches"]) * fig.dpi)
    scale = min(1.0, CONTENT_WIDTH_PX / width_px)
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    min_pt = float(min(sizes)) if sizes else 0.0
    axes = [a for a in fig.axes if a.get_visible() and a.axison]
    rows: dict[float, int] = {}
    for ax in axes:  # axes whose vertical extents overlap share a row
        box = ax.get_position()
        key = next((k for k in rows if abs(k - box.y0) < 0.5 * box.height), box.y0)
        rows[key] = rows.get(key, 0) + 1

    def extents(ax):
        texts = [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        texts += ax.get_xticklabels() + ax.get_yticklabels()
        return [t.get_window_extent(renderer) for t in texts if t.get_visible() and t.get_text().strip()]

    boxes = [extents(ax) for ax in axes]
    overlaps = [
        (i, j)
        for i in range(len(axes))
        for j in range(i + 1, len(axes))
        if any(a.overlaps(b) for a in boxes[i] for b in boxes[j])
    ]
    return {
        "width_px": round(width_px),
        "scale": round(scale, 3),
        "min_font_pt": min_pt,
        "min_text_px": round(min_pt * fig.dpi / 72 * scale, 2),
        "panels_per_row": max(rows.values(), default=0),
        "overlaps": overlaps,
    }


def figure(name: str, fig: Figure | None = None) -> None:
    """Hand a figure to the book as a numbered, captioned figure (myst-nb ``glue``).

    The figure is stored in the cell's output under ``name`` (hidden there) and closed; a following
    markdown cell places it with ``{glue:figure} name`` and its caption, which Sphinx numbers and makes
    cross-referenceable (``{numref}`fig-<name>```). Without myst-nb the figure is simply shown.

    Parameters
    ----------
    name : str
        The glue key (the figure's label in the book).
    fig : matplotlib.figure.Figure, optional
        The figure; by default the current one.

    Returns
    -------
    None

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig = image_grid(np.zeros((1, 1, 2, 2)))
    >>> figure("doctest-grid", fig)
    >>> plt.fignum_exists(fig.number)  # glued and closed
    False
    """
    from ..book.results import trace_figure

    fig = fig or plt.gcf()
    trace_figure(name, getattr(fig, "_shifteval_drawn_by", None), legibility=legibility(fig))
    try:
        from myst_nb import glue
    except ImportError:  # pragma: no cover - myst-nb comes with jupyter-book
        plt.show()
        return
    glue(name, fig, display=False)
    plt.close(fig)


def table(name: str, frame: pd.DataFrame | Styler) -> None:
    """Hand a table (a DataFrame or its ``Styler``) to the book as a numbered, captioned table.

    Like :func:`figure`: the table is glued under ``name`` and not shown in place; a following markdown
    cell places it with ``{glue:figure} name`` and ``:name: tbl-<name>``, which the book's Sphinx
    extension numbers as a table (``{numref}`tbl-<name>```). Without myst-nb the table is displayed.

    Parameters
    ----------
    name : str
        The glue key (the table's label in the book).
    frame : pandas.DataFrame or pandas.io.formats.style.Styler
        The table.

    Returns
    -------
    None

    Examples
    --------
    >>> table("doctest-table", pd.DataFrame({"a": [1, 2]}))
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
