"""The embedded engine: one shared net, per-key markings, events in, matches out.

Events are pushed in stream order. Each is routed, by type, to the input places of
every pattern that reads it and, by the pattern's ``[attr]`` key, to that key's
marking. Matches of patterns with RETURN become composite events that re-enter the
loop right after the event that produced them.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from itertools import chain
from operator import attrgetter
from typing import Any

from petricep.compile.net import Net, PatternNet, Role
from petricep.errors import ConfigError, EvaluationError, EventOrderError, StateLimitError
from petricep.events import Event
from petricep.lang.ast import Strategy
from petricep.runtime.codegen import specialize, specialize_fires
from petricep.runtime.counters import MarkingCounters
from petricep.runtime.expr import OVERFLOW_FLAG, Missing, Skip, as_condition, compile_expr
from petricep.runtime.firing import GroupRuntime, event_key
from petricep.runtime.limits import LimitSpec, admit, age
from petricep.runtime.match import Match
from petricep.runtime.ordering import EventTimeOrder, LateHandler
from petricep.runtime.rows import RowRuntime
from petricep.runtime.spill import PlaceStats, Spiller, expiry
from petricep.runtime.state import INF, Partition, Token

TIE_RULES = ("arrival", "strict", "either")
# the default memory budget: live partial matches one shared net may hold (docs/SEMANTICS.md
# "Memory budget"); a few GB of tokens, above every shipped workload's peak
MAX_PARTIAL_MATCHES = 5_000_000
CLOCK = "\x00clock"  # type of the pseudo-event advance() and flush() use as emitter


_MARKING = attrgetter("marking")


class Expiry:
    """How a timed-out partial match is emitted: its pattern and when its window closed."""

    __slots__ = ("pattern", "deadline")

    def __init__(self, pattern: int, deadline: Any) -> None:
        self.pattern = pattern
        self.deadline = deadline


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
    peak_partial: int = 0  # most live partial matches seen, sampled at every sweep
    # where the generated firing code could not be compiled and the interpreter runs
    # instead ("net N, type 'T'" -> the compiler's reason); decided when the net is built
    interpreted: dict[str, str] = field(default_factory=dict)


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

        ``max_partial_matches``: the memory budget, live partial matches per shared net; one
        more stops the run with :class:`~petricep.errors.StateLimitError` (None: no budget)."""
        _check_program(net, tie)
        self.net = net
        self.tie = tie
        # the tie rule decides how an event fires, once, here (not per event)
        self._step = self._step_either if tie == "either" else self._step_in_order
        self._strict = tie == "strict"
        self.share_prefixes = share_prefixes
        self.runtimes = [GroupRuntime(g, tie, share_prefixes) for g in net.groups]
        # the run's marking per place and transition (runtime/counters.py): off unless asked
        self.counters = MarkingCounters(self.runtimes) if count_marking else None
        self.consumers: dict[str, list[GroupRuntime]] = {}
        for rt in self.runtimes:
            for t in sorted(rt.net.input_types):
                self.consumers.setdefault(t, []).append(rt)
        self.contiguous = [rt for rt in self.runtimes if rt.contiguity]
        self.states: list[dict[Any, Partition]] = [{} for _ in self.runtimes]
        self.pending: list[list[tuple[Any, int, Partition, Token, Role]]] = [[] for _ in self.runtimes]
        group_of = {i: rt for rt in self.runtimes for i in rt.net.patterns}
        self.returns = [self._return_fns(p, group_of[p.index]) for p in net.patterns]
        self.removed: set[int] = set()
        # consumption: domain -> {event seq: ts} of the events consumed there
        self.consumed: dict[str, dict[int, Any]] = {p.conflict: {} for p in net.patterns if p.conflict}
        self._stats = RunStats(matches={p.name: 0 for p in net.patterns})
        self._init_duties(net)
        self.sweep_every = sweep_every
        self.collect = collect
        self._counted: dict[int, str] = {}
        if not collect:
            self._counted = {p.index: p.name for p in net.patterns if not p.returns and not p.conflict}
        self._init_progress()
        self.order = EventTimeOrder(slack, on_late) if slack is not None else None
        # partial-match spilling under a memory budget (runtime/spill.py)
        self.spill = spill
        if spill is not None:
            self._init_spill(tie)
        self.generated = generated
        self.expiry_index = expiry_index
        for rt in self.runtimes:
            self._specialize(rt)
        # the expiry index, per runtime: a heap of (due, n, partition), so that a sweep
        # visits only the partitions with something to drop (None: sweep every partition)
        self.expiry: list[list[tuple[Any, int, Partition]] | None] = [self._expiry_heap(rt) for rt in self.runtimes]

        if on_late is not None and slack is None:
            raise ConfigError("on_late needs a slack (events out of order by more than it are late)")
        self.max_partial_matches = _budget(max_partial_matches)
        # the budget is checked when stats.created reaches this (never, without a budget)
        self._budget_at: float = INF if max_partial_matches is None else max_partial_matches

    def _init_duties(self, net: Net) -> None:
        """SQL queries' runtimes, and each shared net's event-time duties (timeouts, limits)."""
        self.row_runtimes: list[Any] = []  # SQL MATCH_RECOGNIZE queries (petricep.runtime.rows)
        self.row_consumers: dict[str | None, list[Any]] = {}
        if net.rows:
            self._add_row_runtimes(net)
        # ON TIMEOUT: per runtime, heap of (deadline, n, partition, token, pattern index)
        self.deadlines: list[list[tuple[Any, int, Partition, Token, int]]] = [[] for _ in self.runtimes]
        self.timeout_fns: dict[int, list[tuple[str, Any]]] = {}
        self._timeouts = False
        self._waits = False
        self._plain = True
        for rt in self.runtimes:
            self._configure(rt)

    def _init_progress(self) -> None:
        """The run's moving parts: sequence numbers, the last input, the open timestamp group."""
        self._seq = 0
        self._counter = 0
        self._last_input: Event | None = None
        self._last_input_key: float = -INF  # maintained only while a contiguity pattern runs
        self._accepted: list[Token] = []  # reused per step: tokens that reached an emitting place
        # collect=False: matches of a group of counted patterns (same checks, one place) are
        # tallied per (group, patterns) and added to stats.matches when stats are read
        self._tally: dict[tuple[tuple[int, int, int], int], int] = {}
        self._count_only: dict[tuple[int, int, int], bool] = {}
        self._group_ts: Any = None
        self._group_kills: list[tuple[GroupRuntime, Partition, int, Event]] = []
        self._group_events: list[Event] = []
        self._group_emitted: list[tuple[GroupRuntime, Role, Token, Event]] = []
        self._group_clocks: list[Event] = []  # advance() points inside the open timestamp group
        self._since_sweep = 0

    def _init_spill(self, tie: str) -> None:
        if tie != "arrival":
            raise ConfigError("spilling partial matches needs the arrival tie rule")
        for rt in self.runtimes:
            rt.place_stats = PlaceStats(len(rt.net.places))

    # ------------------------------------------------------------------ public API

    @property
    def stats(self) -> RunStats:
        """The run's counters (matches tallied by group are added up first)."""
        if self._tally:
            self._settle()
        return self._stats

    def _settle(self) -> None:
        matches = self._stats.matches
        for ((i, place, g), users), n in self._tally.items():
            rt = self.runtimes[i]
            for role in rt.role_groups[place][g][1]:
                if users & rt.bit[role.pattern]:
                    matches[self._counted[role.pattern]] += n
        self._tally.clear()

    def push(self, e: Event) -> list[Match]:
        """Process one input event; returns the matches it completes (or whose window it closes).

        With a slack, ``e`` may be out of time order: it is held until the watermark passes
        it, and the matches returned are those of the events released by its arrival."""
        if self.order is None:
            return self._push(e)
        out: list[Match] = []
        for x in self.order.offer(e):
            out += self._push_released(x)
        self._stats.late = self.order.late
        return out

    def _push_released(self, x: Event) -> list[Match]:
        try:
            return self._push(x)
        except EvaluationError as exc:
            exc.event = x  # type: ignore[attr-defined]  # the event that failed, not the one arriving
            raise

    def _push(self, e: Event) -> list[Match]:
        last = self._last_input
        if last is not None and e.ts < last.ts:
            raise EventOrderError(
                f"timestamp {e.ts} is before the previous event's {last.ts} (input must be in time order)", row=e.pos
            )
        self._stats.events += 1
        return self._step(e)

    def _step_either(self, e: Event) -> list[Match]:
        """Tie rule either: ``e`` joins its timestamp group, which is matched as a whole
        (every order of its events) when the next timestamp arrives."""
        emitted: list[tuple[GroupRuntime, Role, Token, Event]] = []
        out = self._run_group() if self._group_ts is not None and e.ts != self._group_ts else []
        self._group_ts = e.ts
        self._close_pending(e, emitted)
        self._group_emitted.extend(emitted)
        e.seq = self._next_seq()
        self._group_events.append(e)
        self._last_input = e
        if self.row_runtimes:
            out += self._push_rows(e)
        return out

    def _step_in_order(self, e: Event) -> list[Match]:
        """Tie rules arrival and strict: ``e`` fires now (strict: a new timestamp first ends
        the group of equal timestamps before it)."""
        emitted: list[tuple[GroupRuntime, Role, Token, Event]] = []
        if self._strict and e.ts != self._group_ts:
            self._end_group()
            self._group_ts = e.ts
        if self._timeouts or self._waits:
            self._close_pending(e, emitted)
        self._last_input = e
        self._process(e, False, emitted)
        out = self._emit(emitted) if emitted else []
        if self.row_runtimes:
            out += self._push_rows(e)
        self._since_sweep += 1
        if self._since_sweep >= self.sweep_every:
            self.sweep(e)
        if self._stats.created >= self._budget_at:
            self._check_budget(e)
        if self.spill is not None and self.spill.over():
            self._spill_out()
        return out

    def _check_budget(self, now: Event) -> None:
        """More partial matches were created since the last check than the budget had room
        for: sweep, so that the count is exact, and stop the run if a net is over budget.
        Otherwise the next check comes when the creations since could have filled the room
        left (at least 1/64 of the budget, so that a run near it does not sweep per event)."""
        budget = self.max_partial_matches
        assert budget is not None
        self.sweep(now)
        live = [sum(len(tokens) for part in states.values() for tokens in part.marking) for states in self.states]
        most = max(live, default=0)
        if most > budget:
            i = live.index(most)
            raise self._over_budget(self.runtimes[i], self.states[i], most, budget, now)
        self._budget_at = self._stats.created + max(budget - most, budget // 64, 1)

    def _over_budget(
        self, rt: GroupRuntime, states: dict[Any, Partition], live: int, budget: int, now: Event
    ) -> StateLimitError:
        """The error naming the net's pattern and the key holding most of its partial matches."""
        key, part = max(states.items(), key=lambda kv: sum(map(len, kv[1].marking)))
        per_pattern = {pi: 0 for pi in rt.net.patterns if pi not in self.removed}
        for tokens in part.marking:
            for t in tokens:
                for pi in per_pattern:
                    if t.users & rt.bit[pi]:
                        per_pattern[pi] += 1
        pi = max(per_pattern, key=lambda p: per_pattern[p])
        shown = repr(key) if len(repr(key)) <= 80 else repr(key)[:77] + "..."
        return StateLimitError(
            f"pattern {self.net.patterns[pi].name!r}: {live} live partial matches, over the run's budget of "
            f"{budget} (key {shown} holds {sum(map(len, part.marking))}) at event {now.id!r}; bound the pattern "
            f"with LIMIT n PARTIAL MATCHES, or raise the budget (--max-partial-matches N, Engine(max_partial_matches=N))"
        )

    def _spill_out(self) -> None:
        """Over the memory budget: write out the keys the policy finds most expendable
        (only keys nothing outside their marking refers to)."""
        spill = self.spill
        assert spill is not None
        candidates = []
        for i, (rt, states) in enumerate(zip(self.runtimes, self.states)):
            if rt.watch_mask:
                continue
            for key, part in states.items():
                if not part.pending:
                    candidates.append((i, key, part))
        now = self._last_input.ts if self._last_input is not None else 0
        for i, key in spill.choose(candidates, [rt.place_stats for rt in self.runtimes], now):
            rt = self.runtimes[i]
            part = self.states[i].pop(key)
            spill.write(i, key, part, INF if rt.count_window else expiry(part, rt.w))

    def advance(self, ts: Any, pos: int) -> list[Match]:
        """Stream time reached ``(ts, pos)`` with no event of ours there: close the windows it
        ends. A key partition of a distributed run calls this for other keys' events so that
        matches waiting on an end negation are emitted where the whole stream would emit them."""
        clock = Event(CLOCK, ts, pos)
        emitted: list[tuple[GroupRuntime, Role, Token, Event]] = []
        if self.tie == "either":
            out = self._run_group() if self._group_ts is not None and ts != self._group_ts else []
            self._group_ts = ts
            self._close_pending(clock, emitted)
            self._group_emitted.extend(emitted)
            self._group_clocks.append(clock)  # may close windows of matches the group finds
            return out + self._expire_rows(ts, pos) if self.row_runtimes else out
        if self.tie == "strict" and ts != self._group_ts:
            self._end_group()
            self._group_ts = ts
        self._close_pending(clock, emitted)
        out = self._emit(emitted)
        return out + self._expire_rows(ts, pos) if self.row_runtimes else out

    def flush(self, last: tuple[Any, int] | None = None) -> list[Match]:
        """End of stream: close every window still open and emit what survives.

        ``last``: (ts, pos) of the stream's last input event, when this engine did not see
        it (a key partition of a distributed run); composite events emitted here take it."""
        out: list[Match] = []
        if self.order is not None:
            for x in self.order.drain():
                out += self._push_released(x)
        if self.tie == "either":
            out += self._run_group()
        else:
            self._end_group()
        emitter = self._last_input if last is None else Event(CLOCK, last[0], last[1])
        while any(self.pending) or any(self.deadlines) or self._group_events or self._group_emitted:
            if self.tie == "either" and (self._group_events or self._group_emitted):
                # composite events emitted here form one more timestamp group: close it
                out += self._run_group()
                continue
            emitted: list[tuple[GroupRuntime, Any, Token, Event]] = []
            for i, heap in enumerate(self.pending):
                rt = self.runtimes[i]
                while heap:
                    _, _, _part, t, role = heapq.heappop(heap)
                    if t.alive:
                        emitted.append((rt, role, t, emitter or t.event))  # type: ignore[arg-type]
            for i, deadlines in enumerate(self.deadlines):
                rt = self.runtimes[i]
                while deadlines:
                    self._expire(rt, heapq.heappop(deadlines), emitter, emitted)  # type: ignore[arg-type]
            out += self._emit(emitted)
        for rrt in self.row_runtimes:
            out += self._count_rows(rrt, self._row_call(rrt, rrt.flush))
        if emitter is not None:
            self.sweep(emitter)  # samples the peak once more
        for states in self.states:  # every window has closed: no partial match is left
            states.clear()
        for index in self.expiry:
            if index is not None:
                index.clear()
        return out

    def run(self, events: Iterable[Event]) -> Iterator[Match]:
        for e in events:
            yield from self.push(e)
        yield from self.flush()

    def extend(self, net: Net) -> None:
        """Run the patterns ``net`` adds to this engine's net (see
        :func:`petricep.merge.extend_net`). They see the events pushed from now on; the running
        patterns keep their partial matches."""
        old = self.net
        if net.patterns[: len(old.patterns)] != old.patterns or net.groups[: len(old.groups)] != old.groups:
            raise ConfigError("extend() needs the running net with patterns added (merge.extend_net)")
        self.net = net
        for g in net.groups[len(old.groups) :]:
            rt = GroupRuntime(g, self.tie, self.share_prefixes)
            self.runtimes.append(rt)
            for t in sorted(g.input_types):
                self.consumers.setdefault(t, []).append(rt)
            if rt.contiguity:
                self.contiguous.append(rt)
            self.states.append({})
            self.pending.append([])
            self.deadlines.append([])
        group_of = {i: rt for rt in self.runtimes for i in rt.net.patterns}
        for rt in self.runtimes[len(old.groups) :]:
            self._configure(rt)
            self._specialize(rt)
            self.expiry.append(self._expiry_heap(rt))
        for pn in net.patterns[len(old.patterns) :]:
            self.returns.append(self._return_fns(pn, group_of[pn.index]))
            self._stats.matches[pn.name] = 0
            if pn.conflict is not None:
                self.consumed.setdefault(pn.conflict, {})

    def remove_pattern(self, name: str) -> None:
        """Stop a pattern on a running engine; the others keep their partial matches."""
        index = next((p.index for p in self.net.patterns if p.name == name and p.index not in self.removed), None)
        if index is None:
            raise ConfigError(f"no running pattern named {name!r}")
        self.removed.add(index)
        self._settle()  # role groups change: add up what they tallied
        self._count_only.clear()
        for rt in self.runtimes:
            if index in rt.net.patterns:
                if not rt.remove_pattern(index):
                    for consumers in self.consumers.values():
                        if rt in consumers:
                            consumers.remove(rt)
                self._specialize(rt)

    @property
    def pattern_names(self) -> list[str]:
        """The patterns this engine runs now."""
        return [p.name for p in self.net.patterns if p.index not in self.removed] + [r.name for r in self.net.rows]

    def live_partial_matches(self) -> int:
        """Partial matches that can still be extended at the last event (0 after flush)."""
        rows = sum(r.live() for r in self.row_runtimes)
        return rows + sum(1 for _ in self._live_tokens())

    def _live_tokens(self) -> Iterator[tuple[GroupRuntime, Token]]:
        now = self._last_input
        for rt, states in zip(self.runtimes, self.states):
            for part in states.values():
                floor = self._floor(rt, part)
                for tokens in part.marking:
                    for t in tokens:
                        if not t.alive or not t.users or (now is not None and rt.expired(t, now)):
                            continue
                        if rt.contiguity and t.last_key < floor:
                            continue
                        yield rt, t

    # ------------------------------------------------------------------ SQL row patterns

    def _add_row_runtimes(self, net: Net) -> None:
        """One runtime per distinct query: queries equal but for their name share it (and
        its partial matches), each name getting the matches."""
        by_source: dict[Any, Any] = {}
        for rn in net.rows:
            self._stats.matches[rn.name] = 0
            key = replace(rn.source, name="")
            rrt = by_source.get(key)
            if rrt is None:
                rrt = by_source[key] = RowRuntime(rn)
                self.row_runtimes.append(rrt)
                self.row_consumers.setdefault(rn.table, []).append(rrt)
            else:
                rrt.aliases.append(rn.name)

    def _push_rows(self, e: Event) -> list[Match]:
        out = self._expire_rows(e.ts, e.pos)
        for table in (e.type, None):
            for rrt in self.row_consumers.get(table, ()):
                out += self._count_rows(rrt, self._row_call(rrt, rrt.push, e))
        return out

    def _expire_rows(self, ts: Any, pos: int) -> list[Match]:
        """Queries with WITHIN decide the searches stream time has closed (see RowRuntime.expire)."""
        out: list[Match] = []
        for rrt in self.row_runtimes:
            if rrt.closing:
                out += self._count_rows(rrt, self._row_call(rrt, rrt.expire, ts, pos))
        return out

    @staticmethod
    def _row_call(rrt: Any, fn: Any, *args: Any) -> list[Match]:
        """``fn(*args)`` of a SQL query's runtime; a number overflow names the query."""
        try:
            return fn(*args)  # type: ignore[no-any-return]
        except EvaluationError as exc:
            if getattr(exc, OVERFLOW_FLAG, False):
                raise _with_pattern(exc, f"query {rrt.name!r}") from None
            raise

    def _count_rows(self, rrt: Any, found: list[Match]) -> list[Match]:
        if not found:
            return found
        for name in (rrt.name, *rrt.aliases):
            self._stats.matches[name] = rrt.matches
        return rrt.with_aliases(found) if self.collect else []

    def sweep(self, now: Event) -> None:
        self._since_sweep = 0
        for domain, consumed in self.consumed.items():
            windows = [p.window_value for p in self.net.patterns if p.conflict == domain]
            if consumed and all(w is not None for w in windows) and all(
                p.window and p.window.kind != "count" for p in self.net.patterns if p.conflict == domain
            ):
                horizon = now.ts - max(w for w in windows if w is not None)
                for seq in [s for s, ts in consumed.items() if ts < horizon]:
                    del consumed[seq]
        for i, (rt, states) in enumerate(zip(self.runtimes, self.states)):
            heap = self.expiry[i]
            if heap is not None:
                self._sweep_due(rt, states, heap, now)
                continue
            dead = []
            for key, part in states.items():
                rt.sweep(part, now, self._floor(rt, part))
                if part.empty():
                    dead.append(key)
            for key in dead:
                del states[key]
                if self.spill is not None:
                    self.spill.touched(i, key, Partition(0, 0))
        if self.spill is not None:
            self.spill.forget_expired(now.ts)
            for i, states in enumerate(self.states):
                for key, part in states.items():
                    self.spill.touched(i, key, part)
        # what the sweep left is exactly the live partial matches: sample their peak
        live = sum(sum(map(len, chain.from_iterable(map(_MARKING, states.values())))) for states in self.states)
        live += sum(r.live() for r in self.row_runtimes)
        if live > self._stats.peak_partial:
            self._stats.peak_partial = live
        if self.counters is not None:
            self.counters.sample(self.states)

    def _sweep_due(
        self,
        rt: GroupRuntime, states: dict[Any, Partition], heap: list[tuple[Any, int, Partition]], now: Event
    ) -> None:
        """Sweep the partitions whose earliest window has passed, in order of it; the others
        hold nothing a sweep would drop."""
        count = rt.count_window
        limit = now.pos if count else now.ts
        while heap:
            due = heap[0][0]
            if (due > limit) if count else (due >= limit):
                break
            _, _, part = heapq.heappop(heap)
            if part.due != due or states.get(part.key) is not part:
                continue  # stale: swept since, or a partition no longer held
            rt.sweep(part, now, INF)
            if part.empty():
                del states[part.key]
                part.due = INF
                continue
            part.due = INF
            self._due(rt.net.index, part, rt.due(part))

    def live_by_pattern(self) -> dict[str, int]:
        """Live partial matches per pattern (a shared token counts for each pattern it serves)."""
        out = {p.name: 0 for p in self.net.patterns if p.index not in self.removed}
        for rt, t in self._live_tokens():
            for pi, bit in rt.bit.items():
                if t.users & bit and pi not in self.removed:
                    out[self.net.patterns[pi].name] += 1
        for r in self.row_runtimes:
            for name in (r.name, *r.aliases):
                out[name] = r.live()
        return out

    def marking(self) -> tuple[dict[tuple[int, int], tuple[int, int]], dict[tuple[int, int], int]] | None:
        """The run's marking so far, ``({(group, place): (created, peak alive)}, {(group,
        transition): firings})``; None unless the engine was built with ``count_marking``."""
        if self.counters is None:
            return None
        self.counters.sample(self.states)  # the end of the input is a moment too
        return self.counters.places(), self.counters.transitions()

    def report(self, read: int | None = None, rejected: int = 0) -> dict[str, Any]:
        """The run's accounting: events read = processed + rejected + late; per pattern its
        matches, timeouts, partial matches dropped by a LIMIT and alive now. ``read`` /
        ``rejected``: the reader's counts (default: every event pushed was read)."""
        st = self.stats
        processed = st.events + (self.order.held if self.order is not None else 0)
        alive = self.live_by_pattern()
        report: dict[str, Any] = {
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
                "alive": self.live_partial_matches(),
                "peak": st.peak_partial,
                "dropped": sum(st.dropped.values()),
            },
        }
        if st.interpreted:  # nets too large for generated code: the interpreter ran them
            report["interpreted"] = dict(st.interpreted)
        for rrt in self.row_runtimes:  # SQL queries: how many rows of their table they read
            for name in (rrt.name, *rrt.aliases):
                report["patterns"][name].update(rows=rrt.rows_seen, table=rrt.net.table)
        return report

    # ------------------------------------------------------------------ internals

    def _configure(self, rt: GroupRuntime) -> None:
        """Event-time duties of a shared net's patterns: timeouts and limits."""
        for pi in rt.net.patterns:
            p = self.net.patterns[pi]
            self._stats.timeouts.setdefault(p.name, 0)
            self._stats.dropped.setdefault(p.name, 0)
            if p.timeout is not None:
                rt.timeout_mask |= rt.bit[pi]
                names = {v.name: v.slot for v in p.vars}
                kleene = {v.name: rt.kinfo[v.slot] for v in p.vars if v.kleene}
                self.timeout_fns[pi] = [
                    (f.name, as_condition_free(compile_expr(f.expr, names, kleene, None))) for f in p.timeout.fields
                ]
            if p.limit is not None:
                rt.limits.append(
                    LimitSpec(pi, p.name, rt.bit[pi], p.limit.count, p.limit.policy, p.window_value, rt.count_window)
                )
                rt.limit_mask |= rt.bit[pi]
        rt.watch_mask = rt.timeout_mask | rt.limit_mask
        self._timeouts = any(r.timeout_mask for r in self.runtimes)
        # matches are only output: nothing derived from them, no consumption, no timeouts
        self._plain = not any(p.returns or p.conflict or p.timeout for p in self.net.patterns)
        # matches can wait for their window to close (end negations): stream time closes them
        self._waits = any(role.pending_negations for r in self.runtimes for roles in r.roles for role in roles)

    def _expiry_heap(self, rt: GroupRuntime) -> list[tuple[Any, int, Partition]] | None:
        return [] if self.expiry_index and rt.indexed and self.spill is None else None

    def _due(self, i: int, part: Partition, due: Any) -> None:
        """Something in ``part`` may be dropped once the stream passes ``due``: index it."""
        if due < part.due:
            part.due = due
            self._counter += 1
            heapq.heappush(self.expiry[i], (due, self._counter, part))  # type: ignore[arg-type]

    def _placed(self, exc: EvaluationError, rt: GroupRuntime) -> EvaluationError:
        """A number overflow raised while firing ``rt``'s net, with the patterns it serves."""
        if not getattr(exc, OVERFLOW_FLAG, False):
            return exc
        names = ", ".join(repr(self.net.patterns[pi].name) for pi in rt.net.patterns if pi not in self.removed)
        return _with_pattern(exc, f"pattern {names}")

    def _specialize(self, rt: GroupRuntime) -> None:
        """Generate the net's firing code, now that its configuration is complete."""
        fallbacks = self._stats.interpreted
        for where in [w for w in fallbacks if w.startswith(f"net {rt.net.index},")]:
            del fallbacks[where]
        rt.steps = specialize(rt, fallbacks) if self.generated else {}
        rt.fires = specialize_fires(rt, fallbacks) if self.generated and self.tie == "either" else {}

    def _watch(self, i: int, rt: GroupRuntime, part: Partition, created: list[Token], now: Event, key: Any) -> None:
        """New partial matches just stored: watch their windows (ON TIMEOUT) and count them
        against their patterns' limits."""
        places = rt.places
        limited: list[tuple[tuple[Any, ...], Token, int]] = []
        for nt in created:
            if not places[nt.place].has_exits:
                continue
            going_on = nt.users & rt.exit_bits[nt.place]  # patterns for which nt is a partial match
            if going_on & rt.limit_mask:
                limited.append((age(nt), nt, going_on))
            waiting = going_on & rt.timeout_mask & ~rt.emit_bits[nt.place]  # not complete here
            if waiting:
                for pi, bit in rt.bit.items():
                    if waiting & bit:
                        w = self.net.patterns[pi].window_value
                        assert w is not None  # ON TIMEOUT needs a window (checked)
                        deadline = nt.first_pos + w if rt.count_window else nt.first_ts + w
                        self._counter += 1
                        heapq.heappush(self.deadlines[i], (deadline, self._counter, part, nt, pi))
        if limited:
            # oldest first, so that the outcome does not depend on the order the shared net
            # happened to create them in
            limited.sort(key=lambda x: x[0])
            broken = None
            if rt.contiguity:
                floor = self._floor(rt, part)
                broken = lambda t: t.last_key < floor  # noqa: E731
            for order, nt, going_on in limited:
                admit(part, nt, going_on, order, now, rt.limits, broken, key, self._stats.dropped)

    def _expire(
        self,
        rt: GroupRuntime,
        entry: tuple[Any, int, Partition, Token, int],
        emitter: Event,
        emitted: list[tuple[GroupRuntime, Any, Token, Event]],
    ) -> None:
        """A partial match's window closed: a timeout if it is still alive for the pattern,
        never extended, not blocked by a negation, and (contiguity) not interrupted."""
        deadline, _, part, t, pi = entry
        bit = rt.bit[pi]
        if not t.alive or not t.users & bit or getattr(t, "extended", 0) & bit or t.blocked or pi in self.removed:
            return
        if rt.contiguity and t.last_key < self._floor(rt, part):
            return
        emitted.append((rt, Expiry(pi, deadline), t, emitter))

    # ------------------------------------------------------------------ internals (firing)

    @staticmethod
    def _return_fns(p: PatternNet, rt: GroupRuntime) -> list[tuple[str, Any]]:
        """RETURN expressions compiled against the shared net's slot layout."""
        if not p.returns:
            return []
        names = {v.name: v.slot for v in p.vars}
        kleene = {v.name: rt.kinfo[v.slot] for v in p.vars if v.kleene}
        return [(f.name, as_condition_free(compile_expr(f.expr, names, kleene, None))) for f in p.returns.fields]

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

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
        states = self.states[i]
        part = states.get(key)
        if part is None:
            if self.spill is not None and (i, key) in self.spill.spilled:
                part = self.spill.read(i, key)  # a miss: the key's partial matches come back
                assert part is not None
                states[key] = part
            else:
                part = states[key] = rt.new_partition()
                part.key = key
        return part

    def _floor(self, rt: GroupRuntime, part: Partition) -> float:
        if rt.strategy == Strategy.STRICT or not rt.net.partition:
            return self._last_input_key
        return part.last_input_key

    def _process(self, d: Event, composite: bool, emitted: list[tuple[GroupRuntime, Role, Token, Event]]) -> None:
        self._seq += 1
        d.seq = self._seq
        etype = d.type
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
            part = self.states[i].get(key)
            if part is None:
                part = self._partition(i, rt, key)
            accepted = self._accepted
            step = rt.steps.get(etype)
            if step is None:
                step = rt.step  # interpreted (a configuration without generated code)
            try:
                created = step(part, d, self._floor(rt, part) if rt.contiguity else INF, composite, accepted)
            except EvaluationError as exc:
                raise self._placed(exc, rt) from None
            if created:
                self._stats.created += len(created)
                if self.counters is not None:
                    self.counters.count(i, created)
                if accepted:
                    self._stats.completed += len(accepted)
                    self._accepted = []
                    for t in accepted:
                        self._accept(i, rt, part, t, d, emitted)
                first = rt.store(part, created)
                if first is not None and self.expiry[i] is not None:
                    self._due(i, part, first + rt.w)  # type: ignore[operator]  # indexed: windowed
                if rt.watch_mask:
                    self._watch(i, rt, part, created, d, key)
            if self.spill is not None:
                self.spill.touched(i, key, part)
            if etype in rt.negs_by_type:
                if self.expiry[i] is not None:  # it may be buffered until its window passes
                    self._due(i, part, (d.pos if rt.count_window else d.ts) + rt.w)  # type: ignore[operator]
                for j in rt.negative(part, d):
                    if self.tie == "arrival":
                        rt.cancel(part, j, d)
                    else:
                        self._group_kills.append((rt, part, j, d))
        if not composite and self.contiguous:
            key = event_key(d, False)
            for rt in self.contiguous:
                if (
                    rt.net.partition
                    and rt.strategy == Strategy.PARTITION
                    and all(a in d.attrs for a in rt.net.partition)
                ):
                    self._partition(rt.net.index, rt, self._key(rt, d)).last_input_key = key
            self._last_input_key = key

    def _accept(
        self,
        i: int,
        rt: GroupRuntime,
        part: Partition,
        t: Token,
        emitter: Event,
        emitted: list[tuple[GroupRuntime, Role, Token, Event]],
    ) -> None:
        """A token reached a place some patterns emit from: each checks and emits (patterns
        with the same checks — e.g. one query registered many times — check once)."""
        counted = self._counted
        matches = self._stats.matches
        users = t.users
        bits = rt.bit
        for g, (mask, roles) in enumerate(rt.role_groups[t.place]):
            if users & mask and rt.emission_ok(part, t, roles[0]):
                if counted and len(roles) > 1:
                    group = (i, t.place, g)
                    only = self._count_only.get(group)
                    if only is None:
                        only = self._count_only[group] = all(
                            r.pattern in counted and not r.pending_negations for r in roles
                        )
                    if only:  # e.g. one query registered many times: one tally per token
                        k = (group, users & mask)
                        self._tally[k] = self._tally.get(k, 0) + 1
                        continue
                for role in roles:
                    if users & bits[role.pattern]:
                        name = counted.get(role.pattern)
                        if name is not None and not role.pending_negations:
                            matches[name] += 1  # collect=False: nothing depends on this match
                        else:
                            self._emits(i, rt, part, t, role, emitter, emitted)

    def _emits(
        self,
        i: int,
        rt: GroupRuntime,
        part: Partition,
        t: Token,
        role: Role,
        emitter: Event,
        emitted: list[tuple[GroupRuntime, Role, Token, Event]],
    ) -> None:
        """Pattern ``role.pattern`` emits ``t`` (its checks passed): now, or when its window
        closes (end negations). Matches only counted are counted by the caller."""
        if role.pending_negations:
            w = role.window
            if w is None:
                threshold: Any = INF
            elif rt.count_window:
                threshold = t.first_pos + w
            else:
                threshold = t.first_ts + w
            waiting = t.detached()
            self._counter += 1
            heapq.heappush(self.pending[i], (threshold, self._counter, part, waiting, role))
            part.pending.append((waiting, role))
            if self.expiry[i] is not None and w is not None:
                self._due(i, part, threshold)
        else:
            emitted.append((rt, role, t, emitter))

    def _close_pending(self, e: Event, emitted: list[tuple[GroupRuntime, Role, Token, Event]]) -> None:
        """Stream time reached ``e``: emit the matches whose window it closes (end negations)
        and the partial matches it times out (ON TIMEOUT)."""
        if self._timeouts:
            self._close_deadlines(e, emitted)
        for i, heap in enumerate(self.pending):
            if not heap:
                continue
            rt = self.runtimes[i]
            while heap:
                thr = heap[0][0]
                closed = e.pos >= thr if rt.count_window else e.ts > thr
                if not closed:
                    break
                _, _, part, t, role = heapq.heappop(heap)
                if t.alive:
                    emitted.append((rt, role, t, e))
                    t.alive = False

    def _close_deadlines(self, e: Event, emitted: list[tuple[GroupRuntime, Role, Token, Event]]) -> None:
        for i, deadlines in enumerate(self.deadlines):
            if deadlines:
                rt = self.runtimes[i]
                while deadlines:
                    thr = deadlines[0][0]
                    if not (e.pos >= thr if rt.count_window else e.ts > thr):
                        break
                    self._expire(rt, heapq.heappop(deadlines), e, emitted)  # type: ignore[arg-type]

    def _end_group(self) -> None:
        kills = self._group_kills
        if kills:
            self._group_kills = []
            for rt, part, j, x in kills:
                rt.cancel(part, j, x)

    def _emit(self, emitted: list[tuple[GroupRuntime, Role, Token, Event]]) -> list[Match]:
        out: list[Match] = []
        patterns = self.net.patterns
        while emitted:
            # one token may be emitted by many patterns sharing its place: walk its chain once.
            # The order (pattern, then positions) decides composite events' stream order and
            # who wins a conflict; without those it only needs to be deterministic.
            ordered = not self._plain and any(
                patterns[r[1].pattern].returns or patterns[r[1].pattern].conflict or type(r[1]) is Expiry
                for r in emitted
            )
            chains: dict[int, tuple[list[tuple[int, Event]], tuple[Any, ...]]] = {}
            for rt, _role, t, _e in emitted:
                if id(t) not in chains:
                    chain = t.chain()
                    chains[id(t)] = (chain, _chain_order(rt, chain) if ordered and len(emitted) > 1 else ())
            if self._plain and len(patterns) == 1:
                batch = emitted  # one pattern, nothing derived from its matches: emission order
            elif len(chains) == 1 or not ordered:
                batch = sorted(emitted, key=lambda r: (r[1].pattern, type(r[1]) is Expiry))
            else:
                batch = sorted(emitted, key=lambda r: (r[1].pattern, type(r[1]) is Expiry, chains[id(r[2])][1]))
            emitted = []
            derived = []
            matches = self._stats.matches
            for _rt, role, t, emitter in batch:
                net = patterns[role.pattern]
                if type(role) is Expiry:
                    assert net.timeout is not None
                    self._stats.timeouts[net.name] += 1
                    attrs = _fields(net.name, self.timeout_fns[net.index], t.slots)
                    m = Match(
                        net.name, None, t.first_ts, t.last_ts, attrs, net.vars, chains[id(t)][0],
                        timeout=(net.timeout.type, role.deadline),
                    )
                    out.append(m)
                    derived.append(Event(net.timeout.type, emitter.ts, emitter.pos, m.id, attrs))
                    continue
                if net.conflict is not None and not self._consume(net, chains[id(t)][0]):
                    continue
                matches[net.name] += 1
                returns = net.returns
                if returns is None:
                    if self.collect:
                        out.append(Match(net.name, None, t.first_ts, t.last_ts, {}, net.vars, chains[id(t)][0]))
                    continue
                attrs = _fields(net.name, self.returns[net.index], t.slots)
                m = Match(net.name, None, t.first_ts, t.last_ts, attrs, net.vars, chains[id(t)][0])
                out.append(m)
                derived.append(Event(returns.type, emitter.ts, emitter.pos, m.id, attrs))
            self._stats.composite_events += len(derived)
            for d in derived:
                if self.tie == "either":
                    self._group_events.append(d)
                    d.seq = self._next_seq()
                else:
                    self._process(d, True, emitted)
        return out

    def _consume(self, net: Any, chain: list[tuple[int, Event]]) -> bool:
        """Consumption policy: a match holding an event already consumed in its domain is
        not emitted; an emitted match consumes the events of its consumed variables."""
        consumed = self.consumed[net.conflict]
        for _, ev in chain:
            if ev.seq in consumed:
                return False
        slots = net.consume
        for sl, ev in chain:
            if sl in slots:
                consumed[ev.seq] = ev.ts
        return True

    # ------------------------------------------------------------------ tie rule "either"

    def _run_group(self) -> list[Match]:
        """Equal timestamps may match in any order: close the group with a fixpoint."""
        events = self._group_events
        pre = self._group_emitted
        closers = events + self._group_clocks
        self._group_events = []
        self._group_emitted = []
        self._group_clocks = []
        out: list[Match] = []
        if pre:
            out += self._emit(pre)
        done = 0
        for rt in self.runtimes:
            i = rt.net.index
            mine: dict[Any, list[Event]] = {}
            for d in events:
                if d.type in rt.net.input_types:
                    mine.setdefault(self._key(rt, d), []).append(d)
            emitted: list[tuple[GroupRuntime, Role, Token, Event]] = []
            for key, evs in mine.items():
                part = self._partition(i, rt, key)
                try:
                    found = self._fixpoint(i, rt, part, evs, key)
                except EvaluationError as exc:
                    raise self._placed(exc, rt) from None
                for t, emitter in found:
                    self._accept(i, rt, part, t, emitter, emitted)
                for d in evs:
                    if self.expiry[i] is not None and d.type in rt.negs_by_type:
                        self._due(i, part, (d.pos if rt.count_window else d.ts) + rt.w)  # type: ignore[operator]
                    for j in rt.negative(part, d):
                        rt.cancel(part, j, d)
            if rt.count_window and self.pending[i] and closers:
                self._close_in_group(i, rt, closers, emitted)
            out += self._emit(emitted)  # composite events join self._group_events
            events = events + self._group_events[done:]
            done = len(self._group_events)
        self._group_events = []
        if events:
            self._since_sweep += len(events)
            if self._since_sweep >= self.sweep_every:
                self.sweep(events[-1])
            if self._stats.created >= self._budget_at:
                self._check_budget(events[-1])
        return out

    def _close_in_group(
        self, i: int, rt: GroupRuntime, events: list[Event], emitted: list[tuple[GroupRuntime, Role, Token, Event]]
    ) -> None:
        """Matches found by this group's fixpoint whose count window an event of the same
        group already closed: emitted there, as the whole stream would emit them."""
        heap = self.pending[i]
        last = max(e.pos for e in events)
        while heap and heap[0][0] <= last:
            thr, _, _part, t, role = heapq.heappop(heap)
            if t.alive:
                closer = min((e for e in events if e.pos >= thr), key=lambda e: e.pos)
                emitted.append((rt, role, t, closer))
                t.alive = False

    def _fixpoint(
        self, i: int, rt: GroupRuntime, part: Partition, evs: list[Event], key: Any
    ) -> list[tuple[Token, Event]]:
        accepted: list[Token] = []
        created: list[Token] = []
        steps = rt.steps
        for g in evs:
            created += (steps.get(g.type) or rt.step)(part, g, INF, False, accepted)
        # Tokens of the first pass hold exactly one event of the group (the marking holds
        # none), each a distinct (partial match, transition, event): no duplicates among them,
        # and none equals a token of the loop below (two or more of the group's events).
        # Only the loop's tokens, reachable in several orders, are de-duplicated.
        seen: set[tuple[Any, ...]] = set()
        queue = created
        # every new token already holds its creator: a group of one event has nothing left
        # to try. Otherwise each event's enabled transitions by source place, computed once.
        moves = _group_moves(rt, evs) if len(evs) > 1 else []
        fires = rt.fires
        idx = 0
        while moves and idx < len(queue):
            t = queue[idx]
            idx += 1
            for g, by_src in moves:
                trs = by_src.get(t.place)
                if not trs or t.contains(g):
                    continue
                for tr in trs:
                    f = fires.get(tr.id)
                    fired = f(t, g, INF, False) if f is not None else rt.fire(tr, t, g, INF, False)
                    if fired is None:
                        continue
                    k = _binding_key(fired)
                    if k not in seen:
                        seen.add(k)
                        queue.append(fired)
        first = rt.store(part, queue)
        if first is not None and self.expiry[i] is not None:
            self._due(i, part, first + rt.w)  # type: ignore[operator]  # indexed: windowed
        if rt.watch_mask:
            self._watch(i, rt, part, queue, evs[-1], key)
        self._stats.created += len(queue)
        if self.counters is not None:
            self.counters.count(i, queue)
        # a token's creator is the event its firing bound
        done = [(t, t.event) for t in queue if rt.places[t.place].accepting and t.event is not None]
        self._stats.completed += len(done)
        return done


def _check_program(net: Net, tie: str) -> None:
    """What the engine refuses to run: an unknown tie rule, ``either`` with a strategy other
    than skip-till-any-match, patterns with ARCHIVED variables (they need an archive)."""
    if tie not in TIE_RULES:
        raise ConfigError(f"unknown tie rule {tie!r} (use {', '.join(TIE_RULES)})")
    for p in net.patterns:
        if tie == "either" and p.strategy != Strategy.ANY:
            raise ConfigError(
                f"pattern {p.name!r}: tie rule 'either' needs skip-till-any-match, not {p.strategy} "
                "(the other strategies are defined by a scan in arrival order)"
            )
    if net.history:
        raise ConfigError(
            f"pattern {net.history[0].name!r} has ARCHIVED variables: it runs with an event archive "
            "(petricep run --archive DIR, or petricep.archive.history.HistoryRunner)"
        )


def _budget(max_partial_matches: int | None) -> int | None:
    if max_partial_matches is not None and (
        isinstance(max_partial_matches, bool) or not isinstance(max_partial_matches, int) or max_partial_matches < 1
    ):
        raise ConfigError(f"max_partial_matches must be a positive integer or None, not {max_partial_matches!r}")
    return max_partial_matches


def _chain_order(rt: GroupRuntime, chain: list[tuple[int, Event]]) -> tuple[Any, ...]:
    """Matches emitted at one point are ordered by pattern, then by this: the events'
    stream positions, then each variable's positions in written order (SEMANTICS.md)."""
    per_var: list[list[int]] = [[] for _ in range(rt.nslots)]
    for sl, ev in chain:
        per_var[sl].append(ev.seq)
    return (tuple(sorted(ev.seq for _, ev in chain)), tuple(tuple(v) for v in per_var))


def _group_moves(rt: GroupRuntime, evs: list[Event]) -> list[tuple[Event, dict[int, list[Any]]]]:
    """Per event of a timestamp group: its transitions whose input-arc guards hold, by source place."""
    out = []
    for g in evs:
        by_src = {}
        for src, trs in rt.by_type.get(g.type, ()):
            enabled = [tr for tr in trs if all(f((g,), None) for f in rt.arc[tr.id])]
            if enabled:
                by_src[src] = enabled
        if by_src:
            out.append((g, by_src))
    return out


def _binding_key(t: Token) -> tuple[Any, ...]:
    return (t.place, t.users, tuple(sorted((sl, ev.seq) for sl, ev in t.chain())))


def _with_pattern(exc: EvaluationError, where: str) -> EvaluationError:
    placed = EvaluationError(f"{where}: {exc}")
    setattr(placed, OVERFLOW_FLAG, False)
    return placed


def _fields(name: str, fns: list[tuple[str, Any]], slots: tuple[Any, ...]) -> dict[str, Any]:
    """A match's RETURN (or ON TIMEOUT) attributes; a number overflow names the pattern.
    Non-finite floats are kept as they are: the output writes them as null."""
    try:
        return {field_name: f(slots) for field_name, f in fns}
    except EvaluationError as exc:
        if getattr(exc, OVERFLOW_FLAG, False):
            raise _with_pattern(exc, f"pattern {name!r}") from None
        raise


def as_condition_free(fn: Any) -> Any:
    """RETURN expressions: evaluated on the final slots (no negated event)."""

    def value(slots: tuple[Any, ...]) -> Any:
        try:
            return fn(slots, None)
        except (Missing, Skip):
            return None

    return value


__all__ = ["Engine", "Match", "RunStats", "TIE_RULES", "as_condition"]
