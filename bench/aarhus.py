"""Workload 6: the Aarhus traffic data (1,508,886 events) with a selective pattern
(nets/aarhus_speed_collapse.pcep), against the floor: reading and scanning the same file
with pyarrow alone (read the gzipped CSV, evaluate the pattern's single-event conditions).

    python -m bench aarhus [--file ...csv.gz] [--repeat 3] [--pattern nets/aarhus_speed_collapse.pcep]

petricep runs as ``petricep run`` does (its CSV reader, the prefilter, the engine; matches
built, not written); ``--no-prefilter`` is timed too.
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial

import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from bench.common import ROOT, Run, best_run, header, measure, row, run_source
from petricep.io.readers import InputSpec, open_events
from petricep.lang.parser import parse_file
from petricep.merge import build_net

DATA = ROOT.parent / "shared" / "data" / "aarhus_traffic" / "aarhus_traffic_2014-08-01_to_14.csv.gz"


def pyarrow_floor(path: str, threads: bool = True) -> Run:
    """Read the file with pyarrow and count the rows a selective pattern would look at
    (``threads=False``: pyarrow on one core, as petricep's firing loop)."""
    start = time.perf_counter()
    table = pa_csv.read_csv(path, read_options=pa_csv.ReadOptions(use_threads=threads))
    speed, count = table["avgSpeed"], table["vehicleCount"]
    a = pc.greater(speed, 100)
    b = pc.and_(pc.less(speed, 10), pc.greater(count, 0))
    hits = pc.sum(pc.or_(a, b)).as_py()
    seconds = time.perf_counter() - start
    return Run(seconds, table.num_rows, table.num_rows, hits, 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench aarhus", description=__doc__.splitlines()[0])
    ap.add_argument("--file", default=str(DATA))
    ap.add_argument("--pattern", default=str(ROOT / "nets" / "aarhus_speed_collapse.pcep"))
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    args = ap.parse_args(argv)
    if not os.path.exists(args.file):
        print(f"no data at {args.file}")
        return 1
    net = build_net(list(parse_file(args.pattern).patterns))
    spec = InputSpec(path=args.file, type_const="traffic", time_field="TIMESTAMP", id_field="_id")
    print(f"# workload 6: Aarhus traffic, {os.path.basename(args.pattern)}")
    print(header())
    floor = best_run(args.repeat, lambda: pyarrow_floor(args.file))
    print(row("pyarrow: read + scan (the floor; matches = rows passing a guard)", floor))
    single = best_run(args.repeat, lambda: pyarrow_floor(args.file, threads=False))
    print(row("pyarrow on one thread: read + scan", single))
    on = measure(args.repeat, net, partial(open_events, spec))
    print(row("petricep, prefilter on", on) + f" events built: {on.events:,}")
    off = run_source(net, partial(open_events, spec), prefilter=False)
    print(row("petricep, prefilter off", off) + f" events built: {off.events:,}")
    print(f"\npetricep / pyarrow rate: {on.rate / floor.rate:.2f} (prefilter on), {off.rate / floor.rate:.2f} (off)")
    print(f"petricep / pyarrow on one thread: {on.rate / single.rate:.2f} (prefilter on), {off.rate / single.rate:.2f} (off)")
    return 0
