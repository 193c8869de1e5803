"""Match times as the input wrote them: a formatter from the input's first time value or its
``time_format``, for JSON Lines and the table.

Why its own module: JSON Lines (:mod:`petricep.output.jsonl`), the table
(:mod:`petricep.output.table`) and Spark's writer all print ``start`` / ``end`` / a timeout's
``deadline`` the same way, and none of them should import another to do it. Matches carry
times as epoch seconds; a formatter turns one back into the input's own text (ISO with its
separator, fraction digits and zone style, or its strptime format), numbers staying numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone
from typing import Any

from petricep.errors import EventError
from petricep.io.readers import open_events
from petricep.io.timestamps import format_has_date

TimeFormatter = Callable[[Any], Any]
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def micros(ts: Any) -> int | None:
    """A time in epoch seconds as whole microseconds (None for a missing or non-finite time)."""
    if ts is None or (isinstance(ts, float) and not math.isfinite(ts)):
        return None
    if isinstance(ts, int):
        return ts * 1_000_000
    return round(ts * 1_000_000)


def _fraction(us: int, digits: int) -> str:
    if not us and not digits:
        return ""
    text = f"{us:06d}".rstrip("0")
    return "." + text.ljust(max(digits, len(text)), "0")


def _iso(dt: datetime, sep: str, digits: int, suffix: str | None) -> str:
    text = dt.strftime(f"%Y-%m-%d{sep}%H:%M:%S") + _fraction(dt.microsecond, digits)
    if suffix is None:
        return text
    if suffix == "Z":
        return text + "Z"
    return text + dt.strftime("%z")[:3] + ":" + dt.strftime("%z")[3:]


def _digits(text: str) -> int:
    """How many fraction digits an ISO time shows (``07:50:00.50`` -> 2)."""
    head = text[11:] if len(text) > 11 else ""
    if "." not in head and "," not in head:
        return 0
    frac = head.replace(",", ".").split(".", 1)[1]
    return len(frac) - len(frac.lstrip("0123456789")) if frac else 0


def time_formatter(sample: Any, time_format: str | None = None) -> TimeFormatter:
    """Prints a match's times (epoch seconds, as matches carry them) the way the input wrote
    them; ``sample``: the time column's value in the first input row (as read), ``time_format``:
    the input's strptime format. Numbers stay numbers; ISO text gives ISO text with the same
    date/time separator, fraction digits (at least) and zone style (``Z``, an offset: the
    time shown at that offset, or none: UTC); a ``time_format`` gives that format (UTC);
    Arrow/pandas date-times give ISO text in their own time zone."""
    if time_format is not None:
        has_date = format_has_date(time_format)

        def by_format(ts: Any) -> Any:
            us = micros(ts)
            if us is None:
                return ts
            base = _EPOCH if has_date else datetime(1900, 1, 1, tzinfo=timezone.utc)
            return (base + timedelta(microseconds=us)).strftime(time_format)

        return by_format
    if isinstance(sample, datetime):
        tz = sample.tzinfo

        def by_datetime(ts: Any) -> Any:
            us = micros(ts)
            if us is None:
                return ts
            dt = _EPOCH + timedelta(microseconds=us)
            return _iso(dt.astimezone(tz), "T", 0, "offset") if tz is not None else _iso(dt, "T", 0, None)

        return by_datetime
    if isinstance(sample, date):
        return _date_formatter("T", 0, None)
    if isinstance(sample, str) and len(sample) >= 10 and sample[:4].isdigit() and sample[4] == "-":
        sep = sample[10] if len(sample) > 10 and sample[10] in "T t" else "T"
        suffix: str | None = None
        if sample[-1] in "Zz":
            suffix = "Z"
        elif len(sample) > 10 and ("+" in sample[10:] or "-" in sample[10:]):
            suffix = "offset"
        if suffix == "offset":
            try:
                tz = datetime.fromisoformat(sample).tzinfo
            except ValueError:
                tz = None
            return _offset_formatter(sep, _digits(sample), tz)
        if len(sample) == 10:
            return _date_formatter(sep, 0, suffix)
        return _date_formatter(sep, _digits(sample), suffix, always_time=True)
    return lambda ts: ts


def input_times(spec: Any, path: str | None = None) -> TimeFormatter | None:
    """How ``petricep run`` writes the times of matches over the input ``spec`` reads
    (``path``: a local file to read its first row from instead of ``spec.path``): as the
    input wrote its date-times (:func:`time_formatter` of the first row's time value); None
    where the times are numbers (or times of day: a ``time_format`` without a date, whose
    tables hold seconds too), or the input cannot be read here (a remote path)."""
    where = path if path is not None else spec.path
    if spec.time_field is None or not where or "://" in where:
        return None
    if spec.time_format is not None and not format_has_date(spec.time_format):
        return None  # (times of day stay seconds, as in the tables)
    try:
        source = open_events(replace(spec, path=where, required={}, numeric={}, rejects_path=None))
        if source.time_kind != "datetime":
            return None
        first = source.first_row()
    except (EventError, OSError):
        return None
    return time_formatter(first.get(spec.time_field) if first else None, spec.time_format)


def _date_formatter(sep: str, digits: int, suffix: str | None, always_time: bool = False) -> TimeFormatter:
    def fmt(ts: Any) -> Any:
        us = micros(ts)
        if us is None:
            return ts
        dt = _EPOCH + timedelta(microseconds=us)
        if not always_time and not (dt.hour or dt.minute or dt.second or dt.microsecond):
            return dt.strftime("%Y-%m-%d")
        return _iso(dt, sep, digits, suffix)

    return fmt


def _offset_formatter(sep: str, digits: int, tz: Any) -> TimeFormatter:
    def fmt(ts: Any) -> Any:
        us = micros(ts)
        if us is None:
            return ts
        dt = _EPOCH + timedelta(microseconds=us)
        return _iso(dt.astimezone(tz) if tz is not None else dt, sep, digits, "offset")

    return fmt


__all__ = ["TimeFormatter", "input_times", "micros", "time_formatter"]
