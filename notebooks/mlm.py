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
#   shifteval:
#     threads: 1
#     seconds: 70
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
# replication world's digits (16×16, no download); `--params real -p data_dir=<folder>` runs it in the
# paper's own setting on MNIST's four official idx files (28×28, the paper's 206,922-parameter CNN, the
# real 10,000 test images).
#
# Terms used here are explained in the glossary: {term}`MLM`, {term}`centroid shift`, {term}`perturbation level`.

# %% tags=["parameters"]
world = {}  # replication-world settings (WorldConfig overrides) when dataset is None
dataset = None  # None: the replication world; "mnist": MNIST's idx files in data_dir
data_dir = None  # the folder holding MNIST's four idx files (dataset mnist)
n_train = None  # training images used (None: all)
n_test = None  # test images used (None: all)
epochs = 10  # training epochs of the paper's CNN (§3.1: 10)
lr = 0.01  # SGD learning rate (§3.1)
lr_decay = 0.7  # learning-rate decay per epoch
batch_size = 64  # training batch size
seed = 0  # seed of training, calibration and perturbations
perturbations = None  # a list of perturbation names; None: all twelve
figure_perturbation = "pixelation"  # the perturbation whose examples the figure shows
n_calibration = 1000  # images the severities are calibrated on (kept apart from the evaluated ones)
calibration_points = 24  # grid points per perturbation in the calibration

# %% tags=["remove-stderr"]
import numpy as np
import pandas as pd
from tqdm import tqdm

from shifteval import corruptions, mlm, viz
from shifteval.book import results
from shifteval.datasets import published
from shifteval.datasets import splits as data_splits
from shifteval.nets import predict_torch

R = results.Results("mlm")
viz.set_style()
splits, data_label = data_splits.image_splits(world, dataset, data_dir)
x_train, y_train = (a[:n_train] for a in splits["train"])
x_test, y_test = (a[:n_test] for a in splits["v1" if dataset is None else "test"])
names = list(corruptions.CORRUPTIONS if perturbations is None else perturbations)
levels, K = list(corruptions.LEVELS), 10


# %%
from shifteval.book.claims import about, above, at_least, at_most, below, equal, every, fact
from shifteval.book.findings import VERDICTS, holds_in, matches, not_testable, same_direction, same_members

# %% [markdown]
# ## Calibration on a separate model and separate images
#
# The paper set each perturbation's parameters "by trial and error" so that accuracy falls linearly with
# the level (§3.2, §4.4), and did not publish them. We set them by a procedure instead, and keep it apart
# from what is evaluated: a **calibration model** (the same CNN, another seed) is trained on the training
# images minus a held-out **calibration split**; on that split, each perturbation's strength at level
# $\ell$ is the one at which the calibration model's accuracy crosses that perturbation's target
# profile, a straight line from its level-1 to its level-10 accuracy, taken relative to clean accuracy
# (times clean/98.46%). The paper states a level-1 and a level-10 accuracy for brightness only, besides
# the overall maximum and minimum and the averages (§4.4); the rest of the targets are our choices:
#
# - brightness (the paper's) falls "from 0.99 at intensity 1 to 0.50 at intensity 10"; we read its 0.99
#   as the overall maximum the paper reports, 98.52%, rounded;
# - contrast and fog, "most resilient" with brightness, we set to end at brightness's 0.50;
# - pixelation, the first-named of the perturbations "dropping below 0.6 at higher intensities" (with
#   shot noise and zoom blur) and the one of Figure 6, we set to end at the overall minimum, 36.32%;
# - every other level-1 and level-10 accuracy is what the paper's averages over the twelve (97.61% at
#   level 1, 48.83% at level 10) leave once these are set, shared equally (`mlm.paper_profile`), so the
#   twelve targets average to the paper's profile at every level.
#
# One consequence: the eight perturbations the paper gives no number for end just below the three "most
# resilient" ones' 50% (the accuracy section gives the figure), so at level 10 the targets set only
# pixelation apart.
#
# The evaluated model is then trained on all training images and evaluated on the test images, which
# neither the calibration model nor the calibration split has seen.
#
# What this fixes by design: every perturbation's curve *for the calibration model on the calibration
# images* sits on its own target (to the grid's resolution). What it leaves free: how the evaluated
# model responds on the test images — the per-perturbation curves below fall where they fall, and a
# perturbation whose strength could not reach a target is clamped to its grid's end and reported so.

# %% tags=["remove-stderr"]
train = dict(epochs=epochs, lr=lr, lr_decay=lr_decay, batch_size=batch_size)
fit_idx, cal_idx = mlm.calibration_split(len(x_train), n_calibration, seed)
bar = tqdm(total=2 * epochs, desc="training the calibration and evaluated CNNs", unit="epoch")
cal_model = mlm.train_classifier(x_train[fit_idx], y_train[fit_idx], seed=seed + 1, progress=bar, **train)
model = mlm.train_classifier(x_train, y_train, seed=seed, progress=bar, **train)
bar.close()
cal = mlm.calibrate_severities(
    cal_model, x_train[cal_idx], y_train[cal_idx], points=calibration_points, seed=seed + 1, names=names
)
calibration = mlm.calibration_record(cal, cal_model, model, x_train[cal_idx], x_test, len(fit_idx))
# is the calibration kept apart: test images it shares, whether its model is the evaluated one
shared, same = calibration["images_overlap_evaluation"], calibration["uses_evaluated_model"]
n_clamped = sum(calibration["clamped_levels"].values())  # perturbation-levels clamped to the grid's end
R.record({"calibration": calibration})

# %% tags=["remove-cell"]
R.check(
    "mlm-calibration-separate", equal(shared, 0) & equal(same, False), n_cal=len(cal_idx), n_test=len(x_test)
)
R.check("mlm-calibration-clamped", at_most(n_clamped, 0.1 * 10 * len(names)), total=10 * len(names))

# %% [markdown]
# <span claim="mlm-calibration-separate">Calibration used {n_cal:,} held-out training images, none of them
# equal to any of the {n_test:,} test images ({test[0].a} shared), and a calibration model whose weights
# differ from the evaluated model's.</span> <span claim="mlm-calibration-clamped">{test.a:.0f} of the {total}
# perturbation-levels, at most one in ten, could not reach their target within the search grid and were
# clamped to its end.</span>

# %%
R.figure("mlm-calibration", viz.mlm.calibration_curves(cal["curves"], cal["targets_by_perturbation"]))

# %% [markdown]
# ```{glue:figure} mlm-calibration
# :name: fig-mlm-calibration
#
# **Calibration.** The calibration model's accuracy on the calibration images against each perturbation's strength; grey lines: that perturbation's ten target accuracies.
# ```

# %% tags=["remove-stderr"]
p_train, p_test = predict_torch(model, x_train), predict_torch(model, x_test)
acc_train = float((p_train.argmax(1) == y_train).mean())
acc_clean = float((p_test.argmax(1) == y_test).mean())
n_params = sum(p.numel() for p in model.parameters())
R.record({"data": data_label, "n_train": len(x_train), "n_test": len(x_test), "n_parameters": n_params})
R.record({"accuracy_train": acc_train, "accuracy_clean": acc_clean})
R.number("mlm-n-parameters", n_params, "{:,}")
R.number("mlm-acc-train", acc_train, "{:.2%}")
R.number("mlm-acc-clean", acc_clean, "{:.2%}")
R.number(
    "mlm-data",
    f"{data_label}: {len(x_train):,} training and {len(x_test):,} test images of {x_train.shape[1]}×{x_train.shape[2]} pixels",
    "{}",
)

# %% tags=["remove-input"]
lr_quote = "a custom learning rate function that decreases the learning rate over time"
R.number("mlm-lr-decay-cite", R.cite("sikar2024mlm", "§3.1", quote=lr_quote), "{}")
R.number("mlm-s31-cite", R.cite("sikar2024mlm", "§3.1", numbers=["206,922"]), "{}")
R.number("mlm-s41-cite", R.cite("sikar2024mlm", "§4.1", numbers=["98.38", "98.46"]), "{}")

# %% tags=["remove-stderr"]
# the same network with a constant learning rate (lr_decay = 1), beside the decreasing one of §3.1
constant_lr = mlm.train_classifier(x_train, y_train, seed=seed, **{**train, "lr_decay": 1.0})
acc_constant_lr = float((predict_torch(constant_lr, x_test).argmax(1) == y_test).mean())
R.number("mlm-acc-constant-lr", acc_constant_lr, "{:.2%}")

# %% [markdown]
# Data: {glue:md}`mlm-data`. The paper's CNN sized for these inputs has {glue:md}`mlm-n-parameters`
# parameters (the paper's 206,922, {glue:md}`mlm-s31-cite`, are for 28×28: the first fully connected layer
# shrinks with the image).
# Training follows §3.1 and §4.1 — SGD, learning rate 0.01, batch 64, 10 epochs, inputs normalised to mean
# 0.5 and standard deviation 0.5. The learning rate decays, as §3.1 says ({glue:md}`mlm-lr-decay-cite`),
# but the paper does not give the function: ours multiplies it by `lr_decay` after each epoch. Momentum 0.9
# is our choice; the paper does not state one. Accuracy: {glue:md}`mlm-acc-train` on the
# training set and {glue:md}`mlm-acc-clean` on the clean test set (the paper, on MNIST: 98.38% and 98.46%,
# {glue:md}`mlm-s41-cite`). With a constant learning rate instead (`lr_decay = 1`, 10 epochs, the same seed)
# the network reaches {glue:md}`mlm-acc-constant-lr` on the clean test set; the rest of the chapter uses the
# decreasing one.

# %%
# §4.1's clean test accuracy is MNIST's: compared only on MNIST, within half a point (four binomial
# standard errors of an accuracy near 98.5% on 10,000 images)
f_clean = R.finding(
    "clean-test-accuracy",
    paper="sikar2024mlm",
    where="§4.1",
    statement="The accuracy obtained on the training dataset is 98.38% and 98.46% on the testing dataset",
    quantity="clean test accuracy of the paper's CNN, %",
    paper_value=98.46,
    run_value=100 * acc_clean,
    criterion=matches(100 * acc_clean, 98.46, tol=0.5)
    if dataset == "mnist"
    else not_testable("the replication world's digits are not MNIST, whose accuracy the paper reports"),
    section="Calibration on a separate model and separate images",
)

# %% tags=["remove-stderr"]
digit = int(np.flatnonzero(p_test.argmax(1) == y_test)[0])
bar = tqdm(total=len(names), desc="perturbing and predicting", unit="perturbation")
probs, accuracy, kept = mlm.perturbed_predictions(
    model, x_test, y_test, names, severity=cal["severity"], seed=seed, keep=[digit], progress=bar
)
bar.close()
accuracy_by_level = accuracy.mean(axis=0)
R.record({"perturbations": names, "levels": levels})
R.record({"accuracy_by_level": [float(a) for a in accuracy_by_level]})
R.record({"accuracy": {n: accuracy.loc[n, levels].tolist() for n in names}})

# %% [markdown]
# ## Confusions on the clean test set and the MLM over all perturbed outputs (Figures 1 and 2)
#
# {numref}`fig-mlm-paper-fig1-2`, top left: the confusion matrix of the clean test set (counts). Top right: the
# MLM computed, as in §4.5, over the perturbed test set — all twelve perturbations at all ten levels pooled —
# with the k-means centroids of the training set. Bottom, for comparison: the MLM of the clean test set.
# The confusion matrix only knows the mistakes that happened; the MLM also ranks the ones that *almost*
# happened.

# %%
centroids0 = mlm.initial_centroids(p_train, y_train)
centroids, shift = mlm.refine_centroids(p_train, y_train, centroids0, subset="correct")
_, shift_all = mlm.refine_centroids(p_train, y_train, centroids0, subset="all")
M_clean = mlm.misclassification_likelihood_matrix(p_test, y_test, centroids)
M_perturbed = mlm.misclassification_likelihood_matrix(*mlm.pooled(probs, y_test, names), centroids)
cm = mlm.confusion_rates(y_test, p_test.argmax(1), K) * np.bincount(y_test, minlength=K)[:, None]
cm = np.rint(cm).astype(int)
R.figure("mlm-paper-fig1-2", viz.mlm.fig1_2_confusion_and_mlm(cm, M_perturbed, M_clean))
R.record({"mlm_clean": M_clean.tolist(), "mlm_perturbed": M_perturbed.tolist()})
top_i, top_j, top_c = mlm.most_frequent_error(cm)  # the most frequent clean error, top_i → top_j
top9 = int(np.argmax(np.where(np.arange(K) == 9, -1, cm[9])))  # the most frequent clean error from 9
zeros, zeros_mlm = cm[:3, 8:], M_perturbed[:3, 8:]  # 0, 1, 2 taken for 8 or 9
rho_clean_pert = mlm.rank_agreement(M_clean, M_perturbed)[0]  # Spearman's ρ over the 90 class pairs
place_97, place_72 = mlm.row_rank(M_perturbed, 9, 7), mlm.row_rank(M_perturbed, 7, 2)  # 1: the likeliest

# %% [markdown]
# ```{glue:figure} mlm-paper-fig1-2
# :name: fig-mlm-paper-fig1-2
#
# **Confusion matrix and misclassification likelihood matrix.** Top left: confusion matrix of the clean test set (counts). Top right: the misclassification likelihood matrix over all perturbed test outputs (twelve perturbations, ten levels). Bottom: the same matrix on the clean test set. Rows sum to 1, zero diagonal.
# ```
#
# §4.5 compares its Figure 2 with Figure 1 on three points: the *cluster of zeros* in the confusion
# matrix's top right (digits 0, 1 and 2 never taken for 8 or 9), which the MLM fills with low but non-zero
# likelihoods; 9 → 7, the most frequent clean error in the paper, to which the MLM does *not* give a high
# likelihood; and row 7, a close match, with 7 → 2 holding in the perturbed data. "The highest in the
# testing dataset" we read as the largest cell of the whole clean confusion matrix. A place within a row can
# move between two training runs of the CNN (*Reproducing this book*, "Same numbers on every machine?"),
# so "low" and "high" likelihoods are read against the uniform 1/9, a row's mean. Ours:

# %%
# the six cells 0, 1, 2 → 8, 9: "relatively low albeit non-zero" likelihoods, below the uniform 1/9
u = 1 / (K - 1)
low_nonzero = int(((zeros_mlm > 0) & (zeros_mlm < u)).sum())
f_zeros = R.finding(
    "zeros-get-low-nonzero-likelihoods",
    paper="sikar2024mlm",
    where="§4.5",
    statement="The MLM is able to provide fine-grained information about the misclassification likelihood, assigning relatively low albeit non-zero likelihood misclassification values",
    quantity="cells 0, 1, 2 → 8, 9 of the perturbed MLM with a likelihood above zero and below the uniform 1/9",
    paper_value="all six",
    run_value=f"{low_nonzero} of 6",
    criterion=holds_in(low_nonzero, 6),
    section="Confusions on the clean test set and the MLM over all perturbed outputs (Figures 1 and 2)",
)

# %%
# the most frequent clean error: "not a high likelihood" read as at most the uniform 1/9
m_top, place_top = float(M_perturbed[top_i, top_j]), mlm.row_rank(M_perturbed, top_i, top_j)
f_top = R.finding(
    "top-clean-error-not-likely",
    paper="sikar2024mlm",
    where="§4.5",
    statement="The MLM does not assign a high likelihood for digit 9 misclassified as 7, which is the highest in the testing dataset",
    quantity="the perturbed-MLM likelihood of the most frequent clean error at most the uniform 1/9",
    paper_value="9 → 7: not high",
    run_value=f"{top_i} → {top_j}: {m_top:.3f}, place {place_top} of 9",
    criterion=holds_in(int(m_top <= u), 1),
    section="Confusions on the clean test set and the MLM over all perturbed outputs (Figures 1 and 2)",
)

# %%
# 7 → 2 "holds in the perturbed" data: a likelihood above the uniform 1/9
m72 = float(M_perturbed[7, 2])
f_72 = R.finding(
    "seven-to-two-likely",
    paper="sikar2024mlm",
    where="§4.5",
    statement="row 7 is a close match … with 7 being misclassified as 2 holds in the perturbed MNIST dataset",
    quantity="the perturbed-MLM likelihood of 7 → 2 above the uniform 1/9",
    paper_value="holds",
    run_value=f"{m72:.3f}, place {place_72} of 9",
    criterion=holds_in(int(m72 > u), 1),
    section="Confusions on the clean test set and the MLM over all perturbed outputs (Figures 1 and 2)",
)

# %% tags=["remove-cell"]
R.check(
    "mlm-zeros-cluster", below(zeros_mlm.mean(), u), z=int((zeros == 0).sum()), k=low_nonzero, finding=f_zeros
)
m9 = {"j": top9, "c": int(cm[9, top9]), "r9": mlm.row_rank(M_perturbed, 9, top9), "m9": M_perturbed[9, top9]}
top = {"i": top_i, "j0": top_j, "c0": top_c, "r": place_top, "m": m_top, "m97": float(M_perturbed[9, 7])}
R.check("mlm-top-clean-error", above(place_97, 1), finding=f_top, **top, **m9)

# %% [markdown]
# <span claim="mlm-zeros-cluster">The clean confusion matrix has {z} zeros among the six cells
# 0, 1, 2 → 8, 9; the perturbed MLM gives these cells a mean likelihood of {test.a:.3f}, below the
# uniform 1/9 = 0.111, and {k} of the six a likelihood above zero and below it: {finding:low albeit
# non-zero likelihoods, as in the paper|low albeit non-zero likelihoods for most of the six but not all,
# where the paper finds them for the whole cluster|not low and non-zero for most of the six, unlike the
# paper|a comparison this run cannot make}.</span> <span claim="mlm-top-clean-error">The clean test set's
# most frequent error is {i} → {j0} ({c0} images; in the paper 9 → 7). In row {i} of the perturbed MLM
# it is in place {r} of 9 with likelihood {m:.3f}, {finding:not above|not above|above|against} the uniform
# 1/9: {finding:not a high likelihood, as the paper finds for its 9 → 7|not a high likelihood, as the paper
# finds for its 9 → 7|a high likelihood, unlike the paper's 9 → 7|a comparison this run cannot make}.
# Read instead as the most frequent error from 9, 9 → {j} ({c} images), it is in place {r9} of row 9
# with likelihood {m9:.3f}; 9 → 7 itself is in place {test.a:.0f} of 9 (likelihood {m97:.3f}), not the
# largest entry of its row.</span>

# %% tags=["remove-cell"]
R.check("mlm-7-to-2", equal(m72 > u, f_72.verdict == "reproduced"), r=place_72, m=m72, finding=f_72)
R.check("mlm-clean-vs-perturbed", below(rho_clean_pert, 0.9))
R.number("mlm-41-ours", mlm.confusion_summary(cm), "{}")

# %% [markdown]
# <span claim="mlm-7-to-2">In row 7 of the perturbed MLM, 7 → 2 is in place {r} of 9 with likelihood
# {m:.3f}, {finding:above|above|not above|against} the uniform 1/9 = 0.111: {finding:among the likelier
# confusions of 7, as in the paper|among the likelier confusions of 7, as in the paper|not among the
# likelier confusions of 7, unlike the paper|a comparison this run cannot make}.</span>
# <span claim="mlm-clean-vs-perturbed">The clean MLM and the perturbed MLM rank the 90 class pairs
# differently: Spearman ρ = {test.a:.2f}, below 0.9.</span>

# %% [markdown]
# The paper's §4.1 reads its Figure 1 so: 0 is the least and 8 the most misclassified digit; 8 is mostly
# taken for 0, 6 and 9; 3 for 5 and 7. Ours: {glue:md}`mlm-41-ours`.

# %%
# §4.1: the least and the most misclassified digit of the clean test set (errors counted per digit)
wrong = cm.sum(axis=1) - np.diag(cm)
least_most = [f"least {int(wrong.argmin())}", f"most {int(wrong.argmax())}"]
f_digits = R.finding(
    "least-and-most-misclassified-digits",
    paper="sikar2024mlm",
    where="§4.1",
    statement="We note that number zero is the digit least, and number eight is the digit most misclassified",
    quantity="the least and the most misclassified digit of the clean test set",
    paper_value="least 0, most 8",
    run_value=", ".join(least_most),
    criterion=same_members(least_most, ["least 0", "most 8"]),
    section="Confusions on the clean test set and the MLM over all perturbed outputs (Figures 1 and 2)",
)

# %% tags=["remove-cell"]
R.check(
    "mlm-least-most", below(wrong.min(), wrong.max()), a=wrong.argmin(), b=wrong.argmax(), finding=f_digits
)

# %% [markdown]
# <span claim="mlm-least-most">Here the least misclassified digit is {a} ({test.a:.0f} errors) and the most
# {b} ({test.b:.0f}): {finding:the paper's two, 0 and 8|one of the paper's two, 0 and 8|neither of the paper's
# two, 0 and 8|a comparison this run cannot make}.</span>

# %% tags=["remove-input"]
kmeans_quote = "iteratively assigns each softmax output to the nearest centroid"
R.number("mlm-kmeans-cite", R.cite("sikar2024mlm", "§3.3", quote=kmeans_quote), "{}")

# %% [markdown]
# ## How far k-means moves the centroids (Table 1)
#
# §3.3a initialises k-means at the class means of the correctly classified training outputs; the algorithm
# then {glue:md}`mlm-kmeans-cite`. We read "each softmax output" as each of those correctly classified
# outputs — an interpretation: the other reading clusters every training output, misclassified ones
# included. If every correctly
# classified output already sits nearest to its own class mean, k-means converges at once and the shift is
# at floating-point level (the paper: ~1e-14 for seven digits, ~1e-4 for 5, 6 and 8).
# {numref}`tbl-mlm-paper-table1` sets both readings' shifts beside the paper's.

# %%
table1_paper = published.reported()["mlm"]["table1_centroid_shift"]
table1 = pd.DataFrame(
    {
        "class": range(K),
        "shift (correct outputs, ours)": shift,
        "shift (all outputs)": shift_all,
        "paper (MNIST)": table1_paper["distance"],
    }
)
R.table("mlm-paper-table1", table1.style.format("{:.3e}", subset=list(table1.columns[1:])).hide(axis="index"))
R.record({"centroid_shift": shift.tolist(), "centroid_shift_all": shift_all.tolist()})

# %% tags=["remove-cell"]
R.check("mlm-kmeans-readings", above(shift_all.max(), shift.max()))

# %%
# Table 1: "most" classes (seven of ten) stay put to floating-point precision, read as a shift below 1e-12
moved = [str(c) for c in np.flatnonzero(shift >= 1e-12)]  # the classes whose centroid moves
f_unmoved = R.finding(
    "most-centroids-unmoved",
    paper="sikar2024mlm",
    where="Table 1, §4.2",
    statement="For most digit classes (0, 1, 2, 3, 4, 7, 9), the Euclidean distances are extremely small, on the order of 1e-14 to 1e-15",
    quantity="classes (of 10) whose centroid k-means moves by less than 1e-12, correctly classified outputs",
    paper_value=7,
    run_value=K - len(moved),
    # reproduced within one class of the paper's seven; partly while still most (above five)
    criterion=matches(K - len(moved), 7, tol=1, reference=K / 2),
    section="How far k-means moves the centroids (Table 1)",
)

# %%
# Table 1: the classes that do move, "on the order of 1e-4" in the paper
f_moved = R.finding(
    "moving-centroids-5-6-8",
    paper="sikar2024mlm",
    where="Table 1, §4.2",
    statement="for digit classes 5, 6, and 8, the Euclidean distances are slightly larger, on the order of 1e-4",
    quantity="the classes whose centroid moves by 1e-12 or more",
    paper_value="5, 6, 8",
    run_value=", ".join(moved) or "none",
    criterion=same_members(moved, ["5", "6", "8"]) if moved else holds_in(0, 3),
    section="How far k-means moves the centroids (Table 1)",
)

# %% tags=["remove-cell"]
R.check(
    "mlm-table1-shifts",
    fact(np.isfinite(shift).all(), why="every class's shift is a number, so each is counted against 1e-12"),
    n=K - len(moved),
    moved=", ".join(moved) or "none",
    finding=f_unmoved,
    f2=f_moved,
)
# a report of the run: whether any class moves is the run's (on real MNIST none may)
R.check("mlm-table1-largest-shift", above(shift.max(), 1e-12) if moved else below(shift.max(), 1e-12))

# %% [markdown]
# <span claim="mlm-kmeans-readings">Clustering only the correctly classified outputs moves the centroids by
# at most {test.b:.2e}; clustering every training output moves them by up to {test.a:.2e}.</span>
# <span claim="mlm-table1-shifts">With the correctly classified outputs, the centroids of {n} of the 10
# classes stay put to floating-point precision (a shift below 1e-12):
# {finding:most classes stay put, as in the paper's Table 1|most classes stay put, but not the paper's
# seven|most classes move, unlike the paper's Table 1, where seven of ten stay at 1e-14 to 1e-15|a
# comparison this run cannot make}. The classes that move are {moved}: {f2:the paper's 5, 6 and 8|the
# paper's moving classes are among them, but the set is not the paper's 5, 6 and 8|none of the paper's 5, 6
# and 8|a comparison this run cannot make}.</span> <span claim="mlm-table1-largest-shift">The largest shift is
# {test.a:.1e}.</span>

# %% [markdown]
# ```{glue:figure} mlm-paper-table1
# :name: tbl-mlm-paper-table1
#
# **How far the class centroids move.** Euclidean distance each class centroid moved under k-means: clustering the correctly classified training outputs (our reading), clustering all training outputs (the other reading), and the paper's on MNIST.
# ```

# %% [markdown]
# ## Ambiguous examples: softmax outputs and distances to the centroids (Figures 3 and 4)
#
# The paper shows two training images of a 6, classified correctly, whose softmax output nevertheless
# lies nearest to the centroid of another class (§4.3). The same search over our training set:
# correctly classified images whose nearest refined centroid is not their class (or, if there are fewer
# than two, the correctly classified ones with the smallest margin). {numref}`fig-mlm-paper-fig3-4`, top: softmax
# bars (Figure 3); bottom: distance to every centroid (Figure 4).

# %%
examples, n_misclustered, n_correct = mlm.ambiguous_examples(p_train, y_train, centroids)
dist_train = mlm.centroid_distances(p_train[examples], centroids)
fig = viz.mlm.fig3_4_ambiguous(
    x_train[examples], p_train[examples], y_train[examples], dist_train, [0, 1], ids=examples
)
R.figure("mlm-paper-fig3-4", fig)

# %%
# §4.3: correctly classified training images nearest another class's centroid (the paper shows two 6s)
f_misclustered = R.finding(
    "misclustered-images-exist",
    paper="sikar2024mlm",
    where="§4.3, Figure 3",
    statement="The cluster labels however do not correspond as digit id 8688 is nearer to the cluster 5 centroid, and digit id 22561 is nearer to cluster 8 centroid",
    quantity="correctly classified training images nearest another class's centroid",
    paper_value="2 shown (ids 8688, 22561)",
    run_value=n_misclustered,
    criterion=same_direction(n_misclustered, 2, reference=0),
    section="Ambiguous examples: softmax outputs and distances to the centroids (Figures 3 and 4)",
)

# %%
# §4.3: the two highest softmax outputs are the classes of the two nearest centroids ("inverse relation")
mirrors = mlm.confidence_mirrors_distance(p_train[examples], dist_train, k=2)
f_mirror = R.finding(
    "confidence-mirrors-distance",
    paper="sikar2024mlm",
    where="§4.3, Figure 3, Figure 4",
    statement="We notice the inverse relation between both sets of figures, where the highest bars (network confidence) in the first set correspond to the lowest bars (distance to class centroid) set in the second set",
    quantity="images shown whose two highest softmax outputs are the classes of their two nearest centroids",
    paper_value="both images",
    run_value=f"{int(mirrors.sum())} of {len(mirrors)}",
    criterion=holds_in(int(mirrors.sum()), len(mirrors)),
    section="Ambiguous examples: softmax outputs and distances to the centroids (Figures 3 and 4)",
)

# %% tags=["remove-cell"]
R.check("mlm-misclustered", below(n_misclustered, 0.01 * n_correct), c=n_correct, finding=f_misclustered)
R.check("mlm-mirrors", at_least(len(mirrors), 1), k=int(mirrors.sum()), finding=f_mirror)

# %% [markdown]
# <span claim="mlm-misclustered">{test.a:,.0f} of {c:,} correctly classified training images lie nearest to
# another class's centroid: fewer than 1%, {finding:but they exist, as the paper's two 6s of Figures 3 and
# 4 do|but they exist, as the paper's two 6s of Figures 3 and 4 do|and none exists, unlike the paper's two
# 6s of Figures 3 and 4|a comparison this run cannot make}.</span> <span claim="mlm-mirrors">For {k} of the
# {test.a:.0f} images shown, the two highest softmax outputs are the classes of the two nearest centroids:
# {finding:the inverse relation the paper notes between its Figures 3 and 4|the inverse relation the paper
# notes between its Figures 3 and 4, but not for every image|not the inverse relation the paper notes between
# its Figures 3 and 4|a comparison this run cannot make}.</span>

# %% [markdown]
# ```{glue:figure} mlm-paper-fig3-4
# :name: fig-mlm-paper-fig3-4
#
# **Two training images: softmax and centroid distances.** Two correctly classified training images chosen as described above. Top: softmax outputs; bottom: distance to every centroid.
# ```

# %% [markdown]
# ## Twelve perturbations at ten levels
#
# The perturbations follow {cite:t}`hendrycks2019corruptions`, rewritten for small grayscale images
# (`shifteval.corruptions`; each one's formula is in its docstring; lengths are in pixels of a 28×28
# image and scaled to the image size). {numref}`fig-mlm-perturbations` shows one test image under every
# perturbation at levels 1, 4, 7 and 10 — the very images, noise draw included, whose softmax outputs
# enter the results.

# %% tags=["remove-input"]
s44 = ["97.61", "48.83", "98.52", "36.32", "0.99", "0.50"]
R.number("mlm-s44-cite", R.cite("sikar2024mlm", "§4.4", numbers=s44), "{}")

# %%
R.figure("mlm-perturbations", viz.mlm.perturbation_grid(kept, names, [1, 4, 7, 10], x_test[digit]))

# %% [markdown]
# ```{glue:figure} mlm-perturbations
# :name: fig-mlm-perturbations
#
# **Perturbations.** One test image under each of the twelve perturbations at levels 1, 4, 7 and 10 (left column: clean).
# ```
#
# ## Accuracy under perturbation (Figures 5 and 7)
#
# {numref}`fig-mlm-paper-fig5-7`, top: the evaluated model's accuracy on the test images against level for each
# perturbation, their mean (black) and the calibration target (dashed). Bottom: the same numbers as a
# heatmap. The paper: mean 97.61% at level 1 to 48.83% at level 10, maximum 98.52%, minimum 36.32%;
# brightness from 0.99 to 0.50; brightness, contrast and fog the most benign, pixelation, shot noise and
# zoom blur the harshest ({glue:md}`mlm-s44-cite`).

# %%
R.figure("mlm-paper-fig5-7", viz.mlm.fig5_7_accuracy(accuracy, accuracy_by_level, acc_clean, cal["targets"]))
deviation = float(np.abs(accuracy_by_level.to_numpy() - cal["targets"]).max())
linearity = float(np.corrcoef(levels, accuracy_by_level)[0, 1])
rises = [n for n in names if np.any(np.diff(accuracy.loc[n].to_numpy()) > 0)]
a1, a10 = float(accuracy_by_level.iloc[0]), float(accuracy_by_level.iloc[-1])

# %%
# §4.4's statements on the paper's scale (accuracy times 98.46% over our clean accuracy)
scale = 0.9846 / acc_clean
st = mlm.paper_statements(accuracy, acc_clean)
(lo, lo_name, lo_level), (hi, hi_name, hi_level) = st["min"], st["max"]
r10, o10, harsh, rank = st["resilient_10"], st["others_10"], st["harsh_10"], st["rank_10"]
b1, b10 = st["brightness"] or (np.nan, np.nan)
order = sorted(rank, key=rank.get)  # the perturbations by accuracy at level 10, the most accurate first
full = set(order) == set(corruptions.CORRUPTIONS)  # all twelve run: the paper's rankings can be compared
TOL = 0.05  # how close to §4.4's accuracies counts as matching them: 5 points on the paper's scale

# %%
# §3.2 and §4.4: the levels were set so that accuracy falls linearly (a correlation of −1)
f_linear = R.finding(
    "accuracy-falls-linearly",
    paper="sikar2024mlm",
    where="§3.2, §4.4",
    statement="such that increased perturbation levels on the testing dataset cause network predictive accuracies to decrease linearly",
    quantity="correlation of the mean accuracy over the perturbations with the level (−1: a straight fall)",
    paper_value=-1.0,
    run_value=linearity,
    criterion=matches(linearity, -1.0, tol=0.02),
    section="Accuracy under perturbation (Figures 5 and 7)",
)

# %%
# §4.4: the mean over the perturbations at level 10; partly when it falls from level 1's 97.61% but not as far
f_mean10 = R.finding(
    "mean-accuracy-at-level-10",
    paper="sikar2024mlm",
    where="§4.4",
    statement="from average 97.61% (level 1) to 48.83% (level 10)",
    quantity="mean accuracy over the perturbations at level 10, on the paper's scale, %",
    paper_value=48.83,
    run_value=100 * st["mean"][1],
    criterion=matches(100 * st["mean"][1], 48.83, tol=100 * TOL, reference=97.61),
    section="Accuracy under perturbation (Figures 5 and 7)",
)

# %%
# §4.4: the lowest accuracy of any perturbation at any level
f_min = R.finding(
    "minimum-accuracy",
    paper="sikar2024mlm",
    where="§4.4",
    statement="the network predictive accuracy decreases from 98.52% maximum to 36.32% minimum",
    quantity="lowest accuracy of any perturbation at any level, on the paper's scale, %",
    paper_value=36.32,
    run_value=100 * lo,
    criterion=matches(100 * lo, 36.32, tol=100 * TOL, reference=98.52),
    section="Accuracy under perturbation (Figures 5 and 7)",
)

# %%
# §4.4: brightness at level 10; partly when it falls from the paper's 0.99 but not to within 5 points of 0.50
f_bright = R.finding(
    "brightness-at-level-10",
    paper="sikar2024mlm",
    where="§4.4",
    statement="the accuracy under brightness perturbation drops from 0.99 at intensity 1 to 0.50 at intensity 10",
    quantity="brightness's accuracy at level 10, on the paper's scale",
    paper_value=0.50,
    run_value=b10,
    criterion=matches(b10, 0.50, tol=TOL, reference=0.99)
    if "brightness" in names
    else not_testable("brightness is not among the perturbations run"),
    section="Accuracy under perturbation (Figures 5 and 7)",
)

# %%
# §4.4: every perturbation ends below where it starts
ends_below = int((accuracy[10] < accuracy[1]).sum())
f_all = R.finding(
    "accuracy-decreases-for-all",
    paper="sikar2024mlm",
    where="§4.4",
    statement="As the perturbation intensity increases, the accuracy decreases for all perturbation types",
    quantity="perturbations whose accuracy at level 10 is below their accuracy at level 1",
    paper_value="all",
    run_value=f"{ends_below} of {len(names)}",
    criterion=holds_in(ends_below, len(names)),
    section="Accuracy under perturbation (Figures 5 and 7)",
)

# %%
# §4.4: snow and impulse noise gain accuracy from level 1 to level 2
pair = {"snow", "impulse_noise"}
rise2 = [n for n in sorted(pair & set(names)) if accuracy.loc[n, 2] > accuracy.loc[n, 1]]
f_rise = R.finding(
    "snow-impulse-noise-rise-at-level-2",
    paper="sikar2024mlm",
    where="§4.4",
    statement="certain perturbations, such as snow and impulse noise, show a slight increase in accuracy at lower intensities (e.g., intensity 2) compared to the baseline (intensity 1)",
    quantity="of snow and impulse noise, those more accurate at level 2 than at level 1",
    paper_value="both",
    run_value=", ".join(rise2).replace("_", " ") or "none",
    criterion=holds_in(len(rise2), 2)
    if pair <= set(names)
    else not_testable("snow and impulse noise were not both run"),
    section="Accuracy under perturbation (Figures 5 and 7)",
)

# %%
# §4.4: the three most resilient perturbations, read as the three most accurate at level 10
top3, bottom3 = order[:3], order[-3:]
f_resilient = R.finding(
    "most-resilient-perturbations",
    paper="sikar2024mlm",
    where="§4.4",
    statement="The model appears to be most resilient to perturbations like brightness, contrast, and fog, maintaining relatively high accuracy even at higher intensities",
    quantity="the three perturbations most accurate at level 10",
    paper_value=", ".join(mlm.RESILIENT),
    run_value=", ".join(top3).replace("_", " "),
    criterion=same_members(top3, mlm.RESILIENT)
    if full
    else not_testable("not all twelve perturbations were run"),
    section="Accuracy under perturbation (Figures 5 and 7)",
)

# %%
# §4.4: the three harshest perturbations, read as the three least accurate at level 10
f_harsh = R.finding(
    "harshest-perturbations",
    paper="sikar2024mlm",
    where="§4.4",
    statement="perturbations such as pixelation, shot noise, and zoom blur have a more substantial negative impact on accuracy, with values dropping below 0.6 at higher intensities",
    quantity="the three perturbations least accurate at level 10",
    paper_value=", ".join(mlm.HARSH).replace("_", " "),
    run_value=", ".join(bottom3).replace("_", " "),
    criterion=same_members(bottom3, mlm.HARSH)
    if full
    else not_testable("not all twelve perturbations were run"),
    section="Accuracy under perturbation (Figures 5 and 7)",
)

# %% tags=["remove-cell"]
R.check(
    "mlm-mean-profile",
    below(a10, a1) & (below(deviation, 0.05) if deviation < 0.05 else above(deviation, 0.05)),
    dev=100 * deviation,
)
R.check("mlm-linear", below(linearity, -0.98), finding=f_linear)

# %% [markdown]
# <span claim="mlm-mean-profile">Mean accuracy over the perturbations falls from {test[0].b:.2%} at level 1
# to {test[0].a:.2%} at level 10; its largest distance from the calibration targets at any level is
# {dev:.1f} points, {test[1]} 5.</span> <span claim="mlm-linear">Its correlation with the level is
# {test.a:.3f}, below −0.98: {finding:a nearly straight fall, as the paper set its levels to give (§3.2)|a
# fall, but less straight than the paper set its levels to give (§3.2)|no fall, unlike the paper's levels
# (§3.2)|a comparison this run cannot make}.</span>

# %% tags=["remove-cell"]
names_of = {"lo_name": lo_name.replace("_", " "), "hi_name": hi_name.replace("_", " ")}
clean_max = "; the maximum is the clean accuracy itself" if abs(hi - 0.9846) < 1e-9 else ""
ends = dict(
    c=acc_clean, lo=lo, lo_level=lo_level, hi_level=hi_level, m10=st["mean"][1], max_is_clean=clean_max
)
R.check("mlm-extremes", about(hi, 0.9852, tol=TOL), finding=f_min, f2=f_mean10, **ends, **names_of)
# a sentence about perturbations that were not all run is left out of the page
if "brightness" in names:
    R.check("mlm-brightness", about(b1, 0.99, tol=TOL), b10=b10, finding=f_bright)
else:
    R.omit("mlm-brightness")

# %% tags=["remove-cell"]
t10 = mlm.paper_profile("snow")[1]  # the level-10 target of the eight the paper says nothing about
# each perturbation's departure from its own level-10 target (paper's scale), and the standard error of
# a difference between the means of three and of eight of them that departures of this spread give
cal_targets = cal["targets_by_perturbation"]
departure = np.array([accuracy.loc[n, 10] - cal_targets[n][-1] for n in names]) * scale
se_groups = departure.std(ddof=1) * np.sqrt(1 / 3 + 1 / 8) if len(names) > 1 else np.nan
resilient = dict(room=t10, gap_t=100 * (0.50 - t10), r10=r10, o10=o10, sd=100 * departure.std(ddof=1))
ranked = dict(top3=", ".join(top3).replace("_", " "), k=len(set(top3) & set(mlm.RESILIENT)), n=len(rank))

# %% tags=["remove-cell"]
if full:
    diff = 100 * abs(r10 - o10)
    R.check("mlm-resilient", below(diff, 100 * se_groups), finding=f_resilient, **resilient, **ranked, **rank)
else:
    R.omit("mlm-resilient")
if len(harsh) == len(mlm.HARSH) and full:
    low3 = dict(bottom3=", ".join(bottom3).replace("_", " "), k=len(set(bottom3) & set(mlm.HARSH)))
    ranks = ", ".join(str(rank[n]) for n in mlm.HARSH)
    R.check("mlm-harsh", below(max(harsh.values()), 0.6), ranks=ranks, finding=f_harsh, **low3, **harsh)
else:
    R.omit("mlm-harsh")

# %% [markdown]
# <span claim="mlm-extremes">On the paper's scale (accuracy times 98.46% over our clean {c:.2%}) accuracy
# ranges from {lo:.2%} ({lo_name}, level {lo_level}) to {test.a:.2%} ({hi_name}, level {hi_level}),
# the maximum within 5 points of the paper's 98.52% and the minimum {finding:within 5 points of the paper's
# 36.32%|more than 5 points from the paper's 36.32%|not below the paper's maximum at all, unlike its 36.32%|a
# number this run cannot compare}; the mean over the perturbations ends at {m10:.2%} at level 10,
# {f2:within 5 points of the paper's 48.83%|more than 5 points from the paper's 48.83%|not below the
# paper's level-1 97.61% at all, unlike its 48.83%|a number this run cannot compare}. Both ends were
# calibration targets{max_is_clean}.</span> <span claim="mlm-brightness">On that scale brightness falls
# from {test.a:.2%} at level 1, within 5 points of the paper's 0.99, to {b10:.2%} at level 10,
# {finding:within 5 points of the paper's 0.50|more than 5 points from the paper's 0.50|not below the
# paper's 0.99 at all, unlike its 0.50|a number this run cannot compare}.</span>
#
# <span claim="mlm-resilient">At level 10 the calibration all but ties the three perturbations the paper
# calls most resilient with the eight it says nothing about: the paper's numbers alone leave the other
# eleven 48.72% on average at level 10, against brightness's 0.50, and our targets leave those eight
# {room:.2%}, against 50% for the three, {gap_t:.2f} points apart. What separates perturbations at level
# 10 is how the evaluated model departs from its targets there: by {sd:.1f} points (standard deviation
# over the {n}), which leaves a difference between the means of three and of eight perturbations a standard
# error of {test.b:.1f} points. Brightness, contrast and fog average {r10:.2%} at level 10 and those eight
# {o10:.2%}: {test.a:.2f} points apart, {test:less than} that standard error, so the run puts neither
# group above the other. They rank brightness {brightness}, contrast {contrast} and fog {fog} of {n}
# (1 the most accurate); the three most accurate at level 10 are {top3}, {k} of them among the paper's
# three: {finding:the paper's "most resilient" three hold here|the paper's "most resilient" three hold here
# in part|the paper's "most resilient" three do not hold here|a comparison this run cannot make}.</span>
# <span claim="mlm-harsh">Pixelation, shot noise and zoom blur end at {pixelation:.2f}, {shot_noise:.2f}
# and {zoom_blur:.2f} (ranks {ranks}), {test} the paper's 0.6, as every perturbation must be with every
# level-10 target at 50% or less; pixelation's lower target, the paper's minimum, is our choice. The three
# least accurate at level 10 are {bottom3}, {k} of them among the paper's three: {finding:the paper's
# harshest three hold here|the paper's harshest three hold here in part|the paper's harshest three do not
# hold here|a comparison this run cannot make}.</span>

# %% tags=["remove-cell"]
rising = f" ({', '.join(r.replace('_', ' ') for r in rises)})" if rises else ""
says_all = f_all.verdict == "reproduced"  # the words the verdict chooses: every curve ends below its start
R.check(
    "mlm-rises",
    equal(ends_below == len(names), says_all),
    n=len(rises),
    t=len(names),
    rising=rising,
    k=ends_below,
    finding=f_rise,
    f_all=f_all,
)

# %% [markdown]
# <span claim="mlm-rises">{n} of the {t} curves rise somewhere from one level to the next{rising},
# and {k} end below where they start: {f_all:the accuracy decreases for every perturbation, as in the
# paper|the accuracy decreases for most perturbations but not all, where the paper finds it for every
# one|the accuracy does not decrease for most perturbations, unlike the paper|a comparison this run cannot
# make}. Snow and impulse noise {finding:both gain accuracy from level 1 to level 2, as in the paper|gain
# accuracy from level 1 to level 2 in part, where the paper saw both gain|do not both gain accuracy from
# level 1 to level 2, as the paper saw them do|were not both run}.</span>

# %% [markdown]
# ```{glue:figure} mlm-paper-fig5-7
# :name: fig-mlm-paper-fig5-7
#
# **Accuracy under perturbation.** Top: the evaluated model's accuracy against perturbation level for each perturbation, their mean (black) and the calibration target (dashed); dotted: clean accuracy. Bottom: the same accuracies as a heatmap.
# ```
#
# ## One digit through every level (Figure 6)
#
# {numref}`fig-mlm-paper-fig6`, top: one test digit under increasing levels of one perturbation
# (`figure_perturbation`); middle: the softmax output of exactly the image shown above it; bottom, as in the
# paper, the digit's softmax output at each level averaged over all perturbations.

# %%
fig = viz.mlm.fig6_one_digit(
    x_test[digit],
    p_test[digit],
    kept,
    probs,
    figure_perturbation,
    digit,
    0,
    y_test[digit],
    average_over=names,
)
R.figure("mlm-paper-fig6", fig)
averaged = np.array([np.mean([probs[n, lvl][digit] for n in names], axis=0) for lvl in levels])
top_is_true = int((averaged.argmax(1) == y_test[digit]).sum())

# %%
# Figure 6: the averaged softmax output puts the digit's true class highest at every level
f_fig6 = R.finding(
    "true-class-highest-at-every-level",
    paper="sikar2024mlm",
    where="Figure 6, §4.4",
    statement="We note that at all levels from 1 to 10, the highest prediction is digit class 5",
    quantity="levels at which the digit's softmax output averaged over the perturbations is highest for its true class (our digit: the first correctly classified test image)",
    paper_value="10 of 10 (digit 5)",
    run_value=f"{top_is_true} of {len(levels)} (digit {int(y_test[digit])})",
    criterion=holds_in(top_is_true, len(levels)),
    section="One digit through every level (Figure 6)",
)

# %% tags=["remove-cell"]
R.check("mlm-fig6", at_least(top_is_true, 1), y=int(y_test[digit]), L=len(levels), finding=f_fig6)

# %% [markdown]
# <span claim="mlm-fig6">Averaged over the perturbations, this digit's highest output is its true class {y}
# at {test.a:.0f} of the {L} levels: {finding:at every level, as for the paper's 5 in its Figure 6|at most
# levels but not all, where the paper's 5 of its Figure 6 stays on top at every level|at no more than half
# the levels, unlike the paper's 5 in its Figure 6|a comparison this run cannot make}.</span>

# %% [markdown]
# ```{glue:figure} mlm-paper-fig6
# :name: fig-mlm-paper-fig6
#
# **One digit through every level.** One test image under increasing levels of one perturbation (top), its softmax output at each level (middle; red: the true class), and its softmax output at each level averaged over every perturbation (bottom, the paper's bottom row).
# ```

# %% [markdown]
# ## The MLM across levels (Eqs. 5–8)
#
# Pooling the perturbations at each level gives one perturbed test set per level and one MLM per level.
# {numref}`fig-mlm-levels`, left: the mean MLM $\bar M$ over the ten levels; right: its standard deviation
# $s$. {numref}`tbl-mlm-top` lists the most likely confusions: high mean and low spread means a
# confusion that stays likely however strong the shift.

# %%
per_level = [mlm.pooled(probs, y_test, names, [lvl]) for lvl in levels]
mats, M_mean, M_std = mlm.level_matrices([p for p, _ in per_level], [y for _, y in per_level], centroids)
fig = viz.mlm.class_matrices(
    [
        (M_mean, "mean MLM over levels 1–10 (Eq. 7)", ".2f", "Reds", "likely confused with"),
        (M_std, "standard deviation over levels (Eq. 8)", ".3f", "Greys", "likely confused with"),
    ]
)
R.figure("mlm-levels", fig)
top = mlm.top_confusions(M_mean, 10, std=M_std)
R.table("mlm-top", top.style.format({"likelihood": "{:.3f}", "std": "{:.4f}"}).hide(axis="index"))
R.record({"mlm_mean": M_mean.tolist(), "mlm_std": M_std.tolist()})
R.record({"top_confusions": top.to_dict(orient="records")})

# %% [markdown]
# ```{glue:figure} mlm-levels
# :name: fig-mlm-levels
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
#
# The paper proposes these pairs as the ones "more prone to misclassification" (§3.4) without testing it;
# the perturbed test sets can: at each level, the share of test images of a pair's true class predicted as
# its other class, averaged over the ten pairs of {numref}`tbl-mlm-top` and over the other 80.

# %%
# §3.4: the pairs of highest mean likelihood (Eq. 7) are confused more often than the others, level by level
rates = [mlm.confusion_rates(y, p.argmax(1), K) for p, y in per_level]  # observed, one matrix per level
likeliest = mlm.likeliest_pairs_rates(M_mean, rates, n=len(top))
k_more = int((likeliest.likeliest > likeliest.others).sum())
f_pairs = R.finding(
    "likeliest-pairs-confused-more",
    paper="sikar2024mlm",
    where="§3.4",
    statement="If these pairs consistently have high misclassification likelihoods across different perturbation levels, it suggests that they are more prone to misclassification compared to other digit pairs",
    quantity="levels at which the ten pairs of highest mean MLM entry are confused more often than the other pairs",
    paper_value="every level (proposed, not tested)",
    run_value=f"{k_more} of {len(likeliest)}",
    criterion=holds_in(k_more, len(likeliest)),
    section="The MLM across levels (Eqs. 5–8)",
)

# %% tags=["remove-cell"]
R.record({"likeliest_pairs_rates": likeliest.to_dict(orient="index")})
at = {"l1": likeliest.iloc[0], "l10": likeliest.iloc[-1]}  # the first and the last level
R.check(
    "mlm-likeliest-pairs",
    above(at["l10"].likeliest, at["l10"].others),
    k=k_more,
    L=len(likeliest),
    a1=at["l1"].likeliest,
    b1=at["l1"].others,
    finding=f_pairs,
)

# %% [markdown]
# <span claim="mlm-likeliest-pairs">At {k} of the {L} levels the ten likeliest pairs are
# confused more often than the others, on average {a1:.2%} against {b1:.2%} at level 1 and
# {test.a:.2%} against {test.b:.2%} at level 10: {finding:the pairs the MLM ranks likeliest are the more
# prone to misclassification at every level, as the paper proposes|the pairs the MLM ranks likeliest are the
# more prone to misclassification at most levels but not all|the pairs the MLM ranks likeliest are not the
# more prone to misclassification at most levels, unlike the paper's proposal|a comparison this run cannot
# make}.</span>

# %% [markdown]
# ## Beyond the paper: does the clean MLM predict the confusions that perturbations cause?
#
# The MLM is built from distances, not from errors. A fair test of its use for risk assessment: rank the
# 90 off-diagonal class pairs by the clean-test MLM, and compare with the *observed* confusion rates
# $R^{(\ell)}_{ij}$ (share of class-$i$ test images predicted as $j$) on the perturbed data at each level,
# by Spearman's rank correlation ({numref}`fig-mlm-clean-vs-perturbed`, {numref}`tbl-mlm-rank`). As a yardstick, the
# clean confusion rates themselves are ranked the same way.

# %%
rates_clean = mlm.confusion_rates(y_test, p_test.argmax(1), K)
rank = pd.DataFrame(
    {
        "MLM (clean) vs observed": [mlm.rank_agreement(M_clean, r)[0] for r in rates],
        "MLM at the level vs observed": [
            mlm.rank_agreement(m, r)[0] for m, r in zip(mats, rates, strict=False)
        ],
        "clean confusion rates vs observed": [mlm.rank_agreement(rates_clean, r)[0] for r in rates],
    },
    index=pd.Index(levels, name="level"),
)
R.figure("mlm-clean-vs-perturbed", viz.mlm.rank_agreement(rank, M_clean, rates[4], 5))
R.table("mlm-rank", rank.style.format("{:.3f}"))

# %%
rho = rank.mean()  # each predictor's ρ averaged over the levels
# the MLM beyond the counts: its rank correlation with the observed confusions, the clean counts held fixed
partial = pd.DataFrame(
    [mlm.partial_rank_agreement(M_clean, rates_clean, r) for r in rates], columns=["rho", "p"]
)
rho_lo, rho_hi, rho_mean = partial["rho"].min(), partial["rho"].max(), partial["rho"].mean()
p_min = float(partial["p"].min())  # the smallest p-value, each level tested alone
R.record({"rank_correlation": {col: rank[col].tolist() for col in rank.columns}})
R.record({"mlm_partial_rank": partial.set_axis(levels).to_dict(orient="index")})

# %%
# §3.3d: each level's own MLM (Eq. 6) ranks that level's observed confusions: ρ > 0 and p < 0.05
own = [mlm.rank_agreement(m, r) for m, r in zip(mats, rates, strict=True)]
k_own = sum(r > 0 and p < 0.05 for r, p in own)
f_own = R.finding(
    "mlm-ranks-observed-confusions",
    paper="sikar2024mlm",
    where="§3.3, §3.4",
    statement="The resulting matrix contains the misclassification likelihoods between each pair of digit classes",
    quantity="levels at which the level's own MLM ranks its observed confusions (Spearman ρ > 0, p < 0.05)",
    paper_value="every level",
    run_value=f"{k_own} of {len(own)}",
    criterion=holds_in(k_own, len(own)),
    section="Beyond the paper: does the clean MLM predict the confusions that perturbations cause?",
)

# %%
# §4.5: "information added by the MLM": does the clean MLM rank the observed confusions beyond the counts?
k_added = int(((partial["rho"] > 0) & (partial["p"] < 0.05)).sum())
f_added = R.finding(
    "mlm-adds-to-the-confusion-matrix",
    paper="sikar2024mlm",
    where="§4.5",
    statement="we can notice some information added by the MLM that may help inform risk assessment",
    quantity="levels at which the clean MLM's partial rank correlation with the observed confusions, the clean confusion rates held fixed, is positive at p < 0.05",
    paper_value="information added (not tested)",
    run_value=f"{k_added} of {len(partial)}",
    criterion=holds_in(k_added, len(partial)),
    section="Beyond the paper: does the clean MLM predict the confusions that perturbations cause?",
)

# %% tags=["remove-cell"]
R.check("mlm-own-level", at_least(k_own, 1), L=len(own), p_max=max(p for _, p in own), finding=f_own)

# %% tags=["remove-cell"]
r_clean, r_own = float(rho.iloc[0]), float(rho.iloc[1])
R.check("mlm-rank-per-level", above(r_clean, r_own) if r_clean > r_own else below(r_clean, r_own))
R.check(
    "mlm-rank-vs-counts",
    every(above(c, m) for c, m in zip(rank.iloc[:, 2], rank.iloc[:, 0], strict=True)),
    a=float(rho.iloc[2]),
    b=float(rho.iloc[0]),
)

# %% tags=["remove-cell"]
R.check(
    "mlm-partial-beyond-counts",
    at_least(p_min, 0.05),
    lo=rho_lo,
    hi=rho_hi,
    m=rho_mean,
    n=len(partial),
    finding=f_added,
)

# %% [markdown]
# <span claim="mlm-rank-per-level">Averaged over the levels, the clean MLM's agreement with the observed
# confusions, ρ = {test.a:.2f}, is {test} that of the MLM computed from each level's own perturbed outputs
# (ρ = {test.b:.2f}).</span> <span claim="mlm-own-level">That per-level MLM ranks its own level's observed
# confusions with a positive ρ at the 5% level at {test.a:.0f} of the {L} levels (largest p-value
# {p_max:.3f}): {finding:each level's MLM ranks that level's confusions, as its definition says (§3.3)|most
# levels' MLMs rank their confusions, but not every one|most levels' MLMs do not rank their confusions,
# unlike what their definition says (§3.3)|a comparison this run cannot make}.</span>
# <span claim="mlm-rank-vs-counts">Counting the clean errors reaches ρ = {a:.2f}
# on average, against the clean MLM's {b:.2f}, and ranks the observed confusions better at every
# level.</span> <span claim="mlm-partial-beyond-counts">Does the MLM add anything to the counts? Its partial
# rank correlation with the observed confusions, the clean confusion rates held fixed, lies between {lo:.2f}
# and {hi:.2f} over the levels (mean {m:.2f}) and is significant at the 5% level at none of the {n}
# (smallest p-value {test.a:.2f}, each level tested alone): whatever the clean MLM adds beyond the clean
# confusion matrix is small, {finding:and it shows, as the paper's "information added by the MLM" (§4.5)
# would have it|and it shows at some levels, where the paper sees "information added by the MLM" (§4.5)|too
# small to show the "information added by the MLM" the paper sees (§4.5) as a better ranking of the
# perturbed confusions|a comparison this run cannot make}.</span>

# %% [markdown]
# ```{glue:figure} mlm-clean-vs-perturbed
# :name: fig-mlm-clean-vs-perturbed
#
# **Does the clean MLM predict perturbed confusions?** Spearman correlation, per perturbation level,
# between the 90 off-diagonal entries of the observed confusion rates and three predictors: the clean
# MLM, the MLM computed from that level's perturbed outputs, and the clean confusion rates.
# ```
#
# ```{glue:figure} mlm-rank
# :name: tbl-mlm-rank
#
# **Rank agreement per level** (Spearman's ρ) of the three predictors with the observed confusion rates.
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
# to several centroids, and the MLM's ranking reflects which classes look alike to a weak model. Which
# way the ρ values move is an outcome of the run, not something to know in advance: compare the table
# of your run with this page's — the MLM describes a particular model, not the data.
# ````
#
# ````{exercise}
# :label: mlm-ex-mnist
# The severities are calibrated for a model like the evaluated one, on images like the test images.
# Re-run with `-p n_calibration=200 -p calibration_points=6`: what does a coarser calibration fix, and
# what does it leave free?
# ````
#
# ````{solution} mlm-ex-mnist
# :class: dropdown
# By design, the calibration model's accuracy on the calibration images still crosses each target —
# at a strength interpolated on a coarser grid, so less precisely, and more levels may be clamped. The
# evaluated model on the test images is not constrained at all: a noisier calibration shows up as a
# larger gap between the dashed target and the black mean in Figure 5, and the per-perturbation spread
# is whatever the perturbations do to this model.
# ````

# %% tags=["remove-cell"]
R.table("mlm-findings", R.findings_table())
# the findings by verdict, for the closing sentence
by_verdict = {v: [f.id for f in R.findings if f.verdict == v] for v in VERDICTS}
named = {v.replace(" ", "_"): ", ".join(ids) or "none" for v, ids in by_verdict.items()}
n_by = {f"k_{v.replace(' ', '_')}": len(ids) for v, ids in by_verdict.items()}
R.check("mlm-verdicts", at_least(len(R.findings), 8), **named, **n_by)

# %% [markdown]
# ## What this chapter reproduces
#
# <span claim="mlm-verdicts">This chapter tests {test.a:.0f} of Sikar et al.'s results: {k_reproduced} hold here as stated, {k_partly} hold in part ({partly}), {k_not_reproduced} do not hold ({not_reproduced}) and {k_not_testable} cannot be tested here ({not_testable}).</span>
#
# ```{glue:figure} mlm-findings
# :name: tbl-mlm-findings
#
# **What this chapter reproduces.** Each result of the paper this chapter tests, where the paper states
# it, the values compared, and the verdict its criterion gives (the rules: {doc}`../reproduction`).
# ```
