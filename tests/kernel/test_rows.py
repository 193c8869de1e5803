"""The kernel's row matcher (SQL MATCH_RECOGNIZE) against the Python row runtime and the
brute-force reference: random queries and streams (the same matches in the same order, the
same output rows, the same errors), hand cases with their exact ids, what it refuses and why,
and the shipped query on both engines."""

from __future__ import annotations

import random
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from petricep import kernel
from petricep.api import compile_sql, net_of
from petricep.cli import main
from petricep.compile.net import Net
from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.kernel.rowengine import RowKernelEngine
from petricep.lang.parser import parse_text
from petricep.lang.sql import parse_sql
from petricep.merge import extend_net
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.sql import row_reference as R
from tests.sql.test_row_reference import canon, multi_of, patterns, query_text, vars_of

ROOT = Path(__file__).resolve().parents[2]
VARS = ("A", "B", "C")


# ----------------------------------------------------------------------------- running


def outcome(engine: Engine, events: list[Event]) -> tuple[list[dict[str, Any]], str | None]:
    """The matches in order, and the error that stopped the run (None: it finished)."""
    out: list[dict[str, Any]] = []
    try:
        for m in engine.run(events):
            out.append(m.to_dict())
    except EvaluationError as exc:
        return out, str(exc)
    return out, None


def both(text: str, events: list[Event]) -> tuple[list[dict[str, Any]], str | None]:
    """The kernel's outcome, checked equal to the Python engine's (order included)."""
    net = compile_sql(text)
    assert kernel.supports(net) == (True, "covered"), text
    expected = outcome(Engine(net), events)
    got = outcome(RowKernelEngine(net), events)
    assert got == expected, text
    return got


# ----------------------------------------------------------------------------- random queries

# DEFINE templates the kernel covers (memoryless): SQL for variable V and, where the reference
# can check it, the same condition in Python (None: checked against the Python engine only)


def _x(rows: list[R.Row], i: int, col: str = "x") -> Any:
    return rows[i][col] if 0 <= i < len(rows) else None


def _cur(rows: list[R.Row], mp: R.Mapping, col: str = "x") -> Any:
    return rows[mp[-1][0]][col]


def _template(kind: int, v: str, k: int, other: str) -> tuple[str, R.Cond | None]:
    templates: list[tuple[str, R.Cond | None]] = [
        (f"{v}.x > {k}", lambda rows, mp: _cur(rows, mp) > k),
        (f"{v}.x < PREV({v}.x)", lambda rows, mp: (p := _x(rows, mp[-1][0] - 1)) is not None and _cur(rows, mp) < p),
        (f"{v}.x >= PREV(x, 2)", lambda rows, mp: (p := _x(rows, mp[-1][0] - 2)) is not None and _cur(rows, mp) >= p),
        (f"x = {k} OR y = {k % 3}", lambda rows, mp: _cur(rows, mp) == k or _cur(rows, mp, "y") == k % 3),
        (f"x - y * 2 > {k} - 3", lambda rows, mp: _cur(rows, mp) - _cur(rows, mp, "y") * 2 > k - 3),
        (
            f"x / (y - 1) < {k} / 2",
            lambda rows, mp: _cur(rows, mp, "y") != 1 and _cur(rows, mp) / (_cur(rows, mp, "y") - 1) < k / 2,
        ),
        (
            f"NOT ({v}.x = y) AND PREV(x + y) IS NOT NULL",
            lambda rows, mp: _cur(rows, mp) != _cur(rows, mp, "y") and mp[-1][0] >= 1,
        ),
        (
            f"ABS(x - PREV(x)) <= {k % 2}",
            lambda rows, mp: mp[-1][0] >= 1 and abs(_cur(rows, mp) - rows[mp[-1][0] - 1]["x"]) <= k % 2,
        ),
        (f"z IS NULL OR z > {k} - 2.5", lambda rows, mp: (z := _cur(rows, mp, "z")) is None or z > k - 2.5),
        (f"s = 'a' OR {v}.x > {k}", lambda rows, mp: _cur(rows, mp, "s") == "a" or _cur(rows, mp) > k),
        ("PREV(z) < z OR PREV(z > 1 AND x > 1)", None),  # NULLs, floats, a condition inside PREV
        (f"PREV(s, {k % 3 + 1}) <> s AND x <= {k}", None),  # text: the Python closure answers
        (f"x * 1000000000 * 1000000000 > {k}", None),  # ints past 2**53: the Python closure answers
        (f"(s < {k}) OR x > 2", None),  # text < number: the Python engine's error
        (f"CLASSIFIER() = '{v}' AND x % 2 = 0", None),
        # reading the rows mapped so far: the Python closure on the thread's rows
        (f"LAST({v}.x, 1) IS NULL OR {v}.x > LAST({v}.x, 1)", _last1(v)),
        (f"{v}.x <> FIRST({other}.x)", _first_other(other)),
        (f"COUNT({v}.*) <= {k % 3 + 1}", lambda rows, mp: sum(1 for _, n in mp if n == v) <= k % 3 + 1),
        (f"AVG({v}.x) < {k}", _avg_below(v, k)),
        (f"PREV(LAST({v}.x), 1) < x", None),
    ]
    return templates[kind]


def _last1(v: str) -> R.Cond:
    def last1(rows: list[R.Row], mp: R.Mapping) -> bool:
        prev = [i for i, name in mp[:-1] if name == v]
        return not prev or rows[mp[-1][0]]["x"] > rows[prev[-1]]["x"]

    return last1


def _first_other(other: str) -> R.Cond:
    def first_other(rows: list[R.Row], mp: R.Mapping) -> bool:
        firsts = [i for i, name in mp if name == other]
        return bool(firsts) and rows[mp[-1][0]]["x"] != rows[firsts[0]]["x"]

    return first_other


def _avg_below(v: str, k: int) -> R.Cond:
    def avg_below(rows: list[R.Row], mp: R.Mapping) -> bool:
        mine = [rows[i]["x"] for i, name in mp if name == v]
        return sum(mine) / len(mine) < k

    return avg_below


NTEMPLATES = 20
defines = st.dictionaries(
    st.sampled_from(VARS), st.tuples(st.integers(0, NTEMPLATES - 1), st.integers(0, 4), st.sampled_from(VARS)), max_size=3
)
rows_st = st.lists(
    st.tuples(
        st.integers(0, 1),
        st.integers(0, 4),
        st.integers(0, 2),
        st.sampled_from([None, 0, 1, 2, 3, 1.5]),
        st.sampled_from(["a", "b"]),
        st.integers(0, 2),
    ),
    min_size=0,
    max_size=16,
)


def _events(raw: list[tuple[Any, ...]]) -> tuple[list[Event], list[R.Row]]:
    evs, rows, ts = [], [], 0
    for i, (p, x, y, z, s, dt) in enumerate(raw):
        ts += dt
        attrs = {"p": p, "x": x, "y": y, "z": z, "s": s}
        evs.append(Event("T", ts, i, None, attrs))
        rows.append({**attrs, "ts": ts, "id": i})
    return evs, rows


def _reference_measures(v: str) -> dict[str, Any]:
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


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(
    pattern=patterns,
    defs=defines,
    skip=st.tuples(st.sampled_from(["past", "next", "first", "last"]), st.sampled_from(VARS)),
    window=st.one_of(st.none(), st.integers(0, 6)),
    all_rows=st.booleans(),
    raw=rows_st,
)
def test_kernel_agrees_with_python_and_reference(
    pattern: tuple[Any, ...],
    defs: dict[str, tuple[int, int, str]],
    skip: tuple[str, str],
    window: int | None,
    all_rows: bool,
    raw: list[tuple[Any, ...]],
) -> None:
    used = vars_of(pattern)
    mode, skip_var = skip
    assume(mode in ("past", "next") or skip_var in used)
    conds = {v: _template(kind, v, k, other if other in used else v) for v, (kind, k, other) in defs.items() if v in used}
    first = min(used)
    text = query_text(pattern, {v: sql for v, (sql, _) in conds.items()}, skip, window, all_rows)
    evs, rows = _events(raw)
    got, error = both(text, evs)
    if any(f is None for _, f in conds.values()):
        return  # a template without a Python meaning: the Python engine is the reference
    q = R.Query(pattern, {v: f for v, (_, f) in conds.items() if f is not None}, (mode, None if mode in ("past", "next") else skip_var), window, multi_of(pattern))
    try:
        expected = R.run(q, rows, "p", "q", _reference_measures(first), all_rows)
    except R.SkipError:
        assert error is not None and "AFTER MATCH SKIP" in error
        return
    assert error is None
    assert canon(got) == canon(expected), text


# ----------------------------------------------------------------------------- hand cases

TICKER = (
    "SELECT * FROM Ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY ts "
    "MEASURES STRT.price AS top, LAST(DOWN.price) AS bottom, COUNT(*) AS n {rows} "
    "AFTER MATCH SKIP {skip} PATTERN (STRT DOWN+ UP+) "
    "DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price) {within}) AS v"
)


def ticker(prices: list[int], symbols: str = "") -> list[Event]:
    return [
        Event("Ticker", i + 1, i, i, {"symbol": symbols[i] if symbols else "S", "price": p}) for i, p in enumerate(prices)
    ]


def ids(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["ids"] for m in found]


def test_v_shape_ids_and_measures() -> None:
    text = TICKER.format(rows="ONE ROW PER MATCH", skip="TO LAST UP", within="")
    found, error = both(text, ticker([5, 4, 3, 4, 5, 2, 1, 3]))
    assert error is None
    assert ids(found) == [{"STRT": 0, "DOWN": [1, 2], "UP": [3, 4]}, {"STRT": 4, "DOWN": [5, 6], "UP": [7]}]
    assert [m["attrs"] for m in found] == [
        {"symbol": "S", "top": 5, "bottom": 3, "n": 5},
        {"symbol": "S", "top": 5, "bottom": 1, "n": 4},
    ]


def test_partitions_interleaved_and_skip_past_last() -> None:
    text = TICKER.format(rows="ONE ROW PER MATCH", skip="PAST LAST ROW", within="")
    found, _ = both(text, ticker([5, 9, 4, 8, 5, 9, 6, 7], "abababab"))
    # b's match is decided at row 7 (7 < 9 ends UP+), a's only at the end of the stream
    assert ids(found) == [{"STRT": 1, "DOWN": [3], "UP": [5]}, {"STRT": 0, "DOWN": [2], "UP": [4, 6]}]


def test_all_rows_per_match() -> None:
    text = TICKER.format(rows="ALL ROWS PER MATCH", skip="PAST LAST ROW", within="")
    found, _ = both(text, ticker([3, 2, 4]))
    assert [(m["row"], m["attrs"]["n"]) for m in found] == [(0, 1), (1, 2), (2, 3)]


def test_within_closes_a_search() -> None:
    text = TICKER.format(rows="ONE ROW PER MATCH", skip="PAST LAST ROW", within="WITHIN 2")
    found, _ = both(text, ticker([5, 4, 3, 4, 5, 6, 1, 2]))
    assert ids(found) == [{"STRT": 1, "DOWN": [2], "UP": [3]}, {"STRT": 5, "DOWN": [6], "UP": [7]}]


def test_empty_matches_and_reluctance() -> None:
    text = (
        "SELECT * FROM T MATCH_RECOGNIZE (MEASURES COUNT(*) AS n ONE ROW PER MATCH "
        "AFTER MATCH SKIP PAST LAST ROW PATTERN (A*? B?) DEFINE A AS x > 1, B AS x = 0) AS q"
    )
    found, _ = both(text, [Event("T", i, i, i, {"x": x}) for i, x in enumerate([2, 0, 3])])
    assert [(m["ids"], m["attrs"]["n"]) for m in found] == [({}, 0), ({"B": 1}, 1), ({}, 0)]


def test_skip_to_first_that_cannot_restart_raises_the_python_error() -> None:
    text = (
        "SELECT * FROM T MATCH_RECOGNIZE (MEASURES COUNT(*) AS n ONE ROW PER MATCH "
        "AFTER MATCH SKIP TO FIRST A PATTERN (A B) DEFINE B AS x > 0) AS q"
    )
    found, error = both(text, [Event("T", i, i, i, {"x": 1}) for i in range(3)])
    assert found == [] and error is not None and "would restart at the first row" in error


def test_missing_column_and_text_errors_match() -> None:
    text = "SELECT * FROM T MATCH_RECOGNIZE (PARTITION BY p MEASURES COUNT(*) AS n PATTERN (A B) DEFINE B AS x > PREV(x)) AS q"
    evs = [Event("T", i, i, i, {"p": 1, "x": x}) for i, x in enumerate([1, 2, 3, "z"])]
    found, error = both(text, evs)
    assert ids(found) == [{"A": 0, "B": 1}]
    assert error is not None and "cannot apply" in error
    _, error = both(text, [Event("T", 0, 0, 0, {"x": 1})])
    assert error is not None and "PARTITION BY" in error
    _, error = both(text, [Event("T", i, i, i, {"p": 1, "y": 1}) for i in range(2)])
    assert error is not None and "no column 'x'" in error


def test_long_partitions_trim_rows() -> None:
    """Thousands of rows over a few partitions, a window and PREV: rows are trimmed in batches."""
    rnd = random.Random(7)
    evs = [Event("Ticker", i // 3, i, i, {"symbol": rnd.choice("abc"), "price": rnd.randint(1, 9)}) for i in range(6000)]
    for within in ("", "WITHIN 40", "WITHIN 50 EVENTS"):
        text = TICKER.format(rows="ONE ROW PER MATCH", skip="TO LAST UP", within=within)
        found, error = both(text, evs)
        assert error is None and len(found) > 100


# ----------------------------------------------------------------------------- coverage


def test_what_is_covered_and_refused() -> None:
    """Every query runs on the row matcher (a DEFINE reading the rows mapped so far through its
    Python closure), beside patterns under every tie rule (under 'either' beside an end
    negation or ON TIMEOUT too)."""
    memory = "SELECT * FROM T MATCH_RECOGNIZE (MEASURES COUNT(*) AS n PATTERN (A B+) DEFINE B AS B.x > A.x) AS q"
    assert kernel.supports(compile_sql(memory)) == (True, "covered")
    mixed = compile_files_text("PATTERN ab: SEQ(A a, B b) WITHIN 3\n", memory)
    assert kernel.supports(mixed, "either") == (True, "covered")
    waiting = compile_files_text("PATTERN ab: SEQ(A a, B b, !(C c)) WITHIN 3\n", memory)
    assert kernel.supports(waiting, "either") == (True, "covered")
    timing = compile_files_text("PATTERN ab: SEQ(A a, B b) WITHIN 3 ON TIMEOUT RETURN L()\n", memory)
    assert kernel.supports(timing, "either") == (True, "covered")
    assert kernel.supports(compile_sql(memory), "either") == (True, "covered")


@pytest.mark.parametrize(
    ("within", "amount", "want"),
    [
        ("WITHIN 3", np.int64(3), [(0, 4), (11, 15)]),
        ("WITHIN 3", Fraction(9, 2), [(0, 4), (5, 10), (6, 11), (11, 15)]),
        ("WITHIN 3 EVENTS", Fraction(7, 2), [(0, 3), (12, 15)]),
        ("WITHIN 3 EVENTS", np.int64(5), [(0, 4), (5, 10), (6, 11), (11, 15)]),
        ("WITHIN INTERVAL '2' SECOND", Decimal("2.5"), [(0, 3), (12, 15)]),
    ],
)
def test_a_within_amount_of_any_number_type(within: str, amount: Any, want: list[tuple[int, int]]) -> None:
    """A WITHIN amount that is not a Python int or float (a net built by a program: numpy's
    int64, a Fraction, a Decimal over int timestamps) runs on the row matcher, compared as the
    Python object, as the Python runtime compares it (it was refused once): the same matches
    in the same order, the window cutting them where the Python engine does (the query
    without a window finds 4)."""
    net = compile_sql(TICKER.format(rows="ONE ROW PER MATCH", skip="PAST LAST ROW", within=within))
    net = replace(net, rows=(replace(net.rows[0], window_value=amount),))
    assert kernel.supports(net) == (True, "covered")
    events = ticker([5, 4, 6, 9, 5, 3, 8, 7, 2, 6, 9, 9, 8, 1, 4], symbols="SSSSSSTTSSTTTTT")
    found, error = outcome(RowKernelEngine(net), events)
    assert (found, error) == outcome(Engine(net), events)
    assert error is None and [(m["ids"]["STRT"], m["end"]) for m in found] == want


def compile_files_text(pattern: str, query: str) -> Net:
    return net_of([parse_text(pattern, "<p>"), parse_sql(query, "<q>")])


def test_shipped_query_byte_identical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", str(ROOT / "nets" / "stock_v_shape.sql"), "--events", str(ROOT / "examples" / "data" / "stocks.csv")]
    args += ["--type", "stock", "--time-field", "ts", "--id-field", "id"]
    assert main([*args, "-o", str(tmp_path / "k.jsonl")]) == 0
    assert "engine: kernel\n" in capsys.readouterr().err
    monkeypatch.setenv("PETRICEP_NO_KERNEL", "1")
    assert main([*args, "-o", str(tmp_path / "p.jsonl")]) == 0
    assert "engine: python" in capsys.readouterr().err
    k, p = (tmp_path / "k.jsonl").read_bytes(), (tmp_path / "p.jsonl").read_bytes()
    assert k == p and k.count(b"\n") == 6573


def test_several_queries_and_aliases_take_the_engine_loop() -> None:
    """Two queries (one twice under another name) over one stream: the engine's general loop
    (RowQueries) drives the kernel runtimes; the same matches in the same order, the same counts."""
    one = TICKER.format(rows="ONE ROW PER MATCH", skip="TO LAST UP", within="WITHIN 30")
    other = TICKER.format(rows="ALL ROWS PER MATCH", skip="TO NEXT ROW", within="")
    net = compile_sql(f"{one};\n{one.replace(') AS v', ') AS w')};\n{other.replace(') AS v', ') AS x')};")
    assert [r.name for r in net.rows] == ["v", "w", "x"]
    rnd = random.Random(3)
    evs = [Event("Ticker", i, i, i, {"symbol": rnd.choice("ab"), "price": rnd.randint(1, 5)}) for i in range(400)]
    want, got = Engine(net), RowKernelEngine(net)
    assert outcome(got, evs) == outcome(want, evs)
    assert got.report()["patterns"] == want.report()["patterns"]


@pytest.mark.parametrize(
    ("define", "values"),
    [
        ("x > 1", [True, 2, False, 3]),  # bool columns: Python's answer (True > 1 is False)
        ("x * 3 > PREV(x)", [2**60, 2**61, 1, 2**62]),  # ints past 2**53: exact in Python
        ("x * 1.0 > 1", [1, 10**400, 2]),  # an int too large for a float: the error names the query
        ("x / (x - 2) >= 0 OR x IS NULL", [2, None, 3.5, float("nan"), 1]),  # NULL, NaN, division by zero
        ("-x < PREV(-x, 2) AND ABS(x) <> 3", [1.5, -3, 3, 2.25, -7, 0.0]),
        ("NOT (x = 2) AND (x < 4 OR PREV(x) IS NULL)", [2, 3, 5, 1, None, 2]),
        ("x > 1", [1, "a", 3]),  # text against a number: the Python engine's error
    ],
)
def test_values_the_bytecode_hands_to_python(define: str, values: list[Any]) -> None:
    text = f"SELECT * FROM T MATCH_RECOGNIZE (MEASURES COUNT(*) AS n ALL ROWS PER MATCH PATTERN (A+ B?) DEFINE A AS {define}) AS q"
    both(text, [Event("T", i, i, i, {"x": x}) for i, x in enumerate(values)])


def test_skip_to_a_subset_and_classifier_measures() -> None:
    text = (
        "SELECT * FROM T MATCH_RECOGNIZE (MEASURES CLASSIFIER() AS c, MATCH_NUMBER() AS m ALL ROWS PER MATCH "
        "AFTER MATCH SKIP TO LAST S PATTERN (A B+ C) SUBSET S = (A, B) "
        "DEFINE B AS x > PREV(x), C AS x < PREV(x)) AS q"
    )
    found, error = both(text, [Event("T", i, i, i, {"x": x}) for i, x in enumerate([1, 2, 3, 1, 2, 0, 5])])
    assert error is None
    # the next search starts at row 2 (the last row of S), finds nothing there, then row 3 matches
    assert [(m["row"], m["attrs"]["c"], m["attrs"]["m"]) for m in found] == [
        (0, "A", 1), (1, "B", 1), (2, "B", 1), (3, "C", 1), (3, "A", 2), (4, "B", 2), (5, "C", 2)
    ]


@pytest.mark.parametrize("tie", ["arrival", "strict", "either"])
def test_every_tie_rule_and_patterns_added_later(tie: str) -> None:
    """The tie rules (a query's rows do not depend on them) and Engine.extend: patterns added
    to a running RowKernelEngine fire beside its query, as on the Python engine."""
    rnd = random.Random(11)
    evs = [Event("Ticker", i // 2, i, i, {"symbol": rnd.choice("ab"), "price": rnd.randint(1, 6)}) for i in range(600)]
    text = TICKER.format(rows="ONE ROW PER MATCH", skip="TO LAST UP", within="WITHIN 20")
    net = compile_sql(text)
    want, got = Engine(net, tie=tie), RowKernelEngine(net, tie=tie)
    assert outcome(got, evs) == outcome(want, evs)
    more = extend_net(net, [parse_text("PATTERN up: SEQ(Ticker a, Ticker b) WHERE b.price > a.price + 4 WITHIN 2\n", "<p>").patterns[0]])
    want, got = Engine(net, tie=tie), RowKernelEngine(net, tie=tie)
    out_want = [m.to_dict() for e in evs[:300] for m in want.push(e)]
    out_got = [m.to_dict() for e in evs[:300] for m in got.push(e)]
    want.extend(more)
    got.extend(more)
    rest = [Event(e.type, e.ts, e.pos, e.id, e.attrs) for e in evs[300:]]
    out_want += [m.to_dict() for m in want.run(rest)]
    out_got += [m.to_dict() for m in got.run([Event(e.type, e.ts, e.pos, e.id, e.attrs) for e in evs[300:]])]
    assert out_got == out_want and any(m["pattern"] == "up" for m in out_got)
