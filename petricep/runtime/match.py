"""A match: one pattern's complete partial match, with its ids, times and RETURN values.

Its own module so that every runtime (the engine, SQL rows, the kernel) and every edge (writers,
tables, Spark) shares one match type without importing the engine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from petricep.events import Event


class Match:
    """One match of one pattern. ``ids`` is built on first use from the shared partial
    match (a run that only counts matches never builds it)."""

    __slots__ = ("pattern", "start", "end", "attrs", "_ids", "_vars", "_chain", "timeout")

    def __init__(
        self,
        pattern: str,
        ids: dict[str, Any] | None,
        start: Any,
        end: Any,
        attrs: dict[str, Any] | None = None,
        vars_: Any = None,
        chain: list[tuple[int, Event]] | None = None,
        timeout: tuple[str, Any] | None = None,
    ) -> None:
        self.pattern = pattern
        self.start = start
        self.end = end
        self.attrs = attrs if attrs is not None else {}
        self._ids = ids
        self._vars = vars_
        self._chain = chain
        # a timed-out partial match (ON TIMEOUT): (its event type, when its window closed)
        self.timeout = timeout

    @property
    def ids(self) -> dict[str, Any]:
        if self._ids is None:
            self._ids = _ids(self._vars, self._chain or [])
        return self._ids

    def bindings(self) -> dict[str, Any]:
        """Variable -> bound event (a Kleene variable: its list), from the shared chain."""
        out: dict[str, Any] = {}
        by_slot = {v.slot: v for v in self._vars or ()}
        for sl, ev in self._chain or ():
            v = by_slot[sl]
            if v.kleene:
                out.setdefault(v.name, []).append(ev)
            else:
                out[v.name] = ev
        return out

    @property
    def id(self) -> str:
        """The id of this match as a composite event (``pattern[ids...]``; a timeout's
        ``pattern@timeout[ids...]``)."""
        return composite_id(self.pattern if self.timeout is None else f"{self.pattern}@timeout", self.ids)

    def to_dict(self) -> dict[str, Any]:
        d = {"pattern": self.pattern, "ids": self.ids, "start": self.start, "end": self.end, "attrs": self.attrs}
        if self.timeout is not None:
            d["timeout"] = {"type": self.timeout[0], "deadline": self.timeout[1]}
        return d

    def __repr__(self) -> str:
        return f"Match({self.to_dict()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Match) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]


def _ids(vars_: Any, chain: list[tuple[int, Event]]) -> dict[str, Any]:
    ids: dict[str, Any] = {}
    keys: dict[str, list[int]] = {}  # each list element's place in the chain (binding order)
    present = {sl for sl, _ in chain}
    for v in vars_:
        if v.kleene and v.slot in present:
            ids[v.name] = []
            keys[v.name] = []
    by_slot = {v.slot: v for v in vars_}
    for n, (sl, ev) in enumerate(chain):
        v = by_slot[sl]
        if v.kleene:
            ids[v.name].append(ev.id)
            keys[v.name].append(n)
        else:
            ids[v.name] = ev.id
    out = {v.name: ids[v.name] for v in vars_ if v.name in ids}
    return group_ids(vars_, out, keys) if any(getattr(v, "group", None) for v in vars_) else out


def group_ids(vars_: Any, ids: dict[str, Any], keys: Mapping[str, Sequence[Any]] | None = None) -> dict[str, Any]:
    """A repeated group's steps' id lists as the group's list of bindings (issue 42):
    ``{"b": [3, 5], "c": [4, 6]}`` -> ``{"g": [{"b": 3, "c": 4}, {"b": 5, "c": 6}]}``, at the
    place of its first step; a partial last iteration (a timed-out partial match) keeps the
    steps it bound. ``keys``: each list element's order (:func:`group_bindings`)."""
    return group_bindings(group_steps(vars_), ids, keys, optional_groups(vars_), repeating_steps(vars_))


def optional_groups(vars_: Any) -> frozenset[str]:
    """The repeated groups whose lists are not aligned by iteration among a pattern's
    variables: those with optional steps or Kleene steps."""
    return frozenset(
        v.group for v in vars_ if getattr(v, "group", None) is not None and (getattr(v, "optional", False) or getattr(v, "repeats", False))
    )


def repeating_steps(vars_: Any) -> frozenset[str]:
    """The Kleene steps of repeated groups among a pattern's variables (``C+ c[]`` in
    ``SEQ(B b, C+ c[], D d)+ g[]``): an iteration binds a list of each."""
    return frozenset(v.name for v in vars_ if getattr(v, "repeats", False))


def group_steps(vars_: Any) -> dict[str, list[str]]:
    """Each repeated group's steps (variable names, in order) among a pattern's variables."""
    steps: dict[str, list[str]] = {}
    for v in vars_:
        if v.group is not None:
            steps.setdefault(v.group, []).append(v.name)
    return steps


def group_bindings(
    steps: Mapping[str, Sequence[str]],
    ids: dict[str, Any],
    keys: Mapping[str, Sequence[Any]] | None = None,
    ordered: frozenset[str] | set[str] = frozenset(),
    repeats: frozenset[str] | set[str] = frozenset(),
) -> dict[str, Any]:
    """:func:`group_ids` given each group's steps (group -> step names, in order), as the
    kernel knows them (its lowered patterns' ``groups``). A group in ``ordered`` (one with
    optional steps: an iteration may leave a step out, so its lists are not aligned by
    iteration) has its elements placed by ``keys`` (per step, each element's binding order:
    chain place or input position) with :func:`by_position`; the others' lists are zipped."""
    out: dict[str, Any] = {}
    for name, value in ids.items():
        group = next((g for g, members in steps.items() if name in members), None)
        if group is None:
            out[name] = value
        elif group not in out:
            members = [m for m in steps[group] if m in ids]
            if group in ordered and keys is not None:
                out[group] = by_position(steps[group], {m: ids[m] for m in members}, keys, repeats)
                continue
            n = max(len(ids[m]) for m in members)
            out[group] = [{m: ids[m][i] for m in members if i < len(ids[m])} for i in range(n)]
    return out


def by_position(
    members: Sequence[str], ids: Mapping[str, Sequence[Any]], keys: Mapping[str, Sequence[Any]], repeats: frozenset[str] | set[str] = frozenset()
) -> list[dict[str, Any]]:
    """A group's iterations from its steps' lists in binding order: each element joins the
    iteration of the nearest earlier one unless its step is not after that one's in the
    group (then it starts the next iteration), so an optional step's element lands in the
    iteration whose required step before it is the nearest earlier one. A Kleene step's
    (``repeats``) next element stays in its iteration, which holds its elements as a list
    (``{"b": 1, "c": [2, 3], "d": 4}``: a required step before and after it delimit it)."""
    order = {m: i for i, m in enumerate(members)}
    elements = sorted(((k, order[m], m, i) for m, lst in ids.items() for k, i in zip(keys[m], lst)), key=lambda x: (x[0], x[1]))
    out: list[dict[str, Any]] = []
    last = len(members)
    for _k, pos, m, i in elements:
        if pos < last or (pos == last and m not in repeats):
            out.append({})
        if m in repeats:
            out[-1].setdefault(m, []).append(i)
        else:
            out[-1][m] = i
        last = pos
    return [{m: it[m] for m in members if m in it} for it in out]


def composite_id(name: str, ids: dict[str, Any]) -> str:
    """The id of a match's composite event: ``name[id,id+id,...]`` — its ids in variable
    order, a Kleene list joined by '+' (a repeated group's iterations too, each ``b;c``). Content-based, so every engine (and every key
    partition of a distributed run) names a composite event the same way."""
    parts = ["+".join(_element(i) for i in v) if isinstance(v, list) else str(v) for v in ids.values()]
    return f"{name}[{','.join(parts)}]"


def _element(i: Any) -> str:
    """One list element of a composite id: an id, or a group's iteration as ``b;c`` (a
    Kleene step's list in it as ``c1|c2``: ``b;c1|c2;d``)."""
    if isinstance(i, dict):
        return ";".join("|".join(str(y) for y in x) if isinstance(x, list) else str(x) for x in i.values())
    return str(i)
