"""Twelve image perturbations at ten severity levels, for small grayscale images.

The perturbations are those of Hendrycks & Dietterich (2019) that the MLM paper (Sikar et al., §3.2)
applies to MNIST: brightness, contrast, defocus blur, fog, frost, Gaussian noise, impulse noise, motion
blur, pixelation, shot noise, snow and zoom blur. The paper tuned each perturbation's parameters "by
trial and error" so that accuracy falls linearly with the level; it does not publish them. Here every
perturbation has one strength parameter ``t`` (larger is stronger). The MLM chapter sets ``t`` per level
in every run by calibrating on a separate calibration model and held-out training images
(:func:`shifteval.mlm.calibrate_severities`) and passes the table to :func:`corrupt`; :data:`SEVERITY`
is a fixed fallback table for use without a calibration. Lengths (blur radii, streak lengths) are given
in pixels of a 28×28 image and scaled to the actual image size, so the same table is meaningful on MNIST.

Written with numpy/scipy rather than the ``imagecorruptions`` package: that package refuses images
smaller than 32×32, and it is broken with NumPy 2 and current scikit-image. Hendrycks' reference code
also needs ImageMagick (motion blur) and bundled frost photographs; here motion blur is a line kernel
and frost a procedural ice texture, both stated below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import ndimage

CORRUPTIONS = (
    "brightness", "contrast", "defocus_blur", "fog", "frost", "gaussian_noise",
    "impulse_noise", "motion_blur", "pixelation", "shot_noise", "snow", "zoom_blur",
)  # fmt: skip
LEVELS = tuple(range(1, 11))

#: Fallback strength ``t`` of each perturbation at levels 1-10 (see each function for what ``t`` means),
#: used by :func:`corrupt` when no ``severity`` table is given. Set once for a CNN on the default
#: replication world (an older procedure that calibrated on v1 itself); the chapter does not use it.
SEVERITY = {
    "brightness": (0.0751, 0.141, 0.177, 0.207, 0.226, 0.245, 0.261, 0.273, 0.285, 0.297),
    "contrast": (0.242, 0.475, 0.574, 0.643, 0.701, 0.74, 0.769, 0.793, 0.814, 0.833),
    "defocus_blur": (1.92, 4.32, 5.3, 5.75, 6.22, 6.65, 6.97, 7.31, 7.76, 8.18),
    "fog": (0.151, 0.337, 0.439, 0.531, 0.635, 0.72, 0.812, 0.901, 0.984, 1.1),
    "frost": (0.339, 0.698, 0.844, 0.985, 1.07, 1.2, 1.26, 1.34, 1.41, 1.5),
    "gaussian_noise": (0.0956, 0.212, 0.291, 0.354, 0.384, 0.426, 0.462, 0.501, 0.554, 0.604),
    "impulse_noise": (0.01, 0.075, 0.138, 0.178, 0.227, 0.261, 0.299, 0.34, 0.38, 0.422),
    "motion_blur": (1.3, 3.23, 4.17, 4.9, 5.66, 6.18, 6.66, 7.35, 7.86, 8.41),
    "pixelation": (0.05, 0.615, 0.72, 0.732, 0.744, 0.76, 0.792, 0.798, 0.804, 0.809),
    "shot_noise": (0.162, 0.408, 0.588, 0.69, 0.754, 0.838, 0.97, 1.08, 1.13, 1.2),
    "snow": (0.01, 0.0522, 0.0884, 0.124, 0.147, 0.182, 0.211, 0.244, 0.266, 0.315),
    "zoom_blur": (0.0662, 0.333, 0.496, 0.593, 0.739, 0.889, 0.971, 1.11, 1.25, 1.42),
}


# --- the perturbations on float images in [0, 1], shape (N, H, W) ------------------------------------


def _brightness(x, t, rng):
    """Add ``t`` to every pixel (Hendrycks add ``t`` to HSV value; for gray that is the intensity)."""
    return x + t


def _contrast(x, t, rng):
    """Pull every pixel towards its image's mean: ``(x - m)(1 - t) + m``."""
    m = x.mean(axis=(1, 2), keepdims=True)
    return (x - m) * (1 - t) + m


def _disk(radius):
    """Anti-aliased disk kernel of the given radius (pixel weight = covered fraction, approximately)."""
    r = int(np.ceil(radius))
    yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
    k = np.clip(radius + 0.5 - np.hypot(yy, xx), 0, 1)
    return k / k.sum()


def _defocus_blur(x, t, rng, scale):
    """Convolve with a disk of radius ``t`` (28-pixel units), then a small Gaussian (alias blur)."""
    out = ndimage.convolve(x, _disk(t * scale)[None], mode="nearest")
    return ndimage.gaussian_filter(out, (0, 0.5 * scale, 0.5 * scale))


def _power_law_noise(rng, shape, beta):
    """Noise with a 1/f^beta power spectrum, scaled to [0, 1] per image (fog, frost)."""
    n, h, w = shape
    fy, fx = np.fft.fftfreq(h)[:, None], np.fft.rfftfreq(w)[None, :]
    f = np.hypot(fy, fx)
    f[0, 0] = np.inf
    spectrum = (
        rng.standard_normal((n, h, w // 2 + 1)) + 1j * rng.standard_normal((n, h, w // 2 + 1))
    ) / f ** (beta / 2)
    field = np.fft.irfft2(spectrum, s=(h, w))
    lo = field.min(axis=(1, 2), keepdims=True)
    hi = field.max(axis=(1, 2), keepdims=True)
    return (field - lo) / np.maximum(hi - lo, 1e-12)


def _fog(x, t, rng):
    """Add a smooth cloud of strength ``t``, then rescale the maximum back.

    The cloud is 1/f³ noise (a plasma-fractal stand-in); Hendrycks: ``(x + t·fog) · max(x) / (max(x) + t)``.
    """
    fog = _power_law_noise(rng, x.shape, beta=3.0)
    mx = x.max(axis=(1, 2), keepdims=True)
    return (x + t * fog) * mx / (mx + t)


def _frost(x, t, rng):
    """Blend with a procedural ice texture: ridged 1/f noise gives thin bright veins.

    ``(1 - t/3)·x + 0.6·t·veins`` with ``veins = (1 - |2n - 1|)⁶`` for 1/f^1.5 noise ``n`` scaled to
    [0, 1] (Hendrycks blend photographs of frost with weights that grow together).
    """
    n = _power_law_noise(rng, x.shape, beta=1.5)
    veins = (1 - np.abs(2 * n - 1)) ** 6
    return (1 - t / 3) * x + t * 0.6 * veins


def _gaussian_noise(x, t, rng):
    """Add Gaussian noise of standard deviation ``t``."""
    return x + t * rng.standard_normal(x.shape)


def _shot_noise(x, t, rng):
    """Poisson (photon) noise whose standard deviation at full intensity is ``t``: ``t²·Poisson(x/t²)``."""
    lam = 1.0 / t**2
    return rng.poisson(np.clip(x, 0, 1) * lam) / lam


def _impulse_noise(x, t, rng):
    """Salt-and-pepper noise: a fraction ``t`` of the pixels set to 0 or 1 (half each)."""
    out = x.copy()
    u = rng.random(x.shape)
    out[u < t / 2] = 0.0
    out[(u >= t / 2) & (u < t)] = 1.0
    return out


def _line_kernel(length, angle):
    """One-sided motion kernel: points along a ``length`` px segment at ``angle``, splatted bilinearly."""
    r = int(np.ceil(length)) + 1
    k = np.zeros((2 * r + 1, 2 * r + 1))
    for s in np.linspace(0, length, max(2, int(4 * length) + 1)):
        y, x = r - s * np.sin(angle), r + s * np.cos(angle)
        y0, x0 = int(np.floor(y)), int(np.floor(x))
        dy, dx = y - y0, x - x0
        k[y0, x0] += (1 - dy) * (1 - dx)
        k[y0 + 1, x0] += dy * (1 - dx)
        k[y0, x0 + 1] += (1 - dy) * dx
        k[y0 + 1, x0 + 1] += dy * dx
    return k / k.sum()


def _motion_blur(x, t, rng, scale):
    """Blur along a line of ``t`` px (28-pixel units) at an angle drawn per image in [-45°, 45°].

    ImageMagick's motion blur in Hendrycks' code, written as a line kernel. Angles are drawn from 19
    directions 5° apart so that images sharing a direction are convolved together.
    """
    angles = rng.integers(-9, 10, len(x))
    out = np.empty_like(x)
    for a in np.unique(angles):
        sel = angles == a
        out[sel] = ndimage.convolve(x[sel], _line_kernel(t * scale, np.deg2rad(5 * a))[None], mode="nearest")
    return out


def _area_matrix(n, block):
    """(bins × n) matrix averaging pixels over blocks of ``block`` ≥ 1 pixels (partial overlaps weighted)."""
    edges = np.arange(0, n + block, block)
    edges[-1] = n
    edges = np.unique(np.minimum(edges, n))
    lo = np.maximum(edges[:-1, None], np.arange(n)[None, :])
    hi = np.minimum(edges[1:, None], np.arange(n)[None, :] + 1)
    a = np.clip(hi - lo, 0, None)
    return a / a.sum(axis=1, keepdims=True), edges


def _pixelation(x, t, rng):
    """Average over blocks of ``1/(1 - t)`` pixels and show each block's mean (box down, nearest up)."""
    block = 1.0 / (1.0 - t)
    _, h, w = x.shape
    rows, row_edges = _area_matrix(h, block)
    cols, col_edges = _area_matrix(w, block)
    small = np.einsum("ih,nhw,jw->nij", rows, x, cols)
    row_of = np.searchsorted(row_edges, np.arange(h) + 0.5) - 1
    col_of = np.searchsorted(col_edges, np.arange(w) + 0.5) - 1
    return small[:, row_of][:, :, col_of]


def _snow(x, t, rng, scale):
    """Snowflakes and a grey veil (Hendrycks' snow on a gray image).

    A fraction ``0.25 t`` of pixels become flakes, streaked by a short motion blur (2 px, doubled in
    intensity), and the background is lifted towards ``clip(0.5 + 1.5 x)`` by ``0.6 t``.
    """
    flakes = (rng.random(x.shape) < 0.25 * t).astype(float)
    flakes = _motion_blur(flakes, 2.0, rng, scale) * 2.0
    veil = 0.6 * t
    return (1 - veil) * x + veil * np.clip(0.5 + 1.5 * x, 0, 1) + flakes


def _zoom_rows(n: int, z: float) -> np.ndarray:
    """The ``n`` central rows of ``ndimage.zoom``'s linear interpolation (``order=1``) of ``n`` samples by ``z``.

    ``ndimage.zoom(x, z, order=1)`` maps output sample ``j`` of ``m = round(n z)`` to input coordinate
    ``c = j (n - 1) / (m - 1)`` and interpolates linearly between ``floor(c)`` and ``floor(c) + 1``: a
    linear map, one row per output sample. Zooming a stack of images is then two small matrix products
    per zoom factor instead of an interpolation per pixel (10x faster at 28x28).
    """
    m = int(round(n * z))
    start = (m - n) // 2
    c = np.arange(start, start + n) * ((n - 1) / (m - 1) if m > 1 else 0.0)
    lo = np.minimum(np.floor(c).astype(int), n - 1)
    frac = c - lo
    rows = np.zeros((n, n + 1))
    rows[np.arange(n), lo] = 1 - frac
    rows[np.arange(n), lo + 1] = frac  # column n (past the edge) only ever gets weight 0
    return rows[:, :n]


def _zoom_blur(x, t, rng):
    """Average the image with copies zoomed about its centre by factors up to ``1 + t``."""
    _, h, w = x.shape
    out = x.copy()
    zooms = np.linspace(1, 1 + t, 8)[1:]
    for z in zooms:  # the centre crop of ndimage.zoom(x, (1, z, z), order=1), as A x B^T
        out += _zoom_rows(h, z) @ x @ _zoom_rows(w, z).T
    return out / (len(zooms) + 1)


_FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "brightness": _brightness, "contrast": _contrast, "defocus_blur": _defocus_blur, "fog": _fog,
    "frost": _frost, "gaussian_noise": _gaussian_noise, "impulse_noise": _impulse_noise,
    "motion_blur": _motion_blur, "pixelation": _pixelation, "shot_noise": _shot_noise, "snow": _snow,
    "zoom_blur": _zoom_blur,
}  # fmt: skip
_SCALED = {"defocus_blur", "motion_blur", "snow"}  # lengths in 28-pixel units


# --- public ------------------------------------------------------------------------------------------


def _as_float(images):
    images = np.asarray(images)
    if images.ndim not in (2, 3):
        raise ValueError(f"images must be (H, W) or (N, H, W) grayscale arrays, got shape {images.shape}")
    if images.ndim == 3 and len(images) == 0:
        raise ValueError("images is empty")
    if min(images.shape[-2:]) < 8:
        raise ValueError(f"images must be at least 8×8 pixels, got {images.shape[-2:]}")
    if images.dtype == np.uint8:
        return images.astype(np.float64) / 255.0
    if not np.issubdtype(images.dtype, np.floating):
        raise ValueError(
            f"images must be uint8 (0-255) or floating point in [0, 1], got dtype {images.dtype}"
        )
    if not np.all(np.isfinite(images)) or images.min() < 0 or images.max() > 1:
        raise ValueError("floating-point images must be finite and lie in [0, 1]")
    return images.astype(np.float64)


def apply(images: ArrayLike, name: str, t: float, seed: int = 0) -> np.ndarray:
    """Apply perturbation ``name`` with raw strength ``t`` (see :data:`SEVERITY` for the levels).

    Same contract as :func:`corrupt`; used by :func:`calibrate` to search strengths.

    Parameters
    ----------
    images : array_like, shape (H, W) or (N, H, W)
        Grayscale images, ``uint8`` in 0-255 or floating point in [0, 1]; at least 8×8.
    name : str
        One of :data:`CORRUPTIONS`.
    t : float
        Raw strength of the perturbation (larger is stronger).
    seed : int
        Seed of the perturbation's randomness.

    Returns
    -------
    ndarray
        Same shape and dtype as ``images``, values in the same range.

    Raises
    ------
    ValueError
        If ``name`` is unknown or the images are not valid grayscale images (see :func:`corrupt`).

    Examples
    --------
    >>> img = np.full((2, 16, 16), 0.5)
    >>> out = apply(img, "brightness", 0.2)
    >>> out.shape, out.dtype == img.dtype, bool((out >= 0).all() and (out <= 1).all())
    ((2, 16, 16), True, True)
    >>> bool(np.array_equal(apply(img, "gaussian_noise", 0.3, seed=1), apply(img, "gaussian_noise", 0.3, seed=1)))
    True
    """
    if name not in _FUNCTIONS:
        raise ValueError(f"unknown perturbation {name!r}; valid: {', '.join(CORRUPTIONS)}")
    original = np.asarray(images)
    x = _as_float(original)
    single = x.ndim == 2
    x = x[None] if single else x
    rng = np.random.default_rng([int(seed), CORRUPTIONS.index(name), int(round(1000 * t))])
    fn = _FUNCTIONS[name]
    out = fn(x, t, rng, x.shape[-1] / 28.0) if name in _SCALED else fn(x, t, rng)
    out = np.clip(out, 0.0, 1.0)
    out = out[0] if single else out
    if original.dtype == np.uint8:
        return np.round(out * 255).astype(np.uint8)
    return out.astype(original.dtype)


def corrupt(
    images: ArrayLike,
    name: str,
    level: int,
    seed: int = 0,
    severity: Mapping[str, Sequence[float]] | None = None,
) -> np.ndarray:
    """Perturb images with one of the twelve perturbations at a severity level.

    Parameters
    ----------
    images : ndarray, shape (H, W) or (N, H, W)
        Grayscale images, ``uint8`` in 0-255 or floating point in [0, 1]; at least 8×8.
    name : str
        One of :data:`CORRUPTIONS`.
    level : int
        0 (identity) to 10; the strength at each level is :data:`SEVERITY` ``[name][level - 1]``.
    seed : int
        Seed of the perturbation's randomness (noise, fog, flakes, blur directions).
    severity : dict of str -> sequence of 10 floats, optional
        Strengths per level replacing :data:`SEVERITY` (e.g. from a calibration,
        :func:`shifteval.mlm.calibrate_severities`).

    Returns
    -------
    ndarray
        Same shape and dtype as ``images``, values in the same range. Deterministic for a seed.

    Raises
    ------
    ValueError
        If ``name`` is unknown, ``level`` is not an integer in 0-10, ``severity`` lacks 10 strengths
        for ``name``, or the images are not (H, W) / (N, H, W) arrays of at least 8×8 pixels, ``uint8``
        or finite floats in [0, 1].

    Examples
    --------
    >>> img = (np.arange(28 * 28).reshape(28, 28) % 256).astype(np.uint8)
    >>> bool(np.array_equal(corrupt(img, "fog", 0), img))
    True
    >>> out = corrupt(img, "contrast", 5)
    >>> out.shape, out.dtype.name, bool(out.std() < img.std())
    ((28, 28), 'uint8', True)
    """
    if name not in _FUNCTIONS:
        raise ValueError(f"unknown perturbation {name!r}; valid: {', '.join(CORRUPTIONS)}")
    if not isinstance(level, (int, np.integer)) or not 0 <= level <= 10:
        raise ValueError(f"level must be an integer from 0 (identity) to 10, got {level!r}")
    if level == 0:
        _as_float(images)  # same validation as every other level
        return np.array(images, copy=True)
    table = SEVERITY if severity is None else severity
    if name not in table or len(table[name]) != 10:
        raise ValueError(f"severity must give 10 strengths for {name!r}")
    return apply(images, name, float(table[name][level - 1]), seed)


#: Strength ranges searched by :func:`shifteval.mlm.calibrate_severities`, from near identity upwards.
GRIDS = {
    "brightness": (0.0, 0.6), "contrast": (0.0, 0.97), "defocus_blur": (0.0, 10.0), "fog": (0.0, 4.0),
    "frost": (0.0, 2.5), "gaussian_noise": (0.0, 1.2), "impulse_noise": (0.0, 0.7),
    "motion_blur": (0.0, 25.0), "pixelation": (0.0, 0.95), "shot_noise": (0.005, 2.0), "snow": (0.0, 0.8),
    "zoom_blur": (0.0, 2.0),
}  # fmt: skip


def calibrate(
    accuracy_at: Callable[[str, float], float],
    name: str,
    grid: ArrayLike,
    targets: Sequence[float],
    return_clamped: bool = False,
) -> list[float] | tuple[list[float], list[bool]]:
    """Strengths at which a model's accuracy hits each target (how a severity table is set).

    Parameters
    ----------
    accuracy_at : callable(name, t) -> float
        The calibration model's accuracy on the perturbed calibration images.
    name : str
        The perturbation, passed through to ``accuracy_at``.
    grid : sequence of float
        Increasing strengths to evaluate; start it at (or near) the identity strength so that a target
        just below clean accuracy can be interpolated rather than clamped.
    targets : sequence of float
        Desired accuracies, one per level (decreasing).
    return_clamped : bool
        Also return, per target, whether it was clamped to an end of the grid.

    Returns
    -------
    strengths : list of float
        For each target, the strength interpolated linearly between the last grid point whose accuracy
        is above it and the first at or below it (accuracy made non-increasing first, so a non-monotone
        curve is read by its running minimum); the grid's first point if that is already at or below the
        target, its last point if no point reaches it (both clamped).
    clamped : list of bool
        Only with ``return_clamped``.

    Raises
    ------
    ValueError
        If ``grid`` is not an increasing 1-D sequence of at least two strengths.

    Examples
    --------
    >>> acc = {0.0: 1.0, 1.0: 0.5, 2.0: 0.75, 3.0: 0.25}
    >>> calibrate(lambda n, t: acc[t], "fog", [0.0, 1.0, 2.0, 3.0], [0.75, 0.375, 0.1], return_clamped=True)
    ([0.5, 2.5, 3.0], [False, False, True])
    """
    grid = np.asarray(grid, dtype=float)
    if grid.ndim != 1 or len(grid) < 2 or np.any(np.diff(grid) <= 0):
        raise ValueError("grid must be an increasing sequence of at least two strengths")
    acc = np.minimum.accumulate(np.array([accuracy_at(name, t) for t in grid]))
    out, clamped = [], []
    for a in targets:
        below = np.flatnonzero(acc <= a)
        if len(below) == 0:
            out.append(float(grid[-1]))
            clamped.append(True)
        elif below[0] == 0:
            out.append(float(grid[0]))
            clamped.append(True)
        else:  # interpolate between the last grid point above the target and the first at or below it
            i = below[0]
            frac = (acc[i - 1] - a) / (acc[i - 1] - acc[i])
            out.append(float(grid[i - 1] + frac * (grid[i] - grid[i - 1])))
            clamped.append(False)
    return (out, clamped) if return_clamped else out
