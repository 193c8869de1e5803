"""Parquet files, Arrow / pandas tables and Python records."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ConfigError, EventError
from ..events import Event, EventColumns
from ..runtime.arrow import number_view, scalar
from .rows import MISSING, RowChecker, converted_columns
from .source import EventSource
from .spec import InputSpec, duplicate_name
from .streams import is_stream, replay_of
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


class ArrowSource(EventSource):
    def __init__(self, spec: InputSpec, label: str, schema: pa.Schema, batches: Any) -> None:
        super().__init__(spec, label)
        self._batches = batches
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
                    ev = run.row_event(rec, pos, row0 + k, rec)
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
