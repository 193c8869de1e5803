# Input columns as the kernel's codes (included by _kernel.pyx).
#
# KernelRun codes a partition column's values through a Python dict per key class (value ->
# code, codes in first-seen order). Arrow's hashing (dictionary_encode) of a numeric column
# costs ~10 ms per million rows; integer keys usually span a small range (prices, sensor
# ids), where a direct table codes a value in a few nanoseconds and the dict is consulted
# once per distinct value; the kernel reads the column and codes the rows it fires (IntKeys).
# (The readers' one-pass text parsers are petricep.io._textparse, a module of their own.)


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


DEF TABLE_SPAN = 65536  # values a key table may span whatever its number of codes (512 KB): Aarhus' 449 sensor ids span 51,876


cdef struct IntTable:
    # value v's code at table[v - lo] for v - lo < span (unsigned), -1: not looked up yet
    int64_t* table
    int64_t lo
    uint64_t span


cdef struct IntHash:
    # open addressing, linear probing: value -> code (codes[i] -1: an empty slot); cap a power
    # of two, at most half full
    int64_t* keys
    int64_t* codes
    Py_ssize_t cap, n


cdef inline Py_ssize_t hash_slot(const IntHash* h, int64_t v) noexcept nogil:
    """The slot of ``v``, or of the empty one where it would go (splitmix64's finalizer)."""
    cdef uint64_t x = <uint64_t>v
    cdef Py_ssize_t i, mask = h.cap - 1
    x = (x ^ (x >> 30)) * <uint64_t>0xbf58476d1ce4e5b9ULL
    x = (x ^ (x >> 27)) * <uint64_t>0x94d049bb133111ebULL
    x ^= x >> 31
    i = <Py_ssize_t>(x & <uint64_t>mask)
    while h.codes[i] >= 0 and h.keys[i] != v:
        i = (i + 1) & mask
    return i


cdef int hash_put(IntHash* h, int64_t v, int64_t code) except -1:
    cdef Py_ssize_t i, old = h.cap
    cdef int64_t* keys = h.keys
    cdef int64_t* codes = h.codes
    if 2 * (h.n + 1) > h.cap:  # (rehash into twice the slots)
        h.cap = max(64, 2 * old)
        h.keys = <int64_t*>grow(NULL, h.cap, sizeof(int64_t))
        h.codes = <int64_t*>grow(NULL, h.cap, sizeof(int64_t))
        for i in range(h.cap):
            h.codes[i] = -1
        h.n = 0
        for i in range(old):
            if codes[i] >= 0:
                hash_put(h, keys[i], codes[i])
        free(keys)
        free(codes)
    i = hash_slot(h, v)
    if h.codes[i] < 0:
        h.n += 1
    h.keys[i] = v
    h.codes[i] = code
    return 0


@cython.final
cdef class IntKeys:
    """The codes of a key class's integer values, filled in as the kernel reads rows: a table
    over a small range of values (the fast path, row_key), a hash of the values beyond it,
    both in front of the class's dict (value -> code, new values get the next code; the dict
    is asked once per value). Only the rows some pattern reads are coded: no pass over the
    column first (W1 reads 15% of its rows; Arrow's min_max over them all cost ~0.3 ms of a
    ~13 ms pass). The table spans at most max(TABLE_SPAN = 65,536, 8 codes a value) values; ``outside``
    counts the values the hash holds (Aarhus' sensor ids span ~10^5 for 449 sensors)."""
    cdef IntTable t
    cdef IntHash h
    cdef dict seen

    def __cinit__(self, dict seen):
        self.seen = seen
        self.t.table = NULL
        self.t.lo = 0
        self.t.span = 0
        self.h.keys = NULL
        self.h.codes = NULL
        self.h.cap = 0
        self.h.n = 0

    def __dealloc__(self):
        free(self.t.table)
        free(self.h.keys)
        free(self.h.codes)

    @property
    def outside(self):
        return self.h.n

    cdef int64_t miss(self, int64_t v) except -1:
        """``v``'s code from the hash, else from the dict (new: the next one), into the table
        where it can cover v, else into the hash."""
        cdef Py_ssize_t i
        cdef int64_t code
        if self.h.cap:
            i = hash_slot(&self.h, v)
            if self.h.codes[i] >= 0:
                return self.h.codes[i]
        code = new_code(self.seen, v)
        if self.cover(v):
            self.t.table[<uint64_t>v - <uint64_t>self.t.lo] = code
        else:
            hash_put(&self.h, v, code)
        return code

    cdef bint cover(self, int64_t v) except -1:
        """Widen the table to ``v`` (at least doubling it, toward v) where the span stays within
        the limit; whether it covers v. Python integers: no overflow at the int64 ends."""
        cdef int64_t* table
        cdef Py_ssize_t i, n, shift, kept
        if <uint64_t>v - <uint64_t>self.t.lo < self.t.span:
            return True
        old_lo, old_span = self.t.lo, self.t.span
        lo = min(old_lo, v) if old_span else v
        hi = max(old_lo + old_span - 1, v) if old_span else v
        limit = max(TABLE_SPAN, 8 * len(self.seen))
        if hi - lo + 1 > limit:
            return False
        size = min(max(hi - lo + 1, 2 * old_span, 64), limit)
        new_lo = hi - size + 1 if (old_span and v < old_lo) else lo
        new_lo = min(max(new_lo, -2**63), 2**63 - size)
        n, kept = size, old_span  # (C integers for the loops: the old table lies inside the new one)
        shift = old_lo - new_lo if old_span else 0
        table = <int64_t*>grow(NULL, n, sizeof(int64_t))
        for i in range(n):
            table[i] = -1
        for i in range(kept):
            table[shift + i] = self.t.table[i]
        free(self.t.table)
        self.t.table, self.t.lo, self.t.span = table, new_lo, size
        return True


cdef int64_t int_key_miss(void* owner, int64_t v) except -1 nogil:
    with gil:  # (once per value: the dict of codes)
        return (<IntKeys>owner).miss(v)
