"""AutoEval (§3.2-3.5) and every baseline of the chapter's tables.

- ``softmax_0.8``, ``softmax_0.9``: share of images with max-softmax above τ (Zhu et al. §4.3);
- ``average_confidence``: mean max-softmax;
- ``doc``: Difference of Confidences (Guillory et al. 2021): validation accuracy minus the drop in mean
  max-softmax from the validation set to the test set;
- ``atc``: Average Thresholded Confidence (Garg et al. 2022) in the authors' preferred form: softmax
  temperature-scaled on held-out ID data, score = negative entropy, threshold t with
  share(score < t) = validation error; the estimate is share(score ≥ t);
- ``rotation``: accuracy regressed linearly on rotation-prediction accuracy over the meta-sets (Deng et
  al. 2021);
- ``autoeval_linear``: linear regression on FD alone; ``autoeval``: the MLP on the full representation;
- ``autoeval_energy_ood``: the paper's method, (share judged ID) × MLP(ID part) (§3.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize_scalar
from scipy.special import log_softmax

from .energy import energy_threshold
from .network import Outputs
from .representation import Reference, meta_targets, reference, representation

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


def rmse(predicted: ArrayLike, actual: ArrayLike) -> float:
    """Root mean squared error in accuracy points (×100).

    Parameters
    ----------
    predicted, actual : array_like
        Estimated and true accuracies, as fractions.

    Returns
    -------
    float
        ``100 · sqrt(mean((predicted − actual)²))``.

    Examples
    --------
    >>> round(rmse([0.5, 0.7], [0.5, 0.6]), 6)
    7.071068
    """
    predicted, actual = np.asarray(predicted, float), np.asarray(actual, float)
    return float(100 * np.sqrt(np.mean((predicted - actual) ** 2)))


def fit_temperature(logits: ArrayLike, labels: ArrayLike) -> float:
    """Temperature scaling (Guo et al. 2017), as ATC calibrates first (Garg et al. 2022, §3).

    Parameters
    ----------
    logits : array_like, shape (N, K)
        Held-out ID logits.
    labels : array_like, shape (N,)
        Their true classes.

    Returns
    -------
    float
        The T in [0.05, 20] minimising the negative log-likelihood of ``softmax(logits / T)``.

    Examples
    --------
    >>> # right 3 times in 4 with logit gap 1: calibrated when sigmoid(1 / T) = 3/4, i.e. T = 1 / ln 3
    >>> round(fit_temperature([[1.0, 0.0]] * 4, [0, 0, 0, 1]), 3), round(float(1 / np.log(3)), 3)
    (0.91, 0.91)
    """
    z, y = np.asarray(logits, float), np.asarray(labels)

    def nll(log_t):
        return -log_softmax(z / np.exp(log_t), axis=1)[np.arange(len(y)), y].mean()

    return float(np.exp(minimize_scalar(nll, bounds=(np.log(0.05), np.log(20)), method="bounded").x))


def negative_entropy(logits: ArrayLike, temperature: float = 1.0) -> np.ndarray:
    """ATC's score Σ_k p_k log p_k of ``softmax(logits / T)`` (≤ 0; 0 for a one-hot prediction).

    Parameters
    ----------
    logits : array_like, shape (N, K)
        The classifier's logits.
    temperature : float
        T, e.g. from :func:`fit_temperature`.

    Returns
    -------
    ndarray, shape (N,)
        Between −log K (uniform) and 0.

    Examples
    --------
    >>> negative_entropy([[0.0, 0.0], [100.0, 0.0]]).round(4).tolist()
    [-0.6931, -0.0]
    """
    logp = log_softmax(np.asarray(logits, float) / temperature, axis=1)
    return (np.exp(logp) * logp).sum(axis=1)


def atc_threshold(scores: ArrayLike, correct: ArrayLike) -> float:
    """ATC (Garg et al. 2022, Eq. 1): the threshold t with share(score < t) = error rate on held-out ID data.

    Parameters
    ----------
    scores : array_like, shape (N,)
        Held-out ID scores (:func:`negative_entropy`).
    correct : array_like of bool, shape (N,)
        Whether each was classified correctly.

    Returns
    -------
    float
        The error-rate quantile of ``scores`` (their minimum when there is no error).

    Examples
    --------
    >>> round(atc_threshold([0.1, 0.2, 0.3, 0.4], [False, True, True, True]), 6)
    0.175
    """
    scores = np.asarray(scores, float)
    error = 1 - float(np.asarray(correct).mean())
    return float(np.quantile(scores, error)) if error > 0 else float(scores.min())


class _Regressor(Protocol):  # a fitted scikit-learn regressor
    def predict(self, x: ArrayLike, /) -> np.ndarray: ...


@dataclass
class AutoEval:
    """A fitted AutoEval with what the baselines need.

    Attributes
    ----------
    ref : Reference
    mlp, linear : fitted regressors (MLP on the full representation; linear regression on FD alone)
    rotation_fit : (slope, intercept) of accuracy against rotation accuracy over the meta-sets
    val_accuracy, val_confidence : the held-out ID validation set's accuracy and mean max-softmax (DoC)
    atc_temperature, atc_threshold : ATC's fitted temperature and negative-entropy threshold
    mlp_alpha : the L2 penalty chosen on the validation meta-sets
    """

    ref: Reference
    mlp: _Regressor
    linear: _Regressor
    rotation_fit: tuple
    val_accuracy: float
    val_confidence: float
    atc_temperature: float
    atc_threshold: float
    mlp_alpha: float = float("nan")

    def predict_mlp(self, outputs: Outputs) -> float:
        """AutoEval's estimate: the MLP on the set's representation (0 for fewer than two images)."""
        if len(outputs.features) < 2:
            return 0.0
        return float(np.clip(self.mlp.predict(representation(outputs.features, self.ref)[None])[0], 0, 1))

    def predict_linear(self, outputs: Outputs) -> float:
        """The linear baseline's estimate from the set's Fréchet distance."""
        fd = representation(outputs.features, self.ref)[-1]
        return float(np.clip(self.linear.predict([[fd]])[0], 0, 1))

    def is_id(self, outputs: Outputs, percentile: float = 99.5) -> np.ndarray:
        """Which images the energy threshold keeps as in-distribution (§3.5)."""
        return outputs.energies() <= energy_threshold(self.ref.energies, percentile)

    def estimates(self, outputs: Outputs, percentile: float = 99.5) -> dict:
        """Every method's accuracy estimate (fraction) for one unlabeled test set."""
        if len(outputs.logits) == 0:
            raise ValueError("the test set is empty")
        conf = outputs.probs.max(axis=1)
        is_id = self.is_id(outputs, percentile)
        ne = negative_entropy(outputs.logits, self.atc_temperature)
        est = {
            "softmax_0.8": float((conf > 0.8).mean()),
            "softmax_0.9": float((conf > 0.9).mean()),
            "average_confidence": float(conf.mean()),
            "doc": float(np.clip(conf.mean() + self.val_accuracy - self.val_confidence, 0, 1)),
            "atc": float((ne >= self.atc_threshold).mean()),
            "autoeval_linear": self.predict_linear(outputs),
            "autoeval": self.predict_mlp(outputs),
            "autoeval_energy_ood": float(is_id.mean()) * self.predict_mlp(outputs.subset(is_id)),
        }
        if outputs.rotation_correct is not None:
            slope, intercept = self.rotation_fit
            est["rotation"] = float(np.clip(slope * outputs.rotation_correct.mean() + intercept, 0, 1))
        return est


def fit(
    meta_outputs: list,
    meta_labels: list,
    train_outputs: Outputs,
    val_outputs: Outputs,
    val_labels: ArrayLike,
    *,
    hidden: tuple[int, ...] = (128, 64, 32, 16),
    alphas: tuple[float, ...] = (1.0, 1e-3, 1e-2, 0.1, 10.0),
    val_meta: tuple[list, list] | None = None,
    seed: int = 0,
) -> AutoEval:
    """Fit AutoEval (§3.2-3.3) and the baselines.

    Parameters
    ----------
    meta_outputs : list of Outputs
        The classifier's outputs on each training meta-set (with ``rotation_correct`` for rotation).
    meta_labels : list of ndarray
        Each meta-set's true classes.
    train_outputs : Outputs
        On the classifier's training set: the reference statistics and energies.
    val_outputs, val_labels : Outputs, array_like
        Held-out untransformed ID images (DoC, ATC), disjoint in base digit from the training set.
    hidden : tuple of int
        The MLP's hidden layers (four: five fully connected layers as in the paper's regressor).
    alphas : tuple of float
        L2 penalties tried; the one with the lowest RMSE on ``val_meta`` is kept (the first without it).
    val_meta : (list of Outputs, list of labels), optional
        Validation meta-sets, disjoint from the training meta-sets.
    seed : int
        The MLP's initialisation.

    Returns
    -------
    AutoEval
        With every baseline fitted.

    Raises
    ------
    ValueError
        With fewer than two meta-sets, or not one label array per meta-set.

    Examples
    --------
    >>> from shifteval.autoeval.network import Outputs
    >>> rng = np.random.default_rng(0)
    >>> def outs(n, shift):
    ...     return Outputs(rng.normal(size=(n, 3)), rng.normal(shift, 1, (n, 2)), rng.random(n) < 0.5)
    >>> metas = [outs(20, s) for s in (0.0, 0.5, 1.0, 1.5)]
    >>> labels = [rng.integers(0, 3, 20) for _ in metas]
    >>> val, val_labels = outs(30, 0.0), rng.integers(0, 3, 30)
    >>> est = fit(metas, labels, outs(50, 0.0), val, val_labels, hidden=(4,), alphas=(1.0,))
    >>> est.mlp_alpha, 0.05 <= est.atc_temperature <= 20
    (1.0, True)
    >>> sorted(est.estimates(outs(20, 1.0))) == sorted(METHODS)
    True
    """
    from sklearn.linear_model import LinearRegression

    if len(meta_outputs) < 2 or len(meta_outputs) != len(meta_labels):
        raise ValueError("need at least two meta-sets, each with its labels")
    ref = reference(train_outputs)
    reps, acc = meta_targets(meta_outputs, meta_labels, ref)
    alpha, mlp = _fit_regressor(reps, acc, hidden, alphas, val_meta, ref, seed)
    linear = LinearRegression().fit(reps[:, -1:], acc)
    slope, intercept = _rotation_line(meta_outputs, acc)
    val_labels = np.asarray(val_labels)
    val_correct = val_outputs.logits.argmax(1) == val_labels
    t = fit_temperature(val_outputs.logits, val_labels)
    return AutoEval(
        ref,
        mlp,
        linear,
        (float(slope), float(intercept)),
        float(val_correct.mean()),
        float(val_outputs.probs.max(axis=1).mean()),
        t,
        atc_threshold(negative_entropy(val_outputs.logits, t), val_correct),
        alpha,
    )


def _fit_regressor(
    reps: np.ndarray,
    acc: np.ndarray,
    hidden: tuple[int, ...],
    alphas: tuple[float, ...],
    val_meta: tuple[list, list] | None,
    ref: Reference,
    seed: int,
) -> tuple:
    """``(alpha, mlp)``: AutoEval's regressor (standardised inputs, an MLP) and its L2 penalty.

    With validation meta-sets and several penalties, every penalty is fitted and the one with the lowest
    RMSE on the validation meta-sets kept; otherwise the first penalty is used.
    """
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def mlp_with(alpha):
        model = MLPRegressor(hidden_layer_sizes=tuple(hidden), alpha=alpha, max_iter=3000, random_state=seed)
        return make_pipeline(StandardScaler(), model).fit(reps, acc)

    if val_meta is not None and len(alphas) > 1:
        v_reps, v_acc = meta_targets(*val_meta, ref)
        fitted = {a: mlp_with(a) for a in alphas}  # the winner is kept: fitting it again gives the same MLP
        scores = {a: rmse(m.predict(v_reps), v_acc) for a, m in fitted.items()}
        alpha = min(scores, key=scores.__getitem__)
        return alpha, fitted[alpha]
    return alphas[0], mlp_with(alphas[0])


def _rotation_line(meta_outputs: list, acc: np.ndarray) -> tuple:
    """Slope and intercept of accuracy against rotation-prediction accuracy over the meta-sets.

    Deng et al. (2021)'s rotation baseline; NaN unless every meta-set has its rotation correctness.
    """
    if all(o.rotation_correct is not None for o in meta_outputs):
        rot = np.array([o.rotation_correct.mean() for o in meta_outputs])
        slope, intercept = np.polyfit(rot, acc, 1)
        return slope, intercept
    return np.nan, np.nan
