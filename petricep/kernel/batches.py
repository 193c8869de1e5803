"""The kernel's matches as Arrow record batches, with the input's own ids and times.

Why: a run that writes its matches to a file (``petricep run``) needs no :class:`Match`
object per match; turning the kernel's match arrays into columns costs a few vector
operations per batch instead of a dict and an object per match (bench/HISTORY.md, issue 16).

A batch has the columns of :meth:`KernelRun._table <petricep.kernel.run.KernelRun>`:
``pattern`` (dictionary of the net's pattern names, in the net's order), ``start``, ``end``,
one column per variable name (first-seen order over the patterns; a Kleene variable a
``list<...>`` column in stream order; null where the row's pattern has no such variable),
with RETURN or ON TIMEOUT an ``attrs`` struct of the fields (null where the row's pattern
or its variant has no such field, or the value is None), with ON TIMEOUT a ``timeout``
struct (type, deadline; null for a completed match).

A batch holds exactly what the engine's :class:`Match` objects would: every value keeps its
Python kind in its column's type (int64, float64, text, bool). Where it cannot -- ids or
times of several kinds among the events a batch binds (``1`` beside ``1.0``, text beside
numbers, None ids, ints beyond int64, non-finite numbers), a RETURN field holding several
kinds -- :meth:`MatchBatches.batch` returns None and the caller converts that batch match by
match. In a net some pattern of which binds composite events, the caller first remembers the
composite events of the call's matches (their ids are ``pattern[ids]`` texts, made for the
matches that emit one); a variable binding them is a text column of those ids
(:class:`BoundEvents` ranks input and composite events in stream order, for start and end).
Only a Kleene list in such a net, and a net with repeated groups (their bindings are their
steps' lists zipped), are never made into batches (:attr:`MatchBatches.covered`).
Where the remembered ids and times are numbers (int64 or float64 arrays, as a file's reader
hands them over), a batch's id and time columns are taken from those arrays
(:meth:`BoundEvents.arrays`); else from their Python values (:meth:`BoundEvents.values`).

Arrays are built from numpy buffers (:mod:`petricep.runtime.arrow`), never by ``pa.array``
of Python or numpy values, which would import pandas into every run (its start-up cost).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from petricep.kernel.lowering import Lowered
from petricep.kernel.remembered import Composites, Remembered
from petricep.kernel.tableplan import TAG_BOOL, TAG_INT, TAG_MISSING, TAG_NULL, TAG_NUM, TAG_STR
from petricep.runtime.arrow import bool_array, number_array, string_array

_NONE = np.iinfo(np.int64).max  # an unbound slot's index (never the minimum)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` of an integer array by one sort: cheaper for the few thousand
    values of a kernel call's matches than numpy's hashing (which also imports ``numpy.ma``,
    ~10 ms, into the first run that finds a match)."""
    if len(values) < 2:
        return values.copy()
    ordered = np.sort(values)
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def exact_array(values: list[Any]) -> pa.Array | None:
    """``values`` as one Arrow array that gives every value back as it is (ints that fit
    int64, finite floats, text); None when they are of several kinds or of another."""
    kinds = set(map(type, values))
    try:
        if kinds == {int}:
            return number_array(np.array(values, dtype=np.int64), pa.int64())
        if kinds == {str}:
            return string_array(values)
        if kinds == {float}:
            arr = np.array(values, dtype=np.float64)
            return number_array(arr, pa.float64()) if np.isfinite(arr).all() else None
    except (OverflowError, UnicodeEncodeError):  # an int beyond int64, text that is not UTF-8
        return None
    return None


class MatchBatches:
    """Builds record batches (see the module docstring) from the kernel's match arrays."""

    def __init__(self, lowered: Lowered) -> None:
        self.patterns = lowered.patterns
        self.names = string_array([p.name for p in self.patterns])
        # some pattern's matches are composite events another pattern binds (their ids are
        # texts remembered match by match, by the caller, before the batch is made)
        self.producers = any(p.ret_type >= 0 or p.to_type >= 0 for p in self.patterns)
        # (a Kleene list's elements are input events' positions: not in a net with composites)
        self.covered = not (self.producers and any(p.kleene for p in self.patterns))
        self.columns: dict[str, list[tuple[int, int]]] = {}  # variable -> (pattern, slot) pairs
        for pi, p in enumerate(self.patterns):
            for name, slot in p.vars:
                self.columns.setdefault(name, []).append((pi, slot))
        self.lists = frozenset(v for p in self.patterns for v in p.kleene)
        # a variable name that is a list in one pattern and an event in another: Match objects
        singles = {name for p in self.patterns for name, _ in p.vars if name not in p.kleene}
        # (a repeated group's bindings are the steps' lists zipped: Match objects)
        self.covered = self.covered and not (self.lists & singles) and not any(p.groups for p in self.patterns)
        self.outputs = [p.returns for p in self.patterns] + [p.timeouts for p in self.patterns]
        self.fields = list(dict.fromkeys(f for names in self.outputs for f in names))
        self.timeouts = any(p.timeout_type for p in self.patterns)

    def batch(
        self,
        arrays: tuple[np.ndarray, ...],
        known: Remembered,
        strings: Callable[[], list[str]],
        composites: Composites | None = None,
    ) -> pa.RecordBatch | None:
        """The matches of ``arrays`` (:meth:`KernelRun.take_matches`) as a record batch;
        ``known``: the remembered events (their ids and timestamps);
        ``strings()``: the run's string dictionary; ``composites``: the composite events
        bound (as refs ``-1 - n``), registered. None: not exact (the module docstring)."""
        pattern, refs, bound, values, kinds, klen, klist = (arrays[i] for i in (0, 3, 4, 6, 7, 9, 10))
        npat = len(self.patterns)
        base = pattern % npat
        bound_events = BoundEvents(refs, bound, klist, composites)
        at = bound_events.rank_of_refs(refs)  # (meaningless for Kleene slots: offsets into klist)
        in_lists = bound_events.rank_of_positions(klist)
        lo = np.full(len(pattern), _NONE, dtype=np.int64)
        hi = np.full(len(pattern), -1, dtype=np.int64)
        picks: dict[str, Any] = {}  # variable -> index per row (-1: none), or (offsets, flat, valid)
        for name, where in self.columns.items():
            if name in self.lists:
                picks[name] = _list_picks(base, refs, bound, klen, in_lists, where, lo, hi)
            else:
                picks[name] = _picks(base, at, bound, where, lo, hi)
        used = sorted_unique(np.concatenate([lo, hi, *(p if isinstance(p, np.ndarray) else p[1] for p in picks.values())]))
        used = used[(used >= 0) & (used != _NONE)]
        columnar = bound_events.arrays(used, known, composites)
        if columnar is not None:  # (numeric ids and times: no Python value per input event)
            id_arr, ts_arr = columnar.ids, columnar.stamps
        else:
            composites_id = composites.id_of if composites is not None else None
            composites_ts = composites.ts_of if composites is not None else None
            id_values = bound_events.values(used, known.positions, known.ids_at, composites_id)
            id_arr = exact_array(id_values)
            ts_arr = exact_array(bound_events.values(used, known.positions, known.ts_at, composites_ts))
            if ts_arr is None or (id_arr is None and not len(bound_events.numbers)):
                return None
        cols: dict[str, Any] = {
            "pattern": pa.DictionaryArray.from_arrays(number_array(base, pa.int32()), self.names),
            "start": ts_arr.take(number_array(np.searchsorted(used, lo), pa.int64())),
            "end": ts_arr.take(number_array(np.searchsorted(used, hi), pa.int64())),
        }
        for name, pick in picks.items():
            if columnar is not None and columnar.texts is not None:  # input ids beside composite ids
                column = columnar.variable(used, pick)
                if column is None:
                    return None
                cols[name] = column
            elif id_arr is None:  # composite events' text ids beside input events' ids: a column at a time
                column = _column_ids(id_values, used, pick)
                if column is None:
                    return None
                cols[name] = column
            else:
                cols[name] = _list_ids(id_arr, used, *pick) if name in self.lists else _ids(id_arr, used, pick)
        if self.fields:
            attrs = self._attrs(pattern, values, kinds, strings)
            if attrs is None:
                return None
            cols["attrs"] = attrs
        if self.timeouts:
            timeout = self._timeout(pattern, cols["start"], bound_events.position_of(lo))
            if timeout is None:
                return None
            cols["timeout"] = timeout
        return pa.RecordBatch.from_pydict(cols)

    def _attrs(
        self, pattern: np.ndarray, values: np.ndarray, kinds: np.ndarray, strings: Callable[[], list[str]]
    ) -> pa.Array | None:
        """The RETURN / ON TIMEOUT fields as a struct, one type per field (None: a field holds
        values of several kinds, or an int no int64 holds)."""
        n = len(pattern)
        arrays = []
        for f in self.fields:
            val = np.zeros(n, dtype=np.float64)
            kind = np.full(n, TAG_NULL, dtype=np.int8)
            for vp, names in enumerate(self.outputs):
                if f in names:
                    rows = pattern == vp
                    j = names.index(f)
                    val[rows] = values[rows, j]
                    kind[rows] = kinds[rows, j]
            column = _value_column(val, kind, strings)
            if column is None:
                return None
            arrays.append(column)
        return pa.StructArray.from_arrays(arrays, self.fields)

    def _timeout(self, pattern: np.ndarray, start: pa.Array, first_pos: np.ndarray) -> pa.Array | None:
        """Per row a timeout's type and deadline (the engine's: the window added to the start,
        or to the first bound position for a count window), null for a match; None when the
        deadlines are ints in some rows and floats in others."""
        npat = len(self.patterns)
        n = len(pattern)
        starts = np.array(start.to_pylist())  # int64 or float64, as the times are
        types: list[str | None] = [None] * n
        parts: list[np.ndarray] = []
        rows_of: list[np.ndarray] = []
        for pi, p in enumerate(self.patterns):
            rows = np.flatnonzero(pattern == npat + pi)
            if not len(rows) or p.window is None:
                continue
            origin = first_pos[rows] if p.count_window else starts[rows]
            parts.append(origin + p.window)  # numpy keeps Python's int + int, int + float, float + x
            rows_of.append(rows)
            for r in rows.tolist():
                types[r] = p.timeout_type
        kinds = {a.dtype.kind for a in parts}
        if len(kinds) > 1:
            return None
        dtype = np.int64 if kinds == {"i"} else np.float64
        deadline = np.zeros(n, dtype=dtype)
        valid = np.zeros(n, dtype=bool)
        for rows, d in zip(rows_of, parts):
            deadline[rows] = d
            valid[rows] = True
        if dtype == np.float64 and not np.isfinite(deadline[valid]).all():
            return None
        fields = [string_array(types), number_array(deadline, pa.int64() if dtype == np.int64 else pa.float64(), valid)]
        return pa.StructArray.from_arrays(fields, ["type", "deadline"], mask=bool_array(~valid))


class BoundEvents:
    """The events a kernel call's matches bind -- input events by position, composite events
    by match number -- ranked in stream order (a composite event right after its emitting
    event, composites of one event in match order): a match's first and last bound events are
    its lowest and highest ranks, as the engine's tokens order them."""

    def __init__(self, refs: np.ndarray, bound: np.ndarray, klist: np.ndarray, composites: Composites | None) -> None:
        mask = bound.astype(bool)
        self.inputs = sorted_unique(np.concatenate([refs[mask & (refs >= 0)], klist]))
        numbers = sorted_unique(-1 - refs[mask & (refs < 0)])
        self.numbers = numbers
        if len(numbers):
            assert composites is not None
            cpos = np.array([composites.pos_of(-1 - n) for n in numbers.tolist()], dtype=np.int64)
        else:
            cpos = np.zeros(0, dtype=np.int64)
        pos = np.concatenate([self.inputs, cpos])
        kind = np.concatenate([np.zeros(len(self.inputs), dtype=np.int64), np.ones(len(numbers), dtype=np.int64)])
        self.order = np.lexsort((np.concatenate([np.zeros(len(self.inputs), dtype=np.int64), numbers]), kind, pos))
        self.rank = np.empty(len(pos), dtype=np.int64)
        self.rank[self.order] = np.arange(len(pos), dtype=np.int64)
        self.sorted_pos = pos[self.order]

    def rank_of_positions(self, positions: np.ndarray) -> np.ndarray:
        """The ranks of input events by position (every one among the bound)."""
        if not len(self.inputs):
            return np.zeros(positions.shape, dtype=np.int64)
        return self.rank[np.searchsorted(self.inputs, positions).clip(0, len(self.inputs) - 1)]  # type: ignore[no-any-return]

    def rank_of_refs(self, refs: np.ndarray) -> np.ndarray:
        """Each bound ref's rank (an input position or ``-1 - n``; unbound slots: any rank)."""
        at = self.rank_of_positions(refs)
        if len(self.numbers):
            found = np.searchsorted(self.numbers, -1 - refs).clip(0, len(self.numbers) - 1)
            at = np.where(refs < 0, self.rank[len(self.inputs) + found], at)
        return at

    def position_of(self, ranks: np.ndarray) -> np.ndarray:
        """The stream positions of ranked events (a composite event's: its emitter's)."""
        if not len(self.sorted_pos):
            return ranks
        return self.sorted_pos[ranks.clip(0, len(self.sorted_pos) - 1)]  # type: ignore[no-any-return]

    def arrays(self, ranks: np.ndarray, known: Remembered, composites: Composites | None) -> _Bound | None:
        """The ids and times of ranked events as Arrow arrays, where the remembered ones are
        numbers (:meth:`Remembered.numbers_at`) and every time is of their one kind (a
        composite event's too); None: :meth:`values` makes them as Python values."""
        entry = self.order[ranks]
        n_in = len(self.inputs)
        is_input = entry < n_in
        index = known.index_of(self.inputs[entry[is_input]])
        ids, stamps = known.numbers_at(1, index), known.numbers_at(2, index)
        if ids is None or stamps is None:
            return None
        if is_input.all():
            id_arr, ts_arr = _exact_numbers(ids, None), _exact_numbers(stamps, None)
            return None if id_arr is None or ts_arr is None else _Bound(id_arr, ts_arr, None, is_input)
        assert composites is not None
        refs = (-1 - self.numbers[entry[~is_input] - n_in]).tolist()
        texts = exact_array([composites.id_of(r) for r in refs])
        times = [composites.ts_of(r) for r in refs]
        kind = int if stamps.dtype == np.int64 else float
        if texts is None or any(type(t) is not kind for t in times):
            return None
        try:
            all_ts = np.empty(len(entry), dtype=stamps.dtype)
            all_ts[is_input] = stamps
            all_ts[~is_input] = np.array(times, dtype=stamps.dtype)
        except OverflowError:  # (an int no int64 holds)
            return None
        all_ids = np.zeros(len(entry), dtype=ids.dtype)
        all_ids[is_input] = ids
        id_arr, ts_arr = _exact_numbers(all_ids, is_input), _exact_numbers(all_ts, None)
        if id_arr is None or ts_arr is None:
            return None
        full = np.zeros(len(entry), dtype=np.int64)
        full[~is_input] = np.arange(len(refs), dtype=np.int64)
        return _Bound(id_arr, ts_arr, texts.take(number_array(full, pa.int64(), ~is_input)), is_input)

    def values(
        self,
        ranks: np.ndarray,
        known: np.ndarray,
        of_inputs: Callable[[np.ndarray], list[Any]],
        of_composite: Callable[[int], Any] | None,
    ) -> list[Any]:
        """The ids (or the timestamps) of ranked events, as Python values: input events' from
        the remembered ones (``of_inputs(index)``), composite events' their own
        (``of_composite(ref)``, :class:`Composites`' ``id_of`` or ``ts_of``)."""
        entry = self.order[ranks]
        n_in = len(self.inputs)
        is_input = entry < n_in
        if is_input.all():
            return of_inputs(np.searchsorted(known, self.inputs[entry]))
        out: list[Any] = [None] * len(entry)
        rows = np.flatnonzero(is_input)
        for r, v in zip(rows.tolist(), of_inputs(np.searchsorted(known, self.inputs[entry[rows]]))):
            out[r] = v
        assert of_composite is not None
        for r in np.flatnonzero(~is_input).tolist():
            out[r] = of_composite(-1 - int(self.numbers[entry[r] - n_in]))
        return out


class _Bound:
    """:meth:`BoundEvents.arrays`: per ranked event its id (input events': ``ids``, null for
    composite events; theirs: ``texts``, None where none is bound) and time."""

    def __init__(self, ids: pa.Array, stamps: pa.Array, texts: pa.Array | None, is_input: np.ndarray) -> None:
        self.ids = ids
        self.stamps = stamps
        self.texts = texts
        self.is_input = is_input

    def variable(self, used: np.ndarray, pick: np.ndarray) -> pa.Array | None:
        """One variable's ids: input events' or composite events' (None: both, in one column)."""
        bound = pick >= 0
        at = np.searchsorted(used, pick)
        inputs = self.is_input[at[bound]]
        source = self.ids if inputs.all() else self.texts if not inputs.any() else None
        if source is None:
            return None
        return source.take(number_array(np.where(bound, at, 0), pa.int64(), bound))


def _exact_numbers(values: np.ndarray, valid: np.ndarray | None) -> pa.Array | None:
    """An int64 or float64 array as Arrow's (a float's: only where every valid one is finite,
    as :func:`exact_array` takes a list of floats)."""
    if values.dtype == np.float64 and not np.isfinite(values if valid is None else values[valid]).all():
        return None
    return number_array(values, pa.int64() if values.dtype == np.int64 else pa.float64(), valid)


def _picks(
    base: np.ndarray, at: np.ndarray, bound: np.ndarray, where: list[tuple[int, int]], lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """A single variable's remembered-event index per row (-1: unbound); ``lo`` / ``hi`` (the
    first and last bound event per row) updated."""
    pick = np.full(len(base), -1, dtype=np.int64)
    for p, slot in where:
        rows = (base == p) & (bound[:, slot] == 1)
        pick[rows] = at[rows, slot]
    np.minimum(lo, np.where(pick >= 0, pick, _NONE), out=lo)
    np.maximum(hi, pick, out=hi)
    return pick


def _list_picks(
    base: np.ndarray,
    refs: np.ndarray,
    bound: np.ndarray,
    klen: np.ndarray,
    in_lists: np.ndarray,
    where: list[tuple[int, int]],
    lo: np.ndarray,
    hi: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A Kleene variable's elements per row: (list offsets, remembered-event index of every
    element in row order, rows bound); ``lo`` / ``hi`` updated with each list's first and last."""
    n = len(base)
    start = np.zeros(n, dtype=np.int64)
    length = np.zeros(n, dtype=np.int64)
    valid = np.zeros(n, dtype=bool)
    for p, slot in where:
        rows = (base == p) & (bound[:, slot] == 1)
        start[rows] = refs[rows, slot]
        length[rows] = klen[rows, slot]
        valid |= rows
    length[~valid] = 0
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(length, out=offsets[1:])
    flat = np.repeat(start - offsets[:-1], length) + np.arange(offsets[-1], dtype=np.int64)
    elems = in_lists[flat] if len(flat) else np.zeros(0, dtype=np.int64)
    some = length > 0
    first = np.where(some, elems[np.minimum(offsets[:-1], max(len(elems) - 1, 0))] if len(elems) else 0, _NONE)
    last = np.where(some, elems[np.maximum(offsets[1:] - 1, 0)] if len(elems) else 0, -1)
    np.minimum(lo, first, out=lo)
    np.maximum(hi, last, out=hi)
    return offsets, elems, valid


def _ids(id_arr: pa.Array, used: np.ndarray, pick: np.ndarray) -> pa.Array:
    return id_arr.take(number_array(np.searchsorted(used, pick), pa.int64(), pick >= 0))


def _column_ids(values: list[Any], used: np.ndarray, pick: np.ndarray) -> pa.Array | None:
    """One variable's ids where the batch's ids are of several kinds (its own of one kind: a
    consumer's composite events' texts, a producer's input ids; else None)."""
    bound = pick >= 0
    index = np.searchsorted(used, pick[bound])
    distinct, inverse = np.unique(index, return_inverse=True)
    arr = exact_array([values[i] for i in distinct.tolist()])
    if arr is None:
        return None
    full = np.zeros(len(pick), dtype=np.int64)
    full[bound] = inverse
    return arr.take(number_array(full, pa.int64(), bound))


def _list_ids(id_arr: pa.Array, used: np.ndarray, offsets: np.ndarray, elems: np.ndarray, valid: np.ndarray) -> pa.Array:
    values = id_arr.take(number_array(np.searchsorted(used, elems), pa.int64()))
    return pa.ListArray.from_arrays(number_array(offsets, pa.int32()), values, mask=bool_array(~valid))


def _value_column(val: np.ndarray, kind: np.ndarray, strings: Callable[[], list[str]]) -> pa.Array | None:
    """One field's values in the type of their one kind (all null: null type)."""
    present = (kind != TAG_NULL) & (kind != TAG_MISSING)
    seen = set(kind[present].tolist())
    if not seen:
        return pa.nulls(len(val))
    if seen == {TAG_INT}:
        ok = val[present]
        if not np.isfinite(ok).all() or (np.abs(ok) >= 2.0**63).any():
            return None
        return number_array(val.astype(np.int64), pa.int64(), present)
    if seen == {TAG_NUM}:
        return number_array(val, pa.float64(), present)
    if seen == {TAG_BOOL}:
        return bool_array(val != 0.0, present)
    if seen == {TAG_STR}:
        codes = np.where(present, val, 0).astype(np.int64)
        return string_array(list(strings())).take(number_array(codes, pa.int64(), present))
    return None


__all__ = ["MatchBatches", "exact_array", "sorted_unique"]
