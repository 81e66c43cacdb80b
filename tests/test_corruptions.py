"""The perturbations' contract: shape, dtype, range, determinism, identity at level 0, monotone strength."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shifteval import corruptions
from shifteval.datasets.world import base_digits

DIGITS, LABELS = base_digits(16)
FLOAT = DIGITS[:24]
UINT8 = np.round(base_digits(28)[0][:6] * 255).astype(np.uint8)


def test_twelve_perturbations_ten_levels():
    assert len(corruptions.CORRUPTIONS) == 12 and len(set(corruptions.CORRUPTIONS)) == 12
    assert set(corruptions.SEVERITY) == set(corruptions.CORRUPTIONS)
    for name, ts in corruptions.SEVERITY.items():
        assert len(ts) == 10 and all(b >= a for a, b in zip(ts, ts[1:], strict=False)), name


@pytest.mark.parametrize("name", corruptions.CORRUPTIONS)
@pytest.mark.parametrize(
    "images",
    [FLOAT, UINT8, FLOAT[0], DIGITS[:3, :8, :8].copy()],
    ids=["float16px", "uint8_28px", "single", "8px"],
)
def test_contract(name, images):
    for level in (1, 5, 10):
        out = corruptions.corrupt(images, name, level, seed=3)
        assert out.shape == images.shape and out.dtype == images.dtype
        if images.dtype == np.uint8:
            assert out.min() >= 0 and out.max() <= 255
        else:
            assert np.all(np.isfinite(out)) and out.min() >= 0 and out.max() <= 1
        again = corruptions.corrupt(images, name, level, seed=3)
        assert np.array_equal(out, again)
    assert np.array_equal(corruptions.corrupt(images, name, 0, seed=3), images)
    assert not np.array_equal(corruptions.corrupt(images, name, 10, seed=3), images)


@pytest.mark.parametrize(
    "name", ["gaussian_noise", "shot_noise", "impulse_noise", "fog", "frost", "snow", "motion_blur"]
)
def test_seed_changes_random_perturbations(name):
    a = corruptions.corrupt(FLOAT, name, 5, seed=0)
    b = corruptions.corrupt(FLOAT, name, 5, seed=1)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("name", corruptions.CORRUPTIONS)
def test_higher_levels_move_images_further(name):
    dist = [np.abs(corruptions.corrupt(FLOAT, name, lvl, seed=0) - FLOAT).mean() for lvl in (1, 5, 10)]
    assert dist[0] < dist[1] < dist[2], dist


def test_level_zero_returns_a_copy():
    out = corruptions.corrupt(FLOAT, "fog", 0)
    assert np.array_equal(out, FLOAT) and not np.shares_memory(out, FLOAT)


def test_pixelation_averages_blocks():
    img = np.zeros((16, 16))
    img[:, 8:] = 1.0
    img[0, 0] = 1.0
    out = corruptions.apply(img, "pixelation", 0.5)  # blocks of 2 px
    assert (
        np.allclose(out[:2, :2], 0.25) and np.allclose(out[:, 8:], 1.0) and np.isclose(out.mean(), img.mean())
    )


def test_brightness_and_contrast_formulas():
    img = FLOAT[0].astype(np.float64)
    assert np.allclose(corruptions.apply(img, "brightness", 0.2), np.clip(img + 0.2, 0, 1))
    assert np.allclose(corruptions.apply(img, "contrast", 0.5), (img - img.mean()) * 0.5 + img.mean())


def test_calibrate_inverts_a_known_accuracy_curve():
    grid = np.linspace(0, 1, 11)
    levels = corruptions.calibrate(lambda name, t: 1 - 0.5 * t, "fog", grid, [0.9, 0.7, 0.5])
    assert levels == pytest.approx([0.2, 0.6, 1.0])


@pytest.mark.parametrize(
    ("images", "name", "level", "message"),
    [
        (FLOAT, "blur", 1, "unknown perturbation"),
        (FLOAT, "fog", 11, "level must be an integer from 0"),
        (FLOAT, "fog", 1.5, "level must be an integer"),
        (FLOAT * 2, "fog", 1, r"lie in \[0, 1\]"),
        (FLOAT.astype(np.int32), "fog", 1, "uint8"),
        (FLOAT[:, None], "fog", 1, r"\(N, H, W\)"),
        (FLOAT[:, :4, :4], "fog", 1, "at least 8"),
        (FLOAT[:0], "fog", 1, "empty"),
        (FLOAT * 2, "fog", 0, r"lie in \[0, 1\]"),
    ],
)
def test_bad_input(images, name, level, message):
    with pytest.raises(ValueError, match=message):
        corruptions.corrupt(images, name, level)


# --- each perturbation's formula, reproduced with the same random draws ----------------------------------

X = FLOAT[:4].astype(np.float64)


def _rng():
    return np.random.default_rng(123)


def test_defocus_blur_formula():
    from scipy import ndimage

    out = corruptions._defocus_blur(X, 2.0, _rng(), 1.0)
    k = corruptions._disk(2.0)
    expect = ndimage.gaussian_filter(ndimage.convolve(X, k[None], mode="nearest"), (0, 0.5, 0.5))
    assert np.allclose(out, expect) and k.sum() == pytest.approx(1) and k[2, 2] == k.max()


def test_fog_formula():
    out = corruptions._fog(X, 0.7, _rng())
    fog = corruptions._power_law_noise(_rng(), X.shape, beta=3.0)
    mx = X.max(axis=(1, 2), keepdims=True)
    assert np.allclose(out, (X + 0.7 * fog) * mx / (mx + 0.7))
    assert fog.min() == pytest.approx(0) and fog.max() == pytest.approx(1)


def test_frost_formula_matches_its_docstring():
    out = corruptions._frost(X, 0.9, _rng())
    n = corruptions._power_law_noise(_rng(), X.shape, beta=1.5)
    veins = (1 - np.abs(2 * n - 1)) ** 6
    assert np.allclose(out, (1 - 0.9 / 3) * X + 0.6 * 0.9 * veins)


def test_gaussian_shot_and_impulse_noise_formulas():
    assert np.allclose(corruptions._gaussian_noise(X, 0.3, _rng()), X + 0.3 * _rng().standard_normal(X.shape))
    t = 0.5
    assert np.allclose(corruptions._shot_noise(X, t, _rng()), _rng().poisson(X / t**2) * t**2)
    out = corruptions._impulse_noise(X, 0.2, _rng())
    u = _rng().random(X.shape)
    assert np.all(out[u < 0.1] == 0) and np.all(out[(u >= 0.1) & (u < 0.2)] == 1)
    assert np.array_equal(out[u >= 0.2], X[u >= 0.2])


def test_motion_blur_kernel_and_formula():
    k = corruptions._line_kernel(4.0, 0.0)  # horizontal, one-sided, 4 px
    r = (len(k) - 1) // 2
    assert k.sum() == pytest.approx(1) and np.allclose(k[np.arange(len(k)) != r], 0)
    assert (k[r] * (np.arange(len(k)) - r)).sum() == pytest.approx(2.0)  # mean offset = length / 2
    img = np.zeros((1, 28, 28))
    img[0, 14, 10] = 1.0
    out = corruptions._motion_blur(img, 4.0, _rng(), 1.0)
    assert out.sum() == pytest.approx(1) and np.count_nonzero(out > 1e-9) >= 4


def _spread(out):
    """Root mean squared distance of an image's mass from its centre of mass."""
    out = out[0] / out[0].sum()
    yy, xx = np.mgrid[: out.shape[0], : out.shape[1]]
    cy, cx = (out * yy).sum(), (out * xx).sum()
    return np.sqrt((out * ((yy - cy) ** 2 + (xx - cx) ** 2)).sum())


@pytest.mark.parametrize("name", ["defocus_blur", "motion_blur"])
def test_lengths_are_in_28_pixel_units(name):
    """The same strength blurs a 56×56 image over twice as many pixels as a 28×28 one."""
    spreads = []
    for side in (28, 56):
        img = np.zeros((1, side, side))
        img[0, side // 2, side // 2] = 1.0
        spreads.append(_spread(corruptions.apply(img, name, 8.0, seed=0)))
    assert spreads[1] / spreads[0] == pytest.approx(2.0, rel=0.1)


def test_snow_formula():
    t = 0.4
    out = corruptions._snow(X, t, _rng(), 1.0)
    rng = _rng()
    flakes = (rng.random(X.shape) < 0.25 * t).astype(float)
    flakes = corruptions._motion_blur(flakes, 2.0, rng, 1.0) * 2.0
    expect = (1 - 0.6 * t) * X + 0.6 * t * np.clip(0.5 + 1.5 * X, 0, 1) + flakes
    assert np.allclose(out, expect)
    assert np.allclose(corruptions._snow(X, 0.0, _rng(), 1.0), X)


def test_zoom_blur_formula():
    assert np.allclose(corruptions._zoom_blur(X, 0.0, _rng()), X)
    const = np.full((1, 16, 16), 0.3)
    assert np.allclose(corruptions._zoom_blur(const, 1.0, _rng()), 0.3)
    from scipy import ndimage

    out = corruptions._zoom_blur(X, 0.5, _rng())
    acc = X.copy()
    for z in np.linspace(1, 1.5, 8)[1:]:
        big = ndimage.zoom(X, (1, z, z), order=1)
        top, left = (big.shape[1] - 16) // 2, (big.shape[2] - 16) // 2
        acc += big[:, top : top + 16, left : left + 16]
    assert np.allclose(out, acc / 8)


@settings(max_examples=60, deadline=None)
@given(
    h=st.integers(8, 40),
    w=st.integers(8, 40),
    t=st.floats(0.0, 3.0),
    seed=st.integers(0, 2**16),
)
def test_zoom_blur_is_ndimage_zoom_on_any_size_and_strength(h, w, t, seed):
    """The interpolation matrices reproduce ndimage.zoom's linear interpolation and centre crop."""
    from scipy import ndimage

    x = np.random.default_rng(seed).random((3, h, w))
    acc = x.copy()
    for z in np.linspace(1, 1 + t, 8)[1:]:
        big = ndimage.zoom(x, (1, z, z), order=1)
        top, left = (big.shape[1] - h) // 2, (big.shape[2] - w) // 2
        acc += big[:, top : top + h, left : left + w]
    np.testing.assert_allclose(corruptions._zoom_blur(x, t, _rng()), acc / 8, rtol=0, atol=1e-12)


def test_corrupt_takes_a_severity_table():
    table = {"brightness": [0.1 * i for i in range(1, 11)]}
    assert np.allclose(corruptions.corrupt(X, "brightness", 3, severity=table), np.clip(X + 0.3, 0, 1))
    with pytest.raises(ValueError, match="10 strengths"):
        corruptions.corrupt(X, "fog", 3, severity=table)


def test_calibrate_clamps_at_both_ends_and_reads_a_non_monotone_curve_by_its_running_minimum():
    grid = [0.0, 1.0, 2.0, 3.0]
    acc = {0.0: 0.8, 1.0: 0.6, 2.0: 0.7, 3.0: 0.4}  # rises at 2: the running minimum is 0.8, 0.6, 0.6, 0.4
    out, clamped = corruptions.calibrate(lambda n, t: acc[t], "fog", grid, [0.9, 0.7, 0.5, 0.3], True)
    assert out == pytest.approx([0.0, 0.5, 2.5, 3.0])  # 0.5 lies between 0.6 (t = 2, running min) and 0.4
    assert clamped == [True, False, False, True]
    with pytest.raises(ValueError, match="increasing"):
        corruptions.calibrate(lambda n, t: 0.5, "fog", [1.0, 0.5], [0.4])
