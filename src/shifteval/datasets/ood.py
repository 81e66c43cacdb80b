"""Synthetic out-of-distribution images for a digit classifier, all available offline.

Two families that share no generator and no source material (Zhu et al. 2023, §4.1-4.2):

- **test OOD sources** (:data:`OOD_SOURCES`), which only ever appear in test sets: patches of
  scikit-learn's sample photographs, rendered Latin letters, synthetic periodic and noise textures;
- **auxiliary outliers** (:func:`auxiliary_outliers`), which only the detector's outlier-exposure
  fine-tuning sees (Liu et al. 2020 use 80 Million Tiny Images): procedural pen strokes, geometric
  shapes, and edge-contrast tiles of the pictures bundled with matplotlib.

:data:`GENERATORS` names, for every source, the generator function and the material it draws on;
tests check that the two families are disjoint in both.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import IO, cast

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage

#: The test OOD sources, in the order the chapter shows them.
OOD_SOURCES = ("natural_patches", "letters", "textures")

#: Source -> (generator function, source material). The auxiliary outliers' parts are prefixed ``aux:``.
GENERATORS = {
    "natural_patches": ("_patches", "scikit-learn sample photographs (china.jpg, flower.jpg)"),
    "letters": ("_render_glyphs", "Latin letters in matplotlib's DejaVu fonts"),
    "textures": ("_textures", "procedural stripes, checkerboards, 1/f noise, Gabor patches"),
    "aux:strokes": ("_strokes", "procedural pen strokes (quadratic Bézier curves)"),
    "aux:shapes": ("_shapes", "procedural ellipses, rectangles, triangles and rings"),
    "aux:tiles": ("_edge_tiles", "matplotlib's sample pictures (grace_hopper, Minduka, MRI, DEMs)"),
}


def _generator(rng) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def name_key(name: str) -> int:
    """A stable 32-bit integer for a name (a spawn key for the source's random stream).

    Parameters
    ----------
    name : str
        E.g. an OOD source's name.

    Returns
    -------
    int
        The first four bytes of the name's SHA-256, little-endian: in ``[0, 2**32)``, the same in
        every process and Python version (unlike ``hash``).

    Examples
    --------
    >>> k = name_key("letters")
    >>> k == name_key("letters") != name_key("textures"), 0 <= k < 2**32
    (True, True)
    """
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def ood_images(
    source: str, n: int, side: int = 16, rng: np.random.Generator | int = 0
) -> NDArray[np.float32]:
    """``n`` images of classes the digit classifier never saw, as (n, side, side) float32 in [0, 1].

    Parameters
    ----------
    source : {"natural_patches", "letters", "textures"}
        ``natural_patches``: grayscale patches cut at random positions and scales from scikit-learn's
        sample photographs, contrast-stretched; ``letters``: capital and small Latin letters rendered
        with matplotlib's DejaVu fonts, bright on dark like the digits, randomly rotated, scaled and
        shifted; ``textures``: stripes, checkerboards, 1/f noise and Gabor patches.
    n, side : int
        Number of images and their side in pixels.
    rng : numpy.random.Generator or int
        The source's random stream (an int seeds a fresh generator).

    Returns
    -------
    ndarray, shape (n, side, side), float32

    Raises
    ------
    ValueError
        If ``source`` is unknown or ``n < 1``.

    Examples
    --------
    >>> ood_images("textures", 3, side=8, rng=0).shape
    (3, 8, 8)
    >>> x = ood_images("letters", 4, side=8, rng=np.random.default_rng(1))
    >>> x.dtype, bool(0 <= x.min() and x.max() <= 1), bool((x == ood_images("letters", 4, side=8, rng=1)).all())
    (dtype('float32'), True, True)
    >>> ood_images("faces", 1)
    Traceback (most recent call last):
    ...
    ValueError: unknown OOD source 'faces'; valid: natural_patches, letters, textures
    """
    if source not in OOD_SOURCES:
        raise ValueError(f"unknown OOD source {source!r}; valid: {', '.join(OOD_SOURCES)}")
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    rng = _generator(rng)
    if source == "natural_patches":
        from sklearn.datasets import load_sample_images

        out = _patches([img.mean(axis=2) / 255.0 for img in load_sample_images().images], n, side, rng)
    elif source == "letters":
        import string

        fonts = ("DejaVu Sans", "DejaVu Serif", "DejaVu Sans Mono")
        out = _render_glyphs(string.ascii_letters, fonts, n, side, rng)
    else:
        out = _textures(n, side, rng)
    return out.astype(np.float32)


def ood_images_from_files(
    dataset: str, root: str | Path, n: int, side: int, rng: np.random.Generator | int = 0
) -> NDArray[np.float32]:
    """``n`` OOD images drawn without replacement from the test split of a real idx dataset.

    Parameters
    ----------
    dataset : {"fashion-mnist", "mnist"}
        Read with :func:`shifteval.datasets.real.load` from ``root``.
    root : str or path
        The folder holding the dataset's idx files.
    n, side : int
        Number of images; they are resized to ``side``×``side``.
    rng : numpy.random.Generator or int
        Picks the images (an int seeds a fresh generator).

    Returns
    -------
    ndarray, shape (n, side, side), float32 in [0, 1]

    Raises
    ------
    ValueError
        If ``dataset`` is not an idx dataset or holds fewer than ``n`` test images;
        :class:`shifteval.datasets.real.DatasetError` if its files are missing or malformed.

    Examples
    --------
    A tiny Fashion-MNIST test split (five 28×28 images) in its official idx format:

    >>> from shifteval.datasets.real import encode_idx
    >>> imgs = np.stack([np.full((28, 28), 51 * i) for i in range(5)])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "t10k-images-idx3-ubyte").write_bytes(encode_idx(imgs))
    ...     _ = (Path(tmp) / "t10k-labels-idx1-ubyte").write_bytes(encode_idx(np.arange(5)))
    ...     x = ood_images_from_files("fashion-mnist", tmp, 3, side=8, rng=0)
    >>> x.shape, len(set(x[:, 0, 0].round(2))), bool(np.allclose(x, x[:, :1, :1]))  # 3 distinct, still flat
    ((3, 8, 8), 3, True)
    >>> {int(round(float(v) * 255)) for v in x[:, 0, 0]} <= {0, 51, 102, 153, 204}  # the files' grey levels
    True
    """
    from . import real

    if dataset not in ("mnist", "fashion-mnist"):
        raise ValueError(f"OOD files must be an idx dataset ('fashion-mnist' or 'mnist'), got {dataset!r}")
    images, _ = real.load(dataset, root, "test")
    if n > len(images):
        raise ValueError(f"{dataset} in {root} holds {len(images)} test images; {n} were asked for")
    x = images[_generator(rng).choice(len(images), n, replace=False)].astype(np.float64) / 255.0
    if x.shape[1:] != (side, side):
        x = ndimage.zoom(x, (1, side / x.shape[1], side / x.shape[2]), order=1)[:, :side, :side]
    return np.clip(x, 0, 1).astype(np.float32)


def auxiliary_outliers(n: int, side: int = 16, rng: np.random.Generator | int = 0) -> NDArray[np.float32]:
    """Auxiliary outliers for outlier exposure (Liu et al. 2020), never used as test OOD data.

    An offline stand-in for the 80 Million Tiny Images on which Zhu et al. fine-tune their detector
    (§4.2). A third each of: procedural pen strokes (one to three quadratic Bézier curves, bright on dark,
    random width), procedural geometric shapes (ellipses, rectangles, triangles, rings at random gray
    levels over a gray background with noise), and tiles of matplotlib's bundled pictures (alternately
    edge contrast and histogram-equalised gray levels). None uses a test source's generator or material
    (:data:`GENERATORS`): no font, no letter, no sample photograph of scikit-learn, no periodic texture.

    Parameters
    ----------
    n, side : int
        Number of images and their side in pixels.
    rng : numpy.random.Generator or int
        The random stream (an int seeds a fresh generator).

    Returns
    -------
    ndarray, shape (n, side, side), float32 in [0, 1]
        Shuffled; the three kinds in near-equal numbers.

    Raises
    ------
    ValueError
        If ``n < 1``.

    Examples
    --------
    >>> x = auxiliary_outliers(5, side=8, rng=0)
    >>> x.shape, x.dtype, bool(0 <= x.min() and x.max() <= 1), bool((x == auxiliary_outliers(5, 8, 0)).all())
    ((5, 8, 8), dtype('float32'), True, True)
    """
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    rng = _generator(rng)
    k = [n // 3 + (i < n % 3) for i in range(3)]
    parts = [_strokes(k[0], side, rng), _shapes(k[1], side, rng), _edge_tiles(k[2], side, rng)]
    out = np.concatenate([p for p in parts if len(p)])
    return out[rng.permutation(n)].astype(np.float32)


# --- test-source generators ---------------------------------------------------------------------------


def _patches(sources, n, side, rng):
    """``n`` square patches cut at random positions and scales from ``sources`` (2-D arrays).

    Each is resized to ``side`` and contrast-stretched between its 2nd and 98th percentiles.
    """
    out = np.empty((n, side, side))
    for i in range(n):
        img = sources[rng.integers(len(sources))]
        size = int(rng.integers(side, min(8 * side, min(img.shape) - 1)))
        r, c = rng.integers(0, img.shape[0] - size), rng.integers(0, img.shape[1] - size)
        patch = ndimage.zoom(img[r : r + size, c : c + size], side / size, order=1)[:side, :side]
        lo, hi = np.percentile(patch, [2, 98])
        out[i] = np.clip((patch - lo) / max(hi - lo, 1e-3), 0, 1)
    return out


def _render_glyphs(chars, fonts, n, side, rng):
    """``n`` glyphs drawn at random from ``chars`` × ``fonts``.

    Rendered bright on black at 4× the size with matplotlib, shrunk, then randomly rotated (±20°),
    scaled (±15%) and shifted (±1.5 px).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    big = 4 * side
    glyphs = []
    for font in fonts:
        for ch in chars:
            fig = Figure(figsize=(1, 1), dpi=big)
            canvas = FigureCanvasAgg(fig)
            fig.patch.set_facecolor("black")
            fig.text(0.5, 0.5, ch, color="white", fontsize=0.62 * big, family=font, ha="center",
                     va="center", weight="bold")  # fmt: skip
            canvas.draw()
            glyphs.append(np.asarray(canvas.buffer_rgba())[..., 0] / 255.0)
    out = np.empty((n, side, side))
    centre = np.array([(side - 1) / 2, (side - 1) / 2])
    for i in range(n):
        g = ndimage.zoom(glyphs[rng.integers(len(glyphs))], side / big, order=1)[:side, :side]
        a, s = np.deg2rad(rng.uniform(-20, 20)), 1 + rng.uniform(-0.15, 0.15)
        m = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) / s
        offset = centre - m @ (centre + rng.uniform(-1.5, 1.5, 2))
        out[i] = ndimage.affine_transform(g, m, offset=offset, order=1, mode="constant")
    return np.clip(out, 0, 1)


def _textures(n, side, rng):
    yy, xx = np.mgrid[0:side, 0:side] / side
    out = np.empty((n, side, side))
    for i in range(n):
        kind = rng.integers(4)
        angle, freq, phase = rng.uniform(0, np.pi), rng.uniform(2, 6), rng.uniform(0, 2 * np.pi)
        u = np.cos(angle) * xx + np.sin(angle) * yy
        v = -np.sin(angle) * xx + np.cos(angle) * yy
        if kind == 0:  # stripes
            img = 0.5 + 0.5 * np.sign(np.sin(2 * np.pi * freq * u + phase))
        elif kind == 1:  # checkerboard
            img = 0.5 + 0.5 * np.sign(np.sin(2 * np.pi * freq * u + phase) * np.sin(2 * np.pi * freq * v))
        elif kind == 2:  # 1/f noise
            spec = rng.standard_normal((side, side)) + 1j * rng.standard_normal((side, side))
            f = np.hypot(*np.meshgrid(np.fft.fftfreq(side), np.fft.fftfreq(side)))
            f[0, 0] = np.inf
            img = np.real(np.fft.ifft2(spec / f))
            img = (img - img.min()) / (np.ptp(img) + 1e-12)
        else:  # Gabor patch
            env = np.exp(-((xx - 0.5) ** 2 + (yy - 0.5) ** 2) / (2 * rng.uniform(0.1, 0.3) ** 2))
            img = 0.5 + 0.5 * env * np.cos(2 * np.pi * freq * u + phase)
        out[i] = np.clip(img, 0, 1)
    return out


# --- auxiliary-outlier generators ---------------------------------------------------------------------


def _strokes(n, side, rng):
    """One to three quadratic Bézier pen strokes per image, bright on dark, width 0.6-1.4 px."""
    yy, xx = np.mgrid[0:side, 0:side].astype(float)
    out = np.zeros((n, side, side))
    t = np.linspace(0, 1, 4 * side)[:, None]
    for i in range(n):
        img = np.zeros((side, side))
        for _ in range(rng.integers(1, 4)):
            p = rng.uniform(1, side - 2, (3, 2))
            curve = (1 - t) ** 2 * p[0] + 2 * t * (1 - t) * p[1] + t**2 * p[2]
            d2 = (yy[..., None] - curve[:, 0]) ** 2 + (xx[..., None] - curve[:, 1]) ** 2
            width = rng.uniform(0.6, 1.4)
            img = np.maximum(img, rng.uniform(0.6, 1.0) * np.exp(-d2.min(axis=-1) / (2 * width**2)))
        out[i] = img
    return np.clip(out, 0, 1)


def _shapes(n, side, rng):
    """Filled ellipses, rectangles and triangles and rings, with Gaussian noise.

    Shapes and background take random gray levels.
    """
    yy, xx = np.mgrid[0:side, 0:side].astype(float)
    out = np.empty((n, side, side))
    for i in range(n):
        img = np.full((side, side), rng.uniform(0, 0.6))
        for _ in range(rng.integers(1, 4)):
            cy, cx = rng.uniform(0, side, 2)
            ry, rx = rng.uniform(side / 8, side / 2, 2)
            kind = rng.integers(4)
            if kind == 0:
                mask = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1
            elif kind == 1:
                mask = (np.abs(yy - cy) <= ry) & (np.abs(xx - cx) <= rx)
            elif kind == 2:
                mask = (yy - cy + ry >= 0) & (np.abs(xx - cx) <= (yy - cy + ry) * rx / (2 * ry))
                mask &= yy <= cy + ry
            else:
                r = np.hypot(yy - cy, xx - cx)
                mask = np.abs(r - ry) <= rng.uniform(0.7, 2.0)
            img[mask] = rng.uniform(0, 1)
        out[i] = img + rng.normal(0, rng.uniform(0, 0.08), (side, side))
    return np.clip(out, 0, 1)


def _edge_tiles(n, side, rng):
    """Tiles of matplotlib's sample pictures at a random scale and quarter turn.

    Alternately high-pass filtered (the tile minus its blur, rescaled around 0.5) and histogram-equalised
    with a random gamma.
    """
    import matplotlib.cbook as cbook
    import matplotlib.image as mimage

    gray = [
        mimage.imread(cbook.get_sample_data(f, asfileobj=False))[..., :3].mean(axis=2)
        for f in ("grace_hopper.jpg", "Minduka_Present_Blue_Pack.png")
    ]
    with cast(IO[bytes], cbook.get_sample_data("s1045.ima.gz")) as f:  # a .gz sample opens as a file
        gray.append(np.frombuffer(f.read(), np.uint16).reshape(256, 256).astype(float))
    gray += [
        np.load(cbook.get_sample_data(f, asfileobj=False))[k]
        for f, k in (("topobathy.npz", "topo"), ("jacksboro_fault_dem.npz", "elevation"))
    ]
    pictures = [(g - g.min()) / np.ptp(g) for g in gray]
    out = np.empty((n, side, side))
    for i in range(n):
        img = pictures[rng.integers(len(pictures))]
        scale = rng.uniform(1.0, min(img.shape) / side / 1.5)
        size = int(side * scale)
        r, c = rng.integers(0, img.shape[0] - size + 1), rng.integers(0, img.shape[1] - size + 1)
        tile = ndimage.zoom(img[r : r + size, c : c + size], side / size, order=1)[:side, :side]
        tile = np.rot90(tile, rng.integers(4))
        if i % 2:  # edge contrast: the tile minus its blur
            high = tile - ndimage.gaussian_filter(tile, rng.uniform(1.0, 2.5))
            out[i] = 0.5 + 0.5 * high / max(np.abs(high).max(), 1e-6)
        else:  # gray levels, histogram-equalised (rank transform) and gamma-adjusted
            ranks = np.argsort(np.argsort(tile, axis=None)).reshape(tile.shape) / (tile.size - 1)
            out[i] = ranks ** rng.uniform(0.5, 2.0)
    return np.clip(out, 0, 1)
