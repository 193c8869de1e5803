# Event time on the kernel: ON TIMEOUT deadlines and LIMIT quotas (included by _kernel.pyx).
#
# It mirrors runtime/housekeeping.py (watch), runtime/emission.py (close_deadlines, expire) and
# runtime/limits.py (admit, _settle, _pop_dead, prune, uncount) over the kernel's token arena. A
# deadline or a quota entry refers to a token by index, so such a token is *pinned*: when its list
# drops it (its window passed, skip-till-next-match consumed it, a negation cancelled it) it goes
# to the group's zombie list instead of the free list, keeping its slots (compaction remaps them)
# until the last reference is gone; the next sweep frees it. A token is "not alive" for a pattern
# when its users bitmask lacks the pattern's bit (the engine's alive flag: a cancelled token's
# users are cleared, a LIMIT drop clears the pattern's bit). The deadlines and quotas themselves
# are Python heaps of tuples, as in the engine: only nets with ON TIMEOUT or LIMIT pay for them.

import heapq


cdef inline void pin(Group g, int32_t t) noexcept:
    g.tk_pins[t] += 1


cdef inline void unpin(Group g, int32_t t) noexcept:
    """One reference fewer (a zombie left with none is freed at the next sweep)."""
    g.tk_pins[t] -= 1


cdef inline int64_t floor_of(Kernel k, Group g, int64_t key) noexcept:
    """The contiguity floor of ``key`` (GroupRuntime.floor): tokens whose last event is below it
    were interrupted."""
    if g.strategy == PARTITION_CONTIGUITY and g.partitioned:
        return g.floors[key]
    if g.strategy >= STRICT_CONTIGUITY:
        return k.last_key
    return NO_KEY


cdef tuple age(Kernel k, Group g, int32_t t):
    """What "oldest" means (limits.age): first event's (ts, pos), then the bound events in
    binding order, which is arrival order on the kernel (every firing binds the latest event;
    a Kleene list's elements are bound one by one)."""
    cdef int s, ns = g.nslots
    cdef int64_t ev, node
    seqs = []
    for s in range(ns):
        ev = g.tk_slots[<Py_ssize_t>t * ns + s]
        if ev >= 0 and g.slot_kleene[s]:
            node = ev
            while node >= 0:
                seqs.append(k.store.seq[g.nd_ev[node]])
                node = g.nd_prev[node]
        elif ev >= 0:
            seqs.append(k.store.seq[ev])
    seqs.sort()
    return (g.tk_first_ts[t], g.tk_first_pos[t], tuple(seqs))


cdef double gap_deadline(Group g, int32_t t, int b, double deadline) noexcept nogil:
    """An ON TIMEOUT partial match of pattern bit ``b`` times out at its window's close or,
    before, at the end of a gap of its pattern ahead of it (housekeeping.gap_deadline): in
    time, or under a count window for a gap in EVENTS (slot ``~slot``) the first position
    it refuses (a count window's deadline is the first position outside it)."""
    cdef int i, sl, p = g.tk_place[t]
    cdef int64_t ev
    cdef double end
    for i in range(g.place_tgap_start[p], g.place_tgap_start[p + 1]):
        if g.tgap_bit[i] == b:
            sl = g.tgap_slot[i]
            if sl >= 0:
                end = g.store.ts[gap_base(g, t, sl)] + g.tgap_hi[i]
            else:
                end = <double>g.store.pos[gap_base(g, t, ~sl)] + g.tgap_hi[i] + 1.0
            if end < deadline:
                deadline = end
    return deadline


cdef bint own_gap_passed(Group g, int32_t t, int b, double ts, int64_t pos) noexcept nogil:
    """A gap of pattern bit ``b`` ahead of ``t`` has ended before ``(ts, pos)``
    (LimitSpec.gap_passed, as Group.gap_passed): ``t`` no longer counts against the LIMIT."""
    cdef int i, sl, p = g.tk_place[t]
    for i in range(g.place_tgap_start[p], g.place_tgap_start[p + 1]):
        if g.tgap_bit[i] == b:
            sl = g.tgap_slot[i]
            if sl >= 0:
                if ts - g.store.ts[gap_base(g, t, sl)] > g.tgap_hi[i]:
                    return True
            elif <double>(pos - g.store.pos[gap_base(g, t, ~sl)]) > g.tgap_hi[i]:
                return True
    return False


cdef int watch(Kernel k, Group g, int64_t key) except -1:
    """The tokens one step created were just stored (housekeeping.watch): those that are partial
    matches of patterns with ON TIMEOUT (and not complete where they are) get a deadline per
    pattern; those of patterns with a LIMIT are admitted, oldest first."""
    cdef Py_ssize_t i
    cdef int32_t t
    cdef int place, b
    cdef int64_t going, waiting
    cdef double deadline
    cdef list limited = None
    for i in range(g.ncreated):
        t = g.created[i]
        place = g.tk_place[t]
        if not g.place_exits[place]:
            continue
        going = g.tk_users[t] & g.place_exit_bits[place]
        if going & g.limit_mask:
            if limited is None:
                limited = []
            limited.append((age(k, g, t), i, t, going))
        waiting = going & g.timeout_mask & ~g.place_emit_bits[place]
        if waiting:
            for b in range(g.nbits):
                if (waiting >> b) & 1:
                    if g.count_window:
                        deadline = <double>g.tk_first_pos[t] + g.bit_window[b]
                        if g.place_tgap_start[place] < g.place_tgap_start[place + 1]:
                            deadline = gap_deadline(g, t, b, deadline)  # (EVENTS gaps: positions)
                            if <double>k.now_pos >= deadline:  # born past its own gap: its parent timed out
                                continue
                    else:
                        deadline = g.tk_first_ts[t] + g.bit_window[b]
                        if g.place_tgap_start[place] < g.place_tgap_start[place + 1]:
                            deadline = gap_deadline(g, t, b, deadline)
                            if k.now_ts > deadline:  # born past its own gap: its parent timed out
                                continue
                    g.dl_counter += 1
                    heapq.heappush(g.deadlines, (deadline, g.dl_counter, key, t, b))
                    pin(g, t)
    if limited is not None:
        limited.sort()  # by age; equal ages in creation order (the engine's stable sort)
        for entry in limited:
            admit(k, g, key, entry[2], entry[3], entry[0])
    return 0


cdef int close_deadlines(Kernel k, double ts, int64_t pos, bint all_) except -1:
    """Stream time reached (ts, pos) (everything, at the end): the partial matches whose
    window it closes time out if still alive, never extended, not blocked and (contiguity)
    not interrupted (emission.close_deadlines / expire)."""
    cdef Group g
    cdef tuple entry
    cdef list dl
    for g in k.groups:
        dl = g.deadlines
        while dl:
            entry = dl[0]
            if not all_:
                if g.count_window:
                    if not (<double>pos >= <double>entry[0]):
                        break
                elif not (ts > <double>entry[0]):
                    break
            heapq.heappop(dl)
            expire(k, g, entry[2], entry[3], entry[4], entry[0])
            unpin(g, <int32_t>entry[3])
    return 0


cdef int close_group_deadlines(Kernel k, Group g, int64_t upto) except -1:
    """Tie rule either: ``g``'s count-window deadlines at or before position ``upto``, closed
    by events of the matched timestamp group (ties._close_in_group), each emitted by the
    group's first input event past it."""
    cdef tuple entry
    cdef list dl = g.deadlines
    while dl and <double>(<tuple>dl[0])[0] <= <double>upto:
        entry = heapq.heappop(dl)
        k.emit_cr = group_closer(k, <double>entry[0])
        try:
            expire(k, g, entry[2], entry[3], entry[4], entry[0])
        finally:
            k.emit_cr = -1
        unpin(g, <int32_t>entry[3])
    return 0


cdef int expire(Kernel k, Group g, int64_t key, int32_t t, int b, double deadline) except -1:
    cdef int64_t bit = (<int64_t>1) << b
    cdef int pi
    if not (g.tk_users[t] & bit) or (g.tk_ext[t] & bit) or (g.blocking and g.tk_blocked[t] & ~g.stop_mask):
        return 0
    if g.strategy >= STRICT_CONTIGUITY and g.tk_last_key[t] < floor_of(k, g, key):
        return 0
    if k.nkills and killed_in_group(k, g, key, t):
        return 0
    pi = g.patterns[b]
    k.timeouts[pi] += 1
    return emit(k, g, k.npatterns + pi, &g.tk_slots[<Py_ssize_t>t * g.nslots], g.tk_first_ts[t], g.tk_last_ts[t],
                  key, deadline)


cdef int killed_in_group(Kernel k, Group g, int64_t key, int32_t t) except -1:
    """Tie rule strict: whether a negative event of the open timestamp group, whose
    cancellations wait for its end, cancels ``t``, whose window an event of the group closes:
    no event left can extend ``t``, it is cancelled already as far as its timeout goes
    (emission._killed_in_group). Every negative event held lies inside that window."""
    cdef int ki, j, place = g.tk_place[t]
    cdef int64_t x
    cdef tuple entry
    for entry in k.kills:
        if entry[0] is not g or <int64_t>entry[1] != key:
            continue
        j = entry[2]
        x = entry[3]
        if (g.stop_mask >> j) & 1 and (g.place_growable[place] >> j) & 1:
            continue  # a stop event that only stops the list: the partial match goes on
        for ki in range(g.neg_place_start[j], g.neg_place_start[j + 1]):
            if g.neg_place[ki] == place:
                if violates(k, g, j, &g.tk_slots[<Py_ssize_t>t * g.nslots], g.tk_first_ts[t], g.tk_last_ts[t],
                            g.tk_first_pos[t], g.tk_last_pos[t], x, NAN):
                    return 1
                break
    return 0


# ------------------------------------------------------------------ LIMIT (runtime/limits.py)

cdef int admit(Kernel k, Group g, int64_t key, int32_t nt, int64_t bits, tuple order) except -1:
    """Count the new token against the limits of the patterns in ``bits``, applying a
    pattern's policy when it is one too many (limits.admit)."""
    cdef int b
    cdef int64_t bit
    cdef list quota, heap
    cdef int32_t victim
    for b in range(g.nbits):
        bit = (<int64_t>1) << b
        if not (bits & bit) or g.bit_limit[b] == 0:
            continue
        quota = g.quotas.get((key, b))
        if quota is None:
            quota = g.quotas[(key, b)] = [[], 0, 0]
        heap = quota[0]
        if quota[1] >= g.bit_limit[b]:
            settle_quota(k, g, key, b, quota)
        if quota[1] >= g.bit_limit[b]:
            if g.bit_policy[b] == 2:  # fail: the run stops (KernelRun words it as the engine)
                raise KernelLimitError(g.patterns[b], g.index, key, k.store.id[k.now_ev])
            g.dropped[b] += 1
            if g.bit_policy[b] == 1:  # reject new
                drop(g, key, nt, bit)
                continue
            victim = heapq.heappop(heap)[4]  # settle_quota left a live one on top
            drop(g, key, victim, bit)
            unpin(g, victim)
        quota[2] += 1
        heapq.heappush(heap, (order[0], order[1], order[2], quota[2], nt))
        pin(g, nt)
        g.tk_counted[nt] |= bit
        quota[1] += 1
    return 0


cdef int uncount(Group g, int64_t key, int32_t t, int64_t bits) except -1:
    """``t`` stopped being a live partial match of the patterns in ``bits``."""
    cdef int64_t gone = g.tk_counted[t] & bits
    cdef int b
    if not gone:
        return 0
    g.tk_counted[t] &= ~gone
    for b in range(g.nbits):
        if (gone >> b) & 1:
            (<list>g.quotas[(key, b)])[1] -= 1
    return 0


cdef int drop(Group g, int64_t key, int32_t t, int64_t bit) except -1:
    uncount(g, key, t, bit)
    g.tk_users[t] &= ~bit
    return 0


cdef int settle_quota(Kernel k, Group g, int64_t key, int b, list quota) except -1:
    """Make the quota's live count exact now and leave a live partial match on top
    (limits._settle): interrupted ones (contiguity), those past a per-step gap of the pattern
    and expired ones stop counting."""
    cdef int64_t bit = (<int64_t>1) << b, floor
    cdef int32_t t
    if g.strategy >= STRICT_CONTIGUITY:
        floor = floor_of(k, g, key)
        for entry in quota[0]:
            t = entry[4]
            if g.tk_counted[t] & bit and g.tk_last_key[t] < floor:
                uncount(g, key, t, bit)
    if g.tgap_bit.shape[0]:
        for entry in quota[0]:
            t = entry[4]
            if g.tk_counted[t] & bit and own_gap_passed(g, t, b, k.now_ts, k.now_pos):
                uncount(g, key, t, bit)
    return pop_dead(g, key, b, quota, k.now_ts, k.now_pos)


cdef int pop_dead(Group g, int64_t key, int b, list quota, double ts, int64_t pos) except -1:
    """Pop the entries at the top that no longer count (expired ones stop counting)."""
    cdef list heap = quota[0]
    cdef int64_t bit = (<int64_t>1) << b
    cdef int32_t t
    cdef double w = g.bit_window[b]
    cdef bint expired
    while heap:
        t = heap[0][4]
        if g.tk_counted[t] & bit:
            if isnan(w):
                expired = False
            elif g.count_window:
                expired = <double>(pos - g.tk_first_pos[t]) >= w
            else:
                expired = ts - g.tk_first_ts[t] > w
            if not expired:
                break
            uncount(g, key, t, bit)
        heapq.heappop(heap)
        unpin(g, t)
    return 0


cdef int prune(Kernel k, Group g, double ts, int64_t pos) except -1:
    """Housekeeping at a sweep (limits.prune): forget what no longer counts at the top of each
    quota; free the zombies nothing refers to any more."""
    cdef int32_t t, nxt, kept = -1
    for (key, b), quota in g.quotas.items():
        pop_dead(g, key, b, quota, ts, pos)
    t = g.zombies
    while t >= 0:
        nxt = g.tk_next[t]
        if g.tk_pins[t]:
            g.tk_next[t] = kept
            kept = t
        else:
            g.release(t)
        t = nxt
    g.zombies = kept
    return 0


cdef int forget_watch(Group g) except -1:
    """End of stream (Kernel.clear, after the lists were freed): drop every deadline and
    quota, and free the zombies."""
    cdef int32_t t, nxt
    for entry in g.deadlines:
        g.tk_pins[<int32_t>entry[3]] = 0
    for quota in g.quotas.values():
        for entry in quota[0]:
            g.tk_pins[<int32_t>entry[4]] = 0
    g.deadlines = []
    g.quotas = {}
    t = g.zombies
    while t >= 0:
        nxt = g.tk_next[t]
        g.tk_pins[t] = 0
        g.release(t)
        t = nxt
    g.zombies = -1
    return 0
