"""How event columns become the kernel's arrays: values with their kinds, keys as codes.

:class:`~petricep.kernel.engine.KernelEngine` fills the kernel's typed columns from the
columns a reader gave (numpy arrays, Arrow arrays, lists of Python values). These helpers
do it at C speed where the column allows (numbers at once, codes per distinct value) and
keep Python's equality where the engine's dicts would (``1`` and ``1.0`` one key, NaN each
its own), so the kernel sees the same keys and values the Python engine does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.kernel.run import TICK_CODE
from petricep.kernel.tableplan import EXACT, TAG_BIG, TAG_BOOL, TAG_INT, TAG_NULL, TAG_NUM, TAG_STR
from petricep.runtime.arrow import bool_array, number_array, number_view

NUMPY_KINDS = {"i": TAG_INT, "u": TAG_INT, "f": TAG_NUM, "b": TAG_BOOL}
VALUE_KINDS: dict[type, int] = {int: TAG_INT, float: TAG_NUM, str: TAG_STR, bool: TAG_BOOL, type(None): TAG_NULL}
NUMBER_KINDS: dict[type, int] = {int: TAG_INT, float: TAG_NUM, bool: TAG_BOOL}


def numbers_at_once(col: Any, vals: np.ndarray, tags: np.ndarray) -> bool:
    """A list of Python ints, floats and bools: values and kinds filled at C speed (False,
    nothing filled: it holds something else, or an int beyond 2**53, which a float64 would
    round)."""
    try:
        kinds = np.fromiter(map(NUMBER_KINDS.__getitem__, map(type, col)), dtype=np.int8, count=len(col))
        values = np.array(col, dtype=np.float64)
    except (KeyError, OverflowError):
        return False
    if len(values) and np.abs(values).max() >= EXACT and (np.abs(values[kinds == TAG_INT]) >= EXACT).any():
        return False
    vals[:] = values
    tags[:] = kinds
    return True


def hold_value(v: Any, kind: int, code: Callable[[int], int]) -> tuple[float, int]:
    """One number as the kernel holds it: an int beyond 2**53 by its code (TAG_BIG)."""
    if kind == TAG_INT and not -EXACT <= v <= EXACT:
        return float(code(int(v))), TAG_BIG
    return v, kind


def kernel_times(ts: Any, n: int, event: Callable[[int], Event]) -> np.ndarray:
    """A batch's times as the kernel's float64 column. An int time beyond 2**53 (nanoseconds
    since 1970 are 1.7e18) would round to its neighbour there, merging distinct times into
    ties and moving window edges, so it is refused with the row's error rather than matched
    inexactly (the Python engine holds it exactly)."""
    if isinstance(ts, np.ndarray):
        out = ts.astype(np.float64, copy=False)
        # (a batch's times go forward -- the runners check it before the kernel -- so its ends bound it)
        if not n or ts.dtype.kind not in "iu" or (-EXACT <= int(ts[0]) <= EXACT and int(ts[-1]) <= EXACT):
            return out
    else:
        out = np.fromiter(ts, dtype=np.float64, count=n)
    if n and np.abs(out).max() >= EXACT:
        for r in np.flatnonzero(np.abs(out) >= EXACT).tolist():
            v = ts[r]
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and not -EXACT <= int(v) <= EXACT:
                err = EvaluationError(
                    f"time {int(v)} is beyond 2**53, which the compiled kernel cannot hold exactly "
                    "(give times in coarser units, or run with --engine python)"
                )
                err.event = event(r)  # type: ignore[attr-defined]
                raise err
    return out


def last_event(types: np.ndarray, n: int) -> int:
    """The last row of a batch that is an event, not a clock tick (-1: none)."""
    if types[n - 1] != TICK_CODE:
        return n - 1
    events = np.flatnonzero(types != TICK_CODE)
    return int(events[-1]) if len(events) else -1


def value_kind(v: Any) -> int | None:
    """The kernel's kind of a value of another type (numpy scalars, subclasses); None for a
    value it holds no kind of (a list, an object)."""
    if isinstance(v, (bool, np.bool_)):
        return TAG_BOOL
    if isinstance(v, (int, np.integer)):
        return TAG_INT
    if isinstance(v, (float, np.floating)):
        return TAG_NUM
    if isinstance(v, str):
        return TAG_STR
    return None


def hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def not_single(name: str, v: Any, e: Event) -> EvaluationError:
    """A value a condition or key of its event's type reads that is no single value (a list,
    an object): the event's error, as the readers word it where they check the field."""
    what = "a list" if isinstance(v, (list, tuple)) else "an object" if isinstance(v, dict) else f"a {type(v).__name__}"
    err = EvaluationError(f"field {name!r}: expected a single value, got {what}")
    err.event = e  # type: ignore[attr-defined]
    return err


def codes(values: list[Any], code_of: Callable[[Any], int], n: int) -> np.ndarray:
    """``code_of(v)`` for every row's value, called once per distinct value (by Python
    equality, as dict keys: 1 and 1.0 are one value); the rows are mapped at C speed."""
    distinct = dict.fromkeys(values)
    for v in distinct:
        distinct[v] = code_of(v)
    return np.fromiter(map(distinct.__getitem__, values), dtype=np.int64, count=n)


def hashable_numbers(col: np.ndarray) -> bool:
    """Whether a key column holds numbers whose equal values are equal keys (not NaN: as dict
    keys, NaNs are each their own)."""
    return col.dtype.kind in "iub" or (col.dtype.kind == "f" and not np.isnan(col).any())


def number_codes(col: np.ndarray, code_of: Callable[[Any], int]) -> np.ndarray:
    """:func:`codes` of a numeric column, hashed by Arrow: ``code_of`` is called once per
    distinct value (as a Python value: values Arrow tells apart but Python equates, such as
    ``0.0`` and ``-0.0``, get one code)."""
    arr = bool_array(col) if col.dtype.kind == "b" else number_array(col, pa.from_numpy_dtype(col.dtype))
    enc = pc.dictionary_encode(arr)
    lookup = np.array([code_of(v) for v in enc.dictionary.to_pylist()] or [0], dtype=np.int64)
    return lookup[number_view(enc.indices)]  # type: ignore[no-any-return]


def new_code(seen: dict[Any, int], v: Any) -> int:
    """The code of key ``v`` in ``seen`` (the next one for a new key)."""
    return seen.setdefault(v, len(seen))


def int_column(col: Any) -> np.ndarray:
    """Positions as an int64 array (a range without a Python int per row)."""
    if isinstance(col, range):
        return np.arange(col.start, col.stop, col.step, dtype=np.int64)
    return np.asarray(col, dtype=np.int64)


def values_of(col: Any) -> list[Any]:
    """A column's values as Python values (a numpy column's ``tolist``)."""
    return col.tolist() if isinstance(col, np.ndarray) else list(col)


def type_named(name: str) -> type:
    """A timestamp type by its qualified name, from a module already imported (a snapshot
    names types; it never makes petricep import a module)."""
    module, _, qualname = name.rpartition(".")
    found = getattr(sys.modules.get(module), qualname, None)
    if not isinstance(found, type):
        raise ValueError(f"timestamp type {name!r} is not loaded")
    return found


__all__ = ["NUMPY_KINDS", "VALUE_KINDS", "NUMBER_KINDS", "numbers_at_once", "last_event", "value_kind", "hashable", "not_single", "codes", "hashable_numbers", "number_codes", "new_code", "int_column", "values_of", "type_named"]
