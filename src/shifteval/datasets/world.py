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
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
from scipy import ndimage

from ..utils import cache

STRATEGIES = ("matchedfrequency", "threshold0.7", "topimages")
FREQUENCY_BINS = np.array([0.0, 0.2, 0.4, 0.6, 0.8])  # left edges; the last bin is [0.8, 1]
N_CLASSES = 10


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

    def __post_init__(self):
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


# --- the pieces ------------------------------------------------------------------------------


def base_digits(size: int = 16):
    """scikit-learn's 1,797 digits scaled to [0, 1] and upsampled to ``size``×``size`` (bilinear)."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = digits.images.astype(np.float32) / 16.0
    if size != 8:
        images = ndimage.zoom(images, (1, size / 8, size / 8), order=1)
    return np.clip(images, 0, 1).astype(np.float32), digits.target.astype(np.int64)


def split_bases(labels, shares, rng: np.random.Generator):
    """Assign each base digit to one of three groups, stratified by class (no base in two groups)."""
    groups = np.empty(len(labels), dtype=np.int64)
    bounds = np.cumsum(shares)[:-1]
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        cuts = np.round(bounds * len(idx)).astype(int)
        for g, part in enumerate(np.split(idx, cuts)):
            groups[part] = g
    return groups


def selection_frequency(d, s_easy: float = 0.95, s_hard: float = 0.15):
    """Return the true selection frequency ``s(d) = s_easy - (s_easy - s_hard) d``, falling with ``d``."""
    d = np.asarray(d, dtype=float)
    return s_easy - (s_easy - s_hard) * d


def annotate(s, n: int, rng: np.random.Generator):
    """``n`` Bernoulli(s) votes per image (Engstrom et al. 2020, §2): an (N, n) uint8 array."""
    s = np.asarray(s, dtype=float)
    return (rng.random((len(s), n)) < s[:, None]).astype(np.uint8)


def render(bases, d, rng: np.random.Generator):
    """Render one image per (base, difficulty): nuisances whose strength grows with ``d``.

    At ``d = 0`` the image is the clean base digit; at ``d = 1`` it may be rotated by up to 40°,
    rescaled by ±20%, shifted by up to 3 px, blurred (σ up to 1.1 px), lose up to 55% contrast, carry
    Gaussian noise (σ up to 0.35) and have a square of up to 7 px occluded (with probability ``d``).

    Parameters
    ----------
    bases : ndarray, shape (N, H, W)
        Base images in [0, 1].
    d : ndarray, shape (N,)
        Difficulties in [0, 1].
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (N, H, W), float32 in [0, 1]
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


def _largest_remainder(weights, total: int):
    """Integer counts proportional to ``weights`` that sum exactly to ``total``."""
    weights = np.asarray(weights, dtype=float)
    if weights.sum() == 0:
        weights = np.ones_like(weights)
    raw = weights / weights.sum() * total
    counts = np.floor(raw).astype(int)
    for i in np.argsort(-(raw - counts), kind="stable")[: total - counts.sum()]:
        counts[i] += 1
    return counts


def frequency_bin(freq):
    """Bin index 0-4 of selection frequencies in [0, .2), [.2, .4), [.4, .6), [.6, .8), [.8, 1]."""
    return np.clip(np.searchsorted(FREQUENCY_BINS, np.asarray(freq) + 1e-12, side="right") - 1, 0, 4)


def sample_matched_frequency(ref_freq, ref_labels, pool_freq, pool_labels, per_class: int, rng):
    """MatchedFrequency sampling (Recht et al. 2019, §4 and App. C.1.2).

    Per class, the 5-bin histogram of the reference (v1) images' observed selection frequencies sets
    how many of the class's ``per_class`` images come from each bin; images are drawn at random within
    a bin, and when a bin runs out the remainder is taken from the next higher bin (then the next).
    The paper does not say what happens when even the top bin runs out; here the remainder then comes
    from the nearest lower bin. Both kinds of substitution are counted so they can be reported.

    Parameters
    ----------
    ref_freq, ref_labels : array_like
        Observed selection frequencies and labels of the reference (v1) images.
    pool_freq, pool_labels : array_like
        The same for the candidate pool.
    per_class : int
        Images to sample per class.
    rng : numpy.random.Generator
        Source of the random draws within a bin.

    Returns
    -------
    indices : ndarray of int
        Indices into the pool, grouped by class.
    substituted : dict
        ``{"higher": n, "lower": m}``: images taken from a higher bin than their target because the
        target bin ran out (the paper's rule), and from a lower bin because every higher bin ran out
        (ours).
    """
    chosen, substituted = [], {"higher": 0, "lower": 0}
    ref_bins, pool_bins = frequency_bin(ref_freq), frequency_bin(pool_freq)
    for c in range(N_CLASSES):
        members = np.flatnonzero(pool_labels == c)
        if len(members) < per_class:
            raise ValueError(f"class {c}: only {len(members)} candidates in the pool, need {per_class}")
        targets = _largest_remainder(np.bincount(ref_bins[ref_labels == c], minlength=5), per_class)
        available = {b: list(rng.permutation(members[pool_bins[members] == b])) for b in range(5)}
        for b in range(5):
            need = int(targets[b])
            order = list(range(b, 5)) + list(range(b - 1, -1, -1))  # higher bins first, then lower
            for bb in order:
                if need == 0:
                    break
                take, available[bb] = available[bb][:need], available[bb][need:]
                chosen.extend(take)
                need -= len(take)
                if bb > b:
                    substituted["higher"] += len(take)
                elif bb < b:
                    substituted["lower"] += len(take)
    return np.asarray(chosen, dtype=np.int64), substituted


def sample_threshold(pool_freq, pool_labels, per_class: int, threshold: float, rng):
    """Threshold sampling (Recht et al. 2019, §4): per class, at random among ``ŝ >= threshold``."""
    chosen = []
    for c in range(N_CLASSES):
        eligible = np.flatnonzero((pool_labels == c) & (np.asarray(pool_freq) >= threshold - 1e-12))
        if len(eligible) < per_class:
            raise ValueError(
                f"class {c}: only {len(eligible)} candidates reach frequency {threshold}; "
                f"need {per_class} (raise n_pool or lower per_class)"
            )
        chosen.extend(rng.choice(eligible, size=per_class, replace=False))
    return np.asarray(chosen, dtype=np.int64)


def sample_top_images(pool_freq, pool_labels, per_class: int, rng):
    """TopImages sampling (Recht et al. 2019, §4): per class, the most frequently selected images.

    Ties in the observed frequency are broken at random.
    """
    chosen = []
    pool_freq = np.asarray(pool_freq)
    for c in range(N_CLASSES):
        members = rng.permutation(np.flatnonzero(pool_labels == c))
        if len(members) < per_class:
            raise ValueError(f"class {c}: only {len(members)} candidates in the pool, need {per_class}")
        order = np.argsort(-pool_freq[members], kind="stable")
        chosen.extend(members[order[:per_class]])
    return np.asarray(chosen, dtype=np.int64)


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

    def base_disjoint_split(self, split: str, shares, seed: int = 0) -> tuple:
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
    """Render the world described by ``config`` (see the module docstring for the steps).

    Deterministic: the same config gives the same images, votes and splits, bit for bit.
    """
    cfg = config if isinstance(config, WorldConfig) else WorldConfig.from_dict(config)
    ss = np.random.SeedSequence(cfg.seed)
    rng_split, rng_orig, rng_rep, rng_render = (np.random.default_rng(s) for s in ss.spawn(4))
    bases, base_labels = base_digits(16)
    groups = split_bases(base_labels, cfg.base_split, rng_split)

    # The original benchmark: candidates from train and test bases, one annotation round, majority filter.
    s_fn = lambda d: selection_frequency(d, cfg.s_easy, cfg.s_hard)  # noqa: E731
    originals = []
    for group, n_wanted, split in ((0, cfg.n_train, "train"), (1, cfg.n_v1, "v1")):
        base_ids = np.flatnonzero(groups == group)
        kept_total, frames = 0, []
        while kept_total < n_wanted:  # draw candidate batches until enough pass the filter
            m = 2 * (n_wanted - kept_total) + 50
            ids = rng_orig.choice(base_ids, size=m)
            d = rng_orig.beta(*cfg.original_difficulty, size=m)
            votes = annotate(s_fn(d), cfg.annotators, rng_orig)
            keep = votes.mean(axis=1) >= cfg.majority - 1e-12
            frames.append(pd.DataFrame({"base_id": ids, "d": d, "kept": keep, "votes": list(votes)}))
            kept_total += int(keep.sum())
        cand = pd.concat(frames, ignore_index=True)
        cand["split"] = split
        originals.append(cand)
    candidates = pd.concat(originals, ignore_index=True)
    rows = []
    for split, n_wanted in (("train", cfg.n_train), ("v1", cfg.n_v1)):
        kept = candidates[(candidates.split == split) & candidates.kept]
        rows.append(kept.iloc[:n_wanted])
    chosen = pd.concat(rows, ignore_index=True)

    # The replication pool: new renders of the pool bases, with its own difficulty distribution.
    pool_bases = np.flatnonzero(groups == 2)
    pool = pd.DataFrame({
        "base_id": rng_rep.choice(pool_bases, size=cfg.n_pool),
        "d": rng_rep.beta(*cfg.replication_difficulty, size=cfg.n_pool),
    })  # fmt: skip
    pool["split"] = "pool"

    examples = pd.concat(
        [chosen[["base_id", "d", "split"]], pool[["base_id", "d", "split"]]], ignore_index=True
    )
    examples["label"] = base_labels[examples["base_id"].to_numpy()]
    examples["s"] = s_fn(examples["d"].to_numpy())
    n = len(examples)
    votes_original = np.zeros((n, cfg.annotators), dtype=np.uint8)
    votes_original[: len(chosen)] = np.stack(chosen["votes"].to_numpy())
    examples["s_hat_original"] = np.where(examples["split"] != "pool", votes_original.mean(axis=1), np.nan)

    images = render(bases[examples["base_id"].to_numpy()], examples["d"].to_numpy(), rng_render)
    world = World(
        cfg, images, examples, votes_original, np.zeros((n, cfg.annotators), np.uint8), None, candidates
    )
    replication, votes, v1, pool_idx = _replication_round(world, cfg.annotators, cfg.seed)
    world.replication = replication
    world.votes_replication[np.concatenate([v1, pool_idx])] = votes
    s_hat = np.full(n, np.nan)
    s_hat[v1], s_hat[pool_idx] = replication.v1_freq, replication.pool_freq
    examples["s_hat"] = s_hat
    world.candidates_original = candidates.drop(columns="votes")
    return world


def frequency_summary(world: World, replication: Replication | None = None) -> dict:
    """Mean observed and true selection frequency of v1 and each replicated set.

    Observed frequencies are those of the given replication round (the world's own by default),
    which annotates v1 and the pool together, as Recht et al. did.
    """
    rep = replication or world.replication
    s = world.examples["s"].to_numpy()
    v1 = world.split_index("v1")
    pool = world.split_index("pool")
    pos = np.full(len(s), -1)
    pos[pool] = np.arange(len(pool))
    out = {"v1": {"observed": float(rep.v1_freq.mean()), "true": float(s[v1].mean())}}
    for name, idx in rep.sets.items():
        out[name] = {"observed": float(rep.pool_freq[pos[idx]].mean()), "true": float(s[idx].mean())}
    return out


def size_summary(world: World) -> dict:
    """Size of every split, the annotators per image and both pools' difficulty distributions."""
    cfg = world.config
    return {
        "training images": len(world.split_index("train")),
        "original test set (v1)": len(world.split_index("v1")),
        "replication candidate pool": len(world.split_index("pool")),
        **{f"replicated set: {s}": len(world.split_index(s)) for s in STRATEGIES},
        "annotators per image": cfg.annotators,
        "original pool difficulty": f"Beta{cfg.original_difficulty}",
        "replication pool difficulty": f"Beta{cfg.replication_difficulty}",
    }


def difficulty_summary(world: World) -> dict:
    """Mean latent difficulty of the original candidates, v1, the replication pool and each replicated set."""
    d = world.examples["d"]
    out = {"original candidates": float(world.candidates_original["d"].mean())}
    for name in ("v1", "pool", *STRATEGIES):
        out[name] = float(d.loc[world.split_index(name)].mean())
    return out


def frequency_table(summary: dict) -> pd.DataFrame:
    """:func:`frequency_summary` as a table (rows: sets; columns: mean observed and true frequency)."""
    table = pd.DataFrame(summary).T.rename(columns={"observed": "mean observed ŝ", "true": "mean true s"})
    return table.round(3)
