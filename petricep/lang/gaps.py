"""Checks of per-step gaps (issue 42, Eagle's timed sequence ``E1 ;<lo,hi> E2``):
``T v AFTER lo TO hi [unit] [FROM u]`` on a step of the pattern's SEQ.

Where a gap may stand and what it is measured from, decided from the text and reported with
a caret at the gap (a repeated group's steps: :mod:`petricep.lang.groups`):

* on a single event, a Kleene list (the *chain*: each element ``lo..hi`` after the one before
  it, the first after the step before the list) or an optional step (it binds only when the
  step is present), a step of the pattern's SEQ or of a SEQ nested in ``AND``/``OR``, or a
  child of an ``AND``/``OR`` (with ``FROM``);
* measured from the variable named with ``FROM`` (any positive variable that precedes it: a
  single event, a list's last element, a variable inside an earlier ``AND``/``OR``; an absent
  one, an ``OR`` branch not taken or an optional step left out, binds nothing, as a WHERE
  conjunct reading it holds), else from the positive step before it in its SEQ: a list's last
  element; past an optional step left out, the step before that one; after a repeated group
  (or ``FROM g``), its last iteration's last step (``FROM`` one of its steps: that step of the
  last iteration); right after an ``AND``/``OR``, its latest event (:func:`completions`: the
  variables it bound, compile/gaps.py takes their latest; a repeated group's steps among them:
  their last elements, the latest its last iteration's last step). The first step of a nested SEQ and
  a child of an ``AND``/``OR`` have no event before them: ``FROM`` names it;
* under a time or a count window (the gap in time units, the window in events: both hold), in
  a pattern with ``ARCHIVED`` variables (a gap reaching into the archive is a join condition,
  :mod:`petricep.compile.archived`);
* in EVENTS (``AFTER 1 TO 3 EVENTS``: input positions, as ``WITHIN n EVENTS`` counts) under a
  count window only (:func:`_check_events`), and then with ON TIMEOUT too, on any step (a
  repeated group's too: its conditions compare positions, lang/groups.py gap_conditions).

Still refused (:class:`~petricep.errors.PatternUnsupportedError`): ON TIMEOUT with a gap in time under a count window (the
deadline in events, the gap's end in time), a gap in EVENTS under a time window, and so
beside ARCHIVED variables (they need a time window: the two contradict).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from petricep.errors import PatternError
from petricep.lang import ast as A

ErrorAt = Callable[[str, A.Span | None], PatternError]


def parent_of(structure: A.Node, ref: A.EventRef) -> A.Node | None:
    """The node whose child ``ref`` is (None: ``ref`` is the whole pattern)."""
    if isinstance(structure, A.EventRef):
        return None
    for child in structure.children:
        if child is ref:
            return structure
        found = parent_of(child, ref)
        if found is not None:
            return found
    return None


def precedes(structure: A.Node, u: str, v: str) -> bool:
    """Every event of ``u`` comes before every event of ``v``: some SEQ holds them in two of
    its children, ``u``'s first (an AND's children have no order)."""
    if isinstance(structure, A.EventRef):
        return False
    if isinstance(structure, A.Seq):
        where = {r.var: i for i, c in enumerate(structure.children) for r in A.events_of(c)}
        if u in where and v in where and where[u] != where[v]:
            return where[u] < where[v]
    return any(precedes(c, u, v) for c in structure.children)


Base = str | A.And | A.Or  # a variable, or an AND/OR whose latest event a gap follows


def default_bases(structure: A.Node, ref: A.EventRef) -> tuple[Base, ...]:
    """The variables a gapped step without ``FROM`` may follow, nearest first: the positive
    step before it in its SEQ and, while that is an optional step (left out in some matches),
    the one before it too; a repeated group there: its last step; an AND/OR there: the node
    itself (the step follows its completion, its latest event: :func:`completions`). Empty:
    nothing before it, or it is no step of a SEQ (a child of an AND or OR)."""
    seq = parent_of(structure, ref)
    if not isinstance(seq, A.Seq):
        return ()
    before: list[A.Node] = []
    for child in seq.children:
        if child is ref:
            break
        if not (isinstance(child, A.EventRef) and child.negated):
            before.append(child)
    out: list[Base] = []
    for node in reversed(before):
        if isinstance(node, A.Group):  # its last event: the last iteration's last step
            out.append(node.members[-1])
            if node.least:
                return tuple(out)
            continue  # (one that may bind no iteration: as an optional step)
        if isinstance(node, (A.And, A.Or)):
            return (*out, node)
        assert isinstance(node, A.EventRef)
        out.append(node.var)
        if not A.skippable(node):  # (a list of no event or more: as an optional step)
            return tuple(out)
    return ()  # (only optional steps before it: none when all are left out)


def completions(node: A.Node) -> set[frozenset[str]]:
    """The sets of variables ``node`` binds once complete (an OR: one per branch; an optional
    step: with or without it): a step after an AND/OR follows the latest event of the set its
    match bound (a list: its last element)."""
    if isinstance(node, A.EventRef):
        if node.negated:
            return {frozenset()}
        one = frozenset((node.var,))
        return {one, frozenset()} if A.skippable(node) else {one}
    if isinstance(node, A.Or):
        return {s for c in node.children for s in completions(c)}
    out = {frozenset[str]()}
    for c in node.children:
        out = {a | b for a in out for b in completions(c)}
    return out


def group_last(structure: A.Node, name: str) -> str:
    """A variable a gap follows: a repeated group (``FROM g``) is its last step's variable
    (the last iteration's last event); any other, itself."""
    for g in A.groups_of(structure):
        if g.var == name:
            return g.members[-1]
    return name


def gap_reference(structure: A.Node, ref: A.EventRef) -> str | None:
    """The variable a gapped step's time is measured from when every step before it is bound:
    the one named with FROM, else the positive step before it; None where there is none."""
    assert ref.gap is not None
    if ref.gap.after is not None:
        return group_last(structure, ref.gap.after)
    bases = default_bases(structure, ref)
    return bases[0] if bases and isinstance(bases[0], str) else None  # (an AND/OR: no one variable)


def check_gaps(
    structure: A.Node,
    window: A.Window | None,
    has_timeout: bool,
    members: Mapping[str, str],
    stops: Mapping[str, A.EventRef],
    error: ErrorAt,
    unsupported: ErrorAt,
) -> None:
    """Every per-step gap (``members``: a repeated group's steps, checked as a group's; ``stops``:
    UNTIL's stop events, which bind no time)."""
    _check_events(structure, window, unsupported)
    gapped = [r for r in A.events_of(structure) if r.gap is not None and r.var not in members]
    if not gapped:
        return
    timed = [r.gap for r in gapped if r.gap is not None and not r.gap.in_events]
    if window is not None and window.kind == A.WIN_COUNT and has_timeout and timed:
        raise unsupported(
            "a per-step gap in time under a count window (WITHIN n EVENTS) with ON TIMEOUT is not supported yet: "
            "a timeout's deadline is then in events, this gap's end in time: count the gap in EVENTS",
            timed[0].span,
        )
    refs = {r.var: r for r in A.events_of(structure)}
    groups = {g.var for g in A.groups_of(structure)}
    for ref in gapped:
        gap = ref.gap
        assert gap is not None
        if ref.negated:
            raise error(f"a negated event takes no gap: bound the step after !({ref.type} {ref.var}) instead", gap.span)
        if gap.after is None:
            _check_default(structure, ref, error)
            continue
        base = gap.after
        if base in groups or base in members:  # (a group's step: the last iteration's)
            if not precedes(structure, group_last(structure, base), ref.var):
                raise error(f"gap FROM {base}: {base!r} is not an earlier step than {ref.var!r}", gap.span)
            continue
        target = refs.get(base)
        if base in stops or target is None or target.negated:
            what = "unknown variable" if target is None and base not in stops else "a negated variable binds no time:"
            if base in stops:
                what = "a stop event (UNTIL) binds no time:"
            raise error(f"gap FROM: {what} {base!r}", gap.span)
        if not precedes(structure, base, ref.var):
            raise error(f"gap FROM {base}: {base!r} is not an earlier step than {ref.var!r}", gap.span)


def _check_events(structure: A.Node, window: A.Window | None, unsupported: ErrorAt) -> None:
    """A gap in EVENTS counts input positions as ``WITHIN n EVENTS`` does: only under a count
    window (under a time window the partial match's clock is time, and an ON TIMEOUT deadline
    or an early exit would mix the two: write the gap in time units there), so never in a
    pattern with ARCHIVED variables, which needs a time window (compile/archived.py)."""
    archived = any(r.archived for r in A.events_of(structure))
    for ref in A.events_of(structure):
        gap = ref.gap
        if gap is None or not gap.in_events:
            continue
        if window is None or window.kind != A.WIN_COUNT:
            raise unsupported(
                "a per-step gap in EVENTS needs a count window (WITHIN n EVENTS): under a time window, or none, "
                "the partial match's clock is time: write the gap in time units",
                gap.span,
            )
        if archived:
            raise unsupported(
                "a per-step gap in EVENTS cannot stand in a pattern with ARCHIVED variables: the gap needs a count "
                "window (WITHIN n EVENTS) and ARCHIVED variables a time window (a count window counts live events "
                "only, the archive's have no place among them): write the gap in time units",
                gap.span,
            )


def _check_default(structure: A.Node, ref: A.EventRef, error: ErrorAt) -> None:
    """A gap without FROM: the step before it must be one event (or a list), and, where it is
    an optional step, something before that one too."""
    assert ref.gap is not None
    if default_bases(structure, ref):
        before = default_bases(structure, ref)[0]
        if not isinstance(before, str):
            _check_composite(before)
            return
        return
    seq = parent_of(structure, ref)
    if seq is None:
        raise error(f"the first step {ref.type} {ref.var} has no step before it to follow: name one with FROM", ref.gap.span)
    if not isinstance(seq, A.Seq):
        raise error(
            f"{ref.type} {ref.var} is a child of an {'AND' if isinstance(seq, A.And) else 'OR'} (no step before it): "
            "name the step the gap follows with FROM",
            ref.gap.span,
        )
    steps = list(seq.children)
    prev = [c for c in steps[: next(i for i, c in enumerate(steps) if c is ref)] if not (isinstance(c, A.EventRef) and c.negated)]
    if not prev:
        where = "" if seq is structure else " of a SEQ inside AND/OR"
        raise error(f"the first step {ref.type} {ref.var}{where} has no step before it to follow: name one with FROM", ref.gap.span)
    last = prev[-1]
    assert isinstance(last, A.EventRef)  # optional steps only before it
    raise error(
        f"the steps before {ref.type} {ref.var} are optional ({last.type}{last.quantifier()} {last.var}{'[]' if last.kleene else ''}): "
        "when they are left out it has nothing to follow: name one with FROM",
        ref.gap.span,
    )


def _check_composite(node: A.And | A.Or) -> None:
    """A gap right after an AND/OR follows its latest event, one it always binds (a repeated
    group's: its last iteration's last step, the latest of its steps' last elements)."""
    assert frozenset() not in completions(node)  # (every SEQ has a step that is not optional: checked)


__all__ = ["Base", "check_gaps", "completions", "default_bases", "gap_reference", "group_last", "parent_of", "precedes"]
