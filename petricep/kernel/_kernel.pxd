# cython: language_level=3
"""The firing kernel's types, shared by its parts (``_kernel.pyx`` and the ``.pxi`` files it
includes): the guard bytecode's opcodes (lowering.py writes the same numbers), a value's kind,
the selection strategies and the parts of the memory a kernel holds. The row matcher
(``_rowmatch.pyx``) is a module of its own and shares only ``_alloc.pxd``."""

from libc.stdint cimport int64_t

cdef enum:
    OP_END = 0
    OP_CONST = 1
    OP_ATTR = 2
    OP_ARITH = 3
    OP_NEG = 4
    OP_CMP = 5
    OP_NOT = 6
    OP_JF = 7
    OP_JT = 8
    OP_CMP_AA = 9
    OP_CMP_AC = 10
    OP_BOOL = 11
    OP_KATTR = 12
    OP_AGG = 13
    OP_KATTR_IN = 14

cdef enum:
    # a value's kind: Python's float, str, a value that does not exist (division by zero: a
    # comparison with it is false), bool, int (exact while |v| <= 2**53), None (a RETURN value
    # of an unbound variable or a division by zero, carried by a composite event), an int
    # beyond 2**53 (its value the code of the Python int in Kernel.bigs: _bigint.pxi)
    TAG_NUM = 0
    TAG_STR = 1
    TAG_MISSING = 2
    TAG_BOOL = 3
    TAG_INT = 4
    TAG_NULL = 5
    TAG_BIG = 6

cdef enum:
    STAM = 0
    STNM = 1
    STRICT_CONTIGUITY = 2
    PARTITION_CONTIGUITY = 3


cdef enum:
    # what a kernel's bytes hold (Budget.parts; the Python side names them: run.MEMORY_PARTS)
    MEM_TOKENS = 0   # the token arenas: partial matches
    MEM_KLEENE = 1   # Kleene lists' elements
    MEM_EVENTS = 2   # the event store: events partial matches bind
    MEM_KEYS = 3     # per key: its lists' heads and tails
    MEM_WAITING = 4  # negative events buffered, matches waiting for an end negation's window
    MEM_MATCHES = 5  # matches buffered before they are taken (and their Kleene lists' ids)
    MEM_SCRATCH = 6  # one step's new partial matches
    MEM_NPARTS = 7


cdef struct Budget:
    # the bytes a kernel's arenas hold, counted where they grow (charge), and the limit
    int64_t parts[7]
    int64_t held
    int64_t limit  # -1: none
