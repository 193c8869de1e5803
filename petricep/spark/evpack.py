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
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeAlias

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


def _codec() -> str | None:
    for name in ("zstd", "lz4"):
        if pa.Codec.is_available(name):
            return name
    return None


# a piece's buffers compressed (zstd: ~15 bytes an event of the spark_keys stream, 73
# uncompressed): each event goes through the state store two or three times (the buffer
# is rewritten whole by the micro-batch it arrives in and by the one that releases what is
# before it), and each byte costs in pyspark's protobuf, the socket, the JVM and RocksDB
# far more than zstd's ~0.25 us an event each way (bench/HISTORY.md); a reader
# decompresses what the stream says it is
_OPTIONS = pa.ipc.IpcWriteOptions(compression=_codec())


def piece_bytes(batch: pa.RecordBatch) -> bytes:
    """A piece as an Arrow IPC stream of one record batch, compressed; its schema's
    metadata says its rows and earliest and latest event times (:func:`stored`)."""
    evtime = batch.column("evtime").to_numpy()
    meta = {_ROWS: str(batch.num_rows), _LO: str(int(evtime.min())), _HI: str(int(evtime.max()))} if batch.num_rows else {}
    batch = batch.replace_schema_metadata(meta)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema, options=_OPTIONS) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


_ROWS, _LO, _HI = b"petricep.rows", b"petricep.lo", b"petricep.hi"


def read_piece(data: bytes | memoryview) -> pa.RecordBatch:
    """:func:`piece_bytes` undone (one record batch, or an empty one of its schema), its
    schema without metadata."""
    table = pa.ipc.open_stream(pa.py_buffer(data)).read_all().replace_schema_metadata(None)
    if table.num_rows == 0:
        return pa.RecordBatch.from_pylist([], schema=table.schema)
    return table.combine_chunks().to_batches()[0]


def first_flags(piece: pa.RecordBatch) -> tuple[pa.RecordBatch, np.ndarray | None]:
    """A parse stage's piece without its ``first`` column, and the column (None: none)."""
    if "first" not in piece.schema.names:
        return piece, None
    flags = piece.column("first").to_numpy(zero_copy_only=False).astype(bool)
    return piece.drop_columns(["first"]), flags


@dataclass(frozen=True)
class Stored:
    """A piece as bytes, not decoded (what it holds is read only where it is needed): its
    rows and its earliest and latest event times (ms)."""

    data: bytes
    rows: int
    lo: int
    hi: int

    def piece(self) -> pa.RecordBatch:
        return first_flags(read_piece(self.data))[0]


def stored(data: bytes) -> Stored | None:
    """A piece's bytes with what its schema's metadata says (only the schema is read);
    None where it says nothing (an earlier petricep's buffer)."""
    meta = pa.ipc.open_stream(pa.py_buffer(data)).schema.metadata or {}
    if _ROWS not in meta:
        return None
    return Stored(data, int(meta[_ROWS]), int(meta[_LO]), int(meta[_HI]))


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


Entry: TypeAlias = "pa.RecordBatch | Stored"  # a piece decoded, or as bytes


class Pieces:
    """A bucket's buffered events: pieces, in no particular order (the release sorts),
    each decoded or as the bytes it came in (:class:`Stored`): a piece the watermark has not
    reached goes back to the state store as it came, neither decoded nor written again."""

    def __init__(self, pieces: Sequence[Entry] = ()) -> None:
        self.entries: list[Entry] = []
        for p in pieces:
            self.add(p)

    def __bool__(self) -> bool:
        return bool(self.entries)

    def __len__(self) -> int:
        return sum(e.rows if isinstance(e, Stored) else e.num_rows for e in self.entries)

    def add(self, piece: Entry) -> None:
        if (piece.rows if isinstance(piece, Stored) else piece.num_rows) > 0:
            self.entries.append(piece)

    @property
    def pieces(self) -> list[pa.RecordBatch]:
        """Every piece, decoded."""
        return [e.piece() if isinstance(e, Stored) else e for e in self.entries]

    def earliest(self) -> int | None:
        """The earliest event time buffered (None: nothing is)."""
        got = [e.lo if isinstance(e, Stored) else int(np.min(e.column("evtime").to_numpy())) for e in self.entries]
        return min(got) if got else None

    def first_pos(self) -> int:
        return min(int(np.min(p.column("pos").to_numpy())) for p in self.pieces)

    def split(self, wm: int) -> Pieces:
        """Take the events before ``wm`` (ms) out: they are returned, the rest stay."""
        ready, rest = Pieces(), Pieces()
        for e in self.entries:
            if isinstance(e, Stored) and (e.hi < wm or e.lo >= wm):
                (ready if e.hi < wm else rest).add(e)
                continue
            p = e.piece() if isinstance(e, Stored) else e
            before = p.column("evtime").to_numpy() < wm
            if before.all() or not before.any():
                (ready if before.all() else rest).add(p)
            else:
                mask = pa.array(before)
                ready.add(p.filter(mask))
                rest.add(p.filter(pc.invert(mask)))
        self.entries = rest.entries
        return ready

    def merged(self) -> list[pa.RecordBatch]:
        """The pieces decoded, those of one schema joined."""
        return _joined(self.pieces)

    def to_bytes(self) -> bytes:
        """The state store's bytes: one piece's IPC stream, or several tagged; a stored
        piece's bytes as they came, decoded ones of one schema joined."""
        datas = [e.data for e in self.entries if isinstance(e, Stored)]
        datas += [piece_bytes(p) for p in _joined([e for e in self.entries if not isinstance(e, Stored)])]
        if not datas:
            return b""
        if len(datas) == 1:
            return datas[0]
        return _LIST_TAG + marshal.dumps(datas, _SAME_BYTES)

    @classmethod
    def of_bytes(cls, data: bytes | None) -> Pieces:
        if not data:
            return cls()
        datas = marshal.loads(data[1:]) if data[:1] == _LIST_TAG else [data]
        out = cls()
        for d in datas:
            got = stored(d)
            out.add(got if got is not None else read_piece(d))
        return out

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


def _joined(pieces: list[pa.RecordBatch]) -> list[pa.RecordBatch]:
    """Pieces, those of one schema joined."""
    by: dict[pa.Schema, list[pa.RecordBatch]] = {}
    for p in pieces:
        by.setdefault(p.schema, []).append(p)
    return [ps[0] if len(ps) == 1 else pa.Table.from_batches(ps).combine_chunks().to_batches()[0] for ps in by.values()]


def renumbered_array(own: np.ndarray, last: int, whole: bool) -> np.ndarray:
    """:func:`~petricep.spark.release.renumbered`'s positions of a column: each event's own,
    moved after the one before where it falls behind (``whole``: one more than it)."""
    n = len(own)
    steps = np.arange(n, dtype=np.int64)
    if whole:
        return last + 1 + steps
    lifted = np.maximum.accumulate(np.maximum(own.astype(np.int64) - steps, last + 1)) if n else steps
    return lifted + steps
