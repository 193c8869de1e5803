# The Python-facing Kernel (included by _kernel.pyx).
#
# The one object the Python side (run.py, engine.py) drives: it owns the event store, the
# groups and the match buffers, runs batches of typed event columns (run), advances time (tick
# rows, sweep), and hands back the matches as NumPy arrays (take_matches). Its cdef state is
# read by the module-level functions of the other included files, which take it as ``k``.


cdef class PatternArrays:
    """A lowered net's per-pattern arrays the Kernel reads (RETURN and ON TIMEOUT fields,
    consumption), made once per net: a small batch's run builds a Kernel per pass, and
    making them costs it ~30 us with cold caches. Index ``npatterns + i``: pattern ``i``'s
    timeouts (a composite event of the timeout type)."""
    cdef const uint8_t[:] has_ret
    cdef const int32_t[:] ret_type, attr_start, attr, domain, cons_start, cons

    def __cinit__(self, lowered):
        pats = lowered.patterns
        self.has_ret = np.array([p.has_return for p in pats] + [p.timeout_type is not None for p in pats] or [0],
                                dtype=np.uint8)
        self.ret_type = np.array([p.ret_type for p in pats] + [p.to_type for p in pats] or [-1], dtype=np.int32)
        starts, flat = [0], []
        for attrs in [p.ret_attrs for p in pats] + [p.to_attrs for p in pats]:
            flat.extend(attrs)
            starts.append(len(flat))
        self.attr_start = np.array(starts, dtype=np.int32)
        self.attr = np.array(flat or [-1], dtype=np.int32)
        self.domain = np.array([p.domain for p in pats] or [-1], dtype=np.int32)
        starts, flat = [0], []
        for p in pats:
            flat.extend(p.consume)
            starts.append(len(flat))
        self.cons_start = np.array(starts, dtype=np.int32)
        self.cons = np.array(flat or [-1], dtype=np.int32)


cdef dict _pattern_arrays = {}  # id(lowered) -> (lowered, its PatternArrays): the last nets'


cdef PatternArrays pattern_arrays(lowered):
    """``lowered``'s PatternArrays, kept for the last 16 nets (a Lowered is frozen)."""
    hit = _pattern_arrays.get(id(lowered))
    if hit is not None and hit[0] is lowered:
        return hit[1]
    made = PatternArrays(lowered)
    if len(_pattern_arrays) >= 16:
        del _pattern_arrays[next(iter(_pattern_arrays))]
    _pattern_arrays[id(lowered)] = (lowered, made)
    return made


cdef class Kernel:
    """Runs a lowered net over batches of events (columns); see KernelRun for the Python side."""
    cdef readonly list groups
    # the groups as borrowed pointers (``groups`` holds them): the firing loop runs without
    # the interpreter lock, where a list is not to be read
    cdef void** gptr
    cdef Py_ssize_t ngroups
    cdef public EventStore store
    cdef public int tie_strict, tie_either, npatterns, maxslots, ntypes
    # tie rule either: the open timestamp group (events in the store, their type, ts, pos, keys)
    cdef int64_t* grp_ev
    cdef int32_t* grp_type
    cdef int64_t* grp_keys  # ngroups per event
    # per event: the first shared net that sees it (composite events: the net after the one
    # that made them, ties.run_group; 0: an input event, or one emitted at the end)
    cdef int32_t* grp_from
    cdef int grp_join  # the grp_from of a composite event made now
    cdef Py_ssize_t grp_comp  # composite events that joined the open group
    cdef bint grp_closing  # group_negatives closes count windows inside the group
    cdef int64_t* grp_upos  # the positions of the group's events no net reads (closers too)
    cdef Py_ssize_t grp_un, grp_ucap
    cdef Py_ssize_t grp_n, grp_cap, grp_rows
    cdef double grp_ts
    cdef int64_t grp_clock  # the open group's last clock point (a TICK row), -1: none
    cdef int has_contiguity, has_negation, has_timeouts, has_watch, ordered
    # whether a batch fires without the interpreter lock (fixed per net): not where the loop
    # would take it back at every step (LIMIT quotas and ON TIMEOUT deadlines are heaps and
    # dicts, consumption's events a dict, tie rule strict's cancellations a list)
    cdef public bint lock_free
    cdef double now_ts  # the event being fired (input or composite): LIMIT's "now"
    cdef int64_t now_pos, now_ev
    cdef public list timeouts  # per pattern: partial matches emitted as timeouts
    cdef list kills  # tie rule strict: (group, key, negation, event) cancelled at the group's end
    cdef Py_ssize_t nkills  # len(kills), read without the interpreter lock
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
    # per match (tie rule either): its creator event in the store, -2 the group's clock, -1 the
    # row's; once its composite event is made (composite()), that event's stream position
    cdef int64_t* out_cr
    cdef int64_t emit_cr  # what emit records there
    cdef double* out_start
    cdef double* out_end
    cdef int64_t* out_ids
    cdef uint8_t* out_bound
    cdef int64_t* out_key  # per match: the key it was found under (its composite event's)
    cdef int64_t* out_ev  # per match and slot: the bound event's store index (ordering; until the next sweep)
    cdef double* out_deadline  # per match: a timeout's deadline (NaN: a match)
    cdef int64_t* out_klen  # per match and slot: a Kleene list's length (its id: the offset in kl_ids), else -1
    cdef int64_t* kl_ids
    cdef int64_t* kl_ev  # ... and each element's store index (ordering, consumption; until the next sweep)
    cdef int64_t* kl_ord  # ... and its node (binding order): -2 - node but for a step of a group with optional or Kleene steps
    cdef Py_ssize_t kl_n, kl_cap
    cdef double* out_rv  # per match and RETURN field: the value ...
    cdef int8_t* out_rt  # ... and its kind
    cdef Py_ssize_t out_n, out_cap, row_out
    cdef Py_ssize_t drop_lo, drop_hi, drop_kl  # the matches drop_row dropped (take_dropped), and their lists' elements
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
    cdef public list bigs  # ints beyond 2**53 by code (TAG_BIG values: _bigint.pxi) ...
    cdef public dict big_codes  # ... and each one's code
    cdef object group_of_type  # per type code: groups consuming it (indices)
    cdef int64_t* floor_cache
    cdef Budget budget  # the bytes its arenas hold, and the limit (charge)
    cdef double* vstack
    cdef int8_t* tstack

    def __cinit__(self, lowered, str tie="arrival", Py_ssize_t sweep_every=2048, Py_ssize_t compact_slack=1024):
        self.budget.limit = -1  # (none until set_budget; adopt_budget counts what is held by then)
        self.bigs = list(lowered.bigs)  # (the literals first: their codes are in the bytecode)
        self.big_codes = {v: i for i, v in enumerate(self.bigs)}
        self.groups = [Group(g) for g in lowered.groups]
        self.ngroups = len(self.groups)
        self.gptr = <void**>grow(NULL, max(self.ngroups, 1), sizeof(void*))
        for gi in range(self.ngroups):
            self.gptr[gi] = <void*>self.groups[gi]
        self.store = EventStore(max(len(lowered.attrs), 1))
        for g in self.groups:
            (<Group>g).store = self.store  # (Group.gap_passed reads its events' times)
        self.tie_strict = 1 if tie == "strict" else 0
        self.tie_either = 1 if tie == "either" else 0
        self.grp_ev = NULL; self.grp_type = NULL; self.grp_keys = NULL; self.grp_from = NULL
        self.grp_join = 1
        self.grp_comp = 0
        self.grp_closing = False
        self.grp_upos = NULL
        self.grp_un = 0
        self.grp_ucap = 0
        self.grp_n = 0
        self.grp_cap = 0
        self.grp_rows = 0
        self.grp_clock = -1
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
        self.nkills = 0
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
        self.out_pattern = NULL; self.out_cr = NULL; self.out_start = NULL; self.out_end = NULL
        self.out_ids = NULL; self.out_bound = NULL; self.out_at = NULL
        self.out_key = NULL; self.out_ev = NULL; self.out_rv = NULL; self.out_rt = NULL; self.out_deadline = NULL
        self.out_klen = NULL; self.kl_ids = NULL; self.kl_ev = NULL; self.kl_ord = NULL; self.kl_n = 0; self.kl_cap = 0
        self.emit_at = -1
        self.emit_cr = -1
        self.row_out = 0
        self.drop_lo = self.drop_hi = self.drop_kl = 0
        self.maxfields = max(lowered.maxfields, 1)
        # a pattern's timeouts are emitted as pattern npatterns + its index: a composite event
        # of the timeout type
        pats = lowered.patterns
        cdef PatternArrays pa_ = pattern_arrays(lowered)
        self.pat_has_ret = pa_.has_ret
        self.pat_ret_type = pa_.ret_type
        self.pat_attr_start = pa_.attr_start
        self.pat_attr = pa_.attr
        self.has_returns = any(p.has_return for p in pats)
        self.pat_domain = pa_.domain
        self.pat_cons_start = pa_.cons_start
        self.pat_cons = pa_.cons
        self.has_conflict = any(p.domain >= 0 for p in pats)
        self.lock_free = not (self.has_watch or self.has_timeouts or self.has_conflict
                              or (self.tie_strict and self.has_negation))
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
        adopt_out(self)
        reserve_out(self, 1024)
        adopt_budget(self)

    def __dealloc__(self):
        release_out(self)
        free(self.vstack); free(self.tstack)
        free(self.grp_ev); free(self.grp_type); free(self.grp_keys); free(self.grp_from); free(self.grp_upos)
        free(self.kl_ids); free(self.kl_ev); free(self.kl_ord)
        free(self.gptr)

    def set_budget(self, max_live, max_bytes):
        """The run's budgets: live partial matches per shared net (``max_live``) and bytes the
        arenas hold (``max_bytes``), None for none; checked where the arenas grow, within a
        batch (check_room, charge), not after it."""
        cdef Group g
        self.budget.limit = -1 if max_bytes is None else max_bytes
        for g in self.groups:
            g.max_live = -1 if max_live is None else max_live
            g.room = INT64_MAX if max_live is None else max_live - g.live_tokens
            g.over = False

    def memory(self):
        """The bytes the arenas hold, per part (run.MEMORY_PARTS names them), as charged."""
        return [self.budget.parts[i] for i in range(MEM_NPARTS)]

    def run(self, types, ts, pos, ids, const double[:, :] vals, const int8_t[:, :] tags, keys,
            Py_ssize_t row0=0, Py_ssize_t max_out=0):
        """Fire ``n`` events (columns: type codes, -1 for types no pattern reads, or a tuple of
        dictionary indices and each index's code; timestamps, float64 or int64; positions, or
        the first one as an int; ids, or None where they are the positions; attribute values and
        kinds, one row per event; key codes, one row per group, or a list with per group its
        codes or a tuple (an int64 column, its lowest value, each value's code at value -
        lowest)). ``max_out`` > 0: stop after the first row at which that many matches are
        buffered (an explosive pattern's matches leave a batch in slices, the caller takes
        them and fires the rest). Returns the number of rows fired (the loop: _rowloop.pxi)."""
        return run_rows(self, types, ts, pos, ids, vals, tags, keys, row0, max_out)

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
        if self.tie_either and (self.grp_rows or self.grp_clock >= 0 or self.grp_n):
            run_group(self)
        if self.kills:
            end_group(self)
        while self.grp_n or any((<Group>g).heap_n or (<Group>g).deadlines for g in self.groups):
            if self.grp_n:  # (either: composite events emitted here form one more group, Engine.flush)
                run_group(self)
                continue
            first = self.out_n
            self.grp_join = 0
            try:
                close_pending(self, 0.0, 0, True)
                settle(self, first)
            finally:
                self.grp_join = 1

    def sweep(self, double ts, int64_t pos):
        """Drop tokens that can never fire again; compact the event store when mostly dead."""
        sweep(self, ts, pos)

    def live_partial_matches(self, double ts, int64_t pos):
        """Tokens that can still be extended at the event (ts, pos): alive for some pattern,
        window open, contiguity unbroken (Engine.live_partial_matches)."""
        cdef Group g
        cdef Py_ssize_t total = 0
        for g in self.groups:
            total += group_live(self, g, ts, pos, NULL)
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
        self.nkills = 0
        self.store.n = 0
        self.consumed = [{} for _ in self.consumed]

    def take_matches(self):
        """The buffered matches as numpy arrays, and clears them: pattern, start, end, ids and
        bound (per slot), the emitting positions (-1: the end of the stream), RETURN values and
        their kinds (per field), timeouts' deadlines, Kleene list lengths and elements, and
        where each composite event entered the stream (``placed``: the emitting position, or
        under the tie rule either its creator event's; -1 the end of the stream; read only
        for the matches of patterns whose RETURN / ON TIMEOUT type is made into events), and
        per list element the order it was bound in (its node: a repeated group's iterations). A
        bound id below 0 is a composite event: -1 - the number of the match it is, counting
        every match taken in this run."""
        cdef Py_ssize_t n = self.out_n
        out = self._copy_matches(0, n, self.kl_n)
        self.kl_n = 0
        self.out_n = 0
        self.row_out = 0
        self.taken += n
        return out

    def take_dropped(self):
        """The matches :meth:`drop_row` dropped, as :meth:`take_matches` gives them, once the
        matches before them are taken (numbered after those): the composite event an error
        names (LIMIT ... FAIL at a composite event) is one of them. Nothing after: none."""
        cdef Py_ssize_t n = self.drop_hi - self.drop_lo
        out = self._copy_matches(self.drop_lo, n, self.drop_kl)
        self.drop_lo = self.drop_hi = self.drop_kl = 0
        self.taken += n
        return out

    cdef tuple _copy_matches(self, Py_ssize_t lo, Py_ssize_t n, Py_ssize_t nkl):
        """Buffered matches ``lo`` .. ``lo + n - 1`` and the first ``nkl`` list elements (a
        list's id is its offset there) as take_matches' arrays."""
        cdef Py_ssize_t m = self.maxslots, f = self.maxfields, i
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
        klist = np.empty(nkl, dtype=np.int64)
        korder = np.empty(nkl, dtype=np.int64)
        cdef int64_t[:] ov = korder
        placed = np.empty(n, dtype=np.int64)
        cdef int64_t[:] cv = placed
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
            memcpy(&pv[0], self.out_pattern + lo, n * sizeof(int32_t))
            memcpy(&sv[0], self.out_start + lo, n * sizeof(double))
            memcpy(&ev[0], self.out_end + lo, n * sizeof(double))
            memcpy(&iv[0, 0], self.out_ids + lo * m, n * m * sizeof(int64_t))
            memcpy(&bv[0, 0], self.out_bound + lo * m, n * m)
            memcpy(&av[0], self.out_at + lo, n * sizeof(int64_t))
            memcpy(&vv[0, 0], self.out_rv + lo * f, n * f * sizeof(double))
            memcpy(&kv[0, 0], self.out_rt + lo * f, n * f)
            memcpy(&dv[0], self.out_deadline + lo, n * sizeof(double))
            memcpy(&lv[0, 0], self.out_klen + lo * m, n * m * sizeof(int64_t))
            memcpy(&cv[0], self.out_cr + lo, n * sizeof(int64_t))
        if nkl:
            memcpy(&flat[0], self.kl_ids, nkl * sizeof(int64_t))
            for i in range(nkl):  # (every element's node, for the Python side)
                ov[i] = self.kl_ord[i] if self.kl_ord[i] >= 0 else -2 - self.kl_ord[i]
        return pattern, start, end, ids, bound, at, values, kinds, deadline, klen, klist, placed, korder

    def take_columns(self, const int32_t[:, :] var_slot, bint int_time):
        """:meth:`take_matches` for a match table of ids only (no RETURN, ON TIMEOUT or Kleene
        lists: KernelRun's simple table plan), as the table's own columns in one call: per
        pattern the match count, pattern, start and end (int64 where times are integers),
        and per variable name (``var_slot[v, p]``: its slot in pattern ``p``, -1 none) its ids
        and whether each is bound, contiguous; with a flag per name: every row bound. A
        small batch's table is then a few Arrow calls, not a few dozen NumPy ones."""
        cdef Py_ssize_t n = self.out_n, m = self.maxslots, nv = var_slot.shape[0], i, v, nb
        cdef int32_t p, sl
        cdef int64_t x
        cdef bint b
        counts = np.zeros(self.npatterns, dtype=np.int64)
        pattern = np.empty(n, dtype=np.int32)
        start = np.empty(n, dtype=np.int64 if int_time else np.float64)
        end = np.empty(n, dtype=np.int64 if int_time else np.float64)
        ids = np.empty((nv, n), dtype=np.int64)
        valid = np.empty((nv, n), dtype=np.bool_)
        cdef int64_t[:] cv = counts
        cdef int32_t[:] pv = pattern
        cdef int64_t[:, ::1] iv = ids
        cdef uint8_t[:, ::1] bv = valid.view(np.uint8)
        cdef int64_t[:] si, ei
        cdef double[:] sd, ed
        cdef int64_t* ip
        cdef uint8_t* bp
        cdef const int32_t* op = self.out_pattern
        full = [True] * nv
        cdef int any_composite = 0
        if n:
            memcpy(&pv[0], op, n * sizeof(int32_t))
            if int_time:
                si, ei = start, end
                for i in range(n):
                    si[i] = <int64_t>self.out_start[i]
                    ei[i] = <int64_t>self.out_end[i]
            else:
                sd, ed = start, end
                memcpy(&sd[0], self.out_start, n * sizeof(double))
                memcpy(&ed[0], self.out_end, n * sizeof(double))
            for i in range(n):
                p = op[i]
                if p < 0 or p >= self.npatterns:
                    raise ValueError(f"match {i} of pattern {p}: a timeout (take_matches reads those)")
                cv[p] += 1
            for v in range(nv):  # (a variable at a time, no branch on the data)
                ip = &iv[v, 0]
                bp = &bv[v, 0]
                nb = 0
                for i in range(n):
                    sl = var_slot[v, op[i]]
                    b = sl >= 0 and self.out_bound[i * m + sl]
                    x = self.out_ids[i * m + sl] if b else 0
                    ip[i] = x
                    bp[i] = b
                    nb += b
                    any_composite |= x < 0
                full[v] = nb == n
        if any_composite:
            raise ValueError("a composite event is bound: take_matches reads those")
        self.kl_n = 0
        self.out_n = 0
        self.row_out = 0
        self.taken += n
        return counts, pattern, start, end, ids, valid, full

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
        returns none of them); :meth:`take_dropped` takes them where an error names one."""
        self.drop_lo, self.drop_hi, self.drop_kl = self.row_out, self.out_n, self.kl_n
        self.out_n = self.row_out

    @property
    def stored_events(self):
        return self.store.n

    def stored_positions(self):
        """The positions of the events in the store, ascending (arrival order): the only
        input events a later match can bind (KernelEngine forgets the others' ids)."""
        out = np.empty(self.store.n, dtype=np.int64)
        cdef int64_t[:] ov = out
        if self.store.n:
            memcpy(&ov[0], self.store.pos, self.store.n * sizeof(int64_t))
        return out

    @property
    def buffered(self):
        """Matches buffered, not taken yet."""
        return self.out_n

    def oldest_pos(self):
        """The position of the oldest event in the store (the store keeps arrival order),
        or -1 when it is empty: no later match binds an event before it."""
        return self.store.pos[0] if self.store.n else -1

    def get_state(self):
        """The state between two runs as a dict of NumPy arrays and scalars, only its live part
        (_snapshot.pxi: compacts the store first, as a sweep would; no match may be buffered)."""
        return kernel_state(self)

    def set_state(self, dict state):
        """Restore :meth:`get_state`'s dict (of a kernel of the same lowered net) into this
        fresh kernel; ValueError where it is inconsistent."""
        set_kernel_state(self, state)

    def big_code(self, value):
        """The code of an int beyond 2**53 (a new one gets the next code)."""
        code = self.big_codes.get(value)
        if code is None:
            code = self.big_codes[value] = len(self.bigs)
            self.bigs.append(value)
        return code

    def set_bigs(self, values):
        """The ints beyond 2**53 a restored state's values refer to, by code."""
        self.bigs = [int(v) for v in values]
        self.big_codes = {v: i for i, v in enumerate(self.bigs)}

    def set_ranks(self, ranks):
        self.store.set_ranks(np.ascontiguousarray(ranks, dtype=np.float64))

    def value_codes(self, Py_ssize_t nstrings, Py_ssize_t nbigs):
        """Per string code and per big-int code whether the state holds it (_valuecodes.pxi),
        the state canonicalized first (dead partial matches and events dropped, as get_state
        does); None while matches are buffered (their values are not looked at)."""
        if self.out_n or self.kl_n:
            return None
        canonicalize(self)
        strs = np.zeros(max(nstrings, 0), dtype=np.uint8)
        bigs = np.zeros(max(nbigs, 0), dtype=np.uint8)
        mark_values(self, strs, bigs)
        return strs, bigs

    def recode_value_codes(self, strs, bigs, list kept_bigs):
        """Old code -> new (-1: dropped) for the strings and big ints the state holds (what
        value_codes marked), and the big ints kept by their new codes."""
        recode_values(self, np.ascontiguousarray(strs, dtype=np.int64), np.ascontiguousarray(bigs, dtype=np.int64))
        self.set_bigs(kept_bigs)


cdef int adopt_budget(Kernel k) except -1:
    """Point the groups and the store at the kernel's Budget, counting what they hold already."""
    cdef Group g
    cdef Py_ssize_t i
    for i in range(MEM_NPARTS):
        k.budget.parts[i] = 0
    k.budget.held = 0
    k.budget.limit = -1
    charge(&k.budget, MEM_EVENTS, 0, k.store.cap, k.store.row_bytes())
    charge(&k.budget, MEM_MATCHES, 0, k.out_cap, out_bytes(k))
    for g in k.groups:
        charge(&k.budget, MEM_TOKENS, 0, g.tk_cap, g.token_bytes())
        charge(&k.budget, MEM_KEYS, 0, g.nkeys, g.key_bytes())
        g.budget = &k.budget
    k.store.budget = &k.budget
    return 0


cdef Py_ssize_t group_live(Kernel k, Group g, double ts, int64_t pos, Py_ssize_t* per_key) except -1 nogil:
    """``g``'s tokens that can still be extended at the event (ts, pos): alive for some
    pattern, window open, contiguity unbroken (Engine.live_partial_matches); ``per_key``
    (nkeys entries, or NULL) gets each key's count added."""
    cdef Py_ssize_t lid, total = 0
    cdef int32_t t
    cdef int64_t floor
    for lid in range(g.nkeys * g.nplaces):
        if g.strategy == PARTITION_CONTIGUITY and g.partitioned:
            floor = g.floors[lid // g.nplaces]
        elif g.strategy >= STRICT_CONTIGUITY:
            floor = k.last_key
        else:
            floor = NO_KEY
        t = g.heads[lid]
        while t >= 0:
            if g.tk_users[t] and not g.expired(t, ts, pos) and g.tk_last_key[t] >= floor:
                total += 1
                if per_key != NULL:
                    per_key[lid // g.nplaces] += 1
            t = g.tk_next[t]
    return total


cdef int check_room(Kernel k, Group g) except -1 nogil:
    """``g`` allocated as many tokens as its budget had room for since the last count (alloc,
    in the middle of an event's step): the event's end counts its live partial matches
    (end_check), as the engine counts after the event (housekeeping.check_budget, which
    this follows: the same events are checked, the same one stops the run). Should the step
    go on allocating as many again (one event doubles an explosive Kleene pattern's partial
    matches), they are counted now, the stored ones and the step's new ones, and twice the
    budget stops the run before it allocates far past it."""
    cdef Py_ssize_t live
    if g.over:
        live = group_live(k, g, k.now_ts, k.now_pos, NULL) + created_live(g)
        if live > 2 * g.max_live:
            over_budget(k, g, g.cur_key, live)
    g.over = True
    g.room = max(g.max_live, 1)
    return 0


cdef Py_ssize_t created_live(Group g) noexcept nogil:
    """The step's new tokens that will be stored (at a place with a transition out)."""
    cdef Py_ssize_t i, n = 0
    for i in range(g.ncreated):
        if g.place_exits[g.tk_place[g.created[i]]]:
            n += 1
    return n


cdef int end_check(Kernel k, Group g) except -1 nogil:
    """The end of an event whose step used up ``g``'s room (check_room): its live partial
    matches over the budget stop the run; else the next count comes when the allocations
    since could have filled the room left (at least 1/64 of the budget, so that a run near it
    does not count per event: housekeeping.check_budget)."""
    cdef Py_ssize_t live = group_live(k, g, k.now_ts, k.now_pos, NULL)
    g.over = False
    if live > g.max_live:
        over_budget(k, g, -1, live)
    g.room = max(g.max_live - live, g.max_live // 64, 1)
    return 0


cdef int over_budget(Kernel k, Group g, int64_t key, Py_ssize_t live) except -1 nogil:
    """Raise KernelBudgetError naming the fullest key and the pattern most of its partial
    matches serve (housekeeping._over_budget); ``key``'s step's new tokens count as its own."""
    cdef Py_ssize_t* per_key = <Py_ssize_t*>calloc(max(g.nkeys, 1), sizeof(Py_ssize_t))
    cdef Py_ssize_t best = 0, ki, lid, b, n
    cdef int32_t t
    if per_key == NULL:
        with gil:
            raise MemoryError()
    group_live(k, g, k.now_ts, k.now_pos, per_key)
    if 0 <= key < g.nkeys:
        per_key[key] += created_live(g)
    for ki in range(g.nkeys):
        if per_key[ki] > per_key[best]:
            best = ki
    n = per_key[best]
    free(per_key)
    with gil:
        counts = [0] * g.nbits
        for lid in range(best * g.nplaces, (best + 1) * g.nplaces):
            t = g.heads[lid]
            while t >= 0:
                if g.tk_users[t] and not g.expired(t, k.now_ts, k.now_pos):
                    for b in range(g.nbits):
                        if (g.tk_users[t] >> b) & 1:
                            counts[b] += 1
                t = g.tk_next[t]
        if best == key:
            for ki in range(g.ncreated):
                t = g.created[ki]
                if g.place_exits[g.tk_place[t]]:
                    for b in range(g.nbits):
                        if (g.tk_users[t] >> b) & 1:
                            counts[b] += 1
        top = max(range(g.nbits), key=counts.__getitem__) if g.nbits else 0
        raise KernelBudgetError(g.patterns[top] if g.nbits else 0, g.index, best, n, live, g.max_live,
                                k.store.id[k.now_ev])


cdef int sweep(Kernel k, double ts, int64_t pos) except -1 nogil:
    """Kernel.sweep: every ``sweep_every`` events, in the firing loop (the interpreter lock
    only for what lives in Python objects: LIMIT quotas, consumed events, strict kills)."""
    cdef Py_ssize_t gi
    k.since_sweep = 0
    for gi in range(k.ngroups):
        sweep_group(k, <Group>k.gptr[gi], ts, pos)
    if k.has_conflict:
        with gil:
            forget_consumed(k, ts)
    if k.store.n > 4 * live_slots(k) + k.compact_slack and not k.nkills:
        compact(k)
    return 0


cdef int sweep_group(Kernel k, Group g, double ts, int64_t pos) except -1 nogil:
    sweep_lists(k, g, ts, pos)
    if g.nnegs:
        sweep_negatives(k, g, ts, pos)
    if g.watch_mask:
        with gil:
            prune(k, g, ts, pos)
    if g.has_kleene and g.nd_n > 2 * g.nd_live + k.compact_slack:  # (the element arena)
        gc_nodes(k, g)
    return 0


cdef int forget_consumed(Kernel k, double ts) except -1:
    """Consumed events older than their domain's horizon no longer matter (Engine.sweep)."""
    for d in range(len(k.consumed)):
        horizon = k.horizons[d]
        used = k.consumed[d]
        if used and horizon == horizon:
            cut = ts - horizon
            for seq in [q for q, when in used.items() if when < cut]:
                del used[seq]
    return 0


cdef int tick(Kernel k, double ts, int64_t pos) except -1 nogil:
    """Stream time reached (ts, pos) with no event of ours there (a row of type TICK: a
    key partition of a distributed run is told of other keys' events): close the windows
    it ends, as Engine.advance does -- the open timestamp group under either, the strict
    group and the pending end negations otherwise."""
    cdef Py_ssize_t first
    if k.tie_either:
        if (k.grp_rows or k.grp_clock >= 0) and ts != k.grp_ts:
            run_group(k)
        k.grp_ts = ts
        if pos > k.grp_clock:  # (a closer of the group's count windows: ties.advance_either)
            k.grp_clock = pos
        if not (k.has_negation or k.has_timeouts) or ts == k.strict_ts:
            return 0
        k.strict_ts = ts  # (ties._join: a new timestamp closes windows)
    elif not (k.has_negation or k.has_timeouts):
        return 0
    if k.tie_strict and ts != k.strict_ts:
        if k.nkills:
            end_group(k)
        k.strict_ts = ts
    first = k.out_n
    close_pending(k, ts, pos, False)
    settle(k, first)
    return 0
