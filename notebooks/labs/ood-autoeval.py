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
# # Lab 5: energy scores and an OOD threshold
#
# Zhu et al. (2023) remove out-of-distribution images from a test set before estimating accuracy without
# labels. An image's *energy* is `E(x) = −T · log Σ_k exp(f_k(x) / T)` for the classifier's logits `f(x)`
# (§3.4); low energy means in-distribution. The threshold τ is the 99.5th percentile of the training images'
# energies (§3.5): images above it count as OOD.
#
# The data: logits of the chapter's classifier on its training images, on the first ID test source, and on
# each OOD source.

# %%
import numpy as np

from shifteval.labs import load

data = load("ood-autoeval")
train_logits, id_logits = data["train_logits"], data["id_logits"]
ood_logits = {s: data[f"ood_logits_{s}"] for s in data["ood_sources"]}
percentile = data["percentile"]
print(
    f"{len(train_logits)} training images, {len(id_logits)} ID test images ({data['id_source']}), OOD: {list(ood_logits)}"
)

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 1 (2 points).** Write `energy(logits, T=1.0)`, one energy per row. Use a numerically stable
# log-sum-exp (`scipy.special.logsumexp`, or subtract the row's maximum first).

# %% [raw]
# # BEGIN SOLUTION


# %%
def energy(logits, T=1.0):
    # BEGIN SOLUTION
    from scipy.special import logsumexp

    return -T * logsumexp(np.asarray(logits, dtype=float) / T, axis=1)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
assert np.allclose(energy(np.array([[0.0, 0.0], [1000.0, 1000.0]])), [-np.log(2), -1000 - np.log(2)])

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import importlib

ref_energy = importlib.import_module(
    "shifteval.autoeval.energy"
)  # the module, not the function of the same name

assert np.allclose(energy(id_logits), ref_energy.energy(id_logits), atol=1e-9)
assert np.allclose(energy(id_logits, 2.0), ref_energy.energy(id_logits, 2.0), atol=1e-9)

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
# **Question 2 (2 points).** Write `threshold(train_energies, percentile)`: τ, the given percentile of the
# training images' energies (`np.percentile`). Then `kept` shows the share of each source's images at or
# below τ — what the detector lets through.

# %% [raw]
# # BEGIN SOLUTION


# %%
def threshold(train_energies, percentile):
    # BEGIN SOLUTION
    return float(np.percentile(np.asarray(train_energies, dtype=float), percentile))
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
tau = threshold(energy(train_logits), percentile)
kept = {s: np.mean(energy(x) <= tau) for s, x in {"ID": id_logits, **ood_logits}.items()}
print(f"tau = {tau:.2f}; share kept: " + ", ".join(f"{s} {k:.1%}" for s, k in kept.items()))

# %% [raw]
# # BEGIN TESTS

# %%
assert np.isclose(threshold(np.arange(101.0), 99.5), 99.5)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import importlib

ref_energy = importlib.import_module(
    "shifteval.autoeval.energy"
)  # the module, not the function of the same name

e = ref_energy.energy(train_logits)
assert np.isclose(threshold(e, percentile), ref_energy.energy_threshold(e, percentile), atol=1e-9)

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
# **Question 3 (3 points).** Write `auroc(id_energies, ood_energies)`: the probability that a random OOD
# image has a higher energy than a random ID image, ties counting one half (the area under the ROC curve;
# 1 = perfect separation, 0.5 = chance). Hint: the Mann–Whitney U statistic, through ranks
# (`scipy.stats.rankdata`).

# %% [raw]
# # BEGIN SOLUTION


# %%
def auroc(id_energies, ood_energies):
    # BEGIN SOLUTION
    from scipy.stats import rankdata

    a, b = np.asarray(id_energies, float), np.asarray(ood_energies, float)
    ranks = rankdata(np.r_[a, b])
    u = ranks[len(a) :].sum() - len(b) * (len(b) + 1) / 2
    return float(u / (len(a) * len(b)))
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
for s, x in ood_logits.items():
    print(f"{s}: AUROC {auroc(energy(id_logits), energy(x)):.3f}")

# %% [raw]
# # BEGIN TESTS

# %%
assert np.isclose(auroc(np.array([0.0, 1.0]), np.array([2.0, 3.0])), 1.0)
assert np.isclose(auroc(np.array([0.0, 2.0]), np.array([1.0, 3.0])), 0.75)
assert np.isclose(auroc(np.array([1.0]), np.array([1.0])), 0.5)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import importlib

ref_energy = importlib.import_module(
    "shifteval.autoeval.energy"
)  # the module, not the function of the same name

for x in ood_logits.values():
    a, b = ref_energy.energy(id_logits), ref_energy.energy(x)
    assert np.isclose(auroc(a, b), ref_energy.auroc(a, b), atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# **To think about (not graded).** These are the classifier's own energies. The chapter fine-tunes a separate
# detector with outlier exposure; compare its AUROCs (the chapter's detection table) with yours.
