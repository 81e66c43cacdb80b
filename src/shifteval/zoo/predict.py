"""Prediction at scale: jobs per (model, dataset), run in shared passes, written into a prediction store.

A job names a timm model (offline weights, :mod:`shifteval.zoo.pretrained`) and a real dataset in its
official files (:mod:`shifteval.datasets.real`); its result is ``<out>/<model>/<dataset>.npz`` with its
sidecar (:class:`shifteval.zoo.store.PredictionStore`, atomic, sidecar last). Jobs on the same dataset
share a pass (:func:`group_jobs`, :func:`run_pass`): each batch is decoded once, in worker processes
(:mod:`shifteval.zoo.decode`), and run through every model whose timm data configuration matches, at the
chosen precision (:mod:`shifteval.zoo.inference`). A job whose entry exists is skipped, so an interrupted
run is resumed by running it again; a model that fails does not stop the others. Passes run in this
process (``executor="local"``) or as tasks on a Dask cluster (``"dask://HOST:PORT"``); both call
:func:`run_pass`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..datasets import real
from ..utils.cache import package_versions
from . import decode, inference, pretrained
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
    """One prediction: ``model`` on ``dataset`` (optionally ``dataset:split``) read from ``data_root``.

    ``model`` is a timm architecture; ``name`` (default: ``model``) is the model's name in the store, so
    one architecture can be stored under several weights (``name="resnet50-ft"``, ``model="resnet50"``).

    ``batch_size``, ``workers`` (decoding processes; None: :func:`shifteval.zoo.decode.decode_workers`)
    and ``precision`` (:data:`shifteval.zoo.inference.PRECISIONS`) say how it runs; jobs that agree on
    everything but the model and its weights may share a pass (:func:`group_jobs`).
    """

    model: str
    dataset: str
    data_root: str
    out: str
    split: str | None = None
    weights: str | None = None
    batch_size: int = 64
    allow_download: bool = False
    workers: int | None = None
    precision: str = "fp32"
    name: str | None = None

    def __post_init__(self):
        if self.batch_size < 1:
            raise ValueError(f"batch size must be at least 1, got {self.batch_size}")
        if self.workers is not None and self.workers < 0:
            raise ValueError(f"workers must be 0 (decode in this process) or more, got {self.workers}")
        if self.precision not in inference.PRECISIONS:
            raise ValueError(
                f"precision must be one of {', '.join(inference.PRECISIONS)}, got {self.precision!r}"
            )

    @property
    def label(self) -> str:
        """The model's name in the prediction store."""
        return self.name or self.model

    @property
    def store_name(self) -> str:
        """The dataset's name in the prediction store."""
        return self.dataset if self.split is None else f"{self.dataset}-{self.split}"

    @property
    def pass_key(self) -> tuple:
        """Everything a shared pass needs to agree on: the data, the store and how the pass runs."""
        return (self.dataset, self.split, self.data_root, self.out, self.batch_size, self.workers,
                self.precision, self.allow_download)  # fmt: skip


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


@dataclass
class PassReport:
    """What one decoded pass over a dataset did: each job's status and where the time went.

    ``statuses[i]`` is ``"done"``, ``"skipped"`` (already in the store) or ``"failed: <reason>"`` for
    ``jobs[i]``; ``errors`` holds the failed jobs' exceptions by model. ``images`` is the dataset's size,
    ``model_images`` the images times the models that predicted them, ``seconds`` the time from the
    first batch to the last, ``decode_seconds`` the part of it spent waiting for decoded batches and
    ``model_seconds`` each model's time on its batches.
    """

    jobs: list[Job]
    statuses: list[str]
    images: int = 0
    model_images: int = 0
    seconds: float = 0.0
    decode_seconds: float = 0.0
    model_seconds: dict[str, float] = field(default_factory=dict)
    errors: dict[str, BaseException] = field(default_factory=dict, repr=False)

    def summary(self) -> str:
        """One line: models, images, model-images per second, and decoding's and the models' share."""
        if not self.model_images:
            return f"{self.jobs[0].store_name}: nothing predicted"
        rate = self.model_images / self.seconds if self.seconds else float("nan")
        spent = sum(self.model_seconds.values())
        return (
            f"{len(self.model_seconds)} model(s) on {self.jobs[0].store_name}: {self.images:,} images in "
            f"{self.seconds:.1f} s, {rate:,.1f} model-images/s; waiting for decoding {self.decode_seconds:.1f} s, "
            f"models {spent:.1f} s"
        )


def group_jobs(jobs: Iterable[Job], models_per_pass: int = 8) -> list[list[Job]]:
    """Jobs that can share one pass over their dataset, at most ``models_per_pass`` to a group.

    Parameters
    ----------
    jobs : iterable of Job
    models_per_pass : int
        The most models one pass holds in memory and feeds.

    Returns
    -------
    list of list of Job
        In the order the jobs' datasets first appear; within a group, the jobs' order.

    Examples
    --------
    >>> jobs = make_jobs(["a", "b", "c"], ["cifar10.1", "mnist"], {"cifar10.1": "/c", "mnist": "/m"}, "/o")
    >>> [[(j.model, j.dataset) for j in g] for g in group_jobs(jobs, models_per_pass=2)]
    [[('a', 'cifar10.1'), ('b', 'cifar10.1')], [('c', 'cifar10.1')], [('a', 'mnist'), ('b', 'mnist')], [('c', 'mnist')]]
    """
    if models_per_pass < 1:
        raise ValueError(f"models per pass must be at least 1, got {models_per_pass}")
    by_key: dict[tuple, list[Job]] = {}
    for job in jobs:
        by_key.setdefault(job.pass_key, []).append(job)
    return [
        group[i : i + models_per_pass]
        for group in by_key.values()
        for i in range(0, len(group), models_per_pass)
    ]


def run_job(job: Job, progress: bool = True) -> str:
    """Run one job; returns ``"skipped"`` (already in the store) or ``"done"``.

    Parameters
    ----------
    job : Job
        The model, the dataset and where to read and write.
    progress : bool
        Show a progress bar over the images.

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
    >>> job = Job("resnet10t", "cifar10.1", str(root), str(root / "store"), weights=str(root / "w.safetensors"),
    ...           workers=0)
    >>> run_job(job, progress=False), run_job(job, progress=False)
    ('done', 'skipped')
    >>> PredictionStore(root / "store").load("resnet10t", "cifar10.1").probs.shape
    (4, 10)
    >>> tmp.cleanup()
    """
    report = run_pass([job], progress)
    if job.label in report.errors:
        raise report.errors[job.label]
    return report.statuses[0]


def run_pass(jobs: list[Job], progress: bool = True) -> PassReport:
    """Predict ``jobs`` (one dataset, one :attr:`Job.pass_key`) decoding each batch once for all models.

    Models already in the store are skipped; the others are loaded, grouped by timm data configuration
    (:func:`shifteval.zoo.decode.config_key`: models fed the same tensors share a loader), and fed batch
    by batch. A model that fails to load or to predict is reported as failed and the others go on; each
    model's predictions are saved (atomically, :class:`~shifteval.zoo.store.PredictionStore`) as soon as
    its pass ends.

    Parameters
    ----------
    jobs : list of Job
        Jobs with the same :attr:`Job.pass_key` (see :func:`group_jobs`).
    progress : bool
        One progress bar per pass (images per second, time left).

    Returns
    -------
    PassReport

    Raises
    ------
    ValueError
        If the jobs do not share a pass key, or the precision is unknown or needs CUDA on a CPU machine.
    shifteval.datasets.real.DatasetError
        If the dataset files are missing or malformed.

    Examples
    --------
    Two models of one architecture, each with its own weights, share one decoded pass:

    >>> from safetensors.torch import save_file
    >>> tmp = tempfile.TemporaryDirectory()
    >>> root = Path(tmp.name)
    >>> np.save(root / "cifar10.1_v6_data.npy", np.zeros((3, 32, 32, 3), np.uint8))
    >>> np.save(root / "cifar10.1_v6_labels.npy", np.array([0, 1, 2]))
    >>> for name in ("a", "b"):
    ...     model = pretrained.load_model("resnet10t", None, num_classes=10)
    ...     weights = {k: v.contiguous() for k, v in model.state_dict().items()}
    ...     save_file(weights, str(root / f"{name}.safetensors"))
    >>> jobs = [Job("resnet10t", "cifar10.1", str(root), str(root / "store"),
    ...             weights=str(root / f"{n}.safetensors"), name=n, workers=0) for n in ("a", "b")]
    >>> report = run_pass(jobs, progress=False)
    >>> report.statuses, report.images, report.model_images
    (['done', 'done'], 3, 6)
    >>> PredictionStore(root / "store").load("b", "cifar10.1").meta["parameters"]["shared_pass_with"]
    ['a']
    >>> tmp.cleanup()
    """
    if len({job.pass_key for job in jobs}) != 1:
        raise ValueError("jobs of one pass must share dataset, store, batch size, workers and precision")
    first = jobs[0]
    dev = pretrained.device()
    inference.check_precision(first.precision, dev)
    store = PredictionStore(first.out)
    report = PassReport(list(jobs), ["skipped" if store.has(j.label, j.store_name) else "" for j in jobs])
    todo = [job for job, status in zip(jobs, report.statuses, strict=True) if not status]
    if not todo:
        return report
    images, labels = real.load(first.dataset, first.data_root, first.split)
    report.images = len(images)
    loaded = _load_models(todo, report)
    by_config: dict[tuple, list] = {}
    for job, model, cfg in loaded:
        by_config.setdefault(decode.config_key(cfg), []).append((job, model, cfg))
    for group in by_config.values():
        _feed(group, images, labels, store, report, progress, dev)
    report.statuses = [
        f"failed: {report.errors[j.label]}" if j.label in report.errors else (s or "done")
        for j, s in zip(jobs, report.statuses, strict=True)
    ]
    return report


def _load_models(jobs: list[Job], report: PassReport) -> list[tuple]:
    """``(job, model, data configuration)`` per job whose model loads and fits the label space."""
    out = []
    for job in jobs:
        try:
            model = _load_model(job)
            out.append((job, model, decode.data_config(model)))
        except Exception as exc:  # noqa: BLE001 - any model's failure is that model's, reported by name
            report.errors[job.label] = exc
    return out


def _load_model(job: Job):
    n_classes = DATASET_CLASSES[job.dataset]
    try:
        model = pretrained.load_model(
            job.model, job.weights, num_classes=n_classes, allow_download=job.allow_download
        )
    except RuntimeError as exc:
        if "size mismatch" not in str(exc):  # an unknown architecture, weights of another one: as they are
            raise
        raise ValueError(  # load_state_dict: the classifier head's shape disagrees
            f"model {job.model!r} with weights {job.weights} does not match the {n_classes}-class label space of "
            f"{job.dataset}: {str(exc).splitlines()[0]}"
        ) from None
    if getattr(model, "num_classes", n_classes) != n_classes:
        raise ValueError(
            f"model {job.model!r} predicts {model.num_classes} classes but {job.dataset} has {n_classes}"
        )
    return model


def _feed(group: list[tuple], images, labels, store: PredictionStore, report: PassReport, progress, dev):
    """One decoded pass: every batch through every model of ``group``; then each model's entry saved.

    Each model's steps (moving it to the device, every batch, collecting, saving) fail for that model
    alone: the failure is recorded in ``report.errors`` and the other models go on.
    """
    workers = decode.decode_workers(group[0][0].workers, dev == "cuda")
    runners = {}
    for job, model, _ in group:
        try:
            runners[job.label] = inference.Runner(model, dev, job.precision)
        except Exception as exc:  # noqa: BLE001 - e.g. out of GPU memory: this model only
            report.errors[job.label] = exc
    if not runners:
        return
    start = time.perf_counter()
    _run_batches(group, images, runners, report, progress, workers, dev)
    seconds = {}
    for label, runner in list(runners.items()):
        try:
            seconds[label] = runner.seconds()  # waits for a GPU, where its errors surface
        except Exception as exc:  # noqa: BLE001
            report.errors[label] = exc
            del runners[label]
    report.seconds += time.perf_counter() - start
    shared = sorted(runners)
    for job, _, cfg in group:
        if job.label not in runners:
            continue
        try:
            probs = runners.pop(job.label).probabilities()
            store.save(job.label, job.store_name, labels, probs, _sidecar(job, dev, workers, cfg, shared))
        except Exception as exc:  # noqa: BLE001 - e.g. fp16 overflow: probabilities that are not distributions
            report.errors[job.label] = exc
            continue
        report.model_seconds[job.label] = seconds[job.label]
        report.model_images += len(images)


def _run_batches(group, images, runners: dict, report: PassReport, progress: bool, workers: int, dev: str):
    """Decode ``images`` once, batch by batch, feeding each batch to every runner that has not failed."""
    from tqdm import tqdm

    job0, _, cfg = group[0]
    batches = iter(decode.loader(images, cfg, job0.batch_size, workers, pin=dev == "cuda"))
    with tqdm(total=len(images), unit="img", desc=f"{len(runners)} model(s) on {job0.store_name}",
              disable=not progress, smoothing=0.1) as bar:  # fmt: skip
        while runners:  # a pass whose models have all failed stops decoding
            waited = time.perf_counter()
            batch = next(batches, None)
            report.decode_seconds += time.perf_counter() - waited
            if batch is None:
                break
            batch = batch.to(dev, non_blocking=True)
            for label, runner in list(runners.items()):
                try:
                    runner.feed(batch)
                except Exception as exc:  # noqa: BLE001 - e.g. out of memory, or a bug in the model's code
                    report.errors[label] = exc
                    del runners[label]
            bar.update(len(batch))
            bar.set_postfix(models=len(runners))
    del batches  # the loader's worker processes end with their iterator


def _sidecar(job: Job, dev: str, workers: int, cfg: dict, shared: list[str]) -> dict:
    """What the store's sidecar records of how the prediction was made."""
    return {
        "job": asdict(job),
        "device": dev,
        "precision": job.precision,
        "batch_size": job.batch_size,
        "workers": workers,
        "shared_pass_with": [m for m in shared if m != job.label],
        "data_config": cfg,
        "gpu": _gpu_name() if dev == "cuda" else None,
        "versions": package_versions(["torch", "torchvision", "timm", "numpy", "pillow"]),
    }


def _gpu_name() -> str:
    import torch

    return torch.cuda.get_device_name()


@dataclass
class RunReport:
    """Every pass of a run: ``statuses`` in the jobs' order, and a summary of where the time went.

    ``seconds`` is the run's wall-clock time (passes on a Dask cluster run side by side).
    """

    jobs: list[Job]
    passes: list[PassReport]
    seconds: float = 0.0

    @property
    def statuses(self) -> list[str]:
        """Each job's status, in the order the jobs were given."""
        by_job = {id(job): s for p in self.passes for job, s in zip(p.jobs, p.statuses, strict=True)}
        return [by_job[id(job)] for job in self.jobs]

    def summary(self) -> str:
        """One line per pass that predicted, then the run's model-images per second."""
        ran = [p for p in self.passes if p.model_images]
        lines = [p.summary() for p in ran]
        if ran and self.seconds:
            total = sum(p.model_images for p in ran)
            in_passes = sum(p.seconds for p in ran)
            waiting = sum(p.decode_seconds for p in ran) / in_passes if in_passes else 0.0
            lines.append(
                f"total: {total:,} model-images in {self.seconds:.1f} s (models loaded and saved included), "
                f"{total / self.seconds:,.1f} model-images/s; {waiting:.0%} of the passes' time waiting for decoding"
            )
        return "\n".join(lines)


def run_jobs(
    jobs: Iterable[Job], executor: str = "local", progress: bool = True, models_per_pass: int = 8
) -> RunReport:
    """Run jobs in shared passes (:func:`group_jobs`), locally or on a Dask cluster (``"dask://HOST:PORT"``).

    Parameters
    ----------
    jobs : iterable of Job
        The jobs.
    executor : str
        ``"local"`` (in this process, pass after pass) or ``"dask://HOST:PORT"`` (a running scheduler;
        each pass is a task, so a worker with a GPU runs a whole pass on it).
    progress : bool
        Progress bars for local passes (never on Dask workers).
    models_per_pass : int
        The most models sharing one pass.

    Returns
    -------
    RunReport
        ``.statuses`` per job, in order (see :class:`PassReport`); ``.summary()`` for people.

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
    ...                  weights={"resnet10t": str(root / "w.safetensors")}, workers=0)
    >>> run_jobs(jobs, progress=False).statuses, run_jobs(jobs, progress=False).statuses
    (['done'], ['skipped'])
    >>> run_jobs(jobs, executor="slurm")
    Traceback (most recent call last):
    ...
    ValueError: executor must be 'local' or 'dask://HOST:PORT', got 'slurm'
    >>> tmp.cleanup()
    """
    jobs = list(jobs)
    groups = group_jobs(jobs, models_per_pass)
    start = time.perf_counter()
    if executor == "local":
        passes = [run_pass(group, progress) for group in groups]
    elif executor.startswith("dask://"):
        from distributed import Client

        with Client(executor[len("dask://") :]) as client:
            futures = client.map(_remote_pass, groups, pure=False)
            passes = _rebind(groups, client.gather(futures))
    else:
        raise ValueError(f"executor must be 'local' or 'dask://HOST:PORT', got {executor!r}")
    return RunReport(jobs, passes, time.perf_counter() - start)


def _remote_pass(jobs: list[Job]) -> PassReport:
    """:func:`run_pass` on a Dask worker: failures come back as plain errors that always unpickle."""
    report = run_pass(jobs, progress=False)
    report.errors = {m: RuntimeError(f"{type(e).__name__}: {e}") for m, e in report.errors.items()}
    return report


def _rebind(groups: list[list[Job]], reports: list[PassReport]) -> list[PassReport]:
    """Reports that came back from workers refer to copies of the jobs: point them at the originals."""
    for group, report in zip(groups, reports, strict=True):
        report.jobs = group
    return reports


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
        timm model names, or ``label=architecture`` to store a timm architecture under another name
        (one architecture, several weights).
    datasets : iterable of str
        ``name`` or ``name:split`` (see :func:`parse_dataset`).
    data_roots : dict
        Dataset name to the folder holding it.
    out : str or path
        The prediction store's folder.
    weights : dict, optional
        Model name (the label where one is given) to a weights file (or ``"cache"``); models not listed
        get None.
    **kwargs
        Further :class:`Job` fields (``batch_size``, ``allow_download``, ``workers``, ``precision``).

    Returns
    -------
    list of Job
        Dataset-major order: every model on the first dataset, then on the next.

    Raises
    ------
    ValueError
        If a dataset is unknown or has no entry in ``data_roots``, a model name is given twice, or
        ``weights`` names a model that is not among ``models``.

    Examples
    --------
    >>> jobs = make_jobs(["a", "b"], ["cifar10.1:v4", "mnist"], {"cifar10.1": "/d/c", "mnist": "/d/m"}, "/out",
    ...                  batch_size=8)
    >>> [(j.model, j.store_name, j.batch_size) for j in jobs]
    [('a', 'cifar10.1-v4', 8), ('b', 'cifar10.1-v4', 8), ('a', 'mnist', 8), ('b', 'mnist', 8)]
    >>> [(j.label, j.model, j.weights) for j in make_jobs(["r50-ft=resnet50"], ["mnist"], {"mnist": "/m"}, "/o",
    ...                                                  weights={"r50-ft": "/w/ft.pth"})]
    [('r50-ft', 'resnet50', '/w/ft.pth')]
    >>> make_jobs(["a"], ["mnist"], {}, "/out")
    Traceback (most recent call last):
    ...
    ValueError: no data root given for 'mnist'; pass --data-root mnist=PATH
    >>> make_jobs(["a=resnet50"], ["mnist"], {"mnist": "/m"}, "/o", weights={"resnet50": "/w.pth"})
    Traceback (most recent call last):
    ...
    ValueError: --weights names resnet50, which is not among the models (a)
    """
    jobs = []
    named = [(label, arch or label) for label, _, arch in (spec.partition("=") for spec in models)]
    labels = [label for label, _ in named]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise ValueError(f"model name(s) {', '.join(twice)} given twice; store one architecture under "
                         f"several names with LABEL=ARCH")  # fmt: skip
    unused = sorted(set(weights or {}) - set(labels))
    if unused:
        raise ValueError(
            f"--weights names {', '.join(unused)}, which is not among the models ({', '.join(labels)})"
        )
    for spec in datasets:
        name, split = parse_dataset(spec)
        if name not in data_roots:
            raise ValueError(f"no data root given for {name!r}; pass --data-root {name}=PATH")
        for label, arch in named:
            weight = (weights or {}).get(label)
            jobs.append(Job(arch, name, str(data_roots[name]), str(out), split, weight, name=label, **kwargs))
    return jobs
