"""Parquet files, Arrow / pandas tables and Python records."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

import pyarrow as pa

from ..errors import ConfigError, EventError
from ..events import Event
from .source import _MISSING, EventSource, InputSpec, _converted, _duplicate, _Run
from .values import shared_pylist

_BATCH_ROWS = 65_536


def _arrow_values(arr: pa.Array) -> tuple[Any, bool]:
    """Values of an Arrow column (a numpy array for numbers without nulls, else Python
    values) and whether all are numbers (no nulls)."""
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    numeric = pa.types.is_integer(t) or pa.types.is_floating(t)
    if numeric and arr.null_count == 0:
        return arr.to_numpy(), True  # numpy: rows become Python numbers once the row filter has chosen them
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
            cols, has_nulls, all_numbers = _converted(batch.columns, run.needed(names), _arrow_values)
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
