"""The streaming query's stateful operator without Spark: :class:`EngineProcessor` driven
as ``transformWithStateInPandas`` drives it (a state store and event-time timers per key,
micro-batch by micro-batch, the watermark of the event times seen before each), then the
end of input (:class:`StateFlush`) over the state left. Fast enough for property tests
of what a key's state must survive: being stored and restored between micro-batches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from petricep.compile.net import Net
from petricep.events import Event, EventColumns
from petricep.spark.plan import Router, make_plan
from petricep.spark.streaming import (
    LATE,
    MATCH,
    OUTPUT_COLUMNS,
    READ,
    UNROUTED,
    EngineProcessor,
    StateFlush,
    count_row,
    event_time_ms,
    packed_rows,
    routed_rows,
    streaming_plan,
)
from petricep.spark.streamparse import column_rows

Key = tuple[int, int]  # (group, bucket)


class _Value:
    """A value state of the key the handle serves now."""

    def __init__(self, handle: FakeHandle, name: str) -> None:
        self.handle = handle
        self.name = name

    def exists(self) -> bool:
        self.handle.calls.append((self.name, "exists"))
        return (self.handle.key, self.name) in self.handle.store

    def get(self) -> tuple[Any, ...] | None:
        """The stored row, None where there is none (as pyspark's ``ValueState.get``)."""
        self.handle.calls.append((self.name, "get"))
        return self.handle.store.get((self.handle.key, self.name))

    def update(self, row: tuple[Any, ...]) -> None:
        self.handle.calls.append((self.name, "update"))
        self.handle.store[(self.handle.key, self.name)] = tuple(row)

    def clear(self) -> None:
        self.handle.calls.append((self.name, "clear"))
        del self.handle.store[(self.handle.key, self.name)]


class FakeHandle:
    """Spark's stateful processor handle, in memory."""

    def __init__(self) -> None:
        self.key: Key = (0, 0)
        self.store: dict[tuple[Key, str], tuple[Any, ...]] = {}
        self.timers: dict[Key, set[int]] = {}
        self.calls: list[tuple[str, str]] = []  # (state, call): each a round trip to the JVM in Spark

    def getValueState(self, name: str, schema: Any) -> _Value:  # noqa: N802 (pyspark's name)
        return _Value(self, name)

    def registerTimer(self, ms: int) -> None:  # noqa: N802
        self.calls.append(("timer", "register"))
        self.timers.setdefault(self.key, set()).add(ms)

    def deleteTimer(self, ms: int) -> None:  # noqa: N802
        self.calls.append(("timer", "delete"))
        self.timers.get(self.key, set()).discard(ms)


class Clock:
    def __init__(self, wm: int, expiry: int = 0) -> None:
        self.wm = wm
        self.expiry = expiry

    def getCurrentWatermarkInMs(self) -> int:  # noqa: N802
        return self.wm

    def getExpiryTimeInMs(self) -> int:  # noqa: N802
        return self.expiry


def _routed(router: Router, batch: Sequence[Event], buckets: int) -> dict[Key, list[tuple[Any, ...]]]:
    """A micro-batch's rows per (group, bucket), as the parse stage routes them (one parse
    batch: its count row last): each run of two or more events with the same fields in one
    order as a reader's checked batch would go (Arrow pieces: ``column_rows``), the other
    events one by one (``marshal`` packs), so that a stream exercises both."""
    parsed: list[tuple[Any, ...]] = []
    packs: list[tuple[Any, ...]] = []
    earliest: list[int] = []
    for run in _runs(batch):
        if len(run) < 2:
            parsed += [row for e in run for row in routed_rows(router, e, buckets)]
            continue
        names = list(run[0].attrs)
        cols = EventColumns([e.type for e in run], [e.ts for e in run], list(range(len(run))), [e.id for e in run],
                            {n: [e.attrs[n] for e in run] for n in names})  # fmt: skip
        rows, least = column_rows(router, cols, np.asarray([e.pos for e in run], dtype=np.int64), buckets)
        packs += rows
        earliest.append(least)
    out: dict[Key, list[tuple[Any, ...]]] = {}
    if not batch:
        return out
    count = count_row(parsed) if parsed else (UNROUTED, 0, -1, min(earliest), None, False, 0)
    count = (*count[:3], min([count[3], *earliest]), None, False, len(batch))
    for g, k, *rest in (packed_rows(parsed) if parsed else []) + packs + [count]:
        out.setdefault((g, k), []).append(tuple(rest))
    return out


def _runs(batch: Sequence[Event]) -> list[list[Event]]:
    """The batch cut where an event's fields (names in order) differ from the one before."""
    runs: list[list[Event]] = []
    for e in batch:
        if runs and tuple(runs[-1][-1].attrs) == tuple(e.attrs):
            runs[-1].append(e)
        else:
            runs.append([e])
    return runs


def simulate(
    net: Net,
    events: Sequence[Event],
    tie: str,
    cuts: Sequence[int],
    kernel: bool,
    delay_ms: int = 0,
    counts: dict[str, list[int]] | None = None,
    restarts: Sequence[int] = (),
    buckets: int = 3,
    handle: FakeHandle | None = None,
) -> list[tuple[Any, ...]]:
    """The match rows (``json, emitted_at, g, seq``) of a stream split into micro-batches
    at ``cuts``, then of the end of input; ``kernel``: the groups the kernel covers run
    on it (else every key runs the Python engine). ``counts`` gets the output's ``read``
    counts and the positions of its ``late`` rows, in order. At the cuts in ``restarts``
    the query restarts: a new processor, no engine left alive in the worker (each key's
    engine is rebuilt from its snapshot in the store). ``buckets``: of keys, per group (one
    engine each). ``handle``: the state store to run on (to look at it afterwards)."""
    from petricep.spark.keystate import EngineCache, engine_choices, kernel_groups

    plan, _ = streaming_plan(make_plan(net), reorders=delay_ms > 0)
    chosen = kernel_groups(engine_choices(net, plan, tie)) if kernel else frozenset()
    proc = EngineProcessor(net, plan, tie, chosen)
    handle = FakeHandle() if handle is None else handle
    proc.init(handle)
    router = Router(plan)
    bounds = [0, *sorted(set(cuts)), len(events)]
    starts = [a for a, b in zip(bounds, bounds[1:]) if b > a] + [len(events)]
    batches = [events[a:b] for a, b in zip(bounds, bounds[1:]) if b > a] + [[]]  # then a no-data batch
    out: list[tuple[Any, ...]] = []
    said = counts if counts is not None else {}
    said.update(read=[], late=[])
    wm, seen = 0, 0
    for start, batch in zip(starts, batches):
        if start in restarts:
            EngineCache._caches.clear()
            proc = EngineProcessor(net, plan, tie, chosen)
            proc.init(handle)
        for key, rows in _routed(router, batch, buckets).items():
            handle.key = key
            pdf = pd.DataFrame(rows, columns=["pos", "evtime", "ev", "first", "reads"])
            out += _matches(proc.handleInputRows(key, iter([pdf]), Clock(wm)), said)
        for key in sorted(handle.timers):
            for t in sorted(x for x in handle.timers[key] if x <= wm):
                handle.key = key
                handle.timers[key].discard(t)
                out += _matches(proc.handleExpiredTimer(key, Clock(wm), Clock(wm, t)), said)
        seen = max([seen, *(event_time_ms(e.ts) for e in batch)])
        wm = max(wm, seen - delay_ms)
    flush = StateFlush(net, plan, tie, chosen)
    keys = sorted({k for k, _ in handle.store})
    for g, b in keys:
        state = handle.store[((g, b), "state")]  # (keygroups.STATE_FIELDS)
        rows = flush.rows(g, state[4], state[2])
        out += [(r[5], r[6], g, r[8]) for r in rows]
    return out


def _matches(frames: Any, counts: dict[str, list[int]]) -> list[tuple[Any, ...]]:
    got: list[tuple[Any, ...]] = []
    for df in frames:
        assert list(df.columns) == OUTPUT_COLUMNS
        for r in df.itertuples(index=False):
            if r.kind == MATCH:
                got.append((r.json, r.emitted_at, r.task, r.seq))
            elif r.kind == READ:
                counts["read"].append(r.n)
            else:
                assert r.kind == LATE and r.n == 1
                counts["late"].append(r.emitted_at)
    return got
