# Emission (included by _kernel.pyx).
#
# Matches go into growable C buffers (reserve_out / emit), not Python objects: the Python side
# takes them in one batch (Kernel.take_matches). The matches of one emission point are put in
# the engine's order (runtime/emission.py emit / _ordered: by pattern, then by their events);
# consumption (CONSUME, CONFLICT) drops matches there (consume), and a match of a pattern with
# RETURN re-enters as a composite event of its RETURN type (settle / composite), round by round.


cdef struct OutBuffers:
    # one set of emission buffers: those Kernel fields, their capacity in matches for slot and
    # field widths m and f
    int32_t* pattern
    int64_t* cr
    double* start
    double* end
    int64_t* ids
    uint8_t* bound
    int64_t* at
    int64_t* key
    int64_t* ev
    double* rv
    int8_t* rt
    double* deadline
    int64_t* klen
    Py_ssize_t cap, m, f


# The emission buffers of the last Kernel dropped, for the next one made (cap 0: none). A
# pass creating a Kernel (KernelRun per batch source, per Spark partition, per bench pass)
# would otherwise fault fresh pages in and copy as its buffers double from 1,024 matches
# (~0.8 ms on W1's 48,000 matches); kept only up to SPARE_MAX matches.
cdef OutBuffers spare
spare.cap = 0
DEF SPARE_MAX = 1 << 18


cdef void adopt_out(Kernel k) noexcept nogil:
    """The spare buffers, if any, become ``k``'s (before its first reserve_out)."""
    global spare
    if spare.cap == 0:
        return
    k.out_pattern = spare.pattern; k.out_cr = spare.cr; k.out_start = spare.start; k.out_end = spare.end
    k.out_ids = spare.ids; k.out_bound = spare.bound; k.out_at = spare.at; k.out_key = spare.key
    k.out_ev = spare.ev; k.out_rv = spare.rv; k.out_rt = spare.rt; k.out_deadline = spare.deadline
    k.out_klen = spare.klen
    k.out_cap = min(spare.cap, fits(spare.cap, spare.m, k.maxslots), fits(spare.cap, spare.f, k.maxfields))
    spare.cap = 0


cdef inline Py_ssize_t fits(Py_ssize_t cap, Py_ssize_t had, Py_ssize_t width) noexcept nogil:
    """Matches of ``width`` values per match that ``cap`` matches of ``had`` leave room for
    (grow allocates at least one value)."""
    return cap * max(had, 1) // width if width > 0 else cap


cdef void release_out(Kernel k) noexcept nogil:
    """``k``'s buffers to the spare set where it is empty and they are not too large, else freed."""
    global spare
    if spare.cap == 0 and 0 < k.out_cap <= SPARE_MAX:
        spare.pattern = k.out_pattern; spare.cr = k.out_cr; spare.start = k.out_start
        spare.end = k.out_end; spare.ids = k.out_ids; spare.bound = k.out_bound; spare.at = k.out_at
        spare.key = k.out_key; spare.ev = k.out_ev; spare.rv = k.out_rv; spare.rt = k.out_rt
        spare.deadline = k.out_deadline; spare.klen = k.out_klen
        spare.cap, spare.m, spare.f = k.out_cap, k.maxslots, k.maxfields
    else:
        free(k.out_pattern); free(k.out_cr); free(k.out_start); free(k.out_end); free(k.out_ids)
        free(k.out_bound); free(k.out_at); free(k.out_key); free(k.out_ev); free(k.out_rv); free(k.out_rt)
        free(k.out_deadline); free(k.out_klen)
    k.out_cap = 0


cdef inline Py_ssize_t out_bytes(Kernel k) noexcept nogil:
    """Bytes a buffered match takes (reserve_out)."""
    return (sizeof(int32_t) + 6 * sizeof(double) + k.maxslots * (3 * sizeof(int64_t) + sizeof(uint8_t))
            + k.maxfields * (sizeof(double) + sizeof(int8_t)))


cdef int reserve_out(Kernel k, Py_ssize_t cap) except -1 nogil:
    if cap <= k.out_cap:
        return 0
    charge(&k.budget, MEM_MATCHES, k.out_cap, cap, out_bytes(k))
    k.out_pattern = <int32_t*>grow(k.out_pattern, cap, sizeof(int32_t))
    k.out_cr = <int64_t*>grow(k.out_cr, cap, sizeof(int64_t))
    k.out_start = <double*>grow(k.out_start, cap, sizeof(double))
    k.out_end = <double*>grow(k.out_end, cap, sizeof(double))
    k.out_ids = <int64_t*>grow(k.out_ids, cap * k.maxslots, sizeof(int64_t))
    k.out_bound = <uint8_t*>grow(k.out_bound, cap * k.maxslots, sizeof(uint8_t))
    k.out_at = <int64_t*>grow(k.out_at, cap, sizeof(int64_t))
    k.out_key = <int64_t*>grow(k.out_key, cap, sizeof(int64_t))
    k.out_ev = <int64_t*>grow(k.out_ev, cap * k.maxslots, sizeof(int64_t))
    k.out_rv = <double*>grow(k.out_rv, cap * k.maxfields, sizeof(double))
    k.out_rt = <int8_t*>grow(k.out_rt, cap * k.maxfields, sizeof(int8_t))
    k.out_deadline = <double*>grow(k.out_deadline, cap, sizeof(double))
    k.out_klen = <int64_t*>grow(k.out_klen, cap * k.maxslots, sizeof(int64_t))
    k.out_cap = cap
    return 0


cdef int emit(Kernel k, Group g, int pattern, int64_t* slots, double first_ts, double last_ts, int64_t key,
              double deadline) except -1 nogil:
    """Buffer a match: its pattern, span, bound events' ids (and store indices, for the
    order of matches emitted at one point), the key, and its RETURN values (a timeout:
    pattern npatterns + its index, its ON TIMEOUT values and its deadline)."""
    cdef Py_ssize_t o = k.out_n, ki, m = k.maxslots, f = k.maxfields
    cdef int64_t ev
    cdef int ns = g.nslots, r
    if o >= k.out_cap:
        reserve_out(k, 2 * k.out_cap)
    k.out_pattern[o] = pattern
    k.out_at[o] = k.emit_at
    k.out_cr[o] = k.emit_cr
    k.out_start[o] = first_ts
    k.out_end[o] = last_ts
    k.out_key[o] = key
    k.out_deadline[o] = deadline
    for ki in range(m):
        ev = slots[ki] if ki < ns else -1
        k.out_bound[o * m + ki] = 1 if ev >= 0 else 0
        k.out_klen[o * m + ki] = -1
        if ev >= 0 and g.slot_kleene[ki]:  # a list: its ids go to the list buffer
            emit_list(k, g, ev, o, ki)
            k.out_ev[o * m + ki] = -1
            continue
        k.out_ids[o * m + ki] = k.store.id[ev] if ev >= 0 else 0
        k.out_ev[o * m + ki] = ev
    for r in range(g.ret_start[pattern + 1] - g.ret_start[pattern]):
        eval_value(k, g, g.ret_prog[g.ret_start[pattern] + r], slots, &k.out_rv[o * f + r], &k.out_rt[o * f + r])
    k.out_n += 1
    return 0


cdef int settle(Kernel k, Py_ssize_t first) except -1 nogil:
    """The matches emitted at one point, from ``first``: in the engine's order (emission.emit);
    with RETURN, each round's composite events enter in that order, and the matches they
    complete form the next round."""
    cdef Py_ssize_t end, o
    if not k.ordered:
        if k.out_n - first > 1:
            order_emitted(k, first)
        return 0
    while k.out_n > first:
        end = k.out_n
        if end - first > 1:
            order_emitted(k, first)
        if k.has_conflict:
            with gil:  # (the consumed events: a dict per domain)
                end = consume(k, first, end)
        for o in range(first, end):
            if k.pat_has_ret[k.out_pattern[o]]:
                k.composites += 1
                if k.pat_ret_type[k.out_pattern[o]] >= 0:
                    composite(k, o)
        first = end
    return 0


cdef Py_ssize_t consume(Kernel k, Py_ssize_t first, Py_ssize_t end) except -1:
    """Consumption (emission.consume), over the ordered matches [first, end): a match of a
    consuming pattern holding an event already consumed in its domain is dropped, an
    emitted one consumes the events of its consumed slots. Returns the new end."""
    cdef Py_ssize_t o, ki, m = k.maxslots, n = 0
    cdef int p, d
    cdef bint ok
    cdef dict used
    cdef Py_ssize_t* perm = <Py_ssize_t*>malloc(max(end - first, 1) * sizeof(Py_ssize_t))
    try:
        for o in range(first, end):
            p = k.out_pattern[o]
            d = k.pat_domain[p] if p < k.npatterns else -1
            if d >= 0:  # (a timeout is not a match: it consumes nothing)
                used = <dict>k.consumed[d]
                ok = True
                for ki in range(m):
                    if slot_used(k, o, ki, used):
                        ok = False
                        break
                if not ok:
                    continue
                for ki in range(k.pat_cons_start[p], k.pat_cons_start[p + 1]):
                    consume_slot(k, o, k.pat_cons[ki], used)
            perm[n] = o
            n += 1
        if n < end - first:
            permute(k, first, n, perm)
            k.out_n = first + n
    finally:
        free(perm)
    return first + n


cdef bint slot_used(Kernel k, Py_ssize_t o, Py_ssize_t ki, dict used) except -1:
    """Whether match ``o`` binds in slot ``ki`` an event (a list: an element) in ``used``."""
    cdef Py_ssize_t m = k.maxslots, j, n = k.out_klen[o * m + ki]
    cdef int64_t ev
    if n >= 0:
        for j in range(n):
            if k.store.seq[k.kl_ev[k.out_ids[o * m + ki] + j]] in used:
                return True
        return False
    ev = k.out_ev[o * m + ki]
    return ev >= 0 and k.store.seq[ev] in used


cdef int consume_slot(Kernel k, Py_ssize_t o, Py_ssize_t ki, dict used) except -1:
    """Match ``o`` consumes the event (a list: every element) of slot ``ki``."""
    cdef Py_ssize_t m = k.maxslots, j, n = k.out_klen[o * m + ki]
    cdef int64_t ev
    if n >= 0:
        for j in range(n):
            ev = k.kl_ev[k.out_ids[o * m + ki] + j]
            used[k.store.seq[ev]] = k.store.ts[ev]
        return 0
    ev = k.out_ev[o * m + ki]
    if ev >= 0:
        used[k.store.seq[ev]] = k.store.ts[ev]
    return 0


cdef inline bint enter_composite(Kernel k, Group g, int etype, int64_t key, int64_t ev) except -1 nogil:
    return enter(k, g, etype, key if g.partitioned else 0, ev)


cdef int composite(Kernel k, Py_ssize_t o) except -1 nogil:
    """Match ``o`` as an event of its RETURN type (Engine._process with composite=True): at
    the emitting row's time and position (tie rule either: its creator's, out_cr), its id a reference to the match (-1 - its number
    in the run's output), its fields' values in their attribute columns, its key the
    match's; it steps every group that reads its type."""
    cdef Py_ssize_t ev, a, na = k.store.nattrs, gi, ngroups = k.ngroups, f = k.maxfields
    cdef int p = k.out_pattern[o], etype = k.pat_ret_type[p], ki, r
    cdef bint kept = False
    cdef int64_t cr = k.out_cr[o]
    cdef double ts = k.emit_ts
    cdef int8_t tag = k.emit_tag
    if k.store.n >= k.store.cap:
        k.store.reserve(2 * k.store.cap)
    ev = k.store.n
    k.store.n = k.store.n + 1
    k.store.seq[ev] = k.store.next_seq
    k.store.next_seq = k.store.next_seq + 1
    k.store.pos[ev] = k.emit_at if k.emit_at >= 0 else k.in_pos
    if cr >= 0:  # (tie rule either: at its creator event, ties._fixpoint's emitter)
        ts = k.store.ts[cr]
        k.store.pos[ev] = k.store.pos[cr]
        if k.ts_attr >= 0:
            tag = k.store.tag[cr * na + k.ts_attr]
    elif cr == -2:  # (at the group's clock point)
        ts = k.grp_ts
        k.store.pos[ev] = k.grp_clock
    elif cr <= -3:  # (at an event of the group no net reads)
        ts = k.grp_ts
        k.store.pos[ev] = -3 - cr
    k.store.ts[ev] = ts
    k.store.id[ev] = -1 - (k.taken + o)
    # from here the match's position in the stream as an event (take_matches' ``placed``:
    # its creator's under either, not the row that emitted it), -1 the end of the stream
    k.out_cr[o] = k.store.pos[ev] if cr != -1 or k.emit_at >= 0 else -1
    for a in range(na):
        k.store.val[ev * na + a] = 0.0
        k.store.tag[ev * na + a] = TAG_MISSING
    for ki in range(k.pat_attr_start[p], k.pat_attr_start[p + 1]):
        a = k.pat_attr[ki]
        if a >= 0:
            r = ki - k.pat_attr_start[p]
            k.store.val[ev * na + a] = k.out_rv[o * f + r]
            k.store.tag[ev * na + a] = k.out_rt[o * f + r]
    if k.ts_attr >= 0:
        k.store.val[ev * na + k.ts_attr] = ts
        k.store.tag[ev * na + k.ts_attr] = tag
    if k.tie_either:
        return join_group(k, ev, etype, k.out_key[o])
    for gi in range(ngroups):
        if enter_composite(k, <Group>k.gptr[gi], etype, k.out_key[o], ev):
            kept = True
    if not kept and k.store.n == ev + 1:
        k.store.n = k.store.n - 1
    return 0


cdef struct OrderKeys:
    # the sorted store indices of each match's bound events (lists' elements included), for
    # the matches [first, first + n) of one point: match first + i's are flat[start[i]:start[i + 1]]
    Py_ssize_t first
    Py_ssize_t* start
    int64_t* flat
    bint heap  # start and flat were allocated (else they are the caller's stack buffers)


cdef int cmp_i64(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], y = (<const int64_t*>b)[0]
    return (x > y) - (x < y)


cdef int order_emitted(Kernel k, Py_ssize_t first) except -1 nogil:
    """Matches emitted at one point, stably by pattern (emission.emit / _ordered's order),
    then by their events' stream order: the sorted positions of every bound event (Kleene
    lists' elements included), then each variable's (bound before unbound) -- every
    pattern's, so that its order does not follow the shared net's places. A merge sort over
    precomputed keys: a Kleene closure under skip-till-any-match can complete thousands of
    matches at one point."""
    cdef Py_ssize_t n = k.out_n - first, i
    cdef OrderKeys keys
    cdef Py_ssize_t* perm
    cdef Py_ssize_t* tmp
    cdef Py_ssize_t start_buf[33]
    cdef int64_t flat_buf[256]
    if n < 2:
        return 0
    perm = NULL
    tmp = NULL
    keys.first = first
    keys.start = start_buf
    keys.flat = flat_buf
    keys.heap = False
    try:
        order_keys(k, &keys, n)
        for i in range(1, n):  # (the firing order is often the order already: nothing to move)
            if match_before(k, &keys, first + i, first + i - 1):
                break
        else:
            return 0
        perm = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        tmp = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        for i in range(n):
            perm[i] = first + i
        merge_sort(k, &keys, perm, tmp, n)
        permute(k, first, n, perm)
    finally:
        free(perm)
        free(tmp)
        if keys.heap:
            free(keys.start)
            free(keys.flat)
    return 0


cdef inline void sort_small(int64_t* x, Py_ssize_t n) noexcept nogil:
    """An insertion sort (a match binds a few events; qsort's calls cost more there)."""
    cdef Py_ssize_t i, j
    cdef int64_t v
    if n > 16:
        qsort(x, n, sizeof(int64_t), cmp_i64)
        return
    for i in range(1, n):
        v = x[i]
        j = i - 1
        while j >= 0 and x[j] > v:
            x[j + 1] = x[j]
            j -= 1
        x[j + 1] = v


cdef int order_keys(Kernel k, OrderKeys* keys, Py_ssize_t n) except -1 nogil:
    """Each match's bound events' store indices, sorted (runtime/emission.py chain_order)."""
    cdef Py_ssize_t m = k.maxslots, i, ki, o, total = 0, at, j, length
    for i in range(n):
        o = keys.first + i
        for ki in range(m):
            if k.out_klen[o * m + ki] >= 0:
                total += k.out_klen[o * m + ki]
            elif k.out_ev[o * m + ki] >= 0:
                total += 1
    if n + 1 > 33 or total > 256:  # (else the caller's stack buffers hold them: no malloc a point)
        keys.start = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        keys.flat = <int64_t*>malloc(max(total, 1) * sizeof(int64_t))
        keys.heap = True
    total = 0
    for i in range(n):
        o = keys.first + i
        keys.start[i] = total
        for ki in range(m):
            if k.out_klen[o * m + ki] >= 0:
                total += k.out_klen[o * m + ki]
            elif k.out_ev[o * m + ki] >= 0:
                total += 1
    keys.start[n] = total
    for i in range(n):
        o = keys.first + i
        at = keys.start[i]
        for ki in range(m):
            length = k.out_klen[o * m + ki]
            if length >= 0:
                for j in range(length):
                    keys.flat[at + j] = k.kl_ev[k.out_ids[o * m + ki] + j]
                at += length
            elif k.out_ev[o * m + ki] >= 0:
                keys.flat[at] = k.out_ev[o * m + ki]
                at += 1
        sort_small(&keys.flat[keys.start[i]], keys.start[i + 1] - keys.start[i])
    return 0


cdef int merge_sort(Kernel k, OrderKeys* keys, Py_ssize_t* perm, Py_ssize_t* tmp, Py_ssize_t n) except -1 nogil:
    """Stable bottom-up merge sort of ``perm`` by match_before."""
    cdef Py_ssize_t width = 1, lo, mid, hi, i, j, o
    cdef Py_ssize_t* src = perm
    cdef Py_ssize_t* dst = tmp
    cdef Py_ssize_t* swap
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                if match_before(k, keys, src[j], src[i]):
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < mid:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < hi:
                dst[o] = src[j]
                j += 1
                o += 1
            lo = hi
        swap = src
        src = dst
        dst = swap
        width *= 2
    if src != perm:
        memcpy(perm, src, n * sizeof(Py_ssize_t))
    return 0


cdef bint match_before(Kernel k, OrderKeys* keys, Py_ssize_t a, Py_ssize_t b) nogil:
    """Whether match ``a`` goes strictly before match ``b``."""
    cdef Py_ssize_t m = k.maxslots, ki, i, j
    cdef int np_ = k.npatterns, pa = k.out_pattern[a], pb = k.out_pattern[b], c
    if pa != pb:  # by pattern, a timeout (pattern npatterns + index) after the pattern's matches
        if pa % np_ != pb % np_:
            return pa % np_ < pb % np_
        return (pa >= np_) < (pb >= np_)
    i = a - keys.first
    j = b - keys.first
    c = cmp_seqs(&keys.flat[keys.start[i]], keys.start[i + 1] - keys.start[i],
                 &keys.flat[keys.start[j]], keys.start[j + 1] - keys.start[j])
    if c:
        return c < 0
    for ki in range(m):
        c = cmp_var(k, a, b, ki)
        if c:
            return c < 0
    return cmp_binding_order(k, a, b) < 0


cdef int cmp_binding_order(Kernel k, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """Two matches with the same lists: the slots of their ordered groups' elements in binding
    order, compared as tuples (emission.chain_order's last part; equal but under the tie rule
    either, where one group's lists may fall into iterations otherwise)."""
    cdef Py_ssize_t m = k.maxslots, sa, sb
    cdef Py_ssize_t* at = <Py_ssize_t*>malloc(2 * max(m, 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* bt = at + m
    cdef int c = 0
    for sa in range(m):
        at[sa] = 0
        bt[sa] = 0
    while c == 0:
        sa = oldest_ordered(k, a, at)
        sb = oldest_ordered(k, b, bt)
        if sa < 0 or sb < 0:
            c = (sa >= 0) - (sb >= 0)
            break
        if sa != sb:
            c = -1 if sa < sb else 1
        at[sa] += 1
        bt[sb] += 1
    free(at)
    return c


cdef Py_ssize_t oldest_ordered(Kernel k, Py_ssize_t o, const Py_ssize_t* taken) noexcept nogil:
    """The slot of match ``o`` whose next ordered list element (``taken`` passed per slot) was
    bound first (-1: none left)."""
    cdef Py_ssize_t m = k.maxslots, ki, best = -1
    cdef int64_t x, bx = 0
    for ki in range(m):
        if k.out_klen[o * m + ki] > taken[ki]:
            x = k.kl_ord[k.out_ids[o * m + ki] + taken[ki]]
            if x >= 0 and (best < 0 or x < bx):
                best = ki
                bx = x
    return best


cdef inline int cmp_seqs(const int64_t* x, Py_ssize_t nx, const int64_t* y, Py_ssize_t ny) noexcept nogil:
    """Python's tuple comparison of two sequences of store indices: -1, 0 or 1."""
    cdef Py_ssize_t i
    for i in range(nx if nx < ny else ny):
        if x[i] != y[i]:
            return -1 if x[i] < y[i] else 1
    return (nx > ny) - (nx < ny)


cdef int cmp_var(Kernel k, Py_ssize_t a, Py_ssize_t b, Py_ssize_t ki) noexcept nogil:
    """One variable's events in two matches (a list's elements, an event, or none)."""
    cdef Py_ssize_t m = k.maxslots, na, nb
    cdef const int64_t* x
    cdef const int64_t* y
    na = k.out_klen[a * m + ki]
    if na >= 0:
        x = &k.kl_ev[k.out_ids[a * m + ki]]
    else:
        x = &k.out_ev[a * m + ki]
        na = 1 if x[0] >= 0 else 0
    nb = k.out_klen[b * m + ki]
    if nb >= 0:
        y = &k.kl_ev[k.out_ids[b * m + ki]]
    else:
        y = &k.out_ev[b * m + ki]
        nb = 1 if y[0] >= 0 else 0
    if na == 0 or nb == 0:  # a bound variable before an unbound one (emission.chain_order)
        return (na == 0) - (nb == 0)
    return cmp_seqs(x, na, y, nb)


cdef void permute(Kernel k, Py_ssize_t first, Py_ssize_t n, Py_ssize_t* perm) noexcept nogil:
    """Reorder matches [first, first + n): the match at ``perm[i]`` moves to first + i."""
    cdef Py_ssize_t i, m = k.maxslots, f = k.maxfields, src, dst
    cdef int32_t* pat = <int32_t*>malloc(n * sizeof(int32_t))
    cdef int64_t* at = <int64_t*>malloc(2 * n * sizeof(int64_t))
    cdef int64_t* key = <int64_t*>malloc(n * sizeof(int64_t))
    cdef double* se = <double*>malloc(3 * n * sizeof(double))
    cdef int64_t* ids = <int64_t*>malloc(3 * n * m * sizeof(int64_t))
    cdef uint8_t* bound = <uint8_t*>malloc(n * m)
    cdef double* rv = <double*>malloc(n * f * sizeof(double))
    cdef int8_t* rt = <int8_t*>malloc(n * f)
    for i in range(n):
        src = perm[i]
        pat[i] = k.out_pattern[src]
        at[i] = k.out_at[src]
        at[n + i] = k.out_cr[src]
        key[i] = k.out_key[src]
        se[2 * i] = k.out_start[src]
        se[2 * i + 1] = k.out_end[src]
        se[2 * n + i] = k.out_deadline[src]
        memcpy(&ids[i * m], &k.out_ids[src * m], m * sizeof(int64_t))
        memcpy(&ids[(n + i) * m], &k.out_ev[src * m], m * sizeof(int64_t))
        memcpy(&ids[(2 * n + i) * m], &k.out_klen[src * m], m * sizeof(int64_t))
        memcpy(&bound[i * m], &k.out_bound[src * m], m)
        memcpy(&rv[i * f], &k.out_rv[src * f], f * sizeof(double))
        memcpy(&rt[i * f], &k.out_rt[src * f], f)
    for i in range(n):
        dst = first + i
        k.out_pattern[dst] = pat[i]
        k.out_at[dst] = at[i]
        k.out_cr[dst] = at[n + i]
        k.out_key[dst] = key[i]
        k.out_start[dst] = se[2 * i]
        k.out_end[dst] = se[2 * i + 1]
        k.out_deadline[dst] = se[2 * n + i]
        memcpy(&k.out_ids[dst * m], &ids[i * m], m * sizeof(int64_t))
        memcpy(&k.out_ev[dst * m], &ids[(n + i) * m], m * sizeof(int64_t))
        memcpy(&k.out_klen[dst * m], &ids[(2 * n + i) * m], m * sizeof(int64_t))
        memcpy(&k.out_bound[dst * m], &bound[i * m], m)
        memcpy(&k.out_rv[dst * f], &rv[i * f], f * sizeof(double))
        memcpy(&k.out_rt[dst * f], &rt[i * f], f)
    free(pat); free(at); free(key); free(se); free(ids); free(bound); free(rv); free(rt)
