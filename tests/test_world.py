"""The replication world: splits, annotators, sampling strategies, determinism, the acceptance pattern."""

import numpy as np
import pytest

from shifteval.datasets import world as worlds
from shifteval.datasets import world_render, world_sampling, world_summary

SMALL = {"n_train": 600, "n_v1": 300, "n_pool": 2500, "per_class": 30}


@pytest.fixture(scope="module")
def small_world():
    return worlds.build_world(SMALL)


def test_bases_are_real_digits_upsampled():
    images, labels = world_render.base_digits(16)
    assert images.shape == (1797, 16, 16) and images.dtype == np.float32
    assert images.min() >= 0 and images.max() <= 1
    assert np.bincount(labels).min() >= 170


def test_no_base_image_in_two_splits(small_world):
    ex = small_world.examples
    groups = {split: set(ex.loc[ex.split == split, "base_id"]) for split in ("train", "v1", "pool")}
    assert not groups["train"] & groups["v1"]
    assert not groups["train"] & groups["pool"]
    assert not groups["v1"] & groups["pool"]


def test_split_bases_is_stratified():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(10), 100)
    groups = world_render.split_bases(labels, (0.6, 0.2, 0.2), rng)
    for c in range(10):
        assert np.bincount(groups[labels == c], minlength=3).tolist() == [60, 20, 20]


def test_sizes_and_every_field_is_kept(small_world):
    w = small_world
    assert len(w.split_index("train")) == 600 and len(w.split_index("v1")) == 300
    assert len(w.split_index("pool")) == 2500
    for s in worlds.STRATEGIES:
        idx = w.split_index(s)
        assert len(idx) == 300 and len(set(idx)) == 300
        assert set(idx) <= set(w.split_index("pool"))
        assert np.bincount(w.labels[idx], minlength=10).tolist() == [30] * 10
    for column in ("base_id", "label", "d", "s", "split", "s_hat", "s_hat_original"):
        assert column in w.examples
    assert w.images.shape == (len(w.examples), 16, 16)
    # every vote is kept, and the observed frequencies are their means
    v1 = w.split_index("v1")
    assert np.allclose(w.votes_replication[v1].mean(axis=1), w.examples.s_hat.to_numpy()[v1])
    assert np.allclose(w.votes_original[v1].mean(axis=1), w.examples.s_hat_original.to_numpy()[v1])
    assert w.votes_replication.shape[1] == w.config.annotators


def test_original_benchmark_keeps_only_convincing_majorities(small_world):
    ex = small_world.examples
    kept = ex[ex.split.isin(["train", "v1"])]
    assert (kept.s_hat_original >= small_world.config.majority - 1e-12).all()
    assert (~small_world.candidates_original.kept).any()  # the filter did reject candidates


def test_selection_frequency_decreases_with_difficulty():
    d = np.linspace(0, 1, 11)
    s = world_render.selection_frequency(d, 0.95, 0.15)
    assert s[0] == pytest.approx(0.95) and s[-1] == pytest.approx(0.15) and np.all(np.diff(s) < 0)


def test_annotators_vote_with_probability_s():
    rng = np.random.default_rng(0)
    votes = world_render.annotate(np.array([0.1, 0.5, 0.9]), 20_000, rng)
    assert votes.dtype == np.uint8 and set(np.unique(votes)) <= {0, 1}
    assert votes.mean(axis=1) == pytest.approx([0.1, 0.5, 0.9], abs=0.01)


def test_render_identity_at_zero_difficulty_and_stronger_nuisance_with_d():
    bases, _ = world_render.base_digits(16)
    rng = np.random.default_rng(0)
    clean = world_render.render(bases[:50], np.zeros(50), rng)
    assert np.allclose(clean, bases[:50], atol=1e-5)
    easy = world_render.render(bases[:200], np.full(200, 0.2), np.random.default_rng(1))
    hard = world_render.render(bases[:200], np.full(200, 0.9), np.random.default_rng(1))
    assert np.abs(easy - bases[:200]).mean() < np.abs(hard - bases[:200]).mean()
    with pytest.raises(ValueError, match=r"difficulties must lie in \[0, 1\]"):
        world_render.render(bases[:2], np.array([0.5, 1.5]), rng)


def test_frequency_bins():
    assert world_sampling.frequency_bin([0, 0.19, 0.2, 0.39, 0.4, 0.6, 0.79, 0.8, 1.0]).tolist() == [
        0,
        0,
        1,
        1,
        2,
        3,
        3,
        4,
        4,
    ]


def test_matched_frequency_follows_the_reference_histogram_and_spills_upwards():
    rng = np.random.default_rng(0)
    ref_freq = np.array([0.1] * 10 + [0.5] * 30 + [0.9] * 60)
    ref_labels = np.zeros(100, dtype=int)
    # pool: class 0 has only 5 images in bin 0 (needs 10): the other 5 come from bin 1, the next higher
    pool_freq = np.array([0.1] * 5 + [0.3] * 50 + [0.5] * 50 + [0.9] * 100)
    pool_labels = np.zeros(len(pool_freq), dtype=int)
    # other classes need their own candidates
    ref_freq = np.concatenate([ref_freq, np.full(900, 0.9)])
    ref_labels = np.concatenate([ref_labels, np.repeat(np.arange(1, 10), 100)])
    pool_freq = np.concatenate([pool_freq, np.full(9 * 100, 0.9)])
    pool_labels = np.concatenate([pool_labels, np.repeat(np.arange(1, 10), 100)])
    idx, substituted = world_sampling.sample_matched_frequency(
        ref_freq, ref_labels, pool_freq, pool_labels, 100, rng
    )
    chosen = pool_freq[idx[pool_labels[idx] == 0]]
    assert substituted == {"higher": 5, "lower": 0}  # the five bin-0 images that bin 1 supplied
    assert np.sum(chosen == 0.1) == 5 and np.sum(chosen == 0.3) == 5
    assert np.sum(chosen == 0.5) == 30 and np.sum(chosen == 0.9) == 60
    assert len(set(idx)) == len(idx) == 1000


def test_matched_frequency_falls_back_to_lower_bins_only_when_the_top_runs_out():
    rng = np.random.default_rng(0)
    ref = np.tile(np.array([0.9] * 10), 10)
    labels = np.repeat(np.arange(10), 10)
    pool = np.tile(np.array([0.9] * 4 + [0.7] * 10), 10)
    pool_labels = np.repeat(np.arange(10), 14)
    idx, substituted = world_sampling.sample_matched_frequency(ref, labels, pool, pool_labels, 10, rng)
    assert substituted == {"higher": 0, "lower": 60} and len(idx) == 100


def test_threshold_and_top_images():
    rng = np.random.default_rng(0)
    freq = np.tile(np.linspace(0, 1, 11), 10)
    labels = np.repeat(np.arange(10), 11)
    thr = world_sampling.sample_threshold(freq, labels, 3, 0.7, rng)
    assert (freq[thr] >= 0.7 - 1e-12).all() and len(thr) == 30
    top = world_sampling.sample_top_images(freq, labels, 2, rng)
    assert sorted(set(np.round(freq[top], 6))) == [0.9, 1.0]
    with pytest.raises(ValueError, match="only 4 candidates reach frequency 0.7"):
        world_sampling.sample_threshold(freq, labels, 5, 0.7, rng)


def test_same_config_same_world_bit_for_bit(small_world):
    again = worlds.build_world(SMALL)
    assert np.array_equal(again.images, small_world.images)
    assert again.examples.equals(small_world.examples)
    for s in worlds.STRATEGIES:
        assert np.array_equal(again.split_index(s), small_world.split_index(s))
    other = worlds.build_world({**SMALL, "seed": 1})
    assert not np.array_equal(other.images, small_world.images)


def test_engstrom_bias_appears_and_vanishes_without_noise(small_world):
    """Acceptance 1 at small size: observed ŝ matched, true s lower; noise-free matching closes the gap."""
    f = world_summary.frequency_summary(small_world)
    assert abs(f["matchedfrequency"]["observed"] - f["v1"]["observed"]) <= 0.02
    assert f["v1"]["true"] - f["matchedfrequency"]["true"] >= 0.02
    assert f["matchedfrequency"]["observed"] < f["threshold0.7"]["observed"] < f["topimages"]["observed"]
    clean = world_summary.frequency_summary(small_world, small_world.replicate(None))
    gap_noisy = f["v1"]["true"] - f["matchedfrequency"]["true"]
    gap_clean = clean["v1"]["true"] - clean["matchedfrequency"]["true"]
    assert gap_clean < gap_noisy / 2


def test_equal_pools_and_many_annotators_remove_the_bias():
    """The mechanism, not a special case: with equal pool difficulty the true frequencies match."""
    w = worlds.build_world({**SMALL, "replication_difficulty": (2.0, 3.0), "majority": 0.0, "n_pool": 4000})
    f = world_summary.frequency_summary(w)
    assert abs(f["v1"]["true"] - f["matchedfrequency"]["true"]) < 0.02


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"n_train": 0}, "n_train must be a positive integer"),
        ({"base_split": (0.5, 0.5, 0.5)}, "base_split must be three positive shares"),
        ({"majority": 1.5}, r"majority must be in \[0, 1\]"),
        ({"s_easy": 0.2, "s_hard": 0.8}, "s_hard must not exceed s_easy"),
        ({"replication_difficulty": (0, 1)}, "two positive Beta parameters"),
        ({"annotator": 3}, r"unknown world parameter\(s\) \['annotator'\]"),
    ],
)
def test_bad_configs_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        worlds.WorldConfig.from_dict(change)


def test_unknown_split_name(small_world):
    with pytest.raises(ValueError, match="unknown split 'v2'"):
        small_world.split_index("v2")


def test_default_v1_is_five_times_a_replicated_set():
    """Both papers' pairs are about 5:1 (CIFAR-10 10,000 : 2,000; ImageNet 50,000 : 10,000)."""
    cfg = worlds.WorldConfig()
    assert cfg.n_v1 == 5 * 10 * cfg.per_class


def test_replicate_draws_fresh_votes_unless_asked_for_the_worlds_own_round(small_world):
    own = small_world.replication
    same = small_world.replicate(small_world.config.annotators, round=0)
    assert np.array_equal(
        same.votes,
        small_world.votes_replication[
            np.concatenate([small_world.split_index("v1"), small_world.split_index("pool")])
        ],
    )
    for s in worlds.STRATEGIES:
        assert np.array_equal(same.sets[s], own.sets[s])
    fresh = small_world.replicate(small_world.config.annotators)
    assert fresh.round == 1 and not np.array_equal(fresh.votes, same.votes)
    assert not np.array_equal(fresh.sets["matchedfrequency"], own.sets["matchedfrequency"])
    again = small_world.replicate(small_world.config.annotators, round=1)  # reproducible
    assert np.array_equal(again.votes, fresh.votes)
    assert not np.array_equal(small_world.replicate(10, round=2).votes, fresh.votes)
    assert small_world.replicate(None).votes is None
    with pytest.raises(ValueError, match="round must be a non-negative integer"):
        small_world.replicate(10, round=-1)


def test_base_disjoint_split_shares_no_base_digit_and_is_stratified(small_world):
    parts = small_world.base_disjoint_split("train", (0.6, 0.2, 0.2), seed=3)
    train = small_world.split_index("train")
    assert sorted(np.concatenate(parts).tolist()) == sorted(train.tolist())  # a partition
    base = small_world.examples["base_id"].to_numpy()
    sets = [set(base[p]) for p in parts]
    assert not (sets[0] & sets[1] or sets[0] & sets[2] or sets[1] & sets[2])
    labels = small_world.labels
    n_bases = {c: len(set(base[train][labels[train] == c])) for c in range(10)}
    for c in range(10):  # every part holds about its share of each class's base digits
        got = len({b for b in sets[1] if labels[base == b][0] == c})
        assert abs(got - 0.2 * n_bases[c]) <= 1, (c, got, n_bases[c])
    assert all(
        np.array_equal(a, b)
        for a, b in zip(parts, small_world.base_disjoint_split("train", (0.6, 0.2, 0.2), seed=3), strict=True)
    )
    other = small_world.base_disjoint_split("train", (0.6, 0.2, 0.2), seed=4)
    assert not np.array_equal(other[1], parts[1])
    with pytest.raises(ValueError, match="shares must be two or more positive numbers summing to 1"):
        small_world.base_disjoint_split("train", (0.5, 0.6))


def test_more_bins_match_the_reference_frequencies_more_closely():
    # per class as many images as the reference has: the targets are the reference's own bin counts, so
    # with n bins and no substitution every drawn image is within 1/n of a reference image's bin
    rng = np.random.default_rng(0)
    ref_freq, ref_labels = rng.beta(5, 2, 400), np.repeat(np.arange(10), 40)
    pool_freq, pool_labels = rng.beta(2, 2, 20_000), np.repeat(np.arange(10), 2000)
    gaps = {}
    for n in (1, 5, 20):
        idx, sub = world_sampling.sample_matched_frequency(
            ref_freq, ref_labels, pool_freq, pool_labels, 40, np.random.default_rng(1), np.arange(n) / n
        )
        assert len(set(idx.tolist())) == 400 and sub == {"higher": 0, "lower": 0}
        gaps[n] = abs(pool_freq[idx].mean() - ref_freq.mean())
        assert gaps[n] <= 1 / n
    assert gaps[20] < gaps[5] < gaps[1]


def test_frequency_bins_refuse_edges_that_do_not_start_at_zero():
    with pytest.raises(ValueError, match="edges must increase from 0"):
        world_sampling.frequency_bin([0.5], edges=[0.1, 0.5])
