"""Findings: whether a paper's result was reproduced, as a verdict the run computes by a rule fixed in code.

A *claim* (:mod:`shifteval.book.claims`) says what the run shows; a *finding* says whether one of a paper's
results holds here. A chapter declares each finding it tests with :meth:`shifteval.book.results.Results.finding`:
the paper's statement (quoted, with its place), the quantity compared, the paper's value, this run's value
(with its interval where one exists), and a **criterion** -- one of the functions below, chosen before the
run, which turns the values into a verdict:

- ``reproduced``: the run shows the paper's result (by the criterion's rule);
- ``partly``: the same direction, but not the paper's size or not clear of the run's uncertainty;
- ``not reproduced``: the run contradicts it;
- ``not testable``: this run cannot test it (the reason is recorded), also when the run's value cannot be
  compared (not a number, no case to count): a value of the run never makes a criterion raise, only a
  wrong argument does.

A criterion's rule is written once, in its function, and recorded with the verdict in ``results.json``
(``findings``), so that a reader sees why a finding got its verdict and a test can check that every verdict
comes from a rule in the code. A sentence that compares the run with a paper takes its words from the
finding's verdict: ``{finding:as in the paper|partly as in the paper|unlike the paper|…}`` in the sentence,
``R.check(id, test, finding=f)`` in the code (see :meth:`Finding.__format__`).

"Not reproduced" is a result, not a failure: no build fails on a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

VERDICTS = ("reproduced", "partly", "not reproduced", "not testable")


@dataclass(frozen=True)
class Criterion:
    """A verdict and the rule that gave it.

    Attributes
    ----------
    name : str
        The criterion function (``same_direction``, ``matches``, …).
    rule : str
        The rule in words, as the function states it for every run.
    verdict : str
        One of :data:`VERDICTS`.
    expr : str
        The criterion as evaluated, with its arguments (``matches(2.9, 3.1, tol=0.5)``).
    """

    name: str
    rule: str
    verdict: str
    expr: str

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"a verdict is one of {VERDICTS}, got {self.verdict!r}")


def _fmt(value) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) else str(value)


def _number(name: str, value) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    return out


def _interval(interval) -> tuple[float, float] | None:
    """The run's interval, or None; an interval the run could not compute (NaN ends) counts as none."""
    if interval is None:
        return None
    lo, hi = (_number("the interval's ends", v) for v in interval)
    if math.isnan(lo) or math.isnan(hi):
        return None
    if lo > hi:
        raise ValueError(f"an interval needs lo <= hi, got {interval!r}")
    return lo, hi


def _untestable(name: str, why: str, expr: str) -> Criterion:
    """A verdict of ``name`` when the run's value cannot be compared (a value of the run never raises)."""
    return Criterion(name, f"not testable: {why}", "not testable", expr)


def _side(value: float, reference: float) -> int:
    return 0 if value == reference or math.isnan(value) else (1 if value > reference else -1)


def same_direction(run, paper, reference: float = 0.0, interval=None) -> Criterion:
    """The run's value lies on the paper's side of ``reference`` (a sign, a direction, an improvement).

    Rule: *reproduced* when the run's value is on the same side of the reference as the paper's and, where
    the run has an interval, the whole interval is; *partly* when the value is on that side but its
    interval reaches the reference; otherwise *not reproduced* (the other side, or on the reference).

    Examples
    --------
    >>> same_direction(-1.7, -1.2).verdict, same_direction(-1.7, -1.2, interval=(-3.0, 0.4)).verdict
    ('reproduced', 'partly')
    >>> same_direction(0.5, -1.2).verdict, same_direction(float("nan"), -1.2).verdict
    ('not reproduced', 'not testable')
    """
    run, paper, reference = (
        _number(n, v) for n, v in (("run", run), ("paper", paper), ("reference", reference))
    )
    ci = _interval(interval)
    want = _side(paper, reference)
    if want == 0:
        raise ValueError(
            f"the paper's value {paper} lies on the reference {reference}: no direction to compare"
        )
    if math.isnan(run):
        return _untestable(
            "same_direction", "the run's value is not a number", f"same_direction(nan, {_fmt(paper)})"
        )
    if _side(run, reference) != want:
        verdict = "not reproduced"
    elif ci is not None and not (_side(ci[0], reference) == want and _side(ci[1], reference) == want):
        verdict = "partly"
    else:
        verdict = "reproduced"
    rule = (
        f"reproduced when the run's value is on the paper's side of {_fmt(reference)}"
        + (" with its whole interval" if ci is not None else "")
        + ("; partly when its interval reaches " + _fmt(reference) if ci is not None else "")
        + "; otherwise not reproduced"
    )
    expr = f"same_direction({_fmt(run)}, {_fmt(paper)}, reference={_fmt(reference)}" + (
        f", interval={_fmt(list(ci))})" if ci is not None else ")"
    )
    return Criterion("same_direction", rule, verdict, expr)


def matches(run, paper, tol=None, interval=None, reference: float = 0.0) -> Criterion:
    """The run's value matches the paper's: within ``tol`` of it, or the paper's value inside the run's interval.

    Rule: *reproduced* when ``|run − paper| <= tol`` (or, given an interval instead, the paper's value lies in
    it); *partly* when not, but both lie on the same side of ``reference`` (the same direction); otherwise
    *not reproduced*.

    Examples
    --------
    >>> matches(1.69, 1.70, tol=0.02).verdict, matches(1.5, 1.7, tol=0.02, reference=1).verdict
    ('reproduced', 'partly')
    >>> matches(9.1, 11.7, interval=(8.0, 10.2)).verdict, matches(-2.0, 11.7, interval=(-3, -1)).verdict
    ('partly', 'not reproduced')
    """
    run, paper, reference = (
        _number(n, v) for n, v in (("run", run), ("paper", paper), ("reference", reference))
    )
    if (tol is None) == (interval is None):
        raise ValueError("matches takes a tolerance or an interval (one of them)")
    ci = _interval(interval)
    if math.isnan(run) or (interval is not None and ci is None):
        what = (
            "the run's value is not a number"
            if math.isnan(run)
            else "the run's interval could not be computed"
        )
        return _untestable("matches", what, f"matches({_fmt(run)}, {_fmt(paper)})")
    if tol is not None:
        tol = _number("tol", tol)
        if tol < 0 or math.isnan(tol):
            raise ValueError(f"tol must be >= 0, got {tol}")
        close = abs(run - paper) <= tol
        how = f"within {_fmt(tol)} of the paper's value"
    else:
        assert ci is not None  # one of the two was given (checked above)
        close = ci[0] <= paper <= ci[1]
        how = "the paper's value inside the run's interval"
    same = _side(run, reference) == _side(paper, reference) != 0
    verdict = "reproduced" if close else "partly" if same else "not reproduced"
    rule = (
        f"reproduced when {how}; partly when both lie on the same side of {_fmt(reference)}; "
        "otherwise not reproduced"
    )
    args = f"tol={_fmt(tol)}" if ci is None else f"interval={_fmt(list(ci))}"
    return Criterion(
        "matches", rule, verdict, f"matches({_fmt(run)}, {_fmt(paper)}, {args}, reference={_fmt(reference)})"
    )


def holds_in(count: int, total: int, majority: float = 0.5) -> Criterion:
    """A statement the paper makes of every case ("always", "consistently"), counted over the run's cases.

    Rule: *reproduced* when it holds in every case; *partly* when in more than ``majority`` of them;
    otherwise *not reproduced*.

    Examples
    --------
    >>> holds_in(5, 5).verdict, holds_in(4, 5).verdict, holds_in(1, 5).verdict, holds_in(0, 0).verdict
    ('reproduced', 'partly', 'not reproduced', 'not testable')
    """
    if not 0 <= int(count) <= int(total):
        raise ValueError(f"holds_in needs 0 <= count <= total, got {count} of {total}")
    if int(total) == 0:
        return _untestable("holds_in", "the run has no case to count", "holds_in(0, 0)")
    share = int(count) / int(total)
    verdict = "reproduced" if count == total else "partly" if share > majority else "not reproduced"
    rule = f"reproduced when it holds in every case; partly in more than {majority:.0%} of them; otherwise not reproduced"
    return Criterion(
        "holds_in", rule, verdict, f"holds_in({int(count)}, {int(total)}, majority={_fmt(majority)})"
    )


def same_members(run: Iterable, paper: Iterable) -> Criterion:
    """The run picks out the same members as the paper (the most resilient perturbations, the top confusion).

    Rule: *reproduced* when the run's set equals the paper's; *partly* when they share at least one member;
    otherwise *not reproduced*.

    Examples
    --------
    >>> same_members(["fog", "contrast"], ["contrast", "fog"]).verdict, same_members(["fog"], ["fog", "snow"]).verdict
    ('reproduced', 'partly')
    """
    a, b = [str(x) for x in run], [str(x) for x in paper]
    if not b:
        raise ValueError("same_members needs the paper's members")
    if not a:
        return _untestable(
            "same_members", "the run picked out no member", f"same_members([], {_fmt(sorted(b))})"
        )
    shared = set(a) & set(b)
    verdict = "reproduced" if set(a) == set(b) else "partly" if shared else "not reproduced"
    rule = "reproduced when the run's members are the paper's; partly when they share one; otherwise not reproduced"
    return Criterion("same_members", rule, verdict, f"same_members({_fmt(sorted(a))}, {_fmt(sorted(b))})")


def not_testable(reason: str) -> Criterion:
    """A finding this run cannot test, and why (no such data, no such model, a quantity not measured here).

    Examples
    --------
    >>> not_testable("the world has no Flickr dates").verdict
    'not testable'
    """
    if not isinstance(reason, str) or len(reason.split()) < 3:
        raise ValueError("not_testable needs a reason of at least three words")
    return Criterion("not_testable", f"not testable: {reason}", "not testable", f"not_testable({reason!r})")


#: The criteria a finding may use: a verdict comes from one of these rules, or from none.
CRITERIA = {f.__name__: f for f in (same_direction, matches, holds_in, same_members, not_testable)}


@dataclass(frozen=True)
class Finding:
    """One of a paper's results as this run tested it.

    Attributes
    ----------
    id : str
        Stable identifier (the same id in another chapter, such as your-replication, tests the same finding).
    paper : str
        The paper's key in ``book/references.bib``.
    where : str
        The place in the paper (``Table 1``, ``§4.2``).
    statement : str
        The paper's statement, quoted.
    quantity : str
        What is compared, in words (with its unit).
    paper_value : object
        The paper's value (a number, or a short text where the finding is qualitative).
    run_value : object
        This run's value.
    criterion : Criterion
        The rule and the verdict it gave.
    interval : tuple or None
        The run's interval for ``run_value`` (95% unless ``quantity`` says otherwise).
    section : str
        The chapter section that shows it (its heading), for links from the book's overview.
    """

    id: str
    paper: str
    where: str
    statement: str
    quantity: str
    paper_value: object
    run_value: object
    criterion: Criterion
    interval: tuple | None = None
    section: str = ""
    chapter: str = field(default="", compare=False)

    @property
    def verdict(self) -> str:
        """The verdict the criterion gave."""
        return self.criterion.verdict

    def __format__(self, spec: str) -> str:
        """The words of a sentence that compares the run with the paper, chosen by the verdict.

        ``{finding}`` is the verdict itself; ``{finding:A|B|C|D}`` gives ``A`` when reproduced, ``B`` when
        partly, ``C`` when not reproduced and ``D`` when not testable (a missing choice falls back to the
        previous one).

        Examples
        --------
        >>> f = Finding("x", "p", "Table 1", "s", "q", 1.0, 1.1, matches(1.1, 1.0, tol=0.2))
        >>> f"{f}", f"{f:as in the paper|partly as in the paper|unlike the paper}"
        ('reproduced', 'as in the paper')
        """
        if not spec:
            return self.verdict
        choices = spec.split("|")
        i = VERDICTS.index(self.verdict)
        return choices[min(i, len(choices) - 1)]

    def as_record(self) -> dict:
        """The entry of ``results.json``'s ``findings`` list."""
        return {
            "id": self.id,
            "paper": self.paper,
            "where": self.where,
            "statement": self.statement,
            "quantity": self.quantity,
            "paper_value": self.paper_value,
            "run_value": self.run_value,
            "interval": list(self.interval) if self.interval is not None else None,
            "criterion": self.criterion.rule,
            "test": self.criterion.expr,
            "verdict": self.verdict,
            "section": self.section,
        }


def verdict_counts(findings: Sequence[dict]) -> dict[str, int]:
    """How many findings got each verdict (every verdict listed, in :data:`VERDICTS` order).

    Examples
    --------
    >>> verdict_counts([{"verdict": "reproduced"}, {"verdict": "partly"}, {"verdict": "reproduced"}])
    {'reproduced': 2, 'partly': 1, 'not reproduced': 0, 'not testable': 0}
    """
    return {v: sum(1 for f in findings if f["verdict"] == v) for v in VERDICTS}


def changed_verdicts(before: Sequence[dict], after: Sequence[dict]) -> list[str]:
    """The findings whose verdict differs between two runs of a chapter, one line each.

    Examples
    --------
    >>> changed_verdicts([{"id": "a", "verdict": "reproduced"}], [{"id": "a", "verdict": "partly"}, {"id": "b", "verdict": "partly"}])
    ['a: reproduced -> partly', 'b: (new) -> partly']
    """
    old = {f["id"]: f["verdict"] for f in before}
    return [
        f"{f['id']}: {old.get(f['id'], '(new)')} -> {f['verdict']}"
        for f in after
        if old.get(f["id"]) != f["verdict"]
    ]
