"""RETURN on the kernel: RETURN values in the engine's kinds (ints stay ints, text stays text,
None where a value does not exist), composite events re-entering the net in the engine's
order (after their emitter, round by round, ordered by pattern and by their events' stream
order), their ids built from their matches, keyed by their emitter's partition."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from petricep import kernel
from petricep.api import compile_text
from petricep.events import Event
from petricep.kernel import supports
from petricep.kernel.engine import KernelEngine
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.kernel.compare import check
from tests.strategies import pattern_text, patterns, streams

pytestmark = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built")

SETTINGS = settings(
    max_examples=examples(200, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def drive(engine: Any, events: list[Event]) -> list[str]:
    out = []
    for e in events:
        out += engine.push(Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)))
    return [repr(m.to_dict()) for m in out + engine.flush()]


def producer_and_consumer(data: st.DataObject) -> list[A.Pattern]:
    """A pattern with RETURN T(...) (with an ``x``, and with ``k`` where both patterns are
    keyed) and a pattern over A, B and T; every strategy, negation anywhere."""
    part = data.draw(st.booleans())
    producer = data.draw(patterns(name="p", kleene=False, returns=True, partition=part, types=("A", "B")))
    assume(producer.returns is not None)
    assert producer.returns is not None
    first = producer.returns.fields[0].expr
    assert isinstance(first, A.Attr)
    extra = [A.ReturnField("x", first)]
    if part:
        extra.append(A.ReturnField("k", A.Attr(first.var, "k")))
    ret = A.Return("T", producer.returns.fields + tuple(extra))
    producer = A.Pattern(
        producer.name, producer.structure, producer.conditions, producer.partition, producer.strategy, producer.window,
        returns=ret,
    )
    consumer = data.draw(patterns(name="q", kleene=False, returns=False, partition=part, types=("A", "B", "T")))
    assume("T" in {r.type for r in A.events_of(consumer.structure)})
    return [producer, consumer]


def odd_events(data: st.DataObject) -> list[Event]:
    """A random stream with text ids beside int ones, and float times beside int ones."""
    events = []
    for e in data.draw(streams(max_size=12)):
        idv = data.draw(st.sampled_from((e.id, f"e{e.id}")))
        ts = float(e.ts) if data.draw(st.booleans()) else e.ts
        events.append(Event(e.type, ts, e.pos, idv, dict(e.attrs)))
    return events


@SETTINGS
@given(st.data())
def test_composite_events_feed_a_second_pattern(data: st.DataObject) -> None:
    pats = producer_and_consumer(data)
    events = data.draw(streams(max_size=12))
    check(pats, events, data.draw(st.sampled_from(("arrival", "strict"))), data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_kernel_engine_composites_with_odd_values(data: st.DataObject) -> None:
    """Behind the engine's interface: text ids, int and float times; composite events' ids
    and times are the engine's (``p[1,e2]`` at its emitter's own timestamp)."""
    pats = producer_and_consumer(data)
    events = odd_events(data)
    tie = data.draw(st.sampled_from(("arrival", "strict")))
    net = build_net(pats)
    for p in pats:
        note(pattern_text(p))
    assert drive(KernelEngine(net, tie=tie, batch=data.draw(st.integers(1, 5))), events) == drive(Engine(net, tie=tie), events)


def run_both(text: str, events: list[Event], tie: str = "arrival") -> list[str]:
    net = compile_text(text)
    assert supports(net, tie) == (True, "covered")
    want = drive(Engine(net, tie=tie), events)
    assert drive(KernelEngine(net, tie=tie, batch=3), events) == want
    return want


def test_return_values_keep_their_kinds() -> None:
    """int arithmetic stays int (but /), floats stay floats, text is text, comparisons are
    bools, a division by zero and an unbound variable give None."""
    text = (
        "PATTERN p: SEQ(A a, OR(B b, C c)) WITHIN 10\n"
        "RETURN T(i = a.n * 2 - 1, f = a.v + 1, d = a.n / 2, s = a.s, ok = a.n < a.v AND a.n > 0,\n"
        "         z = a.n / (a.n - a.n), u = b.n, ts = a.ts, id = a.id, m = a.n % 3)"
    )
    events = [
        Event("A", 1, 0, "a1", {"n": 5, "v": 2.5, "s": "red"}),
        Event("B", 2, 1, "b1", {"n": 7, "v": 0.5, "s": "x"}),
        Event("C", 3, 2, "c1", {"n": -4, "v": 1.0, "s": "y"}),
    ]
    want = run_both(text, events)
    assert want == [
        "{'pattern': 'p', 'ids': {'a': 'a1', 'b': 'b1'}, 'start': 1, 'end': 2, 'attrs': {'i': 9, 'f': 3.5, 'd': 2.5, "
        "'s': 'red', 'ok': False, 'z': None, 'u': 7, 'ts': 1, 'id': 'a1', 'm': 2}}",
        "{'pattern': 'p', 'ids': {'a': 'a1', 'c': 'c1'}, 'start': 1, 'end': 3, 'attrs': {'i': 9, 'f': 3.5, 'd': 2.5, "
        "'s': 'red', 'ok': False, 'z': None, 'u': None, 'ts': 1, 'id': 'a1', 'm': 2}}",
    ]


def test_composite_chain_in_rounds_and_keys() -> None:
    """A composite event completes a match whose own composite event completes a third
    pattern's, all at the emitting event, per key; ids name the matches they came from."""
    text = (
        "PATTERN p: SEQ(A a, B b) WHERE [k] RETURN P(k = a.k, x = b.x)\n"
        "PATTERN q: SEQ(P p1, P p2) WHERE [k] AND p2.x > p1.x RETURN Q(k = p1.k, gain = p2.x - p1.x)\n"
        "PATTERN r: SEQ(A a, Q q) WHERE [k] AND q.gain >= 2"
    )
    events = [
        Event("A", 0, 0, 0, {"k": "u", "x": 0}),
        Event("B", 1, 1, 1, {"k": "u", "x": 1}),
        Event("A", 2, 2, 2, {"k": "v", "x": 0}),
        Event("B", 3, 3, 3, {"k": "u", "x": 3}),
        Event("B", 4, 4, 4, {"k": "v", "x": 9}),
    ]
    assert run_both(text, events) == [
        "{'pattern': 'p', 'ids': {'a': 0, 'b': 1}, 'start': 0, 'end': 1, 'attrs': {'k': 'u', 'x': 1}}",
        "{'pattern': 'p', 'ids': {'a': 0, 'b': 3}, 'start': 0, 'end': 3, 'attrs': {'k': 'u', 'x': 3}}",
        "{'pattern': 'q', 'ids': {'p1': 'p[0,1]', 'p2': 'p[0,3]'}, 'start': 1, 'end': 3, 'attrs': {'k': 'u', 'gain': 2}}",
        "{'pattern': 'r', 'ids': {'a': 0, 'q': 'q[p[0,1],p[0,3]]'}, 'start': 0, 'end': 3, 'attrs': {}}",
        "{'pattern': 'p', 'ids': {'a': 2, 'b': 4}, 'start': 2, 'end': 4, 'attrs': {'k': 'v', 'x': 9}}",
    ]


def test_composite_keyed_by_something_else_runs_on_the_engine() -> None:
    net = compile_text(
        "PATTERN p: SEQ(A a, B b) WHERE [k] RETURN P(k = b.x)\nPATTERN q: SEQ(P p1, P p2) WHERE [k]"
    )
    ok, why = supports(net)
    assert not ok
    assert why == "pattern 'p': its composite events are keyed by [k], which is not a copy of its own partition [k]"


def test_composite_ids_are_not_read_in_conditions() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) RETURN P(x = b.x)\nPATTERN q: SEQ(P p1, P p2) WHERE p1.id < p2.id")
    assert supports(net) == (False, "the id of a composite event (a text built from its match) read in a condition")


def test_ids_in_conditions_are_the_input_ids() -> None:
    """``v.id`` compares the events' own ids (not their positions), text or numbers."""
    text = "PATTERN p: SEQ(A a, B b) WHERE a.id < b.id"
    events = [Event("A", 1, 0, 50, {}), Event("B", 2, 1, 10, {}), Event("A", 3, 2, 5, {}), Event("B", 4, 3, 60, {})]
    want = run_both(text, events)
    assert [eval(w)["ids"] for w in want] == [{"a": 50, "b": 60}, {"a": 5, "b": 60}]  # noqa: S307 - our own repr
    texts = [Event(e.type, e.ts, e.pos, f"e{e.id}", {}) for e in events]
    assert [eval(w)["ids"] for w in run_both(text, texts)] == [  # noqa: S307
        {"a": "e50", "b": "e60"},
        {"a": "e5", "b": "e60"},
    ]


def test_a_composite_event_comes_after_its_emitter_for_a_negation() -> None:
    """``!(T c)`` between a and b: the composite event of p's match at event 1 comes after
    event 1 (same position, later in arrival order), so it cancels q's partial match that
    event 1 started, as in the engine."""
    text = "PATTERN p: SEQ(A a, A b) RETURN T(x = a.x)\nPATTERN q: SEQ(A a, !(T c), A b)"
    events = [Event("A", 0, i, i, {"x": 0}) for i in range(3)]
    assert run_both(text, events) == [
        "{'pattern': 'p', 'ids': {'a': 0, 'b': 1}, 'start': 0, 'end': 0, 'attrs': {'x': 0}}",
        "{'pattern': 'q', 'ids': {'a': 0, 'b': 1}, 'start': 0, 'end': 0, 'attrs': {}}",
        "{'pattern': 'p', 'ids': {'a': 0, 'b': 2}, 'start': 0, 'end': 0, 'attrs': {'x': 0}}",
        "{'pattern': 'p', 'ids': {'a': 1, 'b': 2}, 'start': 0, 'end': 0, 'attrs': {'x': 0}}",
    ]
