# %% [raw]
# # ASSIGNMENT CONFIG
# name: replication-world
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# generate: true
# files:
#   - replication-world-data.npz

# %% [markdown]
# # Lab 1: why does MatchedFrequency drop the most?
#
# Recht et al. (2019, §4) built ImageNetV2 three ways from one pool of candidate images. Crowd workers said
# whether each candidate shows its class; the share of "yes" is the image's *selection frequency*.
# **MatchedFrequency** sampled, class by class, the histogram of the original validation set's frequencies over
# five bins (App. C.1.2); **Threshold0.7** drew among the candidates selected at least 70% of the time;
# **TopImages** took the most frequently selected candidates of each class. Models lost 11.8 points of top-1
# accuracy on MatchedFrequency, 3.2 on Threshold0.7, and gained 2.1 on TopImages (their Table 2). Engstrom et
# al. (2020, §2) argue that MatchedFrequency's drop is partly an artefact: the frequencies it matched are
# *observed* ones, shares of a few noisy votes.
#
# In this lab you sample the three sets yourself in the replication world, where every image also has a *true*
# selection frequency s (the probability that an annotator says "yes"), measure the models' accuracy change on
# each set, and find out why MatchedFrequency drops the most.
#
# **The data** (`replication-world-data.npz`, from the chapter's default world): the replication round's votes
# (10 annotators per image) on the 10,000 images of the original test set v1 and on the 16,000 candidates of
# the pool, every image's class and true selection frequency, and whether each of the zoo's 31 models (trained
# on the world's training set) classifies each image correctly.
#
# Run the cells in order. `grader.check("q1")` runs a question's public tests; more tests run when the lab is
# graded. Questions marked *graded by hand* are read by your teacher.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

data = np.load("replication-world-data.npz", allow_pickle=False)
v1_votes, pool_votes = data["v1_votes"], data["pool_votes"]  # images x annotators, True = "yes"
v1_labels, pool_labels = data["v1_labels"], data["pool_labels"]  # each image's class, 0-9
v1_s, pool_s = data["v1_s"], data["pool_s"]  # each image's true selection frequency
v1_correct, pool_correct = data["v1_correct"], data["pool_correct"]  # models x images, True = correct
models = data["models"]  # the models' names
edges = data["bin_edges"]  # left edges of MatchedFrequency's five bins: [0, 0.2, 0.4, 0.6, 0.8]
per_class = int(data["per_class"])  # images per class in each new test set
threshold = float(data["threshold"])  # Threshold0.7's threshold
n = v1_votes.shape[1]  # annotators per image
print(
    f"v1: {len(v1_labels)} images, pool: {len(pool_labels)} candidates, {n} annotators, {len(models)} models"
)

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 1 (1 point): observed selection frequencies.** Set `v1_shat` and `pool_shat` to each image's
# observed selection frequency ŝ, the share of its `n` annotators who said "yes" (numbers k/n), and
# `pool_error` to the mean absolute difference |ŝ − s| over the pool's candidates: how far a reading of 10
# votes lies from the true frequency, on average.

# %% [raw]
# # BEGIN SOLUTION

# %%
v1_shat = v1_votes.mean(axis=1)  # SOLUTION
pool_shat = pool_votes.mean(axis=1)  # SOLUTION
pool_error = float(np.mean(np.abs(pool_shat - pool_s)))  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"mean observed frequency: v1 {np.mean(v1_shat):.3f}, pool {np.mean(pool_shat):.3f}")
print(f"mean |observed - true| on the pool: {pool_error:.3f}")

# %% [raw]
# # BEGIN TESTS

# %%
for _name, _value, _votes in (("v1_shat", v1_shat, v1_votes), ("pool_shat", pool_shat, pool_votes)):
    assert np.shape(_value) == (len(_votes),), (
        f"{_name} should hold one frequency per image, shape ({len(_votes)},); got shape {np.shape(_value)}"
    )
    assert np.allclose(np.asarray(_value) * n, np.round(np.asarray(_value) * n)) and np.all(
        (0 <= np.asarray(_value)) & (np.asarray(_value) <= 1)
    ), f"{_name} should hold shares k/n of the n = {n} votes, between 0 and 1"
assert np.isclose(v1_shat[0], v1_votes[0].sum() / n), (
    f"the first v1 image has {v1_votes[0].sum()} 'yes' of {n}: ŝ = {v1_votes[0].sum() / n}; got {v1_shat[0]}"
)
assert isinstance(pool_error, (int, float, np.number)) and 0 <= pool_error <= 1, (
    f"pool_error should be one number between 0 and 1; got {pool_error!r}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("replication-world-data.npz", allow_pickle=False)
assert np.allclose(v1_shat, _d["v1_votes"].sum(1) / 10) and np.allclose(
    pool_shat, _d["pool_votes"].sum(1) / 10
)
assert np.isclose(pool_error, np.abs(_d["pool_votes"].sum(1) / 10 - _d["pool_s"]).mean(), atol=1e-12)

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
# **Question 2 (1 point): the five bins.** MatchedFrequency's bins are [0, 0.2), [0.2, 0.4), [0.4, 0.6),
# [0.6, 0.8) and [0.8, 1] (App. C.1.2: the last one includes 1). Write `frequency_bin(freq, edges)`: for every
# frequency, the index 0–4 of its bin, where `edges` holds the bins' left edges; return an integer array of the
# shape of `freq`. (`np.searchsorted` or `np.digitize` do most of it.)

# %% [raw]
# # BEGIN SOLUTION


# %%
def frequency_bin(freq, edges):
    # BEGIN SOLUTION
    freq = np.asarray(freq, dtype=float)
    return np.clip(np.searchsorted(edges, freq, side="right") - 1, 0, len(edges) - 1)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
_got = frequency_bin(np.array([0.0, 0.1, 0.2, 0.5, 0.79, 0.8, 1.0]), edges)
assert np.shape(_got) == (7,), f"seven frequencies give seven bins; got shape {np.shape(_got)}"
assert np.asarray(_got).tolist() == [0, 0, 1, 2, 3, 4, 4], (
    "frequencies [0, 0.1, 0.2, 0.5, 0.79, 0.8, 1] lie in bins [0, 0, 1, 2, 3, 4, 4]: a left edge belongs to its "
    f"bin, and 1 to the last one; got {np.asarray(_got).tolist()}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_rng = np.random.default_rng(2)
for _e in (np.array([0.0, 0.2, 0.4, 0.6, 0.8]), np.array([0.0, 0.5]), np.array([0.0, 0.1, 0.3, 0.9])):
    _f = np.concatenate([_rng.random(200), _e, [1.0]])
    _ref = np.array([np.sum(_e <= _x) - 1 for _x in _f])
    assert np.array_equal(frequency_bin(_f, _e), _ref)
_k = np.load("replication-world-data.npz", allow_pickle=False)["pool_votes"].sum(1)  # k of 10 votes
assert np.array_equal(frequency_bin(_k / 10, np.array([0.0, 0.2, 0.4, 0.6, 0.8])), np.minimum(_k // 2, 4))

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
# **Question 3 (2 points): how many images from each bin.** For one class, MatchedFrequency takes its
# `per_class` images from the bins in the proportions of that class's v1 images ("we first computed the target
# number of images for each histogram bin", App. C.1.2). Write `bin_targets(counts, per_class)`: given how many
# v1 images of the class fall in each bin (`counts`, one number per bin), whole numbers of images per bin that
# sum to exactly `per_class`. Use the *largest remainder* rule: compute the exact shares
# `counts / counts.sum() * per_class`, round each down, and give the images still missing one each to the bins
# with the largest remainders (on a tie, the lower bin first).

# %% [raw]
# # BEGIN SOLUTION


# %%
def bin_targets(counts, per_class):
    # BEGIN SOLUTION
    counts = np.asarray(counts, dtype=float)
    exact = counts / counts.sum() * per_class
    targets = np.floor(exact).astype(int)
    missing = per_class - targets.sum()
    targets[np.argsort(-(exact - targets), kind="stable")[:missing]] += 1
    return targets
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
class0 = np.bincount(frequency_bin(v1_shat[v1_labels == 0], edges), minlength=len(edges))
print(f"class 0: v1 images per bin {class0.tolist()}, targets {bin_targets(class0, per_class).tolist()}")

# %% [raw]
# # BEGIN TESTS

# %%
_got = bin_targets(np.array([1, 1, 2]), 8)
assert np.shape(_got) == (3,), f"three bins give three targets; got shape {np.shape(_got)}"
assert np.asarray(_got).tolist() == [2, 2, 4], f"counts [1, 1, 2] give exactly [2, 2, 4] of 8; got {_got}"
_got = bin_targets(np.array([2, 36, 153, 343, 455]), 200)
assert np.asarray(_got).tolist() == [1, 7, 31, 69, 92], (
    "counts [2, 36, 153, 343, 455] give the exact shares [0.40, 7.28, 30.94, 69.37, 92.01]; rounded down "
    "[0, 7, 30, 69, 92] sum to 198, so the 2 missing images go to the largest remainders, 0.94 (bin 2) and "
    f"0.40 (bin 0): expected [1, 7, 31, 69, 92], got {np.asarray(_got).tolist()}"
)
_got = bin_targets(np.array([1, 1, 1]), 2)
assert np.asarray(_got).tolist() == [1, 1, 0], (
    f"counts [1, 1, 1] and 2 images: equal remainders, so the lower bins first: [1, 1, 0]; got {_got}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _targets(c, total):
    raw = c / c.sum() * total
    out = np.floor(raw).astype(int)
    for _i in sorted(range(len(c)), key=lambda i: (-(raw[i] - out[i]), i))[: total - out.sum()]:
        out[_i] += 1
    return out


_rng = np.random.default_rng(3)
for _ in range(30):
    _c = _rng.integers(0, 40, _rng.integers(2, 8))
    _c[0] += 1  # at least one image
    _t = int(_rng.integers(1, 60))
    assert np.array_equal(bin_targets(_c, _t), _targets(_c, _t))

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q4
# points: 3
# all_or_nothing: true

# %% [markdown]
# **Question 4 (3 points): MatchedFrequency.** Write `matched_frequency(ref_freq, ref_labels, pool_freq,
# pool_labels, per_class, edges, rng)`: for each class c = 0, …, 9, count the reference (v1) images of class c
# in each bin, turn the counts into targets with your `bin_targets`, and for each bin draw that many of the
# class's pool candidates in the bin **uniformly at random, without replacement** (`rng.choice(candidates,
# size, replace=False)`). Return the positions in the pool of every image drawn (one integer array, 10 ×
# `per_class` long). In this world every bin of every class holds enough candidates, so you need no rule for a
# bin that runs out (Recht et al. then took the rest from the next higher bin). Then set `mf` to the
# MatchedFrequency set drawn from the observed frequencies, with the `rng` of the cell below.

# %% [raw]
# # BEGIN SOLUTION


# %%
def matched_frequency(ref_freq, ref_labels, pool_freq, pool_labels, per_class, edges, rng):
    # BEGIN SOLUTION
    ref_bins, pool_bins = frequency_bin(ref_freq, edges), frequency_bin(pool_freq, edges)
    chosen = []
    for c in range(10):
        targets = bin_targets(np.bincount(ref_bins[ref_labels == c], minlength=len(edges)), per_class)
        for b, size in enumerate(targets):
            candidates = np.flatnonzero((pool_labels == c) & (pool_bins == b))
            chosen.extend(rng.choice(candidates, size=size, replace=False))
    return np.array(chosen, dtype=int)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
rng = np.random.default_rng(0)

# %% [raw]
# # BEGIN SOLUTION

# %%
mf = matched_frequency(v1_shat, v1_labels, pool_shat, pool_labels, per_class, edges, rng)  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(
    f"MatchedFrequency: {len(mf)} images, mean observed frequency {pool_shat[mf].mean():.3f} (v1: {v1_shat.mean():.3f})"
)

# %% [raw]
# # BEGIN TESTS

# %%
_ref_f, _ref_l = np.full(20, 0.9), np.repeat(np.arange(10), 2)  # every reference image in the top bin
_pool_f, _pool_l = np.tile([0.1, 0.3, 0.5, 0.9, 1.0], 10), np.repeat(np.arange(10), 5)
_got = np.asarray(matched_frequency(_ref_f, _ref_l, _pool_f, _pool_l, 2, edges, np.random.default_rng(1)))
assert _got.shape == (20,), f"10 classes x 2 images per class: 20 positions; got shape {_got.shape}"
assert sorted(_got.tolist()) == [5 * c + i for c in range(10) for i in (3, 4)], (
    "every reference image is in the top bin, so each class's 2 images are its two pool candidates there "
    f"(positions 3 and 4 of each block of 5); got {sorted(_got.tolist())}"
)
assert np.shape(mf) == (10 * per_class,) and len(set(np.asarray(mf).tolist())) == len(mf), (
    f"mf should hold {10 * per_class} different positions in the pool; got shape {np.shape(mf)}"
)
assert np.array_equal(np.bincount(pool_labels[mf], minlength=10), np.full(10, per_class)), (
    f"mf should hold {per_class} images of each class"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _check(got, rf, rl, pf, pl, k, e):  # against your own frequency_bin and bin_targets
    got = np.asarray(got)
    assert len(set(got.tolist())) == len(got) == 10 * k
    rb, pb = np.asarray(frequency_bin(rf, e)), np.asarray(frequency_bin(pf, e))
    for c in range(10):
        counts = np.bincount(rb[rl == c], minlength=len(e))
        assert np.array_equal(np.bincount(pb[got][pl[got] == c], minlength=len(e)), bin_targets(counts, k))


_d = np.load("replication-world-data.npz", allow_pickle=False)
_e = np.array([0.0, 0.2, 0.4, 0.6, 0.8])
_rf, _pf = _d["v1_votes"].sum(1) / 10, _d["pool_votes"].sum(1) / 10
_rl, _pl = _d["v1_labels"], _d["pool_labels"]
_check(mf, _rf, _rl, _pf, _pl, 200, _e)
_a = matched_frequency(_rf, _rl, _pf, _pl, 200, _e, np.random.default_rng(11))
_b = matched_frequency(_rf, _rl, _pf, _pl, 200, _e, np.random.default_rng(12))
_check(_a, _rf, _rl, _pf, _pl, 200, _e)
assert set(np.asarray(_a).tolist()) != set(np.asarray(_b).tolist())  # drawn at random
_rng = np.random.default_rng(13)
_rf, _rl = _rng.random(300), np.repeat(np.arange(10), 30)
_pf, _pl = _rng.random(3000), _rng.integers(0, 10, 3000)
_check(matched_frequency(_rf, _rl, _pf, _pl, 7, _e, _rng), _rf, _rl, _pf, _pl, 7, _e)

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
# **Question 5 (2 points): Threshold0.7 and TopImages.** Write `threshold_sample(freq, labels, per_class,
# threshold, rng)`: for each class, `per_class` of its candidates drawn at random without replacement among
# those with `freq >= threshold` ("For each class, we sampled ten images with selection frequency at least
# 0.7", §4); and `top_images(freq, labels, per_class, rng)`: for each class, the `per_class` candidates with
# the highest `freq` ("For each class, we chose the ten images with highest selection frequency", §4). With 10
# annotators many candidates share a frequency: break ties at random (shuffle the class's candidates with
# `rng.permutation` before a stable sort). Both return positions in the pool. Then set `t07` and `top` from
# the observed frequencies, with `np.random.default_rng(1)` and `np.random.default_rng(2)`.

# %% [raw]
# # BEGIN SOLUTION


# %%
def threshold_sample(freq, labels, per_class, threshold, rng):
    # BEGIN SOLUTION
    chosen = []
    for c in range(10):
        eligible = np.flatnonzero((labels == c) & (freq >= threshold))
        chosen.extend(rng.choice(eligible, size=per_class, replace=False))
    return np.array(chosen, dtype=int)
    # END SOLUTION


def top_images(freq, labels, per_class, rng):
    # BEGIN SOLUTION
    chosen = []
    for c in range(10):
        members = rng.permutation(np.flatnonzero(labels == c))  # ties broken at random
        chosen.extend(members[np.argsort(-freq[members], kind="stable")[:per_class]])
    return np.array(chosen, dtype=int)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
t07 = threshold_sample(pool_shat, pool_labels, per_class, threshold, np.random.default_rng(1))  # SOLUTION
top = top_images(pool_shat, pool_labels, per_class, np.random.default_rng(2))  # SOLUTION

# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
_f, _l = np.tile([0.1, 0.5, 0.7, 0.9, 1.0], 10), np.repeat(np.arange(10), 5)
_got = np.asarray(top_images(_f, _l, 2, np.random.default_rng(0)))
assert _got.shape == (20,), f"10 classes x 2 images: 20 positions; got shape {_got.shape}"
assert sorted(_f[_got].tolist()) == [0.9] * 10 + [1.0] * 10, (
    "with frequencies [0.1, 0.5, 0.7, 0.9, 1] in every class, TopImages takes 0.9 and 1 of each class; got the "
    f"frequencies {sorted(_f[_got].tolist())}"
)
_got = np.asarray(threshold_sample(_f, _l, 3, 0.7, np.random.default_rng(0)))
assert _got.shape == (30,) and np.all(_f[_got] >= 0.7) and len(set(_got.tolist())) == 30, (
    "with 3 images per class and frequencies [0.1, 0.5, 0.7, 0.9, 1] in every class, Threshold0.7 takes the "
    f"three at 0.7 or more (0.7 included) of each class; got the frequencies {sorted(_f[_got].tolist())}"
)
for _name, _set in (("t07", t07), ("top", top)):
    assert np.shape(_set) == (10 * per_class,), f"{_name} should hold {10 * per_class} positions in the pool"

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("replication-world-data.npz", allow_pickle=False)
_f, _l = _d["pool_votes"].sum(1) / 10, _d["pool_labels"]
_rng = np.random.default_rng(21)
_cases = [(_f, _l, 200, t07, top), (_rng.random(500), _rng.integers(0, 10, 500), 4, None, None)]
for _fr, _lb, _k, _t, _top in _cases:
    _t = threshold_sample(_fr, _lb, _k, 0.7, np.random.default_rng(5)) if _t is None else _t
    _top = top_images(_fr, _lb, _k, np.random.default_rng(6)) if _top is None else _top
    for _set in (np.asarray(_t), np.asarray(_top)):
        assert len(set(_set.tolist())) == len(_set) == 10 * _k
        assert np.array_equal(np.bincount(_lb[_set], minlength=10), np.full(10, _k))
    assert np.all(_fr[np.asarray(_t)] >= 0.7 - 1e-12)
    for c in range(10):  # ties may fall either way: the chosen frequencies must be the class's highest
        _mine = np.sort(_fr[np.asarray(_top)][_lb[np.asarray(_top)] == c])
        assert np.array_equal(_mine, np.sort(_fr[_lb == c])[-_k:])
_a = threshold_sample(_f, _l, 200, 0.7, np.random.default_rng(7))
assert set(np.asarray(_a).tolist()) != set(np.asarray(t07).tolist())  # drawn at random

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
# **Question 6 (2 points): the accuracy change (Table 2).** Write `accuracy_change(chosen)`: for each model,
# its accuracy on the pool candidates at positions `chosen` minus its accuracy on v1, in points (one number per
# model, in the order of `models`; use `pool_correct` and `v1_correct`). Then set `mean_change` to a dict with
# the mean over the models of each set's change, under the keys `"matchedfrequency"`, `"threshold0.7"` and
# `"topimages"`. Recht et al.'s Table 2 gives −11.8, −3.2 and +2.1 points (ImageNet, top-1).

# %% [raw]
# # BEGIN SOLUTION


# %%
def accuracy_change(chosen):
    return 100 * (pool_correct[:, chosen].mean(axis=1) - v1_correct.mean(axis=1))  # SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
sets = {"matchedfrequency": mf, "threshold0.7": t07, "topimages": top}
mean_change = {name: float(np.mean(accuracy_change(chosen))) for name, chosen in sets.items()}  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
paper = {"matchedfrequency": -11.8, "threshold0.7": -3.2, "topimages": 2.1}
print(pd.DataFrame({"this world": mean_change, "Recht et al. (ImageNet top-1)": paper}).round(2))

# %% [raw]
# # BEGIN TESTS

# %%
_got = accuracy_change(np.arange(len(pool_labels)))
assert np.shape(_got) == (len(models),), (
    f"accuracy_change should give one number per model, shape ({len(models)},); got shape {np.shape(_got)}"
)
assert np.isclose(_got[0], 100 * (pool_correct[0].mean() - v1_correct[0].mean())), (
    "on the whole pool, the first model's change is 100 * (its pool accuracy - its v1 accuracy) = "
    f"{100 * (pool_correct[0].mean() - v1_correct[0].mean()):.3f} points; got {_got[0]:.3f}"
)
assert isinstance(mean_change, dict) and set(mean_change) == {
    "matchedfrequency",
    "threshold0.7",
    "topimages",
}, "mean_change should be a dict with the keys 'matchedfrequency', 'threshold0.7' and 'topimages'"

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("replication-world-data.npz", allow_pickle=False)
_v1 = _d["v1_correct"].mean(1)
_rng = np.random.default_rng(9)
for _set in (_rng.choice(16000, 50, replace=False), np.asarray(mf), np.asarray(top)):
    assert np.allclose(accuracy_change(_set), 100 * (_d["pool_correct"][:, _set].mean(1) - _v1), atol=1e-9)
for _name, _set in (("matchedfrequency", mf), ("threshold0.7", t07), ("topimages", top)):
    _ref = np.mean(100 * (_d["pool_correct"][:, np.asarray(_set)].mean(1) - _v1))
    assert np.isclose(mean_change[_name], _ref, atol=1e-9)

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
# **Question 7 (1 point): observed and true frequencies of each set.** Set `freq_table` to a DataFrame with
# one row per set, in the order `"v1"`, `"matchedfrequency"`, `"threshold0.7"`, `"topimages"` (the index), and
# two columns: `"observed"`, the set's mean observed frequency ŝ, and `"true"`, its mean true frequency s.
# Recht et al. could see only the first column (0.71 for the original validation set; 0.73, 0.85 and 0.93 for
# their three sets, §4).

# %% [raw]
# # BEGIN SOLUTION

# %%
observed_means = [v1_shat.mean()] + [pool_shat[chosen].mean() for chosen in sets.values()]  # SOLUTION
true_means = [v1_s.mean()] + [pool_s[chosen].mean() for chosen in sets.values()]  # SOLUTION
freq_table = pd.DataFrame({"observed": observed_means, "true": true_means}, index=["v1", *sets])  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
freq_table.round(3)

# %% [raw]
# # BEGIN TESTS

# %%
assert isinstance(freq_table, pd.DataFrame), (
    f"freq_table should be a DataFrame; got {type(freq_table).__name__}"
)
assert list(freq_table.index) == ["v1", "matchedfrequency", "threshold0.7", "topimages"], (
    f"the rows should be v1, matchedfrequency, threshold0.7, topimages, in that order; got {list(freq_table.index)}"
)
assert list(freq_table.columns) == ["observed", "true"], (
    f"the columns should be 'observed' and 'true'; got {list(freq_table.columns)}"
)
assert np.isclose(freq_table.loc["v1", "observed"], np.mean(v1_shat)), (
    f"v1's observed mean is the mean of v1_shat, {np.mean(v1_shat):.4f}; got {freq_table.loc['v1', 'observed']}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("replication-world-data.npz", allow_pickle=False)
_pf = _d["pool_votes"].sum(1) / 10
_ref = [(_d["v1_votes"].sum(1).mean() / 10, _d["v1_s"].mean())]
_ref += [(_pf[np.asarray(_s)].mean(), _d["pool_s"][np.asarray(_s)].mean()) for _s in (mf, t07, top)]
assert np.allclose(freq_table[["observed", "true"]].to_numpy(float), _ref, atol=1e-12)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q8
# points: 2
# manual: true

# %% [markdown]
# **Question 8 (2 points, graded by hand): a plot.** Show what MatchedFrequency matched and what it did not:
# in two panels side by side, the distribution of the **observed** frequency ŝ on v1 and on MatchedFrequency
# (left), and the distribution of the **true** frequency s on the same two sets (right). Use histograms
# normalised to densities (`density=True`, the same bins for both sets, drawn so that both stay visible), mark
# each set's mean with a vertical line, and give each panel axis labels, a legend and a title.

# %% [raw]
# # BEGIN SOLUTION

# %%
# your plot here
# BEGIN SOLUTION
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
for ax, (v1_values, mf_values, what) in zip(
    axes,
    ((v1_shat, pool_shat[mf], "observed frequency ŝ"), (v1_s, pool_s[mf], "true frequency s")),
    strict=True,
):
    bins = np.linspace(0, 1, 12) if what.startswith("observed") else np.linspace(0, 1, 26)
    for values, name, color in ((v1_values, "v1", "C0"), (mf_values, "MatchedFrequency", "C3")):
        ax.hist(values, bins=bins, density=True, histtype="step", linewidth=2, color=color, label=name)
        ax.axvline(values.mean(), color=color, linestyle="--", label=f"mean {name}: {values.mean():.3f}")
    ax.set_xlabel(what)
    ax.set_title(f"{what.split()[0].capitalize()} selection frequencies")
    ax.legend(fontsize=8, loc="upper left")
axes[0].set_ylabel("density")
plt.show()
# END SOLUTION

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q9
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 9 (2 points): the same reading, a different truth.** Engstrom et al. point out that "the most
# likely value of s(x) for a given noisy reading of ŝ(x) actually depends on the distribution from which x is
# drawn" (§2, Figure 2). Write `mean_true_by_level(shat, s, n)`: for each level k = 0, 1, …, n, the mean true
# frequency s of the images whose observed frequency is ŝ = k/n, and `np.nan` where no image has that level
# (an array of n + 1 numbers; `np.round(shat * n)` gives the level k as a whole number). Then set `v1_curve`
# and `pool_curve` to it on v1 and on the pool, and `level_gap` to `v1_curve - pool_curve`.

# %% [raw]
# # BEGIN SOLUTION


# %%
def mean_true_by_level(shat, s, n):
    # BEGIN SOLUTION
    k = np.round(np.asarray(shat) * n).astype(int)
    seen = np.bincount(k, minlength=n + 1)
    total = np.bincount(k, weights=np.asarray(s, dtype=float), minlength=n + 1)
    out = np.full(n + 1, np.nan)
    out[seen > 0] = total[seen > 0] / seen[seen > 0]
    return out
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
v1_curve = mean_true_by_level(v1_shat, v1_s, n)  # SOLUTION
pool_curve = mean_true_by_level(pool_shat, pool_s, n)  # SOLUTION
level_gap = v1_curve - pool_curve  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(
    pd.DataFrame(
        {"v1": v1_curve, "pool": pool_curve, "v1 - pool": level_gap},
        index=pd.Index(np.arange(n + 1) / n, name="ŝ"),
    ).round(3)
)

# %% [raw]
# # BEGIN TESTS

# %%
_got = mean_true_by_level(np.array([0.0, 0.0, 1.0]), np.array([0.1, 0.3, 0.8]), 2)
assert np.shape(_got) == (3,), f"with n = 2 there are 3 levels (k = 0, 1, 2); got shape {np.shape(_got)}"
assert np.allclose(_got, [0.2, np.nan, 0.8], equal_nan=True), (
    "ŝ = [0, 0, 1] with s = [0.1, 0.3, 0.8] and n = 2: level 0 has mean s 0.2, no image has level 1 (nan), "
    f"level 2 has 0.8; expected [0.2, nan, 0.8], got {_got}"
)
assert np.shape(level_gap) == (n + 1,), (
    f"level_gap should hold one number per level, {n + 1}; got {np.shape(level_gap)}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _curve(sh, s, n):
    return np.array(
        [s[np.isclose(sh * n, k)].mean() if np.any(np.isclose(sh * n, k)) else np.nan for k in range(n + 1)]
    )


_rng = np.random.default_rng(10)
_s = _rng.random(40)
_sh = _rng.integers(0, 4, 40) / 7  # levels 4-7 empty
assert np.allclose(mean_true_by_level(_sh, _s, 7), _curve(_sh, _s, 7), equal_nan=True, atol=1e-12)
_d = np.load("replication-world-data.npz", allow_pickle=False)
_a = _curve(_d["v1_votes"].sum(1) / 10, _d["v1_s"], 10)
_b = _curve(_d["pool_votes"].sum(1) / 10, _d["pool_s"], 10)
assert np.allclose(v1_curve, _a, equal_nan=True) and np.allclose(pool_curve, _b, equal_nan=True)
assert np.allclose(level_gap, _a - _b, equal_nan=True)

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
# **Question 10 (1 point): matching the truth instead.** No real replication can see s, but this world can.
# Draw MatchedFrequency again with your `matched_frequency`, this time matching the **true** frequencies (`v1_s`
# and `pool_s` in place of the observed ones), with `np.random.default_rng(0)` as `rng`; set `mf_true` to the set,
# `ablation_change` to the mean accuracy change over the models on it (points), and `removed` to the share of
# MatchedFrequency's drop that disappears: `1 - ablation_change / mean_change["matchedfrequency"]`.

# %% [raw]
# # BEGIN SOLUTION

# %%
rng = np.random.default_rng(0)
mf_true = matched_frequency(v1_s, v1_labels, pool_s, pool_labels, per_class, edges, rng)  # SOLUTION
ablation_change = float(np.mean(accuracy_change(mf_true)))  # SOLUTION
removed = 1 - ablation_change / mean_change["matchedfrequency"]  # SOLUTION
# BEGIN SOLUTION NO PROMPT
# Checks the statements of Question 11's model answer: a false one fails the solution.
_mc, _obs, _true = mean_change, freq_table["observed"], freq_table["true"]
assert _mc["matchedfrequency"] < _mc["threshold0.7"] < 0 < _mc["topimages"]
assert _obs["matchedfrequency"] < _obs["threshold0.7"] < _obs["topimages"]
assert abs(_obs["v1"] - _obs["matchedfrequency"]) < 0.02 and _true["matchedfrequency"] < _true["v1"]
assert np.all(level_gap[~np.isnan(level_gap)] > 0)
assert removed > 0.5 and abs(ablation_change) < abs(_mc["matchedfrequency"])
assert _true["threshold0.7"] < _obs["threshold0.7"] and _true["topimages"] < _obs["topimages"]
assert min(_true["threshold0.7"], _true["topimages"]) > _true["matchedfrequency"]
assert _true["topimages"] > _true["v1"]
# END SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"matching true frequencies: mean change {ablation_change:+.2f} points instead of "
      f"{mean_change['matchedfrequency']:+.2f}; {removed:.0%} of the drop disappears")  # fmt: skip

# %% [raw]
# # BEGIN TESTS

# %%
assert np.shape(mf_true) == (10 * per_class,), f"mf_true should hold {10 * per_class} positions in the pool"
assert isinstance(ablation_change, (int, float, np.number)), "ablation_change should be one number (points)"
assert np.isclose(removed, 1 - ablation_change / mean_change["matchedfrequency"]), (
    "removed should be 1 - ablation_change / mean_change['matchedfrequency']"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("replication-world-data.npz", allow_pickle=False)
_e = np.array([0.0, 0.2, 0.4, 0.6, 0.8])
_got = np.asarray(mf_true)
_pb, _rb = np.asarray(frequency_bin(_d["pool_s"], _e)), np.asarray(frequency_bin(_d["v1_s"], _e))  # your bins
for c in range(10):
    _counts = np.bincount(_rb[_d["v1_labels"] == c], minlength=5)
    _mine = np.bincount(_pb[_got][_d["pool_labels"][_got] == c], minlength=5)
    assert np.array_equal(_mine, bin_targets(_counts, 200))
_ref = np.mean(100 * (_d["pool_correct"][:, _got].mean(1) - _d["v1_correct"].mean(1)))
assert np.isclose(ablation_change, _ref, atol=1e-9)

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
# **Question 11 (3 points, graded by hand): why MatchedFrequency drops the most.** Recht et al. write of their
# Table 2: "This is in stark contrast to MatchedFrequency, which has the lowest average selection frequency and
# exhibits a significant drop of 12% and 8%, respectively." (§4). Engstrom et al. explain: "Therefore, one
# would expect the underlying true selection frequencies of the v1 images to be higher than their matched
# ImageNet-v2 counterparts" (§2). In a short paragraph (6–9 sentences), using your numbers:
#
# 1. Give the ordering of the three sets' accuracy changes (`mean_change`) and of their mean observed
#    frequencies (`freq_table`), and compare both with Recht et al.'s Table 2.
# 2. Explain why MatchedFrequency's images are harder than v1's although their observed frequencies match:
#    use `freq_table`'s true column, your plot, `pool_error` and `level_gap`. Why do the same ten votes mean a
#    lower true frequency for a pool candidate than for a v1 image? (Think about how v1 was made: the original
#    benchmark kept only candidates with a convincing majority.)
# 3. What does matching the true frequencies do (`ablation_change`, `removed`)? Threshold0.7 and TopImages
#    select on the same noisy readings: why do they lose little or gain?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# *Marking: one point for each part; an answer earns a part's point when it uses its numbers and gives the
# reason.*
#
# # The models lose the most on MatchedFrequency, less on Threshold0.7, and gain on TopImages (`mean_change`): the
# ordering of Recht et al.'s −11.8, −3.2 and +2.1, with MatchedFrequency's drop the largest; the mean observed
# frequencies (`freq_table`) rise in the same order, as the paper's 0.73, 0.85 and 0.93 do, v1's lying next to
# MatchedFrequency's (the paper's 0.71). MatchedFrequency matches v1's *observed* frequencies almost exactly,
# yet its mean *true* frequency is lower than v1's (in the plot the right panel's MatchedFrequency curve is
# shifted left, the left panel's is not). Ten votes are a noisy reading (ŝ misses s by `pool_error` on
# average), and what a reading means depends on where the image comes from: v1 was kept from its candidates by
# a majority vote and the replication pool is harder, so a v1 image read at ŝ = 0.6 is more likely an easy
# image with unlucky votes, and a pool candidate read at 0.6 a hard image with lucky ones. `level_gap` shows
# this at every level: at the same ŝ, v1's images have a higher true frequency than the pool's. Matching on ŝ
# therefore draws images that are harder than v1's, and the models lose accuracy on them. Matching the true
# frequencies instead leaves a much smaller change (`ablation_change`): the share `removed`, most of the drop,
# disappears, so most of it came from the noise in the readings, not from anything about the models.
# Threshold0.7 and TopImages are biased the same way (their true means lie below their observed ones in
# `freq_table`), but they keep only the highest readings, so their true frequencies stay above
# MatchedFrequency's, TopImages' even above v1's: Threshold0.7 loses a little, TopImages gains.
# MatchedFrequency, the only set built to look like v1, is the one on which the bias shows as a drop.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# **Done.** Save the notebook and hand it in. The chapter goes on where this lab stops: accuracy by frequency
# bin (Recht et al.'s Figures 15–17), more annotators, and the two hypotheses the paper rejected.
