# cython: language_level=3
"""Growing C arrays, shared by the compiled modules (the firing kernel, the SQL row matcher):
one place raises MemoryError when realloc fails, so no caller checks for NULL itself."""

from libc.stdlib cimport realloc


cdef inline void* grow(void* p, Py_ssize_t n, Py_ssize_t size) except NULL nogil:
    cdef void* q = realloc(p, n * size if n > 0 else size)
    if q == NULL:
        with gil:  # (Cython 3.0 raises without the lock only from a function returning an int)
            raise MemoryError()
    return q
