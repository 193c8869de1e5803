"""The kernel's match tables: what a lowered net's tables hold (:class:`TablePlan`, worked
out once per net), the columns that need more than a NumPy array (Kleene lists, a name that
is a list in one pattern and an event in another — a list column in every row — ids of
input and composite events side by side), the kernel's values as Python values, and a table back as the engine's
:class:`Match` objects (:func:`to_matches`: for the library API and for comparisons).
:class:`~petricep.kernel.run.KernelRun` builds its tables with them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa

from petricep.compile.net import Net, PatternNet
from petricep.kernel.lowering import Lowered
from petricep.kernel.remembered import Composites
from petricep.runtime.arrow import string_array
from petricep.runtime.match import Match, by_position

# a value's kind in the kernel (_kernel.pyx): float, str, (a value that does not exist), bool, int, None
TAG_NUM, TAG_STR, TAG_MISSING, TAG_BOOL, TAG_INT, TAG_NULL, TAG_BIG = range(7)
EXACT = 2**53  # every int up to it is a float64; the kernel holds the ones beyond as TAG_BIG


def python_value(v: float, kind: int, strings: list[str], bigs: Sequence[int] = ()) -> Any:
    """A kernel value as the Python engine holds it: an int, a float, text, a bool, None
    (``bigs``: the kernel's ints beyond 2**53 by code, ``Kernel.bigs``)."""
    if kind == TAG_BIG:
        return bigs[int(v)]
    if kind == TAG_INT:
        return int(v) if math.isfinite(v) else v
    if kind == TAG_NUM:
        return float(v)
    if kind == TAG_STR:
        return strings[int(v)]
    if kind == TAG_BOOL:
        return v != 0.0
    return None


def exact_ints(col: np.ndarray, vals: np.ndarray, tags: np.ndarray, code: Callable[[int], int]) -> None:
    """The rows of an integer column (already in ``vals`` / ``tags`` as floats and ints)
    whose value is beyond 2**53 held as TAG_BIG by ``code`` (``Kernel.big_code``): a float64
    would round 9007199254740993 to its neighbour. Two reductions where none is."""
    if not len(col) or (int(col.max()) <= EXACT and int(col.min()) >= -EXACT):
        return
    rows = np.flatnonzero((col > EXACT) | (col < -EXACT)) if col.dtype.kind == "i" else np.flatnonzero(col > EXACT)
    vals[rows] = [code(int(v)) for v in col[rows].tolist()]
    tags[rows] = TAG_BIG


def outputs_of(lowered: Lowered) -> list[tuple[str, ...]]:
    """The field names of each pattern's RETURN, then (pattern ``npatterns + index``) of its
    ON TIMEOUT."""
    return [p.returns for p in lowered.patterns] + [p.timeouts for p in lowered.patterns]


def list_column(
    pattern: np.ndarray,
    ids: np.ndarray,
    klen: np.ndarray,
    klist: np.ndarray,
    where: list[tuple[int, int]],
    composites: Composites,
) -> pa.Array:
    """A Kleene variable's ids over the matches: list<int64> in stream order (null where its
    pattern has no such variable or an OR left it unbound); the kernel gives per match and slot
    an offset into ``klist`` and a length (-1: none). Lists of composite events hold their
    ids (text)."""
    rows: list[Any] = [None] * len(pattern)
    flat = klist.tolist()
    for p, slot in where:
        for r in np.flatnonzero((pattern == p) & (klen[:, slot] >= 0)).tolist():
            at = int(ids[r, slot])
            rows[r] = flat[at : at + int(klen[r, slot])]
    if not (klist < 0).any():
        return pa.array(rows, pa.list_(pa.int64()))
    # elements as _id_column gives them (text, or a union beside input events' int ids)
    values = id_column([composites.id_of(i) if i < 0 else i for row in rows if row is not None for i in row])
    offsets = np.cumsum([0] + [0 if row is None else len(row) for row in rows])
    valid = np.array([row is not None for row in rows], dtype=bool)
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, mask=pa.array(~valid))


def mixed_column(lists: pa.Array, singles: pa.Array, is_list: np.ndarray) -> pa.Array:
    """A variable name's ids where it is a Kleene list in some patterns (rows ``is_list``) and a
    single event in others: one list column, a single event's id a one-element list — as
    :func:`petricep.output.table.to_table` has it, so the column has one type whichever
    pattern a row is of (:func:`to_matches` gives a single event its id back)."""
    rows = [
        many if listed else (None if one is None else [one])
        for many, one, listed in zip(lists.to_pylist(), singles.to_pylist(), is_list.tolist())
    ]
    values = id_column([i for row in rows if row is not None for i in row])
    if pa.types.is_null(values.type):
        values = values.cast(pa.int64())
    offsets = np.cumsum([0] + [0 if row is None else len(row) for row in rows])
    valid = np.array([row is not None for row in rows], dtype=bool)
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, mask=pa.array(~valid))


def deadline_type(rows: list[Any]) -> pa.DataType:
    values = [r["deadline"] for r in rows if r is not None]
    return pa.int64() if values and all(isinstance(v, int) for v in values) else pa.float64()


Where: TypeAlias = "list[tuple[int, int]]"  # (pattern index, slot) pairs


@dataclass(frozen=True)
class TablePlan:
    """What a lowered net's match tables hold, worked out once per net (re-deriving it cost a
    small batch's pass ~5%): the pattern names, per variable name (first-seen order) where
    its ids are as single events and as Kleene lists, and which optional columns there are.
    ``empty``: a net's empty match table (per kind of time), where it is always the same."""

    names: pa.Array
    npatterns: int
    returns: bool
    outputs: bool
    timeouts: bool
    columns: tuple[tuple[str, Where, Where, Where], ...]  # name, all, as lists, as single events
    simple: bool
    # simple plans: per variable name and pattern its slot, -1 none (Kernel.take_columns)
    var_slot: np.ndarray = field(compare=False)
    empty: dict[bool | None, pa.Table] = field(default_factory=dict, compare=False)
    schemas: dict[pa.DataType, pa.Schema] = field(default_factory=dict, compare=False)

    def schema(self, times: pa.DataType) -> pa.Schema:
        """A simple plan's table schema with ``times`` start and end."""
        got = self.schemas.get(times)
        if got is None:
            names = [("pattern", pa.dictionary(pa.int32(), pa.string())), ("start", times), ("end", times)]
            got = self.schemas[times] = pa.schema(names + [(c[0], pa.int64()) for c in self.columns])
        return got


def table_plan(lowered: Lowered) -> TablePlan:
    """The plan of ``lowered``'s match tables (the last nets' plans are kept, as lower keeps
    their arrays)."""
    hit = _plans.get(id(lowered))
    if hit is not None and hit[0] is lowered:
        return hit[1]
    pats = lowered.patterns
    where: dict[str, Where] = {}
    for pi, p in enumerate(pats):
        for name, slot in p.vars:
            where.setdefault(name, []).append((pi, slot))
    columns = tuple(
        (v, w, [(p, s) for p, s in w if v in pats[p].kleene], [(p, s) for p, s in w if v not in pats[p].kleene])
        for v, w in where.items()
    )
    returns = any(p.has_return or p.timeout_type for p in pats)
    outputs = any(outputs_of(lowered))
    timeouts = any(p.timeout_type for p in pats)
    var_slot = np.full((max(len(columns), 1), max(len(pats), 1)), -1, dtype=np.int32)
    for v, (_, w, _, _) in enumerate(columns):
        for pi, slot in w:
            var_slot[v, pi] = slot
    plan = TablePlan(
        string_array([p.name for p in pats]), max(len(pats), 1), returns, outputs, timeouts, columns,
        simple=not (returns or outputs or timeouts or any(c[2] for c in columns)), var_slot=var_slot[: len(columns)],
    )
    if len(_plans) >= 16:
        _plans.pop(next(iter(_plans)))
    _plans[id(lowered)] = (lowered, plan)
    return plan


_plans: dict[int, tuple[Lowered, TablePlan]] = {}


def to_matches(table: pa.Table, net: Net) -> list[Match]:
    """The kernel's match table as the engine's :class:`Match` objects (row order kept)."""
    rows = table.to_pylist()
    out = []
    for row in rows:
        p = net.pattern(row["pattern"])
        ids: dict[str, Any] = {}
        for v in p.vars:
            name = v.group or v.name  # a repeated group: one column of its bindings
            if name not in ids and row.get(name) is not None:
                ids[name] = _bindings(row[name], _steps(p, name)) if v.group else _own(row[name], v.kleene)
        timeout = row.get("timeout")
        fields = p.timeout if timeout is not None else p.returns
        attrs = {f.name: row["attrs"][f.name] for f in fields.fields} if fields else {}
        when = (timeout["type"], timeout["deadline"]) if timeout is not None else None
        out.append(Match(p.name, ids, row["start"], row["end"], attrs, timeout=when))
    return out


def _steps(p: PatternNet, group: str) -> list[str]:
    """The steps of ``p``'s group ``group`` in its order: the table's struct has one field
    order for every pattern naming a group so (the first's), the engine's ids the pattern's."""
    return [v.name for v in p.vars if v.group == group]


def _bindings(iterations: list[dict[str, Any]], steps: list[str]) -> list[dict[str, Any]]:
    """A group's bindings as the engine's ids hold them, in the pattern's step order: a step
    an iteration did not bind (a timed-out partial match's last iteration) is absent, not None."""
    return [{m: it[m] for m in steps if it.get(m) is not None} for it in iterations]


def group_column(
    steps: list[tuple[str, pa.Array]],
    keys: dict[str, pa.Array] | None = None,
    repeats: frozenset[str] = frozenset(),
    orders: Sequence[Sequence[str]] | None = None,
    rows_of: Sequence[bool] | None = None,
) -> pa.Array:
    """A repeated group's bindings over the matches from its steps' list columns (each
    ``list<id>``, null where the match has no such step): ``list<struct<step: id, ...>>``,
    one struct per iteration, a step an iteration did not bind null. ``keys``: a group with
    optional steps, its steps' elements' input positions (as list columns): its iterations
    are placed by position (:func:`petricep.runtime.match.by_position`), not zipped; a Kleene
    step's (``repeats``) as a ``list<id>`` in each iteration's struct. ``orders``: per match,
    its own pattern's steps in order (patterns merged into one net may name one group with
    steps in other orders, ``SEQ(B b, C+ c[])`` and ``SEQ(C+ c[], B b)``: placing by position
    follows the match's own order; the struct's fields are the column's). ``rows_of``: per
    match, whether its pattern has this group (two groups of one net may share step names,
    ``SEQ(B b, C? c, D d)+ g[]`` beside ``SEQ(B b, C+ cs[], D d)+ h[]``: null elsewhere)."""
    lists = [col.to_pylist() for _, col in steps]
    names = [m for m, _ in steps]
    places = [keys[m].to_pylist() for m in names] if keys is not None else None
    rows: list[Any] = []
    for r, parts in enumerate(zip(*lists)):
        if all(x is None for x in parts) or (rows_of is not None and not rows_of[r]):
            rows.append(None)
            continue
        if places is not None:
            got = {m: x for m, x in zip(names, parts) if x is not None}
            at = {m: places[j][r] for j, m in enumerate(names) if parts[j] is not None}
            order = names if orders is None else orders[r]
            rows.append([{m: it.get(m) for m in names} for it in by_position(order, got, at, repeats)])
            continue
        n = max(len(x) for x in parts if x is not None)
        rows.append([{m: x[i] if x is not None and i < len(x) else None for (m, _), x in zip(steps, parts)} for i in range(n)])
    return pa.array(rows, pa.list_(pa.struct([pa.field(m, col.type if m in repeats else col.type.value_type) for m, col in steps])))


def group_keys(lowered: Lowered, plan: TablePlan, arrays: tuple[np.ndarray, ...], composites: Composites) -> dict[str, Any] | None:
    """The order the list elements of each group with optional or Kleene steps were bound in,
    as list columns (``arrays``: the match table's patterns, refs, list lengths and the
    elements' binding order): their iterations are placed by it (:func:`group_column`).
    None: no such group."""
    # (every pattern's steps of a group name one pattern orders: patterns merged into one net
    # share the group's column, and it is placed by position for all their rows or none)
    ordered = {g for p in lowered.patterns for g in p.ordered_groups}
    steps = {m for p in lowered.patterns for g, ms in p.groups if g in ordered for m in ms}
    if not steps:
        return None
    base, ids, klen, at = arrays
    return {var: list_column(base, ids, klen, at, listed, composites) for var, _w, listed, _s in plan.columns if var in steps and listed}


def group_columns(
    cols: dict[str, Any], lowered: Lowered, found: tuple[TablePlan, tuple[np.ndarray, ...], Composites] | None = None
) -> dict[str, Any]:
    """A match table's columns with each repeated group's steps (list columns) replaced by
    one column of the group's bindings, at its first step's place, as the engine's table
    has it (:func:`petricep.output.table.layout_of`); a step name some pattern binds outside
    a group keeps its column too. ``found``: the table's plan, match arrays and composite
    events, whose input positions place the iterations of a group with optional steps
    (:func:`group_keys`)."""
    keys = group_keys(lowered, *found) if found is not None else None
    row_pattern = found[1][0].tolist() if found is not None else None
    members: dict[str, list[str]] = {}
    for p in lowered.patterns:
        for g, steps in p.groups:
            members.setdefault(g, [])
            members[g] += [m for m in steps if m not in members[g]]
    single = {name for p in lowered.patterns for name, _ in p.vars if not any(name in m for _, m in p.groups)}
    firsts: dict[str, list[str]] = {}  # a step name -> the groups placed at it (several may share step names)
    for g, m in members.items():
        firsts.setdefault(m[0], []).append(g)
    repeats = frozenset(m for p in lowered.patterns for m in p.repeating_steps)
    out: dict[str, Any] = {}
    for name, col in cols.items():
        for g in firsts.get(name, ()):
            ordered = keys is not None and all(m in keys for m in members[g])
            own = {pi: list(dict(p.groups).get(g, members[g])) for pi, p in enumerate(lowered.patterns)}
            orders = [own[pi] for pi in row_pattern] if ordered and row_pattern is not None else None
            having = {pi for pi, p in enumerate(lowered.patterns) if g in dict(p.groups)}
            rows_of = [pi in having for pi in row_pattern] if row_pattern is not None and len(having) < len(lowered.patterns) else None
            columns = [(m, cols[m]) for m in members[g]]
            out[g] = group_column(columns, {m: keys[m] for m in members[g]} if ordered and keys else None, repeats, orders, rows_of)
        if any(name in m for m in members.values()) and name not in single:
            continue
        out[name] = col
    return out


def _own(value: Any, kleene: bool) -> Any:
    """A variable's ids as its pattern binds them: a single event's id out of the one-element
    list of a name that is a list in another pattern (:func:`mixed_column`)."""
    return value[0] if not kleene and isinstance(value, list) else value


def id_column(ids: list[Any]) -> pa.Array:
    """Ids as one column: int64 or text, or where a variable name binds input events in one
    pattern and composite events (text ids) in another, a dense union of the two."""
    try:
        return pa.array(ids)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    ints: list[Any] = []
    texts: list[str] = []
    kinds, offsets = [], []
    for i in ids:
        text = isinstance(i, str)
        kinds.append(1 if text else 0)
        offsets.append(len(texts) if text else len(ints))
        (texts if text else ints).append(i)
    return pa.UnionArray.from_dense(
        pa.array(kinds, pa.int8()), pa.array(offsets, pa.int32()),
        [pa.array(ints, pa.int64()), pa.array(texts, pa.string())], ["int", "text"],
    )


__all__ = [
    "EXACT", "TAG_BIG", "TAG_BOOL", "TAG_INT", "TAG_MISSING", "TAG_NULL", "TAG_NUM", "TAG_STR", "TablePlan", "deadline_type",
    "id_column", "list_column", "mixed_column", "outputs_of", "python_value", "table_plan", "to_matches",
]
