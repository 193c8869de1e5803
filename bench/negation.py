"""Workload 3 (paper 000): negation pushed into the scan vs applied after construction.

L = 5: ``SEQ(A a, B b, !(C c), D d, E e)`` with ``[attr1]``, five event types at 20 %
each, count windows 500..900 events. Pushed (petricep's default): a C event cancels the
partial matches ``a;b`` of its partition at once. After construction
(``build_net(push_negations=False)``, SASE's way): every sequence is built, then checked
against the buffered C events when it completes.

Intermediate results, two counts: every partial match created (complete ones included),
and paper 000's own measure, the complete sequences constructed (sequence construction's
output before the negation filter: candidates after construction, matches when pushed).

    python -m bench negation [--events 10000] [--keys 5] [--windows 500 600 700 800 900] [--repeat 3]
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

PATTERN = "PATTERN pncep: SEQ(A a, B b, !(C c), D d, E e) WHERE [attr1] AND d.attr2 = 1 WITHIN {w} EVENTS\n"
SPEC = InputSpec(path="<negation>", type_field="type", time_field="ts")


def stream(events: int, keys: int, seed: int) -> pa.Table:
    """Types A..E uniformly (20 % each), attr1 uniform over ``keys`` values, attr2 over 0..9."""
    rng = np.random.default_rng(seed)
    types = np.array(list("ABCDE"), dtype=object)[rng.integers(0, 5, events)]
    return pa.table(
        {
            "type": pa.array(types, pa.string()),
            "ts": np.arange(events, dtype=np.int64),
            "attr1": rng.integers(0, keys, events),
            "attr2": rng.integers(0, 10, events),
        }
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench negation", description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--keys", type=int, default=5, help="distinct attr1 values (default 5)")
    ap.add_argument("--windows", type=int, nargs="+", default=[500, 600, 700, 800, 900])
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    ap.add_argument("--plot", metavar="FILE.png", help="also draw throughput and intermediate results against W")
    args = ap.parse_args(argv)
    table = stream(args.events, args.keys, args.seed)
    rates: dict[str, list[tuple[float, float]]] = {"pushed": [], "after construction": []}
    created: dict[str, list[tuple[float, float]]] = {"pushed": [], "after construction": []}
    constructed: dict[str, list[tuple[float, float]]] = {"pushed": [], "after construction": []}
    print(f"# workload 3: paper 000, {args.events:,} events, 5 types at 20 %, {args.keys} attr1 values")
    print(
        header().replace(
            " s |\n",
            " s | sequences constructed per 1,000 | pushed: throughput ratio | pushed: partial matches ratio "
            "| pushed: sequences constructed ratio |\n",
        )
        + "---|---|---|---|"
    )
    for w in args.windows:
        patterns = list(parse_text(PATTERN.format(w=w), "<bench>").patterns)
        runs = []
        for label, push in (("pushed", True), ("after construction", False)):
            net = build_net(patterns, push_negations=push)
            runs.append((label, measure(args.repeat, net, partial(events_from_table, table, SPEC), collect=False)))
        (_, pushed), (_, after) = runs
        assert pushed.matches == after.matches, "both modes must find the same matches"
        for label, r in runs:
            rates[label].append((w, r.rate))
            created[label].append((w, 1000 * r.created / max(1, r.rows)))
            constructed[label].append((w, 1000 * r.completed / max(1, r.rows)))
            extra = f" {1000 * r.completed / max(1, r.rows):,.1f} |"
            if r is pushed:
                extra += (
                    f" {pushed.rate / after.rate:.1f}x | 1/{after.created / max(1, pushed.created):.1f}"
                    f" | 1/{after.completed / max(1, pushed.completed):.1f} |"
                )
            else:
                extra += " | | |"
            print(row(f"W={w}, {label}", r) + extra)
    if args.plot:
        from bench.plots import panels

        panels(args.plot, f"paper 000: negation pushed into the scan vs applied after ({args.events:,} events)",
               "count window W (events)",
               [("events/s", rates, True), ("partial matches created per 1,000 events", created, True),
                ("sequences constructed per 1,000 events", constructed, True)])
    return 0
