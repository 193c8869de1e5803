# Tie rule ``either``: a timestamp group's events at once (included by _kernel.pyx).
#
# The compiled counterpart of runtime/ties.py (run_group / _fixpoint): the events of one
# timestamp are buffered (buffer, join_group), and when the group closes each key of it runs
# to a fixpoint (run_group, group_keys, fixpoint): every event of the group may extend every
# token the others made, each distinct token (place, users, slots; TokenSet) made once, so the
# matches do not depend on the order of simultaneous events. settle_group then emits and
# stores in the engine's order. The one-event step it builds on is _firing.pxi's.


cdef int buffer(Kernel k, const Rows* r, int etype, double ts, int64_t pos, Py_ssize_t i) except -1 nogil:
    """An event (row ``i``) of the open timestamp group: into the store, and onto the group."""
    cdef Py_ssize_t ev, gi, ng = k.ngroups
    ev = store_event(k, r, i, ts, pos)
    grp_reserve(k)
    k.grp_ev[k.grp_n] = ev
    k.grp_type[k.grp_n] = etype
    k.grp_from[k.grp_n] = 0
    for gi in range(ng):
        k.grp_keys[k.grp_n * ng + gi] = row_key(r, gi, i)
    k.grp_n += 1
    return 0


cdef int grp_reserve(Kernel k) except -1 nogil:
    """Room for one more event in the open timestamp group."""
    cdef Py_ssize_t ng = k.ngroups
    if k.grp_n >= k.grp_cap:
        k.grp_cap = max(16, 2 * k.grp_cap)
        k.grp_ev = <int64_t*>grow(k.grp_ev, k.grp_cap, sizeof(int64_t))
        k.grp_type = <int32_t*>grow(k.grp_type, k.grp_cap, sizeof(int32_t))
        k.grp_from = <int32_t*>grow(k.grp_from, k.grp_cap, sizeof(int32_t))
        k.grp_keys = <int64_t*>grow(k.grp_keys, k.grp_cap * max(ng, 1), sizeof(int64_t))
    return 0


cdef int join_group(Kernel k, int64_t ev, int etype, int64_t key) except -1 nogil:
    """Tie rule either: composite event ``ev`` joins the open timestamp group (ties.derive_in_group),
    seen by the shared nets from ``k.grp_join`` on, under its match's key (a net not
    partitioned: key 0, as enter_composite)."""
    cdef Py_ssize_t gi, ng = k.ngroups
    grp_reserve(k)
    k.grp_ev[k.grp_n] = ev
    k.grp_type[k.grp_n] = etype
    k.grp_from[k.grp_n] = k.grp_join
    for gi in range(ng):
        k.grp_keys[k.grp_n * ng + gi] = key if (<Group>k.gptr[gi]).partitioned else 0
    k.grp_n += 1
    k.grp_comp += 1
    return 0


cdef int pre_last(Kernel k) except -1 nogil:
    """The composite events of matches closed by the group's first event (made before its
    events came: ties._join's group_emitted) move behind its input events, keeping their order."""
    cdef Py_ssize_t j, n = 0, ng = k.ngroups, m = 0
    cdef int64_t* ev
    cdef int64_t* keys
    cdef int32_t* ty
    cdef int32_t* fr
    for j in range(k.grp_n):
        if k.grp_from[j]:
            m += 1
    if m == 0 or m == k.grp_n:
        return 0
    ev = <int64_t*>malloc(k.grp_n * sizeof(int64_t))
    keys = <int64_t*>malloc(k.grp_n * max(ng, 1) * sizeof(int64_t))
    ty = <int32_t*>malloc(k.grp_n * sizeof(int32_t))
    fr = <int32_t*>malloc(k.grp_n * sizeof(int32_t))
    for m in range(2):
        for j in range(k.grp_n):
            if (k.grp_from[j] != 0) == (m == 1):
                ev[n] = k.grp_ev[j]
                ty[n] = k.grp_type[j]
                fr[n] = k.grp_from[j]
                memcpy(&keys[n * ng], &k.grp_keys[j * ng], ng * sizeof(int64_t))
                n += 1
    memcpy(k.grp_ev, ev, n * sizeof(int64_t))
    memcpy(k.grp_type, ty, n * sizeof(int32_t))
    memcpy(k.grp_from, fr, n * sizeof(int32_t))
    memcpy(k.grp_keys, keys, n * ng * sizeof(int64_t))
    free(ev); free(keys); free(ty); free(fr)
    return 0


cdef struct TokenSet:
    int32_t* tab  # open addressing, -1: empty
    Py_ssize_t cap, n


cdef inline uint64_t token_hash(Group g, int32_t t) noexcept nogil:
    """A hash of the token's place, users and bound events (a list: its elements, not the
    node that holds them, which differs per path)."""
    cdef uint64_t h = <uint64_t>g.tk_place[t] * 0x9E3779B97F4A7C15ULL ^ <uint64_t>g.tk_users[t]
    cdef Py_ssize_t a, ns = g.nslots
    cdef int64_t n
    for a in range(ns):
        n = g.tk_slots[<Py_ssize_t>t * ns + a]
        if g.slot_kleene[a]:
            while n >= 0:
                h = (h ^ <uint64_t>g.nd_ev[n]) * 0x100000001B3ULL
                n = g.nd_prev[n]
        h = (h ^ <uint64_t>n) * 0x100000001B3ULL
    return h ^ (h >> 29)


cdef inline bint same_token(Group g, int32_t a, int32_t b) noexcept nogil:
    """Whether two tokens hold the same partial match (place, users, events; ties._binding_key)."""
    cdef Py_ssize_t i, ns = g.nslots
    cdef int64_t x, y
    if g.tk_place[a] != g.tk_place[b] or g.tk_users[a] != g.tk_users[b]:
        return False
    for i in range(ns):
        x = g.tk_slots[<Py_ssize_t>a * ns + i]
        y = g.tk_slots[<Py_ssize_t>b * ns + i]
        if g.slot_kleene[i]:
            while x >= 0 and y >= 0 and g.nd_ev[x] == g.nd_ev[y]:
                x = g.nd_prev[x]
                y = g.nd_prev[y]
            if x >= 0 or y >= 0:
                return False
        elif x != y:
            return False
    return not g.has_ordered or same_interleaving(g, &g.tk_slots[<Py_ssize_t>a * ns], &g.tk_slots[<Py_ssize_t>b * ns])


cdef bint same_interleaving(Group g, const int64_t* a, const int64_t* b) noexcept nogil:
    """Whether two bindings with equal lists bound the elements of a group with optional or
    Kleene steps in the same order (``c`` in the first iteration or the second: ties'
    _binding_key): newest first, the slot of each one's newest node not yet passed."""
    cdef Py_ssize_t ns = g.nslots, s, sa, sb
    cdef int64_t* x = <int64_t*>malloc(2 * max(ns, 1) * sizeof(int64_t))
    cdef int64_t* y = x + ns
    cdef bint same = True
    for s in range(ns):
        x[s] = a[s] if g.slot_ordered[s] else -1
        y[s] = b[s] if g.slot_ordered[s] else -1
    while same:
        sa = newest(x, ns)
        sb = newest(y, ns)
        if sa != sb:
            same = False
        elif sa < 0:
            break
        else:
            x[sa] = g.nd_prev[x[sa]]
            y[sb] = g.nd_prev[y[sb]]
    free(x)
    return same


cdef inline Py_ssize_t newest(const int64_t* nodes, Py_ssize_t ns) noexcept nogil:
    """The slot whose node is the newest (-1: none left)."""
    cdef Py_ssize_t s, best = -1
    for s in range(ns):
        if nodes[s] >= 0 and (best < 0 or nodes[s] > nodes[best]):
            best = s
    return best


cdef bint token_seen(Group g, TokenSet* s, int32_t t) except -1 nogil:
    """Whether a token equal to ``t`` (place, users, slots) is in ``s``; if not, ``t`` is
    added (the fixpoint keeps one token per partial match, as ties._fixpoint's set does)."""
    cdef Py_ssize_t i, j, old_cap
    cdef int32_t* old
    cdef int32_t u
    if 2 * (s.n + 1) > s.cap:  # grow, rehash
        old, old_cap = s.tab, s.cap
        s.cap = max(64, 2 * old_cap)
        s.tab = <int32_t*>malloc(s.cap * sizeof(int32_t))
        if s.tab == NULL:
            s.tab, s.cap = old, old_cap
            raise MemoryError()
        for i in range(s.cap):
            s.tab[i] = -1
        for i in range(old_cap):
            if old[i] >= 0:
                u = old[i]
                j = <Py_ssize_t>(token_hash(g, u) & <uint64_t>(s.cap - 1))
                while s.tab[j] >= 0:
                    j = (j + 1) & (s.cap - 1)
                s.tab[j] = u
        free(old)
    i = <Py_ssize_t>(token_hash(g, t) & <uint64_t>(s.cap - 1))
    while s.tab[i] >= 0:
        if same_token(g, s.tab[i], t):
            return True
        i = (i + 1) & (s.cap - 1)
    s.tab[i] = t
    s.n += 1
    return False


cdef int run_group(Kernel k) except -1 nogil:
    """Close the timestamp group: equal timestamps match in any order, so per shared net
    and key, extend the marking by each event, then the new tokens by the group's other
    events until nothing new appears (ties.run_group / _fixpoint). A net's composite events
    join the group for the nets after it (those of matches its first event closed: from
    the second net on)."""
    cdef Py_ssize_t gi, rows = k.grp_rows, n
    cdef int64_t* order
    pre_last(k)
    try:
        for gi in range(k.ngroups):
            k.grp_join = <int>gi + 1
            order = <int64_t*>grow(NULL, k.grp_n + 1, sizeof(int64_t))
            try:
                group_keys(k, <Group>k.gptr[gi], gi, order)
            finally:
                free(order)
    finally:
        k.grp_join = 1
    n = rows + k.grp_comp
    k.grp_n = 0
    k.grp_rows = 0
    k.grp_comp = 0
    k.grp_un = 0
    k.grp_clock = -1
    k.since_sweep += n
    if k.since_sweep >= k.sweep_every and n:
        sweep(k, k.grp_ts, k.store.pos[k.store.n - 1] if k.store.n else 0)
    return 0


cdef inline bint unseen(Kernel k, Group g, Py_ssize_t gi, Py_ssize_t j) noexcept nogil:
    """Whether group event ``j`` is not ``g``'s (no transition of its type, or a composite
    event made by ``g`` or a net after it)."""
    return k.grp_from[j] > gi or g.type_start[k.grp_type[j] + 1] == g.type_start[k.grp_type[j]]


cdef int group_keys(Kernel k, Group g, Py_ssize_t gi, int64_t* order) except -1 nogil:
    """run_group for shared net ``g``: each key of the timestamp group, in first-seen order,
    to its fixpoint (``order``: scratch for the keys)."""
    cdef Py_ssize_t j, o, norder = 0, ng = k.ngroups, first = k.out_n
    cdef int64_t key
    for j in range(k.grp_n):
        if unseen(k, g, gi, j):
            continue
        key = k.grp_keys[j * ng + gi]
        o = 0
        while o < norder and order[o] != key:
            o += 1
        if o == norder:
            order[norder] = key
            norder += 1
    for o in range(norder):
        key = order[o]
        if key >= g.nkeys:
            g.reserve_keys(key + 1)
        fixpoint(k, g, gi, key)
    if g.nnegs or (g.timeout_mask and g.count_window):
        group_negatives(k, g, gi)
    settle_group(k, first)
    return 0


cdef int settle_group(Kernel k, Py_ssize_t first) except -1 nogil:
    """A shared net's matches of a timestamp group in the engine's order (emission.emit), then
    consumed in that order; with RETURN their composite events join the group in that
    order (join_group: the nets after this one see them)."""
    cdef Py_ssize_t o, end
    if not k.ordered:
        if k.out_n - first > 1:
            order_emitted(k, first)
        return 0
    if k.out_n - first > 1:
        order_emitted(k, first)
    end = k.out_n
    if k.has_conflict:
        with gil:  # (the consumed events: a dict per domain)
            end = consume(k, first, end)
    for o in range(first, end):
        if k.pat_has_ret[k.out_pattern[o]]:
            k.composites += 1
            if k.pat_ret_type[k.out_pattern[o]] >= 0:
                composite(k, o)
    return 0


cdef int fixpoint(Kernel k, Group g, Py_ssize_t gi, int64_t key) except -1 nogil:
    cdef Py_ssize_t j, idx, ki, e, ng = k.ngroups, nmine = 0, nen = 0, ntr = 0, a
    cdef int32_t t, nt
    cdef int tr, place, ns = g.nslots, hit
    cdef int64_t ev
    cdef TokenSet seen  # the tokens the fixpoint made (place, users, slots): each once
    cdef int64_t* cr = NULL  # per created token: the event that made it
    cdef Py_ssize_t cr_cap = 0
    seen.tab = NULL
    seen.cap = 0
    seen.n = 0
    # per group event of this key with enabled transitions: the event, its transitions
    cdef int64_t* en_ev = <int64_t*>malloc(k.grp_n * sizeof(int64_t))
    cdef Py_ssize_t* en_start = <Py_ssize_t*>malloc((k.grp_n + 1) * sizeof(Py_ssize_t))
    cdef int32_t* en_trs = NULL
    try:
        g.ncreated = 0
        g.cur_key = key
        for j in range(k.grp_n):
            if k.grp_keys[j * ng + gi] != key or unseen(k, g, gi, j):
                continue
            ev = k.grp_ev[j]
            nmine += 1
            k.now_ts = k.store.ts[ev]  # (the key's last event of the group: LIMIT's now)
            k.now_pos = k.store.pos[ev]
            k.now_ev = ev
            a = g.ncreated
            step(k, g, k.grp_type[j], key, ev, k.store.ts[ev], k.store.pos[ev])
            creators(&cr, &cr_cap, a, g.ncreated, ev)
        if g.nnegs:
            key_now(k, g, gi, key)
        if nmine > 1:
            en_trs = <int32_t*>malloc((g.ent_trs.shape[0] * k.grp_n + 1) * sizeof(int32_t))
            en_start[0] = 0
            for j in range(k.grp_n):  # per event: its transitions whose input-arc guards hold
                if k.grp_keys[j * ng + gi] != key or k.grp_from[j] > gi:
                    continue
                a = ntr
                for e in range(g.type_start[k.grp_type[j]], g.type_start[k.grp_type[j] + 1]):
                    for ki in range(g.ent_tr_start[e], g.ent_tr_start[e + 1]):
                        tr = g.ent_trs[ki]
                        if g.tr_arc_start[tr + 1] == g.tr_arc_start[tr] or arc_ok(k, g, tr, k.grp_ev[j]):
                            en_trs[ntr] = tr
                            ntr += 1
                if ntr > a:
                    en_ev[nen] = k.grp_ev[j]
                    nen += 1
                    en_start[nen] = ntr
        idx = 0
        while nen and idx < g.ncreated:
            t = g.created[idx]
            idx += 1
            place = g.tk_place[t]
            for j in range(nen):
                hit = 0
                for ki in range(en_start[j], en_start[j + 1]):
                    if g.tr_src[en_trs[ki]] == place:
                        hit = 1
                        break
                if not hit:
                    continue
                ev = en_ev[j]
                if binds(g, &g.tk_slots[<Py_ssize_t>t * ns], ev):
                    continue
                for ki in range(en_start[j], en_start[j + 1]):
                    tr = en_trs[ki]
                    if g.tr_src[tr] != place:
                        continue
                    if g.tr_kleene[tr] == KLEENE_TAKE and g.nd_ev[g.tk_slots[<Py_ssize_t>t * ns + g.tr_slot[tr]]] > ev:
                        continue  # (firing._not_bound_yet: a list in arrival order)
                    nt = fire(k, g, tr, t, ev, k.store.ts[ev], k.store.pos[ev], NO_KEY)
                    if nt < 0:
                        continue
                    if token_seen(g, &seen, nt):
                        g.release(nt)
                        continue
                    g.add_created(nt)
                    creators(&cr, &cr_cap, g.ncreated - 1, g.ncreated, ev)
        store_group_created(k, g, key, cr)
    finally:
        free(en_ev)
        free(seen.tab)
        free(en_start)
        free(en_trs)
        free(cr)
    return 0


cdef inline void key_now(Kernel k, Group g, Py_ssize_t gi, int64_t key) noexcept nogil:
    """LIMIT's now for a key's fixpoint: the key's last event of the group that ``g`` reads,
    its negative events' types included (ties._fixpoint watches at ``evs[-1]``, every event
    of the net's input types), so that ages and FAIL's event are the engine's."""
    cdef Py_ssize_t j, ng = k.ngroups
    cdef int etype
    for j in range(k.grp_n - 1, -1, -1):
        if k.grp_keys[j * ng + gi] != key or k.grp_from[j] > gi:
            continue
        etype = k.grp_type[j]
        if g.type_start[etype + 1] > g.type_start[etype] or g.type_neg_start[etype + 1] > g.type_neg_start[etype]:
            k.now_ts = k.store.ts[k.grp_ev[j]]
            k.now_pos = k.store.pos[k.grp_ev[j]]
            k.now_ev = k.grp_ev[j]
            return


cdef int creators(int64_t** cr, Py_ssize_t* cap, Py_ssize_t a, Py_ssize_t b, int64_t ev) except -1 nogil:
    """Created tokens [a, b) were made by event ``ev`` (ties._fixpoint: the emitter of their
    matches, where their composite events take their time and position)."""
    cdef Py_ssize_t i
    if b > cap[0]:
        cap[0] = max(2 * cap[0], b, 64)
        cr[0] = <int64_t*>grow(cr[0], cap[0], sizeof(int64_t))
    for i in range(a, b):
        cr[0][i] = ev
    return 0


cdef int group_negatives(Kernel k, Group g, Py_ssize_t gi) except -1 nogil:
    """The timestamp group's negative events of ``g``, once its keys reached their fixpoints,
    in stream order (ties._match_group; composite events after their emitters): each is
    buffered and cancels what it violates (by timestamp: the group's own partial matches
    stay). A count window that an event of the group closes closes between the negative
    events inside it and those past it (ties._close_in_group), the rest at the group's last
    event or clock point."""
    cdef Py_ssize_t i, j, o, n = 0, ng = k.ngroups
    cdef int etype
    cdef int64_t key, ev, upto = k.grp_clock
    cdef bint closing = g.count_window and g.heap_n > 0
    cdef int64_t* idx
    if g.count_window and g.timeout_mask:
        with gil:
            closing = closing or bool(g.deadlines)
    idx = <int64_t*>malloc((k.grp_n + 1) * sizeof(int64_t))
    for j in range(k.grp_n):
        if k.grp_from[j] > gi:
            continue
        ev = k.grp_ev[j]
        if k.grp_from[j] == 0 and k.store.pos[ev] > upto:
            upto = k.store.pos[ev]
    for i in range(k.grp_un):
        if k.grp_upos[i] > upto:
            upto = k.grp_upos[i]
    for j in range(k.grp_n):
        if k.grp_from[j] > gi:
            continue
        if g.type_neg_start[k.grp_type[j] + 1] > g.type_neg_start[k.grp_type[j]]:
            idx[n] = j
            n += 1
    if closing and k.grp_comp:  # stably by position (ties._match_group's sort)
        for i in range(1, n):
            j = idx[i]
            ev = k.grp_ev[j]
            o = i
            while o > 0 and k.store.pos[k.grp_ev[idx[o - 1]]] > k.store.pos[ev]:
                idx[o] = idx[o - 1]
                o -= 1
            idx[o] = j
    k.grp_closing = closing
    try:
        for o in range(n):
            j = idx[o]
            etype = k.grp_type[j]
            ev = k.grp_ev[j]
            key = k.grp_keys[j * ng + gi]
            if key >= g.nkeys:
                g.reserve_keys(key + 1)
            if closing:
                close_in_group(k, g, k.store.pos[ev])
            k.now_ts = k.store.ts[ev]
            k.now_pos = k.store.pos[ev]
            k.now_ev = ev
            negative(k, g, etype, key, ev)
        if closing:
            close_in_group(k, g, upto)
    finally:
        k.grp_closing = False
        free(idx)
        if k.nkills:
            with gil:
                k.kills = []
                k.nkills = 0
    return 0


cdef int close_in_group(Kernel k, Group g, int64_t upto) except -1 nogil:
    """The count windows ending at or before position ``upto`` that events of the matched
    group close (ties._close_in_group): waiting matches, then timeouts."""
    close_group(k, g, k.grp_ts, upto, False)
    if g.timeout_mask:
        with gil:  # (the deadlines' heap)
            close_group_deadlines(k, g, upto)
    return 0


cdef int end_group(Kernel k) except -1 nogil:
    """Tie rule strict: the timestamp group ended, its negative events cancel now."""
    with gil:
        cancel_kills(k)
    return 0


cdef int cancel_kills(Kernel k) except -1:
    cdef list kills = k.kills
    k.kills = []
    k.nkills = 0
    for g, key, j, x in kills:
        cancel(k, <Group>g, key, j, x)
    return 0
