"""History-aware patterns (paper 004): a live part over the stream, an archived part over the
event archive, joined per live match.

``SEQ(ARCHIVED T a, ..., L l, ...)`` binds the ``ARCHIVED`` variables (a prefix of the top-level
SEQ) from the archive and the others from the live stream. Every archived variable needs a
range relative to a live variable, written as conditions on timestamps::

    WHERE now.ts - then.ts >= 604200 AND now.ts - then.ts <= 605400

The pattern means exactly what it means over the history followed by the live stream (SEQ
order, every condition, ``[attr]``), with ``WITHIN`` bounding the live part. This module
splits it into two ordinary patterns — the live part, compiled into the shared net like any
other pattern, and the archived part, run over the archive range a live match needs — and
the conditions that join them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from petricep.errors import PatternError
from petricep.lang import ast as A
from petricep.lang.front import error_at
from petricep.lang.gaps import gap_reference


@dataclass(frozen=True)
class Range:
    """``lo <= anchor.ts - var.ts <= hi`` (hi may be None only if another bound limits it)."""

    var: str
    anchor: str
    lo: float
    hi: float


@dataclass(frozen=True)
class HistorySpec:
    """One history-aware pattern, split."""

    name: str
    source: A.Pattern
    live: A.Pattern  # runs in the shared net under the pattern's own name
    archived: A.Pattern  # runs over archive ranges (no window: the ranges bound it)
    cross: tuple[A.Expr, ...]  # conditions reading archived and live variables
    ranges: tuple[Range, ...]
    archived_vars: tuple[str, ...]
    live_vars: tuple[str, ...]

    def reach(self) -> tuple[float, float]:
        """How far before a live match's anchors the archive is read: (min lo, max hi)."""
        return min(r.lo for r in self.ranges), max(r.hi for r in self.ranges)


def is_history(p: A.Pattern) -> bool:
    return any(r.archived for r in A.events_of(p.structure))


def _error(p: A.Pattern, message: str, span: A.Span | None = None) -> PatternError:
    return error_at(message, span if span is not None and span.line else p.span)


def _ts_difference(e: A.Expr) -> tuple[str, str] | None:
    """``x.ts - y.ts`` -> (x, y)."""
    if (
        isinstance(e, A.BinOp)
        and e.op == "-"
        and isinstance(e.left, A.Attr)
        and isinstance(e.right, A.Attr)
        and e.left.field == "ts"
        and e.right.field == "ts"
        and e.left.index is None
        and e.right.index is None
    ):
        return e.left.var, e.right.var
    return None


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}


def _bound(c: A.Expr) -> tuple[str, str, str, float] | None:
    """A condition ``x.ts - y.ts OP number`` (either side) -> (x, y, OP, number)."""
    if not isinstance(c, A.Compare) or c.op not in _FLIP:
        return None
    left, op, right = c.left, c.op, c.right
    if isinstance(left, A.Num):
        left, right, op = right, left, _FLIP[op]
    diff = _ts_difference(left)
    if diff is None or not isinstance(right, A.Num):
        return None
    return diff[0], diff[1], op, float(right.value)


def split(p: A.Pattern) -> HistorySpec:
    """Validate a history-aware pattern and split it (errors point at the pattern): the
    archived SEQ prefix, the live rest, the conditions joining them and, from those, how far
    back each archived variable reaches."""
    source, (p, list_joins) = p, _join_gaps(p)
    archived, live_kids = _parts(p)
    archived_vars = tuple(r.var for r in archived)
    live_vars = tuple(r.var for k in live_kids for r in A.events_of(k) if not r.negated)
    arch_conds, live_conds, cross = _conditions(p, archived_vars, live_kids)
    cross += list_joins  # (a list's first element: the join reads a list's slot as its first event)
    ranges = _ranges(p, archived, live_vars, cross)
    s = p.structure
    live = replace(
        p,
        structure=A.Seq(tuple(live_kids), span=s.span) if len(live_kids) > 1 else live_kids[0],
        conditions=tuple(live_conds),
    )
    if isinstance(live.structure, A.EventRef) and live.structure.negated:
        raise _error(p, "the live part needs a positive event", live.structure.span)
    arch = replace(
        p,
        structure=A.Seq(tuple(replace(r, archived=False) for r in archived), span=s.span)
        if len(archived) > 1
        else replace(archived[0], archived=False),
        conditions=tuple(arch_conds),
        window=None,
        limit=None,
    )
    return HistorySpec(p.name, source, live, arch, tuple(cross), tuple(ranges), archived_vars, live_vars)


def _join_gaps(p: A.Pattern) -> tuple[A.Pattern, list[A.Expr]]:
    """A per-step gap that reaches into the archive (on an ARCHIVED step, on the first live
    step, or FROM an ARCHIVED variable) is a condition between its two events, written as the
    WHERE pair ``lo <= v.ts - u.ts <= hi`` so that it joins the parts (and bounds the range
    read) as any; a gap between live steps stays on its step (lang/gaps.py checked them). On
    a live list the pair reads its first element (returned apart: the joining conditions
    the user writes may not read a list) and the rest of the chain stays live, as the
    iteration condition ``lo <= v[i].ts - v[i-1].ts <= hi`` (vacuous on the first element)."""
    s = p.structure
    if not isinstance(s, A.Seq):
        return p, []
    archived = {k.var for k in s.children if isinstance(k, A.EventRef) and k.archived}
    kids: list[A.Node] = []
    conds = list(p.conditions)
    list_joins: list[A.Expr] = []
    for k in s.children:
        if isinstance(k, A.EventRef) and k.gap is not None and gap_reference(s, k) in archived:
            base = gap_reference(s, k)
            assert base is not None
            pair = _gap_pair(A.Attr(k.var, "ts"), A.Attr(base, "ts"), k.gap)
            if k.kleene and not k.archived:
                list_joins += pair
                cur, prev = A.Attr(k.var, "ts", A.Index(A.IDX_CUR)), A.Attr(k.var, "ts", A.Index(A.IDX_PREV))
                conds += _gap_pair(cur, prev, k.gap)
            else:
                conds += pair
            k = replace(k, gap=None)
        kids.append(k)
    return replace(p, structure=A.Seq(tuple(kids), span=s.span), conditions=tuple(conds)), list_joins


def _gap_pair(later: A.Expr, earlier: A.Expr, gap: A.Gap) -> list[A.Expr]:
    """``lo <= later - earlier <= hi``, the gap's two bounds as WHERE conjuncts."""
    lo, hi = A.gap_amount(gap)
    diff = A.BinOp("-", later, earlier, span=gap.span)
    return [A.Compare(">=", diff, A.Num(lo), span=gap.span), A.Compare("<=", diff, A.Num(hi), span=gap.span)]


def _parts(p: A.Pattern) -> tuple[list[A.EventRef], list[A.Node]]:
    """The archived variables (the top-level SEQ's first elements) and the live elements
    after them, with the clauses a history-aware pattern cannot have refused."""
    s = p.structure
    if not isinstance(s, A.Seq):
        raise _error(p, "ARCHIVED variables must be elements of a top-level SEQ")
    kids = list(s.children)
    archived = [k for k in kids if isinstance(k, A.EventRef) and k.archived]
    first_live = next(i for i, k in enumerate(kids) if not (isinstance(k, A.EventRef) and k.archived))
    if any(isinstance(k, A.EventRef) and k.archived for k in kids[first_live:]):
        bad = next(k for k in kids[first_live:] if isinstance(k, A.EventRef) and k.archived)
        raise _error(p, "ARCHIVED variables come first in the SEQ (history precedes the live stream)", bad.span)
    for node in kids[first_live:]:
        for r in A.events_of(node):
            if r.archived:
                raise _error(p, "ARCHIVED may only mark elements of the top-level SEQ", r.span)
    live_kids = kids[first_live:]
    if isinstance(live_kids[0], A.EventRef) and live_kids[0].negated:
        raise _error(p, "a negation may not follow the ARCHIVED variables directly", live_kids[0].span)
    if all(isinstance(k, A.EventRef) and (A.skippable(k) or k.negated) for k in live_kids):
        raise _error(p, "the live part needs a required step (one that is not optional)", live_kids[0].span)
    for k in live_kids:  # where the optional steps before it are left out, it follows them
        if not (isinstance(k, A.EventRef) and (A.skippable(k) or k.negated)):
            break
        if k.negated:
            raise _error(p, "a negation may not follow the ARCHIVED variables with only optional steps between them", k.span)
    if p.strategy != A.Strategy.ANY:
        raise _error(p, f"a pattern with ARCHIVED variables runs under skip-till-any-match, not {p.strategy}")
    if p.returns is not None or p.timeout is not None or p.consume is not None:
        raise _error(p, "a pattern with ARCHIVED variables cannot have RETURN, ON TIMEOUT or CONSUME (yet)")
    if p.window is not None and p.window.kind == A.WIN_COUNT:
        raise _error(p, "a pattern with ARCHIVED variables needs a time window (WITHIN n EVENTS counts live events only)")
    return archived, live_kids


def _conditions(
    p: A.Pattern, archived_vars: tuple[str, ...], live_kids: list[A.Node]
) -> tuple[list[A.Expr], list[A.Expr], list[A.Expr]]:
    """The conditions on archived variables only, on live ones only, and joining both."""
    negated = {r.var for k in live_kids for r in A.events_of(k) if r.negated}
    kleene = {r.var for r in A.events_of(p.structure) if r.kleene}
    arch_conds: list[A.Expr] = []
    live_conds: list[A.Expr] = []
    cross: list[A.Expr] = []
    for c in p.conditions:
        vs = A.vars_of(c)
        if vs <= set(archived_vars):
            arch_conds.append(c)
        elif not vs & set(archived_vars):
            live_conds.append(c)
        else:
            if vs & negated:
                raise _error(p, "a negation condition cannot read ARCHIVED variables", A.leftmost_span(c))
            if vs & kleene:
                raise _error(p, "a condition joining ARCHIVED and live variables cannot read a Kleene variable", A.leftmost_span(c))
            cross.append(c)
    return arch_conds, live_conds, cross


def _ranges(p: A.Pattern, archived: list[A.EventRef], live_vars: tuple[str, ...], cross: list[A.Expr]) -> list[Range]:
    """How far back each archived variable reaches from a live one, from the joining
    conditions ``live.ts - arch.ts OP n``; a variable without an upper bound is an error."""
    archived_vars = {r.var for r in archived}
    # an optional live step may be absent: its conditions then hold, so it bounds nothing
    optional = {r.var for r in A.events_of(p.structure) if A.skippable(r)}
    live_vars = tuple(v for v in live_vars if v not in optional)
    # the range read is from the anchor with the nearest upper bound, its lower bound from
    # conditions on that same anchor (another anchor's lower bound says nothing about it)
    lows: dict[tuple[str, str], float] = {}
    highs: dict[str, tuple[float, str]] = {}
    for c in cross:
        b = _bound(c)
        if b is None:
            continue
        x, y, op, n = b
        if x in live_vars and y in archived_vars:  # live.ts - arch.ts OP n
            anchor, var, sign = x, y, 1
        elif y in live_vars and x in archived_vars:  # arch.ts - live.ts OP n  ->  live - arch FLIP -n
            anchor, var, sign, op = y, x, -1, _FLIP[op]
        else:
            continue
        n *= sign
        if op in ("<", "<=", "=") and (var not in highs or n < highs[var][0]):
            highs[var] = (n, anchor)
        if op in (">", ">=", "=") and ((var, anchor) not in lows or n > lows[var, anchor]):
            lows[var, anchor] = n
    ranges = []
    for r in archived:
        if r.var not in highs:
            raise _error(
                p,
                f"archived variable {r.var!r} needs a bound on how far back it reaches: add a condition like "
                f"{live_vars[0]}.ts - {r.var}.ts <= 86400" + (" (from a required step: an optional one may be absent)" if optional else ""),
                r.span,
            )
        hi, anchor = highs[r.var]
        lo = lows.get((r.var, anchor), 0.0)
        if lo < 0:
            raise _error(p, f"archived variable {r.var!r} must lie before the live match: its lower bound is {lo:g}", r.span)
        if hi < lo:
            raise _error(p, f"archived variable {r.var!r} has an empty range ({lo:g} to {hi:g})", r.span)
        ranges.append(Range(r.var, anchor, lo, hi))
    return ranges


def split_patterns(patterns: list[A.Pattern]) -> tuple[list[A.Pattern], list[HistorySpec]]:
    """The patterns to compile into the shared net (history patterns by their live part),
    and the history specs."""
    out: list[A.Pattern] = []
    specs: list[HistorySpec] = []
    for p in patterns:
        if is_history(p):
            spec = split(p)
            specs.append(spec)
            out.append(spec.live)
        else:
            out.append(p)
    return out, specs


__all__ = ["HistorySpec", "Range", "is_history", "split", "split_patterns"]
