"""The frozen AST of SQL row-pattern queries (``MATCH_RECOGNIZE``).

A second front end beside the pattern language: the SQL text becomes these values,
which :mod:`petricep.compile.rows` lowers to a row-pattern net. Expressions are data
(never ``eval``-ed) so nets stay picklable and printable.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field

from petricep.lang.spans import NOWHERE, Span, Window

# ----------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Lit:
    """A literal: number, string or NULL (None)."""

    value: int | float | str | None
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Col:
    """``[var.]column``; ``var`` None reads the current row (a universal column)."""

    var: str | None
    name: str
    span: Span = dc_field(default=NOWHERE, compare=False)


NAV_PHYSICAL = ("PREV", "NEXT")  # rows of the partition around the row the argument reads
NAV_LOGICAL = ("FIRST", "LAST")  # rows of the match mapped to the argument's variable


@dataclass(frozen=True)
class Nav:
    """``PREV(e, n)``, ``NEXT(e, n)``, ``FIRST(e, n)``, ``LAST(e, n)``."""

    func: str
    arg: SExpr
    offset: int
    span: Span = dc_field(default=NOWHERE, compare=False)


AGGREGATES = ("COUNT", "SUM", "AVG", "MIN", "MAX")
SCALAR_FUNCS = ("ABS",)


@dataclass(frozen=True)
class Call:
    """An aggregate (``COUNT(*)`` has ``star`` set, ``COUNT(A.*)`` also ``star_var``),
    ``CLASSIFIER()``, ``MATCH_NUMBER()`` or a scalar function."""

    func: str
    args: tuple[SExpr, ...]
    star: bool = False
    star_var: str | None = None
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Final:
    """``FINAL e`` (MEASURES only): navigation and aggregates see the whole match."""

    arg: SExpr
    span: Span = dc_field(default=NOWHERE, compare=False)


# '+', '-', '*', '/', '%', '=', '!=', '<', '<=', '>', '>=', 'and', 'or', 'not', 'neg',
# 'is null', 'is not null'
@dataclass(frozen=True)
class Op:
    op: str
    args: tuple[SExpr, ...]
    span: Span = dc_field(default=NOWHERE, compare=False)


SExpr = Lit | Col | Nav | Call | Final | Op


def children(e: SExpr) -> tuple[SExpr, ...]:
    if isinstance(e, (Nav, Final)):
        return (e.arg,)
    if isinstance(e, (Call, Op)):
        return e.args
    return ()


def walk(e: SExpr):  # type: ignore[no-untyped-def]
    """Pre-order iterator over an expression."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(children(x)))


def column_vars(e: SExpr) -> set[str | None]:
    """The variables whose rows ``e``'s columns read (None: the universal row set)."""
    return {x.var for x in walk(e) if isinstance(x, Col)}


# ----------------------------------------------------------------------------- row pattern


@dataclass(frozen=True)
class RVar:
    name: str
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class RSeq:
    items: tuple[RNode, ...]
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class RAlt:
    """Alternation: the left branch is preferred."""

    items: tuple[RNode, ...]
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class RQuant:
    """``body{lo,hi}`` (hi None: unbounded); greedy prefers more iterations."""

    body: RNode
    lo: int
    hi: int | None
    greedy: bool = True
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class RPermute:
    """``PERMUTE(a, b, ...)``: every order, preferred in lexicographic order of the list."""

    items: tuple[RNode, ...]
    span: Span = dc_field(default=NOWHERE, compare=False)


RNode = RVar | RSeq | RAlt | RQuant | RPermute


def rchildren(n: RNode) -> tuple[RNode, ...]:
    if isinstance(n, RVar):
        return ()
    if isinstance(n, RQuant):
        return (n.body,)
    return n.items


def pattern_vars(n: RNode) -> list[str]:
    """Variables of a row pattern, first occurrence order."""
    out: list[str] = []
    stack = [n]
    while stack:
        x = stack.pop()
        if isinstance(x, RVar) and x.name not in out:
            out.append(x.name)
        stack.extend(reversed(rchildren(x)))
    return out


def nullable(n: RNode) -> bool:
    """Whether the pattern can match no rows at all."""
    if isinstance(n, RVar):
        return False
    if isinstance(n, RQuant):
        return n.lo == 0 or nullable(n.body)
    if isinstance(n, RAlt):
        return any(nullable(c) for c in n.items)
    return all(nullable(c) for c in n.items)


# ----------------------------------------------------------------------------- the query

SKIP_PAST_LAST = "past last row"
SKIP_NEXT_ROW = "to next row"
SKIP_FIRST = "to first"
SKIP_LAST = "to last"


@dataclass(frozen=True)
class Skip:
    mode: str  # SKIP_*
    var: str | None = None
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Measure:
    name: str
    expr: SExpr
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Define:
    var: str
    expr: SExpr
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Subset:
    name: str
    vars: tuple[str, ...]
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class MatchRecognize:
    """One ``MATCH_RECOGNIZE`` query; ``table`` None reads every input event."""

    name: str
    table: str | None
    partition: tuple[str, ...]
    order: tuple[str, ...]
    measures: tuple[Measure, ...]
    all_rows: bool
    skip: Skip
    pattern: RNode
    subsets: tuple[Subset, ...]
    defines: tuple[Define, ...]
    window: Window | None = None
    select: tuple[str, ...] | None = None  # None: SELECT *
    span: Span = dc_field(default=NOWHERE, compare=False)

    def columns(self) -> tuple[str, ...]:
        """The output columns of a match (its ``attrs``): the SELECT list, or for ``SELECT *``
        the PARTITION BY columns followed by the MEASURES — what the SQL standard returns
        for ONE ROW PER MATCH (Oracle, Flink and Trino alike), so a match says which
        partition it is of."""
        if self.select is not None:
            return self.select
        return (*self.partition, *(m.name for m in self.measures))

    def define(self, var: str) -> SExpr | None:
        for d in self.defines:
            if d.var == var:
                return d.expr
        return None


# ----------------------------------------------------------------------------- printing
# SQL text again, for `check`, diagrams and error messages (round-trips through the parser)

_PREC = {"or": 1, "and": 2, "not": 3, "=": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}


def expr_sql(e: SExpr, outer: int = 0) -> str:
    if isinstance(e, Lit):
        if e.value is None:
            return "NULL"
        return "'" + e.value.replace("'", "''") + "'" if isinstance(e.value, str) else repr(e.value)
    if isinstance(e, Col):
        return f"{e.var}.{e.name}" if e.var else e.name
    if isinstance(e, Nav):
        default = 0 if e.func in NAV_LOGICAL else 1
        return f"{e.func}({expr_sql(e.arg)}{'' if e.offset == default else f', {e.offset}'})"
    if isinstance(e, Call):
        if e.star:
            return f"{e.func}({e.star_var + '.' if e.star_var else ''}*)"
        return f"{e.func}({', '.join(expr_sql(a) for a in e.args)})"
    if isinstance(e, Final):
        return f"FINAL {expr_sql(e.arg, 7)}"
    if e.op in ("is null", "is not null"):
        return f"{expr_sql(e.args[0], 5)} {e.op.upper()}"
    if e.op == "neg":
        return f"-{expr_sql(e.args[0], 7)}"
    prec = _PREC[e.op]
    if e.op == "not":
        text = f"NOT {expr_sql(e.args[0], prec)}"
    else:
        sep = f" {e.op.upper()} " if e.op in ("and", "or") else f" {e.op} "
        text = sep.join(expr_sql(a, prec + (i > 0)) for i, a in enumerate(e.args))
    return f"({text})" if prec < outer else text


def pattern_sql(n: RNode, outer: int = 0) -> str:
    """A row pattern as SQL (precedence: alternation < concatenation < quantifier)."""
    if isinstance(n, RVar):
        return n.name
    if isinstance(n, RPermute):
        return "PERMUTE(" + ", ".join(pattern_sql(c) for c in n.items) + ")"
    if isinstance(n, RQuant):
        q = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((n.lo, n.hi))
        if q is None:
            q = f"{{{n.lo}}}" if n.lo == n.hi else f"{{{n.lo},}}" if n.hi is None else f"{{{n.lo},{n.hi}}}"
        text = f"{pattern_sql(n.body, 4)}{q}{'' if n.greedy else '?'}"
        return f"({text})" if outer > 3 else text
    if isinstance(n, RSeq):
        text, prec = " ".join(pattern_sql(c, 2) for c in n.items), 2
    else:
        text, prec = " | ".join(pattern_sql(c, 1) for c in n.items), 1
    return f"({text})" if prec < outer else text
