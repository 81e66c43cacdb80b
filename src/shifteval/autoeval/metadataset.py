"""The meta-dataset of §3.3 (six transformations) and the unseen test-time transformations of §4.4."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import ndimage

from .network import check_images
from .streams import stream

TRANSFORMS = ("contrast", "brightness", "gray_levels", "inversion", "affine", "sharpen")


def transform_set(images: ArrayLike, rng: np.random.Generator, p: float = 0.5):
    """One meta-set's transformation (§3.3).

    Each of the six is used with probability ``p``, with set-level strengths drawn from ``rng``.

    Adapted to grayscale digits: *contrast* scales deviations from each image's mean by c ∈ [0.3, 1.6];
    *brightness* adds b ∈ [−0.35, 0.35]; *colour removal* becomes *gray-level removal* (posterise to 2-6
    levels); *inversion* flips x → 1 − x for a share s ∈ [0, 0.5] of the images; *affine* rotates (±a°,
    a ≤ 30), scales (±15%) and shifts (±2 px) each image; *sharpen* adds k ∈ [0.5, 3] times the image minus
    its blur. Results are clipped to [0, 1] after every step.

    Parameters
    ----------
    images : array (N, H, W) in [0, 1]
    rng : numpy.random.Generator
    p : float

    Returns
    -------
    images : ndarray (N, H, W), float32 in [0, 1]
    used : tuple of str
        The transformations applied, in :data:`TRANSFORMS` order.
    """
    x = np.array(images, dtype=np.float64)
    used = tuple(t for t in TRANSFORMS if rng.random() < p)
    n = len(x)
    for t in used:
        if t == "contrast":
            m = x.mean(axis=(1, 2), keepdims=True)
            x = (x - m) * rng.uniform(0.3, 1.6) + m
        elif t == "brightness":
            x = x + rng.uniform(-0.35, 0.35)
        elif t == "gray_levels":
            levels = rng.integers(2, 7)
            x = np.round(np.clip(x, 0, 1) * (levels - 1)) / (levels - 1)
        elif t == "inversion":
            flip = rng.random(n) < rng.uniform(0, 0.5)
            x[flip] = 1 - x[flip]
        elif t == "affine":
            x = affine(x, rng, max_angle=rng.uniform(5, 30), max_scale=0.15, max_shift=2.0)
        elif t == "sharpen":
            x = x + rng.uniform(0.5, 3.0) * (x - ndimage.gaussian_filter(x, (0, 1, 1)))
        x = np.clip(x, 0, 1)
    return x.astype(np.float32), used


def affine(x, rng, max_angle: float, max_scale: float, max_shift: float, max_shear: float = 0.0):
    """A random rotation, scale, shift and shear per image (about the centre, bilinear, zero fill)."""
    n, h, w = x.shape
    centre = np.array([(h - 1) / 2, (w - 1) / 2])
    out = np.empty_like(x)
    for i in range(n):  # one matrix per image; ndimage has no batched affine transform
        a = np.deg2rad(rng.uniform(-max_angle, max_angle))
        s = 1 + rng.uniform(-max_scale, max_scale)
        sh = rng.uniform(-max_shear, max_shear)
        matrix = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) @ np.array([[1, sh], [0, 1]]) / s
        offset = centre - matrix @ (centre + rng.uniform(-max_shift, max_shift, 2))
        out[i] = ndimage.affine_transform(x[i], matrix, offset=offset, order=1, mode="constant")
    return out


def meta_dataset(
    images: ArrayLike, labels: ArrayLike, n_sets: int = 200, set_size: int = 500, seed: int = 0,
    purpose: str = "meta_train",
) -> Iterator[tuple[NDArray[np.float32], np.ndarray, tuple]]:  # fmt: skip
    """Yield ``(images, labels, used_transforms)`` for each meta-set (§3.3).

    Set ``i`` samples ``set_size`` images without replacement and transforms them with its own stream
    ``stream(seed, purpose, i)`` (:mod:`shifteval.autoeval.streams`): training (``meta_train``) and
    validation (``meta_val``) meta-sets never share a stream.
    """
    images = check_images(images)
    labels = np.asarray(labels)
    if n_sets < 2:
        raise ValueError(f"n_sets must be at least 2 (training and validation meta-sets), got {n_sets}")
    if not 0 < set_size <= len(images):
        raise ValueError(f"set_size must be in 1..{len(images)} (the source images), got {set_size}")
    for i in range(n_sets):
        rng = stream(seed, purpose, i)
        idx = rng.choice(len(images), set_size, replace=False)
        x, used = transform_set(images[idx], rng)
        yield x, labels[idx], used


def cutout(images: ArrayLike, rng: np.random.Generator, size: int | None = None) -> NDArray[np.float32]:
    """Erase one random ``size``×``size`` square per image (the paper's test-time '-A' transform, §4.4).

    By default 3/8 of the image side (6 pixels of 16).
    """
    x = np.array(images, dtype=np.float32)
    n, h, w = x.shape
    size = int(round(0.375 * min(h, w))) if size is None else int(size)
    for i, (r, c) in enumerate(
        zip(rng.integers(0, h - size + 1, n), rng.integers(0, w - size + 1, n), strict=False)
    ):
        x[i, r : r + size, c : c + size] = 0
    return x


def shear_contrast(
    images: ArrayLike, rng: np.random.Generator, shear: float = 0.35, contrast: float = 0.6
) -> NDArray[np.float32]:
    """Shear each image by up to ±``shear`` and scale its contrast by ``contrast``.

    The paper's '-B' transform (§4.4), with contrast standing in for hue, which gray images lack.
    """
    x = affine(
        np.asarray(images, dtype=np.float64), rng, max_angle=0, max_scale=0, max_shift=0, max_shear=shear
    )
    m = x.mean(axis=(1, 2), keepdims=True)
    return np.clip((x - m) * contrast + m, 0, 1).astype(np.float32)
