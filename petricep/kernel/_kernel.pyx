# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled firing loop: one generic interpreter of a lowered net (petricep.kernel.lowering).

It mirrors the Python engine's interpreter (runtime/firing.py GroupRuntime.step / fire / store
and runtime/emission.py's emission order) for the constructs lowering.supports() admits, so that it
creates the same tokens in the same order and emits the same matches in the same order.

State, all in C arrays owned by this module:
* an event store: the events some stored partial match binds (ts, pos, id, attribute values
  and their kinds), compacted at sweeps;
* per shared net a token arena in struct-of-arrays form (place, window bounds, contiguity key,
  users bitmask, one event-store index per slot) with a free list; the tokens of one
  (key, place) form a linked list through ``tk_next`` in insertion order;
* matches out in growable buffers (pattern, start, end, one id per slot, RETURN values).

A match of a pattern with RETURN re-enters as a composite event (_emission.pxi: settle /
composite): it takes its emitting row's time and position, its fields' values in their
attribute columns and an id that refers to the match (-1 - its number in the run); the matches
of one point come out in runtime/emission.py emit's order, round by round (consumption drops
matches there: consume).

The firing loop runs without the interpreter lock (Kernel.lock_free, fixed per net: not
where its step would take the lock back at every turn -- LIMIT quotas, ON TIMEOUT deadlines,
consumption, tie rule strict's cancellations, which live in Python objects): the parts are
``nogil`` functions, the shared nets reached through ``Kernel.gptr``, and what needs Python
(an integer key's first code, an error, those constructs) takes the lock in ``with gil``.
The reader's threads run meanwhile (petricep.io.prefetch).

This file holds the declarations every part shares (opcodes, value kinds, strategies, errors);
the code is in the included parts, one concept each, as module-level ``cdef`` functions that
take the Kernel as ``k`` (Cython allows no ``include`` inside a class body, so only the Kernel's
Python-facing methods stay in its class):
``_store.pxi`` (the event store, the per-net token arenas, compaction), ``_kernel_api.pxi``
(the Kernel class: run, sweep, match output), ``_rowloop.pxi`` (run's loop over a batch's
rows), ``_interp.pxi`` (the guard bytecode interpreter), ``_firing.pxi`` (stepping and firing a shared net by one event), ``_ties.pxi``
(tie rule ``either``'s timestamp groups run to a fixpoint), ``_plainnet.pxi`` (the same step for a net without negation, Kleene lists, contiguity,
LIMIT, timeouts), ``_negation.pxi`` (negative events, pending matches), ``_emission.pxi`` (match
buffers, emission order, consumption, composite re-entry), ``_eventtime.pxi`` (ON TIMEOUT
deadlines, LIMIT quotas, pinned tokens) and ``_kleene.pxi`` (Kleene lists: the element arena,
aggregates, iteration conditions), ``_snapshot.pxi`` (the state as arrays and back, for
petricep.kernel.snapshot), ``_valuecodes.pxi`` (the text and big-int codes the state still holds, renumbered), ``_codes.pxi`` (input columns as codes: integer partition keys; the readers' text
parsers are petricep.io._textparse, so reading a file loads no firing kernel),
``_typecodes.pxi`` (a text type column's rows as type codes). Their shared types (opcodes,
value kinds, strategies, memory parts, the budget) are declared in ``_kernel.pxd``; growing an
array is ``_alloc.pxd``'s, shared with the SQL row matcher, a module of its own
(``_rowmatch.pyx``).
"""

from libc.stdlib cimport malloc, calloc, realloc, free, qsort
from libc.string cimport memcpy, memmove, memcmp, memset
from libc.math cimport isnan, fmod, fabs, NAN, INFINITY
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t, INT64_MAX
cimport cython

from petricep.kernel._alloc cimport grow

import numpy as np

from petricep.kernel.bytecode import ID_ATTR, TS_ATTR

DEF MAX_STACK = 40
DEF TICK = -2  # a row's type code: no event, stream time reached it (tick, _kernel_api.pxi)
DEF NEG_SLOT = 1000
DEF EXPIRE_TIME = 0  # how a group's tokens expire (Group.expired): a time window, or none
DEF EXPIRE_COUNT = 1  # a count window
DEF EXPIRE_GAPS = 2  # the window and per-step gaps (issue 42)
DEF KLEENE_TAKE = 2  # a transition appending to a started list (lowering.KLEENE_TAKE)
cdef int64_t NO_KEY = -(1 << 62)


class KernelLimitError(Exception):
    """LIMIT ... FAIL: (pattern index, shared net index, key code, the event's id as the
    kernel holds it); the Python side words it as the engine (StateLimitError)."""


class KernelBudgetError(Exception):
    """The run's budget of live partial matches (max_partial_matches) is exceeded within a
    batch: (net pattern index, shared net index, the fullest key's code, its partial matches,
    the net's live partial matches, the budget, the event's id as the kernel holds it); the
    Python side words it as the engine (housekeeping._over_budget)."""


class KernelMemoryError(Exception):
    """The run's memory budget in bytes (max_memory) would be exceeded by an arena growing:
    (bytes held per part, as MEM_* index them, the bytes the growth asked for, the budget); the
    row being fired is ``Kernel.cur_row``."""


class KernelEvaluationError(Exception):
    """A condition could not be evaluated: (what, op code, a, a's kind, b, b's kind); the
    Python side renders it with the run's string dictionary, as the engine words it. An
    ordering of a None read by a comparison of attributes adds (-1, a's input position and
    attribute, b's), -1 where an operand is not one attribute: the event that may lack the
    field (missing.py)."""


cdef int charge(Budget* b, int what, Py_ssize_t old_n, Py_ssize_t new_n, Py_ssize_t row) except -1 nogil:
    """An arena of ``row`` bytes per entry grows from ``old_n`` to ``new_n`` entries: counted
    before it grows, so that a budget stops the run before the memory is taken, not after.
    (No budget attached yet: a Group or EventStore being built, counted when it is adopted.)"""
    cdef int64_t more
    if b == NULL or new_n <= old_n:
        return 0
    more = <int64_t>(new_n - old_n) * row
    if b.limit >= 0 and b.held + more > b.limit:
        with gil:
            raise KernelMemoryError([b.parts[i] for i in range(MEM_NPARTS)], more, b.limit)
    b.parts[what] += more
    b.held += more
    return 0


TICK_CODE = TICK  # for the Python side


class OrderError(Exception):
    """An event's timestamp is before the previous one's: (row, ts, previous ts)."""


include "_store.pxi"
include "_codes.pxi"
include "_kernel_api.pxi"
include "_rowloop.pxi"
include "_bigint.pxi"
include "_interp.pxi"
include "_firing.pxi"
include "_ties.pxi"
include "_plainnet.pxi"
include "_negation.pxi"
include "_emission.pxi"
include "_eventtime.pxi"
include "_kleene.pxi"
include "_snapshot.pxi"
include "_valuecodes.pxi"
include "_typecodes.pxi"
