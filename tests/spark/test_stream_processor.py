"""The streaming query's stateful processor without Spark (:mod:`tests.spark.streamsim`).

Its accounting (read = processed + late): the parse stage counts the events it reads --
one count row per parse batch, for the key of the unrouted events, so the output says it
once per micro-batch and parse task, not once per key -- and a late event is counted once
however many keys it is routed to. Its state calls (each a round trip to the JVM's state
server in Spark): one read per state variable it needs, a write only where it changed."""

from __future__ import annotations

import math
from fractions import Fraction

import pandas as pd
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.events import Event
from petricep.io.spec import InputSpec
from petricep.merge import build_net
from petricep.spark.evpack import ARROW_TAG, Stored, piece_events
from petricep.spark.keystate import engine_choices, kernel_groups
from petricep.spark.plan import Router, make_plan
from petricep.spark.records import is_pack
from petricep.spark.release import input_pieces, with_flags
from petricep.spark.streaming import (
    MATCH,
    UNROUTED,
    EngineProcessor,
    StreamParse,
    StreamParser,
    count_row,
    event_time_ms,
    packed_rows,
    routed_rows,
    streaming_plan,
)
from tests.budget import examples
from tests.spark.streamsim import Clock, FakeHandle, simulate
from tests.spark.test_keystate import canonical, embedded

# A is read by both patterns, each keyed by another attribute: two routes; D by none
NET = """
PATTERN ab: SEQ(A a, B b) WHERE [k] WITHIN 10
PATTERN ac: SEQ(A a, C c) WHERE [j] WITHIN 10
"""


def _events() -> list[Event]:
    rows = [
        ("A", 10, {"k": 1, "j": 1}), ("B", 12, {"k": 1}), ("D", 13, {}), ("C", 14, {"j": 1}),
        ("A", 5, {"k": 1, "j": 1}), ("D", 3, {}), ("B", 20, {"k": 1}), ("C", 14, {"j": 1}),
    ]  # fmt: skip
    return [Event(t, ts, pos, pos, attrs) for pos, (t, ts, attrs) in enumerate(rows)]


def test_a_parse_batch_ends_with_the_count_of_its_events() -> None:
    net = build_net([p.source for p in compile_text(NET).patterns])
    router = Router(streaming_plan(make_plan(net))[0])
    rows = [row for e in _events()[:4] for row in routed_rows(router, e)]
    assert [(r[2], r[0] == UNROUTED, r[5]) for r in rows] == [
        (0, False, True), (0, False, False), (1, False, True), (2, True, True), (3, False, True),
    ]  # fmt: skip
    # no event, the batch's earliest event time (never the watermark's), 4 events read
    assert count_row(rows) == (UNROUTED, 0, -1, event_time_ms(10), None, False, 4)


def test_the_parse_stage_packs_each_buckets_events_and_ends_with_its_count_row() -> None:
    """A file of the binaryFile source, through the parse stage's mapInArrow function: one
    row per (group, bucket) with its events packed in order (``pos`` the first one's,
    ``evtime`` the latest: the watermark moves as with a row per event), then the count."""
    net = build_net([p.source for p in compile_text(NET).patterns])
    spec = InputSpec("-", format="csv", type_field="type", time_field="ts")
    parser = StreamParser(StreamParse(spec, "seq", True), Router(streaming_plan(make_plan(net))[0]))
    content = b"type,ts,k,j,seq\nA,10,1,1,0\nB,12,1,,1\nD,13,,,2\n"
    files = pa.RecordBatch.from_pydict({"path": ["file:/in/a.csv"], "content": [content]})
    (out,) = parser(iter([files]))
    rows = out.to_pylist()
    got = [(r["g"], r["b"], r["pos"], r["evtime"], r["first"], r["reads"]) for r in rows]
    t = event_time_ms
    assert got == [(0, 0, 0, t(12), False, 0), (1, 0, 0, t(10), False, 0), (UNROUTED, 0, 2, t(13), False, 0),
                   (UNROUTED, 0, -1, t(10), False, 3)]  # fmt: skip
    assert rows[3]["ev"] is None and all(r["ev"][:1] == ARROW_TAG for r in rows[:3])  # (a checked batch: Arrow pieces)
    entries, read = input_pieces(iter([pd.DataFrame(rows)]))
    assert all(isinstance(e, Stored) and e.lo == min(e.piece().column("evtime").to_pylist()) for e in entries)
    pieces = [with_flags(e) for e in entries]
    packs = [list(zip(p.column("pos").to_pylist(), p.column("evtime").to_pylist(), f.tolist())) for p, f in pieces]
    assert read == 3 and packs == [[(0, t(10), True), (1, t(12), True)], [(0, t(10), False)], [(2, t(13), True)]]
    first = piece_events(pieces[0][0])[0]
    assert first == Event("A", 10, 0, 0, {"type": "A", "ts": 10, "k": 1, "j": 1, "seq": 0})
    assert [type(v) for v in first.attrs.values()] == [str, int, int, int, int]
    # the same file's events one by one (routed_rows, packed_rows): the same rows, marshal packs
    events = [Event(e.type, e.ts, e.attrs["seq"], e.attrs["seq"], e.attrs) for p, _ in pieces for e in piece_events(p)]
    blobs = [r for e in events[:2] + events[3:] for r in routed_rows(parser.router, e)]
    assert [r[:4] for r in packed_rows(blobs)] == [(g, b, p, et) for g, b, p, et, *_ in got[:3]]
    assert all(is_pack(r[4]) for r in packed_rows(blobs))


def test_every_event_is_read_once_and_a_late_one_counted_once() -> None:
    """The second micro-batch's A (routed to two keys) and D (to none) are behind the
    watermark (14 s); its C at 14 s is not (late is strictly before)."""
    net = build_net([p.source for p in compile_text(NET).patterns])
    events = _events()
    counts: dict[str, list[int]] = {}
    found = simulate(net, events, "arrival", [4], kernel=False, counts=counts)
    assert counts == {"read": [4, 4], "late": [4, 5]}
    on_time = sorted((e for e in events if e.pos not in (4, 5)), key=lambda e: (e.ts, e.pos))
    assert canonical([row[0] for row in found]) == embedded(net, on_time, "arrival")
    assert len(found) == 4


def test_input_rows_are_buffered_without_the_engine_and_a_timer_fires_it() -> None:
    """Input rows read and write the bucket's one state row (no engine is built); the
    timer reads it, builds the engine (nothing stored yet) and writes the row with the
    engine's snapshot; the next timer uses the live engine and, where it releases nothing
    and nothing closes, keeps the snapshot it read (the same token)."""
    net = build_net([p.source for p in compile_text("PATTERN ab: SEQ(A a, B b) WHERE [k] WITHIN 10").patterns])
    plan, _ = streaming_plan(make_plan(net))
    proc = EngineProcessor(net, plan, "arrival", kernel_groups(engine_choices(net, plan, "arrival")))
    handle = FakeHandle()
    proc.init(handle)
    router = Router(plan)
    rows = [r for e in (Event("A", 1, 0, 0, {"k": 1}), Event("B", 2, 1, 1, {"k": 1})) for r in routed_rows(router, e)]
    key = handle.key = rows[0][:2]
    pdf = pd.DataFrame([r[2:] for r in rows], columns=["pos", "evtime", "ev", "first", "reads"])
    assert list(proc.handleInputRows(key, iter([pdf]), Clock(0))) == []
    assert handle.calls == [("state", "get"), ("timer", "register"), ("state", "update")]
    assert handle.timers == {key: {event_time_ms(1) + 1}}  # (once the watermark passes the earliest, A)
    assert handle.store[(key, "state")][4] is None  # (no engine yet)
    handle.calls.clear()
    (frame,) = proc.handleExpiredTimer(key, Clock(5000), Clock(5000, event_time_ms(1) + 1))
    assert handle.calls == [("state", "get"), ("state", "update")]
    assert frame["kind"].tolist() == [MATCH] and '"a": 0, "b": 1' in frame["json"][0]
    assert set(handle.store) == {(key, "state")}
    token, timer, _, _, snapshot = handle.store[(key, "state")]
    assert token is not None and timer is None and snapshot[:4] == b"\xff\xff\xff\xff"  # (Arrow IPC)
    handle.calls.clear()
    assert list(proc.handleExpiredTimer(key, Clock(9000), Clock(9000, 8000))) == []
    assert handle.calls == [("state", "get"), ("state", "update")]
    assert handle.store[(key, "state")][0] == token and handle.store[(key, "state")][4] == snapshot


def test_input_rows_release_what_the_buckets_expired_timer_would() -> None:
    """Input rows for a bucket whose timer the watermark passed: the handler releases the
    bucket's waiting events itself (the timer deleted, so no timer handler runs for it in
    this micro-batch), then buffers the new ones: one read and one write."""
    net = build_net([p.source for p in compile_text("PATTERN ab: SEQ(A a, B b) WHERE [k] WITHIN 10").patterns])
    plan, _ = streaming_plan(make_plan(net))
    proc = EngineProcessor(net, plan, "arrival", kernel_groups(engine_choices(net, plan, "arrival")))
    handle = FakeHandle()
    proc.init(handle)
    router = Router(plan)

    def rows_of(*events: Event) -> pd.DataFrame:
        rows = [r for e in events for r in routed_rows(router, e)]
        handle.key = rows[0][:2]
        return pd.DataFrame([r[2:] for r in rows], columns=["pos", "evtime", "ev", "first", "reads"])

    first = rows_of(Event("A", 1, 0, 0, {"k": 1}))
    key = handle.key
    assert list(proc.handleInputRows(key, iter([first]), Clock(0))) == []
    handle.calls.clear()
    assert list(proc.handleInputRows(key, iter([rows_of(Event("B", 3, 1, 1, {"k": 1}))]), Clock(2000))) == []
    assert handle.calls == [("state", "get"), ("timer", "delete"), ("timer", "register"), ("state", "update")]
    assert handle.timers == {key: {event_time_ms(3) + 1}}  # (A released into the engine, B waits)
    token, timer, _, _, snapshot = handle.store[(key, "state")]
    assert token is not None and timer == event_time_ms(3) + 1 and snapshot is not None
    handle.calls.clear()
    (frame,) = proc.handleInputRows(key, iter([rows_of(Event("B", 5, 2, 2, {"k": 1}))]), Clock(4000))
    assert frame["kind"].tolist() == [MATCH] and '"a": 0, "b": 1' in frame["json"][0]
    assert handle.calls == [("state", "get"), ("timer", "delete"), ("timer", "register"), ("state", "update")]


@settings(max_examples=examples(400), deadline=None)
@given(st.floats(min_value=0, max_value=1e12, allow_nan=False) | st.integers(0, 10**15).map(lambda n: n / 1000))
def test_a_float_times_event_time_is_the_exact_floor(ts: float) -> None:
    """event_time_ms of a float through its own ratio, as the Fraction it is exactly: the
    floor of ts * 1000 (which ts * 1000 computed as a float can miss: it rounds)."""
    assert event_time_ms(ts) == math.floor(Fraction(ts) * 1000) + 1
    assert event_time_ms(Fraction(ts)) == event_time_ms(ts)
