"""How a compiled net is split for a distributed run (pure Python: no pyspark here).

A *group* is a set of patterns that must run in one engine: patterns connected through
RETURN types (a producer and its consumers) and patterns sharing a consumption domain.
A group is distributed by key — each event goes to the engine of its ``[attr]`` value —
only when that cannot change a match:

* every pattern of the group partitions on the same attributes;
* no pattern is ``strict-contiguity`` (its interruptions come from every key);
* every composite event a consumer reads carries the consumer's key: for each partition
  attribute ``a`` the producer's RETURN has a field named ``a`` whose expression is
  exactly ``v.a`` for one of its (non-Kleene) variables ``v``.

Other groups run in one partition (key ``""``), with a warning saying why. Groups with
the same routing (the same partition attributes, or both single-partition) are merged, so
an event type read by several patterns is shipped and processed once.

Every engine is built from the whole net; a group only keeps the matches of its own
patterns. A pattern outside the group can only see the group's events and its composite
events never reach the group (it would be connected to it otherwise), so its (dropped)
output cannot change the group's matches.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from petricep.compile.net import Net, PatternNet
from petricep.compile.rows import RowNet
from petricep.events import Event
from petricep.lang import ast as A
from petricep.merge import connected_patterns

SINGLE = ""  # the routing key of a group that runs in one partition
MISSING_KEY = "\x00missing"  # events without a partition attribute: their engine reports it
_ABSENT: Any = object()


@dataclass(frozen=True)
class Group:
    """Patterns that run together in one engine per key (or in one partition)."""

    index: int
    patterns: tuple[str, ...]  # names, in the net's order
    attrs: tuple[str, ...]  # routing key attributes, sorted; () = one partition
    all_types: bool  # events of every type are routed here (contiguity: any event interrupts)
    types: frozenset[str]  # the types its patterns read
    producers: frozenset[str]  # patterns of the group with RETURN (their matches re-enter)
    time_windows: tuple[float | int, ...]  # distinct windows in ts units (time and duration)
    count_windows: tuple[int, ...]  # distinct WITHIN n EVENTS
    clock_sensitive: bool  # emission points matter: streaming runs it in one partition
    reason: str  # why it runs in one partition ("" when keyed)
    waits: bool = True  # some pattern has an end negation: its matches wait for a window to close

    @property
    def keyed(self) -> bool:
        return bool(self.attrs)


@dataclass(frozen=True)
class Plan:
    net: Net
    groups: tuple[Group, ...]
    warnings: tuple[str, ...]

    def routes(self) -> dict[str, tuple[tuple[int, tuple[str, ...]], ...]]:
        """Event type -> the (group, key attributes) that read it."""
        out: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        for g in self.groups:
            for t in sorted(g.types):
                out.setdefault(t, []).append((g.index, g.attrs))
        return {t: tuple(v) for t, v in out.items()}

    def group_of(self) -> dict[str, int]:
        return {name: g.index for g in self.groups for name in g.patterns}


class Router:
    """Routes input events to ``(group, key)`` pairs (built from a :class:`Plan`).

    A group gets the events of the types its patterns read — one without a partition
    attribute goes to :data:`MISSING_KEY`, where the engine reports it as the embedded one
    does — and, when it is contiguous, every other event that has its key (strict
    contiguity: every event), since any of them interrupts."""

    def __init__(self, plan: Plan) -> None:
        self.routes = plan.routes()
        self.contiguous = [(g.index, g.attrs, g.types) for g in plan.groups if g.all_types]
        self.cache: dict[Any, str] = {}  # value of a single key attribute -> its routing key
        # types routed to exactly one group by one attribute (and nowhere else): the fast path
        self.fast: dict[str, tuple[int, str]] = {}
        for t, routes in self.routes.items():
            if (
                len(routes) == 1
                and len(routes[0][1]) == 1
                and all(t in types for _, _, types in self.contiguous)
            ):
                self.fast[t] = (routes[0][0], routes[0][1][0])

    def key(self, e: Event, attrs: tuple[str, ...]) -> str:
        if len(attrs) != 1:
            return key_text(e, attrs)
        v = e.attrs.get(attrs[0], _ABSENT)
        if v is _ABSENT:
            return MISSING_KEY
        try:
            return self.cache[v]
        except KeyError:
            if len(self.cache) > 1_000_000:
                self.cache.clear()
            text = self.cache[v] = key_text(e, attrs)
            return text
        except TypeError:  # unhashable: the engine will say so
            return key_text(e, attrs)

    def route(self, e: Event) -> list[tuple[int, str]]:
        out = [(g, self.key(e, attrs)) for g, attrs in self.routes.get(e.type, ())]
        for g, attrs, types in self.contiguous:
            if e.type not in types:
                key = self.key(e, attrs)
                if key != MISSING_KEY:
                    out.append((g, key))
        return out

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "cache": {}}


def key_text(e: Event, attrs: tuple[str, ...]) -> str:
    """The routing key: equal for values the engine treats as one key (``1``, ``1.0``, ``True``)."""
    if not attrs:
        return SINGLE
    try:
        values = tuple(canonical(e.attrs[a]) for a in attrs)
    except KeyError:
        return MISSING_KEY  # the engine of that key raises the same error the embedded one does
    return repr(values)


def canonical(v: Any) -> Any:
    """One representative of the values Python's ``==``/``hash`` treat as one dict key."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, str)) or v is None:
        return v
    if isinstance(v, float):
        return int(v) if v.is_integer() else v
    if isinstance(v, (Decimal, numbers.Real)):
        try:
            i = int(v)  # type: ignore[arg-type]
            if v == i:
                return i
            f = float(v)
            if f == v:
                return f
        except (TypeError, ValueError, OverflowError):
            pass
        return v
    if isinstance(v, tuple):
        return tuple(canonical(x) for x in v)
    return v


# ----------------------------------------------------------------------------- planning


def _conflict(p: PatternNet) -> Any:
    return getattr(p, "conflict", None)


def has_end_negation(node: Any) -> bool:
    """Whether a pattern structure has a negation with no positive element after it in its
    SEQ (its matches wait for the window to close). Unknown nodes count as yes."""
    if isinstance(node, A.EventRef):
        return False
    if isinstance(node, A.Seq):
        kids: list[Any] = []

        def flat(n: Any) -> None:
            for c in n.children:
                if isinstance(c, A.Seq):
                    flat(c)
                else:
                    kids.append(c)

        flat(node)
        for i, c in enumerate(kids):
            if isinstance(c, A.EventRef):
                if c.negated and not any(
                    not (isinstance(k, A.EventRef) and k.negated) for k in kids[i + 1 :]
                ):
                    return True
            elif has_end_negation(c):
                return True
        return False
    if isinstance(node, (A.And, A.Or)):
        return any(has_end_negation(c) for c in node.children)
    return True


def closes_windows(p: PatternNet) -> bool:
    """Some output of ``p`` waits for a window to close: an end negation, or ON TIMEOUT."""
    return p.timeout is not None or has_end_negation(p.source.structure)


def _keeps_key(producer: PatternNet, attrs: Iterable[str]) -> bool:
    """The producer's composite events carry its key: RETURN (and ON TIMEOUT RETURN) have
    ``a = v.a`` for every attr."""
    outputs = [r for r in (producer.returns, producer.timeout) if r is not None]
    if not outputs:
        return False
    kleene = {v.name for v in getattr(producer, "vars", ()) if getattr(v, "kleene", False)}
    for ret in outputs:
        fields = {f.name: f.expr for f in ret.fields}
        for a in attrs:
            expr = fields.get(a)
            if not (
                isinstance(expr, A.Attr) and expr.field == a and expr.index is None and expr.var not in kleene
            ):
                return False
    return True


def make_plan(net: Net) -> Plan:
    """The net's patterns in groups that can run apart: connected ones (one reads what
    another returns, or they share a consumption domain) together, components routed alike
    merged, each group keyed by its partition attributes where that is exact."""
    patterns = list(net.patterns)
    components, consumed_from = connected_patterns(patterns)
    warnings: list[str] = []
    # components with the same routing are merged: (key attrs or None, clock-sensitive, all types)
    merged: dict[tuple[Any, bool, bool], list[int]] = {}
    reasons: dict[tuple[Any, bool, bool], list[str]] = {}
    for members in components:
        names = [patterns[i].name for i in members]
        attrs = {tuple(sorted(patterns[i].partition)) for i in members}
        reason = _unkeyed_reason(patterns, members, attrs, consumed_from)
        contiguous = any(patterns[i].strategy.contiguous for i in members)
        sig = (None if reason else next(iter(attrs)), _clock_sensitive(patterns, members), contiguous)
        merged.setdefault(sig, []).extend(members)
        if reason:
            warnings.append(
                f"warning: {', '.join(repr(x) for x in names)} run{'s' if len(names) == 1 else ''} in one Spark "
                f"partition: {reason}"
            )
            reasons.setdefault(sig, []).append(reason)
    groups: list[Group] = []
    for sig, members in sorted(merged.items(), key=lambda kv: min(kv[1])):
        groups.append(_group(len(groups), [patterns[i] for i in sorted(members)], sig, "; ".join(reasons.get(sig, []))))
    for rn in net.rows:
        groups.append(_row_group(len(groups), rn))
        if not rn.partition:
            warnings.append(f"warning: {rn.name!r} runs in one Spark partition: query {rn.name!r} has no PARTITION BY")
    return Plan(net, tuple(groups), tuple(warnings))


def _clock_sensitive(patterns: list[PatternNet], members: list[int]) -> bool:
    """Whether a group's results depend on when windows close relative to other events
    (a pattern closing windows whose output the group reads, a count window, consumption)."""
    member_set = set(members)
    consumers_of_type: dict[str, set[int]] = {}
    for j, q in enumerate(patterns):
        for t in q.input_types:
            consumers_of_type.setdefault(t, set()).add(j)
    for i in members:
        p = patterns[i]
        if not closes_windows(p):
            continue
        consumed = any(consumers_of_type.get(made, set()) & member_set for made in p.produces)
        count = p.window is not None and p.window.kind == A.WIN_COUNT
        if consumed or count or any(_conflict(patterns[j]) is not None for j in members):
            return True
    return False


def _unkeyed_reason(
    patterns: list[PatternNet], members: list[int], attrs: set[tuple[str, ...]], consumed_from: list[tuple[int, int]]
) -> str:
    """Why a component cannot be split by key ("" when it can)."""
    names = [patterns[i].name for i in members]
    if any(not patterns[i].partition for i in members):
        unkeyed = [patterns[i].name for i in members if not patterns[i].partition]
        return f"pattern {unkeyed[0]!r} has no [attr] partition"
    if len(attrs) > 1:
        return f"patterns {', '.join(repr(x) for x in names)} are connected but partition on different attributes"
    if any(patterns[i].strategy == A.Strategy.STRICT for i in members):
        strict = [patterns[i].name for i in members if patterns[i].strategy == A.Strategy.STRICT]
        return f"pattern {strict[0]!r} is strict-contiguity (events of every key interrupt it)"
    (key,) = attrs
    for i, j in consumed_from:
        if i in members and not _keeps_key(patterns[i], key):
            return (
                f"the RETURN of {patterns[i].name!r} (read by {patterns[j].name!r}) does not carry "
                f"{', '.join(f'{a} = <var>.{a}' for a in key)}"
            )
    return ""


def _group(index: int, pats: list[PatternNet], sig: tuple[Any, bool, bool], reason: str) -> Group:
    """One group of the plan: its patterns, routing and windows."""
    time_w = sorted(
        {p.window_value for p in pats if p.window is not None and p.window.kind != A.WIN_COUNT and p.window_value is not None}
    )
    count_w = sorted(
        {int(p.window_value) for p in pats if p.window is not None and p.window.kind == A.WIN_COUNT and p.window_value is not None}
    )
    return Group(
        index=index,
        patterns=tuple(p.name for p in pats),
        attrs=sig[0] if sig[0] is not None else (),
        all_types=sig[2],
        types=frozenset().union(*(p.input_types for p in pats)),
        producers=frozenset(p.name for p in pats if p.produces),
        time_windows=tuple(time_w),
        count_windows=tuple(count_w),
        clock_sensitive=sig[1],
        reason=reason,
        waits=any(closes_windows(p) for p in pats),
    )


def _row_group(index: int, rn: RowNet) -> Group:
    """A SQL MATCH_RECOGNIZE query is a group of its own, keyed by its PARTITION BY: its
    matches depend only on the rows of one partition (contiguity is per partition)."""
    return Group(
        index=index,
        patterns=(rn.name,),
        attrs=tuple(sorted(rn.partition)),
        all_types=rn.table is None,  # reads every event type
        types=rn.input_types,
        producers=frozenset(),
        time_windows=(),
        count_windows=(),
        clock_sensitive=False,
        reason="" if rn.partition else f"query {rn.name!r} has no PARTITION BY",
        waits=False,
    )


def describe(plan: Plan) -> list[str]:
    """One line per group, for logs and ``--explain`` style output."""
    out = []
    for g in plan.groups:
        how = f"by [{', '.join(g.attrs)}]" if g.keyed else "in one partition"
        out.append(f"group {g.index}: {', '.join(g.patterns)} — {how}")
    return out


def pattern_names(net: Net) -> Sequence[str]:
    return [p.name for p in net.patterns] + [r.name for r in net.rows]
