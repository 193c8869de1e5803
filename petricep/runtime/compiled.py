"""The Python engine's compiled side: what is fixed per net and configuration, apart from the
run's mutable state (:class:`~petricep.runtime.state.RunState`).

A :class:`Compiled` holds the net, one complete :class:`~petricep.runtime.firing.GroupRuntime`
per shared net (indexed by the event types it reads), the RETURN and ON TIMEOUT expressions
of each pattern, the tie rule's functions (:class:`TieRule`), the run's event-time duties
decided once, and the engine's options. It changes only when the engine is reconfigured
(``Engine.extend``, ``Engine.remove_pattern``), never per event.

The firing (:mod:`.dispatch`), tie (:mod:`.ties`), emission (:mod:`.emission`),
housekeeping (:mod:`.housekeeping`) and reporting (:mod:`.report`) functions take a
``Compiled`` and a ``RunState``; none of them knows the engine facade, so the modules form
no import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from petricep.compile.net import GroupNet, Net
from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.runtime.build import Fields, build_runtime, return_fns, timeout_fns
from petricep.runtime.expr import OVERFLOW_FLAG, with_pattern
from petricep.runtime.firing import GroupRuntime
from petricep.runtime.match import Match
from petricep.runtime.rows import RowQueries
from petricep.runtime.spill import Spiller
from petricep.runtime.state import Partition, RunState, Token

# (its net's runtime, the role emitting (or an emission.Expiry), the token, the event emitting it)
Emitted = tuple[GroupRuntime, Any, Token, Event]
Matches = Callable[["Compiled", RunState, Event], list[Match]]


class TieRule:
    """What a tie rule decides (:mod:`.ties` builds the three): how an input event fires
    (``step``), what stream time passing with no event does (``advance``, with a clock
    event), how the open timestamp group ends at the end of the input (``close``), when a
    composite event re-enters (``derive``) and when a pushed negation cancels partial matches
    (``kill``)."""

    __slots__ = ("name", "step", "advance", "close", "derive", "kill")

    def __init__(
        self,
        name: str,
        step: Matches,
        advance: Matches,
        close: Callable[[Compiled, RunState], list[Match]],
        derive: Callable[[Compiled, RunState, Event, list[Emitted]], None],
        kill: Callable[[Compiled, RunState, GroupRuntime, Partition, int, Event], None],
    ) -> None:
        self.name = name
        self.step = step
        self.advance = advance
        self.close = close
        self.derive = derive
        self.kill = kill


class Compiled:
    """The engine's compiled side (see the module docstring). ``rows`` is the SQL queries'
    matcher (:mod:`.rows`), which keeps its own per-query state."""

    def __init__(
        self,
        net: Net,
        tie: str,
        rule: TieRule,
        rows: RowQueries,
        collect: bool,
        sweep_every: int,
        spill: Spiller | None,
    ) -> None:
        self.net = net
        self.tie = tie
        self.rule = rule  # the tie rule decides how an event fires, once, here (not per event)
        self.rows = rows  # SQL MATCH_RECOGNIZE queries (runtime/rows.py)
        self.collect = collect
        self.sweep_every = sweep_every
        self.spill = spill  # partial-match spilling under a memory budget (runtime/spill.py)
        self.max_partial_matches: int | None = None
        self.max_memory: int | None = None
        self.removed: set[int] = set()  # patterns stopped on the running engine
        self.runtimes: list[GroupRuntime] = []
        self.consumers: dict[str, list[GroupRuntime]] = {}
        self.contiguous: list[GroupRuntime] = []
        self.timeout_fns: dict[int, Fields] = {}
        self.returns: list[Fields] = []
        # collect=False: the patterns whose matches are only counted, index -> name
        self.counted: dict[int, str] = {}
        if not collect:
            self.counted = {p.index: p.name for p in net.patterns if not p.returns and not p.conflict}
        self.has_timeouts = self.timed = False

    def add_net(self, g: GroupNet, st: RunState) -> None:
        """Build a shared net's runtime and index it: by the event types it reads, and in the
        run state."""
        rt = build_runtime(g, self.net.patterns, self.tie, self.spill is not None)
        self.runtimes.append(rt)
        for t in sorted(g.input_types):
            self.consumers.setdefault(t, []).append(rt)
        if rt.contiguity:
            self.contiguous.append(rt)
        st.add_net(rt.indexed and self.spill is None)
        for pi in g.patterns:
            p = self.net.patterns[pi]
            st.stats.timeouts.setdefault(p.name, 0)
            st.stats.dropped.setdefault(p.name, 0)
            fns = timeout_fns(p, rt)
            if fns is not None:
                self.timeout_fns[pi] = fns

    def add_returns(self, start: int) -> None:
        """The RETURN expressions of the patterns from index ``start`` on."""
        group_of = {i: rt for rt in self.runtimes for i in rt.net.patterns}
        for p in self.net.patterns[start:]:
            self.returns.append(return_fns(p, group_of[p.index]))

    def settle_flags(self) -> None:
        """What the run's event-time duties are, decided once per net (and per extension)."""
        self.has_timeouts = any(r.timeout_mask for r in self.runtimes)
        # matches can wait for their window to close (end negations): stream time closes them
        waits = any(role.pending_negations for r in self.runtimes for roles in r.roles for role in roles)
        self.timed = self.has_timeouts or waits  # stream time closes something

    def key(self, rt: GroupRuntime, e: Event) -> Any:
        """``e``'s key in ``rt``'s net (None: the net has no partition attributes)."""
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

    def placed(self, exc: EvaluationError, rt: GroupRuntime) -> EvaluationError:
        """A number overflow raised while firing ``rt``'s net, with the patterns it serves."""
        if not getattr(exc, OVERFLOW_FLAG, False):
            return exc
        names = ", ".join(repr(self.net.patterns[pi].name) for pi in rt.net.patterns if pi not in self.removed)
        return with_pattern(exc, f"pattern {names}")


__all__ = ["Compiled", "Emitted", "Matches", "TieRule"]
