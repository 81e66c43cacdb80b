"""Prediction at scale: every (model, dataset) pair is an independent job writing into a prediction store.

A job loads a real dataset from its official files (:mod:`shifteval.datasets.real`), a timm model
with offline weights (:mod:`shifteval.zoo.pretrained`), predicts, and saves ``<out>/<model>/<dataset>.npz``
with its sidecar (:class:`shifteval.zoo.store.PredictionStore`, atomic, sidecar last). A job whose
entry exists is skipped, so an interrupted run is resumed by running it again. Jobs run in this
process (``executor="local"``) or on a Dask cluster (``"dask://HOST:PORT"``, through
``distributed.Client``); both call the same :func:`run_job`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

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


def parse_dataset(spec: str):
    """``"imagenetv2:matched-frequency"`` → ``("imagenetv2", "matched-frequency")``; the split is optional."""
    name, _, split = spec.partition(":")
    if name not in DATASET_CLASSES:
        raise ValueError(f"unknown dataset {name!r}; available: {', '.join(DATASET_CLASSES)}")
    return name, (split or None)


def run_job(job: Job, progress: bool = True) -> str:
    """Run one job; returns ``"skipped"`` (already in the store) or ``"done"``."""
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


def run_jobs(jobs, executor: str = "local", progress: bool = True) -> list[str]:
    """Run jobs locally or on a Dask cluster (``"dask://HOST:PORT"``); returns each job's status."""
    jobs = list(jobs)
    if executor == "local":
        return [run_job(job, progress) for job in jobs]
    if executor.startswith("dask://"):
        from distributed import Client

        with Client(executor[len("dask://") :]) as client:
            futures = client.map(run_job, jobs, progress=False, pure=False)
            return client.gather(futures)
    raise ValueError(f"executor must be 'local' or 'dask://HOST:PORT', got {executor!r}")


def make_jobs(models, datasets, data_roots: dict, out, weights: dict | None = None, **kwargs) -> list[Job]:
    """The cross product of models and datasets (``name`` or ``name:split``) as jobs."""
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
