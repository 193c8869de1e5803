"""Changing the patterns of a running stream (issue 39, item 4; :mod:`petricep.spark.lineage`).

A query restarted on its checkpoint with patterns added or removed: the patterns kept give
the uninterrupted run's matches exactly, an added one the matches of a run of it over the
events after the restart (also where it shares a prefix with a kept one: compiled together
they would share places), a removed one nothing more; the restart says which is which.
Without Spark (:mod:`tests.spark.streamsim`'s handle), on both engines."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from petricep.api import compile_text
from petricep.events import Event
from petricep.kernel import available
from petricep.output.jsonl import match_json
from petricep.runtime.engine import Engine
from petricep.spark.keystate import EngineCache, engine_choices, kernel_groups
from petricep.spark.lineage import FILE, bind, generation_net, records
from petricep.spark.migrate import LineageCache
from petricep.spark.partition import engine_net
from petricep.spark.plan import Router, make_plan
from petricep.spark.streaming import EngineProcessor, StateFlush, streaming_plan
from tests.spark.streamsim import Clock, FakeHandle, _matches, _routed
from tests.spark.test_keystate import canonical

ENGINES = [
    False,
    pytest.param(True, marks=pytest.mark.skipif(not available(), reason="the kernel is not built")),
]
P = "PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 6\n"
S = "PATTERN s: SEQ(A a, C c) WHERE [k] WITHIN 6\n"
R = "PATTERN r: SEQ(A a, B b) WHERE [k] AND a.x >= b.x WITHIN 6\n"  # p's prefix: one shared net with p
U = "PATTERN u: SEQ(C c, !(B b)) WHERE [j] WITHIN 3\n"  # another routing: a group of its own


def stream(n: int = 400, seed: int = 7) -> list[Event]:
    rng = random.Random(seed)
    return [
        Event(
            rng.choice("ABC"),
            2 + i // 2,
            i,
            i,
            {"k": rng.randrange(6), "j": rng.randrange(3), "x": rng.randrange(4)},
        )
        for i in range(n)
    ]


def fresh(events: list[Event]) -> list[Event]:
    return [Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in events]


def run_phases(
    tmp: Path, phases: list[tuple[str, list[Event]]], kernel: bool
) -> tuple[list[str], list[list[str]]]:
    """The match lines of a stream whose query restarts at each phase with that phase's
    patterns (micro-batches of 50 events, then the end of input), and the notes of each start."""
    handle = FakeHandle()
    out: list[tuple[Any, ...]] = []
    notes: list[list[str]] = []
    wm, seen = 0, 0
    said: dict[str, list[int]] = {"read": [], "late": []}
    for text, events in phases:
        net = compile_text(text)
        plan, _ = streaming_plan(make_plan(net))
        lineage, plan, change = bind(str(tmp), net, plan)
        line = change.message()
        notes.append(change.warnings + ([] if line is None else [line]))
        chosen = kernel_groups(engine_choices(net, make_plan(net), "arrival")) if kernel else frozenset()
        EngineCache._caches.clear()  # a restart: no engine left alive
        LineageCache._caches.clear()
        proc = EngineProcessor(net, plan, "arrival", chosen, lineage)
        proc.init(handle)
        router = Router(plan)
        for start in range(0, len(events), 50):
            batch = fresh(events[start : start + 50])
            for key, rows in _routed(router, batch, 2).items():
                handle.key = key
                pdf = pd.DataFrame(rows, columns=["pos", "evtime", "ev", "first", "reads"])
                out += _matches(proc.handleInputRows(key, iter([pdf]), Clock(wm)), said)
            for key in sorted(handle.timers):
                for t in sorted(x for x in handle.timers[key] if x <= wm):
                    handle.key = key
                    handle.timers[key].discard(t)
                    out += _matches(proc.handleExpiredTimer(key, Clock(wm), Clock(wm, t)), said)
            seen = max([seen, *(int(e.ts) * 1000 + 1 for e in batch)])
            wm = max(wm, seen)
    flush = StateFlush(net, plan, "arrival", chosen, lineage)
    for g, b in sorted({k for k, _ in handle.store}):
        state = handle.store[((g, b), "state")]  # (keygroups.STATE_FIELDS)
        rows = flush.rows(g, state[4], state[2])
        out += [(r[5], r[6], g, r[8]) for r in rows]
    return canonical([r[0] for r in out]), notes


def embedded(text: str, events: list[Event], pattern: str) -> list[str]:
    lines = [match_json(m) for m in Engine(compile_text(text)).run(fresh(events))]
    return [x for x in canonical(lines) if json.loads(x)["pattern"] == pattern]


def of(lines: list[str], pattern: str) -> list[str]:
    return [x for x in lines if json.loads(x)["pattern"] == pattern]


@pytest.mark.parametrize("kernel", ENGINES)
def test_a_pattern_added_and_one_removed_at_a_restart(tmp_path: Path, kernel: bool) -> None:
    """p stays, s goes, r (p's prefix: compiled with p they would share places) and u (a
    group of its own) come in at event 200; then at 300 r goes again."""
    events = stream()
    got, notes = run_phases(
        tmp_path, [(P + S, events[:200]), (P + R + U, events[200:300]), (P + U, events[300:])], kernel
    )
    assert notes == [
        [],
        ["kept: p; added: r, u (from the events after the restart); removed: s"],
        ["kept: p, u; removed: r"],
    ]
    assert of(got, "p") == embedded(P, events, "p") and of(got, "p")
    assert of(got, "u") == embedded(U, events[200:], "u") and of(got, "u")
    uninterrupted_s = embedded(S, events[:200], "s")
    assert set(of(got, "s")) <= set(uninterrupted_s) and len(of(got, "s")) >= len(uninterrupted_s) - 10
    r_lines = of(got, "r")
    assert r_lines and set(r_lines) <= set(embedded(R, events[200:], "r"))
    assert all(json.loads(x)["start"] >= events[200].ts for x in r_lines)


@pytest.mark.parametrize("kernel", ENGINES)
def test_the_added_pattern_sees_only_the_events_after_the_restart(tmp_path: Path, kernel: bool) -> None:
    """r added at event 200 and kept to the end: its matches are a run of it over events
    200 on, exactly, though compiled with p it would share p's partial matches."""
    events = stream()
    got, notes = run_phases(tmp_path, [(P, events[:200]), (P + R, events[200:])], kernel)
    assert notes[1] == ["kept: p; added: r (from the events after the restart)"]
    assert of(got, "p") == embedded(P, events, "p")
    assert of(got, "r") == embedded(R, events[200:], "r") and of(got, "r")
    assert json.loads((tmp_path / FILE).read_text())["removed"] == []


def test_a_group_that_routes_otherwise_is_named(tmp_path: Path) -> None:
    """p joined by a pattern reading its RETURN without its key: the group runs in one
    partition now, so p's buckets cannot be kept: a warning names it."""
    first = "PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 6 RETURN X(k = a.k)\n"
    net = compile_text(first)
    bind(str(tmp_path), net, streaming_plan(make_plan(net))[0])
    net2 = compile_text(first + "PATTERN q: SEQ(X x1, X x2) WITHIN 6\n")
    _, plan, change = bind(str(tmp_path), net2, streaming_plan(make_plan(net2))[0])
    assert change.warnings == [
        "warning: pattern 'p' cannot keep its partial matches: its group now runs with other patterns or "
        "routes its events otherwise; it starts again on the events after the restart"
    ]
    assert change.message() == "kept: -; added: p, q (from the events after the restart); removed: p"
    assert [g.patterns for g in plan.groups] == [(), ("p", "q")]


def test_a_generation_net_is_the_net_it_was_run_with() -> None:
    """The record rebuilds each group's engine net exactly (its snapshot fingerprint holds)."""
    from petricep.runtime.snapshot import fingerprint

    net = compile_text(P + S + U + "PATTERN w: SEQ(A a, C c) WHERE [k] WITHIN 4 CONSUME a\n")
    plan, _ = streaming_plan(make_plan(net))
    rebuilt = generation_net(tuple(records(net, plan).values()))
    for g in plan.groups:
        assert fingerprint(engine_net(rebuilt, g), "arrival") == fingerprint(engine_net(net, g), "arrival")
