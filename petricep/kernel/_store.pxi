# The event store and the per-net token arenas (included by _kernel.pyx).
#
# A run keeps its state in C arrays, not Python objects, so that the firing loop takes no
# reference counts and allocates nothing per event: the events stored partial matches bind
# (EventStore, one column per field), and per shared net (Group) its lowered arrays, its token
# arena (struct of arrays, a free list through tk_next, per (key, place) lists in insertion
# order, which is the order the engine fires them in), the negative events it buffers and the
# matches waiting for an end negation's window (a heap). The store grows with the input, so a
# sweep compacts it (compact): only the events something still binds stay, renumbered.


@cython.final  # (its methods called directly, not through a vtable: the compiler inlines them)
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
    cdef Budget* budget  # the kernel's (charge), NULL until it adopts the store

    def __cinit__(self, Py_ssize_t nattrs):
        self.nattrs = nattrs
        self.n = 0
        self.cap = 0
        self.ts = NULL; self.pos = NULL; self.id = NULL; self.val = NULL; self.tag = NULL; self.seq = NULL
        self.next_seq = 0
        self.ranks = NULL
        self.nranks = 0
        self.budget = NULL
        self.reserve(1024)

    def __dealloc__(self):
        free(self.ts); free(self.pos); free(self.id); free(self.val); free(self.tag); free(self.ranks); free(self.seq)

    cdef int reserve(self, Py_ssize_t cap) except -1 nogil:
        if cap <= self.cap:
            return 0
        charge(self.budget, MEM_EVENTS, self.cap, cap, self.row_bytes())
        self.ts = <double*>grow(self.ts, cap, sizeof(double))
        self.pos = <int64_t*>grow(self.pos, cap, sizeof(int64_t))
        self.id = <int64_t*>grow(self.id, cap, sizeof(int64_t))
        self.seq = <int64_t*>grow(self.seq, cap, sizeof(int64_t))
        self.val = <double*>grow(self.val, cap * self.nattrs, sizeof(double))
        self.tag = <int8_t*>grow(self.tag, cap * self.nattrs, sizeof(int8_t))
        self.cap = cap
        return 0

    cdef inline Py_ssize_t row_bytes(self) noexcept nogil:
        """Bytes an event takes in the store (reserve)."""
        return 4 * sizeof(int64_t) + self.nattrs * (sizeof(double) + sizeof(int8_t))

    def set_ranks(self, double[:] ranks):
        cdef Py_ssize_t i, n = ranks.shape[0]
        self.ranks = <double*>grow(self.ranks, n, sizeof(double))
        for i in range(n):
            self.ranks[i] = ranks[i]
        self.nranks = n


class _Views:
    """A lowered group's fields, its 1-d arrays as Cython memoryviews."""


cdef dict _views = {}  # id(lowered group) -> (the group, its views): the last groups bound


cdef object typed_view(object arr):
    """``arr`` as a Cython memoryview of its dtype: binding one to a typed field only copies
    the slice, where binding a NumPy array goes through the buffer protocol and parses its
    format (~0.4 us a field, ~90 fields a group: most of a small batch's kernel set-up)."""
    cdef const int32_t[::1] i32
    cdef const int64_t[::1] i64
    cdef const uint8_t[::1] u8
    cdef const int8_t[::1] i8
    cdef const double[::1] f64
    if not isinstance(arr, np.ndarray) or arr.ndim != 1:
        return arr
    if not arr.flags.c_contiguous:  # (the fields are contiguous views: indexing them needs no stride)
        arr = np.ascontiguousarray(arr)
    if arr.dtype == np.int32:
        i32 = arr
        return i32
    if arr.dtype == np.int64:
        i64 = arr
        return i64
    if arr.dtype == np.uint8:
        u8 = arr
        return u8
    if arr.dtype == np.int8:
        i8 = arr
        return i8
    if arr.dtype == np.float64:
        f64 = arr
        return f64
    return arr


cdef object views_of(object lg):
    """``lg``'s fields with its arrays as typed views, made once per lowered group (lowering
    keeps the last nets' arrays; a kernel per batch or per key binds the same ones)."""
    hit = _views.get(id(lg))
    if hit is not None and hit[0] is lg:
        return hit[1]
    views = _Views()
    for name, value in vars(lg).items():
        setattr(views, name, typed_view(value))
    views.plain = plain_net(lg)
    views.direct = views.plain and not any(  # (Group.direct)
        lg.place_exits[p] and lg.place_rg_start[p + 1] > lg.place_rg_start[p] for p in range(lg.nplaces))
    if len(_views) >= 64:
        del _views[next(iter(_views))]
    _views[id(lg)] = (lg, views)
    return views


@cython.final  # (as EventStore: alloc, release, expired, add_created inline in the firing loop)
cdef class Group:
    """One shared net: its lowered arrays and its per-key token lists."""
    # lowered net (read-only views)
    cdef const uint8_t[::1] place_exits, place_accepting, neg_pushed, ent_arcs
    cdef const int64_t[::1] place_growable, role_pending, tr_blocked_by, tr_clears
    cdef const double[::1] role_window
    cdef const int32_t[::1] rg_emit_start, rg_emit, neg_type, neg_prev_start, neg_prev, neg_next_start, neg_next
    cdef const int32_t[::1] neg_cond_start, neg_cond, neg_event_start, neg_event, neg_place_start, neg_place
    cdef const int32_t[::1] type_neg_start, type_neg
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
    cdef const int32_t[::1] place_rg_start, rg_final_start, rg_final, rg_role_start, role_pattern
    cdef const int64_t[::1] rg_mask, role_bit, tr_mask, pw_mask
    cdef const double[::1] rg_window, tr_window, pw_window, consts
    cdef const int32_t[::1] tr_src, tr_dst, tr_slot, tr_order_start, tr_order, tr_guard_start, tr_guard
    cdef const int32_t[::1] tr_arc_start, tr_arc, tr_pw_start, type_start, ent_src, ent_tr_start, ent_trs
    cdef const int32_t[::1] cond_start, code, ret_start, ret_prog
    cdef const int32_t* codep  # the bytecode, read through a pointer in the hot loop
    cdef const int8_t[::1] const_tags
    cdef const int32_t[::1] held_places  # places some transition stores tokens at, ascending (sweep_lists)
    cdef public int nslots, nplaces, start, strategy, count_window, partitioned
    cdef public bint plain  # none of the constructs enter_plain leaves out (_plainnet.pxi)
    cdef public bint direct  # plain, and no place patterns emit from has a transition out (fire_plain)
    cdef Py_ssize_t ndirect  # matches fire_plain accepted without a token, this step
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
    # the run's budgets: bytes (the kernel's Budget, NULL until it adopts the group) and live
    # partial matches (max_live, -1: none): ``room`` is how many tokens may be allocated before
    # the live ones are counted again (check_room), ``over`` that the room ran out in this
    # event's step and its end counts them (end_check)
    cdef Budget* budget
    cdef public int64_t max_live, room
    cdef bint over
    cdef int64_t cur_key  # the key being stepped (its new tokens are in ``created``)
    cdef int64_t* slotbuf
    cdef const int64_t* unbound  # nslots of -1, never written: the empty binding, read without a reset per use
    # event time (_eventtime.pxi): per token the references to it from deadlines and LIMIT
    # quotas (a pinned token leaves its list for the zombie list instead of the free list),
    # the patterns (bits) a firing extended it for, those whose quota counts it
    cdef int32_t* tk_pins
    cdef int64_t* tk_ext
    cdef int64_t* tk_counted
    # which of the per-token arrays only some nets read hold a value per token (else one,
    # never read: a net without ON TIMEOUT or LIMIT, or without negations, does not pay for
    # them, bench/RESULTS.md "A memory budget that holds"): tk_pins, tk_ext, tk_counted
    # (``timed``: ON TIMEOUT or LIMIT), tk_blocked (``blocking``: a negation)
    cdef bint timed, blocking
    cdef int32_t zombies
    cdef const int64_t[::1] place_exit_bits, place_emit_bits, bit_limit
    cdef const double[::1] bit_window
    cdef const int8_t[::1] bit_policy
    cdef public int64_t timeout_mask, limit_mask, watch_mask
    cdef int64_t stop_mask  # the stop events' negations (UNTIL): blocked tokens still time out
    cdef public int nbits
    cdef public tuple patterns  # net pattern index of each user bit
    cdef public int index  # the shared net's index (its partition-key dictionary)
    cdef public list deadlines  # heap of (deadline, n, key, token, bit index)
    cdef public int64_t dl_counter
    cdef public dict quotas  # (key, bit index) -> [heap of (first ts, first pos, seqs, n, token), live, n]
    cdef public list dropped  # per bit index: partial matches a LIMIT dropped
    # Kleene closure (_kleene.pxi): per transition start / take, deferred iteration conditions;
    # per slot whether it holds a list node, its aggregates; the element arena
    cdef const int8_t[::1] tr_kleene, agg_func
    cdef const int32_t[::1] tr_defer_start, tr_defer, slot_agg_start, agg_attr, cond_iter_slot
    cdef const uint8_t[::1] slot_kleene
    cdef const uint8_t[::1] slot_ordered  # a step of a group whose elements are placed by binding order
    cdef bint has_ordered
    cdef const int32_t[::1] pl_repeat_start, pl_repeat  # GREEDY / RELUCTANT rules per place (lowering)
    cdef const uint8_t[::1] pl_repeat_joined  # per rule entry: joined with the next (a group's rule over several steps)
    cdef bint has_repeat
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
    # per-step gaps (issue 42): per place the gaps ahead of its tokens, (slot, upper bound)
    # pairs, tested against the bound events' times in the kernel's store (gap_passed);
    # ``expiry``: how a token expires (EXPIRE_*, fixed when the group is bound: a net without
    # gaps tests its window alone, as before; a gapped net is never plain_net)
    cdef const int32_t[::1] place_gap_start, gap_slot
    cdef const double[::1] gap_hi
    # per place and pattern (bit) the gaps ahead, for ON TIMEOUT deadlines (Place.gap_ends)
    cdef const int32_t[::1] place_tgap_start, tgap_bit, tgap_slot
    cdef const double[::1] tgap_hi
    cdef public bint gapped
    cdef int expiry
    cdef EventStore store  # the kernel's (set when it makes its groups)

    def __cinit__(self, lowered_group):
        """Bind the lowered arrays (petricep.kernel.lowering, as typed views: views_of) and
        make the empty arenas, one helper per part of the net (the fields above are grouped
        the same way)."""
        lg = views_of(lowered_group)
        self.bind_net(lg)
        self.bind_negation(lg)
        self.init_arenas()
        self.bind_eventtime(lg)
        self.bind_kleene(lg)
        self.reserve_tokens(1024)
        self.reserve_keys(1)

    cdef int bind_net(self, lg) except -1:
        """The net proper: places, transitions, guards' bytecode, windows, strategy."""
        self.place_exits = lg.place_exits
        self.place_accepting = lg.place_accepting
        self.place_growable = lg.place_growable
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
        self.ent_arcs = lg.ent_arcs
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
        self.held_places = lg.held_places
        self.plain = lg.plain
        self.direct = lg.direct
        self.place_gap_start = lg.place_gap_start
        self.gap_slot = lg.gap_slot
        self.gap_hi = lg.gap_hi
        self.place_tgap_start = lg.place_tgap_start
        self.tgap_bit = lg.tgap_bit
        self.tgap_slot = lg.tgap_slot
        self.tgap_hi = lg.tgap_hi
        self.gapped = lg.gap_slot.shape[0] > 0
        self.expiry = EXPIRE_GAPS if self.gapped else EXPIRE_COUNT if self.count_window else EXPIRE_TIME
        self.store = None
        return 0

    cdef int bind_negation(self, lg) except -1:
        """Negations: their arrays; empty buffers of negative events and pending matches."""
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
        self.blocking = self.nnegs > 0
        self.nb_ev = NULL; self.nb_next = NULL; self.nb_cap = 0; self.nb_free = -1
        self.nb_heads = NULL; self.nb_tails = NULL
        self.pd_slots = NULL; self.pd_first_ts = NULL; self.pd_last_ts = NULL; self.pd_first_pos = NULL
        self.pd_last_pos = NULL; self.pd_thr = NULL; self.pd_seq = NULL; self.pd_role = NULL; self.pd_key = NULL
        self.pd_flags = NULL; self.pd_next = NULL; self.pd_cap = 0; self.pd_free = -1
        self.pd_heads = NULL; self.heap = NULL; self.heap_n = 0; self.pd_counter = 0
        self.tk_blocked = NULL
        return 0

    cdef int init_arenas(self) except -1:
        """The empty token arena, per-key lists and scratch (grown on demand by reserve_*)."""
        cdef int64_t* empty
        cdef Py_ssize_t i
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
        self.budget = NULL
        self.max_live = -1
        self.room = INT64_MAX
        self.over = False
        self.cur_key = 0
        self.slotbuf = <int64_t*>grow(NULL, self.nslots, sizeof(int64_t))
        empty = <int64_t*>grow(NULL, self.nslots, sizeof(int64_t))
        for i in range(self.nslots):
            empty[i] = -1
        self.unbound = empty
        self.ndirect = 0
        return 0

    cdef int bind_eventtime(self, lg) except -1:
        """ON TIMEOUT and LIMIT (_eventtime.pxi): per-bit exits, limits, policies."""
        self.tk_pins = NULL; self.tk_ext = NULL; self.tk_counted = NULL
        self.zombies = -1
        self.place_exit_bits = lg.place_exit_bits
        self.place_emit_bits = lg.place_emit_bits
        self.bit_limit = lg.bit_limit
        self.bit_window = lg.bit_window
        self.bit_policy = lg.bit_policy
        self.timeout_mask = lg.timeout_mask
        self.stop_mask = lg.stop_mask
        self.limit_mask = lg.limit_mask
        self.watch_mask = lg.timeout_mask | lg.limit_mask
        self.timed = self.watch_mask != 0
        self.nbits = len(lg.patterns)
        self.patterns = tuple(lg.patterns)
        self.index = lg.index
        self.deadlines = []
        self.dl_counter = 0
        self.quotas = {}
        self.dropped = [0] * self.nbits
        return 0

    cdef int bind_kleene(self, lg) except -1:
        """Kleene closure (_kleene.pxi): per-slot lists, aggregates, the element arena."""
        self.tr_kleene = lg.tr_kleene
        self.tr_defer_start = lg.tr_defer_start
        self.tr_defer = lg.tr_defer
        self.slot_kleene = lg.slot_kleene
        self.slot_ordered = lg.slot_ordered
        self.has_ordered = any(lg.slot_ordered)
        self.pl_repeat_start = lg.pl_repeat_start
        self.pl_repeat = lg.pl_repeat
        self.pl_repeat_joined = lg.pl_repeat_joined
        self.has_repeat = len(lg.pl_repeat) > 0
        self.slot_agg_start = lg.slot_agg_start
        self.agg_func = lg.agg_func
        self.agg_attr = lg.agg_attr
        self.cond_iter_slot = lg.cond_iter_slot
        self.has_kleene = 1 if any(lg.slot_kleene) else 0
        # (0 where no list aggregates: a node then holds no accumulator)
        self.naggs = max([lg.slot_agg_start[i + 1] - lg.slot_agg_start[i] for i in range(lg.nslots)] + [0])
        self.nd_ev = NULL; self.nd_first = NULL; self.nd_count = NULL; self.nd_prev = NULL; self.nd_mark = NULL
        self.nd_acc_v = NULL; self.nd_acc_t = NULL; self.nd_acc_n = NULL
        self.nd_n = 0; self.nd_cap = 0; self.nd_live = 0
        return 0

    def __dealloc__(self):
        free(self.tk_place); free(self.tk_next); free(self.tk_first_ts); free(self.tk_last_ts)
        free(self.tk_first_pos); free(self.tk_last_pos); free(self.tk_last_key); free(self.tk_users)
        free(self.tk_slots); free(self.heads); free(self.tails); free(self.floors); free(self.created)
        free(self.slotbuf); free(<void*>self.unbound); free(self.tk_blocked); free(self.tk_pins); free(self.tk_ext); free(self.tk_counted)
        free(self.nd_ev); free(self.nd_first); free(self.nd_count); free(self.nd_prev); free(self.nd_mark)
        free(self.nd_acc_v); free(self.nd_acc_t); free(self.nd_acc_n)
        free(self.nb_ev); free(self.nb_next); free(self.nb_heads); free(self.nb_tails)
        free(self.pd_slots); free(self.pd_first_ts); free(self.pd_last_ts); free(self.pd_first_pos)
        free(self.pd_last_pos); free(self.pd_thr); free(self.pd_seq); free(self.pd_role); free(self.pd_flags)
        free(self.pd_next); free(self.pd_heads); free(self.heap); free(self.pd_key)

    cdef int reserve_tokens(self, Py_ssize_t cap) except -1 nogil:
        cdef Py_ssize_t old = self.tk_cap, i
        if cap <= old:
            return 0
        charge(self.budget, MEM_TOKENS, old, cap, self.token_bytes())
        self.tk_place = <int32_t*>grow(self.tk_place, cap, sizeof(int32_t))
        self.tk_next = <int32_t*>grow(self.tk_next, cap, sizeof(int32_t))
        self.tk_first_ts = <double*>grow(self.tk_first_ts, cap, sizeof(double))
        self.tk_last_ts = <double*>grow(self.tk_last_ts, cap, sizeof(double))
        self.tk_first_pos = <int64_t*>grow(self.tk_first_pos, cap, sizeof(int64_t))
        self.tk_last_pos = <int64_t*>grow(self.tk_last_pos, cap, sizeof(int64_t))
        self.tk_last_key = <int64_t*>grow(self.tk_last_key, cap, sizeof(int64_t))
        self.tk_users = <int64_t*>grow(self.tk_users, cap, sizeof(int64_t))
        self.tk_slots = <int64_t*>grow(self.tk_slots, cap * self.nslots, sizeof(int64_t))
        if self.blocking:
            self.tk_blocked = <int64_t*>grow(self.tk_blocked, cap, sizeof(int64_t))
        elif self.tk_blocked == NULL:
            self.tk_blocked = <int64_t*>grow(NULL, 1, sizeof(int64_t))
        if self.timed:
            self.tk_pins = <int32_t*>grow(self.tk_pins, cap, sizeof(int32_t))
            self.tk_ext = <int64_t*>grow(self.tk_ext, cap, sizeof(int64_t))
            self.tk_counted = <int64_t*>grow(self.tk_counted, cap, sizeof(int64_t))
            for i in range(old, cap):
                self.tk_pins[i] = 0
        elif self.tk_pins == NULL:
            self.tk_pins = <int32_t*>grow(NULL, 1, sizeof(int32_t))
            self.tk_ext = <int64_t*>grow(NULL, 1, sizeof(int64_t))
            self.tk_counted = <int64_t*>grow(NULL, 1, sizeof(int64_t))
        # the new tokens join the free list (lowest index first)
        for i in range(cap - 1, old - 1, -1):
            self.tk_next[i] = self.free_head
            self.free_head = <int32_t>i
        self.tk_cap = cap
        return 0

    cdef int reserve_keys(self, Py_ssize_t nkeys) except -1 nogil:
        cdef Py_ssize_t old = self.nkeys, i, cap
        if nkeys <= old:
            return 0
        cap = max(nkeys, 2 * old)
        charge(self.budget, MEM_KEYS, old, cap, self.key_bytes())
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

    cdef inline Py_ssize_t token_bytes(self) noexcept nogil:
        """Bytes a token takes in the arena (reserve_tokens)."""
        cdef Py_ssize_t n = 2 * sizeof(int32_t) + (6 + self.nslots) * sizeof(int64_t)
        if self.timed:
            n += sizeof(int32_t) + 2 * sizeof(int64_t)
        if self.blocking:
            n += sizeof(int64_t)
        return n

    cdef inline Py_ssize_t key_bytes(self) noexcept nogil:
        """Bytes a key's lists take (reserve_keys)."""
        return (2 * self.nplaces + 1 + 2 * max(self.nnegs, 1)) * sizeof(int32_t) + sizeof(int64_t)

    cdef inline int32_t alloc(self) except -1 nogil:
        """A free token (the arena grows where none is); ``room`` counts it (its callers,
        which know the kernel, call check_room when it runs out)."""
        cdef int32_t t
        if self.free_head < 0:
            self.reserve_tokens(2 * self.tk_cap)
        t = self.free_head
        self.free_head = self.tk_next[t]
        self.live_tokens += 1
        self.room -= 1
        return t

    cdef inline void release(self, int32_t t) noexcept nogil:
        self.tk_next[t] = self.free_head
        self.free_head = t
        self.live_tokens -= 1

    cdef inline int add_created(self, int32_t t) except -1 nogil:
        if self.ncreated >= self.created_cap:
            charge(self.budget, MEM_SCRATCH, self.created_cap, max(64, 2 * self.created_cap), sizeof(int32_t))
            self.created_cap = max(64, 2 * self.created_cap)
            self.created = <int32_t*>grow(self.created, self.created_cap, sizeof(int32_t))
        self.created[self.ncreated] = t
        self.ncreated += 1
        return 0

    cdef int buffer_negative(self, int64_t key, int j, int64_t ev) except -1 nogil:
        """Append a negative event to the (key, negation) buffer."""
        cdef Py_ssize_t i, old = self.nb_cap
        cdef int32_t b
        cdef int lid = <int>(key * self.nnegs + j)
        if self.nb_free < 0:
            charge(self.budget, MEM_WAITING, old, max(64, 2 * old), sizeof(int64_t) + sizeof(int32_t))
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

    cdef int32_t new_pending(self) except -1 nogil:
        cdef Py_ssize_t i, old = self.pd_cap
        cdef int32_t d
        if self.pd_free < 0:
            charge(self.budget, MEM_WAITING, old, max(64, 2 * old), self.pending_bytes())
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

    cdef inline Py_ssize_t pending_bytes(self) noexcept nogil:
        """Bytes a match waiting for an end negation's window takes (new_pending)."""
        return (self.nslots + 7) * sizeof(int64_t) + 3 * sizeof(int32_t) + sizeof(uint8_t)

    cdef inline void drop_pending(self, int32_t d) noexcept nogil:
        self.pd_next[d] = self.pd_free
        self.pd_free = d

    cdef inline bint pd_less(self, int32_t a, int32_t b) noexcept nogil:
        return self.pd_thr[a] < self.pd_thr[b] or (self.pd_thr[a] == self.pd_thr[b] and self.pd_seq[a] < self.pd_seq[b])

    cdef void heap_push(self, int32_t d) noexcept nogil:
        cdef Py_ssize_t i = self.heap_n, parent
        self.heap_n += 1
        while i > 0:
            parent = (i - 1) // 2
            if not self.pd_less(d, self.heap[parent]):
                break
            self.heap[i] = self.heap[parent]
            i = parent
        self.heap[i] = d

    cdef int32_t heap_pop(self) noexcept nogil:
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

    cdef inline bint expired(self, int32_t t, double ts, int64_t pos) noexcept nogil:
        """The token's window has passed the event (ts, pos), or a per-step gap ahead of it
        has (GroupRuntime.expired): it can never fire again. A time window, or none (NaN,
        which no difference exceeds), in one comparison; count windows and gaps apart."""
        if self.expiry == EXPIRE_TIME:
            return ts - self.tk_first_ts[t] > self.window
        return self.expired_else(t, ts, pos)

    cdef bint expired_else(self, int32_t t, double ts, int64_t pos) noexcept nogil:
        """expired under a count window, or in a gapped net."""
        if isnan(self.window):
            pass
        elif self.count_window:
            if pos - self.tk_first_pos[t] >= <int64_t>self.window:
                return True
        elif ts - self.tk_first_ts[t] > self.window:
            return True
        return self.expiry == EXPIRE_GAPS and self.gap_passed(t, ts, pos)

    cdef bint gap_passed(self, int32_t t, double ts, int64_t pos) noexcept nogil:
        """A gap ahead of token ``t`` ended before ``(ts, pos)`` (GroupRuntime.gap_passed: ``ts - a > hi``, ``a``
        the time it follows; EVENTS, slot ``~slot``: ``pos - a > hi``): no later event binds it, it leaves now."""
        cdef int i, sl, p = self.tk_place[t]
        cdef int64_t ev
        for i in range(self.place_gap_start[p], self.place_gap_start[p + 1]):
            sl = self.gap_slot[i]
            ev = gap_base(self, t, sl if sl >= 0 else ~sl)  # (bound: the gap is ahead)
            if ev >= 0 and (ts - self.store.ts[ev] if sl >= 0 else <double>(pos - self.store.pos[ev])) > self.gap_hi[i]:
                return True
        return False


cdef inline int64_t gap_base(Group g, int32_t t, int slot) noexcept nogil:
    """The event a gap ahead of token ``t`` is measured from, in ``slot``: the event bound
    there, or a Kleene list's last element (its slot holds the list's node: a gap on a list's
    element, or on the step after a list, follows the list's last element); -1: unbound."""
    cdef int64_t ev = g.tk_slots[<Py_ssize_t>t * g.nslots + slot]
    if ev >= 0 and g.slot_kleene[slot]:
        return g.nd_ev[ev]
    return ev


cdef int sweep_lists(Kernel k, Group g, double ts, int64_t pos) except -1 nogil:
    """Drop ``g``'s tokens that can never fire again at the event (ts, pos): window passed,
    contiguity broken (Kernel.sweep). Only the lists of places tokens are stored at are
    walked (held_places: W1 stores at 2 of its 4 places), in the order of their list ids."""
    cdef Py_ssize_t key, h, lid, nheld = g.held_places.shape[0]
    cdef int32_t t, prev, nxt
    cdef int64_t floor
    for key in range(g.nkeys):
        if g.strategy == PARTITION_CONTIGUITY and g.partitioned:
            floor = g.floors[key]
        elif g.strategy >= STRICT_CONTIGUITY:
            floor = k.last_key
        else:
            floor = NO_KEY
        for h in range(nheld):
            lid = key * g.nplaces + g.held_places[h]
            t = g.heads[lid]
            prev = -1
            while t >= 0:
                nxt = g.tk_next[t]
                if g.expired(t, ts, pos) or g.tk_last_key[t] < floor:
                    unlink(k, g, <int>lid, prev, t)
                else:
                    prev = t
                t = nxt
    return 0


cdef Py_ssize_t live_slots(Kernel k) noexcept nogil:
    cdef Py_ssize_t total = 0, gi
    for gi in range(k.ngroups):
        total += slots_held(<Group>k.gptr[gi])
    return total


cdef inline Py_ssize_t slots_held(Group g) noexcept nogil:
    return g.live_tokens * g.nslots + g.nd_n


cdef int compact(Kernel k) except -1 nogil:
    """Keep only the events stored tokens bind; renumber the tokens' slots."""
    cdef Py_ssize_t n = k.store.n, i, j, ki, na = k.store.nattrs, gi
    cdef int64_t* remap = <int64_t*>grow(NULL, n + 1, sizeof(int64_t))
    for i in range(n):
        remap[i] = -1
    for gi in range(k.ngroups):
        bound_events(<Group>k.gptr[gi], remap, False)
    j = 0
    for i in range(n):
        if remap[i] >= 0:
            remap[i] = j
            k.store.ts[j] = k.store.ts[i]
            k.store.pos[j] = k.store.pos[i]
            k.store.id[j] = k.store.id[i]
            k.store.seq[j] = k.store.seq[i]
            for ki in range(na):
                k.store.val[j * na + ki] = k.store.val[i * na + ki]
                k.store.tag[j * na + ki] = k.store.tag[i * na + ki]
            j += 1
    k.store.n = j
    for gi in range(k.ngroups):
        bound_events(<Group>k.gptr[gi], remap, True)
    free(remap)
    return 0


cdef void bound_events(Group g, int64_t* remap, bint renumber) noexcept nogil:
    """Every store index ``g`` holds (tokens' slots, Kleene elements, buffered negative events,
    pending matches, zombies): marked in ``remap`` (0), or renumbered by it."""
    cdef Py_ssize_t ki, lid
    cdef int32_t t
    cdef int64_t ev
    for lid in range(g.nkeys * g.nplaces):
        t = g.heads[lid]
        while t >= 0:
            token_events(g, t, remap, renumber)
            t = g.tk_next[t]
    for ki in range(g.nd_n):  # (Kleene lists' elements)
        if renumber:
            g.nd_ev[ki] = remap[g.nd_ev[ki]]
            g.nd_first[ki] = remap[g.nd_first[ki]]
        else:
            remap[g.nd_ev[ki]] = 0
            remap[g.nd_first[ki]] = 0
    for lid in range(g.nkeys * g.nnegs):
        t = g.nb_heads[lid]
        while t >= 0:
            if renumber:
                g.nb_ev[t] = remap[g.nb_ev[t]]
            else:
                remap[g.nb_ev[t]] = 0
            t = g.nb_next[t]
    for ki in range(g.heap_n):
        t = g.heap[ki]
        if g.pd_flags[t] & 1:
            for lid in range(g.nslots):
                ev = g.pd_slots[<Py_ssize_t>t * g.nslots + lid]
                if ev >= 0 and not g.slot_kleene[lid]:  # (a list: a node, its elements above)
                    if renumber:
                        g.pd_slots[<Py_ssize_t>t * g.nslots + lid] = remap[ev]
                    else:
                        remap[ev] = 0
    t = g.zombies
    while t >= 0:
        token_events(g, t, remap, renumber)
        t = g.tk_next[t]


cdef inline void token_events(Group g, int32_t t, int64_t* remap, bint renumber) noexcept nogil:
    cdef Py_ssize_t ki
    cdef int64_t ev
    for ki in range(g.nslots):
        ev = g.tk_slots[<Py_ssize_t>t * g.nslots + ki]
        if ev >= 0 and not g.slot_kleene[ki]:
            if renumber:
                g.tk_slots[<Py_ssize_t>t * g.nslots + ki] = remap[ev]
            else:
                remap[ev] = 0
