# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The row matcher of SQL MATCH_RECOGNIZE queries, a compiled module of its own (the firing
kernel, ``_kernel.pyx``, is another; they share ``_alloc.pxd``).

It runs the Python row runtime's token loop (runtime/rows.py RowRuntime) for a query that
kernel/rowlowering.py lowered: per partition one search per start row from where AFTER MATCH
SKIP allows, its threads in preference order (a place's exits are ordered), contiguous rows
(a thread no row extends dies), the preferred match of a start row final when no thread is
left, matches taken in start-row order. A DEFINE that reads only the row it classifies and
the rows before it (PREV) depends on (variable, row) alone: it is evaluated once per row and
variable (memo); where every DEFINE is such (memoryless) a search keeps at most one thread
per place (RowRuntime._step's ``taken``). A DEFINE reading the rows mapped so far (FIRST,
LAST, aggregates, another variable's column) is asked of its Python closure on the thread's
candidate rows, as the Python runtime evaluates it (rowlowering GUARD_PATH).

A thread's rows are contiguous from its search's start row, so a thread is (place, exits it
may still take, its last path node); path nodes (variable, parent) live in the search's own
arena and are freed with it. A decided match leaves as (0, partition, start row, rows,
match number) with partition the Python RowPartition with rows the MatchRow tuple ((index, variable, event), ...) the Python side
computes MEASURES from (kernel/rowengine.py); an AFTER MATCH SKIP that cannot restart is
(1, partition, start, rows, number), raised there with the Python runtime's message.

The partition's events stay in the Python RowPartition the runtime uses (rows, base), so
MEASURES and the DEFINEs asked of Python (rowlowering GUARD_PYTHON, or a value the bytecode
cannot compute exactly) read the same rows; the numbers the bytecode reads sit beside them
in C arrays. Rows are trimmed as the Python runtime trims them, at the partition's next row
(so a match's rows are still there when its MEASURES are computed).
"""

from libc.stdlib cimport free
from libc.string cimport memmove
from libc.math cimport fabs
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t

from petricep.kernel._alloc cimport grow

DEF R_NULL = 0
DEF R_BOOL = 1
DEF R_INT = 2
DEF R_NUM = 3
DEF R_OTHER = 4
DEF R_FALLBACK = -2  # the bytecode cannot compute this value exactly: ask the Python closure
DEF R_STACK = 64
DEF R_TRIM = 256
cdef double EXACT_INT = 9007199254740992.0  # 2**53


cdef class _RowSearch:
    """The search for a match from one start row (RowRuntime's _Attempt)."""

    cdef int64_t start
    cdef bint done
    cdef object closes  # WITHIN: the stream time (ts or pos) past which no row fits, else None
    cdef object start_ts
    cdef int64_t start_pos
    cdef int nthreads
    cdef int32_t* th_place
    cdef int32_t* th_limit
    cdef int32_t* th_node
    cdef int32_t* nd_var
    cdef int32_t* nd_parent
    cdef int nnodes
    cdef int ncap
    cdef int tcap  # room for threads (a memoryless query needs one per place at most)
    cdef int32_t best_node  # the preferred match so far: its last path node (-1: no row)
    cdef int64_t best_len  # its rows (-1: none found)

    def __cinit__(self, int nplaces):
        self.tcap = max(nplaces, 1)
        self.th_place = <int32_t*> grow(NULL, self.tcap, sizeof(int32_t))
        self.th_limit = <int32_t*> grow(NULL, self.tcap, sizeof(int32_t))
        self.th_node = <int32_t*> grow(NULL, self.tcap, sizeof(int32_t))
        self.ncap = 16
        self.nd_var = <int32_t*> grow(NULL, self.ncap, sizeof(int32_t))
        self.nd_parent = <int32_t*> grow(NULL, self.ncap, sizeof(int32_t))
        self.best_node = -1
        self.best_len = -1

    def __dealloc__(self):
        free(self.th_place)
        free(self.th_limit)
        free(self.th_node)
        free(self.nd_var)
        free(self.nd_parent)

    cdef int room(self, int n) except -1:
        """Room for ``n`` threads."""
        if n > self.tcap:
            self.tcap = max(n, 2 * self.tcap)
            self.th_place = <int32_t*> grow(self.th_place, self.tcap, sizeof(int32_t))
            self.th_limit = <int32_t*> grow(self.th_limit, self.tcap, sizeof(int32_t))
            self.th_node = <int32_t*> grow(self.th_node, self.tcap, sizeof(int32_t))
        return 0

    cdef int node(self, int32_t var, int32_t parent) except -1:
        if self.nnodes == self.ncap:
            self.ncap *= 2
            self.nd_var = <int32_t*> grow(self.nd_var, self.ncap, sizeof(int32_t))
            self.nd_parent = <int32_t*> grow(self.nd_parent, self.ncap, sizeof(int32_t))
        self.nd_var[self.nnodes] = var
        self.nd_parent[self.nnodes] = parent
        self.nnodes += 1
        return self.nnodes - 1


cdef class _RowPart:
    """One partition: its rows (in the Python RowPartition), their numbers, its searches."""

    cdef object py  # runtime/rows.py RowPartition: rows (events), base, row_at
    cdef Py_ssize_t code  # its number in the matcher (creation order)
    cdef list rows
    cdef int64_t base
    cdef int64_t count
    cdef int64_t resume
    cdef int64_t matches
    cdef list searches
    cdef Py_ssize_t head
    cdef double* vals  # per kept row, one value per column the bytecode reads
    cdef uint8_t* kinds
    cdef int64_t vcap
    cdef int8_t* memo  # per variable: its DEFINE on the current row (-1: not evaluated yet)

    def __dealloc__(self):
        free(self.vals)
        free(self.kinds)
        free(self.memo)


cdef class RowMatcher:
    """A lowered query's searches over every partition (see the file's comment). ``owner``
    (kernel/rowengine.py KernelRowRuntime) supplies what stays Python: ``key(e)`` raising the
    PARTITION BY error, ``new_partition()`` and ``guard_holds(var, partition, index, event)``."""

    cdef object owner
    cdef object lowered
    cdef int nplaces, nvars, ncols, start, skip, window, history, npart, ncap
    cdef bint memoryless  # RowNet.memoryless: one thread per place (the Python runtime's ``taken``)
    cdef object window_value
    cdef const int32_t[:] exit_off
    cdef const int32_t[:] exit_items
    cdef const int32_t[:] accept_at
    cdef const int32_t[:] tr_dst
    cdef const int32_t[:] tr_var
    cdef const int32_t[:] guard_kind
    cdef const int32_t[:] code_off
    cdef const int32_t[:] code
    cdef const double[:] const_val
    cdef const uint8_t[:] const_kind
    cdef const int32_t[:] column_kind
    cdef const uint8_t[:] skip_members
    cdef int32_t* full
    cdef tuple columns
    cdef tuple vars
    cdef tuple part_attrs
    cdef dict keys
    cdef list parts
    cdef object queue  # WITHIN: (closes, partition code) in creation order (RowRuntime.closing's heap order)
    cdef int32_t* new_place
    cdef int32_t* new_limit
    cdef int32_t* new_node
    cdef uint8_t* taken
    cdef double vstack[R_STACK]
    cdef uint8_t kstack[R_STACK]
    cdef object missing

    def __cinit__(self, lowered, owner, tuple partition):
        cdef int p
        self.owner = owner
        self.lowered = lowered
        self.nplaces = lowered.nplaces
        self.nvars = len(lowered.vars)
        self.ncols = len(lowered.columns)
        self.start = lowered.start
        self.skip = lowered.skip
        self.window = lowered.window
        self.window_value = lowered.window_value
        self.history = lowered.history
        self.exit_off = lowered.exit_off
        self.exit_items = lowered.exit_items
        self.accept_at = lowered.accept_at
        self.tr_dst = lowered.tr_dst
        self.tr_var = lowered.tr_var
        self.guard_kind = lowered.guard_kind
        self.code_off = lowered.code_off
        self.code = lowered.code
        self.const_val = lowered.const_val
        self.const_kind = lowered.const_kind
        self.column_kind = lowered.column_kind
        self.skip_members = lowered.skip_members
        self.columns = tuple(lowered.columns)
        self.vars = tuple(lowered.vars)
        self.part_attrs = partition
        self.npart = len(partition)
        self.full = <int32_t*> grow(NULL, self.nplaces, sizeof(int32_t))
        for p in range(self.nplaces):
            self.full[p] = self.exit_off[p + 1] - self.exit_off[p]
        self.memoryless = lowered.memoryless
        self.ncap = max(self.nplaces, 1)
        self.new_place = <int32_t*> grow(NULL, self.ncap, sizeof(int32_t))
        self.new_limit = <int32_t*> grow(NULL, self.ncap, sizeof(int32_t))
        self.new_node = <int32_t*> grow(NULL, self.ncap, sizeof(int32_t))
        self.taken = <uint8_t*> grow(NULL, self.nplaces, sizeof(uint8_t))
        self.keys = {}
        self.parts = []
        from collections import deque
        self.queue = deque()
        self.missing = object()

    def __dealloc__(self):
        free(self.full)
        free(self.new_place)
        free(self.new_limit)
        free(self.new_node)
        free(self.taken)

    # ------------------------------------------------------------------ rows in

    def push(self, e):
        """One row of the query's table: the decided matches (entries, see the file's
        comment), or None."""
        cdef _RowPart part = self._part(e)
        cdef int64_t idx
        cdef Py_ssize_t i
        cdef _RowSearch s
        self._trim(part)
        idx = part.count
        part.count += 1
        part.rows.append(e)
        self._values(part, e, idx)
        if idx >= part.resume:
            self._search(part, e, idx)
        for i in range(part.head, len(part.searches)):
            s = <_RowSearch> part.searches[i]
            if not s.done:
                self._step(part, s, idx, e)
        out = []
        self._resolve(part, out)
        return out or None

    cdef _RowPart _part(self, e):
        cdef _RowPart part
        cdef Py_ssize_t code
        if self.npart == 0:
            key = None
        else:
            attrs = e.attrs
            try:
                key = tuple([attrs[a] for a in self.part_attrs])
            except KeyError:
                self.owner.key(e)  # raises the Python runtime's error
                raise
        found = self.keys.get(key)
        if found is not None:
            return <_RowPart> self.parts[<Py_ssize_t> found]
        code = len(self.parts)
        part = _RowPart()
        part.py = self.owner.new_partition()
        part.code = code
        part.rows = part.py.rows
        part.searches = []
        part.vcap = 64
        part.vals = <double*> grow(NULL, part.vcap * max(self.ncols, 1), sizeof(double))
        part.kinds = <uint8_t*> grow(NULL, part.vcap * max(self.ncols, 1), sizeof(uint8_t))
        part.memo = <int8_t*> grow(NULL, max(self.nvars, 1), sizeof(int8_t))
        self.keys[key] = code
        self.parts.append(part)
        return part

    cdef int _values(self, _RowPart part, e, int64_t idx) except -1:
        """The row's values of the columns the bytecode reads, with their kinds."""
        cdef int64_t k = idx - part.base
        cdef int c, kind
        cdef double v
        cdef int64_t iv
        if k + 1 > part.vcap:
            part.vcap = 2 * (k + 1)
            part.vals = <double*> grow(part.vals, part.vcap * max(self.ncols, 1), sizeof(double))
            part.kinds = <uint8_t*> grow(part.kinds, part.vcap * max(self.ncols, 1), sizeof(uint8_t))
        for c in range(self.ncols):
            if self.column_kind[c] == 1:
                x = e.ts
            elif self.column_kind[c] == 2:
                x = e.id
            else:
                x = e.attrs.get(self.columns[c], self.missing)
            kind = R_OTHER
            v = 0.0
            t = type(x)
            if t is float:
                kind = R_NUM
                v = <double> x
            elif t is int:
                try:
                    iv = x
                    if -EXACT_INT < <double> iv < EXACT_INT:
                        kind = R_INT
                        v = <double> iv
                except OverflowError:
                    pass
            elif x is None:
                kind = R_NULL
            part.vals[k * self.ncols + c] = v
            part.kinds[k * self.ncols + c] = kind
        for c in range(self.nvars):
            part.memo[c] = -1
        return 0

    cdef int _search(self, _RowPart part, e, int64_t idx) except -1:
        """A search from row ``idx`` (the pattern may match no rows: that empty match first)."""
        cdef _RowSearch s = _RowSearch(self.nplaces)
        cdef int acc
        s.start = idx
        s.start_pos = e.pos
        s.start_ts = e.ts
        if self.window != 0:
            w = self.window_value
            s.closes = e.pos + w - 1 if self.window == 2 else e.ts + w
            self.queue.append((s.closes, part.code))
        s.th_place[0] = self.start
        s.th_limit[0] = self.full[self.start]
        s.th_node[0] = -1
        s.nthreads = 1
        acc = self.accept_at[self.start]
        if acc >= 0:
            s.best_len = 0
            s.best_node = -1
            if acc:
                s.th_limit[0] = acc
            else:
                s.nthreads = 0
                s.done = True
        part.searches.append(s)
        return 0

    # ------------------------------------------------------------------ matching

    cdef int _step(self, _RowPart part, _RowSearch s, int64_t idx, e) except -1:
        """Extend the search's threads with row ``idx`` (RowRuntime._step)."""
        cdef int n = 0, i, j, k, place, limit, dst, var, acc
        cdef int32_t tid
        cdef bint outside = False
        if self.window != 0 and idx > s.start:
            if self.window == 2:
                outside = e.pos - s.start_pos >= self.window_value
            else:
                outside = e.ts - s.start_ts > self.window_value
        if not outside:
            for i in range(self.nplaces):
                self.taken[i] = 0
            for i in range(s.nthreads):
                place = s.th_place[i]
                limit = s.th_limit[i]
                for j in range(limit):
                    tid = self.exit_items[self.exit_off[place] + j]
                    if tid < 0:
                        continue
                    dst = self.tr_dst[tid]
                    if self.memoryless and self.taken[dst]:
                        continue  # a preferred thread is there already, with the same futures
                    var = self.tr_var[tid]
                    if self._holds(part, s, var, s.th_node[i], idx, e):
                        if n == self.ncap:
                            self._room(n + 1)
                        self.new_place[n] = dst
                        self.new_limit[n] = self.full[dst]
                        self.new_node[n] = s.node(var, s.th_node[i])
                        self.taken[dst] = 1
                        n += 1
        for k in range(n):
            acc = self.accept_at[self.new_place[k]]
            if acc >= 0:
                s.best_node = self.new_node[k]  # preferred over every match found before
                s.best_len = idx - s.start + 1
                if acc:
                    self.new_limit[k] = acc
                    n = k + 1
                else:
                    n = k
                break
        s.room(n)
        for k in range(n):
            s.th_place[k] = self.new_place[k]
            s.th_limit[k] = self.new_limit[k]
            s.th_node[k] = self.new_node[k]
        s.nthreads = n
        if n == 0:
            s.done = True
        return 0

    cdef int _room(self, int n) except -1:
        """Room for ``n`` new threads (a query that is not memoryless)."""
        self.ncap = max(n, 2 * self.ncap)
        self.new_place = <int32_t*> grow(self.new_place, self.ncap, sizeof(int32_t))
        self.new_limit = <int32_t*> grow(self.new_limit, self.ncap, sizeof(int32_t))
        self.new_node = <int32_t*> grow(self.new_node, self.ncap, sizeof(int32_t))
        return 0

    cdef int _holds(self, _RowPart part, _RowSearch s, int var, int32_t parent, int64_t idx, e) except -1:
        """Whether ``var``'s DEFINE holds on row ``idx`` extending the thread whose last path
        node is ``parent``: once per row and variable, but for a DEFINE reading the rows
        mapped so far (GUARD_PATH: its Python closure on the whole candidate, every time)."""
        cdef int kind = self.guard_kind[var]
        cdef int r
        if kind == 0:
            return 1
        if kind == 3:
            rows = self._candidate(part, s, parent, var, idx, e)
            return 1 if self.owner.guard_on_path(var, part.py, rows) else 0
        r = part.memo[var]
        if r >= 0:
            return r
        r = R_FALLBACK if kind == 2 else self._eval(part, var, idx)
        if r == R_FALLBACK:
            r = 1 if self.owner.guard_holds(var, part.py, idx, e) else 0
        part.memo[var] = r
        return r

    cdef int _eval(self, _RowPart part, int var, int64_t idx) except -3:
        """``var``'s DEFINE bytecode on row ``idx``: 1 TRUE, 0 not, R_FALLBACK where it
        meets a value it cannot compute exactly (rowlowering's ROW_OPS). One function on
        purpose, though long, as _interp.pxi's: the dispatch loop keeps its program counter,
        stack pointer and operands in registers only while the whole switch is one function."""
        cdef int base = self.code_off[var]
        cdef int pc = base, sp = 0, op, a, b, ka, kb
        cdef int64_t r
        cdef double x, y, z
        cdef double* vs = self.vstack
        cdef uint8_t* ks = self.kstack
        while True:
            op = self.code[pc]
            a = self.code[pc + 1]
            b = self.code[pc + 2]
            pc += 3
            if op == 0:
                return 1 if ks[sp - 1] == R_BOOL and vs[sp - 1] != 0.0 else 0
            elif op == 1:
                vs[sp] = self.const_val[a]
                ks[sp] = self.const_kind[a]
                sp += 1
            elif op == 2:
                r = (idx - b - part.base) * self.ncols + a
                if part.kinds[r] == R_OTHER:
                    return R_FALLBACK
                vs[sp] = part.vals[r]
                ks[sp] = part.kinds[r]
                sp += 1
            elif op == 3:
                if idx - a < 0:
                    vs[sp] = 0.0
                    ks[sp] = R_NULL
                    sp += 1
                    pc = base + 3 * b
            elif op == 4 or op == 7:
                sp -= 1
                ka = ks[sp - 1]
                kb = ks[sp]
                x = vs[sp - 1]
                y = vs[sp]
                if ka == R_NULL or kb == R_NULL:
                    ks[sp - 1] = R_NULL
                    continue
                if ka == R_BOOL or kb == R_BOOL:
                    return R_FALLBACK
                if op == 7:
                    ks[sp - 1] = R_BOOL
                    vs[sp - 1] = 1.0 if (
                        (a == 0 and x == y) or (a == 1 and x != y) or (a == 2 and x < y)
                        or (a == 3 and x <= y) or (a == 4 and x > y) or (a == 5 and x >= y)
                    ) else 0.0
                    continue
                if a == 3:
                    if y == 0.0:
                        ks[sp - 1] = R_NULL  # division by zero: NULL
                        continue
                    vs[sp - 1] = x / y
                    ks[sp - 1] = R_NUM
                    continue
                z = x + y if a == 0 else x - y if a == 1 else x * y
                if ka == R_INT and kb == R_INT:
                    if not (-EXACT_INT < z < EXACT_INT):
                        return R_FALLBACK  # Python's int is exact past 2**53
                    ks[sp - 1] = R_INT
                else:
                    ks[sp - 1] = R_NUM
                vs[sp - 1] = z
            elif op == 5 or op == 6:
                ka = ks[sp - 1]
                if ka == R_BOOL:
                    return R_FALLBACK
                if ka != R_NULL:
                    vs[sp - 1] = -vs[sp - 1] if op == 5 else fabs(vs[sp - 1])
            elif op == 8:
                ka = ks[sp - 1]
                if ka != R_NULL:
                    vs[sp - 1] = 1.0 if vs[sp - 1] == 0.0 else 0.0
                    ks[sp - 1] = R_BOOL
            elif op == 9 or op == 10:
                ka = ks[sp - 1]
                vs[sp - 1] = 1.0 if (ka == R_NULL) == (op == 9) else 0.0
                ks[sp - 1] = R_BOOL
            elif op == 11:
                if ks[sp - 1] == R_NULL:
                    pc = base + 3 * b
            elif op == 12:
                vs[sp] = 0.0 if a else 1.0
                ks[sp] = R_BOOL
                sp += 1
            elif op == 13:
                sp -= 1
                kb = ks[sp]
                y = vs[sp]
                if kb == R_BOOL and (y != 0.0) == (a != 0):
                    vs[sp - 1] = y  # AND meets FALSE / OR meets TRUE: decided
                    ks[sp - 1] = R_BOOL
                    if b >= 0:
                        pc = base + 3 * b
                elif kb == R_NULL and not (ks[sp - 1] == R_BOOL and (vs[sp - 1] != 0.0) == (a != 0)):
                    ks[sp - 1] = R_NULL
            else:
                raise ValueError(f"row bytecode: unknown op {op}")

    # ------------------------------------------------------------------ decisions

    cdef int _resolve(self, _RowPart part, list out) except -1:
        """Take the decided searches in start-row order (RowRuntime._resolve)."""
        cdef _RowSearch s
        cdef int64_t target
        cdef Py_ssize_t n = len(part.searches)
        while part.head < n and (<_RowSearch> part.searches[part.head]).done:
            s = <_RowSearch> part.searches[part.head]
            part.head += 1
            if s.start < part.resume or s.best_len < 0:
                continue
            part.matches += 1
            rows = self._rows(part, s)
            out.append((0, part.py, s.start, rows, part.matches))
            target = self._restart(s)
            if target < 0:
                out.append((1, part.py, s.start, rows, part.matches))
                return 0
            part.resume = target
            while part.head < n and (<_RowSearch> part.searches[part.head]).start < target:
                part.head += 1
        if part.head > 64 and 2 * part.head > n:
            del part.searches[:part.head]
            part.head = 0
        return 0

    cdef tuple _candidate(self, _RowPart part, _RowSearch s, int32_t node, int var, int64_t idx, e):
        """A thread's rows and row ``idx`` mapped to ``var``, as MatchRows (RowRuntime._step's
        ``cand``)."""
        cdef int64_t k = idx - s.start
        cdef list out = [None] * (k + 1)
        out[k] = (idx, self.vars[var], e)
        while k > 0:
            k -= 1
            out[k] = (s.start + k, self.vars[s.nd_var[node]], part.rows[s.start + k - part.base])
            node = s.nd_parent[node]
        return tuple(out)

    cdef tuple _rows(self, _RowPart part, _RowSearch s):
        """The match's rows as MatchRows ((index, variable, event), ...)."""
        cdef int64_t k = s.best_len
        cdef int32_t node = s.best_node
        cdef list out = [None] * k
        while k > 0:
            k -= 1
            idx = s.start + k
            out[k] = (idx, self.vars[s.nd_var[node]], part.rows[idx - part.base])
            node = s.nd_parent[node]
        return tuple(out)

    cdef int64_t _restart(self, _RowSearch s):
        """Where the next search starts (RowRuntime._resume); -1 where SKIP TO cannot."""
        cdef int64_t k = s.best_len, target = -1
        cdef int32_t node = s.best_node
        if self.skip == 0:
            return s.start + k if k > 0 else s.start + 1
        if self.skip == 1:
            return s.start + 1
        while k > 0:
            k -= 1
            if self.skip_members[s.nd_var[node]]:
                if self.skip == 3:  # TO LAST: the first found walking back
                    target = s.start + k
                    break
                target = s.start + k  # TO FIRST: the last found walking back
            node = s.nd_parent[node]
        if target <= s.start:
            return -1
        return target

    # ------------------------------------------------------------------ time, end, state

    def waiting(self):
        """Whether a search waits for WITHIN to close it."""
        return bool(self.queue)

    def expire(self, ts, pos):
        """Stream time reached (ts, pos): searches whose window it passed are decided
        (RowRuntime.expire); the decided matches, or None."""
        cdef _RowPart part
        cdef _RowSearch s
        cdef Py_ssize_t i
        now = pos if self.window == 2 else ts
        queue = self.queue
        out = []
        while queue and queue[0][0] < now:
            _, code = queue.popleft()
            part = <_RowPart> self.parts[code]
            for i in range(part.head, len(part.searches)):
                s = <_RowSearch> part.searches[i]
                if s.closes is not None and s.closes < now:
                    s.done = True
                    s.nthreads = 0
            self._resolve(part, out)
        return out or None

    def flush(self):
        """End of stream: every search stops; the decided matches, or None."""
        cdef _RowPart part
        cdef _RowSearch s
        cdef Py_ssize_t i
        out = []
        for part in self.parts:
            for i in range(part.head, len(part.searches)):
                s = <_RowSearch> part.searches[i]
                s.done = True
                s.nthreads = 0
            self._resolve(part, out)
        self.parts = []
        self.keys = {}
        self.queue.clear()
        return out or None

    def live(self):
        """Threads of the open searches (RowRuntime.live)."""
        cdef _RowPart part
        cdef Py_ssize_t i, n = 0
        for part in self.parts:
            for i in range(part.head, len(part.searches)):
                n += (<_RowSearch> part.searches[i]).nthreads
        return n

    cdef int _trim(self, _RowPart part) except -1:
        """Drop the rows no open search and no PREV may read (RowRuntime._trim)."""
        cdef int64_t oldest, keep, drop, kept
        cdef bint open_ = part.head < len(part.searches)
        oldest = (<_RowSearch> part.searches[part.head]).start if open_ else part.count
        keep = min(oldest, part.resume) - self.history
        drop = keep - part.base
        if drop > 0 and (drop >= R_TRIM or not open_):
            del part.rows[:drop]
            kept = len(part.rows)
            if kept and self.ncols:
                memmove(part.vals, part.vals + drop * self.ncols, kept * self.ncols * sizeof(double))
                memmove(part.kinds, part.kinds + drop * self.ncols, kept * self.ncols * sizeof(uint8_t))
            part.base = keep
            part.py.base = keep
        return 0
