"""Consumption (``CONSUME``, ``CONFLICT`` groups) on the kernel against the Python engine (the
hand cases of tests/runtime/test_consumption.py run on the kernel too):
matches taken in emission order, a match holding an event its domain already consumed dropped
(no output, no composite event), an emitted one consuming its consumed variables' events."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.events import Event
from petricep.kernel import supports
from petricep.kernel.lowering import lower
from petricep.lang import ast as A
from petricep.merge import build_net
from tests.budget import examples
from tests.kernel.compare import both
from tests.strategies import patterns, streams

SETTINGS = settings(
    max_examples=examples(200, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def run(text: str, kinds: str, tie: str = "arrival") -> list[tuple[str, dict[str, Any]]]:
    events = [Event(t, i, i, i, {"x": i % 3, "k": 0}) for i, t in enumerate(kinds.split())]
    net = compile_text(text)
    assert supports(net, tie) == (True, "covered")
    out = both(net, events, tie, 1, sweep_every=1)
    assert out["kernel"] == out["python"]
    return [(m["pattern"], m["ids"]) for m in out["kernel"][0]]


def test_consumption_of_selected_variables_and_outsiders() -> None:
    text = (
        "CONFLICT g: p, q\n"
        "PATTERN p: SEQ(A a, B b) WITHIN 10 CONSUME b\n"
        "PATTERN q: SEQ(A a, C c) WITHIN 10 CONSUME a\n"
        "PATTERN r: SEQ(A a, C c) WITHIN 10\n"
    )
    assert run(text, "A B C A C") == [
        ("p", {"a": 0, "b": 1}),
        ("q", {"a": 0, "c": 2}),
        ("r", {"a": 0, "c": 2}),
        ("q", {"a": 3, "c": 4}),
        ("r", {"a": 0, "c": 4}),
        ("r", {"a": 3, "c": 4}),
    ]


def test_a_dropped_match_makes_no_composite_event() -> None:
    text = "PATTERN p: SEQ(A a, B b) WITHIN 10 CONSUME ALL RETURN T(x = a.x)\nPATTERN q: SEQ(T t, C c) WITHIN 10"
    assert run(text, "A A B C") == [("p", {"a": 0, "b": 2}), ("q", {"t": "p[0,2]", "c": 3})]


def test_either_is_covered_with_return() -> None:
    assert run("PATTERN p: SEQ(A a, B b) WITHIN 3 CONSUME ALL", "A A B B", "either") == [
        ("p", {"a": 0, "b": 2}), ("p", {"a": 1, "b": 3}),
    ]
    # p's composite events reach q (ties.run_group: the nets after p's), a time window like
    # p's or a count window: a pattern reading another's events never shares its net
    text = "PATTERN p: SEQ(A a, B b) WITHIN 3 CONSUME ALL RETURN T(x = a.x)\nPATTERN q: SEQ(T t, C c) WITHIN 10"
    for window in ("", " EVENTS"):
        assert run(text + window, "A A B B C", "either") == [
            ("p", {"a": 0, "b": 2}), ("p", {"a": 1, "b": 3}), ("q", {"t": "p[0,2]", "c": 4}), ("q", {"t": "p[1,3]", "c": 4}),
        ]


@SETTINGS
@given(st.data())
def test_consuming_pattern_sets(data: st.DataObject) -> None:
    """Two or three patterns, each consuming all, some or none of its variables, maybe in one
    CONFLICT group, with RETURN and negation, every strategy; ties arrival and strict."""
    pats = []
    for i in range(data.draw(st.integers(1, 3))):
        p = data.draw(patterns(kleene=False, name=f"p{i}", max_depth=1, types=("A", "B", "C")))
        positives = [r.var for r in A.events_of(p.structure) if not r.negated]
        some = st.lists(st.sampled_from(positives), min_size=1, unique=True).map(tuple)
        consume = data.draw(st.one_of(st.none(), st.just(("*",)), some))
        pats.append(dataclasses.replace(p, consume=consume))
    group = data.draw(st.booleans()) and len(pats) > 1
    conflicts = (A.Conflict("g", tuple(p.name for p in pats)),) if group else ()
    assume(any(p.consume for p in pats) or group)
    try:
        net = build_net(pats, conflicts=conflicts)
    except Exception:  # noqa: BLE001 - a combination the compiler refuses (checked elsewhere)
        assume(False)
        raise
    tie = data.draw(st.sampled_from(("arrival", "strict")))
    assume(supports(net, tie)[0])
    events = data.draw(streams(types=("A", "B", "C"), max_size=14))
    out = both(net, events, tie, data.draw(st.integers(0, len(events))), sweep_every=1)
    assert out["kernel"] == out["python"]


def test_a_consumed_slot_no_variable_holds_is_refused_when_lowering() -> None:
    """The kernel reads a match's row by slot without bounds checks: a net whose pattern
    consumes a slot beyond its variables (as a sub-net once did, shifting slots twice) is
    refused by the lowering, naming the pattern and the slots."""
    net = compile_text("PATTERN p: SEQ(A a, B b) CONSUME ALL\n")
    broken = dataclasses.replace(net, patterns=(dataclasses.replace(net.patterns[0], consume=(1, 2)),))
    with pytest.raises(ValueError, match=r"^pattern 'p' consumes slots \[2\] that none of its variables holds$"):
        lower(broken)
