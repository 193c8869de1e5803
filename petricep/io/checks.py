"""Row checking: the one place where a row of any reader becomes an :class:`Event` or a
rejection.

A :class:`RowChecker` is one pass over an input. It checks each row by the same rules,
whatever the reader (see ``docs/INPUT.md``):

* the event type: a non-empty text (or an integer, read as text);
* the timestamp: a number or date-time (:mod:`petricep.io.timestamps`), in time order
  when the input must be ordered;
* the id, and every attribute a pattern reads (``required``): present, not missing, one
  value (a list or an object cannot be a key or compared);
* every attribute a pattern computes with (``numeric``): a number by
  :func:`~petricep.io.values.is_number` (a float64 holds it: never NaN or an infinity).

Missing means the same in every reader: ``null``/``None``, the empty string and a float
NaN all become ``None`` (:func:`missing_as_none`; an empty CSV cell is ``None`` already).

Rows come one by one (:meth:`RowChecker.row_event`) or as whole column batches
(:meth:`RowChecker.columnar`, the fast path). The batch check only decides whether the
batch needs no row checks at all, from flags per column (missing values, numbers only):
when some row does, it gives the batch back untouched and the reader passes its rows to
:meth:`~RowChecker.row_event`, which is then the only check those rows get.
"""

from __future__ import annotations

import difflib
import gc
import json
import math
import operator
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from itertools import repeat
from typing import IO, TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import EventError, EventOrderError, OutputError
from ..events import Event, EventColumns, TypeColumn
from ..runtime.arrow import number_array, number_view
from .spec import InputSpec, rule_map
from .timestamps import TimeParser, format_hint
from .values import FLOAT_RE, MAX_NUMBER_CHARS, is_number, shared_pylist, text_value

if TYPE_CHECKING:  # the filter is built by the runtime (petricep.runtime.prefilter)
    from ..runtime.prefilter import Prefilter

MISSING: Any = object()  # a field a row does not have (None is a missing *value*)
SHOWN_CHARS = 40  # error messages quote at most this much of a value
NUMBER_LIMIT = f"a number must be finite and fit a float64, in at most {MAX_NUMBER_CHARS} characters"

Number = int | float


def show_value(v: Any) -> str:
    """A value as error messages quote it: text in quotes (cut after :data:`SHOWN_CHARS`
    characters), JSON literals as JSON, never a repr that fails or runs on for pages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int) and not is_number(v):
        return "an integer beyond the float64 range"
    if isinstance(v, str) and len(v) > SHOWN_CHARS:
        return f"{v[:SHOWN_CHARS]!r}... ({len(v)} characters)"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    text = repr(v)
    return text if len(text) <= 2 * SHOWN_CHARS else text[: 2 * SHOWN_CHARS] + "..."


def shown_time(ts: Number, raw: Any, kind: str | None) -> Any:
    """A timestamp as messages name it: a date-time as the input wrote it (its text as
    written, an Arrow/pandas date-time in ISO form), a number as the number it is."""
    if kind != "datetime" or raw is MISSING or raw is None:
        return ts
    if isinstance(raw, (datetime, date)):
        return raw.isoformat()
    return raw if isinstance(raw, str) else str(raw)


def missing_as_none(attrs: dict[str, Any]) -> dict[str, Any]:
    """``attrs`` with every missing value (empty text, float NaN) as ``None``, in place."""
    for k, v in attrs.items():
        t = type(v)
        if (t is str and not v) or (t is float and v != v):
            attrs[k] = None
    return attrs


def _not_a_number(v: Any) -> str:
    """Why a value is no number; a number-like one (``1e400``, ``inf``, 400 digits) is told
    the limit it breaks."""
    message = f"expected a number, got {show_value(v)}"
    numeric = isinstance(v, (int, float)) and not isinstance(v, bool)
    too_big = isinstance(v, str) and FLOAT_RE.fullmatch(v) is not None and isinstance(text_value(v), str)
    if numeric or too_big:
        return f"{message}: {NUMBER_LIMIT}"
    return message


def _is_single(v: Any) -> bool:
    """Whether a value can be a key and be compared: one hashable value, not a container."""
    try:
        hash(v)
    except TypeError:
        return False
    return True


class RowError(Exception):
    """A bad row: the message and the field it names (``order``: a time-order error)."""

    def __init__(self, message: str, field: str | None, order: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.order = order


class ReadCounts:
    """What one pass has read: rows (accepted and rejected), rejects, the time kind the
    first timestamp showed (None until then), and the event types of the batches checked
    whole (``batch_types``: a run without matches names the types its input had, those of
    rows a row filter dropped too; the batch check has them already). Shared by a source
    and its checker."""

    __slots__ = ("batch_types", "rows_read", "rows_rejected", "time_kind")

    def __init__(self) -> None:
        self.rows_read = 0
        self.rows_rejected = 0
        self.time_kind: str | None = None
        self.batch_types: set[str] = set()


class RowRules:
    """``required`` and ``numeric`` of a spec, per event type (``"*"``: every type)."""

    def __init__(self, spec: InputSpec) -> None:
        self.required = rule_map(spec.required, "required")
        self.numeric = rule_map(spec.numeric, "numeric")
        self._by_type: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def of(self, etype: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(required, numeric) attribute names of a type; numeric ones are required too."""
        r = self._by_type.get(etype)
        if r is None:
            empty: frozenset[str] = frozenset()
            num = self.numeric.get("*", empty) | self.numeric.get(etype, empty)
            req = self.required.get("*", empty) | self.required.get(etype, empty) | num
            r = (tuple(sorted(req)), tuple(sorted(num)))
            self._by_type[etype] = r
        return r

    def columns(self, spec: InputSpec) -> list[str]:
        """Columns the spec names: type, time, id, required and numeric attributes."""
        names = [n for n in (spec.type_field, spec.time_field, spec.id_field) if n is not None]
        types = None if spec.type_const is None else {"*", spec.type_const}
        for rules in (self.required, self.numeric):
            for t, attrs in rules.items():
                if types is None or t in types:
                    names.extend(sorted(attrs))
        return list(dict.fromkeys(names))


class Batch(NamedTuple):
    """A batch's columns for :meth:`RowChecker.columnar`: per column its values (a list, or a
    numpy array of numbers only), whether a row check is needed where it is required
    (``unsure``: a missing value, a list or object), and whether all values are numbers."""

    cols: list[Any]
    unsure: list[bool]
    all_numbers: list[bool]


def converted_columns(arrays: Sequence[pa.Array], need: list[bool] | None, convert: Any) -> Batch:
    """A batch's columns: ``convert(array) -> (values, all numbers, unsure)`` for each column
    a pattern reads (``need``; None = all); the others are never converted."""
    batch = Batch([], [], [])
    for i, arr in enumerate(arrays):
        if need is not None and not need[i]:
            batch.cols.append([])
            batch.unsure.append(False)
            batch.all_numbers.append(True)
            continue
        values, numbers_only, unsure = convert(arr)
        batch.cols.append(values)
        batch.unsure.append(unsure)
        batch.all_numbers.append(numbers_only)
    return batch


class RowChecker:
    """One pass over an input: position, last timestamp, rejects file, and the row checks."""

    def __init__(
        self,
        spec: InputSpec,
        label: str,
        rules: RowRules,
        counts: ReadCounts,
        row_filter: Prefilter | None,
        as_columns: bool = False,
        fields_only: bool = False,
    ) -> None:
        self.spec = spec
        self.label = label
        self.rules = rules
        self.counts = counts
        self.row_filter = row_filter
        self.as_columns = as_columns  # a whole checked batch as one EventColumns
        # ... whose attributes are only the fields the patterns read (and the id): see converted
        self.fields_only = as_columns and fields_only
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
        self.prev_raw: Any = MISSING  # the previous event's time as the input wrote it (for messages)
        self.pos = 0
        self._rejects: IO[str] | None = None
        if self.skip and spec.rejects_path is not None:
            try:
                self._rejects = open(spec.rejects_path, "w", encoding="utf-8")  # noqa: SIM115
            except OSError as e:
                raise self._cannot_write(e) from None

    def close(self) -> None:
        if self._rejects is not None:
            rejects, self._rejects = self._rejects, None
            try:
                rejects.close()  # flushes: a full disk shows here at the latest
            except OSError as e:
                raise self._cannot_write(e) from None

    def _cannot_write(self, e: OSError) -> OutputError:
        return OutputError(f"cannot write the rejects file {self.spec.rejects_path!r}: {e.strerror or e}")

    def needed(self, names: Sequence[str]) -> list[bool] | None:
        """Per column, whether events carry it (None: all); see ``EventSource.row_filter``."""
        if self.row_filter is None:
            return None
        return self.row_filter.needed(names, (self.type_field, self.time_field, self.id_field))

    def converted(self, names: Sequence[str]) -> list[bool] | None:
        """Per column, whether the reader makes its values (None: all): those events carry
        (:meth:`needed`), but where whole batches go to a consumer that reads only the fields
        the patterns read (``fields_only``: the kernel, whose types and times come from the
        type and time columns themselves), the type and time columns only where a pattern
        reads them too. A million rows' type names or date-time texts as Python strings
        cost tens of milliseconds nothing would read."""
        if not self.fields_only or self.row_filter is None or self.row_filter.whole:
            return self.needed(names)
        return self.row_filter.needed(names, (self.id_field,))

    def take_pos(self) -> int:
        """The next row's position (every row read takes one, accepted or not)."""
        pos = self.pos
        self.pos += 1
        self.counts.rows_read += 1
        return pos

    def reject(self, row: int | None, field: str | None, message: str, raw: Any, order: bool = False) -> None:
        """A bad row: raise (``on_error="fail"``) or count it and write it to the rejects file."""
        if not self.skip:
            cls = EventOrderError if order else EventError
            raise cls(message, self.label, row, field)
        self.counts.rows_rejected += 1
        if self._rejects is not None:
            rec = {"row": row, "field": field, "error": message, "raw": raw}
            if self.spec.more_paths:  # several files: the row is a line of this one
                rec = {"file": self.label, **rec}
            try:
                self._rejects.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
            except OSError as e:
                raise self._cannot_write(e) from None

    def _learn_kind(self, kind: str | None) -> None:
        if self.kind is None and kind is not None:
            self.kind = kind
            self.counts.time_kind = kind

    # -- one row ---------------------------------------------------------------------

    def row_event(
        self,
        attrs: dict[str, Any],
        pos: int,
        row: int | None,
        raw: Any,
        type_raw: Any = MISSING,
        time_raw: Any = MISSING,
        clean: bool = False,
    ) -> Event | None:
        """The row's event, or ``None`` when it is rejected (skip mode). ``clean``: the
        reader already gives every missing value as ``None`` (CSV cells)."""
        if not clean:
            missing_as_none(attrs)
        try:
            etype = self._event_type(attrs, type_raw)
            ts, kind = self._timestamp(attrs, pos, time_raw)
            idv = self._id(attrs, pos)
            self._fields(attrs, etype)
            if ts < self.prev_ts:
                raise RowError(self._order_message(ts, self._time_raw(attrs, time_raw), kind), self.time_field, order=True)
        except RowError as e:
            self.reject(row, e.field, e.message, raw, e.order)
            return None
        if self.spec.ordered:
            self.prev_ts = ts
            self.prev_raw = self._time_raw(attrs, time_raw)
        self._learn_kind(kind)
        return Event(etype, ts, pos, idv, attrs)

    def _time_raw(self, attrs: dict[str, Any], time_raw: Any) -> Any:
        """The row's time value as the input holds it (MISSING: no time column)."""
        if time_raw is not MISSING or self.time_field is None:
            return time_raw
        return attrs.get(self.time_field, MISSING)

    def _order_message(self, ts: Number, raw: Any, kind: str | None) -> str:
        """A row back in time, its time and the previous event's named as the input wrote them."""
        now, prev = shown_time(ts, raw, kind), shown_time(self.prev_ts, self.prev_raw, kind)
        return f"timestamp {now} is before the previous event's {prev} (input must be in time order)"

    def _event_type(self, attrs: dict[str, Any], type_raw: Any) -> str:
        if self.type_const is not None:
            return self.type_const
        tf = self.type_field
        assert tf is not None
        v = attrs.get(tf, MISSING) if type_raw is MISSING else type_raw
        if v is MISSING:
            raise RowError(f"missing field {tf!r}", tf)
        if v is None or v == "":
            raise RowError("missing value", tf)
        if isinstance(v, str):
            return v
        if isinstance(v, int) and not isinstance(v, bool) and is_number(v):
            return str(v)
        raise RowError(f"expected a text event type, got {show_value(v)}", tf)

    def _timestamp(self, attrs: dict[str, Any], pos: int, time_raw: Any) -> tuple[Number, str | None]:
        tmf = self.time_field
        if tmf is None:
            return pos, self.kind
        v = attrs.get(tmf, MISSING) if time_raw is MISSING else time_raw
        if v is MISSING:
            raise RowError(f"missing field {tmf!r}", tmf)
        try:
            ts, kind = self.parser.parse(v)
        except ValueError:
            hint = format_hint(v) if self.parser.format is None else ""
            raise RowError(f"cannot parse timestamp {show_value(v)}{hint}", tmf) from None
        if self.kind is not None and kind != self.kind:
            raise RowError(f"cannot parse timestamp {show_value(v)}", tmf)
        return ts, kind

    def _id(self, attrs: dict[str, Any], pos: int) -> Any:
        f = self.id_field
        if f is None:
            return pos
        idv = attrs.get(f, MISSING)
        if idv is MISSING:
            raise RowError(f"missing field {f!r}", f)
        if idv is None:
            raise RowError("missing value", f)
        if not _is_single(idv):
            raise RowError(f"expected a single value, got {show_value(idv)}", f)
        return idv

    def _fields(self, attrs: dict[str, Any], etype: str) -> None:
        req, num = self.rules.of(etype)
        for a in req:
            v = attrs.get(a, MISSING)
            if v is MISSING:
                close = difflib.get_close_matches(a, sorted(map(str, attrs)), n=1, cutoff=0.6)
                raise RowError(f"missing field {a!r}" + (f"; did you mean {close[0]!r}?" if close else ""), a)
            if v is None:
                raise RowError("missing value", a)
            if not _is_single(v):
                raise RowError(f"expected a single value, got {show_value(v)}", a)
        for a in num:
            v = attrs[a]
            if not is_number(v):
                raise RowError(_not_a_number(v), a)

    # -- a whole batch at once ---------------------------------------------------------

    def columnar(
        self, names: tuple[str, ...], batch: Batch, type_arr: pa.Array | None, time_arr: pa.Array | None, n: int
    ) -> list[Event] | list[EventColumns] | None:
        """All events of a batch of ``n`` rows that are all good, or ``None`` when some row
        needs checking one by one (nothing is consumed then)."""
        if n == 0:
            return []
        if type_arr is not None and pa.types.is_dictionary(type_arr.type):
            type_arr = type_arr.dictionary_decode()
        checked, encoded = self._encoded_types(type_arr)
        if not checked:
            return None
        present: list[str] = encoded.dictionary.to_pylist() if encoded is not None else [str(self.type_const)]
        if encoded is not None and "" in present:  # a missing type: a row check names the row
            return None
        typed = None  # the time column as the cells were typed, where they were (converted)
        if self.time_field is not None and time_arr is not None:
            at = names.index(self.time_field)
            made = self.converted(names)
            typed = batch.cols[at] if made is None or made[at] else None
        times = self._batch_times(time_arr, n, typed)
        if times is None:
            return None
        tss, kind = times
        if not self._batch_fields(names, batch, present):
            return None
        events = self._build(names, batch, type_arr, encoded, tss, n)
        self.pos += n
        self.counts.rows_read += n
        self.counts.batch_types.update(present)
        if time_arr is not None and self.spec.ordered:
            self.prev_ts = _listed(tss[-1:])[0]
            self.prev_raw = time_arr[n - 1].as_py() if kind == "datetime" else MISSING
        self._learn_kind(kind)
        return events

    def _encoded_types(self, type_arr: pa.Array | None) -> tuple[bool, pa.DictionaryArray | None]:
        """(checked, the batch's type column dictionary-encoded): its dictionary is the types
        present, in order of appearance (as ``pc.unique`` gives them), encoded once for the
        batch check and the kernel's type codes; None with a constant type. Not checked when
        a row's type needs a row check (not text, or missing)."""
        if self.type_const is not None:
            return True, None
        assert type_arr is not None
        if not (pa.types.is_string(type_arr.type) or pa.types.is_large_string(type_arr.type)):
            return False, None
        if type_arr.null_count:
            return False, None
        return True, pc.dictionary_encode(type_arr)

    def _batch_times(self, time_arr: pa.Array | None, n: int, typed: Any = None) -> tuple[Any, str | None] | None:
        """(timestamps, kind) of the batch, or None when a row's timestamp needs a row check;
        ``typed``: the time column as the batch's cells were typed (see ``parse_column``)."""
        if time_arr is None:
            return range(self.pos, self.pos + n), self.kind
        parsed = self.parser.parse_column(time_arr, typed)
        if parsed is None:
            return None
        tss, got = parsed
        kind = self.kind
        if got is not None:
            if kind is not None and got != kind:
                return None
            kind = got
        if self.spec.ordered and (tss[0] < self.prev_ts or _decreases(tss)):
            return None
        return tss, kind

    def _batch_fields(self, names: tuple[str, ...], batch: Batch, present: list[str]) -> bool:
        """Whether the id and every required and numeric attribute of the batch's types pass."""
        index = {name: i for i, name in enumerate(names)}
        if self.id_field is not None and batch.unsure[index[self.id_field]]:
            return False
        for t in present:
            req, num = self.rules.of(t)
            if any(batch.unsure[index[a]] for a in req) or not all(batch.all_numbers[index[a]] for a in num):
                return False
        return True

    def _build(
        self,
        names: tuple[str, ...],
        batch: Batch,
        type_arr: pa.Array | None,
        encoded: pa.DictionaryArray | None,
        tss: Any,
        n: int,
    ) -> list[Event] | list[EventColumns]:
        """The events of a checked batch (only the rows the row filter keeps, when there is
        one): one :class:`EventColumns` when the source gives columns (``as_columns``)."""
        positions = range(self.pos, self.pos + n)
        cols, all_numbers = batch.cols, batch.all_numbers
        ids: Any = positions
        if self.id_field is not None:
            ids = cols[names.index(self.id_field)]
        need = self.converted(names)
        if need is not None and not all(need):
            names = tuple(nm for nm, k in zip(names, need) if k)
            cols = [c for c, k in zip(cols, need) if k]
            all_numbers = [a for a, k in zip(all_numbers, need) if k]  # the filter reads them by name's index
        rows = None
        if self.row_filter is not None:
            rows = self.row_filter.keep(n, encoded, self.type_const, names, cols, all_numbers, tss)
        # Building many small containers triggers the cyclic GC over and over, with
        # nothing to collect: pause it for the batch (about a third faster).
        if self.as_columns:
            types = self._type_column(encoded, n)
            return [self._columns(names, cols, types, tss, positions, ids, rows)]
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            if rows is not None:
                kept_types = self._types(type_arr, len(rows), rows)
                tss, positions_kept, ids = _pick(tss, rows), _pick(positions, rows), _pick(ids, rows)
                cols = [_pick(c, rows) for c in cols]
                attrs = list(map(dict, map(zip, repeat(names), zip(*cols))))
                return list(map(Event, kept_types, tss, positions_kept, ids, attrs))
            cols = [_listed(c) for c in cols]
            attrs = list(map(dict, map(zip, repeat(names), zip(*cols))))
            return list(map(Event, self._types(type_arr, n, None), _listed(tss), positions, _listed(ids), attrs))
        finally:
            if gc_was_on:
                gc.enable()

    def _columns(
        self,
        names: tuple[str, ...],
        cols: list[Any],
        types: TypeColumn,
        tss: Any,
        positions: range,
        ids: Any,
        rows: list[int] | None,
    ) -> EventColumns:
        """A checked batch as columns, the row filter's rows only (values as its events hold
        them; numeric columns stay numpy arrays, picked by one index array, and the types
        codes: no Python object per row)."""
        if rows is not None:
            at = np.asarray(rows, dtype=np.intp)
            types = TypeColumn(types.codes[at], types.names)
            tss, kept, ids = _take(tss, rows, at), at + positions.start, _take(ids, rows, at)
            return EventColumns(types, tss, kept, ids, {nm: _take(c, rows, at) for nm, c in zip(names, cols)})
        return EventColumns(types, tss, positions, ids, dict(zip(names, cols)))

    def _type_column(self, encoded: pa.DictionaryArray | None, n: int) -> TypeColumn:
        """A batch's types as codes (its type column dictionary-encoded, or the constant type)."""
        if encoded is None:
            assert self.type_const is not None
            return TypeColumn.constant(self.type_const, n)
        return TypeColumn(number_view(encoded.indices), encoded.dictionary.to_pylist())

    def _types(self, type_arr: pa.Array | None, n: int, rows: list[int] | None) -> Iterable[str]:
        """The event types of a batch's ``rows`` (all ``n`` when None), only those converted."""
        if self.type_const is not None:
            return repeat(self.type_const, n)
        assert type_arr is not None
        if rows is not None:
            type_arr = type_arr.take(number_array(rows, pa.int64()))
        return shared_pylist(type_arr)  # type: ignore[no-any-return]


def _take(values: Any, rows: list[int], at: np.ndarray) -> Any:
    """The rows a row filter keeps of a column: a numpy column stays one (indexed by ``at``,
    the same rows), any other is picked as a list."""
    if isinstance(values, np.ndarray):
        return values[at]
    return _pick(values, rows)


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


__all__ = [
    "MISSING",
    "SHOWN_CHARS",
    "Batch",
    "ReadCounts",
    "RowChecker",
    "RowError",
    "RowRules",
    "converted_columns",
    "missing_as_none",
    "show_value",
]
