"""The dataset representation of §3.2: feature mean, feature variance and the Fréchet distance.

For a set D with penultimate features F = {φ(x) : x ∈ D},
``h(D) = [μ_F, σ²_F, FD(D, D_train)]`` — the mean first, then the per-dimension *variance* (not the
standard deviation), then the Fréchet distance to the training set as the last element.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from .network import Outputs


def _sqrt_psd(m):
    vals, vecs = np.linalg.eigh((m + m.T) / 2)
    return (vecs * np.sqrt(np.clip(vals, 0, None))) @ vecs.T


def frechet_distance(
    mu1: ArrayLike, cov1: ArrayLike, mu2: ArrayLike, cov2: ArrayLike, *, sqrt_cov1: ArrayLike | None = None
) -> float:
    """FD = ‖μ₁ − μ₂‖² + Tr(Σ₁ + Σ₂ − 2(Σ₁Σ₂)^½) (Zhu et al., §3.2; Heusel et al. 2017).

    Tr((Σ₁Σ₂)^½) is the sum of square roots of the eigenvalues of the symmetric PSD matrix
    Σ₁^½ Σ₂ Σ₁^½ (same eigenvalues as Σ₁Σ₂), which stays real and finite for singular covariances where
    ``scipy.linalg.sqrtm(Σ₁Σ₂)`` returns complex noise.

    Parameters
    ----------
    mu1, mu2 : array (d,)
        The two feature means.
    cov1, cov2 : array (d, d)
        The two feature covariances (symmetric positive semi-definite).
    sqrt_cov1 : array (d, d), optional
        Σ₁^½ when it is already known (the training set's, :attr:`Reference.sqrt_cov`): FD is symmetric,
        so a reference set put first needs its square root once, not once per set.

    Returns
    -------
    float
        Non-negative.

    Examples
    --------
    >>> frechet_distance([0.0, 0.0], np.eye(2), [3.0, 4.0], np.eye(2))
    25.0
    """
    mu1, mu2 = np.asarray(mu1, float), np.asarray(mu2, float)
    cov1, cov2 = np.atleast_2d(cov1).astype(float), np.atleast_2d(cov2).astype(float)
    s1 = _sqrt_psd(cov1) if sqrt_cov1 is None else np.asarray(sqrt_cov1, float)
    cross = np.linalg.eigvalsh(s1 @ cov2 @ s1)
    tr_sqrt = np.sqrt(np.clip(cross, 0, None)).sum()
    return float(max(np.sum((mu1 - mu2) ** 2) + np.trace(cov1) + np.trace(cov2) - 2 * tr_sqrt, 0.0))


@dataclass
class Reference:
    """The training set's feature statistics and energies: what every representation is measured against."""

    mean: np.ndarray
    cov: np.ndarray
    energies: np.ndarray

    @cached_property
    def sqrt_cov(self) -> np.ndarray:
        """Σ^½ of the training features, computed once (an eigendecomposition: 76 ms at d = 512)."""
        return _sqrt_psd(np.atleast_2d(self.cov).astype(float))


def reference(outputs: Outputs) -> Reference:
    """Feature mean and covariance of the training set, and its energies (the detector's, if any).

    Parameters
    ----------
    outputs : Outputs
        The classifier's outputs on its training set.

    Returns
    -------
    Reference
        ``mean`` (d,), ``cov`` (d, d) (``np.cov``, ``ddof=1``) and ``energies`` (N,).

    Examples
    --------
    >>> from shifteval.autoeval.network import Outputs
    >>> ref = reference(Outputs(np.zeros((3, 2)), np.array([[0.0, 1.0], [2.0, 1.0], [4.0, 1.0]])))
    >>> ref.mean.tolist(), ref.cov.tolist(), ref.energies.round(4).tolist()
    ([2.0, 1.0], [[4.0, 0.0], [0.0, 0.0]], [-0.6931, -0.6931, -0.6931])
    """
    f = outputs.features
    return Reference(f.mean(axis=0), np.cov(f, rowvar=False), outputs.energies())


def representation(features: ArrayLike, ref: Reference) -> NDArray[np.float64]:
    """``h = [μ, σ², FD(D, D_train)]`` (§3.2), of length 2·d + 1.

    Parameters
    ----------
    features : array (n, d), n ≥ 2
        Penultimate features of the set's images.
    ref : Reference
        The training set's statistics (:func:`reference`).

    Returns
    -------
    ndarray (2·d + 1,)
        Feature means, feature variances (``ddof=0``), then the Fréchet distance.

    Raises
    ------
    ValueError
        If ``features`` is not 2-D with at least two rows.

    Examples
    --------
    >>> ref = Reference(np.zeros(2), np.eye(2), np.zeros(1))
    >>> representation([[1.0, 0.0], [1.0, 2.0]], ref).round(3).tolist()  # FD = 2 + (2 + 2) − 2·√2
    [1.0, 1.0, 0.0, 1.0, 3.172]
    """
    f = np.asarray(features, dtype=np.float64)
    if f.ndim != 2 or len(f) < 2:
        raise ValueError(f"a representation needs at least two images' features, got shape {f.shape}")
    fd = frechet_distance(ref.mean, ref.cov, f.mean(axis=0), np.cov(f, rowvar=False), sqrt_cov1=ref.sqrt_cov)
    return np.concatenate([f.mean(axis=0), f.var(axis=0), [fd]])


def meta_targets(
    outputs: list[Outputs], labels: list[ArrayLike], ref: Reference
) -> tuple[np.ndarray, np.ndarray]:
    """The regression data of a list of meta-sets (§3.3).

    Each set's representation (FD in the last column) and the classifier's accuracy on it.

    Parameters
    ----------
    outputs : list of Outputs
        The classifier's outputs on each meta-set.
    labels : list of array_like
        Each meta-set's true classes.
    ref : Reference
        The training set's statistics (:func:`reference`).

    Returns
    -------
    reps : ndarray, shape (n_sets, 2·d + 1)
        :func:`representation` of each set.
    acc : ndarray, shape (n_sets,)
        The classifier's accuracy on each set.

    Raises
    ------
    ValueError
        If ``outputs`` and ``labels`` differ in length.

    Examples
    --------
    >>> from shifteval.autoeval.network import Outputs
    >>> ref = Reference(np.zeros(2), np.eye(2), np.zeros(1))
    >>> o = Outputs(np.array([[2.0, 0.0], [0.0, 2.0]]), np.eye(2))
    >>> reps, acc = meta_targets([o, o], [[0, 1], [0, 0]], ref)
    >>> reps.shape, acc.tolist()
    ((2, 5), [1.0, 0.5])
    """
    reps = np.stack([representation(o.features, ref) for o in outputs])
    acc = np.array([float((o.logits.argmax(1) == y).mean()) for o, y in zip(outputs, labels, strict=True)])
    return reps, acc
