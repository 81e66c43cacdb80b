"""Label-free accuracy estimation with out-of-distribution detection (Zhu et al. 2023).

AutoEval (Deng & Zheng 2021) regresses a classifier's accuracy on an unlabeled test set from a
*representation* of that set: the mean and variance of the classifier's penultimate features and the
Fréchet distance (FD) between the set's features and the training set's (Zhu et al., §3.2). The
regressor learns from a *meta-dataset*: many labeled sample sets drawn from the training distribution and
transformed at random (§3.3), whose accuracy is known. Zhu et al. add energy-based OOD detection
(Liu et al. 2020; §3.4-3.5): images with energy ``E(x) = −T·logsumexp(f(x)/T)`` above the 99.5th
percentile of the training set's energies are treated as foreign; the estimate is

    (share of images judged in-distribution) × (AutoEval's estimate on those images).

As in Zhu et al. (§4.2), the energies can come from a separate *detector*: a copy of the classifier
fine-tuned with outlier exposure (Liu et al. 2020, Eq. 9) on auxiliary outliers that are never used as
test data (:func:`train_detector`, :func:`auxiliary_outliers`); the classifier being evaluated is left
untouched.

Baselines: max-softmax thresholds, average confidence, DoC, ATC, rotation prediction, AutoEval with
linear regression on FD.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import ndimage
from scipy.special import logsumexp, softmax

if TYPE_CHECKING:
    import pandas as pd

TRANSFORMS = ("contrast", "brightness", "gray_levels", "inversion", "affine", "sharpen")


# --- the classifier: features, logits and a rotation head -------------------------------------------


def _torch():
    import torch

    return torch


def feature_net(arch: str = "cnn", n_classes: int = 10, width: int = 32):
    """A classifier exposing its penultimate features, with a rotation head (Deng et al. 2021).

    ``arch="cnn"``: three conv 3×3 → BN → ReLU blocks (``width``, 2·``width``, 2·``width`` channels; max-pool
    after the first two) and global average pooling, so the features have 2·``width`` dimensions.
    Any other name is a timm architecture created with ``num_classes=0`` (its pooled features).
    The module returns ``(logits, features)``; ``rotation(features)`` gives the 4-way rotation logits.
    """
    torch = _torch()
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
        from .utils.compat import import_timm

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


def _rotate(x, k):
    """Rotate each image ``x[i]`` (N, 1, H, W) by ``k[i]`` quarter turns."""
    torch = _torch()
    out = x.clone()
    for r in range(1, 4):
        sel = k == r
        if sel.any():
            out[sel] = torch.rot90(x[sel], r, dims=(2, 3))
    return out


def _step_loss(outliers=None, margins=None, weight: float = 0.1):
    """Classification + rotation prediction (Deng et al. 2021), plus, with ``outliers``, the energy-bounded
    term of Liu et al. (2020, Eq. 9): λ·(E_in[max(0, E(x_in) − m_in)²] + E_out[max(0, m_out − E(x_out))²])
    on a batch of auxiliary outliers as large as the training batch, drawn with the training generator."""
    torch = _torch()
    ce = torch.nn.functional.cross_entropy
    aux = None if outliers is None else torch.from_numpy(np.asarray(outliers, np.float32))[:, None]
    m_in, m_out = margins if aux is not None else (None, None)

    def loss(model, xb, yb, gen):
        k = torch.randint(0, 4, (len(xb),), generator=gen)
        logits, _ = model(xb)
        _, rot_features = model(_rotate(xb, k))
        total = ce(logits, yb) + ce(model.rotation(rot_features), k)
        if aux is not None:
            out_logits, _ = model(aux[torch.randint(0, len(aux), (len(xb),), generator=gen)])
            e_in, e_out = -torch.logsumexp(logits, 1), -torch.logsumexp(out_logits, 1)
            total = total + weight * (
                torch.relu(e_in - m_in).pow(2).mean() + torch.relu(m_out - e_out).pow(2).mean()
            )
        return total

    return loss


def train_feature_net(
    images,
    labels,
    *,
    arch: str = "cnn",
    epochs: int = 8,
    lr: float = 3e-3,
    batch_size: int = 128,
    seed: int = 0,
    width: int = 32,
    progress=None,
):
    """Train :func:`feature_net` jointly on classification and rotation prediction (AdamW, one-cycle)."""
    torch = _torch()
    from .zoo.models import fit_torch

    images = _check_images(images, "training images")
    torch.manual_seed(int(seed))
    model = feature_net(arch, width=width)
    return fit_torch(
        model,
        images,
        labels,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        seed=seed,
        step_loss=_step_loss(),
        progress=progress,
    )


def train_detector(
    model,
    images,
    labels,
    outliers,
    *,
    epochs: int = 4,
    lr: float = 1e-3,
    batch_size: int = 128,
    margins=None,
    weight: float = 0.1,
    seed: int = 0,
    progress=None,
):
    """The OOD detector of Zhu et al. (§4.2): a copy of ``model`` fine-tuned with outlier exposure.

    Liu et al. (2020, §3.2, Eq. 9) fine-tune a trained classifier on its training data plus auxiliary
    outliers, adding to the classification loss the energy-bounded term
    λ·(E_in[max(0, E(x_in) − m_in)²] + E_out[max(0, m_out − E(x_out))²]): training images are pushed below
    the energy ``m_in``, outliers above ``m_out``. ``model`` itself is not changed.

    Parameters
    ----------
    model : FeatureNet
        The trained classifier (see :func:`train_feature_net`).
    images, labels
        Its training set.
    outliers : ndarray (M, S, S)
        Auxiliary outliers (:func:`auxiliary_outliers`), disjoint from every test OOD source.
    margins : (m_in, m_out), optional
        Liu et al. chose −25 and −7 for a WideResNet on CIFAR-10; energies scale with the network, so by
        default they are read off ``model``'s own training energies: their 25th and 99th percentiles
        (push typical training images lower, push outliers above nearly all of them).
    weight : float
        λ (0.1, as in Liu et al.).
    """
    import copy

    from .zoo.models import fit_torch

    images = _check_images(images, "training images")
    outliers = _check_images(outliers, "auxiliary outliers")
    if margins is None:
        e = energy(compute_outputs(model, images).logits)
        margins = (float(np.percentile(e, 25)), float(np.percentile(e, 99)))
    if not margins[0] < margins[1]:
        raise ValueError(f"margins must satisfy m_in < m_out, got {margins}")
    detector = copy.deepcopy(model)
    return fit_torch(
        detector,
        images,
        labels,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        seed=seed,
        step_loss=_step_loss(outliers, margins, weight),
        progress=progress,
    )


@dataclass
class Outputs:
    """A classifier's outputs on a set of images (all numpy).

    ``energy`` is the OOD detector's energy of each image when a separate detector is used
    (:func:`train_detector`); when it is ``None`` the energy is computed from the classifier's logits.
    """

    logits: np.ndarray
    features: np.ndarray
    rotation_correct: np.ndarray | None = None
    energy: np.ndarray | None = None

    @property
    def probs(self):
        return softmax(self.logits.astype(np.float64), axis=1)

    def energies(self, temperature: float = 1.0) -> np.ndarray:
        """The detector's energies if there is one, else the classifier's (§3.4)."""
        return energy(self.logits, temperature) if self.energy is None else self.energy

    def subset(self, index):
        return Outputs(*(None if a is None else a[index] for a in self._arrays()))

    @staticmethod
    def concatenate(parts: list) -> Outputs:
        """The outputs of several sets, one after the other (optional arrays only if every part has them)."""
        columns = zip(*(p._arrays() for p in parts))
        return Outputs(*(None if any(a is None for a in col) else np.concatenate(col) for col in columns))

    def _arrays(self):
        return self.logits, self.features, self.rotation_correct, self.energy


def compute_outputs(model, images, batch: int = 1024, rotation: bool = False, detector=None) -> Outputs:
    """Logits and features of ``images`` (N, H, W) in batches.

    With ``rotation``, also whether the rotation head recognises each image turned by ``i mod 4`` quarter
    turns (image ``i``): one rotated copy per image instead of all four, an unbiased estimate of the
    rotation accuracy of any random subset at a quarter of the cost. With ``detector``
    (:func:`train_detector`), also the detector's energy of each image.
    """
    torch = _torch()
    images = _check_images(images)
    logits, feats, rot, energies = [], [], [], []
    with torch.inference_mode():
        x = torch.from_numpy(images)[:, None]
        for i in range(0, len(x), batch):
            xb = x[i : i + batch]
            lg, ft = model(xb)
            logits.append(lg.double().numpy())
            feats.append(ft.double().numpy())
            if rotation:
                k = torch.arange(i, i + len(xb)) % 4
                _, f = model(_rotate(xb, k))
                rot.append((model.rotation(f).argmax(1) == k).double().numpy())
            if detector is not None:
                energies.append(energy(detector(xb)[0].double().numpy()))
    return Outputs(*(np.concatenate(parts) if parts else None for parts in (logits, feats, rot, energies)))


def _check_images(images, what: str = "images"):
    images = np.asarray(images, dtype=np.float32)
    if images.ndim != 3 or images.shape[1] < 8 or images.shape[1] != images.shape[2]:
        raise ValueError(
            f"{what} must be an (N, S, S) array of square grayscale images (S ≥ 8), got shape {images.shape}"
        )
    if len(images) == 0:
        raise ValueError(f"{what}: the set is empty")
    return images


# --- the meta-dataset (§3.3) --------------------------------------------------------------------------


def transform_set(images, rng: np.random.Generator, p: float = 0.5):
    """One meta-set's transformation: each of the six transformations is used with probability ``p``,
    with set-level strengths drawn from ``rng`` (per-image draws where the paper's are per image).

    Adapted to grayscale digits: *contrast* scales deviations from each image's mean by c ∈ [0.3, 1.6];
    *brightness* adds b ∈ [−0.35, 0.35]; *colour removal* becomes *gray-level removal* (posterise to 2-6
    levels: the colour channels a gray image lacks are replaced by the gray levels it has); *inversion*
    flips x → 1 − x for a share s ∈ [0, 0.5] of the images; *affine* rotates (±a°, a ≤ 30), scales
    (±15%) and shifts (±2 px) each image; *sharpen* adds k ∈ [0.5, 3] times the image minus its blur.

    Returns
    -------
    images : ndarray (N, H, W) in [0, 1]
    used : tuple of str
    """
    x = np.array(images, dtype=np.float64)
    used = tuple(t for t in TRANSFORMS if rng.random() < p)
    n, h, w = x.shape
    for t in used:
        if t == "contrast":
            m = x.mean(axis=(1, 2), keepdims=True)
            x = (x - m) * rng.uniform(0.3, 1.6) + m
        elif t == "brightness":
            x = x + rng.uniform(-0.35, 0.35)
        elif t == "gray_levels":
            levels = rng.integers(2, 7)
            x = np.round(np.clip(x, 0, 1) * (levels - 1)) / (levels - 1)
        elif t == "inversion":
            flip = rng.random(n) < rng.uniform(0, 0.5)
            x[flip] = 1 - x[flip]
        elif t == "affine":
            x = _affine(x, rng, max_angle=rng.uniform(5, 30), max_scale=0.15, max_shift=2.0)
        elif t == "sharpen":
            x = x + rng.uniform(0.5, 3.0) * (x - ndimage.gaussian_filter(x, (0, 1, 1)))
        x = np.clip(x, 0, 1)
    return x.astype(np.float32), used


def _affine(x, rng, max_angle: float, max_scale: float, max_shift: float, max_shear: float = 0.0):
    n, h, w = x.shape
    centre = np.array([(h - 1) / 2, (w - 1) / 2])
    out = np.empty_like(x)
    for i in range(n):  # one matrix per image; ndimage has no batched affine transform
        a = np.deg2rad(rng.uniform(-max_angle, max_angle))
        s = 1 + rng.uniform(-max_scale, max_scale)
        sh = rng.uniform(-max_shear, max_shear)
        matrix = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) @ np.array([[1, sh], [0, 1]]) / s
        offset = centre - matrix @ (centre + rng.uniform(-max_shift, max_shift, 2))
        out[i] = ndimage.affine_transform(x[i], matrix, offset=offset, order=1, mode="constant")
    return out


def meta_dataset(images, labels, n_sets: int = 200, set_size: int = 500, seed: int = 0):
    """Yield ``(images, labels, used_transforms)`` for each meta-set (§3.3).

    Set ``i`` samples ``set_size`` images without replacement and transforms them with its own generator,
    ``numpy.random.default_rng([seed, i])`` — never one shared seed for every set.
    """
    images = _check_images(images)
    labels = np.asarray(labels)
    if n_sets < 2:
        raise ValueError(f"n_sets must be at least 2 (training and validation meta-sets), got {n_sets}")
    if not 0 < set_size <= len(images):
        raise ValueError(f"set_size must be in 1..{len(images)} (the source images), got {set_size}")
    for i in range(n_sets):
        rng = np.random.default_rng([seed, i])
        idx = rng.choice(len(images), set_size, replace=False)
        x, used = transform_set(images[idx], rng)
        yield x, labels[idx], used


# --- representation (§3.2) -----------------------------------------------------------------------------


def _sqrt_psd(m):
    vals, vecs = np.linalg.eigh((m + m.T) / 2)
    return (vecs * np.sqrt(np.clip(vals, 0, None))) @ vecs.T


def frechet_distance(mu1, cov1, mu2, cov2) -> float:
    """FD = ‖μ₁ − μ₂‖² + Tr(Σ₁ + Σ₂ − 2(Σ₁Σ₂)^½) (Zhu et al., §3.2; Heusel et al. 2017).

    Tr((Σ₁Σ₂)^½) is computed as the sum of square roots of the eigenvalues of the symmetric PSD matrix
    Σ₁^½ Σ₂ Σ₁^½ (same eigenvalues as Σ₁Σ₂), which stays real and finite for singular covariances where
    ``scipy.linalg.sqrtm(Σ₁Σ₂)`` returns complex noise.
    """
    mu1, mu2 = np.asarray(mu1, float), np.asarray(mu2, float)
    cov1, cov2 = np.atleast_2d(cov1).astype(float), np.atleast_2d(cov2).astype(float)
    s1 = _sqrt_psd(cov1)
    cross = np.linalg.eigvalsh(s1 @ cov2 @ s1)
    tr_sqrt = np.sqrt(np.clip(cross, 0, None)).sum()
    return float(max(np.sum((mu1 - mu2) ** 2) + np.trace(cov1) + np.trace(cov2) - 2 * tr_sqrt, 0.0))


@dataclass
class Reference:
    """The training set's feature statistics and energies: what every representation is measured against."""

    mean: np.ndarray
    cov: np.ndarray
    energies: np.ndarray


def reference(outputs: Outputs, temperature: float = 1.0) -> Reference:
    """Feature mean and covariance of the training set, and its energies (the detector's, if any)."""
    f = outputs.features
    return Reference(f.mean(axis=0), np.cov(f, rowvar=False), outputs.energies(temperature))


def representation(features, ref: Reference) -> np.ndarray:
    """``h = [μ, σ², FD(D, D_train)]``: feature mean, feature variance and Fréchet distance (§3.2)."""
    f = np.asarray(features, dtype=np.float64)
    if f.ndim != 2 or len(f) < 2:
        raise ValueError(f"a representation needs at least two images' features, got shape {f.shape}")
    fd = frechet_distance(f.mean(axis=0), np.cov(f, rowvar=False), ref.mean, ref.cov)
    return np.concatenate([f.mean(axis=0), f.var(axis=0), [fd]])


# --- energy OOD detection (§3.4-3.5) --------------------------------------------------------------------


def energy(logits, temperature: float = 1.0) -> np.ndarray:
    """Energy score E(x) = −T·logsumexp(f(x)/T) (Liu et al. 2020): low for in-distribution inputs."""
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    return -temperature * logsumexp(np.asarray(logits, dtype=np.float64) / temperature, axis=1)


def energy_threshold(train_energies, percentile: float = 99.5) -> float:
    """τ = the ``percentile``-th percentile of the training set's energies (§3.5)."""
    if not 0 < percentile <= 100:
        raise ValueError(f"threshold percentile must be in (0, 100], got {percentile}")
    return float(np.percentile(train_energies, percentile))


# --- estimators ------------------------------------------------------------------------------------------


@dataclass
class AutoEval:
    """A fitted AutoEval: regressors from representation to accuracy, plus what the baselines need.

    Attributes
    ----------
    ref : Reference
    mlp, linear : fitted regressors (MLP on the full representation; linear regression on FD alone, as in
        Deng & Zheng's linear baseline)
    rotation_fit : (slope, intercept) of accuracy against rotation accuracy over the meta-sets
    val_accuracy, val_confidence : the held-out ID validation set's accuracy and mean max-softmax (DoC)
    atc_threshold : ATC's confidence threshold fitted on the validation set
    """

    ref: Reference
    mlp: object
    linear: object
    rotation_fit: tuple
    val_accuracy: float
    val_confidence: float
    atc_threshold: float
    temperature: float = 1.0
    mlp_alpha: float = float("nan")

    def predict_mlp(self, outputs: Outputs) -> float:
        if len(outputs.features) < 2:
            return 0.0
        return float(np.clip(self.mlp.predict(representation(outputs.features, self.ref)[None])[0], 0, 1))

    def predict_linear(self, outputs: Outputs) -> float:
        fd = representation(outputs.features, self.ref)[-1]
        return float(np.clip(self.linear.predict([[fd]])[0], 0, 1))

    def estimates(self, outputs: Outputs, percentile: float = 99.5) -> dict:
        """Every method's accuracy estimate (fraction) for one unlabeled test set."""
        if len(outputs.logits) == 0:
            raise ValueError("the test set is empty")
        conf = outputs.probs.max(axis=1)
        tau = energy_threshold(self.ref.energies, percentile)
        is_id = outputs.energies(self.temperature) <= tau
        share_id = float(is_id.mean())
        inside = outputs.subset(is_id)
        est = {
            "softmax_0.8": float((conf > 0.8).mean()),
            "softmax_0.9": float((conf > 0.9).mean()),
            "average_confidence": float(conf.mean()),
            "doc": float(np.clip(conf.mean() + self.val_accuracy - self.val_confidence, 0, 1)),
            "atc": float((conf >= self.atc_threshold).mean()),
            "autoeval_linear": self.predict_linear(outputs),
            "autoeval": self.predict_mlp(outputs),
            "autoeval_energy_ood": share_id * self.predict_mlp(inside),
        }
        if outputs.rotation_correct is not None:
            slope, intercept = self.rotation_fit
            est["rotation"] = float(np.clip(slope * outputs.rotation_correct.mean() + intercept, 0, 1))
        return est


def atc_threshold(confidence, correct) -> float:
    """ATC (Garg et al. 2022): the threshold t with share(confidence < t) = error rate on held-out ID data."""
    confidence = np.asarray(confidence, float)
    error = 1 - float(np.mean(correct))
    return float(np.quantile(confidence, error)) if error > 0 else float(confidence.min())


def meta_targets(outputs: list, labels: list, ref: Reference):
    """The regression data of a list of meta-sets: each set's representation (§3.2; FD in the last
    column) and the classifier's accuracy on it."""
    reps = np.stack([representation(o.features, ref) for o in outputs])
    acc = np.array([float((o.logits.argmax(1) == y).mean()) for o, y in zip(outputs, labels)])
    return reps, acc


def fit(
    meta_outputs,
    meta_labels,
    train_outputs: Outputs,
    val_outputs: Outputs,
    val_labels,
    *,
    hidden=(128, 64, 32, 16),
    alphas=(1.0, 1e-3, 1e-2, 0.1, 10.0),
    val_meta=None,
    seed: int = 0,
    temperature: float = 1.0,
) -> AutoEval:
    """Fit AutoEval and the baselines.

    Parameters
    ----------
    meta_outputs : list of Outputs
        The classifier's outputs on each training meta-set (with ``rotation_correct`` for the rotation
        baseline).
    meta_labels : list of ndarray
    train_outputs : Outputs
        On the classifier's training set: the reference statistics and energies.
    val_outputs, val_labels
        Held-out untransformed ID images (DoC, ATC).
    hidden : tuple of int
        The MLP's hidden layers (four, so five fully connected layers as in the paper's regressor).
    alphas : tuple of float
        L2 penalties tried for the MLP; the one with the lowest RMSE on ``val_meta`` is kept (the first
        if there are no validation meta-sets).
    val_meta : (list of Outputs, list of labels), optional
        Validation meta-sets, disjoint from the training meta-sets.
    """
    from sklearn.linear_model import LinearRegression
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if len(meta_outputs) < 2 or len(meta_outputs) != len(meta_labels):
        raise ValueError("need at least two meta-sets, each with its labels")
    ref = reference(train_outputs, temperature)
    reps, acc = meta_targets(meta_outputs, meta_labels, ref)

    def mlp_with(alpha):
        model = MLPRegressor(hidden_layer_sizes=tuple(hidden), alpha=alpha, max_iter=3000, random_state=seed)
        return make_pipeline(StandardScaler(), model).fit(reps, acc)

    if val_meta is not None and len(alphas) > 1:
        v_reps, v_acc = meta_targets(*val_meta, ref)
        scores = {a: rmse(mlp_with(a).predict(v_reps), v_acc) for a in alphas}
        alpha = min(scores, key=scores.get)
    else:
        alpha = alphas[0]
    mlp = mlp_with(alpha)
    linear = LinearRegression().fit(reps[:, -1:], acc)
    if all(o.rotation_correct is not None for o in meta_outputs):
        rot = np.array([o.rotation_correct.mean() for o in meta_outputs])
        slope, intercept = np.polyfit(rot, acc, 1)
    else:
        slope, intercept = np.nan, np.nan
    val_conf = val_outputs.probs.max(axis=1)
    val_correct = val_outputs.logits.argmax(1) == np.asarray(val_labels)
    return AutoEval(
        ref,
        mlp,
        linear,
        (float(slope), float(intercept)),
        float(val_correct.mean()),
        float(val_conf.mean()),
        atc_threshold(val_conf, val_correct),
        temperature,
        alpha,
    )


def rmse(predicted, actual) -> float:
    """Root mean squared error in accuracy points (×100)."""
    predicted, actual = np.asarray(predicted, float), np.asarray(actual, float)
    return float(100 * np.sqrt(np.mean((predicted - actual) ** 2)))


# --- OOD sources available offline ------------------------------------------------------------------------


def ood_images(source: str, n: int, side: int = 16, seed: int = 0) -> np.ndarray:
    """``n`` images of classes the digit classifier never saw, as (n, side, side) float32 in [0, 1].

    Sources (each a distinct semantic shift):

    - ``"natural_patches"``: grayscale patches cut at random positions and scales from scikit-learn's
      bundled sample photographs (``china.jpg``, ``flower.jpg``), contrast-stretched;
    - ``"letters"``: capital and small Latin letters rendered with matplotlib's bundled DejaVu fonts,
      bright on dark like the digits, randomly rotated, scaled and shifted (0-9 excluded);
    - ``"textures"``: synthetic textures — stripes, checkerboards, 1/f noise and Gabor patches.
    """
    if source not in OOD_SOURCES:
        raise ValueError(f"unknown OOD source {source!r}; valid: {', '.join(OOD_SOURCES)}")
    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    rng = np.random.default_rng([seed, OOD_SOURCES.index(source)])
    return OOD_SOURCES_FN[source](n, side, rng).astype(np.float32)


def _natural_patches(n, side, rng):
    from sklearn.datasets import load_sample_images

    return _patches([img.mean(axis=2) / 255.0 for img in load_sample_images().images], n, side, rng)


def _letters(n, side, rng):
    import string

    return _glyphs(string.ascii_letters, ("DejaVu Sans", "DejaVu Serif", "DejaVu Sans Mono"), n, side, rng)


def _glyphs(chars, fonts, n, side, rng):
    """``n`` glyphs drawn at random from ``chars`` × ``fonts``: rendered bright on black at 4× the size with
    matplotlib (its bundled fonts), shrunk, then randomly rotated, scaled and shifted."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    big = 4 * side  # render large, then shrink (anti-aliasing)
    glyphs = {}
    for font in fonts:
        for ch in chars:
            fig = Figure(figsize=(1, 1), dpi=big)
            canvas = FigureCanvasAgg(fig)
            fig.patch.set_facecolor("black")
            fig.text(
                0.5,
                0.5,
                ch,
                color="white",
                fontsize=0.62 * big,
                family=font,
                ha="center",
                va="center",
                weight="bold",
            )
            canvas.draw()
            glyphs[font, ch] = np.asarray(canvas.buffer_rgba())[..., 0] / 255.0
    keys = list(glyphs)
    base = np.stack(
        [
            ndimage.zoom(glyphs[keys[rng.integers(len(keys))]], side / big, order=1)[:side, :side]
            for _ in range(n)
        ]
    )
    return np.clip(_affine(base, rng, max_angle=20, max_scale=0.15, max_shift=1.5), 0, 1)


def _textures(n, side, rng):
    yy, xx = np.mgrid[0:side, 0:side] / side
    out = np.empty((n, side, side))
    for i in range(n):
        kind = rng.integers(4)
        angle, freq, phase = rng.uniform(0, np.pi), rng.uniform(2, 6), rng.uniform(0, 2 * np.pi)
        u = np.cos(angle) * xx + np.sin(angle) * yy
        v = -np.sin(angle) * xx + np.cos(angle) * yy
        if kind == 0:  # stripes
            img = 0.5 + 0.5 * np.sign(np.sin(2 * np.pi * freq * u + phase))
        elif kind == 1:  # checkerboard
            img = 0.5 + 0.5 * np.sign(np.sin(2 * np.pi * freq * u + phase) * np.sin(2 * np.pi * freq * v))
        elif kind == 2:  # 1/f noise
            spec = rng.standard_normal((side, side)) + 1j * rng.standard_normal((side, side))
            f = np.hypot(*np.meshgrid(np.fft.fftfreq(side), np.fft.fftfreq(side)))
            f[0, 0] = np.inf
            img = np.real(np.fft.ifft2(spec / f))
            img = (img - img.min()) / (np.ptp(img) + 1e-12)
        else:  # Gabor patch
            env = np.exp(-((xx - 0.5) ** 2 + (yy - 0.5) ** 2) / (2 * rng.uniform(0.1, 0.3) ** 2))
            img = 0.5 + 0.5 * env * np.cos(2 * np.pi * freq * u + phase)
        out[i] = np.clip(img, 0, 1)
    return out


#: Greek letters, mathematical operators, arrows and card suits: the glyph part of the auxiliary outliers.
AUXILIARY_SYMBOLS = "αβγδεζηθλμξπρσφψωΓΔΘΛΞΠΣΦΨΩ∑∫∂∇∞⊕⊗∈∀∃≈≠≤≥→←↔⇒♠♣♥♦"


def auxiliary_outliers(n: int, side: int = 16, seed: int = 0) -> np.ndarray:
    """Auxiliary outliers for outlier exposure (Liu et al. 2020), never used as test OOD data.

    An offline stand-in for the 80 Million Tiny Images on which Zhu et al. fine-tune their detector
    (§4.2), built from files bundled with matplotlib, none of which any test OOD source uses: half are
    patches (same cutting and contrast stretch as ``natural_patches``) of a photograph
    (``grace_hopper.jpg``), a clip-art picture (``Minduka_Present_Blue_Pack.png``), an MRI slice
    (``s1045.ima.gz``) and two elevation maps (``topobathy.npz``, ``jacksboro_fault_dem.npz``); half are
    glyphs of :data:`AUXILIARY_SYMBOLS` (Greek letters, operators, arrows; no Latin letter, no digit).
    """
    import matplotlib.cbook as cbook
    import matplotlib.image as mimage

    if n < 1:
        raise ValueError(f"n must be positive, got {n}")
    rng = np.random.default_rng([seed, 99])
    gray = [
        mimage.imread(cbook.get_sample_data(f, asfileobj=False))[..., :3].mean(axis=2)
        for f in ("grace_hopper.jpg", "Minduka_Present_Blue_Pack.png")
    ]
    with cbook.get_sample_data("s1045.ima.gz") as f:
        gray.append(np.frombuffer(f.read(), np.uint16).reshape(256, 256).astype(float))
    gray += [
        np.load(cbook.get_sample_data(f, asfileobj=False))[k]
        for f, k in (("topobathy.npz", "topo"), ("jacksboro_fault_dem.npz", "elevation"))
    ]
    sources = [(g - g.min()) / np.ptp(g) for g in gray]
    n_patches = (n + 1) // 2
    out = np.concatenate(
        [
            _patches(sources, n_patches, side, rng),
            _glyphs(AUXILIARY_SYMBOLS, ("DejaVu Sans", "DejaVu Serif"), n - n_patches, side, rng),
        ]
    )
    return out[rng.permutation(n)].astype(np.float32)


def _patches(sources, n, side, rng):
    """``n`` square patches cut at random positions and scales from ``sources`` (2-D arrays), resized to
    ``side`` and contrast-stretched between their 2nd and 98th percentiles."""
    out = np.empty((n, side, side))
    for i in range(n):
        img = sources[rng.integers(len(sources))]
        size = int(rng.integers(side, min(8 * side, min(img.shape) - 1)))
        r, c = rng.integers(0, img.shape[0] - size), rng.integers(0, img.shape[1] - size)
        patch = ndimage.zoom(img[r : r + size, c : c + size], side / size, order=1)[:side, :side]
        lo, hi = np.percentile(patch, [2, 98])
        out[i] = np.clip((patch - lo) / max(hi - lo, 1e-3), 0, 1)
    return out


OOD_SOURCES = ("natural_patches", "letters", "textures")
OOD_SOURCES_FN = {"natural_patches": _natural_patches, "letters": _letters, "textures": _textures}


def cutout(images, rng: np.random.Generator, size: int | None = None):
    """Erase one random ``size``×``size`` square per image (the paper's test-time '-A' transform); by
    default 3/8 of the image side (6 pixels of 16)."""
    x = np.array(images, dtype=np.float32)
    n, h, w = x.shape
    size = int(round(0.375 * min(h, w))) if size is None else int(size)
    for i, (r, c) in enumerate(zip(rng.integers(0, h - size + 1, n), rng.integers(0, w - size + 1, n))):
        x[i, r : r + size, c : c + size] = 0
    return x


def shear_contrast(images, rng: np.random.Generator, shear: float = 0.35, contrast: float = 0.6):
    """Shear each image by up to ±``shear`` and scale its contrast by ``contrast`` (the paper's '-B', with
    contrast standing in for hue, which gray images lack)."""
    x = _affine(
        np.asarray(images, dtype=np.float64), rng, max_angle=0, max_scale=0, max_shift=0, max_shear=shear
    )
    m = x.mean(axis=(1, 2), keepdims=True)
    return np.clip((x - m) * contrast + m, 0, 1).astype(np.float32)


# --- one backbone, prepared once and cached ---------------------------------------------------------------


@dataclass
class Backbone:
    """A trained feature network with its outputs on the training set and on every meta-set, and the OOD
    detector fine-tuned from it (``None`` without outlier exposure)."""

    arch: str
    model: object
    train: Outputs
    meta_train: list
    meta_train_labels: list
    meta_val: list
    meta_val_labels: list
    detector: object = None


def _pack(outputs: list) -> dict:
    arrays = {
        "lengths": np.array([len(o.logits) for o in outputs]),
        "logits": np.concatenate([o.logits for o in outputs]).astype(np.float32),
        "features": np.concatenate([o.features for o in outputs]).astype(np.float32),
        "rotation": np.concatenate([o.rotation_correct for o in outputs]).astype(np.float32),
    }
    if all(o.energy is not None for o in outputs):
        arrays["energy"] = np.concatenate([o.energy for o in outputs])
    return arrays


def _unpack(z, prefix: str) -> list:
    bounds = np.cumsum(np.r_[0, z[f"{prefix}_lengths"]])
    energies = z[f"{prefix}_energy"] if f"{prefix}_energy" in z else None
    return [
        Outputs(
            z[f"{prefix}_logits"][a:b].astype(np.float64),
            z[f"{prefix}_features"][a:b].astype(np.float64),
            z[f"{prefix}_rotation"][a:b].astype(np.float64),
            None if energies is None else energies[a:b],
        )
        for a, b in zip(bounds[:-1], bounds[1:])
    ]


def _state_bytes(model) -> np.ndarray:
    import io as _io

    buf = _io.BytesIO()
    _torch().save(model.state_dict(), buf)
    return np.frombuffer(buf.getvalue(), dtype=np.uint8)


def _load_state(model, data: np.ndarray):
    import io as _io

    model.load_state_dict(_torch().load(_io.BytesIO(data.tobytes()), weights_only=True))
    return model.eval()


def prepare_backbone(
    arch,
    x_train,
    y_train,
    meta_pool,
    meta_val_pool,
    *,
    epochs: int,
    n_sets: int,
    n_val_sets: int,
    set_size: int,
    seed: int = 0,
    outliers=None,
    detector_epochs: int = 4,
    cache=None,
    progress: bool = True,
) -> Backbone:
    """Train a feature network and compute its outputs on the training set and on every meta-set.

    Training meta-sets are drawn from ``meta_pool`` and validation meta-sets from ``meta_val_pool`` (two
    disjoint image pools, so the two never share an image). Outputs are computed in batches. With
    ``outliers``, an OOD detector is fine-tuned from the trained network with outlier exposure
    (:func:`train_detector`) and its energies on the training set are kept. With ``cache`` (a folder),
    the weights and all outputs are stored under a key of every input and of this module's code, and
    reused.
    """
    import hashlib
    import io as _io
    from pathlib import Path

    from tqdm import tqdm

    from .utils.io import atomic_write_bytes

    (xm, ym), (xv, yv) = meta_pool, meta_val_pool
    h = hashlib.sha256()
    for part in (arch, epochs, n_sets, n_val_sets, set_size, seed, detector_epochs):
        h.update(repr(part).encode())
    for arr in (x_train, y_train, xm, ym, xv, yv, np.zeros(0) if outliers is None else outliers):
        h.update(np.ascontiguousarray(arr).tobytes())
    for module in ("autoeval.py", "zoo/models.py"):
        h.update((Path(__file__).parent / module).read_bytes())
    key = h.hexdigest()[:16]
    path = Path(cache) / f"{arch}-{key}.npz" if cache else None
    if path is not None and path.is_file():
        with np.load(path, allow_pickle=False) as z:
            model = _load_state(feature_net(arch), z["state"])
            detector = _load_state(feature_net(arch), z["detector_state"]) if "detector_state" in z else None
            return Backbone(
                arch,
                model,
                _unpack(z, "train")[0],
                _unpack(z, "meta"),
                list(_split(z["meta_labels"], z["meta_lengths"])),
                _unpack(z, "val"),
                list(_split(z["val_labels"], z["val_lengths"])),
                detector,
            )
    bar = tqdm(total=epochs, desc=f"training {arch}", unit="epoch", disable=not progress)
    model = train_feature_net(x_train, y_train, arch=arch, epochs=epochs, seed=seed, progress=bar)
    bar.close()
    detector = None
    if outliers is not None:
        bar = tqdm(
            total=detector_epochs,
            desc=f"outlier exposure of the {arch} detector",
            unit="epoch",
            disable=not progress,
        )
        detector = train_detector(
            model, x_train, y_train, outliers, epochs=detector_epochs, seed=seed, progress=bar
        )
        bar.close()
    train = compute_outputs(model, x_train, rotation=True, detector=detector)
    meta, meta_labels, val, val_labels = [], [], [], []
    sets = [(meta, meta_labels, s) for s in meta_dataset(xm, ym, n_sets, set_size, seed)]
    sets += [(val, val_labels, s) for s in meta_dataset(xv, yv, n_val_sets, min(set_size, len(xv)), seed + 1)]
    for outs, labels, (x, y, _) in tqdm(
        sets, desc=f"meta-sets through {arch}", unit="set", disable=not progress
    ):
        outs.append(compute_outputs(model, x, rotation=True))
        labels.append(y)
    if path is not None:
        arrays = {"state": _state_bytes(model)}
        if detector is not None:
            arrays["detector_state"] = _state_bytes(detector)
        for prefix, outs in (("train", [train]), ("meta", meta), ("val", val)):
            arrays.update({f"{prefix}_{k}": v for k, v in _pack(outs).items()})
        arrays["meta_labels"], arrays["val_labels"] = np.concatenate(meta_labels), np.concatenate(val_labels)
        out = _io.BytesIO()
        np.savez(out, **arrays)
        atomic_write_bytes(path, out.getvalue())
    return Backbone(arch, model, train, meta, meta_labels, val, val_labels, detector)


def _split(values, lengths):
    bounds = np.cumsum(np.r_[0, lengths])
    return (values[a:b] for a, b in zip(bounds[:-1], bounds[1:]))


def mix(
    id_outputs: Outputs,
    id_labels,
    ood_outputs: Outputs,
    size: int,
    ood_share: float,
    rng: np.random.Generator,
):
    """A test set of ``size`` images, ``round(size·ood_share)`` of them OOD (§4.1), drawn without replacement.

    Returns the combined outputs, the ground-truth accuracy (every OOD image counts as an error) and
    whether each image is OOD.
    """
    if not 0 <= ood_share <= 1:
        raise ValueError(f"ood_share must be in [0, 1], got {ood_share}")
    n_ood = int(round(size * ood_share))
    n_id = size - n_ood
    if n_id > len(id_outputs.logits) or n_ood > len(ood_outputs.logits):
        raise ValueError(
            f"a test set of {n_id} ID + {n_ood} OOD images needs more images than the sources hold "
            f"({len(id_outputs.logits)} ID, {len(ood_outputs.logits)} OOD)"
        )
    i = rng.choice(len(id_outputs.logits), n_id, replace=False)
    o = rng.choice(len(ood_outputs.logits), n_ood, replace=False)
    a, b = id_outputs.subset(i), ood_outputs.subset(o)
    combined = Outputs.concatenate([a, b])
    truth = float((a.logits.argmax(1) == np.asarray(id_labels)[i]).sum() / size)
    return combined, truth, np.r_[np.zeros(n_id, bool), np.ones(n_ood, bool)]


METHODS = (
    "softmax_0.8",
    "softmax_0.9",
    "average_confidence",
    "doc",
    "atc",
    "rotation",
    "autoeval_linear",
    "autoeval",
    "autoeval_energy_ood",
)
#: Short names of :data:`METHODS` for tables and legends.
METHOD_LABELS = {
    "softmax_0.8": "softmax τ=0.8",
    "softmax_0.9": "softmax τ=0.9",
    "average_confidence": "avg. conf.",
    "doc": "DoC",
    "atc": "ATC",
    "rotation": "rotation",
    "autoeval_linear": "AutoEval (FD, linear)",
    "autoeval": "AutoEval",
    "autoeval_energy_ood": "AutoEval + energy OOD",
}


def evaluate(
    est: AutoEval,
    id_outputs: dict,
    id_labels: dict,
    ood_outputs: dict,
    *,
    set_size: int,
    ood_share: float,
    percentile: float,
    repeats: int,
    seed: int = 0,
    ids=None,
    oods=None,
) -> pd.DataFrame:
    """Every method's estimate and the truth on test sets mixed from every ID × OOD source pair (§4.1).

    Test set ``r`` of pair ``(i, j)`` is drawn with its own generator. Besides the estimates, each row has
    ``id_excluded`` (share of ID images the detector removed) and ``ood_kept`` (share of OOD images it let
    through) — the two error sources of the paper's Figure 3.
    """
    import pandas as pd

    tau = energy_threshold(est.ref.energies, percentile)
    rows = []
    for i, s_id in enumerate(ids or list(id_outputs)):
        for j, s_ood in enumerate(oods or list(ood_outputs)):
            for r in range(repeats):
                g = np.random.default_rng([seed, 1, i, j, r, int(round(1000 * ood_share))])
                out, truth, is_ood = mix(
                    id_outputs[s_id], id_labels[s_id], ood_outputs[s_ood], set_size, ood_share, g
                )
                e = out.energies(est.temperature)
                rows.append(
                    {
                        "id": s_id,
                        "ood": s_ood,
                        "repeat": r,
                        "truth": truth,
                        **est.estimates(out, percentile),
                        "id_excluded": float((e[~is_ood] > tau).mean()),
                        "ood_kept": float((e[is_ood] <= tau).mean()) if is_ood.any() else np.nan,
                    }
                )
    return pd.DataFrame(rows)


def rmse_table(frame, methods=METHODS, by=("id", "ood")) -> pd.DataFrame:
    """RMSE (points) per group (index ``"<id> + <ood>"``) and method, plus an ``all sets`` row."""
    import pandas as pd

    methods = [m for m in methods if m in frame]
    rows = {
        " + ".join(map(str, key)): {m: rmse(g[m], g["truth"]) for m in methods}
        for key, g in frame.groupby(list(by), sort=False)
    }
    rows["all sets"] = {m: rmse(frame[m], frame["truth"]) for m in methods}
    return pd.DataFrame(rows).T


def image_splits(world=None, dataset: str | None = None, data_dir=None):
    """The labeled image sets a chapter draws from, as ``{split: (images, labels)}`` with float32 images in
    [0, 1], and a label saying where they come from.

    ``dataset=None``: every split of the replication world built with the overrides ``world`` (``train``,
    ``v1``, ``matchedfrequency``, ...). ``dataset="mnist"``: ``train`` and ``test`` read from MNIST's
    official idx files in ``data_dir`` (:func:`shifteval.datasets.real.load`).
    """
    if dataset is None:
        from .datasets import world as worlds

        w = worlds.build_world(world or {})
        splits = {
            s: (w.images[w.split_index(s)].astype(np.float32), w.labels[w.split_index(s)])
            for s in w.split_names
        }
        return splits, f"replication world {w.config.key()}"
    if dataset == "mnist":
        from .datasets import real

        if data_dir is None:
            raise ValueError("dataset 'mnist' needs data_dir: the folder holding MNIST's four idx files")
        splits = {}
        for s in ("train", "test"):
            images, labels = real.load("mnist", data_dir, s)
            splits[s] = (images.astype(np.float32) / 255.0, labels)
        return splits, f"MNIST idx files in {data_dir}"
    raise ValueError(f"dataset must be None (the replication world) or 'mnist', got {dataset!r}")


def id_source(splits: dict, name: str, seed: int = 0):
    """Images and labels of an ID source: a split (``v1``, ``matchedfrequency``, ``test``, ...) of
    :func:`image_splits`, optionally perturbed with ``+<perturbation>@<level>`` (e.g. ``v1+fog@3``, see
    :mod:`shifteval.corruptions`)."""
    from . import corruptions

    base, _, pert = name.partition("+")
    if base not in splits:
        raise ValueError(f"ID source {name!r}: no split {base!r}; splits: {', '.join(splits)}")
    images, labels = splits[base]
    if pert:
        pname, _, level = pert.partition("@")
        if not level.isdigit():
            raise ValueError(
                f"ID source {name!r}: write a perturbation as '+<name>@<level>', e.g. 'v1+fog@3'"
            )
        images = corruptions.corrupt(images, pname, int(level), seed)
    return np.asarray(images, np.float32), labels


def ood_images_from_files(dataset: str, root, n: int, side: int, seed: int = 0) -> np.ndarray:
    """``n`` OOD images drawn (without replacement, seeded) from the test split of a real dataset in MNIST's
    idx format (``"fashion-mnist"``, or ``"mnist"`` when the classifier was trained on something else),
    resized to ``side``×``side``, as float32 in [0, 1]."""
    from .datasets import real

    if dataset not in ("mnist", "fashion-mnist"):
        raise ValueError(f"OOD files must be an idx dataset ('fashion-mnist' or 'mnist'), got {dataset!r}")
    images, _ = real.load(dataset, root, "test")
    if n > len(images):
        raise ValueError(f"{dataset} in {root} holds {len(images)} test images; {n} were asked for")
    rng = np.random.default_rng([seed, 7, len(images)])
    x = images[rng.choice(len(images), n, replace=False)].astype(np.float64) / 255.0
    if x.shape[1:] != (side, side):
        x = ndimage.zoom(x, (1, side / x.shape[1], side / x.shape[2]), order=1)[:, :side, :side]
    return np.clip(x, 0, 1).astype(np.float32)


def prepare(
    arch,
    epochs,
    x_fit,
    y_fit,
    meta_pool,
    val_pool,
    pools: dict,
    *,
    n_sets: int,
    n_val_sets: int,
    set_size: int,
    seed: int = 0,
    outliers=None,
    detector_epochs: int = 4,
    cache=None,
):
    """Train a backbone (:func:`prepare_backbone`), fit AutoEval and the baselines (:func:`fit`, with the
    validation pool as DoC/ATC's held-out ID data) and compute its outputs on every image pool.

    Returns
    -------
    backbone : Backbone
    estimator : AutoEval
    outputs : dict of str -> Outputs
    """
    bb = prepare_backbone(
        arch,
        x_fit,
        y_fit,
        meta_pool,
        val_pool,
        epochs=epochs,
        n_sets=n_sets,
        n_val_sets=n_val_sets,
        set_size=set_size,
        seed=seed,
        outliers=outliers,
        detector_epochs=detector_epochs,
        cache=cache,
    )
    val_out = compute_outputs(bb.model, val_pool[0], rotation=True)
    est = fit(
        bb.meta_train,
        bb.meta_train_labels,
        bb.train,
        val_out,
        val_pool[1],
        seed=seed,
        val_meta=(bb.meta_val, bb.meta_val_labels),
    )
    return (
        bb,
        est,
        {
            name: compute_outputs(bb.model, x, rotation=True, detector=bb.detector)
            for name, x in pools.items()
        },
    )
