"""GREEDY / RELUCTANT after a repeated group (issue 42; Flink's ``oneOrMore().greedy()``, SQL's
``(B C)+?``): under skip-till-next-match, where one event could both start the group's next
iteration and bind the step after it, ``GREEDY`` keeps the iteration, ``RELUCTANT`` the step
(by default both: two partial matches), as after a list. The choice is made where the group
is complete and may grow (inside an iteration its SEQ cannot go on); there the group goes on
by any move of its steps (an optional or Kleene step first or last: one rule over several
steps). Hand cases with exact ids on every matcher; a property over those forms here, and
test_groups_bounded.py's properties draw the modes too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petricep.errors import PatternSemanticError, PatternUnsupportedError
from petricep.lang.ast import Pattern
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.budget import examples
from tests.features.scenario import NEXT, SEQ, ids, pat, ref, stream, want
from tests.features.test_groups import engines_equal_reference, group, matcher  # noqa: F401 (the fixture: every matcher)

# the step after the group has the type of the group's first step: a B may do either
BCB = "A@0 B@1 C@2 B@3 C@4 B@5 C@6 B@7"


def _pattern(mode: str, least: int = 1, most: int | None = None) -> Pattern:
    g = replace(group("g", ref("B", "b"), ref("C", "c")), least=least, most=most, mode=mode)
    return pat(SEQ(ref("A", "a"), g, ref("B", "d")), strategy=NEXT)


def test_by_default_both() -> None:
    assert ids(_pattern(""), stream(BCB)) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 3},
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 5},
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}, {"b": 5, "c": 6}], "d": 7},
    )


def test_greedy_keeps_the_iteration() -> None:
    # every B starts an iteration: b7 has no C after it, so no match
    assert ids(_pattern("greedy"), stream(BCB)) == want()
    assert ids(_pattern("greedy"), stream(BCB + " D@8")) == want()


def test_greedy_up_to_the_upper_bound() -> None:
    # full at two iterations: b5 can only be the step after the group
    assert ids(_pattern("greedy", 1, 2), stream(BCB)) == want({"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 5})


def test_reluctant_keeps_the_step_after() -> None:
    assert ids(_pattern("reluctant"), stream(BCB)) == want({"a": 0, "g": [{"b": 1, "c": 2}], "d": 3})


def test_reluctant_from_the_lower_bound() -> None:
    # the group is complete at two iterations: b3 starts the second (d cannot come yet)
    assert ids(_pattern("reluctant", 2), stream(BCB)) == want({"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 5})


def test_a_group_of_no_iteration_chooses_once_it_has_one() -> None:
    # before its first iteration a B may start it or be d: both (as a list's first element)
    assert ids(_pattern("greedy", 0), stream(BCB)) == want({"a": 0, "d": 1})
    assert ids(_pattern("reluctant", 0), stream(BCB)) == want({"a": 0, "d": 1}, {"a": 0, "g": [{"b": 1, "c": 2}], "d": 3})


def test_parse_print_and_places() -> None:
    text = "PATTERN p: SEQ(A a, SEQ(B b, C c){2,} g[] GREEDY, B d)\nWHERE skip-till-next-match"
    (p,) = parse_text(text).patterns
    assert pattern_text(p).splitlines()[0] == "PATTERN p: SEQ(A a, SEQ(B b, C c){2,} g[] GREEDY, B d)"
    places = build_net([p]).patterns[0].places
    assert [(pl.label, pl.repeat) for pl in places if pl.repeat] == [("a;g{2,}", ((1, "greedy"),))]


def test_a_joined_rule_where_the_group_goes_on_by_several_steps() -> None:
    """A last list: where its iteration is complete the group goes on by the list growing or
    the next iteration's ``b``, one rule over both slots (every entry but the last ``+``)."""
    (p,) = parse_text("PATTERN p: SEQ(A a, SEQ(B b, C+ c[]){1,2} g[] GREEDY, D d)\nWHERE skip-till-next-match").patterns
    places = build_net([p]).patterns[0].places
    assert [(pl.label, pl.repeat) for pl in places if pl.repeat] == [
        ("a;g:c", ((1, "greedy+"), (2, "greedy"))),  # (the first iteration complete at its first c)
        ("a;g{1}:c", ((1, "greedy+"), (2, "greedy"))),
    ]


@pytest.mark.parametrize(
    ("mode", "text", "events", "expected"),
    [
        # an optional step last: C2 could be the iteration's c or f (GREEDY: c, then f is C3)
        ("GREEDY", "SEQ(B b, C? c){1,2} g[] {mode}, C f", "A@0 B@1 C@2 C@3 E@4", [{"a": 0, "g": [{"b": 1, "c": 2}], "f": 3, "e": 4}]),
        ("RELUCTANT", "SEQ(B b, C? c){1,2} g[] {mode}, C f", "A@0 B@1 C@2 C@3 E@4", [{"a": 0, "g": [{"b": 1}], "f": 2, "e": 4}]),
        # first: C2 could start the next iteration (its c) or be f
        ("GREEDY", "SEQ(C? c, B b){1,2} g[] {mode}, C f", "A@0 B@1 C@2 B@3 C@4 E@5", [{"a": 0, "g": [{"b": 1}, {"c": 2, "b": 3}], "f": 4, "e": 5}]),
        ("RELUCTANT", "SEQ(C? c, B b){1,2} g[] {mode}, C f", "A@0 B@1 C@2 B@3 C@4 E@5", [{"a": 0, "g": [{"b": 1}], "f": 2, "e": 5}]),
    ],
)  # fmt: skip
def test_an_optional_step_first_or_last(mode: str, text: str, events: str, expected: list[dict[str, object]]) -> None:
    """Where an iteration may end before its optional last step, or start at or after its
    optional first one, the group going on is any move of its steps."""
    (p,) = parse_text(f"PATTERN p: SEQ(A a, {text.replace('{mode}', mode)}, E e) STRATEGY skip-till-next-match").patterns
    assert ids(p, stream(events)) == want(*expected)


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        (
            "SEQ(A a, SEQ(B b, C c)+ g[] GREEDY, D d)",
            PatternSemanticError,
            "GREEDY on g[] chooses between the group's next iteration and the step after it under "
            "skip-till-next-match: add it to WHERE (under skip-till-any-match it changes nothing)",
        ),
        (
            "SEQ(A a, SEQ(B b, C c)+ g[] RELUCTANT) WHERE skip-till-next-match",
            PatternSemanticError,
            "RELUCTANT on g[] needs a step after the group (its choice is between the two)",
        ),
        (
            "SEQ(A a, AND(SEQ(B b, C c)+ g[] GREEDY, D d), E e) WHERE skip-till-next-match",
            PatternUnsupportedError,
            "GREEDY on a repeated group (g[]) is supported on a step of a SEQ (the pattern's, one in an OR branch or "
            "an AND), not yet as a child of AND or OR itself: put it in a SEQ with the step after it",
        ),
    ],
)
def test_refusals(text: str, error: type, message: str) -> None:
    with pytest.raises(error) as err:
        parse_text(f"PATTERN p: {text}", "t.pcep")
    lines = str(err.value).splitlines()
    assert lines[0].split(": error: ")[1] == message
    assert lines[2].strip() == "^" and lines[1][lines[2].index("^")] == "g"



# ----------------------------------------------------------------------------- properties


@st.composite
def moded_groups(draw: Any) -> Pattern:
    """``SEQ(A a, SEQ(...)<bound> g[] GREEDY|RELUCTANT, T f, T e)`` under skip-till-next-match,
    the group's steps ``b`` (and maybe ``d``) with an optional step first or last and maybe a
    Kleene step anywhere (``+``, ``*``, ``{1,2}``): where the group goes on by several steps."""
    t = [draw(st.sampled_from("AB")) for _ in range(6)]
    steps = [f"{t[1]} b", f"{t[3]} d"] if draw(st.booleans()) else [f"{t[1]} b"]
    steps.insert(draw(st.sampled_from([0, len(steps)])), f"{t[2]}? c")
    if draw(st.booleans()):
        steps.insert(draw(st.integers(0, len(steps))), f"{t[2]}{draw(st.sampled_from(['+', '*', '{1,2}']))} k[]")
    mode = draw(st.sampled_from([" GREEDY", " RELUCTANT"]))
    times = draw(st.sampled_from(["+", "{1,2}", "{2}", "{1,3}"]))
    cond = draw(st.sampled_from(["", "WHERE count(g[]) >= 1", "WHERE g[i].c.x > 0", "WHERE g[i].b.x > 0"]))
    text = f"PATTERN p: SEQ({t[0]} a, SEQ({', '.join(steps)}){times} g[]{mode}, {t[4]} f, {t[5]} e) {cond} STRATEGY skip-till-next-match"
    (p,) = parse_text(text).patterns
    return p


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), moded_groups())
def test_engine_equals_reference_where_the_group_goes_on_by_several_steps(data: Any, p: Pattern) -> None:
    engines_equal_reference(data, p)


@st.composite
def groups_under_and(draw: Any) -> Pattern:
    """``SEQ(A a, AND(SEQ(SEQ(B b, C c, ...)<bound> g[] GREEDY|RELUCTANT, T f), T d), T e)`` (the
    sibling before or after), maybe an optional or Kleene step in the group, drawn types: the
    sibling may take an event the group could, inside an iteration or where one is complete."""
    t = [draw(st.sampled_from("ABC")) for _ in range(6)]
    steps = [f"{t[1]} b", f"{t[3]} c"]
    extra = draw(st.sampled_from(["", "{t}? o", "{t}+ k[]", "{t}* k[]", "{t}{{1,2}} k[]"]))
    if extra:
        steps.insert(draw(st.integers(0, 2)), extra.format(t=draw(st.sampled_from("ABC"))))
    mode = draw(st.sampled_from([" GREEDY", " RELUCTANT"]))
    times = draw(st.sampled_from(["+", "{1,2}", "{2}", "{1,3}"]))
    inner = f"SEQ(SEQ({', '.join(steps)}){times} g[]{mode}, {t[4]} f)"
    body = f"AND({inner}, {t[2]} d)" if draw(st.booleans()) else f"AND({t[2]} d, {inner})"
    (p,) = parse_text(f"PATTERN p: SEQ({t[0]} a, {body}, {t[5]} e) STRATEGY skip-till-next-match").patterns
    return p


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), groups_under_and())
def test_engine_equals_reference_on_modes_under_and(data: Any, p: Pattern) -> None:
    engines_equal_reference(data, p)
