"""A run split between the compiled kernel and the Python engine (:mod:`petricep.kernel.parts`
decides which patterns each runs and when the split is exact).

Both engines see every event: the kernel takes the reader's checked batches as columns
(``push_columns``), the Python engine one :class:`Event` per row. Each match is kept with
the position of the event that emitted it (the kernel says it; a Python match is emitted by
the event pushed, or by the end of the stream) until the kernel has fired every event before
it, then the matches of both are merged by (emitting position, SQL rows after patterns,
pattern index in the whole net, is-timeout) -- a stable sort, each engine keeping its own
order inside one key (only one engine has matches under a key: see :mod:`petricep.kernel.parts` for why
that is the single Python engine's order). The pattern index and timeout flag count only
where both engines run patterns; where the Python engine runs only SQL queries, every
pattern match of an event (of every round) comes before its rows' matches, in the kernel's
order.

An evaluation error in either engine stops the run at the first failing event in stream
order, after the matches of the events before it, as the single engine would: the error is
raised by the next call (the Run's next batch, drain or flush), as the kernel raises its own.
"""

from __future__ import annotations

import sys
from typing import Any

from petricep.compile.net import Net
from petricep.errors import EvaluationError, StateLimitError
from petricep.events import Event, EventColumns
from petricep.kernel.engine import KernelEngine
from petricep.kernel.parts import KERNEL, SPLIT, SPLIT_PATTERNS, EnginePlan
from petricep.kernel.rowengine import RowKernelEngine
from petricep.runtime.engine import Engine
from petricep.runtime.match import Match

END = sys.maxsize  # the emitting position of what the end of the stream emits (after every event)
Failure = EvaluationError | StateLimitError
Pair = tuple[Match, int]  # (match, emitting position; -1: the end of the stream)


class SplitEngine:
    """``plan``'s kernel net on a :class:`KernelEngine` and its Python net on an
    :class:`Engine`, driven like either (``push``, ``push_columns``, ``drain``, ``flush``,
    ``report``) over the whole ``net``; the matches in the single Python engine's order."""

    def __init__(
        self,
        net: Net,
        plan: EnginePlan,
        tie: str = "arrival",
        max_partial_matches: int | None = None,
        max_memory: int | None = None,
        with_events: bool = False,
    ) -> None:
        """``with_events``: the kernel's matches carry their bound events (``--with-events``;
        the Python engine's always do)."""
        assert plan.name in (SPLIT, KERNEL) and plan.kernel_net is not None and plan.python_net is not None
        self.net = net
        self.plan = plan
        # (the memory budget: the kernel's arenas and the Python engine's estimate, each whole)
        self.kernel = KernelEngine(
            plan.kernel_net, tie=tie, max_partial_matches=max_partial_matches, max_memory=max_memory, with_events=with_events
        )
        # the SQL queries on the kernel's row matcher where it covers them (plan.rows_on_kernel)
        engine = RowKernelEngine if plan.rows_on_kernel else Engine
        self.python = engine(plan.python_net, tie=tie, max_partial_matches=max_partial_matches, max_memory=max_memory)
        self.sweep_every = self.kernel.sweep_every  # the peak is sampled after each kernel batch
        self._index = {p.name: p.index for p in net.patterns}
        self._by_pattern = plan.mode == SPLIT_PATTERNS
        self._kernel_out: list[Pair] = []
        self._python_out: list[Pair] = []
        self._error: Failure | None = None
        self._error_at = END  # the failing event's position
        self.peak = 0

    # ------------------------------------------------------------------ driving

    def push(self, e: Event) -> list[Match]:
        """One event to both engines; the matches that are final (those of every event the
        kernel has fired: none while it collects a batch)."""
        self._check()
        if not self._python_step(e):
            return self._kernel_drained()
        try:
            self._kernel_out += self.kernel.push_pairs(e)
        except (EvaluationError, StateLimitError) as exc:
            self._kernel_failed(exc)
            return self._merged()
        if self.kernel.collected:
            return []
        self._sample()
        return self._merged()

    def push_columns(self, cols: EventColumns) -> list[Match]:
        """A checked batch: fired on the kernel as columns, on the Python engine row by row
        (up to the kernel's failing event, if one fails); the matches of both, merged."""
        self._check()
        stop = END
        try:
            self._kernel_out += self.kernel.push_columns_pairs(cols)
        except (EvaluationError, StateLimitError) as exc:
            stop = self._kernel_failed(exc)
        for e in cols.events():
            if e.pos >= stop or not self._python_step(e):
                break
        self._sample()
        return self._merged()

    def drain(self) -> list[Match]:
        """Fire what the kernel collected (the stream goes on); the matches so far."""
        self._check()
        return self._kernel_drained()

    def flush(self) -> list[Match]:
        """End of stream: both engines close their windows; the rest of the matches."""
        out = self.drain()
        self._check()
        self._kernel_out += self.kernel.flush_pairs()
        self._python_out += [(m, -1) for m in self.python.flush()]
        return out + self._merged()

    def _python_step(self, e: Event) -> bool:
        """``e`` on the Python engine, its matches kept; False where it fails there (the
        error kept, with the event, for the next call)."""
        try:
            found = self.python.push(e)
        except (EvaluationError, StateLimitError) as exc:
            exc.event = e  # type: ignore[union-attr]  # (Run names the failing event)
            self._failed(exc, e.pos)
            return False
        if found:
            at = e.pos
            self._python_out += [(m, at) for m in found]
        return True

    def _kernel_drained(self) -> list[Match]:
        try:
            self._kernel_out += self.kernel.drain_pairs()
        except (EvaluationError, StateLimitError) as exc:
            self._kernel_failed(exc)
        self._sample()
        return self._merged()

    def _kernel_failed(self, exc: Failure) -> int:
        """The kernel failed: its matches before the failing event kept, the Python engine's
        from that event on dropped, unless the Python engine failed at an earlier event.
        Returns the failing event's position (:data:`END` where none is named: a budget)."""
        self._kernel_out += getattr(exc, "pairs", [])
        failed = getattr(exc, "event", None)
        at = failed.pos if failed is not None else END
        if self._error is None or at < self._error_at:
            self._failed(exc, at)
        return at

    def _failed(self, exc: Failure, at: int) -> None:
        """The run stops at position ``at`` (the failing event) with ``exc``: nothing emitted
        at or after it is a match of the run."""
        self._error, self._error_at = exc, at
        self._kernel_out = [(m, p) for m, p in self._kernel_out if 0 <= p < at]
        self._python_out = [(m, p) for m, p in self._python_out if 0 <= p < at]

    def _check(self) -> None:
        if self._error is not None:
            raise self._error

    def _merged(self) -> list[Match]:
        """Both engines' kept matches in the single engine's order (see the module docstring)."""
        pairs = self._kernel_out + self._python_out
        self._kernel_out, self._python_out = [], []
        if not pairs:
            return []
        index, by_pattern = self._index, self._by_pattern

        def key(pair: Pair) -> tuple[int, int, int, bool]:
            m, at = pair
            i = index.get(m.pattern)
            if i is None:  # a SQL query's match: after the patterns' at its event
                return (END if at < 0 else at, 1, 0, False)
            if not by_pattern:
                return (END if at < 0 else at, 0, 0, False)
            return (END if at < 0 else at, 0, i, m.timeout is not None)

        pairs.sort(key=key)
        return [m for m, _ in pairs]

    # ------------------------------------------------------------------ accounting

    def _sample(self) -> None:
        """The peak of both engines' live partial matches together, after a kernel batch."""
        self.peak = max(self.peak, self.live_partial_matches())

    def live_partial_matches(self) -> int:
        """Partial matches that can still be extended, on both engines."""
        return self.kernel.live_partial_matches() + self.python.live_partial_matches()

    def report(self, read: int | None = None, rejected: int = 0) -> dict[str, Any]:
        """The accounting of the whole run (:meth:`Engine.report`): events as the Python
        engine counts them (it sees every event at once), per pattern its engine's counts in
        the whole net's order, then the SQL queries'; partial matches of both engines (the
        peak: the largest sum sampled after a kernel batch, or either engine's own peak)."""
        k, p = self.kernel.report(), self.python.report()
        processed = p["events"]["processed"]
        patterns = {name: k["patterns"].get(name) or p["patterns"][name] for name in self._index}
        patterns.update((name, entry) for name, entry in p["patterns"].items() if name not in self._index)
        kp, pp = k["partial_matches"], p["partial_matches"]
        alive = kp["alive"] + pp["alive"]
        out: dict[str, Any] = {
            "events": {
                "read": processed + rejected if read is None else read,
                "processed": processed,
                "rejected": rejected,
                "late": 0,
                "composite": k["events"]["composite"] + p["events"]["composite"],
            },
            "patterns": patterns,
            "partial_matches": {
                "alive": alive,
                "peak": max(self.peak, kp["peak"], pp["peak"], alive),
                "dropped": kp["dropped"] + pp["dropped"],
            },
        }
        if "interpreted" in p:
            out["interpreted"] = p["interpreted"]
        return out

    def marking(self) -> None:
        """No marking counts of the whole net (the kernel counts none)."""
        return None


__all__ = ["END", "SplitEngine"]
