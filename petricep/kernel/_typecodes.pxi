# A text type column as the kernel's type codes (included by _kernel.pyx).
#
# KernelRun codes a dictionary column's indices through a lookup of its dictionary; a plain
# text column would first have to be dictionary-encoded by Arrow, then its dictionary turned
# into Python strings and a lookup array, then the indices mapped: about ten calls per batch,
# which on a small batch costs more than firing it (W2's 1,652 rows: ~0.1 ms of a ~1.2 ms
# pass, most of it cold caches). Here each row's bytes are looked up straight in a small
# open-addressing table of the net's type names, in one call.


cdef inline uint64_t _fnv1a(const char* p, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = 1469598103934665603ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ <uint8_t>p[i]) * 1099511628211ULL
    return h


cdef class TypeNames:
    """The type names a lowered net reads (code = index), hashed once per net: ``codes``
    writes a text column's type codes (-1: a type no pattern reads, or an empty row)."""
    cdef bytes blob  # the names' UTF-8 bytes, one after another
    cdef int64_t* starts  # per name: its offset in blob (name i ends at starts[i + 1])
    cdef int32_t* table  # open addressing: name index + 1, 0 empty
    cdef uint64_t mask

    def __cinit__(self, names):
        cdef Py_ssize_t i, n = len(names), size = 8
        encoded = [s.encode("utf-8") for s in names]
        self.blob = b"".join(encoded)
        while size < 2 * n:
            size *= 2
        self.mask = size - 1
        self.starts = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        self.table = <int32_t*>calloc(size, sizeof(int32_t))
        if self.starts == NULL or self.table == NULL:
            raise MemoryError()
        self.starts[0] = 0
        for i in range(n):
            self.starts[i + 1] = self.starts[i] + len(encoded[i])
        cdef const char* blob = self.blob
        for i in range(n):
            self._place(i, blob)

    cdef void _place(self, Py_ssize_t i, const char* blob) noexcept:
        cdef Py_ssize_t ln = self.starts[i + 1] - self.starts[i]
        cdef uint64_t at = _fnv1a(blob + self.starts[i], ln) & self.mask
        while self.table[at]:
            at = (at + 1) & self.mask
        self.table[at] = <int32_t>(i + 1)

    def __dealloc__(self):
        free(self.starts)
        free(self.table)

    cdef inline int32_t _code(self, const char* blob, const char* p, Py_ssize_t ln) noexcept nogil:
        cdef uint64_t at = _fnv1a(p, ln) & self.mask
        cdef int32_t slot
        cdef int64_t s
        while True:
            slot = self.table[at]
            if slot == 0:
                return -1
            s = self.starts[slot - 1]
            if self.starts[slot] - s == ln and memcmp(blob + s, p, ln) == 0:
                return slot - 1
            at = (at + 1) & self.mask

    def codes(self, buffers, Py_ssize_t offset, Py_ssize_t n, bint large, int32_t[:] out):
        """``out[i]``: the code of row ``i`` of a string (``large``: large_string) array given
        as its Arrow ``buffers`` (validity or None, offsets, data) and ``offset``."""
        cdef const char[:] offs_view = buffers[1]
        cdef const char* data = NULL
        cdef const char[:] data_view
        cdef const uint8_t* valid = NULL
        cdef const char[:] valid_view
        cdef const int32_t* o32 = <const int32_t*>&offs_view[0]
        cdef const int64_t* o64 = <const int64_t*>&offs_view[0]
        cdef const char* blob = self.blob
        cdef Py_ssize_t i, r
        cdef int64_t a, b
        if buffers[2] is not None and len(buffers[2]):
            data_view = buffers[2]
            data = &data_view[0]
        if buffers[0] is not None:
            valid_view = buffers[0]
            valid = <const uint8_t*>&valid_view[0]
        if out.shape[0] < n:
            raise ValueError("output shorter than the column")
        with nogil:
            for i in range(n):
                r = offset + i
                if valid != NULL and not (valid[r >> 3] >> (r & 7)) & 1:
                    out[i] = -1
                    continue
                if large:
                    a = o64[r]
                    b = o64[r + 1]
                else:
                    a = o32[r]
                    b = o32[r + 1]
                out[i] = self._code(blob, data + a, b - a) if b > a else self._code(blob, blob, 0)
