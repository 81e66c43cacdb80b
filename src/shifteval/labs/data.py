"""The arrays each lab works on, written from its chapter's default parameters and the project's cache.

A lab reads one ``<lab>-data.npz`` beside its notebook, with ``np.load(..., allow_pickle=False)`` (the
notebook needs nothing else; :func:`load` reads it the same way from Python). :func:`write` makes it with the
same parameter set, cache and thread count as the chapter, so a lab never trains what the book already
trained (the world's zoo, the OOD-AutoEval backbone). The file travels with the student notebook and the
autograder bundle, so students and graders need no cache, no network and no ``shifteval``.

A lab's writer is a function ``_<lab>(root) -> dict`` of plain arrays (numbers, booleans, strings; no
objects), registered under the lab's name in :data:`WRITERS`; the lab's name is also in :data:`LABS`. Keep
the arrays to what the lab's questions use, and small: the file ships in every student's folder.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from shifteval.book import project

#: The labs, one per chapter, in the book's order.
LABS = (
    "replication-world",
    "linear-fits",
    "selection-bias",
    "matched-evaluation",
    "ood-autoeval",
    "mlm",
    "your-replication",
)


def data_name(lab: str) -> str:
    """File name of a lab's arrays.

    Parameters
    ----------
    lab : str
        One of :data:`LABS`.

    Returns
    -------
    str

    Examples
    --------
    >>> data_name("mlm")
    'mlm-data.npz'
    """
    return f"{lab}-data.npz"


def load(lab: str, folder: str | Path = ".") -> dict[str, Any]:
    """A lab's arrays, as the lab notebook reads them.

    Parameters
    ----------
    lab : str
        One of :data:`LABS`.
    folder : str or pathlib.Path
        Where ``<lab>-data.npz`` lies (the notebook's folder).

    Returns
    -------
    dict
        Array name -> array; string arrays come back as lists of str, 0-d arrays as Python scalars.

    Raises
    ------
    FileNotFoundError
        If the file is missing: the message says which command writes it.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as d:
    ...     np.savez(Path(d) / "mlm-data.npz", n=np.array(3), names=np.array(["a", "b"]))
    ...     load("mlm", d)
    {'n': 3, 'names': ['a', 'b']}
    """
    path = Path(folder) / data_name(lab)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: the lab's data file is missing; it comes with the lab's folder (`shifteval labs` writes it)"
        )
    with np.load(path, allow_pickle=False) as z:
        out: dict[str, Any] = {}
        for key in z.files:
            value = z[key]
            if value.dtype.kind == "U":
                out[key] = value.tolist()
            elif value.ndim == 0:
                out[key] = value.item()
            else:
                out[key] = value
        return out


def chapter_parameters(root: Path, chapter: str, params: str = "default") -> dict[str, Any]:
    """The parameters a chapter runs with: its notebook's defaults, then its parameter set.

    Parameters
    ----------
    root : pathlib.Path
        The project root.
    chapter : str
        The chapter's name.
    params : str
        Its parameter set.

    Returns
    -------
    dict

    Examples
    --------
    >>> p = chapter_parameters(project.find_root(), "selection-bias")
    >>> p["annotators"], p["seed"]
    (40, 0)
    """
    ch = project.get_chapter(chapter, root)
    values = project.notebook_parameters(ch.source.read_text(encoding="utf-8"))
    values.update(project.resolve_parameters(ch, project.load_param_set(ch, params), {}))
    return values


@contextlib.contextmanager
def chapter_threads(root: Path, chapter: str) -> Iterator[int]:
    """Compute on the thread count a chapter computes on, inside the ``with`` block.

    A cached result whose key holds the thread count (the OOD-AutoEval backbone's) is then the chapter's,
    whatever shell ``shifteval labs`` runs from (:mod:`shifteval.book.threads`).

    Parameters
    ----------
    root : pathlib.Path
        The project root.
    chapter : str
        The chapter's name.

    Yields
    ------
    int
        The thread count (torch's intra-op pool and the BLAS/OpenMP pools); the previous counts come back
        on exit.

    Examples
    --------
    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with chapter_threads(project.find_root(), "selection-bias") as n:
    ...     inside = torch.get_num_threads()
    >>> n, inside == n, torch.get_num_threads() == before
    (1, True, True)
    """
    import threadpoolctl
    import torch

    from shifteval.book import threads

    count = threads.chapter_threads(project.get_chapter(chapter, root).threads)
    before = torch.get_num_threads()
    with threadpoolctl.threadpool_limits(count):
        torch.set_num_threads(count)
        try:
            yield count
        finally:
            torch.set_num_threads(before)


def _world_and_zoo(p: dict):
    from shifteval import zoo as zoos
    from shifteval.datasets import world as worlds

    w = worlds.build_world(p["world"])
    return w, zoos.build_zoo(w, zoos.default_zoo(p["zoo_size"]))


def _replication_world(root: Path) -> dict:
    from shifteval.datasets import world_sampling

    w, zoo = _world_and_zoo(chapter_parameters(root, "replication-world"))
    v1, pool = w.split_index("v1"), w.split_index("pool")
    labels, s = w.examples.label.to_numpy(), w.examples.s.to_numpy()
    votes = w.votes_replication.astype(bool)  # the replication round: v1 and the pool annotated together
    return {
        "v1_votes": votes[v1],
        "pool_votes": votes[pool],
        "v1_labels": labels[v1].astype(np.int8),
        "pool_labels": labels[pool].astype(np.int8),
        "v1_s": s[v1],  # true selection frequencies: only the world knows them
        "pool_s": s[pool],
        "v1_correct": zoo.correct("v1"),
        "pool_correct": zoo.correct("pool"),
        "models": np.array(zoo.names),
        "per_class": np.array(len(w.split_index("topimages")) // world_sampling.N_CLASSES),
        "bin_edges": np.asarray(world_sampling.FREQUENCY_BINS, dtype=float),
        "threshold": np.array(w.config.threshold),
    }


def _linear_fits(root: Path) -> dict:
    from shifteval.datasets import published

    t = published.load_table("recht2019_cifar10")  # Table 11, as printed (percent)
    return {
        "models": np.array(t.model.tolist()),
        **{c: t[c].to_numpy(float) for c in ("orig_acc", "new_acc", "new_ci_low", "new_ci_high")},
        "n_orig": np.array(10_000),  # the sizes of §3 and App. B.1 (Table 11's new set, v4, has 2,021)
        "n_new": np.array(2_000),
    }


def _selection_bias(root: Path) -> dict:
    from shifteval.selection import study

    p = chapter_parameters(root, "selection-bias")
    if not isinstance(p["annotators"], int):
        raise ValueError("the selection-bias lab needs one number of annotators per image")
    w, zoo = _world_and_zoo(p)
    v1, v2 = w.split_index("v1"), w.split_index("matchedfrequency")
    s = w.examples.s.to_numpy()
    votes1, votes2 = study.reannotate(s[v1], s[v2], p["annotators"], p["seed"])
    return {  # the chapter's fresh votes: one column per annotator, so "the first m annotators" is a slice
        "votes_v1": votes1.astype(bool),
        "votes_v2": votes2.astype(bool),
        "correct_v1": zoo.correct("v1"),
        "correct_v2": zoo.correct("matchedfrequency"),
        "models": np.array(zoo.names),
        "true_s_v1": s[v1],
        "true_s_v2": s[v2],
    }


def _matched_evaluation(root: Path) -> dict:
    """The matched-evaluation lab's arrays: what Algorithms 1 and 2 read of every model's predictions.

    Anzaku et al.'s tuples (y, ŷ, p̂) (§2, Algorithm 1) for each of the zoo's models on the chapter's source
    set (v1) and its first target set (MatchedFrequency): the true labels once per set, the predicted labels
    and the predicted probabilities (the largest softmax output, float32 as the zoo stores it) one row per
    model, and the chapter's ε (§4.1: 0.005).
    """
    p = chapter_parameters(root, "matched-evaluation")
    w, zoo = _world_and_zoo(p)
    target = p["targets"][0]
    src = [zoo.predictions(m, p["source"]) for m in zoo.names]
    tgt = [zoo.predictions(m, target) for m in zoo.names]
    if not all(np.array_equal(a.labels, src[0].labels) for a in src) or not all(
        np.array_equal(a.labels, tgt[0].labels) for a in tgt
    ):
        raise ValueError("the zoo's models disagree on the true labels of a set")
    return {
        "models": np.array(zoo.names),
        "source": np.array(p["source"]),
        "target": np.array(target),
        "src_labels": src[0].labels.astype(np.int8),
        "tgt_labels": tgt[0].labels.astype(np.int8),
        "src_pred": np.stack([s.probs.argmax(1) for s in src]).astype(np.int8),
        "src_conf": np.stack([s.probs.max(1) for s in src]).astype(np.float32),
        "tgt_pred": np.stack([t.probs.argmax(1) for t in tgt]).astype(np.int8),
        "tgt_conf": np.stack([t.probs.max(1) for t in tgt]).astype(np.float32),
        "eps": np.array(p["eps"]),
    }


def _mlm(root: Path) -> dict:
    p = chapter_parameters(root, "matched-evaluation")  # the world and zoo every world chapter shares
    w, zoo = _world_and_zoo(p)
    table = zoo.accuracy_table()  # reads every stored prediction: once
    cnns = [n for n in zoo.names if table.loc[n, "family"] != "sklearn"]
    best = str(table.loc[cnns, "v1"].idxmax())
    train, test = zoo.predictions(best, "train"), zoo.predictions(best, "v1")
    return {
        "model": np.array(best),
        "train_probs": train.probs,
        "train_labels": train.labels,
        "test_probs": test.probs,
        "test_labels": test.labels,
    }


#: The ID source of the ood-autoeval lab: the world's replicated set of 2,000 images, as Zhu et al.'s ID data
#: is CIFAR-10.1, the 2,000-image replication of CIFAR-10 (§4.1).
OOD_LAB_ID_SOURCE = "matchedfrequency"


def _ood_autoeval(root: Path) -> dict:
    """The ood-autoeval lab's arrays: what AutoEval with energy OOD detection (Zhu et al. 2023) reads.

    The detector's logits (energies, §3.4-3.5) and the classifier's penultimate features (representations,
    §3.2) on the training images, the ID source :data:`OOD_LAB_ID_SOURCE` and the foreign images of the
    chapter's test sets; the representations and accuracies of the chapter's training and validation
    meta-sets (§3.3); the chapter's 9 test sets of that ID source (900 ID + 100 OOD images each, as row
    indices) with the chapter's MLP estimates on them; the threshold's percentile and the sweep's grid.
    """
    p = chapter_parameters(root, "ood-autoeval")
    with chapter_threads(root, "ood-autoeval"):  # the backbone's cache key holds the thread count
        return _ood_autoeval_arrays(p)


def _ood_autoeval_arrays(p: dict) -> dict:
    from shifteval import autoeval as ae
    from shifteval.datasets import ood, splits
    from shifteval.utils.cache import cache_dir

    id_src = OOD_LAB_ID_SOURCE
    if id_src not in p["id_sources"]:
        raise ValueError(f"the ood-autoeval lab needs {id_src!r} among the chapter's id_sources")
    data = splits.load_data(p["world"], p["dataset"], p["data_dir"])
    pools = ae.training_pools(data, p["holdout_fraction"], p["seed"])
    side = pools.fit[0].shape[1]
    severity = ae.severity_table(data, pools.fit, pools.val, ae.perturbations(p["id_sources"]), arch=p["arch"],
                                 seed=p["seed"])  # fmt: skip
    id_data, ood_data = ae.evaluation_sources(data.splits, p["id_sources"], p["ood_sources"], p["ood_pool"], side,
                                              p["seed"], p["ood_dirs"], severity, data.dataset)  # fmt: skip
    outliers = ood.auxiliary_outliers(p["outlier_exposure"], side, ae.stream(p["seed"], "auxiliary"))
    images = {**{s: x for s, (x, _) in id_data.items()}, **ood_data}
    bb, est, outs = ae.prepare(p["arch"], p["epochs"], pools, images, outliers=outliers, n_sets=p["meta_sets"],
                               n_val_sets=p["meta_val_sets"], set_size=p["meta_set_size"], seed=p["seed"],
                               detector_epochs=p["detector_epochs"], detector_lr=p["detector_lr"],
                               cache=cache_dir() / "autoeval")  # fmt: skip
    if bb.detector is None:
        raise ValueError("the ood-autoeval lab needs the chapter's detector (outlier_exposure > 0)")
    oods = list(ood_data)
    # the chapter's test sets of this ID source (ae.evaluate's streams and draws): 900 ID + 100 OOD images each
    n_ood = int(round(p["set_size"] * p["ood_share"]))
    draws = []
    for o in oods:
        for r in range(p["repeats"]):
            g = ae.stream(p["seed"], "test_mix", id_src, o, r, int(round(1000 * p["ood_share"])))
            draws.append((o, g.choice(len(outs[id_src]), p["set_size"] - n_ood, replace=False),
                          g.choice(len(outs[o]), n_ood, replace=False)))  # fmt: skip
    # only the OOD images some test set holds travel, one row each
    used = {o: np.unique(np.concatenate([j for s, _, j in draws if s == o])) for o in oods}
    offset = np.cumsum([0] + [len(used[o]) for o in oods])
    row = {
        o: dict(zip(used[o].tolist(), range(offset[k], offset[k + 1]), strict=True))
        for k, o in enumerate(oods)
    }

    detector = bb.detector  # not None: checked above

    def detector_logits(x):  # energies come from the detector's logits, the chapter's (Liu et al.'s) detector
        return ae.compute_outputs(detector, x).logits

    train_logits = detector_logits(pools.fit[0])
    id_logits = detector_logits(images[id_src])
    ood_logits = np.concatenate([detector_logits(images[o][used[o]]) for o in oods])
    stored = np.concatenate([bb.train.energy, outs[id_src].energy, *(outs[o].energy[used[o]] for o in oods)])
    if not np.allclose(ae.energy(np.concatenate([train_logits, id_logits, ood_logits])), stored, atol=1e-4):
        raise ValueError("the detector's logits do not give the chapter's energies")
    labels = id_data[id_src][1]
    reps, acc = ae.meta_targets(bb.meta_train, bb.meta_train_labels, est.ref)
    val_reps, val_acc = ae.meta_targets(bb.meta_val, bb.meta_val_labels, est.ref)
    chapter = ae.evaluate(est, outs, {id_src: labels}, outs, set_size=p["set_size"], ood_share=p["ood_share"],
                          percentile=p["threshold_percentile"], repeats=p["repeats"], seed=p["seed"], ids=[id_src],
                          oods=oods)  # fmt: skip
    correct = outs[id_src].logits.argmax(1) == labels
    if not np.allclose(chapter["truth"], [correct[i].sum() / p["set_size"] for _, i, _ in draws]):
        raise ValueError("the lab's test sets are not the chapter's")
    f32 = np.float32  # the lab recomputes every energy and representation from these, so float32 suffices
    # the lab's arrays: the detector's logits (energies, §3.4-3.5) and the classifier's penultimate features
    # (representations, §3.2) of the training images, the ID source and the OOD images the test sets hold;
    # the training meta-sets' and validation meta-sets' representations and accuracies (§3.3, the chapter's
    # own); the chapter's 9 test sets of this ID source (900 ID + 100 OOD images each, as rows of the arrays
    # above) and the chapter's MLP estimates on them, without and with OOD detection (Table 1's columns)
    return {
        "train_logits": train_logits.astype(f32),
        "train_mean": est.ref.mean,
        "train_cov": est.ref.cov,
        "meta_reps": reps.astype(f32),
        "meta_acc": acc,
        "val_reps": val_reps.astype(f32),
        "val_acc": val_acc,
        "id_source": np.array(id_src),
        "id_logits": id_logits.astype(f32),
        "id_features": outs[id_src].features.astype(f32),
        "id_correct": correct,
        "ood_sources": np.array(oods),
        "ood_logits": ood_logits.astype(f32),
        "ood_features": np.concatenate([outs[o].features[used[o]] for o in oods]).astype(f32),
        "ood_source": np.concatenate([np.full(len(used[o]), k) for k, o in enumerate(oods)]).astype(np.int8),
        "set_ood": np.array([oods.index(o) for o, _, _ in draws], dtype=np.int8),
        "set_id_index": np.stack([i for _, i, _ in draws]).astype(np.int16),
        "set_ood_index": np.stack([[row[o][v] for v in j.tolist()] for o, _, j in draws]).astype(np.int16),
        "chapter_plain": chapter["autoeval"].to_numpy(float),
        "chapter_ood": chapter["autoeval_energy_ood"].to_numpy(float),
        "percentile": np.array(p["threshold_percentile"]),
        "percentile_grid": np.asarray(p["percentile_grid"], dtype=float),
    }


def _your_replication(root: Path) -> dict:
    """The chapter's worked example as arrays: the lab's set-up cell writes them out as a replication folder.

    The labels of v1 (original) and MatchedFrequency (new), every model's predicted classes on both, and
    one model's softmax probabilities: a folder in the chapter's layout whose prediction files hold
    ``predicted`` for most models and ``probs`` for one (both forms the layout accepts).
    """
    p = chapter_parameters(root, "your-replication")
    # the zoo the chapter's worked example exports (`shifteval export-predictions`)
    w, zoo = _world_and_zoo(p)
    sets = {"original": "v1", "new": p["new"]}
    models = sorted(zoo.names)  # the order of the folder's predictions/ listing
    best = str(zoo.accuracy_table().loc[models, "v1"].idxmax())
    out = {"models": np.array(models), "set_names": np.array([sets["original"], sets["new"]]),
           "probs_model": np.array(best)}  # fmt: skip
    for s, split in sets.items():
        out[f"labels_{s}"] = np.asarray(w.labels[w.split_index(split)], np.int64)  # labels/<set>.npy
        # every model's predicted class (argmax of its softmax) per image: what the folder's files carry
        predicted = [zoo.predictions(m, split).probs.argmax(1) for m in models]
        out[f"predicted_{s}"] = np.stack(predicted).astype(np.int8)
        # the full softmax of one model only (the best on v1): all 31 models' would make the file 15 MB
        out[f"probs_{s}"] = np.asarray(zoo.predictions(best, split).probs, np.float32)
    return out


WRITERS: dict[str, Callable[[Path], dict]] = {
    "replication-world": _replication_world,
    "linear-fits": _linear_fits,
    "selection-bias": _selection_bias,
    "matched-evaluation": _matched_evaluation,
    "ood-autoeval": _ood_autoeval,
    "mlm": _mlm,
    "your-replication": _your_replication,
}


def write(lab: str, dest: str | Path, root: str | Path | None = None) -> Path:
    """Write ``<lab>-data.npz`` into ``dest`` (atomically), from the chapter's default parameters.

    Parameters
    ----------
    lab : str
        One of :data:`LABS`.
    dest : str or pathlib.Path
        The folder to write into (created).
    root : str or pathlib.Path, optional
        The project root (found from the working directory when None).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    ValueError
        For an unknown lab.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = write("linear-fits", d)
    ...     arrays = load("linear-fits", d)
    >>> path.name, len(arrays["models"]), arrays["n_orig"], arrays["n_new"]
    ('linear-fits-data.npz', 34, 10000, 2000)
    """
    if lab not in WRITERS:
        raise ValueError(f"unknown lab {lab!r}; labs: {', '.join(LABS)}")
    root = project.find_root(root)
    arrays = WRITERS[lab](root)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    final = dest / data_name(lab)
    fd, tmp = tempfile.mkstemp(dir=dest, suffix=".npz.part")
    os.close(fd)
    try:
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, **arrays)
        os.chmod(tmp, 0o644)  # handed out: readable like the notebook beside it (mkstemp makes it private)
        os.replace(tmp, final)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return final
