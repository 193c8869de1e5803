"""Why a pattern found nothing, and whether its window means what its author meant: told
from the patterns and the input alone, never from an engine's state, so that a run on the
compiled kernel and one on the Python engine say the same words.

A pattern without matches is run again by the Python engine over the first
:data:`EXPLAIN_EVENTS` events of the input, once per constraint loosened: without its
window, under a weaker strategy, without its keys, without its negations, without its stop
events (UNTIL), without each of its conditions. Each loosening that finds a match names a cause ("the closest match spans
1 day, more than WITHIN 3"). This costs a few runs over a bounded prefix, and only runs at
the end of a run that found nothing for a pattern: nothing of it is on the run's path.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import islice
from typing import Any

from petricep.compile.net import Net
from petricep.errors import PetricepError
from petricep.events import Event
from petricep.io.source import EventSource
from petricep.io.streams import is_stream
from petricep.lang import ast as A
from petricep.lang.printer import conditions_text, expr_text, window_text
from petricep.merge import build_net
from petricep.runtime.engine import Engine

#: events of the input the explanation reads (a bounded prefix: it runs a few times)
EXPLAIN_EVENTS = 10_000
#: the live partial matches one explaining run may hold (a loosened pattern may explode)
EXPLAIN_BUDGET = 100_000
#: the matches of a run without window read for the closest one
CLOSEST_OF = 10_000
#: the conditions tried one at a time
MAX_CONDITIONS = 8
#: events of the input whose times tell how far apart the events are
SPACING_EVENTS = 1_000

_UNITS = ((86400, "day", "DAYS"), (3600, "hour", "HOURS"), (60, "minute", "MINUTES"), (1, "second", "s"))


def input_events(source: EventSource, limit: int) -> tuple[list[Event], bool] | None:
    """The first ``limit`` events of ``source``, read again, every row (no prefilter: the
    conditions the explanation loosens decide what a row is good for), and whether the
    input has more; None when the input cannot be read twice (standard input, a FIFO, a
    process substitution: opened again, a FIFO waits for a writer that never comes and a
    drained pipe reads as empty, which would explain nothing right) or fails."""
    if any(is_stream(path) for path in (source.spec.path, *source.spec.more_paths)):
        return None
    keep = source.row_filter
    counts = source.counts
    source.row_filter = None
    try:
        got = list(islice(iter(source), limit + 1))
    except (PetricepError, OSError):  # (a file gone since the run read it)
        return None
    finally:
        source.row_filter = keep
        source.counts = counts  # the run's own accounting stays what it was
    return got[:limit], len(got) > limit


# ----------------------------------------------------------------------------- windows without a unit


def _about(seconds: float) -> str:
    """A duration in the largest unit it holds at least once: "~1 day", "~3 hours"."""
    for size, word, _ in _UNITS:
        if seconds >= size or size == 1:
            n = seconds / size
            shown = f"{n:.0f}" if n >= 10 or float(n).is_integer() else f"{n:.1f}"
            return f"~{shown} {word}{'' if shown == '1' else 's'}"
    raise AssertionError("unreachable")


def _spacing(times: Sequence[float]) -> float | None:
    """How far apart the events are: the median gap between distinct times (events at one
    time, several keys at each, count once)."""
    distinct = sorted(set(times))
    gaps = [b - a for a, b in zip(distinct, distinct[1:])]
    return statistics.median(gaps) if gaps else None


def unitless_window_warnings(items: Sequence[Any], times: Sequence[float] | None) -> list[str]:
    """A warning per pattern (or query) whose time window has no unit (``WITHIN 3``) over an
    input whose times are date-times: the number is seconds there, which a user of daily
    data rarely means. ``times``: the first events' times (seconds), to say how far apart
    the events are and which unit that suggests; None when they cannot be read again.
    A window at least as long as the events' spacing is taken as meant (``WITHIN 3600``
    over events minutes apart); without the times, every such window is warned about
    (writing its unit says what it means)."""
    spacing = _spacing(times) if times else None
    out = []
    for p in items:
        w = p.window
        if w is None or w.kind != A.WIN_TIME or (spacing is not None and w.value >= spacing):
            continue
        what = "pattern" if isinstance(p, A.Pattern) else "query"
        n = window_text(w)
        line = (
            f"warning: {what} {p.name!r}: WITHIN {n} has no unit and the events' times are date-times: "
            f"it means {n} second{'' if w.value == 1 else 's'}"
        )
        if spacing is not None:
            unit = next(u for size, _, u in _UNITS if spacing >= size or size == 1)
            line += f"; the events are {_about(spacing)} apart"
            line += f": did you mean WITHIN {n} {unit}?" if unit != "s" else f" (write WITHIN {n} s to say so)"
        else:
            line += f" (write a unit: WITHIN {n} s, min, h or DAYS)"
        out.append(line)
    return out


# ----------------------------------------------------------------------------- no matches


def _fresh(events: Iterable[Event]) -> Iterator[Event]:
    """Copies of the events: an engine numbers the events it is given."""
    for e in events:
        yield Event(e.type, e.ts, e.pos, e.id, e.attrs)


def _matches(p: A.Pattern, events: Sequence[Event], upto: int = 1, tie: str = "arrival") -> list[Any] | None:
    """The first ``upto`` matches of ``p`` over ``events`` (a pattern alone, consuming
    nothing, without LIMIT or timeouts), or None when the run cannot tell (its partial
    matches pass :data:`EXPLAIN_BUDGET`, or a condition fails on an event)."""
    try:
        engine = Engine(build_net([p]), tie=tie, max_partial_matches=EXPLAIN_BUDGET)
        found = []
        for m in engine.run(_fresh(events)):
            if m.timeout is None:
                found.append(m)
                if len(found) >= upto:
                    break
        return found
    except PetricepError:
        return None


def _alone(p: A.Pattern) -> A.Pattern:
    return replace(p, consume=None, timeout=None, limit=None, returns=None)


def _window_line(p: A.Pattern, events: Sequence[Event], seconds: bool) -> str | None:
    w = p.window
    if w is None:
        return None
    found = _matches(replace(p, window=None), events, CLOSEST_OF)
    if not found:
        return None
    if w.kind == A.WIN_COUNT:
        return f"no match fits in its window WITHIN {window_text(w)}: without it, it would match"
    span = min(float(m.end) - float(m.start) for m in found)
    shown = f"{span:,g} s ({_about(span)})" if seconds else f"{span:,g}"
    allows = f" ({A.window_amount(w):,g} s)" if seconds and w.kind == A.WIN_DURATION else ""
    return f"no match fits in its window WITHIN {window_text(w)}{allows}: without it, the shortest spans {shown}"


def _strategy_line(p: A.Pattern, events: Sequence[Event]) -> str | None:
    s = p.strategy
    if s == A.Strategy.ANY:
        return None
    if s == A.Strategy.STRICT and p.partition:
        keys = "".join(f"[{k}]" for k in p.partition)
        if _matches(replace(p, strategy=A.Strategy.PARTITION), events):
            return (
                f"strict-contiguity needs its events next to each other in the whole input, and events of other "
                f"{keys} values come in between: partition-contiguity (next to each other within one {keys}) would match"
            )
    if _matches(replace(p, strategy=A.Strategy.ANY), events):
        return f"under {s.value} no other event may come between its events as it does: skip-till-any-match would match"
    return None


def _lines(p: A.Pattern, events: Sequence[Event], seconds: bool, tie: str) -> list[str]:
    """What keeps ``p`` from matching ``events``: a line per loosening that finds a match."""
    alone = _alone(p)
    if _matches(alone, events, tie=tie):  # the pattern itself matches: the run's company does not let it
        return [
            "alone over the same events it matches: in this run the matches of other patterns consume its "
            "events (CONSUME, CONFLICT), or its LIMIT drops its partial matches"
        ]
    if tie != "arrival" and _matches(alone, events):
        return [f"under --tie {tie} no match: events at equal times are not ordered there, and --tie arrival would match"]
    return _loosened(alone, events, seconds)


def _loosened(p: A.Pattern, events: Sequence[Event], seconds: bool) -> list[str]:
    strategy = _strategy_line(p, events)
    out = [line for line in (_window_line(p, events, seconds), strategy) if line]
    if p.partition and not (strategy and p.strategy == A.Strategy.STRICT):  # (that line is about the keys)
        keys = "".join(f"[{k}]" for k in p.partition)
        if _matches(replace(p, partition=()), events):
            out.append(f"no key {keys} has a match: without {keys}, events of different {', '.join(p.partition)} values would match")
    negated = [r for r in A.events_of(p.structure) if r.negated]
    if negated:
        bare = _without_negations(p)
        if bare is not None and _matches(bare, events):
            shown = ", ".join(f"!({r.type} {r.var})" for r in negated)
            out.append(f"an event its negation {shown} forbids comes in every candidate: without it, it would match")
    stops = A.all_stops_of(p.structure)
    if stops and _matches(_without_stops(p), events):
        shown = ", ".join(f"UNTIL {u.type} {u.var}" for _, u in stops)
        out.append(f"a stop event ({shown}) ends every candidate's list too early: without it, it would match")
    out.extend(_condition_lines(p, events))
    if out:
        return out
    loosest = _matches(_loosest(p), events)
    if loosest == []:
        return ["its events never come in its order, whatever its window, strategy, keys and conditions"]
    if loosest:
        return ["nothing alone keeps it from matching: its window, strategy, keys and conditions together do"]
    return []  # the runs could not tell (too many partial matches, a condition that fails on an event)


def _condition_lines(p: A.Pattern, events: Sequence[Event]) -> list[str]:
    if not p.conditions:
        return []
    out = []
    conditions = p.conditions[:MAX_CONDITIONS]
    for i, c in enumerate(conditions):
        if _matches(replace(p, conditions=p.conditions[:i] + p.conditions[i + 1 :]), events):
            out.append(f"no events satisfy its condition {expr_text(c)}: without it, it would match{_kind_clash(c, p, events)}")
    if not out and len(p.conditions) > 1 and _matches(replace(p, conditions=()), events):
        out.append(f"no events satisfy its conditions together ({conditions_text(p.conditions)}): without them, it would match")
    return out


def _kind_clash(c: A.Expr, p: A.Pattern, events: Sequence[Event]) -> str:
    """``; b.sym holds text ('x'), 1 is a number`` where ``c`` compares a field with a
    literal of the other kind (text against number: ``=`` is then never true) and every
    event of the variable's type read has text (or numbers) in that field, else empty."""
    types = {r.var: r.type for r in A.events_of(p.structure)}
    for e in A.walk_expr(c):
        if not isinstance(e, A.Compare):
            continue
        for side, lit in ((e.left, e.right), (e.right, e.left)):
            if not (isinstance(side, A.Attr) and side.member is None and isinstance(lit, (A.Num, A.Str))):
                continue
            values = [ev.attrs.get(side.field) for ev in events if ev.type == types.get(side.var)]
            values = [v for v in values if v is not None]
            text = isinstance(lit, A.Str)
            if values and all(isinstance(v, str) != text and not isinstance(v, bool) for v in values):
                held = "numbers" if text else "text"
                return f"; {side.var}.{side.field} holds {held} ({values[0]!r}), {expr_text(lit)} is {'text' if text else 'a number'}"
    return ""


def _without_negations(p: A.Pattern) -> A.Pattern | None:
    """``p`` without its negated events (and the conditions that read them), or None when
    that leaves no pattern to run."""
    negated = {r.var for r in A.events_of(p.structure) if r.negated}

    def strip(n: A.Node) -> A.Node | None:
        if isinstance(n, A.EventRef):
            return None if n.negated else n
        if isinstance(n, A.Group):  # no negation inside a group (checked)
            return n
        kept = tuple(c for c in (strip(c) for c in n.children) if c is not None)
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else type(n)(kept, span=n.span)

    structure = strip(p.structure)
    if structure is None:
        return None
    conditions = tuple(c for c in p.conditions if not A.vars_of(c) & negated)
    return replace(p, structure=structure, conditions=conditions)


def _without_stops(p: A.Pattern) -> A.Pattern:
    """``p`` without its stop events (``UNTIL U u``) and the conditions that read them."""
    stops = {u.var for _, u in A.all_stops_of(p.structure)}

    def strip(n: A.Node) -> A.Node:
        if isinstance(n, A.EventRef):
            return replace(n, until=None)
        if isinstance(n, A.Group):  # no list inside a group (checked); its own stop
            return replace(n, until=None)
        return type(n)(tuple(strip(c) for c in n.children), span=n.span)

    conditions = tuple(c for c in p.conditions if not A.vars_of(c) & stops)
    return replace(p, structure=strip(p.structure), conditions=conditions)


def _loosest(p: A.Pattern) -> A.Pattern:
    bare = _without_negations(_without_stops(p)) or _without_stops(p)
    return replace(bare, window=None, strategy=A.Strategy.ANY, partition=(), conditions=())


def explain_no_matches(
    net: Net,
    report: dict[str, Any],
    seen: set[str],
    events: Sequence[Event],
    more: bool,
    seconds: bool,
    tie: str = "arrival",
) -> dict[str, list[str]]:
    """Per pattern of ``net`` without matches whose event types were all read (the others
    have :func:`~petricep.api.report.type_hints`): what kept it from matching ``events``
    (the input's first events, in time order as a slack would have put them; ``more``: the
    input has more; ``seconds``: times are seconds, from date-times or a time unit; ``tie``:
    the run's tie rule)."""
    events = sorted(events, key=lambda e: e.ts)  # (stable: a run without slack had them so)
    made = {pn.output_type for pn in net.patterns if pn.output_type}
    hints: dict[str, list[str]] = {}
    for pn in net.patterns:
        p = pn.source
        if report["patterns"].get(pn.name, {}).get("matches", 0) or not set(pn.input_types) <= seen:
            continue
        if set(pn.input_types) & made or any(r.archived for r in A.events_of(p.structure)):
            continue  # composite or archived events: not in the input
        where = f" (in the first {len(events):,} events)" if more else ""
        lines = _lines(p, events, seconds, tie)
        if lines:
            hints[pn.name] = [f"pattern {pn.name!r}: {line}{where}" for line in lines]
    return hints


__all__ = ["EXPLAIN_EVENTS", "SPACING_EVENTS", "explain_no_matches", "input_events", "unitless_window_warnings"]
