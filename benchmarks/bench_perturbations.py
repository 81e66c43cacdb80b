"""The MLM chapter's perturbation sweep: twelve perturbations × ten levels over the test set, with predictions.

Target (MLM issue): the whole sweep over the default world's v1 test set (2,000 images, 120 perturbed
sets) with the paper's CNN's predictions in at most 3 minutes on this 2-core machine. Prints the sweep's
time and its ratio to the 180 s budget, and, per perturbation, the speed-up of the batched
implementation over applying the same perturbation image by image (the obvious reference: one call per
image, as ``imagecorruptions`` works), both measured here on the same images (medians). Last, zoom blur's interpolation matrices against
``scipy.ndimage.zoom`` of the whole stack per zoom factor (the straightforward implementation), on the
test set at level 10: the same values (largest difference printed) and the ratio.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import median_time
from scipy import ndimage

from shifteval import corruptions, mlm
from shifteval.datasets import world as worlds
from shifteval.nets import predict_torch


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--per-image", type=int, default=200, help="images in the per-image comparison")
    parser.add_argument("--epochs", type=int, default=2, help="training epochs (accuracy is not the point)")
    args = parser.parse_args()

    w = worlds.build_world({})
    train, test = w.split_index("train"), w.split_index("v1")
    model = mlm.train_classifier(w.images[train], w.labels[train], epochs=args.epochs)
    x = w.images[test]

    start = time.perf_counter()
    for name in corruptions.CORRUPTIONS:
        for level in corruptions.LEVELS:
            predict_torch(model, corruptions.corrupt(x, name, level, seed=0))
    sweep = time.perf_counter() - start
    print(
        f"sweep: 12 perturbations x 10 levels x {len(x)} images with predictions: {sweep:.1f} s "
        f"({sweep / 180:.2f} of the 180 s budget)"
    )

    sub = x[: args.per_image]
    print(f"\nper perturbation, level 5, {len(sub)} images (median of {args.repeats}):")
    print(f"{'perturbation':16s} {'batched s':>10s} {'per-image s':>12s} {'speed-up':>9s}")
    ratios = []
    for name in corruptions.CORRUPTIONS:
        batched = median_time(lambda name=name: corruptions.corrupt(sub, name, 5, 0), args.repeats)
        single = median_time(
            lambda name=name: [corruptions.corrupt(img, name, 5, 0) for img in sub], args.repeats
        )
        ratios.append(single / batched)
        print(f"{name:16s} {batched:10.4f} {single:12.4f} {single / batched:8.1f}x")
    print(f"median speed-up {np.median(ratios):.1f}x")
    zoom_blur_against_ndimage(x.astype(np.float64), args.repeats)


def _zoom_blur_ndimage(x, t):
    """Zoom blur with ``ndimage.zoom`` of the stack and a centre crop per zoom factor (the reference)."""
    _, h, w = x.shape
    out = x.copy()
    zooms = np.linspace(1, 1 + t, 8)[1:]
    for z in zooms:
        big = ndimage.zoom(x, (1, z, z), order=1)
        top, left = (big.shape[1] - h) // 2, (big.shape[2] - w) // 2
        out += big[:, top : top + h, left : left + w]
    return out / (len(zooms) + 1)


def zoom_blur_against_ndimage(x, repeats):
    """Zoom blur's matrices against ``ndimage.zoom`` at the strongest fallback strength (level 10)."""
    t = corruptions.SEVERITY["zoom_blur"][-1]
    ours = median_time(lambda: corruptions._zoom_blur(x, t, None), repeats)
    reference = median_time(lambda: _zoom_blur_ndimage(x, t), repeats)
    diff = np.abs(corruptions._zoom_blur(x, t, None) - _zoom_blur_ndimage(x, t)).max()
    print(
        f"\nzoom blur, {len(x)} images of {x.shape[1]}x{x.shape[2]}, t = {t}: interpolation matrices "
        f"{ours:.4f} s, ndimage.zoom {reference:.4f} s, {reference / ours:.1f}x; largest difference {diff:.1e}"
    )


if __name__ == "__main__":
    main()
