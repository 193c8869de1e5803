"""Repeated groups (``SEQ(B b, C c)+ g[]``, issue 42) as net structure the engines already run.

Each step of a group becomes a Kleene variable (its slot holds that step's list over the
iterations, sharing prefixes like any Kleene list), and the group's configurations become
places with a loop: ``(started, k)``, ``k`` steps of the current iteration bound, ``started``
once an iteration has completed. From ``(False, 0)`` the first step starts its list; the
last step of an iteration goes to ``(True, 0)`` (the group complete: the SEQ may go on), from
where the first step appends to its list again: the loop back from the group's last place
to its first. ``2 n`` places for ``n`` steps, whatever the number of iterations.

An optional step inside a group (``SEQ(B b, C? c, D d)+ g[]``) is an optional step's skip arc
per iteration: from the place before it the step after it may move too. Its configurations
add which optional steps the current iteration bound (an iteration condition reading ``g[i].c``
on a later step is checked only where it did) and which have an element at all (the next one
is then a take on its list); where only optional steps are left the iteration may end
(:func:`tail`). The lists are then no longer aligned by iteration: the engines place a match's
elements into iterations by position (runtime/match.py ``group_bindings``), replay iteration
conditions in arrival order, and read ``g[last].c`` / ``g[k].c`` / ``g[i-1].c`` only where
that iteration has a ``c`` (``Index.of``: by position against the first required step's list).

A condition reading the group is rewritten onto the steps' lists:

* whole-group reads (``g[k].b.x``, ``g[last].c.x``, ``count(g[])``, ``sum(g[].b.x)``) become
  the Kleene reads of the step (``b[k].x``, ``c[last].x``, ``count(c[])``, ``sum(b[].x)``),
  decided where the lists are closed, as Kleene conditions are;
* a per-step gap on a step (``SEQ(B b, C c AFTER 0 TO 5)+ g[]``) is the conditions
  :func:`petricep.lang.groups.gap_conditions` says, checked as any, and an early exit of the
  places waiting for the step (:func:`step_gaps`, compile/gaps.py ``gap_expiry``): a partial
  match leaves when the gap ahead has passed, not at its window's end;
* an iteration condition (``g[i]``, ``g[i-1]``) is checked on the step that binds the last
  step it reads at ``g[i]`` (say ``m``), on every iteration: there ``g[i].s`` for a step up to
  ``m`` is that step's newest element (``s[i]``), ``g[i-1].s`` is the one before it
  (``s[i-1]``), and ``g[i-1].s`` for a step after ``m`` is that step's newest element (the
  previous iteration's; unbound on the first iteration, so the condition holds vacuously
  there, as ``v[i-1]`` does on a Kleene list's first element);
* a condition of a negation inside the group reads the group so far, the steps' lists as
  they stand where the negation is open (:func:`on_negation`: ``g[i].b`` the newest ``b``,
  ``g[i-1].b`` the one before it, ``g[i-1].c`` the newest ``c`` for a step after the
  negation), checked in the scan as any of its conditions; next to an optional step it is
  open from the iteration's last bound step before it, ending a partial match right after
  the step before it, elsewhere blocking only the moves past the optional steps still ahead
  (:func:`_open_between_steps`); one reading ``g[i].c`` of an optional step is open only
  where the iteration bound ``c`` (:func:`open_where_bound`);
* one that also reads a single event bound after the group or beside it in an AND
  (``g[i].c.x < d.x``) is checked so once that event is bound, and on the move binding it
  for the iterations before it: a deferred check (:func:`replay`) that rebuilds the steps'
  lists along the partial match's chain and checks every iteration as its step saw them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from petricep.lang import ast as A
from petricep.lang.groups import bound_at, gap_conditions, gap_follows, negation_sides, negations_of

Cfg = Any


# ----------------------------------------------------------------------------- configurations


def init(node: A.Group | None = None) -> Cfg:
    """``(count, k)``: iterations completed (capped), steps of the current one passed; a group
    with optional steps adds ``(mask, seen)``: the optional steps the current iteration bound
    and those any iteration bound (a step's first element starts its list, a later one is a
    take), as bit masks by step position."""
    if node is not None and node.kleene_steps:
        # (count, k, n, mask, seen): n the current Kleene step's elements in this iteration
        # (capped); mask and seen as above, for the lists an iteration may leave empty (C*)
        return (0, 0, 0, 0, 0)
    return (0, 0, 0, 0) if node is not None and node.optional_steps else (0, 0)


def _steps(node: A.Group) -> list[A.EventRef]:
    return [r for r in node.children if isinstance(r, A.EventRef) and not r.negated]


def _skippable(step: A.EventRef) -> bool:
    """A step an iteration may leave out: an optional one, or a list that may be empty (``C*``)."""
    return step.optional or (step.kleene and step.least == 0)


def _cap(node: A.Group) -> int:
    """The iterations a configuration counts: up to the upper bound, else up to the lower
    bound (where an open group loops; ``+``: 1, the ``(started, k)`` of an unbounded group)."""
    return node.most if node.most is not None else max(node.least, 1)


def complete(node: A.Group, cfg: Cfg) -> bool:
    """At ``k == 0`` with its fewest iterations, or in an iteration that has bound its
    required steps and has only optional ones left (:func:`tail`): it may end there."""
    count, k = cfg[:2]
    return bool(k == 0 and count >= node.least) or (tail(node, cfg) and count + 1 >= node.least)


def tail(node: A.Group, cfg: Cfg) -> bool:
    """Whether ``cfg`` is inside an iteration that has bound its required steps, with only
    optional steps left (``SEQ(B b, C? c)+ g[]`` after ``b``), or a Kleene step last with its
    fewest elements (``SEQ(B b, C+ c[])+ g[]`` after a ``c``): the iteration is complete, and
    may still bind more."""
    k = cfg[1]
    steps = _steps(node)
    if not k or not all(_skippable(s) for s in steps[k:]):
        return False
    return not (len(cfg) == 5 and steps[k - 1].kleene and cfg[2] < steps[k - 1].least)


def moves(node: A.Group, cfg: Cfg, etype: str) -> list[tuple[str, Cfg, bool]]:
    """(step variable bound, new configuration, appends to its list) for an ``etype`` event:
    the iterations completed count up to :func:`_cap`; none starts past the upper bound. The
    next step, or past an optional one (the iteration leaves it out: the skip arc of an
    optional step, ``T? v``, per iteration) the one after it, up to a required step."""
    count, k = cfg[:2]
    steps = _steps(node)
    out = []
    if not (k == 0 and node.most is not None and count >= node.most):
        for j in range(k, len(steps)):
            if steps[j].type == etype:
                out.append(_bind(node, cfg, j, steps))
            if not _skippable(steps[j]):
                break
    if len(cfg) == 5 and k and steps[k - 1].kleene:  # a Kleene step's list grows within its iteration
        ref = steps[k - 1]
        if ref.type == etype and (ref.most is None or cfg[2] < ref.most):
            out.append((ref.var, (count, k, min(cfg[2] + 1, ref.most or max(ref.least, 1)), *cfg[3:]), True))
        if cfg[2] < ref.least:  # below its fewest elements: no step after it yet
            out = [m for m in out if m[0] == ref.var]
    if tail(node, cfg):  # the iteration may end here, leaving its last steps out: the next one starts
        nxt = (min(count + 1, _cap(node)), 0, 0, 0, cfg[4]) if len(cfg) == 5 else (min(count + 1, _cap(node)), 0, 0, cfg[3])
        out += moves(node, nxt, etype)
    return out


def _bind(node: A.Group, cfg: Cfg, j: int, steps: list[A.EventRef]) -> tuple[str, Cfg, bool]:
    """:func:`moves` binding step ``j`` (the steps between the current one and it left out)."""
    count, k = cfg[:2]
    done = j + 1 == len(steps)
    if len(cfg) == 2:
        return steps[j].var, (min(count + 1, _cap(node)), 0) if done else (count, j + 1), count > 0
    if len(cfg) == 5:  # a group with a Kleene step (one last goes on: its list may grow, see tail)
        mask, seen = cfg[3:]
        take = count > 0
        if _skippable(steps[j]):  # a list an iteration may leave empty: a take once any iteration bound it
            take = bool(seen >> j & 1)
            mask, seen = mask | 1 << j, seen | 1 << j
        if done and not steps[j].kleene:
            return steps[j].var, (min(count + 1, _cap(node)), 0, 0, 0, seen), take
        return steps[j].var, (count, j + 1, 1 if steps[j].kleene else 0, mask, seen), take
    mask, seen = cfg[2:]
    take = count > 0
    if steps[j].optional:
        take = bool(seen >> j & 1)
        mask, seen = mask | 1 << j, seen | 1 << j
    return steps[j].var, (min(count + 1, _cap(node)), 0, 0, seen) if done else (count, j + 1, mask, seen), take


def analyze(
    node: A.Group,
    cfg: Cfg,
    live: bool,
    bound: set[str],
    dead: set[str],
    active: list[tuple[A.EventRef, bool]],
    growing: set[str],
    current: set[str] | None = None,
    absent: set[str] | None = None,
    tails: set[str] | None = None,
    later: set[str] | None = None,
    open_lists: set[str] | None = None,
) -> str:
    """The steps bound in ``cfg`` (all once an iteration completed) and the place's label:
    ``g+`` complete, ``g:b`` the first iteration up to b, ``g+:b`` a later one (a bounded
    group's: ``g{2}`` two iterations, ``g{2,}`` two or more, ``g{2}:b``). ``active`` gets
    the negations open in ``cfg`` (negation, blocks rather than ends): one between two
    steps right after the iteration's last bound step, where a violating event ends the
    partial match (only the next step moves there); one at the group's start or end once an
    iteration is complete and another may start, where it blocks the next iteration's first
    step (a stop, as ``UNTIL``'s: the group may still close and the match go on).
    ``growing`` gets the group where it is complete and may start another iteration (where
    GREEDY / RELUCTANT choose between that and the step after it). A group with optional
    steps: ``current`` gets those its current iteration bound, ``absent`` those no iteration
    bound (a match emitted here leaves them out: conditions reading them hold), ``tails`` the
    group where its iteration has only optional steps left (:func:`tail`), ``later`` the group
    once an iteration is complete (its next one is a later one). ``open_lists`` gets the
    Kleene step the current iteration is binding (its own GREEDY / RELUCTANT choose there)."""
    count, k = cfg[:2]
    members = node.members
    if not live:
        dead.update(members)
        return ""
    optional = node.optional_steps
    skips = optional | node.empty_lists  # (bound where some iteration bound them)
    bound.update(m for m in (members if count else members[:k]) if m not in skips)
    if skips:
        mask, seen = cfg[-2:]
        bound.update(m for j, m in enumerate(members) if seen >> j & 1)
        if current is not None:
            current.update(m for j, m in enumerate(members) if mask >> j & 1)
        if absent is not None:
            absent.update(m for j, m in enumerate(members) if m in skips and not seen >> j & 1)
    if open_lists is not None and k and members[k - 1] in node.kleene_steps and cfg[2] >= 1:
        open_lists.add(members[k - 1])
    if tails is not None and tail(node, cfg):
        tails.add(node.var)
    if later is not None and (count or tail(node, cfg)):
        later.add(node.var)
    more = node.most is None or count < node.most
    ends = tail(node, cfg)  # (an iteration with only optional steps left, or a last list grown: complete)
    fits = node.most is None or count + 1 < node.most
    done = count >= max(node.least, 1) if k == 0 else ends and count + 1 >= max(node.least, 1)
    if done and any(moves(node, cfg, t) for t in {s.type for s in _steps(node)}):
        growing.add(node.var)  # GREEDY / RELUCTANT choose here (the group complete, and may go on)
    sides = negation_sides(node)
    for neg, (before, _after) in neighbours(node).items():
        ref = next(c for c in node.children if isinstance(c, A.EventRef) and c.var == neg)
        if before != members[-1]:  # between two steps: open while the iteration waits
            _open_between_steps(ref, sides[neg][0], members[k - 1] if k else None, node.kleene_steps, active)
        elif (count and k == 0 and more) or (k == len(members) and ends and fits):
            # between iterations (or after a last list's element, its iteration complete: the
            # list may still grow, which clears it): it blocks the next one's first step only
            active.append((ref, True))
    if not count and k == 0:
        return ""
    head = node.var if not count else f"{node.var}+" if not node.bounded else _counted(node, count)
    if len(cfg) != 4:  # (no optional steps, or a Kleene step beside them: its 5-tuple)
        step = _steps(node)[k - 1] if k else None
        counted = f"{{{cfg[2]}{',' if step.most is None and cfg[2] >= step.least else ''}}}" if step is not None and step.bounded else ""
        if not skips:
            return head if k == 0 else f"{head}:{members[k - 1]}{counted}"
        # lists an iteration may leave empty: ``[c]`` once c's list has an element, and the
        # current iteration's steps (``g+[c]:b,d``: c left empty in it), as for optional steps
        mask, seen = cfg[3:]
        head += "".join(f"[{m}]" for j, m in enumerate(members) if seen >> j & 1)
        return head if k == 0 else f"{head}:" + ",".join(m for j, m in enumerate(members[:k]) if m not in skips or mask >> j & 1) + counted
    # with optional steps: ``[c]`` once c's list has an element, the current iteration's steps
    # (``g+[c]:b,d``: its b and d, c left out) where it passed an optional one
    mask, seen = cfg[2:]
    head += "".join(f"[{m}]" for j, m in enumerate(members) if seen >> j & 1)
    if k == 0:
        return head
    if not any(m in optional for m in members[:k]):
        return f"{head}:{members[k - 1]}"
    return f"{head}:" + ",".join(m for j, m in enumerate(members[:k]) if m not in optional or mask >> j & 1)


def _open_between_steps(
    ref: A.EventRef, before: list[str], last: str | None, lists: frozenset[str], active: list[tuple[A.EventRef, bool]]
) -> None:
    """A negation between two steps is open where the iteration's last bound step is one of
    ``before`` (its P, nearest first: :func:`petricep.lang.groups.negation_sides`). Right
    after its nearest step a violating event ends the partial match; after a farther one
    (``b`` in ``SEQ(B b, C? c, !(X x), D d)+ g[]``, ``c`` still ahead) it blocks the moves to
    its Q only: the iteration may still bind ``c``, which clears the block (the span then
    runs from ``c``), as a negation after a growing list's; so after a Kleene step's element
    (``lists``), its list may still grow."""
    if last in before:
        active.append((ref, last != before[0] or last in lists))


def _counted(node: A.Group, count: int) -> str:
    """A bounded group's head in a label: ``g{2}``, ``g{2,}`` where an open one loops."""
    more = "," if node.most is None and count == _cap(node) else ""
    return f"{node.var}{{{count}{more}}}"


def neighbours(node: A.Group) -> dict[str, tuple[str, str]]:
    """Each negation inside the group -> (the step before it, the step after it): the
    iteration's steps around it, or for one at the group's start or end the last step of an
    iteration and the first of the next."""
    kids = node.children
    out: dict[str, tuple[str, str]] = {}
    members = node.members
    for i, c in enumerate(kids):
        if isinstance(c, A.EventRef) and c.negated:
            before = [k.var for k in kids[:i] if isinstance(k, A.EventRef) and not k.negated]
            after = [k.var for k in kids[i + 1 :] if isinstance(k, A.EventRef) and not k.negated]
            out[c.var] = (before[-1], after[0]) if before and after else (members[-1], members[0])
    return out


def between_iterations(node: A.Group) -> set[str]:
    """The negations at the group's start or end (between iterations)."""
    return {n for n, (before, _) in neighbours(node).items() if before == node.members[-1]}


# ----------------------------------------------------------------------------- conditions


@dataclass(frozen=True)
class Lowered:
    """A pattern's conditions and outputs read onto the group steps' lists: ``pattern`` has
    them rewritten (its structure unchanged); ``iteration`` maps a condition's index to the
    step whose transitions check it on every iteration."""

    pattern: A.Pattern
    iteration: dict[int, str]
    member_of: dict[str, tuple[A.Group, int]]  # step variable -> (its group, its position)
    # an iteration condition's optional steps read at g[i] before the step it is checked on:
    # checked only on the moves whose iteration bound them (else it holds: the step left out)
    iteration_optional: dict[int, frozenset[str]] = field(default_factory=dict)
    # a negation's conditions reading optional steps of its own iteration (g[i].c): it is open
    # only where the iteration bound them (elsewhere the read does not exist: it forbids nothing)
    negation_current: dict[str, frozenset[str]] = field(default_factory=dict)
    # a gap's chain on a Kleene step (lang/groups.py gap_conditions): condition index -> True,
    # checked on the moves growing the iteration's list only; False, on those starting it only
    iteration_growth: dict[int, bool] = field(default_factory=dict)
    # a gap after skippable steps (lang/groups.py GapCondition): condition index -> the steps
    # the move's iteration must have left out (it follows the step before them)
    iteration_absent: dict[int, frozenset[str]] = field(default_factory=dict)


def lower(pattern: A.Pattern) -> Lowered:
    groups = {g.var: g for g in A.groups_of(pattern.structure)}
    if not groups:
        return Lowered(pattern, {}, {})
    optional_reads: dict[int, frozenset[str]] = {}
    member_of = {m: (g, i) for g in groups.values() for i, m in enumerate(g.members)}
    conditions: list[A.Expr] = []
    iteration: dict[int, str] = {}
    # per-step gaps inside a group: conditions on the step (no early exit of partial matches)
    gap_pairs = [c for g in groups.values() for c in gap_conditions(pattern.structure, g)]
    gaps = [c.expr for c in gap_pairs]
    n = len(pattern.conditions)
    phases = {n + j: c.phase for j, c in enumerate(gap_pairs) if c.phase is not None}
    absent = {n + j: c.absent for j, c in enumerate(gap_pairs) if c.absent}
    # a stop condition (UNTIL) reads the group so far: count(g[]) the iterations begun
    stops = {g.until.var for g in groups.values() if g.until is not None}
    inside = {n.var: g for g in groups.values() for n in negations_of(g)}
    negation_current: dict[str, frozenset[str]] = {}
    for ci, expr in enumerate((*pattern.conditions, *gaps)):
        at = _iteration_step(expr, groups)
        neg = next((v for v in sorted(A.vars_of(expr)) if v in inside), None)
        if neg is not None:  # a negation's inside a group: the group as it stands while it is open
            conditions.append(on_negation(expr, inside[neg], bound_at(inside[neg], neg)))
            current = _current_optional_reads(expr, inside[neg])
            if current:
                negation_current[neg] = negation_current.get(neg, frozenset()) | current
        elif at is not None:
            iteration[ci] = at
            grp = groups[_group_of(expr, groups)]
            conditions.append(_rewrite(expr, groups, grp.members.index(at)))
            read = {e.member for e in A.walk_expr(expr) if isinstance(e, A.Attr) and e.var == grp.var and e.index is not None and e.index.kind == A.IDX_CUR}
            skips = grp.optional_steps | grp.empty_lists  # (a list left empty: its newest element is another iteration's)
            if (read & skips) - {at}:
                optional_reads[ci] = frozenset((read & skips) - {at})  # type: ignore[arg-type]
        else:
            conditions.append(_rewrite(expr, groups, None, begun=bool(stops & A.vars_of(expr))))

    def output(r: A.Return | None) -> A.Return | None:
        if r is None:
            return None
        return replace(r, fields=tuple(replace(f, expr=_rewrite(f.expr, groups, None)) for f in r.fields))

    lowered = replace(pattern, conditions=tuple(conditions), returns=output(pattern.returns), timeout=output(pattern.timeout))
    return Lowered(lowered, iteration, member_of, optional_reads, negation_current, phases, absent)


def _current_optional_reads(expr: A.Expr, group: A.Group) -> frozenset[str]:
    """The optional steps of ``group`` a negation's condition reads in its own iteration
    (``g[i].c``, ``g[last].c``: checked, before the negation)."""
    return frozenset(
        e.member
        for e in A.walk_expr(expr)
        if isinstance(e, A.Attr) and e.var == group.var and e.member in group.optional_steps and e.index is not None and e.index.kind in (A.IDX_CUR, A.IDX_LAST)
    )


def open_where_bound(active: list[tuple[A.EventRef, bool]], needs: dict[str, frozenset[str]], current: set[str]) -> list[tuple[A.EventRef, bool]]:
    """``active`` less the negations whose conditions read an optional step of their
    iteration that the iteration has not bound (``current``: those it bound): none of their
    events can violate there (:attr:`Lowered.negation_current`)."""
    return [(n, g) for n, g in active if needs.get(n.var, frozenset()) <= current]


def iteration_check(
    member_of: dict[str, tuple[A.Group, int]], at: str, cvars: frozenset[str], var: str, before: frozenset[str], after: frozenset[str], dead: frozenset[str]
) -> str | None:
    """Where a move binding ``var`` checks an iteration condition on the group step ``at``
    (its lowered variables ``cvars``): ``"step"``, on the new iteration (a move of ``at`` once
    every variable it reads beside the group is bound: ``before``, the source's); ``"replay"``,
    on every iteration so far (the move binding the last of those, read after the group or
    beside it: :func:`replay`); None: not here (or never: one is in an OR branch not taken)."""
    others = cvars - set(member_of[at][0].members)
    if others & dead:
        return None
    if others <= before:
        return "step" if var == at else None
    return "replay" if others <= after else None


def replay(ci: int, member_of: dict[str, tuple[A.Group, int]], slot: dict[str, int], at: str) -> tuple[int, ...]:
    """A deferred check of iteration condition ``ci`` (Transition.deferred_iteration):
    (condition, the slot of step ``at``, the slots of the group's steps in order). The engines
    replay the steps' lists: for each iteration so far, the lists as they stood when it bound
    ``at`` (the steps up to ``at`` that iteration's, those after it the previous one's), as
    the step's own check would have seen them."""
    group = member_of[at][0]
    return (ci, slot[at], *(slot[m] for m in group.members))


def on_negation(expr: A.Expr, group: A.Group, pre: list[str] | None) -> A.Expr:
    """A condition of a negation inside ``group`` read onto the steps' lists as they stand
    while it is open (its check in the scan: the lists' newest elements are the steps bound
    so far). ``pre``: the steps of the iteration it lies in bound then (one between two
    steps), None for one between iterations (every list holds the complete iterations).

    ``g[i].s`` and ``g[last].s`` are ``s[last]``; ``g[i-1].s`` is ``s[i-1]`` (the element
    before the newest) for a step of ``pre`` and ``s[last]`` for a later step (whose list
    holds the complete iterations only), unbound on the first iteration either way: the
    conjunct holds vacuously, as ``v[i-1]`` there. ``g[k].s`` is ``s[k]`` and an aggregate
    the step's list (the iterations so far, the current one's bound steps too; ``count(g[])``
    the iterations begun, the first step's list), as a stop condition reads the group. A read
    of a later step that the group has not bound yet (``g[k].c`` of the current iteration,
    an aggregate over ``c`` on the first iteration) is a value that does not exist: each
    comparison reading it also asks ``count(first[]) > k`` (> 1), so it is false there, as a
    comparison reading a Kleene element past the list's end."""
    first = group.members[0]
    later = set() if pre is None else set(group.members) - set(pre)

    def leaf(e: A.Expr) -> A.Expr:
        if isinstance(e, A.Attr) and e.var == group.var:
            assert e.member is not None and e.index is not None  # checked
            kind = e.index.kind
            if kind == A.IDX_CONST:
                index = e.index
            elif kind == A.IDX_PREV and e.member not in later:
                index = A.Index(A.IDX_PREV)
            else:
                index = A.Index(A.IDX_LAST)
            return A.Attr(e.member, e.field, index, span=e.span)
        if isinstance(e, A.Agg) and e.var == group.var:
            return A.Agg(e.func, e.member if e.member is not None else first, e.field, span=e.span)
        return e

    def need(e: A.Expr) -> int:
        """The iterations begun a read of ``e`` needs to exist (0: it always does)."""
        out = 0
        for r in A.walk_expr(e):
            if isinstance(r, A.Attr) and r.var == group.var and r.member in later and r.index is not None and r.index.kind == A.IDX_CONST:
                out = max(out, r.index.const + 1)
            elif isinstance(r, A.Agg) and r.var == group.var and r.member in later:
                out = max(out, 2)
        return out

    def known(e: A.Expr) -> A.Expr:
        if isinstance(e, A.BoolOp):
            return replace(e, operands=tuple(known(o) for o in e.operands))
        if isinstance(e, A.Not):
            return replace(e, operand=known(e.operand))
        k = need(e)
        rewritten = A.map_leaves(e, leaf)
        if not k:
            return rewritten
        has = A.Compare(">=", A.Agg("count", first, None), A.Num(k))
        return A.BoolOp("and", (has, rewritten))

    return known(expr)


def _group_of(expr: A.Expr, groups: dict[str, A.Group]) -> str:
    for e in A.walk_expr(expr):
        if isinstance(e, A.Attr) and e.var in groups and e.index is not None and e.index.kind == A.IDX_CUR:
            return e.var
    raise ValueError("not an iteration condition over a group")  # pragma: no cover (checked)


def _iteration_step(expr: A.Expr, groups: dict[str, A.Group]) -> str | None:
    """The step an iteration condition is checked on: the last one it reads at ``g[i]``."""
    best: tuple[int, str] | None = None
    for e in A.walk_expr(expr):
        if isinstance(e, A.Attr) and e.var in groups and e.member is not None and e.index is not None and e.index.kind == A.IDX_CUR:
            pos = groups[e.var].members.index(e.member)
            if best is None or pos > best[0]:
                best = (pos, e.member)
    return None if best is None else best[1]


def _rewrite(expr: A.Expr, groups: dict[str, A.Group], at: int | None, begun: bool = False) -> A.Expr:
    """``expr`` with every group read replaced by its step's Kleene read (``at``: the position
    of the step an iteration condition is checked on; ``begun``: a stop condition, whose
    ``count(g[])`` counts the iterations begun, the first step's list)."""
    return A.map_leaves(expr, lambda e: _step_read(e, groups, at, begun))


def _step_read(expr: A.Expr, groups: dict[str, A.Group], at: int | None, begun: bool = False) -> A.Expr:
    """A leaf of :func:`_rewrite`: a group read as its step's Kleene read, else as it is."""
    if isinstance(expr, A.Attr) and expr.var in groups:
        g = groups[expr.var]
        assert expr.member is not None and expr.index is not None  # checked
        index = expr.index
        if expr.member in g.optional_steps and index.kind != A.IDX_CUR:
            return A.Attr(expr.member, expr.field, _optional_index(g, expr.member, index, at), span=expr.span)
        if index.kind in (A.IDX_CUR, A.IDX_PREV):
            assert at is not None
            pos = g.members.index(expr.member)
            if index.kind == A.IDX_CUR:
                index = A.Index(A.IDX_CUR)
            else:
                index = A.Index(A.IDX_PREV) if pos <= at else A.Index(A.IDX_LAST)
        return A.Attr(expr.member, expr.field, index, span=expr.span)
    if isinstance(expr, A.Agg) and expr.var in groups:
        g = groups[expr.var]
        # count(g[]): the iterations (complete: the last single required step's list; begun: the first step's)
        required = [m for m in g.members if m not in g.optional_steps and m not in g.kleene_steps] or list(g.members)
        var = expr.member if expr.member is not None else required[0 if begun else -1]
        return A.Agg(expr.func, var, expr.field, expr.upto_prev, span=expr.span)
    return expr


def _optional_index(g: A.Group, member: str, index: A.Index, at: int | None) -> A.Index:
    """``g[last].c``, ``g[k].c``, ``g[i-1].c`` of an optional step as a read of its list only
    where the element lies in that iteration (``Index.of``: the list of the first required
    step, whose elements delimit the iterations). ``g[i-1]`` on a step ``at`` after that one is
    the iteration before that list's last element's (``c[i-1]``); on a step before it (the
    current iteration has not bound it yet) its last element's (``c[last]``)."""
    first = g.delimiter
    assert first is not None  # (lang/groups.py refuses a group without one beside optional steps)
    r = g.members.index(first)
    if index.kind == A.IDX_PREV:
        assert at is not None
        index = A.Index(A.IDX_PREV) if at >= r else A.Index(A.IDX_LAST)
    return replace(index, of=first, leads=g.members.index(member) < r)


def step_order(
    member_of: dict[str, tuple[A.Group, int]],
    slot: dict[str, int],
    var: str,
    later: bool,
    current: frozenset[str] = frozenset(),
    ending: bool = False,
) -> tuple[int, ...] | None:
    """Tie rule strict for a group's step: after the step before it in the iteration (the
    nearest one it bound: a required step, or an optional one in ``current``), or where it
    starts an iteration and one came before (``later``) after that one's last step
    (``ending``: the move ends an iteration with only optional steps left, leaving them out:
    its latest bound step); None: it starts the first iteration, ordered as any step after
    what precedes the group."""
    group, pos = member_of[var]
    optional = group.optional_steps | group.empty_lists
    if not ending:
        prev = [m for m in group.members[:pos] if m not in optional or m in current]
        if prev:
            return (slot[prev[-1]],)
    if not later:
        return None
    last = next(m for m in reversed(group.members) if m not in optional or m in current) if ending else group.members[-1]
    return (slot[last],)


def begun(group: A.Group, bound: frozenset[str] | set[str]) -> bool:
    """Whether ``group`` has bound an event (its stop event is open from then on)."""
    return any(m in bound for m in group.members)


def stop_places(edges: Any, members: set[str], begun_at: set[int]) -> dict[int, bool]:
    """The places where a group with a stop event (``SEQ(...)+ g[] UNTIL U u``) may grow (it
    has begun, and a move of one of its steps leaves them), each with whether a token there
    has another way on (the step after the group: a stop event then blocks the group's moves;
    else, inside an iteration or below the fewest iterations, it cancels the token)."""
    grows = {src for src, _t, v, _new, _take in edges if v in members and src in begun_at}
    return {pid: any(src == pid and v not in members for src, _t, v, _new, _take in edges) for pid in sorted(grows)}


@dataclass(frozen=True)
class StepGap:
    """A group's step's gap, as the places' early exits read it: its high bound, whether in
    EVENTS, and the variable whose slot holds the event it follows, on the group's first
    iteration and on the later ones (None: no one slot's event, no early exit from it)."""

    hi: float | int
    in_events: bool
    first: str | None
    later: str | None
    chain: bool = False  # a Kleene step's: a move growing its iteration's list follows its last element
    var: str = ""  # (the step)

    def base(self, take: bool, grows: bool = False) -> str | None:
        """A move binding the step: ``take`` extends its list (a later iteration), ``grows``
        extends the iteration's list (a Kleene step's chain: it follows that list's last
        element, its own slot's newest)."""
        return self.var if grows and self.chain else self.later if take else self.first


def step_gaps(structure: A.Node) -> dict[str, StepGap]:
    """Every gapped step of a repeated group (:func:`~petricep.lang.groups.gap_follows`). A
    base whose slot's newest event need not be the one the gap follows gives no early exit
    (the guards still decide): an optional step or a list an iteration may leave empty, whose
    newest element may be an earlier iteration's, and a list bound before the group. A list
    of the group every iteration binds (``C+ c[]``) is its newest element there: the step
    after it follows the iteration's last one, the first step the last iteration's."""
    lists = {r.var for r in A.events_of(structure) if r.kleene or r.optional}
    out: dict[str, StepGap] = {}
    for group in A.groups_of(structure):
        refs = {r.var: r for r in A.events_of(group.seq)}
        unsafe = lists - (group.kleene_steps - group.empty_lists)
        for var, (first, later) in gap_follows(structure, group).items():
            gap = refs[var].gap
            assert gap is not None
            safe = [None if b is None or b in unsafe else b for b in (first, later)]
            out[var] = StepGap(A.gap_amount(gap)[1], gap.in_events, safe[0], safe[1], refs[var].kleene, var)
    return out


def has_groups(pattern: A.Pattern) -> bool:
    return bool(A.groups_of(pattern.structure))


__all__ = ["Lowered", "StepGap", "analyze", "complete", "has_groups", "init", "lower", "moves", "step_gaps", "step_order"]
