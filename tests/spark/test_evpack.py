"""A streaming batch's events as Arrow columns (:mod:`petricep.spark.evpack`) and routed a
column at a time (:func:`petricep.spark.streamparse.routed_columns`): exactly the events,
values and routes the event-by-event path (``encode``/``decode``, ``routed_rows``) gives."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.events import Event, EventColumns, TypeColumn
from petricep.merge import build_net
from petricep.spark.evpack import (
    Pieces,
    blob_piece,
    event_piece,
    event_time_ms,
    event_times,
    piece_bytes,
    piece_events,
    read_piece,
    renumbered_array,
)
from petricep.spark.plan import Router, make_plan
from petricep.spark.records import encode
from petricep.spark.release import renumbered, wake_times
from petricep.spark.streamparse import routed_columns, routed_rows
from tests.budget import examples

SETTINGS = settings(max_examples=examples(200), deadline=None, suppress_health_check=list(HealthCheck))

_VALUE = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**53 + 1]),  # (int64's edges: beyond, values)
    st.floats(allow_nan=False),
    st.booleans(),
    st.text(max_size=3),
    st.none(),
    st.just(datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)),
    st.just(Decimal("1.5")),
)


def _column(values: list[Any], as_numpy: bool) -> Any:
    """A reader's column: a numpy array where the values allow one and ``as_numpy``."""
    kinds = set(map(type, values))
    if as_numpy and kinds == {int} and all(-(2**63) <= v < 2**63 for v in values):
        return np.asarray(values, dtype=np.int64)
    if as_numpy and kinds in ({float}, {bool}):
        return np.asarray(values)
    return values


@st.composite
def batches(draw: st.DrawFn) -> tuple[list[Event], EventColumns]:
    """Events with one field order (a reader's checked batch), and their columns."""
    n = draw(st.integers(1, 8))
    fields = draw(st.lists(st.sampled_from(["k", "x", "s"]), unique=True, max_size=3))
    cols = {f: [draw(_VALUE) for _ in range(n)] for f in fields}
    types = [draw(st.sampled_from("ABC")) for _ in range(n)]
    ts = draw(st.one_of(st.lists(st.integers(0, 10**6), min_size=n, max_size=n),
                        st.lists(st.floats(0, 10**6), min_size=n, max_size=n)))  # fmt: skip
    ids = draw(st.one_of(st.lists(st.integers(0, 99), min_size=n, max_size=n), st.lists(st.text(max_size=2), min_size=n, max_size=n)))
    pos = draw(st.lists(st.integers(0, 50), min_size=n, max_size=n, unique=True))
    events = [Event(types[i], ts[i], pos[i], ids[i], {f: cols[f][i] for f in fields}) for i in range(n)]
    as_numpy = draw(st.booleans())
    tcol = TypeColumn(np.asarray([ord(t) - 65 for t in types], dtype=np.int32), "ABC") if draw(st.booleans()) else types
    columns = EventColumns(tcol, _column(ts, as_numpy), list(range(n)), _column(ids, as_numpy),
                           {f: _column(cols[f], as_numpy) for f in fields})  # fmt: skip
    return events, columns


def _typed(values: Any) -> list[tuple[type, Any]]:
    got = values.tolist() if hasattr(values, "tolist") else list(values)
    return [(type(v), v) for v in got]


@SETTINGS
@given(batches())
def test_a_piece_holds_exactly_its_events(batch: tuple[list[Event], EventColumns]) -> None:
    """Through the state store's bytes: the same events, each value of its own type, and
    the columns the kernel gets equal (type for type) those of the encoded events."""
    events, cols = batch
    pos = np.asarray([e.pos for e in events], dtype=np.int64)
    piece = read_piece(piece_bytes(event_piece(cols, pos, event_times(cols.ts))))
    back = piece_events(piece)
    assert back == events
    assert [[type(v) for v in e.attrs.values()] for e in back] == [[type(v) for v in e.attrs.values()] for e in events]
    assert [(type(e.ts), type(e.id)) for e in back] == [(type(e.ts), type(e.id)) for e in events]
    assert piece.column("evtime").to_pylist() == [event_time_ms(e.ts) for e in events]
    blobs = Pieces([blob_piece([event_time_ms(e.ts) for e in events], pos.tolist(), [encode(e) for e in events])])
    for one in (Pieces([piece]), Pieces.of_bytes(Pieces([piece.slice(0, 1), piece.slice(1)]).to_bytes())):
        got, own = one.columns()
        want, want_own = blobs.columns()
        assert own.tolist() == want_own.tolist() == [e.pos for e in sorted(events, key=lambda e: (e.ts, e.pos))]
        assert _typed(got.types) == _typed(want.types) and _typed(got.ts) == _typed(want.ts)
        assert _typed(got.ids) == _typed(want.ids)
        assert {f: _typed(c) for f, c in got.attrs.items()} == {f: _typed(c) for f, c in want.attrs.items()}
    mixed = Pieces([piece, blobs.pieces[0]])  # (two schemas: value by value)
    assert mixed.events() == sorted(events * 2, key=lambda e: (e.ts, e.pos))


@SETTINGS
@given(st.data())
def test_columns_route_as_events_do(data: st.DataObject) -> None:
    """Random routing tables (groups keyed by no, one or two attributes, contiguous groups
    that take the other types' events with their key): every event's rows -- group,
    bucket, position, ``first`` -- as ``routed_rows`` gives them."""
    events, cols = data.draw(batches())
    net = build_net([p.source for p in compile_text("PATTERN ab: SEQ(A a, B b) WHERE [k] WITHIN 10").patterns])
    router = Router(make_plan(net))
    attrs = st.sampled_from([(), ("k",), ("x",), ("k", "s"), ("j",)])
    router.routes = {t: tuple(data.draw(st.lists(st.tuples(st.integers(0, 2), attrs), max_size=2))) for t in "ABC"}
    router.contiguous = data.draw(st.lists(st.tuples(st.integers(0, 2), attrs, st.frozensets(st.sampled_from("ABC"))), max_size=2))
    router.fast = {}
    buckets = data.draw(st.sampled_from([1, 3]))
    want = sorted((g, b, p, f) for e in events for g, b, p, _, _, f, _ in routed_rows(router, e, buckets))
    pos = [e.pos for e in events]
    got = sorted((g, b, pos[r], bool(f)) for g, b, rows, first in routed_columns(router, cols, buckets) for r, f in zip(rows.tolist(), first))
    assert got == want


def test_renumbering_and_wake_times_a_column_at_a_time() -> None:
    own = [3, 9, 7, 8, 20]
    for whole in (False, True):
        assert renumbered_array(np.asarray(own), 5, whole).tolist() == renumbered(own, 5, whole)[0]
    stamps = np.asarray([4, 1, 4, 2])
    want = {event_time_ms(ts + w) + 2 for ts in (1, 2, 4) for w in (10, 3)} | {event_time_ms(ts) + 2 for ts in (1, 2, 4)}
    assert wake_times(stamps, (10, 3), True).tolist() == sorted(want)
    assert wake_times([4.5, 1, 4.5], (0.25,), False).tolist() == sorted({event_time_ms(4.75) + 2, event_time_ms(1.25) + 2})
    assert wake_times(stamps, (), False).tolist() == []


def test_values_no_arrow_type_holds_travel_as_they_are() -> None:
    """Ints beyond int64, mixed kinds, None, date-times, decimals: each value's own bytes
    (the field says so); uint64 beyond int64 too; the rest typed."""
    when = datetime(2026, 1, 2, tzinfo=timezone.utc)
    attrs: dict[str, Any] = {"big": [2**63, 1], "mixed": [1, "a"], "none": [None, None], "when": [when, when], "dec": [Decimal("1.5"), Decimal(2)],
             "u": np.asarray([2**64 - 1, 0], dtype=np.uint64), "i": np.asarray([-(2**63), 2**63 - 1]), "b": [True, False]}  # fmt: skip
    cols = EventColumns(["A", "B"], [1, 2.5], [0, 1], ["x", "y"], attrs)
    piece = read_piece(piece_bytes(event_piece(cols, np.asarray([0, 1]), np.asarray([1001, 2501]))))
    typed = {f.name: str(f.type) for f in piece.schema if f.metadata is None}
    assert typed == {"evtime": "int64", "pos": "int64", "t": "string", "id": "string", "a:i": "int64", "a:b": "bool"}
    events = piece_events(piece)
    assert [e.attrs for e in events] == [{f: c[i] for f, c in attrs.items()} for i in range(2)]
    assert [type(v) for v in events[0].attrs.values()] == [int, int, type(None), datetime, Decimal, int, int, bool]
    assert [(e.ts, type(e.ts)) for e in events] == [(1, int), (2.5, float)]
