"""One run of a program over one input: source, prefilter, engine and accounting together.

:class:`Run` is what ``petricep run`` does, as a library object: the CLI, the Spark driver
and a program embedding petricep build it the same way and get the same matches, the same
errors (located at the event that failed) and the same accounting (events read =
processed + rejected + late)::

    run = Run(compile_files(["rise.pcep"]), InputSpec("ev.csv", type_field="type", time_field="ts"))
    for m in run:
        print(m.to_dict())
    print(run.report()["events"])

The source is opened once: its header (CSV) or schema (Parquet) is read when the run is
built, checked against the fields the patterns read (an error is reported at the pattern,
file:line:column), and then read through. Time order is the reader's to check without a
slack (a row going back in time is that row's error, or a rejected row with
``on_error="skip"``) and the engine's re-ordering's with one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from petricep.compile.net import Net
from petricep.errors import ConfigError, EvaluationError, EventError, PatternError
from petricep.events import Event, EventColumns
from petricep.export.model import build_diagram
from petricep.export.views import stats_section
from petricep.io import EventSource, InputSpec, infer_format, open_events
from petricep.io.prefetch import ReadAhead
from petricep.io.spec import rule_map
from petricep.kernel.choice import EVENTS, Budget, Options, choose, matcher
from petricep.kernel.engine import Chunk, KernelEngine
from petricep.lang import ast as A
from petricep.lang import sql_ast as S
from petricep.lang.check import check_fields
from petricep.lang.fields import field_requirements
from petricep.lang.sql import check_sql_columns
from petricep.runtime.engine import MAX_PARTIAL_MATCHES, Match
from petricep.runtime.matcher import Matcher
from petricep.runtime.memory import out_of_memory
from petricep.runtime.ordering import LateHandler
from petricep.runtime.prefilter import Prefilter

from .report import history_report

if TYPE_CHECKING:  # the archive (pyarrow.dataset) is loaded only by runs that use it
    from petricep.archive.join import HistoryRunner

PROGRESS_EVERY = 20000
ENGINES = ("kernel", "python")  # Run(engine=...): the kernel where it covers the run (the default), or the reference
T = TypeVar("T")


@dataclass(frozen=True)
class _Feed(Generic[T]):
    """How a run drives its engine and what each call gives (matches, or chunks of them)."""

    push: Callable[[Event], list[T]]
    columns: Callable[[EventColumns], Iterable[T]] | None  # checked batches as columns (the kernel)
    drain: Callable[[], list[T]]
    flush: Callable[[], list[T]]


def _chunked(found: Callable[..., list[Match]]) -> Callable[..., list[Chunk]]:
    """A call's matches as one chunk (none when it finds none)."""

    def call(*args: Any) -> list[Chunk]:
        out = found(*args)
        return [out] if out else []

    return call


def check_columns(files: Sequence[A.PatternFile], spec: InputSpec, path: str | None = None) -> None:
    """Schema check of CSV/Parquet input: every field a pattern reads must be a column
    (reported as the events' error, naming the pattern that reads it: :func:`check_read_columns`).
    ``path``: read the header there instead of ``spec.path``."""
    if (spec.format or infer_format(spec.path)) == "jsonl":
        return
    path = path or spec.path
    columns = open_events(replace(spec, path=path, numeric={}, required={})).columns
    if columns is not None:
        check_read_columns([(f, None) for f in files], columns, path, _header_row(spec))


def _header_row(spec: InputSpec) -> int | None:
    """The row a missing column's error names: a CSV header's line 1 (no row elsewhere)."""
    return 1 if (spec.format or infer_format(spec.path)) == "csv" and spec.columns is None else None


def check_read_columns(
    files: Sequence[tuple[A.PatternFile, str | None]], columns: Sequence[str], label: str, row: int | None = None
) -> None:
    """Every field a pattern or query reads must be a column of the input (``label``): a
    missing one is the events' error (:class:`EventError`, exit 3, as a missing time column
    is), naming the events file, the column, the columns there are and where a pattern reads
    it (with the caret). A field a composite event type lacks is the pattern's own error."""
    patterns = [p for f, _ in files for p in f.patterns]
    composite = {r.type: [f.name for f in r.fields] for p in patterns for r in A.outputs(p)}
    for f, text in files:
        try:
            check_fields(f, columns, text, composite=composite)
            if f.queries:
                check_sql_columns(f, columns, text)
        except PatternError as err:
            missing = _missing(f, columns, set(composite))
            if not missing:
                raise
            raise EventError(_missing_text(err, missing, columns), label, row, missing[0]) from None


def _missing_text(err: PatternError, missing: list[str], columns: Sequence[str]) -> str:
    """The events' error of missing columns: which, the columns there are, and where the
    patterns read them (the first place inline, then every other error of the check, each
    with its caret and nearest column)."""
    names = ", ".join(repr(m) for m in missing)
    head = f"missing column{'s' if len(missing) > 1 else ''} {names} (the columns: {', '.join(columns)}{delimiter_hint(columns)}), read at"
    where = err.format().split("\n", 1)
    return f"{head} {where[0].replace(': error: ', ': ', 1)}" + ("\n" + where[1] if len(where) > 1 else "")


def _missing(f: A.PatternFile, columns: Sequence[str], composite: set[str]) -> list[str]:
    """The input fields ``f``'s patterns and queries read that are no column, in the order
    the pattern check meets them (none: the error is about a composite type)."""
    found: dict[str, None] = {}
    for name in _unread_fields(f, columns, composite):
        found.setdefault(name)
    return list(found)


def _unread_fields(f: A.PatternFile, columns: Sequence[str], composite: set[str]) -> Iterator[str]:
    """Each read of a field no column holds: a pattern's key first, then its conditions
    (as the pattern check reports them), then the queries' columns."""
    cols = set(columns) | {"ts", "id"}
    for p in f.patterns:
        refs = {r.var: r for r in A.read_refs(p.structure)}
        for attr in p.partition:
            if attr not in cols and any(r.type not in composite for r in refs.values()):
                yield attr
        for expr in A.pattern_exprs(p):
            for e in A.walk_expr(expr):
                field = e.field if isinstance(e, (A.Attr, A.Agg)) else None
                if field is not None and field not in cols and refs[A.step_var(e)].type not in composite:  # type: ignore[arg-type]
                    yield field
    for q in f.queries:
        for name in [*q.partition, *(x.name for d in q.defines for x in S.walk(d.expr) if isinstance(x, S.Col)),
                     *(x.name for m in q.measures for x in S.walk(m.expr) if isinstance(x, S.Col))]:
            if name not in cols:
                yield name


def read_rules(spec: InputSpec, net: Net) -> InputSpec:
    """``spec`` with every field the net's patterns read among its rules (``required``: one
    value; ``numeric``: a number; docs/INPUT.md), whatever its caller gave: so a list, an
    object or a missing value where a pattern reads one is an error of its row for every
    engine alike (the readers check it), never a silent non-match or a crash in one of them."""
    required, numeric = field_requirements([p.source for p in net.patterns])
    return replace(spec, required=_merged(spec.required, required, "required"), numeric=_merged(spec.numeric, numeric, "numeric"))


def _merged(given: Any, more: dict[str, frozenset[str]], what: str) -> dict[str, frozenset[str]]:
    out = rule_map(given, what)
    for t, fields in more.items():
        out[t] = out.get(t, frozenset()) | fields
    return out


def open_checked(files: Sequence[A.PatternFile], spec: InputSpec) -> EventSource:
    """The input's source, its columns checked against ``files`` (see the module docstring).

    The header is read once when it holds every column; only when a column is missing is
    it read again, without the patterns' rules, so that the error names the pattern that
    reads the field rather than the input."""
    try:
        source = open_events(spec)
    except EventError as err:
        try:
            if files:
                check_columns(files, spec)
        except EventError as again:
            raise _with_columns(again, spec) from None
        raise _with_columns(err, spec) from None
    if files and source.columns is not None and (spec.format or infer_format(spec.path)) != "jsonl":
        check_read_columns([(f, None) for f in files], source.columns, spec.path, _header_row(spec))
    return source


def _with_columns(err: EventError, spec: InputSpec) -> EventError:
    """A missing column (a wrong ``--time-field``, ``--type-field``, ``--id-field``) named
    with the columns the input has, read again without the options naming columns."""
    if err.field is None or err.message != f"missing column {err.field!r}":
        return err
    bare = replace(spec, type_field=None, type_const="-", time_field=None, time_unit=None, time_format=None)
    try:
        columns = open_events(replace(bare, id_field=None, required={}, numeric={})).columns
    except EventError:
        return err
    if not columns:
        return err
    return type(err)(f"{err.message} (the columns: {', '.join(columns)}{delimiter_hint(columns)})", err.file, err.row, err.field)


def delimiter_hint(columns: Sequence[str]) -> str:
    """``; the header holds ';': give --delimiter ';'`` where the input read as one column
    whose name holds another common separator (a file written with ``;`` or tabs read as
    comma-separated), else empty."""
    if len(columns) != 1:
        return ""
    found = next((d for d in (";", "\t", "|") if d in columns[0]), None)
    return "" if found is None else f"; the header holds {found!r}: give --delimiter {found!r}"


class Run:
    """``program`` (a compiled :class:`Net`, or a :class:`HistoryRunner` for patterns with
    ARCHIVED variables) over the input ``spec`` describes.

    Iterate it for the matches, in the engine's order. ``slack``: accept events out of time
    order by up to this much (later ones go to ``on_late`` and are counted late).
    ``prefilter``: rows no pattern can use never become events (counted as processed;
    off where dropping a row could change a result: with a slack or an archive).
    ``files``: the parsed pattern files, for the schema check at the pattern.
    ``max_partial_matches``: the budget of live partial matches, ``max_memory``: of bytes
    (see :class:`Engine`, :mod:`petricep.runtime.memory`; a history runner has its own, set when
    it is built); a ``MemoryError`` while iterating is raised as the typed
    :class:`~petricep.errors.StateLimitError` (:func:`~petricep.runtime.memory.out_of_memory`). ``engine``: ``"kernel"`` (the default) for the
    compiled kernel where it covers the whole run, else the Python engine for all of it,
    saying which and why in the report's ``"engine"`` (:func:`~petricep.kernel.choice.choose`);
    ``"python"`` for the reference engine.
    ``bindings``: the caller will ask matches for their bound events (``Match.bindings()``):
    the kernel's matches carry them where it runs the whole net without composite events or
    SQL queries, else the run stays on the Python engine. ``source``:
    read this source instead of opening ``spec``'s (its columns already checked by the
    caller); ``locate(event)``: how an evaluation error names the failing event (default:
    ``<input>: event at position N (id X)``). ``count_marking``: count partial matches per place
    and firings per transition, for :meth:`net_stats` (``--stats``, ``draw --stats``). ``progress(n)``: called after every ``PROGRESS_EVERY`` events with ``n`` (and with
    the remainder at the end). :meth:`stop` (e.g. from a signal handler) ends the
    iteration after the current event, without the end-of-stream flush: every match
    yielded so far is a match of the whole run."""

    def __init__(
        self,
        program: Net | HistoryRunner,
        spec: InputSpec,
        *,
        files: Sequence[A.PatternFile] = (),
        tie: str = "arrival",
        slack: float | int | None = None,
        on_late: LateHandler | None = None,
        prefilter: bool = True,
        progress: Callable[[int], None] | None = None,
        max_partial_matches: int | None = MAX_PARTIAL_MATCHES,
        max_memory: int | None = None,
        count_marking: bool = False,
        engine: str = "kernel",
        bindings: bool = False,
        source: EventSource | None = None,
        locate: Callable[[Event], str] | None = None,
    ) -> None:
        if engine not in ENGINES:
            raise ConfigError(f"engine must be one of {', '.join(map(repr, ENGINES))}, not {engine!r}")
        self.history: HistoryRunner | None = None
        self._pusher: Matcher | HistoryRunner
        self.engine: Matcher
        # which engine fires the whole net, and why (engine="kernel": the kernel where it covers it)
        options = Options(tie, engine, slack=slack, stdin=spec.path == "-", bindings=EVENTS if bindings else None)
        self.choice = choose(program, options) if isinstance(program, Net) else program.engine_choice
        # the kernel takes batches the reader checked whole as columns, without an Event per row
        self._columns: Callable[[EventColumns], Iterable[Match]] | None = None
        # the kernel alone reads a batch's types and times from their columns, and only the
        # fields its patterns read (the reader leaves the rest unconverted: RowChecker.converted)
        self._fields_only = False
        if isinstance(program, Net):
            budget = Budget(max_partial_matches, max_memory, count_marking, on_late)
            self.engine = self._pusher = self._matcher(program, options, budget)
        else:
            if slack is not None:
                raise ConfigError("a run over an archive takes no slack (yet): archive a time-ordered stream")
            self.history = self._pusher = program
            self.engine = program.engine
        self._drain: Callable[[], list[Match]] = self._pusher.drain  # (the kernel's batch collected so far)
        self.spec = read_rules(replace(spec, ordered=slack is None), self.engine.net)
        # a source opened by the caller (a DataFrame's, petricep.api.frames) is read as it is
        self.source = source if source is not None else open_checked(files, self.spec)
        self._locate = locate
        self.prefilter: Prefilter | None = None
        self._types: set[str] = set()  # types of the events read (and the source's batch_types: see types_seen)
        if prefilter and slack is None and self.history is None:
            self.prefilter = self.source.row_filter = Prefilter(self.engine.net)
        self.progress = progress
        # event id -> event, filled when set (SQL matches carry ids only: their events are
        # looked up here for ``--with-events``)
        self.events_by_id: dict[Any, Event] | None = None
        # called after the matches of each event (e.g. to flush a live output)
        self.after_event: Callable[[], None] | None = None
        self.elapsed = 0.0  # seconds spent iterating
        self.stopped = False  # whether stop() ended the iteration before the input did
        self._stop = False
        self._last_pos = -1
        self._current: Event | None = None  # the event being pushed (an error's location)

    def _matcher(self, net: Net, options: Options, budget: Budget) -> Matcher:
        """The chooser's matcher for the run (:func:`~petricep.kernel.choice.matcher`), and
        what the run feeds it (columns for the kernel, else an event per row)."""
        found = matcher(self.choice, net, options, budget)
        if isinstance(found, KernelEngine):  # (standard input: a batch is what one read gave, each line as it comes)
            self._columns = found.push_columns_iter
            self._fields_only = options.bindings is None  # (bound events carry every field)
        return found

    def stop(self) -> None:
        """End the iteration after the current event (safe from a signal handler)."""
        self._stop = True

    def __iter__(self) -> Iterator[Match]:
        return self._timed(_Feed(self._pusher.push, self._columns, self._drain, self._pusher.flush))

    def match_batches(self) -> Iterator[Chunk]:
        """The matches as the run finds them, a kernel call's at a time, for writers that
        take columns (``petricep run``'s match file): a ``pa.RecordBatch``
        (:mod:`petricep.kernel.batches`: no :class:`Match` is made) where the kernel runs the
        net and a batch holds its matches exactly, else a list of :class:`Match` objects (the
        Python engine: an event's matches; the kernel: a call's matches where ids or times
        mix kinds, or in a net that binds composite events). In the engine's order, with the
        errors, accounting and :attr:`after_event` calls of iterating the run."""
        engine = self._pusher
        if isinstance(engine, KernelEngine):
            # (a batch's matches a slice at a time: an explosive pattern's reach the writer as found)
            stream = engine.push_columns_stream if self._columns is not None else None
            return self._timed(_Feed(engine.push_chunks, stream, engine.drain_chunks, engine.flush_chunks))
        return self._timed(_Feed(_chunked(engine.push), None, _chunked(self._drain), _chunked(engine.flush)))

    def _timed(self, feed: _Feed[T]) -> Iterator[T]:
        started = time.perf_counter()
        try:
            yield from self._matches(feed)
        finally:
            self.elapsed += time.perf_counter() - started

    def _matches(self, feed: _Feed[T]) -> Iterator[T]:
        try:
            yield from self._events(feed)
        except EvaluationError as exc:
            raise self._located(exc, self._current) from None
        except MemoryError:  # (the machine's limit before the run's budgets: the typed error, exit 3)
            raise out_of_memory() from None
        except EventError:
            # a row the reader fails on ends the run: the matches of the events before it
            # first (the kernel fires in batches: those still collected; an event among them
            # can fail too, and that error, located, is the run's)
            try:
                yield from feed.drain()
            except EvaluationError as exc:
                raise self._located(exc, self._current) from None
            raise

    def _events(self, feed: _Feed[T]) -> Iterator[T]:
        push, every, tick = feed.push, PROGRESS_EVERY, self.progress
        keep, after, seen = self.events_by_id, self.after_event, self._types.add
        columns = feed.columns
        n = 0
        # (SQL matches' events looked up by id, ``events_by_id``: every row an event, kept)
        as_columns = columns is not None and keep is None
        items: Iterator[Event | EventColumns] = self.source.items(as_columns=as_columns, fields_only=self._fields_only)
        if self._read_ahead():
            items = iter(ReadAhead(items))
        for current in items:
            if isinstance(current, EventColumns):  # a checked batch (only asked for by the kernel)
                assert columns is not None
                out = columns(current)
                self._types.update(current.type_names())
                done = len(current)
                if done and tick is not None and (n % every) + done >= every:
                    tick(((n % every) + done) // every * every)
                n += done
                found = False
                for chunk in out:
                    found = True
                    yield chunk
                if found and after is not None:
                    after()
                if self._stop and done:
                    self.stopped = True
                    self._last_pos = int(current.pos[-1])
                    break
                continue
            self._current = current
            seen(current.type)
            if keep is not None and keep.setdefault(current.id, current) is not current:
                raise self._repeated_id(keep[current.id], current)
            out = push(current)
            if out:
                yield from out
                if after is not None:
                    after()
            n += 1
            if tick is not None and n % every == 0:
                tick(every)
            if self._stop:
                self.stopped = True
                self._last_pos = current.pos
                yield from feed.drain()  # events collected for a batch (the kernel)
                break
        self._current = None
        if not self.stopped:
            yield from feed.drain()  # the last batch's matches, before an error in it
            yield from feed.flush()
        if tick is not None:
            tick(n % every)

    def _read_ahead(self) -> bool:
        """Whether the source is read on a thread of its own while the engine fires
        (:mod:`petricep.io.prefetch`): not for standard input (each line's matches are
        written as it arrives), not where rows are skipped (``on_error="skip"``: the rejects
        file and counts of a stopped run end at its last event)."""
        spec = self.spec
        return spec.path != "-" and spec.on_error != "skip"

    def _repeated_id(self, first: Event, again: Event) -> EventError:
        """A SQL match names its events by id, and ``--with-events`` looks them up by it: an id
        two events have would give one event's fields for the other's, so it stops the run."""
        where = self._locate or (lambda e: f"the event at position {e.pos}")
        return EventError(
            f"id {again.id!r} of {where(again)} repeats ({where(first)} has it too): a SQL match's events are found by id "
            "to give their fields, so each id must name one event (give an id column of unique ids, or none: the positions)",
            str(self.spec.path), None, self.spec.id_field,
        )

    def _located(self, exc: EvaluationError, current: Event | None) -> EvaluationError:
        """The engine's error, named by the input and the event that failed (with a slack:
        the held event being released, not the one arriving)."""
        failed = getattr(exc, "event", None) or current
        label = str(self.spec.path)
        if self._locate is not None:
            return EvaluationError(f"{self._locate(failed)}: {exc}") if failed is not None else exc
        where = f"{label}: event at position {failed.pos} (id {failed.id!r})" if failed else label
        return EvaluationError(f"{where}: {exc}")

    def report(self) -> dict[str, Any]:
        """The accounting so far: ``events`` (read = processed + rejected + late; rows the
        prefilter dropped count as processed), per pattern its matches, timeouts, dropped
        and alive partial matches, partial matches overall, and with an archive the join's
        counters (``history``).

        A stopped run counts the rows up to its last event: the reader converts rows a
        batch at a time, and rows of the batch after that event were not processed; since
        every row has a position, rows read = that event's position + 1."""
        src = self.source
        report = self.engine.report(src.rows_read, src.rows_rejected)
        ev = report["events"]
        if self.stopped:
            ev["read"] = self._last_pos + 1
            ev["processed"] = ev["read"] - ev["rejected"] - ev["late"]
        elif self.prefilter is not None:
            ev["processed"] += self.prefilter.rows_in - self.prefilter.rows_kept
        report["engine"] = self.choice.report()
        if src.time_sort is not None:  # a table out of time order, read sorted (petricep.io.tables.time_sorted)
            report["sorted"] = src.time_sort.report()
        if self.history is not None:
            report["history"] = history_report(self.history)
            for name, count in self.history.join.stats.per_pattern.items():
                report["patterns"][name]["matches"] = count
        return report

    def net_stats(self) -> dict[str, Any] | None:
        """The run's marking on its net, as ``--stats`` writes it (its ``"net"`` section, read
        by ``draw --stats``: :func:`~petricep.export.views.marking_from_stats`); None unless
        the run counts it (``count_marking``, not with an archive)."""
        counts = self.engine.marking() if self.history is None else None
        if counts is None:
            return None
        matches = {name: p["matches"] for name, p in self.engine.report()["patterns"].items()}
        return stats_section(build_diagram(self.engine.net), *counts, matches)

    def types_seen(self) -> set[str]:
        """The event types of the rows read so far (those the prefilter dropped too: the
        reader's batch check notes every batch's types, so a pattern without matches is told
        which types the input had)."""
        return self._types | self.source.batch_types

    @property
    def incomplete(self) -> bool:
        """Whether some input rows were rejected or late (all counted in the report)."""
        ev = self.report()["events"]
        return bool(ev["rejected"] or ev["late"])


__all__ = [
    "ENGINES",
    "PROGRESS_EVERY",
    "Run",
    "check_columns",
    "check_read_columns",
    "open_checked",
    "read_rules",
]
