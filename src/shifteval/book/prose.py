"""Claims written in a chapter's markdown: the sentence in the prose, its test in one line of code.

A markdown cell marks a result-dependent sentence as a span whose ``claim`` attribute names it::

    <span claim="table2-spread">MatchedFrequency costs {mf:.1f} points of top-1 accuracy on average,
    {test[0]:less than} -10, while TopImages gains {ti:.1f}.</span>

and a (hidden) code cell states the test that makes it true, with the values the sentence quotes:
``R.check("table2-spread", below(mf1, -10) & above(ti1, 0), mf=-mf1, ti=ti1)``. The fields are those of
:meth:`shifteval.book.results.Results.claim` (``{name:spec}`` for a value, ``{test}``, ``{test[1].a:.2f}``
for the test's words and operands); a brace group followed by a backtick is a MyST role (such as ``{cite:t}``)
and stays as it is.

The pipeline reads the spans before the notebook runs (:func:`templates`) and hands them to the kernel
(environment variable ``SHIFTEVAL_CLAIM_TEXTS``, a JSON file); after the run it writes each sentence as
the run formatted it into the page (:func:`render`); one that does not hold (in a run other than the
default, which refuses it) is marked where it stands, "[does not hold in this run: values; test]".
Opened in Jupyter, the source reads as prose whose numbers are named; the book shows them.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping

ENV_TEMPLATES = "SHIFTEVAL_CLAIM_TEXTS"
SPAN = re.compile(r'<span claim="(?P<id>[^"]*)">(?P<text>.*?)</span>', re.DOTALL)
# a replacement field: {name}, {name:spec}, {test[1].a:.2f}; not a MyST role ({cite:t}`key`)
FIELD = re.compile(r"\{(?P<field>[A-Za-z_]\w*(?:\[\d+\])?(?:\.\w+)?)(?::(?P<spec>[^{}`]*))?\}(?!`)")


def spans(markdown: str) -> list[tuple[str, str]]:
    r"""The ``(id, template)`` pairs of a markdown text, in order.

    Examples
    --------
    >>> spans('Before. <span claim="gap">The gap is {gap:.1f}\n    points.</span> After.')
    [('gap', 'The gap is {gap:.1f} points.')]
    """
    # a sentence wrapped over source lines is one line of text (as markdown renders it)
    found = [(m["id"], re.sub(r"[ \t]*\n[ \t]*", " ", m["text"])) for m in SPAN.finditer(markdown)]
    empty = [i for i, (key, text) in enumerate(found) if not key or not text.strip()]
    if empty:
        raise ValueError(f"a claim span needs an id and a sentence: {found[empty[0]]!r}")
    return found


def templates(nb) -> dict[str, str]:
    """Every claim span of a notebook's markdown cells, ``{id: template}``.

    Raises
    ------
    ValueError
        When an id is used twice (naming it).
    """
    out: dict[str, str] = {}
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for key, text in spans(cell.source):
            if key in out:
                raise ValueError(f"claim span {key!r} is used twice in this chapter")
            out[key] = text
    return out


def fill(template: str, fields: Mapping[str, object]) -> str:
    """Format a span's template with the claim's values and test, leaving MyST roles alone.

    Raises
    ------
    ValueError
        For a field the claim does not give (a misspelt name would otherwise reach the page).

    Examples
    --------
    >>> fill("{n:,} images, as {cite:t}`recht2019imagenet` did.", {"n": 10000})
    '10,000 images, as {cite:t}`recht2019imagenet` did.'
    """
    formatter = string.Formatter()

    def one(match: re.Match) -> str:
        try:
            value, _ = formatter.get_field(match["field"], (), fields)
        except (KeyError, AttributeError) as exc:
            raise ValueError(
                f"field {{{match['field']}}} is not among the claim's values ({sorted(fields)})"
            ) from exc
        return format(value, match["spec"] or "")

    return FIELD.sub(one, template)


def render(nb, shown: Mapping[str, str]) -> None:
    """Replace each span of ``nb``'s markdown by its sentence as the run formatted it (in place).

    ``shown`` maps a claim id to its markdown as the kernel recorded it (``results.json``'s ``spans``):
    the sentence, marked in place "[does not hold in this run: values; test]" where it does not hold
    (inside its paragraph, list item or solution), or ``""`` for a sentence left out (``Results.omit``).

    Raises
    ------
    ValueError
        When a span was never checked by the run (its ``R.check`` is missing or did not run).
    """
    for cell in nb.cells:
        if cell.cell_type != "markdown" or not SPAN.search(cell.source):
            continue
        missing = [key for key, _ in spans(cell.source) if key not in shown]
        if missing:
            raise ValueError(f"claim span(s) {missing} were never checked by the run (R.check)")
        # an omitted sentence leaves no text and one space between its neighbours
        text = SPAN.sub(lambda m: str(shown[m["id"]]) or "\0", cell.source)
        cell.source = re.sub(r"[ \t]?\0[ \t]?", " ", text).strip() if "\0" in text else text
