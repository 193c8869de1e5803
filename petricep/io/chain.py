"""Several event files read as one stream: :class:`ChainSource`.

``petricep run --events part-1.csv part-2.csv`` (or a glob) reads the files one after the
other, in the order given, as FlinkCEP, Esper and the log tools read the files of one
stream: positions (and so default ids) go on from file to file, the time-order check goes
on across files (a second file that starts before the first one ended is an error at its
line, or needs ``--slack``), one rejects file and one count cover all of them, and every
error names the file and line it is about. Files of a delimited or Parquet format must
have the same columns, so that a field means the same in every file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..errors import EventError
from ..events import Event, EventColumns
from .checks import RowChecker
from .source import EventSource
from .spec import InputSpec


class ChainSource(EventSource):
    """The events of ``parts`` (one source per file, each opened with its own path), in
    order, through one checker: one pass, one position counter, one time order."""

    def __init__(self, spec: InputSpec, parts: Sequence[EventSource], same_columns: bool) -> None:
        super().__init__(spec, chain_label([p.label for p in parts]))
        self.parts = list(parts)
        first = self.parts[0]
        self.columns = first.columns
        if same_columns:
            for part in self.parts[1:]:
                if part.columns != first.columns:
                    raise EventError(
                        f"its columns ({', '.join(part.columns or ())}) are not those of {first.label} "
                        f"({', '.join(first.columns or ())}): files of one stream must have the same columns",
                        part.label,
                        1,
                    )

    def read_first_row(self) -> Mapping[str, Any] | None:
        return self.parts[0].first_row()

    def read_events(self, checker: RowChecker) -> Iterator[Event | EventColumns]:
        for part in self.parts:
            checker.label = part.label  # errors of its rows name the file they are in
            yield from part.read_events(checker)


def chain_label(labels: Sequence[str]) -> str:
    """How several files are named in a message that is about all of them."""
    if len(labels) <= 3:
        return " + ".join(labels)
    return f"{labels[0]} + {len(labels) - 1} more files"


__all__ = ["ChainSource", "chain_label"]
