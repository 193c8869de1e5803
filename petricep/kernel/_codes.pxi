# Input columns as the kernel's codes (included by _kernel.pyx).
#
# KernelRun codes a partition column's values through a Python dict per key class (value ->
# code, codes in first-seen order). Arrow's hashing (dictionary_encode) of a numeric column
# costs ~10 ms per million rows; integer keys usually span a small range (prices, sensor
# ids), where a direct table over [min, max] codes a value in a few nanoseconds and the dict
# is consulted once per distinct value; the kernel reads the column and the table.


cdef int64_t new_code(dict seen, int64_t value) except -1:
    """``value``'s code in ``seen``, the next one where it has none."""
    code = seen.get(value)
    if code is None:
        code = len(seen)
        seen[value] = code
    return code


def lookup_codes(const int32_t[:] indices, const int32_t[:] lookup, int32_t[:] out):
    """``out[i] = lookup[indices[i]]`` (a dictionary column's indices as the kernel's type
    codes; numpy's fancy indexing takes ~3 ns a row, this ~1). Indices must be in range."""
    cdef Py_ssize_t i, n = indices.shape[0], m = lookup.shape[0]
    for i in range(n):
        if <size_t>indices[i] >= <size_t>m:
            raise IndexError(f"dictionary index {indices[i]} out of range")
        out[i] = lookup[indices[i]]


def int_key_table(const int64_t[::1] values, dict seen, int64_t lo, int64_t hi):
    """An integer key column's codes as a table, value v's code at ``table[v - lo]`` (``lo``
    and ``hi``: the column's lowest and highest value, from Arrow's SIMD min_max), for the
    kernel to read row by row where it needs a key: no column of a million codes written and
    read back. ``seen``: value -> code, new values get the next code in order of first
    appearance, as dictionary_encode's dictionary gives them. The pass stops once every value
    of the span has its code."""
    cdef Py_ssize_t i, n = values.shape[0], left
    cdef uint64_t span = <uint64_t>hi - <uint64_t>lo + 1, x  # (no overflow in unsigned arithmetic)
    cdef const int64_t* vp = &values[0] if n else NULL
    cdef int64_t[::1] tv
    cdef int64_t* tp
    table = np.full(span, -1, dtype=np.int64)
    tv = table
    tp = &tv[0]
    left = <Py_ssize_t>span
    for i in range(n):
        x = <uint64_t>vp[i] - <uint64_t>lo
        if x >= span:
            raise ValueError(f"key {vp[i]} outside [{lo}, {hi}]")
        if tp[x] < 0:
            tp[x] = new_code(seen, vp[i])
            left -= 1
            if left == 0:
                break
    return table
