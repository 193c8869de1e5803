"""Bounded Kleene lists (issue 42): ``T{n,m} v[]`` (n to m events), ``T{n,} v[]`` (n or more),
``T{n} v[]`` (exactly n).

Hand cases run on every engine (the brute-force reference, the Python engine, the kernel:
``repetition.run_on``); the expected ids were worked out by hand from docs/SEMANTICS.md. The
hypothesis properties compare the Python engine and the kernel with the reference on random
patterns whose Kleene lists are given bounds, alone and merged, under every strategy and tie
rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import PatternError, PatternSyntaxError
from petricep.events import Event
from petricep.export.model import build_diagram
from petricep.kernel.lowering import supports
from petricep.lang import ast as A
from petricep.lang.growth import growth_warnings
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.features.repetition import (
    ENGINES,
    SETTINGS,
    has_forms,
    ids_on,
    kernel_built,
    matches,
    repetitions,
    run_on,
    sorted_matches,
    use_engine,
    want,
    with_modes,
)
from tests.features.scenario import stream
from tests.strategies import patterns, streams, tie_rules


@pytest.fixture(autouse=True, params=ENGINES)
def matcher(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every engine, in place of conftest.py's two (``repetition.use_engine``)."""
    yield from use_engine(request)


A3B = "A@0 A@1 A@2 B@3"
A4B = "A@0 A@1 A@2 A@3 B@4"


def lists(*ls: list[int], b: int = 3) -> set[str]:
    return want(*({"a": lst, "b": b} for lst in ls))


# ----------------------------------------------------------------------------- hand cases


def test_between_bounds() -> None:
    # every sub-list of the three As with two or three elements
    got = ids_on("PATTERN p: SEQ(A{2,3} a[], B b)", stream(A3B))
    assert got == lists([0, 1], [0, 2], [1, 2], [0, 1, 2])


def test_exactly_n() -> None:
    got = ids_on("PATTERN p: SEQ(A{2} a[], B b)", stream(A3B))
    assert got == lists([0, 1], [0, 2], [1, 2])


def test_at_least_n_has_no_upper_bound() -> None:
    # four As: {2,3} gives the 6 pairs and 4 triples; {2,} the whole list [0,1,2,3] too
    upto = ids_on("PATTERN p: SEQ(A{2,3} a[], B b)", stream(A4B))
    more = ids_on("PATTERN p: SEQ(A{2,} a[], B b)", stream(A4B))
    assert len(upto) == 10
    assert more - upto == lists([0, 1, 2, 3], b=4)
    assert upto <= more


def test_a_bounded_list_at_the_end_emits_each_length_in_bounds() -> None:
    got = ids_on("PATTERN p: SEQ(B b, A{2,3} a[])", stream("B@0 A@1 A@2 A@3"))
    assert got == want({"b": 0, "a": [1, 2]}, {"b": 0, "a": [1, 3]}, {"b": 0, "a": [2, 3]}, {"b": 0, "a": [1, 2, 3]})


def test_iteration_condition_over_a_bounded_list() -> None:
    # x along the list 1, 3, 2: increasing sub-lists of two or more: [0,1], [0,2]
    text = "PATTERN p: SEQ(A{2,3} a[], B b) WHERE a[i].x > a[i-1].x"
    assert ids_on(text, stream("A@0:x=1 A@1:x=3 A@2:x=2 B@3:x=0")) == lists([0, 1], [0, 2])


def test_skip_till_next_match_stops_a_full_list() -> None:
    # [0,1] is full (two events) when A2 comes: A2 cannot extend it, so [0,1] ends at B3;
    # [1] takes A2 (and is gone); [2] has one event, too few for B3; [0] went into [0,1]
    text = "PATTERN p: SEQ(A{2} a[], B b) WHERE skip-till-next-match"
    assert ids_on(text, stream(A3B)) == lists([0, 1], [1, 2])


def test_skip_till_next_match_lets_a_short_list_skip_the_next_step() -> None:
    # [0] has too few events for B1: B1 does not extend it, so it is not skipped over: [0,2]
    text = "PATTERN p: SEQ(A{2,} a[], B b) WHERE skip-till-next-match"
    assert ids_on(text, stream("A@0 B@1 A@2 B@3")) == want({"a": [0, 2], "b": 3})


def test_strict_contiguity() -> None:
    text = "PATTERN p: SEQ(A{2,3} a[], B b) WHERE strict-contiguity"
    assert ids_on(text, stream(A3B)) == lists([1, 2], [0, 1, 2])


def test_negation_after_a_bounded_list() -> None:
    # a C after the list's last event kills it: only lists ending at A3 survive
    text = "PATTERN p: SEQ(A{2,} a[], !(C c), B b)"
    got = ids_on(text, stream("A@0 A@1 C@2 A@3 B@4"))
    assert got == want({"a": [0, 3], "b": 4}, {"a": [1, 3], "b": 4}, {"a": [0, 1, 3], "b": 4})


@pytest.mark.parametrize(("tie", "expected"), [("arrival", [[0, 1], [0, 2], [1, 2]]), ("strict", [[0, 2], [1, 2]])])
def test_tie_rules(tie: str, expected: list[list[int]]) -> None:
    got = ids_on("PATTERN p: SEQ(A{2} a[], B b)", stream("A@0 A@0 A@1 B@2"), tie)
    assert got == lists(*expected, b=3)


def test_window_and_return() -> None:
    text = "PATTERN p: SEQ(A{2,3} a[], B b) WITHIN 3 RETURN T(n = count(a[]), s = sum(a[].x))"
    events = stream("A@0:x=1 A@1:x=2 A@2:x=4 B@3:x=0")
    got = {(tuple(m["ids"]["a"]), m["attrs"]["n"], m["attrs"]["s"]) for m in matches(text, events)}
    assert got == {((0, 1), 2, 3), ((0, 2), 2, 5), ((1, 2), 2, 6), ((0, 1, 2), 3, 7)}


def test_merged_with_an_unbounded_list() -> None:
    # one net: each pattern exactly its own matches
    text = "PATTERN p: SEQ(A{2} a[], B b)\nPATTERN q: SEQ(A+ a[], B b)"
    out = matches(text, stream(A3B))
    assert {str(m["ids"]["a"]) for m in out if m["pattern"] == "p"} == {"[0, 1]", "[0, 2]", "[1, 2]"}
    assert sum(m["pattern"] == "q" for m in out) == 7


def test_the_kernel_covers_bounded_lists() -> None:
    net = compile_text("PATTERN p: SEQ(A{2,4} a[], B b) WHERE skip-till-next-match AND a[i].x > a[i-1].x WITHIN 5")
    assert supports(net) == (True, "covered")


def test_a_place_per_count_and_the_bounds_in_the_diagram() -> None:
    net = compile_text("PATTERN p: SEQ(A{2,} a[], B b)")
    labels = [pl.label for pl in net.patterns[0].places]
    assert labels == ["start", "a{1}", "a{2,}", "a{2,};b"]
    firsts = sorted(n.label[0] for n in build_diagram(net, merged=False).nodes if n.label)
    assert {"A a[1]", "A a[2]", "A+ a[i]", "B b", "a{1}", "a{2,}"} <= set(firsts)


def test_round_trip_and_growth_warning() -> None:
    for src in ("SEQ(A{2,4} a[], B b)", "SEQ(A{2,} a[], B b)", "SEQ(A{3} a[], B b)", "SEQ(A+ a[], B b)"):
        (p,) = parse_text(f"PATTERN p: {src} WITHIN 5").patterns
        assert pattern_text(p).splitlines()[0] == f"PATTERN p: {src}"
    unbounded, bounded = parse_text("PATTERN u: SEQ(A{2,} a[], B b) WITHIN 5\nPATTERN v: SEQ(A{2,4} a[], B b) WITHIN 5").patterns
    assert len(growth_warnings([unbounded])) == 1
    assert growth_warnings([bounded]) == []


@pytest.mark.parametrize(
    ("text", "kind", "message", "column"),
    [
        ("PATTERN p: SEQ(A{0} a[], B b)", PatternSyntaxError, "a repetition {0} binds nothing: leave the step out", 18),
        ("PATTERN p: SEQ(A{3,2} a[], B b)", PatternSyntaxError, "a repetition's upper bound 2 is below its lower bound 3", 20),
        ("PATTERN p: SEQ(A{2,65} a[], B b)", PatternSyntaxError, "a repetition's upper bound is at most 64 (each count is a place of the net): write {2,} and bound count(v[]) in WHERE", 20),
        ("PATTERN p: SEQ(A{2,3} a, B b)", PatternSyntaxError, "unexpected ','; expected '['", 24),
    ],
)
def test_errors_with_carets(text: str, kind: type[Exception], message: str, column: int) -> None:
    with pytest.raises(kind) as err:
        parse_text(text)
    assert message in str(err.value)
    assert f"<pattern>:1:{column}:" in str(err.value)
    lines = str(err.value).splitlines()
    assert lines[-1].index("^") == lines[-2].index(text) + column - 1


# ----------------------------------------------------------------------------- GREEDY / RELUCTANT

RISING = "A@0:x=1 A@1:x=2 A@2:x=3 A@3:x=3"
RUN = "PATTERN p: SEQ(A+ a[] {mode}, A b) WHERE skip-till-next-match AND a[i].x > a[i-1].x AND b.x >= a[last].x"


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # both: an event above the list's last both extends it and ends it
        ("", [([0], 1), ([0, 1], 2), ([1], 2), ([0, 1, 2], 3), ([1, 2], 3), ([2], 3)]),
        # greedy: the list takes what it can; only A3 (not above 3) ends a list
        ("GREEDY", [([0, 1, 2], 3), ([1, 2], 3), ([2], 3)]),
        # reluctant: the step takes what it can; every list ends at its first event
        ("RELUCTANT", [([0], 1), ([1], 2), ([2], 3)]),
    ],
)
def test_greedy_and_reluctant_under_skip_till_next_match(mode: str, expected: list[tuple[list[int], int]]) -> None:
    got = ids_on(RUN.format(mode=mode), stream(RISING))
    assert got == want(*({"a": a, "b": b} for a, b in expected))


def test_a_greedy_bounded_list_stops_at_its_bound() -> None:
    # A{2} a[] GREEDY: a full list cannot take more, so the next A may end it
    text = "PATTERN p: SEQ(A{2} a[] GREEDY, A b) WHERE skip-till-next-match"
    assert ids_on(text, stream("A@0 A@1 A@2")) == want({"a": [0, 1], "b": 2})


@pytest.mark.parametrize("mode", ["GREEDY", "RELUCTANT"])
def test_the_kernel_covers_greedy_and_reluctant(mode: str) -> None:
    assert supports(compile_text(RUN.format(mode=mode))) == (True, "covered")


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("PATTERN p: SEQ(A+ a[] GREEDY, B b)", "GREEDY on a[] chooses between the list and the step after it under skip-till-next-match: add it to WHERE (under skip-till-any-match it changes nothing)", 16),
        ("PATTERN p: SEQ(B b, A+ a[] RELUCTANT) WHERE skip-till-next-match", "RELUCTANT on a[] needs a step after the list (its choice is between the two)", 21),
        ("PATTERN p: SEQ(A+ a[] GREEDY GREEDY, B b) WHERE skip-till-next-match", "unexpected 'GREEDY'", 30),
    ],
)
def test_mode_errors(text: str, message: str, column: int) -> None:
    with pytest.raises(PatternError) as err:
        parse_text(text)
    assert message in str(err.value)
    assert f"<pattern>:1:{column}:" in str(err.value)


# ----------------------------------------------------------------------------- properties


@st.composite
def bounded_patterns(draw: Any, name: str = "p") -> Any:
    p = draw(patterns(max_vars=4, max_kleene=2, name=name, min_window=1))
    return repetitions(draw, p, optional=False)


@SETTINGS
@given(st.data(), bounded_patterns(), streams(max_size=8))
def test_engine_equals_reference(data: Any, p: Any, events: list[Event]) -> None:
    assume(has_forms(p))
    (checked,) = parse_text(pattern_text(p)).patterns  # the language accepts what was drawn
    assert checked.structure == p.structure
    tie = tie_rules(data.draw, [p])
    assert sorted_matches(run_on("python", [p], events, tie)) == sorted_matches(run_on("reference", [p], events, tie))


@SETTINGS
@given(st.data(), bounded_patterns("p"), bounded_patterns("q"), streams(max_size=7))
def test_merged_engine_equals_reference(data: Any, p: Any, q: Any, events: list[Event]) -> None:
    assume(has_forms(p) or has_forms(q))
    pats = [p, q]
    tie = tie_rules(data.draw, pats)
    assert sorted_matches(run_on("python", pats, events, tie)) == sorted_matches(run_on("reference", pats, events, tie))


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not built")
@SETTINGS
@given(st.data(), bounded_patterns("p"), bounded_patterns("q"), streams(max_size=8))
def test_kernel_equals_python_engine(data: Any, p: Any, q: Any, events: list[Event]) -> None:
    """Single and merged (the kernel's run also checks counts and live partial matches)."""
    assume(has_forms(p) or has_forms(q))
    pats = [p] if data.draw(st.booleans()) else [p, q]
    tie = tie_rules(data.draw, pats)
    assert supports(build_net(pats), tie) == (True, "covered")  # (merge keeps a list and an event in slots apart)
    run_on("kernel", pats, events, tie)


@st.composite
def moded_patterns(draw: Any, name: str = "p") -> Any:
    # depth 2: lists in SEQs inside AND or OR too
    p = draw(patterns(types=("A", "B"), max_vars=4, max_depth=2, max_kleene=2, strategies=["skip-till-next-match"], name=name, min_window=1))
    return with_modes(draw, repetitions(draw, p, optional=draw(st.booleans())))


def _moded(p: Any) -> bool:
    return any(r.mode for r in A.events_of(p.structure))


@SETTINGS
@given(st.data(), moded_patterns("p"), moded_patterns("q"), streams(types=("A", "B"), max_size=8))
def test_greedy_and_reluctant_engine_equals_reference(data: Any, p: Any, q: Any, events: list[Event]) -> None:
    """Alone and beside another pattern in one net (a place with a mode is never shared with
    one without it, nor with another mode)."""
    assume(_moded(p))
    (checked,) = parse_text(pattern_text(p)).patterns
    assert checked.structure == p.structure
    pats = [p] if data.draw(st.booleans()) else [p, q]
    tie = str(data.draw(st.sampled_from(["arrival", "strict"])))
    assert sorted_matches(run_on("python", pats, events, tie)) == sorted_matches(run_on("reference", pats, events, tie))


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not built")
@SETTINGS
@given(st.data(), moded_patterns("p"), moded_patterns("q"), streams(types=("A", "B"), max_size=8))
def test_greedy_and_reluctant_kernel_equals_python_engine(data: Any, p: Any, q: Any, events: list[Event]) -> None:
    """The kernel's choice between a list's take and the step after it (``_firing.pxi``
    prefer) is the engine's: the same matches in order, partial matches created, completed
    and live, alone and beside another pattern in one net."""
    assume(_moded(p))
    pats = [p] if data.draw(st.booleans()) else [p, q]
    tie = str(data.draw(st.sampled_from(["arrival", "strict"])))
    assert supports(build_net(pats), tie) == (True, "covered")
    run_on("kernel", pats, events, tie)
