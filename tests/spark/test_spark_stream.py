"""Structured Streaming (``local[2]``): the union of a query's output equals the embedded
engine's (and the Spark batch) result — in order, out of order within the watermark, and
across a process killed mid-way and restarted from its checkpoint, several times."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from petricep.api import compile_text
from petricep.events import Event
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from tests.spark.engines import run_spark_batch, run_spark_stream
from tests.spark.test_spark_batch import RICH, embedded, random_stream

pytestmark = pytest.mark.spark


def canonical(matches: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(m, sort_keys=True) for m in matches)


@pytest.mark.parametrize("tie", ["arrival", "strict"])
def test_a_stream_equals_the_embedded_engine(spark: Any, tie: str) -> None:
    events = random_stream(400 if tie == "arrival" else 250, seed=21)
    pats = [p.source for p in compile_text(RICH).patterns]
    want = canonical([json.loads(x) for x in embedded(build_net(pats), events, tie)])
    got = canonical(run_spark_stream(pats, events, tie, files=4))
    assert got == want
    assert len(want) > 50


def test_out_of_order_within_the_watermark(spark: Any) -> None:
    """Files arrive out of order (every second pair swapped: later events first); a
    watermark as long as two files absorbs it. (Within a file, as in every petricep
    input, timestamps must not go back.)"""
    text = """
    PATTERN dip: SEQ(A a, B b, !(C c)) WHERE [k] AND b.x < a.x WITHIN 4 RETURN Dip(k = a.k, x = b.x)
    PATTERN after_dip: SEQ(Dip d, A a) WHERE [k] AND a.x >= d.x WITHIN 6
    PATTERN rise: SEQ(A a, B b, C c) WHERE [k] AND a.x < b.x AND b.x < c.x WITHIN 5
    """
    events = random_stream(300, seed=5)
    pats = [p.source for p in compile_text(text).patterns]
    want = canonical([json.loads(x) for x in embedded(build_net(pats), events)])
    span = events[-1].ts - events[0].ts
    got = canonical(run_spark_stream(pats, events, files=6, watermark=span / 2, arrival=[1, 0, 3, 2, 5, 4]))
    assert got == want
    assert len(want) >= 10


def test_events_behind_the_watermark_are_dropped(spark: Any) -> None:
    text = "PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 100"
    events = [
        Event("A", 10, 0, 0, {"k": 1}),
        Event("A", 5, 1, 1, {"k": 1}),  # in the second file, arriving last: 45 time units late
        Event("B", 11, 2, 2, {"k": 1}),
        Event("A", 50, 3, 3, {"k": 1}),
        Event("B", 60, 4, 4, {"k": 1}),
    ]
    got = run_spark_stream(
        [p.source for p in compile_text(text).patterns], events, files=5, watermark=2, arrival=[0, 2, 3, 4, 1]
    )
    kept = [e for e in events if e.pos != 1]
    want = [m.to_dict() for m in Engine(compile_text(text)).run(kept)]
    assert canonical(got) == canonical(want)
    assert len(want) == 3


# ----------------------------------------------------------------------------- fault


FAULT_NET = """
PATTERN dip: SEQ(A a, B b, !(C c)) WHERE [k] AND b.x < a.x AND c.x > 2 WITHIN 4 RETURN Dip(k = a.k, x = b.x)
PATTERN after_dip: SEQ(Dip d, A a) WHERE [k] AND a.x >= d.x WITHIN 6
PATTERN rise: SEQ(A+ a[], B b) WHERE skip-till-next-match AND [k] AND a[i].x > a[i-1].x WITHIN 5
PATTERN quiet: SEQ(A a, !(B b)) WHERE [k] WITHIN 3
PATTERN pair: SEQ(C c, D d) WHERE [x] AND d.k != c.k WITHIN 2
"""


def _write_files(directory: Path, events: list[Event], n_files: int) -> None:
    directory.mkdir()
    per = -(-len(events) // n_files)
    for i in range(n_files):
        path = directory / f"events-{i:03d}.csv"
        with open(path, "w") as fh:
            fh.write("type,ts,seq,k,x\n")
            for e in events[i * per : (i + 1) * per]:
                fh.write(f"{e.type},{e.ts},{e.pos},{e.attrs['k']},{e.attrs['x']}\n")
        os.utime(path, (1_000_000 + i, 1_000_000 + i))


def _commits(checkpoint: Path) -> int:
    d = checkpoint / "commits"
    return len([p for p in d.iterdir() if p.name.isdigit()]) if d.is_dir() else 0


@pytest.mark.slow  # three JVMs, two of them killed: the slow tier
def test_a_killed_query_resumes_from_its_checkpoint(spark: Any, tmp_path: Path) -> None:
    events = random_stream(900, seed=31, keys=5)
    pats = [p.source for p in compile_text(FAULT_NET).patterns]
    want = canonical([json.loads(x) for x in embedded(build_net(pats), events)])
    assert want == canonical(run_spark_batch(pats, events))  # the batch result, on Spark too

    (tmp_path / "net.pcep").write_text(FAULT_NET)
    _write_files(tmp_path / "in", events, 9)
    out, ck = tmp_path / "out", tmp_path / "ck"
    cmd = [
        sys.executable, "-m", "petricep", "stream", str(tmp_path / "net.pcep"),
        "--input", str(tmp_path / "in"), "--output", str(out), "--checkpoint", str(ck),
        "--type-field", "type", "--time-field", "ts", "--pos-field", "seq",
        "--master", "local[2]", "--partitions", "3", "--max-files-per-trigger", "1", "--available-now", "--flush",
    ]  # fmt: skip
    env = dict(
        os.environ,
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_SUBMIT_ARGS="--driver-memory 1g --conf spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 pyspark-shell",
    )
    kills = 0
    for _ in range(2):  # start, let it commit a micro-batch or two, kill -9 (the second run resumes a resumed one)
        before = _commits(ck)
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        deadline = time.monotonic() + 120
        target = before + random.Random(kills).randint(1, 2)
        while proc.poll() is None and _commits(ck) < target and time.monotonic() < deadline:
            time.sleep(0.05)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
        assert _commits(ck) >= before, proc.stderr.read().decode() if proc.stderr else ""
    assert kills == 2, "the query finished before it could be killed twice"
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert _commits(ck) >= 9
    lines = [line for f in sorted(out.glob("part-*.jsonl")) for line in f.read_text().splitlines()]
    assert canonical([json.loads(x) for x in lines]) == want  # nothing lost, nothing twice
    assert (out / "part-final.jsonl").exists()


# ----------------------------------------------------------------------------- a DataFrame of your own


def _stream_of(run: Any, events: Any, checkpoint: str, starts: int) -> tuple[list[str], int]:
    """The matches of ``starts`` availableNow runs of the query on one checkpoint, then
    the end-of-input flush; and the events read."""
    from petricep.spark.streaming import MATCH, READ

    got: list[str] = []
    read = [0]

    def sink(df: Any, _batch: int) -> None:
        rows = df.select("kind", "json", "n").collect()
        got.extend(r.json for r in rows if r.kind == MATCH)
        read[0] += sum(r.n for r in rows if r.kind == READ)

    for _ in range(starts):
        query = run.output(events).writeStream.foreachBatch(sink).option("checkpointLocation", checkpoint)
        query = query.trigger(availableNow=True).start()
        query.awaitTermination()
    got.extend(r.json for r in run.flush(checkpoint).select("json").collect())
    return got, read[0]


def _rate_event(v: int) -> Event:
    return Event("ABCD"[(v * 7) % 4], v // 3, v, v, {"k": v % 5, "x": (v * 13) % 8})


def test_a_rate_source_stream_equals_the_embedded_engine(spark: Any, tmp_path: Path) -> None:
    """Spark's rate source (``rate-micro-batch``: ``value`` 0, 1, ...), its columns mapped
    to type, time and fields by a select, ``value`` the position; three starts on one
    checkpoint, one micro-batch of 60 rows each: the embedded engine's matches over the
    180 events."""
    from pyspark.sql import functions as F

    from petricep.io.readers import InputSpec
    from petricep.spark.streaming import StreamRun

    pats = [p.source for p in compile_text(RICH).patterns]
    net = build_net(pats)
    v = F.col("value")
    rate = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 60).option("numPartitions", 1).load()
    events = rate.select(
        F.element_at(F.array(*(F.lit(t) for t in "ABCD")), ((v * 7) % 4 + 1).cast("int")).alias("type"),
        (v / 3).cast("long").alias("ts"),
        (v % 5).alias("k"),
        ((v * 13) % 8).alias("x"),
        v.alias("value"),
    )
    run = StreamRun(spark, net, watermark=2)
    spec = InputSpec(path="<rate>", type_field="type", time_field="ts")
    got, read = _stream_of(run, run.events_from_dataframe(events, spec, "value"), str(tmp_path / "ck"), starts=3)
    assert read == 180
    want = canonical([json.loads(x) for x in embedded(net, [_rate_event(i) for i in range(read)])])
    assert len(want) > 20
    assert canonical([json.loads(x) for x in got]) == want


def test_a_parquet_file_stream_equals_the_embedded_engine(spark: Any, tmp_path: Path) -> None:
    """``spark.readStream.parquet`` over three files (one a micro-batch), the position
    computed by a Column (a rule: ``__pos`` + 0), ids from their own column."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from petricep.io.readers import InputSpec
    from petricep.spark.streaming import StreamRun
    from tests.spark.engines import ID, POS, TS, TYPE

    events = random_stream(300, seed=5)
    pats = [p.source for p in compile_text(RICH).patterns]
    net = build_net(pats)
    indir = tmp_path / "in"
    indir.mkdir()
    for i in range(3):
        part = events[i * 100 : (i + 1) * 100]
        table = pa.table({TYPE: [e.type for e in part], TS: [e.ts for e in part], ID: [e.id for e in part],
                          "k": [e.attrs["k"] for e in part], "x": [e.attrs["x"] for e in part],
                          POS: [e.pos for e in part]})  # fmt: skip
        path = indir / f"ev-{i}.parquet"
        pq.write_table(table, path)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    schema = spark.read.parquet(str(indir)).schema
    df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(indir))
    run = StreamRun(spark, net, watermark=1)
    spec = InputSpec(path=str(indir), type_field=TYPE, time_field=TS, id_field=ID)
    got, read = _stream_of(run, run.events_from_dataframe(df, spec, F.col(POS) + 0), str(tmp_path / "ck"), starts=1)
    assert read == 300
    want = canonical([json.loads(x) for x in embedded(net, events)])
    assert len(want) > 50
    assert canonical([json.loads(x) for x in got]) == want


def test_a_dataframe_stream_needs_its_position_column(spark: Any) -> None:
    from pyspark.sql import functions as F

    from petricep.errors import ConfigError, EventError
    from petricep.io.readers import InputSpec
    from petricep.spark.streaming import StreamRun

    run = StreamRun(spark, compile_text("PATTERN p: SEQ(A a, B b) WITHIN 3\n"))
    rate = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 5).load()
    spec = InputSpec(path="<rate>", type_field="type", time_field="ts")
    with pytest.raises(EventError, match="missing column 'seq'"):
        run.events_from_dataframe(rate.select(F.lit("A").alias("type"), F.col("value").alias("ts")), spec, "seq")
    with pytest.raises(ConfigError, match="needs a streaming DataFrame"):
        run.events_from_dataframe(spark.range(3).withColumnRenamed("id", "seq"), spec, "seq")


def test_streams_commit_changelogs_on_one_partition_per_core(spark: Any) -> None:
    """The state store's commits are changelog files (bench/HISTORY.md, stream-cost) in
    petricep's sessions, and in a session of one's own unless it says otherwise; a new
    `petricep stream` query makes one state partition per core."""
    from petricep.spark.cli import stream_partitions
    from petricep.spark.session import STREAM_CHANGELOG, configure

    assert spark.conf.get(STREAM_CHANGELOG) == "true"
    spark.conf.set(STREAM_CHANGELOG, "false")
    try:
        configure(spark)
        assert spark.conf.get(STREAM_CHANGELOG) == "false"  # the session's own setting kept
        spark.conf.unset(STREAM_CHANGELOG)
        configure(spark)
        assert spark.conf.get(STREAM_CHANGELOG) == "true"
    finally:
        spark.conf.set(STREAM_CHANGELOG, "true")
    assert stream_partitions(spark) == spark.sparkContext.defaultParallelism == 2


def test_streams_count_no_state_rows_and_keep_the_integrity_checks(spark: Any) -> None:
    """The state store's row count (a metric only) is off in petricep's sessions and in a
    session of one's own unless it says otherwise; the state files' checksums and the
    commit validation (they protect data) stay at Spark's default, on."""
    from petricep.spark.session import ROW_TRACKING, configure

    assert spark.conf.get(ROW_TRACKING) == "false"
    spark.conf.set(ROW_TRACKING, "true")
    try:
        configure(spark)
        assert spark.conf.get(ROW_TRACKING) == "true"  # the session's own setting kept
        spark.conf.unset(ROW_TRACKING)
        configure(spark)
        assert spark.conf.get(ROW_TRACKING) == "false"
    finally:
        spark.conf.set(ROW_TRACKING, "false")
    assert spark.conf.get("spark.sql.streaming.checkpoint.fileChecksum.enabled") == "true"
    assert spark.conf.get("spark.sql.streaming.stateStore.commitValidation.enabled") == "true"


def test_bucket_labels_follow_sparks_hash_partitioning(spark: Any, tmp_path: Path) -> None:
    """keygroups.spark_partition is Spark's own partition of a (g, b) grouping key
    (``pmod(hash(g, b), n)``, which HashPartitioning computes), so the labels spread a
    group's buckets evenly over the state partitions; a query's checkpoint keeps the
    partitions its labels were chosen for."""
    from petricep.spark.keygroups import LAYOUT_FILE, bucket_labels, spark_partition
    from petricep.spark.streaming import StreamRun

    grid = [(g, b, n) for g in (-1, 0, 1, 2, 7) for b in range(0, 300, 7) for n in (1, 2, 3, 8)]
    rows = spark.createDataFrame(grid, "g int, b int, n int").selectExpr("pmod(hash(g, b), n) AS p").collect()
    assert [r.p for r in rows] == [spark_partition(g, b, n) for g, b, n in grid]
    labels = bucket_labels(3, 8, 2)
    assert [[spark_partition(g, b, 2) for b in labels[g]] for g in range(3)] == [[0, 1] * 4, [1, 0] * 4, [0, 1] * 4]
    net = build_net([p.source for p in compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 5").patterns])
    saved = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        spark.conf.set("spark.sql.shuffle.partitions", "2")
        run = StreamRun(spark, net, buckets=8)
        assert run.key_buckets(str(tmp_path / "ck")) == 8 and run.labels == bucket_labels(1, 8, 2)
        assert json.loads((tmp_path / "ck" / LAYOUT_FILE).read_text()) == {"layout": "key-groups/2", "buckets": 8, "partitions": 2}
        spark.conf.set("spark.sql.shuffle.partitions", "3")  # (a restart: Spark keeps the checkpoint's 2)
        again = StreamRun(spark, net)
        assert again.key_buckets(str(tmp_path / "ck")) == 8 and again.labels == run.labels
        assert StreamRun(spark, net, buckets=8).labels == ()  # (no checkpoint: the bucket numbers)
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", saved)
