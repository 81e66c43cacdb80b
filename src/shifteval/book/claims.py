"""Comparisons as data: the test of a claim and the words that state it, from one expression.

A chapter states a result-dependent sentence with :meth:`shifteval.book.results.Results.claim`; its
condition is one of the helpers below (or several joined with ``&``), never a bare ``a > b`` that
can drift from the words. Each helper

- evaluates the comparison with the margin that makes the sentence's words true (``above(a, b,
  by="well")`` holds only when ``a`` is at least 1.5 times ``b``);
- records itself, with its arguments as evaluated, as the claim's ``test`` in ``results.json``
  (``above(0.521, 0.4, by=0.05)``);
- carries its operands into the sentence: ``{test.a:.2f}`` and ``{test.b:.2f}`` (``{test[1].a}`` for
  the second of joined tests) are the compared values, so each value is named once, in the test;
- gives the sentence its comparative words: ``{test:larger than}`` in the claim's text becomes
  ``much larger than`` when the margin is ``"much"``, so a margin cannot be dropped from the test
  while the words keep it.

The named margins are written once, in :data:`MARGINS`, and listed in the book's *Reproducing* page.
A condition no helper states (an identity of two tables, a property computed by the library) is
passed through :func:`fact` with the reason why; at most one claim in ten of a chapter may be one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Margin:
    """A named margin: the words it licenses and the ratio (for magnitudes) it requires.

    Attributes
    ----------
    adverb : str
        The word put before the comparative ("well", "much").
    factor : float
        ``above(a, b, by=name)`` requires ``a >= factor * b``; ``below`` requires ``a <= b / factor``.
    """

    adverb: str
    factor: float


#: Named margins for comparisons of positive magnitudes (errors, widths, fractions, counts).
MARGINS: dict[str, Margin] = {
    "clearly": Margin("clearly", 1.2),  # "clearly above": at least 20% more
    "well": Margin("well", 1.5),  # "well above / well below": at least 1.5 times / at most 2/3
    "much": Margin("much", 2.0),  # "much larger / much smaller": at least twice / at most half
    "far": Margin("far", 10.0),  # "far below", "an order of magnitude": at least ten times
}

#: What "about" means when no tolerance is given: within 10% of the target's magnitude.
ABOUT_REL = 0.10


def _fmt(value) -> str:
    """A value as a test expression shows it (floats to 6 significant digits)."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)):
        return "nan" if math.isnan(value) else f"{float(value):.6g}"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_fmt(k)}: {_fmt(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (Sequence, np.ndarray)):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return repr(value)


def _number(name: str, value) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    return out


@dataclass(frozen=True)
class Check:
    """A comparison evaluated on a run's numbers.

    Attributes
    ----------
    expr : str
        The helper and its arguments as evaluated (``above(0.521, 0.4, by=0.05)``).
    holds : bool
        Whether the comparison is true.
    words : str
        The words the comparison licenses when the text gives none (``{test}``).
    adverb : str
        The margin's adverb, put before a comparative given in the text (``{test:larger than}``).
    parts : tuple
        The tests joined with ``&`` (empty for a single test).
    why : str
        For a bare condition (:func:`fact`), why no helper states it.
    operands : tuple
        The compared values as given (``above(a, b)``: ``(a, b)``), so that the sentence names them
        once: ``{test.a:.2f}``, ``{test.b:.2f}``, ``{test.c}`` (a joined test's parts:
        ``{test[1].a:.1%}``).
    """

    expr: str
    holds: bool
    words: str = ""
    adverb: str = ""
    parts: tuple = ()
    why: str = ""
    operands: tuple = ()

    def _operand(self, i: int):
        if i >= len(self.operands):
            raise ValueError(
                f"the test {self.expr} has {len(self.operands)} operand(s); the sentence asks for #{i + 1}"
            )
        return self.operands[i]

    @property
    def a(self):
        """The first compared value (``x`` of ``at_least(x, lo)``)."""
        return self._operand(0)

    @property
    def b(self):
        """The second compared value (the bound, target or reference)."""
        return self._operand(1)

    @property
    def c(self):
        """The third compared value (``hi`` of ``within(x, lo, hi)``)."""
        return self._operand(2)

    def __bool__(self) -> bool:
        return self.holds

    def __and__(self, other: Check) -> Check:
        if not isinstance(other, Check):
            raise ValueError(f"a test can only be joined with another test, got {type(other).__name__}")
        parts = (self.parts or (self,)) + (other.parts or (other,))
        why = "; ".join(p.why for p in parts if p.why)
        return Check(" & ".join(p.expr for p in parts), all(p.holds for p in parts), "", "", parts, why)

    def __getitem__(self, i: int) -> Check:
        return (self.parts or (self,))[i]

    def __format__(self, spec: str) -> str:
        if not spec:
            return self.words
        return f"{self.adverb} {spec}".strip()

    def __str__(self) -> str:
        return self.words


def _margin(a: float, b: float, by, sense: str) -> tuple[bool, str, str]:
    """The comparison ``a`` (above|below) ``b`` with margin ``by``: (holds, expression tail, adverb)."""
    if isinstance(by, str):
        if by not in MARGINS:
            raise ValueError(f"unknown margin {by!r}; expected one of {sorted(MARGINS)} or a number")
        if not b > 0:
            raise ValueError(f"the named margin {by!r} compares positive magnitudes; got b = {b!r}")
        m = MARGINS[by]
        ok = a >= m.factor * b if sense == "above" else a <= b / m.factor
        return bool(ok), f", by={by!r} (x{m.factor:g})", m.adverb
    by = _number("by", by)
    if by < 0:
        raise ValueError(f"the margin by must be >= 0, got {by}")
    ok = a > b + by if sense == "above" else a < b - by
    return bool(ok), (f", by={_fmt(by)}" if by else ""), ""


def above(a: float, b: float, by: float | str = 0.0) -> Check:
    """``a`` is above ``b`` by more than the margin ``by``.

    Parameters
    ----------
    a, b : float
        The compared numbers.
    by : float or str
        An absolute margin (``a > b + by``), or a named margin of :data:`MARGINS` for positive
        magnitudes (``"much"``: ``a >= 2 b``).

    Returns
    -------
    Check
        ``{test}`` reads "above", ``{test:larger than}`` "much larger than" for ``by="much"``.

    Examples
    --------
    >>> t = above(0.521, 0.400, by=0.05)
    >>> t.holds, t.expr
    (True, 'above(0.521, 0.4, by=0.05)')
    >>> above(0.401, 0.400, by=0.05).holds
    False
    >>> "{t.a:.3f} is above {t.b:.1f}".format(t=t)
    '0.521 is above 0.4'
    >>> f"{above(9.0, 4.0, by='much'):larger than}"
    'much larger than'
    """
    a, b = _number("a", a), _number("b", b)
    ok, tail, adverb = _margin(a, b, by, "above")
    return Check(f"above({_fmt(a)}, {_fmt(b)}{tail})", ok, f"{adverb} above".strip(), adverb, operands=(a, b))


def below(a: float, b: float, by: float | str = 0.0) -> Check:
    """``a`` is below ``b`` by more than the margin ``by``.

    Parameters
    ----------
    a, b : float
        The compared numbers.
    by : float or str
        An absolute margin (``a < b - by``), or a named margin of :data:`MARGINS` for positive
        magnitudes (``"well"``: ``a <= b / 1.5``).

    Returns
    -------
    Check
        ``{test}`` reads "below", ``{test:smaller than}`` "well smaller than" for ``by="well"``.

    Examples
    --------
    >>> below(0.1, 0.4, by="well").holds, below(0.3, 0.4, by="well").holds
    (True, False)
    >>> below(0.3, 0.4, by="well").expr
    "below(0.3, 0.4, by='well' (x1.5))"
    """
    a, b = _number("a", a), _number("b", b)
    ok, tail, adverb = _margin(a, b, by, "below")
    return Check(f"below({_fmt(a)}, {_fmt(b)}{tail})", ok, f"{adverb} below".strip(), adverb, operands=(a, b))


def at_least(x: float, lo: float) -> Check:
    """``x >= lo``.

    Parameters
    ----------
    x, lo : float
        The number and its lower bound.

    Returns
    -------
    Check
        ``{test}`` reads "at least".

    Examples
    --------
    >>> at_least(0.9, 0.9).holds, at_least(0.9, 0.9).expr
    (True, 'at_least(0.9, 0.9)')
    """
    x, lo = _number("x", x), _number("lo", lo)
    return Check(f"at_least({_fmt(x)}, {_fmt(lo)})", bool(x >= lo), "at least", operands=(x, lo))


def at_most(x: float, hi: float) -> Check:
    """``x <= hi``.

    Parameters
    ----------
    x, hi : float
        The number and its upper bound.

    Returns
    -------
    Check
        ``{test}`` reads "at most".

    Examples
    --------
    >>> at_most(0.006, 0.01).holds
    True
    """
    x, hi = _number("x", x), _number("hi", hi)
    return Check(f"at_most({_fmt(x)}, {_fmt(hi)})", bool(x <= hi), "at most", operands=(x, hi))


def within(x: float, lo: float, hi: float) -> Check:
    """``lo <= x <= hi``: a number inside an interval (an interval that contains a value).

    Parameters
    ----------
    x : float
        The number.
    lo, hi : float
        The interval's ends, ``lo <= hi``.

    Returns
    -------
    Check
        ``{test}`` reads "within".

    Examples
    --------
    >>> within(1.0, 0.95, 1.08).holds, within(1.0, 1.01, 1.08).holds
    (True, False)
    """
    x, lo, hi = _number("x", x), _number("lo", lo), _number("hi", hi)
    if lo > hi:
        raise ValueError(f"within needs lo <= hi, got [{lo}, {hi}]")
    return Check(
        f"within({_fmt(x)}, {_fmt(lo)}, {_fmt(hi)})", bool(lo <= x <= hi), "within", operands=(x, lo, hi)
    )


def outside(x: float, lo: float, hi: float) -> Check:
    """``x < lo`` or ``x > hi``: a number outside an interval (an interval that excludes a value).

    Parameters
    ----------
    x : float
        The number.
    lo, hi : float
        The interval's ends, ``lo <= hi``.

    Returns
    -------
    Check
        ``{test}`` reads "outside".

    Examples
    --------
    >>> outside(1.0, 1.01, 1.08).holds
    True
    """
    x, lo, hi = _number("x", x), _number("lo", lo), _number("hi", hi)
    if lo > hi:
        raise ValueError(f"outside needs lo <= hi, got [{lo}, {hi}]")
    return Check(
        f"outside({_fmt(x)}, {_fmt(lo)}, {_fmt(hi)})", bool(x < lo or x > hi), "outside", operands=(x, lo, hi)
    )


def about(x: float, target: float, rel: float | None = None, tol: float | None = None) -> Check:
    """``x`` is about ``target``: within ``tol`` (absolute) or ``rel`` times ``|target|``.

    Parameters
    ----------
    x, target : float
        The number and the value it is said to be about.
    rel : float, optional
        Relative tolerance; by default :data:`ABOUT_REL` (10%) when ``tol`` is not given.
    tol : float, optional
        Absolute tolerance (same units as ``x``), for "within rounding" or a stated distance.

    Returns
    -------
    Check
        ``{test}`` reads "about".

    Examples
    --------
    >>> about(0.95, 1.0).holds, about(0.85, 1.0).holds
    (True, False)
    >>> about(1.694, 1.69, tol=0.006).expr
    'about(1.694, 1.69, tol=0.006)'
    """
    x, target = _number("x", x), _number("target", target)
    if rel is not None and tol is not None:
        raise ValueError("about takes rel or tol, not both")
    if tol is None:
        rel = ABOUT_REL if rel is None else _number("rel", rel)
        if rel < 0:
            raise ValueError(f"rel must be >= 0, got {rel}")
        bound, tail = rel * abs(target), f", rel={_fmt(rel)}"
    else:
        bound, tail = _number("tol", tol), f", tol={_fmt(tol)}"
        if bound < 0:
            raise ValueError(f"tol must be >= 0, got {bound}")
    ok = abs(x - target) <= bound * (1 + 1e-9) + 1e-12  # a printed bound of 0.1 admits 1.1 - 1.0
    return Check(f"about({_fmt(x)}, {_fmt(target)}{tail})", bool(ok), "about", operands=(x, target))


def equal(a, b) -> Check:
    """``a == b`` exactly: counts, labels, rounded values compared as printed.

    Parameters
    ----------
    a, b : object
        The compared values (numbers, strings, lists).

    Returns
    -------
    Check
        ``{test}`` reads "equal to".

    Examples
    --------
    >>> equal([88.6, 91.3], [88.6, 91.3]).holds, equal(3, 4).expr
    (True, 'equal(3, 4)')
    """
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        ok = bool(np.array_equal(a, b))
    else:
        ok = bool(a == b)
    return Check(f"equal({_fmt(a)}, {_fmt(b)})", ok, "equal to", operands=(a, b))


def monotone(seq: Iterable[float], direction: str = "increasing", strict: bool = True) -> Check:
    """Every step of ``seq`` goes in ``direction``: a trend, not two endpoints.

    Parameters
    ----------
    seq : iterable of float
        The values in order; with fewer than three (one comparison, not a trend) the test fails.
    direction : {"increasing", "decreasing"}
        The direction every step must take.
    strict : bool
        Whether equal neighbours break the trend.

    Returns
    -------
    Check
        ``{test}`` reads "rises" or "falls" at every step.

    Examples
    --------
    >>> monotone([1.0, 2.0, 2.5]).holds, monotone([3, 2, 2], "decreasing").holds, monotone([1, 2]).holds
    (True, False, False)
    >>> monotone([3, 2, 2], "decreasing", strict=False).expr
    "monotone([3, 2, 2], 'decreasing', strict=False)"
    """
    values = [_number("seq[i]", v) for v in seq]
    if direction not in ("increasing", "decreasing"):
        raise ValueError(f"direction must be 'increasing' or 'decreasing', got {direction!r}")
    steps = np.diff(values) * (1 if direction == "increasing" else -1)
    # fewer than three values are one comparison, not a trend: the claim does not hold
    ok = len(values) >= 3 and bool((steps > 0).all() if strict else (steps >= 0).all())
    words = "rises" if direction == "increasing" else "falls"
    tail = "" if strict else ", strict=False"
    return Check(f"monotone({_fmt(values)}, {direction!r}{tail})", ok, words)


def ranks_first(scores: Mapping[str, float], key: str, highest: bool = True) -> Check:
    """``key`` has the highest (or lowest) score of all.

    Parameters
    ----------
    scores : mapping of str to float
        The candidates and their scores (at least two).
    key : str
        The candidate said to rank first.
    highest : bool
        Whether first means the highest score (else the lowest).

    Returns
    -------
    Check
        ``{test}`` reads "the highest" or "the lowest".

    Examples
    --------
    >>> ranks_first({"a": 0.9, "b": 0.7}, "a").holds, ranks_first({"a": 0.9, "b": 0.7}, "a", highest=False).holds
    (True, False)
    """
    scores = {str(k): _number(f"scores[{k!r}]", v) for k, v in dict(scores).items()}
    if len(scores) < 2 or key not in scores:
        raise ValueError(f"ranks_first needs at least two scores including {key!r}, got {sorted(scores)}")
    best = (max if highest else min)(scores, key=scores.__getitem__)
    others = [v for k, v in scores.items() if k != key]
    ok = scores[key] > max(others) if highest else scores[key] < min(others)
    tail = "" if highest else ", highest=False"
    return Check(
        f"ranks_first({_fmt(scores)}, {key!r}{tail})",
        bool(ok and best == key),
        "the highest" if highest else "the lowest",
    )


def every(tests: Iterable[Check]) -> Check:
    """All of ``tests`` hold: the same comparison for every member of a group.

    Parameters
    ----------
    tests : iterable of Check
        One test per member (at least one).

    Returns
    -------
    Check
        ``{test}`` reads as the first member's words.

    Examples
    --------
    >>> t = every(above(x, 0.95) for x in (0.97, 0.99))
    >>> t.holds, t.expr
    (True, 'every[above(0.97, 0.95), above(0.99, 0.95)]')
    """
    parts = tuple(tests)
    if not parts or not all(isinstance(t, Check) for t in parts):
        raise ValueError("every needs at least one Check")
    return Check(
        "every[" + ", ".join(t.expr for t in parts) + "]",
        all(t.holds for t in parts),
        parts[0].words,
        parts[0].adverb,
    )


def fact(condition, why: str) -> Check:
    """A bare condition that no helper states, with the reason why; recorded as ``bool``.

    Parameters
    ----------
    condition : bool
        The condition, evaluated on the run's results.
    why : str
        Why no comparison helper fits (at least a few words).

    Returns
    -------
    Check
        ``expr`` is ``"bool"``.

    Examples
    --------
    >>> fact(True, why="an identity of two tables computed by the library").expr
    'bool'
    """
    if not isinstance(why, str) or len(why.split()) < 3:
        raise ValueError("fact needs a reason (why=...) of at least three words")
    if isinstance(condition, np.ndarray):
        raise ValueError("the condition is an array; reduce it with .all() or .any()")
    return Check("bool", bool(condition), "", "", (), why)
