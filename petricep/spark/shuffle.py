"""What a routed event carries from the parse stage to the firing stage (pure Python over
pyarrow: no pyspark here).

A group the Python engine fires gets each event whole, as a blob (:func:`~petricep.spark.records.encode`).
A group the compiled kernel fires reads only a few attributes (:func:`~petricep.spark.partition.kernel_fields`)
and reads them as columns, so its events travel as typed columns of the shuffle itself:
type, time, id and, per attribute, a number, a text and a kind. The firing stage hands
them to the kernel as numpy arrays, with no Python object per value where a column holds
one kind (what ``marshal``-ing every event cost: about half of the firing stage).

A reader's checked batch of such events goes as *packs* (:meth:`Rows.add_packs`): its rows
of one key bucket in one Arrow record batch, in one row of the shuffle, so that Spark's rows,
sort and Arrow conversion handle a few large values instead of a row per event (most of the
firing stage's time before); :class:`Unpacked` restores the order key order on the other side.

Typed columns hold exactly what the event held, or the event goes as a blob: times and
numbers are ints (within 2**53, so a float64 holds them exactly) or floats, ids ints or
text, values also bools, text or None (a missing attribute reads as None, as the kernel
reads it). Anything else (a date-time, a Decimal, a huge int) sends that one event as a
blob, which the firing stage decodes value by value.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petricep.events import Event, EventColumns, TypeColumn

from .records import PACK, decode_columns, encode, encode_fields

# the kind of a typed value (the ``tk``, ``idk`` and per-attribute ``a<i>k`` columns)
K_NULL, K_INT, K_NUM, K_BOOL, K_STR = range(5)
EXACT = 2**53  # ints beyond travel as blobs (a float64 holds every int up to it)

_BASE = [
    ("kind", pa.int8()),
    ("g", pa.int32()),
    ("k", pa.string()),
    ("lid", pa.int64()),
    ("ev", pa.binary()),
    ("t", pa.string()),
    ("ts", pa.float64()),
    ("tk", pa.int8()),
    ("idn", pa.int64()),
    ("ids", pa.string()),
    ("idk", pa.int8()),
]
_PACK_TYPE = pa.field("t", pa.dictionary(pa.int32(), pa.string()))  # a pack's type column
_SPARK = {pa.int8(): "byte", pa.int32(): "int", pa.int64(): "long", pa.float64(): "double"}


@dataclass(frozen=True)
class Layout:
    """The parse stage's output columns for one run: per group, which attributes travel
    typed (indexes into :attr:`fields`, the union over the kernel's groups), or None
    (the group's events travel as blobs)."""

    fields: tuple[str, ...] = ()
    groups: tuple[tuple[int, ...] | None, ...] = ()

    @property
    def typed(self) -> bool:
        """Whether any group's events travel typed (else the rows have no typed columns)."""
        return any(idx is not None for idx in self.groups)

    @classmethod
    def of(cls, per_group: Sequence[tuple[str, ...] | None]) -> Layout:
        fields = tuple(dict.fromkeys(f for names in per_group if names is not None for f in names))
        index = {f: i for i, f in enumerate(fields)}
        groups = tuple(None if names is None else tuple(index[f] for f in names) for names in per_group)
        return cls(fields, groups)

    def schema(self) -> pa.Schema:
        cols = list(_BASE if self.typed else _BASE[:5])
        for i in range(len(self.fields)):
            cols += [(f"a{i}n", pa.float64()), (f"a{i}s", pa.string()), (f"a{i}k", pa.int8())]
        return pa.schema(cols)

    def ddl(self) -> str:
        """The schema in Spark's DDL."""
        return ", ".join(f"{f.name} {_SPARK.get(f.type, str(f.type))}" for f in self.schema())

    def pack_schema(self) -> pa.Schema:
        """The columns of a pack's record batch: an event row's, less its routing, the
        type dictionary-encoded (the firing stage reads codes: no string hashed per row)."""
        return pa.schema(
            [_PACK_TYPE if f.name == "t" else f for f in self.schema() if f.name not in ("kind", "g", "k")]
        )

    def names_of(self, g: int) -> tuple[str, ...] | None:
        """The attributes group ``g``'s typed events carry (None: its events are blobs)."""
        idx = self.groups[g] if g < len(self.groups) else None
        return None if idx is None else tuple(self.fields[i] for i in idx)


# a pack's bytes: an Arrow IPC stream of one record batch, its buffers LZ4-compressed where
# pyarrow has the codec (a fifth of the bytes for the JVM to checkpoint, shuffle, convert and
# hand over; the reader decompresses what the stream says it is)
_PACK_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4" if pa.Codec.is_available("lz4") else None)


def pack_bytes(batch: pa.RecordBatch) -> bytes:
    """A pack's ``ev`` cell: ``batch`` as an Arrow IPC stream (read back with
    ``pa.ipc.open_stream(...).read_next_batch()``)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema, options=_PACK_OPTIONS) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def bucket_of(key: str, labels: tuple[str, ...]) -> str:
    """The label of the key bucket a kernel group's events of routing key ``key`` travel
    in (the same in every Python process: not ``hash``)."""
    return labels[zlib.crc32(key.encode("utf-8", "surrogatepass")) % len(labels)]


def _mix(h1: int, k1: int) -> int:
    """One 32-bit word into Murmur3_x86_32's state (Spark's ``mixK1`` then ``mixH1``)."""
    k1 = (k1 * 0xCC9E2D51) & 0xFFFFFFFF
    k1 = ((k1 << 15) | (k1 >> 17)) & 0xFFFFFFFF
    k1 = (k1 * 0x1B873593) & 0xFFFFFFFF
    h1 ^= k1
    h1 = ((h1 << 13) | (h1 >> 19)) & 0xFFFFFFFF
    return (h1 * 5 + 0xE6546B64) & 0xFFFFFFFF


def _fmix(h1: int, length: int) -> int:
    h1 ^= length
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & 0xFFFFFFFF
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & 0xFFFFFFFF
    return h1 ^ (h1 >> 16)


def spark_partition(g: int, key: str, partitions: int) -> int:
    """The partition Spark's ``repartition(partitions, "g", "k")`` sends the row ``(g, key)``
    to (an int and a string column): ``pmod(hash(g, k), partitions)``, Spark's Murmur3
    (seed 42; a string's bytes by ``hashUnsafeBytes``: its last bytes one at a time,
    sign-extended), computed here rather than asked of Spark (a job, ~1 s of a small run).
    Checked against Spark in tests/spark/test_spark_batch.py."""
    h = _fmix(_mix(42, g & 0xFFFFFFFF), 4)
    data = key.encode("utf-8")
    aligned = len(data) - len(data) % 4
    for i in range(0, aligned, 4):
        h = _mix(h, int.from_bytes(data[i : i + 4], "little"))
    for b in data[aligned:]:
        h = _mix(h, (b - 256 if b > 127 else b) & 0xFFFFFFFF)
    h = _fmix(h, len(data))
    signed = h - (1 << 32) if h & 0x80000000 else h
    return signed % partitions  # (Python's % of a positive divisor is pmod)


class Rows:
    """The parse stage's output rows: side rows and blob events (:meth:`add`), a kernel
    group's events one by one (:meth:`add_event`) or as a reader's checked batch
    (:meth:`add_columns`). Typed columns are built a column at a time when the batch is
    made (a comprehension or a column's ``tolist`` per column, not an append per value)."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.schema = layout.schema()
        self._new()

    def _new(self) -> None:
        self.cols: list[list[Any]] = [[] for _ in range(5)]
        # typed rows: (first row, group, its events or a batch's columns), rows consecutive
        self._typed: list[tuple[int, int, list[Event] | EventColumns]] = []
        self.packed = 0  # bytes of the packs added

    def __len__(self) -> int:
        return len(self.cols[0])

    def add(self, kind: int, g: int, k: str, lid: int, ev: bytes | None) -> None:
        """A row without typed values (a side row, or an event as a blob)."""
        c = self.cols
        c[0].append(kind)
        c[1].append(g)
        c[2].append(k)
        c[3].append(lid)
        c[4].append(ev)

    def add_event(self, kind: int, g: int, k: str, lid: int, e: Event) -> None:
        """An event of group ``g``, whose events travel typed (or, where a value does not
        fit the columns, as a blob of the attributes the group reads)."""
        row = len(self)
        last = self._typed[-1] if self._typed else None
        if last is not None and last[1] == g and isinstance(last[2], list) and last[0] + len(last[2]) == row:
            last[2].append(e)
        else:
            self._typed.append((row, g, [e]))
        self.add(kind, g, k, lid, None)

    def add_columns(self, kind: int, g: int, keys: list[str], lids: list[int], cols: EventColumns) -> None:
        """:meth:`add_event` for every row of a checked batch (``keys``, ``lids``: per row)."""
        n = len(lids)
        self._typed.append((len(self), g, cols))
        c = self.cols
        c[0].extend([kind] * n)
        c[1].extend([g] * n)
        c[2].extend(keys)
        c[3].extend(lids)
        c[4].extend([None] * n)

    def add_packs(self, kind: int, g: int, buckets: list[str], lids: Sequence[int] | np.ndarray, cols: EventColumns) -> None:
        """A checked batch of kernel group ``g`` as one :data:`PACK` row per key bucket
        (``buckets``: per row): the rows of a bucket typed as :meth:`add_columns` types
        them, as one record batch in the ``ev`` cell. The shuffle then moves a few large
        values instead of a row per event (the JVM's rows, sort and Arrow conversion were
        most of the firing stage); the firing stage unpacks them (:class:`Unpacked`)."""
        code = {b: i for i, b in enumerate(dict.fromkeys(buckets))}
        codes = np.fromiter(map(code.__getitem__, buckets), np.intp, len(buckets))
        self.add_bucket_packs(kind, g, codes, list(code), lids, cols)

    def add_bucket_packs(
        self, kind: int, g: int, codes: np.ndarray, labels: list[str], lids: Sequence[int] | np.ndarray, cols: EventColumns
    ) -> None:
        """:meth:`add_packs` with each row's bucket as a code into ``labels`` (the packs go
        out in the order of the labels: no Python object per row)."""
        keys = np.asarray(lids, dtype=np.int64)
        typed = typed_batch(cols, keys, self.layout)
        if typed is None:  # some column needs value by value (or a row goes as a blob)
            rows = Rows(self.layout)
            rows.add_columns(kind, g, [labels[c] for c in codes.tolist()], keys.tolist(), cols)
            typed = packed_rows(rows.batch(), self.layout)
        # rows by bucket, each bucket's in order key order (a pack is sorted, its first
        # row its least): a table's batch may hold chunks of rows out of order
        order = np.lexsort((keys, codes))
        codes = codes[order]
        for a, b in spans(codes[1:] != codes[:-1]):
            rows_of = order[a:b]
            data = pack_bytes(typed.take(pa.array(rows_of)))
            self.packed += len(data)
            self.add(PACK, g, labels[int(codes[a])], int(keys[rows_of[0]]), data)

    def batch(self) -> pa.RecordBatch:
        n = len(self)
        values = self._typed_arrays() if self.layout.typed else []  # (first: it may turn rows into blobs)
        arrays = [pa.array(c, type=f.type) for c, f in zip(self.cols, self.schema)] + values
        typed = sum(len(src) for _r, _g, src in self._typed)
        if values and typed < n:  # other rows: null typed cells
            where: list[int | None] = [None] * n
            j = 0
            for first, _g, src in self._typed:
                where[first : first + len(src)] = range(j, j + len(src))
                j += len(src)
            take = pa.array(where, type=pa.int64())
            arrays[5:] = [a.take(take) for a in arrays[5:]]
        b = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self._new()
        return b

    def _gather(self, of_events: Callable[[list[Event]], list[Any]], of_columns: Callable[[EventColumns], list[Any]]) -> list[Any]:
        """One value per typed row, segment by segment."""
        out: list[Any] = []
        for _first, _g, src in self._typed:
            out.extend(of_events(src) if isinstance(src, list) else of_columns(src))
        return out

    def _typed_arrays(self) -> list[pa.Array]:
        """The typed columns of the typed rows (in their order); an event with a value the
        columns cannot hold becomes a blob instead (its ``ev`` set, its kinds null)."""
        bad: set[int] = set()
        gather = self._gather
        ts, _, tk = _kinds_of(gather(lambda es: [e.ts for e in es], lambda c: listed(c.ts)), bad, ints_only=False)
        idn, ids, idk = _kinds_of(gather(lambda es: [e.id for e in es], lambda c: listed(c.ids)), bad, ints_only=True)
        cells = [_kinds_of(gather(_field_of_events(f), _field_of_columns(f)), bad) for f in self.layout.fields]
        if bad:
            self._to_blobs(sorted(bad), (tk, idk, *(c[2] for c in cells)))
        out = [
            pa.array(gather(lambda es: [e.type for e in es], lambda c: listed(c.types)), type=pa.string()),
            pa.array(ts, type=pa.float64()),
            pa.array(tk, type=pa.int8()),
            pa.array(idn, type=pa.int64()),
            pa.array(ids, type=pa.string()),
            pa.array(idk, type=pa.int8()),
        ]
        for numbers, texts, kinds in cells:
            out += [pa.array(numbers, type=pa.float64()), pa.array(texts, type=pa.string()), pa.array(kinds, type=pa.int8())]
        return out

    def _to_blobs(self, bad: list[int], kinds: tuple[list[Any], ...]) -> None:
        """Typed rows ``bad`` (indexes among the typed rows) go as blobs: ``ev`` set, kinds null."""
        j = 0
        targets = iter(bad)
        want = next(targets, None)
        for first, g, src in self._typed:
            while want is not None and want < j + len(src):
                k = want - j
                e = src[k] if isinstance(src, list) else src.event(k)
                self.cols[4][first + k] = encode_fields(e, self.layout.names_of(g) or ())
                for col in kinds:
                    col[want] = None
                want = next(targets, None)
            j += len(src)


def typed_batch(cols: EventColumns, lids: Sequence[int] | np.ndarray, layout: Layout) -> pa.RecordBatch | None:
    """A checked batch's rows in a pack's columns (:meth:`Layout.pack_schema`), a column at
    a time: exactly what :class:`Rows` makes of them, where every column is a numpy array
    of numbers or a list :func:`_kinds_of` takes whole. None where a row would go as a blob
    (a value the typed columns cannot hold): then :class:`Rows` makes the batch."""
    n = len(lids)
    bad: set[int] = set()
    ts = _typed_cells(cols.ts, bad, False)
    ids = _typed_cells(cols.ids, bad, True)
    cells = [_typed_cells(cols.attrs[f], bad, None) if f in cols.attrs else _absent(n) for f in layout.fields]
    if bad or ts is None or ids is None or any(c is None for c in cells):
        return None
    types = cols.types
    if isinstance(types, TypeColumn):
        codes = pa.array(np.asarray(types.codes, dtype=np.int32))
        type_arr = pa.DictionaryArray.from_arrays(codes, pa.array(types.names, type=pa.string()))
    else:
        type_arr = pa.array(listed(types), type=pa.string()).dictionary_encode()
    arrays = [pa.array(np.asarray(lids, dtype=np.int64)), pa.nulls(n, pa.binary()), type_arr, ts[0], ts[2], ids[0], ids[1], ids[2]]
    for c in cells:
        assert c is not None
        arrays += list(c)
    return pa.RecordBatch.from_arrays(arrays, schema=layout.pack_schema())


def packed_rows(rows: pa.RecordBatch, layout: Layout) -> pa.RecordBatch:
    """Event rows (:meth:`Layout.schema`) in a pack's columns (:meth:`Layout.pack_schema`)."""
    schema = layout.pack_schema()
    part = rows.select(schema.names)
    at = schema.get_field_index("t")
    return part.set_column(at, _PACK_TYPE, part.column(at).dictionary_encode())


def _typed_cells(col: Any, bad: set[int], ints_only: bool | None) -> tuple[pa.Array, pa.Array, pa.Array] | None:
    """``(numbers, texts, kinds)`` of one column as :func:`_kinds_of` gives them, as Arrow
    arrays: a numpy column of floats, ints or bools at once (None: one it does not take
    whole, such as ints beyond 2**53)."""
    n = len(col)
    if isinstance(col, np.ndarray):
        kind = col.dtype.kind
        if kind == "f" and ints_only is not True:
            return pa.array(col.astype(np.float64, copy=False)), pa.nulls(n, pa.string()), _const_kind(K_NUM, n)
        if kind in "iu" and n and (ints_only or (col.min() >= -EXACT and col.max() <= EXACT)):
            if ints_only and (kind == "u" and col.max() > 2**63 - 1):
                return None
            values = col.astype(np.int64 if ints_only else np.float64)
            return pa.array(values), pa.nulls(n, pa.string()), _const_kind(K_INT, n)
        if kind == "b" and ints_only is None:
            return pa.array(col.astype(np.float64)), pa.nulls(n, pa.string()), _const_kind(K_BOOL, n)
        if kind in "iufb":
            return None
    numbers, texts, kinds = _kinds_of(listed(col), bad, ints_only)
    number_type = pa.int64() if ints_only else pa.float64()
    return pa.array(numbers, type=number_type), pa.array(texts, type=pa.string()), pa.array(kinds, type=pa.int8())


def _absent(n: int) -> tuple[pa.Array, pa.Array, pa.Array]:
    """The cells of a field the batch has no column for (every event lacks it)."""
    return pa.nulls(n, pa.float64()), pa.nulls(n, pa.string()), _const_kind(K_NULL, n)


def _const_kind(kind: int, n: int) -> pa.Array:
    return pa.array(np.full(n, kind, dtype=np.int8))


def _field_of_events(f: str) -> Callable[[list[Event]], list[Any]]:
    return lambda es: [e.attrs.get(f) for e in es]


def _field_of_columns(f: str) -> Callable[[EventColumns], list[Any]]:
    return lambda c: listed(c.attrs[f]) if f in c.attrs else [None] * len(c)


def events_of(cols: EventColumns) -> list[Event]:
    """A batch's rows as events (what the reader builds when not asked for columns)."""
    names = list(cols.attrs)
    values = [listed(c) for c in cols.attrs.values()]
    attrs = map(dict, map(zip, repeat(names), zip(*values))) if names else ({} for _ in range(len(cols)))
    return list(map(Event, listed(cols.types), listed(cols.ts), listed(cols.pos), listed(cols.ids), attrs))


def take(cols: EventColumns, rows: list[int]) -> EventColumns:
    """The given rows of a batch (ascending)."""
    index = np.asarray(rows, dtype=np.int64)

    def pick(col: Any) -> Any:
        return col[index] if isinstance(col, np.ndarray) else [col[i] for i in rows]

    return EventColumns(
        pick(cols.types), pick(cols.ts), pick(cols.pos), pick(cols.ids), {a: pick(c) for a, c in cols.attrs.items()}
    )


def spans(breaks: np.ndarray) -> list[tuple[int, int]]:
    """``(first, end)`` of each run of rows, from ``breaks[i]``: row ``i + 1`` starts a new
    run (rows ``0..len(breaks)``)."""
    cuts = [0, *(np.flatnonzero(breaks) + 1).tolist(), len(breaks) + 1]
    return list(zip(cuts, cuts[1:]))


def listed(col: Any) -> list[Any]:
    """A column as a list of Python values (a numpy array's ``tolist``)."""
    if isinstance(col, list):
        return col
    return col.tolist() if hasattr(col, "tolist") else list(col)


_KIND = {float: K_NUM, int: K_INT, str: K_STR, bool: K_BOOL, type(None): K_NULL}


def _kinds_of(col: list[Any], bad: set[int], ints_only: bool | None = None) -> tuple[list[Any], list[Any], list[Any]]:
    """``(numbers, texts, kinds)`` of a column of values; rows holding a value the typed
    columns cannot hold exactly are added to ``bad``. ``ints_only``: an id column (ints as
    int64, text; nothing else), a time column (False: ints and floats), else any value."""
    n = len(col)
    seen = set(map(type, col))
    limit = 2**63 - 1 if ints_only else EXACT
    if seen == {float} and ints_only is not True:
        return col, [None] * n, [K_NUM] * n
    if seen == {int} and col and min(col) >= -limit and max(col) <= limit:
        return col, [None] * n, [K_INT] * n
    if seen == {str} and ints_only:
        return [None] * n, col, [K_STR] * n
    numbers: list[Any] = [None] * n
    texts: list[Any] = [None] * n
    kinds: list[Any] = [None] * n
    allowed = (K_INT, K_STR) if ints_only else (K_INT, K_NUM) if ints_only is False else None
    for j, v in enumerate(col):
        kind = _KIND.get(type(v))
        if kind is None or (allowed is not None and kind not in allowed) or (kind == K_INT and not -limit <= v <= limit):
            bad.add(j)
        elif kind == K_STR:
            texts[j] = v
        elif kind != K_NULL:
            numbers[j] = v if kind == K_INT and ints_only else float(v)
        kinds[j] = kind
    return numbers, texts, kinds


# ----------------------------------------------------------------------------- firing side


def columns(
    batch: pa.RecordBatch | pa.Table,
    a: int,
    b: int,
    positions: list[int] | np.ndarray,
    layout: Layout,
    g: int,
    id_is_pos: bool,
) -> EventColumns:
    """Rows ``a:b`` of a firing-stage batch or table (events of kernel group ``g``, typed
    or blobs) as the kernel's columns: numpy arrays where a column holds one kind of value."""
    part = batch.slice(a, b - a)
    names = layout.names_of(g)
    assert names is not None
    idx = layout.groups[g]
    assert idx is not None
    blobs = part.column("ev")
    if blobs.null_count < len(part):  # some events came as blobs: value by value
        return _mixed(part, listed(positions), names, idx, id_is_pos)
    type_col = _type_column(part.column("t"))
    ts = _typed_column(part.column("ts"), None, part.column("tk"))
    ids = positions if id_is_pos else _typed_column(part.column("idn"), part.column("ids"), part.column("idk"))
    attrs = {
        name: _typed_column(part.column(f"a{i}n"), part.column(f"a{i}s"), part.column(f"a{i}k"))
        for name, i in zip(names, idx)
    }
    return EventColumns(type_col, ts, positions, ids, attrs)


def _type_column(col: pa.Array | pa.ChunkedArray) -> TypeColumn:
    """A type column (text, or a pack's dictionary codes; chunks may have dictionaries of
    their own) as codes into one tuple of names."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    if not pa.types.is_dictionary(col.type):
        chunks = [c.dictionary_encode() for c in chunks]
    index: dict[str, int] = {}
    codes = []
    for chunk in chunks:
        remap = np.array([index.setdefault(name, len(index)) for name in chunk.dictionary.to_pylist()], dtype=np.int32)
        indices = chunk.indices.to_numpy(zero_copy_only=False)
        codes.append(remap[indices] if len(remap) else indices.astype(np.int32))
    joined = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int32)
    return TypeColumn(joined, tuple(index))


def _typed_column(num: pa.Array, text: pa.Array | None, kind: pa.Array) -> Any:
    """One column's values: a numpy array when they are of one kind (ints, floats, bools),
    else a list of Python values."""
    k = _kinds(kind)
    if len(k) and k.min() == k.max():  # (one kind: np.unique would hash every row)
        only = int(k[0])
        if only == K_NUM:
            return _numbers(num)
        if only == K_INT:
            return _numbers(num).astype(np.int64)
        if only == K_BOOL:
            return _numbers(num).astype(bool)
        if only == K_STR and text is not None:
            return text.to_pylist()
        if only == K_NULL:
            return [None] * len(k)
    return _values(num, text, k)


def _numbers(num: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numeric column as one numpy array: the chunks of a column without nulls (a table of
    packs) joined by one copy; Arrow's own conversion of a chunked column checks every value
    for a null (~4x the time: ~100 instructions per Aarhus event over its columns)."""
    if isinstance(num, pa.ChunkedArray) and num.num_chunks > 1 and not num.null_count:
        return np.concatenate([c.to_numpy() for c in num.chunks])
    return num.to_numpy(zero_copy_only=False)


def _values(num: pa.Array, text: pa.Array | None, k: np.ndarray) -> list[Any]:
    """Row by row (a column of mixed kinds)."""
    numbers = num.to_pylist()
    texts = text.to_pylist() if text is not None else [None] * len(k)
    out: list[Any] = []
    for n, s, kind in zip(numbers, texts, k.tolist()):
        if kind == K_INT:
            out.append(int(n))
        elif kind == K_NUM:
            out.append(n)
        elif kind == K_BOOL:
            out.append(bool(n))
        elif kind == K_STR:
            out.append(s)
        else:
            out.append(None)
    return out


def _mixed(
    part: pa.RecordBatch | pa.Table, positions: list[int], names: tuple[str, ...], idx: tuple[int, ...], id_is_pos: bool
) -> EventColumns:
    """Rows some of which are blobs: every column as Python values, row by row."""
    blobs = part.column("ev").to_pylist()
    at = [i for i, v in enumerate(blobs) if v is not None]
    decoded = decode_columns([blobs[i] for i in at], [positions[i] for i in at], id_is_pos, names)
    types = part.column("t").to_pylist()
    ts = _values(part.column("ts"), None, _kinds(part.column("tk")))
    ids = list(positions) if id_is_pos else _values(part.column("idn"), part.column("ids"), _kinds(part.column("idk")))
    attrs = {
        name: _values(part.column(f"a{i}n"), part.column(f"a{i}s"), _kinds(part.column(f"a{i}k")))
        for name, i in zip(names, idx)
    }
    for j, i in enumerate(at):
        types[i], ts[i], ids[i] = decoded.types[j], decoded.ts[j], decoded.ids[j]
        for name in names:
            col = decoded.attrs.get(name)
            attrs[name][i] = None if col is None else col[j]
    return EventColumns(types, ts, positions, ids, attrs)


def _kinds(kind: pa.Array) -> np.ndarray:
    """A kind column as numpy (a blob row's null: :data:`K_NULL`)."""
    return pc.fill_null(kind, K_NULL).to_numpy(zero_copy_only=False)


UNPACKED_ROWS = 262_144  # a kernel group's events per table out of Unpacked (at least, where there are more)


class Unpacked:
    """A kernel group's rows in a firing task, in order: event rows and packs (sorted by
    their first order key) become tables of its events in order key order. Packs of
    different key buckets that the shuffle sent to one task interleave (so do packs of a
    parse batch whose keys span separate runs of rows): every segment overlapping the
    previous ones' span is merged with them and sorted. Segments that follow one another
    are joined, without a copy (a table of their batches), until a table holds
    :data:`UNPACKED_ROWS` rows: the firing costs per call (the kernel's call, the clock's
    ticks, the match rows' columns) are paid once per quarter million events, not per
    pack (a bucket's pack of a parse batch holds 16K-64K Aarhus events)."""

    def __init__(self, layout: Layout, rows: int = UNPACKED_ROWS) -> None:
        self.layout = layout
        self.rows = rows  # rows a table out holds at least (where there are more)
        self._parts: list[pa.RecordBatch] = []
        self._rows = 0  # rows in _parts
        self._hi = -1
        self._sorted = True  # whether _parts follow one another (else they are merged)

    def feed(self, batch: pa.RecordBatch, a: int, b: int) -> Iterator[pa.Table]:
        """Rows ``a:b`` of a firing-stage batch (one group's, sorted by ``lid``); yields
        the tables of events known to come before every later row's."""
        kinds = batch.column("kind").to_numpy(zero_copy_only=False)[a:b]
        lids = batch.column("lid").to_numpy(zero_copy_only=False)[a:b]
        for i, j in spans(kinds[1:] != kinds[:-1]):
            if kinds[i] != PACK:
                rows = packed_rows(batch.slice(a + i, j - i), self.layout)
                yield from self._add(rows, int(lids[i]), int(lids[j - 1]))
                continue
            cells = batch.column("ev").slice(a + i, j - i)
            for r in range(j - i):
                part = pa.ipc.open_stream(cells[r].as_buffer()).read_next_batch()
                yield from self._add(part, int(lids[i + r]), int(part.column("lid")[-1].as_py()))

    def flush(self) -> Iterator[pa.Table]:
        """What is left (the group's rows end)."""
        if self._parts:
            parts, in_order = self._parts, self._sorted
            self._parts, self._hi, self._rows, self._sorted = [], -1, 0, True
            yield pa.Table.from_batches(parts if in_order else [_in_order(parts)])

    def _add(self, part: pa.RecordBatch, lo: int, hi: int) -> Iterator[pa.Table]:
        if lo > self._hi and self._rows >= self.rows:
            yield from self.flush()
        self._sorted = self._sorted and lo > self._hi
        self._parts.append(part)
        self._rows += part.num_rows
        self._hi = max(self._hi, hi)


def _in_order(parts: list[pa.RecordBatch]) -> pa.RecordBatch:
    """Record batches, each sorted by ``lid``, as one batch sorted by ``lid``. Where the
    sorted order is made of long runs of one batch's consecutive rows (a parse task's pack
    holds runs of consecutive lines: the input's chunks), the runs are sliced and copied
    once; else every row is gathered (``take``)."""
    merged = pa.Table.from_batches(parts)
    order = np.argsort(np.concatenate([p.column("lid").to_numpy() for p in parts]), kind="stable")
    cuts = np.flatnonzero(np.diff(order) != 1) + 1
    if len(cuts) * 64 > len(order):  # (short runs: a gather is cheaper than many slices)
        return merged.combine_chunks().to_batches()[0].take(pa.array(order))
    starts = order[np.concatenate(([0], cuts))].tolist()
    lengths = np.diff(np.concatenate(([0], cuts, [len(order)]))).tolist()
    runs = pa.concat_tables([merged.slice(a, n) for a, n in zip(starts, lengths)])
    return runs.combine_chunks().to_batches()[0]


def handed_over(events: Sequence[Event], g: int, layout: Layout) -> EventColumns:
    """Group ``g``'s ``events`` as the firing stage gets them (one batch through
    :class:`Rows` and :func:`columns`, or blobs decoded as columns): the distributed
    algorithm without Spark runs on exactly what a Spark task sees."""
    rows = Rows(layout)
    positions = [e.pos for e in events]
    if layout.groups[g] is None:
        return decode_columns([encode(e) for e in events], positions, False)
    for e in events:
        rows.add_event(0, g, "", e.pos, e)
    return columns(rows.batch(), 0, len(events), positions, layout, g, False)


__all__ = ["K_BOOL", "K_INT", "K_NULL", "K_NUM", "K_STR", "Layout", "Rows", "Unpacked", "bucket_of", "columns", "events_of", "handed_over", "listed", "packed_rows", "spans", "take"]
