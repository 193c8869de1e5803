"""A streaming bucket's release as columns (petricep/spark/release.py): the positions its
engine fires events at, emitting positions mapped back, and the output frame made of
record batches equal, as Spark reads it, to the frame made of one row per match."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from petricep.events import Event
from petricep.runtime.match import Match
from petricep.spark.evpack import Pieces, blob_piece
from petricep.spark.records import MATCH_SCHEMA, encode, match_row, rows_batch
from petricep.spark.release import match_frame, released_columns, renumbered, with_origin
from petricep.spark.streaming import MATCH, OUTPUT_COLUMNS, OUTPUT_DDL, event_time_ms, renumber

_ARROW = {"string": pa.string(), "double": pa.float64(), "long": pa.int64(), "int": pa.int32()}
OUTPUT_SCHEMA = pa.schema([(c.split()[0], _ARROW[c.split()[1]]) for c in OUTPUT_DDL.split(", ")])


def _as_spark_reads(df: pd.DataFrame) -> pa.Table:
    """A handler's frame as Spark converts it to the output schema (arrow_cast)."""
    return pa.Table.from_pandas(df, schema=OUTPUT_SCHEMA, preserve_index=False)


def _blobs(events: list[Event]) -> Pieces:
    """Events as the buffer holds those a reader gave one by one: one blob piece."""
    return Pieces([blob_piece([event_time_ms(e.ts) for e in events], [e.pos for e in events], [encode(e) for e in events])])


def test_released_columns_are_the_decoded_events_sorted_and_renumbered() -> None:
    """Buffer order is (event time ms, pos); stream order is (ts, pos): two events in one
    millisecond come out by their timestamps, and a file that went back in time is
    numbered after the engine's last position, as ``renumber`` numbers the events."""
    events = [Event("A", 1.0004, 7, 70, {"k": 1}), Event("B", 1.0001, 9, 90, {"k": 1, "x": 2}), Event("A", 0.5, 3, 30, {})]
    ready = _blobs(events)
    for whole in (False, True):
        cols, origin = released_columns(ready, 5, whole)
        want = sorted((Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in events), key=lambda e: (e.ts, e.pos))
        assert origin == renumber(want, 5, whole)
        assert (cols.types, cols.ts, cols.pos.tolist(), cols.ids) == (
            [e.type for e in want], [e.ts for e in want], [e.pos for e in want], [e.id for e in want]
        )  # fmt: skip
        assert cols.attrs == {"k": [None, 1, 1], "x": [None, 2, None]}  # (a missing field: None)
    assert renumbered([3, 9, 7], 5, False) == ([6, 9, 10], {6: 3, 9: 9, 10: 7})
    assert renumbered([3, 9, 7], 5, True) == ([6, 7, 8], {6: 3, 7: 9, 8: 7})


def test_emitting_positions_map_back_to_the_events_own() -> None:
    m = Match("p", {"a": 1}, 1, 2, {})
    origin = {6: 3, 9: 9, 10: 7}
    batch = pa.RecordBatch.from_pydict({"x": [1, 2, 3, 4], "emitted_at": pa.array([6, 10, -1, 9], pa.int64())})
    got = with_origin([(m, 10), batch, (m, -1)], origin)
    assert got[0] == (m, 7) and got[2] == (m, -1)
    assert isinstance(got[1], pa.RecordBatch) and got[1].column("emitted_at").to_pylist() == [3, 7, -1, 9]
    assert got[1].column("x").to_pylist() == [1, 2, 3, 4] and got[1].schema.names == ["x", "emitted_at"]
    assert with_origin([batch], {}) == [batch]


def test_the_frame_of_record_batches_is_the_frame_of_rows() -> None:
    """What Spark reads of the handler's output: the frame made of MATCH_SCHEMA batches
    equals, value for value, the one the handler made of ``(*match_row(...), kind, None)``
    (times that are no numbers among them: null doubles)."""
    matches = [Match("p", {"a": 1, "b": 2}, 1, 2.5, {"x": "é"}), Match("q", {"a": 3}, "t0", "t1", {}),
               Match("p", {"a": 4, "b": 5}, 2**60, 2**60 + 1, {"y": [1, 2]})]  # fmt: skip
    rows = [match_row(m, at, 3, seq) for seq, (m, at) in enumerate(zip(matches, [4, -1, 9]))]
    old = pd.DataFrame([(*r, MATCH, None) for r in rows], columns=OUTPUT_COLUMNS)
    batch = rows_batch(rows)
    assert batch.schema == MATCH_SCHEMA
    for batches in ([batch], [batch.slice(0, 1), batch.slice(1)]):
        new = match_frame(batches, MATCH, OUTPUT_COLUMNS)
        assert list(new.columns) == OUTPUT_COLUMNS
        assert _as_spark_reads(new).equals(_as_spark_reads(old))
        assert _as_spark_reads(new).column("start").to_pylist() == [1.0, None, float(2**60)]


def test_columns_of_events_with_one_field_order_and_with_several() -> None:
    """One reader's events (the same fields in one order: a column per field at once), and
    the same fields in two orders (columns by name): the columns the events hold."""
    same = [Event("A", i, i, i, {"k": i, "x": -i}) for i in range(3)]
    mixed = [*same[:2], Event("A", 2, 2, 2, {"x": -2, "k": 2})]
    for events in (same, mixed):
        cols, _ = released_columns(_blobs(events), -1, False)
        assert cols.attrs == {"k": [0, 1, 2], "x": [0, -1, -2]}
        assert list(cols.attrs) == ["k", "x"]
