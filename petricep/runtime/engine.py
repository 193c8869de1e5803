"""The embedded engine: one shared net, per-key markings, events in, matches out.

Events are pushed in stream order. Each is routed, by type, to the input places of
every pattern that reads it and, by the pattern's ``[attr]`` key, to that key's
marking. Matches of patterns with RETURN become composite events that re-enter the
loop right after the event that produced them.

The engine holds the compiled side, built once per net (:mod:`petricep.runtime.build`:
one complete runtime per shared net, and the tie rule's functions, :mod:`.ties`), and
one :class:`~petricep.runtime.state.RunState`, everything the run changes. The firing
dispatch is here; emission (:mod:`.emission`), housekeeping (:mod:`.housekeeping`) and
reporting (:mod:`.report`) have their own modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from petricep.compile.net import GroupNet, Net, Role
from petricep.errors import ConfigError, EvaluationError, EventOrderError
from petricep.events import Event, EventColumns
from petricep.lang.ast import Strategy
from petricep.runtime import pickled
from petricep.runtime import report as reporting
from petricep.runtime.build import (
    MAX_PARTIAL_MATCHES,
    TIE_RULES,
    build_runtime,
    check_budget,
    check_program,
    check_spill,
    return_fns,
    specialize_runtime,
    timeout_fns,
)
from petricep.runtime.counters import MarkingCounters
from petricep.runtime.emission import Emitted, close_all, emit, emits
from petricep.runtime.expr import OVERFLOW_FLAG, as_condition, with_pattern
from petricep.runtime.firing import GroupRuntime, event_key
from petricep.runtime.housekeeping import due, held_bytes, sweep, watch
from petricep.runtime.match import Match
from petricep.runtime.memory import TOKEN_BYTES, check_size, event_bytes, memory_error
from petricep.runtime.ordering import EventTimeOrder, LateHandler
from petricep.runtime.rows import RowQueries, RowRuntime, RuntimeFactory
from petricep.runtime.spill import Spiller
from petricep.runtime.state import INF, Partition, RunState, RunStats, Token
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
        share_prefixes: bool = True,
        spill: Spiller | None = None,
        generated: bool = True,
        expiry_index: bool = True,
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

        ``share_prefixes=False``: partial matches copy their prefix (for comparison).

        ``generated=False``: run the interpreter instead of firing code generated per net
        (:mod:`petricep.runtime.codegen`; same results, for comparison).

        ``expiry_index=False``: every sweep visits every partition, instead of those whose
        earliest window has passed (same results, for comparison).

        ``max_partial_matches``: the budget of live partial matches per shared net; one
        more stops the run with :class:`~petricep.errors.StateLimitError` (None: no budget).
        ``max_memory``: the memory budget in bytes, estimated (:mod:`petricep.runtime.memory`:
        the live partial matches and the events a slack holds back); over it, the same error.

        ``row_runtime``: builds a SQL query's runtime (:class:`RowRuntime`; the compiled
        kernel's row matcher: :class:`petricep.kernel.rowengine.RowKernelEngine`)."""
        check_program(net, tie)
        self.net = net
        self.tie = tie
        self.rule = RULES[tie]  # the tie rule decides how an event fires, once, here (not per event)
        self.share_prefixes = share_prefixes
        self.generated = generated
        self.expiry_index = expiry_index
        self.sweep_every = sweep_every
        self.collect = collect
        self.spill = spill  # partial-match spilling under a memory budget (runtime/spill.py)
        stats = RunStats(matches={p.name: 0 for p in net.patterns})
        self.state = RunState(stats, INF if max_partial_matches is None else max_partial_matches)
        self.state.consumed = {p.conflict: {} for p in net.patterns if p.conflict}
        self.removed: set[int] = set()
        self.runtimes: list[GroupRuntime] = []
        self.consumers: dict[str, list[GroupRuntime]] = {}
        self.contiguous: list[GroupRuntime] = []
        self.timeout_fns: dict[int, list[tuple[str, Any]]] = {}
        self.rows = RowQueries(net.rows, stats.matches, row_runtime)  # SQL MATCH_RECOGNIZE queries (runtime/rows.py)
        for g in net.groups:
            self._add_net(g)
        group_of = {i: rt for rt in self.runtimes for i in rt.net.patterns}
        self.returns = [return_fns(p, group_of[p.index]) for p in net.patterns]
        self._settle_flags()
        # the run's marking per place and transition (runtime/counters.py): off unless asked
        self.state.counters = MarkingCounters(self.runtimes) if count_marking else None
        # collect=False: the patterns whose matches are only counted, index -> name
        self.counted: dict[int, str] = {}
        if not collect:
            self.counted = {p.index: p.name for p in net.patterns if not p.returns and not p.conflict}
        self.order = EventTimeOrder(slack, on_late) if slack is not None else None
        if spill is not None:
            check_spill(tie)
        if on_late is not None and slack is None:
            raise ConfigError("on_late needs a slack (events out of order by more than it are late)")
        self.max_partial_matches = check_budget(max_partial_matches)
        self.max_memory = check_size(max_memory)
        self.live_seen = 0  # the live partial matches at the last budget check
        self.event_size = 0  # a held event's bytes, measured at the last check of the slack
        self._held_at = 0 if self.max_memory is not None else INF  # the slack's next check
        if self.max_memory is not None:
            self.state.budget_at = min(self.state.budget_at, self.max_memory // TOKEN_BYTES)

    def _add_net(self, g: GroupNet) -> None:
        """Build a shared net's runtime (complete: its builder generates its firing code) and
        index it: by the event types it reads, and in the run state."""
        st = self.state
        rt = build_runtime(
            g, self.net.patterns, self.tie, self.share_prefixes, self.generated, self.spill is not None,
            st.stats.interpreted,
        )
        self.runtimes.append(rt)
        for t in sorted(g.input_types):
            self.consumers.setdefault(t, []).append(rt)
        if rt.contiguity:
            self.contiguous.append(rt)
        st.add_net(self.expiry_index and rt.indexed and self.spill is None)
        for pi in g.patterns:
            p = self.net.patterns[pi]
            st.stats.timeouts.setdefault(p.name, 0)
            st.stats.dropped.setdefault(p.name, 0)
            fns = timeout_fns(p, rt)
            if fns is not None:
                self.timeout_fns[pi] = fns

    def _settle_flags(self) -> None:
        """What the run's event-time duties are, decided once per net (and per extension)."""
        self.has_timeouts = any(r.timeout_mask for r in self.runtimes)
        # matches are only output: nothing derived from them, no consumption, no timeouts
        self.plain = not any(p.returns or p.conflict or p.timeout for p in self.net.patterns)
        # matches can wait for their window to close (end negations): stream time closes them
        waits = any(role.pending_negations for r in self.runtimes for roles in r.roles for role in roles)
        self.timed = self.has_timeouts or waits  # stream time closes something

    # ------------------------------------------------------------------ public API

    @property
    def stats(self) -> RunStats:
        """The run's counters (matches tallied by group are added up first)."""
        if self.state.tally:
            reporting.settle(self)
        return self.state.stats

    @property
    def row_runtimes(self) -> list[RowRuntime]:
        """The runtimes of the SQL queries (one per distinct query)."""
        return self.rows.runtimes

    def push(self, e: Event) -> list[Match]:
        """Process one input event; returns the matches it completes (or whose window it closes).

        With a slack, ``e`` may be out of time order: it is held until the watermark passes
        it, and the matches returned are those of the events released by its arrival."""
        if self.order is None:
            return self._push(e)
        out: list[Match] = []
        for x in self.order.offer(e):
            out += self._push_released(x)
        self.state.stats.late = self.order.late
        if self.order.held >= self._held_at:
            self._check_held(e)
        return out

    def _check_held(self, e: Event) -> None:
        """The events the slack holds back could have filled the memory budget's room: their
        bytes (``e``'s measured for each) with the partial matches', against the budget; the
        next check when the events held since could fill the room left (1/64 of it at least)."""
        budget = self.max_memory
        assert budget is not None and self.order is not None
        self.event_size = event_bytes(e)
        parts = held_bytes(self)
        used = sum(parts.values())
        if used > budget:
            raise memory_error(budget, parts, e.id)
        size = self.event_size
        self._held_at = self.order.held + max((budget - used) // size, budget // size // 64, 1)

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
        return self.rule.step(self, e)

    def advance(self, ts: Any, pos: int) -> list[Match]:
        """Stream time reached ``(ts, pos)`` with no event of ours there: close the windows it
        ends. A key partition of a distributed run calls this for other keys' events so that
        matches waiting on an end negation are emitted where the whole stream would emit them."""
        return self.rule.advance(self, Event(CLOCK, ts, pos))

    def flush(self, last: tuple[Any, int] | None = None) -> list[Match]:
        """End of stream: close every window still open and emit what survives.

        ``last``: (ts, pos) of the stream's last input event, when this engine did not see
        it (a key partition of a distributed run); composite events emitted here take it."""
        out: list[Match] = []
        if self.order is not None:
            for x in self.order.drain():
                out += self._push_released(x)
        out += self.rule.close(self)
        st = self.state
        emitter = st.last_input if last is None else Event(CLOCK, last[0], last[1])
        while any(st.pending) or any(st.deadlines) or st.group_events or st.group_emitted:
            if st.group_events or st.group_emitted:
                # (tie rule either) composite events emitted here form one more timestamp
                # group: close it
                out += self.rule.close(self)
                continue
            out += emit(self, close_all(self, emitter))
        out += self.rows.flush(st.stats.matches, self.collect)
        if emitter is not None:
            sweep(self, emitter, always=True)  # samples the peak once more
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
        """The run state as bytes (:mod:`petricep.runtime.pickled`)."""
        return pickled.dumps(self)

    def restore(self, data: bytes) -> None:
        """Put back a :meth:`snapshot` of an engine over the same net and tie rule."""
        pickled.restore(self, data)

    def extend(self, net: Net) -> None:
        """Run the patterns ``net`` adds to this engine's net (see
        :func:`petricep.merge.extend_net`). They see the events pushed from now on; the running
        patterns keep their partial matches."""
        old = self.net
        if net.patterns[: len(old.patterns)] != old.patterns or net.groups[: len(old.groups)] != old.groups:
            raise ConfigError("extend() needs the running net with patterns added (merge.extend_net)")
        self.net = net
        for g in net.groups[len(old.groups) :]:
            self._add_net(g)
        self._settle_flags()
        group_of = {i: rt for rt in self.runtimes for i in rt.net.patterns}
        stats = self.state.stats
        for pn in net.patterns[len(old.patterns) :]:
            self.returns.append(return_fns(pn, group_of[pn.index]))
            stats.matches[pn.name] = 0
            if pn.conflict is not None:
                self.state.consumed.setdefault(pn.conflict, {})

    def remove_pattern(self, name: str) -> None:
        """Stop a pattern on a running engine; the others keep their partial matches."""
        index = next((p.index for p in self.net.patterns if p.name == name and p.index not in self.removed), None)
        if index is None:
            raise ConfigError(f"no running pattern named {name!r}")
        self.removed.add(index)
        reporting.settle(self)  # role groups change: add up what they tallied
        self.state.count_only.clear()
        for rt in self.runtimes:
            if index in rt.net.patterns:
                if not rt.remove_pattern(index):
                    for consumers in self.consumers.values():
                        if rt in consumers:
                            consumers.remove(rt)
                specialize_runtime(rt, self.generated, self.state.stats.interpreted)

    @property
    def pattern_names(self) -> list[str]:
        """The patterns this engine runs now."""
        return [p.name for p in self.net.patterns if p.index not in self.removed] + [r.name for r in self.net.rows]

    def live_partial_matches(self) -> int:
        """Partial matches that can still be extended at the last event (0 after flush)."""
        return reporting.live_partial_matches(self)

    def live_by_pattern(self) -> dict[str, int]:
        """Live partial matches per pattern (a shared token counts for each pattern it serves)."""
        return reporting.live_by_pattern(self)

    def marking(self) -> tuple[dict[tuple[int, int], tuple[int, int]], dict[tuple[int, int], int]] | None:
        """The run's marking so far, ``({(group, place): (created, peak alive)}, {(group,
        transition): firings})``; None unless the engine was built with ``count_marking``."""
        return reporting.marking(self)

    def report(self, read: int | None = None, rejected: int = 0) -> dict[str, Any]:
        """The run's accounting: events read = processed + rejected + late; per pattern its
        matches, timeouts, partial matches dropped by a LIMIT and alive now. ``read`` /
        ``rejected``: the reader's counts (default: every event pushed was read)."""
        return reporting.report(self, read, rejected)

    def sweep(self, now: Event) -> None:
        """Drop the partial matches and negative events no window can use any more."""
        sweep(self, now, always=True)

    # ------------------------------------------------------------------ firing

    def _process(self, d: Event, composite: bool, emitted: list[Emitted]) -> None:
        """Fire ``d`` in every shared net that reads it, in its key's marking."""
        st = self.state
        st.seq += 1
        d.seq = st.seq
        etype = d.type
        parts = st.parts
        for rt in self.consumers.get(etype, ()):
            i = rt.net.index
            attr = rt.key_attr
            if attr is not None:  # one partition attribute (the common case), else the general path
                try:
                    key = d.attrs[attr]
                except KeyError:
                    key = self._key(rt, d)  # raises the located error
            else:
                key = self._key(rt, d)
            part = parts[i].get(key)
            if part is None:
                part = self._partition(i, rt, key)
            accepted = st.accepted
            step = rt.steps.get(etype)
            if step is None:
                step = rt.step  # interpreted (a configuration without generated code)
            try:
                created = step(part, d, rt.floor(part, st.last_input_key) if rt.contiguity else INF, composite, accepted)
            except EvaluationError as exc:
                raise self._placed(exc, rt) from None
            if created:
                stats = st.stats
                stats.created += len(created)
                if st.counters is not None:
                    st.counters.count(i, created)
                if accepted:
                    stats.completed += len(accepted)
                    st.accepted = []
                    for t in accepted:
                        self._accept(i, rt, part, t, d, emitted)
                first = rt.store(part, created)
                if first is not None and st.expiry[i] is not None:
                    due(st, i, part, first + rt.w)  # type: ignore[operator]  # indexed: windowed
                if rt.watch_mask:
                    watch(self, i, rt, part, created, d, key)
            if self.spill is not None:
                self.spill.touched(i, key, part)
            if etype in rt.negs_by_type:
                if st.expiry[i] is not None:  # it may be buffered until its window passes
                    due(st, i, part, (d.pos if rt.count_window else d.ts) + rt.w)  # type: ignore[operator]
                kill = self.rule.kill
                for j in rt.negative(part, d):
                    kill(self, rt, part, j, d)
        if not composite and self.contiguous:  # d is the last input event now, of the stream and of its key
            key = event_key(d, False)
            for rt in self.contiguous:
                if rt.net.partition and rt.strategy == Strategy.PARTITION and all(a in d.attrs for a in rt.net.partition):
                    self._partition(rt.net.index, rt, self._key(rt, d)).last_input_key = key
            st.last_input_key = key

    def _accept(
        self, i: int, rt: GroupRuntime, part: Partition, t: Token, emitter: Event, emitted: list[Emitted]
    ) -> None:
        """A token reached a place some patterns emit from: each checks and emits (patterns
        with the same checks — e.g. one query registered many times — check once)."""
        counted = self.counted
        st = self.state
        matches = st.stats.matches
        users = t.users
        bits = rt.bit
        for g, (mask, roles) in enumerate(rt.role_groups[t.place]):
            if users & mask and rt.emission_ok(part, t, roles[0]):
                if counted and len(roles) > 1 and self._tallied(i, t.place, g, users & mask, roles):
                    continue
                for role in roles:
                    if users & bits[role.pattern]:
                        name = counted.get(role.pattern)
                        if name is not None and not role.pending_negations:
                            matches[name] += 1  # collect=False: nothing depends on this match
                        else:
                            emits(self, i, rt, part, t, role, emitter, emitted)

    def _tallied(self, i: int, place: int, g: int, users: int, roles: tuple[Role, ...]) -> bool:
        """collect=False: a group of counted patterns (e.g. one query registered many times)
        counts a token once, in a tally (added up when stats are read)."""
        st = self.state
        group = (i, place, g)
        only = st.count_only.get(group)
        if only is None:
            only = st.count_only[group] = all(r.pattern in self.counted and not r.pending_negations for r in roles)
        if only:
            k = (group, users)
            st.tally[k] = st.tally.get(k, 0) + 1
        return only

    def _next_seq(self) -> int:
        self.state.seq += 1
        return self.state.seq

    def _key(self, rt: GroupRuntime, e: Event) -> Any:
        attrs = rt.net.partition
        if not attrs:
            return None
        try:
            if len(attrs) == 1:
                return e.attrs[attrs[0]]
            return tuple(e.attrs[a] for a in attrs)
        except KeyError as err:
            raise EvaluationError(
                f"event {e.id!r} (type {e.type!r}) has no field {err.args[0]!r}, needed by [{err.args[0]}]"
            ) from None

    def _partition(self, i: int, rt: GroupRuntime, key: Any) -> Partition:
        parts = self.state.parts[i]
        part = parts.get(key)
        if part is None:
            if self.spill is not None and (i, key) in self.spill.spilled:
                part = self.spill.read(i, key)  # a miss: the key's partial matches come back
                assert part is not None
                parts[key] = part
            else:
                part = parts[key] = rt.new_partition()
                part.key = key
        return part

    def _placed(self, exc: EvaluationError, rt: GroupRuntime) -> EvaluationError:
        """A number overflow raised while firing ``rt``'s net, with the patterns it serves."""
        if not getattr(exc, OVERFLOW_FLAG, False):
            return exc
        names = ", ".join(repr(self.net.patterns[pi].name) for pi in rt.net.patterns if pi not in self.removed)
        return with_pattern(exc, f"pattern {names}")


__all__ = ["MAX_PARTIAL_MATCHES", "TIE_RULES", "Engine", "Match", "RunStats", "as_condition"]
