# The firing loop over a batch's rows (included by _kernel.pyx).
#
# Kernel.run hands its columns here as a Rows: the columns as the input has them, so that the
# Python side makes no converted copy of a million rows (each copy is a pass over memory, and
# a fresh array is page faults besides): type codes, or an Arrow dictionary column's indices
# with their codes; times as float64, or int64 (converted here, row by row, as astype did);
# positions, or the first one (row i is at pos0 + i); ids, or none (an event's id is its
# position). The loop is Kernel.run's: every row in order, but where no tie group, negation,
# timeout or contiguity reads rows of types no pattern reads, a run of those rows only moves
# time, and a tight scan takes it (scan_unread) with the state they leave set once (skipped).

ctypedef fused time_col:
    double
    int64_t


cdef struct Rows:
    const int32_t* types  # type codes, or dictionary indices where lookup is set
    const int32_t* lookup  # a dictionary index's type code (NULL: types are codes)
    Py_ssize_t nlookup
    const double* tsd  # times as float64 ...
    const int64_t* tsi  # ... or as int64 (the other is NULL)
    const int64_t* pos  # positions (NULL: pos0 + row)
    int64_t pos0
    const int64_t* ids  # ids (NULL: the position)
    Py_ssize_t n
    # attribute values and kinds (row, attribute) by byte strides: the loop passes no
    # memoryview (a slice is a ~200-byte struct, copied at every call)
    const char* vals
    Py_ssize_t vs0, vs1
    const char* tags
    Py_ssize_t gs0, gs1
    # per group: its key codes, or an integer column's values coded as they are read
    # (IntKeys: its table and hash, and the IntKeys for a value both lack; no column of codes
    # made for a million rows); row i's at kcol + i * kstep bytes (kstep 0: one code for
    # every row)
    const char** kcol
    Py_ssize_t* kstep
    const IntTable** ktab
    const IntHash** khash
    void** kown
    # per group: an earlier group with the same key source (its code is this group's), or -1;
    # and the row's codes, each looked up once a row (Aarhus: both patterns, and the
    # contiguity floor, key one sensor column)
    Py_ssize_t* ksame
    int64_t* rkeys
    bint all_plain  # every group plain, tie rule arrival: a read row goes through fire_plain_row


cdef int32_t NO_CODES[1]  # the lookup of a dictionary with no entries: every index is out of range


cdef inline int32_t row_type(const Rows* r, Py_ssize_t i) except? -3 nogil:
    cdef int32_t x = r.types[i]
    if r.lookup == NULL:
        return x
    if <size_t>x >= <size_t>r.nlookup:
        raise IndexError(f"dictionary index {x} out of range")
    return r.lookup[x]


cdef inline double row_ts(const Rows* r, Py_ssize_t i) noexcept nogil:
    return r.tsd[i] if r.tsd != NULL else <double>r.tsi[i]


cdef inline int64_t row_pos(const Rows* r, Py_ssize_t i) noexcept nogil:
    return r.pos[i] if r.pos != NULL else r.pos0 + i


cdef inline int64_t row_id(const Rows* r, Py_ssize_t i) noexcept nogil:
    return r.ids[i] if r.ids != NULL else row_pos(r, i)


cdef inline double row_val(const Rows* r, Py_ssize_t i, Py_ssize_t a) noexcept nogil:
    return (<const double*>(r.vals + i * r.vs0 + a * r.vs1))[0]


cdef inline int8_t row_tag(const Rows* r, Py_ssize_t i, Py_ssize_t a) noexcept nogil:
    return (<const int8_t*>(r.tags + i * r.gs0 + a * r.gs1))[0]


cdef inline int64_t row_key(const Rows* r, Py_ssize_t gi, Py_ssize_t i) except? -1 nogil:
    cdef int64_t v = (<const int64_t*>(r.kcol[gi] + i * r.kstep[gi]))[0], c
    cdef const IntTable* t = r.ktab[gi]
    cdef const IntHash* h
    cdef uint64_t x
    cdef Py_ssize_t j
    if t == NULL:
        return v
    x = <uint64_t>v - <uint64_t>t.lo
    if x < t.span:
        c = t.table[x]
        if c >= 0:
            return c
    h = r.khash[gi]
    if h.cap:
        j = hash_slot(h, v)
        if h.codes[j] >= 0:
            return h.codes[j]
    return int_key_miss(r.kown[gi], v)


cdef int row_keys(const Rows* r, Py_ssize_t ng, Py_ssize_t i) except -1 nogil:
    """Row ``i``'s key code for every group into ``r.rkeys``: a key source shared by several
    groups is read (and its value looked up) once."""
    cdef Py_ssize_t gi, s
    for gi in range(ng):
        s = r.ksame[gi]
        r.rkeys[gi] = r.rkeys[s] if s >= 0 else row_key(r, gi, i)
    return 0


cdef Py_ssize_t run_rows(Kernel k, object types, object ts, object pos, object ids, const double[:, :] vals,
                         const int8_t[:, :] tags, object keys, Py_ssize_t row0, Py_ssize_t max_out) except -1:
    """Bind Kernel.run's columns (see Rows) and fire them; the views live as long as the call."""
    cdef Rows r
    cdef const int32_t[::1] tv
    cdef const int32_t[::1] lv
    cdef const double[::1] tdv
    cdef const int64_t[::1] tiv
    cdef const int64_t[::1] pv
    cdef const int64_t[::1] iv
    cdef Py_ssize_t done
    r.lookup = NULL
    r.nlookup = 0
    if isinstance(types, tuple):
        tv = types[0]
        lv = types[1]
        r.nlookup = lv.shape[0]
        r.lookup = &lv[0] if r.nlookup else NO_CODES
    else:
        tv = types
    r.n = tv.shape[0]
    if r.n == 0:
        return 0
    r.types = &tv[0]
    r.tsd = NULL
    r.tsi = NULL
    if isinstance(ts, np.ndarray) and ts.dtype == np.int64:
        tiv = ts
        if tiv.shape[0] < r.n:
            raise ValueError("fewer times than rows")
        r.tsi = &tiv[0]
    else:
        tdv = ts
        if tdv.shape[0] < r.n:
            raise ValueError("fewer times than rows")
        r.tsd = &tdv[0]
    r.pos = NULL
    r.pos0 = 0
    if isinstance(pos, np.ndarray):
        pv = pos
        if pv.shape[0] < r.n:
            raise ValueError("fewer positions than rows")
        r.pos = &pv[0]
    else:
        r.pos0 = pos
    r.ids = NULL
    if ids is not None:
        iv = ids
        if iv.shape[0] < r.n:
            raise ValueError("fewer ids than rows")
        r.ids = &iv[0]
    if vals.shape[0] < r.n or tags.shape[0] < r.n:
        raise ValueError("fewer attribute values than rows")
    r.vals, r.vs0, r.vs1 = <const char*>&vals[0, 0], vals.strides[0], vals.strides[1]
    r.tags, r.gs0, r.gs1 = <const char*>&tags[0, 0], tags.strides[0], tags.strides[1]
    ng = max(len(k.groups), 1)
    try:
        key_arrays(&r, ng)
        held = bind_keys(&r, keys, ng)
        same_keys(&r, ng)
        r.all_plain = not (k.tie_strict or k.tie_either or k.has_negation or k.has_timeouts or k.has_contiguity)
        for g in k.groups:
            r.all_plain = r.all_plain and (<Group>g).plain
        if not k.lock_free:
            return fire_rows(k, &r, row0, max_out)
        with nogil:  # (the reader's threads run meanwhile: petricep.io.prefetch)
            done = fire_rows(k, &r, row0, max_out)
        return done
    finally:
        free_key_arrays(&r)


cdef int key_arrays(Rows* r, Py_ssize_t ng) except -1:
    """``r``'s per-group key arrays, ``ng`` each (freed by free_key_arrays, also after a
    failure here)."""
    r.kcol = NULL
    r.kstep = NULL
    r.ktab = NULL
    r.khash = NULL
    r.kown = NULL
    r.ksame = NULL
    r.rkeys = NULL
    r.kcol = <const char**>grow(NULL, ng, sizeof(char*))
    r.kstep = <Py_ssize_t*>grow(NULL, ng, sizeof(Py_ssize_t))
    r.ktab = <const IntTable**>grow(NULL, ng, sizeof(IntTable*))
    r.khash = <const IntHash**>grow(NULL, ng, sizeof(IntHash*))
    r.kown = <void**>grow(NULL, ng, sizeof(void*))
    r.ksame = <Py_ssize_t*>grow(NULL, ng, sizeof(Py_ssize_t))
    r.rkeys = <int64_t*>grow(NULL, ng, sizeof(int64_t))
    return 0


cdef void free_key_arrays(Rows* r) noexcept:
    free(r.kcol)
    free(r.kstep)
    free(r.ktab)
    free(r.khash)
    free(r.kown)
    free(r.ksame)
    free(r.rkeys)


cdef list bind_keys(Rows* r, object keys, Py_ssize_t ng):
    """Each group's key source into ``r`` (Kernel.run's ``keys``: a 2-d array of codes, group
    by row, or per group codes or a tuple of an integer column and the IntKeys that codes its
    values); returns the views, to be held while ``r`` is read."""
    cdef const int64_t[:, :] k2
    cdef const int64_t[:] col
    cdef IntKeys ik
    cdef Py_ssize_t gi
    held = []
    if not isinstance(keys, list):
        k2 = keys
        if k2.shape[0] < ng or k2.shape[1] < r.n:
            raise ValueError("fewer keys than rows")
        for gi in range(ng):
            r.kcol[gi] = <const char*>&k2[gi, 0]
            r.kstep[gi] = k2.strides[1]
            r.ktab[gi] = NULL
            r.kown[gi] = NULL
        held.append(k2)
        return held
    if len(keys) < ng:
        raise ValueError("fewer key columns than groups")
    for gi in range(ng):
        source = keys[gi]
        r.ktab[gi] = NULL
        r.kown[gi] = NULL
        if isinstance(source, tuple):
            col = source[0]
            ik = <IntKeys?>source[1]
            r.ktab[gi] = &ik.t
            r.khash[gi] = &ik.h
            r.kown[gi] = <void*>ik
            held.append(ik)
        else:
            col = source
        if col.shape[0] < r.n:
            raise ValueError("fewer keys than rows")
        r.kcol[gi] = <const char*>&col[0]
        r.kstep[gi] = col.strides[0]
        held.append(col)
    return held


cdef void same_keys(Rows* r, Py_ssize_t ng) noexcept nogil:
    """``r.ksame``: each group's first earlier group reading the same key source."""
    cdef Py_ssize_t gi, gj
    for gi in range(ng):
        r.ksame[gi] = -1
        for gj in range(gi):
            if (r.ksame[gj] < 0 and r.kcol[gj] == r.kcol[gi] and r.kstep[gj] == r.kstep[gi]
                    and r.ktab[gj] == r.ktab[gi]):
                r.ksame[gi] = gj
                break


cdef Py_ssize_t scan_unread(const Rows* r, const time_col* ts, Py_ssize_t i, Py_ssize_t end, double* last) noexcept nogil:
    """The rows from ``i`` (before ``end``) of types no pattern reads (code -1) that keep time
    order: the first row after them; ``last`` becomes the time of the last one taken."""
    cdef Py_ssize_t j = i
    cdef double l = last[0], t
    cdef const int32_t* codes = r.types
    cdef const int32_t* lookup = r.lookup
    cdef size_t nl = <size_t>r.nlookup
    cdef int32_t x
    if lookup != NULL:
        while j < end:
            x = codes[j]
            t = <double>ts[j]
            if <size_t>x >= nl or lookup[x] != -1 or t < l:
                break
            l = t
            j += 1
    else:
        while j < end:
            t = <double>ts[j]
            if codes[j] != -1 or t < l:
                break
            l = t
            j += 1
    last[0] = l
    return j


cdef Py_ssize_t scan(const Rows* r, Py_ssize_t i, Py_ssize_t end, double* last) noexcept nogil:
    if r.tsd != NULL:
        return scan_unread(r, r.tsd, i, end, last)
    return scan_unread(r, r.tsi, i, end, last)


cdef void skipped(Kernel k, const Rows* r, Py_ssize_t j, Py_ssize_t row0) noexcept nogil:
    """The state a run of rows no pattern reads leaves, its last row ``j``: what run sets for
    an event, where a later row does not set it first (a tick, the batch's end)."""
    k.cur_row = j + row0
    k.row_out = k.out_n
    k.emit_at = row_pos(r, j)
    k.emit_ts = row_ts(r, j)
    if k.ts_attr >= 0:
        k.emit_tag = row_tag(r, j, k.ts_attr)
    k.in_ts = k.emit_ts
    k.in_pos = k.emit_at
    k.in_tag = k.emit_tag


cdef inline Py_ssize_t store_event(Kernel k, const Rows* r, Py_ssize_t i, double t, int64_t p) except -1 nogil:
    """Row ``i`` into the event store (its last entry: dropped again where nothing binds it)."""
    cdef Py_ssize_t ev, a, na = k.store.nattrs
    cdef double* dv
    cdef int8_t* dg
    cdef const double* sv
    cdef const int8_t* sg
    if k.store.n >= k.store.cap:
        k.store.reserve(2 * k.store.cap)
    ev = k.store.n
    k.store.n = k.store.n + 1
    k.store.seq[ev] = k.store.next_seq
    k.store.next_seq = k.store.next_seq + 1
    k.store.ts[ev] = t
    k.store.pos[ev] = p
    k.store.id[ev] = row_id(r, i)
    dv = &k.store.val[ev * na]
    dg = &k.store.tag[ev * na]
    if r.vs1 == sizeof(double) and r.gs1 == 1:  # (rows as KernelRun lays them out: one read per row)
        sv = <const double*>(r.vals + i * r.vs0)
        sg = <const int8_t*>(r.tags + i * r.gs0)
        for a in range(na):
            dv[a] = sv[a]
            dg[a] = sg[a]
    else:
        for a in range(na):
            dv[a] = row_val(r, i, a)
            dg[a] = row_tag(r, i, a)
    return ev


DEF CHUNK = 4096  # rows fire_chunk takes at a time (its stops on the stack)


cdef Py_ssize_t fire_rows(Kernel k, const Rows* r, Py_ssize_t row0, Py_ssize_t max_out) except -1 nogil:
    """Kernel.run's loop (see there): returns the number of rows fired. Where rows of types no
    pattern reads only move time (no tie groups, negations, timeouts or contiguity), a chunk
    in time order goes through fire_chunk, one that is not row by row (its error at its row)."""
    cdef Py_ssize_t i = 0, end, done, n = r.n, m
    cdef int32_t stops[CHUNK]
    cdef bint ordered
    cdef bint plain = not (k.tie_either or k.has_negation or k.has_timeouts or k.has_contiguity)
    if not plain:
        return fire_scan(k, r, 0, n, False, row0, max_out)
    while i < n:
        end = i + min(CHUNK, n - i)
        m = collect(r, i, end, k.last_ts, stops, &ordered)
        if ordered:
            done = fire_chunk(k, r, i, end, stops, m, row0, max_out)
        else:
            done = fire_scan(k, r, i, end, True, row0, max_out)
        if done < end:  # (max_out)
            return done
        i = end
    return n


cdef Py_ssize_t collect(const Rows* r, Py_ssize_t i, Py_ssize_t end, double last, int32_t* stops,
                        bint* ordered) noexcept nogil:
    """Rows ``i`` .. ``end`` - 1: the offsets (from ``i``) of those some pattern reads, or ticks,
    or with an index out of range, into ``stops``; ``ordered``: no time before its row's
    predecessor's (``last`` before the first; NaN is out of order). No branch on the data."""
    if r.tsd != NULL:
        return collect_rows(r, r.tsd, i, end, last, stops, ordered)
    return collect_rows(r, r.tsi, i, end, last, stops, ordered)


cdef Py_ssize_t collect_rows(const Rows* r, const time_col* ts, Py_ssize_t i, Py_ssize_t end, double last,
                             int32_t* stops, bint* ordered) noexcept nogil:
    cdef Py_ssize_t j, m = 0
    cdef double prev = last, t
    cdef int bad = 0, inr
    cdef int32_t x, c
    cdef const int32_t* codes = r.types
    cdef const int32_t* lookup = r.lookup
    cdef size_t nl = <size_t>r.nlookup
    if lookup != NULL:
        for j in range(i, end):
            x = codes[j]
            inr = <size_t>x < nl
            c = lookup[x if inr else 0]
            stops[m] = <int32_t>(j - i)
            m += (c != -1) | (not inr)
            t = <double>ts[j]
            bad |= not (t >= prev)
            prev = t
    else:
        for j in range(i, end):
            stops[m] = <int32_t>(j - i)
            m += codes[j] != -1
            t = <double>ts[j]
            bad |= not (t >= prev)
            prev = t
    ordered[0] = not bad
    return m


cdef Py_ssize_t fire_chunk(Kernel k, const Rows* r, Py_ssize_t i, Py_ssize_t end, const int32_t* stops,
                           Py_ssize_t m, Py_ssize_t row0, Py_ssize_t max_out) except -1 nogil:
    """Rows ``i`` .. ``end`` - 1, in time order: the rows ``stops`` names fire (fire_one), the
    others only count (as scan's runs do). Returns
    ``end``, or the row after the one at which ``max_out`` matches are buffered."""
    cdef Py_ssize_t s, j, prev = i
    for s in range(m):
        j = i + stops[s]
        if j > prev:  # rows prev .. j - 1: no pattern reads them (nor counts toward a sweep)
            k.events += j - prev
            k.last_ts = row_ts(r, j - 1)
            if row_type(r, j) == TICK:  # (a tick keeps their in_ts / in_pos)
                skipped(k, r, j - 1, row0)
        if r.all_plain:
            fire_plain_row(k, r, j, row0)
        else:
            fire_one(k, r, j, row0)
        prev = j + 1
        if max_out > 0 and k.out_n >= max_out:
            return prev
    if end > prev:
        k.events += end - prev
        k.last_ts = row_ts(r, end - 1)
        skipped(k, r, end - 1, row0)
    return end


cdef Py_ssize_t fire_scan(Kernel k, const Rows* r, Py_ssize_t i, Py_ssize_t n, bint plain, Py_ssize_t row0,
                          Py_ssize_t max_out) except -1 nogil:
    """Rows ``i`` .. ``n`` - 1 one by one (``plain``: a run of rows no pattern reads at once, by
    scan); returns ``n``, or the row after the one at which ``max_out`` matches are buffered."""
    cdef Py_ssize_t j, end, lazy = -1
    cdef double last
    while i < n:
        if plain:
            last = k.last_ts
            j = scan(r, i, n, &last)
            if j > i:
                k.events += j - i
                k.last_ts = last
                lazy = j - 1
                i = j
                continue
        if lazy >= 0 and (row_type(r, i) == TICK or row_ts(r, i) < k.last_ts):
            skipped(k, r, lazy, row0)
        lazy = -1
        fire_one(k, r, i, row0)
        i += 1
        if max_out > 0 and k.out_n >= max_out:
            return i
    if lazy >= 0:
        skipped(k, r, lazy, row0)
    return n


cdef int fire_one(Kernel k, const Rows* r, Py_ssize_t i, Py_ssize_t row0) except -1 nogil:
    """Row ``i``: a tick, or an event into the store and each group reading its type."""
    cdef Py_ssize_t first, gi, ev, ngroups = k.ngroups
    cdef int32_t etype = row_type(r, i)
    cdef double t = row_ts(r, i)
    cdef int64_t p = row_pos(r, i), key, ekey
    cdef bint kept, keyed = False
    k.cur_row = i + row0
    k.row_out = k.out_n
    k.emit_at = p
    k.emit_ts = t
    if k.ts_attr >= 0:
        k.emit_tag = row_tag(r, i, k.ts_attr)
    if etype == TICK:
        tick(k, t, p)
        return 0
    if t < k.last_ts:
        raise OrderError(i + row0, t, k.last_ts)
    k.in_ts = t
    k.in_pos = p
    k.in_tag = k.emit_tag
    if k.tie_either:
        if (k.grp_rows or k.grp_clock >= 0) and t != k.grp_ts:
            run_group(k)
        k.grp_ts = t
        k.grp_rows += 1
    first = k.out_n
    if k.has_negation or k.has_timeouts:
        if k.tie_strict and t != k.strict_ts:
            if k.nkills:
                end_group(k)
            k.strict_ts = t
        first = k.out_n
        if k.tie_either:  # (ties._join: only a new timestamp closes windows)
            if t != k.strict_ts:
                k.strict_ts = t
                if pending_due(k, t, p):
                    close_pending(k, t, p, False)
        elif pending_due(k, t, p):
            close_pending(k, t, p, False)
    k.last_ts = t
    k.events += 1
    if etype >= 0 and k.tie_either:
        buffer(k, r, etype, t, p, i)
    elif k.tie_either:  # (no net reads it, but it closes count windows: ties._match_group's closers)
        if k.grp_un >= k.grp_ucap:
            k.grp_ucap = max(16, 2 * k.grp_ucap)
            k.grp_upos = <int64_t*>grow(k.grp_upos, k.grp_ucap, sizeof(int64_t))
        k.grp_upos[k.grp_un] = p
        k.grp_un += 1
    elif etype >= 0:
        # the event enters the store; it stays only if a stored token binds it
        ev = store_event(k, r, i, t, p)
        kept = False
        row_keys(r, ngroups, i)
        keyed = True
        for gi in range(ngroups):
            if enter_group(k, <Group>k.gptr[gi], etype, r.rkeys[gi], ev):
                kept = True
        if not kept:
            k.store.n = k.store.n - 1
    if k.has_contiguity:
        ekey = 2 * p
        for gi in range(ngroups):
            if keyed:
                set_floor(<Group>k.gptr[gi], r.rkeys[gi], ekey)
            elif by_key(<Group>k.gptr[gi]):
                set_floor(<Group>k.gptr[gi], row_key(r, gi, i), ekey)
        k.last_key = ekey
    if k.out_n > first:  # (after the contiguity keys: composite events see their emitter's)
        settle(k, first)
    if not k.tie_either:
        k.since_sweep += 1
        if k.since_sweep >= k.sweep_every:
            sweep(k, t, p)
    return 0


cdef inline bint enter_group(Kernel k, Group g, int etype, int64_t key, int64_t ev) except -1 nogil:
    """The event enters ``g`` (whether a stored token binds it)."""
    if g.plain and not k.tie_strict:  # (_plainnet.pxi: the step without the constructs it lacks)
        return enter_plain(k, g, etype, key, ev)
    return enter(k, g, etype, key, ev)


cdef inline bint by_key(Group g) noexcept nogil:
    """Whether ``g`` keeps a contiguity floor per key."""
    return g.strategy == PARTITION_CONTIGUITY and g.partitioned


cdef inline int set_floor(Group g, int64_t key, int64_t ekey) except -1 nogil:
    """The row (``ekey``) is the last of ``key``: ``g``'s tokens below it are interrupted."""
    if not by_key(g):
        return 0
    if key >= g.nkeys:
        g.reserve_keys(key + 1)
    g.floors[key] = ekey
    return 0


cdef int fire_plain_row(Kernel k, const Rows* r, Py_ssize_t i, Py_ssize_t row0) except -1 nogil:
    """fire_one where every group is plain under tie rule arrival (Rows.all_plain): no tie
    groups, negations, timeouts or contiguity to look at, a tick does nothing."""
    cdef int32_t etype = row_type(r, i)
    cdef double t = row_ts(r, i)
    cdef int64_t p = row_pos(r, i)
    cdef Py_ssize_t first = k.out_n, gi, ev
    cdef bint kept = False
    k.cur_row = i + row0
    k.row_out = first
    k.emit_at = p
    k.emit_ts = t
    if k.ts_attr >= 0:
        k.emit_tag = row_tag(r, i, k.ts_attr)
    if etype == TICK:
        return 0
    if t < k.last_ts:
        raise OrderError(i + row0, t, k.last_ts)
    k.in_ts = t
    k.in_pos = p
    k.in_tag = k.emit_tag
    k.last_ts = t
    k.events += 1
    if etype >= 0:
        ev = store_event(k, r, i, t, p)
        row_keys(r, k.ngroups, i)
        for gi in range(k.ngroups):
            if enter_plain(k, <Group>k.gptr[gi], etype, r.rkeys[gi], ev):
                kept = True
        if not kept:
            k.store.n = k.store.n - 1
    if k.out_n > first:
        settle(k, first)
    k.since_sweep += 1
    if k.since_sweep >= k.sweep_every:
        sweep(k, t, p)
    return 0
