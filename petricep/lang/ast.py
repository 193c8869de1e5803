"""The typed, frozen AST of pattern files.

Everything downstream (compiler, merge, diagrams, Spark) works from these values,
never from text. Expressions are data so they can be printed, compared for sharing
and shipped to executors; they are never ``eval``-ed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from enum import StrEnum

# Span, NOWHERE and Window live in lang/spans.py (the SQL AST uses them too); they are
# re-exported here, where the pattern language's users look for them
from petricep.lang.spans import DURATION_UNITS as DURATION_UNITS
from petricep.lang.spans import NOWHERE as NOWHERE
from petricep.lang.spans import WIN_COUNT as WIN_COUNT
from petricep.lang.spans import WIN_DURATION as WIN_DURATION
from petricep.lang.spans import WIN_TIME as WIN_TIME
from petricep.lang.spans import Span as Span
from petricep.lang.spans import Window as Window
from petricep.lang.sql_ast import MatchRecognize

# ----------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Num:
    value: int | float
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Str:
    value: str
    span: Span = dc_field(default=NOWHERE, compare=False)


# Kleene index kinds for ``v[...]``
IDX_CONST = "const"  # v[1], v[2]: fixed element (1-based)
IDX_CUR = "i"  # v[i]: the element being added (iteration condition)
IDX_PREV = "i-1"  # v[i-1]: the element before it
IDX_LAST = "last"  # v[last]: the last element of the closed list


@dataclass(frozen=True)
class Index:
    kind: str  # one of IDX_*
    const: int = 0  # for IDX_CONST, 1-based
    # a group's optional step read by iteration (``g[last].c``, ``g[k].c``, ``g[i-1].c``, lowered
    # to ``c[last]`` / ``c[k]`` / ``c[i-1]``): the list of the group's first required step, whose
    # elements delimit the iterations; the element is read only where it lies in that iteration
    # (else unbound). ``c[i-1]`` of: the iteration before that list's last element's.
    of: str = ""
    # with ``of``: the step lies before the group's first required step (``SEQ(C? c, B b)+ g[]``),
    # so iteration k's element is the one before that list's k-th (after the (k-1)-th), not after it
    leads: bool = False


@dataclass(frozen=True)
class Attr:
    """``v.field`` or ``v[index].field``; ``field`` may be ``ts`` or ``id``."""

    var: str
    field: str
    index: Index | None = None
    span: Span = dc_field(default=NOWHERE, compare=False)
    # ``g[index].member.field``: a step of the repeated group ``g`` (``var``), issue 42
    member: str | None = None


AGG_FUNCS = ("count", "sum", "avg", "min", "max")


@dataclass(frozen=True)
class Agg:
    """``count(v[])``, ``sum(v[].f)`` (whole list) or ``min(v[..i-1].f)`` (prefix before i)."""

    func: str
    var: str
    field: str | None  # None only for count
    upto_prev: bool = False
    span: Span = dc_field(default=NOWHERE, compare=False)
    # ``sum(g[].member.field)``: over one step of the repeated group ``g`` (``var``)
    member: str | None = None


ARITH_OPS = ("+", "-", "*", "/", "%")
COMPARE_OPS = ("=", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True)
class BinOp:
    op: str  # one of ARITH_OPS
    left: Expr
    right: Expr
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Neg:
    """Unary minus."""

    operand: Expr
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Compare:
    op: str  # one of COMPARE_OPS ('==' is normalised to '=')
    left: Expr
    right: Expr
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class BoolOp:
    op: str  # 'and' | 'or'
    operands: tuple[Expr, ...]
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Not:
    operand: Expr
    span: Span = dc_field(default=NOWHERE, compare=False)


Expr = Num | Str | Attr | Agg | BinOp | Neg | Compare | BoolOp | Not


# ----------------------------------------------------------------------------- structure


@dataclass(frozen=True)
class Gap:
    """A per-step gap, ``T v AFTER lo TO hi [unit] [FROM u]`` (Eagle's timed sequence
    ``E1 ;<lo,hi> E2``): ``lo <= v.ts - u.ts <= hi``, ``u`` the step before (``after`` None)
    or the variable named. ``low``/``high`` are as written; :func:`gap_amount` converts
    them to the units the runtime compares, as :func:`window_amount` does for WITHIN."""

    low: int | float
    high: int | float
    unit: str | None = None  # a duration unit as written (seconds...), "events", None: timestamp units
    after: str | None = None  # FROM u; None: the previous positive step of the SEQ
    span: Span = dc_field(default=NOWHERE, compare=False)

    def text(self) -> str:
        """The gap as written: ``AFTER 60 TO 300 s FROM a``."""
        unit = f" {self.unit.upper() if self.in_events else self.unit}" if self.unit else ""
        after = f" FROM {self.after}" if self.after else ""
        return f"AFTER {_num(self.low)} TO {_num(self.high)}{unit}{after}"

    @property
    def in_events(self) -> bool:
        """``AFTER lo TO hi EVENTS``: counted in input positions, as ``WITHIN n EVENTS`` counts."""
        return self.unit == GAP_EVENTS


GAP_EVENTS = "events"  # Gap.unit of a gap in events
POS_FIELD = "\x00pos"  # ``v.pos``, an event's input position: what an EVENTS gap compares (no field can be named so)


def gap_amount(g: Gap) -> tuple[int | float, int | float]:
    """(low, high) in timestamp units, seconds for a duration unit (ints when whole), or
    events (positions)."""
    scale = DURATION_UNITS[g.unit] if g.unit and not g.in_events else 1
    out = []
    for v in (g.low, g.high):
        x = v * scale
        out.append(int(x) if float(x).is_integer() else x)
    return out[0], out[1]


def _num(v: int | float) -> str:
    return str(int(v)) if isinstance(v, float) and v.is_integer() else repr(v)


#: the largest bound of ``T{n,m}``: each count up to it is a state place of the net
MAX_REPEAT = 64


@dataclass(frozen=True)
class EventRef:
    """``T v`` / ``T+ v[]`` (kleene) / ``!(T v)`` (negated); ``gap``: a per-step gap.

    ``T{n,m} v[]`` / ``T{n,} v[]`` (issue 42) are Kleene variables whose lists hold at least
    ``least`` and at most ``most`` events (``T+``: 1 and None, unbounded); ``T? v`` is an
    optional step (``optional``): a match may leave it unbound."""

    type: str
    var: str
    kleene: bool = False
    negated: bool = False
    span: Span = dc_field(default=NOWHERE, compare=False)
    # ``ARCHIVED T v``: bound from the event archive (history), not the live stream
    archived: bool = False
    gap: Gap | None = None
    least: int = 1  # a Kleene list's fewest events
    most: int | None = None  # its most events; None: unbounded
    optional: bool = False  # ``T? v``: the step may be absent
    # a Kleene list under skip-till-next-match where an event may both extend it and start
    # the step after it: "greedy" (the list takes it), "reluctant" (the next step does), ""
    # (both: two partial matches)
    mode: str = ""
    # ``T+ v[] UNTIL U u`` (issue 42, FlinkCEP's until): the stop event of a Kleene list. An
    # event of type U with the conjuncts of WHERE naming ``u`` arriving between two of the
    # list's events ends it: the list takes no more (the step after it still may come)
    until: EventRef | None = None

    @property
    def bounded(self) -> bool:
        """A Kleene variable with bounds other than ``+``'s (one or more, unbounded)."""
        return self.kleene and (self.least != 1 or self.most is not None)

    def quantifier(self) -> str:
        """The repetition as written: ``+``, ``{2,4}``, ``{2,}``, ``{3}``; ``?``; ``""``."""
        if self.optional:
            return "?"
        if not self.kleene:
            return ""
        if not self.bounded:
            return "+"
        if self.least == 0 and self.most is None:
            return "*"
        if self.most == self.least:
            return f"{{{self.least}}}"
        return f"{{{self.least},{'' if self.most is None else self.most}}}"


@dataclass(frozen=True)
class Seq:
    children: tuple[Node, ...]
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class And:
    children: tuple[Node, ...]
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Or:
    children: tuple[Node, ...]
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Group:
    """``SEQ(B b, C c)+ g[]``: a repeated group (Eagle's ``;+E``, SQL's ``(B C)+``), one or
    more iterations of ``seq``, the list of its bindings named ``var``; ``children`` are the
    steps of one iteration, so :func:`events_of` finds them as the pattern's variables."""

    seq: Seq
    var: str
    span: Span = dc_field(default=NOWHERE, compare=False)
    # ``SEQ(...){n,m} g[]`` / ``{n,}`` / ``{n}`` / ``*`` / ``?`` (issue 42): the fewest and most
    # iterations, as a bounded Kleene list's ``least`` / ``most`` (``+``: 1, unbounded); a
    # group of ``least`` 0 may bind no iteration (``g`` then the empty list)
    least: int = 1
    most: int | None = None
    # GREEDY / RELUCTANT after it (skip-till-next-match): where one event both starts its next
    # iteration and binds the step after it, "greedy" keeps the iteration, "reluctant" the step
    mode: str = ""
    # ``SEQ(...)+ g[] UNTIL U u``: a stop event, as a list's: one arriving between two of the
    # group's events ends the group (it takes no more events; the step after it may come)
    until: EventRef | None = None

    @property
    def children(self) -> tuple[Node, ...]:
        return self.seq.children

    @property
    def bounded(self) -> bool:
        """Bounds other than ``+``'s (one or more, unbounded)."""
        return self.least != 1 or self.most is not None

    def quantifier(self) -> str:
        """The repetition as written: ``+``, ``*``, ``?``, ``{2,4}``, ``{2,}``, ``{3}``."""
        named = {(1, None): "+", (0, None): "*", (0, 1): "?"}.get((self.least, self.most))
        if named is not None:
            return named
        if self.most == self.least:
            return f"{{{self.least}}}"
        return f"{{{self.least},{'' if self.most is None else self.most}}}"

    @property
    def members(self) -> tuple[str, ...]:
        """The steps' variables, in the order of one iteration (its negations are none: a
        negation inside a group is the pattern's, checked in each iteration)."""
        return tuple(r.var for r in events_of(self.seq) if not r.negated)

    @property
    def optional_steps(self) -> frozenset[str]:
        """The steps an iteration may leave out (``SEQ(B b, C? c, D d)+ g[]``): their lists
        hold only the iterations that bound them, so reads by iteration number differ."""
        return frozenset(r.var for r in events_of(self.seq) if not r.negated and r.optional)

    @property
    def empty_lists(self) -> frozenset[str]:
        """The Kleene steps an iteration may leave empty (``SEQ(B b, C* c[], D d)+ g[]``): as an
        optional step, a list that holds only the iterations that bound it."""
        return frozenset(r.var for r in events_of(self.seq) if not r.negated and r.kleene and r.least == 0)

    @property
    def kleene_steps(self) -> frozenset[str]:
        """The steps an iteration may bind more than once (``SEQ(B b, C+ c[], D d)+ g[]``):
        their lists hold every iteration's elements, so they too are placed by position."""
        return frozenset(r.var for r in events_of(self.seq) if not r.negated and r.kleene)

    @property
    def delimiter(self) -> str | None:
        """The first step every iteration binds exactly once (neither optional nor Kleene):
        its elements delimit the iterations where the engines place a match's elements by
        position (optional steps, lists); None where the group has none."""
        return next((m for m in self.members if m not in self.optional_steps and m not in self.kleene_steps), None)


Node = EventRef | Seq | And | Or | Group


def skippable(node: Node) -> bool:
    """A step of a SEQ a match may leave out: an optional step ``T? v``, or a repeated group
    that may bind no iteration (``SEQ(...)* g[]``, ``?``, ``{0,m}``)."""
    if isinstance(node, Group):
        return node.least == 0
    return isinstance(node, EventRef) and (node.optional or (node.kleene and node.least == 0))


def groups_of(node: Node) -> list[Group]:
    """Every repeated group under ``node``, left to right."""
    if isinstance(node, Group):
        return [node]
    if isinstance(node, EventRef):
        return []
    return [g for child in node.children for g in groups_of(child)]


# ----------------------------------------------------------------------------- clauses

class Strategy(StrEnum):
    """The event selection strategies (SASE), defined once here for every stage. A member is
    its keyword as written: it prints, compares, hashes and reprs as that text, so nets,
    diagrams and messages read as before and a lookup by the keyword finds it."""

    ANY = "skip-till-any-match"
    NEXT = "skip-till-next-match"
    STRICT = "strict-contiguity"
    PARTITION = "partition-contiguity"

    __hash__ = str.__hash__
    __repr__ = str.__repr__

    @property
    def contiguous(self) -> bool:
        """Whether events between the matched ones break the match (strict or per key)."""
        return self in (Strategy.STRICT, Strategy.PARTITION)


STRATEGIES = tuple(s.value for s in Strategy)  # the keywords, in the language's order

def window_amount(w: Window | None) -> float | int | None:
    """A window in the units the runtime compares: timestamp units, events, or seconds for a
    duration (an int when whole); None for no window."""
    if w is None:
        return None
    if w.kind == WIN_DURATION:
        v = w.value * DURATION_UNITS[w.unit or "s"]
        return int(v) if float(v).is_integer() else v
    return w.value


@dataclass(frozen=True)
class ReturnField:
    name: str
    expr: Expr


@dataclass(frozen=True)
class Return:
    """``RETURN T(name = expr, ...)``: the match becomes an event of type T."""

    type: str
    fields: tuple[ReturnField, ...]
    span: Span = dc_field(default=NOWHERE, compare=False)


OVERFLOW_POLICIES = ("drop-oldest", "reject-new", "fail")


@dataclass(frozen=True)
class Limit:
    """``LIMIT n PARTIAL MATCHES [PER KEY] [DROP OLDEST | REJECT NEW | FAIL]``: at most n live
    partial matches of the pattern per key; what happens to the one too many."""

    count: int
    policy: str = "drop-oldest"
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Pattern:
    name: str
    structure: Node
    conditions: tuple[Expr, ...]  # top-level conjuncts of WHERE (partition/strategy removed)
    partition: tuple[str, ...] = ()  # [attr] equivalence attributes, in order written
    strategy: Strategy = Strategy.ANY
    window: Window | None = None
    returns: Return | None = None
    span: Span = dc_field(default=NOWHERE, compare=False)
    # consumption policy: None = consumes nothing (every pattern sees every event);
    # ("*",) = all its events; else the variables whose events a match consumes
    consume: tuple[str, ...] | None = None
    # ON TIMEOUT RETURN T(...): partial matches whose window closes before they complete
    # become events of type T (variables not bound read as null)
    timeout: Return | None = None
    limit: Limit | None = None

    def __post_init__(self) -> None:
        # the strategy as its member, also when a caller building the AST wrote the keyword
        # (a ValueError for a word that is none of them)
        if not isinstance(self.strategy, Strategy):
            object.__setattr__(self, "strategy", Strategy(self.strategy))


def outputs(p: Pattern) -> tuple[Return, ...]:
    """The event types a pattern produces: its RETURN type and its timeout type."""
    return tuple(r for r in (p.returns, p.timeout) if r is not None)


def pattern_exprs(p: Pattern) -> list[Expr]:
    """Every expression of a pattern: WHERE conjuncts, then RETURN and timeout fields."""
    return list(p.conditions) + [f.expr for r in outputs(p) for f in r.fields]


@dataclass(frozen=True)
class Conflict:
    """``CONFLICT name: p1, p2``: patterns that compete for events — an event consumed by a
    match of one is no longer available to any of them."""

    name: str
    patterns: tuple[str, ...]
    span: Span = dc_field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class PatternFile:
    path: str
    patterns: tuple[Pattern, ...]
    conflicts: tuple[Conflict, ...] = ()
    queries: tuple[MatchRecognize, ...] = ()  # SQL MATCH_RECOGNIZE queries (``*.sql`` files)


# ----------------------------------------------------------------------------- helpers


def events_of(node: Node) -> list[EventRef]:
    """Every EventRef under ``node``, left to right."""
    if isinstance(node, EventRef):
        return [node]
    out: list[EventRef] = []
    for child in node.children:
        out.extend(events_of(child))
    return out


def stops_of(node: Node) -> list[tuple[EventRef, EventRef]]:
    """Every (Kleene list, its stop event) under ``node`` (``T+ v[] UNTIL U u``), left to
    right. A stop event is no step of the pattern: :func:`events_of` does not list it."""
    return [(r, r.until) for r in events_of(node) if r.until is not None]


def group_stops_of(node: Node) -> list[tuple[Group, EventRef]]:
    """Every (repeated group, its stop event) under ``node`` (``SEQ(...)+ g[] UNTIL U u``)."""
    return [(g, g.until) for g in groups_of(node) if g.until is not None]


def all_stops_of(node: Node) -> list[tuple[EventRef | Group, EventRef]]:
    """The stop events of lists and of groups, with what each stops."""
    return [*stops_of(node), *group_stops_of(node)]


def read_refs(node: Node) -> list[EventRef]:
    """Every event a pattern reads, by variable: its steps and negations (:func:`events_of`),
    then its stop events (:func:`stops_of`): what a variable of a condition may name."""
    return [*events_of(node), *(u for _, u in all_stops_of(node))]


def expr_children(expr: Expr) -> tuple[Expr, ...]:
    if isinstance(expr, (BinOp, Compare)):
        return (expr.left, expr.right)
    if isinstance(expr, BoolOp):
        return expr.operands
    if isinstance(expr, (Not, Neg)):
        return (expr.operand,)
    return ()


def map_leaves(expr: Expr, leaf: Callable[[Expr], Expr]) -> Expr:
    """``expr`` rebuilt with ``leaf`` applied to each leaf (a read, an aggregate, a constant):
    the one recursion the rewrites of reads share (renaming, a group's or a stop event's reads)."""
    if isinstance(expr, (BinOp, Compare)):
        return replace(expr, left=map_leaves(expr.left, leaf), right=map_leaves(expr.right, leaf))
    if isinstance(expr, BoolOp):
        return replace(expr, operands=tuple(map_leaves(o, leaf) for o in expr.operands))
    if isinstance(expr, (Not, Neg)):
        return replace(expr, operand=map_leaves(expr.operand, leaf))
    return leaf(expr)


def walk_expr(expr: Expr) -> Iterator[Expr]:
    """Pre-order iterator over an expression tree."""
    stack = [expr]
    while stack:
        e = stack.pop()
        yield e
        stack.extend(reversed(expr_children(e)))


def step_var(e: Attr | Agg) -> str:
    """The variable whose events a read takes its field from: a repeated group's step for
    ``g[i].b.x`` (``b``), else the variable read (for ``count(g[])``: the group)."""
    return e.member or e.var


def vars_of(expr: Expr) -> frozenset[str]:
    """Variables an expression mentions."""
    return frozenset(e.var for e in walk_expr(expr) if isinstance(e, (Attr, Agg)))


def iteration_var(expr: Expr) -> str | None:
    """The Kleene variable a conjunct iterates over (mentions v[i], v[i-1] or v[..i-1])."""
    for e in walk_expr(expr):
        if isinstance(e, Attr) and e.index is not None and e.index.kind in (IDX_CUR, IDX_PREV):
            return e.var
        if isinstance(e, Agg) and e.upto_prev:
            return e.var
    return None


def leftmost_span(expr: Expr) -> Span | None:
    """The leftmost position in an expression (where a reader starts looking)."""
    spans = [s for e in walk_expr(expr) if (s := getattr(e, "span", None)) is not None and s.line]
    return min(spans, key=lambda s: (s.line, s.column)) if spans else None
