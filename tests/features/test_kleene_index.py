"""A condition reading a fixed element of a Kleene list, ``v[k].f`` with k >= 2, under
skip-till-next-match: it counts once the list has its k-th element (docs/SEMANTICS.md,
"Strategies"), so an event it refuses as ``v[k]`` does not extend the list and is skipped;
a repeated group's ``g[k].s`` likewise at iteration k ("Repeated groups").

Hand cases run on every engine (the brute-force reference, the Python engine, the kernel
checked against the Python engine: ``repetition.run_on``); the expected ids were worked out
by hand from docs/SEMANTICS.md. The property compares the Python engine and the kernel with
the reference on random patterns reading ``v[k]`` under skip-till-next-match.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from petricep.kernel.lowering import supports
from petricep.lang import ast as A
from petricep.merge import build_net
from tests.features.repetition import (
    ENGINES,
    SETTINGS,
    ids_on,
    kernel_built,
    run_on,
    sorted_matches,
    use_engine,
    want,
)
from tests.features.scenario import stream
from tests.strategies import OPS, patterns, streams, tie_rules


@pytest.fixture(autouse=True, params=ENGINES)
def matcher(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every engine, in place of conftest.py's two (``repetition.use_engine``)."""
    yield from use_engine(request)


NEXT = "skip-till-next-match"
ANY = "skip-till-any-match"


def test_an_event_the_second_element_condition_refuses_is_skipped() -> None:
    # the report: B2 (x = 4) cannot be b[2], so it does not extend [B1], and B3 is b[2];
    # [1, 2] and [1, 2, 3] fail b[2].x <= 3, a single B has no b[2]
    text = f"PATTERN p: SEQ(B+ b[]) WHERE {NEXT} AND b[2].x <= 3"
    assert ids_on(text, stream("A@0:x=0 B@1:x=1 B@2:x=4 B@3:x=1")) == want({"b": [1, 3]}, {"b": [2, 3]})


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        # any-match: every list of three or more whose third element has x <= 3
        (ANY, [[0, 1, 3], [0, 2, 3], [1, 2, 3]]),
        # next-match: B1 extends [B0] (b[3] is not known at two elements), so [0, 2, 3] skips
        # an event that extends it; B2 (x = 4) is no b[3] of [B0, B1], so [0, 1, 3] stands
        (NEXT, [[0, 1, 3], [1, 2, 3]]),
    ],
)
def test_the_third_element_is_read_at_the_third_take(strategy: str, expected: list[list[int]]) -> None:
    text = f"PATTERN p: SEQ(B+ b[], C c) WHERE {strategy} AND b[3].x <= 3"
    got = ids_on(text, stream("B@0:x=1 B@1:x=1 B@2:x=4 B@3:x=1 C@4:x=0"))
    assert got == want(*({"b": b, "c": 4} for b in expected))


def test_a_negated_element_condition() -> None:
    # NOT (b[2].x = 4): B1 cannot be b[2] of [B0] (it is skipped), B2 can; [2] has no b[2],
    # so the comparison is false and NOT makes it hold; [0] and [1] skip B2, which extends them
    text = f"PATTERN p: SEQ(B+ b[], C c) WHERE {NEXT} AND NOT (b[2].x = 4)"
    got = ids_on(text, stream("B@0:x=1 B@1:x=4 B@2:x=1 C@3:x=0"))
    assert got == want({"b": [0, 2], "c": 3}, {"b": [1, 2], "c": 3}, {"b": [2], "c": 3})


def test_an_element_condition_reading_a_step_before_the_list() -> None:
    # b[2].x > a.x = 2: B2 (x = 1) does not extend [B1]; [2, 3] skips B1, which starts b
    text = f"PATTERN p: SEQ(A a, B+ b[]) WHERE {NEXT} AND b[2].x > a.x"
    assert ids_on(text, stream("A@0:x=2 B@1:x=5 B@2:x=1 B@3:x=3")) == want({"a": 0, "b": [1, 3]})


def test_an_element_condition_reading_an_and_sibling() -> None:
    # b[2].x < d.x = 3, decided once both are bound: B2 (x = 4) does not extend {b: [B0], d}
    text = f"PATTERN p: AND(B+ b[], D d) WHERE {NEXT} AND b[2].x < d.x"
    got = ids_on(text, stream("B@0:x=1 D@1:x=3 B@2:x=4 B@3:x=1"))
    assert got == want({"b": [0, 3], "d": 1}, {"b": [2, 3], "d": 1})


def test_beside_a_whole_list_read_the_condition_waits_for_the_list_to_close() -> None:
    # b[2].x <= b[last].x reads the whole list: B1 extends [B0] whatever it holds, and B2
    # extends [B0, B1]; [0, 1, 2] fails (4 <= 1), so only [1, 2] is left
    text = f"PATTERN p: SEQ(B+ b[], C c) WHERE {NEXT} AND b[2].x <= b[last].x"
    assert ids_on(text, stream("B@0:x=1 B@1:x=4 B@2:x=1 C@3:x=0")) == want({"b": [1, 2], "c": 3})


def test_two_lists_growing_beside_each_other_are_read_once_both_have_the_elements() -> None:
    # b[2].x < d[2].x: B3 (x = 6) is no b[2] of [B0] once d = [D1, D2] (5); B4 (x = 1) is
    text = f"PATTERN p: AND(B+ b[], D+ d[]) WHERE {NEXT} AND b[2].x < d[2].x"
    got = ids_on(text, stream("B@0:x=1 D@1:x=3 D@2:x=5 B@3:x=6 B@4:x=1"))
    assert got == want({"b": [0, 4], "d": [1, 2]}, {"b": [3, 4], "d": [1, 2]})


def test_a_bounded_list_reads_its_second_element_at_its_second_take() -> None:
    # B{2,3}: the step C may come at two elements; B1 (x = 4) is no b[2] of [B0]
    text = f"PATTERN p: SEQ(B{{2,3}} b[], C c) WHERE {NEXT} AND b[2].x <= 3"
    got = ids_on(text, stream("B@0:x=1 B@1:x=4 B@2:x=1 C@3:x=0"))
    assert got == want({"b": [0, 2], "c": 3}, {"b": [1, 2], "c": 3})


@pytest.mark.parametrize(
    ("text", "events", "expected"),
    [
        # g[2].s0.x <= 3 on a group of one step: A2 (x = 4) does not start iteration 2 of [A1]
        (
            "SEQ(SEQ(A s0){1,2} g[]) WHERE skip-till-next-match AND g[2].s0.x <= 3",
            "A@0:x=0 A@1:x=0 A@2:x=4 A@3:x=0",
            [{"g": [{"s0": 0}, {"s0": 1}]}, {"g": [{"s0": 1}, {"s0": 3}]}, {"g": [{"s0": 2}, {"s0": 3}]}],
        ),
        # g[2].s1.x <= 3: B3 (x = 4) is no s1 of iteration 2, B4 is; C5 ends the group
        (
            "SEQ(SEQ(A s0, B s1)+ g[], C c) WHERE skip-till-next-match AND g[2].s1.x <= 3",
            "A@0:x=0 B@1:x=0 A@2:x=0 B@3:x=4 B@4:x=0 C@5:x=0",
            [{"g": [{"s0": 0, "s1": 1}, {"s0": 2, "s1": 4}], "c": 5}],
        ),
    ],
)
def test_a_groups_fixed_iteration_is_read_at_that_iteration(text: str, events: str, expected: list[dict[str, Any]]) -> None:
    assert ids_on(f"PATTERN p: {text}", stream(events)) == want(*expected)


# ----------------------------------------------------------------------------- property


@st.composite
def fixed_read_patterns(draw: Any, name: str = "p") -> A.Pattern:
    """A random pattern under skip-till-next-match (two types, so that its lists meet events
    of their type often: an element the condition refuses, then one it takes) with one more
    conjunct reading ``v[k].x`` (k = 2, 3) of one of its lists, against a constant or a
    fixed element of another list."""
    p = draw(patterns(types=("A", "B"), max_vars=3, max_kleene=2, strategies=(NEXT,), max_conditions=2, name=name))
    lists = [r.var for r in A.events_of(p.structure) if r.kleene]
    assume(lists)
    v, w = draw(st.permutations(lists))[:2] if len(lists) > 1 else (lists[0], "")
    read = A.Attr(v, "x", A.Index(A.IDX_CONST, draw(st.integers(2, 3))))
    other: A.Expr = A.Num(draw(st.integers(0, 5)))
    if w and draw(st.booleans()):  # both lists' fixed elements (beside each other: read once both have them)
        other = A.Attr(w, "x", A.Index(A.IDX_CONST, draw(st.integers(1, 3))))
    conj: A.Expr = A.Compare(draw(st.sampled_from(OPS)), read, other)
    if draw(st.booleans()):
        conj = A.Not(conj)
    return dataclasses.replace(p, conditions=(*p.conditions, conj))


@SETTINGS
@given(st.data(), fixed_read_patterns("p"), fixed_read_patterns("q"), streams(types=("A", "B"), max_size=8))
def test_engines_equal_reference(data: Any, p: A.Pattern, q: A.Pattern, events: list[Any]) -> None:
    """The Python engine against the reference, and the kernel (where built) against the
    Python engine, on patterns reading a list's fixed elements under skip-till-next-match,
    alone and beside another in one net (a take checking ``v[k]`` is not shared with one
    that does not)."""
    pats = [p] if data.draw(st.booleans()) else [p, q]
    tie = tie_rules(data.draw, pats)
    assert sorted_matches(run_on("python", pats, events, tie)) == sorted_matches(run_on("reference", pats, events, tie))
    if kernel_built():
        assert supports(build_net(pats), tie) == (True, "covered")
        run_on("kernel", pats, events, tie)
