"""Lowering: the frozen merged :class:`~petricep.compile.net.Net` -> flat arrays for the kernel.

The compiled kernel (``_kernel.pyx``) interprets any net; nothing is generated per query.
So everything it needs is laid out here once, as numpy arrays in frozen dataclasses:

* per shared net (:class:`LoweredGroup`): transitions (source, target, slot, window, user
  bitmask, guard and order-slot lists), the transitions each event type can fire, grouped by
  source place in the Python engine's order (so the kernel creates tokens in the same order),
  per place whether tokens stay there and which pattern roles emit from it;
* conditions as the guard bytecode (:mod:`.bytecode`, compiled from the expression AST,
  never from text);
* event time and outputs: per place the patterns a token there is a partial match of and
  those emitting from it (ON TIMEOUT deadlines, LIMIT quotas), per pattern its ON TIMEOUT
  fields (programs numbered as pattern ``npatterns + index``) and consumption domain.

:func:`supports` says whether the kernel covers a net, and if not, why: the caller then runs
the Python engine, which is the reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from petricep.compile.net import GroupNet, Net, PatternNet
from petricep.kernel.bytecode import AGG_CODES, ID_ATTR, NEG_SLOT, TS_ATTR, Bytecode, Unsupported
from petricep.lang import ast as A
from petricep.lang.fields import field_requirements
from petricep.merge import MAX_SHARED, rename
from petricep.runtime.build import check_group_ties
from petricep.runtime.match import group_steps, optional_groups, repeating_steps

STRATEGY_CODES = {
    A.Strategy.ANY: 0,
    A.Strategy.NEXT: 1,
    A.Strategy.STRICT: 2,
    A.Strategy.PARTITION: 3,
}
TIE_CODES = {"arrival": 0, "strict": 1, "either": 2}
KLEENE_START, KLEENE_TAKE = 1, 2  # a transition that starts a Kleene list, or appends to it
MAX_FANOUT = 256  # transitions of one event type leaving one place (the kernel's scratch array)
MAX_USERS = MAX_SHARED  # patterns (negations) per shared net: bits of an int64 mask (merge cuts wider classes)
MAX_ORDERED_SLOTS = 64  # (once the widest shared net with RETURN; matches are now ordered by every position)
LIMIT_POLICIES = {"drop-oldest": 0, "reject-new": 1, "fail": 2}  # the kernel's codes


def _frozen(values: Any, dtype: Any) -> np.ndarray:
    arr = np.array(values, dtype=dtype)
    arr.flags.writeable = False
    return arr


def _csr(lists: list[list[int]] | list[tuple[int, ...]], dtype: Any = np.int32) -> tuple[np.ndarray, np.ndarray]:
    """Lists of ints as (start offsets, flat values)."""
    start = [0]
    flat: list[int] = []
    for xs in lists:
        flat.extend(xs)
        start.append(len(flat))
    return _frozen(start, np.int32), _frozen(flat, dtype)


def _bits(indices: tuple[int, ...]) -> int:
    """A bitmask of negation indices (a merged net may list one negation twice: SEQ(..., !(A d))
    nested in SEQ(..., !(A e)) with the same interval is one negation)."""
    mask = 0
    for j in indices:
        mask |= 1 << j
    return mask


def _win(value: float | int | None) -> float:
    return math.nan if value is None else float(value)


@dataclass(frozen=True)
class LoweredGroup:
    """One shared net as arrays (see the module docstring); ``c_*`` index the run's conditions."""

    index: int
    nslots: int
    nplaces: int
    start: int
    strategy: int
    count_window: bool
    window: float  # NaN: no window
    partition: tuple[str, ...]
    all_users: int
    patterns: tuple[int, ...]  # net pattern index of each user bit
    place_exits: np.ndarray  # uint8 per place: a token there can still move
    place_accepting: np.ndarray  # uint8 per place: a complete match of some pattern
    place_growable: np.ndarray  # int64 per place: pushed negations that block (not cancel) its tokens
    place_rg_start: np.ndarray  # per place: its role groups [start, end)
    rg_mask: np.ndarray  # int64: the patterns of the role group
    rg_window: np.ndarray  # float64: the group's own window (NaN: none)
    rg_final_start: np.ndarray
    rg_final: np.ndarray  # condition ids checked on emission
    rg_role_start: np.ndarray
    role_pattern: np.ndarray  # net pattern index
    role_bit: np.ndarray  # int64 user bit
    rg_emit_start: np.ndarray
    rg_emit: np.ndarray  # negations checked at emission against the buffered negative events
    role_window: np.ndarray  # float64: the role's own window (when its end negation closes)
    role_pending: np.ndarray  # int64 bitmask: end negations the role waits for
    neg_type: np.ndarray  # per negation: event type code
    neg_pushed: np.ndarray  # uint8: evaluated in the scan (cancels tokens) or buffered
    neg_prev_start: np.ndarray
    neg_prev: np.ndarray  # slots of P (after last(P)); none: start of the window
    neg_next_start: np.ndarray
    neg_next: np.ndarray  # slots of Q (before first(Q)); none: end of the window
    neg_cond_start: np.ndarray
    neg_cond: np.ndarray  # conditions mentioning the negated event
    neg_event_start: np.ndarray
    neg_event: np.ndarray  # of those, the ones reading only the negated event
    neg_place_start: np.ndarray
    neg_place: np.ndarray  # places where a pushed negation's interval is open
    type_neg_start: np.ndarray  # per event type code: negations of that type
    type_neg: np.ndarray
    tr_blocked_by: np.ndarray  # int64: negations whose Q this firing starts
    tr_clears: np.ndarray  # int64: negations whose P this firing grows
    tr_src: np.ndarray
    tr_dst: np.ndarray
    held_places: np.ndarray  # places some transition stores tokens at, ascending: the lists a sweep walks
    tr_slot: np.ndarray
    tr_window: np.ndarray  # float64, NaN: none
    tr_mask: np.ndarray  # int64: users the transition serves
    tr_order_start: np.ndarray
    tr_order: np.ndarray  # slots that must be strictly earlier (tie rule strict)
    tr_guard_start: np.ndarray
    tr_guard: np.ndarray  # condition ids decided by this firing
    tr_arc_start: np.ndarray
    tr_arc: np.ndarray  # condition ids reading only the incoming event
    tr_pw_start: np.ndarray  # per-pattern windows where users disagree: (mask, window) pairs
    pw_mask: np.ndarray
    pw_window: np.ndarray
    type_start: np.ndarray  # per event type code: entries [start, end)
    ent_src: np.ndarray  # entry: a source place ...
    ent_tr_start: np.ndarray  # ... and its transitions ent_trs[start:end]
    ent_trs: np.ndarray
    ent_arcs: np.ndarray  # uint8 per entry: some transition has input-arc conditions (else all are enabled)
    ret_start: np.ndarray  # per net pattern index: its RETURN value programs [start, end) (none: not ours)
    ret_prog: np.ndarray  # program ids (evaluated on the match's slots)
    cond_start: np.ndarray  # condition / program id -> offset into code
    code: np.ndarray
    consts: np.ndarray
    const_tags: np.ndarray
    # event time (ON TIMEOUT, LIMIT): per place the patterns (bits) a token there is a
    # partial match of (some transition goes on) and those that emit from it; per user bit
    # the pattern's own window, its LIMIT count (0: none) and policy (LIMIT_POLICIES)
    # Kleene closure: per transition 0, KLEENE_START or KLEENE_TAKE, its deferred iteration
    # conditions as (condition, Kleene slot) pairs; per slot whether it holds a Kleene list
    # (a node of the kernel's element arena) and its aggregates; per condition its iteration slot
    tr_kleene: np.ndarray
    tr_defer_start: np.ndarray
    tr_defer: np.ndarray
    slot_kleene: np.ndarray
    # per slot whether it is a step of a group with optional or Kleene steps (GroupNet.ordered_slots):
    # its list elements carry the order they were bound in, which places them into iterations
    slot_ordered: np.ndarray
    slot_agg_start: np.ndarray
    agg_func: np.ndarray
    agg_attr: np.ndarray
    cond_iter_slot: np.ndarray
    # GREEDY / RELUCTANT (runtime firing._prefer): per place its lists' rules [start, end),
    # each ``2 * slot + 1`` for greedy, ``2 * slot`` for reluctant; per entry 1 where it is
    # joined with the next (a repeated group's rule over several steps: compile/net.py
    # repeat_rules, its moves those binding any of the rule's slots)
    pl_repeat_start: np.ndarray
    pl_repeat: np.ndarray
    pl_repeat_joined: np.ndarray
    place_exit_bits: np.ndarray
    place_emit_bits: np.ndarray
    timeout_mask: int
    limit_mask: int
    # the stop events' negations (UNTIL, issue 42): a token they block still goes on, and
    # times out (runtime GroupRuntime.stop_mask)
    stop_mask: int
    bit_window: np.ndarray
    bit_limit: np.ndarray
    bit_policy: np.ndarray
    # per-step gaps (issue 42): gap_arrays (none: the net pays nothing for them)
    place_gap_start: np.ndarray
    gap_slot: np.ndarray
    gap_hi: np.ndarray
    place_tgap_start: np.ndarray
    tgap_bit: np.ndarray
    tgap_slot: np.ndarray
    tgap_hi: np.ndarray


@dataclass(frozen=True)
class LoweredPattern:
    name: str
    vars: tuple[tuple[str, int], ...]  # (variable name, slot) in the pattern's order
    has_return: bool = False  # its matches are composite events (RETURN)
    returns: tuple[str, ...] = ()  # RETURN field names, in order
    ret_type: int = -1  # type code of its composite events (-1: no RETURN, or no pattern reads them)
    ret_attrs: tuple[int, ...] = ()  # per RETURN field: the attribute column it fills (-1: none reads it)
    # ON TIMEOUT: its event type's name, its fields, the type code of its events (-1: none
    # reads them), the attribute columns the fields fill; the kernel numbers a pattern's
    # timeouts as pattern ``npatterns + index`` (their programs in ret_start there)
    timeout_type: str | None = None
    timeouts: tuple[str, ...] = ()
    to_type: int = -1
    to_attrs: tuple[int, ...] = ()
    window: float | int | None = None  # the pattern's own window (a timeout's deadline)
    count_window: bool = False
    kleene: tuple[str, ...] = ()  # its Kleene variables (their ids: lists)
    domain: int = -1  # its consumption domain (Lowered.domains), -1: it consumes nothing
    consume: tuple[int, ...] = ()  # the slots whose events its matches consume
    # repeated groups (issue 42): (group name, its steps) -- the steps' lists, zipped, are
    # the group's bindings in its ids (runtime.match.group_ids)
    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the groups with optional steps: their ids placed into iterations by input position
    ordered_groups: frozenset[str] = frozenset()
    # the Kleene steps of those groups (``C+ c[]``): each iteration's elements as a list
    repeating_steps: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Lowered:
    """A whole net for the kernel: event type codes, attribute columns, string literals."""

    types: tuple[str, ...]
    attrs: tuple[str, ...]  # attribute columns conditions read (partition attributes are keyed apart)
    strings: tuple[str, ...]  # string literals of conditions: codes 0..n-1 of the run's dictionary
    patterns: tuple[LoweredPattern, ...]
    groups: tuple[LoweredGroup, ...]
    maxslots: int
    maxfields: int = 0  # RETURN fields of the widest RETURN
    # per group: the partition-key dictionary it uses; groups that read composite events share
    # their producers' (a composite event keeps its emitter's key code, see _key_classes)
    key_class: tuple[int, ...] = ()
    # consumption: per domain (a CONFLICT group, or a pattern consuming alone) how far back a
    # consumed event can still be in a match (Engine.sweep forgets older ones; NaN: never)
    domains: tuple[float, ...] = ()
    # integer literals beyond 2**53: codes 0..n-1 of the kernel's ints held exactly (TAG_BIG)
    bigs: tuple[int, ...] = ()


def _refusal(net: Net, tie: str) -> str | None:
    if tie not in TIE_CODES:
        return f"tie rule {tie!r} (the kernel covers {', '.join(TIE_CODES)})"
    if tie == "either" and any(p.strategy != A.Strategy.ANY for p in net.patterns):
        return "tie rule 'either' needs skip-till-any-match"
    if net.rows:
        return "SQL MATCH_RECOGNIZE queries"
    if net.history:
        return "ARCHIVED variables"
    for g in net.groups:
        if len(g.patterns) > MAX_USERS:
            return f"more than {MAX_USERS} patterns share one net"
        for pi in g.patterns:  # (merge._placed never builds this; a net built otherwise)
            for v in net.patterns[pi].vars:
                if g.slot_kleene[v.slot] is not None and not v.kleene:
                    return (
                        f"pattern {net.patterns[pi].name!r}: variable {v.name!r} shares its slot with another "
                        "pattern's Kleene list in one shared net"
                    )
        if len(g.negations) > MAX_USERS:
            return f"more than {MAX_USERS} negations in one shared net"
    return None


def supports(net: Net, tie: str = "arrival") -> tuple[bool, str]:
    """Whether the kernel runs ``net`` under ``tie`` exactly as the Python engine does, and if
    not, the reason (the caller then runs the Python engine): its patterns on the pattern
    kernel (:func:`lower`), its SQL queries on the row matcher (:mod:`.rowlowering`). What no
    engine runs is refused with its error (under ``either``, a group's optional step read by
    iteration)."""
    if tie == "either":
        check_group_ties(net)
    patterns = replace(net, rows=()) if net.rows else net
    reason = _refusal(patterns, tie)
    if reason is None and (net.patterns or not net.rows):
        try:
            lower(patterns)
        except Unsupported as e:
            reason = str(e)
    return (reason is None, reason or "covered")


def lower(net: Net) -> Lowered:
    """The kernel's arrays for ``net``; raises :class:`Unsupported` (with the reason) for a
    construct it does not cover (check :func:`supports` first). Both are frozen, so the
    arrays of the last nets lowered are reused (a streaming query builds an engine per key)."""
    hit = _lowered.get(id(net))
    if hit is not None and hit[0] is net:
        return hit[1]
    lowered = _lower(net)
    if len(_lowered) >= 16:
        _lowered.pop(next(iter(_lowered)))
    _lowered[id(net)] = (net, lowered)
    return lowered


_lowered: dict[int, tuple[Net, Lowered]] = {}


def _lower(net: Net) -> Lowered:
    reason = _refusal(net, "arrival")
    if reason is not None:
        raise Unsupported(reason)
    types = tuple(sorted(net.input_types))
    key_class = _key_classes(net)
    attrs: dict[str, int] = {}
    strings: dict[str, int] = {}
    bigs: dict[int, int] = {}
    composite = frozenset(t for p in net.patterns for t in p.produces)
    codes = [_bytecode(net, g, composite, attrs, strings, bigs) for g in net.groups]
    rets = [_lower_returns(net, g, bc) for g, bc in zip(net.groups, codes)]  # after every condition: attrs complete
    groups = tuple(_lower_group(g, types, bc, ret, net.patterns) for g, bc, ret in zip(net.groups, codes, rets))
    domains = tuple(dict.fromkeys(p.conflict for p in net.patterns if p.conflict is not None))
    patterns = tuple(_lower_pattern(p, types, attrs, domains) for p in net.patterns)
    maxslots = max((g.nslots for g in net.groups), default=1)
    maxfields = max((max(len(p.returns), len(p.timeouts)) for p in patterns), default=0)
    return Lowered(
        types, tuple(attrs), tuple(strings), patterns, groups, max(maxslots, 1), maxfields, key_class,
        tuple(_horizon(net, d) for d in domains), tuple(bigs),
    )


def _horizon(net: Net, domain: str) -> float:
    """The largest time window of the domain's patterns (NaN where one has none or counts)."""
    members = [p for p in net.patterns if p.conflict == domain]
    if any(p.window_value is None or p.window is None or p.window.kind == A.WIN_COUNT for p in members):
        return math.nan
    return float(max(p.window_value for p in members if p.window_value is not None))


def _lower_pattern(
    p: PatternNet, types: tuple[str, ...], attrs: dict[str, int], domains: tuple[str, ...]
) -> LoweredPattern:
    """A pattern's variables and outputs: RETURN and ON TIMEOUT fields, the attribute columns
    they fill for the patterns reading their events. A consumed slot no variable of the
    pattern holds is a broken net, refused here: the kernel reads match rows by slot unchecked."""
    stray = sorted(set(p.consume) - {v.slot for v in p.vars})
    if stray:
        raise ValueError(f"pattern {p.name!r} consumes slots {stray} that none of its variables holds")
    ret, timeout = p.returns, p.timeout
    return LoweredPattern(
        p.name,
        tuple((v.name, v.slot) for v in p.vars),
        ret is not None,
        tuple(f.name for f in ret.fields) if ret else (),
        types.index(ret.type) if ret and ret.type in types else -1,
        tuple(attrs.get(f.name, -1) for f in ret.fields) if ret else (),
        timeout.type if timeout else None,
        tuple(f.name for f in timeout.fields) if timeout else (),
        types.index(timeout.type) if timeout and timeout.type in types else -1,
        tuple(attrs.get(f.name, -1) for f in timeout.fields) if timeout else (),
        p.window_value,
        p.window is not None and p.window.kind == A.WIN_COUNT,
        tuple(v.name for v in p.vars if v.kleene),
        domains.index(p.conflict) if p.conflict is not None else -1,
        p.consume,
        tuple((g, tuple(m)) for g, m in group_steps(p.vars).items()),
        optional_groups(p.vars),
        repeating_steps(p.vars),
    )


def _bytecode(
    net: Net, g: GroupNet, composite: frozenset[str], attrs: dict[str, int], strings: dict[str, int], bigs: dict[int, int]
) -> Bytecode:
    """The group's conditions as bytecode (program id = condition id)."""
    textual = {tr.slot for tr in g.transitions if tr.event_type in composite}
    if any(n.type in composite for n in g.negations):
        textual.add(NEG_SLOT)
    bc = Bytecode(attrs, strings, frozenset(textual), g.slot_kleene, bigs)
    for c in g.conditions:
        bc.add(c)
    return bc


def _lower_returns(net: Net, g: GroupNet, bc: Bytecode) -> list[list[int]]:
    """Per net pattern: the program ids of its RETURN values, compiled against the group's
    slots (empty for patterns of other groups and patterns without RETURN); then per net
    pattern (index ``npatterns + pi``) those of its ON TIMEOUT fields."""
    n = len(net.patterns)
    out: list[list[int]] = [[] for _ in range(2 * n)]
    for pi in g.patterns:
        p = net.patterns[pi]
        names = {v.name: f"#{v.slot}" for v in p.vars}
        if p.returns is not None:
            out[pi] = [bc.add(rename(f.expr, names), value=True) for f in p.returns.fields]
        if p.timeout is not None:
            out[n + pi] = [bc.add(rename(f.expr, names), value=True) for f in p.timeout.fields]
    return out


def _key_classes(net: Net) -> tuple[int, ...]:
    """Which groups share one partition-key dictionary. A composite event enters the groups
    that read its type under its emitter's key code, which is right only where the reading
    group partitions by RETURN fields that copy the emitter's partition attributes, in order
    (``RETURN T(sensor = a.sensor)`` read by a pattern with ``[sensor]``); then both groups
    code keys with one dictionary. Anything else: :class:`Unsupported`."""
    group_of = {pi: g.index for g in net.groups for pi in g.patterns}
    parent = list(range(len(net.groups)))

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for p, out, always in _outputs(net):
        emitter = net.groups[group_of[p.index]]
        fields = {f.name: f.expr for f in out.fields}
        for g in net.groups:
            if not g.partition or out.type not in g.input_types:
                continue
            copies = [fields.get(c) for c in g.partition]
            if len(g.partition) != len(emitter.partition) or not all(
                isinstance(e, A.Attr) and e.index is None and e.var in always and e.field == a
                for e, a in zip(copies, emitter.partition)
            ):
                key = ", ".join(g.partition)
                raise Unsupported(
                    f"pattern {p.name!r}: its composite events are keyed by [{key}], which is not a copy of "
                    f"its own partition [{', '.join(emitter.partition)}]"
                )
            parent[find(g.index)] = find(emitter.index)
    return tuple(find(i) for i in range(len(net.groups)))


def _outputs(net: Net) -> list[tuple[PatternNet, A.Return, set[str]]]:
    """Each pattern's composite outputs (RETURN, ON TIMEOUT) with the variables bound in
    every match (RETURN: every accepting place) or every partial match that can time out
    (every place but the start)."""
    out = []
    for p in net.patterns:
        if p.returns is not None:
            places = [set(pl.bound) for pl in p.places if pl.accepting]
            out.append((p, p.returns, set.intersection(*places) if places else set()))
        if p.timeout is not None:
            places = [set(pl.bound) for pl in p.places if pl.id != p.start]
            out.append((p, p.timeout, set.intersection(*places) if places else set()))
    return out


def _lower_kleene(g: GroupNet, bc: Bytecode) -> dict[str, Any]:
    """Per slot whether it holds a Kleene list and its running aggregates (function code,
    attribute column; -1 for count), and per condition the Kleene slot it iterates over
    (-1: none), for the emission checks that walk every element (GroupRuntime.final_ok)."""
    aggs: list[list[tuple[int, int]]] = []
    for k in g.slot_kleene:
        specs = k.aggs if k is not None else ()
        aggs.append([
            (AGG_CODES[a.func], -1 if a.func == "count" else bc.attrs.setdefault({"ts": TS_ATTR, "id": ID_ATTR}.get(a.field or "", a.field or ""), len(bc.attrs)))
            for a in specs
        ])
    agg_start, _ = _csr([[0] * len(a) for a in aggs])
    iter_slot = []
    for c in g.conditions:
        v = A.iteration_var(c)
        iter_slot.append(int(v[1:]) if v is not None else -1)
    return {
        "slot_kleene": _frozen([k is not None for k in g.slot_kleene] or [False], np.uint8),
        "slot_ordered": _frozen([s in g.ordered_slots for s in range(len(g.slot_kleene))] or [False], np.uint8),
        "slot_agg_start": agg_start,
        "agg_func": _frozen([f for a in aggs for f, _ in a], np.int8),
        "agg_attr": _frozen([c for a in aggs for _, c in a], np.int32),
        "cond_iter_slot": _frozen(iter_slot, np.int32),
        **dict(zip(("pl_repeat_start", "pl_repeat"), _csr([
            [2 * slot + mode.startswith("greedy") for slot, mode in place.repeat] for place in g.places
        ]))),
        "pl_repeat_joined": _frozen([mode.endswith("+") for place in g.places for _slot, mode in place.repeat] or [False], np.uint8),
    }


def _lower_roles(g: GroupNet, bit: dict[int, int]) -> dict[str, Any]:
    """Per place, its role groups: roles with the same emission checks check once per token
    (the engine's GroupRuntime._group_roles, same order)."""
    rg_start, rg_mask, rg_window, finals, emits, role_lists = [0], [], [], [], [], []
    for place in g.places:
        groups: dict[tuple[Any, ...], list[Any]] = {}
        for r in place.roles:
            groups.setdefault((r.final_conditions, r.emit_negations, r.window), []).append(r)
        for (final, negs, window), roles in groups.items():
            rg_mask.append(sum({bit[r.pattern] for r in roles}))
            rg_window.append(_win(window))
            finals.append(list(final))
            emits.append(list(negs))
            role_lists.append(roles)
        rg_start.append(len(rg_mask))
    final_start, final = _csr(finals)
    role_start, role_pattern = _csr([[r.pattern for r in roles] for roles in role_lists])
    emit_start, emit = _csr(emits)
    flat = [r for roles in role_lists for r in roles]
    return {
        "rg_emit_start": emit_start,
        "rg_emit": emit,
        "role_window": _frozen([_win(r.window) for r in flat], np.float64),
        "role_pending": _frozen([_bits(r.pending_negations) for r in flat], np.int64),
        "place_rg_start": _frozen(rg_start, np.int32),
        "rg_mask": _frozen(rg_mask, np.int64),
        "rg_window": _frozen(rg_window, np.float64),
        "rg_final_start": final_start,
        "rg_final": final,
        "rg_role_start": role_start,
        "role_pattern": role_pattern,
        "role_bit": _frozen([bit[int(p)] for p in role_pattern], np.int64),
    }


def _lower_group(
    g: GroupNet, types: tuple[str, ...], bc: Bytecode, rets: list[list[int]], net_patterns: tuple[PatternNet, ...]
) -> LoweredGroup:
    bit = {pi: 1 << k for k, pi in enumerate(g.patterns)}
    all_users = (1 << len(g.patterns)) - 1
    for tr in g.transitions:
        if tr.var != f"#{tr.slot}":
            raise Unsupported(f"transition {tr.id}: variable {tr.var!r} is not its slot")
    ret_start, ret_prog = _csr(rets)
    order_start, order = _csr([tr.order_slots for tr in g.transitions])
    # a Kleene element's iteration conditions are checked right after the guards (GroupRuntime.fire)
    guard_start, guard = _csr([tr.guards + tr.iteration for tr in g.transitions])
    # deferred iteration conditions: (condition, list slot, 0), or a group's replay
    # (condition, its step's slot, the number of steps, their slots: compile/groups.py replay)
    # (a negative number of steps: a group with optional steps, its lists replayed in arrival order)
    ordered = {v.slot for pi in g.patterns for v in net_patterns[pi].vars if v.optional or v.repeats}
    defer_start, defer = _csr(
        [
            [x for d in tr.deferred_iteration for x in (d[0], d[1], -(len(d) - 2) if set(d[2:]) & ordered else len(d) - 2, *d[2:])]
            for tr in g.transitions
        ]
    )
    tr_mask = [sum(bit[u] for u in set(tr.users)) if tr.users else all_users for tr in g.transitions]
    exit_bits = [0] * len(g.places)
    for tr, m in zip(g.transitions, tr_mask):
        exit_bits[tr.src] |= m
    pats = [net_patterns[pi] for pi in g.patterns]
    arc_start, arc = _csr([tr.arc_conditions for tr in g.transitions])
    return LoweredGroup(
        index=g.index,
        nslots=g.nslots,
        nplaces=len(g.places),
        start=g.start,
        strategy=STRATEGY_CODES[g.strategy],
        count_window=g.window_kind == A.WIN_COUNT,
        window=_win(g.window_value),
        partition=g.partition,
        all_users=all_users,
        patterns=g.patterns,
        place_exits=_frozen([p.has_exits for p in g.places], np.uint8),
        place_accepting=_frozen([p.accepting for p in g.places], np.uint8),
        place_growable=_frozen([_bits(p.growable_negations) for p in g.places], np.int64),
        **_lower_negations(g, types),
        tr_blocked_by=_frozen([tr.blocked_by for tr in g.transitions], np.int64),
        tr_clears=_frozen([tr.clears for tr in g.transitions], np.int64),
        **_lower_roles(g, bit),
        tr_src=_frozen([tr.src for tr in g.transitions], np.int32),
        tr_dst=_frozen([tr.dst for tr in g.transitions], np.int32),
        held_places=_frozen(sorted({tr.dst for tr in g.transitions if g.places[tr.dst].has_exits}), np.int32),
        tr_slot=_frozen([tr.slot for tr in g.transitions], np.int32),
        tr_window=_frozen([_win(tr.window) for tr in g.transitions], np.float64),
        tr_mask=_frozen(tr_mask, np.int64),
        tr_order_start=order_start,
        tr_order=order,
        tr_guard_start=guard_start,
        tr_guard=guard,
        tr_arc_start=arc_start,
        tr_arc=arc,
        **_lower_windows(g, bit),
        **_lower_entries(g, types),
        ret_start=ret_start,
        ret_prog=ret_prog,
        cond_start=_frozen(bc.starts + [len(bc.code)], np.int32),
        code=_frozen(bc.code, np.int32),
        consts=_frozen(bc.consts, np.float64),
        const_tags=_frozen(bc.const_tags, np.int8),
        tr_kleene=_frozen([KLEENE_TAKE if tr.take else KLEENE_START if tr.kleene else 0 for tr in g.transitions], np.int8),
        tr_defer_start=defer_start,
        tr_defer=defer,
        **_lower_kleene(g, bc),
        place_exit_bits=_frozen(exit_bits, np.int64),
        place_emit_bits=_frozen([sum({bit[r.pattern] for r in p.roles}) for p in g.places], np.int64),
        timeout_mask=sum(bit[p.index] for p in pats if p.timeout is not None),
        stop_mask=sum(1 << n.index for n in g.negations if n.stops),
        limit_mask=sum(bit[p.index] for p in pats if p.limit is not None),
        bit_window=_frozen([_win(p.window_value) for p in pats], np.float64),
        bit_limit=_frozen([p.limit.count if p.limit else 0 for p in pats], np.int64),
        bit_policy=_frozen([LIMIT_POLICIES[p.limit.policy] if p.limit else 0 for p in pats], np.int8),
        **gap_arrays(g),
    )



def _lower_windows(g: GroupNet, bit: dict[int, int]) -> dict[str, Any]:
    """Per transition the windows of its users where they differ (merged patterns with
    their own windows): (user mask, window) pairs, none where one window holds for all."""
    windows = dict(zip(g.patterns, g.windows)) if g.windows else {}
    pw: list[list[tuple[int, float]]] = []
    for tr in g.transitions:
        by_w: dict[Any, int] = {}
        for u in set(tr.users):
            w = windows.get(u, tr.window)
            by_w[w] = by_w.get(w, 0) | bit[u]
        pw.append([(mask, _win(w)) for w, mask in by_w.items()] if len(by_w) > 1 else [])
    pw_start = [0]
    for pairs in pw:
        pw_start.append(pw_start[-1] + len(pairs))
    return {
        "tr_pw_start": _frozen(pw_start, np.int32),
        "pw_mask": _frozen([m for pairs in pw for m, _ in pairs], np.int64),
        "pw_window": _frozen([w for pairs in pw for _, w in pairs], np.float64),
    }


def _lower_entries(g: GroupNet, types: tuple[str, ...]) -> dict[str, Any]:
    """The transitions each event type can fire, grouped by source place in the Python
    engine's GroupRuntime.by_type order (so the kernel creates tokens in the same order)."""
    by_type: dict[str, dict[int, list[int]]] = {}
    for tr in g.transitions:
        by_type.setdefault(tr.event_type, {}).setdefault(tr.src, []).append(tr.id)
    type_start, ent_src, ent_tr_start, ent_trs = [0], [], [0], []
    ent_arcs: list[bool] = []
    for t in types:
        for src, trs in by_type.get(t, {}).items():
            if len(trs) > MAX_FANOUT:
                raise Unsupported(f"more than {MAX_FANOUT} transitions of type {t!r} leave one place")
            ent_src.append(src)
            ent_trs.extend(trs)
            ent_tr_start.append(len(ent_trs))
            ent_arcs.append(any(g.transitions[tr].arc_conditions for tr in trs))
        type_start.append(len(ent_src))
    return {
        "type_start": _frozen(type_start, np.int32),
        "ent_src": _frozen(ent_src, np.int32),
        "ent_tr_start": _frozen(ent_tr_start, np.int32),
        "ent_trs": _frozen(ent_trs, np.int32),
        "ent_arcs": _frozen(ent_arcs, np.uint8),
    }


def _lower_negations(g: GroupNet, types: tuple[str, ...]) -> dict[str, Any]:
    """The negations' slots, conditions and the places where each is open, per event type
    the negations it can violate."""
    type_neg_start, type_neg = _csr([[n.index for n in g.negations if n.type == t] for t in types])
    active: list[list[int]] = [[] for _ in g.negations]
    for p in g.places:
        for j in p.active_negations:
            active[j].append(p.id)
    negs = g.negations
    csr = {
        "neg_prev": _csr([n.prev_slots for n in negs]),
        "neg_next": _csr([n.next_slots for n in negs]),
        "neg_cond": _csr([n.conditions for n in negs]),
        "neg_event": _csr([n.event_conditions for n in negs]),
        "neg_place": _csr(active),
    }
    return {
        "neg_type": _frozen([types.index(n.type) for n in negs], np.int32),
        "neg_pushed": _frozen([n.pushed for n in negs], np.uint8),
        "type_neg_start": type_neg_start,
        "type_neg": type_neg,
        **{f"{name}_start": pair[0] for name, pair in csr.items()},
        **{name: pair[1] for name, pair in csr.items()},
    }


def gap_arrays(g: GroupNet) -> dict[str, np.ndarray]:
    """The gaps every pattern of a place agrees on (a token's expiry, ``Group.expired``:
    ``place_gap_start``, ``gap_slot``, ``gap_hi``) and each pattern's own (its ON TIMEOUT
    deadline, ``gap_deadline``: ``place_tgap_start``, ``tgap_bit`` -- the pattern's bit in
    the group --, ``tgap_slot``, ``tgap_hi``), per place [start, end)."""
    start, slot = _csr([[sl for sl, _ in p.gap_expiry] for p in g.places])
    bit_index = {pi: k for k, pi in enumerate(g.patterns)}
    own = [[(bit_index[pi], sl, hi) for pi, gaps in p.gap_ends for sl, hi in gaps] for p in g.places]
    own_start, own_bit = _csr([[b for b, _, _ in x] for x in own])
    return {
        "place_gap_start": start,
        "gap_slot": slot,
        "gap_hi": _frozen([float(hi) for p in g.places for _, hi in p.gap_expiry], np.float64),
        "place_tgap_start": own_start,
        "tgap_bit": own_bit,
        "tgap_slot": _frozen([sl for x in own for _, sl, _ in x], np.int32),
        "tgap_hi": _frozen([float(hi) for x in own for _, _, hi in x], np.float64),
    }


def reading_types(net: Net, lowered: Lowered, codes: dict[str, int]) -> dict[str, frozenset[int]]:
    """Per field the kernel reads (``lowered.attrs``), the codes of the event types it is read
    of: by the patterns' conditions, keys and RETURN values (:func:`field_requirements`, the
    fields the readers check), of every type for the time and id, and of the composite
    types (RETURN types) for every field, as their events are the net's own."""
    required, _ = field_requirements([p.source for p in net.patterns])
    composite = {codes[t] for p in net.patterns for t in p.produces if t in codes}
    out: dict[str, frozenset[int]] = {}
    for name in lowered.attrs:
        if name in (TS_ATTR, ID_ATTR):
            out[name] = frozenset(codes.values())
            continue
        out[name] = frozenset(composite | {codes[t] for t, fields in required.items() if name in fields and t in codes})
    return out


__all__ = ["Lowered", "LoweredGroup", "LoweredPattern", "Unsupported", "lower", "reading_types", "supports"]
