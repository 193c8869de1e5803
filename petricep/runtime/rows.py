"""The token-firing loop of a row-pattern net (SQL ``MATCH_RECOGNIZE``), per partition.

SQL's rules, which differ from the pattern language's:

* rows are contiguous: every row of the partition must extend a partial match, or the
  partial match dies (there is no skipping);
* a match is searched from every row in turn; from one start row the *preferred* match is
  the one a backtracking matcher finds first. Tokens of one start row are kept in that
  preference order (a place's exits are ordered), so when a token may stop, every token
  after it is dropped and only the tokens before it — which could still end in a preferred
  match — keep running. The start row's match is final when none is left;
* matches are taken in start-row order; after one, ``AFTER MATCH SKIP`` says where the next
  search starts, and searches from the rows it skips are dropped.

Emitted matches wait for the earlier start rows of their partition to be decided, so a
match comes out on a later row of its partition (or at the end of the stream).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from petricep.compile.rows import ACCEPT, RowNet
from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.lang import ast as A
from petricep.lang import sql_ast as S
from petricep.runtime.expr import OVERFLOW_FLAG, with_pattern
from petricep.runtime.match import Match
from petricep.runtime.rowexpr import Fn, MatchRow, MatchView, compile_sexpr

Thread = tuple[int, tuple[MatchRow, ...], int]  # (place, rows so far, exits it may still take)

_TRIM = 256  # drop kept rows in batches


class RowMatch(Match):
    """One output row of ALL ROWS PER MATCH: a match plus the row it describes."""

    __slots__ = ("row",)

    def __init__(self, pattern: str, ids: dict[str, Any], start: Any, end: Any, attrs: dict[str, Any], row: Any) -> None:
        super().__init__(pattern, ids, start, end, attrs)
        self.row = row

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["row"] = self.row
        return d


class Attempt:
    """The search for a match from one start row."""

    __slots__ = ("start", "threads", "best", "done", "closes")

    def __init__(self, start: int, threads: list[Thread], closes: float | int | None = None) -> None:
        self.start = start
        self.closes = closes  # with WITHIN: the stream time (ts or pos) past which no row fits
        self.threads = threads
        self.best: tuple[MatchRow, ...] | None = None
        self.done = False


class RowPartition:
    """One partition's rows (kept as far back as PREV may read) and its open searches."""

    __slots__ = ("rows", "base", "count", "resume", "attempts", "matches")

    def __init__(self) -> None:
        self.rows: list[Event] = []
        self.base = 0  # partition index of rows[0]
        self.count = 0  # rows seen
        self.resume = 0  # where the next search may start (AFTER MATCH SKIP)
        self.attempts: deque[Attempt] = deque()
        self.matches = 0

    def row_at(self, idx: int) -> Event | None:
        k = idx - self.base
        return self.rows[k] if 0 <= k < len(self.rows) and idx >= 0 else None


class RowRuntime:
    """Runs one :class:`RowNet` over its rows, one :class:`RowPartition` per key."""

    def __init__(self, net: RowNet) -> None:
        self.net = net
        self.name = net.name
        self._compile()
        self.subsets = {name: frozenset(vs) for name, vs in net.subsets}
        self.accept_at: list[int | None] = [ex.index(ACCEPT) if ACCEPT in ex else None for ex in net.exits]
        self.full = [len(ex) for ex in net.exits]
        self.count_window = net.window_kind == A.WIN_COUNT
        self.parts: dict[Any, RowPartition] = {}
        self.matches = 0
        self.aliases: list[str] = []  # queries equal to this one but for their name
        self.rows_seen = 0
        self.closing: list[tuple[Any, int, Any]] = []  # WITHIN: (closes, n, partition key) heap
        self._seq = 0

    def _compile(self) -> None:
        """The closures of the guards (DEFINE per transition) and the MEASURES."""
        self.guards: list[Fn | None] = [
            None if t.guard is None else compile_sexpr(t.guard) for t in self.net.transitions
        ]
        self.measures: list[tuple[str, Fn]] = [(m.name, compile_sexpr(m.expr)) for m in self.net.measures]

    def __getstate__(self) -> dict[str, Any]:
        """Run state without the closures (Spark's state store pickles engines)."""
        state = dict(self.__dict__)
        del state["guards"], state["measures"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._compile()

    def with_aliases(self, found: list[Match]) -> list[Match]:
        """The matches again under every alias (queries sharing this runtime)."""
        out = list(found)
        for name in self.aliases:
            for m in found:
                copy = RowMatch(name, m.ids, m.start, m.end, m.attrs, m.row) if isinstance(m, RowMatch) else None
                out.append(copy or Match(name, m.ids, m.start, m.end, m.attrs))
        return out

    def key(self, e: Event) -> Any:
        attrs = self.net.partition
        try:
            return tuple(e.attrs[a] for a in attrs) if attrs else None
        except KeyError as err:
            raise EvaluationError(
                f"event {e.id!r} (type {e.type!r}) has no column {err.args[0]!r}, needed by PARTITION BY"
            ) from None

    # ------------------------------------------------------------------ rows in

    def push(self, e: Event) -> list[Match]:
        """One row of this query's table; returns the matches it decides."""
        k = self.key(e)
        part = self.parts.get(k)
        if part is None:
            part = self.parts[k] = RowPartition()
        self.rows_seen += 1
        idx = part.count
        part.count += 1
        part.rows.append(e)
        if idx >= part.resume:
            closes = None
            w = self.net.window_value
            if w is not None:
                closes = e.pos + w - 1 if self.count_window else e.ts + w
                self._seq += 1
                heapq.heappush(self.closing, (closes, self._seq, k))
            start = self.net.start
            a = Attempt(idx, [(start, (), self.full[start])], closes)
            acc = self.accept_at[start]
            if acc is not None:  # the pattern can match no rows: the empty match is found first
                a.best = ()
                a.threads = [(start, (), acc)] if acc else []
                a.done = not a.threads
            part.attempts.append(a)
        for a in part.attempts:
            if not a.done:
                self._step(part, a, idx, e)
        out: list[Match] = []
        self._resolve(part, out)
        self._trim(part)
        return out

    def expire(self, ts: Any, pos: int) -> list[Match]:
        """Stream time reached ``(ts, pos)`` (any event of the input): searches whose window
        it has passed can take no more rows, so they are decided now, not on their
        partition's next row (what they find is the same; it only comes out sooner)."""
        out: list[Match] = []
        now = pos if self.count_window else ts
        closing = self.closing
        while closing and closing[0][0] < now:
            _, _, k = heapq.heappop(closing)
            part = self.parts.get(k)
            if part is None:
                continue
            for a in part.attempts:
                if a.closes is not None and a.closes < now:
                    a.done = True
                    a.threads = []
            self._resolve(part, out)
        return out

    def flush(self) -> list[Match]:
        """End of stream: every search stops; the best match found so far is final."""
        out: list[Match] = []
        for part in self.parts.values():
            for a in part.attempts:
                a.done = True
                a.threads = []
            self._resolve(part, out)
        self.parts.clear()
        self.closing.clear()
        return out

    def live(self) -> int:
        return sum(len(a.threads) for p in self.parts.values() for a in p.attempts)

    def waiting(self) -> bool:
        """Whether a search waits for WITHIN to close it (:meth:`expire` has work)."""
        return bool(self.closing)

    # ------------------------------------------------------------------ matching

    def _view(self, part: RowPartition, rows: tuple[MatchRow, ...], cur: int, number: int) -> MatchView:
        return MatchView(rows, cur, part.row_at, number, self.subsets)

    def _step(self, part: RowPartition, a: Attempt, idx: int, e: Event) -> None:
        net = self.net
        w = net.window_value
        new: list[Thread] = []
        guards = self.guards
        taken: set[int] | None = set() if net.memoryless else None
        for place, rows, limit in a.threads:
            if w is not None and rows:
                first = rows[0][2]
                if (e.pos - first.pos >= w) if self.count_window else (e.ts - first.ts > w):
                    continue
            for tid in net.exits[place][:limit]:
                if tid == ACCEPT:
                    continue
                tr = net.transitions[tid]
                if taken is not None and tr.dst in taken:
                    continue  # a preferred token is there already, with the same futures
                cand = (*rows, (idx, tr.var, e))
                guard = guards[tid]
                if guard is None or guard(self._view(part, cand, len(cand) - 1, 0)) is True:
                    new.append((tr.dst, cand, self.full[tr.dst]))
                    if taken is not None:
                        taken.add(tr.dst)
        for k, (place, rows, _) in enumerate(new):
            acc = self.accept_at[place]
            if acc is not None:
                a.best = rows  # preferred over every match this search found before
                new = new[:k] + ([(place, rows, acc)] if acc else [])
                break
        a.threads = new
        if not new:
            a.done = True

    def _resolve(self, part: RowPartition, out: list[Match]) -> None:
        attempts = part.attempts
        while attempts and attempts[0].done:
            a = attempts.popleft()
            if a.start < part.resume or a.best is None:
                continue
            part.matches += 1
            self.matches += 1
            out.extend(self._output(part, a.start, a.best))
            part.resume = self._resume(part, a.start, a.best)
            while attempts and attempts[0].start < part.resume:
                attempts.popleft()

    def _resume(self, part: RowPartition, start: int, rows: tuple[MatchRow, ...]) -> int:
        """Where the next search starts (an empty match: the next row, whatever the mode)."""
        skip = self.net.skip
        if skip.mode == S.SKIP_PAST_LAST:
            return rows[-1][0] + 1 if rows else start + 1
        if skip.mode == S.SKIP_NEXT_ROW:
            return start + 1
        members = self.subsets.get(skip.var or "", frozenset((skip.var,)))
        mapped = [idx for idx, var, _ in rows if var in members]
        first = part.row_at(start)
        where = f"the match starting at row {first.id if first else start!r}"
        if not mapped:
            raise EvaluationError(
                f"query {self.name!r}: AFTER MATCH SKIP {skip.mode.upper()} {skip.var}: no row of {where} "
                f"is mapped to {skip.var}"
            )
        target = mapped[0] if skip.mode == S.SKIP_FIRST else mapped[-1]
        if target <= start:
            raise EvaluationError(
                f"query {self.name!r}: AFTER MATCH SKIP {skip.mode.upper()} {skip.var} would restart at the first row "
                f"of {where} (an endless loop)"
            )
        return target

    def _trim(self, part: RowPartition) -> None:
        """Keep the rows an open search or a PREV may still read (in batches while searches
        are open; at once when none is, so an idle partition holds only PREV's rows)."""
        oldest = part.attempts[0].start if part.attempts else part.count
        keep = min(oldest, part.resume) - self.net.history
        drop = keep - part.base
        if drop > 0 and (drop >= _TRIM or not part.attempts):
            del part.rows[:drop]
            part.base = keep

    # ------------------------------------------------------------------ output

    def _output(self, part: RowPartition, start_idx: int, rows: tuple[MatchRow, ...]) -> list[Match]:
        net = self.net
        number = part.matches
        if not rows:  # an empty match: one line for ONE ROW PER MATCH, at its start row
            if net.all_rows:
                return []
            at = part.row_at(start_idx)
            ts = at.ts if at is not None else None
            return [Match(net.name, {}, ts, ts, self._attrs(part, rows, -1, number, at))]
        ids: dict[str, Any] = {}
        for v in net.vars:
            mine = [ev.id for _, var, ev in rows if var == v]
            if mine:
                ids[v] = mine if v in net.multi else mine[0]
        first, start, end = rows[0][2], rows[0][2].ts, rows[-1][2].ts
        if not net.all_rows:
            return [Match(net.name, ids, start, end, self._attrs(part, rows, len(rows) - 1, number, first))]
        return [
            RowMatch(net.name, ids, start, end, self._attrs(part, rows, k, number, first), rows[k][2].id)
            for k in range(len(rows))
        ]

    def _attrs(
        self, part: RowPartition, rows: tuple[MatchRow, ...], cur: int, number: int, first: Event | None
    ) -> dict[str, Any]:
        """A match's output columns (:meth:`~petricep.lang.sql_ast.MatchRecognize.columns`):
        MEASURES by name, PARTITION BY columns from ``first`` — the match's first row, or an
        empty match's start row — every row of a partition holding the same values."""
        view = self._view(part, rows, cur, number)
        values = {name: fn(view) for name, fn in self.measures}
        attrs = first.attrs if first is not None else {}
        return {c: values[c] if c in values else attrs.get(c) for c in self.net.select}


RuntimeFactory = Callable[[RowNet], RowRuntime]


class RowQueries:
    """An engine's SQL MATCH_RECOGNIZE queries: one runtime per distinct query (queries equal
    but for their name share it, and its partial matches, each name getting the matches),
    fed the rows of its table. ``matches``: the run's match counts, per query name.
    ``runtime``: builds a query's runtime (the compiled kernel's row matcher, where it covers
    the query: :mod:`petricep.kernel.rowengine`)."""

    def __init__(self, nets: Any, matches: dict[str, int], runtime: RuntimeFactory = RowRuntime) -> None:
        self.runtimes: list[RowRuntime] = []
        self.consumers: dict[str | None, list[RowRuntime]] = {}
        by_source: dict[Any, RowRuntime] = {}
        for rn in nets:
            matches[rn.name] = 0
            key = replace(rn.source, name="")
            rrt = by_source.get(key)
            if rrt is None:
                rrt = by_source[key] = runtime(rn)
                self.runtimes.append(rrt)
                self.consumers.setdefault(rn.table, []).append(rrt)
            else:
                rrt.aliases.append(rn.name)

    def push(self, e: Event, matches: dict[str, int], collect: bool) -> list[Match]:
        out = self.expire(e.ts, e.pos, matches, collect)
        for table in (e.type, None):
            for rrt in self.consumers.get(table, ()):
                out += _count(rrt, _call(rrt, rrt.push, e), matches, collect)
        return out

    def expire(self, ts: Any, pos: int, matches: dict[str, int], collect: bool) -> list[Match]:
        """Queries with WITHIN decide the searches stream time has closed (see RowRuntime.expire)."""
        out: list[Match] = []
        for rrt in self.runtimes:
            if rrt.waiting():
                out += _count(rrt, _call(rrt, rrt.expire, ts, pos), matches, collect)
        return out

    def flush(self, matches: dict[str, int], collect: bool) -> list[Match]:
        out: list[Match] = []
        for rrt in self.runtimes:
            out += _count(rrt, _call(rrt, rrt.flush), matches, collect)
        return out

    def live(self) -> int:
        return sum(r.live() for r in self.runtimes)


def _call(rrt: RowRuntime, fn: Any, *args: Any) -> list[Match]:
    """``fn(*args)`` of a SQL query's runtime; a number overflow names the query."""
    try:
        return fn(*args)  # type: ignore[no-any-return]
    except EvaluationError as exc:
        if getattr(exc, OVERFLOW_FLAG, False):
            raise with_pattern(exc, f"query {rrt.name!r}") from None
        raise


def _count(rrt: RowRuntime, found: list[Match], matches: dict[str, int], collect: bool) -> list[Match]:
    if not found:
        return found
    for name in (rrt.name, *rrt.aliases):
        matches[name] = rrt.matches
    return rrt.with_aliases(found) if collect else []
