"""A brute-force reference for SQL row-pattern matching, written apart from the engine.

The textbook definition, executed literally: per partition, try a match at each start row
with a backtracking regex matcher over the rows (alternatives tried in preference order:
left branch first, greedy quantifiers one more iteration first, reluctant ones one fewer);
the first complete match found is the match of that row. Then AFTER MATCH SKIP decides the
next start row. Conditions are plain Python functions over (rows, mapping) — the mapping
being the (row index, variable) pairs so far, the current row last — so nothing here
shares code with petricep's evaluator.

Patterns are tuples: ("var", name), ("seq", [..]), ("alt", [..]),
("quant", body, lo, hi | None, greedy), ("perm", [..]).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import permutations
from typing import Any

Row = dict[str, Any]
Mapping = list[tuple[int, str]]
Cond = Callable[[list[Row], Mapping], bool]
Cont = Callable[[int, Mapping], Iterator[Mapping]]


class SkipError(Exception):
    """AFTER MATCH SKIP TO a variable with no row, or back to the match's first row."""


@dataclass
class Query:
    pattern: tuple[Any, ...]
    defines: dict[str, Cond]
    skip: tuple[str, str | None]  # ("past", None) | ("next", None) | ("first", V) | ("last", V)
    window: int | None = None
    multi: set[str] = field(default_factory=set)  # variables whose ids are a list


def nullable(p: tuple[Any, ...]) -> bool:
    kind = p[0]
    if kind == "var":
        return False
    if kind == "quant":
        return p[2] == 0 or nullable(p[1])
    if kind == "alt":
        return any(nullable(c) for c in p[1])
    return all(nullable(c) for c in p[1])


def _match(q: Query, rows: list[Row], start: int) -> Mapping | None:
    """The preferred match starting at ``start`` (backtracking, first success wins)."""

    def var(name: str, pos: int, mp: Mapping, k: Cont) -> Iterator[Mapping]:
        if pos >= len(rows):
            return
        if q.window is not None and rows[pos]["ts"] - rows[start]["ts"] > q.window:
            return
        new = [*mp, (pos, name)]
        cond = q.defines.get(name)
        if cond is None or cond(rows, new):
            yield from k(pos + 1, new)

    def m(p: tuple[Any, ...], pos: int, mp: Mapping, k: Cont) -> Iterator[Mapping]:
        kind = p[0]
        if kind == "var":
            yield from var(p[1], pos, mp, k)
        elif kind == "seq":
            yield from seq(list(p[1]), pos, mp, k)
        elif kind == "alt":
            for c in p[1]:
                yield from m(c, pos, mp, k)
        elif kind == "perm":
            for order in permutations(p[1]):
                yield from seq(list(order), pos, mp, k)
        else:
            yield from rep(p, 0, pos, mp, k)

    def seq(items: list[tuple[Any, ...]], pos: int, mp: Mapping, k: Cont) -> Iterator[Mapping]:
        if not items:
            yield from k(pos, mp)
            return
        yield from m(items[0], pos, mp, lambda p2, mp2: seq(items[1:], p2, mp2, k))

    def rep(p: tuple[Any, ...], count: int, pos: int, mp: Mapping, k: Cont) -> Iterator[Mapping]:
        _, body, lo, hi, greedy = p

        def more() -> Iterator[Mapping]:
            if hi is None or count < hi:
                yield from m(body, pos, mp, lambda p2, mp2: rep(p, count + 1, p2, mp2, k))

        if count < lo:
            yield from more()
        elif greedy:
            yield from more()
            yield from k(pos, mp)
        else:
            yield from k(pos, mp)
            yield from more()

    for found in m(q.pattern, start, [], lambda pos, mp: iter([mp])):
        return found
    return None


def partition_matches(q: Query, rows: list[Row]) -> list[tuple[int, Mapping]]:
    """Every match of one partition with its start row, in order (an empty match maps no
    row; the next search starts at the next row)."""
    out: list[tuple[int, Mapping]] = []
    start = 0
    while start < len(rows):
        found = _match(q, rows, start)
        if found is None:
            start += 1
            continue
        out.append((start, found))
        mode, v = q.skip
        if mode == "past":
            start = found[-1][0] + 1 if found else start + 1
        elif mode == "next":
            start += 1
        else:
            mapped = [i for i, name in found if name == v]
            if not mapped:
                raise SkipError(f"no row mapped to {v}")
            target = mapped[0] if mode == "first" else mapped[-1]
            if target == start:
                raise SkipError("skip to the first row of the match")
            start = target
    return out


Measure = Callable[[list[Row], Mapping, int, int], Any]  # (rows, mapping, current k (-1: none), match number)


def run(
    q: Query,
    rows: list[Row],
    key: str,
    name: str,
    measures: dict[str, Measure],
    all_rows: bool,
) -> list[dict[str, Any]]:
    """petricep's JSON objects for every match, partition by partition. ``attrs`` are what
    ``SELECT *`` returns: the PARTITION BY column ``key`` (the SQL standard's ONE ROW PER
    MATCH columns start with it), then the measures."""
    parts: dict[Any, list[Row]] = {}
    for r in rows:
        parts.setdefault(r[key], []).append(r)
    out = []
    for prow in parts.values():
        for number, (start, mp) in enumerate(partition_matches(q, prow), 1):
            ids: dict[str, Any] = {}
            for i, v in mp:
                if v in q.multi:
                    ids.setdefault(v, []).append(prow[i]["id"])
                else:
                    ids[v] = prow[i]["id"]
            first, last = (mp[0][0], mp[-1][0]) if mp else (start, start)
            base = {"pattern": name, "ids": ids, "start": prow[first]["ts"], "end": prow[last]["ts"]}
            ks = range(len(mp)) if all_rows else [len(mp) - 1]  # an empty match: k = -1, no row
            for k in ks:
                cols = {key: prow[0][key], **{n: f(prow, mp, k, number) for n, f in measures.items()}}
                rec = dict(base, attrs=cols)
                if all_rows:
                    rec["row"] = prow[mp[k][0]]["id"]
                out.append(rec)
    return out
