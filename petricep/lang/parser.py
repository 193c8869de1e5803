"""Pattern text -> AST.

lark (LALR) does the parsing; this module turns its tree into the frozen AST of
:mod:`petricep.lang.ast` and its errors into :class:`PatternSyntaxError` with a caret.
Semantic checks live in :mod:`petricep.lang.check`.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import lark
from lark import Token, Transformer, v_args

from petricep.errors import PatternSyntaxError
from petricep.lang import ast as A

_COMPOP_NORMAL = {"==": "=", "<>": "!="}

_TOKEN_NAMES = {
    "NAME": "a name",
    "NUMBER": "a number",
    "INT": "an integer",
    "STRING": "a string",
    "COMPOP": "a comparison",
    "LPAR": "'('",
    "RPAR": "')'",
    "COMMA": "','",
    "SEQ": "SEQ",
    "AND_KW": "AND",
    "OR_KW": "OR",
    "_WHERE": "WHERE",
    "_WITHIN": "WITHIN",
    "_RETURN": "RETURN",
    "_PATTERN": "PATTERN",
    "_STRATEGY": "STRATEGY",
    "_ON": "ON",
    "_TIMEOUT": "TIMEOUT",
    "_LIMIT": "LIMIT",
    "_PARTIAL": "PARTIAL",
    "_MATCHES": "MATCHES",
    "_PER": "PER",
    "_KEY": "KEY",
    "OVERFLOW": "DROP OLDEST, REJECT NEW or FAIL",
    "STRATEGY": "a strategy",
    "BANG": "'!'",
    "$END": "end of file",
}


@lru_cache(maxsize=1)
def _lark() -> lark.Lark:
    text = resources.files("petricep.lang").joinpath("pattern.lark").read_text(encoding="utf-8")
    return lark.Lark(text, parser="lalr", propagate_positions=True, maybe_placeholders=False)


class SpanTransformer(Transformer):  # type: ignore[type-arg]
    """A lark transformer that knows its file, so nodes carry where they came from."""

    def __init__(self, file: str) -> None:
        super().__init__()
        self.file = file

    def _span(self, obj: Any) -> A.Span:
        if isinstance(obj, Token):
            return A.Span(self.file, obj.line or 0, obj.column or 0)
        meta = getattr(obj, "meta", obj)
        return A.Span(self.file, getattr(meta, "line", 0), getattr(meta, "column", 0))


class _Builder(SpanTransformer):
    """lark tree -> AST. Partition/strategy items stay in WHERE as markers for check."""

    # ---- structure
    @v_args(meta=True)
    def ref(self, meta: Any, c: list[Token]) -> A.EventRef:
        return A.EventRef(str(c[0]), str(c[1]), span=self._span(c[0]))

    @v_args(meta=True)
    def kleene(self, meta: Any, c: list[Token]) -> A.EventRef:
        return A.EventRef(str(c[0]), str(c[2]), kleene=True, span=self._span(c[0]))

    @v_args(meta=True)
    def archived_ref(self, meta: Any, c: list[Token]) -> A.EventRef:
        return A.EventRef(str(c[0]), str(c[1]), archived=True, span=self._span(c[0]))

    @v_args(meta=True)
    def negation(self, meta: Any, c: list[Token]) -> A.EventRef:
        return A.EventRef(str(c[1]), str(c[2]), negated=True, span=self._span(c[0]))

    @v_args(meta=True)
    def seq(self, meta: Any, c: list[Any]) -> A.Seq:
        return A.Seq(tuple(c[1:]), span=self._span(c[0]))

    @v_args(meta=True)
    def and_(self, meta: Any, c: list[Any]) -> A.And:
        return A.And(tuple(c[1:]), span=self._span(c[0]))

    @v_args(meta=True)
    def or_(self, meta: Any, c: list[Any]) -> A.Or:
        return A.Or(tuple(c[1:]), span=self._span(c[0]))

    # ---- clauses (returned as tagged tuples, assembled in pattern_decl)
    @v_args(meta=True)
    def where(self, meta: Any, c: list[Any]) -> tuple[str, Any, A.Span]:
        return ("where", c[0], self._span(meta))

    @v_args(meta=True)
    def within(self, meta: Any, c: list[Token]) -> tuple[str, Any, A.Span]:
        sign = ""
        if c[0].type == "MINUS":
            sign, c = "-", c[1:]
        number = c[0]
        unit = str(c[1]) if len(c) > 1 else None
        value = (sign + str(number), unit, self._span(number), self._span(c[1]) if unit else None)
        return ("within", value, self._span(meta))

    @v_args(meta=True)
    def strategy_clause(self, meta: Any, c: list[Token]) -> tuple[str, Any, A.Span]:
        return ("strategy", str(c[0]).lower(), self._span(c[0]))

    @v_args(meta=True)
    def returns(self, meta: Any, c: list[Any]) -> tuple[str, Any, A.Span]:
        fields = tuple(f for f in c[1:] if f is not None)
        return ("returns", A.Return(str(c[0]), fields, span=self._span(c[0])), self._span(meta))

    @v_args(meta=True)
    def on_timeout(self, meta: Any, c: list[Any]) -> tuple[str, Any, A.Span]:
        fields = tuple(f for f in c[1:] if f is not None)
        return ("timeout", A.Return(str(c[0]), fields, span=self._span(c[0])), self._span(meta))

    @v_args(meta=True)
    def limit(self, meta: Any, c: list[Token]) -> tuple[str, Any, A.Span]:
        policy = "-".join(str(c[1]).lower().split()) if len(c) > 1 else "drop-oldest"
        if int(c[0]) < 1:
            raise _Err("LIMIT needs at least 1 partial match", c[0])
        return ("limit", A.Limit(int(c[0]), policy, span=self._span(c[0])), self._span(meta))

    @v_args(meta=True)
    def consume(self, meta: Any, c: list[Token]) -> tuple[str, Any, A.Span]:
        if len(c) == 1 and c[0].type == "ALL_KW":
            return ("consume", ("*",), self._span(meta))
        return ("consume", tuple((str(t), self._span(t)) for t in c), self._span(meta))

    @v_args(meta=True)
    def conflict_decl(self, meta: Any, c: list[Token]) -> dict[str, Any]:
        return {
            "conflict": str(c[0]),
            "members": tuple((str(t), self._span(t)) for t in c[1:]),
            "span": self._span(c[0]),
        }

    def named_field(self, c: list[Any]) -> Any:
        if str(c[1]) not in ("=", "=="):
            raise _Err(f"expected '=' after field name, got {str(c[1])!r}", c[1])
        return A.ReturnField(str(c[0]), c[2])

    def as_field(self, c: list[Any]) -> A.ReturnField:
        return A.ReturnField(str(c[1]), c[0])

    def bare_field(self, c: list[Any]) -> A.ReturnField:
        expr = c[0]
        if isinstance(expr, A.Attr):
            return A.ReturnField(expr.field, expr)
        if isinstance(expr, A.Agg):
            return A.ReturnField(f"{expr.func}_{expr.var}" + (f"_{expr.field}" if expr.field else ""), expr)
        raise _Err("a computed RETURN field needs a name: write name = expression", _first_token_span(expr))

    @v_args(meta=True)
    def pattern_decl(self, meta: Any, c: list[Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"span": self._span(meta)}
        rest = c
        if isinstance(c[0], Token) and c[0].type == "NAME":
            out["name"] = (str(c[0]), self._span(c[0]))
            rest = c[1:]
        out["structure"] = rest[0]
        for kind, value, span in rest[1:]:
            if kind in out:
                label = {"returns": "RETURN", "timeout": "ON TIMEOUT"}.get(kind, kind.upper())
                raise _Err(f"duplicate {label} clause", span)
            out[kind] = (value, span)
        return out

    def start(self, c: list[Any]) -> list[dict[str, Any]]:
        return [d for d in c if isinstance(d, dict)]

    # ---- expressions
    def number(self, c: list[Token]) -> A.Num:
        text = str(c[0])
        value: int | float = int(text) if text.isdigit() else float(text)
        return A.Num(value, span=self._span(c[0]))

    def string(self, c: list[Token]) -> A.Str:
        return A.Str(str(c[0])[1:-1], span=self._span(c[0]))

    def attr(self, c: list[Token]) -> A.Attr:
        return A.Attr(str(c[0]), str(c[1]), span=self._span(c[0]))

    def kattr(self, c: list[Any]) -> A.Attr:
        return A.Attr(str(c[0]), str(c[2]), index=c[1], span=self._span(c[0]))

    def idx_const(self, c: list[Token]) -> A.Index:
        k = int(c[0])
        if k < 1:
            raise _Err("Kleene indices start at 1", c[0])
        return A.Index(A.IDX_CONST, k)

    def idx_name(self, c: list[Token]) -> A.Index:
        name = str(c[0])
        if name == "i":
            return A.Index(A.IDX_CUR)
        if name.lower() == "last":
            return A.Index(A.IDX_LAST)
        raise _Err(f"unknown Kleene index {name!r} (use i, i-1, last or a number)", c[0])

    def idx_prev(self, c: list[Token]) -> A.Index:
        if str(c[0]) != "i" or str(c[2]) != "1":
            raise _Err("the only relative Kleene index is i-1", c[0])
        return A.Index(A.IDX_PREV)

    def agg(self, c: list[Token]) -> A.Agg:
        func = str(c[0]).lower()
        if func not in A.AGG_FUNCS:
            raise _Err(f"unknown aggregate {str(c[0])!r} (use {', '.join(A.AGG_FUNCS)})", c[0])
        field = str(c[2]) if len(c) > 2 else None
        if field is None and func != "count":
            raise _Err(f"{func}() needs a field: {func}({c[1]}[].field)", c[0])
        return A.Agg(func, str(c[1]), field, span=self._span(c[0]))

    def prefix_agg(self, c: list[Token]) -> A.Agg:
        func = str(c[0]).lower()
        if func not in A.AGG_FUNCS:
            raise _Err(f"unknown aggregate {str(c[0])!r} (use {', '.join(A.AGG_FUNCS)})", c[0])
        if str(c[2]) != "i" or str(c[4]) != "1":
            raise _Err("a prefix aggregate reads v[..i-1]", c[2])
        return A.Agg(func, str(c[1]), str(c[5]), upto_prev=True, span=self._span(c[0]))

    def partition(self, c: list[Token]) -> tuple[str, tuple[str, ...], A.Span]:
        return ("partition", tuple(str(t) for t in c), self._span(c[0]))

    def strategy_item(self, c: list[Token]) -> tuple[str, str, A.Span]:
        return ("strategy", str(c[0]).lower(), self._span(c[0]))

    def neg(self, c: list[Any]) -> A.Expr:
        operand = c[1]
        if isinstance(operand, A.Num):
            return A.Num(-operand.value, span=self._span(c[0]))
        return A.Neg(operand, span=self._span(c[0]))

    def arith(self, c: list[Any]) -> Any:
        expr = c[0]
        for i in range(1, len(c), 2):
            expr = A.BinOp(str(c[i]), expr, c[i + 1], span=self._span(c[i]))
        return expr

    def comparison(self, c: list[Any]) -> Any:
        # a < b < c  ==  a < b AND b < c (OpenCEP writes chains)
        parts = []
        for i in range(1, len(c), 2):
            op = _COMPOP_NORMAL.get(str(c[i]), str(c[i]))
            parts.append(A.Compare(op, c[i - 1], c[i + 1], span=self._span(c[i])))
        return parts[0] if len(parts) == 1 else A.BoolOp("and", tuple(parts), span=parts[0].span)

    def and_expr(self, c: list[Any]) -> Any:
        operands = tuple(x for x in c if not (isinstance(x, Token) and x.type == "AND_KW"))
        return A.BoolOp("and", operands, span=self._span(c[1]))

    def or_expr(self, c: list[Any]) -> Any:
        operands = tuple(x for x in c if not (isinstance(x, Token) and x.type == "OR_KW"))
        return A.BoolOp("or", operands, span=self._span(c[1]))

    def not_expr(self, c: list[Any]) -> A.Not:
        return A.Not(c[1], span=self._span(c[0]))


class _Err(Exception):
    """Raised inside the transformer; converted to PatternSyntaxError with the source line."""

    def __init__(self, message: str, where: Any) -> None:
        super().__init__(message)
        self.message = message
        self.where = where


def _first_token_span(expr: Any) -> Any:
    from petricep.lang.check import _span_of

    return _span_of(expr)


def _line(text: str, line: int) -> str | None:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else None


def syntax_error(text: str, file: str, message: str, line: int, column: int) -> PatternSyntaxError:
    return PatternSyntaxError(message, file, line, column, _line(text, line))


def parse_tree(parser: lark.Lark, text: str, file: str, names: dict[str, str]) -> lark.Tree:  # type: ignore[type-arg]
    """Run a lark parser; its errors become PatternSyntaxError with a caret (``names``: how
    to call each terminal in "expected ..."). Shared by both front ends."""
    try:
        return parser.parse(text)
    except lark.exceptions.UnexpectedCharacters as e:
        raise syntax_error(text, file, f"unexpected character {text[e.pos_in_stream or 0]!r}", e.line, e.column) from None
    except lark.exceptions.UnexpectedToken as e:
        tok = e.token
        if tok.type == "$END":
            lines = text.splitlines() or [""]
            line, col = len(lines), len(lines[-1]) + 1
            got = "end of file"
        else:
            line, col = tok.line or 1, tok.column or 1
            got = repr(str(tok))
        expected = sorted({names.get(t, t.lower()) for t in e.expected if not t.startswith("__")})
        hint = f"; expected {', '.join(expected[:8])}" if expected else ""
        raise syntax_error(text, file, f"unexpected {got}{hint}", line, col) from None
    except lark.exceptions.UnexpectedEOF as e:  # pragma: no cover - LALR reports UnexpectedToken
        lines = text.splitlines() or [""]
        raise syntax_error(text, file, f"unexpected end of file; expected {e.expected}", len(lines), 1) from None


def transform_tree(builder: Transformer, tree: lark.Tree, text: str, file: str) -> Any:  # type: ignore[type-arg]
    """Apply an AST builder; an ``_Err`` it raises becomes PatternSyntaxError with a caret."""
    try:
        return builder.transform(tree)
    except lark.exceptions.VisitError as e:
        err = e.orig_exc
        if isinstance(err, _Err):
            where = err.where
            if isinstance(where, Token):
                line, col = where.line or 1, where.column or 1
            elif isinstance(where, A.Span):
                line, col = where.line, where.column
            else:
                line, col = 1, 1
            raise syntax_error(text, file, err.message, line, col) from None
        raise


def parse_raw(text: str, file: str = "<pattern>") -> list[dict[str, Any]]:
    """Parse text into per-pattern clause dicts (used by :func:`petricep.lang.check.build`)."""
    tree = parse_tree(_lark(), text, file, _TOKEN_NAMES)
    return transform_tree(_Builder(file), tree, text, file)  # type: ignore[no-any-return]


def parse_text(text: str, file: str = "<pattern>", default_name: str | None = None) -> A.PatternFile:
    """Parse and check pattern text; raises PatternError with a caret on any problem."""
    from petricep.lang.check import build

    return build(parse_raw(text, file), text, file, default_name)


LANGS = ("pcep", "sql")


def lang_of(path: str | Path, lang: str | None = None) -> str:
    """The front end for a file: ``lang`` when given, else by extension (``.sql``: SQL)."""
    if lang is not None:
        if lang not in LANGS:
            from petricep.errors import ConfigError

            raise ConfigError(f"unknown pattern language {lang!r} (use {', '.join(LANGS)})")
        return lang
    return "sql" if Path(path).suffix.lower() == ".sql" else "pcep"


def parse_file(path: str | Path, lang: str | None = None) -> A.PatternFile:
    """Parse a pattern file: the pattern language, or SQL MATCH_RECOGNIZE queries (``*.sql``
    or ``lang="sql"``); both give a PatternFile, so every command accepts both."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        from petricep.errors import PatternError

        raise PatternError(f"cannot read pattern file: {e.strerror}", str(path)) from None
    if lang_of(path, lang) == "sql":
        from petricep.lang.sql import parse_sql

        return parse_sql(text, str(path), default_name=p.name.split(".")[0])
    return parse_text(text, str(path), default_name=p.name.split(".")[0])
