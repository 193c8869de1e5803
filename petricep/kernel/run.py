"""Running the compiled kernel on Arrow batches: columns in, matches out as an Arrow table.

:class:`KernelRun` hands each batch to the kernel as its columns are, where it can (type
codes, or a dictionary's indices with a code per index; timestamps, int64 or float64; the
first position; ids; attribute values with their kinds; key codes, or an integer key column
with a table of codes), fires them in one call and returns the matches the batch completed as a ``pa.Table``;
:mod:`petricep.kernel.tableplan` holds what the tables hold and turns one into the engine's
:class:`Match` objects (:func:`~petricep.kernel.tableplan.to_matches`).

Strings are dictionary codes of one dictionary per run; ``=``/``!=`` compare codes and
ordering compares ranks in the sorted dictionary (recomputed when it grows).
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petricep.compile.net import Net
from petricep.errors import ConfigError, EvaluationError, EventError, EventOrderError, StateLimitError
from petricep.kernel import valuecodes as vc
from petricep.kernel.bytecode import AGG_CODES, ARITH_CODES, CMP_CODES, ID_ATTR, TS_ATTR
from petricep.kernel.keycodes import compact_codes
from petricep.kernel.lowering import Lowered, lower, reading_types, supports
from petricep.kernel.remembered import Composites
from petricep.kernel.tableplan import (
    EXACT,
    TAG_BOOL,
    TAG_INT,
    TAG_MISSING,
    TAG_NULL,
    TAG_NUM,
    TAG_STR,
    deadline_type,
    exact_ints,
    group_columns,
    id_column,
    list_column,
    mixed_column,
    outputs_of,
    python_value,
    table_plan,
)
from petricep.kernel.texts import composite_texts
from petricep.runtime.arrow import number_array, number_view
from petricep.runtime.expr import aggregate_message, number_text
from petricep.runtime.memory import memory_error

try:
    from petricep.kernel import _kernel  # type: ignore[attr-defined]
except ImportError:  # not built: petricep.kernel.available() says so
    _kernel = None

TICK_CODE = _kernel.TICK_CODE if _kernel is not None else -2  # a row that is a clock tick
# what the kernel's bytes hold, by its MEM_* index (Kernel.memory, KernelMemoryError)
MEMORY_PARTS = (
    "partial matches",
    "Kleene lists",
    "events they bind",
    "per-key lists",
    "negative events and waiting matches",
    "matches held",
    "a step's new partial matches",
)
CMP_OPS = tuple(CMP_CODES)  # operator by the kernel's code
ARITH_OPS = tuple(ARITH_CODES)

Batch: TypeAlias = "pa.Table | pa.RecordBatch"


class KernelRun:
    """One run of a net on the kernel (embedded): ``push`` batches in stream order, ``flush``
    at the end. The input spec follows :mod:`petricep.io`'s concepts: a type column or a
    constant type, a time column (numbers), an id column or arrival positions."""

    def __init__(
        self,
        net: Net,
        tie: str = "arrival",
        type_field: str | None = "type",
        time_field: str = "ts",
        id_field: str | None = None,
        event_type: str | None = None,
        sweep_every: int = 2048,
        compact_slack: int = 1024,
        value_slack: int = vc.VALUE_SLACK,
        key_slack: int = vc.KEY_SLACK,
    ) -> None:
        """``sweep_every``: drop dead partial matches every so many events (of the types the
        patterns read: the others leave no state to drop, where no tie rule or construct makes
        every event count); the event store is
        compacted at a sweep when it holds more than 4 events per live slot plus
        ``compact_slack``, the value (key) dictionaries after a batch when one holds more than
        twice its live entries plus ``value_slack`` (``key_slack``; small values: for tests)."""
        if _kernel is None:
            raise ConfigError("the compiled kernel is not built (petricep.kernel.available() is False)")
        ok, reason = supports(net, tie)
        if not ok:
            raise ConfigError(f"the kernel does not run this net: {reason}")
        if (type_field is None) == (event_type is None):
            raise ConfigError("give exactly one of type_field (a column) and event_type (one type for every row)")
        self.net = net
        self.lowered: Lowered = lower(net)
        self.tie = tie
        self.type_field = type_field
        self.time_field = time_field
        self.id_field = id_field
        self.event_type = event_type
        self.kernel = _kernel.Kernel(self.lowered, tie, sweep_every, compact_slack)
        self._type_codes = {t: i for i, t in enumerate(self.lowered.types)}
        self._type_names = _kernel.TypeNames(self.lowered.types)  # (a text type column's codes)
        # per field the type codes whose events it is read of, per group the types it reads: a
        # value no event of those holds needs no representation (a list another type compares)
        self.readers = reading_types(net, self.lowered, self._type_codes)
        self.group_types = [frozenset(self._type_codes[t] for t in g.input_types if t in self._type_codes) for g in net.groups]
        self._strings: dict[str, int] = {s: i for i, s in enumerate(self.lowered.strings)}
        self._ranked = -1  # dictionary size the kernel's ranks were computed for
        self.values = vc.ValueCodes(len(self.lowered.strings), len(self.lowered.bigs), value_slack, key_slack)
        self.budget: tuple[int | None, int | None] = (None, None)  # (set_budget's: a rebuilt kernel gets it again)
        # partition-key dictionaries, one per key class (groups reading composite events share
        # their producers': a composite event keeps its emitter's key code)
        classes = self.lowered.key_class or tuple(range(len(self.lowered.groups)))
        shared: dict[int, dict[Any, int]] = {c: {} for c in classes}
        self.key_dicts: list[dict[Any, int]] = [shared[c] for c in classes]
        self._int_keys: dict[int, Any] = {}  # id of a key dictionary -> its IntKeys (_int_keys)
        self.composites = Composites()
        self.first_taken = 0  # the run-wide number of the first match take_matches returned last
        self._pos = 0
        self._int_time: bool | None = None
        self._last: tuple[float, int] | None = None
        self._plan = table_plan(self.lowered)
        self._grouped = any(p.groups for p in self.lowered.patterns)  # repeated groups: one column each
        self.matches = {p.name: 0 for p in self.lowered.patterns}
        self.timeouts = {p.name: 0 for p in self.lowered.patterns}
        self._outputs = outputs_of(self.lowered)

    # ------------------------------------------------------------------ input

    def _types(self, batch: Batch, n: int) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """Type codes per row, or a dictionary column's indices and each index's code."""
        if self.event_type is not None:
            return np.full(n, self._type_codes.get(self.event_type, -1), dtype=np.int32)
        col = _column(batch, self.type_field)  # type: ignore[arg-type]
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):  # (row bytes hashed in C)
            out = np.empty(n, dtype=np.int32)
            self._type_names.codes(col.buffers(), col.offset, n, pa.types.is_large_string(col.type), out)
            return out
        enc = _encoded(col)
        lookup = np.array([self._type_codes.get(t, -1) for t in enc.dictionary.to_pylist()] + [-1], dtype=np.int32)
        if not enc.indices.null_count:  # the kernel reads the indices and their codes (no copy of n codes)
            return number_view(enc.indices).astype(np.int32, copy=False), lookup
        indices = enc.indices.fill_null(len(lookup) - 1)
        out = np.empty(n, dtype=np.int32)
        _kernel.lookup_codes(number_view(indices).astype(np.int32, copy=False), lookup, out)
        return out

    def _time(self, batch: Batch) -> np.ndarray:
        col = _column(batch, self.time_field)
        if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
            raise EventError(f"time column must hold numbers, not {col.type}", None, None, self.time_field)
        if col.null_count:
            raise EventError("time column has empty values", None, _first_null(col), self.time_field)
        if self._int_time is None:
            self._int_time = pa.types.is_integer(col.type)
        view = number_view(col)
        # (times go forward here -- the kernel refuses a batch that goes back -- so its ends bound it)
        if view.dtype == np.int64 and len(view) and (not -EXACT <= int(view[0]) <= EXACT or int(view[-1]) > EXACT):
            row = int(np.flatnonzero((view > EXACT) | (view < -EXACT))[0])  # (columns.kernel_times)
            raise EventError(f"time {int(view[row])} is beyond 2**53, which the compiled kernel cannot hold exactly", None, row, self.time_field)
        return view if view.dtype == np.int64 else view.astype(np.float64)  # (the kernel reads int64 times as they are)

    def _ids(self, batch: Batch) -> np.ndarray | None:
        """The id column, or None where the ids are the positions."""
        if self.id_field is None:
            return None
        col = _column(batch, self.id_field)
        if not pa.types.is_integer(col.type) or col.null_count:
            raise ConfigError(f"the kernel needs integer ids in column {self.id_field!r} (got {col.type})")
        return number_view(col).astype(np.int64, copy=False)

    def _attributes(
        self, batch: Batch, n: int, ts: Any, ids: np.ndarray, types: np.ndarray | tuple[np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Attribute values and kinds per row (the time and id columns for ``v.ts`` / ``v.id``);
        a column of lists or structs only where no row's type reads it (then: never read)."""
        names = self.lowered.attrs
        if not names:  # (one zero row read for every row: no 9 MB per million events to fault in)
            return _zeros((n, 1), np.float64), _zeros((n, 1), np.int8)
        vals = np.zeros((n, len(names)), dtype=np.float64)
        tags = np.zeros((n, len(names)), dtype=np.int8)
        for a, name in enumerate(names):
            col = ts if name == TS_ATTR else pa.array(ids) if name == ID_ATTR else _column(batch, name)
            if pa.types.is_dictionary(col.type) and not pa.types.is_string(col.type.value_type):
                col = col.cast(col.type.value_type)
            if not _kernel_type(col.type):
                row = self._first_reading(name, types)
                if row is None:
                    tags[:, a] = TAG_NULL
                    continue
                raise EventError(f"the kernel reads numbers and text, not {col.type}", None, row, name)
            if col.null_count:
                raise EventError("empty value in a field a condition reads", None, _first_null(col), name)
            if pa.types.is_dictionary(col.type):
                vals[:, a] = self._codes(col)
                tags[:, a] = TAG_STR
            elif pa.types.is_integer(col.type):
                ints = number_view(col)
                vals[:, a] = ints
                tags[:, a] = TAG_INT
                exact_ints(ints, vals[:, a], tags[:, a], self.kernel.big_code)
            elif pa.types.is_floating(col.type):
                vals[:, a] = number_view(col)
                tags[:, a] = TAG_NUM
            elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
                vals[:, a] = self._codes(col)
                tags[:, a] = TAG_STR
        return vals, tags

    def _first_reading(self, name: str, types: np.ndarray | tuple[np.ndarray, np.ndarray]) -> int | None:
        """The first row whose event type reads field ``name`` (None: no row's)."""
        codes = types[1][types[0]] if isinstance(types, tuple) else types
        reading = np.flatnonzero(np.isin(codes, np.fromiter(self.readers.get(name, ()), dtype=np.int32)))
        return int(reading[0]) if len(reading) else None

    def _codes(self, col: Any) -> np.ndarray:
        enc = _encoded(col)
        strings = self._strings
        lookup = np.array([strings.setdefault(s, len(strings)) for s in enc.dictionary.to_pylist()], dtype=np.float64)
        return lookup[enc.indices.to_numpy(zero_copy_only=False)] if len(lookup) else np.zeros(len(col))

    def _key_codes(self, batch: Batch, n: int) -> np.ndarray | list[Any]:
        """Key codes, a row per group; or a list with per group its codes, or where its key is
        one integer column, the column with the IntKeys that codes its values (Kernel.run:
        the kernel codes the rows it reads, no column of codes is written)."""
        shape = (max(len(self.lowered.groups), 1), n)
        if not any(g.partition for g in self.lowered.groups):
            return _zeros(shape, np.int64)
        keys: list[Any] = []
        for gi, g in enumerate(self.lowered.groups):
            if not g.partition:
                keys.append(_zeros((1, n), np.int64)[0])
                continue
            seen = self.key_dicts[gi]
            cols = [_column(batch, a) for a in g.partition]
            ints = self._int_keys_of(cols[0], seen) if len(cols) == 1 else None
            if ints is not None:
                keys.append(ints)
            elif len(cols) == 1:
                enc = _encoded(cols[0])
                if enc.indices.null_count:
                    raise EventError("empty partition value", None, _first_null(enc.indices), g.partition[0])
                lookup = np.array([seen.setdefault(v, len(seen)) for v in enc.dictionary.to_pylist()], dtype=np.int64)
                keys.append(lookup[number_view(enc.indices)] if len(lookup) else np.zeros(n, dtype=np.int64))
            else:
                rows = zip(*(c.to_pylist() for c in cols))
                keys.append(np.fromiter((seen.setdefault(r, len(seen)) for r in rows), dtype=np.int64, count=n))
        return keys

    def _int_keys_of(self, col: Any, seen: dict[Any, int]) -> tuple[np.ndarray, Any] | None:
        """An integer key column (no nulls) with the IntKeys of its dictionary, for the kernel
        to code the rows it reads; None where the column is not one (then Arrow hashes it)."""
        t = col.type
        if not pa.types.is_integer(t) or col.null_count:
            return None
        return self.int_keys(number_view(col), seen)

    def int_keys(self, col: np.ndarray, seen: dict[Any, int]) -> tuple[np.ndarray, Any] | None:
        """A numpy column of integers (not uint64: its values beyond int64's) as the kernel
        takes a key it codes itself: the column as int64 and the IntKeys of ``seen``, the
        key dictionary its codes come from (one per dictionary); None for another column."""
        if col.dtype.kind not in "iu" or col.dtype == np.uint64 or not len(col):
            return None
        ints = self._int_keys.get(id(seen))
        if ints is None:
            ints = self._int_keys[id(seen)] = _kernel.IntKeys(seen)
        return col.astype(np.int64, copy=False), ints

    # ------------------------------------------------------------------ running

    def push(self, batch: Batch) -> pa.Table:
        """Fire the batch's events; returns the matches they completed, in emission order."""
        n = batch.num_rows
        ts = self._time(batch)  # also fixes the type of the start / end columns
        if n == 0:
            return self._matches_table()
        types = self._types(batch, n)
        pos = self._pos  # (row i is at pos + i)
        ids = self._ids(batch)
        positions = ids if ids is not None else np.arange(pos, pos + n, dtype=np.int64)
        vals, tags = self._attributes(batch, n, _column(batch, self.time_field), positions, types)
        keys = self._key_codes(batch, n)
        self.fire(types, ts, pos, ids, vals, tags, keys)
        out = self._matches_table()
        self.compact_due()
        return out

    def fire(
        self,
        types: np.ndarray | tuple[np.ndarray, np.ndarray],
        ts: np.ndarray,
        pos: np.ndarray | int,
        ids: np.ndarray | None,
        vals: np.ndarray,
        tags: np.ndarray,
        keys: np.ndarray | list[Any],
        start: int = 0,
        max_out: int = 0,
    ) -> int:
        """Fire events given as the kernel's columns (:meth:`push` builds them from Arrow,
        :class:`~petricep.kernel.engine.KernelEngine` from events; Kernel.run says which
        forms the columns may take: ``types`` a dictionary's indices and codes, ``ts`` int64,
        ``pos`` the first position, ``ids`` None for the positions), from row ``start``; their
        matches stay buffered for :meth:`take_matches`. ``max_out`` > 0: stop after the row at
        which that many matches are buffered. Returns the row fired last + 1 (``len(types)``
        when all are). An evaluation error leaves the matches of the events before the
        failing one (row ``kernel.cur_row``) buffered."""
        self.update_ranks()
        try:
            if start:
                types = (types[0][start:], types[1]) if isinstance(types, tuple) else types[start:]
                pos = pos + start if isinstance(pos, int) else pos[start:]
                ids = ids[start:] if ids is not None else None
                ts, vals, tags, keys = ts[start:], vals[start:], tags[start:], _keys_from(keys, start)
            done = start + self.kernel.run(types, ts, pos, ids, vals, tags, keys, start, max_out)
        except _kernel.OrderError as e:
            row, t, prev = e.args
            raise EventOrderError(
                f"timestamp {_num(t, self._int_time)} is before the previous event's {_num(prev, self._int_time)} "
                "(input must be in time order)",
                row=_position(pos, row - start),
            ) from None
        except (_kernel.KernelEvaluationError, _kernel.KernelLimitError, _kernel.KernelBudgetError) as e:
            self.kernel.drop_row()  # the engine returns nothing of the failing event
            raise self._worded(e) from None
        except _kernel.KernelMemoryError as e:
            self.kernel.drop_row()
            parts, more, budget = e.args
            row = self.kernel.cur_row - start
            raise self.memory_error(parts, more, budget, _position(ids if ids is not None else pos, row)) from None
        last = done - start - 1
        self._pos = _position(pos, last) + 1
        self._last = (float(ts[last]), _position(pos, last))
        return done

    def take_matches(self) -> tuple[np.ndarray, ...]:
        """The buffered matches as the kernel's arrays (pattern, start, end, ids, bound, the
        positions that emitted them, RETURN values and their kinds, timeouts' deadlines,
        Kleene lists, where composite events entered the stream), counted per pattern; the buffer is emptied. :attr:`first_taken` is the run-wide number
        of the first. A pattern's timeouts (ON TIMEOUT) come as pattern ``npatterns + index``
        with their ON TIMEOUT values."""
        self.first_taken = self.kernel.taken
        arrays = self.kernel.take_matches()
        self._count(arrays[0])
        return tuple(arrays)

    def _worded(self, e: Exception) -> Exception:
        """A kernel error (evaluation, LIMIT ... FAIL, budget) as the engine words it."""
        if isinstance(e, _kernel.KernelEvaluationError):  # (kernel_args: a None operand may be a missing field)
            (err := EvaluationError(self._evaluation_message(*e.args[:7]))).kernel_args = e.args  # type: ignore[attr-defined]
            return err
        return self.limit_error(*e.args) if isinstance(e, _kernel.KernelLimitError) else self.budget_error(*e.args)

    def strings(self) -> list[str]:
        """The run's string dictionary by code."""
        out = [""] * len(self._strings)
        for text, code in self._strings.items():
            out[code] = text
        return out

    def string_code(self, s: str) -> int:
        """The dictionary code of ``s`` (new strings get the next code)."""
        return self._strings.setdefault(s, len(self._strings))

    def update_ranks(self) -> None:
        """Give the kernel each string's rank in the sorted dictionary when it has grown."""
        if len(self._strings) == self._ranked:
            return
        self.kernel.set_ranks(vc.string_ranks(self._strings))
        self._ranked = len(self._strings)

    def compact_values(self) -> bool:
        """Drop the strings and ints beyond 2**53 the state no longer holds, re-coding the rest
        (:func:`~petricep.kernel.valuecodes.compact_values`; between batches only); False where
        matches are buffered. Runs by itself after a batch (:meth:`compact_due`) and before a snapshot."""
        return vc.compact_values(self)

    def compact_keys(self) -> bool:
        """Drop the partition keys nothing holds, re-coding the rest (the kernel rebuilt from its
        own snapshot state: :func:`~petricep.kernel.valuecodes.compact_keys`); False where matches
        are buffered."""
        return vc.compact_keys(self)

    def compact_due(self) -> None:
        """After a batch: the compactions whose dictionaries outgrew their limits (valuecodes.py)."""
        vc.compact_due(self)

    def set_budget(self, max_partial_matches: int | None, max_memory: int | None) -> None:
        """The run's budgets, checked within a batch where the kernel's arenas grow: live
        partial matches per shared net, and bytes (None: no budget)."""
        self.budget = (max_partial_matches, max_memory)
        self.kernel.set_budget(max_partial_matches, max_memory)

    def memory(self) -> dict[str, int]:
        """The bytes the kernel's arenas hold, by what holds them (:data:`MEMORY_PARTS`)."""
        return dict(zip(MEMORY_PARTS, self.kernel.memory()))

    def budget_error(
        self, pattern: int, group: int, key: int, key_live: int, live: int, budget: int, event_id: Any
    ) -> StateLimitError:
        """The budget of live partial matches exceeded within a batch, as the engine words it
        (housekeeping._over_budget): the pattern most of the fullest key's partial matches
        serve, that key's value and count, the event (KernelEngine puts the input's own id)."""
        value = self._key_value(group, key)
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        err = StateLimitError(
            f"pattern {self.net.patterns[pattern].name!r}: {live} live partial matches, over the run's budget of "
            f"{budget} (key {shown} holds {key_live}) at event {event_id!r}; bound the pattern with LIMIT n PARTIAL "
            f"MATCHES, or raise the budget (--max-partial-matches N, Engine(max_partial_matches=N))"
        )
        err.budget_args = (pattern, group, key, key_live, live, budget)  # type: ignore[attr-defined]
        return err

    def memory_error(self, parts: list[int], more: int, budget: int, event_id: Any) -> StateLimitError:
        """The memory budget: an arena's growth would go past it (the parts the kernel holds)."""
        err = memory_error(budget, dict(zip(MEMORY_PARTS, parts)), event_id, more)
        err.memory_args = (parts, more, budget)  # type: ignore[attr-defined]
        return err

    def _key_value(self, group: int, key: int) -> Any:
        """A partition key's value by its code (None: the net has no partition)."""
        partitioned = self.lowered.groups[group].partition
        return next(v for v, code in self.key_dicts[group].items() if code == key) if partitioned else None

    def limit_error(self, pattern: int, group: int, key: int, event_id: Any) -> StateLimitError:
        """LIMIT ... FAIL as the engine words it (limits.admit): the pattern, the key's value,
        the event (``event_id`` as the kernel holds it; KernelEngine puts the input's own)."""
        p = self.net.patterns[pattern]
        assert p.limit is not None
        value = self._key_value(group, key)
        err = StateLimitError(
            f"pattern {p.name!r}: more than {p.limit.count} live partial matches for key {value!r} "
            f"at event {event_id!r} (LIMIT {p.limit.count} PARTIAL MATCHES FAIL)"
        )
        err.kernel_args = (pattern, group, key, event_id)  # type: ignore[attr-defined]
        return err

    def _evaluation_message(self, what: str, op: int, a: float, ta: int, b: float, tb: int, attr: int = -1) -> str:
        """The engine's wording (runtime/expr.py): ``cannot compare 'u' < 3``; an aggregate's
        (``attr``: the field it reads) as ``aggregate_message`` words it."""
        text = {code: s for s, code in self._strings.items()}

        def py(v: float, tag: int) -> Any:
            return text[int(v)] if tag == TAG_STR else python_value(v, tag, [], self.kernel.bigs)

        if what == "aggregate":
            func = next(name for name, code in AGG_CODES.items() if code == op)
            return aggregate_message(func, self.lowered.attrs[attr], py(a, ta), py(b, tb))
        if what == "negate":
            return f"cannot negate {number_text(py(a, ta))}"
        if what == "overflow":  # (an int beyond a float's range mixed with a float)
            return f"number too large for a float: {number_text(py(a, ta))} {ARITH_OPS[op]} {number_text(py(b, tb))}"
        ops = CMP_OPS if what == "compare" else ARITH_OPS
        return f"cannot {what} {number_text(py(a, ta))} {ops[op]} {number_text(py(b, tb))}"

    def flush(self) -> pa.Table:
        """End of stream: every window closes (nothing waits on one in the covered nets)."""
        self.finish()
        out = self._matches_table()
        self.kernel.clear()
        return out

    def finish(self) -> None:
        """End of stream for the kernel: its last matches are buffered (:meth:`take_matches`)."""
        try:
            self.kernel.finish()
        except (_kernel.KernelEvaluationError, _kernel.KernelLimitError) as e:  # (LIMIT: a composite event
            self.kernel.drop_row()  # the end emitted, or tie rule either's last group)
            raise self._worded(e) from None
        except _kernel.KernelMemoryError as e:  # (the end's matches buffered)
            parts, more, budget = e.args
            raise self.memory_error(parts, more, budget, None) from None

    def live_partial_matches(self) -> int:
        """Partial matches that can still be extended at the last event (the engine's count)."""
        if self._last is None:
            return 0
        return int(self.kernel.live_partial_matches(*self._last))

    def snapshot_state(self) -> dict[str, Any]:
        """The run's state between two batches (petricep.kernel.snapshot encodes it): the
        kernel's arrays (``kernel.*``, its store compacted first) and the Python side
        (``run.*``): the string dictionary, the partition-key dictionaries (one per key class),
        the composite events still bindable, the counts. NumPy arrays, scalars, and lists of
        Python values (strings, keys, ids). Only keys and strings that hold something (keycodes.py)."""
        self.compact_values()  # (only the values the state holds; a buffered match: get_state refuses)
        state = {f"kernel.{name}": value for name, value in self.kernel.get_state().items()}
        self.composites.forget(self.kernel.oldest_pos())  # (what the compaction let go)
        names = [p.name for p in self.lowered.patterns]
        state.update({
            "run.strings": self.strings(),
            "run.bigs": list(self.kernel.bigs),
            "run.ranked": self._ranked,
            "run.first_taken": self.first_taken,
            "run.pos": self._pos,
            "run.int_time": self._int_time,
            "run.last": None if self._last is None else list(self._last),
            "run.matches": np.array([self.matches[n] for n in names], dtype=np.int64),
            "run.timeouts": np.array([self.timeouts[n] for n in names], dtype=np.int64),
        })
        seen: set[int] = set()
        for gi, keys in enumerate(self.key_dicts):  # (a shared dictionary once, at its first group)
            if id(keys) not in seen:
                seen.add(id(keys))
                state[f"run.keys{gi}"] = list(keys)
        state.update({f"run.composites.{name}": value for name, value in self.composites.state().items()})
        compact_codes(state, self.lowered, self.key_dicts)
        return state

    def restore_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`snapshot_state` into this fresh run of the same net and tie rule
        (ValueError, KeyError or TypeError where the state is inconsistent)."""
        self.kernel.set_state({name[7:]: value for name, value in state.items() if name.startswith("kernel.")})
        self._strings = {text: code for code, text in enumerate(state["run.strings"])}
        self.kernel.set_bigs(state.get("run.bigs", ()))
        self._ranked = int(state["run.ranked"])
        self.first_taken = int(state["run.first_taken"])
        self._pos = int(state["run.pos"])
        self._int_time = state["run.int_time"]
        last = state["run.last"]
        self._last = None if last is None else (float(last[0]), int(last[1]))
        names = [p.name for p in self.lowered.patterns]
        for target, counts in ((self.matches, state["run.matches"]), (self.timeouts, state["run.timeouts"])):
            if len(counts) != len(names):
                raise ValueError("match counts for another number of patterns")
            target.update(zip(names, (int(c) for c in counts)))
        self._int_keys = {}  # (their tables hold the codes of the dictionaries replaced here)
        for gi, keys in enumerate(self.key_dicts):
            values = state.get(f"run.keys{gi}")
            if values is not None:
                keys.clear()
                keys.update((v, code) for code, v in enumerate(values))
        prefix = "run.composites."
        self.composites.restore({name[len(prefix):]: v for name, v in state.items() if name.startswith(prefix)})
        self.values.restored(len(self._strings), len(self.kernel.bigs), self.key_dicts)

    @property
    def stats(self) -> dict[str, Any]:
        k = self.kernel
        return {
            "events": k.events,
            "created": k.created,
            "completed": k.completed,
            "composite": k.composites,
            "matches": dict(self.matches),
            "timeouts": dict(self.timeouts),
            "dropped": {p.name: n for p, n in zip(self.lowered.patterns, k.dropped_by_pattern())},
            "values": self.values.stats(len(self._strings), len(k.bigs), self.key_dicts),
        }

    # ------------------------------------------------------------------ output

    def _count(self, pattern: np.ndarray) -> None:
        if len(pattern):
            n = len(self.lowered.patterns)
            for pi, count in enumerate(np.bincount(pattern, minlength=2 * n)):
                target = self.matches if pi < n else self.timeouts
                target[self.lowered.patterns[pi % n].name] += int(count)

    def _matches_table(self) -> pa.Table:
        """The buffered matches as a table (:meth:`_table`); a simple plan's (ids only) from
        the kernel's own columns in one call (:meth:`Kernel.take_columns`)."""
        plan = self._plan
        if not plan.simple:
            return self._table(*self.take_matches())
        self.first_taken = self.kernel.taken
        if not self.kernel.buffered:
            empty = plan.empty.get(self._int_time)
            if empty is not None:
                return empty
        counts, pattern, start, end, ids, valid, full = self.kernel.take_columns(plan.var_slot, bool(self._int_time))
        for p, c in zip(self.lowered.patterns, counts.tolist()):
            self.matches[p.name] += c
        times = pa.int64() if self._int_time else pa.float64()
        arrays = [
            pa.DictionaryArray.from_arrays(number_array(pattern, pa.int32()), plan.names),
            number_array(start, times),
            number_array(end, times),
            *(number_array(ids[v], pa.int64(), None if full[v] else valid[v]) for v in range(len(plan.columns))),
        ]
        out = pa.Table.from_arrays(arrays, schema=plan.schema(times))
        if not len(pattern):
            plan.empty[self._int_time] = out
        return out

    def _table(
        self,
        pattern: np.ndarray,
        start: np.ndarray,
        end: np.ndarray,
        ids: np.ndarray,
        bound: np.ndarray,
        _at: np.ndarray,
        values: np.ndarray,
        kinds: np.ndarray,
        deadline: np.ndarray,
        klen: np.ndarray,
        klist: np.ndarray,
        _placed: np.ndarray,
        korder: np.ndarray,
    ) -> pa.Table:
        """The matches as a table: pattern, start, end, one id column per variable name (int64;
        text where composite events are bound: their ids), with RETURN or ON TIMEOUT an
        ``attrs`` struct of the fields, with ON TIMEOUT a ``timeout`` struct (type, deadline;
        null for a match)."""
        plan = self._plan
        empty = plan.empty.get(self._int_time) if not len(pattern) else None
        if empty is not None:
            return empty
        base = pattern % plan.npatterns if plan.timeouts else pattern  # a timeout's pattern
        cols: dict[str, Any] = {
            "pattern": pa.DictionaryArray.from_arrays(pa.array(base, pa.int32()), plan.names),
            "start": _times(start, self._int_time),
            "end": _times(end, self._int_time),
        }
        if plan.returns:
            self._remember_composites(pattern, ids, bound, _at, (klen, klist, korder))
        for var, where, listed, single in plan.columns:
            if not listed:
                cols[var] = self._id_column(base, ids, bound, where)
            elif not single:
                cols[var] = list_column(base, ids, klen, klist, where, self.composites)
            else:  # a list in some patterns, an event in others
                cols[var] = mixed_column(
                    list_column(base, ids, klen, klist, listed, self.composites),
                    self._id_column(base, ids, bound, single),
                    np.isin(base, [p for p, _ in listed]),
                )
        if self._grouped:
            cols = group_columns(cols, self.lowered, (plan, (base, ids, klen, korder), self.composites))
        if plan.outputs:
            cols["attrs"] = self._attrs_column(pattern, values, kinds)
        if plan.timeouts:
            cols["timeout"] = self._timeout_column(pattern, deadline)
        if plan.returns:  # (after the id columns: this batch's matches may bind what the kernel dropped since)
            self.composites.forget(self.kernel.oldest_pos())
        out = pa.table(cols)
        if not len(pattern) and plan.simple:
            plan.empty[self._int_time] = out
        return out

    def _id_column(self, pattern: np.ndarray, ids: np.ndarray, bound: np.ndarray, where: list[tuple[int, int]]) -> pa.Array:
        """One variable name's ids over the matches: int64 (null where its pattern has no such
        variable or an OR left it unbound), text where composite events are bound."""
        single = len(self.lowered.patterns) == 1
        if single and len(where) == 1:  # (the common case, a few numpy calls fewer)
            slot = where[0][1]
            valid = bound[:, slot] == 1
            if valid.all() and not (ids[:, slot] < 0).any():
                return pa.array(ids[:, slot], pa.int64())
        values_ = np.zeros(len(pattern), dtype=np.int64)
        valid = np.zeros(len(pattern), dtype=bool)
        for p, slot in where:  # (np.where, not boolean-mask indexing: millions of matches)
            rows = bound[:, slot] == 1 if single else (pattern == p) & (bound[:, slot] == 1)
            values_ = np.where(rows, ids[:, slot], values_)
            valid |= rows
        if not ((values_ < 0) & valid).any():
            return pa.array(values_, pa.int64(), mask=None if valid.all() else ~valid)
        id_of = self.composites.id_of
        return id_column([(id_of(v) if v < 0 else v) if ok else None for v, ok in zip(values_.tolist(), valid.tolist())])

    def _remember_composites(
        self, pattern: np.ndarray, ids: np.ndarray, bound: np.ndarray, at: np.ndarray, lists: tuple[np.ndarray, np.ndarray, np.ndarray]
    ) -> None:
        """Remember the ids of the composite events some pattern reads (``pattern[ids...]``),
        built a column at a time, pattern by pattern in the net's order: producers come before
        the patterns reading their events, so a match binding a composite event emitted
        earlier in the same batch finds its id. ``lists``: the Kleene lists' lengths per slot,
        their elements (a list's ids joined by ``+``) and the order each element was bound in."""
        first = self.first_taken
        found: list[tuple[int, int]] = []
        n = len(self.lowered.patterns)
        for vp in range(2 * n):
            p = self.lowered.patterns[vp % n]
            rows = np.flatnonzero(pattern == vp)
            if (p.ret_type if vp < n else p.to_type) < 0 or not len(rows):
                continue
            name = p.name if vp < n else f"{p.name}@timeout"
            texts = composite_texts(name, p, ids[rows], bound[rows], (lists[0][rows], lists[1], lists[2]), self.composites)
            numbers = (first + rows).tolist()
            positions = at[rows].tolist()
            found.extend(zip(numbers, positions))
            for number, pos, text in zip(numbers, positions, texts):  # for readers later in this batch
                self.composites.put(number, pos, text, None)
        for number, pos in sorted(found):
            self.composites.track(number, pos)

    def _timeout_column(self, pattern: np.ndarray, deadline: np.ndarray) -> pa.Array:
        """Per row: a timeout's type and deadline (an int where the pattern's time and window
        are), null for a match."""
        n = len(self.lowered.patterns)
        out: list[Any] = []
        for vp, d in zip(pattern.tolist(), deadline.tolist()):
            if vp < n:
                out.append(None)
                continue
            p = self.lowered.patterns[vp - n]
            integral = p.count_window or (bool(self._int_time) and isinstance(p.window, int))
            out.append({"type": p.timeout_type, "deadline": int(d) if integral else d})
        return pa.array(out, pa.struct([("type", pa.string()), ("deadline", deadline_type(out))]))

    def _attrs_column(self, pattern: np.ndarray, values: np.ndarray, kinds: np.ndarray) -> pa.Array:
        """The RETURN and ON TIMEOUT fields as a struct column (null where a row's pattern has
        no such field, or the value is None); a field's values in one type where they have one kind."""
        fields = list(dict.fromkeys(f for fs in self._outputs for f in fs))
        n = len(pattern)
        arrays = []
        for f in fields:
            val = np.zeros(n, dtype=np.float64)
            kind = np.full(n, TAG_NULL, dtype=np.int8)
            for vp, names in enumerate(self._outputs):
                if f in names:
                    j = names.index(f)
                    rows = pattern == vp
                    val[rows] = values[rows, j]
                    kind[rows] = kinds[rows, j]
            arrays.append(self._value_column(val, kind))
        return pa.StructArray.from_arrays(arrays, fields) if fields else pa.array([{}] * n)

    def _value_column(self, val: np.ndarray, kind: np.ndarray) -> pa.Array:
        present = (kind != TAG_NULL) & (kind != TAG_MISSING)
        seen = set(np.unique(kind[present]).tolist())
        if seen <= {TAG_INT} and np.isfinite(val[present]).all():
            return pa.array(val.astype(np.int64), pa.int64(), mask=~present)
        if seen <= {TAG_NUM}:
            return pa.array(val, pa.float64(), mask=~present)
        if seen == {TAG_BOOL}:
            return pa.array(val != 0.0, pa.bool_(), mask=~present)
        strings = self.strings()
        return pa.array([python_value(v, k, strings, self.kernel.bigs) if ok else None for v, k, ok in zip(val.tolist(), kind.tolist(), present.tolist())])


def _kernel_type(t: pa.DataType) -> bool:
    """Whether the kernel holds a column's values: numbers, text, text codes."""
    return bool(
        pa.types.is_dictionary(t) or pa.types.is_integer(t) or pa.types.is_floating(t)
        or pa.types.is_string(t) or pa.types.is_large_string(t)
    )


def _column(batch: Batch, name: str) -> Any:
    if name not in batch.schema.names:
        raise ConfigError(f"the input has no column {name!r} (the kernel needs it)")
    col = batch.column(name)
    if isinstance(col, pa.ChunkedArray):  # (combine_chunks copies even one chunk: ~1 ms per 1M int64)
        col = col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    return col


def _position(pos: np.ndarray | int, row: int) -> int:
    """Row ``row``'s position: ``pos`` holds the positions, or is the first one."""
    return pos + row if isinstance(pos, int) else int(pos[row])


def _zeros(shape: tuple[int, int], dtype: Any) -> np.ndarray:
    """A read-only array of zeros that holds one (strides 0; np.broadcast_to costs ~3x)."""
    return np.ndarray(shape, dtype, buffer=_ZERO, strides=(0, 0))


_ZERO = bytes(8)


def _keys_from(keys: np.ndarray | list[Any], start: int) -> np.ndarray | list[Any]:
    """:meth:`KernelRun._key_codes`'s keys from row ``start`` on."""
    if not isinstance(keys, list):
        return keys[:, start:]
    return [(k[0][start:], k[1]) if isinstance(k, tuple) else k[start:] for k in keys]


def _encoded(col: Any) -> pa.DictionaryArray:
    """The column dictionary-encoded (as it is, when it already is)."""
    if pa.types.is_dictionary(col.type):
        return col
    return pc.dictionary_encode(col)


def _first_null(col: Any) -> int:
    return int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])


def _times(values: np.ndarray, integer: bool | None) -> pa.Array:
    return pa.array(values.astype(np.int64) if integer else values)


def _num(value: float, integer: bool | None) -> Any:
    return int(value) if integer else value


__all__ = ["TICK_CODE", "KernelRun"]
