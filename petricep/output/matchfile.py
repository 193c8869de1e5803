"""``petricep run``'s match output: JSON Lines (streamed), Parquet or CSV (the whole table),
chosen by ``--output-format`` or the ``-o`` extension.

Why a module: the format decides how matches leave the run. JSON Lines is written a line
per match as the run finds them (and flushed per match batch when asked, for a live
stdin stream); Parquet and CSV are tables, so every match is kept in memory and the
table (:func:`petricep.output.table.to_table`) is written when the run ends. Every format
is written to a temporary file beside the target and renamed into place on commit (see
:mod:`petricep.output.files`), so a failed run leaves the old file as it was.

Without ``--with-events`` a JSON Lines line is exactly what ``petricep run`` always wrote
(:func:`petricep.output.jsonl.match_json`); with it, each line gains ``"events"`` (every bound
event's fields) and prints ``start`` / ``end`` in the input's own time format.

The kernel's matches arrive as record batches (:meth:`petricep.api.runner.Run.match_batches`)
and are written from their columns, with no :class:`Match` per match
(:mod:`petricep.output.jsonl`): JSON Lines text a batch at a time, the table from the batches
where they give it exactly, else from the batches' matches (:meth:`MatchFile.commit`). A run
asking for the bound events (``--with-events``) never gets batches: the Python engine runs it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Any

import pyarrow as pa

from petricep.compile.net import Net
from petricep.errors import ConfigError
from petricep.events import Event
from petricep.io.timestamps import format_has_date
from petricep.output.files import OutputFile, OutputPath
from petricep.output.jsonl import JsonlBatches, json_line
from petricep.output.table import (
    OUTPUT_FORMATS,
    batch_matches,
    batches_table,
    bound_events,
    layout_of,
    match_record,
    to_table,
    write_table_to,
)
from petricep.output.times import TimeFormatter
from petricep.runtime.engine import Match

CHOICES = ("jsonl", "parquet", "csv")


def output_format(path: str | None, given: str | None) -> str:
    """The match file's format: ``given`` (``--output-format``), else from ``path``'s
    extension; standard output, and a target that exists but is not a regular file (a
    pipe, ``/dev/stdout``), are JSON Lines; any other name is refused."""
    if path is None and given not in (None, "jsonl"):
        raise ConfigError(f"--output-format {given} writes a file: give -o FILE")
    if given is not None:
        return given
    if path is None:
        return "jsonl"
    fmt = OUTPUT_FORMATS.get(os.path.splitext(path)[1].lower())
    if fmt is not None:
        return fmt
    if os.path.exists(path) and not os.path.isfile(path):
        return "jsonl"
    raise ConfigError(
        f"cannot tell the match file format from {path!r}: end it in .jsonl .parquet .csv, "
        "or give --output-format jsonl|parquet|csv"
    )


def time_type(spec: Any, time_kind: str) -> pa.DataType | None:
    """start/end as timestamps in a table when the input's times are date-times with a
    date (as :func:`petricep.match` makes them), else numbers."""
    if spec.time_field is None or time_kind != "datetime":
        return None
    if spec.time_format is not None and not format_has_date(spec.time_format):
        return None
    return pa.timestamp("us")


class MatchFile:
    """Where a run's matches go: standard output or ``-o`` (see the module docstring).

    ``lookup``: event id -> event, for the events of SQL matches (which carry ids only),
    filled by the run when ``--with-events`` asks for them."""

    def __init__(self, path: str | None, fmt: str, out: IO[str], flush: bool = False) -> None:
        self.format = fmt
        self.flush = flush
        self.count = 0
        self.with_events = False
        self.times: TimeFormatter | None = None
        self.lookup: dict[Any, Event] | None = None
        self.kept: list[Match | pa.RecordBatch] = []  # for a table: matches, and batches of them
        self.jsonl_batches: JsonlBatches | None = None  # made for the first batch written
        self.target: OutputPath | None = None
        self.stream: IO[str] | OutputFile = out
        if path is not None and fmt == "jsonl":
            self.target = self.stream = OutputFile(path)
        elif path is not None:
            self.target = OutputPath(path)

    def discard(self) -> None:
        if self.target is not None:
            self.target.discard()

    def events_of(self, m: Match) -> Mapping[str, Any]:
        return bound_events(m, self.lookup)

    def write(self, m: Match) -> None:
        """One match: a whole line (JSON Lines), or kept for the table."""
        self.count += 1
        if self.format != "jsonl":
            self.kept.append(m)
            return
        record = match_record(m, self.with_events, self.times, self.events_of)
        self.stream.write(json_line(record) + "\n")

    def write_batch(self, chunk: pa.RecordBatch | list[Match], net: Net) -> None:
        """A run's chunk of matches (:meth:`petricep.api.runner.Run.match_batches`) of
        ``net``: a record batch written from its columns (JSON Lines) or kept whole (a table),
        or Match objects written one by one."""
        if isinstance(chunk, list):
            for m in chunk:
                self.write(m)
            return
        self.count += chunk.num_rows
        if self.format != "jsonl":
            self.kept.append(chunk)
            return
        if self.jsonl_batches is None:
            self.jsonl_batches = JsonlBatches(net, self.times)
        self.stream.write(self.jsonl_batches.text(chunk))

    def batch_done(self) -> None:
        """After the matches of one event: flushed when the input is live (stdin)."""
        if self.flush and self.format == "jsonl":
            (self.stream.fh if isinstance(self.stream, OutputFile) else self.stream).flush()

    def commit(self, net: Net, table_times: pa.DataType | None) -> None:
        """Into place: JSON Lines as written; a table of every kept match otherwise."""
        if self.target is None:
            return
        if self.format == "jsonl":
            self.target.commit()
            return
        layout = layout_of(net, table_times)
        table = None
        if all(isinstance(k, pa.RecordBatch) for k in self.kept):
            table = batches_table(self.kept, layout)  # type: ignore[arg-type]  # (all batches)
        if table is None:
            matches = [m for k in self.kept for m in (batch_matches(k, net) if isinstance(k, pa.RecordBatch) else [k])]
            table = to_table(matches, layout, self.with_events, self.events_of)
        write_table_to(table, self.format, self.target)


__all__ = ["CHOICES", "MatchFile", "output_format", "time_type"]
