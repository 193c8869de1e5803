"""Checks of repeated groups, ``SEQ(B b, C c)+ g[]`` (issue 42): where a group may stand, what
its steps may be, and how conditions read it (``g[i].b.x``, ``g[i-1].c.x``, ``g[1].b.x``,
``g[last].c.x``, ``count(g[])``, ``sum(g[].b.x)``).

Its own module so that :mod:`petricep.lang.check` only calls in at three places (structure,
one variable reference, one WHERE conjunct); every rule here is decided from the text and
reported with a caret at the part that breaks it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from petricep.errors import PatternError
from petricep.lang import ast as A

ErrorAt = Callable[[str, A.Span | None], PatternError]
Unsupported = Callable[[str, A.Span | None], PatternError]


def check_structure(
    node: A.Node, error: ErrorAt, unsupported: Unsupported, parent: A.Node | None, root: A.Node | None = None
) -> None:
    """A group stands where any element may (a step of a SEQ, a child of AND or OR, the whole
    pattern); its steps are single events, positive or negated, or optional (``C? c``, between
    two required steps: :func:`_check_optional`); no Kleene, nested group or ARCHIVED step
    inside yet (a step an iteration may repeat breaks the steps' lists, one element per
    iteration); a gap FROM a named step measures from an earlier step of the group or a
    variable bound before it (``root``: the whole structure)."""
    root = node if root is None else root
    if isinstance(node, A.EventRef):
        return
    if isinstance(node, A.Group):
        if node.least == 0 and not isinstance(parent, A.Seq):
            raise error(
                f"a repeated group that may bind no iteration ({node.var}[] {node.quantifier()}) must be an element of a SEQ, "
                "as an optional step",
                node.span,
            )
        for step in node.children:
            if not isinstance(step, A.EventRef):
                raise unsupported(f"a repeated group's steps are single events: {node.var}[] nests a {_kind(step)}", node.span)
            what = (
                None
                if step.negated or step.kleene
                else "an ARCHIVED step"
                if step.archived
                else None
            )
            if what is not None:
                raise unsupported(f"{what} inside a repeated group ({node.var}[]) is not supported yet", step.span)
            if not step.negated and step.gap is not None and step.gap.after is not None:
                _check_from(root, node, step, error, unsupported)
        if node.optional_steps:
            _check_optional(node, error, unsupported)
        if node.optional_steps or node.empty_lists:
            _check_gap_bases(node, unsupported)
        if node.kleene_steps:
            _check_kleene(node, unsupported)
        _check_optional_negation(node, unsupported)
        first = node.children[0]
        if isinstance(first, A.EventRef) and first.gap is not None and first.gap.after is None and _single_before(parent, node) is None:
            raise unsupported(
                f"a per-step gap on a repeated group's first step ({first.type} {first.var}) follows the previous "
                "iteration's last step, and on the first iteration the single event before the group: there is none",
                first.gap.span,
            )
        return
    for child in node.children:
        check_structure(child, error, unsupported, node, root)


def _check_kleene(group: A.Group, unsupported: Unsupported) -> None:
    """A Kleene step inside a group (``SEQ(B b, C+ c[], D d)+ g[]``): each iteration binds a
    list of it, anywhere in the group (``SEQ(C+ c[], B b)+``, ``SEQ(B b, C+ c[])+`` too): the
    group's first single required step (``Group.delimiter``) delimits the iterations, so a
    match's elements fall into them by position, and a group without one is refused
    (``SEQ(C+ c[])+``: two iterations of one ``c`` and one of two would be the same events;
    ``SEQ(B? b, C+ c[])+`` likewise). A lower bound of 0 (``C*``) is a list an iteration may
    leave empty, as an optional step (a negation beside it too). A stop condition (UNTIL)
    stops the group between any two of its events, a list's too; GREEDY / RELUCTANT on the
    group choose where an iteration is complete, between the group going on (the next
    iteration's first step; with the list last, its growing too; with the list first and
    possibly empty, the single step after it too) and the step after the group. A per-step
    gap on it is its chain in each iteration (:func:`gap_conditions`), one after it follows
    its last element (after a list the iteration left empty, the step before it, as after an
    optional step: :func:`_check_gap_bases`)."""
    steps = [c for c in group.children if isinstance(c, A.EventRef) and not c.negated]
    if group.delimiter is None:
        step = next(s for s in steps if s.kleene)
        raise unsupported(
            f"a Kleene step ({step.type}{step.quantifier()} {step.var}[]) inside a repeated group ({group.var}[]) is not "
            "supported yet with no single required step beside it: give the group one (it delimits each iteration's list)",
            step.span,
        )


def _check_optional(group: A.Group, error: ErrorAt, unsupported: Unsupported) -> None:
    """Optional steps inside a group (``SEQ(B b, C? c, D d)+ g[]``, ``SEQ(B b, C? c)+ g[]``):
    each iteration binds or leaves out each of them; it ends at its last step or, where only
    optional steps are left, after its last required one (GREEDY / RELUCTANT on the group count
    every move of its steps there as the group going on: an optional step first or last too).
    A gap after one follows the latest step its iteration bound (:func:`_check_gap_bases`);
    not yet one on an optional first step, where an iteration may start at it or after it
    (nor a stop condition reading the group so far, whose first step this may be:
    lang/until.py)."""
    steps = [c for c in group.children if isinstance(c, A.EventRef) and not c.negated]
    if all(s.optional for s in steps):
        raise error(f"a repeated group needs at least one step that is not optional ({group.var}[])", group.span)
    first = steps[0]
    if first.optional and first.gap is not None:
        raise unsupported(
            f"a repeated group starting with an optional step ({first.type}? {first.var} in {group.var}[]) with a "
            "per-step gap on it is not supported yet: an iteration may start at it or after it",
            first.span,
        )


def _check_gap_bases(group: A.Group, unsupported: Unsupported) -> None:
    """A gap after an optional step or a list an iteration may leave empty follows the
    iteration's latest bound step before it (:func:`gap_conditions`' chain); with every step
    before it in the iteration skippable (or on the first step, after a skippable last one),
    the previous iteration's: not yet. ``FROM`` one binds nothing where it was left out."""
    steps = [c for c in group.children if isinstance(c, A.EventRef) and not c.negated]
    skips = group.optional_steps | group.empty_lists
    for k, step in enumerate(steps):
        gap = step.gap  # (without FROM the first step's follows the previous iteration's last)
        if gap is None or gap.after is not None or steps[k - 1].var not in skips:
            continue  # (FROM an optional step: it binds nothing where the iteration left it out)
        base = steps[k - 1].var
        where = (
            f"the group's first step {step.var}, after a last step the iteration may leave out ({base})"
            if k == 0
            else f"{step.var}, whose steps before it in the iteration may all be left out ({base} too)"
            if all(s.var in skips for s in steps[:k])
            else None
        )
        if where is not None:
            raise unsupported(
                f"a per-step gap inside {group.var}[] on {where}, is not supported yet: it would follow the previous "
                "iteration's last bound step; measure FROM a required step",
                gap.span,
            )


def _check_optional_negation(group: A.Group, unsupported: Unsupported) -> None:
    """A negation next to an optional step spans from the iteration's last bound step before
    it to its next bound one after it (:func:`negation_sides`), as outside a group; not yet
    one with only optional steps on a side within its iteration (left out, the span would
    reach into another iteration or past the group) or between iterations."""
    optional = group.optional_steps | group.empty_lists
    for neg, (before, after) in negation_sides(group).items():
        side = next((s for s in (before, after) if all(v in optional for v in s)), None)
        if side is not None:
            ref = next(c for c in group.children if isinstance(c, A.EventRef) and c.var == neg)
            what = "an optional step" if side[0] in group.optional_steps else "a list an iteration may leave empty"
            raise unsupported(
                f"a negation inside {group.var}[] next to {what} ({side[0]}) "
                "is not supported yet: put it between two required steps",
                ref.span,
            )


def negation_sides(group: A.Group) -> dict[str, tuple[list[str], list[str]]]:
    """Each negation inside ``group`` -> the steps whose events bound it (P, Q), nearest first:
    between two steps those before it back to the nearest required one and those after it up
    to the nearest required one (the span runs from the last of P the iteration bound to the
    first of Q it bound: with ``C? c`` left out in ``SEQ(B b, C? c, !(X x), D d)+ g[]``, from
    ``b``); one at the group's start or end: the last step and the first."""
    members, optional = group.members, group.optional_steps | group.empty_lists
    out: dict[str, tuple[list[str], list[str]]] = {}
    for neg, (before, after) in neighbours_of(group).items():
        if before == members[-1]:
            out[neg] = ([before], [after])
            continue
        out[neg] = (_run(members[members.index(before) :: -1], optional), _run(members[members.index(after) :], optional))
    return out


def _run(steps: Sequence[str], optional: frozenset[str]) -> list[str]:
    """``steps`` up to and with the first required one."""
    out: list[str] = []
    for s in steps:
        out.append(s)
        if s not in optional:
            break
    return out


def check_mode(structure: A.Node, group: A.Group, strategy: A.Strategy, error: ErrorAt, unsupported: Unsupported) -> None:
    """GREEDY / RELUCTANT after a group choose, under skip-till-next-match, between its next
    iteration and the step after it in the pattern's SEQ where one event could start either
    (the place where the group is complete and may grow: inside an iteration the SEQ cannot
    go on), and under an AND between the group going on and a sibling wherever the group
    has begun; on a step of any SEQ (not yet a group that is itself a child of AND or OR)."""
    word = group.mode.upper()
    if strategy != A.Strategy.NEXT:
        raise error(
            f"{word} on {group.var}[] chooses between the group's next iteration and the step after it under "
            f"skip-till-next-match: add it to WHERE (under {strategy} it changes nothing)",
            group.span,
        )
    seq, _under_and = _seq_holding(structure, group, False)
    if seq is None:
        raise unsupported(
            f"{word} on a repeated group ({group.var}[]) is supported on a step of a SEQ (the pattern's, one in an "
            "OR branch or an AND), not yet as a child of AND or OR itself: put it in a SEQ with the step after it",
            group.span,
        )
    after = seq.children[[id(c) for c in seq.children].index(id(group)) + 1 :]
    if not any(not (isinstance(c, A.EventRef) and c.negated) for c in after):
        raise error(f"{word} on {group.var}[] needs a step after the group (its choice is between the two)", group.span)


def under_and(structure: A.Node, group: A.Group) -> bool:
    """Whether an AND lies above ``group``: its siblings may bind an event in the middle of an
    iteration, so GREEDY / RELUCTANT on it choose wherever it has begun (compile/compiler.py
    ``_repeat``), not only where an iteration is complete."""
    return _seq_holding(structure, group, False)[1]


def _seq_holding(node: A.Node, group: A.Group, under_and: bool) -> tuple[A.Seq | None, bool]:
    """The SEQ ``group`` is a step of (None: it is none's) and whether an AND lies above it."""
    if isinstance(node, (A.EventRef, A.Group)):
        return None, under_and
    if isinstance(node, A.Seq) and any(c is group for c in node.children):
        return node, under_and
    for child in node.children:
        if any(g is group for g in A.groups_of(child)):
            return _seq_holding(child, group, under_and or isinstance(node, A.And))
    return None, under_and


def _check_from(root: A.Node, group: A.Group, step: A.EventRef, error: ErrorAt, unsupported: Unsupported) -> None:
    """``T v AFTER lo TO hi FROM u`` on a step of ``group``: ``u`` an earlier step of the group
    (the same iteration's) or a variable bound before the group (every iteration's step is
    measured from it)."""
    assert step.gap is not None and step.gap.after is not None
    u, members = step.gap.after, group.members
    if u in members:
        if members.index(u) >= members.index(step.var):
            raise error(
                f"a per-step gap FROM {u} on {step.var} inside the repeated group {group.var}[] measures from an "
                f"earlier step of the iteration: {u} is not before {step.var}",
                step.gap.span,
            )
        return
    known = {r.var: r for r in A.events_of(root)}
    if u not in known or known[u].negated:
        raise error(f"gap FROM: {'unknown variable' if u not in known else 'a negated variable binds no time:'} {u!r}", step.gap.span)
    if u not in _before(root, group) or known[u].kleene:
        why = (
            f"a list's events are many: which one every iteration's {step.var} is measured from is not defined yet"
            if known[u].kleene
            else f"{u!r} is not bound before the group (after it, or beside it in an AND or OR): a gap measures "
            f"from an earlier event, and {u!r} may come after an iteration's {step.var}"
        )
        raise unsupported(
            f"a per-step gap FROM {u} inside the repeated group {group.var}[] measures from an earlier step of the "
            f"group or a single event bound before it, not yet {u!r} ({why})",
            step.gap.span,
        )


def negations_of(group: A.Group) -> list[A.EventRef]:
    """The negations inside ``group``: between two of its steps, or at its start or end
    (between one iteration's last step and the next one's first)."""
    return [c for c in group.children if isinstance(c, A.EventRef) and c.negated]


def _single_before(parent: A.Node | None, group: A.Group) -> str | None:
    """The single positive event right before ``group`` in its SEQ (negations skipped), or None."""
    if not isinstance(parent, A.Seq):
        return None
    before: A.Node | None = None
    for child in parent.children:
        if child is group:
            break
        if not (isinstance(child, A.EventRef) and child.negated):
            before = child
    if isinstance(before, A.EventRef) and not before.kleene:
        return before.var
    return None


@dataclass(frozen=True)
class GapCondition:
    """One conjunct of a group step's gap: ``phase`` the moves of a Kleene step it binds (None
    all, False those starting the iteration's list, True those growing it); ``absent`` the
    skippable steps the current iteration must have left out (the gap follows the step before
    them: it is checked only there)."""

    expr: A.Expr
    phase: bool | None
    absent: frozenset[str] = frozenset()


def gap_conditions(structure: A.Node, group: A.Group) -> list[GapCondition]:
    """A group's per-step gaps as conditions in the group's words (two conjuncts each), from
    what :func:`gap_follows` says each follows: a step ``lo`` to ``hi`` after the step before
    it in its iteration (or its ``FROM``), the first step after the previous iteration's last
    (``g[i-1]``, vacuous on the first iteration) and, on the first iteration, after the single
    event before the group (``g[1]``). On a Kleene step the chain: those bound its first
    element in each iteration, and each later one follows the element before it
    (``g[i].c - g[i-1].c``, its list's previous element). Each with the moves of its step it
    binds: None all, False those starting the iteration's list, True those growing it. After an
    optional step or a list the iteration may leave empty, one pair per step it may follow,
    nearest first back to a required one (:class:`GapCondition` ``absent``), as outside a group;
    a step read at ``g[i]`` the iteration left out binds nothing there (compile/groups.py)."""
    out: list[GapCondition] = []
    refs = {c.var: c for c in group.children if isinstance(c, A.EventRef) and not c.negated}
    members, skips = group.members, group.optional_steps | group.empty_lists
    for var, (first, later) in gap_follows(structure, group).items():
        gap = refs[var].gap
        assert gap is not None
        lo, hi = A.gap_amount(gap)
        f = A.POS_FIELD if gap.in_events else "ts"  # (EVENTS: input positions, as WITHIN n EVENTS)
        here = A.Attr(group.var, f, A.Index(A.IDX_CUR), member=var)
        bases: list[tuple[A.Expr, A.Expr, frozenset[str]]]
        if first == later and later in members and gap.after is None:  # the iteration's latest step before it
            chain = _run(members[members.index(later) :: -1], skips)
            bases = [(here, A.Attr(group.var, f, A.Index(A.IDX_CUR), member=u), frozenset(chain[:j])) for j, u in enumerate(chain)]
        elif first == later:  # FROM an earlier step of the iteration, or a variable before the group
            base = A.Attr(group.var, f, A.Index(A.IDX_CUR), member=later) if later in members else A.Attr(later, f)
            bases = [(here, base, frozenset())]
        else:  # the first step
            assert first is not None  # checked
            bases = [
                (here, A.Attr(group.var, f, A.Index(A.IDX_PREV), member=later), frozenset()),
                (A.Attr(group.var, f, A.Index(A.IDX_CONST, 1), member=var), A.Attr(first, f), frozenset()),
            ]
        phase: bool | None = False if refs[var].kleene else None
        if refs[var].kleene:
            bases.append((here, A.Attr(group.var, f, A.Index(A.IDX_PREV), member=var), frozenset()))
        for k, (after, earlier, absent) in enumerate(bases):
            diff = A.BinOp("-", after, earlier, span=gap.span)
            on = True if phase is not None and k == len(bases) - 1 else phase
            out += [
                GapCondition(A.Compare(op, diff, A.Num(bound), span=gap.span), on, absent) for op, bound in ((">=", lo), ("<=", hi))
            ]
    return out


def gap_follows(structure: A.Node, group: A.Group) -> dict[str, tuple[str | None, str]]:
    """Each gapped step of ``group`` -> the variables whose events its gap is measured from
    (:func:`gap_conditions`' conditions, compile/groups.py's early exits): on the group's first iteration (None: none, the gap
    binds nothing there) and on the later ones. A step of the group stands for its newest
    element where the gapped step binds (its own iteration's, or for the first step's the
    previous iteration's last step)."""
    out: dict[str, tuple[str | None, str]] = {}
    steps = [c for c in group.children if isinstance(c, A.EventRef) and not c.negated]
    for k, step in enumerate(steps):
        if step.gap is None:
            continue
        u = step.gap.after
        if u is not None or k:
            base = u if u is not None else steps[k - 1].var
            out[step.var] = (base, base)
        else:
            out[step.var] = (_single_before(structure, group), steps[-1].var)
    return out


def _kind(node: A.Node) -> str:
    return "repeated group" if isinstance(node, A.Group) else type(node).__name__.upper().rstrip("_")


def group_refs(structure: A.Node) -> dict[str, A.EventRef]:
    """A stand-in reference per group name, so that the checks which look a variable up find
    it: a list (``kleene``) of no event type."""
    return {g.var: A.EventRef("", g.var, kleene=True, span=g.span) for g in A.groups_of(structure)}


def check_reference(
    e: A.Attr | A.Agg,
    groups: Mapping[str, A.Group],
    members: Mapping[str, str],
    error: ErrorAt,
    iteration_ok: bool,
    unsupported: Unsupported | None = None,
) -> bool:
    """Check one reference that concerns a group (its name, one of its steps, or a member
    path): True when it was one (checked here), False to let the caller check it."""
    if e.var in members and e.member is None:
        g = members[e.var]
        what = f"{e.var}.{e.field}" if isinstance(e, A.Attr) else f"{e.func}({e.var}[])"
        raise error(
            f"{e.var!r} is a step of the repeated group {g}[]: read it through the group, as {g}[i].{e.var}.x, "
            f"{g}[1].{e.var}.x, {g}[last].{e.var}.x or sum({g}[].{e.var}.x) (not {what})",
            e.span,
        )
    if e.member is None and e.var not in groups:
        return False
    if e.var not in groups:
        raise error(f"{e.var!r} is not a repeated group: {e.var}[...].{e.member}.{e.field} reads a step of a group", e.span)
    group = groups[e.var]
    if e.member is None:
        if isinstance(e, A.Agg) and e.func == "count" and e.field is None:
            return True
        first = group.members[0]
        hint = f"{e.var}[i].{first}.x" if isinstance(e, A.Attr) else f"{e.func}({e.var}[].{first}.x)"
        raise error(f"{e.var!r} is a repeated group: name one of its steps ({', '.join(group.members)}), as in {hint}", e.span)
    if e.member not in group.members:
        raise error(f"the repeated group {e.var}[] has no step {e.member!r} (its steps: {', '.join(group.members)})", e.span)
    if isinstance(e, A.Attr) and e.index is not None and e.index.kind in (A.IDX_CUR, A.IDX_PREV) and not iteration_ok:
        raise error(f"{e.var}[{e.index.kind}] is only meaningful in WHERE", e.span)
    if isinstance(e, A.Attr) and e.member in group.kleene_steps and not (e.index is not None and e.index.kind == A.IDX_CUR):
        at = {A.IDX_PREV: "i-1", A.IDX_LAST: "last"}.get(e.index.kind if e.index else "", str(e.index.const if e.index else ""))
        raise (unsupported or error)(
            f"{e.var}[{at}].{e.member}.{e.field} reads the Kleene step {e.member} of {e.var}[], a list in each iteration: "
            f"not yet one element of another iteration; read each element of its own in an iteration condition, "
            f"{e.var}[i].{e.member}.{e.field}, or the whole group's through an aggregate, sum({e.var}[].{e.member}.{e.field}) "
            f"or max({e.var}[].{e.member}.{e.field})",
            e.span,
        )
    if isinstance(e, A.Attr) and e.member in group.optional_steps and e.index is not None and e.index.kind != A.IDX_CUR:
        _check_optional_index(e, group, unsupported or error)
    return True


def _check_optional_index(e: A.Attr, group: A.Group, unsupported: Unsupported) -> None:
    """``g[k].c`` / ``g[last].c`` of an optional step: that iteration's (unbound where it left
    ``c`` out, or the group has no iteration ``k``), the engines placing each element into its
    iteration by position (the nearest earlier element of the group's first required step,
    for a step before that one the nearest later); ``g[i-1].c`` the iteration before's, for a
    step after the first required one (for one before it the iteration before starts two
    elements of that list back, which the engines do not keep: not yet)."""
    assert e.index is not None and e.member is not None
    members = group.members
    first = group.delimiter
    assert first is not None  # (_check_kleene: a group with a list has a single required step)
    if e.index.kind != A.IDX_PREV or members.index(e.member) > members.index(first):
        return
    raise unsupported(
        f"{e.var}[i-1].{e.member}.{e.field} reads the optional step {e.member} before the group's first required step "
        f"{first} of the iteration before: not yet (an iteration may start at either); read it as "
        f"{e.var}[i].{e.member}.{e.field}, {e.var}[k] / {e.var}[last] or through an aggregate, "
        f"sum({e.var}[].{e.member}.{e.field})",
        e.span,
    )


def check_conjunct(expr: A.Expr, structure: A.Node, groups: Mapping[str, A.Group], error: ErrorAt, unsupported: Unsupported) -> None:
    """An iteration condition over a group (``g[i]``, ``g[i-1]``) holds for every iteration;
    it reads ``g[i]`` (the iteration it checks) and, besides the group, variables bound before
    the group (decided on the step that completes what it reads) or single events bound after
    it or beside it in an AND (``g[i].c.x < d.x``: decided for the iterations so far when the
    last of those binds, and on that step for the iterations after)."""
    if _check_group_negation(expr, structure, groups, unsupported):
        return  # (a negation's condition reading its iteration: not an iteration condition)
    iters = [e for e in A.walk_expr(expr) if isinstance(e, A.Attr) and e.var in groups and e.index is not None and e.index.kind in (A.IDX_CUR, A.IDX_PREV)]
    if not iters:
        return
    g = iters[0].var
    if not any(e.index is not None and e.index.kind == A.IDX_CUR for e in iters):
        raise error(f"an iteration condition over {g}[] reads the iteration it checks: {g}[i] (besides {g}[i-1])", A.leftmost_span(expr))
    before = _before(structure, groups[g])
    later = False
    for e in A.walk_expr(expr):
        if not isinstance(e, (A.Attr, A.Agg)) or e.var == g and isinstance(e, A.Attr) and e in iters:
            continue
        if e.var == g:
            raise error(f"an iteration condition over {g}[i] cannot also read the whole group {g}[]", e.span)
        if e.var not in before:
            _check_later_read(e, g, structure, unsupported)
            later = True
    _check_optional_read(iters, groups[g], later, unsupported)
    _check_list_read(iters, groups[g], later, unsupported)


def _check_list_read(iters: list[A.Attr], group: A.Group, later: bool, unsupported: Unsupported) -> None:
    """An iteration condition reading a Kleene step ``g[i].c`` holds for each element of the
    iteration's list (SQL's ``DEFINE C AS C.x > B.x`` on ``(B C+ D)+``): it is checked on each
    move binding one, so ``c`` must be the last step it reads at ``g[i]`` (a later step's move
    would see one element, the list's last), and it reads no event bound after the group
    (decided there for every iteration, from the lists: not yet per element)."""
    members = group.members
    lists = [e for e in iters if e.member in group.kleene_steps]
    if not lists:
        return
    at = max((e for e in iters if e.index is not None and e.index.kind == A.IDX_CUR), key=lambda e: members.index(e.member or ""))
    for e in lists:
        why = (
            f"a later step ({group.var}[i].{at.member}), checked on that step's move, which sees one element of the list"
            if e.member != at.member
            else "an event bound after the group (checked there for every iteration: not per element)"
            if later
            else None
        )
        if why is not None:
            raise unsupported(
                f"an iteration condition reading the Kleene step {group.var}[i].{e.member} (each of its elements) and {why} "
                f"is not supported yet: compare its elements with earlier steps of the iteration",
                e.span,
            )


def _check_optional_read(iters: list[A.Attr], group: A.Group, later: bool, unsupported: Unsupported) -> None:
    """An iteration condition reading an optional step ``g[i].c`` holds on an iteration
    without it. Decided on its own step, the net's places say whether the iteration bound it;
    one that also reads an event bound after the group (decided for the earlier iterations
    when that event binds, from the steps' lists) must be checked on the optional step: not
    yet on a required step after it."""
    members = group.members
    read = [e for e in iters if e.index is not None and e.index.kind == A.IDX_CUR and e.member is not None]
    at = max(read, key=lambda e: members.index(e.member or ""), default=None)
    for e in read:
        if later and at is not None and e.member in group.optional_steps and e.member != at.member:
            raise unsupported(
                f"an iteration condition reading the optional step {group.var}[i].{e.member} and a later step "
                f"({group.var}[i].{at.member}) and an event bound after the group is not supported yet: "
                f"split it so that the part reading {e.member} reads no later step",
                e.span,
            )


def _check_later_read(e: A.Attr | A.Agg, g: str, structure: A.Node, unsupported: Unsupported) -> None:
    """An iteration condition's read of a variable not bound before the group ``g``: a single
    event (a step after the group, an AND sibling, a step of another OR branch); a list or
    another group has no one value to compare every iteration with, a stop event or a
    negated one is no step (their conditions are their own)."""
    refs = {r.var: r for r in A.events_of(structure)}
    ref = refs.get(e.var)
    stops = {u.var for _, u in A.all_stops_of(structure)}
    if ref is not None and not ref.kleene and not ref.negated and e.var not in stops and isinstance(e, A.Attr):
        return
    what = (
        "a stop event (UNTIL)"
        if e.var in stops
        else "another repeated group"
        if ref is None
        else "a negated event"
        if ref.negated
        else "a Kleene list"
    )
    raise unsupported(
        f"an iteration condition over {g}[i] reads {g}[], variables bound before the group and single events "
        f"bound after it or beside it, not {what} ({e.var!r}): not yet",
        e.span,
    )


def _check_group_negation(expr: A.Expr, structure: A.Node, groups: Mapping[str, A.Group], unsupported: Unsupported) -> bool:
    """A condition of a negation inside a group is decided while the partial match waits at
    the negation (the scan): it reads the negated event, variables bound before the group and
    the group as it stands there (:func:`_check_iteration_read`). True: ``expr`` is such a
    condition reading the group (not an iteration condition)."""
    inside = {n.var: g for g in groups.values() for n in negations_of(g)}
    mine = [e for e in A.walk_expr(expr) if isinstance(e, (A.Attr, A.Agg)) and e.var in inside]
    if not mine:
        return False
    neg, group = mine[0].var, inside[mine[0].var]
    before = _before(structure, group) - set(groups)
    pre = bound_at(group, neg)
    reads = False
    for e in A.walk_expr(expr):
        if not isinstance(e, (A.Attr, A.Agg)) or e.var in inside:
            continue
        if e.var == group.var:
            _check_iteration_read(e, neg, group, pre, unsupported)
            reads = True
        elif e.var not in before:
            raise unsupported(
                f"a condition of the negation {neg!r} inside the repeated group {group.var}[] reads the negated "
                f"event, variables bound before the group and the group so far, not {e.var!r}: "
                f"it is decided while the partial match waits for the step after {neg!r}, when {e.var!r} may not be bound yet",
                e.span,
            )
    return reads


def _check_iteration_read(e: A.Attr | A.Agg, neg: str, group: A.Group, pre: list[str] | None, unsupported: Unsupported) -> None:
    """A negation's read of its group, the group as it stands while the negation is open:
    between two steps (``pre``: its iteration's steps before it) ``g[i].s`` and ``g[last].s``
    for those steps, ``g[i-1].s``, ``g[k].s`` and aggregates for any step (the complete
    iterations, and the steps of the current one bound so far); between iterations (``pre``
    None: it lies in no iteration) ``g[last].s``, ``g[k].s`` and aggregates (the iterations
    complete so far), not ``g[i]`` or ``g[i-1]``."""
    g = group.var
    if isinstance(e, A.Attr) and e.member in group.kleene_steps:
        raise unsupported(
            f"a condition of the negation {neg!r} inside {g}[] reading the Kleene step {e.member!r} by iteration is not "
            f"supported yet: read the group so far through an aggregate, sum({g}[].{e.member}.{e.field})",
            e.span,
        )
    if getattr(e, "member", None) in group.optional_steps and not _optional_read_ok(e, pre):
        raise unsupported(
            f"a condition of the negation {neg!r} inside {g}[] reading the optional step {e.member!r} is not "
            "supported yet (an iteration may leave it out)",
            e.span,
        )
    if not isinstance(e, A.Attr) or e.index is None or e.index.kind == A.IDX_CONST:
        return
    kind, step = e.index.kind, e.member
    if pre is None:
        if kind in (A.IDX_CUR, A.IDX_PREV):
            raise unsupported(
                f"a condition of the negation {neg!r} at the start or end of {g}[] lies between two iterations, in "
                f"neither: read the iteration just completed as {g}[last].{step}.{e.field} ({g}[{kind}] names the "
                "iteration a condition lies in, or the one before it)",
                e.span,
            )
        return
    if kind == A.IDX_PREV or step in pre:
        return
    which = f"{g}[{kind}].{step}" + (f" ({g}[last] is the iteration it lies in)" if kind == A.IDX_LAST else "")
    raise unsupported(
        f"a condition of the negation {neg!r} inside {g}[] reads its iteration's steps before it "
        f"({', '.join(pre)}), not {which}: that one is not bound while the iteration waits for it "
        f"(the previous iteration's is {g}[i-1].{step}.{e.field})",
        e.span,
    )


def _optional_read_ok(e: A.Attr | A.Agg, pre: list[str] | None) -> bool:
    """A negation's read of an optional step ``c`` of its group with a clear meaning: between
    two steps ``g[i].c`` / ``g[last].c`` for ``c`` before it in its iteration (where the
    iteration left ``c`` out the read does not exist: a comparison reading it is false, the
    negation forbids nothing there, as one reading a step left out outside a group). Not yet
    ``g[k].c`` or ``g[i-1].c`` (an iteration's ``c`` by number: its list holds only the
    iterations that bound it), ``g[last].c`` between iterations (whether the iteration just
    completed bound ``c`` is not kept), nor an aggregate (where no iteration bound ``c`` yet,
    the engines read its empty list otherwise than as a value that does not exist)."""
    if isinstance(e, A.Agg):
        return False
    kind = e.index.kind if e.index is not None else None
    return pre is not None and kind in (A.IDX_CUR, A.IDX_LAST) and e.member in pre


def bound_at(group: A.Group, neg: str) -> list[str] | None:
    """The steps of its own iteration bound while the negation ``neg`` inside ``group`` is
    open: those before it for one between two steps; None for one at the group's start or
    end (between iterations: it lies in no iteration)."""
    prev, _after = neighbours_of(group)[neg]
    if prev == group.members[-1]:
        return None
    return list(group.members[: group.members.index(prev) + 1])


def reads_its_iteration(expr: A.Expr, groups: Mapping[str, A.Group]) -> bool:
    """Whether ``expr`` is a condition of a negation inside a group reading ``g[i]`` or
    ``g[i-1]`` (the iteration the negation lies in and the one before: not an iteration
    condition, checked above)."""
    inside = {n.var for g in groups.values() for n in negations_of(g)}
    return bool(inside & A.vars_of(expr)) and any(
        isinstance(e, A.Attr) and e.var in groups and e.index is not None and e.index.kind in (A.IDX_CUR, A.IDX_PREV)
        for e in A.walk_expr(expr)
    )


def neighbours_of(group: A.Group) -> dict[str, tuple[str, str]]:
    """Each negation inside ``group`` -> (the step before it, the step after it); one at the
    group's start or end: (the last step, the first)."""
    kids, members = group.children, group.members
    out: dict[str, tuple[str, str]] = {}
    for i, c in enumerate(kids):
        if isinstance(c, A.EventRef) and c.negated:
            before = [k.var for k in kids[:i] if isinstance(k, A.EventRef) and not k.negated]
            after = [k.var for k in kids[i + 1 :] if isinstance(k, A.EventRef) and not k.negated]
            out[c.var] = (before[-1], after[0]) if before and after else (members[-1], members[0])
    return out


def _before(structure: A.Node, group: A.Group) -> set[str]:
    """The variables bound before any event of ``group``: those of the steps before it in
    every SEQ that encloses it (inside AND or OR, the SEQs above it; its AND siblings may
    come after it, its OR siblings are not bound with it)."""
    out: set[str] = set()
    node: A.Node = structure
    while node is not group:
        assert not isinstance(node, A.EventRef)  # the group is under it
        child = next(c for c in node.children if any(x is group for x in A.groups_of(c)))
        if isinstance(node, A.Seq):
            for earlier in node.children[: node.children.index(child)]:
                out.update(_bound_by(earlier))
        node = child
    return out


def _bound_by(node: A.Node) -> set[str]:
    """The variables a structure element binds (a group by its own name, as it is read)."""
    if isinstance(node, A.Group):
        return {node.var}
    return {r.var for r in A.events_of(node) if not r.negated} | {x.var for x in A.groups_of(node)}
