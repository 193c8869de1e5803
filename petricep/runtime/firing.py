"""The token-firing loop of one shared net (a group of merged patterns) over per-key markings.

:class:`GroupRuntime` holds what is compiled once per process (closures from the
net's expression AST, transitions indexed by event type); all mutable state lives in
:class:`~petricep.runtime.state.Partition` objects passed in, one per key value.
Patterns that share the net differ only in their :class:`Role` at the places they emit
from: their own window, final conditions and negations checked at emission.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from petricep.compile.net import NEG_VAR, GroupNet, KleeneInfo, Role, Transition, repeat_rules
from petricep.events import Event
from petricep.lang import ast as A
from petricep.runtime.expr import K_FIRST, K_LAST, as_condition, compile_expr, kleene_start, kleene_take
from petricep.runtime.limits import LimitSpec, prune, uncount
from petricep.runtime.state import INF, Partition, Token, gap_over, gap_time, root_token

Cond = Callable[[Any, Any], bool]



def event_key(e: Event, composite: bool) -> int:
    """Position key for contiguity: input events 2*pos, composite events right after their emitter."""
    return 2 * e.pos + (1 if composite else 0)


def pattern_bits(net: GroupNet) -> dict[int, int]:
    """The patterns of a shared net as bits of a token's ``users``."""
    return {pi: 1 << k for k, pi in enumerate(net.patterns)}


class GroupRuntime:
    """One shared net, ready to fire: built by :func:`petricep.runtime.build.build_runtime`.
    This interpreter is the reference the compiled kernel is checked against."""

    def __init__(
        self,
        net: GroupNet,
        tie: str = "arrival",
        limits: list[LimitSpec] | None = None,
        timeout_mask: int = 0,
        place_stats: Any = None,
    ) -> None:
        """Event time: ``timeout_mask``, the patterns (bits) whose partial matches time out into
        events; ``limits``, the patterns with a LIMIT on live partial matches. ``place_stats``
        (with spilling): how partial matches advance, per place."""
        self.net = net
        self.tie = tie
        # the tie rule's test of a (partial match, event) pair, chosen once (None: arrival)
        self.order_ok: Callable[[Transition, Token, Event], bool] | None = _ORDER_OK.get(tie)
        # when a negative event counts as after a bound one: by arrival, else by timestamp
        self.after: Callable[[Event, Event], bool] = _after_seq if tie == "arrival" else _after_ts
        self.strategy = net.strategy
        self.stnm = net.strategy == A.Strategy.NEXT
        self.contiguity = net.strategy.contiguous
        # whose last input event breaks contiguity: the whole stream's, or the key's
        self.stream_floor = net.strategy == A.Strategy.STRICT or not net.partition
        self.nslots = net.nslots
        self.count_window = net.window_kind == A.WIN_COUNT
        self.w = net.window_value
        self.places = net.places
        # per place: the per-step gaps ahead of its tokens (issue 42), None where there are none
        self.gap_expiry: list[tuple[tuple[int, Any], ...] | None] = [p.gap_expiry or None for p in net.places]
        self.has_gaps = any(self.gap_expiry)
        # per place: its GREEDY / RELUCTANT rules (issue 42), None where there are none
        self.repeat: list[list[tuple[frozenset[int], bool, bool]] | None] = [repeat_rules(p.repeat) or None for p in net.places]
        self.key_attr: str | None = net.partition[0] if len(net.partition) == 1 else None
        self._compile_conditions(net)
        self._index_transitions(net)
        self.root = root_token(self.nslots, net.start, self.all_users)
        # who emits where: changes when patterns are removed from a running engine
        self.roles: list[tuple[Role, ...]] = [p.roles for p in net.places]
        # event time: patterns whose partial matches time out into events, and patterns with
        # a LIMIT on live partial matches
        self.timeout_mask = timeout_mask
        self.limits: list[LimitSpec] = limits or []
        self.limit_mask = sum(spec.bit for spec in self.limits)
        self.watch_mask = timeout_mask | self.limit_mask  # either
        self.place_stats: Any = place_stats  # with spilling: PlaceStats (how partial matches advance)
        # per place: the patterns that emit from it
        self.emit_bits = [sum(self.bit[r.pattern] for r in {r.pattern: r for r in roles}.values()) for roles in self.roles]
        self.role_groups = self._group_roles()

    def _compile_conditions(self, net: GroupNet) -> None:
        """The net's conditions as closures: on the slots, on input arcs, on negated events."""
        slots = {f"#{i}": i for i in range(net.nslots)}
        self.kinfo: dict[int, KleeneInfo] = {i: k for i, k in enumerate(net.slot_kleene) if k is not None}
        kleene_by_name = {f"#{i}": k for i, k in self.kinfo.items()}
        self.slots_by_name = slots
        self.kleene_by_name = kleene_by_name
        self.conds: list[Cond] = [as_condition(compile_expr(e, slots, kleene_by_name, NEG_VAR)) for e in net.conditions]
        self.iter_slot: dict[int, int] = {}
        for ci, e in enumerate(net.conditions):
            v = A.iteration_var(e)
            if v is not None:
                self.iter_slot[ci] = slots[v]
        # single-event conditions hoisted onto input arcs: evaluated on (event,) alone
        self.arc: dict[int, list[Cond]] = {}
        for tr in net.transitions:
            self.arc[tr.id] = [
                as_condition(compile_expr(net.conditions[ci], {tr.var: 0}, {}, None)) for ci in tr.arc_conditions
            ]
        self.neg_event_conds: list[list[Cond]] = [
            [as_condition(compile_expr(net.conditions[ci], {}, {}, NEG_VAR)) for ci in n.event_conditions]
            for n in net.negations
        ]
        self.neg_conds: list[list[Cond]] = [[self.conds[ci] for ci in n.conditions] for n in net.negations]

    def _index_transitions(self, net: GroupNet) -> None:
        """Transitions by event type and source place, negations by type and place, and the
        patterns each transition serves (as bits of a token's ``users``)."""
        by_type: dict[str, dict[int, list[Transition]]] = {}
        for tr in net.transitions:
            by_type.setdefault(tr.event_type, {}).setdefault(tr.src, []).append(tr)
        self.by_type: dict[str, list[tuple[int, list[Transition]]]] = {t: list(d.items()) for t, d in by_type.items()}
        self.guarded: dict[tuple[int, str], bool] = {
            (src, t): any(self.arc[tr.id] for tr in trs) for t, d in by_type.items() for src, trs in d.items()
        }
        self.removed: set[int] = set()
        self.negs_by_type: dict[str, list[int]] = {}
        for n in net.negations:
            self.negs_by_type.setdefault(n.type, []).append(n.index)
        # the stop events' negations (UNTIL): a token they block still goes on (and times out)
        self.stop_mask = sum(1 << n.index for n in net.negations if n.stops)
        self.active_places: dict[int, list[int]] = {}
        for p in net.places:
            for j in p.active_negations:
                self.active_places.setdefault(j, []).append(p.id)
        self.bit = pattern_bits(net)
        self.all_users = (1 << len(net.patterns)) - 1
        self.tr_mask = [sum(self.bit[u] for u in set(tr.users)) if tr.users else self.all_users for tr in net.transitions]
        # per-pattern windows where a shared transition's users disagree (checked per pattern)
        windows = dict(zip(net.patterns, net.windows)) if net.windows else {}
        self.tr_windows: list[list[tuple[int, Any]] | None] = []
        for tr in net.transitions:
            by_w: dict[Any, int] = {}
            for u in set(tr.users):
                by_w[windows.get(u, tr.window)] = by_w.get(windows.get(u, tr.window), 0) | self.bit[u]
            self.tr_windows.append([(mask, w) for w, mask in by_w.items()] if len(by_w) > 1 else None)
        # per place: the patterns that can extend a token there (a shared token is a partial
        # match of a pattern only where that pattern goes on)
        self.exit_bits = [0] * len(net.places)
        for tr in net.transitions:
            self.exit_bits[tr.src] |= self.tr_mask[tr.id]

    def remove_pattern(self, index: int) -> bool:
        """Stop serving pattern ``index``: drop its roles and the transitions only it used.
        Returns whether any pattern is left in this net."""
        self.roles = [tuple(r for r in roles if r.pattern != index) for roles in self.roles]
        self.role_groups = self._group_roles()
        live = set(self.net.patterns) - {index} - self.removed
        self.removed.add(index)
        bit = self.bit[index]
        self.tr_mask = [m & ~bit for m in self.tr_mask]
        for etype, groups in list(self.by_type.items()):
            kept = [(src, [t for t in trs if self.tr_mask[t.id]]) for src, trs in groups]
            self.by_type[etype] = [(src, trs) for src, trs in kept if trs]
        return bool(live)

    def _group_roles(self) -> list[list[tuple[int, tuple[Role, ...]]]]:
        """Per place, its emitting roles grouped by what they check at emission (final
        conditions, negations, window), with the patterns of each group as a bitmask: a
        group checks once per token (one query registered many times is one group)."""
        out = []
        for roles in self.roles:
            groups: dict[tuple[Any, ...], list[Role]] = {}
            for r in roles:
                groups.setdefault((r.final_conditions, r.emit_negations, r.window), []).append(r)
            out.append([(sum({self.bit[r.pattern] for r in g}), tuple(g)) for g in groups.values()])
        return out

    # ------------------------------------------------------------------ state

    def floor(self, part: Partition, stream_key: float) -> float:
        """Contiguity: partial matches whose last event is before this position key were
        interrupted (``stream_key``: the whole stream's last input event's)."""
        return stream_key if self.stream_floor else part.last_input_key

    def new_partition(self) -> Partition:
        return Partition(len(self.net.places), len(self.net.negations))

    def expired(self, t: Token, e: Event) -> bool:
        """The token can never again be extended: its window has passed ``e``."""
        if self.has_gaps and self.gap_passed(t, e):
            return True
        w = self.w
        if w is None:
            return False
        if self.count_window:
            return bool(e.pos - t.first_pos >= w)
        return bool(e.ts - t.first_ts > w)

    def gap_passed(self, t: Token, e: Event) -> bool:
        """A per-step gap ahead of ``t`` has ended before ``e`` (in time, or in positions for
        a gap in EVENTS): no event from ``e`` on can bind that step, so the partial match has
        no future (it leaves before its window)."""
        gaps = self.gap_expiry[t.place]
        return gaps is not None and gap_over(t.slots, gaps, e.ts, e.pos)

    def gap_due(self, t: Token) -> Any:
        """When the earliest gap in time ahead of ``t`` ends (INF: none; a gap in EVENTS,
        under a count window, has no time, and this index is not kept there)."""
        gaps = self.gap_expiry[t.place]
        if gaps is None:
            return INF
        return min((gap_time(t.slots[sl]) + hi for sl, hi in gaps if sl >= 0), default=INF)

    # ------------------------------------------------------------------ firing

    def fire(self, tr: Transition, t: Token, e: Event, contiguity_floor: float, composite: bool) -> Token | None:
        """Fire ``tr`` with partial match ``t`` and event ``e``; the new token or None."""
        if t.blocked & tr.blocked_by:
            return None
        users = t.users & self.tr_mask[tr.id]
        if not users:
            return None
        slots = t.slots
        if t.event is not None:
            w = tr.window
            if w is not None:
                if self.count_window:
                    if max(t.last_pos, e.pos) - min(t.first_pos, e.pos) >= w:
                        return None
                elif e.ts - t.first_ts > w:
                    return None
            per_pattern = self.tr_windows[tr.id]
            if per_pattern is not None:  # users disagree on the window: keep those it admits
                admitted = 0
                for mask, pw in per_pattern:
                    if pw is None:
                        admitted |= mask
                    elif self.count_window:
                        if max(t.last_pos, e.pos) - min(t.first_pos, e.pos) < pw:
                            admitted |= mask
                    elif e.ts - t.first_ts <= pw:
                        admitted |= mask
                users &= admitted
                if not users:
                    return None
            if self.contiguity and t.last_key < contiguity_floor:
                return None
            order_ok = self.order_ok
            if order_ok is not None and not order_ok(tr, t, e):
                return None
        sl = tr.slot
        new = list(slots)
        if tr.take:
            new[sl] = kleene_take(self.kinfo[sl], slots[sl], e)
        elif tr.kleene:
            new[sl] = kleene_start(self.kinfo[sl], e)
        else:
            new[sl] = e
        s = tuple(new)
        conds = self.conds
        for ci in tr.guards:
            if not conds[ci](s, None):
                return None
        for ci in tr.iteration:
            if not conds[ci](s, None):
                return None
        if t.event is None:
            nt = Token(s, t, e, sl, tr.dst, e.ts, e.ts, e.pos, e.pos, event_key(e, composite), t.blocked & ~tr.clears, users)
        else:
            nt = Token(
                s,
                t,
                e,
                sl,
                tr.dst,
                min(t.first_ts, e.ts),
                max(t.last_ts, e.ts),
                min(t.first_pos, e.pos),
                max(t.last_pos, e.pos),
                max(t.last_key, event_key(e, composite)),
                t.blocked & ~tr.clears,
                users,
            )
        for d in tr.deferred_iteration:
            if not (self.check_elements(d[0], d[1], nt) if len(d) == 2 else self.check_iterations(d, nt)):
                return None
        if self.timeout_mask:
            t.extended = getattr(t, "extended", 0) | users
        return nt

    def check_elements(self, ci: int, kslot: int, t: Token) -> bool:
        """Check an iteration condition for every element of a Kleene list (chain walk)."""
        elems = [ev for sl, ev in t.chain() if sl == kslot]
        info = self.kinfo[kslot]
        base = list(t.slots)
        k: tuple[Any, ...] | None = None
        cond = self.conds[ci]
        for ev in elems:
            k = kleene_start(info, ev) if k is None else kleene_take(info, k, ev)
            base[kslot] = k
            if not cond(tuple(base), None):
                return False
        return True

    def check_iterations(self, deferred: tuple[int, ...], t: Token) -> bool:
        """A repeated group's iteration condition for every iteration so far (compile/groups.py
        replay): the steps' lists rebuilt along the chain, checked after each event of the
        step it is checked on, as that step's own check would have seen them."""
        ci, at, *members = deferred
        steps = set(members)
        base = list(t.slots)
        for sl in members:
            base[sl] = None
        cond = self.conds[ci]
        for sl, ev in t.chain():
            if sl in steps:
                k = base[sl]
                base[sl] = kleene_start(self.kinfo[sl], ev) if k is None else kleene_take(self.kinfo[sl], k, ev)
                if sl == at and not cond(tuple(base), None):
                    return False
        return True

    def step(
        self, part: Partition, e: Event, contiguity_floor: float, composite: bool, accepted: list[Token]
    ) -> list[Token]:
        """Extend every partial match of ``part`` by ``e``; returns new tokens (not yet stored).

        Tokens reaching an accepting place are appended to ``accepted``."""
        created: list[Token] = []
        groups = self.by_type.get(e.type)
        if not groups:
            return created
        start = self.net.start
        marking = part.marking
        arc = self.arc
        w = self.w
        count_window = self.count_window
        gap_expiry = self.gap_expiry if self.has_gaps else None
        repeat = self.repeat
        for src, trs in groups:
            # no list built per event when no transition here has input-arc guards
            enabled = [tr for tr in trs if all(f((e,), None) for f in arc[tr.id])] if self.guarded[src, e.type] else trs
            if src == start:
                for tr in enabled:
                    nt = self.fire(tr, self.root, e, contiguity_floor, composite)
                    if nt is not None:
                        created.append(nt)
                if src == start and not marking[src]:
                    continue
            tokens = marking[src]
            if not tokens:
                continue
            keep = []
            for t in tokens:
                if not t.alive:
                    continue
                if w is not None:  # expired: its window has passed e (inlined GroupRuntime.expired)
                    if count_window:
                        if e.pos - t.first_pos >= w:
                            continue
                    elif e.ts - t.first_ts > w:
                        continue
                if gap_expiry is not None and gap_expiry[src] is not None and self.gap_passed(t, e):
                    continue
                if self.contiguity and t.last_key < contiguity_floor:
                    continue
                moved = 0
                rule = repeat[src]
                if rule is None:
                    fired: Iterable[Token | None] = (self.fire(tr, t, e, contiguity_floor, composite) for tr in enabled)
                else:
                    chosen = [self.fire(tr, t, e, contiguity_floor, composite) for tr in enabled]
                    _prefer(rule, enabled, chosen)
                    fired = chosen
                for nt in fired:
                    if nt is not None:
                        created.append(nt)
                        moved |= nt.users
                        if self.place_stats is not None:
                            self.place_stats.advanced(t.place, e.ts - t.last_ts)
                if moved and self.stnm:
                    # skip-till-next-match: the partial match is consumed for the patterns
                    # that moved, and stays for the others
                    t.users &= ~moved
                    if self.limits:
                        uncount(part, t, moved, self.limits)
                    if not t.users:
                        continue
                keep.append(t)
            marking[src] = keep
        for nt in created:
            if self.roles[nt.place]:
                accepted.append(nt)
        return created

    def store(self, part: Partition, created: list[Token]) -> Any:
        """Keep the new partial matches that can still go on; returns the earliest window
        start (ts, or pos under a count window) among them, None if none was kept."""
        places = self.places
        first: Any = None
        for nt in created:
            if places[nt.place].has_exits:
                part.marking[nt.place].append(nt)
                f = nt.first_pos if self.count_window else nt.first_ts
                if first is None or f < first:
                    first = f
                if self.place_stats is not None:
                    self.place_stats.created[nt.place] += 1
        return first

    @property
    def indexed(self) -> bool:
        """Whether sweeping this net's markings can follow the engine's expiry index (only
        partitions whose earliest window has passed are visited): the sweep of a windowed
        net then only drops what has expired. Contiguity and LIMIT quotas depend on every
        event and need every partition swept."""
        return self.w is not None and not self.contiguity and not self.limits

    def due(self, part: Partition) -> Any:
        """The earliest stream point at which sweeping ``part`` could drop something: a partial
        match's window, a buffered negative event's, a waiting match's (INF: never)."""
        w: Any = self.w
        count = self.count_window
        due: Any = INF
        gaps = self.has_gaps and not count  # (a count window's points are positions: a gap's end, a time, is not one)
        for tokens in part.marking:
            for t in tokens:
                d = (t.first_pos if count else t.first_ts) + w
                if gaps:
                    d = min(d, self.gap_due(t))
                if d < due:
                    due = d
        for buf in part.buffers:
            for x in buf:
                d = (x.pos if count else x.ts) + w
                if d < due:
                    due = d
        for t, role in part.pending:
            if role.window is not None:
                d = (t.first_pos if count else t.first_ts) + role.window
                if d < due:
                    due = d
        return due

    # ------------------------------------------------------------------ emission

    def final_ok(self, t: Token, role: Role) -> bool:
        """The role's own window and the conditions decidable only on the complete match."""
        w = role.window
        if w is not None:
            if self.count_window:
                if t.last_pos - t.first_pos >= w:
                    return False
            elif t.last_ts - t.first_ts > w:
                return False
        for ci in role.final_conditions:
            ks = self.iter_slot.get(ci)
            if ks is not None:
                if not self.check_elements(ci, ks, t):
                    return False
            elif not self.conds[ci](t.slots, None):
                return False
        return True

    def _last_of(self, slots: tuple[Any, ...], which: tuple[int, ...]) -> Event | None:
        best: Event | None = None
        for sl in which:
            v = slots[sl]
            if v is None:
                continue
            ev = v[K_LAST] if type(v) is tuple else v
            if best is None or ev.seq > best.seq:
                best = ev
        return best

    def _first_of(self, slots: tuple[Any, ...], which: tuple[int, ...]) -> Event | None:
        best: Event | None = None
        for sl in which:
            v = slots[sl]
            if v is None:
                continue
            ev = v[K_FIRST] if type(v) is tuple else v
            if best is None or ev.seq < best.seq:
                best = ev
        return best

    def violates(self, j: int, t: Token, x: Event, w: float | int | None = None) -> bool:
        """Whether negative event ``x`` invalidates match/partial match ``t`` for negation j
        (``w``: the window that bounds a negation at the start or end of its SEQ)."""
        neg = self.net.negations[j]
        slots = t.slots
        # P, Q: the nearest steps bound on each side (beside optional steps a match may leave
        # out, the slots of the steps up to a required one: compiler._neighbours); none bound
        # on a side (optional steps only, all left out): the window's bound
        last_p = self._last_of(slots, neg.prev_slots) if neg.prev_slots else None
        if last_p is not None:
            if not self.after(x, last_p):
                return False
        elif w is not None:
            if self.count_window:
                if x.pos <= t.last_pos - w:
                    return False
            elif x.ts < t.last_ts - w:
                return False
        first_q = self._first_of(slots, neg.next_slots) if neg.next_slots else None
        if first_q is not None:
            if not self.after(first_q, x):
                return False
        elif w is not None:
            if self.count_window:
                if x.pos >= t.first_pos + w:
                    return False
            elif x.ts > t.first_ts + w:
                return False
        for c in self.neg_conds[j]:
            if not c(slots, x):
                return False
        return not t.contains(x)

    def emission_ok(self, part: Partition, t: Token, role: Role) -> bool:
        if not self.final_ok(t, role):
            return False
        for j in role.emit_negations:
            for x in part.buffers[j]:
                if self.violates(j, t, x, role.window):
                    return False
        return True

    # ------------------------------------------------------------------ negation

    def negative(self, part: Partition, x: Event) -> list[int]:
        """Record ``x`` as a negative event; cancel pending matches it invalidates.

        Returns the pushed negations whose token cancellation is due (immediately
        under the arrival tie rule, at the end of the timestamp group otherwise)."""
        due = []
        for j in self.negs_by_type.get(x.type, ()):
            if not all(f(None, x) for f in self.neg_event_conds[j]):
                continue
            neg = self.net.negations[j]
            if not neg.pushed:
                part.buffers[j].append(x)
            if part.pending:
                for t, role in part.pending:
                    if t.alive and j in role.pending_negations and self.violates(j, t, x, role.window):
                        t.alive = False
            if neg.pushed:
                due.append(j)
        return due

    def cancel(self, part: Partition, j: int, x: Event) -> None:
        """Pushed negation (paper 000): cancel the partial matches ``x`` invalidates now."""
        bit = 1 << j
        for pid in self.active_places.get(j, ()):
            tokens = part.marking[pid]
            if not tokens:
                continue
            growable = j in self.places[pid].growable_negations
            keep = []
            for t in tokens:
                if t.alive and self.violates(j, t, x):
                    if growable:
                        t.blocked |= bit
                        keep.append(t)
                    else:
                        t.alive = False
                        if self.limits:
                            uncount(part, t, -1, self.limits)
                    continue
                keep.append(t)
            part.marking[pid] = keep if not growable else tokens

    # ------------------------------------------------------------------ housekeeping

    def sweep(self, part: Partition, now: Event, contiguity_floor: float) -> None:
        """Drop tokens that can never fire again and negative events no match can see."""
        if part.quotas:
            prune(part, now, self.limits)
        for pid, tokens in enumerate(part.marking):
            if tokens:
                part.marking[pid] = [
                    t
                    for t in tokens
                    if t.alive
                    and not self.expired(t, now)
                    and not (self.contiguity and t.last_key < contiguity_floor)
                ]
        w = self.w
        if w is None:
            return
        for j, buf in enumerate(part.buffers):
            if buf:
                if self.count_window:
                    part.buffers[j] = [x for x in buf if x.pos > now.pos - w]
                else:
                    part.buffers[j] = [x for x in buf if x.ts >= now.ts - w]
        if part.pending:
            part.pending = [(t, role) for t, role in part.pending if t.alive]


def _prefer(rules: list[tuple[frozenset[int], bool, bool]], trs: list[Transition], fired: list[Token | None]) -> None:
    """GREEDY / RELUCTANT lists growing at a token's place: where one event both extends such
    a list (its take) and starts a step after it (any other transition here), a greedy list
    keeps only the extension and a reluctant one only the step, for the patterns both fired
    for (a token's ``users``); ``fired`` is edited in place (None: dropped). A repeated
    group's rule over several steps (``joined``) counts every move binding one of its slots
    as the group's. Under skip-till-next-match the token is consumed either way, as it is by
    any firing."""
    for slots, greedy, joined in rules:
        mine = [tr.slot in slots and (joined or tr.take) for tr in trs]
        takes = [i for i in range(len(trs)) if fired[i] is not None and mine[i]]
        others = [i for i in range(len(trs)) if fired[i] is not None and not mine[i]]
        if not takes or not others:
            continue
        keep, drop = (takes, others) if greedy else (others, takes)
        users = 0
        for i in keep:
            users |= fired[i].users  # type: ignore[union-attr]
        for i in drop:
            nt = fired[i]
            assert nt is not None
            nt.users &= ~users
            if not nt.users:
                fired[i] = None


def _after_seq(x: Event, ev: Event) -> bool:
    return x.seq > ev.seq


def _after_ts(x: Event, ev: Event) -> bool:
    return x.ts > ev.ts


def _strictly_later(tr: Transition, t: Token, e: Event) -> bool:
    """Tie rule strict: ``e`` comes after the events it must follow only with a later timestamp."""
    slots = t.slots
    for sl in tr.order_slots:
        v = slots[sl]
        ev = v[K_LAST] if type(v) is tuple else v
        if ev.ts >= e.ts:
            return False
    return True


def _not_bound_yet(tr: Transition, t: Token, e: Event) -> bool:
    """Tie rule either: events of one timestamp join in any order, each at most once, and a
    Kleene list in arrival order."""
    if t.contains(e):
        return False
    return not (tr.take and t.slots[tr.slot][K_LAST].seq > e.seq)


_ORDER_OK: dict[str, Callable[[Transition, Token, Event], bool]] = {"strict": _strictly_later, "either": _not_bound_yet}


__all__ = ["GroupRuntime", "INF", "event_key", "pattern_bits"]
