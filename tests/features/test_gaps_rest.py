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
from petricep.errors import PatternSemanticError, PatternUnsupportedError
from petricep.events import Event
from petricep.lang.ast import (
    WIN_COUNT,
    And,
    EventRef,
    Gap,
    Group,
    Num,
    Or,
    Pattern,
    Return,
    ReturnField,
    Seq,
    events_of,
)
from petricep.lang.gaps import completions
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
        ("SEQ(ARCHIVED A a, B b, C c AFTER 1 TO 2 EVENTS) WITHIN 5 EVENTS", "a per-step gap in EVENTS cannot stand in a pattern with ARCHIVED variables: the gap needs a count window (WITHIN n EVENTS) and ARCHIVED variables a time window"),
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


# ----------------------------------------------------------------------------- after an AND/OR, FROM a group's step


def test_a_step_right_after_an_and_follows_its_latest_event() -> None:
    # d 0..3 after the AND's completion: C@4 (pos 2) completes a0 b1 c2, D@6 follows it; c4
    # (C@8) completes another, D@9 follows that; D@12 is 4 after C@8
    p = P("SEQ(A a, AND(B b, C c), D d AFTER 0 TO 3) WITHIN 20")
    ev = stream("A@0 B@1 C@4 D@6 C@8 D@9 D@12")
    assert ids(p, ev) == want({"a": 0, "b": 1, "c": 2, "d": 3}, {"a": 0, "b": 1, "c": 4, "d": 5})


def test_a_step_right_after_an_or_follows_the_branch_taken() -> None:
    # after b (B@1): D@3; after the SEQ branch's last event e (E@4): D@5, not D@3 (before e)
    # nor D@7 (3 after)
    p = P("SEQ(A a, OR(B b, SEQ(C c, E e)), D d AFTER 1 TO 2) WITHIN 20")
    ev = stream("A@0 B@1 C@2 D@3 E@4 D@5 D@7")
    assert ids(p, ev) == want({"a": 0, "b": 1, "d": 3}, {"a": 0, "c": 2, "e": 4, "d": 5})


def test_after_an_and_holding_a_list_its_last_element_counts() -> None:
    p = P("SEQ(A a, AND(B+ b[], C c), D d AFTER 0 TO 2) WITHIN 20")
    ev = stream("A@0 B@1 C@2 B@3 D@4 D@6")
    assert ids(p, ev) == want({"a": 0, "b": [1], "c": 2, "d": 4}, {"a": 0, "b": [3], "c": 2, "d": 4}, {"a": 0, "b": [1, 3], "c": 2, "d": 4})


def test_after_an_and_in_events() -> None:
    p = P("SEQ(A a, AND(B b, C c), D d AFTER 1 TO 2 EVENTS) WITHIN 9 EVENTS")
    ev = stream("A@0 C@1 B@2 D@3 D@4 D@5")
    assert ids(p, ev) == want({"a": 0, "c": 1, "b": 2, "d": 3}, {"a": 0, "c": 1, "b": 2, "d": 4})


def test_a_gap_from_a_group_step_follows_the_last_iteration() -> None:
    # the last iteration's b: B@3 for g = [b1 c2, b3 c4] and [b3 c4] (D@6 3 after it); for
    # [b1 c2] alone, B@1 (D@6 5 after)
    p = P("SEQ(A a, SEQ(B b, C c)+ g[], D d AFTER 0 TO 3 FROM b) WITHIN 20")
    ev = stream("A@0 B@1 C@2 B@3 C@5 D@6 D@7")
    assert ids(p, ev) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 5}, {"a": 0, "g": [{"b": 3, "c": 4}], "d": 5}
    )


def test_merged_patterns_after_an_and_and_from_a_group_step() -> None:
    net = compile_text(
        "PATTERN p: SEQ(A a, AND(B b, C c), D d AFTER 0 TO 1) WITHIN 20\n"
        "PATTERN q: SEQ(A a, AND(B b, C c), D d AFTER 0 TO 3 FROM b) WITHIN 20"
    )
    ev = stream("A@0 C@1 B@2 D@3 D@5")
    for engine in ("python", "kernel"):
        got = sorted((m["pattern"], m["ids"]["d"]) for m in lives(engine, net, ev)[0])
        assert got == [("p", 3), ("q", 3), ("q", 4)], engine


def test_the_diagram_draws_the_gap_after_an_and() -> None:
    from petricep.export.model import build_diagram

    p = P("SEQ(A a, AND(B b, C c), D d AFTER 0 TO 3) WITHIN 20")
    nodes = build_diagram(build_net([p]), merged=False).nodes
    assert {n.label for n in nodes if n.label[0] == "D d"} == {("D d", "0 to 3 after the latest of b, c", "within 20")}


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        ("SEQ(A a, D d AFTER 1 TO 2 FROM b, SEQ(B b, C c)+ g[])", PatternSemanticError, "gap FROM b: 'b' is not an earlier step than 'd'"),
    ],
)
def test_the_lifted_forms_still_refuse(text: str, kind: type[Exception], message: str) -> None:
    with pytest.raises(kind) as err:
        parse_text(f"PATTERN p: {text}")
    assert type(err.value) is kind
    assert message in str(err.value)
    assert "^" in str(err.value)


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


def _lifted(draw: Any, p: Pattern) -> Pattern:
    """``p`` with some gaps moved onto the lifted forms: a step right after an AND/OR without
    FROM (the composite's latest event), FROM a repeated group's step instead of the group."""
    assert isinstance(p.structure, Seq)
    kids = list(p.structure.children)
    for i, c in enumerate(kids):
        if not (isinstance(c, EventRef) and c.gap is not None and c.gap.after is not None):
            continue
        before = [k for k in kids[:i] if not (isinstance(k, EventRef) and k.negated)]
        if before and isinstance(before[-1], And | Or) and frozenset() not in completions(before[-1]) and draw(st.booleans()):
            kids[i] = replace(c, gap=replace(c.gap, after=None))
            continue
        group = next((g for g in kids if isinstance(g, Group) and g.var == c.gap.after), None)
        if group is not None and draw(st.booleans()):
            kids[i] = replace(c, gap=replace(c.gap, after=draw(st.sampled_from(group.members))))
    return replace(p, structure=Seq(tuple(kids)))


COUNT_WINDOWS = {n: P(f"SEQ(A a, B b) WITHIN {n} EVENTS").window for n in (3, 5)}


@st.composite
def counted_patterns(draw: Any, name: str = "p", modes: bool = True) -> Pattern:
    """test_gaps_more.py's drawn patterns with the lifted forms (:func:`_lifted`), mostly under
    a count window (a time window's ON TIMEOUT dropped there), their gaps then in EVENTS or
    time."""
    p = _lifted(draw, draw(timed_patterns(name, modes)))
    if draw(st.integers(0, 3)):
        p = replace(p, window=COUNT_WINDOWS[draw(st.sampled_from([3, 5]))], timeout=None)
    return _in_events(draw, p)


COMPOSITES = (
    "AND(B b, C c)", "OR(B b, C c)", "AND(SEQ(B b, C c), A e)", "OR(SEQ(B b, C c), A e)", "AND(B+ b[], C c)",
    "OR(B b, SEQ(C c, A e))", "AND(SEQ(B? b, C c), A e)",
)


@st.composite
def after_patterns(draw: Any, name: str = "p") -> Pattern:
    """``SEQ(A a, <an AND/OR or a repeated group>, [!(C n),] T d AFTER .. [EVENTS] [FROM a
    group's step], [T f AFTER ..])``: the step after the composite follows its latest event,
    or a group's step (the last iteration's); any strategy, a time or a count window (gaps in
    EVENTS under it), ON TIMEOUT where the gaps' clock is the window's, a key."""
    window = draw(st.sampled_from(["4", "7", "4 EVENTS", "6 EVENTS"]))
    count = window.endswith("EVENTS")
    group = draw(st.booleans()) and draw(st.booleans())
    middle = "SEQ(B b, C c)+ g[]" if group else draw(st.sampled_from(COMPOSITES))
    events: list[bool] = []

    def gap() -> str:
        lo = draw(st.integers(0, 2))
        events.append(count and draw(st.booleans()))
        return f"AFTER {lo} TO {lo + draw(st.integers(0, 3))}{' EVENTS' if events[-1] else ''}"

    steps = ["A a", middle]
    if draw(st.booleans()):
        steps.append(f"!({draw(st.sampled_from(TYPES))} n)")
    source = f" FROM {draw(st.sampled_from(['b', 'c']))}" if group and draw(st.booleans()) else ""
    steps.append(f"{draw(st.sampled_from(TYPES))} d {gap()}{source}")
    if draw(st.booleans()):
        steps.append(f"{draw(st.sampled_from(TYPES))} f {gap() if draw(st.booleans()) else ''}".rstrip())
    strategy = draw(st.sampled_from(["", "skip-till-next-match", "strict-contiguity", "partition-contiguity"]))
    where = [w for w in ("[k]" if strategy == "partition-contiguity" or draw(st.booleans()) else "", strategy) if w]
    clock_agrees = all(events) if count else not any(events)
    timeout = " ON TIMEOUT RETURN Late(x = a.x)" if clock_agrees and draw(st.booleans()) else ""
    text = f"SEQ({', '.join(steps)}){' WHERE ' + ' AND '.join(where) if where else ''} WITHIN {window}{timeout}"
    (p,) = parse_text(f"PATTERN {name}: {text}").patterns
    return p


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), after_patterns(), streams(types=TYPES, max_size=9))
def test_kernel_equals_engine_equals_reference_after_an_and_or_a_group(data: Any, p: Pattern, events: list[Event]) -> None:
    agree([p], events, tie_rules(data.draw, [p]))


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), after_patterns("p"), after_patterns("q"), streams(types=TYPES, max_size=8))
def test_merged_kernel_equals_engine_equals_reference_after_an_and_or_a_group(data: Any, p: Pattern, q: Pattern, events: list[Event]) -> None:
    pats = [p, q]
    agree(pats, events, tie_rules(data.draw, pats))


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), counted_patterns(), streams(types=TYPES, max_size=9))
def test_kernel_equals_engine_equals_reference_with_gaps_in_events(data: Any, p: Pattern, events: list[Event]) -> None:
    (checked,) = parse_text(pattern_text(p)).patterns  # the language accepts what was drawn
    assert checked.structure == p.structure
    event("gap in EVENTS" if any(r.gap is not None and r.gap.in_events for r in events_of(p.structure)) else "none in EVENTS")
    event("ON TIMEOUT" if p.timeout is not None else "no timeout")
    assert isinstance(p.structure, Seq)
    kids = p.structure.children
    members = {m for g in kids if isinstance(g, Group) for m in g.members}
    for i, c in enumerate(kids):
        if isinstance(c, EventRef) and c.gap is not None:
            if c.gap.after is None and i and isinstance(kids[i - 1], And | Or):
                event("after an AND/OR without FROM")
            if c.gap.after in members:
                event("FROM a group's step")
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
