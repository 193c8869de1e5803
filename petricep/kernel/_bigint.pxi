# Ints beyond 2**53 (included by _kernel.pyx).
#
# The kernel holds values as float64, which holds every int up to 2**53 exactly and rounds the
# ones beyond: 9007199254740993 would read as 9007199254740992, so ``a.x = b.x`` would hold
# between two different 16-digit card numbers. Such an int is held as TAG_BIG instead: its
# value is the code of the Python int in ``Kernel.bigs`` (interned, so equal ints share a
# code). Every comparison and arithmetic that meets one, and an int result that leaves the
# exact range, is computed here by Python's own operators (with the interpreter lock; a stream
# of such values pays for it, every other stream pays two tag tests), so the results are the
# Python engine's (runtime/expr.py) exactly.

cdef double EXACT_INT = 9007199254740992.0  # 2**53: every int up to it is a float64


cdef object number_of(Kernel k, double v, int8_t t):
    """A numeric kernel value as the Python number the engine holds."""
    if t == TAG_BIG:
        return k.bigs[<Py_ssize_t>v]
    if t == TAG_INT:
        return int(v)
    if t == TAG_BOOL:
        return v != 0.0
    return v


cdef int hold_number(Kernel k, object r, double* out, int8_t* tag) except -1:
    """A Python number as the kernel holds it: an int beyond 2**53 by its code."""
    if isinstance(r, bool):
        out[0] = 1.0 if r else 0.0
        tag[0] = TAG_BOOL
    elif isinstance(r, int):
        if -EXACT_INT <= r <= EXACT_INT:
            out[0] = <double>r
            tag[0] = TAG_INT
        else:
            out[0] = <double>k.big_code(r)
            tag[0] = TAG_BIG
    else:
        out[0] = <double>r
        tag[0] = TAG_NUM
    return 0


cdef double big_compare(Kernel k, int op, double a, int8_t ta, double b, int8_t tb) except -1.0 with gil:
    """:func:`compare` of two numbers where one is beyond 2**53."""
    x = number_of(k, a, ta)
    y = number_of(k, b, tb)
    if op == 0:
        r = x == y
    elif op == 1:
        r = x != y
    elif op == 2:
        r = x < y
    elif op == 3:
        r = x <= y
    elif op == 4:
        r = x > y
    else:
        r = x >= y
    return 1.0 if r else 0.0


cdef int big_arith(Kernel k, int op, double* a, int8_t* ta, double b, int8_t tb) except -1 with gil:
    """:func:`arith` on numbers where one is beyond 2**53 or the int result would be: Python's
    operators (a division by zero: a value that does not exist; an int too large for a
    float mixed with one: the engine's overflow error)."""
    x = number_of(k, a[0], ta[0])
    y = number_of(k, b, tb)
    try:
        if op == 0:
            r = x + y
        elif op == 1:
            r = x - y
        elif op == 2:
            r = x * y
        elif op == 3:
            r = x / y
        else:
            r = x % y
    except ZeroDivisionError:
        ta[0] = TAG_MISSING
        return 0
    except OverflowError:
        raise KernelEvaluationError("overflow", op, a[0], ta[0], b, tb)
    hold_number(k, r, a, ta)
    return 0


cdef int big_negate(Kernel k, double* a, int8_t* ta) except -1 with gil:
    hold_number(k, -number_of(k, a[0], ta[0]), a, ta)
    return 0


cdef int big_average(Kernel k, double total, int8_t t, int64_t n, double* out, int8_t* tag) except -1 with gil:
    """``avg`` of a list whose sum is beyond 2**53: Python's int / int (correctly rounded)."""
    try:
        out[0] = number_of(k, total, t) / n
    except OverflowError:
        raise KernelEvaluationError("overflow", 3, total, t, <double>n, TAG_INT)
    tag[0] = TAG_NUM
    return 0
