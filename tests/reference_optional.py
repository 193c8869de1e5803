"""The brute-force reference's reading of OR choices and optional steps (tests/reference.py).

An optional step ``T? v`` is an OR of the step and of no step: each resolution of the
pattern leaves it in or out, and a negation's P and Q are the positive steps around it in
that resolution (so, where the step is left out, the steps around the step). A negation
condition reading a step left out reads unknown fields: it holds for no event, so that
negation forbids nothing in such a match (SQL's comparison with null), unlike a condition
reading a variable of an OR branch not taken, which is left out (holds vacuously).
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from petricep.lang.ast import EventRef, Group, Node, Or, Seq


def _is_negation(node: Node) -> bool:
    return isinstance(node, EventRef) and node.negated


def _positive_vars(node: Node) -> list[str]:
    if isinstance(node, (EventRef, Group)):
        return [] if _is_negation(node) else [node.var]
    return [v for child in node.children for v in _positive_vars(child)]


def _skippable(node: Node) -> bool:
    """An optional step, or a repeated group that may bind no iteration (``*``, ``?``)."""
    return (isinstance(node, EventRef) and (node.optional or (node.kleene and node.least == 0))) or (
        isinstance(node, Group) and node.least == 0
    )


def resolutions(node: Node) -> list[Node]:
    """Every tree obtained by replacing each OR by one of its children, and each optional
    step ``T? v`` by itself or by nothing (an OR of the step and of no step)."""
    if isinstance(node, (EventRef, Group)):
        return [node]
    if isinstance(node, Or):
        return [tree for child in node.children for tree in resolutions(child)]
    options: list[list[Node | None]] = []
    for child in node.children:
        if isinstance(child, EventRef) and child.optional:
            options.append([child, None])
        elif isinstance(child, EventRef) and _skippable(child):  # noqa: SIM114 (a list of no event or more: none, or 1+)
            options.append([replace(child, least=1), None])
        elif isinstance(child, Group) and child.least == 0:  # no iteration, or one or more
            options.append([replace(child, least=1), None])
        else:
            options.append(list(resolutions(child)))
    return [type(node)(tuple(c for c in combo if c is not None), node.span) for combo in itertools.product(*options)]


def optional_siblings(node: Node) -> dict[str, set[str]]:
    """Each optional step's variable -> the variables of the required steps of its SEQ: the
    step is *left out* of a match (not merely in an OR branch not taken) when some of those
    are bound and it is not."""
    out: dict[str, set[str]] = {}
    if isinstance(node, (EventRef, Group)):
        return out
    if isinstance(node, Seq):
        required = {v for c in node.children if not (_is_negation(c) or _skippable(c)) for v in _positive_vars(c)}
        out.update({c.var: required for c in node.children if isinstance(c, (EventRef, Group)) and _skippable(c)})
    for child in node.children:
        out.update(optional_siblings(child))
    return out
