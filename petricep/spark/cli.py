"""The command line on Spark: ``petricep run --engine spark`` and ``petricep stream``."""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import IO, Any

from petricep.errors import ConfigError, EvaluationError, EventError, PetricepError
from petricep.io.readers import InputSpec

DEFAULT_MASTER = "local[*]"


def _session(master: str | None) -> tuple[Any, bool]:
    """The SparkSession, and whether this command started it (and so stops it)."""
    from .session import get_session, require_spark

    require_spark()
    from pyspark.sql import SparkSession

    owned = SparkSession.getActiveSession() is None
    # errors reach the user as one petricep message: Spark's own log stays quiet
    # (PETRICEP_SPARK_LOG=WARN shows it)
    return get_session(master or DEFAULT_MASTER, log_level="OFF"), owned


def _task_error(exc: BaseException, label: str) -> PetricepError | None:
    """A petricep error raised inside a Spark task, as the error it was."""
    from .batch import task_message

    message = task_message(exc)
    if message is None:
        return None
    if message.startswith("event at position"):
        return EvaluationError(f"{label}: {message}")
    return PetricepError(message)  # already located: file, row, field


def cmd_run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``petricep run --engine spark``: the same steps as ``--engine local`` up to the
    engine (patterns, warnings, input spec, schema check at the pattern), then Spark."""
    from petricep.api import load_patterns, net_of
    from petricep.cli import check_columns, input_spec, warnings_for

    if args.on_error != "fail" or args.rejects:
        raise ConfigError(
            "--engine spark stops at the first bad row: --on-error skip and --rejects are not supported"
        )
    if args.slack or args.late or args.stats:
        raise ConfigError("--slack, --late and --stats are not supported with --engine spark yet: run embedded")
    files = load_patterns(args.patterns, args.lang)
    patterns = [p for f in files for p in f.patterns]
    net = net_of(files)
    for w in warnings_for(patterns, [q for f in files for q in f.queries]):
        err.write(w + "\n")
    spec = input_spec(args, patterns)
    local = _local_dir(args.events)
    if local is not None and os.path.isfile(local):
        check_columns(files, spec, path=local)
    elif local is not None and not os.path.exists(local):
        raise EventError("cannot open file: no such file", args.events)
    return run_batch(args, net, spec, out, err)


def run_batch(args: argparse.Namespace, net: Any, spec: InputSpec, out: IO[str], err: IO[str]) -> int:
    """Run on Spark and write the same JSON Lines as ``--engine local``."""
    from .batch import BatchRun, FiringError, ordered_json

    started = time.perf_counter()
    spark, owned = _session(args.master)
    try:
        run = BatchRun(spark, net, tie=args.tie)
        for w in run.warnings:
            err.write(w + "\n")
        try:
            parsed = run.parse_file(spec)
            lines = ordered_json(run.fire(parsed, raise_errors=False))
            counts: Counter[str] = Counter()
            total = 0
            sink = out if not args.output else open(args.output, "w", encoding="utf-8")  # noqa: SIM115
            try:
                for line in lines:
                    sink.write(line)
                    sink.write("\n")
                    total += 1
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
        rate = n / elapsed if elapsed > 0 else 0.0
        err.write(
            f"summary: {n} events read = {n} processed + 0 rejected + 0 late; {total} matches in {elapsed:.2f} s ({rate:,.0f} events/s) "
            f"on Spark {spark.sparkContext.master}\n"
        )
        for p in net.patterns:
            err.write(f"  {p.name}: {counts.get(p.name, 0)} matches\n")
    finally:
        if owned:
            spark.stop()
    return 0


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
    st.add_argument(
        "--partitions",
        type=int,
        metavar="N",
        help="state partitions (default: twice the cores; fixed by the first run of a checkpoint)",
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
        "--flush",
        action="store_true",
        help="with --available-now: the input is complete; emit what its end releases",
    )


def _delimiter(text: str | None) -> str | None:
    if text is None:
        return None
    return {"space": " ", "tab": "\t", "\\t": "\t"}.get(text, text)


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


def _sorted_json(df: Any) -> list[str]:
    rows = df.select("json", "emitted_at", "task", "seq").collect()
    rows.sort(key=lambda r: (r.emitted_at if r.emitted_at >= 0 else float("inf"), r.task, r.seq))
    return [r.json for r in rows]


def cmd_stream(args: argparse.Namespace, err: IO[str]) -> int:
    from petricep.api import load_patterns, net_of
    from petricep.lang.fields import field_requirements

    from .streaming import StreamRun

    if args.flush and not args.available_now:
        raise ConfigError("--flush needs --available-now (it declares the input complete)")
    if args.max_files_per_trigger is not None and args.max_files_per_trigger < 1:
        raise ConfigError("--max-files-per-trigger must be at least 1")
    files = load_patterns(args.patterns, args.lang)
    patterns = [p for f in files for p in f.patterns]
    net = net_of(files)
    required, numeric = field_requirements(patterns)
    spec = InputSpec(
        path=args.input,
        format=args.format,
        type_field=args.type_field,
        type_const=args.type,
        time_field=args.time_field,
        id_field=args.id_field,
        columns=tuple(c.strip() for c in args.columns.split(",")) if args.columns else None,
        delimiter=_delimiter(args.delimiter),
        time_format=args.time_format,
        time_unit=args.time_unit,
        required=required,
        numeric=numeric,
    )
    if args.format is None and spec.columns is not None:
        spec = replace(spec, format="csv")
    out_local = _local_dir(args.output)
    spark, owned = _session(args.master)
    shuffle_partitions = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        partitions = args.partitions or 2 * int(spark.sparkContext.defaultParallelism)
        spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
        run = StreamRun(spark, net, tie=args.tie, watermark=args.watermark)
        for w in run.warnings:
            err.write(w + "\n")
        events = run.events_from_files(args.input, spec, args.pos_field, args.max_files_per_trigger)
        matches = run.matches(events)
        written = [0]

        def write_batch(df: Any, batch_id: int) -> None:
            lines = _sorted_json(df)
            if not lines:
                return
            name = f"part-{batch_id:010d}.jsonl"
            if out_local is not None:
                written[0] += _write_jsonl(out_local, name, lines)
            else:
                spark.createDataFrame([(x,) for x in lines], "json string").coalesce(1).write.mode(
                    "overwrite"
                ).text(f"{args.output}/{name}")
                written[0] += len(lines)

        writer = matches.writeStream.foreachBatch(write_batch).option("checkpointLocation", args.checkpoint)
        if args.available_now:
            writer = writer.trigger(availableNow=True)
        elif args.trigger_seconds:
            writer = writer.trigger(processingTime=f"{args.trigger_seconds} seconds")
        started = time.perf_counter()
        query = writer.start()
        try:
            query.awaitTermination()
        except KeyboardInterrupt:
            query.stop()
            err.write("stopped\n")
        except Exception as e:
            found = _task_error(e, args.input)
            if found is not None:
                raise found from None
            raise ConfigError(f"the streaming query failed: {_first_line(e)}") from None
        flushed = 0
        if args.flush:
            lines = _sorted_json(run.flush(args.checkpoint))
            if out_local is not None:
                flushed = _write_jsonl(out_local, "part-final.jsonl", lines)
            else:
                spark.createDataFrame([(x,) for x in lines], "json string").coalesce(1).write.mode(
                    "overwrite"
                ).text(f"{args.output}/part-final.jsonl")
                flushed = len(lines)
        elapsed = time.perf_counter() - started
        err.write(
            f"summary: {written[0]} matches written in {elapsed:.2f} s"
            + (f", {flushed} at end of input" if args.flush else "")
            + f" to {args.output}\n"
        )
    finally:
        if owned:
            spark.stop()
        else:
            spark.conf.set("spark.sql.shuffle.partitions", shuffle_partitions)
    return 0


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
