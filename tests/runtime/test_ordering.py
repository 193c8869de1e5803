"""Out-of-order input (``slack``): events are re-ordered before firing; later ones are late.

The differential test shuffles random streams with bounded delays and checks that the engine
with a slack finds exactly the reference's matches over the time-sorted stream of the on-time
events, and reports exactly the events whose timestamp is below ``max(earlier arrivals) - slack``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import ConfigError, EventOrderError
from petricep.events import Event
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from petricep.runtime.ordering import EventTimeOrder
from tests.budget import examples
from tests.reference import reference_run
from tests.strategies import pattern_text, patterns, streams

SETTINGS = settings(
    max_examples=examples(300, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def ev(etype: str, ts: Any, pos: int, eid: Any = None, **attrs: Any) -> Event:
    return Event(etype, ts, pos, pos if eid is None else eid, attrs)


def test_events_are_released_in_time_order_once_the_watermark_passes_them() -> None:
    order = EventTimeOrder(2)
    got = []
    for e in [ev("A", 5, 0), ev("B", 3, 1), ev("C", 4, 2), ev("D", 8, 3), ev("E", 7, 4)]:
        got.append([(x.type, x.ts, x.pos) for x in order.offer(e)])
    # watermark = max ts - 2: 3, 3, 3, 6 (releases B@3 C@4 A@5), 6
    assert got == [[], [("B", 3, 0)], [], [("C", 4, 1), ("A", 5, 2)], []]
    assert [(x.type, x.pos) for x in order.drain()] == [("E", 3), ("D", 4)]
    assert order.late == 0


def test_late_events_go_to_the_handler_with_the_watermark() -> None:
    late: list[tuple[int, Any]] = []
    order = EventTimeOrder(1, on_late=lambda e, mark: late.append((e.id, mark)))
    for e in [ev("A", 10, 0), ev("B", 9, 1), ev("C", 8.5, 2), ev("D", 9, 3), ev("E", 12, 4), ev("F", 10.5, 5)]:
        order.offer(e)
    # watermark 9 after A: B (9) is on time, C (8.5) late; E moves it to 11: F (10.5) late
    assert late == [(2, 9), (5, 11)]
    assert order.late == 2


def test_equal_timestamps_keep_their_arrival_order() -> None:
    order = EventTimeOrder(0)
    out = []
    for e in [ev("A", 1, 0), ev("B", 1, 1), ev("C", 1, 2), ev("D", 2, 3)]:
        out += order.offer(e)
    out += order.drain()
    assert [x.type for x in out] == ["A", "B", "C", "D"]


def test_slack_must_be_a_non_negative_number() -> None:
    with pytest.raises(ConfigError, match=r"slack must be a number >= 0, not -1"):
        EventTimeOrder(-1)
    with pytest.raises(ConfigError, match="on_late needs a slack"):
        Engine(compile_text("PATTERN p: SEQ(A a, B b)"), on_late=lambda e, m: None)


def test_without_slack_out_of_order_input_is_an_error() -> None:
    engine = Engine(compile_text("PATTERN p: SEQ(A a, B b)"))
    engine.push(ev("A", 5, 0))
    with pytest.raises(EventOrderError, match=r"timestamp 4 is before the previous event's 5"):
        engine.push(ev("B", 4, 1))


def test_engine_matches_the_sorted_stream_and_reports_late_events() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE a.x < b.x WITHIN 5")
    late: list[Any] = []
    engine = Engine(net, slack=2, on_late=lambda e, mark: late.append(e.id))
    arrivals = [ev("B", 4, 0, "b4", x=5), ev("A", 2, 1, "a2", x=1), ev("A", 7, 2, "a7", x=0),
                ev("A", 3, 3, "a3", x=9), ev("B", 8, 4, "b8", x=3)]
    got = [m.ids for m in engine.run(arrivals)]
    # a3 arrives when the watermark is 7 - 2 = 5: late. Sorted on-time stream: a2 b4 a7 b8
    assert late == ["a3"]
    assert got == [{"a": "a2", "b": "b4"}, {"a": "a7", "b": "b8"}]
    assert engine.stats.late == 1 and engine.stats.events == 4
    assert engine.report()["events"] == {"read": 5, "processed": 4, "rejected": 0, "late": 1, "composite": 0}


@st.composite
def disordered(draw: Any) -> tuple[list[Event], int]:
    """A random stream delivered with random bounded delays, and a slack."""
    events = draw(streams(max_size=12))
    delays = draw(st.lists(st.integers(0, 3), min_size=len(events), max_size=len(events)))
    arrival = sorted(range(len(events)), key=lambda i: (events[i].ts + delays[i], i))
    out = []
    for pos, i in enumerate(arrival):
        e = events[i]
        out.append(Event(e.type, e.ts, pos, e.id, dict(e.attrs)))
    return out, draw(st.integers(0, 4))


def _expected(arrivals: list[Event], slack: int) -> tuple[list[Event], list[Any]]:
    """Independently: late = below the highest earlier timestamp minus the slack; the rest
    sorted by (ts, arrival) and numbered again."""
    late, on_time = [], []
    top = None
    for e in arrivals:
        if top is not None and e.ts < top - slack:
            late.append(e.id)
            continue
        on_time.append(e)
        top = e.ts if top is None else max(top, e.ts)
    on_time.sort(key=lambda e: (e.ts, e.pos))
    return [Event(e.type, e.ts, n, e.id, dict(e.attrs)) for n, e in enumerate(on_time)], late


@SETTINGS
@given(st.data())
def test_slack_equals_the_sorted_stream_on_random_patterns(data: st.DataObject) -> None:
    pat = data.draw(patterns(returns=False))
    arrivals, slack = data.draw(disordered())
    tie = data.draw(st.sampled_from(["arrival", "strict"] + (["either"] if pat.strategy == "skip-till-any-match" else [])))
    note(pattern_text(pat))
    note(f"slack={slack} tie={tie}")
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} id={e.id} {e.attrs}" for e in arrivals))
    sorted_stream, want_late = _expected(arrivals, slack)
    late: list[Any] = []
    engine = Engine(build_net([pat]), tie=tie, slack=slack, on_late=lambda e, mark: late.append(e.id))
    got = sorted(json.dumps(m.to_dict(), sort_keys=True) for m in engine.run(arrivals))
    want = sorted(json.dumps(m, sort_keys=True) for m in reference_run([pat], sorted_stream, tie))
    assert late == want_late
    assert got == want
