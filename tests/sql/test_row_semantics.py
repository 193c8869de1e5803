"""MATCH_RECOGNIZE semantics by hand: preference order, quantifiers, PERMUTE, skip modes,
contiguity, windows, SUBSET, navigation, output shapes (exact ids and values)."""

from __future__ import annotations

from typing import Any

import pytest

from petricep.errors import EvaluationError
from tests.sql.rowrun import run_sql


def xs(*values: int) -> list[dict[str, Any]]:
    return [{"x": v} for v in values]


def q(pattern: str, define: str = "", measures: str = "", tail: str = "") -> str:
    return (
        "SELECT * FROM T MATCH_RECOGNIZE ("
        + (f"MEASURES {measures} " if measures else "")
        + f"{tail} PATTERN ({pattern})"
        + (f" DEFINE {define}" if define else "")
        + ") AS m"
    )


def ids(text: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["ids"] for m in run_sql(text, rows, "T")]


def test_alternation_prefers_the_left_branch() -> None:
    # A is written twice, so its ids are a list (whatever one match maps)
    assert ids(q("(A | A B)"), xs(1, 2)) == [{"A": [0]}, {"A": [1]}]
    assert ids(q("(A B | A)"), xs(1, 2)) == [{"A": [0], "B": 1}]


def test_greedy_and_reluctant_quantifiers() -> None:
    rows = xs(1, 1, 1, 5)
    assert ids(q("A+ B", "A AS A.x = 1"), rows) == [{"A": [0, 1, 2], "B": 3}]
    # reluctant: B takes the first row it can, then the search goes on after the match
    assert ids(q("A+? B", "A AS A.x = 1"), rows) == [{"A": [0], "B": 1}, {"A": [2], "B": 3}]
    assert ids(q("A?? B", "A AS A.x = 1"), rows) == [{"B": 0}, {"B": 1}, {"B": 2}, {"B": 3}]


def test_bounded_quantifiers() -> None:
    rows = xs(1, 1, 1, 1, 1)
    assert ids(q("A{2}"), rows) == [{"A": [0, 1]}, {"A": [2, 3]}]
    assert ids(q("A{2,}"), rows) == [{"A": [0, 1, 2, 3, 4]}]
    assert ids(q("A{2,3}"), rows) == [{"A": [0, 1, 2]}, {"A": [3, 4]}]
    assert ids(q("A{2,3}?"), rows) == [{"A": [0, 1]}, {"A": [2, 3]}]
    assert ids(q("A{,2} B"), rows) == [{"A": [0, 1], "B": 2}, {"A": [3], "B": 4}]


def test_quantified_group_and_alternation_inside() -> None:
    rows = xs(1, 2, 1, 2, 3)
    text = q("(A B)+ C", "A AS A.x = 1, B AS B.x = 2, C AS C.x = 3")
    assert ids(text, rows) == [{"A": [0, 2], "B": [1, 3], "C": 4}]
    assert ids(q("(A | B)+ C", "A AS A.x = 1, B AS B.x = 2, C AS C.x = 3"), rows) == [
        {"A": [0, 2], "B": [1, 3], "C": 4}
    ]


def test_permute_tries_orders_lexicographically() -> None:
    rows = xs(3, 1, 2)
    defs = "A AS A.x = 1, B AS B.x = 2, C AS C.x = 3"
    assert ids(q("PERMUTE(A, B, C)", defs), rows) == [{"C": 0, "A": 1, "B": 2}]
    # every row qualifies for both: the first order listed wins
    assert ids(q("PERMUTE(B, A)"), xs(0, 0)) == [{"B": 0, "A": 1}]


def test_rows_are_contiguous_in_the_partition() -> None:
    # SASE's skip-till-any-match would pair A with the later B; SQL needs the next row
    rows = [{"k": 1, "x": 1}, {"k": 1, "x": 9}, {"k": 2, "x": 2}, {"k": 1, "x": 2}]
    text = "T MATCH_RECOGNIZE (PARTITION BY k PATTERN (A B) DEFINE A AS A.x = 1, B AS B.x = 2)"
    assert ids(text, rows) == []
    rows = [{"k": 1, "x": 1}, {"k": 2, "x": 9}, {"k": 1, "x": 2}]
    assert ids(text, rows) == [{"A": 0, "B": 2}]  # another partition's row is no interruption


def test_skip_modes() -> None:
    rows = xs(1, 1, 1, 2)
    defs = "A AS A.x = 1, B AS B.x = 2"
    assert ids(q("A+ B", defs, tail="AFTER MATCH SKIP PAST LAST ROW"), rows) == [{"A": [0, 1, 2], "B": 3}]
    assert ids(q("A+ B", defs, tail="AFTER MATCH SKIP TO NEXT ROW"), rows) == [
        {"A": [0, 1, 2], "B": 3},
        {"A": [1, 2], "B": 3},
        {"A": [2], "B": 3},
    ]
    rows = xs(1, 2, 1, 2, 1)
    assert ids(q("A B A", defs, tail="AFTER MATCH SKIP TO LAST A"), rows) == [{"A": [0, 2], "B": 1}, {"A": [2, 4], "B": 3}]
    assert ids(q("A B+", "B AS B.x = 2", tail="AFTER MATCH SKIP TO FIRST B"), xs(2, 2, 2)) == [
        {"A": 0, "B": [1, 2]},
        {"A": 1, "B": [2]},
    ]


def test_skip_to_the_first_row_is_an_error() -> None:
    with pytest.raises(EvaluationError) as info:
        run_sql(q("A B?", tail="AFTER MATCH SKIP TO LAST A"), xs(1, 2), "T")
    assert str(info.value) == (
        "query 'm': AFTER MATCH SKIP TO LAST A would restart at the first row of the match starting at row 0 "
        "(an endless loop)"
    )
    with pytest.raises(EvaluationError) as info:
        run_sql(q("A | B", "A AS A.x = 1", tail="AFTER MATCH SKIP TO FIRST A"), xs(5), "T")
    assert str(info.value) == (
        "query 'm': AFTER MATCH SKIP TO FIRST A: no row of the match starting at row 0 is mapped to A"
    )


def test_a_history_dependent_define_keeps_every_partial_match() -> None:
    # B's branch is less preferred but only it lets D hold: both partial matches must live
    text = q("(A | B) C D", "D AS D.x + B.x > 3", "CLASSIFIER() AS c")
    assert run_sql(text, xs(1, 1, 3), "T") == [
        {"pattern": "m", "ids": {"B": 0, "C": 1, "D": 2}, "start": 1, "end": 3, "attrs": {"c": "D"}}
    ]


def test_window_limits_the_match_span() -> None:
    rows = xs(1, 1, 1, 1)  # ts 1..4
    assert ids(q("A+", tail="") + "", rows) == [{"A": [0, 1, 2, 3]}]
    text = "T MATCH_RECOGNIZE (PATTERN (A+) WITHIN 1) m"
    assert ids(text, rows) == [{"A": [0, 1]}, {"A": [2, 3]}]
    text = "T MATCH_RECOGNIZE (PATTERN (A+) WITHIN INTERVAL '2' SECOND) m"
    assert ids(text, rows) == [{"A": [0, 1, 2]}, {"A": [3]}]


def test_subset_and_navigation_measures() -> None:
    text = q(
        "A B C",
        "B AS B.x > PREV(x), C AS C.x > PREV(C.x, 2)",
        "LAST(U.x) AS last_u, FIRST(U.x, 1) AS second_u, NEXT(A.x) AS after_a, NEXT(C.x) AS after_c, "
        "PREV(A.x) AS before_a, SUM(U.x) AS s, AVG(x) AS mean, MIN(x) AS lo, MAX(x) AS hi, ABS(A.x - C.x) AS d",
        tail="",
    ).replace("PATTERN", "PATTERN").replace(") AS m", " ) AS m")
    text = text.replace("DEFINE", "SUBSET U = (A, B) DEFINE")
    (m,) = run_sql(text, xs(7, 1, 4, 9), "T")
    assert m["ids"] == {"A": 1, "B": 2, "C": 3}
    assert m["attrs"] == {
        "last_u": 4,
        "second_u": 4,
        "after_a": 4,
        "after_c": None,  # NEXT stays inside the match
        "before_a": 7,  # PREV reads the partition's row before the match
        "s": 5,
        "mean": 14 / 3,
        "lo": 1,
        "hi": 9,
        "d": 8,
    }


def test_running_and_final_in_all_rows_per_match() -> None:
    text = q("A+", "", "COUNT(*) AS running_n, FINAL COUNT(*) AS n, LAST(A.x) AS last_x, FINAL LAST(A.x) AS final_x",
             tail="ALL ROWS PER MATCH")
    out = run_sql(text, xs(5, 6), "T")
    assert out == [
        {"pattern": "m", "ids": {"A": [0, 1]}, "start": 1, "end": 2, "row": 0,
         "attrs": {"running_n": 1, "n": 2, "last_x": 5, "final_x": 6}},
        {"pattern": "m", "ids": {"A": [0, 1]}, "start": 1, "end": 2, "row": 1,
         "attrs": {"running_n": 2, "n": 2, "last_x": 6, "final_x": 6}},
    ]


def test_null_logic_and_select_list() -> None:
    text = (
        "SELECT k, total FROM T MATCH_RECOGNIZE (PARTITION BY k MEASURES SUM(A.x) AS total, COUNT(*) AS n "
        "PATTERN (A+) DEFINE A AS PREV(A.x) IS NULL OR A.x > PREV(A.x)) AS m"
    )
    rows = [{"k": "a", "x": 1}, {"k": "a", "x": 2}, {"k": "a", "x": 1}]
    assert [(m["ids"], m["attrs"]) for m in run_sql(text, rows, "T")] == [
        ({"A": [0, 1]}, {"k": "a", "total": 3}),
    ]


def test_table_name_selects_the_event_type() -> None:
    from petricep.api import compile_sql
    from petricep.events import Event
    from petricep.runtime.engine import Engine

    net = compile_sql("Trade MATCH_RECOGNIZE (PATTERN (A B)) t; MATCH_RECOGNIZE (PATTERN (A B)) anything")
    evs = [Event("Trade", 1, 0), Event("Quote", 2, 1), Event("Trade", 3, 2)]
    got = [(m.pattern, m.ids) for m in Engine(net).run(evs)]
    assert got == [("anything", {"A": 0, "B": 1}), ("t", {"A": 0, "B": 2})]


def test_equal_queries_share_one_runtime() -> None:
    from petricep.api import compile_sql
    from petricep.events import Event
    from petricep.runtime.engine import Engine

    net = compile_sql("T MATCH_RECOGNIZE (PATTERN (A B)) one; T MATCH_RECOGNIZE (PATTERN (A B)) two")
    engine = Engine(net)
    assert len(engine.row_runtimes) == 1
    got = [(m.pattern, m.ids) for m in engine.run([Event("T", 1, 0), Event("T", 2, 1)])]
    assert got == [("one", {"A": 0, "B": 1}), ("two", {"A": 0, "B": 1})]
    assert engine.stats.matches == {"one": 1, "two": 1}


def test_prev_of_a_logical_offset_reads_before_the_match() -> None:
    text = q("A{3} B", "A AS A.x >= 11", "PREV(LAST(A.x, 1), 2) AS p, PREV(FIRST(A.x), 2) AS none, NEXT(FIRST(A.x), 3) AS b")
    assert [m["attrs"] for m in run_sql(text, xs(10, 11, 12, 13, 14), "T")] == [{"p": 10, "none": None, "b": 14}]


def test_skip_to_a_subset_and_running_aggregates_in_define() -> None:
    # SUBSET U = (A, B): SKIP TO LAST U restarts at the last row mapped to A or B
    text = (
        "T MATCH_RECOGNIZE (MEASURES SUM(U.x) AS su AFTER MATCH SKIP TO LAST U "
        "PATTERN (A B+ C) SUBSET U = (A, B) DEFINE B AS SUM(B.x) <= 5, C AS C.x > 5) m"
    )
    out = run_sql(text, xs(1, 2, 3, 9, 4, 9), "T")
    # the second search from row 2 (A = 3) fails at once: B's running SUM would be 9
    assert [(m["ids"], m["attrs"]) for m in out] == [
        ({"A": 0, "B": [1, 2], "C": 3}, {"su": 6}),
        ({"A": 3, "B": [4], "C": 5}, {"su": 13}),
    ]


def test_within_decides_a_silent_partition_when_stream_time_passes() -> None:
    from petricep.api import compile_sql
    from petricep.events import Event
    from petricep.runtime.engine import Engine

    engine = Engine(compile_sql("T MATCH_RECOGNIZE (PARTITION BY k PATTERN (A+) WITHIN 5) m"))
    assert engine.push(Event("T", 1, 0, None, {"k": 1})) == []
    assert engine.push(Event("T", 2, 1, None, {"k": 1})) == []  # A+ may still grow
    assert engine.push(Event("T", 6, 2, None, {"k": 2})) == []  # 6 - 1 <= 5: row 0's search is open
    (m,) = engine.push(Event("Other", 7, 3))  # any event: stream time 7 closes it
    assert (m.pattern, m.ids) == ("m", {"A": [0, 1]})
    assert [x.ids for x in engine.flush()] == [{"A": [2]}]
    count = Engine(compile_sql("T MATCH_RECOGNIZE (PATTERN (A+) WITHIN 2 EVENTS) m"))
    assert count.push(Event("T", 1, 0)) == []
    assert count.push(Event("U", 1, 1)) == []  # position 1: row 0's window (positions 0, 1) is open
    assert [x.ids for x in count.push(Event("U", 1, 2))] == [{"A": [0]}]


def test_empty_matches() -> None:
    rows = xs(1, 1, 2, 1)  # ts 1..4
    text = q("A*", "A AS A.x = 1", "COUNT(*) AS n, MATCH_NUMBER() AS mn, CLASSIFIER() AS c, FIRST(A.x) AS f")
    assert run_sql(text, rows, "T") == [
        {"pattern": "m", "ids": {"A": [0, 1]}, "start": 1, "end": 2, "attrs": {"n": 2, "mn": 1, "c": "A", "f": 1}},
        # row 2 fits no A: the preferred match from it maps no row (it sits at that row)
        {"pattern": "m", "ids": {}, "start": 3, "end": 3, "attrs": {"n": 0, "mn": 2, "c": None, "f": None}},
        {"pattern": "m", "ids": {"A": [3]}, "start": 4, "end": 4, "attrs": {"n": 1, "mn": 3, "c": "A", "f": 1}},
    ]
    # ALL ROWS PER MATCH omits empty matches (they still count in MATCH_NUMBER)
    all_rows = q("A*", "A AS A.x = 1", "MATCH_NUMBER() AS mn", tail="ALL ROWS PER MATCH")
    assert [(m["row"], m["attrs"]["mn"]) for m in run_sql(all_rows, rows, "T")] == [(0, 1), (1, 1), (3, 3)]
    # reluctant: no row at all is preferred, at every row
    assert ids(q("A*?", "A AS A.x = 1"), rows) == [{}, {}, {}, {}]
    assert ids(q("A? B?", "A AS A.x = 1, B AS B.x = 2"), rows) == [{"A": 0}, {"A": 1, "B": 2}, {"A": 3}]
