"""A compiled net as diagram data: nodes, arcs, clusters and a legend, before any drawing.

:func:`build_diagram` is a pure function of the :class:`~petricep.compile.net.Net`; the
DOT and PNML exporters only lay this data out, so both show exactly the same places,
transitions and arcs, and tests can check the structure without parsing a picture.

The net drawn is the CEP-PN of paper 002:

* one *input place* per event type (colour), ``in.T``; types no pattern produces sit on
  the source side of the diagram, composite types next to the pattern producing them;
* *state places* (a token = a partial match), labelled with their configuration and
  bound variables; the empty start place is left out, so a pattern's first transition
  is a single-input structure (it reads the event alone) and every later one a
  dual-input structure (an event and a partial match);
* *operator transitions*, labelled with the event bound (``B b``; Kleene ``B b[1]``
  starts a list, ``B+ b[i]`` is the loop that grows it; a repeated group's step ``B g[1].b``
  on its first iteration, ``B g[i].b`` on the loop back), their guards and window; the
  conditions on the event alone, hoisted onto the input arc, label that arc too;
* per pattern an *emit transition* (its own window, final conditions, RETURN
  expressions) and an *output place* ``out.p`` on the sink side; a pattern whose RETURN
  type other patterns read also puts its complex events into ``in.T``;
* negations as inhibitor arcs from the negated type's input place to the transitions
  (or emissions) they block.

In the merged view (``merged=True``) nodes used by several patterns are *shared* and
carry all their users; in the separate view every pattern is its own cluster.
Colours: one per pattern (:func:`pattern_swatches`, which the match timeline uses too, so a
pattern has one colour in every picture) from colour-blind-safe qualitative schemes — Okabe & Ito's seven
(black left out: it is the text colour), Paul Tol's *muted* nine, and four of Tol's
*light*/*vibrant* colours that stay apart from those (the others are within a CIE76
distance of 12 of one already taken). Up to :data:`PATTERN_COLORS`' size no two patterns
share a colour; after that the colours come round again with another border style
(dashed, dotted, bold), so a pattern stays told apart by its fill *and* its outline.
Text on a fill is black or white, whichever contrasts more (WCAG relative luminance).
"""

from __future__ import annotations

import keyword
import re
import textwrap
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from petricep.compile.gaps import after_latest
from petricep.compile.net import NEG_VAR, GroupNet, Net, PatternNet, Role, Transition, gap_slot
from petricep.compile.rows import ACCEPT, RowNet
from petricep.export.colors import Swatch, pattern_swatches
from petricep.lang import ast as A
from petricep.lang import sql_ast as S
from petricep.lang.printer import conditions_text, expr_text, node_text, window_text

# node kinds
INPUT = "input"
STATE = "state"
TRANSITION = "transition"
EMIT = "emit"
OUTPUT = "output"
PLACES = (INPUT, STATE, OUTPUT)

# arc kinds
ARC_EVENT = "event"  # input place -> transition: the event token (read: every partial match may use it)
ARC_STATE = "state"  # state place -> transition: the partial match extended (or emitted)
ARC_PRODUCE = "produce"  # transition -> state or output place
ARC_INHIBIT = "inhibit"  # input place of a negated type -> the transition it blocks
ARC_COMPOSITE = "composite"  # emit transition -> input place of its RETURN type

WRAP = 40  # characters per label line


@dataclass(frozen=True)
class Node:
    id: str
    kind: str  # INPUT | STATE | TRANSITION | EMIT | OUTPUT
    label: tuple[str, ...]  # lines; the first is the name
    users: tuple[str, ...] = ()  # patterns that use this node
    cluster: str | None = None
    tooltip: str = ""
    # inscriptions for the coloured net (PNML): bound variables of a place's tokens; a
    # transition's event variable, Kleene role ("", "first", "loop") and guard (Python)
    bound: tuple[str, ...] = ()
    var: str = ""
    kleene: str = ""
    guard: str = ""
    source_side: bool = False  # input place of a primitive type: drawn on the source side

    @property
    def shared(self) -> bool:
        """Used by more than one pattern (state places and transitions of a merged net)."""
        return self.kind in (STATE, TRANSITION) and len(self.users) > 1


@dataclass(frozen=True)
class Arc:
    src: str
    dst: str
    kind: str  # ARC_*
    label: str = ""  # text shown on the arc (arc conditions, negation conditions)
    read: bool = True  # the token stays in the place (a test arc); False: consumed
    guard: str = ""  # inhibitor: the negation's conditions in Python syntax
    var: str = ""  # inhibitor: the negated variable


@dataclass(frozen=True)
class Cluster:
    id: str
    label: tuple[str, ...]
    users: tuple[str, ...] = ()


@dataclass(frozen=True)
class LegendEntry:
    pattern: str
    color: str  # the pattern's fill
    text: str  # a one-line summary of the pattern
    font: str = "#000000"  # text on the fill
    border: str = "solid"  # outline style: told apart once the colours come round again

    @classmethod
    def of(cls, pattern: str, sw: Swatch, text: str) -> LegendEntry:
        """A pattern's entry, drawn with its swatch (:func:`pattern_swatches`)."""
        return cls(pattern, sw.fill, text, sw.font, sw.border)


@dataclass(frozen=True)
class Diagram:
    title: str
    merged: bool
    nodes: tuple[Node, ...]
    arcs: tuple[Arc, ...]
    clusters: tuple[Cluster, ...]
    legend: tuple[LegendEntry, ...]
    focus: str | None = None  # a one-pattern view: that pattern (the legend also holds those sharing with it)

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def color(self, pattern: str) -> str:
        return self.entry(pattern).color

    def entry(self, pattern: str) -> LegendEntry:
        for e in self.legend:
            if e.pattern == pattern:
                return e
        raise KeyError(pattern)


# ----------------------------------------------------------------------------- helpers


def _amount(v: float | int) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _wrap(text: str, width: int = WRAP) -> list[str]:
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [text]


def py_ident(name: str) -> str:
    """A variable name as a Python identifier that snakes accepts as a variable (a letter
    first, then letters, digits or ``_``): merged names like ``a/x`` become ``a_x``, names
    snakes refuses (``__import__``, ``_x``, ``1a``) get a ``v`` in front (``v__import__``),
    keywords a ``_`` behind. Deterministic, so a guard and its arcs name the same variable."""
    out = re.sub(r"\W", "_", name) or "v"
    if not re.match(r"[A-Za-z]", out):
        out = "v" + out
    return out + "_" if keyword.iskeyword(out) else out


def _join_names(names: Sequence[str]) -> str:
    out: list[str] = []
    for n in names:
        if n not in out:
            out.append(n)
    return "/".join(out)


def _pattern_summary(p: PatternNet) -> str:
    s = p.source
    parts = [node_text(s.structure)]
    if s.partition:
        parts.append(f"[{', '.join(s.partition)}]")
    if s.strategy != A.Strategy.ANY:
        parts.append(s.strategy)
    if s.conditions:
        parts.append("where " + conditions_text(s.conditions))
    if s.window is not None:
        parts.append(f"within {window_text(s.window)}")
    if s.returns is not None:
        parts.append(f"-> {s.returns.type}")
    if s.timeout is not None:
        parts.append(f"on timeout -> {s.timeout.type}")
    if s.limit is not None:
        parts.append(f"limit {s.limit.count} per key ({s.limit.policy})")
    return " ".join(parts)


def _return_text(p: PatternNet) -> list[str]:
    if p.returns is None:
        return []
    fields = [f"{f.name} = {expr_text(f.expr)}" for f in p.returns.fields]
    return _wrap(f"RETURN {p.returns.type}({', '.join(fields)})")


class _Unit:
    """A GroupNet (merged view) or a PatternNet (separate view), seen uniformly."""

    def __init__(self, net: Net, part: GroupNet | PatternNet, prefix: str) -> None:
        self.net = net
        self.part = part
        self.prefix = prefix
        self.group = isinstance(part, GroupNet)
        self.patterns = part.patterns if isinstance(part, GroupNet) else (part.index,)
        self.bound_slots = self._bound_slots()

    # ---- who uses what
    def place_users(self, pid: int) -> tuple[int, ...]:
        part = self.part
        return part.places[pid].users if isinstance(part, GroupNet) else (part.index,)

    def trans_users(self, t: Transition) -> tuple[int, ...]:
        part = self.part
        return t.users if isinstance(part, GroupNet) else (part.index,)

    def roles(self, pid: int) -> tuple[Role, ...]:
        part = self.part
        place = part.places[pid]
        if isinstance(part, GroupNet):
            return place.roles
        if not place.accepting:
            return ()
        return (
            Role(
                part.index,
                place.final_conditions,
                place.emit_negations,
                place.pending_negations,
                part.window_value,
            ),
        )

    # ---- names
    def _bound_slots(self) -> dict[int, tuple[int, ...]]:
        part = self.part
        bound: dict[int, set[int]] = {part.start: set()}
        queue = deque([part.start])
        out_of: dict[int, list[Transition]] = {}
        for t in part.transitions:
            out_of.setdefault(t.src, []).append(t)
        while queue:
            pid = queue.popleft()
            for t in out_of.get(pid, ()):
                if t.dst not in bound:
                    bound[t.dst] = bound[pid] | {t.slot}
                    queue.append(t.dst)
        return {pid: tuple(sorted(s)) for pid, s in bound.items()}

    def names(self, users: Sequence[int], neg_type: str | None = None) -> dict[str, str]:
        """Variable names to print a condition of this unit for ``users``."""
        if not self.group:
            return {}
        pats = [self.net.patterns[u] for u in users]
        out: dict[str, str] = {}
        nslots = self.part.nslots if isinstance(self.part, GroupNet) else 0
        for s in range(nslots):
            out[f"#{s}"] = _join_names([v.name for p in pats if (v := p.var_at(s)) is not None]) or f"#{s}"
        negs = [n.var for p in pats for n in p.negations if neg_type is None or n.type == neg_type]
        out[NEG_VAR] = _join_names(negs) or "n"
        return out

    def var(self, t: Transition, users: Sequence[int]) -> tuple[str, str]:
        """(variable name, type) of the event a transition binds."""
        if not self.group:
            return t.var, t.event_type
        return self.names(users).get(t.var, t.var), t.event_type

    def is_kleene(self, t: Transition, users: Sequence[int]) -> bool:
        part = self.part
        if isinstance(part, GroupNet):  # a slot may be a Kleene list in one pattern only
            pats = [self.net.patterns[u] for u in users]
            return any((v := p.var_at(t.slot)) is not None and v.kleene for p in pats)
        return part.var(t.var).kleene

    def group_of(self, t: Transition, users: Sequence[int]) -> str | None:
        """The repeated group whose step a transition binds (issue 42), or None."""
        part = self.part
        if isinstance(part, GroupNet):
            pats = [self.net.patterns[u] for u in users]
            return next((v.group for p in pats if (v := p.var_at(t.slot)) is not None and v.group), None)
        return part.var(t.var).group

    def bound(self, pid: int) -> list[tuple[str, str, bool]]:
        """(name, type, kleene) of the variables bound in a place's tokens, in slot order."""
        part = self.part
        users = self.place_users(pid)
        if isinstance(part, PatternNet):
            vs = {v.name: v for v in part.vars}
            return [
                (n, vs[n].type, vs[n].kleene)
                for n in sorted(part.places[pid].bound, key=lambda n: vs[n].slot)
            ]
        names = self.names(users)
        out = []
        for s in self.bound_slots.get(pid, ()):
            v = next(v for u in users if (v := self.net.patterns[u].var_at(s)) is not None)
            out.append((names[f"#{s}"], v.type, v.kleene))
        return out

    def cond_text(
        self, ci: int, users: Sequence[int], neg_type: str | None = None, python: bool = False
    ) -> str:
        expr = self.part.conditions[ci]
        names = self.names(users, neg_type)
        if python:
            names = {v: py_ident(names.get(v, v)) for v in A.vars_of(expr)}
        return expr_text(expr, names, python=python)

    def slot_name(self, slot: int, users: Sequence[int]) -> str:
        """The name of the variable in ``slot`` (in a shared net, every user's)."""
        if isinstance(self.part, PatternNet):
            v = self.part.var_at(slot)
            return v.name if v is not None else f"#{slot}"
        return self.names(users).get(f"#{slot}", f"#{slot}")

    def gap_conditions(self, t: Transition) -> set[int]:
        """The guards a per-step gap compiled to (drawn as the gap's own line instead)."""
        if t.gap is None:
            return set()
        encoded, lo, hi = t.gap
        sl, events = gap_slot(encoded)
        f, named = A.POS_FIELD if events else "ts", isinstance(self.part, PatternNet)
        var = t.var if named else f"#{t.slot}"
        bases = [self.slot_name(s, ()) if named else f"#{s}" for s in (t.gap_from or (sl,))]
        wanted = {_unindexed(e) for e in after_latest(A.Attr(var, f), [A.Attr(b, f) for b in bases], lo, hi)}
        if t.kleene:  # a list's first element: its chain's conditions too (vacuous there)
            wanted |= {_unindexed(e) for e in after_latest(A.Attr(var, f), [A.Attr(var, f)], lo, hi)}
        # (a list's: ``b[1].ts - a.ts``, its chain ``b[i].ts - b[i-1].ts``, ``c.ts - b[last].ts``)
        return {ci for ci in (*t.guards, *t.iteration) if _unindexed(self.part.conditions[ci]) in wanted}

    def gap_text(self, t: Transition, users: Sequence[int]) -> str:
        """A gapped step's bound, drawn on its transition: ``60 to 300 after a``."""
        if t.gap is None:
            return ""
        encoded, lo, hi = t.gap
        sl, events = gap_slot(encoded)
        after = self.slot_name(sl, users) if not t.gap_from else "the latest of " + ", ".join(self.slot_name(s, users) for s in t.gap_from)
        return f"{_amount(lo)} to {_amount(hi)}{' events' if events else ''} after {after}"

    def window_of(self, value: float | int | None, users: Sequence[int]) -> str:
        """A window value as its pattern wrote it (``12 h``)."""
        if value is None:
            return ""
        for u in users:
            p = self.net.patterns[u]
            if p.window_value == value and p.window is not None:
                return window_text(p.window)
        return window_text(A.Window(A.WIN_TIME, value))

    def trans_windows(self, t: Transition, users: Sequence[int]) -> str:
        """A transition's window line: its pattern's window, or on a transition several
        patterns share, each user's own (``within 15 min (p1), 1 h (p2, p3)``) — the
        shared transition keeps the largest, and every pattern checks its own, so one
        pattern's window alone would hide the others'."""
        part = self.part
        if not isinstance(part, GroupNet):
            w = self.window_of(part.window_value, users)
            return f"within {w}" if w else ""
        by_text: dict[str, list[str]] = {}
        for u in users:
            p = self.net.patterns[u]
            by_text.setdefault(window_text(p.window) if p.window is not None else "", []).append(p.name)
        if len(by_text) == 1:
            (text,) = by_text
            return f"within {text}" if text else ""
        parts = [f"{text or 'no window'} ({', '.join(names)})" for text, names in by_text.items()]
        return "within " + ", ".join(parts)


# ----------------------------------------------------------------------------- build


def build_diagram(net: Net, merged: bool = True) -> Diagram:
    """The diagram data of ``net``: the shared net the runtime executes (``merged``) or
    every pattern compiled alone, one cluster each."""
    pats = net.patterns
    pname = {p.index: p.name for p in pats}
    looks = pattern_swatches([*(p.name for p in pats), *(rn.name for rn in net.rows)])
    legend = tuple(LegendEntry.of(p.name, looks[p.name], _pattern_summary(p)) for p in pats)
    nodes: dict[str, Node] = {}
    arcs: list[Arc] = []
    clusters: list[Cluster] = []

    produced = {p.output_type for p in pats if p.output_type}
    readers: dict[str, list[str]] = {}
    for p in pats:
        for t in sorted(p.input_types):
            readers.setdefault(t, []).append(p.name)
    for etype in sorted(readers):
        who = readers[etype]
        nodes[f"in.{etype}"] = Node(
            f"in.{etype}",
            INPUT,
            (etype,),
            users=tuple(who),
            tooltip=f"input place {etype} (one colour per event type); read by {', '.join(who)}",
            source_side=etype not in produced,
        )

    if merged:
        units = [_Unit(net, g, f"g{g.index}") for g in net.groups]
    else:
        units = [_Unit(net, p, p.name) for p in pats]
    parts = sum(len(_components(u.part)) if isinstance(u.part, GroupNet) else 1 for u in units) + len(net.rows)
    for unit in units:
        part = unit.part
        cluster_of: dict[int, str | None] = {}
        if isinstance(part, GroupNet):
            comps = _components(part)
            for k, comp in enumerate(comps, 1):
                if parts == 1 and len(comp) == 1:
                    cluster_of.update({i: None for i in comp})
                    continue
                cid = unit.prefix if len(comps) == 1 else f"{unit.prefix}.{k}"
                cluster_of.update({i: cid for i in comp})
                clusters.append(Cluster(cid, _group_title(part, comp, pname), tuple(pname[i] for i in comp)))
        else:
            cluster_of[part.index] = unit.prefix
            clusters.append(
                Cluster(unit.prefix, tuple(_wrap(f"{part.name}: {_pattern_summary(part)}")), (part.name,))
            )
        _add_unit(unit, cluster_of, nodes, arcs, pname)

    # complex events: emit -> output place, and into the input place of the RETURN type
    for p in pats:
        emits = [n for n in nodes.values() if n.kind == EMIT and n.users == (p.name,)]
        out_label: tuple[str, ...] = (p.name, f"-> {p.output_type}") if p.output_type else (p.name,)
        if p.timeout is not None:
            out_label += (f"timeouts -> {p.timeout.type}",)
        nodes[f"out.{p.name}"] = Node(
            f"out.{p.name}",
            OUTPUT,
            out_label,
            users=(p.name,),
            cluster=emits[0].cluster if emits else None,  # beside its emission, not in a column of all
            tooltip=f"output place of {p.name}: its complex events"
            + (f" (type {p.output_type})" if p.output_type else ""),
            bound=tuple(v.name for v in p.vars),
        )
        for e in emits:
            arcs.append(Arc(e.id, f"out.{p.name}", ARC_PRODUCE))
            if p.output_type and f"in.{p.output_type}" in nodes:
                arcs.append(Arc(e.id, f"in.{p.output_type}", ARC_COMPOSITE, label=p.output_type))

    if net.rows:  # SQL MATCH_RECOGNIZE queries: a cluster each
        legend += tuple(add_row_nets(net, looks, nodes, arcs, clusters))
    title = "merged net" if merged else "separate nets"
    return Diagram(title, merged, tuple(nodes.values()), tuple(arcs), tuple(clusters), legend)


def _components(part: GroupNet) -> list[tuple[int, ...]]:
    """The patterns of a shared net that share a place or transition, transitively (the
    start place, empty for all, does not count): each such set is drawn as one cluster, so
    patterns that merely run in one net — same key and strategy — are not shown as sharing."""
    root = {i: i for i in part.patterns}

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    users = [pl.users for pl in part.places if pl.id != part.start] + [t.users for t in part.transitions]
    for us in users:
        for u in us[1:]:
            root[find(u)] = find(us[0])
    comps: dict[int, list[int]] = {}
    for i in part.patterns:
        comps.setdefault(find(i), []).append(i)
    return [tuple(c) for c in comps.values()]


COMBINATION = {
    "front": "front combination (same partial matches)",
    "rear": "rear combination (same continuation)",
    "middle": "middle combination (same step)",
    "front+rear": "front+rear combination",
    "front+middle": "front+middle combination",
}
TITLE_PLACES = 4  # shared places named per combination in a cluster title; more are counted


def _group_title(part: GroupNet, comp: Sequence[int], pname: dict[int, str]) -> tuple[str, ...]:
    """A cluster's title: its patterns, what they share and how (paper 002's front, middle
    and rear combination, from :attr:`GroupNet.sharing`), their key and strategy."""
    names = [pname[i] for i in comp]
    key = " ".join(x for x in (f"[{', '.join(part.partition)}]" if part.partition else "", part.strategy) if x)
    if len(comp) == 1:
        return (names[0], key)
    mine = set(names)
    by_kind: dict[str, list[str]] = {}
    for kind, label, users in part.sharing:
        if set(users) <= mine:
            who = ", ".join(users) if len(users) <= 4 else f"{len(users)} patterns"
            by_kind.setdefault(kind, []).append(f"{label} ({who})")
    lines = _wrap(f"shared by {', '.join(names) if len(names) <= 6 else f'{len(names)} patterns'}")
    for kind, places in by_kind.items():
        shown = places[:TITLE_PLACES] + ([f"{len(places) - TITLE_PLACES} more"] if len(places) > TITLE_PLACES else [])
        lines += _wrap(f"{COMBINATION.get(kind, kind)}: {'; '.join(shown)}", 60)
    return (*lines, key)


def _add_unit(
    unit: _Unit, cluster_of: dict[int, str | None], nodes: dict[str, Node], arcs: list[Arc], pname: dict[int, str]
) -> None:
    """Add one shared net (or one pattern alone) to the diagram; ``cluster_of`` maps a
    pattern to the cluster of its nodes (every user of a node is in the same one)."""
    _add_state_places(unit, cluster_of, nodes, pname)
    _add_transitions(unit, cluster_of, nodes, arcs, pname)
    _add_emissions(unit, cluster_of, nodes, arcs)


def _pid(unit: _Unit, pid: int) -> str:
    return f"{unit.prefix}.p{pid}"


def _add_state_places(
    unit: _Unit, cluster_of: dict[int, str | None], nodes: dict[str, Node], pname: dict[int, str]
) -> None:
    """The unit's state places (the empty start place is not drawn)."""
    part = unit.part
    # ---- state places
    for place in part.places:
        if place.id == part.start:
            continue
        users = unit.place_users(place.id)
        bound = unit.bound(place.id)
        detail = " ".join(f"{n}{'[]' if k else ''}:{t}" for n, t, k in bound)
        lines = [place.label, *_wrap(detail)]
        who = [pname[u] for u in users]
        tip = f"state place {place.label}: partial matches binding {detail or 'nothing'}; used by {', '.join(who)}"
        if place.gap_expiry:
            ends = ", ".join(
                f"{unit.slot_name(gap_slot(sl)[0], users)} + {_amount(hi)}{' events' if sl < 0 else ''}" for sl, hi in place.gap_expiry
            )
            tip += f"; a token leaves when its step's gap ends ({ends})"
        if place.active_negations:
            negs = [part.negations[j].type for j in place.active_negations if not part.negations[j].stops]
            stops = [part.negations[j].type for j in place.active_negations if part.negations[j].stops]
            if negs:
                tip += f"; a {' or '.join(negs)} event here cancels or blocks its tokens"
            if stops:
                tip += f"; a {' or '.join(stops)} event here stops its list (UNTIL)"
        nodes[_pid(unit, place.id)] = Node(
            _pid(unit, place.id),
            STATE,
            tuple(lines),
            users=tuple(who),
            cluster=cluster_of[users[0]],
            tooltip=tip,
            bound=tuple(n for n, _, _ in bound),
        )


def _add_transitions(
    unit: _Unit, cluster_of: dict[int, str | None], nodes: dict[str, Node], arcs: list[Arc], pname: dict[int, str]
) -> None:
    """The unit's operator transitions, with their input, state and inhibitor arcs."""
    part = unit.part
    read = part.strategy == A.Strategy.ANY
    # ---- operator transitions
    for t in part.transitions:
        users = unit.trans_users(t)
        who = [pname[u] for u in users]
        var, etype = unit.var(t, users)
        kleene = ("loop" if t.take else "first") if unit.is_kleene(t, users) else ""
        op = {"": f"{etype} {var}", "first": f"{etype} {var}[1]", "loop": f"{etype}+ {var}[i]"}[kleene]
        group = unit.group_of(t, users)
        if group is not None:  # a repeated group's step: its first iteration, or the loop
            op = f"{etype} {group}[1].{var}" if kleene == "first" else f"{etype} {group}[i].{var}"
        elif t.count:  # a bounded list's counted step (T{n,m} v[]): the element it adds
            op = f"{etype} {var}[{t.count}]"
        lines = [op]
        gap = unit.gap_conditions(t)
        if t.gap is not None:
            lines += _wrap(unit.gap_text(t, users))
        conds = [unit.cond_text(ci, users) for ci in (*t.arc_conditions, *t.guards, *t.iteration) if ci not in gap]
        conds += [f"each {var}[i]: {unit.cond_text(ci, users)}" for ci, *_ in t.deferred_iteration]
        for c in conds:
            lines += _wrap(c)
        w = unit.trans_windows(t, users)
        if w:
            lines += _wrap(w)
        guard_py = [
            unit.cond_text(ci, users, python=True) for ci in (*t.arc_conditions, *t.guards, *t.iteration)
        ]
        tid = f"{unit.prefix}.t{t.id}"
        nodes[tid] = Node(
            tid,
            TRANSITION,
            tuple(lines),
            users=tuple(who),
            cluster=cluster_of[users[0]],
            tooltip=f"transition {op} (used by {', '.join(who)})",
            var=var,
            kleene=kleene,
            guard=" and ".join(f"({g})" for g in guard_py),
        )
        arc_label = " AND ".join(unit.cond_text(ci, users) for ci in t.arc_conditions)
        arcs.append(
            Arc(f"in.{etype}", tid, ARC_EVENT, label="\n".join(_wrap(arc_label)) if arc_label else "")
        )
        if t.src != part.start:
            arcs.append(Arc(_pid(unit, t.src), tid, ARC_STATE, read=read))
        arcs.append(Arc(tid, _pid(unit, t.dst), ARC_PRODUCE))
        for j in range(len(part.negations)):
            if t.blocked_by >> j & 1:
                arcs.append(_inhibitor(unit, j, tid, users))


def _add_emissions(
    unit: _Unit, cluster_of: dict[int, str | None], nodes: dict[str, Node], arcs: list[Arc]
) -> None:
    """The emissions: one per pattern and accepting place (an OR pattern has several)."""
    part = unit.part
    # ---- emission, one per pattern and accepting place (an OR pattern has several)
    accepting: dict[int, list[int]] = {}
    for place in part.places:
        for role in unit.roles(place.id):
            accepting.setdefault(role.pattern, []).append(place.id)
    for place in part.places:
        for role in unit.roles(place.id):
            p = unit.net.patterns[role.pattern]
            mine = accepting[role.pattern]
            eid = f"emit.{p.name}" if len(mine) == 1 else f"emit.{p.name}.{mine.index(place.id) + 1}"
            lines = [f"emit {p.name}"]
            for ci in role.final_conditions:
                lines += _wrap(unit.cond_text(ci, (role.pattern,)))
            w = unit.window_of(role.window, (role.pattern,))
            if w:
                lines.append(f"within {w}")
            lines += _return_text(p)
            guard_py = [unit.cond_text(ci, (role.pattern,), python=True) for ci in role.final_conditions]
            nodes[eid] = Node(
                eid,
                EMIT,
                tuple(lines),
                users=(p.name,),
                cluster=cluster_of[role.pattern],
                tooltip=f"emission of {p.name}: its own window and final conditions",
                bound=tuple(n for n, _, _ in unit.bound(place.id)),
                guard=" and ".join(f"({g})" for g in guard_py),
            )
            arcs.append(Arc(_pid(unit, place.id), eid, ARC_STATE, read=True))
            for j in dict.fromkeys((*role.emit_negations, *role.pending_negations)):
                pending = j in role.pending_negations
                arcs.append(_inhibitor(unit, j, eid, (role.pattern,), until_window_end=pending))


def _inhibitor(unit: _Unit, j: int, target: str, users: Sequence[int], until_window_end: bool = False) -> Arc:
    neg = unit.part.negations[j]
    conds = [unit.cond_text(ci, users, neg.type) for ci in neg.conditions]
    py = [unit.cond_text(ci, users, neg.type, python=True) for ci in neg.conditions]
    names = unit.names(users, neg.type)
    var = names.get(NEG_VAR, neg.var) if unit.group else neg.var
    text = f"until {neg.type} {var}" if neg.stops else f"no {neg.type} {var}"  # a stop event blocks the list's takes
    if conds:
        text += ": " + " AND ".join(conds)
    if until_window_end:
        text += " (until the window closes)"
    return Arc(
        f"in.{neg.type}",
        target,
        ARC_INHIBIT,
        label="\n".join(_wrap(text)),
        guard=" and ".join(f"({g})" for g in py),
        var=var,
    )


# ----------------------------------------------------------------------------- SQL row patterns
# SQL row-pattern nets (``MATCH_RECOGNIZE``), beside the pattern nets. Each query is one
# cluster: its state places (a token: the rows mapped so far, the last one to the place's
# variable), one transition per way a row extends a partial match — labelled with the
# variable, its DEFINE and its rank in the place's preference order — and an emission per
# place where a match may end, with the query's output, skip mode and measures. Tokens are
# coloured by the match so far (``m``); a transition appends the row (``m_i``) to it.

MATCH = ("m",)  # the colour of a row-pattern token: the rows mapped so far


def row_summary(rn: RowNet) -> str:
    q = rn.source
    part = f"PARTITION BY {', '.join(q.partition)} " if q.partition else ""
    return f"MATCH_RECOGNIZE {part}PATTERN ({S.pattern_sql(q.pattern)})"


def add_row_nets(
    net: Net, looks: dict[str, Swatch], nodes: dict[str, Node], arcs: list[Arc], clusters: list[Cluster]
) -> list[LegendEntry]:
    """Add every query of ``net`` to the diagram data; returns their legend entries."""
    legend = []
    for rn in net.rows:
        legend.append(LegendEntry.of(rn.name, looks[rn.name], row_summary(rn)))
        table = rn.table or "*"
        src = f"in.{table}"
        old = nodes.get(src)
        users = (*old.users, rn.name) if old else (rn.name,)
        nodes[src] = Node(
            src,
            INPUT,
            (table,),
            users=users,
            tooltip=f"input place {table}; read by {', '.join(users)}",
            source_side=True,
        )
        _add_query(rn, src, nodes, arcs, clusters)
    return legend


def _add_query(rn: RowNet, src: str, nodes: dict[str, Node], arcs: list[Arc], clusters: list[Cluster]) -> None:
    q = rn.source
    pre = f"r{rn.index}"
    cluster = f"{pre}.{rn.name}"
    output = "ALL ROWS PER MATCH" if q.all_rows else "ONE ROW PER MATCH"
    skip = f"SKIP {q.skip.mode.upper()}" + (f" {q.skip.var}" if q.skip.var else "")
    empty = " (may match no rows)" if ACCEPT in rn.exits[rn.start] else ""
    clusters.append(Cluster(cluster, tuple(_wrap(f"{rn.name}: {row_summary(rn)}{empty}")), (rn.name,)))
    who = (rn.name,)
    for place in rn.places:
        if place.id == rn.start:
            continue
        nodes[f"{pre}.p{place.id}"] = Node(
            f"{pre}.p{place.id}",
            STATE,
            (place.label, f"last row: {place.var}"),
            users=who,
            cluster=cluster,
            tooltip=f"state place {place.label}: partial matches whose last row is mapped to {place.var}",
            bound=MATCH,
        )
    for t in rn.transitions:
        rank = rn.exits[t.src].index(t.id) + 1
        lines = [f"row -> {t.var}", *(_wrap(S.expr_sql(t.guard)) if t.guard is not None else []), f"preference {rank}"]
        tid = f"{pre}.t{t.id}"
        nodes[tid] = Node(
            tid,
            TRANSITION,
            tuple(lines),
            users=who,
            cluster=cluster,
            tooltip=f"a row mapped to {t.var} (tried {rank}. from {rn.places[t.src].label})",
            var="m",
            kleene="first" if t.src == rn.start else "loop",
        )
        arcs.append(Arc(src, tid, ARC_EVENT))
        if t.src != rn.start:
            arcs.append(Arc(f"{pre}.p{t.src}", tid, ARC_STATE, read=False))
        arcs.append(Arc(tid, f"{pre}.p{t.dst}", ARC_PRODUCE))
    # the start place is not drawn: an empty match (from it) is noted on the cluster
    ends = [p.id for p in rn.places if ACCEPT in rn.exits[p.id] and p.id != rn.start]
    measures = [f"{m.name} = {S.expr_sql(m.expr)}" for m in q.measures]
    out = f"out.{rn.name}"
    nodes[out] = Node(
        out, OUTPUT, (rn.name,), users=who, cluster=cluster, tooltip=f"output place of {rn.name}: its matches", bound=MATCH
    )
    for n, pid in enumerate(ends, 1):
        eid = f"emit.{rn.name}" if len(ends) == 1 else f"emit.{rn.name}.{n}"
        rank = rn.exits[pid].index(ACCEPT) + 1
        lines = [f"emit {rn.name}", f"preference {rank}", output, skip]
        for m in measures:
            lines += _wrap(m)
        nodes[eid] = Node(
            eid,
            EMIT,
            tuple(lines),
            users=who,
            cluster=cluster,
            tooltip=f"a match of {rn.name} may end here; the start row's preferred match is emitted",
            bound=MATCH,
        )
        arcs.append(Arc(f"{pre}.p{pid}", eid, ARC_STATE, read=False))
        arcs.append(Arc(eid, out, ARC_PRODUCE))


def _unindexed(e: A.Expr) -> object:
    """A gap's guard with its list indices dropped (``b[i].ts - b[i-1].ts`` -> ``b.ts -
    b.ts``) and an AND/OR of them unordered, to compare with the gap it says."""
    if isinstance(e, A.BoolOp):
        return e.op, frozenset(_unindexed(o) for o in e.operands)
    if isinstance(e, A.Compare) and isinstance(e.left, A.BinOp) and e.left.op == "-":
        left, right = e.left.left, e.left.right
        if isinstance(left, A.Attr) and isinstance(right, A.Attr):
            return A.Compare(e.op, A.BinOp("-", A.Attr(left.var, left.field), A.Attr(right.var, right.field)), e.right)
    return e
