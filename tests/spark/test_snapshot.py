"""Engine state as bytes (what streaming keeps in Spark's state store): an engine saved
and loaded at any point of a stream goes on exactly as if it had never stopped."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.events import Event
from petricep.output.jsonl import match_json
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.spark.test_partition import fresh, random_case
from tests.strategies import pattern_text


def copied(engine: Engine, net: Any, tie: str) -> Engine:
    """A fresh engine restored from ``engine``'s snapshot (the matcher contract's round trip)."""
    copy = Engine(net, tie=tie)
    copy.restore(engine.snapshot())
    return copy

SETTINGS = settings(
    max_examples=examples(300, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def test_an_engine_does_not_pickle_and_its_snapshot_is_arrow_ipc() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 5")
    engine = Engine(net)
    engine.push(Event("A", 0, 0, attrs={"k": 1, "x": 1}))
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(engine)
    copy = copied(engine, net, "arrival")
    assert [m.to_dict() for m in copy.push(Event("B", 1, 1, attrs={"k": 1, "x": 2}))] == [
        {"pattern": "p", "ids": {"a": 0, "b": 1}, "start": 0, "end": 1, "attrs": {}}
    ]
    assert engine.snapshot()[:4] == b"\xff\xff\xff\xff"  # an Arrow IPC stream, not a pickle


@SETTINGS
@given(st.data())
def test_saved_and_loaded_anywhere(data: st.DataObject) -> None:
    case = random_case(data)
    if case is None:
        return
    pats, net, tie, events = case
    cuts = set(data.draw(st.lists(st.integers(0, len(events)), max_size=4)))
    for p in pats:
        note(pattern_text(p))
    note(f"tie={tie} cuts={sorted(cuts)}")
    want = [match_json(m) for m in Engine(net, tie=tie).run(fresh(events))]
    engine = Engine(net, tie=tie)
    got = []
    for i, e in enumerate(fresh(events)):
        if i in cuts:
            engine = copied(engine, net, tie)
        got += [match_json(m) for m in engine.push(e)]
    if len(events) in cuts:
        engine = copied(engine, net, tie)
    got += [match_json(m) for m in engine.flush()]
    assert got == want


def test_long_kleene_chains() -> None:
    """A partial match is a chain of tokens; pickle walks it recursively (deeper than the
    default recursion limit and the main thread's stack allow)."""
    net = compile_text("PATTERN p: SEQ(A+ a[], B b) WHERE skip-till-next-match AND [k] AND a[1].x = 0")
    engine = Engine(net)
    n = 20_000
    for i in range(n):
        engine.push(Event("A", i, i, attrs={"k": 1, "x": i}))
    engine = copied(engine, net, "arrival")
    (m,) = engine.push(Event("B", n, n, attrs={"k": 1, "x": 0}))
    assert m.ids["a"] == list(range(n))
