"""The your-replication chapter on folders whose numbers make its comparisons meaningless.

A user's folder can hold models that are all the same, two sets on which no model's accuracy differs,
predictions that Algorithm 1 matches without leaving an image out, or two models only. The chapter must
run on each: every sentence is checked or left out, none raises, and where a comparison has no meaning
(a ratio of two zeros, a gap of 0 to narrow) the page states what the run found instead. These tests run
the chapter's code cells in this process, with small bootstraps (seconds), rather than through papermill.
"""

import math

import jupytext
import numpy as np
import pytest
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shifteval.book import results
from shifteval.book.findings import VERDICTS
from shifteval.yourrep import analysis, export, folder, report

CHAPTER = ROOT / "notebooks" / "your-replication.py"
FAST = {"n_boot": 40, "n_boot_images": 20, "n_runs": 2, "n_boot_selection": 2}
K = 3


def run_chapter(data_dir, monkeypatch) -> dict:
    """Execute the chapter's code cells on ``data_dir`` (not strict) and return its namespace."""
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(ROOT)  # the claim sentences are read from the chapter's source
    monkeypatch.delenv("SHIFTEVAL_RESULTS", raising=False)
    monkeypatch.delenv("SHIFTEVAL_STRICT_CLAIMS", raising=False)
    nb = jupytext.read(CHAPTER, fmt="py:percent")
    ns: dict = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        exec(compile(cell.source, str(CHAPTER), "exec"), ns)  # noqa: S102 - the chapter's own source
        if "parameters" in cell.metadata.get("tags", []):
            ns.update(FAST, data_dir=str(data_dir))
    import matplotlib.pyplot as plt

    plt.close("all")
    return ns


def _probs(pred: np.ndarray, conf: float | np.ndarray) -> np.ndarray:
    """Softmax rows that put ``conf`` on the predicted class and share the rest."""
    p = np.full((len(pred), K), 0.0) + ((1 - np.asarray(conf, float)) / (K - 1))[..., None]
    p[np.arange(len(pred)), pred] = conf
    return p


def _votes(n_orig: int, n_new: int) -> dict:
    return {
        "original": (np.arange(n_orig) % 5, np.full(n_orig, 4)),
        "new": (np.arange(n_new) % 5, np.full(n_new, 4)),
    }


def identical_folder(root, n_models=3, votes=True):
    """Models that are all the same, on a new set that is the original set again: no gap anywhere."""
    y = np.arange(30) % K
    pred = np.where(np.arange(30) % 4 == 0, (y + 1) % K, y)
    p = _probs(pred, np.linspace(0.5, 0.95, 30))
    preds = {f"m{i}": {"original": {"probs": p}, "new": {"probs": p}} for i in range(n_models)}
    return export.write_folder(root, {"original": y, "new": y}, preds, _votes(30, 30) if votes else None)


def all_matched_folder(root, n_models=4):
    """Models of different skill whose probabilities take one value per model: Algorithm 1 matches every
    target image (every new image has unused partners of the same predicted class and probability)."""
    y_orig, y_new = np.arange(60) % K, (np.arange(30) + 1) % K
    preds = {}
    for i in range(n_models):
        right_o, right_n = np.arange(60) < 30 + 6 * i, np.arange(30) < 10 + 4 * i
        pred_o = np.where(right_o, y_orig, (y_orig + 1) % K)
        pred_n = np.where(right_n, y_new, (y_new + 1) % K)
        conf = 0.6 + 0.05 * i
        preds[f"m{i}"] = {"original": {"probs": _probs(pred_o, conf)}, "new": {"probs": _probs(pred_n, conf)}}
    return export.write_folder(root, {"original": y_orig, "new": y_new}, preds, _votes(60, 30))


def _sentences(ns: dict) -> tuple[dict, dict]:
    """The chapter's checked claims by id, and its findings by id."""
    R = ns["R"]
    return {c.id: c for c in R.claims}, {f.id: f for f in R.findings}


def _every_sentence_checked_or_left_out(ns: dict) -> None:
    R = ns["R"]
    assert set(R.templates) <= set(R.spans), sorted(set(R.templates) - set(R.spans))
    for c in R.claims:
        assert isinstance(c.holds, bool) and c.text, c.id
    assert len(R.findings) >= 4 and all(f.verdict in VERDICTS for f in R.findings)


def test_every_model_identical_and_no_gap(tmp_path, monkeypatch):
    ns = run_chapter(identical_folder(tmp_path / "same"), monkeypatch)
    _every_sentence_checked_or_left_out(ns)
    claims, findings = _sentences(ns)
    assert ns["M"]["fu1"] == 0 == ns["M"]["fu2"] and ns["M"]["n_gap"] == 0
    # the ratio of two zeros and a gap of 0 to narrow: what the run found is said instead
    assert ns["R"].spans["algorithm-2-fewer-unmatched"] == "" and claims["none-unmatched"].holds
    assert ns["R"].spans["matching-narrows-the-gap"] == "" and claims["no-gap-to-narrow"].holds
    assert claims["verdict-drop"].holds and "does not change" in claims["verdict-drop"].text
    assert findings["matched-gap-consistently-narrower"].verdict == "not testable"
    assert findings["fig1-slope-above-one"].verdict == "not testable"  # one original accuracy: no slope
    assert findings["headline-bias-explains-most-of-gap"].verdict == "not testable"  # no drop to explain
    assert findings["s3.3-every-model-drops"].verdict == "not reproduced"
    assert all(c.holds for c in claims.values()), [c.id for c in claims.values() if not c.holds]


def test_algorithm_1_leaves_nothing_unmatched(tmp_path, monkeypatch):
    ns = run_chapter(all_matched_folder(tmp_path / "matched"), monkeypatch)
    _every_sentence_checked_or_left_out(ns)
    claims, findings = _sentences(ns)
    assert ns["M"]["fu1"] == 0 == ns["M"]["fu2"] and ns["M"]["n_gap"] == 4
    assert claims["none-unmatched"].holds and ns["R"].spans["algorithm-2-fewer-unmatched"] == ""
    assert "matching-narrows-the-gap" in claims and "fig1-slope-above-one" in findings
    assert findings["s3.3-every-model-drops"].verdict == "reproduced"


def test_two_models_only(tmp_path, monkeypatch):
    root = all_matched_folder(tmp_path / "two", n_models=2)
    ns = run_chapter(root, monkeypatch)
    _every_sentence_checked_or_left_out(ns)
    claims, findings = _sentences(ns)
    assert ns["ok"]["linear_fits"] == "a fit needs at least 3 models; the folder has 2"
    assert ns["R"].spans["slope-vs-paper"] == "" and ns["R"].spans["images-widen-the-interval"] == ""
    assert findings["fig1-slope-above-one"].verdict == "not testable"
    assert "a fit needs at least 3 models" in findings["fig1-slope-above-one"].criterion.rule
    assert claims["verdict-drop"].holds


def test_the_worked_examples_tiny_folder_states_every_comparison(tmp_path, monkeypatch):
    """A folder where every analysis has something to compare: no sentence is replaced by a finding."""
    from shifteval.yourrep import example

    d = example.tiny(votes=True, unlabeled=True)
    preds = {m: {s: {"probs": d.probs[s][m]} for s in ("original", "new", "unlabeled")} for m in d.models}
    ns = run_chapter(export.write_folder(tmp_path / "tiny", d.labels, preds, d.votes), monkeypatch)
    _every_sentence_checked_or_left_out(ns)
    assert ns["R"].spans["none-unmatched"] == "" and ns["R"].spans["no-gap-to-narrow"] == ""
    assert {f.id for f in ns["R"].findings} == {
        "s3.3-every-model-drops",
        "fig1-slope-above-one",
        "matched-gap-consistently-narrower",
        "s51-naive-underestimates",
        "headline-bias-explains-most-of-gap",
        "softmax-0.9-errs-less-than-0.8",
    }


# -- the report's functions on degenerate analyses ---------------------------------------------------------

EDGE = st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e-300, math.nan])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(EDGE, EDGE, EDGE), min_size=1, max_size=4))
def test_report_facts_and_the_chapters_tests_never_raise_on_edge_values(rows):
    """matching_facts and drop_facts on gaps, matched gaps and fractions unmatched of 0, equal, NaN: the tests
    the chapter builds from them return checks (not exceptions) whose words render."""
    import pandas as pd

    from shifteval.book.claims import above, at_most, below, equal, within

    gap, mgap, fu = (np.array(c, float) for c in zip(*rows, strict=True))
    one = pd.DataFrame(
        {
            "gap": gap,
            "matched_gap": mgap,
            "fraction_unmatched": fu,
            "matched_gap_std": np.full(len(gap), math.nan),
        }
    ).assign(source_set="original")
    M = report.matching_facts({"label_and_prob": one, "prob": one})
    D = report.drop_facts(
        pd.DataFrame({"gap": gap, "acc_original": 0.5}, index=[f"m{i}" for i in range(len(gap))])
    )
    R = results.Results(path=None, strict=False)
    tests = [
        below(M["fu2"], M["fu1"], by="much"),
        at_most(max(M["fu1"], M["fu2"]), 0),
        equal(M["n_gap"], 0),
        above(D["n_drop"], D["n"] / 2),
        within(M["mgap1"], *report.effect_range(M["gap"], M["effect"])),
    ]
    for i, t in enumerate(tests):
        assert isinstance(t.holds, bool) and not (t.found and t.holds)
        claim = R.claim(f"t{i}", "{test} {test:fewer} {test.a}", t, **M)
        assert isinstance(claim.holds, bool) and claim.text
    assert D["moves"] in ("drops", "rises", "does not change")


def test_finite_tells_a_testable_finding():
    assert report.finite({"a": 1.0, "b": np.float64(2.0)}, "a", "b")
    assert not report.finite({"a": math.nan}, "a") and not report.finite({}, "a")
    assert not report.finite({"a": math.inf}, "a")


@pytest.mark.parametrize(
    ("before", "after", "word"),
    [
        (0.0, 0.0, "does not change"),
        (0.0, 2.0, "widens"),
        (0.0, -2.0, "widens"),
        (3.0, 3.0, "does not change"),
    ],
)
def test_the_word_for_a_gap_of_zero(before, after, word):
    assert report.effect(before, after) == word
    lo, hi = report.effect_range(before, word)
    assert lo <= after <= hi
    if before == 0:  # no gap cannot be narrowed or reversed
        for other in ("narrows", "reverses"):
            lo, hi = report.effect_range(before, other)
            assert lo > hi


def test_a_model_matched_to_itself_leaves_nothing_unmatched(tmp_path):
    d = folder.load_folder(identical_folder(tmp_path / "same", votes=False))
    m = analysis.matched_gaps(d, n_runs=1)
    facts = report.matching_facts(m)
    assert facts["fu1"] == 0 and facts["fu2"] == 0 and facts["n_gap"] == 0


# -- the findings it shares with the paper chapters -----------------------------------------------------------


def _declared():
    import ast

    from test_claims import _calls, _keyword, _literal, _literal_id, _strings

    names = _strings("your-replication")
    for call in _calls("your-replication", "finding"):
        fields = {k: _keyword(call, k) for k in ("paper", "where", "statement", "criterion", "section")}
        literal = {k: _literal(fields[k], names) for k in ("paper", "where", "statement", "section")}
        kinds = fields["criterion"]
        kinds = (kinds.body, kinds.orelse) if isinstance(kinds, ast.IfExp) else (kinds,)
        yield _literal_id(call), literal, {k.func.id for k in kinds if isinstance(k, ast.Call)}


def test_findings_are_declared_with_a_criterion_and_quoted_from_their_paper():
    """At least four of the papers' findings, each quoted verbatim with its place and a criterion of the
    findings module (the same ids as the paper chapters that test them)."""
    import re

    from test_claims import PAPERS, SEEDS, _place_pattern, normalise

    from shifteval.book.findings import CRITERIA

    declared = list(_declared())
    headings = re.findall(r"^# #+ (.+)$", CHAPTER.read_text(encoding="utf-8"), re.MULTILINE)
    assert len(declared) >= 4 and len({fid for fid, _, _ in declared}) == len(declared)
    for fid, fields, kinds in declared:
        assert kinds and kinds <= set(CRITERIA), (fid, kinds)
        assert fields["paper"] in PAPERS and fields["section"] in headings, fid
        if not SEEDS.is_dir():
            continue
        raw = (SEEDS / PAPERS[fields["paper"]]).read_text(encoding="utf-8")
        for place in re.split(r"\s*(?:,|;| and )\s*", fields["where"]):
            assert re.search(_place_pattern(place), raw), (fid, place)
        quoted = [q for q in re.split(r"\s*(?:…|\.\.\.)\s*", fields["statement"]) if q.strip()]
        assert all(normalise(q) in normalise(raw) for q in quoted), fid
