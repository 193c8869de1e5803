"""Whole ``petricep run`` processes, Python engine against the kernel, side by side.

    python -m bench engines [--events 1000000] [--repeat 3] [--aarhus]

Each row is one process as a user runs it (start-up, reading, checking, firing, writing
JSON Lines to a file), timed with the same input in the same loop, best of ``--repeat``.
The baseline is a Python process that only reads the file with pyarrow and scans one
column (issue 16's yardstick: petricep's whole process as a fraction of it). Inputs: the
SASE Q2 CSV (``examples/generate_stocks.py``, ``nets/sase_equal_price.pcep``) and with
``--aarhus`` the Aarhus `.gz` under ``nets/aarhus_speed_collapse.pcep`` and under
``nets/aarhus_congestion.pcep`` (RETURN and a pattern over its composite events, with
contiguity and negation: every event stays in play). Every pair of match files is compared
byte for byte.

The package's bytecode is compiled first (``compileall``), as ``pip install`` does: the
yardstick imports pyarrow from its installed bytecode, and a run from a source tree under
``PYTHONDONTWRITEBYTECODE=1`` (this workplace's setting) would otherwise compile all of
petricep's ~90 modules from source at every start, about 0.15 s of CPU that no installed
``petricep`` pays. ``--no-compile``: time it as it is.
"""

from __future__ import annotations

import argparse
import compileall
import filecmp
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.csv as pa_csv

from bench.common import ROOT, stock_table

AARHUS = ROOT.parent / "shared/data/aarhus_traffic/aarhus_traffic_2014-08-01_to_14.csv.gz"
SCAN = "import sys, pyarrow.csv as c, pyarrow.compute as pc; t = c.read_csv(sys.argv[1]); pc.unique(t[sys.argv[2]])"


def timed(cmd: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t0)
    return best


def compare(label: str, net: Path, events: Path, opts: list[str], scan_column: str, repeat: int, tmp: Path) -> None:
    base = [sys.executable, "-m", "petricep", "run", str(net), "--events", str(events), *opts]
    scan = timed([sys.executable, "-c", SCAN, str(events), scan_column], repeat)
    outs = {}
    times = {}
    for engine in ("python", "kernel"):
        outs[engine] = tmp / f"{label}-{engine}.jsonl"
        times[engine] = timed([*base, "--engine", engine, "-o", str(outs[engine])], repeat)
    same = filecmp.cmp(outs["python"], outs["kernel"], shallow=False)
    matches = sum(1 for _ in outs["kernel"].open())
    print(
        f"| {label} | {scan:.2f} | {times['python']:.2f} | {times['kernel']:.2f} | "
        f"{scan / times['python']:.2f} | {scan / times['kernel']:.2f} | {times['python'] / times['kernel']:.2f}x | "
        f"{matches:,} ({'same bytes' if same else 'DIFFERENT'}) |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench engines", description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--aarhus", action="store_true", help="also the Aarhus speed-collapse and congestion runs over the .gz")
    ap.add_argument("--no-compile", action="store_true", help="do not compile the package's bytecode first")
    args = ap.parse_args(argv)
    if not args.no_compile:
        compileall.compile_dir(ROOT / "petricep", quiet=1)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        csv = tmp / "q2.csv"
        table = stock_table(args.events, 20, 100, 1)
        plain = table.schema
        for i, f in enumerate(plain):
            if hasattr(f.type, "value_type"):
                plain = plain.set(i, f.with_type(f.type.value_type))
        pa_csv.write_csv(table.cast(plain), csv, pa_csv.WriteOptions(quoting_style="none"))
        code = "from source: no bytecode compiled first" if args.no_compile else "bytecode compiled first"
        print(f"# petricep run, whole process, best of {args.repeat} (seconds; ratios: scan / run; {code})")
        print("| input | pyarrow read + scan | run, Python engine | run, kernel | ratio Python | ratio kernel "
              "| kernel speed-up | matches |")
        print("|---|---|---|---|---|---|---|---|")
        compare(f"Q2 CSV, {args.events:,} rows", ROOT / "nets/sase_equal_price.pcep", csv,
                ["--type-field", "type", "--time-field", "ts", "--id-field", "id"], "type", args.repeat, tmp)
        if args.aarhus and AARHUS.exists():
            for name in ("speed_collapse", "congestion"):
                compare(f"Aarhus .gz, {name.replace('_', ' ')}", ROOT / f"nets/aarhus_{name}.pcep", AARHUS,
                        ["--type", "traffic", "--time-field", "TIMESTAMP", "--id-field", "_id"], "REPORT_ID",
                        args.repeat, tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
