"""A negation next to an optional step inside a repeated group (issue 42):
``SEQ(A a, SEQ(B b, !(X x), C? c, D d)+ g[], E e)``, ``SEQ(A a, SEQ(B b, C? c, !(X x), D d)+ g[], E e)``.

As outside a group (test_optional_negation.py), the negation spans from the last step before it
that the iteration bound to the next one after it that it bound: with ``c`` bound, ``!(X x)``
before it forbids an ``X`` between ``b`` and ``c``, after it between ``c`` and ``d``; with ``c``
left out, between ``b`` and ``d`` either way. An ``X`` between two iterations breaks nothing.
Hand cases with exact ids on every matcher (the reference, the Python engine, the compiled
kernel: test_groups.py's ``matcher`` fixture); the hypothesis properties of test_groups.py
draw negations next to optional steps too (``grouped_patterns``). Still refused: a negation
with only optional steps on a side within its iteration, or between iterations beside one
(test_groups_optional_steps.py ``test_what_stays_refused``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.kernel.lowering import supports
from petricep.lang.ast import Pattern
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.budget import examples
from tests.features.scenario import ids, stream, want
from tests.features.test_groups import (
    _engine,
    _kernel_equals_engine,
    _sorted,
    _types,
    cut_plan,
    engines_equal_reference,
    grouped_patterns,
    matcher,  # noqa: F401 (the fixture: every matcher)
)
from tests.kernel.cuts import drive
from tests.reference import reference_run
from tests.strategies import streams, tie_rules

BEFORE = "SEQ(A a, SEQ(B b, !(X x), C? c, D d)+ g[], E e)"  # the negation before the optional step
AFTER = "SEQ(A a, SEQ(B b, C? c, !(X x), D d)+ g[], E e)"  # ... after it


def P(text: str) -> Pattern:
    (p,) = parse_text(f"PATTERN p: {text}").patterns
    return p


@pytest.mark.parametrize(
    ("text", "spec", "expected"),
    [
        # X between b and c: in both spans ({b,c,d}: b..c, {b,d}: b..d)
        (BEFORE, "A@0 B@1 X@2 C@3 D@4 E@5", []),
        # X between c and d: outside {b,c,d}'s b..c, inside {b,d}'s b..d
        (BEFORE, "A@0 B@1 C@2 X@3 D@4 E@5", [{"a": 0, "g": [{"b": 1, "c": 2, "d": 4}], "e": 5}]),
        # after it: X between b and c is outside {b,c,d}'s c..d, inside {b,d}'s b..d
        (AFTER, "A@0 B@1 X@2 C@3 D@4 E@5", [{"a": 0, "g": [{"b": 1, "c": 3, "d": 4}], "e": 5}]),
        (AFTER, "A@0 B@1 C@2 X@3 D@4 E@5", []),
        # X after d: in no iteration's span
        (AFTER, "A@0 B@1 C@2 D@3 X@4 E@5", [{"a": 0, "g": [{"b": 1, "c": 2, "d": 3}], "e": 5}, {"a": 0, "g": [{"b": 1, "d": 3}], "e": 5}]),
        # X between two iterations (d2 .. b4) breaks neither; b1..d5 (c left out) holds it
        (
            AFTER,
            "A@0 B@1 D@2 X@3 B@4 D@5 E@6",
            [
                {"a": 0, "g": [{"b": 1, "d": 2}], "e": 6},
                {"a": 0, "g": [{"b": 4, "d": 5}], "e": 6},
                {"a": 0, "g": [{"b": 1, "d": 2}, {"b": 4, "d": 5}], "e": 6},
            ],
        ),
        # the second iteration leaves c out, X5 in its span b4..d6; b1 c2 d6 spans b1..c2 only
        (
            BEFORE,
            "A@0 B@1 C@2 D@3 B@4 X@5 D@6 E@7",
            [
                {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}], "e": 7},
                {"a": 0, "g": [{"b": 1, "d": 3}], "e": 7},
                {"a": 0, "g": [{"b": 1, "c": 2, "d": 6}], "e": 7},
            ],
        ),
        # the second iteration binds c: X5 between c4 and d6 is outside b..c
        (
            BEFORE,
            "A@0 B@1 D@2 B@3 C@4 X@5 D@6 E@7",
            [
                {"a": 0, "g": [{"b": 1, "d": 2}], "e": 7},
                {"a": 0, "g": [{"b": 1, "c": 4, "d": 6}], "e": 7},
                {"a": 0, "g": [{"b": 3, "c": 4, "d": 6}], "e": 7},
                {"a": 0, "g": [{"b": 1, "d": 2}, {"b": 3, "c": 4, "d": 6}], "e": 7},
            ],
        ),
        # two optional steps after the negation: the span ends at the first one bound
        (
            "SEQ(A a, SEQ(B b, !(X x), C? c, F? f, D d)+ g[], E e)",
            "A@0 B@1 C@2 X@3 F@4 D@5 E@6",
            [{"a": 0, "g": [{"b": 1, "c": 2, "d": 5}], "e": 6}, {"a": 0, "g": [{"b": 1, "c": 2, "f": 4, "d": 5}], "e": 6}],
        ),
        # ... and before it: from the last one bound
        (
            "SEQ(A a, SEQ(B b, C? c, F? f, !(X x), D d)+ g[], E e)",
            "A@0 B@1 C@2 X@3 F@4 D@5 E@6",
            [{"a": 0, "g": [{"b": 1, "f": 4, "d": 5}], "e": 6}, {"a": 0, "g": [{"b": 1, "c": 2, "f": 4, "d": 5}], "e": 6}],
        ),
    ],
)
def test_the_span_runs_between_the_steps_the_iteration_bound(text: str, spec: str, expected: list[dict]) -> None:
    assert ids(P(text), stream(spec)) == want(*expected)


def test_a_condition_of_the_negation_reads_its_iteration_so_far() -> None:
    # x.v = g[i].b.v: X2 (v 2) is no X of b1's (v 1); X5 (v 2) is b4's, inside b4..d6
    p = P(f"{AFTER} WHERE x.v = g[i].b.v")
    ev = stream("A@0 B@1:v=1 X@2:v=2 D@3 B@4:v=2 X@5:v=2 D@6 E@7")
    assert ids(p, ev) == want({"a": 0, "g": [{"b": 1, "d": 3}], "e": 7}, {"a": 0, "g": [{"b": 1, "d": 6}], "e": 7})


@pytest.mark.parametrize("at", ["i", "last"])
def test_a_condition_reading_the_optional_step_forbids_nothing_where_it_is_left_out(at: str) -> None:
    # x.v = g[i].c.v (g[last]: the same, the iteration so far): b1 c2 d3 then b4 d6, X5 of
    # c2's v in the second iteration, which has no c: it forbids nothing there (c2 is
    # another iteration's); b4 c5 d7 (c5's v 2): X6 in c5..d7 breaks it
    p = P(f"{AFTER} WHERE x.v = g[{at}].c.v AND count(g[]) = 2")
    assert ids(p, stream("A@0 B@1 C@2:v=1 D@3 B@4 X@5:v=1 D@6 E@7")) == want(
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}, {"b": 4, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 6}], "e": 7},
    )
    assert ids(p, stream("A@0 B@1 C@2:v=1 D@3 B@4 C@5:v=2 X@6:v=2 D@7 E@8")) == want(
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}, {"b": 4, "d": 7}], "e": 8},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 7}], "e": 8},
    )


def test_skip_till_next_match_passes_over_the_step_the_negation_forbids() -> None:
    # X2 forbids d3 after b1 (c left out: b1..d3 holds it); c4 may still come, then d5
    p = P(f"{AFTER} WHERE skip-till-next-match")
    assert ids(p, stream("A@0 B@1 X@2 D@3 C@4 D@5 E@6")) == want({"a": 0, "g": [{"b": 1, "c": 4, "d": 5}], "e": 6})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # after c: X2 forbids d after b1 (c left out), but c may still come: a0 b1 times out
        (AFTER, [({"a": 0, "g": [{"b": 1}]}, {"n": None})]),
        # before c: X2 lies in every span after b1 (b..c, b..d): the partial match ends there
        (BEFORE, []),
    ],
)
def test_timeouts(text: str, expected: list[tuple[dict, dict]]) -> None:
    # (the reference has no ON TIMEOUT: the Python engine's, by hand, and the kernel's)
    out = _engine(f"PATTERN p: {text} WITHIN 5 ON TIMEOUT RETURN T(n = count(g[]))", "A@0 B@1 X@2 Z@9")
    assert [(m["ids"], m["attrs"]) for m in out] == expected


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), grouped_patterns(beside=True))
def test_engine_equals_reference_with_a_negation_next_to_an_optional_step(data: Any, p: Pattern) -> None:
    """Random groups of 3-4 steps with optional middle ones and a negation next to one (its
    conditions, the strategies, windows, AND / OR around the group: ``grouped_patterns``):
    the kernel equals the Python engine, which equals the reference."""
    engines_equal_reference(data, p)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), grouped_patterns("p", beside=True))
def test_merged_engine_equals_reference_with_a_negation_next_to_an_optional_step(data: Any, p: Pattern) -> None:
    """The pattern, a copy without conditions and one drawn apart, in one net."""
    pats = [p, replace(p, name="r", conditions=()), data.draw(grouped_patterns("s", beside=True))]
    events = data.draw(streams(types=_types(*pats), max_size=9, min_size=4))
    tie = tie_rules(data.draw, pats)
    engine = _kernel_equals_engine(pats, events, tie, data.draw(st.integers(0, len(events))))
    assert _sorted(engine) == _sorted(reference_run(pats, events, tie))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), grouped_patterns(beside=True))
def test_kernel_snapshot_cuts_with_a_negation_next_to_an_optional_step(data: Any, p: Pattern) -> None:
    """Kernel runs cut at random points (snapshots restored, a blocked partial match's mark
    too) equal the uncut run."""
    events = data.draw(streams(types=_types(p), max_size=12, min_size=4))
    tie = tie_rules(data.draw, [p])
    plan = cut_plan(data, len(events))
    note(pattern_text(p))
    note(f"tie={tie} plan={plan}")
    net = build_net([p])
    assert supports(net, tie) == (True, "covered")
    assert drive(net, events, tie, plan, True) == drive(net, events, tie, plan, False)
