"""All patterns of a run -> one net.

Orders patterns so that producers of RETURN types come before their consumers,
rejects cycles, and checks that composite types carry the fields their consumers
partition on. (Sharing of common sub-nets between patterns builds on this.)
"""

from __future__ import annotations

from collections.abc import Sequence

from petricep.compile.compiler import compile_pattern
from petricep.compile.net import Net
from petricep.errors import PatternSemanticError
from petricep.lang import ast as A


def _err(p: A.Pattern, message: str) -> PatternSemanticError:
    return PatternSemanticError(message, p.span.file, p.span.line or None, p.span.column or None)


def order_patterns(patterns: Sequence[A.Pattern]) -> list[A.Pattern]:
    """Topological order over RETURN types (stable: file order among independents)."""
    names: dict[str, A.Pattern] = {}
    for p in patterns:
        if p.name in names:
            raise _err(p, f"pattern name {p.name!r} is used by two patterns")
        names[p.name] = p
    producers: dict[str, list[A.Pattern]] = {}
    for p in patterns:
        if p.returns:
            producers.setdefault(p.returns.type, []).append(p)
    deps = {
        p.name: {q.name for r in A.events_of(p.structure) for q in producers.get(r.type, ())} for p in patterns
    }
    ordered: list[A.Pattern] = []
    done: set[str] = set()
    visiting: list[str] = []

    def visit(p: A.Pattern) -> None:
        if p.name in done:
            return
        if p.name in visiting:
            cycle = " -> ".join(visiting[visiting.index(p.name) :] + [p.name])
            raise _err(p, f"patterns form a cycle through RETURN types: {cycle}")
        visiting.append(p.name)
        for d in sorted(deps[p.name], key=lambda n: patterns.index(names[n])):
            visit(names[d])
        visiting.pop()
        done.add(p.name)
        ordered.append(p)

    for p in patterns:
        visit(p)
    for p in ordered:
        for r in A.events_of(p.structure):
            for q in producers.get(r.type, ()):
                fields = {f.name for f in q.returns.fields} if q.returns else set()
                missing = [a for a in p.partition if a not in fields]
                if missing:
                    raise _err(
                        p,
                        f"pattern {p.name!r} partitions on [{missing[0]}] but composite type {r.type!r} "
                        f"(RETURN of {q.name!r}) has no field {missing[0]!r}",
                    )
    return ordered


def build_net(patterns: Sequence[A.Pattern]) -> Net:
    ordered = order_patterns(patterns)
    return Net(tuple(compile_pattern(p, i) for i, p in enumerate(ordered)))
