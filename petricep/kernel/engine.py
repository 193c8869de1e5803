"""The kernel behind the embedded engine's interface: events in, :class:`Match` objects out.

:class:`~petricep.api.runner.Run` reads, checks and prefilters rows into events the same way
whichever engine fires them, so the accounting, the rejected rows and their messages do not
depend on the engine. :class:`KernelEngine` collects those events into the kernel's columns,
fires them a batch at a time (:data:`BATCH` events) and turns the kernel's matches back into
the Python engine's :class:`Match` objects, in the same order, with the events' own ids and
timestamps:

* the kernel binds events by position; the adapter keeps each event's id and timestamp by
  position for as long as the kernel's store may hold the event (its oldest position), so a
  match reports exactly what the input said (text ids, ints beyond float64, ``1`` vs ``1.0``)
  with start / end the timestamps of its first and last bound events, as the engine's tokens;
* text values are dictionary codes (the kernel compares codes for ``=`` / ``!=`` and ranks
  for ordering), numbers float64 with their kind (int, float, bool), as in
  :class:`~petricep.kernel.run.KernelRun`; ``v.ts`` and ``v.id`` read the events' own;
* partition keys are codes of the key values by Python equality, as the engine's dicts
  (groups reading composite events share their producers' codes);
* a composite event is bound as ``-1 - n`` (match ``n`` of the run): its id
  (``pattern[ids...]``) and timestamp (its emitter's own) are remembered when match ``n`` is
  converted, for as long as the kernel may bind it; RETURN values become the match's attrs in
  the engine's kinds.

An evaluation error (``cannot compare 'x' < 3``) is raised at the next call after the matches
of the events before the failing one were returned, with the failing event attached, so the
run reports the same matches and the same located error as with the Python engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa

from petricep.compile.net import Net
from petricep.errors import EvaluationError, SnapshotError, StateLimitError
from petricep.events import Event, EventColumns, TypeColumn, value_at
from petricep.kernel import snapshot as state_bytes
from petricep.kernel.batches import MatchBatches
from petricep.kernel.bytecode import ID_ATTR, TS_ATTR
from petricep.kernel.columns import (
    NUMPY_KINDS,
    VALUE_KINDS,
    codes,
    hashable,
    hashable_numbers,
    hold_value,
    int_column,
    kernel_times,
    last_event,
    new_code,
    not_single,
    number_codes,
    numbers_at_once,
    type_named,
    value_kind,
    values_of,
)
from petricep.kernel.matchobjects import MatchObjects
from petricep.kernel.missing import missing_field
from petricep.kernel.remembered import EventsOf, Remembered
from petricep.kernel.run import TICK_CODE, KernelRun
from petricep.kernel.sqlside import SqlBeside, SqlSide
from petricep.kernel.tableplan import TAG_INT, TAG_NULL, TAG_NUM, TAG_STR, exact_ints
from petricep.runtime.match import Match
from petricep.runtime.memory import check_size

BATCH = 4096  # events per kernel call
# matches a kernel call buffers before they are taken: an explosive pattern's matches leave a
# batch in slices (push_columns_stream hands each to the writer before firing on)
MAX_OUT = 65_536
# the matches of one kernel call as a record batch (petricep.kernel.batches), or as Match
# objects where a record batch cannot hold them exactly
Chunk: TypeAlias = "pa.RecordBatch | list[Match]"
Placed: TypeAlias = "tuple[Chunk, np.ndarray]"  # a chunk and its matches' emitting positions
LIVE_BATCH_ROWS = 64  # a kernel call's matches over live input (standard input) made a record batch from this many
TICK = "\x00tick"  # the type of a clock tick in the buffer (Kernel.tick: no event, stream time moved)

# what the kernel fires (KernelRun.fire): types, times, positions, ids, attribute values and
# kinds, and the keys (a row of codes per group, or per group its codes or a coded column)
Fired: TypeAlias = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, "np.ndarray | list[Any]"]


class KernelEngine(SqlBeside):

    """``net`` on the kernel, driven like :class:`~petricep.runtime.engine.Engine`: ``push``
    one event (the matches of the batch it completes, in the engine's order), ``flush`` at
    the end, ``drain`` to fire the events collected so far without ending the stream.

    ``max_partial_matches``: the budget of live partial matches per shared net, and
    ``max_memory``: of the bytes the kernel's arenas hold (:mod:`petricep.runtime.memory`); both
    checked within a batch, where the arenas grow (the engine checks at its sweeps): over one,
    :class:`StateLimitError` as the engine words it, after the matches of the events before
    the one that went over (as an evaluation error). Its matches
    carry ids, times and the pattern; with ``with_events`` their bound events too
    (``Match.bindings()``, for a history join or ``--with-events``), the events kept for as
    long as the kernel may bind them (composite events too: the ones their matches made).
    ``live``: the input comes a read at a time (standard input): a call's few matches are
    handed out as Match objects, not as a record batch (:attr:`min_batch_rows`). The net's
    SQL queries run beside its patterns, on the kernel's row matcher (:mod:`.sqlside`)."""

    def __init__(
        self,
        net: Net,
        tie: str = "arrival",
        max_partial_matches: int | None = None,
        batch: int = BATCH,
        with_events: bool = False,
        max_memory: int | None = None,
        live: bool = False,
    ) -> None:
        self.net = net
        self.kernel = KernelRun(replace(net, rows=()) if net.rows else net, tie=tie)
        self._sql = SqlSide(net.rows, TICK) if net.rows else None
        lowered = self.kernel.lowered
        self._type_code = {t: i for i, t in enumerate(lowered.types)}
        self._type_code[TICK] = TICK_CODE
        self._attrs = lowered.attrs
        self._partitions = [g.partition for g in lowered.groups]
        self._read = list(dict.fromkeys([*lowered.attrs, *(a for p in self._partitions for a in p)]))
        self._keys = self.kernel.key_dicts  # partition key -> code, per group (shared by key class)
        self._batch = batch
        self._buf: list[Event] = []
        self._known = Remembered()  # id and timestamp of each event the kernel may still bind
        self._with_events = with_events
        self._out = MatchObjects(self.kernel, self._known, with_events)  # matches as Match objects
        self._error: EvaluationError | StateLimitError | None = None
        self._budget = (max_partial_matches, check_size(max_memory))
        self.kernel.set_budget(*self._budget)
        self._with_at = False  # _fire keeps (match, emitting position) pairs in _pairs
        self._pairs: list[Any] = []  # (match, position), or with _with_batches (chunk, positions)
        self._batches: MatchBatches | None = None  # the *_chunks methods: matches as record batches
        self._with_batches = False  # _taken keeps chunks in _chunks
        self._chunks: list[Chunk] = []
        self.max_out = MAX_OUT  # matches a kernel call buffers before they are taken
        # a call's matches as Match objects where fewer than this (live input, a read's lines at
        # a time: a record batch's fixed cost is a hundred Match objects')
        self.min_batch_rows = LIVE_BATCH_ROWS if live else 1
        self.sweep_every = batch  # the peak is sampled every that many events, and at the end
        self.peak = 0
        self._sampled_at = 0  # events fired at the last sample (_sample)
        self.events = 0

    # ------------------------------------------------------------------ driving

    def push(self, e: Event) -> list[Match]:
        """Collect ``e``; the matches of the batch it fills (none until then)."""
        if self._error is not None:
            raise self._error
        self._buf.append(e)
        return self._fire() if len(self._buf) >= self._batch else []

    def push_columns(self, cols: EventColumns) -> list[Match]:
        """A checked batch as columns (no :class:`Event` per row): fired at once, after the
        events collected before it; the matches of both."""
        if self._error is not None:
            raise self._error
        out = self._fire() if self._buf else []
        if self._error is not None or not len(cols):
            return out
        return out + [m for part in self._slices(*self._prepared(cols)) for m in part]

    def push_columns_iter(self, cols: EventColumns) -> Iterator[Match]:
        """:meth:`push_columns` as a generator: the matches of each slice of at most
        :data:`MAX_OUT` come out before the rest of the batch is fired (a library loop over
        an explosive pattern's matches holds a slice of them, not a batch's)."""
        if self._error is not None:
            raise self._error
        if self._buf:
            yield from self._fire()
        if self._error is not None or not len(cols):
            return
        for part in self._slices(*self._prepared(cols)):
            yield from part

    def push_columns_stream(self, cols: EventColumns) -> Iterator[Chunk]:
        """:meth:`push_columns_chunks` as a generator: the chunks of each slice of at most
        :data:`MAX_OUT` matches come out before the rest of the batch is fired, so that a
        pattern whose matches explode reaches the writer a slice at a time (the memory a
        batch's matches take stays bounded). An error is raised by the next call, as ever."""
        if self._error is not None:
            raise self._error
        if self._buf:
            yield from self._as_chunks(self.drain)
        if self._error is not None or not len(cols):
            return
        steps = self._slices(*self._prepared(cols))
        left = [True]

        def step() -> None:
            left[0] = next(steps, None) is not None

        while left[0]:
            yield from self._as_chunks(step)

    def _prepared(self, cols: EventColumns) -> tuple[Fired, int, Callable[[int], Event], Any]:
        """A checked batch as the kernel's columns (with what :meth:`_slices` needs); its ids
        and times remembered for the matches."""
        n = len(cols)
        types = self._type_codes(cols.types, n)
        pos = int_column(cols.pos)
        self._known.add(pos, cols.ids, cols.ts, EventsOf(cols.event, 0, n) if self._with_events else None)
        last = last_event(types, n)
        if last >= 0:
            self._out.last_input = (int(pos[last]), value_at(cols.ts, last))
        vals, tags = self._column_values({**cols.attrs, TS_ATTR: cols.ts, ID_ATTR: cols.ids}, n, types, cols.event)
        ts = kernel_times(cols.ts, n, cols.event)
        keys = self._column_keys(cols.attrs, n, types, cols.event)
        columns = (types, ts, pos, pos, vals, tags, keys)
        event = cols.event if self._sql is None else list(cols.events()).__getitem__  # (the queries read events)
        return columns, n, event, value_at(cols.ids, n - 1)

    def _type_codes(self, types: Any, n: int) -> np.ndarray:
        """The kernel's type code per row: a :class:`TypeColumn` through its few names, any
        other column value by value (once per distinct type)."""
        code = self._type_code
        if isinstance(types, TypeColumn):
            lookup = np.array([code.get(t, -1) for t in types.names] or [-1], dtype=np.int32)
            return lookup[types.codes]
        return codes(values_of(types), lambda t: code.get(t, -1), n).astype(np.int32)

    def push_columns_pairs(self, cols: EventColumns) -> list[tuple[Match, int]]:
        """:meth:`push_columns` with emitting positions, as :meth:`push_pairs` (rows of type
        :data:`TICK` are clock ticks: a key partition's batch with the stream's points)."""
        if self._error is not None:
            raise self._error
        return self._as_pairs(self.push_columns, cols)

    def tick(self, ts: Any, pos: int) -> list[tuple[Match, int]]:
        """Stream time reached ``(ts, pos)`` with no event of ours (``Engine.advance``), for a
        key partition of a distributed run: collected like an event; returns what
        :meth:`push_pairs` returns."""
        return self.push_pairs(Event(TICK, ts, pos))

    def push_pairs(self, e: Event) -> list[tuple[Match, int]]:
        """:meth:`push`, each match with the position that emitted it (an event's or a
        tick's; -1: the end of the stream)."""
        if self._error is not None:
            raise self._error
        self._buf.append(e)
        return self._fire_pairs() if len(self._buf) >= self._batch else []

    def flush_pairs(self, last: tuple[Any, int] | None = None) -> list[tuple[Match, int]]:
        """:meth:`flush` with emitting positions (-1 for what the end of the stream emits).
        ``last``: (ts, pos) of the stream's last input event where this engine did not see
        it (a key partition): composite events emitted at the end take it (Engine.flush)."""
        out = self._fire_pairs()
        if last is not None:
            self._out.last_input = (last[1], last[0])
            integral = isinstance(last[0], (int, np.integer)) and not isinstance(last[0], bool)
            self.kernel.kernel.set_last_input(float(last[0]), last[1], TAG_INT if integral else TAG_NUM)
        self._end()
        pairs = self._as_pairs(self._taken)
        self._sample_end()
        return out + pairs

    def _fire_pairs(self) -> list[tuple[Match, int]]:
        return self._as_pairs(self._fire)

    def _as_pairs(self, fire: Callable[..., Any], *args: Any) -> list[Any]:
        """What ``fire(*args)`` finds, with emitting positions: (match, position) pairs, or
        under ``_with_batches`` (:meth:`push_columns_placed`) (chunk, positions) pairs; an
        error raised with the pairs found before the failing event (``err.pairs``)."""
        self._with_at = True
        try:
            fire(*args)
        finally:
            self._with_at = False
        pairs, self._pairs = self._pairs, []
        if self._error is not None:
            self._error.pairs = pairs  # type: ignore[union-attr]  # found before the failing event
            raise self._error
        return pairs

    def drain(self) -> list[Match]:
        """Fire the events collected so far (the stream goes on)."""
        if self._error is not None:
            raise self._error
        return self._fire()

    def drain_pairs(self) -> list[tuple[Match, int]]:
        """:meth:`drain` with emitting positions: before a state snapshot
        (:func:`petricep.kernel.snapshot.dumps` refuses collected events that were not fired),
        keep what it returns -- those matches are not in the snapshot."""
        if self._error is not None:
            raise self._error
        return self._fire_pairs()

    @property
    def last_position(self) -> int:
        """The position of the last input event fired (-1 before the first): a snapshot keeps
        it, so that a restored engine's caller can go on numbering events after it."""
        last = self._out.last_input
        return -1 if last is None else last[0]

    @property
    def collected(self) -> int:
        """Events (and ticks) collected but not fired yet (:meth:`drain_pairs` fires them)."""
        return len(self._buf)

    def flush(self) -> list[Match]:
        """End of stream: fire what is collected, then close every window. (Call
        :meth:`drain` first to get the matches before an error in the last batch.)"""
        out = self.drain()
        if self._error is not None:
            raise self._error
        self._end()
        out += self._taken()
        self._sample_end()
        return out

    # ------------------------------------------------------------------ matches as record batches

    def push_chunks(self, e: Event) -> list[Chunk]:
        """:meth:`push`, the matches as :data:`Chunk` s: a record batch per kernel call
        (:mod:`petricep.kernel.batches`) where one holds them exactly, else its Match objects."""
        return self._as_chunks(self.push, e)

    def push_columns_chunks(self, cols: EventColumns) -> list[Chunk]:
        """:meth:`push_columns` as :meth:`push_chunks`."""
        return self._as_chunks(self.push_columns, cols)

    def drain_chunks(self) -> list[Chunk]:
        """:meth:`drain` as :meth:`push_chunks`."""
        return self._as_chunks(self.drain)

    def flush_chunks(self) -> list[Chunk]:
        """:meth:`flush` as :meth:`push_chunks`."""
        return self._as_chunks(self.flush)

    def push_columns_placed(self, cols: EventColumns) -> list[Placed]:
        """:meth:`push_columns_pairs` with the matches as :data:`Chunk` s (a distributed run's
        firing task writes record batches too): each with its matches' emitting positions
        (-1: the end of the stream); an error is raised at once, with the pairs found
        before the failing event (``err.pairs``), as :meth:`push_columns_pairs` raises it."""
        if self._error is not None:
            raise self._error
        return self._as_pairs(self._as_chunks, self.push_columns, cols)

    def _as_chunks(self, fire: Callable[..., object], *args: Any) -> list[Chunk]:
        """What ``fire(*args)`` finds, as chunks in the order found (an error is raised by
        the next call, as ever: the chunks before the failing event come first)."""
        if self._batches is None:
            self._batches = MatchBatches(self.kernel.lowered)
        self._chunks = []  # (what a call that raised had found is dropped, as its matches are)
        self._with_batches = True
        try:
            fire(*args)
        finally:
            self._with_batches = False
        chunks, self._chunks = self._chunks, []
        return chunks

    def _chunk(self, arrays: tuple[np.ndarray, ...]) -> Chunk:
        """One kernel call's matches: a record batch, or Match objects where none holds them
        exactly (a net binding composite events, ids or times of several kinds)."""
        batches = self._batches
        if batches is None or not batches.covered or self._with_events or len(arrays[0]) < self.min_batch_rows:
            return self._out.matches(arrays)  # (a writer reads their events; a few matches of live input)
        if batches.producers:
            self._out.register_composites(arrays)
        known = self._known
        found = batches.batch(arrays, known, self.kernel.strings, self.kernel.composites)
        return found if found is not None else self._out.match_objects(arrays)

    def _fire(self) -> list[Match]:
        evs, self._buf = self._buf, []
        if not evs:
            return []
        return self._run(self._columns(evs), len(evs), evs.__getitem__, evs[-1].id)

    def _run(self, columns: Fired, n: int, event: Callable[[int], Event], last_id: Any) -> list[Match]:
        """Fire ``n`` rows given as the kernel's columns; ``event(i)``: row ``i`` as an event
        (an error names it). The matches; with ``_with_at`` they go to ``_pairs`` instead."""
        return [m for part in self._slices(columns, n, event, last_id) for m in part]

    def _slices(
        self, columns: Fired, n: int, event: Callable[[int], Event], last_id: Any
    ) -> Iterator[list[Match]]:
        """:meth:`_run` a slice of at most :attr:`max_out` matches at a time: each slice's
        matches (:meth:`_taken`) as soon as the kernel stops for them. After an error, the
        matches of the rows before the failing one, then nothing (``_error`` is set)."""
        types, ts, pos, ids, vals, tags, keys = columns
        start = 0
        while start < n:
            try:
                done = self.kernel.fire(types, ts, pos, ids, vals, tags, keys, start=start, max_out=self.max_out)
            except (EvaluationError, StateLimitError) as exc:
                row = self.kernel.kernel.cur_row
                failed = event(row) if 0 <= row < n else None
                if failed is not None and isinstance(exc, EvaluationError):  # (a field an event lacks)
                    at = partial(self._event_at, row, pos, event)
                    readable = self._readable(failed, row, pos, event)
                    exc = missing_field(exc, at, readable, self.kernel.readers, self._type_code) or exc
                exc.event = failed  # type: ignore[union-attr]
                self._error = exc
                self.events += self._queries(event, start, max(row, 0))
                before = self._taken()  # the matches of the rows before the failing one
                if self._error is exc and isinstance(exc, StateLimitError):  # named with the input's own id
                    self._error = self._renamed(exc, failed.id if failed is not None else None)
                    self._error.event = failed  # type: ignore[attr-defined]
                yield before
                return
            failed_at = self._queries(event, start, done)
            if failed_at < done:  # a SQL query failed at a row the kernel fired
                self.events += failed_at
                yield self._taken()
                return
            start = done
            if start < n:
                yield self._taken()
        self.events += n
        out = self._taken()
        self._forget()
        self.kernel.compact_due()  # (no coded column in flight: the batch is fired)
        self._sample(last_id)
        yield out

    def _readable(self, failed: Event, row: int, pos: np.ndarray, event: Callable[[int], Event]) -> Iterator[Event]:
        """The events a condition failing at row ``row`` (``failed``) may have read: it, then
        the stored ones before it, latest first (of this batch's rows; with ``with_events``,
        of every batch's). Only after an error (:func:`~petricep.kernel.missing.missing_field`)."""
        yield failed
        stored = self.kernel.kernel.stored_positions()
        if self._with_events:
            at = self._known.index_of(stored[stored < failed.pos])
            yield from reversed(self._known.events_at(at))
            return
        held = set(stored.tolist())
        yield from (event(r) for r in range(row - 1, -1, -1) if int(pos[r]) in held)

    def _event_at(self, row: int, pos: np.ndarray, event: Callable[[int], Event], at: int) -> Event | None:
        """The event at input position ``at``, of this batch's rows up to ``row`` or (with
        ``with_events``) of the remembered ones; None where not at hand."""
        r = int(np.searchsorted(pos[: row + 1], at))
        if r <= row and int(pos[r]) == at:
            return event(r)
        if not self._with_events:
            return None
        i = int(self._known.index_of(np.array([at], dtype=np.int64))[0])
        known = i < len(self._known) and int(self._known.positions[i]) == at
        return self._known.events_at([i])[0] if known else None

    def _taken(self) -> list[Match]:
        """The matches the kernel found since the last call; with ``_with_at`` they go to
        ``_pairs`` (with their emitting positions) instead, with ``_with_batches`` to
        ``_chunks`` (as a record batch where one holds them)."""
        if self._sql is not None:
            return self._taken_beside(self._sql)
        if self._with_batches:
            arrays = self.kernel.take_matches()
            if len(arrays[0]) and self._with_at:
                self._pairs.append((self._chunk(arrays), arrays[5]))
            elif len(arrays[0]):
                self._chunks.append(self._chunk(arrays))
            return []
        if not self._with_at:
            return self._out.matches(self.kernel.take_matches())
        found, at = self._out.matches_at(self.kernel.take_matches())
        self._pairs.extend(zip(found, at))
        return []


    def _renamed(self, exc: StateLimitError, event_id: Any) -> StateLimitError:
        """A LIMIT ... FAIL or budget error of the kernel, named with the input's own id
        (``event_id``: the failing row's), once the matches before the failing row are taken."""
        run = self.kernel
        if hasattr(exc, "kernel_args"):
            pattern, group, key, held = exc.kernel_args
            return run.limit_error(pattern, group, key, self._held_id(held, event_id))
        if hasattr(exc, "budget_args"):
            pattern, group, key, key_live, live, budget = exc.budget_args
            return run.budget_error(pattern, group, key, key_live, live, budget, event_id)
        if hasattr(exc, "memory_args"):
            parts, more, size = exc.memory_args
            return run.memory_error(parts, more, size, event_id)
        return exc

    def _held_id(self, held: int, event_id: Any) -> Any:
        """The id of the event the kernel holds as ``held``: a composite event (``-1 - n``,
        match ``n``, emitted by the failing row: the kernel's ``take_dropped``, not counted)
        by its match's id (``pattern[ids...]``, as the engine names it); an input event by its
        position (tie rule either fires a group at the row after it), else ``event_id``."""
        if held < 0:
            run = self.kernel
            run.first_taken = run.kernel.taken
            self._out.register_composites(tuple(run.kernel.take_dropped()))
            return run.composites.id_of(held)
        known = self._known
        at = int(known.index_of(np.array([held], dtype=np.int64))[0])
        if at < len(known) and int(known.positions[at]) == held:
            return known.ids_at([at])[0]
        return event_id

    def _end(self) -> None:
        """End of stream for the kernel and the SQL queries; a LIMIT ... FAIL there (a
        composite event the end emits, tie rule either's last group) named as the engine
        names it, the end's matches dropped (the engine's flush returns none of them)."""
        try:
            self._finish()
        except StateLimitError as exc:
            self._taken()
            self._error = self._renamed(exc, None)
            raise self._error from None

    def _sample(self, last_id: Any) -> None:
        """The peak of live partial matches, sampled after a batch once :attr:`sweep_every`
        events have passed since the last sample, as the Python engine samples it at its
        sweeps (the budgets are checked within a batch: KernelRun.set_budget). A run of fewer
        events is counted once, at its end (:meth:`_sample_end`), as the engine counts it."""
        if self.events - self._sampled_at >= self.sweep_every:
            self._sampled_at = self.events
            self.peak = max(self.peak, self.live_partial_matches())

    def _sample_end(self) -> None:
        """End of stream, every window closed (Engine.flush samples the peak there, before
        it lets every partial match go): the last group matched under the tie rule either,
        the partial matches of composite events emitted at the end. Then none is left."""
        if self.events:
            self.peak = max(self.peak, self.live_partial_matches())
        self.kernel.kernel.clear()  # every partial match is gone, as in the engine

    # ------------------------------------------------------------------ state snapshots

    def snapshot_state(self) -> dict[str, Any]:
        """Everything needed to go on after the last batch fired, as NumPy arrays, scalars and
        lists of Python values (:mod:`petricep.kernel.snapshot` encodes it): the run's
        (:meth:`KernelRun.snapshot_state`) and the adapter's -- ids and timestamps of the events
        the kernel may still bind, the last input event, the kinds of timestamps seen, counts.
        Refused (:class:`SnapshotError`) while events are collected but not fired or an error
        is pending."""
        if self._error is not None:
            raise SnapshotError(f"no snapshot of a run stopped by an error ({self._error})")
        if self._with_events:
            raise SnapshotError("no snapshot of a run whose matches carry their events (with_events)")
        if self._sql is not None:
            raise SnapshotError("no snapshot of a run with SQL queries (their row matcher's state is not the kernel's)")
        if self._buf:
            raise SnapshotError(
                f"{len(self._buf)} collected events are not fired yet: call drain_pairs() first "
                "(and keep the matches it returns) before taking a snapshot"
            )
        state = self.kernel.snapshot_state()
        self._forget()  # (the store was compacted: fewer events to remember)
        known = self._known
        types = sorted(f"{t.__module__}.{t.__qualname__}" for t in known.ts_types)
        state.update({
            "engine.batch": self._batch,
            "engine.sweep_every": self.sweep_every,
            "engine.peak": self.peak,
            "engine.events": self.events,
            "engine.known_pos": known.positions.copy(),
            "engine.known_id": known.all_ids(),
            "engine.known_ts": known.all_ts(),
            "engine.ts_types": types,
            "engine.ts_type_count": len(known.ts_types),
            "engine.last_input": None if self._out.last_input is None else list(self._out.last_input),
        })
        return state

    def restore_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`snapshot_state` into this fresh engine of the same net and tie rule
        (ValueError, KeyError or TypeError where the state is inconsistent)."""
        if self.events or self._buf:
            raise SnapshotError("a snapshot restores into a fresh engine only")
        self.kernel.restore_state(state)
        self.kernel.set_budget(*self._budget)  # (the room left: from the restored tokens)
        self._batch = int(state["engine.batch"])
        self.sweep_every = int(state["engine.sweep_every"])
        self.peak = int(state["engine.peak"])
        self.events = int(state["engine.events"])
        self._sampled_at = self.events  # (the next sample: sweep_every events on)
        positions, ids, stamps = state["engine.known_pos"], state["engine.known_id"], state["engine.known_ts"]
        if not len(positions) == len(ids) == len(stamps):
            raise ValueError("remembered events' columns differ in length")
        ts_types = {type_named(name) for name in state["engine.ts_types"]}
        if len(ts_types) != int(state["engine.ts_type_count"]):
            raise ValueError("the remembered timestamps' types do not match their count")
        self._known.restore(np.asarray(positions, dtype=np.int64), ids, stamps, ts_types)
        last = state["engine.last_input"]
        self._out.last_input = None if last is None else (int(last[0]), last[1])

    # ------------------------------------------------------------------ events -> columns

    def _columns(self, evs: Sequence[Event]) -> Fired:
        """The kernel's columns of collected events: their fields as the columns a checked
        batch would have (:meth:`push_columns` reads the same way)."""
        n = len(evs)
        code = self._type_code
        types = np.fromiter((code.get(e.type, -1) for e in evs), dtype=np.int32, count=n)
        pos = np.fromiter((e.pos for e in evs), dtype=np.int64, count=n)
        ts = kernel_times([e.ts for e in evs], n, evs.__getitem__)
        self._known.add(pos, [e.id for e in evs], [e.ts for e in evs], list(evs) if self._with_events else None)
        for e in reversed(evs):
            if e.type != TICK:
                self._out.last_input = (e.pos, e.ts)
                break
        attrs = {name: [e.attrs.get(name) for e in evs] for name in self._read}
        if TS_ATTR in attrs:
            attrs[TS_ATTR] = [e.ts for e in evs]
        if ID_ATTR in attrs:
            attrs[ID_ATTR] = [e.id for e in evs]
        event = evs.__getitem__
        return (types, ts, pos, pos, *self._column_values(attrs, n, types, event), self._column_keys(attrs, n, types, event))

    def _forget(self) -> None:
        """Drop what no later match can bind: the events the kernel does not store."""
        stored = self.kernel.kernel.stored_positions()
        self._known.keep(stored)
        self.kernel.composites.forget(int(stored[0]) if len(stored) else -1)

    def _column_values(
        self, attrs: dict[str, Any], n: int, types: np.ndarray, event: Callable[[int], Event]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Attribute values and kinds (int, float, bool, text code, None) per row: numeric numpy
        columns as they are, the others value by value. A value the kernel has no kind for (a
        list, an object) in a field no condition reads of its row's type is never read: None
        (the readers let it through there, docs/INPUT.md); where one is read, the row's error
        (``types``: the rows' type codes, ``event(row)``: the row as an event)."""
        na = max(len(self._attrs), 1)
        vals = np.zeros((n, na), dtype=np.float64)
        tags = np.zeros((n, na), dtype=np.int8)
        string = self.kernel.string_code
        big = self.kernel.kernel.big_code
        for a, name in enumerate(self._attrs):
            col = attrs.get(name)
            if col is None:
                continue  # a field no event of this batch carries: never read
            if isinstance(col, np.ndarray) and col.dtype.kind in "iufb":
                vals[:, a] = col
                tags[:, a] = NUMPY_KINDS[col.dtype.kind]
                if col.dtype.kind in "iu":
                    exact_ints(col, vals[:, a], tags[:, a], big)
                continue
            if numbers_at_once(col, vals[:, a], tags[:, a]):
                continue
            readers = self.kernel.readers[name]
            for r, v in enumerate(col):
                kind = VALUE_KINDS.get(type(v))
                if kind is None:
                    kind = value_kind(v)
                if kind is None:
                    if int(types[r]) in readers:
                        raise not_single(name, v, event(r))
                    kind = TAG_NULL
                if kind == TAG_STR:
                    vals[r, a] = string(v)
                elif kind != TAG_NULL:
                    vals[r, a], kind = hold_value(v, kind, big)
                tags[r, a] = kind
        return vals, tags

    def _column_keys(
        self, attrs: dict[str, Any], n: int, types: np.ndarray, event: Callable[[int], Event]
    ) -> np.ndarray | list[Any]:
        """Partition key codes per shared net and row (codes of the key values as Python values,
        so that keys are equal where the engine's dict keys are); a group keyed by one column
        of integers gets the column and the IntKeys that codes it as the kernel reads its rows
        (then a list, a group each: KernelRun.int_keys). A key that is no key (a list, an
        object) where the group reads no event of its row's type: as if absent (None)."""
        keys = np.zeros((max(len(self._partitions), 1), n), dtype=np.int64)
        coded: dict[int, tuple[np.ndarray, Any]] = {}
        done: dict[tuple[int, tuple[str, ...]], np.ndarray] = {}  # groups sharing a dictionary and attributes
        for gi, names in enumerate(self._partitions):
            if not names:
                continue
            seen = self._keys[gi]
            numbers = attrs.get(names[0]) if len(names) == 1 else None
            ints = self.kernel.int_keys(numbers, seen) if isinstance(numbers, np.ndarray) else None
            if ints is not None:
                coded[gi] = ints
                continue
            same = (id(seen), names)
            if same not in done:
                code_of = partial(new_code, seen)
                if isinstance(numbers, np.ndarray) and hashable_numbers(numbers):
                    done[same] = number_codes(numbers, code_of)
                    keys[gi] = done[same]
                    continue
                cols = [values_of(attrs[a]) if a in attrs else [None] * n for a in names]
                values = cols[0] if len(cols) == 1 else list(zip(*cols))
                try:
                    done[same] = codes(values, code_of, n)
                except TypeError:  # an unhashable value: which rows read it is the group's own
                    keys[gi] = self._unhashable_keys(values, code_of, gi, names, types, event)
                    continue
            keys[gi] = done[same]
        return keys if not coded else [coded.get(gi, keys[gi]) for gi in range(len(keys))]

    def _unhashable_keys(
        self,
        values: list[Any],
        code_of: Callable[[Any], int],
        gi: int,
        names: tuple[str, ...],
        types: np.ndarray,
        event: Callable[[int], Event],
    ) -> np.ndarray:
        """Group ``gi``'s key codes of rows some of whose keys are unhashable: those of types
        the group does not read are absent keys (None); one it reads is the row's error."""
        reads = self.kernel.group_types[gi]
        out = np.empty(len(values), dtype=np.int64)
        for r, v in enumerate(values):
            try:
                out[r] = code_of(v)
            except TypeError:
                if int(types[r]) in reads:
                    at = 0 if len(names) == 1 else next(i for i, x in enumerate(v) if not hashable(x))
                    raise not_single(names[at], v if len(names) == 1 else v[at], event(r)) from None
                out[r] = code_of(None)
        return out

    # ------------------------------------------------------------------ accounting

    def live_partial_matches(self) -> int:
        """Partial matches that can still be extended at the last event fired (the SQL
        queries' open searches too)."""
        return self.kernel.live_partial_matches() + (self._sql.live() if self._sql is not None else 0)

    def report(self, read: int | None = None, rejected: int = 0) -> dict[str, Any]:
        """The engine's accounting (:meth:`Engine.report`), from what the kernel counts: per
        pattern its matches, timeouts and partial matches a LIMIT dropped; partial matches
        alive in all (not per pattern) and their peak, sampled after every batch."""
        processed = self.events + len(self._buf)
        stats = self.kernel.stats
        timeouts, dropped = stats["timeouts"], stats["dropped"]
        return {
            "events": {
                "read": processed + rejected if read is None else read,
                "processed": processed,
                "rejected": rejected,
                "late": 0,
                "composite": self.kernel.kernel.composites,
            },
            "patterns": {
                **{
                    name: {"matches": count, "timeouts": timeouts[name], "dropped": dropped[name]}
                    for name, count in self.kernel.matches.items()
                },
                **(self._sql.report() if self._sql is not None else {}),
            },
            "partial_matches": {"alive": self.live_partial_matches(), "peak": self.peak, "dropped": sum(dropped.values())},
        }

    def marking(self) -> None:
        """No marking counts on the kernel (``--stats``'s net section needs the Python engine)."""
        return None

    # ------------------------------------------------------------------ the matcher contract

    def advance(self, ts: Any, pos: int) -> list[Match]:
        """Stream time reached ``(ts, pos)`` with no event of ours (``Engine.advance``): the
        matches it releases, and those of the events collected before it."""
        return [m for m, _ in self.tick(ts, pos) + self.drain_pairs()]

    def snapshot(self) -> bytes:
        """The state as Arrow IPC bytes (:mod:`petricep.kernel.snapshot`; ``drain`` first)."""
        return state_bytes.dumps(self)

    def restore(self, data: bytes) -> None:
        """Put back a :meth:`snapshot` of an engine over the same net and tie rule."""
        state_bytes.restore(self, data)

    @classmethod
    def restored(
        cls, data: bytes, net: Net, tie: str = "arrival", max_partial_matches: int | None = None
    ) -> KernelEngine:
        """A fresh engine over ``net`` under ``tie`` in the state of ``data`` (a snapshot)."""
        engine = cls(net, tie=tie, max_partial_matches=max_partial_matches)
        engine.restore(data)
        return engine


__all__ = ["BATCH", "KernelEngine"]
