"""Issue 41: ``SELECT *`` returns the PARTITION BY columns, then the MEASURES, as the SQL
standard (Oracle, Flink, Trino) does for ONE ROW PER MATCH — on the Python engine and the
kernel's row matcher alike, in JSON Lines and in a match table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from petricep import kernel
from petricep.api import compile_files, compile_sql
from petricep.errors import PatternSemanticError
from petricep.kernel.rowengine import RowKernelEngine
from petricep.output.table import layout_of, to_table
from petricep.runtime.engine import Engine

from .rowrun import events

QUERY = """
SELECT {select} FROM Ticker MATCH_RECOGNIZE (
    PARTITION BY {partition}
    MEASURES FIRST(A.price) AS first_price, COUNT(A.*) AS n
    {rows}
    PATTERN ({pattern})
    DEFINE A AS A.price > 10
) MR
"""

ROWS = [
    {"symbol": "X", "venue": "N", "price": 11},
    {"symbol": "Y", "venue": "L", "price": 12},
    {"symbol": "X", "venue": "N", "price": 13},
    {"symbol": "X", "venue": "N", "price": 5},
    {"symbol": "Y", "venue": "L", "price": 3},
]


def query(select: str = "*", partition: str = "symbol", rows: str = "ONE ROW PER MATCH", pattern: str = "A+") -> str:
    return QUERY.format(select=select, partition=partition, rows=rows, pattern=pattern)


def both(text: str) -> list[dict[str, Any]]:
    """The matches of the Python engine, checked equal to the kernel's (order included)."""
    net = compile_sql(text)
    want = [m.to_dict() for m in Engine(net).run(events(ROWS))]
    if kernel.available():
        got = [m.to_dict() for m in RowKernelEngine(net).run(events(ROWS))]
        assert [list(m["attrs"].items()) for m in got] == [list(m["attrs"].items()) for m in want]
        assert got == want
    return want


def test_one_row_per_match_partition_columns_then_measures() -> None:
    found = both(query())
    assert [list(m["attrs"].items()) for m in found] == [
        [("symbol", "X"), ("first_price", 11), ("n", 2)],
        [("symbol", "Y"), ("first_price", 12), ("n", 1)],
    ]
    # every PARTITION BY column, in its order
    found = both(query(partition="venue, symbol"))
    assert [list(m["attrs"].items()) for m in found] == [
        [("venue", "N"), ("symbol", "X"), ("first_price", 11), ("n", 2)],
        [("venue", "L"), ("symbol", "Y"), ("first_price", 12), ("n", 1)],
    ]


def test_all_rows_per_match_and_empty_matches_carry_the_partition() -> None:
    found = both(query(rows="ALL ROWS PER MATCH"))
    assert [(m["row"], list(m["attrs"].items())) for m in found] == [
        (0, [("symbol", "X"), ("first_price", 11), ("n", 1)]),
        (2, [("symbol", "X"), ("first_price", 11), ("n", 2)]),
        (1, [("symbol", "Y"), ("first_price", 12), ("n", 1)]),
    ]
    # an empty match (A*, no row taken): the partition of the row its search started at
    found = both(query(pattern="A*"))
    assert [(m["ids"], list(m["attrs"].items())) for m in found] == [
        ({"A": [0, 2]}, [("symbol", "X"), ("first_price", 11), ("n", 2)]),
        ({}, [("symbol", "X"), ("first_price", None), ("n", 0)]),  # at row 3 (price 5)
        ({"A": [1]}, [("symbol", "Y"), ("first_price", 12), ("n", 1)]),
        ({}, [("symbol", "Y"), ("first_price", None), ("n", 0)]),  # at row 4 (price 3)
    ]


def test_a_select_list_and_no_partition_are_as_before() -> None:
    found = both(query(select="n, symbol"))
    assert [list(m["attrs"].items()) for m in found] == [[("n", 2), ("symbol", "X")], [("n", 1), ("symbol", "Y")]]
    # a PARTITION BY column SELECTed on an empty match: its start row's
    found = both(query(select="n, symbol", pattern="A*"))
    assert [list(m["attrs"].items()) for m in found][1::2] == [[("n", 0), ("symbol", "X")], [("n", 0), ("symbol", "Y")]]
    text = query().replace("PARTITION BY symbol", "")
    assert [list(m["attrs"]) for m in both(text)] == [["first_price", "n"]]


def test_the_match_table_has_the_partition_columns() -> None:
    layout = layout_of(compile_sql(query(partition="venue, symbol")))
    assert [f for _, _, f in layout.fields] == ["venue", "symbol", "first_price", "n"]


def test_queries_returning_one_partition_column_share_its_column(tmp_path: Path) -> None:
    two = query().replace(") MR", ") q1") + ";\n" + query(pattern="A A").replace(") MR", ") q2")
    net = compile_sql(two)
    layout = layout_of(net)
    assert layout.columns == ("pattern", "A", "start", "end", "symbol", "q1.first_price", "q1.n", "q2.first_price", "q2.n")
    table = to_table(list(Engine(net).run(events(ROWS))), net)
    assert table.column_names == list(layout.columns)
    assert [(r["pattern"], r["symbol"], r["q1.n"], r["q2.n"]) for r in table.to_pylist()] == [
        ("q2", "X", None, 2), ("q1", "X", 2, None), ("q1", "Y", 1, None),
    ]  # fmt: skip
    # a pattern's RETURN field of that name too: every one is pattern.field again
    (tmp_path / "p.pcep").write_text("PATTERN p: SEQ(Ticker a) RETURN S(symbol = a.symbol)\n")
    (tmp_path / "q.sql").write_text(two)
    layout = layout_of(compile_files([tmp_path / "p.pcep", tmp_path / "q.sql"]))
    assert [c for c, _, _ in layout.fields] == [
        "p.symbol", "q1.symbol", "q1.first_price", "q1.n", "q2.symbol", "q2.first_price", "q2.n",
    ]  # fmt: skip


def test_a_measure_named_like_a_partition_column_is_an_error() -> None:
    text = "SELECT * FROM T MATCH_RECOGNIZE (PARTITION BY symbol MEASURES A.x AS symbol PATTERN (A))"
    with pytest.raises(PatternSemanticError) as err:
        compile_sql(text)
    assert str(err.value) == (
        "<query>:1:70: error: MEASURES ... AS symbol: SELECT * returns the PARTITION BY column 'symbol' too; "
        "give the measure another name\n"
        "    SELECT * FROM T MATCH_RECOGNIZE (PARTITION BY symbol MEASURES A.x AS symbol PATTERN (A))\n"
        "                                                                         ^"
    )
    # with a SELECT list the names are the user's choice
    assert compile_sql(text.replace("SELECT *", "SELECT symbol")).rows[0].select == ("symbol",)
