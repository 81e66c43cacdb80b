"""The evaluation protocol (§4).

Test sets mixed from ID and OOD sources, the RMSE tables, the threshold and OOD-share sweeps, detection
quality and the bias on clean data. The held-out pools are in :mod:`shifteval.autoeval.pools`, the
labeled splits in :mod:`shifteval.datasets.splits`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .energy import auroc, energy, energy_threshold
from .estimators import METHODS, AutoEval, fit, rmse
from .network import Outputs
from .streams import stream, stream_seed


def mix(
    id_outputs: Outputs,
    id_labels: ArrayLike,
    ood_outputs: Outputs,
    size: int,
    ood_share: float,
    rng: np.random.Generator,
) -> tuple[Outputs, float, np.ndarray]:
    """A test set of ``size`` images, ``round(size·ood_share)`` of them OOD (§4.1), without replacement.

    Parameters
    ----------
    id_outputs, id_labels : Outputs, array_like
        The ID source's outputs and labels.
    ood_outputs : Outputs
        The OOD source's outputs.
    size : int
        Images in the test set.
    ood_share : float
        In [0, 1].
    rng : numpy.random.Generator
        Draws the images.

    Returns
    -------
    outputs : Outputs
        ID images first, then OOD.
    truth : float
        Accuracy with every OOD image counted as an error.
    is_ood : ndarray of bool

    Raises
    ------
    ValueError
        If ``ood_share`` is not in [0, 1] or a source has too few images.

    Examples
    --------
    >>> z = np.eye(3)[[0, 1, 2, 0]]
    >>> id_out, ood_out = Outputs(z, z), Outputs(z, z)
    >>> out, truth, is_ood = mix(id_out, [0, 1, 0, 0], ood_out, 4, 0.5, np.random.default_rng(0))
    >>> len(out), is_ood.tolist(), truth <= 0.5  # the 2 OOD images count as errors
    (4, [False, False, True, True], True)
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
    truth = float((a.logits.argmax(1) == np.asarray(id_labels)[i]).sum() / size)
    return Outputs.concatenate([a, b]), truth, np.r_[np.zeros(n_id, bool), np.ones(n_ood, bool)]


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
    ids: Sequence[str] | None = None,
    oods: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Every method's estimate and the truth on test sets mixed from every ID × OOD source pair (§4.1).

    ``ids`` defaults to the sources with labels in ``id_labels``, ``oods`` to the sources of
    ``ood_outputs`` without labels. Test set ``r`` of pair ``(i, j)`` at this share has its own stream.
    Each row also has ``id_excluded`` (share of ID images the detector removed) and ``ood_kept`` (share of
    OOD images it let through): the two error sources of the paper's Figure 3.

    Parameters
    ----------
    est : AutoEval
        The fitted estimators.
    id_outputs, id_labels, ood_outputs : dict of str -> Outputs / labels / Outputs
        Outputs and labels per source.
    set_size, ood_share, repeats : int, float, int
        Images per test set, the OOD share (:func:`mix`) and test sets per pair.
    percentile : float
        The energy threshold's percentile (:func:`shifteval.autoeval.energy.energy_threshold`).
    seed : int
        The chapter's seed (stream ``test_mix``).
    ids, oods : sequence of str, optional
        The sources to pair.

    Returns
    -------
    pandas.DataFrame
        One row per test set: ``id``, ``ood``, ``repeat``, ``truth``, each method, ``id_excluded``,
        ``ood_kept``.

    Raises
    ------
    ValueError
        If a source lacks outputs or labels.

    Examples
    --------
    >>> from sklearn.dummy import DummyRegressor; from shifteval.autoeval.representation import Reference
    >>> c = DummyRegressor(strategy="constant", constant=0.8).fit([[0.0]], [0.8])  # AutoEval says 0.8
    >>> est = AutoEval(Reference(np.zeros(2), np.eye(2), np.zeros(9)), c, c, (0.0, 0.0), 1.0, 1.0, 1.0, -1.0)
    >>> rng = np.random.default_rng(0)
    >>> def outs(e):  # 40 images, all with energy e (the threshold τ is 0)
    ...     return Outputs(rng.normal(size=(40, 3)), rng.normal(size=(40, 2)), rng.random(40) < 0.5, np.full(40, e))
    >>> v1, noise = outs(-1.0), outs(1.0)
    >>> y = v1.logits.argmax(1)  # v1's labels: every ID image classified correctly
    >>> f = evaluate(est, {"v1": v1}, {"v1": y}, {"noise": noise}, set_size=20, ood_share=0.25,
    ...              percentile=99.5, repeats=2)
    >>> f[["truth", "autoeval", "autoeval_energy_ood", "id_excluded", "ood_kept"]].round(6).values.tolist()[0]
    [0.75, 0.8, 0.6, 0.0, 0.0]
    """
    ids = [s for s in id_outputs if s in id_labels] if ids is None else list(ids)
    oods = [s for s in ood_outputs if s not in id_labels] if oods is None else list(oods)
    missing = [s for s in ids if s not in id_labels or s not in id_outputs] + [
        s for s in oods if s not in ood_outputs
    ]
    if missing:
        raise ValueError(f"no outputs or labels for source(s) {missing}")
    tau = energy_threshold(est.ref.energies, percentile)
    rows = []
    for s_id in ids:
        for s_ood in oods:
            for r in range(repeats):
                g = stream(seed, "test_mix", s_id, s_ood, r, int(round(1000 * ood_share)))
                out, truth, is_ood = mix(
                    id_outputs[s_id], id_labels[s_id], ood_outputs[s_ood], set_size, ood_share, g
                )
                e = out.energies()
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


def rmse_table(
    frame: pd.DataFrame, methods: Sequence[str] = METHODS, by: Sequence[str] = ("id", "ood")
) -> pd.DataFrame:
    """RMSE (points) per group (index ``"<id> + <ood>"``) and method, plus an ``all sets`` row.

    Parameters
    ----------
    frame : pandas.DataFrame
        From :func:`evaluate` (``truth`` and a column per method).
    methods : sequence of str
        Methods to tabulate (those absent from ``frame`` are skipped).
    by : sequence of str
        The grouping columns.

    Returns
    -------
    pandas.DataFrame
        Groups × methods.

    Examples
    --------
    >>> f = pd.DataFrame({"id": ["a", "a", "b"], "ood": "x", "truth": [0.5, 0.5, 0.9], "doc": [0.6, 0.4, 0.9]})
    >>> rmse_table(f).round(2)["doc"].to_dict()
    {'a + x': 10.0, 'b + x': 0.0, 'all sets': 8.16}
    """
    methods = [m for m in methods if m in frame]
    rows = {
        " + ".join(map(str, key)): {m: rmse(g[m], g["truth"]) for m in methods}
        for key, g in frame.groupby(list(by), sort=False)
    }
    rows["all sets"] = {m: rmse(frame[m], frame["truth"]) for m in methods}
    return pd.DataFrame(rows).T


def threshold_sweep(
    est: AutoEval, outputs: dict, id_labels: dict, percentiles: Sequence[float], **mixing: Any
) -> pd.DataFrame:
    """The paper's Figure 3: the two error sources and the RMSE per threshold percentile.

    Per percentile: the share of ID images excluded, of OOD images kept, and the RMSE of the OOD-aware
    estimate (one test set per pair).

    Parameters
    ----------
    est : AutoEval
        The fitted estimators.
    outputs : dict of str -> Outputs
        Every source; those with labels in ``id_labels`` are ID, the others OOD.
    id_labels : dict of str -> labels
        Labels of the ID sources.
    percentiles : sequence of float
        Threshold percentiles.
    **mixing
        ``set_size``, ``ood_share`` and optionally ``seed``, ``ids``, ``oods`` of :func:`evaluate`.

    Returns
    -------
    pandas.DataFrame
        Columns ``percentile``, ``id_excluded``, ``ood_kept``, ``rmse``.

    Examples
    --------
    >>> from sklearn.dummy import DummyRegressor; from shifteval.autoeval.representation import Reference
    >>> c = DummyRegressor(strategy="constant", constant=0.8).fit([[0.0]], [0.8])  # AutoEval says 0.8
    >>> est = AutoEval(Reference(np.zeros(2), np.eye(2), np.zeros(9)), c, c, (0.0, 0.0), 1.0, 1.0, 1.0, -1.0)
    >>> rng = np.random.default_rng(0)
    >>> def outs(e):  # 40 images, all with energy e (the threshold τ is 0)
    ...     return Outputs(rng.normal(size=(40, 3)), rng.normal(size=(40, 2)), rng.random(40) < 0.5, np.full(40, e))
    >>> v1, noise = outs(-1.0), outs(1.0)
    >>> y = v1.logits.argmax(1)  # v1's labels: every ID image classified correctly
    >>> s = threshold_sweep(est, {"v1": v1, "noise": noise}, {"v1": y}, [50, 99.5], set_size=20, ood_share=0.25)
    >>> s.round(6).values.tolist()  # a perfect detector: RMSE from the MLP's 0.8 against the truth 0.75
    [[50.0, 0.0, 0.0, 15.0], [99.5, 0.0, 0.0, 15.0]]
    """
    rows = []
    for q in percentiles:
        f = evaluate(est, outputs, id_labels, outputs, percentile=q, **{**mixing, "repeats": 1})
        rows.append(
            {
                "percentile": q,
                "id_excluded": f["id_excluded"].mean(),
                "ood_kept": f["ood_kept"].mean(),
                "rmse": rmse(f["autoeval_energy_ood"], f["truth"]),
            }
        )
    return pd.DataFrame(rows)


def share_sweep(
    est: AutoEval, outputs: dict, id_labels: dict, shares: Sequence[float], **mixing: Any
) -> pd.DataFrame:
    """The paper's Figure 4: every method's RMSE per OOD share (one test set per pair and share).

    Parameters
    ----------
    est, outputs, id_labels
        As in :func:`threshold_sweep`.
    shares : sequence of float
        OOD shares, in [0, 1].
    **mixing
        ``set_size``, ``percentile`` and optionally ``seed``, ``ids``, ``oods`` of :func:`evaluate`.

    Returns
    -------
    pandas.DataFrame
        Index ``ood_share``, one column per method of :data:`METHODS` that the outputs allow (``rotation``
        only where they carry ``rotation_correct``).

    Examples
    --------
    >>> from sklearn.dummy import DummyRegressor; from shifteval.autoeval.representation import Reference
    >>> c = DummyRegressor(strategy="constant", constant=0.8).fit([[0.0]], [0.8])  # AutoEval says 0.8
    >>> est = AutoEval(Reference(np.zeros(2), np.eye(2), np.zeros(9)), c, c, (0.0, 0.0), 1.0, 1.0, 1.0, -1.0)
    >>> rng = np.random.default_rng(0)
    >>> def outs(e):  # 40 images, all with energy e (the threshold τ is 0)
    ...     return Outputs(rng.normal(size=(40, 3)), rng.normal(size=(40, 2)), rng.random(40) < 0.5, np.full(40, e))
    >>> v1, noise = outs(-1.0), outs(1.0)
    >>> y = v1.logits.argmax(1)  # v1's labels: every ID image classified correctly
    >>> s = share_sweep(est, {"v1": v1, "noise": noise}, {"v1": y}, [0.0, 0.5], set_size=20, percentile=99.5)
    >>> s[["autoeval", "autoeval_energy_ood"]].round(2).values.tolist()
    [[20.0, 20.0], [30.0, 10.0]]
    >>> no_rotation = {k: Outputs(o.logits, o.features, None, o.energy) for k, o in (("v1", v1), ("noise", noise))}
    >>> "rotation" in share_sweep(est, no_rotation, {"v1": y}, [0.5], set_size=20, percentile=99.5)
    False
    """
    rows = []
    for share in shares:
        f = evaluate(est, outputs, id_labels, outputs, **{**mixing, "ood_share": share, "repeats": 1})
        rows.append({"ood_share": share, **{m: rmse(f[m], f["truth"]) for m in METHODS if m in f}})
    return pd.DataFrame(rows).set_index("ood_share")


def detection_table(
    train: Outputs, outputs: dict, ref_id: str, oods: Sequence[str], percentile: float
) -> pd.DataFrame:
    """AUROC of each OOD source against ``ref_id`` and the share of each set kept at the threshold.

    By the classifier's own energies and by the detector's (index: (energies of, set)).

    Parameters
    ----------
    train : Outputs
        On the classifier's training set (the threshold).
    outputs : dict of str -> Outputs
        Every set.
    ref_id : str
        The ID set the OOD sources are told apart from.
    oods : sequence of str
        The OOD sources.
    percentile : float
        The threshold's percentile.

    Returns
    -------
    pandas.DataFrame
        Columns ``AUROC`` (NaN for ``ref_id``) and ``share kept``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> v1 = Outputs(rng.normal(size=(40, 3)), rng.normal(size=(40, 2)), energy=np.full(40, -1.0))
    >>> noise = Outputs(rng.normal(size=(40, 3)), rng.normal(size=(40, 2)), energy=np.ones(40))
    >>> t = detection_table(v1, {"v1": v1, "noise": noise}, "v1", ["noise"], 99.5)
    >>> t.loc["detector (outlier exposure)"].values.tolist()
    [[1.0, 0.0], [nan, 1.0]]
    """
    scorers = {
        "classifier": lambda o: energy(o.logits),
        "detector (outlier exposure)": lambda o: o.energies(),
    }
    rows = {}
    for name, score in scorers.items():
        tau = energy_threshold(score(train), percentile)
        ref = score(outputs[ref_id])
        for s in oods:
            rows[(name, s)] = {
                "AUROC": auroc(ref, score(outputs[s])),
                "share kept": float(np.mean(score(outputs[s]) <= tau)),
            }
        rows[(name, ref_id)] = {"AUROC": np.nan, "share kept": float(np.mean(ref <= tau))}
    table = pd.DataFrame(rows).T
    table.index.names = ["energies of", "set"]
    return table


def clean_bias(est: AutoEval, outputs: Outputs, labels: ArrayLike, percentile: float) -> dict:
    """Every method's signed error (estimate − truth, accuracy points) on a whole clean ID set (no OOD).

    Parameters
    ----------
    est : AutoEval
        The fitted estimators.
    outputs, labels : Outputs, array_like
        The ID set.
    percentile : float
        The energy threshold's percentile.

    Returns
    -------
    dict of str -> float
        Method -> 100 · (estimate − accuracy).

    Examples
    --------
    >>> from sklearn.dummy import DummyRegressor; from shifteval.autoeval.representation import Reference
    >>> c = DummyRegressor(strategy="constant", constant=0.8).fit([[0.0]], [0.8])  # AutoEval says 0.8
    >>> est = AutoEval(Reference(np.zeros(2), np.eye(2), np.zeros(9)), c, c, (0.0, 0.0), 1.0, 1.0, 1.0, -1.0)
    >>> rng = np.random.default_rng(0)
    >>> def outs(e):  # 40 images, all with energy e (the threshold τ is 0)
    ...     return Outputs(rng.normal(size=(40, 3)), rng.normal(size=(40, 2)), rng.random(40) < 0.5, np.full(40, e))
    >>> v1, noise = outs(-1.0), outs(1.0)
    >>> y = v1.logits.argmax(1)  # v1's labels: every ID image classified correctly
    >>> round(clean_bias(est, v1, y, 99.5)["autoeval"], 6)  # MLP 0.8, accuracy 1
    -20.0
    """
    truth = float((outputs.logits.argmax(1) == np.asarray(labels)).mean())
    return {m: 100 * (v - truth) for m, v in est.estimates(outputs, percentile).items()}


def rmse_difference(
    predicted_a: ArrayLike,
    predicted_b: ArrayLike,
    actual: ArrayLike,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    rng: np.random.Generator | None = None,
) -> tuple[float, float, float]:
    """RMSE of estimator ``a`` minus that of ``b`` on the same sets, with a paired bootstrap interval.

    The sets (test sets, validation meta-sets) are drawn with replacement, the same draw for both
    estimators, and the percentile interval of the difference is returned. It measures how much the
    difference depends on which sets were drawn; it does not cover retraining the classifier, the
    detector or the regressor.

    Parameters
    ----------
    predicted_a, predicted_b : array_like, shape (n,)
        The two estimators' accuracies (fractions) on the same ``n >= 2`` sets.
    actual : array_like, shape (n,)
        The true accuracies.
    n_boot : int
        Bootstrap draws (at least 100).
    level : float
        The interval's coverage, in (0, 1).
    rng : numpy.random.Generator, optional
        The draws' stream (the chapter passes one of :func:`~shifteval.autoeval.streams.stream`).

    Returns
    -------
    difference, lo, hi : float
        ``rmse(a) - rmse(b)`` in accuracy points and its interval.

    Raises
    ------
    ValueError
        For arrays of different lengths or fewer than two sets, ``n_boot < 100`` or ``level`` outside (0, 1).

    Examples
    --------
    >>> truth = np.array([0.80, 0.70, 0.90, 0.60])
    >>> d, lo, hi = rmse_difference(truth + 0.01, truth + 0.05, truth, rng=np.random.default_rng(0))
    >>> round(d, 6), lo <= d <= hi < 0  # a errs by 1 point on every set, b by 5
    (-4.0, True)
    """
    a, b, y = (np.asarray(v, float) for v in (predicted_a, predicted_b, actual))
    if not a.shape == b.shape == y.shape or a.ndim != 1 or len(a) < 2:
        raise ValueError(
            f"need two estimates and the truth on the same n >= 2 sets, got {a.shape}, {b.shape}, {y.shape}"
        )
    if n_boot < 100 or not 0 < level < 1:
        raise ValueError(f"need n_boot >= 100 and level in (0, 1), got {n_boot} and {level}")
    rng = np.random.default_rng(0) if rng is None else rng  # a fixed stream unless the caller gives one
    idx = rng.integers(0, len(y), (n_boot, len(y)))
    sq_a, sq_b = (a - y) ** 2, (b - y) ** 2
    boot = 100 * (np.sqrt(sq_a[idx].mean(axis=1)) - np.sqrt(sq_b[idx].mean(axis=1)))
    lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return rmse(a, y) - rmse(b, y), float(lo), float(hi)


def doc_error(
    test: Outputs,
    test_labels: ArrayLike,
    val: Outputs,
    val_labels: ArrayLike,
    test_groups: ArrayLike | None = None,
    val_groups: ArrayLike | None = None,
) -> dict:
    """DoC's signed error on a whole ID set, split into the classifier's over-confidence on it and on the validation set.

    DoC (Guillory et al. 2021) shifts the validation accuracy by the drop in mean confidence (max-softmax):
    ``acc_val - (conf_val - conf_test)``. Its error is therefore ``(conf_test - acc_test) - (conf_val -
    acc_val)``, the difference of the classifier's two calibration gaps: zero exactly when the classifier is
    as over-confident on the test set as on the validation set. Each gap is a mean over images of
    ``confidence - correct``; its standard error is clustered by ``groups`` (images of one base digit are
    not independent draws) or taken over images, and the two sets are independent.

    Parameters
    ----------
    test, val : Outputs
        The classifier's outputs on the test set and on the validation set DoC reads its reference from.
    test_labels, val_labels : array_like
        Their true classes.
    test_groups, val_groups : array_like, optional
        A cluster label per image (the base digit it renders); each image is its own cluster when omitted.

    Returns
    -------
    dict
        In accuracy points: ``error`` (DoC minus the test accuracy, unclipped), ``se`` (its standard
        error), ``test_gap`` and ``val_gap`` (mean confidence minus accuracy on each set), ``test_accuracy``,
        ``val_accuracy``, ``test_confidence``, ``val_confidence``; and ``clusters`` (test, validation).

    Raises
    ------
    ValueError
        When a set has fewer than two clusters, or labels or groups do not match its outputs.

    Examples
    --------
    >>> z = np.log(np.array([[0.9, 0.1], [0.9, 0.1], [0.6, 0.4], [0.6, 0.4]]))
    >>> test = Outputs(z, np.zeros((4, 2)))  # confidence 0.75 on average, 3 of 4 right: gap 0
    >>> val = Outputs(z, np.zeros((4, 2)))  # the same confidences, 2 of 4 right: over-confident by 25 points
    >>> e = doc_error(test, [0, 0, 0, 1], val, [0, 1, 0, 1])
    >>> [round(e[k], 6) + 0.0 for k in ("error", "test_gap", "val_gap")]  # DoC says 0.5 - 0 for 0.75
    [-25.0, 0.0, 25.0]
    """
    parts = {}
    for name, out, labels, groups in (
        ("test", test, test_labels, test_groups),
        ("val", val, val_labels, val_groups),
    ):
        labels = np.asarray(labels)
        groups = np.arange(len(labels)) if groups is None else np.asarray(groups)
        if not len(labels) == len(groups) == len(out.logits):
            raise ValueError(f"{name}: {len(out.logits)} outputs, {len(labels)} labels, {len(groups)} groups")
        conf, correct = out.probs.max(axis=1), (out.logits.argmax(1) == labels).astype(float)
        d = conf - correct
        _, g = np.unique(groups, return_inverse=True)
        n, n_groups = len(d), int(g.max()) + 1
        if n_groups < 2:
            raise ValueError(f"{name}: the standard error needs at least two clusters, got {n_groups}")
        sums = np.bincount(g, weights=d - d.mean(), minlength=n_groups)
        var = n_groups / (n_groups - 1) * float((sums**2).sum()) / n**2
        parts[name] = (100 * d.mean(), 100 * correct.mean(), 100 * conf.mean(), 100**2 * var, n_groups)
    (t_gap, t_acc, t_conf, t_var, t_n), (v_gap, v_acc, v_conf, v_var, v_n) = parts["test"], parts["val"]
    return {
        "error": float(t_gap - v_gap), "se": float(np.sqrt(t_var + v_var)),
        "test_gap": float(t_gap), "val_gap": float(v_gap), "test_accuracy": float(t_acc),
        "val_accuracy": float(v_acc), "test_confidence": float(t_conf), "val_confidence": float(v_conf),
        "clusters": [t_n, v_n],
    }  # fmt: skip


def meta_validation(est: AutoEval, backbone: Any) -> tuple[dict, dict]:
    """The regressors' error on the validation meta-sets (§3.3), and what Figure 3's analog draws.

    Parameters
    ----------
    est : AutoEval
        The fitted estimators.
    backbone : Backbone
        Its outputs and labels on the training meta-sets (``meta_train``, ``meta_train_labels``) and the
        validation meta-sets (``meta_val``, ``meta_val_labels``).

    Returns
    -------
    summary : dict
        ``mlp`` and ``linear_fd``: RMSE in accuracy points of the MLP on the full representation and of
        linear regression on FD alone; ``mlp_alpha``: the MLP's chosen L2 penalty; ``accuracy_range``:
        the classifier's lowest and highest accuracy over the training meta-sets.
    regression : dict
        The keyword arguments of :func:`shifteval.viz.ood_autoeval.meta_regression`: FD and accuracy of
        every training and validation meta-set, both regressors' predictions and their RMSE.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from sklearn.dummy import DummyRegressor; from shifteval.autoeval.representation import Reference
    >>> c = DummyRegressor(strategy="constant", constant=0.75).fit([[0.0]], [0.75])  # predicts 0.75
    >>> est = AutoEval(Reference(np.zeros(2), np.eye(2), np.zeros(9)), c, c, (0.0, 0.0), 1.0, 1.0, 1.0, -1.0)
    >>> o = Outputs(np.array([[2.0, 0.0], [0.0, 2.0]]), np.eye(2))
    >>> bb = SimpleNamespace(meta_train=[o, o], meta_train_labels=[[0, 1], [0, 0]],
    ...                      meta_val=[o], meta_val_labels=[[0, 0]])
    >>> summary, regression = meta_validation(est, bb)
    >>> summary["mlp"], summary["accuracy_range"], regression["acc_val"].tolist()
    (25.0, [0.5, 1.0], [0.5])
    """
    from .representation import meta_targets

    reps_train, train_acc = meta_targets(backbone.meta_train, backbone.meta_train_labels, est.ref)
    reps_val, val_acc = meta_targets(backbone.meta_val, backbone.meta_val_labels, est.ref)
    pred_mlp = np.array([est.predict_mlp(o) for o in backbone.meta_val])
    pred_lin = np.array([est.predict_linear(o) for o in backbone.meta_val])
    summary = {
        "mlp": rmse(pred_mlp, val_acc),
        "linear_fd": rmse(pred_lin, val_acc),
        "mlp_alpha": est.mlp_alpha,
        "accuracy_range": [float(train_acc.min()), float(train_acc.max())],
    }
    regression = {
        "fd_train": reps_train[:, -1], "acc_train": train_acc, "fd_val": reps_val[:, -1], "acc_val": val_acc,
        "pred_mlp": pred_mlp, "pred_lin": pred_lin, "rmse_mlp": summary["mlp"], "rmse_lin": summary["linear_fd"],
    }  # fmt: skip
    return summary, regression


def _check_counts(counts: Sequence[int], have: int) -> None:
    """Refuse a count of meta-sets :func:`meta_set_sweep` cannot fit on (it needs 2..``have``)."""
    bad = [n for n in counts if not isinstance(n, (int, np.integer)) or not 2 <= n <= have]
    if bad or not len(counts):
        raise ValueError(
            f"counts must be integers in 2..{have} (the backbone's training meta-sets; extend_meta_sets draws "
            f"more), got {list(bad) or list(counts)}"
        )


def meta_set_sweep(
    backbone: Any,
    val_labels: ArrayLike,
    counts: Sequence[int],
    *,
    seed: int = 0,
    reference: int | None = None,
    rng: np.random.Generator | None = None,
    **fit_options: Any,
) -> pd.DataFrame:
    """The regressors' error on the validation meta-sets when fitted on the first ``n`` training meta-sets.

    Zhu et al. fit AutoEval's regression on 800 meta-sets (§4.1; the meta-dataset of §3.3). For each
    ``n`` of ``counts``, AutoEval is fitted on the backbone's first ``n`` training meta-sets exactly as
    :func:`~shifteval.autoeval.backbone.prepare` fits it on all of them (:func:`fit`, the same seed, the
    MLP's L2 penalty chosen on the same validation meta-sets), and :func:`meta_validation` measures it,
    so the row of ``n = len(backbone.meta_train)`` is the chapter's own validation error.
    :func:`~shifteval.autoeval.backbone.extend_meta_sets` draws more meta-sets than the backbone has.

    Parameters
    ----------
    backbone : Backbone
        From :func:`~shifteval.autoeval.backbone.prepare`: its training and validation meta-sets, its
        outputs on the training set (``train``) and on the validation pool (``val_pool``).
    val_labels : array_like
        The validation pool's labels (``pools.val[1]``; DoC and ATC need them, the regressors do not).
    counts : sequence of int
        Numbers of training meta-sets, each in 2..len(backbone.meta_train); any order, repeats ignored.
    seed : int
        The chapter's seed (stream ``regressor``, as :func:`~shifteval.autoeval.backbone.prepare` uses).
    reference : int, optional
        One of ``counts``: each count's MLP is then also compared with this count's on the same validation
        meta-sets (:func:`rmse_difference`, drawing from ``rng``).
    rng : numpy.random.Generator, optional
        The bootstrap's stream, with ``reference`` (by default a stream of ``seed``: ``regressor``, ``meta-set-sweep``).
    **fit_options
        ``hidden`` and ``alphas`` of :func:`fit` (its defaults otherwise).

    Returns
    -------
    pandas.DataFrame
        Index ``meta_sets`` (the counts, ascending); columns ``mlp`` and ``linear_fd`` (validation RMSE in
        accuracy points, as :func:`meta_validation`) and ``mlp_alpha`` (the penalty chosen); with
        ``reference``, ``mlp_gap`` (the MLP's RMSE minus the reference count's, points) and ``mlp_gap_lo``,
        ``mlp_gap_hi`` (its 95% paired bootstrap interval over the validation meta-sets). The validation
        meta-sets that measure the error also choose the penalty, so every row is slightly optimistic.

    Raises
    ------
    ValueError
        For no counts, a count that is not an integer in 2..len(backbone.meta_train), a ``reference``
        not among the counts, or a backbone without ``val_pool``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> rng = np.random.default_rng(0)
    >>> def outs(n, shift):
    ...     return Outputs(rng.normal(size=(n, 3)), rng.normal(shift, 1, (n, 2)), rng.random(n) < 0.5)
    >>> sets, labels = [outs(20, s) for s in np.linspace(0, 1.5, 6)], [rng.integers(0, 3, 20) for _ in range(6)]
    >>> bb = SimpleNamespace(meta_train=sets[:4], meta_train_labels=labels[:4], meta_val=sets[4:],
    ...                      meta_val_labels=labels[4:], train=outs(50, 0.0), val_pool=outs(30, 0.0))
    >>> sweep = meta_set_sweep(bb, rng.integers(0, 3, 30), [4, 2, 4], hidden=(4,), alphas=(1.0,))
    >>> sweep.index.tolist(), sweep.columns.tolist()
    ([2, 4], ['mlp', 'linear_fd', 'mlp_alpha'])
    >>> paired = meta_set_sweep(bb, rng.integers(0, 3, 30), [2, 4], hidden=(4,), alphas=(1.0,), reference=4,
    ...                         rng=np.random.default_rng(0))
    >>> paired.columns.tolist()[3:], float(paired.loc[4, "mlp_gap"])
    (['mlp_gap', 'mlp_gap_lo', 'mlp_gap_hi'], 0.0)
    >>> meta_set_sweep(bb, rng.integers(0, 3, 30), [0, 8])
    Traceback (most recent call last):
    ...
    ValueError: counts must be integers in 2..4 (the backbone's training meta-sets; extend_meta_sets draws more), got [0, 8]
    """
    _check_counts(counts, len(backbone.meta_train))
    if getattr(backbone, "val_pool", None) is None:
        raise ValueError("the backbone has no val_pool (its outputs on the validation pool): prepare sets it")
    if reference is not None and reference not in counts:
        raise ValueError(f"the reference count {reference} is not one of the counts {list(counts)}")
    if rng is None:  # the paired bootstrap's draws: a stream of the chapter's seed
        rng = np.random.default_rng(stream_seed(seed, "regressor", "meta-set-sweep"))
    rows, predictions = {}, {}
    for n in sorted({int(n) for n in counts}):
        est = fit(backbone.meta_train[:n], backbone.meta_train_labels[:n], backbone.train, backbone.val_pool,
                  val_labels, val_meta=(backbone.meta_val, backbone.meta_val_labels),
                  seed=stream_seed(seed, "regressor"), **fit_options)  # fmt: skip
        summary, regression = meta_validation(est, backbone)
        rows[n] = {k: summary[k] for k in ("mlp", "linear_fd", "mlp_alpha")}
        predictions[n], truth = regression["pred_mlp"], regression["acc_val"]
    if reference is not None:
        for n, row in rows.items():
            diff = rmse_difference(predictions[n], predictions[reference], truth, rng=rng)
            row |= dict(zip(("mlp_gap", "mlp_gap_lo", "mlp_gap_hi"), diff, strict=True))
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "meta_sets"
    return frame


def exclusion(est: AutoEval, outputs: Outputs, labels: ArrayLike, percentile: float) -> dict:
    """What the energy threshold does to a whole ID source: how much it excludes, and what it excludes.

    §3.5 counts every excluded image as misclassified; an excluded ID image the classifier got right is
    an error the estimate invents.

    Parameters
    ----------
    est : AutoEval
        The fitted estimators (their threshold).
    outputs, labels : Outputs, array_like
        The ID source.
    percentile : float
        The threshold's percentile.

    Returns
    -------
    dict
        ``accuracy`` (the classifier's, whole source), ``excluded_share`` and ``excluded_accuracy`` (the
        classifier's accuracy on the excluded images; NaN when none is excluded).

    Examples
    --------
    >>> from shifteval.autoeval.representation import Reference
    >>> est = AutoEval(Reference(np.zeros(2), np.eye(2), np.zeros(9)), None, None, (0, 0), 1, 1, 1, -1)
    >>> o = Outputs(np.eye(3)[[0, 1, 2, 0]], np.zeros((4, 2)), energy=np.array([-1.0, 1.0, 1.0, -1.0]))
    >>> exclusion(est, o, [0, 1, 0, 0], 99.5)  # τ = 0: images 1 and 2 excluded, one of them right
    {'accuracy': 0.75, 'excluded_share': 0.5, 'excluded_accuracy': 0.5}
    """
    correct = outputs.logits.argmax(1) == np.asarray(labels)
    excluded = ~est.is_id(outputs, percentile)
    return {
        "accuracy": float(correct.mean()),
        "excluded_share": float(excluded.mean()),
        "excluded_accuracy": float(correct[excluded].mean()) if excluded.any() else float("nan"),
    }


def by_source(
    frame: pd.DataFrame,
    est: AutoEval,
    outputs: dict,
    labels: dict,
    percentile: float,
    names: dict | None = None,
    methods: Sequence[str] = METHODS,
) -> pd.DataFrame:
    """Table 1 per ID source: every method's RMSE over the source's test sets, and what the detector excludes.

    Parameters
    ----------
    frame : pandas.DataFrame
        From :func:`evaluate`.
    est : AutoEval
        The fitted estimators.
    outputs, labels : dict of str -> Outputs / labels
        The ID sources' outputs and labels.
    percentile : float
        The threshold's percentile.
    names : dict of str -> str, optional
        Row names for some sources (e.g. the clean one as ``clean``).
    methods : sequence of str
        Methods to tabulate (those absent from ``frame`` are skipped).

    Returns
    -------
    pandas.DataFrame
        One row per ID source: a column per method (RMSE, points), then ``excluded_share`` and
        ``excluded_accuracy`` (:func:`exclusion`) and ``ood_aware_bias`` (mean signed error of
        ``autoeval_energy_ood``, points).

    Examples
    --------
    >>> from sklearn.dummy import DummyRegressor; from shifteval.autoeval.representation import Reference
    >>> c = DummyRegressor(strategy="constant", constant=0.8).fit([[0.0]], [0.8])
    >>> est = AutoEval(Reference(np.zeros(2), np.eye(2), np.zeros(9)), c, c, (0.0, 0.0), 1.0, 1.0, 1.0, -1.0)
    >>> rng = np.random.default_rng(0)
    >>> def outs(e):
    ...     return Outputs(rng.normal(size=(40, 3)), rng.normal(size=(40, 2)), rng.random(40) < 0.5, np.full(40, e))
    >>> v1, noise = outs(-1.0), outs(1.0)
    >>> y = v1.logits.argmax(1)
    >>> f = evaluate(est, {"v1": v1}, {"v1": y}, {"noise": noise}, set_size=20, ood_share=0.25,
    ...              percentile=99.5, repeats=2)
    >>> t = by_source(f, est, {"v1": v1}, {"v1": y}, 99.5, names={"v1": "clean"})
    >>> t.loc["clean", ["autoeval", "autoeval_energy_ood", "excluded_share"]].round(2).tolist()
    [5.0, 15.0, 0.0]
    """
    rows = {}
    for s, g in frame.groupby("id", sort=False):
        row: dict[str, Any] = {m: rmse(g[m], g["truth"]) for m in methods if m in g}
        row |= {k: v for k, v in exclusion(est, outputs[s], labels[s], percentile).items() if k != "accuracy"}
        row["ood_aware_bias"] = float(100 * (g["autoeval_energy_ood"] - g["truth"]).mean())
        rows[(names or {}).get(s, s)] = row
    return pd.DataFrame(rows).T


def threshold_from(est: AutoEval, energies: ArrayLike) -> AutoEval:
    """The same estimators with the energy threshold read off other energies (not the training images').

    Parameters
    ----------
    est : AutoEval
        The fitted estimators.
    energies : array_like
        The energies whose percentile becomes τ (e.g. the meta-sets' images, passed through the detector).

    Returns
    -------
    AutoEval
        A copy; only :attr:`AutoEval.ref`'s ``energies`` differ, so only the OOD-aware estimate changes.

    Examples
    --------
    >>> from shifteval.autoeval.representation import Reference
    >>> est = AutoEval(Reference(np.zeros(2), np.eye(2), np.zeros(9)), None, None, (0, 0), 1, 1, 1, -1)
    >>> o = Outputs(np.eye(2), np.zeros((2, 2)), energy=np.array([0.5, 2.0]))
    >>> est.is_id(o).tolist(), threshold_from(est, [1.0] * 9).is_id(o).tolist()
    ([False, False], [True, False])
    """
    return replace(est, ref=replace(est.ref, energies=np.asarray(energies, float)))


def compare_thresholds(
    frame: pd.DataFrame, table: pd.DataFrame, alt_frame: pd.DataFrame, alt_table: pd.DataFrame, name: str
) -> dict:
    """The OOD-aware estimate under the paper's threshold and under another one, per ID source.

    Parameters
    ----------
    frame, table : pandas.DataFrame
        :func:`evaluate` and :func:`by_source` with the paper's threshold.
    alt_frame, alt_table : pandas.DataFrame
        The same with the other threshold (:func:`threshold_from`).
    name : str
        The other threshold's method name.

    Returns
    -------
    dict
        ``autoeval_energy_ood`` and ``name``: RMSE per ID source and over ``all sets``;
        ``excluded_share``: per method, per ID source; ``ood_kept``: per method, the mean share of OOD
        images kept.

    Examples
    --------
    >>> f = pd.DataFrame({"id": "a", "truth": [0.5, 0.7], "autoeval_energy_ood": [0.5, 0.5], "ood_kept": [0.0, 0.2]})
    >>> t = pd.DataFrame({"autoeval_energy_ood": [14.14], "excluded_share": [0.1]}, index=["a"])
    >>> r = compare_thresholds(f, t, f, t, "other")
    >>> r["other"]["a"], round(r["other"]["all sets"], 2), r["ood_kept"]
    (14.14, 14.14, {'autoeval_energy_ood': 0.1, 'other': 0.1})
    """
    out: dict[str, Any] = {"excluded_share": {}, "ood_kept": {}}
    for method, f, t in (("autoeval_energy_ood", frame, table), (name, alt_frame, alt_table)):
        out[method] = {
            **t["autoeval_energy_ood"].to_dict(),
            "all sets": rmse(f["autoeval_energy_ood"], f["truth"]),
        }
        out["excluded_share"][method] = t["excluded_share"].to_dict()
        out["ood_kept"][method] = float(f["ood_kept"].mean())
    return out
