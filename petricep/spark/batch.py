"""Batch runs on Spark: events in (a DataFrame or a file), matches out.

The pipeline:

1. *order*: every input row gets an order key (``monotonically_increasing_id`` — the
   row's partition and place in it — or a position column); inputs with fewer
   partitions than the run's parallelism (a ``.gz`` file is one) are spread in chunks of
   consecutive rows and sorted back within each partition;
2. *parse* (``mapInArrow``): rows -> events with petricep's own readers; each event is
   routed to its (group, key) — see :mod:`petricep.spark.plan` — and leaves as a row
   ``(g, k, lid, ...)``: for a group the compiled kernel fires, typed columns of the
   attributes it reads, routed by key bucket (one bucket per firing partition), a reader's
   checked batch as one *pack* per bucket (an Arrow record batch in one row); for the
   others the whole event as a blob, routed by key (see :mod:`petricep.spark.shuffle`);
   each task adds its clock runs, row counts and first bad row.
   The result is checkpointed (``localCheckpoint``): the driver reads the side rows,
   reports the first bad row or timestamp going backwards exactly as the embedded
   reader would, and builds the :class:`~petricep.spark.partition.StreamClock`;
3. *fire* (``mapInArrow``): events and packs repartitioned by (group, key or bucket) and
   sorted by (group, order key) within each partition, packs unpacked in order; each task runs a
   :class:`~petricep.spark.partition.KeyRunner` per group over its keys, advanced
   through the stream clock's points, its engine state carried across Arrow batches. A
   kernel group's rows of a batch are handed over as numpy columns and fired at once,
   the clock's points among them as tick rows (``push_columns``).

The net, the plan, the clock and the position map are broadcast.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from petricep.compile.net import Net
from petricep.errors import ConfigError, EvaluationError, EventError
from petricep.io.readers import InputSpec, infer_format
from petricep.io.timestamps import format_has_date
from petricep.runtime.engine import TIE_RULES, Engine

from .history import WRITTEN_DDL, ArchiveWriter, SparkHistory, TaskJoin
from .parse import ORDER, VALUE, ParseConfig, Parser, interpret, quiet_gc, trace
from .partition import KeyRunner, StreamClock, engine_report, group_choice, kernel_fields, key_runner
from .plan import Plan, Router, make_plan
from .records import ARCHIVE, EVENT, MATCHES_DDL, PACK, Found, MatchRows, PosMap, decode
from .session import configure, require_spark
from .shuffle import Layout, Unpacked, columns, spans, spark_partition
from .typed import typed

_LABELS: dict[tuple[int, tuple[int, ...]], dict[tuple[int, int], str]] = {}  # (partitions, groups) -> bucket labels

# an input file smaller than this (bytes) is parsed in one task and fired in one partition
# unless partitions are asked for: a second Python worker costs more (its start and imports,
# ~1-2 CPU seconds) than it saves, and every extra task of a stage a scheduling round
SMALL_INPUT = 4 << 20
CHUNK_BITS = 14  # rows per chunk when an input is spread over more partitions (16,384)
TASK_ERROR = "petricep-error: "  # prefix of a firing error raised inside a Spark task


@dataclass
class Parsed:
    """The parse stage's result: routed events (checkpointed) and the whole-stream facts."""

    events: Any  # DataFrame (g, k, lid, ev)
    clock: StreamClock
    posmap: PosMap
    id_is_pos: bool
    names: tuple[str, ...] | None
    text_ids: bool = False  # some event id is not an int (the typed ids are text then)
    timestamps: bool = False  # the input's times are date-times (typed start/end: timestamps)
    partitions: int = 0  # firing partitions the events are routed for (0: the run's)


class FiringError(EvaluationError):
    """A condition failed on an event during the firing stage (position and id known)."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


class Firing:
    """``mapInArrow`` function of the firing stage (picklable: broadcasts only)."""

    def __init__(
        self,
        net_bc: Any,
        plan_bc: Any,
        side_bc: Any,
        tie: str,
        id_is_pos: bool,
        names: tuple[str, ...] | None,
        raise_errors: bool,
        history: SparkHistory | None = None,
        layout: Layout | None = None,
    ) -> None:
        """``layout``: which groups' events come as typed columns (see :mod:`petricep.spark.shuffle`)."""
        self.names = names
        self.layout = layout or Layout()
        self.history = history
        self.net_bc = net_bc
        self.plan_bc = plan_bc
        self.side_bc = side_bc
        self.tie = tie
        self.id_is_pos = id_is_pos
        self.raise_errors = raise_errors

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        with quiet_gc(), trace("fire") as rows:
            for batch in self._fire(batches):
                rows[0] += batch.num_rows
                yield batch

    def _fire(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        task = _Task(self, ctx.partitionId() if ctx is not None else 0)
        for batch in batches:
            if batch.num_rows:
                task.push(batch)
            if task.out.pending >= 4096:
                yield from task.out.take()
        task.close()
        yield from task.out.take()


class _Task:
    """One firing task: the group its rows are in, that group's runner, the match rows."""

    def __init__(self, firing: Firing, task: int) -> None:
        self.firing = firing
        self.task = task
        self.net: Net = firing.net_bc.value
        self.plan: Plan = firing.plan_bc.value
        self.clock, self.posmap = firing.side_bc.value
        self.join = TaskJoin(firing.history) if firing.history is not None else None
        self.unpacked = Unpacked(firing.layout)
        self.out = MatchRows(self.net, task, self.clock.end())
        self.runner: KeyRunner | None = None
        self.current = -1
        self.failed = False

    def push(self, batch: pa.RecordBatch) -> None:
        """A batch of event rows and packs, sorted by group and order key."""
        gs = batch.column("g").to_numpy()
        positions: list[int] | None = None
        for a, b in spans(gs[1:] != gs[:-1]):
            g = int(gs[a])
            if g != self.current:
                self.close()
                self.current, self.failed = g, False
                join = self.join
                joined = join is not None and not join.names.isdisjoint(self.plan.groups[g].patterns)
                self.runner = key_runner(self.net, self.plan.groups[g], self.clock, self.firing.tie, bindings=joined)
            if self.firing.layout.names_of(g) is not None:
                self._typed(self.unpacked.feed(batch, a, b), g)
                continue
            if positions is None:
                positions = self.posmap.positions(batch.column("lid").to_numpy())
            self._guarded(self._blobs, batch, a, b, positions)

    def close(self) -> None:
        """The current group's rows end: its last events, then the end of its stream."""
        self._typed(self.unpacked.flush(), self.current)
        if self.runner is not None:
            self._guarded(self.runner.finish)

    def _typed(self, parts: Iterator[pa.RecordBatch], g: int) -> None:
        """A kernel group's events in order key order, as record batches, into its runner."""
        layout, id_is_pos = self.firing.layout, self.firing.id_is_pos
        for part in parts:
            if self.runner is not None:
                positions = self.posmap.position_array(part.column("lid").to_numpy())
                cols = columns(part, 0, part.num_rows, positions, layout, g, id_is_pos)
                self._guarded(self.runner.push_columns if self.join is not None else self.runner.push_columns_found, cols)

    def _guarded(self, fire: Any, *args: Any) -> None:
        """``fire(*args)``'s (match, position) pairs emitted; where a condition fails, the
        pairs found before the failing event (``err.pairs``) first, then the error, at the
        event that failed (``err.event``; none named, as the Python engine at the end of
        the stream: at the group's last event). A failed group fires nothing more."""
        runner = self.runner
        if self.failed or runner is None:
            return
        try:
            self._emit(fire(*args))
        except EvaluationError as err:
            self._emit(getattr(err, "pairs", []))
            failed_at = getattr(err, "event", None)
            if failed_at is not None:
                self._fail(err, failed_at.pos, failed_at.id)
            else:
                self._fail(err, runner.last_pos, None)

    def _emit(self, found: list[Found]) -> None:
        if self.join is not None:
            found = self.join(found)
        self.out.add(found)

    def _fail(self, err: EvaluationError, pos: int, eid: Any) -> None:
        where = f"event at position {pos}" + (f" (id {eid!r})" if eid is not None else "")
        message = f"{where}: {err}"
        if self.firing.raise_errors:
            raise RuntimeError(TASK_ERROR + message) from None
        self.out.add_error(pos, message)
        self.failed = True
        self.runner = None

    def _blobs(self, batch: pa.RecordBatch, a: int, b: int, positions: list[int]) -> list[tuple[Any, int]]:
        """Rows ``a:b`` of a batch (a Python-engine group's events, as blobs) into its
        runner, event by event. An evaluation error carries the pairs found before the
        failing event (``err.pairs``) and that event (``err.event``)."""
        runner = self.runner
        assert runner is not None
        firing = self.firing
        out: list[tuple[Any, int]] = []
        for pos, data in zip(positions[a:b], batch.column("ev").slice(a, b - a).to_pylist()):
            e = decode(data, pos, firing.id_is_pos, firing.names)
            try:
                out.extend(runner.push(e))
            except EvaluationError as err:
                err.pairs = out + getattr(err, "pairs", [])  # type: ignore[attr-defined]
                err.event = e  # type: ignore[attr-defined]
                raise
        return out


# ----------------------------------------------------------------------------- the run


class BatchRun:
    """One batch run: ``parse_dataframe``/``parse_file``, then ``fire``."""

    def __init__(
        self,
        spark: Any,
        net: Net,
        tie: str = "arrival",
        partitions: int | None = None,
        history: SparkHistory | None = None,
    ) -> None:
        """``history``: the archive side of a run with ARCHIVED patterns (``net``: their live
        parts; see :func:`petricep.spark.history.prepare`)."""
        require_spark()
        self.history = history
        if tie not in TIE_RULES:
            raise ConfigError(f"unknown tie rule {tie!r} (use {', '.join(TIE_RULES)})")
        Engine(net, tie=tie)  # the engine's own checks (tie rule vs strategies), on the driver
        configure(spark)
        self.spark = spark
        self.net = net
        self.tie = tie
        self.plan = make_plan(net)
        self.parallelism = int(spark.sparkContext.defaultParallelism)
        # firing tasks: one per core by default. A task's fixed cost (its shuffle read, the
        # JVM's first Arrow batch, a runner per group) was a third of Aarhus's firing stage
        # at four tasks per core (bench/HISTORY.md, thirteenth pass). More tasks balance
        # uneven keys better (a key stays in one task): ``partitions`` asks for them
        self.partitions = partitions or max(1, self.parallelism)
        self.asked = partitions
        self.warnings = list(self.plan.warnings)
        # per group, the attributes its events carry between the stages: those the kernel
        # reads where it covers the group (a group joined with the archive: every one)
        joined = history.names if history is not None else frozenset()
        self.layout = Layout.of(
            [None if not joined.isdisjoint(g.patterns) else kernel_fields(net, g, tie) for g in self.plan.groups]
        )
        # which engine fires each group (as this driver sees it: an executor without the
        # built kernel runs the Python engine), for the summary and --stats
        self.engine = engine_report(
            [(g, group_choice(net, g, tie, bindings=not joined.isdisjoint(g.patterns))) for g in self.plan.groups]
        )

    def bucket_labels(self, partitions: int | None = None) -> tuple[tuple[str, ...], ...]:
        """Per group, one routing label per firing partition (``partitions``, default the
        run's), each one hashed by the shuffle (``pmod(hash(g, k), partitions)``, see
        :func:`~petricep.spark.shuffle.spark_partition`) to its own partition: a kernel
        group's keys go in as many buckets, which fill the partitions evenly (a bucket per
        partition) however few they are. None for the groups whose events travel as blobs,
        key by key. A label no candidate reaches (unlikely) falls back to its number: packs
        of buckets that share a partition are merged there."""
        typed = tuple(g for g, idx in enumerate(self.layout.groups) if idx is not None)
        if not typed:
            return ()
        n = partitions or self.partitions
        first = _LABELS.get((n, typed))
        if first is None:
            first = {}
            for g in typed:
                for k in range(16 * n):
                    first.setdefault((g, spark_partition(g, str(k), n)), str(k))
            _LABELS[n, typed] = first
        return tuple(
            tuple(first.get((g, p), str(p)) for p in range(n)) if g in typed else () for g in range(len(self.layout.groups))
        )

    # -- inputs ----------------------------------------------------------------------

    def _spread(self, df: Any, n_parts: int, sort: bool) -> Any:
        """Enough partitions for the parse stage to use every core. A chunk of consecutive
        rows comes from one input partition, whose rows the shuffle keeps in order, so
        unless the order key is a position column no sort is needed (the parse stage
        treats each run of consecutive keys on its own)."""
        from pyspark.sql import functions as F

        if n_parts >= self.parallelism and not sort:
            return df
        # several tasks per core: chunks hash unevenly, small tasks even it out
        out = df.repartition(max(4 * self.parallelism, n_parts), F.shiftright(F.col(ORDER), CHUNK_BITS))
        return out.sortWithinPartitions(ORDER) if sort else out

    def parse_dataframe(self, df: Any, spec: InputSpec, pos_field: str | None = None) -> Parsed:
        """Events of a DataFrame whose columns are the events' fields (``spec`` names the
        type, time and id columns as for :func:`~petricep.io.readers.events_from_table`).

        Positions: ``pos_field``'s value, else the row's place in the DataFrame's
        partition order (what reading a file gives; give a position column after a
        shuffle)."""
        from pyspark.sql import functions as F

        spec = replace(spec, format=None, path=spec.path or "<dataframe>")
        if spec.on_error != "fail":
            raise ConfigError(
                "the Spark engine stops at the first bad row (on_error='fail'); skip is not supported"
            )
        if pos_field is not None:
            if pos_field not in df.columns:
                raise EventError(f"missing column {pos_field!r}", spec.path, None, pos_field)
            prepared = df.withColumn(ORDER, F.col(pos_field).cast("long"))
            prepared = self._spread(prepared, 0, sort=True)
        else:
            prepared = df.withColumn(ORDER, F.monotonically_increasing_id())
            prepared = self._spread(prepared, df.rdd.getNumPartitions(), sort=False)
        names = tuple(c for c in df.columns)
        return self._parse(prepared, ParseConfig(spec, identity=pos_field is not None, names=names), header=0)

    def parse_file(self, spec: InputSpec) -> Parsed:
        """Events of a CSV, JSON Lines or Parquet file read by Spark (any path Spark can
        read), values exactly as :func:`~petricep.io.readers.open_events` gives them."""
        from pyspark.sql import functions as F

        if spec.on_error != "fail":
            raise ConfigError(
                "the Spark engine stops at the first bad row (--on-error fail); skip is not supported"
            )
        fmt = spec.format or infer_format(spec.path)
        spec = replace(spec, format=fmt)
        small = self.asked is None and small_file(spec.path)
        if fmt == "parquet":
            df = self.spark.read.parquet(spec.path)
            prepared = df.withColumn(ORDER, F.monotonically_increasing_id())
            if not small:
                prepared = self._spread(prepared, df.rdd.getNumPartitions(), sort=False)
            names = tuple(df.columns)
            config = ParseConfig(replace(spec, format=None), names=names)
            return self._parse(prepared, config, header=0, partitions=1 if small else 0)
        scratch = None if small else self._splittable(spec.path)
        try:  # Spark splits a large file into as many parts as there are cores
            return self._parse_text(spec, fmt, scratch or spec.path, small)
        finally:
            if scratch is not None:
                shutil.rmtree(os.path.dirname(scratch), ignore_errors=True)

    def _splittable(self, path: str) -> str | None:
        """A compressed text file on a local master: decompressed to a scratch file, which
        Spark splits over the cores (a .gz file is one task however many cores there are).
        None when the file is read as it is."""
        comp = next((c for ext, c in _COMPRESSED.items() if path.lower().endswith(ext)), None)
        local = _local_path(path)
        if comp is None or local is None or not os.path.isfile(local):
            return None
        if not str(self.spark.sparkContext.master).startswith("local"):
            return None
        directory = tempfile.mkdtemp(prefix="petricep-")
        target = os.path.join(directory, os.path.basename(local).rsplit(".", 1)[0])
        try:
            with _OPEN[comp](local, "rb") as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 4 << 20)
        except OSError as e:
            shutil.rmtree(directory, ignore_errors=True)
            raise EventError(f"cannot read file: {e}", path) from None
        return target

    def _parse_text(self, spec: InputSpec, fmt: str, read_path: str, small: bool = False) -> Parsed:
        """``small``: one parse task, one firing partition (:data:`SMALL_INPUT`); a small
        local file is read and parsed here, on the driver (:func:`_driver_lines`)."""
        from pyspark.sql import functions as F

        local = _driver_lines(read_path) if small else None
        if local is not None:
            prepared = None
        else:
            lines = self.spark.read.option("lineSep", "\n").text(read_path)
            prepared = lines.select(
                F.col("value").cast("binary").alias(VALUE), F.monotonically_increasing_id().alias(ORDER)
            )
        header: bytes | None = None
        if fmt == "csv" and spec.columns is None:
            first = _first_line(read_path)
            if first is None:  # the first line of the first partition (a job)
                assert prepared is not None
                first = [bytes(r[0]) for r in prepared.select(VALUE).limit(1).collect()]
            if not first:
                raise EventError("empty file: no CSV header", spec.path, 1)
            header = first[0]
            if header.startswith(b"\xef\xbb\xbf"):
                header = header[3:]
            if header.endswith(b"\r"):
                header = header[:-1]
        columns: tuple[str, ...] | None = None
        if fmt == "csv":
            columns = (
                spec.columns
                if spec.columns is not None
                else csv_columns(header or b"", spec.delimiter or ",")
            )
        if not small:
            prepared = self._spread(prepared, lines.rdd.getNumPartitions(), sort=False)
        config = ParseConfig(spec, text=fmt, header=header, names=columns)
        return self._parse(prepared, config, header=1 if header is not None else 0, partitions=1 if small else 0, local=local)

    def _parse(
        self, prepared: Any, config: ParseConfig, header: int, partitions: int = 0, local: pa.RecordBatch | None = None
    ) -> Parsed:
        """``partitions``: the firing partitions to route for (0: the run's). ``local``: the
        input's lines as the parse stage's one task would read them, parsed here by the same
        :class:`Parser` and handed to Spark as a table (no parse job, no checkpoint: a small
        job's first Spark stage and its Python worker were ~3.5 of its ~10 s)."""
        from pyspark.sql import functions as F

        n = partitions or self.partitions
        config = replace(config, archive=self.history is not None, layout=self.layout, buckets=self.bucket_labels(n))
        parser = Parser(config, Router(self.plan))
        side: Any
        if local is not None:
            table = pa.Table.from_batches(list(parser(iter([local]))), schema=self.layout.schema())
            parsed = self.spark.createDataFrame(table)
            kinds = table.column("kind").to_pylist()
            evs = table.column("ev").to_pylist()
            side = [(k, ev) for k, ev in zip(kinds, evs) if k not in (EVENT, ARCHIVE, PACK)]
        else:
            parsed = prepared.mapInArrow(parser, self.layout.ddl()).localCheckpoint(eager=True)
            side = parsed.filter(~F.col("kind").isin(EVENT, ARCHIVE, PACK)).select("kind", "ev").collect()
        facts: dict[str, set[str]] = {}
        posmap, pos_runs, error = interpret(((kind, data) for kind, data in side), config, header, facts)
        if error is not None:
            parsed.unpersist()
            raise error
        clock = StreamClock.from_runs(pos_runs)
        if self.history is not None:
            self._archive(parsed, clock, posmap, config)
        events = parsed.filter(F.col("kind").isin(EVENT, PACK))  # (``k`` is dropped once partitioned)
        return Parsed(
            events,
            clock,
            posmap,
            id_is_pos=config.spec.id_field is None,
            names=config.names,
            text_ids=bool(facts.get("ids", set()) - {"int"}),
            timestamps="datetime" in facts.get("time", set()) and _dated(config.spec),
            partitions=n,
        )

    def _archive(self, parsed: Any, clock: StreamClock, posmap: PosMap, config: ParseConfig) -> None:
        """The archive stage: every event into the archive, before any live match is joined."""
        from pyspark.sql import functions as F

        assert self.history is not None
        side = self.spark.sparkContext.broadcast((clock, posmap))
        writer = ArchiveWriter(self.history, side, config.spec.id_field is None, config.names)
        rows = parsed.filter(F.col("kind") == ARCHIVE).select("lid", "ev")
        rows.mapInArrow(writer, WRITTEN_DDL).agg(F.sum("events")).collect()

    # -- firing ------------------------------------------------------------------------

    def fire(self, parsed: Parsed, raise_errors: bool = True) -> Any:
        """The matches (MATCHES_DDL rows; ``error`` set on a row for the first failing
        event of a task when ``raise_errors`` is false)."""
        sc = self.spark.sparkContext
        fire = Firing(
            sc.broadcast(self.net),
            sc.broadcast(self.plan),
            sc.broadcast((parsed.clock, parsed.posmap)),
            self.tie,
            parsed.id_is_pos,
            parsed.names,
            raise_errors,
            self.history,
            self.layout,
        )
        n = parsed.partitions or self.partitions
        # one partition: the events gathered without a shuffle (a stage and a job less)
        events = parsed.events.coalesce(1) if n == 1 else parsed.events.repartition(n, "g", "k")
        return (
            events.sortWithinPartitions("g", "lid")
            .drop("k")  # (the firing stage reads no key: it fires every key of its group in one runner)
            .mapInArrow(fire, MATCHES_DDL)
        )


_COMPRESSED = {".gz": "gzip", ".bz2": "bz2"}
# every suffix Spark's text reader decompresses: such a file is not read here as its lines
_CODEC_SUFFIXES = (*_COMPRESSED, ".zst", ".xz", ".deflate", ".lz4", ".snappy")


def _local_path(path: str) -> str | None:
    local = path[len("file://") :] if path.startswith("file://") else path
    return None if "://" in local else local


def small_file(path: str) -> bool:
    """Whether ``path`` is one local file below :data:`SMALL_INPUT` bytes (compressed: not
    small, its size says little)."""
    local = _local_path(path)
    if local is None or path.lower().endswith(tuple(_COMPRESSED)):
        return False
    try:
        return os.path.isfile(local) and os.path.getsize(local) < SMALL_INPUT
    except OSError:
        return False


def _first_line(path: str) -> list[bytes] | None:
    """A local uncompressed file's first line as Spark's text reader gives it (``[]``: an
    empty file), read here rather than by a Spark job; None: not such a file."""
    local = _local_path(path)
    if local is None or path.lower().endswith(_CODEC_SUFFIXES):
        return None
    try:
        if not os.path.isfile(local):
            return None
        with open(local, "rb") as fh:
            line = fh.readline()
    except OSError:
        return None
    if not line:
        return []
    return [line[:-1] if line.endswith(b"\n") else line]


def _driver_lines(path: str) -> pa.RecordBatch | None:
    """A small local uncompressed file's lines as the parse stage's one task reads them
    (Spark's text reader with ``lineSep`` ``\\n``: the bytes between newlines, none after a
    last newline; the positions ``monotonically_increasing_id`` gives one partition);
    None: not such a file (Spark reads it)."""
    local = _local_path(path)
    if local is None or path.lower().endswith(_CODEC_SUFFIXES):
        return None
    try:
        with open(local, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # after the last newline (or an empty file): no line
    return pa.record_batch(
        [pa.array(lines, pa.binary()), pa.array(range(len(lines)), pa.int64())], names=[VALUE, ORDER]
    )


_OPEN: dict[str, Any] = {"gzip": gzip.open, "bz2": bz2.open}


def csv_columns(header: bytes, delimiter: str) -> tuple[str, ...] | None:
    """A CSV header line's column names (None: not readable; the parse stage reports it)."""
    try:
        return tuple(next(csv.reader([header.decode("utf-8")], delimiter=delimiter), []))
    except (UnicodeDecodeError, csv.Error):
        return None  # the parse stage reports it


def _dated(spec: InputSpec) -> bool:
    """Whether date-time stamps of this input carry a date (a time of day alone stays a number)."""
    return spec.time_format is None or format_has_date(spec.time_format)


def public(matches: Any, net: Net, parsed: Parsed) -> Any:
    """The user's columns of a firing result, typed (:mod:`petricep.spark.typed`)."""
    return typed(matches, net, text_ids=parsed.text_ids, timestamps=parsed.timestamps)


def match_events(
    df: Any,
    net: Net,
    spec: InputSpec,
    tie: str = "arrival",
    pos_field: str | None = None,
    partitions: int | None = None,
) -> Any:
    """Matches of ``net`` over a Spark DataFrame of events (see :class:`BatchRun`).

    Returns a DataFrame ``pattern, ids, start, end, attrs, json, emitted_at``: ``ids`` a
    struct of the variables' event ids (``long``, Kleene variables ``array<long>``),
    ``attrs`` a struct of the RETURN fields with their types, ``start``/``end`` timestamps
    when the input's times are date-times (else numbers) -- see :mod:`petricep.spark.typed`;
    ``json`` the whole JSON Lines record ``petricep run`` writes, ``emitted_at`` the
    position of the input event at which the match came out. The events are parsed (one
    Spark job) when this is called; firing runs when the result is used."""
    run = BatchRun(df.sparkSession, net, tie, partitions)
    parsed = run.parse_dataframe(df, spec, pos_field)
    return public(run.fire(parsed), net, parsed)


def match_file(
    spark: Any, spec: InputSpec, net: Net, tie: str = "arrival", partitions: int | None = None
) -> Any:
    """Matches of ``net`` over a CSV, JSON Lines or Parquet file read by Spark (same
    result columns as :func:`match_events`)."""
    run = BatchRun(spark, net, tie, partitions)
    parsed = run.parse_file(spec)
    return public(run.fire(parsed), net, parsed)


def ordered_json(matches: Any, end: int | None = None, partitions: int = 0) -> Iterator[str]:
    """The JSON Lines records of a firing result in emission order (errors first raised).
    ``partitions``: the firing's (:attr:`Parsed.partitions`); one is sorted where it is,
    without a shuffle."""
    from pyspark.sql import functions as F

    one = matches.coalesce(1) if partitions == 1 else matches.repartition(1)
    df = one.sortWithinPartitions(F.col("error").isNull(), "emitted_at", "task", "seq")
    for row in df.select("json", "error", "emitted_at").toLocalIterator():
        if row.error is not None:
            raise FiringError(row.error, row.emitted_at)
        yield row.json


def task_message(exc: BaseException) -> str | None:
    """The petricep message inside a Spark task failure, if there is one."""
    text = str(exc)
    i = text.find(TASK_ERROR)
    if i < 0:
        return None
    return text[i + len(TASK_ERROR) :].splitlines()[0].strip()
