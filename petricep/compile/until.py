"""Stop conditions, ``T+ v[] UNTIL U u`` (issue 42, FlinkCEP's ``until``), as net structure.

A stop event is a *pushed negation that stops a list instead of cancelling a match*: it
is listed among the net's negations (:class:`~petricep.compile.net.Negation` with ``stops``
set), open at the places where the list grows (the sources of its take transitions), and it
*blocks* the list's take transitions for the tokens it hits (``blocked_by``; nothing clears
the bit), as a negation after a growing list blocks the step after the list. The other
transitions of such a place (the step after the list) stay enabled: the partial match may
go on. Where a place has no other way on (a ``T{n,}`` list below ``n``) the stop event
cancels the token instead: it has no future.

The interval is the negation's: after the list's last event so far (``prev_slots``: the
list's slot; by arrival, or by timestamp under the tie rules ``strict``/``either``), with no
upper bound (the token is in the place, so its next element has not come). A stop event of
the list's own type must not become an element either: every take transition of the list
also gets the guard ``NOT (stop conditions)`` read on the new element (``v[last]``), so an
event that would stop the list is not taken into it (FlinkCEP's take condition is
``NOT until AND ...`` alike; the list's first element is exempt there and here). A stop
condition reading the list reads it *so far*: on a stop event the token's list is that
already (a negation condition on its slots); in the element guard it is the list before the
new element, so the guard is an iteration condition of the list (:func:`on_element`).

So both engines run it with the machinery they have (tokens' blocked bits, pushed
negations, guards): the compiled kernel with no change of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from petricep.lang import ast as A

#: the guard of a take when the stop event has no condition: every event of its type stops
_FALSE = A.Compare("<", A.Num(1), A.Num(0))


def on_element(expr: A.Expr, stop: str, lst: str, iterate: bool = False) -> A.Expr:
    """``expr`` with the stop event ``stop`` read as the list's new element (``lst[last]``).
    ``iterate`` (a stop condition reading the list too: it reads the list *so far*, the
    elements before the new one): as an iteration condition of the list, the stop event
    ``lst[i]``, ``lst[last]`` the element before it (``lst[i-1]``), an aggregate over the
    list one over ``lst[..i-1]``; ``lst[1]`` stays (a take adds the second element or later),
    and ``lst[k]`` (k >= 2) stays in a comparison that also asks ``count(lst[..i-1]) >= k``:
    the list so far may not have it yet, and a comparison reading a missing element is false."""
    if not iterate:
        last = A.Index(A.IDX_LAST)
        return A.map_leaves(expr, lambda e: replace(e, var=lst, index=last) if isinstance(e, A.Attr) and e.var == stop else e)
    cur, prev = A.Index(A.IDX_CUR), A.Index(A.IDX_PREV)

    def leaf(e: A.Expr) -> A.Expr:
        if isinstance(e, A.Attr) and e.var == stop:
            return replace(e, var=lst, index=cur)
        if isinstance(e, A.Attr) and e.var == lst and e.index is not None and e.index.kind == A.IDX_LAST:
            return replace(e, index=prev)
        if isinstance(e, A.Agg) and e.var == lst:
            return replace(e, upto_prev=True)
        return e

    return _so_far(A.map_leaves(expr, leaf), lst)


def _so_far(expr: A.Expr, lst: str) -> A.Expr:
    """Each comparison of ``expr`` reading ``lst[k]`` (k >= 2) false unless the elements
    before the new one include the k-th (otherwise it would read the new element)."""
    if isinstance(expr, A.Compare):
        ks = [e.index.const for e in A.walk_expr(expr) if isinstance(e, A.Attr) and e.var == lst and e.index is not None
              and e.index.kind == A.IDX_CONST and e.index.const > 1]
        if not ks:
            return expr
        has = A.Compare(">=", A.Agg("count", lst, None, upto_prev=True), A.Num(max(ks)))
        return A.BoolOp("and", (has, expr))
    if isinstance(expr, A.BoolOp):
        return replace(expr, operands=tuple(_so_far(o, lst) for o in expr.operands))
    if isinstance(expr, A.Not):
        return replace(expr, operand=_so_far(expr.operand, lst))
    return expr


def element_guard(lst: A.EventRef, stop: A.EventRef, conditions: Sequence[A.Expr]) -> A.Expr | None:
    """The guard of ``lst``'s take transitions that keeps a stop event out of the list: None
    where the stop event has another type (it can never be an element)."""
    if stop.type != lst.type:
        return None
    named = [c for c in conditions if stop.var in A.vars_of(c)]
    if not named:
        return _FALSE
    iterate = any(lst.var in A.vars_of(c) for c in named)
    mine = [on_element(c, stop.var, lst.var, iterate) for c in named]
    return A.Not(mine[0] if len(mine) == 1 else A.BoolOp("and", tuple(mine)))


def stop_places(edges: Sequence[tuple[int, str, str, object, bool]], var: str) -> dict[int, bool]:
    """The places where list ``var`` grows (a take transition of it leaves them), each with
    whether a token there has another way on (then a stop event blocks its takes; else it
    cancels the token)."""
    grows = {src for src, _t, v, _new, take in edges if take and v == var}
    return {
        pid: any(src == pid and not (take and v == var) for src, _t, v, _new, take in edges)
        for pid in sorted(grows)
    }
