"""What a run tells its user beside its matches: warnings about the input's time units and,
for each pattern that found nothing, the likely mistake (a type no row had, a condition no
event meets, a window too short ...).

One place for the command line (which writes them to stderr around its summary) and the
library (``petricep.match`` raises them as :class:`~petricep.errors.PetricepWarning`), so a
pandas user whose patterns find nothing is told why as a ``petricep run`` user is, in the
same words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from petricep.compile.net import Net
from petricep.io.source import EventSource
from petricep.lang import ast as A

from .explain import (
    EXPLAIN_EVENTS,
    SPACING_EVENTS,
    explain_no_matches,
    input_events,
    unitless_window_warnings,
)
from .report import condition_hints, rerun_hints, time_unit_warning, type_hints
from .runner import Run


def time_unit_note(
    run: Run, patterns: Sequence[A.Pattern], queries: Sequence[Any], option: str = "--time-unit {}"
) -> str | None:
    """Epoch milliseconds (micro-, nano-) read as seconds under a duration window: the
    warning to give before the run, from the input's first row; None where nothing is amiss.
    ``option``: how the fix is spelled (``time_unit='{}'`` for the library)."""
    spec = run.spec
    if spec.time_field is None or spec.time_unit is not None or run.source.time_kind != "number":
        return None
    first = run.source.first_row()
    value = first.get(spec.time_field) if first else None
    return time_unit_warning(patterns, queries, spec.time_field, value, option)


def no_match_notes(run: Run, report: dict[str, Any], tie: str) -> tuple[list[str], dict[str, list[str]]]:
    """After a run: warnings (a window without a unit over date-times) and, per pattern
    without matches, the lines that say why -- a type no row had, else what kept it from
    matching the input's first events read again (the same words on either engine). Where
    the input cannot be read again (standard input), the Python engine's marking names the
    step nothing took; the kernel's run says where to learn it."""
    seen = run.types_seen()
    hints = type_hints(run.engine.net, report, seen)
    warnings, more = _explained(run, report, seen, tie)
    for name, lines in more.items():
        hints.setdefault(name, []).extend(lines)
    return warnings, hints


def prefix_notes(net: Net, report: dict[str, Any], source: EventSource, tie: str) -> dict[str, list[str]]:
    """Per pattern without matches, why, from the first events of ``source`` read here (a
    run elsewhere -- on Spark -- whose input is a local file): the types those events have
    and what kept each pattern from matching them, each line saying it read a prefix where
    the input has more."""
    if not any(not report["patterns"].get(pn.name, {}).get("matches", 0) for pn in net.patterns):
        return {}
    got = input_events(source, EXPLAIN_EVENTS)
    if got is None:
        return {}
    events, more = got
    seen = {e.type for e in events}
    where = f" (in the first {len(events):,} events)" if more else ""
    hints = {name: [line + where for line in lines] for name, lines in type_hints(net, report, seen).items()}
    for name, lines in explain_no_matches(net, report, seen, events, more, source.ts_in_seconds, tie).items():
        hints.setdefault(name, []).extend(lines)
    return hints


def _explained(run: Run, report: dict[str, Any], seen: set[str], tie: str) -> tuple[list[str], dict[str, list[str]]]:
    net = run.engine.net
    sources: list[Any] = [pn.source for pn in net.patterns] + [rn.source for rn in net.rows]
    datetimes = run.source.time_kind == "datetime"
    unitless = [x for x in sources if datetimes and x.window is not None and x.window.kind == A.WIN_TIME]
    found = report["patterns"]
    explain = run.history is None and not run.stopped and any(not found.get(pn.name, {}).get("matches", 0) for pn in net.patterns)
    got = input_events(run.source, EXPLAIN_EVENTS if explain else SPACING_EVENTS) if explain or unitless else None
    events, more = got if got is not None else ([], False)
    warnings = unitless_window_warnings(unitless, [e.ts for e in events[:SPACING_EVENTS]] if got else None)
    if not explain:
        return warnings, {}
    if got is not None:
        return warnings, explain_no_matches(net, report, seen, events, more, run.source.ts_in_seconds, tie)
    marking = run.engine.marking()
    if marking is not None:
        return warnings, condition_hints(net, marking, report, seen)
    return warnings, (rerun_hints(net, report, seen) if report["engine"]["name"] != "python" else {})


__all__ = ["no_match_notes", "prefix_notes", "time_unit_note"]
