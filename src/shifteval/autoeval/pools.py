"""Held-out pools of the evaluation protocol (§4.1, §4.4).

The classifier's training images and its two held-out pools, the ID sources (optionally perturbed) and
the unseen test-time transformations, drawn from the labeled splits of
:mod:`shifteval.datasets.splits`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from ..datasets.ood import OOD_SOURCES, ood_images, ood_images_from_files
from ..datasets.splits import WORLD, Data
from .metadataset import cutout, shear_contrast
from .shifts import WORLD_TABLE, SeverityTable, check_table
from .streams import stream, stream_seed


@dataclass
class Pools:
    """The classifier's training images and two held-out pools, with their counted base-digit overlap.

    ``meta`` feeds the training meta-sets, ``val`` the validation meta-sets and DoC/ATC's held-out data.
    ``groups`` holds, per pool (``fit``, ``meta``, ``val``), the base digit of each image (real data: one
    group per distinct image), for standard errors that treat renders of one digit as one draw.
    """

    fit: tuple[np.ndarray, np.ndarray]
    meta: tuple[np.ndarray, np.ndarray]
    val: tuple[np.ndarray, np.ndarray]
    overlap: dict = field(default_factory=dict)
    groups: dict = field(default_factory=dict)


def training_pools(data: Data, holdout_fraction: float = 0.3, seed: int = 0) -> Pools:
    """Split the training split into the classifier's images and two held-out pools.

    For the replication world the split is by *base digit* (:meth:`World.base_disjoint_split`): the world
    renders each base digit several times, so an image split would hold out renders of digits the
    classifier trained on. For real data (one image per digit) the split is by image. ``overlap`` counts,
    per pool, the base digits (real data: identical images) it shares with the classifier's images.

    Parameters
    ----------
    data : Data
        From :func:`shifteval.datasets.splits.load_data`; its ``train`` split is divided.
    holdout_fraction : float
        In (0, 1); split equally between ``meta`` and ``val``.
    seed : int
        The chapter's seed (stream ``split``).

    Returns
    -------
    Pools

    Raises
    ------
    ValueError
        If ``holdout_fraction`` is not in (0, 1).

    Examples
    --------
    >>> x = np.random.default_rng(0).random((20, 8, 8)).astype(np.float32)
    >>> pools = training_pools(Data({"train": (x, np.arange(20) % 10)}, "toy"))
    >>> len(pools.fit[0]), len(pools.meta[0]), len(pools.val[0]), pools.overlap
    (14, 3, 3, {'meta': 0, 'validation': 0})
    >>> {k: len(g) for k, g in pools.groups.items()}
    {'fit': 14, 'meta': 3, 'val': 3}
    """
    if not 0 < holdout_fraction < 1:
        raise ValueError(f"holdout_fraction must be in (0, 1), got {holdout_fraction}")
    x, y = data.splits["train"]
    shares = [1 - holdout_fraction, holdout_fraction / 2, holdout_fraction / 2]
    if data.world is not None:
        w, train_index = data.world, cast(np.ndarray, data.train_index)  # set with the world
        parts = w.base_disjoint_split("train", shares, seed=stream_seed(seed, "split"))
        position = {int(g): i for i, g in enumerate(train_index)}
        local = [np.array([position[int(g)] for g in p]) for p in parts]
        base = w.examples["base_id"].to_numpy()[train_index]
    else:
        order = stream(seed, "split").permutation(len(x))
        n_fit, n_meta = int(round(shares[0] * len(x))), int(round(shares[1] * len(x)))
        local = [np.sort(p) for p in np.split(order, [n_fit, n_fit + n_meta])]
        base = _image_groups(x)
    fit_idx, meta_idx, val_idx = local
    fit_bases = set(base[fit_idx].tolist())
    overlap = {
        "meta": len(set(base[meta_idx].tolist()) & fit_bases),
        "validation": len(set(base[val_idx].tolist()) & fit_bases),
    }
    groups = {"fit": base[fit_idx], "meta": base[meta_idx], "val": base[val_idx]}
    return Pools(
        (x[fit_idx], y[fit_idx]), (x[meta_idx], y[meta_idx]), (x[val_idx], y[val_idx]), overlap, groups
    )


def _image_groups(images: np.ndarray) -> np.ndarray:
    """One group label per distinct image (identical images share one), for data without base digits."""
    first: dict[bytes, int] = {}
    return np.array([first.setdefault(np.ascontiguousarray(x).tobytes(), len(first)) for x in images], int)


def source_groups(data: Data, name: str) -> np.ndarray:
    """The group of each image of an ID source: its base digit (real data: one group per distinct image).

    The replication world renders each base digit many times (the default world's v1 holds 10,000 renders of
    360 digits), so its images are not independent draws; a standard error over them clusters by digit.

    Parameters
    ----------
    data : Data
        From :func:`shifteval.datasets.splits.load_data`.
    name : str
        An ID source as :func:`id_source` reads it (a perturbation keeps each image's digit).

    Returns
    -------
    ndarray of int, one per image of the source

    Raises
    ------
    ValueError
        For an unknown split.

    Examples
    --------
    >>> x = np.zeros((3, 4, 4), np.float32); x[2] += 1
    >>> source_groups(Data({"test": (x, np.arange(3))}, "toy"), "test+fog@3").tolist()  # two equal images
    [0, 0, 1]
    """
    split = name.partition("+")[0]
    if split not in data.splits:
        raise ValueError(f"ID source {name!r}: no split {split!r}; splits: {', '.join(data.splits)}")
    if data.world is None:
        return _image_groups(data.splits[split][0])
    return data.world.examples["base_id"].to_numpy()[data.world.split_index(split)]


def id_source(
    splits: dict, name: str, seed: int = 0, severity: SeverityTable | None = None, dataset: str = WORLD
) -> tuple[np.ndarray, np.ndarray]:
    """Images and labels of an ID source.

    Parameters
    ----------
    splits : dict of str -> (images, labels)
        As :attr:`shifteval.datasets.splits.Data.splits`.
    name : str
        A split (``v1``, ``matchedfrequency``, ``test``, ...), optionally perturbed with
        ``+<perturbation>@<level>`` (e.g. ``v1+fog@3``, :mod:`shifteval.corruptions`).
    seed : int
        The chapter's seed (the perturbation's stream).
    severity : SeverityTable, optional
        The perturbations' strengths (default :data:`~shifteval.autoeval.shifts.WORLD_TABLE`).
    dataset : str
        What the splits are (:attr:`shifteval.datasets.splits.Data.dataset`); a perturbed source needs a
        table made for it.

    Returns
    -------
    images : ndarray of float32
    labels : ndarray

    Raises
    ------
    ValueError
        For an unknown split, a malformed perturbation, or a severity table made for other data.

    Examples
    --------
    >>> x = np.random.default_rng(0).random((3, 16, 16)).astype(np.float32)
    >>> images, labels = id_source({"v1": (x, np.arange(3))}, "v1+fog@3")
    >>> images.shape, bool((images != x).any()), labels.tolist()
    ((3, 16, 16), True, [0, 1, 2])
    """
    from .. import corruptions

    base, _, pert = name.partition("+")
    if base not in splits:
        raise ValueError(f"ID source {name!r}: no split {base!r}; splits: {', '.join(splits)}")
    images, labels = splits[base]
    if pert:
        pname, _, level = pert.partition("@")
        if not level.isdigit():
            raise ValueError(
                f"ID source {name!r}: write a perturbation as '+<name>@<level>', e.g. 'v1+fog@3'"
            )
        table = WORLD_TABLE if severity is None else severity
        check_table(table, dataset)
        images = corruptions.corrupt(
            images, pname, int(level), stream_seed(seed, "id_perturbation", name), table.strengths
        )
    return np.asarray(images, np.float32), labels


def unseen_transforms(images: ArrayLike, base: str, seed: int = 0) -> dict:
    """The §4.4 test sets with transformations absent from the meta-dataset.

    ``<base>-A (cutout)`` and ``<base>-B (shear + contrast)``, each with its own stream.

    Parameters
    ----------
    images : array_like, shape (N, H, W)
        The base set's images.
    base : str
        Its name, the prefix of the returned names.
    seed : int
        The chapter's seed (stream ``unseen``).

    Returns
    -------
    dict of str -> ndarray of float32 (N, H, W)

    Examples
    --------
    >>> sets = unseen_transforms(np.random.default_rng(0).random((3, 16, 16)), "v1")
    >>> sorted(sets), sets["v1-A (cutout)"].shape
    (['v1-A (cutout)', 'v1-B (shear + contrast)'], (3, 16, 16))
    """
    return {
        f"{base}-A (cutout)": cutout(images, stream(seed, "unseen", "cutout")),
        f"{base}-B (shear + contrast)": shear_contrast(images, stream(seed, "unseen", "shear")),
    }


def evaluation_sources(
    splits: dict,
    id_names: Sequence[str],
    ood_names: Sequence[str],
    n_ood: int,
    side: int,
    seed: int = 0,
    ood_dirs: dict | None = None,
    severity: SeverityTable | None = None,
    dataset: str = WORLD,
) -> tuple[dict, dict]:
    """The ID and OOD sources the test sets are mixed from (§4.1).

    Parameters
    ----------
    splits : dict of str -> (images, labels)
        As :attr:`shifteval.datasets.splits.Data.splits`.
    id_names : sequence of str
        ID sources, each as :func:`id_source` reads it (``v1``, ``v1+fog@3``, ...).
    ood_names : sequence of str
        Synthetic OOD sources, from :data:`shifteval.datasets.ood.OOD_SOURCES`.
    n_ood : int
        Images per OOD source.
    side : int
        The classifier's image side in pixels (OOD images are made or resized to it).
    seed : int
        The chapter's seed; every source has its own stream (``ood_source``, the source's name).
    ood_dirs : dict of str -> path, optional
        Real OOD sources: dataset name (``fashion-mnist``, ``mnist``) -> folder of its idx files, read by
        :func:`shifteval.datasets.ood.ood_images_from_files`; they follow the synthetic ones.
    severity, dataset
        As in :func:`id_source`.

    Returns
    -------
    id_data : dict of str -> (images, labels)
    ood_data : dict of str -> ndarray of float32 (n_ood, side, side)

    Raises
    ------
    ValueError
        For an unknown synthetic OOD source (the message lists the valid ones) or ID source, or a severity
        table made for other data.

    Examples
    --------
    >>> x = np.random.default_rng(0).random((3, 16, 16)).astype(np.float32)
    >>> id_data, ood_data = evaluation_sources({"v1": (x, np.arange(3))}, ["v1"], ["textures"], 4, 16)
    >>> list(id_data), ood_data["textures"].shape
    (['v1'], (4, 16, 16))
    >>> evaluation_sources({"v1": (x, np.arange(3))}, ["v1"], ["faces"], 4, 16)
    Traceback (most recent call last):
    ...
    ValueError: unknown OOD source(s) ['faces']; valid: natural_patches, letters, textures
    """
    unknown = sorted(set(ood_names) - set(OOD_SOURCES))
    if unknown:
        raise ValueError(f"unknown OOD source(s) {unknown}; valid: {', '.join(OOD_SOURCES)}")
    id_data = {name: id_source(splits, name, seed, severity, dataset) for name in id_names}
    ood_data = {s: ood_images(s, n_ood, side, stream(seed, "ood_source", s)) for s in ood_names}
    ood_data |= {
        s: ood_images_from_files(s, folder, n_ood, side, stream(seed, "ood_source", s))
        for s, folder in (ood_dirs or {}).items()
    }
    return id_data, ood_data
