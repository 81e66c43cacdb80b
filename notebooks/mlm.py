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
# # Which mistakes come first? The Misclassification Likelihood Matrix
#
# The earlier chapters ask *how much* accuracy a model loses on shifted data. {cite:t}`sikar2024mlm` ask
# *which* mistakes it will make. Their Misclassification Likelihood Matrix (MLM) summarises, for every
# pair of classes $(i, j)$, how close the softmax outputs of class-$i$ examples come to the region where
# the network says "$j$". The construction, written out (the paper's §3.3–3.4 describe it in words):
#
# 1. **Centroids (Eq. 1).** Let $\sigma(x) \in \Delta^{K-1}$ be the network's softmax output and $S_k$ the
#    correctly classified training examples of class $k$. The initial centroid of class $k$ is
#    $$ c_k = \frac{1}{|S_k|} \sum_{x \in S_k} \sigma(x). $$
#    k-means on $\{\sigma(x) : x \in \cup_k S_k\}$, initialised at $c_1, \dots, c_K$, refines them to
#    $c_k^\ast$; the paper's Table 1 reports $\lVert c_k^\ast - c_k \rVert_2$.
# 2. **Distances (Eq. 2).** For a test example $x$ of true class $i$ and a class $j \ne i$:
#    $d_j(x) = \lVert \sigma(x) - c_j^\ast \rVert_2$.
# 3. **Nearest-distance matrix (Eq. 3).** With $T_i$ the test examples of class $i$,
#    $$ D_{ij} = \min_{x \in T_i} d_j(x), \qquad j \ne i. $$
# 4. **MLM (Eq. 4).** Reciprocals, normalised per row, zero on the diagonal:
#    $$ M_{ij} = \frac{1 / D_{ij}}{\sum_{k \ne i} 1 / D_{ik}} \quad (j \ne i), \qquad M_{ii} = 0 . $$
# 5. **Across perturbation levels (Eqs. 5–8).** $M^{(\ell)}$ is the same matrix computed from the test
#    set perturbed at level $\ell = 1, \dots, L$; the paper then looks at the element-wise mean
#    $\bar M_{ij} = \frac1L \sum_\ell M^{(\ell)}_{ij}$ and standard deviation
#    $s_{ij} = \sqrt{\frac1L \sum_\ell (M^{(\ell)}_{ij} - \bar M_{ij})^2}$: pairs with a high mean and a low
#    standard deviation are confusions that stay likely whatever the shift.
#
# The paper trains a small CNN on MNIST and perturbs the test set with twelve perturbations of
# {cite:t}`hendrycks2019corruptions` at ten levels. By default this chapter does the same on the
# replication world's digits (16×16, no download); `real.yaml` runs it on MNIST's official idx files.
#
# Terms used here are explained in the glossary: {term}`MLM`, {term}`centroid shift`, {term}`perturbation level`.

# %% tags=["parameters"]
world = {}
dataset = None
data_dir = None
n_test = None
epochs = 10
lr = 0.01
lr_decay = 0.7
batch_size = 64
seed = 0
perturbations = "all"
figure_perturbation = "pixelation"
results_path = None

# %% tags=["remove-stderr"]
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from IPython.display import Markdown, display
from tqdm import tqdm

from shifteval import corruptions, mlm, viz
from shifteval.book import results
from shifteval.datasets import real
from shifteval.datasets import world as worlds
from shifteval.zoo.models import predict_torch

viz.set_style()
if dataset is None:
    w = worlds.build_world(world)
    train_idx, test_idx = w.split_index("train"), w.split_index("v1")
    x_train, y_train = w.images[train_idx], w.labels[train_idx]
    x_test, y_test = w.images[test_idx], w.labels[test_idx]
    data_label = f"replication world {w.config.key()} (train → v1)"
elif dataset == "mnist":
    x_train, y_train = real.load("mnist", data_dir, "train")
    x_test, y_test = real.load("mnist", data_dir, "test")
    x_train, x_test = x_train.astype(np.float32) / 255, x_test.astype(np.float32) / 255
    data_label = f"MNIST idx files in {data_dir}"
else:
    raise ValueError(f"dataset must be null (the replication world) or 'mnist', got {dataset!r}")
if n_test is not None:
    x_test, y_test = x_test[: int(n_test)], y_test[: int(n_test)]
names = list(corruptions.CORRUPTIONS) if perturbations == "all" else list(perturbations)
unknown = sorted(set(names) - set(corruptions.CORRUPTIONS))
if unknown or figure_perturbation not in corruptions.CORRUPTIONS:
    raise ValueError(
        f"unknown perturbation(s) {unknown or [figure_perturbation]}; valid: {corruptions.CORRUPTIONS}"
    )
levels = list(corruptions.LEVELS)
K = 10

bar = tqdm(total=epochs, desc="training the CNN", unit="epoch")
model = mlm.train_classifier(
    x_train, y_train, epochs=epochs, lr=lr, lr_decay=lr_decay, batch_size=batch_size, seed=seed, progress=bar
)
bar.close()
n_params = sum(p.numel() for p in model.parameters())
p_train, p_test = predict_torch(model, x_train), predict_torch(model, x_test)
acc_train = float((p_train.argmax(1) == y_train).mean())
acc_clean = float((p_test.argmax(1) == y_test).mean())
side = x_train.shape[1]
display(
    Markdown(
        f"Data: **{data_label}**, {len(x_train):,} training and {len(x_test):,} test images of {side}×{side} pixels. "
        f"The paper's CNN sized for {side}×{side} inputs has **{n_params:,} parameters** (the paper's "
        f"206,922 are for 28×28: the first fully connected layer shrinks with the image). Trained for {epochs} "
        f"epochs with SGD (momentum 0.9, learning rate {lr} × {lr_decay} per epoch, batch {batch_size}): "
        f"accuracy **{acc_train:.2%}** on the training set and **{acc_clean:.2%}** on the clean test set "
        f"(the paper: 98.38% and 98.46% on MNIST)."
    )
)

# %% [markdown]
# ## Confusions on the clean test set and the MLM (Figures 1 and 2)
#
# {numref}`fig-mlm-fig1`, left: the confusion matrix of the clean test set (counts). Right: the MLM computed
# from the same test set with the k-means centroids of the training set. The confusion matrix only knows the mistakes that
# happened; the MLM also ranks the ones that *almost* happened — a row's largest entries are the classes
# whose centroid some example of that class came closest to.

# %%
centroids0 = mlm.initial_centroids(p_train, y_train)
centroids, shift = mlm.refine_centroids(p_train, y_train, centroids0)
M_clean = mlm.misclassification_likelihood_matrix(p_test, y_test, centroids)
cm = pd.crosstab(pd.Series(y_test, name="true"), pd.Series(p_test.argmax(1), name="predicted")).reindex(
    index=range(K), columns=range(K), fill_value=0
)
fig = viz.mlm.class_matrices(
    [
        (cm, "Figure 1: confusion matrix, clean test set", "d", "Blues", "predicted"),
        (M_clean, "Figure 2: misclassification likelihood matrix", ".2f", "Reds", "likely confused with"),
    ]
)
viz.figure("mlm-fig1", fig)
top_clean = mlm.top_confusions(M_clean, 5)
off = ~np.eye(K, dtype=bool)
most_errors = np.unravel_index(np.where(off, cm.to_numpy(), -1).argmax(), (K, K))
display(
    Markdown(
        f"The most frequent clean error is {most_errors[0]} → {most_errors[1]} "
        f"({cm.to_numpy()[most_errors]} images); the MLM's largest entries are "
        + ", ".join(f"{r.true} → {r.confused_with} ({r.likelihood:.2f})" for r in top_clean.itertuples())
        + "."
    )
)

# %% [markdown]
# ```{glue:figure} mlm-fig1
# :name: fig-mlm-fig1
#
# **Figures 1 and 2.** Left: confusion matrix of the clean test set (counts). Right: the misclassification likelihood matrix of the same test set, computed with the training set's k-means centroids (rows sum to 1, zero diagonal).
# ```

# %% [markdown]
# ## How far k-means moves the centroids (Table 1)
#
# If every correctly classified training output already sits nearest to its own class mean, k-means
# converges immediately and the shift is at floating-point level (the paper: ~1e-14 for seven digits).
# Classes whose outputs spill towards another centroid move further (the paper: ~1e-4 for 5, 6 and 8).
# {numref}`tbl-mlm-table1` sets our shifts beside the paper's.

# %%
table1 = pd.DataFrame(
    {
        "class": range(K),
        "centroid shift": shift,
        "paper (MNIST)": [
            1.1694e-14,
            1.0959e-14,
            6.7639e-15,
            1.7808e-14,
            7.7425e-15,
            1.3045e-04,
            2.3118e-04,
            1.3083e-14,
            1.4139e-04,
            1.2047e-14,
        ],
    }
)
viz.table(
    "mlm-table1",
    table1.style.format({"centroid shift": "{:.3e}", "paper (MNIST)": "{:.3e}"}).hide(axis="index"),
)

# %% [markdown]
# ```{glue:figure} mlm-table1
# :name: tbl-mlm-table1
#
# **Table 1 analog.** Euclidean distance each class centroid moved under k-means (ours, and the paper's on MNIST).
# ```

# %% [markdown]
# ## Ambiguous examples: softmax outputs and distances to the centroids (Figures 3 and 4)
#
# The paper shows two training images of a 6, classified correctly, whose softmax output nevertheless
# lies nearest to the centroid of another class. Here the same search over the training set: correctly
# classified images whose nearest refined centroid is not their class (or, if there are none, the
# correctly classified ones with the smallest margin between the two largest softmax outputs). In
# {numref}`fig-mlm-fig2`, top: the softmax bars (Figure 3); bottom: the distance to every centroid
# (Figure 4) — the two rows mirror each other, high confidence meaning short distance.

# %%
dist_train = mlm.centroid_distances(p_train, centroids)
correct_train = p_train.argmax(1) == y_train
misclustered = np.flatnonzero(correct_train & (dist_train.argmin(1) != y_train))
if len(misclustered) >= 2:
    order = misclustered[np.argsort(np.sort(p_train[misclustered], axis=1)[:, -2])[::-1]]
else:
    top2 = np.sort(p_train, axis=1)
    order = np.flatnonzero(correct_train)[np.argsort((top2[:, -1] - top2[:, -2])[correct_train])]
examples = order[:2]
fig, axes = plt.subplots(2, 3, figsize=(12, 5.5), gridspec_kw={"width_ratios": [0.6, 1.5, 1.5]})
for col, i in enumerate(examples):
    axes[0, 1 + col].bar(range(K), p_train[i], color="tab:blue")
    axes[0, 1 + col].set(
        title=f"training image {i}: label {y_train[i]}, nearest centroid {dist_train[i].argmin()}",
        ylabel="softmax",
        xticks=range(K),
    )
    axes[1, 1 + col].bar(range(K), dist_train[i], color="tab:orange")
    axes[1, 1 + col].set(ylabel="distance to centroid", xlabel="class", xticks=range(K))
    axes[col, 0].imshow(x_train[i], cmap="gray_r")
    axes[col, 0].set(title=f"image {i}", xticks=[], yticks=[])
plt.tight_layout()
viz.figure("mlm-fig2")
display(
    Markdown(
        f"{len(misclustered)} of {int(correct_train.sum()):,} correctly classified training images "
        "lie nearest to another class's centroid."
    )
)

# %% [markdown]
# ```{glue:figure} mlm-fig2
# :name: fig-mlm-fig2
#
# **Figures 3 and 4.** Two correctly classified training images whose softmax output lies nearest to another class's centroid (or, failing that, with the smallest margin). Top: softmax outputs; bottom: distance to every centroid.
# ```

# %% [markdown]
# ## Twelve perturbations at ten levels
#
# The perturbations follow {cite:t}`hendrycks2019corruptions`, rewritten for small grayscale images
# (`shifteval.corruptions`; each one's formula is in its docstring). Their strengths per level come from a
# calibration table chosen once so that this CNN's accuracy on the default data falls roughly linearly
# with the level — the paper tuned its parameters "by trial and error" for the same purpose and did not
# publish them. {numref}`fig-mlm-fig3` shows one test image under every perturbation at levels 1, 4, 7 and 10.

# %%
digit = int(np.flatnonzero(p_test.argmax(1) == y_test)[0])
show_levels = [0, 1, 4, 7, 10]
grid = np.stack([[corruptions.corrupt(x_test[digit], n, lvl, seed) for lvl in show_levels] for n in names])
fig = viz.image_grid(
    grid,
    row_labels=[n.replace("_", " ") for n in names],
    col_labels=["clean" if lvl == 0 else f"level {lvl}" for lvl in show_levels],
    cmap="gray",
)
viz.figure("mlm-fig3")

# %% [markdown]
# ```{glue:figure} mlm-fig3
# :name: fig-mlm-fig3
#
# **Perturbations.** One test image under each of the twelve perturbations at levels 1, 4, 7 and 10 (left column: clean).
# ```

# %% tags=["remove-stderr"]
probs = {}
for name in tqdm(names, desc="perturbing and predicting", unit="perturbation"):
    for lvl in levels:
        probs[name, lvl] = predict_torch(model, corruptions.corrupt(x_test, name, lvl, seed))
accuracy = pd.DataFrame(
    {lvl: {n: float((probs[n, lvl].argmax(1) == y_test).mean()) for n in names} for lvl in levels}
)
accuracy_by_level = accuracy.mean(axis=0)

# %% [markdown]
# ## Accuracy under perturbation (Figures 5 and 7)
#
# {numref}`fig-mlm-fig4`, left: accuracy against level for each perturbation, and the mean over all of them
# (black). Right: the same numbers as a heatmap. The paper reports a mean falling from 97.6% at level 1 to 48.8% at level 10,
# with brightness, contrast and fog the most benign and pixelation, shot noise and zoom blur the harshest.

# %%
fig, axes = plt.subplots(1, 2, figsize=(14, 5), gridspec_kw={"width_ratios": [1, 1.25]})
for name in names:
    axes[0].plot(levels, accuracy.loc[name], marker=".", lw=1, label=name.replace("_", " "))
axes[0].plot(levels, accuracy_by_level, color="black", lw=3, label="mean")
axes[0].axhline(acc_clean, color="grey", ls=":", label="clean")
axes[0].set(
    xlabel="perturbation level", ylabel="accuracy", title="Figure 5: accuracy against level", xticks=levels
)
axes[0].legend(fontsize=7, ncol=2)
sns.heatmap(
    accuracy,
    annot=True,
    fmt=".2f",
    cmap="RdBu_r",
    ax=axes[1],
    annot_kws={"size": 7},
    yticklabels=[n.replace("_", " ") for n in names],
)
axes[1].set(xlabel="perturbation level", title="Figure 7: accuracy, perturbation × level")
plt.tight_layout()
viz.figure("mlm-fig4")
linearity = np.corrcoef(levels, accuracy_by_level)[0, 1]
display(
    Markdown(
        f"Mean accuracy goes from **{accuracy_by_level.iloc[0]:.1%}** at level 1 to **{accuracy_by_level.iloc[-1]:.1%}** "
        f"at level 10 (clean: {acc_clean:.1%}); the correlation of the mean with the level is {linearity:.3f} "
        f"(−1 would be perfectly linear). Most benign at level 10: {accuracy[10].idxmax().replace('_', ' ')} "
        f"({accuracy[10].max():.1%}); harshest: {accuracy[10].idxmin().replace('_', ' ')} ({accuracy[10].min():.1%})."
    )
)

# %% [markdown]
# ```{glue:figure} mlm-fig4
# :name: fig-mlm-fig4
#
# **Figures 5 and 7.** Left: accuracy against perturbation level for each perturbation and their mean (black); dotted: clean accuracy. Right: the same accuracies as a heatmap.
# ```

# %% [markdown]
# ## One digit through every level (Figure 6)
#
# {numref}`fig-mlm-fig5`, top: one test digit under increasing pixelation (or the perturbation named by
# `figure_perturbation`). Bottom: its softmax output averaged over all twelve perturbations at that level — the paper's point is
# that for its example the right class stays on top at every level even though the images degrade.

# %%
fig, axes = plt.subplots(2, len(levels) + 1, figsize=(1.5 * (len(levels) + 1), 3.6))
for col, lvl in enumerate([0] + levels):
    axes[0, col].imshow(
        corruptions.corrupt(x_test[digit], figure_perturbation, lvl, seed), cmap="gray", vmin=0, vmax=1
    )
    axes[0, col].set(xticks=[], yticks=[], title="clean" if lvl == 0 else f"level {lvl}")
    mean_soft = p_test[digit] if lvl == 0 else np.mean([probs[n, lvl][digit] for n in names], axis=0)
    colors = ["tab:red" if k == y_test[digit] else "tab:grey" for k in range(K)]
    axes[1, col].bar(range(K), mean_soft, color=colors)
    axes[1, col].set(ylim=(0, 1), xticks=[], yticks=[] if col else [0, 0.5, 1])
fig.suptitle(
    f"Figure 6: test image {digit} (class {y_test[digit]}, red bar) under {figure_perturbation.replace('_', ' ')}",
    y=1.02,
)
plt.tight_layout()
viz.figure("mlm-fig5")

# %% [markdown]
# ```{glue:figure} mlm-fig5
# :name: fig-mlm-fig5
#
# **Figure 6.** One test image under increasing levels of one perturbation (top) and its softmax output averaged over all twelve perturbations at each level (bottom; red: the true class).
# ```

# %% [markdown]
# ## The MLM across levels (Eqs. 5–8)
#
# Pooling the twelve perturbations at each level gives one perturbed test set per level and one MLM per
# level. {numref}`fig-mlm-fig6`, left: the mean MLM $\bar M$ over the ten levels; right: its standard
# deviation $s$. {numref}`tbl-mlm-top` lists the most likely confusions: high mean and low spread means a
# confusion that stays likely however strong the shift.

# %%
pooled = {lvl: np.concatenate([probs[n, lvl] for n in names]) for lvl in levels}
pooled_labels = np.tile(y_test, len(names))
mats, M_mean, M_std = mlm.level_matrices(
    [pooled[lvl] for lvl in levels], [pooled_labels] * len(levels), centroids
)
fig = viz.mlm.class_matrices(
    [
        (M_mean, "mean MLM over levels 1–10 (Eq. 7)", ".2f", "Reds", "likely confused with"),
        (M_std, "standard deviation over levels (Eq. 8)", ".3f", "Greys", "likely confused with"),
    ]
)
viz.figure("mlm-fig6", fig)
top = mlm.top_confusions(M_mean, 10, std=M_std)
viz.table("mlm-top", top.style.format({"likelihood": "{:.3f}", "std": "{:.4f}"}).hide(axis="index"))

# %% [markdown]
# ```{glue:figure} mlm-fig6
# :name: fig-mlm-fig6
#
# **MLM across levels.** Left: mean of the ten per-level MLMs (Eq. 7); right: their element-wise standard deviation (Eq. 8).
# ```
#
# ```{glue:figure} mlm-top
# :name: tbl-mlm-top
#
# **The ten most likely confusions** over all levels: true class, the class it is likely taken for, the
# mean MLM entry (Eq. 7) and its standard deviation over the levels (Eq. 8).
# ```


# %% [markdown]
# ## Beyond the paper: does the clean MLM predict the confusions that perturbations cause?
#
# The MLM is built from distances, not from errors. A fair test of its use for risk assessment: rank the
# 90 off-diagonal class pairs by the clean-test MLM, and compare with the *observed* confusion rates
# $R^{(\ell)}_{ij}$ (share of class-$i$ test images predicted as $j$) on the perturbed data at each level,
# by Spearman's rank correlation ({numref}`fig-mlm-fig7`, {numref}`tbl-mlm-rank`). As a yardstick, the
# clean confusion rates themselves are ranked the same way: a risk tool should beat simply counting
# yesterday's mistakes.

# %%
rates = {lvl: mlm.confusion_rates(pooled_labels, pooled[lvl].argmax(1), K) for lvl in levels}
rates_clean = mlm.confusion_rates(y_test, p_test.argmax(1), K)
rank = pd.DataFrame(
    {
        "MLM (clean) vs observed": [mlm.rank_agreement(M_clean, rates[lvl])[0] for lvl in levels],
        "MLM at the level vs observed": [
            mlm.rank_agreement(mats[i], rates[lvl])[0] for i, lvl in enumerate(levels)
        ],
        "clean confusion rates vs observed": [
            mlm.rank_agreement(rates_clean, rates[lvl])[0] for lvl in levels
        ],
    },
    index=pd.Index(levels, name="level"),
)
fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
rank.plot(ax=axes[0], marker="o")
axes[0].axhline(0, color="grey", lw=0.8)
axes[0].set(
    ylabel="Spearman ρ over 90 class pairs", xticks=levels, title="rank agreement with observed confusions"
)
mid = levels[len(levels) // 2]
axes[1].scatter(M_clean[off], rates[mid][off], s=14)
axes[1].set(
    xlabel="clean MLM entry",
    ylabel=f"observed confusion rate, level {mid}",
    title=f"the 90 class pairs at level {mid}",
)
plt.tight_layout()
viz.figure("mlm-fig7")
viz.table("mlm-rank", rank.style.format("{:.3f}"))
display(
    Markdown(
        f"Averaged over the levels, the clean MLM reaches ρ = {rank.iloc[:, 0].mean():.2f}, the per-level MLM "
        f"ρ = {rank.iloc[:, 1].mean():.2f} and the clean confusion counts ρ = {rank.iloc[:, 2].mean():.2f}. "
        + (
            "The MLM ranks future confusions better than the clean error counts do."
            if rank.iloc[:, 0].mean() > rank.iloc[:, 2].mean()
            else "Counting the clean errors ranks future confusions at least as well as the clean MLM does: "
            "on these data the MLM's fine-grained view adds no ranking power over the confusion matrix."
        )
    )
)

# %% [markdown]
# ```{glue:figure} mlm-fig7
# :name: fig-mlm-fig7
#
# **Rank agreement.** Left: Spearman correlation, over the 90 off-diagonal class pairs, between three predictors (clean MLM, per-level MLM, clean confusion rates) and the confusion rates observed at each level. Right: the clean MLM against the observed confusion rates at the middle level.
# ```
#
# ```{glue:figure} mlm-rank
# :name: tbl-mlm-rank
#
# **Rank agreement per level**: Spearman's ρ between each predictor and the observed off-diagonal
# confusion rates at that level.
# ```


# %% [markdown]
# ## Exercises
#
# ````{exercise}
# :label: mlm-ex-minimum
# Why does the MLM use the *minimum* distance over a class's test examples (Eq. 3) rather than the mean?
# What happens to a row of the MLM when one outlier image of that class lands right on another class's
# centroid?
# ````
#
# ````{solution} mlm-ex-minimum
# :class: dropdown
# The minimum makes $D_{ij}$ the distance of the *worst case* — the class-$i$ example that came closest
# to being called $j$ — so the MLM ranks what can go wrong, not what usually happens. The price is
# fragility: one outlier at distance ≈ 0 from centroid $j$ makes $1/D_{ij}$ dominate the row, and that
# row's likelihood mass concentrates on $j$ however rare such images are.
# ````
#
# ````{exercise}
# :label: mlm-ex-kmeans
# Table 1's shifts are ~1e-14 for most classes in the paper. Explain why k-means initialised at the class
# means often does not move at all, and what makes a centroid move.
# ````
#
# ````{solution} mlm-ex-kmeans
# :class: dropdown
# k-means only moves a centroid when some point is assigned to a different centroid than the one whose
# mean it contributed to. The correctly classified outputs of class $k$ are concentrated near the
# corner $e_k$ of the simplex, so each is nearest to its own class mean; the first assignment reproduces
# the classes, the means are recomputed identically (up to rounding: 1e-14), and the algorithm stops.
# Ambiguous but correct outputs (e.g. a 6 with a large 5 component) can be nearer another centroid; they
# change cluster and both centroids move.
# ````
#
# ````{exercise}
# :label: mlm-ex-epochs
# Re-run the chapter with fewer training epochs (`-p epochs=2`). Does the MLM become more or less
# informative about the perturbed confusions (the rank-correlation figure)?
# ````
#
# ````{solution} mlm-ex-epochs
# :class: dropdown
# An under-trained network has softer outputs, so test outputs sit further from the corners and nearer
# to several centroids: the clean MLM is flatter, and its ranking reflects which classes look alike to
# a weak model. Compare the printed ρ values; the answer depends on the run, which is the point of the
# exercise — the MLM describes a particular model, not the data.
# ````
#
# ````{exercise}
# :label: mlm-ex-mnist
# The severity table was calibrated for this CNN on the default data. Re-run on MNIST (`--params real`)
# and compare Figure 5: is the decline still linear? Why would it not be?
# ````
#
# ````{solution} mlm-ex-mnist
# :class: dropdown
# The strengths were chosen for one network on 16×16 images of one difficulty. MNIST's cleaner 28×28
# digits and a better-trained network resist the same strengths differently (blur radii are scaled to the
# image size, but noise and occlusion are not equally harmful at every resolution), so some
# perturbations flatten and others fall off a cliff. Re-calibrating means re-running
# `scripts/calibrate_corruptions.py` with the MNIST model.
# ````

# %%
record = results.record(
    results_path,
    {
        "data": data_label,
        "n_train": len(x_train),
        "n_test": len(x_test),
        "n_parameters": n_params,
        "accuracy_train": acc_train,
        "accuracy_clean": acc_clean,
        "perturbations": names,
        "levels": levels,
        "accuracy": {n: accuracy.loc[n, levels].tolist() for n in names},
        "accuracy_by_level": [float(a) for a in accuracy_by_level],
        "centroid_shift": shift.tolist(),
        "mlm_clean": M_clean.tolist(),
        "mlm_mean": M_mean.tolist(),
        "mlm_std": M_std.tolist(),
        "top_confusions": top.to_dict(orient="records"),
        "rank_correlation": {col: rank[col].tolist() for col in rank.columns},
    },
)
print({k: record[k] for k in ("accuracy_clean", "accuracy_by_level")})
