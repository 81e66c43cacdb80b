"""Figures of the linear-fits chapter (Recht et al. 2019)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..datasets import published
from ..linfit import LinearFit, inverse_transform, transform
from .common import FIT_COLOR, POINT_COLOR, _percent_ticks


def fit_panel(
    ax,
    orig,
    new,
    fit: LinearFit,
    *,
    orig_ci=None,
    new_ci=None,
    title: str | None = None,
    extra=None,
    extra_label: str | None = None,
    xlabel: str = "original test accuracy (%)",
    ylabel: str = "new test accuracy (%)",
    point_label: str = "model",
):
    """Recht et al. (2019), Figures 1, 2 and 6: new vs. original accuracy of every model.

    Points with Clopper-Pearson error bars, the line y = x, the least-squares fit and its
    pointwise bootstrap band. All accuracies are fractions; the axes are labelled in percent
    and follow the fit's scale (linear or probit).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    orig, new : array_like
        Accuracies of the fitted models.
    fit : LinearFit
        The fit to draw (its scale sets the axes).
    orig_ci, new_ci : (low, high) arrays, optional
        Error bars (fractions).
    extra : (orig, new) arrays, optional
        Models drawn but not fitted (e.g. Fisher-vector baselines), as hollow markers.
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
    ax.set_xlim(T(lo), T(hi))
    ax.set_ylim(T(lo), T(hi))
    ax.set_aspect("equal")
    _percent_ticks(ax, lo, hi, scale)
    ax.set_xlabel(xlabel + (" — probit scale" if scale == "probit" else ""))
    ax.set_ylabel(ylabel + (" — probit scale" if scale == "probit" else ""))
    if title:
        ax.set_title(title)
    ax.legend(loc="upper left", fontsize="small", frameon=True)
    return ax


def rank_change(ax, orig_rank, new_rank, names=None, top: int = 8):
    """Original rank against new rank: points on the diagonal kept their place.

    Recht et al. (2019, §3.3, "Few changes in the relative order"). The ranks are the *printed*
    ones (Tables 11-19, computed by the paper from unrounded accuracies); recomputing them from the
    rounded accuracies would reorder tied models. The models whose rank moved most are labelled.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    orig_rank, new_rank : array_like of int
        1-based ranks on the original and the new test set.
    names : array_like of str, optional
        Model names, for the labels.
    top : int
        How many of the most-moved models to label.
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


def gaussian_model_panel(ax, acc1, acc2, slope: float, intercept: float, fitted: LinearFit | None = None):
    """Recht et al. (2019, §5.3): simulated probit accuracies against the analytic line."""
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
        inverse_transform(grid.min(), "probit"),
        inverse_transform(grid.max(), "probit"),
        "probit",
        which="x",
    )
    _percent_ticks(ax, float(np.min(acc2)) - 0.02, float(np.max(acc2)) + 0.02, "probit", which="y")
    ax.set_xlabel("accuracy on test set 1 (%) — probit scale")
    ax.set_ylabel("accuracy on test set 2 (%) — probit scale")
    ax.legend(loc="upper left", fontsize="small")
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


def fig1_linear_fits(cifar, imagenet, fits: dict):
    """Recht et al. (2019), Figure 1: CIFAR-10 (Table 11) and ImageNet top-1 MatchedFrequency (Table 14).

    The 64 convolutional networks on ImageNet, as in the paper (the Fisher-vector models are left
    out of this figure and of the fit; Figures 6 and 13 include them).

    Parameters
    ----------
    cifar, imagenet : pandas.DataFrame
        The two transcribed tables.
    fits : dict
        :func:`shifteval.testbeds.fit_recht2019`'s fits (``cifar10``, ``imagenet_top1_matchedfrequency_cnn``).
    """
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.3))
    _table_panel(axes[0], cifar, fits["cifar10"], "CIFAR-10")
    _table_panel(
        axes[1], imagenet, fits["imagenet_top1_matchedfrequency_cnn"], "ImageNet top-1, MatchedFrequency"
    )
    fig.tight_layout()
    return fig


def fig6_linear_vs_probit(imagenet, fits: dict):
    """Recht et al. (2019), Figure 6: all 67 ImageNet models (Fisher vectors hollow), linear and probit.

    Fits ``imagenet_top1_matchedfrequency_all_{linear,probit}``.
    """
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.3))
    for ax, key, scale in zip(
        axes,
        ["imagenet_top1_matchedfrequency_all_linear", "imagenet_top1_matchedfrequency_all_probit"],
        ["linear", "probit"],
        strict=True,
    ):
        _table_panel(ax, imagenet, fits[key], f"{scale} axes, all 67 models", fv_extra=True, fv_fitted=True)
    fig.tight_layout()
    return fig


def _grid(tables: dict, fits: dict, suffix: str, fv: bool):
    fig, axes = plt.subplots(2, 3, figsize=(15, 10.2))
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
    fig.tight_layout()
    return fig


def fig12_all_test_sets(tables: dict, fits: dict):
    """Recht et al. (2019), Figure 12: top-1 (top row) and top-5 (bottom row) on the three new test sets.

    Linear axes, the 64 convolutional networks, fits ``imagenet_{top1,top5}_{strategy}_cnn``.

    Parameters
    ----------
    tables : dict
        Transcribed tables by name (``recht2019_imagenet_{k}_{strategy}``).
    fits : dict
        :func:`shifteval.testbeds.fit_recht2019`'s fits.
    """
    return _grid(tables, fits, "cnn", fv=False)


def fig13_probit_all_models(tables: dict, fits: dict):
    """Recht et al. (2019), Figure 13: Figure 12 on probit axes, all 67 models (Fisher vectors hollow).

    Fits ``imagenet_{top1,top5}_{strategy}_all_probit``.
    """
    return _grid(tables, fits, "all_probit", fv=True)


def table14_rank_change(table, top: int = 8):
    """The printed ranks of Table 14 (ImageNet top-1 MatchedFrequency) as a figure (§3.3)."""
    fig, ax = plt.subplots(figsize=(5.5, 5.3))
    rank_change(ax, table.orig_rank, table.new_rank, names=table.model.to_numpy(), top=top)
    ax.set_title("ImageNet top-1, MatchedFrequency")
    return fig


def engstrom_fig6b_timm_testbed(table, fit: LinearFit, recht_fit: LinearFit):
    """Engstrom et al. (2020), Figure 6b unadjusted: 136 timm models, with Recht et al.'s line (dotted)."""
    fig, ax = plt.subplots(figsize=(5.8, 5.5))
    fit_panel(
        ax, table.orig_acc / 100, table.new_acc / 100, fit, title="136 timm models (Engstrom et al. 2020)"
    )
    grid = np.linspace(0.55, 0.9, 50)
    ax.plot(grid, recht_fit.predict(grid), color="0.2", ls=":", lw=1.5, label="Recht et al. fit (64 CNNs)")
    ax.legend(loc="upper left", fontsize="small")
    return fig


def sec53_gaussian_difficulty(runs: dict):
    """Recht et al. (2019), §5.3: simulated probit accuracies against the Gaussian model's line.

    Parameters
    ----------
    runs : dict
        Title -> ``(acc1, acc2, u, v, fit)`` (simulated accuracies, analytic line, least-squares fit).
    """
    fig, axes = plt.subplots(1, len(runs), figsize=(5.8 * len(runs), 5.3), squeeze=False)
    for ax, (title, (acc1, acc2, u, v, fit)) in zip(axes[0], runs.items(), strict=True):
        gaussian_model_panel(ax, acc1, acc2, u, v, fitted=fit)
        ax.set_title(title)
    fig.tight_layout()
    return fig


def zoo_fits(acc, fits: dict, strategies, reference: str = "v1"):
    """The world's zoo: each replicated set against ``reference``, linear (top) and probit (bottom)."""
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


def per_image_class_drops(drops, share: float = 0.9):
    """Per-class accuracy drop on MatchedFrequency, classes sorted by their mean drop over models.

    Beyond Recht et al. (2019), whose tables give one accuracy per model: the band spans the 10th to
    90th percentile of the models' drops in each class, the line is their mean.
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
