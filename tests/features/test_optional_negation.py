"""Negations beside optional steps and negation conditions reading them (issue 42).

``SEQ(A a, !(N n), B? b, D d)``: the negation forbids an ``N`` between its neighbouring
positive steps *as bound in the match*: between ``a`` and ``b`` where the match has ``b``,
between ``a`` and ``d`` where it leaves ``b`` out (SQL's ``PATTERN (A B? D)`` with the
optional row absent: the steps around it are adjacent). With no step bound on a side (only
optional steps there, all left out) the window bounds that side, as for a negation at the
start or end of its SEQ. A negation condition reading a step the match leaves out reads
unknown fields: it holds for no event (SQL: a comparison with null is not true), so that
negation forbids nothing in that match.

Hand cases run on every engine (the brute-force reference, the Python engine, the kernel:
``repetition.run_on``), the expected ids worked out by hand; the properties compare the
Python engine and the kernel with the reference on random SEQs with negations beside
optional steps, under every strategy (GREEDY / RELUCTANT too) and tie rule, merged too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from petricep.compile.compiler import compile_pattern
from petricep.events import Event
from petricep.kernel.lowering import supports
from petricep.lang import ast as A
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.features import scenario
from tests.features.repetition import (
    ENGINES,
    SETTINGS,
    ids_on,
    kernel_built,
    matches,
    run_on,
    sorted_matches,
    use_engine,
    want,
    with_modes,
)
from tests.features.scenario import stream
from tests.strategies import negation_seqs, streams, tie_rules

BEFORE = "PATTERN p: SEQ(A a, !(N n), B? b, D d)"  # the negation before the optional step
AFTER = "PATTERN p: SEQ(A a, B? b, !(N n), D d)"  # ... after it


@pytest.fixture(autouse=True, params=ENGINES)
def matcher(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every engine (``repetition.use_engine``)."""
    yield from use_engine(request)


def ordered_ids(text: str, spec: str, tie: str = "arrival") -> list[str]:
    """The ids of the matches in the order they leave (emission points included)."""
    return [json.dumps(m["ids"], sort_keys=True) for m in matches(text, stream(spec), tie)]


# ----------------------------------------------------------------------------- hand cases


@pytest.mark.parametrize(
    ("text", "spec", "expected"),
    [
        # N between a and b: in both matches' intervals (a..b, a..d)
        (BEFORE, "A@0 N@1 B@2 D@3", []),
        # N between b and d: outside {a,b,d}'s a..b, inside {a,d}'s a..d
        (BEFORE, "A@0 B@1 N@2 D@3", [{"a": 0, "b": 1, "d": 3}]),
        # after the optional step: N between a and b is outside {a,b,d}'s b..d
        (AFTER, "A@0 N@1 B@2 D@3", [{"a": 0, "b": 2, "d": 3}]),
        (AFTER, "A@0 B@1 N@2 D@3", []),
        (AFTER, "A@0 B@1 D@2 N@3", [{"a": 0, "b": 1, "d": 2}, {"a": 0, "d": 2}]),
        # two optional steps before the negation: the nearest bound one is P
        (
            "PATTERN p: SEQ(A a, B? b, C? c, !(N n), D d)",
            "A@0 B@1 N@2 C@3 D@4",
            [{"a": 0, "b": 1, "c": 3, "d": 4}, {"a": 0, "c": 3, "d": 4}],
        ),
        # optional steps on both sides
        (
            "PATTERN p: SEQ(A a, B? b, !(N n), C? c, D d)",
            "A@0 N@1 B@2 C@3 N@4 D@5",
            [{"a": 0, "b": 2, "c": 3, "d": 5}],
        ),
    ],
)
def test_between_the_steps_bound(text: str, spec: str, expected: list[dict[str, int]]) -> None:
    assert ids_on(text, stream(spec)) == want(*expected)


def test_an_optional_first_step_left_out_leaves_the_window() -> None:
    # {b2}: no a, the window's start bounds the negation (N0 >= 2 - 5): refused; {a1,b2}: no N
    # between; {a1,b4}: N3 between; {b4}, {b7}: N0 / N3 within 5 before them; {a1,b7}: past the window
    text = "PATTERN p: SEQ(A? a, !(N n), B b) WITHIN 5"
    assert ids_on(text, stream("N@0 A@1 B@2 N@3 B@4 B@7")) == want({"a": 1, "b": 2})


def test_an_optional_last_step_left_out_waits_for_the_window() -> None:
    # {a0,b1} at B1; {a0} without b is an end negation: N2 within 0 + 3 refuses it; {a3}
    # waits for its window to close (N@7 is past it, and closes it); {a5} for the stream's end
    text = "PATTERN p: SEQ(A a, !(N n), B? b) WITHIN 3"
    got = ordered_ids(text, "A@0 B@1 N@2 A@3 N@7 A@8")
    assert got == [json.dumps(i, sort_keys=True) for i in ({"a": 0, "b": 1}, {"a": 3}, {"a": 5})]
    out = matches(text, stream("A@0 N@4"))
    assert [(m["ids"], m["end"]) for m in out] == [({"a": 0}, 0)]


@pytest.mark.parametrize(
    ("text", "spec", "expected"),
    [
        # b left out: n.x = b.x is unknown, the negation forbids nothing (N3 stands between c
        # and d in {a0,c2,d4}); with b bound, N3 (x = b.x) refuses c2's matches, N8 (x = 2)
        # refuses none
        (
            "PATTERN p: SEQ(A a, B? b, C c, !(N n), D d) WHERE n.x = b.x",
            "A@0:x=0 B@1:x=1 C@2:x=0 N@3:x=1 D@4:x=0 A@5:x=0 B@6:x=1 C@7:x=0 N@8:x=2 D@9:x=0",
            [{"a": 0, "b": 1, "c": 7, "d": 9}, {"a": 0, "b": 6, "c": 7, "d": 9},
             {"a": 5, "b": 6, "c": 7, "d": 9}, {"a": 0, "c": 2, "d": 4}, {"a": 0, "c": 2, "d": 9},
             {"a": 0, "c": 7, "d": 9}, {"a": 5, "c": 7, "d": 9}],
        ),
        # the negation beside the step it reads: {a0,b2,d3} refused (N1.x = b.x), {a0,d3} not
        (
            "PATTERN p: SEQ(A a, !(N n), B? b, D d) WHERE n.x = b.x",
            "A@0:x=0 N@1:x=1 B@2:x=1 D@3:x=0",
            [{"a": 0, "d": 3}],
        ),
        # NOT of an unknown comparison is unknown too: still nothing forbidden without b
        (
            "PATTERN p: SEQ(A a, !(N n), B? b, D d) WHERE NOT (n.x = b.x)",
            "A@0:x=0 N@1:x=1 B@2:x=2 D@3:x=0",
            [{"a": 0, "d": 3}],
        ),
    ],
)
def test_a_negation_condition_reading_a_step_left_out_forbids_nothing(text: str, spec: str, expected: list[dict[str, int]]) -> None:
    assert ids_on(text, stream(spec)) == want(*expected)


@pytest.mark.parametrize(
    ("text", "spec", "expected"),
    [
        # D2 could extend {a0} (b left out): skipped, so no {a0,b3,d4}; {a0,d2} has N1 between
        (f"{AFTER} WHERE skip-till-next-match", "A@0 N@1 D@2 B@3 D@4", []),
        (f"{AFTER} WHERE skip-till-next-match", "A@0 N@1 B@2 D@3", [{"a": 0, "b": 2, "d": 3}]),
        # N4 breaks the contiguity too; {a0,d2} skips B1
        (f"{BEFORE} WHERE strict-contiguity", "A@0 B@1 D@2 A@3 N@4 B@5 D@6 A@7 D@8", [{"a": 0, "b": 1, "d": 2}, {"a": 7, "d": 8}]),
    ],
)
def test_strategies(text: str, spec: str, expected: list[dict[str, int]]) -> None:
    assert ids_on(text, stream(spec)) == want(*expected)


@pytest.mark.parametrize(
    ("spec", "tie", "expected"),
    [
        # N tied with a: after it in arrival order only
        ("A@0 N@0 B@1 D@2", "arrival", [{"a": 0, "b": 2, "d": 3}]),
        ("A@0 N@0 B@1 D@2", "strict", [{"a": 0, "b": 2, "d": 3}, {"a": 0, "d": 3}]),
        # N tied with b: inside {a,d}'s interval, outside {a,b,d}'s (strictly later than b only)
        ("A@0 B@1 N@1 D@2", "strict", [{"a": 0, "b": 1, "d": 3}]),
        ("A@0 B@1 N@1 D@2", "either", [{"a": 0, "b": 1, "d": 3}]),
    ],
)
def test_tie_rules(spec: str, tie: str, expected: list[dict[str, int]]) -> None:
    assert ids_on(AFTER, stream(spec), tie) == want(*expected)


def test_merged_with_a_pattern_sharing_the_prefix() -> None:
    text = f"{AFTER} WITHIN 5\nPATTERN q: SEQ(A a, B b, D d) WITHIN 5"
    got = {(m["pattern"], json.dumps(m["ids"], sort_keys=True)) for m in matches(text, stream("A@0 B@1 N@2 D@3 B@4 D@5"))}
    assert got == {
        ("p", json.dumps({"a": 0, "b": 4, "d": 5})),
        ("q", json.dumps({"a": 0, "b": 1, "d": 3})),
        ("q", json.dumps({"a": 0, "b": 1, "d": 5})),
        ("q", json.dumps({"a": 0, "b": 4, "d": 5})),
    }


@pytest.mark.parametrize(
    ("text", "spec", "expected"),
    [
        # checked at emission, such a negation cancels no partial match: {a3}, N4 after it, may
        # still take a b, so it times out; {a0} did not (B2 extended it), {a0,b2} did
        (f"{AFTER} WITHIN 3 ON TIMEOUT RETURN T(x = a.x)", "A@0:x=1 N@1:x=0 B@2:x=0 A@3:x=2 N@4:x=0 D@9:x=0",
         [({"a": 0, "b": 2}, True), ({"a": 3}, True)]),
        # {a0} without b: N1 refuses it at its window's end; {a0,b2}: N1 between; {a3} matches
        # when its window closes (D9), and a prefix that matched does not time out
        ("PATTERN p: SEQ(A a, !(N n), B? b) WITHIN 3 ON TIMEOUT RETURN T(x = a.x)", "A@0:x=1 N@1:x=0 B@2:x=0 A@3:x=2 D@9:x=0",
         [({"a": 3}, False)]),
    ],
)
def test_timeouts(text: str, spec: str, expected: list[tuple[dict[str, int], bool]]) -> None:
    current = scenario.CURRENT  # (the matcher fixture's, or Spark's key partitions' in test_partition)
    if current is scenario.reference_run or getattr(current, "args", ())[:1] == ("reference",):
        pytest.skip("the reference has no timeouts")
    assert [(m["ids"], "timeout" in m) for m in matches(text, stream(spec))] == expected


def test_such_a_negation_is_checked_at_emission_and_the_kernel_runs_it() -> None:
    """Beside an optional step the interval depends on whether the match binds it, which only
    the complete match says: the negation is not pushed into the scan."""
    (p,) = parse_text(f"{AFTER} WITHIN 5").patterns
    net = compile_pattern(p)
    (neg,) = net.negations
    assert not neg.pushed
    assert (neg.prev_slots, neg.next_slots) == ((1, 0), (2,))  # b, then a; d
    assert supports(build_net([p])) == (True, "covered")


# ----------------------------------------------------------------------------- properties


@st.composite
def optional_negation_patterns(draw: Any, name: str = "p") -> A.Pattern:
    """A SEQ with negations (:func:`tests.strategies.negation_seqs`, over A, B, C) with some of
    its single steps made optional, a negation's neighbours first (every SEQ keeps a required
    step), any strategy (GREEDY / RELUCTANT under skip-till-next-match)."""
    p = draw(negation_seqs(types=("A", "B", "C"), name=name))
    kids = list(p.structure.children)
    singles = [i for i, c in enumerate(kids) if isinstance(c, A.EventRef) and not (c.negated or c.kleene)]
    required = [i for i, c in enumerate(kids) if isinstance(c, A.EventRef) and not c.negated]
    near = [i for i in singles if any(isinstance(k, A.EventRef) and k.negated for k in kids[max(0, i - 1) : i + 2])]
    order = near + [i for i in singles if i not in near]
    for k, i in enumerate(order[: draw(st.integers(1, 2))]):
        if len(required) > 1 and (k == 0 or i in near or draw(st.booleans())):
            kids[i] = replace(kids[i], optional=True)
            required.remove(i)
    window = p.window
    if window is not None and window.value == 0:
        window = replace(window, value=1)  # (the language has no WITHIN 0)
    strategy = draw(st.sampled_from(tuple(A.Strategy)))
    out = replace(p, structure=A.Seq(tuple(kids)), strategy=strategy, window=window)
    return with_modes(draw, out)


def _accepted(p: A.Pattern) -> A.Pattern:
    (checked,) = parse_text(pattern_text(p)).patterns  # the language takes what was drawn
    return checked


@SETTINGS
@given(st.data(), optional_negation_patterns(), streams(types=("A", "B", "C"), max_size=9))
def test_engine_equals_reference(data: Any, p: A.Pattern, events: list[Event]) -> None:
    p = _accepted(p)
    tie = tie_rules(data.draw, [p])
    assert sorted_matches(run_on("python", [p], events, tie)) == sorted_matches(run_on("reference", [p], events, tie))


@SETTINGS
@given(st.data(), optional_negation_patterns("p"), optional_negation_patterns("q"), streams(types=("A", "B", "C"), max_size=8))
def test_merged_engine_equals_reference(data: Any, p: A.Pattern, q: A.Pattern, events: list[Event]) -> None:
    pats = [_accepted(p), _accepted(q)]
    tie = tie_rules(data.draw, pats)
    assert sorted_matches(run_on("python", pats, events, tie)) == sorted_matches(run_on("reference", pats, events, tie))


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not built")
@SETTINGS
@given(st.data(), optional_negation_patterns("p"), optional_negation_patterns("q"), streams(types=("A", "B", "C"), max_size=9))
def test_kernel_equals_python_engine(data: Any, p: A.Pattern, q: A.Pattern, events: list[Event]) -> None:
    """Single and merged (the kernel's run also checks counts and live partial matches)."""
    pats = [_accepted(p)] if data.draw(st.booleans()) else [_accepted(p), _accepted(q)]
    tie = tie_rules(data.draw, pats)
    assert supports(build_net(pats), tie) == (True, "covered")
    run_on("kernel", pats, events, tie)
