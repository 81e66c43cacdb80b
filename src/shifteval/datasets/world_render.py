"""The replication world's images and annotators: base digits, their renders, and the votes on them.

Steps 1-3 of :mod:`shifteval.datasets.world`: scikit-learn's handwritten digits are split by base
image, rendered with nuisances whose strength is a latent difficulty ``d``, and annotated by voters
whose selection probability falls linearly with ``d`` (Recht et al. 2019, App. C.1.2; Engstrom et al.
2020, §2). Every name here is also importable from :mod:`shifteval.datasets.world`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import ndimage


def base_digits(size: int = 16) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
    """scikit-learn's 1,797 digits scaled to [0, 1] and upsampled to ``size``×``size`` (bilinear).

    The digits ship with scikit-learn: nothing is downloaded.

    Parameters
    ----------
    size : int
        Side of the returned images in pixels; ``8`` keeps the original scans.

    Returns
    -------
    images : ndarray, shape (1797, size, size), float32 in [0, 1]
        The digit images.
    labels : ndarray, shape (1797,), int64
        Their classes, 0-9.

    Examples
    --------
    >>> images, labels = base_digits(8)
    >>> images.shape, str(images.dtype), labels[:5].tolist()
    ((1797, 8, 8), 'float32', [0, 1, 2, 3, 4])
    >>> bool(images.min() >= 0 and images.max() <= 1), base_digits(16)[0].shape
    (True, (1797, 16, 16))
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = digits.images.astype(np.float32) / 16.0
    if size != 8:
        images = ndimage.zoom(images, (1, size / 8, size / 8), order=1)
    return np.clip(images, 0, 1).astype(np.float32), digits.target.astype(np.int64)


def split_bases(
    labels: NDArray[np.integer], shares: Sequence[float], rng: np.random.Generator
) -> NDArray[np.int64]:
    """Assign each base digit to one of three groups, stratified by class (no base in two groups).

    Parameters
    ----------
    labels : ndarray of int, shape (N,)
        Class of every base digit.
    shares : sequence of float
        Shares of each class's bases per group (train, original test, replication pool), summing to 1.
    rng : numpy.random.Generator
        Source of the random assignment.

    Returns
    -------
    ndarray of int64, shape (N,)
        The group (index into ``shares``) of every base digit.

    Examples
    --------
    >>> labels = np.repeat(np.arange(3), 10)
    >>> groups = split_bases(labels, (0.6, 0.2, 0.2), np.random.default_rng(0))
    >>> [np.bincount(groups[labels == c], minlength=3).tolist() for c in range(3)]
    [[6, 2, 2], [6, 2, 2], [6, 2, 2]]
    """
    labels = np.asarray(labels)  # a list compared with == c would match nothing and leave groups unset
    groups = np.empty(len(labels), dtype=np.int64)
    bounds = np.cumsum(shares)[:-1]
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        cuts = np.round(bounds * len(idx)).astype(int)
        for g, part in enumerate(np.split(idx, cuts)):
            groups[part] = g
    return groups


def selection_frequency(d: ArrayLike, s_easy: float = 0.95, s_hard: float = 0.15) -> NDArray[np.float64]:
    """Return the true selection frequency ``s(d) = s_easy - (s_easy - s_hard) d``, falling with ``d``.

    Parameters
    ----------
    d : array_like of float
        Latent difficulties in [0, 1].
    s_easy, s_hard : float
        Selection frequency at ``d = 0`` and at ``d = 1``.

    Returns
    -------
    ndarray of float
        ``s(d)``, the shape of ``d``.

    Examples
    --------
    >>> selection_frequency([0.0, 0.5, 1.0]).round(3).tolist()
    [0.95, 0.55, 0.15]
    >>> selection_frequency(0.25, s_easy=1.0, s_hard=0.0).item()
    0.75
    """
    d = np.asarray(d, dtype=float)
    return s_easy - (s_easy - s_hard) * d


def annotate(s: ArrayLike, n: int, rng: np.random.Generator) -> NDArray[np.uint8]:
    """``n`` Bernoulli(s) votes per image (Engstrom et al. 2020, §2): an (N, n) uint8 array.

    Parameters
    ----------
    s : array_like of float, shape (N,)
        True selection frequency of every image.
    n : int
        Annotators (votes) per image.
    rng : numpy.random.Generator
        Source of the votes.

    Returns
    -------
    ndarray of uint8, shape (N, n)
        1 where an annotator selected the image; a row's mean is its observed frequency ``ŝ``.

    Examples
    --------
    >>> votes = annotate([0.0, 1.0, 0.5], 4, np.random.default_rng(0))
    >>> votes.shape, str(votes.dtype), votes.sum(axis=1)[:2].tolist()
    ((3, 4), 'uint8', [0, 4])
    """
    s = np.asarray(s, dtype=float)
    return (rng.random((len(s), n)) < s[:, None]).astype(np.uint8)


def render(bases: ArrayLike, d: ArrayLike, rng: np.random.Generator) -> NDArray[np.float32]:
    """Render one image per (base, difficulty): nuisances whose strength grows with ``d``.

    At ``d = 0`` the image is the clean base digit; at ``d = 1`` it may be rotated by up to 40°,
    rescaled by ±20%, shifted by up to 3 px, blurred (σ up to 1.1 px), lose up to 55% contrast, carry
    Gaussian noise (σ up to 0.35) and have a square of up to 7 px occluded (with probability ``d``).

    Parameters
    ----------
    bases : array_like, shape (N, H, W)
        Base images in [0, 1].
    d : array_like, shape (N,)
        Difficulties in [0, 1].
    rng : numpy.random.Generator
        Source of every nuisance.

    Returns
    -------
    ndarray, shape (N, H, W), float32 in [0, 1]
        The rendered images.

    Raises
    ------
    ValueError
        If ``bases`` is not 3-D, ``d`` does not hold one difficulty per base, or a difficulty lies
        outside [0, 1].

    Examples
    --------
    >>> bases = base_digits(16)[0][:3]
    >>> rng = np.random.default_rng(0)
    >>> bool(np.allclose(render(bases, [0.0, 0.0, 0.0], rng), bases))  # d = 0: the clean digits
    True
    >>> hard = render(bases, [1.0, 1.0, 1.0], rng)
    >>> hard.shape, bool(np.allclose(hard, bases)), bool(hard.min() >= 0 and hard.max() <= 1)
    ((3, 16, 16), False, True)
    """
    bases = np.asarray(bases, dtype=np.float32)
    d = np.asarray(d, dtype=float)
    if bases.ndim != 3 or len(d) != len(bases):
        raise ValueError("render needs bases of shape (N, H, W) and one difficulty per base")
    if np.any((d < 0) | (d > 1)):
        raise ValueError("difficulties must lie in [0, 1]")
    n, h, w = bases.shape
    u = rng.uniform(-1, 1, size=(n, 5))
    angle = np.deg2rad(40 * d * u[:, 0])
    scale = 1 + 0.2 * d * u[:, 1]
    shift = 3 * d[:, None] * u[:, 2:4]
    blur = 1.1 * d * (0.5 + 0.5 * np.abs(u[:, 4]))
    contrast = 1 - 0.55 * d * rng.uniform(0.5, 1, n)
    noise = 0.35 * d
    occlude = rng.random(n) < d
    occ_size = np.maximum(1, np.round(7 * d * rng.uniform(0.6, 1, n))).astype(int)
    occ_pos = rng.random((n, 2))
    centre = np.array([(h - 1) / 2, (w - 1) / 2])
    out = np.empty_like(bases)
    for i in range(n):
        c, s_ = np.cos(angle[i]) / scale[i], np.sin(angle[i]) / scale[i]
        matrix = np.array([[c, -s_], [s_, c]])
        offset = centre - matrix @ (centre + shift[i])
        img = ndimage.affine_transform(bases[i], matrix, offset=offset, order=1, mode="constant")
        if blur[i] > 0.05:
            img = ndimage.gaussian_filter(img, blur[i])
        if occlude[i]:
            k = occ_size[i]
            r0, c0 = (occ_pos[i] * [h - k, w - k]).astype(int)
            img[r0 : r0 + k, c0 : c0 + k] = 0.0
        out[i] = img
    out = out * contrast[:, None, None].astype(np.float32)
    out += (noise[:, None, None] * rng.standard_normal((n, h, w))).astype(np.float32)
    return np.clip(out, 0, 1).astype(np.float32)
