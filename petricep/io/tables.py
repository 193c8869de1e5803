"""Parquet files, Arrow / pandas tables and Python records."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ConfigError, EventError
from ..events import Event, EventColumns
from ..runtime.arrow import number_view, scalar
from .checks import MISSING, RowChecker, converted_columns
from .source import EventSource, TimeSort
from .spec import InputSpec, duplicate_name
from .streams import is_stream, replay_of
from .timestamps import TimeParser
from .values import text_pylist

BATCH_ROWS = 65_536


def arrow_values(arr: pa.Array) -> tuple[Any, bool, bool]:
    """Values of an Arrow column (a numpy array for numbers without nulls, else Python
    values), whether all are numbers (finite, no nulls), and whether a row check is needed
    where the column is required: a missing value (null, empty text, NaN) or a nested one."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    if pa.types.is_floating(t) and pc.any(pc.is_nan(arr)).as_py():
        arr = pc.if_else(pc.is_nan(arr), scalar(None, t), arr)  # NaN is a missing value
    numeric = pa.types.is_integer(t) or pa.types.is_floating(t)
    nulls = arr.null_count > 0
    if numeric and not nulls:
        finite = not pa.types.is_floating(t) or pc.all(pc.is_finite(arr)).as_py()
        return number_view(arr), finite, False  # numpy: rows become Python numbers once the row filter has chosen them
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        values, missing = text_pylist(arr)
        return values, False, missing
    return arr.to_pylist(), numeric and not nulls, nulls or pa.types.is_nested(t)


def _table_times(column: pa.ChunkedArray, spec: InputSpec) -> pa.Array:
    """The time column's timestamps as one Arrow array, as the reader parses them (a value
    that is no timestamp: null, for the sort to put last, where its row is the error it is)."""
    parser = TimeParser(spec.time_format, spec.time_unit)
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    t = arr.type
    if spec.time_format is None and not arr.null_count:  # numbers and Arrow date-times order as they are
        if pa.types.is_integer(t) or pa.types.is_floating(t):
            return arr
        if pa.types.is_timestamp(t) or pa.types.is_date64(t):
            return arr.cast(pa.int64())
        if pa.types.is_date32(t):
            return arr.cast(pa.int32())
    got = parser.parse_column(arr)
    if got is not None:
        return pa.array(got[0])
    values: list[Any] = []
    for v in arr.to_pylist():
        try:
            values.append(parser.parse(v)[0])
        except ValueError:
            values.append(None)
    return pa.array(values, pa.float64() if any(isinstance(v, float) for v in values) else None)


def time_sorted(table: pa.Table, spec: InputSpec) -> tuple[pa.Table, TimeSort | None]:
    """A table is not a stream: rows out of time order are sorted by their timestamps (a
    stable sort, Arrow's ``sort_indices``: rows with equal times keep their order, as the
    events of a stream would arrive) before they become events; the sort's account (None:
    the rows were in time order, the table is read as it is). Rows whose time is no
    timestamp go last (each is its row's error, named by its row in the table)."""
    if spec.time_field is None or spec.time_field not in table.schema.names or table.num_rows < 2:
        return table, None
    if duplicate_name(tuple(table.schema.names)) is not None:
        return table, None  # (the source reports the duplicate column)
    times = _table_times(table.column(spec.time_field), spec)
    good = pc.drop_null(times) if times.null_count else times
    if len(good) < 2 or not pc.any(pc.less(good[1:], good[:-1])).as_py():
        return table, None  # (in time order: a row that is no timestamp stays where it is)
    # (Arrow's sort_indices is stable: rows with equal times keep their order)
    order = pc.sort_indices(pa.table({"ts": times}), sort_keys=[("ts", "ascending")])  # (nulls last: the default)
    rows = number_view(order)
    moved = int((rows != np.arange(len(rows))).sum())
    return table.take(order), TimeSort(rows, spec.time_field, moved)


class ArrowSource(EventSource):
    def __init__(
        self, spec: InputSpec, label: str, schema: pa.Schema, batches: Any, sort: TimeSort | None = None
    ) -> None:
        super().__init__(spec, label)
        self._batches = batches
        self.time_sort = sort
        self.columns = tuple(schema.names)
        dup = duplicate_name(self.columns)
        if dup is not None:
            raise EventError(f"duplicate column {dup!r}", label, None, dup)
        self.check_columns(None)

    def read_first_row(self) -> Mapping[str, Any] | None:
        for batch in self._batches():
            if batch.num_rows:
                return batch.slice(0, 1).to_pylist()[0]  # type: ignore[no-any-return]
        return None

    def read_events(self, run: RowChecker) -> Iterator[Event | EventColumns]:
        spec = self.spec
        names = self.columns
        assert names is not None
        row0 = 0
        for batch in self._batches():
            n = batch.num_rows
            converted = converted_columns(batch.columns, run.converted(names), arrow_values)
            type_arr = batch.column(names.index(spec.type_field)) if spec.type_field is not None else None
            time_arr = batch.column(names.index(spec.time_field)) if spec.time_field is not None else None
            events = run.columnar(names, converted, type_arr, time_arr, n)
            if events is not None:
                yield from events
            else:
                for k, rec in enumerate(batch.to_pylist()):
                    pos = run.take_pos()
                    ev = run.row_event(rec, pos, self.input_row(row0 + k), rec)
                    if ev is not None:
                        yield ev
            row0 += n


class ParquetSource(ArrowSource):
    def __init__(self, spec: InputSpec, label: str) -> None:
        import pyarrow.parquet as pq

        path = spec.path
        if not os.path.exists(path):
            raise EventError("cannot open file: no such file", label)
        if os.path.isdir(path):
            raise EventError("cannot open file: it is a directory", label)
        # a pipe cannot seek to the footer: read whole, once, into memory (petricep.io.streams)
        data = replay_of(path, label).whole() if is_stream(path) else None

        def source() -> Any:
            return path if data is None else pa.BufferReader(data)

        try:
            schema = pq.ParquetFile(source()).schema_arrow
        except (OSError, pa.ArrowException) as e:
            raise EventError(f"cannot read Parquet file: {e}", label) from None

        def batches() -> Iterator[pa.RecordBatch]:
            try:
                pf = pq.ParquetFile(source())
                it = pf.iter_batches(batch_size=BATCH_ROWS)
                while True:
                    try:
                        batch = next(it)
                    except StopIteration:
                        return
                    yield batch
            except (OSError, pa.ArrowException) as e:
                raise EventError(f"cannot read Parquet file: {e}", label) from None

        super().__init__(spec, label, schema, batches)


class RecordSource(EventSource):
    def __init__(self, spec: InputSpec, label: str, records: Iterable[Mapping[str, Any]]) -> None:
        super().__init__(spec, label)
        if isinstance(records, (Mapping, str, bytes)) or not isinstance(records, Iterable):
            raise ConfigError("records must be an iterable of mappings (one per event)")
        self._records = records
        self._it: Iterator[Any] | None = iter(records)
        self._first: Any = next(self._it, MISSING)
        self.columns = tuple(self._first) if isinstance(self._first, Mapping) else None

    def read_first_row(self) -> Mapping[str, Any] | None:
        return self._first if isinstance(self._first, Mapping) else None

    def _rows(self) -> Iterator[Any]:
        if self._it is not None:
            it, self._it = self._it, None
            return it if self._first is MISSING else chain([self._first], it)
        return iter(self._records)

    def read_events(self, run: RowChecker) -> Iterator[Event | EventColumns]:
        for row, rec in enumerate(self._rows()):
            pos = run.take_pos()
            if not isinstance(rec, Mapping):
                run.reject(row, None, f"expected a mapping, got {type(rec).__name__}", repr(rec))
                continue
            attrs = dict(rec)
            ev = run.row_event(attrs, pos, row, attrs)
            if ev is not None:
                yield ev
