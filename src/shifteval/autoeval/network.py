"""The classifier being evaluated: penultimate features, logits and a rotation head (§3.2, §4.2).

A network returns ``(logits, features)``; ``rotation(features)`` gives the 4-way rotation logits of
Deng et al. (2021), the rotation-prediction baseline. :class:`Outputs` holds what every estimator needs
from one set of images.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import softmax

from ..nets import fit_torch, torch_module
from .energy import energy

if TYPE_CHECKING:
    import torch


def check_images(images: ArrayLike, what: str = "images") -> NDArray[np.float32]:
    """``images`` as float32 (N, S, S), with a clear error for anything else or an empty set.

    Parameters
    ----------
    images : array_like
        Square grayscale images, S ≥ 8.
    what : str
        How the error messages name them.

    Returns
    -------
    ndarray of float32, shape (N, S, S)

    Raises
    ------
    ValueError
        If ``images`` is not 3-D with square sides of at least 8 pixels, or is empty.

    Examples
    --------
    >>> check_images(np.zeros((2, 8, 8), dtype=np.uint8)).dtype.name
    'float32'
    >>> check_images(np.zeros((2, 8, 9)), "outliers")
    Traceback (most recent call last):
    ...
    ValueError: outliers must be an (N, S, S) array of square grayscale images (S ≥ 8), got shape (2, 8, 9)
    """
    images = np.asarray(images, dtype=np.float32)
    if images.ndim != 3 or images.shape[1] < 8 or images.shape[1] != images.shape[2]:
        raise ValueError(
            f"{what} must be an (N, S, S) array of square grayscale images (S ≥ 8), got shape {images.shape}"
        )
    if len(images) == 0:
        raise ValueError(f"{what}: the set is empty")
    return images


def feature_net(arch: str = "cnn", n_classes: int = 10, width: int = 32) -> torch.nn.Module:
    """A classifier exposing its penultimate features, with a rotation head (Deng et al. 2021).

    Parameters
    ----------
    arch : str
        ``"cnn"``: three conv 3×3 → BN → ReLU blocks (``width``, 2·``width``, 2·``width`` channels;
        max-pool after the first two) and global average pooling (2·``width`` features). Any other name is a
        timm architecture created with ``num_classes=0`` (its pooled features).
    n_classes, width : int
        Classes of the head, and the ``"cnn"``'s base width.

    Returns
    -------
    torch.nn.Module
        ``forward(x) -> (logits, features)``; ``rotation`` is a linear 4-way head on the features.

    Examples
    --------
    >>> net = feature_net(width=4)
    >>> logits, features = net(torch.zeros(3, 1, 8, 8))
    >>> logits.shape, features.shape, net.rotation(features).shape
    (torch.Size([3, 10]), torch.Size([3, 8]), torch.Size([3, 4]))
    """
    import torch

    nn = torch.nn
    if arch == "cnn":
        w = width
        backbone = nn.Sequential(
            nn.Conv2d(1, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 3, padding=1), nn.BatchNorm2d(2 * w), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * w, 2 * w, 3, padding=1), nn.BatchNorm2d(2 * w), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )  # fmt: skip
        dim = 2 * w
    else:
        from ..utils.compat import import_timm

        backbone = import_timm().create_model(arch, pretrained=False, in_chans=1, num_classes=0)
        dim = backbone.num_features

    class FeatureNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone, self.head, self.rotation = backbone, nn.Linear(dim, n_classes), nn.Linear(dim, 4)
            self.dim = dim

        def forward(self, x):
            features = self.backbone(x)
            return self.head(features), features

    return FeatureNet()


def rotate(x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Rotate each image ``x[i]`` (N, 1, H, W) by ``k[i]`` quarter turns.

    Parameters
    ----------
    x : torch.Tensor, shape (N, 1, H, W)
        Square images.
    k : torch.Tensor of int, shape (N,)
        Quarter turns (counter-clockwise, :func:`torch.rot90`), 0-3.

    Returns
    -------
    torch.Tensor
        A new tensor; ``x`` is unchanged.

    Examples
    --------
    >>> x = torch.arange(8.0).reshape(2, 1, 2, 2)
    >>> rotate(x, torch.tensor([0, 1]))[:, 0].tolist()
    [[[0.0, 1.0], [2.0, 3.0]], [[5.0, 7.0], [4.0, 6.0]]]
    """
    torch = torch_module()
    out = x.clone()
    for r in range(1, 4):
        sel = k == r
        if sel.any():
            out[sel] = torch.rot90(x[sel], r, dims=(2, 3))
    return out


def _classify_and_rotate(model, xb, yb, gen):
    """Classification + rotation prediction loss (Deng et al. 2021), one rotated copy per image."""
    torch = torch_module()
    ce = torch.nn.functional.cross_entropy
    k = torch.randint(0, 4, (len(xb),), generator=gen)
    logits, _ = model(xb)
    _, rot_features = model(rotate(xb, k))
    return ce(logits, yb) + ce(model.rotation(rot_features), k)


def train_feature_net(
    images: ArrayLike,
    labels: ArrayLike,
    *,
    arch: str = "cnn",
    epochs: int = 8,
    lr: float = 3e-3,
    batch_size: int = 128,
    seed: int = 0,
    width: int = 32,
    progress: Any = None,
) -> torch.nn.Module:
    """Train :func:`feature_net` jointly on classification and rotation prediction (AdamW, one-cycle).

    Parameters
    ----------
    images : array (N, S, S)
        Training images in [0, 1], S ≥ 8.
    labels : array (N,)
        Their classes.
    arch, epochs, lr, batch_size, width
        See :func:`feature_net` and :func:`shifteval.nets.fit_torch`.
    seed : int
        Seeds the initialisation and the batch order.
    progress : tqdm-like, optional
        Advanced once per epoch.

    Returns
    -------
    torch.nn.Module
        In evaluation mode.

    Raises
    ------
    ValueError
        If ``images`` is not a non-empty (N, S, S) stack with S ≥ 8.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> net = train_feature_net(rng.random((8, 8, 8)), np.arange(8), epochs=1, batch_size=8, width=4)
    >>> net.training, net.dim
    (False, 8)
    """
    torch = torch_module()
    images = check_images(images, "training images")
    torch.manual_seed(int(seed))
    model = feature_net(arch, width=width)
    return fit_torch(
        model, images, labels, epochs=epochs, batch_size=batch_size, lr=lr, seed=seed,
        step_loss=_classify_and_rotate, progress=progress,
    )  # fmt: skip


@dataclass
class Outputs:
    """A classifier's outputs on a set of images (all numpy).

    ``energy`` is the OOD detector's energy of each image when a separate detector is used
    (:func:`shifteval.autoeval.detector.train_detector`); when it is ``None`` the energy is computed from
    the classifier's logits.
    """

    logits: np.ndarray
    features: np.ndarray
    rotation_correct: np.ndarray | None = None
    energy: np.ndarray | None = None

    @property
    def probs(self) -> np.ndarray:
        """Softmax probabilities of the logits."""
        return softmax(self.logits.astype(np.float64), axis=1)

    def energies(self) -> np.ndarray:
        """The detector's energies if there is one, else the classifier's (§3.4, T = 1)."""
        return energy(self.logits) if self.energy is None else self.energy

    def subset(self, index) -> Outputs:
        """The outputs of the examples selected by ``index``."""
        rot, energy = self.rotation_correct, self.energy
        return Outputs(
            self.logits[index],
            self.features[index],
            None if rot is None else rot[index],
            None if energy is None else energy[index],
        )

    def __len__(self) -> int:
        return len(self.logits)

    @staticmethod
    def concatenate(parts: list) -> Outputs:
        """The outputs of several sets, one after the other (optional arrays only if every part has them)."""
        columns = zip(*(p._arrays() for p in parts), strict=False)
        joined: list[Any] = [None if any(a is None for a in col) else np.concatenate(col) for col in columns]
        return Outputs(*joined)  # logits and features: every part has them

    def _arrays(self):
        return self.logits, self.features, self.rotation_correct, self.energy


def compute_outputs(
    model: torch.nn.Module,
    images: ArrayLike,
    batch: int | None = None,
    rotation: bool = False,
    detector: torch.nn.Module | None = None,
) -> Outputs:
    """Logits and features of ``images`` (N, H, W), in batches.

    Parameters
    ----------
    model : torch.nn.Module
        A :func:`feature_net`; its weights (and the detector's) are stored channels-last
        (:func:`shifteval.nets.channels_last`).
    images : array (N, S, S)
        The images, S ≥ 8.
    batch : int, optional
        Images per forward pass; :func:`shifteval.nets.batch_size` of the images' side by default.
    rotation : bool
        Also whether the rotation head recognises each image turned by ``i mod 4`` quarter turns (image
        ``i``): one rotated copy per image, an unbiased estimate of any random subset's rotation accuracy at
        a quarter of the cost.
    detector : torch.nn.Module, optional
        Also the detector's energy of each image.

    Returns
    -------
    Outputs
        ``rotation_correct`` and ``energy`` are ``None`` unless asked for.

    Raises
    ------
    ValueError
        If ``images`` is not a non-empty (N, S, S) stack with S ≥ 8, or ``batch`` is below 1.

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> net = feature_net(width=4).eval()
    >>> out = compute_outputs(net, np.zeros((5, 8, 8)), batch=2, rotation=True, detector=net)
    >>> out.logits.shape, out.features.shape, out.rotation_correct.shape
    ((5, 10), (5, 8), (5,))
    >>> bool(np.allclose(out.energy, out.energies())), bool(np.allclose(out.probs.sum(1), 1))
    (True, True)
    """
    import torch

    from ..nets import batch_size, channels_last

    images = check_images(images)
    batch = batch_size(images.shape[1], batch)
    logits, feats, rot, energies = [], [], [], []
    channels_last(model)
    if detector is not None:
        channels_last(detector)
    with torch.inference_mode():
        x = torch.from_numpy(images)[:, None]
        for i in range(0, len(x), batch):
            xb = x[i : i + batch]
            lg, ft = model(xb)
            logits.append(lg.double().numpy())
            feats.append(ft.double().numpy())
            if rotation:
                k = torch.arange(i, i + len(xb)) % 4
                _, f = model(rotate(xb, k))
                head = cast(torch.nn.Module, model.rotation)  # the rotation head of feature_net's model
                rot.append((head(f).argmax(1) == k).double().numpy())
            if detector is not None:
                energies.append(energy(detector(xb)[0].double().numpy()))
    return Outputs(
        np.concatenate(logits),
        np.concatenate(feats),
        np.concatenate(rot) if rot else None,
        np.concatenate(energies) if energies else None,
    )
