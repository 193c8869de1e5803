"""Checks of stop conditions, ``T+ v[] UNTIL U u`` (issue 42, FlinkCEP's ``until``): where a
stop event may stand and what its conditions (the WHERE conjuncts naming ``u``) may read.

A stop event binds no event of the match: it is a condition on the events *between* the
list's events (docs/SEMANTICS.md, "Stop conditions"). What it may read is what is bound when
it is tested: the stop event itself, the steps before the list in each SEQ on the way down
to it, and the list as it is then (its elements so far: ``v[k]``, ``v[last]``, aggregates),
never later steps nor the other children of an AND or OR around it, which may come after the
list. A repeated group's stop condition reads the group so far through its first step and
``count(g[])`` (the iterations begun: :func:`_check_group_reads`). A list may
stand anywhere a list may (inside AND / OR too: its stop negation is open wherever it grows). Every rule is decided from the text
and reported with a caret; what the language means but the engines do not run yet is a
:class:`~petricep.errors.PatternUnsupportedError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from petricep.errors import PatternError
from petricep.lang import ast as A

ErrorAt = Callable[[str, A.Span | None], PatternError]


def stop_vars(structure: A.Node) -> dict[str, A.EventRef]:
    """The stop events of a pattern by variable name."""
    return {u.var: u for _, u in A.all_stops_of(structure)}


def check_until(
    structure: A.Node,
    conditions: Sequence[A.Expr],
    error: ErrorAt,
    unsupported: ErrorAt,
) -> None:
    """Every stop event of ``structure`` (flattened) and the conditions naming it."""
    stops = A.all_stops_of(structure)
    if not stops:
        return
    # ARCHIVED variables (a single-event SEQ prefix, compile/archived.py) are joined after the
    # live part has matched: a stop event, tested while a live list grows, cannot read them
    archived = {r.var for r in A.events_of(structure) if r.archived}
    owner = {stop.var: lst for lst, stop in stops}
    allowed = {lst.var: _before(structure, lst) for lst, _ in stops}
    for c in conditions:
        _check_condition(c, allowed, owner, archived, error, unsupported)


def _before(node: A.Node, lst: A.EventRef | A.Group) -> set[str]:
    """The variables a stop condition of ``lst`` may read besides its stop event: the required
    single events and lists before ``lst`` in each SEQ on the way down to it (bound whenever
    the list grows; inside an AND or OR the other children may or may not be bound yet)."""
    out: set[str] = set()
    _path(node, lst, out)
    return out


def _path(node: A.Node, lst: A.EventRef | A.Group, out: set[str]) -> bool:
    """Whether ``lst`` (a list, or a group) is under ``node``; if so, ``out`` gets what is
    bound before it there."""
    if node is lst:
        return True
    if isinstance(node, A.EventRef):
        return False
    for i, c in enumerate(node.children):
        if _path(c, lst, out):
            if isinstance(node, A.Seq):
                out.update(k.var for k in node.children[:i] if isinstance(k, A.EventRef) and not (k.negated or A.skippable(k)))
            return True
    return False


def _check_condition(
    c: A.Expr,
    allowed_by_list: dict[str, set[str]],
    owner: dict[str, A.EventRef | A.Group],
    archived: set[str],
    error: ErrorAt,
    unsupported: ErrorAt,
) -> None:
    """One WHERE conjunct: if it names a stop event, it names one and reads only what is bound
    before the list that event stops."""
    named = sorted(A.vars_of(c) & owner.keys())
    if not named:
        return
    span = A.leftmost_span(c)
    if len(named) > 1:
        raise error(f"a condition may mention one stop event (UNTIL), this one mentions {', '.join(named)}", span)
    (u,) = named
    lst = owner[u]
    it = A.iteration_var(c)
    if it is not None:
        raise error(f"a stop condition cannot iterate over {it}[i]: it is tested once per event that comes", span)
    allowed = allowed_by_list[lst.var]
    if isinstance(lst, A.Group):
        _check_group_reads(c, u, lst, unsupported)
    for v in sorted(A.vars_of(c) - {u}):
        if v == lst.var:
            continue  # the list so far (compile/until.py on_element)
        if v in archived:
            raise unsupported(
                f"a stop condition (UNTIL ... {u}) reading the ARCHIVED variable {v!r} is not supported yet: "
                "the history is joined after the live part matched",
                span,
            )
        if v not in allowed:
            raise error(
                f"a stop condition (UNTIL ... {u}) may read only the stop event and the required steps before "
                f"{lst.var}[], not {v!r}",
                span,
            )


def _check_group_reads(c: A.Expr, u: str, group: A.Group, unsupported: ErrorAt) -> None:
    """A stop condition of a repeated group reads the group *so far* (its events before the
    stop event): its first step (``g[1].b.x``, ``g[last].b.x``, ``sum(g[].b.x)``), bound in
    every iteration begun, and ``count(g[])``, the iterations begun. Its later steps are
    refused: a stop event between an iteration's first step and the step read would find it
    not bound yet in that iteration (its ``g[last]`` would be an earlier iteration's, and on
    the first iteration there would be none)."""
    first = group.members[0]
    for e in A.walk_expr(c):
        if isinstance(e, (A.Attr, A.Agg)) and e.var == group.var and first in group.optional_steps:
            raise unsupported(
                f"a stop condition (UNTIL ... {u}) of the repeated group {group.var}[] starting with an optional step "
                f"({first}) reads the group so far: not yet (an iteration may begin at {first} or after it); "
                "read the stop event and variables bound before the group",
                e.span,
            )
        if not isinstance(e, (A.Attr, A.Agg)) or e.var != group.var or e.member in (None, first):
            continue
        raise unsupported(
            f"a stop condition (UNTIL ... {u}) of the repeated group {group.var}[] reads the group so far: its first "
            f"step ({group.var}[last].{first}.x, {group.var}[1].{first}.x, sum({group.var}[].{first}.x)) and "
            f"count({group.var}[]) (the iterations begun), not {e.member!r}: a stop event before an iteration's "
            f"{e.member} would find it not bound yet",
            e.span,
        )
