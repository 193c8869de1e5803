# A Kernel's state as arrays, and back (included by _kernel.pyx; petricep/kernel/snapshot.py
# encodes it as Arrow IPC).
#
# Between two calls of Kernel.run the state is the event store, per shared net its token arena,
# negative-event buffers, waiting matches, deadlines, LIMIT quotas and Kleene element arena, and
# the kernel's scalars (clocks, counters, the open timestamp group, strict cancellations,
# consumed events). kernel_state hands it out as a flat dict of NumPy arrays and Python scalars,
# only the live part: a sweep runs first (dead tokens dropped), the store is compacted and the
# element arenas collected (as a sweep would: none of it changes a later match), the tokens of
# each net are renumbered in list order (zombies last) and the waiting matches listed in the
# order their heap pops them, so that the same state always gives the same arrays. set_kernel_state lays them out in a fresh Kernel of
# the same lowered net: the arenas hold exactly the listed entries, the free lists the rest.
# What the lowering binds (the const views) is not part of it. Every index read back is checked
# against what it indexes, so a damaged snapshot raises ValueError instead of corrupting memory.


cdef object a_f64(const double* p, Py_ssize_t n):
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] v = out
    if n > 0:
        memcpy(&v[0], p, n * sizeof(double))
    return out


cdef object a_i64(const int64_t* p, Py_ssize_t n):
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] v = out
    if n > 0:
        memcpy(&v[0], p, n * sizeof(int64_t))
    return out


cdef object a_i32(const int32_t* p, Py_ssize_t n):
    out = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] v = out
    if n > 0:
        memcpy(&v[0], p, n * sizeof(int32_t))
    return out


cdef object a_i8(const int8_t* p, Py_ssize_t n):
    out = np.empty(n, dtype=np.int8)
    cdef int8_t[::1] v = out
    if n > 0:
        memcpy(&v[0], p, n * sizeof(int8_t))
    return out


cdef object column(dict s, str name, object dtype, Py_ssize_t n):
    """State array ``name`` as a contiguous array of ``dtype`` holding exactly ``n`` values."""
    if name not in s:
        raise ValueError(f"no array {name!r}")
    a = np.ascontiguousarray(s[name], dtype=dtype)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"array {name!r} holds {a.size} values, not {n}")
    return a


cdef Py_ssize_t length(dict s, str name) except -1:
    if name not in s:
        raise ValueError(f"no array {name!r}")
    return len(s[name])


cdef int check(bint ok, str what) except -1:
    if not ok:
        raise ValueError(what)
    return 0


# ------------------------------------------------------------------ out

cdef int canonicalize(Kernel k) except -1:
    """What a sweep would do, done now (a sweep may come after any event without changing a
    later match): drop the tokens that can never fire again, collect the Kleene element
    arenas, then compact the event store (not while strict cancellations or an open timestamp
    group hold store indices)."""
    cdef Group g
    if k.in_pos >= 0 and not (k.tie_either and k.grp_rows):
        k.sweep(k.last_ts, k.in_pos)
    for g in k.groups:
        if g.has_kleene:
            gc_nodes(k, g)
    if not k.kills and k.grp_n == 0:
        compact(k)
    return 0


cdef dict kernel_state(Kernel k):
    """The kernel's state between two runs (its match buffer must be empty)."""
    cdef EventStore st = k.store
    cdef Py_ssize_t ng = len(k.groups), na = st.nattrs, gi
    if k.out_n or k.kl_n:
        raise ValueError("matches are still buffered (take them first)")
    canonicalize(k)
    s = {
        "ngroups": ng, "nattrs": na,
        "store.ts": a_f64(st.ts, st.n), "store.pos": a_i64(st.pos, st.n), "store.id": a_i64(st.id, st.n),
        "store.seq": a_i64(st.seq, st.n), "store.val": a_f64(st.val, st.n * na), "store.tag": a_i8(st.tag, st.n * na),
        "store.next_seq": st.next_seq, "store.ranks": a_f64(st.ranks, st.nranks),
        "grp.ev": a_i64(k.grp_ev, k.grp_n), "grp.type": a_i32(k.grp_type, k.grp_n),
        "grp.keys": a_i64(k.grp_keys, k.grp_n * ng), "grp.rows": k.grp_rows, "grp.ts": k.grp_ts,
        "grp.clock": k.grp_clock, "grp.from": a_i32(k.grp_from, k.grp_n), "grp.comp": k.grp_comp,
        "now_ts": k.now_ts, "now_pos": k.now_pos, "now_ev": k.now_ev, "strict_ts": k.strict_ts,
        "last_ts": k.last_ts, "last_key": k.last_key, "events": k.events, "created": k.created,
        "completed": k.completed, "cur_row": k.cur_row, "sweep_every": k.sweep_every,
        "since_sweep": k.since_sweep, "compact_slack": k.compact_slack, "emit_at": k.emit_at,
        "composites": k.composites, "taken": k.taken, "emit_ts": k.emit_ts, "emit_tag": k.emit_tag,
        "in_ts": k.in_ts, "in_pos": k.in_pos, "in_tag": k.in_tag,
        "timeouts": np.array(k.timeouts, dtype=np.int64),
        "kills.group": np.array([k.groups.index(x[0]) for x in k.kills], dtype=np.int32),
        "kills.key": np.array([x[1] for x in k.kills], dtype=np.int64),
        "kills.neg": np.array([x[2] for x in k.kills], dtype=np.int32),
        "kills.ev": np.array([x[3] for x in k.kills], dtype=np.int64),
        "consumed.domain": np.array([d for d, used in enumerate(k.consumed) for _ in used], dtype=np.int32),
        "consumed.seq": np.array([q for used in k.consumed for q in used], dtype=np.int64),
        "consumed.ts": np.array([w for used in k.consumed for w in used.values()], dtype=np.float64),
    }
    for gi in range(ng):
        group_state(k.groups[gi], f"g{gi}.", s)
    return s


cdef int group_state(Group g, str p, dict s) except -1:
    """One shared net's arenas, renumbered (see the top of this file)."""
    cdef int32_t* remap = <int32_t*>malloc(max(g.tk_cap, 1) * sizeof(int32_t))
    cdef Py_ssize_t i, lid, n = 0, ns = g.nslots, nkeys = 1
    cdef int32_t t
    order = np.empty(g.tk_cap, dtype=np.int32)
    lids = np.empty(g.tk_cap, dtype=np.int64)
    cdef int32_t[::1] ov = order
    cdef int64_t[::1] lv = lids
    try:
        for lid in range(g.nkeys * g.nplaces):
            t = g.heads[lid]
            while t >= 0:
                check(n < g.tk_cap, "a token list loops")
                ov[n] = t
                lv[n] = lid
                nkeys = max(nkeys, lid // g.nplaces + 1)
                n += 1
                t = g.tk_next[t]
        for t in zombie_order(g):
            ov[n] = t
            lv[n] = -1
            n += 1
        for i in range(g.tk_cap):
            remap[i] = -1
        for i in range(n):
            remap[ov[i]] = <int32_t>i
        tokens_out(g, ov, n, p, s)
        s[p + "tk.lid"] = lids[:n].copy()
        watch_out(g, remap, p, s)
    finally:
        free(remap)
    for i in range(g.nkeys):
        if g.floors[i] != NO_KEY:
            nkeys = max(nkeys, i + 1)
    s[p + "floors"] = a_i64(g.floors, nkeys)
    negation_out(g, p, s)
    s[p + "nd.ev"] = a_i64(g.nd_ev, g.nd_n)
    s[p + "nd.first"] = a_i64(g.nd_first, g.nd_n)
    s[p + "nd.count"] = a_i64(g.nd_count, g.nd_n)
    s[p + "nd.prev"] = a_i32(g.nd_prev, g.nd_n)
    s[p + "nd.acc_v"] = a_f64(g.nd_acc_v, g.nd_n * g.naggs)
    s[p + "nd.acc_t"] = a_i8(g.nd_acc_t, g.nd_n * g.naggs)
    s[p + "nd.acc_n"] = a_i64(g.nd_acc_n, g.nd_n * g.naggs)
    s[p + "nd.live"] = g.nd_live
    return 0


cdef list zombie_order(Group g):
    """The zombies in the order the deadlines, then the quotas, first refer to them (a sweep
    reverses the zombie list; this order survives it), then any unreferenced ones."""
    cdef int32_t t = g.zombies
    cdef Py_ssize_t n = 0
    found = []
    while t >= 0:
        check(n < g.tk_cap, "the zombie list loops")
        found.append(t)
        n += 1
        t = g.tk_next[t]
    left = dict.fromkeys(found)
    refs = [e[3] for e in g.deadlines] + [e[4] for q in g.quotas.values() for e in q[0]]
    order = [r for r in dict.fromkeys(refs) if r in left]
    for r in order:
        del left[r]
    return order + list(left)


cdef int tokens_out(Group g, int32_t[::1] order, Py_ssize_t n, str p, dict s) except -1:
    """The listed tokens' fields, in ``order``."""
    cdef Py_ssize_t i, j, ns = g.nslots
    cdef int32_t t
    place = np.empty(n, dtype=np.int32); pins = np.empty(n, dtype=np.int32)
    fts = np.empty(n, dtype=np.float64); lts = np.empty(n, dtype=np.float64)
    fpos = np.empty(n, dtype=np.int64); lpos = np.empty(n, dtype=np.int64); lkey = np.empty(n, dtype=np.int64)
    users = np.empty(n, dtype=np.int64); blocked = np.empty(n, dtype=np.int64)
    ext = np.empty(n, dtype=np.int64); counted = np.empty(n, dtype=np.int64)
    slots = np.empty(n * ns, dtype=np.int64)
    cdef int32_t[::1] v_place = place, v_pins = pins
    cdef double[::1] v_fts = fts, v_lts = lts
    cdef int64_t[::1] v_fpos = fpos, v_lpos = lpos, v_lkey = lkey, v_users = users, v_blocked = blocked
    cdef int64_t[::1] v_ext = ext, v_counted = counted, v_slots = slots
    for i in range(n):
        t = order[i]
        v_place[i] = g.tk_place[t]; v_pins[i] = g.tk_pins[t] if g.timed else 0
        v_fts[i] = g.tk_first_ts[t]; v_lts[i] = g.tk_last_ts[t]
        v_fpos[i] = g.tk_first_pos[t]; v_lpos[i] = g.tk_last_pos[t]; v_lkey[i] = g.tk_last_key[t]
        v_users[i] = g.tk_users[t]; v_blocked[i] = g.tk_blocked[t] if g.blocking else 0
        v_ext[i] = g.tk_ext[t] if g.timed else 0
        v_counted[i] = g.tk_counted[t] if g.timed else 0
        for j in range(ns):
            v_slots[i * ns + j] = g.tk_slots[<Py_ssize_t>t * ns + j]
    s.update({p + "tk.place": place, p + "tk.pins": pins, p + "tk.first_ts": fts, p + "tk.last_ts": lts,
              p + "tk.first_pos": fpos, p + "tk.last_pos": lpos, p + "tk.last_key": lkey, p + "tk.users": users,
              p + "tk.blocked": blocked, p + "tk.ext": ext, p + "tk.counted": counted, p + "tk.slots": slots})
    return 0


cdef int watch_out(Group g, int32_t* remap, str p, dict s) except -1:
    """Deadlines (heap order kept), LIMIT quotas (dict and heap order kept), drops; tokens by
    their new numbers."""
    dl = g.deadlines
    for e in dl:
        check(0 <= <int32_t>e[3] < g.tk_cap and remap[<int32_t>e[3]] >= 0, "a deadline refers to a free token")
    s[p + "dl.deadline"] = np.array([e[0] for e in dl], dtype=np.float64)
    s[p + "dl.n"] = np.array([e[1] for e in dl], dtype=np.int64)
    s[p + "dl.key"] = np.array([e[2] for e in dl], dtype=np.int64)
    s[p + "dl.token"] = np.array([remap[<int32_t>e[3]] for e in dl], dtype=np.int32)
    s[p + "dl.bit"] = np.array([e[4] for e in dl], dtype=np.int32)
    s[p + "dl.counter"] = g.dl_counter
    quotas = list(g.quotas.items())
    entries = [e for _, q in quotas for e in q[0]]
    for e in entries:
        check(0 <= <int32_t>e[4] < g.tk_cap and remap[<int32_t>e[4]] >= 0, "a quota refers to a free token")
    s[p + "q.key"] = np.array([kb[0] for kb, _ in quotas], dtype=np.int64)
    s[p + "q.bit"] = np.array([kb[1] for kb, _ in quotas], dtype=np.int32)
    s[p + "q.size"] = np.array([len(q[0]) for _, q in quotas], dtype=np.int64)
    s[p + "q.live"] = np.array([q[1] for _, q in quotas], dtype=np.int64)
    s[p + "q.n"] = np.array([q[2] for _, q in quotas], dtype=np.int64)
    s[p + "qe.ts"] = np.array([e[0] for e in entries], dtype=np.float64)
    s[p + "qe.pos"] = np.array([e[1] for e in entries], dtype=np.int64)
    s[p + "qe.nseqs"] = np.array([len(e[2]) for e in entries], dtype=np.int64)
    s[p + "qe.seqs"] = np.array([q for e in entries for q in e[2]], dtype=np.int64)
    s[p + "qe.n"] = np.array([e[3] for e in entries], dtype=np.int64)
    s[p + "qe.token"] = np.array([remap[<int32_t>e[4]] for e in entries], dtype=np.int32)
    s[p + "dropped"] = np.array(g.dropped, dtype=np.int64)
    return 0


cdef int negation_out(Group g, str p, dict s) except -1:
    """Buffered negative events per (key, negation) in list order; the waiting matches that
    are still alive, in the order the heap pops them."""
    cdef Py_ssize_t lid, i, ns = g.nslots
    cdef int32_t b, d
    nb_lid, nb_ev = [], []
    for lid in range(g.nkeys * g.nnegs):
        b = g.nb_heads[lid]
        while b >= 0:
            nb_lid.append(lid)
            nb_ev.append(g.nb_ev[b])
            b = g.nb_next[b]
    s[p + "nb.lid"] = np.array(nb_lid, dtype=np.int64)
    s[p + "nb.ev"] = np.array(nb_ev, dtype=np.int64)
    alive = sorted([(g.pd_thr[g.heap[i]], g.pd_seq[g.heap[i]], g.heap[i]) for i in range(g.heap_n)
                    if g.pd_flags[g.heap[i]] & 1])
    cdef Py_ssize_t n = len(alive)
    slots = np.empty(n * ns, dtype=np.int64)
    cdef int64_t[::1] v_slots = slots
    for i in range(n):
        d = alive[i][2]
        memcpy(&v_slots[i * ns], &g.pd_slots[<Py_ssize_t>d * ns], ns * sizeof(int64_t))
    pick = [x[2] for x in alive]
    s[p + "pd.slots"] = slots
    s[p + "pd.first_ts"] = np.array([g.pd_first_ts[d] for d in pick], dtype=np.float64)
    s[p + "pd.last_ts"] = np.array([g.pd_last_ts[d] for d in pick], dtype=np.float64)
    s[p + "pd.first_pos"] = np.array([g.pd_first_pos[d] for d in pick], dtype=np.int64)
    s[p + "pd.last_pos"] = np.array([g.pd_last_pos[d] for d in pick], dtype=np.int64)
    s[p + "pd.thr"] = np.array([g.pd_thr[d] for d in pick], dtype=np.float64)
    s[p + "pd.seq"] = np.array([g.pd_seq[d] for d in pick], dtype=np.int64)
    s[p + "pd.role"] = np.array([g.pd_role[d] for d in pick], dtype=np.int32)
    s[p + "pd.key"] = np.array([g.pd_key[d] for d in pick], dtype=np.int64)
    s[p + "pd.counter"] = g.pd_counter
    return 0


# ------------------------------------------------------------------ in

cdef int set_kernel_state(Kernel k, dict s) except -1:
    """Lay ``s`` (kernel_state of a kernel of the same lowered net) out in ``k``, a fresh kernel."""
    cdef EventStore st = k.store
    cdef Py_ssize_t ng = len(k.groups), na = st.nattrs, n, gi, i
    check(k.events == 0 and st.n == 0 and k.out_n == 0, "the kernel is not fresh")
    check(s.get("ngroups") == ng and s.get("nattrs") == na, "the snapshot's net has another layout")
    store_in(st, s, na)
    n = length(s, "grp.ev")
    grp_ev = column(s, "grp.ev", np.int64, n)
    grp_type = column(s, "grp.type", np.int32, n)
    grp_keys = column(s, "grp.keys", np.int64, n * ng)
    grp_from = column(s, "grp.from", np.int32, n) if "grp.from" in s else np.zeros(n, dtype=np.int32)
    check(all([0 <= e < st.n for e in grp_ev.tolist()]), "the open timestamp group refers to no stored event")
    check(all([0 <= t < k.ntypes for t in grp_type.tolist()]), "an event type out of range")
    check(all([x >= 0 for x in grp_keys.tolist()]), "a negative key")
    if n:
        k.grp_cap = max(16, n)
        k.grp_ev = <int64_t*>grow(k.grp_ev, k.grp_cap, sizeof(int64_t))
        k.grp_type = <int32_t*>grow(k.grp_type, k.grp_cap, sizeof(int32_t))
        k.grp_keys = <int64_t*>grow(k.grp_keys, k.grp_cap * max(ng, 1), sizeof(int64_t))
        k.grp_from = <int32_t*>grow(k.grp_from, k.grp_cap, sizeof(int32_t))
        put_i64(k.grp_ev, grp_ev)
        put_i32(k.grp_from, grp_from)
        put_i32(k.grp_type, grp_type)
        put_i64(k.grp_keys, grp_keys)
    k.grp_n = n
    k.grp_rows = s["grp.rows"]; k.grp_ts = s["grp.ts"]; k.grp_clock = s.get("grp.clock", -1)
    k.grp_comp = s.get("grp.comp", 0)
    k.now_ts = s["now_ts"]; k.now_pos = s["now_pos"]; k.now_ev = s["now_ev"]; k.strict_ts = s["strict_ts"]
    k.last_ts = s["last_ts"]; k.last_key = s["last_key"]; k.events = s["events"]; k.created = s["created"]
    k.completed = s["completed"]; k.cur_row = s["cur_row"]; k.sweep_every = s["sweep_every"]
    k.since_sweep = s["since_sweep"]; k.compact_slack = s["compact_slack"]; k.emit_at = s["emit_at"]
    k.composites = s["composites"]; k.taken = s["taken"]; k.emit_ts = s["emit_ts"]; k.emit_tag = s["emit_tag"]
    k.in_ts = s["in_ts"]; k.in_pos = s["in_pos"]; k.in_tag = s["in_tag"]
    k.timeouts = column(s, "timeouts", np.int64, len(k.timeouts)).tolist()
    n = length(s, "kills.ev")
    kills = zip(column(s, "kills.group", np.int32, n).tolist(), column(s, "kills.key", np.int64, n).tolist(),
                column(s, "kills.neg", np.int32, n).tolist(), column(s, "kills.ev", np.int64, n).tolist())
    k.kills = []
    for gi, key, j, x in kills:
        check(0 <= gi < ng and key >= 0 and 0 <= j < (<Group>k.groups[gi]).nnegs and 0 <= x < st.n,
              "a strict cancellation out of range")
        (<Group>k.groups[gi]).reserve_keys(key + 1)
        k.kills.append((k.groups[gi], key, j, x))
    k.nkills = len(k.kills)
    n = length(s, "consumed.seq")
    domains = column(s, "consumed.domain", np.int32, n).tolist()
    check(all([0 <= d < len(k.consumed) for d in domains]), "a consumption domain out of range")
    for d, q, w in zip(domains, column(s, "consumed.seq", np.int64, n).tolist(),
                       column(s, "consumed.ts", np.float64, n).tolist()):
        k.consumed[d][q] = w
    for gi in range(ng):
        set_group_state(k, k.groups[gi], f"g{gi}.", s)
    return 0


cdef int put_f64(double* p, object a) except -1:
    cdef const double[::1] v = a
    if v.shape[0]:
        memcpy(p, &v[0], v.shape[0] * sizeof(double))
    return 0


cdef int put_i64(int64_t* p, object a) except -1:
    cdef const int64_t[::1] v = a
    if v.shape[0]:
        memcpy(p, &v[0], v.shape[0] * sizeof(int64_t))
    return 0


cdef int put_i32(int32_t* p, object a) except -1:
    cdef const int32_t[::1] v = a
    if v.shape[0]:
        memcpy(p, &v[0], v.shape[0] * sizeof(int32_t))
    return 0


cdef int put_i8(int8_t* p, object a) except -1:
    cdef const int8_t[::1] v = a
    if v.shape[0]:
        memcpy(p, &v[0], v.shape[0] * sizeof(int8_t))
    return 0


cdef int store_in(EventStore st, dict s, Py_ssize_t na) except -1:
    cdef Py_ssize_t n = length(s, "store.ts"), nr = length(s, "store.ranks")
    ts = column(s, "store.ts", np.float64, n)
    pos = column(s, "store.pos", np.int64, n)
    ids = column(s, "store.id", np.int64, n)
    seq = column(s, "store.seq", np.int64, n)
    val = column(s, "store.val", np.float64, n * na)
    tag = column(s, "store.tag", np.int8, n * na)
    ranks = column(s, "store.ranks", np.float64, nr)
    st.reserve(n)
    put_f64(st.ts, ts); put_i64(st.pos, pos); put_i64(st.id, ids); put_i64(st.seq, seq)
    put_f64(st.val, val); put_i8(st.tag, tag)
    st.n = n
    st.next_seq = s["store.next_seq"]
    st.ranks = <double*>grow(st.ranks, nr, sizeof(double))
    put_f64(st.ranks, ranks)
    st.nranks = nr
    return 0


cdef int set_group_state(Kernel k, Group g, str p, dict s) except -1:
    cdef Py_ssize_t n, i
    n = length(s, p + "floors")
    floors = column(s, p + "floors", np.int64, n).tolist()
    g.reserve_keys(max(n, 1))
    for i in range(n):
        g.floors[i] = floors[i]
    nodes_in(k, g, p, s)
    tokens_in(k, g, p, s)
    negation_in(k, g, p, s)
    g.dropped = column(s, p + "dropped", np.int64, g.nbits).tolist()
    return 0


cdef int nodes_in(Kernel k, Group g, str p, dict s) except -1:
    """The Kleene element arena, as it was (collected: every node is reachable)."""
    cdef Py_ssize_t n = length(s, p + "nd.ev"), i, na = g.naggs
    ev = column(s, p + "nd.ev", np.int64, n)
    first = column(s, p + "nd.first", np.int64, n)
    prev = column(s, p + "nd.prev", np.int32, n)
    check(n == 0 or g.has_kleene, "Kleene elements in a net without Kleene closure")
    for i, (e, f, q) in enumerate(zip(ev.tolist(), first.tolist(), prev.tolist())):
        check(0 <= e < k.store.n and 0 <= f < k.store.n and -1 <= q < i, "a Kleene element out of range")
    count = column(s, p + "nd.count", np.int64, n)
    reserve_nodes(g, n)
    put_i64(g.nd_ev, ev); put_i64(g.nd_first, first); put_i64(g.nd_count, count); put_i32(g.nd_prev, prev)
    if na:  # (a net without list aggregates holds no accumulators; earlier snapshots wrote one unused per node)
        put_f64(g.nd_acc_v, column(s, p + "nd.acc_v", np.float64, n * na))
        put_i8(g.nd_acc_t, column(s, p + "nd.acc_t", np.int8, n * na))
        put_i64(g.nd_acc_n, column(s, p + "nd.acc_n", np.int64, n * na))
    g.nd_n = n
    g.nd_live = s[p + "nd.live"]
    return 0


cdef int tokens_in(Kernel k, Group g, str p, dict s) except -1:
    """Tokens 0..n-1 in their lists (zombies last), the rest of the arena free (lowest first)."""
    cdef Py_ssize_t n = length(s, p + "tk.lid"), i, j, ns = g.nslots, lid
    cdef int32_t t, ztail = -1
    cdef int64_t ev
    lids = column(s, p + "tk.lid", np.int64, n).tolist()
    place = column(s, p + "tk.place", np.int32, n)
    slots = column(s, p + "tk.slots", np.int64, n * ns)
    cdef const int32_t[::1] v_place = place
    cdef const int64_t[::1] v_slots = slots
    g.reserve_tokens(max(n, 1))
    for i in range(n):
        check(lids[i] >= -1 and 0 <= v_place[i] < g.nplaces, "a token out of range")
        check(lids[i] < 0 or lids[i] % g.nplaces == v_place[i], "a token listed at another place")
        for j in range(ns):
            ev = v_slots[i * ns + j]
            check(ev >= -1 and ev < (g.nd_n if g.slot_kleene[j] else k.store.n), "a token binds no stored event")
    for i in range(n):
        memcpy(&g.tk_slots[i * ns], &v_slots[i * ns], ns * sizeof(int64_t))
    put_i32(g.tk_place, place)
    pins = column(s, p + "tk.pins", np.int32, n)
    put_f64(g.tk_first_ts, column(s, p + "tk.first_ts", np.float64, n))
    put_f64(g.tk_last_ts, column(s, p + "tk.last_ts", np.float64, n))
    put_i64(g.tk_first_pos, column(s, p + "tk.first_pos", np.int64, n))
    put_i64(g.tk_last_pos, column(s, p + "tk.last_pos", np.int64, n))
    put_i64(g.tk_last_key, column(s, p + "tk.last_key", np.int64, n))
    put_i64(g.tk_users, column(s, p + "tk.users", np.int64, n))
    blocked = column(s, p + "tk.blocked", np.int64, n)
    ext = column(s, p + "tk.ext", np.int64, n)
    counted = column(s, p + "tk.counted", np.int64, n)
    # (arrays a net without negations, ON TIMEOUT or LIMIT does not hold: Group.timed, blocking)
    check(g.blocking or not blocked.any(), "blocked tokens in a net without negations")
    check(g.timed or not (pins.any() or ext.any() or counted.any()), "watched tokens in a net without ON TIMEOUT or LIMIT")
    if g.blocking:
        put_i64(g.tk_blocked, blocked)
    if g.timed:
        put_i32(g.tk_pins, pins)
        put_i64(g.tk_ext, ext)
        put_i64(g.tk_counted, counted)
        for i in range(n, g.tk_cap):
            g.tk_pins[i] = 0
    g.free_head = -1
    for i in range(g.tk_cap - 1, n - 1, -1):
        g.tk_next[i] = g.free_head
        g.free_head = <int32_t>i
    g.zombies = -1
    for i in range(n):
        t = <int32_t>i
        g.tk_next[t] = -1
        lid = lids[i]
        if lid < 0:
            if ztail < 0:
                g.zombies = t
            else:
                g.tk_next[ztail] = t
            ztail = t
            continue
        g.reserve_keys(lid // g.nplaces + 1)
        if g.tails[lid] < 0:
            g.heads[lid] = t
        else:
            g.tk_next[g.tails[lid]] = t
        g.tails[lid] = t
    g.live_tokens = n
    watch_in(g, n, p, s)
    return 0


cdef int watch_in(Group g, Py_ssize_t ntok, str p, dict s) except -1:
    """Deadlines and quotas as they were, the tokens by their new numbers."""
    cdef Py_ssize_t n = length(s, p + "dl.n"), nq = length(s, p + "q.key"), ne = length(s, p + "qe.n"), i, at = 0
    dl = list(zip(column(s, p + "dl.deadline", np.float64, n).tolist(), column(s, p + "dl.n", np.int64, n).tolist(),
                  column(s, p + "dl.key", np.int64, n).tolist(), column(s, p + "dl.token", np.int32, n).tolist(),
                  column(s, p + "dl.bit", np.int32, n).tolist()))
    check(all([0 <= e[3] < ntok and 0 <= e[4] < g.nbits and e[2] >= 0 for e in dl]), "a deadline out of range")
    g.deadlines = dl
    g.reserve_keys(max([e[2] for e in dl] + [0]) + 1)  # (a zombie's key may have nothing else)
    g.dl_counter = s[p + "dl.counter"]
    sizes = column(s, p + "q.size", np.int64, nq).tolist()
    check(sum(sizes) == ne and all([x >= 0 for x in sizes]), "quota sizes do not add up")
    nseqs = column(s, p + "qe.nseqs", np.int64, ne).tolist()
    seqs = column(s, p + "qe.seqs", np.int64, sum(nseqs)).tolist()
    tokens = column(s, p + "qe.token", np.int32, ne).tolist()
    check(all([0 <= t < ntok for t in tokens]) and all([x >= 0 for x in nseqs]), "a quota entry out of range")
    cut = 0
    entries = []
    for e_ts, e_pos, m, e_n, t in zip(column(s, p + "qe.ts", np.float64, ne).tolist(),
                                      column(s, p + "qe.pos", np.int64, ne).tolist(), nseqs,
                                      column(s, p + "qe.n", np.int64, ne).tolist(), tokens):
        entries.append((e_ts, e_pos, tuple(seqs[cut:cut + m]), e_n, t))
        cut += m
    g.quotas = {}
    for key, b, size, live, count in zip(column(s, p + "q.key", np.int64, nq).tolist(),
                                         column(s, p + "q.bit", np.int32, nq).tolist(), sizes,
                                         column(s, p + "q.live", np.int64, nq).tolist(),
                                         column(s, p + "q.n", np.int64, nq).tolist()):
        check(0 <= b < g.nbits and key >= 0, "a quota out of range")
        g.reserve_keys(key + 1)
        g.quotas[(key, b)] = [entries[at:at + size], live, count]
        at += size
    return 0


cdef int negation_in(Kernel k, Group g, str p, dict s) except -1:
    """Negative-event buffers appended in order; waiting matches pushed in heap order (so the
    heap array is sorted, as the next snapshot lists it)."""
    cdef Py_ssize_t n = length(s, p + "nb.lid"), i, j, ns = g.nslots, key
    cdef int32_t d
    nb_lid = column(s, p + "nb.lid", np.int64, n).tolist()
    nb_ev = column(s, p + "nb.ev", np.int64, n).tolist()
    for lid, ev in zip(nb_lid, nb_ev):
        check(g.nnegs > 0 and lid >= 0 and 0 <= ev < k.store.n, "a negative event out of range")
        g.reserve_keys(lid // g.nnegs + 1)
        g.buffer_negative(lid // g.nnegs, lid % g.nnegs, ev)
    n = length(s, p + "pd.key")
    slots = column(s, p + "pd.slots", np.int64, n * ns)
    cdef const int64_t[::1] v_slots = slots
    check(all([-1 <= e < (g.nd_n if g.slot_kleene[i % max(ns, 1)] else k.store.n) for i, e in enumerate(slots.tolist())]),
          "a waiting match binds no stored event")
    keys = column(s, p + "pd.key", np.int64, n).tolist()
    roles = column(s, p + "pd.role", np.int32, n).tolist()
    check(all([x >= 0 for x in keys]) and all([0 <= r < g.role_pattern.shape[0] for r in roles]),
          "a waiting match out of range")
    first_ts = column(s, p + "pd.first_ts", np.float64, n).tolist()
    last_ts = column(s, p + "pd.last_ts", np.float64, n).tolist()
    first_pos = column(s, p + "pd.first_pos", np.int64, n).tolist()
    last_pos = column(s, p + "pd.last_pos", np.int64, n).tolist()
    thr = column(s, p + "pd.thr", np.float64, n).tolist()
    seq = column(s, p + "pd.seq", np.int64, n).tolist()
    for i in range(n):
        d = g.new_pending()
        if ns:
            memcpy(&g.pd_slots[<Py_ssize_t>d * ns], &v_slots[i * ns], ns * sizeof(int64_t))
        g.pd_first_ts[d] = first_ts[i]; g.pd_last_ts[d] = last_ts[i]
        g.pd_first_pos[d] = first_pos[i]; g.pd_last_pos[d] = last_pos[i]
        g.pd_thr[d] = thr[i]; g.pd_seq[d] = seq[i]; g.pd_role[d] = roles[i]
        key = keys[i]
        g.reserve_keys(key + 1)
        g.pd_key[d] = key
        g.pd_flags[d] = 3
        g.pd_next[d] = g.pd_heads[key]
        g.pd_heads[key] = d
        g.heap_push(d)
    g.pd_counter = s[p + "pd.counter"]
    return 0
