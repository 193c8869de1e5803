"""``petricep.match``: patterns over a pandas / Arrow / Polars table or an event file, with
the matches back as a table of the same kind.

Why: a data engineer holding a DataFrame should not need to know about input specs, engines
and match objects to ask "where does this pattern occur?"; the answer should be a table to
join, filter and plot. The options are named as the command line's (``type_field=``,
``time_field=``, ``slack=``, ...), and the run is exactly ``petricep run``'s: the same reader
(:func:`petricep.io.events_from_table`, :func:`petricep.io.open_events`), the same merged net,
the same engine, so the matches are the CLI's, in the CLI's order.

Inputs and what comes back:

* a pandas DataFrame -> a pandas DataFrame (integer columns with nulls as pandas' nullable
  ``Int64``, list columns as Python lists, structs as dicts);
* a ``pyarrow.Table`` / ``RecordBatch`` / ``RecordBatchReader``, or an iterable of tables and
  batches (one schema) -> a ``pyarrow.Table``;
* a Polars DataFrame (or LazyFrame) -> a Polars DataFrame;
* a path (``str`` / ``os.PathLike``: CSV, JSON Lines, Parquet, as ``petricep run`` reads it;
  ``format=``, ``columns=``, ``delimiter=`` as the CLI's) -> a ``pyarrow.Table`` (Arrow is
  what petricep depends on; ``.to_pandas()`` is one call away);
* an iterable of mappings (one per event) -> a ``pyarrow.Table``.

The columns are :mod:`petricep.output.table`'s. ``as_objects=True`` returns the engine's
:class:`~petricep.runtime.engine.Match` objects instead.

Patterns: pattern text, a path (``.pcep``, ``.sql``; a ``pathlib.Path`` or a one-line ``str``
ending in ``.pcep``/``.sql``), a compiled :class:`~petricep.compile.net.Net`, or a list of
texts and paths (merged into one net, as several files on the command line). Text holding
``MATCH_RECOGNIZE`` is SQL (or say ``lang="sql"``). An unnamed pattern in text is named
``pattern`` (in a list of several texts, ``pattern_1``, ``pattern_2``, ... by position).

Errors are the typed errors of :mod:`petricep.errors`. A table has no file and no lines, so
its errors name the row (0-based, as ``df.iloc``; the index label too when the DataFrame's
index is not the default one) and the column: ``DataFrame row 3, column 'ts': error: ...``.
"""

from __future__ import annotations

import inspect
import os
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from petricep.api.notes import no_match_notes, time_unit_note
from petricep.api.runner import Run, check_read_columns
from petricep.compile.net import Net
from petricep.errors import ConfigError, EventError, PatternError, PetricepWarning
from petricep.events import Event
from petricep.io import (
    EventSource,
    InputSpec,
    events_from_records,
    events_from_table,
    infer_format,
    open_events,
)
from petricep.io.timestamps import format_has_date
from petricep.kernel.engine import Chunk
from petricep.lang import ast as A
from petricep.lang.fields import field_requirements
from petricep.lang.parser import parse_file, parse_text
from petricep.lang.sql import parse_sql
from petricep.merge import build_net
from petricep.output.table import Layout, batch_matches, batches_table, bound_events, layout_of, to_table
from petricep.output.times import time_formatter
from petricep.runtime.engine import Match
from petricep.runtime.memory import parse_size

PatternsArg = str | os.PathLike[str] | Net | Sequence[str | os.PathLike[str]]
ColumnCheck = Callable[[Sequence[str], str, int | None], None]  # (columns, the input's name, header row)
Parsed = tuple[tuple[A.PatternFile, str | None], ...]  # pattern files with their text (for carets)


def _read(path: str | os.PathLike[str]) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError:
        return None


def _is_path(p: Any) -> bool:
    if isinstance(p, os.PathLike):
        return True
    return isinstance(p, str) and "\n" not in p and p.strip().lower().endswith((".pcep", ".sql"))


def _parse_one(p: str | os.PathLike[str], name: str, lang: str | None) -> tuple[A.PatternFile, str | None]:
    if _is_path(p):
        if not os.path.exists(p):
            raise PatternError("cannot read pattern file: no such file", str(p))
        return parse_file(Path(p), lang), _read(p)
    if not isinstance(p, str):
        raise ConfigError(f"patterns must be pattern text, a path or a list of them, not {type(p).__name__}")
    sql = lang == "sql" or (lang is None and re.search(r"\bMATCH_RECOGNIZE\b", p, re.IGNORECASE) is not None)
    if sql:
        return parse_sql(p, f"<{name}>", default_name=name), p
    if lang not in (None, "pcep"):
        raise ConfigError(f"unknown pattern language {lang!r} (use pcep, sql)")
    return parse_text(p, f"<{name}>", default_name=name), p


def load(patterns: PatternsArg, lang: str | None = None) -> tuple[Parsed, Net]:
    """Parse ``patterns`` (text, paths, a list of them, or a net) and merge them into one
    net; returns the parsed files (with their text, empty for a net) and the net."""
    if isinstance(patterns, Net):
        return (), patterns
    items: list[Any] = [patterns] if isinstance(patterns, (str, os.PathLike)) else list(patterns)
    if not items:
        raise ConfigError("no patterns given")
    texts = sum(1 for p in items if not _is_path(p))
    files = []
    k = 0
    for p in items:
        if not _is_path(p):
            k += 1
        files.append(_parse_one(p, "pattern" if texts <= 1 else f"pattern_{k}", lang))
    pf = [f for f, _ in files]
    net = build_net(
        [p for f in pf for p in f.patterns],
        True,
        [c for f in pf for c in f.conflicts],
        [q for f in pf for q in f.queries],
    )
    return tuple(files), net


# ----------------------------------------------------------------------------- inputs


@dataclass
class EventInput:
    """An input's events and what the match table needs from it (its kind, its name in
    messages, its time column's Arrow type, a pandas index that is not the default)."""

    source: EventSource
    kind: str  # pandas, arrow, polars, path, records
    label: str
    time_type: pa.DataType | None = None  # the time column's Arrow type, when known
    id_type: pa.DataType | None = None  # the id column's Arrow type, when known
    index: Any = None  # a pandas DataFrame's index, when it is not the default


def _module(x: Any) -> str:
    return type(x).__module__.split(".", 1)[0]


def _arrow_of(events: Iterable[Any]) -> pa.Table | None:
    """An iterable of Arrow tables / record batches as one table (None: not that)."""
    items = list(events)
    if not items or not all(isinstance(x, (pa.Table, pa.RecordBatch)) for x in items):
        return None
    tables = [pa.Table.from_batches([x]) if isinstance(x, pa.RecordBatch) else x for x in items]
    try:
        return pa.concat_tables(tables)
    except pa.ArrowInvalid as e:
        raise ConfigError(f"the Arrow tables / record batches differ in their schema: {e}") from None


def _field_type(schema: pa.Schema, name: str | None) -> pa.DataType | None:
    if name is None or name not in schema.names:
        return None
    return schema.field(name).type


def _pandas_input(df: Any, spec: InputSpec, check: ColumnCheck) -> EventInput:
    import pandas as pd

    check([str(c) for c in df.columns], spec.path, None)
    src = events_from_table(df, spec)
    default = isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1
    return EventInput(
        src,
        "pandas",
        "DataFrame",
        _column_type(df, spec.time_field),
        _column_type(df, spec.id_field),
        None if default else df.index,
    )


def _column_type(df: Any, name: str | None) -> pa.DataType | None:
    """The Arrow type of a DataFrame column (None: no such column, or none fits)."""
    if name is None or name not in df.columns:
        return None
    try:
        return pa.array(df[name].iloc[:0]).type
    except (pa.ArrowException, TypeError, ValueError):
        return None


def _kind(events: Any) -> tuple[str, str]:
    """(kind, label) of an input: pandas, polars, arrow, path or records."""
    if isinstance(events, (str, os.PathLike)):
        return "path", str(events)
    mod, name = _module(events), type(events).__name__
    if mod == "pandas" and name == "DataFrame":
        return "pandas", "DataFrame"
    if mod == "polars" and name in ("DataFrame", "LazyFrame"):
        return "polars", "Polars DataFrame"
    if isinstance(events, (pa.Table, pa.RecordBatch, pa.RecordBatchReader)):
        return "arrow", "Arrow table"
    if isinstance(events, Iterable) and not isinstance(events, (bytes, Mapping)):
        return "records", "records"
    raise ConfigError(
        f"events must be a pandas or Polars DataFrame, an Arrow table, record batches or a path, not {name}"
    )


def _no_check(columns: Sequence[str], label: str, row: int | None) -> None:
    return None


def open_input(
    events: Any,
    spec: InputSpec,
    check: ColumnCheck = _no_check,
) -> EventInput:
    """The events of any input :func:`match` takes, with what the output needs to know.
    ``spec.required`` (event type -> fields every event must hold one value in) is checked
    for every reader, row by row where the input has no schema (JSON Lines, records); where it
    has one, ``check`` sees the column names first (so that a pattern reading a missing
    column is reported at the pattern, not as a missing column of the input)."""
    kind, label = _kind(events)
    if kind != "path" and (spec.format is not None or spec.columns is not None or spec.delimiter is not None):
        raise ConfigError("format, columns and delimiter apply to event files only")
    spec = replace(spec, path=label)
    try:
        if kind == "path":
            spec = replace(spec, format=spec.format or infer_format(label))
            if spec.format != "jsonl":  # (JSON Lines has no header: its rows are checked one by one)
                cols = open_events(replace(spec, numeric={}, required={})).columns
                if cols is not None:
                    check(cols, label, 1 if spec.format == "csv" and spec.columns is None else None)
            return EventInput(open_events(spec), kind, label)
        if kind == "pandas":
            return _pandas_input(events, spec, check)
        if kind == "polars":
            table = (events.collect() if type(events).__name__ == "LazyFrame" else events).to_arrow()
        elif isinstance(events, pa.RecordBatchReader):
            table = events.read_all()
        elif isinstance(events, pa.RecordBatch):
            table = pa.Table.from_batches([events])
        elif isinstance(events, pa.Table):
            table = events
        else:
            items = list(events)
            table = _arrow_of(items)
            if table is None:
                return EventInput(events_from_records(items, spec), kind, label)
            kind = "arrow"
            spec = replace(spec, path="Arrow table")
        check(table.schema.names, spec.path, None)
        return EventInput(
            events_from_table(table, spec),
            kind,
            spec.path,
            _field_type(table.schema, spec.time_field),
            _field_type(table.schema, spec.id_field),
        )
    except EventError as err:
        raise _relabel(err, kind, spec.path) from None


def _where(name: str, index: Any, row: int | None, field: str | None) -> str:
    text = name
    if row is not None:
        text += f" row {row}"
        if index is not None and 0 <= row < len(index):
            label = index[row]
            label = label.item() if callable(getattr(label, "item", None)) else label  # numpy scalars
            text += f" (index {label!r})"
    if field is not None:
        text += f"{',' if row is not None else ''} column {field!r}"
    return text


def _relabel(err: EventError, kind: str, name: str, index: Any = None) -> EventError:
    """A reader's error about a table, naming row and column as a table user counts them
    (a file's errors already name its line)."""
    if kind == "path":
        return err
    new = type(err)(err.message, name, err.row, err.field)
    new.args = (f"{_where(name, index, err.row, err.field)}: error: {err.message}",)
    return new


def schema_check(files: Parsed) -> ColumnCheck:
    """Every field a pattern reads must be a column: a missing one is the input's error,
    naming the pattern that reads it with a caret (:func:`petricep.api.runner.check_read_columns`,
    as ``petricep run`` reports it); a composite type's missing field is the pattern's."""

    def check(columns: Sequence[str], label: str, row: int | None) -> None:
        check_read_columns(files, columns, label, row)

    return check


# ----------------------------------------------------------------------------- options


def duration(value: float | int | str | None, option: str = "slack") -> float | int | None:
    """A number of timestamp units, or text with a unit (``"500ms"``, ``"2s"``: seconds)."""
    if value is None or isinstance(value, bool):
        if isinstance(value, bool):
            raise ConfigError(f"{option}: expected a number >= 0 or a duration like '2s', got {value!r}")
        return None
    if isinstance(value, (int, float)):
        if value < 0:
            raise ConfigError(f"{option}: expected a number >= 0, got {value!r}")
        return value
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?|\.\d+)\s*([A-Za-z]*)\s*", str(value))
    unit = m.group(2).lower() if m else ""
    if m is None or (unit and unit not in A.DURATION_UNITS):
        raise ConfigError(f"{option}: expected a number >= 0, optionally with a unit (ms, s, min, h, d), got {value!r}")
    v = float(m.group(1)) * (A.DURATION_UNITS[unit] if unit else 1)
    return int(v) if v.is_integer() else v


def _start_end_type(src: EventSource, time_type: pa.DataType | None, time_format: str | None) -> pa.DataType | None:
    """start/end as timestamps when the input's times are date-times with a date."""
    if src.spec.time_field is None or src.time_kind != "datetime":
        return None
    if time_format is not None and not format_has_date(time_format):
        return None
    if time_type is not None and pa.types.is_timestamp(time_type):
        return time_type
    return pa.timestamp("us")


# ----------------------------------------------------------------------------- the run


@dataclass
class FrameRun:
    """One :func:`match` run's result before it becomes a table: the matches in emission
    order, the net, the input (for its kind and time format) and the run's accounting."""

    chunks: list[Chunk]  # the run's match chunks (Run.match_batches): record batches, Match lists
    net: Net
    input: EventInput
    layout: Layout
    report: dict[str, Any]
    lookup: dict[Any, Event] | None = None  # event id -> event, for SQL matches' events
    sample: Any = None  # the time column's value in the first event read
    notes: list[str] = field(default_factory=list)  # what the run says beside its matches (petricep.api.notes)
    _objects: list[Match] | None = None

    @property
    def matches(self) -> list[Match]:
        """The matches as :class:`Match` objects (made from the kernel's batches on first use)."""
        if self._objects is None:
            self._objects = [m for c in self.chunks for m in (c if isinstance(c, list) else batch_matches(c, self.net))]
        return self._objects

    def table(self, with_events: bool = False) -> pa.Table:
        """The match table: straight from the kernel's record batches where they give it
        exactly (:func:`~petricep.output.table.batches_table`; no object per match), else
        from the matches."""
        batches = [c for c in self.chunks if not isinstance(c, list)]
        if not with_events and len(batches) == len(self.chunks):
            table = batches_table(batches, self.layout, self.input.id_type) if batches else None
            if table is not None:
                return table
        return to_table(self.matches, self.layout, with_events, self.events_of, self.input.id_type)

    def events_of(self, m: Match) -> dict[str, Any]:
        """A match's bound events (see :func:`petricep.output.table.bound_events`)."""
        return bound_events(m, self.lookup)

    def times(self) -> Callable[[Any], Any]:
        """The formatter printing times as the input wrote them (for JSON Lines)."""
        spec = self.input.source.spec
        return time_formatter(self.sample, spec.time_format) if spec.time_field else (lambda ts: ts)


def _event_where(inp: EventInput, e: Event) -> str:
    """How an evaluation error names the failing event: a file's position and id, a table's row."""
    if inp.kind == "path":
        return f"{inp.label}: event at position {e.pos} (id {e.id!r})"
    return _where(inp.label, inp.index, inp.source.input_row(e.pos), None)


def run_matches(
    events: Any,
    patterns: PatternsArg,
    *,
    type_field: str | None = None,
    type: str | None = None,  # noqa: A002 - the CLI's --type
    time_field: str | None = None,
    id_field: str | None = None,
    time_unit: str | None = None,
    time_format: str | None = None,
    format: str | None = None,  # noqa: A002 - the CLI's --format
    columns: Sequence[str] | None = None,
    delimiter: str | None = None,
    slack: float | int | str | None = None,
    tie: str = "arrival",
    on_error: str = "fail",
    rejects: str | None = None,
    on_late: Callable[[Event, Any], None] | None = None,
    lang: str | None = None,
    with_events: bool = False,
    prefilter: bool = True,
    engine: str = "kernel",
    bindings: bool = False,
    max_memory: int | str | None = None,
) -> FrameRun:
    """Run patterns over events (the options of :func:`match`) and keep what a table needs.
    ``bindings``: the caller reads the matches' bound events (``Match.bindings()``, not an
    option of :func:`match`: ``as_objects=True`` asks for it), which keeps the Python engine."""
    files, net = load(patterns, lang)
    if net.history:
        raise ConfigError("patterns with ARCHIVED variables need an event archive: use petricep run --archive")
    if tie not in ("arrival", "strict", "either"):
        raise ConfigError(f"tie must be 'arrival', 'strict' or 'either', not {tie!r}")
    gap = duration(slack)
    # every field a pattern reads must hold one value, in every reader (docs/INPUT.md), as
    # the command line's spec says (petricep.cli.inputs.input_spec); a compiled net's
    # patterns are its sources
    pats = [p for f, _ in files for p in f.patterns] if files else [p.source for p in net.patterns]
    required, numeric = field_requirements(pats)
    spec = InputSpec(
        path="",
        format=format,
        type_field=type_field,
        type_const=type,
        time_field=time_field,
        id_field=id_field,
        columns=tuple(columns) if columns is not None else None,
        delimiter=delimiter,
        time_format=time_format,
        time_unit=time_unit,
        on_error=on_error,
        rejects_path=rejects,
        required=required,
        numeric=numeric,
        ordered=gap is None,
    )
    inp = open_input(events, spec, schema_check(files))
    try:
        start_end = _start_end_type(inp.source, inp.time_type, time_format)
    except EventError as err:
        raise _relabel(err, inp.kind, inp.label, inp.index) from None
    lookup: dict[Any, Event] | None = {} if with_events and net.rows else None
    run = FrameRun([], net, inp, layout_of(net, start_end), {}, lookup)
    runner = Run(
        net,
        spec,
        source=inp.source,
        tie=tie,
        slack=gap,
        on_late=on_late,
        prefilter=prefilter and not with_events,
        engine=engine,
        bindings=with_events or bindings,
        locate=lambda e: _event_where(inp, e),
        max_memory=parse_size(max_memory) if isinstance(max_memory, str) else max_memory,
    )
    runner.events_by_id = lookup
    _collect(run, runner, inp, spec.time_field)
    queries = [q for f, _ in files for q in f.queries] if files else [r.source for r in net.rows]
    unit = time_unit_note(runner, pats, queries, "time_unit='{}'")
    warned, hints = no_match_notes(runner, run.report, tie)
    run.notes = [w.removeprefix("warning: ") for w in [*([unit] if unit else []), *warned]]
    run.notes += [h for lines in hints.values() for h in lines]
    return run


def _collect(run: FrameRun, runner: Run, inp: Any, time_field: str | None) -> None:
    """Fire the run: its matches, its report, and the first row's time (whose form the
    table's start and end columns take)."""
    try:
        run.chunks = list(runner.match_batches())
    except EventError as err:
        raise _relabel(err, inp.kind, inp.label, inp.index) from None
    if time_field is not None:
        first = inp.source.first_row()
        run.sample = first.get(time_field) if first else None
    run.report = runner.report()


def as_kind(table: pa.Table, kind: str) -> Any:
    """A match table in the input's kind: pandas, Polars, or Arrow (paths, records, Arrow)."""
    if kind == "pandas":
        return to_pandas(table)
    if kind == "polars":
        import polars as pl

        return pl.from_arrow(table)
    return table


def to_pandas(table: pa.Table) -> Any:
    """A match table as a pandas DataFrame: integers with nulls as nullable ``Int64`` (ids
    never turn into floats), list columns as Python lists, structs as dicts."""
    import pandas as pd

    df = table.to_pandas()
    for name in table.column_names:
        col = table.column(name)
        t = col.type
        if pa.types.is_integer(t) and col.null_count:
            df[name] = pd.array(col.to_pylist(), dtype="Int64")
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            df[name] = pd.Series(col.to_pylist(), dtype=object, index=df.index)
    return df


def match(events: Any, patterns: PatternsArg, *, as_objects: bool = False, **options: Any) -> Any:
    """The matches of ``patterns`` over ``events``, one row per match, in the input's kind.

    ``events``: a pandas or Polars DataFrame, an Arrow table / record batch(es), a path or
    an iterable of mappings; ``patterns``: text, a path, a net or a list of texts and paths.
    Options, named as ``petricep run``'s: ``type_field=`` | ``type=``, ``time_field=``,
    ``id_field=``, ``time_unit=``, ``time_format=``, ``slack=`` (a number or ``"500ms"``),
    ``tie=``, ``on_error=`` (``"skip"`` counts bad rows, ``rejects=`` writes them),
    ``on_late=``, ``lang=``, for paths ``format=``, ``columns=``, ``delimiter=``;
    ``with_events=True`` adds each bound event's fields (``events.<var>`` columns);
    ``as_objects=True`` returns the engine's :class:`Match` objects (a list);
    ``prefilter=False`` turns every row into an event (for comparison);
    ``max_memory=`` (bytes, or a size such as ``"1GB"``): the memory budget, as
    ``--max-memory`` (:mod:`petricep.runtime.memory`: over it, StateLimitError);
    ``engine="kernel"`` (the default) runs on the compiled kernel where it covers the
    patterns, as ``petricep run`` does, else on the Python engine (the kernel's match objects
    carry no bound events, so ``with_events=True`` and ``as_objects=True``, whose
    ``Match.bindings()`` reads them, keep the Python engine); ``engine="python"`` runs the
    reference engine.
    See :mod:`petricep.api.frames` and :mod:`petricep.output.table` for the columns.
    """
    known = [n for n in inspect.signature(run_matches).parameters if n not in ("events", "patterns", "bindings")]
    unknown = [k for k in options if k not in known]
    if unknown:
        raise ConfigError(f"unknown option {unknown[0]!r} (options: as_objects, {', '.join(known)})")
    run = run_matches(events, patterns, bindings=as_objects, **options)
    for note in run.notes:
        warnings.warn(note, PetricepWarning, stacklevel=2)
    if as_objects:
        return run.matches
    return as_kind(run.table(bool(options.get("with_events"))), run.input.kind)


__all__ = ["FrameRun", "as_kind", "duration", "load", "match", "open_input", "run_matches", "to_pandas"]
