"""Independent brute-force reference matcher for petricep.

This module implements ``docs/SEMANTICS.md`` declaratively and by brute force: for every
way of resolving the ``OR`` nodes it enumerates every candidate binding (each positive
variable to a distinct event of its type, each Kleene variable to every non-empty subset of
its type's events in stream order) and keeps exactly the bindings the written rules accept.
It shares no code with the engine: only the AST value classes (``petricep.lang.ast``) and
``petricep.events.Event`` are imported. It is meant for streams of about a dozen events.

Entry point: :func:`reference_run`.

Readings chosen where ``SEMANTICS.md`` leaves room (see also the module's tests):

* Duration windows: ``Window.value`` is the number as written and ``Window.unit`` its unit;
  the window in seconds is ``value * DURATION_UNITS[unit]`` (``unit is None`` means seconds).
* ``v[k]`` past the end of the list: the *comparison* reading it is false (so
  ``NOT (v[3].x > 1)`` is true on a two-element list); arithmetic on it stays missing;
  a RETURN field reading it is ``None``.
* A RETURN field that reads a variable left unbound by an ``OR`` is ``None``.
* Negation inside a nested ``SEQ`` (e.g. under an ``AND`` or ``OR``; inside a repeated group:
  :mod:`tests.reference_groups`, per iteration): P and Q are the
  siblings inside that inner ``SEQ``; with no sibling on a side the window rule applies,
  measured from the whole match's first / last event.
* A match is delayed to its window's close (for its composite event) only when one of the
  negations *active in the match's OR choice* has no Q.
* Composite events: the stream a pattern sees is the input plus the composite events of its
  transitive producers; strict/partition contiguity count those composite events too.
  A composite event sorts right after its emitting event; composite events emitted at the
  same event are ordered by (pattern index in the run, sorted stream keys of the match's
  events, then the events of each variable in written order); one emitted at a composite event sorts right after that composite event. Matches
  emitted at end of stream come after everything emitted at the last input event.
* Per-step gaps (``T v AFTER lo TO hi [unit] [FROM u]``, issue 42): a constraint on the pair
  (v, u): ``lo <= v.ts - u.ts <= hi`` (seconds times the unit's factor), ``u`` the variable
  named, else the positive element before ``v`` in its SEQ. Like the window, it holds of every
  candidate binding and every partial match skip-till-next-match tests.
* Repeated groups (``SEQ(B b, C c)+ g[]``, issue 42): :mod:`tests.reference_groups`; a group is
  one variable of the pattern (precedence, negation neighbours), its value a tuple of
  iterations (step -> event), its ids a list of ``{step: id}``.
* Bounded lists ``T{n,m} v[]`` (issue 42): only lists of n..m events; under skip-till-next-match
  a full list takes no more and a step after a list starts only once it has n events. An
  optional step ``T? v`` is resolved like an OR of the step and no step; a negation condition
  reading one left out forbids nothing (:mod:`tests.reference_optional`). GREEDY / RELUCTANT:
  :meth:`Matcher.modes_ok`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from petricep.events import Event
from petricep.lang.ast import (
    DURATION_UNITS,
    STRATEGIES,
    WIN_COUNT,
    WIN_DURATION,
    WIN_TIME,
    And,
    EventRef,
    Group,
    Node,
    Or,
    Pattern,
    Seq,
    Window,
)
from tests import reference_groups as RG
from tests import reference_negation as RN
from tests import reference_until as RU
from tests.reference_conditions import (
    MISSING,
    Conjunct,
    Env,
    Pending,
    composite_id,
    conjunct,
    holds,
    holds_at,
    return_attrs,
)
from tests.reference_gaps import gap_base, gap_holds, gap_pairs
from tests.reference_optional import optional_siblings, resolutions
from tests.reference_order import dependency_order

__all__ = ["TIES", "reference_run", "window_size"]

TIES = ("arrival", "strict", "either")

ANY = "skip-till-any-match"
NEXT = "skip-till-next-match"
CONTIGUOUS = "strict-contiguity"
PARTITION_CONTIGUOUS = "partition-contiguity"


# ============================================================================ structure


def _is_negation(node: Node) -> bool:
    return isinstance(node, EventRef) and node.negated


def _flatten(node: Node) -> Node:
    """Splice a SEQ that is a direct child of a SEQ into its parent."""
    if isinstance(node, (EventRef, Group)):
        return node
    if isinstance(node, Seq):
        children: list[Node] = []
        for child in node.children:
            flat = _flatten(child)
            if isinstance(flat, Seq):
                children.extend(flat.children)
            else:
                children.append(flat)
        return Seq(tuple(children), node.span)
    if isinstance(node, And):
        return And(tuple(_flatten(c) for c in node.children), node.span)
    if isinstance(node, Or):
        return Or(tuple(_flatten(c) for c in node.children), node.span)
    raise TypeError(f"not a structure node: {node!r}")


def _refs(node: Node) -> list[Any]:
    """The leaves: event references, and repeated groups as one leaf each."""
    if isinstance(node, (EventRef, Group)):
        return [node]
    return [r for child in node.children for r in _refs(child)]


def _validate(node: Node, in_seq: bool = False) -> None:
    if isinstance(node, Group):
        if not all(isinstance(c, EventRef) for c in node.children):
            raise ValueError(f"repeated group {node.var!r}: a SEQ step of single events (or Kleene lists)")
        return
    if isinstance(node, EventRef):
        if node.negated and not in_seq:
            raise ValueError(f"negation !({node.type} {node.var}) outside a SEQ")
        if node.negated and node.kleene:
            raise ValueError(f"negated Kleene variable {node.var!r}")
        return
    if not node.children:
        raise ValueError("empty operator")
    if isinstance(node, Seq) and all(_is_negation(c) for c in node.children):
        raise ValueError("a SEQ needs a positive child")
    for child in node.children:
        _validate(child, isinstance(node, Seq))




def _positive_vars(node: Node) -> list[str]:
    return [r.var for r in _refs(node) if not _is_negation(r)]


@dataclass(frozen=True)
class _NegSpec:
    ref: EventRef
    prev: Node | None  # P: previous positive sibling
    next: Node | None  # Q: next positive sibling


@dataclass(frozen=True)
class _Shape:
    """One OR resolution of the pattern."""

    refs: tuple[EventRef, ...]  # positive references, left to right
    vars: frozenset[str]
    prec: frozenset[tuple[str, str]]  # (u, v): every event of u is before every event of v
    negs: tuple[_NegSpec, ...]
    # per-step gaps of this resolution: an optional step left out is not in it, so the step
    # after it follows the one before it (tests/reference_gaps.py)
    gaps: Mapping[str, tuple[str | frozenset[str], float, float, bool]] = dataclasses.field(default_factory=dict)


def _shape(tree: Node) -> _Shape:
    prec: set[tuple[str, str]] = set()
    negs: list[_NegSpec] = []

    def visit(node: Node) -> None:
        if isinstance(node, EventRef):
            return
        if isinstance(node, Seq):
            kids = node.children
            positives = [c for c in kids if not _is_negation(c)]
            for k, earlier in enumerate(positives):
                for later in positives[k + 1 :]:
                    for u in _positive_vars(earlier):
                        for v in _positive_vars(later):
                            prec.add((u, v))
            for i, child in enumerate(kids):
                if _is_negation(child):
                    before = [c for c in kids[:i] if not _is_negation(c)]
                    after = [c for c in kids[i + 1 :] if not _is_negation(c)]
                    negs.append(
                        _NegSpec(child, before[-1] if before else None, after[0] if after else None)  # type: ignore[arg-type]
                    )
        for child in node.children:
            visit(child)

    visit(tree)
    refs = tuple(r for r in _refs(tree) if not _is_negation(r))
    return _Shape(refs, frozenset(r.var for r in refs), frozenset(prec), tuple(negs), gap_pairs(tree))


# ============================================================================ stream


@dataclass(eq=False)
class Item:
    """An event as one pattern sees it: ``key`` refines ``pos`` (composite events share the
    pos of the event that emitted them), ``idx`` is the place in that pattern's stream."""

    ev: Event
    key: tuple
    idx: int = -1


def window_size(window: Window | None) -> int | float | None:
    """The window bound: timestamp units, seconds (duration) or events; None: no window."""
    if window is None:
        return None
    if window.kind == WIN_TIME:
        return window.value
    if window.kind == WIN_DURATION:
        return window.value * (DURATION_UNITS[window.unit] if window.unit else 1)
    if window.kind == WIN_COUNT:
        return window.value
    raise ValueError(f"unknown window kind {window.kind!r}")


Binding = dict[str, Any]  # var -> Item, or tuple of Item for a Kleene variable


def _items(value: Any) -> tuple[Item, ...]:
    """The events of a value: one Item, a Kleene list, or a group's iterations (dicts)."""
    if not isinstance(value, tuple):
        return (value,)
    return tuple(x for v in value for x in (RG.flat(v) if isinstance(v, dict) else (v,)))


def all_items(binding: Binding) -> list[Item]:
    return [item for value in binding.values() for item in _items(value)]


def env_of(binding: Binding) -> Env:
    values = {var: _values(value) for var, value in binding.items()}
    return Env(values)


def _values(value: Any) -> Any:
    if not isinstance(value, tuple):
        return value.ev
    return tuple({m: RG.each(i, lambda x: x.ev) for m, i in v.items()} if isinstance(v, dict) else v.ev for v in value)


def _ids(value: Any) -> Any:
    if not isinstance(value, tuple):
        return value.ev.id
    return [{m: RG.each(i, lambda x: x.ev.id, list) for m, i in v.items()} if isinstance(v, dict) else v.ev.id for v in value]


# ============================================================================ one pattern




class Matcher:
    def __init__(self, pattern: Pattern, stream: list[Item], tie: str) -> None:
        if tie not in TIES:
            raise ValueError(f"unknown tie rule {tie!r}")
        if pattern.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {pattern.strategy!r}")
        if tie == "either" and pattern.strategy != ANY:
            raise ValueError("tie rule 'either' only goes with skip-till-any-match")
        self.pattern = pattern
        self.stream = stream
        self.tie = tie
        self.strategy = pattern.strategy
        self.partition = tuple(pattern.partition)
        self.window = pattern.window
        self.w = window_size(pattern.window)

        tree = _flatten(pattern.structure)
        _validate(tree)
        refs = _refs(tree)
        names = [r.var for r in refs]
        if len(set(names)) != len(names):
            raise ValueError(f"variable names are not distinct: {names}")
        self.groups = {r.var: r for r in refs if isinstance(r, Group)}
        self.optional_steps = frozenset(s.var for g in self.groups.values() for s in RG.steps(g) if s.optional)
        self.group_of = {s.var: g for g, grp in self.groups.items() for s in RG.steps(grp)}  # (a gap FROM a group's step)
        for g in self.groups.values():
            names.extend(s.var for s in RG.steps(g))
        if len(set(names)) != len(names):
            raise ValueError(f"variable names are not distinct: {names}")
        # a group is a list variable too: whole-list reads wait for it to close
        self.kleene = frozenset(r.var for r in refs if isinstance(r, Group) or r.kleene)
        self.least = {r.var: r.least for r in refs if not isinstance(r, Group) and r.kleene}
        # negations inside a group are the pattern's too (checked per iteration: negations_ok)
        self.group_negs = {n.var: (g, n) for g in self.groups.values() for n, _, _ in RG.negations(g)}
        names.extend(self.group_negs)
        self.negated = {r.var: r for r in refs if _is_negation(r)} | {v: n for v, (_, n) in self.group_negs.items()}
        self.shapes = [_shape(t) for t in resolutions(tree)]
        self.optional_sibs = optional_siblings(tree)
        self.beside_optional = RN.beside_optional(tree)

        self.positive_conj: list[Conjunct] = []
        self.negation_conj: dict[str, list[Conjunct]] = {n: [] for n in self.negated}
        self.stops = RU.stops(tree)  # list -> stop event (UNTIL): tests/reference_until.py
        self.stop_conj: dict[str, list[Conjunct]] = {u.var: [] for u in self.stops.values()}
        for expr in pattern.conditions:
            conj = conjunct(expr, self.kleene, self.optional_steps)
            if conj.vars & self.stop_conj.keys():
                self.stop_conj[next(iter(conj.vars & self.stop_conj.keys()))].append(conj)
                continue
            unknown = conj.vars - set(names)
            if unknown:
                raise ValueError(f"condition mentions unknown variables {sorted(unknown)}")
            negs = conj.vars & self.negated.keys()
            if len(negs) > 1:
                raise ValueError(f"condition mentions two negated variables {sorted(negs)}")
            if negs:
                self.negation_conj[next(iter(negs))].append(conj)
            else:
                self.positive_conj.append(conj)

        # a group's first step's gap on its first iteration: from the event before the group
        self.group_before = {
            g: RG.before_group(tree.children, grp) if isinstance(tree, Seq) else None for g, grp in self.groups.items()
        }

        self.by_type: dict[str, list[Item]] = {}
        for item in stream:
            self.by_type.setdefault(item.ev.type, []).append(item)

    # ------------------------------------------------------------------ basic relations

    def before(self, x: Item, y: Item) -> bool:
        if self.tie == "arrival":
            return (x.ev.ts, x.key) < (y.ev.ts, y.key)
        if self.tie == "strict":
            return x.ev.ts < y.ev.ts
        return x.ev.ts <= y.ev.ts and x is not y

    def in_window(self, items: Sequence[Item]) -> bool:
        if self.w is None or not items:
            return True
        if self.window is not None and self.window.kind == WIN_COUNT:
            return max(i.ev.pos for i in items) - min(i.ev.pos for i in items) < self.w
        return max(i.ev.ts for i in items) - min(i.ev.ts for i in items) <= self.w

    def pkey(self, item: Item) -> Any:
        try:
            return tuple(item.ev.get(a) for a in self.partition)
        except KeyError:
            return MISSING

    def same_partition(self, items: Sequence[Item]) -> bool:
        if not self.partition:
            return True
        keys = [self.pkey(i) for i in items]
        return all(k is not MISSING and k == keys[0] for k in keys)

    # ------------------------------------------------------------------ enumeration

    def matches(self) -> list[tuple[_Shape, Binding]]:
        found: list[tuple[_Shape, Binding]] = []
        for shape in self.shapes:
            for binding in self.bindings(shape):
                if self.negations_ok(shape, binding) and self.until_ok(binding) and self.strategy_ok(binding):
                    found.append((shape, binding))
        return found

    def bindings(self, shape: _Shape) -> Iterator[Binding]:
        """Every skip-till-any-match binding of one OR resolution, without negations."""
        live = [c for c in self.positive_conj if c.vars <= shape.vars]  # others: vacuous
        order = [r.var for r in shape.refs]
        ready: list[list[Conjunct]] = []
        for k, var in enumerate(order):
            bound = set(order[: k + 1])
            ready.append([c for c in live if var in c.vars and c.vars <= bound])
        constant = [c for c in live if not c.vars]
        if not all(holds(c, Env({})) for c in constant):
            return

        def extend(k: int, binding: Binding, used: frozenset[int]) -> Iterator[Binding]:
            if k == len(shape.refs):
                yield dict(binding)
                return
            ref = shape.refs[k]
            bound_items = all_items(binding)

            def fitting(r: EventRef, var: str = ref.var) -> list[Item]:
                return [
                    item
                    for item in self.by_type.get(r.type, [])
                    if item.idx not in used and self.fits(item, var, shape, binding, bound_items)
                ]

            values: list[Any]
            if isinstance(ref, Group):
                values = RG.group_values(
                    ref,
                    fitting,
                    self.before,
                    lambda evs: self.in_window([*bound_items, *evs]) and self.same_partition([*bound_items, *evs]),
                    binding.get(self.group_before.get(ref.var) or ""),
                    binding,
                )
            else:
                fits = fitting(ref)
                values = self.kleene_lists(fits, ref) if ref.kleene else fits
            for value in values:
                new = _items(value)
                if not self.in_window([*bound_items, *new]) or not self.same_partition([*bound_items, *new]):
                    continue
                if ref.var in self.kleene and not self.gaps_ok(shape, {**binding, ref.var: value}):
                    continue
                binding[ref.var] = value
                env = env_of(binding)
                if all(holds(c, env) for c in ready[k]):
                    yield from extend(k + 1, binding, used | {i.idx for i in new})
                del binding[ref.var]

        yield from extend(0, {}, frozenset())

    def fits(self, item: Item, var: str, shape: _Shape, binding: Binding, bound: list[Item]) -> bool:
        """Order, window and partition constraints between one candidate event and the
        variables bound so far (each is a constraint on pairs of events)."""
        for other, value in binding.items():
            for e in _items(value):
                if (other, var) in shape.prec and not self.before(e, item):
                    return False
                if (var, other) in shape.prec and not self.before(item, e):
                    return False
        # (a list's gap is a chain, decided on the whole list: Matcher.matches)
        in_gaps = var in self.kleene or self.gaps_ok(shape, {**binding, var: item})
        return self.in_window([*bound, item]) and self.same_partition([*bound, item]) and in_gaps

    def gaps_ok(self, shape: _Shape, partial: Binding) -> bool:
        """Every per-step gap of the resolution whose step is bound holds (_gap_holds)."""
        for var, (base, lo, hi, events) in shape.gaps.items():
            if var in partial and not gap_holds(partial[var], gap_base(partial, base, self.group_of), lo, hi, events):
                return False
        return True

    def kleene_lists(self, items: list[Item], ref: EventRef) -> list[tuple[Item, ...]]:
        """Every sub-list in stream order whose consecutive elements are before, of at least
        ``ref.least`` and at most ``ref.most`` elements (``T+``: one, unbounded)."""
        out: list[tuple[Item, ...]] = []

        def grow(prefix: tuple[Item, ...], start: int) -> None:
            if ref.most is not None and len(prefix) >= ref.most:
                return
            for j in range(start, len(items)):
                lst = (*prefix, items[j])
                if prefix and not self.before(prefix[-1], items[j]):
                    continue
                if not self.in_window(lst):
                    continue
                if len(lst) >= ref.least:
                    out.append(lst)
                grow(lst, j + 1)

        grow((), 0)
        return out

    # ------------------------------------------------------------------ negation

    def until_ok(self, binding: Binding) -> bool:
        """No stop event (UNTIL) stops a list of ``binding``: tests/reference_until.py."""
        return not self.stops or RU.until_ok(self, binding, self.stop_conj, env_of(binding).values)

    def negations_ok(self, shape: _Shape, binding: Binding) -> bool:
        bound = all_items(binding)
        used = {i.idx for i in bound}
        first = min(bound, key=lambda i: i.idx)
        last = max(bound, key=lambda i: i.idx)
        key = self.pkey(first)
        absent = {o for o, sibs in self.optional_sibs.items() if o not in shape.vars and sibs & shape.vars}
        for spec in shape.negs:
            n = spec.ref
            if any(c.vars & absent for c in self.negation_conj[n.var]):
                continue  # reads an optional step the match leaves out: unknown, forbids nothing
            conds = [c for c in self.negation_conj[n.var] if c.vars - {n.var} <= shape.vars]
            prev_items = _node_items(spec.prev, binding)
            next_items = _node_items(spec.next, binding)
            for x in self.by_type.get(n.type, []):
                if x.idx in used:
                    continue
                if self.partition and self.pkey(x) != key:
                    continue
                if not self.above_lower(x, prev_items, last) or not self.below_upper(x, next_items, first):
                    continue
                env = env_of({**binding, n.var: x})
                if all(holds(c, env) for c in conds):
                    return False
        return self.group_negations_ok(shape, binding, used, key)

    def group_negations_ok(self, shape: _Shape, binding: Binding, used: set[int], key: Any) -> bool:
        """No negation inside a group is violated in an interval of it with both ends bound:
        :func:`tests.reference_groups.violated`, the bounds and conditions as any negation's."""

        def violates(g: str, n: EventRef, x: Item, p: Item, q: Item, k: int | None, so_far: tuple[Any, ...]) -> bool:
            conds = [c for c in self.negation_conj[n.var] if c.vars - {n.var} <= shape.vars]
            env = env_of({**binding, g: so_far, n.var: x})  # (its conditions read the group so far)
            if x.idx in used or (self.partition and self.pkey(x) != key):
                return False
            return self.above_lower(x, [p], p) and self.below_upper(x, [q], q) and all(holds_at(c, env, k) for c in conds)

        return not any(
            RG.violated(self.groups[v], value, self.by_type, lambda *a, v=v: violates(v, *a)) for v, value in binding.items() if v in self.groups
        )

    def above_lower(self, x: Item, prev_items: list[Item], last: Item) -> bool:
        if prev_items:
            p = max(prev_items, key=lambda i: i.idx)
            if self.tie == "arrival":
                return (x.ev.ts, x.key) > (p.ev.ts, p.key)
            return x.ev.ts > p.ev.ts
        if self.w is None:
            return True
        if self.window is not None and self.window.kind == WIN_COUNT:
            return x.ev.pos > last.ev.pos - self.w
        return x.ev.ts >= last.ev.ts - self.w

    def below_upper(self, x: Item, next_items: list[Item], first: Item) -> bool:
        if next_items:
            q = min(next_items, key=lambda i: i.idx)
            if self.tie == "arrival":
                return (x.ev.ts, x.key) < (q.ev.ts, q.key)
            return x.ev.ts < q.ev.ts
        if self.w is None:
            return True
        if self.window is not None and self.window.kind == WIN_COUNT:
            return x.ev.pos < first.ev.pos + self.w
        return x.ev.ts <= first.ev.ts + self.w

    # ------------------------------------------------------------------ strategies

    def strategy_ok(self, binding: Binding) -> bool:
        if self.strategy == ANY:
            return True
        ordered = sorted(all_items(binding), key=lambda i: i.idx)
        if self.strategy == CONTIGUOUS or (self.strategy == PARTITION_CONTIGUOUS and not self.partition):
            return all(b.idx == a.idx + 1 for a, b in zip(ordered, ordered[1:]))
        if self.strategy == PARTITION_CONTIGUOUS:
            key = self.pkey(ordered[0])
            return not any(
                self.pkey(x) == key
                for a, b in zip(ordered, ordered[1:])
                for x in self.stream[a.idx + 1 : b.idx]
            )
        return self.next_match_ok(binding) and all(self.modes_ok(shape, binding) for shape in self.shapes if shape.vars == binding.keys())

    def next_match_ok(self, binding: Binding) -> bool:
        """skip-till-next-match: no event skipped between e_j and e_(j+1) extends P_j."""
        pairs = sorted(
            ((item, var) for var, value in binding.items() for item in _items(value)), key=lambda p: p[0].idx
        )
        for j in range(1, len(pairs)):
            prefix: Binding = {}
            for item, var in pairs[:j]:
                if var in self.groups:
                    prefix[var] = RG.prefix_add(self.groups[var], prefix.get(var), self._step_of(var, item, binding), item)
                elif var in self.kleene:
                    prefix[var] = (*prefix.get(var, ()), item)
                else:
                    prefix[var] = item
            for x in self.stream[pairs[j - 1][0].idx + 1 : pairs[j][0].idx]:
                if self.extends(prefix, x):
                    return False
        return True

    def _step_of(self, group: str, item: Item, binding: Binding) -> str:
        """The step of ``group`` that ``item`` is bound to in ``binding``."""
        return next(m for it in binding[group] for m, i in it.items() if any(x is item for x in RG.elements(i)))

    def _open_group_before(self, shape: _Shape, prefix: Binding, v: str) -> bool:
        """A group before ``v`` is in the middle of an iteration: ``v`` cannot come yet."""
        return any((g, v) in shape.prec and g in prefix and not RG.complete(grp, prefix[g]) for g, grp in self.groups.items())

    def extends(self, prefix: Binding, x: Item, only: Any = None) -> bool:
        """Can some variable take x, given the partial match ``prefix``? ``only``: a test
        on the variable's name, for the variables that count (GREEDY / RELUCTANT)."""
        bound = set(prefix)
        for shape in self.shapes:
            if not bound <= shape.vars:
                continue  # OR choices of the prefix rule this resolution out
            for ref in shape.refs:
                if only is not None and not only(ref.var):
                    continue
                if isinstance(ref, Group):
                    if self._group_takes(shape, prefix, ref, x):
                        return True
                    continue
                if ref.type != x.ev.type or self._open_group_before(shape, prefix, ref.var):
                    continue
                v = ref.var
                if v in prefix:
                    followed = any((v, w) in shape.prec for w in bound)
                    if not ref.kleene or followed or (ref.most is not None and len(prefix[v]) >= ref.most):
                        continue
                    new = {**prefix, v: (*prefix[v], x)}
                else:
                    new = {**prefix, v: (x,) if ref.kleene else x}
                if any((u, v) in shape.prec and not self.complete(u, prefix) for u in shape.vars):
                    continue
                if self.partial_ok(shape, new) and not RN.blocked(self, shape, prefix, v, x, env_of):
                    return True  # (a pushed negation forbids x to Q: tests/reference_negation.py)
        return False

    def _group_takes(self, shape: _Shape, prefix: Binding, group: Group, x: Item, steps: Any = None) -> bool:
        """Can ``group`` take ``x`` as its next step, given ``prefix``? ``steps``: a test on
        the step's name, for the steps that count (a Kleene step's GREEDY / RELUCTANT)."""
        v = group.var
        if v in prefix and any((v, w) in shape.prec for w in prefix):
            return False  # closed: a step after the group is bound
        if any((u, v) in shape.prec and not self.complete(u, prefix) for u in shape.vars):
            return False  # (a bounded list before the group: once it has its fewest events)
        if any((u, v) in shape.prec and u in self.groups and not RG.complete(self.groups[u], prefix[u]) for u in prefix):
            return False
        news = [
            RG.prefix_add(group, prefix.get(v), s.var, x)
            for s in RG.next_steps(group, prefix.get(v))
            if s.type == x.ev.type and (steps is None or steps(s.var))
        ]
        return any(self.partial_ok(shape, {**prefix, v: new}) for new in news)

    def modes_ok(self, shape: _Shape, binding: Binding) -> bool:
        """GREEDY / RELUCTANT lists (skip-till-next-match): no event of the match bound to
        another variable while a greedy list is open (its first event bound, no step after it
        yet: the step after it, an AND sibling) could have extended the list instead; no
        element after a reluctant list's first could have bound another variable instead."""
        pairs = sorted(((i, var) for var, value in binding.items() for i in _items(value)), key=lambda p: p[0].idx)

        def before(item: Item) -> Binding:
            prefix: Binding = {}
            for it, var in pairs:
                if it.idx >= item.idx:
                    break
                if var in self.groups:  # a group's events iteration by iteration
                    prefix[var] = RG.prefix_add(self.groups[var], prefix.get(var), self._step_of(var, it, binding), it)
                else:
                    prefix[var] = (*prefix.get(var, ()), it) if var in self.kleene else it
            return prefix

        for ref in shape.refs:
            if not getattr(ref, "mode", None) or ref.var not in binding:
                continue
            v, lst = ref.var, binding[ref.var]
            if ref.mode == "greedy":
                # every event of another variable while the list is open (started, no step after
                # it bound): in a SEQ the step after it; inside AND an AND sibling's too
                for it, var in pairs:
                    prefix = before(it)
                    if var == v or v not in prefix:
                        continue
                    if any((v, w) in shape.prec for w in prefix):
                        break  # closed
                    if self.extends(prefix, it, only=lambda u, v=v: u == v):
                        return False
            elif any(self.extends(before(el), el, only=lambda u, v=v: u != v) for el in _items(lst)[1:]):
                return False
        for var, group in self.groups.items():
            for step in RG.steps(group):
                if step.mode and var in binding and not self._step_mode_ok(shape, binding, group, step, pairs, before):
                    return False
        return True

    def _step_mode_ok(self, shape: _Shape, binding: Binding, group: Group, step: Any, pairs: list[Any], before: Any) -> bool:
        """GREEDY / RELUCTANT on a Kleene step inside a group, iteration by iteration as on a
        list: while an iteration's list is open (its last bound step, so it has its first
        element), no event the match binds otherwise could have extended it instead (GREEDY),
        no element of it could have bound the iteration's next step or another variable
        instead (RELUCTANT)."""
        v = group.var
        mine = {id(x) for it in binding[v] for x in RG.elements(it.get(step.var, ()))}
        for item, _var in pairs:
            prefix = before(item)
            value = prefix.get(v)
            if not value or list(value[-1])[-1] != step.var:
                continue  # (the list is not open here)
            if step.mode == "greedy":
                if id(item) not in mine and self._group_takes(shape, prefix, group, item, lambda u: u == step.var):
                    return False
            elif id(item) in mine and (
                self._group_takes(shape, prefix, group, item, lambda u: u != step.var) or self.extends(prefix, item, only=lambda u: u != v)
            ):
                return False
        return True

    def complete(self, var: str, prefix: Binding) -> bool:
        """``var`` is bound in ``prefix`` and, a Kleene list, has at least its fewest events
        (a step after it may start only then)."""
        if var not in prefix:
            return False
        if var in self.groups:
            return bool(RG.complete(self.groups[var], prefix[var]))
        return var not in self.kleene or len(prefix[var]) >= self.least[var]

    def partial_ok(self, shape: _Shape, partial: Binding) -> bool:
        for u, w in shape.prec:
            if u in partial and w in partial:
                for a in _items(partial[u]):
                    for b in _items(partial[w]):
                        if not self.before(a, b):
                            return False
        for var, value in partial.items():
            if var in self.groups:
                group = self.groups[var]
                if not RG.chain_ok(group, value, self.before):
                    return False
                if not RG.gaps_ok(group, value, partial.get(self.group_before.get(var) or ""), partial):
                    return False
            elif var in self.kleene and not all(self.before(a, b) for a, b in zip(value, value[1:])):
                return False
        items = all_items(partial)
        if not self.in_window(items) or not self.same_partition(items) or not self.gaps_ok(shape, partial) or not self.until_ok(partial):
            return False
        if self.group_negs and not self.group_negations_ok(shape, partial, {i.idx for i in items}, self.pkey(items[0])):
            return False  # (an iteration broken by a negation inside its group extends nothing)
        closed = {k for k in self.kleene if k in partial and any((k, w) in shape.prec for w in partial)}
        env = env_of(partial)
        for conj in self.positive_conj:
            if not conj.vars <= partial.keys():
                continue
            if conj.whole - closed:
                continue  # whole-list condition of a list that may still grow
            if any(len(partial[k]) < c and k not in closed for k, c in conj.consts):
                continue  # v[k] not reached yet
            try:
                if not holds(conj, env):
                    return False
            except Pending:
                continue  # reads a step its group's current iteration has not bound yet
        return True

    # ------------------------------------------------------------------ emission

    def emitted_at(self, shape: _Shape, binding: Binding, end: Item) -> Item:
        """The event at which the match is emitted (``end``: the end-of-stream marker)."""
        bound = all_items(binding)
        first = min(bound, key=lambda i: i.idx)
        last = max(bound, key=lambda i: i.idx)
        if not any(spec.next is None for spec in shape.negs):
            return last
        if self.w is None:
            return end
        for item in self.stream:
            if self.window is not None and self.window.kind == WIN_COUNT:
                if item.ev.pos >= first.ev.pos + self.w:
                    return item
            elif item.ev.ts > first.ev.ts + self.w:
                return item
        return end


def _node_items(node: Node | None, binding: Binding) -> list[Item]:
    if node is None:
        return []
    return [i for var in _positive_vars(node) for i in _items(binding[var])]


# ============================================================================ the run


def reference_run(patterns: Sequence[Pattern], events: Sequence[Event], tie: str = "arrival") -> list[dict]:
    """Every match of every pattern over ``events`` (already in stream order).

    Each match is ``{"pattern", "ids", "start", "end", "attrs"}`` like the engine's JSON
    output. Patterns whose input type is another pattern's RETURN type consume that
    pattern's composite events.
    """
    if tie not in TIES:
        raise ValueError(f"unknown tie rule {tie!r}; expected one of {TIES}")
    names = [p.name for p in patterns]
    if len(set(names)) != len(names):
        raise ValueError(f"pattern names are not distinct: {names}")
    for a, b in zip(events, events[1:]):
        if b.ts < a.ts:
            raise ValueError(f"events out of timestamp order at pos {b.pos}")
    inputs = [Item(e, ((e.pos, 0),)) for e in events]
    end = None
    if events:
        last = events[-1]
        end = Item(last, ((last.pos, 1),))  # end of stream: after everything at the last event

    order, producers = dependency_order(patterns)
    composites: dict[int, list[Item]] = {}
    results: dict[int, list[dict]] = {}
    for pi in order:
        pattern = patterns[pi]
        pool = inputs + [c for q in sorted(producers[pi]) for c in composites[q]]
        pool.sort(key=lambda it: (it.ev.ts, it.key))
        stream = [Item(it.ev, it.key, idx) for idx, it in enumerate(pool)]
        matcher = Matcher(pattern, stream, tie)
        written = [r.var for r in _refs(pattern.structure) if not _is_negation(r)]

        emitted = []
        for shape, binding in matcher.matches():
            at = matcher.emitted_at(shape, binding, end)  # type: ignore[arg-type]
            positions = tuple(sorted(i.key for i in all_items(binding)))
            by_var = tuple(tuple(i.key for i in _items(binding[v])) if v in binding else () for v in written)
            emitted.append((at.key + ((pi, positions, by_var),), by_var, at, binding))
        emitted.sort(key=lambda e: (e[0], e[1]))

        rows: list[dict] = []
        composites[pi] = []
        for ckey, _, at, binding in emitted:
            attrs = return_attrs(pattern, env_of(binding), matcher.optional_steps)
            bound = all_items(binding)
            rows.append(
                {
                    "pattern": pattern.name,
                    "ids": {var: _ids(value) for var, value in binding.items()},
                    "start": min(i.ev.ts for i in bound),
                    "end": max(i.ev.ts for i in bound),
                    "attrs": attrs,
                }
            )
            if pattern.returns is not None:
                event = Event(pattern.returns.type, at.ev.ts, at.ev.pos, composite_id(pattern.name, rows[-1]["ids"], written), dict(attrs))
                composites[pi].append(Item(event, ckey))
        results[pi] = rows
    return [row for pi in range(len(patterns)) for row in results[pi]]
