"""A condition reading a fixed element of a Kleene list, ``v[k].f`` (k >= 2), checked when
the list takes its k-th element.

``v[k]`` never changes once the list has k elements, so docs/SEMANTICS.md ("Strategies")
decides such a condition there, as it decides ``v[1]`` when the list starts: under
skip-till-next-match an event the condition refuses as ``v[k]`` does not extend a partial
match whose list has k - 1 elements; it is skipped, and a later event may be ``v[k]``
(FlinkCEP's iterative condition on a looping pattern refuses that event alike, and a
relaxed contiguity ignores it). The compiler keeps the conjunct where it was (read on the
whole match: a list shorter than k fails it, a comparison reading a missing element being
false) and adds, per list, an *iteration condition* that holds except at the k-th element,
where it is the conjunct: ``NOT (count(v[..i-1]) = k - 1) OR conjunct`` (and, for each other
list it reads ``w[j]`` of that may grow beside ``v``, ``OR count(w[]) < j``). So both engines
and the compiled kernel run it with the machinery they have (iteration conditions, and their
replay where the conjunct reads a variable bound later or beside the list). A repeated
group's ``g[k].s`` (a required step) is lowered to the step's list ``s[k]`` (compile/groups.py)
and is checked so too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from petricep.lang import ast as A


def kth_element_checks(
    conditions: Sequence[A.Expr], lists: Iterable[str], skip: frozenset[str], prec: Mapping[str, set[str]]
) -> list[tuple[A.Expr, frozenset[str]]]:
    """The iteration conditions that check each conjunct of ``conditions`` reading a fixed
    element ``v[k]`` (k >= 2) of a list ``v`` in ``lists`` at that element, each with the
    lists it reads open: a list ``w`` it reads ``w[j]`` of (j >= 2) that may grow beside
    ``v`` (``prec``: not required before it) is read once it has ``j`` elements, so the
    check holds while it has fewer (the conjunct read whole decides a list that stays
    shorter). ``skip``: the variables whose conjuncts are not read so (negated and stop
    events: theirs are decided as a negation's; a repeated group's steps: compile/groups.py
    reads theirs)."""
    out: list[tuple[A.Expr, frozenset[str]]] = []
    names = tuple(lists)
    for conj in conditions:
        if A.iteration_var(conj) is not None or A.vars_of(conj) & skip:
            continue
        fixed = {v: k for v in names if (k := _last_fixed(conj, v)) >= 2}
        for v, k in fixed.items():
            beside = {w: j for w, j in fixed.items() if w != v and w not in prec.get(v, set())}
            at_k = A.Compare("=", A.Agg("count", v, None, upto_prev=True), A.Num(k - 1))
            short = tuple(A.Compare("<", A.Agg("count", w, None), A.Num(j)) for w, j in beside.items())
            out.append((A.BoolOp("or", (A.Not(at_k), *short, conj)), frozenset(beside)))
    return out


def _last_fixed(expr: A.Expr, v: str) -> int:
    """The highest ``k`` of the ``v[k]`` reads of ``expr``; 0 where it reads none, or reads
    ``v`` as a whole too (``v[last]``, an aggregate: decided once the list is closed)."""
    ks: list[int] = []
    for e in A.walk_expr(expr):
        if isinstance(e, A.Agg) and e.var == v:
            return 0
        if isinstance(e, A.Attr) and e.var == v and e.index is not None:
            if e.index.kind != A.IDX_CONST or e.index.of:
                return 0
            ks.append(e.index.const)
    return max(ks, default=0)


def iteration_k_checks(
    conditions: Sequence[A.Expr], optional: Iterable[str], lists: Iterable[str], skip: frozenset[str], prec: Mapping[str, set[str]]
) -> list[tuple[A.Expr, frozenset[str]]]:
    """The same for a conjunct reading a repeated group's optional step by iteration,
    ``g[k].c`` (``c[k]`` of the first required step's list, compile/groups.py): iteration k's
    ``c`` never changes once bound, so the conjunct is decided at the element of ``c`` that
    lies in iteration k (``c[i].pos != c[k].pos OR conjunct``: a read unbound there, no such
    element yet, holds) and, as :func:`kth_element_checks` does, at a required step's ``w[j]``
    (which that function leaves to this one where the conjunct reads an optional step); other
    lists read ``w[j]`` beside it hold while shorter, other optional steps' reads while
    unbound. Only a conjunct reading every list at a fixed element (a whole-list read waits
    for the list to close anyway); ``skip``: negated and stop events (their conditions are
    theirs)."""
    out: list[tuple[A.Expr, frozenset[str]]] = []
    opt, names = set(optional), set(lists)
    for conj in conditions:
        if A.iteration_var(conj) is not None or A.vars_of(conj) & skip:
            continue
        reads = [e for e in A.walk_expr(conj) if isinstance(e, (A.Attr, A.Agg)) and e.var in names]
        if not any(isinstance(e, A.Attr) and e.index is not None and e.index.of and e.var in opt for e in reads):
            continue
        if any(not isinstance(e, A.Attr) or e.index is None or e.index.kind != A.IDX_CONST for e in reads):
            continue
        fixed: dict[str, int] = {}
        anchors: dict[tuple[str, A.Index], A.Expr] = {}
        for e in reads:
            assert isinstance(e, A.Attr) and e.index is not None
            if e.index.of:
                here = A.Attr(e.var, A.POS_FIELD, A.Index(A.IDX_CUR))
                anchors.setdefault((e.var, e.index), A.Compare("!=", here, A.Attr(e.var, A.POS_FIELD, e.index)))
            elif e.index.const >= 2:
                fixed[e.var] = max(fixed.get(e.var, 0), e.index.const)
        for w, j in fixed.items():
            anchors[(w, A.Index(A.IDX_CONST, j))] = A.Not(A.Compare("=", A.Agg("count", w, None, upto_prev=True), A.Num(j - 1)))
        for (v, _index), anchor in anchors.items():
            beside = {w: j for w, j in fixed.items() if w != v and w not in prec.get(v, set())}
            short = tuple(A.Compare("<", A.Agg("count", w, None), A.Num(j)) for w, j in beside.items())
            # (the optional steps' reads are open too: unbound until that iteration's element binds, then fixed)
            out.append((A.BoolOp("or", (anchor, *short, conj)), frozenset(beside) | {u for u, _ in anchors if u in opt}))
    return out
