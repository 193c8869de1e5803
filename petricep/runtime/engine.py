"""The embedded engine: one shared net, per-key markings, events in, matches out.

Events are pushed in stream order. Each is routed, by type, to the input places of
every pattern that reads it and, by the pattern's ``[attr]`` key, to that key's
marking. Matches of patterns with RETURN become composite events that re-enter the
loop right after the event that produced them.

The engine is a facade over two objects: its compiled side (:class:`~petricep.runtime.
compiled.Compiled`: the net, one runtime per shared net, the tie rule's functions, the
options), built once per net, and one :class:`~petricep.runtime.state.RunState`, everything
the run changes (:mod:`petricep.runtime.snapshot` writes it out and reads it back). Firing
(:mod:`.dispatch`), ties (:mod:`.ties`), emission (:mod:`.emission`), housekeeping
(:mod:`.housekeeping`) and reporting (:mod:`.report`) take those two, never the engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from petricep.compile.net import Net
from petricep.errors import ConfigError, EvaluationError, EventOrderError
from petricep.events import Event, EventColumns
from petricep.runtime import report as reporting
from petricep.runtime import snapshot as snapshots
from petricep.runtime.build import MAX_PARTIAL_MATCHES, TIE_RULES, check_budget, check_program, check_spill
from petricep.runtime.compiled import Compiled
from petricep.runtime.counters import MarkingCounters
from petricep.runtime.emission import close_all, emit
from petricep.runtime.expr import as_condition
from petricep.runtime.firing import GroupRuntime
from petricep.runtime.housekeeping import held_bytes, sweep
from petricep.runtime.match import Match
from petricep.runtime.memory import TOKEN_BYTES, check_size, event_bytes, memory_error
from petricep.runtime.ordering import EventTimeOrder, LateHandler
from petricep.runtime.rows import RowQueries, RowRuntime, RuntimeFactory
from petricep.runtime.spill import Spiller
from petricep.runtime.state import INF, RunState, RunStats
from petricep.runtime.ties import RULES

CLOCK = "\x00clock"  # type of the pseudo-event advance() and flush() use as emitter


class Engine:
    """Runs a compiled :class:`Net` over one stream (embedded mode)."""

    def __init__(
        self,
        net: Net,
        tie: str = "arrival",
        sweep_every: int = 2048,
        collect: bool = True,
        slack: float | int | None = None,
        on_late: LateHandler | None = None,
        spill: Spiller | None = None,
        max_partial_matches: int | None = MAX_PARTIAL_MATCHES,
        count_marking: bool = False,
        max_memory: int | None = None,
        row_runtime: RuntimeFactory = RowRuntime,
    ) -> None:
        """``collect=False``: count matches in ``stats`` without building match objects (push
        returns only the matches whose patterns feed others; for monitoring and benchmarks).

        ``slack``: accept events out of time order by up to this much (timestamp units) and
        re-order them (:mod:`petricep.runtime.ordering`); later ones go to ``on_late(event,
        watermark)`` and ``stats.late``. Without a slack, out-of-order input is an error.

        ``max_partial_matches``: the budget of live partial matches per shared net; one
        more stops the run with :class:`~petricep.errors.StateLimitError` (None: no budget).
        ``max_memory``: the memory budget in bytes, estimated (:mod:`petricep.runtime.memory`:
        the live partial matches and the events a slack holds back); over it, the same error.

        ``row_runtime``: builds a SQL query's runtime (:class:`RowRuntime`; the compiled
        kernel's row matcher: :class:`petricep.kernel.rowengine.RowKernelEngine`)."""
        check_program(net, tie)
        if spill is not None:
            check_spill(tie)
        if on_late is not None and slack is None:
            raise ConfigError("on_late needs a slack (events out of order by more than it are late)")
        stats = RunStats(matches={p.name: 0 for p in net.patterns})
        st = self.state = RunState(stats, INF if max_partial_matches is None else max_partial_matches)
        st.consumed = {p.conflict: {} for p in net.patterns if p.conflict}
        rows = RowQueries(net.rows, stats.matches, row_runtime)  # SQL MATCH_RECOGNIZE queries (runtime/rows.py)
        c = self.compiled = Compiled(net, tie, RULES[tie], rows, collect, sweep_every, spill)
        for g in net.groups:
            c.add_net(g, st)
        c.add_returns(0)
        c.settle_flags()
        # the run's marking per place and transition (runtime/counters.py): off unless asked
        st.counters = MarkingCounters(c.runtimes) if count_marking else None
        st.order = EventTimeOrder(slack, on_late) if slack is not None else None
        c.max_partial_matches = check_budget(max_partial_matches)
        c.max_memory = check_size(max_memory)
        if c.max_memory is not None:
            st.held_at = 0  # the slack's next check
            st.budget_at = min(st.budget_at, c.max_memory // TOKEN_BYTES)

    # the compiled side, read where the engine is inspected (tests, reports)

    @property
    def net(self) -> Net:
        return self.compiled.net

    @property
    def tie(self) -> str:
        return self.compiled.tie

    @property
    def runtimes(self) -> list[GroupRuntime]:
        return self.compiled.runtimes

    @property
    def rows(self) -> RowQueries:
        return self.compiled.rows

    @property
    def spill(self) -> Spiller | None:
        return self.compiled.spill

    @property
    def collect(self) -> bool:
        return self.compiled.collect

    @property
    def sweep_every(self) -> int:
        return self.compiled.sweep_every

    @property
    def order(self) -> EventTimeOrder | None:
        return self.state.order

    @property
    def max_partial_matches(self) -> int | None:
        return self.compiled.max_partial_matches

    @property
    def max_memory(self) -> int | None:
        return self.compiled.max_memory

    @property
    def removed(self) -> set[int]:
        return self.compiled.removed

    # ------------------------------------------------------------------ public API

    @property
    def stats(self) -> RunStats:
        """The run's counters (matches tallied by group are added up first)."""
        if self.state.tally:
            reporting.settle(self.compiled, self.state)
        return self.state.stats

    @property
    def row_runtimes(self) -> list[RowRuntime]:
        """The runtimes of the SQL queries (one per distinct query)."""
        return self.rows.runtimes

    def push(self, e: Event) -> list[Match]:
        """Process one input event; returns the matches it completes (or whose window it closes).

        With a slack, ``e`` may be out of time order: it is held until the watermark passes
        it, and the matches returned are those of the events released by its arrival."""
        st = self.state
        order = st.order
        if order is None:
            return self._push(e)
        out: list[Match] = []
        for x in order.offer(e):
            out += self._push_released(x)
        st.stats.late = order.late
        if order.held >= st.held_at:
            self._check_held(e)
        return out

    def _check_held(self, e: Event) -> None:
        """The events the slack holds back could have filled the memory budget's room: their
        bytes (``e``'s measured for each) with the partial matches', against the budget; the
        next check when the events held since could fill the room left (1/64 of it at least)."""
        budget = self.compiled.max_memory
        st = self.state
        assert budget is not None and st.order is not None
        st.event_size = event_bytes(e)
        parts = held_bytes(st)
        used = sum(parts.values())
        if used > budget:
            raise memory_error(budget, parts, e.id)
        size = st.event_size
        st.held_at = st.order.held + max((budget - used) // size, budget // size // 64, 1)

    def _push_released(self, x: Event) -> list[Match]:
        try:
            return self._push(x)
        except EvaluationError as exc:
            exc.event = x  # type: ignore[attr-defined]  # the event that failed, not the one arriving
            raise

    def _push(self, e: Event) -> list[Match]:
        st = self.state
        last = st.last_input
        if last is not None and e.ts < last.ts:
            raise EventOrderError(
                f"timestamp {e.ts} is before the previous event's {last.ts} (input must be in time order)", row=e.pos
            )
        st.stats.events += 1
        return self.compiled.rule.step(self.compiled, st, e)

    def advance(self, ts: Any, pos: int) -> list[Match]:
        """Stream time reached ``(ts, pos)`` with no event of ours there: close the windows it
        ends. A key partition of a distributed run calls this for other keys' events so that
        matches waiting on an end negation are emitted where the whole stream would emit them."""
        return self.compiled.rule.advance(self.compiled, self.state, Event(CLOCK, ts, pos))

    def flush(self, last: tuple[Any, int] | None = None) -> list[Match]:
        """End of stream: close every window still open and emit what survives.

        ``last``: (ts, pos) of the stream's last input event, when this engine did not see
        it (a key partition of a distributed run); composite events emitted here take it."""
        out: list[Match] = []
        c, st = self.compiled, self.state
        if st.order is not None:
            for x in st.order.drain():
                out += self._push_released(x)
        out += c.rule.close(c, st)
        emitter = st.last_input if last is None else Event(CLOCK, last[0], last[1])
        while any(st.pending) or any(st.deadlines) or st.group_events or st.group_emitted:
            if st.group_events or st.group_emitted:
                # (tie rule either) composite events emitted here form one more timestamp
                # group: close it
                out += c.rule.close(c, st)
                continue
            out += emit(c, st, close_all(c, st, emitter))
        out += c.rows.flush(st.stats.matches, c.collect)
        if emitter is not None:
            sweep(c, st, emitter, always=True)  # samples the peak once more
        for parts in st.parts:  # every window has closed: no partial match is left
            parts.clear()
        for index in st.expiry:
            if index is not None:
                index.clear()
        return out

    def run(self, events: Iterable[Event]) -> Iterator[Match]:
        for e in events:
            yield from self.push(e)
        yield from self.flush()

    # ------------------------------------------------------------------ the matcher contract

    def push_columns(self, cols: EventColumns) -> list[Match]:
        """A batch given as columns (:class:`~petricep.runtime.matcher.Matcher`): its events
        pushed one by one; the matches of all of them."""
        out: list[Match] = []
        for e in cols.events():
            out += self.push(e)
        return out

    def drain(self) -> list[Match]:
        """Nothing to fire: this engine fires each event as it is pushed (the contract's
        ``drain``, for matchers that collect a batch first)."""
        return []

    def snapshot(self) -> bytes:
        """The run state as Arrow IPC bytes (:mod:`petricep.runtime.snapshot`; never pickle)."""
        return snapshots.dumps(self)

    def restore(self, data: bytes) -> None:
        """Put back a :meth:`snapshot` of an engine over the same net and options."""
        snapshots.restore(self, data)

    def extend(self, net: Net) -> None:
        """Run the patterns ``net`` adds to this engine's net (see
        :func:`petricep.merge.extend_net`). They see the events pushed from now on; the running
        patterns keep their partial matches."""
        c, st = self.compiled, self.state
        old = c.net
        if net.patterns[: len(old.patterns)] != old.patterns or net.groups[: len(old.groups)] != old.groups:
            raise ConfigError("extend() needs the running net with patterns added (merge.extend_net)")
        c.net = net
        for g in net.groups[len(old.groups) :]:
            c.add_net(g, st)
        c.settle_flags()
        c.add_returns(len(old.patterns))
        for pn in net.patterns[len(old.patterns) :]:
            st.stats.matches[pn.name] = 0
            if pn.conflict is not None:
                st.consumed.setdefault(pn.conflict, {})

    def remove_pattern(self, name: str) -> None:
        """Stop a pattern on a running engine; the others keep their partial matches."""
        c = self.compiled
        index = next((p.index for p in c.net.patterns if p.name == name and p.index not in c.removed), None)
        if index is None:
            raise ConfigError(f"no running pattern named {name!r}")
        c.removed.add(index)
        reporting.settle(c, self.state)  # role groups change: add up what they tallied
        self.state.count_only.clear()
        for rt in c.runtimes:
            if index in rt.net.patterns and not rt.remove_pattern(index):
                for consumers in c.consumers.values():
                    if rt in consumers:
                        consumers.remove(rt)

    @property
    def pattern_names(self) -> list[str]:
        """The patterns this engine runs now."""
        removed = self.compiled.removed
        return [p.name for p in self.net.patterns if p.index not in removed] + [r.name for r in self.net.rows]

    def live_partial_matches(self) -> int:
        """Partial matches that can still be extended at the last event (0 after flush)."""
        return reporting.live_partial_matches(self.compiled, self.state)

    def live_by_pattern(self) -> dict[str, int]:
        """Live partial matches per pattern (a shared token counts for each pattern it serves)."""
        return reporting.live_by_pattern(self.compiled, self.state)

    def marking(self) -> tuple[dict[tuple[int, int], tuple[int, int]], dict[tuple[int, int], int]] | None:
        """The run's marking so far, ``({(group, place): (created, peak alive)}, {(group,
        transition): firings})``; None unless the engine was built with ``count_marking``."""
        return reporting.marking(self.state)

    def report(self, read: int | None = None, rejected: int = 0) -> dict[str, Any]:
        """The run's accounting: events read = processed + rejected + late; per pattern its
        matches, timeouts, partial matches dropped by a LIMIT and alive now. ``read`` /
        ``rejected``: the reader's counts (default: every event pushed was read)."""
        return reporting.report(self.compiled, self.state, read, rejected)

    def sweep(self, now: Event) -> None:
        """Drop the partial matches and negative events no window can use any more."""
        sweep(self.compiled, self.state, now, always=True)


__all__ = ["MAX_PARTIAL_MATCHES", "TIE_RULES", "Engine", "Match", "RunStats", "as_condition"]
