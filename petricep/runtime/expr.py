"""Expression AST -> Python closures.

Only validated AST nodes are compiled; no text from a pattern file is ever passed
to ``eval``/``exec``. A closure takes ``(slots, x)``: the partial match's slot tuple
(an Event per single variable, a Kleene state tuple per Kleene variable) and the
candidate negated event ``x`` (or None).

Kleene state tuple: ``(first, last, prev, count, prev_accs, accs, head)`` — ``accs``
aggregate the whole list, ``prev_accs`` the list before its last element, ``head``
the first few elements for ``v[k]``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from petricep.compile.net import AggSpec, KleeneInfo
from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.lang import ast as A

Fn = Callable[[Any, Any], Any]

K_FIRST, K_LAST, K_PREV, K_COUNT, K_PREV_ACCS, K_ACCS, K_HEAD = range(7)


class Skip(Exception):
    """The conjunct does not apply (v[i-1] at i = 1): it holds vacuously."""


class Missing(Exception):
    """A value does not exist (v[3] of a 2-element list, division by zero): the conjunct fails."""


# docs/SEMANTICS.md "Numbers": floats follow IEEE 754 (overflow gives ±inf, NaN propagates,
# every comparison with NaN but != is false); ints are exact; an int that a float operation
# cannot convert (1e308 * 10**400, 10**400 / 3) stops the run with this error, in conditions,
# aggregates and RETURN alike. The engine adds the pattern (``OVERFLOW_FLAG``).
OVERFLOW_FLAG = "number_overflow"


def number_text(v: Any) -> str:
    """A value for an error message: a huge int by its size (its digits may not even print)."""
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 64:
        return f"<{'-' if v < 0 else ''}integer of {len(str(abs(v))) if v.bit_length() < 14000 else 'over 4200'} digits>"
    return repr(v)


def overflow_error(what: str, where: str = "") -> EvaluationError:
    """The typed error of an int too large for a float (see ``OVERFLOW_FLAG``)."""
    exc = EvaluationError(f"number too large for a float: {what}{where}")
    setattr(exc, OVERFLOW_FLAG, True)
    return exc


def with_pattern(exc: EvaluationError, where: str) -> EvaluationError:
    """A number overflow (``OVERFLOW_FLAG``) raised evaluating ``where`` (a pattern, a query)."""
    placed = EvaluationError(f"{where}: {exc}")
    setattr(placed, OVERFLOW_FLAG, False)
    return placed


def nan_min(a: Any, b: Any) -> Any:
    """min of two values where a NaN wins (Python's min depends on the order then)."""
    if a != a:  # noqa: PLR0124 - NaN test that also works on ints
        return a
    if b != b:  # noqa: PLR0124
        return b
    return a if a <= b else b


def nan_max(a: Any, b: Any) -> Any:
    """max of two values where a NaN wins."""
    if a != a:  # noqa: PLR0124
        return a
    if b != b:  # noqa: PLR0124
        return b
    return a if a >= b else b


ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "%": operator.mod,
}
COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _field_getter(name: str) -> Callable[[Event], Any]:
    if name == "ts":
        return lambda e: e.ts
    if name == "id":
        return lambda e: e.id
    if name == A.POS_FIELD:  # an EVENTS gap's guard (compile/gaps.py): the input position
        return lambda e: e.pos

    def get(e: Event) -> Any:
        try:
            return e.attrs[name]
        except KeyError:
            raise EvaluationError(f"event {e.id!r} (type {e.type!r}) has no field {name!r}") from None

    return get


def agg_init(spec: AggSpec, e: Event) -> Any:
    if spec.func == "count":
        return 1
    v = e.attrs.get(spec.field) if spec.field not in ("ts", "id") else e.get(spec.field or "")  # type: ignore[arg-type]
    if isinstance(v, str) and spec.func in ("sum", "avg"):
        raise EvaluationError(aggregate_message(spec.func, spec.field or "", v))
    if spec.func == "avg":
        return (v, 1) if v is not None else (0, 0)
    return v


def agg_step(spec: AggSpec, acc: Any, e: Event) -> Any:
    if spec.func == "count":
        return acc + 1
    v = e.attrs.get(spec.field) if spec.field not in ("ts", "id") else e.get(spec.field or "")  # type: ignore[arg-type]
    if v is None:
        return acc
    if isinstance(v, str) and spec.func in ("sum", "avg"):  # (not Python's concatenation: SQL's type error)
        raise EvaluationError(aggregate_message(spec.func, spec.field or "", v))
    try:
        if spec.func == "sum":
            return v if acc is None else acc + v
        if spec.func == "avg":
            return (acc[0] + v, acc[1] + 1)
        if acc is None:
            return v
        return nan_min(acc, v) if spec.func == "min" else nan_max(acc, v)
    except OverflowError:
        raise overflow_error(f"{spec.func}(...[].{spec.field}) adding {number_text(v)}", f" (event {e.id!r})") from None
    except TypeError:
        raise EvaluationError(aggregate_message(spec.func, spec.field or "", v, acc)) from None


def aggregate_message(func: str, field: str, v: Any, acc: Any = None) -> str:
    """The wording both engines give an aggregate that cannot take ``v`` (the kernel's through
    kernel/run.py): a text in a sum or an average, or a text beside a number in min / max."""
    if func in ("sum", "avg"):
        return f"{func}() over field {field!r}: {number_text(v)} is a text, not a number"
    return f"{func}() over field {field!r}: cannot compare {number_text(v)} with {number_text(acc)}"


def agg_value(spec: AggSpec, acc: Any) -> Any:
    if spec.func == "avg":
        if acc[1] == 0:
            raise Missing
        try:
            return acc[0] / acc[1]
        except OverflowError:
            raise overflow_error(f"avg(...[].{spec.field}) = {number_text(acc[0])} / {acc[1]}") from None
    if acc is None:
        raise Missing
    return acc


def kleene_start(info: KleeneInfo, e: Event) -> tuple[Any, ...]:
    return (e, e, None, 1, None, tuple(agg_init(s, e) for s in info.aggs), (e,))


def kleene_take(info: KleeneInfo, k: tuple[Any, ...], e: Event) -> tuple[Any, ...]:
    accs = k[K_ACCS]
    head = k[K_HEAD]
    if len(head) < info.head:
        head = head + (e,)
    return (
        k[K_FIRST],
        e,
        k[K_LAST],
        k[K_COUNT] + 1,
        accs,
        tuple(agg_step(s, a, e) for s, a in zip(info.aggs, accs)),
        head,
    )


def compile_expr(
    expr: A.Expr,
    slots: Mapping[str, int],
    kleene: Mapping[str, KleeneInfo],
    neg_var: str | None = None,
) -> Fn:
    """Compile one validated expression into a closure ``f(slots, x)``."""

    def c(e: A.Expr) -> Fn:
        if isinstance(e, (A.Num, A.Str)):
            value = e.value
            return lambda s, x: value
        if isinstance(e, A.Attr):
            return _attr_fn(e, slots, neg_var)
        if isinstance(e, A.Agg):
            return _agg_fn(e, slots, kleene)
        if isinstance(e, A.Neg):
            f = c(e.operand)
            return lambda s, x: -f(s, x)
        if isinstance(e, A.BinOp) and not isinstance(e.left, A.BinOp):
            step = _arith_step(e, c(e.right), slots, neg_var)
            lf = c(e.left)
            return lambda s, x: step(lf(s, x), s, x)
        if isinstance(e, A.BinOp):
            # a chain ((a + b) - c) * d: one loop, not one Python frame per operator, so
            # long sums evaluate (and compile) within the recursion limit
            steps = []
            node: A.Expr = e
            while isinstance(node, A.BinOp):
                steps.append(_arith_step(node, c(node.right), slots, neg_var))
                node = node.left
            steps.reverse()
            return _chain_fn(c(node), steps)
        if isinstance(e, A.Compare):
            return _compare_fn(e, c(e.left), c(e.right))
        if isinstance(e, A.BoolOp):
            fs = tuple(c(o) for o in e.operands)
            if e.op == "and":
                return lambda s, x: all(f(s, x) for f in fs)
            return lambda s, x: any(f(s, x) for f in fs)
        if isinstance(e, A.Not):
            f = c(e.operand)
            return lambda s, x: not f(s, x)
        raise TypeError(f"not an expression: {e!r}")  # pragma: no cover

    return c(expr)


def _state(s: tuple[Any, ...], i: int) -> tuple[Any, ...]:
    """The Kleene list state in slot ``i``; Skip where the list is unbound (an OR left it out,
    or a timed-out partial match has not bound it yet): a RETURN or ON TIMEOUT field reading
    it is null, as a field reading an unbound single variable."""
    k = s[i]
    if k is None:
        raise Skip
    return k  # type: ignore[no-any-return]


def _attr_fn(e: A.Attr, slots: Mapping[str, int], neg_var: str | None) -> Fn:
    """``v.field``, ``v[k].field``, ``v[i].field``, ``v[i-1].field`` or the negated event's."""
    get = _field_getter(e.field)
    if e.var == neg_var:
        return lambda s, x: get(x)
    i = slots[e.var]
    if e.index is None:

        def single(s: Any, x: Any) -> Any:
            ev = s[i]
            if ev is None:  # left unbound by an OR: the conjunct holds vacuously
                raise Skip
            return get(ev)

        return single
    kind = e.index.kind
    if e.index.of:
        return _in_iteration_fn(e, i, slots[e.index.of], get)
    if kind == A.IDX_CONST and e.index.const == 1:
        return lambda s, x: get(_state(s, i)[K_FIRST])
    if kind == A.IDX_CONST:
        k = e.index.const - 1

        def nth(s: tuple[Any, ...], x: Any) -> Any:
            head = _state(s, i)[K_HEAD]
            if k >= len(head):
                raise Missing
            return get(head[k])

        return nth
    if kind in (A.IDX_CUR, A.IDX_LAST):
        return lambda s, x: get(_state(s, i)[K_LAST])

    def prev(s: tuple[Any, ...], x: Any) -> Any:
        p = _state(s, i)[K_PREV]
        if p is None:
            raise Skip
        return get(p)

    return prev


def _in_iteration_fn(e: A.Attr, i: int, r: int, get: Callable[[Any], Any]) -> Fn:
    """A group's optional step read by iteration (``g[k].c`` as ``c[k]``, ``g[last].c`` as
    ``c[last]``, ``g[i-1].c`` as ``c[i-1]``, compile/groups.py): the element only where it lies
    in that iteration, which the elements of the group's first required step ``r`` delimit
    (after the iteration's own one and before the next's; for a step before ``r``,
    ``Index.leads``, after the previous one's and before its own, or after the last one's in
    the iteration it begins, not complete yet); else unbound, as a step the
    iteration left out (Skip: the conjunct holds, RETURN null), and so where the group has no
    such iteration. An iteration holds one element of the step at most, so iteration k's is
    among its first k, the last iteration's or the one before's among its last two."""
    assert e.index is not None
    kind, leads = e.index.kind, e.index.leads
    if kind == A.IDX_CONST:
        k = e.index.const

        def nth(s: tuple[Any, ...], x: Any) -> Any:
            # (the first k + 1 elements: compile/compiler.py _kleene_info; none yet before a step before it)
            rs = _state(s, r)[K_HEAD] if s[r] is not None or not leads else ()
            if len(rs) < k - leads:
                raise Skip
            if leads:  # (after the last element: the iteration it begins, not complete yet)
                lo, hi = (rs[k - 2] if k >= 2 else None), (rs[k - 1] if len(rs) >= k else None)
            else:
                lo, hi = rs[k - 1], (rs[k] if len(rs) > k else None)
            return get(_within(_state(s, i)[K_HEAD][:k], lo, hi))

        return nth

    def near(s: tuple[Any, ...], x: Any) -> Any:
        rs = _state(s, r)
        if kind == A.IDX_PREV:  # (the iteration before the last one's start; vacuous on the first)
            if rs[K_PREV] is None:
                raise Skip
            lo, hi = rs[K_PREV], rs[K_LAST]
        else:
            lo, hi = (rs[K_PREV], rs[K_LAST]) if leads else (rs[K_LAST], None)
        ks = _state(s, i)
        return get(_within((ks[K_PREV], ks[K_LAST]), lo, hi))

    return near


def _within(pool: Any, lo: Event | None, hi: Event | None) -> Event:
    """The last element of ``pool`` (in list order) before ``hi`` if it lies after ``lo`` (None:
    no bound); Skip where there is none (the iteration left the step out)."""
    for ev in reversed(pool):
        if ev is not None and (hi is None or ev.pos < hi.pos):
            if lo is not None and ev.pos < lo.pos:
                break
            return ev
    raise Skip


def _agg_fn(e: A.Agg, slots: Mapping[str, int], kleene: Mapping[str, KleeneInfo]) -> Fn:
    """An aggregate of a Kleene list, from its registers (``upto_prev``: before the last element)."""
    i = slots[e.var]
    info = kleene[e.var]
    j = info.aggs.index(AggSpec(e.func, e.field))
    spec = info.aggs[j]
    if e.upto_prev:

        def prefix(s: tuple[Any, ...], x: Any) -> Any:
            accs = _state(s, i)[K_PREV_ACCS]
            if accs is None:
                raise Skip
            return agg_value(spec, accs[j])

        return prefix
    return lambda s, x: agg_value(spec, _state(s, i)[K_ACCS][j])


def _chain_fn(first: Fn, steps: list[Any]) -> Fn:
    def chain(s: tuple[Any, ...], x: Any) -> Any:
        v = first(s, x)
        for step in steps:
            v = step(v, s, x)
        return v

    return chain


def _compare_fn(e: A.Compare, lf: Fn, rf: Fn) -> Fn:
    """A comparison; one reading a Kleene element that does not exist is false."""
    cmp = COMPARE[e.op]
    if e.op in ("=", "!="):

        def equality(s: Any, x: Any) -> Any:
            try:
                return cmp(lf(s, x), rf(s, x))
            except Missing:  # reads an element that does not exist: false
                return False

        return equality

    def order(s: tuple[Any, ...], x: Any) -> Any:
        try:
            a, b = lf(s, x), rf(s, x)
        except Missing:
            return False
        try:
            return cmp(a, b)
        except TypeError:
            raise EvaluationError(f"cannot compare {a!r} {e.op} {b!r}") from None

    return order


def _arith_step(
    e: A.BinOp, rf: Fn, slots: Mapping[str, int], neg_var: str | None
) -> Callable[[Any, Any, Any], Any]:
    """``e`` applied to its left operand's value ``a``: ``step(a, slots, x)``."""
    op = ARITH[e.op]
    read = _reads(e, slots, neg_var)

    def step(a: Any, s: Any, x: Any) -> Any:
        b = rf(s, x)
        try:
            return op(a, b)
        except ZeroDivisionError:
            raise Missing from None
        except OverflowError:
            raise overflow_error(f"{number_text(a)} {e.op} {number_text(b)}", read(s, x)) from None
        except TypeError:
            raise EvaluationError(f"cannot compute {a!r} {e.op} {b!r}") from None

    return step


def _reads(e: A.Expr, slots: Mapping[str, int], neg_var: str | None) -> Callable[[Any, Any], str]:
    """`` (field 'x' of event 'e1', ...)``: the events and fields ``e`` reads, for an error."""

    def describe(s: Any, x: Any) -> str:  # walks ``e`` only for an error: chains share nodes
        out = []
        for a in [a for a in A.walk_expr(e) if isinstance(a, A.Attr)]:
            if a.var == neg_var:
                ev = x
            else:
                ev = s[slots[a.var]]
                if isinstance(ev, tuple):  # a Kleene state: name its last element
                    ev = ev[K_LAST]
            if ev is not None:
                out.append(f"field {a.field!r} of event {ev.id!r}")
        return f" ({', '.join(dict.fromkeys(out))})" if out else ""

    return describe


def as_condition(fn: Fn) -> Callable[[Any, Any], bool]:
    """A top-level conjunct: vacuous on Skip, false on Missing."""

    def cond(s: Any, x: Any) -> bool:
        try:
            return bool(fn(s, x))
        except Skip:
            return True
        except Missing:
            return False

    return cond
