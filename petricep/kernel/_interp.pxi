# The guard bytecode interpreter (included by _kernel.pyx).
#
# lowering.py compiles every condition and RETURN expression to a small stack bytecode, so one
# compiled kernel runs any net without generating C per query. The interpreter runs for every
# candidate firing, so it is ``cdef inline`` and works on the Kernel's preallocated value and
# tag stacks (vstack / tstack); values carry a kind tag (TAG_*) so that the comparisons and
# arithmetic give the Python engine's results (runtime/expr.py) on ints, floats, strings, None.


cdef int eval_cond(Kernel k, Group g, int ci, const int64_t* slots, int cur_slot, int64_t cur) except -1 nogil:
    """Condition ``ci`` on the binding ``slots`` with ``cur`` in ``cur_slot``: 1 holds
    (also vacuously: it reads a variable an OR left unbound), 0 fails.

    Most conditions are one comparison of two attributes or of an attribute with a
    constant (the lowering splits a WHERE into its conjuncts): those are compared here,
    as interp's superinstructions do, without entering its dispatch loop -- a guard is
    evaluated for nearly every event and candidate firing (bench/HISTORY.md, sixteenth pass)."""
    cdef const int32_t* code = g.codep + g.cond_start[ci]
    if code[0] == OP_CMP_AA and code[6] == OP_END:
        return 0 if cmp_attrs(k, g, slots, cur_slot, cur, code) == 0 else 1  # (2, unbound: holds)
    if code[0] == OP_CMP_AC and code[5] == OP_END:
        return 0 if cmp_const(k, g, slots, cur_slot, cur, code) == 0 else 1
    if interp(k, g, ci, slots, cur_slot, cur):
        return 1
    return 1 if k.vstack[0] != 0.0 and k.tstack[0] != TAG_MISSING else 0


cdef int eval_value(Kernel k, Group g, int ci, int64_t* slots, double* out, int8_t* tag) except -1 nogil:
    """A RETURN value on the match's slots (as_condition_free): ``None`` where it reads a
    variable an OR left unbound or a value that does not exist."""
    if interp(k, g, ci, slots, -1, -1) or k.tstack[0] == TAG_MISSING:
        out[0] = 0.0
        tag[0] = TAG_NULL
    else:
        out[0] = k.vstack[0]
        tag[0] = k.tstack[0]
    return 0


cdef inline int interp(Kernel k, Group g, int ci, const int64_t* slots, int cur_slot, int64_t cur) except -1 nogil:
    """Run program ``ci``: 1 when it reads an unbound slot (the engine's Skip), else 0
    with the result on top of the value stack.

    One function on purpose, though long: an interpreter's dispatch loop keeps its program
    counter, stack pointer and operands in registers only while the whole switch is one C
    function; its leaves (load, compare, arith) are ``cdef inline``."""
    cdef const int32_t* code = g.codep
    cdef int pc = g.cond_start[ci]
    cdef int sp = 0, op, r
    cdef int8_t ta
    cdef int64_t node
    cdef double* v = k.vstack
    cdef int8_t* tg = k.tstack
    while True:
        op = code[pc]
        if op == OP_END:
            return 0
        elif op == OP_CMP_AA:
            r = cmp_attrs(k, g, slots, cur_slot, cur, &code[pc])
            if r == 2:
                return 1
            v[sp] = r
            tg[sp] = TAG_BOOL
            sp += 1
            pc += 6
        elif op == OP_CMP_AC:
            r = cmp_const(k, g, slots, cur_slot, cur, &code[pc])
            if r == 2:
                return 1
            v[sp] = r
            tg[sp] = TAG_BOOL
            sp += 1
            pc += 5
        elif op == OP_ATTR:
            if load(k, g, slots, cur_slot, cur, code[pc + 1], code[pc + 2], &v[sp], &tg[sp]):
                return 1
            sp += 1
            pc += 3
        elif op == OP_CONST:
            v[sp] = g.consts[code[pc + 1]]
            tg[sp] = g.const_tags[code[pc + 1]]
            sp += 1
            pc += 2
        elif op == OP_CMP:
            sp -= 1
            v[sp - 1] = compare(k, code[pc + 1], v[sp - 1], tg[sp - 1], v[sp], tg[sp], -1, 0, -1, 0)
            tg[sp - 1] = TAG_BOOL
            pc += 2
        elif op == OP_ARITH:
            sp -= 1
            arith(k, code[pc + 1], &v[sp - 1], &tg[sp - 1], v[sp], tg[sp])
            pc += 2
        elif op == OP_NEG:
            ta = tg[sp - 1]
            if ta == TAG_STR or ta == TAG_NULL:
                raise KernelEvaluationError("negate", 0, v[sp - 1], ta, 0.0, TAG_NUM)
            if ta == TAG_BIG:
                big_negate(k, &v[sp - 1], &tg[sp - 1])
                pc += 1
                continue
            v[sp - 1] = -v[sp - 1]
            if ta == TAG_BOOL:
                tg[sp - 1] = TAG_INT
            pc += 1
        elif op == OP_NOT:
            if tg[sp - 1] != TAG_MISSING:  # (a value that does not exist stays so: false at the top)
                v[sp - 1] = 0.0 if v[sp - 1] != 0.0 else 1.0
                tg[sp - 1] = TAG_BOOL
            pc += 1
        elif op == OP_KATTR:
            if kleene_load(k, g, cur if code[pc + 1] == cur_slot else slots[code[pc + 1]], code[pc + 2],
                           code[pc + 3], &v[sp], &tg[sp]):
                return 1
            sp += 1
            pc += 4
        elif op == OP_KATTR_IN:
            node = kleene_in_iteration(k, g, cur if code[pc + 1] == cur_slot else slots[code[pc + 1]],
                                       cur if code[pc + 4] == cur_slot else slots[code[pc + 4]], code[pc + 3],
                                       code[pc + 5])
            if node < 0:
                return 1
            if kleene_load(k, g, node, code[pc + 2], 0, &v[sp], &tg[sp]):
                return 1
            sp += 1
            pc += 6
        elif op == OP_AGG:
            if kleene_agg(k, g, code[pc + 1], cur if code[pc + 1] == cur_slot else slots[code[pc + 1]], code[pc + 2],
                          code[pc + 3], &v[sp], &tg[sp]):
                return 1
            sp += 1
            pc += 4
        elif op == OP_BOOL:
            v[sp - 1] = 1.0 if v[sp - 1] != 0.0 and tg[sp - 1] != TAG_MISSING else 0.0
            tg[sp - 1] = TAG_BOOL
            pc += 1
        elif op == OP_JF:
            if v[sp - 1] == 0.0 or tg[sp - 1] == TAG_MISSING:
                pc += 2 + code[pc + 1]
            else:
                sp -= 1
                pc += 2
        elif op == OP_JT:
            if v[sp - 1] != 0.0 and tg[sp - 1] != TAG_MISSING:
                pc += 2 + code[pc + 1]
            else:
                sp -= 1
                pc += 2
        else:
            raise RuntimeError(f"bad opcode {op}")


cdef inline int cmp_attrs(Kernel k, Group g, const int64_t* slots, int cur_slot, int64_t cur, const int32_t* c) except -1 nogil:
    """The superinstruction ``OP_CMP_AA op slot attr slot attr`` at ``c``: 1 or 0, the
    comparison's truth; 2 where it reads an unbound slot."""
    cdef double a, b
    cdef int8_t ta, tb
    if load(k, g, slots, cur_slot, cur, c[2], c[3], &a, &ta):
        return 2
    if load(k, g, slots, cur_slot, cur, c[4], c[5], &b, &tb):
        return 2
    return 1 if compare(k, c[1], a, ta, b, tb, cur if c[2] == cur_slot else slots[c[2]], c[3],
                        cur if c[4] == cur_slot else slots[c[4]], c[5]) != 0.0 else 0


cdef inline int cmp_const(Kernel k, Group g, const int64_t* slots, int cur_slot, int64_t cur, const int32_t* c) except -1 nogil:
    """The superinstruction ``OP_CMP_AC op slot attr const``: as :func:`cmp_attrs`."""
    cdef double a
    cdef int8_t ta
    cdef int64_t node
    if load(k, g, slots, cur_slot, cur, c[2], c[3], &a, &ta):
        return 2
    return 1 if compare(k, c[1], a, ta, g.consts[c[4]], g.const_tags[c[4]],
                        cur if c[2] == cur_slot else slots[c[2]], c[3], -1, 0) != 0.0 else 0


cdef inline int load(Kernel k, Group g, const int64_t* slots, int cur_slot, int64_t cur, int slot, int attr,
                     double* out, int8_t* tag) except -1 nogil:
    """An attribute of the event in ``slot``; returns 1 when the slot is unbound (the
    conjunct then holds vacuously, as the Python engine's Skip)."""
    cdef int64_t ev = cur if slot == cur_slot else slots[slot]
    if ev < 0:
        return 1
    if attr < 0:  # POS_CODE: the input position (an EVENTS gap's guard)
        out[0] = <double>k.store.pos[ev]
        tag[0] = TAG_INT
        return 0
    out[0] = k.store.val[ev * k.store.nattrs + attr]
    tag[0] = k.store.tag[ev * k.store.nattrs + attr]
    return 0


cdef inline double compare(Kernel k, int op, double a, int8_t ta, double b, int8_t tb,
                           int64_t ea, int aa, int64_t eb, int ab) except -1.0 nogil:
    """Python's comparison of two values: numbers (float, int, bool) by value, text by
    code (=, !=) or rank, None equal only to None; other mixes are unequal, and ordering
    them is an error. Two floats or two ints (nearly every guard) are compared at once.
    ``ea`` / ``aa``, ``eb`` / ``ab``: the stored event and attribute each operand was read of
    (-1: not one attribute), only for the error's location (a None may be a field the event
    lacks: missing.py); the fast path never reads them."""
    if ta == tb and (ta == TAG_NUM or ta == TAG_INT):
        return ordered(op, a, b)
    return compare_kinds(k, op, a, ta, b, tb, ea, aa, eb, ab)


cdef inline double ordered(int op, double a, double b) noexcept nogil:
    if op == 0:
        return 1.0 if a == b else 0.0
    if op == 1:
        return 1.0 if a != b else 0.0
    if op == 2:
        return 1.0 if a < b else 0.0
    if op == 3:
        return 1.0 if a <= b else 0.0
    if op == 4:
        return 1.0 if a > b else 0.0
    return 1.0 if a >= b else 0.0


cdef double compare_kinds(Kernel k, int op, double a, int8_t ta, double b, int8_t tb,
                          int64_t ea, int aa, int64_t eb, int ab) except -1.0 nogil:
    """:func:`compare` of values of other kinds, or of two kinds."""
    cdef int8_t ca = ta, cb = tb
    if ta == TAG_MISSING or tb == TAG_MISSING:
        return 0.0  # reads a value that does not exist (division by zero): false
    if ca == TAG_INT or ca == TAG_BOOL or ca == TAG_BIG:
        ca = TAG_NUM
    if cb == TAG_INT or cb == TAG_BOOL or cb == TAG_BIG:
        cb = TAG_NUM
    if ca != cb or ca == TAG_NULL:
        if op == 0:
            return 1.0 if ca == cb else 0.0
        if op == 1:
            return 0.0 if ca == cb else 1.0
        raise KernelEvaluationError("compare", op, a, ta, b, tb, -1, k.store.pos[ea] if ea >= 0 else -1, aa,
                                    k.store.pos[eb] if eb >= 0 else -1, ab)
    if ta == TAG_BIG or tb == TAG_BIG:
        return big_compare(k, op, a, ta, b, tb)
    if ca == TAG_STR and op >= 2:
        a = k.store.ranks[<Py_ssize_t>a]
        b = k.store.ranks[<Py_ssize_t>b]
    return ordered(op, a, b)


cdef inline int arith(Kernel k, int op, double* a, int8_t* ta, double b, int8_t tb) except -1 nogil:
    """Python's arithmetic on numbers: int op int is an int (but for /), else a float;
    division by zero gives a value that does not exist. An int beyond 2**53, or an int
    result that would be, is computed exactly (:func:`big_arith`)."""
    cdef double r, a0 = a[0]
    cdef int8_t ka = ta[0]
    if ka == TAG_MISSING or tb == TAG_MISSING:
        ta[0] = TAG_MISSING
        return 0
    if ka == TAG_STR or ka == TAG_NULL or tb == TAG_STR or tb == TAG_NULL:
        raise KernelEvaluationError("compute", op, a[0], ka, b, tb)
    if ka == TAG_BIG or tb == TAG_BIG:
        return big_arith(k, op, a, ta, b, tb)
    if (ka == TAG_INT or ka == TAG_BOOL) and (tb == TAG_INT or tb == TAG_BOOL) and op != 3:
        ta[0] = TAG_INT
    else:
        ta[0] = TAG_NUM
    if op == 0:
        a[0] = a[0] + b
    elif op == 1:
        a[0] = a[0] - b
    elif op == 2:
        a[0] = a[0] * b
    elif b == 0.0:
        ta[0] = TAG_MISSING
    elif op == 3:
        a[0] = a[0] / b
    else:  # Python's modulo: the sign of the divisor
        r = fmod(a[0], b)
        if r != 0.0 and ((r < 0.0) != (b < 0.0)):
            r += b
        a[0] = r
    if ta[0] == TAG_INT and fabs(a[0]) >= EXACT_INT:  # (the float may have rounded it)
        a[0] = a0
        ta[0] = ka
        return big_arith(k, op, a, ta, b, tb)
    return 0

