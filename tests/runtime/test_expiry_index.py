"""The expiry index: a sweep visits only the partitions whose earliest window has passed.

Against the same engine sweeping every partition (the path spilling runs, set here by
emptying the run state's index): the same matches, the same sampled peak, and after every
event the same partial matches and negative events held."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.events import Event
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from petricep.runtime.state import Partition
from tests.budget import examples
from tests.engines import run_embedded, run_kernel
from tests.runtime.test_differential import fresh
from tests.strategies import pattern_text, patterns, streams

SETTINGS = settings(
    max_examples=examples(300, "PETRICEP_EXAMPLES"), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def held(engine: Engine) -> tuple[int, int]:
    """Partial matches and negative events stored in every marking."""
    parts = [p for states in engine.state.parts for p in states.values()]
    return sum(len(m) for p in parts for m in p.marking), sum(len(b) for p in parts for b in p.buffers)


def trace(engine: Engine, events: list[Event]) -> tuple[list[str], list[tuple[int, int]], int]:
    out, states = [], []
    for e in fresh(events):
        out += [json.dumps(m.to_dict(), sort_keys=True) for m in engine.push(e)]
        states.append(held(engine))
    out += [json.dumps(m.to_dict(), sort_keys=True) for m in engine.flush()]
    return out, states, engine.stats.peak_partial


@SETTINGS
@given(st.data())
def test_indexed_sweeps_equal_full_sweeps(data: st.DataObject) -> None:
    tie = data.draw(st.sampled_from(["arrival", "strict", "either"]))
    kw: dict[str, Any] = {"strategies": ["skip-till-any-match"]} if tie == "either" else {}
    pattern = data.draw(patterns(windows=("time", "count"), **kw))
    events = data.draw(streams(max_size=14))
    every = data.draw(st.integers(1, 4))
    note(pattern_text(pattern))
    net = build_net([pattern])
    indexed = Engine(net, tie=tie, sweep_every=every)
    assert indexed.state.expiry == [[] if rt.indexed else None for rt in indexed.runtimes]
    full = Engine(net, tie=tie, sweep_every=every)
    full.state.expiry = [None for _ in full.state.expiry]
    # the matches and what every marking holds after each event are the same; the peak is a
    # sample taken once the events since the last one reach the partitions held, and an
    # indexed sweep leaves a due-later empty partition in place a full sweep drops, so the
    # two peaks are samples at other moments (within an event too): only the rest compares
    got, want = trace(indexed, events), trace(full, events)
    assert got[:2] == want[:2]


def test_only_due_partitions_are_visited(monkeypatch: pytest.MonkeyPatch) -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 10")
    engine = Engine(net, sweep_every=1)
    rt = engine.runtimes[0]
    visited: list[Any] = []
    sweep = rt.sweep

    def spy(part: Partition, now: Event, floor: float) -> None:
        visited.append(part.key)
        sweep(part, now, floor)

    monkeypatch.setattr(rt, "sweep", spy)
    for i, k in enumerate([1, 2, 3]):
        engine.push(Event("A", i, i, f"a{k}", {"k": k}))
    assert visited == [] and sorted(engine.state.parts[0]) == [1, 2, 3]
    engine.push(Event("C", 11, 3, "c", {"k": 9}))  # passes key 1's window (0 + 10 < 11) only
    assert visited == [1] and sorted(engine.state.parts[0]) == [2, 3]
    engine.push(Event("C", 13, 4, "c2", {"k": 9}))
    assert visited == [1, 2, 3] and engine.state.parts[0] == {}
    assert engine.state.expiry == [[]]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kernel", [False, True])
def test_a_float_window_edge_ends_the_sweep(kernel: bool) -> None:
    """In floats 2/3 + 1 < 5/3 while 5/3 - 2/3 == 1: the partial match of A at 2/3 is due at
    5/3 yet still inside its window there. The sweep keeps it and ends (it swept the same
    partition forever, found by test_frames_batches on CI), and a B at 5/3 still matches."""
    assert 2 / 3 + 1 < 5 / 3 and not 5 / 3 - 2 / 3 > 1
    events = [Event("A", 2 / 3, 0, 10, {}), Event("C", 5 / 3, 1, 11, {}), Event("B", 5 / 3, 2, 12, {})]
    run = run_kernel if kernel else run_embedded
    got = run(parse_text("PATTERN p: SEQ(A a, B b) WITHIN 1").patterns, events)
    assert [(m["ids"], m["start"], m["end"]) for m in got] == [({"a": 10, "b": 12}, 2 / 3, 5 / 3)]
    engine = Engine(compile_text("PATTERN p: SEQ(A a, B b) WITHIN 1"), sweep_every=1)
    engine.push(Event("A", 2 / 3, 0, 10, {}))
    engine.push(Event("C", 5 / 3, 1, 11, {}))
    assert held(engine) == (1, 0)
    assert engine.flush() == []


@pytest.mark.parametrize(
    "text, indexed",
    [
        ("PATTERN p: SEQ(A a, B b) WITHIN 10", True),
        ("PATTERN p: SEQ(A a, B b) WITHIN 3 EVENTS", True),
        ("PATTERN p: SEQ(A a, B b)", False),  # nothing expires
        ("PATTERN p: SEQ(A a, B b) WHERE strict-contiguity WITHIN 10", False),  # every event counts
        ("PATTERN p: SEQ(A a, B b) WITHIN 10 LIMIT 5 PARTIAL MATCHES", False),  # quotas
    ],
)
def test_which_nets_use_the_index(text: str, indexed: bool) -> None:
    engine = Engine(compile_text(text))
    assert (engine.state.expiry[0] is not None) is indexed
