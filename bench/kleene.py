"""Workload 4 (paper 001): Kleene closure under skip-till-any-match, windows 50..300, on
the Python reference engine (its partial matches share their prefix: tokens point to their
predecessor, as paper 001's chains).

``SEQ(A a, B+ b[], C c) WHERE skip-till-any-match AND b[i].val >= b[i-1].val WITHIN w``
over a synthetic "ABC" stream: A 30 %, B 40 %, C 30 %, val uniform 0..99, ten time units
per event (paper 001's stream has the same three roles).

    python -m bench kleene [--events 2000] [--windows 50 100 150 200 250 300] [--repeat 3]
"""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np
import pyarrow as pa

from bench.common import header, measure, row
from petricep.io.readers import InputSpec, events_from_table
from petricep.lang.parser import parse_text
from petricep.merge import build_net

PATTERN = "PATTERN linked: SEQ(A a, B+ b[], C c) WHERE skip-till-any-match AND b[i].val >= b[i-1].val WITHIN {w}\n"
SPEC = InputSpec(path="<abc>", type_field="type", time_field="ts")


def stream(events: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    types = np.array(list("ABC"), dtype=object)[rng.choice(3, events, p=[0.3, 0.4, 0.3])]
    return pa.table(
        {"type": pa.array(types, pa.string()), "ts": np.arange(0, 10 * events, 10, dtype=np.int64), "val": rng.integers(0, 100, events)}
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench kleene", description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=2_000)
    ap.add_argument("--windows", type=int, nargs="+", default=[50, 100, 150, 200, 250, 300])
    ap.add_argument("--seed", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    ap.add_argument("--plot", metavar="FILE.png", help="also draw throughput and peak memory against W")
    args = ap.parse_args(argv)
    table = stream(args.events, args.seed)
    rates: dict[str, list[tuple[float, float]]] = {"prefix-shared": []}
    memory: dict[str, list[tuple[float, float]]] = {"prefix-shared": []}
    print(f"# workload 4: paper 001, {args.events:,} events (A 30 %, B 40 %, C 30 %, 10 time units apart)")
    print(header())
    for w in args.windows:
        net = build_net(list(parse_text(PATTERN.format(w=w), "<bench>").patterns))
        r = measure(args.repeat, net, partial(events_from_table, table, SPEC), collect=False)
        print(row(f"W={w}", r))
        rates["prefix-shared"].append((w, r.rate))
        memory["prefix-shared"].append((w, r.peak_mib))
    if args.plot:
        from bench.plots import panels

        panels(args.plot, f"paper 001: Kleene closure, prefix-shared partial matches ({args.events:,} events)",
               "time window W", [("events/s", rates, True), ("peak MiB (tracemalloc)", memory, False)])
    return 0
