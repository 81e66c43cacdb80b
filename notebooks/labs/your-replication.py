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
# # Lab 7: is your drop the usual one?
#
# You built a new test set, evaluated your models on it and on the original one, and every model lost
# accuracy. Recht et al. (2019) saw the same on CIFAR-10 and ImageNet: "All models see a large drop in
# accuracy from the original test sets to our new test sets" (§3.3), and new accuracy was close to a line in
# original accuracy whose slope is greater than 1 ("acc_new = 1.11 · acc_orig − 20.2%" on ImageNet). In this
# lab you do what the your-replication chapter does with a replication folder, with numpy alone: read the
# folder, measure every model's drop and its interval, fit the line, put two bootstrap intervals on its
# slope, and read the result against the paper.
#
# **The folder.** The chapter reads any folder in its layout:
#
# ```
# replication/
#   labels/original.npy               true labels of the original test set (int, N)
#   labels/new.npy                    true labels of the new test set (int, M)
#   predictions/<model>/original.npz  per model: 'probs' (N x K softmax) or 'predicted' (N,)
#   predictions/<model>/new.npz       the same on the new set
#   replication.json                  display names of the two sets and the number of classes
# ```
#
# **The data** (`your-replication-data.npz`): the chapter's worked example, the replication world's zoo of 31
# models on v1 (the original set, 10,000 images) and MatchedFrequency (the new set, 2,000 images). The
# full softmax outputs of 31 models on 12,000 images would make a 15 MB file, and an accuracy needs only each
# image's most probable class, so the file holds every model's predicted classes and the softmax of one model
# (the best on v1). The set-up cell below writes these arrays out as a folder in the layout above: one
# model's files hold `probs`, the others' `predicted`, both forms the chapter accepts. **From there on, work
# from the folder** (`np.load` reads both `.npy` and `.npz` files), as you would with your own.
#
# Run the cells in order. `grader.check("q1")` runs a question's public tests; more tests run when the lab is
# graded. Questions marked *graded by hand* are read by your teacher.

# %%
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

# set-up (not a question): the data file's arrays written out as a replication folder
data = np.load("your-replication-data.npz", allow_pickle=False)
folder = Path("replication")
(folder / "labels").mkdir(parents=True, exist_ok=True)
for split in ("original", "new"):
    np.save(folder / "labels" / f"{split}.npy", data[f"labels_{split}"])
    for i, name in enumerate(data["models"]):
        (folder / "predictions" / name).mkdir(parents=True, exist_ok=True)
        if name == data["probs_model"]:  # one model's full softmax outputs (images x classes), and the labels
            arrays = {"probs": data[f"probs_{split}"], "labels": data[f"labels_{split}"]}
        else:  # the others' predicted class per image
            arrays = {"predicted": data[f"predicted_{split}"][i]}
        np.savez_compressed(folder / "predictions" / name / f"{split}.npz", **arrays)
n_classes = data["probs_original"].shape[1]
set_names = {"original": str(data["set_names"][0]), "new": str(data["set_names"][1]), "n_classes": n_classes}
(folder / "replication.json").write_text(json.dumps(set_names))
del data  # from here on, the folder
print(sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())[:6], "...")

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 1 (2 points): one prediction file.** Write `predicted_classes(path)`: the predicted class of
# every image in the prediction file at `path`, as an integer array of shape (images,). A file holding
# `probs` (one softmax row per image) predicts each image's most probable class; a file holding `predicted`
# gives the classes directly. For a file with neither, raise a `ValueError` whose message names the file.

# %% [raw]
# # BEGIN SOLUTION


# %%
def predicted_classes(path):
    # BEGIN SOLUTION
    with np.load(path, allow_pickle=False) as z:
        if "probs" in z.files:
            return z["probs"].argmax(axis=1).astype(np.int64)
        if "predicted" in z.files:
            return z["predicted"].astype(np.int64)
    raise ValueError(f"{path}: a prediction file holds 'probs' or 'predicted'")
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
models = sorted(p.name for p in (folder / "predictions").iterdir())  # the folder's models
print(
    f"{len(models)} models; the first predicts {predicted_classes(folder / 'predictions' / models[0] / 'new.npz')[:10]}"
)

# %% [raw]
# # BEGIN TESTS

# %%
import tempfile as _tempfile
from pathlib import Path as _Path

with _tempfile.TemporaryDirectory() as _tmp:
    np.savez(_Path(_tmp) / "p.npz", probs=np.array([[0.1, 0.7, 0.2], [0.6, 0.3, 0.1]]))
    np.savez(_Path(_tmp) / "c.npz", predicted=np.array([2, 0, 1]))
    np.savez(_Path(_tmp) / "x.npz", correct=np.array([True, False]))
    _p, _c = predicted_classes(_Path(_tmp) / "p.npz"), predicted_classes(_Path(_tmp) / "c.npz")
    assert np.shape(_p) == (2,) and np.array_equal(_p, [1, 0]), (
        "probs [[0.1, 0.7, 0.2], [0.6, 0.3, 0.1]] predict class 1, then class 0 (the largest of each row): "
        f"expected [1, 0], got {_p!r}"
    )
    assert np.array_equal(_c, [2, 0, 1]), (
        f"a file holding predicted = [2, 0, 1] predicts [2, 0, 1]; got {_c!r}"
    )
    try:
        predicted_classes(_Path(_tmp) / "x.npz")
        _raised = None
    except ValueError as _e:
        _raised = str(_e)
    assert _raised is not None and "x.npz" in _raised, (
        f"a file with neither 'probs' nor 'predicted' should raise a ValueError naming the file; got {_raised!r}"
    )

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import tempfile as _tempfile
from pathlib import Path as _Path

import numpy as np

_d = np.load("your-replication-data.npz", allow_pickle=False)
for _i, _m in enumerate(_d["models"]):
    for _s in ("original", "new"):
        _got = predicted_classes(_Path("replication") / "predictions" / _m / f"{_s}.npz")
        assert np.array_equal(_got, _d[f"predicted_{_s}"][_i])
_probs = np.random.default_rng(1).dirichlet(np.ones(7), size=40)
with _tempfile.TemporaryDirectory() as _tmp:
    np.savez(_Path(_tmp) / "r.npz", probs=_probs, labels=np.zeros(40, int))
    assert np.array_equal(predicted_classes(_Path(_tmp) / "r.npz"), _probs.argmax(1))

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
# **Question 2 (2 points): who is right on which image.** Write `correctness(folder, split, models)`: a
# boolean array of shape (models, images), row `i` saying, for every image of `split` (`"original"` or
# `"new"`), whether `models[i]` predicts its true label (`labels/<split>.npy`). Then set `correct_orig` and
# `correct_new` to it for the folder's `models` on the two sets.

# %% [raw]
# # BEGIN SOLUTION


# %%
def correctness(folder, split, models):
    # BEGIN SOLUTION
    labels = np.load(Path(folder) / "labels" / f"{split}.npy")
    rows = [predicted_classes(Path(folder) / "predictions" / m / f"{split}.npz") == labels for m in models]
    return np.stack(rows)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
correct_orig = correctness(folder, "original", models)  # SOLUTION
correct_new = correctness(folder, "new", models)  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
n_orig, n_new = correct_orig.shape[1], correct_new.shape[1]  # test-set sizes
print(f"{set_names['original']}: {n_orig} images, {set_names['new']}: {n_new} images")

# %% [raw]
# # BEGIN TESTS

# %%
assert np.shape(correct_orig) == (len(models), 10_000) and np.shape(correct_new) == (len(models), 2_000), (
    f"correct_orig and correct_new should have one row per model and one column per image: shapes "
    f"({len(models)}, 10000) and ({len(models)}, 2000); got {np.shape(correct_orig)} and {np.shape(correct_new)}"
)
assert np.asarray(correct_orig).dtype == bool, (
    f"correct_orig should be booleans; got {np.asarray(correct_orig).dtype}"
)
import tempfile as _tempfile
from pathlib import Path as _Path

with _tempfile.TemporaryDirectory() as _tmp:
    (_Path(_tmp) / "labels").mkdir()
    np.save(_Path(_tmp) / "labels" / "new.npy", np.array([0, 1, 1]))
    for _m, _pred in (("a", [0, 1, 0]), ("b", [1, 1, 1])):
        (_Path(_tmp) / "predictions" / _m).mkdir(parents=True)
        np.savez(_Path(_tmp) / "predictions" / _m / "new.npz", predicted=np.array(_pred))
    _got = correctness(_tmp, "new", ["b", "a"])
    assert np.array_equal(_got, [[False, True, True], [True, True, False]]), (
        "labels [0, 1, 1]; model b predicts [1, 1, 1], model a [0, 1, 0]: correctness(folder, 'new', ['b', 'a']) "
        f"is [[False, True, True], [True, True, False]] (rows in the order of models); got {_got!r}"
    )

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("your-replication-data.npz", allow_pickle=False)
assert list(models) == sorted(_d["models"].tolist())
assert np.array_equal(correct_orig, _d["predicted_original"] == _d["labels_original"])
assert np.array_equal(correct_new, _d["predicted_new"] == _d["labels_new"])
assert np.array_equal(correctness("replication", "new", models[::-1]), correct_new[::-1])

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q3
# points: 1
# all_or_nothing: true

# %% [markdown]
# **Question 3 (1 point): the drop.** Set `acc_orig` and `acc_new` to every model's accuracy on the two sets
# (fractions, one per model), `drop` to its accuracy drop, original minus new, **in points** (positive when the
# model is worse on the new set), `n_drop` to the number of models that drop, and `mean_drop` to the mean drop
# over the models (points).

# %% [raw]
# # BEGIN SOLUTION

# %%
acc_orig = correct_orig.mean(axis=1)  # SOLUTION
acc_new = correct_new.mean(axis=1)  # SOLUTION
drop = 100 * (acc_orig - acc_new)  # SOLUTION
n_drop = int(np.sum(drop > 0))  # SOLUTION
mean_drop = float(np.mean(drop))  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
table = pd.DataFrame({"original": acc_orig, "new": acc_new, "drop (points)": drop}, index=models)
print(f"{n_drop} of {len(models)} models drop; mean drop {mean_drop:.2f} points")
table.sort_values("original").round(4)

# %% [raw]
# # BEGIN TESTS

# %%
for _name, _value in (("acc_orig", acc_orig), ("acc_new", acc_new), ("drop", drop)):
    assert np.shape(_value) == (len(models),), (
        f"{_name} should hold one number per model, shape ({len(models)},); got shape {np.shape(_value)}"
    )
assert np.all((0 <= acc_orig) & (acc_orig <= 1)), "accuracies are fractions, between 0 and 1"
assert np.allclose(drop, 100 * (acc_orig - acc_new)), (
    "drop is original minus new accuracy in points: 0.91 on the original set and 0.84 on the new is a drop of 7"
)
assert isinstance(n_drop, (int, np.integer)) and 0 <= n_drop <= len(models), (
    f"n_drop should be a whole number of models; got {n_drop!r}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("your-replication-data.npz", allow_pickle=False)
_o = (_d["predicted_original"] == _d["labels_original"]).mean(1)
_n = (_d["predicted_new"] == _d["labels_new"]).mean(1)
assert np.allclose(acc_orig, _o, atol=1e-12) and np.allclose(acc_new, _n, atol=1e-12)
assert np.allclose(drop, 100 * (_o - _n), atol=1e-9)
assert n_drop == int(np.sum(_o > _n)) and np.isclose(mean_drop, 100 * np.mean(_o - _n), atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q4
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 4 (2 points): how sure is each drop?** The test sets are finite: another 2,000 new images would
# give another accuracy. Resample the *images* of each set with replacement: each row of `img_orig` below holds
# the positions of 10,000 original images drawn with replacement, each row of `img_new` those of 2,000 new
# images. Write `bootstrap_accuracies(correct, idx)`: an array of shape (models, rows of `idx`), entry `[i, b]`
# the accuracy of model `i` on the images `idx[b]` (a loop over the rows is fine; indexing all rows at once
# takes gigabytes). Then set `boot_orig` and `boot_new` to it for the two sets, `drop_ci` to each model's 95%
# percentile interval of the drop `100 * (boot_orig - boot_new)`, shape (models, 2) (`np.percentile` with
# `axis`), and `n_clear` to the number of models whose whole interval lies above 0.

# %%
rng = np.random.default_rng(0)
n_boot = 1000
img_orig = rng.integers(0, n_orig, size=(n_boot, n_orig), dtype=np.int32)  # resamples of the original images
img_new = rng.integers(0, n_new, size=(n_boot, n_new), dtype=np.int32)  # resamples of the new images


# %% [raw]
# # BEGIN SOLUTION


# %%
def bootstrap_accuracies(correct, idx):
    # BEGIN SOLUTION
    correct = np.asarray(correct)
    return np.stack([correct[:, rows].mean(axis=1) for rows in np.asarray(idx)], axis=1)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
boot_orig = bootstrap_accuracies(correct_orig, img_orig)  # SOLUTION
boot_new = bootstrap_accuracies(correct_new, img_new)  # SOLUTION
drop_ci = np.percentile(100 * (boot_orig - boot_new), [2.5, 97.5], axis=1).T  # SOLUTION
n_clear = int(np.sum(drop_ci[:, 0] > 0))  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
_w = np.argmin(drop)
print(
    f"smallest drop: {models[_w]}, {drop[_w]:.2f} points, 95% interval [{drop_ci[_w, 0]:.2f}, {drop_ci[_w, 1]:.2f}]"
)
print(f"{n_clear} of {len(models)} intervals lie above 0")

# %% [raw]
# # BEGIN TESTS

# %%
_c = np.array([[True, False, True], [False, False, True]])
_got = bootstrap_accuracies(_c, np.array([[0, 1, 2], [0, 0, 0], [2, 2, 1]]))
assert np.shape(_got) == (2, 3), (
    f"2 models and 3 rows of idx give an array of shape (2, 3) (models, resamples); got shape {np.shape(_got)}"
)
assert np.allclose(_got, [[2 / 3, 1, 2 / 3], [1 / 3, 0, 2 / 3]]), (
    "correct [[1, 0, 1], [0, 0, 1]] on resamples [0, 1, 2], [0, 0, 0], [2, 2, 1]: model 0 is right on 2/3, 3/3, "
    f"2/3 of the drawn images, model 1 on 1/3, 0/3, 2/3; got {np.round(_got, 4).tolist()}"
)
assert np.shape(boot_orig) == (len(models), n_boot) and np.shape(boot_new) == (len(models), n_boot), (
    f"boot_orig and boot_new should have shape ({len(models)}, {n_boot}); got {np.shape(boot_orig)}, {np.shape(boot_new)}"
)
assert np.shape(drop_ci) == (len(models), 2) and np.all(drop_ci[:, 0] < drop_ci[:, 1]), (
    f"drop_ci should hold (low, high) per model, shape ({len(models)}, 2), in points; got shape {np.shape(drop_ci)}"
)
assert np.all((drop_ci[:, 0] < drop + 0.5) & (drop < drop_ci[:, 1] + 0.5)) and np.max(drop_ci) > 1, (
    "each model's interval (in points, like drop) should lie around its drop"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_rng = np.random.default_rng(5)
_c = _rng.random((4, 30)) < 0.6
_i = _rng.integers(0, 30, (9, 30))
assert np.allclose(bootstrap_accuracies(_c, _i), np.array([_c[:, _r].mean(1) for _r in _i]).T, atol=1e-12)
_d = np.load("your-replication-data.npz", allow_pickle=False)
_co, _cn = _d["predicted_original"] == _d["labels_original"], _d["predicted_new"] == _d["labels_new"]
_rng = np.random.default_rng(0)
_io = _rng.integers(0, 10_000, size=(1000, 10_000), dtype=np.int32)
_in = _rng.integers(0, 2_000, size=(1000, 2_000), dtype=np.int32)
_bo = np.array([_co[:, _r].mean(1) for _r in _io]).T
_bn = np.array([_cn[:, _r].mean(1) for _r in _in]).T
assert np.allclose(boot_orig, _bo, atol=1e-12) and np.allclose(boot_new, _bn, atol=1e-12)
_ci = np.percentile(100 * (_bo - _bn), [2.5, 97.5], axis=1).T
assert np.allclose(drop_ci, _ci, atol=1e-9) and n_clear == int(np.sum(_ci[:, 0] > 0))

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
# **Question 5 (2 points): the line (§3.3).** Write `fit_line(x, y)`: the least-squares line `y = slope · x +
# intercept` through the points `(x[i], y[i])`, returned as `(slope, intercept)` (two floats). Then set `slope`
# and `intercept` to the line through your models, `acc_orig` on x and `acc_new` on y (fractions).

# %% [raw]
# # BEGIN SOLUTION


# %%
def fit_line(x, y):
    # BEGIN SOLUTION
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    dx = x - x.mean()
    slope = np.sum(dx * (y - y.mean())) / np.sum(dx * dx)
    return float(slope), float(y.mean() - slope * x.mean())
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
slope, intercept = fit_line(acc_orig, acc_new)  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(
    f"acc_new = {slope:.2f} · acc_orig {100 * intercept:+.1f}%   (Recht et al., ImageNet: 1.11 · acc_orig − 20.2%)"
)

# %% [raw]
# # BEGIN TESTS

# %%
_got = fit_line(np.array([0.6, 0.7, 0.8]), np.array([0.5, 0.6, 0.7]))
assert np.shape(_got) == (2,), f"fit_line should return two numbers, (slope, intercept); got {_got!r}"
assert np.allclose(_got, (1.0, -0.1)), (
    f"the points (0.6, 0.5), (0.7, 0.6), (0.8, 0.7) lie on y = x - 0.1: expected (1, -0.1), got {_got}"
)
_got = fit_line(np.array([0.0, 1.0, 2.0]), np.array([0.0, 2.0, 1.0]))
assert np.allclose(_got, (0.5, 0.5)), (
    f"the least-squares line through (0, 0), (1, 2), (2, 1) is y = 0.5 x + 0.5; got {_got}"
)
assert 0 < slope < 5 and -5 < intercept < 1, (
    "slope and intercept should be the line through (acc_orig, acc_new), the accuracies as fractions"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_rng = np.random.default_rng(3)
_x = _rng.random(25)
_y = 0.3 * _x + _rng.normal(0, 0.1, 25)
assert np.allclose(fit_line(_x, _y), np.polyfit(_x, _y, 1), atol=1e-9)
_d = np.load("your-replication-data.npz", allow_pickle=False)
_o = (_d["predicted_original"] == _d["labels_original"]).mean(1)
_n = (_d["predicted_new"] == _d["labels_new"]).mean(1)
assert np.allclose((slope, intercept), np.polyfit(_o, _n, 1), atol=1e-9)

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
# **Question 6 (2 points): the bootstrap over models.** Recht et al. resample the *models* with replacement,
# refit the line on each resample and take the 2.5th and 97.5th percentiles of the slopes ("Computing a 95%
# confidence interval from 100,000 bootstrap samples gives [1.63, 1.76] for the slope [...] on CIFAR-10, and
# [1.07, 1.19] [...] for ImageNet", §3.3). Each row of `model_idx` below holds the positions of 31 models drawn
# with replacement. Write `bootstrap_slopes(x, y, idx)`: one slope per row `r` of `idx`, that of your
# `fit_line` through the points `x[r]`, `y[r]`. Then set `slopes_models` to the slopes for your models and
# `ci_models` to their 95% percentile interval, `np.percentile(slopes_models, [2.5, 97.5])`.

# %%
model_idx = np.random.default_rng(1).integers(
    0, len(models), size=(n_boot, len(models))
)  # resamples of the models


# %% [raw]
# # BEGIN SOLUTION


# %%
def bootstrap_slopes(x, y, idx):
    # BEGIN SOLUTION
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return np.array([fit_line(x[r], y[r])[0] for r in np.asarray(idx)])
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
slopes_models = bootstrap_slopes(acc_orig, acc_new, model_idx)  # SOLUTION
ci_models = np.percentile(slopes_models, [2.5, 97.5])  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"slope {slope:.3f}, 95% interval over models [{ci_models[0]:.3f}, {ci_models[1]:.3f}]")

# %% [raw]
# # BEGIN TESTS

# %%
_x, _y = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.0, 1.0, 4.0, 9.0])
_got = bootstrap_slopes(_x, _y, np.array([[0, 1, 2, 3], [0, 0, 1, 1], [2, 3, 3, 2]]))
assert np.shape(_got) == (3,), f"three rows of idx give three slopes, shape (3,); got shape {np.shape(_got)}"
assert np.allclose(_got, [3.0, 1.0, 5.0]), (
    "with x = [0, 1, 2, 3], y = [0, 1, 4, 9]: row [0, 1, 2, 3] keeps every point (slope 3), row [0, 0, 1, 1] "
    "fits (0, 0) and (1, 1) twice each (slope 1), row [2, 3, 3, 2] fits (2, 4) and (3, 9) (slope 5); expected "
    f"[3, 1, 5], got {np.round(_got, 4).tolist()}"
)
assert np.shape(slopes_models) == (n_boot,), (
    f"slopes_models should hold {n_boot} slopes; got {np.shape(slopes_models)}"
)
assert np.shape(ci_models) == (2,) and ci_models[0] < slope < ci_models[1], (
    f"ci_models should be the 2.5th and 97.5th percentiles of slopes_models, around the slope {slope:.3f}; "
    f"got {ci_models!r}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _slopes(x, y, rows):
    xb, yb = x[rows], y[rows]
    dx = xb - xb.mean(1, keepdims=True)
    return np.sum(dx * (yb - yb.mean(1, keepdims=True)), 1) / np.sum(dx * dx, 1)


_rng = np.random.default_rng(4)
_x, _y = _rng.random(12), _rng.random(12)
_rows = _rng.integers(0, 12, (50, 12))
assert np.allclose(bootstrap_slopes(_x, _y, _rows), _slopes(_x, _y, _rows), atol=1e-8)
_d = np.load("your-replication-data.npz", allow_pickle=False)
_o = (_d["predicted_original"] == _d["labels_original"]).mean(1)
_n = (_d["predicted_new"] == _d["labels_new"]).mean(1)
_rows = np.random.default_rng(1).integers(0, len(_o), size=(1000, len(_o)))
_b = _slopes(_o, _n, _rows)
assert np.allclose(slopes_models, _b, atol=1e-8) and np.allclose(
    ci_models, np.percentile(_b, [2.5, 97.5]), atol=1e-8
)

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
# **Question 7 (2 points): models *and* images.** The bootstrap over models treats each model's accuracies as
# exact, but they were measured on finite test sets: the error bars of Recht et al.'s Figure 1. The chapter
# resamples both at once: in replicate `b`, the models `model_idx[b]`, each with its accuracies on the image
# resamples `b` of Question 4 (`boot_orig[:, b]`, `boot_new[:, b]`). Write `slopes_models_images(boot_x,
# boot_y, idx)`: for each row `b` of `idx`, the slope of your `fit_line` through the points `boot_x[r, b]`,
# `boot_y[r, b]` with `r = idx[b]`. Then set `slopes_both` to these slopes for your models and `ci_both` to their
# 95% percentile interval.

# %% [raw]
# # BEGIN SOLUTION


# %%
def slopes_models_images(boot_x, boot_y, idx):
    # BEGIN SOLUTION
    boot_x, boot_y = np.asarray(boot_x, dtype=float), np.asarray(boot_y, dtype=float)
    return np.array([fit_line(boot_x[r, b], boot_y[r, b])[0] for b, r in enumerate(np.asarray(idx))])
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
slopes_both = slopes_models_images(boot_orig, boot_new, model_idx)  # SOLUTION
ci_both = np.percentile(slopes_both, [2.5, 97.5])  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
pd.DataFrame(
    {"2.5%": [ci_models[0], ci_both[0]], "97.5%": [ci_models[1], ci_both[1]]},
    index=["resampling models", "resampling models and images"],
).round(3)

# %% [raw]
# # BEGIN TESTS

# %%
_bx = np.array([[0.0, 0.0], [1.0, 2.0], [2.0, 4.0]])  # 3 models, 2 image resamples
_by = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 1.0]])
_got = slopes_models_images(_bx, _by, np.array([[0, 1, 2], [0, 1, 2]]))
assert np.shape(_got) == (2,), f"two rows of idx give two slopes, shape (2,); got shape {np.shape(_got)}"
assert np.allclose(_got, [1.0, 0.25]), (
    "replicate 0 uses column 0 of boot_x, boot_y: points (0, 0), (1, 1), (2, 2), slope 1; replicate 1 uses "
    f"column 1: (0, 0), (2, 1), (4, 1), slope 0.25; expected [1, 0.25], got {np.round(_got, 4).tolist()}"
)
assert np.shape(slopes_both) == (n_boot,) and np.shape(ci_both) == (2,), (
    f"slopes_both should hold {n_boot} slopes and ci_both two numbers; got {np.shape(slopes_both)}, {np.shape(ci_both)}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_rng = np.random.default_rng(6)
_bx, _by = _rng.random((8, 5)), _rng.random((8, 5))
_rows = _rng.integers(0, 8, (5, 8))
_ref = [np.polyfit(_bx[_r, _b], _by[_r, _b], 1)[0] for _b, _r in enumerate(_rows)]
assert np.allclose(slopes_models_images(_bx, _by, _rows), _ref, atol=1e-8)
_ref = [np.polyfit(boot_orig[_r, _b], boot_new[_r, _b], 1)[0] for _b, _r in enumerate(model_idx)]
assert np.allclose(slopes_both, _ref, atol=1e-8) and np.allclose(
    ci_both, np.percentile(_ref, [2.5, 97.5]), atol=1e-8
)

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
# **Question 8 (2 points, graded by hand): a plot.** Draw your Figure 1: new against original accuracy in
# percent, one point per model with its 95% error bars in both directions (the 2.5th and 97.5th percentiles of
# `boot_orig` and `boot_new` over the resamples; `plt.errorbar` takes `xerr` and `yerr` as two rows, the
# distances below and above each point), your line over your models' range, the line y = x (no drop) dashed,
# and Recht et al.'s two printed lines, each over the original accuracies of its own models (§3.3): CIFAR-10,
# acc_new = 1.69 · acc_orig − 72.7% for original accuracies from 83% to 98%, and ImageNet, acc_new = 1.11 ·
# acc_orig − 20.2% from 21% to 83%. Label the axes, add a legend and a title.

# %% [raw]
# # BEGIN SOLUTION

# %%
# your plot here
# BEGIN SOLUTION
lo_o, hi_o = np.percentile(boot_orig, [2.5, 97.5], axis=1)
lo_n, hi_n = np.percentile(boot_new, [2.5, 97.5], axis=1)
fig, ax = plt.subplots(figsize=(6.5, 5.5))
xerr = 100 * np.array([acc_orig - lo_o, hi_o - acc_orig])
yerr = 100 * np.array([acc_new - lo_n, hi_n - acc_new])
ax.errorbar(
    100 * acc_orig, 100 * acc_new, xerr=xerr, yerr=yerr, fmt="o", markersize=3, label="your models (95%)"
)
grid = np.linspace(acc_orig.min(), acc_orig.max(), 50)
ax.plot(100 * grid, 100 * (slope * grid + intercept), color="C3", label=f"your fit: slope {slope:.2f}")
for a, b, lo, hi, style, name in (
    (1.69, -72.7, 83, 98, "--", "CIFAR-10"),
    (1.11, -20.2, 21, 83, ":", "ImageNet"),
):
    xs = np.array([lo, hi])
    ax.plot(xs, a * xs + b, "k", linestyle=style, linewidth=1, label=f"Recht et al. {name}: slope {a}")
ax.plot([20, 100], [20, 100], color="grey", linestyle="--", linewidth=1, label="y = x (no drop)")
ax.set_xlabel(f"original test accuracy, {set_names['original']} (%)")
ax.set_ylabel(f"new test accuracy, {set_names['new']} (%)")
ax.set_title("New against original accuracy")
ax.legend(fontsize=8)
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
# **Question 9 (1 point): what the line says.** Set `above_one_models` and `above_one_both` to `True` if the
# whole interval `ci_models`, respectively `ci_both`, lies above 1 (bools), and `line_drops` to the drop,
# original minus new, that your line predicts for the weakest and for the strongest of your models (at the
# lowest and the highest of `acc_orig`), in points: two numbers.

# %% [raw]
# # BEGIN SOLUTION

# %%
above_one_models = bool(ci_models[0] > 1)  # SOLUTION
above_one_both = bool(ci_both[0] > 1)  # SOLUTION
line_drops = 100 * ((1 - slope) * np.array([acc_orig.min(), acc_orig.max()]) - intercept)  # SOLUTION
# BEGIN SOLUTION NO PROMPT
# Checks the statements of Question 10's model answer: a false one fails the solution.
assert n_drop == n_clear == len(models) and 3 <= drop.min() and drop.max() <= 15
assert drop[np.argmax(acc_orig)] < 11 and np.all(acc_orig[drop >= 11] < np.median(acc_orig))
assert ci_models[0] > 1 and ci_both[0] > 1 and line_drops[0] > line_drops[1]
assert abs(slope - 1.11) < abs(slope - 1.69) and np.ptp(ci_both) > np.ptp(ci_models)
# END SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"slope clear of 1: over models {above_one_models}, over models and images {above_one_both}")
print(
    f"the line's drop: {line_drops[0]:.1f} points for the weakest model, {line_drops[1]:.1f} for the strongest"
)

# %% [raw]
# # BEGIN TESTS

# %%
for _name, _value in (("above_one_models", above_one_models), ("above_one_both", above_one_both)):
    assert isinstance(_value, (bool, np.bool_)), (
        f"{_name} should be True or False; got {type(_value).__name__}"
    )
assert np.shape(line_drops) == (2,), f"line_drops should hold two numbers; got shape {np.shape(line_drops)}"
assert np.all(np.abs(np.asarray(line_drops)) > 0.5), (
    "line_drops are in points: a drop of 0.06 in accuracy is 6 points (multiply by 100)"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

assert bool(above_one_models) == bool(np.asarray(ci_models)[0] > 1)
assert bool(above_one_both) == bool(np.asarray(ci_both)[0] > 1)
_e = np.array([np.min(acc_orig), np.max(acc_orig)])
assert np.allclose(line_drops, 100 * (_e - slope * _e - intercept), atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q10
# points: 3
# manual: true

# %% [markdown]
# **Question 10 (3 points, graded by hand): your drop against the paper's.** Recht et al. write: "All models see
# a large drop in accuracy from the original test sets to our new test sets" (§3.3), with "accuracy drops of 3%
# – 15% on CIFAR-10 and 11% – 14% on ImageNet" (Abstract); and "On both datasets, the slope of the linear fit is
# greater than 1. So models with higher original accuracy see a smaller drop on the new test sets. [...] This
# effect is less pronounced on ImageNet (slope 1.1) than on CIFAR-10 (slope 1.7)" (§3.3). In a short paragraph
# (5–8 sentences), using your numbers:
#
# 1. Does every model drop, and is each drop more than the test sets' noise (`n_drop`, `drop`, `n_clear`)? How
#    large are the drops next to the paper's ranges?
# 2. Is the slope above 1 (`slope`, `ci_models`, `ci_both`, `line_drops`), and which of the paper's two lines
#    is yours closer to? What does resampling the images add to the interval, and does it change the answer?
# 3. Your new set, MatchedFrequency, was drawn from the world's candidate pool by the paper's MatchedFrequency
#    strategy (App. C.1.2); the models never saw it. What does a slope above 1 say, and not say, about *why*
#    the models drop?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# *Marking: one point for each part; an answer earns a part's point when it uses its numbers and gives the
# reason.*
#
# # Every one of the models is less accurate on MatchedFrequency than on v1 (`n_drop` of `len(models)`), by
# `drop.min()` to `drop.max()` points (mean `mean_drop`), and every drop's 95% interval over images lies above 0
# (`n_clear`, `drop_ci`): as in the paper, all models drop, by amounts within its CIFAR-10 range (3–15%) and,
# except for the weakest models, below its ImageNet range (11–14%). The line is acc_new = `slope` · acc_orig +
# `intercept`; its slope's interval over models, `ci_models`, lies above 1, so the stronger models lose less:
# the line predicts a larger drop for the weakest model than for the strongest (`line_drops`). This is closer
# to the paper's ImageNet line (slope 1.11, interval [1.07, 1.19], offset −20.2%) than to its CIFAR-10 one
# (1.69). Resampling the images too widens the interval (`ci_both`), since every accuracy is measured on a
# finite test set; it still lies above 1, so the finding holds with the test sets' noise counted. A slope
# above 1 describes how the drop varies with accuracy, not where it comes from: no model here was tuned on
# v1's images, so the drop is not adaptive overfitting (the paper reads its slope against it, §5.1), and the
# line alone cannot tell a harder new set from one drawn differently (its images' selection frequencies,
# Engstrom et al. 2020), which the chapter examines next.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# **Done.** Save the notebook and hand it in. The chapter goes on where this lab stops: the same fit on probit
# axes, matched evaluation of every model (Anzaku et al.), the selection-frequency adjustment with the fresh
# votes (Engstrom et al.), and a table of the papers' findings that the folder reproduces or not.
