"""Bounded disorder: events that arrive out of time order are re-ordered before firing.

Real feeds deliver events late by a bounded amount (network paths, batching, clock skew).
With a *slack* ``s``, an event is held until the highest timestamp seen so far has moved
``s`` past it (Flink's bounded-out-of-orderness watermark: ``watermark = max_ts - s``), then
released in stream order ``(ts, arrival)``. An event whose timestamp is already below the
watermark when it arrives is *late*: the stream before it has been fired, so it goes to the
late-event output (a callback) and is counted — never silently dropped, never fired.

Whether an event is late depends only on the arrival sequence (``ts < max(ts of earlier
arrivals) - s``), not on when events are released, so every engine reports the same late
events. Released events are renumbered: their ``pos`` is their position in the re-ordered
stream of on-time events (what count windows and contiguity see); their ``id`` is kept.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from petricep.errors import ConfigError
from petricep.events import Event

LateHandler = Callable[[Event, Any], None]


class EventTimeOrder:
    """Re-orders a stream with bounded disorder; see the module docstring."""

    __slots__ = ("slack", "on_late", "late", "_heap", "_max_ts", "_arrivals", "_next_pos")

    def __init__(self, slack: float | int, on_late: LateHandler | None = None) -> None:
        if isinstance(slack, bool) or not isinstance(slack, (int, float)) or not slack >= 0:
            raise ConfigError(f"slack must be a number >= 0, not {slack!r}")
        self.slack = slack
        self.on_late = on_late
        self.late = 0
        self._heap: list[tuple[Any, int, Event]] = []
        self._max_ts: Any = None
        self._arrivals = 0
        self._next_pos = 0

    @property
    def watermark(self) -> Any:
        """Events below this timestamp are late (None before the first event)."""
        return None if self._max_ts is None else self._max_ts - self.slack

    @property
    def held(self) -> int:
        """Events waiting for the watermark to pass them."""
        return len(self._heap)

    def offer(self, e: Event) -> list[Event]:
        """Take the next arriving event; returns the events now released, in stream order."""
        mark = self.watermark
        if mark is not None and e.ts < mark:
            self.late += 1
            if self.on_late is not None:
                self.on_late(e, mark)
            return []
        self._arrivals += 1
        heapq.heappush(self._heap, (e.ts, self._arrivals, e))
        if self._max_ts is None or e.ts > self._max_ts:
            self._max_ts = e.ts
        return self._release(self._max_ts - self.slack)

    def drain(self) -> list[Event]:
        """End of stream: every held event, in stream order."""
        return self._release(None)

    def _release(self, upto: Any) -> list[Event]:
        heap = self._heap
        out: list[Event] = []
        while heap and (upto is None or heap[0][0] <= upto):
            e = heapq.heappop(heap)[2]
            e.pos = self._next_pos
            self._next_pos += 1
            out.append(e)
        return out


__all__ = ["EventTimeOrder", "LateHandler"]
