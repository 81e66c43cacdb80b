"""The analyses of the ``your-replication`` chapter, run on a loaded replication folder.

Each function takes a :class:`shifteval.yourrep.folder.ReplicationData` and calls the book's algorithms
from their own modules: the linear and probit fits and bootstraps of Recht et al. (2019)
(:mod:`shifteval.linfit`, :mod:`shifteval.linfit.perimage`), matched evaluation (Anzaku et al., Algorithms 1
and 2, :mod:`shifteval.matching`), the selection-frequency adjustment (Engstrom et al. 2020,
:mod:`shifteval.selection`), the misclassification likelihood matrix (Sikar et al.,
:mod:`shifteval.mlm`) and the label-free accuracy estimators that need only probabilities
(:mod:`shifteval.autoeval.estimators`). Nothing here is a new algorithm: this module only feeds a
folder to them and collects what they return.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from shifteval import linfit, matching, mlm, selection, zoo
from shifteval.autoeval import estimators
from shifteval.datasets import published
from shifteval.linfit import perimage

from .folder import UNLABELED, ReplicationData

#: Recht et al. (2019) lines the chapter compares yours with (§3.3, Figure 1): the transcribed table each was
#: fitted on and the key of the printed line in :func:`shifteval.datasets.published.reported`.
REFERENCES = {
    "CIFAR-10": ("recht2019_cifar10", "cifar10_fit"),
    "ImageNet": ("recht2019_imagenet_top1_matchedfrequency", "imagenet_top1_matchedfrequency_fit"),
}
LABEL_FREE = ("softmax_0.8", "softmax_0.9", "average_confidence", "doc", "atc")


def accuracy_table(data: ReplicationData, alpha: float = 0.05) -> pd.DataFrame:
    """Each model's accuracy on both sets with Clopper-Pearson intervals (Recht et al. 2019, Fig. 1).

    Parameters
    ----------
    data : ReplicationData
        A loaded folder.
    alpha : float
        1 - confidence level of the intervals.

    Returns
    -------
    pandas.DataFrame
        Index the models; columns ``kind``, ``acc_original``, ``acc_new`` (fractions), their
        ``*_low``/``*_high`` bounds and ``gap`` (original - new, points).

    Examples
    --------
    >>> from shifteval.yourrep import example
    >>> accuracy_table(example.tiny()).round(3).loc["m0", ["acc_original", "acc_new"]].tolist()
    [0.6, 0.4]
    """
    rows = {}
    for i, m in enumerate(data.models):
        row = {"kind": data.kinds[m]}
        for s in ("original", "new"):
            c = data.correct[s][i]
            lo, hi = linfit.clopper_pearson(int(c.sum()), len(c), alpha)
            row |= {f"acc_{s}": float(c.mean()), f"acc_{s}_low": float(lo), f"acc_{s}_high": float(hi)}
        row["gap"] = 100 * (row["acc_original"] - row["acc_new"])
        rows[m] = row
    return pd.DataFrame(rows).T.infer_objects()


def fit_lines(
    data: ReplicationData, *, n_boot: int = 10_000, n_boot_images: int = 1000, ci: float = 0.95, seed: int = 0
) -> dict:
    """Linear and probit fits of new against original accuracy over your models (Recht et al. 2019, §3.3).

    Intervals come from two bootstraps: over models (:func:`shifteval.linfit.fit_linear`) and over
    models *and* images of both test sets (:func:`shifteval.linfit.perimage.two_level_bootstrap`).

    Parameters
    ----------
    data : ReplicationData
        A loaded folder with at least 3 models of different original accuracy.
    n_boot, n_boot_images : int
        Replicates of the two bootstraps.
    ci : float
        Confidence level.
    seed : int
        Seed of both bootstraps.

    Returns
    -------
    dict
        ``{scale: {"fit": LinearFit, "slope_ci_images": (lo, hi), "intercept_ci_images": (lo, hi)}}`` for
        ``"linear"`` and ``"probit"``.

    Examples
    --------
    >>> from shifteval.yourrep import example
    >>> f = fit_lines(example.tiny(), n_boot=200, n_boot_images=50)
    >>> sorted(f), f["linear"]["fit"].n
    (['linear', 'probit'], 4)
    """
    x1, x2 = data.correct["original"], data.correct["new"]
    out = {}
    q = [(1 - ci) / 2, (1 + ci) / 2]
    for scale in linfit.SCALES:
        fit = linfit.fit_linear(x1.mean(1), x2.mean(1), scale=scale, n_boot=n_boot, ci=ci, seed=seed)
        s, i = perimage.two_level_bootstrap(x1, x2, n_boot_images, np.random.default_rng(seed), scale)
        out[scale] = {
            "fit": fit,
            "slope_ci_images": tuple(float(v) for v in np.nanquantile(s, q)),
            "intercept_ci_images": tuple(float(v) for v in np.nanquantile(i, q)),
        }
    return out


def reference_table(name: str) -> pd.DataFrame:
    """The models behind one of Recht et al.'s (2019) published lines (§3.3, Figure 1).

    CIFAR-10: the 34 models of Table 11; ImageNet: the 64 convolutional networks of Table 14 (the
    paper's line leaves out the three Fisher-vector models, App. C.4.4).

    Parameters
    ----------
    name : str
        A key of :data:`REFERENCES`.

    Returns
    -------
    pandas.DataFrame
        The transcribed table (``orig_acc``, ``new_acc`` in percent).

    Examples
    --------
    >>> len(reference_table("CIFAR-10")), len(reference_table("ImageNet"))
    (34, 64)
    """
    if name not in REFERENCES:
        raise ValueError(f"unknown reference {name!r}; expected one of {sorted(REFERENCES)}")
    table = published.load_table(REFERENCES[name][0])
    return table[~published.is_fisher_vector(table.model)].reset_index(drop=True)


def reference_lines(n_boot: int = 10_000, seed: int = 0) -> dict:
    """Recht et al.'s (2019) CIFAR-10 and ImageNet (MatchedFrequency, top-1) lines.

    The ``printed`` line is the paper's (§3.3: slope and offset in percent); ``linear`` and ``probit``
    are least-squares fits of the same models (:func:`reference_table`) with a bootstrap over them,
    for the band around the line and for the probit axes, on which the paper printed no line. The
    linear refit equals the printed line to within 0.1 points of offset (the linear-fits chapter).

    Parameters
    ----------
    n_boot : int
        Bootstrap replicates over the published models.
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    dict
        ``{name: {"printed": {"slope", "intercept"}, "linear": LinearFit, "probit": LinearFit,
        "range": (lowest, highest original accuracy, fractions)}}`` for the names of :data:`REFERENCES`.

    Examples
    --------
    >>> refs = reference_lines(n_boot=100)
    >>> sorted(refs), refs["ImageNet"]["printed"]["slope"], round(refs["ImageNet"]["linear"].slope, 2)
    (['CIFAR-10', 'ImageNet'], 1.11, 1.11)
    """
    printed = published.reported()["recht2019"]
    out = {}
    for name, (_, key) in REFERENCES.items():
        table = reference_table(name)
        entry: dict[str, Any] = {
            s: linfit.fit_table(table, scale=s, n_boot=n_boot, seed=seed) for s in linfit.SCALES
        }
        entry["printed"] = {k: float(printed[key][k]) for k in ("slope", "intercept")}
        entry["range"] = (float(table["orig_acc"].min()) / 100, float(table["orig_acc"].max()) / 100)
        out[name] = entry
    return out


def compare_with_references(table: pd.DataFrame, refs: dict) -> pd.DataFrame:
    """How far your models' new accuracies lie from each printed line, within the line's range (points).

    Each line is Recht et al.'s (2019, §3.3) printed one, on the linear axes it was printed on; it is
    compared only with your models whose original accuracy lies within the range of the models it was
    fitted on (a line says nothing about accuracies it never saw), and the models outside are counted.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`accuracy_table`.
    refs : dict
        :func:`reference_lines`.

    Returns
    -------
    pandas.DataFrame
        Index the references; ``n_inside`` (your models inside the line's range), ``n_above`` (those of
        them above the line) and ``inside_range`` (their share), ``residual`` (mean of new accuracy minus the printed line over them, points; NaN
        when none is inside), ``within_band`` (share of them inside the refit's pointwise bootstrap band),
        ``x_min``/``x_max`` (the range, fractions) and ``farthest_outside`` (how far, in points of
        original accuracy, the farthest of your models lies outside the range; 0 when none does).

    Examples
    --------
    Two models inside the CIFAR-10 range (83.3% to 98.4%) and one far below it:

    >>> t = pd.DataFrame({"acc_original": [0.9, 0.95, 0.5], "acc_new": [0.8, 0.88, 0.3]})
    >>> c = compare_with_references(t, reference_lines(n_boot=100))
    >>> c.loc["CIFAR-10", ["n_inside", "residual", "farthest_outside"]].round(1).tolist()
    [2.0, 0.4, 33.3]
    """
    x, y = table["acc_original"].to_numpy(float), table["acc_new"].to_numpy(float)
    rows = {}
    for name, r in refs.items():
        lo_x, hi_x = r["range"]
        inside = (x >= lo_x) & (x <= hi_x)
        line = r["printed"]["slope"] * x + r["printed"]["intercept"] / 100
        lo, hi = r["linear"].band(x)
        rows[name] = {
            "n_inside": int(inside.sum()),
            "n_above": int((y > line)[inside].sum()),
            "inside_range": float(inside.mean()),
            "residual": 100 * float(np.mean((y - line)[inside])) if inside.any() else float("nan"),
            "within_band": float(np.mean(((y >= lo) & (y <= hi))[inside])) if inside.any() else float("nan"),
            "x_min": lo_x,
            "x_max": hi_x,
            "farthest_outside": 100 * float(np.max(np.maximum(lo_x - x, x - hi_x).clip(min=0), initial=0.0)),
        }
    return pd.DataFrame(rows).T


def matched_gaps(data: ReplicationData, *, eps: float = 0.005, n_runs: int = 10, seed: int = 0) -> dict:
    """Matched evaluation (Anzaku et al., Algorithms 1 and 2) of every model with probabilities.

    Parameters
    ----------
    data : ReplicationData
        A loaded folder.
    eps, n_runs, seed
        As for :func:`shifteval.matching.matched_table`.

    Returns
    -------
    dict
        ``{"label_and_prob": DataFrame, "prob": DataFrame}`` (:func:`shifteval.matching.matched_table`),
        gaps as fractions, source - target (the larger set is the source).

    Examples
    --------
    >>> from shifteval.yourrep import example
    >>> t = matched_gaps(example.tiny(), n_runs=2)["prob"]
    >>> sorted(t.index)[:2], t.source_set.iloc[0]
    (['m0', 'm1'], 'original')
    """
    pairs = {}
    for m in data.models:
        if m in data.probs["original"] and m in data.probs["new"]:
            a = zoo.Predictions(m, "original", data.labels["original"], data.probs["original"][m], {})
            b = zoo.Predictions(m, "new", data.labels["new"], data.probs["new"][m], {})
            pairs[m] = (a, b)
    return {
        by: matching.matched_table(pairs, eps=eps, by=by, n_runs=n_runs, seed=seed, names=("original", "new"))
        for by in matching.METHODS
    }


def _votes_matrix(k: np.ndarray, annotators: np.ndarray, width: int, rng: np.random.Generator) -> np.ndarray:
    """0/1 votes, k ones among each image's annotators in random order, NaN beyond (the jackknife's input)."""
    out = np.full((len(k), width), np.nan)
    for i, (ki, ni) in enumerate(zip(k, annotators, strict=True)):
        row = np.zeros(ni)
        row[:ki] = 1
        out[i, :ni] = rng.permutation(row)
    return out


def selection_adjusted(
    data: ReplicationData, *, n_boot: int = 100, ci: float = 0.95, k: int = 3, seed: int = 0
) -> tuple[pd.DataFrame, dict]:
    """Selection-frequency-adjusted new accuracy of every model (Engstrom et al. 2020, §5).

    The naive estimator (Eq. 4) on the vote counts; the leave-one-annotator-out jackknife (§5.2) on
    votes laid out from the counts (``k`` ones among ``n`` per image, in an order drawn from ``seed``;
    counts do not say which annotator cast which vote, and the jackknife's estimate depends on it only
    through that order); the parametric estimator (§5.3) with a percentile bootstrap over images
    (App. F.1).

    Parameters
    ----------
    data : ReplicationData
        A loaded folder with votes.
    n_boot : int
        Bootstrap samples of the parametric estimator (>= 2).
    ci : float
        Coverage of its interval.
    k : int
        Beta-binomial mixture components.
    seed : int
        Seed of the vote order, the mixtures and the bootstrap.

    Returns
    -------
    table : pandas.DataFrame
        Index the models; ``acc_original``, ``acc_new``, ``naive``, ``jackknife``, ``jackknife_se``
        (NaN where some image has fewer than 2 votes), ``parametric``, ``parametric_low``,
        ``parametric_high`` (fractions).
    notes : dict
        ``jackknife`` (None, or why it was skipped) and ``annotators``, the numbers of annotators per image
        seen (sorted, each once).

    Examples
    --------
    >>> from shifteval.yourrep import example
    >>> t, notes = selection_adjusted(example.tiny(votes=True), n_boot=2)
    >>> list(t.columns[:3]), notes["jackknife"]
    (['acc_original', 'acc_new', 'naive'], None)
    """
    (k1, annotators_original), (k2, annotators_new) = data.votes["original"], data.votes["new"]
    annotators = (annotators_original, annotators_new)
    f = data.correct["new"]
    naive = selection.naive_adjusted_accuracy(k1, k2, f, annotators)
    seen = sorted({int(v) for v in np.concatenate(annotators)})
    notes: dict[str, Any] = {"annotators": seen, "jackknife": None}
    jack, se = np.full(len(f), np.nan), np.full(len(f), np.nan)
    if seen[0] < 2:
        notes["jackknife"] = "some image has fewer than 2 votes (leaving one annotator out leaves none)"
    else:
        rng = np.random.default_rng(seed)
        width = seen[-1]
        res = selection.jackknife_adjusted_accuracy(
            _votes_matrix(k1, annotators_original, width, rng),
            _votes_matrix(k2, annotators_new, width, rng),
            f,
        )
        jack, se = np.asarray(res.corrected), np.asarray(res.std_error)
    boot = selection.bootstrap_parametric(k1, k2, f, annotators, n_boot=n_boot, ci=ci, seed=seed, k=k)
    table = pd.DataFrame(
        {
            "acc_original": data.correct["original"].mean(1),
            "acc_new": f.mean(1),
            "naive": naive,
            "jackknife": jack,
            "jackknife_se": se,
            # g lies in [0, 1], so do the integrals; clipping removes float rounding only
            "parametric": np.clip(boot["estimate"], 0, 1),
            "parametric_low": np.clip(boot["low"], 0, 1),
            "parametric_high": np.clip(boot["high"], 0, 1),
        },
        index=list(data.models),
    )
    return table, notes


def _offdiag(m: np.ndarray) -> np.ndarray:
    return m[~np.eye(len(m), dtype=bool)]


def mlm_of_best(data: ReplicationData, n_top: int = 5) -> dict:
    """The misclassification likelihood matrix (Sikar et al., Eqs. 1-4) of your best model on both sets.

    Ours: the centroids are the mean softmax outputs of the model's correct predictions on the
    *original test set* (the paper uses the training set, which a replication folder does not hold).

    Parameters
    ----------
    data : ReplicationData
        A loaded folder where :func:`shifteval.yourrep.folder.available_analyses` allows ``mlm``.
    n_top : int
        Confusions listed per set.

    Returns
    -------
    dict
        ``model``; ``matrix`` and ``rates`` (observed confusion rates) per set; ``rho`` (Spearman of the
        MLM with the confusion rates, per set); ``stability`` (Spearman between the two sets' MLMs);
        ``top`` (per set, :func:`shifteval.mlm.top_confusions`).

    Examples
    --------
    >>> from shifteval.yourrep import example
    >>> r = mlm_of_best(example.tiny())
    >>> r["model"], r["matrix"]["new"].shape
    ('m3', (2, 2))
    """
    acc = {m: data.correct["original"][i].mean() for i, m in enumerate(data.models)}
    both = [m for m in data.models if m in data.probs["original"] and m in data.probs["new"]]
    best = max(both, key=lambda m: acc[m])
    centroids = mlm.initial_centroids(data.probs["original"][best], data.labels["original"])
    out = {"model": best, "matrix": {}, "rates": {}, "rho": {}, "top": {}}
    for s in ("original", "new"):
        p, y = data.probs[s][best], data.labels[s]
        chunk = max(1, 20_000_000 // data.n_classes**2)  # about 160 MB of distances at a time
        out["matrix"][s] = mlm.misclassification_likelihood_matrix(p, y, centroids, chunk=chunk)
        out["rates"][s] = mlm.confusion_rates(y, p.argmax(1), data.n_classes)
        out["rho"][s] = (
            mlm.rank_agreement(out["matrix"][s], out["rates"][s])[0] if data.n_classes > 2 else np.nan
        )
        out["top"][s] = mlm.top_confusions(out["matrix"][s], n=n_top)
    a, b = _offdiag(out["matrix"]["original"]), _offdiag(out["matrix"]["new"])
    out["stability"] = float(stats.spearmanr(a, b)[0]) if len(a) > 2 else float("nan")
    return out


def label_free_estimates(val_probs: np.ndarray, val_labels: np.ndarray, test_probs: np.ndarray) -> dict:
    """Label-free accuracy estimates that need only softmax probabilities (Zhu et al.'s baselines).

    Thresholded softmax (τ = 0.8, 0.9), average confidence, DoC (Guillory et al. 2021) and ATC (Garg et
    al. 2022), calibrated on a labeled held-out set (here: the original test set). ATC's temperature is
    fitted to the log-probabilities, which are the logits up to a constant per row.

    Parameters
    ----------
    val_probs : ndarray, shape (N, K)
        Probabilities on the labeled held-out set.
    val_labels : ndarray, shape (N,)
        Its labels.
    test_probs : ndarray, shape (U, K)
        Probabilities on the set whose accuracy is estimated.

    Returns
    -------
    dict
        One estimate (fraction) per name of :data:`LABEL_FREE`.

    Examples
    --------
    >>> p = np.array([[0.9, 0.1], [0.6, 0.4], [0.3, 0.7], [0.95, 0.05]])
    >>> e = label_free_estimates(p, np.array([0, 1, 1, 0]), p[:2])
    >>> e["average_confidence"], e["softmax_0.8"]
    (0.75, 0.5)
    """
    vp, tp = np.asarray(val_probs, float), np.asarray(test_probs, float)
    y = np.asarray(val_labels)
    v_conf, t_conf = vp.max(1), tp.max(1)
    v_ok = vp.argmax(1) == y
    z_val, z_test = np.log(np.clip(vp, 1e-12, 1)), np.log(np.clip(tp, 1e-12, 1))
    temp = estimators.fit_temperature(z_val, y)
    thr = estimators.atc_threshold(estimators.negative_entropy(z_val, temp), v_ok)
    return {
        "softmax_0.8": float((t_conf > 0.8).mean()),
        "softmax_0.9": float((t_conf > 0.9).mean()),
        "average_confidence": float(t_conf.mean()),
        "doc": float(np.clip(t_conf.mean() + v_ok.mean() - v_conf.mean(), 0, 1)),
        "atc": float((estimators.negative_entropy(z_test, temp) >= thr).mean()),
    }


def label_free_table(data: ReplicationData) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`label_free_estimates` of every model on the new set (checked) and the unlabeled set.

    Parameters
    ----------
    data : ReplicationData
        A loaded folder.

    Returns
    -------
    new : pandas.DataFrame
        Models with probabilities on both labeled sets: each estimate of the new set's accuracy and
        the ``truth``; the check of the estimators on a set whose labels you have.
    unlabeled : pandas.DataFrame
        Models with probabilities on the unlabeled set: each estimate (empty without one).

    Examples
    --------
    >>> from shifteval.yourrep import example
    >>> new, unl = label_free_table(example.tiny(unlabeled=True))
    >>> list(new.columns)[-1], len(unl)
    ('truth', 4)
    """
    new, unl = {}, {}
    y = data.labels["original"]
    for i, m in enumerate(data.models):
        if m not in data.probs["original"]:
            continue
        if m in data.probs["new"]:
            new[m] = label_free_estimates(data.probs["original"][m], y, data.probs["new"][m])
            new[m]["truth"] = float(data.correct["new"][i].mean())
        if m in data.probs[UNLABELED]:
            unl[m] = label_free_estimates(data.probs["original"][m], y, data.probs[UNLABELED][m])
    return pd.DataFrame(new).T, pd.DataFrame(unl).T


def rmse_by_method(new: pd.DataFrame) -> pd.Series:
    """Root-mean-square error (points) of each label-free estimate against the new set's true accuracy.

    Parameters
    ----------
    new : pandas.DataFrame
        The first table of :func:`label_free_table`.

    Returns
    -------
    pandas.Series
        One value per method, smallest first.

    Examples
    --------
    >>> rmse_by_method(pd.DataFrame({"doc": [0.5, 0.7], "atc": [0.6, 0.6], "truth": [0.6, 0.6]})).round(1).to_dict()
    {'atc': 0.0, 'doc': 10.0}
    """
    methods = [c for c in new.columns if c != "truth"]
    return pd.Series({m: estimators.rmse(new[m], new["truth"]) for m in methods}).sort_values()
