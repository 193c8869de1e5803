"""Matches as Arrow record batches (the kernel's: :mod:`petricep.kernel.batches`) written
without a :class:`Match` per match: as JSON Lines text, and as the match table.

Why: ``petricep run --engine kernel`` spent more time turning its matches into objects and
encoding them one by one than finding them (bench/HISTORY.md, issue 16). Here a batch's
JSON Lines are built a column at a time: each column's values as JSON text (a vector cast
for ints, one C call per value for text and floats), joined per row by Arrow. The text is
byte for byte :func:`petricep.output.files.json_line` of each match's ``Match.to_dict()``: the
same keys in the same order (``ids`` in the pattern's variable order, unbound variables left
out; ``attrs`` the pattern's RETURN fields, or ON TIMEOUT fields for a timeout, None as
``null``), ints as ints, floats as Python prints them (non-finite: ``null``), text escaped
as ``json`` escapes it (``ensure_ascii=False``).

The table (:func:`batches_table`) is :func:`petricep.output.table.to_table` of the same
matches, column for column, or None where the batches cannot give it exactly (start/end as
timestamps, an id or field column with values of different types in different batches): the
caller then makes the table from the matches (:func:`batch_matches`).

No Python value is handed to pyarrow (``pa.array``, ``pa.scalar``, a compute function's
``str`` argument), which would import pandas into every run: arrays and scalars are built
from buffers (:mod:`petricep.runtime.arrow`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring  # type: ignore[attr-defined]  # the C encoder json uses
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petricep.compile.net import Net
from petricep.kernel.tableplan import to_matches
from petricep.output.files import json_line
from petricep.output.table import Layout, TimeFormatter
from petricep.runtime.arrow import bool_values, number_array, number_view, scalar, string_array
from petricep.runtime.engine import Match


def _text(s: str) -> pa.Scalar:
    return scalar(s, pa.string())


def _null(t: pa.DataType) -> pa.Scalar:
    return pa.nulls(1, t)[0]


def json_texts(col: pa.Array) -> pa.Array:
    """Each value of ``col`` as :func:`petricep.output.files.json_line` writes it, as text
    (null stays null): ints, floats (non-finite: ``null``), text, bools, lists of those."""
    t = col.type
    if pa.types.is_integer(t):
        return pc.cast(col, pa.string())
    if pa.types.is_null(t):
        return pa.nulls(len(col), pa.string())
    if pa.types.is_boolean(t):
        return pc.if_else(col, _text("true"), _text("false"))
    if pa.types.is_list(t):
        return _list_texts(col)
    values = col.to_pylist()
    if pa.types.is_floating(t):
        fin = np.isfinite(number_view(col.fill_null(scalar(0.0, t)))).all()
        if fin and not col.null_count:
            return string_array(list(map(float.__repr__, values)))
        return string_array([None if v is None else v.__repr__() if np.isfinite(v) else "null" for v in values])
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        if not col.null_count:
            return string_array(list(map(encode_basestring, values)))
        return string_array([None if v is None else encode_basestring(v) for v in values])
    raise TypeError(f"no JSON text for a column of {t}")


def _list_texts(col: pa.Array) -> pa.Array:
    """A list column as JSON arrays (``[1, 2]``), null where the list is."""
    lengths = pc.list_value_length(col)
    offsets = np.zeros(len(col) + 1, dtype=np.int32)
    np.cumsum(number_view(lengths.fill_null(scalar(0, lengths.type))), out=offsets[1:])
    inner = json_texts(pc.list_flatten(col)).fill_null(_text("null"))
    lists = pa.ListArray.from_arrays(number_array(offsets, pa.int32()), inner, mask=col.is_null())
    joined = pc.binary_join(lists, _text(", "))
    return pc.binary_join_element_wise(_text("["), joined, _text("]"), _text(""))


@dataclass(frozen=True)
class _Variant:
    """What a line of one pattern's match (or timeout) shows: its head, its variables in
    order, its attrs fields, and for a timeout the text before the deadline."""

    head: str
    variables: tuple[str, ...]
    fields: tuple[str, ...]
    timeout: str | None


def _variants(net: Net) -> dict[tuple[str, bool], _Variant]:
    """(pattern, timeout?) -> its variant, from the net (the batches' columns follow it)."""
    out = {}
    for p in net.patterns:
        head = '{"pattern": ' + encode_basestring(p.name) + ', "ids": {'
        names = tuple(dict.fromkeys(v.name for v in p.vars))
        returns = tuple(dict.fromkeys(f.name for f in p.returns.fields)) if p.returns is not None else ()
        out[(p.name, False)] = _Variant(head, names, returns, None)
        if p.timeout is not None:
            fields = tuple(dict.fromkeys(f.name for f in p.timeout.fields))
            lead = ', "timeout": {"type": ' + encode_basestring(p.timeout.type) + ', "deadline": '
            out[(p.name, True)] = _Variant(head, names, fields, lead)
    return out


def time_texts(col: pa.Array, times: TimeFormatter) -> pa.Array:
    """Each time of ``col`` as JSON text of what ``times`` makes of it (the input's own
    date-time text, as :func:`petricep.output.table.match_record` writes it), each distinct
    time formatted once (null stays null)."""
    enc = pc.dictionary_encode(col)
    texts = string_array([json_line(times(v)) for v in enc.dictionary.to_pylist()])
    return texts.take(enc.indices)


class JsonlBatches:
    """JSON Lines text of the record batches of ``net``'s matches (see the module docstring).
    ``times``: start, end and a timeout's deadline as the input wrote its times (a
    date-time input: :func:`petricep.output.table.time_formatter`), else numbers."""

    def __init__(self, net: Net, times: TimeFormatter | None = None) -> None:
        self.variants = _variants(net)
        self.times = times

    def text(self, batch: pa.RecordBatch) -> str:
        """The batch's lines, each with its newline, in the batch's order."""
        n = batch.num_rows
        if not n:
            return ""
        lines = self.parts(batch)[2]
        whole = pa.ListArray.from_arrays(number_array([0, n], pa.int32()), lines)
        return str(pc.binary_join(whole, _text("\n"))[0].as_py()) + "\n"

    def parts(self, batch: pa.RecordBatch) -> tuple[pa.Array, pa.Array, pa.Array]:
        """Per row, in the batch's order: the text of its ``ids`` object, of its ``attrs``
        object, and its whole line (no newline) -- what
        :func:`petricep.output.files.match_json_parts` gives for each match (a distributed
        run's match rows keep all three)."""
        pattern = batch.column("pattern")
        names = pattern.dictionary.to_pylist()
        codes = number_view(pattern.indices).astype(np.int64) * 2
        if "timeout" in batch.schema.names:
            codes += bool_values(batch.column("timeout").is_valid())
        present = np.flatnonzero(np.bincount(codes)).tolist()  # the codes present, ascending (np.unique: numpy.ma)
        if len(present) == 1:
            return self._parts(batch, self.variants[(names[present[0] // 2], bool(present[0] % 2))])
        parts, order = [], []
        for code in present:
            rows = np.flatnonzero(codes == code)
            taken = batch.take(number_array(rows, pa.int64()))
            parts.append(self._parts(taken, self.variants[(names[code // 2], bool(code % 2))]))
            order.append(rows)
        back = number_array(np.argsort(np.concatenate(order), kind="stable"), pa.int64())
        ids, attrs, lines = (pa.concat_arrays([p[i] for p in parts]).take(back) for i in range(3))
        return ids, attrs, lines

    def _time(self, col: pa.Array) -> pa.Array:
        return json_texts(col) if self.times is None else time_texts(col, self.times)

    def _parts(self, batch: pa.RecordBatch, v: _Variant) -> tuple[pa.Array, pa.Array, pa.Array]:
        """:meth:`parts` of rows of one variant."""
        none = _text("")  # (the separator of the element-wise joins)
        ids = [
            pc.binary_join_element_wise(_text(encode_basestring(name) + ": "), json_texts(batch.column(name)), none)
            for name in v.variables
        ]
        body: Any = pc.binary_join_element_wise(*ids, _text(", "), null_handling="skip") if ids else ""
        fields: list[Any] = []
        if v.fields:
            attrs = batch.column("attrs")
            for i, f in enumerate(v.fields):
                sep = ", " if i else ""
                fields += [sep + encode_basestring(f) + ": ", json_texts(attrs.field(f)).fill_null(_text("null"))]
        texts: list[Any] = [v.head, body, '}, "start": ', self._time(batch.column("start"))]
        texts += [', "end": ', self._time(batch.column("end")), ', "attrs": {', *fields, "}"]
        if v.timeout is not None:
            texts += [v.timeout, self._time(batch.column("timeout").field("deadline")), "}"]
        texts.append("}")
        n = batch.num_rows

        def joined(items: list[Any]) -> pa.Array:
            if all(isinstance(t, str) for t in items):  # (constant text: one value per row)
                return pa.repeat(_text("".join(items)), n)  # type: ignore[no-any-return]
            return pc.binary_join_element_wise(*(_text(t) if isinstance(t, str) else t for t in items), none)

        return joined(["{", body, "}"]), joined(["{", *fields, "}"]), joined(texts)


def batch_matches(batch: pa.RecordBatch, net: Net) -> list[Match]:
    """The batch's matches as :class:`Match` objects (what the batch holds, exactly)."""
    return to_matches(pa.Table.from_batches([batch]), net)


def batches_table(batches: Sequence[pa.RecordBatch], layout: Layout) -> pa.Table | None:
    """The match table of the batches' matches, as :func:`petricep.output.table.to_table`
    makes it for ``layout``; None where the batches cannot give exactly that (see the
    module docstring)."""
    shared = len({c for c, _, _ in layout.fields}) < len(layout.fields)  # a column of several queries
    if not batches or layout.time_type is not None or layout.rows or shared:
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
        if pa.types.is_null(col.type) and name in defaults:
            col = pa.nulls(len(col), defaults[name])
        cols.append(col)
    return pa.table(cols, names=table.column_names)


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
        cols[column] = pc.if_else(pc.equal(pattern, _text(owner)), value, _null(value.type))
    for name, col in cols.items():
        if name not in ("pattern", "start", "end") and col.null_count == n:
            cols[name] = pa.nulls(n)
    return pa.table(cols)


__all__ = ["JsonlBatches", "batch_matches", "batches_table", "json_texts", "time_texts"]
