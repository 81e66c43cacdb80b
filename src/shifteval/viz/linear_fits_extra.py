"""Figures of the linear-fits chapter beyond Recht et al.'s Figures 1, 6, 12, 13 and Table 14.

The §5.3 Gaussian difficulty model, Engstrom et al.'s timm testbed (their Figure 6b), the world's zoo
fitted per sampling strategy, and the per-image class drops. The paper's own figures are in
:mod:`shifteval.viz.linear_fits`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from ..linfit import LinearFit, inverse_transform, transform
from .common import FIT_COLOR, POINT_COLOR, _percent_ticks
from .linear_fits import fit_panel

if TYPE_CHECKING:
    import pandas as pd


def gaussian_model_panel(
    ax: Axes,
    acc1: ArrayLike,
    acc2: ArrayLike,
    slope: float,
    intercept: float,
    fitted: LinearFit | None = None,
) -> Axes:
    """Recht et al. (2019, §5.3): simulated probit accuracies against the analytic line.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw; returned.
    acc1, acc2 : array_like
        Simulated accuracies (fractions) on test sets 1 and 2.
    slope, intercept : float
        The analytic line (probit units).
    fitted : LinearFit, optional
        A least-squares fit to draw as well (dotted).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    >>> acc = np.array([0.6, 0.7, 0.8])
    >>> ax = gaussian_model_panel(plt.figure().gca(), acc, acc - 0.1, 1.0, -0.3)
    >>> ax.get_legend().get_texts()[1].get_text()
    'analytic: u = 1.000, v = -0.300'
    >>> [ax.get_title() for ax in sec53_gaussian_difficulty({"a": (acc, acc, 1, 0, None), "b": (acc, acc, 1, 0, None)}).axes]
    ['a', 'b']
    >>> plt.close("all")
    """
    t1, t2 = transform(acc1, "probit"), transform(acc2, "probit")
    ax.plot(t1, t2, "o", ms=4, color=POINT_COLOR, label="simulated models")
    grid = np.linspace(t1.min() - 0.2, t1.max() + 0.2, 50)
    ax.plot(
        grid,
        slope * grid + intercept,
        color=FIT_COLOR,
        lw=1.5,
        label=f"analytic: u = {slope:.3f}, v = {intercept:.3f}",
    )
    if fitted is not None:
        ax.plot(grid, fitted.slope * grid + fitted.intercept, color="0.2", ls=":", lw=1.5,
                label=f"least squares: {fitted.slope:.3f}, {fitted.intercept:.3f}")  # fmt: skip
    _percent_ticks(
        ax,
        float(inverse_transform(grid.min(), "probit")),
        float(inverse_transform(grid.max(), "probit")),
        "probit",
        which="x",
    )
    _percent_ticks(ax, float(np.min(acc2)) - 0.02, float(np.max(acc2)) + 0.02, "probit", which="y")
    ax.set_xlabel("accuracy on test set 1 (%) — probit scale")
    ax.set_ylabel("accuracy on test set 2 (%) — probit scale")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def engstrom_fig6b_timm_testbed(table: pd.DataFrame, fit: LinearFit, recht_fit: LinearFit) -> Figure:
    """Engstrom et al. (2020), Figure 6b unadjusted: 136 timm models, with Recht et al.'s line (dotted).

    Parameters
    ----------
    table : pandas.DataFrame
        The transcribed timm table (``orig_acc``, ``new_acc`` in percent).
    fit, recht_fit : LinearFit
        The fit on ``table``; Recht et al.'s fit on their 64 networks.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    >>> from shifteval.datasets import published
    >>> from shifteval.linfit import fit_table
    >>> fit = fit_table(table := published.load_table("engstrom2020_imagenet"), n_boot=20)
    >>> engstrom_fig6b_timm_testbed(table, fit, fit).axes[0].get_title()
    '136 timm models (Engstrom et al. 2020)'
    >>> plt.close("all")
    """
    fig, ax = plt.subplots(figsize=(5.8, 5.5))
    fit_panel(
        ax, table.orig_acc / 100, table.new_acc / 100, fit, title="136 timm models (Engstrom et al. 2020)"
    )
    grid = np.linspace(0.55, 0.9, 50)
    ax.plot(grid, recht_fit.predict(grid), color="0.2", ls=":", lw=1.5, label="Recht et al. fit (64 CNNs)")
    ax.legend(loc="upper left", fontsize="small")
    return fig


def sec53_gaussian_difficulty(runs: dict[str, tuple]) -> Figure:
    """Recht et al. (2019), §5.3: simulated probit accuracies against the Gaussian model's line.

    Parameters
    ----------
    runs : dict
        Title -> ``(acc1, acc2, u, v, fit)`` (simulated accuracies, analytic line, least-squares fit).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per run (see :func:`gaussian_model_panel`).

    Examples
    --------
    Drawn in the example of :func:`gaussian_model_panel`.
    """
    fig, axes = plt.subplots(1, len(runs), figsize=(5.8 * len(runs), 5.3), squeeze=False)
    for ax, (title, (acc1, acc2, u, v, fit)) in zip(axes[0], runs.items(), strict=True):
        gaussian_model_panel(ax, acc1, acc2, u, v, fitted=fit)
        ax.set_title(title)
    fig.tight_layout()
    return fig


def zoo_fits(
    acc: pd.DataFrame,
    fits: dict[tuple[str, str], LinearFit],
    strategies: Sequence[str],
    reference: str = "v1",
) -> Figure:
    """The world's zoo: each replicated set against ``reference``, linear (top) and probit (bottom).

    Parameters
    ----------
    acc : pandas.DataFrame
        One column of accuracies (fractions) per test set (``reference`` and ``strategies``), a row per model.
    fits : dict
        ``(strategy, scale) -> LinearFit``, as :func:`shifteval.testbeds.fit_columns` returns.
    strategies : sequence of str
        The replicated sets, one column of panels each.
    reference : str
        The column on the x axis.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    >>> import pandas as pd; from shifteval.testbeds import fit_columns
    >>> acc = pd.DataFrame({"v1": [0.5, 0.6, 0.7, 0.8], "a": [0.4, 0.5, 0.6, 0.7]})
    >>> [ax.get_title() for ax in zoo_fits(acc, fit_columns(acc, "v1", ["a"], n_boot=20), ["a"]).axes]
    ['zoo: a (linear)', 'zoo: a (probit)']
    >>> plt.close("all")
    """
    scales = ("linear", "probit")
    fig, axes = plt.subplots(2, len(strategies), figsize=(5 * len(strategies), 10), squeeze=False)
    for col, s in enumerate(strategies):
        for row, scale in enumerate(scales):
            fit_panel(
                axes[row, col], acc[reference], acc[s], fits[(s, scale)], title=f"zoo: {s} ({scale})",
                xlabel=f"{reference} accuracy (%)", ylabel=f"{s} accuracy (%)",
            )  # fmt: skip
    fig.tight_layout()
    return fig


def per_image_class_drops(drops: ArrayLike, share: float = 0.9) -> Figure:
    """Per-class accuracy drop on MatchedFrequency, classes sorted by their mean drop over models.

    Beyond Recht et al. (2019), whose tables give one accuracy per model: the band spans the 10th to
    90th percentile of the models' drops in each class, the line is their mean.

    Parameters
    ----------
    drops : array_like, shape (models, classes)
        Each model's accuracy drop in each class (points).
    share : float
        Not used by the drawing (the band is always the 10th-90th percentile).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    >>> fig = per_image_class_drops(np.random.default_rng(0).normal(5, 2, (4, 6)))
    >>> mean = fig.axes[0].lines[0].get_ydata()  # one value per class, largest mean drop first
    >>> len(mean), bool(np.all(np.diff(mean) <= 0))
    (6, True)
    >>> plt.close("all")
    """
    values = np.asarray(drops, dtype=float)
    order = np.argsort(values.mean(axis=0))[::-1]
    mean = values.mean(axis=0)[order]
    lo, hi = np.percentile(values, [10, 90], axis=0)[:, order]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    x = np.arange(values.shape[1])
    ax.fill_between(x, lo, hi, color="#95a5a6", alpha=0.45, lw=0, label="10th-90th percentile of models")
    ax.plot(x, mean, color=FIT_COLOR, lw=1.5, label="mean over models")
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xlabel("ImageNet class, sorted by mean drop")
    ax.set_ylabel("accuracy drop (points)")
    ax.legend(fontsize="small", loc="upper right")
    return fig
