"""The embedded replication world: a benchmark, its careful replication, on real handwritten digits.

The world re-creates, without downloads, the situation studied by Recht et al. (2019, §4 and
App. C.1.2) and Engstrom et al. (2020, §2):

1. **Base images** are scikit-learn's 1,797 handwritten digits (8×8, real scans), split *by base
   image* into disjoint train / original-test / replication-pool bases, stratified by class, and
   upsampled to 16×16.
2. **Rendering**: every example is a base image plus nuisances (rotation, scaling, translation, blur,
   contrast loss, noise, occlusion) whose strength is a latent difficulty ``d`` in [0, 1].
3. **Annotators**: an image's true selection frequency ``s`` falls linearly with ``d``; an annotator
   selects it with probability ``s``; the observed frequency ``ŝ`` is the mean of ``n`` votes. Every
   vote is kept.
4. **The original benchmark** annotates a candidate pool and keeps images with a convincing majority
   (``ŝ >= majority``); the training set and the original test set (v1) are drawn from what is kept.
5. **The replication** renders a new candidate pool, whose difficulty distribution may be harder (as
   Flickr years later was), annotates it *together with the v1 images* in a fresh round, and samples
   three test sets exactly as Recht et al. did: MatchedFrequency, Threshold0.7 and TopImages.

Because ``ŝ`` is noisy and the new pool has lower true ``s`` than the filtered v1 images, matching the
*observed* frequencies selects images whose *true* frequency is lower — Engstrom et al.'s statistical
bias — and models lose accuracy on them. With noise-free frequencies (:meth:`World.replicate` with
``annotators=None``) the same matching removes most of the drop.

Steps 1-3 live in :mod:`~shifteval.datasets.world_render`, the sampling strategies in
:mod:`~shifteval.datasets.world_sampling` and the chapter's summaries in
:mod:`~shifteval.datasets.world_summary`.
"""

from __future__ import annotations

import pickle
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..utils import cache
from ..utils.io import atomic_write_bytes
from .world_render import annotate, base_digits, render, selection_frequency, split_bases
from .world_sampling import (
    STRATEGIES,
    sample_matched_frequency,
    sample_threshold,
    sample_top_images,
)


@dataclass(frozen=True)
class WorldConfig:
    """Every knob of the world. Sizes are numbers of examples; difficulties are Beta(a, b) of ``d``.

    Attributes
    ----------
    seed : int
        Seed of every random draw.
    n_train, n_v1 : int
        Training-set and original test-set (v1) sizes, drawn from the kept original candidates. The
        default v1 is five times a replicated set (10,000 against 2,000), the ratio of both papers'
        pairs: CIFAR-10's 10,000 test images against CIFAR-10.1's 2,000, ImageNet's 50,000 validation
        images against ImageNetV2's 10,000 (Recht et al. 2019, §3).
    n_pool : int
        Candidates rendered for the replication.
    per_class : int
        Images per class in each replicated test set.
    base_split : (float, float, float)
        Shares of base digits assigned to train / original test / replication pool.
    annotators : int
        Votes per image in each annotation round (the replication round's ``n``).
    majority : float
        The original benchmark keeps a candidate when its observed frequency is at least this.
    original_difficulty, replication_difficulty : (float, float)
        Beta parameters of ``d`` in the original and the replication candidate pools.
    s_easy, s_hard : float
        True selection frequency at ``d = 0`` and at ``d = 1`` (linear in between).
    threshold : float
        The threshold of the Threshold strategy (0.7 in Recht et al.).
    """

    seed: int = 0
    n_train: int = 6000
    n_v1: int = 10000
    n_pool: int = 16000
    per_class: int = 200
    base_split: tuple = (0.6, 0.2, 0.2)
    annotators: int = 10
    majority: float = 0.6
    original_difficulty: tuple = (2.0, 3.0)
    replication_difficulty: tuple = (2.6, 2.4)
    s_easy: float = 0.95
    s_hard: float = 0.15
    threshold: float = 0.7

    def __post_init__(self) -> None:
        """Check every knob and normalise the tuples (``ValueError`` naming the knob)."""
        for name in ("n_train", "n_v1", "n_pool", "per_class", "annotators"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        split = tuple(float(v) for v in self.base_split)
        if len(split) != 3 or min(split) <= 0 or abs(sum(split) - 1) > 1e-9:
            raise ValueError(
                f"base_split must be three positive shares summing to 1, got {self.base_split!r}"
            )
        for name in ("majority", "threshold", "s_easy", "s_hard"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)!r}")
        if self.s_hard > self.s_easy:
            raise ValueError("s_hard must not exceed s_easy: selection frequency falls with difficulty")
        for name in ("original_difficulty", "replication_difficulty"):
            ab = tuple(getattr(self, name))
            if len(ab) != 2 or min(ab) <= 0:
                raise ValueError(f"{name} must be two positive Beta parameters (a, b), got {ab!r}")
        object.__setattr__(self, "base_split", split)
        object.__setattr__(self, "original_difficulty", tuple(float(v) for v in self.original_difficulty))
        object.__setattr__(
            self, "replication_difficulty", tuple(float(v) for v in self.replication_difficulty)
        )

    def key(self) -> str:
        """A hash of the configuration (part of every cache key that depends on the world)."""
        return cache.key(asdict(self))

    @classmethod
    def from_dict(cls, values: dict | None) -> WorldConfig:
        """Build a config from a mapping (e.g. a chapter parameter), refusing unknown keys."""
        values = dict(values or {})
        unknown = sorted(set(values) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(
                f"unknown world parameter(s) {unknown}; valid: {sorted(cls.__dataclass_fields__)}"
            )
        return cls(**values)


# --- the world -------------------------------------------------------------------------------


@dataclass
class Replication:
    """One replication round: the observed frequencies it used and the three sampled test sets.

    ``annotators`` is ``None`` for the noise-free ablation (observed frequency = true frequency).
    ``round`` numbers the annotation round: 0 is the world's own, each other number an independent
    round of fresh votes. ``sets`` maps each strategy to indices into the world's examples;
    ``matched_substituted`` counts the MatchedFrequency images taken from a higher or a lower bin than
    their target (see :func:`sample_matched_frequency`). ``votes`` holds the round's votes on v1 and
    the pool (rows in that order; ``None`` for the noise-free ablation).
    """

    annotators: int | None
    v1_freq: np.ndarray
    pool_freq: np.ndarray
    sets: dict = field(default_factory=dict)
    matched_substituted: dict = field(default_factory=lambda: {"higher": 0, "lower": 0})
    round: int = 0
    votes: np.ndarray | None = field(default=None, repr=False)

    @property
    def matched_fallback(self) -> int:
        """MatchedFrequency images taken from a *lower* bin: every higher bin had run out (ours)."""
        return self.matched_substituted["lower"]


@dataclass
class World:
    """The rendered world: images, one row of metadata per example, and the named splits.

    Attributes
    ----------
    config : WorldConfig
    images : ndarray, shape (N, 16, 16), float32 in [0, 1]
    examples : pandas.DataFrame
        One row per image: ``base_id, label, d, s, split`` (``train``, ``v1``, ``pool``), the original
        round's ``s_hat_original`` (for train and v1), and the replication round's ``s_hat`` (v1 and
        pool; NaN for train).
    votes_original, votes_replication : ndarray of uint8
        Every annotator's vote: rows align with ``examples`` (all-zero rows where an image was not part
        of that round; see ``examples.split``).
    replication : Replication
        The noisy replication round and its three test sets.
    """

    config: WorldConfig
    images: np.ndarray
    examples: pd.DataFrame
    votes_original: np.ndarray
    votes_replication: np.ndarray
    replication: Replication
    candidates_original: pd.DataFrame = field(repr=False, default=None)

    @property
    def labels(self) -> np.ndarray:
        """Class of every example (rows of ``examples``)."""
        return self.examples["label"].to_numpy()

    def split_index(self, name: str) -> np.ndarray:
        """Return the indices of a split: ``train``, ``v1``, ``pool`` or a strategy name."""
        if name in STRATEGIES:
            return self.replication.sets[name]
        if name in ("train", "v1", "pool"):
            return np.flatnonzero(self.examples["split"].to_numpy() == name)
        raise ValueError(f"unknown split {name!r}; valid: train, v1, pool, {', '.join(STRATEGIES)}")

    @property
    def split_names(self) -> tuple:
        """Names of every split, the replicated sets last."""
        return ("train", "v1", "pool", *STRATEGIES)

    def replicate(self, annotators: int | None, round: int = 1) -> Replication:
        """Run the replication round again on the same v1 images and pool, with fresh votes.

        Parameters
        ----------
        annotators : int or None
            Votes per image; ``None`` uses the true selection frequencies (no annotation noise).
        round : int
            Which annotation round: every positive number is an independent round of new votes (and
            new sampling draws), reproducible from the world's seed; ``0`` repeats the world's own round
            (the same votes, hence the same sets when ``annotators`` equals the world's).

        Returns
        -------
        Replication
            The round's observed frequencies and the three sampled test sets.
        """
        if isinstance(round, bool) or not isinstance(round, (int, np.integer)) or round < 0:
            raise ValueError(f"round must be a non-negative integer, got {round!r}")
        return _replication_round(self, annotators, self.config.seed, int(round))[0]

    def base_disjoint_split(self, split: str, shares: ArrayLike, seed: int = 0) -> tuple[np.ndarray, ...]:
        """Split a split's images into parts that share no base digit, stratified by class.

        The world renders every base digit several times (rotated, blurred, …), so a split by *image*
        puts renders of one digit on both sides. Parts made here are disjoint in ``base_id``: a
        held-out part holds only digits the other parts never saw.

        Parameters
        ----------
        split : str
            The split to divide (``train``, ``v1``, ``pool`` or a strategy name).
        shares : sequence of float
            Positive shares of the split's base digits per part, summing to 1.
        seed : int
            Seed of the assignment of base digits to parts.

        Returns
        -------
        tuple of ndarray
            Indices into the world's examples, one array per part, in increasing order.
        """
        shares = np.asarray(shares, dtype=float)
        if shares.ndim != 1 or len(shares) < 2 or np.any(shares <= 0) or abs(shares.sum() - 1) > 1e-9:
            raise ValueError(
                f"shares must be two or more positive numbers summing to 1, got {shares.tolist()}"
            )
        index = self.split_index(split)
        base = self.examples["base_id"].to_numpy()[index]
        bases, first = np.unique(base, return_index=True)
        labels = self.examples["label"].to_numpy()[index][first]
        rng = np.random.default_rng(np.random.SeedSequence([self.config.seed, 7, int(seed)]))
        part_of_base = np.empty(len(bases), dtype=np.int64)
        bounds = np.cumsum(shares)[:-1]
        for c in np.unique(labels):
            members = rng.permutation(np.flatnonzero(labels == c))
            for p, chunk in enumerate(np.split(members, np.round(bounds * len(members)).astype(int))):
                part_of_base[chunk] = p
        part = part_of_base[np.searchsorted(bases, base)]
        return tuple(index[part == p] for p in range(len(shares)))


def _replication_round(world_like, annotators, seed, round_=0):
    cfg = world_like.config
    # round 0 keeps the stream the world's own round has always used, so the world's sets do not move
    rng = np.random.default_rng([seed, 2] if round_ == 0 else [seed, 2, round_])
    ex = world_like.examples
    v1 = np.flatnonzero(ex["split"].to_numpy() == "v1")
    pool = np.flatnonzero(ex["split"].to_numpy() == "pool")
    s = ex["s"].to_numpy()
    votes = None
    if annotators is None:
        v1_freq, pool_freq = s[v1], s[pool]
    else:
        votes = annotate(s[np.concatenate([v1, pool])], annotators, rng)
        freq = votes.mean(axis=1)
        v1_freq, pool_freq = freq[: len(v1)], freq[len(v1) :]
    labels = ex["label"].to_numpy()
    matched, substituted = sample_matched_frequency(
        v1_freq, labels[v1], pool_freq, labels[pool], cfg.per_class, rng
    )
    sets = {
        "matchedfrequency": pool[matched],
        "threshold0.7": pool[sample_threshold(pool_freq, labels[pool], cfg.per_class, cfg.threshold, rng)],
        "topimages": pool[sample_top_images(pool_freq, labels[pool], cfg.per_class, rng)],
    }
    return Replication(annotators, v1_freq, pool_freq, sets, substituted, round_, votes), votes, v1, pool


def build_world(config: WorldConfig | dict | None = None, progress: bool = False) -> World:
    """Render the world described by ``config`` (see the module docstring for the steps), or read it back.

    A world is rendered once per configuration, library source and numpy/pandas version; later calls (the
    next chapter, a lab) read it from the cache (``world/<key>.pkl`` under
    :func:`~shifteval.utils.cache.cache_dir`), each as a fresh object.

    Deterministic: the same config gives the same images, votes and splits, bit for bit.

    Parameters
    ----------
    config : WorldConfig, dict or None
        The world's knobs; a mapping (e.g. a chapter parameter) overrides fields of the default
        :class:`WorldConfig`, and ``None`` is the default world.
    progress : bool
        Unused: the world is built without reporting progress.

    Returns
    -------
    World
        The images, their metadata and votes, and the world's own replication round.

    Raises
    ------
    ValueError
        If ``config`` names an unknown or invalid knob, or the pool is too small for ``per_class``
        images per class (the Threshold strategy runs out first).

    Examples
    --------
    >>> w = build_world({"n_train": 100, "n_v1": 100, "n_pool": 600, "per_class": 5})
    >>> {name: len(w.split_index(name)) for name in w.split_names}  # doctest: +NORMALIZE_WHITESPACE
    {'train': 100, 'v1': 100, 'pool': 600, 'matchedfrequency': 50, 'threshold0.7': 50, 'topimages': 50}
    >>> w.images.shape, bool(w.examples["s_hat"].isna().sum() == 100)  # no ŝ for training images
    ((800, 16, 16), True)
    >>> again = build_world(w.config)
    >>> bool(np.array_equal(again.images, w.images) and again.config.key() == w.config.key())
    True
    """
    cfg = config if isinstance(config, WorldConfig) else WorldConfig.from_dict(config)
    key = cache.key(asdict(cfg), modules=["shifteval.datasets.world"], packages=["numpy", "pandas"])
    return cache.load_or_compute(cache.cache_dir() / "world" / f"{key}.pkl", lambda: _render_world(cfg),
                                 _load_world, _save_world)  # fmt: skip


# A rendered world is kept whole, as a pickle in the project's own cache: every chapter and lab of the book
# builds the same world, and reading it back takes 0.05 s where rendering it takes 2.6 s (default world).
def _save_world(path: Path, world: World) -> None:
    atomic_write_bytes(path, pickle.dumps(world, protocol=5))


def _load_world(path: Path) -> World:
    return pickle.loads(path.read_bytes())  # noqa: S301 (the project's own cache, written by _save_world)


def _render_world(cfg: WorldConfig) -> World:
    ss = np.random.SeedSequence(cfg.seed)
    rng_split, rng_orig, rng_rep, rng_render = (np.random.default_rng(s) for s in ss.spawn(4))
    bases, base_labels = base_digits(16)
    groups = split_bases(base_labels, cfg.base_split, rng_split)
    candidates = _original_candidates(cfg, groups, rng_orig)
    chosen = _kept_originals(cfg, candidates)
    pool = _replication_pool(cfg, groups, rng_rep)
    examples, votes_original = _examples(cfg, chosen, pool, base_labels)
    n = len(examples)
    images = render(bases[examples["base_id"].to_numpy()], examples["d"].to_numpy(), rng_render)
    no_round_yet = cast(Replication, None)  # the first replication round needs the world; set below
    world = World(
        cfg,
        images,
        examples,
        votes_original,
        np.zeros((n, cfg.annotators), np.uint8),
        no_round_yet,
        candidates,
    )
    replication, votes, v1, pool_idx = _replication_round(world, cfg.annotators, cfg.seed)
    world.replication = replication
    world.votes_replication[np.concatenate([v1, pool_idx])] = votes
    s_hat = np.full(n, np.nan)
    s_hat[v1], s_hat[pool_idx] = replication.v1_freq, replication.pool_freq
    examples["s_hat"] = s_hat
    world.candidates_original = candidates.drop(columns="votes")
    return world


def _original_candidates(cfg: WorldConfig, groups: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    """The original benchmark's candidates: from train and test bases, one annotation round, majority filter.

    Candidate batches are drawn until ``n_train`` (``n_v1``) candidates of the train (test) bases pass the
    filter; one row per candidate with its base, difficulty, votes, whether it is kept and its split.
    """
    originals = []
    for group, n_wanted, split in ((0, cfg.n_train, "train"), (1, cfg.n_v1, "v1")):
        base_ids = np.flatnonzero(groups == group)
        kept_total, frames = 0, []
        while kept_total < n_wanted:  # draw candidate batches until enough pass the filter
            m = 2 * (n_wanted - kept_total) + 50
            ids = rng.choice(base_ids, size=m)
            d = rng.beta(cfg.original_difficulty[0], cfg.original_difficulty[1], size=m)
            votes = annotate(selection_frequency(d, cfg.s_easy, cfg.s_hard), cfg.annotators, rng)
            keep = votes.mean(axis=1) >= cfg.majority - 1e-12
            frames.append(pd.DataFrame({"base_id": ids, "d": d, "kept": keep, "votes": list(votes)}))
            kept_total += int(keep.sum())
        cand = pd.concat(frames, ignore_index=True)
        cand["split"] = split
        originals.append(cand)
    return pd.concat(originals, ignore_index=True)


def _kept_originals(cfg: WorldConfig, candidates: pd.DataFrame) -> pd.DataFrame:
    """The training set and v1: the first ``n_train`` and ``n_v1`` kept candidates of their splits."""
    rows = []
    for split, n_wanted in (("train", cfg.n_train), ("v1", cfg.n_v1)):
        kept = candidates[(candidates.split == split) & candidates.kept]
        rows.append(kept.iloc[:n_wanted])
    return pd.concat(rows, ignore_index=True)


def _replication_pool(cfg: WorldConfig, groups: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    """The replication pool: new renders of the pool bases, with its own difficulty distribution."""
    pool_bases = np.flatnonzero(groups == 2)
    pool = pd.DataFrame({
        "base_id": rng.choice(pool_bases, size=cfg.n_pool),
        "d": rng.beta(cfg.replication_difficulty[0], cfg.replication_difficulty[1], size=cfg.n_pool),
    })  # fmt: skip
    pool["split"] = "pool"
    return pool


def _examples(
    cfg: WorldConfig, chosen: pd.DataFrame, pool: pd.DataFrame, base_labels: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray]:
    """Every example of the world (training set, v1, then the pool) and the original round's votes.

    One row per example: base, difficulty, split, label, true frequency ``s`` and the original round's
    observed frequency (NaN for the pool, which that round did not annotate; its votes are zeros).
    """
    examples = pd.concat(
        [chosen[["base_id", "d", "split"]], pool[["base_id", "d", "split"]]], ignore_index=True
    )
    examples["label"] = base_labels[examples["base_id"].to_numpy()]
    examples["s"] = selection_frequency(examples["d"].to_numpy(), cfg.s_easy, cfg.s_hard)
    votes_original = np.zeros((len(examples), cfg.annotators), dtype=np.uint8)
    votes_original[: len(chosen)] = np.stack(chosen["votes"].to_numpy())
    examples["s_hat_original"] = np.where(examples["split"] != "pool", votes_original.mean(axis=1), np.nan)
    return examples, votes_original
