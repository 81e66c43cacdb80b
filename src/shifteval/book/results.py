"""How a chapter records its numbers and states its claims.

A chapter opens a :class:`Results` (``R = results.Results()``) and, as it goes,

- states every result-dependent sentence as a **claim**: ``R.claim(id, text, test, **values)``
  formats ``text`` with ``values`` and keeps ``test`` -- the comparison, evaluated on the run's own
  numbers, that makes the sentence true, written with a helper of :mod:`shifteval.book.claims`
  (``above(a, b, by="well")``) whose words the text takes as ``{test}`` or ``{test:larger than}``;
  a sentence of the chapter's markdown (a ``<span claim="id">`` of :mod:`shifteval.book.prose`) is
  checked with ``R.check(id, test, **values)``, the same claim with its words in the prose;
- cites a paper with ``R.cite(paper, where, quote=...)``, recorded so that a test checks the quote
  and the place against the paper's text;
- glues every computed number that prose quotes: ``R.number(key, value, fmt)`` (used in markdown
  as ``{glue:md}`key```);
- records headline numbers: ``R.record({...})``;
- hands each figure and table to the book: ``R.figure(name, fig)`` and ``R.table(name, frame)`` glue
  it for a ``{glue:figure}`` directive and record which library function drew it.

The pipeline tells the kernel where the results go (environment variable ``SHIFTEVAL_RESULTS``)
and whether claims are strict (``SHIFTEVAL_STRICT_CLAIMS=1``, set for the ``default`` parameter
set without overrides). In a strict run a claim that does not hold raises :class:`ClaimFailed`,
so the book is never published saying something its own run contradicts. In any other run
(a student's re-run, ``smoke``, ``real``) the page shows the sentence in a "does not hold in this
run" admonition with the values (a sentence of the markdown, checked by :meth:`Results.check`, is
marked where it stands), and ``<chapter>.results.json`` records ``holds: false``.

Run outside the pipeline (a chapter opened in JupyterLab and run top to bottom, or executed by plain
papermill or nbconvert), nothing is written and claims are not strict; ``Results("<chapter>")`` then reads
the claim sentences from the chapter's source (``notebooks/<chapter>.py``), and each figure and table is
shown at the cell that makes it, each check as its sentence marked "holds" or "does not hold in this run".
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..utils.io import atomic_write_json, to_json
from . import prose
from .claims import Check
from .findings import Criterion, Finding

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure
    from pandas.io.formats.style import Styler

ENV_RESULTS = "SHIFTEVAL_RESULTS"
ENV_STRICT = "SHIFTEVAL_STRICT_CLAIMS"
NOT_HOLDING_TITLE = "Does not hold in this run"


class ClaimFailed(AssertionError):
    """A claim of a strict (``default``) run is false: the chapter must not be published."""


def _nan_to_none(obj):
    """Missing values (NaN) become JSON ``null``; infinities are still refused by :func:`to_json`."""
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nan_to_none(v) for v in obj]
    if isinstance(obj, (float, np.floating)) and math.isnan(obj):
        return None
    if isinstance(obj, np.ndarray):
        return _nan_to_none(obj.tolist())
    return obj


def _normalise(obj):
    return json.loads(to_json(_nan_to_none(obj)))


def _show(value) -> str:
    """A value as the "does not hold" message shows it (floats to 4 significant digits, on one line).

    Examples
    --------
    >>> import pandas as pd
    >>> _show(pd.Series({"accuracy": 0.61234, "n": 400}, name="from scratch"))
    '{accuracy: 0.6123, n: 400}'
    """
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    if (
        hasattr(value, "to_dict") and hasattr(value, "index") and getattr(value, "ndim", 0) == 1
    ):  # a table row
        return "{" + ", ".join(f"{k}: {_show(v)}" for k, v in value.to_dict().items()) + "}"
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=4, threshold=20)
    return str(value)


@dataclass(frozen=True)
class Claim:
    """A sentence of the book and whether this run's results make it true.

    Attributes
    ----------
    id : str
        Stable identifier, unique within the chapter (``"cifar10-spearman-above-0.98"``).
    text : str
        The sentence exactly as rendered (MyST markdown, numbers already formatted).
    holds : bool
        Whether the condition evaluated on this run's results is true.
    values : dict
        The values the sentence and the condition were computed from.
    test : str
        The test as evaluated (``above(0.521, 0.4, by=0.05)``), or ``"bool"`` for a bare condition.
    why : str
        For a bare condition, why no comparison helper states it.
    """

    id: str
    text: str
    holds: bool
    values: dict = field(default_factory=dict)
    test: str = "bool"
    why: str = ""

    def values_text(self) -> str:
        """The values as ``name = value`` pairs."""
        shown = ", ".join(f"{k} = {_show(v)}" for k, v in self.values.items()) or "no values recorded"
        return f"{shown}; test {self.test}"

    def admonition(self) -> str:
        """The MyST admonition shown in place of a claim that does not hold."""
        return "\n".join([
            f":::{{admonition}} {NOT_HOLDING_TITLE}",
            ":class: warning",
            f"{self.text}",
            "",
            f"This sentence is true in the default build but false here (claim `{self.id}`; "
            f"{self.values_text()}).",
            ":::",
        ])  # fmt: skip

    def markdown(self) -> str:
        """The sentence, or its admonition when it does not hold."""
        return self.text if self.holds else self.admonition()

    def inline(self) -> str:
        """The sentence for use inside a paragraph; a false claim is marked in place."""
        if self.holds:
            return self.text
        return f"{self.text} **[{NOT_HOLDING_TITLE.lower()}: {self.values_text()}]**"

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def as_record(self) -> dict:
        """The entry of ``results.json``'s ``claims`` list."""
        record = {"id": self.id, "text": self.text, "holds": self.holds, "test": self.test}
        return record | ({"why": self.why} if self.why else {})


class _Shown(Claim):
    """A claim already shown where it was checked (outside the pipeline): a cell ending in it shows it once."""

    def _ipython_display_(self) -> None:
        pass


HOLDS_MARK, FAILS_MARK = "✅ **holds:**", "❌ **does not hold in this run:**"


def marked(claim: Claim, plain: Callable[[str], str] | None = None) -> str:
    """A checked sentence as a notebook run outside the pipeline shows it: marked as holding or not.

    Parameters
    ----------
    claim : Claim
        The claim as checked.
    plain : callable, optional
        Turns the sentence's MyST roles into text (:class:`shifteval.book.reader.Converter`).

    Examples
    --------
    >>> marked(Claim("gap", "The gap is 3.2 points.", True))
    '✅ **holds:** The gap is 3.2 points.'
    >>> marked(Claim("gap", "The gap is 3.2 points.", False, {"gap": 3.2}, "above(3.2, 5)"))
    '❌ **does not hold in this run:** The gap is 3.2 points. (`gap`: gap = 3.2; test above(3.2, 5))'
    """
    text = plain(claim.text) if plain is not None else claim.text
    if claim.holds:
        return f"{HOLDS_MARK} {text}"
    return f"{FAILS_MARK} {text} (`{claim.id}`: {claim.values_text()})"


def in_kernel() -> bool:
    """Whether this code runs in a Jupyter kernel (where figures, tables and claims can be displayed)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the notebook stack
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def source_templates(chapter: str, start: str | Path | None = None) -> dict[str, str] | None:
    """The claim sentences of a chapter's source (``notebooks/<chapter>.py``), or None when it is not found.

    Parameters
    ----------
    chapter : str
        The chapter's name.
    start : str or pathlib.Path, optional
        Where to look for the project (the current directory by default: a notebook's kernel starts in
        ``notebooks/``, papermill's in the project root).

    Examples
    --------
    >>> sorted(source_templates("linear-fits"))[:2]
    ['balanced-best-unchanged', 'balanced-improvement']
    >>> source_templates("no-such-chapter") is None
    True
    """
    import jupytext

    from .project import PipelineError, find_root

    try:
        source = find_root(start) / "notebooks" / f"{chapter}.py"
    except PipelineError:
        return None
    if not source.is_file():
        return None
    return prose.templates(jupytext.read(source, fmt="py:percent"))


class Paragraph:
    """Prose made of literal sentences and claims (see :meth:`Results.say`)."""

    def __init__(self, parts):
        self.parts = list(parts)

    def markdown(self) -> str:
        """The paragraph, followed by an admonition per claim that does not hold."""
        text = " ".join(p.text if isinstance(p, Claim) else str(p) for p in self.parts)
        failed = [p.admonition() for p in self.parts if isinstance(p, Claim) and not p.holds]
        return "\n\n".join([text, *failed])

    def _repr_markdown_(self) -> str:
        return self.markdown()


class Glued(str):
    """A glued number's text (:meth:`Results.number`): a plain string that a cell does not display."""

    def _ipython_display_(self) -> None:
        pass  # shown where the prose cites it ({glue:md}), not as the cell's output


class Solution(Paragraph):
    """An exercise's solution: a paragraph in a dropdown ``solution`` block (see :meth:`Results.solution`)."""

    def __init__(self, label: str, parts):
        super().__init__(parts)
        self.label = label

    def markdown(self) -> str:
        """The paragraph inside ``{solution}`` fences, collapsed by default."""
        return f"````{{solution}} {self.label}\n:class: dropdown\n{super().markdown()}\n````"


_FIGURES: dict[str, dict] = {}  # glue name -> the library function and the cell that drew it
_ACTIVE: list = []  # the chapter's Results, so a figure traced after the last record still gets written


def trace_figure(name: str, functions, kind: str = "figure", legibility: dict | None = None) -> dict:
    """Note that the figure or table glued as ``name`` was drawn by ``functions`` in the current cell.

    Called by :meth:`Results.figure` (with the figure's :func:`~shifteval.viz.common.legibility`) and
    :meth:`Results.table`; the trace goes into ``results.json`` (``figures``) and the page's provenance box.

    Parameters
    ----------
    name : str
        The glue key of the figure or table.
    functions : sequence of str or None
        The library functions that drew it (:func:`shifteval.viz.common.traced` marks them).
    kind : str
        ``"figure"`` or ``"table"``.
    legibility : dict, optional
        The figure's measures at the book's content width.

    Returns
    -------
    dict
        The trace: ``kind``, ``functions``, the IPython ``cell`` that glued it and, for a figure,
        ``legibility``.
    """
    cell = None
    try:
        from IPython import get_ipython

        shell = get_ipython()
        cell = shell.execution_count if shell is not None else None
    except ImportError:  # pragma: no cover - IPython comes with the notebook stack
        pass
    _FIGURES[name] = {"kind": kind, "functions": list(functions or []), "cell": cell}
    if legibility is not None:
        _FIGURES[name]["legibility"] = legibility
    if _ACTIVE:
        _ACTIVE[-1]._write()
    return _FIGURES[name]


class Results:
    """A chapter's record: headline numbers, glued numbers and claims.

    Parameters
    ----------
    chapter : str, optional
        The chapter's name: outside the pipeline, its claim sentences are read from its source.
    path : str, path or None
        Where ``results.json`` goes; by default ``$SHIFTEVAL_RESULTS`` (set by the pipeline), and
        nothing is written when that is unset.
    strict : bool or None
        Whether a false claim raises; by default ``$SHIFTEVAL_STRICT_CLAIMS == "1"``.
    interactive : bool or None
        Show each figure, table and checked sentence where it is made (a notebook run outside the
        pipeline) instead of handing it to the book; by default, when this runs in a Jupyter kernel and
        the pipeline did not start it (``$SHIFTEVAL_RESULTS`` unset).

    Examples
    --------
    >>> from shifteval.book.claims import above
    >>> R = Results(path=None, strict=False)
    >>> c = R.claim("gap-positive", "The gap is {gap:.1f} points, {test} zero.", above(3.21, 0), gap=3.21)
    >>> c.text, c.holds, c.test
    ('The gap is 3.2 points, above zero.', True, 'above(3.21, 0)')
    >>> c = R.claim("gap-large", "The gap is {test:larger than} 2 points.", above(3.21, 2, by="well"), gap=3.21)
    >>> c.text, c.holds
    ('The gap is well larger than 2 points.', True)
    >>> R.claim("gap-huge", "The gap exceeds 5 points.", above(3.21, 5), gap=3.21).holds
    False
    >>> R.record({"gap": 3.21})  # shows nothing at the end of a cell
    >>> R.as_dict()["gap"], [c["id"] for c in R.as_dict()["claims"]]
    (3.21, ['gap-positive', 'gap-large', 'gap-huge'])
    >>> text = R.number("gap-text", 3.21, "{:.1f}")  # in a notebook, a cell ending in it shows nothing
    >>> text + " points", R.as_dict()["numbers"]
    ('3.2 points', {'gap-text': '3.2'})
    """

    def __init__(
        self,
        chapter: str | None = None,
        path=None,
        strict: bool | None = None,
        interactive: bool | None = None,
    ):
        piped = bool(os.environ.get(ENV_RESULTS))
        self.chapter = chapter
        self.path = path if path is not None else os.environ.get(ENV_RESULTS) or None
        self.strict = os.environ.get(ENV_STRICT) == "1" if strict is None else bool(strict)
        self.interactive = (not piped and in_kernel()) if interactive is None else bool(interactive)
        self.claims: list[Claim] = []
        self.numbers: dict[str, str] = {}
        self.results: dict = {}
        self.citations: list[dict] = []
        self.spans: dict[str, str] = {}
        self.findings: list[Finding] = []
        texts = os.environ.get(prose.ENV_TEMPLATES)
        if texts:
            self.templates = json.loads(Path(texts).read_text(encoding="utf-8"))
        else:  # outside the pipeline: the sentences of the chapter's own source, when it can be found
            self.templates = source_templates(chapter) if chapter else None
        _ACTIVE[:] = [self]

    def claim(self, id: str, text: str, holds, **values) -> Claim:
        """State a result-dependent sentence and the test that makes it true.

        Parameters
        ----------
        id : str
            Identifier, unique within the chapter.
        text : str
            The sentence; ``str.format`` fields are filled from ``values``, and ``{test}`` (or
            ``{test:larger than}``, ``{test[1]:...}`` for a joined test) from the test's words.
        holds : Check, bool or callable
            The test evaluated on this run's results: a helper of :mod:`shifteval.book.claims`
            (recorded with its arguments), or a bare boolean (recorded as ``bool``; chapters pass
            one through :func:`shifteval.book.claims.fact` with the reason no helper fits). A
            callable gets ``**values``.
        **values
            The numbers the sentence quotes and the test uses.

        Returns
        -------
        Claim
            Displayed as markdown when it is a cell's last expression.

        Raises
        ------
        ClaimFailed
            In a strict run, when the claim does not hold (the message names it, its values and test).
        """
        test, fields = self._test(id, holds, values)
        rendered = text.format(**fields) if values or "{test" in text else text
        return self._state(Claim(id, rendered, test.holds, dict(values), test.expr, test.why))

    def check(self, id: str, holds, **values) -> Claim:
        """Test a sentence the chapter's markdown marks ``<span claim="id">`` (:mod:`shifteval.book.prose`).

        The same as :meth:`claim` with the span's words as ``text``: the pipeline hands the spans to the
        kernel and writes each sentence, as formatted here, into the page. Run outside the pipeline
        (Jupyter), where the spans are not known, the claim's text is its id and test.

        Raises
        ------
        ValueError
            When the chapter's markdown has no span ``id``, or the span names a field not given.
        ClaimFailed
            In a strict run, when the claim does not hold.

        Examples
        --------
        >>> from shifteval.book.claims import below
        >>> R = Results(path=None, strict=False)
        >>> R.templates = {"drop": "The new set costs {test.a:.1f} points, {test:less than} 5."}
        >>> R.check("drop", below(3.46, 5)).text
        'The new set costs 3.5 points, less than 5.'
        """
        self._has_span(id)
        test, fields = self._test(id, holds, values)
        text = (
            prose.fill(self.templates[id], fields) if self.templates is not None else f"`{id}`: {test.expr}"
        )
        claim = Claim(id, text, test.holds, dict(values), test.expr, test.why)
        self.spans[id] = claim.inline()  # a sentence that does not hold is marked where it stands
        self._state(claim)
        if not self.interactive:
            return claim
        from IPython.display import Markdown, display

        display(Markdown(marked(claim, self._plain)))
        return _Shown(**vars(claim))  # shown once, also when it ends the cell

    def _plain(self, text: str) -> str:
        """A sentence's MyST roles as text, for a notebook run outside the book (numbers glued so far)."""
        from .project import PipelineError, find_root
        from .reader import Converter, citation_formatter

        try:
            bib = find_root() / "book" / "references.bib"
        except PipelineError:
            bib = None
        try:
            return Converter(self.numbers, cite=citation_formatter(bib)).markdown(text)
        except ValueError:  # a number not glued yet: the role stays as it is
            return text

    def omit(self, *ids: str) -> None:
        """Leave out the markdown's sentences ``ids``: their analysis did not run (e.g. a folder without votes).

        The page shows neither the sentence nor a mark; the claim is not recorded. A markdown cell left
        with no text disappears.

        Examples
        --------
        >>> R = Results(path=None, strict=False)
        >>> R.templates = {"votes": "The votes say {x}."}
        >>> R.omit("votes")
        >>> R.as_dict()["spans"], R.as_dict()["claims"]
        ({'votes': ''}, [])
        """
        for id in ids:
            self._has_span(id)
            if id in self.spans:
                raise ValueError(f"claim {id!r} was already checked or omitted")
            self.spans[id] = ""
        self._write()

    def _has_span(self, id: str) -> None:
        """Refuse an id the chapter's markdown does not mark (known only under the pipeline)."""
        if self.templates is not None and id not in self.templates:
            raise ValueError(f'claim {id!r}: the chapter\'s markdown has no <span claim="{id}">')

    def _test(self, id: str, holds, values: dict) -> tuple[Check, dict]:
        """The claim's test, evaluated, and the fields its words are formatted with."""
        if not isinstance(id, str) or not id:
            raise ValueError("a claim needs a non-empty string id")
        if any(c.id == id for c in self.claims) or id in self.spans:
            raise ValueError(f"claim id {id!r} is used twice in this chapter")
        truth = holds(**values) if callable(holds) else holds
        if isinstance(truth, np.ndarray):
            raise ValueError(f"claim {id!r}: the condition is an array; reduce it with .all() or .any()")
        test = truth if isinstance(truth, Check) else Check("bool", bool(truth))
        return test, ({"test": test, **values} if "test" not in values else dict(values))

    def _state(self, claim: Claim) -> Claim:
        """Record a claim; in a strict run, refuse one that does not hold."""
        self.claims.append(claim)
        self._write()
        if self.strict and not claim.holds:
            raise ClaimFailed(
                f"claim {claim.id!r} does not hold in this default run: {claim.text!r} ({claim.values_text()})"
            )
        return claim

    def finding(
        self,
        id: str,
        *,
        paper: str,
        where: str,
        statement: str,
        quantity: str,
        paper_value,
        run_value,
        criterion: Criterion,
        interval=None,
        section: str = "",
    ) -> Finding:
        """Declare one of a paper's results that the chapter tests, and record the verdict its criterion gives.

        Parameters
        ----------
        id : str
            Identifier, unique within the chapter (another chapter testing the same result uses the same id).
        paper : str
            The paper's key in ``book/references.bib``.
        where : str
            The place in the paper (``"Table 1"``, ``"§4.2"``).
        statement : str
            The paper's statement, quoted.
        quantity : str
            What is compared, in words, with its unit.
        paper_value, run_value : object
            The paper's value and this run's (numbers, or short texts for a qualitative result).
        criterion : Criterion
            A criterion of :mod:`shifteval.book.findings`, evaluated on the values (it gives the verdict).
        interval : tuple, optional
            The run's interval for ``run_value``.
        section : str
            The heading of the chapter section that shows it.

        Returns
        -------
        Finding
            Its verdict words go into a sentence that compares with the paper: ``R.check(id, test, finding=f)``
            and ``{finding:as in the paper|partly|unlike the paper}`` in the sentence.

        Examples
        --------
        >>> from shifteval.book.findings import same_direction
        >>> R = Results(path=None, strict=False)
        >>> f = R.finding("drop", paper="recht2019imagenet", where="§1", statement="accuracy drops",
        ...               quantity="new minus original accuracy, points", paper_value=-11.0, run_value=-9.1,
        ...               criterion=same_direction(-9.1, -11.0))
        >>> f.verdict, R.as_dict()["findings"][0]["verdict"]
        ('reproduced', 'reproduced')
        """
        if not isinstance(criterion, Criterion):
            raise ValueError(
                f"finding {id!r}: the criterion must come from shifteval.book.findings, got {criterion!r}"
            )
        if not id or any(f.id == id for f in self.findings):
            raise ValueError(f"finding id {id!r} is empty or used twice in this chapter")
        found = Finding(
            id, paper, where, statement, quantity, _normalise(paper_value), _normalise(run_value), criterion,
            tuple(float(v) for v in interval) if interval is not None else None, section, self.chapter or "",
        )  # fmt: skip
        self.findings.append(found)
        self._write()
        return found

    def findings_table(self) -> pd.DataFrame:
        """The chapter's findings as the table that ends it ("What this chapter reproduces")."""
        from ..utils.cache import project_root
        from ..viz.common import findings_table
        from .reader import citation_formatter

        root = project_root()
        cite = citation_formatter(root / "book" / "references.bib") if root is not None else None
        return findings_table([f.as_record() for f in self.findings], cite=cite)

    def cite(self, paper: str, where: str, quote: str | None = None, numbers=()) -> str:
        """Cite ``where`` (a section, table, figure) of ``paper``, optionally quoting it, and record it.

        The record (``results.json``'s ``citations``) lets a test check the place, the quote and
        each quoted number against the paper's text.

        Parameters
        ----------
        paper : str
            The paper's key in ``book/references.bib`` (``"recht2019imagenet"``).
        where : str
            The place: ``"§3.3"``, ``"Table 1"``, ``"App. F.1"``, ``"Figure 12"``.
        quote : str, optional
            The paper's words, verbatim (whitespace and hyphenation aside).
        numbers : sequence of str
            Numbers the sentence quotes from the paper, as printed there (``"4.61"``).

        Returns
        -------
        str
            The citation as the prose shows it: ``"quote" (§3.3)`` or ``§3.3``.
        """
        if not paper or not where:
            raise ValueError("a citation needs the paper's key and the place in it")
        self.citations.append(
            {"paper": paper, "where": where, "quote": quote, "numbers": [str(n) for n in numbers]}
        )
        self._write()
        return f"“{quote}” ({where})" if quote else where

    def say(self, *parts) -> Paragraph:
        """A paragraph of literal sentences and claims, displayed as markdown."""
        return Paragraph(parts)

    def solution(self, label: str, *parts) -> Solution:
        """The solution of exercise ``label``, made of literal sentences and claims, displayed as markdown."""
        return Solution(label, parts)

    def number(self, key: str, value, fmt: str = "{:,.3f}") -> Glued:
        """Format a computed number, glue it as ``key`` for ``{glue:md}`key``` and return the text.

        The text is a :class:`Glued` string: it appears where the prose cites it, not below the cell.
        """
        from IPython.display import Markdown

        text = fmt.format(value)
        self.numbers[key] = text
        try:
            from myst_nb import glue

            glue(key, Markdown(text), display=False)
        except ImportError:  # outside a book environment the text is still returned
            pass
        self._write()
        return Glued(text)

    def record(self, results: dict) -> None:
        """Add headline numbers (numpy values converted, NaN to null) and write ``results.json``.

        Top-level keys merge with those recorded before, so each part of a chapter records its own
        numbers where it computes them; :meth:`as_dict` gives everything recorded so far.
        """
        if not isinstance(results, dict):
            raise ValueError(f"results must be a dict, got {type(results).__name__}")
        reserved = {"claims", "citations", "numbers", "provenance", "spans", "findings"} & set(results)
        if reserved:
            raise ValueError(f"results may not set the reserved key(s) {sorted(reserved)}")
        self.results.update(_normalise(results))
        self._write()

    def figure(self, name: str, fig: Figure | None = None) -> None:
        """Hand a figure to the book as a numbered, captioned figure (myst-nb ``glue``) and trace it.

        The figure is stored in the cell's output under ``name`` (hidden there) and closed; a following
        markdown cell places it with ``{glue:figure} name`` and its caption, which Sphinx numbers and makes
        cross-referenceable (``{numref}`fig-<name>```). Outside the pipeline (:attr:`interactive`), or without
        myst-nb, the figure is shown in the cell instead.
        ``results.json`` records which library function drew it (:func:`shifteval.viz.common.traced`),
        the cell that glued it and its legibility at the book's width (:func:`shifteval.viz.common.legibility`).

        Parameters
        ----------
        name : str
            The glue key (the figure's label in the book).
        fig : matplotlib.figure.Figure, optional
            The figure; by default the current one.

        Examples
        --------
        >>> from shifteval.viz import image_grid
        >>> R = Results(path=None, strict=False)
        >>> fig = image_grid(np.zeros((1, 1, 2, 2)))
        >>> R.figure("doctest-grid", fig)
        >>> plt.fignum_exists(fig.number)  # glued and closed
        False
        >>> R.as_dict()["figures"]["doctest-grid"]["functions"]
        ['shifteval.viz.common.image_grid']
        """
        import matplotlib.pyplot as plt

        from ..viz.common import drawn_by, legibility

        fig = fig or plt.gcf()
        trace_figure(name, drawn_by(fig), legibility=legibility(fig))
        try:
            from myst_nb import glue
        except ImportError:  # pragma: no cover - myst-nb comes with jupyter-book
            glue = None
        if self.interactive or glue is None:  # shown where it is made, as a notebook shows a figure
            from IPython.display import display

            display(fig)
        else:
            glue(name, fig, display=False)
        plt.close(fig)

    def table(self, name: str, frame: pd.DataFrame | Styler) -> None:
        """Hand a table (a DataFrame or its ``Styler``) to the book as a numbered, captioned table.

        Row and column labels are shown by their display names (:func:`shifteval.viz.names.readable_table`),
        and an ``"estimate [lo, hi]"`` cell is kept on one line.

        Like :meth:`figure`: the table is glued under ``name`` and not shown in place; a following markdown
        cell places it with ``{glue:figure} name`` and ``:name: tbl-<name>``, which the book's Sphinx
        extension numbers as a table (``{numref}`tbl-<name>```). Outside the pipeline, or without myst-nb, the
        table is displayed in the cell instead.

        Parameters
        ----------
        name : str
            The glue key (the table's label in the book).
        frame : pandas.DataFrame or pandas.io.formats.style.Styler
            The table.

        Examples
        --------
        >>> R = Results(path=None, strict=False)
        >>> R.table("doctest-table", pd.DataFrame({"a": [1, 2]}))
        >>> R.as_dict()["figures"]["doctest-table"]["kind"]
        'table'
        """
        from ..viz.common import drawn_by
        from ..viz.names import readable_table

        trace_figure(name, drawn_by(frame), kind="table")
        frame = readable_table(frame)
        try:
            from myst_nb import glue
        except ImportError:  # pragma: no cover - myst-nb comes with jupyter-book
            glue = None
        if self.interactive or glue is None:  # shown where it is made
            from IPython.display import display

            display(frame)
            return
        glue(name, frame, display=False)

    def as_dict(self) -> dict:
        """Everything recorded so far, as written to ``results.json``."""
        return {
            **self.results,
            "claims": [c.as_record() for c in self.claims],
            "citations": list(self.citations),
            "numbers": dict(self.numbers),
            "figures": dict(_FIGURES),
            **({"findings": [f.as_record() for f in self.findings]} if self.findings else {}),
            **({"spans": dict(self.spans)} if self.spans else {}),
        }

    def _write(self) -> dict:
        data = self.as_dict()
        if self.path is not None:
            atomic_write_json(self.path, data)
        return data


def record(results_path, results: dict) -> dict:
    """Write a chapter's results as JSON (atomically) and return them, JSON-normalised.

    The form used before :class:`Results`; ``results_path=None`` falls back to ``$SHIFTEVAL_RESULTS``.

    Parameters
    ----------
    results_path : str, path or None
        Where the results go; ``None`` uses ``$SHIFTEVAL_RESULTS`` (nothing written when unset).
    results : dict
        Headline numbers; numpy scalars and arrays are converted, NaN becomes null.
    """
    if not isinstance(results, dict):
        raise ValueError(f"results must be a dict, got {type(results).__name__}")
    normalised = _normalise(results)
    if _FIGURES and "figures" not in normalised:
        normalised["figures"] = dict(_FIGURES)
    path = results_path if results_path is not None else os.environ.get(ENV_RESULTS) or None
    if path is not None:
        atomic_write_json(path, normalised)
    return normalised
