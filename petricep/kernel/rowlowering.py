"""Lowering a SQL row-pattern net (:class:`~petricep.compile.rows.RowNet`) to the arrays of the
kernel's row matcher (``_rowmatch.pyx``).

The row matcher keeps the Python row runtime's token loop (:mod:`petricep.runtime.rows`): per
partition one search per start row, its threads in preference order, contiguous rows, AFTER
MATCH SKIP and WITHIN. A DEFINE that reads the row it classifies and the partition's rows
before it through ``PREV`` (never the rows mapped so far) depends only on (variable, row), so
the kernel evaluates it once per row and variable; where every DEFINE is such
(:attr:`RowNet.memoryless`) a search keeps at most one thread per place (the Python runtime's
``taken`` rule). A DEFINE that reads the rows mapped so far (another variable's column,
FIRST/LAST, an aggregate, a navigation from a navigation) is answered by its Python closure on
the thread's candidate rows, as the Python runtime answers it (:data:`GUARD_PATH`).

A DEFINE is lowered from its validated AST (never from text) to a small stack bytecode over
the numbers of the row's columns (:data:`ROW_OPS`); the kernel evaluates it over Python's
``int`` (exact while ``|v| < 2**53``), ``float``, ``None`` and the booleans of comparisons. A
value it cannot compute exactly -- text, a bool column, a larger int, a missing column (an
error), an int result past ``2**53`` -- makes it ask the DEFINE's Python closure
(:func:`~petricep.runtime.rowexpr.compile_sexpr`) for that one row, which gives Python's answer
or raises Python's error. A DEFINE the bytecode does not cover at all (text literals, ``%``,
``NEXT``, ``CLASSIFIER()``, ``MATCH_NUMBER()``) is always asked that way (:data:`GUARD_PYTHON`).
MEASURES are computed in Python from each emitted match's rows, as the Python runtime does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from petricep.compile.rows import ACCEPT, RowNet
from petricep.lang import ast as A
from petricep.lang import sql_ast as S

# DEFINE bytecode: triples of int32 words (opcode, a, b)
ROW_OPS = {
    "end": 0,
    "const": 1,  # a: constant index
    "col": 2,  # a: column index, b: rows back (PREV's offset)
    "rowchk": 3,  # a: rows back, b: target -- no such row: push NULL and jump (PREV of a missing row)
    "arith": 4,  # a: operator code (+ - * /)
    "neg": 5,
    "abs": 6,
    "cmp": 7,  # a: comparison code
    "not": 8,
    "isnull": 9,
    "notnull": 10,
    "jnull": 11,  # b: target -- the top is NULL: jump, keeping it (a binary operator's right side is not read)
    "acc": 12,  # a: 1 for OR -- push the AND (TRUE) / OR (FALSE) accumulator
    "step": 13,  # a: 1 for OR, b: target or -1 -- fold the top into the accumulator below it
}
ARITH_ROW = {"+": 0, "-": 1, "*": 2, "/": 3}
CMP_ROW = {"=": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}
# a value's kind in the row matcher
KIND_NULL, KIND_BOOL, KIND_INT, KIND_NUM, KIND_OTHER = 0, 1, 2, 3, 4
# a variable's DEFINE: none (every row), bytecode, the Python closure on the row, or the
# Python closure on the thread's candidate rows (a DEFINE that reads the rows mapped so far)
GUARD_NONE, GUARD_CODE, GUARD_PYTHON, GUARD_PATH = 0, 1, 2, 3
SKIP_CODES = {S.SKIP_PAST_LAST: 0, S.SKIP_NEXT_ROW: 1, S.SKIP_FIRST: 2, S.SKIP_LAST: 3}
WINDOW_NONE, WINDOW_TIME, WINDOW_COUNT = 0, 1, 2
COLUMN_ATTR, COLUMN_TS, COLUMN_ID = 0, 1, 2  # where a column is read: the row's attrs, its ts, its id
EXACT_INT = 2**53
MAX_STACK = 64


class NotLowered(Exception):
    """A DEFINE the bytecode does not cover: it runs as its Python closure (GUARD_PYTHON)."""


@dataclass(frozen=True)
class LoweredRows:
    """The arrays the kernel's row matcher interprets for one query (see the module docstring)."""

    name: str
    vars: tuple[str, ...]  # pattern variables, by their index in the arrays
    nplaces: int
    start: int
    exit_off: np.ndarray  # int32 [nplaces + 1]: a place's exits are exit_items[off[p]:off[p+1]]
    exit_items: np.ndarray  # int32: transition ids, ACCEPT (-1) where the match may stop
    accept_at: np.ndarray  # int32 [nplaces]: ACCEPT's rank among the place's exits, -1 none
    tr_dst: np.ndarray  # int32 [ntransitions]
    tr_var: np.ndarray  # int32 [ntransitions]: the variable the row is mapped to
    guard_kind: np.ndarray  # int32 [nvars]: GUARD_*
    code_off: np.ndarray  # int32 [nvars + 1]: a variable's bytecode is code[off[v]:off[v+1]]
    code: np.ndarray  # int32 triples
    const_val: np.ndarray  # float64
    const_kind: np.ndarray  # uint8
    columns: tuple[str, ...]  # the columns the bytecode reads
    column_kind: np.ndarray  # int32: COLUMN_*
    skip: int  # SKIP_CODES
    skip_members: np.ndarray  # uint8 [nvars]: the variables SKIP TO FIRST/LAST targets (a subset: its members)
    window: int  # WINDOW_*
    window_value: Any  # the WITHIN amount as checked (a number, compared as the Python object), None without one
    history: int  # rows before a search that PREV may read
    memoryless: bool  # RowNet.memoryless: a search keeps one thread per place


def _reads_the_match(d: S.Define) -> bool:
    """Whether a DEFINE reads the rows mapped so far (compile/rows.py ``_memoryless`` for one
    DEFINE), or navigates from a navigation (``PREV(LAST(A.x))``: a row of the match)."""
    for x in S.walk(d.expr):
        if isinstance(x, S.Col) and x.var not in (None, d.var):
            return True
        if isinstance(x, S.Nav) and (x.func in S.NAV_LOGICAL or isinstance(x.arg, S.Nav)):
            return True
        if isinstance(x, S.Call) and x.func in S.AGGREGATES:
            return True
    return False


class _Code:
    """One DEFINE's bytecode, compiled from its AST."""

    def __init__(self, columns: dict[str, int], consts: list[tuple[float, int]]) -> None:
        self.columns = columns
        self.consts = consts
        self.words: list[list[int]] = []

    def emit(self, op: str, a: int = 0, b: int = 0) -> int:
        self.words.append([ROW_OPS[op], a, b])
        return len(self.words) - 1

    def const(self, value: Any) -> None:
        if value is None:
            kind, v = KIND_NULL, 0.0
        elif isinstance(value, bool):
            kind, v = KIND_BOOL, float(value)
        elif isinstance(value, int) and abs(value) < EXACT_INT:
            kind, v = KIND_INT, float(value)
        elif isinstance(value, float):
            kind, v = KIND_NUM, value
        else:
            raise NotLowered(f"literal {value!r}")
        self.consts.append((v, kind))
        self.emit("const", len(self.consts) - 1)

    def expr(self, e: S.SExpr, back: int, at: bool) -> None:
        """``e`` read ``back`` rows before the current one. ``at``: inside a PREV, where the
        Python runtime evaluates every operand (no short cut: rowexpr ``_at``)."""
        if isinstance(e, S.Lit):
            self.const(e.value)
        elif isinstance(e, S.Col):
            col = self.columns.setdefault(e.name, len(self.columns))
            self.emit("col", col, back)
        elif isinstance(e, S.Nav):
            self._nav(e, back, at)
        elif isinstance(e, S.Op):
            self._op(e, back, at)
        elif isinstance(e, S.Call) and e.func == "ABS" and not at:
            self.expr(e.args[0], back, at)
            self.emit("abs")
        else:
            raise NotLowered(type(e).__name__)

    def _nav(self, e: S.Nav, back: int, at: bool) -> None:
        if at:  # PREV(PREV(x)): the outer navigation chose the row (rowexpr _at)
            self.expr(e.arg, back, at)
            return
        if e.func != "PREV":
            raise NotLowered(e.func)
        check = self.emit("rowchk", back + e.offset)
        self.expr(e.arg, back + e.offset, True)
        self.words[check][2] = len(self.words)

    def _op(self, e: S.Op, back: int, at: bool) -> None:
        op = e.op
        if op in ("and", "or"):
            is_or = int(op == "or")
            self.emit("acc", is_or)
            steps = []
            for arg in e.args:
                self.expr(arg, back, at)
                steps.append(self.emit("step", is_or, -1))
            if not at:
                for s in steps:
                    self.words[s][2] = len(self.words)
            return
        if len(e.args) == 1:
            self.expr(e.args[0], back, at)
            unary = {"not": "not", "is null": "isnull", "is not null": "notnull", "neg": "neg"}.get(op)
            if unary is None:
                raise NotLowered(op)
            self.emit(unary)
            return
        if op not in ARITH_ROW and op not in CMP_ROW:
            raise NotLowered(op)
        self.expr(e.args[0], back, at)
        skip = None if at else self.emit("jnull")
        self.expr(e.args[1], back, at)
        if op in ARITH_ROW:
            self.emit("arith", ARITH_ROW[op])
        else:
            self.emit("cmp", CMP_ROW[op])
        if skip is not None:
            self.words[skip][2] = len(self.words)


def _guards(rn: RowNet, vars_: tuple[str, ...]) -> tuple[list[int], list[list[int]], dict[str, int], list[tuple[float, int]]]:
    """Per variable its guard kind and bytecode (words flattened)."""
    columns: dict[str, int] = {}
    consts: list[tuple[float, int]] = []
    kinds: list[int] = []
    codes: list[list[int]] = []
    defines = {d.var: d for d in rn.source.defines}
    for v in vars_:
        d = defines.get(v)
        if d is None or _reads_the_match(d):
            kinds.append(GUARD_NONE if d is None else GUARD_PATH)
            codes.append([])
            continue
        expr = d.expr
        code = _Code(dict(columns), list(consts))
        try:
            code.expr(expr, 0, False)
        except NotLowered:
            kinds.append(GUARD_PYTHON)
            codes.append([])
            continue
        code.emit("end")
        if _depth(code.words) > MAX_STACK:
            kinds.append(GUARD_PYTHON)
            codes.append([])
            continue
        columns, consts = code.columns, code.consts
        kinds.append(GUARD_CODE)
        codes.append([w for word in code.words for w in word])
    return kinds, codes, columns, consts


def _depth(words: list[list[int]]) -> int:
    """An upper bound of the stack the bytecode needs (every push counted)."""
    return sum(1 for w in words if w[0] in (ROW_OPS["const"], ROW_OPS["col"], ROW_OPS["rowchk"], ROW_OPS["acc"])) + 1


def lower_rows(rn: RowNet) -> LoweredRows:
    """The row matcher's arrays for ``rn`` (every query has them)."""
    vars_ = rn.vars
    var_index = {v: i for i, v in enumerate(vars_)}
    kinds, codes, columns, consts = _guards(rn, vars_)
    exit_off = [0]
    items: list[int] = []
    for ex in rn.exits:
        items.extend(ex)
        exit_off.append(len(items))
    members = rn.skip.var
    subsets = dict(rn.subsets)
    targets = set(subsets.get(members, (members,))) if members else set()
    code_off = [0]
    for c in codes:
        code_off.append(code_off[-1] + len(c))
    column_kind = [COLUMN_TS if c == "ts" else COLUMN_ID if c == "id" else COLUMN_ATTR for c in columns]
    window = WINDOW_NONE if rn.window_value is None else WINDOW_COUNT if rn.window_kind == A.WIN_COUNT else WINDOW_TIME
    return LoweredRows(
        name=rn.name,
        vars=vars_,
        nplaces=len(rn.places),
        start=rn.start,
        exit_off=np.array(exit_off, dtype=np.int32),
        exit_items=np.array(items or [0], dtype=np.int32)[: len(items)],
        accept_at=np.array([ex.index(ACCEPT) if ACCEPT in ex else -1 for ex in rn.exits], dtype=np.int32),
        tr_dst=np.array([t.dst for t in rn.transitions] or [0], dtype=np.int32)[: len(rn.transitions)],
        tr_var=np.array([var_index[t.var] for t in rn.transitions] or [0], dtype=np.int32)[: len(rn.transitions)],
        guard_kind=np.array(kinds, dtype=np.int32),
        code_off=np.array(code_off, dtype=np.int32),
        code=np.array([w for c in codes for w in c] or [0], dtype=np.int32),
        const_val=np.array([v for v, _ in consts] or [0.0], dtype=np.float64),
        const_kind=np.array([k for _, k in consts] or [0], dtype=np.uint8),
        columns=tuple(columns),
        column_kind=np.array(column_kind or [0], dtype=np.int32),
        skip=SKIP_CODES[rn.skip.mode],
        skip_members=np.array([v in targets for v in vars_], dtype=np.uint8),
        window=window,
        window_value=rn.window_value,
        history=rn.history,
        memoryless=rn.memoryless,
    )


__all__ = ["GUARD_CODE", "GUARD_NONE", "GUARD_PATH", "GUARD_PYTHON", "LoweredRows", "lower_rows"]
