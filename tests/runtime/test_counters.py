"""The run's marking on its net (runtime/counters.py): partial matches created and peak alive
per place, firings per transition; counted only when asked, and never changing a result."""

from __future__ import annotations

import json

from petricep.api import compile_text
from petricep.events import Event
from petricep.runtime.engine import Engine

TWO = "PATTERN rise: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 10\nPATTERN ac: SEQ(A a, C c) WHERE [k] WITHIN 10\n"
STREAM = [("A", 1, 1, 5), ("A", 2, 2, 5), ("B", 3, 1, 7), ("B", 4, 2, 4), ("B", 5, 1, 9), ("C", 6, 2, 0), ("A", 30, 1, 1)]


def events() -> list[Event]:
    return [Event(t, ts, i, i, {"k": k, "x": x}) for i, (t, ts, k, x) in enumerate(STREAM)]


def run(text: str, count: bool, sweep_every: int = 2048) -> tuple[Engine, list[str]]:
    engine = Engine(compile_text(text), count_marking=count, sweep_every=sweep_every)
    return engine, [json.dumps(m.to_dict()) for m in engine.run(events())]


def test_counts_of_a_merged_net() -> None:
    engine, matches = run(TWO, True, sweep_every=1)  # the peak is sampled at every sweep
    net = engine.net.groups[0]
    # one shared net: the A place is shared (front combination) by both patterns
    assert [(t.id, t.src, t.dst, t.slot) for t in net.transitions] == [(0, 0, 1, 0), (1, 1, 2, 1), (2, 1, 3, 1)]
    assert engine.marking() == (
        {(0, 1): (3, 2), (0, 2): (2, 0), (0, 3): (1, 0)},  # 3 As, at most 2 alive; 2 rises, 1 ac
        {(0, 0): 3, (0, 1): 2, (0, 2): 1},
    )
    assert len(matches) == 3


def test_counting_changes_nothing_and_is_off_by_default() -> None:
    plain, matches = run(TWO, False)
    assert plain.marking() is None
    assert run(TWO, True)[1] == matches


def test_the_peak_is_sampled_at_sweeps() -> None:
    """Between sweeps nothing is sampled: with the default sweep (every 2,048 events) a run
    of 7 events samples once, at its end, where one A is alive."""
    engine, _ = run(TWO, True)
    assert engine.marking() == ({(0, 1): (3, 1), (0, 2): (2, 0), (0, 3): (1, 0)}, {(0, 0): 3, (0, 1): 2, (0, 2): 1})
