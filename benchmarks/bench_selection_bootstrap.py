"""Bootstrap of the parametric selection-adjusted accuracy: warm-started refits vs. refits from scratch.

Target (Engstrom et al. issue): ``n_boot >= 400`` bootstrap samples (the paper's App. F.1 used 400-450)
within the selection-bias chapter's time. ``selection.bootstrap_parametric`` refits both mixtures of each
sample starting from the full-sample fit; the reference refits each sample from scratch
(``selection.parametric_adjusted_accuracy``: random restarts, then EM and polish), as the bootstrap did
before. Both use the same resampling indices; the script prints seconds per sample (median over
repeats), the ratio, and how far the two methods' estimates are apart on the same samples.
Also times per-image numbers of annotators (``annotators_i`` arrays) against one common number: the same speed class.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import median_time

from shifteval import selection


def data(rng, n1, n2, annotators, models):
    """A world-like pair: v2's true frequencies lower than v1's, accuracy rising with frequency."""
    s1 = np.where(rng.random(n1) < 0.7, rng.beta(8, 2, n1), rng.beta(3, 3, n1))
    s2 = np.where(rng.random(n2) < 0.5, rng.beta(8, 2, n2), rng.beta(3, 3, n2))
    skill = np.linspace(0.3, 0.9, models)[:, None]
    correct = rng.random((models, n2)) < skill * (0.6 + 0.4 * s2)
    return rng.binomial(annotators, s1), rng.binomial(annotators, s2), correct


def reference(c1, c2, correct, annotators, n_boot, seed):
    """The bootstrap as before: every sample refitted from scratch, same index stream as the fast one."""
    rng = np.random.default_rng(seed)
    selection.parametric_adjusted_accuracy(c1, c2, correct, annotators, seed=seed)  # the full-sample fit
    restarts = np.random.default_rng(seed + 1)  # the index stream stays the one bootstrap_parametric draws
    out = []
    for _ in range(n_boot):
        i1, i2 = rng.integers(0, len(c1), len(c1)), rng.integers(0, len(c2), len(c2))
        est, _ = selection.parametric_adjusted_accuracy(
            c1[i1], c2[i2], correct[:, i2], annotators, seed=restarts
        )
        out.append(est)
    return np.asarray(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--v1", type=int, default=10_000)
    parser.add_argument("--v2", type=int, default=2_000)
    parser.add_argument("--annotators", type=int, default=40)
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--n-boot", type=int, default=40, help="samples per timing run")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    c1, c2, correct = data(np.random.default_rng(0), args.v1, args.v2, args.annotators, args.models)
    n = args.annotators

    def fast_run():
        return selection.bootstrap_parametric(c1, c2, correct, n, n_boot=args.n_boot, seed=0)

    fast = median_time(fast_run, args.repeats) / args.n_boot
    ref = median_time(lambda: reference(c1, c2, correct, n, args.n_boot, 0), args.repeats) / args.n_boot
    # agreement: the two methods' bootstrap distributions (same index stream), per model
    a = selection.bootstrap_parametric(c1, c2, correct, n, n_boot=args.n_boot, seed=0)["samples"]
    b = reference(c1, c2, correct, n, args.n_boot, 0)
    sd_ratio = np.median(a.std(axis=0) / b.std(axis=0))
    diffs = np.abs(a - b).mean(axis=0)
    # per-image numbers of annotators: every image's drawn from n-5..n, same data otherwise
    rng = np.random.default_rng(2)
    n1, n2 = rng.integers(n - 5, n + 1, len(c1)), rng.integers(n - 5, n + 1, len(c2))
    k1, k2 = np.minimum(c1, n1), np.minimum(c2, n2)
    var = (
        median_time(
            lambda: selection.bootstrap_parametric(k1, k2, correct, (n1, n2), n_boot=args.n_boot, seed=0),
            args.repeats,
        )
        / args.n_boot
    )
    print(f"v1 {args.v1} x v2 {args.v2} images, {n} annotators, {args.models} models, k = 3")
    print(f"{args.n_boot} samples per run, {args.repeats} runs (medians)")
    print(
        f"bootstrap_parametric (warm start)  : {1000 * fast:7.1f} ms/sample -> 400 samples in {400 * fast:5.1f} s"
    )
    print(
        f"refit from scratch (reference)     : {1000 * ref:7.1f} ms/sample -> 400 samples in {400 * ref:5.1f} s"
    )
    print(f"speed-up: {ref / fast:.1f}x")
    print(
        f"warm vs scratch on the same {args.n_boot} samples: mean |difference| {100 * np.median(diffs):.3f} points "
        f"(median over models; refits from scratch can land in another local maximum of the mixture likelihood); "
        f"bootstrap SD ratio warm/scratch {sd_ratio:.3f} (median over models)"
    )
    print(
        f"per-image n (n_i in {n - 5}..{n}): {1000 * var:7.1f} ms/sample, {var / fast:.2f}x the common-n time"
    )


if __name__ == "__main__":
    main()
