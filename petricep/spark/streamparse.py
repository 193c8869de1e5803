"""A streaming query's parse stage: input rows -> the stateful operator's rows (STREAM_DDL).

Per parse batch, one row per (group, bucket) of keys, its events packed in ``ev``, and
one *count row* (no event; ``reads``: the events of the batch) for the unrouted events'
key (see :mod:`petricep.spark.streaming`). A batch the reader checked whole
(:class:`~petricep.events.EventColumns`) is routed a column at a time -- one routing key
and one bucket per distinct key value, not per event -- and each (group, bucket)'s rows go
as one Arrow piece (:mod:`petricep.spark.evpack`), its events' ``first`` flags a column
of it; the events a reader gives one by one go as before, each encoded
(:func:`routed_rows`), packed per (group, bucket) by ``marshal`` (:func:`packed_rows`).
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa

from petricep.errors import EventError, PetricepError
from petricep.events import Event, EventColumns, TypeColumn
from petricep.io.readers import InputSpec, events_from_table, infer_format, open_events

from .batch import TASK_ERROR
from .evpack import ARROW_TAG, event_piece, event_time_ms, event_times, piece_bytes
from .keygroups import bucket_of
from .parse import quiet_gc
from .plan import MISSING_KEY, SINGLE, Router, key_text
from .records import encode, pack_events

UNROUTED = -1  # the group of events no pattern reads: counted (read or late), nothing else
_STREAM_SCHEMA = pa.schema(
    [
        ("g", pa.int32()),
        ("b", pa.int32()),
        ("pos", pa.int64()),
        ("evtime", pa.int64()),
        ("ev", pa.binary()),
        ("first", pa.bool_()),
        ("reads", pa.int64()),
    ]
)


@dataclass(frozen=True)
class StreamParse:
    """How the rows of a streaming input become routed events."""

    spec: InputSpec
    pos_field: str
    files: bool  # rows are whole files (binaryFile source), else typed rows
    buckets: int = 1  # per group (:mod:`petricep.spark.keygroups`)
    labels: tuple[tuple[int, ...], ...] = ()  # per group, each bucket's ``b`` (keygroups.bucket_labels; () its number)


class _Out:
    """A parse batch's rows so far: encoded events' rows, the pieces' rows, the count."""

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []  # routed_rows of events given one by one
        self.packs: list[tuple[Any, ...]] = []  # rows of pieces (routed_pieces)
        self.read = 0  # events in packs
        self.earliest: int | None = None  # their earliest event time

    def batch(self, labels: tuple[tuple[int, ...], ...] = ()) -> pa.RecordBatch | None:
        """The batch's rows, each bucket's ``b`` its label where ``labels``."""
        rows = self.rows
        if not rows and not self.packs:
            return None
        out = (packed_rows(rows) if rows else []) + self.packs
        count = count_row(rows) if rows else (UNROUTED, 0, -1, self.earliest, None, False, 0)
        if self.packs:
            assert self.earliest is not None
            et = self.earliest if count[3] is None else min(count[3], self.earliest)
            count = (*count[:3], et, None, False, count[6] + self.read)
        cols = list(zip(*(out + [count])))
        if labels:
            cols[1] = tuple(b if g < 0 else labels[g][b] for g, b in zip(cols[0], cols[1]))
        return pa.RecordBatch.from_arrays(
            [pa.array(list(c), type=f.type) for c, f in zip(cols, _STREAM_SCHEMA)], schema=_STREAM_SCHEMA
        )


class StreamParser:
    """``mapInArrow`` function: input rows -> (g, b, pos, evtime, ev, first, reads) rows."""

    def __init__(self, parse: StreamParse, router: Router) -> None:
        self.parse = parse
        self.router = router
        self._memo: _Memo = {}  # the buckets of key values seen (per worker: each unpickles its own)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        with quiet_gc():
            for batch in batches:
                out = _Out()
                if self.parse.files:
                    for path, content in zip(
                        batch.column("path").to_pylist(), batch.column("content").to_pylist()
                    ):
                        self._file(path, content, out)
                else:
                    self._rows(batch, out)
                got = out.batch(self.parse.labels)
                if got is not None:
                    yield got

    def _emit(self, items: Iterator[Event | EventColumns], label: str, out: _Out) -> None:
        for item in items:
            if isinstance(item, EventColumns):
                if self._columns(item, out):
                    continue
                item_events: Iterator[Event] = item.events()
            else:
                item_events = iter((item,))
            self._events(item_events, label, out)

    def _events(self, events: Iterator[Event], label: str, out: _Out) -> None:
        pf = self.parse.pos_field
        id_is_pos = self.parse.spec.id_field is None
        for e in events:
            pos = e.attrs.get(pf)
            if not isinstance(pos, int) or isinstance(pos, bool):
                raise RuntimeError(
                    TASK_ERROR
                    + str(
                        EventError(f"the position field must hold an integer, got {pos!r}", label, e.pos, pf)
                    )
                )
            e.pos = pos  # (the reader's event, ours now: no copy per row)
            if id_is_pos:
                e.id = pos
            out.rows += routed_rows(self.router, e, self.parse.buckets)

    def _columns(self, cols: EventColumns, out: _Out) -> bool:
        """A checked batch routed a column at a time, one piece per (group, bucket); False
        where its positions are not all integers (then event by event, which says where)."""
        pos = _positions(cols.attrs.get(self.parse.pos_field))
        if pos is None or not len(pos):
            return not len(cols)
        if self.parse.spec.id_field is None:
            cols = EventColumns(cols.types, cols.ts, cols.pos, pos, cols.attrs)
        rows, least = column_rows(self.router, cols, pos, self.parse.buckets, self._memo)
        out.packs += rows
        out.read += len(cols)
        out.earliest = least if out.earliest is None else min(out.earliest, least)
        return True

    def _file(self, path: str, content: bytes, out: _Out) -> None:
        label = path[5:] if path.startswith("file:") else path
        name = os.path.basename(label)
        spec = self.parse.spec
        try:
            fmt = spec.format or infer_format(name)
        except PetricepError as err:
            raise RuntimeError(TASK_ERROR + f"{label}: {err}") from None
        fd, tmp = tempfile.mkstemp(prefix="petricep-", suffix="-" + name)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(content)
            source = open_events(replace(spec, path=tmp, format=fmt, rejects_path=None))
            try:
                self._emit(source.items(as_columns=True), label, out)
            except EventError as err:
                raise RuntimeError(
                    TASK_ERROR + str(EventError(err.message, label, err.row, err.field))
                ) from None
        finally:
            os.unlink(tmp)

    def _rows(self, batch: pa.RecordBatch, out: _Out) -> None:
        spec = self.parse.spec
        try:
            source = events_from_table(pa.Table.from_batches([batch]), spec, sort_by_time=False)
            self._emit(source.items(as_columns=True), spec.path, out)
        except EventError as err:
            raise RuntimeError(TASK_ERROR + str(err)) from None


def column_rows(
    router: Router, cols: EventColumns, pos: np.ndarray, buckets: int, memo: _Memo | None = None
) -> tuple[list[tuple[Any, ...]], int]:
    """A checked batch's rows for the stateful operator (STREAM_DDL), its events at
    positions ``pos``: one Arrow piece per (group, bucket) (``first`` a column of it; the
    row's ``pos`` its first event's, ``evtime`` its latest), and the batch's earliest
    event time (the count row's)."""
    evtime = event_times(cols.ts)
    piece = event_piece(cols, pos, evtime)
    out = []
    for g, b, rows, first in routed_columns(router, cols, buckets, memo):
        part = piece.take(pa.array(rows)).append_column("first", pa.array(first, pa.bool_()))
        out.append((g, b, int(pos[rows[0]]), int(evtime[rows].max()), ARROW_TAG + piece_bytes(part), False, 0))
    return out, int(evtime.min())


def _positions(col: Any) -> np.ndarray | None:
    """A position column as int64 (None: absent, or some value is not an integer)."""
    if col is None:
        return None
    if isinstance(col, np.ndarray):
        return col.astype(np.int64) if col.dtype.kind == "i" else None
    values = list(col)
    if any(type(v) is not int for v in values) or (values and not -(2**63) <= min(values) <= max(values) < 2**63):
        return None
    return np.asarray(values, dtype=np.int64)


def routed_rows(router: Router, e: Event, buckets: int = 1) -> list[tuple[Any, ...]]:
    """An event's rows for the stateful operator (STREAM_DDL): one per (group, key) it is
    routed to, in the key's bucket of ``buckets``, or one for the unrouted events' bucket
    (0), which counts it late or not; ``first`` marks the row a late event is counted on."""
    routes = router.route(e)
    data, et = encode(e), event_time_ms(e.ts)
    if not routes:
        return [(UNROUTED, 0, e.pos, et, data, True, 0)]
    return [(g, _bucket(key, buckets), e.pos, et, data, i == 0, 0) for i, (g, key) in enumerate(routes)]


_bucket = functools.lru_cache(maxsize=1 << 16)(bucket_of)  # (a key's crc32 once per worker, not per event)


def routed_columns(
    router: Router, cols: EventColumns, buckets: int, memo: _Memo | None = None
) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
    """:func:`routed_rows` of a checked batch, a column at a time: per (group, bucket) its
    rows (ascending) and their ``first`` flags (the event's first route, or the unrouted
    bucket's row). A batch holds every attribute on every row, so a key is missing for
    all of a type's rows or for none."""
    memo = {} if memo is None else memo
    types = cols.types
    if isinstance(types, TypeColumn):
        codes, names = np.asarray(types.codes), list(types.names)
    else:
        index: dict[str, int] = {}
        codes = np.fromiter((index.setdefault(t, len(index)) for t in types), np.int64, len(cols))
        names = list(index)
    counted = np.zeros(len(cols), dtype=bool)
    parts: dict[tuple[int, int], list[tuple[np.ndarray, np.ndarray]]] = {}
    for code, t in enumerate(names):
        rows = np.flatnonzero(codes == code)
        if not len(rows):
            continue
        specs = [(g, attrs, False) for g, attrs in router.routes.get(t, ())]
        specs += [(g, attrs, True) for g, attrs, types_ in router.contiguous if t not in types_]
        for g, attrs, contiguous in specs:
            b = _row_buckets(router, cols, attrs, rows, buckets, memo)
            if b is None:
                if contiguous:
                    continue
                b = np.full(len(rows), _bucket(MISSING_KEY, buckets), dtype=np.int64)
            first = ~counted[rows]
            counted[rows] = True
            order = np.argsort(b, kind="stable")
            sb = b[order]
            cuts = [0, *(np.flatnonzero(sb[1:] != sb[:-1]) + 1).tolist(), len(sb)]
            for lo, hi in zip(cuts, cuts[1:]):
                sel = order[lo:hi]
                parts.setdefault((g, int(sb[lo])), []).append((rows[sel], first[sel]))
    unrouted = np.flatnonzero(~counted)
    if len(unrouted):
        parts.setdefault((UNROUTED, 0), []).append((unrouted, np.ones(len(unrouted), dtype=bool)))
    out = []
    for (g, bucket), got in parts.items():
        at = np.concatenate([r for r, _ in got])
        flags = np.concatenate([f for _, f in got])
        by = np.argsort(at, kind="stable")
        out.append((g, bucket, at[by], flags[by]))
    return out


def _row_buckets(
    router: Router, cols: EventColumns, attrs: tuple[str, ...], rows: np.ndarray, buckets: int, memo: _Memo
) -> np.ndarray | None:
    """The bucket of each of ``rows`` by its routing key on ``attrs`` (:meth:`Router.key`),
    one key per distinct value (``memo``: the buckets of the values seen before, per
    attributes and number of buckets); None where the batch lacks an attribute (every
    row's key is :data:`~petricep.spark.plan.MISSING_KEY`)."""
    if not attrs:
        return np.full(len(rows), _bucket(SINGLE, buckets), dtype=np.int64)
    if any(a not in cols.attrs for a in attrs):
        return None
    picked = [_taken(cols.attrs[a], rows) for a in attrs]
    values: list[Any] = picked[0] if len(attrs) == 1 else list(zip(*picked))

    def key(v: Any) -> str:
        row = {attrs[0]: v} if len(attrs) == 1 else dict(zip(attrs, v))
        e = Event("", 0, 0, None, row)
        return router.key(e, attrs) if len(attrs) == 1 else key_text(e, attrs)

    seen = memo.setdefault((attrs, buckets), {})
    if len(seen) > 1_000_000:
        seen.clear()
    try:
        for v in dict.fromkeys(values).keys() - seen.keys() if seen else dict.fromkeys(values):
            seen[v] = _bucket(key(v), buckets)
    except TypeError:  # an unhashable value: row by row (its engine reports it)
        return np.fromiter((_bucket(key(v), buckets) for v in values), np.int64, len(values))
    return np.fromiter(map(seen.__getitem__, values), np.int64, len(values))


_Memo = dict[tuple[tuple[str, ...], int], dict[Any, int]]  # (attributes, buckets) -> value -> bucket


def _taken(col: Any, rows: np.ndarray) -> list[Any]:
    if isinstance(col, np.ndarray):
        return col[rows].tolist()  # type: ignore[no-any-return]
    return [col[i] for i in rows.tolist()]


def packed_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """A parse batch's event rows (:func:`routed_rows`) as one row per (group, bucket): its
    events packed in ``ev`` (:func:`~petricep.spark.records.pack_events`), in their order;
    ``pos`` the first one's, ``evtime`` the latest (what moves the watermark: its maximum
    over the rows is the events'). pyspark hands a stateful handler its rows one pandas
    row at a time (``itertuples``, a frame of them per key): a row per event cost ~0.1 ms,
    more than the engine's work on it; a pack is one row however many events it holds."""
    by: dict[tuple[int, int], list[tuple[Any, ...]]] = {}
    for r in rows:
        by.setdefault((r[0], r[1]), []).append(r)
    return [(g, b, rs[0][2], max(r[3] for r in rs), pack_events(rs), False, 0) for (g, b), rs in by.items()]


def count_row(rows: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    """The count row of a parse batch's event ``rows`` (:func:`routed_rows`): no event, the
    number of events read in ``reads``, for the unrouted events' key. Its event time is
    the batch's earliest, so that it never moves the watermark (the latest)."""
    firsts = [r for r in rows if r[5]]
    return (UNROUTED, 0, -1, min(r[3] for r in firsts), None, False, len(firsts))
