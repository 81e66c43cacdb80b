"""Figures of the linear-fits chapter (Recht et al. 2019).

Recht et al.'s Figures 1, 6, 12, 13 and Table 14 first; then the figures the chapter adds: the §5.3
Gaussian difficulty model, Engstrom et al.'s timm testbed (their Figure 6b), the world's zoo fitted per
sampling strategy, and the per-image class drops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from ..datasets import published
from ..linfit.fits import LinearFit, inverse_transform, transform
from .common import FIT_COLOR, POINT_COLOR, percent_ticks, subplots, traced
from .names import display_name

if TYPE_CHECKING:
    import pandas as pd


@traced
def fit_panel(
    ax: Axes,
    orig: ArrayLike,
    new: ArrayLike,
    fit: LinearFit,
    *,
    orig_ci: tuple[ArrayLike, ArrayLike] | None = None,
    new_ci: tuple[ArrayLike, ArrayLike] | None = None,
    title: str | None = None,
    extra: tuple[ArrayLike, ArrayLike] | None = None,
    extra_label: str | None = None,
    xlabel: str = "original test accuracy (%)",
    ylabel: str = "new test accuracy (%)",
    point_label: str = "model",
) -> Axes:
    """Recht et al. (2019), Figures 1, 2 and 6: new vs. original accuracy of every model.

    Points with Clopper-Pearson error bars, the line y = x, the least-squares fit and its
    pointwise bootstrap band. All accuracies are fractions; the axes are labelled in percent
    and follow the fit's scale (linear or probit).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw; returned.
    orig, new : array_like
        Accuracies of the fitted models.
    fit : LinearFit
        The fit to draw (its scale sets the axes).
    orig_ci, new_ci : (low, high) arrays, optional
        Error bars (fractions).
    title, extra_label : str, optional
        Panel title; legend label of ``extra``.
    extra : (orig, new) arrays, optional
        Models drawn but not fitted (e.g. Fisher-vector baselines), as hollow markers.
    xlabel, ylabel, point_label : str
        Axis labels ("— probit scale" is added below them on probit axes); the points' legend label.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from shifteval.linfit import fit_linear
    >>> x = np.array([0.6, 0.7, 0.8, 0.9])  # new = original - 0.1: a fitted slope of 1
    >>> ax = fit_panel(plt.figure().gca(), x, x - 0.1, fit_linear(x, x - 0.1, n_boot=50), title="demo")
    >>> ax.get_title(), ax.get_xlabel(), ax.get_legend().get_texts()[1].get_text()
    ('demo', 'original test accuracy (%)', 'linear fit')
    >>> plt.close("all")
    """
    scale = fit.scale
    orig, new = np.asarray(orig, float), np.asarray(new, float)
    all_x = [orig] + ([np.asarray(extra[0], float)] if extra is not None else [])
    all_y = [new] + ([np.asarray(extra[1], float)] if extra is not None else [])
    lo = max(min(np.min(v) for v in all_x + all_y) - 0.03, 0.005)
    hi = min(max(np.max(v) for v in all_x + all_y) + 0.03, 0.995)
    T = lambda v: transform(v, scale)  # noqa: E731
    grid = np.linspace(lo, hi, 200)
    band_lo, band_hi = fit.band(grid)
    ax.fill_between(
        T(grid), T(band_lo), T(band_hi), color=FIT_COLOR, alpha=0.25, lw=0, label="95% bootstrap band"
    )
    ax.plot(T(grid), T(fit.predict(grid)), color=FIT_COLOR, lw=1.5, label=f"{scale} fit")
    ax.plot(T(grid), T(grid), color="0.4", ls="--", lw=1, label="y = x")

    def errors(values, ci):
        if ci is None:
            return None
        low, high = (np.asarray(c, float) for c in ci)
        return np.vstack([T(values) - T(low), T(high) - T(values)])

    ax.errorbar(
        T(orig), T(new), xerr=errors(orig, orig_ci), yerr=errors(new, new_ci),
        fmt="o", ms=3.5, color=POINT_COLOR, ecolor="0.55", elinewidth=0.8, label=point_label,
    )  # fmt: skip
    if extra is not None:
        ax.plot(T(extra[0]), T(extra[1]), "o", ms=4.5, mfc="none", mec=POINT_COLOR, label=extra_label)
    ax.set_xlim(float(T(lo)), float(T(hi)))
    ax.set_ylim(float(T(lo)), float(T(hi)))
    ax.set_aspect("equal")
    percent_ticks(ax, lo, hi, scale)
    ax.set_xlabel(xlabel + ("\n— probit scale" if scale == "probit" else ""))
    ax.set_ylabel(ylabel + ("\n— probit scale" if scale == "probit" else ""))
    if title:
        ax.set_title(title)
    ax.legend(loc="upper left", fontsize="small", frameon=True)
    return ax


@traced
def rank_change(
    ax: Axes, orig_rank: ArrayLike, new_rank: ArrayLike, names: ArrayLike | None = None, top: int = 8
) -> Axes:
    """Original rank against new rank: points on the diagonal kept their place.

    Recht et al. (2019, §3.3, "Few changes in the relative order"). The ranks are the *printed*
    ones (Tables 11-19, computed by the paper from unrounded accuracies); recomputing them from the
    rounded accuracies would reorder tied models. The models whose rank moved most are labelled.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw; returned, both axes inverted.
    orig_rank, new_rank : array_like of int
        1-based ranks on the original and the new test set.
    names : array_like of str, optional
        Model names, for the labels.
    top : int
        How many of the most-moved models to label.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        When ``orig_rank`` and ``new_rank`` differ in length.

    Examples
    --------
    >>> ax = rank_change(plt.figure().gca(), [1, 2, 3], [3, 2, 1], names=["a", "b", "c"], top=2)
    >>> sorted(t.get_text() for t in ax.texts)  # the two models that moved
    ['a', 'c']
    >>> fig = table14_rank_change(published.load_table("recht2019_imagenet_top1_matchedfrequency"), top=3)
    >>> len(fig.axes[0].texts), fig.axes[0].get_title()
    (3, 'ImageNet top-1, MatchedFrequency')
    >>> plt.close("all")
    """
    r_orig, r_new = np.asarray(orig_rank, int), np.asarray(new_rank, int)
    if r_orig.shape != r_new.shape:
        raise ValueError(f"orig_rank and new_rank differ in length: {len(r_orig)} and {len(r_new)}")
    delta = r_orig - r_new
    vmax = max(int(np.abs(delta).max()), 1)
    ax.scatter(r_orig, r_new, c=delta, cmap="coolwarm_r", vmin=-vmax, vmax=vmax, s=18)
    n = len(r_orig)
    ax.plot([1, n], [1, n], color="0.4", ls="--", lw=1)
    if names is not None:
        names = np.asarray(names)
        for i in np.argsort(-np.abs(delta), kind="stable")[:top]:
            ax.annotate(
                str(names[i]), (r_orig[i], r_new[i]), fontsize=7, xytext=(3, 3), textcoords="offset points"
            )
    ax.set_xlabel("rank on the original test set")
    ax.set_ylabel("rank on the new test set")
    ax.invert_xaxis()
    ax.invert_yaxis()
    return ax


STRATEGY_TITLES = {
    "matchedfrequency": "MatchedFrequency",
    "threshold0.7": "Threshold0.7",
    "topimages": "TopImages",
}


def _table_panel(ax, table, fit: LinearFit, title: str, *, fv_extra: bool = False, fv_fitted: bool = False):
    """One panel of a Recht et al. table: points with their printed intervals, the fit and its band."""
    fv = published.is_fisher_vector(table.model)
    main = table[~fv] if (fv_extra or not fv_fitted) and fv.any() else table
    ci = published.ci_fractions
    extra = (table.orig_acc[fv] / 100, table.new_acc[fv] / 100) if (fv_extra and fv.any()) else None
    fit_panel(
        ax, main.orig_acc / 100, main.new_acc / 100, fit, orig_ci=ci(main, "orig"), new_ci=ci(main, "new"),
        title=title, extra=extra, extra_label="Fisher vectors" + (" (fitted)" if fv_fitted else ""),
    )  # fmt: skip
    return ax


@traced
def fig1_linear_fits(cifar: pd.DataFrame, imagenet: pd.DataFrame, fits: dict[str, LinearFit]) -> Figure:
    """Recht et al. (2019), Figure 1: CIFAR-10 (Table 11) and ImageNet top-1 MatchedFrequency (Table 14).

    The 64 convolutional networks on ImageNet, as in the paper (the Fisher-vector models are left
    out of this figure and of the fit; Figures 6 and 13 include them).

    Parameters
    ----------
    cifar, imagenet : pandas.DataFrame
        The two transcribed tables.
    fits : dict
        :func:`shifteval.linfit.recht2019.fit_recht2019`'s fits (``cifar10``, ``imagenet_top1_matchedfrequency_cnn``).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from shifteval.linfit.recht2019 import fit_recht2019
    >>> tables, fits = {n: published.load_table(n) for n in published.list_tables()}, fit_recht2019(n_boot=20)
    >>> t14 = tables["recht2019_imagenet_top1_matchedfrequency"]
    >>> [ax.get_title() for ax in fig1_linear_fits(tables["recht2019_cifar10"], t14, fits).axes]
    ['CIFAR-10', 'ImageNet top-1, MatchedFrequency']
    >>> [ax.get_title() for ax in fig6_linear_vs_probit(t14, fits).axes]
    ['linear axes, all 67 models', 'probit axes, all 67 models']
    >>> fig12, fig13 = fig12_all_test_sets(tables, fits), fig13_probit_all_models(tables, fits)
    >>> len(fig12.axes), fig12.axes[0].get_title(), fig13.axes[5].get_title(), fig13.axes[5].get_xlabel()[-12:]
    (6, 'top-1, MatchedFrequency', 'top-5, TopImages', 'probit scale')
    >>> plt.close("all")
    """
    fig, axes = subplots(1, 2, height=4.2)
    _table_panel(axes[0], cifar, fits["cifar10"], "CIFAR-10")
    _table_panel(
        axes[1], imagenet, fits["imagenet_top1_matchedfrequency_cnn"], "ImageNet top-1, MatchedFrequency"
    )
    return fig


@traced
def fig6_linear_vs_probit(imagenet: pd.DataFrame, fits: dict[str, LinearFit]) -> Figure:
    """Recht et al. (2019), Figure 6: all 67 ImageNet models (Fisher vectors hollow), linear and probit.

    Fits ``imagenet_top1_matchedfrequency_all_{linear,probit}``.

    Parameters
    ----------
    imagenet : pandas.DataFrame
        Table 14 (ImageNet top-1, MatchedFrequency).
    fits : dict
        :func:`shifteval.linfit.recht2019.fit_recht2019`'s fits.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    Drawn in the example of :func:`fig1_linear_fits`.
    """
    fig, axes = subplots(1, 2, height=4.2)
    for ax, key, scale in zip(
        axes,
        ["imagenet_top1_matchedfrequency_all_linear", "imagenet_top1_matchedfrequency_all_probit"],
        ["linear", "probit"],
        strict=True,
    ):
        _table_panel(ax, imagenet, fits[key], f"{scale} axes, all 67 models", fv_extra=True, fv_fitted=True)
    return fig


def _grid(tables: dict, fits: dict, suffix: str, fv: bool):
    fig, axes = subplots(2, 3, height=6.4)
    for row, k in enumerate(("top1", "top5")):
        for col, s in enumerate(STRATEGY_TITLES):
            name = f"recht2019_imagenet_{k}_{s}"
            table = tables[name]
            if not fv:
                table = table[~published.is_fisher_vector(table.model)]
            _table_panel(
                axes[row, col], table, fits[f"imagenet_{k}_{s}_{suffix}"],
                f"{'top-1' if k == 'top1' else 'top-5'}, {STRATEGY_TITLES[s]}", fv_extra=fv, fv_fitted=fv,
            )  # fmt: skip
    return fig


@traced
def fig12_all_test_sets(tables: dict[str, pd.DataFrame], fits: dict[str, LinearFit]) -> Figure:
    """Recht et al. (2019), Figure 12: top-1 (top row) and top-5 (bottom row) on the three new test sets.

    Linear axes, the 64 convolutional networks, fits ``imagenet_{top1,top5}_{strategy}_cnn``.

    Parameters
    ----------
    tables : dict
        Transcribed tables by name (``recht2019_imagenet_{k}_{strategy}``).
    fits : dict
        :func:`shifteval.linfit.recht2019.fit_recht2019`'s fits.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    Drawn in the example of :func:`fig1_linear_fits`.
    """
    return _grid(tables, fits, "cnn", fv=False)


@traced
def fig13_probit_all_models(tables: dict[str, pd.DataFrame], fits: dict[str, LinearFit]) -> Figure:
    """Recht et al. (2019), Figure 13: Figure 12 on probit axes, all 67 models (Fisher vectors hollow).

    Fits ``imagenet_{top1,top5}_{strategy}_all_probit``.

    Parameters
    ----------
    tables, fits : dict
        As for :func:`fig12_all_test_sets`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    Drawn in the example of :func:`fig1_linear_fits`.
    """
    return _grid(tables, fits, "all_probit", fv=True)


@traced
def table14_rank_change(table: pd.DataFrame, top: int = 8) -> Figure:
    """The printed ranks of Table 14 (ImageNet top-1 MatchedFrequency) as a figure (§3.3).

    Parameters
    ----------
    table : pandas.DataFrame
        The transcribed table (``model``, ``orig_rank``, ``new_rank``).
    top : int
        How many of the most-moved models to label (see :func:`rank_change`).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    Drawn in the example of :func:`rank_change`.
    """
    fig, ax = plt.subplots(figsize=(5.5, 5.3))
    rank_change(ax, table.orig_rank, table.new_rank, names=table.model.to_numpy(), top=top)
    ax.set_title("ImageNet top-1, MatchedFrequency")
    return fig


@traced
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
    percent_ticks(
        ax,
        float(inverse_transform(grid.min(), "probit")),
        float(inverse_transform(grid.max(), "probit")),
        "probit",
        which="x",
    )
    percent_ticks(ax, float(np.min(acc2)) - 0.02, float(np.max(acc2)) + 0.02, "probit", which="y")
    ax.set_xlabel("accuracy on test set 1 (%) — probit scale")
    ax.set_ylabel("accuracy on test set 2 (%) — probit scale")
    ax.legend(loc="upper left", fontsize="small")
    return ax


@traced
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


@traced
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
    fig, axes = subplots(1, len(runs), height=4.2, squeeze=False)
    for ax, (title, (acc1, acc2, u, v, fit)) in zip(axes[0], runs.items(), strict=True):
        gaussian_model_panel(ax, acc1, acc2, u, v, fitted=fit)
        ax.set_title(title)
    return fig


@traced
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
        ``(strategy, scale) -> LinearFit``, as :func:`shifteval.linfit.testbeds.fit_columns` returns.
    strategies : sequence of str
        The replicated sets, one column of panels each.
    reference : str
        The column on the x axis.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import pandas as pd; from shifteval.linfit.testbeds import fit_columns
    >>> acc = pd.DataFrame({"v1": [0.5, 0.6, 0.7, 0.8], "a": [0.4, 0.5, 0.6, 0.7]})
    >>> [ax.get_title() for ax in zoo_fits(acc, fit_columns(acc, "v1", ["a"], n_boot=20), ["a"]).axes]
    ['zoo: a (linear)', 'zoo: a (probit)']
    >>> plt.close("all")
    """
    scales = ("linear", "probit")
    fig, axes = subplots(2, len(strategies), height=6, squeeze=False)
    for col, s in enumerate(strategies):
        for row, scale in enumerate(scales):
            fit_panel(
                axes[row, col], acc[reference], acc[s], fits[(s, scale)], title=f"zoo: {display_name(s)} ({scale})",
                xlabel=f"{reference} accuracy (%)", ylabel=f"{display_name(s)} accuracy (%)",
            )  # fmt: skip
            axes[row, col].title.set_fontsize("small")  # long set names: three titles side by side
    return fig


@traced
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


@traced
def fits_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A table of fits as the page shows it: the paper's printed fit in a row under ours.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`shifteval.linfit.fits_frame`, possibly with ``slope (paper)`` and ``offset (paper)``.

    Returns
    -------
    pandas.DataFrame
        Rows indexed by (fit, ``here`` or ``paper``); a ``paper`` row only where the paper prints the fit,
        its values under the same ``slope [CI]`` and ``offset [CI]`` columns.

    Examples
    --------
    >>> f = pd.DataFrame({"models": [3], "slope [CI]": ["1.1 [1.0, 1.2]"], "slope (paper)": ["1.0 [0.9, 1.1]"]},
    ...                  index=["v2"])
    >>> fits_table(f).to_dict("index")
    {('v2', 'here'): {'models': 3, 'slope [CI]': '1.1 [1.0, 1.2]'}, ('v2', 'paper'): {'models': '', 'slope [CI]': '1.0 [0.9, 1.1]'}}
    """
    import pandas as pd

    paper = {c: c.replace(" (paper)", " [CI]") for c in frame.columns if c.endswith(" (paper)")}
    ours = frame.drop(columns=list(paper))
    rows, labels = [], []
    for label, row in frame.iterrows():
        rows.append(ours.loc[label].to_dict())
        labels.append((label, "here"))
        printed = row[list(paper)].rename(paper)
        if paper and (printed != "").any():
            rows.append({c: printed.get(c, "") for c in ours.columns})
            labels.append((label, "paper"))
    return pd.DataFrame(
        rows, index=pd.MultiIndex.from_tuples(labels, names=["fit", ""]), columns=ours.columns
    )
