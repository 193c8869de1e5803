"""The library's match table against the kernel's own pass: what ``petricep.match`` adds.

    python -m bench library [--events 1000000] [--repeat 5]

SASE's Q2 (``nets/sase_equal_price.pcep``) over W1's stock stream, written to a CSV file and
read back by pyarrow (the table a user has), side by side in one run:

* ``kernel``: the compiled kernel over the table in memory (``KernelRun.push`` + ``flush``);
* ``match``: ``petricep.match(table, ...)``, the whole library call (input checks, the run,
  the match table from the kernel's record batches);
* ``match via objects``: the same run, its table made from a :class:`Match` per match
  (``FrameRun.matches`` + ``to_table``: what ``match`` did before it took the batches);
* ``... , dictionary types``: the kernel and ``match`` over the same table with its type
  column dictionary-encoded (issue 40: a plain text type column as cheap as that one).

Best of ``--repeat`` each; the ratios are what to read (the machine is shared).
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv

import petricep
from bench.common import stock_table
from petricep.api.frames import run_matches
from petricep.kernel import KernelRun
from petricep.lang.parser import parse_file
from petricep.merge import build_net
from petricep.output.table import to_table

ROOT = Path(__file__).resolve().parent.parent
PATTERN = ROOT / "nets" / "sase_equal_price.pcep"
OPTS: dict[str, Any] = {"type_field": "type", "time_field": "ts", "id_field": "id"}


def _best(repeat: int, fn: Callable[[], int]) -> tuple[float, int]:
    top, rows = float("inf"), 0
    for _ in range(max(1, repeat)):
        gc.collect()
        start = time.perf_counter()
        rows = fn()
        top = min(top, time.perf_counter() - start)
    return top, rows


def _csv_table(events: int) -> pa.Table:
    """W1's stream as a user has it: a CSV file read by pyarrow (the type column plain text)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "q2.csv"
        table = stock_table(events, 20, 100, 1)
        pacsv.write_csv(table.cast(pa.schema([f.with_type(pa.string()) if pa.types.is_dictionary(f.type) else f for f in table.schema])), path)
        return pacsv.read_csv(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench library", description=__doc__)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    table = _csv_table(args.events)
    text = PATTERN.read_text()
    net = build_net(list(parse_file(str(PATTERN)).patterns))

    i = table.schema.get_field_index("type")
    coded = table.set_column(i, "type", table.column("type").dictionary_encode())

    def kernel(t: pa.Table = table) -> int:
        run = KernelRun(net, **OPTS)
        return sum(out.num_rows for out in (run.push(t), run.flush()))

    def library(t: pa.Table = table) -> int:
        return int(petricep.match(t, text, **OPTS).num_rows)

    def objects() -> int:
        run = run_matches(table, text, **OPTS)
        return int(to_table(run.matches, run.layout, False, run.events_of, run.input.id_type).num_rows)

    rows = {}
    print(f"| {args.events:,} events (CSV read by pyarrow) | seconds (best of {args.repeat}) | events/s | / kernel | matches |")
    print("|---|---|---|---|---|")
    k_s = 0.0
    runs: list[tuple[str, Callable[[], int]]] = [("kernel", kernel), ("match", library), ("match via objects", objects)]
    runs += [("kernel, dictionary types", lambda: kernel(coded)), ("match, dictionary types", lambda: library(coded))]
    for label, fn in runs:
        s, rows[label] = _best(args.repeat, fn)
        k_s = k_s or s
        print(f"| {label} | {s:.3f} | {args.events / s:,.0f} | {s / k_s:.1f}x | {rows[label]:,} |")
    return 0 if len(set(rows.values())) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
