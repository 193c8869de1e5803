"""All patterns of a run -> one shared net (paper 002's front combination and beyond).

Every pattern is first compiled alone (:func:`compile_pattern`). Patterns are then
grouped by what their partial matches must agree on to be shared — partition key,
window kind, strategy — and inside a group every place gets a *structural key*: the
keys of the places and transitions that feed it, with variables renamed to slot
numbers. Places (and transitions) with equal keys hold exactly the same partial
matches whichever pattern they came from, so they are built once:

* equal prefixes of different patterns share their places (front combination: the
  paper's ``a;b;c;d`` / ``a;b;c;e``), also when windows or later conditions differ —
  shared transitions keep the largest window, each pattern re-checks its own;
* a pattern whose whole net equals another's (the same query registered twice, or
  one that is a prefix of another) shares everything and only emits under its name;
* patterns under skip-till-next-match consume partial matches when they move, so
  they share only with patterns equal in every respect (window included).

Each pattern keeps its own emission checks (final conditions, its window, negations
checked at emission) in a :class:`Role` on the places it emits from.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace

from petricep.compile.net import (
    NEG_VAR,
    AggSpec,
    GroupNet,
    KleeneInfo,
    Negation,
    Net,
    PatternNet,
    Place,
    Role,
    Transition,
)
from petricep.compile.program import Program, compile_program, extend_program
from petricep.lang import ast as A
from petricep.lang.sql_ast import MatchRecognize

# patterns, and negations, one shared net holds at most: the compiled kernel keeps them as bits
# of int64 masks (two bits spare); a wider class of compatible patterns is several nets (_chunks)
MAX_SHARED = 62

# ----------------------------------------------------------------------------- normal forms


def rename(expr: A.Expr, names: dict[str, str]) -> A.Expr:
    """The expression with variables renamed (spans dropped: they do not compare)."""
    def leaf(e: A.Expr) -> A.Expr:
        if isinstance(e, A.Attr) and e.index is not None and e.index.of:  # (a group's optional step by iteration)
            return replace(e, var=names[e.var], index=replace(e.index, of=names[e.index.of]))
        return replace(e, var=names[e.var]) if isinstance(e, (A.Attr, A.Agg)) else e

    return A.map_leaves(expr, leaf)


class _Normal:
    """One pattern's net seen through slot names, so equal structure compares equal."""

    def __init__(self, net: PatternNet, layout: dict[int, KleeneInfo]) -> None:
        self.net = net
        names = {v.name: f"#{v.slot}" for v in net.vars}
        names.update({n.var: NEG_VAR for n in net.negations})
        self.conds = [rename(c, names) for c in net.conditions]
        self.kleene = {v.slot for v in net.vars if v.kleene}
        self.neg_keys = [self._neg_key(n) for n in net.negations]
        self.layout = layout
        self._tkeys: dict[int, Hashable] = {}

    def _neg_key(self, n: Negation) -> Hashable:
        return (
            n.type,
            frozenset(self.conds[c] for c in n.conditions),
            n.prev_slots,
            n.next_slots,
            n.pushed,
            n.stops,
        )

    def bits(self, mask: int) -> frozenset[Hashable]:
        return frozenset(self.neg_keys[j] for j in range(len(self.neg_keys)) if mask >> j & 1)

    def tkey(self, t: Transition) -> Hashable:
        """Structural key of a transition (computed once per transition: every merge step
        asks again)."""
        key = self._tkeys.get(t.id)
        if key is None:
            key = self._tkeys[t.id] = self._tkey(t)
        return key

    def _tkey(self, t: Transition) -> Hashable:
        c = self.conds
        return (
            t.event_type,
            t.slot,
            t.take,
            t.slot in self.kleene,
            frozenset(c[i] for i in t.arc_conditions),
            frozenset(c[i] for i in t.guards),
            frozenset(c[i] for i in t.iteration),
            frozenset((c[d[0]], *d[1:]) for d in t.deferred_iteration),
            t.order_slots,
            self.bits(t.blocked_by),
            self.bits(t.clears),
            t.gap,
            t.gap_from,
        )

    def place_keys(self) -> list[Hashable]:
        """Structural key of every place: what feeds it, recursively (the net is a DAG
        apart from Kleene self-loops and a repeated group's loop, whose places get keys of
        their own pattern: :meth:`_back`)."""
        net = self.net
        incoming: dict[int, list[Transition]] = {p.id: [] for p in net.places}
        for t in net.transitions:
            incoming[t.dst].append(t)
        keys: dict[int, Hashable] = {}
        visiting: set[int] = set()

        def key(pid: int) -> Hashable:
            if pid in keys:
                return keys[pid]
            if pid in visiting:
                return self._back(pid)
            place = net.places[pid]
            if pid == net.start:
                k: Hashable = ("start",)
            else:
                visiting.add(pid)
                feeds = frozenset((key(t.src), self.tkey(t)) for t in incoming[pid] if t.src != pid)
                visiting.discard(pid)
                loops = frozenset(self.tkey(t) for t in incoming[pid] if t.src == pid)
                active = frozenset(
                    (self.neg_keys[j], j in place.growable_negations) for j in place.active_negations
                )
                k = ("place", feeds, loops, active, place.repeat)
            keys[pid] = k
            return k

        return [key(p.id) for p in net.places]

    def future_keys(self) -> list[Hashable]:
        """Structural key of every place by what it leads to: places with equal futures can
        be one place whose tokens keep their own patterns (rear combination)."""
        net = self.net
        outgoing: dict[int, list[Transition]] = {p.id: [] for p in net.places}
        for t in net.transitions:
            outgoing[t.src].append(t)
        keys: dict[int, Hashable] = {}
        visiting: set[int] = set()

        def key(pid: int) -> Hashable:
            if pid in keys:
                return keys[pid]
            if pid in visiting:
                return self._back(pid)
            place = net.places[pid]
            visiting.add(pid)
            leads = frozenset((self.tkey(t), key(t.dst)) for t in outgoing[pid] if t.dst != pid)
            visiting.discard(pid)
            loops = frozenset(self.tkey(t) for t in outgoing[pid] if t.dst == pid)
            active = frozenset((self.neg_keys[j], j in place.growable_negations) for j in place.active_negations)
            k: Hashable = ("future", leads, loops, active, pid == net.start, place.repeat)
            keys[pid] = k
            return k

        return [key(p.id) for p in net.places]


    def _back(self, pid: int) -> Hashable:
        """The key of a place reached again around a repeated group's loop: its own pattern's
        place, so places on (or depending on) the loop are shared by no other pattern (a
        structural key of a cycle would need a fixpoint; what leads to the group is still
        shared)."""
        return ("loop", self.net.index, pid)


class _Union:
    """Union-find over (pattern, place) nodes that never puts two places of one pattern
    together: a token in a merged place must mean one place of each pattern it serves."""

    def __init__(self) -> None:
        self.parent: dict[Hashable, Hashable] = {}
        self.patterns: dict[Hashable, set[int]] = {}
        # a place's pushed negations cancel every token in it: only places with the same
        # ones may be merged (set by the caller per node)
        self.compat: dict[Hashable, Hashable] = {}

    def find(self, x: Hashable) -> Hashable:
        if x not in self.parent:
            self.parent[x] = x
            self.patterns[x] = {x[0]}  # type: ignore[index]
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: Hashable, b: Hashable) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb and not self.patterns[ra] & self.patterns[rb] and self.compat.get(ra) == self.compat.get(rb):
            self.parent[rb] = ra
            self.patterns[ra] |= self.patterns.pop(rb)


def shifted(net: PatternNet, k: int) -> PatternNet:
    """The same net with every slot moved by ``k``, so that a sub-sequence it shares with
    another pattern sits in the same slots there (middle combination)."""
    return net if k == 0 else moved(net, lambda s: s + k)


def _to_gap(to: Callable[[int], int], encoded: int) -> int:
    """A gap entry's slot renumbered, an EVENTS gap's ``~slot`` kept so (compile/net.py gap_slot)."""
    return ~to(~encoded) if encoded < 0 else to(encoded)


def moved(net: PatternNet, to: Callable[[int], int]) -> PatternNet:
    """The same net with each slot ``s`` moved to ``to(s)`` (increasing: the variables keep
    their written order, which orders the matches of one point: emission.chain_order)."""
    return replace(
        net,
        vars=tuple(replace(v, slot=to(v.slot)) for v in net.vars),
        kleene=tuple(replace(ki, slot=to(ki.slot)) for ki in net.kleene),
        transitions=tuple(
            replace(
                t,
                slot=to(t.slot),
                order_slots=tuple(to(s) for s in t.order_slots),
                deferred_iteration=tuple((d[0], *(to(s) for s in d[1:])) for d in t.deferred_iteration),
                gap=None if t.gap is None else (_to_gap(to, t.gap[0]), t.gap[1], t.gap[2]),
                gap_from=tuple(to(s) for s in t.gap_from),
            )
            for t in net.transitions
        ),
        places=tuple(
            replace(p, gap_expiry=tuple((_to_gap(to, s), hi) for s, hi in p.gap_expiry), repeat=tuple((to(s), m) for s, m in p.repeat))
            for p in net.places
        ),
        negations=tuple(
            replace(n, prev_slots=tuple(to(s) for s in n.prev_slots), next_slots=tuple(to(s) for s in n.next_slots))
            for n in net.negations
        ),
        consume=tuple(to(s) for s in net.consume),
    )


def _placed(net: PatternNet, k: int, kinds: dict[int, bool], width: int) -> PatternNet:
    """``net`` shifted by ``k``, except that from its first slot where a Kleene list would meet
    a pattern before's event, or an event its list (``kinds``: slot -> holds a list), its
    slots go past the ``width`` slots used before: a slot of a shared net holds one kind (the
    kernel reads a list's slot as its element arena's node). The slots stay increasing."""
    lists = {ki.slot for ki in net.kleene}
    clash = next(
        (s for s in sorted({v.slot for v in net.vars}) if kinds.get(s + k, s in lists) != (s in lists)), None
    )
    if clash is None:
        return shifted(net, k)
    off = max(width, clash + k) - clash
    return moved(net, lambda s: s + k if s < clash else s + off)


def _align(nets: Sequence[PatternNet]) -> list[PatternNet]:
    """Choose each pattern's slot shift so that as many of its transitions as possible equal
    transitions of the patterns before it (a shared middle or suffix then lines up), its
    slots placed so that no list and event meet in one (:func:`_placed`).

    A shift is only tried when enough of its transitions land on an (event type, slot) some
    earlier transition has: a transition's key holds both, so the others cannot be equal. This
    bound never skips the best shift, and keeps the search linear in the patterns."""
    out: list[PatternNet] = []
    seen: set[Hashable] = set()
    seen_steps: set[tuple[str, int]] = set()
    kinds: dict[int, bool] = {}  # slot -> holds a Kleene list (as the patterns before use it)
    width = 0  # slots used by the patterns before (kept as they go)
    for net in nets:
        best = _placed(net, 0, kinds, width)
        best_norm = norm = _Normal(best, {})
        best_score = sum(1 for t in best.transitions if norm.tkey(t) in seen)
        for k in range(1, width + 1):
            bound = sum(1 for t in net.transitions if (t.event_type, t.slot + k) in seen_steps)
            if bound <= best_score:
                continue
            cand = _placed(net, k, kinds, width)
            norm = _Normal(cand, {})
            score = sum(1 for t in cand.transitions if norm.tkey(t) in seen)
            if score > best_score:
                best, best_norm, best_score = cand, norm, score
        out.append(best)
        width = max(width, max(v.slot for v in best.vars) + 1)
        lists = {ki.slot for ki in best.kleene}
        kinds.update((v.slot, v.slot in lists) for v in best.vars)
        seen.update(best_norm.tkey(t) for t in best.transitions)
        seen_steps.update((t.event_type, t.slot) for t in best.transitions)
    return out


def _class_key(p: PatternNet) -> Hashable:
    kind = p.window.kind if p.window else None
    if kind == A.WIN_DURATION:
        kind = A.WIN_TIME  # both compare timestamps
    return (p.partition, kind, p.strategy)


def _layout(nets: Sequence[PatternNet]) -> dict[int, KleeneInfo]:
    """One Kleene state layout per slot for the whole group (union of the aggregates)."""
    aggs: dict[int, list[AggSpec]] = {}
    head: dict[int, int] = {}
    for net in nets:
        for k in net.kleene:
            lst = aggs.setdefault(k.slot, [])
            lst.extend(a for a in k.aggs if a not in lst)
            head[k.slot] = max(head.get(k.slot, 1), k.head)
    return {s: KleeneInfo(s, tuple(aggs[s]), head[s]) for s in aggs}


def _max_window(values: Sequence[float | int | None]) -> float | int | None:
    return None if any(v is None for v in values) else max(v for v in values if v is not None)


class _Ids:
    """The merged net's conditions and negations, numbered as the patterns first use them:
    equal ones (after renaming variables to slots) get one id."""

    def __init__(self) -> None:
        self.conds: dict[A.Expr, int] = {}
        self.neg_ids: dict[Hashable, int] = {}
        self.negations: list[Negation] = []

    def cond(self, expr: A.Expr) -> int:
        return self.conds.setdefault(expr, len(self.conds))

    def cond_list(self, norm: _Normal, indices: Sequence[int]) -> tuple[int, ...]:
        return tuple(self.cond(norm.conds[c]) for c in indices)

    def neg(self, norm: _Normal, j: int) -> int:
        key = norm.neg_keys[j]
        if key not in self.neg_ids:
            n = norm.net.negations[j]
            self.neg_ids[key] = len(self.negations)
            self.negations.append(
                Negation(
                    len(self.negations),
                    NEG_VAR,
                    n.type,
                    self.cond_list(norm, n.conditions),
                    self.cond_list(norm, n.event_conditions),
                    n.prev_slots,
                    n.next_slots,
                    n.pushed,
                    stops=n.stops,
                )
            )
        return self.neg_ids[key]

    def bits(self, norm: _Normal, mask: int) -> int:
        out = 0
        for j in range(len(norm.net.negations)):
            if mask >> j & 1:
                out |= 1 << self.neg(norm, j)
        return out

    def conditions(self) -> tuple[A.Expr, ...]:
        return tuple(sorted(self.conds, key=self.conds.__getitem__))


@dataclass
class _PlaceDraft:
    """A place of the merged net while the patterns' places that become it are added."""

    label: str
    users: set[int] = field(default_factory=set)
    roles: list[Role] = field(default_factory=list)
    active: tuple[tuple[int, bool], ...] = ()
    fronts: set[Hashable] = field(default_factory=set)
    futures: set[Hashable] = field(default_factory=set)
    gap_expiries: set[tuple[tuple[int, float | int], ...]] = field(default_factory=set)
    gap_ends: dict[int, tuple[tuple[int, float | int], ...]] = field(default_factory=dict)
    repeat: tuple[tuple[int, str], ...] = ()


@dataclass
class _TransitionDraft:
    """A transition of the merged net while the patterns that share it are added: it keeps
    every user's window (the merged transition keeps the largest)."""

    template: Transition  # the merged transition but for id, window and users
    windows: list[float | int | None]
    users: list[int]

    def freeze(self, tid: int) -> Transition:
        return replace(self.template, id=tid, window=_max_window(self.windows), users=tuple(self.users))


Keys = tuple[list[Hashable], list[Hashable]]  # a pattern's place keys: (front, future)


def _unite_front_and_rear(norms: Sequence[_Normal], share: bool) -> tuple[_Union, dict[int, Keys]]:
    """Places are merged when they hold the same partial matches (equal front keys: front
    combination, shared tokens) or lead to the same future (equal future keys: rear
    combination, tokens kept apart by their ``users``)."""
    union = _Union()
    front_of: dict[Hashable, Hashable] = {}
    future_of: dict[Hashable, Hashable] = {}
    keys_of: dict[int, Keys] = {}
    for norm in norms:
        net = norm.net
        front, future = norm.place_keys(), norm.future_keys()
        if not share:
            front = [k if k == ("start",) else (net.index, k) for k in front]
            future = [(net.index, k) for k in future]
        keys_of[net.index] = (front, future)
        for place in net.places:  # (a place of a GREEDY / RELUCTANT list is one only with one alike)
            negs = frozenset((norm.neg_keys[j], j in place.growable_negations) for j in place.active_negations)
            union.compat[(net.index, place.id)] = (negs, place.repeat)
        for place, fk in zip(net.places, front):
            node = (net.index, place.id)
            union.union(front_of.setdefault(fk, node), node)
    for norm in norms:
        net = norm.net
        for place, uk in zip(net.places, keys_of[net.index][1]):
            if not place.has_exits:
                continue  # an output place stays the pattern's own (nothing to share after it)
            node = (net.index, place.id)
            union.union(future_of.setdefault(uk, node), node)
    return union, keys_of


def _unite_middles(norms: Sequence[_Normal], union: _Union) -> None:
    """Middle combination: places (of different patterns) that take the same next step become
    one, and so do the places that equal steps from one place lead to (to a fixpoint)."""
    steps: dict[Hashable, Hashable] = {}
    out_of: dict[tuple[int, int], list[tuple[Hashable, tuple[int, int]]]] = {}
    for norm in norms:
        net = norm.net
        for t in net.transitions:
            if t.src != t.dst:
                out_of.setdefault((net.index, t.src), []).append((norm.tkey(t), (net.index, t.dst)))
    for node, outs in out_of.items():
        step_key = frozenset(k for k, _ in outs)
        union.union(steps.setdefault(step_key, node), node)
    changed = True
    while changed:
        changed = False
        by_step: dict[tuple[Hashable, Hashable], tuple[int, int]] = {}
        for node, outs in out_of.items():
            root = union.find(node)
            for k, dst in outs:
                other = by_step.setdefault((root, k), dst)
                if union.find(other) != union.find(dst):
                    before = union.find(dst)
                    union.union(other, dst)
                    changed = changed or union.find(dst) != before


class _Drafts:
    """The merged net's places and transitions, numbered in the order the patterns reach them."""

    def __init__(self, union: _Union, ids: _Ids) -> None:
        self.union = union
        self.ids = ids
        self.root_ids: dict[Hashable, int] = {}
        self.places: dict[int, _PlaceDraft] = {}
        self.trans_ids: dict[Hashable, int] = {}
        self.transitions: list[_TransitionDraft] = []

    def add_pattern(self, norm: _Normal, keys: Keys) -> None:
        net, ids = norm.net, self.ids
        local: dict[int, int] = {}
        for place, fk, uk in zip(net.places, *keys):
            pid = self.root_ids.setdefault(self.union.find((net.index, place.id)), len(self.root_ids))
            local[place.id] = pid
            draft = self.places.setdefault(pid, _PlaceDraft(place.label))
            draft.fronts.add(fk)
            draft.futures.add(uk)
            draft.users.add(net.index)
            draft.gap_expiries.add(place.gap_expiry)
            if place.gap_expiry:
                draft.gap_ends[net.index] = place.gap_expiry
            draft.repeat = place.repeat  # (part of both keys: alike in every pattern here)
            draft.active = tuple((ids.neg(norm, j), j in place.growable_negations) for j in place.active_negations)
            if place.accepting:
                draft.roles.append(
                    Role(
                        net.index,
                        ids.cond_list(norm, place.final_conditions),
                        tuple(ids.neg(norm, j) for j in place.emit_negations),
                        tuple(ids.neg(norm, j) for j in place.pending_negations),
                        net.window_value,
                    )
                )
        for t in net.transitions:
            self._add_transition(norm, t, local[t.src], local[t.dst])

    def _add_transition(self, norm: _Normal, t: Transition, src: int, dst: int) -> None:
        net, ids = norm.net, self.ids
        key = (src, dst, norm.tkey(t))
        if key in self.trans_ids:
            d = self.transitions[self.trans_ids[key]]
            d.windows.append(net.window_value)
            d.users.append(net.index)
            return
        self.trans_ids[key] = len(self.transitions)
        template = Transition(
            id=0,
            src=src,
            dst=dst,
            event_type=t.event_type,
            var=f"#{t.slot}",
            slot=t.slot,
            take=t.take,
            arc_conditions=ids.cond_list(norm, t.arc_conditions),
            guards=ids.cond_list(norm, t.guards),
            iteration=ids.cond_list(norm, t.iteration),
            deferred_iteration=tuple((ids.cond(norm.conds[d[0]]), *d[1:]) for d in t.deferred_iteration),
            order_slots=t.order_slots,
            blocked_by=ids.bits(norm, t.blocked_by),
            clears=ids.bits(norm, t.clears),
            kleene=t.kleene,
            gap=t.gap,
            gap_from=t.gap_from,
            count=t.count,
        )
        self.transitions.append(_TransitionDraft(template, [net.window_value], [net.index]))

    def frozen_places(self, exits: set[int]) -> tuple[Place, ...]:
        out = []
        for pid in range(len(self.root_ids)):
            d = self.places[pid]
            out.append(
                Place(
                    pid,
                    d.label,
                    (),
                    bool(d.roles),
                    active_negations=tuple(j for j, _ in d.active),
                    growable_negations=tuple(j for j, g in d.active if g),
                    has_exits=pid in exits,
                    roles=tuple(d.roles),
                    users=tuple(sorted(d.users)),
                    # a token may leave early only where every pattern it serves says so
                    gap_expiry=next(iter(d.gap_expiries)) if len(d.gap_expiries) == 1 else (),
                    gap_ends=tuple(sorted(d.gap_ends.items())),
                    repeat=d.repeat,
                )
            )
        return tuple(out)

    def sharing(self, names: dict[int, str], start: int) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        """(combination, place label, patterns) of every place more than one pattern uses."""
        return tuple(
            (
                _combination(d.fronts, d.futures, len(d.users)),
                d.label,
                tuple(names[u] for u in sorted(d.users)),
            )
            for pid, d in sorted(self.places.items())
            if len(d.users) > 1 and pid != start
        )


def merge_group(index: int, nets: Sequence[PatternNet], share: bool = True) -> GroupNet:
    """Merge one group; ``nets`` must already be aligned (see :func:`merge_nets`): unite the
    places the combinations share, number the merged places and transitions, freeze them."""
    layout = _layout(nets)
    norms = [_Normal(n, layout) for n in nets]
    union, keys_of = _unite_front_and_rear(norms, share)
    if share:
        _unite_middles(norms, union)
    ids = _Ids()
    drafts = _Drafts(union, ids)
    for norm in norms:
        drafts.add_pattern(norm, keys_of[norm.net.index])
    transitions = tuple(d.freeze(i) for i, d in enumerate(drafts.transitions))
    start_pid = drafts.root_ids[union.find((nets[0].index, nets[0].start))]
    first = nets[0]
    width = max(max((v.slot for v in n.vars), default=-1) + 1 for n in nets)
    wkind = first.window.kind if first.window else None
    return GroupNet(
        index=index,
        patterns=tuple(n.index for n in nets),
        nslots=width,
        slot_kleene=tuple(layout.get(s) for s in range(width)),
        conditions=ids.conditions(),
        negations=tuple(ids.negations),
        places=drafts.frozen_places({t.src for t in transitions}),
        transitions=transitions,
        start=start_pid,
        window_kind=A.WIN_COUNT if wkind == A.WIN_COUNT else (A.WIN_TIME if wkind else None),
        window_value=_max_window([n.window_value for n in nets]),
        partition=first.partition,
        strategy=first.strategy,
        input_types=frozenset().union(*(n.input_types for n in nets)),
        sharing=drafts.sharing({n.index: n.name for n in nets}, start_pid),
        windows=tuple(n.window_value for n in nets),
        ordered_slots=_ordered_slots(nets),
    )


def _ordered_slots(nets: Sequence[PatternNet]) -> frozenset[int]:
    """GroupNet.ordered_slots: the steps' slots of every group with an optional or Kleene step."""
    out: set[int] = set()
    for n in nets:
        ordered = {v.group for v in n.vars if v.group is not None and (v.optional or v.repeats)}
        out.update(v.slot for v in n.vars if v.group in ordered)
    return frozenset(out)


def _combination(fronts: set[Hashable], futures: set[Hashable], users: int) -> str:
    """front: the patterns share the place's partial matches (equal prefixes); rear: they
    share what follows (equal continuations, tokens kept apart); middle: they share a step
    between different prefixes and different continuations; "front+..." where some of the
    patterns also share the partial matches."""
    if len(fronts) == 1:
        return "front"
    kind = "rear" if len(futures) == 1 else "middle"
    return kind if len(fronts) == users else f"front+{kind}"


def _chunks(nets: Sequence[PatternNet]) -> list[list[PatternNet]]:
    """A class of compatible patterns as shared nets of at most :data:`MAX_SHARED` patterns
    and negations each (the compiled kernel keeps a shared net's patterns and negations as
    bits of int64 masks). A class within the limit is one net, as before; a wider one is cut,
    in pattern order, into nets of about equal size. Cutting loses only sharing between the
    nets: every pattern's matches, and their order, are those it has alone (docs/SEMANTICS.md),
    whichever net holds it."""
    negations = sum(len(n.negations) for n in nets)
    if len(nets) <= MAX_SHARED and negations <= MAX_SHARED:
        return [list(nets)]
    parts = max(-(-len(nets) // MAX_SHARED), -(-negations // MAX_SHARED))
    size = -(-len(nets) // parts)  # patterns per net, the nets about equal
    out: list[list[PatternNet]] = [[]]
    held = 0  # negations of the net being filled
    for n in nets:
        if out[-1] and (len(out[-1]) >= size or held + len(n.negations) > MAX_SHARED):
            out.append([])
            held = 0
        out[-1].append(n)
        held += len(n.negations)
    return out


def merge_nets(nets: Sequence[PatternNet], share: bool = True) -> tuple[tuple[PatternNet, ...], tuple[GroupNet, ...]]:
    """Group compatible patterns and merge each group (``share=False``: one group per
    pattern), a class wider than :data:`MAX_SHARED` in several (:func:`_chunks`). Returns the
    patterns as the shared nets see them — slots possibly shifted so that shared middles line
    up — and the shared nets."""
    classes: dict[Hashable, list[PatternNet]] = {}
    levels = _levels(nets)
    for n in nets:
        classes.setdefault((levels[n.index], _class_key(n)) if share else n.index, []).append(n)
    ordered = sorted(classes.values(), key=lambda g: levels[g[0].index]) if share else list(classes.values())
    groups = [chunk for g in ordered for chunk in _chunks(g)]
    aligned = [_align(g) if share and len(g) > 1 else list(g) for g in groups]
    by_index = {n.index: n for g in aligned for n in g}
    patterns = tuple(by_index[n.index] for n in nets)
    return patterns, tuple(merge_group(i, g, share) for i, g in enumerate(aligned))


def _levels(nets: Sequence[PatternNet]) -> dict[int, int]:
    """Each pattern's depth among composite events: 0 where it reads none the run makes, else
    one more than the deepest pattern it reads from. A producer and a pattern reading its
    events never share a net, and producers' nets come first: under the tie rule either a
    timestamp group's composite events are matched by the nets after their own (ties.run_group),
    and a reader in its producer's net would never see them."""
    makers: dict[str, list[int]] = {}
    for n in nets:
        for t in n.produces:
            makers.setdefault(t, []).append(n.index)
    level: dict[int, int] = {}
    for n in nets:  # (evaluation order: producers first; patterns may not form a RETURN cycle)
        below = [level.get(m, 0) for t in n.input_types for m in makers.get(t, ()) if m != n.index]
        level[n.index] = 1 + max(below) if below else 0
    return level


def merge_program(program: Program, share: bool = True) -> Net:
    """A compiled program as one net: its pattern nets merged, its SQL queries and ARCHIVED
    splits kept as they are."""
    pnets, groups = merge_nets(program.patterns, share)
    return Net(pnets, groups, program.rows, program.history)


def build_net(
    patterns: Sequence[A.Pattern],
    share: bool = True,
    conflicts: Sequence[A.Conflict] = (),
    queries: Sequence[MatchRecognize] = (),
    push_negations: bool = True,
) -> Net:
    """All patterns (and SQL MATCH_RECOGNIZE ``queries``) of a run as one net. A pattern with
    ARCHIVED variables contributes its live part (``Net.history`` keeps the split).
    ``push_negations=False``: every negation is checked after a match is built (SASE's way;
    for comparison, see :func:`compile_pattern`)."""
    return merge_program(compile_program(patterns, conflicts, queries, push_negations), share)


def connected_patterns(
    patterns: Sequence[PatternNet], together: Sequence[Sequence[int]] = ()
) -> tuple[list[list[int]], list[tuple[int, int]]]:
    """The patterns that must run in one engine, as lists of indices into ``patterns`` (in
    order): those linked by a composite type one returns (RETURN, ON TIMEOUT) and another
    reads, or by a consumption domain -- outside such a component nothing changes a
    pattern's matches -- and those of each of ``together`` (the caller's own reason). Also
    every (producer, consumer) pair."""
    parent = list(range(len(patterns)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    producers_of: dict[str, list[int]] = {}
    for i, p in enumerate(patterns):
        for made in p.produces:
            producers_of.setdefault(made, []).append(i)
    consumed_from: list[tuple[int, int]] = []  # (producer, consumer)
    for j, q in enumerate(patterns):
        for t in q.input_types:
            for i in producers_of.get(t, ()):
                union(i, j)
                consumed_from.append((i, j))
    domains: dict[str, int] = {}
    for i, p in enumerate(patterns):
        if p.conflict is not None:
            union(domains.setdefault(p.conflict, i), i)
    for members in together:
        for i in members[1:]:
            union(members[0], i)
    components: dict[int, list[int]] = {}
    for i in range(len(patterns)):
        components.setdefault(find(i), []).append(i)
    return list(components.values()), consumed_from


def sub_net(net: Net, names: frozenset[str]) -> Net:
    """The net of ``net``'s patterns named in ``names`` alone (no SQL queries), for an engine
    that runs only those (a component of :func:`connected_patterns` or a union of them).
    Compiled again from the patterns' sources, each keeping the consumption the whole
    program decided; built once per net and subset (compiling takes milliseconds)."""
    if all(p.name in names for p in net.patterns):
        return replace(net, rows=()) if net.rows else net
    hit = _sub_nets.get((id(net), names))
    if hit is not None and hit[0] is net:
        return hit[1]
    pats = [p for p in net.patterns if p.name in names]
    program = compile_program([p.source for p in pats])
    policy = {p.name: p for p in pats}  # consumption, as the whole run's program decided it
    nets = tuple(_consuming_as(n, policy[n.name]) for n in program.patterns)
    sub = merge_program(replace(program, patterns=nets))
    if len(_sub_nets) >= 64:
        _sub_nets.clear()
    _sub_nets[(id(net), names)] = (net, sub)
    return sub


_sub_nets: dict[tuple[int, frozenset[str]], tuple[Net, Net]] = {}


def _consuming_as(n: PatternNet, merged: PatternNet) -> PatternNet:
    """``n`` (a pattern compiled alone) consuming what its copy in a merged net consumes: the
    same variables, at ``n``'s own slots (merging shifts a pattern's slots, and merging the
    sub-net shifts them again)."""
    names = [v.name for v in merged.vars if v.slot in merged.consume]
    return replace(n, consume=tuple(n.var(v).slot for v in names), conflict=merged.conflict)


def extend_net(net: Net, patterns: Sequence[A.Pattern], conflicts: Sequence[A.Conflict] = ()) -> Net:
    """``net`` with ``patterns`` added, for a running engine (``Engine.extend``). The new
    patterns share places among themselves, not with the running ones: those places already
    hold partial matches older than the new patterns. The running net's SQL queries and
    ARCHIVED splits stay; an added ARCHIVED pattern's split joins them."""
    program = extend_program(
        [p.source for p in net.patterns], [r.name for r in net.rows], patterns, conflicts, row_offset=len(net.rows)
    )
    pnets, groups = merge_nets(program.patterns)
    groups = tuple(replace(g, index=len(net.groups) + i) for i, g in enumerate(groups))
    return Net(net.patterns + pnets, net.groups + groups, net.rows + program.rows, net.history + program.history)
