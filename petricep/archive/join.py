"""Joining live matches with their history (paper 004's LLAA and SLLAA).

A history-aware pattern's live part runs in the shared net like any pattern; each of its
matches is handed to :class:`HistoryJoin`, which

* **LLAA** (lazy): at once loads the archive range the match needs (per archived variable:
  ``anchor.ts - hi .. anchor.ts - lo``, for the match's key), runs the archived part over it
  and joins: every archived match that precedes the live match's first event and satisfies
  the joining conditions gives one output match;
* **SLLAA** (sub-windows): holds live matches until stream time passes the first held one's
  end by the latency tolerance, then groups the held matches of a key whose ranges overlap
  and loads each group's range once, running the archived part once per group.

Both give exactly the same matches (SLLAA later, with fewer archive reads). The
**order** is chosen from measured selectivity: *archive-first* (when the archived part
matches rarely) first asks the archive, per key and range, whether any archived match exists
and lets the live part's events of a key through only when one does; *live-first* runs the
live part on every event. ``auto`` measures both selectivities as the run goes (matches per
event read) and switches to archive-first while the archive's is the lower one.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from petricep.archive.store import Archive, Order
from petricep.compile.archived import HistorySpec, split_patterns
from petricep.errors import ConfigError, EvaluationError, StateLimitError
from petricep.events import Event
from petricep.kernel.choice import ARCHIVE, Budget, Options, choose, matcher
from petricep.kernel.engine import KernelEngine
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.runtime.engine import MAX_PARTIAL_MATCHES, Engine, Match
from petricep.runtime.expr import as_condition, compile_expr
from petricep.runtime.matcher import Matcher

MODES = ("llaa", "sllaa")
GATE_CHUNK = 86400.0  # archive-first reads history a day of ranges at a time (per key)


@dataclass
class HistoryStats:
    live_matches: int = 0
    loads: int = 0  # archive ranges read
    rows: int = 0  # archived events loaded
    archived_matches: int = 0  # matches of archived parts over the loaded ranges
    joined: int = 0  # output matches
    gated: int = 0  # live events skipped by archive-first (no history for their key and range)
    per_pattern: dict[str, int] = field(default_factory=dict)


class _Joiner:
    """One history pattern: compiled archived part and joining conditions."""

    def __init__(self, spec: HistorySpec, run: int) -> None:
        self.spec = spec
        self.run = run
        self.net = build_net([spec.archived])
        names = {v: i for i, v in enumerate(spec.archived_vars + spec.live_vars)}
        self.cross = [as_condition(compile_expr(c, names, {}, None)) for c in spec.cross]
        # the live variables each joining condition reads: one reading a step the live match
        # leaves out (an optional step) holds, as any conjunct reading it
        self.cross_live = [A.vars_of(c) & set(spec.live_vars) for c in spec.cross]
        self.types = sorted({r.type for r in _refs(spec.archived)})
        self.partition = spec.source.partition
        self.lo, self.hi = spec.reach()
        self.live_types = {r.type for r in _refs(spec.live)}
        # negated live types and stop events' (UNTIL): their events only cancel or stop a
        # list, so the gate always lets them through
        self.negated_types = {r.type for r in A.events_of(spec.live.structure) if r.negated} | {
            u.type for _, u in A.all_stops_of(spec.live.structure)
        }
        w = spec.live.window
        single = len(spec.live_vars) == 1 and not any(r.kleene for r in _refs(spec.live))
        # how far apart a live match's events can be: none for one event, else the window
        self.span = 0.0 if single else float("inf") if w is None else float(w.value) * (_unit(w.unit) if w.unit else 1.0)

    def key(self, bound: dict[str, Any]) -> dict[str, Any]:
        first = _first_event(bound[next(v for v in self.spec.live_vars if v in bound)])  # (an optional one may be unbound)
        return {a: first.attrs.get(a) for a in self.partition}

    def range(self, bound: dict[str, Any]) -> tuple[float, float]:
        t0, t1 = float("inf"), float("-inf")
        for r in self.spec.ranges:
            ts = _first_event(bound[r.anchor]).ts  # (a list's gap into the archive: its first element)
            t0, t1 = min(t0, ts - r.hi), max(t1, ts - r.lo)
        return t0, t1

    def archived_matches(self, loaded: list[tuple[Order, Event]]) -> list[tuple[dict[str, Any], Order, Match]]:
        """Matches of the archived part over loaded events (renumbered in archive order)."""
        events = [Event(e.type, e.ts, n, e.id, e.attrs) for n, (_, e) in enumerate(loaded)]
        orders = [o for o, _ in loaded]
        out = []
        for m in Engine(self.net).run(events):
            bound = m.bindings()
            last = max(_last_event(v).pos for v in bound.values())
            out.append((bound, orders[last], m))
        return out

    def join(self, live: Match, archived: list[tuple[dict[str, Any], Order, Match]]) -> list[Match]:
        bound = live.bindings()
        first = min((_first_event(v) for v in bound.values()), key=lambda e: (e.ts, e.pos))
        limit: Order = (first.ts, self.run, first.pos)
        out = []
        for abound, last_order, am in archived:
            if not last_order < limit:  # SEQ: the history precedes the live part
                continue
            # a list's slot is its first element: only a list's gap into the archive reads it
            live_slots = tuple(_first_event(bound[v]) if v in bound else None for v in self.spec.live_vars)
            slots = tuple(abound[v] for v in self.spec.archived_vars) + live_slots
            if all(c(slots, None) for c, vs in zip(self.cross, self.cross_live) if vs <= bound.keys()):
                ids = {**am.ids, **live.ids}
                ids = {v: ids[v] for v in self.spec.archived_vars + self.spec.live_vars if v in ids}
                start = min(am.start, live.start)
                out.append(Match(self.spec.name, ids, start, max(am.end, live.end), {}))
        return out


class HistoryJoin:
    """Joins the live matches of history-aware patterns with the archive."""

    def __init__(
        self,
        specs: Sequence[HistorySpec],
        archive: Archive,
        mode: str = "sllaa",
        tolerance: float = 0.0,
        order: str = "live-first",
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"unknown history mode {mode!r} (use {', '.join(MODES)})")
        if order not in ("live-first", "archive-first", "auto"):
            raise ConfigError(f"unknown history order {order!r} (use live-first, archive-first or auto)")
        if tolerance < 0:
            raise ConfigError("the latency tolerance must be >= 0")
        self.archive = archive
        self.mode = mode
        self.tolerance = tolerance
        self.order = order
        self.joiners = {s.name: _Joiner(s, archive.run) for s in specs}
        self.held: dict[str, list[tuple[Match, Any]]] = {s.name: [] for s in specs}
        self.stats = HistoryStats(per_pattern={s.name: 0 for s in specs})
        self._live_events = 0
        self._gate_cache: dict[tuple[str, int], dict[tuple[Any, ...], list[tuple[Any, Any]]]] = {}
        self.run_start: Any = None

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.joiners)

    # ------------------------------------------------------------------ archive-first

    def see(self, e: Event) -> None:
        """A live event arrived (selectivity is measured per event read)."""
        self._live_events += 1
        if self.run_start is None:
            self.run_start = e.ts

    def admits(self, e: Event) -> bool:
        """Archive-first: whether the live event ``e`` can start or extend a match with history
        (for some pattern reading it, an archived match lies in the range it could need)."""
        if not self._archive_first():
            return True
        for j in self.joiners.values():
            if e.type in j.negated_types:
                return True
            if e.type not in j.live_types:
                continue
            # every match holding e has its anchors within the live window of e, so its history
            # lies in [e.ts - span - hi, e.ts + span - lo]
            t0, t1 = e.ts - j.span - j.hi, e.ts + j.span - j.lo
            key = dict(zip(j.partition, (e.attrs.get(a) for a in j.partition)))
            if self._history_in(j, key, t0, t1):
                return True
        self.stats.gated += 1
        return False

    def _history_in(self, j: _Joiner, key: dict[str, Any], t0: float, t1: float) -> bool:
        """Whether an archived match of ``j`` lies within [t0, t1]. Ranges wholly before this run
        are answered from chunks of the archive read once per key (a day of ranges each, read
        with enough overlap that a chunk answers every range starting in it); later ranges
        read the archive (it grows with this run)."""
        if not (self.run_start is not None and t1 < self.run_start) or t1 - t0 == float("inf"):
            return bool(j.archived_matches(self._load(j, key, t0, t1)))
        chunk = GATE_CHUNK
        c = int(t0 // chunk)
        by_key = self._gate_cache.get((j.spec.name, c))
        if by_key is None:
            # one read per chunk for every key: the archived part runs per key on its events
            loaded = self._load(j, {}, c * chunk, (c + 1) * chunk + (t1 - t0))
            groups: dict[tuple[Any, ...], list[tuple[Order, Event]]] = {}
            for item in loaded:
                groups.setdefault(tuple(item[1].attrs.get(a) for a in j.partition), []).append(item)
            by_key = {
                k: sorted(
                    (min(_first_event(v).ts for v in b.values()), max(_last_event(v).ts for v in b.values()))
                    for b, _, _ in j.archived_matches(evs)
                )
                for k, evs in groups.items()
            }
            self._gate_cache[(j.spec.name, c)] = by_key
        spans = by_key.get(tuple(key.values()), [])
        i = bisect.bisect_left(spans, (t0, float("-inf")))
        return any(last <= t1 for first, last in spans[i:] if first <= t1)

    def _archive_first(self) -> bool:
        if self.order == "archive-first":
            return True
        if self.order == "live-first":
            return False
        # auto: archive-first while the archive's measured selectivity is the lower one
        if self.stats.loads < 3 or self._live_events == 0:
            return False
        live_sel = self.stats.live_matches / self._live_events
        arch_sel = self.stats.archived_matches / max(self.stats.rows, 1)
        return arch_sel < live_sel

    # ------------------------------------------------------------------ live matches in

    def offer(self, m: Match, now: Any) -> list[Match]:
        """A live match of a history pattern, completed at stream time ``now``."""
        self.stats.live_matches += 1
        if self.mode == "llaa":
            return self._resolve(self.joiners[m.pattern], [m])
        self.held[m.pattern].append((m, now))
        return []

    def advance(self, now: Any) -> list[Match]:
        """Stream time reached ``now``: SLLAA releases the groups whose tolerance has passed."""
        out: list[Match] = []
        for name, held in self.held.items():
            if held and now - held[0][1] > self.tolerance:
                out += self._release(name)
        return out

    def flush(self) -> list[Match]:
        out: list[Match] = []
        for name in self.held:
            out += self._release(name)
        self.archive.flush()
        return out

    def _release(self, name: str) -> list[Match]:
        held = self.held[name]
        self.held[name] = []
        if not held:
            return []
        j = self.joiners[name]
        by_key: dict[tuple[Any, ...], list[Match]] = {}
        for m, _ in held:
            by_key.setdefault(tuple(j.key(m.bindings()).values()), []).append(m)
        out: list[Match] = []
        for matches in by_key.values():
            # sub-windows: matches whose ranges overlap load their union once
            ranged = sorted(((j.range(m.bindings()), m) for m in matches), key=lambda x: x[0])
            group: list[Match] = []
            g0 = g1 = 0.0
            for (t0, t1), m in ranged:
                if group and t0 > g1:
                    out += self._resolve(j, group, (g0, g1))
                    group = []
                if not group:
                    g0, g1 = t0, t1
                group.append(m)
                g1 = max(g1, t1)
            if group:
                out += self._resolve(j, group, (g0, g1))
        return out

    def _resolve(self, j: _Joiner, matches: list[Match], span: tuple[float, float] | None = None) -> list[Match]:
        bound = matches[0].bindings()
        t0, t1 = span if span is not None else j.range(bound)
        loaded = self._load(j, j.key(bound), t0, t1)
        archived = j.archived_matches(loaded)
        self.stats.archived_matches += len(archived)
        out: list[Match] = []
        for m in matches:
            out += j.join(m, archived)
        self.stats.joined += len(out)
        self.stats.per_pattern[j.spec.name] += len(out)
        return out

    def _load(self, j: _Joiner, key: dict[str, Any], t0: float, t1: float) -> list[tuple[Order, Event]]:
        loaded = self.archive.read(j.types, t0, t1, key)
        self.stats.loads += 1
        self.stats.rows += len(loaded)
        return loaded


def _refs(p: A.Pattern) -> list[A.EventRef]:
    return [r for r in A.events_of(p.structure) if not r.negated]


def _unit(unit: str) -> float:
    return float(A.DURATION_UNITS[unit])


def _first_event(v: Any) -> Event:
    return v[0] if isinstance(v, list) else v  # type: ignore[no-any-return]


def _last_event(v: Any) -> Event:
    return v[-1] if isinstance(v, list) else v  # type: ignore[no-any-return]


class HistoryRunner:
    """An engine, the archive and the join together: what ``petricep run --archive`` does.

    Every pushed event is archived (then matched); the matches of history-aware patterns'
    live parts go through the join, the others straight out.

    ``engine="kernel"``: the live net on the compiled kernel where it covers it (its
    matches carry their bound events for the join), else the Python engine; which one ran and
    why is :attr:`engine_choice`, fixed here (``python_why``: why, where the caller asks for
    the Python engine; ``stdin``: the events come from standard input, and the kernel fires
    each one as it is read). The kernel fires a batch of events at a time;
    the runner then replays the batch event by event -- archive, join, the matches each event
    emitted -- so the output is the Python engine's, in its order. Archive-first and auto
    orders decide per event whether the engine sees it, from the matches so far: they run
    the Python engine."""

    def __init__(
        self,
        patterns: Sequence[Any],
        archive: Archive,
        mode: str = "sllaa",
        tolerance: float = 0.0,
        order: str = "live-first",
        tie: str = "arrival",
        conflicts: Sequence[Any] = (),
        queries: Sequence[Any] = (),
        max_partial_matches: int | None = MAX_PARTIAL_MATCHES,
        engine: str = "python",
        python_why: str = "asked for",
        stdin: bool = False,
    ) -> None:
        plain, specs = split_patterns(list(patterns))
        if specs and tie != "arrival":
            raise ConfigError("patterns with ARCHIVED variables run under the arrival tie rule")
        net = build_net(plain, True, list(conflicts), list(queries))
        if engine not in ("python", "kernel"):
            raise ConfigError(f"engine must be 'python' or 'kernel', not {engine!r}")
        # the live net on the kernel where it covers it (live-first only; no composite events,
        # whose matches carry no events on the kernel), else the Python engine
        options = Options(tie, engine, python_why, stdin=stdin, bindings=ARCHIVE, archive_order=order)
        self.engine_choice = choose(net, options)
        self.engine: Matcher = matcher(self.engine_choice, net, options, Budget(max_partial_matches))
        self.archive = archive
        self.join = HistoryJoin(specs, archive, mode, tolerance, order)
        # archive-first may hold events back from the engine only when no other pattern reads them
        self.gate = bool(specs) and len(specs) == len(plain) and order != "live-first"
        self._pending: list[Event] = []  # the kernel's: events collected, not replayed yet
        self._error: Exception | None = None

    def push(self, e: Event) -> list[Match]:
        if isinstance(self.engine, KernelEngine):
            return self._push_batched(self.engine, e)
        self.archive.append(e)
        self.join.see(e)
        out = self.join.advance(e.ts)
        if self.gate and not self.join.admits(e):
            return out
        return out + self._route(self.engine.push(e), e.ts)

    def flush(self) -> list[Match]:
        """End of stream. (On the kernel, call :meth:`drain` first to get the matches before
        an error in the last batch: flush raises it.)"""
        if isinstance(self.engine, KernelEngine):
            if self._error is None:
                out = self._replay(self.engine, self.engine.flush_pairs)
            if self._error is not None:
                raise self._error
            return out + self.join.flush()
        out = self._route(self.engine.flush(), None)
        return out + self.join.flush()

    def drain(self) -> list[Match]:
        """The matches of the events collected so far (the kernel's batch), the stream going
        on: before a reader's error or a stop ends the run."""
        if not isinstance(self.engine, KernelEngine) or self._error is not None:
            return []
        return self._replay(self.engine, self.engine.drain_pairs)

    def _push_batched(self, kernel: KernelEngine, e: Event) -> list[Match]:
        """:meth:`push` on the kernel: collect ``e``; when its batch fires, replay it."""
        if self._error is not None:
            raise self._error
        self._pending.append(e)
        return self._replay(kernel, lambda: kernel.push_pairs(e))

    def _replay(self, kernel: KernelEngine, fire: Any) -> list[Match]:
        """Fire the kernel (``fire()``: (match, emitting position) pairs; nothing to replay
        while it only collects), then for each collected event in order what :meth:`push`
        does with the Python engine: archive it, advance the join, route the matches it
        emitted; then the matches of the end of the stream (position -1). An evaluation
        error: the events before the failing one are replayed and it is archived, as the
        engine's run does; the error is raised by the next call, after their matches."""
        failed = None
        try:
            pairs = fire()
        except (EvaluationError, StateLimitError) as exc:
            pairs, failed, self._error = getattr(exc, "pairs", []), getattr(exc, "event", None), exc
        if kernel.collected and self._error is None:
            return []
        by_pos: dict[int, list[Match]] = {}
        for m, at in pairs:
            by_pos.setdefault(at, []).append(m)
        out: list[Match] = []
        pending, self._pending = self._pending, []
        for ev in pending:
            self.archive.append(ev)
            self.join.see(ev)
            try:
                released = self.join.advance(ev.ts)
                if ev is failed:
                    return out  # (its own release is lost with the error, as with the engine)
                out += released + self._route(by_pos.pop(ev.pos, []), ev.ts)
            except (EvaluationError, StateLimitError) as exc:  # the join's: the same
                exc.event = ev  # type: ignore[union-attr]
                self._error = exc
                return out
        out += self._route(by_pos.pop(-1, []), None)
        assert not by_pos, f"matches emitted at positions no collected event has: {sorted(by_pos)}"
        return out

    def run(self, events: Any) -> Any:
        for e in events:
            yield from self.push(e)
        yield from self.drain()
        yield from self.flush()

    def _route(self, matches: list[Match], now: Any) -> list[Match]:
        names = self.join.names
        out: list[Match] = []
        for m in matches:
            if m.pattern in names:
                out += self.join.offer(m, m.end if now is None else now)
            else:
                out.append(m)
        return out


__all__ = ["MODES", "HistoryJoin", "HistoryRunner", "HistoryStats"]
