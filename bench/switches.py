"""The engine's own optimizations, each against its switch, side by side in one process:
firing code generated per net (``Engine(generated=False)``: the interpreter) and the expiry
index (``Engine(expiry_index=False)``: every sweep visits every partition).

Engine only: events are built once, in memory, before timing; CPU time (``process_time``),
best of N, the variants alternating; matches counted, not built (``collect=False``).

    python -m bench switches [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from bench.common import ROOT, fresh, stock_stream
from petricep.api import compile_text
from petricep.compile.net import Net
from petricep.events import Event
from petricep.lang.parser import parse_file
from petricep.merge import build_net
from petricep.runtime.engine import Engine

VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "interpreter (generated=False)": {"generated": False},
    "full sweeps (expiry_index=False)": {"expiry_index": False},
}


def sase_q2() -> tuple[Net, list[Event], str]:
    """Workload 1's events that reach the engine (types stock1..3 of 1M rows)."""
    net = build_net(list(parse_file(str(ROOT / "nets" / "sase_equal_price.pcep")).patterns))
    events = [e for e in stock_stream(1_000_000, 20, 100, 1) if e.type in ("stock1", "stock2", "stock3")]
    return net, events, "arrival"


def nasdaq(minutes: int = 30) -> tuple[Net, list[Event], str]:
    """Workload 2 over NASDAQ_MEDIUM (tie rule either)."""
    from bench.nasdaq import DATA, PATTERN, SPEC, load
    from petricep.io.readers import events_from_table

    net = compile_text(PATTERN.format(w=minutes))
    return net, list(events_from_table(load(DATA, 1), SPEC)), "either"


def many_keys(keys: int = 20_000, window: int = 20_000, n: int = 300_000) -> tuple[Net, list[Event], str]:
    """A pair pattern over many keys: most partitions hold a live partial match."""
    net = compile_text(f"PATTERN pairs: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN {window}")
    rng = random.Random(1)
    events = [
        Event("A" if rng.random() < 0.5 else "B", i, i, i, {"k": rng.randrange(keys), "x": rng.randrange(100)})
        for i in range(n)
    ]
    return net, events, "arrival"


def negation(window: int = 900) -> tuple[Net, list[Event], str]:
    """Workload 3 at W = 900, negation pushed."""
    from bench.negation import PATTERN, stream

    table = stream(10_000, 5, 3)
    net = compile_text(PATTERN.format(w=window))
    cols = table.to_pydict()
    events = [
        Event(t, ts, i, i, {"attr1": a1, "attr2": a2})
        for i, (t, ts, a1, a2) in enumerate(zip(cols["type"], cols["ts"], cols["attr1"], cols["attr2"]))
    ]
    return net, events, "arrival"


WORKLOADS: dict[str, Callable[[], tuple[Net, list[Event], str]]] = {
    "W1 SASE Q2 (150,258 events after the prefilter)": sase_q2,
    "W2 NASDAQ, 30 min (1,652 events)": nasdaq,
    "W3 negation pushed, W = 900 (10,000 events)": negation,
    "20,000 keys, pairs within 20,000 (300,000 events)": many_keys,
}


def cpu(net: Net, events: list[Event], tie: str, options: dict[str, Any]) -> tuple[float, int]:
    evs = fresh(events)
    engine = Engine(net, tie=tie, collect=False, **options)
    push = engine.push
    start = time.process_time()
    for e in evs:
        push(e)
    engine.flush()
    return time.process_time() - start, sum(engine.stats.matches.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench switches", description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    args = ap.parse_args(argv)
    print("| workload | variant | events | matches | CPU s (best) | events/s | default's speed-up |")
    print("|---|---|---|---|---|---|---|")
    for label, make in WORKLOADS.items():
        net, events, tie = make()
        best: dict[str, float] = {}
        found: dict[str, int] = {}
        for _ in range(max(1, args.repeat)):
            for name, options in VARIANTS.items():
                seconds, matches = cpu(net, events, tie, options)
                best[name] = min(best.get(name, seconds), seconds)
                found[name] = matches
        assert len(set(found.values())) == 1, f"variants disagree: {found}"
        for name in VARIANTS:
            ratio = best[name] / best["default"]
            print(
                f"| {label} | {name} | {len(events):,} | {found[name]:,} | {best[name]:.3f} "
                f"| {len(events) / best[name]:,.0f} | {'' if name == 'default' else f'{ratio:.2f}x'} |"
            )
    return 0
