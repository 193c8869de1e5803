"""``petricep run`` and ``petricep check`` (SPEC §4).

Every user error is a :class:`PetricepError`: printed as one message on stderr with
exit status 1, never a traceback. Usage errors exit with 2 (argparse).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import replace
from typing import IO, Any

from petricep import __version__
from petricep.errors import ConfigError, EvaluationError, PetricepError
from petricep.lang import ast as A

PROGRESS_EVERY = 20000
EXIT_INCOMPLETE = 3  # the run finished, but some input rows were rejected or late (see the summary)


def _add_input_options(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("events")
    g.add_argument("--events", required=True, metavar="FILE", help="event file (CSV, JSON Lines or Parquet; .gz ok)")
    g.add_argument("--format", choices=("csv", "jsonl", "parquet"), help="default: from the file extension")
    t = g.add_mutually_exclusive_group(required=True)
    t.add_argument("--type-field", metavar="F", help="column holding the event type")
    t.add_argument("--type", metavar="T", help="one event type for the whole input")
    g.add_argument("--time-field", metavar="F", help="timestamp column (default: the row position)")
    g.add_argument("--id-field", metavar="F", help="id column (default: the row position)")
    g.add_argument("--columns", metavar="a,b,c", help="column names of a headerless CSV")
    g.add_argument("--delimiter", metavar="C", help="CSV delimiter (default ','; 'space' or 'tab' allowed)")
    g.add_argument("--time-format", metavar="FMT", help="strptime format, e.g. %%Y%%m%%d%%H%%M (default: number or ISO-8601)")
    g.add_argument("--time-unit", choices=("s", "ms", "us", "ns"), help="unit of numeric timestamps (converted to seconds)")
    g.add_argument(
        "--on-error",
        choices=("fail", "skip"),
        default="fail",
        help="bad rows: stop at the first (default) or skip them, counted and written to --rejects",
    )
    g.add_argument("--rejects", metavar="FILE", help="with --on-error skip: JSON Lines file of the rejected rows")


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


def _add_lang_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--lang",
        choices=("pcep", "sql"),
        help="language of the pattern files (default: by extension; *.sql is SQL MATCH_RECOGNIZE)",
    )


def _add_order_options(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("event time")
    g.add_argument(
        "--slack",
        metavar="D",
        help="accept events out of time order by up to D (timestamp units, or 500ms, 2s, 1min, ...): they are "
        "re-ordered before matching; events later than that are late (counted, written to --late)",
    )
    g.add_argument("--late", metavar="FILE", help="with --slack: JSON Lines file of the late events")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="petricep",
        description="Complex event processing on timed colored Petri nets.",
    )
    ap.add_argument("--version", action="version", version=f"petricep {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run pattern files over an event file, write matches as JSON Lines")
    run.add_argument("patterns", nargs="+", metavar="PATTERN_FILE")
    _add_lang_option(run)
    _add_input_options(run)
    run.add_argument("-o", "--output", metavar="OUT", help="match file (default: standard output)")
    run.add_argument(
        "--engine", choices=("local", "spark"), default="local", help="execution engine (default: local, embedded)"
    )
    run.add_argument("--master", metavar="URL", help="with --engine spark: the Spark master (default local[*])")
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
    _add_archive_options(run)
    prog = run.add_mutually_exclusive_group()
    prog.add_argument("--progress", dest="progress", action="store_true", default=None, help="show a progress bar")
    prog.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")

    check = sub.add_parser("check", help="parse, compile and merge pattern files; print the net and warnings")
    check.add_argument("patterns", nargs="+", metavar="PATTERN_FILE")
    _add_lang_option(check)

    _add_stream_parser(sub)

    arch = sub.add_parser("archive", help="append an event file to an event archive (for ARCHIVED variables)")
    _add_input_options(arch)
    arch.add_argument("--to", required=True, metavar="DIR", help="the archive (created if missing)")
    arch.add_argument("--bucket", metavar="D", default="1d", help="time partition of a new archive (default 1d)")

    draw = sub.add_parser("draw", help="draw the net of pattern files as DOT, SVG, PNG or PNML (format from -o)")
    draw.add_argument("patterns", nargs="+", metavar="PATTERN_FILE")
    _add_lang_option(draw)
    draw.add_argument("-o", "--output", required=True, metavar="OUT", help="out.dot, out.svg, out.png or out.pnml")
    draw.add_argument(
        "--separate",
        action="store_true",
        help="every pattern compiled alone, one cluster each (default: the merged net the runtime executes)",
    )
    return ap


def _add_stream_parser(sub: Any) -> None:
    from petricep.spark.cli import add_stream_parser

    add_stream_parser(sub)


def cmd_run_spark(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """``petricep run --engine spark`` (petricep.spark; PySpark and Java needed)."""
    from petricep.spark.cli import cmd_run

    return cmd_run(args, out, err)


def cmd_stream(args: argparse.Namespace, err: IO[str]) -> int:
    """``petricep stream``: Structured Streaming over a directory (petricep.spark)."""
    from petricep.spark.cli import cmd_stream

    return cmd_stream(args, err)


def _delimiter(text: str | None) -> str | None:
    if text is None:
        return None
    return {"space": " ", "tab": "\t", "\\t": "\t"}.get(text, text)


def parse_duration(text: str | None, option: str = "--slack") -> float | int | None:
    """``--slack``, ``--latency``, ``--bucket``: a number of timestamp units, or a duration
    with a unit (seconds)."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?|\.\d+)\s*([A-Za-z]*)\s*", text)
    unit = m.group(2).lower() if m else ""
    if m is None or (unit and unit not in A.DURATION_UNITS):
        raise ConfigError(f"{option}: expected a number >= 0, optionally with a unit (ms, s, min, h, d), got {text!r}")
    value = float(m.group(1)) * (A.DURATION_UNITS[unit] if unit else 1)
    return int(value) if value.is_integer() else value


def input_spec(args: argparse.Namespace, patterns: Sequence[A.Pattern], **extra: Any) -> Any:
    """The :class:`InputSpec` the input options describe (embedded and Spark runs)."""
    from petricep.io.readers import InputSpec, infer_format
    from petricep.lang.fields import field_requirements

    required, numeric = field_requirements(patterns)
    fmt = args.format or infer_format(args.events)
    return InputSpec(
        path=args.events,
        format=fmt,
        type_field=args.type_field,
        type_const=args.type,
        time_field=args.time_field,
        id_field=args.id_field,
        columns=tuple(c.strip() for c in args.columns.split(",")) if args.columns else None,
        delimiter=_delimiter(args.delimiter),
        time_format=args.time_format,
        time_unit=args.time_unit,
        # every reader: a field a pattern reads must hold one value, not a missing one
        # (docs/INPUT.md); a missing CSV/Parquet column is reported at the pattern first
        # (check_columns), JSON Lines rows are checked one by one
        required=required,
        numeric=numeric,
        **extra,
    )


def check_columns(files: Sequence[A.PatternFile], spec: Any, path: str | None = None) -> None:
    """Schema check of CSV/Parquet input: every field a pattern reads must be a column."""
    from petricep.io.readers import open_events
    from petricep.lang.check import check_fields

    if spec.format == "jsonl":
        return
    columns = open_events(replace(spec, path=path or spec.path, numeric={}, required={})).columns
    if columns is None:
        return
    patterns = [p for f in files for p in f.patterns]
    composite = {r.type: [f.name for f in r.fields] for p in patterns for r in A.outputs(p)}
    for f in files:
        check_fields(f, columns, composite=composite)
        if f.queries:
            from petricep.lang.sql import check_sql_columns

            check_sql_columns(f, columns)


def _window_text(w: A.Window | None) -> str:
    if w is None:
        return "none"
    if w.kind == A.WIN_COUNT:
        return f"{w.value} events"
    return f"{w.value} {w.unit}" if w.unit else f"{w.value}"


def warnings_for(patterns: Sequence[A.Pattern], queries: Sequence[Any] = ()) -> list[str]:
    """Patterns whose state can grow without bound: no window and no LIMIT (partial matches
    and negation buffers pile up), or a Kleene variable without a window (one partial match
    may grow without bound even when a LIMIT caps how many there are)."""
    out = []
    for p in patterns:
        refs = [r for r in A.events_of(p.structure) if not r.archived]  # history is read, not held
        if len(refs) == 1 and not refs[0].kleene:
            continue  # one event: no partial match, no state
        if p.window is None and p.limit is None:
            out.append(
                f"warning: pattern {p.name!r} has no WITHIN window: its partial matches may grow without bound "
                "(add WITHIN, or LIMIT n PARTIAL MATCHES)"
            )
        if p.window is None:
            kleene = [r.var for r in A.events_of(p.structure) if r.kleene]
            if kleene:
                out.append(
                    f"warning: pattern {p.name!r}: Kleene variable {kleene[0]}[] has no WITHIN window: "
                    "one partial match may grow without bound"
                )
    for q in queries:
        if q.window is None:
            out.append(
                f"warning: query {q.name!r} has no WITHIN window: a match that keeps growing holds back "
                "every later start row of its partition"
            )
    return out


def sharing_lines(net: Any) -> list[str]:
    """What the merge shared, and by which combination (front: a common prefix, partial
    matches shared; rear: a common continuation, partial matches kept apart; whole: a pattern
    whose every place is shared with another)."""
    lines = []
    for g in net.groups:
        names = [net.patterns[i].name for i in g.patterns]
        whole = []
        for i in g.patterns:
            mine = [p for p in g.places if i in p.users]
            if len(mine) > 1 and all(len(p.users) > 1 for p in mine):
                whole.append(net.patterns[i].name)
        for how, label, users in g.sharing:
            lines.append(f"  shared ({how} combination): place {label!r} by {', '.join(users)}")
        if whole and len(names) > 1:
            lines.append(f"  shared whole: every place of {', '.join(whole)} serves other patterns too")
    return lines


def row_net_line(rn: Any) -> str:
    """``check``'s line for a SQL MATCH_RECOGNIZE query."""
    q = rn.source
    part = ", ".join(q.partition) or "none"
    table = q.table or "every event type"
    rows = "all rows per match" if q.all_rows else "one row per match"
    skip = f"skip {q.skip.mode}" + (f" {q.skip.var}" if q.skip.var else "")
    return (
        f"  {rn.name}: MATCH_RECOGNIZE, {len(rn.places)} places, {len(rn.transitions)} transitions; "
        f"rows of {table}; window {_window_text(q.window)}; partition by {part}; {rows}; {skip}"
    )


def cmd_check(args: argparse.Namespace, out: IO[str]) -> int:
    from petricep.api import load_patterns, net_of

    files = load_patterns(args.patterns, args.lang)
    patterns = [p for f in files for p in f.patterns]
    net = net_of(files)
    for f in files:
        n = len(f.patterns) + len(f.queries)
        out.write(f"{f.path}: {n} pattern{'s' if n != 1 else ''}\n")
    for pn in net.patterns:
        p = pn.source
        inputs = ", ".join(sorted(pn.input_types))
        part = f"[{', '.join(p.partition)}]" if p.partition else "none"
        out.write(
            f"  {pn.name}: {len(pn.places)} places, {len(pn.transitions)} transitions; inputs {inputs}; "
            f"window {_window_text(p.window)}; partition {part}; {p.strategy}"
            + (f"; returns {pn.output_type}" if pn.output_type else "")
            + (f"; timeouts return {pn.timeout.type}" if pn.timeout else "")
            + (f"; at most {pn.limit.count} partial matches per key ({pn.limit.policy})" if pn.limit else "")
            + "\n"
        )
    for rn in net.rows:
        out.write(row_net_line(rn) + "\n")
    s = net.stats()
    out.write(
        f"net before merging: {s['patterns']} patterns, {s['input_places']} input places, "
        f"{s['state_places']} state places, {s['transitions']} transitions\n"
    )
    out.write(
        f"net after merging: {len(net.groups) + len(net.rows)} shared net{'s' if len(net.groups) + len(net.rows) != 1 else ''}, "
        f"{s['input_places']} input places, {s['merged_state_places']} state places, "
        f"{s['merged_transitions']} transitions\n"
    )
    for line in sharing_lines(net):
        out.write(line + "\n")
    for w in warnings_for(patterns, [q for f in files for q in f.queries]):
        out.write(w + "\n")
    return 0


def cmd_run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    from petricep.api import load_patterns, net_of
    from petricep.io.output import JsonlWriter, LateWriter
    from petricep.io.readers import open_events
    from petricep.runtime.engine import Engine

    if args.rejects and args.on_error != "skip":
        raise ConfigError("--rejects needs --on-error skip")
    slack = parse_duration(args.slack)
    if args.late and slack is None:
        raise ConfigError("--late needs --slack")
    files = load_patterns(args.patterns, args.lang)
    patterns = [p for f in files for p in f.patterns]
    conflicts = [c for f in files for c in f.conflicts]
    queries = [q for f in files for q in f.queries]
    runner: Any = None
    if args.archive:
        from petricep.archive.history import HistoryRunner
        from petricep.archive.store import Archive

        if slack is not None:
            raise ConfigError("--archive and --slack cannot be combined (yet): archive a time-ordered stream")
        latency = parse_duration(args.latency, "--latency") or 0
        runner = HistoryRunner(
            patterns, Archive(args.archive), args.history_mode, latency, args.history_order, args.tie, conflicts, queries
        )
    else:
        net = net_of(files)
    for w in warnings_for(patterns, queries):
        err.write(w + "\n")
    spec = input_spec(args, patterns, on_error=args.on_error, rejects_path=args.rejects, ordered=slack is None)
    check_columns(files, spec)
    source = open_events(spec)
    prefilter = None
    # with a slack every event moves the watermark; with an archive every event is kept there
    if args.prefilter and slack is None and runner is None:
        from petricep.runtime.prefilter import Prefilter

        prefilter = source.row_filter = Prefilter(net)
    show = err.isatty() if args.progress is None else args.progress
    started = time.perf_counter()
    with ExitStack() as stack:
        sink = out if not args.output else stack.enter_context(_open_out(args.output))
        writer = JsonlWriter(sink)
        late = LateWriter(stack.enter_context(_open_out(args.late))) if args.late else None
        if runner is None:
            engine = pusher = Engine(net, tie=args.tie, slack=slack, on_late=late.write if late else None)
        else:
            engine, pusher = runner.engine, runner
        bar: Any = None
        if show:
            from tqdm import tqdm

            bar = stack.enter_context(tqdm(unit=" ev", unit_scale=True, file=err, mininterval=0.5, desc="events"))
        n = 0
        current = None
        try:
            for e in source:
                current = e
                for m in pusher.push(e):
                    writer.write(m)
                n += 1
                if bar is not None and n % PROGRESS_EVERY == 0:
                    bar.update(PROGRESS_EVERY)
            current = None
            for m in pusher.flush():
                writer.write(m)
        except EvaluationError as exc:
            failed = getattr(exc, "event", None) or current  # with a slack: a held event
            where = f"{args.events}: event at position {failed.pos} (id {failed.id!r})" if failed else args.events
            raise EvaluationError(f"{where}: {exc}") from None
        if bar is not None:
            bar.update(n % PROGRESS_EVERY)
    elapsed = time.perf_counter() - started
    if prefilter is not None:  # rows the prefilter judged are processed too
        engine.stats.events += prefilter.rows_in - prefilter.rows_kept
    report = engine.report(source.rows_read, source.rows_rejected)
    if runner is not None:
        report["history"] = history_report(runner)
        for name, count in runner.join.stats.per_pattern.items():
            report["patterns"][name]["matches"] = count
    for line in summary_lines(report, elapsed):
        err.write(line + "\n")
    if args.rejects and source.rows_rejected:
        err.write(f"  rejected rows written to {args.rejects}\n")
    if args.late and report["events"]["late"]:
        err.write(f"  late events written to {args.late}\n")
    if args.stats:
        with _open_out(args.stats) as fh:
            json.dump(report, fh, indent=2)
            fh.write("\n")
    return EXIT_INCOMPLETE if report["events"]["rejected"] or report["events"]["late"] else 0


def history_report(runner: Any) -> dict[str, Any]:
    from dataclasses import asdict

    stats = asdict(runner.join.stats)
    stats.pop("per_pattern")
    return {"mode": runner.join.mode, "order": runner.join.order, **stats}


def _open_out(path: str) -> IO[str]:
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from None


def summary_lines(report: dict[str, Any], elapsed: float) -> list[str]:
    """The run's accounting for stderr: events read = processed + rejected + late; matches,
    timeouts and dropped partial matches per pattern; partial matches alive at the end."""
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
    if ev["composite"]:
        lines.append(f"  composite events: {ev['composite']}")
    h = report.get("history")
    if h:
        lines.append(
            f"  history ({h['mode']}, {h['order']}): {h['live_matches']} live matches, {h['loads']} archive reads "
            f"({h['rows']} events), {h['archived_matches']} archived matches, {h['joined']} joined; "
            f"{h['gated']} live events skipped by archive-first"
        )
    pm = report["partial_matches"]
    lines.append(
        f"  partial matches: peak {pm['peak']} (sampled at every sweep), {pm['alive']} alive at the end, "
        f"{pm['dropped']} dropped by limits"
    )
    return lines


def cmd_archive(args: argparse.Namespace, err: IO[str]) -> int:
    """``petricep archive``: events from a file into the archive, in their time order."""
    from petricep.archive.store import Archive
    from petricep.io.readers import open_events

    if args.rejects and args.on_error != "skip":
        raise ConfigError("--rejects needs --on-error skip")
    spec = input_spec(args, [], on_error=args.on_error, rejects_path=args.rejects)
    archive = Archive(args.to, bucket_seconds=float(parse_duration(args.bucket, "--bucket") or 86400))
    source = open_events(spec)
    for e in source:
        archive.append(e)
    archive.flush()
    err.write(
        f"archived {source.rows_read - source.rows_rejected} events into {args.to} (run {archive.run}); "
        f"{source.rows_rejected} rejected\n"
    )
    return EXIT_INCOMPLETE if source.rows_rejected else 0


def cmd_draw(args: argparse.Namespace, out: IO[str]) -> int:
    """``petricep draw``: the net as DOT or PNML (pure text), SVG or PNG (Graphviz's dot)."""
    from pathlib import Path

    from petricep.api import load_patterns, net_of
    from petricep.export import FORMATS, build_diagram, export

    fmt = Path(args.output).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ConfigError(
            f"cannot tell the diagram format from {args.output!r}: end it in {', '.join('.' + f for f in FORMATS)}"
        )
    net = net_of(load_patterns(args.patterns, args.lang))
    data = export(net, fmt, merged=not args.separate)
    try:
        Path(args.output).write_bytes(data)
    except OSError as exc:
        raise ConfigError(f"cannot write {args.output}: {exc.strerror}") from None
    d = build_diagram(net, merged=not args.separate)
    count = {k: sum(1 for n in d.nodes if n.kind == k) for k in ("input", "state", "transition")}
    n = len(net.patterns) + len(net.rows)
    out.write(
        f"{args.output}: {d.title} of {n} pattern{'s' if n != 1 else ''}, {count['input']} input places, "
        f"{count['state']} state places, {count['transition']} transitions\n"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "check":
            return cmd_check(args, sys.stdout)
        if args.command == "draw":
            return cmd_draw(args, sys.stdout)
        if args.command == "stream":
            return cmd_stream(args, sys.stderr)
        if args.command == "archive":
            return cmd_archive(args, sys.stderr)
        if args.engine == "spark":
            return cmd_run_spark(args, sys.stdout, sys.stderr)
        if args.master:
            raise ConfigError("--master needs --engine spark")
        return cmd_run(args, sys.stdout, sys.stderr)
    except PetricepError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    except KeyboardInterrupt:  # pragma: no cover
        sys.stderr.write("interrupted\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
