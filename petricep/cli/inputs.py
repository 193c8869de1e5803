"""The command line's input options and the one builder from them to an :class:`InputSpec`.

``run``, ``archive`` and the Spark commands describe their events with the same options
and the same builder, so an option means the same in every command. This module imports
nothing from Spark (``petricep.spark.cli`` imports it, never the other way).
"""

from __future__ import annotations

import argparse
import glob
import os
import re
from collections.abc import Sequence
from typing import Any

from petricep.errors import ConfigError
from petricep.io import InputSpec, infer_format
from petricep.lang import ast as A
from petricep.lang.fields import field_requirements


def add_input_options(ap: argparse.ArgumentParser) -> None:
    """``--events`` and how its rows become events (run, archive)."""
    g = ap.add_argument_group("events")
    g.add_argument(
        "--events",
        required=True,
        nargs="+",
        metavar="FILE",
        help="event file(s) (CSV, JSON Lines or Parquet; .gz ok), read one after the other as one stream; "
        "a glob ('data/part-*.csv', in sorted order); - for standard input (with --format)",
    )
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


def event_paths(values: Sequence[str] | str, fmt: str | None) -> list[str]:
    """``--events``' files: each value a file, a glob (its matches in sorted order) or ``-``
    (standard input: alone, and with ``--format csv`` or ``jsonl``, since nothing names it).
    One path as a string: that file (the Spark commands take one)."""
    if isinstance(values, str):
        return [values]
    if "-" in values:
        if len(values) > 1:
            raise ConfigError("--events -: standard input is the only input of a run (no other files with it)")
        if fmt not in ("csv", "jsonl"):
            raise ConfigError("--events -: give the format of standard input with --format csv or --format jsonl")
        return ["-"]
    paths: list[str] = []
    for value in values:
        if os.path.exists(value) or not glob.has_magic(value):
            paths.append(value)
            continue
        found = sorted(glob.glob(value))
        if not found:
            raise ConfigError(f"--events {value!r}: no file matches")
        paths.extend(found)
    return paths


def add_progress_options(ap: argparse.ArgumentParser, shown: str) -> None:
    """``--progress`` / ``--no-progress`` (default: shown when stderr is a terminal);
    ``shown``: what the progress is (a bar, lines)."""
    prog = ap.add_mutually_exclusive_group()
    prog.add_argument("--progress", dest="progress", action="store_true", default=None, help=f"show {shown}")
    prog.add_argument("--no-progress", dest="progress", action="store_false", help=f"no {shown}")


def add_lang_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--lang",
        choices=("pcep", "sql"),
        help="language of the pattern files (default: by extension; *.sql is SQL MATCH_RECOGNIZE)",
    )


def delimiter(text: str | None) -> str | None:
    """``--delimiter``: one character, or ``space`` / ``tab`` spelled out."""
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


def input_spec(
    args: argparse.Namespace, patterns: Sequence[A.Pattern], *, stream: bool = False, **extra: Any
) -> InputSpec:
    """The :class:`InputSpec` the input options describe, for every command: embedded and
    Spark runs read ``--events`` (format from ``--format`` or the file's name); a stream
    (``stream=True``) watches ``--input``, a directory, where each file's name says its format
    unless ``--format`` (or ``--columns``: headerless CSV) does. ``extra``: further InputSpec
    fields (on_error, rejects_path, ordered)."""
    required, numeric = field_requirements(patterns)
    more: tuple[str, ...] = ()
    if stream:
        path = args.input
        fmt = args.format or ("csv" if args.columns else None)
    else:
        path, *rest = event_paths(args.events, args.format)
        more = tuple(rest)
        fmt = args.format or infer_format(path)
    return InputSpec(
        path=path,
        more_paths=more,
        format=fmt,
        type_field=args.type_field,
        type_const=args.type,
        time_field=args.time_field,
        id_field=args.id_field,
        columns=tuple(c.strip() for c in args.columns.split(",")) if args.columns else None,
        delimiter=delimiter(args.delimiter),
        time_format=args.time_format,
        time_unit=args.time_unit,
        # every reader: a field a pattern reads must hold one value, not a missing one
        # (docs/INPUT.md); a missing CSV/Parquet column is reported at the pattern first
        # (check_columns), JSON Lines rows are checked one by one
        required=required,
        numeric=numeric,
        **extra,
    )


__all__ = ["add_input_options", "add_lang_option", "add_progress_options", "delimiter", "event_paths", "input_spec", "parse_duration"]
