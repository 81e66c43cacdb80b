"""Severities of the perturbed ID test sets, set for the data they perturb.

Zhu et al. evaluate on ID test sets under covariate shift (§4.4 and Figure 5: CIFAR-10 and ImageNet
with corruptions). A perturbation's strength means nothing without the data and classifier it is
applied to: the fixed table :data:`shifteval.corruptions.SEVERITY` was set for a CNN on the replication
world, and on MNIST its level 3 leaves fog at 16% accuracy and Gaussian noise at chance. So each
:class:`SeverityTable` names the data it was made for, :func:`shifteval.autoeval.pools.id_source`
refuses a table made for other data, and :func:`severity_table` calibrates one on a *calibration model*
(the first backbone's architecture, its own seed, trained on part of the classifier's training pool)
and *calibration images* (the validation pool, never a test image) wherever no table was made for the
data: level ℓ is the strength at which the calibration model keeps ``1 − 0.05 ℓ`` of its clean
accuracy (level 3: 85%), a moderate shift.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import ArrayLike

from .. import corruptions
from ..datasets.splits import WORLD, Data
from .streams import stream_seed

if TYPE_CHECKING:
    import torch

#: Share of clean accuracy that each severity level costs the calibration model (level ℓ keeps 1 − ℓ·STEP).
STEP = 0.05


@dataclass(frozen=True)
class SeverityTable:
    """Strengths of perturbations at levels 1-10, and the data they were made for.

    Attributes
    ----------
    dataset : str
        :attr:`shifteval.datasets.splits.Data.dataset` of the data the table was made for.
    strengths : dict of str -> sequence of 10 floats
        As :data:`shifteval.corruptions.SEVERITY`.
    how : str
        How the table was made (for the page).
    clean_accuracy : float
        The calibration model's accuracy on the clean calibration images (NaN for a fixed table).
    accuracy : dict of str -> list of 10 floats
        The calibration model's accuracy at each level's strength (empty for a fixed table).
    """

    dataset: str
    strengths: dict
    how: str
    clean_accuracy: float = float("nan")
    accuracy: dict = field(default_factory=dict)


#: The fixed table, made for a CNN on the replication world.
WORLD_TABLE = SeverityTable(
    WORLD,
    corruptions.SEVERITY,
    "the fixed table shifteval.corruptions.SEVERITY, set for a CNN on the replication world",
)


def check_table(table: SeverityTable, dataset: str) -> None:
    """Refuse a severity table made for other data.

    Parameters
    ----------
    table : SeverityTable
        The table to apply.
    dataset : str
        :attr:`~shifteval.datasets.splits.Data.dataset` of the images to perturb.

    Raises
    ------
    ValueError
        If the table was made for another dataset (the message names both and the remedy).

    Examples
    --------
    >>> check_table(WORLD_TABLE, "replication world")
    >>> check_table(WORLD_TABLE, "mnist")
    Traceback (most recent call last):
    ...
    ValueError: the severity table was made for the replication world, not for mnist: calibrate one on this data (shifteval.autoeval.severity_table)
    """
    if table.dataset != dataset:
        raise ValueError(
            f"the severity table was made for the {table.dataset}, not for {dataset}: calibrate one on this "
            "data (shifteval.autoeval.severity_table)"
        )


def calibrate_table(
    model: torch.nn.Module,
    images: ArrayLike,
    labels: ArrayLike,
    names: Sequence[str],
    dataset: str,
    *,
    seed: int = 0,
    points: int = 16,
) -> SeverityTable:
    """Calibrate perturbation strengths so that level ℓ keeps ``1 − 0.05 ℓ`` of a model's clean accuracy.

    Parameters
    ----------
    model : torch.nn.Module
        The calibration model (a :func:`~shifteval.autoeval.network.feature_net`), never an evaluated one.
    images, labels : array_like
        Calibration images (N, S, S) in [0, 1] and their classes, never evaluated test images.
    names : sequence of str
        Perturbations to calibrate (:data:`shifteval.corruptions.CORRUPTIONS`).
    dataset : str
        The data the images come from (the table's :attr:`SeverityTable.dataset`).
    seed : int
        Seed of the perturbations' randomness.
    points : int
        Strengths evaluated per perturbation, over :data:`shifteval.corruptions.GRIDS`.

    Returns
    -------
    SeverityTable

    Raises
    ------
    ValueError
        For an unknown perturbation.

    Examples
    --------
    >>> from shifteval.autoeval.network import train_feature_net
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.random((40, 8, 8)).astype(np.float32), np.arange(40) % 4
    >>> x[y == 1, :4] += 0.8; x[y == 2, 4:] += 0.8; x = np.clip(x, 0, 1)
    >>> net = train_feature_net(x, y, epochs=2, batch_size=8, width=4)
    >>> t = calibrate_table(net, x, y, ["fog"], "toy", points=4)
    >>> t.dataset, len(t.strengths["fog"]), len(t.accuracy["fog"])
    ('toy', 10, 10)
    """
    from .network import compute_outputs

    unknown = sorted(set(names) - set(corruptions.CORRUPTIONS))
    if unknown:
        raise ValueError(f"unknown perturbation(s) {unknown}; valid: {', '.join(corruptions.CORRUPTIONS)}")
    labels = np.asarray(labels)

    def accuracy(x):
        return float((compute_outputs(model, x).logits.argmax(1) == labels).mean())

    clean = accuracy(images)
    targets = [clean * (1 - STEP * level) for level in corruptions.LEVELS]
    strengths: dict[str, list[float]] = {}
    reached: dict[str, list[float]] = {}
    for name in names:
        grid = np.linspace(*corruptions.GRIDS[name], points)
        found = cast(
            list[float],
            corruptions.calibrate(
                lambda n, t: accuracy(corruptions.apply(images, n, t, seed)), name, grid, targets
            ),
        )
        strengths[name] = [float(t) for t in found]
        reached[name] = [accuracy(corruptions.apply(images, name, t, seed)) for t in strengths[name]]
    how = (
        f"calibrated on {len(labels):,} held-out images with a calibration model (clean accuracy {clean:.1%}): "
        f"level ℓ keeps {1:.0%} − {STEP:.0%}·ℓ of it"
    )
    return SeverityTable(dataset, strengths, how, clean, reached)


def severity_table(
    data: Data,
    fit: tuple,
    calibration: tuple,
    names: Sequence[str],
    *,
    arch: str = "cnn",
    epochs: int = 3,
    n_train: int = 5000,
    n_images: int = 1000,
    seed: int = 0,
) -> SeverityTable:
    """The severity table for ``data``: the fixed table where it was made for it, else a calibrated one.

    Parameters
    ----------
    data : Data
        The labeled splits (their :attr:`~shifteval.datasets.splits.Data.dataset`).
    fit : (images, labels)
        The classifier's training pool; the calibration model trains on its first ``n_train`` images.
    calibration : (images, labels)
        Held-out images (the validation pool); the first ``n_images`` are the calibration images.
    names : sequence of str
        Perturbations used by the ID sources.
    arch, epochs : str, int
        The calibration model's architecture and training epochs.
    n_train, n_images : int
        Images of the calibration model's training and of the calibration.
    seed : int
        The chapter's seed (stream ``calibration``).

    Returns
    -------
    SeverityTable

    Examples
    --------
    >>> from shifteval.datasets.splits import Data
    >>> severity_table(Data({}, "world"), ((), ()), ((), ()), ["fog"]) is WORLD_TABLE
    True
    """
    if data.dataset == WORLD or not names:
        return WORLD_TABLE
    from .network import train_feature_net

    (x, y), (xc, yc) = fit, calibration
    model = train_feature_net(
        x[:n_train], y[:n_train], arch=arch, epochs=epochs, seed=stream_seed(seed, "calibration")
    )
    return calibrate_table(
        model,
        xc[:n_images],
        yc[:n_images],
        sorted(set(names)),
        data.dataset,
        seed=stream_seed(seed, "calibration", "perturb"),
    )


def perturbations(sources: Sequence[str]) -> list[str]:
    """The perturbations named by ID sources (``v1+fog@3`` -> ``fog``).

    Parameters
    ----------
    sources : sequence of str
        ID source names, as :func:`shifteval.autoeval.pools.id_source` reads them.

    Returns
    -------
    list of str
        The perturbations, in the sources' order.

    Examples
    --------
    >>> perturbations(["v1", "v1+fog@3", "test+motion_blur@2"])
    ['fog', 'motion_blur']
    """
    return [s.partition("+")[2].partition("@")[0] for s in sources if "+" in s]
