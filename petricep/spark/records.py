"""What travels between the stages of a Spark run (pure Python: no pyspark here).

* an event: ``ev`` bytes (type, ts, id and attributes; ``marshal``, values it does not
  know -- date-times, decimals -- as tagged plain values: never pickle, since a streaming
  query keeps these bytes in its checkpoint, and unpickling runs code), its routing ``(g, k)`` and its order key ``lid`` (the position, or a
  stand-in that sorts the same way until the position is known);
* side rows of the parse stage: clock runs, row counts, errors;
* a match: its JSON Lines text (exactly what ``petricep run`` writes) and typed columns.
"""

from __future__ import annotations

import marshal
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from decimal import Decimal
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa

from petricep.compile.net import Net
from petricep.errors import ConfigError
from petricep.events import Event, EventColumns
from petricep.output.jsonl import JsonlBatches, match_json_parts
from petricep.output.table import batch_matches
from petricep.runtime.arrow import number_array
from petricep.runtime.engine import Match

# kinds of the parse stage's output rows
EVENT = 0
RUNS = 1  # clock runs (ts, first order key, last order key) of the events a task read
ERROR = 2  # the first bad row of a chunk
COUNTS = 3  # rows (lines) seen per input partition, and blank lines
FACTS = 4  # what a task saw of the values: the Python types of event ids, the time kinds
ARCHIVE = 5  # every event, once, for the event archive (runs with ARCHIVED patterns)
PACK = 6  # a kernel group's events of one key bucket, typed, as one Arrow record batch (shuffle.py)

LID_BITS = 33  # monotonically_increasing_id(): partition id << 33 | row within the partition
LID_MASK = (1 << LID_BITS) - 1

MATCHES_DDL = (
    "pattern string, ids string, start double, end double, attrs string, json string, "
    "emitted_at long, task int, seq long, error string"
)


def encode(e: Event, names: tuple[str, ...] | None = None) -> bytes:
    """``names``: the input's columns; attributes in exactly that order travel as a
    tuple of values (half the bytes of a dict)."""
    attrs = e.attrs
    if names is not None and tuple(attrs) == names:
        value: tuple[Any, ...] = (e.type, e.ts, e.id, tuple(attrs.values()))
        kind = b"V"
    else:
        value = (e.type, e.ts, e.id, attrs)
        kind = b"D"
    return _packed(kind, value)


def encode_fields(e: Event, fields: tuple[str, ...]) -> bytes:
    """:func:`encode` of ``e`` carrying only ``fields`` (those a group's net reads), as a
    tuple in that order when ``e`` has them all (decode with ``names=fields``)."""
    attrs = e.attrs
    try:
        value: tuple[Any, ...] = (e.type, e.ts, e.id, tuple([attrs[f] for f in fields]))
        kind = b"V"
    except KeyError:
        value = (e.type, e.ts, e.id, {f: attrs[f] for f in fields if f in attrs})
        kind = b"D"
    return _packed(kind, value)


def _packed(kind: bytes, value: tuple[Any, ...]) -> bytes:
    """``kind`` + ``marshal`` where the values allow, else lower-case ``kind`` + ``marshal``
    of the values tagged (:func:`_plain`)."""
    try:
        return kind + marshal.dumps(value)
    except ValueError:  # datetime, Decimal, ...: values marshal does not know
        return kind.lower() + marshal.dumps(_plain(value), _SAME_BYTES)


def _unpacked(data: bytes | memoryview) -> Any:
    body = data[1:]
    return marshal.loads(body) if data[0] in _MARSHAL else _value(marshal.loads(body))


def decode(data: bytes, pos: int, id_is_pos: bool, names: tuple[str, ...] | None = None) -> Event:
    kind = data[0]
    etype, ts, eid, attrs = _unpacked(memoryview(data))
    if kind in _VALUES:
        attrs = dict(zip(names, attrs))  # type: ignore[arg-type]
    return Event(etype, ts, pos, pos if id_is_pos else eid, attrs)


_PLAIN = frozenset({int, float, str, bytes, bool, type(None), complex})
_SAME_BYTES = 2  # marshal's format 2: no references to objects written before, so equal values give equal bytes


def dump_value(v: Any) -> bytes:
    """A value of the kinds an event holds (and sets, tuples), as bytes without pickle:
    the parse stage's side rows (:func:`load_value`)."""
    return marshal.dumps(_plain(v), _SAME_BYTES)


def load_value(data: bytes) -> Any:
    """:func:`dump_value` undone."""
    return _value(marshal.loads(data))


def _plain(v: Any) -> Any:
    """``v`` in values marshal writes: lists and dicts as such, every other value as a
    tagged tuple ``(tag, fields)`` (so a tuple is always a tag: a tuple value too).
    ConfigError for a value of another type (an input reader gives none)."""
    t = type(v)
    if t in _PLAIN:
        return v
    if t is list:
        return [_plain(x) for x in v]
    if t is dict:
        return {_plain(k): _plain(x) for k, x in v.items()}
    if t is tuple:
        return ("tuple", [_plain(x) for x in v])
    if t is set or t is frozenset:
        return (t.__name__, [_plain(x) for x in v])
    if t is datetime:
        fields = (v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond, v.fold)
        return ("datetime", (*fields, _zone(v.tzinfo, v)))
    if t is date:
        return ("date", v.toordinal())
    if t is time:
        return ("time", (v.hour, v.minute, v.second, v.microsecond, v.fold, _zone(v.tzinfo, v)))
    if t is timedelta:
        return ("timedelta", (v.days, v.seconds, v.microseconds))
    if t is Decimal:
        return ("decimal", str(v))
    if isinstance(v, np.generic) and v.dtype.kind in "biuf":
        return ("numpy", (v.dtype.str, v.item()))
    raise _unknown(v)


def _zone(tz: tzinfo | None, v: Any) -> Any:
    if tz is None:
        return None
    if type(tz) is timezone:
        off = tz.utcoffset(None)
        return ("offset", (off.days, off.seconds, off.microseconds))
    key = getattr(tz, "key", None)  # a zoneinfo.ZoneInfo
    if type(tz).__name__ == "ZoneInfo" and isinstance(key, str):
        return ("zone", key)
    raise _unknown(v)


def _unknown(v: Any) -> ConfigError:
    return ConfigError(
        f"an event value of type {type(v).__name__} ({v!r}) cannot travel between Spark stages "
        "(numbers, text, bytes, booleans, date-times with a fixed offset or a named zone, decimals, lists and dicts can)"
    )


def _value(v: Any) -> Any:
    """:func:`_plain` undone."""
    t = type(v)
    if t is list:
        return [_value(x) for x in v]
    if t is dict:
        return {_value(k): _value(x) for k, x in v.items()}
    if t is not tuple:
        return v
    tag, f = v
    if tag == "tuple":
        return tuple(_value(x) for x in f)
    if tag == "set" or tag == "frozenset":
        return (set if tag == "set" else frozenset)(_value(x) for x in f)
    if tag == "datetime":
        y, mo, d, h, mi, sec, us, fold, z = f
        return datetime(y, mo, d, h, mi, sec, us, tzinfo=_tz(z), fold=fold)
    if tag == "date":
        return date.fromordinal(f)
    if tag == "time":
        h, mi, sec, us, fold, z = f
        return time(h, mi, sec, us, tzinfo=_tz(z), fold=fold)
    if tag == "timedelta":
        return timedelta(*f)
    if tag == "decimal":
        return Decimal(f)
    if tag == "numpy":
        return np.dtype(f[0]).type(f[1])
    raise ConfigError(f"not an encoded event value (tag {tag!r})")


def _tz(z: Any) -> tzinfo | None:
    if z is None:
        return None
    if z[0] == "offset":
        return timezone(timedelta(*z[1]))
    from zoneinfo import ZoneInfo

    return ZoneInfo(z[1])


def decode_columns(
    blobs: list[bytes], positions: list[int], id_is_pos: bool, names: tuple[str, ...] | None = None
) -> EventColumns:
    """:func:`decode` of a batch of rows as columns (no :class:`Event` per row): the type,
    time, id and attribute values of each row, as its event would hold them. A field some
    rows lack is ``None`` there (what the kernel reads for a missing field)."""
    return columns_of(unpacked_rows(blobs), positions, id_is_pos, names)


def unpacked_rows(blobs: Iterable[bytes]) -> list[tuple[Any, Any, Any, Any]]:
    """Encoded events as their ``(type, ts, id, attributes)`` tuples (:func:`columns_of`)."""
    loads = marshal.loads
    return [loads(b[1:]) if b[0] in _MARSHAL else _unpacked(b) for b in blobs]


def columns_of(
    rows: Sequence[tuple[Any, Any, Any, Any]],
    positions: list[int],
    id_is_pos: bool,
    names: tuple[str, ...] | None = None,
) -> EventColumns:
    """:func:`unpacked_rows` as columns, the events at ``positions`` (see :func:`decode_columns`)."""
    if not rows:
        return EventColumns([], [], [], [], {})
    types, stamps, ids, values = zip(*rows)
    attrs: dict[str, Any]
    if names is not None and set(map(type, values)) == {tuple}:
        attrs = dict(zip(names, map(list, zip(*values)))) if names else {}
    else:
        dicts = [dict(zip(names, v)) if type(v) is tuple else v for v in values]  # type: ignore[arg-type]
        first = tuple(dicts[0])
        if all(tuple(d) == first for d in dicts):  # (one reader's events: the same fields in one order)
            attrs = dict(zip(first, map(list, zip(*[d.values() for d in dicts])))) if first else {}
        else:
            fields = dict.fromkeys(f for d in dicts for f in d)
            attrs = {f: [d.get(f) for d in dicts] for f in fields}
    return EventColumns(list(types), list(stamps), positions, positions if id_is_pos else list(ids), attrs)


EVENTS_TAG = b"P"  # the first byte of a pack of events (:func:`pack_events`): no event's encoding starts with it


def pack_events(rows: Sequence[tuple[Any, ...]]) -> bytes:
    """A streaming parse batch's rows of one (group, bucket) -- ``(g, b, pos, evtime, ev,
    first, ...)`` -- as one value: their positions, event times, encoded events and
    ``first`` flags (``marshal``: plain values only, never pickle)."""
    cols = ([r[2] for r in rows], [r[3] for r in rows], [r[4] for r in rows], [bool(r[5]) for r in rows])
    return EVENTS_TAG + marshal.dumps(cols, _SAME_BYTES)


def is_pack(data: bytes) -> bool:
    return data[:1] == EVENTS_TAG


def unpack_events(data: bytes) -> Iterator[tuple[int, int, bytes, bool]]:
    """:func:`pack_events` undone: ``(pos, evtime, ev, first)`` per event, in order."""
    pos, evtime, ev, first = marshal.loads(data[1:])
    return zip(pos, evtime, ev, first)


_MARSHAL = frozenset(b"VD")
_VALUES = frozenset(b"Vv")


@dataclass
class PosMap:
    """Order key -> the event's position over the whole input.

    ``identity``: the key is the position (a position column). Otherwise the key is a
    ``monotonically_increasing_id``: rows (lines) before it in earlier partitions, plus
    its row within its partition; for text files minus the header line and minus the
    blank lines before it (which are not rows)."""

    identity: bool = True
    offsets: dict[int, int] = field(default_factory=dict)  # partition -> rows (lines) before it
    header: int = 0
    blanks: list[int] = field(default_factory=list)  # physical line indexes, sorted

    def line(self, lid: int) -> int:
        """0-based physical line (row) index of an order key."""
        if self.identity:
            return lid
        return self.offsets[lid >> LID_BITS] + (lid & LID_MASK)

    def pos(self, lid: int) -> int:
        if self.identity:
            return lid
        line = self.offsets[lid >> LID_BITS] + (lid & LID_MASK)
        if not self.blanks:
            return line - self.header
        return line - self.header - bisect_left(self.blanks, line)

    def positions(self, lids: Any) -> list[int]:
        """:meth:`pos` of a numpy array of order keys."""
        return self.position_array(lids).tolist()  # type: ignore[no-any-return]

    def position_array(self, lids: np.ndarray) -> np.ndarray:
        """:meth:`positions` as an int64 array."""
        if self.identity:
            return lids.astype(np.int64, copy=False)
        pids = lids >> LID_BITS
        if len(pids) and pids.min() == pids.max():  # (one input partition: no mask per partition)
            out = lids + (self.offsets[int(pids[0])] - self.header - (int(pids[0]) << LID_BITS))
        else:
            base = np.zeros_like(lids)
            for pid in np.unique(pids).tolist():
                base[pids == pid] = self.offsets[pid] - self.header
            out = base + (lids & LID_MASK)
        if self.blanks:
            lines = out + self.header
            out = out - np.searchsorted(np.asarray(self.blanks, dtype=np.int64), lines, side="left")
        return out

    @classmethod
    def from_counts(cls, counts: dict[int, int], header: int, blank_lids: Sequence[int]) -> PosMap:
        offsets: dict[int, int] = {}
        total = 0
        for pid in sorted(counts):
            offsets[pid] = total
            total += counts[pid]
        m = cls(identity=False, offsets=offsets, header=header)
        m.blanks = sorted(m.line(lid) for lid in blank_lids)
        return m


@dataclass
class RowError:
    """The first bad row of a chunk of input, as the reader reported it."""

    lid: int  # order key of the row
    message: str
    field: str | None
    order: bool  # a timestamp going backwards
    located: bool = True  # the reader named a row (else: the whole input, e.g. a missing column)


def match_row(m: Match, emitted_at: int, task: int, seq: int) -> tuple[Any, ...]:
    """A match as a row of MATCHES_DDL."""
    line, ids, attrs = match_json_parts(m)
    return (m.pattern, ids, _num(m.start), _num(m.end), attrs, line, emitted_at, task, seq, None)


END = -1  # emission point of matches emitted at end of stream (flush): see KeyRunner.finish
# what a runner found in a batch of a group's events: (match, emission position) pairs, and the
# kernel's matches as record batches with an ``emitted_at`` column (KeyRunner.push_columns_found)
Found: TypeAlias = "tuple[Match, int] | pa.RecordBatch"

MATCH_SCHEMA = pa.schema(
    [
        ("pattern", pa.string()),
        ("ids", pa.string()),
        ("start", pa.float64()),
        ("end", pa.float64()),
        ("attrs", pa.string()),
        ("json", pa.string()),
        ("emitted_at", pa.int64()),
        ("task", pa.int32()),
        ("seq", pa.int64()),
        ("error", pa.string()),
    ]
)  # MATCHES_DDL as Arrow


class MatchRows:
    """A firing task's match rows (:data:`MATCH_SCHEMA`), numbered (``seq``) in the order
    found: (match, position) pairs one by one (:func:`match_row`), the kernel's record
    batches a column at a time (:meth:`JsonlBatches.parts <petricep.output.jsonl.JsonlBatches.parts>`),
    each row exactly what :func:`match_row` makes of its match. ``end``: the stream's last
    position (the emission point of matches found at its end, :data:`END`)."""

    def __init__(self, net: Net, task: int, end: int) -> None:
        self.net = net
        self.task = task
        self.end = end
        self.lines = JsonlBatches(net)
        self.rows: list[tuple[Any, ...]] = []  # match and error rows made one by one
        self.batches: list[pa.RecordBatch] = []  # match rows made a column at a time
        self.pending = 0  # rows in both
        self.seq = 0

    def add(self, found: Iterable[Found]) -> None:
        for item in found:
            if isinstance(item, pa.RecordBatch):
                if self.rows:  # (the rows made one by one before it stay before it)
                    self.batches.append(rows_batch(self.rows))
                    self.rows = []
                self._add_batch(item)
                continue
            m, at = item
            self.rows.append(match_row(m, self.end if at == END else at, self.task, self.seq))
            self.seq += 1
            self.pending += 1

    def add_error(self, pos: int, message: str) -> None:
        self.rows.append(error_row(pos, message, self.task))
        self.pending += 1

    def take(self) -> list[pa.RecordBatch]:
        """The rows made so far, as record batches, in the order found (as ``seq`` numbers
        them: a reader that does not sort by it still reads a task's matches in order)."""
        out, self.batches, self.pending = self.batches, [], 0
        if self.rows:
            out.append(rows_batch(self.rows))
            self.rows = []
        return out

    def _add_batch(self, batch: pa.RecordBatch) -> None:
        """A kernel record batch with its ``emitted_at`` column; match by match where its
        start and end are not numbers (a row's are doubles, ``float()`` of the match's)."""
        start, end = batch.column("start"), batch.column("end")
        at = batch.column("emitted_at").to_numpy()
        if not all(pa.types.is_integer(c.type) or pa.types.is_floating(c.type) for c in (start, end)):
            self.add(zip(batch_matches(batch, self.net), at.tolist()))
            return
        ids, attrs, line = self.lines.parts(batch)
        n = batch.num_rows
        cols = [
            batch.column("pattern").dictionary_decode(),
            ids,
            start.cast(pa.float64(), safe=False),  # (as float(): ints beyond 2**53 rounded)
            end.cast(pa.float64(), safe=False),
            attrs,
            line,
            number_array(np.where(at == END, self.end, at), pa.int64()),
            number_array(np.full(n, self.task, dtype=np.int32), pa.int32()),
            number_array(np.arange(self.seq, self.seq + n, dtype=np.int64), pa.int64()),
            pa.nulls(n, pa.string()),
        ]
        self.batches.append(pa.RecordBatch.from_arrays(cols, schema=MATCH_SCHEMA))
        self.seq += n
        self.pending += n


def rows_batch(rows: list[tuple[Any, ...]]) -> pa.RecordBatch:
    """Match and error rows (:func:`match_row`, :func:`error_row`) as one record batch."""
    cols = list(zip(*rows))
    return pa.RecordBatch.from_arrays(
        [pa.array(list(c), type=f.type) for c, f in zip(cols, MATCH_SCHEMA)], schema=MATCH_SCHEMA
    )


def error_row(pos: int, message: str, task: int) -> tuple[Any, ...]:
    return (None, None, None, None, None, None, pos, task, 0, message)


def _num(v: Any) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None
