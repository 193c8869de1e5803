"""An append-only event archive: a Parquet dataset partitioned by time, read by key and range.

Layout (readable by Spark or pyarrow as one table, ``spark.read.parquet(path)``)::

    path/bucket=<n>/part-<first seq>.parquet     n = floor(ts / bucket_seconds)

Each row is one event: ``__run`` (the writing session: one per :class:`Archive` opened),
``__pos`` (the event's position in that run's stream), ``__type``, ``__ts``, ``__id`` (as JSON
text: ids of different inputs may differ in kind) and the event's attributes as columns. The
archive's stream order is ``(ts, run, pos)``: history first, then each run's stream. Appends are buffered and written a
batch at a time (paper 004's recent buffer); reads see the buffer too, so a look-up never
misses an event because it has not been written yet.

A look-up reads only the buckets that overlap the time range and filters by type, key
attributes and range inside the Parquet scan (row-group statistics skip the rest).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from petricep.errors import ConfigError
from petricep.events import Event

META = "_petricep_archive.json"
RESERVED = ("__run", "__pos", "__type", "__ts", "__id")
Order = tuple[Any, int, int]  # (ts, run, pos): the archive's stream order


class Archive:
    """Events archived under ``path`` (created if missing)."""

    def __init__(self, path: str | os.PathLike[str], bucket_seconds: float = 86400.0, batch: int = 50_000) -> None:
        self.path = Path(path)
        self.batch = batch
        meta = self.path / META
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            if meta.exists():
                info = json.loads(meta.read_text())
                self.bucket_seconds = float(info["bucket_seconds"])
                self.run = int(info["runs"])
            else:
                self.bucket_seconds = float(bucket_seconds)
                self.run = 0
        except (OSError, ValueError, KeyError) as e:
            raise ConfigError(f"cannot use {self.path} as an event archive: {e}") from None
        self._buffer: list[Event] = []
        self._opened = False  # this run is recorded in the metadata once it appends
        self._schemas: dict[str, pa.Schema] = {}
        self.reads = 0  # look-ups served (for benchmarks and tests)
        self.rows_read = 0

    # ------------------------------------------------------------------ writing

    def begin_run(self) -> int:
        """Record this run in the archive's metadata (once) and return its number: the
        ``__run`` of every event it appends. A Spark run calls it on the driver, then its
        tasks write with :func:`write_events` under that number."""
        if not self._opened:
            self._opened = True
            self._write_meta(self.run + 1)
        return self.run

    def append(self, e: Event) -> None:
        """Archive one processed event (its ``pos`` is its position in this run's stream)."""
        self.begin_run()
        self._buffer.append(e)
        if len(self._buffer) >= self.batch:
            self.flush()

    def extend(self, events: Iterable[Event]) -> None:
        for e in events:
            self.append(e)

    def flush(self) -> None:
        """Write the buffered events (one file per time bucket they touch)."""
        if not self._buffer:
            return
        write_events(self.path, self.run, self.bucket_seconds, self._buffer)
        self._buffer = []

    def _write_meta(self, runs: int) -> None:
        tmp = self.path / (META + ".tmp")
        tmp.write_text(json.dumps({"bucket_seconds": self.bucket_seconds, "runs": runs}))
        tmp.replace(self.path / META)

    def _bucket(self, ts: Any) -> int:
        return math.floor(float(ts) / self.bucket_seconds)

    # ------------------------------------------------------------------ reading

    def read(
        self,
        types: Sequence[str],
        t0: float,
        t1: float,
        key: dict[str, Any] | None = None,
    ) -> list[tuple[Order, Event]]:
        """Events of ``types`` with ``t0 <= ts <= t1`` and the given key attribute values, as
        ``((ts, run, pos), event)`` in archive order."""
        self.reads += 1
        out: list[tuple[Order, Event]] = []
        files = self._files(t0, t1)
        if files:
            # pyarrow.dataset imports pandas: loaded only by runs that read the archive, so
            # that an embedded run starts without it
            import pyarrow.dataset as ds

            dataset = ds.dataset(files, schema=self._schema(files), format="parquet")
            names = set(dataset.schema.names)
            cond = pc.field("__ts") >= t0
            cond &= pc.field("__ts") <= t1
            cond &= pc.field("__type").isin(list(types))
            for a, v in (key or {}).items():
                if a not in names:
                    return self._from_buffer(types, t0, t1, key)
                cond &= pc.field(a) == v
            table = dataset.to_table(filter=cond)
            self.rows_read += table.num_rows
            out = _events(table)
        out += self._from_buffer(types, t0, t1, key)
        out.sort(key=lambda x: x[0])
        return out

    def _from_buffer(
        self, types: Sequence[str], t0: float, t1: float, key: dict[str, Any] | None
    ) -> list[tuple[Order, Event]]:
        want = set(types)
        items = (key or {}).items()
        return [
            ((e.ts, self.run, e.pos), e)
            for e in self._buffer
            if e.type in want and t0 <= e.ts <= t1 and all(e.attrs.get(a) == v for a, v in items)
        ]

    def _schema(self, files: list[str]) -> pa.Schema:
        """The union of the files' columns (batches may differ: attributes absent from one)."""
        import pyarrow.parquet as pq  # loaded only by runs with an archive (start-up, issue 16)

        for f in files:
            if f not in self._schemas:
                self._schemas[f] = pq.read_schema(f)
        return pa.unify_schemas([self._schemas[f] for f in files], promote_options="permissive")

    def _files(self, t0: float, t1: float) -> list[str]:
        lo = self._bucket(t0) if math.isfinite(t0) else -math.inf
        hi = self._bucket(t1) if math.isfinite(t1) else math.inf
        files: list[str] = []
        for d in sorted(self.path.glob("bucket=*")):
            try:
                b = int(d.name.split("=", 1)[1])
            except ValueError:
                continue
            if lo <= b <= hi:
                files += sorted(str(f) for f in d.glob("*.parquet"))
        return files

    def count(self) -> int:
        """Events in the archive (written and buffered)."""
        import pyarrow.parquet as pq  # loaded only by runs with an archive (start-up, issue 16)

        files = [str(f) for f in self.path.glob("bucket=*/*.parquet")]
        written = sum(pq.read_metadata(f).num_rows for f in files)
        return written + len(self._buffer)


def write_events(path: str | os.PathLike[str], run: int, bucket_seconds: float, events: Sequence[Event]) -> int:
    """Write ``events`` (in position order) into the archive at ``path`` as run ``run``: one
    file per time bucket they touch, named by the run and the bucket's first position (so
    writers of disjoint events never collide). Returns the number of files written."""
    import pyarrow.parquet as pq  # loaded only by runs with an archive (start-up, issue 16)

    by_bucket: dict[int, list[Event]] = {}
    for e in events:
        by_bucket.setdefault(math.floor(float(e.ts) / bucket_seconds), []).append(e)
    for bucket, rows in by_bucket.items():
        d = Path(path) / f"bucket={bucket}"
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(_table(rows, run), d / f"part-{run:06d}-{rows[0].pos:012d}.parquet")
    return len(by_bucket)


def _table(rows: list[Event], run: int) -> pa.Table:
    columns: dict[str, list[Any]] = {"__run": [], "__pos": [], "__type": [], "__ts": [], "__id": []}
    attrs: dict[str, list[Any]] = {}
    for i, e in enumerate(rows):
        columns["__run"].append(run)
        columns["__pos"].append(e.pos)
        columns["__type"].append(e.type)
        columns["__ts"].append(float(e.ts))
        columns["__id"].append(json.dumps(e.id))
        for a, v in e.attrs.items():
            if a in RESERVED:
                continue
            col = attrs.get(a)
            if col is None:
                col = attrs[a] = [None] * i
            col.append(v)
        for col in attrs.values():
            if len(col) < i + 1:
                col.append(None)
    data = {**columns, **{a: _column(v) for a, v in attrs.items()}}
    return pa.table(data)


def _column(values: list[Any]) -> pa.Array:
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed kinds: keep them as JSON text
        return pa.array([None if v is None else json.dumps(v) for v in values], pa.string())


def _events(table: pa.Table) -> list[tuple[Order, Event]]:
    cols = {n: table.column(n).to_pylist() for n in table.column_names if n != "bucket"}
    runs, poss = cols.pop("__run"), cols.pop("__pos")
    types, tss, ids = cols.pop("__type"), cols.pop("__ts"), cols.pop("__id")
    out = []
    for i in range(table.num_rows):
        attrs = {a: v[i] for a, v in cols.items() if v[i] is not None}
        ts = tss[i]
        if isinstance(ts, float) and ts.is_integer():
            ts = int(ts)
        out.append(((ts, runs[i], poss[i]), Event(types[i], ts, poss[i], json.loads(ids[i]), attrs)))
    return out


__all__ = ["Archive", "Order", "write_events"]

