"""The Aarhus traffic data (1.5M events, 449 sensors) through the embedded engine and
Spark ``local[1]`` / ``local[2]``: times, speed-up, and where the time goes.

    python -m bench.spark_aarhus [--data FILE] [--masters local[1],local[2]] [--repeat 2]

For every master a fresh process starts Spark and runs the batch pipeline ``--repeat``
times over the file (the first run pays the JVM's warm-up); every run's matches are
checked against the embedded engine's. The breakdown times, in one Python process, what
the Spark tasks do per event besides Spark's own work: reading rows into events, routing
and encoding them (parse stage: whole events as blobs, or a kernel group's typed columns),
and the firing stage both ways (blobs decoded into events pushed one by one; typed
batches handed to the kernel as columns).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
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
    from petricep.api import compile_files
    from petricep.io.output import match_json
    from petricep.io.readers import open_events
    from petricep.runtime.engine import Engine

    net = compile_files([str(NET)])
    start = time.perf_counter()
    engine = Engine(net)
    lines = [match_json(m) for e in open_events(spec(path)) for m in engine.push(e)]
    lines += [match_json(m) for m in engine.flush()]
    return {
        "seconds": time.perf_counter() - start,
        "matches": len(lines),
        "digest": digest(lines),
        "load": load(),
    }


def breakdown(path: str) -> dict[str, float]:
    """Seconds, in this process, for what the Spark tasks do per event besides Spark's own
    work: reading the rows into events; routing and encoding them for the shuffle (parse
    stage: whole events as blobs, as the Python engine's groups get them, and a kernel
    group's typed columns); then the firing stage, both ways: blobs decoded into events
    pushed one by one, and typed batches handed to the kernel as columns
    (``push_columns``), ticks included."""
    import gc

    from petricep.api import compile_files
    from petricep.io.readers import open_events
    from petricep.spark.partition import StreamClock, group_runner, kernel_fields
    from petricep.spark.plan import Router, make_plan
    from petricep.spark.rows import decode, encode
    from petricep.spark.shuffle import Layout, Rows, columns

    net = compile_files([str(NET)])
    plan = make_plan(net)
    router = Router(plan)
    layout = Layout.of([kernel_fields(net, g) for g in plan.groups])
    out: dict[str, float] = {}
    gc.disable()
    try:
        t = time.perf_counter()
        events = list(open_events(spec(path)))
        out["read rows into events"] = time.perf_counter() - t
        names = tuple(events[0].attrs)
        clock = StreamClock.from_events(events)
        t = time.perf_counter()
        blobs = [(router.route(e), encode(e, names)) for e in events]
        out["route + encode whole events (blobs)"] = time.perf_counter() - t
        t = time.perf_counter()
        batches = []
        for i in range(0, len(events), 10_000):
            rows = Rows(layout)
            for e in events[i : i + 10_000]:
                for g, key in router.route(e):
                    rows.add_event(0, g, key, e.pos, e)
            batches.append(rows.batch())
        out["route + typed columns (kernel group)"] = time.perf_counter() - t
        t = time.perf_counter()
        decoded = [decode(b, e.pos, False, names) for (_, b), e in zip(blobs, events)]
        out["fire, per event: decode blobs"] = time.perf_counter() - t
        del blobs, events
        t = time.perf_counter()
        runner = group_runner(net, plan.groups[0], clock)
        n = sum(len(runner.push(e)) for e in decoded) + len(runner.finish())
        out["fire, per event: kernel runner push"] = time.perf_counter() - t
        t = time.perf_counter()
        runner = group_runner(net, plan.groups[0], clock)
        m = 0
        for batch in batches:
            pos = batch.column("lid").to_numpy().tolist()
            m += len(runner.push_columns(columns(batch, 0, batch.num_rows, pos, layout, 0, False)))
        m += len(runner.finish())
        out["fire, typed batches: columns + push_columns"] = time.perf_counter() - t
        assert m == n, (m, n)
        out["matches"] = n
    finally:
        gc.enable()
    return out


# ----------------------------------------------------------------------------- spark


def worker(master: str, path: str, repeat: int) -> None:
    """One Spark master, in its own process: a JSON line per run on stdout."""
    from petricep.api import compile_files
    from petricep.spark.batch import BatchRun, ordered_json
    from petricep.spark.session import get_session

    t = time.perf_counter()
    spark = get_session(master)
    session = time.perf_counter() - t
    net = compile_files([str(NET)])
    for i in range(repeat):
        t0 = time.perf_counter()
        run = BatchRun(spark, net)
        parsed = run.parse_file(spec(path))
        t1 = time.perf_counter()
        lines = list(ordered_json(run.fire(parsed, raise_errors=False)))
        t2 = time.perf_counter()
        print(
            json.dumps(
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
            ),
            flush=True,
        )
    spark.stop()


def spark_runs(master: str, path: str, repeat: int) -> list[dict[str, Any]]:
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
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PETRICEP_SPARK_LOG="ERROR")
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
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
            print(f"  in one process: {k}: {v:.1f}" + ("" if k == "matches" else " s"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
