"""Figure functions shared by the chapters.

Each function draws on a Matplotlib ``Axes`` it is given (or creates one) and returns it, so a
chapter composes panels with ``plt.subplots`` and keeps its cells short.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from .linfit import LinearFit, inverse_transform, transform

FIT_COLOR = "#c0392b"
POINT_COLOR = "#2c3e50"


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
    candidates = np.array([0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995])
    ticks = candidates[(candidates >= lo) & (candidates <= hi)]
    if len(ticks) > n:
        ticks = ticks[:: int(np.ceil(len(ticks) / n))]
    pos = transform(ticks, "probit")
    labels = [f"{100 * t:g}" for t in ticks]
    for axis in axes:
        axis.set_ticks(pos, labels)


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
    ax.fill_between(T(grid), T(band_lo), T(band_hi), color=FIT_COLOR, alpha=0.25, lw=0, label="95% bootstrap band")
    ax.plot(T(grid), T(fit.predict(grid)), color=FIT_COLOR, lw=1.5, label="linear fit")
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


def rank_change(ax, orig_acc, new_acc, names=None, top: int = 8):
    """Original rank against new rank: points on the diagonal kept their place.

    Recht et al. (2019, §3.3, "Few changes in the relative order"). The models whose rank
    moved most are labelled.
    """
    orig_acc, new_acc = np.asarray(orig_acc, float), np.asarray(new_acc, float)
    r_orig = (-orig_acc).argsort(kind="stable").argsort() + 1
    r_new = (-new_acc).argsort(kind="stable").argsort() + 1
    delta = r_orig - r_new
    ax.scatter(r_orig, r_new, c=delta, cmap="coolwarm_r", vmin=-np.abs(delta).max(), vmax=np.abs(delta).max(), s=18)
    n = len(orig_acc)
    ax.plot([1, n], [1, n], color="0.4", ls="--", lw=1)
    if names is not None:
        for i in np.argsort(-np.abs(delta))[:top]:
            ax.annotate(str(names[i]), (r_orig[i], r_new[i]), fontsize=7, xytext=(3, 3), textcoords="offset points")
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
    ax.plot(grid, slope * grid + intercept, color=FIT_COLOR, lw=1.5, label=f"analytic: u = {slope:.3f}, v = {intercept:.3f}")
    if fitted is not None:
        ax.plot(grid, fitted.slope * grid + fitted.intercept, color="0.2", ls=":", lw=1.5,
                label=f"least squares: {fitted.slope:.3f}, {fitted.intercept:.3f}")  # fmt: skip
    _percent_ticks(ax, inverse_transform(grid.min(), "probit"), inverse_transform(grid.max(), "probit"), "probit", which="x")
    _percent_ticks(ax, float(np.min(acc2)) - 0.02, float(np.max(acc2)) + 0.02, "probit", which="y")
    ax.set_xlabel("accuracy on test set 1 (%) — probit scale")
    ax.set_ylabel("accuracy on test set 2 (%) — probit scale")
    ax.legend(loc="upper left", fontsize="small")
    return ax


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


def frequency_histograms(ax, observed, true, title: str | None = None):
    """Observed (annotator) vs. true selection frequencies of one test set (Engstrom et al. 2020, Fig. 4)."""
    ax.hist(np.asarray(observed), bins=np.linspace(-0.05, 1.05, 12), alpha=0.55, color="#2980b9", label=f"observed ŝ (mean {np.mean(observed):.3f})", density=True)
    ax.hist(np.asarray(true), bins=np.linspace(0, 1, 21), histtype="step", lw=1.8, color="#c0392b", label=f"true s (mean {np.mean(true):.3f})", density=True)
    ax.set_xlabel("selection frequency")
    ax.set_ylabel("density")
    ax.legend(fontsize="x-small", loc="upper left")
    if title:
        ax.set_title(title)
    return ax


def accuracy_change_panel(ax, table, strategies, reference: str = "v1", labels=None):
    """Each model's accuracy on each replicated set against its v1 accuracy (points), with y = x."""
    colors = sns.color_palette("deep", len(strategies))
    lo = min(table[[reference, *strategies]].min()) - 0.02
    hi = min(1.0, max(table[[reference, *strategies]].max()) + 0.02)
    for color, s in zip(colors, strategies):
        ax.plot(table[reference], table[s], "o", ms=4, color=color, label=(labels or {}).get(s, s))
    ax.plot([lo, hi], [lo, hi], ls="--", color="0.4", lw=1, label="y = x")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{100 * v:.0f}"))
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{100 * v:.0f}"))
    ax.set_xlabel(f"accuracy on {reference} (%)")
    ax.set_ylabel("accuracy on the replicated set (%)")
    ax.legend(fontsize="small", loc="upper left")
    return ax


def reliability_diagram(ax, confidence, correct, label: str, bins: int = 10, color=None):
    """Accuracy against confidence in equal-width bins (Anzaku et al., Figures 5 and 8).

    Bins with no example are skipped; marker size grows with the number of examples in the bin.
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


def figure(name: str, fig=None) -> None:
    """Hand a figure to the book as a numbered, captioned figure (myst-nb ``glue``).

    The figure is stored in the cell's output under ``name`` (hidden there) and closed; a following
    markdown cell places it with ``{glue:figure} name`` and its caption, which Sphinx numbers and makes
    cross-referenceable (``{numref}`fig-<name>```). Without myst-nb the figure is simply shown.
    """
    fig = fig or plt.gcf()
    try:
        from myst_nb import glue
    except ImportError:  # pragma: no cover - myst-nb comes with jupyter-book
        plt.show()
        return
    glue(name, fig, display=False)
    plt.close(fig)


def energy_histograms(ax, energies: dict, threshold: float, title: str | None = None, bins: int = 60):
    """Step histograms of energy scores, one per set (``{label: energies}``), with the OOD threshold.

    Zhu et al. (§3.5) exclude every image whose energy lies right of the line.
    """
    values = np.concatenate([np.asarray(v, float) for v in energies.values()])
    lo, hi = np.percentile(values, [0.5, 99.5])
    edges = np.linspace(min(lo, threshold), max(hi, threshold), bins + 1)
    for label, e in energies.items():
        ax.hist(np.clip(e, edges[0], edges[-1]), bins=edges, density=True, histtype="step", lw=1.6, label=label)
    ax.axvline(threshold, color="black", ls="--", lw=1.2, label="threshold")
    ax.set(xlabel="energy E(x)", ylabel="density", title=title)
    ax.legend(fontsize="x-small")
    return ax


def table(name: str, frame) -> None:
    """Hand a table (a DataFrame or its ``Styler``) to the book as a numbered, captioned table.

    Like :func:`figure`: the table is glued under ``name`` and not shown in place; a following markdown
    cell places it with ``{glue:figure} name`` and ``:name: tbl-<name>``, which the book's Sphinx
    extension numbers as a table (``{numref}`tbl-<name>```). Without myst-nb the table is displayed.
    """
    try:
        from myst_nb import glue
    except ImportError:  # pragma: no cover - myst-nb comes with jupyter-book
        from IPython.display import display

        display(frame)
        return
    glue(name, frame, display=False)


def class_matrices(panels, size: float = 6.0):
    """Side-by-side annotated K×K heatmaps (confusion matrices, MLMs); returns the figure.

    ``panels`` is a list of ``(matrix, title, fmt, cmap, xlabel)``; rows are always the true class.
    """
    import seaborn as sns

    fig, axes = plt.subplots(1, len(panels), figsize=(size * len(panels), size - 1), squeeze=False)
    for ax, (matrix, title, fmt, cmap, xlabel) in zip(axes[0], panels):
        sns.heatmap(matrix, annot=True, fmt=fmt, cmap=cmap, cbar=False, ax=ax, annot_kws={"size": 7})
        ax.set(title=title, xlabel=xlabel, ylabel="true")
    fig.tight_layout()
    return fig
