# %% [raw]
# # ASSIGNMENT CONFIG
# name: ood-autoeval
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# generate: true
# files:
#   - ood-autoeval-data.npz

# %% [markdown]
# # Lab 5: does removing foreign images make a label-free accuracy estimate better?
#
# AutoEval (Deng and Zheng, 2021) estimates a classifier's accuracy on an unlabeled test set D by regressing
# accuracy on a *representation* h(D) of the set's features, learnt on many labeled *meta-sets*. Zhu et al.
# (2023) observe that it breaks when D holds images of no class the classifier knows (out-of-distribution,
# OOD): those images are always misclassified, yet they pull the representation somewhere the regression has
# never seen. Their remedy (§3.4–3.5): score every image by its *energy*, drop the images whose energy lies
# above a threshold τ read off the training images, estimate the accuracy of what is left, and scale it by the
# share that is left. They report that this lowers the error from 4.61 to 2.91 accuracy points (§4.4).
#
# In this lab you build the method from its parts on the chapter's world — the energy score, the threshold,
# the AUROC, the Fréchet distance and representation, a regression fitted on meta-sets — and measure whether
# removing the foreign images helps on the chapter's own test sets, and what the threshold costs.
#
# **The data** (`ood-autoeval-data.npz`, from the chapter's default run). The ID source is the world's
# *MatchedFrequency* replication (2,000 digits), as Zhu et al.'s ID data is CIFAR-10.1 (§4.1). The OOD images
# come from three foreign sources (natural-image patches, rendered letters, textures). Energies come from
# the chapter's *detector* (a copy of the classifier fine-tuned with outlier exposure, §4.2), so you get its
# logits; representations come from the *classifier*, so you get its penultimate features (64 per image).
# The regression's training data are the chapter's 200 meta-sets (their representations and the
# classifier's accuracy on each); 40 more meta-sets serve for validation. The chapter's 9 test sets of this
# ID source (each 900 ID + 100 OOD images, 10% OOD as in the paper's Table 1) are given as rows of the arrays.
#
# Run the cells in order. `grader.check("q1")` runs a question's public tests; more tests run when the lab is
# graded. Questions marked *graded by hand* are read by your teacher.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

data = np.load("ood-autoeval-data.npz", allow_pickle=False)
train_logits = data["train_logits"].astype(float)  # (4197, 10): the detector's logits, training images
id_logits = data["id_logits"].astype(float)  # (2000, 10): the detector's logits on the ID source's images
id_features = data["id_features"].astype(float)  # (2000, 64): the classifier's features on the same images
id_correct = data["id_correct"]  # (2000,): True where the classifier gets the ID image right
ood_logits = data["ood_logits"].astype(float)  # (820, 10): the detector's logits on the foreign images
ood_features = data["ood_features"].astype(float)  # (820, 64): the classifier's features on them
ood_sources = data["ood_sources"]  # the three OOD sources' names
ood_source = data["ood_source"]  # (820,): each foreign image's source, an index into ood_sources
train_mean, train_cov = data["train_mean"], data["train_cov"]  # (64,), (64, 64): training features' mean, cov
meta_reps, meta_acc = data["meta_reps"].astype(float), data["meta_acc"]  # (200, 129), (200,): h and accuracy
val_reps, val_acc = data["val_reps"].astype(float), data["val_acc"]  # (40, 129), (40,): validation meta-sets
set_id_index = data["set_id_index"]  # (9, 900): each test set's ID images, as rows of id_logits / id_features
set_ood_index = data["set_ood_index"]  # (9, 100): each test set's foreign images, as rows of ood_logits / ...
set_ood = data["set_ood"]  # (9,): the OOD source each test set mixes in, an index into ood_sources
chapter_plain, chapter_ood = data["chapter_plain"], data["chapter_ood"]  # (9,): the chapter's MLP estimates
percentile = float(data["percentile"])  # 99.5: the threshold's percentile (§3.5)
percentile_grid = data["percentile_grid"]  # the percentiles of the threshold sweep (Question 11)
print(f"ID source {data['id_source']}: {len(id_logits)} images, classifier accuracy {id_correct.mean():.1%}")
print(f"OOD sources: {ood_sources.tolist()}; {len(set_id_index)} test sets; {len(meta_acc)} meta-sets")

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 1 (1 point): the energy score (§3.4).** Write `energy(logits, T=1.0)`: for an array of logits
# (one row per image, one column per class), the energy of each image,
# $E(x) = -T \log \sum_k e^{f_k(x)/T}$. Compute it stably: subtract each row's largest value of $f_k/T$
# before exponentiating and add it back after the log (otherwise a logit of 1000 overflows). Then set
# `e_train`, `e_id` and `e_ood` to the energies (T = 1) of the training, ID and foreign images.

# %% [raw]
# # BEGIN SOLUTION


# %%
def energy(logits, T=1.0):
    # BEGIN SOLUTION
    z = np.asarray(logits, dtype=float) / T
    top = z.max(axis=1)
    return -T * (top + np.log(np.exp(z - top[:, None]).sum(axis=1)))
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
e_train = energy(train_logits)  # SOLUTION
e_id = energy(id_logits)  # SOLUTION
e_ood = energy(ood_logits)  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"mean energy: training {np.mean(e_train):.2f}, ID {np.mean(e_id):.2f}, foreign {np.mean(e_ood):.2f}")

# %% [raw]
# # BEGIN TESTS

# %%
_got = energy(np.array([[0.0, 0.0], [1000.0, 1000.0]]))
assert np.shape(_got) == (2,), (
    f"energy should give one number per row (shape (2,)); got shape {np.shape(_got)}"
)
assert np.all(np.isfinite(_got)), (
    f"logits of 1000 overflow np.exp: subtract each row's maximum first; got {_got}"
)
assert np.allclose(_got, [-np.log(2), -1000 - np.log(2)]), (
    f"logits [0, 0] give E = -log(e^0 + e^0) = -log 2 = -0.693, and [1000, 1000] give -1000 - log 2; got {_got}"
)
_got = energy(np.array([[2.0, 0.0]]), T=2.0)
assert np.allclose(_got, -2 * np.log(np.e + 1)), (
    f"with T = 2, logits [2, 0] give E = -2 log(e^(2/2) + e^(0/2)) = {-2 * np.log(np.e + 1):.4f}; got {_got}"
)
for _name, _value, _rows in (("e_train", e_train, train_logits), ("e_id", e_id, id_logits),
                             ("e_ood", e_ood, ood_logits)):  # fmt: skip
    assert np.shape(_value) == (len(_rows),), (
        f"{_name} should hold one energy per image, shape ({len(_rows)},)"
    )

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _energy(z, t):
    z = np.asarray(z, float) / t
    m = z.max(1, keepdims=True)
    return -t * (m[:, 0] + np.log(np.exp(z - m).sum(1)))


_rng = np.random.default_rng(1)
_z = _rng.normal(0, 5, (30, 4))
assert np.allclose(energy(_z, 0.5), _energy(_z, 0.5)) and np.allclose(energy(_z), _energy(_z, 1.0))
_d = np.load("ood-autoeval-data.npz", allow_pickle=False)
assert np.allclose(e_train, _energy(_d["train_logits"], 1.0), atol=1e-6)
assert np.allclose(e_id, _energy(_d["id_logits"], 1.0), atol=1e-6)
assert np.allclose(e_ood, _energy(_d["ood_logits"], 1.0), atol=1e-6)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q2
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 2 (1 point): the threshold (§3.5).** Zhu et al. "recommend choosing it as the 99.5% percentile of
# the energy score distribution of the training set as the threshold". Set `tau` to the `percentile`-th
# percentile of `e_train` (`np.percentile`), then `kept_id` to the share of the ID images whose energy is at
# most τ (the images the detector keeps as in-distribution), and `kept_ood` to the same share for each OOD
# source: an array of 3 numbers, in the order of `ood_sources`.

# %% [raw]
# # BEGIN SOLUTION

# %%
tau = float(np.percentile(e_train, percentile))  # SOLUTION
kept_id = float(np.mean(e_id <= tau))  # SOLUTION
kept_ood = np.array([np.mean(e_ood[ood_source == k] <= tau) for k in range(len(ood_sources))])  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(
    f"tau = {tau:.3f}; kept: ID {kept_id:.1%}, "
    + ", ".join(f"{s} {k:.1%}" for s, k in zip(ood_sources, kept_ood, strict=True))
)

# %% [raw]
# # BEGIN TESTS

# %%
assert isinstance(tau, (int, float, np.number)), f"tau should be one number; got {type(tau).__name__}"
assert np.isclose(np.mean(e_train <= tau), percentile / 100, atol=0.002), (
    f"tau is the {percentile}th percentile of the training energies: {percentile}% of e_train should lie at or "
    f"below it; got {np.mean(e_train <= tau):.2%}"
)
assert 0 <= kept_id <= 1, f"kept_id should be a share between 0 and 1; got {kept_id}"
assert np.shape(kept_ood) == (len(ood_sources),), (
    f"kept_ood should hold one share per OOD source, shape ({len(ood_sources)},); got shape {np.shape(kept_ood)}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("ood-autoeval-data.npz", allow_pickle=False)
_t = np.percentile(e_train, float(_d["percentile"]))
assert np.isclose(tau, _t, atol=1e-9)
assert np.isclose(kept_id, np.mean(e_id <= _t))
assert np.allclose(kept_ood, [np.mean(e_ood[_d["ood_source"] == _k] <= _t) for _k in range(3)])

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q3
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 3 (2 points): how well does energy separate the sources?** Write `auroc(id_energies,
# ood_energies)`: the probability that a randomly drawn foreign image has a *higher* energy than a randomly
# drawn ID image, ties counting one half — the area under the ROC curve of the detector (1: perfect
# separation, 0.5: chance). Comparing every pair with broadcasting (`a[:, None] < b[None, :]`) is fine at these
# sizes. Then set `aurocs` to the AUROC of each OOD source against the ID source (`e_id`), in the order of
# `ood_sources`.

# %% [raw]
# # BEGIN SOLUTION


# %%
def auroc(id_energies, ood_energies):
    # BEGIN SOLUTION
    a = np.asarray(id_energies, dtype=float)[:, None]
    b = np.asarray(ood_energies, dtype=float)[None, :]
    return float(np.mean(a < b) + 0.5 * np.mean(a == b))
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
aurocs = np.array([auroc(e_id, e_ood[ood_source == k]) for k in range(len(ood_sources))])  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
pd.DataFrame({"AUROC": aurocs, "share kept": kept_ood}, index=ood_sources).round(3)

# %% [raw]
# # BEGIN TESTS

# %%
_got = auroc(np.array([0.0, 1.0]), np.array([2.0, 3.0]))
assert np.isclose(_got, 1.0), f"every foreign energy (2, 3) above every ID energy (0, 1): AUROC 1; got {_got}"
_got = auroc(np.array([0.0, 2.0]), np.array([1.0, 3.0]))
assert np.isclose(_got, 0.75), (
    f"ID [0, 2], foreign [1, 3]: of the 4 pairs, 3 have the foreign energy higher (1>0, 3>0, 3>2): 0.75; got {_got}"
)
_got = auroc(np.array([1.0, 0.0]), np.array([1.0]))
assert np.isclose(_got, 0.75), f"ID [1, 0], foreign [1]: one tie (1/2) and one win (1): 0.75; got {_got}"
assert np.shape(aurocs) == (len(ood_sources),), (
    f"aurocs should hold one AUROC per OOD source; got {np.shape(aurocs)}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _auroc(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.mean([[1.0 if y > x else 0.5 if y == x else 0.0 for y in b] for x in a])


_rng = np.random.default_rng(2)
_a, _b = _rng.integers(0, 5, 13).astype(float), _rng.integers(2, 8, 7).astype(float)  # with ties
assert np.isclose(auroc(_a, _b), _auroc(_a, _b))
_d = np.load("ood-autoeval-data.npz", allow_pickle=False)
for _k in range(3):
    _x, _y = e_id[:, None], e_ood[_d["ood_source"] == _k][None, :]
    assert np.isclose(aurocs[_k], np.mean(_x < _y) + 0.5 * np.mean(_x == _y), atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q4
# points: 2
# manual: true

# %% [markdown]
# **Question 4 (2 points, graded by hand): a plot.** Draw the distributions of the energy scores in one figure,
# as the chapter's energy figure does: histograms (`density=True`, shared bins, `histtype="step"` or a low
# `alpha` so they stay readable) of `e_train`, `e_id` and each OOD source's energies, with the threshold τ as a
# dashed vertical line, axis labels, a legend and a title. Which source crosses the line most?

# %% [raw]
# # BEGIN SOLUTION

# %%
# your histograms here
# BEGIN SOLUTION
bins = np.linspace(
    min(e_train.min(), e_id.min(), e_ood.min()), max(e_train.max(), e_id.max(), e_ood.max()), 60
)
fig, ax = plt.subplots(figsize=(8, 4))
ax.hist(e_train, bins=bins, density=True, histtype="step", linewidth=2, label="training images")
ax.hist(e_id, bins=bins, density=True, histtype="step", linewidth=2, label=f"ID ({data['id_source']})")
for k, name in enumerate(ood_sources):
    ax.hist(e_ood[ood_source == k], bins=bins, density=True, histtype="step", label=f"OOD: {name}")
ax.axvline(tau, color="black", linestyle="--", label=f"τ = {tau:.2f} ({percentile:g}th percentile)")
ax.set_xlabel("energy E(x) (the detector's; higher: more foreign)")
ax.set_ylabel("density")
ax.set_title("Energy scores: images right of τ are judged OOD and removed")
ax.legend(fontsize=8)
plt.show()
# END SOLUTION

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q5
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 5 (2 points): the Fréchet distance and the representation (§3.2).** Write
# `frechet_distance(features, mean, cov)`: for a set's features (one row per image), with μ their mean and Σ
# their covariance (`np.cov(features, rowvar=False)`, which divides by n − 1),
# $\mathrm{FD} = \lVert \mu_{\text{train}} - \mu \rVert^2 + \operatorname{Tr}(\Sigma_{\text{train}} + \Sigma
# - 2(\Sigma_{\text{train}}\Sigma)^{1/2})$, where `mean` and `cov` are the training features' μ_train and
# Σ_train. You need no matrix square root: $\operatorname{Tr}((\Sigma_{\text{train}}\Sigma)^{1/2})$ is the
# sum of the square roots of the eigenvalues of $\Sigma_{\text{train}}\Sigma$ (`np.linalg.eigvals`; keep the
# real part and clip tiny negative values at 0). Then write `representation(features)`:
# $h = [\mu, \sigma^2, \mathrm{FD}]$, the 64 feature means, the 64 feature variances (`np.var`, dividing by
# n) and the FD to the training features (`train_mean`, `train_cov`) — 129 numbers, in this order, the
# order of `meta_reps`' columns.

# %% [raw]
# # BEGIN SOLUTION


# %%
def frechet_distance(features, mean, cov):
    # BEGIN SOLUTION
    f = np.asarray(features, dtype=float)
    mu, sigma = f.mean(axis=0), np.cov(f, rowvar=False)
    eig = np.linalg.eigvals(np.asarray(cov) @ sigma).real
    cross = np.sqrt(np.clip(eig, 0, None)).sum()
    return float(np.sum((np.asarray(mean) - mu) ** 2) + np.trace(cov) + np.trace(sigma) - 2 * cross)
    # END SOLUTION


def representation(features):
    # BEGIN SOLUTION
    f = np.asarray(features, dtype=float)
    return np.concatenate([f.mean(axis=0), f.var(axis=0), [frechet_distance(f, train_mean, train_cov)]])
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
print(f"FD to the training features: ID source {frechet_distance(id_features, train_mean, train_cov):.2f}, "
      f"foreign images {frechet_distance(ood_features, train_mean, train_cov):.2f}; meta-sets' FD from "
      f"{meta_reps[:, -1].min():.2f} to {meta_reps[:, -1].max():.2f}")  # fmt: skip

# %% [raw]
# # BEGIN TESTS

# %%
_got = frechet_distance(np.array([[1.0, 0.0], [1.0, 2.0]]), np.zeros(2), np.eye(2))
assert isinstance(_got, (int, float, np.number)), (
    f"frechet_distance should return one number; got {type(_got)}"
)
assert np.isclose(_got, 6 - 2 * np.sqrt(2)), (
    "features [[1, 0], [1, 2]]: μ = (1, 1), Σ = [[0, 0], [0, 2]]; against μ_train = 0, Σ_train = I the FD is "
    f"‖μ‖² + Tr(I) + Tr(Σ) − 2 Tr(Σ^½) = 2 + 2 + 2 − 2√2 = 3.172; got {_got}"
)
_f = np.random.default_rng(0).normal(size=(500, 3))
_got = frechet_distance(_f, _f.mean(0), np.cov(_f, rowvar=False))
assert abs(_got) < 1e-6, f"a set's FD to its own mean and covariance is 0; got {_got}"
_got = representation(id_features[:50])
assert np.shape(_got) == (meta_reps.shape[1],), (
    f"representation should give {meta_reps.shape[1]} numbers (64 means, 64 variances, FD); got {np.shape(_got)}"
)
assert np.allclose(_got[:64], id_features[:50].mean(0)) and np.allclose(
    _got[64:128], id_features[:50].var(0)
), "representation: first the 64 feature means, then the 64 variances (np.var, dividing by n)"

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _fd(f, m, c):
    s = np.cov(f, rowvar=False)
    w, v = np.linalg.eigh(c)
    r = (v * np.sqrt(np.clip(w, 0, None))) @ v.T
    x = np.sqrt(np.clip(np.linalg.eigvalsh(r @ s @ r), 0, None)).sum()
    return np.sum((m - f.mean(0)) ** 2) + np.trace(c) + np.trace(s) - 2 * x


_rng = np.random.default_rng(3)
_f, _g = _rng.normal(1, 2, (40, 5)), _rng.normal(0, 1, (100, 5))
assert np.isclose(
    frechet_distance(_f, _g.mean(0), np.cov(_g, rowvar=False)), _fd(_f, _g.mean(0), np.cov(_g, rowvar=False))
)
_d = np.load("ood-autoeval-data.npz", allow_pickle=False)
_x = _d["ood_features"][:300].astype(float)
_h = representation(_x)
assert np.isclose(_h[-1], _fd(_x, _d["train_mean"], _d["train_cov"]), rtol=1e-6)
assert np.allclose(_h[:64], _x.mean(0)) and np.allclose(_h[64:128], _x.var(0))

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q6
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 6 (2 points): the regression g.** Zhu et al. fit a five-layer network from h to accuracy (§4.2);
# you fit ridge regression, which needs three lines of numpy. Write `ridge_predict(X, y, X_new, lam)`:
#
# 1. standardise: `center`, `scale` = the mean and the standard deviation (`np.std`, dividing by n) of each
#    column of `X`; Z = (X − center) / scale, and the same for `X_new` *with X's center and scale*;
# 2. w = (ZᵀZ + λI)⁻¹ Zᵀ(y − ȳ) (`np.linalg.solve`), with ȳ the mean of `y`;
# 3. return the predictions Z_new · w + ȳ, clipped to [0, 1] (they are accuracies).

# %% [raw]
# # BEGIN SOLUTION


# %%
def ridge_predict(X, y, X_new, lam):
    # BEGIN SOLUTION
    X, X_new, y = np.asarray(X, float), np.asarray(X_new, float), np.asarray(y, float)
    center, scale = X.mean(axis=0), X.std(axis=0)
    Z, Z_new = (X - center) / scale, (X_new - center) / scale
    w = np.linalg.solve(Z.T @ Z + lam * np.eye(Z.shape[1]), Z.T @ (y - y.mean()))
    return np.clip(Z_new @ w + y.mean(), 0, 1)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
_X, _y = np.array([[0.0], [1.0], [2.0]]), np.array([0.0, 0.5, 1.0])
_got = ridge_predict(_X, _y, np.array([[1.5], [9.0]]), 0.0)
assert np.shape(_got) == (2,), f"one prediction per row of X_new: expected shape (2,), got {np.shape(_got)}"
assert np.allclose(_got, [0.75, 1.0]), (
    f"y = x / 2 exactly and lam = 0: x = 1.5 gives 0.75, and x = 9 gives 4.5, clipped to 1; got {_got}"
)
_got = ridge_predict(_X, _y, np.array([[1.5]]), 1e9)
assert np.allclose(_got, 0.5, atol=1e-6), (
    f"a huge lam shrinks w to 0: every prediction is the mean of y (0.5); got {_got}"
)
_got = ridge_predict(_X, _y, np.array([[2.0]]), 1.0)
assert np.isclose(_got[0], 0.875), (
    "x = [0, 1, 2] standardise to z = [-1.22, 0, 1.22] (std divides by n); Z'Z = 3, Z'(y - 0.5) = 1.22, so with "
    f"lam = 1 w = 1.22 / (3 + 1) = 0.31 and x = 2 gives 0.5 + 1.22 * 0.31 = 0.875; got {_got}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _ridge(X, y, Xn, lam):
    c, s = X.mean(0), X.std(0)
    Z = (X - c) / s
    w = np.linalg.solve(Z.T @ Z + lam * np.eye(X.shape[1]), Z.T @ (y - y.mean()))
    return np.clip((Xn - c) / s @ w + y.mean(), 0, 1)


_rng = np.random.default_rng(4)
_X = _rng.normal(3, [1, 10, 0.1], (30, 3))
_y = np.clip(0.5 + 0.1 * _rng.normal(size=30), 0, 1)
_Xn = _rng.normal(3, [1, 10, 0.1], (7, 3))
for _lam in (0.0, 0.3, 5.0):
    assert np.allclose(ridge_predict(_X, _y, _Xn, _lam), _ridge(_X, _y, _Xn, _lam), atol=1e-9)
_d = np.load("ood-autoeval-data.npz", allow_pickle=False)
_m, _a, _v = _d["meta_reps"].astype(float), _d["meta_acc"], _d["val_reps"].astype(float)
assert np.allclose(ridge_predict(_m, _a, _v, 1.0), _ridge(_m, _a, _v, 1.0), atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q7
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 7 (1 point): choosing λ on the validation meta-sets.** For each λ in `lams`, fit on the training
# meta-sets (`meta_reps`, `meta_acc`) and predict the validation meta-sets (`val_reps`). Set `val_rmse` to the
# root mean squared error against `val_acc` for each λ, **in accuracy points** (0.01 of accuracy is one point,
# the unit of the paper's tables), and `lam_best` to the λ with the lowest. The next cell then defines g, the
# regression the rest of the lab uses.

# %%
lams = [0.1, 1.0, 10.0, 100.0, 1000.0]

# %% [raw]
# # BEGIN SOLUTION

# %%
# BEGIN SOLUTION
val_pred = [ridge_predict(meta_reps, meta_acc, val_reps, lam) for lam in lams]
# END SOLUTION
val_rmse = np.array([100 * np.sqrt(np.mean((pred - val_acc) ** 2)) for pred in val_pred])  # SOLUTION
lam_best = lams[int(np.argmin(val_rmse))]  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(pd.Series(np.round(val_rmse, 2), index=pd.Index(lams, name="lambda"), name="validation RMSE (points)"))


def g(reps):
    """AutoEval's accuracy estimate for each row of reps (representations h), from the training meta-sets."""
    return ridge_predict(meta_reps, meta_acc, np.atleast_2d(reps), lam_best)


# %% [raw]
# # BEGIN TESTS

# %%
assert np.shape(val_rmse) == (len(lams),), (
    f"val_rmse should hold one RMSE per lambda; got shape {np.shape(val_rmse)}"
)
assert np.min(val_rmse) > 0.05, "val_rmse is in accuracy points: multiply the RMSE of fractions by 100"
assert lam_best in lams and np.isclose(val_rmse[lams.index(lam_best)], np.min(val_rmse)), (
    f"lam_best should be the lambda of the lowest val_rmse ({lams[int(np.argmin(val_rmse))]}); got {lam_best}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("ood-autoeval-data.npz", allow_pickle=False)
_m, _a = _d["meta_reps"].astype(float), _d["meta_acc"]
_v, _va = _d["val_reps"].astype(float), _d["val_acc"]
_ref = [
    100 * np.sqrt(np.mean((ridge_predict(_m, _a, _v, _l) - _va) ** 2))
    for _l in [0.1, 1.0, 10.0, 100.0, 1000.0]
]
assert np.allclose(val_rmse, _ref, atol=1e-9)
assert lam_best == [0.1, 1.0, 10.0, 100.0, 1000.0][int(np.argmin(_ref))]

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q8
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 8 (2 points): AutoEval on the test sets, foreign images included.** Test set i holds the ID
# images `set_id_index[i]` (rows of `id_features`, `id_correct`, `e_id`) and the foreign images
# `set_ood_index[i]` (rows of `ood_features`, `e_ood`), 1,000 images in all. For each of the 9 test sets, set
#
# - `truth[i]`: the classifier's true accuracy on the whole set, where every foreign image counts as an error
#   (it belongs to no class the classifier knows): the number of correct ID images over 1,000;
# - `est_plain[i]`: plain AutoEval's estimate, g of the representation of all 1,000 images' features.
#
# Keep the ID images first, then the foreign ones, when you stack a set's features (`np.concatenate`).

# %% [raw]
# # BEGIN SOLUTION

# %%
n_sets = len(set_id_index)
truth, est_plain = np.zeros(n_sets), np.zeros(n_sets)
for i in range(n_sets):
    ii, oi = set_id_index[i], set_ood_index[i]
    truth[i] = id_correct[ii].sum() / (len(ii) + len(oi))  # SOLUTION
    features_i = np.concatenate([id_features[ii], ood_features[oi]])  # SOLUTION
    est_plain[i] = g(representation(features_i))[0]  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
pd.DataFrame({"OOD source": ood_sources[set_ood], "truth": truth, "AutoEval": est_plain}).round(3)

# %% [raw]
# # BEGIN TESTS

# %%
for _name, _value in (("truth", truth), ("est_plain", est_plain)):
    assert np.shape(_value) == (len(set_id_index),), f"{_name} should hold one number per test set (9)"
    assert np.all((0 <= _value) & (_value <= 1)), f"{_name} should hold accuracies as fractions in [0, 1]"
assert np.max(truth) <= 0.9 + 1e-9, (
    "with 100 foreign images, always wrong, no test set's true accuracy can exceed 900 / 1000 = 0.9: divide the "
    f"correct ID images by all 1,000 images; got a largest truth of {np.max(truth):.3f}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("ood-autoeval-data.npz", allow_pickle=False)
_i, _o = _d["set_id_index"], _d["set_ood_index"]
assert np.allclose(truth, _d["id_correct"][_i].sum(1) / 1000)
_f = [
    np.concatenate([_d["id_features"][a], _d["ood_features"][b]]).astype(float)
    for a, b in zip(_i, _o, strict=True)
]
assert np.allclose(est_plain, [g(representation(_x))[0] for _x in _f], atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q9
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 9 (2 points): the OOD-aware estimate (§3.5).** Zhu et al. keep
# $D_{\text{ID}} = \{x \in D : E(x) \le \tau\}$, and "Since the classifier's classification result on OOD data
# must be wrong, the accuracy of the classifier on the test set can be expressed as the percentage of ID data
# in the test set multiplied by the prediction accuracy of AutoEval on the ID data" (§3.5):
# $\widehat{\mathrm{Acc}}(D) = \frac{|D_{\text{ID}}|}{|D|}\, g(h(D_{\text{ID}}))$. Write
# `ood_aware(features, energies, tau)` for one test set (its images' features and energies) returning this
# estimate with your `g` and `representation`. Then, for each test set (ID images first, as in Question 8),
# set `est_ood[i]` to the estimate at the `tau` of Question 2, `id_excluded[i]` to the share of the set's 900
# ID images the threshold removes (energy above τ) and `ood_kept[i]` to the share of its 100 foreign images
# it keeps (energy at most τ).

# %% [raw]
# # BEGIN SOLUTION


# %%
def ood_aware(features, energies, tau):
    # BEGIN SOLUTION
    keep = np.asarray(energies) <= tau
    return float(keep.mean() * g(representation(np.asarray(features)[keep]))[0])
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
est_ood, id_excluded, ood_kept = np.zeros(n_sets), np.zeros(n_sets), np.zeros(n_sets)
for i in range(n_sets):
    ii, oi = set_id_index[i], set_ood_index[i]
    features_i = np.concatenate([id_features[ii], ood_features[oi]])  # SOLUTION
    energies_i = np.concatenate([e_id[ii], e_ood[oi]])  # SOLUTION
    est_ood[i] = ood_aware(features_i, energies_i, tau)  # SOLUTION
    id_excluded[i] = np.mean(e_id[ii] > tau)  # SOLUTION
    ood_kept[i] = np.mean(e_ood[oi] <= tau)  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
table = pd.DataFrame({"OOD source": ood_sources[set_ood], "truth": truth, "AutoEval": est_plain})
table["AutoEval + energy OOD"], table["ID excluded"], table["OOD kept"] = est_ood, id_excluded, ood_kept
table.round(3)

# %% [raw]
# # BEGIN TESTS

# %%
_f, _e = id_features[:40], np.where(np.arange(40) < 30, -5.0, 7.0)
_got = ood_aware(_f, _e, 0.0)
_want = 0.75 * g(representation(_f[:30]))[0]
assert np.isclose(_got, _want), (
    "40 images, the last 10 with energy above tau = 0: keep the first 30, estimate g on their representation "
    f"and multiply by the share kept, 30/40: expected {_want:.4f}, got {_got}"
)
for _name, _value in (("est_ood", est_ood), ("id_excluded", id_excluded), ("ood_kept", ood_kept)):
    assert np.shape(_value) == (len(set_id_index),), f"{_name} should hold one number per test set (9)"
    assert np.all((0 <= _value) & (_value <= 1)), f"{_name} should hold fractions in [0, 1]"

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_rng = np.random.default_rng(5)
_f, _e = _rng.normal(size=(40, 64)) + id_features[200:240], _rng.normal(size=40)
_k = _e <= 0.3
assert np.isclose(ood_aware(_f, _e, 0.3), _k.mean() * g(representation(_f[_k]))[0], atol=1e-9)
_d = np.load("ood-autoeval-data.npz", allow_pickle=False)
_i, _o = _d["set_id_index"], _d["set_ood_index"]
for _n in range(len(_i)):
    _x = np.concatenate([_d["id_features"][_i[_n]], _d["ood_features"][_o[_n]]]).astype(float)
    _en = np.concatenate([e_id[_i[_n]], e_ood[_o[_n]]])
    _kk = _en <= tau
    assert np.isclose(est_ood[_n], _kk.mean() * g(representation(_x[_kk]))[0], atol=1e-9)
    assert np.isclose(id_excluded[_n], np.mean(e_id[_i[_n]] > tau))
    assert np.isclose(ood_kept[_n], np.mean(e_ood[_o[_n]] <= tau))

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q10
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 10 (1 point): the errors, as in Table 1.** Set `rmse_plain` and `rmse_ood` to the RMSE, in
# accuracy points, of `est_plain` and of `est_ood` against `truth` over the 9 test sets; and `rmse_by_source`
# to a DataFrame with one row per OOD source (index: `ood_sources`) and two columns, `"AutoEval"` and
# `"AutoEval + energy OOD"`, each RMSE over that source's 3 test sets (`set_ood`), in points.

# %% [raw]
# # BEGIN SOLUTION

# %%
rmse_plain = 100 * float(np.sqrt(np.mean((est_plain - truth) ** 2)))  # SOLUTION
rmse_ood = 100 * float(np.sqrt(np.mean((est_ood - truth) ** 2)))  # SOLUTION
# BEGIN SOLUTION
err_plain, err_ood = est_plain - truth, est_ood - truth
by_plain = [100 * np.sqrt(np.mean(err_plain[set_ood == k] ** 2)) for k in range(len(ood_sources))]
by_ood = [100 * np.sqrt(np.mean(err_ood[set_ood == k] ** 2)) for k in range(len(ood_sources))]
columns = {"AutoEval": by_plain, "AutoEval + energy OOD": by_ood}
# END SOLUTION
rmse_by_source = pd.DataFrame(columns, index=ood_sources)  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
chapter = [100 * np.sqrt(np.mean((e - truth) ** 2)) for e in (chapter_plain, chapter_ood)]
print(f"all 9 test sets: AutoEval {rmse_plain:.2f} points, AutoEval + energy OOD {rmse_ood:.2f} points")
print(f"(the chapter's MLP regressor on the same sets: {chapter[0]:.2f} and {chapter[1]:.2f} points)")
rmse_by_source.round(2)

# %% [raw]
# # BEGIN TESTS

# %%
for _name, _value in (("rmse_plain", rmse_plain), ("rmse_ood", rmse_ood)):
    assert isinstance(_value, (int, float, np.number)), (
        f"{_name} should be one number; got {type(_value).__name__}"
    )
    assert _value > 0.05, f"{_name} is in accuracy points: multiply the RMSE of fractions by 100"
assert isinstance(rmse_by_source, pd.DataFrame) and rmse_by_source.shape == (len(ood_sources), 2), (
    f"rmse_by_source should be a DataFrame with {len(ood_sources)} rows (OOD sources) and 2 columns"
)
assert list(rmse_by_source.columns) == ["AutoEval", "AutoEval + energy OOD"], (
    f"rmse_by_source's columns should be 'AutoEval', 'AutoEval + energy OOD'; got {list(rmse_by_source.columns)}"
)
assert np.isclose(np.sqrt(np.mean(rmse_by_source["AutoEval"] ** 2)), rmse_plain), (
    "each source has 3 test sets, so the root mean square of the three per-source RMSEs is the overall RMSE"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("ood-autoeval-data.npz", allow_pickle=False)
_r = lambda e, m=slice(None): 100 * np.sqrt(np.mean((np.asarray(e) - np.asarray(truth))[m] ** 2))  # noqa: E731
assert np.isclose(rmse_plain, _r(est_plain)) and np.isclose(rmse_ood, _r(est_ood))
for _k, _s in enumerate(_d["ood_sources"]):
    _m = _d["set_ood"] == _k
    assert np.isclose(rmse_by_source.loc[_s, "AutoEval"], _r(est_plain, _m))
    assert np.isclose(rmse_by_source.loc[_s, "AutoEval + energy OOD"], _r(est_ood, _m))

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q11
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 11 (2 points): moving the threshold (Figure 3).** The paper names two error sources: ID images
# wrongly excluded (each becomes a counted error) and foreign images wrongly kept (they distort the
# representation). For each percentile p in `percentile_grid`, let τ_p be the p-th percentile of `e_train`,
# and set `sweep_rmse[j]` to the RMSE (points) of your OOD-aware estimate with τ_p over the 9 test sets,
# `sweep_excluded[j]` to the mean over the test sets of the share of ID images removed, and `sweep_kept[j]`
# to the mean share of foreign images kept. At p = 99.5 you should find `rmse_ood` again.

# %% [raw]
# # BEGIN SOLUTION

# %%
sweep_rmse, sweep_excluded, sweep_kept = (np.zeros(len(percentile_grid)) for _ in range(3))
for j, p in enumerate(percentile_grid):
    tau_p = np.percentile(e_train, p)  # SOLUTION
    est_p = np.zeros(n_sets)
    for i in range(n_sets):
        ii, oi = set_id_index[i], set_ood_index[i]
        features_i = np.concatenate([id_features[ii], ood_features[oi]])  # SOLUTION
        est_p[i] = ood_aware(features_i, np.concatenate([e_id[ii], e_ood[oi]]), tau_p)  # SOLUTION
    sweep_rmse[j] = 100 * np.sqrt(np.mean((est_p - truth) ** 2))  # SOLUTION
    sweep_excluded[j] = np.mean([np.mean(e_id[ii] > tau_p) for ii in set_id_index])  # SOLUTION
    sweep_kept[j] = np.mean([np.mean(e_ood[oi] <= tau_p) for oi in set_ood_index])  # SOLUTION
# BEGIN SOLUTION NO PROMPT
# Checks the statements of Question 12's model answer: the solution fails where the data make one false.
_src = {name: k for k, name in enumerate(ood_sources)}
_det = rmse_by_source["AutoEval + energy OOD"]
assert rmse_ood < rmse_plain and chapter[1] < chapter[0]
assert np.all(est_plain > truth)
assert np.mean(id_excluded) > 5 * (100 - percentile) / 100
_removed = [_src["natural_patches"], _src["letters"]]  # the sources whose images the detector removes
_on_removed, _on_textures = np.isin(set_ood, _removed), set_ood == _src["textures"]
assert all(kept_ood[k] < 0.1 for k in _removed) and np.all(est_ood[_on_removed] < truth[_on_removed])
assert np.all(est_ood[_on_textures] > truth[_on_textures])
assert kept_ood[_src["letters"]] == 0 and np.argmax(aurocs) == _src["letters"]
assert kept_ood[_src["letters"]] < kept_ood[_src["natural_patches"]] < kept_ood[_src["textures"]]
assert np.argmin(aurocs) == _src["textures"]
assert (_det < rmse_by_source["AutoEval"]).all()
assert percentile_grid[0] == 90 and np.argmax(sweep_excluded) == 0 and np.argmax(sweep_rmse) == 0
assert percentile_grid[np.argmin(sweep_rmse)] == percentile == 99.5 and percentile_grid[-1] == 100
_best = int(np.argmin(sweep_rmse))  # falls to the best threshold, then rises
assert np.all(np.diff(sweep_rmse[: _best + 1]) < 0) and np.all(np.diff(sweep_rmse[_best:]) > 0)
assert np.all(np.diff(sweep_kept) > 0) and np.argmax(sweep_kept) == len(percentile_grid) - 1
# END SOLUTION

# %% [raw]
# # END SOLUTION

# %%
sweep = pd.DataFrame({"RMSE (points)": sweep_rmse, "ID excluded": sweep_excluded, "OOD kept": sweep_kept})
sweep.index = pd.Index(percentile_grid, name="percentile of the training energies")
sweep.round(3)

# %% [raw]
# # BEGIN TESTS

# %%
for _name, _value in (
    ("sweep_rmse", sweep_rmse),
    ("sweep_excluded", sweep_excluded),
    ("sweep_kept", sweep_kept),
):
    assert np.shape(_value) == (len(percentile_grid),), f"{_name} should hold one number per percentile"
assert np.all(np.diff(sweep_excluded) <= 1e-12) and np.all(np.diff(sweep_kept) >= -1e-12), (
    "a higher threshold removes fewer ID images and keeps more foreign ones: sweep_excluded should fall and "
    "sweep_kept rise along percentile_grid"
)
_j = list(percentile_grid).index(percentile)
assert np.isclose(sweep_rmse[_j], rmse_ood), (
    f"at the {percentile}th percentile the sweep is Question 10's estimate: expected rmse_ood = {rmse_ood:.3f}, "
    f"got {sweep_rmse[_j]:.3f}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("ood-autoeval-data.npz", allow_pickle=False)
_i, _o = _d["set_id_index"], _d["set_ood_index"]
_x = [
    np.concatenate([_d["id_features"][a], _d["ood_features"][b]]).astype(float)
    for a, b in zip(_i, _o, strict=True)
]
for _j, _p in enumerate(_d["percentile_grid"]):
    _t = np.percentile(e_train, _p)
    _est = [ood_aware(_x[_n], np.concatenate([e_id[_i[_n]], e_ood[_o[_n]]]), _t) for _n in range(len(_i))]
    assert np.isclose(sweep_rmse[_j], 100 * np.sqrt(np.mean((np.array(_est) - truth) ** 2)), atol=1e-9)
    assert np.isclose(sweep_excluded[_j], np.mean(e_id[_i] > _t))
    assert np.isclose(sweep_kept[_j], np.mean(e_ood[_o] <= _t))

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q12
# points: 3
# manual: true

# %% [markdown]
# **Question 12 (3 points, graded by hand): does OOD detection pay, and what does it cost?** Zhu et al. write:
# "The experimental results show that the average RMSE = 2.91% for our method on the eight datasets, much
# smaller than AutoEval without the OOD strategy (RMSE = 4.61%)" (Zhu et al. 2023, §4.4, Table 1). In a short
# paragraph (6–10 sentences), using your numbers:
#
# 1. Compare `rmse_ood` with `rmse_plain` (and with the chapter's MLP on the same sets, printed under
#    Question 10) against the paper's 2.91 and 4.61 points. Which way does plain AutoEval err when foreign
#    images are present (compare `est_plain` with `truth`), and why?
# 2. The paper warns (§3.5): "These excluded images will be flagged as misclassified, in which case the
#    prediction accuracy of our method will be lower than the ground truth." How many ID images does the
#    99.5th percentile remove here (`id_excluded`, against the nominal 0.5%), and which way does `est_ood`
#    err? Which OOD source does the detector keep most of (`kept_ood`, `aurocs`), and does it show in
#    `rmse_by_source`?
# 3. Read your sweep against Figure 3, where the error "decreases initially and then increases as the OOD
#    threshold increases": does yours, and is the paper's 99.5th percentile the best threshold here?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# *Marking: one point for each part; an answer earns a part's point when it gives the numbers and the
# reason.*
#
# Removing the foreign images lowers the error: over the 9 test sets AutoEval errs by `rmse_plain` points
# without detection and by `rmse_ood` with it, against the paper's 4.61 and 2.91; the chapter's MLP (`chapter`,
# printed under Question 10) shows the same ordering. Plain AutoEval overestimates on every set (`est_plain`
# above `truth`): the 100 foreign images are all errors, but g has only seen meta-sets of digits and reads the
# shifted features as a somewhat harder set of digits, not as 10% certain errors. The OOD-aware estimate
# removes most of them and counts them as errors through the factor |D_ID|/|D|. Its cost is the one the paper
# names: the 99.5th percentile of the *training* energies removes many times the nominal 0.5% of
# MatchedFrequency's ID images (`id_excluded`; the replicated digits have higher energies than the training
# digits), and every removed ID image counts as an error although the classifier gets many of them right. So
# `est_ood` lies below `truth` on every set whose foreign images the detector removes almost entirely (the
# natural patches and the letters). The detector keeps none of the letters (the highest of `aurocs`), a few of
# the natural patches and the most of the textures (the lowest AUROC; `kept_ood`): on the textures' sets the
# kept foreign images push the estimate back above `truth`, so there the two error sources partly cancel. Per
# source (`rmse_by_source`), detection lowers the error on every OOD source, as in the paper's Table 1. The
# sweep (`sweep_rmse`) falls from the 90th percentile, where the most ID images are excluded
# (`sweep_excluded`), to its lowest at the paper's 99.5th, and rises again towards the 100th, where more of the
# foreign images are kept (`sweep_kept`): the shape of Figure 3, with the paper's threshold the best of the
# grid here.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# **Done.** Save the notebook and hand it in. The chapter continues where this lab stops: every baseline of
# Table 1, the perturbed ID sources, and the OOD share swept from 0% to 40% (Figure 4).
