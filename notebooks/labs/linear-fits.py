# %% [raw]
# # ASSIGNMENT CONFIG
# name: linear-fits
# init_cell: true
# check_all_cell: false
# export_cell: false
# run_tests: false
# generate: true
# files:
#   - linear-fits-data.npz
# requirements:
#   - scipy

# %% [markdown]
# # Lab 2: is a slope above 1 a sign of robustness?
#
# Recht et al. (2019) evaluated 34 CIFAR-10 models on the original test set and on their new one. Every
# model lost accuracy, and the new accuracies lie on a line, "acc_new = 1.69 · acc_orig − 72.7%" (§3.3), whose
# slope above 1 they read as "model robustness improves with increasing accuracy". In App. C.2 and §5.3 they
# also fit lines on *probit* axes (both accuracies through Φ⁻¹, the inverse of the Gaussian CDF) and explain
# them with a model of image difficulty. In this lab you recompute their error bars (Clopper–Pearson
# intervals), the line and its bootstrap interval, the same on probit axes, and then ask what a test set that
# is uniformly harder, and nothing else, does to the slope on linear axes.
#
# **The data** (`linear-fits-data.npz`): the paper's Table 11 as printed — every model's accuracy (%) on the
# original test set (10,000 images) and on the new one (2,000 images, the size the paper gives in §3 and
# App. B.1), and the printed 95% interval on the new test set.
#
# Run the cells in order. `grader.check("q1")` runs a question's public tests; more tests run when the lab is
# graded. Questions marked *graded by hand* are read by your teacher.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

data = np.load("linear-fits-data.npz", allow_pickle=False)
models = data["models"]  # the 34 models' names, in the order of Table 11
orig_pct, new_pct = data["orig_acc"], data["new_acc"]  # accuracy (%) on the original and the new test set
printed_low, printed_high = data["new_ci_low"], data["new_ci_high"]  # printed 95% interval (%), new test set
n_orig, n_new = int(data["n_orig"]), int(data["n_new"])  # test-set sizes: 10,000 and 2,000
orig, new = orig_pct / 100, new_pct / 100  # the accuracies as fractions
print(
    f"{len(models)} models; original accuracy {orig.min():.3f}-{orig.max():.3f}, new {new.min():.3f}-{new.max():.3f}"
)

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 1 (2 points): Clopper–Pearson intervals.** The error bars of Recht et al.'s Figure 1 are exact
# binomial 95% intervals: a model that is right on `k` of `n` images has the interval
#
# $$\left[\,B\!\left(\tfrac{\alpha}{2};\; k,\; n-k+1\right),\;\; B\!\left(1-\tfrac{\alpha}{2};\; k+1,\; n-k\right)\right],$$
#
# where $B(q; a, b)$ is the $q$-quantile of a Beta(a, b) distribution (`stats.beta.ppf(q, a, b)`) and
# $\alpha = 0.05$; the lower bound is 0 when `k = 0` and the upper bound 1 when `k = n` (the Beta quantile is
# undefined there). Write `clopper_pearson(k, n, alpha=0.05)`, accepting arrays, returning `(low, high)` as
# fractions.

# %% [raw]
# # BEGIN SOLUTION


# %%
def clopper_pearson(k, n, alpha=0.05):
    # BEGIN SOLUTION
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        low = np.where(k == 0, 0.0, stats.beta.ppf(alpha / 2, k, n - k + 1))
        high = np.where(k == n, 1.0, stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
_got = clopper_pearson(np.array([0, 5, 10]), 10)
assert (
    isinstance(_got, tuple) and len(_got) == 2 and np.shape(_got[0]) == (3,) and np.shape(_got[1]) == (3,)
), (
    "clopper_pearson should return two arrays (low, high), one bound per k: for k = [0, 5, 10] two arrays of "
    f"shape (3,); got {_got!r}"
)
assert np.isclose(_got[0][0], 0) and np.isclose(_got[1][2], 1), (
    f"k = 0 has lower bound 0 and k = n upper bound 1; got low {_got[0][0]} for k = 0, high {_got[1][2]} for k = n"
)
assert np.allclose(_got[0], [0.0, 0.187086, 0.691503], atol=1e-5), (
    "for k = [0, 5, 10] of n = 10 the lower bounds are [0, 0.187086, 0.691503] (the 0.025-quantiles of "
    f"Beta(k, n - k + 1)); got {np.round(_got[0], 6).tolist()}"
)
assert np.allclose(_got[1], [0.308497, 0.812914, 1.0], atol=1e-5), (
    "for k = [0, 5, 10] of n = 10 the upper bounds are [0.308497, 0.812914, 1] (the 0.975-quantiles of "
    f"Beta(k + 1, n - k)); got {np.round(_got[1], 6).tolist()}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np
from scipy import stats as _st

_rng = np.random.default_rng(1)
_n = _rng.integers(1, 3000, 40)
_k = np.minimum(_rng.integers(0, 3000, 40), _n)
_k[:3], _n[:3] = [0, 7, 12], [9, 7, 12]  # k = 0 and k = n
for _a in (0.05, 0.1, 1e-4):
    _lo, _hi = clopper_pearson(_k, _n, _a)
    _half = _a / 2
    with np.errstate(invalid="ignore"):
        _rlo = np.where(_k == 0, 0.0, _st.beta.ppf(_half, _k, _n - _k + 1))
        _rhi = np.where(_k == _n, 1.0, _st.beta.ppf(1 - _half, _k + 1, _n - _k))
    assert np.allclose(_lo, _rlo, atol=1e-9) and np.allclose(_hi, _rhi, atol=1e-9)

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
# **Question 2 (1 point): the printed error bars.** Recompute Table 11's intervals on the new test set: set
# `k_new` to the number of new test images each model gets right (its accuracy times `n_new`, rounded to a
# whole number, as integers), `new_low` and `new_high` to your intervals **in percent**, and `max_dev` to the
# largest absolute difference, over the models and both bounds, between your bounds and the printed ones
# (`printed_low`, `printed_high`), in points. The printed accuracies are rounded to 0.1 points, so expect
# a difference of up to about 0.1.

# %% [raw]
# # BEGIN SOLUTION

# %%
k_new = np.round(new * n_new).astype(int)  # SOLUTION
new_low, new_high = (100 * b for b in clopper_pearson(k_new, n_new))  # SOLUTION
deviations = np.concatenate([new_low - printed_low, new_high - printed_high])  # SOLUTION
max_dev = float(np.max(np.abs(deviations)))  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"largest difference from the printed bounds: {max_dev:.3f} points")
b1 = [100 * float(b) for b in clopper_pearson(1800, 2000)]
print(f"1,800 of 2,000 right: [{b1[0]:.1f}%, {b1[1]:.1f}%] (App. B.1 prints [88.6%, 91.3%])")

# %% [raw]
# # BEGIN TESTS

# %%
assert np.shape(k_new) == (len(models),) and np.issubdtype(np.asarray(k_new).dtype, np.integer), (
    f"k_new should hold one whole number per model, an integer array of shape ({len(models)},); got "
    f"shape {np.shape(k_new)}, dtype {np.asarray(k_new).dtype}"
)
assert k_new[0] == round(new[0] * n_new), (
    f"the first model is right on {new_pct[0]}% of {n_new} images, that is {round(new[0] * n_new)}; got {k_new[0]}"
)
assert np.shape(new_low) == np.shape(new_high) == (len(models),) and np.all(np.asarray(new_high) > 1), (
    "new_low and new_high should hold one bound per model, in percent (90.1, not 0.901)"
)
assert isinstance(max_dev, (int, float, np.number)), (
    f"max_dev should be one number; got {type(max_dev).__name__}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

_d = np.load("linear-fits-data.npz", allow_pickle=False)
_k = np.round(_d["new_acc"] / 100 * 2000).astype(int)
assert np.array_equal(k_new, _k)
_lo, _hi = (100 * np.asarray(_b) for _b in clopper_pearson(_k, 2000))  # your own intervals, in percent
assert np.allclose(new_low, _lo, atol=1e-9) and np.allclose(new_high, _hi, atol=1e-9)
_dev = max(np.abs(_lo - _d["new_ci_low"]).max(), np.abs(_hi - _d["new_ci_high"]).max())
assert np.isclose(max_dev, _dev, atol=1e-9)

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
# **Question 3 (2 points): the line (§3.3).** Write `fit_line(x, y)`: the least-squares line `y = slope · x +
# intercept` through the points `(x[i], y[i])`, returned as `(slope, intercept)` (two floats). Then set
# `slope` and `intercept` to the line through the 34 models, original accuracy `orig` on x and new accuracy
# `new` on y (fractions). Recht et al. print "acc_new = 1.69 · acc_orig − 72.7%".

# %% [raw]
# # BEGIN SOLUTION


# %%
def fit_line(x, y):
    # BEGIN SOLUTION
    slope, intercept = np.polyfit(np.asarray(x, dtype=float), np.asarray(y, dtype=float), 1)
    return float(slope), float(intercept)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
slope, intercept = fit_line(orig, new)  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"acc_new = {slope:.3f} · acc_orig {100 * intercept:+.1f}%")

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
    "the least-squares line through (0, 0), (1, 2), (2, 1) is y = 0.5 x + 0.5 (it passes through the mean "
    f"point (1, 1)); got {_got}"
)
assert 0 < slope < 5 and -5 < intercept < 1, (
    "slope and intercept should be the line through (orig, new), the accuracies as fractions: acc_new on y"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np


def _line(x, y):
    dx = x - x.mean()
    b = np.sum(dx * (y - y.mean())) / np.sum(dx * dx)
    return b, y.mean() - b * x.mean()


_rng = np.random.default_rng(3)
_x = _rng.random(25)
_y = 0.3 * _x + _rng.normal(0, 0.1, 25)
assert np.allclose(fit_line(_x, _y), _line(_x, _y), atol=1e-9)
_d = np.load("linear-fits-data.npz", allow_pickle=False)
assert np.allclose((slope, intercept), _line(_d["orig_acc"] / 100, _d["new_acc"] / 100), atol=1e-9)

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
# **Question 4 (2 points): the bootstrap over models.** How sure is the slope? Recht et al. resample the
# *models* with replacement, refit the line on each resample and take the 2.5th and 97.5th percentiles of the
# refitted slopes ("Computing a 95% confidence interval from 100,000 bootstrap samples gives [1.63, 1.76] for
# the slope", §3.3). The cell below draws 2,000 resamples: each row of `idx` holds the positions of 34 models
# drawn with replacement. Write `bootstrap_slopes(x, y, idx)`: one slope per row `r` of `idx`, the slope of
# your `fit_line` through the points `x[r]`, `y[r]`. Then set `boot` to the slopes for the 34 models and
# `slope_ci` to the 95% percentile interval, `np.percentile(boot, [2.5, 97.5])`.

# %%
rng = np.random.default_rng(0)
idx = rng.integers(0, len(orig), size=(2000, len(orig)))  # 2,000 resamples of the models (the paper: 100,000)

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
boot = bootstrap_slopes(orig, new, idx)  # SOLUTION
slope_ci = np.percentile(boot, [2.5, 97.5])  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"slope {slope:.3f}, 95% bootstrap interval [{slope_ci[0]:.3f}, {slope_ci[1]:.3f}]")

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
assert np.shape(boot) == (len(idx),), (
    f"boot should hold one slope per row of idx, {len(idx)}; got {np.shape(boot)}"
)
assert np.shape(slope_ci) == (2,) and slope_ci[0] < slope < slope_ci[1], (
    f"slope_ci should be two numbers, the 2.5th and 97.5th percentiles of boot, around the slope {slope:.3f}; "
    f"got {slope_ci!r}"
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
_d = np.load("linear-fits-data.npz", allow_pickle=False)
_rows = np.random.default_rng(0).integers(0, 34, size=(2000, 34))
_b = _slopes(_d["orig_acc"] / 100, _d["new_acc"] / 100, _rows)
assert np.allclose(boot, _b, atol=1e-8)
assert np.allclose(slope_ci, np.percentile(_b, [2.5, 97.5]), atol=1e-8)

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
# **Question 5 (1 point): what the line says.** Set `slope_above_one` to `True` if the whole 95% interval
# `slope_ci` lies above 1 (a bool), and `drops` to the accuracy drop, original minus new, that the line
# predicts for models with original accuracies `levels` (85%, 93% and 98%), in points: one number per level.

# %%
levels = np.array([0.85, 0.93, 0.98])

# %% [raw]
# # BEGIN SOLUTION

# %%
slope_above_one = bool(slope_ci[0] > 1)  # SOLUTION
drops = 100 * (levels - (slope * levels + intercept))  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(
    "predicted drop:",
    ", ".join(f"{d:.1f} points at {100 * a:.0f}%" for a, d in zip(levels, drops, strict=True)),
)

# %% [raw]
# # BEGIN TESTS

# %%
assert isinstance(slope_above_one, (bool, np.bool_)), (
    f"slope_above_one should be True or False; got {type(slope_above_one).__name__}"
)
assert np.shape(drops) == (3,), (
    f"drops should hold one number per level, shape (3,); got shape {np.shape(drops)}"
)
assert np.all(np.abs(np.asarray(drops)) > 0.5) or abs(slope - 1) < 1e-3, (
    "drops are in points: a drop of 0.08 in accuracy is 8 points (multiply by 100)"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np

assert bool(slope_above_one) == bool(np.asarray(slope_ci)[0] > 1)
_a = np.array([0.85, 0.93, 0.98])
assert np.allclose(drops, 100 * (_a - slope * _a - intercept), atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q6
# points: 2
# manual: true

# %% [markdown]
# **Question 6 (2 points, graded by hand): a plot.** Draw Recht et al.'s Figure 1 (left panel) for the 34
# models: new against original accuracy in percent, each model with its 95% Clopper–Pearson interval as error
# bars in both directions (your `clopper_pearson`, with `n_orig` images on x and `n_new` on y;
# `plt.errorbar` takes `xerr` and `yerr` as two rows, the distances below and above each point), your line
# over the models' range, and the line y = x (no drop) dashed. Label the axes, add a legend and a title.

# %% [raw]
# # BEGIN SOLUTION

# %%
# your plot here
# BEGIN SOLUTION
orig_low, orig_high = clopper_pearson(np.round(orig * n_orig), n_orig)
fig, ax = plt.subplots(figsize=(6, 5))
xerr = 100 * np.array([orig - orig_low, orig_high - orig])
yerr = np.array([new_pct - new_low, new_high - new_pct])
ax.errorbar(
    orig_pct, new_pct, xerr=xerr, yerr=yerr, fmt="o", markersize=3, label="models (95% Clopper-Pearson)"
)
grid = np.linspace(orig.min(), orig.max(), 50)
ax.plot(100 * grid, 100 * (slope * grid + intercept), color="C3", label=f"fit: slope {slope:.2f}")
ax.plot([65, 100], [65, 100], "k--", linewidth=1, label="y = x (no drop)")
ax.set_xlabel("original test accuracy (%)")
ax.set_ylabel("new test accuracy (%)")
ax.set_title("CIFAR-10: new against original accuracy (Table 11)")
ax.legend()
plt.show()
# END SOLUTION

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q7
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 7 (2 points): the same on probit axes (App. C.2).** Write `probit(acc)`: Φ⁻¹ of accuracies
# given as fractions (`stats.norm.ppf`). Then fit the line on probit axes, `Φ⁻¹(acc_new) = u · Φ⁻¹(acc_orig)
# + v`: set `probit_slope` and `probit_intercept` with your `fit_line`, `probit_boot` to the bootstrap slopes
# on probit axes (your `bootstrap_slopes`, with the same `idx`), and `probit_ci` to their 95% percentile
# interval.

# %% [raw]
# # BEGIN SOLUTION


# %%
def probit(acc):
    return stats.norm.ppf(np.asarray(acc, dtype=float))  # SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN SOLUTION

# %%
probit_slope, probit_intercept = fit_line(probit(orig), probit(new))  # SOLUTION
probit_boot = bootstrap_slopes(probit(orig), probit(new), idx)  # SOLUTION
probit_ci = np.percentile(probit_boot, [2.5, 97.5])  # SOLUTION

# %% [raw]
# # END SOLUTION

# %%
pd.DataFrame(
    {
        "slope": [slope, probit_slope],
        "2.5%": [slope_ci[0], probit_ci[0]],
        "97.5%": [slope_ci[1], probit_ci[1]],
    },
    index=["linear axes", "probit axes"],
).round(3)

# %% [raw]
# # BEGIN TESTS

# %%
_got = probit(np.array([0.5, 0.975, 0.025]))
assert np.shape(_got) == (3,), f"probit of three accuracies is three numbers; got shape {np.shape(_got)}"
assert np.allclose(_got, [0.0, 1.959964, -1.959964], atol=1e-6), (
    "Φ⁻¹(0.5) = 0 and Φ⁻¹(0.975) = 1.96 = -Φ⁻¹(0.025) (accuracies as fractions, not percent); "
    f"got {np.round(_got, 6).tolist()}"
)
assert np.shape(probit_boot) == (len(idx),), (
    f"probit_boot should hold {len(idx)} slopes; got {np.shape(probit_boot)}"
)
assert np.shape(probit_ci) == (2,) and probit_ci[0] < probit_slope < probit_ci[1], (
    f"probit_ci should be the 2.5th and 97.5th percentiles of probit_boot, around probit_slope; got {probit_ci!r}"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np
from scipy import stats as _st

_rng = np.random.default_rng(5)
_a = _rng.uniform(0.01, 0.99, 30)
assert np.allclose(probit(_a), _st.norm.ppf(_a), atol=1e-12)
_d = np.load("linear-fits-data.npz", allow_pickle=False)
_px, _py = _st.norm.ppf(_d["orig_acc"] / 100), _st.norm.ppf(_d["new_acc"] / 100)
assert np.allclose((probit_slope, probit_intercept), fit_line(_px, _py), atol=1e-9)
_b = bootstrap_slopes(_px, _py, np.random.default_rng(0).integers(0, 34, size=(2000, 34)))
assert np.allclose(probit_boot, _b, atol=1e-9) and np.allclose(
    probit_ci, np.percentile(_b, [2.5, 97.5]), atol=1e-9
)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q8
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 8 (2 points): the Gaussian difficulty model (§5.3).** Suppose every image has a difficulty τ, the
# difficulties of a test set are normal, τ ~ N(μ, σ²), and a model of skill s classifies an image correctly
# with probability Φ(s − τ). Recht et al. show that the model's accuracy is then
#
# $$\alpha = \Phi\!\left(\frac{s - \mu}{\sqrt{\sigma^2 + 1}}\right),$$
#
# so that on two test sets the probit accuracies lie on a line, Φ⁻¹(α₂) = u · Φ⁻¹(α₁) + v, with
# $u = \sqrt{\sigma_1^2 + 1} / \sqrt{\sigma_2^2 + 1}$ and $v = (\mu_1 - \mu_2) / \sqrt{\sigma_2^2 + 1}$.
# Write `gaussian_accuracy(skill, mu, sigma)` (the formula for α; `stats.norm.cdf` is Φ; accept an array of
# skills) and `difficulty_line(mu1, sigma1, mu2, sigma2)`, returning `(u, v)`. The public test checks your α
# against a simulation: the mean of Φ(s − τ) over many sampled difficulties.

# %% [raw]
# # BEGIN SOLUTION


# %%
def gaussian_accuracy(skill, mu, sigma):
    return stats.norm.cdf((np.asarray(skill, dtype=float) - mu) / np.sqrt(sigma**2 + 1))  # SOLUTION


def difficulty_line(mu1, sigma1, mu2, sigma2):
    # BEGIN SOLUTION
    u = np.sqrt(sigma1**2 + 1) / np.sqrt(sigma2**2 + 1)
    v = (mu1 - mu2) / np.sqrt(sigma2**2 + 1)
    return float(u), float(v)
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
_tau = np.random.default_rng(1).normal(0.5, 1.5, 200_000)  # sampled difficulties, mu = 0.5, sigma = 1.5
_skills = np.array([-1.0, 0.5, 2.0])
_sim = stats.norm.cdf(_skills[:, None] - _tau[None, :]).mean(axis=1)
_got = gaussian_accuracy(_skills, 0.5, 1.5)
assert np.shape(_got) == (3,), f"three skills give three accuracies; got shape {np.shape(_got)}"
assert np.allclose(_got, _sim, atol=0.003), (
    f"skills [-1, 0.5, 2] on a test set with mu = 0.5, sigma = 1.5: simulated accuracies {np.round(_sim, 3).tolist()}, "
    f"got {np.round(_got, 3).tolist()}"
)
assert np.allclose(difficulty_line(0.0, 1.0, 0.0, 1.0), (1.0, 0.0)), (
    "two test sets with the same difficulties give u = 1, v = 0 (the diagonal)"
)
assert np.allclose(difficulty_line(0.0, 0.0, 1.0, 0.0), (1.0, -1.0)), (
    f"sigma1 = sigma2 = 0 and mu2 = mu1 + 1 give u = 1, v = -1; got {difficulty_line(0.0, 0.0, 1.0, 0.0)}"
)
_u, _v = difficulty_line(0.0, 1.0, 0.5, 0.8)
_a1, _a2 = gaussian_accuracy(_skills, 0.0, 1.0), gaussian_accuracy(_skills, 0.5, 0.8)
assert np.allclose(stats.norm.ppf(_a2), _u * stats.norm.ppf(_a1) + _v), (
    "the probit accuracies on test set 2 should be u times those on test set 1 plus v, for your u and v"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np
from scipy import stats as _st

_rng = np.random.default_rng(8)
for _ in range(5):
    _m1, _m2 = _rng.normal(0, 1, 2)
    _s1, _s2 = _rng.uniform(0, 2, 2)
    _sk = _rng.normal(0, 2, 7)
    assert np.allclose(
        gaussian_accuracy(_sk, _m1, _s1), _st.norm.cdf((_sk - _m1) / np.sqrt(_s1**2 + 1)), atol=1e-12
    )
    _ref = (np.sqrt(_s1**2 + 1) / np.sqrt(_s2**2 + 1), (_m1 - _m2) / np.sqrt(_s2**2 + 1))
    assert np.allclose(difficulty_line(_m1, _s1, _m2, _s2), _ref, atol=1e-12)

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
# **Question 9 (2 points): a harder test set, and nothing else.** Suppose the new test set's difficulties are
# those of the original one shifted by μ₂ − μ₁ > 0, with the same spread (σ₁ = σ₂ = 1). Then u = 1: on probit
# axes every model moves down by the same v, and no model is more "robust" than another.
#
# 1. Set `v_shift` to the v that fits CIFAR-10 best with u fixed at 1: the mean over the models of
#    Φ⁻¹(acc_new) − Φ⁻¹(acc_orig) (the least-squares intercept of a line of slope 1), and `mu_shift` to the
#    shift of mean difficulty μ₂ − μ₁ that gives this v when σ₁ = σ₂ = 1 (solve the formula for v).
# 2. Set `implied_new` to the new accuracies this model predicts, Φ(Φ⁻¹(acc_orig) + v_shift), one per model
#    (fractions), and `implied_slope`, `implied_intercept` to your `fit_line` through `(orig, implied_new)` —
#    the line Recht et al. would have drawn on **linear** axes had the world been this simple.
# 3. Set `implied_rms` to the root-mean-square distance between `implied_new` and the actual `new`, in points.

# %% [raw]
# # BEGIN SOLUTION

# %%
v_shift = float(np.mean(probit(new) - probit(orig)))  # SOLUTION
mu_shift = -v_shift * np.sqrt(2)  # SOLUTION
implied_new = stats.norm.cdf(probit(orig) + v_shift)  # SOLUTION
implied_slope, implied_intercept = fit_line(orig, implied_new)  # SOLUTION
implied_rms = float(100 * np.sqrt(np.mean((implied_new - new) ** 2)))  # SOLUTION
# BEGIN SOLUTION NO PROMPT
# Checks the statements of Question 10's model answer: a false one fails the solution.
assert slope > 1 and slope_ci[0] > 1 and np.all(np.diff(drops) < 0)
assert probit_slope < 1 and probit_ci[1] < 1
assert v_shift < 0 and mu_shift > 0
assert implied_slope > 1 and abs(implied_slope - slope) < 0.1 * slope and implied_rms < 1
# END SOLUTION

# %% [raw]
# # END SOLUTION

# %%
print(f"v = {v_shift:.3f} (the new test set harder by {mu_shift:.3f} in mean difficulty, same spread)")
print(f"on linear axes this gives slope {implied_slope:.3f}, intercept {100 * implied_intercept:+.1f}%")
print(f"and misses the actual new accuracies by {implied_rms:.2f} points (root mean square)")

# %% [raw]
# # BEGIN TESTS

# %%
for _name, _value in (("v_shift", v_shift), ("mu_shift", mu_shift), ("implied_rms", implied_rms)):
    assert isinstance(_value, (int, float, np.number)), (
        f"{_name} should be one number; got {type(_value).__name__}"
    )
assert np.isclose(difficulty_line(0.0, 1.0, mu_shift, 1.0)[1], v_shift), (
    "with sigma1 = sigma2 = 1, mu1 = 0 and mu2 = mu_shift, the formula for v should give back v_shift: "
    f"v = (mu1 - mu2) / sqrt(2) = {-mu_shift / np.sqrt(2):.4f}, v_shift = {v_shift:.4f}"
)
assert np.shape(implied_new) == (len(models),) and np.all((0 < implied_new) & (implied_new < 1)), (
    f"implied_new should hold one accuracy (a fraction) per model, shape ({len(models)},)"
)
assert np.all(np.asarray(implied_new) < orig) == (v_shift < 0), (
    "a negative v moves every model down: implied_new should lie below orig"
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
import numpy as np
from scipy import stats as _st

_d = np.load("linear-fits-data.npz", allow_pickle=False)
_o, _n = _d["orig_acc"] / 100, _d["new_acc"] / 100
_v = np.mean(_st.norm.ppf(_n) - _st.norm.ppf(_o))
assert np.isclose(v_shift, _v, atol=1e-9) and np.isclose(mu_shift, -_v * np.sqrt(2), atol=1e-9)
_imp = _st.norm.cdf(_st.norm.ppf(_o) + _v)
assert np.allclose(implied_new, _imp, atol=1e-9)
assert np.allclose((implied_slope, implied_intercept), fit_line(_o, _imp), atol=1e-9)
assert np.isclose(implied_rms, 100 * np.sqrt(np.mean((_imp - _n) ** 2)), atol=1e-9)

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
# **Question 10 (3 points, graded by hand): reading the slope.** Recht et al. write: "On both datasets, the
# slope of the linear fit is greater than 1. So models with higher original accuracy see a smaller drop on the
# new test sets. In other words, model robustness improves with increasing accuracy." (§3.3). Of the probit
# scale they write that it "is in a sense more natural than a linear scale as the accuracy numbers are
# probabilities" (§5.3). In a short paragraph (5–8 sentences), using your numbers:
#
# 1. Is the slope above 1 on linear axes, given its bootstrap interval (`slope`, `slope_ci`, `drops`)? What
#    does the bootstrap over models measure, and what does it leave out?
# 2. What do the probit axes say (`probit_slope`, `probit_ci`)? Under the Gaussian difficulty model, what does
#    a probit slope below 1 mean about the spread of difficulties on the new test set?
# 3. What does Question 9 show about the reading "model robustness improves with increasing accuracy"
#    (`implied_slope`, `implied_rms`)? Where does a linear slope above 1 come from when every model faces the
#    same, uniformly harder, test set?

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# *Marking: one point for each part; an answer earns a part's point when it uses its numbers and gives the
# reason.*
#
# # On linear axes the slope (`slope`) is above 1 and its 95% bootstrap interval `slope_ci` lies wholly above 1:
# the line predicts a drop (`drops`) that shrinks from the models at 85% original accuracy to those at 98%. The
# bootstrap resamples the 34 models, so it measures how much the line depends on which models are in the
# testbed; it ignores the sampling error of the test sets themselves (the Clopper–Pearson error bars), which
# would widen the interval. On probit axes the slope `probit_slope` is *below* 1, and so is its whole interval
# `probit_ci`: there the better models lose slightly more than the weaker ones. Under the Gaussian model
# u = √(σ₁² + 1) / √(σ₂² + 1) < 1 means σ₂ > σ₁, a new test set whose difficulties are a little more spread
# out, besides being harder on average (v < 0). Question 9 explains the contradiction: a new test set that is
# harder by the same amount for every model (u = 1, a shift of `mu_shift` in mean difficulty) already gives a
# linear slope `implied_slope` above 1, about as steep as the fitted one, and misses the real new accuracies
# by `implied_rms`, under 1 point. The slope above 1 then comes from the curvature of Φ: near 100% accuracy a
# fixed step on the probit scale is a small step in accuracy, so the strongest models lose fewer points from
# the same shift. "Robustness improves with accuracy" is a statement about linear axes; it need not mean that
# better models are less affected by the new test set, and Recht et al. themselves call the Gaussian model a
# plausible illustration, "not ... the true explanation" (§5.3).

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown]
# **Done.** Save the notebook and hand it in. The chapter goes on where this lab stops: the same fits on
# ImageNet's three new test sets (§4, Figures 12 and 13), and whether resampling the images as well as the
# models changes what the probit slope says.
