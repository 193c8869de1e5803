"""A streaming bucket's events as Arrow columns: the parse stage's packs, the bucket's
buffer in the state store, the kernel's input (pure Python over pyarrow: no pyspark).

Each event cost the stream ~16 us of Python between its reader and its engine (issue 39:
``marshal`` of it in the parse stage, again out of the buffer, a tuple per event in the
buffer's Arrow IPC, the columns of dicts; bench/HISTORY.md). Here a reader's checked
batch (:class:`~petricep.events.EventColumns`) travels as columns instead, and stays
columns up to the kernel's ``push_columns``: a *piece* is one record batch of events with
their event time (``evtime``, ms) and position (``pos``), then the event's type (``t``),
time (``ts``), id (``id``) and one column per attribute (``a:<name>``), in the reader's
order. A column holds exactly the values the event holds: int64, float64, bool or text
where every value is one of those (a numpy column, or a list of one Python type), else
each value as :func:`~petricep.spark.records.dump_value` bytes (the field's metadata says
so): nothing is rounded or converted, and what comes out equals the reader's events.

A *blob piece* (``evtime, pos, ev``: each event :func:`~petricep.spark.records.encode` d)
holds the events a reader gave one by one, and is what the buffer held before: a buffer an
earlier petricep stored reads as one.
"""

from __future__ import annotations

import marshal
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petricep.events import Event, EventColumns, TypeColumn

from .records import _SAME_BYTES, columns_of, decode, dump_value, load_value, unpacked_rows

ARROW_TAG = b"A"  # the first byte of a piece in the parse stage's ``ev`` cell (not an event's, nor a marshal pack's)
_LIST_TAG = b"L"  # a buffer of several pieces (an Arrow IPC stream starts with 0xFFFFFFFF)
_VALUES = {b"petricep": b"values"}  # a binary column of dump_value cells
ATTR = "a:"  # the prefix of an attribute's column
BLOB_SCHEMA = pa.schema([("evtime", pa.int64()), ("pos", pa.int64()), ("ev", pa.binary())])
_EXACT_MS = 9 * 10**15  # |ts| below it: ts * 1000 + 1 fits an int64
_ARROW = {int: pa.int64(), float: pa.float64(), bool: pa.bool_(), str: pa.string()}
_LIMIT = 2**63 - 1


def column_field(name: str, col: Any) -> tuple[pa.Field, pa.Array]:
    """One column of values as an Arrow field and array holding exactly those values."""
    if isinstance(col, TypeColumn):
        codes = pa.array(np.asarray(col.codes, dtype=np.int32))
        arr: pa.Array = pa.DictionaryArray.from_arrays(codes, pa.array(col.names, type=pa.string()))
        return pa.field(name, arr.type), arr
    if isinstance(col, np.ndarray) and col.dtype.kind in "fb":
        arr = pa.array(col.astype(np.float64 if col.dtype.kind == "f" else bool, copy=False))
        return pa.field(name, arr.type), arr
    if isinstance(col, np.ndarray) and col.dtype.kind in "iu" and (col.dtype.kind == "i" or not len(col) or col.max() <= _LIMIT):
        arr = pa.array(col.astype(np.int64, copy=False))
        return pa.field(name, arr.type), arr
    values = col.tolist() if hasattr(col, "tolist") else list(col)
    kinds = set(map(type, values))
    if len(kinds) == 1:
        (kind,) = kinds
        if kind in _ARROW and (kind is not int or min(values) >= -_LIMIT - 1 and max(values) <= _LIMIT):
            arr = pa.array(values, type=_ARROW[kind])
            return pa.field(name, arr.type), arr
    arr = pa.array([dump_value(v) for v in values], type=pa.binary())
    return pa.field(name, pa.binary(), metadata=_VALUES), arr


def column_values(field: pa.Field, arr: pa.Array | pa.ChunkedArray) -> Any:
    """:func:`column_field` undone: a numpy array (numbers, bools), a :class:`TypeColumn`
    (a dictionary column) or a list of Python values."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = field.type
    if pa.types.is_dictionary(t):
        codes = arr.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
        return TypeColumn(codes, arr.dictionary.to_pylist())
    if pa.types.is_int64(t) or pa.types.is_float64(t):
        return arr.to_numpy(zero_copy_only=False)
    if pa.types.is_boolean(t):
        return arr.to_numpy(zero_copy_only=False).astype(bool)
    if pa.types.is_binary(t) and field.metadata == _VALUES:
        return [load_value(v) for v in arr.to_pylist()]
    return arr.to_pylist()


def event_time_ms(ts: Any) -> int:
    """Spark event time (ms) of a timestamp in seconds: the floor, exactly, plus 1 ms —
    so that it is positive, after the first micro-batch's watermark (0) even for a
    stream starting at time 0."""
    if isinstance(ts, int):
        return ts * 1000 + 1
    if type(ts) is float and math.isfinite(ts):  # (the same floor, exactly: the float's own ratio)
        num, den = ts.as_integer_ratio()
        return num * 1000 // den + 1
    return math.floor(Fraction(ts) * 1000) + 1


def event_times(ts: Any) -> np.ndarray:
    """:func:`event_time_ms` of a column of timestamps."""
    if isinstance(ts, np.ndarray) and ts.dtype.kind in "iu" and len(ts) and ts.min() > -_EXACT_MS and ts.max() < _EXACT_MS:
        return ts.astype(np.int64) * 1000 + 1
    values = ts.tolist() if hasattr(ts, "tolist") else list(ts)
    return np.fromiter(map(event_time_ms, values), dtype=np.int64, count=len(values))


def event_piece(cols: EventColumns, pos: np.ndarray, evtime: np.ndarray) -> pa.RecordBatch:
    """A reader's checked batch as a piece (its rows' positions ``pos``, event times ``evtime``)."""
    fields = [pa.field("evtime", pa.int64()), pa.field("pos", pa.int64())]
    arrays = [pa.array(evtime, pa.int64()), pa.array(pos, pa.int64())]
    named = [("t", cols.types), ("ts", cols.ts), ("id", cols.ids)] + [(ATTR + a, c) for a, c in cols.attrs.items()]
    for name, col in named:
        f, arr = column_field(name, col)
        fields.append(f)
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def piece_bytes(batch: pa.RecordBatch) -> bytes:
    """A piece as an Arrow IPC stream of one record batch."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def read_piece(data: bytes | memoryview) -> pa.RecordBatch:
    """:func:`piece_bytes` undone (one record batch, or an empty one of its schema)."""
    table = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    if table.num_rows == 0:
        return pa.RecordBatch.from_pylist([], schema=table.schema)
    return table.combine_chunks().to_batches()[0]


def blob_piece(evtime: Sequence[int], pos: Sequence[int], ev: Sequence[bytes]) -> pa.RecordBatch:
    """Encoded events as a piece (:data:`BLOB_SCHEMA`)."""
    arrays = [pa.array(evtime, pa.int64()), pa.array(pos, pa.int64()), pa.array(ev, pa.binary())]
    return pa.RecordBatch.from_arrays(arrays, schema=BLOB_SCHEMA)


def is_blob(piece: pa.RecordBatch) -> bool:
    return piece.schema.names[2:] == ["ev"]


def piece_rows(piece: pa.RecordBatch) -> list[tuple[Any, Any, Any, Any]]:
    """A piece's events as ``(type, ts, id, attributes)`` tuples (:func:`~petricep.spark.records.unpacked_rows`)."""
    if is_blob(piece):
        return unpacked_rows(piece.column("ev").to_pylist())
    cols = [_values(piece.schema.field(i), piece.column(i)) for i in range(2, piece.num_columns)]
    names = [n[len(ATTR) :] for n in piece.schema.names[5:]]
    types, stamps, ids, *attrs = cols
    values = [dict(zip(names, row)) for row in zip(*attrs)] if attrs else [{} for _ in range(piece.num_rows)]
    return list(zip(types, stamps, ids, values))


def _values(field: pa.Field, arr: pa.Array) -> list[Any]:
    got = column_values(field, arr)
    return got.tolist() if hasattr(got, "tolist") else list(got)


def piece_events(piece: pa.RecordBatch) -> list[Event]:
    """A piece's events at their own positions, in its order."""
    positions = piece.column("pos").to_pylist()
    if is_blob(piece):
        return [decode(ev, p, False) for ev, p in zip(piece.column("ev").to_pylist(), positions)]
    return [Event(t, ts, p, i, a) for (t, ts, i, a), p in zip(piece_rows(piece), positions)]


class Pieces:
    """A bucket's buffered events: pieces, in no particular order (the release sorts)."""

    def __init__(self, pieces: Sequence[pa.RecordBatch] = ()) -> None:
        self.pieces = [p for p in pieces if p.num_rows]

    def __len__(self) -> int:
        return sum(p.num_rows for p in self.pieces)

    def add(self, piece: pa.RecordBatch) -> None:
        if piece.num_rows:
            self.pieces.append(piece)

    def earliest(self) -> int | None:
        """The earliest event time buffered (None: nothing is)."""
        got = [int(np.min(p.column("evtime").to_numpy())) for p in self.pieces]
        return min(got) if got else None

    def first_pos(self) -> int:
        return min(int(np.min(p.column("pos").to_numpy())) for p in self.pieces)

    def split(self, wm: int) -> Pieces:
        """Take the events before ``wm`` (ms) out: they are returned, the rest stay."""
        ready, rest = [], []
        for p in self.pieces:
            before = p.column("evtime").to_numpy() < wm
            if before.all():
                ready.append(p)
            elif not before.any():
                rest.append(p)
            else:
                mask = pa.array(before)
                ready.append(p.filter(mask))
                rest.append(p.filter(pc.invert(mask)))
        self.pieces = rest
        return Pieces(ready)

    def merged(self) -> list[pa.RecordBatch]:
        """The pieces, those of one schema joined."""
        by: dict[pa.Schema, list[pa.RecordBatch]] = {}
        for p in self.pieces:
            by.setdefault(p.schema, []).append(p)
        return [ps[0] if len(ps) == 1 else pa.Table.from_batches(ps).combine_chunks().to_batches()[0] for ps in by.values()]

    def to_bytes(self) -> bytes:
        """The state store's bytes: one piece's IPC stream, or several tagged."""
        pieces = self.merged()
        if not pieces:
            return b""
        if len(pieces) == 1:
            return piece_bytes(pieces[0])
        return _LIST_TAG + marshal.dumps([piece_bytes(p) for p in pieces], _SAME_BYTES)

    @classmethod
    def of_bytes(cls, data: bytes | None) -> Pieces:
        if not data:
            return cls()
        if data[:1] == _LIST_TAG:
            return cls([read_piece(d) for d in marshal.loads(data[1:])])
        return cls([read_piece(data)])

    def events(self) -> list[Event]:
        """The events at their own positions, in stream order ``(ts, pos)``."""
        events = [e for p in self.pieces for e in piece_events(p)]
        events.sort(key=lambda e: (e.ts, e.pos))
        return events

    def columns(self) -> tuple[EventColumns, np.ndarray]:
        """The events as columns in stream order ``(ts, pos)``, and their own positions:
        one piece's columns taken in that order where the pieces share a schema (as
        the reader gave them), else value by value."""
        pieces = self.merged()
        if len(pieces) == 1 and not is_blob(pieces[0]) and pieces[0].schema.field("ts").type in (pa.int64(), pa.float64()):
            p = pieces[0]
            order = np.lexsort((p.column("pos").to_numpy(), p.column("ts").to_numpy()))
            p = p.take(pa.array(order))
            names = p.schema.names
            cols = {n: column_values(p.schema.field(n), p.column(n)) for n in names[2:]}
            attrs = {n[len(ATTR) :]: cols[n] for n in names[5:]}
            own = p.column("pos").to_numpy()
            return EventColumns(cols["t"], cols["ts"], own, cols["id"], attrs), own
        rows = [r for p in pieces for r in piece_rows(p)]
        own_list = [x for p in pieces for x in p.column("pos").to_pylist()]
        by = [i for _, _, i in sorted(zip([r[1] for r in rows], own_list, range(len(rows))))]
        own_sorted = [own_list[i] for i in by]
        return columns_of([rows[i] for i in by], own_sorted, False), np.asarray(own_sorted, dtype=np.int64)


def renumbered_array(own: np.ndarray, last: int, whole: bool) -> np.ndarray:
    """:func:`~petricep.spark.release.renumbered`'s positions of a column: each event's own,
    moved after the one before where it falls behind (``whole``: one more than it)."""
    n = len(own)
    steps = np.arange(n, dtype=np.int64)
    if whole:
        return last + 1 + steps
    lifted = np.maximum.accumulate(np.maximum(own.astype(np.int64) - steps, last + 1)) if n else steps
    return lifted + steps
