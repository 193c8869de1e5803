"""Stop conditions (``T+ v[] UNTIL U u``, issue 42) for the brute-force reference matcher
(:mod:`tests.reference`), written from docs/SEMANTICS.md ("Stop conditions") alone.

A match binding list ``v = [e1, ..., ek]`` stopped by ``U u`` (or a repeated group, its events
in stream order ``e1, ..., ek``: ``SEQ(...)+ g[] UNTIL U u``) exists only if

* no element ``e_i`` after the first is of type U and satisfies the stop conditions (read with
  ``u`` := the element and ``v`` := the list so far, ``[e_1, ..., e_(i-1)]``),
* and no event ``x`` of type U, not bound in the match, with the match's partition key and
  satisfying the stop conditions (``u`` := x, ``v`` := ``[e_1, ..., e_j]``; a group's: the
  iterations those events begun, the last one partial) lies between two
  consecutive elements: after ``e_j`` and before ``e_(j+1)``, by stream order under the tie
  rule ``arrival`` and by timestamp (strictly) under ``strict`` and ``either``, as a
  negation's interval is.

Both are prefix-closed, so the same test decides a partial match (skip-till-next-match asks
whether an event extends one: a stopped list extends no more).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from petricep.lang.ast import EventRef, Node, all_stops_of
from tests.reference_conditions import Conjunct, Env, holds

if TYPE_CHECKING:
    from tests.reference import Item, Matcher


def stops(tree: Node) -> dict[str, EventRef]:
    """List variable (or repeated group) -> its stop event."""
    return {lst.var: stop for lst, stop in all_stops_of(tree)}


def _events(value: Any) -> tuple[Any, ...]:
    """A value's events: one, a list's, a group's (its iterations' steps, a Kleene step's elements)."""
    if not isinstance(value, tuple):
        return (value,)
    return tuple(y for v in value for x in (v.values() if isinstance(v, dict) else (v,)) for y in (x if isinstance(x, tuple) else (x,)))


def _after(tie: str, x: Item, y: Item) -> bool:
    if tie == "arrival":
        return (x.ev.ts, x.key) > (y.ev.ts, y.key)
    return bool(x.ev.ts > y.ev.ts)


def until_ok(m: Matcher, binding: dict[str, Any], conj: dict[str, list[Conjunct]], values: dict[str, Any]) -> bool:
    """Whether no stop event stops a list of ``binding`` (a match or a partial match);
    ``conj``: each stop variable's conjuncts; ``values``: the binding's values (its Env)."""
    used = None
    for var, stop in m.stops.items():
        lst = binding.get(var)
        if not lst:
            continue
        mine = conj[stop.var]
        group = var in m.groups
        if group:  # a group's events in stream order, iteration by iteration (its chain; a Kleene step's in order)
            lst = tuple(x for it in lst for item in it.values() for x in (item if isinstance(item, tuple) else (item,)))

        def stopped(ev: Any, j: int, mine: list[Conjunct] = mine, u: str = stop.var, v: str = var, group: bool = group) -> bool:
            """The stop conditions on ``ev`` with the list so far its first ``j`` elements (a
            group's: the iterations its first ``j`` events begun, the last one maybe partial)."""
            env = Env({**values, v: _group_prefix(values[v], j) if group else values[v][:j], u: ev})
            return all(holds(c, env) for c in mine)

        if any(el.ev.type == stop.type and stopped(el.ev, j) for j, el in enumerate(lst[1:], 1)):
            return False
        if used is None:
            used = {i.idx for value in binding.values() for i in _events(value)}
        key = m.pkey(lst[0])
        for x in m.by_type.get(stop.type, []):
            if x.idx in used or (m.partition and m.pkey(x) != key):
                continue
            if any(_after(m.tie, x, a) and _after(m.tie, b, x) and stopped(x.ev, j) for j, (a, b) in enumerate(zip(lst, lst[1:]), 1)):
                return False
    return True


def _group_prefix(value: tuple[dict[str, Any], ...], j: int) -> tuple[dict[str, Any], ...]:
    """A group's first ``j`` events (iteration by iteration, step by step) as its iterations:
    the last one holds the steps it has bound so far."""
    out: list[dict[str, Any]] = []
    for it in value:
        if j <= 0:
            break
        part: dict[str, Any] = {}
        for step, item in it.items():
            if j <= 0:
                break
            part[step] = item[:j] if isinstance(item, tuple) else item  # (a Kleene step's first elements)
            j -= len(part[step]) if isinstance(item, tuple) else 1
        out.append(part)
    return tuple(out)
