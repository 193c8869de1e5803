"""The matcher contract: what every engine that fires a net offers its runner.

The compiled kernel (:class:`~petricep.kernel.engine.KernelEngine`) and the Python
reference engine (:class:`~petricep.runtime.engine.Engine`) both satisfy :class:`Matcher`,
so a runner (``Run``, the history runner, a Spark key) drives whichever the chooser
(:func:`petricep.kernel.choice.choose`) picked the same way:

* ``push(event)`` / ``push_columns(batch)``: events in stream order; the matches they
  complete, in the reference engine's order (the kernel may collect events into a batch
  first: then ``drain`` fires what it holds without ending the stream);
* ``advance(ts, pos)``: stream time reached a watermark with no event there (a key
  partition's clock): the windows it closes;
* ``flush()``: the end of the stream;
* ``snapshot()`` / ``restore(data)``: the run state as bytes, put back into a fresh matcher
  over the same net and tie rule (between batches: ``drain`` first);
* ``report(read, rejected)``: the accounting (events, per pattern matches, timeouts and
  dropped partial matches, partial matches alive and at their peak), and
  ``live_partial_matches()``; ``marking()``: the counts per place and transition where
  the engine keeps them (the Python engine's ``count_marking``), else None.

:class:`Reordered` puts a slack's reorder stage (:class:`~petricep.runtime.ordering.EventTimeOrder`)
in front of a matcher that takes events in time order only (the kernel): it holds events
until the watermark passes them, pushes them in stream order, and hands late ones to
``on_late``, as the Python engine's own slack does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from petricep.compile.net import Net
from petricep.errors import EvaluationError
from petricep.events import Event, EventColumns

from .match import Match
from .memory import event_bytes, memory_error
from .ordering import EventTimeOrder, LateHandler
from .state import INF

# the marking counts (``--stats``): {(group, place): (created, peak alive)}, {(group, transition): firings}
Marking = tuple[dict[tuple[int, int], tuple[int, int]], dict[tuple[int, int], int]]


@runtime_checkable
class Matcher(Protocol):
    """See the module docstring."""

    @property
    def net(self) -> Net: ...

    @property
    def sweep_every(self) -> int: ...  # events between samples of the partial matches' peak

    def push(self, e: Event) -> list[Match]: ...

    def push_columns(self, cols: EventColumns) -> list[Match]: ...

    def advance(self, ts: Any, pos: int) -> list[Match]: ...

    def drain(self) -> list[Match]: ...

    def flush(self) -> list[Match]: ...

    def snapshot(self) -> bytes: ...

    def restore(self, data: bytes) -> None: ...

    def report(self, read: int | None = None, rejected: int = 0) -> dict[str, Any]: ...

    def live_partial_matches(self) -> int: ...

    def marking(self) -> Marking | None: ...


class Reordered:
    """``matcher`` behind a slack's reorder stage (see the module docstring): the Python
    engine's semantics exactly -- an event below the watermark (max time seen - ``slack``) is
    late (``on_late(event, watermark)``, counted in the report, never fired), the others are
    released in stream order ``(ts, arrival)`` with their positions renumbered. ``push``
    returns the matches of the events its arrival released (the matcher may still hold
    them in a batch: ``drain``); ``flush`` releases every held event first."""

    def __init__(
        self,
        matcher: Matcher,
        slack: float | int,
        on_late: LateHandler | None = None,
        max_memory: int | None = None,
        memory: Callable[[], dict[str, int]] = dict,
    ) -> None:
        self.matcher = matcher
        self.net: Net = matcher.net
        self.sweep_every = matcher.sweep_every
        self.order = EventTimeOrder(slack, on_late)
        # the memory budget counts the held events too (with ``memory()``: the matcher's bytes
        # by what holds them), checked as the Python engine checks its slack's
        self.max_memory = max_memory
        self._memory = memory
        self._held_at: float = 0 if max_memory is not None else INF
        self._released: Event | None = None  # the event being pushed (an error's location)

    def push(self, e: Event) -> list[Match]:
        out: list[Match] = []
        for x in self.order.offer(e):
            out += self._push(x)
        if self.order.held >= self._held_at:
            self._check_held(e)
        return out

    def _check_held(self, e: Event) -> None:
        """The held events (``e``'s bytes each) and the matcher's, against the budget; the
        next check when the events held since could fill the room left (``Engine._check_held``)."""
        budget = self.max_memory
        assert budget is not None
        size = event_bytes(e)
        parts = {**self._memory(), "events the slack holds": self.order.held * size}
        used = sum(parts.values())
        if used > budget:
            raise memory_error(budget, parts, e.id)
        self._held_at = self.order.held + max((budget - used) // size, budget // size // 64, 1)

    def push_columns(self, cols: EventColumns) -> list[Match]:
        return [m for e in cols.events() for m in self.push(e)]

    def _push(self, x: Event) -> list[Match]:
        try:
            return self.matcher.push(x)
        except EvaluationError as exc:
            if getattr(exc, "event", None) is None:
                exc.event = x  # type: ignore[attr-defined]  # the released event, not the arriving one
            raise

    def advance(self, ts: Any, pos: int) -> list[Match]:
        return self.matcher.advance(ts, pos)

    def drain(self) -> list[Match]:
        return self.matcher.drain()

    def flush(self) -> list[Match]:
        out: list[Match] = []
        for x in self.order.drain():
            out += self._push(x)
        return out + self.matcher.drain() + self.matcher.flush()

    def snapshot(self) -> bytes:
        raise NotImplementedError("a reordered run's held events are not snapshotted")

    def restore(self, data: bytes) -> None:
        raise NotImplementedError("a reordered run's held events are not snapshotted")

    def report(self, read: int | None = None, rejected: int = 0) -> dict[str, Any]:
        """The matcher's accounting, with the late events: read = processed + rejected +
        late, as the Python engine's slack counts them (held events count once released)."""
        out = self.matcher.report(None, rejected)
        ev = out["events"]
        ev["late"] = self.order.late
        ev["processed"] = ev["processed"] + self.order.held
        ev["read"] = ev["processed"] + rejected + ev["late"] if read is None else read
        return out

    def live_partial_matches(self) -> int:
        return self.matcher.live_partial_matches()

    def marking(self) -> None:
        return None



__all__ = ["Marking", "Matcher", "Reordered"]
