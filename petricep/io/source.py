"""The reading core shared by every input: :class:`InputSpec`, :class:`EventSource`
and one pass's state (:class:`_Run`), which turns rows into events, checks them
(type, timestamp, id, required and numeric attributes, time order) and rejects
bad rows (raise, or count and write to the rejects file).

Rows come in one by one (:meth:`_Run.row_event`) or as whole column batches
(:meth:`_Run.columnar`, the fast path, which gives up on a batch with any bad row
so that the caller re-checks it row by row).
"""

from __future__ import annotations

import gc
import json
import math
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ConfigError, EventError, EventOrderError
from ..events import Event
from .timestamps import UNIT_FACTORS, TimeParser
from .values import is_number, shared_pylist

if TYPE_CHECKING:  # the filter is built by the runtime (petricep.runtime.prefilter)
    from ..runtime.prefilter import Prefilter

FORMATS = ("csv", "jsonl", "parquet")
_MISSING: Any = object()

Number = int | float


@dataclass(frozen=True)
class InputSpec:
    """Where events come from and how a row becomes an :class:`Event`.

    ``required`` / ``numeric`` map an event type (``"*"``: every type) to attribute
    names; every event of that type must have them (non-null), respectively have
    them as numbers (a numeric attribute is also required).
    """

    path: str
    format: str | None = None
    type_field: str | None = None
    type_const: str | None = None
    time_field: str | None = None
    id_field: str | None = None
    columns: tuple[str, ...] | None = None
    delimiter: str | None = None
    time_format: str | None = None
    time_unit: str | None = None
    on_error: str = "fail"
    rejects_path: str | None = None
    required: Mapping[str, frozenset[str]] = field(default_factory=dict)
    numeric: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # False: timestamps may go backwards (the engine re-orders with a slack, see
    # petricep.runtime.ordering); True: a decreasing timestamp is an error of its row
    ordered: bool = True


def _rule_map(m: Mapping[str, Any], what: str) -> dict[str, frozenset[str]]:
    if not isinstance(m, Mapping):
        raise ConfigError(f"{what} must map event types to attribute names")
    out: dict[str, frozenset[str]] = {}
    for k, v in m.items():
        if isinstance(v, str) or not isinstance(v, Iterable):
            raise ConfigError(f"{what}[{k!r}] must be a set of attribute names, not {v!r}")
        out[str(k)] = frozenset(str(a) for a in v)
    return out


def _check_spec(spec: InputSpec, source: str) -> None:
    """Reject inconsistent options (``source``: csv, jsonl, parquet, table, records)."""
    if (spec.type_field is None) == (spec.type_const is None):
        raise ConfigError("give exactly one of type_field (a column) and type_const (one type for all)")
    if spec.type_const is not None and (not isinstance(spec.type_const, str) or not spec.type_const):
        raise ConfigError("type_const must be a non-empty string")
    if spec.format is not None and spec.format not in FORMATS:
        raise ConfigError(f"unknown format {spec.format!r} (use csv, jsonl or parquet)")
    if spec.on_error not in ("fail", "skip"):
        raise ConfigError(f"on_error must be 'fail' or 'skip', not {spec.on_error!r}")
    if spec.rejects_path is not None and spec.on_error != "skip":
        raise ConfigError("rejects_path needs on_error='skip'")
    if spec.time_unit is not None and spec.time_unit not in UNIT_FACTORS:
        raise ConfigError(f"unknown time unit {spec.time_unit!r} (use s, ms, us or ns)")
    if spec.time_field is None and (spec.time_unit is not None or spec.time_format is not None):
        raise ConfigError("time_unit and time_format need a time_field")
    if spec.time_unit is not None and spec.time_format is not None:
        raise ConfigError("give time_unit (numeric timestamps) or time_format (date-times), not both")
    if spec.columns is not None:
        if source != "csv":
            raise ConfigError("columns applies to headerless CSV input only")
        if isinstance(spec.columns, str) or not all(isinstance(c, str) for c in spec.columns):
            raise ConfigError("columns must be a sequence of column names")
        dup = _duplicate(spec.columns)
        if dup is not None:
            raise ConfigError(f"column {dup!r} is named twice in columns")
    if spec.delimiter is not None:
        if source != "csv":
            raise ConfigError("delimiter applies to CSV input only")
        if len(spec.delimiter) != 1 or spec.delimiter in '\r\n"':
            raise ConfigError(f"the CSV delimiter must be one character, not {spec.delimiter!r}")
    _rule_map(spec.required, "required")
    _rule_map(spec.numeric, "numeric")


def _duplicate(names: Iterable[str]) -> str | None:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            return n
        seen.add(n)
    return None


def _show(v: Any) -> str:
    """A value as error messages quote it: text in quotes, JSON literals as JSON."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)


class _RowError(Exception):
    def __init__(self, message: str, field: str | None, order: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.order = order


class EventSource:
    """An input's events, in input order (iterate it; each iteration re-reads).

    ``columns``: the known column names (CSV header or ``columns``, Parquet/table
    schema, keys of the first JSON Lines row or record), known right after
    construction. ``rows_read`` / ``rows_rejected``: rows read (accepted and
    rejected) and rows rejected by the current or last iteration. ``time_kind``:
    ``"number"`` or ``"datetime"`` (known before iteration: the first row is peeked).
    """

    columns: tuple[str, ...] | None

    def __init__(self, spec: InputSpec, label: str) -> None:
        self.spec = spec
        self.label = label
        self.columns = None
        self.rows_read = 0
        self.rows_rejected = 0
        self._kind: str | None = None
        self._required = _rule_map(spec.required, "required")
        self._numeric = _rule_map(spec.numeric, "numeric")
        # rows no pattern can use are dropped a batch at a time (petricep.runtime.prefilter);
        # their positions are still counted
        self.row_filter: Prefilter | None = None

    @property
    def time_kind(self) -> str:
        if self._kind is None:
            spec = self.spec
            if spec.time_field is None:
                self._kind = "number"
            elif spec.time_format is not None:
                self._kind = "datetime"
            else:
                first = self._first_row()
                v = first.get(spec.time_field, _MISSING) if first is not None else _MISSING
                self._kind = TimeParser().probe_kind(v) if v is not _MISSING else "number"
        return self._kind

    @property
    def ts_in_seconds(self) -> bool:
        """Whether ``ts`` values are seconds (date-times, or numbers with a time_unit)."""
        return self.time_kind == "datetime" or self.spec.time_unit is not None

    def __iter__(self) -> Iterator[Event]:
        self.rows_read = 0
        self.rows_rejected = 0
        run = _Run(self)
        try:
            yield from self._events(run)
        finally:
            run.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label!r} columns={self.columns!r}>"

    # -- for subclasses --------------------------------------------------------------

    def _events(self, run: _Run) -> Iterator[Event]:
        raise NotImplementedError

    def _first_row(self) -> Mapping[str, Any] | None:
        return None

    def _needed_columns(self) -> list[str]:
        """Columns the spec names: type, time, id, required and numeric attributes."""
        spec = self.spec
        names = [n for n in (spec.type_field, spec.time_field, spec.id_field) if n is not None]
        types = None if spec.type_const is None else {"*", spec.type_const}
        for rules in (self._required, self._numeric):
            for t, attrs in rules.items():
                if types is None or t in types:
                    names.extend(sorted(attrs))
        return list(dict.fromkeys(names))

    def _check_columns(self, row: int | None) -> None:
        assert self.columns is not None
        have = set(self.columns)
        for name in self._needed_columns():
            if name not in have:
                raise EventError(f"missing column {name!r}", self.label, row, name)


class _Run:
    """State of one pass over an input: position, last timestamp, rejects file."""

    def __init__(self, source: EventSource) -> None:
        spec = source.spec
        self.source = source
        self.label = source.label
        self.skip = spec.on_error == "skip"
        self.type_field = spec.type_field
        self.type_const = spec.type_const
        self.time_field = spec.time_field
        self.id_field = spec.id_field
        self.parser = TimeParser(spec.time_format, spec.time_unit)
        self.kind: str | None = None
        if spec.time_field is None:
            self.kind = "number"
        elif spec.time_format is not None:
            self.kind = "datetime"
        self.prev_ts: Number = -math.inf if spec.ordered else math.nan  # nan: no comparison holds
        self.pos = 0
        self._rules: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._rejects: IO[str] | None = None
        if self.skip and spec.rejects_path is not None:
            try:
                self._rejects = open(spec.rejects_path, "w", encoding="utf-8")  # noqa: SIM115
            except OSError as e:
                raise ConfigError(f"cannot write the rejects file {spec.rejects_path!r}: {e}") from None

    def close(self) -> None:
        if self._rejects is not None:
            self._rejects.close()
            self._rejects = None

    def needed(self, names: Sequence[str]) -> list[bool] | None:
        """Per column, whether events carry it (None: all); see ``EventSource.row_filter``."""
        f = self.source.row_filter
        if f is None:
            return None
        return f.needed(names, (self.type_field, self.time_field, self.id_field))

    def take_pos(self) -> int:
        pos = self.pos
        self.pos += 1
        self.source.rows_read += 1
        return pos

    def rules(self, etype: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(required, numeric) attribute names of a type; numeric ones are required too."""
        r = self._rules.get(etype)
        if r is None:
            req_map, num_map = self.source._required, self.source._numeric
            empty: frozenset[str] = frozenset()
            num = num_map.get("*", empty) | num_map.get(etype, empty)
            req = req_map.get("*", empty) | req_map.get(etype, empty) | num
            r = (tuple(sorted(req)), tuple(sorted(num)))
            self._rules[etype] = r
        return r

    def reject(self, row: int | None, field: str | None, message: str, raw: Any, order: bool = False) -> None:
        if not self.skip:
            cls = EventOrderError if order else EventError
            raise cls(message, self.label, row, field)
        self.source.rows_rejected += 1
        if self._rejects is not None:
            rec = {"row": row, "field": field, "error": message, "raw": raw}
            self._rejects.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")

    # -- one row ---------------------------------------------------------------------

    def row_event(
        self,
        attrs: dict[str, Any],
        pos: int,
        row: int | None,
        raw: Any,
        type_raw: Any = _MISSING,
        time_raw: Any = _MISSING,
    ) -> Event | None:
        """The row's event, or ``None`` when it is rejected (skip mode)."""
        try:
            return self._row_event(attrs, pos, type_raw, time_raw)
        except _RowError as e:
            self.reject(row, e.field, e.message, raw, e.order)
            return None

    def _row_event(self, attrs: dict[str, Any], pos: int, type_raw: Any, time_raw: Any) -> Event:
        if self.type_const is not None:
            etype = self.type_const
        else:
            tf = self.type_field
            assert tf is not None
            v = attrs.get(tf, _MISSING) if type_raw is _MISSING else type_raw
            if v is _MISSING:
                raise _RowError(f"missing field {tf!r}", tf)
            if v is None or v == "":
                raise _RowError("missing value", tf)
            if isinstance(v, str):
                etype = v
            elif isinstance(v, int) and not isinstance(v, bool):
                etype = str(v)
            else:
                raise _RowError(f"expected a text event type, got {_show(v)}", tf)
        tmf = self.time_field
        kind = self.kind
        ts: Number
        if tmf is None:
            ts = pos
        else:
            v = attrs.get(tmf, _MISSING) if time_raw is _MISSING else time_raw
            if v is _MISSING:
                raise _RowError(f"missing field {tmf!r}", tmf)
            try:
                ts, kind = self.parser.parse(v)
            except ValueError:
                raise _RowError(f"cannot parse timestamp {_show(v)}", tmf) from None
            if self.kind is not None and kind != self.kind:
                raise _RowError(f"cannot parse timestamp {_show(v)}", tmf)
        idv: Any = pos
        if self.id_field is not None:
            idv = attrs.get(self.id_field, _MISSING)
            if idv is _MISSING:
                raise _RowError(f"missing field {self.id_field!r}", self.id_field)
            if idv is None:
                raise _RowError("missing value", self.id_field)
        req, num = self.rules(etype)
        for a in req:
            v = attrs.get(a, _MISSING)
            if v is _MISSING:
                raise _RowError(f"missing field {a!r}", a)
            if v is None:
                raise _RowError("missing value", a)
        for a in num:
            v = attrs[a]
            if not is_number(v):
                raise _RowError(f"expected a number, got {_show(v)}", a)
        if ts < self.prev_ts:
            raise _RowError(
                f"timestamp {ts} is before the previous event's {self.prev_ts} (input must be in time order)",
                tmf,
                order=True,
            )
        if self.source.spec.ordered:
            self.prev_ts = ts
        if self.kind is None:
            self.kind = kind
            self.source._kind = kind
        return Event(etype, ts, pos, idv, attrs)

    # -- a whole batch at once ---------------------------------------------------------

    def columnar(
        self,
        names: tuple[str, ...],
        cols: list[Any],
        has_nulls: list[bool],
        all_numbers: list[bool],
        type_arr: pa.Array | None,
        time_arr: pa.Array | None,
        n: int,
    ) -> list[Event] | None:
        """All events of a batch of ``n`` rows that are all good, or ``None`` when
        some row needs checking one by one (nothing is consumed then).

        A column is a list of values or, for numbers only, a numpy array (its rows become
        Python ints and floats once the row filter has chosen them)."""
        if n == 0:
            return []
        index = {name: i for i, name in enumerate(names)}
        pos0 = self.pos
        positions = range(pos0, pos0 + n)
        if self.type_const is not None:
            present = [self.type_const]
        else:
            assert type_arr is not None
            if pa.types.is_dictionary(type_arr.type):
                type_arr = type_arr.dictionary_decode()
            if not (pa.types.is_string(type_arr.type) or pa.types.is_large_string(type_arr.type)):
                return None
            if type_arr.null_count or pc.any(pc.equal(type_arr, "")).as_py():
                return None
            present = pc.unique(type_arr).to_pylist()
        kind = self.kind
        tss: Any
        if time_arr is None:
            tss = positions
        else:
            parsed = self.parser.parse_column(time_arr)
            if parsed is None:
                return None
            tss, got = parsed
            if got is not None:
                if kind is not None and got != kind:
                    return None
                kind = got
            if self.source.spec.ordered and (tss[0] < self.prev_ts or _decreases(tss)):
                return None
        ids: Any = positions
        if self.id_field is not None:
            i = index[self.id_field]
            if has_nulls[i]:
                return None
            ids = cols[i]
        for t in present:
            req, num = self.rules(t)
            for a in req:
                if has_nulls[index[a]]:
                    return None
            for a in num:
                if not all_numbers[index[a]]:
                    return None
        need = self.needed(names)
        if need is not None and not all(need):
            names = tuple(nm for nm, k in zip(names, need) if k)
            cols = [c for c, k in zip(cols, need) if k]
            all_numbers = [a for a, k in zip(all_numbers, need) if k]  # the filter reads them by name's index
        rows = None
        if self.source.row_filter is not None:
            rows = self.source.row_filter.keep(n, type_arr, self.type_const, names, cols, all_numbers, tss)
        # Building many small containers triggers the cyclic GC over and over, with
        # nothing to collect: pause it for the batch (about a third faster).
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            if rows is not None:
                types = self._types(type_arr, len(rows), rows)
                tss_kept, positions_kept, ids = _pick(tss, rows), _pick(positions, rows), _pick(ids, rows)
                cols = [_pick(c, rows) for c in cols]
                attrs = list(map(dict, map(zip, repeat(names), zip(*cols))))
                events = list(map(Event, types, tss_kept, positions_kept, ids, attrs))
            else:
                cols = [_listed(c) for c in cols]
                attrs = list(map(dict, map(zip, repeat(names), zip(*cols))))
                events = list(map(Event, self._types(type_arr, n, None), _listed(tss), positions, _listed(ids), attrs))
        finally:
            if gc_was_on:
                gc.enable()
        self.pos += n
        self.source.rows_read += n
        if time_arr is not None and self.source.spec.ordered:
            self.prev_ts = _listed(tss[-1:])[0]
        if self.kind is None and kind is not None:
            self.kind = kind
            self.source._kind = kind
        return events

    def _types(self, type_arr: pa.Array | None, n: int, rows: list[int] | None) -> Iterable[str]:
        """The event types of a batch's ``rows`` (all ``n`` when None), only those converted."""
        if self.type_const is not None:
            return repeat(self.type_const, n)
        assert type_arr is not None
        if rows is not None:
            type_arr = type_arr.take(pa.array(rows, pa.int64()))
        return shared_pylist(type_arr)  # type: ignore[no-any-return]


def _converted(
    arrays: Sequence[pa.Array], need: list[bool] | None, convert: Any
) -> tuple[list[Any], list[bool], list[bool]]:
    """A batch's columns for :meth:`_Run.columnar`: ``convert(array) -> (values, all numbers)``
    for each column a pattern reads (``need``; None = all), and which columns have nulls."""
    cols: list[Any] = []
    has_nulls: list[bool] = []
    all_numbers: list[bool] = []
    for i, arr in enumerate(arrays):
        if need is not None and not need[i]:  # no pattern reads it: never converted
            cols.append([])
            has_nulls.append(False)
            all_numbers.append(True)
            continue
        values, numbers_only = convert(arr)
        cols.append(values)
        has_nulls.append(arr.null_count > 0)
        all_numbers.append(numbers_only)
    return cols, has_nulls, all_numbers


def _pick(values: Any, rows: list[int]) -> list[Any]:
    """``[values[i] for i in rows]``, for the rows a row filter keeps."""
    if not rows:
        return []
    if isinstance(values, np.ndarray):
        return values[rows].tolist()  # type: ignore[no-any-return]
    got = operator.itemgetter(*rows)(values)
    return list(got) if len(rows) > 1 else [got]


def _decreases(values: Any) -> bool:
    """Whether some value is less than the one before it."""
    if isinstance(values, np.ndarray):
        return bool(np.any(values[1:] < values[:-1]))
    return any(map(operator.lt, values[1:], values))


def _listed(values: Any) -> Any:
    """A column's values as Python objects (a numpy column as a list)."""
    return values.tolist() if isinstance(values, np.ndarray) else values
