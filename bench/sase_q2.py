"""Workload 1: SASE's Q2 (three equal-price stocks, skip-till-next-match, ``[price]``,
window 10000) over a SASE-style stream (examples/generate_stocks.py).

    python -m bench sase [--events 1000000] [--symbols 20] [--max-price 100] [--repeat 3] [--csv FILE]

The stream is held in memory as an Arrow table, as SASE holds its generated stream in
memory; the timed part is everything petricep does with it: the prefilter, building
events, the firing loop and match objects (nothing written). ``--csv FILE`` also writes
the stream there, for running SASE on the same events.
"""

from __future__ import annotations

import argparse
from functools import partial

import pyarrow.csv as pa_csv

from bench.common import ROOT, header, measure, row, stock_table
from petricep.io.readers import InputSpec, events_from_table
from petricep.lang.parser import parse_file
from petricep.merge import build_net

SPEC = InputSpec(path="<stocks>", type_field="type", time_field="ts", id_field="id")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench sase", description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--symbols", type=int, default=20)
    ap.add_argument("--max-price", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    ap.add_argument("--csv", help="also write the stream to this CSV file (for SASE)")
    args = ap.parse_args(argv)
    table = stock_table(args.events, args.symbols, args.max_price, args.seed)
    if args.csv:
        pa_csv.write_csv(table.cast(table.schema.set(2, table.schema.field(2).with_type(table.schema.field(2).type.value_type))
                                    .set(3, table.schema.field(3).with_type(table.schema.field(3).type.value_type))),
                         args.csv, pa_csv.WriteOptions(quoting_style="none"))
    net = build_net(list(parse_file(str(ROOT / "nets" / "sase_equal_price.pcep")).patterns))
    print(f"# workload 1: SASE Q2, {args.events:,} events, {args.symbols} symbols, prices 1..{args.max_price}, seed {args.seed}")
    print(header())
    for label, pf in (("petricep, prefilter on", True), ("petricep, prefilter off", False)):
        r = measure(args.repeat, net, partial(events_from_table, table, SPEC), prefilter=pf)
        print(row(label, r) + f" events built: {r.events:,}")
    return 0
