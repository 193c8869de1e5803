"""Firing code generated per shared net: one ``step`` function per event type.

:meth:`GroupRuntime.step <petricep.runtime.firing.GroupRuntime.step>` interprets the net:
for every event it looks up the transitions, calls ``fire`` per (token, transition) and
walks a closure tree per condition. Here the same loop is written out as Python source
for one net and one event type, with what is fixed per net folded in: the transitions
and their places, masks and windows, the tie rule and strategy, and each condition as
one inline expression.

Safety: the source is built only from this module's templates and the validated
expression AST's *structure*. No text from a pattern file is ever part of it: field
names, constants and closures enter through the function's namespace under generated
names (``k0``, ``c1``, ``C2``).

Exactness: an inline condition is the closure's arithmetic and comparisons without
their special cases. Whenever it raises (an unbound OR variable, a missing element or
field, a division by zero, a type error) the closure is called instead and decides,
so both give the same answer and raise the same errors. What cannot be inlined
(aggregates, the copying baseline, spilling statistics, per-pattern windows of a shared
transition) falls back to the interpreter's own code.

Size: the source's nesting does not grow with the pattern. Conditions are tested one after
the other at one indentation (``if ok: ok = next``), and an expression deeper than
``MAX_DEPTH`` parentheses is computed through generated locals, so 96 conditions or a sum of
200 terms compile like two. Whatever CPython's compiler still refuses (``UNCOMPILABLE``) is
caught here, when the engine is built: that net and event type run the interpreter, and
``Engine.stats.interpreted`` (the run's report) says where and why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from petricep.compile.net import Transition
from petricep.lang import ast as A
from petricep.runtime.expr import kleene_start, kleene_take
from petricep.runtime.limits import uncount
from petricep.runtime.state import Token

if TYPE_CHECKING:
    from petricep.runtime.firing import GroupRuntime

StepFn = Callable[..., list[Token]]
FireFn = Callable[..., Token | None]

_ARITH = {"+": "+", "-": "-", "*": "*", "/": "/", "%": "%"}
_COMPARE = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class _Source:
    """Lines of generated Python with indentation, and the namespace they refer to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0
        self.ns: dict[str, Any] = {"Token": Token}
        self._n = 0

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        self.line(header)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def name(self, value: Any, prefix: str) -> str:
        """A generated identifier bound to ``value`` in the namespace (one per distinct object)."""
        for k, v in self.ns.items():
            if k.startswith(prefix) and v is value:
                return k
        self._n += 1
        key = f"{prefix}{self._n}"
        self.ns[key] = value
        return key

    def fresh(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def compile(self, fn_name: str, label: str = "") -> Any:
        code = compile("\n".join(self.lines) + "\n", f"<petricep generated {fn_name}{label}>", "exec")
        exec(code, self.ns)  # noqa: S102 - our own template text, see the module docstring
        return self.ns[fn_name]


# ---------------------------------------------------------------------- expressions


MAX_DEPTH = 24  # parentheses one generated expression may nest before a local takes over


def inline_expr(
    e: A.Expr, slot_of: Mapping[str, str], src: _Source, truth: bool = True, pre: list[str] | None = None
) -> str | None:
    """Python text computing ``e`` where ``slot_of`` names each variable's slot value;
    None where the expression is not inlined (aggregates, the negated variable).

    The text's nesting does not grow with the expression: every ``MAX_DEPTH`` levels the
    subexpression so far is assigned to a generated local (a line appended to ``pre``, to
    run before the text), since Python's parser refuses 200 nested parentheses. Without
    ``pre``, an expression too deep for one line is not inlined (None)."""
    got = _inline(e, slot_of, src, truth, pre)
    return None if got is None else got[0]


def _inline(
    e: A.Expr, slot_of: Mapping[str, str], src: _Source, truth: bool, pre: list[str] | None
) -> tuple[str, int] | None:
    """(text, its parenthesis depth) of :func:`inline_expr`."""
    sub = _inline_node(e, slot_of, src, truth, pre)
    if sub is None or sub[1] < MAX_DEPTH:
        return sub
    if pre is None:
        return None
    local = src.fresh("v")
    pre.append(f"{local} = {sub[0]}")
    return local, 0


def _inline_node(
    e: A.Expr, slot_of: Mapping[str, str], src: _Source, truth: bool, pre: list[str] | None
) -> tuple[str, int] | None:
    def field(obj: str, name: str) -> tuple[str, int]:
        if name == "ts":
            return f"{obj}.ts", 1
        if name == "id":
            return f"{obj}.id", 1
        return f"{obj}.attrs[{src.name(name, 'k')}]", 1

    if isinstance(e, (A.Num, A.Str)):
        return src.name(e.value, "c"), 0
    if isinstance(e, A.Attr):
        v = slot_of.get(e.var)
        if v is None:
            return None
        if e.index is None:
            return field(v, e.field)
        kind = e.index.kind
        if kind == A.IDX_CONST and e.index.const == 1:
            return field(f"{v}[0]", e.field)  # K_FIRST
        if kind == A.IDX_CONST:
            return field(f"{v}[6][{int(e.index.const) - 1}]", e.field)  # K_HEAD
        if kind in (A.IDX_CUR, A.IDX_LAST):
            return field(f"{v}[1]", e.field)  # K_LAST
        return field(f"{v}[2]", e.field)  # K_PREV: None before the second element -> fallback
    if isinstance(e, A.Neg):
        x = _inline(e.operand, slot_of, src, False, pre)
        return None if x is None else (f"(-{x[0]})", x[1] + 1)
    if isinstance(e, (A.BinOp, A.Compare)):
        left = _inline(e.left, slot_of, src, False, pre)
        right = _inline(e.right, slot_of, src, False, pre)
        if left is None or right is None:
            return None
        op = _ARITH[e.op] if isinstance(e, A.BinOp) else _COMPARE[e.op]
        return f"({left[0]} {op} {right[0]})", max(left[1], right[1]) + 1
    if isinstance(e, A.BoolOp):
        parts = [_inline(o, slot_of, src, True, pre) for o in e.operands]
        if any(p is None for p in parts):
            return None
        joined = f" {'and' if e.op == 'and' else 'or'} ".join(p[0] for p in parts)  # type: ignore[index]
        depth = max(p[1] for p in parts) + 1  # type: ignore[index]
        return (f"({joined})" if truth else f"bool({joined})"), depth
    if isinstance(e, A.Not):
        x = _inline(e.operand, slot_of, src, True, pre)
        return None if x is None else (f"(not {x[0]})", x[1] + 1)
    return None  # A.Agg: running aggregates stay closures


Check = tuple[list[str], str | None, str]  # (lines computing locals, fast text, fallback call)


def _check(e: A.Expr, slot_of: Mapping[str, str], src: _Source, fallback: str) -> Check:
    pre: list[str] = []
    return pre, inline_expr(e, slot_of, src, True, pre), fallback


def _condition(src: _Source, target: str, check: Check) -> None:
    """``target = fast`` where it does not raise, else the closure's verdict."""
    pre, fast, fallback = check
    if fast is None:
        src.line(f"{target} = {fallback}")
        return
    with src.block("try:"):
        for line in pre:
            src.line(line)
        src.line(f"{target} = {fast}")
    with src.block("except Exception:"):
        src.line(f"{target} = {fallback}")


@contextmanager
def _all_hold(src: _Source, checks: list[Check]) -> Iterator[None]:
    """A block entered only where every condition holds, tested in order. The tests follow
    one another at one indentation (``if ok: ok = next``), however many there are."""
    depth = src.depth
    if checks:
        ok = src.fresh("ok")
        _condition(src, ok, checks[0])
        for check in checks[1:]:
            with src.block(f"if {ok}:"):
                _condition(src, ok, check)
        src.line(f"if {ok}:")
        src.depth += 1
    try:
        yield
    finally:
        src.depth = depth


# ---------------------------------------------------------------------- firing


def specializable(rt: GroupRuntime) -> bool:
    """Configurations the generated loop covers (the others run the interpreter)."""
    return rt.share_prefixes and rt.place_stats is None


# what compiling generated source can raise on a net too large for CPython's parser and
# compiler (nesting, recursion, memory): that net and event type then run the interpreter
UNCOMPILABLE = (SyntaxError, RecursionError, MemoryError, OverflowError, ValueError)


def _why(exc: BaseException) -> str:
    msg = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    return f"{type(exc).__name__}: {msg}"


def specialize(rt: GroupRuntime, fallbacks: dict[str, str] | None = None) -> dict[str, StepFn]:
    """Generated ``step(part, e, floor, composite, accepted)`` per event type the net reads.

    An event type whose source cannot be compiled is left out, so the engine runs the
    interpreter for it; ``fallbacks`` records why, under ``"net N, type 'T'"``. This is
    decided once, here, never per event."""
    if not specializable(rt):
        return {}
    out = {}
    for n, etype in enumerate(rt.by_type):
        try:
            out[etype] = _step_for(rt, etype, n)
        except UNCOMPILABLE as exc:
            if fallbacks is not None:
                fallbacks[f"net {rt.net.index}, type {etype!r}"] = _why(exc)
    return out


def specialize_fires(rt: GroupRuntime, fallbacks: dict[str, str] | None = None) -> dict[int, FireFn]:
    """Generated ``fire(t, e, floor, composite)`` per transition: ``GroupRuntime.fire`` for
    one transition and a stored partial match (the ``either`` rule's fixpoint fires these).
    A transition whose source cannot be compiled is left to the interpreter (see
    :func:`specialize`)."""
    if not specializable(rt):
        return {}
    out = {}
    for tr in rt.net.transitions:
        src = _Source()
        with src.block("def fire(t, e, floor, composite):"):
            src.line("ets = e.ts")
            src.line("epos = e.pos")
            src.line("ekey = 2 * epos + (1 if composite else 0)")
            _fire(src, rt, tr, root=False, standalone=True)
            src.line("return None")
        try:
            out[tr.id] = src.compile("fire", f" {rt.net.index}.t{tr.id}")
        except UNCOMPILABLE as exc:
            if fallbacks is not None:
                fallbacks[f"net {rt.net.index}, transition {tr.id}"] = _why(exc)
    return out


def _step_for(rt: GroupRuntime, etype: str, n: int) -> StepFn:
    src = _Source()
    groups = rt.by_type[etype]
    with src.block("def step(part, e, floor, composite, accepted):"):
        src.line("created = []")
        src.line("marking = part.marking")
        src.line("ets = e.ts")
        src.line("epos = e.pos")
        src.line("ekey = 2 * epos + (1 if composite else 0)")
        for place, trs in groups:
            _arcs(src, rt, trs)  # input-arc guards: once per event and source place, as the interpreter
            if place == rt.net.start:
                for tr in trs:
                    with _arc(src, rt, tr):
                        _fire(src, rt, tr, root=True)
            _scan(src, rt, place, trs)
        src.line("return created")
    # named apart for profilers: net (group) index and the type's number in the net
    return src.compile("step", f" {rt.net.index}.{n}")  # type: ignore[no-any-return]


def _arcs(src: _Source, rt: GroupRuntime, trs: list[Transition]) -> None:
    for tr in trs:
        arcs = rt.arc[tr.id]
        if not arcs:
            continue
        flag = f"arc{tr.id}"
        src.line(f"{flag} = False")
        conds = [rt.net.conditions[ci] for ci in tr.arc_conditions]
        checks = [_check(c, {tr.var: "e"}, src, f"{src.name(f, 'A')}((e,), None)") for c, f in zip(conds, arcs)]
        with _all_hold(src, checks):
            src.line(f"{flag} = True")


@contextmanager
def _arc(src: _Source, rt: GroupRuntime, tr: Transition) -> Iterator[None]:
    depth = src.depth
    if rt.arc[tr.id]:
        src.line(f"if arc{tr.id}:")
        src.depth += 1
    try:
        yield
    finally:
        src.depth = depth


def _scan(src: _Source, rt: GroupRuntime, place: int, trs: list[Transition]) -> None:
    """Every live partial match at ``place``: extend it by ``e`` through ``trs``."""
    src.line(f"tokens = marking[{place}]")
    with src.block("if tokens:"):
        src.line("keep = []")
        with src.block("for t in tokens:"):
            with src.block("if not t.alive:"):
                src.line("continue")
            w = rt.w
            if w is not None:
                wn = src.name(w, "c")
                test = f"epos - t.first_pos >= {wn}" if rt.count_window else f"ets - t.first_ts > {wn}"
                with src.block(f"if {test}:"):
                    src.line("continue")
            if rt.contiguity:
                with src.block("if t.last_key < floor:"):
                    src.line("continue")
            if rt.stnm:
                src.line("moved = 0")
            for tr in trs:
                with _arc(src, rt, tr):
                    _fire(src, rt, tr, root=False)
            if rt.stnm:
                with src.block("if moved:"):
                    src.line("t.users &= ~moved")
                    if rt.limits:
                        src.line(f"{src.name(uncount, 'F')}(part, t, moved, {src.name(rt.limits, 'L')})")
                    with src.block("if not t.users:"):
                        src.line("continue")
            src.line("keep.append(t)")
        src.line(f"marking[{place}] = keep")


def _fire(src: _Source, rt: GroupRuntime, tr: Transition, root: bool, standalone: bool = False) -> None:
    """The body of ``GroupRuntime.fire`` for one transition, with ``t`` (or the root): inside
    a step (the new token joins ``created``), or ``standalone`` (it is returned)."""
    depth = src.depth
    if _fire_tests(src, rt, tr, root, standalone):
        _fire_bind(src, rt, tr, root, standalone)
    src.depth = depth


def _fire_tests(src: _Source, rt: GroupRuntime, tr: Transition, root: bool, standalone: bool) -> bool:
    """The tests before binding ``e`` (each opens a block); False where the transition is
    done without them: it cannot fire from the root, or the interpreter fires it."""
    mask = rt.tr_mask[tr.id]
    if root:
        users = mask & rt.root.users
        if not users:
            return False
        src.line(f"t = {src.name(rt.root, 'R')}")
        src.line(f"users = {users}")
        return True
    if rt.tr_windows[tr.id] is not None:  # a shared transition whose users disagree on the window
        call = f"{src.name(rt.fire, 'F')}({src.name(tr, 'T')}, t, e, floor, composite)"
        if standalone:
            src.line(f"return {call}")
            return False
        src.line(f"nt = {call}")
        with src.block("if nt is not None:"):
            _created(src, rt, tr, root)
        return False
    if tr.blocked_by:
        src.line(f"if not t.blocked & {int(tr.blocked_by)}:")
        src.depth += 1
    src.line("users = t.users" if mask == rt.all_users else f"users = t.users & {int(mask)}")
    src.line("if users:")
    src.depth += 1
    # inside a step, a time window equal to the net's was checked by the scan that found t
    if tr.window is not None and (standalone or rt.count_window or tr.window != rt.w):
        wn = src.name(tr.window, "c")
        if rt.count_window:
            src.line(f"if max(t.last_pos, epos) - min(t.first_pos, epos) < {wn}:")
        else:
            src.line(f"if ets - t.first_ts <= {wn}:")
        src.depth += 1
    if rt.contiguity:
        src.line("if t.last_key >= floor:")
        src.depth += 1
    if rt.tie == "strict" and tr.order_slots:
        tests = []
        for sl in tr.order_slots:
            v = f"t.slots[{int(sl)}]"  # an event, or a Kleene list state (its K_LAST)
            tests.append(f"({v}[1] if type({v}) is tuple else {v}).ts < ets")
        src.line(f"if {' and '.join(tests)}:")
        src.depth += 1
    elif rt.tie == "either":
        src.line("if not t.contains(e):")
        src.depth += 1
        if tr.take:
            src.line(f"if t.slots[{int(tr.slot)}][1].seq <= e.seq:")
            src.depth += 1
    return True


def _fire_bind(src: _Source, rt: GroupRuntime, tr: Transition, root: bool, standalone: bool) -> None:
    """Bind ``e``, test the guards on the new slots, build the new token and hand it on."""
    sl = tr.slot
    if tr.take:
        bound = f"{src.name(kleene_take, 'F')}({src.name(rt.kinfo[sl], 'K')}, t.slots[{int(sl)}], e)"
    elif tr.kleene:
        bound = f"{src.name(kleene_start, 'F')}({src.name(rt.kinfo[sl], 'K')}, e)"
    else:
        bound = "e"
    if root:
        items = [bound if i == sl else "None" for i in range(rt.nslots)]
    else:
        src.line("slots = t.slots")
        items = [bound if i == sl else f"slots[{i}]" for i in range(rt.nslots)]
    src.line(f"s = ({', '.join(items)},)")
    slot_of = {f"#{i}": f"s[{i}]" for i in range(rt.nslots)}
    checks = [
        _check(rt.net.conditions[ci], slot_of, src, f"{src.name(rt.conds[ci], 'C')}(s, None)")
        for ci in (*tr.guards, *tr.iteration)
    ]
    with _all_hold(src, checks):
        clears = f" & {~int(tr.clears)}" if tr.clears else ""
        if root:
            src.line(
                f"nt = Token(s, t, e, {int(sl)}, {int(tr.dst)}, ets, ets, epos, epos, ekey, 0, users)"
            )
        else:
            src.line("a = t.first_ts")
            src.line("b = t.last_ts")
            src.line("c = t.first_pos")
            src.line("d = t.last_pos")
            src.line("k = t.last_key")
            src.line(
                f"nt = Token(s, t, e, {int(sl)}, {int(tr.dst)}, ets if ets < a else a, ets if ets > b else b, "
                f"epos if epos < c else c, epos if epos > d else d, ekey if ekey > k else k, t.blocked{clears}, users)"
            )
        deferred: list[Check] = [
            ([], None, f"{src.name(rt.check_elements, 'F')}({int(ci)}, {int(ksl)}, nt)")
            for ci, ksl in tr.deferred_iteration
        ]
        with _all_hold(src, deferred):
            _fire_end(src, rt, tr, root, standalone)


def _fire_end(src: _Source, rt: GroupRuntime, tr: Transition, root: bool, standalone: bool) -> None:
    """Where every condition held: mark the extended token and hand the new one on."""
    if rt.timeout_mask:
        src.line("t.extended = getattr(t, 'extended', 0) | users")
    if standalone:
        src.line("return nt")
    else:
        _created(src, rt, tr, root)


def _created(src: _Source, rt: GroupRuntime, tr: Transition, root: bool) -> None:
    src.line("created.append(nt)")
    if rt.roles[tr.dst]:
        src.line("accepted.append(nt)")
    if rt.stnm and not root:
        src.line("moved |= nt.users")


__all__ = ["MAX_DEPTH", "UNCOMPILABLE", "inline_expr", "specializable", "specialize", "specialize_fires"]
