"""Partial-match spilling: under any memory budget and either policy, the matches are exactly
those of a run without spilling; misses and spills are counted."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import ConfigError
from petricep.events import Event
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from petricep.runtime.spill import Spiller
from tests.budget import examples
from tests.strategies import pattern_text, patterns, streams

SETTINGS = settings(
    max_examples=examples(300, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def fresh(events: list[Event]) -> list[Event]:
    return [Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in events]


def test_a_spilled_key_comes_back_when_its_next_event_arrives() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 100")
    spill = Spiller(1, "tpm")
    engine = Engine(net, spill=spill)
    events = [Event("A", 0, 0, "a0", {"k": 1}), Event("A", 1, 1, "a1", {"k": 2}), Event("B", 2, 2, "b2", {"k": 1})]
    out = [m.ids for m in engine.run(events)]
    # two keys, one partial match each: over a budget of 1, key 1 (the older) is written out,
    # then read back for B2
    assert out == [{"a": "a0", "b": "b2"}]
    assert (spill.stats.spilled, spill.stats.misses) >= (1, 1)
    spill.close()


def test_spilling_needs_the_arrival_tie_rule_and_a_positive_budget() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WITHIN 5")
    with pytest.raises(ConfigError, match="spilling partial matches needs the arrival tie rule"):
        Engine(net, tie="strict", spill=Spiller(5))
    with pytest.raises(ConfigError, match="the spill budget must be at least 1 partial match"):
        Spiller(0)
    with pytest.raises(ConfigError, match="unknown spill policy 'lru' \\(use tpm or stpm\\)"):
        Spiller(3, "lru")


@SETTINGS
@given(patterns(returns=False, partition=True), streams(max_size=14), st.integers(1, 4), st.sampled_from(["tpm", "stpm"]))
def test_spilling_on_and_off_give_the_same_matches(pattern, events, budget, policy) -> None:  # type: ignore[no-untyped-def]
    note(pattern_text(pattern) + f"\nbudget={budget} policy={policy}")
    net = build_net([pattern])
    want = [json.dumps(m.to_dict(), sort_keys=True) for m in Engine(net).run(fresh(events))]
    spill = Spiller(budget, policy)
    try:
        got = [json.dumps(m.to_dict(), sort_keys=True) for m in Engine(net, spill=spill).run(fresh(events))]
    finally:
        spill.close()
    assert sorted(got) == sorted(want)
