# The codes of text values and of ints beyond 2**53 still referenced (included by _kernel.pyx).
#
# A string value is held as its code in KernelRun's dictionary (TAG_STR), an int beyond 2**53
# as its code in Kernel.bigs (TAG_BIG); both dictionaries only grow, so a long run over many
# distinct values (card numbers, user ids as text) kept every value it ever read though only
# the live partial matches' events are ever read again. KernelRun.compact_values asks the
# kernel which codes its state still holds (mark_values), renumbers those and has the kernel
# rewrite them in place (recode_values). What holds a value code between two batches: the
# event store (every stored event's attribute values: input events, composite events'
# RETURN values) and the Kleene element arenas' running aggregates (a sum or min / max of
# ints beyond 2**53). Every other part refers to events by their store index. Matches
# buffered (their RETURN values) are not looked at: KernelRun compacts only when none is.
# Neither pass runs in the firing loop: KernelRun calls them between batches, when a
# dictionary has outgrown what the state held at the last compaction (amortized).


cdef inline void mark_code(uint8_t[::1] used, double v) noexcept:
    cdef Py_ssize_t c = <Py_ssize_t>v
    if 0 <= c < used.shape[0]:
        used[c] = 1


cdef int mark_values(Kernel k, uint8_t[::1] strs, uint8_t[::1] bigs) except -1:
    """Set ``strs[c]`` for every string code ``c`` the state holds, ``bigs[c]`` for every
    big-int code (codes beyond the arrays' lengths are not the dictionaries': left alone)."""
    cdef EventStore st = k.store
    cdef Group g
    cdef Py_ssize_t i
    cdef int8_t t
    for i in range(st.n * st.nattrs):
        t = st.tag[i]
        if t == TAG_STR:
            mark_code(strs, st.val[i])
        elif t == TAG_BIG:
            mark_code(bigs, st.val[i])
    for g in k.groups:
        if not g.has_kleene:
            continue
        for i in range(g.nd_n * g.naggs):
            t = g.nd_acc_t[i]
            if t == TAG_STR:
                mark_code(strs, g.nd_acc_v[i])
            elif t == TAG_BIG:
                mark_code(bigs, g.nd_acc_v[i])
    return 0


cdef inline void recode(const int64_t[::1] remap, double* v) noexcept:
    cdef Py_ssize_t c = <Py_ssize_t>v[0]
    if 0 <= c < remap.shape[0] and remap[c] >= 0:
        v[0] = <double>remap[c]


cdef int recode_values(Kernel k, const int64_t[::1] strs, const int64_t[::1] bigs) except -1:
    """Every string code ``c`` the state holds as ``strs[c]``, every big-int code as
    ``bigs[c]`` (the same places :func:`mark_values` reads)."""
    cdef EventStore st = k.store
    cdef Group g
    cdef Py_ssize_t i
    cdef int8_t t
    for i in range(st.n * st.nattrs):
        t = st.tag[i]
        if t == TAG_STR:
            recode(strs, &st.val[i])
        elif t == TAG_BIG:
            recode(bigs, &st.val[i])
    for g in k.groups:
        if not g.has_kleene:
            continue
        for i in range(g.nd_n * g.naggs):
            t = g.nd_acc_t[i]
            if t == TAG_STR:
                recode(strs, &g.nd_acc_v[i])
            elif t == TAG_BIG:
                recode(bigs, &g.nd_acc_v[i])
    return 0
