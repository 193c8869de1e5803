"""The order the brute-force reference (:mod:`tests.reference`) runs a program's patterns in:
producers of RETURN types before the patterns that consume them (as steps, negations or stop
events), and each pattern's transitive producers, whose composite events its stream holds."""

from __future__ import annotations

from collections.abc import Sequence

from petricep.lang.ast import EventRef, Group, Node, Pattern
from tests import reference_groups as RG
from tests import reference_until as RU


def _leaves(node: Node) -> list[EventRef | Group]:
    """The event references and repeated groups of a structure, left to right."""
    if isinstance(node, (EventRef, Group)):
        return [node]
    return [r for child in node.children for r in _leaves(child)]


def _consumed_types(pattern: Pattern) -> set[str]:
    leaves = _leaves(pattern.structure)
    steps = {s.type for g in leaves if isinstance(g, Group) for s in RG.steps(g)}
    return {r.type for r in leaves if isinstance(r, EventRef)} | steps | {u.type for u in RU.stops(pattern.structure).values()}


def dependency_order(patterns: Sequence[Pattern]) -> tuple[list[int], dict[int, set[int]]]:
    """Producers before consumers; also every pattern's transitive producers."""
    direct: dict[int, set[int]] = {}
    for i, p in enumerate(patterns):
        types = _consumed_types(p)
        direct[i] = {j for j, q in enumerate(patterns) if q.returns is not None and q.returns.type in types}
    order: list[int] = []
    state: dict[int, str] = {}

    def visit(i: int) -> None:
        if state.get(i) == "done":
            return
        if state.get(i) == "active":
            raise ValueError(f"patterns form a cycle through RETURN types (at {patterns[i].name!r})")
        state[i] = "active"
        for j in sorted(direct[i]):
            visit(j)
        state[i] = "done"
        order.append(i)

    for i in range(len(patterns)):
        visit(i)
    closure: dict[int, set[int]] = {}
    for i in order:
        closure[i] = set(direct[i])
        for j in direct[i]:
            closure[i] |= closure[j]
    return order, closure
