"""The matched-evaluation chapter's summaries: from the experiments' tables to the numbers it states.

:mod:`shifteval.matching.study` runs the experiments of Anzaku, Wang, Van Messem & De Neve (the
zoo-wide tables of Algorithms 1 and 2, the quantisation table, the ε sweep, Figure 5); the functions
here read their outputs: the roles of the two sets, the share of models whose matched gap is narrower
than the accuracy gap, the chapter's summary table, the facts its text quotes and the counts its findings
compare with the paper's statements. Every public name here is importable from :mod:`shifteval.matching` too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats


def roles(table: pd.DataFrame) -> dict:
    """The set names playing source and target in a :func:`~shifteval.matching.study.evaluate` table.

    Parameters
    ----------
    table : pandas.DataFrame
        One ``(second set, method)`` table of :func:`~shifteval.matching.study.evaluate`.

    Returns
    -------
    dict
        ``{"source": name, "target": name}``.

    Raises
    ------
    ValueError
        When models disagree (their two sets have different sizes).

    Examples
    --------
    >>> roles(pd.DataFrame({"source_set": ["v1", "v1"], "target_set": ["v2", "v2"]}))
    {'source': 'v1', 'target': 'v2'}
    """
    found = table[["source_set", "target_set"]].drop_duplicates()
    if len(found) != 1:
        raise ValueError(f"models disagree on the roles of the two sets: {found.to_dict(orient='records')}")
    return {"source": found.source_set.iloc[0], "target": found.target_set.iloc[0]}


def narrower(tables: dict) -> dict:
    """Share of models whose matched gap is narrower than the accuracy gap (|matched gap| < |gap|).

    Parameters
    ----------
    tables : dict
        :func:`~shifteval.matching.study.evaluate` output.

    Returns
    -------
    dict
        ``{second set: {method: share}}``.

    Examples
    --------
    Two of three models narrow the gap (1 < 5 and 0 < 3 points; 3 > 2 points does not):

    >>> tab = pd.DataFrame({"gap": [0.05, -0.02, 0.03], "matched_gap": [0.01, -0.03, 0.0]})
    >>> round(narrower({("v2", "prob"): tab})["v2"]["prob"], 3)
    0.667
    """
    out: dict = {}
    for (t, by), tab in tables.items():
        out.setdefault(t, {})[by] = float((tab.matched_gap.abs() < tab.gap.abs()).mean())
    return out


def summary(tables: dict) -> pd.DataFrame:
    """The chapter's summary table: one row per (second set, method).

    Parameters
    ----------
    tables : dict
        :func:`~shifteval.matching.study.evaluate` output.

    Returns
    -------
    pandas.DataFrame
        Role names, mean accuracy gap and matched gap (points), mean fraction unmatched, share of models
        with a narrower matched gap, and the largest run-to-run SD of a matched gap (points).

    Examples
    --------
    Gaps of 5, -2 and 3 points (mean 2) and matched gaps of 1, -3 and 2 points (mean 0):

    >>> tab = pd.DataFrame({"source_set": "v1", "target_set": "v2", "gap": [0.05, -0.02, 0.03],
    ...                     "matched_gap": [0.01, -0.03, 0.02], "fraction_unmatched": [0.1, 0.2, 0.3],
    ...                     "matched_gap_std": [0.001, 0.002, 0.004]})
    >>> s = summary({("v2", "prob"): tab}).loc["v2 / prob"]
    >>> s["source"], float(round(s["mean accuracy gap (points)"], 6)), abs(float(round(s["mean matched gap (points)"], 6)))
    ('v1', 2.0, 0.0)
    >>> float(round(s["mean fraction unmatched"], 6)), float(round(s["models with narrower matched gap"], 3))
    (0.2, 0.667)
    """
    share = narrower(tables)
    rows = {}
    for (t, by), tab in tables.items():
        r = roles(tab)
        rows[f"{t} / {by}"] = {
            "source": r["source"],
            "target": r["target"],
            "mean accuracy gap (points)": 100 * tab.gap.mean(),
            "mean matched gap (points)": 100 * tab.matched_gap.mean(),
            "mean fraction unmatched": tab.fraction_unmatched.mean(),
            "models with narrower matched gap": share[t][by],
            "largest std of matched gap over runs (points)": 100 * tab.matched_gap_std.max(),
        }
    return pd.DataFrame(rows).T.infer_objects()


def case_counts(tables: dict, method: str = "label_and_prob") -> pd.DataFrame:
    """How many models show each pattern Anzaku et al. report, per second set (§1 Figure 1, §4.2).

    The second set is the replicated one whichever role it plays: when it is the larger set it is the
    source, and "less accurate on the second set" is then a negative gap (source − target).

    Parameters
    ----------
    tables : dict
        :func:`~shifteval.matching.study.evaluate` output.
    method : {"label_and_prob", "prob"}
        Algorithm 1 or Algorithm 2 (only ``narrower`` depends on it).

    Returns
    -------
    pandas.DataFrame
        One row per second set: ``models``; ``drop`` (less accurate on the second set than on the
        first), ``less_confident`` (lower mean predicted probability there), ``both`` (the two at once)
        and ``narrower`` (|matched gap| < |accuracy gap|), each a number of models.

    Examples
    --------
    Two models: the first loses 4 points and 0.1 of confidence on ``b`` and matching narrows its gap;
    the second gains on ``b``, which is the larger set here (the source):

    >>> t = pd.DataFrame({"gap": [0.04, 0.02], "matched_gap": [0.01, 0.03], "source_role": ["first", "second"],
    ...                   "conf_source": [0.9, 0.8], "conf_target": [0.8, 0.7]})
    >>> case_counts({("b", "prob"): t}, "prob").loc["b"].to_dict()
    {'models': 2, 'drop': 1, 'less_confident': 1, 'both': 1, 'narrower': 1}
    """
    rows = {}
    for (t, by), tab in tables.items():
        if by != method:
            continue
        # +1 where the first set is the source: source − target is then first − second
        sign = np.where(tab.source_role == "first", 1, -1)
        drop = sign * tab.gap.to_numpy(dtype=float) > 0
        less_confident = sign * (tab.conf_source - tab.conf_target).to_numpy(dtype=float) > 0
        rows[t] = {
            "models": len(tab),
            "drop": int(drop.sum()),
            "less_confident": int(less_confident.sum()),
            "both": int((drop & less_confident).sum()),
            "narrower": int((tab.matched_gap.abs() < tab.gap.abs()).sum()),
        }
    if not rows:
        raise ValueError(f"no table of method {method!r} in {sorted(tables)}")
    return pd.DataFrame.from_dict(rows, orient="index")


def run_noise(tables: dict, n_runs: int) -> pd.DataFrame:
    """The standard error of each matched gap over the matching runs, beside the sampling error of accuracy.

    Anzaku et al. average 10 runs and leave out error bars because "the standard errors over these runs
    were negligible" (§4.1); their accuracies carry no error bars either. Here the runs' standard error
    of a model's matched gap, ``std / sqrt(n_runs)``, is set beside the binomial standard error of the
    model's accuracy on the target set, ``sqrt(a (1 − a) / n)``: the sampling error every plotted
    accuracy already carries unshown.

    Parameters
    ----------
    tables : dict
        :func:`~shifteval.matching.study.evaluate` output.
    n_runs : int
        Matching runs behind each matched gap (at least 2).

    Returns
    -------
    pandas.DataFrame
        One row per (second set, method, model): ``se_runs`` and ``se_sampling`` (points) and
        ``negligible`` (``se_runs < se_sampling``).

    Examples
    --------
    A matched gap whose runs spread by 1 point (standard error 0.32 over 10 runs) on a target of 2,000
    images at 85% accuracy (sampling error 0.80 points):

    >>> t = pd.DataFrame({"matched_gap_std": [0.01], "acc_target": [0.85], "n_target": [2000]}, index=["m"])
    >>> run_noise({("b", "prob"): t}, 10).round(2).to_dict(orient="records")
    [{'second_set': 'b', 'method': 'prob', 'model': 'm', 'se_runs': 0.32, 'se_sampling': 0.8, 'negligible': True}]
    """
    if int(n_runs) < 2:
        raise ValueError(f"a standard error over runs needs n_runs >= 2, got {n_runs}")
    frames = []
    for (t, by), tab in tables.items():
        acc = tab.acc_target.to_numpy(dtype=float)
        se_runs = 100 * tab.matched_gap_std.to_numpy(dtype=float) / np.sqrt(int(n_runs))
        se_sampling = 100 * np.sqrt(acc * (1 - acc) / tab.n_target.to_numpy(dtype=float))
        frames.append(
            pd.DataFrame({
                "second_set": t, "method": by, "model": list(tab.index),
                "se_runs": se_runs, "se_sampling": se_sampling, "negligible": se_runs < se_sampling,
            })
        )  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def confidence_separates(subsets: dict) -> dict:
    """Per subset, whether its correct predictions are on average more confident than its wrong ones.

    Anzaku et al. read their Figures 5 and 8 as a model "fairly consistent with respect to the
    correlation between the uncertainty values it generates and the accuracy for its predictions" in
    every subset (§4.2): accuracy rises with confidence in the matched source, the matched target and
    the unmatched target.

    Parameters
    ----------
    subsets : dict
        ``{name: (confidence, correct)}``, as :func:`~shifteval.matching.study.fig5_subsets` gives them.

    Returns
    -------
    dict
        ``{name: bool}`` for each subset holding both correct and wrong predictions (a subset without
        one of them has no such correlation and is left out).

    Examples
    --------
    >>> confidence_separates({"a": (np.array([0.9, 0.6, 0.8]), np.array([True, False, True])),
    ...                       "b": (np.array([0.9]), np.array([True]))})
    {'a': True}
    """
    out = {}
    for name, (conf, correct) in subsets.items():
        conf, correct = np.asarray(conf, dtype=float), np.asarray(correct, dtype=bool)
        if correct.any() and (~correct).any():
            out[name] = bool(conf[correct].mean() > conf[~correct].mean())
    return out


def _join(items) -> str:
    return "; ".join(items)


def gap_facts(tables: dict, first_target: str, large_gap: float = 0.02) -> dict:
    """Numbers the chapter states about the zoo-wide tables (Figures 1, 3, 6 and the summary).

    Parameters
    ----------
    tables : dict
        :func:`~shifteval.matching.study.evaluate` output.
    first_target : str
        The second set the chapter looks at first.
    large_gap : float
        Second sets whose mean accuracy gap exceeds this (in absolute value) have a "large" gap.

    Returns
    -------
    dict
        Counts of models less accurate / less confident on the first target and less accurate on the
        source than on TopImages, the sets with large and small gaps, shares of narrower matched gaps
        (``min_share_large``, ``min_share_small``, ``max_share_small``, as text ``shares_large``, ``shares_small``), mean
        fractions unmatched per algorithm (``fu_alg1``, ``fu_alg2``, lists in target order), the
        median and largest run-to-run SD of matched gaps and the median narrowing (points), and the
        Spearman correlation between source accuracy and fraction unmatched on the first target
        (Algorithm 1, ``rho_unmatched``).

    Examples
    --------
    One model, 8.3 points less accurate on the second set ``b``, whose gap is therefore "large":

    >>> from shifteval.matching.study import evaluate
    >>> from shifteval.zoo.store import Predictions as P
    >>> p = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.2, 0.8]])
    >>> pairs = {"m": (P("m", "a", np.array([0, 1, 0, 0]), p, {}), P("m", "b", np.array([0, 1, 1]), p[:3], {}))}
    >>> f = gap_facts(evaluate({"b": pairs}, "a", n_runs=2), "b")
    >>> f["n"], f["n_acc"], f["big"], f["n_small"], f["shares_large"]
    (1, 1, 'b', 0, 'b/label_and_prob: 0%; b/prob: 0%')
    """
    targets = list(dict.fromkeys(t for t, _ in tables))
    alg1 = {t: tables[(t, "label_and_prob")] for t in targets}
    tab0, share = alg1[first_target], narrower(tables)
    big = [t for t in targets if abs(alg1[t].gap.mean()) > large_gap]
    small = [t for t in targets if t not in big]
    sd = 100 * np.concatenate([tab.matched_gap_std.to_numpy(dtype=float) for tab in tables.values()])
    fu = {(t, by): tab.fraction_unmatched.mean() for (t, by), tab in tables.items()}
    return {
        "t": first_target, "n": len(tab0), "n_acc": int((tab0.gap > 0).sum()),
        "n_conf": int((tab0.conf_source > tab0.conf_target).sum()),
        "n_top_easier": int((alg1["topimages"].gap < 0).sum()) if "topimages" in alg1 else 0,
        "big": ", ".join(big), "small": ", ".join(small), "n_big": len(big), "n_small": len(small),
        "min_share_large": min((share[t][by] for t in big for by in share[t]), default=np.nan),
        "min_share_small": min((share[t][by] for t in small for by in share[t]), default=np.nan),
        "max_share_small": max((share[t][by] for t in small for by in share[t]), default=np.nan),
        "shares_large": _join(f"{t}/{by}: {share[t][by]:.0%}" for t in big for by in share[t]),
        "shares_small": _join(f"{t}/{by}: {share[t][by]:.0%}" for t in small for by in share[t]),
        "gaps_small": ", ".join(f"{abs(100 * alg1[t].gap.mean()):.2f}" for t in small),
        "fu_alg1": [fu.get((t, "label_and_prob"), np.nan) for t in targets],
        "fu_alg2": [fu.get((t, "prob"), np.nan) for t in targets],
        "fus": _join(f"{t}: {fu.get((t, 'label_and_prob'), np.nan):.4f} vs {fu.get((t, 'prob'), np.nan):.4f}" for t in targets),
        "sd_median": float(np.nanmedian(sd)), "sd_max": float(np.nanmax(sd)),
        "shrink": float(100 * (tab0.gap.abs() - tab0.matched_gap.abs()).median()),
        "rho_unmatched": float(stats.spearmanr(tab0.acc_source, tab0.fraction_unmatched).statistic) if len(tab0) > 2 else np.nan,
    }  # fmt: skip


def quant_facts(quant: pd.DataFrame, eps: float) -> dict:
    """Numbers the chapter states about :func:`~shifteval.matching.study.quantisation_table`.

    Parameters
    ----------
    quant : pandas.DataFrame
        :func:`~shifteval.matching.study.quantisation_table` output.
    eps : float
        The working ε: models whose distinct probabilities are more than 2ε apart are "grid" models.

    Returns
    -------
    dict
        Group sizes and names by ``kind``, the smallest fraction unmatched at the near-zero ε among
        continuous models (``c_min``) and the largest among quantised ones (``q_max``), the range among
        saturating ones (``s_min``, ``s_max``; NaN when there are none), the same four rounded outwards to
        whole percents for sentences that state them as bounds (``c_min_pct``, ``s_min_pct`` down;
        ``q_max_pct``, ``s_max_pct`` up), the grid models and the largest difference of their fractions
        unmatched at the two ε (``grid_diff``).

    Examples
    --------
    Two continuous models and a 2-NN whose two probability values are 0.5 apart (a "grid" model):

    >>> q = pd.DataFrame({"kind": ["continuous", "continuous", "quantised"], "min_spacing": [1e-5, 2e-5, 0.5],
    ...                   "fraction_unmatched": [0.01, 0.02, 0.0], "fraction_unmatched_small": [0.95, 0.9, 0.0]},
    ...                  index=["resnet", "vit", "knn"])
    >>> f = quant_facts(q, 0.005)
    >>> f["nc"], f["quantised"], f["saturating"], f["c_min"], f["grid"], f["grid_diff"]
    (2, 'knn', 'none', 0.9, 'knn', 0.0)
    >>> round(quant_facts(q.assign(fraction_unmatched_small=[0.979, 0.99, 0.211]), 0.005)["c_min_pct"], 2)
    0.97

    :func:`shifteval.matching.study.quantisation_table`'s example also runs this function.
    """
    kinds = {k: quant[quant.kind == k] for k in ("continuous", "quantised", "saturating")}
    grid = quant[quant.min_spacing > 2 * eps]
    cont, quantised = kinds["continuous"], kinds["quantised"]
    facts: dict[str, Any] = {
        "n": len(quant), "nc": len(cont), "nq": len(quantised), "ns": len(kinds["saturating"]),
        "quantised": ", ".join(quantised.index), "saturating": ", ".join(kinds["saturating"].index) or "none",
        "c_min": float(cont.fraction_unmatched_small.min()) if len(cont) else np.nan,
        "q_max": float(quantised.fraction_unmatched_small.max()) if len(quantised) else np.nan,
        "s_min": float(kinds["saturating"].fraction_unmatched_small.min()) if len(kinds["saturating"]) else np.nan,
        "s_max": float(kinds["saturating"].fraction_unmatched_small.max()) if len(kinds["saturating"]) else np.nan,
        "grid": ", ".join(grid.index) or "no model", "n_grid": len(grid),
        "grid_diff": float((grid.fraction_unmatched - grid.fraction_unmatched_small).abs().max()) if len(grid) else np.nan,
        "grid_fus": ", ".join(f"{f:.3f}" for f in grid.fraction_unmatched),
    }  # fmt: skip
    # lower bounds rounded down and upper bounds up to whole percents: "at least 97%" of 0.979, never "98%"
    facts |= {f"{k}_pct": float(np.floor(facts[k] * 100) / 100) for k in ("c_min", "s_min")}
    facts |= {f"{k}_pct": float(np.ceil(facts[k] * 100) / 100) for k in ("q_max", "s_max")}
    return facts


def sweep_facts(sweep: pd.DataFrame, eps: float) -> dict:
    """Numbers the chapter states about :func:`~shifteval.matching.study.eps_sweep`.

    Algorithm 1's fraction unmatched along ε (``fu``, ``fu0`` at the smallest, ``fu1`` at the largest, whether it
    never rises: ``monotone``) and Algorithm 2's accuracy gap ``g`` and matched gap at the largest ε
    (``m1``) and at the ε nearest ``eps`` (``m0``), in points.

    Parameters
    ----------
    sweep, eps : pandas.DataFrame, float
        :func:`~shifteval.matching.study.eps_sweep` output and the working ε.

    Returns
    -------
    dict

    Examples
    --------
    Algorithm 1 leaves 30%, 10% and 0% of the targets unmatched at ε = 0.001, 0.005 and 0.05; Algorithm
    2's matched gap shrinks from 3 to 1 point against an accuracy gap of 5 points:

    >>> sweep = pd.DataFrame({"eps": [0.001, 0.005, 0.05] * 2, "method": ["label_and_prob"] * 3 + ["prob"] * 3,
    ...                       "gap": [0.05] * 6, "matched_gap": [0.0] * 3 + [0.03, 0.02, 0.01],
    ...                       "fraction_unmatched": [0.3, 0.1, 0.0] + [0.0] * 3})
    >>> f = sweep_facts(sweep, 0.005)
    >>> [float(round(f[k], 6)) for k in ("fu0", "fu1", "g", "m0", "m1")], f["monotone"]
    ([0.3, 0.0, 5.0, 2.0, 1.0], True)

    :func:`shifteval.matching.study.eps_sweep`'s example also runs this function.
    """
    a1 = sweep[sweep.method == "label_and_prob"].sort_values("eps")
    a2 = sweep[sweep.method == "prob"].sort_values("eps")
    fu = a1.fraction_unmatched.to_numpy()
    g = 100 * a2.gap.iloc[0]
    return {
        "fu": fu.tolist(), "fu0": fu[0], "fu1": fu[-1], "e0": a1.eps.iloc[0], "e1": a1.eps.iloc[-1],
        "monotone": bool((fu[1:] <= fu[:-1] + 1e-9).all()), "g": g,
        "m1": 100 * a2.matched_gap.iloc[-1], "m0": 100 * a2.matched_gap.iloc[int((a2.eps - eps).abs().argmin())],
    }  # fmt: skip
