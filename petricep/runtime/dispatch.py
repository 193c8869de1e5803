"""Firing dispatch: an event fires in every shared net that reads it, in its key's marking.

Functions here take the engine's compiled side (:class:`~petricep.runtime.compiled.Compiled`)
and its run state (:class:`~petricep.runtime.state.RunState`): they route an event to the
shared nets reading its type and to the marking of its key, hand the tokens that reached an
emitting place to emission, and index what sweeps and timeouts need.
"""

from __future__ import annotations

from typing import Any

from petricep.compile.net import Role
from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.lang.ast import Strategy
from petricep.runtime.compiled import Compiled, Emitted
from petricep.runtime.emission import emits
from petricep.runtime.firing import GroupRuntime, event_key
from petricep.runtime.housekeeping import due, watch
from petricep.runtime.state import INF, Partition, RunState, Token


def process(c: Compiled, st: RunState, d: Event, composite: bool, emitted: list[Emitted]) -> None:
    """Fire ``d`` in every shared net that reads it, in its key's marking."""
    st.seq += 1
    d.seq = st.seq
    etype = d.type
    parts = st.parts
    for rt in c.consumers.get(etype, ()):
        i = rt.net.index
        attr = rt.key_attr
        if attr is not None:  # one partition attribute (the common case), else the general path
            try:
                key = d.attrs[attr]
            except KeyError:
                key = c.key(rt, d)  # raises the located error
        else:
            key = c.key(rt, d)
        part = parts[i].get(key)
        if part is None:
            part = partition(c, st, i, rt, key)
        accepted = st.accepted
        try:
            created = rt.step(part, d, rt.floor(part, st.last_input_key) if rt.contiguity else INF, composite, accepted)
        except EvaluationError as exc:
            raise c.placed(exc, rt) from None
        if created:
            stats = st.stats
            stats.created += len(created)
            if st.counters is not None:
                st.counters.count(i, created)
            if accepted:
                stats.completed += len(accepted)
                st.accepted = []
                for t in accepted:
                    accept(c, st, i, rt, part, t, d, emitted)
            first = rt.store(part, created)
            if first is not None and st.expiry[i] is not None:
                due(st, i, part, first + rt.w)  # type: ignore[operator]  # indexed: windowed
                if rt.has_gaps and not rt.count_window:  # a gap may end a partial match before its window (in time: a count window's index is in events)
                    due(st, i, part, min(rt.gap_due(nt) for nt in created))
            if rt.watch_mask:
                watch(c, st, i, rt, part, created, d, key)
        if c.spill is not None:
            c.spill.touched(i, key, part)
        if etype in rt.negs_by_type:
            if st.expiry[i] is not None:  # it may be buffered until its window passes
                due(st, i, part, (d.pos if rt.count_window else d.ts) + rt.w)  # type: ignore[operator]
            kill = c.rule.kill
            for j in rt.negative(part, d):
                kill(c, st, rt, part, j, d)
    if not composite and c.contiguous:  # d is the last input event now, of the stream and of its key
        key = event_key(d, False)
        for rt in c.contiguous:
            if rt.net.partition and rt.strategy == Strategy.PARTITION and all(a in d.attrs for a in rt.net.partition):
                partition(c, st, rt.net.index, rt, c.key(rt, d)).last_input_key = key
        st.last_input_key = key


def accept(
    c: Compiled, st: RunState, i: int, rt: GroupRuntime, part: Partition, t: Token, emitter: Event, emitted: list[Emitted]
) -> None:
    """A token reached a place some patterns emit from: each checks and emits (patterns
    with the same checks — e.g. one query registered many times — check once)."""
    counted = c.counted
    matches = st.stats.matches
    users = t.users
    bits = rt.bit
    for g, (mask, roles) in enumerate(rt.role_groups[t.place]):
        if users & mask and rt.emission_ok(part, t, roles[0]):
            if counted and len(roles) > 1 and _tallied(c, st, i, t.place, g, users & mask, roles):
                continue
            for role in roles:
                if users & bits[role.pattern]:
                    name = counted.get(role.pattern)
                    if name is not None and not role.pending_negations:
                        matches[name] += 1  # collect=False: nothing depends on this match
                    else:
                        emits(st, i, rt, part, t, role, emitter, emitted)


def _tallied(c: Compiled, st: RunState, i: int, place: int, g: int, users: int, roles: tuple[Role, ...]) -> bool:
    """collect=False: a group of counted patterns (e.g. one query registered many times)
    counts a token once, in a tally (added up when stats are read)."""
    group = (i, place, g)
    only = st.count_only.get(group)
    if only is None:
        only = st.count_only[group] = all(r.pattern in c.counted and not r.pending_negations for r in roles)
    if only:
        k = (group, users)
        st.tally[k] = st.tally.get(k, 0) + 1
    return only


def next_seq(st: RunState) -> int:
    st.seq += 1
    return st.seq


def partition(c: Compiled, st: RunState, i: int, rt: GroupRuntime, key: Any) -> Partition:
    """The marking of ``key`` in shared net ``i`` (read back if spilled, new if none)."""
    parts = st.parts[i]
    part = parts.get(key)
    if part is None:
        if c.spill is not None and (i, key) in c.spill.spilled:
            part = c.spill.read(i, key)  # a miss: the key's partial matches come back
            assert part is not None
            parts[key] = part
        else:
            part = parts[key] = rt.new_partition()
            part.key = key
    return part


__all__ = ["accept", "next_seq", "partition", "process"]
