"""A net's SQL ``MATCH_RECOGNIZE`` queries inside the :class:`~petricep.kernel.engine.KernelEngine`
that fires its patterns: one engine for the whole run, the queries on the kernel's row matcher
(:class:`~petricep.kernel.rowengine.KernelRowRuntime`), the patterns on the firing kernel.

Why the merge below is the Python engine's order, under every tie rule: the Python engine
returns from ``push(e)`` first what its patterns emit at ``e`` -- the windows ``e`` closes and
its firing (``arrival``, ``strict``), or the timestamp group ``e`` ends (``either``,
``runtime/ties.py`` ``_join`` before ``rows.push``) -- and then the queries' matches of ``e``
(``RowQueries.push``: the searches stream time closed, then ``e`` as a row of its table);
``advance`` (a clock tick) the same with the queries' expiry; ``flush`` the patterns' end of
stream, then the queries'. The kernel says which row emitted each of its matches (its
emitting position, -1 at the end); so an event's pattern matches, all rounds, in the kernel's
order, then its queries' matches: a stable sort on (emitting position, patterns first).

An evaluation error stops the run at the first failing event in stream order, as the single
engine does: the kernel's error at an event comes before the queries see it (the Python engine
fires the patterns first); a query's error at an event drops what the patterns emitted there
(the Python engine's ``push`` raises before returning it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from petricep.compile.rows import RowNet
from petricep.errors import EvaluationError, StateLimitError
from petricep.events import Event
from petricep.kernel.matchobjects import MatchObjects
from petricep.kernel.rowengine import KernelRowRuntime
from petricep.kernel.run import KernelRun
from petricep.runtime.match import Match
from petricep.runtime.rows import RowQueries

END = sys.maxsize  # where the end of the stream's matches sort: after every event's
Pair = tuple[Match, int]  # (match, emitting position; -1: the end of the stream)


class SqlSide:
    """The SQL queries of one kernel run: ``step`` the rows the kernel fired, ``merged`` with
    the kernel's matches of those rows, ``flush`` at the end. ``tick``: the type of the
    kernel's clock ticks (stream time moved, no event: the queries' expiry only)."""

    def __init__(self, rows: Sequence[RowNet], tick: str) -> None:
        self.matches: dict[str, int] = {}  # per query name, as the Python engine counts them
        self.queries = RowQueries(rows, self.matches, KernelRowRuntime)
        self._tick = tick
        self._found: list[Pair] = []  # the queries' matches not merged yet
        self.cut = END  # a query failed at this position: nothing emitted at or after it counts
        self.error: EvaluationError | None = None  # that failure

    def step(self, event: Callable[[int], Event], start: int, stop: int) -> int:
        """Rows ``start`` .. ``stop`` - 1 (``event(i)``: row ``i``) to the queries, their matches
        kept; returns ``stop``, or the row at which a query failed (the error, with the event
        attached, kept in ``error``)."""
        queries, found, matches, tick = self.queries, self._found, self.matches, self._tick
        for i in range(start, stop):
            e = event(i)
            try:
                got = queries.expire(e.ts, e.pos, matches, True) if e.type == tick else queries.push(e, matches, True)
            except EvaluationError as exc:
                exc.event = e  # type: ignore[attr-defined]  # (the run names the failing event)
                self.error = exc
                self.cut = e.pos
                return i
            if got:
                at = e.pos
                found += [(m, at) for m in got]
        return stop

    def flush(self) -> None:
        """End of stream: the queries' last matches, emitted at the end (-1); a query's error
        there drops every match of the end of the stream, and is raised."""
        try:
            got = self.queries.flush(self.matches, True)
        except EvaluationError:
            self.cut = -1
            raise
        self._found += [(m, -1) for m in got]

    def merged(self, kernel: list[Match], at: list[int]) -> list[Pair]:
        """The kernel's matches (``at``: their emitting positions) and the queries' kept ones,
        in the single engine's order (see the module docstring); what a query's failure cut
        off dropped."""
        pairs = list(zip(kernel, at))
        found, self._found = self._found, []
        if self.cut != END:
            cut = END if self.cut < 0 else self.cut
            pairs = [(m, p) for m, p in pairs if (END if p < 0 else p) < cut]
        if not found:
            return pairs
        if not pairs:
            return found
        tagged = [(END if p < 0 else p, 0, m, p) for m, p in pairs] + [(END if p < 0 else p, 1, m, p) for m, p in found]
        tagged.sort(key=_order)
        return [(m, p) for _, _, m, p in tagged]

    # ------------------------------------------------------------------ accounting

    def live(self) -> int:
        """The queries' partial matches (open searches) that can still be extended."""
        return self.queries.live()

    def report(self) -> dict[str, dict[str, Any]]:
        """Each query's entry of the run report, as the Python engine's (``runtime/report.py``)."""
        out: dict[str, dict[str, Any]] = {}
        for rrt in self.queries.runtimes:
            live = rrt.live()
            for name in (rrt.name, *rrt.aliases):
                out[name] = {"matches": self.matches[name], "timeouts": 0, "dropped": 0, "alive": live,
                             "rows": rrt.rows_seen, "table": rrt.net.table}
        return {name: out[name] for name in self.matches}


def _order(x: tuple[int, int, Match, int]) -> tuple[int, int]:
    return (x[0], x[1])


class SqlBeside:
    """The :class:`~petricep.kernel.engine.KernelEngine`'s part that drives its :class:`SqlSide`
    (kept here: the engine's module holds its event columns and its match outputs)."""

    kernel: KernelRun
    _sql: SqlSide | None
    _error: EvaluationError | StateLimitError | None
    _out: MatchObjects
    _pairs: list[Any]
    _chunks: list[Any]
    _with_at: bool
    _with_batches: bool

    def _queries(self, event: Callable[[int], Event], start: int, stop: int) -> int:
        """Rows ``start`` .. ``stop`` - 1, fired by the kernel, to the SQL queries (if any):
        ``stop``, or the row at which one failed (its error the run's: the first failing
        event, the kernel's own failing row being ``stop`` or later)."""
        if self._sql is None or stop <= start:
            return stop
        at = self._sql.step(event, start, stop)
        if at < stop:
            self._error = self._sql.error
        return at

    def _taken_beside(self, sql: SqlSide) -> list[Match]:
        """The engine's ``_taken`` beside SQL queries: the kernel's matches as objects, merged
        with the queries' (:meth:`SqlSide.merged`; no record batch holds both), returned, or
        kept as pairs (``_with_at``) or chunks (``_with_batches``) as the engine keeps its own."""
        pairs = sql.merged(*self._out.matches_at(self.kernel.take_matches()))
        found = [m for m, _ in pairs]
        if not self._with_at and not self._with_batches:
            return found
        if not self._with_batches:
            self._pairs.extend(pairs)
        elif found and self._with_at:
            self._pairs.append((found, np.array([p for _, p in pairs], dtype=np.int64)))
        elif found:
            self._chunks.append(found)
        return []

    def _finish(self) -> None:
        """End of stream: the kernel's, then the SQL queries' (an error of theirs is raised,
        the end's matches dropped, as the Python engine's flush raises it)."""
        self.kernel.finish()
        if self._sql is not None:
            try:
                self._sql.flush()
            except EvaluationError as exc:
                self._error = exc
                self.kernel.take_matches()
                self.kernel.kernel.clear()
                raise


__all__ = ["END", "Pair", "SqlBeside", "SqlSide"]

