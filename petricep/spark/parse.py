"""The parse stage: Arrow batches of input rows -> routed events and side facts
(pure Python over pyarrow: Spark's ``mapInArrow`` calls :meth:`Parser.__call__`).

Rows become events through petricep's own readers, so a Spark run reads every value
exactly as ``petricep run`` does:

* typed tables (a Spark DataFrame, a Parquet file) go through
  :func:`~petricep.io.readers.events_from_table`, one Arrow batch at a time;
* text files (CSV, JSON Lines) arrive as raw lines; each run of consecutive lines is
  read (after the CSV header) from memory with
  :func:`~petricep.io.readers.events_from_text`, as :func:`~petricep.io.readers.open_events`
  reads a file of those lines — typing, quoting, timestamps, errors and all.

Every row is known by its order key ``lid`` (see :class:`~petricep.spark.records.PosMap`);
positions are only known once every task has counted its rows, so events carry the key
and the firing stage turns it into the position.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import astuple, dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petricep.errors import EventError, EventOrderError
from petricep.events import Event, EventColumns, TypeColumn, value_at
from petricep.io.checks import RowRules
from petricep.io.readers import InputSpec, events_from_table, events_from_text
from petricep.io.source import EventSource
from petricep.output.times import input_times
from petricep.runtime.prefilter import Prefilter

from .partition import Run, first_violation
from .plan import Router
from .records import (
    ARCHIVE,
    COUNTS,
    ERROR,
    EVENT,
    FACTS,
    LID_BITS,
    RUNS,
    PosMap,
    RowError,
    dump_value,
    encode,
    load_value,
)
from .shuffle import Layout, Rows, bucket_of, events_of, listed, spans, take

ORDER = "__petricep_lid"  # the order-key column the parse stage reads
VALUE = "value"  # the line column of text input
_BOM = b"\xef\xbb\xbf"
_SPACE_STARTS = pa.array([b"", b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c"], type=pa.binary())  # a line's first byte where it may be blank
_OUT_ROWS = 8192
_OUT_BYTES = 8 << 20  # (packs: a few rows of many bytes)

@dataclass(frozen=True)
class ParseConfig:
    """How rows become events. ``text``: None for typed tables, else ``"csv"``/``"jsonl"``;
    ``header``: the CSV header line (None: headerless or JSON Lines)."""

    spec: InputSpec
    text: str | None = None
    header: bytes | None = None
    identity: bool = False  # the order key is the position itself (a position column)
    names: tuple[str, ...] | None = None  # the input's columns (None: JSON Lines, keys vary)
    archive: bool = False  # also emit every event once as an ARCHIVE row (for the event archive)
    layout: Layout = Layout()  # which groups' events travel as typed columns (the kernel's), and which attributes
    # per group, the routing labels of its key buckets: its typed events travel by bucket, a
    # checked batch's as packs (none: by key, row by row); see BatchRun.bucket_labels
    buckets: tuple[tuple[str, ...], ...] = ()


def blank(line: bytes, text: str) -> bool:
    """Whether the readers skip a line without giving it a position."""
    if text == "csv":
        return line == b"" or line == b"\r"
    return not line.strip()


class Parser:
    """``mapInArrow`` function of the parse stage (picklable: config and router only)."""

    def __init__(self, config: ParseConfig, router: Router) -> None:
        self.config = config
        self.router = router
        self.facts: dict[str, set[str]] = {"ids": set(), "time": set()}  # per task: see FACTS
        self._buckets: dict[tuple[int, str], str] = {}  # (group, routing key) -> its bucket's label
        self._project = projection(config, router)

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        with quiet_gc(), trace("parse") as rows:
            for batch in self._parse(batches):
                rows[0] += batch.num_rows
                yield batch

    def _parse(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        out = Rows(self.config.layout)
        side = _Side()
        self.facts = {"ids": set(), "time": set()}
        id_types = self.facts["ids"] if self.config.spec.id_field is not None else None
        for batch in batches:
            if batch.num_rows == 0:
                continue
            lids = batch.column(ORDER).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
            if not self.config.identity:
                pids, n = np.unique(lids >> LID_BITS, return_counts=True)
                for pid, c in zip(pids.tolist(), n.tolist()):
                    side.counts[pid] = side.counts.get(pid, 0) + c
            if self.config.text is None:
                items, err = self._table(batch, lids)
            else:
                items, err = self._lines(batch, lids, side.blanks)
            if err is not None:
                side.errors.append(err)
            for lid, item in items:
                if isinstance(item, EventColumns):
                    if id_types is not None:
                        id_types.update(t.__name__ for t in set(map(type, listed(item.ids))))
                    self._columns(item, lid, out, side)
                else:
                    if id_types is not None:
                        id_types.add(type(item.id).__name__)
                    self._event(item, lid, out, side)
            if len(out) >= _OUT_ROWS or out.packed >= _OUT_BYTES:
                yield out.batch()
        side.close_run()
        if side.runs:
            out.add(RUNS, -1, "", side.runs[0][1], dump_value(side.runs))
        if side.counts or side.blanks:
            out.add(COUNTS, -1, "", 0, dump_value((side.counts, side.blanks)))
        for err in side.errors:
            out.add(ERROR, -1, "", err.lid, dump_value(astuple(err)))
        if any(self.facts.values()):
            out.add(FACTS, -1, "", 0, dump_value(self.facts))
        if len(out):
            yield out.batch()

    @property
    def _as_columns(self) -> bool:
        """Whether to ask the reader for column batches: where some group's events go out
        typed (else the reader's own events are what the rows are made of)."""
        return self.config.layout.typed and not self.config.archive

    def _event(self, e: Event, lid: int, out: Rows, side: _Side) -> None:
        """One event: into the clock runs, the archive, and its groups' rows."""
        side.extend(e.ts, lid, lid)
        names = self.config.names
        if self.config.archive:
            out.add(ARCHIVE, -1, "", lid, encode(e, names))
        router = self.router
        route = router.fast.get(e.type)
        if route is not None:  # one group, one key attribute: the common case, inlined
            try:
                key = router.cache[e.attrs[route[1]]]
            except (KeyError, TypeError):
                key = router.key(e, (route[1],))
            routes: list[tuple[int, str]] = [(route[0], key)]
        else:
            routes = router.route(e)
        typed = self.config.layout.groups
        data = None  # the whole event's blob, made once for the groups that need it
        buckets = self.config.buckets
        for g, key in routes:
            if typed and typed[g] is not None:
                out.add_event(EVENT, g, self._bucket(g, key) if buckets else key, lid, e)
                continue
            if data is None:
                data = encode(e, names)
            out.add(EVENT, g, key, lid, data)

    def _columns(self, cols: EventColumns, lids: np.ndarray, out: Rows, side: _Side) -> None:
        """A batch the reader checked whole, as columns: where every type in it that some
        group reads goes to one kernel group by one key attribute (the common case), those
        rows go out typed a column at a time, keyed per distinct value, and the others only
        count in the clock's runs; otherwise event by event."""
        router = self.router
        present = cols.types.distinct() if isinstance(cols.types, TypeColumn) else set(listed(cols.types))
        gone = set() if router.contiguous else {t for t in present if not router.routes.get(t)}  # read by no group
        read = present - gone
        routes = {router.fast.get(t) for t in read}
        route = next(iter(routes)) if len(routes) == 1 else None
        typed = self.config.layout.groups
        coded = None
        if route is not None and typed and typed[route[0]] is not None and not self.config.archive:
            rows = _kept_rows(cols.types, gone) if gone else None
            read_cols = take(cols, rows) if rows is not None else cols
            read_lids = lids[np.asarray(rows, dtype=np.intp)] if rows is not None else lids
            coded = self._key_codes(read_cols, route[1])
        if coded is None and (read or self.config.archive):
            for e, lid in zip(events_of(cols), lids.tolist()):
                self._event(e, lid, out, side)
            return
        side.extend_columns(cols.ts, lids)
        if coded is not None and route is not None:
            codes, keys = coded
            if self.config.buckets:
                codes, labels = _first_seen(*_recoded(codes, [self._bucket(route[0], k) for k in keys]))
                out.add_bucket_packs(EVENT, route[0], codes, labels, read_lids, read_cols)
            else:
                out.add_columns(EVENT, route[0], list(map(keys.__getitem__, codes.tolist())), read_lids.tolist(), read_cols)

    def _bucket(self, g: int, key: str) -> str:
        got = self._buckets.get((g, key))
        if got is None:
            got = self._buckets[g, key] = bucket_of(key, self.config.buckets[g])
        return got

    def _key_codes(self, cols: EventColumns, attr: str) -> tuple[np.ndarray, list[str]] | None:
        """Each row's routing key by its key attribute, as a code into the keys of the
        distinct values, each key made once (None: an unhashable value, which the engine
        reports event by event). A numpy column of numbers is coded by numpy (values numpy
        calls equal, such as ``0.0`` and ``-0.0``, or NaNs, have one routing key anyway:
        :func:`~petricep.spark.plan.key_text`), any other a value at a time."""
        column = cols.attrs.get(attr)
        if isinstance(column, np.ndarray) and column.dtype.kind in "iuf" and len(column):
            distinct, codes = np.unique(column, return_inverse=True)
            return codes.reshape(-1), [self._key_of(v, attr) for v in distinct.tolist()]
        values = listed(column) if column is not None else [_ABSENT] * len(cols)
        try:
            index = {v: i for i, v in enumerate(dict.fromkeys(values))}
        except TypeError:
            return None
        codes = np.fromiter(map(index.__getitem__, values), np.intp, len(values))
        return codes, [self._key_of(v, attr) for v in index]

    def _key_of(self, v: Any, attr: str) -> str:
        """The routing key of a value of the key attribute (as :meth:`Router.key` gives it)."""
        if v is _ABSENT:
            return self.router.key(Event("", 0, 0, None, {}), (attr,))
        try:
            return self.router.cache[v]
        except KeyError:
            return self.router.key(Event("", 0, 0, None, {attr: v}), (attr,))

    # -- typed tables --------------------------------------------------------------

    def _table(self, batch: pa.RecordBatch, lids: np.ndarray) -> tuple[list[Item], RowError | None]:
        spec = self.config.spec
        keep = [i for i, name in enumerate(batch.schema.names) if name != ORDER]
        table = pa.Table.from_batches([batch.select(keep)])
        out: list[Item] = []
        try:
            source = events_from_table(table, spec, sort_by_time=False)
            _read(source, lids, out, self._as_columns, self._project)
            if out:
                self.facts["time"].add(source.time_kind)
        except EventError as err:
            row = err.row if err.row is not None and 0 <= err.row < len(lids) else None
            return out, RowError(
                int(lids[row] if row is not None else lids[0]),
                err.message,
                err.field,
                isinstance(err, EventOrderError),
                row is not None,
            )
        return out, None

    # -- text files ------------------------------------------------------------------

    def _lines(self, batch: pa.RecordBatch, keys: np.ndarray, blanks: list[int]) -> tuple[list[Item], RowError | None]:
        values = batch.column(VALUE)
        # the batch's runs of consecutive order keys (consecutive lines), each read whole
        events: list[Item] = []
        for a, b in spans(keys[1:] != keys[:-1] + 1):
            got, err = self._run(values.slice(a, b - a), keys[a:b], blanks)
            events.extend(got)
            if err is not None:
                return events, err
        return events, None

    def _data(self, lines: pa.Array, lids: np.ndarray, blanks: list[int]) -> tuple[bytes, np.ndarray]:
        """A run's data lines, joined as the scratch file holds them, and their order keys:
        the file's first line loses its BOM (and, in a CSV file with a header, is the
        header); blank lines are left out (their keys go to ``blanks``). A column at a
        time: only lines that may be blank (by length, or by their first byte) are looked
        at one by one."""
        text = self.config.text
        assert text is not None
        first = b""
        if lids[0] == 0:  # the file's first line: BOM, and the CSV header
            line = lines[0].as_py()
            if line.startswith(_BOM):
                line = line[len(_BOM) :]
            if self.config.header is None and not blank(line, text):
                first = line
            elif self.config.header is None:
                blanks.append(0)
            lines, lids = lines.slice(1), lids[1:]
        if text == "csv":  # blank: "" or "\r"
            maybe = np.flatnonzero(pc.binary_length(lines).to_numpy(zero_copy_only=False) < 2)
        else:  # blank: whitespace only (bytes.strip's)
            starts = pc.is_in(pc.binary_slice(lines, 0, 1), value_set=_SPACE_STARTS)
            maybe = np.flatnonzero(starts.to_numpy(zero_copy_only=False))
        gone = [i for i, line in zip(maybe.tolist(), lines.take(pa.array(maybe)).to_pylist()) if blank(line, text)]
        if gone:
            blanks.extend(lids[gone].tolist())
            keep = np.ones(len(lids), dtype=bool)
            keep[gone] = False
            lines, lids = lines.filter(pa.array(keep)), lids[keep]
        body = b""
        if len(lines):
            offsets = pa.array([0, len(lines)], type=pa.int32())
            body = pc.binary_join(pa.ListArray.from_arrays(offsets, lines), b"\n")[0].as_py()
        if not first:
            return body, lids
        return (first + b"\n" + body if body else first), np.concatenate(([0], lids)).astype(np.int64)

    def _run(self, lines: pa.Array, lids: np.ndarray, blanks: list[int]) -> tuple[list[Item], RowError | None]:
        """A run of consecutive lines, read from memory by petricep's own reader as the
        file of those lines (after the CSV header) would be (no scratch file: writing and
        reading one back, on a reader thread, was most of the reading's time)."""
        config = self.config
        text = config.text
        assert text is not None
        header = config.header
        joined, data_lids = self._data(lines, lids, blanks)
        if not len(data_lids):
            return [], None
        data = (header + b"\n" + joined if header is not None else joined) + b"\n"
        spec = replace(config.spec, format=text, rejects_path=None, more_paths=())
        skip = 2 if header is not None else 1  # line number of the first data line
        out: list[Item] = []
        try:
            source = events_from_text(data, spec)
            _read(source, data_lids, out, self._as_columns, self._project)
            if out:
                self.facts["time"].add(source.time_kind)
        except EventError as err:
            row = err.row
            if row is not None and skip <= row < skip + len(data_lids):
                return out, RowError(int(data_lids[row - skip]), err.message, err.field, isinstance(err, EventOrderError))
            return out, RowError(int(data_lids[0]), err.message, err.field, isinstance(err, EventOrderError), False)
        if source.rows_read != len(data_lids):  # pragma: no cover - the blank-line rule drifted
            raise RuntimeError(
                f"petricep.spark: the reader read {source.rows_read} rows of {len(data_lids)} non-blank lines"
            )
        return out, None


def _kept_rows(types: Any, gone: set[str]) -> list[int]:
    """The rows of a batch whose type is not in ``gone``."""
    if isinstance(types, TypeColumn):
        drop = np.asarray([n in gone for n in types.names], dtype=bool)
        return np.flatnonzero(~drop[types.codes]).tolist()  # type: ignore[no-any-return]
    return [i for i, t in enumerate(listed(types)) if t not in gone]


def _recoded(codes: np.ndarray, names: list[str]) -> tuple[np.ndarray, list[str]]:
    """Codes into ``names`` (which may repeat) as codes into its distinct names."""
    index = {n: i for i, n in enumerate(dict.fromkeys(names))}
    to = np.fromiter(map(index.__getitem__, names), np.intp, len(names))
    return to[codes], list(index)


def _first_seen(codes: np.ndarray, names: list[str]) -> tuple[np.ndarray, list[str]]:
    """The same codes renumbered in the order the rows first name them (as a pass over the
    rows would meet them: the packs go out in that order)."""
    if not len(codes):
        return codes, []
    first = np.full(len(names), len(codes), dtype=np.intp)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.intp))
    seen = np.flatnonzero(first < len(codes))
    seen = seen[np.argsort(first[seen], kind="stable")]
    renumber = np.empty(len(names), dtype=np.intp)
    renumber[seen] = np.arange(len(seen), dtype=np.intp)
    return renumber[codes], [names[i] for i in seen.tolist()]


Item = tuple[Any, "Event | EventColumns"]  # (order key, event) or (order keys, a checked batch as columns)
_ABSENT = object()  # a key attribute the batch has no column for


def _read(source: EventSource, lid_of: np.ndarray, out: list[Item], as_columns: bool, project: Prefilter | None = None) -> None:
    """A reader's events and (``as_columns``) column batches, each with its order key(s)
    (``lid_of[pos]``); ``project``: a checked batch's columns are only those it names
    (:func:`projection`)."""
    source.row_filter = project
    for item in source.items(as_columns=as_columns, fields_only=project is not None):
        if isinstance(item, EventColumns):
            out.append((lid_of[np.asarray(item.pos, dtype=np.intp)], item))
        else:
            out.append((int(lid_of[item.pos]), item))


class _Projection(Prefilter):
    """A reader's row filter that keeps every row (the clock counts each one) and converts
    only the columns ``fields`` names (with the id), as the embedded kernel's reader does
    (:meth:`RowChecker.converted <petricep.io.checks.RowChecker.converted>`). Built from
    the parse stage's config, not from a net: nothing here is ever evaluated."""

    def __init__(self, fields: frozenset[str]) -> None:  # (no Prefilter.__init__: no net, no guards)
        self.active = False
        self.whole = False
        self.types = frozenset()
        self.guards = {}
        self.fields = fields
        self.rows_in = self.rows_kept = 0


def projection(config: ParseConfig, router: Router) -> Prefilter | None:
    """Where every group's events travel typed (the kernel's groups; no archive), the
    columns a checked batch needs: the typed attributes, the routing keys and the columns
    the spec's rules check (required, numeric), besides the type, time and id columns the
    reader reads anyway; the others are never typed (tens of milliseconds a batch for
    nothing). None: every column (some group gets whole events)."""
    layout = config.layout
    if config.archive or not layout.groups or any(idx is None for idx in layout.groups):
        return None
    keys = {a for routes in router.routes.values() for _g, attrs in routes for a in attrs}
    keys.update(a for _g, attrs, _types in router.contiguous for a in attrs)
    rules = RowRules(config.spec).columns(config.spec)
    return _Projection(frozenset((*layout.fields, *keys, *rules)))


class _Side:
    """What one parse task reports besides its rows: the clock runs of its events (a run:
    equal timestamps at consecutive order keys), rows per input partition, blank lines,
    the first bad row of each chunk."""

    def __init__(self) -> None:
        self.runs: list[tuple[Any, int, int]] = []
        self.run: list[Any] | None = None  # the current run [ts, first, last]
        self.counts: dict[int, int] = {}
        self.blanks: list[int] = []
        self.errors: list[RowError] = []

    def extend(self, ts: Any, first: int, last: int) -> None:
        """Order keys ``first..last`` (consecutive) at time ``ts`` join the runs."""
        run = self.run
        if run is not None and ts == run[0] and first == run[2] + 1:
            run[2] = last
            return
        self.close_run()
        self.run = [ts, first, last]

    def extend_columns(self, stamps: Any, lids: np.ndarray) -> None:
        """:meth:`extend` for a batch of rows (``stamps``: their time column), a run at a time."""
        if not len(lids):
            return
        times = np.asarray(stamps)
        for a, b in spans((times[1:] != times[:-1]) | (lids[1:] != lids[:-1] + 1)):
            self.extend(value_at(stamps, a), int(lids[a]), int(lids[b - 1]))

    def close_run(self) -> None:
        if self.run is not None:
            self.runs.append((self.run[0], self.run[1], self.run[2]))
            self.run = None


@contextmanager
def trace(stage: str) -> Iterator[list[int]]:
    """With ``PETRICEP_SPARK_TRACE=FILE`` in the environment (of the driver, before Spark
    starts: the workers inherit it), every task appends one JSON line to FILE — stage,
    partition, worker pid, start, end, rows out — to see how a run spreads over cores."""
    rows = [0]
    path = os.environ.get("PETRICEP_SPARK_TRACE")
    if not path:
        yield rows
        return
    start = time.time()
    cpu = time.process_time()
    try:
        yield rows
    finally:
        part = -1
        try:
            from pyspark import TaskContext

            ctx = TaskContext.get()
            part = ctx.partitionId() if ctx is not None else -1
        except ImportError:  # pragma: no cover
            pass
        record = {
            "stage": stage, "part": part, "pid": os.getpid(), "start": start, "end": time.time(),
            "cpu": time.process_time() - cpu, "rows": rows[0],
        }  # fmt: skip
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")


@contextmanager
def quiet_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: a task builds millions of small objects and
    keeps many alive (partial matches), so collections run over and over for nothing
    (events, tokens and matches hold no reference cycles)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def interpret(
    side: Iterable[tuple[int, bytes]], config: ParseConfig, header: int, facts: dict[str, set[str]] | None = None
) -> tuple[PosMap, list[Run], EventError | None]:
    """The driver's reading of the parse stage's side rows ``(kind, data)``: the position
    map, the clock runs in positions (sorted), and the error a sequential reader would
    have stopped at first — the first bad row, or the first timestamp before its
    predecessor's — as the :class:`EventError` it raises (file, row, field). ``facts``:
    filled with the union of the tasks' FACTS (id types, time kinds)."""
    counts: dict[int, int] = {}
    blank_lids: list[int] = []
    runs: list[Run] = []
    errors: list[RowError] = []
    for kind, data in side:
        value = load_value(data)
        if kind == COUNTS:
            c, b = value
            for pid, n in c.items():
                counts[pid] = counts.get(pid, 0) + n
            blank_lids.extend(b)
        elif kind == RUNS:
            runs.extend(value)
        elif kind == ERROR:
            errors.append(RowError(*value))
        elif kind == FACTS and facts is not None:
            for name, seen in value.items():
                facts.setdefault(name, set()).update(seen)
    posmap = PosMap() if config.identity else PosMap.from_counts(counts, header, blank_lids)
    label = config.spec.path
    text = config.text is not None

    def row_of(lid: int) -> int:
        return posmap.line(lid) + 1 if text else posmap.pos(lid)

    first: tuple[int, EventError] | None = None
    for err in errors:
        if not err.located:
            cand = (-1, EventError(err.message, label, 1 if text else None, err.field))
        else:
            cls = EventOrderError if err.order else EventError
            cand = (posmap.pos(err.lid), cls(err.message, label, row_of(err.lid), err.field))
        if first is None or cand[0] < first[0]:
            first = cand
    pos_runs = sorted(((ts, posmap.pos(a), posmap.pos(b)) for ts, a, b in runs), key=lambda r: r[1])
    merged = merge_runs(pos_runs)
    bad = first_violation(merged)
    if bad is not None and (first is None or bad.pos < first[0]):
        lid = next(
            (a + bad.pos - posmap.pos(a) for _ts, a, b in runs if posmap.pos(a) <= bad.pos <= posmap.pos(b)),
            None,
        )
        row = row_of(lid) if lid is not None else bad.pos
        dated = "datetime" in (facts or {}).get("time", set())  # (the times as the input wrote them)
        message = bad.message(input_times(config.spec) if dated else None)
        first = (bad.pos, EventOrderError(message, label, row, config.spec.time_field))
    return posmap, merged, first[1] if first is not None else None


def merge_runs(runs: list[Run]) -> list[Run]:
    """Runs sorted by position, adjacent ones with one timestamp joined."""
    out: list[list[Any]] = []
    for ts, a, b in runs:
        if out and out[-1][0] == ts and out[-1][2] + 1 == a:
            out[-1][2] = b
        else:
            out.append([ts, a, b])
    return [(r[0], r[1], r[2]) for r in out]


__all__ = ["ORDER", "VALUE", "ParseConfig", "Parser", "blank", "interpret", "merge_runs", "quiet_gc", "trace"]
