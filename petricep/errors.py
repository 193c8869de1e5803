"""One hierarchy for every error a user can cause.

The CLI catches :class:`PetricepError` and prints ``str(err)``; nothing below it
should ever reach the user as a traceback.
"""

from __future__ import annotations


class PetricepError(Exception):
    """Base of every error petricep raises on bad input or bad use."""


class PatternError(PetricepError):
    """A pattern file is malformed or inconsistent.

    Carries the file, 1-based line and column and the source (the offending line, or the
    whole text it came from). The caret is drawn when the error is reported (``str()`` /
    :meth:`format`), not when it is raised, so an error found at any stage (checking,
    compiling, merging) shows its source line as long as it knows where it came from.
    """

    def __init__(
        self,
        message: str,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        source_line: str | None = None,
        source: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.source_line = source_line
        self.source = source
        # every field in args: the error pickles (Spark) and compares by what it says
        super().__init__(message, file, line, column, source_line, source)

    def __str__(self) -> str:
        return self.format()

    def line_text(self) -> str | None:
        """The source line the error points into (None when unknown)."""
        if self.source_line is not None:
            return self.source_line
        if self.source is None or not self.line:
            return None
        lines = self.source.splitlines()
        return lines[self.line - 1] if 0 < self.line <= len(lines) else None

    def format(self) -> str:
        """``file:line:col: error: message`` and, when the source is known, the line with a
        caret under the column (like a compiler, or lark's ``get_context``)."""
        where = self.file or "<pattern>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        text = f"{where}: error: {self.message}"
        src = self.line_text()
        if src is not None and self.column is not None:
            text += "\n    " + src.rstrip("\n")
            text += "\n    " + " " * (self.column - 1) + "^"
        return text


class PatternSyntaxError(PatternError):
    """The text does not follow the grammar."""


class PatternSemanticError(PatternError):
    """The text parses but means nothing (unknown variable, bad index, bad window...)."""


class PatternLimitError(PatternSemanticError):
    """The text is beyond one of the documented limits of the pattern language (nesting
    depth, number length, pattern size: docs/SEMANTICS.md, "Limits"); checked where the text is
    read, so the interpreter never meets it (no RecursionError, no OverflowError)."""


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
