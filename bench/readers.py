"""Reading speed of the event readers, two petricep trees side by side in one run.

    python -m bench.readers [--rows N] [--repeat R] OTHER_TREE

Writes the first N Aarhus rows as CSV, gzip CSV, JSON Lines and Parquet, then reads each
(type constant, ISO timestamps, the pattern fields required and numeric, as `run` asks)
with this tree and with OTHER_TREE (a directory holding another `petricep/`), each in a
fresh subprocess, alternating, best of R; prints rows/s and the ratio this/other.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
AARHUS = ROOT.parent / "shared" / "data" / "aarhus_traffic" / "aarhus_traffic_2014-08-01_to_14.csv.gz"

READ = """
import sys, time
from petricep.io import InputSpec, open_events
spec = InputSpec(sys.argv[1], type_const="traffic", time_field="TIMESTAMP", id_field="_id",
                 required={"traffic": frozenset({"REPORT_ID", "status"})},
                 numeric={"traffic": frozenset({"avgSpeed", "vehicleCount"})})
t = time.perf_counter()
n = sum(1 for _ in open_events(spec))
print(n, time.perf_counter() - t)
"""


def write_inputs(rows: int, tmp: Path) -> dict[str, Path]:
    with gzip.open(AARHUS, "rt", encoding="utf-8") as f:
        lines = list(itertools.islice(f, rows + 1))
    csv_path = tmp / "a.csv"
    csv_path.write_text("".join(lines), encoding="utf-8")
    gz_path = tmp / "a.csv.gz"
    gz_path.write_bytes(gzip.compress(csv_path.read_bytes()))
    table = pa_csv.read_csv(csv_path)
    pq_path = tmp / "a.parquet"
    pq.write_table(table, pq_path)
    jl_path = tmp / "a.jsonl"
    with open(jl_path, "w", encoding="utf-8") as f:
        for rec in table.to_pylist():
            f.write(json.dumps(rec, default=str) + "\n")
    return {"csv": csv_path, "csv.gz": gz_path, "jsonl": jl_path, "parquet": pq_path}


def timed(tree: Path, path: Path) -> tuple[int, float]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", READ, str(path)], env=env, check=True, capture_output=True, text=True)
    n, secs = out.stdout.split()
    return int(n), float(secs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("other", type=Path)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inputs = write_inputs(args.rows, Path(tmp))
        print(f"{'format':8} {'this rows/s':>12} {'other rows/s':>13} {'this/other':>10}")
        for fmt, path in inputs.items():
            best = {"this": float("inf"), "other": float("inf")}
            rows = 0
            for _ in range(args.repeat):
                for name, tree in (("this", ROOT), ("other", args.other)):
                    rows, secs = timed(tree, path)
                    best[name] = min(best[name], secs)
            this, other = rows / best["this"], rows / best["other"]
            print(f"{fmt:8} {this:12,.0f} {other:13,.0f} {this / other:10.2f}")


if __name__ == "__main__":
    main()
