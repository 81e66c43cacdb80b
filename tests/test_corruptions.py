"""The perturbations' contract: shape, dtype, range, determinism, identity at level 0, monotone strength."""

import numpy as np
import pytest

from shifteval import corruptions
from shifteval.datasets.world import base_digits

DIGITS, LABELS = base_digits(16)
FLOAT = DIGITS[:24]
UINT8 = np.round(base_digits(28)[0][:6] * 255).astype(np.uint8)


def test_twelve_perturbations_ten_levels():
    assert len(corruptions.CORRUPTIONS) == 12 and len(set(corruptions.CORRUPTIONS)) == 12
    assert set(corruptions.SEVERITY) == set(corruptions.CORRUPTIONS)
    for name, ts in corruptions.SEVERITY.items():
        assert len(ts) == 10 and all(b >= a for a, b in zip(ts, ts[1:])), name


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
