"""A compiled net plus a small bounded input as an executable snakes Petri net.

This is the machine check of paper 002's argument (issue 3): translate the merged net
(a :class:`GroupNet`) and the separate nets (each :class:`PatternNet`) into snakes,
explore their state graphs over the same few events, and compare what reaches each
pattern's output place.

The translation mirrors the token-firing semantics of the embedded engine for simple
patterns — SEQ (AND/OR configurations work the same way) of plain event variables,
any conditions over them, time windows, ``[attr]`` keys, skip-till-any-match, events
ordered by arrival:

* ``in.T`` holds the positions of the input events of type T (an event table ``E`` in
  the net's globals gives their timestamps and attributes);
* a state place holds tuples ``(users, positions...)``: a partial match — the event
  positions, one per bound variable in slot order — and the bitmask of the patterns it
  is a partial match of (in a merged net, patterns that share only a place's future —
  rear combination — keep their tokens apart by it);
* a transition *reads* an event and, unless it leaves the start place, a partial match
  (test arcs: skip-till-any-match lets every partial match use every event and stay
  to be extended again) and adds the extended partial match. Its guard is the
  engine's: the event arrived after every bound one, shares the key, stays in the
  transition's window, and the transition's arc conditions and guards hold;
* per pattern emitting at an accepting place, ``emit.p`` reads the complete match
  and checks the pattern's own window and final conditions, putting the match into
  ``out.p``;
* a partial match is produced once: a transition is disabled when its token is
  already in the output place (:class:`Fresh`, an inhibitor on that very token), as the
  engine keeps every binding once. The net is then monotone and finite: its state
  graph ends in a single dead marking, the closure of the input.

Negations, Kleene closure, count windows, other strategies and composite events fed
back are outside this model (:class:`ValueError`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import snakes.nets as sn

from petricep.compile.net import GroupNet, Net, PatternNet, Role, Transition
from petricep.events import Event
from petricep.lang import ast as A
from petricep.lang.printer import expr_text

Match = tuple[tuple[str, Any], ...]  # (variable, event id) pairs, in variable order


class Fresh(sn.Inhibitor):  # type: ignore[misc]
    """Inhibitor on one token: the transition may fire only if the token its other arcs
    bind is not in the place yet (snakes' own :class:`Inhibitor` forbids *any* token
    matching its annotation, whatever the transition's binding)."""

    def modes(self, values: Any) -> list[sn.Substitution]:
        return [sn.Substitution()]

    def check(self, binding: sn.Substitution, tokens: Any) -> bool:
        return self._annotation.bind(binding).value not in tokens


class _Transition(sn.Transition):  # type: ignore[misc]
    """A transition whose modes are the bindings that enable it: snakes' ``modes()``
    leaves out the arcs' token checks, which :class:`Fresh` needs."""

    def modes(self) -> list[sn.Substitution]:
        return [m for m in super().modes() if self.enabled(m)]


def _unsupported(what: str) -> ValueError:
    return ValueError(f"the snakes model covers plain SEQ/AND/OR patterns only: {what}")


@dataclass(frozen=True)
class _Part:
    """A GroupNet or a PatternNet in slot terms."""

    places: tuple[Any, ...]
    transitions: tuple[Transition, ...]
    start: int
    conditions: tuple[A.Expr, ...]
    names: dict[str, int]  # condition variable -> slot
    partition: tuple[str, ...]
    roles: dict[int, tuple[Role, ...]]
    tr_window: dict[int, float | int | None]
    patterns: tuple[int, ...]
    bits: dict[int, int]  # pattern index -> its bit in a token's users
    tr_mask: dict[int, int]  # transition -> the users it serves
    tr_windows: dict[int, list[tuple[int, float | int | None]]]  # transition -> (users, window)


def _part(part: GroupNet | PatternNet) -> _Part:
    if isinstance(part, GroupNet):
        if any(k is not None for k in part.slot_kleene):
            raise _unsupported("Kleene closure")
        names = {f"#{s}": s for s in range(part.nslots)}
        roles = {p.id: p.roles for p in part.places if p.roles}
        windows = {t.id: t.window for t in part.transitions}
        kind = part.window_kind
        pats = part.patterns
        bits = {pi: 1 << k for k, pi in enumerate(pats)}
        own = dict(zip(pats, part.windows)) if part.windows else {}
        masks = {t.id: sum(bits[u] for u in set(t.users)) for t in part.transitions}
        by_w: dict[int, list[tuple[int, float | int | None]]] = {}
        for t in part.transitions:
            per: dict[Any, int] = {}
            for u in set(t.users):
                w = own.get(u, t.window)
                per[w] = per.get(w, 0) | bits[u]
            by_w[t.id] = [(m, w) for w, m in per.items()]
    else:
        if any(v.kleene for v in part.vars):
            raise _unsupported("Kleene closure")
        names = {v.name: v.slot for v in part.vars}
        roles = {
            p.id: (Role(part.index, p.final_conditions, (), (), part.window_value),)
            for p in part.places
            if p.accepting
        }
        windows = {t.id: part.window_value for t in part.transitions}
        kind = part.window.kind if part.window else None
        pats = (part.index,)
        bits = {part.index: 1}
        masks = {t.id: 1 for t in part.transitions}
        by_w = {t.id: [(1, part.window_value)] for t in part.transitions}
    if part.negations:
        raise _unsupported("negation" if any(not n.stops for n in part.negations) else "a stop event (UNTIL)")
    if part.strategy != A.Strategy.ANY:
        raise _unsupported(f"strategy {part.strategy}")
    if kind == A.WIN_COUNT:
        raise _unsupported("count windows")
    return _Part(
        part.places,
        part.transitions,
        part.start,
        part.conditions,
        names,
        part.partition,
        roles,
        windows,
        pats,
        bits,
        masks,
        by_w,
    )


def _bound_slots(p: _Part) -> dict[int, tuple[int, ...]]:
    bound: dict[int, tuple[int, ...]] = {p.start: ()}
    queue = deque([p.start])
    while queue:
        pid = queue.popleft()
        for t in p.transitions:
            if t.src == pid and t.dst not in bound:
                bound[t.dst] = tuple(sorted({*bound[pid], t.slot}))
                queue.append(t.dst)
    return bound


def _var(slot: int) -> str:
    return f"s{slot}"


def _tuple(slots: Iterable[int], users: Any = None) -> sn.Tuple:
    """A state token: (users, positions...)."""
    head = users if users is not None else sn.Variable("u")
    return sn.Tuple([head, *(sn.Variable(_var(s)) for s in slots)])


def _ts(fn: str, slots: Sequence[int]) -> str:
    """``fn`` (min or max) of the bound events' timestamps."""
    items = [f"E[{_var(s)}].ts" for s in slots]
    return items[0] if len(items) == 1 else f"{fn}({', '.join(items)})"


def snakes_net(
    net: Net, part: GroupNet | PatternNet, events: Sequence[Event], name: str = "cep"
) -> sn.PetriNet:
    """The executable snakes net of ``part`` (a merged group or one pattern of ``net``)
    with ``events`` (positions ``0..n-1`` in stream order) in its input places.

    A state token is ``(users, s0, ..., s{n-1})``: every slot of the net, ``None`` where the
    partial match binds nothing (a merged place may hold partial matches of patterns that
    bind different slots: middle combination)."""
    p = _part(part)
    width = max((max(p.names.values(), default=-1) + 1), 1)
    slots = list(range(width))
    names = {v: f"E[{_var(s)}]" for v, s in p.names.items()}

    def cond(ci: int) -> str:
        return f"({expr_text(p.conditions[ci], names, python=True)})"

    pn = sn.PetriNet(name)
    _add_globals(pn, events)
    for etype in sorted({t.event_type for t in p.transitions}):
        pn.add_place(sn.Place(f"in.{etype}", [e.pos for e in events if e.type == etype]))
    for pl in p.places:
        if pl.id != p.start:
            pn.add_place(sn.Place(f"p{pl.id}", []))
    for t in p.transitions:
        _add_transition(pn, p, t, slots, cond)
    for pid, roles in p.roles.items():
        for role in roles:
            _add_emission(pn, net.patterns[role.pattern], p, pid, role, slots, cond)
    return pn


def _add_globals(pn: sn.PetriNet, events: Sequence[Event]) -> None:
    """The event table ``E`` and the helpers the guards call, with the slot variables as
    arguments (names bound by a transition's mode are not visible inside comprehensions of
    its expressions)."""
    table = {
        e.pos: SimpleNamespace(**{**e.attrs, "ts": e.ts, "id": e.id, "pos": e.pos, "type": e.type})
        for e in events
    }
    pn.globals["E"] = table
    pn.globals["_after"] = lambda new, *xs: all(new > x for x in xs if x is not None)
    pn.globals["_span"] = lambda new, *xs: table[new].ts - min(table[x].ts for x in xs if x is not None)
    pn.globals["_width"] = lambda *xs: max(table[x].ts for x in xs if x is not None) - min(
        table[x].ts for x in xs if x is not None
    )
    pn.globals["_same"] = lambda a, new, *xs: all(
        getattr(table[new], a) == getattr(table[x], a) for x in xs if x is not None
    )
    pn.globals["_bound"] = lambda *pairs: tuple(pv for pv in pairs if pv[1] is not None)


def _add_transition(pn: sn.PetriNet, p: _Part, t: Transition, slots: list[int], cond: Callable[[int], str]) -> None:
    """One transition of the part: it binds the event in its slot to a partial match of its
    source place (or starts one) and puts the extended partial match in its target place."""
    if t.take or t.iteration or t.deferred_iteration:
        raise _unsupported("Kleene closure")
    new = _var(t.slot)
    others = ", ".join(_var(x) for x in slots if x != t.slot) or "None"
    src_start = t.src == p.start
    # the patterns the new partial match serves: the old one's, those of the transition,
    # and (where they disagree) those whose own window admits the new event
    users_in = str(sum(p.bits.values())) if src_start else "u"
    admitted = []
    for mask, w in p.tr_windows[t.id]:
        if w is None or src_start:
            admitted.append(str(mask))
        else:
            admitted.append(f"({mask} if _span({new}, {others}) <= {w!r} else 0)")
    users_out = f"({users_in} & {p.tr_mask[t.id]} & ({' | '.join(admitted)}))"
    guard = [f"{users_out} != 0"]
    if not src_start:
        guard.append(f"_after({new}, {others})")  # arrival order
        guard += [f"_same({a!r}, {new}, {others})" for a in p.partition]
    guard += [cond(ci) for ci in (*t.arc_conditions, *t.guards)]
    tname = f"t{t.id}"
    pn.add_transition(_Transition(tname, sn.Expression(" and ".join(guard) or "True")))
    pn.add_input(f"in.{t.event_type}", tname, sn.Test(sn.Variable(new)))
    if not src_start:
        old = [sn.Variable(_var(s)) if s != t.slot else sn.Value(None) for s in slots]
        pn.add_input(f"p{t.src}", tname, sn.Test(sn.Tuple([sn.Variable("u"), *old])))
    after = [sn.Variable(_var(s)) if s == t.slot or not src_start else sn.Value(None) for s in slots]
    out_token = sn.Tuple([sn.Expression(users_out), *after])
    pn.add_output(f"p{t.dst}", tname, out_token)
    pn.add_input(f"p{t.dst}", tname, Fresh(out_token))


def _add_emission(
    pn: sn.PetriNet,
    pattern: PatternNet,
    p: _Part,
    pid: int,
    role: Role,
    slots: list[int],
    cond: Callable[[int], str],
) -> None:
    """The transition emitting ``pattern``'s complex events from place ``pid``: the
    (variable, position) pairs of its bound variables, into the place ``out.<pattern>``."""
    args = ", ".join(_var(s) for s in slots)
    out, emit = f"out.{pattern.name}", f"emit.{pattern.name}.p{pid}"
    if out not in {pl.name for pl in pn.place()}:
        pn.add_place(sn.Place(out, []))
    guard = [f"u & {p.bits[role.pattern]}", *(cond(ci) for ci in role.final_conditions)]
    if role.window is not None:
        guard.append(f"_width({args}) <= {role.window!r}")
    pn.add_transition(_Transition(emit, sn.Expression(" and ".join(guard))))
    pn.add_input(f"p{pid}", emit, sn.Test(sn.Tuple([sn.Variable("u"), *(sn.Variable(_var(s)) for s in slots)])))
    pairs = ", ".join(f"({v.name!r}, {_var(v.slot)})" for v in sorted(pattern.vars, key=lambda v: v.slot))
    match = sn.Expression(f"_bound({pairs})")
    pn.add_output(out, emit, match)
    pn.add_input(out, emit, Fresh(match))


@dataclass(frozen=True)
class Exploration:
    """A built state graph and what it shows."""

    states: int
    dead: int  # markings where nothing can fire (a monotone net has exactly one)
    matches: dict[str, frozenset[Match]]  # per pattern: every match reaching out.p
    tokens: int  # partial matches in the dead marking (state places only)


def explore(
    net: Net, part: GroupNet | PatternNet, events: Sequence[Event], max_states: int = 200_000
) -> Exploration:
    """Build the state graph of :func:`snakes_net` and collect, per pattern of ``part``,
    the complex events that can reach its output place in some reachable marking."""
    pn = snakes_net(net, part, events)
    evs = {e.pos: e for e in events}
    found: dict[str, set[Match]] = {net.patterns[i].name: set() for i in _part(part).patterns}
    graph = sn.StateGraph(pn)
    states = dead = tokens = 0
    for _state in graph:
        states += 1
        if states > max_states:
            raise RuntimeError(f"state graph larger than {max_states} states: use a smaller input")
        marking = graph.net.get_marking()
        for place in marking:
            if place.startswith("out."):
                for tok in marking[place]:
                    found[place[4:]].add(tuple((name, evs[pos].id) for name, pos in tok))
        if not list(graph.successors()):
            dead += 1
            tokens = sum(len(marking[pl]) for pl in marking if pl.startswith("p"))
    return Exploration(states, dead, {k: frozenset(v) for k, v in found.items()}, tokens)


def match_key(pattern_vars: Sequence[str], ids: dict[str, Any]) -> Match:
    """An engine match's ``ids`` in the form :func:`explore` reports matches."""
    return tuple((v, ids[v]) for v in pattern_vars if v in ids)
