"""Stop conditions (issue 42): ``T+ v[] UNTIL U u``, FlinkCEP's ``until``. An event of type U
(with the conjuncts of WHERE naming ``u``) arriving while the list grows ends the list: it
takes no more events, and the step after it may still come; the stop event is no element.

Hand cases run on every engine (the brute-force reference, the Python engine, the kernel:
``repetition.run_on``); the expected ids were worked out by hand from docs/SEMANTICS.md
("Stop conditions"). The hypothesis properties compare the Python engine and the kernel with
the reference on random patterns with stop events (beside bounded lists and optional
steps), alone and merged, under every strategy and tie rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import PatternError, PatternSemanticError
from petricep.events import Event
from petricep.export.model import ARC_INHIBIT, build_diagram
from petricep.kernel.lowering import supports
from petricep.lang import ast as A
from petricep.lang.growth import state_warnings
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.features.repetition import (
    ENGINES,
    SETTINGS,
    has_until,
    ids_on,
    kernel_built,
    matches,
    repetitions,
    run_on,
    sorted_matches,
    use_engine,
    want,
    with_modes,
    with_until,
)
from tests.features.scenario import stream
from tests.strategies import patterns, streams, tie_rules

ABCD = "PATTERN p: SEQ(A a, B+ b[] UNTIL C c, D d)"


@pytest.fixture(autouse=True, params=ENGINES)
def matcher(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every engine, in place of conftest.py's two (``repetition.use_engine``)."""
    yield from use_engine(request)


def lists(*ls: list[int], d: int) -> set[str]:
    return want(*({"a": 0, "b": lst, "d": d} for lst in ls))


# ----------------------------------------------------------------------------- hand cases


def test_a_stop_event_ends_the_lists_that_grow() -> None:
    # C3 stops [1], [2], [1,2]: B4 extends none of them ([1,4], [2,4], [1,2,4] do not exist)
    # but starts a list of its own; D5 ends every list
    assert ids_on(ABCD, stream("A@0 B@1 B@2 C@3 B@4 D@5")) == lists([1], [2], [1, 2], [4], d=5)


def test_a_stop_event_of_the_lists_type_is_no_element() -> None:
    # B2 (x = 7) stops [1] and is not taken into it; it starts a list ([2], [2,3]): the first
    # element is not tested, as FlinkCEP's; [1,3] has B2 between its events
    text = "PATTERN p: SEQ(A a, B+ b[] UNTIL B s, D d) WHERE s.x > 5"
    got = ids_on(text, stream("A@0:x=0 B@1:x=1 B@2:x=7 B@3:x=2 D@4:x=0"))
    assert got == lists([1], [2], [2, 3], [3], d=4)


def test_a_stop_condition_may_read_a_step_before_the_list() -> None:
    # C3 (x = 2) is not above a.x = 3: no stop; C5 (x = 9) stops every list but [6]
    text = "PATTERN p: SEQ(A a, B+ b[] UNTIL C c, D d) WHERE c.x > a.x"
    got = ids_on(text, stream("A@0:x=3 B@1:x=0 B@2:x=0 C@3:x=2 B@4:x=0 C@5:x=9 B@6:x=0 D@7:x=0"))
    assert got == lists([1], [2], [4], [1, 2], [1, 4], [2, 4], [1, 2, 4], [6], d=7)


def test_a_stop_condition_reads_the_list_so_far() -> None:
    # C3 (x = 3) stops the lists whose last event so far is below it: [1] (x = 1), not [2] or
    # [1,2] (x = 5), so B4 extends [2] and [1,2] but not [1]
    text = "PATTERN p: SEQ(A a, B+ b[] UNTIL C c, D d) WHERE c.x > b[last].x"
    got = ids_on(text, stream("A@0:x=0 B@1:x=1 B@2:x=5 C@3:x=3 B@4:x=0 D@5:x=0"))
    assert got == lists([1], [2], [1, 2], [4], [2, 4], [1, 2, 4], d=5)


def test_a_drop_below_the_lists_last_event_stops_it_and_is_no_element() -> None:
    # a B below the last element so far stops the list: B3 (x = 2) after B2 (x = 3) is no
    # element of [2] or [1,2] and stops them ([2,4], [1,2,4] too); after B1 (x = 1) it is
    text = "PATTERN p: SEQ(A a, B+ b[] UNTIL B s, D d) WHERE s.x < b[last].x"
    got = ids_on(text, stream("A@0:x=0 B@1:x=1 B@2:x=3 B@3:x=2 B@4:x=4 D@5:x=0"))
    assert got == lists([1], [2], [3], [4], [1, 2], [1, 3], [1, 4], [3, 4], [1, 3, 4], d=5)


def test_a_stop_condition_reads_an_aggregate_of_the_list_so_far() -> None:
    # B3 (x = 3) is above the sum so far of [1], [2] (1) and [1,2] (2): it is no element of
    # them; B2 (x = 1) is not above [1]'s sum (1), so [1,2] is a list
    text = "PATTERN p: SEQ(A a, B+ b[] UNTIL B s, D d) WHERE s.x > sum(b[].x) AND count(b[]) >= 1"
    got = ids_on(text, stream("A@0:x=0 B@1:x=1 B@2:x=1 B@3:x=3 D@5:x=0"))
    assert got == lists([1], [2], [3], [1, 2], d=4)


def test_a_stop_condition_reads_an_element_the_list_so_far_may_not_have() -> None:
    # b[2] of the list so far: B2 is no stop for [1] (no second element yet, a comparison
    # reading a missing element is false; itself it would be 1 >= 1), B3 (x = 3 >= 1) is one
    # for [1,2], so [1,2,3] and [1,2,4] are no lists; [1,3] and [1,3,4] are
    text = "PATTERN p: SEQ(A a, B+ b[] UNTIL B s, D d) WHERE s.x >= b[2].x"
    got = ids_on(text, stream("A@0:x=0 B@1:x=5 B@2:x=1 B@3:x=3 B@4:x=0 D@5:x=0"))
    assert got == lists(
        [1], [2], [3], [4], [1, 2], [1, 3], [1, 4], [2, 3], [2, 4], [3, 4], [1, 3, 4], [2, 3, 4], d=5
    )


def test_the_stop_event_may_be_the_next_step() -> None:
    # D3 stops the lists and is the d of their matches; they stay (stopped) for D5 too
    text = "PATTERN p: SEQ(A a, B+ b[] UNTIL D s, D d)"
    got = ids_on(text, stream("A@0 B@1 B@2 D@3 B@4 D@5"))
    assert got == lists([1], [2], [1, 2], d=3) | lists([1], [2], [1, 2], [4], d=5)


def test_a_list_below_its_lower_bound_is_stopped_for_good() -> None:
    # [1] has one event of the two it needs when C2 stops it: it has no future
    text = "PATTERN p: SEQ(A a, B{2,} b[] UNTIL C c, D d)"
    assert ids_on(text, stream("A@0 B@1 C@2 B@3 B@4 D@5")) == lists([3, 4], d=5)


def test_the_whole_pattern_a_list() -> None:
    # FlinkCEP's example "a+ until b" over a1 b a2 a3: {a1}, {a2}, {a3}, {a2 a3}
    assert ids_on("PATTERN p: B+ b[] UNTIL C c", stream("B@0 C@1 B@2 B@3")) == want(
        {"b": [0]}, {"b": [2]}, {"b": [3]}, {"b": [2, 3]}
    )


def test_the_stop_event_has_the_matchs_key() -> None:
    text = ABCD + " WHERE [k]"
    got = ids_on(text, stream("A@0:k=1 B@1:k=1 C@2:k=2 B@3:k=1 D@4:k=1"))
    assert got == lists([1], [3], [1, 3], d=4)


def test_skip_till_next_match() -> None:
    # [1,2] is consumed by nothing after C3 stops it: B4 does not extend it, so it is skipped
    # (a was consumed by B1: no new list starts)
    got = ids_on(f"{ABCD} WHERE skip-till-next-match", stream("A@0 B@1 B@2 C@3 B@4 D@5"))
    assert got == lists([1, 2], d=5)


def test_strict_contiguity_with_a_stop_event_of_the_lists_type() -> None:
    # B2 (x = 9) stops [0,1] and cannot be its element: the contiguous lists before D3 end
    # at B2, which only [2] has
    text = "PATTERN p: SEQ(B+ b[] UNTIL B s, D d) WHERE strict-contiguity AND s.x > 5"
    assert ids_on(text, stream("B@0:x=1 B@1:x=2 B@2:x=9 D@3:x=0")) == want({"b": [2], "d": 3})


@pytest.mark.parametrize(
    ("tie", "expected"),
    [
        # by arrival C@1 (pos 2) comes after B@1 (pos 1) and before B@1 (pos 3)
        ("arrival", [[1], [3], [4], [3, 4]]),
        # by timestamp nothing is strictly between two of a list's events: no list stopped
        ("strict", [[1], [3], [4], [1, 4], [3, 4]]),
    ],
)
def test_tie_rules(tie: str, expected: list[list[int]]) -> None:
    got = ids_on(ABCD, stream("A@0 B@1 C@1 B@1 B@2 D@3"), tie)
    assert got == lists(*expected, d=5)


def test_negation_before_the_list() -> None:
    # E2 kills the lists starting after it ([3], [5]); C4 stops [1], [1,3]
    text = "PATTERN p: SEQ(A a, !(E n), B+ b[] UNTIL C c, D d)"
    assert ids_on(text, stream("A@0 B@1 E@2 B@3 C@4 B@5 D@6")) == lists([1], [1, 3], d=6)


def test_negation_after_the_list() -> None:
    # C3 stops [1], [2], [1,2]; E4 after them kills them; [5] began after both
    text = "PATTERN p: SEQ(A a, B+ b[] UNTIL C c, !(E n), D d)"
    assert ids_on(text, stream("A@0 B@1 B@2 C@3 E@4 B@5 D@6")) == lists([5], d=6)


def test_a_list_inside_and() -> None:
    # C2 stops [0], [1], [0,1] whether A has come or not; B3 starts [3]; A4 completes each
    assert ids_on("PATTERN p: AND(A a, B+ b[] UNTIL C c)", stream("B@0 B@1 C@2 B@3 A@4")) == want(
        *({"a": 4, "b": lst} for lst in ([0], [1], [0, 1], [3]))
    )


def test_an_and_sibling_of_the_stop_type_bound_in_the_match_stops_nothing() -> None:
    # with a = C1 the list [0,2] has no stop event between its events (C1 is the match's);
    # with a = C3, C1 stops [0] before B2
    got = ids_on("PATTERN p: AND(C a, B+ b[] UNTIL C c)", stream("B@0 C@1 B@2 C@3"))
    assert got == want({"a": 1, "b": [0]}, {"a": 1, "b": [2]}, {"a": 1, "b": [0, 2]}, {"a": 3, "b": [0]}, {"a": 3, "b": [2]})


def test_a_list_inside_or() -> None:
    got = ids_on("PATTERN p: OR(B+ b[] UNTIL C c, D d)", stream("B@0 B@1 C@2 B@3 D@4"))
    assert got == want({"b": [0]}, {"b": [1]}, {"b": [0, 1]}, {"b": [3]}, {"d": 4})


def test_a_list_inside_and_inside_seq_reads_the_step_before_the_and() -> None:
    # C3 (x = 5 > a.x) stops [1] before B4: no [1,4]; D2 comes between, the AND takes it
    text = "PATTERN p: SEQ(A a, AND(B+ b[] UNTIL C c, D d), E e) WHERE c.x > a.x"
    got = ids_on(text, stream("A@0:x=1 B@1:x=0 D@2:x=0 C@3:x=5 B@4:x=0 E@5:x=0"))
    assert got == want({"a": 0, "b": [1], "d": 2, "e": 5}, {"a": 0, "b": [4], "d": 2, "e": 5})


def test_return_and_window() -> None:
    text = ABCD + " WITHIN 4 RETURN T(n = count(b[]), first = b[1].x)"
    events = stream("A@0:x=0 B@1:x=1 B@2:x=2 C@3:x=0 B@4:x=4 D@4:x=0 D@5:x=0")
    got = {(tuple(m["ids"]["b"]), m["ids"]["d"], m["attrs"]["n"], m["attrs"]["first"]) for m in matches(text, events)}
    # the window (0..4) leaves D6 out; [4] is after C3
    assert got == {((1,), 5, 1, 1), ((2,), 5, 1, 2), ((1, 2), 5, 2, 1), ((4,), 5, 1, 4)}


def test_a_composite_event_as_the_stop_event() -> None:
    # p's match of E2 enters the stream right after E2 as a C: it stops [1] before B3
    text = f"PATTERN e: E y RETURN C(v = y.x)\n{ABCD}"
    got = ids_on(text, stream("A@0:x=0 B@1:x=1 E@1:x=1 B@2:x=2 D@3:x=0"))
    assert got == want({"y": 2}) | lists([1], [3], d=4)


def test_merged_with_the_same_list_without_a_stop() -> None:
    # one net: each pattern exactly its own matches (the loop place is not shared)
    text = f"{ABCD}\nPATTERN q: SEQ(A a, B+ b[], D d)"
    out = matches(text, stream("A@0 B@1 B@2 C@3 B@4 D@5"))
    assert {str(m["ids"]["b"]) for m in out if m["pattern"] == "p"} == {"[1]", "[2]", "[1, 2]", "[4]"}
    assert sum(m["pattern"] == "q" for m in out) == 7


def test_limit_on_both_engines() -> None:
    # C2 cancels [1] (below its fewest events: no way on), which frees its room in the quota:
    # [3] and [3,4] are stored, [4] is the one rejected, and D5 completes [3,4] (the reference
    # has no LIMIT: the kernel's run, which checks the Python engine's, whatever the matcher)
    (p,) = parse_text("PATTERN p: SEQ(A a, B{2,} b[] UNTIL C c, D d) LIMIT 3 PARTIAL MATCHES REJECT NEW").patterns
    engine = "kernel" if kernel_built() else "python"
    got = [m["ids"] for m in run_on(engine, [p], stream("A@0 B@1 C@2 B@3 B@4 D@5"))]
    assert got == [{"a": 0, "b": [3, 4], "d": 5}]


def test_the_kernel_covers_stop_events() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B+ b[] UNTIL B s, D d) WHERE s.x > a.x AND skip-till-next-match WITHIN 5")
    assert supports(net) == (True, "covered")


def test_net_diagram_check_and_round_trip() -> None:
    net = compile_text(ABCD + " WHERE c.x > a.x WITHIN 5")
    (neg,) = net.patterns[0].negations
    assert (neg.var, neg.type, neg.stops, neg.pushed) == ("c", "C", True, True)
    [place] = [pl for pl in net.patterns[0].places if pl.active_negations]
    assert (place.label, place.growable_negations) == ("a;b+", (0,))
    arcs = [a for a in build_diagram(net, merged=False).arcs if a.kind == ARC_INHIBIT]
    assert [a.label for a in arcs] == ["until C c: c.x > a.x"]
    for src in ("SEQ(A a, B+ b[] UNTIL C c, D d)", "SEQ(A{2,} a[] GREEDY UNTIL A s, B b)", "B{1,3} b[] UNTIL C c"):
        (p,) = parse_text(f"PATTERN p: {src} WHERE skip-till-next-match WITHIN 5").patterns
        assert pattern_text(p).splitlines()[0] == f"PATTERN p: {src}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "PATTERN p: SEQ(A a, B+ b[] UNTIL C c, D d) WITHIN 5",
            ["warning: pattern 'p': Kleene variable b[] under skip-till-any-match keeps every subset of its B events in "
             "the window: partial matches can double with each one until a C event stops the list (UNTIL C c) (add LIMIT n "
             "PARTIAL MATCHES, a shorter WITHIN, or skip-till-next-match)"],
        ),
        (
            "PATTERN p: SEQ(A a, B+ b[] UNTIL C c, D d) LIMIT 5 PARTIAL MATCHES",
            ["warning: pattern 'p': Kleene variable b[] has no WITHIN window: one partial match may grow without bound "
             "until a C event stops the list (UNTIL C c)"],
        ),
        ("PATTERN p: SEQ(A a, B+ b[] UNTIL C c, D d) WHERE skip-till-next-match WITHIN 5", []),
    ],
)
def test_state_warnings(text: str, expected: list[str]) -> None:
    assert state_warnings(parse_text(text).patterns) == expected


@pytest.mark.parametrize(
    ("text", "kind", "message", "column"),
    [
        ("PATTERN p: SEQ(A a UNTIL C c, D d)", PatternError, "unexpected 'UNTIL'", 20),
        ("PATTERN p: SEQ(A a, AND(D d, B+ b[] UNTIL C c)) WHERE c.x > d.x", PatternSemanticError,
         "a stop condition (UNTIL ... c) may read only the stop event and the required steps before b[], not 'd'", 55),
        ("PATTERN p: SEQ(A a, B+ b[] UNTIL C a)", PatternSemanticError, "variable 'a' is bound twice", 34),
        ("PATTERN p: SEQ(A a, B+ b[] UNTIL C c, D d) WHERE c.x > d.x", PatternSemanticError,
         "a stop condition (UNTIL ... c) may read only the stop event and the required steps before b[], not 'd'", 50),
        ("PATTERN p: SEQ(A a, B+ b[] UNTIL C c, D d) RETURN T(x = c.x)", PatternSemanticError,
         "RETURN cannot read the stop event 'c' (UNTIL binds no event of the match)", 57),
        ("PATTERN p: SEQ(A a, B+ b[] UNTIL C c, D d) CONSUME c", PatternSemanticError,
         "CONSUME: a stop event (UNTIL) is no event of the match: 'c'", 52),
        ("PATTERN p: SEQ(A a, B+ b[] UNTIL C c, E+ e[] UNTIL F f, D d) WHERE c.x = f.x", PatternSemanticError,
         "a condition may mention one stop event (UNTIL), this one mentions c, f", 68),
    ],
)
def test_errors_with_carets(text: str, kind: type[Exception], message: str, column: int) -> None:
    with pytest.raises(kind) as err:
        parse_text(text)
    assert message in str(err.value)
    assert f"<pattern>:1:{column}:" in str(err.value)
    lines = str(err.value).splitlines()
    assert lines[-1].index("^") == lines[-2].index(text) + column - 1


# ----------------------------------------------------------------------------- properties


@st.composite
def until_patterns(draw: Any, name: str = "p") -> Any:
    p = draw(patterns(max_vars=4, max_kleene=2, name=name, min_window=1))
    p = repetitions(draw, p, optional=draw(st.booleans()), bounded=draw(st.booleans()))
    p = with_until(draw, p)
    if p.window is not None and draw(st.booleans()):  # stopped partial matches time out too
        p = replace(p, timeout=A.Return(f"Timeout_{name}", (A.ReturnField("n", A.Num(1)),)))
    return p


def no_timeouts(matches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The matches proper (the reference has no timeouts: tests/features/test_until_timeouts.py
    checks them against a construction from it)."""
    return [m for m in matches if "timeout" not in m]


@SETTINGS
@given(st.data(), until_patterns(), until_patterns("q"), streams(max_size=8))
def test_engine_equals_reference(data: Any, p: Any, q: Any, events: list[Event]) -> None:
    """Alone and beside another pattern in one net."""
    assume(has_until(p))
    (checked,) = parse_text(pattern_text(p)).patterns  # the language accepts what was drawn
    assert checked.structure == p.structure
    pats = [p] if data.draw(st.booleans()) else [p, q]
    tie = tie_rules(data.draw, pats)
    assert sorted_matches(no_timeouts(run_on("python", pats, events, tie))) == sorted_matches(run_on("reference", pats, events, tie))


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not built")
@SETTINGS
@given(st.data(), until_patterns("p"), until_patterns("q"), streams(max_size=8))
def test_kernel_equals_python_engine(data: Any, p: Any, q: Any, events: list[Event]) -> None:
    """Single and merged (the kernel's run also checks counts and live partial matches)."""
    assume(has_until(p) or has_until(q))
    pats = [p] if data.draw(st.booleans()) else [p, q]
    tie = tie_rules(data.draw, pats)
    assert supports(build_net(pats), tie) == (True, "covered")  # (merge keeps a list and an event in slots apart)
    run_on("kernel", pats, events, tie)


@SETTINGS
@given(st.data(), streams(types=("A", "B"), max_size=8))
def test_greedy_and_reluctant_with_a_stop_event(data: Any, events: list[Event]) -> None:
    """GREEDY / RELUCTANT beside UNTIL: the Python engine is the reference's, the kernel the
    Python engine's in everything (``run_on("kernel")``)."""
    p = data.draw(patterns(types=("A", "B"), max_vars=4, max_depth=1, max_kleene=2, strategies=["skip-till-next-match"], min_window=1))
    p = with_until(data.draw, with_modes(data.draw, p), types=("A", "B"))
    assume(has_until(p))
    tie = str(data.draw(st.sampled_from(["arrival", "strict"])))
    assert sorted_matches(run_on("python", [p], events, tie)) == sorted_matches(run_on("reference", [p], events, tie))
    if kernel_built():
        run_on("kernel", [p], events, tie)


def test_the_documented_examples_parse_run_on_the_kernel_and_match() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "LANGUAGE.md").read_text()
    block = doc.split("### Stop conditions (`UNTIL`)", 1)[1].split("```", 2)[1]
    parsed = parse_text(block, "LANGUAGE.md")
    assert [p.name for p in parsed.patterns] == ["rise_until_halt", "until_spike"]
    assert supports(build_net(list(parsed.patterns))) == (True, "covered")
    # from s = 0 (limit 5) the reading of 9 stops [1] (and is no element of it) and starts
    # [2] (a list's first event is not tested); from s = 1 (limit 0) only [2] is left
    spike = "PATTERN until_spike" + block.split("PATTERN until_spike", 1)[1]
    row = "sensor=1,value={},limit={}"
    s = " ".join(f"{t}@{i}:{row.format(v, lim)}" for i, (t, v, lim) in enumerate([("reading", 0, 5), ("reading", 1, 0), ("reading", 9, 0), ("alarm", 0, 0)]))
    assert ids_on(spike, stream(s)) == want({"s": 0, "r": [1], "a": 3}, {"s": 0, "r": [2], "a": 3}, {"s": 1, "r": [2], "a": 3})
