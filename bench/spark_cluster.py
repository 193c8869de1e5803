"""A Spark standalone cluster against ``local[2]`` on the same data, side by side (issue 14):

    python -m bench.spark_cluster [--rows 300000] [--workers 2] [--repeat 2]

Starts a master and ``--workers`` workers of one core each on 127.0.0.1
(:mod:`petricep.spark.standalone`), then runs ``petricep run --engine spark`` over the first
``--rows`` Aarhus rows with ``nets/aarhus_congestion.pcep``, alternately with ``--master
local[2]`` and the cluster's URL, best of ``--repeat``. Times are the command's own summary
(its Spark run, without the JVM's start); the match files are compared (as sets: matches a
single input event releases for different keys may come in another order).
"""

from __future__ import annotations

import argparse
import gzip
import re
import subprocess
import sys
import tempfile
from itertools import islice
from pathlib import Path

from petricep.spark.standalone import daemon_env, standalone_cluster

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "aarhus_traffic" / "aarhus_traffic_2014-08-01_to_14.csv.gz"
NET = ROOT / "nets" / "aarhus_congestion.pcep"
ARGS = ["--type", "traffic", "--time-field", "TIMESTAMP", "--id-field", "_id"]
SUMMARY = re.compile(r"summary: (\d+) events read .*; (\d+) matches in ([0-9.]+) s")


def run(events: Path, master: str, out: Path) -> tuple[float, int]:
    cmd = [sys.executable, "-m", "petricep", "run", str(NET), "--events", str(events), *ARGS,
           "--engine", "spark", "--master", master, "-o", str(out), "--no-progress"]  # fmt: skip
    done = subprocess.run(cmd, env=daemon_env(), capture_output=True, text=True, check=True)
    found = SUMMARY.search(done.stderr)
    if found is None:
        raise RuntimeError(done.stderr[-2000:])
    return float(found.group(3)), int(found.group(2))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.spark_cluster", description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        events = tmp / "aarhus.csv"
        with gzip.open(DATA, "rt", encoding="utf-8") as src, open(events, "w", encoding="utf-8") as dst:
            dst.writelines(islice(src, args.rows + 1))
        with standalone_cluster(tmp, workers=args.workers, cores=1) as url:
            best: dict[str, float] = {}
            lines: dict[str, list[str]] = {}
            for _ in range(args.repeat):
                for label, master in (("local[2]", "local[2]"), (f"cluster, {args.workers} x 1 core", url)):
                    out = tmp / f"{label[:5]}.jsonl"
                    secs, matches = run(events, master, out)
                    best[label] = min(best.get(label, secs), secs)
                    lines[label] = sorted(out.read_text().splitlines())
        same = len({tuple(v) for v in lines.values()}) == 1
        print(f"# {args.rows:,} Aarhus rows, {NET.name}, best of {args.repeat} (seconds of the Spark run)")
        print("| master | s | events/s | matches |")
        print("|---|---|---|---|")
        for label, secs in best.items():
            print(f"| {label} | {secs:.1f} | {args.rows / secs:,.0f} | {len(lines[label]):,} |")
        print(f"match sets {'identical' if same else 'DIFFERENT'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
