"""What an input is and how its rows become events: :class:`InputSpec`, and the checks of
its options that hold whatever the format (a spec is checked once, when a reader opens).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from .timestamps import UNIT_FACTORS


@dataclass(frozen=True)
class InputSpec:
    """Where events come from and how a row becomes an :class:`Event`.

    ``required`` / ``numeric`` map an event type (``"*"``: every type) to attribute
    names; every event of that type must have them (non-null), respectively have
    them as numbers (a numeric attribute is also required).
    """

    path: str
    format: str | None = None
    type_field: str | None = None
    type_const: str | None = None
    time_field: str | None = None
    id_field: str | None = None
    columns: tuple[str, ...] | None = None
    delimiter: str | None = None
    time_format: str | None = None
    time_unit: str | None = None
    on_error: str = "fail"
    rejects_path: str | None = None
    required: Mapping[str, frozenset[str]] = field(default_factory=dict)
    numeric: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # False: timestamps may go backwards (the engine re-orders with a slack, see
    # petricep.runtime.ordering); True: a decreasing timestamp is an error of its row
    ordered: bool = True
    # further files of the same stream, read after ``path`` in this order
    # (petricep.io.chain); ``path`` ``-`` is standard input
    more_paths: tuple[str, ...] = ()


def rule_map(m: Mapping[str, Any], what: str) -> dict[str, frozenset[str]]:
    """``required`` or ``numeric`` as a plain dict of frozensets (``what`` names it in errors)."""
    if not isinstance(m, Mapping):
        raise ConfigError(f"{what} must map event types to attribute names")
    out: dict[str, frozenset[str]] = {}
    for k, v in m.items():
        if isinstance(v, str) or not isinstance(v, Iterable):
            raise ConfigError(f"{what}[{k!r}] must be a set of attribute names, not {v!r}")
        out[str(k)] = frozenset(str(a) for a in v)
    return out


def check_spec(spec: InputSpec, text_file: bool) -> None:
    """Reject inconsistent options (``text_file``: a CSV file, where ``columns`` and
    ``delimiter`` apply). The format name is checked by the format registry
    (:mod:`petricep.io.formats`)."""
    if (spec.type_field is None) == (spec.type_const is None):
        raise ConfigError("give exactly one of type_field (a column) and type_const (one type for all)")
    if spec.type_const is not None and (not isinstance(spec.type_const, str) or not spec.type_const):
        raise ConfigError("type_const must be a non-empty string")
    if spec.on_error not in ("fail", "skip"):
        raise ConfigError(f"on_error must be 'fail' or 'skip', not {spec.on_error!r}")
    if spec.rejects_path is not None and spec.on_error != "skip":
        raise ConfigError("rejects_path needs on_error='skip'")
    if spec.time_unit is not None and spec.time_unit not in UNIT_FACTORS:
        raise ConfigError(f"unknown time unit {spec.time_unit!r} (use s, ms, us or ns)")
    if spec.time_field is None and (spec.time_unit is not None or spec.time_format is not None):
        raise ConfigError("time_unit and time_format need a time_field")
    if spec.time_unit is not None and spec.time_format is not None:
        raise ConfigError("give time_unit (numeric timestamps) or time_format (date-times), not both")
    if spec.columns is not None:
        if not text_file:
            raise ConfigError("columns applies to headerless CSV input only")
        if isinstance(spec.columns, str) or not all(isinstance(c, str) for c in spec.columns):
            raise ConfigError("columns must be a sequence of column names")
        dup = duplicate_name(spec.columns)
        if dup is not None:
            raise ConfigError(f"column {dup!r} is named twice in columns")
    if spec.delimiter is not None:
        if not text_file:
            raise ConfigError("delimiter applies to CSV input only")
        if len(spec.delimiter) != 1 or spec.delimiter in '\r\n"':
            raise ConfigError(f"the CSV delimiter must be one character, not {spec.delimiter!r}")
    rule_map(spec.required, "required")
    rule_map(spec.numeric, "numeric")


def duplicate_name(names: Iterable[str]) -> str | None:
    """The first name given twice, or None."""
    seen: set[str] = set()
    for n in names:
        if n in seen:
            return n
        seen.add(n)
    return None


__all__ = ["InputSpec", "check_spec", "duplicate_name", "rule_map"]
