"""Matches as a table (Arrow) and as files: JSON Lines, Parquet or CSV, chosen by extension.

Why a table: a pandas or Arrow user checks matches by joining them back to the data and by
plotting them over time; nested ``ids`` dicts and epoch numbers stand in the way. So a
:class:`Layout`, read from the net before any match exists, fixes the columns:

* ``pattern`` (text); ``row`` for SQL ``ALL ROWS PER MATCH`` queries (else absent);
* one column per pattern variable, named after it, holding its event id. The columns are the
  union of every pattern's variables in order of first appearance: two patterns that use the
  same variable name share its column, and a row holds null where its pattern has no such
  variable. A variable that is a list (Kleene ``T+ v[]``, SQL ``DOWN+``) in any pattern is a
  list column; a pattern binding the same name to one event gives a one-element list there.
  Ids are in the input id column's Arrow type when it is known and every id fits it, else
  inferred (int64 for row positions; text for composite events, whose ids are
  ``pattern[ids]``); a column mixing kinds holds the ids as text;
* ``start`` / ``end``: timestamps when the input's times were date-times (ISO text, a
  ``time_format`` with a date, Arrow/pandas timestamps; the input column's own timestamp type
  when it had one, else naive ``timestamp[us]`` in UTC), numbers otherwise (a ``time_format``
  without a date gives seconds since midnight);
* ``timeout`` (the ON TIMEOUT event type; null for a completed match) and ``deadline`` (when
  its window closed, typed as ``start``), present when some pattern has ``ON TIMEOUT``;
* one column per RETURN / ON TIMEOUT / MEASURES field (a pattern's RETURN and ON TIMEOUT
  fields of one name share it; so do the SQL queries whose ``SELECT *`` returns the same
  PARTITION BY column, the input's values), named after the field, unless another
  pattern has a field of that name or the name is taken by a column above: then every such
  field is ``pattern.field`` (a collision is decided on the net, so a column's name does not
  depend on which matches a run found). Values keep their inferred Arrow type; a column
  mixing types holds text;
* with ``with_events``: ``events.v`` per variable, the bound event's fields (its row as read)
  as a struct, a list of structs for a list variable — like its ids column, a one-element
  list where a pattern binds the name to one event (JSON text if the rows of one variable
  disagree on a field's type).

Every column has one type, whichever patterns matched: a name's ids are lists in every row
once it is a list anywhere, a column of ids or values that cannot share an Arrow type is text
in every row — never a number in one row and a list in the next. CSV writes list and struct
columns as JSON text, so such a column's cells are all JSON lists.

JSON Lines is what ``petricep run`` writes (:func:`petricep.output.jsonl.match_json`, byte for
byte) unless asked for more: ``with_events`` adds ``"events": {"a": {...}, "b": [{...}]}``
(each bound event's fields, a list for a list variable) after the other keys, and a time
formatter (:func:`~petricep.output.times.time_formatter`) prints ``start``, ``end`` and a
timeout's ``deadline`` in the input's own time format.

The kernel's record batches (:mod:`petricep.kernel.batches`) become the same table without a
:class:`Match` per match (:func:`batches_table`), or None where the batches cannot give it
exactly (start/end as timestamps, an id or field column with values of different types in
different batches): the caller then makes the table from the matches (:func:`batch_matches`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import IO, Any

import pyarrow as pa
import pyarrow.compute as pc

from petricep.compile.net import Net
from petricep.errors import ConfigError, OutputError
from petricep.events import Event
from petricep.kernel.tableplan import to_matches
from petricep.output.files import OutputFile, OutputPath, write_binary
from petricep.output.jsonl import match_json
from petricep.output.times import TimeFormatter, micros
from petricep.runtime.arrow import scalar
from petricep.runtime.engine import Match

EventsOf = Callable[[Match], Mapping[str, Any]]

OUTPUT_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}


@dataclass(frozen=True)
class Layout:
    """The columns of a net's match table (see the module docstring for the rules)."""

    variables: tuple[str, ...]
    lists: frozenset[str]  # variables that are lists in some pattern
    fields: tuple[tuple[str, str, str], ...]  # (column, pattern, field), in column order
    timeouts: bool
    rows: bool
    time_type: pa.DataType | None = None  # start/end as this timestamp type; None: numbers
    # a repeated group's steps in order: its column's structs hold them so (a step an
    # iteration left out, C? c, null), whichever iteration comes first
    steps: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column name, in order (without ``events.*``)."""
        fixed = ("pattern",) + (("row",) if self.rows else ()) + self.variables + ("start", "end")
        fields = tuple(dict.fromkeys(c for c, _, _ in self.fields))  # (a shared PARTITION BY column once)
        return fixed + (("timeout", "deadline") if self.timeouts else ()) + fields


def layout_of(net: Net, time_type: pa.DataType | None = None, extra: Mapping[str, Sequence[str]] | None = None) -> Layout:
    """The layout of ``net``'s matches; ``extra``: pattern -> attribute names seen in
    matches but not declared by the net (they get columns by the same rule)."""
    variables: list[str] = []
    lists: set[str] = set()
    declared: dict[str, list[str]] = {}
    keys: dict[str, set[str]] = {}  # a SQL PARTITION BY column's name -> the queries returning it
    for p in net.patterns:
        for v in p.vars:
            name = v.group or v.name  # a repeated group's steps: one column of its bindings
            if name not in variables:
                variables.append(name)
            if v.kleene:
                lists.add(name)
        names = [f.name for r in (p.returns, p.timeout) if r is not None for f in r.fields]
        declared[p.name] = list(dict.fromkeys(names))
    for rn in net.rows:
        for name in rn.vars:
            if name not in variables:
                variables.append(name)
        lists.update(rn.multi)
        declared[rn.name] = list(rn.select)
        measures = {m.name for m in rn.measures}
        for c in rn.select:
            if c in rn.partition and c not in measures:
                keys.setdefault(c, set()).add(rn.name)
    for pattern, more in (extra or {}).items():
        have = declared.setdefault(pattern, [])
        have.extend(n for n in more if n not in have)
    timeouts = any(p.timeout is not None for p in net.patterns)
    rows = any(rn.all_rows for rn in net.rows)
    taken = {"pattern", "start", "end", *variables}
    taken.update(("row",) if rows else ())
    taken.update(("timeout", "deadline") if timeouts else ())
    owners: dict[str, int] = {}
    for names in declared.values():
        for n in names:
            owners[n] = owners.get(n, 0) + 1
    # an input column several queries return as their PARTITION BY column holds the same
    # values in each: one column for all of them, as a variable's ids
    shared = {n for n, qs in keys.items() if owners[n] == len(qs)}
    fields = tuple(
        (n if (owners[n] == 1 or n in shared) and n not in taken else f"{pattern}.{n}", pattern, n)
        for pattern, names in declared.items()
        for n in names
    )
    steps: dict[str, list[str]] = {}
    for p in net.patterns:
        for v in p.vars:
            if v.group is not None and v.name not in steps.setdefault(v.group, []):
                steps[v.group].append(v.name)
    return Layout(tuple(variables), frozenset(lists), fields, timeouts, rows, time_type, tuple((g, tuple(m)) for g, m in steps.items()))


# ----------------------------------------------------------------------------- values


def plain(v: Any) -> Any:
    """A value as JSON shows it: numbers, text, lists and objects; date-times as ISO text;
    numpy scalars as numbers; anything else as its text."""
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (datetime, date)):
        return v.isoformat()
    item = getattr(v, "item", None)  # numpy scalars
    if callable(item):
        return plain(item())
    return str(v)


def _text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(plain(v), ensure_ascii=False)


def _column(values: list[Any], default: pa.DataType) -> pa.Array:
    """An Arrow column of ``values`` (inferred type; ``default`` when all are null; text when
    the values have no common type)."""
    try:
        arr = pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return pa.array([None if v is None else _text(v) for v in values], pa.string())
    if pa.types.is_null(arr.type) and not pa.types.is_null(default):
        return pa.array(values, default)
    return arr


def _list_column(values: list[Any], default: pa.DataType) -> pa.Array:
    try:
        arr = pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return pa.array([None if v is None else [_text(x) for x in v] for v in values], pa.list_(pa.string()))
    if not pa.types.is_list(arr.type) or pa.types.is_null(arr.type.value_type):
        return pa.array(values, pa.list_(default))
    return arr


def _ids_column(values: list[Any], id_type: pa.DataType | None, is_list: bool) -> pa.Array:
    """Event ids in the input id column's type when they all fit it (composite events' ids
    are text), else by inference (int64 for positions)."""
    if id_type is not None and not pa.types.is_null(id_type):
        try:
            return pa.array(values, pa.list_(id_type) if is_list else id_type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            pass
    return _list_column(values, pa.int64()) if is_list else _column(values, pa.int64())


def _times(values: list[Any], time_type: pa.DataType | None) -> pa.Array:
    if time_type is None:
        return _column(values, pa.int64())
    tz = getattr(time_type, "tz", None)
    arr = pa.array([micros(v) for v in values], pa.timestamp("us", tz=tz))
    return arr.cast(time_type) if arr.type != time_type else arr


# ----------------------------------------------------------------------------- tables


def bound_events(m: Match, lookup: Mapping[Any, Event] | None = None) -> dict[str, Any]:
    """Variable -> bound event (a list for a list variable), in the order of ``m.ids``.

    Pattern matches carry their events; a SQL query's match carries only ids, which
    ``lookup`` (event id -> event) resolves."""
    found = m.bindings()
    if found or lookup is None:
        return {v: found[v] for v in m.ids if v in found}
    out: dict[str, Any] = {}
    for v, ids in m.ids.items():
        out[v] = [lookup.get(i) for i in ids] if isinstance(ids, list) else lookup.get(ids)
    return out


def _fields_of(e: Any) -> dict[str, Any] | None:
    return None if e is None else dict(e.attrs)


def _event_values(m: Match, events_of: EventsOf) -> dict[str, Any]:
    return {
        v: [_fields_of(x) for x in e] if isinstance(e, list) else _fields_of(e) for v, e in events_of(m).items()
    }


def _extra_fields(matches: Sequence[Match], layout: Layout) -> dict[str, list[str]]:
    known: dict[str, set[str]] = {}
    for _, pattern, name in layout.fields:
        known.setdefault(pattern, set()).add(name)
    extra: dict[str, list[str]] = {}
    for m in matches:
        have = known.setdefault(m.pattern, set())
        for k in m.attrs:
            if k not in have:
                have.add(k)
                extra.setdefault(m.pattern, []).append(k)
    return extra


def to_table(
    matches: Sequence[Match],
    net: Net | Layout,
    with_events: bool = False,
    events_of: EventsOf | None = None,
    id_type: pa.DataType | None = None,
) -> pa.Table:
    """Matches as an Arrow table, one row per match in the order given (see the module
    docstring for the columns). ``net``: the net the matches came from, or its layout;
    ``events_of``: a match's bound events (default :func:`bound_events`); ``id_type``: the
    input id column's Arrow type (default: inferred from the ids, int64 when there are none)."""
    layout = net if isinstance(net, Layout) else layout_of(net)
    extra = _extra_fields(matches, layout)
    if extra:
        layout = _with_extra(layout, extra, net)
    cols: dict[str, pa.Array] = {"pattern": pa.array([m.pattern for m in matches], pa.string())}
    if layout.rows:
        cols["row"] = _ids_column([getattr(m, "row", None) for m in matches], id_type, False)
    ids = [m.ids for m in matches]
    steps = dict(layout.steps)
    for v in layout.variables:
        if v in steps:  # a group's iterations, each with its steps in order
            vals = [None if (x := d.get(v)) is None else [{m: it.get(m) for m in steps[v]} for it in x] for d in ids]
            cols[v] = _ids_column(vals, id_type, True)
        elif v in layout.lists:
            vals = [None if (x := d.get(v)) is None else x if isinstance(x, list) else [x] for d in ids]
            cols[v] = _ids_column(vals, id_type, True)
        else:
            cols[v] = _ids_column([d.get(v) for d in ids], id_type, False)
    cols["start"] = _times([m.start for m in matches], layout.time_type)
    cols["end"] = _times([m.end for m in matches], layout.time_type)
    if layout.timeouts:
        cols["timeout"] = pa.array([m.timeout[0] if m.timeout else None for m in matches], pa.string())
        cols["deadline"] = _times([m.timeout[1] if m.timeout else None for m in matches], layout.time_type)
    by_column: dict[str, dict[str, str]] = {}  # column -> pattern -> its field there
    for column, pattern, name in layout.fields:
        by_column.setdefault(column, {})[pattern] = name
    for column, mine in by_column.items():
        cols[column] = _column([m.attrs.get(mine[m.pattern]) if m.pattern in mine else None for m in matches], pa.null())
    if with_events:
        got = [_event_values(m, events_of or bound_events) for m in matches]
        for v in layout.variables:
            vals = [g.get(v) for g in got]
            if v in layout.lists:  # as its ids: a pattern's single event is a one-element list
                vals = [x if x is None or isinstance(x, list) else [x] for x in vals]
            cols[f"events.{v}"] = _column(vals, pa.null())
    return pa.table(cols)


def _with_extra(layout: Layout, extra: Mapping[str, Sequence[str]], net: Net | Layout) -> Layout:
    if isinstance(net, Net):
        return layout_of(net, layout.time_type, extra)
    fields = list(layout.fields)
    taken = set(layout.columns)
    for pattern, names in extra.items():
        for n in names:
            fields.append((n if n not in taken else f"{pattern}.{n}", pattern, n))
            taken.add(fields[-1][0])
    return Layout(layout.variables, layout.lists, tuple(fields), layout.timeouts, layout.rows, layout.time_type, layout.steps)


# ----------------------------------------------------------------------------- files


def match_record(
    m: Match, with_events: bool = False, times: TimeFormatter | None = None, events_of: EventsOf | None = None
) -> dict[str, Any]:
    """The JSON object of a match: ``Match.to_dict()``, times formatted, events added."""
    d = m.to_dict()
    if times is not None:
        d["start"], d["end"] = times(d["start"]), times(d["end"])
        if "timeout" in d:
            d["timeout"]["deadline"] = times(d["timeout"]["deadline"])
    if with_events:
        d["events"] = _event_values(m, events_of or bound_events)
    return d


def match_line(
    m: Match, with_events: bool = False, times: TimeFormatter | None = None, events_of: EventsOf | None = None
) -> str:
    """One JSON Lines record (no newline): exactly ``petricep run``'s line when neither
    events nor a time formatter are asked for."""
    if not with_events and times is None:
        return match_json(m)
    return json.dumps(plain(match_record(m, with_events, times, events_of)), ensure_ascii=False, separators=(", ", ": "))


def output_format(path: str | os.PathLike[str]) -> str:
    """``jsonl`` / ``parquet`` / ``csv`` from an output file name."""
    ext = os.path.splitext(str(path))[1].lower()
    fmt = OUTPUT_FORMATS.get(ext)
    if fmt is None:
        raise ConfigError(
            f"cannot tell the match file format from {str(path)!r}: end it in .jsonl, .parquet or .csv"
        )
    return fmt


def csv_ready(table: pa.Table) -> pa.Table:
    """The table with list and struct columns as JSON text (CSV holds flat values only)."""
    cols = []
    for name in table.column_names:
        col = table.column(name)
        t = col.type
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_struct(t):
            col = pa.array([None if v is None else _text(v) for v in col.to_pylist()], pa.string())
        cols.append(col)
    return pa.table(cols, names=table.column_names)


def parquet_ready(table: pa.Table) -> pa.Table:
    """The table with each column Parquet cannot hold as JSON text: one whose type holds a
    struct without fields (an event's empty JSON object copied out by ``--with-events``), as
    CSV holds every nested column (:func:`csv_ready`)."""
    if not any(_empty_struct(t) for t in table.schema.types):
        return table
    cols = [
        pa.array([None if v is None else _text(v) for v in col.to_pylist()], pa.string()) if _empty_struct(col.type) else col
        for col in table.columns
    ]
    return pa.table(cols, names=table.column_names)


def _empty_struct(t: pa.DataType) -> bool:
    if pa.types.is_struct(t):
        return t.num_fields == 0 or any(_empty_struct(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _empty_struct(t.value_type)
    if pa.types.is_map(t):
        return _empty_struct(t.key_type) or _empty_struct(t.item_type)
    return False


def write_table(table: pa.Table, path: str | os.PathLike[str]) -> None:
    """A match table to ``.parquet`` or ``.csv`` (JSON Lines: one object per row), replaced
    as a whole (:class:`~petricep.output.files.OutputPath`): a failed write leaves the old file."""
    fmt = output_format(path)
    if fmt != "jsonl":
        write_table_to(table, fmt, OutputPath(str(path)))
        return
    with OutputFile(str(path)) as out:
        for row in table.to_pylist():
            out.write(json.dumps(plain(row), ensure_ascii=False, separators=(", ", ": ")) + "\n")
        out.commit()


def write_table_to(table: pa.Table, fmt: str, target: OutputPath) -> None:
    """A match table as Parquet or CSV into ``target``, committed. pyarrow writes into a file
    opened by :func:`~petricep.output.files.write_binary`, never into a path it could delete."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        write_binary(target, lambda fh: pq.write_table(parquet_ready(table), fh))
    else:
        import pyarrow.csv as pcsv

        write_binary(target, lambda fh: pcsv.write_csv(csv_ready(table), fh))


class MatchWriter:
    """Writes matches as they come: JSON Lines line by line (flushed per match when asked);
    Parquet and CSV collect the matches and write the table on :meth:`close`.

    ``out``: a file name (format by extension) or an open text stream (JSON Lines).
    ``with_events`` needs the events' rows whole: an input read with a row filter that
    leaves unread columns out (``petricep.runtime.prefilter``) shows only the columns read.
    """

    def __init__(
        self,
        out: str | os.PathLike[str] | IO[str],
        net: Net | Layout,
        with_events: bool = False,
        times: TimeFormatter | None = None,
        events_of: EventsOf | None = None,
        flush: bool = False,
    ) -> None:
        self.net = net
        self.with_events = with_events
        self.times = times
        self.events_of = events_of
        self.flush_each = flush
        self.count = 0
        self._kept: list[Match] = []
        self._path: str | None = None
        self._own = False
        if isinstance(out, (str, os.PathLike)):
            self.format = output_format(out)
            self._path = str(out)
            if self.format == "jsonl":
                try:
                    self._out: IO[str] | None = open(out, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()
                except OSError as exc:
                    raise OutputError(f"cannot write {out}: {exc.strerror}") from None
                self._own = True
            else:
                self._out = None
        else:
            self.format = "jsonl"
            self._out = out

    def write(self, m: Match) -> None:
        self.count += 1
        if self._out is None:
            self._kept.append(m)
            return
        self._out.write(match_line(m, self.with_events, self.times, self.events_of))
        self._out.write("\n")
        if self.flush_each:
            self._out.flush()

    def write_all(self, matches: Iterable[Match]) -> None:
        for m in matches:
            self.write(m)

    def close(self) -> None:
        if self._out is not None:
            if self._own:
                self._out.close()
            else:
                self._out.flush()
            self._out = None
            return
        if self._path is not None and self.format != "jsonl":
            table = to_table(self._kept, self.net, self.with_events, self.events_of)
            self._kept = []
            write_table(table, self._path)
            self._path = None

    def __enter__(self) -> MatchWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_matches(
    matches: Iterable[Match],
    path: str | os.PathLike[str],
    net: Net | Layout,
    with_events: bool = False,
    times: TimeFormatter | None = None,
    events_of: EventsOf | None = None,
) -> int:
    """Write matches to ``path`` (``.jsonl``, ``.parquet`` or ``.csv``); returns how many."""
    with MatchWriter(path, net, with_events, times, events_of) as w:
        w.write_all(matches)
        return w.count


# ----------------------------------------------------------------------------- from record batches


def _text_scalar(s: str) -> pa.Scalar:
    return scalar(s, pa.string())


def _null(t: pa.DataType) -> pa.Scalar:
    return pa.nulls(1, t)[0]


def batch_matches(batch: pa.RecordBatch, net: Net) -> list[Match]:
    """The batch's matches as :class:`Match` objects (what the batch holds, exactly)."""
    return to_matches(pa.Table.from_batches([batch]), net)


def batches_table(batches: Sequence[pa.RecordBatch], layout: Layout, id_type: pa.DataType | None = None) -> pa.Table | None:
    """The match table of the batches' matches, as :func:`petricep.output.table.to_table`
    makes it for ``layout`` and ``id_type``; None where the batches cannot give exactly that
    (see the module docstring)."""
    shared = len({c for c, _, _ in layout.fields}) < len(layout.fields)  # a column of several queries
    if not batches or layout.rows or shared:
        return None
    tables = [_layout_columns(b, layout) for b in batches]
    try:
        table = pa.concat_tables(tables, promote_options="default")
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    defaults = {v: pa.list_(pa.int64()) if v in layout.lists else pa.int64() for v in layout.variables}
    defaults.update(deadline=pa.int64(), timeout=pa.string())
    cols = []
    for name in table.column_names:
        col = table.column(name).combine_chunks()
        if name in layout.variables:
            col = _typed_ids(col, id_type, name in layout.lists)
        elif pa.types.is_null(col.type) and name in defaults:
            col = pa.nulls(len(col), defaults[name])
        if name in ("start", "end", "deadline") and layout.time_type is not None:
            col = _timestamps(col, layout.time_type)
        cols.append(col)
    return pa.table(cols, names=table.column_names)


def _typed_ids(col: pa.Array, id_type: pa.DataType | None, is_list: bool) -> pa.Array:
    """A batch's id column as ``_ids_column`` types the same ids: the input id column's type
    where every id fits it, else as inferred (int64 where the column holds no id)."""
    if id_type is not None and not pa.types.is_null(id_type):
        want = pa.list_(id_type) if is_list else id_type
        if col.type == want:
            return col
        ok = pa.types.is_null(col.type) or (pa.types.is_integer(id_type) and _ints(col.type, is_list))
        if ok:
            try:
                return col.cast(want)  # (a safe cast: an id that does not fit raises)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
                pass
    if pa.types.is_null(col.type):
        return pa.nulls(len(col), pa.list_(pa.int64()) if is_list else pa.int64())
    return col


def _ints(t: pa.DataType, is_list: bool) -> bool:
    return pa.types.is_integer(t.value_type if is_list and pa.types.is_list(t) else t)


def _timestamps(col: pa.Array, time_type: pa.DataType) -> pa.Array:
    """Epoch-second times as ``_times`` makes them: whole microseconds (a float rounded half
    to even, as Python's ``round``), then the input's timestamp type."""
    tz = getattr(time_type, "tz", None)
    if pa.types.is_null(col.type):
        return pa.nulls(len(col), time_type)
    if pa.types.is_integer(col.type):
        us = pc.multiply_checked(col.cast(pa.int64()), pa.scalar(1_000_000, pa.int64()))
    else:
        scaled = pc.multiply(col.cast(pa.float64()), pa.scalar(1_000_000.0))
        finite = pc.is_finite(scaled)
        us = pc.if_else(finite, pc.round(scaled, round_mode="half_to_even"), None).cast(pa.int64())
    arr = us.cast(pa.timestamp("us", tz=tz))
    return arr.cast(time_type) if arr.type != time_type else arr


def _layout_columns(batch: pa.RecordBatch, layout: Layout) -> pa.Table:
    """One batch in the layout's columns; a column with no value in it is of null type (its
    type is the other batches', as ``to_table`` infers it from the values)."""
    n = batch.num_rows
    pattern = batch.column("pattern").cast(pa.string())
    cols: dict[str, Any] = {"pattern": pattern}
    for v in layout.variables:
        cols[v] = batch.column(v)
    cols["start"], cols["end"] = batch.column("start"), batch.column("end")
    if layout.timeouts:
        timeout = batch.column("timeout")
        cols["timeout"], cols["deadline"] = timeout.field("type"), timeout.field("deadline")  # null for a match
    for column, owner, name in layout.fields:
        value = batch.column("attrs").field(name)
        if pa.types.is_floating(value.type):  # to_table reads NaN as null (pandas' missing value)
            value = pc.if_else(pc.is_nan(value), _null(value.type), value)
        cols[column] = pc.if_else(pc.equal(pattern, _text_scalar(owner)), value, _null(value.type))
    for name, col in cols.items():
        if name not in ("pattern", "start", "end") and col.null_count == n:
            cols[name] = pa.nulls(n)
    return pa.table(cols)


__all__ = [
    "Layout",
    "MatchWriter",
    "batch_matches",
    "batches_table",
    "bound_events",
    "csv_ready",
    "layout_of",
    "match_line",
    "match_record",
    "output_format",
    "plain",
    "to_table",
    "write_matches",
    "write_table",
    "write_table_to",
]
