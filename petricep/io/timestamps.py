"""Timestamp parsing: one value at a time, or a whole Arrow column at once.

A timestamp becomes a number ``ts`` and a *kind*:

* ``"number"``: ints and floats (or text that :mod:`petricep.io.values` reads as
  one) are kept as they are, or converted to seconds when a ``time_unit`` is given
  (``"s"``, ``"ms"``, ``"us"``, ``"ns"``); the result is an ``int`` when whole.
* ``"datetime"``: ISO-8601 date-times (``2014-08-01T07:50:00``, optional fraction
  and ``Z``/``+hh:mm`` offset, naive = UTC), Arrow/Python ``datetime`` and ``date``
  values, and every value parsed with a ``time_format`` (``strptime``) become epoch
  seconds (``int`` when whole, else ``float``). A format without a date part
  (``"%H:%M:%S.%f"``) gives seconds since midnight.

NaN, infinite numbers and numbers a float64 does not hold are never timestamps.
"""

from __future__ import annotations

import contextlib
import functools
import math
import numbers
import re
from datetime import date, datetime, timezone
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..runtime.arrow import number_view
from .values import (
    ARROW_FLOAT,
    ARROW_INT,
    FLOAT_MAX,
    FLOAT_RE,
    INT_RE,
    MAX_NUMBER_CHARS,
    plain_ints,
    text_buffers,
)

try:
    from . import _textparse  # type: ignore[attr-defined]
except ImportError:  # not built: fixed_digit_seconds gives None, the values are parsed one by one
    _textparse = None

UNIT_FACTORS: dict[str, int] = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_ARROW_UNIT_FACTORS: dict[str, int] = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# strptime directives that fix a calendar date (the others only fix a time of day)
_DATE_DIRECTIVES = frozenset("dGjmUVWyYBbcx")
_CACHE_LIMIT = 200_000

Number = int | float


def format_has_date(time_format: str) -> bool:
    """Whether a strptime format names any part of a calendar date."""
    i = 0
    while i < len(time_format):
        if time_format[i] == "%" and i + 1 < len(time_format):
            if time_format[i + 1] in _DATE_DIRECTIVES:
                return True
            i += 2
        else:
            i += 1
    return False


_DAY_MONTH = re.compile(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})")
_CLOCK = re.compile(r"([ T])\d{1,2}:\d{2}(:\d{2}(\.\d{1,6})?)?( ?[AaPp][Mm])?")


def format_hint(value: Any) -> str:
    """For a date-time petricep does not read by itself (``03/12/2026 10:00``: not ISO
    8601), the ``--time-format`` that reads it, day or month first as the digits allow
    (``; give --time-format '%d/%m/%Y %H:%M' (or '%m/%d/%Y %H:%M')``); empty for a value of
    no such shape, which is then just not a timestamp."""
    if not isinstance(value, str):
        return ""
    m = _DAY_MONTH.fullmatch(value) or _DAY_MONTH.match(value)
    if m is None:
        return ""
    rest = value[m.end() :]
    clock = _CLOCK.fullmatch(rest) if rest else None
    if rest and clock is None:
        return ""
    sep, year = m.group(2), "%Y" if len(m.group(4)) == 4 else "%y"
    tail = ""
    if clock is not None:
        hour = "%I" if clock.group(4) else "%H"
        tail = f"{clock.group(1)}{hour}:%M" + (":%S" if clock.group(2) else "") + (".%f" if clock.group(3) else "")
        tail += (" %p" if clock.group(4).startswith(" ") else "%p") if clock.group(4) else ""
    first, second = int(m.group(1)), int(m.group(3))
    day_first, month_first = f"%d{sep}%m{sep}{year}{tail}", f"%m{sep}%d{sep}{year}{tail}"
    if first > 12 >= second:
        return f"; give --time-format '{day_first}'"
    if second > 12 >= first:
        return f"; give --time-format '{month_first}'"
    return f"; give --time-format '{day_first}' (or '{month_first}', month first)"


def _whole(seconds: int, microseconds: int) -> Number:
    return seconds if not microseconds else seconds + microseconds / 1e6


def datetime_seconds(dt: datetime) -> Number:
    """Epoch seconds of a date-time; a naive one is taken as UTC."""
    if dt.tzinfo is None or dt.utcoffset() is None:
        dt = dt.replace(tzinfo=timezone.utc)
    d = dt - _EPOCH
    return _whole(d.days * 86400 + d.seconds, d.microseconds)


def time_of_day_seconds(dt: datetime) -> Number:
    """Seconds since midnight (minus the UTC offset when the value has one)."""
    secs = dt.hour * 3600 + dt.minute * 60 + dt.second
    us = dt.microsecond
    off = dt.utcoffset()
    if off:
        secs -= off.days * 86400 + off.seconds
        us -= off.microseconds
        if us < 0:
            secs -= 1
            us += 1_000_000
    return _whole(secs, us)


class TimeParser:
    """Parses timestamps by one spec's ``time_format`` / ``time_unit``.

    :meth:`parse` raises :class:`ValueError` for a value that is no timestamp; the
    caller turns that into the user-facing error.
    """

    def __init__(self, time_format: str | None = None, time_unit: str | None = None) -> None:
        self.format = time_format
        self.factor = UNIT_FACTORS[time_unit] if time_unit else 1
        self.has_date = format_has_date(time_format) if time_format else True
        self._cache: dict[str, tuple[Number, str]] = {}

    # -- one value -----------------------------------------------------------------

    def parse(self, v: Any) -> tuple[Number, str]:
        """``(ts, kind)`` of one value; ``ValueError`` if it is no timestamp."""
        if isinstance(v, str):
            hit = self._cache.get(v)
            if hit is not None:
                return hit
            res = self._parse_text(v)
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[v] = res
            return res
        if v is None or isinstance(v, bool):
            raise ValueError("not a timestamp")
        if isinstance(v, datetime):
            return self._dt(v), "datetime"
        if isinstance(v, date):
            return self._dt(datetime(v.year, v.month, v.day)), "datetime"
        if isinstance(v, numbers.Integral):
            if self.format:
                return self._parse_text(str(int(v)))
            return self.scale_int(int(v)), "number"
        if isinstance(v, numbers.Real) and not self.format:
            f = float(v)
            if not math.isfinite(f):
                raise ValueError("not finite")
            return (f / self.factor if self.factor != 1 else f), "number"
        raise ValueError("not a timestamp")

    def probe_kind(self, v: Any) -> str:
        """The kind a value would give; ``"number"`` when it is no timestamp at all."""
        if self.format:
            return "datetime"
        try:
            return self.parse(v)[1]
        except ValueError:
            return "number"

    def scale_int(self, v: int) -> Number:
        if not -FLOAT_MAX <= v <= FLOAT_MAX:  # the number rule of petricep.io.values
            raise ValueError("out of range")
        f = self.factor
        if f == 1:
            return v
        q, r = divmod(v, f)
        return q if r == 0 else v / f

    def _dt(self, dt: datetime) -> Number:
        try:
            return datetime_seconds(dt) if self.has_date else time_of_day_seconds(dt)
        except OverflowError as e:
            raise ValueError(str(e)) from None

    def _parse_text(self, s: str) -> tuple[Number, str]:
        if self.format:
            try:
                dt = datetime.strptime(s, self.format)
            except (ValueError, OverflowError) as e:
                raise ValueError(str(e)) from None
            return self._dt(dt), "datetime"
        if len(s) > MAX_NUMBER_CHARS:
            raise ValueError("too long")
        if INT_RE.fullmatch(s):
            return self.scale_int(int(s)), "number"
        if FLOAT_RE.fullmatch(s):
            f = float(s)
            if not math.isfinite(f):
                raise ValueError("not finite")
            return (f / self.factor if self.factor != 1 else f), "number"
        if not s or not s[0].isdigit() or not s.isascii():
            raise ValueError("not a timestamp")
        text = s[:-1] + "+00:00" if s[-1] in "Zz" else s
        try:
            dt = datetime.fromisoformat(text)
        except (ValueError, OverflowError) as e:
            raise ValueError(str(e)) from None
        return self._dt(dt), "datetime"

    # -- a whole column ------------------------------------------------------------

    def parse_array(self, arr: pa.Array) -> tuple[list[Number], str | None] | None:
        """``(ts values, kind)`` of a whole column, or ``None`` when some value is bad
        (or the column mixes kinds): the caller then checks the rows one by one.

        Gives exactly what :meth:`parse` gives for each value.
        """
        got = self.parse_column(arr)
        if got is None or not isinstance(got[0], np.ndarray):
            return got  # type: ignore[return-value]
        return got[0].tolist(), got[1]

    def parse_column(self, arr: pa.Array, typed: Any = None) -> tuple[list[Number] | np.ndarray, str | None] | None:
        """:meth:`parse_array`, but a text column whose values are all ints (or all floats)
        may come back as a numpy int64 (float64) array, for a row filter to read as it is.
        ``typed``: the same column as the reader typed its cells
        (:func:`~petricep.io.values.type_text_column`), when it has: its numbers array is
        what the text parse gives without a format or unit (the same rule), taken as it is
        rather than cast and tested again."""
        if (
            isinstance(typed, np.ndarray)
            and typed.dtype in (np.int64, np.float64)
            and self.format is None
            and self.factor == 1
            and (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type))
            and len(arr) == len(typed)
            and arr.null_count == 0
        ):
            return typed, "number"
        t = arr.type
        if pa.types.is_dictionary(t):
            arr = arr.dictionary_decode()
            t = arr.type
        if arr.null_count:
            return None
        if len(arr) == 0:
            return [], None
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return self._parse_text_array(arr)
        if pa.types.is_integer(t):
            if self.format:
                return self._parse_text_array(pc.cast(arr, pa.string()))
            return self._scale_ints(number_view(arr), self.factor), "number"
        if pa.types.is_floating(t):
            if self.format:
                return None
            vals = number_view(arr).astype(np.float64)
            if not np.isfinite(vals).all():
                return None
            if self.factor != 1:
                vals = vals / self.factor
            return vals, "number"
        if pa.types.is_timestamp(t):
            ints = number_view(arr.cast(pa.int64()))
            factor = _ARROW_UNIT_FACTORS[t.unit]
            if not self.has_date:
                return None
            return self._scale_ints(ints, factor), "datetime"
        if pa.types.is_date32(t):
            if not self.has_date:
                return None
            return (number_view(arr.cast(pa.int32())).astype(np.int64) * 86400).tolist(), "datetime"
        if pa.types.is_date64(t):
            if not self.has_date:
                return None
            return self._scale_ints(number_view(arr.cast(pa.int64())), 1000), "datetime"
        return None

    @staticmethod
    def _scale_ints(ints: np.ndarray, factor: int) -> list[Number] | np.ndarray:
        """Integer times over ``factor``: an int64 array where every one divides (the kernel
        and a row filter read it as it is: no Python int per row), else Python values (an
        int where it divides, a float where not; uint64 beyond int64 as ints)."""
        if ints.dtype == np.uint64 and len(ints) and ints.max() > np.iinfo(np.int64).max:
            return [v // factor if v % factor == 0 else v / factor for v in ints.tolist()]
        ints = ints.astype(np.int64, copy=False)
        if factor == 1:
            return ints
        q, r = np.divmod(ints, factor)
        if not r.any():
            return q
        return [v // factor if v % factor == 0 else v / factor for v in ints.tolist()]

    def _parse_text_array(self, arr: pa.Array) -> tuple[list[Number] | np.ndarray, str | None] | None:
        if not self.format:
            first = arr[0].as_py()
            if INT_RE.fullmatch(first):
                ints = plain_ints(arr)  # the common case without a regex over the column
                if ints is None and pc.all(pc.match_substring_regex(arr, ARROW_INT)).as_py():
                    with contextlib.suppress(pa.ArrowInvalid, OverflowError):
                        ints = pc.cast(arr, pa.int64())
                if ints is not None:
                    if self.factor == 1:
                        return number_view(ints), "number"
                    return self._scale_ints(number_view(ints), self.factor), "number"
            elif (
                FLOAT_RE.fullmatch(first)
                and not pc.any(pc.match_substring_regex(arr, ARROW_INT)).as_py()
                and pc.all(pc.match_substring_regex(arr, ARROW_FLOAT)).as_py()
            ):
                try:
                    floats = number_view(pc.cast(arr, pa.float64()))
                except pa.ArrowInvalid:
                    pass
                else:
                    if not np.isfinite(floats).all():
                        return None
                    if self.factor != 1:
                        floats = floats / self.factor
                    return floats, "number"
            else:  # ISO date-times without fraction or offset, as fromisoformat reads them
                layout = _ISO_LAYOUTS.get(len(first), {}).get(first[10:11])
                fixed = fixed_digit_seconds(arr, layout) if layout is not None else None
                if fixed is not None:
                    return fixed, "datetime"
        elif self.has_date:
            fixed = fixed_digit_seconds(arr, self.format)
            if fixed is not None:
                return fixed, "datetime"
        enc = pc.dictionary_encode(arr)
        kinds: set[str] = set()
        parsed: list[Number] = []
        for u in enc.dictionary.to_pylist():
            try:
                ts, kind = self.parse(u)
            except ValueError:
                return None
            parsed.append(ts)
            kinds.add(kind)
        if len(kinds) > 1:
            return None
        indices = number_view(enc.indices)
        return _lookup(parsed)[indices], kinds.pop() if kinds else None


# ISO-8601 date-times fixed_digit_seconds reads without a format, by length, then by the
# character after the date (fromisoformat takes any one there; these are the usual two)
_ISO_LAYOUTS = {
    19: {"T": "%Y-%m-%dT%H:%M:%S", " ": "%Y-%m-%d %H:%M:%S"},
    16: {"T": "%Y-%m-%dT%H:%M", " ": "%Y-%m-%d %H:%M"},
}
_DIGIT_FIELDS = "YmdHMS"  # the fields fixed_digit_seconds reads, in DigitFormat's order


@functools.lru_cache(maxsize=32)
def _digit_format(time_format: str) -> Any:
    """The compiled DigitFormat (:mod:`petricep.io._textparse`) of a format made of %Y %m %d %H %M %S and plain characters:
    where each field starts, the plain characters' positions and codes, the width; None for
    any other format (or one without a year, month and day, or naming a field twice), or
    where the extension is not built."""
    if _textparse is None:
        return None
    fields = [-1] * 6
    literals: list[tuple[int, int]] = []
    pos = i = 0
    while i < len(time_format):
        c = time_format[i]
        if c == "%":
            d = time_format[i + 1] if i + 1 < len(time_format) else ""
            k = _DIGIT_FIELDS.find(d) if d else -1
            if k < 0 or fields[k] >= 0:
                return None
            fields[k] = pos
            pos += 4 if d == "Y" else 2
            i += 2
            continue
        if not c.isascii() or c.isdigit() or (c.isspace() and c != " "):
            return None  # (a space matches a run of white space: here the value's one space)
        literals.append((pos, ord(c)))
        pos += 1
        i += 1
    return _textparse.DigitFormat(fields, literals, pos) if min(fields[:3]) >= 0 else None


def fixed_digit_seconds(arr: pa.Array, time_format: str) -> np.ndarray | None:
    """Epoch seconds (int64) of a text column without nulls in a format of fixed-width digit
    fields (``%Y%m%d%H%M``, ``%Y-%m-%d %H:%M:%S``), read by the compiled reader
    (``DigitFormat.seconds``) straight from Arrow's buffers (~20 ns a value, against strptime
    per distinct value). None (the caller parses value by value) unless every value has the
    format's width, its plain characters and digits in every field, each in range (a year
    from 1, a day of its month, seconds to 59): where strptime reads such a value, it reads
    the fields at these positions (each field's pattern tries its two-digit reading first),
    so the seconds are what :meth:`TimeParser.parse` gives. None as well where the extension is
    not built."""
    fmt = _digit_format(time_format)
    where = text_buffers(arr) if fmt is not None else None
    return fmt.seconds(*where) if where is not None else None  # type: ignore[no-any-return]


def _lookup(values: list[Number]) -> np.ndarray:
    """``values`` as an array to index: int64 or float64 when they are all ints or all floats
    (``tolist`` gives them back exactly), else Python objects."""
    kinds = {type(v) for v in values}
    if kinds == {int}:
        try:
            return np.array(values, dtype=np.int64)
        except OverflowError:
            pass
    elif kinds == {float}:
        return np.array(values, dtype=np.float64)
    table = np.empty(len(values), dtype=object)
    table[:] = values
    return table


__all__ = [
    "UNIT_FACTORS",
    "TimeParser",
    "datetime_seconds",
    "fixed_digit_seconds",
    "format_has_date",
    "format_hint",
    "time_of_day_seconds",
]
