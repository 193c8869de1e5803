# A text type column as the kernel's type codes (included by _kernel.pyx).
#
# KernelRun codes a dictionary column's indices through a lookup of its dictionary; a plain
# text column would first have to be dictionary-encoded by Arrow, then its dictionary turned
# into Python strings and a lookup array, then the indices mapped: about ten calls per batch,
# which on a small batch costs more than firing it (W2's 1,652 rows: ~0.1 ms of a ~1.2 ms
# pass, most of it cold caches). Here each row's bytes are looked up straight in a small
# open-addressing table of the net's type names, in one call.


cdef inline uint64_t _load8(const char* p, const char* end) noexcept nogil:
    """The 8 bytes at ``p`` as a word (one load), fewer where the buffer ends before (zeros)."""
    cdef uint64_t w = 0
    if end - p >= 8:
        memcpy(&w, p, 8)
    else:
        memcpy(&w, p, end - p)
    return w


cdef uint64_t SHORT_MASK[9]  # keeps the first ln bytes of a word read from memory, ln = 0..8


cdef void _short_masks() noexcept:
    """SHORT_MASK, set byte by byte: the same bytes whatever the machine's byte order."""
    cdef int ln
    for ln in range(9):
        SHORT_MASK[ln] = 0
        memset(&SHORT_MASK[ln], 0xFF, ln)


_short_masks()


cdef inline uint64_t _mix(uint64_t first, uint64_t last, Py_ssize_t ln) noexcept nogil:
    """A name's hash from its first and last 8 bytes and its length (Fibonacci hashing: the
    table takes the product's high bits): type names are short, so two words hold them whole
    and no byte loop runs."""
    return ((first ^ last * <uint64_t>0xC2B2AE3D27D4EB4FULL) + <uint64_t>ln) * <uint64_t>0x9E3779B97F4A7C15ULL


@cython.final
cdef class TypeNames:
    """The type names a lowered net reads (code = index), hashed once per net: ``codes``
    writes a text column's type codes (-1: a type no pattern reads, or an empty row).

    A value is looked up by its first and last 8 bytes (a name of up to 16 bytes is compared
    as two words, a longer one by memcmp after them), so a row costs two loads, a hash and a
    compare: as cheap as a dictionary column's index lookup (W1 over a plain CSV table)."""
    cdef bytes blob  # the names' UTF-8 bytes, one after another
    cdef const char* bp  # blob's bytes (blob keeps them alive)
    cdef int64_t* starts  # per name: its offset in blob (name i ends at starts[i + 1])
    cdef uint64_t* first  # per name: its first 8 bytes (zeros past its end)
    cdef uint64_t* last  # per name: its last 8 bytes where it is longer than 8, else 0
    cdef int32_t* table  # open addressing: name index + 1, 0 empty; at least 8 slots a name
    cdef uint64_t mask  # (so that a row of a type no pattern reads meets an empty slot at once)
    cdef int shift  # 64 - log2 of the table's size

    def __cinit__(self, names):
        cdef Py_ssize_t i, n = len(names), size = 16
        encoded = [s.encode("utf-8") for s in names]
        self.blob = b"".join(encoded)
        self.bp = self.blob
        self.shift = 60
        while size < 8 * n:
            size *= 2
            self.shift -= 1
        self.mask = size - 1
        self.starts = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        self.first = <uint64_t*>malloc((n + 1) * sizeof(uint64_t))
        self.last = <uint64_t*>malloc((n + 1) * sizeof(uint64_t))
        self.table = <int32_t*>calloc(size, sizeof(int32_t))
        if self.starts == NULL or self.first == NULL or self.last == NULL or self.table == NULL:
            raise MemoryError()
        self.starts[0] = 0
        for i in range(n):
            self.starts[i + 1] = self.starts[i] + len(encoded[i])
        for i in range(n):
            self._place(i)

    cdef void _place(self, Py_ssize_t i) noexcept:
        """Name ``i``'s words, read from the blob as ``_code`` reads a row (the same bytes at
        the same places in a word, whatever the machine's byte order), and its slot."""
        cdef const char* p = self.bp
        cdef Py_ssize_t ln = self.starts[i + 1] - self.starts[i]
        cdef uint64_t at
        p += self.starts[i]
        self.first[i] = _load8(p, p + ln) if ln > 0 else 0
        self.last[i] = 0
        if ln > 8:
            memcpy(&self.last[i], p + ln - 8, 8)
        at = _mix(self.first[i], self.last[i], ln) >> self.shift
        while self.table[at]:
            at = (at + 1) & self.mask
        self.table[at] = <int32_t>(i + 1)

    def __dealloc__(self):
        free(self.starts)
        free(self.first)
        free(self.last)
        free(self.table)

    cdef inline int32_t _code(self, const char* p, Py_ssize_t ln, const char* end) noexcept nogil:
        """The code of the ``ln`` bytes at ``p`` (the data buffer ends at ``end``), -1: none."""
        cdef uint64_t w = 0, tail = 0
        cdef uint64_t at
        cdef int32_t slot
        cdef int64_t s
        if ln > 0:
            w = _load8(p, end)
            if ln < 8:
                w &= SHORT_MASK[ln]
            elif ln > 8:
                memcpy(&tail, p + ln - 8, 8)
        at = _mix(w, tail, ln) >> self.shift
        while True:
            slot = self.table[at]
            if slot == 0:
                return -1
            s = self.starts[slot - 1]
            if self.first[slot - 1] == w and self.last[slot - 1] == tail and self.starts[slot] - s == ln:
                if ln <= 16 or memcmp(self.bp + s, p, ln) == 0:
                    return slot - 1
            at = (at + 1) & self.mask

    def codes(self, buffers, Py_ssize_t offset, Py_ssize_t n, bint large, int32_t[:] out):
        """``out[i]``: the code of row ``i`` of a string (``large``: large_string) array given
        as its Arrow ``buffers`` (validity or None, offsets, data) and ``offset``."""
        cdef const char[:] offs_view = buffers[1]
        cdef const char* data = NULL
        cdef const char* end = NULL
        cdef const char[:] data_view
        cdef const uint8_t* valid = NULL
        cdef const char[:] valid_view
        cdef const int32_t* o32 = <const int32_t*>&offs_view[0]
        cdef const int64_t* o64 = <const int64_t*>&offs_view[0]
        cdef Py_ssize_t i, r
        cdef int64_t a, b
        if buffers[2] is not None and len(buffers[2]):
            data_view = buffers[2]
            data = &data_view[0]
            end = data + data_view.shape[0]
        if buffers[0] is not None:
            valid_view = buffers[0]
            valid = <const uint8_t*>&valid_view[0]
        if out.shape[0] < n:
            raise ValueError("output shorter than the column")
        if valid == NULL and not large and data != NULL and n > 0:
            with nogil:
                self._short_codes(data, end, o32 + offset, n, &out[0])
            return
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
                out[i] = self._code(data + a, b - a, end) if b > a else self._code(NULL, 0, NULL)

    cdef void _short_codes(self, const char* data, const char* end, const int32_t* offs, Py_ssize_t n,
                           int32_t* out) noexcept nogil:
        """``codes`` for the usual column (no nulls, int32 offsets): a value of up to 8 bytes
        with 8 bytes of buffer after its start is one load, a mask, a multiply and (mostly)
        one probe; any other value takes ``_code``."""
        cdef Py_ssize_t i, ln
        cdef int32_t slot
        cdef uint64_t w, at
        cdef const char* p
        for i in range(n):
            p = data + offs[i]
            ln = offs[i + 1] - offs[i]
            if ln > 8 or end - p < 8:
                out[i] = self._code(p, ln, end) if ln > 0 else self._code(NULL, 0, NULL)
                continue
            memcpy(&w, p, 8)
            w &= SHORT_MASK[ln]
            at = _mix(w, 0, ln) >> self.shift
            while True:
                slot = self.table[at]
                if slot == 0 or (self.first[slot - 1] == w and self.starts[slot] - self.starts[slot - 1] == ln):
                    out[i] = slot - 1
                    break
                at = (at + 1) & self.mask
