"""Every comparison helper over the values a run can produce: 0, equal operands, NaN, ±inf, empty groups.

A helper never raises on a value: it returns a :class:`shifteval.book.claims.Check` whose ``holds`` is a
bool and whose words render into a sentence; where an operand makes the comparison meaningless, the check
does not hold and ``found`` says what the run found instead. Only invalid arguments raise (an unknown
margin, a negative or NaN tolerance, a direction that is neither way).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shifteval.book import claims as C
from shifteval.book.results import Results

#: The values that break comparisons, and ordinary ones beside them.
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-300, 1e300, math.nan, math.inf, -math.inf]
VALUES = st.one_of(
    st.sampled_from(EDGES),
    st.sampled_from(EDGES).map(np.float64),
    st.integers(-3, 3),
    st.integers(-3, 3).map(np.int64),
    st.floats(allow_nan=True, allow_infinity=True),
)
MARGIN = st.one_of(st.sampled_from(sorted(C.MARGINS)), st.sampled_from([0.0, 0.05, 1.0]), st.floats(0, 1e6))


def _renders(t: C.Check) -> None:
    """A check any run can produce: a bool, words that format, a sentence that states it."""
    assert isinstance(t, C.Check) and type(t.holds) is bool
    assert isinstance(t.expr, str) and t.expr and isinstance(t.found, str)
    assert not (t.found and t.holds), t  # a meaningless comparison never holds
    assert t.meaningful == (not t.found)
    for text in (str(t), format(t), format(t, "larger than"), f"{t:fewer}"):
        assert isinstance(text, str)
    claim = Results(path=None, strict=False).claim("edge", "It is {test:larger than} {test} the other.", t)
    assert type(claim.holds) is bool and claim.holds == t.holds and claim.test == t.expr
    if t.found:  # the mark of a sentence that does not hold shows why (each part's finding, in its test)
        assert all(part in claim.test for part in t.found.split("; ")) and "does not hold" in claim.inline()


@settings(max_examples=300, deadline=None)
@given(VALUES, VALUES, MARGIN)
def test_above_and_below_never_raise_on_values(a, b, by):
    for helper in (C.above, C.below):
        t = helper(a, b, by=by)
        _renders(t)
        assert t.a == float(a) or math.isnan(t.a)


@settings(max_examples=200, deadline=None)
@given(VALUES, VALUES, st.sampled_from(sorted(C.MARGINS)))
def test_a_named_margin_holds_only_of_two_magnitudes(a, b, name):
    a, b = float(a), float(b)
    factor = C.MARGINS[name].factor
    up, down = C.above(a, b, by=name), C.below(a, b, by=name)
    if math.isnan(a) or math.isnan(b) or a < 0 or b < 0 or a == b == 0 or (math.isinf(a) and a == b):
        assert up.found and down.found and not up.holds and not down.holds
    else:  # two magnitudes (one of them may be 0): the ratio the words claim
        assert up.holds == (a >= factor * b) and down.holds == (a <= b / factor)
        assert not up.found and not down.found


@settings(max_examples=200, deadline=None)
@given(VALUES, VALUES)
def test_bounds_never_raise_on_values(x, bound):
    for helper in (C.at_least, C.at_most):
        t = helper(x, bound)
        _renders(t)
        if not (math.isnan(float(x)) or math.isnan(float(bound))):
            if not (math.isinf(float(x)) and float(x) == float(bound)):
                assert t.holds == (
                    float(x) >= float(bound) if helper is C.at_least else float(x) <= float(bound)
                )


@settings(max_examples=300, deadline=None)
@given(VALUES, VALUES, VALUES)
def test_intervals_never_raise_on_values(x, lo, hi):
    inside, out = C.within(x, lo, hi), C.outside(x, lo, hi)
    _renders(inside)
    _renders(out)
    x, lo, hi = float(x), float(lo), float(hi)
    if lo > hi:  # an empty interval (the run's, e.g. no gap that a word can describe) contains nothing
        assert inside.found and not inside.holds and not out.holds
    if inside.meaningful:
        assert inside.holds == (lo <= x <= hi) and out.holds == (x < lo or x > hi)


@settings(max_examples=300, deadline=None)
@given(VALUES, VALUES, st.one_of(st.none(), st.floats(0, 10)), st.one_of(st.none(), st.floats(0, 10)))
def test_about_never_raises_on_values(x, target, rel, tol):
    if rel is not None and tol is not None:
        with pytest.raises(ValueError, match="rel or tol"):
            C.about(x, target, rel=rel, tol=tol)
        return
    t = C.about(x, target, rel=rel, tol=tol)
    _renders(t)
    if float(target) == 0 and tol is None and float(x) != 0 and not math.isnan(float(x)):
        assert t.found and not t.holds  # a tolerance relative to 0 admits nothing


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(VALUES, st.lists(VALUES, max_size=3), st.text(max_size=3)),
    st.one_of(VALUES, st.lists(VALUES, max_size=3), st.text(max_size=3)),
)
def test_equal_never_raises_on_values(a, b):
    t = C.equal(a, b)
    _renders(t)
    assert C.equal(np.array([1.0, math.nan]), np.array([1.0, math.nan])).found  # NaN equals nothing


@settings(max_examples=300, deadline=None)
@given(st.lists(VALUES, max_size=6), st.sampled_from(["increasing", "decreasing"]), st.booleans())
def test_monotone_never_raises_on_values(seq, direction, strict):
    t = C.monotone(seq, direction, strict)
    _renders(t)
    if len(seq) < 3:
        assert t.found and not t.holds  # no values, or one comparison: not a trend


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from("abcd"), VALUES, max_size=4),
    st.sampled_from("abcde"),
    st.booleans(),
)
def test_ranks_first_never_raises_on_values(scores, key, highest):
    t = C.ranks_first(scores, key, highest)
    _renders(t)
    values = {k: float(v) for k, v in scores.items()}
    if len(values) >= 2 and key in values and not any(math.isnan(v) for v in values.values()):
        best = max(values.values()) if highest else min(values.values())
        tied = [k for k, v in values.items() if v == best]
        if key in tied and len(tied) > 1:
            assert "a tie" in t.found and not t.holds
        else:
            assert t.holds == (tied == [key]) and t.meaningful
    else:
        assert t.found and not t.holds


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(VALUES, VALUES), max_size=4))
def test_every_and_joined_tests_never_raise_on_values(pairs):
    parts = [C.above(a, b) for a, b in pairs]
    t = C.every(parts)
    _renders(t)
    if not parts:
        assert t.found == "no members to compare" and not t.holds
    else:
        assert t.holds == all(p.holds for p in parts)
        joined = parts[0] & C.below(0.0, 0.0, by="much")
        _renders(joined)
        assert "both values are 0" in joined.found and not joined.holds


def test_invalid_arguments_still_raise():
    with pytest.raises(ValueError, match="unknown margin"):
        C.above(1.0, 0.5, by="vastly")
    for by in (-0.1, math.nan):
        with pytest.raises(ValueError, match="margin by"):
            C.below(1.0, 0.5, by=by)
    for tol in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="tol must be"):
            C.about(1.0, 1.0, tol=tol)
    with pytest.raises(ValueError, match="rel must be"):
        C.about(1.0, 1.0, rel=-0.1)
    with pytest.raises(ValueError, match="direction"):
        C.monotone([1, 2, 3], "sideways")
    with pytest.raises(ValueError, match="must be a number"):
        C.above("a lot", 1.0)
    with pytest.raises(ValueError, match="takes Checks"):
        C.every([True])
    with pytest.raises(ValueError, match="cannot hold"):
        C.Check("x", True, found="both values are 0")


def test_what_the_run_found_is_said():
    """The crash of a run whose Algorithm 1 leaves no image unmatched: no ratio of two zeros, and why."""
    t = C.below(0.0, 0.0, by="much")
    assert not t.holds and t.found == "both values are 0"
    assert t.expr == "below(0, 0, by='much' (x2)) [both values are 0]"
    assert C.below(0.0, 0.02, by="much").holds  # none left by one algorithm, some by the other: a ratio
    assert C.ranks_first({"a": 1.0, "b": 1.0}, "a").found == "a tie for the highest between 'a' and 'b' (1)"
    assert C.monotone([1.0, 2.0]).found == "only 2 values: one comparison, not a trend"
    assert C.within(0.1, math.inf, -math.inf).found == "the interval [inf, -inf] is empty"
    assert C.above(math.nan, 1.0).found == "a is not a number"
    assert C.above(math.inf, math.inf).found == "a and b are both inf: infinities do not compare"


# -- the findings' criteria: a value of the run never raises, every verdict is one of four --------------------

from shifteval.book import findings as F  # noqa: E402 (the findings' part of this file)

NONZERO_PAPER = st.sampled_from([-1.7, -0.2, 0.3, 1.1, 11.7])
INTERVALS = st.one_of(
    st.none(),
    st.tuples(st.sampled_from(EDGES), st.sampled_from(EDGES)).map(sorted).filter(lambda t: not (t[0] > t[1])),
    st.just((math.nan, math.nan)),
)


def _verdict(c: F.Criterion) -> None:
    assert isinstance(c, F.Criterion) and c.verdict in F.VERDICTS and c.rule and c.expr


@settings(max_examples=200, deadline=None)
@given(run=VALUES, paper=NONZERO_PAPER, interval=INTERVALS)
def test_same_direction_gives_a_verdict_for_any_value_of_the_run(run, paper, interval):
    c = F.same_direction(run, paper, interval=interval)
    _verdict(c)
    if isinstance(run, float) and math.isnan(run):
        assert c.verdict == "not testable"


@settings(max_examples=200, deadline=None)
@given(run=VALUES, paper=NONZERO_PAPER, tol=st.sampled_from([0.0, 0.1, 5.0]), interval=INTERVALS)
def test_matches_gives_a_verdict_for_any_value_of_the_run(run, paper, tol, interval):
    _verdict(F.matches(run, paper, tol=tol))
    if interval is not None:
        _verdict(F.matches(run, paper, interval=interval))


@given(total=st.integers(0, 20), data=st.data())
def test_holds_in_counts_any_number_of_cases(total, data):
    count = data.draw(st.integers(0, total))
    c = F.holds_in(count, total)
    _verdict(c)
    assert (c.verdict == "not testable") == (total == 0)
    assert (c.verdict == "reproduced") == (total > 0 and count == total)


@given(
    run=st.lists(st.sampled_from("abcd"), max_size=4),
    paper=st.lists(st.sampled_from("abcd"), min_size=1, max_size=4),
)
def test_same_members_compares_any_sets(run, paper):
    c = F.same_members(run, paper)
    _verdict(c)
    assert (c.verdict == "reproduced") == (bool(run) and set(run) == set(paper))


def test_a_criterion_still_refuses_a_wrong_argument():
    with pytest.raises(ValueError, match="lies on the reference"):
        F.same_direction(1.0, 0.0)  # the paper's value gives no direction
    with pytest.raises(ValueError, match="a tolerance or an interval"):
        F.matches(1.0, 1.0)
    with pytest.raises(ValueError, match="tol must be >= 0"):
        F.matches(1.0, 1.0, tol=-1)
    with pytest.raises(ValueError, match="count <= total"):
        F.holds_in(3, 2)
    with pytest.raises(ValueError, match="three words"):
        F.not_testable("no")
