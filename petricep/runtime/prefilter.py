"""Filter push-down (paper 003): drop, a whole batch at a time, the input rows no
transition can ever use, before they become :class:`~petricep.events.Event` objects.

A row is kept when its type is read by a negation, or when some transition reading its
type has all its single-event conditions (the guards the compiler hoisted onto the
transition's input arc) true on it. The guards are evaluated with numpy over the
batch's columns, from the validated expression AST (nothing is ever ``eval``-ed).
Anything the vectorised evaluator is not sure to compute exactly as the engine does
(text fields, ``id``, division, columns with missing or non-number values) counts as
"maybe": the row is kept and the engine decides, so the matches never change.

Numbers (docs/SEMANTICS.md "Numbers"): numpy's float64 is Python's float, so IEEE
overflow, infinities and NaN give the engine's answers; but numpy's int64 wraps around and
compares with floats after rounding. So ints are only used where they are exact: a column
or constant beyond ±2**53, an object column (huge ints, mixed values), or an int result
beyond ±2**53 makes the condition "maybe" for the batch.

Dropping rows is only sound where an event that no transition takes changes nothing:
not under the contiguity strategies (every event interrupts), not where a match or a
timeout waits for its window to close (an end negation, ``ON TIMEOUT``: the event that
closes the window is the emission point), not under a ``LIMIT`` (which partial matches
are alive when it bites depends on when expired ones are swept) and not with a slack (every
event moves the watermark; the CLI does not filter then). :attr:`Prefilter.active`
is False for such nets and the filter then keeps everything.

The same object pushes the projection down too (:meth:`Prefilter.needed`): columns no
condition, key or output of the run reads are not turned into event attributes. This
holds for every net, so it applies whether rows are dropped or not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from petricep.compile.net import GroupNet, Net
from petricep.lang import ast as A
from petricep.runtime.arrow import number_view

Columns = Mapping[str, Callable[[], "np.ndarray | None"]]
VecFn = Callable[[Columns], "np.ndarray | None"]

_CMP: dict[str, Callable[[Any, Any], Any]] = {
    "=": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}
_ARITH: dict[str, Callable[[Any, Any], Any]] = {"+": np.add, "-": np.subtract, "*": np.multiply}
EXACT = 2**53  # ints up to this size are exact in float64, so numpy and Python agree on them


def exact(v: np.ndarray | None) -> np.ndarray | None:
    """``v`` where numpy computes on it exactly as Python does, else None (see the docstring)."""
    if v is None:
        return None
    kind = v.dtype.kind
    if kind == "f" or kind == "b":
        return v
    if kind not in "iu":
        return None  # object (huge ints, mixed values), text: the engine decides
    if v.size and (v.max() > EXACT or v.min() < -EXACT):
        return None
    return v


def vectorize(expr: A.Expr, var: str) -> VecFn | None:
    """A numpy evaluator of a single-event condition over ``var``, or None when the
    expression has a part the filter does not compute (the engine then decides)."""
    if isinstance(expr, A.Num):
        value = exact(np.asarray(expr.value) if -EXACT <= expr.value <= EXACT or isinstance(expr.value, float) else None)
        return lambda cols: value
    if isinstance(expr, A.Attr):
        if expr.var != var or expr.index is not None or expr.field == "id":
            return None
        name = expr.field
        return lambda cols: exact(cols[name]()) if name in cols else None
    if isinstance(expr, A.Neg):
        neg = vectorize(expr.operand, var)
        if neg is None:
            return None
        return lambda cols: _unary(np.negative, neg(cols))
    if isinstance(expr, A.BinOp):
        if expr.op not in _ARITH:
            return None  # '/' and '%' fail on zero divisors: left to the engine
        return _binary(_ARITH[expr.op], expr.left, expr.right, var, arith=True)
    if isinstance(expr, A.Compare):
        if isinstance(expr.left, A.Str) or isinstance(expr.right, A.Str):
            return None
        return _binary(_CMP[expr.op], expr.left, expr.right, var)
    if isinstance(expr, A.BoolOp):
        fs = [vectorize(o, var) for o in expr.operands]
        if any(f is None for f in fs):
            return None
        combine = np.logical_and if expr.op == "and" else np.logical_or
        return lambda cols: _fold(combine, [f(cols) for f in fs])  # type: ignore[misc]
    if isinstance(expr, A.Not):
        inner = vectorize(expr.operand, var)
        if inner is None:
            return None
        return lambda cols: _unary(np.logical_not, inner(cols))
    return None


def _unary(op: Callable[[Any], Any], v: np.ndarray | None) -> np.ndarray | None:
    return None if v is None else op(v)


def _binary(
    op: Callable[[Any, Any], Any], left: A.Expr, right: A.Expr, var: str, arith: bool = False
) -> VecFn | None:
    lf, rf = vectorize(left, var), vectorize(right, var)
    if lf is None or rf is None:
        return None

    def apply(cols: Columns) -> np.ndarray | None:
        a = lf(cols)
        if a is None:
            return None
        b = rf(cols)
        if b is None:
            return None
        with np.errstate(all="ignore"):
            out = op(a, b)
        if arith and out.dtype.kind in "iu":  # int64 wraps around where Python's ints grow
            with np.errstate(all="ignore"):
                wide = op(a.astype(np.float64), b.astype(np.float64))
            if wide.size and not np.all(np.abs(wide) <= EXACT):
                return None
        return out  # type: ignore[no-any-return]

    return apply


def _fold(op: Callable[[Any, Any], Any], values: list[np.ndarray | None]) -> np.ndarray | None:
    if any(v is None for v in values):
        return None
    out = values[0]
    for v in values[1:]:
        out = op(out, v)
    return out


class Prefilter:
    """Which rows of a batch a net can use; see the module docstring."""

    def __init__(self, net: Net) -> None:
        self.active = all(_droppable(g) for g in net.groups) and not any(
            p.timeout is not None or p.limit is not None for p in net.patterns
        )
        # SQL MATCH_RECOGNIZE queries and history patterns read events this filter does not
        # model: every row and column is kept for them
        self.whole = bool(net.rows or net.history)
        self.active = self.active and not self.whole
        self.types: frozenset[str] = frozenset(t for g in net.groups for t in g.input_types)
        # per type: None = keep every row of it; else one guard list per transition (OR of ANDs)
        guards: dict[str, list[list[VecFn | None]] | None] = {}
        for g in net.groups:
            for n in g.negations:
                guards[n.type] = None
            for tr in g.transitions:
                if tr.event_type in guards and guards[tr.event_type] is None:
                    continue
                fns = [vectorize(g.conditions[ci], tr.var) for ci in tr.arc_conditions]
                if not fns:
                    guards[tr.event_type] = None
                    continue
                guards.setdefault(tr.event_type, []).append(fns)  # type: ignore[union-attr]
        self.guards = guards
        # projection push-down: the only attributes any condition, key or output reads
        fields: set[str] = set()
        for p in net.patterns:
            fields.update(p.source.partition)
            for expr in A.pattern_exprs(p.source):
                for e in A.walk_expr(expr):
                    if isinstance(e, (A.Attr, A.Agg)) and e.field is not None:
                        fields.add(e.field)
        self.fields: frozenset[str] = frozenset(fields)
        self.rows_in = 0
        self.rows_kept = 0

    def needed(self, names: Sequence[str], always: Sequence[str | None]) -> list[bool]:
        """Per column: whether events need it as an attribute (``always``: the type, time and
        id columns). The others are never converted to Python values."""
        if self.whole:
            return [True] * len(names)
        return [name in self.fields or name in always for name in names]

    def keep(
        self,
        n: int,
        types: pa.DictionaryArray | None,
        type_const: str | None,
        names: Sequence[str],
        cols: Sequence[list[Any]],
        numeric: Sequence[bool],
        tss: Any,
    ) -> list[int] | None:
        """Row indices (0..n-1) to keep, or None to keep the whole batch. ``types``: the
        batch's type column dictionary-encoded, without nulls (None with ``type_const``): a
        type's rows are those of its code, one comparison of integers each."""
        if not self.active or n == 0:
            return None
        if type_const is not None:
            if type_const not in self.types:
                return self._count(n, [])
            mask = self._type_mask(type_const, n, names, cols, numeric, tss, None)
            if mask is None:
                return None
        else:
            assert types is not None
            codes = number_view(types.indices)
            present = {name: code for code, name in enumerate(types.dictionary.to_pylist())}
            mask = np.zeros(n, dtype=bool)
            for t in self.types:
                if t not in present:
                    continue
                is_t = codes == present[t]
                m = self._type_mask(t, n, names, cols, numeric, tss, is_t)
                mask |= is_t if m is None else (is_t & m)
        return self._count(n, np.flatnonzero(mask).tolist())

    def _count(self, n: int, kept: list[int]) -> list[int]:
        self.rows_in += n
        self.rows_kept += len(kept)
        return kept

    def _type_mask(
        self,
        etype: str,
        n: int,
        names: Sequence[str],
        cols: Sequence[list[Any]],
        numeric: Sequence[bool],
        tss: Any,
        rows: np.ndarray | None,
    ) -> np.ndarray | None:
        alternatives = self.guards.get(etype)
        if alternatives is None:
            return None
        cache: dict[str, np.ndarray | None] = {}
        index = {name: i for i, name in enumerate(names)}

        def column(name: str) -> Callable[[], np.ndarray | None]:
            def get() -> np.ndarray | None:
                if name not in cache:
                    if name == "ts":
                        cache[name] = column_array(tss)
                    elif name in index and numeric[index[name]]:
                        cache[name] = column_array(cols[index[name]])
                    else:
                        cache[name] = None
                return cache[name]

            return get

        lazy = {name: column(name) for name in [*names, "ts"]}
        out = np.zeros(n, dtype=bool)
        for fns in alternatives:
            m = np.ones(n, dtype=bool)
            for f in fns:
                v = f(lazy) if f is not None else None
                if v is None:
                    return None  # not computable here: keep the type's rows
                m &= np.broadcast_to(np.asarray(v, dtype=bool), (n,))
            out |= m
        return out


def column_array(values: Any) -> np.ndarray | None:
    """A column as numpy sees it; None where numpy would not hold its values exactly: ints
    beyond a float (an object array, or an overflow), or big ints mixed with floats (numpy
    rounds them to float64, Python compares them exactly)."""
    try:
        arr = np.asarray(values)
    except (OverflowError, ValueError, TypeError):
        return None
    if arr.dtype.kind == "f" and arr.size:
        with np.errstate(all="ignore"):
            big = np.any(np.isfinite(arr) & (np.abs(arr) >= EXACT))
        if big and any(type(v) is int for v in values):  # only batches holding big numbers pay this
            return None
    return arr


def _droppable(g: GroupNet) -> bool:
    if g.strategy.contiguous:
        return False
    return not any(r.pending_negations for p in g.places for r in p.roles)


__all__ = ["EXACT", "Prefilter", "column_array", "exact", "vectorize"]
