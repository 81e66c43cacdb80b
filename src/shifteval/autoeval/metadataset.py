"""The meta-dataset of §3.3 (six transformations) and the unseen test-time transformations of §4.4."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import ndimage

from .network import check_images
from .streams import stream

TRANSFORMS = ("contrast", "brightness", "gray_levels", "inversion", "affine", "sharpen")


def transform_set(
    images: ArrayLike, rng: np.random.Generator, p: float = 0.5
) -> tuple[NDArray[np.float32], tuple[str, ...]]:
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
        One meta-set's images.
    rng : numpy.random.Generator
        Draws which transformations are used and their strengths.
    p : float
        Probability of each transformation.

    Returns
    -------
    images : ndarray (N, H, W), float32 in [0, 1]
    used : tuple of str
        The transformations applied, in :data:`TRANSFORMS` order.

    Examples
    --------
    >>> x = np.full((3, 16, 16), 0.5)
    >>> y, used = transform_set(x, np.random.default_rng(0))
    >>> y.shape, y.dtype.name, bool(0 <= y.min() <= y.max() <= 1), set(used) <= set(TRANSFORMS)
    ((3, 16, 16), 'float32', True, True)
    >>> y, used = transform_set(x, np.random.default_rng(0), p=0.0)
    >>> used, bool((y == x).all())
    ((), True)
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


def affine(
    x: np.ndarray,
    rng: np.random.Generator,
    max_angle: float,
    max_scale: float,
    max_shift: float,
    max_shear: float = 0.0,
) -> np.ndarray:
    """A random rotation, scale, shift and shear per image (about the centre, bilinear, zero fill).

    Parameters
    ----------
    x : ndarray, shape (N, H, W)
        Images.
    rng : numpy.random.Generator
        Draws each image's parameters, uniformly within the bounds.
    max_angle : float
        Rotation bound in degrees (±).
    max_scale : float
        Relative scale bound (±, e.g. 0.15 for ±15%).
    max_shift : float
        Shift bound in pixels (±, per axis).
    max_shear : float
        Shear bound (±).

    Returns
    -------
    ndarray
        Same shape and dtype as ``x``.

    Examples
    --------
    >>> x = np.random.default_rng(1).random((2, 9, 9))
    >>> bool(np.allclose(affine(x, np.random.default_rng(0), 0, 0, 0), x))  # all bounds 0: identity
    True
    >>> affine(x, np.random.default_rng(0), 30, 0.15, 2.0, 0.2).shape
    (2, 9, 9)
    """
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
    purpose: str = "meta_train", start: int = 0,
) -> Iterator[tuple[NDArray[np.float32], np.ndarray, tuple]]:  # fmt: skip
    """Yield ``(images, labels, used_transforms)`` for meta-sets ``start`` .. ``n_sets − 1`` (§3.3).

    Set ``i`` samples ``set_size`` images without replacement and transforms them with its own stream
    ``stream(seed, purpose, i)`` (:mod:`shifteval.autoeval.streams`): training (``meta_train``) and
    validation (``meta_val``) meta-sets never share a stream, and set ``i`` is the same whatever
    ``n_sets`` and ``start`` (so more meta-sets extend fewer).

    Parameters
    ----------
    images : array_like, shape (N, S, S)
        The source pool, S ≥ 8.
    labels : array_like, shape (N,)
        Their classes.
    n_sets : int
        Number of meta-sets (at least 2).
    set_size : int
        Images per meta-set, 1..N.
    seed : int
        The chapter's seed.
    purpose : str
        The stream purpose, ``"meta_train"`` or ``"meta_val"``.
    start : int
        The first set yielded, 0..n_sets (sets before it are skipped without being drawn).

    Yields
    ------
    images : ndarray of float32, shape (set_size, S, S)
    labels : ndarray, shape (set_size,)
    used : tuple of str
        The transformations applied (:func:`transform_set`).

    Raises
    ------
    ValueError
        For malformed images, ``n_sets < 2``, ``start`` outside 0..n_sets, or ``set_size`` outside 1..N
        (raised on first iteration).

    Examples
    --------
    >>> x = np.random.default_rng(1).random((10, 8, 8))
    >>> sets = list(meta_dataset(x, np.arange(10), n_sets=3, set_size=4))
    >>> len(sets), [s[0].shape for s in sets][0], [len(np.unique(s[1])) for s in sets]
    (3, (4, 8, 8), [4, 4, 4])
    >>> later = list(meta_dataset(x, np.arange(10), n_sets=3, set_size=4, start=2))  # only the third set
    >>> len(later), bool((later[0][0] == sets[2][0]).all())
    (1, True)
    """
    images = check_images(images)
    labels = np.asarray(labels)
    if n_sets < 2:
        raise ValueError(f"n_sets must be at least 2 (training and validation meta-sets), got {n_sets}")
    if not 0 < set_size <= len(images):
        raise ValueError(f"set_size must be in 1..{len(images)} (the source images), got {set_size}")
    if not 0 <= start <= n_sets:
        raise ValueError(f"start must be in 0..{n_sets} (n_sets), got {start}")
    for i in range(start, n_sets):
        rng = stream(seed, purpose, i)
        idx = rng.choice(len(images), set_size, replace=False)
        x, used = transform_set(images[idx], rng)
        yield x, labels[idx], used


def cutout(images: ArrayLike, rng: np.random.Generator, size: int | None = None) -> NDArray[np.float32]:
    """Erase one random ``size``×``size`` square per image (the paper's test-time '-A' transform, §4.4).

    Parameters
    ----------
    images : array_like, shape (N, H, W)
        The images.
    rng : numpy.random.Generator
        Draws each square's position (always fully inside the image).
    size : int, optional
        Side of the square; by default 3/8 of the image side (6 pixels of 16).

    Returns
    -------
    ndarray of float32, shape (N, H, W)
        A copy, the square set to 0.

    Examples
    --------
    >>> (cutout(np.ones((2, 16, 16)), np.random.default_rng(0)) == 0).sum(axis=(1, 2)).tolist()
    [36, 36]
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

    Parameters
    ----------
    images : array_like, shape (N, H, W)
        Images in [0, 1].
    rng : numpy.random.Generator
        Draws each image's shear.
    shear : float
        Shear bound (±).
    contrast : float
        Factor applied to each image's deviations from its mean.

    Returns
    -------
    ndarray of float32, shape (N, H, W)
        Clipped to [0, 1].

    Examples
    --------
    >>> x = np.tile([0.0, 1.0], (1, 8, 4))  # stripes, mean 0.5
    >>> np.unique(shear_contrast(x, np.random.default_rng(0), shear=0.0, contrast=0.5)).tolist()
    [0.25, 0.75]
    """
    x = affine(
        np.asarray(images, dtype=np.float64), rng, max_angle=0, max_scale=0, max_shift=0, max_shear=shear
    )
    m = x.mean(axis=(1, 2), keepdims=True)
    return np.clip((x - m) * contrast + m, 0, 1).astype(np.float32)
