"""A key partition of the whole stream, run so that it matches exactly what the
embedded engine gives on the whole stream (pure Python: the Spark tasks call this).

What a key partition cannot see
-------------------------------
An engine fed only some keys' events misses one thing of the whole stream: *when* a
match waiting on an end negation is emitted. The embedded engine emits it at the first
event of any key past its window — for a time window the first event with
``ts > first.ts + w``, for a count window the first with ``pos >= first.pos + w`` — and
a composite event it returns enters the stream there, taking that event's ``ts`` and
``pos``. :meth:`Engine.advance` tells a partition engine "the stream reached (ts, pos)".

Which points a partition engine must be advanced through
-------------------------------------------------------
Advancing through a point where nothing closes changes nothing (at most it ends a
timestamp group earlier, which the next event would do anyway, before anything else
happens). So a :class:`KeyRunner` advances through *candidate* points only: after every
event it processes — its own events, and the composite events entering at a point — it
schedules, for each time window ``w`` of its patterns, the first event of the whole
stream with ``ts > ts_e + w`` (the first position of the next distinct timestamp), and for
each count window the first event with ``pos >= pos_e + w``. Every threshold a pending
match can have is one of those, so every point where something closes is advanced
through, in stream order, before the partition's next own event. A point that is one of
its own events is not advanced through: ``push`` closes the windows there itself
(and must process the event before the composite events it releases).

The whole-stream facts this needs — the distinct timestamps with their first position,
the positions that exist, the last event — are a :class:`StreamClock`: a few numbers per
distinct timestamp (4,000 for the 1.5 million Aarhus events), built once and broadcast.
"""

from __future__ import annotations

import heapq
import zlib
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

import numpy as np
import pyarrow as pa

from petricep.compile.net import Net
from petricep.errors import EvaluationError, EventOrderError
from petricep.events import Event, EventColumns, TypeColumn, value_at
from petricep.kernel import lower as kernel_lower
from petricep.kernel.bytecode import ID_ATTR, TS_ATTR
from petricep.kernel.choice import GROUP_ARCHIVE, Budget, Choice, Options, choose, matcher
from petricep.kernel.engine import TICK, KernelEngine, Placed
from petricep.merge import sub_net
from petricep.runtime.arrow import number_array
from petricep.runtime.engine import MAX_PARTIAL_MATCHES, Engine, Match
from petricep.runtime.matcher import Matcher

from .plan import Group, Plan, Router, make_plan
from .records import END, Found
from .shuffle import Layout, handed_over, listed, spans

Run = tuple[Any, int, int]  # (ts, first pos, last pos): consecutive positions with one timestamp


def runs_of(events: Iterable[tuple[Any, int]]) -> list[Run]:
    """Runs of ``(ts, pos)`` pairs given in position order."""
    out: list[Run] = []
    cur: list[Any] | None = None
    for ts, pos in events:
        if cur is not None and ts == cur[0] and pos == cur[2] + 1:
            cur[2] = pos
            continue
        if cur is not None:
            out.append((cur[0], cur[1], cur[2]))
        cur = [ts, pos, pos]
    if cur is not None:
        out.append((cur[0], cur[1], cur[2]))
    return out


@dataclass
class OrderViolation:
    pos: int
    ts: Any
    prev_ts: Any

    def message(self, times: Callable[[Any], Any] | None = None) -> str:
        """The error's text; ``times``: the two times as the input wrote them (date-times)."""
        now, prev = (times(self.ts), times(self.prev_ts)) if times is not None else (self.ts, self.prev_ts)
        return f"timestamp {now} is before the previous event's {prev} (input must be in time order)"


@dataclass
class StreamClock:
    """The whole stream's timeline, as far as key partitions need it."""

    ts: list[Any] = field(default_factory=list)  # distinct timestamps, ascending
    first: list[int] = field(default_factory=list)  # first position at each
    starts: list[int] = field(default_factory=list)  # runs of existing positions, ascending
    ends: list[int] = field(default_factory=list)
    run_ts: list[Any] = field(default_factory=list)
    last: tuple[Any, int] | None = None  # (ts, pos) of the last event
    events: int = 0

    @classmethod
    def from_runs(cls, runs: Iterable[Run]) -> StreamClock:
        """Merge runs (from any number of tasks, in any order). Raises
        :class:`EventOrderError` (without file and row) at the first position whose
        timestamp is before an earlier one's; see :func:`first_violation`."""
        ordered = sorted(runs, key=lambda r: r[1])
        merged: list[list[Any]] = []
        for ts, a, b in ordered:
            if merged and merged[-1][0] == ts and merged[-1][2] + 1 == a:
                merged[-1][2] = b
            else:
                merged.append([ts, a, b])
        bad = first_violation([(r[0], r[1], r[2]) for r in merged])
        if bad is not None:
            raise EventOrderError(bad.message(), row=bad.pos)
        clock = cls()
        for ts, a, b in merged:
            clock.starts.append(a)
            clock.ends.append(b)
            clock.run_ts.append(ts)
            clock.events += b - a + 1
            if not clock.ts or ts != clock.ts[-1]:
                clock.ts.append(ts)
                clock.first.append(a)
        if merged:
            clock.last = (merged[-1][0], merged[-1][2])
        return clock

    @classmethod
    def from_events(cls, events: Sequence[Event]) -> StreamClock:
        return cls.from_runs(runs_of(sorted(((e.ts, e.pos) for e in events), key=lambda x: x[1])))

    def after_time(self, threshold: Any) -> tuple[Any, int] | None:
        """The first event of the stream with ``ts > threshold``."""
        i = bisect_right(self.ts, threshold)
        return (self.ts[i], self.first[i]) if i < len(self.ts) else None

    def at_or_after(self, pos: int) -> tuple[Any, int] | None:
        """The first event of the stream with ``pos >= pos``."""
        i = bisect_left(self.ends, pos)
        if i == len(self.ends):
            return None
        return (self.run_ts[i], max(pos, self.starts[i]))

    def end(self) -> int:
        """A position after every event (where end-of-stream emission is ordered)."""
        return self.last[1] + 1 if self.last is not None else 0


def first_violation(runs: Sequence[Run]) -> OrderViolation | None:
    """The first position (runs sorted by position) whose timestamp is before its
    predecessor's — what a sequential reader reports first."""
    prev: Any = None
    for ts, a, _b in runs:
        if prev is not None and ts < prev:
            return OrderViolation(a, ts, prev)
        prev = ts
    return None


def engine_net(net: Net, group: Group) -> Net:
    """What a group's engine runs: its SQL queries alone, or its own patterns (a query's rows
    never interact with patterns, and a group holds every pattern its patterns read the
    composite events of or share a consumption domain with: nothing outside it changes its
    matches). Built once per net and group (compiling takes milliseconds, tasks ask often)."""
    mine = [r for r in net.rows if r.name in group.patterns]
    if mine:
        return Net((), (), tuple(mine))
    return sub_net(net, frozenset(group.patterns))


Pair = tuple[Match, int]  # a match and the position that emitted it (END: the end of the stream)


class _KernelPlaces:
    """The compiled kernel's matches with their emitting positions: it records them itself,
    a batch (with tick rows, :func:`with_ticks`) fired at once."""

    kind = "kernel"

    def __init__(self, kernel: KernelEngine) -> None:
        self.kernel = kernel

    def push(self, e: Event) -> list[Pair]:
        return self.kernel.push_pairs(e)

    def tick(self, ts: Any, pos: int) -> list[Pair]:
        return self.kernel.tick(ts, pos)

    def columns(self, cols: EventColumns) -> list[Pair]:
        return self.kernel.push_columns_pairs(cols)

    def found(self, cols: EventColumns) -> list[Found]:
        """:meth:`columns`, the matches as record batches where one holds them exactly
        (:meth:`KernelEngine.push_columns_placed`), each with an ``emitted_at`` column."""
        try:
            placed = self.kernel.push_columns_placed(cols)
        except EvaluationError as err:
            err.pairs = _found(getattr(err, "pairs", []))  # type: ignore[attr-defined]
            raise
        return _found(placed)

    def drain(self) -> list[Pair]:
        return self.kernel.drain_pairs()

    def flush(self, last: tuple[Any, int] | None) -> list[Pair]:
        return self.kernel.flush_pairs(last)

    def last_pos(self) -> int:
        return self.kernel.last_position


class _EnginePlaces:
    """The Python reference engine's matches with their emitting positions: it fires each
    event (and each tick) as it is given, so its matches are emitted there."""

    kind = "python"

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def push(self, e: Event) -> list[Pair]:
        try:
            return [(m, e.pos) for m in self.engine.push(e)]
        except EvaluationError as err:
            err.event = getattr(err, "event", None) or e  # type: ignore[attr-defined]
            raise

    def tick(self, ts: Any, pos: int) -> list[Pair]:
        return [(m, pos) for m in self.engine.advance(ts, pos)]

    def columns(self, cols: EventColumns) -> list[Pair]:
        """A batch's rows in order: events pushed, :data:`TICK` rows advanced through. An
        error carries the pairs before it (``err.pairs``) and the event it failed at or
        before (``err.event``), as the kernel's do."""
        out: list[Pair] = []
        types = cols.types
        for i in range(len(cols)):
            try:
                if types[i] == TICK:
                    out += self.tick(value_at(cols.ts, i), int(value_at(cols.pos, i)))
                else:
                    out += self.push(cols.event(i))
            except EvaluationError as err:
                err.pairs = out  # type: ignore[attr-defined]
                j = next(j for j in range(i, len(cols)) if types[j] != TICK)  # (a tick precedes an event)
                err.event = getattr(err, "event", None) or cols.event(j)  # type: ignore[attr-defined]
                raise
        return out

    def found(self, cols: EventColumns) -> list[Found]:
        return list(self.columns(cols))

    def drain(self) -> list[Pair]:
        return []

    def flush(self, last: tuple[Any, int] | None) -> list[Pair]:
        return [(m, END) for m in self.engine.flush(last)]

    def last_pos(self) -> int:
        last = self.engine.state.last_input
        return -1 if last is None else last.pos


def _found(placed: list[Placed]) -> list[Found]:
    """The kernel's (chunk, emitting positions) as the firing stage's items."""
    out: list[Found] = []
    for chunk, at in placed:
        at = np.where(at < 0, END, at)
        if isinstance(chunk, list):
            out.extend(zip(chunk, at.tolist()))
        else:
            out.append(chunk.append_column("emitted_at", number_array(at, pa.int64())))
    return out


class KeyRunner:
    """One group's matcher (the chooser's: the kernel or the Python reference, never a mix)
    over a subset of its keys, any number interleaved in stream order -- a batch run's
    firing task and a streaming bucket alike. Every method returns ``(match, emission
    position)`` pairs of the group's own patterns.

    Batch: ``clock`` is the whole stream's timeline; ``push``/``push_columns`` the events in
    position order, then ``finish``: the stream's points where other keys' events close
    windows are ticked where the whole stream reaches them (see the module docstring).
    Streaming: no timeline (``clock`` None): ``push`` a micro-batch's released events,
    ``drain``, :meth:`advance` to the watermark, :meth:`snapshot` for the state store;
    ``finish`` at the end of the input."""

    def __init__(self, found: Matcher, group: Group, clock: StreamClock | None = None) -> None:
        if isinstance(found, KernelEngine):
            self.places: _KernelPlaces | _EnginePlaces = _KernelPlaces(found)
        elif isinstance(found, Engine):
            self.places = _EnginePlaces(found)
        else:
            raise TypeError(f"a key runner takes the kernel or the Python engine, not {type(found).__name__}")
        self.matcher = found
        self.kind = self.places.kind
        self.group = group
        self.clock = clock if clock is not None else StreamClock()
        self.composites = bool(group.producers)
        self._points: list[tuple[int, Any]] = []
        self._scheduled: set[int] = set()
        self._scheduled_ts: Any = None  # the time whose window points were scheduled last
        self._times: np.ndarray | None = None  # the clock's times as numpy (_clock_times)
        self._times_made = False
        self.last_pos = self.places.last_pos()  # (a restored matcher's: the next events come after it)

    # ------------------------------------------------------------------ driving

    def push(self, e: Event) -> list[Pair]:
        """One event: the clock's points before it ticked, then the event. An evaluation
        error carries the pairs found before the failing event (``err.pairs``) and that
        event (``err.event``)."""
        out: list[Pair] = []
        try:
            self._advance_to(e.pos, out)
            out += self.places.push(e)
        except EvaluationError as err:
            _failed(err, out)
        self._schedule(e.ts, e.pos)
        self.last_pos = e.pos
        return out

    def push_all(self, events: Sequence[Event]) -> list[Pair]:
        """A streaming micro-batch's released events, in stream order, all fired (drained):
        its pairs."""
        out: list[Pair] = []
        for e in events:
            out += self.push(e)
        return out + self.drain()

    def push_columns(self, cols: EventColumns) -> list[Pair]:
        """A batch of the group's events (position order) as columns, fired at once: the
        stream's points between them (other keys' window closings) join it as tick rows,
        where :meth:`push` would have ticked."""
        if not len(cols):
            return []
        ticked, last = self._ticked(cols)
        try:
            out = self.places.columns(ticked)
        except EvaluationError as err:
            _failed(err, [])
        self.last_pos = last
        return out

    def push_columns_found(self, cols: EventColumns) -> list[Found]:
        """:meth:`push_columns`, the kernel's matches as record batches where one holds them
        exactly, each with an ``emitted_at`` column; the others as (match, position) pairs.
        An evaluation error carries what was found before the failing event (``err.pairs``)."""
        if not len(cols):
            return []
        ticked, last = self._ticked(cols)
        found = self.places.found(ticked)
        self.last_pos = last
        return found

    def drain(self) -> list[Pair]:
        """Fire what the matcher collected (the stream goes on): before :meth:`snapshot`."""
        return self.places.drain()

    def advance(self, ts: Any, pos: int) -> list[Match]:
        """A stream's clock (the watermark) reached ``(ts, pos)``: what the closed windows
        release, with what was collected before."""
        return [m for m, _ in self.places.tick(ts, pos) + self.places.drain()]

    def finish(self) -> list[Pair]:
        """End of the stream: the clock's last points, then every window still open."""
        out: list[Pair] = []
        try:
            self._advance_to(self.clock.end(), out)
            out += self.places.flush(self.clock.last)
        except EvaluationError as err:
            _failed(err, out)
        return out

    def snapshot(self) -> bytes:
        """The matcher's state as its Arrow IPC snapshot (``drain`` first)."""
        return self.matcher.snapshot()

    # ------------------------------------------------------------------ the clock's points

    def _schedule(self, ts: Any, pos: int) -> None:
        """The stream's points where the windows opened at (ts, pos) close (ticks to come)."""
        clock = self.clock
        if ts != self._scheduled_ts:
            # (the same time again would schedule the same points: they lie after it, still pending)
            self._scheduled_ts = ts
            self._schedule_time(ts)
        for n in self.group.count_windows:
            pt = clock.at_or_after(pos + n)
            if pt is not None and pt[1] not in self._scheduled:
                self._scheduled.add(pt[1])
                heapq.heappush(self._points, (pt[1], pt[0]))

    def _schedule_time(self, ts: Any) -> None:
        """The first event after each time window opened at ``ts``."""
        clock = self.clock
        for w in self.group.time_windows:
            pt = clock.after_time(ts + w)
            if pt is not None and pt[1] not in self._scheduled:
                self._scheduled.add(pt[1])
                heapq.heappush(self._points, (pt[1], pt[0]))

    def _advance_to(self, pos: int, out: list[Pair]) -> None:
        """Tick the pending points up to ``pos`` (not ``pos`` itself: our own event, whose
        push closes the windows there and must come before the composite events it releases)."""
        points = self._points
        while points and points[0][0] <= pos:
            p, ts = heapq.heappop(points)
            self._scheduled.discard(p)
            if p != pos:
                out += self.places.tick(ts, p)
                if self.composites:
                    self._schedule(ts, p)  # composite events entering here open windows too

    def _ticked(self, cols: EventColumns) -> tuple[EventColumns, int]:
        """A batch with its tick rows (the stream's points among its events), scheduled
        as :meth:`push` schedules, and its last event's position."""
        if not self.clock.ts and not self._points:  # no timeline (a streaming bucket): no point ever
            return cols, int(cols.pos[-1])
        if self.group.count_windows:
            ticks = self._ticks_between(listed(cols.ts), listed(cols.pos))
        else:
            ticks = self._ticks_by_time(cols.ts, cols.pos)
        return (with_ticks(cols, ticks) if ticks else cols), int(cols.pos[-1])

    def _ticks_between(self, stamps: list[Any], positions: list[int]) -> list[tuple[int, Any, int]]:
        """The clock's points reached before each event of a batch, as ``push`` would tick
        them: ``(row the tick goes before, ts, pos)``, scheduling as ``push`` schedules
        (every event: a count window opens at each)."""
        ticks: list[tuple[int, Any, int]] = []
        points = self._points
        scheduled = self._scheduled
        composites = self.composites
        for i, (ts, pos) in enumerate(zip(stamps, positions)):
            while points and points[0][0] <= pos:
                p, pts = heapq.heappop(points)
                scheduled.discard(p)
                if p != pos:
                    ticks.append((i, pts, p))
                    if composites:
                        self._schedule(pts, p)
            self._schedule(ts, pos)
        return ticks

    def _ticks_by_time(self, stamps: Any, positions: Any) -> list[tuple[int, Any, int]]:
        """:meth:`_ticks_between` with time windows only, a run of equal timestamps at a
        time: the run's first event schedules its windows' points (later events of the run
        would schedule the same ones, still pending: they lie past the run), the points the
        run reaches become ticks before the event they precede (found by bisection). A tick
        sees the tracked time ``push`` would leave: the run's after any event between.
        The points each run schedules are found for the whole batch at once
        (:meth:`_run_points`); ``stamps`` and ``positions`` (a list or an array) are read
        at the runs' ends only."""
        ticks: list[tuple[int, Any, int]] = []
        points = self._points
        times = np.asarray(stamps)
        runs = spans(times[1:] != times[:-1])
        starts = [i for i, _ in runs]
        firsts = stamps[starts].tolist() if isinstance(stamps, np.ndarray) else [stamps[i] for i in starts]
        found = self._run_points(firsts)
        for r, (i, j) in enumerate(runs):
            ts = firsts[r]
            mine = found[r] if found is not None else None
            if points and points[0][0] <= positions[j - 1]:
                self._run_ticks(ts, mine, i, j, positions, ticks)
            else:
                self._schedule_run(ts, mine)
            self._scheduled_ts = ts
        return ticks

    def _schedule_run(self, ts: Any, found: list[tuple[int, Any]] | None) -> None:
        """:meth:`_schedule` for a run's first event (time windows only): ``found`` its
        points (:meth:`_run_points`; None: searched here)."""
        if ts == self._scheduled_ts:
            return
        self._scheduled_ts = ts
        if found is None:
            self._schedule_time(ts)
            return
        for p, pts in found:
            if p not in self._scheduled:
                self._scheduled.add(p)
                heapq.heappush(self._points, (p, pts))

    def _run_ticks(
        self, ts: Any, found: list[tuple[int, Any]] | None, i: int, j: int, positions: Any, ticks: list[tuple[int, Any, int]]
    ) -> None:
        """:meth:`_ticks_by_time` for a run of rows ``i:j`` (time ``ts``, its points
        ``found``) some pending point falls in."""
        points = self._points
        last = positions[j - 1]
        scheduled_run = False  # the run's first event has scheduled (it comes after ticks before it)
        prev = -1
        while points and points[0][0] <= last:
            p, pts = heapq.heappop(points)
            self._scheduled.discard(p)
            k = bisect_left(positions, p, i, j)
            if k > i and not scheduled_run:
                self._schedule_run(ts, found)
                scheduled_run = True
            if k > i and k > prev:
                self._scheduled_ts = ts  # an event of the run came between the ticks
            prev = k
            if positions[k] != p:
                ticks.append((k, pts, p))
                if self.composites:
                    self._schedule(pts, p)
        if not scheduled_run:
            self._schedule_run(ts, found)

    def _run_points(self, stamps: list[Any]) -> list[list[tuple[int, Any]]] | None:
        """Per timestamp, the points :meth:`_schedule_time` would schedule for it (the first
        event after ``ts + w`` for each window ``w``), by one search per window over the
        clock's times; None where the times are not numbers numpy adds and compares as
        Python does (then each run's are searched one by one)."""
        clock_ts = self._clock_times()
        if clock_ts is None or not stamps:
            return None
        at = np.asarray(stamps)
        if at.dtype != clock_ts.dtype:
            return None
        out: list[list[tuple[int, Any]]] = [[] for _ in stamps]
        for w in self.group.time_windows:
            found = np.searchsorted(clock_ts, at + w, side="right").tolist()
            for r, k in enumerate(found):
                if k < len(self.clock.ts):
                    out[r].append((self.clock.first[k], self.clock.ts[k]))
        return out

    def _clock_times(self) -> np.ndarray | None:
        """The clock's distinct times as an array where they and the windows are numbers
        numpy adds and compares exactly as Python does: floats or ints (every time and
        window within 2**53 of zero; ints: int windows). Made once per runner."""
        if not self._times_made:
            self._times_made = True
            times = np.asarray(self.clock.ts) if self.clock.ts else None
            windows = self.group.time_windows
            limit = 2**53  # (times are ascending: the extremes are the ends)
            if (
                times is not None
                and times.dtype in (np.float64, np.int64)
                and all(type(w) is int or (type(w) is float and times.dtype == np.float64) for w in windows)
                and max(abs(times[0]), abs(times[-1]), *(abs(w) for w in windows)) < limit
            ):
                self._times = times
        return self._times


def _failed(err: EvaluationError, before: list[Pair]) -> NoReturn:
    """A condition failed inside a batch: the pairs found before the failing event go with
    the error (``err.pairs``; ``err.event`` is the failing event), as the Python engine had
    returned them by then."""
    err.pairs = before + getattr(err, "pairs", [])  # type: ignore[attr-defined]
    raise err


def with_ticks(cols: EventColumns, ticks: list[tuple[int, Any, int]]) -> EventColumns:
    """``cols`` with a row of type :data:`~petricep.kernel.engine.TICK` (no id, no attributes)
    before row ``i`` for each tick ``(i, ts, pos)`` (ascending ``i``).

    Columns stay what they were: a numpy column gets its tick rows inserted (a list of
    Python values per row made the kernel read every attribute of a batch value by value:
    three quarters of Spark's firing stage on the Aarhus data), a type column gets the tick
    as one more name. A tick row's id and attributes are never read (the kernel only moves
    the clock there), so in a numpy column they repeat the row before (no new key value,
    no other kind); its time and position are the tick's own, inserted only where the
    column's dtype holds them exactly as the values they are (else, as a list)."""
    at = np.fromiter((i for i, _ts, _p in ticks), dtype=np.intp, count=len(ticks))
    return EventColumns(
        _with_types(cols.types, at),
        _inserted(cols.ts, at, [ts for _i, ts, _p in ticks]),
        _inserted(cols.pos, at, [p for _i, _ts, p in ticks]),
        _inserted(cols.ids, at, None),
        {name: _inserted(col, at, None) for name, col in cols.attrs.items()},
    )


def _with_types(types: Any, at: np.ndarray) -> Any:
    if isinstance(types, TypeColumn):
        names = (*types.names, TICK)
        return TypeColumn(np.insert(types.codes, at, len(names) - 1), names)
    return _merged(types, at, [TICK] * len(at))


def _inserted(col: Any, at: np.ndarray, fill: list[Any] | None) -> Any:
    """``col`` with rows inserted before rows ``at``: ``fill`` (the tick's own values), or
    where None, the row before each (the row itself at 0): values no one reads."""
    if isinstance(col, np.ndarray) and col.dtype.kind in "iuf" and len(col):
        if fill is None:
            return np.insert(col, at, col[np.maximum(at - 1, 0)])
        exact = int if col.dtype.kind in "iu" else float
        if all(type(v) is exact for v in fill):
            try:
                return np.insert(col, at, np.asarray(fill, dtype=col.dtype))
            except OverflowError:  # an int the dtype does not hold
                pass
    return _merged(col, at, [None] * len(at) if fill is None else fill)


def _merged(col: Any, at: np.ndarray, fill: list[Any]) -> list[Any]:
    col = listed(col)
    out: list[Any] = []
    prev = 0
    for i, value in zip(at.tolist(), fill):
        out.extend(col[prev:i])
        out.append(value)
        prev = i
    out.extend(col[prev:])
    return out


def kernel_fields(net: Net, group: Group, tie: str = "arrival") -> tuple[str, ...] | None:
    """The attributes a group's events must carry when the kernel covers its net: those
    the kernel reads (conditions, RETURN values, partition keys), in a fixed order; None
    when it does not (the Python engine gets whole events). Decided from the net alone,
    so the parse and firing stages agree wherever they run; an executor without the built
    kernel runs the Python engine on the same attributes, which are all its net reads."""
    mine = engine_net(net, group)
    if not group_choice(net, group, tie, here=False).kernel:
        return None
    lowered = kernel_lower(mine)
    pseudo = {TS_ATTR, ID_ATTR}
    read = [*lowered.attrs, *(a for g in lowered.groups for a in g.partition)]
    return tuple(a for a in dict.fromkeys(read) if a not in pseudo)


STREAM_ROWS = "SQL MATCH_RECOGNIZE queries (a streaming run keeps them on the Python engine)"


def group_choice(net: Net, group: Group, tie: str = "arrival", bindings: bool = False, here: bool = True) -> Choice:
    """The chooser's engine for a group's net (:func:`~petricep.kernel.choice.choose`): the
    kernel where it runs it exactly, SQL queries on the Python engine (:data:`STREAM_ROWS`).
    ``bindings``: the matches join the archive, which needs their bound events.
    ``here=False``: from the net alone, not whether this process built the kernel (what
    the parse and firing stages agree on wherever they run)."""
    return choose(engine_net(net, group), group_options(tie, bindings, here))


def group_options(tie: str, bindings: bool = False, here: bool = True) -> Options:
    """What a group's engine is chosen and built with (:func:`group_choice`)."""
    return Options(tie, bindings=GROUP_ARCHIVE if bindings else None, rows_why=STREAM_ROWS, anywhere=not here)


BATCH_BUDGET = Budget(MAX_PARTIAL_MATCHES)  # a batch task's matchers: the default budget of partial matches


def key_matcher(
    net: Net, group: Group, tie: str = "arrival", bindings: bool = False, engine: str = "kernel",
    budgets: tuple[Budget, Budget] = (BATCH_BUDGET, BATCH_BUDGET),
) -> Matcher:
    """The chooser's matcher for a group's net (:func:`group_choice`): the kernel where it
    covers it exactly, else the Python engine (``engine="python"``: that one); built with
    ``budgets`` (the kernel's, the Python engine's)."""
    options = replace(group_options(tie, bindings), engine=engine)
    own = engine_net(net, group)
    choice = choose(own, options)
    return matcher(choice, own, options, budgets[0] if choice.kernel else budgets[1])


def key_runner(
    net: Net, group: Group, clock: StreamClock, tie: str = "arrival", bindings: bool = False, engine: str = "kernel"
) -> KeyRunner:
    """A batch task's runner of a group (decided once per group and task, :func:`key_matcher`)."""
    return KeyRunner(key_matcher(net, group, tie, bindings, engine), group, clock)


def engine_report(choices: Sequence[tuple[Group, Choice]]) -> dict[str, Any]:
    """Which engine fires the groups of a distributed run, for its summary and ``--stats``:
    ``name`` ``kernel`` (every group), ``python`` (none) or ``mixed``; ``why`` the reasons of
    the groups on the Python engine; ``groups`` each group's patterns, engine and reason."""
    groups = [{"patterns": list(g.patterns), "name": c.engine, "why": c.why} for g, c in choices]
    names = {g["name"] for g in groups}
    name = names.pop() if len(names) == 1 else "mixed" if names else "kernel"
    why = "; ".join(
        f"{', '.join(repr(p) for p in g['patterns'])}: {g['why']}" for g in groups if g["name"] == "python"
    )
    return {"name": name, "why": why or "covered", "groups": groups}


def engine_line(report: dict[str, Any]) -> str:
    """The summary's line for :func:`engine_report`."""
    if report["name"] == "kernel":
        return "engine: kernel"
    if report["name"] == "python":
        return f"engine: python ({report['why']})"
    kernel = sum(g["name"] == "kernel" for g in report["groups"])
    return f"engine: kernel for {kernel} of {len(report['groups'])} key groups; python for {report['why']}"


def task_of(group: int, key: str, partitions: int) -> int:
    """A stable task number for a (group, key) (what a hash partitioner does)."""
    return zlib.crc32(f"{group}\x00{key}".encode()) % partitions


def copy_event(e: Event) -> Event:
    return Event(e.type, e.ts, e.pos, e.id, dict(e.attrs))


def run_partitioned(
    net: Net,
    events: Sequence[Event],
    tie: str = "arrival",
    partitions: int = 3,
    plan: Plan | None = None,
    kernel: bool = False,
    batch: int | None = None,
) -> Iterator[tuple[Match, int]]:
    """The distributed algorithm without Spark: route every event to its (group, key),
    split the keys over ``partitions`` tasks, run each task's :class:`KeyRunner`.

    Yields ``(match, emission position)``; the union over tasks equals the embedded
    engine's matches on the whole stream. ``kernel``: groups the compiled kernel covers run
    on it (:func:`key_runner`), as in the Spark firing stage. ``batch``: events reach the
    runners as the firing stage hands them over, ``batch`` rows at a time: a kernel group's
    typed (only the attributes it reads: :func:`kernel_fields`), the others as blobs,
    decoded as columns (:func:`~petricep.spark.shuffle.handed_over`), ``push_columns``."""
    plan = plan or make_plan(net)
    router = Router(plan)
    clock = StreamClock.from_events(events)
    layout = Layout.of([kernel_fields(net, grp, tie) for grp in plan.groups])  # (batch: how events travel)
    tasks: dict[tuple[int, int], list[Event]] = {}
    for e in sorted(events, key=lambda x: x.pos):
        for g, key in router.route(e):
            tasks.setdefault((task_of(g, key, partitions), g), []).append(copy_event(e))
    for (_, g), evs in sorted(tasks.items()):
        runner = key_runner(net, plan.groups[g], clock, tie, engine="kernel" if kernel else "python")
        if batch is None:
            for e in evs:
                yield from runner.push(e)
        else:
            for i in range(0, len(evs), batch):
                yield from runner.push_columns(handed_over(evs[i : i + batch], g, layout))
        yield from runner.finish()
