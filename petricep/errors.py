"""One hierarchy for every error a user can cause.

The CLI catches :class:`PetricepError` and prints ``str(err)``; nothing below it
should ever reach the user as a traceback. Each class carries the CLI's exit status for it
(``exit_code``), so that a script can tell what to fix without reading the message: 2 the
command line or a pattern (usage), 3 the events (data), 1 the environment (an output that
cannot be written) or anything else. README "Exit status" lists them.
"""

from __future__ import annotations

EXIT_ERROR, EXIT_USAGE, EXIT_DATA = 1, 2, 3


class PetricepError(Exception):
    """Base of every error petricep raises on bad input or bad use."""

    exit_code = EXIT_ERROR


class PatternError(PetricepError):
    """A pattern file is malformed or inconsistent.

    Carries the file, 1-based line and column and the source (the offending line, or the
    whole text it came from). The caret is drawn when the error is reported (``str()`` /
    :meth:`format`), not when it is raised, so an error found at any stage (checking,
    compiling, merging) shows its source line as long as it knows where it came from.
    """

    exit_code = EXIT_USAGE

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


class PatternErrors(PatternError):
    """Several errors of pattern files, reported together (``petricep check`` reads every
    file to its end and says every mistake, each with its caret, in file order). Its
    location fields are its first error's; :attr:`errors` holds them all."""

    def __init__(self, errors: tuple[PatternError, ...]) -> None:
        first = errors[0]
        super().__init__(first.message, first.file, first.line, first.column, first.source_line, first.source)
        self.errors = tuple(errors)
        self.args = (self.errors,)  # pickles (Spark) as the errors it holds

    def format(self) -> str:
        return "\n".join(e.format() for e in self.errors)


def flatten_errors(errors: list[PatternError]) -> list[PatternError]:
    """The single errors in ``errors``, a :class:`PatternErrors` replaced by those it holds."""
    flat: list[PatternError] = []
    for e in errors:
        flat.extend(e.errors if isinstance(e, PatternErrors) else (e,))
    return flat


def raise_errors(errors: list[PatternError]) -> None:
    """Raise what ``errors`` holds: nothing when empty, one error as itself, several as one
    :class:`PatternErrors` (each flattened into it: errors of files of errors of patterns)."""
    flat = flatten_errors(errors)
    if len(flat) == 1:
        raise flat[0]
    if flat:
        raise PatternErrors(tuple(flat))


class PatternSyntaxError(PatternError):
    """The text does not follow the grammar."""


class PatternSemanticError(PatternError):
    """The text parses but means nothing (unknown variable, bad index, bad window...)."""


class PatternUnsupportedError(PatternSemanticError):
    """The text means something petricep does not run yet (a per-step gap inside AND/OR, on a
    Kleene step...): refused with a caret rather than run with another meaning."""


class PatternLimitError(PatternSemanticError):
    """The text is beyond one of the documented limits of the pattern language (nesting
    depth, number length, pattern size: docs/SEMANTICS.md, "Limits"); checked where the text is
    read, so the interpreter never meets it (no RecursionError, no OverflowError)."""


class DataError(PetricepError):
    """Something read as data is wrong (events, a matches file to plot); the message says
    where. Exits 3, as every data error does."""

    exit_code = EXIT_DATA


class EventError(DataError):
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

    exit_code = EXIT_USAGE


class SnapshotError(ConfigError):
    """A kernel engine's state snapshot (petricep.kernel.snapshot) cannot be taken (events
    collected but not fired, an error pending) or restored (it is of another net or tie rule,
    truncated or corrupt): the caller's use of it is wrong, not the events."""


class OutputError(PetricepError):
    """An output cannot be written (unwritable path, missing directory, disk full): the
    environment's problem, not the command line's or the data's."""


class EvaluationError(PetricepError):
    """A condition could not be evaluated on an event (e.g. comparing text with a number):
    the event's values are what is wrong, so it is a data error."""

    exit_code = EXIT_DATA


class StateLimitError(PetricepError):
    """A pattern with ``LIMIT n PARTIAL MATCHES ... FAIL`` needed more live partial matches
    (or the run's memory budget was reached): the data drove the state past what the pattern
    or the budget allows, so it exits as a data error."""

    exit_code = EXIT_DATA


class PetricepWarning(UserWarning):
    """What a run says beside its matches where the user likely made a mistake (patterns
    that found nothing and why, epoch milliseconds read as seconds): ``petricep.match``
    raises one per line the command line writes to stderr; filter them with
    ``warnings.filterwarnings("ignore", category=PetricepWarning)``."""

