"""What both ASTs (the pattern language's, :mod:`petricep.lang.ast`, and SQL's,
:mod:`petricep.lang.sql_ast`) are made of: source spans and the WITHIN window. Kept apart
so that neither AST imports the other's module for them (no import cycle).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field


@dataclass(frozen=True)
class Span:
    """Where a node came from: 1-based line and column in ``file``, and the text of ``file``
    (one shared string, not compared) so that an error found at any later stage draws its
    caret under the source line (:class:`petricep.errors.PatternError`)."""

    file: str = "<pattern>"
    line: int = 0
    column: int = 0
    source: str = dc_field(default="", compare=False, repr=False)


NOWHERE = Span()


WIN_TIME = "time"  # WITHIN n            (timestamp units)
WIN_DURATION = "duration"  # WITHIN n s|min|h|d (converted to seconds)
WIN_COUNT = "count"  # WITHIN n EVENTS

DURATION_UNITS = {
    "ms": 0.001,
    "s": 1,
    "sec": 1,
    "second": 1,
    "seconds": 1,
    "min": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
}


@dataclass(frozen=True)
class Window:
    """A WITHIN clause: a value object that prints itself, the one place a window is
    written out (pattern text, ``check``, diagrams)."""

    kind: str  # WIN_*
    value: int | float  # in timestamp units, seconds, or events
    unit: str | None = None  # the unit as written, for printing
    span: Span = dc_field(default=NOWHERE, compare=False)

    def text(self) -> str:
        """The WITHIN clause's argument as written: ``10``, ``12 h``, ``20 EVENTS``."""
        if self.kind == WIN_COUNT:
            return f"{_number(self.value)} EVENTS"
        if self.kind == WIN_DURATION:
            return f"{_number(self.value)} {self.unit or 's'}"
        return _number(self.value)


def _number(v: int | float) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else repr(v)
