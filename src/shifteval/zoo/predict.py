"""Prediction at scale: every (model, dataset) pair is an independent job writing into a prediction store.

A job loads a real dataset from its official files (:mod:`shifteval.datasets.real`), a timm model
with offline weights (:mod:`shifteval.zoo.pretrained`), predicts, and saves ``<out>/<model>/<dataset>.npz``
with its sidecar (:class:`shifteval.zoo.store.PredictionStore`, atomic, sidecar last). A job whose
entry exists is skipped, so an interrupted run is resumed by running it again. Jobs run in this
process (``executor="local"``) or on a Dask cluster (``"dask://HOST:PORT"``, through
``distributed.Client``); both call the same :func:`run_job`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..datasets import real
from . import pretrained
from .store import PredictionStore

DATASET_CLASSES = {
    "cifar10": 10,
    "cifar10.1": 10,
    "cifar10.2": 10,
    "cinic10": 10,
    "mnist": 10,
    "imagenet": 1000,
    "imagenetv2": 1000,
}


@dataclass(frozen=True)
class Job:
    """One prediction: ``model`` on ``dataset`` (optionally ``dataset:split``) read from ``data_root``."""

    model: str
    dataset: str
    data_root: str
    out: str
    split: str | None = None
    weights: str | None = None
    batch_size: int = 64
    allow_download: bool = False

    @property
    def store_name(self) -> str:
        """The dataset's name in the prediction store."""
        return self.dataset if self.split is None else f"{self.dataset}-{self.split}"


def parse_dataset(spec: str) -> tuple[str, str | None]:
    """``"imagenetv2:matched-frequency"`` → ``("imagenetv2", "matched-frequency")``; the split is optional.

    Parameters
    ----------
    spec : str
        ``name`` or ``name:split``; ``name`` must be a key of :data:`DATASET_CLASSES`.

    Returns
    -------
    name : str
    split : str or None
        None when ``spec`` names no split.

    Raises
    ------
    ValueError
        If the dataset name is unknown.

    Examples
    --------
    >>> parse_dataset("imagenetv2:matched-frequency"), parse_dataset("cifar10.1")
    (('imagenetv2', 'matched-frequency'), ('cifar10.1', None))
    >>> parse_dataset("svhn")
    Traceback (most recent call last):
    ...
    ValueError: unknown dataset 'svhn'; available: cifar10, cifar10.1, cifar10.2, cinic10, mnist, imagenet, imagenetv2
    """
    name, _, split = spec.partition(":")
    if name not in DATASET_CLASSES:
        raise ValueError(f"unknown dataset {name!r}; available: {', '.join(DATASET_CLASSES)}")
    return name, (split or None)


def run_job(job: Job, progress: bool = True) -> str:
    """Run one job; returns ``"skipped"`` (already in the store) or ``"done"``.

    Parameters
    ----------
    job : Job
        The model, the dataset and where to read and write.
    progress : bool
        Show a progress bar over batches.

    Returns
    -------
    str
        ``"done"`` after writing ``<out>/<model>/<store_name>.{npz,json}``, ``"skipped"`` when they exist.

    Raises
    ------
    ValueError
        If the model's output classes do not match the dataset's label space.
    shifteval.datasets.real.DatasetError
        If the dataset files are missing or malformed.

    Examples
    --------
    A tiny CIFAR-10.1 in its official ``.npy`` format and local weights, both in a temporary folder:

    >>> from safetensors.torch import save_file
    >>> tmp = tempfile.TemporaryDirectory()
    >>> root = Path(tmp.name)
    >>> rng = np.random.default_rng(0)
    >>> np.save(root / "cifar10.1_v6_data.npy", rng.integers(0, 256, (4, 32, 32, 3), dtype=np.uint8))
    >>> np.save(root / "cifar10.1_v6_labels.npy", np.array([0, 1, 2, 3]))
    >>> model = pretrained.load_model("resnet10t", None, num_classes=10)
    >>> save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(root / "w.safetensors"))
    >>> job = Job("resnet10t", "cifar10.1", str(root), str(root / "store"), weights=str(root / "w.safetensors"))
    >>> run_job(job, progress=False), run_job(job, progress=False)
    ('done', 'skipped')
    >>> PredictionStore(root / "store").load("resnet10t", "cifar10.1").probs.shape
    (4, 10)
    >>> tmp.cleanup()
    """
    store = PredictionStore(job.out)
    if store.has(job.model, job.store_name):
        return "skipped"
    images, labels = real.load(job.dataset, job.data_root, job.split)
    n_classes = DATASET_CLASSES[job.dataset]
    try:
        model = pretrained.load_model(
            job.model, job.weights, num_classes=n_classes, allow_download=job.allow_download
        )
    except RuntimeError as exc:  # load_state_dict: shapes of the classifier head disagree
        raise ValueError(
            f"model {job.model!r} with weights {job.weights} does not match the {n_classes}-class label space of "
            f"{job.dataset}: {str(exc).splitlines()[0]}"
        ) from None
    if getattr(model, "num_classes", n_classes) != n_classes:
        raise ValueError(
            f"model {job.model!r} predicts {model.num_classes} classes but {job.dataset} has {n_classes}"
        )
    probs = pretrained.predict(
        model, images, batch_size=job.batch_size, progress=progress, desc=f"{job.model} on {job.store_name}"
    )
    store.save(job.model, job.store_name, labels, probs, {"job": asdict(job), "device": pretrained.device()})
    return "done"


def run_jobs(jobs: Iterable[Job], executor: str = "local", progress: bool = True) -> list[str]:
    """Run jobs locally or on a Dask cluster (``"dask://HOST:PORT"``); returns each job's status.

    Parameters
    ----------
    jobs : iterable of Job
        The jobs (independent of each other).
    executor : str
        ``"local"`` (in this process, in order) or ``"dask://HOST:PORT"`` (a running scheduler).
    progress : bool
        Progress bars for local jobs (never on Dask workers).

    Returns
    -------
    list of str
        :func:`run_job`'s status per job, in order.

    Raises
    ------
    ValueError
        If ``executor`` is neither form.

    Examples
    --------
    >>> from safetensors.torch import save_file
    >>> tmp = tempfile.TemporaryDirectory()
    >>> root = Path(tmp.name)
    >>> rng = np.random.default_rng(0)
    >>> np.save(root / "cifar10.1_v6_data.npy", rng.integers(0, 256, (4, 32, 32, 3), dtype=np.uint8))
    >>> np.save(root / "cifar10.1_v6_labels.npy", np.array([0, 1, 2, 3]))
    >>> model = pretrained.load_model("resnet10t", None, num_classes=10)
    >>> save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(root / "w.safetensors"))
    >>> jobs = make_jobs(["resnet10t"], ["cifar10.1"], {"cifar10.1": root}, root / "store",
    ...                  weights={"resnet10t": str(root / "w.safetensors")})
    >>> run_jobs(jobs, progress=False), run_jobs(jobs, progress=False)
    (['done'], ['skipped'])
    >>> run_jobs(jobs, executor="slurm")
    Traceback (most recent call last):
    ...
    ValueError: executor must be 'local' or 'dask://HOST:PORT', got 'slurm'
    >>> tmp.cleanup()
    """
    jobs = list(jobs)
    if executor == "local":
        return [run_job(job, progress) for job in jobs]
    if executor.startswith("dask://"):
        from distributed import Client

        with Client(executor[len("dask://") :]) as client:
            futures = client.map(run_job, jobs, progress=False, pure=False)
            return client.gather(futures)
    raise ValueError(f"executor must be 'local' or 'dask://HOST:PORT', got {executor!r}")


def make_jobs(
    models: Iterable[str],
    datasets: Iterable[str],
    data_roots: dict,
    out: str | Path,
    weights: dict | None = None,
    **kwargs: Any,
) -> list[Job]:
    """The cross product of models and datasets (``name`` or ``name:split``) as jobs.

    Parameters
    ----------
    models : iterable of str
        timm model names.
    datasets : iterable of str
        ``name`` or ``name:split`` (see :func:`parse_dataset`).
    data_roots : dict
        Dataset name to the folder holding it.
    out : str or path
        The prediction store's folder.
    weights : dict, optional
        Model name to a weights file (or ``"cache"``); models not listed get None.
    **kwargs
        Further :class:`Job` fields (``batch_size``, ``allow_download``).

    Returns
    -------
    list of Job
        Dataset-major order: every model on the first dataset, then on the next.

    Raises
    ------
    ValueError
        If a dataset is unknown or has no entry in ``data_roots``.

    Examples
    --------
    >>> jobs = make_jobs(["a", "b"], ["cifar10.1:v4", "mnist"], {"cifar10.1": "/d/c", "mnist": "/d/m"}, "/out",
    ...                  batch_size=8)
    >>> [(j.model, j.store_name, j.batch_size) for j in jobs]
    [('a', 'cifar10.1-v4', 8), ('b', 'cifar10.1-v4', 8), ('a', 'mnist', 8), ('b', 'mnist', 8)]
    >>> make_jobs(["a"], ["mnist"], {}, "/out")
    Traceback (most recent call last):
    ...
    ValueError: no data root given for 'mnist'; pass --data-root mnist=PATH
    """
    jobs = []
    for spec in datasets:
        name, split = parse_dataset(spec)
        if name not in data_roots:
            raise ValueError(f"no data root given for {name!r}; pass --data-root {name}=PATH")
        for model in models:
            jobs.append(
                Job(model, name, str(data_roots[name]), str(out), split, (weights or {}).get(model), **kwargs)
            )
    return jobs
