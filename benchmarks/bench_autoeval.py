"""The OOD-aware AutoEval chapter's heavy step: the classifier's outputs on every meta-set.

Target (OOD-AutoEval issue): the chapter with default parameters in at most 5 minutes, meta-dataset
features computed in batches and cached. Prints (1) seconds per meta-set of batched feature extraction
against a per-image forward pass (the reference), measured here on the same meta-sets (medians),
(2) ``prepare_backbone`` cold (train + all meta-sets) against warm (read from the cache), and, with
``--chapter``, (3) the whole chapter with its default parameters, cold (empty cache: both backbones and
detectors trained) and warm, as a share of the 300 s budget.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from _timing import median_time

from shifteval import autoeval as ae
from shifteval.book import pipeline
from shifteval.datasets import world as worlds


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sets", type=int, default=10)
    parser.add_argument("--set-size", type=int, default=400)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chapter", action="store_true", help="also time the chapter (default parameters)")
    args = parser.parse_args()

    w = worlds.build_world({})
    train = w.split_index("train")
    x, y = w.images[train], w.labels[train]
    model = ae.train_feature_net(x[:3000], y[:3000], epochs=args.epochs)
    sets = [s for s, _, _ in ae.meta_dataset(x[3000:], y[3000:], args.sets, args.set_size, seed=0)]

    batched = median_time(lambda: [ae.compute_outputs(model, s, rotation=True) for s in sets], args.repeats)
    per_image = (
        median_time(
            lambda: [
                ae.compute_outputs(model, s[i : i + 1], rotation=True)
                for s in sets[:2]
                for i in range(len(s))
            ],
            args.repeats,
        )
        * len(sets)
        / 2
    )
    print(
        f"{args.sets} meta-sets of {args.set_size} images: batched {batched:.2f} s, per image {per_image:.2f} s "
        f"-> {per_image / batched:.1f}x"
    )

    with tempfile.TemporaryDirectory() as cache:
        kwargs = dict(
            epochs=args.epochs,
            n_sets=args.sets,
            n_val_sets=2,
            set_size=args.set_size,
            cache=cache,
            progress=False,
        )
        pools = (x[3000:4000], y[3000:4000]), (x[4000:], y[4000:])
        start = time.perf_counter()
        ae.prepare_backbone("cnn", x[:3000], y[:3000], *pools, **kwargs)
        cold = time.perf_counter() - start
        warm = median_time(
            lambda: ae.prepare_backbone("cnn", x[:3000], y[:3000], *pools, **kwargs), args.repeats
        )
    print(f"prepare_backbone: cold {cold:.1f} s, warm (cache) {warm:.2f} s -> {cold / warm:.0f}x")
    print(
        f"median of per-set batched time: {batched / args.sets:.3f} s; {np.round(per_image / args.sets, 3)} s per image-wise set"
    )
    if args.chapter:
        time_chapter()


def time_chapter(budget: float = 300.0):
    """The chapter end to end, in a fresh kernel, with an empty and then a filled cache."""
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SHIFTEVAL_CACHE"] = str(Path(tmp) / "cache")
        for label in ("cold", "warm"):
            run = pipeline.run_chapter(
                "ood-autoeval", force=True, out=Path(tmp) / "out", root=root, progress=False
            )
            print(
                f"chapter ood-autoeval, default parameters, {label} cache: {run.duration:.0f} s "
                f"({run.duration / budget:.2f} of the {budget:.0f} s budget)"
            )


if __name__ == "__main__":
    main()
