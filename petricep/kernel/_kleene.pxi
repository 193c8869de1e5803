# Kleene closure on the kernel (included by _kernel.pyx).
#
# A token's Kleene slot holds a *node* of its group's element arena, not an event: the node of
# the list's last element, pointing to the node of the element before it (nd_prev), so partial
# matches share their lists' prefixes as the engine's token chains do; nothing is copied when a
# list grows. A node also holds what the engine's Kleene state tuple holds (runtime/expr.py):
# the first event, the count and the running aggregates of the list up to it; the state before
# the last element (v[i-1], v[..i-1]) is the previous node's. Nodes are garbage-collected at a
# sweep (mark from the stored tokens, then compact in creation order: a node's predecessor is
# always older, so it moves first).

cdef enum:
    AGG_COUNT = 0
    AGG_SUM = 1
    AGG_AVG = 2
    AGG_MIN = 3
    AGG_MAX = 4


cdef int reserve_nodes(Group g, Py_ssize_t cap) except -1 nogil:
    cdef Py_ssize_t na = g.naggs
    if cap <= g.nd_cap:
        return 0
    charge(g.budget, MEM_KLEENE, g.nd_cap, cap, node_bytes(g))
    g.nd_ev = <int64_t*>grow(g.nd_ev, cap, sizeof(int64_t))
    g.nd_first = <int64_t*>grow(g.nd_first, cap, sizeof(int64_t))
    g.nd_count = <int64_t*>grow(g.nd_count, cap, sizeof(int64_t))
    g.nd_prev = <int32_t*>grow(g.nd_prev, cap, sizeof(int32_t))
    g.nd_mark = <uint8_t*>grow(g.nd_mark, cap, sizeof(uint8_t))
    g.nd_acc_v = <double*>grow(g.nd_acc_v, cap * na, sizeof(double))
    g.nd_acc_t = <int8_t*>grow(g.nd_acc_t, cap * na, sizeof(int8_t))
    g.nd_acc_n = <int64_t*>grow(g.nd_acc_n, cap * na, sizeof(int64_t))
    g.nd_cap = cap
    return 0


cdef inline Py_ssize_t node_bytes(Group g) noexcept nogil:
    """Bytes a Kleene list's element takes (reserve_nodes)."""
    return 3 * sizeof(int64_t) + sizeof(int32_t) + sizeof(uint8_t) + g.naggs * (2 * sizeof(double) + sizeof(int8_t))


cdef int32_t kleene_node(Kernel k, Group g, int slot, int32_t old, int64_t ev) except -2 nogil:
    """A new list state: ``ev`` starts the list (``old`` < 0, kleene_start) or is appended to
    the list ending at node ``old`` (kleene_take), its aggregates stepped."""
    cdef int32_t n
    cdef Py_ssize_t a, j, na = g.naggs
    cdef int func, attr
    cdef double v
    cdef int8_t tv
    if g.nd_n >= g.nd_cap:
        reserve_nodes(g, max(1024, 2 * g.nd_cap))
    n = <int32_t>g.nd_n
    g.nd_n += 1
    g.nd_ev[n] = ev
    g.nd_prev[n] = old
    g.nd_first[n] = g.nd_first[old] if old >= 0 else ev
    g.nd_count[n] = g.nd_count[old] + 1 if old >= 0 else 1
    for a in range(g.slot_agg_start[slot], g.slot_agg_start[slot + 1]):
        j = a - g.slot_agg_start[slot]
        func = g.agg_func[a]
        attr = g.agg_attr[a]
        if func == AGG_COUNT:
            g.nd_acc_v[n * na + j] = g.nd_acc_v[old * na + j] + 1.0 if old >= 0 else 1.0
            g.nd_acc_t[n * na + j] = TAG_INT
            continue
        v = k.store.val[ev * k.store.nattrs + attr]
        tv = k.store.tag[ev * k.store.nattrs + attr]
        if tv == TAG_STR and func != AGG_MIN and func != AGG_MAX:  # (min / max of texts: by rank)
            raise KernelEvaluationError("aggregate", func, v, tv, 0.0, TAG_NUM, attr)
        if old < 0:  # agg_init
            if func == AGG_AVG:
                g.nd_acc_v[n * na + j] = v if tv != TAG_NULL else 0.0
                g.nd_acc_t[n * na + j] = tv if tv != TAG_NULL else TAG_INT
                g.nd_acc_n[n * na + j] = 1 if tv != TAG_NULL else 0
            else:
                g.nd_acc_v[n * na + j] = v
                g.nd_acc_t[n * na + j] = tv
            continue
        g.nd_acc_v[n * na + j] = g.nd_acc_v[old * na + j]
        g.nd_acc_t[n * na + j] = g.nd_acc_t[old * na + j]
        g.nd_acc_n[n * na + j] = g.nd_acc_n[old * na + j]
        if tv == TAG_NULL:  # agg_step: a missing value leaves the accumulator
            continue
        agg_step(k, func, attr, &g.nd_acc_v[n * na + j], &g.nd_acc_t[n * na + j], &g.nd_acc_n[n * na + j], v, tv)
    return n


cdef int agg_step(Kernel k, int func, int attr, double* acc, int8_t* tag, int64_t* count, double v, int8_t tv) except -1 nogil:
    """One element into a running aggregate (runtime/expr.py agg_step): Python's + for sums,
    min / max where a NaN wins and ties keep the accumulator (texts compared by their ranks in
    the sorted dictionary; a text beside a number: the engine's TypeError)."""
    cdef double a = acc[0]
    if func == AGG_AVG:
        arith(k, 0, acc, tag, v, tv)
        count[0] += 1
    elif tag[0] == TAG_NULL:
        acc[0] = v
        tag[0] = tv
    elif func == AGG_SUM:
        arith(k, 0, acc, tag, v, tv)
    elif isnan(a):
        pass
    elif tv == TAG_STR or tag[0] == TAG_STR:  # (texts by their ranks; a NaN beside one wins, as in nan_min)
        if tv == TAG_STR and tag[0] == TAG_STR:
            if (k.store.ranks[<Py_ssize_t>v] < k.store.ranks[<Py_ssize_t>a] if func == AGG_MIN
                    else k.store.ranks[<Py_ssize_t>v] > k.store.ranks[<Py_ssize_t>a]):
                acc[0] = v
        elif tv == TAG_NUM and isnan(v):
            acc[0] = v
            tag[0] = tv
        else:
            raise KernelEvaluationError("aggregate", func, v, tv, a, tag[0], attr)
    elif (tv == TAG_BIG or tag[0] == TAG_BIG) and not isnan(v):  # (Python's comparison, exact)
        if big_compare(k, 2 if func == AGG_MIN else 4, v, tv, a, tag[0]) != 0.0:
            acc[0] = v
            tag[0] = tv
    elif isnan(v) or (v < a if func == AGG_MIN else v > a):
        acc[0] = v
        tag[0] = tv
    return 0


cdef int kleene_load(Kernel k, Group g, int64_t node, int attr, int which, double* out, int8_t* tag) except -1 nogil:
    """``v[i].f`` / ``v[last].f`` (which 0), ``v[i-1].f`` (-1), ``v[k].f`` (k) of the list
    ending at ``node``: 1 when the conjunct does not apply (no element before), else 0 with
    the value (TAG_MISSING: the list has no k-th element)."""
    cdef int64_t ev, n = node, steps
    if node < 0:
        return 1
    if which == 0:
        ev = g.nd_ev[node]
    elif which == -1:
        if g.nd_prev[node] < 0:
            return 1
        ev = g.nd_ev[g.nd_prev[node]]
    elif which == 1:
        ev = g.nd_first[node]
    else:
        if g.nd_count[node] < which:
            out[0] = 0.0
            tag[0] = TAG_MISSING
            return 0
        steps = g.nd_count[node] - which
        while steps > 0:
            n = g.nd_prev[n]
            steps -= 1
        ev = g.nd_ev[n]
    if attr < 0:  # POS_CODE: the input position (an EVENTS gap's chain)
        out[0] = <double>k.store.pos[ev]
        tag[0] = TAG_INT
        return 0
    out[0] = k.store.val[ev * k.store.nattrs + attr]
    tag[0] = k.store.tag[ev * k.store.nattrs + attr]
    return 0


cdef int64_t list_ev(Group g, int64_t node, int64_t p) noexcept nogil:
    """The event of the ``p``-th element (1-based) of the list ending at ``node``; -1 where it
    has none."""
    cdef int64_t n = node, steps
    if node < 0 or p < 1 or p > g.nd_count[node]:
        return -1
    steps = g.nd_count[node] - p
    while steps > 0:
        n = g.nd_prev[n]
        steps -= 1
    return g.nd_ev[n]


cdef int64_t kleene_in_iteration(Kernel k, Group g, int64_t node, int64_t of, int which, int leads) noexcept nogil:
    """The node of a group's optional step's element in one iteration (runtime/expr.py
    _in_iteration_fn): the last (``which`` 0), the one before it (-1) or the k-th (k) of the
    list ``of`` (the group's first required step), whose elements delimit the iterations: after
    the iteration's own element and before the next's (``leads``, a step before that one: after
    the previous one's and before its own, or, for ``g[k]``, after the last one's in the
    iteration it begins). -1 where it has none (the iteration left the step out, or there is no
    such iteration): the read is unbound, as a step left out."""
    cdef int64_t j, lo, hi, ev, n = node, count = g.nd_count[of] if of >= 0 else 0
    if node < 0 or (of < 0 and not (leads and which > 0)):
        return -1
    j = count if which == 0 else count - 1 if which == -1 else which
    if j < 1 or j > count + (1 if leads and which > 0 else 0):  # (g[k] of a step before: the iteration it begins)
        return -1
    if leads:
        lo, hi = list_ev(g, of, j - 1), list_ev(g, of, j)
    else:
        lo, hi = list_ev(g, of, j), list_ev(g, of, j + 1)
    while n >= 0:
        ev = g.nd_ev[n]
        if hi < 0 or ev < hi:
            return n if lo < 0 or ev > lo else -1
        n = g.nd_prev[n]
    return -1


cdef int kleene_agg(Kernel k, Group g, int slot, int64_t node, int a, int upto_prev, double* out, int8_t* tag) except -1 nogil:
    """Aggregate ``a`` of the slot's list ending at ``node`` (``upto_prev``: before its last
    element; 1 = the conjunct does not apply at the first element); TAG_MISSING where the
    engine's agg_value has no value (no number seen, an average of nothing)."""
    cdef Py_ssize_t j = a, na = g.naggs
    if node >= 0 and upto_prev:
        node = g.nd_prev[node]
        if node < 0:
            return 1
    if node < 0:
        return 1
    if g.agg_func[g.slot_agg_start[slot] + a] == AGG_AVG:
        if g.nd_acc_n[node * na + j] == 0:
            tag[0] = TAG_MISSING
        elif g.nd_acc_t[node * na + j] == TAG_BIG:
            big_average(k, g.nd_acc_v[node * na + j], TAG_BIG, g.nd_acc_n[node * na + j], out, tag)
        else:
            out[0] = g.nd_acc_v[node * na + j] / <double>g.nd_acc_n[node * na + j]
            tag[0] = TAG_NUM
        return 0
    out[0] = g.nd_acc_v[node * na + j]
    tag[0] = g.nd_acc_t[node * na + j]
    if tag[0] == TAG_NULL:
        tag[0] = TAG_MISSING
    return 0


cdef int check_elements(Kernel k, Group g, int ci, int kslot, int64_t* slots) except -1 nogil:
    """An iteration condition checked for every element of a list, first to last
    (GroupRuntime.check_elements): each element's node is the list state there."""
    cdef int32_t n = <int32_t>slots[kslot]
    cdef Py_ssize_t count = 0, i
    cdef int32_t* chain
    cdef int ok = 1
    while n >= 0:
        count += 1
        n = g.nd_prev[n]
    chain = <int32_t*>malloc(max(count, 1) * sizeof(int32_t))
    try:
        n = <int32_t>slots[kslot]
        i = count
        while n >= 0:
            i -= 1
            chain[i] = n
            n = g.nd_prev[n]
        for i in range(count):
            if not eval_cond(k, g, ci, slots, kslot, chain[i]):
                ok = 0
                break
    finally:
        free(chain)
    return ok


cdef int check_iterations(Kernel k, Group g, const int32_t* spec, const int64_t* slots) except -1 nogil:
    """A repeated group's iteration condition for every iteration so far (GroupRuntime.
    check_iterations; ``spec``: condition, its step's slot, the number of steps, their slots):
    for iteration i the steps up to that step read their i-th node, the later ones their
    (i-1)-th (none on the first: unbound), as the step's own check saw the lists. A negative
    number of steps: a group with optional steps, whose lists are not aligned by iteration:
    :func:`check_iterations_in_order`."""
    if spec[2] < 0:
        return check_iterations_in_order(k, g, spec, slots)
    cdef int ci = spec[0], nm = spec[2], at = 0, j
    cdef const int32_t* members = spec + 3
    cdef Py_ssize_t ns = g.nslots, i, want, have, n_at
    cdef int64_t node
    cdef int64_t* local
    cdef int ok = 1
    for j in range(nm):
        if members[j] == spec[1]:
            at = j
    node = slots[spec[1]]
    n_at = g.nd_count[node] if node >= 0 else 0
    local = <int64_t*>malloc(max(ns, 1) * sizeof(int64_t))
    try:
        for j in range(ns):
            local[j] = slots[j]
        for i in range(1, n_at + 1):
            for j in range(nm):
                want = i if j <= at else i - 1
                node = slots[members[j]]
                have = g.nd_count[node] if node >= 0 else 0
                while have > want and node >= 0:
                    node = g.nd_prev[node]
                    have -= 1
                local[members[j]] = node if want > 0 else -1
            if not eval_cond(k, g, ci, local, -1, -1):
                ok = 0
                break
    finally:
        free(local)
    return ok


cdef int check_iterations_in_order(Kernel k, Group g, const int32_t* spec, const int64_t* slots) except -1 nogil:
    """:func:`check_iterations` for a group with optional steps (an iteration may leave one
    out): the steps' elements merged in the order the partial match bound them (their nodes'
    order, the chain's: under the tie rule either not always their events' arrival order), each
    step's list state advanced element by element and the condition checked at every element
    of its step, as GroupRuntime.check_iterations walks the chain."""
    cdef int ci = spec[0], nm = -spec[2], j, best
    cdef const int32_t* members = spec + 3
    cdef Py_ssize_t ns = g.nslots, total = 0, i, c
    cdef int64_t node
    cdef int64_t* local
    cdef int64_t* nodes
    cdef Py_ssize_t* start
    cdef Py_ssize_t* pos
    cdef int ok = 1
    for j in range(nm):
        node = slots[members[j]]
        total += g.nd_count[node] if node >= 0 else 0
    local = <int64_t*>malloc(max(ns, 1) * sizeof(int64_t))
    nodes = <int64_t*>malloc(max(total, 1) * sizeof(int64_t))
    start = <Py_ssize_t*>malloc((nm + 1) * sizeof(Py_ssize_t))
    pos = <Py_ssize_t*>malloc(max(nm, 1) * sizeof(Py_ssize_t))
    try:
        for j in range(ns):
            local[j] = slots[j]
        c = 0
        for j in range(nm):  # each step's nodes, oldest first
            start[j] = c
            node = slots[members[j]]
            c += g.nd_count[node] if node >= 0 else 0
            i = c
            while node >= 0:
                i -= 1
                nodes[i] = node
                node = g.nd_prev[node]
            local[members[j]] = -1
            pos[j] = start[j]
        start[nm] = c
        for i in range(total):  # the next element in arrival order, of whichever step
            best = -1
            for j in range(nm):
                if pos[j] < start[j + 1] and (best < 0 or nodes[pos[j]] < nodes[pos[best]]):
                    best = j
            local[members[best]] = nodes[pos[best]]
            pos[best] += 1
            if members[best] == spec[1] and not eval_cond(k, g, ci, local, -1, -1):
                ok = 0
                break
    finally:
        free(local)
        free(nodes)
        free(start)
        free(pos)
    return ok


cdef int emit_list(Kernel k, Group g, int64_t node, Py_ssize_t o, Py_ssize_t s) except -1 nogil:
    """A match's Kleene list as ids in stream order at the end of the list buffer (with the
    elements' store indices, for the order of the matches of one point and consumption): the
    match's id for the slot is its offset there, its length the count."""
    cdef Py_ssize_t m = k.maxslots, n = g.nd_count[node], i
    cdef int64_t x = node
    if k.kl_n + n > k.kl_cap:
        charge(&k.budget, MEM_MATCHES, k.kl_cap, max(1024, 2 * (k.kl_n + n)), 3 * sizeof(int64_t))
        k.kl_cap = max(1024, 2 * (k.kl_n + n))
        k.kl_ids = <int64_t*>grow(k.kl_ids, k.kl_cap, sizeof(int64_t))
        k.kl_ev = <int64_t*>grow(k.kl_ev, k.kl_cap, sizeof(int64_t))
        k.kl_ord = <int64_t*>grow(k.kl_ord, k.kl_cap, sizeof(int64_t))
    i = k.kl_n + n
    while x >= 0:
        i -= 1
        k.kl_ids[i] = k.store.id[g.nd_ev[x]]
        k.kl_ev[i] = g.nd_ev[x]
        k.kl_ord[i] = x if g.slot_ordered[s] else -2 - x  # (nodes are created, and compacted, in binding order)
        x = g.nd_prev[x]
    k.out_ids[o * m + s] = k.kl_n
    k.out_klen[o * m + s] = n
    k.kl_n += n
    return 0


cdef int gc_nodes(Kernel k, Group g) except -1 nogil:
    """Keep the nodes stored tokens reach (their lists' elements), compacted in order; the
    tokens' Kleene slots are renumbered."""
    cdef Py_ssize_t lid, i, j = 0, na = g.naggs, s, ns = g.nslots
    cdef int32_t t, n
    cdef int32_t* remap
    if g.nd_n == 0:
        return 0
    for i in range(g.nd_n):
        g.nd_mark[i] = 0
    for lid in range(g.nkeys * g.nplaces):
        t = g.heads[lid]
        while t >= 0:
            mark_token(g, t)
            t = g.tk_next[t]
    t = g.zombies
    while t >= 0:
        mark_token(g, t)
        t = g.tk_next[t]
    for i in range(g.heap_n):  # matches waiting for an end negation's window
        if g.pd_flags[g.heap[i]] & 1:
            mark_slots(g, &g.pd_slots[<Py_ssize_t>g.heap[i] * ns])
    remap = <int32_t*>malloc(g.nd_n * sizeof(int32_t))
    for i in range(g.nd_n):
        if not g.nd_mark[i]:
            remap[i] = -1
            continue
        remap[i] = <int32_t>j
        g.nd_ev[j] = g.nd_ev[i]
        g.nd_first[j] = g.nd_first[i]
        g.nd_count[j] = g.nd_count[i]
        g.nd_prev[j] = remap[g.nd_prev[i]] if g.nd_prev[i] >= 0 else -1
        for s in range(na):
            g.nd_acc_v[j * na + s] = g.nd_acc_v[i * na + s]
            g.nd_acc_t[j * na + s] = g.nd_acc_t[i * na + s]
            g.nd_acc_n[j * na + s] = g.nd_acc_n[i * na + s]
        j += 1
    g.nd_n = j
    for lid in range(g.nkeys * g.nplaces):
        t = g.heads[lid]
        while t >= 0:
            remap_token(g, t, remap)
            t = g.tk_next[t]
    t = g.zombies
    while t >= 0:
        remap_token(g, t, remap)
        t = g.tk_next[t]
    for i in range(g.heap_n):
        if g.pd_flags[g.heap[i]] & 1:
            remap_slots(g, &g.pd_slots[<Py_ssize_t>g.heap[i] * ns], remap)
    free(remap)
    g.nd_live = j
    return 0


cdef inline void mark_token(Group g, int32_t t) noexcept nogil:
    mark_slots(g, &g.tk_slots[<Py_ssize_t>t * g.nslots])


cdef inline void mark_slots(Group g, int64_t* slots) noexcept nogil:
    """Mark the nodes of the lists a binding (a token's, a waiting match's) holds."""
    cdef int s
    cdef int64_t n
    for s in range(g.nslots):
        if g.slot_kleene[s]:
            n = slots[s]
            while n >= 0 and not g.nd_mark[n]:
                g.nd_mark[n] = 1
                n = g.nd_prev[n]


cdef inline void remap_token(Group g, int32_t t, int32_t* remap) noexcept nogil:
    remap_slots(g, &g.tk_slots[<Py_ssize_t>t * g.nslots], remap)


cdef inline void remap_slots(Group g, int64_t* slots, int32_t* remap) noexcept nogil:
    cdef int s
    for s in range(g.nslots):
        if g.slot_kleene[s] and slots[s] >= 0:
            slots[s] = remap[slots[s]]


cdef int64_t list_last(Group g, int slot, int64_t v) nogil:
    """The event a slot holds, or for a list (a node) its last element (-1: unbound)."""
    if v < 0 or not g.slot_kleene[slot]:
        return v
    return g.nd_ev[v]


cdef int64_t list_first(Group g, int slot, int64_t v) nogil:
    """The event a slot holds, or for a list (a node) its first element (-1: unbound)."""
    if v < 0 or not g.slot_kleene[slot]:
        return v
    return g.nd_first[v]


cdef bint binds(Group g, int64_t* slots, int64_t x) nogil:
    """Whether a binding holds stored event ``x`` (in a list: as an element)."""
    cdef int s
    cdef int64_t n
    for s in range(g.nslots):
        if g.slot_kleene[s]:
            n = slots[s]
            while n >= 0:
                if g.nd_ev[n] == x:
                    return True
                n = g.nd_prev[n]
        elif slots[s] == x:
            return True
    return False
