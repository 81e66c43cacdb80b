"""Claims cannot be weak: every claim's test is a comparison helper, and every citation matches its paper.

Read from the chapters' sources (no execution): each ``R.claim`` passes its condition through a helper
of :mod:`shifteval.book.claims` (a bare condition only through ``fact(..., why=...)``, at most one claim
in ten), and each ``R.cite`` quote, quoted number and place is found in the paper's text in
``../shared/seeds/`` (skipped where that folder is absent).
"""

import ast
import re
import unicodedata

import pytest
from conftest import ROOT, SHARED

from shifteval.book import claims as C
from shifteval.book.results import Results

HELPERS = {"above", "below", "at_least", "at_most", "within", "outside", "about", "equal", "monotone"}
HELPERS |= {"ranks_first", "every"}
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.py"))
PENDING: set[str] = set()  # chapters whose claims are still being converted (none)

SEEDS = SHARED / "seeds"
PAPERS = {
    "anzaku2022principled": "000_c022e1a473376782.txt",
    "engstrom2020bias": "001_6cee60de97d0f5a0.txt",
    "recht2019imagenet": "002_d79a84a2d862f6d8.txt",
    "zhu2023labelfree": "003_153e3d2a01f064c4.txt",
    "sikar2024mlm": "004_7476bd4484858dcc.txt",
}


def _calls(chapter: str, method: str):
    tree = ast.parse((ROOT / "notebooks" / f"{chapter}.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == method
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "R"
        ):
            yield node


def _name(node) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else type(node).__name__


def _test_kind(node) -> str:
    """'helper', 'fact' or what the condition is instead (for the failure message)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
        kinds = {_test_kind(node.left), _test_kind(node.right)}
        return "fact" if "fact" in kinds else ("helper" if kinds == {"helper"} else "mixed")
    if isinstance(node, ast.IfExp):  # a test that depends on what the run has (e.g. no saturating model)
        kinds = {_test_kind(node.body), _test_kind(node.orelse)}
        return "fact" if "fact" in kinds else ("helper" if kinds == {"helper"} else "mixed")
    if isinstance(node, ast.Call) and _name(node) in HELPERS:
        return "helper"
    if isinstance(node, ast.Call) and _name(node) == "fact":
        has_why = any(k.arg == "why" for k in node.keywords) or len(node.args) == 2
        return "fact" if has_why else "fact without why"
    return ast.unparse(node)[:80]


def _condition(call: ast.Call):
    position = 2 if call.func.attr == "claim" else 1  # R.check(id, test): its words are in the markdown
    if len(call.args) > position:
        return call.args[position]
    return next(k.value for k in call.keywords if k.arg == "holds")


def _claims(chapter: str):
    """Every claim of a chapter: stated in code (``R.claim``) or in its markdown (``R.check``)."""
    yield from _calls(chapter, "claim")
    yield from _calls(chapter, "check")


@pytest.mark.parametrize(
    "chapter",
    [
        pytest.param(c, marks=pytest.mark.xfail(reason="converted in its own change", strict=False))
        if c in PENDING
        else c
        for c in CHAPTERS
    ],
)
def test_every_claim_is_tested_by_a_helper(chapter):
    kinds = {_literal_id(call): _test_kind(_condition(call)) for call in _claims(chapter)}
    assert len(kinds) >= 6, f"{chapter}: only {len(kinds)} claims"
    weak = {k: v for k, v in kinds.items() if v not in ("helper", "fact")}
    assert not weak, f"{chapter}: claims whose condition is not a helper or fact(..., why=...): {weak}"
    bare = [k for k, v in kinds.items() if v == "fact"]
    assert 10 * len(bare) <= len(kinds), (
        f"{chapter}: {len(bare)} bare conditions of {len(kinds)} claims: {bare}"
    )


BUILTINS = {"float", "int", "abs", "min", "max", "sum", "len", "round", "bool", "str", "fact", *HELPERS}


def _run_inputs(node) -> set[str]:
    """Names in a condition that can carry a value of the run (not a helper or a builtin)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id not in BUILTINS}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_claim_is_tested_on_literals_alone(chapter):
    literal = [
        f"{_literal_id(call)}: {ast.unparse(_condition(call))[:80]}"
        for call in _claims(chapter)
        if not _run_inputs(_condition(call))
    ]
    assert not literal, (
        f"{chapter}: claims whose test has no input from the run (every operand a literal): {literal}"
    )


def test_the_literal_guard_sees_a_literal_test():
    literal, computed = (
        ast.parse(src, mode="eval").body for src in ("equal(0, 0) & above(1.0, 0.5)", "above(x, 0.5)")
    )
    assert not _run_inputs(literal) and _run_inputs(computed) == {"x"}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_sentence_of_the_markdown_is_checked_once(chapter):
    """A claim span of the prose with no ``R.check`` would reach the page unformatted and untested; a check
    whose span is gone tests a sentence nobody reads."""
    import jupytext

    from shifteval.book import prose

    nb = jupytext.read(ROOT / "notebooks" / f"{chapter}.py")
    written = list(prose.templates(nb))
    checked = [_literal_id(call) for call in _calls(chapter, "check")]
    assert sorted(written) == sorted(checked), (
        f"{chapter}: spans never checked {sorted(set(written) - set(checked))}, "
        f"checks without a span {sorted(set(checked) - set(written))}, "
        f"checked twice {sorted({c for c in checked if checked.count(c) > 1})}"
    )
    omitted = {ast.literal_eval(arg) for call in _calls(chapter, "omit") for arg in call.args}
    assert omitted <= set(written), (
        f"{chapter}: R.omit of sentences not in the markdown: {omitted - set(written)}"
    )


def _literal_id(call: ast.Call) -> str:
    node = call.args[0] if call.args else next(k.value for k in call.keywords if k.arg == "id")
    return ast.literal_eval(node) if isinstance(node, ast.Constant) else ast.unparse(node)


def test_a_claim_records_its_test_and_its_words_carry_the_margin():
    R = Results(path=None, strict=False)
    c = R.claim(
        "x", "The error is {test:smaller than} the baseline's ({a:.2f}).", C.below(0.1, 0.4, by="much"), a=0.4
    )
    assert c.text == "The error is much smaller than the baseline's (0.40)."
    assert R.as_dict()["claims"][0]["test"] == "below(0.1, 0.4, by='much' (x2))"
    weak = R.claim("y", "{test[0]:above} 1 and {test[1]}.", C.above(1.2, 1) & C.monotone([1, 2, 1]))
    assert not weak.holds and weak.text == "above 1 and rises."
    assert R.as_dict()["claims"][1]["test"] == "above(1.2, 1) & monotone([1, 2, 1], 'increasing')"
    assert R.claim("z", "Bare.", 3 > 2).as_record()["test"] == "bool"
    why = "a property of a whole table"
    assert R.claim("w", "Bare.", C.fact(True, why=why)).as_record() == {
        "id": "w",
        "text": "Bare.",
        "holds": True,
        "test": "bool",
        "why": why,
    }


def test_margins_make_the_words_true():
    # "replication pool harder" at 0.401 against 0.400 is not a difference the words can carry
    assert not C.above(0.401, 0.400, by=0.01).holds
    assert C.below(0.49, 1.0, by="much").holds and not C.below(0.51, 1.0, by="much").holds
    assert not C.above(1.4, 1.0, by="well").holds and C.above(1.5, 1.0, by="well").holds
    assert C.about(1.1, 1.0).holds and not C.about(1.11, 1.0).holds
    assert not C.monotone([1, 2, 2]).holds
    assert not C.ranks_first({"a": 1.0, "b": 1.0}, "a").holds  # a tie is not a first place
    # a named margin compares magnitudes: a negative value is not one, and two zeros have no ratio
    assert C.above(0.5, -1.0, by="well").found == "b = -1 is negative, not a magnitude"
    assert not C.below(0.0, 0.0, by="much").holds and C.below(0.0, 0.0, by="much").found
    assert (
        C.below(0.0, 0.3, by="much").holds and C.above(0.3, 0.0, by="much").holds
    )  # zero against a magnitude
    with pytest.raises(ValueError, match="unknown margin"):
        C.above(0.5, 1.0, by="hugely")
    assert not C.monotone([1, 2]).holds  # "grows with" tested on two points is not a trend
    with pytest.raises(ValueError, match="reason"):
        C.fact(True, why="")


def test_reproducing_page_lists_every_named_margin():
    page = (ROOT / "book" / "reproducing.md").read_text(encoding="utf-8")
    for name, margin in C.MARGINS.items():
        assert f"`{name}`" in page and f"{margin.factor:g}" in page, name
    assert f"{C.ABOUT_REL:.0%}" in page


def normalise(text: str) -> str:
    """Text compared as words: ligatures, dashes, quotes, hyphenation at line ends and whitespace evened out."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"[\u2010-\u2015\u2212]", "-", text)
    text = re.sub(r"[\u2018\u2019\u201c\u201d`]", "'", text).replace('"', "'")
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def _place_pattern(where: str) -> str:
    where = where.strip()
    if where.startswith("§"):
        return r"(^|\n)\s*" + re.escape(where[1:].strip()) + r"\.?\s+[A-Z]"
    m = re.match(r"(App\.|Appendix)\s*(\S+)", where)
    if m:
        return r"(^|\n)\s*" + re.escape(m.group(2).rstrip(".")) + r"\.?\s+[A-Z]"
    m = re.match(r"(Table|Figure|Fig\.|Algorithm)\s*(\d+)", where)
    if m:
        word = {"Fig.": "Figure"}.get(m.group(1), m.group(1))
        return rf"{word}\s*{m.group(2)}\b"
    m = re.match(r"Eq\.\s*\((\d+)\)", where)
    if m:
        return rf"\({m.group(1)}\)"
    raise AssertionError(f"unrecognised place {where!r}")


def _strings(chapter: str) -> dict:
    """The chapter's names bound to a literal (``quote = "..."``, a list of strings), so a citation may pass one."""
    tree = ast.parse((ROOT / "notebooks" / f"{chapter}.py").read_text(encoding="utf-8"))
    names = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                names[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return names


def _literal(node, names: dict):
    """A citation's field: a literal, a name bound to one, or their sum (lists of printed numbers)."""
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal(node.left, names) + _literal(node.right, names)
    return ast.literal_eval(node)


def _citations():
    for chapter in CHAPTERS:
        names = _strings(chapter)
        for call in _calls(chapter, "cite"):
            args = [_literal(a, names) for a in call.args]
            kw = {k.arg: _literal(k.value, names) for k in call.keywords}
            fields = dict(zip(("paper", "where", "quote", "numbers"), args, strict=False)) | kw
            yield pytest.param(chapter, fields, id=f"{chapter}-{fields['where']}")


def test_citation_places_parse():
    for param in _citations():
        _place_pattern(param.values[1]["where"])


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the papers' texts (../shared/seeds) are not here")
@pytest.mark.parametrize(("chapter", "cite"), list(_citations()))
def test_citation_matches_the_paper(chapter, cite):
    assert cite["paper"] in PAPERS, f"{chapter}: unknown paper {cite['paper']!r}"
    raw = (SEEDS / PAPERS[cite["paper"]]).read_text(encoding="utf-8")
    assert re.search(_place_pattern(cite["where"]), raw), f"{cite['where']} not found in {cite['paper']}"
    paper = normalise(raw)
    if cite.get("quote"):
        assert normalise(cite["quote"]) in paper, f"quote not in {cite['paper']}: {cite['quote']!r}"
    # table rows lose their separators in the text ("4.904.213.75"): split runs of 2-decimal numbers too
    split = re.sub(r"(\d\.\d\d)(?=\d)", r"\1 ", paper)
    for number in cite.get("numbers", ()):
        pattern = rf"(?<![\d.]){re.escape(normalise(number))}(?![\d])"
        assert re.search(pattern, paper) or re.search(pattern, split), f"{number} not in {cite['paper']}"


def _merge(base: dict, update: dict) -> dict:
    out = dict(base)
    for k, v in update.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _predictions():
    import yaml

    data = yaml.safe_load((ROOT / "notebooks" / "predictions.yaml").read_text(encoding="utf-8"))
    for chapter, solutions in data.items():
        for label, spec in solutions.items():
            yield pytest.param(chapter, label, spec, id=label)


def test_every_prediction_names_a_solution_of_its_chapter():
    for param in _predictions():
        chapter, label, spec = param.values
        assert f"{label}" in (ROOT / "notebooks" / f"{chapter}.py").read_text(encoding="utf-8"), label
        assert spec["expect"] and set(spec) <= {"base", "parameters", "expect"}, label


@pytest.mark.heavy
@pytest.mark.slow
@pytest.mark.parametrize(("chapter", "label", "spec"), list(_predictions()))
def test_solution_predictions_hold_when_run(chapter, label, spec, project, tmp_path):
    """Run the chapter with the solution's parameters and check each predicted claim's truth value."""
    import json

    import yaml
    from conftest import shifteval

    base = yaml.safe_load((ROOT / "notebooks" / "params" / chapter / f"{spec['base']}.yaml").read_text())
    params = _merge(base, {"parameters": spec["parameters"]})
    path = tmp_path / f"{label}.yaml"
    path.write_text(yaml.safe_dump(params))
    out = shifteval("run", chapter, "--params", str(path), "--out", str(tmp_path / "out"), cwd=project)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads((tmp_path / "out" / f"{chapter}.results.json").read_text())
    truth = {c["id"]: c["holds"] for c in res["claims"]}
    assert {k: truth.get(k) for k in spec["expect"]} == spec["expect"], [
        c for c in res["claims"] if c["id"] in spec["expect"]
    ]


def test_a_sentence_names_the_tests_operands_once():
    R = Results(strict=True)
    claim = R.claim(
        "operands",
        "AutoEval errs by {test[0].a:.2f} points with detection, {test[0]:less than} {test[0].b:.2f} without; "
        "at least {test[1].b:.0%} of {test[1].a:.1%}.",
        C.below(2.5, 10.1, by="much") & C.at_least(0.25, 0.2),
    )
    assert (
        claim.text
        == "AutoEval errs by 2.50 points with detection, much less than 10.10 without; at least 20% of 25.0%."
    )
    with pytest.raises(ValueError, match="has 2 operand"):
        R.claim("too-many", "{test.c}", C.above(2.0, 1.0))


def test_every_paragraph_a_chapter_says_is_displayed():
    """``R.say``/``R.solution`` return a paragraph that Jupyter shows only as a cell's last expression
    (or through ``display``): one said earlier in a cell, or inside an ``if``, would vanish from the page
    while its claims are still recorded."""
    import ast
    from pathlib import Path

    import jupytext

    hidden = []
    for path in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.py")):
        for i, cell in enumerate(jupytext.read(path).cells):
            if cell.cell_type != "code":
                continue
            tree = ast.parse("\n".join(line for line in cell.source.splitlines() if not line.startswith("%")))
            last = tree.body[-1] if tree.body else None
            shown = {id(last.value)} if isinstance(last, ast.Expr) else set()
            shown |= {
                id(arg)
                for node in ast.walk(tree)
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "display"
                for arg in node.args
            }
            for node in ast.walk(tree):
                said = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                if (
                    said
                    and node.func.attr in ("say", "solution")
                    and getattr(node.func.value, "id", "") == "R"
                ):
                    if id(node) not in shown:
                        hidden.append(f"{path.name} cell {i}, line {node.lineno}")
    assert not hidden, f"paragraphs that are never displayed: {hidden}"


# -- findings: a paper's result and the verdict the run computes (shifteval.book.findings) -----------------

#: The chapters that test papers' findings (your-replication tests some of the same ones on a user's data).
PAPER_CHAPTERS = [
    "replication-world",
    "linear-fits",
    "selection-bias",
    "matched-evaluation",
    "ood-autoeval",
    "mlm",
]

#: Words by which a sentence compares the run with a paper: such a sentence takes them from a finding.
PAPER_COMPARISON = re.compile(
    r"as in the paper|unlike the paper|as the paper|the paper'?s direction|\breproduc|"
    r"(?:as|unlike) (?:Recht|Engstrom|Anzaku|Zhu|Sikar)\b|in line with the paper|contrary to the paper",
    re.IGNORECASE,
)


def _findings(chapter: str):
    yield from _calls(chapter, "finding")


def _keyword(call: ast.Call, name: str):
    return next((k.value for k in call.keywords if k.arg == name), None)


@pytest.mark.parametrize("chapter", PAPER_CHAPTERS)
def test_every_paper_chapter_declares_its_findings_with_a_criterion_from_the_code(chapter):
    from shifteval.book.findings import CRITERIA

    calls = list(_findings(chapter))
    assert len(calls) >= 5, f"{chapter}: {len(calls)} findings declared (at least 5)"
    for call in calls:
        fid = _literal_id(call)
        criterion = _keyword(call, "criterion")
        assert criterion is not None, f"{chapter}: finding {fid} has no criterion"
        kinds = {
            _name(n)
            for n in (
                (criterion.body, criterion.orelse) if isinstance(criterion, ast.IfExp) else (criterion,)
            )
        }
        assert kinds <= set(CRITERIA), (
            f"{chapter}: finding {fid}: criterion {ast.unparse(criterion)[:80]} is not one of {sorted(CRITERIA)}"
        )
        for field in ("paper", "where", "statement", "quantity", "paper_value", "run_value"):
            assert _keyword(call, field) is not None, f"{chapter}: finding {fid} lacks {field}"


def test_at_least_45_findings_across_the_paper_chapters():
    assert sum(len(list(_findings(c))) for c in PAPER_CHAPTERS) >= 45


def _finding_statements():
    for chapter in PAPER_CHAPTERS:
        names = _strings(chapter)
        for call in _findings(chapter):
            paper, where, statement = (_keyword(call, k) for k in ("paper", "where", "statement"))
            try:
                fields = {
                    k: _literal(v, names)
                    for k, v in (("paper", paper), ("where", where), ("statement", statement))
                }
            except ValueError:
                fields = {"paper": None}
            yield pytest.param(chapter, _literal_id(call), fields, id=f"{chapter}-{_literal_id(call)}")


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the papers' texts (../shared/seeds) are not here")
@pytest.mark.parametrize(("chapter", "fid", "fields"), list(_finding_statements()))
def test_every_findings_statement_is_quoted_from_its_paper(chapter, fid, fields):
    assert fields["paper"] in PAPERS, (
        f"{chapter}: {fid}: paper, place and statement must be literals of a known paper"
    )
    raw = (SEEDS / PAPERS[fields["paper"]]).read_text(encoding="utf-8")
    for place in re.split(r"\s*(?:,|;| and )\s*", fields["where"]):
        assert re.search(_place_pattern(place), raw), (
            f"{chapter}: {fid}: {place} not found in {fields['paper']}"
        )
    quoted = [q for q in re.split(r"\s*(?:…|\.\.\.)\s*", fields["statement"]) if q.strip()]
    missing = [q for q in quoted if normalise(q) not in normalise(raw)]
    assert not missing, f"{chapter}: {fid}: not in {fields['paper']}: {missing}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_sentence_that_compares_with_a_paper_reads_a_finding(chapter):
    """A sentence that says "as in the paper", "unlike the paper", "reproduces" takes those words from a
    finding's verdict (``{finding:…}``, ``R.check(..., finding=f)``); a test whose direction the data chooses
    (``below(a, b) if a < b else above(a, b)``) may only report the run."""
    import jupytext

    from shifteval.book import prose

    templates = prose.templates(jupytext.read(ROOT / "notebooks" / f"{chapter}.py"))
    checks = {_literal_id(call): call for call in _calls(chapter, "check")}
    unbacked, chosen = [], []
    for sid, text in templates.items():
        if not PAPER_COMPARISON.search(text):
            continue
        call = checks.get(sid)
        if call is None or _keyword(call, "finding") is None or "{finding" not in text:
            unbacked.append(sid)
        elif isinstance(_condition(call), ast.IfExp):
            chosen.append(sid)
    assert not unbacked, f"{chapter}: sentences that compare with a paper without a finding: {unbacked}"
    assert not chosen, f"{chapter}: paper comparisons whose test the data chooses: {chosen}"


def test_the_comparison_guard_sees_a_sentence_that_names_the_paper():
    assert PAPER_COMPARISON.search("AutoEval errs less, as in the paper.")
    assert PAPER_COMPARISON.search("Both fits reproduce §3.3.")
    assert not PAPER_COMPARISON.search("AutoEval errs by 2.5 points with detection, less than 10 without.")
