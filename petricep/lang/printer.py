"""AST -> text: expressions, structures and whole patterns in pattern-file syntax.

Pure functions used for labels (diagrams, ``check``) and for round trips through the
parser: ``parse_text(pattern_text(p))`` gives ``p`` back (spans aside). With
``python=True`` an expression is printed as a Python expression instead (``==``,
``and``, ``not``, 0-based Kleene indices, aggregates as generator expressions), which
is what snakes needs for guards.
"""

from __future__ import annotations

import keyword
from collections.abc import Mapping, Sequence

from petricep.lang import ast as A

__all__ = ["conditions_text", "expr_text", "node_text", "pattern_text", "window_text"]

_OR, _AND, _NOT, _CMP, _ADD, _MUL, _NEG, _ATOM = range(1, 9)


def _prec(e: A.Expr) -> int:
    if isinstance(e, A.BoolOp):
        return _OR if e.op == "or" else _AND
    if isinstance(e, A.Not):
        return _NOT
    if isinstance(e, A.Compare):
        return _CMP
    if isinstance(e, A.BinOp):
        return _ADD if e.op in ("+", "-") else _MUL
    if isinstance(e, A.Neg) or (isinstance(e, A.Num) and e.value < 0):
        return _NEG
    return _ATOM


class _Printer:
    def __init__(self, names: Mapping[str, str] | None, python: bool) -> None:
        self.names = names or {}
        self.python = python

    def var(self, name: str) -> str:
        out = self.names.get(name, name)
        if self.python and keyword.iskeyword(out):
            out += "_"
        return out

    def field(self, obj: str, name: str) -> str:
        if self.python and keyword.iskeyword(name):
            return f"getattr({obj}, {name!r})"
        return f"{obj}.{name}"

    def wrap(self, e: A.Expr, minimum: int) -> str:
        text = self.expr(e)
        return f"({text})" if _prec(e) < minimum else text

    def index(self, var: str, index: A.Index) -> str:
        if not self.python:
            return f"{var}[{index.const if index.kind == A.IDX_CONST else index.kind}]"
        if index.kind == A.IDX_CONST:
            return f"{var}[{index.const - 1}]"
        return f"{var}[{ {A.IDX_LAST: '-1', A.IDX_CUR: 'i', A.IDX_PREV: 'i-1'}[index.kind] }]"

    def expr(self, e: A.Expr) -> str:
        py = self.python
        if isinstance(e, A.Num):
            return repr(e.value)
        if isinstance(e, A.Str):
            if py:
                return repr(e.value)
            quote = '"' if "'" in e.value and '"' not in e.value else "'"
            return quote + e.value + quote
        if isinstance(e, A.Attr):
            v = self.var(e.var)
            if e.member is not None and e.index is not None:  # g[i].b.x
                return self.field(self.field(self.index(v, e.index), e.member), e.field)
            field = "pos" if e.field == A.POS_FIELD else e.field  # (an EVENTS gap's guard, in diagrams)
            return self.field(v if e.index is None else self.index(v, e.index), field)
        if isinstance(e, A.Agg):
            return self.agg(e)
        if isinstance(e, A.BinOp):
            p = _prec(e)
            return f"{self.wrap(e.left, p)} {e.op} {self.wrap(e.right, p + 1)}"
        if isinstance(e, A.Neg):
            return f"-{self.wrap(e.operand, _ATOM)}"
        if isinstance(e, A.Compare):
            op = "==" if py and e.op == "=" else e.op
            return f"{self.wrap(e.left, _ADD)} {op} {self.wrap(e.right, _ADD)}"
        if isinstance(e, A.BoolOp):
            word = {"and": " AND ", "or": " OR "}[e.op]
            return (word.lower() if py else word).join(self.wrap(o, _NOT) for o in e.operands)
        if isinstance(e, A.Not):
            return f"{'not' if py else 'NOT'} {self.wrap(e.operand, _ATOM)}"
        raise TypeError(f"not an expression node: {e!r}")

    def agg(self, e: A.Agg) -> str:
        v = self.var(e.var)
        if not self.python:
            rng = "..i-1" if e.upto_prev else ""
            if e.member is not None:
                return f"{e.func}({v}[{rng}].{e.member}.{e.field})"
            return f"{e.func}({v}[{rng}])" if e.field is None else f"{e.func}({v}[{rng}].{e.field})"
        seq = f"{v}[:i]" if e.upto_prev else v
        if e.func == "count":
            return f"len({seq})"
        inner = self.field("_e", e.member) if e.member is not None else "_e"
        items = f"{self.field(inner, e.field or '')} for _e in {seq}"
        if e.func == "avg":
            return f"(sum({items}) / len({seq}))"
        return f"{e.func}({items})"


def expr_text(expr: A.Expr, names: Mapping[str, str] | None = None, python: bool = False) -> str:
    """``expr`` as text with only the parentheses it needs; ``names`` renames variables
    (e.g. a merged net's slot names ``#0`` back to pattern variables)."""
    return _Printer(names, python).expr(expr)


def conditions_text(conditions: Sequence[A.Expr], names: Mapping[str, str] | None = None) -> str:
    """Conjuncts joined by AND (an OR among them is parenthesized, as WHERE needs it)."""
    p = _Printer(names, False)
    return " AND ".join(p.wrap(c, _NOT) for c in conditions)


def node_text(node: A.Node, names: Mapping[str, str] | None = None) -> str:
    """A pattern structure: ``SEQ(A a, !(C c), B+ b[] UNTIL D d)``."""
    if isinstance(node, A.EventRef):
        var = (names or {}).get(node.var, node.var)
        body = f"{node.type}{node.quantifier()} {var}{'[]' if node.kleene else ''}{' ' + node.mode.upper() if node.mode else ''}"
        if node.until is not None:
            body += f" UNTIL {node.until.type} {(names or {}).get(node.until.var, node.until.var)}"
        if node.archived:
            return f"ARCHIVED {body}"
        if node.gap is not None:
            gap = node.gap.text() if node.gap.after is None else node.gap.text().replace(
                f" FROM {node.gap.after}", f" FROM {(names or {}).get(node.gap.after, node.gap.after)}"
            )
            body = f"{body} {gap}"
        return f"!({body})" if node.negated else body
    if isinstance(node, A.Group):
        mode = f" {node.mode.upper()}" if node.mode else ""
        if node.until is not None:
            mode += f" UNTIL {node.until.type} {(names or {}).get(node.until.var, node.until.var)}"
        return f"{node_text(node.seq, names)}{node.quantifier()} {(names or {}).get(node.var, node.var)}[]{mode}"
    word = "SEQ" if isinstance(node, A.Seq) else "AND" if isinstance(node, A.And) else "OR"
    return f"{word}({', '.join(node_text(c, names) for c in node.children)})"


def _number(v: int | float) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else repr(v)


def window_text(w: A.Window | None) -> str:
    """The WITHIN clause's argument as written (:meth:`Window.text`); ``""`` for none."""
    return "" if w is None else w.text()


def pattern_text(p: A.Pattern) -> str:
    """A whole pattern in pattern-file syntax (one clause per line)."""
    lines = [f"PATTERN {p.name}: {node_text(p.structure)}"]
    where = [f"[{a}]" for a in p.partition]
    if p.strategy != A.Strategy.ANY:
        where.append(p.strategy)
    if p.conditions:
        where.append(conditions_text(p.conditions))
    if where:
        lines.append("WHERE " + " AND ".join(where))
    if p.window is not None:
        lines.append(f"WITHIN {window_text(p.window)}")
    if p.consume is not None:
        lines.append("CONSUME " + ("ALL" if p.consume == ("*",) else ", ".join(p.consume)))
    if p.returns is not None:
        fields = ", ".join(f"{f.name} = {expr_text(f.expr)}" for f in p.returns.fields)
        lines.append(f"RETURN {p.returns.type}({fields})")
    if p.limit is not None:
        lines.append(f"LIMIT {p.limit.count} PARTIAL MATCHES PER KEY {p.limit.policy.replace('-', ' ').upper()}")
    if p.timeout is not None:
        fields = ", ".join(f"{f.name} = {expr_text(f.expr)}" for f in p.timeout.fields)
        lines.append(f"ON TIMEOUT RETURN {p.timeout.type}({fields})")
    return "\n".join(lines)
