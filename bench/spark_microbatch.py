"""Where a streaming micro-batch's seconds go (issue 39): Spark's query progress, its
event log and the stateful handler's own time, per micro-batch, for session settings
side by side in one JVM:

    python -m bench.spark_microbatch [--events 2000] [--file-rows 1000] [--keys 10 | --aarhus]
        [--variants before,after] [--rounds 2] [--master local[2]]

The stream of :mod:`bench.spark_keys` (``SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN
500``, one event per time unit over ``--keys`` keys, files of ``--file-rows`` rows) through
the query ``petricep stream`` runs (:class:`~petricep.spark.streaming.StreamRun`,
``availableNow``, one file a trigger, ``foreachBatch``) in this process, once per variant
and round (variants alternate; a warm-up query first, so that no variant pays the JVM's
first compilation). Per variant: each micro-batch's ``durationMs`` (``triggerExecution``,
``addBatch``, ``queryPlanning``, ``walCommit``, ``commitOffsets``, ``getBatch``,
``latestOffset``), the stateful operator's tasks and commit time, the handler's own
seconds (a processor subclass that times ``handleInputRows`` / ``handleExpiredTimer`` in
the Python workers) and the matches, which must be the same for every variant; and the events per second of the
micro-batches after the first (:func:`sustained`: ``--events 300000 --file-rows 100000`` for
micro-batches of 100,000 events).

A variant is a name in :data:`VARIANTS`: SQL settings set before its query starts (a
fresh checkpoint each time, so the state store's partitions follow them); "before" is
petricep's settings before the stream-cost pass, "after" today's (bench/HISTORY.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.spark_keys import PATTERN, write_files
from bench.spark_stream import write_data
from petricep.api import net_of
from petricep.io.readers import InputSpec
from petricep.lang.fields import field_requirements
from petricep.lang.parser import parse_text
from petricep.spark.cli import START_TRIES, TRANSIENT, stream_partitions
from petricep.spark.session import STREAM_CHANGELOG
from petricep.spark.streaming import EngineProcessor, StreamRun

AARHUS = Path(__file__).resolve().parents[1] / "nets" / "aarhus_congestion.pcep"
BUCKETS = "petricep.buckets"  # a variant's key buckets (StreamRun's ``buckets``), not a Spark setting
LABELS = "petricep.labels"  # "off": the buckets' numbers as their labels
# the settings each variant sets (SQL settings: per query); the stream's defaults where absent
VARIANTS: dict[str, dict[str, str]] = {
    # petricep's settings before this pass: two state partitions per core, RocksDB commits
    # as checkpoints of the whole instance
    "before": {"spark.sql.shuffle.partitions": "{2cores}", STREAM_CHANGELOG: "false"},
    "after": {},  # petricep stream's defaults now (one partition per core, changelog commits, rows uncounted)
    "changelog-only": {"spark.sql.shuffle.partitions": "{2cores}"},
    "partitions-only": {STREAM_CHANGELOG: "false"},
    # no micro-batch without data only to advance the watermark (not a default: a quiet
    # stream's matches would wait for the next data)
    "nodata-off": {"spark.sql.streaming.noDataMicroBatches.enabled": "false"},
    # each of spark-costs' candidates alone, then together (bench/HISTORY.md, spark-costs)
    "rows-untracked": {"spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows": "false"},
    # the state rows counted again (the default before stream-rate, bench/HISTORY.md)
    "rows-tracked": {"spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows": "true"},
    "checksums-off": {"spark.sql.streaming.checkpoint.fileChecksum.enabled": "false"},
    "validation-off": {"spark.sql.streaming.stateStore.commitValidation.enabled": "false"},
    "partitions-1": {"spark.sql.shuffle.partitions": "1"},
    "lean-1": {
        "spark.sql.shuffle.partitions": "1",
        "spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows": "false",
        "spark.sql.streaming.checkpoint.fileChecksum.enabled": "false",
        "spark.sql.streaming.stateStore.commitValidation.enabled": "false",
    },
    # key buckets per group (not a SQL setting: StreamRun's; default 4 per core)
    "buckets-2": {BUCKETS: "2"},
    "buckets-4": {BUCKETS: "4"},
    "buckets-16": {BUCKETS: "16"},
    # the buckets by their numbers, not labels spread over the state partitions (keygroups.bucket_labels)
    "unlabeled": {LABELS: "off"},
    "lean": {
        "spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows": "false",
        "spark.sql.streaming.checkpoint.fileChecksum.enabled": "false",
        "spark.sql.streaming.stateStore.commitValidation.enabled": "false",
    },
}
DURATIONS = ("triggerExecution", "addBatch", "queryPlanning", "walCommit", "commitOffsets", "getBatch", "latestOffset")


class TimedProcessor(EngineProcessor):
    """The stream's processor, its two handlers timed; each task appends its totals to
    the file ``times`` (one JSON line a task: ``close`` ends a task's partition)."""

    times = ""

    def init(self, handle: Any) -> None:
        super().init(handle)
        self._spent = {"input": 0.0, "timer": 0.0, "calls": 0}

    def _timed(self, kind: str, out: Iterator[Any]) -> Iterator[Any]:
        started = time.perf_counter()
        rows = list(out)
        self._spent[kind] += time.perf_counter() - started
        self._spent["calls"] += 1
        yield from rows

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Any]:
        return self._timed("input", super().handleInputRows(key, rows, timerValues))

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator[Any]:
        return self._timed("timer", super().handleExpiredTimer(key, timerValues, expiredTimerInfo))

    def close(self) -> None:
        if self.times:
            with open(self.times, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"pid": os.getpid(), "at": time.time(), **self._spent}) + "\n")


def _timed_processor(run: StreamRun, times: Path) -> Any:
    from pyspark.sql.streaming import StatefulProcessor

    cls = type("TimedPetricepProcessor", (TimedProcessor, StatefulProcessor), {})
    proc = cls(run.net, run.plan, run.tie, run.kernel, run.lineage)
    proc.times = str(times)
    return proc


def one_query(spark: Any, net: Any, spec: InputSpec, parts: Path, ck: Path, settings: dict[str, str]) -> dict[str, Any]:
    """Run the stream once with ``settings``; its progress, handler times and matches."""
    from pyspark.sql import functions as F

    import petricep.spark.streaming as streaming

    cores = stream_partitions(spark)
    settings = {k: v.replace("{2cores}", str(2 * cores)) for k, v in settings.items()}
    buckets = int(settings.pop(BUCKETS)) if BUCKETS in settings else None
    labels = settings.pop(LABELS, "on")
    settings.setdefault("spark.sql.shuffle.partitions", str(cores))
    saved = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    times = ck.parent / f"{ck.name}-times.jsonl"
    run = StreamRun(spark, net, buckets=buckets)
    labelled = streaming.bucket_labels
    if labels == "off":
        streaming.bucket_labels = lambda *a: ()  # type: ignore[assignment]
    try:
        events = run.events_from_files(str(parts), spec, "seq", 1, str(ck))
    finally:
        streaming.bucket_labels = labelled  # type: ignore[assignment]
    found: list[str] = []

    def sink(df: Any, batch_id: int) -> None:
        found.extend(r.json for r in df.where(F.col("kind") == "match").select("json").collect())

    original = streaming.processor
    streaming.processor = lambda *a, **k: _timed_processor(run, times)  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        writer = run.output(events).writeStream.foreachBatch(sink).option("checkpointLocation", str(ck))
        for attempt in range(START_TRIES):  # a busy machine: a worker that did not connect back in time
            query = writer.trigger(availableNow=True).start()
            try:
                query.awaitTermination()
                break
            except Exception as e:
                if attempt + 1 == START_TRIES or not any(t in str(e) for t in TRANSIENT):
                    raise
        elapsed = time.perf_counter() - started
    finally:
        streaming.processor = original  # type: ignore[assignment]
        for k, v in saved.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)
    progress = [json.loads(p.json) for p in query.recentProgress]
    query_id = str(query.id)
    handler = [json.loads(x) for x in times.read_text().splitlines()] if times.exists() else []
    found += [r.json for r in run.flush(str(ck)).select("json").collect()]
    return {"elapsed": elapsed, "progress": progress, "id": query_id, "handler": handler, "matches": sorted(found)}


def stage_lines(log_dir: Path, query_id: str) -> list[str]:
    """Per micro-batch of one query (the event log's job properties name both): its jobs'
    stages, each with its tasks, wall seconds and the tasks' summed run and deserialize
    seconds, and the Python workers' start time Spark measured (its SQL metric)."""
    jobs: dict[int, tuple[str, list[int]]] = {}
    stages: dict[int, dict[str, Any]] = {}
    for f in sorted(x for x in log_dir.rglob("*") if x.is_file() and not x.name.startswith(".")):
        for line in f.read_text(encoding="utf-8").splitlines():
            ev = json.loads(line)
            kind = ev.get("Event")
            if kind == "SparkListenerJobStart":
                props = ev.get("Properties", {})
                if props.get("sql.streaming.queryId") == query_id:
                    jobs[ev["Job ID"]] = (props.get("streaming.sql.batchId", "?"), ev.get("Stage IDs", []))
            elif kind == "SparkListenerStageCompleted":
                info = ev["Stage Info"]
                acc = {a.get("Name"): a.get("Value") for a in info.get("Accumulables", [])}
                stages[info["Stage ID"]] = {
                    "name": info.get("Stage Name", "")[:40], "tasks": info["Number of Tasks"],
                    "wall": (info.get("Completion Time", 0) - info.get("Submission Time", 0)) / 1000,
                    "run": acc.get("internal.metrics.executorRunTime", 0) / 1000,
                    "deser": acc.get("internal.metrics.executorDeserializeTime", 0) / 1000,
                    "pyinit": acc.get("time to initialize Python workers"),
                }  # fmt: skip
    out = []
    for job, (batch, ids) in sorted(jobs.items()):
        done = [f"{i}:{st['tasks']}t {st['wall']:.2f}s run {st['run']:.2f} deser {st['deser']:.2f} pyinit {st['pyinit']}"
                for i in ids if (st := stages.get(i))]  # fmt: skip
        out.append(f"  job {job} batch {batch}: " + "; ".join(done))
    return out


def describe(name: str, r: dict[str, Any]) -> list[str]:
    """Lines for one query: per micro-batch its durations and its stateful operator."""
    lines = [f"{name}: {len(r['progress'])} micro-batches in {r['elapsed']:.1f} s, {len(r['matches'])} matches"]
    for p in r["progress"]:
        d = p.get("durationMs", {})
        ops = p.get("stateOperators") or [{}]
        op = ops[0]
        custom = op.get("customMetrics", {})
        parts = " ".join(f"{k}={d[k]}" for k in DURATIONS if k in d)
        lines.append(
            f"  batch {p['batchId']} rows {p.get('numInputRows', 0)}: {parts}; state: rows {op.get('numRowsTotal')}, "
            f"updated {op.get('numRowsUpdated')}, commit {op.get('commitTimeMs')} ms, "
            f"rocksdb commit {custom.get('rocksdbCommitCheckpointLatency')}/{custom.get('rocksdbCommitFlushLatency')} ms, "
            f"shuffle partitions {op.get('numShufflePartitions')}, state store instances {op.get('numStateStoreInstances')}"
        )
    h = r["handler"]
    if h:
        lines.append(
            f"  handler: {len(h)} tasks, {sum(x['calls'] for x in h)} calls, input {sum(x['input'] for x in h):.3f} s, "
            f"timer {sum(x['timer'] for x in h):.3f} s (all micro-batches)"
        )
    return lines


def sustained(r: dict[str, Any], events: int, file_rows: int) -> float:
    """Events per second of the micro-batches after the first (which starts the query):
    the events of the files after the first over their seconds. Each micro-batch reads a
    file and releases the one before it (the watermark its events moved), the last no-data
    micro-batch the last file: those micro-batches carry every file's release but only
    the later files' reading, so this counts a file fewer than they did."""
    files = -(-events // file_rows)
    seconds = sum(p["durationMs"]["triggerExecution"] for p in r["progress"][1:]) / 1000
    return (events - min(events, file_rows)) / seconds if seconds and files > 1 else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.spark_microbatch", description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=2_000)
    ap.add_argument("--file-rows", type=int, default=1_000)
    ap.add_argument("--keys", type=int, default=10)
    ap.add_argument("--variants", default="before,after", help=f"of {', '.join(VARIANTS)}")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--stages", action="store_true", help="each micro-batch's stages, from Spark's event log")
    ap.add_argument("--json", type=Path, help="write every query's progress here")
    ap.add_argument("--aarhus", action="store_true",
                    help="the Aarhus congestion pattern over the first --events Aarhus rows (no --keys)")  # fmt: skip
    args = ap.parse_args(argv)
    from petricep.spark.session import get_session

    tmp = Path(tempfile.mkdtemp(prefix="petricep-mb-"))
    try:
        patterns = parse_text(AARHUS.read_text() if args.aarhus else PATTERN, str(AARHUS) if args.aarhus else "<bench>")
        net = net_of([patterns])
        required, numeric = field_requirements(list(patterns.patterns))
        fields = {"type_const": "traffic", "time_field": "TIMESTAMP", "id_field": "_id"} if args.aarhus else \
            {"type_field": "type", "time_field": "ts", "id_field": "seq"}  # fmt: skip
        spec = InputSpec(path=str(tmp / "parts"), required=required, numeric=numeric, **fields)  # type: ignore[arg-type]
        if args.aarhus:
            write_data(tmp, args.events, args.file_rows)
        else:
            write_files(tmp / "parts", args.events, args.file_rows, args.keys)
        logs = tmp / "events"
        logs.mkdir()
        spark = get_session(args.master, conf={"spark.eventLog.enabled": "true", "spark.eventLog.dir": str(logs), "spark.eventLog.compress": "false"})
        what = "Aarhus rows, congestion" if args.aarhus else f"events, {args.keys} keys"
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.events} {what}, files of "
              f"{args.file_rows}; master {args.master}")  # fmt: skip
        one_query(spark, net, spec, tmp / "parts", tmp / "warm-ck", {})
        results: dict[str, list[dict[str, Any]]] = {}
        reference = None
        for rnd in range(args.rounds):
            for name in args.variants.split(","):
                r = one_query(spark, net, spec, tmp / "parts", tmp / f"{name}-{rnd}-ck", VARIANTS[name])
                results.setdefault(name, []).append(r)
                reference = reference or r["matches"]
                same = "equal" if r["matches"] == reference else "DIFFERENT"
                print("\n".join(describe(f"{name} round {rnd}", r)) + f"\n  matches {same}", flush=True)
        for name, rs in results.items():
            later = [p["durationMs"]["triggerExecution"] for r in rs for p in r["progress"][1:]]
            totals = ", ".join(f"{r['elapsed']:.1f}" for r in rs)
            rates = ", ".join(f"{sustained(r, args.events, args.file_rows):,.0f}" for r in rs)
            print(f"{name}: median micro-batch after the first {statistics.median(later) / 1000:.2f} s "
                  f"({len(later)} micro-batches), totals {totals} s; sustained {rates} events/s")  # fmt: skip
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
        if args.json:
            args.json.write_text(json.dumps({k: [r["progress"] for r in v] for k, v in results.items()}, indent=1))
        spark.stop()
        if args.stages:  # the event log is complete once the context stopped
            for name, rs in results.items():
                for rnd, r in enumerate(rs):
                    print(f"{name} round {rnd}, stages:\n" + "\n".join(stage_lines(logs, r["id"])))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
