# Negation (included by _kernel.pyx).
#
# A negated event kills the partial matches it falls inside (negative / cancel, runtime/firing.py's
# negation checks); a match whose window must close before it can be sure no negative event
# comes (an end negation) waits as a pending entry, in a heap by deadline, and is emitted when
# the input's time passes it (close_pending) unless a negative event violates it first
# (emission.emits). Negative events are buffered per key for the emission checks; sweeps drop
# those no live window can still reach (sweep_negatives).


cdef int buffered_violation(Kernel k, Group g, int r, int32_t t, int64_t key, double w) except -1 nogil:
    """Whether a buffered negative event of the key violates the token (emission check)."""
    cdef int ki, j, ns = g.nslots
    cdef int32_t b
    for ki in range(g.rg_emit_start[r], g.rg_emit_start[r + 1]):
        j = g.rg_emit[ki]
        b = g.nb_heads[key * g.nnegs + j]
        while b >= 0:
            if violates(k, g, j, &g.tk_slots[<Py_ssize_t>t * ns], g.tk_first_ts[t], g.tk_last_ts[t],
                             g.tk_first_pos[t], g.tk_last_pos[t], g.nb_ev[b], w):
                return 1
            b = g.nb_next[b]
    return 0


cdef int wait(Kernel k, Group g, int role, int32_t t, int64_t key) except -1 nogil:
    """An end negation: the match is emitted when its window closes, unless a negative
    event violates it first (emission.emits)."""
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


cdef int violates(Kernel k, Group g, int j, int64_t* slots, double first_ts, double last_ts, int64_t first_pos,
                  int64_t last_pos, int64_t x, double w) except -1 nogil:
    """Whether negative event ``x`` invalidates a (partial) match for negation ``j``; ``w``
    bounds a negation at the start or end of its SEQ (GroupRuntime.violates)."""
    cdef int ki
    cdef int64_t ev, best = -1
    # P, Q: the nearest steps bound on each side (beside an optional step, the slots up to a
    # required one); none bound on a side: the window's bound (GroupRuntime.violates)
    for ki in range(g.neg_prev_start[j], g.neg_prev_start[j + 1]):
        ev = list_last(g, g.neg_prev[ki], slots[g.neg_prev[ki]])
        if ev > best:  # the latest in arrival order: the store keeps it (composite events too)
            best = ev
    if best >= 0:
        if not after(k, x, best):
            return 0
    elif not isnan(w):
        if g.count_window:
            if <double>k.store.pos[x] <= <double>last_pos - w:
                return 0
        elif k.store.ts[x] < last_ts - w:
            return 0
    best = -1
    for ki in range(g.neg_next_start[j], g.neg_next_start[j + 1]):
        ev = list_first(g, g.neg_next[ki], slots[g.neg_next[ki]])
        if ev >= 0 and (best < 0 or ev < best):
            best = ev
    if best >= 0:
        if not after(k, best, x):
            return 0
    elif not isnan(w):
        if g.count_window:
            if <double>k.store.pos[x] >= <double>first_pos + w:
                return 0
        elif k.store.ts[x] > first_ts + w:
            return 0
    for ki in range(g.neg_cond_start[j], g.neg_cond_start[j + 1]):
        if not eval_cond(k, g, g.neg_cond[ki], slots, NEG_SLOT, x):
            return 0
    return 0 if binds(g, slots, x) else 1


cdef inline bint after(Kernel k, int64_t x, int64_t ev) nogil:
    """Whether stored event ``x`` comes after ``ev``: by time under the tie rules strict and either, else
    in arrival order, which is the store's (a composite event right after its emitter)."""
    if k.tie_strict or k.tie_either:
        return k.store.ts[x] > k.store.ts[ev]
    return x > ev


cdef int negative(Kernel k, Group g, int etype, int64_t key, int64_t x) except -1 nogil:
    """Record ``x`` as a negative event of the key (GroupRuntime.negative): buffer it,
    cancel waiting matches it violates, and cancel (arrival) or, at the end of the
    timestamp group (strict), block or drop the partial matches of pushed negations.
    Returns whether the event must stay in the store."""
    cdef int ki, c, j, ok, keep = 0, ns = g.nslots, role
    cdef int32_t d, prev, nxt
    for ki in range(g.type_neg_start[etype], g.type_neg_start[etype + 1]):
        j = g.type_neg[ki]
        ok = 1
        for c in range(g.neg_event_start[j], g.neg_event_start[j + 1]):
            if not eval_cond(k, g, g.neg_event[c], g.unbound, NEG_SLOT, x):
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
            if (g.role_pending[role] >> j) & 1 and violates(k, 
                    g, j, &g.pd_slots[<Py_ssize_t>d * ns], g.pd_first_ts[d], g.pd_last_ts[d],
                    g.pd_first_pos[d], g.pd_last_pos[d], x, g.role_window[role]):
                g.pd_flags[d] &= ~1
            prev = d
            d = nxt
        if g.neg_pushed[j]:
            if k.tie_strict:
                with gil:
                    k.kills.append((g, key, j, x))
                    k.nkills += 1
                keep = 1
            else:
                cancel(k, g, key, j, x)
                if k.grp_closing and g.timeout_mask:  # (either: expire checks them, ties._match_group)
                    with gil:
                        k.kills.append((g, key, j, x))
                        k.nkills += 1
    return keep


cdef int cancel(Kernel k, Group g, int64_t key, int j, int64_t x) except -1 nogil:
    """A pushed negation: drop (or block, where P can still grow) the partial matches of
    the key that ``x`` violates (GroupRuntime.cancel)."""
    cdef int ki, lid, ns = g.nslots
    cdef int32_t t, prev, nxt
    cdef bint growable
    for ki in range(g.neg_place_start[j], g.neg_place_start[j + 1]):
        lid = <int>(key * g.nplaces + g.neg_place[ki])
        growable = (g.place_growable[g.neg_place[ki]] >> j) & 1
        t = g.heads[lid]
        prev = -1
        while t >= 0:
            nxt = g.tk_next[t]
            if violates(k, g, j, &g.tk_slots[<Py_ssize_t>t * ns], g.tk_first_ts[t], g.tk_last_ts[t],
                             g.tk_first_pos[t], g.tk_last_pos[t], x, NAN):
                if growable:
                    g.tk_blocked[t] |= (<int64_t>1) << j
                else:
                    if g.timed and g.tk_counted[t]:
                        with gil:  # (LIMIT: the quotas)
                            uncount(g, key, t, -1)
                    g.tk_users[t] = 0  # not alive: no timeout
                    unlink(k, g, lid, prev, t)
                    t = nxt
                    continue
            prev = t
            t = nxt
    return 0


cdef int close_pending(Kernel k, double ts, int64_t pos, bint all_) except -1 nogil:
    """Stream time reached (ts, pos): emit the waiting matches whose window it closes
    (all of them at the end of the stream)."""
    cdef Py_ssize_t gi
    if k.has_timeouts and not all_:  # (emission.close_pending: timeouts first; flush: after)
        with gil:  # (the deadlines' heap)
            close_deadlines(k, ts, pos, False)
    for gi in range(k.ngroups):
        close_group(k, <Group>k.gptr[gi], ts, pos, all_)
    if k.has_timeouts and all_:
        with gil:
            close_deadlines(k, ts, pos, True)
    return 0


cdef inline bint pending_due(Kernel k, double ts, int64_t pos) noexcept nogil:
    """Whether close_pending has anything to do at (ts, pos) before the end: a deadline
    (timeouts: their heap is Python's) or a waiting match whose window the time closes.
    Checked inline per event: most events close nothing, and the call costs more."""
    cdef Py_ssize_t gi
    if k.has_timeouts:
        return True
    for gi in range(k.ngroups):
        if due_in(<Group>k.gptr[gi], ts, pos):
            return True
    return False


cdef inline bint due_in(Group g, double ts, int64_t pos) noexcept nogil:
    """Whether (ts, pos) closes ``g``'s first waiting match (close_group's test)."""
    if not g.heap_n:
        return False
    if g.count_window:
        return <double>pos >= g.pd_thr[g.heap[0]]
    return ts > g.pd_thr[g.heap[0]]


cdef int close_group(Kernel k, Group g, double ts, int64_t pos, bint all_) except -1 nogil:
    """close_pending for shared net ``g``."""
    cdef int32_t d
    while g.heap_n:
        d = g.heap[0]
        if not all_ and not due_in(g, ts, pos):
            break
        g.heap_pop()
        if g.pd_flags[d] & 1:
            if k.grp_closing:  # (ties._close_in_group: emitted by the group's first event past the window)
                k.emit_cr = group_closer(k, g.pd_thr[d])
            emit_pending(k, g, d)
            k.emit_cr = -1
        g.pd_flags[d] = (g.pd_flags[d] & ~1) | 4
        if not (g.pd_flags[d] & 2):
            g.drop_pending(d)
    return 0


cdef int64_t group_closer(Kernel k, double thr) noexcept nogil:
    """The first input event of the open timestamp group at or past a count window's end
    ``thr`` (ties._closer): its store index; -3 - its position for an event no net reads
    (not stored); -2 the group's clock point."""
    cdef Py_ssize_t j
    cdef int64_t best = -2, at = -1
    for j in range(k.grp_n):
        if k.grp_from[j] == 0 and <double>k.store.pos[k.grp_ev[j]] >= thr:
            if at < 0 or k.store.pos[k.grp_ev[j]] < at:
                best = k.grp_ev[j]
                at = k.store.pos[best]
    for j in range(k.grp_un):
        if <double>k.grp_upos[j] >= thr and (at < 0 or k.grp_upos[j] < at):
            at = k.grp_upos[j]
            best = -3 - at
    if k.grp_clock >= 0 and <double>k.grp_clock >= thr and (at < 0 or k.grp_clock < at):
        best = -2
    return best


cdef int emit_pending(Kernel k, Group g, int32_t d) except -1 nogil:
    return emit(k, g, g.role_pattern[g.pd_role[d]], &g.pd_slots[<Py_ssize_t>d * g.nslots], g.pd_first_ts[d],
                     g.pd_last_ts[d], g.pd_key[d], NAN)


cdef int sweep_negatives(Kernel k, Group g, double ts, int64_t pos) except -1 nogil:
    """Drop buffered negative events no window can reach, and dead waiting matches from
    their keys' lists (GroupRuntime.sweep)."""
    cdef Py_ssize_t lid, key
    cdef int32_t b, prev, nxt, d
    cdef bint keep
    if not isnan(g.window):
        for lid in range(g.nkeys * g.nnegs):
            b = g.nb_heads[lid]
            prev = -1
            while b >= 0:
                nxt = g.nb_next[b]
                if g.count_window:
                    keep = <double>k.store.pos[g.nb_ev[b]] > <double>pos - g.window
                else:
                    keep = k.store.ts[g.nb_ev[b]] >= ts - g.window
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
