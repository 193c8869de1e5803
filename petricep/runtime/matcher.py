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
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from petricep.compile.net import Net
from petricep.events import Event, EventColumns

from .match import Match

# the marking counts (``--stats``): {(group, place): (created, peak alive)}, {(group, transition): firings}
Marking = tuple[dict[tuple[int, int], tuple[int, int]], dict[tuple[int, int], int]]


@runtime_checkable
class Matcher(Protocol):
    """See the module docstring."""

    net: Net
    sweep_every: int  # events between samples of the partial matches' peak

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


__all__ = ["Marking", "Matcher"]
