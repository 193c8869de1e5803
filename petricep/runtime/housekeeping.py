"""Housekeeping: what keeps a run's state bounded, off the per-event path.

* sweeps (every ``sweep_every`` events, and at the end): drop the partial matches and
  negative events no window can use any more, following the expiry index where the net
  allows it (only partitions whose earliest window has passed are visited);
* watching new partial matches: ON TIMEOUT deadlines, and LIMIT quotas (runtime/limits.py);
* the budgets: a run whose live partial matches exceed ``max_partial_matches``, or whose
  estimated bytes (runtime/memory.py: partial matches, events a slack holds) exceed
  ``max_memory``, stops with :class:`~petricep.errors.StateLimitError`;
* spilling (runtime/spill.py): keys written out when the spill budget is exceeded.

Functions here take the engine's compiled side and its run state (:mod:`.compiled`).
"""

from __future__ import annotations

import heapq
from itertools import chain
from operator import attrgetter
from typing import Any

from petricep.errors import StateLimitError
from petricep.events import Event
from petricep.runtime.compiled import Compiled
from petricep.runtime.firing import GroupRuntime
from petricep.runtime.limits import admit, age
from petricep.runtime.memory import TOKEN_BYTES, memory_error
from petricep.runtime.spill import expiry
from petricep.runtime.state import INF, Partition, RunState, Token, gap_time, gap_value

_MARKING = attrgetter("marking")


def due(st: RunState, i: int, part: Partition, when: Any) -> None:
    """Something in ``part`` (of shared net ``i``) may be dropped once the stream passes
    ``when``: index it."""
    if when < part.due:
        part.due = when
        st.counter += 1
        heapq.heappush(st.expiry[i], (when, st.counter, part))  # type: ignore[arg-type]


def sweep(c: Compiled, st: RunState, now: Event, always: bool = False) -> None:
    """Drop what can never be used again, forget old consumed events, sample the peak:
    at every sweep (every ``sweep_every`` events) while the partitions held are fewer than
    the events since the last sample, else once that many events have passed (``always``:
    now; the end of the stream). Sampling walks every partition, so with a long window and
    a key per few events (every key stays live) sampling at every sweep made the run
    quadratic in the live keys (bench/RESULTS.md "A memory budget that holds")."""
    st.since_sweep = 0
    _forget_consumed(c, st, now)
    spill = c.spill
    for i, (rt, parts) in enumerate(zip(c.runtimes, st.parts)):
        heap = st.expiry[i]
        if heap is not None:
            _sweep_due(st, rt, parts, heap, now)
            continue
        dead = []
        for key, part in parts.items():
            rt.sweep(part, now, rt.floor(part, st.last_input_key))
            if part.empty():
                dead.append(key)
        for key in dead:
            del parts[key]
            if spill is not None:
                spill.touched(i, key, Partition(0, 0))
    if spill is not None:
        spill.forget_expired(now.ts)
        for i, parts in enumerate(st.parts):
            for key, part in parts.items():
                spill.touched(i, key, part)
    if always or st.stats.events - st.sampled_at >= st.sample_span:
        st.sampled_at = st.stats.events
        _sample(c, st)


def _sample(c: Compiled, st: RunState) -> None:
    """What a sweep left is exactly the live partial matches: sample their peak. The walk
    also drops the partitions an indexed net holds empty (a key whose events completed or
    started nothing: its sweeps visit only due ones), and the next sample comes once as many
    events as partitions are left have passed (``sample_span``): a schedule that a snapshot's
    compaction, which drops them too, leaves as it was, so a restored run samples the peak
    where the uninterrupted one does, and the walks cost a few visits per event."""
    drop_empty(c, st)
    st.sample_span = sum(map(len, st.parts))
    live = sum(sum(map(len, chain.from_iterable(map(_MARKING, parts.values())))) for parts in st.parts)
    live += c.rows.live()
    if live > st.stats.peak_partial:
        st.stats.peak_partial = live
    if st.counters is not None:
        st.counters.sample(st.parts)


def drop_empty(c: Compiled, st: RunState) -> None:
    """Drop the partitions an indexed net holds empty (its sweeps visit only the due ones;
    an unindexed net's sweep drops them itself); a later event of the key starts a new one."""
    for i, (parts, heap) in enumerate(zip(st.parts, st.expiry)):
        if heap is None:
            continue
        for key in [k for k, part in parts.items() if part.empty()]:
            del parts[key]
            if c.spill is not None:
                c.spill.touched(i, key, Partition(0, 0))


def _forget_consumed(c: Compiled, st: RunState, now: Event) -> None:
    """Consumed events no match of their domain's time windows can hold any more."""
    patterns = c.net.patterns
    for domain, consumed in st.consumed.items():
        windows = [p.window_value for p in patterns if p.conflict == domain]
        if consumed and all(w is not None for w in windows) and all(
            p.window and p.window.kind != "count" for p in patterns if p.conflict == domain
        ):
            horizon = now.ts - max(w for w in windows if w is not None)
            for seq in [s for s, ts in consumed.items() if ts < horizon]:
                del consumed[seq]


def _sweep_due(
    st: RunState, rt: GroupRuntime, parts: dict[Any, Partition], heap: list[tuple[Any, int, Partition]], now: Event
) -> None:
    """Sweep the partitions whose earliest window has passed, in order of it; the others
    hold nothing a sweep would drop.

    A swept partition is indexed again only after the loop: its next due point is a sum
    (``first_ts + w``) while the sweep tests a difference (``now.ts - first_ts > w``), and in
    floating point the sum can fall before ``now`` while the difference is still within the
    window (2/3 + 1 < 5/3, yet 5/3 - 2/3 == 1), so indexing it at once swept it forever."""
    count = rt.count_window
    limit = now.pos if count else now.ts
    swept: list[Partition] = []
    while heap:
        when = heap[0][0]
        if (when > limit) if count else (when >= limit):
            break
        _, _, part = heapq.heappop(heap)
        if part.due != when or parts.get(part.key) is not part:
            continue  # stale: swept since, or a partition no longer held
        rt.sweep(part, now, INF)
        part.due = INF
        if part.empty():
            del parts[part.key]
            continue
        swept.append(part)
    for part in swept:
        due(st, rt.net.index, part, rt.due(part))


def gap_deadline(ends: tuple[tuple[int, tuple[tuple[int, Any], ...]], ...], pi: int, t: Token, deadline: Any) -> Any:
    """An ON TIMEOUT partial match of pattern ``pi`` times out when its window closes or, before
    that, when a per-step gap of the pattern ahead of it ends (issue 42: no event can bind that
    step after it, as FlinkCEP's per-step ``within``)."""
    for p, gaps in ends:
        if p == pi:
            for sl, hi in gaps:
                # (a gap in EVENTS, under a count window: the first position it refuses, as a
                # count window's deadline is the first position outside it)
                end = gap_time(t.slots[sl]) + hi if sl >= 0 else gap_value(t.slots[~sl], True) + hi + 1
                if end < deadline:
                    deadline = end
    return deadline


def watch(c: Compiled, st: RunState, i: int, rt: GroupRuntime, part: Partition, created: list[Token], now: Event, key: Any) -> None:
    """New partial matches just stored: watch their windows (ON TIMEOUT) and count them
    against their patterns' limits."""
    places = rt.places
    limited: list[tuple[tuple[Any, ...], Token, int]] = []
    for nt in created:
        if not places[nt.place].has_exits:
            continue
        going_on = nt.users & rt.exit_bits[nt.place]  # patterns for which nt is a partial match
        if going_on & rt.limit_mask:
            limited.append((age(nt), nt, going_on))
        waiting = going_on & rt.timeout_mask & ~rt.emit_bits[nt.place]  # not complete here
        if waiting:
            for pi, bit in rt.bit.items():
                if waiting & bit:
                    w = c.net.patterns[pi].window_value
                    assert w is not None  # ON TIMEOUT needs a window (checked)
                    deadline = nt.first_pos + w if rt.count_window else nt.first_ts + w
                    ends = places[nt.place].gap_ends
                    if ends:
                        deadline = gap_deadline(ends, pi, nt, deadline)
                        if (now.pos >= deadline if rt.count_window else now.ts > deadline):  # born past its own gap: its parent timed out
                            continue
                    st.counter += 1
                    heapq.heappush(st.deadlines[i], (deadline, st.counter, part, nt, pi))
    if limited:
        # oldest first, so that the outcome does not depend on the order the shared net
        # happened to create them in
        limited.sort(key=lambda x: x[0])
        broken = None
        if rt.contiguity:
            floor = rt.floor(part, st.last_input_key)
            broken = lambda t: t.last_key < floor  # noqa: E731
        for order, nt, going_on in limited:
            admit(part, nt, going_on, order, now, rt.limits, broken, key, st.stats.dropped)


def check_budget(c: Compiled, st: RunState, now: Event) -> None:
    """More partial matches were created since the last check than the budgets had room
    for: sweep, so that the count is exact, and stop the run if a net is over the budget of
    partial matches, or the run over its memory budget. Otherwise the next check comes when
    the creations since could have filled the room left (at least 1/64 of the budget, so
    that a run near it does not sweep per event)."""
    budget = c.max_partial_matches
    sweep(c, st, now)
    live = st.live()
    most = max(live, default=0)
    if budget is not None and most > budget:
        i = live.index(most)
        raise _over_budget(c, st, c.runtimes[i], st.parts[i], most, budget, now)
    room = INF if budget is None else max(budget - most, budget // 64, 1)
    st.live_seen = sum(live)
    if c.max_memory is not None:
        room = min(room, memory_room(c, st, now))
    st.budget_at = st.stats.created + room


def held_bytes(st: RunState) -> dict[str, int]:
    """The Python engine's bytes by what holds them, estimated (runtime/memory.py): the live
    partial matches counted last, the events the slack holds back."""
    order = st.order
    held = order.held * st.event_size if order is not None else 0
    return {"partial matches": st.live_seen * TOKEN_BYTES, "events the slack holds": held}


def memory_room(c: Compiled, st: RunState, now: Event) -> int:
    """The partial matches the memory budget still has room for (at least 1/64 of it); over
    it, the budget's error."""
    budget = c.max_memory
    assert budget is not None
    parts = held_bytes(st)
    used = sum(parts.values())
    if used > budget:
        raise memory_error(budget, parts, now.id)
    return max((budget - used) // TOKEN_BYTES, budget // TOKEN_BYTES // 64, 1)


def _over_budget(
    c: Compiled, st: RunState, rt: GroupRuntime, parts: dict[Any, Partition], live: int, budget: int, now: Event
) -> StateLimitError:
    """The error naming the net's pattern and the key holding most of its partial matches."""
    key, part = max(parts.items(), key=lambda kv: sum(map(len, kv[1].marking)))
    per_pattern = {pi: 0 for pi in rt.net.patterns if pi not in c.removed}
    for tokens in part.marking:
        for t in tokens:
            for pi in per_pattern:
                if t.users & rt.bit[pi]:
                    per_pattern[pi] += 1
    pi = max(per_pattern, key=lambda p: per_pattern[p])
    shown = repr(key) if len(repr(key)) <= 80 else repr(key)[:77] + "..."
    return StateLimitError(
        f"pattern {c.net.patterns[pi].name!r}: {live} live partial matches, over the run's budget of "
        f"{budget} (key {shown} holds {sum(map(len, part.marking))}) at event {now.id!r}; bound the pattern "
        f"with LIMIT n PARTIAL MATCHES, or raise the budget (--max-partial-matches N, Engine(max_partial_matches=N))"
    )


def spill_out(c: Compiled, st: RunState) -> None:
    """Over the memory budget: write out the keys the policy finds most expendable
    (only keys nothing outside their marking refers to)."""
    spill = c.spill
    assert spill is not None
    candidates = []
    for i, (rt, parts) in enumerate(zip(c.runtimes, st.parts)):
        if rt.watch_mask:
            continue
        for key, part in parts.items():
            if not part.pending:
                candidates.append((i, key, part))
    now = st.last_input.ts if st.last_input is not None else 0
    for i, key in spill.choose(candidates, [rt.place_stats for rt in c.runtimes], now):
        rt = c.runtimes[i]
        part = st.parts[i].pop(key)
        spill.write(i, key, part, INF if rt.count_window else expiry(part, rt.w))


__all__ = ["check_budget", "due", "held_bytes", "memory_room", "spill_out", "sweep", "watch"]
