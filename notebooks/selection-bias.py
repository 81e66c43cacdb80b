# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Noisy statistic matching and how to correct for it
#
# ImageNetV2's MatchedFrequency set was built to have the same distribution of *observed* MTurk selection
# frequencies as ImageNet's validation set. {cite:t}`engstrom2020bias` showed that this does not make the
# *true* selection frequencies equal: observed frequencies are averages of a few noisy votes, and the
# candidate pool had lower true frequencies than v1, so among images with the same votes the pool's were
# genuinely harder. Part of the accuracy drop is therefore a selection artefact. They proposed three
# estimators of the **selection-adjusted v2 accuracy** — v2 accuracy reweighted to v1's distribution of
# true selection frequency $p_1(s)$:
#
# $$ \mathcal{A}_{\mathcal{D}_2|s_1} = \int_0^1 \mathbb{E}_{\mathcal{D}_2}[f(x) \mid s(x) = s]\, p_1(s)\, ds
#    \qquad \text{(Eq. 3 and 6)} $$
#
# The paper never knew the true $s$. The replication world does, so this chapter can put each estimator
# against the truth. As in §3 of the paper, v1 and MatchedFrequency images get a fresh, independent round of
# `reannotators` annotators; all estimators use those votes.
#
# Terms used here are explained in the glossary: {term}`selection frequency`, {term}`statistic matching`, {term}`MatchedFrequency`.

# %% tags=["parameters"]
world = {}
zoo_size = "default"
reannotators = 40
mixture_components = 3
n_boot = 30
seed = 0
toy_alpha = 2.0
toy_beta = 3.0
toy_samples = 1_000_000
results_path = None

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display
from scipy import stats

from shifteval import linfit, selection, viz
from shifteval.book import results
from shifteval.datasets import world as worlds

viz.set_style()

# %% [markdown]
# ## The toy model (§2, Eq. 1, Figure 3)
#
# Let candidates have $s \sim \mathrm{Beta}(\alpha, \beta)$ and v1 have $s \sim \mathrm{Beta}(\alpha+1, \beta)$.
# Each candidate is annotated by $n$ workers, and accepted with probability proportional to
# $p_1(\hat s)/p_\text{flickr}(\hat s)$ — rejection sampling towards v1's *observed* histogram. Then the
# accepted images' true frequencies have density
#
# $$ p_2(s) = \frac{n}{n+\alpha+\beta}\,\mathrm{Beta}(\alpha+1,\beta)(s)
#           + \frac{\alpha+\beta}{n+\alpha+\beta}\,\mathrm{Beta}(\alpha,\beta)(s), $$
#
# a mixture of the target $p_1$ and the candidate distribution that reaches $p_1$ only as $n \to \infty$
# ({numref}`fig-selection-bias-fig1`).

# %%
grid = np.linspace(0.001, 0.999, 400)
fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
sim = selection.simulate_toy_replication(toy_alpha, toy_beta, 10, toy_samples, seed=seed)
edges = np.linspace(0, 1, 41)
axes[0].hist(sim, bins=edges, density=True, alpha=0.4, label=f"simulated, n = 10 ({len(sim):,} accepted)")
axes[0].plot(grid, selection.toy_v2_density(grid, toy_alpha, toy_beta, 10), lw=2, label="Eq. (1), n = 10")
axes[0].plot(grid, stats.beta.pdf(grid, toy_alpha + 1, toy_beta), "k--", lw=1.2, label="p₁ (v1)")
axes[0].plot(grid, stats.beta.pdf(grid, toy_alpha, toy_beta), "k:", lw=1.2, label="p_flickr (candidates)")
for n in (1, 3, 10, 40, 200):
    axes[1].plot(grid, selection.toy_v2_density(grid, toy_alpha, toy_beta, n), label=f"n = {n}")
axes[1].plot(grid, stats.beta.pdf(grid, toy_alpha + 1, toy_beta), "k--", lw=1.2, label="p₁")
for ax in axes:
    ax.set_xlabel("true selection frequency s")
    ax.set_ylabel("density")
    ax.legend(fontsize="x-small")
fig.tight_layout()
viz.figure("selection-bias-fig1")
l1 = selection.toy_l1_distance(sim, toy_alpha, toy_beta, 10)
display(Markdown(f"L1 distance between the simulated histogram and Eq. (1): **{l1:.4f}**."))

# %% [markdown]
# ```{glue:figure} selection-bias-fig1
# :name: fig-selection-bias-fig1
#
# **Figure 3 analog.** Left: the closed form (line) against a Monte-Carlo run of the rejection sampler
# (bars), with the two Beta distributions it mixes. Right: the v2 density for more and more annotators,
# approaching $p_1$ slowly — with 10 annotators v2 is still visibly shifted towards lower frequencies.
# ```

# %% [markdown]
# ## The world's v1 and MatchedFrequency, re-annotated

# %% tags=["remove-stderr"]
from shifteval import zoo as zoos

w = worlds.build_world(world)
zoo = zoos.build_zoo(w, zoos.default_zoo(zoo_size))
ex = w.examples
v1, v2 = w.split_index("v1"), w.split_index("matchedfrequency")
rng = np.random.default_rng([seed, 7])
votes1 = worlds.annotate(ex.s.to_numpy()[v1], reannotators, rng)
votes2 = worlds.annotate(ex.s.to_numpy()[v2], reannotators, rng)
c1, c2 = votes1.sum(1), votes2.sum(1)
s1, s2 = ex.s.to_numpy()[v1], ex.s.to_numpy()[v2]
correct_v1 = zoo.correct("v1")
correct_v2 = zoo.correct("matchedfrequency")
models = zoo.names
fig, ax = plt.subplots(figsize=(7, 3.8))
bins = np.arange(reannotators + 2) / reannotators - 0.5 / reannotators
ax.hist(
    c1 / reannotators, bins=bins, density=True, alpha=0.5, label=f"v1 (mean ŝ {c1.mean() / reannotators:.3f})"
)
ax.hist(
    c2 / reannotators,
    bins=bins,
    density=True,
    alpha=0.5,
    label=f"MatchedFrequency (mean ŝ {c2.mean() / reannotators:.3f})",
)
ax.set_xlabel(f"observed selection frequency ({reannotators} fresh annotators)")
ax.set_ylabel("density")
ax.legend(fontsize="small")
viz.figure("selection-bias-fig2")

# %% [markdown]
# ```{glue:figure} selection-bias-fig2
# :name: fig-selection-bias-fig2
#
# **Figure 4 analog.** Histograms of the fresh observed frequencies of v1 and of MatchedFrequency. With
# independent annotators the matched set's frequencies are visibly lower — the paper's finding on
# ImageNet (Figure 4), where v2 was matched on one round of votes and re-measured with another.
# ```

# %% [markdown]
# ### In-sample against held-out frequencies (App. D.2, Table 1)

# %%
rep_freq = pd.Series(w.replication.pool_freq, index=w.split_index("pool"))
table1 = pd.DataFrame(
    {
        "in-sample ŝ (votes used for matching)": [w.replication.v1_freq.mean(), rep_freq[v2].mean()],
        f"held-out ŝ ({reannotators} fresh votes)": [c1.mean() / reannotators, c2.mean() / reannotators],
        "true s": [s1.mean(), s2.mean()],
    },
    index=["v1", "MatchedFrequency"],
)
viz.table("selection-bias-table1", table1.round(3))

# %% [markdown]
# ```{glue:figure} selection-bias-table1
# :name: tbl-selection-bias-table1
#
# **Table 1 analog.** Mean selection frequency of v1 and MatchedFrequency on the votes used for
# matching, on fresh held-out votes, and the world's true frequencies.
# ```
#
# On the votes used for matching, v1 and MatchedFrequency look alike ({numref}`tbl-selection-bias-table1`);
# on held-out votes the gap appears (as in {numref}`fig-selection-bias-fig2`), and the true frequencies
# (which only the world knows) confirm it.
#
# ## The naive estimator (§5.1, Eq. 4, Figure 5)
#
# Replacing the true $s$ by the observed $\hat s_n = k/n$ gives
#
# $$ \hat{\mathcal{A}}^n = \sum_{k=0}^{n} \mathbb{E}_{\mathcal{D}_2}\!\left[f \mid \hat s_n = \tfrac{k}{n}\right]
#    \, p_1\!\left(\hat s_n = \tfrac{k}{n}\right), $$
#
# which is itself statistic matching on noisy frequencies and so still biased — less so with more
# annotators. {numref}`fig-selection-bias-fig3` recomputes it using the first $m$ of the fresh annotators.

# %%
sizes = [m for m in (1, 2, 3, 5, 8, 10, 15, 20, 30, 40) if m <= reannotators]
naive_curve = selection.naive_by_annotators(votes1, votes2, correct_v2, sizes)  # sizes x models
truth = selection.true_adjusted_accuracy(s1, s2, correct_v2)
fig, axes = plt.subplots(1, 3, figsize=(15, 4))
for m in (2, 10, reannotators):
    axes[0].hist(
        votes2[:, :m].mean(1),
        bins=np.linspace(-0.025, 1.025, 22),
        density=True,
        histtype="step",
        lw=1.5,
        label=f"v2, m = {m}",
    )
axes[0].hist(s2, bins=np.linspace(0, 1, 21), density=True, alpha=0.3, label="v2, true s")
axes[0].set_xlabel("selection frequency")
axes[0].legend(fontsize="x-small")
best = int(np.argmax(correct_v1.mean(1)))
for m in (2, 10, reannotators):
    k = votes2[:, :m].sum(1)
    acc_k = [correct_v2[best][k == j].mean() if np.any(k == j) else np.nan for j in range(m + 1)]
    axes[1].plot(np.arange(m + 1) / m, acc_k, "o-", ms=3, label=f"observed ŝ, m = {m}")
true_bins = np.clip((s2 * 10).astype(int), 0, 9)
axes[1].plot(
    (np.arange(10) + 0.5) / 10,
    [correct_v2[best][true_bins == b].mean() if np.any(true_bins == b) else np.nan for b in range(10)],
    "k^-",
    label="true s",
)
axes[1].set_xlabel("selection frequency")
axes[1].set_ylabel(f"accuracy of {models[best]}")
axes[1].legend(fontsize="x-small")
axes[2].plot(
    1 / np.array(sizes),
    100 * (naive_curve.mean(1) - truth.mean()),
    "o-",
    label="naive − truth (mean over models)",
)
axes[2].axhline(0, color="0.3", lw=1)
axes[2].set_xlabel("1 / annotators per image")
axes[2].set_ylabel("points")
axes[2].legend(fontsize="x-small")
fig.tight_layout()
viz.figure("selection-bias-fig3")

# %% [markdown]
# ```{glue:figure} selection-bias-fig3
# :name: fig-selection-bias-fig3
#
# **Figure 5 analog.** Left: v2's observed frequencies with more and more annotators approach the true
# distribution (shaded). Middle: the best model's accuracy conditioned on the observed frequency is flatter
# than conditioned on the true one — noise blurs the relationship. Right: the naive estimator's error
# (mean over models, against the world's ground truth) shrinks roughly linearly in $1/m$, the behaviour
# that motivates the jackknife (App. E, Figure 12).
# ```

# %% [markdown]
# ## Jackknife and parametric estimators (§5.2-5.3, Figures 6 and 7)
#
# The **jackknife** leaves out one annotator at a time: with $\hat\theta_n$ the estimate and
# $\hat\theta^{(i)}$ the estimate without annotator $i$, the bias estimate is
# $b = (n-1)(\overline{\hat\theta^{(\cdot)}} - \hat\theta_n)$ and the corrected estimate $\hat\theta_n - b$,
# with the jackknife standard error. Every annotator is left out once (the released code used 100 random
# leave-outs). The **parametric model** fits a mixture of three beta distributions to each set's true
# frequencies through the beta-binomial likelihood of its votes (EM, App. F), models accuracy given true
# frequency as a cubic spline $g(s) \in [0, 1]$ fitted through
# $P(f = 1, \hat s = k/n) = \int g(s)\,\mathrm{Binom}(k; n, s)\,p_2(s)\,ds$ (Eq. 7-8), and integrates
# $\int g(s)\,p_1(s)\,ds$ (Eq. 6). Its confidence intervals come from a bootstrap over images (App. F.1).

# %%
naive = selection.naive_adjusted_accuracy(c1, c2, correct_v2, reannotators)
jack = selection.jackknife_adjusted_accuracy(votes1, votes2, correct_v2)
param, fitted = selection.parametric_adjusted_accuracy(
    c1, c2, correct_v2, reannotators, k=mixture_components, seed=seed
)
boot_low, boot_high = selection.bootstrap_parametric(
    c1, c2, correct_v2, reannotators, n_boot=n_boot, seed=seed, k=mixture_components
)
acc_v1, acc_v2 = correct_v1.mean(1), correct_v2.mean(1)
estimates = pd.DataFrame(
    {
        "v1": acc_v1,
        "v2 observed": acc_v2,
        "naive": naive,
        "jackknife": jack.corrected,
        "jackknife se": jack.std_error,
        "parametric": param,
        "parametric CI low": boot_low,
        "parametric CI high": boot_high,
        "ground truth": truth,
    },
    index=models,
)
fig, axes = plt.subplots(1, 2, figsize=(12, 5.5))
for ax, col, (low, high), title in (
    (
        axes[0],
        "jackknife",
        (jack.corrected - 1.96 * jack.std_error, jack.corrected + 1.96 * jack.std_error),
        "jackknife (±1.96 se)",
    ),
    (axes[1], "parametric", (boot_low, boot_high), f"parametric ({n_boot}-sample bootstrap 95% CI)"),
):
    ax.plot(acc_v1, acc_v2, "o", ms=4, color="0.6", label="v2 observed")
    ax.vlines(acc_v1, low, high, color="C0", lw=0.8)
    ax.plot(acc_v1, estimates[col], "o", ms=4, color="C0", label=f"v2 adjusted: {col}")
    ax.plot(acc_v1, truth, "x", ms=5, color="C3", label="ground truth (true s)")
    lo = min(acc_v2.min(), acc_v1.min()) - 0.02
    ax.plot([lo, 1], [lo, 1], "k--", lw=1)
    ax.set_xlabel("v1 accuracy")
    ax.set_ylabel("v2 accuracy")
    ax.set_title(title)
    ax.legend(fontsize="x-small", loc="upper left")
fig.tight_layout()
viz.figure("selection-bias-fig4")
fits = {
    name: linfit.fit_linear(acc_v1, np.clip(values, 0, 1), n_boot=10_000, seed=seed)
    for name, values in (
        ("unadjusted", acc_v2),
        ("jackknife", jack.corrected),
        ("parametric", param),
        ("ground truth", truth),
    )
}
viz.table(
    "selection-bias-slopes",
    pd.DataFrame(
        {
            k: {"slope": f.slope, "slope CI low": f.slope_ci[0], "slope CI high": f.slope_ci[1]}
            for k, f in fits.items()
        }
    ).T.round(3),
)

# %% [markdown]
# ```{glue:figure} selection-bias-fig4
# :name: fig-selection-bias-fig4
#
# **Figure 6 analog.** v1 accuracy against v2 accuracy for every model of the zoo: observed (grey),
# adjusted by each estimator (blue, with intervals) and the world's ground truth (red crosses).
# {numref}`tbl-selection-bias-slopes` gives the slopes of linear fits through each version; Engstrom et al.
# report 1.13 unadjusted and 1.01 after adjustment on ImageNet.
# ```
#
# ```{glue:figure} selection-bias-slopes
# :name: tbl-selection-bias-slopes
#
# **Slopes of the linear fits** of v2 against v1 accuracy for the unadjusted, jackknife-adjusted,
# parametrically adjusted and true v2 accuracies, with 95% bootstrap intervals.
# ```


# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
for ax, (name, counts, s_true, mix) in zip(
    axes, (("v1", c1, s1, fitted["p1"]), ("MatchedFrequency", c2, s2, fitted["p2"]))
):
    ax.hist(counts / reannotators, bins=bins, density=True, alpha=0.35, label="observed ŝ")
    ax.hist(
        s_true,
        bins=np.linspace(0, 1, 26),
        density=True,
        histtype="step",
        lw=1.5,
        color="k",
        label="true s (world)",
    )
    ax.plot(grid, mix.pdf(grid), lw=2, label="fitted mixture p(s)")
    ax.plot(
        np.arange(reannotators + 1) / reannotators,
        mix.pmf(np.arange(reannotators + 1)) * reannotators,
        ".",
        label="implied p(ŝ)",
    )
    ax.set_title(name)
    ax.set_xlabel("selection frequency")
    ax.legend(fontsize="x-small", loc="upper left")
fig.tight_layout()
viz.figure("selection-bias-fig5")

# %% [markdown]
# ```{glue:figure} selection-bias-fig5
# :name: fig-selection-bias-fig5
#
# **Figure 7 analog.** The fitted beta mixtures (blue) for the true frequencies, the observed-frequency
# distribution they imply (dots) against the observed histogram (bars), and — which the paper could not
# show — the world's true frequencies (black). The mixtures put more mass at high frequencies than the
# observed histograms, as in the paper.
# ```

# %% [markdown]
# ## Each estimator against the truth

# %%
errors = pd.DataFrame({k: estimates[k] - truth for k in ("naive", "jackknife", "parametric")})
errors["observed"] = acc_v2 - truth
summary = pd.DataFrame(
    {"mean bias (points)": 100 * errors.mean(), "mean |error| (points)": 100 * errors.abs().mean()}
)
closer = float((np.abs(param - truth) < np.abs(naive - truth)).mean())
viz.table("selection-bias-errors", summary.round(2))
decomp = selection.gap_decomposition(acc_v1, acc_v2, param)
display(
    Markdown(
        f"The parametric estimate is closer to the ground truth than the naive one for **{closer:.0%}** of models. "
        f"Mean bias: naive {100 * errors['naive'].mean():+.2f}, jackknife {100 * errors['jackknife'].mean():+.2f}, "
        f"parametric {100 * errors['parametric'].mean():+.2f} points. With the parametric estimate, the mean v1–v2 gap of "
        f"{100 * decomp['accuracy_gap'].mean():.1f} points splits (Eq. 2) into {100 * decomp['selection_gap'].mean():.1f} points of "
        f"selection gap and {100 * decomp['bias_corrected_gap'].mean():.1f} points of bias-corrected gap."
    )
)

# %% [markdown]
# ```{glue:figure} selection-bias-errors
# :name: tbl-selection-bias-errors
#
# **Each estimator against the truth.** Mean bias (estimate − ground truth) and mean absolute error
# over the zoo's models, in accuracy points; *observed* is the unadjusted v2 accuracy.
# ```
#
# In {numref}`tbl-selection-bias-errors`, bias is estimate minus ground truth, averaged over models; the plain
# v2 accuracy ("observed") is the starting point every estimator tries to correct. The naive estimator removes part of
# the gap but, being statistic matching on noisy frequencies itself, stays below the truth. The jackknife
# extrapolates the naive estimator to infinitely many annotators assuming its bias falls like $1/n$;
# the right panel of {numref}`fig-selection-bias-fig3` shows how well that holds here — where the curve bends near $1/n = 0$, the
# extrapolation overshoots or undershoots (Engstrom et al. found it still under-corrects on ImageNet). The
# parametric model avoids the extrapolation by modelling the noise explicitly, and is only as good as its
# three-component mixture. The ground truth is itself estimated from finite sets (binned true
# frequencies), which limits how small an error can be measured.
#
# ## Exercises
#
# ````{exercise}
# :label: selection-bias-ex-reannotators
# Re-run with `-p reannotators=10`. Which estimator suffers most, and why does the jackknife's correction
# grow?
# ````
#
# ````{solution} selection-bias-ex-reannotators
# :class: dropdown
# With ten votes per image the observed frequencies are much noisier, so the naive estimator (which treats
# observed frequencies as true) is biased more, and its bias is of order 1/n. The jackknife removes the 1/n
# term by recomputing the estimate with one vote left out; with small *n* that term is large, so the correction
# grows, and its variance grows too. The beta-binomial mixture models the noise explicitly and degrades least,
# as long as its mixture fits the frequency distribution.
# ````
#
# ````{exercise}
# :label: selection-bias-ex-toy
# In the toy model, how many annotators are needed before v2's mean true frequency is within 0.01 of v1's?
# Derive it from Eq. (1) and check with `toy_v2_density`.
# ````
#
# ````{solution} selection-bias-ex-toy
# :class: dropdown
# The mean of Eq. (1) is $\frac{n}{n+\alpha+\beta}\frac{\alpha+1}{\alpha+\beta+1} +
# \frac{\alpha+\beta}{n+\alpha+\beta}\frac{\alpha}{\alpha+\beta}$; v1's mean is $\frac{\alpha+1}{\alpha+\beta+1}$.
# Their difference is $\frac{\alpha+\beta}{n+\alpha+\beta}\cdot\frac{\beta}{(\alpha+\beta)(\alpha+\beta+1)}$, so
# with α = 2, β = 3 it falls below 0.01 once $n + 5 > 50$, i.e. $n \ge 46$ annotators.
# ````
#
# ````{exercise}
# :label: selection-bias-ex-noise-free
# The replication-world chapter's ablation used noise-free frequencies. Which of this chapter's estimators
# would then agree with the ground truth, and which would not change at all?
# ````
#
# ````{solution} selection-bias-ex-noise-free
# :class: dropdown
# With noise-free frequencies the observed frequency *is* the true one, so the naive estimator becomes exact
# and the jackknife's correction (which estimates the effect of vote noise) goes to zero: both agree with the
# ground truth up to sampling error. The ground truth itself does not change, because it only depends on true
# frequencies; the accuracies observed on v2 change because a different set is sampled.
# ````

# %%
record = results.record(
    results_path,
    {
        "toy_model": {"alpha": toy_alpha, "beta": toy_beta, "accepted": int(len(sim)), "l1_distance": l1},
        "selection_frequency": table1.to_dict(orient="index"),
        "per_model": estimates[["v1", "v2 observed", "naive", "jackknife", "parametric", "ground truth"]]
        .rename(columns={"v2 observed": "observed", "ground truth": "ground_truth"})
        .to_dict(orient="index"),
        "mean_bias": {k: float(errors[k].mean()) for k in ("naive", "jackknife", "parametric")},
        "mean_abs_error": {
            k: float(errors[k].abs().mean()) for k in ("naive", "jackknife", "parametric", "observed")
        },
        "fraction_parametric_closer": closer,
        "slopes": {k: f.slope for k, f in fits.items()},
        "mixture": {
            name: {"weights": m.weights, "alphas": m.alphas, "betas": m.betas, "loglik": m.loglik}
            for name, m in (("v1", fitted["p1"]), ("matchedfrequency", fitted["p2"]))
        },
    },
)
print(record["mean_bias"], record["fraction_parametric_closer"])
