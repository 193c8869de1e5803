"""The ids and timestamps of the events the kernel may still bind, kept as the reader gave them.

The kernel binds events by position; a match reports the input's own ids and timestamps
(text ids, ints beyond float64, ``1`` vs ``1.0``). :class:`Remembered` keeps them by position
for as long as the kernel's store may hold the event, a batch at a time: a numeric column as
the NumPy array the reader typed (converted to Python values only for the events a match
binds: ``tolist`` gives exactly the ints and floats an :class:`~petricep.events.Event` would
hold), any other column as its list. So a batch of a million events costs no Python object
per event here; only what matches bind is ever looked up. :class:`Composites` does the same
for the composite events (RETURN) the kernel may still bind: their ids and times by match number.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

import numpy as np

# a column of one batch: a NumPy array (numbers) or a list of Python values
Column = Any
KEEP_SLACK = 4096  # events remembered beyond twice the store's before Remembered.keep filters
SMALL_PART = 1024  # a batch of fewer events joins the part before it, while that one is as small


class Remembered:
    """Positions (ascending), ids and timestamps of the events the kernel may still bind, as
    parts (one per batch added, the first one cut where :meth:`forget` cut it). Indices are
    into the concatenation of the parts, as :attr:`positions` lists them."""

    __slots__ = ("_parts", "_starts", "_positions", "_ts_types")

    def __init__(self) -> None:
        # (positions, ids, timestamps, the events themselves or None) per batch
        self._parts: list[tuple[np.ndarray, Column, Column, Any]] = []
        self._starts = np.zeros(1, dtype=np.int64)  # first index of each part, then the total
        self._positions: np.ndarray | None = np.zeros(0, dtype=np.int64)  # (None: to concatenate)
        self._ts_types: set[type] = set()

    def __len__(self) -> int:
        return int(self._starts[-1])

    def add(self, positions: np.ndarray, ids: Column, stamps: Column, events: Any = None) -> None:
        """A batch's events (positions after every one remembered); ``events``: the
        :class:`~petricep.events.Event` objects themselves (a list, or :class:`EventsOf`),
        where matches must carry what they bind (:meth:`events_at`)."""
        if not len(positions):
            return
        ids, stamps = _column(ids), _column(stamps)
        part = (np.asarray(positions, dtype=np.int64), ids, stamps, events)
        parts = self._parts
        if (
            parts and len(part[0]) < SMALL_PART and len(parts[-1][0]) < SMALL_PART
            and (events is None) == (parts[-1][3] is None)
            and _same_kind(parts[-1][1], ids) and _same_kind(parts[-1][2], stamps)
        ):
            # (small batches -- standard input's, a read's worth of lines -- join the last
            # part: every lookup walks the parts, so their number stays a fraction of the
            # events; of one kind only, so that a part of numbers stays NumPy: numbers_at)
            parts[-1] = _joined(parts[-1], part)
            self._starts[-1] += len(positions)
        else:
            parts.append(part)
            self._starts = np.append(self._starts, self._starts[-1] + len(positions))
        self._positions = None
        self._note_types(stamps)

    def forget(self, oldest: int) -> None:
        """Drop the events before position ``oldest`` (``-1``: every one)."""
        parts = self._parts
        if not parts:
            return
        if oldest < 0:
            self.clear()
            return
        drop = cut = 0
        while drop < len(parts) and int(parts[drop][0][-1]) < oldest:
            drop += 1
        if drop:
            del parts[:drop]
        if parts:
            pos, ids, stamps, events = parts[0]
            cut = int(np.searchsorted(pos, oldest))
            if cut:
                parts[0] = (pos[cut:], ids[cut:], stamps[cut:], None if events is None else events[cut:])
        if drop or (parts and cut):
            self._starts = np.concatenate(([0], np.cumsum([len(p[0]) for p in parts], dtype=np.int64)))
            self._positions = None

    def keep(self, stored: np.ndarray) -> None:
        """Drop the events whose positions are not in ``stored`` (ascending): the kernel's
        store holds every event a later match can bind. Cutting before the oldest one
        (:meth:`forget`) is cheap and usually enough; where the store holds a few events
        spread over a long stretch (it is compacted only once it has grown), the events
        between them are dropped too, so that what is remembered stays within a few times
        the store's size instead of growing with the stream."""
        self.forget(int(stored[0]) if len(stored) else -1)
        if len(self) <= 2 * len(stored) + KEEP_SLACK:
            return
        parts = []
        for pos, ids, stamps, events in self._parts:
            at = np.searchsorted(stored, pos)
            held = np.flatnonzero(stored[np.minimum(at, len(stored) - 1)] == pos)
            if len(held):
                parts.append((pos[held], _pick(ids, held), _pick(stamps, held), None if events is None else _pick(events, held)))
        self._parts = parts
        self._starts = np.concatenate(([0], np.cumsum([len(p[0]) for p in parts], dtype=np.int64)))
        self._positions = None

    def clear(self) -> None:
        self._parts = []
        self._starts = np.zeros(1, dtype=np.int64)
        self._positions = np.zeros(0, dtype=np.int64)

    @property
    def positions(self) -> np.ndarray:
        """Every remembered position, ascending (int64; made once per change)."""
        if self._positions is None:
            self._positions = np.concatenate([p[0] for p in self._parts]) if self._parts else np.zeros(0, dtype=np.int64)
        return self._positions

    def index_of(self, positions: np.ndarray) -> np.ndarray:
        """``np.searchsorted(self.positions, positions)`` (the index of each remembered
        position; of an absent one, where it would go), searched part by part: a kernel
        call's matches look up a few thousand positions among the hundreds of thousands
        remembered, which are not concatenated for it. Positions never fall, but one may
        repeat across parts (Spark streaming's runs remember some events twice): the first
        copy's index, as the search over the whole gives it."""
        parts = self._parts
        x = np.asarray(positions, dtype=np.int64)
        if self._positions is not None or len(parts) <= 1:
            return np.searchsorted(self.positions, x)  # type: ignore[no-any-return]
        firsts = np.array([int(p[0][0]) for p in parts], dtype=np.int64)
        # the last part starting below x: x's first copy is in it, or starts the next one
        part = np.maximum(np.searchsorted(firsts, x, side="left") - 1, 0)
        out = np.empty(x.shape, dtype=np.int64)
        for k, p in enumerate(parts):
            sel = part == k
            if sel.any():
                out[sel] = self._starts[k] + np.searchsorted(p[0], x[sel])
        return out

    @property
    def ts_types(self) -> set[type]:
        """The Python types of the timestamps remembered so far (ever, not only now)."""
        return self._ts_types

    def ids_at(self, index: Sequence[int] | np.ndarray) -> list[Any]:
        """The ids of the events at ``index`` (into :attr:`positions`), as Python values."""
        return self._values(1, index)

    def ts_at(self, index: Sequence[int] | np.ndarray) -> list[Any]:
        """The timestamps of the events at ``index``, as Python values."""
        return self._values(2, index)

    def numbers_at(self, which: int, index: np.ndarray) -> np.ndarray | None:
        """The ids (``which`` 1) or timestamps (2) of the events at ``index`` (each within
        ``len(self)``) as one NumPy array, where every part holds them as int64 or as float64
        (the numbers ``tolist`` makes the Python values of); else None (text, several kinds:
        :meth:`ids_at`). Gathered part by part: a match batch binds a few thousand events of
        the hundreds of thousands remembered, which are not concatenated for it."""
        kind = self.number_kind(which)
        if kind is None:
            return None
        idx = np.asarray(index, dtype=np.int64)
        parts = self._parts
        if len(parts) == 1:
            return parts[0][which][idx]  # type: ignore[no-any-return]
        out = np.empty(idx.shape, dtype=kind)
        part = np.searchsorted(self._starts, idx, side="right") - 1
        for k, p in enumerate(parts):
            sel = part == k
            if sel.any():
                out[sel] = p[which][idx[sel] - self._starts[k]]
        return out

    def number_kind(self, which: int) -> np.dtype | None:
        """int64 or float64 where every part holds its ids (``which`` 1) or timestamps (2) as
        a NumPy array of that one type (:meth:`numbers_at` gathers them); else None."""
        parts = self._parts
        if not parts or not all(isinstance(p[which], np.ndarray) for p in parts):
            return None
        kinds = {p[which].dtype for p in parts}
        return kinds.pop() if kinds == {np.dtype(np.int64)} or kinds == {np.dtype(np.float64)} else None

    def events_at(self, index: Sequence[int] | np.ndarray) -> list[Any]:
        """The events at ``index`` themselves (every part added with its events)."""
        if any(p[3] is None for p in self._parts):
            raise ValueError("events remembered without their Event objects")
        return self._values(3, index)

    def _values(self, which: int, index: Sequence[int] | np.ndarray) -> list[Any]:
        idx = np.asarray(index, dtype=np.int64).ravel()
        parts = self._parts
        if len(parts) == 1:
            return _take(parts[0][which], idx)
        part = np.searchsorted(self._starts, idx, side="right") - 1
        ascending = len(idx) < 2 or bool((part[1:] >= part[:-1]).all())
        if ascending and (not len(idx) or 0 <= part[0] <= part[-1] < len(parts)):
            # (the usual: an ascending index) each part's values are one run of the result
            ends = np.searchsorted(part, np.arange(len(parts) + 1)).tolist()
            ordered: list[Any] = []
            for k in range(len(parts)):
                if ends[k + 1] > ends[k]:
                    ordered.extend(_take(parts[k][which], idx[ends[k] : ends[k + 1]] - self._starts[k]))
            return ordered
        out: list[Any] = [None] * len(idx)
        for k in sorted(set(part.tolist())):
            rows = np.flatnonzero(part == k)
            for r, v in zip(rows.tolist(), _take(parts[k][which], idx[rows] - self._starts[k])):
                out[r] = v
        return out

    def all_ids(self) -> list[Any]:
        """Every remembered id (a snapshot)."""
        return self.ids_at(np.arange(len(self)))

    def all_ts(self) -> list[Any]:
        """Every remembered timestamp (a snapshot)."""
        return self.ts_at(np.arange(len(self)))

    def restore(self, positions: np.ndarray, ids: list[Any], stamps: list[Any], ts_types: set[type]) -> None:
        """A snapshot's remembered events (:meth:`all_ids`, :meth:`all_ts`) into this empty store."""
        self.clear()
        self.add(np.asarray(positions, dtype=np.int64), list(ids), list(stamps))
        self._ts_types = set(ts_types)

    def _note_types(self, stamps: Column) -> None:
        """The timestamps' Python types (one type: a match's start and end are found by vector
        operations); a numeric array's values are all of one type."""
        if len(self._ts_types) > 1:
            return
        if isinstance(stamps, np.ndarray) and stamps.dtype.kind in "iufb":
            self._ts_types.add(type(stamps[:1].tolist()[0]))
        else:
            self._ts_types.update(map(type, stamps))


def _column(col: Any) -> Column:
    """A batch's column as kept: a numeric NumPy array as it is, a range as one, anything
    else as a list of Python values (what the batch's events would hold)."""
    if isinstance(col, np.ndarray):
        return col if col.dtype.kind in "iufb" else col.tolist()
    if isinstance(col, range):
        return np.arange(col.start, col.stop, col.step, dtype=np.int64)
    return col if isinstance(col, list) else list(col)


def _joined(a: tuple[np.ndarray, Column, Column, Any], b: tuple[np.ndarray, Column, Column, Any]) -> tuple[np.ndarray, Column, Column, Any]:
    """Two parts as one: NumPy columns of one dtype stay one array, other columns become the
    lists of their Python values (what ``tolist`` makes: the values an Event holds)."""
    events = None if a[3] is None else [*a[3], *b[3]]
    return (np.concatenate((a[0], b[0])), _join_columns(a[1], b[1]), _join_columns(a[2], b[2]), events)


def _join_columns(a: Column, b: Column) -> Column:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype:
        return np.concatenate((a, b))
    return [*(a.tolist() if isinstance(a, np.ndarray) else a), *(b.tolist() if isinstance(b, np.ndarray) else b)]


def _pick(col: Any, idx: np.ndarray) -> Any:
    """``col`` at ``idx`` as a column of the same kind (an :class:`EventsOf`: a list)."""
    if isinstance(col, np.ndarray):
        return col[idx]
    return [col[i] for i in idx.tolist()]


def _take(col: Column, idx: np.ndarray) -> list[Any]:
    """``col``'s values at ``idx`` as Python values."""
    if isinstance(col, np.ndarray):
        return col[idx].tolist()  # type: ignore[no-any-return]
    return [col[i] for i in idx.tolist()]




class EventsOf:
    """A batch's events as a sequence made on demand (``make(i)``: row ``i`` as an
    :class:`~petricep.events.Event`): a columnar batch keeps no Event per row, and only the
    events some match binds are ever made."""

    __slots__ = ("_make", "_start", "_stop")

    def __init__(self, make: Any, start: int, stop: int) -> None:
        self._make = make
        self._start = start
        self._stop = stop

    def __len__(self) -> int:
        return self._stop - self._start

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            start, stop, _ = i.indices(len(self))
            return EventsOf(self._make, self._start + start, self._start + max(start, stop))
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._make(self._start + i)


class Composites:
    """The composite events the kernel may still bind, by match number (a bound id ``-1 - n``
    is match ``n``'s composite event): their ids (``pattern[ids...]``) and times, dropped once
    the kernel stores nothing from before them."""

    def __init__(self) -> None:
        self._pos: list[int] = []  # emitting positions, ascending
        self._no: list[int] = []
        self._entries: dict[int, tuple[str, Any, int]] = {}
        # the composite events themselves, where matches carry what they bind (--with-events)
        self._events: dict[int, Any] = {}

    def add_many(
        self, numbers: list[int], positions: list[int], idents: list[str], stamps: list[Any], entered: list[int]
    ) -> None:
        """Remember the composite events of matches ``numbers`` (ascending, as their emitting
        ``positions``): each one's id, time and position in the stream (``entered``: its
        emitter's, under the tie rule either its creator's, at or before the emitting one),
        tracked by emitting position (kept at least as long as the kernel stores it)."""
        self._entries.update(zip(numbers, zip(idents, stamps, entered)))
        self._pos.extend(positions)
        self._no.extend(numbers)

    def put(self, number: int, pos: int, ident: str, ts: Any) -> None:
        """Its id and time, to be :meth:`track`-ed in number order."""
        self._entries[number] = (ident, ts, pos)

    def track(self, number: int, pos: int) -> None:
        self._pos.append(pos)
        self._no.append(number)

    def state(self) -> dict[str, Any]:
        """Arrays and value lists (KernelRun.snapshot_state): entries in insertion order, then
        the tracked (position, number) pairs."""
        entries = list(self._entries.items())
        return {
            "number": np.array([n for n, _ in entries], dtype=np.int64),
            "ident": [e[0] for _, e in entries],
            "ts": [e[1] for _, e in entries],
            "pos": np.array([e[2] for _, e in entries], dtype=np.int64),
            "tracked_pos": np.array(self._pos, dtype=np.int64),
            "tracked_no": np.array(self._no, dtype=np.int64),
        }

    def restore(self, state: dict[str, Any]) -> None:
        numbers = [int(n) for n in state["number"]]
        if not len(numbers) == len(state["ident"]) == len(state["ts"]) == len(state["pos"]):
            raise ValueError("composite events' columns differ in length")
        self._entries = {n: (i, t, int(p)) for n, i, t, p in zip(numbers, state["ident"], state["ts"], state["pos"])}
        self._pos = [int(p) for p in state["tracked_pos"]]
        self._no = [int(n) for n in state["tracked_no"]]
        if len(self._pos) != len(self._no) or not set(self._no) <= set(self._entries):
            raise ValueError("composite events tracked without an entry")

    def put_event(self, number: int, event: Any) -> None:
        """Match ``number``'s composite event itself (its :meth:`add_many` entry made first),
        for the matches that bind it and carry their events; forgotten with its entry."""
        self._events[number] = event

    def event_of(self, ref: int) -> Any:
        return self._events[-1 - ref]

    def id_of(self, ref: int) -> str:
        return self._entries[-1 - ref][0]

    def ts_of(self, ref: int) -> Any:
        return self._entries[-1 - ref][1]

    def pos_of(self, ref: int) -> int:
        return self._entries[-1 - ref][2]

    def forget(self, oldest: int) -> None:
        """Drop the composite events emitted before position ``oldest`` (-1: all)."""
        cut = len(self._pos) if oldest < 0 else bisect_left(self._pos, oldest)
        if cut:
            for n in self._no[:cut]:
                del self._entries[n]
                self._events.pop(n, None)
            del self._pos[:cut], self._no[:cut]


__all__ = ["Composites", "EventsOf", "Remembered"]


def _same_kind(a: Column, b: Column) -> bool:
    """Whether two parts' columns join into one of the same kind (NumPy of one dtype, or lists)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.dtype == b.dtype
    return not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray)
