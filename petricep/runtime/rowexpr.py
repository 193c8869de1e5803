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
from petricep.runtime.expr import ARITH, COMPARE, nan_max, nan_min, number_text, overflow_error

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


def _single_var(e: S.SExpr) -> str | None:
    """The variable whose rows a navigation or aggregate argument reads (checked to be one)."""
    vs = S.column_vars(e)
    return next(iter(vs)) if vs else None


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
            except OverflowError:  # docs/SEMANTICS.md "Numbers": as in pattern conditions
                raise overflow_error(f"{number_text(vals[0])} {op} {number_text(vals[1])}") from None
        return COMPARE[op](vals[0], vals[1])
    except TypeError:
        raise EvaluationError(f"cannot apply {op!r} to {vals[0]!r} and {vals[1]!r}") from None


Fn = Callable[[MatchView], Any]


def compile_sexpr(e: S.SExpr, final: bool = False) -> Fn:
    """``e`` as a closure over a :class:`MatchView` (compiled once per process; the net
    keeps the AST). ``final``: navigation and aggregates see the whole match."""
    if isinstance(e, S.Lit):
        value = e.value
        return lambda m: value
    if isinstance(e, S.Col):
        return _col(e.var, e.name, final)
    if isinstance(e, S.Op):
        return _compile_op(e, final)
    if isinstance(e, S.Nav):
        return _compile_nav(e, final)
    if isinstance(e, S.Final):
        return compile_sexpr(e.arg, True)
    return _compile_call(e, final)


def _end(m: MatchView, final: bool) -> int:
    return len(m.rows) if final else m.cur + 1


def _col(var: str | None, name: str, final: bool) -> Fn:
    def read(m: MatchView) -> Any:
        if not m.rows:
            return None  # an empty match
        if not final:
            row = m.rows[m.cur]
            if var is None or var == row[1]:
                return column(row[2], name)  # the current row (its own variable's last)
        ps = m.positions(var, _end(m, final))
        return column(m.rows[ps[-1]][2], name) if ps else None

    return read


def _compile_op(e: S.Op, final: bool) -> Fn:
    op = e.op
    args = [compile_sexpr(a, final) for a in e.args]
    if op in ("and", "or"):  # short-circuit where SQL's answer is already fixed
        stop = op == "or"

        def logic(m: MatchView) -> Any:
            vals = []
            for f in args:
                v = f(m)
                if v is stop:
                    return stop
                vals.append(v)
            return _op(op, vals)

        return logic
    if len(args) == 1:
        (one,) = args
        return lambda m: _op(op, [one(m)])
    left, right = args

    def binary(m: MatchView) -> Any:
        a = left(m)
        if a is None:  # NULL whatever the right side is: not evaluated, as in pattern conditions
            return None
        return _op(op, [a, right(m)])

    return binary


def _logical(nav: S.Nav, final: bool) -> Callable[[MatchView], int | None]:
    """FIRST/LAST: the position in the match of the row ``nav`` reads."""
    var = _single_var(nav.arg)
    first = nav.func == "FIRST"
    offset = nav.offset

    def row(m: MatchView) -> int | None:
        ps = m.positions(var, _end(m, final))
        k = offset if first else len(ps) - 1 - offset
        return ps[k] if 0 <= k < len(ps) else None

    return row


def _compile_nav(e: S.Nav, final: bool) -> Fn:
    inner = e.arg
    if e.func in S.NAV_LOGICAL:
        pick = _logical(e, final)

        def logical(m: MatchView) -> Any:
            p = pick(m)
            return None if p is None else _at(inner, m.rows[p][2])

        return logical
    # PREV / NEXT: from the row the argument reads, move in the partition
    if isinstance(inner, S.Nav):
        pick = _logical(inner, final)
    else:
        var = _single_var(inner)

        def pick(m: MatchView) -> int | None:
            if not m.rows:
                return None
            if not final and (var is None or var == m.rows[m.cur][1]):
                return m.cur
            ps = m.positions(var, _end(m, final))
            return ps[-1] if ps else None

    offset = e.offset
    if e.func == "PREV":

        def prev(m: MatchView) -> Any:
            p = pick(m)
            return None if p is None else _at(inner, m.row_at(m.rows[p][0] - offset))

        return prev

    def nxt(m: MatchView) -> Any:
        p = pick(m)
        if p is None or p + offset >= len(m.rows):
            return None  # NEXT stays inside the match (docs/MATCH_RECOGNIZE.md)
        return _at(inner, m.rows[p + offset][2])

    return nxt


def _extreme(pick: Callable[[Any, Any], Any], vals: list[Any]) -> Any:
    """MIN/MAX where a NaN among the values gives NaN (not an order-dependent answer)."""
    out = vals[0]
    for v in vals[1:]:
        out = pick(out, v)
    return out


def _compile_call(e: S.SExpr, final: bool) -> Fn:
    assert isinstance(e, S.Call)
    f = e.func
    if f == "CLASSIFIER":
        return lambda m: m.rows[len(m.rows) - 1 if final else m.cur][1] if m.rows else None
    if f == "MATCH_NUMBER":
        return lambda m: m.match_number
    if f == "ABS":
        inner = compile_sexpr(e.args[0], final)

        def absolute(m: MatchView) -> Any:
            v = inner(m)
            return None if v is None else abs(v)

        return absolute
    if e.star:
        star_var = e.star_var
        return lambda m: len(m.positions(star_var, _end(m, final)))
    arg = e.args[0]
    var = _single_var(arg)

    def aggregate(m: MatchView) -> Any:
        vals = [_at(arg, m.rows[p][2]) for p in m.positions(var, _end(m, final))]
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
            return _extreme(nan_min if f == "MIN" else nan_max, vals)
        except OverflowError:
            raise overflow_error(f"{f}() over {len(vals)} values") from None
        except TypeError:
            raise EvaluationError(f"{f}() over values that are not numbers: {vals[:3]!r}") from None

    return aggregate
