"""Conditions for the brute-force reference matcher (:mod:`tests.reference`): a condition
split into conjuncts and evaluated over a candidate binding, written from
``docs/SEMANTICS.md`` alone (no engine code: only the AST value classes). ``v[k]`` past
the end of a list is :data:`MISSING`: a comparison reading it is false, arithmetic on it
stays missing; a variable the binding leaves unbound raises :class:`Unbound`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from petricep.lang.ast import (
    AGG_FUNCS,
    ARITH_OPS,
    COMPARE_OPS,
    IDX_CONST,
    IDX_CUR,
    IDX_LAST,
    IDX_PREV,
    Agg,
    Attr,
    BinOp,
    BoolOp,
    Compare,
    Expr,
    Neg,
    Not,
    Num,
    Str,
    walk_expr,
)

__all__ = ["MISSING", "Conjunct", "Env", "Pending", "Unbound", "composite_id", "conjunct", "evaluate", "holds", "return_attrs"]


class _MissingType:
    """The value of ``v[k]`` when the list has fewer than k elements."""

    _instance: _MissingType | None = None

    def __new__(cls) -> _MissingType:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _MissingType()


class Unbound(Exception):
    """An expression read a variable that the match does not bind."""


class Pending(Exception):
    """A partial match's group iteration lacks the step an expression reads (not decidable yet)."""


def _subexprs(expr: Expr) -> Iterator[Expr]:
    """Every node of an expression tree (own walker: no engine helpers)."""
    yield expr
    if isinstance(expr, (BinOp, Compare)):
        yield from _subexprs(expr.left)
        yield from _subexprs(expr.right)
    elif isinstance(expr, BoolOp):
        for operand in expr.operands:
            yield from _subexprs(operand)
    elif isinstance(expr, (Not, Neg)):
        yield from _subexprs(expr.operand)
    elif not isinstance(expr, (Num, Str, Attr, Agg)):
        raise TypeError(f"not an expression node: {expr!r}")


@dataclass(frozen=True)
class Conjunct:
    """One top-level WHERE conjunct and what it refers to."""

    expr: Expr
    vars: frozenset[str]
    iter_var: str | None  # Kleene variable iterated over (v[i], v[i-1], agg(v[..i-1]))
    skip_first: bool  # mentions v[i-1] or v[..i-1]: not checked for i = 1
    whole: frozenset[str]  # Kleene variables read as a whole list (last, count, agg(v[]))
    consts: tuple[tuple[str, int], ...]  # constant indices v[k]
    # the optional steps of the pattern's groups: g[k].c of a group with fewer than k iterations
    # is unbound (the conjunct holds), as where iteration k left c out
    optional: frozenset[str] = frozenset()


def conjunct(expr: Expr, kleene: frozenset[str], optional: frozenset[str] = frozenset()) -> Conjunct:
    names: set[str] = set()
    iters: set[str] = set()
    whole: set[str] = set()
    consts: list[tuple[str, int]] = []
    skip_first = False
    for e in _subexprs(expr):
        if isinstance(e, Attr):
            names.add(e.var)
            if e.index is None:
                if e.var in kleene:
                    raise ValueError(f"Kleene variable {e.var!r} read without an index")
                continue
            if e.var not in kleene:
                raise ValueError(f"index on non-Kleene variable {e.var!r}")
            kind = e.index.kind
            if kind == IDX_CUR:
                iters.add(e.var)
            elif kind == IDX_PREV:
                iters.add(e.var)
                skip_first = True
            elif kind == IDX_LAST:
                whole.add(e.var)
            elif kind == IDX_CONST:
                if e.index.const < 1:
                    raise ValueError(f"index {e.index.const} of {e.var!r}: indices start at 1")
                consts.append((e.var, e.index.const))
            else:
                raise ValueError(f"unknown index kind {kind!r}")
        elif isinstance(e, Agg):
            names.add(e.var)
            if e.var not in kleene:
                raise ValueError(f"aggregate over non-Kleene variable {e.var!r}")
            if e.func not in AGG_FUNCS:
                raise ValueError(f"unknown aggregate {e.func!r}")
            if e.func != "count" and e.field is None:
                raise ValueError(f"{e.func} needs a field")
            if e.upto_prev:
                iters.add(e.var)
                skip_first = True
            else:
                whole.add(e.var)
    if len(iters) > 1:
        raise ValueError(f"one conjunct iterates over several Kleene variables: {sorted(iters)}")
    return Conjunct(
        expr=expr,
        vars=frozenset(names),
        iter_var=next(iter(iters)) if iters else None,
        skip_first=skip_first,
        whole=frozenset(whole),
        consts=tuple(consts),
        optional=optional,
    )


class Env:
    """Values of variables: an Event, or a tuple of Events for a Kleene variable."""

    def __init__(
        self, values: dict[str, Any], it_var: str | None = None, it_i: int = 0, so_far: bool = False, optional: frozenset[str] = frozenset()
    ) -> None:
        self.values = values
        self.optional = optional  # (Conjunct.optional)
        self.it_var = it_var
        self.it_i = it_i  # 1-based index of the element being checked
        # a negation's condition inside a group: a group value is the group so far (its last
        # iteration may lack its later steps: a read of one is MISSING, an aggregate skips it)
        self.so_far = so_far


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _need_numbers(op: str, *values: Any) -> None:
    for v in values:
        if not _is_number(v):
            raise TypeError(f"operator {op!r} needs numbers, got {v!r}")


def _lookup(env: Env, var: str) -> Any:
    if var not in env.values:
        raise Unbound(var)
    return env.values[var]


def _element(env: Env, e: Attr) -> Any:
    value = _lookup(env, e.var)
    if e.index is None:
        return value
    items = value
    kind = e.index.kind
    if kind == IDX_CONST:
        return items[e.index.const - 1] if e.index.const <= len(items) else MISSING
    if kind == IDX_LAST:
        return items[-1]
    if env.it_var != e.var:
        raise ValueError(f"{e.var}[{kind}] used outside an iteration over {e.var!r}")
    i = env.it_i if kind == IDX_CUR else env.it_i - 1
    return items[i - 1]


def evaluate(expr: Expr, env: Env) -> Any:
    if isinstance(expr, (Num, Str)):
        return expr.value
    if isinstance(expr, Attr):
        element = _element(env, expr)
        if element is MISSING and expr.member in env.optional and not env.so_far:
            raise Unbound(f"{expr.var}.{expr.member}")  # no such iteration: it bound no c
        if element is not MISSING and expr.member is not None:  # g[k].step: one iteration's event
            if expr.member not in element:
                if env.so_far:
                    return MISSING
                raise Pending(expr.member)
            element = element[expr.member]
        return MISSING if element is MISSING else element.get(expr.field)
    if isinstance(expr, Agg):
        items = _lookup(env, expr.var)
        if expr.upto_prev:
            if env.it_var != expr.var:
                raise ValueError(f"{expr.func}({expr.var}[..i-1]) used outside an iteration")
            items = items[: env.it_i - 1]
        if expr.func == "count":
            return len(items)
        if expr.member is not None:  # (an aggregate over a step skips the iterations without it: left out, or not bound yet in the group so far)
            items = [x for x in items if expr.member in x]
            if not items and not env.so_far:
                raise Unbound(f"{expr.var}.{expr.member}")  # no iteration bound it: a step left out
        # (a Kleene step's list in each iteration: its every element)
        parts = [x[expr.member] if expr.member is not None else x for x in items]
        values = [e.get(expr.field) for part in parts for e in (part if isinstance(part, tuple) else (part,))]
        _need_numbers(expr.func, *values)
        if not values:
            return MISSING
        if expr.func == "sum":
            return sum(values)
        if expr.func == "avg":
            return sum(values) / len(values)
        if expr.func == "min":
            return min(values)
        return max(values)
    if isinstance(expr, BinOp):
        left = evaluate(expr.left, env)
        right = evaluate(expr.right, env)
        if left is MISSING or right is MISSING:
            return MISSING
        _need_numbers(expr.op, left, right)
        if expr.op == "+":
            return left + right
        if expr.op == "-":
            return left - right
        if expr.op == "*":
            return left * right
        if expr.op == "/":
            return left / right
        if expr.op == "%":
            return left % right
        raise ValueError(f"unknown arithmetic operator {expr.op!r} (known: {ARITH_OPS})")
    if isinstance(expr, Neg):
        value = evaluate(expr.operand, env)
        if value is MISSING:
            return MISSING
        _need_numbers("-", value)
        return -value
    if isinstance(expr, Compare):
        left = evaluate(expr.left, env)
        right = evaluate(expr.right, env)
        if left is MISSING or right is MISSING:
            return False
        return _compare(expr.op, left, right)
    if isinstance(expr, BoolOp):
        if expr.op == "and":
            return all(_truth(evaluate(o, env)) for o in expr.operands)
        if expr.op == "or":
            return any(_truth(evaluate(o, env)) for o in expr.operands)
        raise ValueError(f"unknown boolean operator {expr.op!r}")
    if isinstance(expr, Not):
        return not _truth(evaluate(expr.operand, env))
    raise TypeError(f"not an expression node: {expr!r}")


def _compare(op: str, left: Any, right: Any) -> bool:
    if op in ("=", "=="):
        return _equal(left, right)
    if op == "!=":
        return not _equal(left, right)
    if (_is_number(left) and isinstance(right, str)) or (isinstance(left, str) and _is_number(right)):
        raise TypeError(f"cannot compare {left!r} {op} {right!r}: number and string")
    if op == "<":
        return left < right
    if op == "<=":
        return left <= right
    if op == ">":
        return left > right
    if op == ">=":
        return left >= right
    raise ValueError(f"unknown comparison {op!r} (known: {COMPARE_OPS})")


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) != isinstance(right, str):
        return False  # a number never equals a string
    return bool(left == right)


def _truth(value: Any) -> bool:
    return False if value is MISSING else bool(value)


def holds(conj: Conjunct, env: Env) -> bool:
    """A conjunct over fully known values; iteration conjuncts hold for every element."""
    if conj.iter_var is None:
        try:
            return _truth(evaluate(conj.expr, Env(env.values, env.it_var, env.it_i, env.so_far, conj.optional)))
        except (Unbound, Pending):
            return True  # reads an optional step no iteration (or not the one read) of its group bound: it holds
    items = _lookup(env, conj.iter_var)
    for i in range(1, len(items) + 1):
        if i == 1 and conj.skip_first:
            continue
        for values in _each_element(env.values, conj.iter_var, i, conj.expr):
            try:
                if not _truth(evaluate(conj.expr, Env(values, conj.iter_var, i, optional=conj.optional))):
                    return False
            except Pending:
                continue  # a partial iteration: checked once its step is bound
    return True


def _each_element(values: dict[str, Any], var: str, i: int, expr: Expr) -> Iterator[dict[str, Any]]:
    """``values`` once per element of each Kleene step of group ``var`` that ``expr`` reads
    at ``g[i]`` in iteration ``i``, that step bound to the element (an iteration condition
    holds for each element of its list: SQL's DEFINE on a row of ``C+``); else ``values``."""
    items = values.get(var)
    it = items[i - 1] if isinstance(items, (list, tuple)) and len(items) >= i else None
    read = sorted(
        {e.member for e in walk_expr(expr) if isinstance(e, Attr) and e.var == var and e.member is not None and e.index is not None and e.index.kind == IDX_CUR}
    )
    lists = [m for m in read if isinstance(it, dict) and isinstance(it.get(m), tuple)]
    if not lists:
        yield values
        return
    assert isinstance(it, dict) and isinstance(items, (list, tuple))
    for combo in itertools.product(*(it[m] for m in lists)):
        yield {**values, var: [*items[: i - 1], {**it, **dict(zip(lists, combo))}, *items[i:]]}


def holds_at(c: Conjunct, env: Env, k: int | None) -> bool:
    """A negation's conjunct inside a group, ``env`` holding the group as it stood while the
    interval was open (the iterations before, and the steps before the negation of the one
    it lies in); one reading ``g[i]`` / ``g[i-1]`` (a negation between two steps) at the
    iteration ``k`` the interval lies in, ``g[i-1]`` vacuous on the first."""
    if c.iter_var is None or k is None:
        return _truth(evaluate(c.expr, Env(env.values, so_far=True)))
    if k == 1 and c.skip_first:
        return True
    return _truth(evaluate(c.expr, Env(env.values, c.iter_var, k, so_far=True)))


def composite_id(name: str, ids: dict[str, Any], order: list[str]) -> str:
    """``name[id,id+id,...]``: the match's ids in variable order, a Kleene list joined by '+',
    a repeated group's iterations each ``b;c`` (a Kleene step's list in one as ``c1|c2``)."""
    values = [ids[v] for v in order if v in ids]
    parts = ["+".join(_iteration(i) if isinstance(i, dict) else str(i) for i in v) if isinstance(v, list) else str(v) for v in values]
    return f"{name}[{','.join(parts)}]"


def _iteration(it: dict[str, Any]) -> str:
    return ";".join("|".join(map(str, x)) if isinstance(x, (list, tuple)) else str(x) for x in it.values())


def return_attrs(pattern: Any, env: Env, optional: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A match's RETURN attributes (None for a field reading an unbound variable; ``optional``:
    Conjunct.optional)."""
    if pattern.returns is None:
        return {}
    attrs: dict[str, Any] = {}
    for f in pattern.returns.fields:
        try:
            value = evaluate(f.expr, Env(env.values, env.it_var, env.it_i, env.so_far, optional))
        except (Unbound, Pending):  # (g[last].c: an optional step its iteration left out)
            value = None
        attrs[f.name] = None if value is MISSING else value
    return attrs
