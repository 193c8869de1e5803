# Stepping a plain shared net (included by _kernel.pyx).
#
# enter / step / fire (_firing.pxi) serve every construct the kernel runs: negations, Kleene
# lists, contiguity, count windows, per-pattern windows, LIMIT and ON TIMEOUT, the tie rules.
# A net that uses none of them (Group.plain, fixed when the group is bound from its lowered
# arrays) pays for their checks at every firing: ~1000 instructions an event on W1. This is
# the same step with those parts left out -- the same tokens in the same order, the same
# matches -- so that such a net runs the firing loop only: the type's entries, input-arc
# guards, the tokens of the key (window expiry, skip-till-next-match), the guards, a new token.


cdef bint plain_net(object lg):
    """Whether lowered group ``lg`` needs none of the constructs enter_plain leaves out (worked
    out once per lowered group: views_of)."""
    if len(lg.neg_type) or lg.timeout_mask or lg.limit_mask or lg.count_window or lg.strategy >= STRICT_CONTIGUITY:
        return False
    if len(lg.gap_slot):  # (per-step gaps: a token's gap end, Group.expired)
        return False
    if len(lg.pw_mask) or len(lg.tr_defer) or lg.tr_kleene.any() or lg.slot_kleene.any() or lg.role_pending.any():
        return False
    return not (lg.tr_blocked_by.any() or lg.tr_clears.any() or len(lg.rg_emit))


cdef bint enter_plain(Kernel k, Group g, int etype, int64_t key, int64_t ev) except -1 nogil:
    """enter for a plain group (not under the tie rule strict: the order check): returns
    whether a token keeps the event."""
    cdef double ts
    cdef int64_t pos
    if g.type_start[etype + 1] == g.type_start[etype]:
        return False
    if key >= g.nkeys:
        g.reserve_keys(key + 1)
    g.ncreated = 0
    g.cur_key = key
    g.ndirect = 0
    ts = k.store.ts[ev]
    pos = k.store.pos[ev]
    k.now_ts = ts
    k.now_pos = pos
    k.now_ev = ev
    step_plain(k, g, etype, key, ev, ts, pos)
    if g.ncreated:
        store_created(k, g, key)
        return True
    return g.ndirect > 0  # (as a token made and freed at once kept it: the emitted matches' order reads it)


cdef int step_plain(Kernel k, Group g, int etype, int64_t key, int64_t ev, double ts, int64_t pos) except -1 nogil:
    """step without contiguity floors and LIMIT counts."""
    cdef int e, ki, src, base, nen
    cdef int32_t t, nxt, prev, nt
    cdef int64_t moved
    cdef int32_t enabled[256]
    cdef const int32_t* en
    cdef bint stnm = g.strategy == STNM
    base = <int>(key * g.nplaces)
    for e in range(g.type_start[etype], g.type_start[etype + 1]):
        src = g.ent_src[e]
        en = enabled_at(k, g, e, ev, enabled, &nen)
        if src == g.start:
            for ki in range(nen):
                fire_plain(k, g, en[ki], -1, ev, ts, pos, key)
        t = g.heads[base + src]
        prev = -1
        while t >= 0:
            nxt = g.tk_next[t]
            if ts - g.tk_first_ts[t] > g.window:  # (expired: a NaN window never is)
                unlink(k, g, base + src, prev, t)
                t = nxt
                continue
            moved = 0
            for ki in range(nen):
                moved |= fire_plain(k, g, en[ki], t, ev, ts, pos, key)
            if moved and stnm:
                g.tk_users[t] &= ~moved
                if g.tk_users[t] == 0:
                    unlink(k, g, base + src, prev, t)
                    t = nxt
                    continue
            prev = t
            t = nxt
    return 0


cdef int64_t fire_plain(Kernel k, Group g, int tr, int32_t t, int64_t ev, double ts, int64_t pos,
                        int64_t key) except? -1 nogil:
    """fire without blocking negations, per-pattern windows, contiguity, order checks,
    Kleene lists and timeouts: the new token joins the step's created ones, or, where the
    transition ends at a place patterns emit from and that no transition leaves (Group.direct:
    every such place of the group is one), the match is accepted at once (store_created would
    accept it first and free it; accepted in the order they are made, as store_created does).
    Returns the users the new partial match carries (0: the transition did not fire; all 64
    bits, -1, is a mask too: ``except?``)."""
    cdef int64_t users
    cdef int ki, sl, ns = g.nslots, dp
    cdef double first_ts, last_ts
    cdef const int64_t* slots
    cdef int64_t* dst
    cdef int32_t nt
    if t < 0:
        users = g.all_users & g.tr_mask[tr]
        slots = g.unbound
    else:
        users = g.tk_users[t] & g.tr_mask[tr]
        slots = &g.tk_slots[<Py_ssize_t>t * ns]
    if users == 0:
        return 0
    if t >= 0 and ts - g.tk_first_ts[t] > g.tr_window[tr]:  # (admit_users: a NaN window admits)
        return 0
    sl = g.tr_slot[tr]
    for ki in range(g.tr_guard_start[tr], g.tr_guard_start[tr + 1]):
        if not eval_cond(k, g, g.tr_guard[ki], slots, sl, ev):
            return 0
    dp = g.tr_dst[tr]
    if g.direct and g.place_rg_start[dp + 1] > g.place_rg_start[dp]:
        dst = g.slotbuf  # (scratch: every reader of it fills it first)
        for ki in range(ns):
            dst[ki] = slots[ki]
        dst[sl] = ev
        first_ts = last_ts = ts
        if t >= 0:
            first_ts = g.tk_first_ts[t] if g.tk_first_ts[t] < ts else ts  # (as a token's, below)
            last_ts = g.tk_last_ts[t] if g.tk_last_ts[t] > ts else ts
        k.created += 1
        k.completed += 1
        g.ndirect += 1
        accept_at(k, g, -1, dp, users, dst, first_ts, last_ts, key)
        return users
    nt = g.alloc()
    if g.room <= 0:  # (the budget of live partial matches: counted again)
        check_room(k, g)
    if t >= 0:  # alloc may have moved the arena
        slots = &g.tk_slots[<Py_ssize_t>t * ns]
    dst = &g.tk_slots[<Py_ssize_t>nt * ns]
    for ki in range(ns):
        dst[ki] = slots[ki]
    dst[sl] = ev
    g.tk_place[nt] = dp
    g.tk_next[nt] = -1
    g.tk_users[nt] = users  # (tk_blocked, tk_ext, tk_counted: a plain net has none: Group.timed, blocking)
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
    g.add_created(nt)
    return users
