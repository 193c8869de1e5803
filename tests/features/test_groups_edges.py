"""Repeated groups (issue 42) in the combinations lifted last: a per-step gap in EVENTS on a
group's step, a gap right after an AND/OR holding a group, UNTIL reading the group,
GREEDY / RELUCTANT on a group inside AND or OR, a negation's condition inside a group reading
the iteration's other steps, and what stays refused (each with the reason in its message).

Hand cases run on every matcher (the ``matcher`` fixture of tests/features/test_groups.py:
the reference, the Python engine and the kernel as a run drives it) with exact match ids;
the hypothesis properties compare the kernel with the Python engine and both with the
brute-force reference (tests/reference.py), alone and merged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petricep.errors import PatternUnsupportedError
from petricep.lang.ast import (
    IDX_CONST,
    IDX_CUR,
    IDX_LAST,
    WIN_COUNT,
    Agg,
    Attr,
    BinOp,
    Compare,
    EventRef,
    Gap,
    Group,
    Index,
    Node,
    Num,
    Pattern,
    Window,
    events_of,
    groups_of,
    vars_of,
)
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from tests.budget import examples
from tests.features.scenario import ids, stream, want
from tests.features.test_gaps_more import agree
from tests.features.test_groups import (
    _kernel_equals_engine,
    _sorted,
    _types,
    engines_equal_reference,
    grouped_patterns,
    matcher,  # noqa: F401 (the fixture: every matcher)
)
from tests.features.test_groups_bounded import _rebound, bounded_patterns
from tests.reference import reference_run
from tests.strategies import streams, tie_rules


def _ids(text: str, spec: str) -> set[str]:
    (p,) = parse_text(f"PATTERN p: {text}").patterns
    return ids(p, stream(spec))  # type: ignore[no-any-return]


def _refused(text: str, kind: type[Exception], message: str, at: str) -> None:
    """``text`` is refused with ``message`` (exactly, after the location) and a caret under ``at``."""
    with pytest.raises(kind) as err:
        parse_text(f"PATTERN p: {text}", "t.pcep")
    assert type(err.value) is kind
    lines = str(err.value).splitlines()
    assert lines[0].split(": error: ")[1] == message
    assert lines[1][lines[2].index("^") :].startswith(at), lines


# ----------------------------------------------------------------------------- gaps in EVENTS on a group's step


def test_a_gap_in_events_within_an_iteration() -> None:
    # c is the 1st or 2nd event after its iteration's b: C3 after B1 (2); C7 is 3 after B4
    assert _ids("SEQ(A a, SEQ(B b, C c AFTER 1 TO 2 EVENTS)+ g[], D d) WITHIN 10 EVENTS", "A@0 B@1 X@2 C@3 B@4 X@5 X@6 C@7 D@8") == want(
        {"a": 0, "g": [{"b": 1, "c": 3}], "d": 8}
    )


def test_a_gap_in_events_on_the_first_step_follows_the_previous_iteration() -> None:
    # b after a (the first iteration) or after the previous iteration's c: B2 is a's 2nd; B6 is
    # c3's 3rd (no second iteration) and a's 6th (no first b)
    assert _ids("SEQ(A a, SEQ(B b AFTER 1 TO 2 EVENTS, C c)+ g[], D d) WITHIN 10 EVENTS", "A@0 X@1 B@2 C@3 X@4 X@5 B@6 C@7 D@8") == want(
        {"a": 0, "g": [{"b": 2, "c": 3}], "d": 8}, {"a": 0, "g": [{"b": 2, "c": 7}], "d": 8}
    )


def test_a_gap_in_events_from_a_variable_before_the_group_bounds_every_iteration() -> None:
    # every c 2 to 4 events after a: C2 and C4, never C6
    assert _ids("SEQ(A a, SEQ(B b, C c AFTER 2 TO 4 EVENTS FROM a)+ g[], D d) WITHIN 10 EVENTS", "A@0 B@1 C@2 B@3 C@4 B@5 C@6 D@7") == want(
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 7},
        {"a": 0, "g": [{"b": 1, "c": 4}], "d": 7},
        {"a": 0, "g": [{"b": 3, "c": 4}], "d": 7},
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 7},
    )


def test_a_gap_in_events_inside_a_group_prints_and_parses_back() -> None:
    text = "PATTERN p: SEQ(A a, SEQ(B b, C c AFTER 1 TO 2 EVENTS FROM b)+ g[])\nWITHIN 5 EVENTS"
    (p,) = parse_text(text).patterns
    assert pattern_text(p) == text
    assert parse_text(pattern_text(p)).patterns[0] == p


def test_a_gap_in_events_inside_a_group_still_needs_a_count_window() -> None:
    _refused(
        "SEQ(A a, SEQ(B b, C c AFTER 1 TO 2 EVENTS)+ g[]) WITHIN 5",
        PatternUnsupportedError,
        "a per-step gap in EVENTS needs a count window (WITHIN n EVENTS): under a time window, or none, "
        "the partial match's clock is time: write the gap in time units",
        "AFTER",
    )


def _count_gaps(draw: Any, node: Node) -> Node:
    """``node`` with some of its groups' step gaps counted in EVENTS."""
    if isinstance(node, EventRef):
        return node
    if isinstance(node, Group):
        kids = tuple(
            replace(c, gap=Gap(c.gap.low, c.gap.high, "events", c.gap.after))
            if isinstance(c, EventRef) and c.gap is not None and draw(st.integers(0, 3))
            else c
            for c in node.children
        )
        return replace(node, seq=replace(node.seq, children=kids))
    return replace(node, children=tuple(_count_gaps(draw, c) for c in node.children))


@st.composite
def counted_groups(draw: Any, name: str = "p") -> Pattern:
    """test_groups.py's grouped patterns under a count window, most of their group's gaps in EVENTS."""
    p = draw(grouped_patterns(name))
    window = Window(WIN_COUNT, draw(st.sampled_from([3, 4, 6])))
    return replace(p, window=window, structure=_count_gaps(draw, p.structure))


def _in_events(p: Pattern) -> bool:
    return any(r.gap is not None and r.gap.in_events for g in groups_of(p.structure) for r in events_of(g))


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), counted_groups())
def test_kernel_equals_engine_equals_reference_with_group_gaps_in_events(data: Any, p: Pattern) -> None:
    engines_equal_reference(data, p)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), counted_groups("p"), counted_groups("s"))
def test_merged_kernel_equals_engine_equals_reference_with_group_gaps_in_events(data: Any, p: Pattern, s: Pattern) -> None:
    """The pattern, the same with its gaps in time (or widened window), and one drawn apart, in one net."""
    q = replace(p, name="q", window=Window(WIN_COUNT, data.draw(st.sampled_from([2, 5]))))
    pats = [p, q, s]
    events = data.draw(streams(types=_types(*pats), max_size=9, min_size=4))
    tie = tie_rules(data.draw, pats)
    engine = _kernel_equals_engine(pats, events, tie, data.draw(st.integers(0, len(events))))
    assert _sorted(engine) == _sorted(reference_run(pats, events, tie))


def test_drawn_patterns_do_hold_gaps_in_events() -> None:
    """The property above meets the lifted form (not only patterns without a gap)."""
    seen = []

    @settings(max_examples=60, deadline=None, database=None)
    @given(counted_groups())
    def look(p: Pattern) -> None:
        seen.append(_in_events(p))

    look()
    assert any(seen)


# ----------------------------------------------------------------------------- a gap right after an AND/OR holding a group


def test_a_gap_after_an_and_holding_a_group_follows_its_latest_event() -> None:
    # the latest of g's last iteration's c and e: C5 for g ending at c5 (D6 1 after, D8 3);
    # for g = [b1 c2] alone, E3 (D6 3 after)
    assert _ids("SEQ(A a, AND(SEQ(B b, C c)+ g[], E e), D d AFTER 1 TO 2) WITHIN 20", "A@0 B@1 C@2 E@3 B@4 C@5 D@6 D@8") == want(
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 4, "c": 5}], "e": 3, "d": 6},
        {"a": 0, "g": [{"b": 1, "c": 5}], "e": 3, "d": 6},
        {"a": 0, "g": [{"b": 4, "c": 5}], "e": 3, "d": 6},
    )


def test_a_gap_after_an_or_holding_a_group_follows_the_branch_taken() -> None:
    # the group's branch: its last c (C5: D6); the e branch: E3 (D6 3 after, too late)
    assert _ids("SEQ(A a, OR(SEQ(B b, C c)+ g[], E e), D d AFTER 0 TO 1) WITHIN 20", "A@0 B@1 C@2 E@3 B@4 C@5 D@6 D@8") == want(
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 4, "c": 5}], "d": 6},
        {"a": 0, "g": [{"b": 1, "c": 5}], "d": 6},
        {"a": 0, "g": [{"b": 4, "c": 5}], "d": 6},
    )


def test_a_gap_in_events_after_an_and_holding_a_group() -> None:
    # positions: the latest of c5 (pos 5) and e3: D@6 (pos 6) and D@8 (pos 7); g = [b1 c2]: E3, pos 6 is 3 after
    assert _ids("SEQ(A a, AND(SEQ(B b, C c)+ g[], E e), D d AFTER 1 TO 2 EVENTS) WITHIN 20 EVENTS", "A@0 B@1 C@2 E@3 B@4 C@5 D@6 D@8") == want(
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 4, "c": 5}], "e": 3, "d": 6},
        {"a": 0, "g": [{"b": 1, "c": 5}], "e": 3, "d": 6},
        {"a": 0, "g": [{"b": 4, "c": 5}], "e": 3, "d": 6},
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 4, "c": 5}], "e": 3, "d": 7},
        {"a": 0, "g": [{"b": 1, "c": 5}], "e": 3, "d": 7},
        {"a": 0, "g": [{"b": 4, "c": 5}], "e": 3, "d": 7},
    )


def test_the_diagram_draws_the_gap_after_an_and_holding_a_group() -> None:
    from petricep.export.model import build_diagram
    from petricep.merge import build_net

    (p,) = parse_text("PATTERN p: SEQ(A a, AND(SEQ(B b, C c)+ g[], E e), D d AFTER 0 TO 3) WITHIN 20").patterns
    nodes = build_diagram(build_net([p]), merged=False).nodes
    assert {n.label for n in nodes if n.label[0] == "D d"} == {("D d", "0 to 3 after the latest of b, c, e", "within 20")}


GROUP_TYPES = ("A", "B", "C")


@st.composite
def after_group_composites(draw: Any, name: str = "p") -> Pattern:
    """``SEQ(A a, AND|OR(<a group, maybe gapped inside>, T e), [!(T n),] T d AFTER .. [EVENTS], [T f])``:
    the step after the composite follows its latest event; any strategy, a time or a count
    window (gaps in EVENTS under it), ON TIMEOUT where the clocks agree, a key."""
    t = lambda: draw(st.sampled_from(GROUP_TYPES))  # noqa: E731
    window = draw(st.sampled_from(["4", "7", "5 EVENTS", "7 EVENTS"]))
    count = window.endswith("EVENTS")
    events: list[bool] = []

    def gap() -> str:
        lo = draw(st.integers(0, 2))
        events.append(count and draw(st.booleans()))
        return f" AFTER {lo} TO {lo + draw(st.integers(0, 3))}{' EVENTS' if events[-1] else ''}"

    inner = f"SEQ({t()} b, {t()} c{gap() if draw(st.booleans()) else ''})"
    group = f"{inner}{draw(st.sampled_from(['+', '+', '{1,2}', '{2}']))} g[]"
    side = [group, f"{t()} e"]
    if draw(st.booleans()):
        side.reverse()
    steps = ["A a", f"{draw(st.sampled_from(['AND', 'OR']))}({', '.join(side)})"]
    if draw(st.booleans()):
        steps.append(f"!({t()} n)")
    steps.append(f"{t()} d{gap()}")
    if draw(st.booleans()):
        steps.append(f"{t()} f{gap() if draw(st.booleans()) else ''}")
    strategy = draw(st.sampled_from(["", "skip-till-next-match", "strict-contiguity", "partition-contiguity"]))
    where = [w for w in ("[k]" if strategy == "partition-contiguity" or draw(st.booleans()) else "", strategy) if w]
    clock_agrees = all(events) if count else not any(events)
    timeout = " ON TIMEOUT RETURN Late(x = a.x)" if clock_agrees and draw(st.booleans()) else ""
    text = f"SEQ({', '.join(steps)}){' WHERE ' + ' AND '.join(where) if where else ''} WITHIN {window}{timeout}"
    (p,) = parse_text(f"PATTERN {name}: {text}").patterns
    return p


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), after_group_composites(), streams(types=GROUP_TYPES, max_size=9))
def test_kernel_equals_engine_equals_reference_after_an_and_or_holding_a_group(data: Any, p: Pattern, events: list[Any]) -> None:
    agree([p], events, tie_rules(data.draw, [p]))


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), after_group_composites("p"), after_group_composites("q"), streams(types=GROUP_TYPES, max_size=8))
def test_merged_kernel_equals_engine_equals_reference_after_an_and_or_holding_a_group(
    data: Any, p: Pattern, q: Pattern, events: list[Any]
) -> None:
    pats = [p, q]
    agree(pats, events, tie_rules(data.draw, pats))


# ----------------------------------------------------------------------------- UNTIL reading the group so far


def test_a_stop_condition_reads_the_iterations_begun() -> None:
    # count(g[]) at a stop event: the iterations begun so far. U3 (x 0) stops none (each group
    # spanning it has begun one); U6 (x 2) stops a group across it that has begun 1 or 2
    text = "SEQ(A a, SEQ(B b, C c)+ g[] UNTIL U u, D d) WHERE u.x >= count(g[]) WITHIN 20"
    spec = "A@0:x=0 B@1:x=0 C@2:x=0 U@3:x=0 B@4:x=0 C@5:x=0 U@6:x=2 B@7:x=0 C@8:x=0 D@9:x=0"
    assert _ids(text, spec) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 4, "c": 5}], "d": 9},
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 9},
        {"a": 0, "g": [{"b": 1, "c": 5}], "d": 9},
        {"a": 0, "g": [{"b": 4, "c": 5}], "d": 9},
        {"a": 0, "g": [{"b": 7, "c": 8}], "d": 9},
    )


def test_a_stop_condition_reads_the_latest_first_step() -> None:
    # u.x > g[last].b.x, the latest b so far: U3 (4 > b1's 0) stops what spans it after b1;
    # U5 (5, not > b4's 5) stops nothing; U7 (6 > 5) stops what spans it after b4
    text = "SEQ(A a, SEQ(B b, C c)+ g[] UNTIL U u, D d) WHERE u.x > g[last].b.x WITHIN 20"
    spec = "A@0:x=0 B@1:x=0 C@2:x=5 U@3:x=4 B@4:x=5 U@5:x=5 C@6:x=1 U@7:x=6 B@8:x=0 C@9:x=0 D@10:x=0"
    assert _ids(text, spec) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 10}, {"a": 0, "g": [{"b": 4, "c": 6}], "d": 10}, {"a": 0, "g": [{"b": 8, "c": 9}], "d": 10}
    )


def test_a_stop_of_the_first_steps_type_reads_the_group_before_it() -> None:
    # a B is a stop when its x exceeds the latest b before it: B3 (3 > 1) is no b after b1 and
    # stops (b1 c2) from growing; B5 (2 > b3's 3? no) may follow b3; b3 and b5 open groups (the first event is exempt)
    text = "SEQ(A a, SEQ(B b, C c)+ g[] UNTIL B u, D d) WHERE u.x > g[last].b.x WITHIN 20"
    spec = "A@0:x=0 B@1:x=1 C@2:x=0 B@3:x=3 C@4:x=4 B@5:x=2 C@6:x=6 D@7:x=0"
    assert _ids(text, spec) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 7},
        {"a": 0, "g": [{"b": 3, "c": 4}], "d": 7},
        {"a": 0, "g": [{"b": 3, "c": 4}, {"b": 5, "c": 6}], "d": 7},
        {"a": 0, "g": [{"b": 3, "c": 6}], "d": 7},
        {"a": 0, "g": [{"b": 5, "c": 6}], "d": 7},
    )


def test_a_stop_condition_reading_an_iteration_not_begun_is_false() -> None:
    # g[2].b.x at U5: a group that has begun one iteration has none (no stop); one with b3 has
    # x 1 < 2 (a stop for what spans U5)
    text = "SEQ(A a, SEQ(B b, C c)+ g[] UNTIL U u, D d) WHERE u.x > g[2].b.x WITHIN 20"
    spec = "A@0:x=0 B@1:x=1 C@2:x=1 B@3:x=1 C@4:x=1 U@5:x=2 B@6:x=3 C@7:x=3 D@8:x=0"
    got = _ids(text, spec)
    assert want({"a": 0, "g": [{"b": 1, "c": 4}, {"b": 6, "c": 7}], "d": 8}) <= got
    assert not want({"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}, {"b": 6, "c": 7}], "d": 8}) & got
    assert len(got) == 10


@pytest.mark.parametrize("read", ["g[1].c.x", "g[last].c.x", "sum(g[].c.x)"])
def test_a_stop_condition_reading_a_later_step_is_refused(read: str) -> None:
    at = read.split("(")[-1]
    _refused(
        f"SEQ(A a, SEQ(B b, C c)+ g[] UNTIL U u, D d) WHERE u.x > {read}",
        PatternUnsupportedError,
        "a stop condition (UNTIL ... u) of the repeated group g[] reads the group so far: its first step "
        "(g[last].b.x, g[1].b.x, sum(g[].b.x)) and count(g[]) (the iterations begun), not 'c': a stop event "
        "before an iteration's c would find it not bound yet",
        at if read.startswith("g") else read,
    )


def _group_of(node: Node) -> Group:
    return next(iter(groups_of(node)))


def _stop_read(draw: Any, g: Group) -> Any:
    """A read of the group so far a stop condition may make (its first step, count(g[]))."""
    first = g.members[0]
    kind = draw(st.sampled_from(["k", "last", "count", "sum", "min", "max"]))
    if kind in ("k", "last"):
        return Attr(g.var, "x", Index(IDX_CONST, draw(st.integers(1, 3))) if kind == "k" else Index(IDX_LAST), member=first)
    if kind == "count":
        return BinOp("+", Agg("count", g.var, None), Num(draw(st.integers(0, 2))))
    return Agg(kind, g.var, "x", member=first)


def _first_required(p: Pattern) -> bool:
    """Whether the pattern's group starts with a required step (a stop event is refused on
    one starting with an optional step)."""
    first = _group_of(p.structure).children[0]
    return not (isinstance(first, EventRef) and first.optional)


@st.composite
def stopped_groups(draw: Any, name: str = "p") -> Pattern:
    """test_groups_bounded.py's bounded groups with a stop event whose condition reads the
    group so far (and maybe the stop event alone); not on a group starting with an optional
    step (refused: an iteration may start at it or after it)."""
    p = draw(bounded_patterns(name).filter(_first_required))
    g = _group_of(p.structure)
    stop = g.until or EventRef(draw(st.sampled_from(("A", "B", "C"))), "u")
    op = draw(st.sampled_from(("=", "!=", "<", "<=", ">", ">=")))
    cond = Compare(op, Attr(stop.var, "x"), _stop_read(draw, g))
    structure = _rebound(p.structure, g.least, g.most, mode=g.mode, until=stop)
    return replace(p, structure=structure, conditions=(*p.conditions, cond))


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), stopped_groups())
def test_kernel_equals_engine_equals_reference_on_stops_reading_the_group(data: Any, p: Pattern) -> None:
    engines_equal_reference(data, p)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), stopped_groups("p"), stopped_groups("s"))
def test_merged_kernel_equals_engine_equals_reference_on_stops_reading_the_group(data: Any, p: Pattern, s: Pattern) -> None:
    """The pattern, a copy without its stop condition, and one drawn apart, in one net."""
    pats = [p, replace(p, name="q", conditions=p.conditions[:-1]), s]
    events = data.draw(streams(types=_types(*pats), max_size=9, min_size=4))
    tie = tie_rules(data.draw, pats)
    engine = _kernel_equals_engine(pats, events, tie, data.draw(st.integers(0, len(events))))
    assert _sorted(engine) == _sorted(reference_run(pats, events, tie))


# ----------------------------------------------------------------------------- GREEDY / RELUCTANT in an OR branch


def test_greedy_on_a_group_in_an_or_branch_keeps_the_iteration() -> None:
    # B3 could start g's next iteration or be d: GREEDY keeps the iteration (then no d comes);
    # the other branch, e, is blocked by a skipped B (skip-till-next-match) only after an a
    text = "OR(SEQ(A a, SEQ(B b, C c)+ g[] {mode}, B d), C e) WHERE skip-till-next-match WITHIN 20"
    spec = "A@0 B@1 C@2 B@3 C@4 B@5"
    assert _ids(text.format(mode="GREEDY"), spec) == want({"e": 2}, {"e": 4})
    assert _ids(text.format(mode="RELUCTANT"), spec) == want({"a": 0, "g": [{"b": 1, "c": 2}], "d": 3}, {"e": 2}, {"e": 4})


def test_greedy_on_a_group_in_a_seq_inside_an_or() -> None:
    text = "SEQ(A a, OR(SEQ(SEQ(B b, C c)+ g[] {mode}, B d), C e)) WHERE skip-till-next-match WITHIN 20"
    spec = "A@0 B@1 C@2 B@3 C@4 B@5"
    assert _ids(text.format(mode=""), spec) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 3}, {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 5}
    )
    assert _ids(text.format(mode="GREEDY"), spec) == want()
    assert _ids(text.format(mode="RELUCTANT"), spec) == want({"a": 0, "g": [{"b": 1, "c": 2}], "d": 3})


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # C2 could be g's c (inside its first iteration) or the sibling d: GREEDY keeps the
        # group (d is C6), RELUCTANT the sibling (the iteration's c is then C4)
        ("GREEDY", {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "f": 5, "d": 6, "e": 7}),
        ("RELUCTANT", {"a": 0, "g": [{"b": 1, "c": 4}], "f": 5, "d": 2, "e": 7}),
    ],
)
def test_greedy_and_reluctant_on_a_group_under_and_choose_against_a_sibling(mode: str, expected: dict[str, Any]) -> None:
    text = f"SEQ(A a, AND(SEQ(SEQ(B b, C c)+ g[] {mode}, E f), C d), E e) WHERE skip-till-next-match"
    assert _ids(text, "A@0 B@1 C@2 B@3 C@4 E@5 C@6 E@7") == want(expected)


def test_greedy_on_a_group_that_is_a_child_of_and_stays_refused() -> None:
    _refused(
        "SEQ(A a, AND(SEQ(B b, C c)+ g[] GREEDY, D d), E e) WHERE skip-till-next-match",
        PatternUnsupportedError,
        "GREEDY on a repeated group (g[]) is supported on a step of a SEQ (the pattern's, one in an OR branch or an "
        "AND), not yet as a child of AND or OR itself: put it in a SEQ with the step after it",
        "g[] GREEDY",
    )


@st.composite
def or_modes(draw: Any, name: str = "p") -> Pattern:
    """A group with GREEDY / RELUCTANT (or none) as a step of a SEQ in an OR branch, the OR the
    whole pattern or a step of the pattern's SEQ; skip-till-next-match, any bounds, window, key."""
    t = lambda: draw(st.sampled_from(GROUP_TYPES))  # noqa: E731
    mode = draw(st.sampled_from(["", " GREEDY", " RELUCTANT"]))
    quant = draw(st.sampled_from(["+", "+", "{1,2}", "{2,}", "*"]))
    group = f"SEQ({t()} b, {t()} c){quant} g[]{mode}"
    branch = [group, f"{t()} d"] + ([f"{t()} f"] if draw(st.booleans()) else [])
    if draw(st.booleans()):
        branch.insert(0, "A a")
    other = f"{t()} e"
    seq = f"SEQ({', '.join(branch)})"
    kids = [seq, other] if draw(st.booleans()) else [other, seq]
    alt = f"OR({', '.join(kids)})"
    text = alt if draw(st.booleans()) or quant == "*" and branch[0] == group else f"SEQ(A z, {alt})"
    where = ["skip-till-next-match"] + (["[k]"] if draw(st.booleans()) else [])
    if draw(st.booleans()):
        where.append(draw(st.sampled_from(["g[i].c.x >= g[i].b.x", "count(g[]) <= 2", "d.x > g[last].c.x"])))
    window = draw(st.sampled_from(["", " WITHIN 5", " WITHIN 8"]))
    (p,) = parse_text(f"PATTERN {name}: {text} WHERE {' AND '.join(where)}{window}").patterns
    return p


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), or_modes())
def test_kernel_equals_engine_equals_reference_on_modes_in_an_or_branch(data: Any, p: Pattern) -> None:
    events = data.draw(streams(types=_types(p), max_size=10, min_size=4))
    tie = tie_rules(data.draw, [p])
    engine = _kernel_equals_engine([p], events, tie, data.draw(st.integers(0, len(events))))
    assert _sorted(engine) == _sorted(reference_run([p], events, tie))


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), or_modes("p"), or_modes("q"))
def test_merged_kernel_equals_engine_equals_reference_on_modes_in_an_or_branch(data: Any, p: Pattern, q: Pattern) -> None:
    pats = [p, q]
    events = data.draw(streams(types=_types(*pats), max_size=9, min_size=4))
    tie = tie_rules(data.draw, pats)
    engine = _kernel_equals_engine(pats, events, tie, data.draw(st.integers(0, len(events))))
    assert _sorted(engine) == _sorted(reference_run(pats, events, tie))


# ----------------------------------------------------------------------------- a negation inside a group reading its iteration


def test_a_negation_reads_the_iteration_it_lies_in() -> None:
    # no X between b and c with the b's v: X2 (v 2) spares b1's iteration, X5 (v 2) breaks b4's
    text = "SEQ(A a, SEQ(B b, !(X x), C c)+ g[], D d) WHERE x.v = g[i].b.v WITHIN 20"
    spec = "A@0:v=0 B@1:v=1 X@2:v=2 C@3:v=0 B@4:v=2 X@5:v=2 C@6:v=0 D@7:v=0"
    assert _ids(text, spec) == want({"a": 0, "g": [{"b": 1, "c": 3}], "d": 7}, {"a": 0, "g": [{"b": 1, "c": 6}], "d": 7})


def test_a_negation_reads_every_step_of_its_iteration_before_it() -> None:
    # X7 (v 2 > b5 0 + c6 1) breaks the iteration (b5 c6 e8); (b1 c6 e8): 2 > 1 + 1 fails, kept
    text = "SEQ(A a, SEQ(B b, C c, !(X x), E e)+ g[], D d) WHERE x.v > g[i].b.v + g[i].c.v WITHIN 20"
    spec = "A@0:v=0 B@1:v=1 C@2:v=1 X@3:v=2 E@4:v=0 B@5:v=0 C@6:v=1 X@7:v=2 E@8:v=0 D@9:v=0"
    assert _ids(text, spec) == want(
        {"a": 0, "g": [{"b": 1, "c": 2, "e": 4}], "d": 9},
        {"a": 0, "g": [{"b": 1, "c": 2, "e": 8}], "d": 9},
        {"a": 0, "g": [{"b": 1, "c": 6, "e": 8}], "d": 9},
    )


# (what a negation inside a group may not read: tests/features/test_groups_negation_reads.py)


def _between_steps(g: Group) -> tuple[str, list[str]] | None:
    """A negation between two steps of ``g`` and the steps before it, or None."""
    seen: list[str] = []
    for c in g.children:
        if isinstance(c, EventRef) and c.negated:
            return (c.var, list(seen)) if seen and len(seen) < len(g.members) else None
        if isinstance(c, EventRef):
            seen.append(c.var)
    return None


@st.composite
def negations_reading_the_iteration(draw: Any, name: str = "p") -> Pattern:
    """test_groups.py's grouped patterns whose negation between two steps has a condition
    reading its iteration's steps before it (maybe with the negated event alone; no optional
    step, which a negation may not stand next to or read yet)."""
    p = draw(grouped_patterns(name, optional=False))
    g = _group_of(p.structure)
    found = _between_steps(g)
    if found is None:
        steps = [c for c in g.children if isinstance(c, EventRef) and not c.negated]  # (one between iterations: moved)
        at = draw(st.integers(1, max(1, len(steps) - 1))) if len(steps) > 1 else 1
        inner = (*steps[:at], EventRef(draw(st.sampled_from(GROUP_TYPES)), "x", negated=True), *steps[at:])
        if len(steps) == 1:
            inner = (*inner, EventRef(draw(st.sampled_from(GROUP_TYPES)), "s9"))
        structure = _regroup(p.structure, replace(g, seq=replace(g.seq, children=inner)))
        p = replace(p, structure=structure, conditions=tuple(c for c in p.conditions if "x" not in _names(c)))
        g = _group_of(p.structure)
        found = _between_steps(g)
    assert found is not None
    neg, pre = found
    op = draw(st.sampled_from(("=", "!=", "<", "<=", ">", ">=")))
    read: Any = Attr(g.var, "x", Index(IDX_CUR), member=draw(st.sampled_from(pre)))
    if len(pre) > 1 and draw(st.booleans()):
        read = BinOp("+", read, Attr(g.var, "x", Index(IDX_CUR), member=pre[0]))
    return replace(p, conditions=(*p.conditions, Compare(op, Attr(neg, "x"), read)))


def _names(expr: Any) -> set[str]:
    return set(vars_of(expr))


def _regroup(node: Node, new: Group) -> Node:
    """``node`` with its repeated group replaced by ``new``."""
    if isinstance(node, Group):
        return new
    if isinstance(node, EventRef):
        return node
    return replace(node, children=tuple(_regroup(c, new) for c in node.children))


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), negations_reading_the_iteration())
def test_kernel_equals_engine_equals_reference_on_negations_reading_their_iteration(data: Any, p: Pattern) -> None:
    engines_equal_reference(data, p)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), negations_reading_the_iteration("p"), negations_reading_the_iteration("s"))
def test_merged_kernel_equals_engine_equals_reference_on_negations_reading_their_iteration(data: Any, p: Pattern, s: Pattern) -> None:
    pats = [p, replace(p, name="q", conditions=p.conditions[:-1]), s]
    events = data.draw(streams(types=_types(*pats), max_size=9, min_size=4))
    tie = tie_rules(data.draw, pats)
    engine = _kernel_equals_engine(pats, events, tie, data.draw(st.integers(0, len(events))))
    assert _sorted(engine) == _sorted(reference_run(pats, events, tie))


# ----------------------------------------------------------------------------- gaps in EVENTS beside ARCHIVED variables


def test_a_gap_in_events_beside_archived_variables_contradicts_their_window() -> None:
    _refused(
        "SEQ(ARCHIVED A a, B b, C c AFTER 1 TO 2 EVENTS) WITHIN 5 EVENTS",
        PatternUnsupportedError,
        "a per-step gap in EVENTS cannot stand in a pattern with ARCHIVED variables: the gap needs a count window "
        "(WITHIN n EVENTS) and ARCHIVED variables a time window (a count window counts live events only, the "
        "archive's have no place among them): write the gap in time units",
        "AFTER 1 TO 2 EVENTS",
    )
    from petricep.errors import PatternError
    from petricep.merge import build_net

    (p,) = parse_text("PATTERN p: SEQ(ARCHIVED A a, B b, C c) WITHIN 5 EVENTS").patterns
    with pytest.raises(PatternError) as err:  # (the window it would need, refused on its own)
        build_net([p])
    assert "a pattern with ARCHIVED variables needs a time window (WITHIN n EVENTS counts live events only)" in str(err.value)
