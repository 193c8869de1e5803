"""SQL ``MATCH_RECOGNIZE`` text -> :mod:`petricep.lang.sql_ast`.

The second front end: lark parses ``sql.lark``, :class:`_Builder` makes the frozen AST and
:class:`_Checker` rejects what parses but means nothing (unknown variables, NEXT in DEFINE,
repeated groups that can match no rows), every error with file, line, column and caret.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from lark import Token, v_args
from lark.tree import Meta

from petricep.errors import PatternError, raise_errors
from petricep.lang import ast as A
from petricep.lang import raw as R
from petricep.lang import sql_ast as S
from petricep.lang.check import nearest
from petricep.lang.front import (
    TOKEN_NAMES,
    BuildError,
    SpanTransformer,
    check_text_limits,
    error_at,
    grammar,
    parse_tree_all,
    read_source,
    semicolons,
    terminal_words,
    transform_each,
)

_NAMES = {
    **TOKEN_NAMES,
    "SEMICOLON": "';'",
    "STAR": "'*'",
    "PLUS": "'+'",
    "QMARK": "'?'",
    "VBAR": "'|'",
    "LBRACE": "'{'",
    "NAV": "PREV/NEXT/FIRST/LAST",
    "SEMANTICS": "RUNNING/FINAL",
    "MINUS": "'-'",
    "SLASH": "'/'",
    "PERCENT": "'%'",
}

_INTERVAL_UNITS = {"millisecond": "ms", "milliseconds": "ms"}
_MAX_PERMUTE = 6


_word = terminal_words({**_NAMES, "DIRECTION": "ASC/DESC"})
# what the grammar ignores or quotes: comments and strings (skipped by the limit scan)
_SKIP = re.compile(r"--[^\n]*|/\*(?:.|\n)*?\*/|'(?:[^'\n]|'')*'")


class _Builder(SpanTransformer):
    """lark tree -> SQL AST; clauses come back as tagged tuples assembled in ``statement``."""

    # ---- statement and clauses
    def start(self, c: list[Any]) -> list[R.RawQuery]:
        return [x for x in c if isinstance(x, R.RawQuery)]

    @v_args(meta=True)
    def statement(self, meta: Meta, c: list[Any]) -> R.RawQuery:
        select: tuple[R.Named, ...] | None = None
        body: R.RawQueryBody | None = None
        names: dict[str, R.Named] = {}
        for x in c:
            if isinstance(x, tuple) and x and x[0] == "select":
                select = x[1]
            elif isinstance(x, R.RawQueryBody):
                body = x
            elif isinstance(x, Token) and x.type == "NAME":
                names["alias" if body is not None else "table"] = R.Named(str(x), self._span(x))
        assert body is not None  # the grammar requires MATCH_RECOGNIZE (...)
        return R.RawQuery(self._span(meta), body, select, names.get("table"), names.get("alias"))

    def select_all(self, c: list[Any]) -> tuple[str, None]:
        return ("select", None)

    def select_cols(self, c: list[Any]) -> tuple[str, tuple[R.Named, ...]]:
        return ("select", tuple(c))

    def col_ref(self, c: list[Token]) -> R.Named:
        return R.Named(str(c[-1]), self._span(c[-1]))

    def outer_order(self, c: list[Any]) -> None:
        return None  # the output comes in emission order (docs/MATCH_RECOGNIZE.md)

    def order_item(self, c: list[Any]) -> R.OrderItem:
        return R.OrderItem(c[0], str(c[1]).upper() if len(c) > 1 else "ASC")

    def mr_body(self, c: list[Any]) -> R.RawQueryBody:
        return R.RawQueryBody(**{k: v for k, v in c})

    def partition(self, c: list[Any]) -> tuple[str, Any]:
        return ("partition", tuple(c))

    def order(self, c: list[Any]) -> tuple[str, Any]:
        return ("order", tuple(c))

    def measures(self, c: list[Any]) -> tuple[str, Any]:
        return ("measures", tuple(c))

    def measure(self, c: list[Any]) -> S.Measure:
        return S.Measure(str(c[1]), c[0], span=self._span(c[1]))

    def one_row(self, c: list[Any]) -> tuple[str, bool]:
        return ("all_rows", False)

    def all_rows(self, c: list[Any]) -> tuple[str, bool]:
        return ("all_rows", True)

    def skip(self, c: list[Any]) -> tuple[str, Any]:
        return ("skip", c[0])

    @v_args(meta=True)
    def skip_past(self, meta: Meta, c: list[Any]) -> S.Skip:
        return S.Skip(S.SKIP_PAST_LAST, span=self._span(meta))

    @v_args(meta=True)
    def skip_next(self, meta: Meta, c: list[Any]) -> S.Skip:
        return S.Skip(S.SKIP_NEXT_ROW, span=self._span(meta))

    def skip_first(self, c: list[Token]) -> S.Skip:
        return S.Skip(S.SKIP_FIRST, str(c[-1]), span=self._span(c[-1]))

    def skip_last(self, c: list[Token]) -> S.Skip:
        return S.Skip(S.SKIP_LAST, str(c[-1]), span=self._span(c[-1]))

    def pattern(self, c: list[Any]) -> tuple[str, Any]:
        return ("pattern", c[0])

    def subset(self, c: list[Any]) -> tuple[str, Any]:
        return ("subsets", tuple(c))

    def subset_item(self, c: list[Token]) -> S.Subset:
        if str(c[1]) != "=":
            raise BuildError(f"expected '=' after SUBSET name, got {str(c[1])!r}", c[1])
        return S.Subset(str(c[0]), tuple(str(t) for t in c[2:]), span=self._span(c[0]))

    def define(self, c: list[Any]) -> tuple[str, Any]:
        return ("defines", tuple(c))

    def define_item(self, c: list[Any]) -> S.Define:
        return S.Define(str(c[0]), c[1], span=self._span(c[0]))

    def within_interval(self, c: list[Token]) -> tuple[str, Any]:
        raw = str(c[0])[1:-1].strip()
        try:
            value = float(raw)
        except ValueError:
            raise BuildError(f"INTERVAL needs a number, got {str(c[0])}", c[0]) from None
        return ("within", self._window(value, c[1], c[0]))

    def within_plain(self, c: list[Token]) -> tuple[str, Any]:
        value = float(str(c[0]))
        if len(c) == 1:
            return ("within", A.Window(A.WIN_TIME, _num(value), span=self._span(c[0])))
        if str(c[1]).upper() == "EVENTS":
            return ("within", A.Window(A.WIN_COUNT, _num(value), "EVENTS", span=self._span(c[0])))
        return ("within", self._window(value, c[1], c[0]))

    def _window(self, value: float, unit_tok: Token, at: Token) -> A.Window:
        unit = str(unit_tok).lower()
        unit = _INTERVAL_UNITS.get(unit, unit)
        if unit not in A.DURATION_UNITS:
            raise BuildError(f"unknown time unit {str(unit_tok)!r} (use SECOND, MINUTE, HOUR, DAY)", unit_tok)
        return A.Window(A.WIN_DURATION, _num(value), unit, span=self._span(at))

    # ---- row pattern
    @v_args(meta=True)
    def alt(self, meta: Meta, c: list[Any]) -> S.RNode:
        # alternation is associative (preference stays left to right): A | (B | C) = A | B | C
        items = [x for item in c for x in (item.items if isinstance(item, S.RAlt) else (item,))]
        return items[0] if len(items) == 1 else S.RAlt(tuple(items), span=self._span(meta))

    @v_args(meta=True)
    def concat(self, meta: Meta, c: list[Any]) -> S.RNode:
        items = [x for item in c for x in (item.items if isinstance(item, S.RSeq) else (item,))]
        return items[0] if len(items) == 1 else S.RSeq(tuple(items), span=self._span(meta))

    @v_args(meta=True)
    def quantified(self, meta: Meta, c: list[Any]) -> S.RNode:
        if len(c) == 1:
            return c[0]  # type: ignore[no-any-return]
        lo, hi, greedy, where = c[1]
        if hi is not None and hi < lo:
            raise BuildError(f"quantifier {{{lo},{hi}}}: the maximum is below the minimum", where)
        if hi == 0:
            raise BuildError("quantifier {0} matches nothing", where)
        return S.RQuant(c[0], lo, hi, greedy, span=self._span(meta))

    def rvar(self, c: list[Token]) -> S.RVar:
        return S.RVar(str(c[0]), span=self._span(c[0]))

    @v_args(meta=True)
    def permute(self, meta: Meta, c: list[Any]) -> S.RPermute:
        if len(c) > _MAX_PERMUTE:
            raise BuildError(f"PERMUTE of {len(c)} items: at most {_MAX_PERMUTE}", meta)
        return S.RPermute(tuple(c), span=self._span(meta))

    def quantifier(self, c: list[Any]) -> tuple[int, int | None, bool, Any]:
        q = c[0]
        greedy = len(c) == 1
        if isinstance(q, tuple):
            return (q[0], q[1], greedy, q[2])
        text = str(q)
        lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[text]
        return (lo, hi, greedy, q)

    def exact(self, c: list[Token]) -> tuple[int, int, Token]:
        return (int(c[0]), int(c[0]), c[0])

    def at_least(self, c: list[Token]) -> tuple[int, None, Token]:
        return (int(c[0]), None, c[0])

    def between(self, c: list[Token]) -> tuple[int, int, Token]:
        return (int(c[0]), int(c[1]), c[0])

    def at_most(self, c: list[Token]) -> tuple[int, int, Token]:
        return (0, int(c[0]), c[0])

    # ---- expressions
    def number(self, c: list[Token]) -> S.Lit:
        return S.Lit(_num(float(str(c[0]))) if "." in c[0] or "e" in c[0].lower() else int(c[0]), span=self._span(c[0]))

    def string(self, c: list[Token]) -> S.Lit:
        return S.Lit(str(c[0])[1:-1].replace("''", "'"), span=self._span(c[0]))

    @v_args(meta=True)
    def null(self, meta: Meta, c: list[Any]) -> S.Lit:
        return S.Lit(None, span=self._span(meta))

    def column(self, c: list[Token]) -> S.Col:
        return S.Col(None, str(c[0]), span=self._span(c[0]))

    def qcolumn(self, c: list[Token]) -> S.Col:
        return S.Col(str(c[0]), str(c[1]), span=self._span(c[0]))

    def nav(self, c: list[Any]) -> S.Nav:
        offset = int(c[2]) if len(c) > 2 else (0 if str(c[0]).upper() in S.NAV_LOGICAL else 1)
        return S.Nav(str(c[0]).upper(), c[1], offset, span=self._span(c[0]))

    def count_star(self, c: list[Token]) -> S.Call:
        return self._call(c[0], (), star=True)

    def count_var(self, c: list[Token]) -> S.Call:
        return self._call(c[0], (), star=True, star_var=str(c[1]))

    def call(self, c: list[Any]) -> S.Call:
        return self._call(c[0], tuple(c[1:]))

    def _call(self, name: Token, args: tuple[S.SExpr, ...], star: bool = False, star_var: str | None = None) -> S.Call:
        func = str(name).upper()
        known = S.AGGREGATES + S.SCALAR_FUNCS + ("CLASSIFIER", "MATCH_NUMBER")
        if func not in known:
            raise BuildError(_unknown_function(str(name)), name)
        if star and func != "COUNT":
            raise BuildError(f"{func}(*) is not allowed; only COUNT(*)", name)
        want = {"CLASSIFIER": 0, "MATCH_NUMBER": 0}.get(func, 1)
        if not star and len(args) != want:
            raise BuildError(f"{func}() takes {want} argument{'s' if want != 1 else ''}, got {len(args)}", name)
        return S.Call(func, args, star, star_var, span=self._span(name))

    def semantics(self, c: list[Any]) -> S.SExpr:
        if str(c[0]).upper() == "FINAL":
            return S.Final(c[1], span=self._span(c[0]))
        return c[1]  # type: ignore[no-any-return]  # RUNNING is the default

    def neg(self, c: list[Any]) -> S.Op:
        return S.Op("neg", (c[1],), span=self._span(c[0]))

    def arith(self, c: list[Any]) -> S.SExpr:
        out = c[0]
        for i in range(1, len(c), 2):
            out = S.Op(str(c[i]), (out, c[i + 1]), span=_span_of(out))
        return out  # type: ignore[no-any-return]

    def compare(self, c: list[Any]) -> S.Op:
        op = {"==": "=", "<>": "!="}.get(str(c[1]), str(c[1]))
        return S.Op(op, (c[0], c[2]), span=_span_of(c[0]))

    def is_null(self, c: list[Any]) -> S.Op:
        return S.Op("is null", (c[0],), span=_span_of(c[0]))

    def is_not_null(self, c: list[Any]) -> S.Op:
        return S.Op("is not null", (c[0],), span=_span_of(c[0]))

    def and_expr(self, c: list[Any]) -> S.Op:
        return S.Op("and", tuple(c), span=_span_of(c[0]))

    def or_expr(self, c: list[Any]) -> S.Op:
        return S.Op("or", tuple(c), span=_span_of(c[0]))

    def not_(self, c: list[Any]) -> S.Op:
        return S.Op("not", (c[1],), span=self._span(c[0]))


def _unknown_function(name: str) -> str:
    """The message for a call of a function SQL here does not have: every function it knows
    (navigation included) and the nearest one."""
    known = S.NAV_PHYSICAL + S.NAV_LOGICAL + S.AGGREGATES + S.SCALAR_FUNCS + ("CLASSIFIER", "MATCH_NUMBER")
    upper = name.upper()
    prefix = [k for k in known if upper.startswith(k) or k.startswith(upper)]
    close = prefix or difflib.get_close_matches(upper, known, n=1, cutoff=0.75)
    guess = f"; did you mean {close[0]}?" if close else ""
    return f"unknown function {name!r}{guess} (known: {', '.join(known)})"


def _num(v: float) -> int | float:
    return int(v) if v.is_integer() else v


def _span_of(e: Any) -> A.Span:
    return getattr(e, "span", A.NOWHERE)


# ----------------------------------------------------------------------------- checks


class _Checker:
    """Semantic checks of one query; raises PatternSemanticError at the offending text."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file

    def error(self, message: str, span: A.Span) -> PatternError:
        return error_at(message, A.Span(self.file, span.line, span.column, span.source or self.text))

    def check(self, q: S.MatchRecognize) -> None:
        names = S.pattern_vars(q.pattern)
        self._pattern(q.pattern)
        known = set(names)
        for s in q.subsets:
            if s.name in known:
                raise self.error(f"SUBSET {s.name!r} has the name of a pattern variable", s.span)
            for v in s.vars:
                if v not in names:
                    raise self.error(f"SUBSET {s.name!r} names {v!r}, which PATTERN does not use", s.span)
            known.add(s.name)
        seen: set[str] = set()
        for d in q.defines:
            if d.var not in names:
                raise self.error(f"DEFINE names {d.var!r}, which PATTERN does not use", d.span)
            if d.var in seen:
                raise self.error(f"{d.var!r} is defined twice", d.span)
            seen.add(d.var)
            self._expr(d.expr, known, define=True)
        measure_names: set[str] = set()
        for m in q.measures:
            if m.name in measure_names:
                raise self.error(f"measure {m.name!r} is defined twice", m.span)
            measure_names.add(m.name)
            self._expr(m.expr, known, define=False)
        if q.skip.var is not None and q.skip.var not in known:
            raise self.error(f"AFTER MATCH SKIP names {q.skip.var!r}, which is not a pattern variable", q.skip.span)

    def _pattern(self, n: S.RNode) -> None:
        if isinstance(n, S.RQuant) and (n.hi is None or n.hi > 1) and S.nullable(n.body):
            raise self.error("a repeated group that can match no rows is not supported", n.span)
        for c in S.rchildren(n):
            self._pattern(c)

    def _expr(self, e: S.SExpr, known: set[str], define: bool, inside: str | None = None) -> None:
        if isinstance(e, S.Col) and e.var is not None and e.var not in known:
            raise self.error(f"unknown pattern variable {e.var!r}", e.span)
        if isinstance(e, S.Final) and define:
            raise self.error("FINAL is only allowed in MEASURES (DEFINE sees the match so far)", e.span)
        if isinstance(e, S.Call):
            if e.func == "MATCH_NUMBER" and define:
                raise self.error("MATCH_NUMBER() is only allowed in MEASURES", e.span)
            if e.star_var is not None and e.star_var not in known:
                raise self.error(f"unknown pattern variable {e.star_var!r}", e.span)
            if e.func in S.AGGREGATES:
                if inside is not None:
                    raise self.error(f"an aggregate inside {inside}() is not allowed", e.span)
                for a in e.args:
                    if len(S.column_vars(a)) > 1:
                        raise self.error(f"{e.func}() reads columns of several pattern variables", e.span)
                    self._expr(a, known, define, e.func)
                return
        if isinstance(e, S.Nav):
            if e.func == "NEXT" and define:
                raise self.error("NEXT() is not supported in DEFINE (a row is classified when it arrives)", e.span)
            if inside is not None:  # PREV(LAST(...)) is handled by the PREV: nothing else nests
                raise self.error(f"{e.func}() inside {inside}() is not allowed", e.span)
            if len(S.column_vars(e.arg)) > 1:
                raise self.error(f"{e.func}() reads columns of several pattern variables", e.span)
            if not any(isinstance(x, S.Col) for x in S.walk(e.arg)):
                raise self.error(f"{e.func}() needs a column in its argument", e.span)
            if any(isinstance(x, S.Call) for x in S.walk(e.arg)):
                raise self.error(f"{e.func}() of a function call is not allowed", e.span)
            arg = e.arg
            if e.func in S.NAV_PHYSICAL and isinstance(arg, S.Nav) and arg.func in S.NAV_LOGICAL:
                arg = arg.arg  # PREV(LAST(A.x, 1), 3): the logical offset inside, the physical outside
            self._expr(arg, known, define, e.func)
            return
        for c in S.children(e):
            self._expr(c, known, define, inside)


def _assemble(raw: R.RawQuery, index: int, default_name: str | None) -> S.MatchRecognize:
    body, alias, table = raw.body, raw.alias, raw.table
    if alias is not None:
        name = alias.name
    elif default_name is not None:
        name = default_name if index == 0 else f"{default_name}_{index + 1}"
    else:
        name = f"query_{index + 1}"
    for item in body.order:
        if item.direction == "DESC":
            col = item.column
            raise BuildError(f"ORDER BY {col.name} DESC: rows are matched in stream order (ascending time)", col.span)
    return S.MatchRecognize(
        name=name,
        table=table.name if table else None,
        partition=tuple(c.name for c in body.partition),
        order=tuple(item.column.name for item in body.order),
        measures=body.measures,
        all_rows=body.all_rows,
        skip=body.skip,
        pattern=body.pattern,
        subsets=body.subsets,
        defines=body.defines,
        window=body.within,
        select=None if raw.select is None else tuple(c.name for c in raw.select),
        span=table.span if table else raw.span,
    )


def parse_sql(text: str, file: str = "<sql>", default_name: str | None = None) -> A.PatternFile:
    """Parse and check SQL text (``;``-separated MATCH_RECOGNIZE queries)."""
    check_text_limits(text, file, _SKIP)
    trees, errors = parse_tree_all(grammar("sql.lark"), text, file, _word, semicolons(text, _SKIP))
    raws, build_errors = transform_each(_Builder(file, text), trees, text, file)
    found: list[PatternError] = [*errors, *build_errors]
    checker = _Checker(text, file)
    queries: list[S.MatchRecognize] = []
    names: set[str] = set()
    for i, raw in enumerate(raws):
        try:
            queries.append(_query(raw, i, default_name if len(raws) == 1 else None, names, checker))
        except PatternError as e:
            found.append(e)
    found.sort(key=lambda e: (e.line or 0, e.column or 0))  # file order
    raise_errors(found)
    return A.PatternFile(file, (), (), tuple(queries))


def _query(
    raw: R.RawQuery, i: int, default_name: str | None, names: set[str], checker: _Checker
) -> S.MatchRecognize:
    """One query assembled and checked (``names``: the file's query names so far)."""
    file, text = checker.file, checker.text
    try:
        q = _assemble(raw, i, default_name)
    except BuildError as err:
        raise checker.error(err.message, err.span(file, text)) from None
    if q.name in names:
        raise checker.error(f"two queries named {q.name!r} (give each an alias)", raw.alias.span if raw.alias else q.span)
    names.add(q.name)
    checker.check(q)
    if q.select is not None:
        allowed = {m.name for m in q.measures} | set(q.partition)
        for col in raw.select or ():
            if col.name not in allowed:
                raise checker.error(f"SELECT {col.name}: not a measure or a PARTITION BY column", col.span)
    else:
        for m in q.measures:
            if m.name in q.partition:
                raise checker.error(
                    f"MEASURES ... AS {m.name}: SELECT * returns the PARTITION BY column {m.name!r} too; "
                    "give the measure another name",
                    m.span,
                )
    return q


def check_sql_columns(pattern_file: A.PatternFile, columns: Iterable[str], text: str | None = None) -> None:
    """Schema check of CSV/Parquet input: every column a query reads must exist (reported at
    the query, like a pattern's missing field, before any row is read)."""
    cols = set(columns) | {"ts", "id"}
    checker = _Checker(read_source(pattern_file.path) if text is None else text, pattern_file.path)
    for q in pattern_file.queries:
        table = repr(q.table) if q.table else "the input"
        for col in q.partition:
            if col not in cols:
                raise checker.error(f"{table} has no column {col!r} (needed by PARTITION BY){nearest(col, cols)}", q.span)
        for e in [d.expr for d in q.defines] + [m.expr for m in q.measures]:
            for x in S.walk(e):
                if isinstance(x, S.Col) and x.name not in cols:
                    raise checker.error(f"{table} has no column {x.name!r}{nearest(x.name, cols)}", x.span)
