"""What patterns need from their input events: fields per type, and which must be numbers.

The readers use this to reject bad rows with the row and field named, instead of the
engine failing (or silently not matching) deep inside a condition.
"""

from __future__ import annotations

from collections.abc import Iterable

from petricep.lang import ast as A

BUILTIN = frozenset({"ts", "id"})


def _numeric_operands(expr: A.Expr) -> Iterable[A.Attr | A.Agg]:
    """Field reads that take part in arithmetic or in an order comparison (< <= > >=) that is
    not with a string literal: those must be numbers."""
    for e in A.walk_expr(expr):
        if isinstance(e, A.BinOp):
            for side in (e.left, e.right):
                if isinstance(side, (A.Attr, A.Agg)):
                    yield side
        elif isinstance(e, A.Neg) and isinstance(e.operand, (A.Attr, A.Agg)):
            yield e.operand
        elif isinstance(e, A.Compare) and e.op not in ("=", "!="):
            sides = (e.left, e.right)
            if not any(isinstance(s, A.Str) for s in sides):
                for side in sides:
                    if isinstance(side, (A.Attr, A.Agg)):
                        yield side
        elif isinstance(e, A.Agg) and e.func in ("sum", "avg"):
            yield e


def field_requirements(
    patterns: Iterable[A.Pattern],
) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """(required, numeric): event type -> field names, for primitive (non-composite) types."""
    patterns = list(patterns)
    composite = {r.type for p in patterns for r in A.outputs(p)}
    required: dict[str, set[str]] = {}
    numeric: dict[str, set[str]] = {}
    for p in patterns:
        refs = {r.var: r for r in A.read_refs(p.structure)}
        for r in refs.values():
            required.setdefault(r.type, set()).update(p.partition)
        for expr in A.pattern_exprs(p):
            for e in A.walk_expr(expr):
                if isinstance(e, (A.Attr, A.Agg)) and e.field and e.field not in BUILTIN:
                    required.setdefault(refs[A.step_var(e)].type, set()).add(e.field)
            for e in _numeric_operands(expr):
                if e.field and e.field not in BUILTIN:
                    numeric.setdefault(refs[A.step_var(e)].type, set()).add(e.field)
    req = {t: frozenset(f) for t, f in required.items() if t not in composite and f}
    num = {t: frozenset(f) for t, f in numeric.items() if t not in composite and f}
    return req, num
