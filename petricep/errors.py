"""One hierarchy for every error a user can cause.

The CLI catches :class:`PetricepError` and prints ``str(err)``; nothing below it
should ever reach the user as a traceback.
"""

from __future__ import annotations


class PetricepError(Exception):
    """Base of every error petricep raises on bad input or bad use."""


class PatternError(PetricepError):
    """A pattern file is malformed or inconsistent.

    Carries the file, 1-based line and column and renders the offending source line
    with a caret under the column, like a compiler.
    """

    def __init__(
        self,
        message: str,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        source_line: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.source_line = source_line
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.file or "<pattern>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = f"{where}: error: {self.message}"
        if self.source_line is not None and self.column is not None:
            text += "\n    " + self.source_line.rstrip("\n")
            text += "\n    " + " " * (self.column - 1) + "^"
        return text


class PatternSyntaxError(PatternError):
    """The text does not follow the grammar."""


class PatternSemanticError(PatternError):
    """The text parses but means nothing (unknown variable, bad index, bad window...)."""


class EventError(PetricepError):
    """An input event is malformed: names the file, the row (1-based line for text
    files, 0-based row for Parquet) and the field."""

    def __init__(
        self,
        message: str,
        file: str | None = None,
        row: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.row = row
        self.field = field
        where = file or "<events>"
        if row is not None:
            where += f":{row}"
        if field is not None:
            where += f": field {field!r}"
        super().__init__(f"{where}: error: {message}")


class EventOrderError(EventError):
    """Timestamps go backwards in an input that must be time-ordered."""


class ConfigError(PetricepError):
    """Bad options: unknown format, conflicting flags, unsupported combination."""


class EvaluationError(PetricepError):
    """A condition could not be evaluated on an event (e.g. comparing text with a number)."""


class StateLimitError(PetricepError):
    """A pattern with ``LIMIT n PARTIAL MATCHES ... FAIL`` needed more live partial matches."""
