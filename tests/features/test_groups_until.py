"""A stop event after a repeated group, ``SEQ(B b, C c)+ g[] UNTIL U u`` (issue 42, Flink's
``until`` on a group pattern): as after a list, a stop event arriving between two of the
group's events ends the group: it takes no more events (no further step of its iteration, no
next iteration); the step after the group may still come. A group not complete when stopped
(inside an iteration, or below its fewest iterations) has no future. An event of a step's
type that is a stop event is not taken as that step (the group's first event is exempt); a
group starting with an optional step begins at it or after it. Hand cases with exact ids on
every matcher, a property over optional first steps; test_groups_bounded.py's properties
draw stops too.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petricep.lang.ast import Pattern
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.budget import examples
from tests.features.scenario import ids, stream, want
from tests.features.test_groups import engines_equal_reference, matcher  # noqa: F401 (the fixture: every matcher)


def _ids(text: str, spec: str) -> set[str]:
    (p,) = parse_text(text).patterns
    return ids(p, stream(spec))  # type: ignore[no-any-return]


def test_a_stop_ends_the_group() -> None:
    # U4 lies between b3 and c5 (and between c2 and b6): only (b1 c2) and (b6 c7), each untouched by it
    text = "PATTERN p: SEQ(A a, SEQ(B b, C c)+ g[] UNTIL U u, D d) WITHIN 20"
    assert _ids(text, "A@0 B@1 C@2 B@3 U@4 C@5 B@6 C@7 D@8") == want(
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 8}, {"a": 0, "g": [{"b": 6, "c": 7}], "d": 8}
    )


def test_stop_conditions_read_what_precedes_the_group() -> None:
    # U3 (x 0) is no stop; U5 (x 2 > a.x 1) stops b4's iteration and anything across it
    text = "PATTERN p: SEQ(A a, SEQ(B b, C c)+ g[] UNTIL U u, D d) WHERE u.x > a.x WITHIN 20"
    assert _ids(text, "A@0:x=1 B@1 C@2 U@3:x=0 B@4 U@5:x=2 C@6 B@7 C@8 D@9") == want(
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 9}, {"a": 0, "g": [{"b": 7, "c": 8}], "d": 9}
    )


def test_a_group_stopped_below_its_fewest_iterations_has_no_future() -> None:
    text = "PATTERN p: SEQ(A a, SEQ(B b, C c){2,} g[] UNTIL U u, D d) WHERE skip-till-next-match WITHIN 20"
    assert _ids(text, "A@0 B@1 C@2 U@3 B@4 C@5 D@6") == want()
    assert _ids(text, "A@0 B@1 C@2 B@4 C@5 U@6 B@7 C@8 D@9") == want({"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 8})


def test_a_stop_of_a_step_type_is_no_step() -> None:
    # B3 (x 7 > 5) is a stop: never a b after the group's first event; b1 (first) is exempt
    text = "PATTERN p: SEQ(A a, SEQ(B b, C c)+ g[] UNTIL B u, D d) WHERE u.x > 5 WITHIN 20"
    assert _ids(text, "A@0 B@1:x=9 C@2 B@3:x=7 C@4 B@5:x=1 C@6 D@7") == want(
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 7},
        {"a": 0, "g": [{"b": 3, "c": 4}], "d": 7},
        {"a": 0, "g": [{"b": 3, "c": 4}, {"b": 5, "c": 6}], "d": 7},
        {"a": 0, "g": [{"b": 3, "c": 6}], "d": 7},
        {"a": 0, "g": [{"b": 5, "c": 6}], "d": 7},
    )


def test_with_greedy_and_no_iteration() -> None:
    # after U3 the group takes no more: c5 is d, not b4's c
    text = "PATTERN p: SEQ(A a, SEQ(B b, C c)* g[] GREEDY UNTIL U u, C d) WHERE skip-till-next-match WITHIN 20"
    assert _ids(text, "A@0 B@1 C@2 U@3 B@4 C@5 C@6") == want({"a": 0, "g": [{"b": 1, "c": 2}], "d": 5})


def test_parse_print_and_net() -> None:
    text = "PATTERN p: SEQ(A a, SEQ(B b, C c){1,3} g[] UNTIL U u, D d)\nWHERE u.x > a.x"
    (p,) = parse_text(text).patterns
    assert pattern_text(p).splitlines()[:2] == ["PATTERN p: SEQ(A a, SEQ(B b, C c){1,3} g[] UNTIL U u, D d)", "WHERE u.x > a.x"]
    net = build_net([p]).patterns[0]
    (stop,) = [n for n in net.negations if n.stops]
    assert (stop.var, stop.prev_slots, stop.next_slots, stop.pushed) == ("u", (1, 2), (), True)
    open_at = [pl.label for pl in net.places if stop.index in pl.active_negations]
    assert open_at == ["a;g:b", "a;g{1}", "a;g{1}:b", "a;g{2}", "a;g{2}:b"]


def test_check_says_a_stopped_group_still_grows() -> None:
    from petricep.api.report import warnings_for

    (p,) = parse_text("PATTERN p: SEQ(A a, SEQ(B b, C c)+ g[] UNTIL U u, D d)").patterns
    assert (
        "warning: pattern 'p': repeated group g[] has no WITHIN window: one partial match may grow without bound "
        "until a U event stops the group (UNTIL U u)"
    ) in warnings_for([p])
    (q,) = parse_text("PATTERN q: SEQ(A a, SEQ(B b, C c){2,} g[] UNTIL U u, D d) WITHIN 10").patterns
    assert [w for w in warnings_for([q]) if "repeated group" in w] == [
        "warning: pattern 'q': repeated group g[] ({2,}) under skip-till-any-match keeps every sequence of its "
        "iterations in the window: partial matches can double with each iteration until a U event stops the group "
        "(UNTIL U u) (add LIMIT n PARTIAL MATCHES, a shorter WITHIN, or skip-till-next-match)"
    ]


def test_a_group_starting_with_an_optional_step() -> None:
    # U2 lies between c1 and b3 (one iteration: stopped) but before b3 where the iteration
    # leaves c out: the group begins at b3 then
    text = "PATTERN p: SEQ(A a, SEQ(C? c, B b)+ g[] UNTIL U u, E e)"
    assert _ids(text, "A@0 C@1 U@2 B@3 C@4 B@5 E@6") == want(
        {"a": 0, "g": [{"b": 3}, {"b": 5}], "e": 6},
        {"a": 0, "g": [{"b": 3}, {"c": 4, "b": 5}], "e": 6},
        {"a": 0, "g": [{"b": 3}], "e": 6},
        {"a": 0, "g": [{"b": 5}], "e": 6},
        {"a": 0, "g": [{"c": 4, "b": 5}], "e": 6},
    )


@st.composite
def optional_first_stopped(draw: Any) -> Pattern:
    """``SEQ(A a, SEQ(T? o, T b[, T d])<bound> g[] UNTIL T u[, T e])`` with maybe a Kleene step
    after ``o``, drawn types (the stop's may be a step's), a stop condition not reading the
    group, a strategy."""
    t = [draw(st.sampled_from("ABC")) for _ in range(6)]
    steps = [f"{t[1]}? o", f"{t[3]} b"] + ([f"{t[2]} d"] if draw(st.booleans()) else [])
    if draw(st.booleans()):
        steps.insert(draw(st.integers(1, len(steps))), f"{t[2]}{draw(st.sampled_from(['+', '*', '{1,2}']))} k[]")
    times = draw(st.sampled_from(["+", "{1,2}", "{2}", "{1,3}"]))
    until = draw(st.sampled_from("ABCX"))
    cond = draw(st.sampled_from(["", "WHERE u.x > 0", "WHERE u.x > a.x", "WHERE count(g[]) >= 2"]))
    strategy = draw(st.sampled_from(["", "STRATEGY skip-till-next-match"]))
    tail = "" if draw(st.booleans()) else f", {t[4]} e"
    text = f"PATTERN p: SEQ({t[0]} a, SEQ({', '.join(steps)}){times} g[] UNTIL {until} u{tail}) {cond} {strategy}"
    (p,) = parse_text(text).patterns
    return p


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), optional_first_stopped())
def test_engine_equals_reference_on_an_optional_first_step_with_until(data: Any, p: Pattern) -> None:
    engines_equal_reference(data, p)
