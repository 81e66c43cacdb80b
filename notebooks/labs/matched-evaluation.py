# %% [raw]
# # ASSIGNMENT CONFIG
# name: matched-evaluation
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# generate: true
# files:
#   - matched-evaluation-data.npz

# %% [markdown]
# # Lab 4: matching predictions across two test sets
#
# Anzaku et al. compare a model on two similar test sets only where its predictions can be compared: each
# image of the target set is paired with a not-yet-used image of the source set that the model gives the
# *same predicted label* with a confidence (maximum softmax probability) within ε (their Algorithm 1,
# ε = 0.005), chosen at random among the candidates. Accuracy on the matched images is then compared.
#
# The data: one model of the world's zoo (the best on v1), its softmax outputs and the true labels on the
# source set (v1) and a target set (MatchedFrequency).

# %%
import numpy as np

from shifteval.labs import load

data = load("matched-evaluation")
src_probs, src_labels = data["src_probs"], data["src_labels"]
tgt_probs, tgt_labels = data["tgt_probs"], data["tgt_labels"]
eps = data["eps"]
print(
    f"model {data['model']}: {len(src_labels)} {data['source']} images, {len(tgt_labels)} {data['target']} images, eps = {eps}"
)

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 1 (1 point).** Write `predict(probs)`: the predicted labels and the confidences (maximum
# probability) of every row, as `(pred, conf)`.

# %% [raw]
# # BEGIN SOLUTION


# %%
def predict(probs):
    # BEGIN SOLUTION
    probs = np.asarray(probs)
    return probs.argmax(1), probs.max(1)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
pred, conf = predict(np.array([[0.2, 0.8], [0.6, 0.4]]))
assert list(pred) == [1, 0] and np.allclose(conf, [0.8, 0.6])

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
pred, conf = predict(src_probs)
assert np.array_equal(pred, src_probs.argmax(1)) and np.allclose(conf, src_probs.max(1))

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
# **Question 2 (2 points).** Write `candidates(src_pred, src_conf, pred, conf, eps)`: a boolean mask over the
# source images that could be matched to one target image with predicted label `pred` and confidence
# `conf` (same predicted label, `|Δconfidence| ≤ eps`).

# %% [raw]
# # BEGIN SOLUTION


# %%
def candidates(src_pred, src_conf, pred, conf, eps):
    # BEGIN SOLUTION
    return (np.asarray(src_pred) == pred) & (np.abs(np.asarray(src_conf) - conf) <= eps)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
mask = candidates(np.array([0, 0, 1, 0]), np.array([0.90, 0.95, 0.90, 0.903]), 0, 0.90, 0.005)
assert list(mask) == [True, False, False, True]

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
sp, sc = src_probs.argmax(1), src_probs.max(1)
for t in range(0, len(tgt_labels), 97):
    p, c = tgt_probs[t].argmax(), tgt_probs[t].max()
    assert np.array_equal(candidates(sp, sc, p, c, eps), (sp == p) & (np.abs(sc - c) <= eps))

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
# **Question 3 (3 points).** Write `match(src_probs, tgt_probs, eps, rng)` (Algorithm 1): go through the
# target images in order; for each, pick uniformly at random (`rng.integers`) one source image among its
# candidates that has not been used yet, and mark it used; targets without a candidate stay unmatched.
# Return `(src_idx, tgt_idx)`, the matched pairs as two integer arrays. Then `matched_gap` gives the
# accuracy on the matched source images minus that on the matched target images, in points.

# %% [raw]
# # BEGIN SOLUTION


# %%
def match(src_probs, tgt_probs, eps, rng):
    # BEGIN SOLUTION
    sp, sc = predict(src_probs)
    tp, tc = predict(tgt_probs)
    unused = np.ones(len(sp), dtype=bool)
    src_idx, tgt_idx = [], []
    for t in range(len(tp)):
        found = np.flatnonzero(unused & candidates(sp, sc, tp[t], tc[t], eps))
        if len(found):
            s = found[rng.integers(len(found))]
            unused[s] = False
            src_idx.append(s)
            tgt_idx.append(t)
    return np.array(src_idx, dtype=int), np.array(tgt_idx, dtype=int)
    # END SOLUTION


# %% [raw]
# # END SOLUTION


# %%
def matched_gap(src_idx, tgt_idx):
    src_acc = np.mean(src_probs[src_idx].argmax(1) == src_labels[src_idx])
    tgt_acc = np.mean(tgt_probs[tgt_idx].argmax(1) == tgt_labels[tgt_idx])
    return 100 * (src_acc - tgt_acc)


raw_gap = 100 * (np.mean(src_probs.argmax(1) == src_labels) - np.mean(tgt_probs.argmax(1) == tgt_labels))
gaps = [matched_gap(*match(src_probs, tgt_probs, eps, np.random.default_rng(r))) for r in range(3)]
print(f"accuracy gap {raw_gap:.2f} points; matched gap {np.mean(gaps):.2f} points (3 runs)")

# %% [raw]
# # BEGIN TESTS

# %%
s_idx, t_idx = match(
    np.array([[0.9, 0.1], [0.2, 0.8]]),
    np.array([[0.1, 0.9], [0.902, 0.098], [0.5, 0.5]]),
    0.005,
    np.random.default_rng(0),
)
assert np.asarray(s_idx).tolist() == [0] and np.asarray(t_idx).tolist() == [1]

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval.matching import algorithms

s_idx, t_idx = (np.asarray(a) for a in match(src_probs, tgt_probs, eps, np.random.default_rng(1)))
assert len(set(s_idx.tolist())) == len(s_idx) == len(t_idx)
assert np.array_equal(src_probs[s_idx].argmax(1), tgt_probs[t_idx].argmax(1))
assert np.all(np.abs(src_probs[s_idx].max(1) - tgt_probs[t_idx].max(1)) <= eps)
ref = algorithms.matched_accuracy(src_labels, src_probs, tgt_labels, tgt_probs, eps=eps, n_runs=10)
mine = [matched_gap(*match(src_probs, tgt_probs, eps, np.random.default_rng(10 + r))) for r in range(10)]
# ten random matchings each: the two means agree within 1.5 points (their runs' SD is about 0.5)
assert abs(np.mean(mine) - 100 * ref["matched_gap"]["mean"]) < 1.5
assert abs(1 - len(t_idx) / len(tgt_labels) - ref["fraction_unmatched"]["mean"]) < 0.02

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# **To think about (not graded).** Try `eps = 0.05` and `eps = 0.0001`. What happens to the share of
# unmatched target images, and to the matched gap? The chapter's ε sweep draws the whole curve.
