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

    w, _ = _world_and_zoo(chapter_parameters(root, "replication-world"))
    pool = w.split_index("pool")
    ex = w.examples
    return {
        "pool_freq": ex.s_hat.to_numpy()[pool],
        "pool_labels": ex.label.to_numpy()[pool],
        "per_class": np.array(len(w.split_index("topimages")) // 10),
        "bin_edges": np.asarray(world_sampling.FREQUENCY_BINS, dtype=float),
    }


def _linear_fits(root: Path) -> dict:
    from shifteval.datasets import published

    t = published.load_table("recht2019_cifar10")
    return {
        "models": np.array(t.model.tolist()),
        "orig_acc": t.orig_acc.to_numpy(float),
        "new_acc": t.new_acc.to_numpy(float),
        "n_orig": np.array(10_000),
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
    p = chapter_parameters(root, "matched-evaluation")
    w, zoo = _world_and_zoo(p)
    target = p["targets"][0]
    best = str(zoo.accuracy_table()["v1"].idxmax())
    src, tgt = zoo.predictions(best, p["source"]), zoo.predictions(best, target)
    return {
        "model": np.array(best),
        "source": np.array(p["source"]),
        "target": np.array(target),
        "src_probs": src.probs,
        "src_labels": src.labels,
        "tgt_probs": tgt.probs,
        "tgt_labels": tgt.labels,
        "eps": np.array(p["eps"]),
    }


def _mlm(root: Path) -> dict:
    p = chapter_parameters(root, "matched-evaluation")  # the world and zoo every world chapter shares
    w, zoo = _world_and_zoo(p)
    cnns = [n for n in zoo.names if zoo.accuracy_table().loc[n, "family"] != "sklearn"]
    best = str(zoo.accuracy_table().loc[cnns, "v1"].idxmax())
    train, test = zoo.predictions(best, "train"), zoo.predictions(best, "v1")
    return {
        "model": np.array(best),
        "train_probs": train.probs,
        "train_labels": train.labels,
        "test_probs": test.probs,
        "test_labels": test.labels,
    }


def _ood_autoeval(root: Path) -> dict:
    p = chapter_parameters(root, "ood-autoeval")
    with chapter_threads(root, "ood-autoeval"):  # the backbone's cache key holds the thread count
        return _ood_autoeval_arrays(p)


def _ood_autoeval_arrays(p: dict) -> dict:
    from shifteval import autoeval as ae
    from shifteval.datasets import ood, splits
    from shifteval.utils.cache import cache_dir

    data = splits.load_data(p["world"], p["dataset"], p["data_dir"])
    pools = ae.training_pools(data, p["holdout_fraction"], p["seed"])
    side = pools.fit[0].shape[1]
    severity = ae.severity_table(data, pools.fit, pools.val, ae.perturbations(p["id_sources"]), arch=p["arch"],
                                 seed=p["seed"])  # fmt: skip
    id_data, ood_data = ae.evaluation_sources(data.splits, p["id_sources"], p["ood_sources"], p["ood_pool"], side,
                                              p["seed"], p["ood_dirs"], severity, data.dataset)  # fmt: skip
    outliers = ood.auxiliary_outliers(p["outlier_exposure"], side, ae.stream(p["seed"], "auxiliary"))
    images = {**{s: x for s, (x, _) in id_data.items()}, **ood_data}
    bb, _, outs = ae.prepare(p["arch"], p["epochs"], pools, images, outliers=outliers, n_sets=p["meta_sets"],
                             n_val_sets=p["meta_val_sets"], set_size=p["meta_set_size"], seed=p["seed"],
                             detector_epochs=p["detector_epochs"], detector_lr=p["detector_lr"],
                             cache=cache_dir() / "autoeval")  # fmt: skip
    ref = p["id_sources"][0]
    return {
        "train_logits": bb.train.logits,
        "id_logits": outs[ref].logits,
        "id_source": np.array(ref),
        "ood_sources": np.array(list(ood_data)),
        **{f"ood_logits_{s}": outs[s].logits for s in ood_data},
        "percentile": np.array(p["threshold_percentile"]),
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
