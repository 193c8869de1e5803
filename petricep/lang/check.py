"""Semantic checks: raw declarations -> validated, normalised :class:`Pattern` values.

Every rule of docs/SEMANTICS.md that can be decided from the text alone is enforced
here, so the compiler only ever sees meaningful patterns.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import lark

from petricep.errors import (
    PatternError,
    PatternLimitError,
    PatternSemanticError,
    PatternUnsupportedError,
    flatten_errors,
    raise_errors,
)
from petricep.lang import ast as A
from petricep.lang import groups as G
from petricep.lang import raw as R
from petricep.lang import sql_ast as S
from petricep.lang.front import (
    MAX_EXPRESSION_DEPTH,
    MAX_VARIABLES,
    error_at,
    expression_depth_error,
    read_source,
)
from petricep.lang.gaps import check_gaps
from petricep.lang.until import check_until, stop_vars

T = TypeVar("T")

_COUNT_UNITS = ("events", "event")
#: lark tree levels: far above what :data:`MAX_NESTING` brackets make, far below the
#: interpreter's recursion limit (lark's transformer recurses once per level)
_MAX_TREE_DEPTH = 300


class _Ctx:
    """Where errors of one file point: its name and text (for the caret when reported)."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.errors: list[PatternError] = []  # what :meth:`attempt` caught, in the order found
        # the pattern being checked: its repeated groups by name, each step's group
        self.groups: dict[str, A.Group] = {}
        self.members: dict[str, str] = {}
        self.structure: A.Node = A.Seq(())

    def attempt(self, check: Callable[[], T]) -> T | None:
        """``check()``, or None with its error kept: one mistake does not hide the next."""
        try:
            return check()
        except PatternError as e:
            self.errors.append(e)
            return None

    def unsupported(self, message: str, span: A.Span | None) -> PatternError:
        """An error for what the language means but does not run yet (a caret, its own kind)."""
        if span is None:
            return PatternUnsupportedError(message, self.file)
        return error_at(message, A.Span(self.file, span.line, span.column, span.source or self.text), PatternUnsupportedError)

    def error(self, message: str, span: A.Span | None) -> PatternError:
        if span is None:
            return PatternSemanticError(message, self.file)
        return error_at(message, A.Span(self.file, span.line, span.column, span.source or self.text))


def check_tree_depth(tree: lark.Tree, text: str, file: str) -> None:  # type: ignore[type-arg]
    """Refuse a parse tree deeper than the transformer can walk (a chain of NOT or unary
    minus, say), before it is walked; iterative, linear in the tree."""
    stack: list[tuple[lark.Tree, int]] = [(tree, 1)]  # type: ignore[type-arg]
    while stack:
        node, depth = stack.pop()
        if depth > _MAX_TREE_DEPTH:
            meta = node.meta
            span = A.Span(file, getattr(meta, "line", 1), getattr(meta, "column", 1), text)
            raise expression_depth_error(span)
        stack.extend((c, depth + 1) for c in node.children if isinstance(c, lark.Tree))


def check_expression_depth(expr: A.Expr) -> None:
    """Refuse an expression nested deeper than :data:`MAX_EXPRESSION_DEPTH` (every later stage
    walks expressions recursively, and generated code nests them)."""
    stack: list[tuple[A.Expr, int]] = [(expr, 0)]
    while stack:
        e, depth = stack.pop()
        if depth > MAX_EXPRESSION_DEPTH:
            raise expression_depth_error(A.leftmost_span(expr) or A.NOWHERE)
        stack.extend((c, depth + 1) for c in A.expr_children(e))


def flatten_seq(node: A.Node) -> A.Node:
    """SEQ is associative: SEQ(a, SEQ(b, c)) -> SEQ(a, b, c). Single-child operators collapse."""
    if isinstance(node, A.EventRef):
        return node
    if isinstance(node, A.Group):  # its steps stay one SEQ: the unit that repeats
        inner = flatten_seq(node.seq)
        seq = inner if isinstance(inner, A.Seq) else A.Seq((inner,), span=node.seq.span)
        return replace(node, seq=seq)
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
    if isinstance(node, A.Group):
        G.check_structure(node, ctx.error, ctx.unsupported, parent, ctx.structure)
        return
    if isinstance(node, A.EventRef):
        if node.negated and not isinstance(parent, A.Seq):
            raise ctx.error(f"negation !({node.type} {node.var}) must be an element of a SEQ", node.span)
        if node.optional and not isinstance(parent, A.Seq):
            raise ctx.error(f"an optional step {node.type}? {node.var} must be an element of a SEQ", node.span)
        if node.kleene and node.least == 0 and not isinstance(parent, A.Seq):
            raise ctx.error(f"a list of no event or more, {node.type}{node.quantifier()} {node.var}[], must be an element of a SEQ", node.span)
        return
    if isinstance(node, A.Seq) and all(isinstance(c, A.EventRef) and c.negated for c in node.children):
        raise ctx.error("a SEQ needs at least one positive (non-negated) event", node.span)
    if isinstance(node, A.Seq) and all((isinstance(c, A.EventRef) and c.negated) or A.skippable(c) for c in node.children):
        raise ctx.error("a SEQ needs at least one step that is not optional", node.span)
    for child in node.children:
        _check_structure(child, ctx, node)


def _conjuncts(expr: A.Expr) -> list[A.Expr]:
    if isinstance(expr, A.BoolOp) and expr.op == "and":
        out: list[A.Expr] = []
        for e in expr.operands:
            out.extend(_conjuncts(e))
        return out
    return [expr]


def _markers(expr: A.Expr | R.Marker) -> Iterable[R.Marker]:
    """Partition/strategy items hidden anywhere in an expression tree."""
    if isinstance(expr, R.Marker):
        yield expr
        return
    for child in A.expr_children(expr):
        yield from _markers(child)


def _check_expr(expr: A.Expr, refs: Mapping[str, A.EventRef], ctx: _Ctx, iteration_ok: bool) -> None:
    for e in A.walk_expr(expr):
        if isinstance(e, (A.Attr, A.Agg)) and G.check_reference(e, ctx.groups, ctx.members, ctx.error, iteration_ok, ctx.unsupported):
            continue
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
    if ctx.groups:
        G.check_conjunct(expr, ctx.structure, ctx.groups, ctx.error, ctx.unsupported)
    negs = sorted(v for v in A.vars_of(expr) if refs[v].negated)
    if len(negs) > 1:
        raise ctx.error(f"a condition may mention one negated variable, this one mentions {', '.join(negs)}", A.leftmost_span(expr))
    iter_vars = set()
    for e in A.walk_expr(expr):
        if isinstance(e, A.Attr) and e.index is not None and e.index.kind in (A.IDX_CUR, A.IDX_PREV):
            iter_vars.add(e.var)
        if isinstance(e, A.Agg) and e.upto_prev:
            iter_vars.add(e.var)
    if len(iter_vars) > 1:
        raise ctx.error(f"a condition may iterate over one Kleene variable, this one uses {', '.join(sorted(iter_vars))}", A.leftmost_span(expr))
    if iter_vars:
        (v,) = iter_vars
        if negs and not G.reads_its_iteration(expr, ctx.groups):  # (g[i]: the iteration it lies in, lang/groups.py)
            raise ctx.error(f"a negation condition cannot iterate over {v}[i]", A.leftmost_span(expr))
        for e in A.walk_expr(expr) if not negs else ():  # (a negation's reads the group so far, any of it)
            whole = (isinstance(e, A.Attr) and e.var == v and e.index is not None and e.index.kind not in (A.IDX_CUR, A.IDX_PREV)) or (
                isinstance(e, A.Agg) and e.var == v and not e.upto_prev
            )
            if whole:
                raise ctx.error(f"an iteration condition over {v}[i] cannot also read the whole list of {v}", A.leftmost_span(e))
    if negs and any(refs[v].kleene for v in A.vars_of(expr)):
        pass  # negation conditions may read closed Kleene lists (v[1], v[last], aggregates)


def _window(value: R.WithinText, ctx: _Ctx) -> A.Window:
    text, unit, num_span = value.number, value.unit, value.number_span
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
    raise ctx.error(f"unknown window unit {unit!r} (use {units})", value.unit_span)


def _refs(structure: A.Node, ctx: _Ctx) -> dict[str, A.EventRef]:
    """The pattern's variables (each bound once, at most :data:`MAX_VARIABLES`)."""
    refs: dict[str, A.EventRef] = {}
    for ref in [*A.events_of(structure), *G.group_refs(structure).values(), *stop_vars(structure).values()]:
        if ref.var in refs:
            raise ctx.error(f"variable {ref.var!r} is bound twice", ref.span)
        refs[ref.var] = ref
        if len(refs) > MAX_VARIABLES:
            raise error_at(
                f"a pattern of more than {MAX_VARIABLES} event variables (split it into patterns "
                "joined through RETURN types)",
                A.Span(ctx.file, ref.span.line, ref.span.column, ref.span.source or ctx.text),
                PatternLimitError,
            )
    return refs


def _where(
    raw: R.RawPattern, refs: Mapping[str, A.EventRef], ctx: _Ctx
) -> tuple[list[A.Expr], list[str], R.Named | None]:
    """WHERE split into its conditions, the partition attributes and a strategy written there."""
    strategy: R.Named | None = None
    partition: list[str] = []
    conditions: list[A.Expr] = []
    if raw.where is None:
        return conditions, partition, strategy
    where = raw.where
    for conj in [where] if isinstance(where, R.Marker) else _conjuncts(where):
        if isinstance(conj, R.Marker):
            if conj.kind == "partition":
                partition.extend(v for v in conj.names if v not in partition)
            else:
                strategy = _one_strategy(strategy, R.Named(conj.names[0], conj.span), ctx)
            continue
        try:
            _check_condition(conj, refs, ctx)
        except PatternError as e:
            ctx.errors.append(e)
            continue
        conditions.append(conj)
    return conditions, partition, strategy


def _check_condition(conj: A.Expr, refs: Mapping[str, A.EventRef], ctx: _Ctx) -> None:
    for marker in _markers(conj):
        what = "[attr]" if marker.kind == "partition" else "a strategy"
        raise ctx.error(f"{what} may only appear as a top-level AND term of WHERE", marker.span)
    check_expression_depth(conj)
    _check_conjunct(conj, refs, ctx)


def _one_strategy(old: R.Named | None, new: R.Named, ctx: _Ctx) -> R.Named:
    if old is not None and old.name != new.name:
        raise ctx.error(f"two strategies: {old.name} and {new.name}", new.span)
    return new


def _consume(raw: R.RawPattern, refs: Mapping[str, A.EventRef], ctx: _Ctx) -> tuple[str, ...] | None:
    if raw.consume_all:
        return ("*",)
    if raw.consume is None:
        return None
    names: list[str] = []
    for var in raw.consume:
        if var.name in ctx.groups:  # a group's events: those of its steps
            names.extend(m for m in ctx.groups[var.name].members if m not in names)
            continue
        target = refs.get(var.name)
        if target is None or target.negated or var.name in stop_vars(ctx.structure):
            what = (
                "unknown variable" if target is None
                else "a negated variable consumes nothing:" if target.negated
                else "a stop event (UNTIL) is no event of the match:"
            )
            raise ctx.error(f"CONSUME: {what} {var.name!r}", var.span)
        if var.name not in names:
            names.append(var.name)
    return tuple(names)


def _pattern(raw: R.RawPattern, name: str, ctx: _Ctx) -> A.Pattern:
    structure = flatten_seq(raw.structure)
    ctx.groups = {g.var: g for g in A.groups_of(structure)}
    ctx.members = {m: g.var for g in ctx.groups.values() for m in g.members}
    ctx.structure = structure
    _check_structure(structure, ctx, None)
    if isinstance(structure, A.EventRef) and structure.negated:
        raise ctx.error("a pattern needs at least one positive event", structure.span)
    refs = _refs(structure, ctx)
    before = len(ctx.errors)
    conditions, partition, strategy = _where(raw, refs, ctx)
    written = raw.strategy
    if written is not None:
        strategy = ctx.attempt(lambda: _one_strategy(strategy, written, ctx)) or strategy
    within = raw.within
    window = ctx.attempt(lambda: _window(within, ctx)) if within is not None else None
    returns = ctx.attempt(lambda: _output(raw.returns, "RETURN", refs, name, ctx))
    timeout = ctx.attempt(lambda: _output(raw.timeout, "ON TIMEOUT RETURN", refs, name, ctx))
    if timeout is not None:
        if window is None and within is None:
            ctx.errors.append(ctx.error("ON TIMEOUT needs a WITHIN window: without one a partial match never times out", timeout.span))
        if returns is not None and returns.type == timeout.type:
            ctx.errors.append(ctx.error(f"the timeout type {timeout.type!r} must differ from the RETURN type", timeout.span))
    consume = ctx.attempt(lambda: _consume(raw, refs, ctx))
    ctx.attempt(lambda: check_gaps(structure, window, raw.timeout is not None, ctx.members, stop_vars(structure), ctx.error, ctx.unsupported))
    ctx.attempt(lambda: _check_modes(structure, A.Strategy(strategy.name) if strategy is not None else A.Strategy.ANY, ctx))
    ctx.attempt(lambda: check_until(structure, conditions, ctx.error, ctx.unsupported))
    if len(ctx.errors) > before:  # the pattern's errors are reported, not the pattern
        mine = ctx.errors[before:]
        del ctx.errors[before:]
        raise_errors(mine)
    return A.Pattern(
        name=name,
        structure=structure,
        conditions=tuple(conditions),
        partition=tuple(partition),
        strategy=A.Strategy(strategy.name) if strategy is not None else A.Strategy.ANY,
        window=window,
        returns=returns,
        span=raw.span,
        consume=consume,
        timeout=timeout,
        limit=raw.limit,
    )


def _check_modes(structure: A.Node, strategy: A.Strategy, ctx: _Ctx) -> None:
    """GREEDY / RELUCTANT say which of two partial matches skip-till-next-match keeps when one
    event both extends a list and starts the step after it: only under that strategy (under
    the others both are matches or neither), on a list with a step after it in its SEQ (the
    pattern's, or one inside AND or OR: the list's choice is then among the moves of the
    partial match where it grows, its AND siblings' included)."""
    for grp in A.groups_of(structure):
        if grp.mode:
            G.check_mode(structure, grp, strategy, ctx.error, ctx.unsupported)
    for ref in A.events_of(structure):
        if not ref.mode:
            continue
        word = ref.mode.upper()
        if strategy != A.Strategy.NEXT:
            raise ctx.error(
                f"{word} on {ref.var}[] chooses between the list and the step after it under skip-till-next-match: "
                f"add it to WHERE (under {strategy} it changes nothing)",
                ref.span,
            )
        steps = _seq_of(structure, ref)
        after = steps[[id(c) for c in steps].index(id(ref)) + 1 :] if steps else ()
        if not any(not (isinstance(c, A.EventRef) and c.negated) for c in after):
            raise ctx.error(f"{word} on {ref.var}[] needs a step after the list (its choice is between the two)", ref.span)


def _seq_of(node: A.Node, ref: A.EventRef) -> tuple[A.Node, ...]:
    """The steps of the SEQ ``ref`` is a step of, a group's too (() where it is none's: a whole
    pattern, a child of AND or OR)."""
    if isinstance(node, A.EventRef):
        return ()
    if isinstance(node, A.Group):  # (a Kleene step of a group: the steps after it in its iteration)
        return _seq_of(node.seq, ref)
    if isinstance(node, A.Seq) and any(c is ref for c in node.children):
        return node.children
    for child in node.children:
        found = _seq_of(child, ref)
        if found:
            return found
    return ()


def _output(
    ret: A.Return | None, label: str, refs: Mapping[str, A.EventRef], name: str, ctx: _Ctx
) -> A.Return | None:
    """A RETURN (or ON TIMEOUT RETURN) clause: distinct field names, positive variables only."""
    if ret is None:
        return None
    seen: set[str] = set()
    for f in ret.fields:
        if f.name in seen:
            raise ctx.error(f"{label} field {f.name!r} given twice", A.leftmost_span(f.expr) or ret.span)
        seen.add(f.name)
        check_expression_depth(f.expr)
        _check_expr(f.expr, refs, ctx, iteration_ok=False)
        for v in A.vars_of(f.expr):
            if refs[v].negated:
                raise ctx.error(f"{label} cannot read the negated variable {v!r}", A.leftmost_span(f.expr))
            if v in stop_vars(ctx.structure):
                raise ctx.error(f"{label} cannot read the stop event {v!r} (UNTIL binds no event of the match)", A.leftmost_span(f.expr))
    if ret.type in {r.type for r in refs.values()}:
        raise ctx.error(f"pattern {name!r} cannot consume its own {label} type {ret.type!r}", ret.span)
    return ret


def _conflicts(raws: Iterable[R.RawConflict], ctx: _Ctx) -> tuple[A.Conflict, ...]:
    conflicts = []
    seen_groups: set[str] = set()
    for raw in raws:
        if raw.name in seen_groups:
            raise ctx.error(f"conflict group {raw.name!r} declared twice", raw.span)
        seen_groups.add(raw.name)
        members: list[str] = []
        for member in raw.members:
            if member.name in members:
                raise ctx.error(f"pattern {member.name!r} listed twice in conflict group {raw.name!r}", member.span)
            members.append(member.name)
        conflicts.append(A.Conflict(raw.name, tuple(members), span=raw.span))
    return tuple(conflicts)


def build(
    raws: list[R.RawDecl], text: str, file: str, default_name: str | None, errors: Sequence[PatternError] = ()
) -> A.PatternFile:
    """A file's raw declarations -> its checked PatternFile (unnamed patterns are named after
    ``default_name``: the file's stem). Every declaration is checked, so that one mistake
    does not hide another: ``errors`` (the parse's) and every declaration's are raised
    together, in file order (:func:`~petricep.errors.raise_errors`)."""
    ctx = _Ctx(text, file)
    found: list[PatternError] = list(errors)
    conflicts = ctx.attempt(lambda: _conflicts((r for r in raws if isinstance(r, R.RawConflict)), ctx))
    pattern_raws = [r for r in raws if isinstance(r, R.RawPattern)]
    if not pattern_raws and not found:
        raise ctx.error("no pattern in file", A.Span(file, 1, 1, text))
    base = default_name or "pattern"
    unnamed = sum(1 for r in pattern_raws if r.name is None)
    patterns: list[A.Pattern] = []
    names: set[str] = set()
    k = 0
    for raw in pattern_raws:
        if raw.name is not None:
            name, span = raw.name.name, raw.name.span
        else:
            k += 1
            name, span = (base if unnamed == 1 else f"{base}_{k}"), raw.span
        if name in names:
            found.append(ctx.error(f"pattern name {name!r} used twice", span))
        names.add(name)
        try:
            patterns.append(_pattern(raw, name, ctx))
        except PatternError as e:
            ctx.errors.append(e)
    found = flatten_errors([*found, *ctx.errors])
    found.sort(key=lambda e: (e.line or 0, e.column or 0))  # file order (sort is stable)
    raise_errors(found)
    assert conflicts is not None
    return A.PatternFile(file, tuple(patterns), conflicts)


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
    if text is None:  # the text the patterns were parsed from (their spans hold it): not read again
        text = next((p.span.source for p in pattern_file.patterns if p.span.source), None)
    if text is None:
        text = read_source(pattern_file.path)
    ctx = _Ctx(text, pattern_file.path)
    for p in pattern_file.patterns:
        refs = {r.var: r for r in A.read_refs(p.structure)}
        missing: set[tuple[str, str]] = set()  # (type, field) once per pattern
        for expr in A.pattern_exprs(p):
            for e in A.walk_expr(expr):
                if isinstance(e, (A.Attr, A.Agg)) and e.field is not None:
                    ref = refs[A.step_var(e)]
                    known = comp.get(ref.type, cols)
                    if e.field not in known and (ref.type, e.field) not in missing:
                        missing.add((ref.type, e.field))
                        message = f"event type {ref.type!r} has no field {e.field!r}{nearest(e.field, known)}"
                        ctx.errors.append(ctx.error(message, e.span))
        for attr in p.partition:
            for ref in refs.values():
                known = comp.get(ref.type, cols)
                if attr not in known and (ref.type, attr) not in missing:
                    missing.add((ref.type, attr))
                    message = f"event type {ref.type!r} has no field {attr!r} (needed by [{attr}]){nearest(attr, known)}"
                    ctx.errors.append(ctx.error(message, p.span))
    raise_errors(sorted(ctx.errors, key=lambda e: (e.line or 0, e.column or 0)))


def nearest(name: str, known: Iterable[str]) -> str:
    """``; did you mean 'pressure'?`` for a misspelt field or column: the closest of
    ``known`` (difflib's ratio, as Python's own NameError hints), or "" when none is close."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    if not close:
        lower = {k.lower(): k for k in known}
        close = [lower[name.lower()]] if name.lower() in lower else []
    return f"; did you mean {close[0]!r}?" if close else ""


# ----------------------------------------------------------------------------- programs
#
# What can only be decided over every pattern of a run (several files, or patterns added to
# a running engine): names, the order RETURN types impose, consumption domains.


def check_names(
    patterns: Sequence[A.Pattern], queries: Sequence[S.MatchRecognize] = (), running: Iterable[str] = ()
) -> None:
    """Every pattern and query of a run has its own name (``running``: names of an engine's
    patterns that new ones join)."""
    taken = set(running)
    names: set[str] = set()
    for p in patterns:
        if p.name in taken:
            raise error_at(f"a pattern named {p.name!r} is already running", p.span)
        if p.name in names:
            raise error_at(f"pattern name {p.name!r} is used by two patterns", p.span)
        names.add(p.name)
    for q in queries:
        if q.name in names or q.name in taken:
            raise error_at(f"two patterns named {q.name!r} (give the query another alias)", q.span)
        names.add(q.name)


def order_patterns(patterns: Sequence[A.Pattern]) -> list[A.Pattern]:
    """Topological order over RETURN types (stable: file order among independents); a
    pattern that partitions on a field its composite input type lacks is refused. Names must
    be distinct (:func:`check_names`)."""
    names = {p.name: p for p in patterns}
    position = {p.name: i for i, p in enumerate(patterns)}
    producers: dict[str, list[A.Pattern]] = {}
    for p in patterns:
        for made in A.outputs(p):
            producers.setdefault(made.type, []).append(p)
    deps = {
        p.name: sorted({q.name for r in _read_refs(p) for q in producers.get(r.type, ())}, key=position.__getitem__)
        for p in patterns
    }
    ordered: list[A.Pattern] = []
    done: set[str] = set()
    for p in patterns:
        _visit(p, names, deps, done, ordered)
    for p in ordered:
        _check_composite_keys(p, producers)
    return ordered


def _visit(
    root: A.Pattern, names: Mapping[str, A.Pattern], deps: Mapping[str, list[str]], done: set[str], out: list[A.Pattern]
) -> None:
    """Depth-first post-order from ``root`` (an explicit stack: a chain of thousands of
    patterns does not reach the recursion limit)."""
    if root.name in done:
        return
    path: list[str] = [root.name]
    on_path = {root.name}
    stack = [iter(deps[root.name])]
    while stack:
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
            name = path.pop()
            on_path.discard(name)
            done.add(name)
            out.append(names[name])
        elif nxt in on_path:
            cycle = " -> ".join(path[path.index(nxt) :] + [nxt])
            raise error_at(f"patterns form a cycle through RETURN types: {cycle}", names[nxt].span)
        elif nxt not in done:
            path.append(nxt)
            on_path.add(nxt)
            stack.append(iter(deps[nxt]))


def _read_refs(p: A.Pattern) -> list[A.EventRef]:
    """The events a pattern reads: its steps, negations and stop events (UNTIL)."""
    return A.read_refs(p.structure)


def _check_composite_keys(p: A.Pattern, producers: Mapping[str, list[A.Pattern]]) -> None:
    for r in _read_refs(p):
        for q in producers.get(r.type, ()):
            out = next(o for o in A.outputs(q) if o.type == r.type)
            fields = {f.name for f in out.fields}
            missing = [a for a in p.partition if a not in fields]
            if missing:
                raise error_at(
                    f"pattern {p.name!r} partitions on [{missing[0]}] but composite type {r.type!r} "
                    f"({'RETURN' if out is q.returns else 'ON TIMEOUT RETURN'} of {q.name!r}) "
                    f"has no field {missing[0]!r}",
                    p.span,
                )


@dataclass(frozen=True)
class Consumption:
    """What a pattern's matches consume: the events bound to ``variables``, within ``domain``
    (``pattern:NAME`` or ``conflict:GROUP``: the patterns that no longer see them)."""

    domain: str
    variables: tuple[str, ...]


def consumption(patterns: Sequence[A.Pattern], conflicts: Sequence[A.Conflict]) -> dict[str, Consumption]:
    """Pattern name -> what its matches consume (patterns that consume nothing are absent).
    Members of a conflict group consume all their events unless they say otherwise."""
    by_name = {p.name for p in patterns}
    group_of: dict[str, str] = {}
    for c in conflicts:
        for name in c.patterns:
            if name not in by_name:
                raise error_at(f"conflict group {c.name!r} names unknown pattern {name!r}", c.span)
            if name in group_of:
                raise error_at(f"pattern {name!r} is in two conflict groups ({group_of[name]!r}, {c.name!r})", c.span)
            group_of[name] = c.name
    out: dict[str, Consumption] = {}
    for p in patterns:
        consume = p.consume
        if consume is None and p.name in group_of:
            consume = ("*",)
        if not consume:
            continue
        names = tuple(r.var for r in A.events_of(p.structure) if not r.negated) if consume == ("*",) else consume
        domain = f"conflict:{group_of[p.name]}" if p.name in group_of else f"pattern:{p.name}"
        out[p.name] = Consumption(domain, names)
    return out
