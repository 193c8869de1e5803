"""Shared helpers: SASE-style streams, timing an engine run."""

from __future__ import annotations

import importlib.util
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from petricep.compile.net import Net
from petricep.events import Event
from petricep.runtime.engine import Engine

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
