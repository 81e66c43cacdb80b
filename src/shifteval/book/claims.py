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

**A value never makes a helper raise.** Where an operand makes the comparison meaningless -- a
magnitude compared by a named margin that is zero on both sides or negative, a value that is not a
number (NaN), two infinities, an empty interval, a tie for first place, fewer values than a trend or
a group needs -- the helper returns a :class:`Check` that does not hold and whose :attr:`Check.found`
says what the run found instead ("both values are 0", "a tie between 'a' and 'b'"), so that a chapter
can state that finding, or leave the sentence out with its reason, rather than crash or print a
comparison that means nothing. Only invalid *arguments* raise ``ValueError``: an unknown margin name,
a negative or NaN tolerance, a direction that is neither way, a non-number where a number is expected.
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
    found : str
        Empty when the comparison means something; otherwise what the run found instead, in words
        ("both values are 0", "a is not a number"): an operand made the comparison meaningless, and
        the check does not hold. A joined test lists its parts' findings.
    """

    expr: str
    holds: bool
    words: str = ""
    adverb: str = ""
    parts: tuple = ()
    why: str = ""
    operands: tuple = ()
    found: str = ""

    def __post_init__(self):
        object.__setattr__(self, "holds", bool(self.holds))  # numpy booleans recorded as bool
        if self.found and self.holds:
            raise ValueError(f"a meaningless comparison cannot hold: {self.expr} ({self.found})")

    @property
    def meaningful(self) -> bool:
        """Whether every operand allows the comparison (:attr:`found` is empty)."""
        return not self.found

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
        found = "; ".join(p.found for p in parts if p.found)
        return Check(
            " & ".join(p.expr for p in parts), all(p.holds for p in parts), "", "", parts, why, found=found
        )

    def __getitem__(self, i: int) -> Check:
        return (self.parts or (self,))[i]

    def __format__(self, spec: str) -> str:
        if not spec:
            return self.words
        return f"{self.adverb} {spec}".strip()

    def __str__(self) -> str:
        return self.words


def _found(names: Sequence[str], values: Sequence[float]) -> str:
    """What makes a comparison of these numbers meaningless ("" when nothing does): NaN, two equal infinities."""
    nan = [n for n, v in zip(names, values, strict=True) if math.isnan(v)]
    if nan:
        return f"{' and '.join(nan)} {'is' if len(nan) == 1 else 'are'} not a number"
    for sign in (math.inf, -math.inf):
        same = [n for n, v in zip(names, values, strict=True) if v == sign]
        if len(same) >= 2:
            return f"{' and '.join(same)} are both {_fmt(sign)}: infinities do not compare"
    return ""


def _magnitudes(a: float, b: float) -> str:
    """What keeps ``a`` and ``b`` from being compared as a ratio of magnitudes ("" when nothing does)."""
    negative = [f"{n} = {_fmt(v)}" for n, v in (("a", a), ("b", b)) if v < 0]
    if negative:
        return f"{' and '.join(negative)} {'is' if len(negative) == 1 else 'are'} negative, not a magnitude"
    if a == 0 and b == 0:
        return "both values are 0"
    return ""


def _check(expr: str, holds, words: str, adverb: str = "", operands: tuple = (), found: str = "") -> Check:
    """A check; a meaningless one does not hold and shows what was found in its expression."""
    if found:
        return Check(f"{expr} [{found}]", False, words, adverb, operands=operands, found=found)
    return Check(expr, bool(holds), words, adverb, operands=operands)


def _margin(a: float, b: float, by, sense: str) -> tuple[bool, str, str, str]:
    """The comparison ``a`` (above|below) ``b`` with margin ``by``: (holds, expression tail, adverb, found)."""
    if isinstance(by, str):
        if by not in MARGINS:
            raise ValueError(f"unknown margin {by!r}; expected one of {sorted(MARGINS)} or a number")
        m = MARGINS[by]
        tail = f", by={by!r} (x{m.factor:g})"
        found = _found(("a", "b"), (a, b)) or _magnitudes(a, b)
        if found:  # a ratio of magnitudes needs two magnitudes, not both zero
            return False, tail, m.adverb, found
        ok = a >= m.factor * b if sense == "above" else a <= b / m.factor
        return bool(ok), tail, m.adverb, ""
    by = _number("by", by)
    if not by >= 0:  # NaN included
        raise ValueError(f"the margin by must be >= 0, got {by}")
    found = _found(("a", "b"), (a, b))
    ok = not found and (a > b + by if sense == "above" else a < b - by)
    return bool(ok), (f", by={_fmt(by)}" if by else ""), "", found


def above(a: float, b: float, by: float | str = 0.0) -> Check:
    """``a`` is above ``b`` by more than the margin ``by``.

    Parameters
    ----------
    a, b : float
        The compared numbers.
    by : float or str
        An absolute margin (``a > b + by``), or a named margin of :data:`MARGINS` for magnitudes
        (``"much"``: ``a >= 2 b``).

    Returns
    -------
    Check
        ``{test}`` reads "above", ``{test:larger than}`` "much larger than" for ``by="much"``. It does
        not hold, with :attr:`Check.found` saying why, when ``a`` or ``b`` is NaN, both are the same
        infinity, or a named margin meets a negative value or two zeros.

    Raises
    ------
    ValueError
        For an unknown margin name, a negative or NaN margin, or an operand that is not a number.

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
    >>> t = above(0.0, 0.0, by="much")
    >>> t.holds, t.found
    (False, 'both values are 0')
    """
    a, b = _number("a", a), _number("b", b)
    ok, tail, adverb, found = _margin(a, b, by, "above")
    return _check(f"above({_fmt(a)}, {_fmt(b)}{tail})", ok, f"{adverb} above".strip(), adverb, (a, b), found)


def below(a: float, b: float, by: float | str = 0.0) -> Check:
    """``a`` is below ``b`` by more than the margin ``by``.

    Parameters
    ----------
    a, b : float
        The compared numbers.
    by : float or str
        An absolute margin (``a < b - by``), or a named margin of :data:`MARGINS` for magnitudes
        (``"well"``: ``a <= b / 1.5``).

    Returns
    -------
    Check
        ``{test}`` reads "below", ``{test:smaller than}`` "well smaller than" for ``by="well"``; not
        holding, with :attr:`Check.found`, where :func:`above` would not.

    Examples
    --------
    >>> below(0.1, 0.4, by="well").holds, below(0.3, 0.4, by="well").holds
    (True, False)
    >>> below(0.3, 0.4, by="well").expr
    "below(0.3, 0.4, by='well' (x1.5))"
    >>> below(0.0, 0.0, by="much").expr  # no image unmatched by either algorithm: no ratio to state
    "below(0, 0, by='much' (x2)) [both values are 0]"
    """
    a, b = _number("a", a), _number("b", b)
    ok, tail, adverb, found = _margin(a, b, by, "below")
    return _check(f"below({_fmt(a)}, {_fmt(b)}{tail})", ok, f"{adverb} below".strip(), adverb, (a, b), found)


def at_least(x: float, lo: float) -> Check:
    """``x >= lo``.

    Parameters
    ----------
    x, lo : float
        The number and its lower bound.

    Returns
    -------
    Check
        ``{test}`` reads "at least"; it does not hold (:attr:`Check.found`) on NaN or two equal
        infinities.

    Examples
    --------
    >>> at_least(0.9, 0.9).holds, at_least(0.9, 0.9).expr
    (True, 'at_least(0.9, 0.9)')
    >>> at_least(float("nan"), 0.9).found
    'x is not a number'
    """
    x, lo = _number("x", x), _number("lo", lo)
    found = _found(("x", "lo"), (x, lo))
    return _check(f"at_least({_fmt(x)}, {_fmt(lo)})", x >= lo, "at least", "", (x, lo), found)


def at_most(x: float, hi: float) -> Check:
    """``x <= hi``.

    Parameters
    ----------
    x, hi : float
        The number and its upper bound.

    Returns
    -------
    Check
        ``{test}`` reads "at most"; it does not hold (:attr:`Check.found`) on NaN or two equal
        infinities.

    Examples
    --------
    >>> at_most(0.006, 0.01).holds
    True
    """
    x, hi = _number("x", x), _number("hi", hi)
    found = _found(("x", "hi"), (x, hi))
    return _check(f"at_most({_fmt(x)}, {_fmt(hi)})", x <= hi, "at most", "", (x, hi), found)


def _interval(x, lo, hi) -> tuple[float, float, float, str]:
    """The operands of :func:`within` and :func:`outside`, and what makes the interval meaningless."""
    x, lo, hi = _number("x", x), _number("lo", lo), _number("hi", hi)
    found = _found(("x", "lo", "hi"), (x, lo, hi))
    if not found and lo > hi:
        found = f"the interval [{_fmt(lo)}, {_fmt(hi)}] is empty"
    return x, lo, hi, found


def within(x: float, lo: float, hi: float) -> Check:
    """``lo <= x <= hi``: a number inside an interval (an interval that contains a value).

    Parameters
    ----------
    x : float
        The number.
    lo, hi : float
        The interval's ends.

    Returns
    -------
    Check
        ``{test}`` reads "within". An empty interval (``lo > hi``) or a NaN contains nothing: the
        check does not hold and :attr:`Check.found` says so.

    Examples
    --------
    >>> within(1.0, 0.95, 1.08).holds, within(1.0, 1.01, 1.08).holds
    (True, False)
    >>> within(1.0, 2.0, 1.0).found
    'the interval [2, 1] is empty'
    """
    x, lo, hi, found = _interval(x, lo, hi)
    return _check(
        f"within({_fmt(x)}, {_fmt(lo)}, {_fmt(hi)})", lo <= x <= hi, "within", "", (x, lo, hi), found
    )


def outside(x: float, lo: float, hi: float) -> Check:
    """``x < lo`` or ``x > hi``: a number outside an interval (an interval that excludes a value).

    Parameters
    ----------
    x : float
        The number.
    lo, hi : float
        The interval's ends.

    Returns
    -------
    Check
        ``{test}`` reads "outside"; like :func:`within`, meaningless on an empty interval or a NaN.

    Examples
    --------
    >>> outside(1.0, 1.01, 1.08).holds
    True
    """
    x, lo, hi, found = _interval(x, lo, hi)
    return _check(
        f"outside({_fmt(x)}, {_fmt(lo)}, {_fmt(hi)})", x < lo or x > hi, "outside", "", (x, lo, hi), found
    )


def _tolerance(name: str, value) -> float:
    value = _number(name, value)
    if not 0 <= value < math.inf:  # NaN included
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


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
        ``{test}`` reads "about". Meaningless (not holding, :attr:`Check.found`) when ``x`` or
        ``target`` is NaN or infinite, or when a relative tolerance is taken of a target of 0 and ``x``
        is not 0.

    Raises
    ------
    ValueError
        For both ``rel`` and ``tol``, or a tolerance that is negative, NaN or infinite.

    Examples
    --------
    >>> about(0.95, 1.0).holds, about(0.85, 1.0).holds
    (True, False)
    >>> about(1.694, 1.69, tol=0.006).expr
    'about(1.694, 1.69, tol=0.006)'
    >>> about(0.2, 0.0).found
    'a tolerance relative to a target of 0 is 0'
    """
    x, target = _number("x", x), _number("target", target)
    if rel is not None and tol is not None:
        raise ValueError("about takes rel or tol, not both")
    if tol is None:
        rel = _tolerance("rel", ABOUT_REL if rel is None else rel)
        bound, tail = rel * abs(target), f", rel={_fmt(rel)}"
    else:
        bound = _tolerance("tol", tol)
        tail = f", tol={_fmt(bound)}"
    found = _found(("x", "target"), (x, target))
    infinite = [n for n, v in (("x", x), ("target", target)) if math.isinf(v)]
    if not found and infinite:
        found = f"{' and '.join(infinite)} {'is' if len(infinite) == 1 else 'are'} infinite"
    if not found and tol is None and target == 0 and x != 0:
        found = "a tolerance relative to a target of 0 is 0"
    ok = abs(x - target) <= bound * (1 + 1e-9) + 1e-12  # a printed bound of 0.1 admits 1.1 - 1.0
    return _check(f"about({_fmt(x)}, {_fmt(target)}{tail})", ok, "about", "", (x, target), found)


def _has_nan(value) -> bool:
    try:
        return bool(np.isnan(np.asarray(value, dtype=float)).any())
    except (TypeError, ValueError):  # strings, mixed or ragged lists: no number to be NaN
        return False


def equal(a, b) -> Check:
    """``a == b`` exactly: counts, labels, rounded values compared as printed.

    Parameters
    ----------
    a, b : object
        The compared values (numbers, strings, lists).

    Returns
    -------
    Check
        ``{test}`` reads "equal to"; a NaN (equal to nothing) makes it meaningless (:attr:`Check.found`).

    Examples
    --------
    >>> equal([88.6, 91.3], [88.6, 91.3]).holds, equal(3, 4).expr
    (True, 'equal(3, 4)')
    """
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        ok = bool(np.array_equal(a, b))
    else:
        ok = a == b
        ok = bool(ok.all()) if isinstance(ok, np.ndarray) else bool(ok)
    nan = [n for n, v in (("a", a), ("b", b)) if _has_nan(v)]
    found = f"{' and '.join(nan)} {'holds' if len(nan) == 1 else 'hold'} NaN, equal to nothing" if nan else ""
    return _check(f"equal({_fmt(a)}, {_fmt(b)})", ok, "equal to", "", (a, b), found)


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
        ``{test}`` reads "rises" or "falls" at every step. Fewer than three values or a NaN among them
        make it meaningless: it does not hold and :attr:`Check.found` says which.

    Examples
    --------
    >>> monotone([1.0, 2.0, 2.5]).holds, monotone([3, 2, 2], "decreasing").holds, monotone([1, 2]).holds
    (True, False, False)
    >>> monotone([3, 2, 2], "decreasing", strict=False).expr
    "monotone([3, 2, 2], 'decreasing', strict=False)"
    >>> monotone([]).found
    'no values: no trend'
    """
    values = [_number("seq[i]", v) for v in seq]
    if direction not in ("increasing", "decreasing"):
        raise ValueError(f"direction must be 'increasing' or 'decreasing', got {direction!r}")
    # fewer than three values are one comparison, not a trend: the claim does not hold
    if not values:
        found = "no values: no trend"
    elif len(values) < 3:
        found = f"only {len(values)} value{'s' if len(values) > 1 else ''}: one comparison, not a trend"
    else:
        found = "a value is not a number" if any(math.isnan(v) for v in values) else ""
    with np.errstate(invalid="ignore"):  # two equal infinities step by NaN: not a step in the direction
        steps = np.diff(np.asarray(values, float)) * (1 if direction == "increasing" else -1)
        ok = bool((steps > 0).all() if strict else (steps >= 0).all())
    words = "rises" if direction == "increasing" else "falls"
    tail = "" if strict else ", strict=False"
    return _check(f"monotone({_fmt(values)}, {direction!r}{tail})", ok, words, found=found)


def ranks_first(scores: Mapping[str, float], key: str, highest: bool = True) -> Check:
    """``key`` has the highest (or lowest) score of all.

    Parameters
    ----------
    scores : mapping of str to float
        The candidates and their scores.
    key : str
        The candidate said to rank first.
    highest : bool
        Whether first means the highest score (else the lowest).

    Returns
    -------
    Check
        ``{test}`` reads "the highest" or "the lowest". With fewer than two candidates, ``key`` not
        among them, a NaN score, or a tie for first place, no candidate ranks first: the check does
        not hold and :attr:`Check.found` says what the run found.

    Examples
    --------
    >>> ranks_first({"a": 0.9, "b": 0.7}, "a").holds, ranks_first({"a": 0.9, "b": 0.7}, "a", highest=False).holds
    (True, False)
    >>> ranks_first({"a": 0.9, "b": 0.9, "c": 0.1}, "a").found
    "a tie for the highest between 'a' and 'b' (0.9)"
    """
    scores = {str(k): _number(f"scores[{k!r}]", v) for k, v in dict(scores).items()}
    key = str(key)
    words = "the highest" if highest else "the lowest"
    expr = f"ranks_first({_fmt(scores)}, {key!r}{'' if highest else ', highest=False'})"
    nan = sorted(k for k, v in scores.items() if math.isnan(v))
    if len(scores) < 2:
        found = f"{len(scores)} candidate{'' if len(scores) == 1 else 's'}: nothing to rank"
    elif key not in scores:
        found = f"{key!r} is not among the candidates {sorted(scores)}"
    elif nan:
        found = f"no score for {', '.join(repr(k) for k in nan)} (NaN)"
    else:
        found = ""
    if found:
        return _check(expr, False, words, found=found)
    best = (max if highest else min)(scores.values())
    first = [k for k, v in scores.items() if v == best]
    if key in first and len(first) > 1:
        names = " and ".join(repr(k) for k in first)
        return _check(expr, False, words, found=f"a tie for {words} between {names} ({_fmt(best)})")
    return _check(expr, first == [key], words)


def every(tests: Iterable[Check]) -> Check:
    """All of ``tests`` hold: the same comparison for every member of a group.

    Parameters
    ----------
    tests : iterable of Check
        One test per member.

    Returns
    -------
    Check
        ``{test}`` reads as the first member's words. An empty group has no member to hold: the check
        does not hold and :attr:`Check.found` says so; a member's own finding is listed too.

    Raises
    ------
    ValueError
        When a member is not a :class:`Check`.

    Examples
    --------
    >>> t = every(above(x, 0.95) for x in (0.97, 0.99))
    >>> t.holds, t.expr
    (True, 'every[above(0.97, 0.95), above(0.99, 0.95)]')
    >>> every([]).found
    'no members to compare'
    """
    parts = tuple(tests)
    if not all(isinstance(t, Check) for t in parts):
        raise ValueError("every takes Checks (one comparison per member)")
    if not parts:
        return _check("every[]", False, "", found="no members to compare")
    found = "; ".join(t.found for t in parts if t.found)
    return Check(
        "every[" + ", ".join(t.expr for t in parts) + "]",
        all(t.holds for t in parts),
        parts[0].words,
        parts[0].adverb,
        found=found,
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
