"""Pattern-language text -> AST (the first of the two front ends; :mod:`petricep.lang.sql` is
the second, :mod:`petricep.lang.parser` picks one per file).

lark (LALR) does the parsing (:mod:`petricep.lang.front`); this module turns its tree into the
frozen AST of :mod:`petricep.lang.ast` and hands it to :mod:`petricep.lang.check`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from typing import Any, NamedTuple

from lark import Token, v_args
from lark.tree import Meta

from petricep.errors import PatternError, PatternUnsupportedError, raise_errors
from petricep.lang import ast as A
from petricep.lang import check
from petricep.lang import raw as R
from petricep.lang.front import (
    TOKEN_NAMES,
    BuildError,
    SpanTransformer,
    check_text_limits,
    error_at,
    grammar,
    number_value,
    parse_tree_all,
    terminal_words,
    transform_each,
)

_COMPOP_NORMAL = {"==": "=", "<>": "!="}

class _Clause(NamedTuple):
    """One clause while a declaration is assembled: ``kind`` is a RawPattern field."""

    kind: str
    value: Any
    span: A.Span


class _Times(NamedTuple):
    """A repeated group's repetition while its rule is assembled: (least, most)."""

    bounds: tuple[int, int | None]


class _Builder(SpanTransformer):
    """lark tree -> AST. Partition/strategy items stay in WHERE as markers for check."""

    # ---- structure
    @v_args(meta=True)
    def ref(self, meta: Meta, c: list[Any]) -> A.EventRef:
        gap = c[2] if len(c) > 2 else None
        return A.EventRef(str(c[0]), str(c[1]), span=self._span(c[0]), gap=gap)

    @v_args(meta=True)
    def gap(self, meta: Meta, c: list[Token]) -> A.Gap:
        """``AFTER lo TO hi [unit] [FROM u]``; the bounds' order and unit are checked here,
        where the caret can point at them; which variable it follows, in check."""
        low, high = number_value(str(c[0])), number_value(str(c[1]))
        rest = c[2:]
        after: str | None = None
        if len(rest) >= 2 and rest[-2].type == "FROM_KW":
            after, rest = str(rest[-1]), rest[:-2]
        unit: str | None = None
        if rest:
            unit = str(rest[0]).lower()
            if unit in ("events", "event"):  # positions, as WITHIN n EVENTS (lang/gaps.py: a count window)
                unit = A.GAP_EVENTS
                if not (float(low).is_integer() and float(high).is_integer()):
                    raise BuildError(f"a gap in EVENTS counts events: its bounds are whole numbers, not {c[0]} and {c[1]}", c[0])
                low, high = int(low), int(high)
            elif unit not in A.DURATION_UNITS:
                raise BuildError(f"unknown gap unit {str(rest[0])!r} (use ms, s, min, h, d, or none for timestamp units)", rest[0])
        if high < low:
            raise BuildError(f"a gap's upper bound {c[1]} is below its lower bound {c[0]}", c[1])
        return A.Gap(low, high, unit, after, span=self._span(meta))

    @v_args(meta=True)
    def kleene(self, meta: Meta, c: list[Any]) -> A.EventRef:
        mode, until, gap = _mode_gap(c[3:])  # a gap on a list: the chain (lang/gaps.py)
        return A.EventRef(str(c[0]), str(c[2]), kleene=True, span=self._span(c[0]), gap=gap, mode=mode, until=until)

    @v_args(meta=True)
    def bounded(self, meta: Meta, c: list[Any]) -> A.EventRef:
        """``T{n,m} v[]``: a Kleene variable with bounds (checked in ``_bounds``, where the
        caret can point at them: the upper bound not below the lower; ``{0,m}``: no event or
        up to m, the variable left out where there is none)."""
        least, most, low = c[1]
        mode, until, gap = _mode_gap(c[3:])
        ref = A.EventRef(str(c[0]), str(c[2]), kleene=True, span=self._span(c[0]), gap=gap, least=least, most=most)
        return replace(ref, mode=mode, until=until)

    @v_args(meta=True)
    def star(self, meta: Meta, c: list[Any]) -> A.EventRef:
        """``T* v[]``: a list of no event or more (``T{0,} v[]``; with none, ``v`` is left out
        of the match, as a skipped optional step)."""
        if str(c[1]) != "*":
            raise BuildError(f"a list's repetition is +, * or {{n,m}}, not {str(c[1])!r}", c[1])
        mode, until, gap = _mode_gap(c[3:])
        ref = A.EventRef(str(c[0]), str(c[2]), kleene=True, span=self._span(c[0]), gap=gap, least=0)
        return replace(ref, mode=mode, until=until)

    @v_args(meta=True)
    def until(self, meta: Meta, c: list[Token]) -> A.EventRef:
        """``UNTIL U u``: a Kleene list's stop event (its span: the type, where the caret goes)."""
        return A.EventRef(str(c[0]), str(c[1]), span=self._span(c[0]))

    def bounds_exact(self, c: list[Token]) -> tuple[int, int | None, Token]:
        if int(str(c[0])) == 0:
            raise BuildError("a repetition {0} binds nothing: leave the step out", c[0])
        return self._bounds(c[0], c[0])

    def bounds_range(self, c: list[Token]) -> tuple[int, int | None, Token]:
        return self._bounds(c[0], c[1] if len(c) > 1 else None)

    def _bounds(self, low: Token, high: Token | None) -> tuple[int, int | None, Token]:
        """(least, most, the lower bound's token): a lower bound 0 is a group's only (a
        single step's is refused by :meth:`bounded`, with the caret there)."""
        least = int(str(low))
        if least > A.MAX_REPEAT:
            raise BuildError(f"a repetition's lower bound is at most {A.MAX_REPEAT} (each count is a place of the net)", low)
        if high is None:
            return least, None, low
        most = int(str(high))
        if most > A.MAX_REPEAT:
            raise BuildError(
                f"a repetition's upper bound is at most {A.MAX_REPEAT} (each count is a place of the net): "
                f"write {{{least},}} and bound count(v[]) in WHERE",
                high,
            )
        if most < least:
            raise BuildError(f"a repetition's upper bound {most} is below its lower bound {least}", high)
        if most == 0:
            raise BuildError("a repetition {0,0} binds nothing: leave the step out", high)
        return least, most, low

    @v_args(meta=True)
    def optional(self, meta: Meta, c: list[Any]) -> A.EventRef:
        gap = c[3] if len(c) > 3 else None  # binds where the step is present (lang/gaps.py)
        return A.EventRef(str(c[0]), str(c[2]), span=self._span(c[0]), gap=gap, optional=True)

    @v_args(meta=True)
    def archived_ref(self, meta: Meta, c: list[Token]) -> A.EventRef:
        return A.EventRef(str(c[0]), str(c[1]), archived=True, span=self._span(c[0]))

    @v_args(meta=True)
    def negation(self, meta: Meta, c: list[Any]) -> A.EventRef:
        gap = c[3] if len(c) > 3 else None  # refused by check: a negation binds no time
        return A.EventRef(str(c[1]), str(c[2]), negated=True, span=self._span(c[0]), gap=gap)

    @v_args(meta=True)
    def seq(self, meta: Meta, c: list[Any]) -> A.Seq:
        return A.Seq(tuple(c[1:]), span=self._span(c[0]))

    @v_args(meta=True)
    def group(self, meta: Meta, c: list[Any]) -> A.Group:
        """``SEQ(...)+ g[]``: the steps, then ``+``, the group's name (a gap on the whole group
        is refused: a gap goes on a step)."""
        if isinstance(c[-1], A.Gap):
            raise error_at(
                "a per-step gap goes on a step, not on a repeated group: write it on the group's first step",
                c[-1].span,
                PatternUnsupportedError,
            )
        at = next(i for i, x in enumerate(c) if isinstance(x, _Times))
        least, most = c[at].bounds
        seq = A.Seq(tuple(c[1:at]), span=self._span(c[0]))
        stop = next((x for x in c[at + 2 :] if isinstance(x, A.EventRef)), None)  # UNTIL U u
        mode = str(c[at + 2]).lower() if len(c) > at + 2 and isinstance(c[at + 2], Token) else ""  # GREEDY / RELUCTANT
        return A.Group(seq, str(c[at + 1]), span=self._span(c[at + 1]), least=least, most=most, mode=mode, until=stop)

    def group_times(self, c: list[Any]) -> _Times:
        """A group's repetition: ``+``, ``*``, ``?`` or bounds (a group, unlike a single step,
        may have none: ``*`` / ``?`` / ``{0,m}``, the empty list)."""
        x = c[0]
        if isinstance(x, tuple):
            return _Times(x[:2])
        if x.type == "MULOP" and str(x) != "*":
            raise BuildError(f"a repeated group's repetition is +, *, ? or {{n,m}}, not {str(x)!r}", x)
        return _Times({"PLUS": (1, None), "MULOP": (0, None), "QMARK": (0, 1)}[x.type])

    @v_args(meta=True)
    def and_(self, meta: Meta, c: list[Any]) -> A.And:
        return A.And(tuple(c[1:]), span=self._span(c[0]))

    @v_args(meta=True)
    def or_(self, meta: Meta, c: list[Any]) -> A.Or:
        return A.Or(tuple(c[1:]), span=self._span(c[0]))

    # ---- clauses (returned as _Clause values, assembled in pattern_decl)
    @v_args(meta=True)
    def where(self, meta: Meta, c: list[Any]) -> _Clause:
        return _Clause("where", c[0], self._span(meta))

    @v_args(meta=True)
    def within(self, meta: Meta, c: list[Token]) -> _Clause:
        sign = ""
        if c[0].type == "MINUS":
            sign, c = "-", c[1:]
        number = c[0]
        unit = str(c[1]) if len(c) > 1 else None
        value = R.WithinText(sign + str(number), unit, self._span(number), self._span(c[1]) if unit else None)
        return _Clause("within", value, self._span(meta))

    @v_args(meta=True)
    def strategy_clause(self, meta: Meta, c: list[Token]) -> _Clause:
        span = self._span(c[0])
        return _Clause("strategy", R.Named(str(c[0]).lower(), span), span)

    @v_args(meta=True)
    def returns(self, meta: Meta, c: list[Any]) -> _Clause:
        fields = tuple(f for f in c[1:] if f is not None)
        return _Clause("returns", A.Return(str(c[0]), fields, span=self._span(c[0])), self._span(meta))

    @v_args(meta=True)
    def on_timeout(self, meta: Meta, c: list[Any]) -> _Clause:
        fields = tuple(f for f in c[1:] if f is not None)
        return _Clause("timeout", A.Return(str(c[0]), fields, span=self._span(c[0])), self._span(meta))

    @v_args(meta=True)
    def limit(self, meta: Meta, c: list[Token]) -> _Clause:
        policy = "-".join(str(c[1]).lower().split()) if len(c) > 1 else "drop-oldest"
        if int(c[0]) < 1:
            raise BuildError("LIMIT needs at least 1 partial match", c[0])
        if int(c[0]) > 2**63 - 1:  # (the kernel counts in 64 bits)
            raise BuildError(f"LIMIT takes at most {2**63 - 1} partial matches", c[0])
        return _Clause("limit", A.Limit(int(c[0]), policy, span=self._span(c[0])), self._span(meta))

    @v_args(meta=True)
    def consume(self, meta: Meta, c: list[Token]) -> _Clause:
        if len(c) == 1 and c[0].type == "ALL_KW":
            return _Clause("consume_all", True, self._span(meta))
        return _Clause("consume", tuple(R.Named(str(t), self._span(t)) for t in c), self._span(meta))

    @v_args(meta=True)
    def conflict_decl(self, meta: Meta, c: list[Token]) -> R.RawConflict:
        members = tuple(R.Named(str(t), self._span(t)) for t in c[1:])
        return R.RawConflict(str(c[0]), members, self._span(c[0]))

    def named_field(self, c: list[Any]) -> Any:
        if str(c[1]) not in ("=", "=="):
            raise BuildError(f"expected '=' after field name, got {str(c[1])!r}", c[1])
        return A.ReturnField(str(c[0]), c[2])

    def as_field(self, c: list[Any]) -> A.ReturnField:
        return A.ReturnField(str(c[1]), c[0])

    def bare_field(self, c: list[Any]) -> A.ReturnField:
        expr = c[0]
        if isinstance(expr, A.Attr):
            return A.ReturnField(expr.field, expr)
        if isinstance(expr, A.Agg):
            return A.ReturnField(f"{expr.func}_{expr.var}" + (f"_{expr.field}" if expr.field else ""), expr)
        raise BuildError("a computed RETURN field needs a name: write name = expression", A.leftmost_span(expr))

    @v_args(meta=True)
    def pattern_decl(self, meta: Meta, c: list[Any]) -> R.RawPattern:
        name: R.Named | None = None
        rest = c
        if isinstance(c[0], Token) and c[0].type == "NAME":
            name, rest = R.Named(str(c[0]), self._span(c[0])), c[1:]
        clauses: dict[str, Any] = {}
        for clause in rest[1:]:
            kind = "consume" if clause.kind == "consume_all" else clause.kind
            if kind in clauses:
                raise BuildError(f"duplicate {R.CLAUSE_LABELS[kind]} clause", clause.span)
            clauses[kind] = clause
        consume = clauses.pop("consume", None)
        if consume is not None:
            clauses[consume.kind] = consume
        values = {kind: clause.value for kind, clause in clauses.items()}
        return R.RawPattern(self._span(meta), rest[0], name, **values)

    def start(self, c: list[Any]) -> list[R.RawDecl]:
        return [d for d in c if isinstance(d, (R.RawPattern, R.RawConflict))]

    # ---- expressions
    def number(self, c: list[Token]) -> A.Num:
        return A.Num(number_value(str(c[0])), span=self._span(c[0]))

    def string(self, c: list[Token]) -> A.Str:
        return A.Str(str(c[0])[1:-1], span=self._span(c[0]))

    def attr(self, c: list[Token]) -> A.Attr:
        return A.Attr(str(c[0]), str(c[1]), span=self._span(c[0]))

    def kattr(self, c: list[Any]) -> A.Attr:
        return A.Attr(str(c[0]), str(c[2]), index=c[1], span=self._span(c[0]))

    def gattr(self, c: list[Any]) -> A.Attr:
        return A.Attr(str(c[0]), str(c[3]), index=c[1], span=self._span(c[0]), member=str(c[2]))

    def gagg(self, c: list[Token]) -> A.Agg:
        func = str(c[0]).lower()
        if func not in A.AGG_FUNCS:
            raise BuildError(f"unknown aggregate {str(c[0])!r} (use {', '.join(A.AGG_FUNCS)})", c[0])
        return A.Agg(func, str(c[1]), str(c[3]), span=self._span(c[0]), member=str(c[2]))

    def idx_const(self, c: list[Token]) -> A.Index:
        k = int(c[0])
        if k < 1:
            raise BuildError("Kleene indices start at 1", c[0])
        return A.Index(A.IDX_CONST, k)

    def idx_name(self, c: list[Token]) -> A.Index:
        name = str(c[0])
        if name == "i":
            return A.Index(A.IDX_CUR)
        if name.lower() == "last":
            return A.Index(A.IDX_LAST)
        raise BuildError(f"unknown Kleene index {name!r} (use i, i-1, last or a number)", c[0])

    def idx_prev(self, c: list[Token]) -> A.Index:
        if str(c[0]) != "i" or str(c[2]) != "1":
            raise BuildError("the only relative Kleene index is i-1", c[0])
        return A.Index(A.IDX_PREV)

    def agg(self, c: list[Token]) -> A.Agg:
        func = str(c[0]).lower()
        if func not in A.AGG_FUNCS:
            raise BuildError(f"unknown aggregate {str(c[0])!r} (use {', '.join(A.AGG_FUNCS)})", c[0])
        field = str(c[2]) if len(c) > 2 else None
        if field is None and func != "count":
            raise BuildError(f"{func}() needs a field: {func}({c[1]}[].field)", c[0])
        return A.Agg(func, str(c[1]), field, span=self._span(c[0]))

    def prefix_agg(self, c: list[Token]) -> A.Agg:
        func = str(c[0]).lower()
        if func not in A.AGG_FUNCS:
            raise BuildError(f"unknown aggregate {str(c[0])!r} (use {', '.join(A.AGG_FUNCS)})", c[0])
        if str(c[2]) != "i" or str(c[4]) != "1":
            raise BuildError("a prefix aggregate reads v[..i-1]", c[2])
        return A.Agg(func, str(c[1]), str(c[5]), upto_prev=True, span=self._span(c[0]))

    def partition(self, c: list[Token]) -> R.Marker:
        return R.Marker("partition", tuple(str(t) for t in c), self._span(c[0]))

    def strategy_item(self, c: list[Token]) -> R.Marker:
        return R.Marker("strategy", (str(c[0]).lower(),), self._span(c[0]))

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


# ----------------------------------------------------------------------------- parsing

_WORDS = terminal_words(TOKEN_NAMES)
# what the grammar ignores or quotes: comments and strings (skipped by the limit scan)
_SKIP = re.compile(r"#[^\n]*|//[^\n]*|'[^'\n]*'|\"[^\"\n]*\"")
def _mode_gap(rest: list[Any]) -> tuple[str, A.EventRef | None, A.Gap | None]:
    """What follows a Kleene variable: GREEDY or RELUCTANT (lower case, "" for neither), a
    stop event (``UNTIL U u``), a gap."""
    mode = ""
    if rest and isinstance(rest[0], Token) and rest[0].type == "REPEAT_MODE":
        mode, rest = str(rest[0]).lower(), rest[1:]
    until = None
    if rest and isinstance(rest[0], A.EventRef):
        until, rest = rest[0], rest[1:]
    return mode, until, (rest[0] if rest else None)


_HYPHENATED = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)+-?")
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_STRUCTURE = ("SEQ", "AND", "OR", "NOT")
_RETURNED = re.compile(r"RETURN\s+$", re.IGNORECASE)  # RETURN T(...) names a type, not a function


def _hint(err: Exception, text: str) -> tuple[str, int] | None:
    """A message in user words for a known mistake at the error position: a misspelt
    strategy (``skip-till-next``), a call of a function the language does not have."""
    token = getattr(err, "token", None)
    pos = token.start_pos if token is not None else getattr(err, "pos_in_stream", None)
    if pos is None:
        return None
    start = pos
    while start > 0 and (text[start - 1].isalpha() or text[start - 1] == "-"):
        start -= 1
    m = _HYPHENATED.match(text, start)
    if m is not None and m.end() >= pos:
        return _strategy_hint(m.group().rstrip("-")), m.start()
    line_start = text.rfind("\n", 0, pos) + 1
    for call in _CALL.finditer(text, line_start, pos + 1):
        name = call.group(1)
        inside = ")" not in text[call.end() : pos]
        returned = _RETURNED.search(text, line_start, call.start()) is not None
        if inside and not returned and name.lower() not in A.AGG_FUNCS and name.upper() not in _STRUCTURE:
            return (
                f"unknown function {name!r}: the pattern language knows {', '.join(A.AGG_FUNCS)} over a "
                "Kleene variable (sum(v[].x)); an earlier event is read through its variable (a.x, v[i-1].x)",
                call.start(),
            )
    return None


def _strategy_hint(word: str) -> str:
    close = difflib.get_close_matches(word.lower(), A.STRATEGIES, n=1, cutoff=0.5)
    prefix = [s for s in A.STRATEGIES if s.startswith(word.lower())]
    guess = prefix[0] if prefix else (close[0] if close else None)
    known = ", ".join(A.STRATEGIES)
    if guess is None:
        return f"unknown strategy {word!r} (the strategies are {known})"
    return f"unknown strategy {word!r}: did you mean {guess}? (the strategies are {known})"


#: where a declaration may begin, for going on after a syntax error: PATTERN (EVENT) or
#: CONFLICT first on a line (elsewhere the word may be a name: ``a.event``, ``Event e``)
_DECLARATION = re.compile(r"^[ \t]*((?:PATTERN|EVENT|CONFLICT)\b)", re.IGNORECASE | re.MULTILINE)


def parse_raw_all(text: str, file: str = "<pattern>") -> tuple[list[R.RawDecl], list[PatternError]]:
    """Parse text into one raw declaration per pattern or conflict group, not yet checked,
    going on after an error at the next declaration: the declarations that parsed and the
    errors of those that did not, in file order."""
    check_text_limits(text, file, _SKIP)
    boundaries = [(m.start(1), m.start(1)) for m in _DECLARATION.finditer(text)]
    trees, errors = parse_tree_all(grammar("pattern.lark"), text, file, _WORDS, boundaries, _hint)
    for tree in trees:
        check.check_tree_depth(tree, text, file)
    decls, build_errors = transform_each(_Builder(file, text), trees, text, file)
    return decls, sorted([*errors, *build_errors], key=_where)


def _where(e: PatternError) -> tuple[int, int]:
    return e.line or 0, e.column or 0


def parse_raw(text: str, file: str = "<pattern>") -> list[R.RawDecl]:
    """Parse text into one raw declaration per pattern or conflict group, not yet checked;
    raises every syntax error of the text (:func:`~petricep.errors.raise_errors`)."""
    decls, errors = parse_raw_all(text, file)
    raise_errors(errors)
    return decls


def parse_text(text: str, file: str = "<pattern>", default_name: str | None = None) -> A.PatternFile:
    """Parse and check pattern text; raises PatternError with a caret on any problem (every
    problem of the text: a PatternErrors when there are several)."""
    decls, errors = parse_raw_all(text, file)
    return check.build(decls, text, file, default_name, errors)
