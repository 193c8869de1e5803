"""The command line on Spark: ``petricep run --engine spark`` and ``petricep stream``."""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import IO, Any

from petricep.api import load_patterns, net_of, warnings_for
from petricep.api.notes import prefix_notes
from petricep.api.runner import check_columns
from petricep.cli.inputs import add_progress_options, input_spec
from petricep.errors import EXIT_DATA, ConfigError, DataError, EvaluationError, EventError, PetricepError
from petricep.io import open_events
from petricep.io.readers import InputSpec
from petricep.output.jsonl import json_line
from petricep.output.times import TimeFormatter, input_times

from .history import SparkHistory, prepare
from .partition import engine_line
from .progress import Progress
from .session import stop_session

DEFAULT_MASTER = "local[*]"


def _session(
    master: str | None, verbose: bool = False, small: bool = False, on_context: Callable[[Any], None] | None = None
) -> tuple[Any, bool]:
    """The SparkSession, and whether this command started it (and so stops it).
    ``small``: the input is small (:data:`~petricep.spark.batch.SMALL_INPUT`): the JVM
    starts for a short run (:data:`~petricep.spark.session.QUICK_JAVA_OPTIONS`,
    :data:`~petricep.spark.session.QUICK_CONF`);
    ``on_context``: see :func:`~petricep.spark.session.get_session`."""
    from .session import QUICK_CONF, QUICK_JAVA_OPTIONS, get_session, require_spark

    require_spark()
    from pyspark.sql import SparkSession

    owned = SparkSession.getActiveSession() is None
    # errors reach the user as one petricep message: Spark's own log stays quiet
    # (--verbose or PETRICEP_SPARK_LOG=WARN shows it)
    java = QUICK_JAVA_OPTIONS if small else ""
    level = "WARN" if verbose else "OFF"
    conf = QUICK_CONF if small and owned else None  # (not into a session of the caller's)
    return get_session(master or DEFAULT_MASTER, log_level=level, java_options=java, on_context=on_context, conf=conf), owned


def _prestart() -> bool:
    """Whether a small run starts its first Python worker early (:class:`_EarlySession`).
    It saves wall time only where a core is free for it (a 2-event run, load ~1 on 2 cores:
    7.10 -> 6.55 s) and costs ~0.5-1 CPU s (its job): on a busy machine (load 6 on 2 cores)
    the run took 1-2 s longer. So by default only while the load average leaves a core
    free; ``PETRICEP_SPARK_PRESTART=1``: always, ``0``: never (bench/HISTORY.md, spark-costs)."""
    how = os.environ.get("PETRICEP_SPARK_PRESTART", "auto")
    if how in ("0", "1"):
        return how == "1"
    try:
        return os.getloadavg()[0] <= (os.cpu_count() or 1) - 0.5
    except OSError:
        return False


class _EarlySession:
    """The session of ``run --engine spark``, started in a thread once the patterns and the
    input's columns are checked: the JVM (~1-2 s) boots while the Spark side of petricep is
    imported and the run set up. On a small input the first Python worker starts as soon
    as the SparkContext exists (:class:`~petricep.spark.launch.WorkerStart`), while the
    driver creates the SparkSession, parses the file and plans the firing.
    :meth:`get` joins it (its error raised there, as :func:`_session`'s); :meth:`warmed`
    waits for the worker before the firing job."""

    def __init__(self, args: argparse.Namespace) -> None:
        from .batch import small_file

        self._found: tuple[Any, bool] | None = None
        self._error: BaseException | None = None
        self._how = (args.master, getattr(args, "verbose", False), small_file(args.events))
        self._thread: threading.Thread | None = None
        self._worker: Any = None
        if _launches_jvm():  # (a running session is this thread's to find: no thread then)
            self._thread = threading.Thread(target=self._start, args=self._how, name="petricep-spark-start", daemon=True)
            self._thread.start()

    def _start(self, master: str | None, verbose: bool, small: bool) -> None:
        try:
            self._found = _session(master, verbose, small, self._start_worker if small and _prestart() else None)
        except BaseException as e:  # raised in the command's thread by get()
            self._error = e

    def _start_worker(self, sc: Any) -> None:
        from .launch import WorkerStart

        self._worker = WorkerStart(sc)

    def warmed(self) -> None:
        """Wait for the first Python worker started early (if one was)."""
        if self._worker is not None:
            self._worker.wait()

    def get(self) -> tuple[Any, bool]:
        if self._thread is None:
            return _session(*self._how)
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._found is not None
        return self._found


def _launches_jvm() -> bool:
    """Whether this process has no Spark JVM yet (PySpark importable)."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return False
    return SparkContext._gateway is None and SparkContext._active_spark_context is None


class TaskError(DataError):
    """A petricep error raised inside a Spark task (a bad row, a condition that cannot be
    evaluated, a state limit), its text already located by the task: the events' problem."""


def _task_error(exc: BaseException, label: str) -> PetricepError | None:
    """A petricep error raised inside a Spark task, as the error it was."""
    from .batch import task_message

    message = task_message(exc)
    if message is None:
        return None
    if message.startswith("event at position"):
        return EvaluationError(f"{label}: {message}")
    return TaskError(message)  # already located: file, row, field


def cmd_run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``petricep run --engine spark``: the same steps as ``--engine local`` up to the
    engine (patterns, warnings, input spec, schema check at the pattern), then Spark."""

    if args.on_error != "fail" or args.rejects:
        raise ConfigError(
            "--engine spark stops at the first bad row: --on-error skip and --rejects are not supported"
        )
    if args.slack or args.late:
        raise ConfigError("--slack and --late are not supported with --engine spark yet: run embedded")
    files = load_patterns(args.patterns, args.lang)
    patterns = [p for f in files for p in f.patterns]
    history: SparkHistory | None = None
    if args.archive:  # history patterns by their live part; this run claimed in the archive
        net, history = prepare(
            patterns,
            args.archive,
            args.history_order,
            [c for f in files for c in f.conflicts],
            [q for f in files for q in f.queries],
        )
    else:
        net = net_of(files)
    for w in warnings_for(patterns, [q for f in files for q in f.queries]):
        err.write(w + "\n")
    spec = input_spec(args, patterns)
    local = _local_dir(args.events)
    if local is not None and os.path.isfile(local):
        check_columns(files, spec, path=local)
    elif local is not None and not os.path.exists(local):
        raise EventError("cannot open file: no such file", args.events)
    # the patterns and the input's columns checked: a mistake is said at once, no JVM started
    return run_batch(args, net, spec, out, err, history, _EarlySession(args))


def run_batch(
    args: argparse.Namespace,
    net: Any,
    spec: InputSpec,
    out: IO[str],
    err: IO[str],
    history: SparkHistory | None = None,
    early: _EarlySession | None = None,
) -> int:
    """Run on Spark and write the same JSON Lines as ``--engine local``."""
    from .batch import BatchRun, FiringError, ordered_json, small_file

    started = time.perf_counter()
    if early is not None:
        spark, owned = early.get()
    else:
        spark, owned = _session(args.master, getattr(args, "verbose", False), small_file(args.events))
    show = err.isatty() if getattr(args, "progress", None) is None else args.progress
    try:
        run = BatchRun(spark, net, tie=args.tie, history=history)
        for w in run.warnings:
            err.write(w + "\n")
        counts: Counter[str] = Counter()
        try:
            with Progress(spark, err, show) as progress:
                parsed = run.parse_file(spec)
                progress.note(f"{parsed.clock.events} events parsed")
                matches = run.fire(parsed, raise_errors=False)
                if early is not None:
                    early.warmed()
                lines = retimed(
                    ordered_json(matches, partitions=parsed.partitions),
                    input_times(spec, _local_dir(spec.path)),
                )
                sink = out if not args.output else open(args.output, "w", encoding="utf-8")  # noqa: SIM115
                try:
                    for line in lines:
                        sink.write(line)
                        sink.write("\n")
                        counts[_pattern_of(line)] += 1
                finally:
                    if sink is not out:
                        sink.close()
        except FiringError as e:
            raise EvaluationError(f"{args.events}: {e}") from None
        except Exception as e:
            found = _task_error(e, args.events)
            if found is None:
                raise
            raise found from None
        elapsed = time.perf_counter() - started
        n = parsed.clock.events
        report = {
            "events": {"read": n, "processed": n, "rejected": 0, "late": 0},
            "patterns": {p.name: {"matches": counts.get(p.name, 0)} for p in net.patterns},
            "spark": {"master": spark.sparkContext.master, "seconds": round(elapsed, 3)},
            "engine": run.engine,
        }
        _summary(report, elapsed, spark.sparkContext.master, err, _hints(net, report, spec, args.tie))
        if getattr(args, "stats", None):
            with open(args.stats, "w", encoding="utf-8") as fh:
                json.dump(report, fh, indent=2)
                fh.write("\n")
    finally:
        if owned:
            stop_session(spark)
    return 0


def _hints(net: Any, report: dict[str, Any], spec: InputSpec, tie: str) -> dict[str, list[str]]:
    """Why a pattern found nothing, as ``--engine local`` says it, from the input's first
    events read here: only where the input is one local file (a directory or a remote path
    is Spark's to read)."""
    local = _local_dir(spec.path)
    if local is None or not os.path.isfile(local):
        return {}
    try:
        source = open_events(replace(spec, path=local))
    except PetricepError:
        return {}
    return prefix_notes(net, report, source, tie)


def _summary(
    report: dict[str, Any], elapsed: float, master: str, err: IO[str], hints: dict[str, list[str]] | None = None
) -> None:
    ev = report["events"]
    total = sum(p["matches"] for p in report["patterns"].values())
    rate = ev["read"] / elapsed if elapsed > 0 else 0.0
    err.write(
        f"summary: {ev['read']} events read = {ev['processed']} processed + 0 rejected + 0 late; "
        f"{total} matches in {elapsed:.2f} s ({rate:,.0f} events/s) on Spark {master}\n"
    )
    for name, p in report["patterns"].items():
        err.write(f"  {name}: {p['matches']} matches\n")
        for line in (hints or {}).get(name, ()):
            err.write(f"    {line}\n")
    err.write(f"  {engine_line(report['engine'])}\n")


def retimed(lines: Iterable[str], times: TimeFormatter | None) -> Iterator[str]:
    """JSON lines with ``start``/``end`` (and a timeout's ``deadline``) as ``times`` writes
    them: the bytes of ``petricep run``'s lines over a date-time input (its match records,
    encoded by :func:`~petricep.output.jsonl.json_line`, as the tasks' lines were)."""
    if times is None:
        yield from lines
        return
    for line in lines:
        d = json.loads(line)
        d["start"], d["end"] = times(d["start"]), times(d["end"])
        if "timeout" in d:
            d["timeout"]["deadline"] = times(d["timeout"]["deadline"])
        yield json_line(d)


def _pattern_of(line: str) -> str:
    # {"pattern": "name", ...}: the name is the first value
    start = line.index('"pattern": ') + len('"pattern": ')
    return str(_DECODER.raw_decode(line, start)[0])


_DECODER = json.JSONDecoder()


# ----------------------------------------------------------------------------- stream


def add_stream_parser(sub: Any) -> None:
    st = sub.add_parser(
        "stream",
        help="watch a directory of event files on Spark Structured Streaming, write matches to a directory",
    )
    st.add_argument("patterns", nargs="+", metavar="PATTERN_FILE")
    st.add_argument("--lang", choices=("pcep", "sql"), help="language of the pattern files (default: by extension)")
    st.add_argument("--input", required=True, metavar="DIR", help="directory to watch for new event files")
    st.add_argument(
        "--output", required=True, metavar="DIR", help="directory for the match files (JSON Lines)"
    )
    st.add_argument(
        "--checkpoint", required=True, metavar="DIR", help="checkpoint directory (a restart resumes from it)"
    )
    _add_stream_events(st)
    _add_stream_run(st)


def _add_stream_events(st: Any) -> None:
    """``petricep stream``'s options that say how to read the event files."""
    g = st.add_argument_group("events")
    g.add_argument(
        "--format", choices=("csv", "jsonl", "parquet"), help="default: from each file's extension"
    )
    t = g.add_mutually_exclusive_group(required=True)
    t.add_argument("--type-field", metavar="F", help="column holding the event type")
    t.add_argument("--type", metavar="T", help="one event type for every event")
    g.add_argument("--time-field", metavar="F", required=True, help="timestamp column")
    g.add_argument(
        "--pos-field",
        metavar="F",
        required=True,
        help="column with each event's arrival position (an integer growing over the whole stream)",
    )
    g.add_argument("--id-field", metavar="F", help="id column (default: the position)")
    g.add_argument("--columns", metavar="a,b,c", help="column names of headerless CSV files")
    g.add_argument("--delimiter", metavar="C", help="CSV delimiter (default ','; 'space' or 'tab' allowed)")
    g.add_argument("--time-format", metavar="FMT", help="strptime format of the timestamps")
    g.add_argument(
        "--time-unit",
        choices=("s", "ms", "us", "ns"),
        help="unit of numeric timestamps (converted to seconds)",
    )


def _add_stream_run(st: Any) -> None:
    """``petricep stream``'s options for the query: lateness, ties, Spark, triggers, outputs."""
    st.add_argument(
        "--watermark",
        type=float,
        default=0.0,
        metavar="N",
        help="how late (in timestamp units) an event may arrive (default 0)",
    )
    st.add_argument(
        "--tie", choices=("arrival", "strict", "either"), default="arrival", help="tie rule (as for run)"
    )
    st.add_argument("--master", metavar="URL", help=f"Spark master (default {DEFAULT_MASTER})")
    st.add_argument("--verbose", action="store_true", help="Spark's own log lines (WARN and above) on stderr besides petricep's")
    st.add_argument(
        "--partitions",
        type=int,
        metavar="N",
        help="state partitions (default: one per core; fixed by the first run of a checkpoint)",
    )
    st.add_argument(
        "--key-buckets",
        type=int,
        metavar="N",
        help="buckets of keys per pattern group, one engine each (default: 4 per core; "
        "fixed by the first run of a checkpoint)",
    )
    st.add_argument("--max-files-per-trigger", type=int, metavar="N", help="files per micro-batch")
    st.add_argument(
        "--trigger-seconds",
        type=float,
        metavar="S",
        help="micro-batch interval (default: as soon as files arrive)",
    )
    st.add_argument("--available-now", action="store_true", help="process the files there now, then stop")
    st.add_argument(
        "--late",
        metavar="DIR",
        help="directory for the events that arrive behind the watermark, late-<batch>.jsonl "
        "(default: the --output directory)",
    )
    st.add_argument("--stats", metavar="FILE", help="write the run's accounting as JSON (events, matches, micro-batches)")
    add_progress_options(st, "progress lines")
    st.add_argument(
        "--flush",
        action="store_true",
        help="with --available-now: the input is complete; emit what its end releases",
    )


def _local_dir(path: str) -> str | None:
    if path.startswith("file://"):
        return path[len("file://") :]
    if "://" in path:
        return None
    return path


def _write_jsonl(directory: str, name: str, lines: Iterable[str]) -> int:
    """Write a file atomically (a replayed micro-batch rewrites the same file)."""
    os.makedirs(directory, exist_ok=True)
    final = os.path.join(directory, name)
    tmp = os.path.join(directory, f".{name}.tmp")
    n = 0
    with open(tmp, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line)
            fh.write("\n")
            n += 1
    os.replace(tmp, final)
    return n


EXIT_INCOMPLETE = EXIT_DATA  # as ``run``: finished, but some events were late (see the summary)
# Spark gives a new Python worker 10 s to connect; on a loaded machine a query's start
# can fail so. Nothing is lost: the query restarts from its checkpoint.
TRANSIENT = ("Python worker failed to connect back", "waiting for the Python worker to connect back", "CANNOT_OPEN_SOCKET")
START_TRIES = 5


def _sorted_json(df: Any) -> list[str]:
    rows = df.select("json", "emitted_at", "task", "seq").collect()
    rows.sort(key=lambda r: (r.emitted_at if r.emitted_at >= 0 else float("inf"), r.task, r.seq))
    return [r.json for r in rows]


@dataclass
class StreamAccount:
    """The accounting of one ``stream`` invocation, micro-batch by micro-batch: events
    read = processed + rejected + late (a stream stops at a bad row: rejected is 0),
    matches per pattern. Kept by batch id: a micro-batch replayed after a retried query
    start counts once."""

    patterns: list[str]
    flushed: Counter[str] = field(default_factory=Counter)
    engine: dict[str, Any] | None = None  # which engine the groups' keys run (engine_report)
    # a restart with other patterns: {"kept": [...], "added": [...], "removed": [...]} (spark/lineage.py)
    restart: dict[str, list[str]] | None = None
    by_batch: dict[int, tuple[int, int, Counter[str], float]] = field(default_factory=dict)

    @property
    def read(self) -> int:
        return sum(b[0] for b in self.by_batch.values())

    @property
    def late(self) -> int:
        return sum(b[1] for b in self.by_batch.values())

    @property
    def matches(self) -> Counter[str]:
        total: Counter[str] = Counter(self.flushed)
        for b in self.by_batch.values():
            total.update(b[2])
        return total

    @property
    def batches(self) -> list[dict[str, Any]]:
        return [
            {"batch": i, "read": r, "processed": r - late, "late": late, "matches": sum(m.values()),
             "seconds": round(sec, 3)}
            for i, (r, late, m, sec) in sorted(self.by_batch.items())
        ]  # fmt: skip

    def add_batch(self, batch_id: int, read: int, late: int, patterns: list[str], seconds: float) -> str:
        """Count a micro-batch; its log line."""
        self.by_batch[batch_id] = (read, late, Counter(patterns), seconds)
        return f"batch {batch_id}: " + self.events_line(read, late) + f"; {len(patterns)} matches"

    @staticmethod
    def events_line(read: int, late: int) -> str:
        return f"{read} events read = {read - late} processed + 0 rejected + {late} late"

    def summary(self, elapsed: float, output: str, late_dir: str) -> list[str]:
        total = sum(self.matches.values())
        rate = self.read / elapsed if elapsed > 0 else 0.0
        lines = [
            f"summary: {self.events_line(self.read, self.late)}; {total} matches in {elapsed:.2f} s "
            f"({rate:,.0f} events/s), {len(self.batches)} micro-batches"
            + (f", {sum(self.flushed.values())} matches at end of input" if self.flushed else "")
        ]
        lines += [f"  {p}: {self.matches.get(p, 0)} matches" for p in self.patterns]
        if self.engine is not None:
            lines.append("  " + engine_line(self.engine))
        lines.append(f"  matches written to {output}")
        if self.late:
            lines.append(f"  late events written to {late_dir}")
        return lines

    def report(self) -> dict[str, Any]:
        """``--stats``: the same keys as ``run``'s, plus the micro-batches."""
        return {
            "events": {"read": self.read, "processed": self.read - self.late, "rejected": 0, "late": self.late},
            "patterns": {p: {"matches": self.matches.get(p, 0)} for p in self.patterns},
            "end_of_input_matches": sum(self.flushed.values()),
            "batches": self.batches,
            **({"engine": self.engine} if self.engine is not None else {}),
            **({"restart": self.restart} if self.restart is not None else {}),
        }


class BatchWriter:
    """``foreachBatch``: a micro-batch's matches to ``part-<batch>.jsonl``, its late
    events to ``late-<batch>.jsonl`` (both atomic, so a replayed micro-batch rewrites its
    own files), its accounting line to the log."""

    def __init__(self, spark: Any, output: str, late_dir: str, account: StreamAccount, err: IO[str]) -> None:
        self.spark = spark
        self.output = output
        self.late_dir = late_dir
        self.account = account
        self.err = err
        self.progress: Progress | None = None
        self.last = time.perf_counter()
        self.times: Any = None  # how the matches' times are written (input_times): found at the first matches
        self.input: tuple[InputSpec, str] | None = None  # the input's spec and directory, for that

    def __call__(self, df: Any, batch_id: int) -> None:
        from .streaming import LATE, MATCH, READ

        rows = df.select("kind", "pattern", "json", "emitted_at", "task", "seq", "n").collect()
        matches = [r for r in rows if r.kind == MATCH]
        matches.sort(key=lambda r: (r.emitted_at if r.emitted_at >= 0 else float("inf"), r.task, r.seq))
        late = sorted((r for r in rows if r.kind == LATE), key=lambda r: r.emitted_at)
        read = sum(r.n for r in rows if r.kind == READ)
        if matches:
            lines = list(retimed((r.json for r in matches), self.time_form()))
            self.write(self.output, f"part-{batch_id:010d}.jsonl", lines)
        if late:
            self.write(self.late_dir, f"late-{batch_id:010d}.jsonl", [r.json for r in late])
        now = time.perf_counter()
        line = self.account.add_batch(batch_id, read, len(late), [r.pattern for r in matches], now - self.last)
        self.last = now
        self.err.write(line + "\n")
        if self.progress is not None:
            a = self.account
            self.progress.note(f"micro-batch {batch_id}; {a.read} events, {sum(a.matches.values())} matches")

    def time_form(self) -> TimeFormatter | None:
        """The times of the input's first file (in name order, as ``petricep run`` reads a
        directory's files), once a batch has matches: its files are there by then."""
        if self.times is None and self.input is not None:
            spec, directory = self.input
            local = _local_dir(directory) or ""
            names = sorted(n for n in os.listdir(local) if not n.startswith((".", "_"))) if os.path.isdir(local) else []
            first = next((os.path.join(local, n) for n in names if os.path.isfile(os.path.join(local, n))), None)
            self.times = (input_times(spec, first) if first else None) or False  # (False: numbers, found)
        return self.times or None

    def write(self, directory: str, name: str, lines: list[str]) -> int:
        local = _local_dir(directory)
        if local is not None:
            return _write_jsonl(local, name, lines)
        self.spark.createDataFrame([(x,) for x in lines], "json string").coalesce(1).write.mode(
            "overwrite"
        ).text(f"{directory}/{name}")
        return len(lines)


def cmd_stream(args: argparse.Namespace, err: IO[str]) -> int:

    if args.flush and not args.available_now:
        raise ConfigError("--flush needs --available-now (it declares the input complete)")
    if args.max_files_per_trigger is not None and args.max_files_per_trigger < 1:
        raise ConfigError("--max-files-per-trigger must be at least 1")
    files = load_patterns(args.patterns, args.lang)
    patterns = [p for f in files for p in f.patterns]
    net = net_of(files)
    spec = input_spec(args, patterns, stream=True)
    spark, owned = _session(args.master, args.verbose)
    shuffle_partitions = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        # one state partition per core: each is a task and a RocksDB instance per micro-batch,
        # and a second wave of tasks on the same cores only added their fixed costs (a
        # micro-batch of 1,000 events: ~2x, bench/HISTORY.md, stream-cost); the key buckets
        # (4 per core) spread over them
        partitions = args.partitions or stream_partitions(spark)
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
        account = StreamAccount([p.name for p in net.patterns])
        elapsed = _stream_query(args, spark, net, spec, account, err)
        for line in account.summary(elapsed, args.output, args.late or args.output):
            err.write(line + "\n")
        if args.stats:
            with open(args.stats, "w", encoding="utf-8") as fh:
                json.dump(account.report(), fh, indent=2)
                fh.write("\n")
    finally:
        if owned:
            stop_session(spark)
        else:
            spark.conf.set("spark.sql.shuffle.partitions", shuffle_partitions)
    return EXIT_INCOMPLETE if account.late else 0


def stream_partitions(spark: Any) -> int:
    """The default number of a new streaming query's state partitions: the session's cores."""
    return max(1, int(spark.sparkContext.defaultParallelism))


def _stream_query(
    args: argparse.Namespace, spark: Any, net: Any, spec: InputSpec, account: StreamAccount, err: IO[str]
) -> float:
    """Run the query (and the end-of-input flush); the seconds it took."""
    from .streaming import StreamRun

    run = StreamRun(spark, net, tie=args.tie, watermark=args.watermark, buckets=args.key_buckets)
    account.engine = run.engine
    for w in run.warnings:
        err.write(w + "\n")
    events = run.events_from_files(args.input, spec, args.pos_field, args.max_files_per_trigger, args.checkpoint)
    for line in run.pattern_notes():  # a restart with other patterns: which is kept, added, removed
        err.write(line + "\n")
    change = run.change
    if change is not None and change.message() is not None:
        account.restart = {"kept": change.kept, "added": change.added, "removed": change.removed}
    sink = BatchWriter(spark, args.output, args.late or args.output, account, err)
    sink.input = (spec, args.input)
    writer = run.output(events).writeStream.foreachBatch(sink).option("checkpointLocation", args.checkpoint)
    if args.available_now:
        writer = writer.trigger(availableNow=True)
    elif args.trigger_seconds:
        writer = writer.trigger(processingTime=f"{args.trigger_seconds} seconds")
    started = time.perf_counter()
    show = err.isatty() if args.progress is None else args.progress
    with Progress(spark, err, show) as progress:
        sink.progress = progress
        for attempt in range(1, START_TRIES + 1):
            query = writer.start()
            try:
                query.awaitTermination()
                break
            except KeyboardInterrupt:
                query.stop()
                err.write("stopped\n")
                break
            except Exception as e:
                found = _task_error(e, args.input)
                if found is not None:
                    raise found from None
                if any(t in str(e) for t in TRANSIENT) and attempt < START_TRIES:
                    err.write(f"warning: {_first_line(e)} (a busy machine?): the query resumes from its checkpoint\n")
                    continue
                raise PetricepError(f"the streaming query failed: {_first_line(e)}") from None
        if args.flush:
            rows = run.flush(args.checkpoint).select("pattern", "json", "emitted_at", "task", "seq").collect()
            rows.sort(key=lambda r: (r.emitted_at if r.emitted_at >= 0 else float("inf"), r.task, r.seq))
            sink.write(args.output, "part-final.jsonl", list(retimed((r.json for r in rows), sink.time_form())))
            account.flushed = Counter(r.pattern for r in rows)
    return time.perf_counter() - started


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
