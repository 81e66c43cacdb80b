"""The book's plotting style, the measures of a figure's legibility, and the tracing of figure functions.

Each function draws on a Matplotlib ``Axes`` it is given (or creates one) and returns it, so a
chapter composes panels with ``plt.subplots`` and keeps its cells short. Nothing here records
anything: a chapter hands a figure or a table to the book with
:meth:`shifteval.book.results.Results.figure` and :meth:`~shifteval.book.results.Results.table`.
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
    from matplotlib.axes import Axes

FIT_COLOR = "#c0392b"
POINT_COLOR = "#2c3e50"

_F = TypeVar("_F", bound=Callable[..., Any])


def traced(function: _F) -> _F:
    """Mark what ``function`` returns (a figure, axes, or a tuple holding them) as drawn by it.

    A figure keeps the list of traced functions that drew on it, in order.

    :meth:`shifteval.book.results.Results.figure` reads the mark (:func:`drawn_by`) and records, in the
    chapter's ``results.json`` and provenance box, which library function drew each figure of the book.
    Every public function of the chapters' figure modules is decorated with it where it is defined.

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
    >>> [name.rsplit(".", 1)[-1] for name in drawn_by(fig)], demo._shifteval_traced
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


def drawn_by(item: Any) -> list[str] | None:
    """The traced library functions that drew ``item`` (see :func:`traced`), in order; None if untraced.

    Parameters
    ----------
    item : object
        A figure, or what a traced function returned (axes, a table).

    Returns
    -------
    list of str or None
        Dotted names of the functions, or ``None`` when no traced function marked ``item``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig = image_grid(np.zeros((1, 1, 2, 2)))
    >>> drawn_by(fig), drawn_by(plt.figure())
    (['shifteval.viz.common.image_grid'], None)
    >>> plt.close("all")
    """
    return getattr(item, "_shifteval_drawn_by", None)


def set_style() -> None:
    """The book's plotting style (seaborn whitegrid, text sizes that read at the content width).

    Figures drawn with :func:`subplots` are as wide as the book's content column at ``figure.dpi``, so
    the page shows them unscaled and 9-point text is 12.5 pixels high.

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
    sns.set_theme(style="whitegrid", context="notebook", font_scale=0.875)
    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "figure.autolayout": False})


def percent_ticks(ax: Axes, lo: float, hi: float, scale: str, n: int = 6, which: str = "xy") -> None:
    """Tick labels in accuracy percent on the ``which`` axes, wherever the scale puts them.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Axes whose coordinates are accuracies, on the linear scale or probit-transformed.
    lo, hi : float
        The accuracies the axes span, in (0, 1); on the probit scale the ticks are chosen among
        round accuracies in this range.
    scale : str
        ``"linear"`` (every tick labelled in percent) or ``"probit"``.
    n : int
        The most ticks on the probit scale.
    which : str
        The axes to label: ``"x"``, ``"y"`` or ``"xy"``.

    Returns
    -------
    None
        The axes' ticks are set in place.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig, ax = plt.subplots()
    >>> percent_ticks(ax, 0.6, 0.95, "probit", which="x")
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['60', '70', '80', '90', '95']
    >>> plt.close(fig)
    """
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


#: The book's content column in CSS pixels: a wider figure is scaled down to it.
CONTENT_WIDTH_PX = 800

#: The smallest text a figure may hold, in pixels at the content width.
MIN_TEXT_PX = 9

#: The most panels a figure may put side by side.
MAX_PANELS_PER_ROW = 3


def content_width_in(dpi: float | None = None) -> float:
    """The widest figure, in inches, that the page shows unscaled.

    The content column at ``dpi`` (by default ``figure.dpi``) less the padding the saved PNG adds on
    each side of the figure's tight bounding box.

    Parameters
    ----------
    dpi : float, optional
        Pixels per inch of the figure.

    Returns
    -------
    float

    Examples
    --------
    >>> round(content_width_in(100), 2)
    7.8
    """
    dpi = plt.rcParams["figure.dpi"] if dpi is None else dpi
    return CONTENT_WIDTH_PX / dpi - 2 * plt.rcParams["savefig.pad_inches"]


def subplots(nrows: int = 1, ncols: int = 1, height: float = 3.5, width: float = 1.0, **kwargs) -> tuple:
    """``plt.subplots`` for the book: sized for the content width, laid out without collisions.

    Parameters
    ----------
    nrows, ncols : int
        The grid of panels; at most :data:`MAX_PANELS_PER_ROW` columns.
    height : float
        Height of the figure in inches.
    width : float
        Width as a fraction of :func:`content_width_in`, in (0, 1].
    **kwargs
        Passed on to ``plt.subplots`` (``sharey``, ``squeeze``, ``gridspec_kw`` …).

    Returns
    -------
    (matplotlib.figure.Figure, Axes or ndarray of Axes)
        As ``plt.subplots``, with ``layout="constrained"``.

    Raises
    ------
    ValueError
        For more than :data:`MAX_PANELS_PER_ROW` columns or a width outside (0, 1].

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig, axes = subplots(2, 3, height=5)
    >>> float(fig.get_figwidth()) == content_width_in(), axes.shape, fig.get_layout_engine() is not None
    (True, (2, 3), True)
    >>> plt.close(fig)
    >>> subplots(1, 4)
    Traceback (most recent call last):
    ValueError: at most 3 panels per row, got 4 columns
    """
    if ncols > MAX_PANELS_PER_ROW:
        raise ValueError(f"at most {MAX_PANELS_PER_ROW} panels per row, got {ncols} columns")
    if not 0 < width <= 1:
        raise ValueError(f"width is a fraction of the content width in (0, 1], got {width}")
    figsize = (width * content_width_in(), height)
    return plt.subplots(nrows, ncols, figsize=figsize, layout="constrained", **kwargs)


def wrap(n: int) -> tuple[int, int]:
    """Rows and columns of a grid for ``n`` panels, at most :data:`MAX_PANELS_PER_ROW` to a row.

    Parameters
    ----------
    n : int
        Number of panels.

    Returns
    -------
    (int, int)
        Rows and columns.

    Examples
    --------
    >>> wrap(2), wrap(3), wrap(4), wrap(7)
    ((1, 2), (1, 3), (2, 3), (3, 3))
    """
    cols = max(1, min(n, MAX_PANELS_PER_ROW))
    return -(-n // cols), cols


def _png_width_in(fig: Figure) -> float:
    """Width in inches of the PNG the book shows: the tight bounding box, padded on each side."""
    tight = fig.get_tightbbox(fig.canvas.get_renderer())  # type: ignore[attr-defined]
    return float(tight.width + 2 * plt.rcParams["savefig.pad_inches"])


def fit_width(fig: Figure) -> Figure:
    """Shrink ``fig`` (both sides, text unchanged) until the page shows it unscaled.

    For figures whose content sets their width, such as a grid of images with labels beside it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        Best laid out by a layout engine (``layout="constrained"``), which keeps the text in the figure.

    Returns
    -------
    matplotlib.figure.Figure
        ``fig``, resized in place.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig = plt.figure(figsize=(12, 6), dpi=100, layout="constrained")
    >>> _ = fig.gca().set_ylabel("accuracy")
    >>> legibility(fit_width(fig))["scale"]
    1.0
    >>> plt.close(fig)
    """
    limit = CONTENT_WIDTH_PX / fig.dpi
    for _ in range(6):
        fig.canvas.draw()
        excess = _png_width_in(fig) - limit
        if excess <= 0:
            break
        shrink = max(0.5, 1 - (excess + 0.02) / fig.get_figwidth())
        fig.set_size_inches(fig.get_figwidth() * shrink, fig.get_figheight() * shrink)
    return fig


@traced
def image_grid(
    images: ArrayLike,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    cell: float = 0.9,
    cmap: str = "gray_r",
) -> Figure:
    """A grid of small grayscale images: ``images`` has shape (rows, cols, H, W). Returns the figure.

    The images are tiled into one mosaic in one panel, one pixel apart; the labels are its tick labels.
    The figure is shrunk to the content width when the grid is wider (see :func:`fit_width`).

    Parameters
    ----------
    images : array_like, shape (rows, cols, H, W)
        Grayscale images with values in [0, 1].
    row_labels, col_labels : sequence of str, optional
        Labels left of the first column and above the first row.
    cell : float
        Size of one image in inches, at most.
    cmap : str
        Matplotlib colormap.

    Returns
    -------
    matplotlib.figure.Figure
        One axes showing the mosaic.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> fig = image_grid(np.zeros((2, 3, 4, 4)), row_labels=["x", "y"], col_labels=["a", "b", "c"])
    >>> ax = fig.axes[0]
    >>> len(fig.axes), ax.get_images()[0].get_array().shape, [t.get_text() for t in ax.get_xticklabels()]
    (1, (9, 14), ['a', 'b', 'c'])
    >>> plt.close(fig)
    """
    images = np.asarray(images, dtype=float)
    rows, cols, h, w = images.shape
    mosaic = np.full((rows * (h + 1) - 1, cols * (w + 1) - 1), np.nan)  # NaN: the gaps between images
    for r in range(rows):
        for c in range(cols):
            mosaic[r * (h + 1) : r * (h + 1) + h, c * (w + 1) : c * (w + 1) + w] = images[r, c]
    colormap = plt.get_cmap(cmap).with_extremes(bad="white")
    fig, ax = plt.subplots(figsize=(cols * cell + 1.5, rows * cell + 0.5), layout="constrained")
    ax.imshow(mosaic, cmap=colormap, vmin=0, vmax=1, interpolation="nearest")
    ax.grid(False)
    ax.tick_params(length=0, top=False, bottom=False, labeltop=True, labelbottom=False)
    for spine in ax.spines.values():
        spine.set_visible(False)
    centres = lambda n, size: np.arange(n) * (size + 1) + (size - 1) / 2  # noqa: E731
    ax.set_xticks(centres(cols, w) if col_labels is not None else [], col_labels or [])
    ax.set_yticks(centres(rows, h) if row_labels is not None else [], row_labels or [])
    return fit_width(fig)


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
    fig.draw_without_rendering()  # lays out every artist (text extents, ticks) without rasterizing
    # the inline backend saves with bbox_inches="tight", which pads the box on each side
    width_px = _png_width_in(fig) * fig.dpi
    scale = min(1.0, CONTENT_WIDTH_PX / width_px)
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    min_pt = float(min(sizes)) if sizes else 0.0
    axes = [a for a in fig.axes if a.get_visible() and a.axison]
    rows: dict[float, int] = {}
    for ax in axes:  # axes whose vertical extents overlap share a row
        box = ax.get_position()
        key = next((k for k in rows if abs(k - box.y0) < 0.5 * box.height), box.y0)
        rows[key] = rows.get(key, 0) + 1

    def drawn(axis, i):  # Matplotlib draws the labels of the ticks inside the view interval only
        lo, hi = sorted(axis.get_view_interval())
        pad = 1e-9 * (hi - lo)
        return [t for t in axis.get_ticklabels() if lo - pad <= t.get_position()[i] <= hi + pad]

    def extents(ax):
        texts = [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        texts += drawn(ax.xaxis, 0) + drawn(ax.yaxis, 1)
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


def legibility_problems(record: dict) -> list[str]:
    """What in a :func:`legibility` record breaks the book's criteria; empty when nothing does.

    Text of at least :data:`MIN_TEXT_PX` pixels at the content width, at most :data:`MAX_PANELS_PER_ROW`
    panels side by side, no colliding panels.

    Parameters
    ----------
    record : dict
        As :func:`legibility` returns it (or as ``results.json`` stores it).

    Returns
    -------
    list of str
        One sentence per broken criterion, with the measured values.

    Examples
    --------
    >>> legibility_problems({"min_text_px": 12.5, "panels_per_row": 2, "overlaps": []})
    []
    >>> record = {"min_text_px": 7.1, "min_font_pt": 9.5, "scale": 0.54, "panels_per_row": 4, "overlaps": [[0, 1]]}
    >>> for problem in legibility_problems(record):
    ...     print(problem)
    smallest text 7.1 px < 9 px (9.5 pt at scale 0.54)
    4 panels per row > 3
    colliding panels [[0, 1]]
    """
    problems = []
    if 0 < record["min_text_px"] < MIN_TEXT_PX:  # 0: a figure without text
        problems.append(
            f"smallest text {record['min_text_px']} px < {MIN_TEXT_PX} px "
            f"({record.get('min_font_pt')} pt at scale {record.get('scale')})"
        )
    if record["panels_per_row"] > MAX_PANELS_PER_ROW:
        problems.append(f"{record['panels_per_row']} panels per row > {MAX_PANELS_PER_ROW}")
    if record["overlaps"]:
        problems.append(f"colliding panels {record['overlaps']}")
    return problems


def _value_text(value, interval=None) -> str:
    """A finding's value as its table shows it: numbers to three significant digits, with the interval."""
    if isinstance(value, bool) or value is None:
        return "—" if value is None else str(value)
    if isinstance(value, (int, float)):
        text = f"{value:.3g}"
        return f"{text} [{interval[0]:.3g}, {interval[1]:.3g}]" if interval else text
    if isinstance(value, (list, tuple)):
        return ", ".join(_value_text(v) for v in value)
    return str(value)


@traced
def findings_table(findings: list[dict], cite: Callable[[str, str], str] | None = None) -> pd.DataFrame:
    """A chapter's findings as the table that ends it: where in the paper, the values compared, the verdict.

    Parameters
    ----------
    findings : list of dict
        ``results.json``'s ``findings`` (see :meth:`shifteval.book.findings.Finding.as_record`).
    cite : callable, optional
        ``cite("cite:t", key)`` names a paper by its bibliography key ("Recht et al. (2019)", see
        :func:`shifteval.book.reader.citation_formatter`); the key itself without it.

    Returns
    -------
    pandas.DataFrame
        One row per finding (its id), columns ``where`` (the paper and the place in it), ``compared``,
        ``paper's value``, ``this run`` (with its interval) and ``verdict``.

    Examples
    --------
    >>> table = findings_table([{"id": "drop", "paper": "recht2019imagenet", "where": "§1", "quantity": "drop, points",
    ...                          "paper_value": 11.7, "run_value": 9.12, "interval": [8.0, 10.2], "verdict": "partly"}])
    >>> table.loc["drop"].tolist()
    ['recht2019imagenet, §1', 'drop, points', '11.7', '9.12 [8, 10.2]', 'partly']
    """
    import pandas as pd

    rows = {
        f["id"]: {
            "where": f"{cite('cite:t', f['paper']) if cite is not None else f['paper']}, {f['where']}",
            "compared": f["quantity"],
            "paper's value": _value_text(f["paper_value"]),
            "this run": _value_text(f["run_value"], f.get("interval")),
            "verdict": f["verdict"],
        }
        for f in findings
    }
    columns = ["where", "compared", "paper's value", "this run", "verdict"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns).rename_axis("finding")
