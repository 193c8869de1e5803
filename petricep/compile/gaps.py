"""Per-step gaps in the net (issue 42): the guards a gap puts on the transitions binding its
step, and when a partial match can no longer complete because of them (its expiry).

A gap is measured from one event, and which one depends on the partial match: a step after an
optional step follows that step where it is bound and the step before it where it was left
out; ``FROM`` an ``OR`` branch's variable binds only where that branch was taken. So a gap is
not one WHERE conjunct but one pair of conditions per event it may follow, and each
transition binding the step gets the pair its source configuration says
(:meth:`GapPlan.guard`). On a Kleene list (the *chain*) the first element follows that event
(``v[1].ts - u.ts``) and each later one the element before it: an iteration condition
``lo <= v[i].ts - v[i-1].ts <= hi``, classified and placed as any. A gap measured from a list
reads its last element (``u[last].ts``; at the step after the list the list is closed). A
step right after an AND/OR follows the latest event of what it bound: one pair per set it
may bind (:func:`~petricep.lang.gaps.completions`), ``lo`` after each and ``hi`` after one
(:func:`after_latest`). A gap in EVENTS says the same of positions (``A.POS_FIELD``).

Expiry (:func:`gap_expiry`): a token leaves when the stream passes ``a.ts + hi`` for an event
``a`` bound in it only where every way on to a match must bind some event at most ``hi`` after
``a`` (every later event comes at or after the current one). Per place and bound slot the
latest such end over the ways on (each way's earliest), a fixpoint over the configuration
graph; a way that rebinds the slot (a list's next element) ends the reading of it. Where the
ways on disagree on the event (the step after an optional step: that step, or the one before
it; an unbounded step after a list) the place has no early exit from it: the guards still
decide. The engines read a slot's event as the bound event or a list's last element. Time
and EVENTS gaps are solved apart (their ends do not compare); an EVENTS one's entries name
``~slot`` (compile/net.py gap_slot). After an AND/OR the latest event is no one slot: no
early exit from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from petricep.lang import ast as A
from petricep.lang.gaps import completions, default_bases, group_last

Number = float | int
INF = float("inf")


@dataclass
class GapPlan:
    """A pattern's gaps: ``specs`` (gapped variable -> its reference, low, high), the pairs of
    conditions per (variable, the event it follows) and the chains' iteration conditions."""

    specs: dict[str, tuple[A.EventRef, Number, Number]] = field(default_factory=dict)
    # (the event it follows: a variable, or the variables an AND/OR before it bound, whose
    # latest event it follows)
    pairs: dict[tuple[str, str | frozenset[str]], tuple[A.Expr, A.Expr]] = field(default_factory=dict)
    chains: list[A.Expr] = field(default_factory=list)
    structure: A.Node | None = None

    def base(self, var: str, bound: frozenset[str]) -> str | frozenset[str] | None:
        """The variable a binding of ``var`` follows in a configuration binding ``bound``
        (None: nothing, a FROM variable left unbound: the gap binds nothing there); after an
        AND/OR, the variables of it bound there (the gap follows their latest event)."""
        ref = self.specs[var][0]
        assert ref.gap is not None and self.structure is not None
        if ref.gap.after is not None:
            after = group_last(self.structure, ref.gap.after)
            return after if after in bound else None
        for b in default_bases(self.structure, ref):
            if isinstance(b, str):
                if b in bound:
                    return b
                continue
            got = frozenset(r.var for r in A.events_of(b)) & bound
            assert (var, got) in self.pairs, (var, got)  # (a completion of the AND/OR: plan)
            return got
        return None


def plan(pattern: A.Pattern, skip: set[str], kleene: set[str]) -> GapPlan:
    """The gaps of ``pattern`` (``skip``: a repeated group's steps, whose gaps are conditions,
    compile/groups.py); ``kleene``: the list variables (read as ``v[1]`` / ``u[last]``)."""
    out = GapPlan(structure=pattern.structure)
    for ref in A.events_of(pattern.structure):
        if ref.gap is None or ref.var in skip:
            continue
        lo, hi = A.gap_amount(ref.gap)
        out.specs[ref.var] = (ref, lo, hi)
        after = ref.gap.after
        bases = (group_last(pattern.structure, after),) if after is not None else default_bases(pattern.structure, ref)
        f = A.POS_FIELD if ref.gap.in_events else "ts"  # (EVENTS: input positions, as WITHIN n EVENTS)
        mine = A.Attr(ref.var, f, A.Index(A.IDX_CONST, 1) if ref.var in kleene else None)
        for b in bases:
            if not isinstance(b, str):  # an AND/OR: after the latest event of what it bound
                for done in completions(b):
                    out.pairs[(ref.var, done)] = after_latest(mine, [_at(u, f, kleene) for u in sorted(done)], lo, hi)
                continue
            # (a list, or a group's step: its last element, the last iteration's)
            out.pairs[(ref.var, b)] = _between(mine, _at(b, f, kleene), lo, hi)
        if ref.var in kleene:
            out.chains += _between(A.Attr(ref.var, f, A.Index(A.IDX_CUR)), A.Attr(ref.var, f, A.Index(A.IDX_PREV)), lo, hi)
    return out


def _at(var: str, f: str, kleene: set[str]) -> A.Attr:
    """The time (or position) of the event a gap follows in ``var``: a list's last element."""
    return A.Attr(var, f, A.Index(A.IDX_LAST) if var in kleene else None)


def after_latest(later: A.Attr, earlier: list[A.Attr], lo: Number, hi: Number) -> tuple[A.Expr, A.Expr]:
    """``lo <= later - max(earlier) <= hi``: at least ``lo`` after each, at most ``hi`` after
    one of them (the latest)."""
    pairs = [_between(later, e, lo, hi) for e in earlier]
    if len(pairs) == 1:
        return pairs[0]
    return A.BoolOp("and", tuple(p[0] for p in pairs)), A.BoolOp("or", tuple(p[1] for p in pairs))


def _between(later: A.Attr, earlier: A.Attr, lo: Number, hi: Number) -> tuple[A.Expr, A.Expr]:
    """``lo <= later - earlier <= hi`` as the two conjuncts a WHERE would say."""
    diff = A.BinOp("-", later, earlier)
    return A.Compare(">=", diff, A.Num(lo)), A.Compare("<=", diff, A.Num(hi))


def gap_expiry(
    nplaces: int,
    edges: Sequence[tuple[int, int, int | None, tuple[int, Number] | None]],
    accepting: Sequence[bool],
    bound: Sequence[frozenset[int]],
) -> list[tuple[tuple[int, Number], ...]]:
    """Per place, ``(slot, hi)``: a token there can no longer complete once the stream passes
    the time of the event in ``slot`` plus ``hi``. ``edges``: (source, destination, the slot
    the move binds or None, its requirement ``(slot, hi)``: the event it binds comes at most
    ``hi`` after the one in ``slot``, read in the source); ``bound``: each place's bound slots."""
    best: list[dict[int, float]] = [dict.fromkeys(bound[p], -INF) for p in range(nplaces)]
    out_edges: list[list[tuple[int, int | None, tuple[int, Number] | None]]] = [[] for _ in range(nplaces)]
    for src, dst, binds, req in edges:
        out_edges[src].append((dst, binds, req))
    changed = True
    while changed:  # a max-min fixpoint from below: a cycle never raises a value
        changed = False
        for p in range(nplaces):
            for s in bound[p]:
                value = -INF
                for dst, binds, req in out_edges[p]:
                    own = float(req[1]) if req is not None and req[0] == s else INF
                    rest = INF if accepting[dst] or binds == s else best[dst].get(s, INF)
                    value = max(value, min(own, rest))
                if value > best[p][s]:
                    best[p][s] = value
                    changed = True
    result = []
    for p in range(nplaces):
        ends = {s: v for s, v in best[p].items() if v not in (INF, -INF)}
        result.append(tuple(sorted((s, _number(v)) for s, v in ends.items())))
    return result


def _number(v: float) -> Number:
    return int(v) if v.is_integer() else v


__all__ = ["GapPlan", "after_latest", "gap_expiry", "plan"]
