"""Workload 2: OpenCEP's NASDAQ query, ``SEQ(MSFT a, DRIV b, CBRL c)`` with
``a.peak < b.peak < c.peak``, windows 2, 5 and 30 min, under OpenCEP's tie rule
(``either``: events with equal timestamps may match in either order).

    python -m bench nasdaq [--file NASDAQ_MEDIUM.txt] [--repeat-file 1 20] [--windows 2 5 30]
                           [--repeat 5] [--matches-dir DIR]

The file is held in memory (Arrow); ``--repeat-file 20`` appends 19 copies, each a day
later (what OpenCEP is fed for the same comparison). ``--matches-dir`` writes each run's
matches as ``a,b,c`` row numbers (0-based, as OpenCEP's InternalIndexAttributeName) to
``DIR/petricep_<repeat>x_<w>min.txt``, sorted, to compare the match sets.
"""

from __future__ import annotations

import argparse
import os
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

from bench.common import header, measure, row
from petricep.io.readers import InputSpec, events_from_table
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from petricep.runtime.engine import Engine

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "opencep_events", "NASDAQ_MEDIUM.txt")
COLUMNS = ["ticker", "ts", "open", "peak", "low", "close", "volume"]
SPEC = InputSpec(path="<nasdaq>", type_field="ticker", time_field="ts", time_format="%Y%m%d%H%M")
PATTERN = "PATTERN rising_peaks: SEQ(MSFT a, DRIV b, CBRL c) WHERE a.peak < b.peak < c.peak WITHIN {w} min\n"


def load(path: str, copies: int) -> pa.Table:
    """The Metastock file, ``copies`` times, each copy one day after the previous one."""
    opts = pa_csv.ReadOptions(column_names=COLUMNS)
    conv = pa_csv.ConvertOptions(column_types={"ts": pa.string(), "ticker": pa.string()})
    one = pa_csv.read_csv(path, read_options=opts, convert_options=conv)
    if copies == 1:
        return one
    parts = []
    base = np.array([np.datetime64(f"{s[:4]}-{s[4:6]}-{s[6:8]}T{s[8:10]}:{s[10:12]}") for s in one["ts"].to_pylist()])
    for k in range(copies):
        shifted = base + np.timedelta64(k, "D")
        text = [str(t).replace("-", "").replace("T", "").replace(":", "") for t in shifted]
        parts.append(one.set_column(1, "ts", pa.array(text, pa.string())))
    return pa.concat_tables(parts)


def match_rows(net: object, table: pa.Table) -> list[str]:
    engine = Engine(net, tie="either")  # type: ignore[arg-type]
    out = []
    for m in engine.run(events_from_table(table, SPEC)):
        ids = m.ids
        out.append(f"{ids['a']},{ids['b']},{ids['c']}")
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench nasdaq", description=__doc__.splitlines()[0])
    ap.add_argument("--file", default=os.path.normpath(DATA))
    ap.add_argument("--repeat-file", type=int, nargs="+", default=[1, 20])
    ap.add_argument("--windows", type=float, nargs="+", default=[2, 5, 30])
    ap.add_argument("--repeat", type=int, default=5, help="best of N runs (default 5)")
    ap.add_argument("--matches-dir", help="write the match sets here")
    args = ap.parse_args(argv)
    print(f"# workload 2: OpenCEP's NASDAQ query over {os.path.basename(args.file)}, tie rule 'either'")
    print(header())
    for copies in args.repeat_file:
        table = load(args.file, copies)
        for w in args.windows:
            wtext = f"{w:g}"
            net = build_net(list(parse_text(PATTERN.format(w=wtext), "<bench>").patterns))
            r = measure(args.repeat, net, partial(events_from_table, table, SPEC), tie="either")
            print(row(f"{copies}x file, window {wtext} min", r))
            if args.matches_dir:
                os.makedirs(args.matches_dir, exist_ok=True)
                with open(os.path.join(args.matches_dir, f"petricep_{copies}x_{wtext}min.txt"), "w") as f:
                    f.writelines(line + "\n" for line in match_rows(net, table))
    return 0
