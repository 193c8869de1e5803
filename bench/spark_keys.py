"""Spark streaming cost per micro-batch against the number of keys (issue 39, item 1):

    python -m bench.spark_keys [--events 20000] [--file-rows 2000] [--keys 10,10000] [--master local[2]]

The issue's stream: ``--events`` events of types A and B (alternating at random), one
per time unit (``ts = seq``), each with a key ``k`` drawn from ``--keys`` keys and a value
``x``, in files of ``--file-rows`` rows, through ``petricep stream --available-now
--max-files-per-trigger 1 --flush`` with ``SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN
500``; the same files through ``petricep run`` (embedded) for the matches to agree with.
Per key count: the stream's total (the command's own summary: JVM start outside it),
its micro-batches' seconds (median of those after the first; the first also starts the
query), and the matches. Every run is a fresh process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PATTERN = "PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 500\n"
ARGS = ["--type-field", "type", "--time-field", "ts"]


def write_files(parts: Path, events: int, file_rows: int, keys: int, seed: int = 39) -> None:
    rng = random.Random(seed)
    parts.mkdir(parents=True)
    for f in range(0, events, file_rows):
        path = parts / f"part-{f // file_rows:05d}.csv"
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("seq,type,ts,k,x\n")
            for i in range(f, min(events, f + file_rows)):
                fh.write(f"{i},{rng.choice('AB')},{i},{rng.randrange(keys)},{rng.randrange(100)}\n")
    for p in parts.iterdir():
        n = int(p.stem.split("-")[1])
        os.utime(p, (1_000_000 + n, 1_000_000 + n))


def _petricep(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PETRICEP_SPARK_LOG="ERROR")
    return subprocess.run([sys.executable, "-m", "petricep", *args], env=env, capture_output=True, text=True)


def embedded(net: Path, parts: Path, tmp: Path) -> dict[str, Any]:
    out = tmp / "run.jsonl"
    files = sorted(str(p) for p in parts.iterdir())
    started = time.perf_counter()
    done = _petricep(["run", str(net), "--events", *files, *ARGS, "--id-field", "seq", "-o", str(out)])
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    return {"wall": time.perf_counter() - started, "matches": sorted(out.read_text().splitlines())}


def stream(net: Path, parts: Path, tmp: Path, extra: list[str]) -> dict[str, Any]:
    out, stats = tmp / "out", tmp / "stats.json"
    started = time.perf_counter()
    done = _petricep(["stream", str(net), "--input", str(parts), "--output", str(out), "--checkpoint", str(tmp / "ck"),
                      *ARGS, "--pos-field", "seq", "--id-field", "seq", "--available-now", "--max-files-per-trigger",
                      "1", "--flush", "--stats", str(stats), "--no-progress", *extra])  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    st = json.loads(stats.read_text())
    secs = [b["seconds"] for b in st["batches"]]
    total = next(x for x in done.stderr.splitlines() if x.startswith("summary: "))
    return {
        "seconds": float(total.split(" matches in ")[1].split(" s ")[0]),
        "wall": wall,
        "batches": secs,
        "matches": sorted(x for f in sorted(out.glob("part-*.jsonl")) for x in f.read_text().splitlines()),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.spark_keys", description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--file-rows", type=int, default=2_000)
    ap.add_argument("--keys", default="10,10000", help="comma-separated key counts")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--extra", default="", help="more `petricep stream` options (e.g. '--key-buckets 8')")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="petricep-keys-"))
    try:
        net = tmp / "p.pcep"
        net.write_text(PATTERN)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.events} events, "
              f"files of {args.file_rows}; master {args.master}")  # fmt: skip
        for keys in (int(k) for k in args.keys.split(",")):
            run = tmp / f"k{keys}"
            write_files(run / "parts", args.events, args.file_rows, keys)
            e = embedded(net, run / "parts", run)
            s = stream(net, run / "parts", run, ["--master", args.master, *args.extra.split()])
            same = "equal" if s["matches"] == e["matches"] else "DIFFERENT"
            later = s["batches"][1:] or s["batches"]
            print(f"{keys} keys: stream {s['seconds']:.1f} s with the flush ({args.events / s['seconds']:,.0f} events/s; "
                  f"process {s['wall']:.1f} s), {len(s['batches'])} micro-batches: first {s['batches'][0]:.2f} s, "
                  f"median after {statistics.median(later):.2f} s, max after {max(later):.2f} s; "
                  f"{len(s['matches'])} matches, {same} to `run`'s ({e['wall']:.2f} s process)")  # fmt: skip
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
