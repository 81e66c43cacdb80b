"""Energy scores and the threshold that turns them into an OOD decision (§3.4-3.5; Liu et al. 2020, Eq. 1).

The detector whose energies these are is trained in :mod:`shifteval.autoeval.detector`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp


def energy(logits: ArrayLike, temperature: float = 1.0) -> NDArray[np.float64]:
    """Energy score E(x) = −T·logsumexp(f(x)/T) (§3.4; Liu et al. 2020, Eq. 1): low for ID inputs.

    Parameters
    ----------
    logits : array_like, shape (N, K)
        The network's logits f(x).
    temperature : float
        T > 0.

    Returns
    -------
    ndarray, shape (N,)
        One energy per input.

    Raises
    ------
    ValueError
        If ``temperature`` is not positive.

    Examples
    --------
    >>> bool(np.isclose(energy([[0.0, 0.0]])[0], -np.log(2)))
    True
    >>> energy([[10.0, -10.0], [0.0, 0.0]]).round(3).tolist()  # a confident input has lower energy
    [-10.0, -0.693]
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    return -temperature * logsumexp(np.asarray(logits, dtype=np.float64) / temperature, axis=1)


def energy_threshold(train_energies: ArrayLike, percentile: float = 99.5) -> float:
    """τ = the ``percentile``-th percentile of the training set's energies (§3.5).

    Parameters
    ----------
    train_energies : array_like, shape (N,)
        Energies of the classifier's training images.
    percentile : float
        In (0, 100]; images with energy ≤ τ are judged ID.

    Returns
    -------
    float
        τ (``numpy.percentile``, linear interpolation).

    Raises
    ------
    ValueError
        If ``percentile`` is not in (0, 100].

    Examples
    --------
    >>> energy_threshold(np.arange(101.0), 99.5), energy_threshold([1.0, 3.0], 50)
    (99.5, 2.0)
    """
    if not 0 < percentile <= 100:
        raise ValueError(f"threshold percentile must be in (0, 100], got {percentile}")
    return float(np.percentile(np.asarray(train_energies), percentile))


def auroc(id_energies: ArrayLike, ood_energies: ArrayLike) -> float:
    """Area under the ROC curve for telling OOD (high energy) from ID images; 1 = perfect, 0.5 = chance.

    Parameters
    ----------
    id_energies, ood_energies : array_like
        Energies of the ID images (negatives) and of the OOD images (positives).

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> auroc([0.0, 1.0], [2.0, 3.0]), auroc([0.0, 2.0], [1.0, 3.0])
    (1.0, 0.75)
    """
    from sklearn.metrics import roc_auc_score

    a, b = np.asarray(id_energies, float), np.asarray(ood_energies, float)
    return float(roc_auc_score(np.r_[np.zeros(len(a)), np.ones(len(b))], np.r_[a, b]))
