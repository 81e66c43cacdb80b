"""Claims whose words are in a chapter's markdown (:mod:`shifteval.book.prose`)."""

import nbformat
import pytest

from shifteval.book import prose
from shifteval.book.claims import above, below
from shifteval.book.results import ClaimFailed, Results


def _notebook(*markdown: str):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(m) for m in markdown])


def test_spans_are_read_across_lines_and_ids_are_unique():
    nb = _notebook(
        'A <span claim="a">first {x:.1f}\nsentence.</span> B <span claim="b">second.</span>', "none"
    )
    assert prose.templates(nb) == {"a": "first {x:.1f} sentence.", "b": "second."}
    with pytest.raises(ValueError, match="'a' is used twice"):
        prose.templates(_notebook('<span claim="a">x</span>', '<span claim="a">y</span>'))
    with pytest.raises(ValueError, match="needs an id and a sentence"):
        prose.spans('<span claim="">x</span>')


def test_fill_formats_values_and_the_tests_words_but_not_roles():
    test = below(2.5, 10.1, by="much") & above(0.25, 0.2)
    text = prose.fill(
        "{n:,} images {cite:p}`recht2019imagenet`: {test[0].a:.2f}, {test[0]:less than} {test[0].b:.1f}; "
        "{test[1].a:.0%} of {term}`MLM`.",
        {"n": 10000, "test": test},
    )
    assert text == (
        "10,000 images {cite:p}`recht2019imagenet`: 2.50, much less than 10.1; 25% of {term}`MLM`."
    )
    with pytest.raises(
        ValueError, match=r"field \{gpa\} is not among the claim's values \(\['gap', 'test'\]\)"
    ):
        prose.fill("The gap is {gpa:.1f}.", {"gap": 1.0, "test": test})


def test_check_takes_its_words_from_the_span_and_the_page_shows_them():
    nb = _notebook('Lead. <span claim="gap">The gap is {gap:.1f} points, {test} zero.</span> Tail.')
    R = Results(path=None, strict=False)
    R.templates = prose.templates(nb)
    claim = R.check("gap", above(3.21, 0), gap=3.21)
    assert claim.text == "The gap is 3.2 points, above zero." and claim.holds
    assert R.as_dict()["claims"] == [
        {"id": "gap", "text": "The gap is 3.2 points, above zero.", "holds": True, "test": "above(3.21, 0)"}
    ]
    prose.render(nb, R.as_dict()["spans"])
    assert nb.cells[0].source == "Lead. The gap is 3.2 points, above zero. Tail."


def test_a_false_check_is_marked_where_it_stands_or_refused_when_strict():
    """The mark stays beside its sentence: inside its paragraph, before the next one, inside a solution."""
    nb = _notebook(
        'Lead. <span claim="big">The gap exceeds {test.b:.0f} points.</span> Tail.\n\nNext paragraph.',
        '````{solution} ex-1\n:class: dropdown\n<span claim="ok">Holds {test.a:.0f}.</span>\n````',
    )
    R = Results(path=None, strict=False)
    R.templates = prose.templates(nb)
    assert not R.check("big", above(3.21, 5)).holds and R.check("ok", above(2, 1)).holds
    prose.render(nb, R.as_dict()["spans"])
    assert nb.cells[0].source == (
        "Lead. The gap exceeds 5 points. **[does not hold in this run: no values recorded; test above(3.21, 5)]**"
        " Tail.\n\nNext paragraph."
    )
    assert nb.cells[1].source == "````{solution} ex-1\n:class: dropdown\nHolds 2.\n````"
    strict = Results(path=None, strict=True)
    strict.templates = {"big": "The gap exceeds {test.b} points."}
    with pytest.raises(ClaimFailed, match="'big' does not hold"):
        strict.check("big", above(3.21, 5))


def test_a_span_without_a_check_and_a_check_without_a_span_are_refused():
    R = Results(path=None, strict=False)
    R.templates = {"a": "A."}
    with pytest.raises(ValueError, match='no <span claim="b">'):
        R.check("b", above(1, 0))
    with pytest.raises(ValueError, match=r"\['a'\] were never checked"):
        prose.render(_notebook('<span claim="a">A.</span>'), {})


def test_outside_the_pipeline_a_check_shows_its_id_and_test(monkeypatch):
    monkeypatch.delenv(prose.ENV_TEMPLATES, raising=False)
    claim = Results(path=None, strict=False).check("gap", above(3.21, 0))
    assert claim.text == "`gap`: above(3.21, 0)"


def test_an_omitted_sentence_leaves_the_page_and_the_claims():
    nb = _notebook(
        '<span claim="votes">The votes say {x}.</span>', 'Lead. <span claim="v2">More {x}.</span> Tail.'
    )
    R = Results(path=None, strict=True)
    R.templates = prose.templates(nb)
    R.omit("votes", "v2")
    prose.render(nb, R.as_dict()["spans"])
    assert [c.source for c in nb.cells] == ["", "Lead. Tail."] and R.as_dict()["claims"] == []
    with pytest.raises(ValueError, match="already checked or omitted"):
        R.omit("votes")
    with pytest.raises(ValueError, match="used twice"):
        R.check("v2", above(1, 0), x=1)
