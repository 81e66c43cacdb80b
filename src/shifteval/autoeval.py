"""Label-free accuracy estimation with out-of-distribution detection (Zhu et al. 2023).

AutoEval (Deng & Zheng 2021) regresses a classifier's accuracy on an unlabeled test set from a
*representation* of that set: the mean and variance of the classifier's penultimate features and the
Fréchet distance (FD) between the set's features and the training set's (Zhu et al., §3.2). The
regressor learns from a *meta-dataset*: many labeled sample sets drawn from the training distribution and
transformed at random (§3.3), whose accuracy is known. Zhu et al. add energy-based OOD detection
(Liu et al. 2020; §3.4-3.5): images with energy ``E(x) = −T·logsumexp(f(x)/T)`` above the 99.5th
percentile of the training set's energies are treated as foreign; the estimate is

    (share of images judged in-distribution) × (AutoEval's estimate on those images).

Baselines: max-softmax thresholds, average confidence, DoC, ATC, rotation prediction, AutoEval with
linear regression on FD.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage
from scipy.special import logsumexp, softmax

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
        from .compat import import_timm

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


def _rotation_step_loss(model, xb, yb, gen):
    """Classification loss plus the rotation-prediction loss on the same batch rotated by k·90°."""
    torch = _torch()
    k = torch.randint(0, 4, (len(xb),), generator=gen)
    logits, _ = model(xb)
    _, rot_features = model(_rotate(xb, k))
    ce = torch.nn.functional.cross_entropy
    return ce(logits, yb) + ce(model.rotation(rot_features), k)


def train_feature_net(images, labels, *, arch: str = "cnn", epochs: int = 8, lr: float = 3e-3, batch_size: int = 128,
                      seed: int = 0, width: int = 32, progress=None):
    """Train :func:`feature_net` jointly on classification and rotation prediction (AdamW, one-cycle)."""
    torch = _torch()
    from .zoo.models import fit_torch

    images = _check_images(images, "training images")
    torch.manual_seed(int(seed))
    model = feature_net(arch, width=width)
    return fit_torch(model, images, labels, epochs=epochs, batch_size=batch_size, lr=lr, seed=seed,
                     step_loss=_rotation_step_loss, progress=progress)


@dataclass
class Outputs:
    """A classifier's outputs on a set of images (all numpy)."""

    logits: np.ndarray
    features: np.ndarray
    rotation_correct: np.ndarray | None = None

    @property
    def probs(self):
        return softmax(self.logits.astype(np.float64), axis=1)

    def subset(self, index):
        rot = None if self.rotation_correct is None else self.rotation_correct[index]
        return Outputs(self.logits[index], self.features[index], rot)


def compute_outputs(model, images, batch: int = 1024, rotation: bool = False) -> Outputs:
    """Logits and features of ``images`` (N, H, W) in batches.

    With ``rotation``, also whether the rotation head recognises each image turned by ``i mod 4`` quarter
    turns (image ``i``): one rotated copy per image instead of all four, an unbiased estimate of the
    rotation accuracy of any random subset at a quarter of the cost.
    """
    torch = _torch()
    images = _check_images(images)
    logits, feats, rot = [], [], []
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
    return Outputs(np.concatenate(logits), np.concatenate(feats), np.concatenate(rot) if rotation else None)


def _check_images(images, what: str = "images"):
    images = np.asarray(images, dtype=np.float32)
    if images.ndim != 3 or images.shape[1] < 8 or images.shape[1] != images.shape[2]:
        raise ValueError(f"{what} must be an (N, S, S) array of square grayscale images (S ≥ 8), got shape {images.shape}")
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
    f = outputs.features
    return Reference(f.mean(axis=0), np.cov(f, rowvar=False), energy(outputs.logits, temperature))


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
        is_id = energy(outputs.logits, self.temperature) <= tau
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


def fit(meta_outputs, meta_labels, train_outputs: Outputs, val_outputs: Outputs, val_labels, *,
        hidden=(128, 64, 32, 16), seed: int = 0, temperature: float = 1.0) -> AutoEval:
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
    """
    from sklearn.linear_model import LinearRegression
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if len(meta_outputs) < 2 or len(meta_outputs) != len(meta_labels):
        raise ValueError("need at least two meta-sets, each with its labels")
    ref = reference(train_outputs, temperature)
    reps = np.stack([representation(o.features, ref) for o in meta_outputs])
    acc = np.array([float((o.logits.argmax(1) == y).mean()) for o, y in zip(meta_outputs, meta_labels)])
    mlp = make_pipeline(StandardScaler(), MLPRegressor(hidden_layer_sizes=tuple(hidden), alpha=1e-3, max_iter=3000,
                                                       early_stopping=False, random_state=seed, learning_rate_init=1e-3))
    mlp.fit(reps, acc)
    linear = LinearRegression().fit(reps[:, -1:], acc)
    if all(o.rotation_correct is not None for o in meta_outputs):
        rot = np.array([o.rotation_correct.mean() for o in meta_outputs])
        slope, intercept = np.polyfit(rot, acc, 1)
    else:
        slope, intercept = np.nan, np.nan
    val_conf = val_outputs.probs.max(axis=1)
    val_correct = val_outputs.logits.argmax(1) == np.asarray(val_labels)
    return AutoEval(ref, mlp, linear, (float(slope), float(intercept)), float(val_correct.mean()),
                    float(val_conf.mean()), atc_threshold(val_conf, val_correct), temperature)


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

    photos = [img.mean(axis=2) / 255.0 for img in load_sample_images().images]
    out = np.empty((n, side, side))
    for i in range(n):
        photo = photos[rng.integers(len(photos))]
        size = int(rng.integers(side, 8 * side))
        r, c = rng.integers(0, photo.shape[0] - size), rng.integers(0, photo.shape[1] - size)
        patch = ndimage.zoom(photo[r : r + size, c : c + size], side / size, order=1)[:side, :side]
        lo, hi = np.percentile(patch, [2, 98])
        out[i] = np.clip((patch - lo) / max(hi - lo, 1e-3), 0, 1)
    return out


def _letters(n, side, rng):
    import string

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    chars = string.ascii_letters
    fonts = ("DejaVu Sans", "DejaVu Serif", "DejaVu Sans Mono")
    big = 4 * side  # render large, then shrink (anti-aliasing)
    glyphs = {}
    for font in fonts:
        for ch in chars:
            fig = Figure(figsize=(1, 1), dpi=big)
            canvas = FigureCanvasAgg(fig)
            fig.patch.set_facecolor("black")
            fig.text(0.5, 0.5, ch, color="white", fontsize=0.62 * big, family=font, ha="center", va="center", weight="bold")
            canvas.draw()
            glyphs[font, ch] = np.asarray(canvas.buffer_rgba())[..., 0] / 255.0
    keys = list(glyphs)
    base = np.stack([ndimage.zoom(glyphs[keys[rng.integers(len(keys))]], side / big, order=1)[:side, :side] for _ in range(n)])
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
            spec = (rng.standard_normal((side, side)) + 1j * rng.standard_normal((side, side)))
            f = np.hypot(*np.meshgrid(np.fft.fftfreq(side), np.fft.fftfreq(side)))
            f[0, 0] = np.inf
            img = np.real(np.fft.ifft2(spec / f))
            img = (img - img.min()) / (np.ptp(img) + 1e-12)
        else:  # Gabor patch
            env = np.exp(-((xx - 0.5) ** 2 + (yy - 0.5) ** 2) / (2 * rng.uniform(0.1, 0.3) ** 2))
            img = 0.5 + 0.5 * env * np.cos(2 * np.pi * freq * u + phase)
        out[i] = np.clip(img, 0, 1)
    return out


OOD_SOURCES = ("natural_patches", "letters", "textures")
OOD_SOURCES_FN = {"natural_patches": _natural_patches, "letters": _letters, "textures": _textures}


def cutout(images, rng: np.random.Generator, size: int = 6):
    """Erase one random ``size``×``size`` square per image (the paper's test-time '-A' transform)."""
    x = np.array(images, dtype=np.float32)
    n, h, w = x.shape
    for i, (r, c) in enumerate(zip(rng.integers(0, h - size + 1, n), rng.integers(0, w - size + 1, n))):
        x[i, r : r + size, c : c + size] = 0
    return x


def shear_contrast(images, rng: np.random.Generator, shear: float = 0.35, contrast: float = 0.6):
    """Shear each image by up to ±``shear`` and scale its contrast by ``contrast`` (the paper's '-B', with
    contrast standing in for hue, which gray images lack)."""
    x = _affine(np.asarray(images, dtype=np.float64), rng, max_angle=0, max_scale=0, max_shift=0, max_shear=shear)
    m = x.mean(axis=(1, 2), keepdims=True)
    return np.clip((x - m) * contrast + m, 0, 1).astype(np.float32)


# --- one backbone, prepared once and cached ---------------------------------------------------------------


@dataclass
class Backbone:
    """A trained feature network with its outputs on the training set and on every meta-set."""

    arch: str
    model: object
    train: Outputs
    meta_train: list
    meta_train_labels: list
    meta_val: list
    meta_val_labels: list


def _pack(outputs: list) -> dict:
    return {
        "lengths": np.array([len(o.logits) for o in outputs]),
        "logits": np.concatenate([o.logits for o in outputs]).astype(np.float32),
        "features": np.concatenate([o.features for o in outputs]).astype(np.float32),
        "rotation": np.concatenate([o.rotation_correct for o in outputs]).astype(np.float32),
    }


def _unpack(z, prefix: str) -> list:
    bounds = np.cumsum(np.r_[0, z[f"{prefix}_lengths"]])
    return [Outputs(z[f"{prefix}_logits"][a:b].astype(np.float64), z[f"{prefix}_features"][a:b].astype(np.float64),
                    z[f"{prefix}_rotation"][a:b].astype(np.float64)) for a, b in zip(bounds[:-1], bounds[1:])]


def prepare_backbone(arch, x_train, y_train, meta_pool, meta_val_pool, *, epochs: int, n_sets: int, n_val_sets: int,
                     set_size: int, seed: int = 0, cache=None, progress: bool = True) -> Backbone:
    """Train a feature network and compute its outputs on the training set and on every meta-set.

    Training meta-sets are drawn from ``meta_pool`` and validation meta-sets from ``meta_val_pool`` (two
    disjoint image pools, so the two never share an image). Outputs are computed in batches. With
    ``cache`` (a folder), the model weights and all outputs are stored under a key of every input and of
    this module's code, and reused.
    """
    import hashlib
    import io as _io
    from pathlib import Path

    from tqdm import tqdm

    from .io import atomic_write_bytes

    torch = _torch()
    (xm, ym), (xv, yv) = meta_pool, meta_val_pool
    h = hashlib.sha256()
    for part in (arch, epochs, n_sets, n_val_sets, set_size, seed):
        h.update(repr(part).encode())
    for arr in (x_train, y_train, xm, ym, xv, yv):
        h.update(np.ascontiguousarray(arr).tobytes())
    for module in ("autoeval.py", "zoo/models.py"):
        h.update((Path(__file__).parent / module).read_bytes())
    key = h.hexdigest()[:16]
    path = Path(cache) / f"{arch}-{key}.npz" if cache else None
    model = feature_net(arch)
    if path is not None and path.is_file():
        with np.load(path, allow_pickle=False) as z:
            model.load_state_dict(torch.load(_io.BytesIO(z["state"].tobytes()), weights_only=True))
            model.eval()
            train = _unpack(z, "train")[0]
            return Backbone(arch, model, train, _unpack(z, "meta"), list(_split(z["meta_labels"], z["meta_lengths"])),
                            _unpack(z, "val"), list(_split(z["val_labels"], z["val_lengths"])))
    bar = tqdm(total=epochs, desc=f"training {arch}", unit="epoch", disable=not progress)
    model = train_feature_net(x_train, y_train, arch=arch, epochs=epochs, seed=seed, progress=bar)
    bar.close()
    train = compute_outputs(model, x_train, rotation=True)
    meta, meta_labels, val, val_labels = [], [], [], []
    sets = [(meta, meta_labels, s) for s in meta_dataset(xm, ym, n_sets, set_size, seed)]
    sets += [(val, val_labels, s) for s in meta_dataset(xv, yv, n_val_sets, min(set_size, len(xv)), seed + 1)]
    for outs, labels, (x, y, _) in tqdm(sets, desc=f"meta-sets through {arch}", unit="set", disable=not progress):
        outs.append(compute_outputs(model, x, rotation=True))
        labels.append(y)
    if path is not None:
        buf = _io.BytesIO()
        torch.save(model.state_dict(), buf)
        arrays = {"state": np.frombuffer(buf.getvalue(), dtype=np.uint8)}
        for prefix, outs in (("train", [train]), ("meta", meta), ("val", val)):
            arrays.update({f"{prefix}_{k}": v for k, v in _pack(outs).items()})
        arrays["meta_labels"], arrays["val_labels"] = np.concatenate(meta_labels), np.concatenate(val_labels)
        out = _io.BytesIO()
        np.savez(out, **arrays)
        atomic_write_bytes(path, out.getvalue())
    return Backbone(arch, model, train, meta, meta_labels, val, val_labels)


def _split(values, lengths):
    bounds = np.cumsum(np.r_[0, lengths])
    return (values[a:b] for a, b in zip(bounds[:-1], bounds[1:]))


def mix(id_outputs: Outputs, id_labels, ood_outputs: Outputs, size: int, ood_share: float, rng: np.random.Generator):
    """A test set of ``size`` images, ``round(size·ood_share)`` of them OOD (§4.1), drawn without replacement.

    Returns the combined outputs, the ground-truth accuracy (every OOD image counts as an error) and
    whether each image is OOD.
    """
    if not 0 <= ood_share <= 1:
        raise ValueError(f"ood_share must be in [0, 1], got {ood_share}")
    n_ood = int(round(size * ood_share))
    n_id = size - n_ood
    if n_id > len(id_outputs.logits) or n_ood > len(ood_outputs.logits):
        raise ValueError(f"a test set of {n_id} ID + {n_ood} OOD images needs more images than the sources hold "
                         f"({len(id_outputs.logits)} ID, {len(ood_outputs.logits)} OOD)")
    i = rng.choice(len(id_outputs.logits), n_id, replace=False)
    o = rng.choice(len(ood_outputs.logits), n_ood, replace=False)
    a, b = id_outputs.subset(i), ood_outputs.subset(o)
    rot = None if a.rotation_correct is None else np.concatenate([a.rotation_correct, b.rotation_correct])
    combined = Outputs(np.concatenate([a.logits, b.logits]), np.concatenate([a.features, b.features]), rot)
    truth = float((a.logits.argmax(1) == np.asarray(id_labels)[i]).sum() / size)
    return combined, truth, np.r_[np.zeros(n_id, bool), np.ones(n_ood, bool)]


METHODS = ("softmax_0.8", "softmax_0.9", "average_confidence", "doc", "atc", "rotation", "autoeval_linear",
           "autoeval", "autoeval_energy_ood")


def evaluate(est: AutoEval, id_outputs: dict, id_labels: dict, ood_outputs: dict, *, set_size: int, ood_share: float,
             percentile: float, repeats: int, seed: int = 0, ids=None, oods=None) -> "pd.DataFrame":
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
                out, truth, is_ood = mix(id_outputs[s_id], id_labels[s_id], ood_outputs[s_ood], set_size, ood_share, g)
                e = energy(out.logits, est.temperature)
                rows.append({"id": s_id, "ood": s_ood, "repeat": r, "truth": truth, **est.estimates(out, percentile),
                             "id_excluded": float((e[~is_ood] > tau).mean()),
                             "ood_kept": float((e[is_ood] <= tau).mean()) if is_ood.any() else np.nan})
    return pd.DataFrame(rows)


def rmse_table(frame, methods=METHODS, by=("id", "ood")) -> "pd.DataFrame":
    """RMSE (points) per group (index ``"<id> + <ood>"``) and method, plus an ``all sets`` row."""
    import pandas as pd

    methods = [m for m in methods if m in frame]
    rows = {" + ".join(map(str, key)): {m: rmse(g[m], g["truth"]) for m in methods}
            for key, g in frame.groupby(list(by), sort=False)}
    rows["all sets"] = {m: rmse(frame[m], frame["truth"]) for m in methods}
    return pd.DataFrame(rows).T

def id_source(world, name: str, seed: int = 0):
    """Images and labels of an ID source: a split of the world (``v1``, ``matchedfrequency``, ...),
    optionally perturbed with ``+<perturbation>@<level>`` (e.g. ``v1+fog@3``, see :mod:`shifteval.corruptions`)."""
    from . import corruptions

    base, _, pert = name.partition("+")
    idx = world.split_index(base)
    images = world.images[idx]
    if pert:
        pname, _, level = pert.partition("@")
        if not level.isdigit():
            raise ValueError(f"ID source {name!r}: write a perturbation as '+<name>@<level>', e.g. 'v1+fog@3'")
        images = corruptions.corrupt(images, pname, int(level), seed)
    return images.astype(np.float32), world.labels[idx]


def prepare(arch, epochs, x_fit, y_fit, meta_pool, val_pool, pools: dict, *, n_sets: int, n_val_sets: int,
            set_size: int, seed: int = 0, cache=None):
    """Train a backbone (:func:`prepare_backbone`), fit AutoEval and the baselines (:func:`fit`, with the
    validation pool as DoC/ATC's held-out ID data) and compute its outputs on every image pool.

    Returns
    -------
    backbone : Backbone
    estimator : AutoEval
    outputs : dict of str -> Outputs
    """
    bb = prepare_backbone(arch, x_fit, y_fit, meta_pool, val_pool, epochs=epochs, n_sets=n_sets,
                          n_val_sets=n_val_sets, set_size=set_size, seed=seed, cache=cache)
    val_out = compute_outputs(bb.model, val_pool[0], rotation=True)
    est = fit(bb.meta_train, bb.meta_train_labels, bb.train, val_out, val_pool[1], seed=seed)
    return bb, est, {name: compute_outputs(bb.model, x, rotation=True) for name, x in pools.items()}
