"""SQL row patterns (``MATCH_RECOGNIZE``) -> a row-pattern net (:class:`RowNet`).

A row pattern is a regular expression over pattern variables whose rows are classified
by DEFINE conditions, and SQL prefers one match per start row by the order in which a
backtracking matcher would try the alternatives (greedy quantifiers: more iterations
first; alternation: left branch first). The net keeps that order explicit:

* the pattern is unrolled (``{n,m}``, ``PERMUTE``) into a program of row steps, splits
  (preferred branch first) and jumps, as for a backtracking regex matcher;
* every row step is a *state place* (a token there: a partial match whose last row was
  mapped to that step's variable), plus the start place;
* from each place, the steps reachable without consuming a row, in preference order, are
  its outgoing *transitions* (one input row each, guarded by the variable's DEFINE);
  ``ACCEPT`` in that order marks where "stop here" ranks among the continuations.

The runtime (:mod:`petricep.runtime.rows`) fires the transitions of a partition's tokens in
that order, which reproduces SQL's preferred match exactly. Like every petricep net it is
frozen and picklable, and its conditions stay expression ASTs.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

from petricep.errors import PatternSemanticError
from petricep.lang import ast as A
from petricep.lang import sql_ast as S

ACCEPT = -1  # in a place's exits: the match may end here (ranked among the transitions)
MAX_STEPS = 4096  # unrolled row steps of one pattern


@dataclass(frozen=True)
class RowPlace:
    id: int
    label: str  # "start" or the variable of the step, e.g. "DOWN" / "DOWN#2"
    var: str | None


@dataclass(frozen=True)
class RowTransition:
    id: int
    src: int
    dst: int
    var: str  # the pattern variable the input row is mapped to
    guard: S.SExpr | None  # the variable's DEFINE (None: every row qualifies)


@dataclass(frozen=True)
class RowNet:
    """One MATCH_RECOGNIZE query's net, with what its runtime needs to select matches."""

    name: str
    index: int
    table: str | None  # the event type of its rows (None: every input event)
    partition: tuple[str, ...]
    vars: tuple[str, ...]  # pattern variables, first occurrence order
    multi: frozenset[str]  # variables that can map several rows (their ids are a list)
    subsets: tuple[tuple[str, tuple[str, ...]], ...]
    places: tuple[RowPlace, ...]
    transitions: tuple[RowTransition, ...]
    exits: tuple[tuple[int, ...], ...]  # per place: transition ids and ACCEPT, preferred first
    start: int
    measures: tuple[S.Measure, ...]
    all_rows: bool
    skip: S.Skip
    window_kind: str | None
    window_value: float | int | None
    history: int  # rows before a match that PREV can read
    memoryless: bool  # no DEFINE reads the match so far: one token per place suffices
    select: tuple[str, ...]  # the output columns (MatchRecognize.columns: SELECT *: partition, measures)
    source: S.MatchRecognize

    @property
    def input_types(self) -> frozenset[str]:
        return frozenset((self.table,)) if self.table is not None else frozenset()


# ----------------------------------------------------------------------------- program

_VAR, _SPLIT, _JMP, _MATCH = "var", "split", "jmp", "match"


class _Program:
    """Backtracking-matcher instructions: ``var`` consumes a row and falls through,
    ``split a b`` tries a before b, ``jmp a``, ``match``."""

    def __init__(self, query: S.MatchRecognize) -> None:
        self.query = query
        self.ins: list[list[object]] = []

    def add(self, *ins: object) -> int:
        if len(self.ins) >= 4 * MAX_STEPS:
            sp = self.query.span
            raise PatternSemanticError(
                f"query {self.query.name!r}: the pattern unrolls to more than {MAX_STEPS} row steps", sp.file, sp.line or None
            )
        self.ins.append(list(ins))
        return len(self.ins) - 1

    def gen(self, n: S.RNode) -> None:
        if isinstance(n, S.RVar):
            self.add(_VAR, n.name)
        elif isinstance(n, S.RSeq):
            for c in n.items:
                self.gen(c)
        elif isinstance(n, S.RAlt):
            self._alt(list(n.items))
        elif isinstance(n, S.RPermute):
            orders = [S.RSeq(tuple(p)) for p in permutations(n.items)]
            self._alt(list(orders))
        else:
            self._quant(n)

    def _alt(self, items: list[S.RNode]) -> None:
        jumps = []
        for i, item in enumerate(items):
            if i < len(items) - 1:
                split = self.add(_SPLIT, None, None)
                self.ins[split][1] = len(self.ins)
                self.gen(item)
                jumps.append(self.add(_JMP, None))
                self.ins[split][2] = len(self.ins)
            else:
                self.gen(item)
        for j in jumps:
            self.ins[j][1] = len(self.ins)

    def _patch(self, split: int, body: int, out: int, greedy: bool) -> None:
        """A split preferring one more iteration (greedy) or leaving (reluctant)."""
        self.ins[split][1:] = [body, out] if greedy else [out, body]

    def _quant(self, q: S.RQuant) -> None:
        """``{lo,hi}``: lo copies of the body, then a loop (hi unbounded) or hi - lo nested
        optional copies (not taking one skips the rest)."""
        for _ in range(q.lo):
            self.gen(q.body)
        if q.hi is None:
            loop = self.add(_SPLIT, None, None)
            self.gen(q.body)
            self.add(_JMP, loop)
            self._patch(loop, loop + 1, len(self.ins), q.greedy)
            return
        splits = []
        for _ in range(q.hi - q.lo):
            splits.append(self.add(_SPLIT, None, None))
            self.gen(q.body)
        for s in splits:
            self._patch(s, s + 1, len(self.ins), q.greedy)

    def closure(self, pc: int) -> list[int]:
        """Row steps (their pcs) and ACCEPT reachable from ``pc`` without a row, preferred first."""
        out: list[int] = []
        seen: set[int] = set()
        stack = [pc]
        while stack:
            p = stack.pop()
            if p in seen:
                continue
            seen.add(p)
            ins = self.ins[p]
            if ins[0] == _VAR:
                out.append(p)
            elif ins[0] == _MATCH:
                out.append(ACCEPT)
            elif ins[0] == _JMP:
                stack.append(ins[1])  # type: ignore[arg-type]
            else:
                stack.append(ins[2])  # type: ignore[arg-type]
                stack.append(ins[1])  # type: ignore[arg-type]
        return out


# ----------------------------------------------------------------------------- compile


def _multi(n: S.RNode, repeated: bool, seen: dict[str, int], out: set[str]) -> None:
    """Variables that can map several rows: under a repeating quantifier, or written twice."""
    if isinstance(n, S.RVar):
        seen[n.name] = seen.get(n.name, 0) + 1
        if repeated or seen[n.name] > 1:
            out.add(n.name)
        return
    rep = repeated or (isinstance(n, S.RQuant) and (n.hi is None or n.hi > 1))
    for c in S.rchildren(n):
        _multi(c, rep, seen, out)


def _history(q: S.MatchRecognize) -> int:
    exprs = [d.expr for d in q.defines] + [m.expr for m in q.measures]
    return max(
        (x.offset for e in exprs for x in S.walk(e) if isinstance(x, S.Nav) and x.func == "PREV"),
        default=0,
    )


def _memoryless(q: S.MatchRecognize) -> bool:
    """Whether every DEFINE reads only the row being classified and the rows around it in
    the partition (PREV/NEXT), never the rows mapped so far. Then two partial matches in one
    place have the same futures, and the preferred one (found first) is all that matters."""
    for d in q.defines:
        for x in S.walk(d.expr):
            if isinstance(x, S.Col) and x.var not in (None, d.var):
                return False
            if isinstance(x, S.Nav) and x.func in S.NAV_LOGICAL:
                return False
            if isinstance(x, S.Call) and x.func in S.AGGREGATES:
                return False
    return True


def compile_query(q: S.MatchRecognize, index: int = 0) -> RowNet:
    """Lower one MATCH_RECOGNIZE query to its row-pattern net."""
    prog = _Program(q)
    prog.gen(q.pattern)
    prog.add(_MATCH)
    place_of: dict[int, int] = {}  # var pc -> place
    labels: list[tuple[str, str | None]] = [("start", None)]
    pcs: list[int] = [-1]
    queue = [-1]
    exits: dict[int, list[tuple[int, int]]] = {}  # place -> (target pc | ACCEPT, ...)
    while queue:
        pc = queue.pop(0)
        place = 0 if pc < 0 else place_of[pc]
        targets = prog.closure(pc + 1 if pc >= 0 else 0)
        exits[place] = []
        for t in targets:
            if t != ACCEPT and t not in place_of:
                place_of[t] = len(labels)
                labels.append((str(prog.ins[t][1]), str(prog.ins[t][1])))
                pcs.append(t)
                queue.append(t)
            exits[place].append((t, place_of[t] if t != ACCEPT else ACCEPT))
    counts: dict[str, int] = {}
    places = []
    for pid, (label, var) in enumerate(labels):
        if var is not None:
            counts[var] = counts.get(var, 0) + 1
            if counts[var] > 1:
                label = f"{var}#{counts[var]}"
        places.append(RowPlace(pid, label, var))
    transitions: list[RowTransition] = []
    place_exits: list[tuple[int, ...]] = []
    for pid in range(len(places)):
        row = []
        for _t, dst in exits[pid]:
            if dst == ACCEPT:
                row.append(ACCEPT)
                continue
            var = places[dst].var
            assert var is not None
            transitions.append(RowTransition(len(transitions), pid, dst, var, q.define(var)))
            row.append(len(transitions) - 1)
        place_exits.append(tuple(row))
    multi: set[str] = set()
    _multi(q.pattern, False, {}, multi)
    return RowNet(
        name=q.name,
        index=index,
        table=q.table,
        partition=q.partition,
        vars=tuple(S.pattern_vars(q.pattern)),
        multi=frozenset(multi),
        subsets=tuple((s.name, s.vars) for s in q.subsets),
        places=tuple(places),
        transitions=tuple(transitions),
        exits=tuple(place_exits),
        start=0,
        measures=q.measures,
        all_rows=q.all_rows,
        skip=q.skip,
        window_kind=q.window.kind if q.window else None,
        window_value=A.window_amount(q.window),
        history=_history(q),
        memoryless=_memoryless(q),
        select=q.columns(),
        source=q,
    )
