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
# # Lab 3: the naive selection-adjusted accuracy
#
# Engstrom et al. (2020) re-annotate v1 and MatchedFrequency with fresh annotators and adjust v2's accuracy
# for selection frequency: v2's accuracy at each observed frequency level ŝ = k/n, weighted by how often v1
# images take that level (their Eq. 4, the *naive* estimator). The replication world knows every image's
# true frequency, so you can measure how wrong the naive estimate is.
#
# The data: "yes" votes of `annotators` fresh annotators for every v1 and v2 image, whether each of the zoo's
# models classifies each image correctly, and the true frequencies.

# %%
import numpy as np

from shifteval.labs import load

data = load("selection-bias")
counts_v1, counts_v2, n = data["counts_v1"], data["counts_v2"], data["annotators"]
correct_v1, correct_v2 = data["correct_v1"], data["correct_v2"]
print(
    f"{len(counts_v1)} v1 and {len(counts_v2)} v2 images, {n} annotators each, {len(data['models'])} models"
)

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 1 (1 point).** Write `level_shares(counts, n)`: for each level `k = 0 … n`, the share of images
# with `k` "yes" votes (an array of `n + 1` numbers summing to 1).

# %% [raw]
# # BEGIN SOLUTION


# %%
def level_shares(counts, n):
    # BEGIN SOLUTION
    return np.bincount(np.asarray(counts, dtype=int), minlength=n + 1) / len(counts)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
assert np.allclose(level_shares(np.array([0, 2, 2, 1]), 2), [0.25, 0.25, 0.5])

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
assert np.allclose(
    level_shares(counts_v1, n), np.bincount(counts_v1.astype(int), minlength=n + 1) / len(counts_v1)
)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q2
# points: 3
# all_or_nothing: true

# %% [markdown]
# **Question 2 (3 points).** Write `naive_adjusted(counts_v1, counts_v2, correct_v2, n)`: one model's naive
# adjusted v2 accuracy, `Σ_k acc₂(k) · p₁(k)`, where `acc₂(k)` is the model's accuracy on the v2 images with
# `k` votes and `p₁(k)` the share of v1 images with `k` votes. Levels that no v2 image takes carry no
# information: leave them out and renormalise the remaining weights to sum to 1 (Eq. 4 itself leaves such
# levels undefined; the library renormalises the same way). `correct_v2` is one
# model's row (booleans).

# %% [raw]
# # BEGIN SOLUTION


# %%
def naive_adjusted(counts_v1, counts_v2, correct_v2, n):
    # BEGIN SOLUTION
    p1 = level_shares(counts_v1, n)
    seen = np.bincount(np.asarray(counts_v2, dtype=int), minlength=n + 1)
    hits = np.bincount(np.asarray(counts_v2, dtype=int), weights=correct_v2, minlength=n + 1)
    keep = seen > 0
    return float(np.sum(hits[keep] / seen[keep] * p1[keep]) / p1[keep].sum())
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
assert np.isclose(
    naive_adjusted(np.array([2, 2, 0, 0]), np.array([2, 0, 0, 0]), np.array([1, 0, 0, 0]), 2), 0.5
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval.selection import estimators

for row in correct_v2[::5]:
    assert np.isclose(
        naive_adjusted(counts_v1, counts_v2, row, n),
        estimators.naive_adjusted_accuracy(counts_v1, counts_v2, row, n),
        atol=1e-9,
    )

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
# **Question 3 (2 points).** The world's ground truth is `truth` below (the adjustment with true frequencies,
# Eq. 3). Write `mean_error(estimates, truth)`: the mean over models of *estimate − truth*, in percentage
# points (a signed number: negative means the naive estimate is too low).

# %%
from shifteval.selection import estimators

truth = estimators.true_adjusted_accuracy(data["true_s_v1"], data["true_s_v2"], correct_v2)
naive = np.array([naive_adjusted(counts_v1, counts_v2, row, n) for row in correct_v2])

# %% [raw]
# # BEGIN SOLUTION


# %%
def mean_error(estimates, truth):
    # BEGIN SOLUTION
    return float(100 * np.mean(np.asarray(estimates) - np.asarray(truth)))
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
print(f"naive minus truth: {mean_error(naive, truth):+.2f} points on average over {len(naive)} models")

# %% [raw]
# # BEGIN TESTS

# %%
assert np.isclose(mean_error(np.array([0.5, 0.7]), np.array([0.6, 0.6])), 0.0)
assert np.isclose(mean_error(np.array([0.5]), np.array([0.6])), -10.0)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
ref = estimators.naive_adjusted_accuracy(counts_v1, counts_v2, correct_v2, n)
assert np.isclose(mean_error(ref, truth), 100 * np.mean(ref - truth), atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# **To think about (not graded).** Re-run the estimate with only the first 10 annotators' votes (the world's
# chapter shows the naive error against the number of annotators). Which way does the error move, and why?
