"""The outlier-exposure energy detector (§3.4; Liu et al. 2020, Eq. 9): a fine-tuned copy of a classifier.

Its margins, its loss (Eq. 9) and its training; the energy score itself is in
:mod:`shifteval.autoeval.energy`.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ..nets import channels_last
from .energy import energy
from .network import check_images, compute_outputs

if TYPE_CHECKING:
    import torch


def default_margins(model: torch.nn.Module, images: ArrayLike) -> tuple[float, float]:
    """(m_in, m_out) read off ``model``'s own energies on its training images.

    Their 25th and 99th percentiles. Liu et al. use −25 and −7 for a WideResNet on CIFAR-10; energies
    scale with the network.

    Parameters
    ----------
    model : torch.nn.Module
        A :func:`~shifteval.autoeval.network.feature_net`, in eval mode.
    images : array_like, shape (N, S, S)
        Its training images.

    Returns
    -------
    m_in, m_out : float
        ``m_in ≤ m_out``.

    Raises
    ------
    ValueError
        If ``images`` is not a non-empty (N, S, S) stack with S ≥ 8.

    Examples
    --------
    >>> from shifteval.autoeval.network import feature_net
    >>> _ = torch.manual_seed(0)
    >>> m_in, m_out = default_margins(feature_net(width=4).eval(), np.random.default_rng(0).random((6, 8, 8)))
    >>> m_in <= m_out
    True
    """
    e = energy(compute_outputs(model, images).logits)
    return float(np.percentile(e, 25)), float(np.percentile(e, 99))


def train_detector(
    model: torch.nn.Module,
    images: ArrayLike,
    labels: ArrayLike,
    outliers: ArrayLike,
    *,
    epochs: int = 10,
    lr: float = 1e-3,
    batch_size: int = 128,
    outlier_ratio: int = 2,
    margins: tuple[float, float] | None = None,
    weight: float = 0.1,
    momentum: float = 0.9,
    weight_decay: float = 5e-4,
    seed: int = 0,
    progress: Any = None,
) -> torch.nn.Module:
    """The OOD detector of Zhu et al. (§4.2): a copy of ``model`` fine-tuned with outlier exposure.

    Fine-tuned as Liu et al.'s reference code does (``wetliu/energy_ood``, ``CIFAR/train.py``,
    ``--score energy``).

    Each step concatenates a batch of ``batch_size`` training images and ``outlier_ratio``·``batch_size``
    auxiliary outliers and passes them through the network *in one forward pass* (so BatchNorm sees the
    mixture, as in the reference), with the loss :func:`outlier_exposure_loss` (Liu et al., Eq. 9); SGD
    with Nesterov momentum 0.9, weight decay 5·10⁻⁴, and a cosine schedule from ``lr`` to 10⁻⁶ over every
    step. Outliers are drawn in a random order, reshuffled whenever they run out. Unlike the
    reference there is no crop/flip augmentation (flipped digits are other digits). ``model`` is not changed.

    Parameters
    ----------
    model : torch.nn.Module
        The trained classifier (:func:`shifteval.autoeval.network.train_feature_net`).
    images, labels : array_like, shapes (N, S, S) and (N,)
        Its training set.
    outliers : array (M, S, S)
        Auxiliary outliers (:func:`shifteval.datasets.ood.auxiliary_outliers`), disjoint from every test
        OOD source.
    epochs : int
        10 in the reference.
    lr, batch_size, momentum, weight_decay
        The reference's 0.001, 128 (outliers 256), 0.9, 0.0005.
    outlier_ratio : int
        Outlier batch size over the training batch size (2 in the reference).
    margins : (m_in, m_out), optional
        Default :func:`default_margins` (the reference: −25, −7).
    weight : float
        λ = 0.1.
    seed : int
        Seeds batch and outlier order.
    progress : tqdm-like, optional
        Advanced once per epoch.

    Returns
    -------
    torch.nn.Module
        The detector, in evaluation mode.

    Raises
    ------
    ValueError
        For malformed images or outliers, a non-positive ``epochs``, ``batch_size`` or ``outlier_ratio``,
        or margins with ``m_in ≥ m_out``.

    Examples
    --------
    >>> from shifteval.autoeval.network import feature_net
    >>> _ = torch.manual_seed(0)
    >>> rng = np.random.default_rng(0)
    >>> model = feature_net(width=4).eval()
    >>> x, y, aux = rng.random((8, 8, 8)), np.arange(8) % 10, rng.random((16, 8, 8))
    >>> det = train_detector(model, x, y, aux, epochs=1, batch_size=8, margins=(-5.0, -1.0))
    >>> det is model, det.training
    (False, False)
    """
    import torch

    images = check_images(images, "training images")
    outliers = check_images(outliers, "auxiliary outliers")
    if epochs < 1 or batch_size < 1 or outlier_ratio < 1:
        raise ValueError("epochs, batch_size and outlier_ratio must be positive")
    m_in, m_out = _margins(model, images, margins)
    detector = channels_last(copy.deepcopy(model))
    gen = torch.Generator().manual_seed(int(seed))
    x = torch.from_numpy(images)[:, None]
    y = torch.from_numpy(np.asarray(labels, np.int64))
    opt, sched = _cosine_sgd(detector, lr, momentum, weight_decay, epochs * int(np.ceil(len(x) / batch_size)))
    aux = _OutlierStream(torch.from_numpy(outliers)[:, None], gen)
    detector.train()
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), batch_size):
            idx = order[i : i + batch_size]
            inliers, outliers_in_step = x[idx], aux.take(outlier_ratio * len(idx))
            _exposure_step(detector, inliers, y[idx], outliers_in_step, (m_in, m_out), weight, opt, sched)
        if progress is not None:
            progress.update(1)
    return detector.eval()


def _margins(model: torch.nn.Module, images: np.ndarray, margins: tuple | None) -> tuple[float, float]:
    """``(m_in, m_out)`` as given, or :func:`default_margins`; refused unless ``m_in < m_out``."""
    margins = default_margins(model, images) if margins is None else margins
    m_in, m_out = (float(m) for m in margins)
    if not m_in < m_out:
        raise ValueError(f"margins must satisfy m_in < m_out, got {margins}")
    return m_in, m_out


def _exposure_step(
    detector, inliers, target, outliers, margins: tuple[float, float], weight: float, opt, sched
) -> None:
    """One optimiser step on inliers and outliers passed together (BatchNorm sees the mixture)."""
    import torch

    logits, _ = detector(torch.cat([inliers, outliers]))
    loss = outlier_exposure_loss(logits, target, *margins, weight)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()


def outlier_exposure_loss(
    logits: torch.Tensor, target: torch.Tensor, m_in: float, m_out: float, weight: float
) -> torch.Tensor:
    """Liu et al. (2020), Eq. 9: cross-entropy on the inliers plus λ times the squared energy hinges.

    CE(in) + λ·(E_in[max(0, E(x_in) − m_in)²] + E_out[max(0, m_out − E(x_out))²]), with the energy
    E(x) = −logsumexp of the logits (:func:`shifteval.autoeval.energy.energy`).

    Parameters
    ----------
    logits : torch.Tensor, shape (B_in + B_out, K)
        The network's logits on a batch of inliers followed by a batch of outliers.
    target : torch.Tensor of int64, shape (B_in,)
        The inliers' classes; the first ``B_in`` rows of ``logits`` are the inliers.
    m_in, m_out : float
        The energy margins, ``m_in < m_out``.
    weight : float
        λ.

    Returns
    -------
    torch.Tensor
        The loss (a scalar).

    Examples
    --------
    >>> z = torch.tensor([[4.0, 0.0], [0.0, 0.0]])  # one inlier of class 0, then one outlier
    >>> ce = torch.nn.functional.cross_entropy(z[:1], torch.tensor([0]))
    >>> bool(outlier_exposure_loss(z, torch.tensor([0]), -3.0, -1.0, 0.1) == ce)  # E_in ≈ −4.0, E_out ≈ −0.7
    True
    >>> bool(outlier_exposure_loss(z, torch.tensor([0]), -3.0, 0.0, 0.1) > ce)  # E_out below m_out: penalised
    True
    """
    import torch

    n_in = len(target)
    e_in = -torch.logsumexp(logits[:n_in], 1)
    e_out = -torch.logsumexp(logits[n_in:], 1)
    return torch.nn.functional.cross_entropy(logits[:n_in], target) + weight * (
        torch.relu(e_in - m_in).pow(2).mean() + torch.relu(m_out - e_out).pow(2).mean()
    )


def _cosine_sgd(detector, lr: float, momentum: float, weight_decay: float, total: int) -> tuple:
    """SGD with Nesterov momentum and a cosine schedule from ``lr`` to 10⁻⁶ over ``total`` steps."""
    import torch

    opt = torch.optim.SGD(
        detector.parameters(), lr, momentum=momentum, weight_decay=weight_decay, nesterov=True
    )
    floor = 1e-6 / lr
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda step: floor + (1 - floor) * 0.5 * (1 + np.cos(step / total * np.pi))
    )
    return opt, sched


class _OutlierStream:
    """Auxiliary outliers in a random order drawn from ``gen``, reshuffled whenever they run out."""

    def __init__(self, outliers, gen) -> None:
        import torch

        self.outliers, self.gen = outliers, gen
        self.order, self.used = torch.randperm(len(outliers), generator=gen), 0

    def take(self, wanted: int):
        """The next ``min(wanted, M)`` outliers, after a reshuffle if fewer than that are left."""
        import torch

        k = min(wanted, len(self.outliers))
        if self.used + k > len(self.outliers):
            self.order, self.used = torch.randperm(len(self.outliers), generator=self.gen), 0
        idx, self.used = self.order[self.used : self.used + k], self.used + k
        return self.outliers[idx]
