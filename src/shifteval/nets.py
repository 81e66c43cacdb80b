"""Networks and the one training loop of the project.

Every torch network the chapters train is defined here — the zoo's small CNNs and timm models
(:mod:`shifteval.zoo.models` adds their specifications), the MLM paper's CNN, the OOD-aware AutoEval
feature networks — and trained by :func:`fit_torch`; :func:`predict_torch` gives softmax probabilities.
torch is imported lazily so that the rest of the library loads without it.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    import torch

# --- torch models --------------------------------------------------------------------------------


def torch_module() -> ModuleType:
    """The torch module, imported on first use so that the rest of the library loads without it.

    Examples
    --------
    >>> torch_module().__name__
    'torch'
    """
    import torch

    return torch


#: Pixels per forward pass when predicting (:func:`batch_size`).
PIXELS_PER_BATCH = 2**18


def batch_size(side: int, batch: int | None = None) -> int:
    """Images per forward pass when predicting on ``side``×``side`` images: 2^18 pixels, a power of two.

    A large batch of large images moves the first layers' activations out of the CPU's caches. Measured
    on 4,096 images, two threads: the MLM paper's CNN on 28×28 digits 0.30 s in batches of 1,024 against
    0.10 s in batches of 256, OOD-AutoEval's CNN 1.68 s against 0.60 s, resnet10t 1.74 s against 1.55 s;
    on 16×16 images the zoo's resnet18 is faster in batches of 1,024 (0.36 s against 0.41 s), which this
    rule keeps. A network computes each image alone (evaluation mode), so the batch does not change these
    networks' outputs (measured: identical bit for bit).

    Parameters
    ----------
    side : int
        The images' side in pixels.
    batch : int, optional
        A caller's own choice, returned as it is once checked.

    Returns
    -------
    int
        At least 1.

    Raises
    ------
    ValueError
        If ``batch`` is below 1.

    Examples
    --------
    >>> batch_size(28), batch_size(16), batch_size(224), batch_size(28, 7)
    (256, 1024, 4, 7)
    """
    if batch is None:
        return max(1, 2 ** int(np.floor(np.log2(PIXELS_PER_BATCH / side**2))))
    if int(batch) < 1:
        raise ValueError(f"batch must be a positive number of images, got {batch}")
    return int(batch)


def channels_last(model: torch.nn.Module) -> torch.nn.Module:
    """Store ``model``'s 4-D weights channels-last (NHWC), in place; the layout every network computes in.

    On CPU, oneDNN's convolution and max-pooling kernels are faster in this layout. Measured on the
    project's networks (one training step, batch 128, one thread): the small CNNs 1.35-1.7×, MobileNetV3
    3.0×, the ResNets 1.04-1.09×; inference of the OOD-AutoEval networks 1.4-1.5× (two threads). The
    layout changes the order of floating-point sums (differences of ~1e-7 in one forward pass), so every
    training and prediction path uses it, and a network computes the same numbers whichever path runs it.

    Parameters
    ----------
    model : torch.nn.Module
        Any network; modules without 4-D weights are unchanged.

    Returns
    -------
    torch.nn.Module
        ``model`` itself.

    Examples
    --------
    >>> net = channels_last(small_cnn(4, 1))
    >>> net[0].weight.is_contiguous(memory_format=torch.channels_last)
    True
    """
    # Module.to documents memory_format; torch's type overloads do not list it
    return model.to(memory_format=torch_module().channels_last)  # type: ignore[call-overload]


def small_cnn(width: int = 16, depth: int = 2, n_classes: int = 10) -> torch.nn.Module:
    """``depth`` blocks of conv3×3 → BN → ReLU (→ max-pool after the first two), 2×2 average pool, linear head.

    Parameters
    ----------
    width : int
        Channels of the first block; block ``i`` has ``width · 2^min(i, 2)``.
    depth : int
        Number of conv blocks.
    n_classes : int
        Outputs of the linear head.

    Returns
    -------
    torch.nn.Sequential
        Maps (B, 1, H, W) images to (B, n_classes) logits.

    Examples
    --------
    >>> small_cnn(width=4, depth=3)(torch.zeros(2, 1, 16, 16)).shape
    torch.Size([2, 10])
    """
    torch = torch_module()
    nn = torch.nn
    layers, channels = [], 1
    for i in range(depth):
        out = width * (2 ** min(i, 2))
        layers += [nn.Conv2d(channels, out, 3, padding=1), nn.BatchNorm2d(out), nn.ReLU()]
        if i < 2:
            layers.append(nn.MaxPool2d(2))
        channels = out
    layers += [nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(4 * channels, n_classes)]
    return nn.Sequential(*layers)


def focal_loss(logits: torch.Tensor, target: torch.Tensor, gamma: float = 2.0) -> torch.Tensor:
    """Focal loss (Lin et al. 2017): cross-entropy down-weighted by ``(1 - p_t)^gamma``.

    Parameters
    ----------
    logits : torch.Tensor, shape (B, K)
        Unnormalised class scores.
    target : torch.Tensor of int64, shape (B,)
        True classes.
    gamma : float
        Focusing parameter; 0 gives plain cross-entropy.

    Returns
    -------
    torch.Tensor
        The mean loss over the batch (a scalar).

    Examples
    --------
    >>> z, y = torch.tensor([[2.0, 0.0], [0.0, 0.0]]), torch.tensor([0, 1])
    >>> bool(torch.isclose(focal_loss(z, y, gamma=0.0), torch.nn.functional.cross_entropy(z, y)))
    True
    >>> bool(focal_loss(z, y) < focal_loss(z, y, gamma=0.0))
    True
    """
    torch = torch_module()
    logp = torch.log_softmax(logits, dim=1).gather(1, target[:, None]).squeeze(1)
    return (-((1 - logp.exp()) ** gamma) * logp).mean()


def loss_function(name: str, params: dict) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """The training loss called ``name``: ``ce``, ``label_smoothing`` (``smoothing``) or ``focal`` (``gamma``).

    Parameters
    ----------
    name : {"ce", "label_smoothing", "focal"}
        Cross-entropy, label-smoothed cross-entropy, or :func:`focal_loss`.
    params : dict
        ``smoothing`` (default 0.1) for ``label_smoothing``, ``gamma`` (default 2.0) for ``focal``; other
        keys are ignored.

    Returns
    -------
    callable(logits, target) -> torch.Tensor
        The mean loss over a batch.

    Raises
    ------
    ValueError
        For an unknown ``name``.

    Examples
    --------
    >>> z, y = torch.tensor([[2.0, 0.0]]), torch.tensor([0])
    >>> ce, smooth = loss_function("ce", {}), loss_function("label_smoothing", {"smoothing": 0.2})
    >>> bool(smooth(z, y) > ce(z, y)), round(float(loss_function("focal", {"gamma": 0})(z, y)), 4)
    (True, 0.1269)
    """
    torch = torch_module()
    if name == "ce":
        return torch.nn.CrossEntropyLoss()
    if name == "label_smoothing":
        return torch.nn.CrossEntropyLoss(label_smoothing=params.get("smoothing", 0.1))
    if name == "focal":
        gamma = params.get("gamma", 2.0)
        return lambda logits, target: focal_loss(logits, target, gamma)
    raise ValueError(f"unknown loss {name!r}; valid: ce, label_smoothing, focal")


def paper_cnn(side: int = 28, n_classes: int = 10) -> torch.nn.Module:
    """The CNN of the MLM paper (Sikar et al., §3.1), sized for ``side``×``side`` inputs in [0, 1].

    conv 3×3 (16, padding 1) → ReLU → max-pool 2 → conv 3×3 (32, padding 1) → ReLU → max-pool 2 →
    FC 128 → ReLU → FC 10 (logits; log-softmax is applied by the loss). Inputs are normalised to
    mean 0.5, standard deviation 0.5 inside the model, as the paper's preprocessing did. For 28×28 this
    has the paper's 206,922 parameters.

    Parameters
    ----------
    side : int
        Image side in pixels (at least 4).
    n_classes : int
        Outputs of the last layer.

    Returns
    -------
    torch.nn.Sequential
        Maps (B, 1, side, side) images to (B, n_classes) logits.

    Raises
    ------
    ValueError
        If ``side < 4``.

    Examples
    --------
    >>> sum(p.numel() for p in paper_cnn().parameters())
    206922
    >>> paper_cnn(8)(torch.zeros(3, 1, 8, 8)).shape
    torch.Size([3, 10])
    """
    torch = torch_module()
    nn = torch.nn
    if side < 4:
        raise ValueError(f"paper_cnn needs images of at least 4×4 pixels, got side {side}")
    flat = 32 * (side // 4) ** 2
    return nn.Sequential(
        normalise(0.5, 0.5),
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(flat, 128), nn.ReLU(), nn.Linear(128, n_classes),
    )  # fmt: skip


def normalise(mean: float, std: float) -> torch.nn.Module:
    """A module computing ``(x - mean) / std`` (preprocessing inside the network).

    Parameters
    ----------
    mean, std : float
        Subtracted, then divided by.

    Returns
    -------
    torch.nn.Module
        Without parameters.

    Examples
    --------
    >>> normalise(0.5, 0.5)(torch.tensor([0.0, 0.5, 1.0])).tolist()
    [-1.0, 0.0, 1.0]
    """
    import torch

    class Normalise(torch.nn.Module):
        def forward(self, x):
            return (x - mean) / std

    return Normalise()


def fit_torch(
    model: torch.nn.Module,
    x_train: ArrayLike,
    y_train: ArrayLike,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int,
    optimizer: str = "adamw",
    weight_decay: float = 1e-4,
    lr_decay: float = 0.7,
    loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
    step_loss: Callable[..., torch.Tensor] | None = None,
    progress: Any = None,
) -> torch.nn.Module:
    """Train ``model`` on (N, H, W) images; the one training loop of the project.

    Parameters
    ----------
    model : torch.nn.Module
        Trained in place, its weights stored channels-last (:func:`channels_last`); maps (B, 1, H, W) to
        logits (or whatever ``step_loss`` expects).
    x_train : array_like, shape (N, H, W)
        Training images.
    y_train : array_like, shape (N,)
        Their classes.
    epochs, batch_size : int
        Passes over the data, and images per step.
    lr : float
        Peak (``adamw``: one-cycle schedule) or initial (``sgd``: multiplied by ``lr_decay`` after every
        epoch) learning rate.
    seed : int
        Seed of initialisation-independent randomness: batch order and anything ``step_loss`` draws.
    optimizer : {"adamw", "sgd"}
        AdamW with a one-cycle schedule, or SGD (momentum 0.9) with per-epoch exponential decay.
    weight_decay : float
        The optimiser's weight decay.
    lr_decay : float
        Per-epoch learning-rate factor (``sgd`` only).
    loss : callable(logits, target), optional
        Defaults to cross-entropy.
    step_loss : callable(model, xb, yb, generator) -> loss, optional
        Replaces ``loss(model(xb), yb)`` for multi-task training.
    progress : tqdm-like, optional
        Advanced once per epoch.

    Returns
    -------
    torch.nn.Module
        ``model`` itself, in eval mode.

    Raises
    ------
    ValueError
        For an unknown ``optimizer``.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> x, y = np.random.default_rng(0).random((16, 8, 8)), np.arange(16) % 2
    >>> m = fit_torch(small_cnn(4, 1, 2), x, y, epochs=2, batch_size=8, lr=1e-2, seed=0, optimizer="sgd")
    >>> m.training, predict_torch(m, x).shape
    (False, (16, 2))
    """
    torch = torch_module()
    gen = torch.Generator().manual_seed(int(seed))
    loss = loss or torch.nn.CrossEntropyLoss()
    step_loss = step_loss or (lambda m, xb, yb, g: loss(m(xb), yb))
    channels_last(model)
    x_arr = np.asarray(x_train, np.float32)
    steps = epochs * int(np.ceil(len(x_arr) / batch_size))
    opt, sched, per_step = _optimiser(model, optimizer, lr, weight_decay, lr_decay, steps)
    x = torch.from_numpy(x_arr)[:, None]
    y = torch.from_numpy(np.asarray(y_train, np.int64))
    model.train()
    for _ in range(epochs):
        _train_epoch(model, x, y, batch_size, step_loss, gen, opt, sched if per_step else None)
        if not per_step:
            sched.step()
        if progress is not None:
            progress.update(1)
    model.eval()
    return model


def _optimiser(model, optimizer: str, lr: float, weight_decay: float, lr_decay: float, steps: int) -> tuple:
    """The optimiser of :func:`fit_torch`, its learning-rate schedule, and whether it steps per batch.

    ``adamw``: AdamW with a one-cycle schedule over all ``steps`` (stepped after every batch); ``sgd``:
    SGD with momentum 0.9 and the learning rate multiplied by ``lr_decay`` after every epoch.

    Raises
    ------
    ValueError
        For an unknown ``optimizer``.
    """
    torch = torch_module()
    if optimizer == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
        return opt, torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps), True
    if optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay)
        return opt, torch.optim.lr_scheduler.ExponentialLR(opt, gamma=lr_decay), False
    raise ValueError(f"optimizer must be 'adamw' or 'sgd', got {optimizer!r}")


def _train_epoch(model, x, y, batch_size: int, step_loss, gen, opt, step_schedule=None) -> None:
    """One pass of :func:`fit_torch` over ``(x, y)`` in a random order drawn from ``gen``, one step per batch.

    ``step_schedule``, when given, is stepped after every optimiser step (a per-batch schedule).
    """
    order = torch_module().randperm(len(x), generator=gen)
    for i in range(0, len(x), batch_size):
        idx = order[i : i + batch_size]
        opt.zero_grad()
        step_loss(model, x[idx], y[idx], gen).backward()
        opt.step()
        if step_schedule is not None:
            step_schedule.step()


def predict_torch(model: torch.nn.Module, images: ArrayLike, batch: int | None = None) -> np.ndarray:
    """Softmax probabilities of a torch model on (N, H, W) images.

    Parameters
    ----------
    model : torch.nn.Module
        Maps (B, 1, H, W) images to logits; call it in eval mode. Its weights are stored channels-last
        (:func:`channels_last`).
    images : array_like, shape (N, H, W)
        The images.
    batch : int, optional
        Images per forward pass; :func:`batch_size` of the images' side by default.

    Returns
    -------
    ndarray of float32, shape (N, K)
        Rows sum to 1 (softmax taken in float64).

    Raises
    ------
    ValueError
        If ``batch`` is below 1.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> p = predict_torch(paper_cnn(8).eval(), np.zeros((5, 8, 8)), batch=2)
    >>> p.shape, p.dtype.name, bool(np.allclose(p.sum(axis=1), 1, atol=1e-6))
    ((5, 10), 'float32', True)
    """
    torch = torch_module()
    out = []
    channels_last(model)
    with torch.inference_mode():
        x = torch.from_numpy(np.asarray(images, np.float32))[:, None]
        batch = batch_size(x.shape[-1], batch)
        for i in range(0, len(x), batch):
            out.append(torch.softmax(model(x[i : i + batch]).double(), dim=1).numpy())
    return np.concatenate(out).astype(np.float32)
