"""Typed match columns for Spark users: ``ids`` and ``attrs`` as structs, times as timestamps.

The firing stage writes each match as the JSON Lines record ``petricep run`` writes (the
``json`` column: byte-identical to the embedded engine). The public DataFrame reads that
record once with ``from_json`` under a schema fixed on the driver from the program, so a
Spark user can query ``ids.a``, ``attrs.avg`` or ``start`` without parsing text:

* ``ids``: a struct with one field per variable of the program (in first-seen order, as the
  embedded match table's columns): ``long`` for an event, ``array<long>`` for a Kleene
  variable (``string`` / ``array<string>`` where the ids are text: an id column of text, or
  a variable binding composite events, whose ids are ``pattern[...]``); null where the
  pattern has no such variable;
* ``attrs``: a struct with one field per RETURN / timeout / SQL measure name, typed from its
  expression: arithmetic, aggregates over numbers and numeric literals ``double`` (``count``
  ``long``), conditions ``boolean``, an attribute ``double`` when the patterns use that field
  as a number, its composite field's type when it reads a composite event, else ``string``
  (a JSON number read as text keeps its digits); a name two patterns give different types
  is ``string``;
* ``start`` / ``end``: ``timestamp`` when the input's times are date-times (the run says so:
  a date format, a timestamp column), else ``double`` (epoch numbers as the input had them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from petricep.compile.net import Net
from petricep.lang import ast as A
from petricep.lang import sql_ast as S
from petricep.lang.fields import field_requirements
from petricep.output.table import layout_of

PUBLIC = ("pattern", "ids", "start", "end", "attrs", "json", "emitted_at")  # the columns, in order
DOUBLE, LONG, STRING, BOOLEAN = "double", "bigint", "string", "boolean"


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _struct(fields: Iterable[tuple[str, str]]) -> str:
    inner = ", ".join(f"{_quoted(n)}: {t}" for n, t in fields)
    return f"struct<{inner}>" if inner else "struct<>"


class Typing:
    """The value types of one program's matches (see the module docstring)."""

    def __init__(self, net: Net, text_ids: bool = False) -> None:
        self.net = net
        patterns = [p.source for p in net.patterns]
        _, numeric = field_requirements(patterns)
        self.numeric = numeric
        self.producers = {r.type: r for p in patterns for r in A.outputs(p)}
        self.text_ids = text_ids

    # -- ids ------------------------------------------------------------------------

    def ids_fields(self) -> list[tuple[str, str]]:
        layout = layout_of(self.net)
        composite = self._composite_vars()
        out = []
        steps: dict[str, list[str]] = {}  # a repeated group -> its steps (issue 42)
        for p in self.net.patterns:
            for pv in p.vars:
                if pv.group is not None and pv.name not in steps.setdefault(pv.group, []):
                    steps[pv.group].append(pv.name)
        for v in layout.variables:
            if v in steps:  # the group's bindings: one struct of ids per iteration
                fields = [(m, STRING if self.text_ids or m in composite else LONG) for m in steps[v]]
                out.append((v, f"array<{_struct(fields)}>"))
                continue
            base = STRING if self.text_ids or v in composite else LONG
            out.append((v, f"array<{base}>" if v in layout.lists else base))
        return out

    def _composite_vars(self) -> set[str]:
        return {
            r.var for p in self.net.patterns for r in A.events_of(p.source.structure) if r.type in self.producers
        }

    # -- attrs ----------------------------------------------------------------------

    def attrs_fields(self) -> list[tuple[str, str]]:
        types: dict[str, str] = {}

        def add(name: str, t: str) -> None:
            types[name] = t if types.get(name, t) == t else STRING

        for pn in self.net.patterns:
            p = pn.source
            refs = {r.var: r.type for r in A.events_of(p.structure)}
            for r in A.outputs(p):
                for f in r.fields:
                    add(f.name, self.expr_type(f.expr, refs, set()))
        for rn in self.net.rows:
            names = list(rn.select) if rn.select is not None else [m.name for m in rn.measures]
            measures = {m.name: m for m in rn.measures}
            for n in names:
                add(n, _measure_type(measures[n].expr) if n in measures else STRING)
        return list(types.items())

    def expr_type(self, e: A.Expr, refs: dict[str, str], seen: set[str]) -> str:
        """The Spark type of a RETURN expression's values."""
        if isinstance(e, A.Num | A.BinOp | A.Neg):
            return DOUBLE
        if isinstance(e, A.Str):
            return STRING
        if isinstance(e, A.Compare | A.BoolOp | A.Not):
            return BOOLEAN
        if isinstance(e, A.Agg):
            if e.func == "count":
                return LONG
            if e.func in ("sum", "avg"):
                return DOUBLE
            return self._field_type(refs.get(A.step_var(e)), e.field, seen)
        return self._field_type(refs.get(A.step_var(e)), e.field, seen)

    def _field_type(self, etype: str | None, field: str | None, seen: set[str]) -> str:
        if field == "ts":
            return DOUBLE
        if field == "id":
            return STRING if self.text_ids or etype in self.producers else LONG
        if etype is None or field is None:
            return STRING
        producer = self.producers.get(etype)
        if producer is not None:  # a composite event's field: its producer's expression
            if etype in seen:
                return STRING
            source = next(p.source for p in self.net.patterns if producer in A.outputs(p.source))
            refs = {r.var: r.type for r in A.events_of(source.structure)}
            exprs = {f.name: f.expr for f in producer.fields}
            if field not in exprs:
                return STRING
            return self.expr_type(exprs[field], refs, seen | {etype})
        return DOUBLE if field in self.numeric.get(etype, ()) else STRING

    # -- the schema -----------------------------------------------------------------

    def record_schema(self) -> str:
        """The DDL ``from_json`` reads a match's JSON Lines record with."""
        return _struct(
            [
                ("pattern", STRING),
                ("ids", _struct(self.ids_fields())),
                ("start", DOUBLE),
                ("end", DOUBLE),
                ("attrs", _struct(self.attrs_fields())),
            ]
        )


_CONDITIONS = ("=", "!=", "<", "<=", ">", ">=", "and", "or", "not", "is null", "is not null")


def _measure_type(e: S.SExpr) -> str:
    """A SQL measure's type, from its expression: arithmetic and SUM/AVG ``double``, COUNT
    and MATCH_NUMBER() ``long``, conditions ``boolean``, literals theirs; columns, navigation,
    MIN/MAX and CLASSIFIER() ``string`` (a number read as text keeps its digits)."""
    if isinstance(e, S.Final):
        return _measure_type(e.arg)
    if isinstance(e, S.Lit):
        return STRING if isinstance(e.value, str) or e.value is None else DOUBLE
    if isinstance(e, S.Call):
        func = e.func.upper()
        return LONG if func in ("COUNT", "MATCH_NUMBER") else DOUBLE if func in ("SUM", "AVG", "ABS") else STRING
    if isinstance(e, S.Op):
        return BOOLEAN if e.op in _CONDITIONS else DOUBLE
    return STRING


def typed(matches: Any, net: Net, *, text_ids: bool = False, timestamps: bool = False) -> Any:
    """``matches`` (a DataFrame with the ``json`` record and ``emitted_at``) with typed
    ``pattern, ids, start, end, attrs`` beside ``json`` and ``emitted_at``."""
    from pyspark.sql import functions as F

    rec = F.from_json(F.col("json"), Typing(net, text_ids).record_schema())
    start, end = rec["start"], rec["end"]
    if timestamps:
        start, end = F.timestamp_micros((start * 1e6).cast("long")), F.timestamp_micros((end * 1e6).cast("long"))
    return matches.select(
        rec["pattern"].alias("pattern"),
        rec["ids"].alias("ids"),
        start.alias("start"),
        end.alias("end"),
        rec["attrs"].alias("attrs"),
        "json",
        "emitted_at",
    )


__all__ = ["PUBLIC", "Typing", "typed"]
