# %% [raw]
# # ASSIGNMENT CONFIG
# name: your-replication
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# generate: true
# files:
#   - your-replication-data.npz

# %% [markdown]
# # Lab 7: reading a replication folder and measuring the drop
#
# The your-replication chapter analyses any folder in its replication format: `labels/original.npy` and
# `labels/new.npy` (true classes), and for every model `predictions/<model>/original.npz` and `new.npz`
# (arrays `probs`, one softmax row per image). Here you read such a folder — the world's zoo, as `shifteval
# export-predictions` writes it — and compute what Recht et al. (2019) plot: each model's accuracy on both
# sets, the drop, and the line through the models.

# %%
from pathlib import Path

import numpy as np

from shifteval.labs import load
from shifteval.labs.data import unpack_folder

folder = unpack_folder(load("your-replication"), "replication")
models = sorted(p.name for p in (folder / "predictions").iterdir())
print(
    f"{folder}: {len(models)} models; files {[str(p.relative_to(folder)) for p in (folder / 'labels').iterdir()]}"
)

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 1 (2 points).** Write `accuracy(folder, model, split)`: the share of the images of `split`
# (`"original"` or `"new"`) whose most probable class is the true one.

# %% [raw]
# # BEGIN SOLUTION


# %%
def accuracy(folder, model, split):
    # BEGIN SOLUTION
    labels = np.load(Path(folder) / "labels" / f"{split}.npy")
    with np.load(Path(folder) / "predictions" / model / f"{split}.npz") as z:
        return float(np.mean(z["probs"].argmax(1) == labels))
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
a = accuracy(folder, models[0], "original")
assert isinstance(a, float) and 0 <= a <= 1

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval.yourrep import analysis
from shifteval.yourrep import folder as rep_folder

table = analysis.accuracy_table(rep_folder.load_folder(folder))
for m in models:
    assert np.isclose(accuracy(folder, m, "original"), table.loc[m, "acc_original"], atol=1e-12)
    assert np.isclose(accuracy(folder, m, "new"), table.loc[m, "acc_new"], atol=1e-12)

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
# **Question 2 (2 points).** Write `drops(folder, models)`: a dict from each model to its accuracy *drop*,
# original minus new, in percentage points (positive when the model is worse on the new set).

# %% [raw]
# # BEGIN SOLUTION


# %%
def drops(folder, models):
    # BEGIN SOLUTION
    return {m: 100 * (accuracy(folder, m, "original") - accuracy(folder, m, "new")) for m in models}
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
d = drops(folder, models)
print(
    f"mean drop {np.mean(list(d.values())):.2f} points; largest {max(d, key=d.get)} ({max(d.values()):.2f})"
)

# %% [raw]
# # BEGIN TESTS

# %%
assert set(drops(folder, models[:2])) == set(models[:2])

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval.yourrep import analysis
from shifteval.yourrep import folder as rep_folder

table = analysis.accuracy_table(rep_folder.load_folder(folder))
mine = drops(folder, models)
for m in models:
    assert np.isclose(mine[m], 100 * (table.loc[m, "acc_original"] - table.loc[m, "acc_new"]), atol=1e-9)

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
# **Question 3 (3 points).** Write `linear_fit(x, y)`: the least-squares line `y = slope · x + intercept`
# through the models' original (`x`) and new (`y`) accuracies (fractions), as `(slope, intercept)`.
# Recht et al. read the drop off this line: a slope above 1 means better models lose less.

# %% [raw]
# # BEGIN SOLUTION


# %%
def linear_fit(x, y):
    # BEGIN SOLUTION
    slope, intercept = np.polyfit(np.asarray(x, dtype=float), np.asarray(y, dtype=float), 1)
    return float(slope), float(intercept)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
x = np.array([accuracy(folder, m, "original") for m in models])
y = np.array([accuracy(folder, m, "new") for m in models])
slope, intercept = linear_fit(x, y)
print(f"new = {slope:.2f} x original {intercept:+.2f}")

# %% [raw]
# # BEGIN TESTS

# %%
assert np.allclose(linear_fit(np.array([0.5, 0.6, 0.7]), np.array([0.4, 0.5, 0.6])), (1.0, -0.1))

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval.linfit import fits

ref = fits.fit_linear(x, y, n_boot=1)
assert np.allclose(linear_fit(x, y), (ref.slope, ref.intercept), atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# **To think about (not graded).** The chapter compares this line with Recht et al.'s printed lines only for
# the models inside each line's range of original accuracy. Why is extrapolating a line fitted on other
# models not a fair comparison?
