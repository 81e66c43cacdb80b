# %% [raw]
# # ASSIGNMENT CONFIG
# name: mlm
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# generate: true
# files:
#   - mlm-data.npz

# %% [markdown]
# # Lab 6: centroids and distances of the Misclassification Likelihood Matrix
#
# Sikar et al. summarise a classifier by where its softmax outputs lie relative to one centroid per class:
# the mean softmax output of the *correctly classified* training examples of that class (Eq. 1). The paper
# then refines these centroids with k-means (§3.3); this lab, like the library's `initial_centroids`, stops
# at Eq. 1. Every output's Euclidean distance to every centroid (Eq. 2) then gives, for class `i`, the smallest distance
# from any class-`i` example to centroid `j` (Eq. 3), which the MLM normalises into likelihoods.
#
# The data: the softmax outputs of the world zoo's best CNN on its training images and on v1.

# %%
import numpy as np

from shifteval.labs import load

data = load("mlm")
train_probs, train_labels = data["train_probs"], data["train_labels"]
test_probs, test_labels = data["test_probs"], data["test_labels"]
print(f"model {data['model']}: {len(train_labels)} training and {len(test_labels)} test outputs, 10 classes")

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 1 (2 points).** Write `centroids(probs, labels)`: a `(K, K)` array whose row `k` is the mean
# softmax output of the examples of class `k` that the model classifies correctly.

# %% [raw]
# # BEGIN SOLUTION


# %%
def centroids(probs, labels):
    # BEGIN SOLUTION
    probs, labels = np.asarray(probs, dtype=float), np.asarray(labels)
    right = probs.argmax(1) == labels
    return np.stack([probs[right & (labels == k)].mean(0) for k in range(probs.shape[1])])
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
toy = np.array([[0.9, 0.1], [0.7, 0.3], [0.4, 0.6], [0.2, 0.8]])
assert np.allclose(centroids(toy, np.array([0, 0, 0, 1])), [[0.8, 0.2], [0.2, 0.8]])

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval import mlm

assert np.allclose(
    centroids(train_probs, train_labels), mlm.initial_centroids(train_probs, train_labels), atol=1e-6
)

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
# **Question 2 (2 points).** Write `distances(probs, centroids)`: the `(N, K)` Euclidean distances from every
# output to every centroid.

# %% [raw]
# # BEGIN SOLUTION


# %%
def distances(probs, centroids):
    # BEGIN SOLUTION
    diff = np.asarray(probs, dtype=float)[:, None, :] - np.asarray(centroids, dtype=float)[None, :, :]
    return np.sqrt((diff**2).sum(-1))
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
assert np.allclose(distances(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])), [[0.0, np.sqrt(2)]])

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval import mlm

c = mlm.initial_centroids(train_probs, train_labels)
assert np.allclose(distances(test_probs[:2000], c), mlm.centroid_distances(test_probs[:2000], c), atol=1e-6)

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
# **Question 3 (3 points).** Write `nearest_row(probs, labels, centroids, i)`: for class `i`, the smallest
# distance from any class-`i` example's output to each centroid `j` — row `i` of Eq. 3's matrix (length K),
# with `np.nan` at `j = i` (the MLM only concerns confusions with other classes).
# The centroid with the smallest off-diagonal entry is the class that class `i` is most likely to be
# mistaken for.

# %% [raw]
# # BEGIN SOLUTION


# %%
def nearest_row(probs, labels, centroids, i):
    # BEGIN SOLUTION
    row = distances(np.asarray(probs)[np.asarray(labels) == i], centroids).min(0)
    row[i] = np.nan
    return row
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
c = centroids(train_probs, train_labels)
row = nearest_row(test_probs, test_labels, c, 9)
print("class 9, nearest distance to each other centroid:", np.round(row, 3))

# %% [raw]
# # BEGIN TESTS

# %%
toy_c = np.array([[1.0, 0.0], [0.0, 1.0]])
assert np.allclose(
    nearest_row(np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]]), np.array([0, 0, 1]), toy_c, 0),
    [np.nan, np.sqrt(0.72)],
    equal_nan=True,
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval import mlm

c = mlm.initial_centroids(train_probs, train_labels)
D = mlm.nearest_distance_matrix(test_probs, test_labels, c)
for i in (0, 4, 9):
    assert np.allclose(nearest_row(test_probs, test_labels, c, i), D[i], atol=1e-6, equal_nan=True)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# **To think about (not graded).** Eq. 3 takes the *smallest* distance. What would one outlying example do to
# the row, and what would the mean distance show instead? (The chapter's `aggregate` option compares them.)
