"""Streams whose files go back in time within the watermark (issue 39, item 0), without
Spark (:mod:`tests.spark.streamsim`): a key's events are released in stream order
``(ts, pos)``, so one that arrived in an earlier file can be released after one with a
larger position. The engines bind events by position and need it to grow with every
event: the kernel bound one A event as both ``a`` and ``b``. Now a key's engine numbers
released events as ``run --slack`` numbers the events it re-orders, and the stream's
matches are exactly ``run --slack W``'s (``W`` the watermark delay), across micro-batches
and restarts."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.events import Event
from petricep.kernel import available
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from petricep.spark.plan import make_plan
from petricep.spark.streaming import renumber, streaming_plan
from tests.budget import examples
from tests.spark.streamsim import simulate
from tests.spark.test_keystate import canonical
from tests.spark.test_partition import fresh, random_case
from tests.strategies import pattern_text

SETTINGS = settings(
    max_examples=examples(150, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
ENGINES = [False, pytest.param(True, marks=pytest.mark.skipif(not available(), reason="the kernel is not built"))]

ISSUE = "PATTERN p: SEQ(A a, B b, !(C c)) WHERE [k] WITHIN 3"
# f0.csv, then f1.csv (newer): its A at 73 goes back before f0's B at 74
ISSUE_ROWS = [(0, "A", 70, 4, 0), (1, "B", 74, 4, 0), (2, "A", 73, 4, 0), (3, "A", 75, 4, 0), (4, "B", 76, 4, 4)]
ISSUE_WANT = [
    '{"pattern": "p", "ids": {"a": 2, "b": 1}, "start": 73, "end": 74, "attrs": {}}',
    '{"pattern": "p", "ids": {"a": 2, "b": 4}, "start": 73, "end": 76, "attrs": {}}',
    '{"pattern": "p", "ids": {"a": 3, "b": 4}, "start": 75, "end": 76, "attrs": {}}',
]


def slack_run(net: object, events: list[Event], tie: str, slack: int) -> list[str]:
    """``run --slack``: the embedded engine re-ordering the events itself."""
    from petricep.output.jsonl import match_json

    return canonical([match_json(m) for m in Engine(net, tie=tie, slack=slack).run(fresh(events))])  # type: ignore[arg-type]


def issue_events() -> list[Event]:
    return [Event(t, ts, s, s, {"seq": s, "k": k, "x": x}) for s, t, ts, k, x in ISSUE_ROWS]


@pytest.mark.parametrize("kernel", ENGINES)
@pytest.mark.parametrize(("cuts", "restarts"), [([], []), ([2], []), ([2], [2]), ([1, 3], [1, 3, 5])])
def test_a_file_back_in_time_gives_the_slack_runs_matches(kernel: bool, cuts: list[int], restarts: list[int]) -> None:
    """The issue's two files, in one micro-batch or one per file, with restarts between."""
    net = build_net([p.source for p in compile_text(ISSUE).patterns])
    events = issue_events()
    assert slack_run(net, events, "arrival", 4) == canonical(ISSUE_WANT)
    got = simulate(net, events, "arrival", cuts, kernel=kernel, delay_ms=4000, restarts=restarts)
    assert canonical([r[0] for r in got]) == canonical(ISSUE_WANT)


@pytest.mark.parametrize("kernel", ENGINES)
@pytest.mark.parametrize("restarts", [[], [5]])
def test_a_key_woken_with_nothing_to_release_then_restarted(kernel: bool, restarts: list[int]) -> None:
    """In time order: key 1's window end wakes it when it has no event to release (the
    engine only advances), then the query restarts. The kernel remembers events by
    position, in order; the advance used to tick at position -1, and the restored engine
    bound B as both ``a`` and ``b`` (the issue's false match, without going back in time)."""
    net = build_net([p.source for p in compile_text("PATTERN p: SEQ(A a, B b, !(C c)) WHERE [k] WITHIN 10").patterns])
    rows = [("A", 0, 1), ("X", 1, 2), ("A", 5, 1), ("X", 6, 2), ("X", 11, 2), ("B", 12, 1), ("X", 13, 2), ("X", 30, 2)]
    events = [Event(t, ts, i, 100 + i, {"k": k}) for i, (t, ts, k) in enumerate(rows)]
    got = simulate(net, events, "arrival", list(range(1, len(events))), kernel=kernel, restarts=restarts)
    assert [r[0] for r in got] == ['{"pattern": "p", "ids": {"a": 102, "b": 105}, "start": 5, "end": 12, "attrs": {}}']
    assert slack_run(net, events, "arrival", 0) == canonical([r[0] for r in got])


def test_released_events_are_numbered_after_the_engines_last() -> None:
    """A key partition keeps the stream's positions where they grow, and moves an event
    that falls behind after the last; a partition fed with the whole stream numbers its
    events one after the other, as ``run --slack`` does. The map gives back each event's own."""
    def evs() -> list[Event]:
        return [Event("A", ts, pos, pos) for ts, pos in ((70, 0), (73, 2), (74, 1), (75, 3), (76, 7))]

    keyed = evs()
    assert renumber(keyed, -1, whole=False) == {0: 0, 2: 2, 3: 1, 4: 3, 7: 7}
    assert [e.pos for e in keyed] == [0, 2, 3, 4, 7] and [e.id for e in keyed] == [0, 2, 1, 3, 7]
    whole = evs()
    assert renumber(whole, 9, whole=True) == {10: 0, 11: 2, 12: 1, 13: 3, 14: 7}


def test_a_count_window_runs_on_the_whole_stream_when_it_reorders() -> None:
    net = build_net([p.source for p in compile_text("PATTERN c: SEQ(A a, B b) WHERE [k] WITHIN 3 EVENTS").patterns])
    plan = make_plan(net)
    (kept,), none = streaming_plan(plan)[0].groups, streaming_plan(plan)[1]
    assert kept.keyed and none == []
    moved_plan, notes = streaming_plan(plan, reorders=True)
    (moved,) = moved_plan.groups
    assert (moved.attrs, moved.all_types, moved.reason) == ((), True, "count window, re-ordered stream")
    assert notes == [
        "warning: 'c' run in one partition when streaming with a watermark: a count window counts "
        "the events of the whole re-ordered stream, and only that partition sees them"
    ]


@st.composite
def back_in_time(draw: st.DrawFn, events: list[Event], slack: int) -> list[Event]:
    """``events`` (in time order) with some moved back by up to ``slack``: each still at
    or after the latest timestamp before it minus ``slack`` (none late); all shifted by
    ``slack`` (a stream's timestamps are not negative)."""
    out = []
    for e in events:
        back = draw(st.integers(0, slack)) if draw(st.booleans()) else 0
        out.append(Event(e.type, e.ts + slack - back, e.pos, e.id, dict(e.attrs)))
    return out


@SETTINGS
@given(st.data())
@pytest.mark.parametrize("kernel", ENGINES)
def test_streams_back_in_time_equal_the_slack_run(kernel: bool, data: st.DataObject) -> None:
    """Random nets, streams whose files go back in time within the watermark, micro-batches
    cut anywhere (inside groups of equal timestamps too), restarts at some cuts: the
    stream's matches are ``run --slack W``'s, and no event is late."""
    case = random_case(data)
    if case is None:
        return
    pats, net, tie, ordered = case
    slack = data.draw(st.integers(1, 3))
    events = data.draw(back_in_time(ordered, slack))
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(events)), max_size=4))))
    restarts = data.draw(st.lists(st.sampled_from([0, *cuts, len(events)]), max_size=3))
    for p in pats:
        note(pattern_text(p))
    note(f"tie={tie} slack={slack} cuts={cuts} restarts={sorted(set(restarts))}")
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    counts: dict[str, list[int]] = {}
    got = simulate(net, events, tie, cuts, kernel=kernel, delay_ms=slack * 1000, counts=counts, restarts=restarts)
    assert counts["late"] == [] and sum(counts["read"]) == len(events)
    assert canonical([r[0] for r in got]) == slack_run(net, events, tie, slack)
