"""The engine against the brute-force row-pattern reference on random queries and rows.

Random small patterns (quantifiers * + ? {n} {n,} {n,m}, greedy and reluctant,
alternation, groups, PERMUTE; some match no rows: empty matches), DEFINEs drawn from SQL templates paired with a Python
meaning, every skip mode, windows, ONE ROW and ALL ROWS PER MATCH.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from petricep.api import compile_sql
from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.sql import row_reference as R

VARS = ("A", "B", "C")


# ----------------------------------------------------------------------------- patterns


def _atom() -> st.SearchStrategy[tuple[Any, ...]]:
    return st.sampled_from(VARS).map(lambda v: ("var", v))


def _quantifier() -> st.SearchStrategy[tuple[int, int | None]]:
    return st.sampled_from([(0, None), (1, None), (0, 1), (2, 2), (1, 2), (2, None), (0, 2)])


def _extend(inner: st.SearchStrategy[tuple[Any, ...]]) -> st.SearchStrategy[tuple[Any, ...]]:
    quant = st.tuples(inner, _quantifier(), st.booleans()).map(lambda t: ("quant", t[0], t[1][0], t[1][1], t[2]))
    return st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: ("seq", xs)),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: ("alt", xs)),
        quant,
        st.lists(_atom(), min_size=2, max_size=3).map(lambda xs: ("perm", xs)),
    )


def _ok(p: tuple[Any, ...]) -> bool:
    """No repeated group that can match no rows (petricep rejects those)."""
    kind = p[0]
    if kind == "var":
        return True
    if kind == "quant":
        if (p[3] is None or p[3] > 1) and R.nullable(p[1]):
            return False
        return _ok(p[1])
    return all(_ok(c) for c in p[1])


patterns = st.recursive(_atom(), _extend, max_leaves=6).filter(_ok)


def sql_of(p: tuple[Any, ...]) -> str:
    kind = p[0]
    if kind == "var":
        return str(p[1])
    if kind == "seq":
        return "(" + " ".join(sql_of(c) for c in p[1]) + ")"
    if kind == "alt":
        return "(" + " | ".join(sql_of(c) for c in p[1]) + ")"
    if kind == "perm":
        return "PERMUTE(" + ", ".join(sql_of(c) for c in p[1]) + ")"
    _, body, lo, hi, greedy = p
    q = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((lo, hi))
    if q is None:
        q = f"{{{lo}}}" if lo == hi else f"{{{lo},}}" if hi is None else f"{{{lo},{hi}}}"
    return f"({sql_of(body)}){q}{'' if greedy else '?'}"


def multi_of(p: tuple[Any, ...], repeated: bool = False, seen: dict[str, int] | None = None) -> set[str]:
    """The variables whose ids are a list: written twice, or under a repeating quantifier."""
    seen = {} if seen is None else seen
    kind = p[0]
    if kind == "var":
        seen[p[1]] = seen.get(p[1], 0) + 1
        return {p[1]} if repeated or seen[p[1]] > 1 else set()
    rep = repeated or (kind == "quant" and (p[3] is None or p[3] > 1))
    out: set[str] = set()
    for c in [p[1]] if kind == "quant" else p[1]:
        out |= multi_of(c, rep, seen)
    out |= {v for v, n in seen.items() if n > 1}
    return out


def vars_of(p: tuple[Any, ...]) -> set[str]:
    if p[0] == "var":
        return {p[1]}
    return set().union(*(vars_of(c) for c in ([p[1]] if p[0] == "quant" else p[1])))


# ----------------------------------------------------------------------------- DEFINE templates
# (SQL for variable V, the same condition in Python over rows and the mapping so far)


def _x(rows: list[R.Row], i: int) -> Any:
    return rows[i]["x"] if 0 <= i < len(rows) else None


def _template(kind: int, v: str, k: int, other: str) -> tuple[str, R.Cond]:
    if kind == 0:
        return f"{v}.x > {k}", lambda rows, mp: rows[mp[-1][0]]["x"] > k
    if kind == 1:
        return f"{v}.x < PREV({v}.x)", lambda rows, mp: (p := _x(rows, mp[-1][0] - 1)) is not None and rows[mp[-1][0]]["x"] < p
    if kind == 2:
        return f"{v}.x >= PREV(x, 2)", lambda rows, mp: (p := _x(rows, mp[-1][0] - 2)) is not None and rows[mp[-1][0]]["x"] >= p

    if kind == 3:

        def last1(rows: list[R.Row], mp: R.Mapping) -> bool:
            prev = [i for i, name in mp[:-1] if name == v]
            return not prev or rows[mp[-1][0]]["x"] > rows[prev[-1]]["x"]

        return f"LAST({v}.x, 1) IS NULL OR {v}.x > LAST({v}.x, 1)", last1
    if kind == 4:

        def first_other(rows: list[R.Row], mp: R.Mapping) -> bool:
            firsts = [i for i, name in mp if name == other]
            return bool(firsts) and rows[mp[-1][0]]["x"] != rows[firsts[0]]["x"]

        return f"{v}.x <> FIRST({other}.x)", first_other
    if kind == 5:
        return f"COUNT({v}.*) <= {k % 3 + 1}", lambda rows, mp: sum(1 for _, n in mp if n == v) <= k % 3 + 1
    if kind == 6:

        def plus_other(rows: list[R.Row], mp: R.Mapping) -> bool:
            lasts = [i for i, name in mp if name == other]
            return bool(lasts) and rows[mp[-1][0]]["x"] + rows[lasts[-1]]["x"] > k

        return f"{v}.x + {other}.x > {k}", plus_other
    if kind == 7:

        def avg_below(rows: list[R.Row], mp: R.Mapping) -> bool:
            mine = [rows[i]["x"] for i, name in mp if name == v]
            return sum(mine) / len(mine) < k

        return f"AVG({v}.x) < {k}", avg_below
    return f"x = {k} OR y = {k % 3}", lambda rows, mp: rows[mp[-1][0]]["x"] == k or rows[mp[-1][0]]["y"] == k % 3


defines = st.dictionaries(
    st.sampled_from(VARS),
    st.tuples(st.integers(0, 8), st.integers(0, 4), st.sampled_from(VARS)),
    max_size=3,
)

MEASURES_SQL = "MATCH_NUMBER() AS mn, CLASSIFIER() AS cls, COUNT(*) AS n, FIRST(x) AS fx, LAST({v}.x) AS la, PREV(x) AS px"


def _measures(v: str) -> dict[str, Any]:
    def la(rows: list[R.Row], mp: R.Mapping, k: int, n: int) -> Any:
        a = [i for i, name in mp[: k + 1] if name == v]
        return rows[a[-1]]["x"] if a else None

    return {  # k = -1: an empty match (no row: NULL, a count of 0)
        "mn": lambda rows, mp, k, n: n,
        "cls": lambda rows, mp, k, n: mp[k][1] if mp else None,
        "n": lambda rows, mp, k, n: k + 1,
        "fx": lambda rows, mp, k, n: rows[mp[0][0]]["x"] if mp else None,
        "la": la,
        "px": lambda rows, mp, k, n: _x(rows, mp[k][0] - 1) if mp else None,
    }


rows_st = st.lists(
    st.tuples(st.integers(0, 1), st.integers(0, 4), st.integers(0, 2), st.integers(0, 2)), min_size=0, max_size=16
)


def _events(raw: list[tuple[int, int, int, int]]) -> tuple[list[Event], list[R.Row]]:
    evs, rows, ts = [], [], 0
    for i, (p, x, y, dt) in enumerate(raw):
        ts += dt
        evs.append(Event("T", ts, i, None, {"p": p, "x": x, "y": y}))
        rows.append({"p": p, "x": x, "y": y, "ts": ts, "id": i})
    return evs, rows


def canon(recs: list[dict[str, Any]]) -> list[str]:
    """Output records in a canonical order (the reference does not order matches)."""
    return sorted(json.dumps(r, sort_keys=True) for r in recs)


def query_text(pattern: tuple[Any, ...], defines: dict[str, str], skip: tuple[str, str], window: int | None, all_rows: bool) -> str:
    """A random case's query: ``defines`` maps each variable to its DEFINE condition's SQL,
    ``skip`` is (mode, variable) of AFTER MATCH SKIP."""
    mode, skip_var = skip
    skip_sql = {"past": "PAST LAST ROW", "next": "TO NEXT ROW", "first": f"TO FIRST {skip_var}", "last": f"TO LAST {skip_var}"}
    define_sql = ", ".join(f"{v} AS {sql}" for v, sql in sorted(defines.items()))
    return (
        "SELECT * FROM T MATCH_RECOGNIZE (PARTITION BY p ORDER BY ts "
        f"MEASURES {MEASURES_SQL.format(v=min(vars_of(pattern)))} {'ALL ROWS' if all_rows else 'ONE ROW'} PER MATCH "
        f"AFTER MATCH SKIP {skip_sql[mode]} PATTERN ({sql_of(pattern)}) "
        + (f"DEFINE {define_sql} " if defines else "")
        + (f"WITHIN {window} " if window is not None else "")
        + ") AS q"
    )


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    pattern=patterns,
    defs=defines,
    skip=st.tuples(st.sampled_from(["past", "next", "first", "last"]), st.sampled_from(VARS)),
    window=st.one_of(st.none(), st.integers(0, 6)),
    all_rows=st.booleans(),
    raw=rows_st,
)
def test_engine_agrees_with_reference(
    pattern: tuple[Any, ...],
    defs: dict[str, tuple[int, int, str]],
    skip: tuple[str, str],
    window: int | None,
    all_rows: bool,
    raw: list[tuple[int, int, int, int]],
) -> None:
    used = vars_of(pattern)
    mode, skip_var = skip
    assume(mode in ("past", "next") or skip_var in used)
    conds = {v: _template(kind, v, k, other if other in used else v) for v, (kind, k, other) in defs.items() if v in used}
    first = min(used)
    text = query_text(pattern, {v: sql for v, (sql, _) in conds.items()}, skip, window, all_rows)
    q = R.Query(
        pattern,
        {v: f for v, (_, f) in conds.items()},
        (mode, None if mode in ("past", "next") else skip_var),
        window,
        multi_of(pattern),
    )
    evs, rows = _events(raw)
    try:
        expected: list[dict[str, Any]] | None = R.run(q, rows, "p", "q", _measures(first), all_rows)
    except R.SkipError:
        expected = None
    engine = Engine(compile_sql(text))
    if expected is None:
        with pytest.raises(EvaluationError):
            list(engine.run(evs))
        return
    got = [m.to_dict() for m in engine.run(evs)]
    assert canon(got) == canon(expected), text
