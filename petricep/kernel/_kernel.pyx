# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled firing loop: one generic interpreter of a lowered net (petricep.kernel.lowering).

It mirrors the Python engine's interpreter (runtime/firing.py GroupRuntime.step / fire / store
and runtime/engine.py's emission order) for the constructs lowering.supports() admits, so that it
creates the same tokens in the same order and emits the same matches in the same order.

State, all in C arrays owned by this module:
* an event store: the events some stored partial match binds (ts, pos, id, attribute values
  and their kinds), compacted at sweeps;
* per shared net a token arena in struct-of-arrays form (place, window bounds, contiguity key,
  users bitmask, one event-store index per slot) with a free list; the tokens of one
  (key, place) form a linked list through ``tk_next`` in insertion order;
* matches out in growable buffers (pattern, start, end, one id per slot, RETURN values).

A match of a pattern with RETURN re-enters as a composite event (Kernel.settle / composite): it
takes its emitting row's time and position, its fields' values in their attribute columns and
an id that refers to the match (-1 - its number in the run); the matches of one point come out
in Engine._emit's order, round by round (consumption drops matches there, Kernel.consume).

Included parts: ``_eventtime.pxi`` (ON TIMEOUT deadlines, LIMIT quotas, pinned tokens) and
``_kleene.pxi`` (Kleene lists: the element arena, aggregates, iteration conditions).
"""

from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy
from libc.math cimport isnan, fmod, NAN, INFINITY
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t

import numpy as np

from petricep.kernel.lowering import ID_ATTR, TS_ATTR

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

cdef enum:
    # a value's kind: Python's float, str, a value that does not exist (division by zero: a
    # comparison with it is false), bool, int (exact while |v| <= 2**53), None (a RETURN value
    # of an unbound variable or a division by zero, carried by a composite event)
    TAG_NUM = 0
    TAG_STR = 1
    TAG_MISSING = 2
    TAG_BOOL = 3
    TAG_INT = 4
    TAG_NULL = 5

cdef enum:
    STAM = 0
    STNM = 1
    STRICT_CONTIGUITY = 2
    PARTITION_CONTIGUITY = 3

DEF MAX_STACK = 40
DEF TICK = -2  # a row's type code: no event, stream time reached it (Kernel.tick)
DEF NEG_SLOT = 1000
DEF KLEENE_TAKE = 2  # a transition appending to a started list (lowering.KLEENE_TAKE)
cdef int64_t NO_KEY = -(1 << 62)


class KernelLimitError(Exception):
    """LIMIT ... FAIL: (pattern index, shared net index, key code, the event's id as the
    kernel holds it); the Python side words it as the engine (StateLimitError)."""


class KernelEvaluationError(Exception):
    """A condition could not be evaluated: (what, op code, a, a's kind, b, b's kind); the
    Python side renders it with the run's string dictionary, as the engine words it."""


cdef void* grow(void* p, Py_ssize_t n, Py_ssize_t size) except NULL:
    cdef void* q = realloc(p, n * size if n > 0 else size)
    if q == NULL:
        raise MemoryError()
    return q


cdef class EventStore:
    """The events stored partial matches bind: columns, one row per event."""
    cdef double* ts
    cdef int64_t* pos
    cdef int64_t* id
    cdef int64_t* seq  # arrival number (composite events right after their emitter): survives compaction
    cdef int64_t next_seq
    cdef double* val   # nattrs per row
    cdef int8_t* tag   # nattrs per row
    cdef Py_ssize_t n, cap, nattrs
    cdef double* ranks  # string code -> rank in the sorted dictionary
    cdef Py_ssize_t nranks

    def __cinit__(self, Py_ssize_t nattrs):
        self.nattrs = nattrs
        self.n = 0
        self.cap = 0
        self.ts = NULL; self.pos = NULL; self.id = NULL; self.val = NULL; self.tag = NULL; self.seq = NULL
        self.next_seq = 0
        self.ranks = NULL
        self.nranks = 0
        self.reserve(1024)

    def __dealloc__(self):
        free(self.ts); free(self.pos); free(self.id); free(self.val); free(self.tag); free(self.ranks); free(self.seq)

    cdef int reserve(self, Py_ssize_t cap) except -1:
        if cap <= self.cap:
            return 0
        self.ts = <double*>grow(self.ts, cap, sizeof(double))
        self.pos = <int64_t*>grow(self.pos, cap, sizeof(int64_t))
        self.id = <int64_t*>grow(self.id, cap, sizeof(int64_t))
        self.seq = <int64_t*>grow(self.seq, cap, sizeof(int64_t))
        self.val = <double*>grow(self.val, cap * self.nattrs, sizeof(double))
        self.tag = <int8_t*>grow(self.tag, cap * self.nattrs, sizeof(int8_t))
        self.cap = cap
        return 0

    def set_ranks(self, double[:] ranks):
        cdef Py_ssize_t i, n = ranks.shape[0]
        self.ranks = <double*>grow(self.ranks, n, sizeof(double))
        for i in range(n):
            self.ranks[i] = ranks[i]
        self.nranks = n


cdef class Group:
    """One shared net: its lowered arrays and its per-key token lists."""
    # lowered net (read-only views)
    cdef const uint8_t[:] place_exits, place_accepting, neg_pushed
    cdef const int64_t[:] place_growable, role_pending, tr_blocked_by, tr_clears
    cdef const double[:] role_window
    cdef const int32_t[:] rg_emit_start, rg_emit, neg_type, neg_prev_start, neg_prev, neg_next_start, neg_next
    cdef const int32_t[:] neg_cond_start, neg_cond, neg_event_start, neg_event, neg_place_start, neg_place
    cdef const int32_t[:] type_neg_start, type_neg
    cdef public int nnegs
    # negative events buffered per (key, negation): linked lists through nb_next
    cdef int64_t* nb_ev
    cdef int32_t* nb_next
    cdef Py_ssize_t nb_cap
    cdef int32_t nb_free
    cdef int32_t* nb_heads
    cdef int32_t* nb_tails
    # matches waiting for their window to close (end negation): entries, a heap, per-key lists
    cdef int64_t* pd_slots
    cdef double* pd_first_ts
    cdef double* pd_last_ts
    cdef int64_t* pd_first_pos
    cdef int64_t* pd_last_pos
    cdef double* pd_thr
    cdef int64_t* pd_seq
    cdef int32_t* pd_role
    cdef int64_t* pd_key
    cdef uint8_t* pd_flags  # 1 alive, 2 in its key's list, 4 popped from the heap
    cdef int32_t* pd_next
    cdef Py_ssize_t pd_cap
    cdef int32_t pd_free
    cdef int32_t* pd_heads
    cdef int32_t* heap
    cdef Py_ssize_t heap_n
    cdef int64_t pd_counter
    cdef int64_t* tk_blocked
    cdef const int32_t[:] place_rg_start, rg_final_start, rg_final, rg_role_start, role_pattern
    cdef const int64_t[:] rg_mask, role_bit, tr_mask, pw_mask
    cdef const double[:] rg_window, tr_window, pw_window, consts
    cdef const int32_t[:] tr_src, tr_dst, tr_slot, tr_order_start, tr_order, tr_guard_start, tr_guard
    cdef const int32_t[:] tr_arc_start, tr_arc, tr_pw_start, type_start, ent_src, ent_tr_start, ent_trs
    cdef const int32_t[:] cond_start, code, ret_start, ret_prog
    cdef const int32_t* codep  # the bytecode, read through a pointer in the hot loop
    cdef const int8_t[:] const_tags
    cdef public int nslots, nplaces, start, strategy, count_window, partitioned
    cdef double window
    cdef int64_t all_users
    # tokens: struct of arrays, free list through tk_next
    cdef int32_t* tk_place
    cdef int32_t* tk_next
    cdef double* tk_first_ts
    cdef double* tk_last_ts
    cdef int64_t* tk_first_pos
    cdef int64_t* tk_last_pos
    cdef int64_t* tk_last_key
    cdef int64_t* tk_users
    cdef int64_t* tk_slots
    cdef Py_ssize_t tk_cap
    cdef int32_t free_head
    cdef public Py_ssize_t live_tokens
    # per key: list heads / tails per place, the contiguity floor
    cdef int32_t* heads
    cdef int32_t* tails
    cdef int64_t* floors
    cdef Py_ssize_t nkeys
    # scratch: tokens created by one step
    cdef int32_t* created
    cdef Py_ssize_t ncreated, created_cap
    cdef int64_t* slotbuf
    # event time (_eventtime.pxi): per token the references to it from deadlines and LIMIT
    # quotas (a pinned token leaves its list for the zombie list instead of the free list),
    # the patterns (bits) a firing extended it for, those whose quota counts it
    cdef int32_t* tk_pins
    cdef int64_t* tk_ext
    cdef int64_t* tk_counted
    cdef int32_t zombies
    cdef const int64_t[:] place_exit_bits, place_emit_bits, bit_limit
    cdef const double[:] bit_window
    cdef const int8_t[:] bit_policy
    cdef public int64_t timeout_mask, limit_mask, watch_mask
    cdef public int nbits
    cdef public tuple patterns  # net pattern index of each user bit
    cdef public int index  # the shared net's index (its partition-key dictionary)
    cdef public list deadlines  # heap of (deadline, n, key, token, bit index)
    cdef public int64_t dl_counter
    cdef public dict quotas  # (key, bit index) -> [heap of (first ts, first pos, seqs, n, token), live, n]
    cdef public list dropped  # per bit index: partial matches a LIMIT dropped
    # Kleene closure (_kleene.pxi): per transition start / take, deferred iteration conditions;
    # per slot whether it holds a list node, its aggregates; the element arena
    cdef const int8_t[:] tr_kleene, agg_func
    cdef const int32_t[:] tr_defer_start, tr_defer, slot_agg_start, agg_attr, cond_iter_slot
    cdef const uint8_t[:] slot_kleene
    cdef public int has_kleene
    cdef Py_ssize_t naggs
    cdef int64_t* nd_ev
    cdef int64_t* nd_first
    cdef int64_t* nd_count
    cdef int32_t* nd_prev
    cdef uint8_t* nd_mark
    cdef double* nd_acc_v
    cdef int8_t* nd_acc_t
    cdef int64_t* nd_acc_n
    cdef public Py_ssize_t nd_n, nd_cap, nd_live

    def __cinit__(self, lg):
        self.place_exits = lg.place_exits
        self.place_accepting = lg.place_accepting
        self.place_growable = lg.place_growable
        self.rg_emit_start = lg.rg_emit_start
        self.rg_emit = lg.rg_emit
        self.role_window = lg.role_window
        self.role_pending = lg.role_pending
        self.neg_type = lg.neg_type
        self.neg_pushed = lg.neg_pushed
        self.neg_prev_start = lg.neg_prev_start
        self.neg_prev = lg.neg_prev
        self.neg_next_start = lg.neg_next_start
        self.neg_next = lg.neg_next
        self.neg_cond_start = lg.neg_cond_start
        self.neg_cond = lg.neg_cond
        self.neg_event_start = lg.neg_event_start
        self.neg_event = lg.neg_event
        self.neg_place_start = lg.neg_place_start
        self.neg_place = lg.neg_place
        self.type_neg_start = lg.type_neg_start
        self.type_neg = lg.type_neg
        self.tr_blocked_by = lg.tr_blocked_by
        self.tr_clears = lg.tr_clears
        self.nnegs = lg.neg_type.shape[0]
        self.nb_ev = NULL; self.nb_next = NULL; self.nb_cap = 0; self.nb_free = -1
        self.nb_heads = NULL; self.nb_tails = NULL
        self.pd_slots = NULL; self.pd_first_ts = NULL; self.pd_last_ts = NULL; self.pd_first_pos = NULL
        self.pd_last_pos = NULL; self.pd_thr = NULL; self.pd_seq = NULL; self.pd_role = NULL; self.pd_key = NULL
        self.pd_flags = NULL; self.pd_next = NULL; self.pd_cap = 0; self.pd_free = -1
        self.pd_heads = NULL; self.heap = NULL; self.heap_n = 0; self.pd_counter = 0
        self.tk_blocked = NULL
        self.place_rg_start = lg.place_rg_start
        self.rg_mask = lg.rg_mask
        self.rg_window = lg.rg_window
        self.rg_final_start = lg.rg_final_start
        self.rg_final = lg.rg_final
        self.rg_role_start = lg.rg_role_start
        self.role_pattern = lg.role_pattern
        self.role_bit = lg.role_bit
        self.tr_src = lg.tr_src
        self.tr_dst = lg.tr_dst
        self.tr_slot = lg.tr_slot
        self.tr_window = lg.tr_window
        self.tr_mask = lg.tr_mask
        self.tr_order_start = lg.tr_order_start
        self.tr_order = lg.tr_order
        self.tr_guard_start = lg.tr_guard_start
        self.tr_guard = lg.tr_guard
        self.tr_arc_start = lg.tr_arc_start
        self.tr_arc = lg.tr_arc
        self.tr_pw_start = lg.tr_pw_start
        self.pw_mask = lg.pw_mask
        self.pw_window = lg.pw_window
        self.type_start = lg.type_start
        self.ent_src = lg.ent_src
        self.ent_tr_start = lg.ent_tr_start
        self.ent_trs = lg.ent_trs
        self.cond_start = lg.cond_start
        self.ret_start = lg.ret_start
        self.ret_prog = lg.ret_prog
        self.code = lg.code
        self.codep = &self.code[0] if self.code.shape[0] else NULL
        self.consts = lg.consts
        self.const_tags = lg.const_tags
        self.nslots = max(lg.nslots, 1)
        self.nplaces = lg.nplaces
        self.start = lg.start
        self.strategy = lg.strategy
        self.count_window = 1 if lg.count_window else 0
        self.partitioned = 1 if lg.partition else 0
        self.window = lg.window
        self.all_users = lg.all_users
        self.tk_cap = 0
        self.tk_place = NULL; self.tk_next = NULL; self.tk_first_ts = NULL; self.tk_last_ts = NULL
        self.tk_first_pos = NULL; self.tk_last_pos = NULL; self.tk_last_key = NULL; self.tk_users = NULL
        self.tk_slots = NULL
        self.free_head = -1
        self.live_tokens = 0
        self.heads = NULL; self.tails = NULL; self.floors = NULL
        self.nkeys = 0
        self.created = NULL
        self.ncreated = 0
        self.created_cap = 0
        self.slotbuf = <int64_t*>grow(NULL, self.nslots, sizeof(int64_t))
        self.tk_pins = NULL; self.tk_ext = NULL; self.tk_counted = NULL
        self.zombies = -1
        self.place_exit_bits = lg.place_exit_bits
        self.place_emit_bits = lg.place_emit_bits
        self.bit_limit = lg.bit_limit
        self.bit_window = lg.bit_window
        self.bit_policy = lg.bit_policy
        self.timeout_mask = lg.timeout_mask
        self.limit_mask = lg.limit_mask
        self.watch_mask = lg.timeout_mask | lg.limit_mask
        self.nbits = len(lg.patterns)
        self.patterns = tuple(lg.patterns)
        self.index = lg.index
        self.deadlines = []
        self.dl_counter = 0
        self.quotas = {}
        self.dropped = [0] * self.nbits
        self.tr_kleene = lg.tr_kleene
        self.tr_defer_start = lg.tr_defer_start
        self.tr_defer = lg.tr_defer
        self.slot_kleene = lg.slot_kleene
        self.slot_agg_start = lg.slot_agg_start
        self.agg_func = lg.agg_func
        self.agg_attr = lg.agg_attr
        self.cond_iter_slot = lg.cond_iter_slot
        self.has_kleene = 1 if any(lg.slot_kleene) else 0
        self.naggs = max([lg.slot_agg_start[i + 1] - lg.slot_agg_start[i] for i in range(lg.nslots)] + [1])
        self.nd_ev = NULL; self.nd_first = NULL; self.nd_count = NULL; self.nd_prev = NULL; self.nd_mark = NULL
        self.nd_acc_v = NULL; self.nd_acc_t = NULL; self.nd_acc_n = NULL
        self.nd_n = 0; self.nd_cap = 0; self.nd_live = 0
        self.reserve_tokens(1024)
        self.reserve_keys(1)

    def __dealloc__(self):
        free(self.tk_place); free(self.tk_next); free(self.tk_first_ts); free(self.tk_last_ts)
        free(self.tk_first_pos); free(self.tk_last_pos); free(self.tk_last_key); free(self.tk_users)
        free(self.tk_slots); free(self.heads); free(self.tails); free(self.floors); free(self.created)
        free(self.slotbuf); free(self.tk_blocked); free(self.tk_pins); free(self.tk_ext); free(self.tk_counted)
        free(self.nd_ev); free(self.nd_first); free(self.nd_count); free(self.nd_prev); free(self.nd_mark)
        free(self.nd_acc_v); free(self.nd_acc_t); free(self.nd_acc_n)
        free(self.nb_ev); free(self.nb_next); free(self.nb_heads); free(self.nb_tails)
        free(self.pd_slots); free(self.pd_first_ts); free(self.pd_last_ts); free(self.pd_first_pos)
        free(self.pd_last_pos); free(self.pd_thr); free(self.pd_seq); free(self.pd_role); free(self.pd_flags)
        free(self.pd_next); free(self.pd_heads); free(self.heap); free(self.pd_key)

    cdef int reserve_tokens(self, Py_ssize_t cap) except -1:
        cdef Py_ssize_t old = self.tk_cap, i
        if cap <= old:
            return 0
        self.tk_place = <int32_t*>grow(self.tk_place, cap, sizeof(int32_t))
        self.tk_next = <int32_t*>grow(self.tk_next, cap, sizeof(int32_t))
        self.tk_first_ts = <double*>grow(self.tk_first_ts, cap, sizeof(double))
        self.tk_last_ts = <double*>grow(self.tk_last_ts, cap, sizeof(double))
        self.tk_first_pos = <int64_t*>grow(self.tk_first_pos, cap, sizeof(int64_t))
        self.tk_last_pos = <int64_t*>grow(self.tk_last_pos, cap, sizeof(int64_t))
        self.tk_last_key = <int64_t*>grow(self.tk_last_key, cap, sizeof(int64_t))
        self.tk_users = <int64_t*>grow(self.tk_users, cap, sizeof(int64_t))
        self.tk_slots = <int64_t*>grow(self.tk_slots, cap * self.nslots, sizeof(int64_t))
        self.tk_blocked = <int64_t*>grow(self.tk_blocked, cap, sizeof(int64_t))
        self.tk_pins = <int32_t*>grow(self.tk_pins, cap, sizeof(int32_t))
        self.tk_ext = <int64_t*>grow(self.tk_ext, cap, sizeof(int64_t))
        self.tk_counted = <int64_t*>grow(self.tk_counted, cap, sizeof(int64_t))
        for i in range(old, cap):
            self.tk_pins[i] = 0
        # the new tokens join the free list (lowest index first)
        for i in range(cap - 1, old - 1, -1):
            self.tk_next[i] = self.free_head
            self.free_head = <int32_t>i
        self.tk_cap = cap
        return 0

    cdef int reserve_keys(self, Py_ssize_t nkeys) except -1:
        cdef Py_ssize_t old = self.nkeys, i, cap
        if nkeys <= old:
            return 0
        cap = max(nkeys, 2 * old)
        self.heads = <int32_t*>grow(self.heads, cap * self.nplaces, sizeof(int32_t))
        self.tails = <int32_t*>grow(self.tails, cap * self.nplaces, sizeof(int32_t))
        self.floors = <int64_t*>grow(self.floors, cap, sizeof(int64_t))
        self.pd_heads = <int32_t*>grow(self.pd_heads, cap, sizeof(int32_t))
        self.nb_heads = <int32_t*>grow(self.nb_heads, cap * max(self.nnegs, 1), sizeof(int32_t))
        self.nb_tails = <int32_t*>grow(self.nb_tails, cap * max(self.nnegs, 1), sizeof(int32_t))
        for i in range(old * self.nplaces, cap * self.nplaces):
            self.heads[i] = -1
            self.tails[i] = -1
        for i in range(old * self.nnegs, cap * self.nnegs):
            self.nb_heads[i] = -1
            self.nb_tails[i] = -1
        for i in range(old, cap):
            self.pd_heads[i] = -1
        for i in range(old, cap):
            self.floors[i] = NO_KEY
        self.nkeys = cap
        return 0

    cdef inline int32_t alloc(self) except -1:
        cdef int32_t t
        if self.free_head < 0:
            self.reserve_tokens(2 * self.tk_cap)
        t = self.free_head
        self.free_head = self.tk_next[t]
        self.live_tokens += 1
        return t

    cdef inline void release(self, int32_t t):
        self.tk_next[t] = self.free_head
        self.free_head = t
        self.live_tokens -= 1

    cdef int add_created(self, int32_t t) except -1:
        if self.ncreated >= self.created_cap:
            self.created_cap = max(64, 2 * self.created_cap)
            self.created = <int32_t*>grow(self.created, self.created_cap, sizeof(int32_t))
        self.created[self.ncreated] = t
        self.ncreated += 1
        return 0

    cdef int buffer_negative(self, int64_t key, int j, int64_t ev) except -1:
        """Append a negative event to the (key, negation) buffer."""
        cdef Py_ssize_t i, old = self.nb_cap
        cdef int32_t b
        cdef int lid = <int>(key * self.nnegs + j)
        if self.nb_free < 0:
            self.nb_cap = max(64, 2 * old)
            self.nb_ev = <int64_t*>grow(self.nb_ev, self.nb_cap, sizeof(int64_t))
            self.nb_next = <int32_t*>grow(self.nb_next, self.nb_cap, sizeof(int32_t))
            for i in range(self.nb_cap - 1, old - 1, -1):
                self.nb_next[i] = self.nb_free
                self.nb_free = <int32_t>i
        b = self.nb_free
        self.nb_free = self.nb_next[b]
        self.nb_ev[b] = ev
        self.nb_next[b] = -1
        if self.nb_tails[lid] < 0:
            self.nb_heads[lid] = b
        else:
            self.nb_next[self.nb_tails[lid]] = b
        self.nb_tails[lid] = b
        return 0

    cdef int32_t new_pending(self) except -1:
        cdef Py_ssize_t i, old = self.pd_cap
        cdef int32_t d
        if self.pd_free < 0:
            self.pd_cap = max(64, 2 * old)
            self.pd_slots = <int64_t*>grow(self.pd_slots, self.pd_cap * self.nslots, sizeof(int64_t))
            self.pd_first_ts = <double*>grow(self.pd_first_ts, self.pd_cap, sizeof(double))
            self.pd_last_ts = <double*>grow(self.pd_last_ts, self.pd_cap, sizeof(double))
            self.pd_first_pos = <int64_t*>grow(self.pd_first_pos, self.pd_cap, sizeof(int64_t))
            self.pd_last_pos = <int64_t*>grow(self.pd_last_pos, self.pd_cap, sizeof(int64_t))
            self.pd_thr = <double*>grow(self.pd_thr, self.pd_cap, sizeof(double))
            self.pd_seq = <int64_t*>grow(self.pd_seq, self.pd_cap, sizeof(int64_t))
            self.pd_role = <int32_t*>grow(self.pd_role, self.pd_cap, sizeof(int32_t))
            self.pd_key = <int64_t*>grow(self.pd_key, self.pd_cap, sizeof(int64_t))
            self.pd_flags = <uint8_t*>grow(self.pd_flags, self.pd_cap, sizeof(uint8_t))
            self.pd_next = <int32_t*>grow(self.pd_next, self.pd_cap, sizeof(int32_t))
            self.heap = <int32_t*>grow(self.heap, self.pd_cap, sizeof(int32_t))
            for i in range(self.pd_cap - 1, old - 1, -1):
                self.pd_next[i] = self.pd_free
                self.pd_free = <int32_t>i
        d = self.pd_free
        self.pd_free = self.pd_next[d]
        return d

    cdef inline void drop_pending(self, int32_t d):
        self.pd_next[d] = self.pd_free
        self.pd_free = d

    cdef inline bint pd_less(self, int32_t a, int32_t b):
        return self.pd_thr[a] < self.pd_thr[b] or (self.pd_thr[a] == self.pd_thr[b] and self.pd_seq[a] < self.pd_seq[b])

    cdef void heap_push(self, int32_t d):
        cdef Py_ssize_t i = self.heap_n, parent
        self.heap_n += 1
        while i > 0:
            parent = (i - 1) // 2
            if not self.pd_less(d, self.heap[parent]):
                break
            self.heap[i] = self.heap[parent]
            i = parent
        self.heap[i] = d

    cdef int32_t heap_pop(self):
        cdef int32_t top = self.heap[0], last
        cdef Py_ssize_t i = 0, c
        self.heap_n -= 1
        if self.heap_n > 0:
            last = self.heap[self.heap_n]
            while True:
                c = 2 * i + 1
                if c >= self.heap_n:
                    break
                if c + 1 < self.heap_n and self.pd_less(self.heap[c + 1], self.heap[c]):
                    c += 1
                if not self.pd_less(self.heap[c], last):
                    break
                self.heap[i] = self.heap[c]
                i = c
            self.heap[i] = last
        return top

    cdef inline bint expired(self, int32_t t, double ts, int64_t pos):
        """The token's window has passed the event (ts, pos): it can never fire again."""
        if isnan(self.window):
            return False
        if self.count_window:
            return pos - self.tk_first_pos[t] >= <int64_t>self.window
        return ts - self.tk_first_ts[t] > self.window


cdef class Kernel:
    """Runs a lowered net over batches of events (columns); see KernelRun for the Python side."""
    cdef public list groups
    cdef public EventStore store
    cdef public int tie_strict, tie_either, npatterns, maxslots, ntypes
    # tie rule either: the open timestamp group (events in the store, their type, ts, pos, keys)
    cdef int64_t* grp_ev
    cdef int32_t* grp_type
    cdef int64_t* grp_keys  # ngroups per event
    cdef Py_ssize_t grp_n, grp_cap, grp_rows
    cdef double grp_ts
    cdef int has_contiguity, has_negation, has_timeouts, has_watch, ordered
    cdef double now_ts  # the event being fired (input or composite): LIMIT's "now"
    cdef int64_t now_pos, now_ev
    cdef public list timeouts  # per pattern: partial matches emitted as timeouts
    cdef list kills  # tie rule strict: (group, key, negation, event) cancelled at the group's end
    cdef double strict_ts
    cdef double last_ts
    cdef int64_t last_key
    cdef public int64_t events, created, completed
    cdef public Py_ssize_t cur_row  # the row being fired (for an evaluation error's location)
    cdef public Py_ssize_t sweep_every, since_sweep, compact_slack
    # matches out
    cdef int32_t* out_pattern
    cdef int64_t* out_at  # per match: the position of the row (event or tick) that emitted it, -1 at the end
    cdef public int64_t emit_at
    cdef int32_t* out_group
    cdef double* out_start
    cdef double* out_end
    cdef int64_t* out_ids
    cdef uint8_t* out_bound
    cdef int64_t* out_key  # per match: the key it was found under (its composite event's)
    cdef int64_t* out_ev  # per match and slot: the bound event's store index (ordering; until the next sweep)
    cdef double* out_deadline  # per match: a timeout's deadline (NaN: a match)
    cdef int64_t* out_klen  # per match and slot: a Kleene list's length (its id: the offset in kl_ids), else -1
    cdef int64_t* kl_ids
    cdef Py_ssize_t kl_n, kl_cap
    cdef double* out_rv  # per match and RETURN field: the value ...
    cdef int8_t* out_rt  # ... and its kind
    cdef Py_ssize_t out_n, out_cap, row_out
    cdef public int maxfields
    # RETURN: per pattern whether it has one, the type code of its composite events (-1: none
    # reads them), the attribute column each field fills
    cdef const uint8_t[:] pat_has_ret
    cdef const int32_t[:] pat_ret_type, pat_attr_start, pat_attr
    cdef int has_returns
    # consumption: per pattern its domain (-1: none) and consumed slots; per domain the
    # consumed events (store seq -> ts) and how far back they matter (NaN: always)
    cdef const int32_t[:] pat_domain, pat_cons_start, pat_cons
    cdef int has_conflict
    cdef public list consumed
    cdef list horizons
    cdef public int64_t composites, taken
    # the row emitting now (an event, a tick, or at the end the last input event): its time,
    # the kind of its time (int or float) and position; a composite event takes these
    cdef double emit_ts
    cdef int8_t emit_tag
    cdef double in_ts
    cdef int64_t in_pos
    cdef int8_t in_tag
    cdef public int ts_attr, id_attr
    cdef object group_of_type  # per type code: groups consuming it (indices)
    cdef int64_t* floor_cache
    cdef double* vstack
    cdef int8_t* tstack

    def __cinit__(self, lowered, str tie="arrival", Py_ssize_t sweep_every=2048, Py_ssize_t compact_slack=1024):
        self.groups = [Group(g) for g in lowered.groups]
        self.store = EventStore(max(len(lowered.attrs), 1))
        self.tie_strict = 1 if tie == "strict" else 0
        self.tie_either = 1 if tie == "either" else 0
        self.grp_ev = NULL; self.grp_type = NULL; self.grp_keys = NULL
        self.grp_n = 0
        self.grp_cap = 0
        self.grp_rows = 0
        self.npatterns = len(lowered.patterns)
        self.maxslots = lowered.maxslots
        self.ntypes = len(lowered.types)
        self.has_contiguity = any((<Group>g).strategy >= STRICT_CONTIGUITY for g in self.groups)
        self.has_negation = any((<Group>g).nnegs for g in self.groups)
        self.has_timeouts = any((<Group>g).timeout_mask for g in self.groups)
        self.has_watch = any((<Group>g).watch_mask for g in self.groups)
        self.now_ts = 0.0
        self.now_pos = 0
        self.now_ev = 0
        self.timeouts = [0] * len(lowered.patterns)
        self.kills = []
        self.strict_ts = NAN
        self.last_ts = -1e308
        self.last_key = NO_KEY
        self.events = 0
        self.created = 0
        self.cur_row = -1
        self.completed = 0
        self.sweep_every = sweep_every
        self.compact_slack = compact_slack
        self.since_sweep = 0
        self.out_n = 0
        self.out_cap = 0
        self.out_pattern = NULL; self.out_group = NULL; self.out_start = NULL; self.out_end = NULL
        self.out_ids = NULL; self.out_bound = NULL; self.out_at = NULL
        self.out_key = NULL; self.out_ev = NULL; self.out_rv = NULL; self.out_rt = NULL; self.out_deadline = NULL
        self.out_klen = NULL; self.kl_ids = NULL; self.kl_n = 0; self.kl_cap = 0
        self.emit_at = -1
        self.row_out = 0
        self.maxfields = max(lowered.maxfields, 1)
        # a pattern's timeouts are emitted as pattern npatterns + its index: a composite event
        # of the timeout type
        pats = lowered.patterns
        self.pat_has_ret = np.array([p.has_return for p in pats] + [p.timeout_type is not None for p in pats] or [0],
                                    dtype=np.uint8)
        self.pat_ret_type = np.array([p.ret_type for p in pats] + [p.to_type for p in pats] or [-1], dtype=np.int32)
        starts, flat = [0], []
        for attrs in [p.ret_attrs for p in pats] + [p.to_attrs for p in pats]:
            flat.extend(attrs)
            starts.append(len(flat))
        self.pat_attr_start = np.array(starts, dtype=np.int32)
        self.pat_attr = np.array(flat or [-1], dtype=np.int32)
        self.has_returns = any(p.has_return for p in pats)
        self.pat_domain = np.array([p.domain for p in pats] or [-1], dtype=np.int32)
        starts, flat = [0], []
        for p in pats:
            flat.extend(p.consume)
            starts.append(len(flat))
        self.pat_cons_start = np.array(starts, dtype=np.int32)
        self.pat_cons = np.array(flat or [-1], dtype=np.int32)
        self.has_conflict = any(p.domain >= 0 for p in pats)
        self.consumed = [{} for _ in lowered.domains]
        self.horizons = list(lowered.domains)
        self.ordered = self.has_returns or self.has_timeouts or self.has_conflict
        self.composites = 0
        self.taken = 0
        self.emit_ts = 0.0
        self.emit_tag = TAG_NUM
        self.in_ts = 0.0
        self.in_pos = -1
        self.in_tag = TAG_NUM
        names = list(lowered.attrs)
        self.ts_attr = names.index(TS_ATTR) if TS_ATTR in names else -1
        self.id_attr = names.index(ID_ATTR) if ID_ATTR in names else -1
        self.vstack = <double*>grow(NULL, MAX_STACK, sizeof(double))
        self.tstack = <int8_t*>grow(NULL, MAX_STACK, sizeof(int8_t))
        self.reserve_out(1024)

    def __dealloc__(self):
        free(self.out_pattern); free(self.out_group); free(self.out_start); free(self.out_end)
        free(self.out_ids); free(self.out_bound); free(self.vstack); free(self.tstack); free(self.out_at)
        free(self.grp_ev); free(self.grp_type); free(self.grp_keys)
        free(self.out_key); free(self.out_ev); free(self.out_rv); free(self.out_rt); free(self.out_deadline)
        free(self.out_klen); free(self.kl_ids)

    cdef int reserve_out(self, Py_ssize_t cap) except -1:
        if cap <= self.out_cap:
            return 0
        self.out_pattern = <int32_t*>grow(self.out_pattern, cap, sizeof(int32_t))
        self.out_group = <int32_t*>grow(self.out_group, cap, sizeof(int32_t))
        self.out_start = <double*>grow(self.out_start, cap, sizeof(double))
        self.out_end = <double*>grow(self.out_end, cap, sizeof(double))
        self.out_ids = <int64_t*>grow(self.out_ids, cap * self.maxslots, sizeof(int64_t))
        self.out_bound = <uint8_t*>grow(self.out_bound, cap * self.maxslots, sizeof(uint8_t))
        self.out_at = <int64_t*>grow(self.out_at, cap, sizeof(int64_t))
        self.out_key = <int64_t*>grow(self.out_key, cap, sizeof(int64_t))
        self.out_ev = <int64_t*>grow(self.out_ev, cap * self.maxslots, sizeof(int64_t))
        self.out_rv = <double*>grow(self.out_rv, cap * self.maxfields, sizeof(double))
        self.out_rt = <int8_t*>grow(self.out_rt, cap * self.maxfields, sizeof(int8_t))
        self.out_deadline = <double*>grow(self.out_deadline, cap, sizeof(double))
        self.out_klen = <int64_t*>grow(self.out_klen, cap * self.maxslots, sizeof(int64_t))
        self.out_cap = cap
        return 0

    # ------------------------------------------------------------------ conditions

    cdef int eval_cond(self, Group g, int ci, int64_t* slots, int cur_slot, int64_t cur) except -1:
        """Condition ``ci`` on the binding ``slots`` with ``cur`` in ``cur_slot``: 1 holds
        (also vacuously: it reads a variable an OR left unbound), 0 fails."""
        if self.interp(g, ci, slots, cur_slot, cur):
            return 1
        return 1 if self.vstack[0] != 0.0 and self.tstack[0] != TAG_MISSING else 0

    cdef int eval_value(self, Group g, int ci, int64_t* slots, double* out, int8_t* tag) except -1:
        """A RETURN value on the match's slots (as_condition_free): ``None`` where it reads a
        variable an OR left unbound or a value that does not exist."""
        if self.interp(g, ci, slots, -1, -1) or self.tstack[0] == TAG_MISSING:
            out[0] = 0.0
            tag[0] = TAG_NULL
        else:
            out[0] = self.vstack[0]
            tag[0] = self.tstack[0]
        return 0

    cdef inline int interp(self, Group g, int ci, int64_t* slots, int cur_slot, int64_t cur) except -1:
        """Run program ``ci``: 1 when it reads an unbound slot (the engine's Skip), else 0
        with the result on top of the value stack."""
        cdef const int32_t* code = g.codep
        cdef int pc = g.cond_start[ci]
        cdef int sp = 0, op
        cdef double a, b
        cdef int8_t ta, tb
        cdef double* v = self.vstack
        cdef int8_t* tg = self.tstack
        while True:
            op = code[pc]
            if op == OP_END:
                return 0
            elif op == OP_CMP_AA:
                if self.load(g, slots, cur_slot, cur, code[pc + 2], code[pc + 3], &a, &ta):
                    return 1
                if self.load(g, slots, cur_slot, cur, code[pc + 4], code[pc + 5], &b, &tb):
                    return 1
                v[sp] = self.compare(code[pc + 1], a, ta, b, tb)
                tg[sp] = TAG_BOOL
                sp += 1
                pc += 6
            elif op == OP_CMP_AC:
                if self.load(g, slots, cur_slot, cur, code[pc + 2], code[pc + 3], &a, &ta):
                    return 1
                v[sp] = self.compare(code[pc + 1], a, ta, g.consts[code[pc + 4]], g.const_tags[code[pc + 4]])
                tg[sp] = TAG_BOOL
                sp += 1
                pc += 5
            elif op == OP_ATTR:
                if self.load(g, slots, cur_slot, cur, code[pc + 1], code[pc + 2], &v[sp], &tg[sp]):
                    return 1
                sp += 1
                pc += 3
            elif op == OP_CONST:
                v[sp] = g.consts[code[pc + 1]]
                tg[sp] = g.const_tags[code[pc + 1]]
                sp += 1
                pc += 2
            elif op == OP_CMP:
                sp -= 1
                v[sp - 1] = self.compare(code[pc + 1], v[sp - 1], tg[sp - 1], v[sp], tg[sp])
                tg[sp - 1] = TAG_BOOL
                pc += 2
            elif op == OP_ARITH:
                sp -= 1
                self.arith(code[pc + 1], &v[sp - 1], &tg[sp - 1], v[sp], tg[sp])
                pc += 2
            elif op == OP_NEG:
                ta = tg[sp - 1]
                if ta == TAG_STR or ta == TAG_NULL:
                    raise KernelEvaluationError("negate", 0, v[sp - 1], ta, 0.0, TAG_NUM)
                v[sp - 1] = -v[sp - 1]
                if ta == TAG_BOOL:
                    tg[sp - 1] = TAG_INT
                pc += 1
            elif op == OP_NOT:
                if tg[sp - 1] != TAG_MISSING:  # (a value that does not exist stays so: false at the top)
                    v[sp - 1] = 0.0 if v[sp - 1] != 0.0 else 1.0
                    tg[sp - 1] = TAG_BOOL
                pc += 1
            elif op == OP_KATTR:
                if kleene_load(self, g, cur if code[pc + 1] == cur_slot else slots[code[pc + 1]], code[pc + 2],
                               code[pc + 3], &v[sp], &tg[sp]):
                    return 1
                sp += 1
                pc += 4
            elif op == OP_AGG:
                if kleene_agg(g, code[pc + 1], cur if code[pc + 1] == cur_slot else slots[code[pc + 1]], code[pc + 2],
                              code[pc + 3], &v[sp], &tg[sp]):
                    return 1
                sp += 1
                pc += 4
            elif op == OP_BOOL:
                v[sp - 1] = 1.0 if v[sp - 1] != 0.0 and tg[sp - 1] != TAG_MISSING else 0.0
                tg[sp - 1] = TAG_BOOL
                pc += 1
            elif op == OP_JF:
                if v[sp - 1] == 0.0 or tg[sp - 1] == TAG_MISSING:
                    pc += 2 + code[pc + 1]
                else:
                    sp -= 1
                    pc += 2
            elif op == OP_JT:
                if v[sp - 1] != 0.0 and tg[sp - 1] != TAG_MISSING:
                    pc += 2 + code[pc + 1]
                else:
                    sp -= 1
                    pc += 2
            else:
                raise RuntimeError(f"bad opcode {op}")

    cdef inline int load(self, Group g, int64_t* slots, int cur_slot, int64_t cur, int slot, int attr,
                         double* out, int8_t* tag) except -1:
        """An attribute of the event in ``slot``; returns 1 when the slot is unbound (the
        conjunct then holds vacuously, as the Python engine's Skip)."""
        cdef int64_t ev = cur if slot == cur_slot else slots[slot]
        cdef EventStore st = self.store
        if ev < 0:
            return 1
        out[0] = st.val[ev * st.nattrs + attr]
        tag[0] = st.tag[ev * st.nattrs + attr]
        return 0

    cdef inline double compare(self, int op, double a, int8_t ta, double b, int8_t tb) except -1.0:
        """Python's comparison of two values: numbers (float, int, bool) by value, text by
        code (=, !=) or rank, None equal only to None; other mixes are unequal, and ordering
        them is an error."""
        cdef int8_t ca = ta, cb = tb
        if ta == TAG_MISSING or tb == TAG_MISSING:
            return 0.0  # reads a value that does not exist (division by zero): false
        if ca == TAG_INT or ca == TAG_BOOL:
            ca = TAG_NUM
        if cb == TAG_INT or cb == TAG_BOOL:
            cb = TAG_NUM
        if ca != cb or ca == TAG_NULL:
            if op == 0:
                return 1.0 if ca == cb else 0.0
            if op == 1:
                return 0.0 if ca == cb else 1.0
            raise KernelEvaluationError("compare", op, a, ta, b, tb)
        if ca == TAG_STR and op >= 2:
            a = self.store.ranks[<Py_ssize_t>a]
            b = self.store.ranks[<Py_ssize_t>b]
        if op == 0:
            return 1.0 if a == b else 0.0
        if op == 1:
            return 1.0 if a != b else 0.0
        if op == 2:
            return 1.0 if a < b else 0.0
        if op == 3:
            return 1.0 if a <= b else 0.0
        if op == 4:
            return 1.0 if a > b else 0.0
        return 1.0 if a >= b else 0.0

    cdef inline int arith(self, int op, double* a, int8_t* ta, double b, int8_t tb) except -1:
        """Python's arithmetic on numbers: int op int is an int (but for /), else a float;
        division by zero gives a value that does not exist."""
        cdef double r
        cdef int8_t ka = ta[0]
        if ka == TAG_MISSING or tb == TAG_MISSING:
            ta[0] = TAG_MISSING
            return 0
        if ka == TAG_STR or ka == TAG_NULL or tb == TAG_STR or tb == TAG_NULL:
            raise KernelEvaluationError("compute", op, a[0], ka, b, tb)
        if (ka == TAG_INT or ka == TAG_BOOL) and (tb == TAG_INT or tb == TAG_BOOL) and op != 3:
            ta[0] = TAG_INT
        else:
            ta[0] = TAG_NUM
        if op == 0:
            a[0] = a[0] + b
        elif op == 1:
            a[0] = a[0] - b
        elif op == 2:
            a[0] = a[0] * b
        elif b == 0.0:
            ta[0] = TAG_MISSING
        elif op == 3:
            a[0] = a[0] / b
        else:  # Python's modulo: the sign of the divisor
            r = fmod(a[0], b)
            if r != 0.0 and ((r < 0.0) != (b < 0.0)):
                r += b
            a[0] = r
        return 0

    # ------------------------------------------------------------------ firing

    cdef int64_t admit_users(self, Group g, int tr, int32_t t, int64_t users, int64_t* slots, double ts,
                             int64_t pos, int64_t floor) except -1:
        """The users of stored token ``t`` for which firing ``tr`` with the event (ts, pos) keeps
        the window (per pattern where they disagree), contiguity and, under the tie rule strict,
        the order; 0: none."""
        cdef int64_t admitted, lo, hi, cur
        cdef int k
        cdef double w
        cdef EventStore st = self.store
        w = g.tr_window[tr]
        if not isnan(w):
            if g.count_window:
                hi = g.tk_last_pos[t] if g.tk_last_pos[t] > pos else pos
                lo = g.tk_first_pos[t] if g.tk_first_pos[t] < pos else pos
                if hi - lo >= <int64_t>w:
                    return 0
            elif ts - g.tk_first_ts[t] > w:
                return 0
        if g.tr_pw_start[tr + 1] > g.tr_pw_start[tr]:
            admitted = 0
            for k in range(g.tr_pw_start[tr], g.tr_pw_start[tr + 1]):
                w = g.pw_window[k]
                if isnan(w):
                    admitted |= g.pw_mask[k]
                elif g.count_window:
                    hi = g.tk_last_pos[t] if g.tk_last_pos[t] > pos else pos
                    lo = g.tk_first_pos[t] if g.tk_first_pos[t] < pos else pos
                    if hi - lo < <int64_t>w:
                        admitted |= g.pw_mask[k]
                elif ts - g.tk_first_ts[t] <= w:
                    admitted |= g.pw_mask[k]
            users &= admitted
            if users == 0:
                return 0
        if g.strategy >= STRICT_CONTIGUITY and g.tk_last_key[t] < floor:
            return 0
        if self.tie_strict:
            for k in range(g.tr_order_start[tr], g.tr_order_start[tr + 1]):
                cur = slots[g.tr_order[k]]
                if g.slot_kleene[g.tr_order[k]]:
                    cur = g.nd_ev[cur]  # a list: its last element
                if st.ts[cur] >= ts:
                    return 0
        return users

    cdef int32_t fire(self, Group g, int tr, int32_t t, int64_t ev, double ts, int64_t pos,
                      int64_t floor) except -2:
        """Fire transition ``tr`` with token ``t`` (-1: the empty partial match) and event
        ``ev``: the new token, or -1 (GroupRuntime.fire)."""
        cdef int64_t users, cur
        cdef int k, sl, ns = g.nslots
        cdef int64_t* slots
        cdef int32_t nt
        if t < 0:
            users = g.all_users & g.tr_mask[tr]
            slots = g.slotbuf
            for k in range(ns):
                slots[k] = -1
        else:
            users = g.tk_users[t] & g.tr_mask[tr]
            slots = &g.tk_slots[<Py_ssize_t>t * ns]
            if g.tk_blocked[t] & g.tr_blocked_by[tr]:
                return -1
        if users == 0:
            return -1
        if t >= 0:
            users = self.admit_users(g, tr, t, users, slots, ts, pos, floor)
            if users == 0:
                return -1
        sl = g.tr_slot[tr]
        cur = ev
        if g.tr_kleene[tr]:  # the new list state (kleene_start / kleene_take)
            cur = kleene_node(self, g, sl, <int32_t>slots[sl] if g.tr_kleene[tr] == KLEENE_TAKE else -1, ev)
        for k in range(g.tr_guard_start[tr], g.tr_guard_start[tr + 1]):
            if not self.eval_cond(g, g.tr_guard[k], slots, sl, cur):
                return -1
        nt = g.alloc()
        if t >= 0:  # alloc may have moved the arena
            slots = &g.tk_slots[<Py_ssize_t>t * ns]
        memcpy(&g.tk_slots[<Py_ssize_t>nt * ns], slots, ns * sizeof(int64_t))
        g.tk_slots[<Py_ssize_t>nt * ns + sl] = cur
        g.tk_place[nt] = g.tr_dst[tr]
        g.tk_next[nt] = -1
        g.tk_users[nt] = users
        g.tk_blocked[nt] = (g.tk_blocked[t] & ~g.tr_clears[tr]) if t >= 0 else 0
        g.tk_ext[nt] = 0
        g.tk_counted[nt] = 0
        if t < 0:
            g.tk_first_ts[nt] = ts
            g.tk_last_ts[nt] = ts
            g.tk_first_pos[nt] = pos
            g.tk_last_pos[nt] = pos
            g.tk_last_key[nt] = 2 * pos
        else:
            g.tk_first_ts[nt] = g.tk_first_ts[t] if g.tk_first_ts[t] < ts else ts
            g.tk_last_ts[nt] = g.tk_last_ts[t] if g.tk_last_ts[t] > ts else ts
            g.tk_first_pos[nt] = g.tk_first_pos[t] if g.tk_first_pos[t] < pos else pos
            g.tk_last_pos[nt] = g.tk_last_pos[t] if g.tk_last_pos[t] > pos else pos
            g.tk_last_key[nt] = g.tk_last_key[t] if g.tk_last_key[t] > 2 * pos else 2 * pos
        for k in range(g.tr_defer_start[tr], g.tr_defer_start[tr + 1], 2):  # every element again
            if not check_elements(self, g, g.tr_defer[k], g.tr_defer[k + 1], &g.tk_slots[<Py_ssize_t>nt * ns]):
                g.release(nt)
                return -1
        if t >= 0 and g.timeout_mask:
            g.tk_ext[t] |= users
        return nt

    cdef int arc_ok(self, Group g, int tr, int64_t ev) except -1:
        cdef int k, ns = g.nslots
        cdef int64_t* slots = g.slotbuf
        for k in range(ns):
            slots[k] = -1
        for k in range(g.tr_arc_start[tr], g.tr_arc_start[tr + 1]):
            if not self.eval_cond(g, g.tr_arc[k], slots, g.tr_slot[tr], ev):
                return 0
        return 1

    cdef int step(self, Group g, int etype, int64_t key, int64_t ev, double ts, int64_t pos) except -1:
        """Extend every partial match of ``key`` by the event (GroupRuntime.step); new tokens
        are appended to ``g.created``."""
        cdef int e, k, tr, src, base, nen
        cdef int32_t t, nxt, prev, nt
        cdef int64_t moved, floor = NO_KEY
        cdef int32_t enabled[256]
        if g.strategy == PARTITION_CONTIGUITY and g.partitioned:
            floor = g.floors[key]
        elif g.strategy >= STRICT_CONTIGUITY:
            floor = self.last_key
        base = <int>(key * g.nplaces)
        for e in range(g.type_start[etype], g.type_start[etype + 1]):
            src = g.ent_src[e]
            nen = 0
            for k in range(g.ent_tr_start[e], g.ent_tr_start[e + 1]):
                tr = g.ent_trs[k]
                if g.tr_arc_start[tr + 1] == g.tr_arc_start[tr] or self.arc_ok(g, tr, ev):
                    if nen < 256:
                        enabled[nen] = tr
                        nen += 1
            if src == g.start:
                for k in range(nen):
                    nt = self.fire(g, enabled[k], -1, ev, ts, pos, floor)
                    if nt >= 0:
                        g.add_created(nt)
            t = g.heads[base + src]
            prev = -1
            while t >= 0:
                nxt = g.tk_next[t]
                if g.expired(t, ts, pos) or (g.strategy >= STRICT_CONTIGUITY and g.tk_last_key[t] < floor):
                    self.unlink(g, base + src, prev, t)
                    t = nxt
                    continue
                moved = 0
                for k in range(nen):
                    nt = self.fire(g, enabled[k], t, ev, ts, pos, floor)
                    if nt >= 0:
                        g.add_created(nt)
                        moved |= g.tk_users[nt]
                if moved and g.strategy == STNM:
                    if g.tk_counted[t] & moved:
                        uncount(g, key, t, moved)
                    g.tk_users[t] &= ~moved
                    if g.tk_users[t] == 0:
                        self.unlink(g, base + src, prev, t)
                        t = nxt
                        continue
                prev = t
                t = nxt
        return 0

    cdef inline void unlink(self, Group g, int list_id, int32_t prev, int32_t t):
        cdef int32_t nxt = g.tk_next[t]
        if prev < 0:
            g.heads[list_id] = nxt
        else:
            g.tk_next[prev] = nxt
        if g.tails[list_id] == t:
            g.tails[list_id] = prev
        if g.tk_pins[t]:  # a deadline or a quota still refers to it
            g.tk_next[t] = g.zombies
            g.zombies = t
        else:
            g.release(t)

    cdef int accept(self, Group g, int32_t t, int64_t key) except -1:
        """A token reached a place patterns emit from: each role group checks once, each of
        its patterns the token serves emits (Engine._accept, emission_ok)."""
        cdef int place = g.tk_place[t], r, k, ok, j, ns = g.nslots
        cdef double w
        cdef int64_t users = g.tk_users[t]
        cdef int64_t* slots = &g.tk_slots[<Py_ssize_t>t * ns]
        for r in range(g.place_rg_start[place], g.place_rg_start[place + 1]):
            if not (users & g.rg_mask[r]):
                continue
            w = g.rg_window[r]
            if not isnan(w):
                if g.count_window:
                    if g.tk_last_pos[t] - g.tk_first_pos[t] >= <int64_t>w:
                        continue
                elif g.tk_last_ts[t] - g.tk_first_ts[t] > w:
                    continue
            ok = 1
            for k in range(g.rg_final_start[r], g.rg_final_start[r + 1]):
                j = g.cond_iter_slot[g.rg_final[k]]
                if j >= 0:  # an iteration condition: every element
                    if not check_elements(self, g, g.rg_final[k], j, slots):
                        ok = 0
                        break
                elif not self.eval_cond(g, g.rg_final[k], slots, -1, -1):
                    ok = 0
                    break
            if ok and g.rg_emit_start[r + 1] > g.rg_emit_start[r]:
                ok = not self.buffered_violation(g, r, t, key, w)
            if not ok:
                continue
            for k in range(g.rg_role_start[r], g.rg_role_start[r + 1]):
                if users & g.role_bit[k]:
                    if g.role_pending[k]:
                        self.wait(g, k, t, key)
                    else:
                        self.emit(g, g.role_pattern[k], &g.tk_slots[<Py_ssize_t>t * ns], g.tk_first_ts[t],
                                  g.tk_last_ts[t], key, NAN)
        return 0

    cdef int buffered_violation(self, Group g, int r, int32_t t, int64_t key, double w) except -1:
        """Whether a buffered negative event of the key violates the token (emission check)."""
        cdef int k, j, ns = g.nslots
        cdef int32_t b
        for k in range(g.rg_emit_start[r], g.rg_emit_start[r + 1]):
            j = g.rg_emit[k]
            b = g.nb_heads[key * g.nnegs + j]
            while b >= 0:
                if self.violates(g, j, &g.tk_slots[<Py_ssize_t>t * ns], g.tk_first_ts[t], g.tk_last_ts[t],
                                 g.tk_first_pos[t], g.tk_last_pos[t], g.nb_ev[b], w):
                    return 1
                b = g.nb_next[b]
        return 0

    cdef int wait(self, Group g, int role, int32_t t, int64_t key) except -1:
        """An end negation: the match is emitted when its window closes, unless a negative
        event violates it first (Engine._emits)."""
        cdef int32_t d = g.new_pending()
        cdef int ns = g.nslots
        cdef double w = g.role_window[role]
        memcpy(&g.pd_slots[<Py_ssize_t>d * ns], &g.tk_slots[<Py_ssize_t>t * ns], ns * sizeof(int64_t))
        g.pd_first_ts[d] = g.tk_first_ts[t]
        g.pd_last_ts[d] = g.tk_last_ts[t]
        g.pd_first_pos[d] = g.tk_first_pos[t]
        g.pd_last_pos[d] = g.tk_last_pos[t]
        if isnan(w):
            g.pd_thr[d] = INFINITY
        elif g.count_window:
            g.pd_thr[d] = <double>g.tk_first_pos[t] + w
        else:
            g.pd_thr[d] = g.tk_first_ts[t] + w
        g.pd_counter += 1
        g.pd_seq[d] = g.pd_counter
        g.pd_role[d] = role
        g.pd_key[d] = key
        g.pd_flags[d] = 3
        g.pd_next[d] = g.pd_heads[key]
        g.pd_heads[key] = d
        g.heap_push(d)
        return 0

    cdef int violates(self, Group g, int j, int64_t* slots, double first_ts, double last_ts, int64_t first_pos,
                      int64_t last_pos, int64_t x, double w) except -1:
        """Whether negative event ``x`` invalidates a (partial) match for negation ``j``; ``w``
        bounds a negation at the start or end of its SEQ (GroupRuntime.violates)."""
        cdef EventStore st = self.store
        cdef int k
        cdef int64_t ev, best = -1
        if g.neg_prev_start[j + 1] > g.neg_prev_start[j]:
            for k in range(g.neg_prev_start[j], g.neg_prev_start[j + 1]):
                ev = slots[g.neg_prev[k]]
                if ev > best:  # the latest in arrival order: the store keeps it (composite events too)
                    best = ev
            if best < 0 or not self.after(x, best):
                return 0
        elif not isnan(w):
            if g.count_window:
                if <double>st.pos[x] <= <double>last_pos - w:
                    return 0
            elif st.ts[x] < last_ts - w:
                return 0
        best = -1
        if g.neg_next_start[j + 1] > g.neg_next_start[j]:
            for k in range(g.neg_next_start[j], g.neg_next_start[j + 1]):
                ev = slots[g.neg_next[k]]
                if ev >= 0 and (best < 0 or ev < best):
                    best = ev
            if best >= 0 and not self.after(best, x):
                return 0
        elif not isnan(w):
            if g.count_window:
                if <double>st.pos[x] >= <double>first_pos + w:
                    return 0
            elif st.ts[x] > first_ts + w:
                return 0
        for k in range(g.neg_cond_start[j], g.neg_cond_start[j + 1]):
            if not self.eval_cond(g, g.neg_cond[k], slots, NEG_SLOT, x):
                return 0
        for k in range(g.nslots):
            if slots[k] == x:
                return 0
        return 1

    cdef inline bint after(self, int64_t x, int64_t ev):
        """Whether stored event ``x`` comes after ``ev``: by time under the tie rule strict, else
        in arrival order, which is the store's (a composite event right after its emitter)."""
        if self.tie_strict:
            return self.store.ts[x] > self.store.ts[ev]
        return x > ev

    cdef int negative(self, Group g, int etype, int64_t key, int64_t x) except -1:
        """Record ``x`` as a negative event of the key (GroupRuntime.negative): buffer it,
        cancel waiting matches it violates, and cancel (arrival) or, at the end of the
        timestamp group (strict), block or drop the partial matches of pushed negations.
        Returns whether the event must stay in the store."""
        cdef int k, c, j, ok, keep = 0, ns = g.nslots, role
        cdef int32_t d, prev, nxt
        cdef int64_t* slots = g.slotbuf
        for k in range(g.type_neg_start[etype], g.type_neg_start[etype + 1]):
            j = g.type_neg[k]
            for c in range(ns):
                slots[c] = -1
            ok = 1
            for c in range(g.neg_event_start[j], g.neg_event_start[j + 1]):
                if not self.eval_cond(g, g.neg_event[c], slots, NEG_SLOT, x):
                    ok = 0
                    break
            if not ok:
                continue
            if not g.neg_pushed[j]:
                g.buffer_negative(key, j, x)
                keep = 1
            d = g.pd_heads[key]
            prev = -1
            while d >= 0:
                nxt = g.pd_next[d]
                if not (g.pd_flags[d] & 1):  # dead: leave the key's list
                    if prev < 0:
                        g.pd_heads[key] = nxt
                    else:
                        g.pd_next[prev] = nxt
                    g.pd_flags[d] &= ~2
                    if g.pd_flags[d] & 4:
                        g.drop_pending(d)
                    d = nxt
                    continue
                role = g.pd_role[d]
                if (g.role_pending[role] >> j) & 1 and self.violates(
                        g, j, &g.pd_slots[<Py_ssize_t>d * ns], g.pd_first_ts[d], g.pd_last_ts[d],
                        g.pd_first_pos[d], g.pd_last_pos[d], x, g.role_window[role]):
                    g.pd_flags[d] &= ~1
                prev = d
                d = nxt
            if g.neg_pushed[j]:
                if self.tie_strict:
                    self.kills.append((g, key, j, x))
                    keep = 1
                else:
                    self.cancel(g, key, j, x)
        return keep

    cdef int cancel(self, Group g, int64_t key, int j, int64_t x) except -1:
        """A pushed negation: drop (or block, where P can still grow) the partial matches of
        the key that ``x`` violates (GroupRuntime.cancel)."""
        cdef int k, lid, ns = g.nslots
        cdef int32_t t, prev, nxt
        cdef bint growable
        for k in range(g.neg_place_start[j], g.neg_place_start[j + 1]):
            lid = <int>(key * g.nplaces + g.neg_place[k])
            growable = (g.place_growable[g.neg_place[k]] >> j) & 1
            t = g.heads[lid]
            prev = -1
            while t >= 0:
                nxt = g.tk_next[t]
                if self.violates(g, j, &g.tk_slots[<Py_ssize_t>t * ns], g.tk_first_ts[t], g.tk_last_ts[t],
                                 g.tk_first_pos[t], g.tk_last_pos[t], x, NAN):
                    if growable:
                        g.tk_blocked[t] |= (<int64_t>1) << j
                    else:
                        if g.tk_counted[t]:
                            uncount(g, key, t, -1)
                        g.tk_users[t] = 0  # not alive: no timeout
                        self.unlink(g, lid, prev, t)
                        t = nxt
                        continue
                prev = t
                t = nxt
        return 0

    cdef int end_group(self) except -1:
        """Tie rule strict: the timestamp group ended, its negative events cancel now."""
        cdef list kills = self.kills
        self.kills = []
        for g, key, j, x in kills:
            self.cancel(<Group>g, key, j, x)
        return 0

    cdef int close_pending(self, double ts, int64_t pos, bint all_) except -1:
        """Stream time reached (ts, pos): emit the waiting matches whose window it closes
        (all of them at the end of the stream)."""
        cdef Group g
        cdef int32_t d
        cdef Py_ssize_t gi
        if self.has_timeouts and not all_:  # (Engine._close_pending: timeouts first; flush: after)
            close_deadlines(self, ts, pos, False)
        for gi in range(len(self.groups)):
            g = <Group>self.groups[gi]
            while g.heap_n:
                d = g.heap[0]
                if not all_:
                    if g.count_window:
                        if not (<double>pos >= g.pd_thr[d]):
                            break
                    elif not (ts > g.pd_thr[d]):
                        break
                g.heap_pop()
                if g.pd_flags[d] & 1:
                    self.emit_pending(g, d)
                g.pd_flags[d] = (g.pd_flags[d] & ~1) | 4
                if not (g.pd_flags[d] & 2):
                    g.drop_pending(d)
        if self.has_timeouts and all_:
            close_deadlines(self, ts, pos, True)
        return 0

    cdef int emit_pending(self, Group g, int32_t d) except -1:
        return self.emit(g, g.role_pattern[g.pd_role[d]], &g.pd_slots[<Py_ssize_t>d * g.nslots], g.pd_first_ts[d],
                         g.pd_last_ts[d], g.pd_key[d], NAN)

    cdef int emit(self, Group g, int pattern, int64_t* slots, double first_ts, double last_ts, int64_t key,
                  double deadline) except -1:
        """Buffer a match: its pattern, span, bound events' ids (and store indices, for the
        order of matches emitted at one point), the key, and its RETURN values (a timeout:
        pattern npatterns + its index, its ON TIMEOUT values and its deadline)."""
        cdef Py_ssize_t o = self.out_n, k, m = self.maxslots, f = self.maxfields
        cdef int64_t ev
        cdef int ns = g.nslots, r
        if o >= self.out_cap:
            self.reserve_out(2 * self.out_cap)
        self.out_pattern[o] = pattern
        self.out_at[o] = self.emit_at
        self.out_start[o] = first_ts
        self.out_end[o] = last_ts
        self.out_key[o] = key
        self.out_deadline[o] = deadline
        for k in range(m):
            ev = slots[k] if k < ns else -1
            self.out_bound[o * m + k] = 1 if ev >= 0 else 0
            self.out_klen[o * m + k] = -1
            if ev >= 0 and g.slot_kleene[k]:  # a list: its ids go to the list buffer
                emit_list(self, g, ev, o, k)
                self.out_ev[o * m + k] = -1
                continue
            self.out_ids[o * m + k] = self.store.id[ev] if ev >= 0 else 0
            self.out_ev[o * m + k] = ev
        for r in range(g.ret_start[pattern + 1] - g.ret_start[pattern]):
            self.eval_value(g, g.ret_prog[g.ret_start[pattern] + r], slots, &self.out_rv[o * f + r], &self.out_rt[o * f + r])
        self.out_n += 1
        return 0

    cdef int settle(self, Py_ssize_t first) except -1:
        """The matches emitted at one point, from ``first``: in the engine's order (Engine._emit);
        with RETURN, each round's composite events enter in that order, and the matches they
        complete form the next round."""
        cdef Py_ssize_t end, o
        cdef bint chains
        if not self.ordered:
            if self.out_n - first > 1 and self.npatterns > 1:
                self.order_emitted(first, 0)
            return 0
        while self.out_n > first:
            end = self.out_n
            chains = False
            for o in range(first, end):
                if self.pat_has_ret[self.out_pattern[o]] or (
                        self.out_pattern[o] < self.npatterns and self.pat_domain[self.out_pattern[o]] >= 0):
                    chains = True
                    break
            if end - first > 1:
                self.order_emitted(first, chains)
            if self.has_conflict:
                end = self.consume(first, end)
            for o in range(first, end):
                if self.pat_has_ret[self.out_pattern[o]]:
                    self.composites += 1
                    if self.pat_ret_type[self.out_pattern[o]] >= 0:
                        self.composite(o)
            first = end
        return 0

    cdef Py_ssize_t consume(self, Py_ssize_t first, Py_ssize_t end) except -1:
        """Consumption (Engine._consume), over the ordered matches [first, end): a match of a
        consuming pattern holding an event already consumed in its domain is dropped, an
        emitted one consumes the events of its consumed slots. Returns the new end."""
        cdef Py_ssize_t o, k, m = self.maxslots, n = 0
        cdef int p, d
        cdef int64_t ev
        cdef bint ok
        cdef dict used
        cdef Py_ssize_t* perm = <Py_ssize_t*>malloc(max(end - first, 1) * sizeof(Py_ssize_t))
        cdef EventStore st = self.store
        try:
            for o in range(first, end):
                p = self.out_pattern[o]
                d = self.pat_domain[p] if p < self.npatterns else -1
                if d >= 0:  # (a timeout is not a match: it consumes nothing)
                    used = <dict>self.consumed[d]
                    ok = True
                    for k in range(m):
                        ev = self.out_ev[o * m + k]
                        if ev >= 0 and st.seq[ev] in used:
                            ok = False
                            break
                    if not ok:
                        continue
                    for k in range(self.pat_cons_start[p], self.pat_cons_start[p + 1]):
                        ev = self.out_ev[o * m + self.pat_cons[k]]
                        if ev >= 0:
                            used[st.seq[ev]] = st.ts[ev]
                perm[n] = o
                n += 1
            if n < end - first:
                self.permute(first, n, perm)
                self.out_n = first + n
        finally:
            free(perm)
        return first + n

    cdef int composite(self, Py_ssize_t o) except -1:
        """Match ``o`` as an event of its RETURN type (Engine._process with composite=True): at
        the emitting row's time and position, its id a reference to the match (-1 - its number
        in the run's output), its fields' values in their attribute columns, its key the
        match's; it steps every group that reads its type."""
        cdef EventStore st = self.store
        cdef Py_ssize_t ev, a, na = st.nattrs, gi, ngroups = len(self.groups), f = self.maxfields
        cdef int p = self.out_pattern[o], etype = self.pat_ret_type[p], k, r
        cdef Group g
        cdef bint kept = False
        if st.n >= st.cap:
            st.reserve(2 * st.cap)
        ev = st.n
        st.n += 1
        st.seq[ev] = st.next_seq
        st.next_seq += 1
        st.ts[ev] = self.emit_ts
        st.pos[ev] = self.emit_at if self.emit_at >= 0 else self.in_pos
        st.id[ev] = -1 - (self.taken + o)
        for a in range(na):
            st.val[ev * na + a] = 0.0
            st.tag[ev * na + a] = TAG_MISSING
        for k in range(self.pat_attr_start[p], self.pat_attr_start[p + 1]):
            a = self.pat_attr[k]
            if a >= 0:
                r = k - self.pat_attr_start[p]
                st.val[ev * na + a] = self.out_rv[o * f + r]
                st.tag[ev * na + a] = self.out_rt[o * f + r]
        if self.ts_attr >= 0:
            st.val[ev * na + self.ts_attr] = self.emit_ts
            st.tag[ev * na + self.ts_attr] = self.emit_tag
        for gi in range(ngroups):
            g = <Group>self.groups[gi]
            if self.enter(g, etype, self.out_key[o] if g.partitioned else 0, ev):
                kept = True
        if not kept and st.n == ev + 1:
            st.n -= 1
        return 0

    cdef bint enter(self, Group g, int etype, int64_t key, int64_t ev) except -1:
        """Stored event ``ev`` of type ``etype`` in group ``g`` under ``key``: it extends the
        key's partial matches (their contiguity keys stay even: a composite event's 2*pos + 1
        compares with the input events' floors as 2*pos does) and counts as a negative event.
        Returns whether a token or a negation buffer keeps it."""
        cdef bint kept = False
        if g.type_start[etype + 1] == g.type_start[etype] and g.type_neg_start[etype + 1] == g.type_neg_start[etype]:
            return False
        if key >= g.nkeys:
            g.reserve_keys(key + 1)
        g.ncreated = 0
        self.now_ts = self.store.ts[ev]
        self.now_pos = self.store.pos[ev]
        self.now_ev = ev
        self.step(g, etype, key, ev, self.now_ts, self.now_pos)
        if g.ncreated:
            kept = True
            self.store_created(g, key)
        if g.type_neg_start[etype + 1] > g.type_neg_start[etype] and self.negative(g, etype, key, ev):
            kept = True
        return kept

    cdef void order_emitted(self, Py_ssize_t first, bint chains):
        """Matches emitted at one point, stably by pattern (Engine._emit's order); with
        ``chains`` (some pattern has RETURN) then by their events' stream order: the sorted
        positions of the bound events, then each variable's (unbound first)."""
        cdef Py_ssize_t n = self.out_n - first, i, j
        cdef Py_ssize_t* perm
        cdef Py_ssize_t x
        if n < 2:
            return
        perm = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        for i in range(n):
            perm[i] = first + i
        for i in range(1, n):  # insertion sort: stable, and the batches are small
            x = perm[i]
            j = i
            while j > 0 and self.match_before(x, perm[j - 1], chains):
                perm[j] = perm[j - 1]
                j -= 1
            perm[j] = x
        self.permute(first, n, perm)
        free(perm)

    cdef bint match_before(self, Py_ssize_t a, Py_ssize_t b, bint chains):
        """Whether match ``a`` goes strictly before match ``b``."""
        cdef Py_ssize_t m = self.maxslots, k, i, j
        cdef int64_t sa[64]
        cdef int64_t sb[64]
        cdef int64_t x, y
        cdef int np_ = self.npatterns, pa = self.out_pattern[a], pb = self.out_pattern[b]
        if pa != pb:  # by pattern, a timeout (pattern npatterns + index) after the pattern's matches
            return (pa % np_, pa >= np_) < (pb % np_, pb >= np_)
        if not chains:
            return False
        i = self.sorted_events(a, sa)
        j = self.sorted_events(b, sb)
        for k in range(i if i < j else j):
            if sa[k] != sb[k]:
                return sa[k] < sb[k]
        if i != j:
            return i < j
        for k in range(m):
            x = self.out_ev[a * m + k]
            y = self.out_ev[b * m + k]
            if x != y:
                return x < y  # unbound (-1) first: () < (seq,)
        return False

    cdef Py_ssize_t sorted_events(self, Py_ssize_t o, int64_t* out):
        """The store indices of match ``o``'s bound events (stream order), sorted."""
        cdef Py_ssize_t m = self.maxslots, k, n = 0, j
        cdef int64_t ev
        for k in range(m if m < 64 else 64):
            ev = self.out_ev[o * m + k]
            if ev < 0:
                continue
            j = n
            while j > 0 and out[j - 1] > ev:
                out[j] = out[j - 1]
                j -= 1
            out[j] = ev
            n += 1
        return n

    cdef void permute(self, Py_ssize_t first, Py_ssize_t n, Py_ssize_t* perm):
        """Reorder matches [first, first + n): the match at ``perm[i]`` moves to first + i."""
        cdef Py_ssize_t i, m = self.maxslots, f = self.maxfields, src, dst
        cdef int32_t* pat = <int32_t*>malloc(n * sizeof(int32_t))
        cdef int64_t* at = <int64_t*>malloc(n * sizeof(int64_t))
        cdef int64_t* key = <int64_t*>malloc(n * sizeof(int64_t))
        cdef double* se = <double*>malloc(3 * n * sizeof(double))
        cdef int64_t* ids = <int64_t*>malloc(3 * n * m * sizeof(int64_t))
        cdef uint8_t* bound = <uint8_t*>malloc(n * m)
        cdef double* rv = <double*>malloc(n * f * sizeof(double))
        cdef int8_t* rt = <int8_t*>malloc(n * f)
        for i in range(n):
            src = perm[i]
            pat[i] = self.out_pattern[src]
            at[i] = self.out_at[src]
            key[i] = self.out_key[src]
            se[2 * i] = self.out_start[src]
            se[2 * i + 1] = self.out_end[src]
            se[2 * n + i] = self.out_deadline[src]
            memcpy(&ids[i * m], &self.out_ids[src * m], m * sizeof(int64_t))
            memcpy(&ids[(n + i) * m], &self.out_ev[src * m], m * sizeof(int64_t))
            memcpy(&ids[(2 * n + i) * m], &self.out_klen[src * m], m * sizeof(int64_t))
            memcpy(&bound[i * m], &self.out_bound[src * m], m)
            memcpy(&rv[i * f], &self.out_rv[src * f], f * sizeof(double))
            memcpy(&rt[i * f], &self.out_rt[src * f], f)
        for i in range(n):
            dst = first + i
            self.out_pattern[dst] = pat[i]
            self.out_at[dst] = at[i]
            self.out_key[dst] = key[i]
            self.out_start[dst] = se[2 * i]
            self.out_end[dst] = se[2 * i + 1]
            self.out_deadline[dst] = se[2 * n + i]
            memcpy(&self.out_ids[dst * m], &ids[i * m], m * sizeof(int64_t))
            memcpy(&self.out_ev[dst * m], &ids[(n + i) * m], m * sizeof(int64_t))
            memcpy(&self.out_klen[dst * m], &ids[(2 * n + i) * m], m * sizeof(int64_t))
            memcpy(&self.out_bound[dst * m], &bound[i * m], m)
            memcpy(&self.out_rv[dst * f], &rv[i * f], f * sizeof(double))
            memcpy(&self.out_rt[dst * f], &rt[i * f], f)
        free(pat); free(at); free(key); free(se); free(ids); free(bound); free(rv); free(rt)

    cdef int store_created(self, Group g, int64_t key) except -1:
        """Accepted tokens emit; tokens that can still move join their (key, place) list
        (GroupRuntime.store), the others are freed."""
        cdef Py_ssize_t i
        cdef int32_t t
        cdef int place, lid
        for i in range(g.ncreated):
            t = g.created[i]
            if g.place_rg_start[g.tk_place[t] + 1] > g.place_rg_start[g.tk_place[t]]:
                if not self.tie_either:
                    self.completed += 1
                self.accept(g, t, key)
            if self.tie_either and g.place_accepting[g.tk_place[t]]:
                self.completed += 1
        for i in range(g.ncreated):
            t = g.created[i]
            place = g.tk_place[t]
            if g.place_exits[place]:
                lid = <int>(key * g.nplaces + place)
                g.tk_next[t] = -1
                if g.tails[lid] < 0:
                    g.heads[lid] = t
                else:
                    g.tk_next[g.tails[lid]] = t
                g.tails[lid] = t
            else:
                g.release(t)
        if g.watch_mask:
            watch(self, g, key)
        self.created += g.ncreated
        g.ncreated = 0
        return 0

    # ------------------------------------------------------------------ the batch loop

    def run(self, const int32_t[:] types, const double[:] ts, const int64_t[:] pos, const int64_t[:] ids,
            const double[:, :] vals, const int8_t[:, :] tags, const int64_t[:, :] keys, Py_ssize_t row0=0):
        """Fire ``n`` events (columns: type codes, -1 for types no pattern reads; timestamps;
        positions; ids; attribute values and kinds, one row per event; key codes, one row per
        group). Returns the number of matches now buffered."""
        cdef Py_ssize_t i, n = types.shape[0], first, a, na = self.store.nattrs, ngroups = len(self.groups)
        cdef Py_ssize_t gi, ev
        cdef int etype
        cdef Group g
        cdef EventStore st = self.store
        cdef int64_t key, ekey
        cdef bint kept
        for i in range(n):
            self.cur_row = i + row0
            self.row_out = self.out_n
            self.emit_at = pos[i]
            self.emit_ts = ts[i]
            if self.ts_attr >= 0:
                self.emit_tag = tags[i, self.ts_attr]
            if types[i] == TICK:
                self.tick(ts[i], pos[i])
                continue
            if ts[i] < self.last_ts:
                raise OrderError(i + row0, ts[i], self.last_ts)
            self.in_ts = ts[i]
            self.in_pos = pos[i]
            self.in_tag = self.emit_tag
            if self.tie_either:
                if self.grp_rows and ts[i] != self.grp_ts:
                    self.run_group()
                self.grp_ts = ts[i]
                self.grp_rows += 1
            if self.has_negation or self.has_timeouts:
                if self.tie_strict and ts[i] != self.strict_ts:
                    if self.kills:
                        self.end_group()
                    self.strict_ts = ts[i]
                first = self.out_n
                self.close_pending(ts[i], pos[i], False)
            else:
                first = self.out_n
            self.last_ts = ts[i]
            self.events += 1
            etype = types[i]
            if etype >= 0 and self.tie_either:
                self.buffer(etype, ts[i], pos[i], ids[i], vals, tags, keys, i)
            elif etype >= 0:
                # the event enters the store; it stays only if a stored token binds it
                if st.n >= st.cap:
                    st.reserve(2 * st.cap)
                ev = st.n
                st.n += 1
                st.seq[ev] = st.next_seq
                st.next_seq += 1
                st.ts[ev] = ts[i]
                st.pos[ev] = pos[i]
                st.id[ev] = ids[i]
                for a in range(na):
                    st.val[ev * na + a] = vals[i, a]
                    st.tag[ev * na + a] = tags[i, a]
                kept = False
                for gi in range(ngroups):
                    if self.enter(<Group>self.groups[gi], etype, keys[gi, i], ev):
                        kept = True
                if not kept:
                    st.n -= 1
            if self.has_contiguity:
                ekey = 2 * pos[i]
                for gi in range(ngroups):
                    g = <Group>self.groups[gi]
                    if g.strategy == PARTITION_CONTIGUITY and g.partitioned:
                        key = keys[gi, i]
                        if key >= g.nkeys:
                            g.reserve_keys(key + 1)
                        g.floors[key] = ekey
                self.last_key = ekey
            self.settle(first)  # (after the contiguity keys: composite events see their emitter's)
            if not self.tie_either:
                self.since_sweep += 1
                if self.since_sweep >= self.sweep_every:
                    self.sweep(ts[i], pos[i])
        return self.out_n

    # ------------------------------------------------------------------ tie rule either

    cdef int buffer(self, int etype, double ts, int64_t pos, int64_t id, const double[:, :] vals,
                    const int8_t[:, :] tags, const int64_t[:, :] keys, Py_ssize_t i) except -1:
        """An event of the open timestamp group: into the store, and onto the group."""
        cdef EventStore st = self.store
        cdef Py_ssize_t ev, a, na = st.nattrs, gi, ng = len(self.groups)
        if st.n >= st.cap:
            st.reserve(2 * st.cap)
        ev = st.n
        st.n += 1
        st.seq[ev] = st.next_seq
        st.next_seq += 1
        st.ts[ev] = ts
        st.pos[ev] = pos
        st.id[ev] = id
        for a in range(na):
            st.val[ev * na + a] = vals[i, a]
            st.tag[ev * na + a] = tags[i, a]
        if self.grp_n >= self.grp_cap:
            self.grp_cap = max(16, 2 * self.grp_cap)
            self.grp_ev = <int64_t*>grow(self.grp_ev, self.grp_cap, sizeof(int64_t))
            self.grp_type = <int32_t*>grow(self.grp_type, self.grp_cap, sizeof(int32_t))
            self.grp_keys = <int64_t*>grow(self.grp_keys, self.grp_cap * max(ng, 1), sizeof(int64_t))
        self.grp_ev[self.grp_n] = ev
        self.grp_type[self.grp_n] = etype
        for gi in range(ng):
            self.grp_keys[self.grp_n * ng + gi] = keys[gi, i]
        self.grp_n += 1
        return 0

    cdef int run_group(self) except -1:
        """Close the timestamp group: equal timestamps match in any order, so per shared net
        and key, extend the marking by each event, then the new tokens by the group's other
        events until nothing new appears (Engine._run_group / _fixpoint)."""
        cdef Py_ssize_t gi, j, ng = len(self.groups), first
        cdef int64_t key
        cdef Group g
        cdef list order
        cdef Py_ssize_t rows = self.grp_rows
        for gi in range(ng):
            g = <Group>self.groups[gi]
            first = self.out_n
            order = []
            for j in range(self.grp_n):
                if g.type_start[self.grp_type[j] + 1] == g.type_start[self.grp_type[j]]:
                    continue
                key = self.grp_keys[j * ng + gi]
                if key not in order:
                    order.append(key)
            for key in order:
                if key >= g.nkeys:
                    g.reserve_keys(key + 1)
                self.fixpoint(g, gi, key)
            if self.out_n - first > 1 and self.npatterns > 1:
                self.order_emitted(first, 0)
        self.grp_n = 0
        self.grp_rows = 0
        self.since_sweep += rows
        if self.since_sweep >= self.sweep_every and rows:
            self.sweep(self.grp_ts, self.store.pos[self.store.n - 1] if self.store.n else 0)
        return 0

    cdef int fixpoint(self, Group g, Py_ssize_t gi, int64_t key) except -1:
        cdef Py_ssize_t j, idx, k, e, ng = len(self.groups), nmine = 0, nen = 0, ntr = 0, a
        cdef int32_t t, nt
        cdef int tr, place, ns = g.nslots, contains, hit
        cdef int64_t ev
        cdef set seen = set()
        cdef object bkey
        # per group event of this key with enabled transitions: the event, its transitions
        cdef int64_t* en_ev = <int64_t*>malloc(self.grp_n * sizeof(int64_t))
        cdef Py_ssize_t* en_start = <Py_ssize_t*>malloc((self.grp_n + 1) * sizeof(Py_ssize_t))
        cdef int32_t* en_trs = NULL
        try:
            g.ncreated = 0
            for j in range(self.grp_n):
                if self.grp_keys[j * ng + gi] != key or (
                        g.type_start[self.grp_type[j] + 1] == g.type_start[self.grp_type[j]]):
                    continue
                ev = self.grp_ev[j]
                nmine += 1
                self.step(g, self.grp_type[j], key, ev, self.store.ts[ev], self.store.pos[ev])
            if nmine > 1:
                en_trs = <int32_t*>malloc((g.ent_trs.shape[0] * self.grp_n + 1) * sizeof(int32_t))
                en_start[0] = 0
                for j in range(self.grp_n):  # per event: its transitions whose input-arc guards hold
                    if self.grp_keys[j * ng + gi] != key:
                        continue
                    a = ntr
                    for e in range(g.type_start[self.grp_type[j]], g.type_start[self.grp_type[j] + 1]):
                        for k in range(g.ent_tr_start[e], g.ent_tr_start[e + 1]):
                            tr = g.ent_trs[k]
                            if g.tr_arc_start[tr + 1] == g.tr_arc_start[tr] or self.arc_ok(g, tr, self.grp_ev[j]):
                                en_trs[ntr] = tr
                                ntr += 1
                    if ntr > a:
                        en_ev[nen] = self.grp_ev[j]
                        nen += 1
                        en_start[nen] = ntr
            idx = 0
            while nen and idx < g.ncreated:
                t = g.created[idx]
                idx += 1
                place = g.tk_place[t]
                for j in range(nen):
                    hit = 0
                    for k in range(en_start[j], en_start[j + 1]):
                        if g.tr_src[en_trs[k]] == place:
                            hit = 1
                            break
                    if not hit:
                        continue
                    ev = en_ev[j]
                    contains = 0
                    for k in range(ns):
                        if g.tk_slots[<Py_ssize_t>t * ns + k] == ev:
                            contains = 1
                    if contains:
                        continue
                    for k in range(en_start[j], en_start[j + 1]):
                        tr = en_trs[k]
                        if g.tr_src[tr] != place:
                            continue
                        nt = self.fire(g, tr, t, ev, self.store.ts[ev], self.store.pos[ev], NO_KEY)
                        if nt < 0:
                            continue
                        bkey = (g.tk_place[nt], g.tk_users[nt],
                                tuple([g.tk_slots[<Py_ssize_t>nt * ns + a] for a in range(ns)]))
                        if bkey in seen:
                            g.release(nt)
                            continue
                        seen.add(bkey)
                        g.add_created(nt)
        finally:
            free(en_ev)
            free(en_start)
            free(en_trs)
        self.store_created(g, key)
        return 0

    cdef int tick(self, double ts, int64_t pos) except -1:
        """Stream time reached (ts, pos) with no event of ours there (a row of type TICK: a
        key partition of a distributed run is told of other keys' events): close the windows
        it ends, as Engine.advance does -- the open timestamp group under either, the strict
        group and the pending end negations otherwise."""
        cdef Py_ssize_t first
        if self.tie_either:
            if self.grp_rows and ts != self.grp_ts:
                self.run_group()
            self.grp_ts = ts
            return 0
        if not (self.has_negation or self.has_timeouts):
            return 0
        if self.tie_strict and ts != self.strict_ts:
            if self.kills:
                self.end_group()
            self.strict_ts = ts
        first = self.out_n
        self.close_pending(ts, pos, False)
        self.settle(first)
        return 0

    def finish(self):
        """End of stream: close the open timestamp group (either; strict: run its
        cancellations), then emit every match still waiting for its window; composite events
        emitted here take the last input event's time and position (Engine.flush), and may
        leave matches waiting in turn."""
        cdef Py_ssize_t first
        cdef Group g
        self.emit_at = -1
        self.emit_ts = self.in_ts
        self.emit_tag = self.in_tag
        self.row_out = self.out_n
        if self.tie_either and self.grp_rows:
            self.run_group()
        if self.kills:
            self.end_group()
        while any((<Group>g).heap_n or (<Group>g).deadlines for g in self.groups):
            first = self.out_n
            self.close_pending(0.0, 0, True)
            self.settle(first)

    # ------------------------------------------------------------------ housekeeping

    def sweep(self, double ts, int64_t pos):
        """Drop tokens that can never fire again; compact the event store when mostly dead."""
        cdef Group g
        cdef Py_ssize_t lid, k, gi
        cdef int32_t t, prev, nxt
        cdef int64_t floor
        self.since_sweep = 0
        for gi in range(len(self.groups)):
            g = <Group>self.groups[gi]
            for lid in range(g.nkeys * g.nplaces):
                t = g.heads[lid]
                prev = -1
                if g.strategy == PARTITION_CONTIGUITY and g.partitioned:
                    floor = g.floors[lid // g.nplaces]
                elif g.strategy >= STRICT_CONTIGUITY:
                    floor = self.last_key
                else:
                    floor = NO_KEY
                while t >= 0:
                    nxt = g.tk_next[t]
                    if g.expired(t, ts, pos) or g.tk_last_key[t] < floor:
                        self.unlink(g, <int>lid, prev, t)
                    else:
                        prev = t
                    t = nxt
            if g.nnegs:
                self.sweep_negatives(g, ts, pos)
            if g.watch_mask:
                prune(self, g, ts, pos)
            if g.has_kleene and g.nd_n > 2 * g.nd_live + self.compact_slack:  # (the element arena)
                gc_nodes(self, g)
        for d in range(len(self.consumed)):  # (Engine.sweep)
            horizon = self.horizons[d]
            used = self.consumed[d]
            if used and horizon == horizon:
                cut = ts - horizon
                for seq in [q for q, when in used.items() if when < cut]:
                    del used[seq]
        if self.store.n > 4 * self.live_slots() + self.compact_slack and not self.kills:
            self.compact()

    cdef int sweep_negatives(self, Group g, double ts, int64_t pos) except -1:
        """Drop buffered negative events no window can reach, and dead waiting matches from
        their keys' lists (GroupRuntime.sweep)."""
        cdef Py_ssize_t lid, key
        cdef int32_t b, prev, nxt, d
        cdef EventStore st = self.store
        cdef bint keep
        if not isnan(g.window):
            for lid in range(g.nkeys * g.nnegs):
                b = g.nb_heads[lid]
                prev = -1
                while b >= 0:
                    nxt = g.nb_next[b]
                    if g.count_window:
                        keep = <double>st.pos[g.nb_ev[b]] > <double>pos - g.window
                    else:
                        keep = st.ts[g.nb_ev[b]] >= ts - g.window
                    if keep:
                        prev = b
                    else:
                        if prev < 0:
                            g.nb_heads[lid] = nxt
                        else:
                            g.nb_next[prev] = nxt
                        if g.nb_tails[lid] == b:
                            g.nb_tails[lid] = prev
                        g.nb_next[b] = g.nb_free
                        g.nb_free = b
                    b = nxt
        for key in range(g.nkeys):
            d = g.pd_heads[key]
            prev = -1
            while d >= 0:
                nxt = g.pd_next[d]
                if g.pd_flags[d] & 1:
                    prev = d
                else:
                    if prev < 0:
                        g.pd_heads[key] = nxt
                    else:
                        g.pd_next[prev] = nxt
                    g.pd_flags[d] &= ~2
                    if g.pd_flags[d] & 4:
                        g.drop_pending(d)
                d = nxt
        return 0

    cdef Py_ssize_t live_slots(self):
        cdef Py_ssize_t total = 0
        cdef Group g
        for g in self.groups:
            total += g.live_tokens * g.nslots + g.nd_n
        return total

    cdef int compact(self) except -1:
        """Keep only the events stored tokens bind; renumber the tokens' slots."""
        cdef EventStore st = self.store
        cdef Py_ssize_t n = st.n, i, j, k, na = st.nattrs, lid
        cdef int64_t* remap = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        cdef Group g
        cdef int32_t t
        cdef int64_t ev
        for i in range(n):
            remap[i] = -1
        for g in self.groups:
            for lid in range(g.nkeys * g.nplaces):
                t = g.heads[lid]
                while t >= 0:
                    for k in range(g.nslots):
                        ev = g.tk_slots[<Py_ssize_t>t * g.nslots + k]
                        if ev >= 0 and not g.slot_kleene[k]:
                            remap[ev] = 0
                    t = g.tk_next[t]
            for k in range(g.nd_n):  # (Kleene lists' elements)
                remap[g.nd_ev[k]] = 0
                remap[g.nd_first[k]] = 0
            for lid in range(g.nkeys * g.nnegs):
                t = g.nb_heads[lid]
                while t >= 0:
                    remap[g.nb_ev[t]] = 0
                    t = g.nb_next[t]
            for k in range(g.heap_n):
                t = g.heap[k]
                if g.pd_flags[t] & 1:
                    for lid in range(g.nslots):
                        ev = g.pd_slots[<Py_ssize_t>t * g.nslots + lid]
                        if ev >= 0:
                            remap[ev] = 0
            t = g.zombies
            while t >= 0:
                for k in range(g.nslots):
                    ev = g.tk_slots[<Py_ssize_t>t * g.nslots + k]
                    if ev >= 0 and not g.slot_kleene[k]:
                        remap[ev] = 0
                t = g.tk_next[t]
        j = 0
        for i in range(n):
            if remap[i] >= 0:
                remap[i] = j
                st.ts[j] = st.ts[i]
                st.pos[j] = st.pos[i]
                st.id[j] = st.id[i]
                st.seq[j] = st.seq[i]
                for k in range(na):
                    st.val[j * na + k] = st.val[i * na + k]
                    st.tag[j * na + k] = st.tag[i * na + k]
                j += 1
        st.n = j
        for g in self.groups:
            for lid in range(g.nkeys * g.nplaces):
                t = g.heads[lid]
                while t >= 0:
                    for k in range(g.nslots):
                        ev = g.tk_slots[<Py_ssize_t>t * g.nslots + k]
                        if ev >= 0 and not g.slot_kleene[k]:
                            g.tk_slots[<Py_ssize_t>t * g.nslots + k] = remap[ev]
                    t = g.tk_next[t]
            for k in range(g.nd_n):
                g.nd_ev[k] = remap[g.nd_ev[k]]
                g.nd_first[k] = remap[g.nd_first[k]]
            for lid in range(g.nkeys * g.nnegs):
                t = g.nb_heads[lid]
                while t >= 0:
                    g.nb_ev[t] = remap[g.nb_ev[t]]
                    t = g.nb_next[t]
            for k in range(g.heap_n):
                t = g.heap[k]
                if g.pd_flags[t] & 1:
                    for lid in range(g.nslots):
                        ev = g.pd_slots[<Py_ssize_t>t * g.nslots + lid]
                        if ev >= 0:
                            g.pd_slots[<Py_ssize_t>t * g.nslots + lid] = remap[ev]
            t = g.zombies
            while t >= 0:
                for k in range(g.nslots):
                    ev = g.tk_slots[<Py_ssize_t>t * g.nslots + k]
                    if ev >= 0 and not g.slot_kleene[k]:
                        g.tk_slots[<Py_ssize_t>t * g.nslots + k] = remap[ev]
                t = g.tk_next[t]
        free(remap)
        return 0

    def live_partial_matches(self, double ts, int64_t pos):
        """Tokens that can still be extended at the event (ts, pos): alive for some pattern,
        window open, contiguity unbroken (Engine.live_partial_matches)."""
        cdef Group g
        cdef Py_ssize_t lid, total = 0
        cdef int32_t t
        cdef int64_t floor
        for g in self.groups:
            for lid in range(g.nkeys * g.nplaces):
                if g.strategy == PARTITION_CONTIGUITY and g.partitioned:
                    floor = g.floors[lid // g.nplaces]
                elif g.strategy >= STRICT_CONTIGUITY:
                    floor = self.last_key
                else:
                    floor = NO_KEY
                t = g.heads[lid]
                while t >= 0:
                    if g.tk_users[t] and not g.expired(t, ts, pos) and g.tk_last_key[t] >= floor:
                        total += 1
                    t = g.tk_next[t]
        return total

    def clear(self):
        """End of stream: every partial match is gone."""
        cdef Group g
        cdef Py_ssize_t lid
        cdef int32_t t, nxt
        for g in self.groups:
            for lid in range(g.nkeys * g.nplaces):
                t = g.heads[lid]
                while t >= 0:
                    nxt = g.tk_next[t]
                    g.release(t)
                    t = nxt
                g.heads[lid] = -1
                g.tails[lid] = -1
            for lid in range(g.nkeys * g.nnegs):
                t = g.nb_heads[lid]
                while t >= 0:
                    nxt = g.nb_next[t]
                    g.nb_next[t] = g.nb_free
                    g.nb_free = t
                    t = nxt
                g.nb_heads[lid] = -1
                g.nb_tails[lid] = -1
            for lid in range(g.pd_cap):  # every entry back on the free list
                g.pd_next[lid] = -1 if lid == g.pd_cap - 1 else <int32_t>(lid + 1)
            g.pd_free = 0 if g.pd_cap else -1
            for lid in range(g.nkeys):
                g.pd_heads[lid] = -1
            g.heap_n = 0
            forget_watch(g)
            g.nd_n = 0
            g.nd_live = 0
        self.kills = []
        self.store.n = 0
        self.consumed = [{} for _ in self.consumed]

    def take_matches(self):
        """The buffered matches as numpy arrays, and clears them: pattern, start, end, ids and
        bound (per slot), the emitting positions (-1: the end of the stream), RETURN values and
        their kinds (per field). A bound id below 0 is a composite event: -1 - the number of
        the match it is, counting every match taken in this run."""
        cdef Py_ssize_t n = self.out_n, m = self.maxslots, f = self.maxfields
        at = np.empty(n, dtype=np.int64)
        pattern = np.empty(n, dtype=np.int32)
        start = np.empty(n, dtype=np.float64)
        end = np.empty(n, dtype=np.float64)
        ids = np.empty((n, m), dtype=np.int64)
        bound = np.empty((n, m), dtype=np.uint8)
        values = np.empty((n, f), dtype=np.float64)
        kinds = np.empty((n, f), dtype=np.int8)
        deadline = np.empty(n, dtype=np.float64)
        klen = np.empty((n, m), dtype=np.int64)
        klist = np.empty(self.kl_n, dtype=np.int64)
        cdef double[:] dv = deadline
        cdef int64_t[:, :] lv = klen
        cdef int64_t[:] flat = klist
        cdef int64_t[:] av = at
        cdef int32_t[:] pv = pattern
        cdef double[:] sv = start, ev = end
        cdef int64_t[:, :] iv = ids
        cdef uint8_t[:, :] bv = bound
        cdef double[:, :] vv = values
        cdef int8_t[:, :] kv = kinds
        if n:
            memcpy(&pv[0], self.out_pattern, n * sizeof(int32_t))
            memcpy(&sv[0], self.out_start, n * sizeof(double))
            memcpy(&ev[0], self.out_end, n * sizeof(double))
            memcpy(&iv[0, 0], self.out_ids, n * m * sizeof(int64_t))
            memcpy(&bv[0, 0], self.out_bound, n * m)
            memcpy(&av[0], self.out_at, n * sizeof(int64_t))
            memcpy(&vv[0, 0], self.out_rv, n * f * sizeof(double))
            memcpy(&kv[0, 0], self.out_rt, n * f)
            memcpy(&dv[0], self.out_deadline, n * sizeof(double))
            memcpy(&lv[0, 0], self.out_klen, n * m * sizeof(int64_t))
        if self.kl_n:
            memcpy(&flat[0], self.kl_ids, self.kl_n * sizeof(int64_t))
        self.kl_n = 0
        self.out_n = 0
        self.row_out = 0
        self.taken += n
        return pattern, start, end, ids, bound, at, values, kinds, deadline, klen, klist

    def dropped_by_pattern(self):
        """Per net pattern index: the partial matches its LIMIT dropped."""
        out = [0] * self.npatterns
        cdef Group g
        for g in self.groups:
            for k, pi in enumerate(g.patterns):
                out[pi] += g.dropped[k]
        return out

    def set_last_input(self, double ts, int64_t pos, int tag):
        """The stream's last input event where this kernel did not fire it (a key partition):
        what composite events emitted at the end take."""
        self.in_ts = ts
        self.in_pos = pos
        self.in_tag = tag

    def drop_row(self):
        """An error stopped the row being fired: forget the matches it emitted (the engine
        returns none of them)."""
        self.out_n = self.row_out

    @property
    def stored_events(self):
        return self.store.n

    def oldest_pos(self):
        """The position of the oldest event in the store (the store keeps arrival order),
        or -1 when it is empty: no later match binds an event before it."""
        return self.store.pos[0] if self.store.n else -1

    def set_ranks(self, ranks):
        self.store.set_ranks(np.ascontiguousarray(ranks, dtype=np.float64))


TICK_CODE = TICK  # for the Python side


class OrderError(Exception):
    """An event's timestamp is before the previous one's: (row, ts, previous ts)."""


include "_eventtime.pxi"
include "_kleene.pxi"
