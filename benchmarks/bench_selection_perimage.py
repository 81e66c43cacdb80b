"""Engstrom et al.'s estimators on per-image numbers of annotators (both sets) against one common number.

Target: the per-image path (every image of v1 and v2 with its own number of annotators, 32..48, as real
crowds give) in the same speed class as the scalar path (40 annotators everywhere): a few times its
scalar time at most (the per-image naive estimate finds its levels k/n with ``np.unique``, which the
jackknife repeats once per annotator; the mixture fits work on the distinct (k, n) pairs). Data: 10,000 v1 and 2,000 v2 images, 30 models, true
frequencies and votes drawn alike for both paths. Prints, per estimator, the median seconds over
repeats of each path and their ratio.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import median_time

from shifteval import selection


def votes(rng, s, lo, hi):
    """0/1 votes of ``annotators_i`` annotators per image (uniform on lo..hi), NaN in the other columns."""
    n = rng.integers(lo, hi + 1, len(s))
    v = (rng.random((len(s), hi)) < s[:, None]).astype(float)
    v[np.arange(hi)[None, :] >= n[:, None]] = np.nan
    return v


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--v1", type=int, default=10_000)
    parser.add_argument("--v2", type=int, default=2_000)
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--n-boot", type=int, default=10, help="bootstrap samples per timing run")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    s1 = np.where(rng.random(args.v1) < 0.7, rng.beta(8, 2, args.v1), rng.beta(3, 3, args.v1))
    s2 = np.where(rng.random(args.v2) < 0.5, rng.beta(8, 2, args.v2), rng.beta(3, 3, args.v2))
    correct = rng.random((args.models, args.v2)) < np.linspace(0.3, 0.9, args.models)[:, None] * (
        0.6 + 0.4 * s2
    )
    paths = {"scalar (n = 40)": (votes(rng, s1, 40, 40), votes(rng, s2, 40, 40))}
    paths["per-image (32..48)"] = (votes(rng, s1, 32, 48), votes(rng, s2, 32, 48))
    calls, b = {}, args.n_boot
    for name, (v1, v2) in paths.items():
        (c1, n1), (c2, n2) = ((np.nansum(v, 1).astype(int), (~np.isnan(v)).sum(1)) for v in (v1, v2))
        n = (n1, n2) if np.isnan(v1).any() else 40
        calls[name] = {
            "naive": lambda c1=c1, c2=c2, n=n: selection.naive_adjusted_accuracy(c1, c2, correct, n),
            "jackknife": lambda v1=v1, v2=v2: selection.jackknife_adjusted_accuracy(v1, v2, correct),
            "parametric": lambda c1=c1, c2=c2, n=n: selection.parametric_adjusted_accuracy(
                c1, c2, correct, n
            ),
            f"bootstrap_parametric ({b})": lambda c1=c1, c2=c2, n=n: selection.bootstrap_parametric(
                c1, c2, correct, n, n_boot=b
            ),
            f"bootstrap_jackknife ({b})": lambda v1=v1, v2=v2: selection.bootstrap_jackknife(
                v1, v2, correct, n_boot=b
            ),
        }
    scalar, varying = calls.values()
    print(f"v1 {args.v1} x v2 {args.v2} images, {args.models} models, medians of {args.repeats} runs")
    print(f"{'estimator':28s} {'scalar s':>9s} {'per-image s':>12s} {'ratio':>6s}")
    for key in scalar:
        t_scalar, t_var = median_time(scalar[key], args.repeats), median_time(varying[key], args.repeats)
        print(f"{key:28s} {t_scalar:9.3f} {t_var:12.3f} {t_var / t_scalar:6.2f}")


if __name__ == "__main__":
    main()
