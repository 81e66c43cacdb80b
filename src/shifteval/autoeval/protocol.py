"""The evaluation protocol (§4).

Data and held-out pools, test sets mixed from ID and OOD sources, the RMSE tables, the threshold and
OOD-share sweeps, detection quality and the bias on clean data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .energy import auroc, energy, energy_threshold
from .estimators import METHODS, AutoEval, rmse
from .metadataset import cutout, shear_contrast
from .network import Outputs
from .streams import stream, stream_seed


@dataclass
class Data:
    """The labeled splits a chapter draws from and where they come from.

    ``splits`` maps a split name to ``(images, labels)`` (float32 in [0, 1]); ``world`` and
    ``train_index`` locate the training images in the replication world (``None`` for real data).
    """

    splits: dict
    label: str
    world: object = None
    train_index: np.ndarray | None = None


def load_data(world: dict | None = None, dataset: str | None = None, data_dir=None) -> Data:
    """Load the replication world or MNIST.

    ``dataset=None``: the world built with the overrides ``world``; ``dataset="mnist"``: MNIST's official
    idx files in ``data_dir`` (splits ``train`` and ``test``).
    """
    if dataset is None:
        from ..datasets import world as worlds

        w = worlds.build_world(world or {})
        splits = {
            s: (w.images[w.split_index(s)].astype(np.float32), w.labels[w.split_index(s)])
            for s in w.split_names
        }
        return Data(splits, f"replication world {w.config.key()}", w, w.split_index("train"))
    if dataset == "mnist":
        from ..datasets import real

        if data_dir is None:
            raise ValueError("dataset 'mnist' needs data_dir: the folder holding MNIST's four idx files")
        splits = {}
        for s in ("train", "test"):
            images, labels = real.load("mnist", data_dir, s)
            splits[s] = (images.astype(np.float32) / 255.0, labels)
        return Data(splits, f"MNIST idx files in {data_dir}")
    raise ValueError(f"dataset must be None (the replication world) or 'mnist', got {dataset!r}")


def image_splits(world=None, dataset: str | None = None, data_dir=None):
    """``(splits, label)`` of :func:`load_data`."""
    data = load_data(world, dataset, data_dir)
    return data.splits, data.label


@dataclass
class Pools:
    """The classifier's training images and two held-out pools, with their counted base-digit overlap.

    ``meta`` feeds the training meta-sets, ``val`` the validation meta-sets and DoC/ATC's held-out data.
    """

    fit: tuple
    meta: tuple
    val: tuple
    overlap: dict = field(default_factory=dict)


def training_pools(data: Data, holdout_fraction: float = 0.3, seed: int = 0) -> Pools:
    """Split the training split into the classifier's images and two held-out pools.

    For the replication world the split is by *base digit* (:meth:`World.base_disjoint_split`): the world
    renders each base digit several times, so an image split would hold out renders of digits the
    classifier trained on. For real data (one image per digit) the split is by image. ``overlap`` counts,
    per pool, the base digits (real data: identical images) it shares with the classifier's images.
    """
    if not 0 < holdout_fraction < 1:
        raise ValueError(f"holdout_fraction must be in (0, 1), got {holdout_fraction}")
    x, y = data.splits["train"]
    shares = [1 - holdout_fraction, holdout_fraction / 2, holdout_fraction / 2]
    if data.world is not None:
        w = data.world
        parts = w.base_disjoint_split("train", shares, seed=stream_seed(seed, "split"))
        position = {int(g): i for i, g in enumerate(data.train_index)}
        local = [np.array([position[int(g)] for g in p]) for p in parts]
        base = w.examples["base_id"].to_numpy()[data.train_index]
    else:
        order = stream(seed, "split").permutation(len(x))
        n_fit, n_meta = int(round(shares[0] * len(x))), int(round(shares[1] * len(x)))
        local = [np.sort(p) for p in np.split(order, [n_fit, n_fit + n_meta])]
        base = np.array([hash(img.tobytes()) for img in x])
    fit_idx, meta_idx, val_idx = local
    fit_bases = set(base[fit_idx].tolist())
    overlap = {
        "meta": len(set(base[meta_idx].tolist()) & fit_bases),
        "validation": len(set(base[val_idx].tolist()) & fit_bases),
    }
    return Pools(*((x[i], y[i]) for i in local), overlap=overlap)


def id_source(splits: dict, name: str, seed: int = 0):
    """Images and labels of an ID source.

    A split (``v1``, ``matchedfrequency``, ``test``, ...), optionally perturbed with
    ``+<perturbation>@<level>`` (e.g. ``v1+fog@3``, :mod:`shifteval.corruptions`).
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
        images = corruptions.corrupt(images, pname, int(level), stream_seed(seed, "id_perturbation", name))
    return np.asarray(images, np.float32), labels


def unseen_transforms(images: ArrayLike, base: str, seed: int = 0) -> dict:
    """The §4.4 test sets with transformations absent from the meta-dataset.

    ``<base>-A (cutout)`` and ``<base>-B (shear + contrast)``, each with its own stream.
    """
    return {
        f"{base}-A (cutout)": cutout(images, stream(seed, "unseen", "cutout")),
        f"{base}-B (shear + contrast)": shear_contrast(images, stream(seed, "unseen", "shear")),
    }


def mix(
    id_outputs: Outputs,
    id_labels: ArrayLike,
    ood_outputs: Outputs,
    size: int,
    ood_share: float,
    rng: np.random.Generator,
):
    """A test set of ``size`` images, ``round(size·ood_share)`` of them OOD (§4.1), without replacement.

    Returns
    -------
    outputs : Outputs
        ID images first, then OOD.
    truth : float
        Accuracy with every OOD image counted as an error.
    is_ood : ndarray of bool
    """
    if not 0 <= ood_share <= 1:
        raise ValueError(f"ood_share must be in [0, 1], got {ood_share}")
    n_ood = int(round(size * ood_share))
    n_id = size - n_ood
    if n_id > len(id_outputs.logits) or n_ood > len(ood_outputs.logits):
        raise ValueError(
            f"a test set of {n_id} ID + {n_ood} OOD images needs more images than the sources hold "
            f"({len(id_outputs.logits)} ID, {len(ood_outputs.logits)} OOD)"
        )
    i = rng.choice(len(id_outputs.logits), n_id, replace=False)
    o = rng.choice(len(ood_outputs.logits), n_ood, replace=False)
    a, b = id_outputs.subset(i), ood_outputs.subset(o)
    truth = float((a.logits.argmax(1) == np.asarray(id_labels)[i]).sum() / size)
    return Outputs.concatenate([a, b]), truth, np.r_[np.zeros(n_id, bool), np.ones(n_ood, bool)]


def evaluate(
    est: AutoEval,
    id_outputs: dict,
    id_labels: dict,
    ood_outputs: dict,
    *,
    set_size: int,
    ood_share: float,
    percentile: float,
    repeats: int,
    seed: int = 0,
    ids=None,
    oods=None,
) -> pd.DataFrame:
    """Every method's estimate and the truth on test sets mixed from every ID × OOD source pair (§4.1).

    ``ids`` defaults to the sources with labels in ``id_labels``, ``oods`` to the sources of
    ``ood_outputs`` without labels. Test set ``r`` of pair ``(i, j)`` at this share has its own stream.
    Each row also has ``id_excluded`` (share of ID images the detector removed) and ``ood_kept`` (share of
    OOD images it let through): the two error sources of the paper's Figure 3.
    """
    ids = [s for s in id_outputs if s in id_labels] if ids is None else list(ids)
    oods = [s for s in ood_outputs if s not in id_labels] if oods is None else list(oods)
    missing = [s for s in ids if s not in id_labels or s not in id_outputs] + [
        s for s in oods if s not in ood_outputs
    ]
    if missing:
        raise ValueError(f"no outputs or labels for source(s) {missing}")
    tau = energy_threshold(est.ref.energies, percentile)
    rows = []
    for s_id in ids:
        for s_ood in oods:
            for r in range(repeats):
                g = stream(seed, "test_mix", s_id, s_ood, r, int(round(1000 * ood_share)))
                out, truth, is_ood = mix(
                    id_outputs[s_id], id_labels[s_id], ood_outputs[s_ood], set_size, ood_share, g
                )
                e = out.energies()
                rows.append(
                    {
                        "id": s_id,
                        "ood": s_ood,
                        "repeat": r,
                        "truth": truth,
                        **est.estimates(out, percentile),
                        "id_excluded": float((e[~is_ood] > tau).mean()),
                        "ood_kept": float((e[is_ood] <= tau).mean()) if is_ood.any() else np.nan,
                    }
                )
    return pd.DataFrame(rows)


def rmse_table(frame: pd.DataFrame, methods=METHODS, by=("id", "ood")) -> pd.DataFrame:
    """RMSE (points) per group (index ``"<id> + <ood>"``) and method, plus an ``all sets`` row."""
    methods = [m for m in methods if m in frame]
    rows = {
        " + ".join(map(str, key)): {m: rmse(g[m], g["truth"]) for m in methods}
        for key, g in frame.groupby(list(by), sort=False)
    }
    rows["all sets"] = {m: rmse(frame[m], frame["truth"]) for m in methods}
    return pd.DataFrame(rows).T


def threshold_sweep(est: AutoEval, outputs: dict, id_labels: dict, percentiles, **mixing) -> pd.DataFrame:
    """The paper's Figure 3: the two error sources and the RMSE per threshold percentile.

    Per percentile: the share of ID images excluded, of OOD images kept, and the RMSE of the OOD-aware
    estimate (one test set per pair).
    """
    rows = []
    for q in percentiles:
        f = evaluate(est, outputs, id_labels, outputs, percentile=q, **{**mixing, "repeats": 1})
        rows.append(
            {
                "percentile": q,
                "id_excluded": f["id_excluded"].mean(),
                "ood_kept": f["ood_kept"].mean(),
                "rmse": rmse(f["autoeval_energy_ood"], f["truth"]),
            }
        )
    return pd.DataFrame(rows)


def share_sweep(est: AutoEval, outputs: dict, id_labels: dict, shares, **mixing) -> pd.DataFrame:
    """The paper's Figure 4: every method's RMSE per OOD share (one test set per pair and share)."""
    rows = []
    for share in shares:
        f = evaluate(est, outputs, id_labels, outputs, **{**mixing, "ood_share": share, "repeats": 1})
        rows.append({"ood_share": share, **{m: rmse(f[m], f["truth"]) for m in METHODS}})
    return pd.DataFrame(rows).set_index("ood_share")


def detection_table(train: Outputs, outputs: dict, ref_id: str, oods, percentile: float) -> pd.DataFrame:
    """AUROC of each OOD source against ``ref_id`` and the share of each set kept at the threshold.

    By the classifier's own energies and by the detector's (index: (energies of, set)).
    """
    scorers = {
        "classifier": lambda o: energy(o.logits),
        "detector (outlier exposure)": lambda o: o.energies(),
    }
    rows = {}
    for name, score in scorers.items():
        tau = energy_threshold(score(train), percentile)
        ref = score(outputs[ref_id])
        for s in oods:
            rows[(name, s)] = {
                "AUROC": auroc(ref, score(outputs[s])),
                "share kept": float(np.mean(score(outputs[s]) <= tau)),
            }
        rows[(name, ref_id)] = {"AUROC": np.nan, "share kept": float(np.mean(ref <= tau))}
    table = pd.DataFrame(rows).T
    table.index.names = ["energies of", "set"]
    return table


def clean_bias(est: AutoEval, outputs: Outputs, labels: ArrayLike, percentile: float) -> dict:
    """Every method's signed error (estimate − truth, accuracy points) on a whole clean ID set (no OOD)."""
    truth = float((outputs.logits.argmax(1) == np.asarray(labels)).mean())
    return {m: 100 * (v - truth) for m, v in est.estimates(outputs, percentile).items()}
