"""Figures of the linear-fits chapter (Recht et al. 2019)."""

from __future__ import annotations

import numpy as np

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
    ax.scatter(
        r_orig, r_new, c=delta, cmap="coolwarm_r", vmin=-np.abs(delta).max(), vmax=np.abs(delta).max(), s=18
    )
    n = len(orig_acc)
    ax.plot([1, n], [1, n], color="0.4", ls="--", lw=1)
    if names is not None:
        for i in np.argsort(-np.abs(delta))[:top]:
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
