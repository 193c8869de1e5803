"""Emission: complete matches and timed-out partial matches become :class:`Match` objects and,
for patterns with RETURN or ON TIMEOUT, composite events that re-enter the run.

A pattern emits a token that passed its checks now, or, with an end negation, once stream
time closes its window (the run state's ``pending`` heaps); ON TIMEOUT partial matches whose
window closed unextended are emitted as :class:`Expiry` roles. The matches emitted at one
point are ordered by pattern, then by their events' stream positions (docs/SEMANTICS.md):
that order decides composite events' stream order and who wins a consumption conflict.
Functions here take the engine's compiled side and its run state (:mod:`.compiled`).
"""

from __future__ import annotations

import heapq
from typing import Any

from petricep.compile.net import PatternNet, Role
from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.runtime.compiled import Compiled, Emitted
from petricep.runtime.expr import OVERFLOW_FLAG, with_pattern
from petricep.runtime.firing import GroupRuntime
from petricep.runtime.housekeeping import due
from petricep.runtime.match import Match
from petricep.runtime.state import INF, Partition, RunState, Token


class Expiry:
    """How a timed-out partial match is emitted: its pattern and when its window closed."""

    __slots__ = ("pattern", "deadline")

    def __init__(self, pattern: int, deadline: Any) -> None:
        self.pattern = pattern
        self.deadline = deadline


def emits(
    st: RunState, i: int, rt: GroupRuntime, part: Partition, t: Token, role: Role, emitter: Event, emitted: list[Emitted]
) -> None:
    """Pattern ``role.pattern`` emits ``t`` (its checks passed): now, or when its window
    closes (end negations). Matches only counted are counted by the caller."""
    if role.pending_negations:
        w = role.window
        if w is None:
            threshold: Any = INF
        elif rt.count_window:
            threshold = t.first_pos + w
        else:
            threshold = t.first_ts + w
        waiting = t.detached()
        st.counter += 1
        heapq.heappush(st.pending[i], (threshold, st.counter, part, waiting, role))
        part.pending.append((waiting, role))
        if st.expiry[i] is not None and w is not None:
            due(st, i, part, threshold)
    else:
        emitted.append((rt, role, t, emitter))


def close_pending(c: Compiled, st: RunState, e: Event, emitted: list[Emitted]) -> None:
    """Stream time reached ``e``: emit the matches whose window it closes (end negations)
    and the partial matches it times out (ON TIMEOUT)."""
    if c.has_timeouts:
        close_deadlines(c, st, e, emitted)
    for i, heap in enumerate(st.pending):
        if not heap:
            continue
        rt = c.runtimes[i]
        while heap:
            thr = heap[0][0]
            closed = e.pos >= thr if rt.count_window else e.ts > thr
            if not closed:
                break
            _, _, part, t, role = heapq.heappop(heap)
            if t.alive:
                emitted.append((rt, role, t, e))
                t.alive = False


def close_deadlines(c: Compiled, st: RunState, e: Event, emitted: list[Emitted]) -> None:
    for i, deadlines in enumerate(st.deadlines):
        if deadlines:
            rt = c.runtimes[i]
            while deadlines:
                thr = deadlines[0][0]
                if not (e.pos >= thr if rt.count_window else e.ts > thr):
                    break
                expire(c, st, rt, heapq.heappop(deadlines), e, emitted)


def close_all(c: Compiled, st: RunState, emitter: Event | None) -> list[Emitted]:
    """End of stream: every match still waiting and every watched partial match's window closes."""
    emitted: list[Emitted] = []
    for i, heap in enumerate(st.pending):
        rt = c.runtimes[i]
        while heap:
            _, _, _part, t, role = heapq.heappop(heap)
            if t.alive:
                emitted.append((rt, role, t, emitter or t.event))  # type: ignore[arg-type]
    for i, deadlines in enumerate(st.deadlines):
        rt = c.runtimes[i]
        while deadlines:
            expire(c, st, rt, heapq.heappop(deadlines), emitter, emitted)  # type: ignore[arg-type]
    return emitted


def expire(
    c: Compiled, st: RunState, rt: GroupRuntime, entry: tuple[Any, int, Partition, Token, int], emitter: Event, emitted: list[Emitted]
) -> None:
    """A partial match's window closed: a timeout if it is still alive for the pattern,
    never extended, not blocked by a negation, and (contiguity) not interrupted. A stop event
    (UNTIL) blocks only a list's takes: the partial match it stopped may still go on, so it
    times out as any other (docs/SEMANTICS.md, "Stop conditions")."""
    deadline, _, part, t, pi = entry
    bit = rt.bit[pi]
    if not t.alive or not t.users & bit or getattr(t, "extended", 0) & bit or t.blocked & ~rt.stop_mask or pi in c.removed:
        return
    if rt.contiguity and t.last_key < rt.floor(part, st.last_input_key):
        return
    if st.group_kills and _killed_in_group(c, st, rt, part, t):
        return
    emitted.append((rt, Expiry(pi, deadline), t, emitter))


def _killed_in_group(c: Compiled, st: RunState, rt: GroupRuntime, part: Partition, t: Token) -> bool:
    """Whether a negative event of the open timestamp group cancels ``t``, whose window an
    event of the group closes (every negative event held lies inside that window).

    Tie rule strict: the group's cancellations wait for its end (events of the group after
    the negative one may still extend ``t`` until then), but no event left can extend
    ``t``: it is cancelled already, as far as its timeout goes. Tie rule either: the
    group's cancellations so far are applied, but the group's fixpoint may have dropped
    ``t`` from the marking before (an event of the group lies past its window)."""
    for krt, kpart, j, x in st.group_kills:
        if krt is rt and kpart is part and t.place in rt.active_places.get(j, ()) and rt.violates(j, t, x):
            if rt.stop_mask >> j & 1 and j in rt.places[t.place].growable_negations:
                continue  # a stop event that only stops the list: the partial match goes on
            return True
    return False


def emit(c: Compiled, st: RunState, emitted: list[Emitted]) -> list[Match]:
    """Emit what was found at one point, in order; the composite events of the matches go
    back into the run (the tie rule says when), and what they complete is emitted in turn."""
    out: list[Match] = []
    patterns = c.net.patterns
    stats = st.stats
    while emitted:
        batch, chains = _ordered(c, emitted)
        emitted = []
        derived = []
        matches = stats.matches
        for _rt, role, t, emitter in batch:
            net = patterns[role.pattern]
            if type(role) is Expiry:
                assert net.timeout is not None
                stats.timeouts[net.name] += 1
                attrs = fields(net.name, c.timeout_fns[net.index], t.slots)
                m = Match(
                    net.name, None, t.first_ts, t.last_ts, attrs, net.vars, chains[id(t)][0],
                    timeout=(net.timeout.type, role.deadline),
                )
                out.append(m)
                derived.append(Event(net.timeout.type, emitter.ts, emitter.pos, m.id, attrs))
                continue
            if net.conflict is not None and not consume(st.consumed[net.conflict], net, chains[id(t)][0]):
                continue
            matches[net.name] += 1
            returns = net.returns
            if returns is None:
                if c.collect:
                    out.append(Match(net.name, None, t.first_ts, t.last_ts, {}, net.vars, chains[id(t)][0]))
                continue
            attrs = fields(net.name, c.returns[net.index], t.slots)
            m = Match(net.name, None, t.first_ts, t.last_ts, attrs, net.vars, chains[id(t)][0])
            out.append(m)
            derived.append(Event(returns.type, emitter.ts, emitter.pos, m.id, attrs))
        stats.composite_events += len(derived)
        derive = c.rule.derive
        for d in derived:
            derive(c, st, d, emitted)
    return out


def _ordered(
    c: Compiled, emitted: list[Emitted]
) -> tuple[list[Emitted], dict[int, tuple[list[tuple[int, Event]], tuple[Any, ...]]]]:
    """The emissions of one round in emission order, and each token's chain (with its order
    key where there are several)."""
    # one token may be emitted by many patterns sharing its place: walk its chain once.
    # The order (pattern, then the bound events: chain_order) decides composite events'
    # stream order and who wins a conflict, and it is every pattern's, fed or not: the
    # firing order inside one event follows the shared net's places, which merging
    # renumbers, so a pattern's matches of one point are sorted by what they bind, never
    # left in firing order -- then they do not depend on what the pattern is merged with.
    several = len(emitted) > 1
    chains: dict[int, tuple[list[tuple[int, Event]], tuple[Any, ...]]] = {}
    for rt, _role, t, _e in emitted:
        if id(t) not in chains:
            chain = t.chain()
            chains[id(t)] = (chain, chain_order(rt, chain) if several else ())
    if not several:
        return emitted, chains
    batch = sorted(emitted, key=lambda r: (r[1].pattern, type(r[1]) is Expiry, chains[id(r[2])][1]))
    return batch, chains


def consume(consumed: dict[int, Any], net: PatternNet, chain: list[tuple[int, Event]]) -> bool:
    """Consumption policy: a match holding an event already consumed in its domain
    (``consumed``: event seq -> ts) is not emitted; an emitted match consumes the events of
    its consumed variables."""
    for _, ev in chain:
        if ev.seq in consumed:
            return False
    slots = net.consume
    for sl, ev in chain:
        if sl in slots:
            consumed[ev.seq] = ev.ts
    return True


def chain_order(rt: GroupRuntime, chain: list[tuple[int, Event]]) -> tuple[Any, ...]:
    """Matches emitted at one point are ordered by pattern, then by this: the events'
    stream positions, then each variable's positions in written order, a bound variable
    before an unbound one (``OR(A a, A b)``: ``a``'s match first; SEMANTICS.md). Slots
    keep the variables' written order in a shared net (merge.moved). Last, under the tie rule
    either, where a group with optional or Kleene steps binds the same lists in other
    iterations: the slots of its elements in binding order (an element in an earlier
    iteration first)."""
    per_var: list[list[int]] = [[] for _ in range(rt.nslots)]
    for sl, ev in chain:
        per_var[sl].append(ev.seq)
    ordered = rt.net.ordered_slots
    return (
        tuple(sorted(ev.seq for _, ev in chain)),
        tuple((0, tuple(v)) if v else (1,) for v in per_var),
        tuple(sl for sl, _ in chain if sl in ordered),
    )


def fields(name: str, fns: list[tuple[str, Any]], slots: tuple[Any, ...]) -> dict[str, Any]:
    """A match's RETURN (or ON TIMEOUT) attributes; a number overflow names the pattern.
    Non-finite floats are kept as they are: the output writes them as null."""
    try:
        return {field_name: f(slots) for field_name, f in fns}
    except EvaluationError as exc:
        if getattr(exc, OVERFLOW_FLAG, False):
            raise with_pattern(exc, f"pattern {name!r}") from None
        raise


__all__ = ["Emitted", "Expiry", "close_all", "close_pending", "emit", "emits", "expire", "fields"]
