"""Typing of text values: what a CSV cell becomes in an event's attributes.

One rule, applied per value (so the result never depends on how a file is cut
into batches):

* the empty string (an empty or ``""`` cell) becomes ``None``;
* text matching ``[+-]?[0-9]+`` becomes an ``int``;
* text matching a plain decimal or exponent number (``1.5``, ``.5``, ``5.``,
  ``1e3``, ``-2.5E-3``) becomes a ``float``;
* but only a number a float64 holds: text of more than :data:`MAX_NUMBER_CHARS`
  characters, an integer beyond +-1.797e308 and an exponent number that overflows
  (``1e400``) stay text -- so ``int()`` never meets Python's 4,300-digit limit and no
  arithmetic meets an integer too large for a float;
* anything else stays a ``str`` (``nan``, ``inf``, ``0x10``, ``1_000`` and
  numbers with surrounding spaces included: a ticker named ``INF`` stays text).

:func:`is_number` is the one test of "a number" for every reader: an int or float a
float64 holds (finite: never NaN or +-inf), never a bool.

:func:`type_text_array` (and :func:`type_text_column`) apply exactly this rule to a whole
Arrow string column, vectorised where the column is uniform.
"""

from __future__ import annotations

import math
import numbers
import re
import sys
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..runtime.arrow import number_array, number_view, scalar

try:
    from . import _textparse  # type: ignore[attr-defined]
except ImportError:  # not built: plain_ints asks Arrow alone
    _textparse = None

INT_PATTERN = r"[+-]?[0-9]+"
FLOAT_PATTERN = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"

INT_RE = re.compile(INT_PATTERN)
FLOAT_RE = re.compile(FLOAT_PATTERN)
ARROW_INT = "^" + INT_PATTERN + "$"
ARROW_FLOAT = "^" + FLOAT_PATTERN + "$"

# The longest text read as a number (an explicit limit, checked before any conversion:
# no float64 needs more digits, and Python's int() refuses more than 4,300).
MAX_NUMBER_CHARS = 400
FLOAT_MAX = sys.float_info.max


def text_value(s: str) -> Any:
    """The typed value of one text cell (see the module docstring)."""
    if not s:
        return None
    if len(s) > MAX_NUMBER_CHARS:
        return s
    if INT_RE.fullmatch(s):
        n = int(s)
        return n if -FLOAT_MAX <= n <= FLOAT_MAX else s
    if FLOAT_RE.fullmatch(s):
        f = float(s)
        return f if math.isfinite(f) else s
    return s


def is_number(v: Any) -> bool:
    """Numbers as attribute values: an int or float (or other real scalar) that a float64
    holds, so that arithmetic on it never raises; never a bool, NaN or an infinity."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return -FLOAT_MAX <= v <= FLOAT_MAX
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, numbers.Real):
        try:
            return math.isfinite(float(v))
        except (OverflowError, ValueError):
            return False
    return False


def text_pylist(arr: pa.Array) -> tuple[list[Any], bool]:
    """A text column's values with the empty string as ``None`` (one missing value in every
    reader), and whether any is missing."""
    if len(arr) == 0:
        return [], False
    enc = pc.dictionary_encode(arr)
    uniques = [None if u == "" else u for u in enc.dictionary.to_pylist()]
    return _expand(enc, uniques), arr.null_count > 0 or None in uniques


def _expand(enc: pa.DictionaryArray, uniques: list[Any]) -> list[Any]:
    """The values of a dictionary-encoded column, ``uniques`` standing for its dictionary."""
    table = np.empty(len(uniques) + 1, dtype=object)
    table[: len(uniques)] = uniques
    table[len(uniques)] = None
    idx = enc.indices
    if idx.null_count:
        idx = pc.fill_null(idx, scalar(len(uniques), idx.type))
    return table[number_view(idx)].tolist()  # type: ignore[no-any-return]


def shared_pylist(arr: pa.Array) -> list[Any]:
    """``arr.to_pylist()``, faster for repetitive columns, and sharing equal values."""
    if len(arr) == 0:
        return []
    enc = pc.dictionary_encode(arr)
    return _expand(enc, enc.dictionary.to_pylist())


def _first_valid(arr: pa.Array) -> str | None:
    if arr.null_count == 0:
        return arr[0].as_py() if len(arr) else None
    valid = pc.drop_null(arr)
    return valid[0].as_py() if len(valid) else None


def text_buffers(arr: pa.Array) -> tuple[int, int, int, bool, int] | None:
    """Where a text column without nulls lies, for the compiled one-pass readers (:mod:`petricep.io._textparse`)
    (``decimal_ints``, ``DigitFormat.seconds``): its data buffer's address and length, the
    address of its first value's offset, whether the offsets are int64 (``large_string``),
    its length. None for another column, an empty one or one with nulls."""
    t = arr.type
    wide = pa.types.is_large_string(t)
    if arr.null_count or not len(arr) or not (wide or pa.types.is_string(t)):
        return None
    _, offsets, data = arr.buffers()
    if data is None:
        return None
    return data.address, data.size, offsets.address + arr.offset * (8 if wide else 4), wide, len(arr)


def plain_ints(arr: pa.Array) -> pa.Array | None:
    """The column as int64 when every value is ``-?[0-9]+`` (a subset of the int rule), else
    None. Cheaper than the regex: Arrow's cast, then an ASCII-digit test (the cast alone also
    takes ``0x1f``). Where it says None the regex still decides (``+5``, ints beyond int64).
    A text column without nulls is read by ``_textparse.decimal_ints`` first, in one pass
    over Arrow's buffers."""
    where = text_buffers(arr) if _textparse is not None else None
    if where is not None:
        got = _textparse.decimal_ints(*where)
        if got is not None:
            return number_array(got, pa.int64())
    try:
        ints = pc.cast(arr, pa.int64())
    except (pa.ArrowInvalid, OverflowError):
        return None
    if pc.all(pc.ascii_is_decimal(arr)).as_py():  # no signs: the common case, one kernel fewer
        return ints
    if not pc.all(pc.ascii_is_decimal(pc.utf8_ltrim(arr, characters="-"))).as_py():
        return None
    return ints


def type_text_array(arr: pa.Array) -> tuple[list[Any], bool]:
    """Type a whole Arrow string column by :func:`text_value`.

    Returns the Python values and whether every one of them is a number (no nulls).
    """
    values, all_numbers = type_text_column(arr)
    if isinstance(values, np.ndarray):
        return values.tolist(), all_numbers
    return values, all_numbers


def type_text_column(arr: pa.Array) -> tuple[list[Any] | np.ndarray, bool]:
    """:func:`type_text_array`, but a column of numbers only (ints, or floats) comes back as a
    numpy int64 / float64 array: a row filter reads it as it is, and only the rows it keeps
    become Python values (``tolist`` gives exactly the ints and floats of the rule)."""
    n = len(arr)
    if n == 0:
        return [], True
    nulls = arr.null_count
    if nulls == n:
        return [None] * n, False
    if pc.max(pc.binary_length(arr)).as_py() > MAX_NUMBER_CHARS:  # over-long "numbers" stay text
        return _mixed(arr, nulls)
    first = _first_valid(arr)
    if first is not None and INT_RE.fullmatch(first):
        ints = plain_ints(arr)
        if ints is not None:
            if nulls:
                return ints.to_pylist(), False
            return number_view(ints), True
    if first is not None and FLOAT_RE.fullmatch(first):
        int_mask = pc.match_substring_regex(arr, ARROW_INT)
        all_int = pc.all(int_mask).as_py()
        if all_int:
            try:
                ints = pc.cast(arr, pa.int64())
            except (pa.ArrowInvalid, OverflowError):
                pass
            else:
                if nulls:
                    return ints.to_pylist(), False
                return number_view(ints), True
        elif not pc.any(int_mask).as_py() and pc.all(pc.match_substring_regex(arr, ARROW_FLOAT)).as_py():
            try:
                floats = pc.cast(arr, pa.float64())
            except pa.ArrowInvalid:
                pass
            else:
                if not pc.all(pc.is_finite(floats)).as_py():  # 1e400: text, by the rule
                    return _mixed(arr, nulls)
                if nulls:
                    return floats.to_pylist(), False
                return number_view(floats), True
    return _mixed(arr, nulls)


def _mixed(arr: pa.Array, nulls: int) -> tuple[list[Any], bool]:
    """A mixed column: each distinct value typed once, by :func:`text_value` itself."""
    enc = pc.dictionary_encode(arr)
    uniques = [text_value(s) for s in enc.dictionary.to_pylist()]
    values = _expand(enc, uniques)
    all_numbers = nulls == 0 and all(is_number(u) for u in uniques)
    return values, all_numbers
