# Input columns as the kernel's codes (included by _kernel.pyx).
#
# KernelRun codes a partition column's values through a Python dict per key class (value ->
# code, codes in first-seen order). Arrow's hashing (dictionary_encode) of a numeric column
# costs ~10 ms per million rows; integer keys usually span a small range (prices, sensor
# ids), where a direct table codes a value in a few nanoseconds and the dict is consulted
# once per distinct value; the kernel reads the column and codes the rows it fires (IntKeys).
#
# The readers' text columns are read here too, where a one-pass C loop over Arrow's buffers
# replaces Python per distinct value or two Arrow kernels: timestamps in fixed-width digit
# layouts (DigitFormat, for io.timestamps) and decimal integers (decimal_ints, io.values).


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


cdef inline int64_t digits_at(const uint8_t* p, int at, int width) noexcept nogil:
    """The number ``width`` ASCII digits at ``p + at`` spell, -1 where one is no digit."""
    cdef int64_t v = 0
    cdef int j
    cdef uint8_t c
    for j in range(width):
        c = p[at + j] - 48
        if c > 9:
            return -1
        v = v * 10 + c
    return v


cdef inline int64_t days_from_civil(int64_t y, int64_t m, int64_t d) noexcept nogil:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    cdef int64_t era, yoe, doy, doe
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m - 3 if m > 2 else m + 9) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


cdef inline bint text_span(const int32_t* o32, const int64_t* o64, bint wide, Py_ssize_t i, Py_ssize_t data_len,
                           Py_ssize_t* start, Py_ssize_t* end) noexcept nogil:
    """Where value ``i`` of an Arrow text column lies in its data buffer (int64 offsets where
    ``wide``); whether that is inside the buffer."""
    start[0] = o64[i] if wide else o32[i]
    end[0] = o64[i + 1] if wide else o32[i + 1]
    return start[0] >= 0 and end[0] <= data_len


cdef int64_t MONTH_DAYS[13]
MONTH_DAYS[:] = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


@cython.final
cdef class DigitFormat:
    """A format of fixed-width digit fields (io.timestamps' fixed_digit_seconds): where year (4
    digits), month, day, hour, minute and second (2 each) start in a value (-1: absent, 0),
    the bytes its plain characters must be, its width."""
    cdef int32_t fields[6]
    cdef int32_t* lit_at
    cdef uint8_t* lit_code
    cdef Py_ssize_t nlit
    cdef int width

    def __cinit__(self, fields, literals, int width):
        cdef Py_ssize_t j
        for j in range(6):
            self.fields[j] = fields[j]
        self.nlit = len(literals)
        self.lit_at = <int32_t*>grow(NULL, self.nlit, sizeof(int32_t))
        self.lit_code = <uint8_t*>grow(NULL, self.nlit, sizeof(uint8_t))
        for j in range(self.nlit):
            self.lit_at[j] = literals[j][0]
            self.lit_code[j] = literals[j][1]
        self.width = width

    def __dealloc__(self):
        free(self.lit_at)
        free(self.lit_code)

    def seconds(self, size_t data, Py_ssize_t data_len, size_t offsets, bint wide, Py_ssize_t n):
        """Epoch seconds (int64) of ``n`` values of an Arrow text column: its data buffer
        (address, length) and its offsets (address of the first value's; int64 where
        ``wide``, else int32) -- addresses, so that a column of a thousand values costs no
        views. None where some value has another width, another plain byte, a non-digit in a
        field or a field out of range (a year from 1, a day of its month, hours to 23,
        minutes and seconds to 59). The pass lets go of the interpreter lock (the reader's
        thread, while the kernel fires on another)."""
        cdef bint ok
        out = np.empty(max(n, 1), dtype=np.int64)
        cdef int64_t[::1] ov = out
        with nogil:
            ok = self.read(<const uint8_t*>data, data_len, <const int32_t*>offsets, <const int64_t*>offsets, wide, n, &ov[0])
        return out[:n] if ok else None

    cdef bint read(self, const uint8_t* base, Py_ssize_t data_len, const int32_t* o32, const int64_t* o64, bint wide,
                   Py_ssize_t n, int64_t* out) noexcept nogil:
        cdef Py_ssize_t i, j, start, end
        cdef int64_t f[6]
        cdef int widths[6]
        cdef int64_t dim
        cdef const uint8_t* p
        cdef int k
        cdef bint leap
        widths[0] = 4
        for k in range(1, 6):
            widths[k] = 2
        for i in range(n):
            if not text_span(o32, o64, wide, i, data_len, &start, &end) or end - start != self.width:
                return False
            p = base + start
            for j in range(self.nlit):
                if p[self.lit_at[j]] != self.lit_code[j]:
                    return False
            for k in range(6):
                f[k] = 0 if self.fields[k] < 0 else digits_at(p, self.fields[k], widths[k])
                if f[k] < 0:
                    return False
            if f[0] < 1 or f[1] < 1 or f[1] > 12 or f[2] < 1 or f[3] > 23 or f[4] > 59 or f[5] > 59:
                return False
            leap = f[0] % 4 == 0 and (f[0] % 100 != 0 or f[0] % 400 == 0)
            dim = MONTH_DAYS[f[1]] + (1 if f[1] == 2 and leap else 0)
            if f[2] > dim:
                return False
            out[i] = days_from_civil(f[0], f[1], f[2]) * 86400 + f[3] * 3600 + f[4] * 60 + f[5]
        return True


def decimal_ints(size_t data, Py_ssize_t data_len, size_t offsets, bint wide, Py_ssize_t n):
    """The int64 values of ``n`` text values that are all ``-?[0-9]+`` within int64 (an Arrow
    text column without nulls: its data buffer's address and length, the address of its
    first value's offset, int64 offsets where ``wide``), read in one pass (~3 ns a value;
    Arrow's cast and an ASCII test took ~18) without the interpreter lock; None where some
    value is another text (empty, a sign alone, a plus, a space, beyond int64): io.values'
    plain_ints then asks Arrow."""
    cdef bint ok
    out = np.empty(max(n, 1), dtype=np.int64)
    cdef int64_t[::1] ov = out
    with nogil:
        ok = read_decimal_ints(<const uint8_t*>data, data_len, <const int32_t*>offsets, <const int64_t*>offsets, wide, n, &ov[0])
    return out[:n] if ok else None


cdef bint read_decimal_ints(const uint8_t* base, Py_ssize_t data_len, const int32_t* o32, const int64_t* o64, bint wide,
                            Py_ssize_t n, int64_t* out) noexcept nogil:
    cdef Py_ssize_t i, j, start, end
    cdef uint64_t v, limit
    cdef uint8_t c
    cdef bint neg
    for i in range(n):
        if not text_span(o32, o64, wide, i, data_len, &start, &end) or end <= start:
            return False
        neg = base[start] == 45  # '-'
        j = start + 1 if neg else start
        if j == end:
            return False
        limit = <uint64_t>9223372036854775808ULL if neg else <uint64_t>9223372036854775807ULL
        v = 0
        while j < end:
            c = base[j] - 48
            if c > 9 or v > (limit - c) // 10:
                return False
            v = v * 10 + c
            j += 1
        out[i] = <int64_t>(0 - v) if neg else <int64_t>v
    return True
