"""The brute-force reference's reading of a negation under skip-till-next-match and
GREEDY / RELUCTANT (tests/reference.py ``Matcher.extends``).

Those rules ask whether an event *could extend* a partial match. An event that would bind
the step after a negation (its Q, P bound) while an event the negation forbids already
stands after P cannot: every match so extended would have that event between P and Q. The
engines see this where they check the negation while the partial match waits (a *pushed*
negation: compile/compiler.py pushes one between two steps of a SEQ whose conditions read
only what is bound by then), and only there: a negation checked once the match is complete
(its conditions read a later step, an AND sibling or a list still open, or it stands beside
an optional step) lets the event extend the partial match, which then fails at emission.
So this module decides, as the compiler does, which negations are pushed, and for those
refuses the extension.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from petricep.lang.ast import EventRef, Group, Node, Seq
from tests.reference_conditions import holds


def _positive_vars(node: Node) -> set[str]:
    if isinstance(node, (EventRef, Group)):
        return set() if isinstance(node, EventRef) and node.negated else {node.var}
    return {v for child in node.children for v in _positive_vars(child)}


def beside_optional(tree: Node) -> set[str]:
    """Negations whose nearest positive step on a side is an optional step (never pushed)."""
    out: set[str] = set()
    if isinstance(tree, (EventRef, Group)):
        return out
    if isinstance(tree, Seq):
        kids = tree.children
        for i, c in enumerate(kids):
            if isinstance(c, EventRef) and c.negated:
                sides: list[Iterable[Node]] = [reversed(kids[:i]), kids[i + 1 :]]
                for side in sides:
                    k = next((k for k in side if not (isinstance(k, EventRef) and k.negated)), None)
                    if (isinstance(k, EventRef) and (k.optional or (k.kleene and k.least == 0))) or (
                        isinstance(k, Group) and k.least == 0
                    ):
                        out.add(c.var)
    for child in tree.children:
        out |= beside_optional(child)
    return out


def pushed(m: Any, shape: Any, spec: Any) -> bool:
    """Whether the engines check negation ``spec`` of ``shape`` while the partial match waits
    between P and Q: both exist, no optional step beside it or read by its conditions, not
    inside a repeated group, and each condition reads only variables bound there (before Q,
    in this resolution: a variable of an OR branch not taken is vacuous) and whole lists only
    of lists closed there (before P)."""
    n = spec.ref.var
    if spec.prev is None or spec.next is None or n in m.group_negs or n in m.beside_optional:
        return False
    pvars, qvars = _positive_vars(spec.prev), _positive_vars(spec.next)
    for c in m.negation_conj[n]:
        if c.vars & m.optional_sibs.keys():
            return False
        closed = c.whole | {v for v, k in c.consts if k != 1}
        for u in c.vars - {n}:
            if u not in shape.vars:
                continue
            if not any((u, q) in shape.prec for q in qvars):
                return False
            if u in closed and not any((u, p) in shape.prec for p in pvars):
                return False
    return True


def blocked(m: Any, shape: Any, prefix: dict[str, Any], var: str, x: Any, env_of: Callable[[dict[str, Any]], Any]) -> bool:
    """Whether ``x``, bound to ``var``, cannot extend ``prefix`` in ``shape``: ``var`` starts
    the Q of a pushed negation whose P is bound in ``prefix`` and an event it forbids stands
    between P's last event and ``x``."""
    for spec in shape.negs:
        if spec.next is None or var not in _positive_vars(spec.next) or _positive_vars(spec.next) & prefix.keys():
            continue
        if spec.prev is None or not _positive_vars(spec.prev) <= prefix.keys() or not pushed(m, shape, spec):
            continue
        bound = [i for value in prefix.values() for i in _items(value)]
        used = {i.idx for i in bound}
        key = m.pkey(bound[0])
        prev_items = [i for v in _positive_vars(spec.prev) for i in _items(prefix[v])]
        n = spec.ref
        conds = [c for c in m.negation_conj[n.var] if c.vars - {n.var} <= shape.vars]
        for y in m.by_type.get(n.type, []):
            if y.idx in used or (m.partition and m.pkey(y) != key):
                continue
            if not (m.above_lower(y, prev_items, bound[0]) and m.below_upper(y, [x], x)):
                continue
            env = env_of({**prefix, n.var: y})
            if all(holds(c, env) for c in conds):
                return True
    return False


def _items(value: Any) -> list[Any]:
    """The events of a bound value: one, a list's, a group's iterations' (tests/reference.py)."""
    if not isinstance(value, tuple):
        return [value]
    return [x for v in value for x in (v.values() if isinstance(v, dict) else (v,))]
