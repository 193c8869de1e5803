"""Spark Structured Streaming vs Spark batch on the Aarhus traffic data, side by side
in one run (issue 14):

    python -m bench.spark_stream [--rows 300000] [--file-rows 100000] [--master local[2]] [--net F] [--both]

* batch: ``petricep run --engine spark`` over the first ``--rows`` rows (one CSV file);
* stream: ``petricep stream --available-now --max-files-per-trigger 1 --flush`` over the
  same rows cut into files of ``--file-rows`` rows (a ``seq`` column), one micro-batch
  per file: sustained events/s over the micro-batches after the first, time to the first
  committed micro-batch (query start to its end), and the total with the flush;
* per-micro-batch overhead: the same stream over files of 100 rows (what a micro-batch
  costs when it carries almost nothing);
* ``--both``: the two stream runs again with every key on the Python engine
  (``PETRICEP_NO_KERNEL=1``), beside the kernel's (keys' state as the kernel's arrays),
  with the size of the state store's files at the end.

Every run is a fresh ``petricep`` process (its JVM start is outside the timed part: the
figures are the command's own ``summary`` / ``--stats`` times); the stream's matches
are checked against the batch run's.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "aarhus_traffic" / "aarhus_traffic_2014-08-01_to_14.csv.gz"
NET = ROOT / "nets" / "aarhus_speed_collapse.pcep"
ARGS = ["--type", "traffic", "--time-field", "TIMESTAMP", "--id-field", "_id"]


def write_data(tmp: Path, rows: int, file_rows: int) -> tuple[Path, Path]:
    """The first ``rows`` rows with a seq column: one file, and a directory of parts."""
    parts = tmp / "parts"
    parts.mkdir()
    whole = tmp / "all.csv"
    with gzip.open(DATA, "rt", encoding="utf-8") as fh, open(whole, "w", encoding="utf-8") as out:
        header = fh.readline().rstrip("\n") + ",seq\n"
        out.write(header)
        part = None
        for i, line in enumerate(fh):
            if i >= rows:
                break
            if i % file_rows == 0:
                if part is not None:
                    part.close()
                path = parts / f"part-{i // file_rows:05d}.csv"
                part = open(path, "w", encoding="utf-8")  # noqa: SIM115
                part.write(header)
                os.utime(path, (1_000_000 + i // file_rows,) * 2)
            row = f"{line.rstrip()},{i}\n"
            out.write(row)
            part.write(row)  # type: ignore[union-attr]
        if part is not None:
            part.close()
    for p in parts.iterdir():  # closing a file touches it: set the order again
        n = int(p.stem.split("-")[1])
        os.utime(p, (1_000_000 + n, 1_000_000 + n))
    return whole, parts


def _petricep(args: list[str], kernel: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PETRICEP_SPARK_LOG="ERROR")
    if not kernel:
        env["PETRICEP_NO_KERNEL"] = "1"
    return subprocess.run([sys.executable, "-m", "petricep", *args], env=env, capture_output=True, text=True)


def batch(whole: Path, tmp: Path, master: str, net: Path = NET) -> dict[str, Any]:
    out, stats = tmp / "batch.jsonl", tmp / "batch-stats.json"
    started = time.perf_counter()
    done = _petricep(["run", str(net), "--events", str(whole), *ARGS, "-o", str(out), "--engine", "spark",
                      "--master", master, "--stats", str(stats), "--no-progress"])  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    st = json.loads(stats.read_text())
    return {"events": st["events"]["read"], "seconds": st["spark"]["seconds"], "wall": wall,
            "matches": sorted(out.read_text().splitlines())}  # fmt: skip


def stream(parts: Path, tmp: Path, master: str, name: str, net: Path = NET, kernel: bool = True) -> dict[str, Any]:
    out, stats = tmp / f"{name}-out", tmp / f"{name}-stats.json"
    started = time.perf_counter()
    done = _petricep(["stream", str(net), "--input", str(parts), "--output", str(out), "--checkpoint",
                      str(tmp / f"{name}-ck"), *ARGS, "--pos-field", "seq", "--master", master,
                      "--available-now", "--max-files-per-trigger", "1", "--flush", "--stats", str(stats)],
                     kernel)  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    st = json.loads(stats.read_text())
    data = [b for b in st["batches"] if b["read"]]
    later = data[1:] or data
    total = next(x for x in done.stderr.splitlines() if x.startswith("summary: "))
    return {
        "events": st["events"]["read"],
        "micro_batches": len(data),
        "first_batch_s": data[0]["seconds"],
        "sustained": sum(b["read"] for b in later) / sum(b["seconds"] for b in later),
        "per_batch_s": sum(b["seconds"] for b in data) / len(data),
        "seconds": float(total.split(" matches in ")[1].split(" s ")[0]),
        "wall": wall,
        "matches": sorted(x for f in sorted(out.glob("part-*.jsonl")) for x in f.read_text().splitlines()),
        "engine": st.get("engine", {}).get("name", "?"),
        # the state store's files of the last committed version (RocksDB), summed
        "state_bytes": sum(f.stat().st_size for f in (tmp / f"{name}-ck" / "state").rglob("*") if f.is_file()),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.spark_stream", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--file-rows", type=int, default=100_000)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--net", type=Path, default=NET, help=f"the pattern file (default {NET.name})")
    ap.add_argument("--both", action="store_true", help="also the stream with every key on the Python engine")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="petricep-bench-"))
    try:
        whole, parts = write_data(tmp, args.rows, args.file_rows)
        (tmp / "small").mkdir()
        _, small = write_data(tmp / "small", 2_000, 100)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.rows} rows, "
              f"files of {args.file_rows}; master {args.master}")  # fmt: skip
        b = batch(whole, tmp, args.master, args.net)
        rate_b = b["events"] / b["seconds"]
        print(f"batch : {b['events']} events in {b['seconds']:.1f} s = {rate_b:,.0f} events/s "
              f"({len(b['matches'])} matches; process {b['wall']:.1f} s)")  # fmt: skip
        for kernel in (True, False) if args.both else (True,):
            label = "kernel keys" if kernel else "Python keys (PETRICEP_NO_KERNEL=1)"
            s = stream(parts, tmp, args.master, f"stream-{kernel}", args.net, kernel)
            o = stream(small, tmp, args.master, f"small-{kernel}", args.net, kernel)
            assert s["matches"] == b["matches"], "the stream's matches differ from the batch run's"
            print(f"stream, {label} (engine: {s['engine']}): {s['events']} events, {s['micro_batches']} micro-batches, "
                  f"{s['seconds']:.1f} s with the flush; sustained {s['sustained']:,.0f} events/s = "
                  f"{s['sustained'] / rate_b:.0%} of batch; first micro-batch committed after {s['first_batch_s']:.1f} s "
                  f"(process {s['wall']:.1f} s); state store files {s['state_bytes'] / 1e6:.1f} MB")  # fmt: skip
            print(f"overhead, {label}: {o['micro_batches']} micro-batches of 100 rows: {o['per_batch_s']:.2f} s each")
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
