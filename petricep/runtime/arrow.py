"""Arrow arrays as numpy arrays, and Arrow scalars, without pyarrow importing pandas.

pyarrow imports pandas, when it is installed, the first time a value crosses between Python
and Arrow: ``Array.to_numpy`` (even a zero-copy view), ``pa.array`` and ``pa.scalar`` (so
also a compute function given a Python value: ``pc.equal(arr, "")``). That costs an
embedded run about 0.2 s of start-up for a library it never uses. The functions here read
and build the buffers themselves; each gives exactly what the pyarrow call it replaces gives.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa


def _is_number_type(t: pa.DataType) -> bool:
    return bool(pa.types.is_integer(t) or pa.types.is_floating(t))


def number_view(arr: pa.Array) -> np.ndarray:
    """``arr.to_numpy()`` of an integer or floating-point array without nulls: a read-only
    view of its values."""
    t = arr.type
    if not _is_number_type(t) or arr.null_count:
        raise TypeError(f"not an array of numbers without nulls: {t}, {arr.null_count} nulls")
    dtype = np.dtype(t.to_pandas_dtype())
    n = len(arr)
    if n == 0:
        view = np.empty(0, dtype)
    else:
        view = np.frombuffer(arr.buffers()[1], dtype=dtype, count=n, offset=arr.offset * dtype.itemsize)
    view.flags.writeable = False  # Arrow's data is immutable
    return view


def bool_values(arr: pa.Array) -> np.ndarray:
    """``arr.to_numpy(zero_copy_only=False)`` of a boolean array without nulls."""
    if not pa.types.is_boolean(arr.type) or arr.null_count:
        raise TypeError(f"not a boolean array without nulls: {arr.type}, {arr.null_count} nulls")
    n = len(arr)
    if n == 0:
        return np.empty(0, bool)
    bits = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
    return np.unpackbits(bits, count=arr.offset + n, bitorder="little")[arr.offset :].astype(bool)


def scalar(value: Any, type_: pa.DataType) -> pa.Scalar:
    """``pa.scalar(value, type_)`` for a string, integer or floating-point ``type_``; ``None``
    gives the type's null."""
    if value is None:
        return pa.nulls(1, type_)[0]
    if pa.types.is_string(type_) or pa.types.is_large_string(type_):
        data = value.encode("utf-8")
        offsets = np.array([0, len(data)], dtype=np.int64 if pa.types.is_large_string(type_) else np.int32)
        buffers = [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    elif _is_number_type(type_):
        buffers = [None, pa.py_buffer(np.array([value], dtype=type_.to_pandas_dtype()))]
    else:
        raise TypeError(f"no scalar of type {type_} here")
    return pa.Array.from_buffers(type_, 1, buffers)[0]


def number_array(values: Any, type_: pa.DataType, valid: np.ndarray | None = None) -> pa.Array:
    """``pa.array(values, type_)`` of numbers already of ``type_`` (a numpy array or a list, no
    None) for an integer or floating-point ``type_``; ``valid``: False where the value is null
    (``mask=~valid``)."""
    if not _is_number_type(type_):
        raise TypeError(f"not a number type: {type_}")
    data = np.ascontiguousarray(values, dtype=type_.to_pandas_dtype())
    return pa.Array.from_buffers(type_, len(data), [_validity(valid), pa.py_buffer(data)])


def bool_array(values: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """``pa.array(values, pa.bool_())`` of a numpy boolean array (``valid`` as in
    :func:`number_array`)."""
    bits = np.packbits(np.asarray(values, dtype=bool), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(values), [_validity(valid), pa.py_buffer(bits)])


def string_array(values: list[str | None]) -> pa.Array:
    """``pa.array(values, pa.string())`` of text and None."""
    data = [b"" if v is None else v.encode("utf-8") for v in values]
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=len(data)), out=offsets[1:])
    valid = None if None not in values else np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    buffers = [_validity(valid), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(data))]
    if offsets[-1] >= 2**31:
        buffers[1] = pa.py_buffer(offsets)
        return pa.Array.from_buffers(pa.large_string(), len(data), buffers).cast(pa.string())
    return pa.Array.from_buffers(pa.string(), len(data), buffers)


def _validity(valid: np.ndarray | None) -> pa.Buffer | None:
    if valid is None or valid.all():
        return None
    return pa.py_buffer(np.packbits(np.asarray(valid, dtype=bool), bitorder="little"))
