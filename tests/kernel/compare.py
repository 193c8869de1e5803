"""Run one pattern set on the Python engine and on the kernel, side by side."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from hypothesis import note

from petricep.api import compile_text
from petricep.compile.net import Net
from petricep.events import Event
from petricep.kernel import KernelRun, supports, to_matches
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from tests.strategies import pattern_text


def table(events: Sequence[Event]) -> pa.Table:
    """Events as the Arrow table the kernel reads (type, ts, id and every other attribute)."""
    names = sorted({k for e in events for k in e.attrs} - {"type", "ts", "id"})
    cols: dict[str, Any] = {
        "type": [e.type for e in events],
        "ts": [e.ts for e in events],
        "id": [e.id for e in events],
    }
    for n in names:
        cols[n] = [e.attrs[n] for e in events]
    return pa.table(cols)


def fresh(events: Sequence[Event]) -> list[Event]:
    return [Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in events]


def both(net: Net, events: Sequence[Event], tie: str, cut: int, sweep_every: int = 2048) -> dict[str, Any]:
    """Matches (dicts, emission order), tokens created and completed, composite events, live
    partial matches after the first ``cut`` events, timeouts and LIMIT drops per pattern,
    from each engine; the kernel gets two batches
    and sweeps every ``sweep_every`` events, compacting its event store at each sweep."""
    engine = Engine(net, tie=tie)
    evs = fresh(events)
    py: list[dict[str, Any]] = []
    live_py = 0
    for i, e in enumerate(evs):
        py += [m.to_dict() for m in engine.push(e)]
        if i == cut - 1:
            live_py = engine.live_partial_matches()
    py += [m.to_dict() for m in engine.flush()]
    run = KernelRun(net, tie=tie, id_field="id", sweep_every=sweep_every, compact_slack=0)
    t = table(events)
    tables = [run.push(t.slice(0, cut))]
    live_k = run.live_partial_matches() if cut else 0
    tables += [run.push(t.slice(cut)), run.flush()]  # (id columns may differ: text where composite)
    k = [m.to_dict() for got in tables for m in to_matches(got, net)]
    stats, ks = engine.stats, run.stats
    return {
        "python": (py, stats.created, stats.completed, stats.composite_events, live_py, stats.timeouts, stats.dropped),
        "kernel": (k, ks["created"], ks["completed"], ks["composite"], live_k, ks["timeouts"], ks["dropped"]),
    }


def check(pats: list[A.Pattern], events: list[Event], tie: str, cut: int) -> None:
    """The patterns on both engines (the kernel must cover them): the same matches, counts
    and live partial matches after ``cut`` events; the kernel sweeps every 1-4 events."""
    for p in pats:
        note(pattern_text(p))
    note(f"tie={tie} cut={cut}")
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    net = build_net(pats)
    ok, reason = supports(net, tie)
    assert ok, reason
    out = both(net, events, tie, cut, sweep_every=1 + cut % 4)
    assert out["kernel"] == out["python"]


def ev(etype: str, ts: Any, pos: int, **attrs: Any) -> Event:
    """An event whose id is its position."""
    return Event(etype, ts, pos, pos, attrs)


def same(text: str, events: list[Event], tie: str = "arrival", cut: int = 1) -> list[dict[str, Any]]:
    """Both engines on ``text`` (the kernel must cover it): equal outputs; the matches."""
    net = compile_text(text)
    assert supports(net, tie) == (True, "covered")
    out = both(net, events, tie, cut, sweep_every=1)
    assert out["kernel"] == out["python"]
    return out["kernel"][0]  # type: ignore[no-any-return]
