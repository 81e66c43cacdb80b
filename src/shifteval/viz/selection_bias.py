"""Figures of the selection-bias chapter (Engstrom et al. 2020), its appendix experiments (App. D-F) last."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from numpy.typing import ArrayLike
from scipy import stats

from ..selection import parametric, toy
from .common import subplots, traced, wrap
from .names import display_name

if TYPE_CHECKING:
    import pandas as pd


@traced
def fig3_toy_model(
    sample: ArrayLike,
    alpha: float,
    beta: float,
    annotators: int = 10,
    annotator_counts: Sequence[int] = (1, 3, 10, 40, 200),
) -> Figure:
    """Engstrom et al. (2020), Figure 3: Eq. (1) against a Monte-Carlo run, and v2's density as annotators grow.

    Parameters
    ----------
    sample : array_like
        True selection frequencies of the candidates the Monte-Carlo run accepted
        (:func:`shifteval.selection.simulate_toy_replication`).
    alpha, beta : float
        Beta(α, β) of the candidates' true selection frequencies (p_flickr).
    annotators : int
        Annotators per candidate in the Monte-Carlo run (left panel).
    annotator_counts : sequence of int
        Annotators per candidate of the densities in the right panel.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    >>> fig = fig3_toy_model(toy.simulate_toy_replication(2.0, 2.0, 10, 2000), 2.0, 2.0, annotator_counts=(1, 10))
    >>> x, y = fig.axes[0].lines[0].get_data()  # Eq. (1), a density on [0, 1]
    >>> round(float(np.sum(y) * (x[1] - x[0])), 2), [line.get_label() for line in fig.axes[1].lines]
    (1.0, ['n = 1', 'n = 10', 'p₁'])
    >>> plt.close("all")
    """
    sample = np.asarray(sample)
    grid = np.linspace(0.001, 0.999, 400)
    fig, axes = subplots(1, 2, height=3.4)
    axes[0].hist(sample, bins=np.linspace(0, 1, 41).tolist(), density=True, alpha=0.4,
                 label=f"simulated, n = {annotators} ({len(sample):,} accepted)")  # fmt: skip
    density = toy.toy_v2_density(grid, alpha, beta, annotators)
    axes[0].plot(grid, density, lw=2, label=f"Eq. (1), n = {annotators}")
    axes[0].plot(grid, stats.beta.pdf(grid, alpha + 1, beta), "k--", lw=1.2, label="p₁ (v1)")
    axes[0].plot(grid, stats.beta.pdf(grid, alpha, beta), "k:", lw=1.2, label="p_flickr (candidates)")
    for count in annotator_counts:
        axes[1].plot(grid, toy.toy_v2_density(grid, alpha, beta, count), label=f"n = {count}")
    axes[1].plot(grid, stats.beta.pdf(grid, alpha + 1, beta), "k--", lw=1.2, label="p₁")
    for ax in axes:
        ax.set_xlabel("true selection frequency s")
        ax.set_ylabel("density")
        ax.legend(fontsize="x-small")
    return fig


@traced
def fig4_fresh_frequencies(counts_v1: ArrayLike, counts_v2: ArrayLike, annotators: int) -> Figure:
    """Engstrom et al., Figure 4: fresh observed frequencies of v1 and MatchedFrequency.

    Parameters
    ----------
    counts_v1, counts_v2 : array_like of int
        "Yes" votes of each v1 and each MatchedFrequency image in the fresh round.
    annotators : int
        Fresh annotators per image.

    Returns
    -------
    matplotlib.figure.Figure
        One panel of two histograms, one bin per possible frequency.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    >>> ax = fig4_fresh_frequencies([10, 9, 5], [3, 5], annotators=10).axes[0]
    >>> ax.get_xlabel(), [t.get_text() for t in ax.get_legend().get_texts()]
    ('observed selection frequency (10 fresh annotators)', ['v1', 'MatchedFrequency'])
    >>> plt.close("all")
    """
    bins = np.arange(annotators + 2) / annotators - 0.5 / annotators
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for counts, name in ((counts_v1, "v1"), (counts_v2, "MatchedFrequency")):
        ax.hist(
            np.asarray(counts) / annotators,
            bins=np.asarray(bins).tolist(),
            density=True,
            alpha=0.5,
            label=name,
        )
    ax.set_xlabel(f"observed selection frequency ({annotators} fresh annotators)")
    ax.set_ylabel("density")
    ax.legend(fontsize="small")
    return fig


@traced
def fig5_naive(
    votes_v2: ArrayLike, s_v2: ArrayLike, correct_best: ArrayLike, best_name: str, curve: dict
) -> Figure:
    """Engstrom et al., Figure 5: v2's frequencies and accuracy by frequency as annotators grow; naive error.

    Parameters
    ----------
    votes_v2 : array_like of int, shape (images, annotators)
        Every annotator's vote (0/1) on each v2 image.
    s_v2 : array_like
        True selection frequency of each v2 image.
    correct_best : array_like of bool
        Whether the best model classifies each v2 image correctly.
    best_name : str
        That model's name (y label of the middle panel).
    curve : dict
        The naive estimate's error as annotators grow: ``annotators``, ``error_points`` and
        ``line_in_1_over_m`` (coefficients of the least-squares line in 1/m, for ``numpy.polyval``).

    Returns
    -------
    matplotlib.figure.Figure
        Three panels.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    >>> rng = np.random.default_rng(0)
    >>> votes, s, correct = rng.integers(0, 2, (40, 10)), rng.random(40), rng.random(40) < 0.7
    >>> curve = {"annotators": [2, 5, 10], "error_points": [3.0, 1.2, 0.6], "line_in_1_over_m": [6.0, 0.0]}
    >>> fig = fig5_naive(votes, s, correct, "m", curve)
    >>> line = fig.axes[2].lines[1].get_ydata()  # the least-squares line 6/m at m = 2, 5, 10
    >>> len(fig.axes), fig.axes[1].get_ylabel(), np.round(line, 6).tolist()
    (3, 'accuracy of m', [3.0, 1.2, 0.6])
    >>> plt.close("all")
    """
    votes_v2, s_v2, correct_best = np.asarray(votes_v2), np.asarray(s_v2), np.asarray(correct_best)
    n = votes_v2.shape[1]
    fig, axes = subplots(1, 3, height=3.4)
    for m in sorted({2, min(10, n), n}):
        axes[0].hist(votes_v2[:, :m].mean(1), bins=np.linspace(-0.025, 1.025, 22), density=True,
                     histtype="step", lw=1.5, label=f"v2, m = {m}")  # fmt: skip
        k = votes_v2[:, :m].sum(1)
        acc = [correct_best[k == j].mean() if np.any(k == j) else np.nan for j in range(m + 1)]
        axes[1].plot(np.arange(m + 1) / m, acc, "o-", ms=3, label=f"observed ŝ, m = {m}")
    axes[0].hist(s_v2, bins=np.linspace(0, 1, 21), density=True, alpha=0.3, label="v2, true s")
    true_bins = np.clip((s_v2 * 10).astype(int), 0, 9)
    acc_true = [correct_best[true_bins == b].mean() if np.any(true_bins == b) else np.nan for b in range(10)]
    axes[1].plot((np.arange(10) + 0.5) / 10, acc_true, "k^-", label="true s")
    axes[0].set_xlabel("selection frequency")
    axes[1].set_xlabel("selection frequency")
    axes[1].set_ylabel(f"accuracy of {display_name(best_name)}")
    m = np.asarray(curve["annotators"], dtype=float)
    axes[2].plot(1 / m, curve["error_points"], "o-", label="naive − truth (mean over models)")
    axes[2].plot(
        1 / m,
        np.polyval(curve["line_in_1_over_m"], 1 / m),
        ":",
        color="0.4",
        label="least-squares line in 1/m",
    )
    axes[2].axhline(0, color="0.3", lw=1)
    axes[2].set_xlabel("1 / annotators per image")
    axes[2].set_ylabel("points")
    for ax in axes:
        ax.legend(fontsize="x-small")
    return fig


@traced
def fig6_estimates(
    acc_v1: ArrayLike,
    acc_v2: ArrayLike,
    estimates: pd.DataFrame | Mapping[str, ArrayLike],
    truth: ArrayLike,
    jack_low: ArrayLike,
    jack_high: ArrayLike,
    boot_low: ArrayLike,
    boot_high: ArrayLike,
    n_boot: int,
) -> Figure:
    """Engstrom et al., Figure 6: v1 against v2 accuracy, observed, adjusted (with intervals) and true.

    Parameters
    ----------
    acc_v1, acc_v2 : array_like
        Each model's observed accuracy on v1 and on v2.
    estimates : pandas.DataFrame or mapping of str -> array_like
        Adjusted v2 accuracies, columns ``"jackknife"`` and ``"parametric"``.
    truth : array_like
        Each model's v2 accuracy adjusted with the true selection frequencies.
    jack_low, jack_high : array_like
        The jackknife's 95% interval (:func:`shifteval.selection.bootstrap_jackknife`: the estimate ± 1.96
        bootstrap standard errors).
    boot_low, boot_high : array_like
        The parametric estimate's 95% interval (:func:`shifteval.selection.bootstrap_parametric`).
    n_boot : int
        Bootstrap samples of both (for the titles).

    Returns
    -------
    matplotlib.figure.Figure
        Two panels: jackknife, then parametric.

    Raises
    ------
    ValueError
        If an estimate lies outside its own interval (an interval must be built around its estimate).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    >>> v1 = np.array([0.7, 0.8, 0.9])
    >>> est = {"jackknife": v1 - 0.05, "parametric": v1 - 0.04}
    >>> fig = fig6_estimates(v1, v1 - 0.1, est, v1 - 0.03, v1 - 0.07, v1 - 0.03, v1 - 0.06, v1 - 0.02, n_boot=100)
    >>> [ax.get_title().replace(chr(10), " ") for ax in fig.axes]
    ['jackknife ± 1.96 SE (100-sample bootstrap over images and votes)', 'parametric ± 1.96 SE (100-sample bootstrap over images)']
    >>> plt.close("all")
    """
    for col, low, high in (("jackknife", jack_low, jack_high), ("parametric", boot_low, boot_high)):
        est = np.asarray(estimates[col], dtype=float)
        outside = (est < np.asarray(low, dtype=float)) | (est > np.asarray(high, dtype=float))
        if outside.any():
            raise ValueError(
                f"{int(outside.sum())} {col} estimate(s) lie outside their own interval; expected intervals "
                "built around the estimates"
            )
    fig, axes = subplots(1, 2, height=4.2)
    panels = ((axes[0], "jackknife", jack_low, jack_high,
               f"jackknife ± 1.96 SE\n({n_boot}-sample bootstrap over images and votes)"),
              (axes[1], "parametric", boot_low, boot_high, f"parametric ± 1.96 SE\n({n_boot}-sample bootstrap over images)"))  # fmt: skip
    lo = min(np.min(acc_v2), np.min(acc_v1)) - 0.02
    for ax, col, low, high, title in panels:
        ax.plot(acc_v1, acc_v2, "o", ms=4, color="0.6", label="v2 observed")
        ax.vlines(acc_v1, low, high, color="C0", lw=0.8)
        ax.plot(acc_v1, estimates[col], "o", ms=4, color="C0", label=f"v2 adjusted: {col}")
        ax.plot(acc_v1, truth, "x", ms=5, color="C3", label="ground truth (true s)")
        ax.plot([lo, 1], [lo, 1], "k--", lw=1)
        ax.set_xlabel("v1 accuracy")
        ax.set_ylabel("v2 accuracy")
        ax.set_title(title)
        ax.legend(fontsize="x-small", loc="upper left")
    return fig


@traced
def fig7_mixtures(
    panels: Sequence[tuple[str, ArrayLike, ArrayLike, parametric.BetaBinomialMixture]], annotators: int
) -> Figure:
    """Engstrom et al., Figure 7: fitted beta mixtures, the ŝ they imply, the observed ŝ and the true s.

    ``panels`` is a list of ``(name, counts, true_s, mixture)``.

    Parameters
    ----------
    panels : sequence of (str, array_like, array_like, BetaBinomialMixture)
        Per panel: its title, the "yes" votes of each image, the images' true selection frequencies
        and the mixture fitted to the votes (:func:`shifteval.selection.fit_betabinomial_mixture`).
    annotators : int
        Annotators per image.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per entry of ``panels``.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    >>> mix = parametric.BetaBinomialMixture(np.array([1.0]), np.array([2.0]), np.array([2.0]), 0.0, 10, 0, True)
    >>> ax = fig7_mixtures([("v2", [3, 5, 8], [0.3, 0.5, 0.8], mix)], annotators=10).axes[0]
    >>> k, p = ax.lines[1].get_data()  # implied p(ŝ), scaled to a density: sums to annotators
    >>> ax.get_title(), round(float(p.sum()), 6)
    ('v2', 10.0)
    >>> plt.close("all")
    """
    grid = np.linspace(0.001, 0.999, 400)
    bins = np.arange(annotators + 2) / annotators - 0.5 / annotators
    rows, cols = wrap(len(panels))
    fig, axes = subplots(rows, cols, height=3.4 * rows, squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.remove()
    for ax, (name, counts, s_true, mix) in zip(axes.flat, panels, strict=False):
        ax.hist(
            np.asarray(counts) / annotators,
            bins=bins,
            density=True,
            alpha=0.35,
            color="C0",
            label="observed ŝ",
        )
        ax.hist(s_true, bins=np.linspace(0, 1, 26), density=True, histtype="step", lw=1.5, color="k",
                label="true s (world)")  # fmt: skip
        ax.plot(grid, mix.pdf(grid), lw=2, color="C1", label="fitted mixture p(s)")
        k = np.arange(annotators + 1)
        ax.plot(k / annotators, mix.pmf(k, annotators) * annotators, ".", color="C2", label="implied p(ŝ)")
        ax.set_title(name)
        ax.set_xlabel("selection frequency")
        ax.legend(fontsize="x-small", loc="upper left")
    return fig


@traced
def fig11_gap_vs_annotators(gaps: dict) -> plt.Figure:
    """Engstrom et al., Figure 11 (App. D.1): the v1 - replication gap against the matching votes.

    Parameters
    ----------
    gaps : dict
        :func:`shifteval.selection.study.gap_vs_annotators`'s result.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> rows = [{"annotators": m, "gap": 10 / m, "gap_sd": 0.1, "reweighted_gap": 9 / m} for m in (1, 2, 4)]
    >>> fig = fig11_gap_vs_annotators({"by_annotators": rows, "noise_free": 1.0, "rounds": 2})
    >>> fig.axes[0].get_xlabel()
    'annotators per image used for matching (m)'
    >>> plt.close(fig)
    """
    rows = gaps["by_annotators"]
    m = np.array([r["annotators"] for r in rows])
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar(m, [r["gap"] for r in rows], yerr=[1.96 * r["gap_sd"] for r in rows], fmt="o-", capsize=3,
                label=f"re-matched MatchedFrequency (mean of {gaps['rounds']} rounds, ±1.96 SD)")  # fmt: skip
    ax.plot(m, [r["reweighted_gap"] for r in rows], "s--", label="Eq. (9): pool reweighted to v1's m-vote ŝ")
    ax.axhline(gaps["noise_free"], color="k", ls=":", label="noise-free matching (m → ∞)")
    ax.set_xscale("log")
    ax.set_xticks(m, [str(v) for v in m])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("annotators per image used for matching (m)")
    ax.set_ylabel("v1 − replication accuracy (points)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


@traced
def fig12_jackknife_by_annotators(
    annotator_counts: ArrayLike, estimates: ArrayLike, names: list, truth: ArrayLike, shown: int = 10
) -> plt.Figure:
    """Engstrom et al., Figure 12 (App. E): each model's n-annotator jackknife estimate against 1/n.

    Parameters
    ----------
    annotator_counts : array_like of int
        Numbers of annotators n.
    estimates : array_like, shape (len(annotator_counts), models)
        :func:`shifteval.selection.study.jackknife_by_annotators`.
    names : list of str
        Model names.
    truth : array_like
        Each model's ground-truth adjusted accuracy, drawn at 1/n = 0.
    shown : int
        Models drawn, spread evenly over the zoo's accuracy range (the paper shows 10).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> fig = fig12_jackknife_by_annotators([2, 4], [[0.5, 0.6], [0.55, 0.65]], ["a", "b"], [0.6, 0.7])
    >>> len(fig.axes[0].lines)
    4
    >>> plt.close(fig)
    """
    est, truth = np.asarray(estimates, dtype=float), np.asarray(truth, dtype=float)
    order = np.argsort(truth)
    pick = order[np.unique(np.linspace(0, len(order) - 1, min(shown, len(order))).round().astype(int))]
    x = 1 / np.asarray(annotator_counts, dtype=float)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, j in enumerate(pick):
        color = plt.cm.viridis(i / max(1, len(pick) - 1))
        ax.plot(x, 100 * est[:, j], "o-", ms=3, color=color, label=names[j])
        ax.plot([0], [100 * truth[j]], "x", ms=7, color=color)
    ax.set_xlabel("1 / n (n annotators)")
    ax.set_ylabel("jackknife-adjusted accuracy (%)")
    ax.set_title("crosses: ground truth at 1/n = 0")
    ax.legend(fontsize="x-small", ncol=2)
    fig.tight_layout()
    return fig


@traced
def fig13_14_sweeps(acc_v1: ArrayLike, acc_v2: ArrayLike, truth: ArrayLike, sweeps: dict) -> plt.Figure:
    """Engstrom et al., Figures 13 and 14 (App. F.2, F.3): the parametric estimate under other settings.

    v1 against parametrically adjusted v2 accuracy with fewer annotators (left) and with more or fewer
    mixture components (right).

    Parameters
    ----------
    acc_v1, acc_v2, truth : array_like
        Per model: v1 accuracy, observed v2 accuracy, ground-truth adjusted v2 accuracy.
    sweeps : dict
        :func:`shifteval.selection.study.parametric_sweeps`'s result.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> sweeps = {"annotators": [{"annotators": 5, "estimates": [0.5, 0.6]}],
    ...           "components": [{"components": 2, "estimates": [0.5, 0.6]}]}
    >>> fig = fig13_14_sweeps([0.6, 0.7], [0.4, 0.5], [0.52, 0.61], sweeps)
    >>> [ax.get_title() for ax in fig.axes]
    ['Figure 13: annotators', 'Figure 14: mixture components']
    >>> plt.close(fig)
    """
    acc_v1, acc_v2, truth = (100 * np.asarray(v, dtype=float) for v in (acc_v1, acc_v2, truth))
    fig, axes = subplots(1, 2, height=4, sharey=True)
    lo = min(acc_v1.min(), acc_v2.min()) - 2
    for ax, key, title in ((axes[0], "annotators", "Figure 13: annotators"),
                           (axes[1], "components", "Figure 14: mixture components")):  # fmt: skip
        ax.plot(acc_v1, acc_v2, "o", ms=3, color="0.6", label="v2 observed")
        for i, row in enumerate(sweeps[key]):
            ax.plot(acc_v1, 100 * np.asarray(row["estimates"]), "o", ms=3, color=f"C{i}",
                    label=f"adjusted, {key} = {row[key]}")  # fmt: skip
        ax.plot(acc_v1, truth, "x", ms=5, color="k", label="ground truth")
        ax.plot([lo, 100], [lo, 100], "k--", lw=1)
        ax.set_xlabel("v1 accuracy (%)")
        ax.set_title(title)
        ax.legend(fontsize="x-small", loc="upper left")
    axes[0].set_ylabel("v2 accuracy (%)")
    return fig
