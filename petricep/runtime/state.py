"""Per-key markings: the mutable side of a run, kept apart from the frozen net.

A :class:`Token` is a partial match. It points to its predecessor and to the one
event its firing bound, so partial matches share prefixes (SASE stacks, Flink's
SharedBuffer, paper 001's chains); the slot tuple only holds references for O(1)
condition evaluation, never copies of events.
"""

from __future__ import annotations

from typing import Any

from petricep.events import Event

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

    def copied(self) -> Token:
        """A private copy of this partial match's whole chain (the root stays shared): what
        an automaton that copies partial matches pays per extension (paper 001's baseline)."""
        links: list[Token] = []
        t: Token | None = self
        while t is not None and t.event is not None:
            links.append(t)
            t = t.prev
        out = t
        for x in reversed(links):
            c = x.detached()
            c.prev = out
            c.alive = x.alive
            out = c
        assert out is not None
        return out

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
