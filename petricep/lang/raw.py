"""What a front end's parse gives the checker: declarations as written, before checking.

Typed and frozen like the AST they become (:mod:`petricep.lang.check` turns a
:class:`RawPattern` into an :class:`~petricep.lang.ast.Pattern`), so that nothing between the
grammar and the checker is a plain dict whose keys only the two sides agree on.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field

from petricep.lang import ast as A
from petricep.lang import sql_ast as S


@dataclass(frozen=True)
class Marker:
    """A ``[attr, ...]`` partition item or a strategy written inside WHERE; legal only as a
    top-level AND term (the checker lifts it out of the conditions)."""

    kind: str  # "partition" | "strategy"
    names: tuple[str, ...]
    span: A.Span = dc_field(default=A.NOWHERE, compare=False)


@dataclass(frozen=True)
class WithinText:
    """``WITHIN n [unit]`` as written: the number stays text until the checker reads it."""

    number: str
    unit: str | None
    number_span: A.Span
    unit_span: A.Span | None


@dataclass(frozen=True)
class Named:
    """A name as written, with where (CONSUME's variables, a conflict group's members)."""

    name: str
    span: A.Span = dc_field(default=A.NOWHERE, compare=False)


#: the clause labels error messages use
CLAUSE_LABELS = {
    "where": "WHERE",
    "within": "WITHIN",
    "strategy": "STRATEGY",
    "returns": "RETURN",
    "timeout": "ON TIMEOUT",
    "consume": "CONSUME",
    "limit": "LIMIT",
}


@dataclass(frozen=True)
class RawPattern:
    """One ``PATTERN`` declaration as written."""

    span: A.Span
    structure: A.Node
    name: Named | None = None
    where: A.Expr | Marker | None = None
    within: WithinText | None = None
    strategy: Named | None = None
    returns: A.Return | None = None
    timeout: A.Return | None = None
    consume: tuple[Named, ...] | None = None  # () never; ALL is consume_all
    consume_all: bool = False
    limit: A.Limit | None = None


@dataclass(frozen=True)
class RawConflict:
    """One ``CONFLICT name: p1, p2`` declaration as written."""

    name: str
    members: tuple[Named, ...]
    span: A.Span


RawDecl = RawPattern | RawConflict


@dataclass(frozen=True)
class OrderItem:
    """``ORDER BY column [ASC | DESC]`` of a query as written."""

    column: Named
    direction: str = "ASC"


@dataclass(frozen=True)
class RawQueryBody:
    """The inside of ``MATCH_RECOGNIZE ( ... )`` as written."""

    pattern: S.RNode
    partition: tuple[Named, ...] = ()
    order: tuple[OrderItem, ...] = ()
    measures: tuple[S.Measure, ...] = ()
    all_rows: bool = False
    skip: S.Skip = S.Skip(S.SKIP_PAST_LAST)
    subsets: tuple[S.Subset, ...] = ()
    defines: tuple[S.Define, ...] = ()
    within: A.Window | None = None


@dataclass(frozen=True)
class RawQuery:
    """One ``SELECT ... FROM t MATCH_RECOGNIZE (...) [AS alias]`` statement as written."""

    span: A.Span
    body: RawQueryBody
    select: tuple[Named, ...] | None = None  # None: SELECT *
    table: Named | None = None
    alias: Named | None = None
