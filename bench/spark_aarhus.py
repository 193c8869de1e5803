"""The Aarhus traffic data (1.5M events, 449 sensors) through the embedded engine and
Spark ``local[1]`` / ``local[2]``: times, speed-up, and where the time goes.

    python -m bench.spark_aarhus [--data FILE] [--masters local[1],local[2]] [--repeat 2]

For every master a fresh process starts Spark and runs the batch pipeline ``--repeat``
times over the file (the first run pays the JVM's warm-up); every run's matches are
checked against the embedded engine's, and its firing stage's wall time is read from Spark's
event log (events/s per core for ``local[N]``). The breakdown times, in one Python process, the
Python side of the two stages as Spark's tasks run it (see :func:`breakdown`): what is
left of a stage's time in Spark is the JVM's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "aarhus_traffic" / "aarhus_traffic_2014-08-01_to_14.csv.gz"
NET = ROOT / "nets" / "aarhus_congestion.pcep"


def spec(path: str) -> Any:
    from petricep.io.readers import InputSpec

    return InputSpec(path=path, type_const="traffic", time_field="TIMESTAMP", id_field="_id")


def digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()[:16]


def load() -> float:
    return os.getloadavg()[0]


# ----------------------------------------------------------------------------- embedded


def embedded(path: str) -> dict[str, Any]:
    """The embedded run's matches (their digest: what every Spark run must give), on the
    compiled kernel as ``petricep run`` fires them (the Python engine takes ~25x as long,
    minutes over the x8 file of :mod:`bench.spark_bundle`)."""
    from petricep.api import compile_files
    from petricep.api.runner import Run
    from petricep.output.jsonl import match_json

    net = compile_files([str(NET)])
    start = time.perf_counter()
    lines = [match_json(m) for m in Run(net, spec(path))]
    return {
        "seconds": time.perf_counter() - start,
        "matches": len(lines),
        "digest": digest(lines),
        "load": load(),
    }


class _Shared:
    """A broadcast's stand-in (what a task reads: ``.value``)."""

    def __init__(self, value: Any) -> None:
        self.value = value


def breakdown(path: str, partitions: int = 4) -> dict[str, float]:
    """Seconds, in this process, for the Python side of the two stages as the Spark tasks
    run it, on the whole file as one task each: the parse stage (:class:`Parser` over
    batches of raw lines as ``spark.read.text`` hands them over, as many as petricep's
    session asks for; a kernel group's
    events leave as packs in ``partitions`` key buckets), a stand-in for the shuffle (not
    Spark's: the event rows and packs sorted by group and order key), and the firing stage
    (:class:`Firing` over them: unpacking, the kernel, the match rows)."""
    import gc
    import gzip

    import pyarrow as pa
    import pyarrow.compute as pc

    from petricep.api import compile_files
    from petricep.spark.batch import Firing, csv_columns
    from petricep.spark.parse import ORDER, VALUE, ParseConfig, Parser, interpret
    from petricep.spark.partition import StreamClock, kernel_fields
    from petricep.spark.plan import Router, make_plan
    from petricep.spark.records import ARCHIVE, EVENT, PACK
    from petricep.spark.session import BASE_CONF
    from petricep.spark.shuffle import Layout

    net = compile_files([str(NET)])
    plan = make_plan(net)
    layout = Layout.of([kernel_fields(net, g) for g in plan.groups])
    opener: Any = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as fh:
        raw = fh.read().split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    header = raw[0]
    labels = tuple(str(p) for p in range(partitions))
    config = ParseConfig(
        spec(path),
        text="csv",
        header=header,
        names=csv_columns(header, ","),
        layout=layout,
        buckets=tuple(labels if idx is not None else () for idx in layout.groups),
    )
    step = int(BASE_CONF["spark.sql.execution.arrow.maxRecordsPerBatch"])  # lines per batch, as Spark's
    lines = [
        pa.record_batch({VALUE: pa.array(raw[a : a + step], pa.binary()), ORDER: pa.array(range(a, min(a + step, len(raw))), pa.int64())})
        for a in range(0, len(raw), step)
    ]
    del raw
    out: dict[str, float] = {}
    gc.disable()
    try:
        t = time.perf_counter()
        parsed = pa.Table.from_batches(list(Parser(config, Router(plan))(iter(lines))))
        out["parse stage (Python)"] = time.perf_counter() - t
        kinds = parsed.column("kind")
        side = parsed.filter(pc.invert(pc.is_in(kinds, pa.array([EVENT, ARCHIVE, PACK], pa.int8()))))
        posmap, runs, error = interpret(zip(side.column("kind").to_pylist(), side.column("ev").to_pylist()), config, 1)
        assert error is None, error
        clock = StreamClock.from_runs(runs)
        t = time.perf_counter()
        events = parsed.filter(pc.is_in(kinds, pa.array([EVENT, PACK], pa.int8())))
        events = events.take(pc.sort_indices(events, [("g", "ascending"), ("lid", "ascending")]))
        events = events.drop_columns(["k"]).combine_chunks()
        out["shuffle stand-in (sort)"] = time.perf_counter() - t
        fire = Firing(_Shared(net), _Shared(plan), _Shared((clock, posmap)), "arrival", False, config.names, True, None, layout)
        t = time.perf_counter()
        found = sum(b.num_rows for b in fire(iter(events.to_batches(max_chunksize=step))))
        seconds = time.perf_counter() - t
        out["firing stage (Python)"] = seconds
        out["firing stage: events/s"] = clock.events / seconds
        out["matches"] = found
    finally:
        gc.enable()
    return out


# ----------------------------------------------------------------------------- spark


def worker(master: str, path: str, repeat: int) -> None:
    """One Spark master, in its own process: a JSON line per run on stdout, each with its
    firing stage's wall time from Spark's event log (:func:`firing_stages`)."""
    import tempfile

    from petricep.api import compile_files
    from petricep.spark.batch import BatchRun, ordered_json
    from petricep.spark.session import get_session

    logs = tempfile.mkdtemp(prefix="petricep-eventlog-")
    conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": logs, "spark.eventLog.compress": "false"}
    if os.environ.get("BENCH_DRIVER_JAVA_OPTIONS"):  # (after petricep's own -Xlog: see bench.spark_bundle.trace)
        conf["spark.driver.extraJavaOptions"] = os.environ["BENCH_DRIVER_JAVA_OPTIONS"]
    t = time.perf_counter()
    spark = get_session(master, conf=conf)
    session = time.perf_counter() - t
    net = compile_files([str(NET)])
    runs = []
    for i in range(repeat):
        t0 = time.perf_counter()
        run = BatchRun(spark, net)
        parsed = run.parse_file(spec(path))
        t1 = time.perf_counter()
        lines = list(ordered_json(run.fire(parsed, raise_errors=False)))
        t2 = time.perf_counter()
        runs.append(
            {
                "master": master,
                "run": i + 1,
                "session": session if i == 0 else 0.0,
                "parse": t1 - t0,
                "fire": t2 - t1,
                "total": t2 - t0,
                "events": parsed.clock.events,
                "matches": len(lines),
                "digest": digest(lines),
                "load": load(),
            }
        )
    spark.stop()  # (the event log is complete once the session stops)
    stages = firing_stages(logs)
    shutil.rmtree(logs, ignore_errors=True)
    for r, stage in zip(runs, stages + [None] * len(runs)):
        print(json.dumps({**r, "firing_stage": stage}), flush=True)


def firing_stages(logs: str) -> list[float]:
    """The wall time (submission to completion) of each run's firing stage, in run order,
    from the event log in ``logs``: the stages that ran Python other than the parse (its
    stage is the ``localCheckpoint``; the final sort runs no Python). Not "the stage that
    reads the shuffle": on one firing partition (``local[1]``) the firing reads the parse's
    checkpoint directly, with no shuffle between them."""
    out: list[tuple[float, float]] = []
    for log in Path(logs).rglob("events_*"):  # (Spark 4 writes a folder of rolling files per application)
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if event.get("Event") != "SparkListenerStageCompleted":
                continue
            info = event["Stage Info"]
            names = {a.get("Name") for a in info.get("Accumulables", [])}
            if "time to execute Python code" in names and not info["Stage Name"].startswith("localCheckpoint"):
                out.append((info["Submission Time"], (info["Completion Time"] - info["Submission Time"]) / 1000))
    return [seconds for _, seconds in sorted(out)]


def cores(master: str) -> int | None:
    """The cores of a ``local[N]`` master (None for any other)."""
    inner = master[len("local[") : -1] if master.startswith("local[") and master.endswith("]") else ""
    return int(inner) if inner.isdigit() else None


def spark_runs(master: str, path: str, repeat: int, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """:func:`worker`'s runs, in a process of their own (``env``: more variables for it);
    a worker that fails stops the bench with the end of what it wrote to stderr."""
    cmd = [
        sys.executable,
        "-m",
        "bench.spark_aarhus",
        "--worker",
        master,
        "--data",
        path,
        "--repeat",
        str(repeat),
    ]
    full = dict(os.environ, PYSPARK_PYTHON=sys.executable, PETRICEP_SPARK_LOG="ERROR", **(env or {}))
    done = subprocess.run(cmd, cwd=ROOT, env=full, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the {master} worker failed on {path}:\n{done.stderr[-4000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.spark_aarhus", description=__doc__)
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--masters", default="local[1],local[2]")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--worker", metavar="MASTER", help=argparse.SUPPRESS)
    ap.add_argument("--no-breakdown", action="store_true")
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.data, args.repeat)
        return 0
    if not Path(args.data).exists():
        print(f"no data at {args.data} (see ../shared/data/README.md)", file=sys.stderr)
        return 1
    base = embedded(args.data)
    print(
        f"embedded: {base['seconds']:.1f} s, {base['matches']} matches (load {base['load']:.1f})", flush=True
    )
    results: dict[str, list[dict[str, Any]]] = {}
    for master in args.masters.split(","):
        results[master] = runs = spark_runs(master, args.data, args.repeat)
        for r in runs:
            same = "same matches" if r["digest"] == base["digest"] else "MATCHES DIFFER"
            print(
                f"{master} run {r['run']}: total {r['total']:.1f} s (parse {r['parse']:.1f}, fire {r['fire']:.1f}; "
                f"session start {r['session']:.1f}), {r['matches']} matches, {same} (load {r['load']:.1f})",
                flush=True,
            )
            if r.get("firing_stage"):
                n = cores(master)
                rate = f", {r['events'] / r['firing_stage'] / n / 1e6:.2f}M events/s per core" if n else ""
                print(f"  firing stage {r['firing_stage']:.2f} s (event log){rate}", flush=True)
    masters = list(results)
    if len(masters) >= 2:
        best = {m: min(r["total"] for r in results[m]) for m in masters}
        fire = {m: min(r["fire"] for r in results[m]) for m in masters}
        parse = {m: min(r["parse"] for r in results[m]) for m in masters}
        a, b = masters[0], masters[1]
        print(
            f"speed-up {a} -> {b}: total {best[a] / best[b]:.2f}x, parse stage {parse[a] / parse[b]:.2f}x, "
            f"fire stage {fire[a] / fire[b]:.2f}x (best runs)"
        )
    if not args.no_breakdown:
        for k, v in breakdown(args.data).items():
            unit = "" if k == "matches" else " events/s" if "/s" in k else " s"
            print(f"  in one process: {k}: {v:,.1f}{unit}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
