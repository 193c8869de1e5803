"""A kernel run cut at given points, its engine replaced at each cut by its snapshot's
restoration (:func:`drive`): a helper module (not a test module) so that property tests of
other features import it without importing test modules."""

from __future__ import annotations

from typing import Any

import numpy as np

from petricep.compile.net import Net
from petricep.events import Event, EventColumns
from petricep.kernel.engine import KernelEngine
from petricep.kernel.snapshot import dumps
from tests.kernel.compare import fresh

loads = KernelEngine.restored  # (the matcher contract's restore, into a fresh engine)


def drive(net: Net, events: list[Event], tie: str, plan: dict[str, Any], snap: bool) -> tuple[list[Any], list[int]]:
    """The run's pairs and the live partial matches at each cut; with ``snap`` the engine is
    replaced at each cut by its snapshot's restoration (checking the bytes are stable)."""
    engine = KernelEngine(net, tie=tie, batch=plan["batch"])
    if snap:  # (and the matches leave the kernel in slices of max_out: the same pairs)
        engine.max_out = plan["max_out"]
    if plan["sweep"]:  # (sweeps and compactions inside the run too; the value and key dictionaries' after every batch)
        engine.kernel.kernel.sweep_every = plan["sweep"]
        engine.kernel.kernel.compact_slack = 0
        engine.kernel.values.slack = engine.kernel.values.key_slack = 0
    out: list[Any] = []
    lives = []
    chunk: list[Event] = []
    for i, e in enumerate(fresh(events)):
        if i in plan["ticks"]:
            out += feed(engine, chunk, plan["columns"]) + engine.tick(e.ts, e.pos)
        else:
            chunk.append(e)
        if i in plan["cuts"]:
            out += feed(engine, chunk, plan["columns"]) + engine.drain_pairs()
            assert engine.collected == 0
            lives.append(engine.live_partial_matches())
            if snap:
                data = dumps(engine)
                assert dumps(engine) == data  # deterministic
                engine = loads(data, net, tie)
                engine.max_out = plan["max_out"]
                if plan["sweep"]:
                    engine.kernel.values.slack = engine.kernel.values.key_slack = 0
                assert dumps(engine) == data  # restored, the same state
                lives.append(engine.live_partial_matches())
            else:
                lives.append(lives[-1])
    out += feed(engine, chunk, plan["columns"]) + engine.flush_pairs()
    return [(repr(m.to_dict()), at) for m, at in out], lives


def feed(engine: KernelEngine, chunk: list[Event], columns: bool) -> list[Any]:
    """Push the events collected since the last cut or tick (emptied): one by one, or as one
    batch of columns (push_columns_pairs)."""
    events = list(chunk)
    chunk.clear()
    if not columns:
        return [pair for e in events for pair in engine.push_pairs(e)]
    if not events:
        return []
    names = sorted({name for e in events for name in e.attrs})
    cols = EventColumns(
        [e.type for e in events], [e.ts for e in events], [e.pos for e in events], [e.id for e in events],
        {name: _column([e.attrs.get(name) for e in events]) for name in names},
    )
    return engine.push_columns_pairs(cols)


def _column(values: list[Any]) -> Any:
    """A column as a reader gives it: ints as an int64 array (a key column the kernel codes
    itself: KernelRun.int_keys), anything else as the values."""
    if values and all(type(v) is int and -(2**63) <= v < 2**63 for v in values):
        return np.array(values, dtype=np.int64)
    return values
