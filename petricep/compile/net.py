"""The compiled CEP-PN (paper 002): frozen, picklable values.

A pattern becomes places and transitions:

* one *input place* per event type (the colours C) — ``Net.input_types``;
* *state places*: every reachable configuration of the pattern tree (which variables
  are bound, which OR branch was taken, which SEQ element is current). A token in a
  state place is a partial match;
* *transitions*: each consumes an event token from an input place and a partial-match
  token from a state place (a dual-input structure) or, for the first event of a
  pattern, the event alone (single-input); a Kleene transition loops on its place.
  Guards G are condition ids, token expiry U is the pattern's window, output
  expressions E are the RETURN fields; the accepting places are Pout.

Conditions are kept as AST (``petricep.lang.ast.Expr``) so the net can be printed,
compared for sharing and shipped to Spark executors; the runtime compiles them to
closures in each process.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from petricep.lang import ast as A

if TYPE_CHECKING:
    from petricep.compile.rows import RowNet

NEG_VAR = "#n"  # the negated variable's name in a merged net's conditions


@dataclass(frozen=True)
class Var:
    name: str
    type: str
    slot: int
    kleene: bool
    # a step of the repeated group of this name (issue 42): its slot holds the step's list
    # over the iterations (``kleene`` is true), ids leave as the group's list of bindings
    group: str | None = None
    # a step of that group an iteration may leave out (``C? c``): its ids are placed into
    # iterations by position, not zipped (runtime.match.group_bindings)
    optional: bool = False
    # a Kleene step of that group (``C+ c[]``): an iteration binds a list of it, so its ids too
    # are placed by position, each iteration's as a list (runtime.match.by_position)
    repeats: bool = False


@dataclass(frozen=True)
class AggSpec:
    """One running aggregate a Kleene variable keeps: ``func`` over ``field``."""

    func: str
    field: str | None


@dataclass(frozen=True)
class KleeneInfo:
    slot: int
    aggs: tuple[AggSpec, ...]  # running accumulators kept in the Kleene state
    head: int  # how many leading elements to keep for v[k] (k >= 2)


@dataclass(frozen=True)
class Negation:
    """``!(T n)`` between the positive SEQ elements ``prev`` and ``next``."""

    index: int
    var: str
    type: str
    conditions: tuple[int, ...]  # condition ids mentioning the negated variable
    event_conditions: tuple[int, ...]  # those that read only the negated event (buffer filter)
    prev_slots: tuple[int, ...]  # slots of P's variables ("after last(P)"); () = start of window
    next_slots: tuple[int, ...]  # slots of Q's variables ("before first(Q)"); () = end of window
    pushed: bool  # evaluated in the scan: a violating event cancels tokens at once
    # a stop event (``T+ v[] UNTIL U u``, issue 42: compile/until.py): it blocks the list's
    # take transitions (``prev_slots``: the list) instead of forbidding a match
    stops: bool = False


@dataclass(frozen=True)
class Role:
    """A pattern that emits from a place of a shared net: what it checks on emission."""

    pattern: int  # index into Net.patterns
    final_conditions: tuple[int, ...]
    emit_negations: tuple[int, ...]
    pending_negations: tuple[int, ...]
    window: float | int | None  # this pattern's own window (the shared places keep the largest)


@dataclass(frozen=True)
class Place:
    id: int
    label: str  # human-readable configuration, e.g. "a;b|c"
    bound: tuple[str, ...]  # variables bound in this configuration
    accepting: bool
    final_conditions: tuple[int, ...] = ()  # checked when a token here is emitted
    emit_negations: tuple[int, ...] = ()  # checked at emission against the negative buffer
    pending_negations: tuple[int, ...] = ()  # end negations: emission waits for the window to close
    active_negations: tuple[int, ...] = ()  # pushed negations whose interval is open here
    growable_negations: tuple[int, ...] = ()  # of those, the ones whose P can still grow (block, not cancel)
    has_exits: bool = True  # some transition leaves this place
    roles: tuple[Role, ...] = ()  # in a merged net: the patterns that emit from here
    users: tuple[int, ...] = ()  # in a merged net: the patterns whose partial matches live here
    # per-step gaps still ahead of a token here: (slot of the step they follow, upper bound);
    # a token whose slot's event is more than the bound before the stream has no future
    # (issue 42: it leaves at the gap's end, not the window's). () in a merged place whose
    # patterns disagree: their tokens live to the window, the gap guard still decides.
    # A gap in EVENTS (issue 42, under a count window) is ``(~slot, bound)``: the bound is on
    # the input positions (:func:`gap_slot`).
    gap_expiry: tuple[tuple[int, float | int], ...] = ()
    # the same per pattern (merged index, its gaps ahead here), for the patterns with any: an
    # ON TIMEOUT partial match times out at the first of its own gaps' ends (issue 42), even
    # where the merged place keeps its tokens to the window
    gap_ends: tuple[tuple[int, tuple[tuple[int, float | int], ...]], ...] = ()
    # Kleene lists still growing here marked GREEDY or RELUCTANT (issue 42): (slot, mode).
    # When one event both extends such a list and starts a step after it, a greedy list keeps
    # only the extension, a reluctant one only the step (skip-till-next-match). A repeated
    # group's rule over several steps (its moves bind more than one slot here) is one entry
    # per slot, each but the last marked ``greedy+`` / ``reluctant+`` (joined with the next):
    # its moves are those binding any of them (:func:`repeat_rules`; one slot repeated: its
    # every move, a list's first element too)
    repeat: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class Transition:
    id: int
    src: int
    dst: int
    event_type: str
    var: str
    slot: int
    take: bool  # Kleene: append to an already started list
    arc_conditions: tuple[int, ...]  # read only the incoming event: hoisted onto the input arc
    guards: tuple[int, ...]  # become decidable on this firing
    iteration: tuple[int, ...]  # iteration conditions for the new Kleene element
    # (condition, kleene slot): check every element now; (condition, slot, group step slots...):
    # a repeated group's iteration condition, every iteration so far replayed on the steps'
    # lists as they were when it bound the step at ``slot`` (compile/groups.py replay)
    deferred_iteration: tuple[tuple[int, ...], ...]
    order_slots: tuple[int, ...]  # variables that must be strictly earlier (tie rule strict)
    blocked_by: int  # bitmask of negations whose Q this firing starts
    clears: int  # bitmask of negations whose P this firing grows
    window: float | int | None = None  # in a merged net: the largest window of its users
    users: tuple[int, ...] = ()  # in a merged net: the patterns this firing serves
    kleene: bool = False  # binds a Kleene variable (its slot holds a list state, not an event)
    # a per-step gap on this step: (slot it follows, low, high) in the runtime's units; its
    # guard is among ``guards`` (``lo <= e.ts - slot.ts <= hi``), this says it for diagrams,
    # merge keys and the place expiry (``~slot``: a gap in EVENTS, on positions: gap_slot)
    gap: tuple[int, float | int, float | int] | None = None
    # a gap right after an AND/OR follows the latest event of the variables it bound: their
    # slots (``gap``'s slot: the last of them), for the diagrams; () for one event
    gap_from: tuple[int, ...] = ()
    # a bounded Kleene list (``T{n,m} v[]``, issue 42) counts its events in its places: the
    # list's length after this firing, 0 where nothing is counted (an unbounded list's loop);
    # for the diagrams (which place a firing moves to says it for the engines)
    count: int = 0


@dataclass(frozen=True)
class PatternNet:
    """One pattern's basic structures, ready for the firing loop."""

    name: str
    index: int
    vars: tuple[Var, ...]
    kleene: tuple[KleeneInfo, ...]
    conditions: tuple[A.Expr, ...]
    negations: tuple[Negation, ...]
    places: tuple[Place, ...]
    transitions: tuple[Transition, ...]
    start: int  # the initial place (empty partial match)
    window: A.Window | None
    window_value: float | int | None  # in ts units / seconds / events
    partition: tuple[str, ...]
    strategy: A.Strategy
    returns: A.Return | None
    source: A.Pattern
    consume: tuple[int, ...] = ()  # slots whose events a match consumes
    conflict: str | None = None  # the consumption domain: a conflict group, or the pattern itself
    timeout: A.Return | None = None  # partial matches whose window closes become these events
    limit: A.Limit | None = None  # at most this many live partial matches per key

    @property
    def input_types(self) -> frozenset[str]:
        return frozenset(v.type for v in self.vars) | frozenset(n.type for n in self.negations)

    @property
    def output_type(self) -> str | None:
        return self.returns.type if self.returns else None

    @property
    def produces(self) -> tuple[str, ...]:
        """Event types this pattern feeds back into the run: RETURN, then timeout type."""
        return tuple(r.type for r in (self.returns, self.timeout) if r is not None)

    def var(self, name: str) -> Var:
        for v in self.vars:
            if v.name == name:
                return v
        raise KeyError(name)

    def var_at(self, slot: int) -> Var | None:
        """The variable in ``slot`` (slots may be shifted in a merged net: middle combination)."""
        for v in self.vars:
            if v.slot == slot:
                return v
        return None


@dataclass(frozen=True)
class GroupNet:
    """Patterns merged into one shared net (paper 002): places and transitions equal in
    every respect that decides which partial matches exist are built once; each pattern
    keeps its own window, emission checks and output through its :class:`Role`."""

    index: int
    patterns: tuple[int, ...]  # indices into Net.patterns
    nslots: int
    slot_kleene: tuple[KleeneInfo | None, ...]  # per slot: the Kleene state layout, or None
    conditions: tuple[A.Expr, ...]  # variables renamed to slots: "#0", "#1", ...; "#n" negated
    negations: tuple[Negation, ...]
    places: tuple[Place, ...]
    transitions: tuple[Transition, ...]
    start: int
    window_kind: str | None
    window_value: float | int | None  # the largest window of the group (token expiry U)
    partition: tuple[str, ...]
    strategy: A.Strategy
    input_types: frozenset[str]
    sharing: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # (combination, place label, patterns)
    windows: tuple[float | int | None, ...] = ()  # each pattern's own window, aligned with `patterns`
    # the slots of repeated groups' steps whose lists are not aligned by iteration (a group
    # with optional or Kleene steps): which iteration an element lies in is the order the
    # partial match bound them, which tells two partial matches with equal lists apart
    ordered_slots: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Net:
    """All patterns of a run, in evaluation order (producers of RETURN types first).

    ``patterns`` are the separate nets (what each pattern compiles to alone); ``groups``
    the shared net the runtime executes."""

    patterns: tuple[PatternNet, ...]
    groups: tuple[GroupNet, ...] = ()
    rows: tuple[RowNet, ...] = ()  # SQL MATCH_RECOGNIZE queries (petricep.compile.rows)
    # patterns with ARCHIVED variables (compile.archived.HistorySpec): ``patterns`` holds their
    # live parts; they run only joined with an event archive (petricep.archive)
    history: tuple[Any, ...] = ()

    @property
    def input_types(self) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for p in self.patterns:
            out |= p.input_types
        for r in self.rows:
            out |= r.input_types
        return out

    def pattern(self, name: str) -> PatternNet:
        for p in self.patterns:
            if p.name == name:
                return p
        raise KeyError(name)

    def stats(self) -> dict[str, int]:
        """Net size before merging (separate nets) and after (the shared net); SQL queries
        count alike in both (each is its own net). State places are counted by
        :func:`state_places`, as the diagrams draw them."""
        row_places = sum(state_places(r) for r in self.rows)
        row_transitions = sum(len(r.transitions) for r in self.rows)
        return {
            "patterns": len(self.patterns) + len(self.rows),
            "input_places": len(self.input_types),
            "state_places": sum(state_places(p) for p in self.patterns) + row_places,
            "transitions": sum(len(p.transitions) for p in self.patterns) + row_transitions,
            "merged_state_places": sum(state_places(g) for g in self.groups) + row_places,
            "merged_transitions": sum(len(g.transitions) for g in self.groups) + row_transitions,
        }


class _HasPlaces(Protocol):
    @property
    def places(self) -> Sequence[Any]: ...

    @property
    def start(self) -> int: ...


def state_places(part: _HasPlaces) -> int:
    """How many state places a net (a pattern's, a shared one, a SQL query's) has: every
    place but its start place. A token in a state place is a partial match; the start place
    holds the empty one, which is no partial match, so the diagrams leave it out and
    ``check`` does not count it — one definition, so both give the same numbers."""
    return sum(1 for place in part.places if place.id != part.start)


def gap_slot(encoded: int) -> tuple[int, bool]:
    """A gap entry's slot and whether it counts events (encoded ``~slot``, negative) rather
    than time: Place.gap_expiry, Place.gap_ends, Transition.gap."""
    return (~encoded, True) if encoded < 0 else (encoded, False)


def repeat_rules(repeat: tuple[tuple[int, str], ...]) -> list[tuple[frozenset[int], bool, bool]]:
    """A place's GREEDY / RELUCTANT rules as (the slots whose moves count, greedy, joined):
    the entries marked ``+`` joined with the next (one group rule over several steps,
    whose moves are those binding any of its slots; a single entry's are its list's takes)."""
    out: list[tuple[frozenset[int], bool, bool]] = []
    slots: list[int] = []
    for slot, mode in repeat:
        slots.append(slot)
        if mode.endswith("+"):
            continue
        out.append((frozenset(slots), mode == "greedy", len(slots) > 1))  # (an entry repeated: joined, one slot)
        slots = []
    return out
