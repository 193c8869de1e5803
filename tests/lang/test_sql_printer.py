"""SQL printed back from the AST (check, diagrams) parses to the same AST."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.lang import sql_ast as S
from petricep.lang.sql import parse_sql
from tests.budget import examples
from tests.sql.test_row_reference import VARS, _template, patterns, sql_of


def _query(pattern: str, define: str = "", measures: str = "") -> S.MatchRecognize:
    text = "T MATCH_RECOGNIZE (" + (f"MEASURES {measures} " if measures else "") + f"PATTERN ({pattern})"
    (q,) = parse_sql(text + (f" DEFINE {define}" if define else "") + ")", "p.sql").queries
    return q


@settings(max_examples=examples(150), deadline=None)
@given(pattern=patterns)
def test_pattern_round_trip(pattern: tuple[Any, ...]) -> None:
    q = _query(sql_of(pattern))
    assert _query(S.pattern_sql(q.pattern)).pattern == q.pattern


@settings(max_examples=examples(100), deadline=None)
@given(kind=st.integers(0, 8), k=st.integers(0, 4), other=st.sampled_from(VARS))
def test_define_round_trip(kind: int, k: int, other: str) -> None:
    sql, _ = _template(kind, "A", k, other)
    q = _query("A B C", f"A AS {sql}")
    expr = q.defines[0].expr
    assert _query("A B C", f"A AS {S.expr_sql(expr)}").defines[0].expr == expr


def test_measure_printing() -> None:
    measures = (
        "FINAL LAST(A.x, 2) AS a, -(A.x + 1) * 2 AS b, NOT (A.x > 1 OR A.x IS NULL) AS c, "
        "COUNT(B.*) AS d, PREV(LAST(A.x), 3) AS e, 'it''s' AS f, NULL AS g, x % 2 - 1 AS h"
    )
    q = _query("A B", measures=measures)
    printed = ", ".join(f"{S.expr_sql(m.expr)} AS {m.name}" for m in q.measures)
    assert printed == (
        "FINAL LAST(A.x, 2) AS a, -(A.x + 1) * 2 AS b, NOT (A.x > 1 OR A.x IS NULL) AS c, COUNT(B.*) AS d, "
        "PREV(LAST(A.x), 3) AS e, 'it''s' AS f, NULL AS g, x % 2 - 1 AS h"
    )
    assert _query("A B", measures=printed).measures == q.measures
