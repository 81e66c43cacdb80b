"""Figures of the OOD-aware AutoEval chapter (Zhu et al. 2023), named after the paper's figures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .common import subplots, traced

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from pandas.io.formats.style import Styler

    from ..autoeval.network import Outputs


@traced
def energy_histograms(
    ax: Axes, energies: dict[str, ArrayLike], threshold: float, title: str | None = None, bins: int = 60
) -> Axes:
    """Step histograms of energy scores, one per set (``{label: energies}``), with the OOD threshold.

    Zhu et al. (§3.5) exclude every image whose energy lies right of the line.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw; returned.
    energies : dict of str -> array_like
        Energy scores of each set, by legend label.
    threshold : float
        The OOD threshold τ (dashed vertical line).
    title : str, optional
        Panel title.
    bins : int
        Number of histogram bins, spanning the 0.5th to 99.5th percentile of all energies and τ.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> sets = {"ID": rng.normal(-8, 1, 200), "OOD": rng.normal(-4, 1, 200)}
    >>> ax = energy_histograms(plt.figure().gca(), sets, threshold=-5.0, title="demo", bins=20)
    >>> [t.get_text() for t in ax.get_legend().get_texts()], list(ax.lines[0].get_xdata())
    (['ID', 'OOD', 'threshold'], [-5.0, -5.0])
    >>> plt.close("all")
    """
    values = np.concatenate([np.asarray(v, float) for v in energies.values()])
    lo, hi = np.percentile(values, [0.5, 99.5])
    edges = np.linspace(min(lo, threshold), max(hi, threshold), bins + 1)
    for label, e in energies.items():
        ax.hist(
            np.clip(e, edges[0], edges[-1]),
            bins=edges.tolist(),
            density=True,
            histtype="step",
            lw=1.6,
            label=label,
        )
    ax.axvline(threshold, color="black", ls="--", lw=1.2, label="threshold")
    ax.set(xlabel="energy E(x)", ylabel="density", title=title)
    ax.legend(fontsize="x-small")
    return ax


@traced
def fig_energy(
    train: Outputs, outputs: dict[str, Outputs], ref_id: str, oods: Sequence[str], percentile: float
) -> Figure:
    """Energies of the training set, ``ref_id`` and each OOD source.

    Left the classifier's own (from its logits), right the outlier-exposure detector's; the dashed line is
    each one's threshold.

    Parameters
    ----------
    train : Outputs
        The classifier's outputs on its training set (sets each threshold).
    outputs : dict of str -> Outputs
        Outputs per test set, holding ``ref_id`` and every name in ``oods``.
    ref_id : str
        The in-distribution test set shown.
    oods : sequence of str
        The OOD sources shown.
    percentile : float
        Threshold percentile of the training energies (:func:`shifteval.autoeval.energy_threshold`).

    Returns
    -------
    matplotlib.figure.Figure
        Two panels sharing the y axis (see :func:`energy_histograms`).

    Examples
    --------
    >>> from shifteval.autoeval.network import Outputs
    >>> rng = np.random.default_rng(0)
    >>> def out(scale): return Outputs(rng.normal(0, scale, (50, 3)), np.zeros((50, 2)))
    >>> fig = fig_energy(out(3.0), {"id": out(3.0), "noise": out(0.5)}, "id", ["noise"], percentile=95)
    >>> [ax.get_title() for ax in fig.axes]
    ['energies of the classifier', 'energies of the detector (outlier exposure)']
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['training set', 'id', 'noise', 'threshold']
    >>> plt.close("all")
    """
    from ..autoeval import energy, energy_threshold

    scorers = {
        "classifier": lambda o: energy(o.logits),
        "detector (outlier exposure)": lambda o: o.energies(),
    }
    fig, axes = subplots(1, 2, height=3.6, sharey=True)
    for ax, (name, score) in zip(axes, scorers.items(), strict=True):
        sets = {
            "training set": score(train),
            ref_id: score(outputs[ref_id]),
            **{s: score(outputs[s]) for s in oods},
        }
        energy_histograms(
            ax, sets, energy_threshold(sets["training set"], percentile), title=f"energies of the {name}"
        )
    return fig


@traced
def meta_regression(
    fd_train: ArrayLike,
    acc_train: ArrayLike,
    fd_val: ArrayLike,
    acc_val: ArrayLike,
    pred_mlp: ArrayLike,
    pred_lin: ArrayLike,
    rmse_mlp: float,
    rmse_lin: float,
) -> Figure:
    """The regression on the meta-dataset.

    Left: accuracy against FD per meta-set; right: predicted against true accuracy on the validation
    meta-sets (MLP on the representation, linear on FD).

    Parameters
    ----------
    fd_train, acc_train : array_like
        Fréchet distance to the training set and classifier accuracy of each training meta-set.
    fd_val, acc_val : array_like
        The same for each validation meta-set.
    pred_mlp, pred_lin : array_like
        Accuracies of the validation meta-sets predicted by the MLP and by the linear regression on FD.
    rmse_mlp, rmse_lin : float
        Their RMSE in accuracy points (for the legend).

    Returns
    -------
    matplotlib.figure.Figure
        Two panels.

    Examples
    --------
    >>> acc = np.array([0.9, 0.8, 0.7])
    >>> fig = meta_regression([1, 2, 3], acc, [1.5, 2.5], acc[:2], acc[:2], acc[:2] + 0.01, 0.0, 1.0)
    >>> [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    ['MLP on h (RMSE 0.00 pts)', 'linear on FD (RMSE 1.00 pts)']
    >>> plt.close("all")
    """
    fig, axes = subplots(1, 2, height=3.6)
    axes[0].scatter(fd_train, acc_train, s=10, label="training meta-sets")
    axes[0].scatter(fd_val, acc_val, s=14, marker="x", label="validation meta-sets")
    axes[0].set(
        xlabel="Fréchet distance to the training set",
        ylabel="classifier accuracy",
        title="accuracy against FD",
    )
    axes[0].legend()
    axes[1].scatter(acc_val, pred_mlp, s=14, label=f"MLP on h (RMSE {rmse_mlp:.2f} pts)")
    axes[1].scatter(acc_val, pred_lin, s=14, label=f"linear on FD (RMSE {rmse_lin:.2f} pts)")
    lims = [min(np.min(acc_val), np.min(pred_mlp)) - 0.02, 1]
    axes[1].plot(lims, lims, color="grey", lw=1)
    axes[1].set(xlabel="true accuracy", ylabel="predicted accuracy", title="validation meta-sets")
    axes[1].legend(fontsize="small")
    return fig


@traced
def meta_set_sweep(sweep: pd.DataFrame, chapter: int | None = None) -> Figure:
    """Validation RMSE of AutoEval's two regressors against the number of training meta-sets.

    Zhu et al. learn the regression from 800 meta-sets (§4.1); the x axis doubles, as the counts usually do.

    Parameters
    ----------
    sweep : pandas.DataFrame
        From :func:`shifteval.autoeval.protocol.meta_set_sweep`: index ``meta_sets``, columns ``mlp`` and
        ``linear_fd`` (accuracy points).
    chapter : int, optional
        The chapter's own count, marked by a dashed line.

    Returns
    -------
    matplotlib.figure.Figure
        One panel, log-scaled x axis labelled with the counts.

    Examples
    --------
    >>> sweep = pd.DataFrame({"mlp": [7.0, 3.5, 3.4], "linear_fd": [8.7, 8.8, 8.7]}, index=[25, 100, 400])
    >>> ax = meta_set_sweep(sweep, chapter=100).axes[0]
    >>> [line.get_label() for line in ax.lines], [t.get_text() for t in ax.get_xticklabels()]
    (['MLP on h', 'linear on FD', 'this chapter: 100'], ['25', '100', '400'])
    >>> plt.close("all")
    """
    fig, ax = subplots(width=0.6, height=3.4)
    ax.plot(sweep.index, sweep["mlp"], marker="o", label="MLP on h")
    ax.plot(sweep.index, sweep["linear_fd"], marker="s", label="linear on FD")
    if chapter is not None:
        ax.axvline(chapter, color="grey", ls="--", lw=1, label=f"this chapter: {chapter}")
    ax.set_xscale("log")
    ax.set_xticks(list(sweep.index), [str(n) for n in sweep.index])
    ax.minorticks_off()
    ax.set(
        xlabel="training meta-sets", ylabel="validation RMSE (points)", title="more meta-sets", ylim=(0, None)
    )
    ax.legend()
    return fig


@traced
def fig3_threshold_sweep(sweep: pd.DataFrame) -> Figure:
    """The paper's Figure 3: ID images excluded, OOD images kept and RMSE against the threshold percentile.

    Parameters
    ----------
    sweep : pandas.DataFrame
        One row per threshold: ``percentile``, ``id_excluded`` and ``ood_kept`` (fractions) and ``rmse``
        (accuracy points).

    Returns
    -------
    matplotlib.figure.Figure
        One panel; the x axis lists the percentiles evenly spaced.

    Examples
    --------
    >>> sweep = pd.DataFrame({"percentile": [90, 99.5], "id_excluded": [0.1, 0.005], "ood_kept": [0.2, 0.6], "rmse": [2.0, 3.0]})
    >>> ax = fig3_threshold_sweep(sweep).axes[0]
    >>> [t.get_text() for t in ax.get_xticklabels()], ax.lines[0].get_ydata().tolist()
    (['90', '99.5'], [10.0, 0.5])
    >>> plt.close("all")
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    xs = np.arange(len(sweep))
    ax.plot(xs, 100 * sweep["id_excluded"], marker="o", label="ID images judged OOD (%)")
    ax.plot(xs, 100 * sweep["ood_kept"], marker="s", label="OOD images kept (%)")
    ax.plot(xs, sweep["rmse"], marker="^", color="black", label="RMSE of the estimate (points)")
    ax.set_xticks(xs, [f"{q:g}" for q in sweep["percentile"]])
    ax.set(
        xlabel="threshold: percentile of training energies",
        ylabel="percent / points",
        title="Figure 3: threshold sweep at 10% OOD",
    )
    ax.legend()
    return fig


@traced
def fig4_ood_share(
    shares: pd.DataFrame,
    labels: dict[str, str],
    methods: Sequence[str] = ("autoeval", "autoeval_energy_ood", "rotation", "atc", "doc"),
) -> Figure:
    """The paper's Figure 4: RMSE of several estimators against the OOD share.

    Parameters
    ----------
    shares : pandas.DataFrame
        RMSE (accuracy points) per OOD share (the index, a fraction) and method (columns).
    labels : dict of str -> str
        Legend label of each method.
    methods : sequence of str
        The methods drawn (AutoEval's lines are thicker).

    Returns
    -------
    matplotlib.figure.Figure
        One panel.

    Examples
    --------
    >>> shares = pd.DataFrame({"autoeval": [1.0, 4.0], "atc": [2.0, 3.0]}, index=[0.0, 0.2])
    >>> ax = fig4_ood_share(shares, {"autoeval": "AutoEval", "atc": "ATC"}, methods=("autoeval", "atc")).axes[0]
    >>> [line.get_label() for line in ax.lines], ax.lines[0].get_xdata().tolist()
    (['AutoEval', 'ATC'], [0.0, 20.0])
    >>> plt.close("all")
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for m in methods:
        ax.plot(
            100 * shares.index,
            shares[m],
            marker="o",
            label=labels[m],
            lw=2.5 if m.startswith("autoeval") else 1,
        )
    ax.set(
        xlabel="OOD images in the test set (%)", ylabel="RMSE (accuracy points)", title="Figure 4: OOD share"
    )
    ax.legend()
    return fig


@traced
def fig5_unseen(
    unseen_rmse: pd.DataFrame,
    labels: dict[str, str],
    methods: Sequence[str] = ("rotation", "atc", "doc", "autoeval", "autoeval_energy_ood"),
) -> Figure:
    """The paper's Figure 5: RMSE on test sets transformed in ways the meta-dataset never used.

    Parameters
    ----------
    unseen_rmse : pandas.DataFrame
        RMSE (accuracy points) per transformation (rows) and method (columns).
    labels : dict of str -> str
        Display name of each method (the groups of bars).
    methods : sequence of str
        The methods drawn, in order.

    Returns
    -------
    matplotlib.figure.Figure
        One panel of grouped bars, one bar per transformation.

    Examples
    --------
    >>> rmse = pd.DataFrame({"atc": [2.0, 3.0], "doc": [1.0, 5.0]}, index=["rotate", "blur"])
    >>> ax = fig5_unseen(rmse, {"atc": "ATC", "doc": "DoC"}, methods=("atc", "doc")).axes[0]
    >>> [t.get_text() for t in ax.get_xticklabels()], len(ax.patches)
    (['ATC', 'DoC'], 4)
    >>> plt.close("all")
    """
    fig, ax = subplots(height=4)
    unseen_rmse[list(methods)].rename(columns=labels).T.plot.bar(ax=ax, rot=0)
    ax.set(
        ylabel="RMSE (accuracy points)",
        title="Figure 5: test-time transformations unseen in the meta-dataset",
    )
    return fig


#: Column headings of :func:`by_source_table`.
BY_SOURCE_COLUMNS = {
    "accuracy": "accuracy",
    "excluded_share": "ID excluded",
    "excluded_accuracy": "accuracy of excluded",
    "autoeval": "AutoEval",
    "autoeval_energy_ood": "+ energy OOD (paper)",
    "remedy": "+ τ from meta-sets (ours)",
}


@traced
def by_source_table(
    table: pd.DataFrame, remedy: pd.Series, accuracy: dict, clean: str | None = None
) -> Styler:
    """Table 1 per ID source as the page shows it: shares as percentages, RMSE in points, display names.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`shifteval.autoeval.by_source` (rows: ID sources, the clean one possibly named ``clean``).
    remedy : pandas.Series
        The OOD-aware RMSE per row under another threshold.
    accuracy : dict of str -> float
        The classifier's accuracy per ID source, in the rows' order.
    clean : str, optional
        The clean source's name, shown as ``clean (<name>)``.

    Returns
    -------
    pandas.io.formats.style.Styler

    Examples
    --------
    >>> t = pd.DataFrame({"excluded_share": [0.01], "excluded_accuracy": [0.5], "autoeval": [9.0],
    ...                   "autoeval_energy_ood": [7.0]}, index=["clean"])
    >>> s = by_source_table(t, pd.Series([8.0], index=["clean"]), {"test": 0.93}, clean="test")
    >>> list(s.data.index), list(s.data.columns)[:2]
    (['clean (test)'], ['accuracy', 'ID excluded'])
    """
    shown = table[["excluded_share", "excluded_accuracy", "autoeval", "autoeval_energy_ood"]].assign(
        remedy=remedy
    )
    shown.insert(0, "accuracy", list(accuracy.values()))
    shown.index = [f"clean ({clean})" if row == "clean" and clean else row for row in shown.index]
    shares, points = list(BY_SOURCE_COLUMNS.values())[:3], list(BY_SOURCE_COLUMNS.values())[3:]
    return (
        shown.rename(columns=BY_SOURCE_COLUMNS)
        .style.format("{:.1%}", subset=shares, na_rep="–")
        .format("{:.2f}", subset=points)
    )


#: Two-line column headings of the RMSE tables: (group, method), so that nine methods fit the page.
METHOD_HEADINGS = {
    "softmax_0.8": ("softmax", "τ=0.8"),
    "softmax_0.9": ("softmax", "τ=0.9"),
    "average_confidence": ("", "avg. conf."),
    "doc": ("", "DoC"),
    "atc": ("", "ATC"),
    "rotation": ("", "rotation"),
    "autoeval_linear": ("AutoEval", "FD, linear"),
    "autoeval": ("AutoEval", "MLP"),
    "autoeval_energy_ood": ("AutoEval", "+ energy OOD"),
}


@traced
def method_columns(table: pd.DataFrame) -> pd.DataFrame:
    """The table with its method columns under two-line headings (:data:`METHOD_HEADINGS`).

    Parameters
    ----------
    table : pandas.DataFrame
        One column per method of :data:`shifteval.autoeval.METHODS`.

    Returns
    -------
    pandas.DataFrame
        The same values, columns a two-level index (group, method).

    Examples
    --------
    >>> list(method_columns(pd.DataFrame({"doc": [1.0], "autoeval": [2.0]})).columns)
    [('', 'DoC'), ('AutoEval', 'MLP')]
    """
    import pandas as pd

    return table.set_axis(pd.MultiIndex.from_tuples([METHOD_HEADINGS[m] for m in table.columns]), axis=1)


@traced
def rmse_table(table: pd.DataFrame) -> Styler:
    """Table 1 (or 2) as the page shows it: one row per test set, RMSE in points, each row's best shaded.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`shifteval.autoeval.rmse_table`: rows ``"<ID source> + <OOD source>"`` and ``"all sets"``,
        one column per method.

    Returns
    -------
    pandas.io.formats.style.Styler
        Rows named ``"<ID source> with <OOD source>"``, columns under :func:`method_columns`'s headings,
        the lowest RMSE of each row shaded.

    Examples
    --------
    >>> t = pd.DataFrame({"autoeval": [3.0, 3.0]}, index=["v1+fog@3 + natural_patches", "all sets"])
    >>> list(rmse_table(t).data.index)
    ['v1 + fog (level 3) with natural patches', 'all sets']
    """
    from .names import display_name

    rows = [" with ".join(map(str, map(display_name, label.split(" + ", 1)))) for label in table.index]
    shown = method_columns(table).set_axis(rows).rename_axis("ID test set with OOD images")
    return shown.style.format("{:.2f}").highlight_min(axis=1, color="#cde8c9")
