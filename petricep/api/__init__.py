"""The library entry points: compile pattern files, run them over events.

* :func:`compile_files`, :func:`compile_text`, :func:`compile_sql`: one shared net.
* :class:`petricep.api.runner.Run`: a net over an input (file or table spec), with the
  prefilter, the accounting and the located errors of ``petricep run``; :func:`run` for
  events already in hand. (Imported from its module: it needs the readers, and with them
  pyarrow, which compiling does not.)
* :func:`warnings_for`, :func:`sharing_lines`, :func:`summary_lines`: what ``check`` and
  ``run`` print, for programs that embed petricep.

Inside IPython (a notebook), importing the API imports :mod:`petricep.export`, which
registers a net's display as its diagram; elsewhere it does not, so that compiling and
running never load Graphviz or snakes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from petricep.compile.net import Net
from petricep.events import Event
from petricep.lang import ast as A
from petricep.lang.parser import parse_file, parse_text
from petricep.lang.sql import parse_sql
from petricep.merge import build_net
from petricep.runtime.engine import Engine, Match
from petricep.runtime.ordering import LateHandler

from .report import history_report, sharing_lines, summary_lines, time_unit_warning, type_hints, warnings_for

if "IPython" in sys.modules:  # IPython is optional: only a process running it can display
    import petricep.export  # noqa: F401  # registers a Net's SVG display


def load_patterns(paths: Sequence[str | Path], lang: str | None = None) -> list[A.PatternFile]:
    """Parse pattern files: ``*.sql`` as SQL MATCH_RECOGNIZE, others in the pattern language
    (``lang``: "sql" or "pcep" for every file, whatever its extension)."""
    return [parse_file(p, lang) for p in paths]


def net_of(files: Sequence[A.PatternFile], share: bool = True) -> Net:
    """One net for everything parsed files hold: patterns, conflict groups, SQL queries."""
    return build_net(
        [p for f in files for p in f.patterns],
        share,
        [c for f in files for c in f.conflicts],
        [q for f in files for q in f.queries],
    )


def compile_files(paths: Sequence[str | Path], share: bool = True, lang: str | None = None) -> Net:
    """Parse, check and compile pattern files into one shared net."""
    return net_of(load_patterns(paths, lang), share)


def compile_sql(text: str, name: str = "query", share: bool = True) -> Net:
    """Compile SQL MATCH_RECOGNIZE text (one unnamed query is called ``name``)."""
    return net_of([parse_sql(text, f"<{name}>", default_name=name)], share)


def compile_text(text: str, name: str = "pattern", share: bool = True) -> Net:
    """Compile pattern-language text (one unnamed pattern is called ``name``)."""
    f = parse_text(text, f"<{name}>", default_name=name)
    return build_net(list(f.patterns), share, list(f.conflicts))


def run(
    net: Net,
    events: Iterable[Event],
    tie: str = "arrival",
    slack: float | int | None = None,
    on_late: LateHandler | None = None,
) -> Iterator[Match]:
    """Run ``net`` over ``events`` on the embedded engine: in stream order, or out of order
    by up to ``slack`` (later events go to ``on_late(event, watermark)``). The Python engine,
    whatever the net: each event's matches come as it is pushed, with their bound events
    (:class:`~petricep.api.runner.Run` fires an input on the compiled kernel where it can)."""
    return Engine(net, tie=tie, slack=slack, on_late=on_late).run(events)


__all__ = [
    "compile_files",
    "compile_sql",
    "compile_text",
    "history_report",
    "load_patterns",
    "net_of",
    "run",
    "sharing_lines",
    "summary_lines",
    "time_unit_warning",
    "type_hints",
    "warnings_for",
]
