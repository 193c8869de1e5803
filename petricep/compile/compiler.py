"""Pattern AST -> CEP-PN basic structures (:class:`PatternNet`).

The state places are the reachable configurations of the pattern tree; every
configuration knows which variables are bound, which are excluded by an OR choice
and which Kleene lists are closed, so each condition is attached to exactly the
transition on which it first becomes decidable (guards G), single-event conditions
are hoisted onto the input arc, and negations are pushed into the scan where their
conditions allow it (paper 000).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from petricep.compile import elements as E
from petricep.compile import gaps as GP
from petricep.compile import groups as G
from petricep.compile import until as U
from petricep.compile.net import AggSpec, KleeneInfo, Negation, PatternNet, Place, Transition, Var
from petricep.errors import PatternError
from petricep.lang import ast as A
from petricep.lang.check import flatten_seq
from petricep.lang.front import error_at
from petricep.lang.groups import negation_sides, under_and

Cfg = Any  # nested tuples / ints / None, hashable

MAX_PLACES = 4096


# ----------------------------------------------------------------------------- pattern tree walk


def _init(node: A.Node) -> Cfg:
    if isinstance(node, A.EventRef):
        return 0
    if isinstance(node, A.Group):
        return G.init(node)
    if isinstance(node, A.Seq):
        return (0, tuple(_init(c) for c in _positives(node)))
    if isinstance(node, A.And):
        return tuple(_init(c) for c in node.children)
    return None  # Or: nothing chosen yet


def _positives(seq: A.Seq) -> list[A.Node]:
    return [c for c in seq.children if not (isinstance(c, A.EventRef) and c.negated)]


def _optional(node: A.Node) -> bool:
    """An optional step (``T? v``) or a group that may bind no iteration: a SEQ may pass over
    it while it is unbound."""
    return A.skippable(node)


def _complete(node: A.Node, cfg: Cfg) -> bool:
    """Whether ``node`` is matched in ``cfg``: an event bound, a Kleene list of at least its
    fewest events (its configuration counts them), a SEQ at its last required element."""
    if isinstance(node, A.EventRef):
        return bool(cfg >= node.least)
    if isinstance(node, A.Group):
        return G.complete(node, cfg)
    if isinstance(node, A.Seq):
        k, cs = cfg
        pos = _positives(node)
        return bool(_complete(pos[k], cs[k]) and all(_optional(p) for p in pos[k + 1 :]))
    if isinstance(node, A.And):
        return all(_complete(c, s) for c, s in zip(node.children, cfg))
    if cfg is None:
        return False
    i, s = cfg
    return _complete(node.children[i], s)


def _moves(node: A.Node, cfg: Cfg, etype: str) -> list[tuple[str, Cfg, bool]]:
    """(variable bound, new configuration, is_kleene_take) for an event of ``etype``."""
    if isinstance(node, A.EventRef):
        if node.type != etype:
            return []
        if cfg == 0:
            return [(node.var, 1, False)]
        if not node.kleene or (node.most is not None and cfg >= node.most):
            return []
        # a bounded list counts its events up to its upper bound (one place per count), an
        # unbounded one up to its lower bound, where it loops (``T+``: on its first place)
        cap = node.most if node.most is not None else max(node.least, 1)
        return [(node.var, min(cfg + 1, cap), True)]
    if isinstance(node, A.Group):
        return G.moves(node, cfg, etype)
    if isinstance(node, A.Seq):
        k, cs = cfg
        pos = _positives(node)
        out = [(v, (k, cs[:k] + (c,) + cs[k + 1 :]), t) for v, c, t in _moves(pos[k], cs[k], etype)]
        # the next element may start once this one is matched, or while this one is an
        # optional step not taken (at the start of the SEQ): then the one after it too
        passable = _complete(pos[k], cs[k]) or (_optional(pos[k]) and cs[k] == 0)
        nxt = k + 1
        while nxt < len(pos) and passable:
            out += [(v, (nxt, cs[:nxt] + (c,) + cs[nxt + 1 :]), t) for v, c, t in _moves(pos[nxt], cs[nxt], etype)]
            passable = _optional(pos[nxt])
            nxt += 1
        return out
    if isinstance(node, A.And):
        out = []
        for i, (child, s) in enumerate(zip(node.children, cfg)):
            out += [(v, cfg[:i] + (c,) + cfg[i + 1 :], t) for v, c, t in _moves(child, s, etype)]
        return out
    if cfg is None:
        out = []
        for i, child in enumerate(node.children):
            out += [(v, (i, c), t) for v, c, t in _moves(child, _init(child), etype)]
        return out
    i, s = cfg
    return [(v, (i, c), t) for v, c, t in _moves(node.children[i], s, etype)]


@dataclass
class _Info:
    """What a configuration means: bound/dead variables, negation intervals, a label."""

    bound: set[str] = field(default_factory=set)
    dead: set[str] = field(default_factory=set)
    active: list[tuple[A.EventRef, bool]] = field(default_factory=list)  # (negation, P growable)
    live_negs: list[A.EventRef] = field(default_factory=list)
    # optional steps still ahead of a complete SEQ: a match emitted here has them unbound
    absent: set[str] = field(default_factory=set)
    skipped: set[str] = field(default_factory=set)  # optional steps a live SEQ passed over unbound
    counts: dict[str, int] = field(default_factory=dict)  # a bounded list's events so far
    growing: set[str] = field(default_factory=set)  # groups complete here that may start an iteration
    current: set[str] = field(default_factory=set)  # a group's optional steps its current iteration bound
    tails: set[str] = field(default_factory=set)  # groups in an iteration with only optional steps left
    later: set[str] = field(default_factory=set)  # groups with an iteration complete (the next is a later one)
    open_lists: set[str] = field(default_factory=set)  # a group's Kleene step its current iteration is binding


def _label(ref: A.EventRef, count: int) -> str:
    """A bound variable in a place's label: ``a``, ``a+``; a bounded list with its count so
    far (``a{2}``; ``a{3,}`` where an unbounded one loops, ``a{1,}`` for ``A* a[]``), so the
    diagrams show the bounds."""
    if not ref.kleene:
        return ref.var
    if not ref.bounded:
        return ref.var + "+"
    more = "," if ref.most is None and count == max(ref.least, 1) else ""
    return f"{ref.var}{{{count}{more}}}"


def _vars(node: A.Node) -> list[str]:
    return [r.var for r in A.events_of(node) if not r.negated]


def _analyze(node: A.Node, cfg: Cfg, live: bool, info: _Info, types: frozenset[str]) -> str:
    if isinstance(node, A.EventRef):
        if not live:
            info.dead.add(node.var)
        elif cfg >= 1:
            info.bound.add(node.var)
            if node.bounded:
                info.counts[node.var] = cfg
        return _label(node, cfg) if cfg >= 1 else ""
    if isinstance(node, A.Group):
        return G.analyze(
            node, cfg, live, info.bound, info.dead, info.active, info.growing, info.current, info.absent, info.tails, info.later, info.open_lists
        )
    if isinstance(node, A.Seq):
        k, cs = cfg
        pos = _positives(node)
        # an optional step the SEQ has passed over unbound is out of the match, as an OR
        # branch not taken is: conditions reading it hold vacuously
        skipped = [j < k and _optional(c) and s == _init(c) for j, (c, s) in enumerate(zip(pos, cs))]
        labels = [_analyze(c, s, live and not sk, info, types) for c, s, sk in zip(pos, cs, skipped)]
        if live:  # (a group left out: its steps)
            info.skipped.update(v for c, sk in zip(pos, skipped) if sk for v in _vars(c))
        if live and _complete(node, cfg):
            info.absent.update(v for c, s in zip(pos[k + 1 :], cs[k + 1 :]) if _optional(c) and s == _init(c) for v in _vars(c))
        if live:
            idx = {id(c): j for j, c in enumerate(pos)}
            last_pos = -1
            for child in node.children:
                if isinstance(child, A.EventRef) and child.negated:
                    info.live_negs.append(child)
                    nxt = [c for c in node.children[node.children.index(child) :] if id(c) in idx]
                    if last_pos >= 0 and nxt and k == last_pos and _complete(pos[last_pos], cs[last_pos]):
                        growable = any(_moves(pos[last_pos], cs[last_pos], t) for t in types)
                        info.active.append((child, growable))
                else:
                    last_pos = idx[id(child)]
        return ";".join(x for x in labels if x)
    if isinstance(node, A.And):
        labels = [_analyze(c, s, live, info, types) for c, s in zip(node.children, cfg)]
        return "&".join(x for x in labels if x)
    chosen = None if cfg is None else cfg[0]
    labels = []
    for i, child in enumerate(node.children):
        sub = cfg[1] if i == chosen else _init(child)
        labels.append(_analyze(child, sub, live and (chosen is None or chosen == i), info, types))
    return "|".join(x for x in labels if x)


# ----------------------------------------------------------------------------- conditions


@dataclass(frozen=True)
class _Cond:
    expr: A.Expr
    vars: frozenset[str]
    neg: str | None
    iter_var: str | None
    needs_closed: frozenset[str]  # Kleene variables read as a whole list


def _classify(expr: A.Expr, kleene: set[str], negated: set[str]) -> _Cond:
    vs = A.vars_of(expr)
    it = A.iteration_var(expr)
    closed = set()
    for e in A.walk_expr(expr):
        # (v[1] is known once v binds; not g[1].c of a step before the group's first required one,
        # whose iteration is known once that one binds: Index.leads, read where the group is closed)
        first_only = isinstance(e, A.Attr) and e.index is not None and e.index.kind == A.IDX_CONST and e.index.const == 1 and not e.index.leads
        if isinstance(e, A.Attr) and e.var in kleene and e.var != it and not first_only:
            closed.add(e.var)
        if isinstance(e, A.Agg) and e.var != it:
            closed.add(e.var)
    neg = next((v for v in vs if v in negated), None)
    return _Cond(expr, vs, neg, it, frozenset(closed))


def _precedence(node: A.Node) -> dict[str, set[str]]:
    """prec[v]: variables whose events must all come before v's events."""
    prec: dict[str, set[str]] = {v: set() for v in _vars(node)}

    def walk(n: A.Node) -> None:
        if isinstance(n, A.EventRef):
            return
        if isinstance(n, A.Seq):
            pos = _positives(n)
            for j, later in enumerate(pos):
                for earlier in pos[:j]:
                    for v in _vars(later):
                        prec[v].update(_vars(earlier))
        for c in n.children:
            walk(c)

    walk(node)
    return prec


class _Config:
    def __init__(self, cfg: Cfg, info: _Info, label: str, prec: dict[str, set[str]], kleene: set[str]) -> None:
        self.cfg = cfg
        self.bound = frozenset(info.bound)
        self.dead = frozenset(info.dead)
        self.active = info.active
        self.live_negs = info.live_negs
        self.absent = frozenset(info.absent)
        self.missing = self.absent | info.skipped  # optional steps a match emitted here leaves out
        self.counts = dict(info.counts)
        self.growing = frozenset(info.growing)
        self.current = frozenset(info.current)
        self.tails = frozenset(info.tails)
        self.later = frozenset(info.later)
        self.open_lists = frozenset(info.open_lists)
        self.label = label or "start"
        self.closed = frozenset(v for v in kleene & self.bound if any(v in prec[u] for u in self.bound))

    def ready(self, c: _Cond, final: bool, incremental: bool = False) -> bool:
        """Decidable here (all variables bound, whole lists closed). ``incremental``: for an
        iteration condition, whether it can be checked element by element."""
        pos_vars = c.vars - {c.neg} if c.neg else c.vars
        if pos_vars & self.dead:
            return False
        others = pos_vars - {c.iter_var} if incremental else pos_vars
        if not others <= self.bound:
            return False
        if incremental and c.iter_var not in self.bound:
            return False
        return final or c.needs_closed <= self.closed

    def vacuous(self, c: _Cond) -> bool:
        return bool((c.vars - ({c.neg} if c.neg else set())) & self.dead)


# ----------------------------------------------------------------------------- compile


def _error(pattern: A.Pattern, message: str) -> PatternError:
    return error_at(message, pattern.span)


def compile_pattern(pattern: A.Pattern, index: int = 0, push_negations: bool = True) -> PatternNet:
    """``push_negations=False`` keeps every negation out of the scan: partial matches are
    built regardless and each match is checked against the negated events at emission
    (SASE's post-construction negation, paper 000's baseline).

    The steps: explore the configurations of the pattern tree (the state places), decide
    which negations are pushed into the scan, then derive the transitions (where each
    condition becomes decidable) and the places (what is checked at emission)."""
    if any(r.archived for r in A.events_of(pattern.structure)):
        raise _error(pattern, f"pattern {pattern.name!r} has ARCHIVED variables: it runs with an event archive (--archive DIR)")
    if flatten_seq(pattern.structure) != pattern.structure:
        pattern = replace(pattern, structure=flatten_seq(pattern.structure))
    source = pattern
    lowered = G.lower(pattern)  # repeated groups: conditions read onto their steps' lists
    pattern = lowered.pattern
    b = _Builder(pattern, lowered)
    b.explore()
    negations = b.negations(push_negations)
    transitions = b.transitions(negations)
    places = b.places(negations, {tr.src for tr in transitions})
    kinfo = tuple(_kleene_info(v, pattern, [c.expr for c in b.conds]) for v in b.vars if v.kleene)
    return PatternNet(
        name=pattern.name,
        index=index,
        vars=b.vars,
        kleene=kinfo,
        conditions=tuple(c.expr for c in b.conds),
        negations=tuple(negations),
        places=tuple(places),
        transitions=tuple(transitions),
        start=b.configs[b.init],
        window=pattern.window,
        window_value=A.window_amount(pattern.window),
        partition=pattern.partition,
        strategy=pattern.strategy,
        returns=pattern.returns,
        source=source,
        timeout=pattern.timeout,
        limit=pattern.limit,
    )


class _Builder:
    """One pattern's compilation: its variables and classified conditions, then the
    configurations reached from the initial one (each a state place) and the moves between
    them (each a transition), which the steps of :func:`compile_pattern` turn into the net."""

    def __init__(self, pattern: A.Pattern, lowered: G.Lowered | None = None) -> None:
        self.pattern = pattern
        refs = A.events_of(pattern.structure)
        positives = [r for r in refs if not r.negated]
        self.negs = [r for r in refs if r.negated]
        # a repeated group's steps are Kleene lists (compile/groups.py); its iteration
        # conditions are checked on the step each names (condition index -> step)
        self.member_of = lowered.member_of if lowered is not None else {}
        self.group_iteration = lowered.iteration if lowered is not None else {}
        self.group_optional = lowered.iteration_optional if lowered is not None else {}
        self.negation_current = lowered.negation_current if lowered is not None else {}
        self.group_growth = lowered.iteration_growth if lowered is not None else {}
        self.group_absent = lowered.iteration_absent if lowered is not None else {}
        self.vars = tuple(
            Var(
                r.var,
                r.type,
                i,
                r.kleene or r.var in self.member_of,
                self.member_of[r.var][0].var if r.var in self.member_of else None,
                r.var in self.member_of and r.optional,
                r.var in self.member_of and r.kleene,
            )
            for i, r in enumerate(positives)
        )
        self.slot = {v.name: v.slot for v in self.vars}
        self.kleene = {v.name for v in self.vars if v.kleene}
        self.modes = {r.var: r.mode for r in positives if r.mode}  # GREEDY / RELUCTANT lists
        # a group's: on its first step's slot, where it is complete and may start an iteration
        self.group_modes = {grp.var: (grp.members[0], grp.mode) for grp in A.groups_of(pattern.structure) if grp.mode}
        # (under an AND: wherever the group has begun, a sibling may take an event it could take)
        self.group_under_and = {grp.var for grp in A.groups_of(pattern.structure) if grp.mode and under_and(pattern.structure, grp)}
        # stop events (UNTIL, compile/until.py): negations that block a list's takes; their
        # conditions are classified as a negation's, the element guards are the lists' own
        self.stops = A.stops_of(pattern.structure)
        # a group's stop event (compile/groups.py): open where the group has begun and may grow,
        # blocking every move of its steps (a stop of the group's step type is no step either)
        self.gstops = A.group_stops_of(pattern.structure)
        negated = {r.var for r in self.negs} | {u.var for _, u in [*self.stops, *self.gstops]}
        # per-step gaps (compile/gaps.py): a list's chain as iteration conditions after
        # WHERE's, then a pair of guards per (step, event it follows), each put on the
        # transitions whose source binds that event; and an expiry on the places
        self.gaps = GP.plan(pattern, set(self.member_of), self.kleene)  # a group's: conditions (compile/groups.py)
        self.step_gaps = G.step_gaps(pattern.structure)  # and its places' early exits (gap_expiries)
        exprs = (*pattern.conditions, *self.gaps.chains)
        self.gap_guards = {key: (len(exprs) + 2 * k, len(exprs) + 2 * k + 1) for k, key in enumerate(self.gaps.pairs)}
        pairs = [c for pair in self.gaps.pairs.values() for c in pair]
        self.conds = [_classify(e, self.kleene, negated) for e in (*exprs, *pairs)]
        self.gap_conds = {ci for pair in self.gap_guards.values() for ci in pair}
        self.stop_guards: dict[str, int] = {}  # list -> the condition its takes check
        self.stopped = {lst.var: len(self.negs) + k for k, (lst, _) in enumerate(self.stops)}  # list -> negation
        self.gstopped = {grp.var: len(self.negs) + len(self.stops) + k for k, (grp, _) in enumerate(self.gstops)}
        steps = [(step, stop) for grp, stop in self.gstops for step in A.events_of(grp.seq) if not step.negated]
        for lst, stop in [*self.stops, *steps]:  # (a group's step: its guard reads no list, checked)
            guard = U.element_guard(lst, stop, pattern.conditions)
            if guard is not None:
                self.stop_guards[lst.var] = len(self.conds)
                self.conds.append(_classify(guard, self.kleene, negated))
        self.prec = _precedence(pattern.structure)
        # a conjunct reading v[k] (k >= 2) is also checked at the list's k-th element (compile/elements.py);
        # a group's g[k].s (k >= 2, a required step) is s[k] here
        skip = frozenset(negated | {m for grp in A.groups_of(pattern.structure) for m in grp.optional_steps})
        optional_steps = skip - negated
        for check, open_lists in [
            *E.kth_element_checks(pattern.conditions, sorted(self.kleene - skip), skip, self.prec),
            *E.iteration_k_checks(pattern.conditions, sorted(optional_steps), sorted(self.kleene), frozenset(negated), self.prec),
        ]:
            c = _classify(check, self.kleene, negated)
            self.conds.append(replace(c, needs_closed=c.needs_closed - open_lists))
        self.types = frozenset(r.type for r in positives)
        self.init = _init(pattern.structure)
        self.configs: dict[Cfg, int] = {}
        self.cinfo: list[_Config] = []
        self.edges: list[tuple[int, str, str, Cfg, bool]] = []
        self.neg_index = {r.var: j for j, r in enumerate(self.negs)}
        self.group_negs = {n for grp in A.groups_of(pattern.structure) for n in G.neighbours(grp)}
        self.group_stops = {n for grp in A.groups_of(pattern.structure) for n in G.between_iterations(grp)}
        # (and one after an optional step: where the iteration may still bind it, it blocks the
        # moves past it only, and the partial match still times out, as a stop event's list)
        self.group_stops |= {n for grp in A.groups_of(pattern.structure) for n, (p, _) in negation_sides(grp).items() if len(p) > 1}
        self.seq_of: dict[str, tuple[list[str], list[str]]] = {}
        _neighbours(pattern.structure, self.seq_of)
        # negations beside an optional step or reading one: checked at emission, where the
        # match says which steps it has (an absent step's fields are unknown: a negation
        # whose condition reads one forbids nothing there)
        optional = {r.var for r in positives if A.skippable(r)}
        optional |= {m for grp in A.groups_of(pattern.structure) if grp.least == 0 for m in grp.members}
        # (a group's optional steps: a negation reading one forbids nothing where it is absent)
        reads = optional | {m for grp in A.groups_of(pattern.structure) for m in grp.optional_steps}
        self.neg_reads = {r.var: {v for c in self.conds if c.neg == r.var for v in c.vars & reads} for r in self.negs}
        # (a required group's optional steps are no optional side: its last event is the latest
        # of its steps' slots, its first the earliest, which the scan reads as any list's)
        in_groups = {m for grp in A.groups_of(pattern.structure) if grp.least >= 1 for m in grp.members}
        self.opt_negs = {n for n, (before, after) in self.seq_of.items() if (set(before) | set(after)) & (optional - in_groups)}
        self.opt_negs |= {n for n, vs in self.neg_reads.items() if vs}

    def explore(self) -> None:
        """Every configuration reachable from the initial one, breadth first, with its moves."""
        queue: deque[Cfg] = deque()
        structure, types = self.pattern.structure, self.types

        def add(cfg: Cfg) -> None:
            if cfg in self.configs:
                return
            if len(self.configs) >= MAX_PLACES:
                raise _error(
                    self.pattern,
                    f"pattern {self.pattern.name!r} needs more than {MAX_PLACES} places (too many AND/OR children)",
                )
            info = _Info()
            label = _analyze(structure, cfg, True, info, types)
            if self.negation_current:  # (one reading g[i].c: open only where the iteration bound c)
                info.active = G.open_where_bound(info.active, self.negation_current, info.current)
            self.configs[cfg] = len(self.cinfo)
            self.cinfo.append(_Config(cfg, info, label, self.prec, self.kleene))
            queue.append(cfg)

        add(self.init)
        while queue:
            cfg = queue.popleft()
            src = self.configs[cfg]
            for t in sorted(types):
                for var, new, take in _moves(structure, cfg, t):
                    add(new)
                    self.edges.append((src, t, var, new, take))

    def negations(self, push: bool) -> list[Negation]:
        """Each negation, pushed into the scan where its conditions are decidable while the
        partial match waits (between two positive SEQ elements), else checked at emission."""
        conds = self.conds
        neg_conds: dict[str, list[int]] = {r.var: [] for r in [*self.negs, *(u for _, u in [*self.stops, *self.gstops])]}
        for ci, c in enumerate(conds):
            if c.neg:
                neg_conds[c.neg].append(ci)
        out = []
        for j, r in enumerate(self.negs):
            before, after = self.seq_of[r.var]
            # a negation inside a repeated group is pushed always (its interval is the
            # iteration's, which only the scan sees: its conditions read what is bound before
            # it, checked) and has no Q slot (Q's list holds the earlier iterations' events):
            # it is open only where the iteration waits for Q (compile/groups.py analyze);
            # one between iterations stops the group's next iteration as a stop event does
            inside = r.var in self.group_negs
            pushed = inside or (push and bool(before and after) and r.var not in self.opt_negs)
            # (inside: its conditions read variables bound before the group, checked, and the
            # group so far, its steps' lists as they stand, an unbound one read as
            # compile/groups.py on_negation says: decided wherever it is open)
            for conf in self.cinfo if not inside else ():
                if any(n is r for n, _ in conf.active):
                    for ci in neg_conds[r.var]:
                        if not conf.vacuous(conds[ci]) and not conf.ready(conds[ci], final=False):
                            pushed = False
            event_only = tuple(ci for ci in neg_conds[r.var] if conds[ci].vars == {r.var})
            out.append(
                Negation(
                    j,
                    r.var,
                    r.type,
                    tuple(neg_conds[r.var]),
                    event_only,
                    tuple(self.slot[v] for v in before),
                    () if inside else tuple(self.slot[v] for v in after),
                    pushed,
                    stops=r.var in self.group_stops,
                )
            )
        for lst, stop in self.stops:  # pushed always: they read what is bound while the list grows
            mine = tuple(neg_conds[stop.var])
            only = tuple(ci for ci in mine if conds[ci].vars == {stop.var})
            out.append(Negation(len(out), stop.var, stop.type, mine, only, (self.slot[lst.var],), (), True, stops=True))
        for grp, stop in self.gstops:  # after the group's latest event (every step's list)
            mine = tuple(neg_conds[stop.var])
            only = tuple(ci for ci in mine if conds[ci].vars == {stop.var})
            slots = tuple(self.slot[m] for m in grp.members)
            out.append(Negation(len(out), stop.var, stop.type, mine, only, slots, (), True, stops=True))
        return out

    def transitions(self, negations: Sequence[Negation]) -> list[Transition]:
        """One transition per move: the conditions that become decidable on it (on the input
        arc when they read only its event), its order constraints and negation masks."""
        out: list[Transition] = []
        for src, t, var, new, take in self.edges:
            a, b = self.cinfo[src], self.cinfo[self.configs[new]]
            arc, guards, iteration, deferred = self._decidable(a, b, var)
            blocked = cleared = 0
            for n, _growable in a.active:
                neg = negations[self.neg_index[n.var]]
                if not neg.pushed:
                    continue
                before, after = self.seq_of[n.var]
                if var in after:
                    blocked |= 1 << neg.index
                if var in before:
                    cleared |= 1 << neg.index
            if take and var in self.stopped:  # a stop event blocks the list's takes
                blocked |= 1 << self.stopped[var]
                if var in self.stop_guards:
                    guards.append(self.stop_guards[var])
            grp = self.member_of[var][0].var if var in self.member_of else None
            if grp in self.gstopped and G.begun(self.member_of[var][0], a.bound):  # every later move of the group
                blocked |= 1 << self.gstopped[grp]
                if var in self.stop_guards:
                    guards.append(self.stop_guards[var])
            gap = self._gap(a, var, take)
            if gap is not None and not take:
                guards.extend(self.gap_guards[(var, gap[1])])
            out.append(
                Transition(
                    len(out),
                    src,
                    self.configs[new],
                    t,
                    var,
                    self.slot[var],
                    take,
                    tuple(arc),
                    tuple(guards),
                    tuple(iteration),
                    tuple(deferred),
                    self._order(a, var, take),
                    blocked,
                    cleared,
                    kleene=var in self.kleene,
                    gap=None if gap is None else (self._gap_slot(var, gap[1]), *self.gaps.specs[var][1:]),
                    gap_from=tuple(sorted(self.slot[u] for u in gap[1])) if gap is not None and not isinstance(gap[1], str) else (),
                    count=b.counts.get(var, 0) if src != self.configs[new] else 0,
                )
            )
        return out

    def _decidable(
        self, a: _Config, b: _Config, var: str
    ) -> tuple[list[int], list[int], list[int], list[tuple[int, ...]]]:
        """The conditions a move from ``a`` to ``b`` binding ``var`` decides: (on the input
        arc, guards, iteration conditions of the new Kleene element, deferred ones)."""
        guards: list[int] = []
        iteration: list[int] = []
        deferred: list[tuple[int, ...]] = []
        arc: list[int] = []
        for ci, c in enumerate(self.conds):
            if ci in self.stop_guards.values() or ci in self.gap_conds:
                continue  # (on the list's takes / the gapped step's moves: Builder.transitions)
            if ci in self.group_iteration:  # a group's: on its step, every iteration (compile/groups.py)
                how = G.iteration_check(self.member_of, self.group_iteration[ci], c.vars, var, a.bound, b.bound, b.dead)
                if how == "step" and not self.group_optional.get(ci, frozenset()) <= a.current:
                    continue  # (reads an optional step this iteration left out: it holds)
                if ci in self.group_growth and (var in a.open_lists) != self.group_growth[ci]:
                    continue  # (a Kleene step's gap: its chain's first element, or a later one)
                if self.group_absent.get(ci, frozenset()) & a.current:
                    continue  # (a gap after skippable steps: it follows the nearest one bound)
                if how == "step":
                    iteration.append(ci)
                elif how == "replay":
                    deferred.append(G.replay(ci, self.member_of, self.slot, self.group_iteration[ci]))
                continue
            if c.neg:
                continue
            if c.iter_var is None:
                if b.ready(c, False) and not a.ready(c, False):
                    if c.vars == {var} and var not in self.kleene:
                        arc.append(ci)
                    else:
                        guards.append(ci)
            elif c.iter_var == var and b.ready(c, False, incremental=True):
                iteration.append(ci)
            elif b.ready(c, False, incremental=True) and not a.ready(c, False, incremental=True):
                deferred.append((ci, self.slot[c.iter_var]))
        return arc, guards, iteration, deferred

    def _gap(self, a: _Config, var: str, take: bool) -> tuple[float | int, str | frozenset[str]] | None:
        """A move binding ``var`` from ``a``: (its gap's high bound, the variable its event
        follows: the list itself for a list's next element), None where no gap binds it."""
        if var not in self.gaps.specs:
            return None
        base = var if take else self.gaps.base(var, a.bound)
        return None if base is None else (self.gaps.specs[var][2], base)

    def gap_expiries(self) -> list[tuple[tuple[int, float | int], ...]]:
        """Each place's early exits (compile/gaps.py gap_expiry): the gaps every way on
        from it must meet."""
        if not self.gaps.specs and not self.step_gaps:
            return [()] * len(self.cinfo)
        accepting = [_complete(self.pattern.structure, c.cfg) for c in self.cinfo]
        bound = [frozenset(self.slot[v] for v in c.bound) for c in self.cinfo]
        out: list[tuple[tuple[int, float | int], ...]] = [()] * len(self.cinfo)
        for events in (False, True):  # time and EVENTS gaps apart: their ends are not comparable
            edges = []
            for src, _t, var, new, take in self.edges:
                gap = self._gap(self.cinfo[src], var, take)
                if gap is not None and self._in_events(var) != events:
                    gap = None
                step = self.step_gaps.get(var)  # (a group's step: G.step_gaps)
                grows = var in self.cinfo[src].open_lists  # (a group's list: its chain's next element)
                follows = step.base(take, grows) if step is not None and step.in_events == events else None
                if step is not None and follows is not None:
                    gap = (step.hi, follows)
                # (after an AND/OR, the latest of its events: no one slot, the guards decide)
                req = None if gap is None or not isinstance(gap[1], str) else (self.slot[gap[1]], gap[0])
                edges.append((src, self.configs[new], self.slot[var], req))
            ends = GP.gap_expiry(len(self.cinfo), edges, accepting, bound)
            out = [(*o, *(((~s if events else s), hi) for s, hi in e)) for o, e in zip(out, ends)]
        return out

    def _in_events(self, var: str) -> bool:
        gap = self.gaps.specs[var][0].gap if var in self.gaps.specs else None
        return gap is not None and gap.in_events

    def _gap_slot(self, var: str, base: str | frozenset[str]) -> int:
        """Transition.gap's slot: the base's (an AND/OR's: its last variable's), ``~slot`` for a
        gap in EVENTS (compile/net.py gap_slot)."""
        slot = self.slot[base] if isinstance(base, str) else max(self.slot[u] for u in base)
        return ~slot if self._in_events(var) else slot

    def _order(self, a: _Config, var: str, take: bool) -> tuple[int, ...]:
        """Strict tie rule: the new event must come strictly after the events of the variables
        that precede it; checking the immediate ones suffices (the others precede those)."""
        prec, slot = self.prec, self.slot
        if var in self.member_of:
            grp, pos = self.member_of[var]
            # (from an iteration with only optional steps left, a move up to the first required step starts the next)
            skips = grp.optional_steps | grp.empty_lists
            ending = grp.var in a.tails and pos <= min(i for i, m in enumerate(grp.members) if m not in skips)
            # (an iteration came before; a first Kleene step's take may also grow the first iteration's list)
            later = grp.var in a.later if skips or grp.kleene_steps else take or pos > 0
            inside = G.step_order(self.member_of, slot, var, later, a.current, ending)
            if inside is not None and take and var in grp.kleene_steps:  # (and after the list's newest element)
                bound = {slot[u] for u in a.bound if u in slot}  # (growing a list: a step unbound in the last iteration orders nothing)
                return tuple(sorted({*(sl for sl in inside if sl in bound), slot[var]}))
            if inside is not None:
                return inside
            take = take and var in grp.kleene_steps  # the first step's first element: after what precedes the group
        bound_prec = {u for u in prec[var] if u in a.bound}
        order = {slot[u] for u in bound_prec if not any(u in prec[w] for w in bound_prec)}
        if take:
            order.add(slot[var])
        return tuple(sorted(order))

    def places(self, negations: Sequence[Negation], exits: set[int]) -> list[Place]:
        """One place per configuration: at an accepting one, the conditions still to check at
        emission and the negations checked there or pending until the window ends."""
        out = []
        self.stop_at = {lst.var: U.stop_places(self.edges, lst.var) for lst, _ in self.stops}
        for grp, _ in self.gstops:
            begun = {pid for pid, c in enumerate(self.cinfo) if G.begun(grp, c.bound)}
            self.stop_at[grp.var] = G.stop_places(self.edges, set(grp.members), begun)
        expiries = self.gap_expiries()
        for pid, conf in enumerate(self.cinfo):
            accepting = _complete(self.pattern.structure, conf.cfg)
            final: list[int] = []
            emit_negs: list[int] = []
            pending: list[int] = []
            if accepting:
                final = self._final(conf)
                for n in conf.live_negs:
                    neg = negations[self.neg_index[n.var]]
                    if self.neg_reads[n.var] & conf.missing:
                        continue  # reads a step the match leaves out: forbids nothing here
                    if not neg.pushed:
                        emit_negs.append(neg.index)
                    after = self.seq_of[n.var][1]
                    if not neg.next_slots or (n.var in self.opt_negs and not set(after) & conf.bound):
                        pending.append(neg.index)  # no step after it bound: up to the window's end
            active = [negations[self.neg_index[n.var]] for n, _ in conf.active]
            growable = [negations[self.neg_index[n.var]] for n, g in conf.active if g]
            stopping: list[A.EventRef | A.Group] = [lst for lst, _ in self.stops] + [grp for grp, _ in self.gstops]
            for lst in stopping:  # a stop event is open where its list (or group) grows
                stop_neg = negations[self.stopped[lst.var] if lst.var in self.stopped else self.gstopped[lst.var]]
                if pid in self.stop_at[lst.var]:
                    active.append(stop_neg)
                    if self.stop_at[lst.var][pid]:
                        growable.append(stop_neg)
            out.append(
                Place(
                    pid,
                    conf.label,
                    tuple(sorted(conf.bound)),
                    accepting,
                    tuple(final),
                    tuple(emit_negs),
                    tuple(pending),
                    tuple(n.index for n in active if n.pushed),
                    tuple(n.index for n in growable if n.pushed),
                    pid in exits,
                    gap_expiry=expiries[pid],
                    repeat=self._repeat(pid, conf),
                )
            )
        return out

    def _repeat(self, pid: int, conf: _Config) -> tuple[tuple[int, str], ...]:
        """A place's GREEDY / RELUCTANT rules (slot, mode): a list's where it is bound and not
        closed (a Kleene step of a group: where its iteration is binding it, its list spanning
        every iteration); a group's where it is complete and may start another iteration (its
        next iteration's first step is a take on that step's list, as a list's next element).
        A group's rule over several steps (a last list growing or the next iteration's first
        step; a first list that may be empty or the step after it) is one entry per step's
        slot, each but the last with its mode marked ``+`` (joined with the next: Place.repeat);
        under an AND, wherever the group has begun, one over the moves of its steps there (a
        sibling may take an event the group could, inside an iteration too)."""
        out = [
            (self.slot[v], m)
            for v, m in self.modes.items()
            if (v in conf.open_lists if v in self.member_of else v in conf.bound and v not in conf.closed)
        ]
        for g, (first, m) in self.group_modes.items():
            grp = self.member_of[first][0]
            if first in conf.closed:
                continue
            moves = {self.slot[v] for src, _t, v, _new, _take in self.edges if src == pid and v in grp.members}
            if g in conf.growing:
                slots = sorted(moves | {self.slot[first]})
                out += [(sl, m + "+") for sl in slots[:-1]] + [(slots[-1], m)]
            elif g in self.group_under_and and G.begun(grp, conf.bound) and moves:
                # (in an iteration, under an AND: any move of its steps, a first element too)
                slots = sorted(moves)
                out += [(sl, m + "+") for sl in slots] + [(slots[-1], m)]
        return tuple(out)

    def _final(self, conf: _Config) -> list[int]:
        """Conditions not yet decided when a match is complete in ``conf``: checked at emission."""
        final = []
        for ci, c in enumerate(self.conds):
            if c.neg or conf.vacuous(c) or ci in self.group_iteration or c.vars & conf.absent or ci in self.stop_guards.values() or ci in self.gap_conds:
                continue  # (an optional step a match here leaves unbound: as a dead variable)
            if c.iter_var is None:
                if not conf.ready(c, False):
                    final.append(ci)
            elif not conf.ready(c, False, incremental=True):
                final.append(ci)
        return final


def _neighbours(node: A.Node, out: dict[str, tuple[list[str], list[str]]]) -> None:
    """For each negated variable: variables of the previous and next positive SEQ element and,
    where that element is an optional step (which a match may leave out), of the ones beyond
    it up to a required one: the interval runs from the last event of the nearest one bound
    (the latest of those events: a SEQ orders its steps) to the first of the nearest one bound
    after it, and with none bound on a side, the window's (docs/SEMANTICS.md, "Negation")."""
    if isinstance(node, A.EventRef):
        return
    if isinstance(node, A.Group):  # a group's negations: the steps around them (compile/groups.py)
        out.update(negation_sides(node))  # (beside an optional step: up to the nearest required one)
        return
    if isinstance(node, A.Seq):
        kids = node.children
        for i, c in enumerate(kids):
            if isinstance(c, A.EventRef) and c.negated:
                prev = _chain(reversed(kids[:i]))
                nxt = _chain(kids[i + 1 :])
                out[c.var] = ([v for k in prev for v in _vars(k)], [v for k in nxt for v in _vars(k)])
    for c in node.children:
        _neighbours(c, out)


def _chain(steps: Iterable[A.Node]) -> list[A.Node]:
    """The positive steps on one side of a negation, nearest first: the nearest and, while it
    is optional, the next one too (up to a required step or the SEQ's end)."""
    out: list[A.Node] = []
    for k in steps:
        if isinstance(k, A.EventRef) and k.negated:
            continue
        out.append(k)
        if not _optional(k):
            break
    return out


def _kleene_info(v: Var, pattern: A.Pattern, conds: Sequence[A.Expr] = ()) -> KleeneInfo:
    """The registers a list keeps: its aggregates and leading elements, as the pattern's
    expressions and the compiled conditions (a stop event's element guard) read them."""
    aggs: list[AggSpec] = []
    head = 1
    for expr in (*A.pattern_exprs(pattern), *conds):
        for e in A.walk_expr(expr):
            if isinstance(e, A.Agg) and e.var == v.name:
                spec = AggSpec(e.func, e.field)
                if spec not in aggs:
                    aggs.append(spec)
            if isinstance(e, A.Attr) and e.var == v.name and e.index is not None and e.index.kind == A.IDX_CONST:
                head = max(head, e.index.const)
            if isinstance(e, A.Attr) and e.index is not None and e.index.of == v.name and e.index.kind == A.IDX_CONST:
                head = max(head, e.index.const + 1)  # (g[k].c: after the k-th iteration's start, before the next's)
    return KleeneInfo(v.slot, tuple(aggs), head)
