"""Vectorised two-level (models and images) bootstrap vs. a per-replicate Python loop.

Target: the vectorised ``perimage.two_level_bootstrap`` (image multiplicities as a counts matrix times
the correctness matrix, lines fitted for a block of replicates at once) at least 5x faster than
resampling indices and refitting with ``np.polyfit`` one replicate at a time. Both run here on the
shipped ImageNetV2 correctness (64 models, ImageNet validation 50,000 images vs. MatchedFrequency
10,000), top-1, probit axes; the script prints seconds (median of repeats) and the ratio, and checks
that the two agree replicate for replicate when driven by the same random stream (``chunk=1``).
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import median_time

from shifteval import linfit
from shifteval.datasets import published, released
from shifteval.linfit import perimage


def loop(x1, x2, n_boot, rng, scale="probit"):
    """The reference: per replicate, draw models and images, recompute accuracies, np.polyfit."""
    m, n1, n2 = x1.shape[0], x1.shape[1], x2.shape[1]
    slopes, intercepts = np.empty(n_boot), np.empty(n_boot)
    for b in range(n_boot):
        models = rng.integers(0, m, size=(1, m))[0]
        i1, i2 = rng.integers(0, n1, size=(1, n1))[0], rng.integers(0, n2, size=(1, n2))[0]
        a1, a2 = x1[:, i1].mean(axis=1)[models], x2[:, i2].mean(axis=1)[models]
        slopes[b], intercepts[b] = np.polyfit(linfit.transform(a1, scale), linfit.transform(a2, scale), 1)
    return slopes, intercepts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    corr = released.imagenetv2_correctness()
    keep = ~published.is_fisher_vector(corr.models)
    x1, x2 = corr.top1[perimage.ORIGINAL][keep], corr.top1[perimage.MATCHED_FREQUENCY][keep]
    fast = median_time(
        lambda: perimage.two_level_bootstrap(x1, x2, args.n_boot, np.random.default_rng(0)), args.repeats
    )
    ref = median_time(lambda: loop(x1, x2, args.n_boot, np.random.default_rng(0)), args.repeats)
    a = perimage.two_level_bootstrap(x1, x2, 20, np.random.default_rng(1), chunk=1)
    b = loop(x1, x2, 20, np.random.default_rng(1))
    assert np.allclose(a[0], b[0]) and np.allclose(a[1], b[1]), "implementations disagree"
    print(f"models: {x1.shape[0]}, images: {x1.shape[1]} + {x2.shape[1]}, replicates: {args.n_boot}, "
          f"repeats: {args.repeats} (medians)")  # fmt: skip
    print(f"vectorised two_level_bootstrap: {fast:8.3f} s")
    print(f"Python loop (reference)       : {ref:8.3f} s")
    print(f"speed-up: {ref / fast:.1f}x (target >= 5x)")


if __name__ == "__main__":
    main()
