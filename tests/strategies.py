"""Hypothesis strategies for testing petricep against the reference matcher.

* :func:`streams`: short event streams with small, often equal timestamps (ties!);
* :func:`patterns`: random patterns built straight from the AST (no parser);
* :func:`tied_streams` and :func:`negation_seqs`: the mix tie rules meet windows in
  (events of other types tying with a pattern's events, negations at the start, middle
  and end of a SEQ under count and time windows);
* :func:`pattern_text`: prints a Pattern in pattern-file syntax, for readable failing
  examples and parser round trips.

The generated patterns stay inside the part of the language whose meaning
``docs/SEMANTICS.md`` fixes without any reading of ours: constant indices ``v[1]`` (never
past the end), ``v[2]`` and ``v[3]`` in conjuncts reading no other element (past the end: the
comparison is false; under skip-till-next-match read once the list has that element), and
``v[last]``, no ``/`` or ``%``, no strings, RETURN reads only
variables bound in every match, durations are written in seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from petricep.errors import PatternError, PatternUnsupportedError
from petricep.events import Event
from petricep.lang.ast import (
    IDX_CONST,
    IDX_CUR,
    IDX_LAST,
    IDX_PREV,
    STRATEGIES,
    WIN_COUNT,
    WIN_DURATION,
    WIN_TIME,
    Agg,
    And,
    Attr,
    BinOp,
    BoolOp,
    Compare,
    EventRef,
    Expr,
    Group,
    Index,
    Neg,
    Node,
    Not,
    Num,
    Or,
    Pattern,
    Return,
    ReturnField,
    Seq,
    Str,
    Strategy,
    Window,
    groups_of,
)
from petricep.merge import build_net
from petricep.runtime.build import check_group_ties

__all__ = ["TYPES", "negation_seqs", "pattern_text", "patterns", "streams", "tie_rules", "tied_streams"]

TYPES = ("A", "B", "C", "D")
OPS = ("=", "!=", "<", "<=", ">", ">=")
WINDOW_KINDS = ("none", WIN_TIME, WIN_COUNT, WIN_DURATION)


# ============================================================================ streams


@st.composite
def streams(draw: Any, types: Sequence[str] = TYPES, max_size: int = 10, min_size: int = 1) -> list[Event]:
    """Events with ``pos = id = index``, non-decreasing small integer timestamps that are
    often equal, ``x`` in 0..5 and ``k`` in 0..2 (the partition attribute).
    ``min_size`` is 1 by default: an empty stream matches nothing, and Hypothesis would
    otherwise draw one about a third of the time."""
    rows = draw(
        st.lists(
            st.tuples(
                st.sampled_from(tuple(types)),
                st.sampled_from((0, 0, 1, 2)),  # timestamp step: half of them are ties
                st.integers(0, 5),
                st.integers(0, 2),
            ),
            min_size=min_size,
            max_size=max_size,
        )
    )
    events = []
    ts = 0
    for pos, (etype, step, x, k) in enumerate(rows):
        ts += step if pos else 0
        events.append(Event(etype, ts, pos, pos, {"x": x, "k": k}))
    return events


@st.composite
def tied_streams(draw: Any, types: Sequence[str] = ("A", "B", "X"), max_size: int = 10) -> list[Event]:
    """Events like :func:`streams`', in timestamp groups (steps of 1 or 2) of 1-3 events
    of distinct types: an event ties only with events of other types (issue 43's streams).
    Under the tie rule ``either`` a group is matched only when the next timestamp comes,
    while each of its events counts in count windows: one event of a group may close the
    window of a match that another one (negated) invalidates, or that of a partial match
    another one extends."""
    groups = draw(
        st.lists(
            st.tuples(
                st.lists(st.sampled_from(tuple(types)), min_size=1, max_size=3, unique=True),
                st.sampled_from((1, 1, 2)),
            ),
            min_size=1,
            max_size=max_size,
        )
    )
    events: list[Event] = []
    ts = 0
    for group, step in groups:
        ts += step if events else 0
        for etype in group[: max_size - len(events)]:
            pos = len(events)
            events.append(Event(etype, ts, pos, pos, {"x": draw(st.integers(0, 5)), "k": draw(st.integers(0, 2))}))
    return events


def tie_rules(draw: Any, patterns: Sequence[Pattern]) -> str:
    """A tie rule the patterns may run under: ``either`` only where every one is under
    skip-till-any-match (the engines refuse it with the others) and none reads an optional
    step of a repeated group by iteration (refused under ``either``: runtime.build.check_group_ties)."""
    either = all(p.strategy == Strategy.ANY for p in patterns) and not _reads_by_iteration(patterns)
    ties = ["arrival", "strict"] + (["either"] if either else [])
    return str(draw(st.sampled_from(ties)))


def _reads_by_iteration(patterns: Sequence[Pattern]) -> bool:
    if not any(g.optional_steps for p in patterns for g in groups_of(p.structure)):
        return False
    try:
        check_group_ties(build_net(list(patterns)))
    except PatternUnsupportedError:
        return True
    except PatternError:  # (a combination the compiler refuses: the test meets it itself)
        return False
    return False


# ============================================================================ patterns


def _attr(var: str, field: str = "x", index: Index | None = None) -> Attr:
    return Attr(var, field, index)


@st.composite
def patterns(
    draw: Any,
    types: Sequence[str] = TYPES,
    max_vars: int = 5,
    max_depth: int = 2,
    max_kleene: int = 2,
    kleene: bool = True,
    negation: bool = True,
    strategies: Sequence[str] = STRATEGIES,
    windows: Sequence[str] = WINDOW_KINDS,
    partition: bool | None = None,
    max_conditions: int = 3,
    returns: bool = True,
    name: str = "p",
    min_window: int = 0,
) -> Pattern:
    """A random pattern over ``types`` with at most ``max_vars`` variables (negated ones
    included), SEQ/AND/OR nesting at most ``max_depth`` deep, negations only as SEQ
    children (at the start, middle or end), every SEQ with a positive child.
    ``partition``: None = random, else force ``[k]`` on / off. Windows: time and duration
    ``min_window``..6 (the parser rejects ``WITHIN 0``: pass 1 for text round trips),
    count 1..8, or none."""
    names = iter("abcdefghijklmnop")
    left = [draw(st.integers(min(2, max_vars), max(1, max_vars)))]  # variable budget
    kleene_left = [max_kleene if kleene else 0]

    def ref(negated: bool = False) -> EventRef:
        left[0] -= 1
        etype = draw(st.sampled_from(tuple(types)))
        is_kleene = False
        if not negated and kleene_left[0] > 0 and draw(st.integers(0, 3)) == 0:
            is_kleene = True
            kleene_left[0] -= 1
        return EventRef(etype, next(names), kleene=is_kleene, negated=negated)

    def node(depth: int) -> Node:
        if depth >= max_depth or left[0] < 2 or (depth > 0 and draw(st.integers(0, 2)) == 0):
            return ref()
        kind = draw(st.sampled_from(("SEQ", "SEQ", "AND", "OR")))
        reserved = 0  # keep room for a negation in this SEQ
        if kind == "SEQ" and negation and left[0] >= 3 and draw(st.booleans()):
            reserved = 1
            left[0] -= 1
        children: list[Node] = [node(depth + 1)]
        while left[0] >= 1 and len(children) < 3 and (len(children) < 2 or draw(st.booleans())):
            children.append(node(depth + 1))
        left[0] += reserved
        if len(children) == 1:
            return children[0]
        if kind == "SEQ":
            for extra in range(2):
                if negation and left[0] >= 1 and (extra < reserved or draw(st.integers(0, 3)) == 0):
                    where = draw(st.integers(0, len(children)))  # start, middle or end
                    children.insert(where, ref(negated=True))
            return Seq(tuple(children))
        return And(tuple(children)) if kind == "AND" else Or(tuple(children))

    structure = node(0)
    if isinstance(structure, EventRef):
        structure = Seq((structure,))

    refs = _all_refs(structure)
    plain = [r.var for r in refs if not r.negated and not r.kleene]
    lists = [r.var for r in refs if r.kleene]
    negs = [r.var for r in refs if r.negated]

    def const(lo: int = 0, hi: int = 5) -> Num:
        return Num(draw(st.integers(lo, hi)))

    def op() -> str:
        return draw(st.sampled_from(OPS))

    def plain_atom() -> Expr:
        choice = draw(st.integers(0, 3)) if len(plain) >= 2 else 0
        if choice == 0:
            return Compare(op(), _attr(draw(st.sampled_from(plain))), const())
        u, v = draw(st.permutations(plain))[:2]
        if choice == 1:
            return Compare(op(), _attr(u), _attr(v))
        if choice == 2:
            arith = BinOp(draw(st.sampled_from(("+", "-", "*"))), _attr(u), const(0, 2))
            return Compare(op(), arith, _attr(v))
        return Compare("<=", BinOp("-", _attr(v, "ts"), _attr(u, "ts")), const(0, 3))

    def plain_conjunct() -> Expr:
        choice = draw(st.integers(0, 5))
        if choice == 3:
            return Not(plain_atom())
        if choice == 4:
            return BoolOp("or", (plain_atom(), plain_atom()))
        if choice == 5:  # an AND inside NOT: a top-level AND would be several conjuncts
            return Not(BoolOp("and", (plain_atom(), plain_atom())))
        return plain_atom()

    def kleene_conjunct() -> Expr:
        k = draw(st.sampled_from(lists))
        cur = _attr(k, "x", Index(IDX_CUR))
        choice = draw(st.integers(0, 11 if plain else 10))
        if choice == 0:
            return Compare(op(), cur, _attr(k, "x", Index(IDX_PREV)))
        if choice == 1:
            agg = Agg(draw(st.sampled_from(("min", "max", "sum", "avg", "count"))), k, "x", upto_prev=True)
            return Compare(op(), cur, agg)
        if choice == 2:
            return Compare(op(), _attr(k, "x", Index(IDX_CONST, 1)), const())
        if choice == 3:
            return Compare(op(), _attr(k, "x", Index(IDX_LAST)), const())
        if choice == 4:
            return Compare(op(), Agg("count", k, None), const(1, 3))
        if choice == 5:
            return Compare(op(), Agg("sum", k, "x"), const(0, 10))
        if choice == 6:
            return Compare(op(), Agg(draw(st.sampled_from(("min", "max", "avg"))), k, "x"), const())
        if choice == 7:
            return Compare(op(), cur, const())
        if choice == 8:
            return Compare(op(), cur, BinOp("+", _attr(k, "x", Index(IDX_PREV)), const(0, 1)))
        fixed = _attr(k, "x", Index(IDX_CONST, draw(st.integers(2, 3))))  # decided at that element
        if choice == 9:
            return Compare(op(), fixed, const())
        if choice == 10:
            return Not(Compare("=", fixed, const()))
        if draw(st.booleans()):
            return Compare(op(), fixed, _attr(draw(st.sampled_from(plain))))
        return Compare(op(), cur, _attr(draw(st.sampled_from(plain))))

    def negation_conjunct(n: str | None = None) -> Expr:
        n = n if n is not None else draw(st.sampled_from(negs))
        choice = draw(st.integers(0, 3 if plain else 1))
        if choice == 0:
            return Compare(op(), _attr(n), const())
        if choice == 1:
            return Not(Compare("=", _attr(n), const()))
        if choice == 2:
            return Compare(op(), _attr(n), _attr(draw(st.sampled_from(plain))))
        return BoolOp("or", (Compare(op(), _attr(n), const()), Compare(op(), _attr(n), _attr(plain[0]))))

    makers = []
    if plain:
        makers.append(plain_conjunct)
    if lists:
        makers.append(kleene_conjunct)
    if negs:
        makers.append(negation_conjunct)
    conditions: list[Expr] = []
    if makers:
        for _ in range(draw(st.integers(0, max_conditions))):
            conditions.append(draw(st.sampled_from(makers))())
    for n in negs:  # an unconditioned negation nearly always finds a violating event
        if draw(st.booleans()):
            conditions.append(negation_conjunct(n))

    part = draw(st.booleans()) if partition is None else partition
    strategy = Strategy(draw(st.sampled_from(tuple(strategies))))
    window_kind = draw(st.sampled_from(tuple(windows)))
    window = None
    if window_kind == WIN_TIME:
        window = Window(WIN_TIME, draw(st.integers(min_window, 6)))
    elif window_kind == WIN_COUNT:
        window = Window(WIN_COUNT, draw(st.integers(1, 8)))
    elif window_kind == WIN_DURATION:
        window = Window(WIN_DURATION, draw(st.integers(min_window, 6)), "s")

    ret = None
    if returns and draw(st.booleans()):
        always = _always_bound(structure)
        fields = []
        for var in [r.var for r in refs if r.var in always]:
            if var in lists:
                fields.append(ReturnField(f"n_{var}", Agg("count", var, None)))
            else:
                fields.append(ReturnField(f"x_{var}", _attr(var)))
        if fields:
            ret = Return("T", tuple(fields[:2]))

    return Pattern(
        name=name,
        structure=structure,
        conditions=tuple(conditions),
        partition=("k",) if part else (),
        strategy=strategy,
        window=window,
        returns=ret,
    )


@st.composite
def negation_seqs(
    draw: Any,
    types: Sequence[str] = ("A", "B"),
    windows: Sequence[str] = (WIN_COUNT, WIN_COUNT, WIN_TIME, "none"),
    kleene: bool = True,
    negation: bool = True,
    end: bool = False,
    name: str = "p",
) -> Pattern:
    """A skip-till-any-match SEQ of 2-3 positive variables (one maybe Kleene) with one or
    two negations, each at the start, in the middle or at the end (none with
    ``negation=False``; the first at the end with ``end=True``); sometimes a condition on
    a negated event, one between positive variables, ``[k]``; a count window 1..6, a time
    window 0..4 or none. The mix where tie rules, negation bounds and window closing meet,
    drawn far more densely than :func:`patterns` draws it."""
    names = iter("abcdefgh")
    positives: list[EventRef] = []
    for _ in range(draw(st.integers(2, 3))):
        many = kleene and not any(r.kleene for r in positives) and draw(st.integers(0, 3)) == 0
        positives.append(EventRef(draw(st.sampled_from(tuple(types))), next(names), kleene=many))
    children: list[EventRef] = list(positives)
    negs: list[EventRef] = []
    for _ in range(draw(st.integers(1, 2)) if negation else 0):
        n = EventRef(draw(st.sampled_from(tuple(types))), next(names), negated=True)
        where = "end" if end and not negs else draw(st.sampled_from(("start", "middle", "end")))
        if where == "start":
            at = 0
        elif where == "end":
            at = len(children)
        else:
            at = draw(st.integers(1, len(children) - 1))
        children.insert(at, n)
        negs.append(n)
    plain = [r.var for r in positives if not r.kleene]
    conditions: list[Expr] = []
    for n in negs:
        if draw(st.booleans()):
            rhs: Expr = _attr(draw(st.sampled_from(plain))) if plain and draw(st.booleans()) else Num(draw(st.integers(0, 5)))
            conditions.append(Compare(draw(st.sampled_from(OPS)), _attr(n.var), rhs))
    if len(plain) >= 2 and draw(st.booleans()):
        u, v = draw(st.permutations(plain))[:2]
        conditions.append(Compare(draw(st.sampled_from(("<", "<=", "!="))), _attr(u), _attr(v)))
    kind = draw(st.sampled_from(tuple(windows)))
    window = None
    if kind == WIN_COUNT:
        window = Window(WIN_COUNT, draw(st.integers(1, 6)))
    elif kind == WIN_TIME:
        window = Window(WIN_TIME, draw(st.integers(0, 4)))
    return Pattern(
        name=name,
        structure=Seq(tuple(children)),
        conditions=tuple(conditions),
        partition=("k",) if draw(st.integers(0, 3)) == 0 else (),
        window=window,
    )


def _all_refs(node: Node) -> list[EventRef]:
    if isinstance(node, EventRef):
        return [node]
    return [r for child in node.children for r in _all_refs(child)]


def _always_bound(node: Node) -> set[str]:
    """Positive variables bound in every match (not under an OR)."""
    if isinstance(node, EventRef):
        return set() if node.negated else {node.var}
    if isinstance(node, Or):
        return set()
    return set().union(*(_always_bound(c) for c in node.children))


# ============================================================================ printing

_PREC_OR, _PREC_AND, _PREC_NOT, _PREC_CMP, _PREC_ADD, _PREC_MUL, _PREC_NEG, _PREC_ATOM = range(1, 9)


def _precedence(e: Expr) -> int:
    if isinstance(e, BoolOp):
        return _PREC_OR if e.op == "or" else _PREC_AND
    if isinstance(e, Not):
        return _PREC_NOT
    if isinstance(e, Compare):
        return _PREC_CMP
    if isinstance(e, BinOp):
        return _PREC_ADD if e.op in ("+", "-") else _PREC_MUL
    if isinstance(e, Neg):
        return _PREC_NEG
    return _PREC_ATOM


def _wrap(e: Expr, minimum: int) -> str:
    text = expr_text(e)
    return f"({text})" if _precedence(e) < minimum else text


def _index_text(index: Index) -> str:
    if index.kind == IDX_CONST:
        return str(index.const)
    return index.kind  # "i", "i-1", "last"


def expr_text(e: Expr) -> str:
    """An expression in pattern-file syntax, with the parentheses it needs."""
    if isinstance(e, Num):
        return repr(e.value)
    if isinstance(e, Str):
        return "'" + e.value.replace("'", "\\'") + "'"
    if isinstance(e, Attr):
        if e.index is None:
            return f"{e.var}.{e.field}"
        return f"{e.var}[{_index_text(e.index)}].{e.field}"
    if isinstance(e, Agg):
        rng = "..i-1" if e.upto_prev else ""
        if e.field is None:
            return f"{e.func}({e.var}[{rng}])"
        return f"{e.func}({e.var}[{rng}].{e.field})"
    if isinstance(e, BinOp):
        p = _precedence(e)
        return f"{_wrap(e.left, p)} {e.op} {_wrap(e.right, p + 1)}"
    if isinstance(e, Neg):
        return f"-{_wrap(e.operand, _PREC_ATOM)}"
    if isinstance(e, Compare):
        return f"{_wrap(e.left, _PREC_ADD)} {e.op} {_wrap(e.right, _PREC_ADD)}"
    if isinstance(e, BoolOp):
        word = " AND " if e.op == "and" else " OR "
        return word.join(_wrap(o, _PREC_NOT) for o in e.operands)
    if isinstance(e, Not):
        return f"NOT {_wrap(e.operand, _PREC_ATOM)}"
    raise TypeError(f"not an expression node: {e!r}")


def structure_text(node: Node) -> str:
    if isinstance(node, EventRef):
        body = f"{node.type}{node.quantifier()} {node.var}{'[]' if node.kleene else ''}{' ' + node.mode.upper() if node.mode else ''}"
        return f"!({body})" if node.negated else body
    if isinstance(node, Group):
        return f"SEQ({', '.join(structure_text(c) for c in node.children)})+ {node.var}[]"
    word = {Seq: "SEQ", And: "AND", Or: "OR"}[type(node)]
    return f"{word}({', '.join(structure_text(c) for c in node.children)})"


def pattern_text(pattern: Pattern) -> str:
    """``pattern`` in pattern-file syntax, e.g.::

    PATTERN p: SEQ(A a, B+ b[], !(C c), D d)
    WHERE skip-till-next-match AND [k] AND b[i].x > b[i-1].x AND a.x = 3
    WITHIN 5
    RETURN T(x = a.x)
    """
    lines = [f"PATTERN {pattern.name}: {structure_text(pattern.structure)}"]
    where: list[str] = []
    if pattern.strategy != "skip-till-any-match":
        where.append(pattern.strategy)
    where.extend(f"[{a}]" for a in pattern.partition)
    for c in pattern.conditions:
        # a conjunct that is itself an AND/OR stays one conjunct: parenthesize it
        where.append(_wrap(c, _PREC_NOT))
    if where:
        lines.append("WHERE " + " AND ".join(where))
    w = pattern.window
    if w is not None:
        if w.kind == WIN_COUNT:
            lines.append(f"WITHIN {w.value} EVENTS")
        elif w.kind == WIN_DURATION:
            lines.append(f"WITHIN {w.value} {w.unit or 's'}")
        else:
            lines.append(f"WITHIN {w.value}")
    if pattern.returns is not None:
        fields = ", ".join(f"{f.name} = {expr_text(f.expr)}" for f in pattern.returns.fields)
        lines.append(f"RETURN {pattern.returns.type}({fields})")
    return "\n".join(lines)
