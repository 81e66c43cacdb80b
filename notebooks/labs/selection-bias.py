# %% [raw]
# # ASSIGNMENT CONFIG
# name: selection-bias
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# generate: true
# files:
#   - selection-bias-data.npz

# %% [markdown]
# # Lab 3: how biased is the naive selection-adjusted accuracy?
#
# Models lose accuracy from ImageNet (v1) to its replication ImageNet-v2 (v2). Engstrom et al. (2020) argue
# that part of the drop is an artefact: v2 was matched to v1 on *observed* selection frequencies ŝ (the share
# of annotators who say "this image shows its label"), and ŝ is noisy. They re-annotate both sets with 40
# fresh annotators per image, reweight v2 to v1's distribution of ŝ (their Eq. 4, the *naive* estimator), and
# ask how much of the drop remains. In this lab you compute the naive estimator on the replication world,
# where every image's *true* selection frequency s is known, so you can measure its bias against the truth
# (their Eq. 3) — and see why it has one.
#
# **The data** (`selection-bias-data.npz`, from the chapter's default run): the fresh votes on the world's
# v1 (10,000 images) and MatchedFrequency, its v2 (2,000 images), one column per annotator; whether each of the
# zoo's 31 models classifies each image correctly; and each image's true selection frequency.
#
# Run the cells in order. `grader.check("q1")` runs a question's public tests; more tests run when the lab is
# graded. Questions marked *graded by hand* are read by your teacher.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

data = np.load("selection-bias-data.npz", allow_pickle=False)
votes_v1, votes_v2 = data["votes_v1"], data["votes_v2"]  # images x annotators, True = "yes"
correct_v1, correct_v2 = data["correct_v1"], data["correct_v2"]  # models x images, True = correct
models = data["models"]  # the models' names
true_s_v1, true_s_v2 = data["true_s_v1"], data["true_s_v2"]  # each image's true selection frequency
n = votes_v1.shape[1]  # annotators per image
print(f"v1: {votes_v1.shape[0]} images, v2: {votes_v2.shape[0]} images, {n} annotators, {len(models)} models")

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 1 (1 point): observed selection frequencies.** Set `counts_v1` and `counts_v2` to the number of
# "yes" votes each image received (integers from 0 to `n`), and `shat_v1`, `shat_v2` to the observed
# selection frequencies ŝ = k/n.

# %% [raw]
# # BEGIN SOLUTION

# %%
counts_v1 = votes_v1.sum(axis=1)  # SOLUTION
counts_v2 = votes_v2.sum(axis=1)  # SOLUTION
shat_v1 = counts_v1 / n  # SOLUTION
shat_v2 = counts_v2 / n  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"mean observed selection frequency: v1 {np.mean(shat_v1):.3f}, v2 {np.mean(shat_v2):.3f}")

# %% [raw]
# # BEGIN TESTS

# %%
for _name, _value, _votes in (("counts_v1", counts_v1, votes_v1), ("counts_v2", counts_v2, votes_v2)):
    assert np.shape(_value) == (len(_votes),), (
        f"{_name} should hold one count per image, shape ({len(_votes)},); got shape {np.shape(_value)}"
    )
    assert np.all(np.asarray(_value) == np.round(_value)) and 0 <= np.min(_value) and np.max(_value) <= n, (
        f"{_name} should hold whole numbers of 'yes' votes between 0 and n = {n}"
    )
for _name, _value, _counts in (("shat_v1", shat_v1, counts_v1), ("shat_v2", shat_v2, counts_v2)):
    assert np.shape(_value) == np.shape(_counts) and np.allclose(np.asarray(_value) * n, _counts), (
        f"{_name} should be the counts divided by n = {n}: an image with 30 'yes' votes has ŝ = {30 / n}"
    )

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("selection-bias-data.npz", allow_pickle=False)
_n = _d["votes_v1"].shape[1]
assert np.array_equal(counts_v1, _d["votes_v1"].sum(1)) and np.array_equal(counts_v2, _d["votes_v2"].sum(1))
assert np.allclose(shat_v1, _d["votes_v1"].sum(1) / _n) and np.allclose(shat_v2, _d["votes_v2"].sum(1) / _n)

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
# **Question 2 (1 point): the distribution of ŝ.** Write `level_shares(counts, n)`: for each level
# `k = 0, 1, …, n`, the share of images with exactly `k` "yes" votes — an array of `n + 1` numbers that sum
# to 1. (`np.bincount` with `minlength` does most of it.) This is $p(\hat s = k/n)$ of the paper's Eq. 4.

# %% [raw]
# # BEGIN SOLUTION


# %%
def level_shares(counts, n):
    # BEGIN SOLUTION
    counts = np.asarray(counts, dtype=int)
    return np.bincount(counts, minlength=n + 1) / len(counts)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
p1, p2 = level_shares(counts_v1, n), level_shares(counts_v2, n)

# %% [raw]
# # BEGIN TESTS

# %%
_got = level_shares(np.array([0, 2, 2, 1]), 2)
assert np.shape(_got) == (3,), (
    f"with n = 2 there are 3 levels (k = 0, 1, 2): expected length 3, got shape {np.shape(_got)}"
)
assert np.allclose(_got, [0.25, 0.25, 0.5]), (
    f"counts [0, 2, 2, 1] with n = 2: one image at k = 0, one at k = 1, two at k = 2, so shares "
    f"[0.25, 0.25, 0.5]; got {_got}"
)
_got = level_shares(np.array([3, 3]), 4)
assert np.allclose(_got, [0, 0, 0, 1, 0]), (
    f"levels that no image takes have share 0 and still count: counts [3, 3] with n = 4 give "
    f"[0, 0, 0, 1, 0]; got {_got}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_rng = np.random.default_rng(3)
for _n in (1, 7, 40):
    _c = _rng.integers(0, _n + 1, size=50)
    assert np.allclose(level_shares(_c, _n), np.bincount(_c, minlength=_n + 1) / 50)
_c = np.load("selection-bias-data.npz", allow_pickle=False)["votes_v2"].sum(1)
assert np.allclose(level_shares(_c, 40), np.bincount(_c, minlength=41) / len(_c))

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q3
# points: 2
# manual: true

# %% [markdown]
# **Question 3 (2 points, graded by hand): a plot.** Draw the distributions of the observed selection
# frequency on v1 and on v2 in one figure, as the paper's Figure 4 does: `p1` and `p2` against ŝ = k/n (a
# line or bars for each set), with axis labels, a legend and a title. Mark each set's mean ŝ (for example with
# a vertical line).

# %% [raw]
# # BEGIN SOLUTION

# %%
levels = np.arange(n + 1) / n  # the observed frequencies k/n, k = 0..n
# BEGIN SOLUTION
fig, ax = plt.subplots(figsize=(7, 3.5))
for shares, shat, name in ((p1, shat_v1, "v1"), (p2, shat_v2, "v2 (MatchedFrequency)")):
    line = ax.plot(levels, shares, marker=".", label=f"{name}, mean ŝ = {np.mean(shat):.3f}")[0]
    ax.axvline(np.mean(shat), color=line.get_color(), linestyle="--", linewidth=1)
ax.set_xlabel("observed selection frequency ŝ = k/n")
ax.set_ylabel("share of images")
ax.set_title(f"Observed selection frequencies, {n} fresh annotators per image")
ax.legend()
plt.show()
# END SOLUTION

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q4
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 4 (2 points): accuracy at each level.** Write `accuracy_by_level(counts, correct, n)`: for one
# model (`correct` is one row of `correct_v1` or `correct_v2`: a boolean per image), an array of `n + 1`
# numbers whose entry `k` is the model's accuracy on the images with exactly `k` "yes" votes, and `np.nan`
# where no image has `k` votes. This is $\mathbb{E}[f(x) \mid \hat s(x) = k/n]$ of Eq. 4.

# %% [raw]
# # BEGIN SOLUTION


# %%
def accuracy_by_level(counts, correct, n):
    # BEGIN SOLUTION
    counts = np.asarray(counts, dtype=int)
    seen = np.bincount(counts, minlength=n + 1)
    hits = np.bincount(counts, weights=np.asarray(correct, dtype=float), minlength=n + 1)
    out = np.full(n + 1, np.nan)
    out[seen > 0] = hits[seen > 0] / seen[seen > 0]
    return out
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
best = int(np.argmax(correct_v1.mean(axis=1)))  # the model most accurate on v1
by_level = accuracy_by_level(counts_v2, correct_v2[best], n)
print(f"{models[best]} on v2, accuracy at k = 10, 20, 30, 40:", np.round(by_level[[10, 20, 30, 40]], 3))

# %% [raw]
# # BEGIN TESTS

# %%
_got = accuracy_by_level(np.array([0, 0, 2]), np.array([True, False, True]), 2)
assert np.shape(_got) == (3,), (
    f"with n = 2 the result has 3 entries (k = 0, 1, 2); got shape {np.shape(_got)}"
)
assert np.allclose(_got, [0.5, np.nan, 1.0], equal_nan=True), (
    "counts [0, 0, 2], correct [True, False, True]: at k = 0 one of two images is right (0.5), no image has "
    f"k = 1 (nan), the image at k = 2 is right (1.0); expected [0.5, nan, 1.0], got {_got}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_rng = np.random.default_rng(4)
_d = np.load("selection-bias-data.npz", allow_pickle=False)
_cases = [(_rng.integers(0, 6, 30), _rng.random(30) < 0.6, 9)]  # levels 6..9 empty
_cases += [(_d["votes_v2"].sum(1), _row, 40) for _row in _d["correct_v2"][::10]]
for _c, _f, _n in _cases:
    _seen = np.bincount(_c, minlength=_n + 1)
    _hits = np.bincount(_c, weights=_f.astype(float), minlength=_n + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        _ref = np.where(_seen > 0, _hits / _seen, np.nan)
    assert np.allclose(accuracy_by_level(_c, _f, _n), _ref, equal_nan=True)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q5
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 5 (2 points): the naive estimator (Eq. 4).** Write `naive_adjusted(counts_v1, counts_v2,
# correct_v2, n)`: one model's v2 accuracy reweighted to v1's distribution of ŝ,
#
# $$\hat A = \sum_{k=0}^{n} \mathbb{E}_{v2}\left[f \mid \hat s = k/n\right] \cdot p_1(\hat s = k/n),$$
#
# where `correct_v2` is the model's row of `correct_v2`. A level that no v2 image takes says nothing about
# the model's accuracy there: leave such levels out, and divide by the sum of the v1 shares that remain, so
# that the weights still sum to 1 (the chapter's estimator does the same; Eq. 4 leaves those levels
# undefined). Use your `level_shares` and `accuracy_by_level`.

# %% [raw]
# # BEGIN SOLUTION


# %%
def naive_adjusted(counts_v1, counts_v2, correct_v2, n):
    # BEGIN SOLUTION
    p1 = level_shares(counts_v1, n)
    acc = accuracy_by_level(counts_v2, correct_v2, n)
    keep = ~np.isnan(acc)
    return float(np.sum(acc[keep] * p1[keep]) / p1[keep].sum())
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
_got = naive_adjusted(
    np.array([2, 2, 0, 0]), np.array([2, 0, 0, 0]), np.array([True, False, False, False]), 2
)
assert np.isclose(_got, 0.5), (
    "v1 counts [2, 2, 0, 0] put half of v1 at k = 0 and half at k = 2; the model is right on v2's one image at "
    f"k = 2 and wrong on its three at k = 0, so the estimate is 0.5 * 0 + 0.5 * 1 = 0.5; got {_got}"
)
_got = naive_adjusted(np.array([0, 1, 2, 2]), np.array([0, 2]), np.array([False, True]), 2)
assert np.isclose(_got, 2 / 3), (
    "v1 counts [0, 1, 2, 2]: shares 1/4, 1/4, 1/2 at k = 0, 1, 2; v2 has no image at k = 1, so that level is "
    "left out and the remaining shares renormalised to 1/3 and 2/3: the estimate is 1/3 * 0 + 2/3 * 1 = 0.667; "
    f"got {_got}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _naive(c1, c2, f, n):
    p1 = np.bincount(c1, minlength=n + 1) / len(c1)
    seen = np.bincount(c2, minlength=n + 1)
    hits = np.bincount(c2, weights=f.astype(float), minlength=n + 1)
    k = seen > 0
    return np.sum(hits[k] / seen[k] * p1[k]) / p1[k].sum()


_rng = np.random.default_rng(5)
_d = np.load("selection-bias-data.npz", allow_pickle=False)
_c1, _c2 = _d["votes_v1"].sum(1), _d["votes_v2"].sum(1)
_cases = [(_rng.integers(0, 11, 40), _rng.integers(4, 11, 25), _rng.random(25) < 0.5, 10)]
_cases += [(_c1, _c2, _row, 40) for _row in _d["correct_v2"][::6]]
for _a, _b, _f, _n in _cases:
    assert np.isclose(naive_adjusted(_a, _b, _f, _n), _naive(_a, _b, _f, _n), rtol=0, atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q6
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 6 (1 point): every model.** Set `acc_v1` and `acc_v2` to each model's plain accuracy on v1 and
# on v2 (fractions, one per model, in the order of `models`), and `naive` to each model's naive adjusted v2
# accuracy (your `naive_adjusted` with the 40 annotators' counts).

# %% [raw]
# # BEGIN SOLUTION

# %%
acc_v1 = correct_v1.mean(axis=1)  # SOLUTION
acc_v2 = correct_v2.mean(axis=1)  # SOLUTION
naive = np.array([naive_adjusted(counts_v1, counts_v2, row, n) for row in correct_v2])  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
pd.DataFrame({"v1": acc_v1, "v2": acc_v2, "v2, naive adjusted": naive}, index=models).round(3).head(8)

# %% [raw]
# # BEGIN TESTS

# %%
for _name, _value in (("acc_v1", acc_v1), ("acc_v2", acc_v2), ("naive", naive)):
    assert np.shape(_value) == (len(models),), (
        f"{_name} should hold one number per model, shape ({len(models)},); got shape {np.shape(_value)}"
    )
    assert np.all((0 <= np.asarray(_value)) & (np.asarray(_value) <= 1)), (
        f"{_name} should hold accuracies as fractions between 0 and 1 (not percentages)"
    )

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("selection-bias-data.npz", allow_pickle=False)
assert np.allclose(acc_v1, _d["correct_v1"].mean(1)) and np.allclose(acc_v2, _d["correct_v2"].mean(1))
_c1, _c2 = _d["votes_v1"].sum(1), _d["votes_v2"].sum(1)
assert np.allclose(naive, [naive_adjusted(_c1, _c2, _row, 40) for _row in _d["correct_v2"]], atol=1e-12)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q7
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 7 (2 points): the truth (Eq. 3).** The world knows every image's true selection frequency s
# (`true_s_v1`, `true_s_v2`), so it can compute what the naive estimator tries to estimate:
# $\int \mathbb{E}_{v2}[f \mid s] \, p_1(s) \, ds$. Write `true_adjusted(s_v1, s_v2, correct_v2, bins=20)`
# the way the chapter does: cut [0, 1] into `bins` equal bins (image with frequency s goes to bin
# `floor(s * bins)`, and s = 1 to the last bin), take the model's v2 accuracy in each bin, and weight it by
# the share of v1 images in that bin. As in Question 5, leave out the bins without v2 images and renormalise
# the remaining weights. Then set `truth` to the value for every model.

# %% [raw]
# # BEGIN SOLUTION


# %%
def true_adjusted(s_v1, s_v2, correct_v2, bins=20):
    # BEGIN SOLUTION
    b1 = np.minimum(np.floor(np.asarray(s_v1) * bins).astype(int), bins - 1)
    b2 = np.minimum(np.floor(np.asarray(s_v2) * bins).astype(int), bins - 1)
    p1 = np.bincount(b1, minlength=bins) / len(b1)
    seen = np.bincount(b2, minlength=bins)
    hits = np.bincount(b2, weights=np.asarray(correct_v2, dtype=float), minlength=bins)
    keep = seen > 0
    return float(np.sum(hits[keep] / seen[keep] * p1[keep]) / p1[keep].sum())
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
truth = np.array([true_adjusted(true_s_v1, true_s_v2, row) for row in correct_v2])  # SOLUTION

# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
_got = true_adjusted(np.array([0.9, 0.9, 0.9, 0.2]), np.array([0.2, 0.8]), np.array([False, True]), bins=2)
assert np.isclose(_got, 0.75), (
    "with 2 bins, 3 of 4 v1 images lie in the upper bin [0.5, 1] and 1 in the lower; the model is right on "
    f"v2's upper image and wrong on its lower one: 0.75 * 1 + 0.25 * 0 = 0.75; got {_got}"
)
_got = true_adjusted(np.array([1.0, 0.1]), np.array([1.0, 0.1]), np.array([True, False]), bins=4)
assert np.isclose(_got, 0.5), (
    f"s = 1 belongs to the last bin (with 4 bins, [0.75, 1]): expected 0.5, got {_got}"
)
assert np.shape(truth) == (len(models),), (
    f"truth should hold one number per model; got shape {np.shape(truth)}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _true(s1, s2, f, bins):
    b1 = np.minimum((np.asarray(s1) * bins).astype(int), bins - 1)
    b2 = np.minimum((np.asarray(s2) * bins).astype(int), bins - 1)
    p1 = np.bincount(b1, minlength=bins) / len(b1)
    seen = np.bincount(b2, minlength=bins)
    hits = np.bincount(b2, weights=f.astype(float), minlength=bins)
    k = seen > 0
    return np.sum(hits[k] / seen[k] * p1[k]) / p1[k].sum()


_rng = np.random.default_rng(7)
_d = np.load("selection-bias-data.npz", allow_pickle=False)
_s1, _s2 = _rng.random(60), _rng.random(20) * 0.5 + 0.5
_f = _rng.random(20) < 0.7
assert np.isclose(true_adjusted(_s1, _s2, _f, bins=5), _true(_s1, _s2, _f, 5), atol=1e-9)
_ref = [_true(_d["true_s_v1"], _d["true_s_v2"], _row, 20) for _row in _d["correct_v2"]]
assert np.allclose(truth, _ref, atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q8
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 8 (1 point): the naive estimator's bias.** Set `bias` to each model's error of the naive
# estimate, *naive − truth*, in accuracy points (one number per model; 0.01 in accuracy is one point), and
# `mean_bias` to its mean over the models: negative means the naive estimate is too low.

# %% [raw]
# # BEGIN SOLUTION

# %%
bias = 100 * (naive - truth)  # SOLUTION
mean_bias = float(np.mean(bias))  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
spread = f"from {np.min(bias):+.2f} to {np.max(bias):+.2f}"
print(f"naive - truth: {mean_bias:+.2f} points on average over {len(models)} models ({spread})")

# %% [raw]
# # BEGIN TESTS

# %%
assert np.shape(bias) == (len(models),), f"bias should hold one number per model; got shape {np.shape(bias)}"
assert isinstance(mean_bias, (int, float, np.number)) and np.isclose(mean_bias, np.mean(bias)), (
    f"mean_bias should be one number, the mean of bias ({np.mean(bias):.4f}); got {mean_bias}"
)
assert np.max(np.abs(bias)) > 0.05 or np.allclose(naive, truth), (
    "bias is in accuracy points: a difference of 0.012 in accuracy is 1.2 points (multiply by 100)"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

assert np.allclose(bias, 100 * (np.asarray(naive) - np.asarray(truth)), atol=1e-9)
assert np.isclose(mean_bias, 100 * np.mean(np.asarray(naive) - np.asarray(truth)), atol=1e-9)

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
# **Question 9 (2 points): fewer annotators.** The paper varies the number of annotators per image (its
# Figure 5). Set `bias_by_m` to the mean bias over models, in points, of the naive estimator computed from
# only the **first** `m` annotators' votes (the first `m` columns of `votes_v1` and `votes_v2`), for each `m`
# in `ms` — one number per `m`, in the order of `ms`. The truth does not change.

# %%
ms = [2, 5, 10, 20, 40]

# %% [raw]
# # BEGIN SOLUTION

# %%
bias_by_m = []
for m in ms:
    counts_m_v1 = votes_v1[:, :m].sum(axis=1)  # SOLUTION
    counts_m_v2 = votes_v2[:, :m].sum(axis=1)  # SOLUTION
    estimates = np.array([naive_adjusted(counts_m_v1, counts_m_v2, row, m) for row in correct_v2])  # SOLUTION
    mean_bias_m = 100 * np.mean(estimates - truth)  # SOLUTION
    bias_by_m.append(mean_bias_m)
bias_by_m = np.array(bias_by_m)

# %% [raw]
# # END SOLUTION

# %%
print(pd.Series(np.round(bias_by_m, 2), index=pd.Index(ms, name="annotators m"), name="mean bias (points)"))

# %% [raw]
# # BEGIN TESTS

# %%
assert np.shape(bias_by_m) == (len(ms),), (
    f"bias_by_m should hold one number per m in ms, {len(ms)} in all; got shape {np.shape(bias_by_m)}"
)
assert np.isclose(bias_by_m[-1], mean_bias, atol=1e-6), (
    f"with m = {ms[-1]} = n, every annotator's votes are used: bias_by_m[-1] should equal mean_bias "
    f"({mean_bias:.4f}); got {bias_by_m[-1]:.4f}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("selection-bias-data.npz", allow_pickle=False)
for _m, _got in zip([2, 5, 10, 20, 40], bias_by_m, strict=True):
    _c1, _c2 = _d["votes_v1"][:, :_m].sum(1), _d["votes_v2"][:, :_m].sum(1)
    _est = np.array([naive_adjusted(_c1, _c2, _row, _m) for _row in _d["correct_v2"]])
    assert np.isclose(_got, 100 * np.mean(_est - np.asarray(truth)), atol=1e-9)

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
# **Question 10 (1 point): how much of the drop is real?** Averaged over the models, in points: set
# `gap_observed` to the drop from v1 to v2 (*v1 − v2* accuracy), `gap_naive` to the drop that remains after
# the naive adjustment (*v1 − naive*), and `gap_true` to the drop that remains after the true adjustment
# (*v1 − truth*). Engstrom et al. report that "only an estimated 3.6% ± 1.5% of the original 11.7% ± 1.0%
# accuracy drop remains unaccounted for" (Engstrom et al. 2020, Abstract); the world's analogues are
# `gap_true` of `gap_observed`.

# %% [raw]
# # BEGIN SOLUTION

# %%
gap_observed = 100 * float(np.mean(acc_v1 - acc_v2))  # SOLUTION
gap_naive = 100 * float(np.mean(acc_v1 - naive))  # SOLUTION
gap_true = 100 * float(np.mean(acc_v1 - truth))  # SOLUTION
# BEGIN SOLUTION NO PROMPT
# Checks the statements of Question 11's model answer: a false one fails the solution.
assert mean_bias < 0 and gap_true < gap_naive < gap_observed
assert ms[0] == 2 and ms[-1] == 40 and np.all(bias_by_m < 0) and np.all(np.diff(bias_by_m) > 0)
assert abs(gap_true) < 0.1 * gap_observed
# END SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"observed drop: {gap_observed:.2f} points")
print(f"after the naive adjustment: {gap_naive:.2f} points ({gap_naive / gap_observed:.0%} of the drop)")
print(f"after the true adjustment: {gap_true:.2f} points ({gap_true / gap_observed:.0%} of the drop)")

# %% [raw]
# # BEGIN TESTS

# %%
for _name, _value in (("gap_observed", gap_observed), ("gap_naive", gap_naive), ("gap_true", gap_true)):
    assert isinstance(_value, (int, float, np.number)), (
        f"{_name} should be one number (a mean over the models); got {type(_value).__name__}"
    )
assert np.isclose(gap_naive - gap_true, -mean_bias, atol=1e-6), (
    "the two remaining gaps differ by exactly the naive estimator's mean bias: gap_naive - gap_true = "
    f"mean(truth - naive) = -mean_bias = {-mean_bias:.3f}; got {gap_naive - gap_true:.3f}"
)
assert abs(gap_observed) > 0.1, "the gaps are in accuracy points: multiply the difference of fractions by 100"

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("selection-bias-data.npz", allow_pickle=False)
_a1, _a2 = _d["correct_v1"].mean(1), _d["correct_v2"].mean(1)
assert np.isclose(gap_observed, 100 * np.mean(_a1 - _a2), atol=1e-9)
assert np.isclose(gap_naive, 100 * np.mean(_a1 - np.asarray(naive)), atol=1e-9)
assert np.isclose(gap_true, 100 * np.mean(_a1 - np.asarray(truth)), atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q11
# points: 3
# manual: true

# %% [markdown]
# **Question 11 (3 points, graded by hand): why is the naive estimator biased?** Engstrom et al. write that
# "The naïve estimator is a computable but biased estimator of the selection-adjusted accuracy" (Engstrom et
# al. 2020, §5.1). In a short paragraph (5–8 sentences), using your numbers:
#
# 1. Say which way the naive estimate errs on this world (`mean_bias`), and explain why, starting from what ŝ
#    is: a share of `n` noisy votes. (Hint: v2 was *selected* for its observed frequencies. Among images
#    selected for a high ŝ, is the true s as high as the ŝ that got them selected?)
# 2. Say how the bias changes with the number of annotators (`bias_by_m`), and why.
# 3. Compare with the paper's headline, "only an estimated 3.6% ± 1.5% of the original 11.7% ± 1.0% accuracy
#    drop remains unaccounted for" (Abstract): what share of the world's observed drop remains after the naive
#    adjustment, and after the true one? Would a naive adjustment have overstated or understated how much of
#    the drop is real?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# *Marking: one point for each part; an answer earns a part's point when it gives the number and the
# reason.*
#
# The naive estimate is too low (`mean_bias` is negative): it moves v2's accuracy towards v1's, but not all
# the way. ŝ = k/n is a noisy measurement of s, and v2 was matched to v1 on that measurement, so the v2 images
# at a high level k are partly images whose votes were lucky: their true s is lower than k/n (regression to
# the mean; the paper's coin analogy, §3, footnote 9), and a lower s means a lower accuracy. Conditioning v2's
# accuracy on ŝ instead of s therefore underestimates v2's accuracy at the high levels, where v1 puts most of
# its weight, and the reweighted sum stays below the truth: the naive estimator is itself statistic matching
# on noisy frequencies. With fewer annotators ŝ is noisier (its variance s(1 − s)/m grows as m falls), so
# ŝ and s differ more and the bias grows (`bias_by_m` is most negative at m = 2 and smallest in size at
# m = 40); it vanishes only as m grows without bound. Of the `gap_observed`-point drop, the naive adjustment
# leaves `gap_naive` points and the true adjustment `gap_true`, almost nothing: in this world v2 differs from
# v1 only in how hard its images are, which the true selection frequency measures. A naive adjustment thus
# overstates how much of the drop is real. Engstrom et al.'s 3.6 of 11.7 points (about 30% of the drop) come
# from their parametric estimator, built to remove this bias; their naive estimate left more (5.7 points,
# §5.1).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# **Done.** Save the notebook and hand it in. The chapter continues where this lab stops: the jackknife
# (§5.2) and the parametric estimator (§5.3) try to remove the bias you measured.
