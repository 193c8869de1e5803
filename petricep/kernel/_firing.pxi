# Stepping a shared net by one event (included by _kernel.pyx).
#
# The compiled counterpart of runtime/firing.py (GroupRuntime.step / fire / store) and of
# Engine._process / _accept: an event enters each group that reads its type (enter), fires the
# transitions its type enables from every stored token of its key (step / fire, guards through
# _interp.pxi), and the tokens it created are stored or emitted (accept, store_created). The
# order of tokens and of firings is the engine's, so matches come out in the same order.
# Tie rule ``either``'s timestamp groups are _ties.pxi's; ``strict`` runs its cancellations at
# the group's end.


cdef bint enter(Kernel k, Group g, int etype, int64_t key, int64_t ev) except -1 nogil:
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
    g.cur_key = key
    k.now_ts = k.store.ts[ev]
    k.now_pos = k.store.pos[ev]
    k.now_ev = ev
    if g.type_start[etype + 1] > g.type_start[etype]:  # (else it is only a negative event here)
        if g.has_repeat:
            step_moded(k, g, etype, key, ev, k.now_ts, k.now_pos)
        else:
            step(k, g, etype, key, ev, k.now_ts, k.now_pos)
    if g.ncreated:
        kept = True
        store_created(k, g, key)
    if g.type_neg_start[etype + 1] > g.type_neg_start[etype] and negative(k, g, etype, key, ev):
        kept = True
    return kept


cdef int step(Kernel k, Group g, int etype, int64_t key, int64_t ev, double ts, int64_t pos) except -1 nogil:
    """Extend every partial match of ``key`` by the event (GroupRuntime.step); new tokens
    are appended to ``g.created``."""
    cdef int e, ki, src, base, nen
    cdef int32_t t, nxt, prev, nt
    cdef int64_t moved, floor = NO_KEY
    cdef int32_t enabled[256]
    cdef const int32_t* en
    if g.strategy == PARTITION_CONTIGUITY and g.partitioned:
        floor = g.floors[key]
    elif g.strategy >= STRICT_CONTIGUITY:
        floor = k.last_key
    base = <int>(key * g.nplaces)
    for e in range(g.type_start[etype], g.type_start[etype + 1]):
        src = g.ent_src[e]
        en = enabled_at(k, g, e, ev, enabled, &nen)
        if src == g.start:
            for ki in range(nen):
                nt = fire(k, g, en[ki], -1, ev, ts, pos, floor)
                if nt >= 0:
                    g.add_created(nt)
        t = g.heads[base + src]
        prev = -1
        while t >= 0:
            nxt = g.tk_next[t]
            if g.expired(t, ts, pos) or (g.strategy >= STRICT_CONTIGUITY and g.tk_last_key[t] < floor):
                unlink(k, g, base + src, prev, t)
                t = nxt
                continue
            moved = 0
            for ki in range(nen):
                nt = fire(k, g, en[ki], t, ev, ts, pos, floor)
                if nt >= 0:
                    g.add_created(nt)
                    moved |= g.tk_users[nt]
            if moved and g.strategy == STNM:
                if g.timed and g.tk_counted[t] & moved:
                    with gil:  # (LIMIT: the quotas)
                        uncount(g, key, t, moved)
                g.tk_users[t] &= ~moved
                if g.tk_users[t] == 0:
                    unlink(k, g, base + src, prev, t)
                    t = nxt
                    continue
            prev = t
            t = nxt
    return 0


cdef int step_moded(Kernel k, Group g, int etype, int64_t key, int64_t ev, double ts, int64_t pos) except -1 nogil:
    """:func:`step` for a net with GREEDY / RELUCTANT lists (enter picks it): each token's
    firings by the event are chosen among (:func:`prefer`) before they count as moving it. A
    copy of step's loop, so that the other nets' loop stays as it was (instructions per row)."""
    cdef int e, ki, src, base, nen
    cdef int32_t t, nxt, prev, nt
    cdef int64_t moved, floor = NO_KEY
    cdef int32_t enabled[256]
    cdef int32_t fired_by[256]  # the transition of each token fired from one token
    cdef Py_ssize_t c0
    cdef const int32_t* en
    if g.strategy == PARTITION_CONTIGUITY and g.partitioned:
        floor = g.floors[key]
    elif g.strategy >= STRICT_CONTIGUITY:
        floor = k.last_key
    base = <int>(key * g.nplaces)
    for e in range(g.type_start[etype], g.type_start[etype + 1]):
        src = g.ent_src[e]
        en = enabled_at(k, g, e, ev, enabled, &nen)
        if src == g.start:
            for ki in range(nen):
                nt = fire(k, g, en[ki], -1, ev, ts, pos, floor)
                if nt >= 0:
                    g.add_created(nt)
        t = g.heads[base + src]
        prev = -1
        while t >= 0:
            nxt = g.tk_next[t]
            if g.expired(t, ts, pos) or (g.strategy >= STRICT_CONTIGUITY and g.tk_last_key[t] < floor):
                unlink(k, g, base + src, prev, t)
                t = nxt
                continue
            moved = 0
            c0 = g.ncreated
            for ki in range(nen):
                nt = fire(k, g, en[ki], t, ev, ts, pos, floor)
                if nt >= 0:
                    g.add_created(nt)
                    fired_by[g.ncreated - 1 - c0] = en[ki]
            if g.pl_repeat_start[src + 1] > g.pl_repeat_start[src] and g.ncreated - c0 > 1:
                prefer(g, src, c0, fired_by)
            for ki in range(<int>c0, <int>g.ncreated):
                moved |= g.tk_users[g.created[ki]]
            if moved and g.strategy == STNM:
                if g.timed and g.tk_counted[t] & moved:
                    with gil:  # (LIMIT: the quotas)
                        uncount(g, key, t, moved)
                g.tk_users[t] &= ~moved
                if g.tk_users[t] == 0:
                    unlink(k, g, base + src, prev, t)
                    t = nxt
                    continue
            prev = t
            t = nxt
    return 0


cdef inline bint rule_move(Group g, int r0, int r1, int tr) noexcept nogil:
    """Whether transition ``tr`` is a move of the GREEDY / RELUCTANT rule of entries
    ``r0..r1``: a list's take (one entry), or for a group's rule over several steps (joined
    entries) any move binding one of their slots."""
    cdef int r
    if r0 == r1:
        return g.tr_kleene[tr] == KLEENE_TAKE and g.tr_slot[tr] == g.pl_repeat[r0] >> 1
    for r in range(r0, r1 + 1):
        if g.tr_slot[tr] == g.pl_repeat[r] >> 1:
            return True
    return False


cdef void prefer(Group g, int src, Py_ssize_t c0, const int32_t* fired_by) noexcept nogil:
    """GREEDY / RELUCTANT lists growing at ``src`` (runtime firing._prefer): where one event
    both extends such a list (its take) and fires another transition from the same token, a
    greedy list keeps only the extension and a reluctant one only the other, for the patterns
    both fired for; a token left with no pattern is released and leaves ``g.created`` (from
    ``c0``: this token's firings, ``fired_by`` their transitions). A group's rule over several
    steps spans entries joined with the next (``pl_repeat_joined``)."""
    cdef int r0, r1, j, tr
    cdef int end = g.pl_repeat_start[src + 1]
    cdef int n = <int>(g.ncreated - c0), m
    cdef int64_t keep
    cdef bint greedy, take, any_take, any_other
    cdef int32_t nt
    r0 = g.pl_repeat_start[src]
    while r0 < end:
        r1 = r0
        while r1 + 1 < end and g.pl_repeat_joined[r1]:
            r1 += 1
        greedy = g.pl_repeat[r1] & 1
        any_take = any_other = False
        keep = 0
        for j in range(n):
            if g.created[c0 + j] < 0:
                continue
            tr = fired_by[j]
            take = rule_move(g, r0, r1, tr)
            if take:
                any_take = True
            else:
                any_other = True
            if take == greedy:
                keep |= g.tk_users[g.created[c0 + j]]
        if any_take and any_other:
            for j in range(n):
                nt = g.created[c0 + j]
                if nt < 0:
                    continue
                tr = fired_by[j]
                if rule_move(g, r0, r1, tr) != greedy:
                    g.tk_users[nt] &= ~keep
                    if g.tk_users[nt] == 0:
                        g.release(nt)
                        g.created[c0 + j] = -1
        r0 = r1 + 1
    m = 0
    for j in range(n):  # (the kept ones in firing order, with their transitions)
        if g.created[c0 + j] >= 0:
            g.created[c0 + m] = g.created[c0 + j]
            m += 1
    g.ncreated = c0 + m


cdef inline const int32_t* enabled_at(Kernel k, Group g, int e, int64_t ev, int32_t* scratch, int* n) except NULL nogil:
    """Entry ``e``'s transitions the event enables (their input-arc conditions hold), ``n``
    of them: the entry's own array where none has such conditions (the lowering's
    ``ent_arcs``; no list made per event), else those that hold, in ``scratch``."""
    cdef int ki, tr, m = 0
    if not g.ent_arcs[e]:
        n[0] = g.ent_tr_start[e + 1] - g.ent_tr_start[e]
        return &g.ent_trs[g.ent_tr_start[e]]
    for ki in range(g.ent_tr_start[e], g.ent_tr_start[e + 1]):
        tr = g.ent_trs[ki]
        if g.tr_arc_start[tr + 1] == g.tr_arc_start[tr] or arc_ok(k, g, tr, ev):
            if m < 256:
                scratch[m] = tr
                m += 1
    n[0] = m
    return scratch


cdef int arc_ok(Kernel k, Group g, int tr, int64_t ev) except -1 nogil:
    cdef int ki
    for ki in range(g.tr_arc_start[tr], g.tr_arc_start[tr + 1]):
        if not eval_cond(k, g, g.tr_arc[ki], g.unbound, g.tr_slot[tr], ev):
            return 0
    return 1


cdef inline int64_t admit_users(Kernel k, Group g, int tr, int32_t t, int64_t users, const int64_t* slots, double ts,
                         int64_t pos, int64_t floor) except -1 nogil:
    """The users of stored token ``t`` for which firing ``tr`` with the event (ts, pos) keeps
    the window (per pattern where they disagree), contiguity and, under the tie rule strict,
    the order; 0: none."""
    cdef int64_t admitted, lo, hi, cur
    cdef int ki
    cdef double w
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
        for ki in range(g.tr_pw_start[tr], g.tr_pw_start[tr + 1]):
            w = g.pw_window[ki]
            if isnan(w):
                admitted |= g.pw_mask[ki]
            elif g.count_window:
                hi = g.tk_last_pos[t] if g.tk_last_pos[t] > pos else pos
                lo = g.tk_first_pos[t] if g.tk_first_pos[t] < pos else pos
                if hi - lo < <int64_t>w:
                    admitted |= g.pw_mask[ki]
            elif ts - g.tk_first_ts[t] <= w:
                admitted |= g.pw_mask[ki]
        users &= admitted
        if users == 0:
            return 0
    if g.strategy >= STRICT_CONTIGUITY and g.tk_last_key[t] < floor:
        return 0
    if k.tie_strict:
        for ki in range(g.tr_order_start[tr], g.tr_order_start[tr + 1]):
            cur = slots[g.tr_order[ki]]
            if g.slot_kleene[g.tr_order[ki]]:
                cur = g.nd_ev[cur]  # a list: its last element
            if k.store.ts[cur] >= ts:
                return 0
    return users


cdef int32_t fire(Kernel k, Group g, int tr, int32_t t, int64_t ev, double ts, int64_t pos,
                  int64_t floor) except -2 nogil:
    """Fire transition ``tr`` with token ``t`` (-1: the empty partial match) and event
    ``ev``: the new token, or -1 (GroupRuntime.fire)."""
    cdef int64_t users, cur
    cdef int ki, sl, ok, ns = g.nslots
    cdef const int64_t* slots
    cdef int64_t* dst
    cdef int32_t nt
    if t < 0:
        users = g.all_users & g.tr_mask[tr]
        slots = g.unbound
    else:
        users = g.tk_users[t] & g.tr_mask[tr]
        slots = &g.tk_slots[<Py_ssize_t>t * ns]
        if g.blocking and g.tk_blocked[t] & g.tr_blocked_by[tr]:
            return -1
    if users == 0:
        return -1
    if t >= 0:
        users = admit_users(k, g, tr, t, users, slots, ts, pos, floor)
        if users == 0:
            return -1
    sl = g.tr_slot[tr]
    cur = ev
    if g.tr_kleene[tr]:  # the new list state (kleene_start / kleene_take)
        cur = kleene_node(k, g, sl, <int32_t>slots[sl] if g.tr_kleene[tr] == KLEENE_TAKE else -1, ev)
    for ki in range(g.tr_guard_start[tr], g.tr_guard_start[tr + 1]):
        if not eval_cond(k, g, g.tr_guard[ki], slots, sl, cur):
            return -1
    nt = g.alloc()
    if g.room <= 0:  # (the budget of live partial matches: counted again)
        check_room(k, g)
    if t >= 0:  # alloc may have moved the arena
        slots = &g.tk_slots[<Py_ssize_t>t * ns]
    dst = &g.tk_slots[<Py_ssize_t>nt * ns]
    for ki in range(ns):  # (a few slots: a loop, where memcpy is a call)
        dst[ki] = slots[ki]
    dst[sl] = cur
    g.tk_place[nt] = g.tr_dst[tr]
    g.tk_next[nt] = -1
    g.tk_users[nt] = users
    if g.blocking:
        g.tk_blocked[nt] = (g.tk_blocked[t] & ~g.tr_clears[tr]) if t >= 0 else 0
    if g.timed:
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
    ki = g.tr_defer_start[tr]
    while ki < g.tr_defer_start[tr + 1]:  # every element again (a group's: every iteration)
        if g.tr_defer[ki + 2] == 0:
            ok = check_elements(k, g, g.tr_defer[ki], g.tr_defer[ki + 1], &g.tk_slots[<Py_ssize_t>nt * ns])
        else:
            ok = check_iterations(k, g, &g.tr_defer[ki], &g.tk_slots[<Py_ssize_t>nt * ns])
        if not ok:
            g.release(nt)
            return -1
        # (a negative number of steps: a group with optional steps, replayed in order)
        ki += 3 + (g.tr_defer[ki + 2] if g.tr_defer[ki + 2] >= 0 else -g.tr_defer[ki + 2])
    if t >= 0 and g.timeout_mask:
        g.tk_ext[t] |= users
    return nt


cdef inline void unlink(Kernel k, Group g, int list_id, int32_t prev, int32_t t) noexcept nogil:
    cdef int32_t nxt = g.tk_next[t]
    if prev < 0:
        g.heads[list_id] = nxt
    else:
        g.tk_next[prev] = nxt
    if g.tails[list_id] == t:
        g.tails[list_id] = prev
    if g.timed and g.tk_pins[t]:  # a deadline or a quota still refers to it
        g.tk_next[t] = g.zombies
        g.zombies = t
    else:
        g.release(t)


cdef int accept(Kernel k, Group g, int32_t t, int64_t key) except -1 nogil:
    """A token reached a place patterns emit from (accept_at with its fields)."""
    return accept_at(k, g, t, g.tk_place[t], g.tk_users[t], &g.tk_slots[<Py_ssize_t>t * g.nslots],
                     g.tk_first_ts[t], g.tk_last_ts[t], key)


cdef int accept_at(Kernel k, Group g, int32_t t, int place, int64_t users, int64_t* slots, double first_ts,
                   double last_ts, int64_t key) except -1 nogil:
    """A partial match reached ``place``, which patterns emit from: each role group checks
    once, each of its patterns the match serves emits (Engine._accept, emission_ok). ``t``:
    its token, or -1 where the plain step emits it without one (fire_plain: no count window,
    iteration condition, buffered negation or pending role, the parts that read the token)."""
    cdef int r, ki, ok, j
    cdef double w
    for r in range(g.place_rg_start[place], g.place_rg_start[place + 1]):
        if not (users & g.rg_mask[r]):
            continue
        w = g.rg_window[r]
        if not isnan(w):
            if g.count_window:
                if g.tk_last_pos[t] - g.tk_first_pos[t] >= <int64_t>w:
                    continue
            elif last_ts - first_ts > w:
                continue
        ok = 1
        for ki in range(g.rg_final_start[r], g.rg_final_start[r + 1]):
            j = g.cond_iter_slot[g.rg_final[ki]]
            if j >= 0:  # an iteration condition: every element
                if not check_elements(k, g, g.rg_final[ki], j, slots):
                    ok = 0
                    break
            elif not eval_cond(k, g, g.rg_final[ki], slots, -1, -1):
                ok = 0
                break
        if ok and g.rg_emit_start[r + 1] > g.rg_emit_start[r]:
            ok = not buffered_violation(k, g, r, t, key, w)
        if not ok:
            continue
        for ki in range(g.rg_role_start[r], g.rg_role_start[r + 1]):
            if users & g.role_bit[ki]:
                if g.role_pending[ki]:
                    wait(k, g, ki, t, key)
                else:
                    emit(k, g, g.role_pattern[ki], slots, first_ts, last_ts, key, NAN)
    return 0


cdef int store_created(Kernel k, Group g, int64_t key) except -1 nogil:
    """Accepted tokens emit; tokens that can still move join their (key, place) list
    (GroupRuntime.store), the others are freed."""
    cdef Py_ssize_t i
    cdef int32_t t
    if k.tie_either:
        return store_group_created(k, g, key, NULL)
    for i in range(g.ncreated):
        t = g.created[i]
        if g.place_rg_start[g.tk_place[t] + 1] > g.place_rg_start[g.tk_place[t]]:
            k.completed += 1
            accept(k, g, t, key)
    for i in range(g.ncreated):
        t = g.created[i]
        if g.place_exits[g.tk_place[t]]:
            link(g, key, t)
        else:
            g.release(t)
    if g.watch_mask:
        with gil:  # (ON TIMEOUT, LIMIT: deadlines and quotas)
            watch(k, g, key)
    k.created += g.ncreated
    g.ncreated = 0
    if g.over:  # a count in the step found the net over its budget
        end_check(k, g)
    return 0


cdef inline void link(Group g, int64_t key, int32_t t) noexcept nogil:
    """Token ``t`` joins the end of its (key, place) list."""
    cdef int lid = <int>(key * g.nplaces + g.tk_place[t])
    g.tk_next[t] = -1
    if g.tails[lid] < 0:
        g.heads[lid] = t
    else:
        g.tk_next[g.tails[lid]] = t
    g.tails[lid] = t


cdef int store_group_created(Kernel k, Group g, int64_t key, const int64_t* cr) except -1 nogil:
    """store_created for a key's fixpoint (tie rule either, ties._fixpoint): the tokens are
    stored and watched first (a LIMIT may drop some, clearing their users), then those at
    accepting places complete and emit."""
    cdef Py_ssize_t i
    cdef int32_t t
    for i in range(g.ncreated):
        t = g.created[i]
        if g.place_exits[g.tk_place[t]]:
            link(g, key, t)
    if g.watch_mask:
        with gil:  # (ON TIMEOUT, LIMIT: deadlines and quotas)
            watch(k, g, key)
    for i in range(g.ncreated):
        t = g.created[i]
        if g.place_rg_start[g.tk_place[t] + 1] > g.place_rg_start[g.tk_place[t]]:
            k.emit_cr = cr[i] if cr != NULL else -1
            accept(k, g, t, key)
            k.emit_cr = -1
        if g.place_accepting[g.tk_place[t]]:
            k.completed += 1
    for i in range(g.ncreated):
        t = g.created[i]
        if not g.place_exits[g.tk_place[t]]:
            g.release(t)
    k.created += g.ncreated
    g.ncreated = 0
    if g.over:  # a count in the step found the net over its budget
        end_check(k, g)
    return 0
