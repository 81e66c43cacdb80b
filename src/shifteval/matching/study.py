"""The matched-evaluation experiments: zoo-wide tables, the ε sweep, quantised probabilities, Figure 5.

Anzaku, Wang, Van Messem & De Neve evaluate every model on a pair of test sets with Algorithms 1 and 2
(§4.1: ε = 0.005, 10 runs, the fraction unmatched beside every matched gap) and look closely at one
strong model (Figure 5: accuracy gap 8.6%, matched gap 3.1%, accuracy 45.54% on the unmatched targets).
The functions here run those experiments on a prediction store (:mod:`shifteval.zoo.store`) so that the
chapter only calls them; the algorithms themselves are in :mod:`shifteval.matching`.

Matching on the predicted probability assumes the probabilities are continuous. A k-nearest-neighbour
classifier outputs multiples of 1/k, a random forest of n trees multiples of 1/n (with pure leaves),
and naive Bayes saturates at exactly 1.0: with few distinct values, a window of ±ε holds whole blocks
of tied examples whatever ε is, so ε → 0 does not leave targets unmatched and the matched subsets are
random draws within a tie block. :func:`distinct_probabilities` and :func:`quantisation_table` measure
this. The summaries of these experiments' tables (the chapter's summary table and the numbers its text
states) are in :mod:`shifteval.matching.findings`; every public name of both is importable from
:mod:`shifteval.matching`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .algorithms import METHODS, match_predictions, matched_accuracy, matched_table, role_names

if TYPE_CHECKING:
    from ..zoo.store import Predictions

#: A model's probabilities count as continuous when at least this share of its predicted probabilities
#: on the source set are distinct values, and as quantised below ``QUANTISED_SHARE``; in between they
#: are mostly distinct but pile up at a few values (typically exactly 1.0: saturating).
CONTINUOUS_SHARE = 0.99
QUANTISED_SHARE = 0.5


def distinct_probabilities(probs: ArrayLike) -> int:
    """Number of distinct predicted probabilities (max softmax outputs) of a model on a set.

    Parameters
    ----------
    probs : array_like of float, shape (N, K)
        Softmax probabilities; ValueError unless a non-empty 2-D array.

    Returns
    -------
    int
        Distinct values among the rows' largest probabilities.

    Raises
    ------
    ValueError
        Unless ``probs`` is a non-empty 2-D array.

    Examples
    --------
    >>> distinct_probabilities([[0.2, 0.8], [0.8, 0.2], [0.4, 0.6]])
    2
    """
    probs = np.asarray(probs)
    if probs.ndim != 2 or len(probs) == 0:
        raise ValueError(f"probs must be a non-empty (N, K) array, got shape {probs.shape}")
    return int(np.unique(probs.max(axis=1)).size)


def _check_targets(pairs_by_target: dict) -> None:
    if not pairs_by_target or not all(pairs_by_target.values()):
        raise ValueError("pairs_by_target must map at least one target set to a non-empty {model: pair} dict")


def evaluate(pairs_by_target: dict, first: str, *, eps: float = 0.005, n_runs: int = 10, seed: int = 0,
             methods: tuple[str, ...] = METHODS) -> dict:  # fmt: skip
    """Accuracy, matched accuracy and fraction unmatched of every model, per target set and algorithm.

    Parameters
    ----------
    pairs_by_target : dict of str -> dict of str -> (Predictions, Predictions)
        For each second set, ``{model: (predictions on first, predictions on second)}``
        (:meth:`shifteval.zoo.PredictionStore.pairs`); ValueError if empty.
    first : str
        Name of the first set (the source unless the second set is larger).
    eps, n_runs, seed :
        As in :func:`shifteval.matching.matched_accuracy` (the paper: 0.005 and 10, §4.1).
    methods : sequence of {"label_and_prob", "prob"}
        Algorithm 1 and/or Algorithm 2.

    Returns
    -------
    dict of (str, str) -> pandas.DataFrame
        ``(second set, method)`` → :func:`shifteval.matching.matched_table` (columns ``source_set`` and
        ``target_set`` name the roles).

    Raises
    ------
    ValueError
        When ``pairs_by_target`` is empty or maps a set to no models.

    Examples
    --------
    Also runs :func:`roles`, :func:`narrower`, :func:`summary` and :func:`gap_facts`:

    >>> from shifteval.zoo.store import Predictions as P
    >>> p = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.2, 0.8]])
    >>> pairs = {"m": (P("m", "a", np.array([0, 1, 0, 0]), p, {}), P("m", "b", np.array([0, 1, 1]), p[:3], {}))}
    >>> tables = evaluate({"b": pairs}, "a", n_runs=2)
    >>> from shifteval.matching.findings import gap_facts, narrower, roles, summary
    >>> sorted(tables), roles(tables["b", "prob"]), narrower(tables)["b"]
    ([('b', 'label_and_prob'), ('b', 'prob')], {'source': 'a', 'target': 'b'}, {'label_and_prob': 0.0, 'prob': 0.0})
    >>> summary(tables)["mean accuracy gap (points)"].round(2).tolist(), gap_facts(tables, "b")["n_acc"]
    ([8.33, 8.33], 1)
    """
    _check_targets(pairs_by_target)
    return {
        (t, by): matched_table(pairs, eps=eps, by=by, n_runs=n_runs, seed=seed, names=(first, t))
        for t, pairs in pairs_by_target.items()
        for by in methods
    }


def quantisation_table(pairs: dict, *, eps: float = 0.005, eps_small: float = 1e-6, n_runs: int = 3,
                       seed: int = 0, by: str = "label_and_prob") -> pd.DataFrame:  # fmt: skip
    """How quantised probabilities change matching, model by model.

    Parameters
    ----------
    pairs : dict of str -> (Predictions, Predictions)
        One target set's pairs (see :func:`evaluate`).
    eps : float
        The working ε (the paper's 0.005).
    eps_small : float
        A near-zero ε: with continuous probabilities almost every target is then unmatched; with
        quantised probabilities exact ties still match.
    n_runs, seed, by :
        As in :func:`shifteval.matching.matched_accuracy`.

    Returns
    -------
    pandas.DataFrame
        Per model: ``distinct_source``, ``distinct_target`` (distinct predicted probabilities),
        ``distinct_share`` (``distinct_source`` over the source size), ``kind`` (``"continuous"``,
        ``"saturating"`` or ``"quantised"``, see :data:`CONTINUOUS_SHARE`), ``top_share`` (share of source examples at their most
        common probability), ``min_spacing`` (smallest difference between distinct probabilities of
        the two sets together; above 2ε a window only holds exact ties), ``gap``, ``matched_gap``, ``fraction_unmatched`` at ``eps`` and
        ``fraction_unmatched_small``, ``matched_gap_small`` at ``eps_small``.

    Examples
    --------
    >>> from shifteval.zoo.store import Predictions as P
    >>> p = np.array([[1.0, 0.0]] + [[0.5, 0.5]] * 4)  # two probability values, like a 2-NN
    >>> pairs = {"knn": (P("knn", "a", np.array([0, 0, 1, 0, 1]), p, {}), P("knn", "b", np.array([0, 1]), p[1:3], {}))}
    >>> q = quantisation_table(pairs, n_runs=2)
    >>> from shifteval.matching.findings import quant_facts
    >>> int(q.loc["knn", "distinct_source"]), q.loc["knn", "kind"], quant_facts(q, 0.005)["quantised"]
    (2, 'quantised', 'knn')
    """
    rows = {}
    for name, (a, b) in pairs.items():
        src, tgt = (b, a) if len(b.labels) > len(a.labels) else (a, b)
        kw: dict[str, Any] = dict(by=by, n_runs=n_runs, seed=seed)
        r = matched_accuracy(a.labels, a.probs, b.labels, b.probs, eps=eps, **kw)
        r0 = matched_accuracy(a.labels, a.probs, b.labels, b.probs, eps=eps_small, **kw)
        _, counts = np.unique(src.confidence, return_counts=True)
        both = np.unique(np.concatenate([src.confidence, tgt.confidence]).astype(np.float64))
        n_distinct = distinct_probabilities(src.probs)
        rows[name] = {
            "distinct_source": n_distinct,
            "distinct_target": distinct_probabilities(tgt.probs),
            "distinct_share": n_distinct / len(src.labels),
            "kind": _kind(n_distinct / len(src.labels)),
            "top_share": counts.max() / len(src.labels),
            "min_spacing": float(np.diff(both).min()) if len(both) > 1 else 1.0,
            "accuracy_source": r["accuracy"]["source"],
            "gap": r["gap"],
            "matched_gap": r["matched_gap"]["mean"],
            "fraction_unmatched": r["fraction_unmatched"]["mean"],
            "matched_gap_small": r0["matched_gap"]["mean"],
            "fraction_unmatched_small": r0["fraction_unmatched"]["mean"],
        }
    return pd.DataFrame(rows).T.infer_objects()


def _kind(distinct_share: float) -> str:
    if distinct_share >= CONTINUOUS_SHARE:
        return "continuous"
    return "quantised" if distinct_share < QUANTISED_SHARE else "saturating"


def eps_sweep(first: Predictions, second: Predictions, eps_grid: ArrayLike, *,
              methods: tuple[str, ...] = METHODS, n_runs: int = 5, seed: int = 0) -> pd.DataFrame:  # fmt: skip
    """Matched gap and fraction unmatched of one model as ε varies.

    Parameters
    ----------
    first, second : Predictions
        The model's predictions on the two sets.
    eps_grid : sequence of float
        Values of ε, each in (0, 1); ValueError if empty.
    methods, n_runs, seed
        As in :func:`evaluate`.

    Returns
    -------
    pandas.DataFrame
        Rows ``eps, method, gap, matched_gap, matched_gap_std, fraction_unmatched``.

    Raises
    ------
    ValueError
        When ``eps_grid`` is empty.

    Examples
    --------
    >>> from shifteval.zoo.store import Predictions as P
    >>> p = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.2, 0.8]])
    >>> sweep = eps_sweep(P("m", "a", np.array([0, 1, 0, 0]), p, {}), P("m", "b", np.array([0, 1, 1]), p[:3], {}), [0.01, 0.1], n_runs=2)
    >>> from shifteval.matching.findings import sweep_facts
    >>> sweep.shape, round(float(sweep_facts(sweep, 0.01)["g"]), 2)
    ((4, 6), 8.33)
    """
    grid = np.asarray(eps_grid, dtype=np.float64)
    if len(grid) == 0:
        raise ValueError("eps_grid is empty")
    rows = []
    for e in grid:
        for by in methods:
            r = matched_accuracy(
                first.labels, first.probs, second.labels, second.probs, eps=e, by=by, n_runs=n_runs, seed=seed
            )
            rows.append({
                "eps": float(e), "method": by, "gap": r["gap"], "matched_gap": r["matched_gap"]["mean"],
                "matched_gap_std": r["matched_gap"]["std"], "fraction_unmatched": r["fraction_unmatched"]["mean"],
            })  # fmt: skip
    return pd.DataFrame(rows)


def pick_models(table: pd.DataFrame, quant: pd.DataFrame) -> dict:
    """The strong and the weak model (highest and lowest source accuracy) and the median continuous one.

    ``continuous`` is the model with continuous probabilities (see :func:`quantisation_table`) of median
    source accuracy; when the zoo has none, the median model of the whole zoo.

    Parameters
    ----------
    table : pandas.DataFrame
        An :func:`evaluate` table (column ``acc_source``); ValueError if empty.
    quant : pandas.DataFrame
        :func:`quantisation_table` of the same models (column ``kind``).

    Returns
    -------
    dict
        ``{"strong": name, "weak": name, "continuous": name}``.

    Raises
    ------
    ValueError
        When ``table`` is empty.

    Examples
    --------
    >>> pick_models(pd.DataFrame({"acc_source": [0.9, 0.5, 0.7]}, index=list("xyz")), pd.DataFrame({"kind": ["quantised", "continuous", "continuous"]}, index=list("xyz")))
    {'strong': 'x', 'weak': 'y', 'continuous': 'z'}
    """
    if len(table) == 0:
        raise ValueError("pick_models needs at least one model")
    order = table.acc_source.sort_values()
    cont = [m for m in order.index if quant.loc[m, "kind"] == "continuous"]
    return {
        "strong": order.index[-1],
        "weak": order.index[0],
        "continuous": cont[len(cont) // 2] if cont else order.index[len(order) // 2],
    }


def fig5_subsets(first: Predictions, second: Predictions, names: tuple[str, str] = ("first", "second"), *,
                 eps: float = 0.005, by: str = "label_and_prob", n_runs: int = 10, seed: int = 0) -> dict:  # fmt: skip
    """Figure 5 of the paper for one model: the three subsets of one run and the numbers over runs.

    Parameters
    ----------
    first, second : Predictions
        The model's predictions on the two sets.
    names : (str, str)
        Names of the two sets (the larger is the source).
    eps, by, n_runs, seed
        As in :func:`shifteval.matching.matched_accuracy`.

    Returns
    -------
    dict
        ``roles`` (set names), ``subsets`` (``"matched source"``, ``"matched target"``, ``"unmatched
        target"`` → ``(confidence, correct)`` of the run with ``seed``), and means over ``n_runs``:
        ``accuracy_gap``, ``matched_gap``, ``unmatched_accuracy``, ``fraction_unmatched``,
        ``n_unmatched``.

    Examples
    --------
    >>> from shifteval.zoo.store import Predictions as P
    >>> p = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.2, 0.8]])
    >>> f = fig5_subsets(P("m", "a", np.array([0, 1, 0, 0]), p, {}), P("m", "b", np.array([0, 1, 1]), p[:3], {}), ("a", "b"), n_runs=2)
    >>> f["roles"], {k: len(v[0]) for k, v in f["subsets"].items()}, round(f["accuracy_gap"], 3)
    ({'source': 'a', 'target': 'b'}, {'matched source': 3, 'matched target': 3, 'unmatched target': 0}, 0.083)
    """
    r = matched_accuracy(
        first.labels, first.probs, second.labels, second.probs, eps=eps, by=by, n_runs=n_runs, seed=seed
    )
    src, tgt = (second, first) if r["roles"]["source"] == "second" else (first, second)
    m = match_predictions(
        src.predicted, src.confidence, tgt.predicted, tgt.confidence, eps=eps, by=by, seed=seed
    )
    subsets = {
        "matched source": (src.confidence[m.source_index], src.correct[m.source_index]),
        "matched target": (tgt.confidence[m.target_index], tgt.correct[m.target_index]),
        "unmatched target": (tgt.confidence[m.unmatched_target_index], tgt.correct[m.unmatched_target_index]),
    }
    return {
        "roles": role_names(r["roles"], *names),
        "subsets": subsets,
        "accuracy_gap": r["gap"],
        "matched_gap": r["matched_gap"]["mean"],
        "unmatched_accuracy": r["accuracy_unmatched_target"]["mean"],
        "fraction_unmatched": r["fraction_unmatched"]["mean"],
        "n_unmatched": r["fraction_unmatched"]["mean"] * r["set_sizes"]["target"],
        "confidence_unmatched": r["mean_confidence"]["unmatched_target"]["mean"],
        "confidence_matched_target": r["mean_confidence"]["matched_target"]["mean"],
    }
