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
Arrow's streaming reader reads the file (decompressing and parsing on its own threads)
up to the first line it might read otherwise than Python's ``csv`` module; from there
the reader cuts the file into chunks of whole lines and parses each with Arrow,
converting column by column; a chunk with anything unusual (a bad value, a short
line, a blank line, a lone ``\\r``) is re-read line by line with Python's ``csv``
module, which gives the same values and the exact line of each error.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any

import pyarrow as pa

from ..errors import ConfigError
from .chain import ChainSource
from .formats import format_named, infer_format
from .source import EventSource
from .spec import InputSpec, check_spec
from .tables import BATCH_ROWS, ArrowSource, RecordSource, time_sorted
from .textfiles import CsvSource, JsonlSource


def open_events(spec: InputSpec) -> EventSource:
    """The events of a file, read by its format's reader (``spec.format``, or the format
    the file name tells: :mod:`petricep.io.formats`); with ``spec.more_paths``, of every
    file one after the other (:class:`~petricep.io.chain.ChainSource`)."""
    fmt = format_named(spec.format or infer_format(spec.path))
    check_spec(spec, fmt.delimited)
    if not spec.more_paths:
        return fmt.open(spec, str(spec.path))
    parts = []
    for path in (spec.path, *spec.more_paths):
        own = format_named(spec.format or infer_format(path))
        if own.name != fmt.name:
            raise ConfigError(
                f"{path} is {own.name} but {spec.path} is {fmt.name}: the files of one stream have one format"
            )
        parts.append(fmt.open(replace(spec, path=path, more_paths=()), str(path)))
    return ChainSource(spec, parts, same_columns=fmt.name != "jsonl")


def events_from_text(data: bytes, spec: InputSpec) -> EventSource:
    """The events of a CSV or JSON Lines text held in memory (``spec.format``, required;
    a CSV's header line first, where it has one), read exactly as :func:`open_events` reads
    a file holding those bytes, without writing one: Spark's parse stage reads each run of
    a file's lines so. ``spec.path`` only names the text in messages."""
    if spec.format not in ("csv", "jsonl"):
        raise ConfigError(f"text in memory is CSV or JSON Lines, not {spec.format!r}")
    check_spec(spec, spec.format == "csv")
    label = str(spec.path) if spec.path else "<text>"
    if spec.format == "csv":
        return CsvSource(spec, label, data)
    return JsonlSource(spec, label, data)


def _check_library_spec(spec: InputSpec) -> None:
    if spec.format is not None:
        format_named(spec.format)
    check_spec(spec, False)


def events_from_table(table: Any, spec: InputSpec, *, sort_by_time: bool = True) -> EventSource:
    """The events of a ``pyarrow.Table`` / ``RecordBatch`` or ``pandas.DataFrame``.

    Rows are numbered from 0 in errors; ``spec.path`` only names the input in messages.
    A table is not a stream: where its rows are out of time order (``spec.ordered``, no
    slack), they are read sorted by time, rows with equal times in table order
    (:func:`~petricep.io.tables.time_sorted`; the source's ``time_sort`` says so, and a
    run's report); errors still name the table's rows. ``sort_by_time=False``: read the
    rows as they are (a batch of a file or stream, whose order is the input's: Spark).
    """
    _check_library_spec(spec)
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
        except (pa.ArrowException, TypeError, ValueError, OverflowError):  # e.g. an int beyond int64
            records = [{str(k): v for k, v in r.items()} for r in df.to_dict("records")]
            src = RecordSource(spec, label, records)
            src.columns = tuple(str(c) for c in df.columns)
            src.check_columns(None)
            return src
    tbl, sort = time_sorted(table, spec) if spec.ordered and sort_by_time else (table, None)

    def batches() -> Iterator[pa.RecordBatch]:
        return iter(tbl.to_batches(max_chunksize=BATCH_ROWS))

    return ArrowSource(spec, label, tbl.schema, batches, sort)


def events_from_records(records: Iterable[Mapping[str, Any]], spec: InputSpec) -> EventSource:
    """The events of Python mappings (one per event), numbered from 0 in errors.

    A list can be iterated again; a one-shot iterator gives its events once.
    """
    _check_library_spec(spec)
    label = str(spec.path) if spec.path else "<records>"
    return RecordSource(spec, label, records)


__all__ = [
    "EventSource",
    "InputSpec",
    "events_from_records",
    "events_from_table",
    "events_from_text",
    "infer_format",
    "open_events",
]
