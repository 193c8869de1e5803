"""GREEDY / RELUCTANT after a repeated group (issue 42; Flink's ``oneOrMore().greedy()``, SQL's
``(B C)+?``): under skip-till-next-match, where one event could both start the group's next
iteration and bind the step after it, ``GREEDY`` keeps the iteration, ``RELUCTANT`` the step
(by default both: two partial matches), as after a list. The choice is made where the group
is complete and may grow (inside an iteration its SEQ cannot go on). Hand cases with exact
ids on every matcher; test_groups_bounded.py's properties draw the modes too.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from petricep.errors import PatternSemanticError, PatternUnsupportedError
from petricep.lang.ast import Pattern
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.features.scenario import NEXT, SEQ, ids, pat, ref, stream, want
from tests.features.test_groups import group, matcher  # noqa: F401 (the fixture: every matcher)

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
            "SEQ(A a, AND(SEQ(SEQ(B b, C c)+ g[] GREEDY, E e), D d)) WHERE skip-till-next-match",
            PatternUnsupportedError,
            "GREEDY on a repeated group (g[]) is supported on a step of a SEQ (the pattern's, or one in an OR branch), "
            "not yet inside AND: an AND sibling may bind an event in the middle of an iteration, where the group has no "
            "choice to make",
        ),
    ],
)
def test_refusals(text: str, error: type, message: str) -> None:
    with pytest.raises(error) as err:
        parse_text(f"PATTERN p: {text}", "t.pcep")
    lines = str(err.value).splitlines()
    assert lines[0].split(": error: ")[1] == message
    assert lines[2].strip() == "^" and lines[1][lines[2].index("^")] == "g"

