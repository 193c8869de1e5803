"""Per-step gaps (issue 42) in the forms lifted last: a gap in EVENTS under a count window (and
ON TIMEOUT with it), the step right after an AND/OR without FROM (it follows the composite's
latest event), FROM one step of a repeated group (the last iteration's).

Hand cases run on every matcher (the ``matcher`` fixture of tests/features/test_gaps.py: the
reference, the Python engine and the compiled kernel) with exact match ids; the partial
matches alive and the ON TIMEOUT deadlines are compared on both engines; the hypothesis
properties extend tests/features/test_gaps_more.py's drawn patterns with these forms and
compare the kernel with the Python engine and both with the brute-force reference, alone and
merged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import PatternUnsupportedError
from petricep.events import Event
from petricep.lang.ast import (
    WIN_COUNT,
    EventRef,
    Gap,
    Group,
    Num,
    Pattern,
    Return,
    ReturnField,
    Seq,
    events_of,
)
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.budget import examples
from tests.features.scenario import ids, stream, want
from tests.features.test_gaps import lives, matcher  # noqa: F401  (every hand case on every matcher)
from tests.features.test_gaps_more import TYPES, agree, timed_patterns
from tests.strategies import streams, tie_rules


def P(text: str) -> Pattern:
    (p,) = parse_text(f"PATTERN p: {text}").patterns
    return p


# ----------------------------------------------------------------------------- gaps in EVENTS


def test_a_gap_in_events_counts_positions_as_a_count_window_does() -> None:
    # b is the 1st to 3rd event after a (any type counts): B@2 is a0's 2nd, B@4 its 4th;
    # B@7 is a6's 1st
    p = P("SEQ(A a, B b AFTER 1 TO 3 EVENTS) WITHIN 10 EVENTS")
    ev = stream("A@0 C@1 B@2 C@3 B@4 B@5 A@6 B@7")
    assert ids(p, ev) == want({"a": 0, "b": 2}, {"a": 6, "b": 7})


def test_a_gap_in_events_has_a_lower_bound_and_ignores_time() -> None:
    # 2nd or 3rd event after a, whatever their times (ties too)
    p = P("SEQ(A a, B b AFTER 2 TO 3 EVENTS) WITHIN 10 EVENTS")
    ev = stream("A@0 B@0 B@0 B@50 B@51")
    assert ids(p, ev) == want({"a": 0, "b": 2}, {"a": 0, "b": 3})


def test_a_gap_in_events_on_a_list_is_a_chain_of_next_events() -> None:
    # AFTER 1 TO 1 EVENTS: each element the very next event (a run of Bs right after a)
    p = P("SEQ(A a, B+ b[] AFTER 1 TO 1 EVENTS) WITHIN 10 EVENTS")
    ev = stream("A@0 B@1 B@2 C@3 B@4")
    assert ids(p, ev) == want({"a": 0, "b": [1]}, {"a": 0, "b": [1, 2]})


def test_a_gap_in_events_from_a_named_step_beside_a_gap_in_time() -> None:
    # c at most 3 events after a (C@4 is its 4th), and d 0..4 in time after c (D@7 is 5
    # after C@2)
    p = P("SEQ(A a, B b, C c AFTER 0 TO 3 EVENTS FROM a, D d AFTER 0 TO 4) WITHIN 10 EVENTS")
    ev = stream("A@0 B@1 C@2 C@3 C@4 D@6 D@7")
    assert ids(p, ev) == want(
        {"a": 0, "b": 1, "c": 2, "d": 5}, {"a": 0, "b": 1, "c": 3, "d": 5}, {"a": 0, "b": 1, "c": 3, "d": 6}
    )


def test_a_gap_in_events_ends_partial_matches_at_its_upper_bound() -> None:
    # a0 waits for b at most 2 events: gone at the 3rd event after it, not at the window's 10th
    net = compile_text("PATTERN p: SEQ(A a, B b AFTER 0 TO 2 EVENTS) WITHIN 10 EVENTS")
    ev = stream("A@0 C@1 C@2 C@3 B@4")
    for engine in ("python", "kernel"):
        got, live, _ = lives(engine, net, ev)
        assert (got, live) == ([], [1, 1, 1, 0, 0]), engine


def test_two_patterns_with_different_gaps_in_events_in_one_net() -> None:
    net = compile_text(
        "PATTERN p: SEQ(A a, B b AFTER 1 TO 1 EVENTS) WITHIN 9 EVENTS\n"
        "PATTERN q: SEQ(A a, B b AFTER 1 TO 3 EVENTS) WITHIN 9 EVENTS"
    )
    ev = stream("A@0 B@1 A@2 C@3 B@4")
    for engine in ("python", "kernel"):
        got = sorted((m["pattern"], tuple(m["ids"].values())) for m in lives(engine, net, ev)[0])
        assert got == [("p", (0, 1)), ("q", (0, 1)), ("q", (2, 4))], engine


def test_an_events_gap_end_times_a_partial_match_out() -> None:
    """ON TIMEOUT under a count window with a gap in EVENTS: a partial match times out at the
    first position its gap refuses (a's position + 2 + 1), before its window's (a + 10);
    both engines, exact deadlines."""
    net = compile_text("PATTERN p: SEQ(A a, B b AFTER 1 TO 2 EVENTS) WITHIN 10 EVENTS ON TIMEOUT RETURN Late(x = a.x)")
    ev = stream("A@0:x=1 B@1:x=0 A@2:x=2 C@3:x=0 C@4:x=0 C@5:x=0")
    for engine in ("python", "kernel"):
        got, live, _ = lives(engine, net, ev)
        assert [(m["ids"], m.get("timeout")) for m in got] == [
            ({"a": 0, "b": 1}, None),
            ({"a": 2}, {"type": "Late", "deadline": 5}),
        ], engine
        # a0 (extended by B@1, it does not time out) leaves at C@3, its 3rd event; a2 at C@5
        assert live == [1, 1, 2, 1, 1, 0], engine


def test_the_window_times_out_first_when_it_closes_before_the_events_gap() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b AFTER 1 TO 8 EVENTS) WITHIN 3 EVENTS ON TIMEOUT RETURN Late(x = a.x)")
    ev = stream("A@0:x=1 C@1:x=0 C@2:x=0 C@3:x=0")
    for engine in ("python", "kernel"):
        assert [(m["ids"], m["timeout"]["deadline"]) for m in lives(engine, net, ev)[0]] == [({"a": 0}, 3)], engine


def test_gap_in_events_round_trips_and_draws_on_its_transition() -> None:
    from petricep.export.model import build_diagram

    text = "PATTERN p: SEQ(A a, B b AFTER 1 TO 3 EVENTS)\nWITHIN 10 EVENTS"
    (p,) = parse_text(text).patterns
    assert pattern_text(p) == text
    nodes = build_diagram(build_net([p]), merged=False).nodes
    assert [n.label for n in nodes if n.label[0] == "B b"] == [("B b", "1 to 3 events after a", "within 10 EVENTS")]
    (waiting,) = [n for n in nodes if n.label[0] == "a"]
    assert waiting.tooltip.endswith("a token leaves when its step's gap ends (a + 3 events)")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("SEQ(A a, B b AFTER 1 TO 2 EVENTS) WITHIN 5", "a per-step gap in EVENTS needs a count window (WITHIN n EVENTS): under a time window, or none, the partial match's clock is time: write the gap in time units"),
        ("SEQ(A a, B b AFTER 1 TO 2 EVENTS)", "a per-step gap in EVENTS needs a count window (WITHIN n EVENTS)"),
        ("SEQ(A a, SEQ(B b, C c AFTER 1 TO 2 EVENTS)+ g[]) WITHIN 5 EVENTS", "a per-step gap in EVENTS on a repeated group's step (C c) is not supported yet: write it in time units"),
        ("SEQ(ARCHIVED A a, B b, C c AFTER 1 TO 2 EVENTS) WITHIN 5 EVENTS", "a per-step gap in EVENTS in a pattern with ARCHIVED variables is not supported yet"),
        ("SEQ(A a, B b AFTER 1 TO 2) WITHIN 5 EVENTS ON TIMEOUT RETURN L(x = a.x)", "a per-step gap in time under a count window (WITHIN n EVENTS) with ON TIMEOUT is not supported yet: a timeout's deadline is then in events, this gap's end in time: count the gap in EVENTS"),
    ],
)
def test_gaps_in_events_still_refused(text: str, message: str) -> None:
    with pytest.raises(PatternUnsupportedError) as err:
        parse_text(f"PATTERN p: {text}")
    assert message in str(err.value)
    assert "^" in str(err.value)


def test_a_gap_in_events_counts_whole_events() -> None:
    with pytest.raises(Exception) as err:
        parse_text("PATTERN p: SEQ(A a, B b AFTER 1.5 TO 2 EVENTS) WITHIN 5 EVENTS")
    assert "a gap in EVENTS counts events: its bounds are whole numbers, not 1.5 and 2" in str(err.value)


# ----------------------------------------------------------------------------- properties


def _in_events(draw: Any, p: Pattern) -> Pattern:
    """``p`` under a count window with most of its gaps (a repeated group's apart) counted in
    EVENTS (and, where they all are, maybe ON TIMEOUT)."""
    if p.window is None or p.window.kind != WIN_COUNT:
        return p

    def count(node: Any) -> Any:
        if isinstance(node, EventRef):
            if node.gap is not None and draw(st.integers(0, 3)):
                return replace(node, gap=Gap(node.gap.low, node.gap.high, "events", node.gap.after))
            return node
        if isinstance(node, Group):
            return node
        return replace(node, children=tuple(count(c) for c in node.children))

    q = replace(p, structure=count(p.structure))
    timed = [r for r in events_of(q.structure) if r.gap is not None and not r.gap.in_events]
    if not timed and draw(st.booleans()):
        q = replace(q, timeout=Return("Late", (ReturnField("x", Num(1)),)))
    return q


COUNT_WINDOWS = {n: P(f"SEQ(A a, B b) WITHIN {n} EVENTS").window for n in (3, 5)}


@st.composite
def counted_patterns(draw: Any, name: str = "p", modes: bool = True) -> Pattern:
    """test_gaps_more.py's drawn patterns, mostly under a count window (a time window's ON
    TIMEOUT dropped there), their gaps then in EVENTS or time."""
    p = draw(timed_patterns(name, modes))
    if draw(st.integers(0, 3)):
        p = replace(p, window=COUNT_WINDOWS[draw(st.sampled_from([3, 5]))], timeout=None)
    return _in_events(draw, p)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), counted_patterns(), streams(types=TYPES, max_size=9))
def test_kernel_equals_engine_equals_reference_with_gaps_in_events(data: Any, p: Pattern, events: list[Event]) -> None:
    (checked,) = parse_text(pattern_text(p)).patterns  # the language accepts what was drawn
    assert checked.structure == p.structure
    event("gap in EVENTS" if any(r.gap is not None and r.gap.in_events for r in events_of(p.structure)) else "none in EVENTS")
    event("ON TIMEOUT" if p.timeout is not None else "no timeout")
    agree([p], events, tie_rules(data.draw, [p]))


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), counted_patterns("p", modes=False), streams(types=TYPES, max_size=8))
def test_merged_kernel_equals_engine_equals_reference_with_gaps_in_events(data: Any, p: Pattern, events: list[Event]) -> None:
    """The pattern with its gaps widened (front combination shares the prefix) and a third
    drawn apart, in one net."""

    def regap(r: Any) -> Any:
        if isinstance(r, EventRef) and r.gap is not None:
            return replace(r, gap=replace(r.gap, high=r.gap.high + data.draw(st.integers(0, 2))))
        return r

    assert isinstance(p.structure, Seq)
    q = replace(p, name="q", structure=Seq(tuple(regap(c) for c in p.structure.children)))
    pats = [p, q, data.draw(counted_patterns("r", modes=False))]
    agree(pats, events, tie_rules(data.draw, pats))
