"""Semantic checks: parsed clauses -> validated, normalised :class:`Pattern` values.

Every rule of docs/SEMANTICS.md that can be decided from the text alone is enforced
here, so the compiler only ever sees meaningful patterns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from petricep.errors import PatternSemanticError
from petricep.lang import ast as A

_COUNT_UNITS = ("events", "event")


class _Ctx:
    def __init__(self, text: str, file: str) -> None:
        self.lines = text.splitlines()
        self.file = file

    def error(self, message: str, span: A.Span | None) -> PatternSemanticError:
        line = span.line if span else None
        col = span.column if span else None
        src = self.lines[line - 1] if line and 0 < line <= len(self.lines) else None
        return PatternSemanticError(message, self.file, line, col, src)


def flatten_seq(node: A.Node) -> A.Node:
    """SEQ is associative: SEQ(a, SEQ(b, c)) -> SEQ(a, b, c). Single-child operators collapse."""
    if isinstance(node, A.EventRef):
        return node
    children = tuple(flatten_seq(c) for c in node.children)
    if isinstance(node, A.Seq):
        flat: list[A.Node] = []
        for c in children:
            flat.extend(c.children if isinstance(c, A.Seq) else (c,))
        children = tuple(flat)
    if len(children) == 1 and not (isinstance(children[0], A.EventRef) and children[0].negated):
        return children[0]
    return type(node)(children, span=node.span)


def _check_structure(node: A.Node, ctx: _Ctx, parent: A.Node | None) -> None:
    if isinstance(node, A.EventRef):
        if node.negated and not isinstance(parent, A.Seq):
            raise ctx.error(f"negation !({node.type} {node.var}) must be an element of a SEQ", node.span)
        return
    if isinstance(node, A.Seq) and all(isinstance(c, A.EventRef) and c.negated for c in node.children):
        raise ctx.error("a SEQ needs at least one positive (non-negated) event", node.span)
    for child in node.children:
        _check_structure(child, ctx, node)


def _conjuncts(expr: A.Expr) -> list[A.Expr]:
    if isinstance(expr, A.BoolOp) and expr.op == "and":
        out: list[A.Expr] = []
        for e in expr.operands:
            out.extend(_conjuncts(e))
        return out
    return [expr]


def _markers(expr: Any) -> Iterable[tuple[str, Any, A.Span]]:
    """Partition/strategy items hidden anywhere in an expression tree."""
    if isinstance(expr, tuple):
        yield expr
        return
    for child in A.expr_children(expr):
        yield from _markers(child)


def _check_expr(expr: A.Expr, refs: Mapping[str, A.EventRef], ctx: _Ctx, iteration_ok: bool) -> None:
    for e in A.walk_expr(expr):
        if isinstance(e, A.Attr):
            ref = refs.get(e.var)
            if ref is None:
                raise ctx.error(f"unknown variable {e.var!r}", e.span)
            if e.index is not None and not ref.kleene:
                raise ctx.error(f"{e.var!r} is not a Kleene variable: write {e.var}.{e.field}", e.span)
            if e.index is None and ref.kleene:
                raise ctx.error(
                    f"{e.var!r} is a Kleene variable: use an index ({e.var}[i].{e.field}, {e.var}[1].{e.field}, "
                    f"{e.var}[last].{e.field}) or an aggregate",
                    e.span,
                )
            if e.index is not None and e.index.kind in (A.IDX_CUR, A.IDX_PREV) and not iteration_ok:
                raise ctx.error(f"{e.var}[{e.index.kind}] is only meaningful in WHERE", e.span)
        elif isinstance(e, A.Agg):
            ref = refs.get(e.var)
            if ref is None:
                raise ctx.error(f"unknown variable {e.var!r}", e.span)
            if not ref.kleene:
                raise ctx.error(f"{e.func}() needs a Kleene variable; {e.var!r} is not one", e.span)
            if e.upto_prev and not iteration_ok:
                raise ctx.error(f"{e.func}({e.var}[..i-1]) is only meaningful in WHERE", e.span)


def _check_conjunct(expr: A.Expr, refs: Mapping[str, A.EventRef], ctx: _Ctx) -> None:
    _check_expr(expr, refs, ctx, iteration_ok=True)
    negs = sorted(v for v in A.vars_of(expr) if refs[v].negated)
    if len(negs) > 1:
        raise ctx.error(f"a condition may mention one negated variable, this one mentions {', '.join(negs)}", _span_of(expr))
    iter_vars = set()
    for e in A.walk_expr(expr):
        if isinstance(e, A.Attr) and e.index is not None and e.index.kind in (A.IDX_CUR, A.IDX_PREV):
            iter_vars.add(e.var)
        if isinstance(e, A.Agg) and e.upto_prev:
            iter_vars.add(e.var)
    if len(iter_vars) > 1:
        raise ctx.error(f"a condition may iterate over one Kleene variable, this one uses {', '.join(sorted(iter_vars))}", _span_of(expr))
    if iter_vars:
        (v,) = iter_vars
        if negs:
            raise ctx.error(f"a negation condition cannot iterate over {v}[i]", _span_of(expr))
        for e in A.walk_expr(expr):
            whole = (isinstance(e, A.Attr) and e.var == v and e.index is not None and e.index.kind not in (A.IDX_CUR, A.IDX_PREV)) or (
                isinstance(e, A.Agg) and e.var == v and not e.upto_prev
            )
            if whole:
                raise ctx.error(f"an iteration condition over {v}[i] cannot also read the whole list of {v}", _span_of(e))
    if negs and any(refs[v].kleene for v in A.vars_of(expr)):
        pass  # negation conditions may read closed Kleene lists (v[1], v[last], aggregates)


def _span_of(expr: Any) -> A.Span | None:
    """The leftmost position in an expression (where a reader starts looking)."""
    spans = [s for e in A.walk_expr(expr) if (s := getattr(e, "span", None)) is not None and s.line]
    return min(spans, key=lambda s: (s.line, s.column)) if spans else None


def _window(value: tuple[str, str | None, A.Span, A.Span | None], ctx: _Ctx) -> A.Window:
    text, unit, num_span, unit_span = value
    number: int | float = float(text) if any(ch in text for ch in ".eE") else int(text)
    if number <= 0:
        raise ctx.error(f"window must be positive, got {text}", num_span)
    if unit is None:
        return A.Window(A.WIN_TIME, number, None, span=num_span)
    u = unit.lower()
    if u in _COUNT_UNITS:
        if not isinstance(number, int):
            raise ctx.error(f"a count window needs a whole number of events, got {text}", num_span)
        return A.Window(A.WIN_COUNT, number, "EVENTS", span=num_span)
    if u in A.DURATION_UNITS:
        return A.Window(A.WIN_DURATION, number, u, span=num_span)
    units = "EVENTS, ms, s, min, h, d"
    raise ctx.error(f"unknown window unit {unit!r} (use {units})", unit_span)


def _pattern(raw: dict[str, Any], name: str, ctx: _Ctx) -> A.Pattern:
    structure = flatten_seq(raw["structure"])
    _check_structure(structure, ctx, None)
    if isinstance(structure, A.EventRef) and structure.negated:
        raise ctx.error("a pattern needs at least one positive event", structure.span)
    refs: dict[str, A.EventRef] = {}
    for ref in A.events_of(structure):
        if ref.var in refs:
            raise ctx.error(f"variable {ref.var!r} is bound twice", ref.span)
        refs[ref.var] = ref

    strategy: str | None = None
    strategy_span: A.Span | None = None
    partition: list[str] = []
    conditions: list[A.Expr] = []
    if "where" in raw:
        where, _ = raw["where"]
        for conj in _conjuncts(where) if not isinstance(where, tuple) else [where]:
            if isinstance(conj, tuple):
                kind, value, span = conj
                if kind == "partition":
                    partition.extend(v for v in value if v not in partition)
                else:
                    if strategy is not None and strategy != value:
                        raise ctx.error(f"two strategies: {strategy} and {value}", span)
                    strategy, strategy_span = value, span
                continue
            for kind, _value, span in _markers(conj):
                what = "[attr]" if kind == "partition" else "a strategy"
                raise ctx.error(f"{what} may only appear as a top-level AND term of WHERE", span)
            _check_conjunct(conj, refs, ctx)
            conditions.append(conj)
    if "strategy" in raw:
        value, span = raw["strategy"]
        if strategy is not None and strategy != value:
            raise ctx.error(f"two strategies: {strategy} and {value}", span)
        strategy, strategy_span = value, span
    del strategy_span

    window = _window(raw["within"][0], ctx) if "within" in raw else None

    returns = _output(raw, "returns", "RETURN", refs, name, ctx)
    timeout = _output(raw, "timeout", "ON TIMEOUT RETURN", refs, name, ctx)
    if timeout is not None:
        if window is None:
            raise ctx.error("ON TIMEOUT needs a WITHIN window: without one a partial match never times out", timeout.span)
        if returns is not None and returns.type == timeout.type:
            raise ctx.error(f"the timeout type {timeout.type!r} must differ from the RETURN type", timeout.span)

    consume: tuple[str, ...] | None = None
    if "consume" in raw:
        value, _ = raw["consume"]
        if value == ("*",):
            consume = ("*",)
        else:
            names: list[str] = []
            for var, span in value:
                target = refs.get(var)
                if target is None or target.negated:
                    what = "unknown variable" if target is None else "a negated variable consumes nothing:"
                    raise ctx.error(f"CONSUME: {what} {var!r}", span)
                if var not in names:
                    names.append(var)
            consume = tuple(names)

    return A.Pattern(
        name=name,
        structure=structure,
        conditions=tuple(conditions),
        partition=tuple(partition),
        strategy=strategy or "skip-till-any-match",
        window=window,
        returns=returns,
        span=raw["span"],
        consume=consume,
        timeout=timeout,
        limit=raw["limit"][0] if "limit" in raw else None,
    )


def _output(
    raw: dict[str, Any], kind: str, label: str, refs: Mapping[str, A.EventRef], name: str, ctx: _Ctx
) -> A.Return | None:
    """A RETURN (or ON TIMEOUT RETURN) clause: distinct field names, positive variables only."""
    if kind not in raw:
        return None
    ret: A.Return = raw[kind][0]
    seen: set[str] = set()
    for f in ret.fields:
        if f.name in seen:
            raise ctx.error(f"{label} field {f.name!r} given twice", _span_of(f.expr) or ret.span)
        seen.add(f.name)
        _check_expr(f.expr, refs, ctx, iteration_ok=False)
        for v in A.vars_of(f.expr):
            if refs[v].negated:
                raise ctx.error(f"{label} cannot read the negated variable {v!r}", _span_of(f.expr))
    if ret.type in {r.type for r in refs.values()}:
        raise ctx.error(f"pattern {name!r} cannot consume its own {label} type {ret.type!r}", ret.span)
    return ret


def build(raws: list[dict[str, Any]], text: str, file: str, default_name: str | None) -> A.PatternFile:
    ctx = _Ctx(text, file)
    conflicts = []
    seen_groups: set[str] = set()
    for raw in [r for r in raws if "conflict" in r]:
        if raw["conflict"] in seen_groups:
            raise ctx.error(f"conflict group {raw['conflict']!r} declared twice", raw["span"])
        seen_groups.add(raw["conflict"])
        members = []
        for name, span in raw["members"]:
            if name in members:
                raise ctx.error(f"pattern {name!r} listed twice in conflict group {raw['conflict']!r}", span)
            members.append(name)
        conflicts.append(A.Conflict(raw["conflict"], tuple(members), span=raw["span"]))
    raws = [r for r in raws if "conflict" not in r]
    if not raws:
        raise PatternSemanticError("no pattern in file", file, 1, 1, ctx.lines[0] if ctx.lines else None)
    base = default_name or "pattern"
    unnamed = sum(1 for r in raws if "name" not in r)
    patterns: list[A.Pattern] = []
    names: set[str] = set()
    k = 0
    for raw in raws:
        if "name" in raw:
            name, span = raw["name"]
        else:
            k += 1
            name, span = (base if unnamed == 1 else f"{base}_{k}"), raw["span"]
        if name in names:
            raise ctx.error(f"pattern name {name!r} used twice", span)
        names.add(name)
        patterns.append(_pattern(raw, name, ctx))
    return A.PatternFile(file, tuple(patterns), tuple(conflicts))


def read_source(path: str) -> str:
    """A pattern file's text again, for carets in errors found after parsing ("" if gone)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return ""


def check_fields(
    pattern_file: A.PatternFile,
    columns: Iterable[str],
    text: str | None = None,
    composite: Mapping[str, Iterable[str]] | None = None,
) -> None:
    """Schema check: every ``v.field`` a pattern reads must exist in the input's columns
    (or, for composite types, in the producing pattern's RETURN fields)."""
    cols = set(columns) | {"ts", "id"}
    comp = {t: set(f) | {"ts", "id"} for t, f in (composite or {}).items()}
    if text is None:
        text = read_source(pattern_file.path)
    ctx = _Ctx(text, pattern_file.path)
    for p in pattern_file.patterns:
        refs = {r.var: r for r in A.events_of(p.structure)}
        for expr in A.pattern_exprs(p):
            for e in A.walk_expr(expr):
                if isinstance(e, (A.Attr, A.Agg)) and e.field is not None:
                    ref = refs[e.var]
                    known = comp.get(ref.type, cols)
                    if e.field not in known:
                        raise ctx.error(f"event type {ref.type!r} has no field {e.field!r}", e.span)
        for attr in p.partition:
            for ref in refs.values():
                known = comp.get(ref.type, cols)
                if attr not in known:
                    raise ctx.error(f"event type {ref.type!r} has no field {attr!r} (needed by [{attr}])", p.span)
