"""Warnings about state that can grow without bound or combinatorially: what ``petricep
check`` and ``petricep run`` print before a run, decided from the pattern text alone.

Two kinds, both naming what bounds the state:

* without a ``WITHIN`` window (and without ``LIMIT``) partial matches pile up for ever; a
  list that has no upper bound (``T+ v[]``, ``T{n,} v[]``, a repeated group) lets one partial
  match grow for ever even under a LIMIT;
* within a window, a list without an upper bound under skip-till-any-match keeps every
  subset of its events (partial matches double with each one), and an AND of several
  variables of one type binds them in every order.

A list with an upper bound (``T{n,m} v[]``) holds at most ``m`` events and at most the
subsets of ``m`` of them: it is warned about by neither. ``UNTIL`` (a stop event) ends a
list's growth only when such an event comes, so the warnings name it and still warn.
"""

from __future__ import annotations

from collections.abc import Sequence

from petricep.lang import ast as A

#: a count window up to this many events keeps a Kleene variable's subsets few enough
_SMALL_COUNT_WINDOW = 16
#: an AND of this many variables of one type binds them in every order
_MANY_SAME_TYPE = 3


def state_warnings(patterns: Sequence[A.Pattern]) -> list[str]:
    """Every warning of both kinds, pattern by pattern (windowless ones first)."""
    out = []
    for p in patterns:
        out += _windowless(p)
    return out + growth_warnings(patterns)


def _open_list(p: A.Pattern) -> A.EventRef | None:
    """The first Kleene list without an upper bound (``T+``, ``T{n,}``)."""
    return next((r for r in A.events_of(p.structure) if r.kleene and r.most is None), None)


def _list_name(r: A.EventRef) -> str:
    """How a warning names a list: ``b[]``; a bounded one with its bounds (``b[] (B{2,})``)."""
    return f"{r.var}[] ({r.type}{r.quantifier()})" if r.bounded else f"{r.var}[]"


def _group_name(g: A.Group) -> str:
    """How a warning names a group: ``g[]``; a bounded one with its bounds (``g[] ({2,})``).
    Only a group without an upper bound is warned about (one with ``m`` keeps at most the
    sequences of ``m`` iterations, as a bounded list its subsets of ``m``)."""
    return f"{g.var}[] ({g.quantifier()})" if g.bounded else f"{g.var}[]"


def _stopped(r: A.EventRef | A.Group) -> str:
    """What a warning adds for a list (or a group) with a stop event: that it stops only
    when one comes."""
    u = r.until
    what = "group" if isinstance(r, A.Group) else "list"
    return "" if u is None else f" until a {u.type} event stops the {what} (UNTIL {u.type} {u.var})"


def _windowless(p: A.Pattern) -> list[str]:
    """Patterns whose state grows without bound: no window and no LIMIT (partial matches and
    negation buffers pile up), or a list without an upper bound and without a window (one
    partial match may grow without bound even when a LIMIT caps how many there are)."""
    refs = [r for r in A.events_of(p.structure) if not r.archived]  # history is read, not held
    if len(refs) == 1 and not refs[0].kleene:
        return []  # one event: no partial match, no state
    out = []
    if p.window is None and p.limit is None:
        out.append(
            f"warning: pattern {p.name!r} has no WITHIN window: its partial matches may grow without bound "
            "(add WITHIN, or LIMIT n PARTIAL MATCHES)"
        )
    if p.window is None:
        kleene = _open_list(p)
        if kleene is not None:
            out.append(
                f"warning: pattern {p.name!r}: Kleene variable {_list_name(kleene)} has no WITHIN window: "
                f"one partial match may grow without bound{_stopped(kleene)}"
            )
        groups = [g for g in A.groups_of(p.structure) if g.most is None]
        if groups:
            out.append(
                f"warning: pattern {p.name!r}: repeated group {_group_name(groups[0])} has no WITHIN window: "
                f"one partial match may grow without bound{_stopped(groups[0])}"
            )
    return out


def growth_warnings(patterns: Sequence[A.Pattern]) -> list[str]:
    """Patterns whose live partial matches can grow combinatorially within their window, so
    that a run may exhaust memory long before the window closes: a Kleene variable under
    skip-till-any-match (every subset of its events is a partial match: they double with each
    event) and an AND of several variables of one type (each event binds any of them). Each
    warning names LIMIT, which bounds them. Patterns without a window are warned about
    by :func:`state_warnings` (their state grows without bound whatever its shape)."""
    out = []
    for p in patterns:
        if p.limit is not None or p.window is None:
            continue
        if p.strategy == A.Strategy.ANY and not (
            p.window.kind == A.WIN_COUNT and p.window.value <= _SMALL_COUNT_WINDOW
        ):
            # (a list with an upper bound, T{n,m}, keeps at most the subsets of m: no doubling)
            kleene = _open_list(p)
            if kleene is not None:
                out.append(
                    f"warning: pattern {p.name!r}: Kleene variable {_list_name(kleene)} under skip-till-any-match keeps "
                    f"every subset of its {kleene.type} events in the window: partial matches can double with each "
                    f"one{_stopped(kleene)} (add LIMIT n PARTIAL MATCHES, a shorter WITHIN, or skip-till-next-match)"
                )
            group = next((g for g in A.groups_of(p.structure) if g.most is None), None)
            if group is not None:
                out.append(
                    f"warning: pattern {p.name!r}: repeated group {_group_name(group)} under skip-till-any-match keeps every "
                    "sequence of its iterations in the window: partial matches can double with each iteration"
                    f"{_stopped(group)} (add LIMIT n PARTIAL MATCHES, a shorter WITHIN, or skip-till-next-match)"
                )
        same = _same_type_and(p.structure)
        if same is not None:
            out.append(
                f"warning: pattern {p.name!r}: AND of {same[1]} variables of type {same[0]} binds them in every "
                "order: partial matches can grow combinatorially (add LIMIT n PARTIAL MATCHES)"
            )
    return out


def _same_type_and(node: A.Node) -> tuple[str, int] | None:
    """The first AND (anywhere in the structure) with :data:`_MANY_SAME_TYPE` or more
    positive variables of one type: (type, how many)."""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, A.EventRef):
            continue
        if isinstance(n, A.And):
            counts: dict[str, int] = {}
            for c in n.children:
                for r in A.events_of(c):
                    if not r.negated:
                        counts[r.type] = counts.get(r.type, 0) + 1
            many = [(t, k) for t, k in counts.items() if k >= _MANY_SAME_TYPE]
            if many:
                return many[0]
        todo.extend(reversed(n.children))
    return None
