"""JSON Lines, one match per line (SPEC §4): a match at a time, or a record batch of the
kernel's matches (:mod:`petricep.kernel.batches`) at a time, without a :class:`Match` per match.

Output is always valid JSON (RFC 8259): a number that is not finite (``inf``, ``nan``, from
``1e308 + 1e308`` in a RETURN field, or a NaN cell of an input) is written as ``null``;
``json.dumps(..., allow_nan=False)`` guards that no ``Infinity`` ever reaches a line.

Why batches: ``petricep run --engine kernel`` spent more time turning its matches into objects
and encoding them one by one than finding them (bench/HISTORY.md, issue 16). Here a batch's
JSON Lines are built a column at a time: each column's values as JSON text (a vector cast
for ints, one C call per value for text and floats), joined per row by Arrow. The text is
byte for byte :func:`json_line` of each match's ``Match.to_dict()``: the
same keys in the same order (``ids`` in the pattern's variable order, unbound variables left
out; ``attrs`` the pattern's RETURN fields, or ON TIMEOUT fields for a timeout, None as
``null``), ints as ints, floats as Python prints them (non-finite: ``null``), text escaped
as ``json`` escapes it (``ensure_ascii=False``). The same batches as the match table:
:func:`petricep.output.table.batches_table`.

No Python value is handed to pyarrow (``pa.array``, ``pa.scalar``, a compute function's
``str`` argument), which would import pandas into every run: arrays and scalars are built
from buffers (:mod:`petricep.runtime.arrow`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring  # type: ignore[attr-defined]  # the C encoder json uses
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petricep.compile.net import Net
from petricep.events import Event
from petricep.output.files import OutputFile
from petricep.output.times import TimeFormatter
from petricep.runtime.arrow import bool_values, number_array, number_view, scalar, string_array
from petricep.runtime.engine import Match


def _plain(v: Any) -> Any:
    """A value as JSON can hold it: non-finite numbers become None (``null``), numpy
    scalars their Python value, anything else unknown its text."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    item = getattr(v, "item", None)  # numpy scalars
    if callable(item):
        return _plain(item())
    return str(v)


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "), allow_nan=False, check_circular=False).encode


def json_line(record: Mapping[str, Any]) -> str:
    """One JSON object on one line (without the newline), RFC 8259-valid.

    A record JSON can hold as it is (text keys; text, numbers, booleans, None, lists and
    dicts) is encoded directly; one it cannot (a non-finite number: ``ValueError``, a numpy
    integer or another unknown value: ``TypeError``) goes through :func:`_plain` first, so
    the common record is not walked twice (bench/HISTORY.md, issue 16 second pass). Keys are
    taken as text: a record never has others (variable, field and column names)."""
    try:
        return _ENCODE(record)
    except (TypeError, ValueError):
        return _ENCODE(_plain(record))


def match_json(m: Match) -> str:
    return json_line(m.to_dict())


def match_json_parts(m: Match) -> tuple[str, str, str]:
    """:func:`match_json`'s line with its ``ids`` and ``attrs`` objects' own text, the line
    made of its values' texts (as the encoder joins a record's items), none encoded twice."""
    texts = {k: _json_value(v) for k, v in m.to_dict().items()}
    return "{" + ", ".join(f"{_ENCODE(k)}: {t}" for k, t in texts.items()) + "}", texts["ids"], texts["attrs"]


def _json_value(v: Any) -> str:
    try:
        return _ENCODE(v)
    except (TypeError, ValueError):
        return _ENCODE(_plain(v))


class JsonlWriter:
    """Matches as JSON Lines; each line is written whole (one ``write``), so an interrupted
    run leaves complete lines."""

    def __init__(self, out: IO[str] | OutputFile) -> None:
        self.out = out
        self.count = 0

    def write(self, m: Match) -> None:
        self.out.write(match_json(m) + "\n")
        self.count += 1


class LateWriter:
    """Late events (``--late``): one JSON object per line with the event's arrival
    position, id, type, timestamp and attributes, and the watermark it arrived behind."""

    def __init__(self, out: IO[str] | OutputFile) -> None:
        self.out = out
        self.count = 0

    def write(self, e: Event, watermark: Any) -> None:
        rec = {"pos": e.pos, "id": e.id, "type": e.type, "ts": e.ts, "watermark": watermark, "attrs": e.attrs}
        self.out.write(json_line(rec) + "\n")
        self.count += 1


def json_document(data: Any) -> str:
    """A whole JSON document (``--stats``), indented, RFC 8259-valid, with its newline."""
    return json.dumps(_plain(data), indent=2, allow_nan=False) + "\n"


def _text(s: str) -> pa.Scalar:
    return scalar(s, pa.string())


def _null(t: pa.DataType) -> pa.Scalar:
    return pa.nulls(1, t)[0]


def json_texts(col: pa.Array) -> pa.Array:
    """Each value of ``col`` as :func:`petricep.output.jsonl.json_line` writes it, as text
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
    date-time input: :func:`petricep.output.times.time_formatter`), else numbers."""

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
        :func:`petricep.output.jsonl.match_json_parts` gives for each match (a distributed
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


__all__ = [
    "JsonlBatches",
    "JsonlWriter",
    "LateWriter",
    "json_document",
    "json_line",
    "json_texts",
    "match_json",
    "match_json_parts",
    "time_texts",
]
