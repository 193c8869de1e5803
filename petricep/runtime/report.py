"""Reporting: what a run has done and holds, read from an engine's state without changing
what it will do — its counters (matches tallied per group of counted patterns are added up
first), the report dict the CLI and the API print, live partial matches per pattern, and
the marking per place and transition (``count_marking``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from petricep.runtime.firing import GroupRuntime
from petricep.runtime.state import Token

if TYPE_CHECKING:
    from petricep.runtime.engine import Engine


def settle(engine: Engine) -> None:
    """Add what counted patterns tallied per (group, patterns) to ``stats.matches``."""
    st = engine.state
    matches = st.stats.matches
    for ((i, place, g), users), n in st.tally.items():
        rt = engine.runtimes[i]
        for role in rt.role_groups[place][g][1]:
            if users & rt.bit[role.pattern]:
                matches[engine.counted[role.pattern]] += n
    st.tally.clear()


def live_tokens(engine: Engine) -> Iterator[tuple[GroupRuntime, Token]]:
    """The partial matches that can still be extended at the last event, with their net."""
    st = engine.state
    now = st.last_input
    for rt, parts in zip(engine.runtimes, st.parts):
        for part in parts.values():
            floor = rt.floor(part, st.last_input_key)
            for tokens in part.marking:
                for t in tokens:
                    if not t.alive or not t.users or (now is not None and rt.expired(t, now)):
                        continue
                    if rt.contiguity and t.last_key < floor:
                        continue
                    yield rt, t


def live_partial_matches(engine: Engine) -> int:
    return engine.rows.live() + sum(1 for _ in live_tokens(engine))


def live_by_pattern(engine: Engine) -> dict[str, int]:
    patterns, removed = engine.net.patterns, engine.removed
    out = {p.name: 0 for p in patterns if p.index not in removed}
    for rt, t in live_tokens(engine):
        for pi, bit in rt.bit.items():
            if t.users & bit and pi not in removed:
                out[patterns[pi].name] += 1
    for r in engine.rows.runtimes:
        for name in (r.name, *r.aliases):
            out[name] = r.live()
    return out


def marking(engine: Engine) -> tuple[dict[tuple[int, int], tuple[int, int]], dict[tuple[int, int], int]] | None:
    counters = engine.state.counters
    if counters is None:
        return None
    counters.sample(engine.state.parts)  # the end of the input is a moment too
    return counters.places(), counters.transitions()


def report(engine: Engine, read: int | None, rejected: int) -> dict[str, Any]:
    """See :meth:`Engine.report <petricep.runtime.engine.Engine.report>`."""
    st = engine.stats
    processed = st.events + (engine.order.held if engine.order is not None else 0)
    alive = live_by_pattern(engine)
    out: dict[str, Any] = {
        "events": {
            "read": processed + st.late + rejected if read is None else read,
            "processed": processed,
            "rejected": rejected,
            "late": st.late,
            "composite": st.composite_events,
        },
        "patterns": {
            name: {
                "matches": count,
                "timeouts": st.timeouts.get(name, 0),
                "dropped": st.dropped.get(name, 0),
                "alive": alive.get(name, 0),
            }
            for name, count in st.matches.items()
        },
        "partial_matches": {
            "alive": live_partial_matches(engine),
            "peak": st.peak_partial,
            "dropped": sum(st.dropped.values()),
        },
    }
    for rrt in engine.rows.runtimes:  # SQL queries: how many rows of their table they read
        for name in (rrt.name, *rrt.aliases):
            out["patterns"][name].update(rows=rrt.rows_seen, table=rrt.net.table)
    return out


__all__ = ["live_by_pattern", "live_partial_matches", "live_tokens", "marking", "report", "settle"]
