"""The event source every reader is: :class:`EventSource`, an input's events in input
order. A reader subclass names its columns and turns its rows into events through a
:class:`~petricep.io.checks.RowChecker`, the one place rows are checked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..errors import EventError
from ..events import Event, EventColumns
from .checks import MISSING, ReadCounts, RowChecker, RowRules
from .spec import InputSpec
from .timestamps import TimeParser

if TYPE_CHECKING:  # the filter is built by the runtime (petricep.runtime.prefilter)
    from ..runtime.prefilter import Prefilter


@dataclass(frozen=True)
class TimeSort:
    """How a table out of time order was sorted before it became events
    (:func:`petricep.io.tables.time_sorted`): ``rows[i]`` is the table row read ``i``-th,
    ``by`` the time column, ``moved`` how many rows changed place."""

    rows: Any  # numpy int64: the table's row numbers in the order read
    by: str
    moved: int

    def note(self) -> str:
        """The report's line: what was done, and what the positions (and default ids) count."""
        return (
            f"the table was not in time order: its {len(self.rows)} rows were sorted by {self.by!r} "
            f"({self.moved} moved; rows with equal times keep their order), then matched; "
            "errors name the table's rows, match ids without an id column count the rows in time order"
        )

    def report(self) -> dict[str, Any]:
        return {"rows": len(self.rows), "moved": self.moved, "by": self.by, "note": self.note()}


class EventSource:
    """An input's events, in input order (iterate it; each iteration re-reads).

    ``columns``: the known column names (CSV header or ``columns``, Parquet/table
    schema, keys of the first JSON Lines row or record), known right after
    construction. ``rows_read`` / ``rows_rejected``: rows read (accepted and
    rejected) and rows rejected by the current or last iteration. ``time_kind``:
    ``"number"`` or ``"datetime"`` (known before iteration: the first row is peeked).
    """

    columns: tuple[str, ...] | None

    def __init__(self, spec: InputSpec, label: str) -> None:
        self.spec = spec
        self.label = label
        self.columns = None
        self.counts = ReadCounts()
        self.rules = RowRules(spec)
        # rows no pattern can use are dropped a batch at a time (petricep.runtime.prefilter);
        # their positions are still counted
        self.row_filter: Prefilter | None = None
        # a table read sorted by time (petricep.io.tables.time_sorted); None: in input order
        self.time_sort: TimeSort | None = None

    def input_row(self, pos: int) -> int:
        """The input's row of the event at position ``pos`` (a sorted table's row in the
        table, else the position itself)."""
        sort = self.time_sort
        return int(sort.rows[pos]) if sort is not None and 0 <= pos < len(sort.rows) else pos

    @property
    def rows_read(self) -> int:
        return self.counts.rows_read

    @property
    def rows_rejected(self) -> int:
        return self.counts.rows_rejected

    @property
    def batch_types(self) -> set[str]:
        """The event types of the rows read in batches checked whole (rows a row filter
        dropped included; rows checked one by one become events, whose types the caller sees)."""
        return self.counts.batch_types

    @property
    def time_kind(self) -> str:
        counts = self.counts
        if counts.time_kind is None:
            spec = self.spec
            if spec.time_field is None:
                counts.time_kind = "number"
            elif spec.time_format is not None:
                counts.time_kind = "datetime"
            else:
                first = self.first_row()
                v = first.get(spec.time_field, MISSING) if first is not None else MISSING
                counts.time_kind = TimeParser().probe_kind(v) if v is not MISSING else "number"
        return counts.time_kind

    @property
    def ts_in_seconds(self) -> bool:
        """Whether ``ts`` values are seconds (date-times, or numbers with a time_unit)."""
        return self.time_kind == "datetime" or self.spec.time_unit is not None

    def __iter__(self) -> Iterator[Event]:
        return cast(Iterator[Event], self.items())  # without as_columns a reader gives events only

    def items(self, as_columns: bool = False, fields_only: bool = False) -> Iterator[Event | EventColumns]:
        """One pass over the input. ``as_columns``: a batch the reader checks whole comes as
        one :class:`EventColumns` (for the compiled kernel), the rows it checks one by one
        as events; ``fields_only``: the batch's attributes are only the fields the patterns
        read and the id (the caller takes types and times from their own columns and asks a
        batch for events only to name a row by its position and id: RowChecker.converted)."""
        kind = self.counts.time_kind
        self.counts = ReadCounts()
        self.counts.time_kind = kind
        checker = RowChecker(self.spec, self.label, self.rules, self.counts, self.row_filter, as_columns, fields_only)
        try:
            yield from self.read_events(checker)
        finally:
            checker.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label!r} columns={self.columns!r}>"

    # -- what a reader provides ------------------------------------------------------

    def read_events(self, checker: RowChecker) -> Iterator[Event | EventColumns]:
        """The events of one pass, every row through ``checker``."""
        raise NotImplementedError

    def first_row(self) -> Mapping[str, Any] | None:
        """The first row as a mapping (to tell the time kind before reading), or None.
        Read once: later calls give what the first one read."""
        if not hasattr(self, "_first_row"):
            self._first_row = self.read_first_row()
        return self._first_row

    def read_first_row(self) -> Mapping[str, Any] | None:
        """What :meth:`first_row` reads (a reader that can peek overrides this)."""
        return None

    def check_columns(self, row: int | None) -> None:
        """Every column the spec names is there (``row``: where the names were read)."""
        assert self.columns is not None
        have = set(self.columns)
        for name in self.rules.columns(self.spec):
            if name not in have:
                raise EventError(f"missing column {name!r}", self.label, row, name)


__all__ = ["EventSource", "TimeSort"]
