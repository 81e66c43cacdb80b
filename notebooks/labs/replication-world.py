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
# # Lab 1: sampling a replication by selection frequency
#
# Recht et al. (2019, §4) built ImageNetV2 three ways from one pool of candidates, each candidate shown to
# crowd workers who said whether it shows its class; the share of "yes" is the image's *selection
# frequency*. **MatchedFrequency** matched the original set's histogram of frequencies over five bins,
# **Threshold0.7** drew among the images selected at least 70% of the time, and **TopImages** took the most
# frequently selected images of each class. The replication-world chapter
# does the same with digits. Here you write the pieces yourself and check them on the world's pool.
#
# Run each cell in order; `grader.check("q…")` runs the public tests of a question. Hidden tests, run
# when your notebook is graded, compare your functions with the library's on the world's data.

# %%
import numpy as np

from shifteval.labs import load

data = load("replication-world")
freq, labels = data["pool_freq"], data["pool_labels"]
edges, per_class = data["bin_edges"], data["per_class"]
print(f"{len(freq)} candidates, bin edges {edges.tolist()}, {per_class} images per class")

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 1 (2 points).** Write `frequency_bin(freq, edges)`: for every frequency, the index of its bin.
# `edges` are the bins' left edges (`[0, 0.2, 0.4, 0.6, 0.8]`): bin `i` is `[edges[i], edges[i + 1])`,
# and the last bin `[0.8, 1]` includes 1. Return an integer array of the shape of `freq`.

# %% [raw]
# # BEGIN SOLUTION


# %%
def frequency_bin(freq, edges):
    # BEGIN SOLUTION
    freq, edges = np.asarray(freq, dtype=float), np.asarray(edges, dtype=float)
    return np.clip(np.searchsorted(edges, freq + 1e-12, side="right") - 1, 0, len(edges) - 1)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
assert np.asarray(frequency_bin(np.array([0.0, 0.1]), edges)).shape == (2,)

# %%
assert np.asarray(frequency_bin(np.array([0.0, 0.19, 0.2, 0.6, 0.79, 0.8, 1.0]), edges)).tolist() == [
    0,
    0,
    1,
    3,
    3,
    4,
    4,
]

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval.datasets import world_sampling

assert np.array_equal(frequency_bin(freq, edges), world_sampling.frequency_bin(freq, edges))

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q2
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 2 (2 points).** Write `bin_shares(freq, edges)`: the share of images in each bin (an array of
# `len(edges)` numbers summing to 1). This is the histogram MatchedFrequency reproduces.

# %% [raw]
# # BEGIN SOLUTION


# %%
def bin_shares(freq, edges):
    # BEGIN SOLUTION
    counts = np.bincount(frequency_bin(freq, edges), minlength=len(edges))
    return counts / counts.sum()
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
assert np.allclose(bin_shares(np.array([0.1, 0.1, 0.5, 0.9]), edges), [0.5, 0, 0.25, 0, 0.25])

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval.datasets import world_sampling

expected = np.bincount(world_sampling.frequency_bin(freq, edges), minlength=len(edges)) / len(freq)
assert np.allclose(bin_shares(freq, edges), expected, atol=1e-12)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q3
# points: 3
# all_or_nothing: true

# %% [markdown]
# **Question 3 (3 points).** Write `top_images(freq, labels, per_class)`: the indices of TopImages, the
# `per_class` most frequently selected images of each of the ten classes (ties broken any way you like).

# %% [raw]
# # BEGIN SOLUTION


# %%
def top_images(freq, labels, per_class):
    # BEGIN SOLUTION
    chosen = []
    for c in range(10):
        members = np.flatnonzero(labels == c)
        chosen.extend(members[np.argsort(-freq[members], kind="stable")[:per_class]])
    return np.array(chosen)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
mine = top_images(freq, labels, per_class)
print(
    f"TopImages: {len(mine)} images, mean selection frequency {freq[mine].mean():.3f} (pool: {freq.mean():.3f})"
)

# %% [raw]
# # BEGIN TESTS

# %%
toy = top_images(np.tile([0.1, 0.5, 0.9], 10), np.repeat(np.arange(10), 3), 1)
assert len(toy) == 10 and set(np.asarray(toy) % 3) == {2}

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval.datasets import world_sampling

ref = world_sampling.sample_top_images(freq, labels, per_class, np.random.default_rng(0))
got = np.asarray(top_images(freq, labels, per_class))
assert len(set(got.tolist())) == len(got) == len(ref)
for c in range(10):  # ties may be broken differently: the selected frequencies must agree per class
    assert sorted(freq[got][labels[got] == c]) == sorted(freq[ref][labels[ref] == c])

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# **To think about (not graded).** TopImages' mean selection frequency is far above the pool's. Which of
# the chapter's findings does that explain, and why does MatchedFrequency not have the same problem?
