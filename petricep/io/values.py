"""Typing of text values: what a CSV cell becomes in an event's attributes.

One rule, applied per value (so the result never depends on how a file is cut
into batches):

* the empty string (an empty or ``""`` cell) becomes ``None``;
* text matching ``[+-]?[0-9]+`` becomes an ``int``;
* text matching a plain decimal or exponent number (``1.5``, ``.5``, ``5.``,
  ``1e3``, ``-2.5E-3``) becomes a ``float``;
* anything else stays a ``str`` (``nan``, ``inf``, ``0x10``, ``1_000`` and
  numbers with surrounding spaces included: a ticker named ``INF`` stays text).

:func:`type_text_array` (and :func:`type_text_column`) apply exactly this rule to a whole
Arrow string column, vectorised where the column is uniform.
"""

from __future__ import annotations

import numbers
import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

INT_PATTERN = r"[+-]?[0-9]+"
FLOAT_PATTERN = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"

_INT_RE = re.compile(INT_PATTERN)
_FLOAT_RE = re.compile(FLOAT_PATTERN)
_ARROW_INT = "^" + INT_PATTERN + "$"
_ARROW_FLOAT = "^" + FLOAT_PATTERN + "$"


def is_int_text(s: str) -> bool:
    return _INT_RE.fullmatch(s) is not None


def is_float_text(s: str) -> bool:
    """True for text that :func:`text_value` turns into a number (int or float)."""
    return _FLOAT_RE.fullmatch(s) is not None


def text_value(s: str) -> Any:
    """The typed value of one text cell (see the module docstring)."""
    if not s:
        return None
    if _INT_RE.fullmatch(s):
        return int(s)
    if _FLOAT_RE.fullmatch(s):
        return float(s)
    return s


def is_number(v: Any) -> bool:
    """Numbers as attribute values: int and float (and other numeric scalars), never bool."""
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    return isinstance(v, numbers.Real)


def shared_pylist(arr: pa.Array) -> list[Any]:
    """``arr.to_pylist()``, faster for repetitive columns, and sharing equal values."""
    if len(arr) == 0:
        return []
    enc = pc.dictionary_encode(arr)
    uniques = enc.dictionary.to_pylist()
    table = np.empty(len(uniques) + 1, dtype=object)
    table[: len(uniques)] = uniques
    table[len(uniques)] = None
    idx = enc.indices
    if idx.null_count:
        idx = pc.fill_null(idx, len(uniques))
    return table[idx.to_numpy(zero_copy_only=False)].tolist()  # type: ignore[no-any-return]


def _first_valid(arr: pa.Array) -> str | None:
    if arr.null_count == 0:
        return arr[0].as_py() if len(arr) else None
    valid = pc.drop_null(arr)
    return valid[0].as_py() if len(valid) else None


def _plain_ints(arr: pa.Array) -> pa.Array | None:
    """The column as int64 when every value is ``-?[0-9]+`` (a subset of the int rule), else
    None. Cheaper than the regex: Arrow's cast, then an ASCII-digit test (the cast alone also
    takes ``0x1f``)."""
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
    first = _first_valid(arr)
    if first is not None and _INT_RE.fullmatch(first):
        ints = _plain_ints(arr)
        if ints is not None:
            if nulls:
                return ints.to_pylist(), False
            return ints.to_numpy(), True
    if first is not None and _FLOAT_RE.fullmatch(first):
        int_mask = pc.match_substring_regex(arr, _ARROW_INT)
        all_int = pc.all(int_mask).as_py()
        if all_int:
            try:
                ints = pc.cast(arr, pa.int64())
            except (pa.ArrowInvalid, OverflowError):
                pass
            else:
                if nulls:
                    return ints.to_pylist(), False
                return ints.to_numpy(), True
        elif not pc.any(int_mask).as_py() and pc.all(pc.match_substring_regex(arr, _ARROW_FLOAT)).as_py():
            try:
                floats = pc.cast(arr, pa.float64())
            except pa.ArrowInvalid:
                pass
            else:
                if nulls:
                    return floats.to_pylist(), False
                return floats.to_numpy(), True
    # mixed column: type each distinct value once
    enc = pc.dictionary_encode(arr)
    uniques = [text_value(s) for s in enc.dictionary.to_pylist()]
    table = np.empty(len(uniques) + 1, dtype=object)
    table[: len(uniques)] = uniques
    table[len(uniques)] = None
    idx = enc.indices
    if idx.null_count:
        idx = pc.fill_null(idx, len(uniques))
    values = table[idx.to_numpy(zero_copy_only=False)].tolist()
    all_numbers = nulls == 0 and all(is_number(u) for u in uniques)
    return values, all_numbers
