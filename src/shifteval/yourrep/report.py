"""The numbers the your-replication chapter states, gathered from the analyses' results.

Each function turns one analysis's output into a flat dict of the values its sentences quote and
the comparisons its claims test (numbers in points where they are accuracy differences).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .folder import ANALYSES, ReplicationData

TITLES = {
    "linear_fits": "Linear and probit fits with Recht et al.'s lines",
    "matching": "Matched evaluation (Algorithms 1 and 2)",
    "selection": "Selection-frequency adjustment",
    "mlm": "Misclassification likelihood matrix of the best model",
    "label_free": "Label-free estimates on the unlabeled set",
}


def effect(before: float, after: float, noise: float = 0.0) -> str:
    """What an adjustment does to a gap: removes, reverses, narrows, widens it, or does not change it.

    The words are ``"removes"``, ``"reverses"``, ``"narrows"``, ``"widens"`` or ``"does not change"``. A gap beyond ``noise`` (e.g. the half-width of its interval) that the adjustment leaves within it is
    removed, not reversed: the sign of what is left is not known. Otherwise the words speak of the point
    values: a gap whose sign flips is reversed; a gap left exactly as it was (no gap before and after
    included) is not changed.

    Parameters
    ----------
    before, after : float
        The gap before and after the adjustment.
    noise : float
        How far from zero a gap must be for its sign to count (0: any sign counts).

    Returns
    -------
    str

    Examples
    --------
    >>> effect(3.0, 1.0), effect(3.0, -1.0), effect(3.0, 4.0), effect(7.4, -0.2, noise=1.5)
    ('narrows', 'reverses', 'widens', 'removes')
    >>> effect(0.5, -1.2, noise=1.5)  # no gap beyond the noise to remove
    'reverses'
    >>> effect(0.0, 0.0), effect(0.0, -0.4)  # no gap to narrow: any gap after it is wider
    ('does not change', 'widens')
    """
    if after == before:
        return "does not change"
    if abs(after) <= noise < abs(before):
        return "removes"
    if (before > 0 > after) or (before < 0 < after):  # signs, not a product that can underflow to 0
        return "reverses"
    return "narrows" if abs(after) < abs(before) else "widens"


def effect_range(before: float, word: str, noise: float = 0.0) -> tuple[float, float]:
    """The gaps after an adjustment that :func:`effect` describes with ``word``: the test of the word.

    Parameters
    ----------
    before : float
        The gap before the adjustment.
    word : {"removes", "narrows", "reverses", "widens", "does not change"}
        The words a sentence uses.
    noise : float
        As in :func:`effect`.

    Returns
    -------
    tuple of float
        ``(lo, hi)``: ``word`` is true of ``after`` exactly when ``lo <= after <= hi`` (up to ties at the
        ends); ``(inf, -inf)``, an empty interval, where no gap fits the word (a gap of 0 cannot be
        narrowed or reversed).

    Raises
    ------
    ValueError
        If ``word`` is none of the four.

    Examples
    --------
    >>> effect_range(3.0, "narrows"), effect_range(3.0, "reverses"), effect_range(-3.0, "widens")
    ((0.0, 3.0), (-inf, 0.0), (-inf, -3.0))
    >>> effect_range(7.4, "removes", noise=1.5), effect_range(7.4, "reverses", noise=1.5)
    ((-1.5, 1.5), (-inf, -1.5))
    >>> effect_range(0.0, "widens"), effect_range(0.0, "narrows"), effect_range(2.0, "does not change")
    ((-inf, inf), (inf, -inf), (2.0, 2.0))
    """
    before, noise = float(before), abs(float(noise))
    inf = float("inf")
    sign = 1.0 if before >= 0 else -1.0
    if word == "does not change":
        return before, before
    if before == 0 and word in ("widens", "narrows", "reverses"):  # no gap: no sign to flip, none to narrow
        return (-inf, inf) if word == "widens" else (inf, -inf)
    if word == "removes":  # only a gap beyond the noise can be removed: else no value of ``after`` fits
        return (-noise, noise) if abs(before) > noise else (inf, -inf)
    beyond = noise if abs(before) > noise else 0.0  # the noise counts only where a gap can be removed
    if word == "narrows":
        lo, hi = beyond, abs(before)
    elif word == "reverses":
        lo, hi = -inf, 0.0 - beyond
    elif word == "widens":
        lo, hi = abs(before), inf
    else:
        raise ValueError(
            f"word must be 'removes', 'narrows', 'reverses', 'widens' or 'does not change', got {word!r}"
        )
    return (lo, hi) if sign > 0 else (-hi, -lo)


#: The Spearman correlations :func:`agreement` describes with each word: ``[lo, hi]``.
AGREEMENT = {"closely": (0.7, 1.0), "partly": (0.3, 0.7), "little": (-1.0, 0.3)}


def agreement(rho: float) -> str:
    """Words for a rank correlation: ``"closely"`` (>= 0.7), ``"partly"`` (>= 0.3) or ``"little"``.

    Parameters
    ----------
    rho : float
        A Spearman correlation.

    Returns
    -------
    str

    Examples
    --------
    >>> agreement(0.8), agreement(0.38), agreement(-0.1)
    ('closely', 'partly', 'little')
    """
    return (
        "closely"
        if rho >= AGREEMENT["closely"][0]
        else "partly"
        if rho >= AGREEMENT["partly"][0]
        else "little"
    )


def source(data: ReplicationData, worked_example: str | None = None) -> str:
    """Where the page's predictions come from, in words (the page's first sentence names it).

    Parameters
    ----------
    data : ReplicationData
        The loaded folder.
    worked_example : str, optional
        The worked example's description, when the folder is the worked example's export.

    Returns
    -------
    str
        The worked example, the prediction store the folder was converted from (with the datasets that
        play the original and the new set), or the folder.

    Examples
    --------
    >>> import dataclasses
    >>> from pathlib import Path
    >>> from shifteval.yourrep import example
    >>> data = dataclasses.replace(example.tiny(), root=Path("/data/rep"))
    >>> source(data), source(dataclasses.replace(data, store="/data/store"))
    ('the folder `/data/rep`', 'the prediction store `/data/store` (original as the original set, new as the new one)')
    """
    if worked_example is not None:
        return worked_example
    if data.store is not None:
        return (
            f"the prediction store `{data.store}` ({data.names['original']} as the original set, "
            f"{data.names['new']} as the new one)"
        )
    return f"the folder `{data.root}`"


def availability(data: ReplicationData, available: dict) -> pd.DataFrame:
    """What the folder holds and which analyses run (the page's first table).

    Parameters
    ----------
    data : ReplicationData
        The loaded folder.
    available : dict
        :func:`shifteval.yourrep.folder.available_analyses`.

    Returns
    -------
    pandas.DataFrame
        One row per analysis: ``analysis``, ``status`` (``runs`` or ``skipped``), ``why``.

    Examples
    --------
    >>> from shifteval.yourrep import example, folder
    >>> d = example.tiny()
    >>> availability(d, folder.available_analyses(d)).status.tolist()
    ['runs', 'runs', 'skipped', 'runs', 'skipped']
    """
    rows = [
        {
            "analysis": TITLES[a],
            "status": "runs" if available[a] is None else "skipped",
            "why": available[a] or "",
        }
        for a in ANALYSES
    ]
    return pd.DataFrame(rows)


#: A mean gap (points) this close to 0 is no gap: the rounding error of averaging accuracies that are equal.
NO_GAP = 1e-9


def drop_facts(table: pd.DataFrame) -> dict:
    """The drop in accuracy over your models.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`shifteval.yourrep.analysis.accuracy_table`.

    Returns
    -------
    dict
        ``n``, ``n_drop`` (models less accurate on the new set), ``gap`` (mean, points), ``gap_min``,
        ``gap_max``, ``best`` (the most accurate model on the original set) and its ``best_gap``;
        ``moves`` (``"drops"`` when the mean gap is positive, ``"rises"`` when it is negative, ``"does not
        change"`` when it is 0 up to rounding error, :data:`NO_GAP`) and ``size`` (its magnitude, points).

    Examples
    --------
    >>> from shifteval.yourrep import analysis, example
    >>> f = drop_facts(analysis.accuracy_table(example.tiny()))
    >>> f["n_drop"], round(f["gap"], 1), f["best"]
    (4, 17.5, 'm3')
    """
    best = str(table["acc_original"].idxmax())
    gap = float(table["gap"].mean())
    return {
        "n": len(table),
        "n_drop": int((table["gap"] > 0).sum()),
        "gap": float(table["gap"].mean()),
        "gap_min": float(table["gap"].min()),
        "gap_max": float(table["gap"].max()),
        "best": best,
        "best_gap": float(table.loc[best, "gap"]),
        "moves": "drops" if gap > NO_GAP else "rises" if gap < -NO_GAP else "does not change",
        "size": abs(gap),
    }


def fit_facts(fits: dict, comparison: pd.DataFrame) -> dict:
    """Slopes and intervals of your fits, and where your models lie relative to Recht et al.'s lines.

    Parameters
    ----------
    fits : dict
        :func:`shifteval.yourrep.analysis.fit_lines`.
    comparison : pandas.DataFrame
        :func:`shifteval.yourrep.analysis.compare_with_references` (the printed lines, within their ranges).

    Returns
    -------
    dict
        Per scale (``lin_``, ``pro_`` prefixes): ``slope``, ``r``, model-only and models-and-images
        slope intervals (``lo``, ``hi``, ``ilo``, ``ihi``) and their widths; ``compared`` (printed
        lines with at least one of your models inside their range), ``closer``/``farther`` (their names,
        ``"None"`` when fewer are compared) with the mean residuals ``res_*`` (points), the shares inside
        the band ``band_*`` and the models inside the range ``n_*``; ``outside`` (a sentence per line:
        models inside its range and the farthest outside) and ``residuals`` (absolute, per compared line).

    Examples
    --------
    >>> from shifteval.yourrep import analysis, example
    >>> d = example.tiny()
    >>> t = analysis.accuracy_table(d)
    >>> cmp = analysis.compare_with_references(t, analysis.reference_lines(n_boot=50))
    >>> f = fit_facts(analysis.fit_lines(d, n_boot=50, n_boot_images=20), cmp)
    >>> f["closer"] in ("CIFAR-10", "ImageNet"), f["pro_width_images"] > 0
    (True, True)
    """
    out: dict[str, Any] = {}
    for scale, p in (("linear", "lin"), ("probit", "pro")):
        fit = fits[scale]["fit"]
        lo, hi = fit.slope_ci
        ilo, ihi = fits[scale]["slope_ci_images"]
        out |= {f"{p}_slope": fit.slope, f"{p}_r": fit.r, f"{p}_lo": lo, f"{p}_hi": hi, f"{p}_ilo": ilo}
        out |= {f"{p}_ihi": ihi, f"{p}_width": hi - lo, f"{p}_width_images": ihi - ilo}
    compared = comparison[comparison["n_inside"] > 0]
    order = list(compared["residual"].abs().sort_values().index) + [None, None]
    out |= {"compared": len(compared), "closer": str(order[0]), "farther": str(order[1])}
    for role, name in (("closer", order[0]), ("farther", order[1])):
        row = comparison.loc[name] if name is not None else None
        out[f"res_{role}"] = float(row["residual"]) if row is not None else float("nan")
        out[f"band_{role}"] = float(row["within_band"]) if row is not None else float("nan")
        out[f"n_{role}"] = int(row["n_inside"]) if row is not None else 0
    out["outside"] = "; ".join(
        f"{name}: {int(r.n_inside)} inside {100 * r.x_min:.1f}–{100 * r.x_max:.1f}%, the farthest "
        f"{r.farthest_outside:.1f} points outside"
        for name, r in comparison.iterrows()
    )
    out["residuals"] = compared["residual"].abs().to_dict()
    out["side_closer"] = "above" if out["res_closer"] > 0 else "below"
    return out


def reference_sentence(comparison: pd.DataFrame, short: bool = False) -> str:
    """Where your models lie relative to each of Recht et al.'s printed lines, within its range.

    Each line (Recht et al. 2019, §3.3) is compared only with your models whose original accuracy lies
    within the range of the models it was fitted on, so two lines are usually compared with different
    models: the sentence gives each line's mean distance and does not rank the lines.

    Parameters
    ----------
    comparison : pandas.DataFrame
        :func:`shifteval.yourrep.analysis.compare_with_references`.
    short : bool
        One clause per line (for the verdict) instead of the full sentence.

    Returns
    -------
    str

    Examples
    --------
    >>> c = pd.DataFrame({"n_inside": [2, 0], "n_above": [2, 0], "residual": [1.5, float("nan")],
    ...                   "x_min": [0.8, 0.5], "x_max": [0.95, 0.7], "farthest_outside": [3.0, 20.0]},
    ...                  index=["CIFAR-10", "ImageNet"])
    >>> reference_sentence(c, short=True)
    'CIFAR-10 +1.50 points on average (2 models, 2 above the line); ImageNet: none of your models in its range.'
    """
    clauses = []
    for name, r in comparison.iterrows():
        where = "" if short else f" (original accuracy {100 * r.x_min:.1f}–{100 * r.x_max:.1f}%)"
        if r.n_inside == 0:
            clauses.append(f"{name}{where}: none of your models in its range")
            continue
        clauses.append(
            f"{name}{where} {r.residual:+.2f} points on average ({int(r.n_inside)} models, "
            f"{int(r.n_above)} above the line)"
        )
    text = "; ".join(clauses) + "."
    if short:
        return text
    return (
        "On the linear axes Recht et al. printed their lines on, each line against your models within the range "
        "of original accuracies its models span (new accuracy minus the line; the groups differ, so the "
        f"distances are not compared with each other): {text}"
    )


def matching_facts(tables: dict) -> dict:
    """Accuracy gaps against matched gaps (points) and the fractions unmatched.

    Parameters
    ----------
    tables : dict
        :func:`shifteval.yourrep.analysis.matched_gaps`.

    Returns
    -------
    dict
        ``n``, ``gap`` (mean), ``mgap1``/``mgap2`` (mean matched gap, Algorithms 1 and 2), ``n_gap``
        (models whose accuracy gap is not 0: the only ones whose gap matching can narrow),
        ``n_narrower1``/``n_narrower2`` (models whose matched gap is narrower), ``fu1``/``fu2`` (mean
        fraction unmatched), ``sd`` (largest run-to-run standard deviation, points; NaN with a single
        run), ``source``, ``effect`` (:func:`effect` of Algorithm 1 on the mean gap).

    Examples
    --------
    >>> from shifteval.yourrep import analysis, example
    >>> f = matching_facts(analysis.matched_gaps(example.tiny(), n_runs=2))
    >>> f["n"], f["n_gap"], f["source"]
    (4, 4, 'original')
    """
    a1, a2 = tables["label_and_prob"], tables["prob"]
    sd = a1["matched_gap_std"].to_numpy(dtype=float)
    return {
        "n": len(a1),
        "n_gap": int((a1["gap"] != 0).sum()),
        "gap": 100 * float(a1["gap"].mean()),
        "mgap1": 100 * float(a1["matched_gap"].mean()),
        "mgap2": 100 * float(a2["matched_gap"].mean()),
        "n_narrower1": int((a1["matched_gap"].abs() < a1["gap"].abs()).sum()),
        "n_narrower2": int((a2["matched_gap"].abs() < a2["gap"].abs()).sum()),
        "fu1": float(a1["fraction_unmatched"].mean()),
        "fu2": float(a2["fraction_unmatched"].mean()),
        "sd": 100 * float(np.nanmax(sd)) if np.isfinite(sd).any() else float("nan"),
        "source": str(a1["source_set"].iloc[0]),
        "effect": effect(100 * float(a1["gap"].mean()), 100 * float(a1["matched_gap"].mean())),
    }


def selection_facts(table: pd.DataFrame) -> dict:
    """Gaps before and after the selection-frequency adjustment (points).

    Parameters
    ----------
    table : pandas.DataFrame
        The first result of :func:`shifteval.yourrep.analysis.selection_adjusted`.

    Returns
    -------
    dict
        ``n``; mean ``gap`` (original - new) and the mean gaps left after each adjustment (``gap_naive``,
        ``gap_jack`` (NaN without a jackknife), ``gap_param``); ``n_closer`` (models whose parametric
        estimate lies between their new and their original accuracy or closes the gap); ``n_excludes``
        (models whose parametric interval excludes the original accuracy); ``halfwidth`` (median half
        width of the parametric intervals); ``effect`` (:func:`effect` of the parametric adjustment on the
        mean gap, with that half-width as the noise: a gap left inside it is "removes", not "reverses");
        ``share_left`` (the parametric gap as a share of the gap, NaN when there is no drop to explain).

    Examples
    --------
    >>> from shifteval.yourrep import analysis, example
    >>> f = selection_facts(analysis.selection_adjusted(example.tiny(votes=True), n_boot=2)[0])
    >>> f["n"], round(f["gap"], 1)
    (4, 17.5)
    """
    o, n = table["acc_original"], table["acc_new"]
    facts: dict[str, Any] = {
        "n": len(table),
        "gap": 100 * float((o - n).mean()),
        "gap_naive": 100 * float((o - table["naive"]).mean()),
        "gap_jack": 100 * float((o - table["jackknife"]).mean()),
        "gap_param": 100 * float((o - table["parametric"]).mean()),
        "n_closer": int(((o - table["parametric"]).abs() < (o - n).abs()).sum()),
        "n_excludes": int(((table["parametric_high"] < o) | (table["parametric_low"] > o)).sum()),
        "halfwidth": 100 * float(((table["parametric_high"] - table["parametric_low"]) / 2).median()),
    }
    facts["effect"] = effect(facts["gap"], facts["gap_param"], noise=facts["halfwidth"])
    facts["share_left"] = facts["gap_param"] / facts["gap"] if facts["gap"] > 0 else float("nan")
    return facts


def mlm_facts(result: dict) -> dict:
    """The MLM's agreement with the confusions and between the two sets.

    Parameters
    ----------
    result : dict
        :func:`shifteval.yourrep.analysis.mlm_of_best`.

    Returns
    -------
    dict
        ``model``, ``rho_original``, ``rho_new`` (Spearman with the confusion rates), ``stability``
        (Spearman between the two sets' MLMs) and its words ``agree`` (:func:`agreement`).

    Examples
    --------
    >>> mlm_facts({"model": "m", "rho": {"original": 0.5, "new": 0.4}, "stability": 0.9})["agree"]
    'closely'
    """
    out = {"model": result["model"], "stability": float(result["stability"])}
    out |= {f"rho_{s}": float(r) for s, r in result["rho"].items()}
    out["agree"] = agreement(out["stability"])
    return out


def label_free_facts(new: pd.DataFrame, rmse: pd.Series) -> dict:
    """How the label-free estimators fare on the new set, whose labels you have.

    Parameters
    ----------
    new : pandas.DataFrame
        The first table of :func:`shifteval.yourrep.analysis.label_free_table`.
    rmse : pandas.Series
        :func:`shifteval.yourrep.analysis.rmse_by_method`.

    Returns
    -------
    dict
        ``n``, ``best``/``worst`` methods with their RMSE (points), ``rmse`` (every method's RMSE),
        ``n_over`` (models whose average confidence exceeds their new accuracy), ``rmse_08``/``rmse_09``
        (the softmax baseline's RMSE at τ = 0.8 and 0.9) and ``softmax_diff`` (τ = 0.9 minus τ = 0.8);
        ``tie`` (the methods that share the lowest RMSE, else those that share the highest, else none: then
        no single method ranks first), ``ties`` (their names joined) and ``tie_end`` ("the best" or "the
        worst").

    Examples
    --------
    >>> from shifteval.yourrep import analysis, example
    >>> new, _ = analysis.label_free_table(example.tiny())
    >>> f = label_free_facts(new, analysis.rmse_by_method(new))
    >>> f["n"], f["tie"]
    (4, [])
    """
    ends = [[str(k) for k, v in rmse.items() if v == end] for end in (rmse.iloc[0], rmse.iloc[-1])]
    tie = next((names for names in ends if len(names) > 1), [])
    return {
        "tie": tie,
        "ties": " and ".join(tie),
        "tie_end": "the best" if tie and tie == ends[0] else "the worst",
        "n": len(new),
        "best": str(rmse.index[0]),
        "rmse_best": float(rmse.iloc[0]),
        "worst": str(rmse.index[-1]),
        "rmse_worst": float(rmse.iloc[-1]),
        "rmse": {str(k): float(v) for k, v in rmse.items()},
        "n_over": int((new["average_confidence"] > new["truth"]).sum()),
        "rmse_08": float(rmse["softmax_0.8"]),
        "rmse_09": float(rmse["softmax_0.9"]),
        "softmax_diff": float(rmse["softmax_0.9"] - rmse["softmax_0.8"]),
    }


def finite(facts: dict, *keys: str) -> bool:
    """Whether ``facts`` holds every one of ``keys`` as a finite number (a slope and its interval, say).

    A finding's criterion compares numbers: an analysis that was skipped (no facts) or gave NaN (a slope
    without a spread of accuracies to rest on) leaves the finding not testable rather than failing the run.

    Parameters
    ----------
    facts : dict
        One analysis's facts (:func:`fit_facts`, :func:`selection_facts`, ...), empty when it was skipped.
    *keys : str
        The numbers a criterion needs.

    Returns
    -------
    bool

    Examples
    --------
    >>> finite({"slope": 1.2, "lo": 1.0, "hi": 1.4}, "slope", "lo", "hi"), finite({"slope": float("nan")}, "slope")
    (True, False)
    >>> finite({}, "slope")
    False
    """
    return all(isinstance(facts.get(k), (int, float)) and np.isfinite(facts[k]) for k in keys)
