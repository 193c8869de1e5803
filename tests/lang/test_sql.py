"""The SQL front end: MATCH_RECOGNIZE parses to the frozen AST; bad SQL gives exact errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from petricep.errors import ConfigError, PatternSemanticError, PatternSyntaxError
from petricep.lang import ast as A
from petricep.lang import sql_ast as S
from petricep.lang.parser import parse_file
from petricep.lang.sql import parse_sql

QUERY = """SELECT *
FROM Ticker MATCH_RECOGNIZE (
  PARTITION BY symbol
  ORDER BY tstamp
  MEASURES FIRST(A.price) AS first_price, FINAL COUNT(*) AS n
  ALL ROWS PER MATCH
  AFTER MATCH SKIP TO FIRST B
  PATTERN (A+? (B | C){2,3} PERMUTE(D, E)?)
  SUBSET BC = (B, C)
  DEFINE A AS A.price > PREV(A.price, 2), B AS LAST(BC.price, 1) IS NULL
  WITHIN INTERVAL '10' SECOND
) AS up;"""


def test_statement_to_ast() -> None:
    (q,) = parse_sql(QUERY, "q.sql").queries
    assert (q.name, q.table, q.partition, q.order, q.all_rows) == ("up", "Ticker", ("symbol",), ("tstamp",), True)
    assert q.skip == S.Skip(S.SKIP_FIRST, "B")
    assert q.pattern == S.RSeq(
        (
            S.RQuant(S.RVar("A"), 1, None, greedy=False),
            S.RQuant(S.RAlt((S.RVar("B"), S.RVar("C"))), 2, 3),
            S.RQuant(S.RPermute((S.RVar("D"), S.RVar("E"))), 0, 1),
        )
    )
    assert q.subsets == (S.Subset("BC", ("B", "C")),)
    assert q.measures == (
        S.Measure("first_price", S.Nav("FIRST", S.Col("A", "price"), 0)),
        S.Measure("n", S.Final(S.Call("COUNT", (), star=True))),
    )
    assert q.defines == (
        S.Define("A", S.Op(">", (S.Col("A", "price"), S.Nav("PREV", S.Col("A", "price"), 2)))),
        S.Define("B", S.Op("is null", (S.Nav("LAST", S.Col("BC", "price"), 1),))),
    )
    assert q.window == A.Window(A.WIN_DURATION, 10, "second")


def test_several_statements_and_names(tmp_path: Path) -> None:
    text = "MATCH_RECOGNIZE (PATTERN (A)) ; T MATCH_RECOGNIZE (PATTERN (A B)) named;;"
    f = tmp_path / "two.sql"
    f.write_text(text)
    q1, q2 = parse_file(f).queries
    assert (q1.name, q1.table, q2.name, q2.table) == ("query_1", None, "named", "T")
    (only,) = parse_sql("SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A))", "x.sql", default_name="x").queries
    assert only.name == "x"


def test_lang_switch_reads_any_extension(tmp_path: Path) -> None:
    f = tmp_path / "q.txt"
    f.write_text("SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A B*) DEFINE B AS B.x > 1)")
    assert parse_file(f, "sql").queries[0].name == "q"
    with pytest.raises(ConfigError, match="unknown pattern language 'cobol'"):
        parse_file(f, "cobol")


def _error(text: str) -> str:
    with pytest.raises((PatternSyntaxError, PatternSemanticError)) as info:
        parse_sql(text, "bad.sql")
    return str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "SELECT * FROM T MATCH_RECOGNIZE (\n  PATTERN (A B\n  DEFINE A AS A.x > 1\n)",
            "bad.sql:3:16: error: unexpected '.'; expected '(', ')', '*', '+', ',', '?', '{', '|'\n"
            "      DEFINE A AS A.x > 1\n"
            "                   ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (\n  PATTERN (A B)\n  DEFINE A AS A.x >\n)",
            "bad.sql:4:1: error: unexpected ')'; expected '(', '-', NULL, PREV/NEXT/FIRST/LAST, RUNNING/FINAL, "
            "a name, a number, a string\n"
            "    )\n"
            "    ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A B) DEFINE A AS Z.x > 1)",
            "bad.sql:1:60: error: unknown pattern variable 'Z'\n"
            "    SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A B) DEFINE A AS Z.x > 1)\n"
            "                                                               ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A B)\n  DEFINE C AS C.x > 1)",
            "bad.sql:2:10: error: DEFINE names 'C', which PATTERN does not use\n"
            "      DEFINE C AS C.x > 1)\n"
            "             ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A B) DEFINE A AS A.x < NEXT(A.x))",
            "bad.sql:1:66: error: NEXT() is not supported in DEFINE (a row is classified when it arrives)\n"
            "    SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A B) DEFINE A AS A.x < NEXT(A.x))\n"
            "                                                                     ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A (B?)+))",
            "bad.sql:1:45: error: a repeated group that can match no rows is not supported\n"
            "    SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A (B?)+))\n"
            "                                                ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A{3,1}))",
            "bad.sql:1:45: error: quantifier {3,1}: the maximum is below the minimum\n"
            "    SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A{3,1}))\n"
            "                                                ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (MEASURES MEDIAN(A.x) AS m PATTERN (A))",
            "bad.sql:1:43: error: unknown function 'MEDIAN' (known: PREV, NEXT, FIRST, LAST, COUNT, SUM, AVG, MIN, MAX, ABS, CLASSIFIER, MATCH_NUMBER)\n"
            "    SELECT * FROM T MATCH_RECOGNIZE (MEASURES MEDIAN(A.x) AS m PATTERN (A))\n"
            "                                              ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A B) DEFINE B AS FINAL LAST(A.x) > 1)",
            "bad.sql:1:60: error: FINAL is only allowed in MEASURES (DEFINE sees the match so far)\n"
            "    SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A B) DEFINE B AS FINAL LAST(A.x) > 1)\n"
            "                                                               ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (ORDER BY ts DESC PATTERN (A))",
            "bad.sql:1:43: error: ORDER BY ts DESC: rows are matched in stream order (ascending time)\n"
            "    SELECT * FROM T MATCH_RECOGNIZE (ORDER BY ts DESC PATTERN (A))\n"
            "                                              ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (AFTER MATCH SKIP TO LAST Q PATTERN (A))",
            "bad.sql:1:59: error: AFTER MATCH SKIP names 'Q', which is not a pattern variable\n"
            "    SELECT * FROM T MATCH_RECOGNIZE (AFTER MATCH SKIP TO LAST Q PATTERN (A))\n"
            "                                                              ^",
        ),
        (
            "T MATCH_RECOGNIZE (PATTERN (A)) q;\nT MATCH_RECOGNIZE (PATTERN (B)) q",
            "bad.sql:2:33: error: two queries named 'q' (give each an alias)\n"
            "    T MATCH_RECOGNIZE (PATTERN (B)) q\n"
            "                                    ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A) WITHIN INTERVAL '5' FORTNIGHT)",
            "bad.sql:1:66: error: unknown time unit 'FORTNIGHT' (use SECOND, MINUTE, HOUR, DAY)\n"
            "    SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A) WITHIN INTERVAL '5' FORTNIGHT)\n"
            "                                                                     ^",
        ),
        (
            "SELECT nope FROM T MATCH_RECOGNIZE (MEASURES A.x AS ax PATTERN (A))",
            "bad.sql:1:8: error: SELECT nope: not a measure or a PARTITION BY column\n"
            "    SELECT nope FROM T MATCH_RECOGNIZE (MEASURES A.x AS ax PATTERN (A))\n"
            "           ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (MEASURES SUM(PREV(A.x)) AS s PATTERN (A))",
            "bad.sql:1:47: error: PREV() inside SUM() is not allowed\n"
            "    SELECT * FROM T MATCH_RECOGNIZE (MEASURES SUM(PREV(A.x)) AS s PATTERN (A))\n"
            "                                                  ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (MEASURES PREV(LAST(A.x, 1) + 1) AS s PATTERN (A))",
            "bad.sql:1:48: error: LAST() inside PREV() is not allowed\n"
            "    SELECT * FROM T MATCH_RECOGNIZE (MEASURES PREV(LAST(A.x, 1) + 1) AS s PATTERN (A))\n"
            "                                                   ^",
        ),
        (
            "SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A ^ B))",
            "bad.sql:1:45: error: unexpected character '^'\n"
            "    SELECT * FROM T MATCH_RECOGNIZE (PATTERN (A ^ B))\n"
            "                                                ^",
        ),
    ],
)
def test_exact_errors(text: str, message: str) -> None:
    assert _error(text) == message
