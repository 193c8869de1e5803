"""Shared helpers: SASE-style streams, timing an engine run."""

from __future__ import annotations

import gc
import importlib.util
import os
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from petricep.compile.net import Net
from petricep.events import Event
from petricep.io.source import EventSource
from petricep.runtime.engine import Engine
from petricep.runtime.prefilter import Prefilter

ROOT = Path(__file__).resolve().parents[1]


def stock_stream(events: int, symbols: int, max_price: int, seed: int) -> list[Event]:
    """The examples/ generator's stream as Event objects (type stock<k>, ts = position)."""
    spec = importlib.util.spec_from_file_location("generate_stocks", ROOT / "examples" / "generate_stocks.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = []
    for r in mod.generate(events, symbols, max_price, seed):
        attrs = {"symbol": r["symbol"], "price": r["price"], "volume": r["volume"]}
        out.append(Event(str(r["type"]), int(r["ts"]), int(r["id"]), int(r["id"]), attrs))
    return out


def fresh(events: Sequence[Event]) -> list[Event]:
    return [Event(e.type, e.ts, e.pos, e.id, e.attrs) for e in events]


@dataclass
class Timing:
    seconds: float
    matches: int
    events: int
    peak_mib: float = 0.0

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds else 0.0


def time_run(net: Net, events: Sequence[Event], tie: str = "arrival", memory: bool = False,
             make: Callable[[Net], Engine] | None = None, collect: bool = True) -> Timing:
    """Push every event and count matches (no output written, ids never built;
    ``collect=False``: not even match objects)."""
    evs = fresh(events)
    engine = make(net) if make else Engine(net, tie=tie, collect=collect)
    if memory:
        tracemalloc.start()
    start = time.perf_counter()
    n = 0
    for e in evs:
        n += len(engine.push(e))
    n += len(engine.flush())
    seconds = time.perf_counter() - start
    if not collect:
        n = sum(engine.stats.matches.values())
    peak = 0.0
    if memory:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return Timing(seconds, n, len(evs), peak)


@dataclass
class Run:
    """One timed pass: input rows in, matches and partial matches created out."""

    seconds: float
    rows: int
    events: int  # rows that became events (the rest were dropped by the prefilter)
    matches: int
    created: int
    peak_mib: float = 0.0
    completed: int = 0  # complete sequences constructed, before the emission checks

    @property
    def rate(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0


def run_source(
    net: Net,
    make_source: Callable[[], EventSource],
    tie: str = "arrival",
    prefilter: bool = True,
    collect: bool = True,
    memory: bool = False,
) -> Run:
    """Read a source into the engine, timing both (the way ``petricep run`` does, output
    not written): rows dropped by the prefilter never become events."""
    source = make_source()
    if prefilter:
        source.row_filter = Prefilter(net)
    engine = Engine(net, tie=tie, collect=collect)
    gc.collect()
    if memory:
        tracemalloc.start()
    start = time.perf_counter()
    push = engine.push
    n = 0
    for e in source:
        n += len(push(e))
    n += len(engine.flush())
    seconds = time.perf_counter() - start
    peak = 0.0
    if memory:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    if not collect:
        n = sum(engine.stats.matches.values())
    return Run(seconds, source.rows_read, engine.stats.events, n, engine.stats.created, peak, engine.stats.completed)


def best_run(repeat: int, fn: Callable[[], Run], memory: Callable[[], Run] | None = None) -> Run:
    """Best of ``repeat`` timed runs; peak memory from one extra traced run."""
    runs = [fn() for _ in range(max(1, repeat))]
    best = min(runs, key=lambda r: r.seconds)
    if memory is not None:
        best.peak_mib = memory().peak_mib
    return best


def header() -> str:
    return "| run | rows | events/s | matches | partial matches created | created per 1,000 rows | peak MiB | s |\n|---|---|---|---|---|---|---|---|"


def row(label: str, r: Run) -> str:
    per = 1000 * r.created / r.rows if r.rows else 0.0
    return (
        f"| {label} | {r.rows:,} | {r.rate:,.0f} | {r.matches:,} | {r.created:,} | {per:,.1f} "
        f"| {r.peak_mib:.1f} | {r.seconds:.3f} |"
    )


def stock_table(events: int, symbols: int, max_price: int, seed: int) -> pa.Table:
    """The examples/ generator's stream as an Arrow table (same values, built with numpy)."""
    spec = importlib.util.spec_from_file_location("generate_stocks", ROOT / "examples" / "generate_stocks.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.generate_table(events, symbols, max_price, seed)  # type: ignore[no-any-return]


def measure(repeat: int, net: Net, make_source: Callable[[], EventSource], **options: Any) -> Run:
    """Best of ``repeat`` runs of :func:`run_source`, peak memory from one traced run
    (skipped with BENCH_MEMORY=0 in the environment, for quick A/B timings)."""
    traced = None
    if os.environ.get("BENCH_MEMORY", "1") != "0":
        traced = lambda: run_source(net, make_source, memory=True, **options)  # noqa: E731
    return best_run(repeat, lambda: run_source(net, make_source, **options), traced)
