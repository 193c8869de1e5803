"""The engine against the brute-force reference (tests/reference.py) on random patterns
and random streams: every operator, window kind, strategy and tie rule.

A failure prints the pattern in pattern-file syntax and the stream, so it can be
replayed by hand.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.events import Event
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.reference import reference_run
from tests.strategies import pattern_text, patterns, streams

SETTINGS = settings(max_examples=examples(300, "PETRICEP_EXAMPLES"), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def fresh(events: list[Event]) -> list[Event]:
    return [Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in events]


def engine_matches(pats: list[A.Pattern], events: list[Event], tie: str) -> list[str]:
    engine = Engine(build_net(pats), tie=tie)
    return sorted(json.dumps(m.to_dict(), sort_keys=True) for m in engine.run(fresh(events)))


def reference_matches(pats: list[A.Pattern], events: list[Event], tie: str) -> list[str]:
    return sorted(json.dumps(m, sort_keys=True) for m in reference_run(pats, fresh(events), tie))


def show(pats: list[A.Pattern], events: list[Event], tie: str) -> None:
    for p in pats:
        note(pattern_text(p))
    note(f"tie={tie}")
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))


def check(pats: list[A.Pattern], events: list[Event], tie: str) -> None:
    show(pats, events, tie)
    got = engine_matches(pats, events, tie)
    want = reference_matches(pats, events, tie)
    assert got == want


def _tie(draw: Any, pattern: A.Pattern) -> str:
    choices = ["arrival", "strict"] + (["either"] if pattern.strategy == "skip-till-any-match" else [])
    return draw(st.sampled_from(choices))  # type: ignore[no-any-return]


@SETTINGS
@given(st.data())
def test_any_pattern_any_stream(data: st.DataObject) -> None:
    pattern = data.draw(patterns(min_window=0, returns=False))
    events = data.draw(streams(max_size=9))
    check([pattern], events, _tie(data.draw, pattern))


@SETTINGS
@given(st.data())
def test_skip_till_any_match_all_ties(data: st.DataObject) -> None:
    pattern = data.draw(patterns(strategies=("skip-till-any-match",), returns=False))
    events = data.draw(streams(max_size=9))
    for tie in ("arrival", "strict", "either"):
        check([pattern], events, tie)


@SETTINGS
@given(st.data())
def test_strategies_with_kleene(data: st.DataObject) -> None:
    strategy = data.draw(st.sampled_from(A.STRATEGIES))
    pattern = data.draw(patterns(strategies=(strategy,), kleene=True, max_kleene=2, returns=False))
    events = data.draw(streams(max_size=9))
    check([pattern], events, data.draw(st.sampled_from(["arrival", "strict"])))


@SETTINGS
@given(st.data())
def test_composite_events_feed_a_second_pattern(data: st.DataObject) -> None:
    producer = data.draw(patterns(name="p", returns=True, strategies=("skip-till-any-match", "skip-till-next-match")))
    if producer.returns is None:
        return
    out = producer.returns.type
    consumer = data.draw(
        patterns(
            name="q",
            types=("A", "B", out),
            returns=False,
            strategies=("skip-till-any-match", "skip-till-next-match"),
            partition=False,
        )
    )
    if out not in {r.type for r in A.events_of(consumer.structure)}:
        return
    fields = {f.name for f in producer.returns.fields} | {"ts", "id"}
    composite_vars = {r.var for r in A.events_of(consumer.structure) if r.type == out}
    for c in consumer.conditions:  # what `check` rejects: reading a field T does not have
        for e in A.walk_expr(c):
            if isinstance(e, (A.Attr, A.Agg)) and e.var in composite_vars and e.field and e.field not in fields:
                return
    events = data.draw(streams(max_size=8))
    check([producer, consumer], events, data.draw(st.sampled_from(["arrival", "strict"])))
