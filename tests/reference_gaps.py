"""The brute-force reference's per-step gaps (issue 42): ``T v AFTER lo TO hi [unit] [FROM u]``
is a constraint on the pair (v, u), ``lo <= v.ts - u.ts <= hi`` (seconds times the unit's
factor), ``u`` the variable named, else the positive element before ``v`` in its SEQ, per OR
and optional-step resolution (a step after an optional step left out follows the one before
it). On a Kleene list it is the chain: the first element after ``u``, each later element
after the one before it; from a list, its last element. A ``u`` not bound (an OR branch not
taken, an optional step left out) constrains nothing but the chain. A gap in ``EVENTS`` is the
same on the events' input positions (``pos``, as ``WITHIN n EVENTS`` counts them)."""

from __future__ import annotations

from typing import Any

from petricep.lang.ast import DURATION_UNITS, EventRef, Group, Node, Seq, events_of


def _is_negation(node: Node) -> bool:
    return isinstance(node, EventRef) and node.negated


Base = str | frozenset[str]  # a variable, or an AND/OR's (the gap follows the latest bound)


def gap_pairs(node: Node) -> dict[str, tuple[Base, float, float, bool]]:
    """var -> (the variable it follows, low, high, in EVENTS) for every gapped element of a SEQ."""
    out: dict[str, tuple[Base, float, float, bool]] = {}
    if isinstance(node, (EventRef, Group)):  # a group's gaps: tests/reference_groups.py
        return out
    previous: Base | None = None
    for child in node.children:
        out.update(gap_pairs(child))
        if isinstance(child, EventRef) and child.gap is not None:
            g = child.gap
            base = g.after if g.after is not None else previous
            if base is None:
                raise ValueError(f"gap on {child.var!r} follows nothing")
            scale = DURATION_UNITS[g.unit] if g.unit and not g.in_events else 1
            out[child.var] = (base, g.low * scale, g.high * scale, g.in_events)
        if isinstance(node, Seq) and not _is_negation(child):
            positive = frozenset(r.var for r in events_of(child) if not r.negated)
            previous = child.var if isinstance(child, (EventRef, Group)) else positive
    return out


def gap_base(partial: dict[str, Any], base: Base, groups: dict[str, str]) -> Any:
    """The bound value a gap follows: ``base``'s (a step of a repeated group, ``groups``
    naming its group: the last iteration's); an AND/OR's: the latest event among the bound
    variables, a group's steps among them (None: none bound)."""
    if isinstance(base, str):
        if base in groups and groups[base] in partial:  # the last iteration's step
            return partial[groups[base]][-1][base]
        return partial.get(base)
    bound = [v for v in (_latest(partial, u, groups) for u in base) if v is not None]
    return max(bound, key=lambda i: i.key, default=None)


def _latest(partial: dict[str, Any], var: str, groups: dict[str, str]) -> Any:
    """The latest event bound to ``var``: a list's last element; a group's step: the last
    iteration's (None: unbound)."""
    if var in groups:
        value = partial.get(groups[var])
        return value[-1][var] if value else None
    v = partial.get(var)
    return v[-1] if isinstance(v, tuple) else v


def gap_holds(value: Any, base: Any, lo: float, hi: float, events: bool = False) -> bool:
    """A gap between a step's value and the event it follows: a single event's time, or a
    list's chain (its first element after ``base``, each later one after the element before
    it); ``base`` a list: its last element, a group: its last iteration's last step. ``base``
    None (not bound): the chain alone."""
    items = value if isinstance(value, tuple) else (value,)

    def at(x: Any) -> Any:
        return x.ev.pos if events else x.ev.ts

    if base is not None:
        before = base[-1] if isinstance(base, tuple) else base
        if isinstance(before, dict):  # a repeated group's last iteration: its last step
            before = list(before.values())[-1]
        if not lo <= at(items[0]) - at(before) <= hi:
            return False
    return all(lo <= at(y) - at(x) <= hi for x, y in zip(items, items[1:]))
