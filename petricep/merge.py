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

from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any

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

# ----------------------------------------------------------------------------- normal forms


def rename(expr: A.Expr, names: dict[str, str]) -> A.Expr:
    """The expression with variables renamed (spans dropped: they do not compare)."""
    if isinstance(expr, (A.Attr, A.Agg)):
        return replace(expr, var=names[expr.var])
    if isinstance(expr, (A.BinOp, A.Compare)):
        return replace(expr, left=rename(expr.left, names), right=rename(expr.right, names))
    if isinstance(expr, A.BoolOp):
        return replace(expr, operands=tuple(rename(o, names) for o in expr.operands))
    if isinstance(expr, (A.Not, A.Neg)):
        return replace(expr, operand=rename(expr.operand, names))
    return expr


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
            frozenset((c[i], k) for i, k in t.deferred_iteration),
            t.order_slots,
            self.bits(t.blocked_by),
            self.bits(t.clears),
        )

    def place_keys(self) -> list[Hashable]:
        """Structural key of every place: what feeds it, recursively (the net is a DAG
        apart from Kleene self-loops)."""
        net = self.net
        incoming: dict[int, list[Transition]] = {p.id: [] for p in net.places}
        for t in net.transitions:
            incoming[t.dst].append(t)
        keys: dict[int, Hashable] = {}

        def key(pid: int) -> Hashable:
            if pid in keys:
                return keys[pid]
            place = net.places[pid]
            if pid == net.start:
                k: Hashable = ("start",)
            else:
                feeds = frozenset((key(t.src), self.tkey(t)) for t in incoming[pid] if t.src != pid)
                loops = frozenset(self.tkey(t) for t in incoming[pid] if t.src == pid)
                active = frozenset(
                    (self.neg_keys[j], j in place.growable_negations) for j in place.active_negations
                )
                k = ("place", feeds, loops, active)
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

        def key(pid: int) -> Hashable:
            if pid in keys:
                return keys[pid]
            place = net.places[pid]
            leads = frozenset((self.tkey(t), key(t.dst)) for t in outgoing[pid] if t.dst != pid)
            loops = frozenset(self.tkey(t) for t in outgoing[pid] if t.dst == pid)
            active = frozenset((self.neg_keys[j], j in place.growable_negations) for j in place.active_negations)
            k: Hashable = ("future", leads, loops, active, pid == net.start)
            keys[pid] = k
            return k

        return [key(p.id) for p in net.places]


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
    if k == 0:
        return net
    return replace(
        net,
        vars=tuple(replace(v, slot=v.slot + k) for v in net.vars),
        kleene=tuple(replace(ki, slot=ki.slot + k) for ki in net.kleene),
        transitions=tuple(
            replace(
                t,
                slot=t.slot + k,
                order_slots=tuple(s + k for s in t.order_slots),
                deferred_iteration=tuple((c, s + k) for c, s in t.deferred_iteration),
            )
            for t in net.transitions
        ),
        negations=tuple(
            replace(n, prev_slots=tuple(s + k for s in n.prev_slots), next_slots=tuple(s + k for s in n.next_slots))
            for n in net.negations
        ),
        consume=tuple(s + k for s in net.consume),
    )


def _align(nets: Sequence[PatternNet]) -> list[PatternNet]:
    """Choose each pattern's slot shift so that as many of its transitions as possible equal
    transitions of the patterns before it (a shared middle or suffix then lines up).

    A shift is only tried when enough of its transitions land on an (event type, slot) some
    earlier transition has: a transition's key holds both, so the others cannot be equal. This
    bound never skips the best shift, and keeps the search linear in the patterns."""
    out: list[PatternNet] = []
    seen: set[Hashable] = set()
    seen_steps: set[tuple[str, int]] = set()
    width = 0  # slots used by the patterns before (kept as they go)
    for net in nets:
        norm = _Normal(net, {})
        best, best_norm = net, norm
        best_score = sum(1 for t in net.transitions if norm.tkey(t) in seen)
        for k in range(1, width + 1):
            bound = sum(1 for t in net.transitions if (t.event_type, t.slot + k) in seen_steps)
            if bound <= best_score:
                continue
            cand = shifted(net, k)
            norm = _Normal(cand, {})
            score = sum(1 for t in cand.transitions if norm.tkey(t) in seen)
            if score > best_score:
                best, best_norm, best_score = cand, norm, score
        out.append(best)
        width = max(width, max(v.slot for v in best.vars) + 1)
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


def merge_group(index: int, nets: Sequence[PatternNet], share: bool = True) -> GroupNet:
    """Merge one group; ``nets`` must already be aligned (see :func:`merge`)."""
    layout = _layout(nets)
    norms = [_Normal(n, layout) for n in nets]
    place_label: dict[int, str] = {}
    place_users: dict[int, set[int]] = {}
    place_roles: dict[int, list[Role]] = {}
    place_active: dict[int, tuple[tuple[int, bool], ...]] = {}
    cond_ids: dict[A.Expr, int] = {}
    neg_ids: dict[Hashable, int] = {}
    negations: list[Negation] = []
    trans_ids: dict[Hashable, int] = {}
    trans: list[dict[str, Any]] = []

    def cond(expr: A.Expr) -> int:
        return cond_ids.setdefault(expr, len(cond_ids))

    def neg(norm: _Normal, j: int) -> int:
        key = norm.neg_keys[j]
        if key not in neg_ids:
            n = norm.net.negations[j]
            neg_ids[key] = len(negations)
            negations.append(
                Negation(
                    len(negations),
                    NEG_VAR,
                    n.type,
                    tuple(cond(norm.conds[c]) for c in n.conditions),
                    tuple(cond(norm.conds[c]) for c in n.event_conditions),
                    n.prev_slots,
                    n.next_slots,
                    n.pushed,
                )
            )
        return neg_ids[key]

    def bits(norm: _Normal, mask: int) -> int:
        out = 0
        for j in range(len(norm.net.negations)):
            if mask >> j & 1:
                out |= 1 << neg(norm, j)
        return out

    # places are merged when they hold the same partial matches (equal front keys: front
    # combination, shared tokens) or lead to the same future (equal future keys: rear
    # combination, tokens kept apart by their `users`)
    union = _Union()
    front_of: dict[Hashable, Hashable] = {}
    future_of: dict[Hashable, Hashable] = {}
    keys_of: dict[int, tuple[list[Hashable], list[Hashable]]] = {}
    for norm in norms:
        net = norm.net
        front, future = norm.place_keys(), norm.future_keys()
        if not share:
            front = [k if k == ("start",) else (net.index, k) for k in front]
            future = [(net.index, k) for k in future]
        keys_of[net.index] = (front, future)
        for place in net.places:
            union.compat[(net.index, place.id)] = frozenset(
                (norm.neg_keys[j], j in place.growable_negations) for j in place.active_negations
            )
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
    if share:
        # middle combination: places (of different patterns) that take the same next step
        # become one, and so do the places that equal steps from one place lead to
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
    root_ids: dict[Hashable, int] = {}
    place_fronts: dict[int, set[Hashable]] = {}
    place_futures: dict[int, set[Hashable]] = {}
    for norm in norms:
        net = norm.net
        front, future = keys_of[net.index]
        local: dict[int, int] = {}
        for place, fk, uk in zip(net.places, front, future):
            pid = root_ids.setdefault(union.find((net.index, place.id)), len(root_ids))
            local[place.id] = pid
            place_fronts.setdefault(pid, set()).add(fk)
            place_futures.setdefault(pid, set()).add(uk)
            if pid not in place_label:
                place_label[pid] = place.label
            place_users.setdefault(pid, set()).add(net.index)
            place_active[pid] = tuple((neg(norm, j), j in place.growable_negations) for j in place.active_negations)
            if place.accepting:
                place_roles.setdefault(pid, []).append(
                    Role(
                        net.index,
                        tuple(cond(norm.conds[c]) for c in place.final_conditions),
                        tuple(neg(norm, j) for j in place.emit_negations),
                        tuple(neg(norm, j) for j in place.pending_negations),
                        net.window_value,
                    )
                )
        for t in net.transitions:
            key = (local[t.src], local[t.dst], norm.tkey(t))
            if key not in trans_ids:
                trans_ids[key] = len(trans)
                trans.append(
                    dict(
                        src=local[t.src],
                        dst=local[t.dst],
                        event_type=t.event_type,
                        var=f"#{t.slot}",
                        slot=t.slot,
                        take=t.take,
                        arc_conditions=tuple(cond(norm.conds[c]) for c in t.arc_conditions),
                        guards=tuple(cond(norm.conds[c]) for c in t.guards),
                        iteration=tuple(cond(norm.conds[c]) for c in t.iteration),
                        deferred_iteration=tuple((cond(norm.conds[c]), k) for c, k in t.deferred_iteration),
                        order_slots=t.order_slots,
                        blocked_by=bits(norm, t.blocked_by),
                        clears=bits(norm, t.clears),
                        kleene=t.kleene,
                        windows=[net.window_value],
                        users=[net.index],
                    )
                )
            else:
                d = trans[trans_ids[key]]
                d["windows"].append(net.window_value)
                d["users"].append(net.index)

    transitions = tuple(
        Transition(
            id=i,
            **{k: v for k, v in d.items() if k not in ("windows", "users")},
            window=_max_window(d["windows"]),
            users=tuple(d["users"]),
        )
        for i, d in enumerate(trans)
    )
    exits = {t.src for t in transitions}
    names = {n.index: n.name for n in nets}
    start_pid = root_ids[union.find((nets[0].index, nets[0].start))]
    places = []
    for pid in range(len(root_ids)):
        active = place_active.get(pid, ())
        roles = tuple(place_roles.get(pid, ()))
        places.append(
            Place(
                pid,
                place_label[pid],
                (),
                bool(roles),
                active_negations=tuple(j for j, _ in active),
                growable_negations=tuple(j for j, g in active if g),
                has_exits=pid in exits,
                roles=roles,
                users=tuple(sorted(place_users[pid])),
            )
        )
    shared = tuple(
        (
            _combination(place_fronts[pid], place_futures[pid], len(place_users[pid])),
            place_label[pid],
            tuple(names[u] for u in sorted(place_users[pid])),
        )
        for pid in range(len(root_ids))
        if len(place_users[pid]) > 1 and pid != start_pid
    )
    first = nets[0]
    width = max(max((v.slot for v in n.vars), default=-1) + 1 for n in nets)
    wkind = first.window.kind if first.window else None
    return GroupNet(
        index=index,
        patterns=tuple(n.index for n in nets),
        nslots=width,
        slot_kleene=tuple(layout.get(s) for s in range(width)),
        conditions=tuple(sorted(cond_ids, key=cond_ids.__getitem__)),
        negations=tuple(negations),
        places=tuple(places),
        transitions=transitions,
        start=start_pid,
        window_kind=A.WIN_COUNT if wkind == A.WIN_COUNT else (A.WIN_TIME if wkind else None),
        window_value=_max_window([n.window_value for n in nets]),
        partition=first.partition,
        strategy=first.strategy,
        input_types=frozenset().union(*(n.input_types for n in nets)),
        sharing=shared,
        windows=tuple(n.window_value for n in nets),
    )


def _combination(fronts: set[Hashable], futures: set[Hashable], users: int) -> str:
    """front: the patterns share the place's partial matches (equal prefixes); rear: they
    share what follows (equal continuations, tokens kept apart); middle: they share a step
    between different prefixes and different continuations; "front+..." where some of the
    patterns also share the partial matches."""
    if len(fronts) == 1:
        return "front"
    kind = "rear" if len(futures) == 1 else "middle"
    return kind if len(fronts) == users else f"front+{kind}"


def merge_nets(nets: Sequence[PatternNet], share: bool = True) -> tuple[tuple[PatternNet, ...], tuple[GroupNet, ...]]:
    """Group compatible patterns and merge each group (``share=False``: one group per
    pattern). Returns the patterns as the shared nets see them — slots possibly shifted so
    that shared middles line up — and the shared nets."""
    classes: dict[Hashable, list[PatternNet]] = {}
    for n in nets:
        classes.setdefault(_class_key(n) if share else n.index, []).append(n)
    aligned = [_align(g) if share and len(g) > 1 else list(g) for g in classes.values()]
    by_index = {n.index: n for g in aligned for n in g}
    patterns = tuple(by_index[n.index] for n in nets)
    return patterns, tuple(merge_group(i, g, share) for i, g in enumerate(aligned))


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
