# Input columns as the kernel's codes (included by _kernel.pyx).
#
# KernelRun codes a partition column's values through a Python dict per key class (value ->
# code, codes in first-seen order). Arrow's hashing (dictionary_encode) of a numeric column
# costs ~10 ms per million rows; integer keys usually span a small range (prices, sensor
# ids), where a direct table over [min, max] codes a row in a few nanoseconds and the dict is
# consulted once per distinct value.


def int_key_codes(const int64_t[::1] values, dict seen, int64_t[::1] out, Py_ssize_t max_span):
    """Write each value's code into ``out`` (``seen``: value -> code, new values get the next
    code in order of first appearance, as dictionary_encode's dictionary gives them). Returns
    False, writing nothing, when the values span more than ``max_span`` (the caller hashes)."""
    cdef Py_ssize_t i, n = values.shape[0]
    cdef int64_t lo, hi, c
    cdef uint64_t span, x
    cdef int64_t* table
    cdef const int64_t* vp = &values[0] if n else NULL
    cdef int64_t* op = &out[0] if n else NULL
    if n == 0:
        return True
    lo, hi = min_max(vp, n)
    span = <uint64_t>hi - <uint64_t>lo + 1  # (no overflow in unsigned arithmetic)
    if span == 0 or span > <uint64_t>max_span:
        return False
    table = <int64_t*>malloc(span * sizeof(int64_t))
    if table == NULL:
        raise MemoryError()
    try:
        for x in range(span):
            table[x] = -1
        for i in range(n):
            x = <uint64_t>vp[i] - <uint64_t>lo
            c = table[x]
            if c < 0:
                c = new_code(seen, vp[i])
                table[x] = c
            op[i] = c
    finally:
        free(table)
    return True


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


def int_key_table(const int64_t[::1] values, dict seen, Py_ssize_t max_span):
    """An integer key column's codes as a table: ``(lo, table)`` with value v's code at
    ``table[v - lo]`` (``seen`` as int_key_codes fills it: new values get the next code in
    order of first appearance), for the kernel to read row by row where it needs a key
    (no column of a million codes written and read back); None where the values span more
    than ``max_span``. The pass stops once every value of the span has its code."""
    cdef Py_ssize_t i, n = values.shape[0], left
    cdef int64_t lo, hi
    cdef uint64_t span, x
    cdef const int64_t* vp = &values[0] if n else NULL
    cdef int64_t[::1] tv
    cdef int64_t* tp
    if n == 0:
        return None
    lo, hi = min_max(vp, n)
    span = <uint64_t>hi - <uint64_t>lo + 1
    if span == 0 or span > <uint64_t>max_span:
        return None
    table = np.full(span, -1, dtype=np.int64)
    tv = table
    tp = &tv[0]
    left = <Py_ssize_t>span
    for i in range(n):
        x = <uint64_t>vp[i] - <uint64_t>lo
        if tp[x] < 0:
            tp[x] = new_code(seen, vp[i])
            left -= 1
            if left == 0:
                break
    return lo, table


cdef (int64_t, int64_t) min_max(const int64_t* vp, Py_ssize_t n) noexcept:
    """The lowest and highest of ``n`` values (n >= 1), in two chains of conditional moves."""
    cdef Py_ssize_t i
    cdef int64_t lo = vp[0], hi = vp[0], lo1 = vp[0], hi1 = vp[0], v, v1
    for i in range(0, n - 1, 2):
        v = vp[i]
        v1 = vp[i + 1]
        lo = v if v < lo else lo
        hi = v if v > hi else hi
        lo1 = v1 if v1 < lo1 else lo1
        hi1 = v1 if v1 > hi1 else hi1
    v = vp[n - 1]
    return min(lo, lo1, v), max(hi, hi1, v)
