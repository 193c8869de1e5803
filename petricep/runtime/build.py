"""Building an engine's compiled side, once per net: what it refuses to run, and one complete
:class:`~petricep.runtime.firing.GroupRuntime` per shared net.

Everything fixed per net is decided here, never per event: the tie rule's firing test, the
patterns' event-time duties (ON TIMEOUT, LIMIT) and spilling statistics. A runtime the
builder returns is ready to fire (the interpreter of :mod:`petricep.runtime.firing`, the
reference engine); the engine only indexes it. The RETURN and ON TIMEOUT expressions of each
pattern are compiled here too, against its shared net's slot layout.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from petricep.compile.net import GroupNet, Net, PatternNet
from petricep.errors import ConfigError, PatternUnsupportedError
from petricep.lang import ast as A
from petricep.lang.ast import Strategy
from petricep.lang.front import error_at
from petricep.runtime.expr import Missing, Skip, compile_expr
from petricep.runtime.firing import GroupRuntime, pattern_bits
from petricep.runtime.limits import LimitSpec
from petricep.runtime.spill import PlaceStats

TIE_RULES = ("arrival", "strict", "either")
# the default memory budget: live partial matches one shared net may hold (docs/SEMANTICS.md
# "Memory budget"); a few GB of tokens, above every shipped workload's peak
MAX_PARTIAL_MATCHES = 5_000_000

Fields = list[tuple[str, Any]]  # (attribute name, its compiled expression on the final slots)


def check_program(net: Net, tie: str) -> None:
    """What the engine refuses to run: an unknown tie rule, ``either`` with a strategy other
    than skip-till-any-match, patterns with ARCHIVED variables (they need an archive)."""
    if tie not in TIE_RULES:
        raise ConfigError(f"unknown tie rule {tie!r} (use {', '.join(TIE_RULES)})")
    for p in net.patterns:
        if tie == "either" and p.strategy != Strategy.ANY:
            raise ConfigError(
                f"pattern {p.name!r}: tie rule 'either' needs skip-till-any-match, not {p.strategy} "
                "(the other strategies are defined by a scan in arrival order)"
            )
    if tie == "either":
        check_group_ties(net)
    if net.history:
        raise ConfigError(
            f"pattern {net.history[0].name!r} has ARCHIVED variables: it runs with an event archive "
            "(petricep run --archive DIR, or petricep.archive.join.HistoryRunner)"
        )


def check_group_ties(net: Net) -> None:
    """Under the tie rule ``either`` a group's events of one timestamp may be bound in any
    order, and the iterations an optional step's elements lie in follow that order. A read of
    one of them by iteration number (``g[last].c``, ``g[k].c``, ``g[i-1].c``) delimits the
    iterations by the elements' stream positions
    (runtime/expr.py _in_iteration_fn, the kernel's kleene_in_iteration): refused at the read,
    every engine alike."""
    for p in net.patterns:
        group = {v.name: v.group for v in p.vars}
        fields = [f.expr for r in (p.returns, p.timeout) if r is not None for f in r.fields]
        for e in (x for c in (*p.conditions, *fields) for x in A.walk_expr(c)):
            if isinstance(e, A.Attr) and e.index is not None and e.index.of:  # (lowered: the step's own name)
                g, c = group.get(e.var), e.var
                raise error_at(
                    f"pattern {p.name!r}: tie rule 'either' joins one timestamp's events in any order, so the iteration "
                    f"of {g}[] an event of the optional step {c} lies in follows the order it was bound in; reading it "
                    f"by iteration number ({g}[k].{c}, {g}[last].{c}, {g}[i-1].{c}) runs under the tie rules arrival "
                    f"and strict ({g}[i].{c} and aggregates run under either)",
                    e.span,
                    PatternUnsupportedError,
                )


def check_budget(max_partial_matches: int | None) -> int | None:
    if max_partial_matches is not None and (
        isinstance(max_partial_matches, bool) or not isinstance(max_partial_matches, int) or max_partial_matches < 1
    ):
        raise ConfigError(f"max_partial_matches must be a positive integer or None, not {max_partial_matches!r}")
    return max_partial_matches


def check_spill(tie: str) -> None:
    if tie != "arrival":
        raise ConfigError("spilling partial matches needs the arrival tie rule")


def build_runtime(
    group: GroupNet,
    patterns: Sequence[PatternNet],
    tie: str,
    spill: bool,
) -> GroupRuntime:
    """A shared net ready to fire: its patterns' (``patterns``: the whole net's, by index)
    timeouts and limits, and spilling statistics if ``spill``."""
    bits = pattern_bits(group)
    count_window = group.window_kind == A.WIN_COUNT
    timeout_mask = 0
    limits: list[LimitSpec] = []
    for pi in group.patterns:
        p = patterns[pi]
        if p.timeout is not None:
            timeout_mask |= bits[pi]
        if p.limit is not None:
            gaps = {i: g for i, pl in enumerate(group.places) for q, g in pl.gap_ends if q == pi}
            limits.append(LimitSpec(pi, p.name, bits[pi], p.limit.count, p.limit.policy, p.window_value, count_window, gaps))
    place_stats = PlaceStats(len(group.places)) if spill else None
    return GroupRuntime(group, tie, limits, timeout_mask, place_stats)


def return_fns(p: PatternNet, rt: GroupRuntime) -> Fields:
    """RETURN expressions compiled against the shared net's slot layout."""
    if not p.returns:
        return []
    return _fields(p, rt, p.returns.fields)


def timeout_fns(p: PatternNet, rt: GroupRuntime) -> Fields | None:
    """ON TIMEOUT RETURN expressions, likewise (None: the pattern has no ON TIMEOUT)."""
    if p.timeout is None:
        return None
    return _fields(p, rt, p.timeout.fields)


def _fields(p: PatternNet, rt: GroupRuntime, fields: Sequence[Any]) -> Fields:
    names = {v.name: v.slot for v in p.vars}
    kleene = {v.name: rt.kinfo[v.slot] for v in p.vars if v.kleene}
    return [(f.name, as_condition_free(compile_expr(f.expr, names, kleene, None))) for f in fields]


def as_condition_free(fn: Any) -> Any:
    """RETURN expressions: evaluated on the final slots (no negated event)."""

    def value(slots: tuple[Any, ...]) -> Any:
        try:
            return fn(slots, None)
        except (Missing, Skip):
            return None

    return value


__all__ = [
    "MAX_PARTIAL_MATCHES",
    "TIE_RULES",
    "as_condition_free",
    "build_runtime",
    "check_budget",
    "check_group_ties",
    "check_program",
    "return_fns",
    "timeout_fns",
]
