"""Event readers: CSV, JSON Lines and Parquet files, Arrow/pandas tables and Python
records, all turned into :class:`~petricep.events.Event` values in input order.

Use :func:`open_events` for files, :func:`events_from_table` and
:func:`events_from_records` in the library API. Each returns an :class:`EventSource`
that can be iterated (again: every iteration re-reads the input, except for a
one-shot iterator of records).

Rows and errors
---------------
Every row read consumes one position ``pos`` (0-based), so positions equal the
row index of the input even when some rows are rejected. Blank lines in text
files are not rows. Every error names the file, the row (the 1-based line number
in CSV and JSON Lines files, the header counted; the 0-based row index in Parquet
files, tables and records) and the field. With ``on_error="fail"`` (default) the
first bad row raises :class:`~petricep.errors.EventError`; with ``"skip"`` it is
counted in ``rows_rejected``, written to ``rejects_path`` (JSON Lines:
``{"row", "field", "error", "raw"}``; ``raw`` is the line's text for CSV and JSON
Lines, the row as an object otherwise) and reading goes on. A column missing from
a CSV header or a Parquet/table schema is always fatal, at open.

CSV
---
Each physical line is one row (newlines inside quoted values are not supported).
The reader cuts the file into chunks of whole lines and parses each with Arrow,
converting column by column; a chunk with anything unusual (a bad value, a short
line, a blank line, a lone ``\\r``) is re-read line by line with Python's ``csv``
module, which gives the same values and the exact line of each error.
"""

from __future__ import annotations

import csv
import gc
import json
import math
import operator
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import IO, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from ..errors import ConfigError, EventError, EventOrderError
from ..events import Event
from .timestamps import UNIT_FACTORS, TimeParser
from .values import is_number, shared_pylist, text_value, type_text_array

FORMATS = ("csv", "jsonl", "parquet")
_EXTENSIONS = {
    ".csv": "csv",
    ".txt": "csv",
    ".dat": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2"}
_CHUNK = 4 << 20
_BATCH_ROWS = 65_536
_BOM = b"\xef\xbb\xbf"
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


def infer_format(path: str) -> str:
    """``csv`` / ``jsonl`` / ``parquet`` from a file name (``.gz``/``.bz2`` allowed for text)."""
    name = os.path.basename(str(path)).lower()
    compressed = False
    for ext in _COMPRESSIONS:
        if name.endswith(ext):
            name = name[: -len(ext)]
            compressed = True
    fmt = _EXTENSIONS.get(os.path.splitext(name)[1])
    if fmt is None or (compressed and fmt == "parquet"):
        raise ConfigError(
            f"cannot tell the format of {path!r} from its name: give the format (csv, jsonl or parquet)"
        )
    return fmt


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
        self.prev_ts: Number = -math.inf
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
        self.prev_ts = ts
        if self.kind is None:
            self.kind = kind
            self.source._kind = kind
        return Event(etype, ts, pos, idv, attrs)

    # -- a whole batch at once ---------------------------------------------------------

    def columnar(
        self,
        names: tuple[str, ...],
        cols: list[list[Any]],
        has_nulls: list[bool],
        all_numbers: list[bool],
        type_arr: pa.Array | None,
        time_arr: pa.Array | None,
        n: int,
    ) -> list[Event] | None:
        """All events of a batch of ``n`` rows that are all good, or ``None`` when
        some row needs checking one by one (nothing is consumed then)."""
        if n == 0:
            return []
        index = {name: i for i, name in enumerate(names)}
        pos0 = self.pos
        positions = range(pos0, pos0 + n)
        types: Iterable[str]
        if self.type_const is not None:
            types = repeat(self.type_const, n)
            present = [self.type_const]
        else:
            assert type_arr is not None
            if pa.types.is_dictionary(type_arr.type):
                type_arr = type_arr.dictionary_decode()
            if not (pa.types.is_string(type_arr.type) or pa.types.is_large_string(type_arr.type)):
                return None
            if type_arr.null_count or pc.any(pc.equal(type_arr, "")).as_py():
                return None
            types = shared_pylist(type_arr)
            present = pc.unique(type_arr).to_pylist()
        kind = self.kind
        tss: Any
        if time_arr is None:
            tss = positions
        else:
            parsed = self.parser.parse_array(time_arr)
            if parsed is None:
                return None
            tss, got = parsed
            if got is not None:
                if kind is not None and got != kind:
                    return None
                kind = got
            if tss[0] < self.prev_ts or any(map(operator.lt, tss[1:], tss)):
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
        # Building many small containers triggers the cyclic GC over and over, with
        # nothing to collect: pause it for the batch (about a third faster).
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            attrs = list(map(dict, map(zip, repeat(names), zip(*cols))))
            events = list(map(Event, types, tss, positions, ids, attrs))
        finally:
            if gc_was_on:
                gc.enable()
        self.pos += n
        self.source.rows_read += n
        if time_arr is not None:
            self.prev_ts = tss[-1]
        if self.kind is None and kind is not None:
            self.kind = kind
            self.source._kind = kind
        return events


# --------------------------------------------------------------------------------------
# text files


def _compression(path: str) -> str | None:
    low = path.lower()
    for ext, comp in _COMPRESSIONS.items():
        if low.endswith(ext):
            return comp
    try:
        with open(path, "rb") as f:
            magic = f.read(3)
    except OSError:
        return None
    if magic[:2] == b"\x1f\x8b":
        return "gzip"
    if magic == b"BZh":
        return "bz2"
    return None


def _open_stream(path: str, label: str) -> Any:
    if not os.path.exists(path):
        raise EventError("cannot open file: no such file", label)
    if os.path.isdir(path):
        raise EventError("cannot open file: it is a directory", label)
    try:
        return pa.input_stream(path, compression=_compression(path))
    except (OSError, pa.ArrowException) as e:
        raise EventError(f"cannot open file: {e}", label) from None


def _read_chunks(path: str, label: str, skip_first_line: bool) -> Iterator[tuple[bytes, int]]:
    """Whole lines of a (possibly compressed) text file: ``(chunk, first line number)``."""
    stream = _open_stream(path, label)
    try:
        buf = b""
        line = 1
        first = True
        skipping = skip_first_line
        while True:
            try:
                data = stream.read(_CHUNK)
            except (OSError, EOFError, pa.ArrowException) as e:
                raise EventError(f"cannot read file: {e}", label) from None
            if first and data:
                first = False
                if data.startswith(_BOM):
                    data = data[len(_BOM) :]
            if not data:
                if buf and not skipping:
                    yield buf, line
                return
            buf += data
            if skipping:
                i = buf.find(b"\n")
                if i < 0:
                    continue
                buf = buf[i + 1 :]
                line = 2
                skipping = False
            j = buf.rfind(b"\n")
            if j < 0:
                continue
            chunk, buf = buf[: j + 1], buf[j + 1 :]
            yield chunk, line
            line += chunk.count(b"\n")
    finally:
        stream.close()


def _lines(chunk: bytes) -> list[bytes]:
    lines = chunk.split(b"\n")
    if chunk.endswith(b"\n"):
        lines.pop()
    return lines


def _decode(line: bytes) -> str:
    return line.decode("utf-8", "replace")


class _CsvSource(EventSource):
    def __init__(self, spec: InputSpec, label: str) -> None:
        super().__init__(spec, label)
        self._delim = spec.delimiter or ","
        if spec.columns is not None:
            self.columns = tuple(spec.columns)
            self._header = False
        else:
            self.columns = self._read_header()
            self._header = True
            dup = _duplicate(self.columns)
            if dup is not None:
                raise EventError(f"duplicate column {dup!r}", label, 1, dup)
        self._check_columns(1 if self._header else None)
        self._convert = pa_csv.ConvertOptions(
            column_types={c: pa.string() for c in self.columns},
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,
            null_values=[""],
        )

    def _read_header(self) -> tuple[str, ...]:
        for chunk, _ in _read_chunks(self.spec.path, self.label, False):
            first = chunk.split(b"\n", 1)[0]
            break
        else:
            return ()
        if first.endswith(b"\r"):
            first = first[:-1]
        try:
            text = first.decode("utf-8")
        except UnicodeDecodeError:
            raise EventError("invalid UTF-8 text", self.label, 1) from None
        try:
            return tuple(next(csv.reader([text], delimiter=self._delim), []))
        except csv.Error as e:
            raise EventError(f"invalid CSV: {e}", self.label, 1) from None

    def _split(self, line: bytes) -> tuple[str, list[str] | None, str | None]:
        """(text, fields, error) of one line."""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            return _decode(line), None, "invalid UTF-8 text"
        try:
            fields = next(csv.reader([text], delimiter=self._delim), [])
        except csv.Error as e:
            return text, None, f"invalid CSV: {e}"
        return text, fields, None

    def _first_row(self) -> Mapping[str, Any] | None:
        assert self.columns is not None
        for chunk, _ in _read_chunks(self.spec.path, self.label, self._header):
            for line in _lines(chunk):
                line = line[:-1] if line.endswith(b"\r") else line
                if line:
                    _, fields, err = self._split(line)
                    if fields is None or len(fields) != len(self.columns):
                        return None
                    return dict(zip(self.columns, fields))
        return None

    def _events(self, run: _Run) -> Iterator[Event]:
        for chunk, start in _read_chunks(self.spec.path, self.label, self._header):
            events = self._fast(run, chunk)
            if events is not None:
                yield from events
            else:
                yield from self._slow(run, chunk, start)

    def _fast(self, run: _Run, chunk: bytes) -> list[Event] | None:
        names = self.columns
        assert names is not None
        if not names:
            return None
        if b"\r" in chunk and chunk.count(b"\r") != chunk.count(b"\r\n"):
            return None
        if chunk.startswith((b"\n", b"\r\n")) or b"\n\n" in chunk or b"\n\r\n" in chunk:
            return None
        n_lines = chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
        try:
            table = pa_csv.read_csv(
                pa.py_buffer(chunk),
                read_options=pa_csv.ReadOptions(column_names=list(names), use_threads=True),
                parse_options=pa_csv.ParseOptions(delimiter=self._delim, newlines_in_values=False),
                convert_options=self._convert,
            )
        except (pa.ArrowException, ValueError):
            return None
        if table.num_rows != n_lines:
            return None
        table = table.combine_chunks()
        arrays = [c.chunk(0) if c.num_chunks else pa.array([], pa.string()) for c in table.columns]
        cols: list[list[Any]] = []
        has_nulls: list[bool] = []
        all_numbers: list[bool] = []
        for arr in arrays:
            values, numbers_only = type_text_array(arr)
            cols.append(values)
            has_nulls.append(arr.null_count > 0)
            all_numbers.append(numbers_only)
        spec = self.spec
        type_arr = arrays[names.index(spec.type_field)] if spec.type_field is not None else None
        time_arr = arrays[names.index(spec.time_field)] if spec.time_field is not None else None
        return run.columnar(names, cols, has_nulls, all_numbers, type_arr, time_arr, table.num_rows)

    def _slow(self, run: _Run, chunk: bytes, start: int) -> Iterator[Event]:
        names = self.columns
        assert names is not None
        spec = self.spec
        ncols = len(names)
        ti = names.index(spec.type_field) if spec.type_field is not None else None
        tmi = names.index(spec.time_field) if spec.time_field is not None else None
        for k, line in enumerate(_lines(chunk)):
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                continue
            row = start + k
            pos = run.take_pos()
            text, fields, err = self._split(line)
            if fields is None:
                run.reject(row, None, err or "invalid CSV", text)
                continue
            if len(fields) != ncols:
                run.reject(row, None, f"expected {ncols} fields, got {len(fields)}", text)
                continue
            attrs = {name: text_value(f) for name, f in zip(names, fields)}
            ev = run.row_event(
                attrs,
                pos,
                row,
                text,
                type_raw=fields[ti] if ti is not None else _MISSING,
                time_raw=fields[tmi] if tmi is not None else _MISSING,
            )
            if ev is not None:
                yield ev


class _JsonlSource(EventSource):
    def __init__(self, spec: InputSpec, label: str) -> None:
        super().__init__(spec, label)
        first = self._first_row()
        self.columns = tuple(first) if first is not None else None

    def _first_row(self) -> Mapping[str, Any] | None:
        for chunk, _ in _read_chunks(self.spec.path, self.label, False):
            for line in _lines(chunk):
                if line.strip():
                    obj, _ = self._parse(line)
                    return obj if isinstance(obj, dict) else None
        return None

    @staticmethod
    def _parse(line: bytes) -> tuple[Any, str | None]:
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            return None, "invalid JSON: invalid UTF-8 text"
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            return None, f"invalid JSON: {e.msg} (column {e.colno})"
        except RecursionError:
            return None, "invalid JSON: nested too deeply"
        except ValueError as e:
            return None, f"invalid JSON: {e}"
        if not isinstance(obj, dict):
            return None, "invalid JSON: a line must hold one object"
        return obj, None

    def _events(self, run: _Run) -> Iterator[Event]:
        for chunk, start in _read_chunks(self.spec.path, self.label, False):
            for k, line in enumerate(_lines(chunk)):
                if not line.strip():
                    continue
                row = start + k
                pos = run.take_pos()
                obj, err = self._parse(line)
                text = _decode(line[:-1] if line.endswith(b"\r") else line)
                if err is not None:
                    run.reject(row, None, err, text)
                    continue
                ev = run.row_event(obj, pos, row, text)
                if ev is not None:
                    yield ev


# --------------------------------------------------------------------------------------
# Arrow tables, Parquet files, records


def _arrow_values(arr: pa.Array) -> tuple[list[Any], bool]:
    """Python values of an Arrow column and whether all are numbers (no nulls)."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    numeric = pa.types.is_integer(t) or pa.types.is_floating(t)
    if numeric and arr.null_count == 0:
        return arr.to_numpy().tolist(), True
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return shared_pylist(arr), False
    return arr.to_pylist(), (numeric or pa.types.is_decimal(t)) and arr.null_count == 0


class _ArrowSource(EventSource):
    def __init__(self, spec: InputSpec, label: str, schema: pa.Schema, batches: Any) -> None:
        super().__init__(spec, label)
        self._batches = batches
        self.columns = tuple(schema.names)
        dup = _duplicate(self.columns)
        if dup is not None:
            raise EventError(f"duplicate column {dup!r}", label, None, dup)
        self._check_columns(None)

    def _first_row(self) -> Mapping[str, Any] | None:
        for batch in self._batches():
            if batch.num_rows:
                return batch.slice(0, 1).to_pylist()[0]  # type: ignore[no-any-return]
        return None

    def _events(self, run: _Run) -> Iterator[Event]:
        spec = self.spec
        names = self.columns
        assert names is not None
        row0 = 0
        for batch in self._batches():
            n = batch.num_rows
            cols: list[list[Any]] = []
            has_nulls: list[bool] = []
            all_numbers: list[bool] = []
            for arr in batch.columns:
                values, numbers_only = _arrow_values(arr)
                cols.append(values)
                has_nulls.append(arr.null_count > 0)
                all_numbers.append(numbers_only)
            type_arr = batch.column(names.index(spec.type_field)) if spec.type_field is not None else None
            time_arr = batch.column(names.index(spec.time_field)) if spec.time_field is not None else None
            events = run.columnar(names, cols, has_nulls, all_numbers, type_arr, time_arr, n)
            if events is not None:
                yield from events
            else:
                for k, rec in enumerate(batch.to_pylist()):
                    pos = run.take_pos()
                    ev = run.row_event(rec, pos, row0 + k, rec)
                    if ev is not None:
                        yield ev
            row0 += n


class _ParquetSource(_ArrowSource):
    def __init__(self, spec: InputSpec, label: str) -> None:
        import pyarrow.parquet as pq

        path = spec.path
        if not os.path.exists(path):
            raise EventError("cannot open file: no such file", label)
        try:
            schema = pq.ParquetFile(path).schema_arrow
        except (OSError, pa.ArrowException) as e:
            raise EventError(f"cannot read Parquet file: {e}", label) from None

        def batches() -> Iterator[pa.RecordBatch]:
            try:
                pf = pq.ParquetFile(path)
                it = pf.iter_batches(batch_size=_BATCH_ROWS)
                while True:
                    try:
                        batch = next(it)
                    except StopIteration:
                        return
                    yield batch
            except (OSError, pa.ArrowException) as e:
                raise EventError(f"cannot read Parquet file: {e}", label) from None

        super().__init__(spec, label, schema, batches)


class _RecordSource(EventSource):
    def __init__(self, spec: InputSpec, label: str, records: Iterable[Mapping[str, Any]]) -> None:
        super().__init__(spec, label)
        if isinstance(records, (Mapping, str, bytes)) or not isinstance(records, Iterable):
            raise ConfigError("records must be an iterable of mappings (one per event)")
        self._records = records
        self._it: Iterator[Any] | None = iter(records)
        self._first: Any = next(self._it, _MISSING)
        self.columns = tuple(self._first) if isinstance(self._first, Mapping) else None

    def _first_row(self) -> Mapping[str, Any] | None:
        return self._first if isinstance(self._first, Mapping) else None

    def _rows(self) -> Iterator[Any]:
        if self._it is not None:
            it, self._it = self._it, None
            return it if self._first is _MISSING else chain([self._first], it)
        return iter(self._records)

    def _events(self, run: _Run) -> Iterator[Event]:
        for row, rec in enumerate(self._rows()):
            pos = run.take_pos()
            if not isinstance(rec, Mapping):
                run.reject(row, None, f"expected a mapping, got {type(rec).__name__}", repr(rec))
                continue
            attrs = dict(rec)
            ev = run.row_event(attrs, pos, row, attrs)
            if ev is not None:
                yield ev


# --------------------------------------------------------------------------------------
# public entry points


def open_events(spec: InputSpec) -> EventSource:
    """The events of a CSV, JSON Lines or Parquet file (format from ``spec.format`` or the name)."""
    fmt = spec.format or infer_format(spec.path)
    _check_spec(spec, fmt)
    label = str(spec.path)
    if fmt == "csv":
        return _CsvSource(spec, label)
    if fmt == "jsonl":
        return _JsonlSource(spec, label)
    return _ParquetSource(spec, label)


def events_from_table(table: Any, spec: InputSpec) -> EventSource:
    """The events of a ``pyarrow.Table`` / ``RecordBatch`` or ``pandas.DataFrame``.

    Rows are numbered from 0 in errors; ``spec.path`` only names the input in messages.
    """
    _check_spec(spec, "table")
    label = str(spec.path) if spec.path else "<table>"
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    if not isinstance(table, pa.Table):
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is a dependency
            pd = None
        if pd is None or not isinstance(table, pd.DataFrame):
            raise ConfigError(f"expected a pyarrow Table or pandas DataFrame, got {type(table).__name__}")
        df = table
        try:
            table = pa.Table.from_pandas(df, preserve_index=False)
        except (pa.ArrowException, TypeError, ValueError):
            records = [{str(k): v for k, v in r.items()} for r in df.to_dict("records")]
            src = _RecordSource(spec, label, records)
            src.columns = tuple(str(c) for c in df.columns)
            src._check_columns(None)
            return src
    tbl = table

    def batches() -> Iterator[pa.RecordBatch]:
        return iter(tbl.to_batches(max_chunksize=_BATCH_ROWS))

    return _ArrowSource(spec, label, tbl.schema, batches)


def events_from_records(records: Iterable[Mapping[str, Any]], spec: InputSpec) -> EventSource:
    """The events of Python mappings (one per event), numbered from 0 in errors.

    A list can be iterated again; a one-shot iterator gives its events once.
    """
    _check_spec(spec, "records")
    label = str(spec.path) if spec.path else "<records>"
    return _RecordSource(spec, label, records)


__all__ = [
    "FORMATS",
    "EventSource",
    "InputSpec",
    "events_from_records",
    "events_from_table",
    "infer_format",
    "open_events",
]
