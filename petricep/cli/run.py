"""``petricep run`` on the embedded engine: the options, the output files and the signals
around a :class:`petricep.api.Run`, which does the work.

Outputs (``-o``, ``--late``, ``--rejects``, ``--stats``) are written to temporary files
beside their targets and renamed into place when the run ends (see
:mod:`petricep.output.files`): an error leaves every target as it was. An output naming an
input file is refused before anything is read or written.

SIGINT and SIGTERM end a run after the current event: the matches found so far are
complete lines and every one is a match of the whole input (no end-of-stream flush is
made, which could report a match a later event would have prevented), so the outputs are
renamed into place; a one-line message and the accounting so far go to stderr, and the
exit status is 130 (SIGINT) or 143 (SIGTERM). A second signal stops at once, leaving the
targets as they were.
"""

from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import IO, Any

from petricep.api import load_patterns, net_of, summary_lines, warnings_for
from petricep.api.notes import no_match_notes, time_unit_note
from petricep.api.runner import Run
from petricep.archive.join import HistoryRunner
from petricep.archive.store import Archive
from petricep.compile.net import Net
from petricep.errors import EXIT_DATA, ConfigError, EventOrderError
from petricep.lang import ast as A
from petricep.output.files import OutputFile, OutputPath, check_outputs
from petricep.output.jsonl import LateWriter, json_document
from petricep.output.matchfile import CHOICES, MatchFile, output_format, time_type
from petricep.output.times import TimeFormatter, time_formatter
from petricep.runtime.engine import MAX_PARTIAL_MATCHES
from petricep.runtime.memory import parse_size

from .inputs import (
    add_input_options,
    add_lang_option,
    add_progress_options,
    event_paths,
    input_spec,
    parse_duration,
)

SLACK_HINT = "(use --slack D to accept events up to D late)"
EXIT_INCOMPLETE = EXIT_DATA  # the run finished, but some input rows were rejected or late (see the summary)
SIGNALS: dict[int, str] = {int(signal.SIGINT): "SIGINT", int(signal.SIGTERM): "SIGTERM"}


class Interrupted(KeyboardInterrupt):
    """A signal that ended the command before or beyond a graceful stop (exit 128 + signum)."""

    def __init__(self, signum: int) -> None:
        super().__init__(SIGNALS.get(signum, str(signum)))
        self.signum = signum


def add_parser(sub: Any) -> None:
    run = sub.add_parser("run", help="run pattern files over event files, write matches (JSON Lines, Parquet, CSV)")
    run.add_argument("patterns", nargs="+", metavar="PATTERN_FILE")
    add_lang_option(run)
    add_input_options(run)
    run.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="match file: out.jsonl (streamed, a line per match), out.parquet or out.csv (a table: every match "
        "is kept in memory until the run ends); default: JSON Lines on standard output",
    )
    run.add_argument("--output-format", choices=CHOICES, help="format of the match file (default: from the -o extension)")
    run.add_argument(
        "--with-events",
        action="store_true",
        help="put each bound event's fields into its match (and, in JSON Lines, start/end in the input's time format)",
    )
    run.add_argument(
        "--engine",
        choices=("local", "python", "kernel", "spark"),
        default="local",
        help="execution engine: local (embedded; the default): the compiled kernel where it covers the patterns, "
        "else the Python engine, saying why on the summary's last line; python (embedded, the reference Python "
        "engine, for comparisons and --stats' per-place counts); kernel (the same as local); or spark",
    )
    run.add_argument("--master", metavar="URL", help="with --engine spark: the Spark master (default local[*])")
    run.add_argument(
        "--verbose",
        action="store_true",
        help="with --engine spark: Spark's own log lines (WARN and above) on stderr besides petricep's",
    )
    run.add_argument(
        "--tie",
        choices=("arrival", "strict", "either"),
        default="arrival",
        help="events with equal timestamps: ordered by arrival (default), never ordered (strict), or in either order",
    )
    _add_order_options(run)
    run.add_argument(
        "--no-prefilter",
        dest="prefilter",
        action="store_false",
        help="turn every row into an event, even those no pattern can use (for comparison)",
    )
    run.add_argument("--stats", metavar="FILE", help="write the run's accounting as JSON (events, matches, state)")
    run.add_argument(
        "--max-partial-matches",
        type=_budget,
        default=MAX_PARTIAL_MATCHES,
        metavar="N",
        help=f"the memory budget: stop the run (exit 3) when a shared net holds more than N live partial matches "
        f"(default {MAX_PARTIAL_MATCHES:,}; 'none' for no budget)",
    )
    run.add_argument(
        "--max-memory",
        type=_size,
        metavar="SIZE",
        help="a memory budget in bytes (512MB, 1GB, 2GiB): stop the run (exit 3) when its state would take more "
        "(the kernel's arenas, counted as they grow; the Python engine's partial matches and the events --slack "
        "holds, estimated); default: none",
    )
    _add_archive_options(run)
    add_progress_options(run, "a progress bar")


def _budget(text: str) -> int | None:
    """``--max-partial-matches``: a positive count (``_`` and ``,`` allowed as separators), or
    ``none``."""
    if text.strip().lower() == "none":
        return None
    try:
        n = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of partial matches or 'none', not {text!r}")
    return n


def _size(text: str) -> int:
    """``--max-memory``: a size (runtime/memory.py parse_size)."""
    try:
        return parse_size(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_order_options(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("event time")
    g.add_argument(
        "--slack",
        metavar="D",
        help="accept events out of time order by up to D (timestamp units, or 500ms, 2s, 1min, ...): they are "
        "re-ordered before matching; events later than that are late (counted, written to --late)",
    )
    g.add_argument("--late", metavar="FILE", help="with --slack: JSON Lines file of the late events")


def _add_archive_options(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("event archive (history-aware patterns)")
    g.add_argument(
        "--archive",
        metavar="DIR",
        help="event archive (a Parquet dataset): every processed event is appended; patterns with "
        "ARCHIVED variables look their history up there",
    )
    g.add_argument(
        "--history-mode",
        choices=("llaa", "sllaa"),
        default="sllaa",
        help="look up history per live match (llaa) or per group of live matches with overlapping ranges (sllaa)",
    )
    g.add_argument("--latency", metavar="D", help="with sllaa: how long live matches may wait to be grouped (default 0)")
    g.add_argument(
        "--history-order",
        choices=("live-first", "archive-first", "auto"),
        default="live-first",
        help="match the live part first, ask the archive first, or choose by measured selectivity",
    )


def _options(args: argparse.Namespace) -> float | int | None:
    """Option combinations argparse cannot check; the slack, parsed."""
    if args.rejects and args.on_error != "skip":
        raise ConfigError("--rejects needs --on-error skip")
    slack = parse_duration(args.slack)
    if args.late and slack is None:
        raise ConfigError("--late needs --slack")
    check_outputs(
        {"-o": args.output, "--late": args.late, "--rejects": args.rejects, "--stats": args.stats},
        {"the events file": event_paths(args.events, args.format), "a pattern file": args.patterns},
    )
    return slack


def _program(args: argparse.Namespace, files: list[A.PatternFile], slack: float | int | None) -> Net | HistoryRunner:
    """The merged net, or with ``--archive`` the history runner (its own net of the live parts)."""
    if not args.archive:
        return net_of(files)
    if slack is not None:
        raise ConfigError("--archive and --slack cannot be combined (yet): archive a time-ordered stream")
    latency = parse_duration(args.latency, "--latency") or 0
    return HistoryRunner(
        [p for f in files for p in f.patterns],
        Archive(args.archive),
        args.history_mode,
        latency,
        args.history_order,
        args.tie,
        [c for f in files for c in f.conflicts],
        [q for f in files for q in f.queries],
        args.max_partial_matches,
        # the kernel where it covers the live net (over standard input an event at a time),
        # unless the reference engine is asked for
        engine="python" if args.engine == "python" else "kernel",
        stdin="-" in args.events,
    )


class _Outputs:
    """The run's output files, written beside their targets and all opened before the run
    (a path that cannot be written fails at once, not after the run); committed when the
    run ends (also by a signal), discarded on an error (``stack`` closes them)."""

    def __init__(self, args: argparse.Namespace, out: IO[str], stack: ExitStack) -> None:
        # a live input (standard input): each event's matches are flushed as they are found
        live = args.events == ["-"]
        self.matches = MatchFile(args.output, output_format(args.output, args.output_format), out, flush=live)
        stack.callback(self.matches.discard)
        self.late = self._add(OutputFile(args.late), stack) if args.late else None
        self.rejects = self._add(OutputPath(args.rejects), stack) if args.rejects else None
        self.stats = self._add(OutputFile(args.stats), stack) if args.stats else None

    @staticmethod
    def _add(path: Any, stack: ExitStack) -> Any:
        stack.callback(path.discard)  # after a commit: nothing to do
        return path

    def commit(self, run: Run, net: Net) -> None:
        """Matches, late events and rejected rows into place (the stats come last)."""
        self.matches.commit(net, time_type(run.spec, run.source.time_kind))
        for p in (self.late, self.rejects):
            if p is not None:
                p.commit()


class _Signals:
    """SIGINT / SIGTERM while a run is on: the first stops the run after the current event,
    a second one (or one before the run exists) interrupts at once."""

    def __init__(self) -> None:
        self.run: Run | None = None
        self.received: int | None = None

    def __call__(self, signum: int, frame: Any) -> None:
        if self.run is None or self.received is not None:
            raise Interrupted(signum)
        self.received = signum
        self.run.stop()


@contextmanager
def _signals_stop_run() -> Iterator[_Signals]:
    handler = _Signals()
    if threading.current_thread() is not threading.main_thread():
        yield handler  # signals reach the main thread only: nothing to install
        return
    old = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield handler
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def cmd_run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    slack = _options(args)
    files = load_patterns(args.patterns, args.lang)
    patterns = [p for f in files for p in f.patterns]
    program = _program(args, files, slack)
    for w in warnings_for(patterns, [q for f in files for q in f.queries]):
        err.write(w + "\n")
    show = err.isatty() if args.progress is None else args.progress
    with ExitStack() as stack:
        signals = stack.enter_context(_signals_stop_run())
        outs = _Outputs(args, out, stack)
        late = LateWriter(outs.late) if outs.late is not None else None
        rejects = outs.rejects.temp if outs.rejects is not None else None
        spec = input_spec(args, patterns, on_error=args.on_error, rejects_path=rejects, ordered=slack is None)
        run = signals.run = Run(
            program,
            spec,
            files=files,
            tie=args.tie,
            slack=slack,
            on_late=late.write if late is not None else None,
            prefilter=args.prefilter and not args.with_events,  # the events' rows whole
            max_partial_matches=args.max_partial_matches,
            max_memory=args.max_memory,
            # the net's marking: for --stats and for the hints of a run that finds nothing
            # (counting costs nothing measurable: bench/HISTORY.md, "run marking")
            count_marking=True,
            engine="python" if args.engine == "python" else "kernel",  # local, kernel: the kernel where it covers
            bindings=args.with_events,
        )
        if outs.matches.flush:
            run.after_event = outs.matches.batch_done
        if args.with_events:
            _with_events(outs.matches, run, program)
        elif time_type(run.spec, run.source.time_kind) is not None:  # date-times: a table's start/end are timestamps
            outs.matches.times = _input_times(run)  # ... and a JSON line's as the input wrote them
        _time_unit(run, files, err)
        if show:
            from tqdm import tqdm  # loaded only by a run that shows a progress bar (start-up, issue 16)

            bar = stack.enter_context(tqdm(unit=" ev", unit_scale=True, file=err, mininterval=0.5, desc="events"))
            run.progress = bar.update
        try:
            for chunk in run.match_batches():
                outs.matches.write_batch(chunk, run.engine.net)
        except EventOrderError as exc:
            text = exc.message.removesuffix(" (input must be in time order)")
            raise EventOrderError(f"{text} {SLACK_HINT}", exc.file, exc.row, exc.field) from None
        outs.commit(run, program if isinstance(program, Net) else net_of(files))
        return _finish(args, run, outs.stats, signals.received if run.stopped else None, err)


def _with_events(matches: MatchFile, run: Run, program: Net | HistoryRunner) -> None:
    """``--with-events``: bound events' fields in each match, times as the input wrote them
    (the first row's time value decides how); SQL matches' events looked up by id."""
    matches.with_events = True
    if run.spec.time_field is not None:
        matches.times = _input_times(run)
    if isinstance(program, Net) and program.rows:
        matches.lookup = run.events_by_id = {}


def _input_times(run: Run) -> TimeFormatter:
    """Times as the input wrote them (the first row's time value decides how: ISO text with
    its separator and zone, a --time-format's layout, numbers as numbers)."""
    spec = run.spec
    first = run.source.first_row()
    return time_formatter(first.get(spec.time_field) if first and spec.time_field else None, spec.time_format)


def _time_unit(run: Run, files: list[A.PatternFile], err: IO[str]) -> None:
    """Epoch milliseconds read as seconds under a duration window: say so before the run."""
    w = time_unit_note(run, [p for f in files for p in f.patterns], [q for f in files for q in f.queries])
    if w is not None:
        err.write(w + "\n")


def _finish(args: argparse.Namespace, run: Run, stats: OutputFile | None, stopped_by: int | None, err: IO[str]) -> int:
    """The run's summary on stderr, ``--stats``, and the exit status."""
    report = run.report()
    ev = report["events"]
    if stopped_by is not None:
        err.write(
            f"interrupted by {SIGNALS[stopped_by]} after {ev['read']} events read: "
            "the output holds the matches found so far\n"
        )
    warnings, hints = no_match_notes(run, report, args.tie)
    for w in warnings:
        err.write(w + "\n")
    for line in summary_lines(report, run.elapsed, hints, run.engine.sweep_every):
        err.write(line + "\n")
    name, why = report["engine"]["name"], report["engine"]["why"]
    err.write(f"  engine: {name}" + (f" ({why})" if name != "kernel" else "") + "\n")
    if args.rejects and ev["rejected"]:
        err.write(f"  rejected rows written to {args.rejects}\n")
    if args.late and ev["late"]:
        err.write(f"  late events written to {args.late}\n")
    if stats is not None:
        net = run.net_stats()
        if net is not None:
            report["net"] = net
        stats.write(json_document(report))
        stats.commit()
    if stopped_by is not None:
        return 128 + int(stopped_by)
    return EXIT_INCOMPLETE if ev["rejected"] or ev["late"] else 0


__all__ = ["EXIT_INCOMPLETE", "Interrupted", "add_parser", "cmd_run"]
