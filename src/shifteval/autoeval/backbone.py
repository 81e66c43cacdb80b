"""Backbone preparation and caching (I/O only).

Train or load a classifier and the OOD detector, and compute their outputs on the training set, on
every meta-set and on every test pool.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..nets import torch_module
from ..utils import cache as caching
from .detector import train_detector
from .estimators import AutoEval, fit
from .metadataset import meta_dataset
from .network import Outputs, compute_outputs, feature_net, train_feature_net
from .streams import stream_seed

if TYPE_CHECKING:
    import torch

    from .pools import Pools


@dataclass
class Backbone:
    """A trained feature network with its outputs on the training set and on every meta-set.

    ``detector`` is the OOD detector whose energies the outputs carry (``None`` without outlier exposure).
    """

    arch: str
    model: torch.nn.Module
    train: Outputs
    meta_train: list
    meta_train_labels: list
    meta_val: list
    meta_val_labels: list
    detector: torch.nn.Module | None = None
    val_pool: Outputs | None = None


def _pack(outputs: list) -> dict:
    arrays = {
        "lengths": np.array([len(o.logits) for o in outputs]),
        "logits": np.concatenate([o.logits for o in outputs]).astype(np.float32),
        "features": np.concatenate([o.features for o in outputs]).astype(np.float32),
        "rotation": np.concatenate([o.rotation_correct for o in outputs]).astype(np.float32),
    }
    if all(o.energy is not None for o in outputs):
        arrays["energy"] = np.concatenate([o.energy for o in outputs])
    return arrays


def _unpack(z, prefix: str) -> list:
    bounds = np.cumsum(np.r_[0, z[f"{prefix}_lengths"]])
    energies = z[f"{prefix}_energy"] if f"{prefix}_energy" in z else None
    return [
        Outputs(z[f"{prefix}_logits"][a:b].astype(np.float64), z[f"{prefix}_features"][a:b].astype(np.float64),
                z[f"{prefix}_rotation"][a:b].astype(np.float64), None if energies is None else energies[a:b])
        for a, b in zip(bounds[:-1], bounds[1:], strict=False)
    ]  # fmt: skip


def _split(values, lengths):
    bounds = np.cumsum(np.r_[0, lengths])
    return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=False)]


def state_bytes(model: torch.nn.Module) -> np.ndarray:
    """A torch model's weights as bytes (``torch.save`` of its state dict), for caches and cache keys.

    Tensors are saved in the standard (row-major) layout, so the bytes do not depend on the layout the
    weights are stored in (:func:`shifteval.nets.channels_last`).

    Parameters
    ----------
    model : torch.nn.Module
        Any torch model.

    Returns
    -------
    ndarray of uint8
        The serialised state dict; ``torch.load`` of its bytes restores the weights.

    Examples
    --------
    >>> import io, torch
    >>> m = torch.nn.Linear(2, 1)
    >>> data = state_bytes(m)
    >>> state = torch.load(io.BytesIO(data.tobytes()), weights_only=True)
    >>> data.dtype.name, sorted(state), bool(torch.equal(state["weight"], m.weight))
    ('uint8', ['bias', 'weight'], True)
    >>> conv = torch.nn.Conv2d(1, 3, 3)
    >>> before = state_bytes(conv)
    >>> bool((state_bytes(conv.to(memory_format=torch.channels_last)) == before).all())
    True
    """
    buf = io.BytesIO()
    torch = torch_module()
    state = model.state_dict()
    standard = type(state)((k, v.clone(memory_format=torch.contiguous_format)) for k, v in state.items())
    standard._metadata = getattr(state, "_metadata", None)  # type: ignore[attr-defined]  # module versions
    torch.save(standard, buf)
    return np.frombuffer(buf.getvalue(), dtype=np.uint8)


def _load_state(model, data: np.ndarray):
    model.load_state_dict(torch_module().load(io.BytesIO(data.tobytes()), weights_only=True))
    return model.eval()


def prepare_backbone(arch: str, x_train: ArrayLike, y_train: ArrayLike, meta_pool: tuple,
                     meta_val_pool: tuple, *, epochs: int, n_sets: int, n_val_sets: int, set_size: int,
                     seed: int = 0, outliers: ArrayLike | None = None, detector: torch.nn.Module | None = None,
                     detector_epochs: int = 10, detector_lr: float = 1e-2, cache: str | Path | None = None,
                     progress: bool = True) -> Backbone:  # fmt: skip
    """Train a feature network and compute its outputs on the training set and on every meta-set.

    Training meta-sets come from ``meta_pool``, validation meta-sets from ``meta_val_pool`` (disjoint
    pools, separate streams). The detector's energies ride along: with ``detector`` (a network trained
    before, e.g. for another backbone: one detector for all backbones, as in the paper's §4.2) it is used
    as given; otherwise, with ``outliers``, it is fine-tuned from this network with outlier exposure
    (:func:`shifteval.autoeval.detector.train_detector`). With ``cache`` (a folder), weights and outputs are
    stored under a key of every input, of the code and of torch's thread count, and reused.

    Parameters
    ----------
    arch : str
        :func:`~shifteval.autoeval.network.feature_net` architecture.
    x_train, y_train : array_like, shapes (N, S, S) and (N,)
        The classifier's training set.
    meta_pool, meta_val_pool : (images, labels)
        Pools of the training and validation meta-sets.
    epochs : int
        Training epochs.
    n_sets, n_val_sets, set_size : int
        Numbers of training and validation meta-sets, and images per meta-set (validation meta-sets: at
        most the pool's size).
    seed : int
        The chapter's seed (streams ``classifier``, ``detector``, ``meta_train``, ``meta_val``).
    outliers : array_like, shape (M, S, S), optional
        Auxiliary outliers for outlier exposure.
    detector : torch.nn.Module, optional
        A detector trained before, used as given.
    detector_epochs : int
        Outlier-exposure epochs.
    detector_lr : float
        Outlier-exposure learning rate.
    cache : path, optional
        Folder of cached backbones.
    progress : bool
        Show progress bars.

    Returns
    -------
    Backbone
        ``val_pool`` is ``None`` (set by :func:`prepare`).

    Raises
    ------
    ValueError
        For malformed images or meta-set sizes (:func:`~shifteval.autoeval.metadataset.meta_dataset`).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> def split(n):  # n random 8×8 "digits"
    ...     return rng.random((n, 8, 8)).astype(np.float32), np.arange(n) % 10
    >>> fit_set, meta, val = split(16), split(12), split(12)
    >>> kw = dict(epochs=1, n_sets=2, n_val_sets=2, set_size=6, progress=False)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     bb = prepare_backbone("cnn", *fit_set, meta, val, cache=d, **kw)
    ...     again = prepare_backbone("cnn", *fit_set, meta, val, cache=d, **kw)  # read from the cache
    >>> len(bb.meta_train), bb.meta_val[0].logits.shape, bb.train.features.shape
    (2, (6, 10), (16, 64))
    >>> bool((state_bytes(again.model) == state_bytes(bb.model)).all())
    True
    """
    (xm, ym), (xv, yv) = meta_pool, meta_val_pool
    key = caching.key(
        {"arch": arch, "epochs": epochs, "n_sets": n_sets, "n_val_sets": n_val_sets, "set_size": set_size,
         "seed": seed, "detector_epochs": detector_epochs, "detector_lr": detector_lr,
         "data": [x_train, y_train, xm, ym, xv, yv, np.zeros(0) if outliers is None else outliers],
         "detector": None if detector is None else state_bytes(detector),
         "threads": torch_module().get_num_threads()},  # torch's sums, so the trained weights, depend on it
        modules=["shifteval.autoeval.backbone"],  # and everything it imports (networks, detector, meta-sets)
        packages=["numpy", "torch", "scikit-learn"],
    )  # fmt: skip
    path = Path(cache) / f"{arch}-{key}.npz" if cache else None
    if path is not None and path.is_file():
        return _load_backbone(path, arch, detector)
    model, detector, detector_arch = _train_networks(
        arch, x_train, y_train, epochs, seed, outliers, detector, detector_epochs, detector_lr, progress
    )
    train = compute_outputs(model, x_train, rotation=True, detector=detector)
    meta, meta_labels, val, val_labels = _meta_set_outputs(
        arch, model, meta_pool, meta_val_pool, n_sets, n_val_sets, set_size, seed, progress
    )
    backbone = Backbone(arch, model, train, meta, meta_labels, val, val_labels, detector)
    if path is not None:
        _save_backbone(path, backbone, detector_arch)
    if detector is not None:
        setattr(detector, "arch", detector_arch)  # noqa: B010 (an attribute torch's types do not declare)
    return backbone


def _load_backbone(path: Path, arch: str, detector: torch.nn.Module | None) -> Backbone:
    """A backbone read from its cache file; its stored detector unless ``detector`` is given."""
    with np.load(path, allow_pickle=False) as z:
        model = _load_state(feature_net(arch), z["state"])
        if detector is None and "detector_state" in z:
            detector = _load_state(feature_net(z["detector_arch"].item()), z["detector_state"])
        return Backbone(arch, model, _unpack(z, "train")[0], _unpack(z, "meta"),
                        _split(z["meta_labels"], z["meta_lengths"]), _unpack(z, "val"),
                        _split(z["val_labels"], z["val_lengths"]), detector)  # fmt: skip


def _train_networks(arch, x_train, y_train, epochs, seed, outliers, detector, detector_epochs, detector_lr,
                    progress) -> tuple:  # fmt: skip
    """``(model, detector, detector_arch)``: the trained classifier and its OOD detector.

    The detector is ``detector`` when given, else fine-tuned from the classifier with outlier exposure when
    there are ``outliers``, else None.
    """
    from tqdm import tqdm

    bar = tqdm(total=epochs, desc=f"training {arch}", unit="epoch", disable=not progress)
    model = train_feature_net(x_train, y_train, arch=arch, epochs=epochs, seed=stream_seed(seed, "classifier", arch),
                              progress=bar)  # fmt: skip
    bar.close()
    detector_arch = arch
    if detector is None and outliers is not None:
        bar = tqdm(total=detector_epochs, desc=f"outlier exposure of the {arch} detector", unit="epoch",
                   disable=not progress)  # fmt: skip
        detector = train_detector(model, x_train, y_train, outliers, epochs=detector_epochs, lr=detector_lr,
                                  seed=stream_seed(seed, "detector"), progress=bar)  # fmt: skip
        bar.close()
    elif detector is not None:
        detector_arch = getattr(detector, "arch", arch)
    return model, detector, detector_arch


def _meta_set_outputs(arch, model, meta_pool, meta_val_pool, n_sets, n_val_sets, set_size, seed,
                      progress) -> tuple:  # fmt: skip
    """``(meta, meta_labels, val, val_labels)``: the classifier's outputs on every meta-set, with its labels.

    Training meta-sets are drawn from ``meta_pool`` (stream ``meta_train``), validation meta-sets from
    ``meta_val_pool`` (stream ``meta_val``, at most the pool's size each).
    """
    from tqdm import tqdm

    (xm, ym), (xv, yv) = meta_pool, meta_val_pool
    meta: list[Outputs] = []
    meta_labels: list[np.ndarray] = []
    val: list[Outputs] = []
    val_labels: list[np.ndarray] = []
    sets = [(meta, meta_labels, s) for s in meta_dataset(xm, ym, n_sets, set_size, seed, "meta_train")]
    sets += [
        (val, val_labels, s)
        for s in meta_dataset(xv, yv, n_val_sets, min(set_size, len(xv)), seed, "meta_val")
    ]
    for outs, labels, (x, y, _) in tqdm(
        sets, desc=f"meta-sets through {arch}", unit="set", disable=not progress
    ):
        outs.append(compute_outputs(model, x, rotation=True))
        labels.append(y)
    return meta, meta_labels, val, val_labels


def extend_meta_sets(
    backbone: Backbone,
    meta_pool: tuple,
    n_sets: int,
    seed: int = 0,
    progress: bool = False,
    rotation: bool = False,
) -> tuple[Backbone, float]:
    """The backbone with ``n_sets`` training meta-sets, and what 100 more meta-sets cost.

    Zhu et al. learn the regression from 800 meta-sets (§4.1; the meta-dataset of §3.3). Meta-set ``i``
    has its own stream (:func:`~shifteval.autoeval.metadataset.meta_dataset`), so the backbone's meta-sets
    (cached with it by :func:`prepare_backbone`) are kept as they are and sets ``len(meta_train)`` ..
    ``n_sets − 1`` are added: drawn from ``meta_pool``, transformed and passed through the classifier,
    exactly as :func:`prepare_backbone` would have made them. Their logits and features do not depend on
    the batch they are computed in; the rotation head's answers, which only the rotation baseline reads,
    are left out unless ``rotation`` asks for them (half the forward passes: AutoEval's regressors, which
    :func:`~shifteval.autoeval.protocol.meta_set_sweep` refits, read features only).

    Parameters
    ----------
    backbone : Backbone
        From :func:`prepare_backbone` (or :func:`prepare`).
    meta_pool : (images, labels)
        The pool its training meta-sets were drawn from (``pools.meta``).
    n_sets : int
        Training meta-sets wanted, at least 2; the meta-sets' size is the backbone's.
    seed : int
        The chapter's seed (stream ``meta_train``), as given to :func:`prepare_backbone`.
    progress : bool
        Show a progress bar.
    rotation : bool
        Also the rotation head's answers on the added meta-sets (without them, the returned backbone's
        rotation baseline cannot be fitted: :func:`~shifteval.autoeval.estimators.fit` gives it NaN).

    Returns
    -------
    backbone : Backbone
        A copy with ``max(n_sets, len(backbone.meta_train))`` training meta-sets (``backbone`` itself when
        none is added).
    seconds_per_100 : float
        Wall-clock seconds to draw, transform and pass 100 added meta-sets (NaN when none is added).

    Raises
    ------
    ValueError
        For ``n_sets < 2`` or a pool smaller than a meta-set.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> def split(n):  # n random 8×8 "digits"
    ...     return rng.random((n, 8, 8)).astype(np.float32), np.arange(n) % 10
    >>> fit_set, meta, val = split(16), split(12), split(12)
    >>> bb = prepare_backbone("cnn", *fit_set, meta, val, epochs=1, n_sets=2, n_val_sets=2, set_size=6,
    ...                       progress=False)
    >>> more, seconds = extend_meta_sets(bb, meta, 5)
    >>> len(more.meta_train), len(more.meta_train_labels), more.meta_train[1] is bb.meta_train[1], seconds > 0
    (5, 5, True, True)
    >>> extend_meta_sets(bb, meta, 2)[0] is bb
    True
    """
    from tqdm import tqdm

    have = len(backbone.meta_train)
    if n_sets < 2:
        raise ValueError(f"n_sets must be at least 2 (meta-sets to fit a regression on), got {n_sets}")
    if n_sets <= have:
        return backbone, float("nan")
    set_size = len(backbone.meta_train[0].logits)
    meta, labels = list(backbone.meta_train), list(backbone.meta_train_labels)
    (images, pool_labels), start = meta_pool, time.perf_counter()
    sets = meta_dataset(images, pool_labels, n_sets=n_sets, set_size=set_size, seed=seed, start=have)
    for x, y, _ in tqdm(sets, total=n_sets - have, desc="more meta-sets", unit="set", disable=not progress):
        meta.append(compute_outputs(backbone.model, x, rotation=rotation))
        labels.append(y)
    seconds = time.perf_counter() - start
    return replace(backbone, meta_train=meta, meta_train_labels=labels), 100 * seconds / (n_sets - have)


def _save_backbone(path: Path, backbone: Backbone, detector_arch: str) -> None:
    """Write a backbone's weights, its detector's and its outputs to its cache file (atomically)."""
    from ..utils.io import atomic_write_bytes

    arrays = {"state": state_bytes(backbone.model)}
    if backbone.detector is not None:
        arrays["detector_state"] = state_bytes(backbone.detector)
        arrays["detector_arch"] = np.array(detector_arch)
    for prefix, outs in (
        ("train", [backbone.train]),
        ("meta", backbone.meta_train),
        ("val", backbone.meta_val),
    ):
        arrays.update({f"{prefix}_{k}": v for k, v in _pack(outs).items()})
    arrays["meta_labels"] = np.concatenate(backbone.meta_train_labels)
    arrays["val_labels"] = np.concatenate(backbone.meta_val_labels)
    out = io.BytesIO()
    np.savez(out, **arrays)  # type: ignore[arg-type]  # numpy's stub: **arrays could hold allow_pickle
    atomic_write_bytes(path, out.getvalue())


def prepare(arch: str, epochs: int, pools: Pools, images: dict, *, n_sets: int, n_val_sets: int, set_size: int,
            seed: int = 0, outliers: ArrayLike | None = None, detector: torch.nn.Module | None = None,
            detector_epochs: int = 10, detector_lr: float = 1e-2,
            cache: str | Path | None = None) -> tuple[Backbone, AutoEval, dict]:  # fmt: skip
    """Train a backbone (:func:`prepare_backbone`), fit AutoEval and the baselines, compute all outputs.

    The backbone learns ``pools.fit``; the validation pool is DoC/ATC's held-out ID data; outputs are
    computed on every image set.

    Parameters
    ----------
    arch : str
        :func:`~shifteval.autoeval.network.feature_net` architecture.
    epochs : int
        Training epochs.
    pools : Pools
        From :func:`shifteval.autoeval.pools.training_pools`.
    images : dict of str -> ndarray (N, S, S)
        The test image sets.
    n_sets, n_val_sets, set_size, seed, outliers, detector, detector_epochs, detector_lr, cache
        As in :func:`prepare_backbone`.

    Returns
    -------
    backbone : Backbone
    estimator : AutoEval
    outputs : dict of str -> Outputs
        ``images``' outputs (the validation pool's are ``backbone.val_pool``).

    Raises
    ------
    ValueError
        As :func:`prepare_backbone` and :func:`shifteval.autoeval.estimators.fit`.

    Examples
    --------
    Fitting AutoEval's five-layer MLP for every candidate penalty takes seconds even on a toy setup, so
    the call is not run here:

    >>> from shifteval.autoeval.pools import Pools
    >>> rng = np.random.default_rng(0)
    >>> def split(n):  # n random 8×8 "digits"
    ...     return rng.random((n, 8, 8)).astype(np.float32), np.arange(n) % 10
    >>> pools, tests = Pools(split(16), split(12), split(12)), {"v1": split(6)[0]}
    >>> bb, est, outs = prepare("cnn", 1, pools, tests, n_sets=2, n_val_sets=2, set_size=6)  # doctest: +SKIP
    >>> sorted(outs), outs["v1"].logits.shape, bb.val_pool.logits.shape  # doctest: +SKIP
    (['v1'], (6, 10), (12, 10))
    """
    bb = prepare_backbone(arch, *pools.fit, pools.meta, pools.val, epochs=epochs, n_sets=n_sets,
                          n_val_sets=n_val_sets, set_size=set_size, seed=seed, outliers=outliers,
                          detector=detector, detector_epochs=detector_epochs, detector_lr=detector_lr,
                          cache=cache)  # fmt: skip
    bb.val_pool = val_out = compute_outputs(bb.model, pools.val[0], rotation=True, detector=bb.detector)
    est = fit(bb.meta_train, bb.meta_train_labels, bb.train, val_out, pools.val[1],
              seed=stream_seed(seed, "regressor"), val_meta=(bb.meta_val, bb.meta_val_labels))  # fmt: skip
    outs = {
        name: compute_outputs(bb.model, x, rotation=True, detector=bb.detector) for name, x in images.items()
    }
    return bb, est, outs
