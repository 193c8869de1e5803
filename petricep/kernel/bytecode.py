"""The guard bytecode: condition and RETURN expressions (their validated AST, never text)
compiled into one shared int32 code array per shared net, with constants and string
literals, which ``_interp.pxi`` runs. Its words, operand layouts and value kinds are the
kernel's (``_kernel.pxd`` declares the same numbers); :mod:`.lowering` lays out the rest of a
net and refuses, through :class:`Unsupported`, what this cannot compile.

``attr op attr`` and ``attr op const`` are superinstructions (nearly every guard is one
comparison, which the kernel then evaluates without entering its dispatch loop); Kleene
elements and aggregates have loads of their own (``OP_KATTR``, ``OP_AGG``).
"""

from __future__ import annotations

from petricep.compile.net import NEG_VAR, AggSpec, KleeneInfo
from petricep.lang import ast as A

# bytecode (int32 words): an opcode, then its operands
OP_CONST = 1  # c: push constant c
OP_ATTR = 2  # slot, attr: push the attribute of the event bound in slot (unbound: conjunct holds)
OP_ARITH = 3  # op: pop b, a; push a op b
OP_NEG = 4
OP_CMP = 5  # op: pop b, a; push a op b
OP_NOT = 6
OP_JF = 7  # n: top false -> jump n words ahead keeping it, else pop (AND)
OP_JT = 8  # n: top true -> jump n words ahead keeping it, else pop (OR)
OP_CMP_AA = 9  # op, slot, attr, slot, attr
OP_CMP_AC = 10  # op, slot, attr, c
OP_BOOL = 11  # the top as a bool (Python's all() / any() of an AND / OR in a RETURN value)
OP_KATTR = 12  # slot, attr, which: a Kleene element's attribute (0: v[i] / v[last], -1: v[i-1], k: v[k])
OP_AGG = 13  # slot, aggregate, upto_prev: a Kleene aggregate (the whole list, or v[..i-1])
OP_KATTR_IN = 14  # slot, attr, which, slot of, leads: a group's optional step by iteration (k: g[k], 0: g[last], -1: g[i-1]), unbound outside it
OP_END = 0

# an event's own timestamp and id read as values (``v.ts``, ``v.id``): attribute columns the
# caller fills, so that they keep their kinds (an int ts stays an int in a RETURN value, a text
# id compares as text) -- names no pattern field can have
TS_ATTR = "\x00ts"
ID_ATTR = "\x00id"
# an event's input position (``A.POS_FIELD``, an EVENTS gap's guard): no column, the attribute
# operand POS_CODE reads the store's position (the kernel's load / kleene_load)
POS_CODE = -1
NEG_SLOT = 1000  # slot operand naming the negated event (the candidate violating event)

ARITH_CODES = {"+": 0, "-": 1, "*": 2, "/": 3, "%": 4}
CMP_CODES = {"=": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}
FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
TAG_NUM, TAG_STR, TAG_INT, TAG_BIG = 0, 1, 4, 6  # value kinds (the kernel's TAG_*) of constants
AGG_CODES = {"count": 0, "sum": 1, "avg": 2, "min": 3, "max": 4}  # the kernel's aggregate functions
MAX_STACK = 32


class Unsupported(Exception):
    """Raised while lowering a construct the kernel does not cover; the message is the reason."""


class Bytecode:
    """Compiles condition ASTs into one shared code array (with constants and string literals)."""

    def __init__(
        self,
        attrs: dict[str, int],
        strings: dict[str, int],
        textual_ids: frozenset[int] = frozenset(),
        kleene: tuple[KleeneInfo | None, ...] = (),
        bigs: dict[int, int] | None = None,
    ) -> None:
        """``textual_ids``: slots (NEG_SLOT for a negated event) whose events may be composite:
        their id is a text the kernel does not hold. ``kleene``: per slot its Kleene layout."""
        self.kleene = kleene
        self.attrs = attrs
        self.strings = strings
        self.bigs = {} if bigs is None else bigs  # integer literals beyond 2**53, by code
        self.textual_ids = textual_ids
        self.code: list[int] = []
        self.consts: list[float] = []
        self.const_tags: list[int] = []
        self.starts: list[int] = []
        self._value = False

    def add(self, expr: A.Expr, value: bool = False) -> int:
        """Compile a condition (or with ``value`` a RETURN value: an AND / OR gives a bool, as
        Python's all() / any()); returns its program id."""
        self.starts.append(len(self.code))
        self._value = value
        depth = self._emit(expr)
        if depth > MAX_STACK:
            raise Unsupported(f"condition nests deeper than {MAX_STACK} values")
        self.code.append(OP_END)
        return len(self.starts) - 1

    def _const(self, e: A.Num | A.Str) -> int:
        if isinstance(e, A.Str):
            self.consts.append(float(self.strings.setdefault(e.value, len(self.strings))))
            self.const_tags.append(TAG_STR)
        else:
            if isinstance(e.value, bool) or not isinstance(e.value, (int, float)):
                raise Unsupported(f"constant {e.value!r}")
            if isinstance(e.value, int) and abs(e.value) > 2**53:  # (a float64 would round it)
                self.consts.append(float(self.bigs.setdefault(e.value, len(self.bigs))))
                self.const_tags.append(TAG_BIG)
            else:
                self.consts.append(float(e.value))
                self.const_tags.append(TAG_INT if isinstance(e.value, int) else TAG_NUM)
        return len(self.consts) - 1

    def _slot_of(self, var: str) -> int:
        if var.startswith("#") and var[1:].isdigit():
            return int(var[1:])
        raise Unsupported(f"variable {var!r}")

    def _is_kleene(self, slot: int) -> bool:
        return 0 <= slot < len(self.kleene) and self.kleene[slot] is not None

    def _kleene_attr(self, e: A.Attr) -> list[int]:
        """``v[i].f``, ``v[i-1].f``, ``v[last].f``, ``v[k].f`` of a Kleene variable."""
        assert e.index is not None
        slot = self._slot_of(e.var)
        if not self._is_kleene(slot):
            raise Unsupported(f"indexed access to {e.var!r}, which is not a Kleene variable")
        field = {"ts": TS_ATTR, "id": ID_ATTR}.get(e.field, e.field)
        kind = e.index.kind
        which = -1 if kind == A.IDX_PREV else e.index.const if kind == A.IDX_CONST else 0
        if kind == A.IDX_CONST and which < 1:
            raise Unsupported(f"Kleene element {which}")
        if e.index.of:  # (g[last].c / g[1].c of an optional step: compile/groups.py)
            return [OP_KATTR_IN, slot, self._attr_code(field), which, self._slot_of(e.index.of), 1 if e.index.leads else 0]
        return [OP_KATTR, slot, self._attr_code(field), which]

    def _attr_code(self, field: str) -> int:
        return POS_CODE if field == A.POS_FIELD else self.attrs.setdefault(field, len(self.attrs))

    def _agg(self, e: A.Agg) -> list[int]:
        slot = self._slot_of(e.var)
        info = self.kleene[slot] if self._is_kleene(slot) else None
        if info is None:
            raise Unsupported(f"aggregate over {e.var!r}, which is not a Kleene variable")
        return [OP_AGG, slot, info.aggs.index(AggSpec(e.func, e.field)), 1 if e.upto_prev else 0]

    def _attr(self, e: A.Attr) -> tuple[int, int]:
        if e.index is not None:
            raise Unsupported("Kleene element access")
        if e.var == NEG_VAR:
            slot = NEG_SLOT
        elif e.var.startswith("#") and e.var[1:].isdigit():
            slot = int(e.var[1:])
        else:
            raise Unsupported(f"variable {e.var!r}")
        if self._is_kleene(slot):
            raise Unsupported(f"Kleene variable {e.var!r} read without an index")
        field = {"ts": TS_ATTR, "id": ID_ATTR}.get(e.field, e.field)
        if field == ID_ATTR and slot in self.textual_ids:
            raise Unsupported("the id of a composite event (a text built from its match) read in a condition")
        return slot, self._attr_code(field)

    def _emit(self, e: A.Expr) -> int:
        """Appends code for ``e``; returns the stack depth it needs."""
        code = self.code
        if isinstance(e, (A.Num, A.Str)):
            code += [OP_CONST, self._const(e)]
            return 1
        if isinstance(e, A.Attr) and e.index is not None:
            code += self._kleene_attr(e)
            return 1
        if isinstance(e, A.Attr):
            code += [OP_ATTR, *self._attr(e)]
            return 1
        if isinstance(e, A.Agg):
            code += self._agg(e)
            return 1
        if isinstance(e, A.Compare):
            left, right, op = e.left, e.right, e.op
            if isinstance(left, (A.Num, A.Str)) and isinstance(right, A.Attr):
                left, right, op = right, left, FLIPPED[op]
            if isinstance(left, A.Attr) and isinstance(right, A.Attr) and left.index is None and right.index is None:
                code += [OP_CMP_AA, CMP_CODES[op], *self._attr(left), *self._attr(right)]
                return 1
            if isinstance(left, A.Attr) and isinstance(right, (A.Num, A.Str)) and left.index is None:
                code += [OP_CMP_AC, CMP_CODES[op], *self._attr(left), self._const(right)]
                return 1
            d1 = self._emit(left)
            d2 = self._emit(right)
            code += [OP_CMP, CMP_CODES[op]]
            return max(d1, d2 + 1)
        if isinstance(e, A.BinOp):
            d1 = self._emit(e.left)
            d2 = self._emit(e.right)
            code += [OP_ARITH, ARITH_CODES[e.op]]
            return max(d1, d2 + 1)
        if isinstance(e, A.Neg):
            d = self._emit(e.operand)
            code.append(OP_NEG)
            return d
        if isinstance(e, A.Not):
            d = self._emit(e.operand)
            code.append(OP_NOT)
            return d
        if isinstance(e, A.BoolOp):
            jump = OP_JF if e.op == "and" else OP_JT
            depth = 0
            holes = []
            for k, operand in enumerate(e.operands):
                depth = max(depth, self._emit(operand))
                if k < len(e.operands) - 1:
                    code += [jump, 0]
                    holes.append(len(code) - 1)
            for h in holes:  # jump to the end of the whole BoolOp
                code[h] = len(code) - (h + 1)
            if self._value:
                code.append(OP_BOOL)
            return depth
        raise Unsupported(f"expression {type(e).__name__}")
