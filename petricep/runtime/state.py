"""The mutable side of a run, kept apart from the frozen net and its compiled runtimes.

:class:`RunState` is everything a run changes, in one picklable object: per shared net its
per-key markings (:class:`Partition`), the matches waiting for their window to close, the
partial matches watched for a timeout and the expiry index; the run's counters and sequence
numbers; the open timestamp group of the tie rules ``strict`` and ``either``; the events a
slack holds back. :mod:`petricep.runtime.snapshot` writes it out as Arrow IPC.

A :class:`Token` is a partial match. It points to its predecessor and to the one
event its firing bound, so partial matches share prefixes (SASE stacks, Flink's
SharedBuffer, paper 001's chains); the slot tuple only holds references for O(1)
condition evaluation, never copies of events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from petricep.events import Event
from petricep.runtime.ordering import EventTimeOrder

INF = float("inf")


class Token:
    __slots__ = (
        "slots",
        "prev",
        "event",
        "slot",
        "place",
        "first_ts",
        "last_ts",
        "first_pos",
        "last_pos",
        "last_key",
        "blocked",
        "alive",
        "users",
        "extended",
        "counted",
    )

    def __init__(
        self,
        slots: tuple[Any, ...],
        prev: Token | None,
        event: Event | None,
        slot: int,
        place: int,
        first_ts: Any,
        last_ts: Any,
        first_pos: int,
        last_pos: int,
        last_key: float,
        blocked: int,
        users: int = -1,
    ) -> None:
        self.slots = slots
        self.prev = prev
        self.event = event
        self.slot = slot
        self.place = place
        self.first_ts = first_ts
        self.last_ts = last_ts
        self.first_pos = first_pos
        self.last_pos = last_pos
        self.last_key = last_key
        self.blocked = blocked
        self.alive = True
        # bitmask of the patterns (of its shared net) this partial match is one of; patterns
        # with different histories (rear combination) or already consumed (skip-till-next-match)
        # share places but not tokens
        self.users = users
        # Set only where a net uses them (unset reads as 0, via getattr), so that nets without
        # ON TIMEOUT or LIMIT pay nothing per token:
        # - extended: patterns (bits) for which a later firing extended this partial match
        #   (it did not time out for them);
        # - counted: patterns (bits) whose LIMIT quota counts it (runtime/limits.py).

    extended: int
    counted: int

    def detached(self) -> Token:
        """A copy with its own ``alive`` flag (a match waiting for its window to close),
        sharing the chain; cancelling it leaves the partial match in the marking alone."""
        t = Token(
            self.slots, self.prev, self.event, self.slot, self.place, self.first_ts, self.last_ts,
            self.first_pos, self.last_pos, self.last_key, self.blocked, self.users,
        )
        return t

    def chain(self) -> list[tuple[int, Event]]:
        """(slot, event) pairs from the first binding to this one."""
        out = []
        t: Token | None = self
        while t is not None and t.event is not None:
            out.append((t.slot, t.event))
            t = t.prev
        out.reverse()
        return out

    def contains(self, x: Event) -> bool:
        """Whether ``x`` is bound in this partial match (walks back only while ts >= x.ts)."""
        t: Token | None = self
        while t is not None and t.event is not None:
            if t.event is x:
                return True
            if t.event.ts < x.ts:
                return False
            t = t.prev
        return False


def gap_time(v: Any) -> Any:
    """The time a per-step gap is measured from, in a slot: its event's, or a Kleene list's
    last element's (a list's slot holds its state tuple, the last element at index 1)."""
    return v[1].ts if type(v) is tuple else v.ts


def gap_value(v: Any, events: bool) -> Any:
    """:func:`gap_time`, or its event's input position for a gap in EVENTS."""
    e = v[1] if type(v) is tuple else v
    return e.pos if events else e.ts


def gap_over(slots: tuple[Any, ...], gaps: tuple[tuple[int, Any], ...], ts: Any, pos: int) -> bool:
    """Some gap ``(slot, hi)`` of ``gaps`` has ended before the stream's ``(ts, pos)``: ``ts -
    slot.ts > hi``, or for a gap in EVENTS (``~slot``, compile/net.py gap_slot) ``pos - slot.pos
    > hi``."""
    for sl, hi in gaps:
        if sl >= 0:
            if ts - gap_time(slots[sl]) > hi:
                return True
        elif pos - gap_value(slots[~sl], True) > hi:
            return True
    return False


def root_token(nslots: int, start: int, users: int) -> Token:
    return Token((None,) * nslots, None, None, -1, start, None, None, -1, -1, INF, 0, users)


class Partition:
    """The marking of one pattern for one key value."""

    __slots__ = ("marking", "buffers", "pending", "last_input_key", "quotas", "key", "due")

    def __init__(self, nplaces: int, nnegs: int, key: Any = None) -> None:
        self.marking: list[list[Token]] = [[] for _ in range(nplaces)]
        self.buffers: list[list[Event]] = [[] for _ in range(nnegs)]
        self.pending: list[tuple[Token, Any]] = []  # (match waiting for its window, its Role)
        self.last_input_key: float = -INF
        self.quotas: dict[int, Any] = {}  # limited pattern -> its Quota (runtime/limits.py)
        self.key = key  # the partition attribute values this marking belongs to
        # earliest stream point (ts, or pos under a count window) at which a sweep could drop
        # something here; the engine's expiry index holds an entry for it (INF: none)
        self.due: Any = INF

    def live_tokens(self) -> int:
        return sum(len(m) for m in self.marking)

    def empty(self) -> bool:
        return not any(self.marking) and not any(self.buffers) and not self.pending


@dataclass
class RunStats:
    events: int = 0  # input events fired (on time)
    composite_events: int = 0
    created: int = 0  # partial matches (tokens) created: the intermediate results
    # complete sequences constructed (tokens reaching a place patterns emit from), before
    # the emission checks: paper 000's intermediate results
    completed: int = 0
    matches: dict[str, int] = field(default_factory=dict)
    late: int = 0  # input events behind the watermark (with a slack): reported, not fired
    timeouts: dict[str, int] = field(default_factory=dict)  # partial matches emitted as timeouts
    dropped: dict[str, int] = field(default_factory=dict)  # partial matches a LIMIT discarded
    peak_partial: int = 0  # most live partial matches seen, sampled at sweeps (housekeeping.sweep)


class RunState:
    """Everything one engine's run changes (see the module docstring). Lists named per shared
    net are indexed like the engine's runtimes; nothing here refers to compiled code but the
    runtimes named in ``group_kills`` (a snapshot writes those as references). The tie,
    emission, housekeeping and reporting functions take this object (with the engine's
    :class:`~petricep.runtime.compiled.Compiled` side), never the engine."""

    __slots__ = (
        "parts",
        "pending",
        "deadlines",
        "expiry",
        "consumed",
        "stats",
        "counters",
        "seq",
        "counter",
        "last_input",
        "last_input_key",
        "accepted",
        "tally",
        "count_only",
        "group_ts",
        "group_kills",
        "group_events",
        "group_emitted",
        "group_clocks",
        "since_sweep",
        "sampled_at",
        "budget_at",
        "order",
        "live_seen",
        "event_size",
        "held_at",
        "sample_span",
    )

    def __init__(self, stats: RunStats, budget_at: float, counters: Any = None) -> None:
        # per shared net: key -> its marking
        self.parts: list[dict[Any, Partition]] = []
        # per shared net, heap of (window closes, n, partition, match, role): matches waiting
        # for their window to close (end negations)
        self.pending: list[list[tuple[Any, int, Partition, Token, Any]]] = []
        # ON TIMEOUT, per shared net: heap of (deadline, n, partition, token, pattern index)
        self.deadlines: list[list[tuple[Any, int, Partition, Token, int]]] = []
        # the expiry index, per shared net: a heap of (due, n, partition), so that a sweep
        # visits only the partitions with something to drop (None: sweep every partition)
        self.expiry: list[list[tuple[Any, int, Partition]] | None] = []
        # consumption: domain -> {event seq: ts} of the events consumed there
        self.consumed: dict[str, dict[int, Any]] = {}
        self.stats = stats
        self.counters = counters  # the marking per place and transition (runtime/counters.py), or None
        self.seq = 0  # stream sequence number of the last event fired
        self.counter = 0  # tie breaker of the heaps
        self.last_input: Event | None = None
        self.last_input_key: float = -INF  # maintained only while a contiguity pattern runs
        self.accepted: list[Token] = []  # reused per step: tokens that reached an emitting place
        # collect=False: matches of a group of counted patterns (same checks, one place) are
        # tallied per (group, patterns) and added to stats.matches when stats are read
        self.tally: dict[tuple[tuple[int, int, int], int], int] = {}
        self.count_only: dict[tuple[int, int, int], bool] = {}
        # the open timestamp group (tie rules strict and either)
        self.group_ts: Any = None
        self.group_kills: list[tuple[Any, Partition, int, Event]] = []
        self.group_events: list[Event] = []
        self.group_emitted: list[Event] = []  # composite events of matches its first event closed
        self.group_clocks: list[Event] = []  # advance() points inside the open timestamp group
        self.since_sweep = 0
        self.sampled_at = 0  # stats.events at the last sample of the peak (housekeeping.sweep)
        # the memory budget is checked when stats.created reaches this (INF: never)
        self.budget_at = budget_at
        self.order: EventTimeOrder | None = None  # with a slack: the events held back (runtime/ordering.py)
        self.live_seen = 0  # the live partial matches at the last budget check
        self.event_size = 0  # a held event's bytes, measured at the last check of the slack
        self.held_at: float = INF  # the slack's next check against the memory budget
        self.sample_span = 0  # the events between two samples of the peak: the partitions the last one left

    def add_net(self, indexed: bool) -> None:
        """Room for one more shared net (``indexed``: its sweeps follow the expiry index)."""
        self.parts.append({})
        self.pending.append([])
        self.deadlines.append([])
        self.expiry.append([] if indexed else None)

    def live(self) -> list[int]:
        """Partial matches held per shared net."""
        return [sum(len(tokens) for part in parts.values() for tokens in part.marking) for parts in self.parts]
