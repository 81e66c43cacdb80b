"""Matched evaluation of a model on two similar-but-non-identical test sets.

Anzaku, Wang, Van Messem & De Neve, *A Principled Evaluation Protocol for Comparative Investigation
of the Effectiveness of DNN Classification Models on Similar-but-non-identical Datasets*: §2,
Algorithm 1 (match by predicted label and predicted probability), App. A.3, Algorithm 2 (match by
predicted probability only), §4.1 (ε = 0.005, 10 runs, fraction unmatched).

For every target prediction, in order, the candidates are the source predictions not used yet whose
predicted probability (max softmax) lies within ε of the target's — and, for Algorithm 1, with the
same predicted label. One candidate is drawn uniformly at random and removed from the source; a target
without candidates is unmatched. Matched accuracy compares the two sets on the matched pairs only:
examples on which the model was equally confident about the same class.

:func:`match_predictions` implements this in O((N + M) log N): sources are sorted by (label,
probability), a target's candidates form one contiguous window of that order, and a Fenwick tree over
the window counts the unused sources and finds the r-th unused one, so a uniform draw among candidates
and its removal each take O(log N). The sequential loop is compiled with numba. The random draws are
uniform numbers taken from an explicit ``numpy.random.Generator`` (one per target), so results are
reproducible bit for bit. :func:`match_predictions_reference` is a direct transcription of the
pseudocode, kept as the reference the fast version is tested against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    import pandas as pd

METHODS = ("label_and_prob", "prob")


@dataclass(frozen=True)
class MatchResult:
    """Output of one matching run.

    Attributes
    ----------
    source_index, target_index : ndarray of int
        Matched pairs, aligned: ``target_index[i]`` was matched to ``source_index[i]``; pairs are in
        target order.
    unmatched_target_index : ndarray of int
        Targets without a candidate when their turn came, in order.
    """

    source_index: np.ndarray
    target_index: np.ndarray
    unmatched_target_index: np.ndarray

    @property
    def fraction_unmatched(self) -> float:
        """Share of the targets without a partner."""
        n = len(self.target_index) + len(self.unmatched_target_index)
        return len(self.unmatched_target_index) / n


def _check_eps_method(eps, by):
    if not (isinstance(eps, (int, float, np.floating)) and 0 < eps < 1):
        raise ValueError(f"eps must be a number in (0, 1), got {eps!r}")
    if by not in METHODS:
        raise ValueError(f"by must be one of {METHODS}, got {by!r}")


def _check_pred_conf(
    pred: ArrayLike, conf: ArrayLike, name: str
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    pred = np.asarray(pred)
    conf = np.asarray(conf, dtype=np.float64)
    if pred.ndim != 1 or conf.ndim != 1:
        raise ValueError(f"{name}: predicted labels and probabilities must be 1-D arrays")
    if len(pred) != len(conf):
        raise ValueError(f"{name}: {len(pred)} predicted labels but {len(conf)} predicted probabilities")
    if len(pred) == 0:
        raise ValueError(f"{name}: the set is empty")
    if not np.issubdtype(pred.dtype, np.integer):
        raise ValueError(f"{name}: predicted labels must be integers, got dtype {pred.dtype}")
    if np.isnan(conf).any():
        raise ValueError(f"{name}: predicted probabilities contain NaN")
    if (conf < 0).any() or (conf > 1).any():
        raise ValueError(f"{name}: predicted probabilities must lie in [0, 1]")
    return pred.astype(np.int64), conf


@numba.njit(cache=True)
def _first_true_lower(conf, lo, hi, p, eps):
    # smallest i in [lo, hi) with conf[i] >= p or p - conf[i] <= eps  (monotone in sorted conf)
    while lo < hi:
        mid = (lo + hi) // 2
        c = conf[mid]
        if c >= p or abs(c - p) <= eps:
            hi = mid
        else:
            lo = mid + 1
    return lo


@numba.njit(cache=True)
def _first_true_upper(conf, lo, hi, p, eps):
    # smallest i in [lo, hi) with conf[i] > p and conf[i] - p > eps  (monotone in sorted conf)
    while lo < hi:
        mid = (lo + hi) // 2
        c = conf[mid]
        if c > p and abs(c - p) > eps:
            hi = mid
        else:
            lo = mid + 1
    return lo


@numba.njit(cache=True)
def _prefix_count(tree, i):
    # unused sources among the first i sorted positions (Fenwick prefix sum)
    total = 0
    while i > 0:
        total += tree[i]
        i -= i & -i
    return total


@numba.njit(cache=True)
def _match_loop(conf, seg_start, seg_end, tgt_seg, tgt_conf, u, eps):
    """Sequential matching over targets with a Fenwick tree of unused sorted sources."""
    n = conf.shape[0]
    tree = np.zeros(n + 1, dtype=np.int64)
    for i in range(1, n + 1):  # all sources unused: build the tree of ones in O(n)
        tree[i] += 1
        j = i + (i & -i)
        if j <= n:
            tree[j] += tree[i]
    log = 1
    while log * 2 <= n:
        log *= 2
    out = np.full(tgt_conf.shape[0], -1, dtype=np.int64)
    for t in range(tgt_conf.shape[0]):
        g = tgt_seg[t]
        if g < 0:
            continue
        p = tgt_conf[t]
        lo = _first_true_lower(conf, seg_start[g], seg_end[g], p, eps)
        hi = _first_true_upper(conf, lo, seg_end[g], p, eps)
        if lo >= hi:
            continue
        before_lo = _prefix_count(tree, lo)
        count = _prefix_count(tree, hi) - before_lo
        if count == 0:
            continue
        r = int(u[t] * count)
        if r >= count:
            r = count - 1
        # position of the (before_lo + r + 1)-th unused source: Fenwick descent
        k = before_lo + r + 1
        pos = 0
        step = log
        while step > 0:
            nxt = pos + step
            if nxt <= n and tree[nxt] < k:
                pos = nxt
                k -= tree[nxt]
            step //= 2
        out[t] = pos  # 0-based index into the sorted sources
        i = pos + 1
        while i <= n:
            tree[i] -= 1
            i += i & -i
    return out


def match_predictions(
    src_pred: ArrayLike, src_conf: ArrayLike, tgt_pred: ArrayLike, tgt_conf: ArrayLike, *, eps: float = 0.005,
    by: str = "label_and_prob", seed: int | np.random.Generator = 0,
) -> MatchResult:  # fmt: skip
    """Match target predictions to source predictions (Anzaku et al., Algorithms 1 and 2).

    Parameters
    ----------
    src_pred, tgt_pred : array_like of int
        Predicted labels on the source and the target set.
    src_conf, tgt_conf : array_like of float
        Predicted probabilities (the maximum softmax probability) in [0, 1].
    eps : float
        Half-width of the closed probability interval, in (0, 1); the paper uses 0.005.
    by : {"label_and_prob", "prob"}
        Algorithm 1 (same predicted label and ``|Δp̂| <= ε``) or Algorithm 2 (``|Δp̂| <= ε`` only).
    seed : int or numpy.random.Generator
        Source of the uniform random choice among candidates.

    Returns
    -------
    MatchResult

    Raises
    ------
    ValueError
        If ``eps`` is not in (0, 1), ``by`` is unknown, or a set is empty, not 1-D, of unequal lengths,
        has non-integer labels or probabilities outside [0, 1] or NaN.

    Examples
    --------
    >>> m = match_predictions([0, 0, 1], [0.9, 0.5, 0.7], [0, 1, 1], [0.902, 0.7, 0.3])
    >>> m.source_index.tolist(), m.target_index.tolist(), m.unmatched_target_index.tolist(), round(m.fraction_unmatched, 3)
    ([0, 2], [0, 1], [2], 0.333)
    """
    _check_eps_method(eps, by)
    src_pred, src_conf = _check_pred_conf(src_pred, src_conf, "source")
    tgt_pred, tgt_conf = _check_pred_conf(tgt_pred, tgt_conf, "target")
    rng = np.random.default_rng(seed)
    u = rng.random(len(tgt_conf))
    if by == "prob":
        keys_src = np.zeros(len(src_pred), dtype=np.int64)
        keys_tgt = np.zeros(len(tgt_pred), dtype=np.int64)
    else:
        keys_src, keys_tgt = src_pred, tgt_pred
    order = np.lexsort((src_conf, keys_src))  # by label, then probability
    sorted_keys = keys_src[order]
    groups, seg_start = np.unique(sorted_keys, return_index=True)
    seg_end = np.append(seg_start[1:], len(order))
    tgt_seg = np.searchsorted(groups, keys_tgt)
    tgt_seg = np.where(
        (tgt_seg < len(groups)) & (groups[np.minimum(tgt_seg, len(groups) - 1)] == keys_tgt), tgt_seg, -1
    )
    chosen = _match_loop(
        src_conf[order], seg_start.astype(np.int64), seg_end.astype(np.int64), tgt_seg.astype(np.int64),
        tgt_conf, u, float(eps),
    )  # fmt: skip
    matched = chosen >= 0
    return MatchResult(
        source_index=order[chosen[matched]],
        target_index=np.flatnonzero(matched),
        unmatched_target_index=np.flatnonzero(~matched),
    )


def match_predictions_reference(
    src_pred: ArrayLike, src_conf: ArrayLike, tgt_pred: ArrayLike, tgt_conf: ArrayLike, *, eps: float = 0.005,
    by: str = "label_and_prob", seed: int | np.random.Generator = 0,
) -> MatchResult:  # fmt: skip
    """Direct transcription of the pseudocode: a loop over targets, each scanning the whole source.

    Same semantics and validation as :func:`match_predictions`, O(N·M); kept as the reference the
    fast version is tested and benchmarked against.

    Parameters
    ----------
    src_pred, src_conf, tgt_pred, tgt_conf, eps, by, seed
        As for :func:`match_predictions`.

    Returns
    -------
    MatchResult
        Not bit-identical to :func:`match_predictions` for the same seed (different random draws).

    Raises
    ------
    ValueError
        As :func:`match_predictions`.

    Examples
    --------
    >>> m = match_predictions_reference([0, 0, 1], [0.9, 0.5, 0.7], [0, 1, 1], [0.902, 0.7, 0.3], by="prob")
    >>> m.source_index.tolist(), m.unmatched_target_index.tolist()
    ([0, 2], [2])
    """
    _check_eps_method(eps, by)
    src_pred, src_conf = _check_pred_conf(src_pred, src_conf, "source")
    tgt_pred, tgt_conf = _check_pred_conf(tgt_pred, tgt_conf, "target")
    rng = np.random.default_rng(seed)
    unused = np.ones(len(src_pred), dtype=bool)
    src_idx, tgt_idx, unmatched = [], [], []
    for t in range(len(tgt_pred)):
        mask = unused & (np.abs(src_conf - tgt_conf[t]) <= eps)
        if by == "label_and_prob":
            mask &= src_pred == tgt_pred[t]
        candidates = np.flatnonzero(mask)
        if len(candidates) == 0:
            unmatched.append(t)
            continue
        s = candidates[rng.integers(len(candidates))]
        unused[s] = False
        src_idx.append(s)
        tgt_idx.append(t)
    return MatchResult(
        np.array(src_idx, dtype=np.int64),
        np.array(tgt_idx, dtype=np.int64),
        np.array(unmatched, dtype=np.int64),
    )


def _check_probs(labels, probs, name):
    from ..zoo.store import validate_predictions

    return validate_predictions(np.asarray(labels), np.asarray(probs), name)


def _mean_std(values):
    arr = np.asarray(values, dtype=float)
    ok = arr[~np.isnan(arr)]
    if len(ok) == 0:
        return {"mean": None, "std": None}
    return {"mean": float(ok.mean()), "std": float(ok.std(ddof=1)) if len(ok) > 1 else 0.0}


def matched_accuracy(
    src_labels: ArrayLike, src_probs: ArrayLike, tgt_labels: ArrayLike, tgt_probs: ArrayLike, *,
    eps: float = 0.005, by: str = "label_and_prob", n_runs: int = 10, seed: int = 0,
) -> dict:  # fmt: skip
    """Accuracy and matched accuracy of one model on two test sets (Anzaku et al., §4.1).

    The larger set plays the source, as in the paper (ties: the first set); ``roles`` says which. When
    the second set is the larger one the roles swap: ``accuracy["source"]`` is then the second set's
    accuracy and every gap is (second − first).

    Parameters
    ----------
    src_labels, tgt_labels : array_like of int, shape (N,), (M,)
        True labels of the first and second set.
    src_probs, tgt_probs : array_like of float, shape (N, K), (M, K)
        Softmax probabilities of the model on each set (rows sum to 1).
    eps, by :
        See :func:`match_predictions`.
    n_runs : int
        Independent matching runs (the paper uses 10); statistics are mean and standard deviation.
    seed : int
        Seed of the runs (run ``r`` uses a child generator of ``seed``).

    Returns
    -------
    dict
        ``roles`` ({"source": "first"|"second", "target": "second"|"first"}: which argument plays
        which role), ``accuracy`` of each full set by role, the accuracy
        ``gap`` (source − target), and, each as ``{"mean", "std"}`` over runs: ``matched_accuracy_source``,
        ``matched_accuracy_target``, ``matched_gap``, ``fraction_unmatched``,
        ``accuracy_unmatched_target`` (``None`` when every target matched), and ``mean_confidence`` of the
        matched source, matched target and unmatched target subsets.

    Raises
    ------
    ValueError
        If ``eps`` or ``by`` is invalid, ``n_runs`` < 1, the labels or probabilities are malformed
        (:func:`shifteval.zoo.store.validate_predictions`), or the sets differ in number of classes.

    Examples
    --------
    >>> probs = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.2, 0.8]])
    >>> r = matched_accuracy([0, 1, 0, 0], probs, [0, 1, 1], probs[:3], n_runs=3)
    >>> r["roles"]["source"], round(r["gap"], 3), round(r["matched_gap"]["mean"], 3), r["fraction_unmatched"]["mean"]
    ('first', 0.083, 0.333, 0.0)
    """
    _check_eps_method(eps, by)
    if int(n_runs) < 1:
        raise ValueError(f"n_runs must be at least 1, got {n_runs!r}")
    a_labels, a_probs = _check_probs(src_labels, src_probs, "source set")
    b_labels, b_probs = _check_probs(tgt_labels, tgt_probs, "target set")
    if a_probs.shape[1] != b_probs.shape[1]:
        raise ValueError(f"the two sets have {a_probs.shape[1]} and {b_probs.shape[1]} probability columns")
    swap = len(b_labels) > len(a_labels)
    if swap:
        a_labels, a_probs, b_labels, b_probs = b_labels, b_probs, a_labels, a_probs
    a_pred, a_conf = a_probs.argmax(1), a_probs.max(1).astype(np.float64)
    b_pred, b_conf = b_probs.argmax(1), b_probs.max(1).astype(np.float64)
    a_ok, b_ok = a_pred == a_labels, b_pred == b_labels
    runs: dict[str, list[float]] = {k: [] for k in ("ms", "mt", "gap", "fu", "au", "cs", "ct", "cu")}
    for child in np.random.SeedSequence(seed).spawn(int(n_runs)):
        m = match_predictions(
            a_pred, a_conf, b_pred, b_conf, eps=eps, by=by, seed=np.random.default_rng(child)
        )
        has_pairs = len(m.target_index) > 0
        ms = a_ok[m.source_index].mean() if has_pairs else np.nan
        mt = b_ok[m.target_index].mean() if has_pairs else np.nan
        runs["ms"].append(ms)
        runs["mt"].append(mt)
        runs["gap"].append(ms - mt)
        runs["fu"].append(m.fraction_unmatched)
        um = m.unmatched_target_index
        runs["au"].append(b_ok[um].mean() if len(um) else np.nan)
        runs["cs"].append(a_conf[m.source_index].mean() if has_pairs else np.nan)
        runs["ct"].append(b_conf[m.target_index].mean() if has_pairs else np.nan)
        runs["cu"].append(b_conf[um].mean() if len(um) else np.nan)
    acc_a, acc_b = float(a_ok.mean()), float(b_ok.mean())
    return {
        "roles": {"source": "second" if swap else "first", "target": "first" if swap else "second"},
        "set_sizes": {"source": len(a_labels), "target": len(b_labels)},
        "method": by,
        "eps": float(eps),
        "n_runs": int(n_runs),
        "accuracy": {"source": acc_a, "target": acc_b},
        "gap": acc_a - acc_b,
        "matched_accuracy_source": _mean_std(runs["ms"]),
        "matched_accuracy_target": _mean_std(runs["mt"]),
        "matched_gap": _mean_std(runs["gap"]),
        "fraction_unmatched": _mean_std(runs["fu"]),
        "accuracy_unmatched_target": _mean_std(runs["au"]),
        "mean_confidence": {
            "source": float(a_conf.mean()),
            "target": float(b_conf.mean()),
            "matched_source": _mean_std(runs["cs"]),
            "matched_target": _mean_std(runs["ct"]),
            "unmatched_target": _mean_std(runs["cu"]),
        },
    }


def role_names(roles: dict, first: str, second: str) -> dict:
    """The dataset names playing source and target, from a ``roles`` entry of :func:`matched_accuracy`.

    Parameters
    ----------
    roles : dict
        ``{"source": "first"|"second", "target": "second"|"first"}``.
    first, second : str
        Names of the first and the second set.

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        If ``roles`` does not map source and target to "first" and "second".

    Examples
    --------
    >>> role_names({"source": "second", "target": "first"}, "cifar10.1", "cinic10")
    {'source': 'cinic10', 'target': 'cifar10.1'}
    """
    names = {"first": first, "second": second}
    if set(roles) != {"source", "target"} or {roles["source"], roles["target"]} != set(names):
        raise ValueError(f"roles must map source and target to 'first' and 'second', got {roles!r}")
    return {role: names[which] for role, which in roles.items()}


def matched_table(
    pairs: dict, *, eps: float = 0.005, by: str = "label_and_prob", n_runs: int = 10, seed: int = 0,
    names: tuple[str, str] = ("first", "second"),
) -> pd.DataFrame:  # fmt: skip
    """:func:`matched_accuracy` for many models; one row per model (a pandas DataFrame).

    Parameters
    ----------
    pairs : dict of str -> (Predictions, Predictions)
        For each model, its predictions on the first (usually the original) and the second set, as
        read from a prediction store (:class:`shifteval.zoo.store.Predictions`).
    eps, by, n_runs, seed
        As for :func:`matched_accuracy`.
    names : (str, str)
        Names of the first and the second set; the columns ``source_set`` and ``target_set`` say which
        plays which role (the larger set is the source, so the roles swap when the second is larger).

    Returns
    -------
    pandas.DataFrame
        Columns ``acc_source, acc_target, gap, matched_acc_source, matched_acc_target, matched_gap,
        matched_gap_std, fraction_unmatched, acc_unmatched_target, conf_source, conf_target,
        source_role, source_set, target_set, n_source, n_target`` (means over runs where a statistic
        varies between runs; gaps are source − target).

    Raises
    ------
    ValueError
        As :func:`matched_accuracy`.

    Examples
    --------
    >>> from shifteval.zoo.store import Predictions
    >>> probs = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.2, 0.8]])
    >>> a, b = Predictions("m", "v1", np.array([0, 1, 0, 0]), probs, {}), Predictions("m", "v2", np.array([0, 1]), probs[:2], {})
    >>> t = matched_table({"m": (a, b)}, n_runs=2, names=("v1", "v2"))
    >>> t.loc["m", "source_set"], int(t.loc["m", "n_source"]), round(float(t.loc["m", "gap"]), 3)
    ('v1', 4, -0.25)
    """
    import pandas as pd

    rows = {}
    for name, (first, second) in pairs.items():
        r = matched_accuracy(
            first.labels, first.probs, second.labels, second.probs, eps=eps, by=by, n_runs=n_runs, seed=seed
        )
        rows[name] = {
            "acc_source": r["accuracy"]["source"],
            "acc_target": r["accuracy"]["target"],
            "gap": r["gap"],
            "matched_acc_source": r["matched_accuracy_source"]["mean"],
            "matched_acc_target": r["matched_accuracy_target"]["mean"],
            "matched_gap": r["matched_gap"]["mean"],
            "matched_gap_std": r["matched_gap"]["std"],
            "fraction_unmatched": r["fraction_unmatched"]["mean"],
            "acc_unmatched_target": r["accuracy_unmatched_target"]["mean"],
            "conf_source": r["mean_confidence"]["source"],
            "conf_target": r["mean_confidence"]["target"],
            "source_role": r["roles"]["source"],
            "source_set": role_names(r["roles"], *names)["source"],
            "target_set": role_names(r["roles"], *names)["target"],
            "n_source": r["set_sizes"]["source"],
            "n_target": r["set_sizes"]["target"],
        }
    return pd.DataFrame(rows).T.infer_objects()
