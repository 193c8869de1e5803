"""Structured Streaming: a stream of events in, a stream of matches out.

Events are routed to their (group, key) as in a batch run, each key to one of the
group's *buckets* (:mod:`petricep.spark.keygroups`), then
``groupBy(g, b).transformWithStateInPandas`` keeps, per bucket of keys, one engine's run
state and the events not yet released, in the RocksDB state store; the query's
checkpoint makes a restarted query resume where it stopped. A micro-batch costs a Python
call and a few state round trips per bucket, not per key. A bucket's runner is the batch
run's (:class:`~petricep.spark.partition.KeyRunner`) over the chooser's matcher: the
compiled kernel where it covers the group's net, else the Python engine; its state the
matcher's own Arrow IPC snapshot (see :mod:`petricep.spark.keystate`).

Time
----
Events may arrive out of order (within the watermark). A bucket's events are buffered
until the watermark passes them — one event-time timer per bucket fires then — and are
pushed into its engine in (ts, pos) order. Timestamps map to Spark event time as
milliseconds (``event_time_ms``: date-times are epoch seconds; plain numbers are read as
seconds too; they must not be negative), the watermark delay is given in the same units.

The watermark never cuts a group of equal timestamps: with the delay 0 it equals the
event time of the latest event seen, and only events strictly before it are released,
so the rest of a group split across files (or across a restart) still joins it. An
event that arrives behind the watermark — strictly before it: before something already
released — is *late*: counted once and output as a ``late`` row (the line ``run --late``
writes), never dropped silently. Spark's own late-row filter (rows at or before the
previous micro-batch's watermark, dropped uncounted) never sees the event-time column.
The output also counts the events read (``read`` rows), so a caller can account for
every event: read = processed + late. The parse stage counts them: each of its batches
ends with one *count row* (no event; ``reads``: the events of the batch) for the key of
the unrouted events, whose processor outputs the sum (:mod:`petricep.spark.streamparse`;
the events themselves travel as Arrow columns, :mod:`petricep.spark.evpack`) -- one output row per micro-batch
and parse task, not one per key (each output frame costs ~4 ms to convert to Arrow:
half of a micro-batch's time with hundreds of keys, bench/HISTORY.md).

After pushing, a keyed group's engine is advanced to the watermark (``advance``), which
emits the matches waiting on an end negation whose window the watermark has passed; the
bucket's timer, at the earliest window end of its released events, brings a quiet bucket
back for that. The
composite events such a match returns would enter the stream at a point a key
partition cannot know in streaming (the first event of *any* key past the window), so a
group where that matters — an end-negation pattern whose RETURN another pattern of the
group reads, a count window with an end negation, or a consumption policy — runs in one
partition fed with every event (:func:`streaming_plan`), without the watermark advance:
there the next event closes the window, exactly as in the whole stream.

Positions: streaming needs each event's arrival position in a column (``pos_field``:
an integer that grows with arrival over the whole stream, e.g. a sequence number) —
a stream has no row numbers a reader could count. An engine sees the events it is given
in stream order, numbered as ``run --slack`` numbers the events it re-orders
(:func:`renumber`): an event released after one that arrived later (its file went back in
time) gets a position after that one's.

End of input
------------
A stream has no end, so matches waiting for a window to close stay in the state. For a
bounded input (``trigger(availableNow=True)``), :func:`flush_stream` reads the final
state from the checkpoint and emits what the end of the input releases — after it, the
union of the query's output equals a batch run over the same events.
"""

from __future__ import annotations

import io
import itertools
import math
import os
from collections.abc import Iterator
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa

from petricep.compile.net import Net
from petricep.errors import ConfigError, EvaluationError, EventError
from petricep.events import Event
from petricep.io.readers import InputSpec
from petricep.io.timestamps import format_has_date
from petricep.output.jsonl import LateWriter
from petricep.runtime.engine import TIE_RULES, Engine

from .arrivals import LOG_DIR, local_path, source_class
from .arrivals import NAME as ARRIVALS
from .arrivals import supported as arrivals_supported
from .batch import TASK_ERROR
from .evpack import Pieces, Stored, event_time_ms, piece_events
from .keygroups import (
    STATE_FIELDS,
    STATE_NAME,
    BucketState,
    bucket_labels,
    checkpoint_buckets,
    checkpoint_layout,
    default_buckets,
    new_token,
)
from .keystate import CLOCK, EngineCache, engine_choices, kernel_groups
from .lineage import Change, Lineage, bind
from .migrate import LineageCache, LineageEngine
from .parse import quiet_gc
from .partition import KeyRunner, engine_report
from .plan import Group, Plan, Router, make_plan
from .records import MATCHES_DDL, MatchRows, match_row, rows_batch
from .release import failed_at, fire, input_pieces, match_frame, renumber, wake_times, with_flags, with_origin
from .session import configure, require_spark
from .streamparse import UNROUTED, StreamParse, StreamParser, count_row, packed_rows, routed_rows
from .typed import typed

__all__ = ["UNROUTED", "StreamParse", "StreamParser", "count_row", "event_time_ms", "packed_rows", "routed_rows"]

# the stateful operator's input: per parse batch one row per (group, bucket), its events packed in
# ``ev`` (packed_rows), and one count row; a row of one event (``ev`` an encoded event) reads the same
STREAM_DDL = "g int, b int, pos long, evtime long, ev binary, first boolean, reads long"
# the query's output: matches, late events and counts of the events read (one per parse task)
OUTPUT_DDL = MATCHES_DDL + ", kind string, n long"
MATCH, LATE, READ = "match", "late", "read"
POS_COLUMN = "__petricep_pos"  # the position a Column computes (events_from_dataframe)
BINARY_FILE_DDL = "path string, modificationTime timestamp, length long, content binary"
_SOURCES = itertools.count()  # each query's file source its own name: it holds the query's parser


def streaming_plan(plan: Plan, reorders: bool = False) -> tuple[Plan, list[str]]:
    """The plan with every clock-sensitive group moved to one partition, fed with every
    event (see the module docstring); where the stream ``reorders`` (a watermark delay),
    every group with a count window too: an event's position in the re-ordered stream (what
    ``WITHIN n EVENTS`` counts, as ``run --slack`` numbers it) is known only there."""
    groups = []
    notes = []
    for g in plan.groups:
        names = ", ".join(repr(p) for p in g.patterns)
        if g.clock_sensitive:
            if g.keyed:
                notes.append(
                    f"warning: {names} run in one partition when streaming: "
                    "an end negation's emission point matters to them (composite events, count windows or "
                    "consumption), and only the whole stream knows it"
                )
            g = replace(g, attrs=(), all_types=True, reason=g.reason or "clock-sensitive")
        elif reorders and g.count_windows and not (g.all_types and not g.keyed):
            notes.append(
                f"warning: {names} run in one partition when streaming with a watermark: a count "
                "window counts the events of the whole re-ordered stream, and only that partition sees them"
            )
            g = replace(g, attrs=(), all_types=True, reason=g.reason or "count window, re-ordered stream")
        groups.append(g)
    return Plan(plan.net, tuple(groups), plan.warnings), notes


def whole_stream(group: Group) -> bool:
    """Whether the group's one engine sees every event of the stream (see :func:`renumber`)."""
    return group.all_types and not group.keyed


def clock_ts(watermark_ms: int) -> Any:
    """The largest timestamp every released event is at or before: events with
    ``event_time_ms(ts) < watermark`` have been released, later ones are still to come,
    and none of those is before this timestamp."""
    ms = watermark_ms - 1
    if ms % 1000 == 0:
        return ms // 1000
    x = ms / 1000
    if Fraction(x) > Fraction(ms, 1000):
        x = math.nextafter(x, -math.inf)
    return x


# ----------------------------------------------------------------------------- state


OUTPUT_COLUMNS = [c.split()[0] for c in OUTPUT_DDL.split(", ")]
_NO_MATCH = (None,) * len(MATCHES_DDL.split(", "))


def late_row(e: Event, watermark_ms: int) -> tuple[Any, ...]:
    """An event behind the watermark as an output row: ``json`` is the line ``run --late``
    writes for it (``watermark``: the timestamp every event before which was released)."""
    buf = io.StringIO()
    LateWriter(buf).write(e, clock_ts(watermark_ms))
    row: list[Any] = list(_NO_MATCH)
    row[OUTPUT_COLUMNS.index("json")] = buf.getvalue().rstrip("\n")
    row[OUTPUT_COLUMNS.index("emitted_at")] = e.pos
    return (*row, LATE, 1)


def read_row(n: int) -> tuple[Any, ...]:
    """A count of events read (on time or late) by one key in one micro-batch."""
    return (*_NO_MATCH, READ, n)


class EngineProcessor:
    """The stateful processor (built lazily as a pyspark ``StatefulProcessor``).

    Late events: Spark's own filter would drop, silently, every row at or before the
    previous micro-batch's watermark — and with a zero delay that is the timestamp of the
    last event seen, so a file boundary inside a group of equal timestamps lost the rest
    of the group after a restart. The query hides the event-time column from Spark (see
    :meth:`StreamRun.output`) and this processor decides instead: an event is late when its
    event time is before the current watermark (every key has released, or will release in
    this micro-batch, everything before it); a late event is counted once (on its first
    route) and comes out as a ``late`` row."""

    def __init__(
        self, net: Net, plan: Plan, tie: str, kernel: frozenset[int] = frozenset(), lineage: Lineage | None = None
    ) -> None:
        self.net = net
        self.plan = plan
        self.tie = tie
        self.kernel = kernel  # the groups whose keys run on the compiled kernel (keystate)
        # the checkpoint's pattern history where its patterns changed (spark/lineage.py)
        self.lineage = None if lineage is None or lineage.trivial else lineage

    # pyspark calls these through the subclass made by processor()
    def init(self, handle: Any) -> None:
        from pyspark.sql.types import BinaryType, LongType, StructField, StructType

        kinds = {"long": LongType(), "binary": BinaryType()}
        self.engines: EngineCache | LineageCache = (
            EngineCache.of(self.net, self.plan, self.tie, self.kernel)
            if self.lineage is None
            else LineageCache.of(self.lineage, self.plan, self.tie)
        )
        self.handle = handle
        # one state variable: each costs a registration per task and a round trip per call
        self.state = handle.getValueState(STATE_NAME, StructType([StructField(n, kinds[t], True) for n, t in STATE_FIELDS]))

    def _load(self) -> BucketState:
        """The bucket's state, its engine snapshot included (restored by :meth:`_engine` only
        where no live engine here has it). Each state call is a round trip to the JVM's state
        server (~0.4 ms quiet, ~20 ms on a loaded machine): one ``get`` here, and one write
        (:meth:`_save`) only where something changed."""
        got = self.state.get()
        return BucketState.of_row(None if got is None else tuple(got))

    def _save(self, st: BucketState) -> None:
        timer = st.next_timer()
        if timer != st.timer:
            if st.timer is not None:
                self.handle.deleteTimer(st.timer)
            if timer is not None:
                self.handle.registerTimer(timer)
            st.timer = timer
        if not st.empty():
            self.state.update(st.row())
        elif st.stored:
            self.state.clear()

    def _engine(self, st: BucketState, key: tuple[int, int]) -> KeyRunner | LineageEngine:
        """The bucket's engine: the live one where it is the one stored, else from the store."""
        engine = self.engines.live_engine(key, st.token)
        if engine is not None:
            return engine
        stored = st.engine if st.token is not None else None
        if isinstance(self.engines, LineageCache):  # a bucket without engine: its events came before the change
            return self.engines.build(key[0], stored, old=True)
        return self.engines.build(key[0], stored)

    def _stored(self, st: BucketState, key: tuple[int, int], engine: KeyRunner | LineageEngine) -> None:
        """A new snapshot of the bucket's engine into its state (written by :meth:`_save`)."""
        st.token = new_token()
        st.engine = engine.snapshot()
        self.engines.put(key, st.token, engine)  # type: ignore[arg-type]

    def _bear(self, st: BucketState, key: tuple[int, int], waiting: Pieces) -> None:
        """The bucket receives its first events since generations were added: they start at
        the first of them (every event before it was read before the restart); a bucket the
        store has no state of starts every generation."""
        assert isinstance(self.engines, LineageCache)
        engine: KeyRunner | LineageEngine
        if st.token is None and not st.stored:
            engine = self.engines.build(key[0], None)
        else:
            engine = self._engine(st, key)
            assert isinstance(engine, LineageEngine)
            if not engine.bear(waiting.first_pos()) and st.token is not None:
                self.engines.put(key, st.token, engine)  # nothing was unborn: it stays as stored
                return
        self._stored(st, key, engine)

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:
        import pandas as pd

        wm = timerValues.getCurrentWatermarkInMs()
        unrouted = int(key[0]) == UNROUTED
        waiting = Pieces()
        out: list[tuple[Any, ...]] = []
        pieces, read = input_pieces(rows)
        for entry in pieces:
            if isinstance(entry, Stored) and entry.lo >= wm:  # (none late: kept as it came)
                if not unrouted:
                    waiting.add(entry)
                continue
            piece, first = with_flags(entry)
            late = piece.column("evtime").to_numpy() < wm
            if late.any():
                counted = np.flatnonzero(late & first)
                if len(counted):  # (counted once: on the event's first route)
                    out += [late_row(e, wm) for e in piece_events(piece.take(pa.array(counted)))]
                piece = piece.filter(pa.array(~late))
            if not unrouted:
                waiting.add(piece)
        released: Any = None
        if waiting:
            st = self._load()
            bucket = (int(key[0]), int(key[1]))
            if self.lineage is not None:
                self._bear(st, bucket, waiting)
            if st.timer is not None and st.timer <= wm:
                # its timer fires in this micro-batch: release here (what the timer would: none
                # of the events just come is before the watermark), one read and write fewer
                self.handle.deleteTimer(st.timer)
                st.timer = None
                released = self._expired(st, bucket, wm)
            for piece in waiting.entries:
                st.buffer.add(piece)
            self._save(st)
        if released is not None:
            yield released
        if read:
            out.append(read_row(read))
        if out:
            yield pd.DataFrame(out, columns=OUTPUT_COLUMNS)

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[Any]:
        wm = timerValues.getCurrentWatermarkInMs()
        st = self._load()
        st.timer = expiredTimerInfo.getExpiryTimeInMs() if st.timer is None else st.timer
        # the expired timer is gone: forget it so _save registers the next one
        if st.timer <= wm:
            st.timer = None
        released = self._expired(st, (int(key[0]), int(key[1])), wm)
        self._save(st)
        if released is not None:
            yield released

    def _expired(self, st: BucketState, key: tuple[int, int], wm: int) -> Any:
        """What the bucket's timer releases (its state then saved by the caller): the match
        frame, None where no match."""
        group = self.plan.groups[key[0]]
        if not group.patterns:  # a retired state index (spark/lineage.py): its patterns are gone
            st.buffer, st.wakeups, st.token, st.engine = Pieces(), [], None, None
            return None
        with quiet_gc():
            batches = self._release(st, group, wm, key)
        return match_frame(batches, MATCH, OUTPUT_COLUMNS) if batches else None

    def _release(self, st: BucketState, group: Group, wm: int, key: tuple[int, int]) -> list[pa.RecordBatch]:
        """Push the bucket's events the watermark passed, advance its engine to the
        watermark; the match rows, as record batches (:mod:`petricep.spark.release`). The
        engine's snapshot is stored where it took events or gave matches (an advance that
        closed nothing changes no later match: the stored engine, advanced later, gives
        what this one gives)."""
        ready = st.buffer.split(wm)
        st.wakeups = [w for w in st.wakeups if w > wm]
        if not ready and group.clock_sensitive:
            return []
        engine = self._engine(st, key)
        advancing = not group.clock_sensitive
        found, stamps, origin = fire(engine, ready, whole_stream(group))
        try:
            if advancing:  # at the last position pushed: a tick never goes back (the kernel
                # remembers events by position, in order: a tick at -1 confused a restored one)
                found += [(m, CLOCK) for m in engine.advance(clock_ts(wm), engine.last_pos)]
        except EvaluationError as err:
            raise RuntimeError(TASK_ERROR + f"event at position {failed_at(err, origin)}: {err}") from None
        # advance again once the watermark passes a window's end, and (ties) a timestamp's group
        wake = wake_times(stamps, group.time_windows if group.waits else (), self.tie != "arrival") if advancing else None
        out = MatchRows(self.net, group.index, CLOCK)  # (CLOCK: what no event emitted)
        out.add(with_origin(found, origin))
        rows = out.take()
        if wake is not None and len(wake):
            merged = np.union1d(np.asarray(st.wakeups, dtype=np.int64), wake)
            st.wakeups = merged[merged > wm].tolist()
        if ready or found or st.token is None:
            self._stored(st, key, engine)
        else:
            assert st.token is not None
            self.engines.put(key, st.token, engine)  # type: ignore[arg-type]
        return rows

    def close(self) -> None:
        pass


def processor(
    net: Net, plan: Plan, tie: str, kernel: frozenset[int] = frozenset(), lineage: Lineage | None = None
) -> Any:
    """An instance of a ``StatefulProcessor`` subclass running :class:`EngineProcessor`."""
    from pyspark.sql.streaming import StatefulProcessor

    cls = type("PetricepProcessor", (EngineProcessor, StatefulProcessor), {})
    return cls(net, plan, tie, kernel, lineage)


# ----------------------------------------------------------------------------- queries


class StreamRun:
    """Builds the streaming query's DataFrames (nothing starts here)."""

    def __init__(
        self, spark: Any, net: Net, tie: str = "arrival", watermark: float = 0, buckets: int | None = None
    ) -> None:
        """``buckets``: how many buckets of keys each group's state is kept in (default: a
        few per core; a checkpoint's first run fixes it, :meth:`key_buckets`)."""
        require_spark()
        if tie not in TIE_RULES:
            raise ConfigError(f"unknown tie rule {tie!r} (use {', '.join(TIE_RULES)})")
        Engine(net, tie=tie)
        if watermark < 0:
            raise ConfigError("the watermark delay must be >= 0")
        configure(spark)
        self.spark = spark
        self.net = net
        self.tie = tie
        self.watermark_ms = math.floor(Fraction(watermark) * 1000)  # the delay, in ms
        self.plan, notes = streaming_plan(make_plan(net), reorders=self.watermark_ms > 0)
        choices = engine_choices(net, self.plan, tie)
        self.engine = engine_report(choices)  # which engine each group's keys run (decided here, once)
        self.kernel = kernel_groups(choices)
        self.warnings = list(self.plan.warnings) + notes
        self.requested_buckets = buckets
        self.buckets = checkpoint_buckets(None, buckets, self._default_buckets())
        self.labels: tuple[tuple[int, ...], ...] = ()  # each bucket's ``b`` (keygroups.bucket_labels)
        self.lineage: Lineage | None = None  # the checkpoint's pattern history (spark/lineage.py)
        self.change: Change | None = None  # what the restart changed in it
        self._bound: str | None = None

    def _default_buckets(self) -> int:
        return default_buckets(int(self.spark.sparkContext.defaultParallelism))

    def key_buckets(self, checkpoint: str | None) -> int:
        """Bind the query to ``checkpoint``: the number of buckets it keeps (written there by
        its first run; one written per key by an earlier petricep is refused); the parse
        stage routes each key to its bucket of these. Not kept where the checkpoint is not a
        local directory: then pass the same ``buckets`` to every run."""
        local = None if checkpoint is None else local_path(checkpoint)
        partitions = int(self.spark.conf.get("spark.sql.shuffle.partitions"))  # (a new checkpoint's)
        self.buckets, kept = checkpoint_layout(local, self.requested_buckets, self._default_buckets(), partitions)
        if local is not None and self._bound != local:
            self.lineage, self.plan, self.change = bind(local, self.net, self.plan)
            self._bound = local
        self.labels = bucket_labels(len(self.plan.groups), self.buckets, kept)
        return self.buckets

    def pattern_notes(self) -> list[str]:
        """What binding to a checkpoint said of its patterns (:mod:`petricep.spark.lineage`):
        warnings naming patterns that could not keep their partial matches, then the line
        ``kept: ...; added: ... (from the events after the restart); removed: ...`` where the
        pattern set changed."""
        if self.change is None:
            return []
        line = self.change.message()
        return self.change.warnings + ([] if line is None else [line])

    def events_from_files(
        self,
        directory: str,
        spec: InputSpec,
        pos_field: str,
        max_files: int | None = None,
        checkpoint: str | None = None,
    ) -> Any:
        """Routed events of the files that appear in ``directory`` (CSV, JSON Lines or
        Parquet, one format; files are read whole), in arrival order: by modification time,
        files that arrived together by name (:mod:`petricep.spark.arrivals`, which keeps its
        log in the query's ``checkpoint``). Without a checkpoint, or for a directory that is
        not local, Spark's file source reads them: by modification time, files with one
        modification time in the order the directory lists them."""
        if checkpoint is not None:
            self.key_buckets(checkpoint)
        glob = {"csv": "*.csv*", "jsonl": "*.json*", "parquet": "*.parquet"}.get(spec.format or "")
        local, log = local_path(directory), None if checkpoint is None else local_path(checkpoint)
        parser = StreamParser(StreamParse(spec, pos_field, True, self.buckets, self.labels), Router(self.plan))
        if local is not None and log is not None and arrivals_supported():
            # the reading task parses its files (one Python worker a task, not two)
            name = f"{ARRIVALS}_{next(_SOURCES)}"
            self.spark.dataSource.register(source_class(parser, STREAM_DDL, name))
            reader = self.spark.readStream.format(name).option("path", local).option("log", os.path.join(log, LOG_DIR))
            reader = reader.option("partitions", self.spark.sparkContext.defaultParallelism)
            for opt, value in (("glob", glob), ("max_files", max_files)):
                if value is not None:
                    reader = reader.option(opt, value)
            return reader.load()
        reader = self.spark.readStream.format("binaryFile").schema(BINARY_FILE_DDL)
        if glob is not None:
            reader = reader.option("pathGlobFilter", glob)
        if max_files is not None:
            reader = reader.option("maxFilesPerTrigger", max_files)
        return reader.load(directory).mapInArrow(parser, STREAM_DDL)

    def events_from_dataframe(self, df: Any, spec: InputSpec, pos: Any) -> Any:
        """Routed events of a streaming DataFrame of your own: any ``spark.readStream``
        source (Kafka, Delta, a socket, ``rate``, Parquet files), its columns selected and
        named as ``spec`` says (type, time and id columns; the others are the events'
        fields, as for :func:`~petricep.spark.batch.match_events`).

        ``pos`` gives each event's place in arrival order, an integer growing over the
        whole stream, unique: the name of a column holding it (the rate source's
        ``value``; the ``offset`` of a one-partition Kafka topic), or a Column computing
        it from others (a rule, e.g. ``F.col("partition") * (1 << 40) + F.col("offset")``
        for a topic of several partitions: each partition's events in their order). The
        watermark then holds for the events' time as for files. A position column that
        is missing is one ``EventError``; a position that is not an integer stops the
        query with one petricep error, as a file's would."""
        from pyspark.sql import Column

        spec = replace(spec, format=None, path=spec.path or "<stream>")
        if isinstance(pos, Column):
            df, pos = df.withColumn(POS_COLUMN, pos), POS_COLUMN
        elif not isinstance(pos, str):
            raise ConfigError(f"pos must name a column or be a Column, got {type(pos).__name__}")
        if pos not in df.columns:
            raise EventError(f"missing column {pos!r}", spec.path, None, pos)
        if not df.isStreaming:
            raise ConfigError("events_from_dataframe needs a streaming DataFrame (spark.readStream...): for a batch one, use match_events")
        return df.mapInArrow(StreamParser(StreamParse(spec, pos, False), Router(self.plan)), STREAM_DDL)

    def output(self, events: Any) -> Any:
        """The streaming DataFrame of everything the query says (OUTPUT_DDL): ``kind``
        ``match`` rows are matches (MATCHES_DDL columns; ``emitted_at`` is the position of
        the event that released a match, -1 when the watermark did), ``late`` rows the
        events that arrived behind the watermark (``json``: the line ``run --late``
        writes), ``read`` rows count (``n``) the events read, late ones included.

        Spark tracks the watermark on the ``et`` column, which the stateful operator does
        not see: Spark would otherwise drop rows at or before the previous micro-batch's
        watermark by itself, uncounted (see :class:`EngineProcessor`)."""
        from pyspark.sql import functions as F

        timed = events.withColumn("et", F.timestamp_millis(F.col("evtime"))).withWatermark(
            "et", f"{self.watermark_ms} milliseconds"
        )
        return (
            timed.select("g", "b", "pos", "evtime", "ev", "first", "reads")
            .groupBy("g", "b")
            .transformWithStateInPandas(
                processor(self.net, self.plan, self.tie, self.kernel, self.lineage), OUTPUT_DDL, "Append", "EventTime"
            )
        )

    def matches(self, events: Any) -> Any:
        """The streaming DataFrame of matches only (MATCHES_DDL): :meth:`output` without
        its late events and counts."""
        from pyspark.sql import functions as F

        cols = [c.split()[0] for c in MATCHES_DDL.split(", ")]
        return self.output(events).where(F.col("kind") == MATCH).select(*cols)

    def typed_matches(self, events: Any, spec: InputSpec, *, text_ids: bool = False) -> Any:
        """:meth:`matches` with the batch API's typed columns (:mod:`petricep.spark.typed`):
        ``pattern, ids, start, end, attrs, json, emitted_at``. A stream's values are known
        only as they arrive, so what a batch run learns from its input is said here: ids
        are ``long`` unless ``text_ids`` (an id column of text); start/end are timestamps
        when ``spec.time_format`` (the events' input spec) has a date."""
        timestamps = spec.time_format is not None and format_has_date(spec.time_format)
        return typed(self.matches(events), self.net, text_ids=text_ids, timestamps=timestamps)

    def flush(self, checkpoint: str) -> Any:
        """A batch DataFrame of the matches the end of the input releases, from the state
        a stopped query left in ``checkpoint`` (MATCHES_DDL)."""
        from pyspark.sql import functions as F

        reader = self.spark.read.format("statestore")
        try:
            state = reader.option("stateVarName", STATE_NAME).load(checkpoint)
        except Exception as e:  # the state data source's errors (STDS_...): no committed state
            if "STDS_" in str(e):
                return self.spark.createDataFrame([], MATCHES_DDL)
            raise
        both = state.select(
            F.col("key.g").alias("g"), F.col("key.b").alias("b"),
            F.col("value.engine").alias("engine"), F.col("value.buffer").alias("buffer"),
        )  # fmt: skip
        return both.mapInArrow(StateFlush(self.net, self.plan, self.tie, self.kernel, self.lineage), MATCHES_DDL)


class StateFlush:
    """``mapInArrow`` function over the state a stopped query left: per key, what the end
    of the input releases (:meth:`rows`)."""

    def __init__(
        self, net: Net, plan: Plan, tie: str, kernel: frozenset[int], lineage: Lineage | None = None
    ) -> None:
        self.engines: EngineCache | LineageCache = (
            EngineCache(net, plan, tie, kernel, size=0)
            if lineage is None or lineage.trivial
            else LineageCache(lineage, plan, tie, size=0)
        )
        self.plan = plan

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        with quiet_gc():
            for batch in batches:
                rows: list[tuple[Any, ...]] = []
                for g, _b, eng, buf in zip(
                    batch.column("g").to_pylist(),
                    batch.column("b").to_pylist(),
                    batch.column("engine").to_pylist(),
                    batch.column("buffer").to_pylist(),
                ):
                    rows += self.rows(g, eng, buf)
                if rows:
                    yield rows_batch(rows)

    def rows(self, g: int, eng: bytes | None, buf: bytes | None) -> list[tuple[Any, ...]]:
        """What the end of the input releases for one bucket: its buffered events (``buf``:
        the buffer of its :class:`BucketState`), then the windows still open."""
        events = Pieces.of_bytes(buf).events()
        if not self.plan.groups[g].patterns:  # a retired state index (spark/lineage.py)
            return []
        try:  # (a bucket without engine under a changed pattern set: its events came before the change)
            engine = self.engines.build(g, eng, old=True) if isinstance(self.engines, LineageCache) else self.engines.build(g, eng)
            origin = renumber(events, engine.last_pos, whole_stream(self.plan.groups[g]))
            if isinstance(engine, LineageEngine):
                engine.arrived = origin
            found = engine.push_all(events)
            found += [(m, CLOCK) for m, _ in engine.finish()]
        except EvaluationError as err:
            raise RuntimeError(TASK_ERROR + str(err)) from None
        return [match_row(m, origin.get(at, at), g, seq) for seq, (m, at) in enumerate(found)]
