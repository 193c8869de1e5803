# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Text columns read in one C pass over Arrow's buffers, for the readers (io.timestamps,
io.values): timestamps in fixed-width digit layouts (DigitFormat) and decimal integers
(decimal_ints). A module of its own so that reading a file does not load the firing kernel;
optional like the kernel (not built: the readers ask Arrow, or parse value by value)."""

from libc.stdlib cimport realloc, free
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
cimport cython

import numpy as np


cdef void* grow(void* p, Py_ssize_t n, Py_ssize_t size) except NULL nogil:
    cdef void* q = realloc(p, n * size if n > 0 else size)
    if q == NULL:
        with gil:
            raise MemoryError()
    return q


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
