"""Figures of the OOD-aware AutoEval chapter (Zhu et al. 2023), named after the paper's figures."""

from __future__ import annotations

import numpy as np


def energy_histograms(ax, energies: dict, threshold: float, title: str | None = None, bins: int = 60):
    """Step histograms of energy scores, one per set (``{label: energies}``), with the OOD threshold.

    Zhu et al. (§3.5) exclude every image whose energy lies right of the line.
    """
    values = np.concatenate([np.asarray(v, float) for v in energies.values()])
    lo, hi = np.percentile(values, [0.5, 99.5])
    edges = np.linspace(min(lo, threshold), max(hi, threshold), bins + 1)
    for label, e in energies.items():
        ax.hist(
            np.clip(e, edges[0], edges[-1]), bins=edges, density=True, histtype="step", lw=1.6, label=label
        )
    ax.axvline(threshold, color="black", ls="--", lw=1.2, label="threshold")
    ax.set(xlabel="energy E(x)", ylabel="density", title=title)
    ax.legend(fontsize="x-small")
    return ax


def fig_energy(train, outputs: dict, ref_id: str, oods, percentile: float):
    """Energies of the training set, ``ref_id`` and each OOD source.

    Left the classifier's own (from its logits), right the outlier-exposure detector's; the dashed line is
    each one's threshold.
    """
    import matplotlib.pyplot as plt

    from ..autoeval import energy, energy_threshold

    scorers = {
        "classifier": lambda o: energy(o.logits),
        "detector (outlier exposure)": lambda o: o.energies(),
    }
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
    for ax, (name, score) in zip(axes, scorers.items(), strict=True):
        sets = {
            "training set": score(train),
            ref_id: score(outputs[ref_id]),
            **{s: score(outputs[s]) for s in oods},
        }
        energy_histograms(
            ax, sets, energy_threshold(sets["training set"], percentile), title=f"energies of the {name}"
        )
    fig.tight_layout()
    return fig


def fig2_regression(fd_train, acc_train, fd_val, acc_val, pred_mlp, pred_lin, rmse_mlp, rmse_lin):
    """The regression on the meta-dataset.

    Left: accuracy against FD per meta-set; right: predicted against true accuracy on the validation
    meta-sets (MLP on the representation, linear on FD).
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
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
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def fig3_threshold_sweep(sweep):
    """The paper's Figure 3: ID images excluded, OOD images kept and RMSE against the threshold percentile."""
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


def fig4_ood_share(
    shares, labels: dict, methods=("autoeval", "autoeval_energy_ood", "rotation", "atc", "doc")
):
    """The paper's Figure 4: RMSE of several estimators against the OOD share."""
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


def fig5_unseen(
    unseen_rmse, labels: dict, methods=("rotation", "atc", "doc", "autoeval", "autoeval_energy_ood")
):
    """The paper's Figure 5: RMSE on test sets transformed in ways the meta-dataset never used."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    unseen_rmse[list(methods)].rename(columns=labels).T.plot.bar(ax=ax, rot=0)
    ax.set(
        ylabel="RMSE (accuracy points)",
        title="Figure 5: test-time transformations unseen in the meta-dataset",
    )
    return fig
