"""The comparison switch the benchmarks use gives the default run's matches: negation
checked after construction (``build_net(push_negations=False)``, paper 000's baseline)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.events import Event
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.runtime.test_differential import fresh
from tests.strategies import pattern_text, patterns, streams

SETTINGS = settings(
    max_examples=examples(300, "PETRICEP_EXAMPLES"), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def matches(engine: Engine, events: list[Event]) -> list[str]:
    return [json.dumps(m.to_dict(), sort_keys=True) for m in engine.run(fresh(events))]


@SETTINGS
@given(st.data())
def test_negation_after_construction_same_matches(data: st.DataObject) -> None:
    pattern = data.draw(patterns(returns=False))
    events = data.draw(streams(max_size=10))
    tie = data.draw(st.sampled_from(["arrival", "strict"]))
    note(pattern_text(pattern))
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    pushed = matches(Engine(build_net([pattern]), tie=tie), events)
    after = matches(Engine(build_net([pattern], push_negations=False), tie=tie), events)
    assert sorted(after) == sorted(pushed)


def test_pushed_negation_creates_fewer_partial_matches() -> None:
    text = "PATTERN p: SEQ(A a, B b, !(C c), D d) WITHIN 20 EVENTS"
    events = [Event(t, i, i) for i, t in enumerate("ABCBCBCD" * 3)]
    pushed = Engine(build_net(parse_text(text, "<t>").patterns))
    after = Engine(build_net(parse_text(text, "<t>").patterns, push_negations=False))
    assert sorted(matches(pushed, events)) == sorted(matches(after, events))
    assert pushed.stats.created < after.stats.created


def test_sequences_constructed_are_candidates_after_and_matches_pushed() -> None:
    """``stats.completed``, paper 000's intermediate results: after construction every
    sequence within the window is built and then filtered; pushed, only matches are built."""
    text = "PATTERN p: SEQ(A a, B b, !(C c), D d) WITHIN 20 EVENTS"
    kinds = "ABCBDACBD" * 3
    events = [Event(t, i, i) for i, t in enumerate(kinds)]
    triples = [
        (i, j, k)
        for i in range(len(kinds))
        for j in range(i + 1, len(kinds))
        for k in range(j + 1, len(kinds))
        if (kinds[i], kinds[j], kinds[k]) == ("A", "B", "D") and k - i < 20
    ]
    clean = [x for x in triples if "C" not in kinds[x[1] + 1 : x[2]]]
    pushed = Engine(build_net(parse_text(text, "<t>").patterns))
    after = Engine(build_net(parse_text(text, "<t>").patterns, push_negations=False))
    assert len(matches(pushed, events)) == len(matches(after, events)) == len(clean) == 18
    assert (pushed.stats.completed, after.stats.completed) == (len(clean), len(triples)) == (18, 60)
