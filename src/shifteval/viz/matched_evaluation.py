"""Figures of the matched-evaluation chapter (Anzaku et al.)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from .common import subplots, traced, wrap
from .names import display_name

if TYPE_CHECKING:
    import pandas as pd

    from ..zoo.store import Predictions


def _named(names: dict) -> dict:
    """Set names (the roles ``source`` and ``target``) as a reader sees them."""
    return {role: display_name(name) for role, name in names.items()}


@traced
def reliability_diagram(
    ax: Axes, confidence: ArrayLike, correct: ArrayLike, label: str, bins: int = 10, color: str | None = None
) -> Axes:
    """Accuracy against confidence in equal-width bins (Anzaku et al., Figures 5 and 8).

    Bins with no example are skipped; marker size grows with the number of examples in the bin.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw; returned.
    confidence : array_like of float
        Predicted probability p̂ of each example, in [0, 1].
    correct : array_like of bool or float
        Whether each prediction is correct.
    label : str
        Legend label (the number of examples is appended).
    bins : int
        Number of equal-width bins on [0, 1].
    color : str, optional
        Matplotlib colour of the curve and markers.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    Two examples in the bin [0.1, 0.2), one of them right; two in [0.9, 1.0], both right:

    >>> ax = reliability_diagram(plt.figure().gca(), [0.15, 0.15, 0.95, 0.95], [0, 1, 1, 1], "demo")
    >>> ax.lines[0].get_ydata().tolist(), ax.lines[0].get_label()
    ([0.5, 1.0], 'demo (n=4)')
    >>> plt.close("all")
    """
    confidence, correct = np.asarray(confidence, float), np.asarray(correct, float)
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.digitize(confidence, edges) - 1, 0, bins - 1)
    counts = np.bincount(which, minlength=bins)
    ok = counts > 0
    acc = np.bincount(which, weights=correct, minlength=bins)[ok] / counts[ok]
    conf = np.bincount(which, weights=confidence, minlength=bins)[ok] / counts[ok]
    ax.plot(conf, acc, "-o", color=color, ms=3, lw=1.2, label=f"{label} (n={len(confidence)})")
    ax.scatter(conf, acc, s=8 + 60 * counts[ok] / max(counts.max(), 1), color=color, alpha=0.4)
    ax.plot([0, 1], [0, 1], ls="--", color="0.5", lw=1)
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("predicted probability p̂")
    ax.set_ylabel("accuracy")
    return ax


def _source_target(pair):
    """The two predictions of a model in (source, target) role order (the larger set is the source)."""
    a, b = pair
    return (b, a) if len(b.labels) > len(a.labels) else (a, b)


@traced
def fig1_accuracy_confidence(
    pairs_by_target: dict[str, dict[str, tuple[Predictions, Predictions]]],
    tables: dict[tuple[str, str], pd.DataFrame],
) -> Figure:
    """Figure 1: each model's accuracy against its mean predicted probability on both sets.

    Parameters
    ----------
    pairs_by_target : dict
        ``{second set: {model: (first, second)}}``.
    tables : dict
        :func:`shifteval.matching.study.evaluate` output (names the roles).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per second set.

    Examples
    --------
    >>> from shifteval.matching import study
    >>> from shifteval.zoo.store import Predictions
    >>> rng = np.random.default_rng(0)
    >>> def preds(ds, n): return Predictions("m", ds, rng.integers(0, 3, n), rng.dirichlet(np.ones(3), n), {})
    >>> pairs = {"b": {"m": (preds("a", 40), preds("b", 30))}}
    >>> fig = fig1_accuracy_confidence(pairs, study.evaluate(pairs, "a", n_runs=2))
    >>> len(fig.axes), fig.axes[0].get_title()
    (1, 'a vs b')
    >>> plt.close("all")
    """
    from ..matching.findings import roles

    targets = list(pairs_by_target)
    rows, cols = wrap(len(targets))
    fig, axes = subplots(rows, cols, height=3.4 * rows, squeeze=False)
    for ax in axes.flat[len(targets) :]:
        ax.remove()
    for ax, t in zip(axes.flat, targets, strict=False):
        r = _named(roles(tables[(t, "label_and_prob")]))
        pts = np.array([
            [[p.confidence.mean(), p.accuracy] for p in _source_target(pair)] for pair in pairs_by_target[t].values()
        ])  # fmt: skip
        src, tgt = pts[:, 0], pts[:, 1]
        ax.plot(src[:, 0], src[:, 1], "o", ms=4, label=f"{r['source']} (source)")
        ax.plot(tgt[:, 0], tgt[:, 1], "s", ms=4, label=f"{r['target']} (target)")
        for a, b in zip(src, tgt, strict=True):
            ax.plot([a[0], b[0]], [a[1], b[1]], color="0.7", lw=0.6, zorder=0)
        lo = min(src.min(), tgt.min()) - 0.03
        ax.plot([lo, 1], [lo, 1], ls="--", color="0.4", lw=1)
        ax.set_xlabel("mean predicted probability")
        ax.set_ylabel("accuracy")
        ax.set_title(f"{r['source']} vs {r['target']}")
        ax.legend(fontsize="small")
    return fig


@traced
def fig3_matched_gaps(tables: dict[tuple[str, str], pd.DataFrame], by: str = "label_and_prob") -> Figure:
    """Figures 3/4 (Algorithm 1) and 6/7 (Algorithm 2): accuracy, matched accuracy and gaps per model.

    One row of panels per second set. Left: accuracy on the full sets (solid) and on the matched subsets
    (dashed), models sorted by source accuracy; right: accuracy gap and matched gap (bars, source −
    target) and the fraction unmatched (line). Set names come from the tables' roles, so a larger second set is labelled as the
    source.

    Parameters
    ----------
    tables : dict
        :func:`shifteval.matching.study.evaluate` output, ``(second set, method) -> table``.
    by : {"label_and_prob", "prob"}
        The algorithm whose tables are drawn.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from shifteval.matching import study
    >>> from shifteval.zoo.store import Predictions
    >>> rng = np.random.default_rng(0)
    >>> def preds(ds, n): return Predictions("m", ds, rng.integers(0, 3, n), rng.dirichlet(np.ones(3), n), {})
    >>> tables = study.evaluate({"b": {"m": (preds("a", 40), preds("b", 30))}}, "a", n_runs=2)
    >>> fig = fig3_matched_gaps(tables, by="prob")
    >>> len(fig.axes), fig.axes[0].get_title(), fig.get_suptitle()
    (2, 'a (source) vs b (target)', 'Algorithm 2: probability only')
    >>> plt.close("all")
    """
    from ..matching.findings import roles

    targets = [t for (t, b) in tables if b == by]
    fig, axes = subplots(len(targets), 2, height=0.4 + 2.6 * len(targets), squeeze=False)
    for (left, right), t in zip(axes, targets, strict=True):
        tab = tables[(t, by)].sort_values("acc_source")
        r = _named(roles(tab))
        x = np.arange(len(tab))
        ax = left
        ax.plot(x, tab.acc_source, "-o", ms=3, label=f"accuracy, {r['source']}")
        ax.plot(x, tab.acc_target, "-s", ms=3, label=f"accuracy, {r['target']}")
        ax.plot(x, tab.matched_acc_source, "--o", ms=3, mfc="none", label=f"matched accuracy, {r['source']}")
        ax.plot(x, tab.matched_acc_target, "--s", ms=3, mfc="none", label=f"matched accuracy, {r['target']}")
        ax.set_title(f"{r['source']} (source) vs {r['target']} (target)")
        ax.set_ylabel("accuracy")
        ax.set_xlabel(f"models, sorted by accuracy on {r['source']}")
        ax.legend(fontsize="x-small")
        ax = right
        ax.bar(x - 0.2, tab.gap, 0.4, label="accuracy gap")
        ax.bar(x + 0.2, tab.matched_gap, 0.4, label="matched gap")
        ax.plot(x, tab.fraction_unmatched, "k.-", lw=0.8, label="fraction unmatched")
        ax.axhline(0, color="0.3", lw=0.8)
        ax.set_xlabel(f"models, sorted by accuracy on {r['source']}")
        ax.set_ylabel(f"gap ({r['source']} − {r['target']})\n/ fraction")
        ax.legend(fontsize="x-small")
    title = {
        "label_and_prob": "Algorithm 1: same label and probability",
        "prob": "Algorithm 2: probability only",
    }
    fig.suptitle(title.get(by, by))
    return fig


@traced
def fig5_reliability(panels: dict[str, tuple[str, dict]]) -> Figure:
    """Figures 5 and 8: reliability diagrams and densities of p̂ of the matched and unmatched subsets.

    Parameters
    ----------
    panels : dict of str -> (str, dict)
        Column title (e.g. ``"strong"``) → (model name, :func:`shifteval.matching.study.fig5_subsets`).

    Returns
    -------
    matplotlib.figure.Figure
        Reliability diagrams (top row) over densities of p̂ (bottom row), one column per panel.

    Examples
    --------
    >>> from shifteval.matching import study
    >>> from shifteval.zoo.store import Predictions
    >>> rng = np.random.default_rng(0)
    >>> def preds(ds, n): return Predictions("m", ds, rng.integers(0, 3, n), rng.dirichlet(np.ones(3), n), {})
    >>> f5 = study.fig5_subsets(preds("a", 40), preds("b", 30), ("a", "b"), n_runs=2)
    >>> fig = fig5_reliability({"strong": ("m", f5)})
    >>> len(fig.axes), fig.axes[0].get_title()
    (2, 'strong model: m')
    >>> plt.close("all")
    """
    fig, axes = subplots(2, len(panels), height=6, squeeze=False)
    for col, (kind, (name, f5)) in enumerate(panels.items()):
        for (label, (conf, ok)), color in zip(f5["subsets"].items(), ["C0", "C1", "C3"], strict=True):
            set_name = display_name(f5["roles"]["source" if label.endswith("source") else "target"])
            text = f"{label} ({set_name})"
            if len(conf):
                reliability_diagram(axes[0, col], conf, ok, text, color=color)
                axes[1, col].hist(
                    conf,
                    bins=np.linspace(0, 1, 41),
                    density=True,
                    histtype="step",
                    lw=1.6,
                    color=color,
                    label=text,
                )
        axes[0, col].set_title(f"{kind} model: {display_name(name)}")
        axes[0, col].legend(fontsize="x-small", loc="upper left")
        axes[1, col].set_xlabel("predicted probability p̂")
        axes[1, col].set_ylabel("density")
        axes[1, col].legend(fontsize="x-small", loc="upper left")
    return fig


@traced
def eps_sensitivity(sweep: pd.DataFrame, model: str, names: dict[str, str]) -> Figure:
    """Matched gap and fraction unmatched against ε (log axis) for one model, both algorithms.

    Parameters
    ----------
    sweep : pandas.DataFrame
        :func:`shifteval.matching.study.eps_sweep` output (``eps``, ``method``, ``gap``,
        ``matched_gap``, ``fraction_unmatched``).
    model : str
        Model name, for the title.
    names : dict
        ``{"source": name, "target": name}`` (:func:`shifteval.matching.findings.roles`).

    Returns
    -------
    matplotlib.figure.Figure
        Matched gap in points (left) and fraction unmatched (right).

    Examples
    --------
    >>> from shifteval.matching import study
    >>> from shifteval.zoo.store import Predictions
    >>> rng = np.random.default_rng(0)
    >>> def preds(ds, n): return Predictions("m", ds, rng.integers(0, 3, n), rng.dirichlet(np.ones(3), n), {})
    >>> sweep = study.eps_sweep(preds("a", 40), preds("b", 30), [0.01, 0.1], n_runs=2)
    >>> fig = eps_sensitivity(sweep, "m", {"source": "a", "target": "b"})
    >>> fig.get_suptitle(), fig.axes[0].get_xscale()
    ('m, a (source) vs b (target)', 'log')
    >>> plt.close("all")
    """
    fig, axes = subplots(1, 2, height=3.4)
    names = _named(names)
    for by, g in sweep.groupby("method"):
        axes[0].plot(g.eps, 100 * g.matched_gap, "-o", label=f"matched gap ({display_name(by)})")
        axes[1].plot(g.eps, g.fraction_unmatched, "-o", label=display_name(by))
    axes[0].axhline(100 * sweep.gap.iloc[0], color="0.3", ls="--", label="accuracy gap")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("ε")
        ax.legend(fontsize="small")
    axes[0].set_ylabel(f"points ({names['source']} − {names['target']})")
    axes[1].set_ylabel("fraction unmatched")
    fig.suptitle(f"{display_name(model)}, {names['source']} (source) vs {names['target']} (target)")
    return fig


@traced
def quantised_probabilities(quant: pd.DataFrame, eps: float, eps_small: float) -> Figure:
    """Fraction unmatched at ε and at a near-zero ε against the number of distinct probabilities.

    Parameters
    ----------
    quant : pandas.DataFrame
        :func:`shifteval.matching.study.quantisation_table` output, one row per model.
    eps, eps_small : float
        The working ε and the near-zero ε the table was computed at (for the legend).

    Returns
    -------
    matplotlib.figure.Figure
        One panel; models that are not ``"continuous"`` are labelled.

    Examples
    --------
    >>> from shifteval.matching import study
    >>> from shifteval.zoo.store import Predictions
    >>> rng = np.random.default_rng(0)
    >>> def preds(ds, n): return Predictions("m", ds, rng.integers(0, 3, n), rng.dirichlet(np.ones(3), n), {})
    >>> quant = study.quantisation_table({"m": (preds("a", 40), preds("b", 30))}, n_runs=2)
    >>> fig = quantised_probabilities(quant, 0.005, 1e-6)
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['ε = 0.005', 'ε = 1e-06, continuous']
    >>> plt.close("all")
    """
    fig, ax = subplots(height=4.2, width=0.85)
    x = quant.distinct_source.astype(float)
    ax.plot(x, quant.fraction_unmatched, "o", color="0.4", label=f"ε = {eps:g}")
    for (kind, g), marker in zip(quant.groupby("kind"), "x+*", strict=False):
        ax.plot(g.distinct_source.astype(float), g.fraction_unmatched_small, marker, ms=8,
                label=f"ε = {eps_small:g}, {kind}")  # fmt: skip
    for name, row in quant.iterrows():
        if row.kind != "continuous":
            ax.annotate(display_name(name), (row.distinct_source, row.fraction_unmatched_small), fontsize=7, xytext=(3, 3),
                        textcoords="offset points")  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("distinct predicted probabilities on the source set")
    ax.set_ylabel("fraction unmatched")
    ax.legend(fontsize="small")
    return fig


@traced
def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary over models as the page shows it: rows by target set and algorithm, one source column.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`shifteval.matching.findings.summary` (rows ``"<target> / <algorithm>"``, ``source`` and
        ``target`` columns).

    Returns
    -------
    pandas.DataFrame
        Rows indexed by (target set, algorithm); the ``target`` column dropped (it is the row), the
        ``source`` column dropped where every row has the same source, rounded to 3 decimals.

    Examples
    --------
    >>> s = pd.DataFrame({"source": ["v1"], "target": ["t"], "gap": [1.23456]}, index=["t / prob"])
    >>> summary_table(s).to_dict("index")
    {('t', 'prob'): {'gap': 1.235}}
    """
    import pandas as pd

    shown = summary.drop(columns=["target"] + (["source"] if summary["source"].nunique() == 1 else []))
    rows = pd.MultiIndex.from_tuples(
        [tuple(i.split(" / ", 1)) for i in summary.index], names=["target set", "matching"]
    )
    return shown.set_axis(rows).round(3)
