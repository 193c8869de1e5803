"""Every pattern of a run compiled alone: the frozen program :mod:`petricep.merge` merges.

A run's patterns come in three kinds: pattern-language patterns (compiled to a
:class:`~petricep.compile.net.PatternNet` each), SQL MATCH_RECOGNIZE queries (a
:class:`~petricep.compile.rows.RowNet` each) and patterns with ARCHIVED variables (their live
part compiles like any pattern, :class:`~petricep.compile.archived.HistorySpec` keeps the
split). :func:`compile_program` runs the program checks of :mod:`petricep.lang.check` once
(names, RETURN-type order, consumption) and compiles every kind; :func:`extend_program` does the
same for patterns joining a running program, so no kind is lost on the way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from petricep.compile.archived import HistorySpec, split_patterns
from petricep.compile.compiler import compile_pattern
from petricep.compile.net import PatternNet
from petricep.compile.rows import RowNet, compile_query
from petricep.lang import ast as A
from petricep.lang import check
from petricep.lang.sql_ast import MatchRecognize


@dataclass(frozen=True)
class Program:
    """A run's patterns compiled alone, in evaluation order (producers of RETURN types
    first); ``patterns[i].index == offset + i``."""

    patterns: tuple[PatternNet, ...]
    rows: tuple[RowNet, ...] = ()
    history: tuple[HistorySpec, ...] = ()
    sources: tuple[A.Pattern, ...] = ()  # the checked patterns the nets came from


def compile_program(
    patterns: Sequence[A.Pattern],
    conflicts: Sequence[A.Conflict] = (),
    queries: Sequence[MatchRecognize] = (),
    push_negations: bool = True,
    offset: int = 0,
    row_offset: int = 0,
) -> Program:
    """Check and compile a run's patterns and queries (``offset``/``row_offset``: the indices
    the first pattern and query get, for patterns joining a running program)."""
    live, history = split_patterns(list(patterns))
    check.check_names(live, queries)
    ordered = check.order_patterns(live)
    policy = check.consumption(ordered, conflicts)
    nets = []
    for i, p in enumerate(ordered):
        net = compile_pattern(p, offset + i, push_negations)
        consumed = policy.get(p.name)
        if consumed is not None:
            net = replace(net, consume=tuple(net.var(v).slot for v in consumed.variables), conflict=consumed.domain)
        nets.append(net)
    rows = tuple(compile_query(q, row_offset + i) for i, q in enumerate(queries))
    return Program(tuple(nets), rows, tuple(history), tuple(ordered))


def extend_program(
    running: Sequence[A.Pattern],
    running_queries: Sequence[str],
    patterns: Sequence[A.Pattern],
    conflicts: Sequence[A.Conflict] = (),
    queries: Sequence[MatchRecognize] = (),
    row_offset: int = 0,
) -> Program:
    """The program of ``patterns`` (and ``queries``) joining running ones: names must be new,
    RETURN types must not form a cycle with the running patterns, partition keys must exist."""
    live, _ = split_patterns(list(patterns))
    check.check_names(live, queries, running=[p.name for p in running] + list(running_queries))
    check.order_patterns(list(running) + live)  # cycles and composite keys across both
    return compile_program(patterns, conflicts, queries, offset=len(running), row_offset=row_offset)
