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

# %% [markdown]
# # Lab 2: error bars and a line on probit axes
#
# Recht et al. (2019) plot every model's accuracy on the new test set against its accuracy on the original
# one, with exact (Clopper–Pearson) 95% intervals as error bars (Figures 1–2), and fit a line by least
# squares — on linear axes in the main text, on probit axes (both accuracies through Φ⁻¹) in App. C.2.
# Here you compute both for the 34 CIFAR-10 models of their Table 11 (10,000 original test images, 2,000
# new ones), as printed in the paper.
#
# `grader.check("q…")` runs a question's public tests; hidden tests compare your functions with the
# library's (`shifteval.linfit`) when the notebook is graded.

# %%
import numpy as np
from scipy import stats

from shifteval.labs import load

data = load("linear-fits")
orig, new = data["orig_acc"] / 100, data["new_acc"] / 100  # fractions
n_orig, n_new = data["n_orig"], data["n_new"]
print(
    f"{len(orig)} models; original accuracy {orig.min():.3f}-{orig.max():.3f}, new {new.min():.3f}-{new.max():.3f}"
)

# %% [raw]
# # BEGIN QUESTION
# name: q1
# points: 2
# all_or_nothing: true

# %% [markdown]
# **Question 1 (2 points).** Write `clopper_pearson(k, n, alpha=0.05)`: the exact binomial interval for an
# accuracy `k/n`, `[B(α/2; k, n−k+1), B(1−α/2; k+1, n−k)]` where `B(q; a, b)` is the `q`-quantile of a
# Beta(a, b) distribution (`scipy.stats.beta.ppf`), with the lower bound 0 when `k = 0` and the upper 1 when
# `k = n`. Accept arrays; return `(low, high)`.

# %% [raw]
# # BEGIN SOLUTION


# %%
def clopper_pearson(k, n, alpha=0.05):
    # BEGIN SOLUTION
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    low = np.where(k == 0, 0.0, stats.beta.ppf(alpha / 2, np.maximum(k, 1e-300), n - k + 1))
    high = np.where(k == n, 1.0, stats.beta.ppf(1 - alpha / 2, k + 1, np.maximum(n - k, 1e-300)))
    return low, high
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
low, high = clopper_pearson(np.array([0, 5, 10]), 10)
assert np.allclose(low, [0.0, 0.187086, 0.691503], atol=1e-5) and np.allclose(
    high, [0.308497, 0.812914, 1.0], atol=1e-5
)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval.linfit import fits

k = np.round(new * n_new)
assert np.allclose(clopper_pearson(k, n_new), fits.clopper_pearson(k, n_new), atol=1e-9)
assert np.allclose(clopper_pearson(k, n_new, 0.1), fits.clopper_pearson(k, n_new, 0.1), atol=1e-9)

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
# **Question 2 (1 point).** Write `probit(acc)`: Φ⁻¹ of accuracies given as fractions (`scipy.stats.norm`).

# %% [raw]
# # BEGIN SOLUTION


# %%
def probit(acc):
    # BEGIN SOLUTION
    return stats.norm.ppf(np.asarray(acc, dtype=float))
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
assert np.allclose(probit(np.array([0.5, 0.975])), [0.0, 1.959964], atol=1e-6)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval.linfit import fits

assert np.allclose(probit(orig), fits.transform(orig, "probit"), atol=1e-12)

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
# **Question 3 (3 points).** Write `probit_line(x, y)`: the least-squares line `Φ⁻¹(y) = slope · Φ⁻¹(x) + intercept`
# through the models' original (`x`) and new (`y`) accuracies. Return `(slope, intercept)` in probit units.

# %% [raw]
# # BEGIN SOLUTION


# %%
def probit_line(x, y):
    # BEGIN SOLUTION
    slope, intercept = np.polyfit(probit(x), probit(y), 1)
    return slope, intercept
    # END SOLUTION


# %% [raw]
# # END SOLUTION

# %%
slope, intercept = probit_line(orig, new)
print(f"probit line: slope {slope:.3f}, intercept {intercept:.3f}")

# %% [raw]
# # BEGIN TESTS

# %%
x = np.array([0.6, 0.7, 0.8, 0.9])
assert np.allclose(probit_line(x, x), (1.0, 0.0), atol=1e-9)

# %%
""" # BEGIN TEST CONFIG
hidden: true
"""  # END TEST CONFIG
from shifteval.linfit import fits

ref = fits.fit_linear(orig, new, scale="probit", n_boot=1)
assert np.allclose(probit_line(orig, new), (ref.slope, ref.intercept), atol=1e-9)

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# **To think about (not graded).** The linear-fits chapter finds the probit line fits CIFAR-10 as well as
# the linear one. Why might the paper prefer probit axes when accuracies approach 100%?
