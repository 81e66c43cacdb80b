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
# # Lab 6: does the Misclassification Likelihood Matrix predict a model's mistakes?
#
# Sikar et al. (2024) summarise a classifier by where its softmax outputs lie relative to one centroid per
# class. From the distances between test outputs and the centroids of *other* classes they build the
# Misclassification Likelihood Matrix (MLM), whose entry (i, j) they read as the likelihood that a class-i
# example is misclassified as class j (§3.3). In this lab you build the MLM step by step, from the centroids
# (Eq. 1, refined by k-means) to the distances (Eqs. 2–3) and the matrix (Eq. 4), and then hold their reading
# against the mistakes the model actually makes.
#
# **The data** (`mlm-data.npz`, from the chapter's default world): the softmax outputs of the replication
# world's most accurate CNN on its training images and on its test set v1, with the true classes (digits
# 0–9).
#
# Run the cells in order. `grader.check("q1")` runs a question's public tests; more tests run when the lab is
# graded. Questions marked *graded by hand* are read by your teacher.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

data = np.load("mlm-data.npz", allow_pickle=False)
train_probs, train_labels = data["train_probs"].astype(float), data["train_labels"]  # N x K, N
test_probs, test_labels = data["test_probs"].astype(float), data["test_labels"]
K = train_probs.shape[1]  # classes
print(f"model {data['model']}: {len(train_labels)} training and {len(test_labels)} test outputs, {K} classes")

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 1 (1 point): predictions.** The predicted class is the largest softmax output. Set `train_pred`
# and `test_pred` to the predicted classes, and `train_acc` and `test_acc` to the model's accuracies (fractions)
# on the training and the test outputs. (Sikar et al.'s CNN reaches 98.38% on MNIST's training set and 98.46%
# on its test set, §4.1.)

# %% [raw]
# # BEGIN SOLUTION

# %%
train_pred = train_probs.argmax(axis=1)  # SOLUTION
test_pred = test_probs.argmax(axis=1)  # SOLUTION
train_acc = float(np.mean(train_pred == train_labels))  # SOLUTION
test_acc = float(np.mean(test_pred == test_labels))  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"accuracy: training {train_acc:.2%}, test {test_acc:.2%}")

# %% [raw]
# # BEGIN TESTS

# %%
for _name, _value, _labels in (
    ("train_pred", train_pred, train_labels),
    ("test_pred", test_pred, test_labels),
):
    assert np.shape(_value) == np.shape(_labels), (
        f"{_name} should hold one class per example, shape {np.shape(_labels)}; got shape {np.shape(_value)}"
    )
    assert np.all((0 <= np.asarray(_value)) & (np.asarray(_value) < K)), (
        f"{_name} should hold class numbers 0..{K - 1} (the position of the largest output in each row)"
    )
for _name, _value in (("train_acc", train_acc), ("test_acc", test_acc)):
    assert isinstance(_value, (int, float, np.number)) and 0 <= _value <= 1, (
        f"{_name} should be one fraction between 0 and 1 (not a percentage); got {_value!r}"
    )

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("mlm-data.npz", allow_pickle=False)
assert np.array_equal(train_pred, _d["train_probs"].argmax(1)) and np.array_equal(
    test_pred, _d["test_probs"].argmax(1)
)
assert np.isclose(train_acc, np.mean(_d["train_probs"].argmax(1) == _d["train_labels"]))
assert np.isclose(test_acc, np.mean(_d["test_probs"].argmax(1) == _d["test_labels"]))

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
# **Question 2 (2 points): the class centroids (Eq. 1).** Write `class_centroids(probs, labels)`: a `(K, K)`
# array whose row `k` is the mean softmax output of the examples of class `k` **that the model classifies
# correctly** (§3.3a: "we first collect the softmax outputs of the trained classifier for each correctly
# classified example in the training set").

# %% [raw]
# # BEGIN SOLUTION


# %%
def class_centroids(probs, labels):
    # BEGIN SOLUTION
    probs, labels = np.asarray(probs, dtype=float), np.asarray(labels)
    right = probs.argmax(axis=1) == labels
    return np.stack([probs[right & (labels == k)].mean(axis=0) for k in range(probs.shape[1])])
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
c0 = class_centroids(train_probs, train_labels)

# %% [raw]
# # BEGIN TESTS

# %%
_toy = np.array([[0.9, 0.1], [0.7, 0.3], [0.4, 0.6], [0.2, 0.8]])
_got = class_centroids(_toy, np.array([0, 0, 0, 1]))
assert np.shape(_got) == (2, 2), (
    f"two classes give a (2, 2) array, one row per class; got shape {np.shape(_got)}"
)
assert np.allclose(_got, [[0.8, 0.2], [0.2, 0.8]]), (
    "outputs [[0.9, 0.1], [0.7, 0.3], [0.4, 0.6], [0.2, 0.8]] with classes [0, 0, 0, 1]: the third is a "
    "class-0 example the model takes for class 1, so it does not count; expected [[0.8, 0.2], [0.2, 0.8]], "
    f"got {np.round(_got, 3).tolist()}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _centroids(p, y):
    right = p.argmax(1) == y
    return np.stack([p[right & (y == k)].mean(0) for k in range(p.shape[1])])


_rng = np.random.default_rng(2)
_p = _rng.dirichlet(np.ones(4), size=200)
_y = _rng.integers(0, 4, 200)
assert np.allclose(class_centroids(_p, _y), _centroids(_p, _y), atol=1e-12)
_d = np.load("mlm-data.npz", allow_pickle=False)
_p, _y = _d["train_probs"].astype(float), _d["train_labels"]
assert np.allclose(class_centroids(_p, _y), _centroids(_p, _y), atol=1e-9)

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
# **Question 3 (2 points): one k-means step.** The paper then refines the centroids with k-means, started at
# them (§3.3a). Write `kmeans_step(points, centroids)`: assign every point (a row of `points`) to its nearest
# centroid in Euclidean distance (the first one on a tie), and return the new centroids, each the mean of the
# points assigned to it. A centroid that no point is nearest to stays where it is.

# %% [raw]
# # BEGIN SOLUTION


# %%
def kmeans_step(points, centroids):
    # BEGIN SOLUTION
    points, centroids = np.asarray(points, dtype=float), np.asarray(centroids, dtype=float)
    nearest = np.linalg.norm(points[:, None, :] - centroids[None, :, :], axis=2).argmin(axis=1)
    new = centroids.copy()
    for k in range(len(centroids)):
        if np.any(nearest == k):
            new[k] = points[nearest == k].mean(axis=0)
    return new
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
_got = kmeans_step(np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]]), np.array([[0.5, 0.5], [0.0, 1.0]]))
assert np.shape(_got) == (2, 2), (
    f"two centroids in, two centroids out: expected shape (2, 2), got {np.shape(_got)}"
)
assert np.allclose(_got, [[0.95, 0.05], [0.0, 1.0]]), (
    "points [1, 0] and [0.9, 0.1] are nearest to centroid [0.5, 0.5], which moves to their mean [0.95, 0.05]; "
    f"[0, 1] sits on the other centroid; expected [[0.95, 0.05], [0, 1]], got {np.round(_got, 3).tolist()}"
)
_got = kmeans_step(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]))
assert np.allclose(_got, [[1.0, 0.0], [0.0, 1.0]]), (
    f"no point is nearest to the centroid [0, 1], so it stays where it is; got {np.round(_got, 3).tolist()}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _step(x, c):
    near = ((x[:, None, :] - c[None, :, :]) ** 2).sum(2).argmin(1)
    return np.stack([x[near == k].mean(0) if np.any(near == k) else c[k] for k in range(len(c))])


_rng = np.random.default_rng(3)
_x = _rng.random((300, 3))
_c = np.vstack([_rng.random((4, 3)), [[9.0, 9.0, 9.0]]])  # the last centroid gets no point
assert np.allclose(kmeans_step(_x, _c), _step(_x, _c), atol=1e-12)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q4
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 4 (1 point): k-means until it stops.** Starting at `c0`, apply `kmeans_step` to the softmax
# outputs of the **correctly classified** training examples (the outputs the centroids average: the chapter's
# reading of §3.3a) until no centroid moves by more than `1e-12`, or for at most 100 steps. Set `refined` to
# the final centroids and `shift` to how far each centroid moved from `c0` (Euclidean distance, one number per
# class: the paper's Table 1, where most classes move by 1e-14 and three by about 1e-4).

# %% [raw]
# # BEGIN SOLUTION

# %%
points = train_probs[train_pred == train_labels]  # SOLUTION
refined = c0
for _ in range(100):
    moved = kmeans_step(points, refined)  # SOLUTION
    done = np.max(np.linalg.norm(moved - refined, axis=1)) <= 1e-12  # SOLUTION
    refined = moved
    if done:
        break
shift = np.linalg.norm(refined - c0, axis=1)  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print("how far each class's centroid moved:", ", ".join(f"{v:.1e}" for v in shift))

# %% [raw]
# # BEGIN TESTS

# %%
assert np.shape(refined) == (K, K), (
    f"refined should hold one centroid per class, shape ({K}, {K}); got {np.shape(refined)}"
)
assert np.shape(shift) == (K,) and np.allclose(shift, np.linalg.norm(np.asarray(refined) - c0, axis=1)), (
    "shift should hold, for each class, the distance between its refined centroid and c0 (one number per class)"
)
assert np.allclose(np.sum(refined, axis=1), 1), (
    "a centroid is a mean of softmax outputs, so its entries sum to 1; they do not here"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("mlm-data.npz", allow_pickle=False)
_p, _y = _d["train_probs"].astype(float), _d["train_labels"]
_x = _p[_p.argmax(1) == _y]
assert np.allclose(kmeans_step(_x, refined), refined, atol=1e-9)  # k-means has stopped on these outputs

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q5
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 5 (1 point): distances to the centroids (Eq. 2).** Write `distances(probs, centroids)`: the
# `(N, K)` array of Euclidean distances from every output (a row of `probs`) to every centroid.

# %% [raw]
# # BEGIN SOLUTION


# %%
def distances(probs, centroids):
    # BEGIN SOLUTION
    diff = np.asarray(probs, dtype=float)[:, None, :] - np.asarray(centroids, dtype=float)[None, :, :]
    return np.sqrt((diff**2).sum(axis=2))
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
_got = distances(np.array([[1.0, 0.0], [0.5, 0.5]]), np.array([[1.0, 0.0], [0.0, 1.0]]))
assert np.shape(_got) == (2, 2), f"2 outputs and 2 centroids give a (2, 2) array; got shape {np.shape(_got)}"
assert np.allclose(_got, [[0.0, np.sqrt(2)], [np.sqrt(0.5), np.sqrt(0.5)]]), (
    "[1, 0] is 0 from centroid [1, 0] and sqrt(2) = 1.414 from [0, 1]; [0.5, 0.5] is sqrt(0.5) = 0.707 from "
    f"both; got {np.round(_got, 3).tolist()}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_rng = np.random.default_rng(5)
_p, _c = _rng.dirichlet(np.ones(6), 50), _rng.dirichlet(np.ones(6), 6)
assert np.allclose(distances(_p, _c), np.sqrt(((_p[:, None] - _c[None]) ** 2).sum(2)), atol=1e-12)

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
# **Question 6 (2 points): the nearest-distance matrix (Eq. 3).** Write `nearest_distances(probs, labels,
# centroids)`: the `(K, K)` array whose entry (i, j) is the **smallest** distance from the output of any
# class-i example to centroid j, with `np.nan` on the diagonal (the MLM only concerns other classes).

# %% [raw]
# # BEGIN SOLUTION


# %%
def nearest_distances(probs, labels, centroids):
    # BEGIN SOLUTION
    dist = distances(probs, centroids)
    labels = np.asarray(labels)
    out = np.stack([dist[labels == i].min(axis=0) for i in range(len(centroids))])
    np.fill_diagonal(out, np.nan)
    return out
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
D = nearest_distances(test_probs, test_labels, refined)

# %% [raw]
# # BEGIN TESTS

# %%
_got = nearest_distances(
    np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]]), np.array([0, 0, 1]), np.array([[1.0, 0.0], [0.0, 1.0]])
)
assert np.shape(_got) == (2, 2), f"two classes give a (2, 2) array; got shape {np.shape(_got)}"
assert np.isnan(_got[0, 0]) and np.isnan(_got[1, 1]), "the diagonal should be np.nan"
assert np.allclose(_got, [[np.nan, np.sqrt(0.72)], [np.sqrt(1.28), np.nan]], equal_nan=True), (
    "class 0 has outputs [0.9, 0.1] and [0.6, 0.4]; the nearer to centroid 1 = [0, 1] is [0.6, 0.4], at "
    f"sqrt(0.72) = 0.849; expected [[nan, 0.849], [1.131, nan]], got {np.round(_got, 3).tolist()}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("mlm-data.npz", allow_pickle=False)
_p, _y = _d["test_probs"].astype(float), _d["test_labels"]
_c = np.stack([_p[_y == k].mean(0) for k in range(_p.shape[1])])  # any centroids will do
_dist = np.sqrt(((_p[:, None] - _c[None]) ** 2).sum(2))
_ref = np.stack([_dist[_y == i].min(0) for i in range(len(_c))])
np.fill_diagonal(_ref, np.nan)
assert np.allclose(nearest_distances(_p, _y, _c), _ref, atol=1e-9, equal_nan=True)

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
# **Question 7 (2 points): the MLM (Eq. 4).** Write `likelihood_matrix(D)`: take the reciprocal of every
# off-diagonal entry of `D` and divide each row by its sum, so that row i holds, for each other class j,
# $M_{ij} = (1 / D_{ij}) / \sum_{k \neq i} 1 / D_{ik}$; the diagonal is 0, and every row sums to 1.

# %% [raw]
# # BEGIN SOLUTION


# %%
def likelihood_matrix(D):
    # BEGIN SOLUTION
    D = np.asarray(D, dtype=float)
    off = ~np.eye(len(D), dtype=bool)
    inverse = np.where(off, 1 / np.where(off, D, 1.0), 0.0)
    return inverse / inverse.sum(axis=1, keepdims=True)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
M = likelihood_matrix(D)

# %% [raw]
# # BEGIN TESTS

# %%
_got = likelihood_matrix(np.array([[np.nan, 1.0, 2.0], [1.0, np.nan, 1.0], [4.0, 1.0, np.nan]]))
assert np.shape(_got) == (3, 3) and not np.any(np.isnan(_got)), (
    f"the MLM of a (3, 3) D is a (3, 3) array of numbers, with 0 (not nan) on the diagonal; got {_got}"
)
assert np.allclose(_got, [[0, 2 / 3, 1 / 3], [0.5, 0, 0.5], [0.2, 0.8, 0]]), (
    "row 0 of D is [nan, 1, 2]: reciprocals 1 and 0.5, normalised to 2/3 and 1/3; expected "
    f"[[0, 0.667, 0.333], [0.5, 0, 0.5], [0.2, 0.8, 0]], got {np.round(_got, 3).tolist()}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_rng = np.random.default_rng(7)
_D = _rng.uniform(0.1, 2.0, (6, 6))
np.fill_diagonal(_D, np.nan)
_inv = 1 / _D
np.fill_diagonal(_inv, 0.0)
assert np.allclose(likelihood_matrix(_D), _inv / _inv.sum(1, keepdims=True), atol=1e-12)

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
# **Question 8 (2 points, graded by hand): a plot.** Draw `M` as a heatmap, as the paper's Figure 2 does:
# rows are the true class, columns the class it may be taken for, both labelled 0–9, with a colour bar, axis
# labels and a title. (`plt.imshow` or `ax.imshow` with `plt.colorbar` will do.)

# %% [raw]
# # BEGIN SOLUTION

# %%
# your heatmap of M here
# BEGIN SOLUTION
fig, ax = plt.subplots(figsize=(5.5, 4.5))
image = ax.imshow(M, cmap="viridis")
ax.set_xticks(range(K))
ax.set_yticks(range(K))
ax.set_xlabel("taken for class j")
ax.set_ylabel("true class i")
ax.set_title("Misclassification Likelihood Matrix (test set v1)")
fig.colorbar(image, ax=ax, label="likelihood $M_{ij}$")
plt.show()
# END SOLUTION

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q9
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 9 (1 point): the most likely confusion.** Set `top_true` and `top_other` to the classes i and j
# of the largest entry of `M` (Python ints), and `top_likelihood` to that entry.

# %% [raw]
# # BEGIN SOLUTION

# %%
top_true, top_other = (int(v) for v in np.unravel_index(np.argmax(M), M.shape))  # SOLUTION
top_likelihood = float(M[top_true, top_other])  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"the MLM's most likely confusion: {top_true} taken for {top_other} (likelihood {top_likelihood:.3f})")

# %% [raw]
# # BEGIN TESTS

# %%
assert all(isinstance(_v, (int, np.integer)) for _v in (top_true, top_other)), (
    f"top_true and top_other should be class numbers (ints); got {type(top_true).__name__} and {type(top_other).__name__}"
)
assert top_true != top_other, "the diagonal of M is 0, so its largest entry lies off the diagonal: i != j"
assert np.isclose(M[top_true, top_other], np.max(M)), (
    f"M[top_true, top_other] = {M[top_true, top_other]:.4f} is not the largest entry of M ({np.max(M):.4f})"
)
assert isinstance(top_likelihood, (float, np.floating)) and np.isclose(top_likelihood, np.max(M)), (
    f"top_likelihood should be that entry, M[top_true, top_other] = {np.max(M):.4f}; got {top_likelihood!r}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

assert (top_true, top_other) == tuple(int(v) for v in np.unravel_index(np.argmax(M), np.shape(M)))

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
# **Question 10 (1 point): the mistakes the model makes.** Set `counts` to the `(K, K)` confusion counts on
# the test set (entry (i, j): how many class-i test examples the model predicts as j, the diagonal included),
# `rates` to the same counts divided by each row's total (the share of class-i examples predicted as j), and
# `most_confused` to the pair `(i, j)`, i ≠ j, with the largest count (a tuple of two ints).

# %% [raw]
# # BEGIN SOLUTION

# %%
counts = np.zeros((K, K), dtype=int)
np.add.at(counts, (test_labels, test_pred), 1)  # SOLUTION
rates = counts / counts.sum(axis=1, keepdims=True)  # SOLUTION
mistakes = np.where(np.eye(K, dtype=bool), -1, counts)  # the counts, with the diagonal left out
most_confused = tuple(int(v) for v in np.unravel_index(np.argmax(mistakes), mistakes.shape))  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(
    f"the most frequent mistake: {most_confused[0]} predicted as {most_confused[1]}, {counts[most_confused]} times"
)

# %% [raw]
# # BEGIN TESTS

# %%
assert np.shape(counts) == (K, K) and np.sum(counts) == len(test_labels), (
    f"counts should be a ({K}, {K}) array counting every test example once ({len(test_labels)} in all)"
)
assert np.trace(counts) == np.sum(test_probs.argmax(1) == test_labels), (
    "the diagonal of counts holds the correctly classified examples: its sum is the number of correct predictions"
)
assert np.allclose(np.sum(rates, axis=1), 1), (
    "each row of rates should sum to 1 (shares of one class's examples)"
)
assert (
    isinstance(most_confused, tuple) and len(most_confused) == 2 and most_confused[0] != most_confused[1]
), f"most_confused should be a pair (i, j) of two different classes, a tuple; got {most_confused!r}"

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("mlm-data.npz", allow_pickle=False)
_y, _pred, _k = _d["test_labels"], _d["test_probs"].argmax(1), _d["test_probs"].shape[1]
_ref = np.zeros((_k, _k), dtype=int)
np.add.at(_ref, (_y, _pred), 1)
assert np.array_equal(counts, _ref) and np.allclose(rates, _ref / _ref.sum(1, keepdims=True))
np.fill_diagonal(_ref, -1)
assert _ref[most_confused[0], most_confused[1]] == _ref.max()

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
# **Question 11 (2 points): do the MLM's likelihoods rank the mistakes?** Write `spearman(a, b)`: Spearman's
# rank correlation of two equally long arrays — replace each array by its ranks, giving tied values the mean
# of their ranks (`pd.Series(a).rank()` does exactly this), then take the Pearson correlation of the ranks
# (`np.corrcoef`). Then set `rho` to the rank correlation between the off-diagonal entries of `M` and those of
# `rates` (the mask `off` below selects them).

# %%
off = ~np.eye(K, dtype=bool)  # the K(K - 1) pairs i != j

# %% [raw]
# # BEGIN SOLUTION


# %%
def spearman(a, b):
    # BEGIN SOLUTION
    ranks_a, ranks_b = pd.Series(np.asarray(a)).rank(), pd.Series(np.asarray(b)).rank()
    return float(np.corrcoef(ranks_a, ranks_b)[0, 1])
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
rho = spearman(M[off], rates[off])  # SOLUTION
# BEGIN SOLUTION NO PROMPT
# Checks the statements of Question 12's model answer: a false one fails the solution.
assert 0 < rho < 0.7 and (top_true, top_other) != most_confused
# END SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"Spearman's rho between the MLM and the confusion rates over the {off.sum()} pairs: {rho:.3f}")

# %% [raw]
# # BEGIN TESTS

# %%
for _a, _b, _want in (
    ([1, 2, 3], [10, 20, 30], 1.0),
    ([1, 2, 3], [3, 2, 1], -1.0),
    ([1, 5, 2], [1, 100, 3], 1.0),
):
    _got = spearman(np.array(_a), np.array(_b))
    assert np.isclose(_got, _want), (
        f"spearman({_a}, {_b}) should be {_want}: the ranks agree fully; got {_got}"
    )
_got = spearman(np.array([1, 2, 2, 3]), np.array([1, 2, 3, 4]))
assert np.isclose(_got, 0.9487, atol=1e-4), (
    "ties share the mean of their ranks: [1, 2, 2, 3] has ranks [1, 2.5, 2.5, 4], and their Pearson "
    f"correlation with [1, 2, 3, 4] is 0.9487; got {_got}"
)
assert isinstance(rho, (int, float, np.number)) and -1 <= rho <= 1, (
    f"rho should be one correlation between -1 and 1; got {rho!r}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _rank(x):
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    for v in np.unique(x):  # ties: the mean of their ranks
        ranks[x == v] = ranks[x == v].mean()
    return ranks


_rng = np.random.default_rng(11)
_a, _b = _rng.integers(0, 5, 40), _rng.integers(0, 8, 40)  # many ties
assert np.isclose(spearman(_a, _b), np.corrcoef(_rank(_a), _rank(_b))[0, 1], atol=1e-9)
_off = ~np.eye(len(M), dtype=bool)
assert np.isclose(
    rho, np.corrcoef(_rank(np.asarray(M)[_off]), _rank(np.asarray(rates)[_off]))[0, 1], atol=1e-9
)

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
# **Question 12 (3 points, graded by hand): reading the MLM.** Sikar et al. read their matrix this way:
# "Higher values indicate a higher likelihood of misclassification, while lower values indicate a lower
# likelihood." (Sikar et al. 2024, §3.3d). In a short paragraph (5–8 sentences), using your numbers:
#
# 1. Does this model's MLM bear the reading out on its test set? Use `rho`, and compare the MLM's most likely
#    confusion (`top_true`, `top_other`) with the most frequent actual mistake (`most_confused`).
# 2. The MLM gives every pair a likelihood above 0, while many pairs have no mistake at all (count the zeros
#    in `rates[off]`). The paper counts this in the MLM's favour: "The MLM is able to provide fine-grained
#    information about the misclassification likelihood, assigning relatively low albeit non-zero likelihood
#    misclassification values." (§4.5). What does a pair's likelihood rest on (Eq. 3), and why might one
#    unusual test example decide it?
# 3. Each row of M sums to 1, whatever the class's accuracy. What does the MLM therefore *not* tell you about
#    a class, that `rates` does?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# *Marking: one point for each part; an answer earns a part's point when it uses its numbers and gives
# the reason.*
#
# Only roughly. `rho` is positive but far from 1: pairs with a higher likelihood tend to be the pairs the
# model confuses more often, with many exceptions. The MLM's most likely confusion (`top_true` taken for
# `top_other`) need not be the model's most frequent mistake (`most_confused`), and on these data it is
# not; the paper notes the same kind of discrepancy for MNIST ("The MLM does not assign a high likelihood for
# digit 9 misclassified as 7, which is the highest in the testing dataset", §4.5). A likelihood rests on one
# number, the *smallest* distance from any class-i output to centroid j (Eq. 3): a single class-i example that
# the model confidently takes for j sits almost on centroid j, makes that distance nearly 0 and its
# reciprocal huge, and so takes nearly all of row i, however rare the mistake is. The same holds for the
# pairs never confused: their non-zero likelihoods are the distances of the nearest example, not evidence
# of a risk. Finally, every row sums to 1, so the MLM says which classes a class-i example is more likely to
# be taken for, relative to each other, but not how often class i is misclassified at all: a class the model
# almost never gets wrong has a row like the worst class's. `rates` shows both which mistakes happen and how
# often.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# **Done.** Save the notebook and hand it in. The chapter goes on where this lab stops: the paper's MLMs on
# perturbed test sets (§3.4), and whether they rank the mistakes made under perturbation.
