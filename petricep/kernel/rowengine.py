"""SQL ``MATCH_RECOGNIZE`` queries on the compiled kernel's row matcher.

:class:`KernelRowRuntime` is the Python row runtime (:class:`~petricep.runtime.rows.RowRuntime`)
with its per-row search loop -- threads per start row in preference order, DEFINEs, contiguity,
AFTER MATCH SKIP, WITHIN -- run by the kernel's ``RowMatcher`` (``_rowmatch.pyx``, arrays from
:mod:`petricep.kernel.rowlowering`). What stays Python is only per match or per exception:

* MEASURES and the output rows (ONE / ALL ROWS PER MATCH, SELECT) are computed from each
  decided match's rows by the Python runtime's own code, so they are its values exactly;
* a DEFINE the bytecode does not cover, or a value it cannot compute exactly, is answered by
  the DEFINE's Python closure on a view of the one row it classifies (a DEFINE reading only
  that row and PREV's rows reads nothing else of the Python runtime's view); a DEFINE reading
  the rows mapped so far, on the thread's candidate rows, as the Python runtime does;
* the errors (a missing PARTITION BY column, an AFTER MATCH SKIP that cannot restart) are
  raised by the Python runtime's code, so their words are the same.

:class:`RowKernelEngine` is the embedded :class:`~petricep.runtime.engine.Engine` whose SQL
queries run on it: the same stream checks, accounting and report, the queries' matches from
the kernel. ``petricep run`` uses it where :func:`petricep.kernel.supports` covers every query.
"""

from __future__ import annotations

from typing import Any

from petricep.compile.net import Net
from petricep.compile.rows import RowNet
from petricep.errors import ConfigError, EvaluationError
from petricep.events import Event
from petricep.kernel.rowlowering import LoweredRows, lower_rows
from petricep.runtime.engine import Engine
from petricep.runtime.expr import OVERFLOW_FLAG, with_pattern
from petricep.runtime.housekeeping import check_budget, sweep
from petricep.runtime.match import Match
from petricep.runtime.rowexpr import MatchView
from petricep.runtime.rows import RowPartition, RowRuntime

try:
    from petricep.kernel import _rowmatch  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - the extension is optional
    _rowmatch = None


class KernelRowRuntime(RowRuntime):
    """One query's runtime with its search loop on the kernel (see the module docstring)."""

    def __init__(self, net: RowNet) -> None:
        super().__init__(net)
        if _rowmatch is None:
            raise ConfigError("the compiled row matcher is not built (petricep.kernel.available() is False)")
        self.lowered: LoweredRows = lower_rows(net)
        by_var = {t.var: t.id for t in reversed(net.transitions)}  # a variable's DEFINE: one closure
        self.var_guards = [self.guards[by_var[v]] if v in by_var else None for v in self.lowered.vars]
        self.matcher = _rowmatch.RowMatcher(self.lowered, self, tuple(net.partition))

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("a kernel row runtime holds native state; pickle the Python engine's instead")

    # ------------------------------------------------------------------ called by the matcher

    def new_partition(self) -> RowPartition:
        """A partition's rows, as the Python runtime keeps them (MEASURES read them)."""
        return RowPartition()

    def guard_holds(self, var: int, part: RowPartition, idx: int, e: Event) -> bool:
        """Variable ``var``'s DEFINE on row ``idx`` (``e``), by its Python closure: a view of the
        row alone reads what the Python runtime's view of a whole thread reads, since the
        query is memoryless (rowlowering)."""
        guard = self.var_guards[var]
        assert guard is not None
        return guard(MatchView(((idx, self.lowered.vars[var], e),), 0, part.row_at, 0, self.subsets)) is True

    def guard_on_path(self, var: int, part: RowPartition, rows: tuple[Any, ...]) -> bool:
        """Variable ``var``'s DEFINE (one reading the rows mapped so far) on a thread's
        candidate ``rows``, the view the Python runtime's ``_step`` gives it."""
        guard = self.var_guards[var]
        assert guard is not None
        return guard(MatchView(rows, len(rows) - 1, part.row_at, 0, self.subsets)) is True

    # ------------------------------------------------------------------ rows in

    def push(self, e: Event) -> list[Match]:
        self.rows_seen += 1
        found = self.matcher.push(e)
        return self._outputs(found) if found is not None else []

    def expire(self, ts: Any, pos: int) -> list[Match]:
        found = self.matcher.expire(ts, pos)
        return self._outputs(found) if found is not None else []

    def flush(self) -> list[Match]:
        found = self.matcher.flush()
        return self._outputs(found) if found is not None else []

    def live(self) -> int:
        return int(self.matcher.live())

    def waiting(self) -> bool:
        return bool(self.matcher.waiting())

    def _outputs(self, found: list[tuple[int, RowPartition, int, tuple[Any, ...], int]]) -> list[Match]:
        """The output rows of the decided matches, in order; an AFTER MATCH SKIP that cannot
        restart raises the Python runtime's error (after the match's MEASURES, as there)."""
        out: list[Match] = []
        for kind, part, start, rows, number in found:
            part.matches = number
            if kind == 1:
                self._resume(part, start, rows)
                raise AssertionError("AFTER MATCH SKIP restarted where the kernel found it cannot")  # pragma: no cover
            self.matches += 1
            out.extend(self._output(part, start, rows))
        return out


class RowKernelEngine(Engine):
    """The embedded engine with its SQL queries on the kernel's row matcher (and its
    patterns, if any, on the Python engine; a run whose net the kernel covers fires its
    patterns and queries in one :class:`~petricep.kernel.engine.KernelEngine` instead).

    One query alone (no patterns, no alias, arrival order, no slack, no spilling) takes the
    short way per event (:meth:`_push`): what the engine's ``step_in_order`` and
    ``RowQueries.push`` do for such a net, without their general loops."""

    def __init__(self, net: Net, tie: str = "arrival", **kw: Any) -> None:
        super().__init__(net, tie=tie, row_runtime=KernelRowRuntime, **kw)
        runtimes = self.rows.runtimes
        alone = len(runtimes) == 1 and not runtimes[0].aliases and not net.patterns and not net.history
        self._alone: KernelRowRuntime | None = None
        if alone and tie == "arrival" and self.order is None and self.spill is None:
            self._alone = runtimes[0]  # type: ignore[assignment]

    def extend(self, net: Net) -> None:
        """:meth:`Engine.extend`; patterns added leave the short way (they fire in the loop)."""
        super().extend(net)
        if net.patterns:
            self._alone = None

    def _push(self, e: Event) -> list[Match]:
        rrt = self._alone
        st = self.state
        last = st.last_input
        if rrt is None or (last is not None and e.ts < last.ts):
            return super()._push(e)  # (the order error raised there)
        stats = st.stats
        stats.events += 1
        st.seq += 1
        e.seq = st.seq
        st.last_input = e
        try:
            found = rrt.expire(e.ts, e.pos) if rrt.waiting() else []
            if rrt.net.table is None or rrt.net.table == e.type:
                found += rrt.push(e)
        except EvaluationError as exc:
            if getattr(exc, OVERFLOW_FLAG, False):
                raise with_pattern(exc, f"query {rrt.name!r}") from None
            raise
        if found:
            stats.matches[rrt.name] = rrt.matches
            if not self.collect:
                found = []
        st.since_sweep += 1
        if st.since_sweep >= self.sweep_every:
            sweep(self.compiled, st, e)
        if stats.created >= st.budget_at:
            check_budget(self.compiled, st, e)
        return found


__all__ = ["KernelRowRuntime", "RowKernelEngine"]
