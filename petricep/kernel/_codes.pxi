# Input columns as the kernel's codes (included by _kernel.pyx).
#
# KernelRun codes a partition column's values through a Python dict per key class (value ->
# code, codes in first-seen order). Arrow's hashing (dictionary_encode) of a numeric column
# costs ~10 ms per million rows; integer keys usually span a small range (prices, sensor
# ids), where a direct table codes a value in a few nanoseconds and the dict is consulted
# once per distinct value; the kernel reads the column and codes the rows it fires (IntKeys).


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


cdef struct IntTable:
    # value v's code at table[v - lo] for v - lo < span (unsigned), -1: not looked up yet
    int64_t* table
    int64_t lo
    uint64_t span


@cython.final
cdef class IntKeys:
    """The codes of a key class's integer values, filled in as the kernel reads rows: a table
    over a small range of values (the fast path, row_key) in front of the class's dict (value
    -> code, new values get the next code). Only the rows some pattern reads are coded: no
    pass over the column first (W1 reads 15% of its rows; Arrow's min_max over them all cost
    ~0.3 ms of a ~13 ms pass). The table spans at most max(4096, 8 codes a value) values;
    a value beyond it is looked up in the dict each time and counted in ``outside``, and
    KernelRun hashes such a column with Arrow instead from its next batch on."""
    cdef IntTable t
    cdef dict seen
    cdef public Py_ssize_t outside

    def __cinit__(self, dict seen):
        self.seen = seen
        self.t.table = NULL
        self.t.lo = 0
        self.t.span = 0
        self.outside = 0

    def __dealloc__(self):
        free(self.t.table)

    cdef int64_t miss(self, int64_t v) except -1:
        """``v``'s code from the dict (new: the next one), into the table where it can cover v."""
        cdef int64_t code = new_code(self.seen, v)
        if self.cover(v):
            self.t.table[<uint64_t>v - <uint64_t>self.t.lo] = code
        else:
            self.outside += 1
        return code

    cdef bint cover(self, int64_t v) except -1:
        """Widen the table to ``v`` (at least doubling it, toward v) where the span stays within
        the limit; whether it covers v. Python integers: no overflow at the int64 ends."""
        cdef int64_t* table
        cdef Py_ssize_t i
        if <uint64_t>v - <uint64_t>self.t.lo < self.t.span:
            return True
        old_lo, old_span = self.t.lo, self.t.span
        lo = min(old_lo, v) if old_span else v
        hi = max(old_lo + old_span - 1, v) if old_span else v
        limit = max(4096, 8 * len(self.seen))
        if hi - lo + 1 > limit:
            return False
        size = min(max(hi - lo + 1, 2 * old_span, 64), limit)
        new_lo = hi - size + 1 if (old_span and v < old_lo) else lo
        new_lo = min(max(new_lo, -2**63), 2**63 - size)
        table = <int64_t*>grow(NULL, size, sizeof(int64_t))
        for i in range(size):
            table[i] = -1
        for i in range(old_span):
            table[old_lo - new_lo + i] = self.t.table[i]
        free(self.t.table)
        self.t.table, self.t.lo, self.t.span = table, new_lo, size
        return True


cdef int64_t int_key_miss(void* owner, int64_t v) except -1:
    return (<IntKeys>owner).miss(v)
