"""The prediction store: one model's output on one dataset, in the project's one prediction format.

A prediction is ``<root>/<model>/<dataset>.npz`` holding ``labels`` (int64, true labels) and ``probs``
(float32, N×K softmax probabilities; rows on the simplex), plus a JSON sidecar
``<root>/<model>/<dataset>.json`` with ``model``, ``dataset``, ``n``, ``n_classes``, ``accuracy`` and
free-form ``parameters``. Files are loaded with ``allow_pickle=False``; both are written atomically,
the sidecar last, so a sidecar's presence marks a complete entry. Predictions made elsewhere (e.g. on
real CIFAR-10 with a timm model) can be dropped into the same layout.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..utils import validation
from ..utils.io import atomic_write_bytes, atomic_write_json

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+\-]*$")


@dataclass(frozen=True)
class Predictions:
    """A model's predictions on a dataset."""

    model: str
    dataset: str
    labels: np.ndarray
    probs: np.ndarray
    meta: dict

    @property
    def predicted(self) -> np.ndarray:
        """Predicted class of every example (arg-max of the probabilities)."""
        return self.probs.argmax(axis=1)

    @property
    def confidence(self) -> np.ndarray:
        """Maximum softmax probability per example."""
        return self.probs.max(axis=1)

    @property
    def correct(self) -> np.ndarray:
        """Whether each prediction is correct."""
        return self.predicted == self.labels

    @property
    def accuracy(self) -> float:
        """Share of correct predictions."""
        return float(self.correct.mean())


def validate_predictions(
    labels: ArrayLike, probs: ArrayLike, where: str = "predictions"
) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """Check labels and probabilities; return them as int64 and float32 arrays.

    Parameters
    ----------
    labels : array-like, shape (N,)
        True class of every example.
    probs : array-like, shape (N, K)
        Softmax probabilities, one row per example.
    where : str
        Names the source (file, ``model/dataset``) in error messages.

    Returns
    -------
    labels : numpy.ndarray of int64, shape (N,)
    probs : numpy.ndarray of float32, shape (N, K)

    Raises
    ------
    ValueError
        Naming ``where`` and what was expected: 1-D integer labels in [0, K), an N×K array of
        probabilities in [0, 1] whose rows sum to 1 (within :data:`shifteval.utils.validation.TOLERANCE`),
        matching lengths, no NaN.

    Examples
    --------
    >>> y, p = validate_predictions([1, 0], [[0.25, 0.75], [1.0, 0.0]])
    >>> y.dtype, p.dtype, p.shape
    (dtype('int64'), dtype('float32'), (2, 2))
    >>> validate_predictions([0, 2], [[0.5, 0.5], [0.5, 0.5]], where="m/v1")
    Traceback (most recent call last):
    ...
    ValueError: m/v1: 'labels' must lie in [0, 2); found 2
    """
    probs = validation.probabilities(probs, "probs", where=where)
    labels = validation.labels(labels, "labels", n=len(probs), n_classes=probs.shape[1], where=where)
    return labels, probs.astype(np.float32)


class PredictionStore:
    """A folder of predictions, ``<root>/<model>/<dataset>.{npz,json}``.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     store = PredictionStore(tmp)
    ...     saved = store.save("m1", "v1", [0, 1], [[0.9, 0.1], [0.6, 0.4]], {"epochs": 3})
    ...     _ = store.save("m1", "v2", [1], [[0.2, 0.8]])
    ...     loaded = store.load("m1", "v1")
    ...     print(saved.accuracy, loaded.predicted.tolist(), loaded.meta["parameters"])
    ...     print(store.models(), store.datasets("m1"), sorted(store.pairs("v1", "v2")))
    0.5 [0, 0] {'epochs': 3}
    ['m1'] ['v1', 'v2'] ['m1']
    """

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def _paths(self, model: str, dataset: str):
        for kind, name in (("model", model), ("dataset", dataset)):
            if not _NAME.match(name):
                raise ValueError(f"{kind} name {name!r} must be letters, digits and . _ - + (no slashes)")
        folder = self.root / model
        return folder / f"{dataset}.npz", folder / f"{dataset}.json"

    def has(self, model: str, dataset: str) -> bool:
        """Whether predictions of ``model`` on ``dataset`` are stored."""
        npz, sidecar = self._paths(model, dataset)
        return npz.is_file() and sidecar.is_file()

    def save(
        self, model: str, dataset: str, labels: ArrayLike, probs: ArrayLike, parameters: dict | None = None
    ) -> Predictions:
        """Validate and write one prediction (npz first, sidecar last, both atomic)."""
        labels, probs = validate_predictions(labels, probs, f"{model}/{dataset}")
        npz, sidecar = self._paths(model, dataset)
        buf = io.BytesIO()
        np.savez_compressed(buf, labels=labels, probs=probs)
        atomic_write_bytes(npz, buf.getvalue())
        meta = {
            "model": model,
            "dataset": dataset,
            "n": int(len(labels)),
            "n_classes": int(probs.shape[1]),
            "accuracy": float((probs.argmax(axis=1) == labels).mean()),
            "parameters": parameters or {},
        }
        atomic_write_json(sidecar, meta)
        return Predictions(model, dataset, labels, probs, meta)

    def load(self, model: str, dataset: str) -> Predictions:
        """Read and validate one prediction; errors name the file and what was expected."""
        npz, sidecar = self._paths(model, dataset)
        if not npz.is_file() or not sidecar.is_file():
            raise FileNotFoundError(
                f"no predictions for model {model!r} on {dataset!r}: expected {npz} and {sidecar}"
            )
        try:
            with np.load(npz, allow_pickle=False) as data:
                arrays = {k: data[k] for k in ("labels", "probs") if k in data.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise ValueError(f"{npz} is not a readable .npz of numeric arrays: {exc}") from exc
        missing = {"labels", "probs"} - set(arrays)
        if missing:
            raise ValueError(f"{npz}: missing array(s) {sorted(missing)}; expected 'labels' and 'probs'")
        labels, probs = arrays["labels"], arrays["probs"]
        labels, probs = validate_predictions(labels, probs, str(npz))
        try:
            meta = json.loads(sidecar.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ValueError(f"{sidecar} is not valid JSON: {exc}") from exc
        return Predictions(model, dataset, labels, probs, meta)

    def pairs(
        self, first: str, second: str, models: list[str] | None = None
    ) -> dict[str, tuple[Predictions, Predictions]]:
        """``{model: (predictions on first, predictions on second)}`` for every model that has both.

        Raises
        ------
        ValueError
            When the folder holds no model with predictions on both datasets (the message lists what
            it found), or when two predictions of a model have different numbers of classes.
        """
        if not self.root.is_dir():
            raise ValueError(f"prediction folder {self.root} does not exist")
        names = models if models is not None else self.models()
        both = [m for m in names if self.has(m, first) and self.has(m, second)]
        if not both:
            found = {m: self.datasets(m) for m in self.models()}
            raise ValueError(
                f"no model in {self.root} has predictions on both {first!r} and {second!r} "
                f"(expected <model>/{first}.npz and <model>/{second}.npz with .json sidecars); found: {found or 'nothing'}"
            )
        out = {}
        for m in both:
            a, b = self.load(m, first), self.load(m, second)
            if a.probs.shape[1] != b.probs.shape[1]:
                raise ValueError(
                    f"model {m!r}: {first} has {a.probs.shape[1]} classes but {second} has {b.probs.shape[1]}"
                )
            out[m] = (a, b)
        return out

    def labels(self, dataset: str, models: list[str] | None = None) -> np.ndarray:
        """The true labels of ``dataset``, which every model's stored predictions must agree on.

        Parameters
        ----------
        dataset : str
            A dataset name in the store.
        models : list of str, optional
            The models to read (default: every model with predictions on ``dataset``).

        Returns
        -------
        numpy.ndarray of int64

        Raises
        ------
        ValueError
            If no model has predictions on ``dataset``, or two models' label arrays differ (the message
            names both models and the first image where they disagree).

        Examples
        --------
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = PredictionStore(tmp.name)
        >>> _ = store.save("a", "v1", [0, 1], [[0.9, 0.1], [0.6, 0.4]])
        >>> _ = store.save("b", "v1", [0, 0], [[0.9, 0.1], [0.6, 0.4]])
        >>> store.labels("v1", ["a"]).tolist()
        [0, 1]
        >>> store.labels("v1")
        Traceback (most recent call last):
        ...
        ValueError: the stored labels of 'v1' differ between models 'a' and 'b' (first at image 1: 1 vs 0); predictions of one dataset must come from the same files
        >>> tmp.cleanup()
        """
        names = [m for m in (models if models is not None else self.models()) if self.has(m, dataset)]
        if not names:
            raise ValueError(f"no model in {self.root} has predictions on {dataset!r}")
        first = self.load(names[0], dataset).labels
        for other in names[1:]:
            labels = self.load(other, dataset).labels
            if len(labels) != len(first):
                where = f"{len(first)} vs {len(labels)} images"
            elif not np.array_equal(labels, first):
                i = int(np.flatnonzero(labels != first)[0])
                where = f"first at image {i}: {first[i]} vs {labels[i]}"
            else:
                continue
            raise ValueError(
                f"the stored labels of {dataset!r} differ between models {names[0]!r} and {other!r} ({where}); "
                f"predictions of one dataset must come from the same files"
            )
        return first

    def models(self) -> list[str]:
        """Models with stored predictions."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and any(p.glob("*.json")))

    def datasets(self, model: str) -> list[str]:
        """Datasets on which ``model`` has stored predictions."""
        return sorted(p.stem for p in (self.root / model).glob("*.json") if p.with_suffix(".npz").is_file())
