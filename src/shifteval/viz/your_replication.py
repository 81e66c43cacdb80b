"""Figures of the your-replication chapter: the book's analyses drawn for your own test sets."""

from __future__ import annotations

import inspect

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..linfit.fits import inverse_transform, transform
from . import linear_fits
from .common import subplots, traced

#: The linear-fits panel without its own trace: a figure of this chapter that draws it is traced to this
#: module's function alone.
_fit_panel = inspect.unwrap(linear_fits.fit_panel)

REFERENCE_STYLES = {"CIFAR-10": ("tab:orange", "--"), "ImageNet": ("tab:green", ":")}


@traced
def fit_with_references(table: pd.DataFrame, fits: dict, refs: dict) -> Figure:
    """Your models' new vs original accuracy, the linear and probit fits, and Recht et al.'s lines.

    Each reference line is drawn over the range of its models only: the printed line on linear axes,
    our probit fit of the same models on probit axes.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`shifteval.yourrep.analysis.accuracy_table`.
    fits : dict
        :func:`shifteval.yourrep.analysis.fit_lines`.
    refs : dict
        :func:`shifteval.yourrep.analysis.reference_lines`.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels (linear and probit axes).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from shifteval.yourrep import analysis, example
    >>> d = example.tiny()
    >>> fig = fit_with_references(analysis.accuracy_table(d), analysis.fit_lines(d, n_boot=50, n_boot_images=20),
    ...                           analysis.reference_lines(n_boot=50))
    >>> len(fig.axes)
    2
    >>> plt.close("all")
    """
    fig, axes = subplots(1, 2, height=4.2)
    x, y = table["acc_original"].to_numpy(float), table["acc_new"].to_numpy(float)
    ci_x = (table["acc_original_low"].to_numpy(float), table["acc_original_high"].to_numpy(float))
    ci_y = (table["acc_new_low"].to_numpy(float), table["acc_new_high"].to_numpy(float))
    for ax, scale in zip(axes, ("linear", "probit"), strict=True):
        fit = fits[scale]["fit"]
        _fit_panel(ax, x, y, fit, orig_ci=ci_x, new_ci=ci_y, title=f"{scale} fit", point_label="your model")
        lo, hi = ax.get_xlim()
        for name, r in refs.items():
            color, style = REFERENCE_STYLES.get(name, ("grey", "-."))
            a, b = (float(v) for v in inverse_transform([lo, hi], scale))
            t = np.linspace(max(a, r["range"][0]), min(b, r["range"][1]), 100)  # fractions, the line's range
            if t[0] >= t[-1]:
                continue  # the line's models lie outside these axes
            if scale == "linear":  # the line as printed (§3.3)
                line, label = (
                    r["printed"]["slope"] * t + r["printed"]["intercept"] / 100,
                    f"Recht et al. {name}",
                )
            else:  # the paper printed no probit line: our fit of the same models
                line, label = r[scale].predict(t), f"Recht et al.'s {name} models (our probit fit)"
            ty = transform(np.clip(line, 1e-6, 1 - 1e-6), scale)
            ax.plot(transform(t, scale), ty, style, color=color, label=label)
        ax.set_xlim(lo, hi)
        ax.legend(fontsize=7, loc="upper left")
    return fig


@traced
def matched_gaps(tables: dict) -> Figure:
    """Each model's accuracy gap and matched gaps (Algorithms 1 and 2), and the fraction unmatched.

    Parameters
    ----------
    tables : dict
        :func:`shifteval.yourrep.analysis.matched_gaps`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from shifteval.yourrep import analysis, example
    >>> fig = matched_gaps(analysis.matched_gaps(example.tiny(), n_runs=2))
    >>> [a.get_ylabel() for a in fig.axes]
    ['gap, source − target (points)', 'fraction unmatched']
    >>> plt.close("all")
    """
    a1, a2 = tables["label_and_prob"], tables["prob"]
    order = a1.sort_values("acc_source").index
    pos = np.arange(len(order))
    fig, (top, bottom) = subplots(2, 1, height=5.5, sharex=True, height_ratios=[2, 1])
    w = 0.27
    top.bar(pos - w, 100 * a1.loc[order, "gap"], w, color="grey", label="accuracy gap")
    top.bar(pos, 100 * a1.loc[order, "matched_gap"], w, color="tab:blue", label="matched gap (Alg. 1)")
    top.bar(pos + w, 100 * a2.loc[order, "matched_gap"], w, color="tab:purple", label="matched gap (Alg. 2)")
    top.axhline(0, color="black", lw=0.8)
    top.set_ylabel("gap, source − target (points)")
    top.legend(fontsize=7)
    bottom.plot(pos, a1.loc[order, "fraction_unmatched"], "o-", color="tab:blue", label="Alg. 1")
    bottom.plot(pos, a2.loc[order, "fraction_unmatched"], "s-", color="tab:purple", label="Alg. 2")
    bottom.set_ylabel("fraction unmatched")
    bottom.set_xticks(pos, order, rotation=60, ha="right", fontsize=7)
    bottom.legend(fontsize=7)
    return fig


@traced
def selection_estimates(table: pd.DataFrame) -> Figure:
    """Original, new and selection-adjusted new accuracy of every model (Engstrom et al. 2020, Fig. 6).

    Parameters
    ----------
    table : pandas.DataFrame
        The first result of :func:`shifteval.yourrep.analysis.selection_adjusted`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from shifteval.yourrep import analysis, example
    >>> fig = selection_estimates(analysis.selection_adjusted(example.tiny(votes=True), n_boot=2)[0])
    >>> fig.axes[0].get_ylabel()
    'accuracy (%)'
    >>> plt.close("all")
    """
    t = table.sort_values("acc_original")
    pos = np.arange(len(t))
    fig, ax = subplots(height=4)
    ax.plot(pos, 100 * t["acc_original"], "o", color="black", label="original")
    ax.plot(pos, 100 * t["acc_new"], "s", color="grey", label="new")
    ax.plot(pos - 0.15, 100 * t["naive"], "v", color="tab:olive", label="naive (Eq. 4)")
    if t["jackknife"].notna().any():
        ax.plot(pos + 0.15, 100 * t["jackknife"], "^", color="tab:cyan", label="jackknife (§5.2)")
    err = 100 * np.stack([t["parametric"] - t["parametric_low"], t["parametric_high"] - t["parametric"]])
    ax.errorbar(
        pos,
        100 * t["parametric"],
        yerr=np.maximum(err, 0),
        fmt="D",
        color="tab:blue",
        ms=4,
        label="parametric (§5.3), 95% bootstrap",
    )
    ax.set_xticks(pos, t.index, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("accuracy (%)")
    ax.legend(fontsize=7)
    return fig


@traced
def mlm_sets(result: dict) -> Figure:
    """The best model's MLM on the original against the new set (one point per pair of classes).

    Parameters
    ----------
    result : dict
        :func:`shifteval.yourrep.analysis.mlm_of_best`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from shifteval.yourrep import analysis, example
    >>> mlm_sets(analysis.mlm_of_best(example.tiny())).axes[0].get_xlabel()
    'MLM on the original set'
    >>> plt.close("all")
    """
    m1, m2 = result["matrix"]["original"], result["matrix"]["new"]
    off = ~np.eye(len(m1), dtype=bool)
    fig, ax = plt.subplots(figsize=(4.8, 4.2))
    ax.scatter(m1[off], m2[off], s=12, alpha=0.6, color="tab:blue")
    top = float(max(m1[off].max(), m2[off].max()))
    ax.plot([0, top], [0, top], "--", color="grey", lw=0.8)
    ax.set_xlabel("MLM on the original set")
    ax.set_ylabel("MLM on the new set")
    ax.set_title(result["model"], fontsize=9)
    return fig


@traced
def label_free(new: pd.DataFrame, unlabeled: pd.DataFrame) -> Figure:
    """Label-free estimates against the true new accuracy, and the estimates of the unlabeled set.

    Parameters
    ----------
    new, unlabeled : pandas.DataFrame
        :func:`shifteval.yourrep.analysis.label_free_table`.

    Returns
    -------
    matplotlib.figure.Figure
        One panel, or two with an unlabeled set.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> from shifteval.yourrep import analysis, example
    >>> len(label_free(*analysis.label_free_table(example.tiny(unlabeled=True))).axes)
    2
    >>> plt.close("all")
    """
    methods = [c for c in new.columns if c != "truth"]
    fig, axes = subplots(
        1, 2 if len(unlabeled) else 1, height=4.2, width=1 if len(unlabeled) else 0.62, squeeze=False
    )
    ax = axes[0, 0]
    for m in methods:
        ax.plot(100 * new["truth"], 100 * new[m], "o", ms=4, label=m)
    lim = [
        100 * float(new[methods + ["truth"]].min().min()) - 2,
        100 * float(new[methods + ["truth"]].max().max()) + 2,
    ]
    ax.plot(lim, lim, "--", color="grey", lw=0.8)
    ax.set_xlabel("true new accuracy (%)")
    ax.set_ylabel("label-free estimate (%)")
    ax.legend(fontsize=7)
    if len(unlabeled):
        ax2 = axes[0, 1]
        order = unlabeled.sort_values("average_confidence").index
        for m in methods:
            ax2.plot(np.arange(len(order)), 100 * unlabeled.loc[order, m], "o", ms=4, label=m)
        ax2.set_xticks(np.arange(len(order)), order, rotation=60, ha="right", fontsize=7)
        ax2.set_ylabel("estimated accuracy on the unlabeled set (%)")
    return fig


@traced
def skipped(title: str, reason: str) -> Figure:
    """A placeholder figure saying that an analysis was skipped and why (the page keeps its layout).

    Parameters
    ----------
    title : str
        The analysis.
    reason : str
        Why the folder does not allow it.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> skipped("Matched evaluation", "no probabilities").axes[0].texts[0].get_text()[:7]
    'Skipped'
    >>> plt.close("all")
    """
    import textwrap

    fig, ax = plt.subplots(figsize=(6, 1.4))
    ax.axis("off")
    ax.text(0.5, 0.5, textwrap.fill(f"Skipped: {title}. {reason}.", 80), ha="center", va="center", fontsize=9)
    return fig
