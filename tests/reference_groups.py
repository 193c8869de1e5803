"""Repeated groups (``SEQ(B b, C c)+ g[]``) for the brute-force reference (:mod:`tests.reference`),
written from docs/SEMANTICS.md "Repeated groups" alone (no engine code).

A group binds a non-empty sequence of iterations (a bounded one, ``SEQ(...){n,m} g[]``,
``n`` to ``m`` of them), each one event per step (a dict step ->
Item; an optional step ``C? c`` an iteration may leave out: each iteration is enumerated with
and without it, and lacks the key without it; a Kleene step ``C+ c[]`` between two single steps
a tuple of Items, every increasing sequence within its bounds): the events of the group, read iteration by iteration and step by step (the *chain*),
are each ``before`` the next, every step's events are in stream order, no event is bound
twice, and the whole group is ordered after what precedes it in its SEQ and before what
follows (the pattern's precedence treats the group as one variable). A per-step gap on a
step bounds the time from the event before it in the chain (the first one's: from the single
event before the group in its SEQ), or with ``FROM u`` from the iteration's step ``u`` or the
event of ``u`` bound before the group: ``lo <= ts - ts_base <= hi`` (in EVENTS: on the input
positions, ``pos``). A negation between two
steps, ``SEQ(B b, !(X x), C c)+ g[]``, forbids a violating X between b and c of every
iteration; one at the group's start or end, ``SEQ(B b, C c, !(X x))+ g[]``, between one
iteration's c and the next one's b (:func:`iteration_intervals`; the bounds as any
negation's; next to an optional step, between the nearest steps on each side that the
iteration bound, :func:`sides`); its conditions read the group *so far* where the interval lies (the iterations
before it and, for one between two steps, its iteration's steps before the negation), that
iteration as ``g[i]``. A partial binding with such an interval violated extends nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from petricep.lang.ast import DURATION_UNITS, EventRef, Group
from tests.reference_gaps import gap_holds

Iteration = dict[str, Any]  # step variable -> Item


def steps(group: Group) -> list[EventRef]:
    return [c for c in group.children if isinstance(c, EventRef) and not c.negated]


def negations(group: Group) -> list[tuple[EventRef, str, str]]:
    """Each negation inside ``group`` with the steps around it: (negation, the step before it,
    the step after it). Between two steps it forbids an event between those two in every
    iteration; at the group's start or end (none before, or none after it) between one
    iteration's last step and the next one's first."""
    return [(n, before[0], after[0]) for n, before, after in sides(group)]


def sides(group: Group) -> list[tuple[EventRef, list[str], list[str]]]:
    """Each negation inside ``group`` with the steps that may bound its span, nearest first:
    between two steps, those before it back to the nearest required one and those after it
    up to the nearest required one (beside an optional step ``C? c`` the span runs from the
    nearest step before it the iteration bound to the nearest one after it that it bound,
    docs/LANGUAGE.md); at the group's start or end, the last step and the first."""
    out = []
    kids = group.children
    ss = steps(group)
    for i, c in enumerate(kids):
        if isinstance(c, EventRef) and c.negated:
            before = [k for k in kids[:i] if isinstance(k, EventRef) and not k.negated]
            after = [k for k in kids[i + 1 :] if isinstance(k, EventRef) and not k.negated]
            if before and after:
                out.append((c, _up_to_required(before[::-1]), _up_to_required(after)))
            else:
                out.append((c, [ss[-1].var], [ss[0].var]))
    return out


def _up_to_required(refs: Sequence[EventRef]) -> list[str]:
    out = []
    for r in refs:
        out.append(r.var)
        if not skippable(r):  # (a list an iteration may leave empty, C*, as an optional step)
            break
    return out


def iteration_intervals(group: Group, value: Sequence[Iteration]) -> list[tuple[EventRef, Any, Any]]:
    """For each negation inside ``group``: (negation, the event before, the event after) for
    every interval of ``value`` (a binding, or a partial one) no violating event may lie in,
    both of its ends bound: within each iteration, or between consecutive ones."""
    return [(n, p, q) for n, p, q, _k, _so_far in _intervals(group, value)]


def _intervals(group: Group, value: Sequence[Iteration]) -> list[tuple[EventRef, Any, Any, int | None, tuple[Iteration, ...]]]:
    """:func:`iteration_intervals` with the iteration (1, 2, ...) each interval lies in (None
    for one between iterations) and the group *so far* there, what its conditions read: for
    one in iteration k the iterations before it and k's steps up to the one before the
    negation; for one between iterations k and k+1 the first k iterations. Within an
    iteration the ends are the nearest steps on each side that it bound."""
    ss = [s.var for s in steps(group)]
    out: list[tuple[EventRef, Any, Any, int | None, tuple[Iteration, ...]]] = []
    for n, ps, qs in sides(group):
        p, q = ps[0], qs[0]
        if p == ss[-1] and len(ps) == 1 and q == ss[0]:  # between iterations
            out += [
                (n, _end(a[p], -1), _end(b[q], 0), None, tuple(value[:k])) for k, (a, b) in enumerate(zip(value, value[1:]), 1) if p in a and q in b
            ]
        else:
            pre = ss[: ss.index(p) + 1]
            for k, it in enumerate(value, 1):
                pb = next((v for v in ps if v in it), None)
                qb = next((v for v in qs if v in it), None)
                if pb is not None and qb is not None:
                    so_far = (*value[: k - 1], {s: it[s] for s in pre if s in it})  # (an optional step: where bound)
                    out.append((n, _end(it[pb], -1), _end(it[qb], 0), k, so_far))
    return out


def _end(value: Any, at: int) -> Any:
    """A step's event at one end of a span: a Kleene step's list's last element before a
    negation (``at`` -1), its first after one (0); a single step's own event."""
    return value[at] if isinstance(value, tuple) else value


def violated(group: Group, value: Sequence[Iteration], by_type: Mapping[str, list[Any]], violates: Callable[..., bool]) -> bool:
    """Whether an event of a negation's type breaks one of ``value``'s intervals
    (``violates(negation, event, before, after, iteration, so_far)``: the matcher's rule for
    one interval; ``iteration`` the one it lies in, read as ``g[i]`` by its conditions,
    ``so_far`` the group as it stood there, which its conditions read)."""
    return any(violates(n, x, p, q, k, so_far) for n, p, q, k, so_far in _intervals(group, value) for x in by_type.get(n.type, []))


def elements(value: Any) -> tuple[Any, ...]:
    """A step's events in one iteration: one Item, or a Kleene step's (``C+ c[]``) tuple."""
    return value if isinstance(value, tuple) else (value,)


def each(value: Any, f: Callable[[Any], Any], kind: Callable[[Any], Any] = tuple) -> Any:
    """``f`` of a step's event in one iteration, or of each of a Kleene step's (as ``kind``)."""
    return kind(f(x) for x in value) if isinstance(value, tuple) else f(value)


def flat(it: Iteration) -> list[Any]:
    """One iteration's events, step by step (a Kleene step's in order)."""
    return [x for v in it.values() for x in elements(v)]


def chain(value: Sequence[Iteration]) -> list[Any]:
    """The group's events iteration by iteration, step by step."""
    return [item for it in value for item in flat(it)]


def chain_ok(group: Group, value: Sequence[Iteration], before: Callable[[Any, Any], bool]) -> bool:
    """The order rules of one (possibly partial) group binding."""
    events = chain(value)
    if len({id(i) for i in events}) != len(events):
        return False
    if not all(before(a, b) for a, b in zip(events, events[1:])):
        return False
    for s in steps(group):
        own = [x for it in value if s.var in it for x in elements(it[s.var])]
        if not all(a.idx < b.idx for a, b in zip(own, own[1:])):
            return False
    return True


def group_values(
    group: Group,
    candidates: Callable[[EventRef], list[Any]],
    before: Callable[[Any, Any], bool],
    admissible: Callable[[list[Any]], bool],
    first_before: Any = None,
    bound: Mapping[str, Any] | None = None,
) -> list[tuple[Iteration, ...]]:
    """Every binding of ``group``: each sequence of complete iterations whose chain keeps the
    order rules; ``candidates(step)``: the events a step may take (type, order against the
    variables already bound, window); ``admissible(events)``: window and partition of the
    group's events together with those bound already."""
    ss = steps(group)
    pools = [candidates(s) for s in ss]
    out: list[tuple[Iteration, ...]] = []

    def grow(done: tuple[Iteration, ...], current: Iteration, k: int, last: Any, used: frozenset[int]) -> None:
        for j in range(k, len(ss)):  # step j, the optional ones before it left out
            bind(done, current, j, last, used)
            if not skippable(ss[j]):
                break

    def bind(done: tuple[Iteration, ...], current: Iteration, j: int, last: Any, used: frozenset[int]) -> None:
        var = ss[j].var
        earlier = [x for it in (*done, current) if var in it for x in elements(it[var])]
        for item in pools[j]:
            if item.idx in used or (last is not None and not before(last, item)):
                continue
            if earlier and earlier[-1].idx >= item.idx:
                continue
            events = [*chain(done), *flat(current), item]
            if not admissible(events):
                continue
            if ss[j].kleene:  # a Kleene step: one more element, then more or the step after it
                now = {**current, var: (*current.get(var, ()), item)}
                if not gaps_ok(group, (*done, now), first_before, bound):
                    continue  # (its chain so far)
                n = len(now[var])
                most = ss[j].most
                if most is None or n < most:
                    bind(done, now, j, item, used | {item.idx})
                if n >= ss[j].least:
                    grow(done, now, j + 1, item, used | {item.idx})
                    if all(skippable(s) for s in ss[j + 1 :]):  # a Kleene step last: the iteration may end here
                        end(done, now, item, used | {item.idx})
                continue
            now = {**current, var: item}
            if not gaps_ok(group, (*done, now), first_before, bound):
                continue
            if all(skippable(s) for s in ss[j + 1 :]):  # the iteration may end here
                end(done, now, item, used | {item.idx})
            if j + 1 < len(ss):
                grow(done, now, j + 1, item, used | {item.idx})

    def end(done: tuple[Iteration, ...], now: Iteration, item: Any, used: frozenset[int]) -> None:
        """The iteration ``now`` ends: a binding once the group has its fewest, and the next one."""
        value = (*done, now)
        if len(value) >= group.least:
            out.append(value)
        if group.most is None or len(value) < group.most:
            grow(value, {}, 0, item, used)

    grow((), {}, 0, None, frozenset())
    return out


def skippable(s: EventRef) -> bool:
    """A step an iteration may leave out: an optional one, or a list that may be empty (``C*``)."""
    return s.optional or (s.kleene and s.least == 0)


def _position(group: Group, var: str) -> int:
    return [s.var for s in steps(group)].index(var)


def prefix_add(group: Group, value: tuple[Iteration, ...] | None, var: str, item: Any) -> tuple[Iteration, ...]:
    """A match's prefix in stream order: ``item`` joins the group's current iteration, or
    starts the next one once the current is complete (its step not after the current
    iteration's latest: with optional steps an iteration need not bind every step)."""
    kleene = next(s for s in steps(group) if s.var == var).kleene
    if not value or _position(group, var) < _position(group, list(value[-1])[-1]) or (var == list(value[-1])[-1] and not kleene):
        return (*(value or ()), {var: (item,) if kleene else item})
    if kleene:  # a Kleene step's next element (or its first) in the current iteration
        return (*value[:-1], {**value[-1], var: (*value[-1].get(var, ()), item)})
    return (*value[:-1], {**value[-1], var: item})


def _done(group: Group, it: Iteration) -> bool:
    """An iteration is complete once it binds its last required step (only optional ones,
    which it may still bind, after it), a Kleene step there its fewest elements."""
    last = [s for s in steps(group) if not skippable(s)][-1]
    return last.var in it and (not last.kleene or len(it[last.var]) >= last.least)


def next_steps(group: Group, value: tuple[Iteration, ...] | None) -> list[EventRef]:
    """The steps a partial group binding may take next: in its current iteration the next
    one, or past optional ones the one after them, up to a required one; once that
    iteration is complete, the next iteration's first ones so (none past its most iterations)."""
    ss = steps(group)
    out: list[EventRef] = []
    k = _position(group, list(value[-1])[-1]) + 1 if value else len(ss)
    if value and ss[k - 1].kleene:  # in a Kleene step: another element, or once it has its fewest the next step
        s, n = ss[k - 1], len(value[-1][ss[k - 1].var])
        more = [s] if s.most is None or n < s.most else []
        if n < s.least:
            return more
        out += more
    for s in ss[k:]:
        out.append(s)
        if not skippable(s):
            break
    full = bool(value) and group.most is not None and len(value or ()) >= group.most
    if (not value or _done(group, value[-1])) and not full:
        for s in ss:  # the next iteration's first step, or past optional ones the one after them
            out.append(s)
            if not skippable(s):
                break
    return out


def complete(group: Group, value: tuple[Iteration, ...]) -> bool:
    """At least its fewest iterations, the last one complete."""
    return bool(value) and _done(group, value[-1]) and len(value) >= group.least


def extend_values(group: Group, value: tuple[Iteration, ...] | None, item: Any) -> list[tuple[Iteration, ...]]:
    """``value`` extended by ``item`` as one of its next steps (none where ``item`` is no
    next step's type)."""
    return [prefix_add(group, value, s.var, item) for s in next_steps(group, value) if s.type == item.ev.type]


def member_of(group: Group, var: str) -> bool:
    return any(s.var == var for s in steps(group))


def gaps_ok(group: Group, value: Sequence[Iteration], first_before: Any, bound: Mapping[str, Any] | None = None) -> bool:
    """Every per-step gap holds: between consecutive chain events (``first_before``: the event
    before the group, for the first step of the first iteration; None: not bound yet), or
    with ``FROM u`` from the same iteration's step ``u`` or from ``u`` bound before the group
    (``bound``: the other variables' events; unbound: not checked yet)."""
    gaps = {s.var: s.gap for s in steps(group) if s.gap is not None}
    if not gaps:
        return True
    previous = first_before
    for it in value:
        for var, item in it.items():
            gap = gaps.get(var)
            base = previous if gap is None or gap.after is None else it.get(gap.after, (bound or {}).get(gap.after))
            if gap is not None:
                scale = DURATION_UNITS[gap.unit] if gap.unit and not gap.in_events else 1
                # (a list: its chain, the first element after the base, each later one after
                # the one before it; a list as the base, its last element: tests/reference_gaps.py)
                if not gap_holds(item, base, gap.low * scale, gap.high * scale, gap.in_events):
                    return False
            previous = item[-1] if isinstance(item, tuple) else item
    return True


def before_group(children: Sequence[Any], group: Group) -> str | None:
    """The single positive event right before ``group`` in its SEQ (negations skipped); None
    where there is none, or the group is no step of this SEQ (inside AND or OR)."""
    prev = None
    for child in children:
        if child is group:
            return prev.var if isinstance(prev, EventRef) else None
        if not (isinstance(child, EventRef) and child.negated):
            prev = child
    return None
