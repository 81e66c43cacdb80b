"""Networks and the one training loop of the project.

Every torch network the chapters train is defined here — the zoo's small CNNs and timm models
(:mod:`shifteval.zoo.models` adds their specifications), the MLM paper's CNN, the OOD-aware AutoEval
feature networks — and trained by :func:`fit_torch`; :func:`predict_torch` gives softmax probabilities.
torch is imported lazily so that the rest of the library loads without it.
"""

from __future__ import annotations

import numpy as np

# --- torch models --------------------------------------------------------------------------------


def _torch():
    import torch

    return torch


torch_module = _torch  # the lazily imported torch module


def small_cnn(width: int = 16, depth: int = 2, n_classes: int = 10):
    """``depth`` blocks of conv3×3 → BN → ReLU (→ max-pool after the first two), 2×2 average pool, linear head."""
    torch = _torch()
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


def focal_loss(logits, target, gamma: float = 2.0):
    """Focal loss (Lin et al. 2017): cross-entropy down-weighted by ``(1 - p_t)^gamma``."""
    torch = _torch()
    logp = torch.log_softmax(logits, dim=1).gather(1, target[:, None]).squeeze(1)
    return (-((1 - logp.exp()) ** gamma) * logp).mean()


def loss_function(name: str, params: dict):
    """The training loss called ``name``: ``ce``, ``label_smoothing`` (``smoothing``) or ``focal`` (``gamma``)."""
    torch = _torch()
    if name == "ce":
        return torch.nn.CrossEntropyLoss()
    if name == "label_smoothing":
        return torch.nn.CrossEntropyLoss(label_smoothing=params.get("smoothing", 0.1))
    if name == "focal":
        gamma = params.get("gamma", 2.0)
        return lambda logits, target: focal_loss(logits, target, gamma)
    raise ValueError(f"unknown loss {name!r}; valid: ce, label_smoothing, focal")


def paper_cnn(side: int = 28, n_classes: int = 10):
    """The CNN of the MLM paper (Sikar et al., §3.1), sized for ``side``×``side`` inputs in [0, 1].

    conv 3×3 (16, padding 1) → ReLU → max-pool 2 → conv 3×3 (32, padding 1) → ReLU → max-pool 2 →
    FC 128 → ReLU → FC 10 (logits; log-softmax is applied by the loss). Inputs are normalised to
    mean 0.5, standard deviation 0.5 inside the model, as the paper's preprocessing did. For 28×28 this
    has the paper's 206,922 parameters.
    """
    torch = _torch()
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


def normalise(mean: float, std: float):
    """A module computing ``(x - mean) / std`` (preprocessing inside the network)."""
    torch = _torch()

    class Normalise(torch.nn.Module):
        def forward(self, x):
            return (x - mean) / std

    return Normalise()


def fit_torch(
    model,
    x_train,
    y_train,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int,
    optimizer: str = "adamw",
    weight_decay: float = 1e-4,
    lr_decay: float = 0.7,
    loss=None,
    step_loss=None,
    progress=None,
):
    """Train ``model`` on (N, H, W) images; the one training loop of the project.

    Parameters
    ----------
    model : torch.nn.Module
    x_train : ndarray, shape (N, H, W)
    y_train : ndarray, shape (N,)
    epochs, batch_size : int
    lr : float
        Peak (``adamw``: one-cycle schedule) or initial (``sgd``: multiplied by ``lr_decay`` after every
        epoch) learning rate.
    seed : int
        Seed of initialisation-independent randomness: batch order and anything ``step_loss`` draws.
    optimizer : {"adamw", "sgd"}
        AdamW with a one-cycle schedule, or SGD (momentum 0.9) with per-epoch exponential decay.
    loss : callable(logits, target), optional
        Defaults to cross-entropy.
    step_loss : callable(model, xb, yb, generator) -> loss, optional
        Replaces ``loss(model(xb), yb)`` for multi-task training.
    progress : tqdm-like, optional
        Advanced once per epoch.
    """
    torch = _torch()
    gen = torch.Generator().manual_seed(int(seed))
    loss = loss or torch.nn.CrossEntropyLoss()
    step_loss = step_loss or (lambda m, xb, yb, g: loss(m(xb), yb))
    steps_per_epoch = int(np.ceil(len(x_train) / batch_size))
    if optimizer == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * steps_per_epoch)
        per_step = True
    elif optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay)
        sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=lr_decay)
        per_step = False
    else:
        raise ValueError(f"optimizer must be 'adamw' or 'sgd', got {optimizer!r}")
    x = torch.from_numpy(np.asarray(x_train, np.float32))[:, None]
    y = torch.from_numpy(np.asarray(y_train, np.int64))
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), batch_size):
            idx = order[i : i + batch_size]
            opt.zero_grad()
            step_loss(model, x[idx], y[idx], gen).backward()
            opt.step()
            if per_step:
                sched.step()
        if not per_step:
            sched.step()
        if progress is not None:
            progress.update(1)
    model.eval()
    return model


def predict_torch(model, images, batch: int = 1024) -> np.ndarray:
    """Softmax probabilities of a torch model on (N, H, W) images."""
    torch = _torch()
    out = []
    with torch.inference_mode():
        x = torch.from_numpy(np.asarray(images, np.float32))[:, None]
        for i in range(0, len(x), batch):
            out.append(torch.softmax(model(x[i : i + batch]).double(), dim=1).numpy())
    return np.concatenate(out).astype(np.float32)
