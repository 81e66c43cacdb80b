"""Per-image analyses of released predictions: the paper's tables, two-level bootstrap, per-class drops.

All functions take a :class:`shifteval.datasets.released.Correctness` (models × images boolean
matrices per test set), e.g. :func:`shifteval.datasets.released.imagenetv2_correctness`, the
67 models of Recht, Roelofs, Schmidt & Shankar (2019), *Do ImageNet Classifiers Generalize to
ImageNet?*, on ImageNet validation and ImageNetV2.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from ..datasets import published
from ..datasets.released import Correctness
from . import fits as linfit

ORIGINAL = "imagenet-validation-original"
MATCHED_FREQUENCY = "imagenetv2-b-33"
#: Recht et al. (2019), App. C.4.4, Tables 14-19: (new test set, top-k) -> transcribed table.
PAPER_TABLES = {
    ("imagenetv2-b-33", 1): "recht2019_imagenet_top1_matchedfrequency",  # Table 14
    ("imagenetv2-b-33", 5): "recht2019_imagenet_top5_matchedfrequency",  # Table 15
    ("imagenetv2-a-44", 1): "recht2019_imagenet_top1_threshold0.7",  # Table 16
    ("imagenetv2-a-44", 5): "recht2019_imagenet_top5_threshold0.7",  # Table 17
    ("imagenetv2-c-12", 1): "recht2019_imagenet_top1_topimages",  # Table 18
    ("imagenetv2-c-12", 5): "recht2019_imagenet_top5_topimages",  # Table 19
}
_VALUE_COLUMNS = ("orig_acc", "orig_ci_low", "orig_ci_high", "new_acc", "new_ci_low", "new_ci_high", "gap")


def _check_dataset(corr: Correctness, name: str) -> None:
    if name not in corr.datasets:
        raise ValueError(f"dataset {name!r} is not in the correctness table ({', '.join(corr.datasets)})")


def _matrix(corr: Correctness, dataset: str, top: int) -> np.ndarray:
    _check_dataset(corr, dataset)
    if top not in (1, 5):
        raise ValueError(f"top must be 1 or 5, got {top!r}")
    arr = (corr.top1 if top == 1 else corr.top5)[dataset]
    if arr is None:
        raise ValueError(f"no top-5 correctness for {dataset!r}")
    return arr


def recompute_table(corr: Correctness, new: str, top: int = 1, original: str = ORIGINAL) -> pd.DataFrame:
    """One of Recht et al.'s (2019) Tables 14-19 recomputed from per-image correctness (unrounded).

    Accuracies and 95% Clopper-Pearson bounds in percent (:func:`shifteval.linfit.clopper_pearson`),
    ``gap = orig_acc - new_acc`` and 1-based ranks by accuracy, one row per model.

    Parameters
    ----------
    corr : Correctness
        Per-image correctness.
    new, original : str
        The new and the original test set of ``corr`` (ValueError if absent).
    top : {1, 5}
        Top-1 or top-5 correctness (ValueError otherwise, or if ``corr`` has no top-5).

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> corr = Correctness(tuple("abc"), ("o", "n"), {"o": np.tri(3, 4, 1, bool), "n": np.tri(3, 4, 0, bool)}, dict.fromkeys("on"), dict.fromkeys("on", np.array([0, 0, 1, 1])))
    >>> recompute_table(corr, "n", original="o")[["orig_acc", "new_acc", "gap", "new_rank"]].values.tolist()
    [[50.0, 25.0, 25.0, 3.0], [75.0, 50.0, 25.0, 2.0], [100.0, 75.0, 25.0, 1.0]]
    """
    out: dict[str, ArrayLike] = {"model": list(corr.models)}
    for prefix, d in (("orig", original), ("new", new)):
        x = _matrix(corr, d, top)
        k, n = x.sum(axis=1), x.shape[1]
        low, high = linfit.clopper_pearson(k, np.full_like(k, n))
        out |= {f"{prefix}_acc": 100 * k / n, f"{prefix}_ci_low": 100 * low, f"{prefix}_ci_high": 100 * high}
    table = pd.DataFrame(out)
    table["gap"] = table.orig_acc - table.new_acc
    for prefix in ("orig", "new"):
        table[f"{prefix}_rank"] = table[f"{prefix}_acc"].rank(ascending=False, method="min").astype(int)
    return table


def compare_with_paper(corr: Correctness, original: str = ORIGINAL) -> tuple[pd.DataFrame, float]:
    """Recompute every accuracy, confidence bound, gap and rank of Recht et al. (2019), Tables 14-19.

    A printed value agrees when it is the recomputed value rounded to one decimal, either way at an
    exact tie (the paper rounds ``x.x5`` both up and down); a printed rank agrees when it lies within
    the ranks that tied models share.

    Parameters
    ----------
    corr : Correctness
        Must contain ``original`` and the three ImageNetV2 test sets, top-1 and top-5, for the
        paper's models (names as in the transcribed tables); ValueError if one is missing.
    original : str
        The original test set.

    Returns
    -------
    comparison : pandas.DataFrame
        Long table: ``table``, ``model``, ``column``, ``printed``, ``recomputed`` (unrounded; ranks
        by ``method="min"``), ``abs_diff`` = |recomputed - printed| and ``agrees``.
    max_abs_diff : float
        The largest ``abs_diff`` over the value columns (not ranks), in points: at most 0.05 when every
        value agrees to the printed rounding.

    Examples
    --------
    >>> from shifteval.datasets.released import imagenetv2_correctness
    >>> comparison, max_abs_diff = compare_with_paper(imagenetv2_correctness())
    >>> round(max_abs_diff, 3), bool(comparison.agrees.all()), only_ties_differ(comparison)
    (0.05, True, True)
    """
    parts = []
    for (new, top), name in PAPER_TABLES.items():
        printed = published.load_table(name)
        missing = sorted(set(printed.model) - set(corr.models))
        if missing:
            raise ValueError(f"models of {name} missing from the correctness table: {missing}")
        ours = recompute_table(corr, new, top, original).set_index("model").loc[printed.model]
        for col in (*_VALUE_COLUMNS, "orig_rank", "new_rank"):
            got, want = ours[col].to_numpy(float), printed[col].to_numpy(float)
            if col.endswith("_rank"):
                acc = ours[col.replace("_rank", "_acc")]
                top_rank = acc.rank(ascending=False, method="max").to_numpy()
                agrees = (want >= got) & (want <= top_rank)
            else:
                agrees = np.abs(got - want) <= 0.05 + 1e-9
            parts.append(
                pd.DataFrame(
                    {
                        "table": name,
                        "model": printed.model.to_numpy(),
                        "column": col,
                        "printed": want,
                        "recomputed": got,
                        "abs_diff": np.abs(got - want),
                        "agrees": agrees,
                    }
                )  # fmt: skip
            )
    comparison = pd.concat(parts, ignore_index=True)
    values = ~comparison.column.str.endswith("_rank")
    return comparison, float(comparison.abs_diff[values].max())


def only_ties_differ(agreement: pd.DataFrame, tol: float = 1e-6) -> bool:
    """Whether every printed value that is not its recomputation rounded to 0.1 sits at a rounding tie.

    A value recomputed as exactly ``x.x5`` may be printed rounded up or down; any other mismatch would be
    a real disagreement. Ranks (columns ending in ``rank``) are not rounded and are left out.

    Parameters
    ----------
    agreement : pandas.DataFrame
        Columns ``column``, ``printed``, ``recomputed``, as from :func:`compare_with_paper`.
    tol : float
        Differences up to ``tol`` count as equal.

    Returns
    -------
    bool

    Examples
    --------
    >>> t = pd.DataFrame({"column": ["gap", "gap"], "printed": [1.2, 3.4], "recomputed": [1.25, 3.41]})
    >>> only_ties_differ(t)
    True
    >>> only_ties_differ(pd.DataFrame({"column": ["gap"], "printed": [1.2], "recomputed": [1.26]}))
    False
    """
    values = agreement[~agreement["column"].str.endswith("rank")]
    recomputed = values["recomputed"].to_numpy(float)
    mismatch = np.abs(np.round(recomputed, 1) - values["printed"].to_numpy(float)) > tol
    tenths = recomputed[mismatch] * 10
    return bool((np.abs((tenths - np.floor(tenths)) - 0.5) < 1e-6).all())


def _class_sums(x: np.ndarray, labels: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-class sums of the columns of ``x`` (models × images) and images per class."""
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels, minlength=n_classes)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    sums = np.zeros((x.shape[0], n_classes))
    present = counts > 0
    sums[:, present] = np.add.reduceat(x[:, order].astype(np.float64), starts[present], axis=1)
    return sums, counts


def per_class_accuracy(
    corr: Correctness, dataset: str, top: int = 1, n_classes: int | None = None
) -> pd.DataFrame:
    """Accuracy (fraction) of every model on every class of ``dataset``; NaN for classes without images.

    Parameters
    ----------
    corr : Correctness
    dataset : str
    top : {1, 5}
        Top-1 or top-5 correctness on the dataset ``dataset`` of ``corr``.
    n_classes : int, optional
        Number of classes (default: largest label + 1).

    Returns
    -------
    pandas.DataFrame
        Models × class ids.

    Examples
    --------
    >>> corr = Correctness(tuple("abc"), ("o", "n"), {"o": np.tri(3, 4, 1, bool), "n": np.tri(3, 4, 0, bool)}, dict.fromkeys("on"), dict.fromkeys("on", np.array([0, 0, 1, 1])))
    >>> per_class_accuracy(corr, "o", n_classes=3).values.tolist()
    [[1.0, 0.0, nan], [1.0, 0.5, nan], [1.0, 1.0, nan]]
    """
    x = _matrix(corr, dataset, top)
    labels = corr.labels[dataset]
    n_classes = int(labels.max()) + 1 if n_classes is None else n_classes
    sums, counts = _class_sums(x, labels, n_classes)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = sums / counts
    return pd.DataFrame(acc, index=list(corr.models), columns=range(n_classes))


def per_class_drops(
    corr: Correctness, new: str = MATCHED_FREQUENCY, original: str = ORIGINAL, top: int = 1
) -> pd.DataFrame:
    """Per-class accuracy drop ``acc_original - acc_new`` in points, models × classes.

    Recht et al. (2019, §4) attribute the drop to the data collection as a whole; this asks whether
    it is concentrated in classes, per model. With 10 images per class on ImageNetV2 each entry is
    noisy (a single image is 10 points).

    Parameters
    ----------
    corr, new, original, top
        As for :func:`recompute_table`.

    Returns
    -------
    pandas.DataFrame
        Models × classes present in both test sets, in points.

    Examples
    --------
    >>> corr = Correctness(tuple("abc"), ("o", "n"), {"o": np.tri(3, 4, 1, bool), "n": np.tri(3, 4, 0, bool)}, dict.fromkeys("on"), dict.fromkeys("on", np.array([0, 0, 1, 1])))
    >>> per_class_drops(corr, "n", "o").values.tolist()
    [[50.0, 0.0], [0.0, 50.0], [0.0, 50.0]]
    """
    n_classes = int(max(corr.labels[original].max(), corr.labels[new].max())) + 1
    drops = per_class_accuracy(corr, original, top, n_classes) - per_class_accuracy(corr, new, top, n_classes)
    return 100 * drops.dropna(axis=1, how="any")


def drop_consistency(drops: pd.DataFrame, share: float = 0.9) -> dict:
    """Measure whether the same classes drop for all models.

    Parameters
    ----------
    drops : pandas.DataFrame
        Models × classes, from :func:`per_class_drops` (ValueError unless >= 2 each and NaN-free).
    share : float
        A class "drops for most models" when its drop is positive for at least this share of models
        (in (0, 1], else ValueError).

    Returns
    -------
    dict
        ``models``, ``classes``; ``mean_spearman`` (mean over pairs of models of the Spearman
        correlation of their per-class drops) and its minimum ``min_spearman``; ``frac_classes_drop_most``
        (share of classes dropping for >= ``share`` of models); ``frac_classes_gain_most`` (gaining for
        >= ``share``); ``frac_classes_mean_drop`` (share of classes with a positive mean drop).

    Examples
    --------
    >>> d = pd.DataFrame([[10.0, 0.0, -10.0], [20.0, 10.0, 0.0]])
    >>> r = drop_consistency(d)
    >>> r["mean_spearman"], r["frac_classes_drop_most"]
    (1.0, 0.3333333333333333)
    """
    if not 0 < share <= 1:
        raise ValueError(f"share must be in (0, 1], got {share!r}")
    values = np.asarray(drops, dtype=float)
    if values.ndim != 2 or values.shape[0] < 2 or values.shape[1] < 2 or np.isnan(values).any():
        raise ValueError("drops must be a models × classes table (>= 2 each) without NaN")
    with np.errstate(invalid="ignore", divide="ignore"):  # a model with equal drops everywhere: NaN
        rho = np.corrcoef(stats.rankdata(values, axis=1))  # Spearman = Pearson of the ranks
    pairs = rho[np.triu_indices(values.shape[0], k=1)]
    pairs = pairs[np.isfinite(pairs)]  # pairs with a constant model have no correlation
    return {
        "models": values.shape[0],
        "classes": values.shape[1],
        "mean_spearman": float(pairs.mean()) if pairs.size else np.nan,
        "min_spearman": float(pairs.min()) if pairs.size else np.nan,
        "frac_classes_drop_most": float(((values > 0).mean(axis=0) >= share).mean()),
        "frac_classes_gain_most": float(((values < 0).mean(axis=0) >= share).mean()),
        "frac_classes_mean_drop": float((values.mean(axis=0) > 0).mean()),
    }


def always_wrong(corr: Correctness, top: int = 1) -> pd.DataFrame:
    """Images that every model gets wrong (and right), counted per test set.

    Parameters
    ----------
    corr, top
        As for :func:`recompute_table`.

    Returns
    -------
    pandas.DataFrame
        Index dataset; columns ``images``, ``all_wrong``, ``all_wrong_frac``, ``all_right``,
        ``all_right_frac``, ``models``.

    Examples
    --------
    >>> corr = Correctness(tuple("abc"), ("o", "n"), {"o": np.tri(3, 4, 1, bool), "n": np.tri(3, 4, 0, bool)}, dict.fromkeys("on"), dict.fromkeys("on", np.array([0, 0, 1, 1])))
    >>> always_wrong(corr)[["all_wrong", "all_right"]].to_dict("index")
    {'o': {'all_wrong': 0, 'all_right': 2}, 'n': {'all_wrong': 1, 'all_right': 1}}
    """
    rows = {}
    for d in corr.datasets:
        x = _matrix(corr, d, top)
        wrong, right = int((~x).all(axis=0).sum()), int(x.all(axis=0).sum())
        n = x.shape[1]
        rows[d] = {"images": n, "all_wrong": wrong, "all_wrong_frac": wrong / n,
                   "all_right": right, "all_right_frac": right / n, "models": x.shape[0]}  # fmt: skip
    return pd.DataFrame.from_dict(rows, orient="index")


# --- two-level bootstrap -------------------------------------------------------------------------


def resampled_lines(
    x1: np.ndarray, x2: np.ndarray, model_idx: np.ndarray, counts1: ArrayLike, counts2: ArrayLike,
    scale: str = "probit",
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Fit lines to accuracies recomputed from resampled models and images.

    Parameters
    ----------
    x1, x2 : ndarray of bool, shape (m, n1) and (m, n2)
        Per-image correctness of m models on the original and the new test set.
    model_idx : ndarray of int, shape (b, m)
        Models of each replicate (drawn with replacement).
    counts1, counts2 : ndarray, shape (b, n1) and (b, n2)
        How often each image is drawn in each replicate (each row sums to n1, resp. n2).
    scale : {"linear", "probit"}
        Axis scale of the fit (:func:`shifteval.linfit.transform`).

    Returns
    -------
    slopes, intercepts : ndarray, shape (b,)

    Examples
    --------
    >>> s, i = resampled_lines(np.tri(3, 4, 1, bool), np.tri(3, 4, 0, bool), np.array([[0, 1, 2]]), np.ones((1, 4)), np.ones((1, 4)), "linear")
    >>> round(float(s[0]), 3), round(float(i[0]), 3)
    (1.0, -0.25)
    """
    acc1 = (np.asarray(counts1, np.float32) @ np.asarray(x1, np.float32).T).astype(float) / x1.shape[1]
    acc2 = (np.asarray(counts2, np.float32) @ np.asarray(x2, np.float32).T).astype(float) / x2.shape[1]
    xb = linfit.transform(np.take_along_axis(acc1, model_idx, axis=1), scale)
    yb = linfit.transform(np.take_along_axis(acc2, model_idx, axis=1), scale)
    return linfit.row_lines(xb, yb)


def _counts(rng: np.random.Generator, b: int, n: int) -> np.ndarray:
    """Image multiplicities (float32) of ``b`` bootstrap resamples of ``n`` images (rows sum to ``n``)."""
    idx = rng.integers(0, n, size=(b, n))
    counts = np.empty((b, n), dtype=np.float32)
    for row, draw in zip(counts, idx, strict=True):  # row by row: one bincount stays in cache
        row[:] = np.bincount(draw, minlength=n)
    return counts


def two_level_bootstrap(
    x1: np.ndarray, x2: np.ndarray, n_boot: int, rng: np.random.Generator, scale: str = "probit",
    chunk: int = 100,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Bootstrap lines resampling models and, within each test set, images (vectorised).

    Each replicate draws the models with replacement (Recht et al. 2019, §3.3) and, independently,
    the images of each test set with replacement, so the interval also covers the finite test sets'
    sampling noise (the Clopper-Pearson error bars of their Figure 1). Replicates are processed in
    blocks of ``chunk``: image multiplicities as a counts matrix times the correctness matrix.

    Parameters
    ----------
    x1, x2 : ndarray of bool, shape (m, n1) and (m, n2)
        Per-image correctness of the same m >= 3 models on the original and the new test set.
    n_boot : int
        Replicates (>= 1). Any of x1, x2, n_boot, chunk outside its stated bounds raises ValueError.
    rng : numpy.random.Generator
        Source of all draws; per block: models, then images of set 1, then of set 2.
    scale : {"linear", "probit"}
        Axis scale of the fit.
    chunk : int
        Replicates per block (memory ~ ``chunk * (n1 + n2)`` floats).

    Returns
    -------
    slopes, intercepts : ndarray, shape (n_boot,)

    Examples
    --------
    >>> x1 = np.random.default_rng(0).random((5, 200)) < np.linspace(0.5, 0.9, 5)[:, None]
    >>> s, i = two_level_bootstrap(x1, x1, 40, np.random.default_rng(1), "linear", chunk=16)
    >>> s.shape, bool(0.5 < np.nanmedian(s) < 1.5)
    ((40,), True)
    """
    if np.ndim(x1) != 2 or np.ndim(x2) != 2 or len(x1) != len(x2) or len(x1) < 3:
        raise ValueError("x1 and x2 must be correctness matrices of the same >= 3 models (models × images)")
    if int(n_boot) < 1 or int(chunk) < 1:
        raise ValueError(f"n_boot and chunk must be at least 1, got {n_boot!r} and {chunk!r}")
    m = x1.shape[0]
    x1, x2 = np.asarray(x1, np.float32), np.asarray(x2, np.float32)  # converted once, not per block
    slopes, intercepts = np.empty(n_boot), np.empty(n_boot)
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        model_idx = rng.integers(0, m, size=(b, m))
        c1, c2 = _counts(rng, b, x1.shape[1]), _counts(rng, b, x2.shape[1])
        slopes[start : start + b], intercepts[start : start + b] = resampled_lines(
            x1, x2, model_idx, c1, c2, scale
        )
    return slopes, intercepts


def bootstrap_comparison(
    corr: Correctness,
    new: str = MATCHED_FREQUENCY,
    *,
    original: str = ORIGINAL,
    top: int = 1,
    scale: str = "probit",
    models: list[str] | None = None,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Confidence intervals of the new-vs-original fit: models only vs. models and images.

    The point fit and the model-only bootstrap are :func:`shifteval.linfit.fit_linear` (Recht et
    al. 2019, §3.3 and App. C.2); the two-level bootstrap is :func:`two_level_bootstrap`.

    Parameters
    ----------
    corr, new, original, top
        As for :func:`recompute_table`.
    scale : {"linear", "probit"}
        Axis scale of the fit.
    models : list of str, optional
        Models to fit (default: all but the Fisher-vector baselines, as in the paper's §3.3); ValueError
        if fewer than 3 or not in ``corr``.
    n_boot, ci, seed : int, float, int
        Replicates (>= 1, else ValueError), confidence level and seed (``np.random.default_rng(seed)``)
        of both bootstraps.

    Returns
    -------
    pandas.DataFrame
        Index ``["models", "models+images"]``; columns ``slope``, ``slope_low``, ``slope_high``,
        ``intercept``, ``intercept_low``, ``intercept_high``, ``n_models``, ``n_boot``.

    Examples
    --------
    >>> corr = Correctness(tuple("abc"), ("o", "n"), {"o": np.tri(3, 4, 1, bool), "n": np.tri(3, 4, 0, bool)}, dict.fromkeys("on"), dict.fromkeys("on", np.array([0, 0, 1, 1])))
    >>> bootstrap_comparison(corr, "n", original="o", scale="linear", n_boot=50)[["slope", "n_models"]].round(3).to_dict("index")
    {'models': {'slope': 1.0, 'n_models': 3}, 'models+images': {'slope': 1.0, 'n_models': 3}}
    """
    if int(n_boot) < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot!r}")
    if models is None:
        models = [
            m for m, fv in zip(corr.models, published.is_fisher_vector(corr.models), strict=True) if not fv
        ]
    unknown = sorted(set(models) - set(corr.models))
    if unknown or len(models) < 3:
        raise ValueError(f"models must be >= 3 names of the table; unknown: {unknown}")
    rows = [corr.models.index(m) for m in models]
    x1, x2 = _matrix(corr, original, top)[rows], _matrix(corr, new, top)[rows]
    fit = linfit.fit_linear(x1.mean(axis=1), x2.mean(axis=1), scale=scale, n_boot=n_boot, ci=ci, seed=seed)
    s2, i2 = two_level_bootstrap(x1, x2, int(n_boot), np.random.default_rng(seed), scale)
    q = [(1 - ci) / 2, (1 + ci) / 2]
    out = {}
    for label, (s, i) in {
        "models": (fit.boot_slopes, fit.boot_intercepts),
        "models+images": (s2, i2),
    }.items():
        (s_lo, s_hi), (i_lo, i_hi) = np.nanquantile(s, q), np.nanquantile(i, q)
        out[label] = {"slope": fit.slope, "slope_low": s_lo, "slope_high": s_hi,
                      "intercept": fit.intercept, "intercept_low": i_lo, "intercept_high": i_hi,
                      "n_models": len(models), "n_boot": int(n_boot)}  # fmt: skip
    return pd.DataFrame.from_dict(out, orient="index")
