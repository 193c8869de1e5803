"""Reporting: what a run has done and holds, read from its state without changing
what it will do — its counters (matches tallied per group of counted patterns are added up
first), the report dict the CLI and the API print, live partial matches per pattern, and
the marking per place and transition (``count_marking``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from petricep.runtime.compiled import Compiled
from petricep.runtime.firing import GroupRuntime
from petricep.runtime.state import RunState, Token


def settle(c: Compiled, st: RunState) -> None:
    """Add what counted patterns tallied per (group, patterns) to ``stats.matches``."""
    matches = st.stats.matches
    for ((i, place, g), users), n in st.tally.items():
        rt = c.runtimes[i]
        for role in rt.role_groups[place][g][1]:
            if users & rt.bit[role.pattern]:
                matches[c.counted[role.pattern]] += n
    st.tally.clear()


def live_tokens(c: Compiled, st: RunState) -> Iterator[tuple[GroupRuntime, Token]]:
    """The partial matches that can still be extended at the last event, with their net."""
    now = st.last_input
    for rt, parts in zip(c.runtimes, st.parts):
        for part in parts.values():
            floor = rt.floor(part, st.last_input_key)
            for tokens in part.marking:
                for t in tokens:
                    if not t.alive or not t.users or (now is not None and rt.expired(t, now)):
                        continue
                    if rt.contiguity and t.last_key < floor:
                        continue
                    yield rt, t


def live_partial_matches(c: Compiled, st: RunState) -> int:
    return c.rows.live() + sum(1 for _ in live_tokens(c, st))


def live_by_pattern(c: Compiled, st: RunState) -> dict[str, int]:
    patterns, removed = c.net.patterns, c.removed
    out = {p.name: 0 for p in patterns if p.index not in removed}
    for rt, t in live_tokens(c, st):
        for pi, bit in rt.bit.items():
            if t.users & bit and pi not in removed:
                out[patterns[pi].name] += 1
    for r in c.rows.runtimes:
        for name in (r.name, *r.aliases):
            out[name] = r.live()
    return out


def marking(st: RunState) -> tuple[dict[tuple[int, int], tuple[int, int]], dict[tuple[int, int], int]] | None:
    counters = st.counters
    if counters is None:
        return None
    counters.sample(st.parts)  # the end of the input is a moment too
    return counters.places(), counters.transitions()


def report(c: Compiled, st: RunState, read: int | None, rejected: int) -> dict[str, Any]:
    """See :meth:`Engine.report <petricep.runtime.engine.Engine.report>`."""
    if st.tally:
        settle(c, st)
    stats = st.stats
    processed = stats.events + (st.order.held if st.order is not None else 0)
    alive = live_by_pattern(c, st)
    out: dict[str, Any] = {
        "events": {
            "read": processed + stats.late + rejected if read is None else read,
            "processed": processed,
            "rejected": rejected,
            "late": stats.late,
            "composite": stats.composite_events,
        },
        "patterns": {
            name: {
                "matches": count,
                "timeouts": stats.timeouts.get(name, 0),
                "dropped": stats.dropped.get(name, 0),
                "alive": alive.get(name, 0),
            }
            for name, count in stats.matches.items()
        },
        "partial_matches": {
            "alive": live_partial_matches(c, st),
            "peak": stats.peak_partial,
            "dropped": sum(stats.dropped.values()),
        },
    }
    for rrt in c.rows.runtimes:  # SQL queries: how many rows of their table they read
        for name in (rrt.name, *rrt.aliases):
            out["patterns"][name].update(rows=rrt.rows_seen, table=rrt.net.table)
    return out


__all__ = ["live_by_pattern", "live_partial_matches", "live_tokens", "marking", "report", "settle"]
