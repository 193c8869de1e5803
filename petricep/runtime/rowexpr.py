"""Evaluating MATCH_RECOGNIZE expressions (DEFINE, MEASURES) over a (partial) match.

An interpreter over the expression AST — the net keeps ASTs, never text to ``eval``.
SQL semantics: NULL (None) propagates through arithmetic and comparisons, AND/OR/NOT are
three-valued, and a DEFINE holds only when it is TRUE. Navigation and aggregates see the
rows mapped so far (*running*), or the whole match under ``FINAL``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.lang import sql_ast as S
from petricep.runtime.expr import ARITH, COMPARE

MatchRow = tuple[int, str, Event]  # (row index in its partition, variable, the row)

def column(ev: Event, name: str) -> Any:
    try:
        return ev.get(name)
    except KeyError:
        raise EvaluationError(f"row {ev.id!r} (type {ev.type!r}) has no column {name!r}") from None


class MatchView:
    """A match as expressions see it: its rows, the current row and the partition around it."""

    __slots__ = ("rows", "cur", "row_at", "match_number", "subsets")

    def __init__(
        self,
        rows: tuple[MatchRow, ...],
        cur: int,
        row_at: Callable[[int], Event | None],
        match_number: int,
        subsets: dict[str, frozenset[str]],
    ) -> None:
        self.rows = rows
        self.cur = cur
        self.row_at = row_at
        self.match_number = match_number
        self.subsets = subsets

    def positions(self, var: str | None, end: int) -> list[int]:
        """Positions in ``rows[:end]`` mapped to ``var`` (a subset: any member; None: all)."""
        if var is None:
            return list(range(end))
        members = self.subsets.get(var)
        rows = self.rows
        if members is None:
            return [p for p in range(end) if rows[p][1] == var]
        return [p for p in range(end) if rows[p][1] in members]


_VAR_OF: dict[int, tuple[S.SExpr, str | None]] = {}  # id(expr) -> (expr, its variable)


def _single_var(e: S.SExpr) -> str | None:
    """The variable whose rows a navigation or aggregate argument reads (checked to be one);
    cached, as every row evaluates the same few expressions."""
    hit = _VAR_OF.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    vs = S.column_vars(e)
    var = next(iter(vs)) if vs else None
    if len(_VAR_OF) > 100_000:
        _VAR_OF.clear()
    _VAR_OF[id(e)] = (e, var)
    return var


def _at(e: S.SExpr, ev: Event | None) -> Any:
    """``e`` with every column read from row ``ev`` (the target of a navigation)."""
    if ev is None:
        return None
    if isinstance(e, S.Col):
        return column(ev, e.name)
    if isinstance(e, S.Lit):
        return e.value
    if isinstance(e, S.Nav):  # PREV(LAST(A.x)): the logical part chose the row already
        return _at(e.arg, ev)
    if isinstance(e, S.Op):
        return _op(e.op, [_at(a, ev) for a in e.args])
    if isinstance(e, S.Final):
        return _at(e.arg, ev)
    raise EvaluationError(f"cannot evaluate {type(e).__name__} on one row")  # pragma: no cover - checked


def _op(op: str, vals: list[Any]) -> Any:
    if op == "and":
        if any(v is False for v in vals):
            return False
        return None if any(v is None for v in vals) else True
    if op == "or":
        if any(v is True for v in vals):
            return True
        return None if any(v is None for v in vals) else False
    if op == "not":
        return None if vals[0] is None else not vals[0]
    if op == "is null":
        return vals[0] is None
    if op == "is not null":
        return vals[0] is not None
    if any(v is None for v in vals):
        return None
    if op == "neg":
        return -vals[0]
    try:
        fn = ARITH.get(op)
        if fn is not None:
            try:
                return fn(vals[0], vals[1])
            except ZeroDivisionError:
                return None
        return COMPARE[op](vals[0], vals[1])
    except TypeError:
        raise EvaluationError(f"cannot apply {op!r} to {vals[0]!r} and {vals[1]!r}") from None


class Evaluator:
    """Evaluates expressions of one query on :class:`MatchView`."""

    def value(self, e: S.SExpr, m: MatchView, final: bool = False) -> Any:
        end = len(m.rows) if final else m.cur + 1
        if isinstance(e, S.Lit):
            return e.value
        if isinstance(e, S.Col):
            if not final and (e.var is None or e.var == m.rows[m.cur][1]):
                return column(m.rows[m.cur][2], e.name)  # the current row (its own variable's last)
            ps = m.positions(e.var, end)
            return column(m.rows[ps[-1]][2], e.name) if ps else None
        if isinstance(e, S.Op):
            if e.op in ("and", "or"):  # short-circuit where SQL's answer is already fixed
                stop = e.op == "or"
                vals = []
                for a in e.args:
                    v = self.value(a, m, final)
                    if v is stop:
                        return stop
                    vals.append(v)
                return _op(e.op, vals)
            return _op(e.op, [self.value(a, m, final) for a in e.args])
        if isinstance(e, S.Nav):
            return self._nav(e, m, final)
        if isinstance(e, S.Final):
            return self.value(e.arg, m, True)
        return self._call(e, m, final, end)

    def _logical_row(self, e: S.Nav, m: MatchView, final: bool) -> int | None:
        """FIRST/LAST: the position in the match of the row ``e`` reads."""
        end = len(m.rows) if final else m.cur + 1
        ps = m.positions(_single_var(e.arg), end)
        k = e.offset if e.func == "FIRST" else len(ps) - 1 - e.offset
        return ps[k] if 0 <= k < len(ps) else None

    def _nav(self, e: S.Nav, m: MatchView, final: bool) -> Any:
        if e.func in S.NAV_LOGICAL:
            p = self._logical_row(e, m, final)
            return None if p is None else _at(e.arg, m.rows[p][2])
        # PREV / NEXT: from the row the argument reads, move in the partition
        inner = e.arg
        if isinstance(inner, S.Nav):
            p = self._logical_row(inner, m, final)
        else:
            var = _single_var(inner)
            if not final and (var is None or var == m.rows[m.cur][1]):
                p = m.cur
            else:
                ps = m.positions(var, len(m.rows) if final else m.cur + 1)
                p = ps[-1] if ps else None
        if p is None:
            return None
        if e.func == "PREV":
            return _at(inner, m.row_at(m.rows[p][0] - e.offset))
        q = p + e.offset  # NEXT stays inside the match (docs/MATCH_RECOGNIZE.md)
        return _at(inner, m.rows[q][2]) if q < len(m.rows) else None

    def _call(self, e: S.SExpr, m: MatchView, final: bool, end: int) -> Any:
        assert isinstance(e, S.Call)
        f = e.func
        if f == "CLASSIFIER":
            return m.rows[len(m.rows) - 1 if final else m.cur][1]
        if f == "MATCH_NUMBER":
            return m.match_number
        if f == "ABS":
            v = self.value(e.args[0], m, final)
            return None if v is None else abs(v)
        if e.star:
            return len(m.positions(e.star_var, end))
        arg = e.args[0]
        vals = [_at(arg, m.rows[p][2]) for p in m.positions(_single_var(arg), end)]
        vals = [v for v in vals if v is not None]
        if f == "COUNT":
            return len(vals)
        if not vals:
            return None
        try:
            if f == "SUM":
                return sum(vals)
            if f == "AVG":
                return sum(vals) / len(vals)
            return min(vals) if f == "MIN" else max(vals)
        except TypeError:
            raise EvaluationError(f"{f}() over values that are not numbers: {vals[:3]!r}") from None
