"""Tie rules: how events with equal timestamps are ordered (docs/SEMANTICS.md), each a
:class:`TieRule` of functions chosen once when the engine is built, never per event.

* ``arrival``: stream order is (ts, arrival); every event fires as it comes.
* ``strict``: only a later timestamp counts as after. Events fire as they come (the firing
  test of the shared net refuses equal timestamps); the partial matches a pushed negation
  cancels are cancelled when the timestamp group ends, so that events of the group after it
  still see them.
* ``either``: events with equal timestamps may match in any order. A timestamp group is
  held until the next timestamp arrives and then matched as a whole, by a fixpoint over
  every order of its events.

Functions here take the engine's compiled side and its run state (:mod:`.compiled`).
"""

from __future__ import annotations

import heapq
from typing import Any

from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.runtime.compiled import Compiled, Emitted, TieRule
from petricep.runtime.dispatch import accept, next_seq, partition, process
from petricep.runtime.emission import close_pending, emit, expire
from petricep.runtime.firing import GroupRuntime
from petricep.runtime.housekeeping import check_budget, due, spill_out, sweep, watch
from petricep.runtime.match import Match
from petricep.runtime.state import INF, Partition, RunState, Token

# ---------------------------------------------------------------------- arrival and strict


def step_in_order(c: Compiled, st: RunState, e: Event) -> list[Match]:
    """``e`` fires now; then the housekeeping that is due."""
    emitted: list[Emitted] = []
    if c.timed:
        close_pending(c, st, e, emitted)
    st.last_input = e
    process(c, st, e, False, emitted)
    out = emit(c, st, emitted) if emitted else []
    if c.rows.runtimes:
        out += c.rows.push(e, st.stats.matches, c.collect)
    st.since_sweep += 1
    if st.since_sweep >= c.sweep_every:
        sweep(c, st, e)
    if st.stats.created >= st.budget_at:
        check_budget(c, st, e)
    if c.spill is not None and c.spill.over():
        spill_out(c, st)
    return out


def step_strict(c: Compiled, st: RunState, e: Event) -> list[Match]:
    """A new timestamp first ends the group of equal timestamps before it."""
    _at(st, e.ts)
    return step_in_order(c, st, e)


def advance_in_order(c: Compiled, st: RunState, clock: Event) -> list[Match]:
    emitted: list[Emitted] = []
    close_pending(c, st, clock, emitted)
    out = emit(c, st, emitted)
    return out + _expire_rows(c, st, clock) if c.rows.runtimes else out


def advance_strict(c: Compiled, st: RunState, clock: Event) -> list[Match]:
    _at(st, clock.ts)
    return advance_in_order(c, st, clock)


def close_in_order(c: Compiled, st: RunState) -> list[Match]:
    end_group(st)
    return []


def _at(st: RunState, ts: Any) -> None:
    """Stream time is ``ts``: a new timestamp ends the open group (tie rule strict)."""
    if ts != st.group_ts:
        end_group(st)
        st.group_ts = ts


def end_group(st: RunState) -> None:
    """The timestamp group ended: cancel what its pushed negations cancel."""
    kills = st.group_kills
    if kills:
        st.group_kills = []
        for rt, part, j, x in kills:
            rt.cancel(part, j, x)


def derive_now(c: Compiled, st: RunState, d: Event, emitted: list[Emitted]) -> None:
    process(c, st, d, True, emitted)


def kill_now(c: Compiled, st: RunState, rt: GroupRuntime, part: Partition, j: int, x: Event) -> None:
    rt.cancel(part, j, x)


def kill_at_group_end(c: Compiled, st: RunState, rt: GroupRuntime, part: Partition, j: int, x: Event) -> None:
    st.group_kills.append((rt, part, j, x))


def _expire_rows(c: Compiled, st: RunState, clock: Event) -> list[Match]:
    return c.rows.expire(clock.ts, clock.pos, st.stats.matches, c.collect)


# ---------------------------------------------------------------------- either


def step_either(c: Compiled, st: RunState, e: Event) -> list[Match]:
    """``e`` joins its timestamp group, which is matched as a whole (every order of its
    events) when the next timestamp arrives."""
    opens = e.ts != st.group_ts
    out = _join(c, st, e)
    e.seq = next_seq(st)
    if opens:  # the composite events of the matches e emitted come right after it
        for d in st.group_emitted:
            d.seq = next_seq(st)
    st.group_events.append(e)
    st.last_input = e
    if c.rows.runtimes:
        out += c.rows.push(e, st.stats.matches, c.collect)
    return out


def advance_either(c: Compiled, st: RunState, clock: Event) -> list[Match]:
    out = _join(c, st, clock)
    st.group_clocks.append(clock)  # may close windows of matches the group finds
    return out + _expire_rows(c, st, clock) if c.rows.runtimes else out


def _join(c: Compiled, st: RunState, e: Event) -> list[Match]:
    """Stream time reached ``e``. A new timestamp first matches the group before it, then
    closes the windows ``e`` closes, emitted at ``e`` (docs/SEMANTICS.md: on the first event
    past the window): nothing of ``e``'s group can cancel or extend those, its events lie
    past them. Their composite events, at ``e``'s time and position, wait in
    ``group_emitted`` and join the group behind its own events, seen by the nets from the
    second on (a net reading them comes after its producer's).

    Any later event of the open group closes nothing here. The group's events before it
    are not matched yet: a negated one may still cancel a match waiting for its count window
    (end negation), one that extends a partial match keeps it from timing out. Those windows
    close once the group is matched (:func:`_close_in_group`). A time window closed by an
    event of the group was closed by its first event already."""
    if e.ts == st.group_ts:
        return []
    out = run_group(c, st) if st.group_ts is not None else []
    st.group_ts = e.ts
    emitted: list[Emitted] = []
    close_pending(c, st, e, emitted)
    if emitted:
        out += emit(c, st, emitted)
        st.group_emitted.extend(st.group_events)
        st.group_events = []
    return out


def derive_in_group(c: Compiled, st: RunState, d: Event, emitted: list[Emitted]) -> None:
    st.group_events.append(d)
    d.seq = next_seq(st)


def run_group(c: Compiled, st: RunState) -> list[Match]:
    """Equal timestamps may match in any order: close the group with a fixpoint."""
    events = st.group_events
    closers = events + st.group_clocks
    st.group_events = st.group_emitted  # (first in line, after the group's own events)
    st.group_emitted = []
    st.group_clocks = []
    out: list[Match] = []
    done = 0
    for rt in c.runtimes:
        emitted = _match_group(c, st, rt, events, closers)
        out += emit(c, st, emitted)  # composite events join st.group_events
        events = events + st.group_events[done:]
        done = len(st.group_events)
    st.group_events = []
    if events:
        st.since_sweep += len(events)
        if st.since_sweep >= c.sweep_every:
            sweep(c, st, events[-1])
        if st.stats.created >= st.budget_at:
            check_budget(c, st, events[-1])
    return out


def _match_group(c: Compiled, st: RunState, rt: GroupRuntime, events: list[Event], closers: list[Event]) -> list[Emitted]:
    """One shared net's matches of a timestamp group, per key; then its negative events, in
    stream order. A count window that an event of the group closes (``closers``: the
    group's input events and clock points) closes between the negative events inside it
    and those past it, as in the whole stream: only the former cancel what it closes (a
    pushed negation cancels a partial match whatever its window, so a negative event past
    the window must come after its timeout). Their cancellations are also kept in the
    run state's ``group_kills`` until the group is done: the fixpoint drops a partial
    match from the marking once an event of the group lies past its window, so a timeout
    closed here checks them itself (:func:`~petricep.runtime.emission.expire`)."""
    i = rt.net.index
    mine: dict[Any, list[Event]] = {}
    for d in events:
        if d.type in rt.net.input_types:
            mine.setdefault(c.key(rt, d), []).append(d)
    emitted: list[Emitted] = []
    negatives: list[tuple[Event, Partition]] = []
    negs = rt.negs_by_type
    for key, evs in mine.items():
        part = partition(c, st, i, rt, key)
        try:
            found = _fixpoint(c, st, i, rt, part, evs, key)
        except EvaluationError as exc:
            raise c.placed(exc, rt) from None
        for t, emitter in found:
            accept(c, st, i, rt, part, t, emitter, emitted)
        negatives += [(d, part) for d in evs if d.type in negs]
    # what waits for a window: also the matches the fixpoints just found
    closing = rt.count_window and bool(st.pending[i] or st.deadlines[i]) and bool(closers)
    if closing:
        negatives.sort(key=lambda x: x[0].pos)  # stable: a composite event after its emitter
    for d, part in negatives:
        if closing:
            _close_in_group(c, st, i, rt, closers, d.pos, emitted)  # windows d lies past
        if st.expiry[i] is not None:
            due(st, i, part, (d.pos if rt.count_window else d.ts) + rt.w)  # type: ignore[operator]
        for j in rt.negative(part, d):
            rt.cancel(part, j, d)
            if closing:
                st.group_kills.append((rt, part, j, d))
    if closing:
        _close_in_group(c, st, i, rt, closers, max(e.pos for e in closers), emitted)
        st.group_kills = []
    return emitted


def _close_in_group(
    c: Compiled, st: RunState, i: int, rt: GroupRuntime, closers: list[Event], upto: int, emitted: list[Emitted]
) -> None:
    """The count windows that end at or before position ``upto``, closed by events of this
    group now that it is matched (its partial matches extended, the negative events inside
    those windows applied): the matches waiting for them (end negations) and the partial
    matches they time out, emitted by the group's first event at or past the window's end,
    as the whole stream would emit them."""
    heap = st.pending[i]
    while heap and heap[0][0] <= upto:
        thr, _, _part, t, role = heapq.heappop(heap)
        if t.alive:
            emitted.append((rt, role, t, _closer(closers, thr)))
            t.alive = False
    deadlines = st.deadlines[i]
    while deadlines and deadlines[0][0] <= upto:
        entry = heapq.heappop(deadlines)
        expire(c, st, rt, entry, _closer(closers, entry[0]), emitted)


def _closer(events: list[Event], threshold: int) -> Event:
    """The first of ``events`` at or past a count window's end ``threshold``."""
    return min((e for e in events if e.pos >= threshold), key=lambda e: e.pos)


def _fixpoint(
    c: Compiled, st: RunState, i: int, rt: GroupRuntime, part: Partition, evs: list[Event], key: Any
) -> list[tuple[Token, Event]]:
    accepted: list[Token] = []
    created: list[Token] = []
    for g in evs:
        created += rt.step(part, g, INF, False, accepted)
    # Tokens of the first pass hold exactly one event of the group (the marking holds
    # none), each a distinct (partial match, transition, event): no duplicates among them,
    # and none equals a token of the loop below (two or more of the group's events).
    # Only the loop's tokens, reachable in several orders, are de-duplicated.
    queue = _extend_in_group(rt, created, evs)
    first = rt.store(part, queue)
    if first is not None and st.expiry[i] is not None:
        due(st, i, part, first + rt.w)  # type: ignore[operator]  # indexed: windowed
    if rt.watch_mask:
        watch(c, st, i, rt, part, queue, evs[-1], key)
    st.stats.created += len(queue)
    if st.counters is not None:
        st.counters.count(i, queue)
    # a token's creator is the event its firing bound
    done = [(t, t.event) for t in queue if rt.places[t.place].accepting and t.event is not None]
    st.stats.completed += len(done)
    return done


def _extend_in_group(rt: GroupRuntime, queue: list[Token], evs: list[Event]) -> list[Token]:
    """Extend the group's new tokens by its other events, in every order, until nothing new
    comes (``queue`` grows in place)."""
    seen: set[tuple[Any, ...]] = set()
    # every new token already holds its creator: a group of one event has nothing left
    # to try. Otherwise each event's enabled transitions by source place, computed once.
    moves = _group_moves(rt, evs) if len(evs) > 1 else []
    idx = 0
    while moves and idx < len(queue):
        t = queue[idx]
        idx += 1
        for g, by_src in moves:
            trs = by_src.get(t.place)
            if not trs or t.contains(g):
                continue
            for tr in trs:
                fired = rt.fire(tr, t, g, INF, False)
                if fired is None:
                    continue
                k = _binding_key(fired, rt.net.ordered_slots)
                if k not in seen:
                    seen.add(k)
                    queue.append(fired)
    return queue


def _group_moves(rt: GroupRuntime, evs: list[Event]) -> list[tuple[Event, dict[int, list[Any]]]]:
    """Per event of a timestamp group: its transitions whose input-arc guards hold, by source place."""
    out = []
    for g in evs:
        by_src = {}
        for src, trs in rt.by_type.get(g.type, ()):
            enabled = [tr for tr in trs if all(f((g,), None) for f in rt.arc[tr.id])]
            if enabled:
                by_src[src] = enabled
        if by_src:
            out.append((g, by_src))
    return out


def _binding_key(t: Token, ordered: frozenset[int]) -> tuple[Any, ...]:
    """What tells two partial matches apart: place, users, bound events and, for a group with
    optional or Kleene steps (``ordered``: its slots), the order its elements were bound in
    (equal lists, ``c`` in the first iteration or in the second)."""
    chain = t.chain()
    return (t.place, t.users, tuple(sorted((sl, ev.seq) for sl, ev in chain)), tuple(sl for sl, _ in chain if sl in ordered))


ARRIVAL = TieRule("arrival", step_in_order, advance_in_order, close_in_order, derive_now, kill_now)
STRICT = TieRule("strict", step_strict, advance_strict, close_in_order, derive_now, kill_at_group_end)
EITHER = TieRule("either", step_either, advance_either, run_group, derive_in_group, kill_at_group_end)
RULES = {rule.name: rule for rule in (ARRIVAL, STRICT, EITHER)}

__all__ = ["RULES", "TieRule", "end_group", "run_group"]
