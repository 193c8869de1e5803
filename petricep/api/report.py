"""What petricep tells the user about a program and a run: warnings about unbounded state,
what the merge shared, and a run's accounting as lines of text.

These live in the library API, not in the command line, so that a program embedding
petricep (or the Spark driver) prints what ``petricep check`` / ``petricep run`` print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from petricep.compile.net import Net
from petricep.lang import ast as A
from petricep.lang.growth import state_warnings
from petricep.lang.printer import conditions_text

if TYPE_CHECKING:  # the archive (pyarrow.dataset) is loaded only by runs that use it
    from petricep.archive.join import HistoryRunner


def warnings_for(patterns: Sequence[A.Pattern], queries: Sequence[Any] = ()) -> list[str]:
    """Patterns whose state can grow without bound or combinatorially
    (:func:`petricep.lang.growth.state_warnings`), then SQL queries without a window."""
    out = state_warnings(patterns)
    for q in queries:
        if q.window is None:
            out.append(
                f"warning: query {q.name!r} has no WITHIN window: a match that keeps growing holds back "
                "every later start row of its partition"
            )
    return out


# epoch timestamps in these units are above these magnitudes (seconds reach 1e11 in 5138)
EPOCH_UNITS = (("ns", 1e17, "nanoseconds"), ("us", 1e14, "microseconds"), ("ms", 1e11, "milliseconds"))


def time_unit_warning(
    patterns: Sequence[A.Pattern], queries: Sequence[Any], time_field: str, first: Any, option: str = "--time-unit {}"
) -> str | None:
    """A warning when numeric timestamps read as seconds look like epoch milli-, micro- or
    nanoseconds (``first``: the first row's time value) while a pattern's window is a
    duration (``WITHIN 30 min``, seconds): the window would silently be 1000 times too
    short. None when the value is no such number or no window is a duration. ``option``:
    how the fix is spelled (the command line's flag, the library's keyword)."""
    try:
        value = abs(float(first))
    except (TypeError, ValueError):
        return None
    unit = next(((u, name) for u, bound, name in EPOCH_UNITS if value > bound), None)
    if unit is None:
        return None
    for p in [*patterns, *queries]:
        w = p.window
        if w is not None and w.kind == A.WIN_DURATION:
            return (
                f"warning: timestamps in {time_field!r} look like epoch {unit[1]} ({first}) while "
                f"{'pattern' if isinstance(p, A.Pattern) else 'query'} {p.name!r} has a window of "
                f"{w.value} {w.unit} (in seconds): give {option.format(unit[0])}"
            )
    return None


def sharing_lines(net: Net) -> list[str]:
    """What the merge shared, and by which combination (front: a common prefix, partial
    matches shared; rear: a common continuation, partial matches kept apart; whole: a pattern
    whose every place is shared with another)."""
    lines = []
    for g in net.groups:
        names = [net.patterns[i].name for i in g.patterns]
        whole = []
        places_of: dict[int, list[Any]] = {i: [] for i in g.patterns}  # one pass: linear in the places
        for place in g.places:
            for u in place.users:
                places_of[u].append(place)
        for i in g.patterns:
            mine = places_of[i]
            if len(mine) > 1 and all(len(p.users) > 1 for p in mine):
                whole.append(net.patterns[i].name)
        for how, label, users in g.sharing:
            lines.append(f"  shared ({how} combination): place {label!r} by {named(users)}")
        if whole and len(names) > 1:
            lines.append(f"  shared whole: every place of {named(whole)} serves other patterns too")
    return lines


SHOWN_NAMES = 12


def named(names: Sequence[str]) -> str:
    """Pattern names in a line: the first :data:`SHOWN_NAMES`, then how many more (a set of
    thousands of patterns would otherwise print a line of thousands of names)."""
    if len(names) <= SHOWN_NAMES:
        return ", ".join(names)
    return f"{', '.join(names[:SHOWN_NAMES])} and {len(names) - SHOWN_NAMES:,} more"


Marking = tuple[Mapping[tuple[int, int], tuple[int, int]], Mapping[tuple[int, int], int]]


def condition_hints(net: Net, marking: Marking, report: dict[str, Any], seen: set[str]) -> dict[str, list[str]]:
    """Per pattern without matches whose event types were all read: a line naming the first
    step no event could take although partial matches waited for it (from the run's marking:
    a transition that never fired, its input place reached), with that variable's conditions,
    so that a user sees which condition nothing satisfied. ``marking``: the engine's
    ``(places, transitions)`` counts (:meth:`Engine.marking`)."""
    places, fired = marking
    hints: dict[str, list[str]] = {}
    for g in net.groups:
        for pi in g.patterns:
            pn = net.patterns[pi]
            if report["patterns"].get(pn.name, {}).get("matches", 0) or not set(pn.input_types) <= seen:
                continue
            for t in g.transitions:
                if t.users and pi not in t.users:
                    continue
                reached = t.src == g.start or places.get((g.index, t.src), (0, 0))[0] > 0
                if fired.get((g.index, t.id), 0) or not reached or t.event_type not in seen:
                    continue
                var = next((v.name for v in pn.vars if v.slot == t.slot and v.type == t.event_type), "")
                line = _unmet(pn.source, t.event_type, var, t.src == g.start)
                if line is not None:
                    hints.setdefault(pn.name, []).append(f"pattern {pn.name!r}: {line}")
                break
    return hints


def rerun_hints(net: Net, report: dict[str, Any], seen: set[str]) -> dict[str, list[str]]:
    """Per pattern without matches whose event types were all read, on a run without the
    net's marking (the compiled kernel counts none): how to learn which condition nothing
    satisfied, the line :func:`condition_hints` gives from a Python engine's run."""
    hints: dict[str, list[str]] = {}
    for pn in net.patterns:
        if report["patterns"].get(pn.name, {}).get("matches", 0) or not set(pn.input_types) <= seen:
            continue
        hints[pn.name] = [
            f"pattern {pn.name!r}: run with --engine python to see which step no event could take, and its conditions"
        ]
    return hints


def _unmet(p: A.Pattern, etype: str, var: str, first: bool) -> str | None:
    """What the events of ``etype`` had to satisfy in ``p`` to bind ``var`` (the transition's
    variable; in a net merged from several patterns maybe another pattern's name for it, so
    the pattern's own variables of that type are used then). None: no condition, so the
    cause is not one (a window, a strategy, a negation)."""
    names = {r.var for r in A.events_of(p.structure) if r.type == etype and not r.negated}
    if var in names:
        names = {var}
    conds = [conditions_text((c,)) for c in p.conditions if A.vars_of(c) & names]
    if p.partition:
        conds.insert(0, "".join(f"[{a}]" for a in p.partition))
    if not conds:
        return None
    var = ", ".join(sorted(names))
    step = f"start a match as {var}" if first else f"bind {var} after the partial matches before it"
    return f"events of type {etype!r} were read, but none could {step} (its conditions: {' AND '.join(conds)})"


def history_report(runner: HistoryRunner) -> dict[str, Any]:
    """The archive join's counters (``--archive``), for the run's report."""
    stats = asdict(runner.join.stats)
    stats.pop("per_pattern")
    return {"mode": runner.join.mode, "order": runner.join.order, **stats}


def type_hints(net: Net, report: dict[str, Any], seen: set[str]) -> dict[str, list[str]]:
    """Per pattern without matches: a line for each event type it reads that no input row
    had (composite types, made by other patterns, aside), with the types the input had. Type
    names match exactly, so a seen name that differs only in case or in spaces around it
    (`` A`` from ``id, A,1``) is named as the likely mistake, quoted so its spaces show."""
    made = {pn.output_type for pn in net.patterns if pn.output_type}
    names = sorted(seen)
    shown = ", ".join(_shown(n) for n in names[:10]) + (f" and {len(seen) - 10} more" if len(seen) > 10 else "")
    hints: dict[str, list[str]] = {}
    for pn in net.patterns:
        if report["patterns"].get(pn.name, {}).get("matches", 0):
            continue
        for t in sorted(set(pn.input_types) - made - seen):
            hints.setdefault(pn.name, []).append(
                f"pattern {pn.name!r}: no event of type {t!r} was read (types seen: {shown or 'none'}){_near_type(t, names)}"
            )
    return hints


def _shown(name: str) -> str:
    """A type name as the hint lists it: bare, or quoted where spaces around it (or none at
    all) would not show."""
    return name if name and name == name.strip() else repr(name)


def _near_type(t: str, names: Sequence[str]) -> str:
    """``; the input has ' A' ...`` where a seen name differs from ``t`` only in case or in
    spaces around it, else empty."""
    for n in names:
        if n.strip().casefold() != t.casefold():
            continue
        what = [w for w, differs in (("spaces around it", n != n.strip()), ("case", n.strip() != t)) if differs]
        return f"; the input has {n!r}, which differs only in {' and '.join(what)} (type names match exactly)"
    return ""


def summary_lines(
    report: dict[str, Any],
    elapsed: float,
    hints: dict[str, list[str]] | None = None,
    sweep_every: int | None = None,
) -> list[str]:
    """The run's accounting for stderr: events read = processed + rejected + late; matches,
    timeouts and dropped partial matches per pattern (``hints``: lines after a pattern's,
    see :func:`type_hints`); partial matches alive when the input ended or at most at once,
    left at the end, dropped. ``sweep_every``: how often the engine counts them."""
    ev = report["events"]
    rate = ev["read"] / elapsed if elapsed > 0 else 0.0
    total = sum(p["matches"] for p in report["patterns"].values())
    lines = [
        f"summary: {ev['read']} events read = {ev['processed']} processed + {ev['rejected']} rejected + "
        f"{ev['late']} late; {total} matches in {elapsed:.2f} s ({rate:,.0f} events/s)"
    ]
    for name, p in report["patterns"].items():
        extra = "".join(
            f", {p[k]} {label}" for k, label in (("timeouts", "timeouts"), ("dropped", "partial matches dropped")) if p[k]
        )
        if p.get("rows") == 0 and p.get("table"):
            extra += f" (no event of type {p['table']!r} was read: check --type / --type-field)"
        lines.append(f"  {name}: {p['matches']} matches{extra}")
        lines.extend(f"    {h}" for h in (hints or {}).get(name, ()))
    if ev["composite"]:
        lines.append(f"  composite events: {ev['composite']}")
    h = report.get("history")
    if h:
        lines.append(
            f"  history ({h['mode']}, {h['order']}): {h['live_matches']} live matches, {h['loads']} archive reads "
            f"({h['rows']} events), {h['archived_matches']} archived matches, {h['joined']} joined; "
            f"{h['gated']} live events skipped by archive-first"
        )
    if report.get("sorted"):
        lines.append(f"  {report['sorted']['note']}")
    pm = report["partial_matches"]
    lines.append(f"  partial matches: {_peak(pm['peak'], ev['read'], sweep_every)}, {pm['alive']} left at the end, {pm['dropped']} dropped by limits")
    return lines


def _peak(peak: int, read: int, sweep_every: int | None) -> str:
    """The most partial matches alive at once, in words that say how it was counted: both
    engines count them every ``sweep_every`` events (the Python engine at its sweeps, the
    kernel after its batches) and when the input ends, so a run that read fewer events
    counted them once, then; a count between two countings is not seen."""
    if sweep_every is not None and read < sweep_every:
        return f"{peak} alive when the input ended"
    every = f"counted every {sweep_every:,} events" if sweep_every is not None else "counted at every sweep"
    return f"at most {peak} alive at once ({every})"


__all__ = ["condition_hints", "history_report", "rerun_hints", "sharing_lines", "summary_lines", "time_unit_warning", "type_hints", "warnings_for"]
