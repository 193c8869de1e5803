"""The MATCH_RECOGNIZE examples of the Oracle and Flink documentation, with their
documented results (data written inline, as the documentation gives it)."""

from __future__ import annotations

from tests.sql.rowrun import run_sql, ticker

# Oracle Database Data Warehousing Guide, "SQL for Pattern Matching", Example 20-1 data
ACME = [12, 17, 19, 21, 25, 12, 15, 20, 24, 25, 19, 15, 25, 25, 14, 12, 14, 24, 23, 22]

V_SHAPE = """
SELECT *
FROM Ticker MATCH_RECOGNIZE (
     PARTITION BY symbol
     ORDER BY tstamp
     MEASURES  STRT.tstamp AS start_tstamp,
               LAST(DOWN.tstamp) AS bottom_tstamp,
               LAST(UP.tstamp) AS end_tstamp
     ONE ROW PER MATCH
     AFTER MATCH SKIP TO LAST UP
     PATTERN (STRT DOWN+ UP+)
     DEFINE
        DOWN AS DOWN.price < PREV(DOWN.price),
        UP AS UP.price > PREV(UP.price)
     ) MR
ORDER BY MR.symbol, MR.start_tstamp;
"""


def oracle(measures: str, pattern: str = "STRT DOWN+ UP+") -> str:
    """Oracle's Examples 20-2 to 20-4: Example 20-1's frame with other MEASURES, ALL ROWS
    PER MATCH and another pattern (the documentation's text otherwise)."""
    return f"""
    SELECT *
    FROM Ticker MATCH_RECOGNIZE (
      PARTITION BY symbol
      ORDER BY tstamp
      MEASURES {measures}
      ALL ROWS PER MATCH
      AFTER MATCH SKIP TO LAST UP
      PATTERN ({pattern})
      DEFINE
        DOWN AS DOWN.price < PREV(DOWN.price),
        UP AS UP.price > PREV(UP.price)
      ) MR
    ORDER BY MR.symbol, MR.match_num, MR.tstamp;
    """


def test_oracle_v_shape_one_row_per_match() -> None:
    out = run_sql(V_SHAPE, ticker("ACME", ACME))
    assert [m["attrs"] for m in out] == [
        {"symbol": "ACME", "start_tstamp": "05-Apr-11", "bottom_tstamp": "06-Apr-11", "end_tstamp": "10-Apr-11"},
        {"symbol": "ACME", "start_tstamp": "10-Apr-11", "bottom_tstamp": "12-Apr-11", "end_tstamp": "13-Apr-11"},
        {"symbol": "ACME", "start_tstamp": "14-Apr-11", "bottom_tstamp": "16-Apr-11", "end_tstamp": "18-Apr-11"},
    ]
    # SELECT *: Oracle's columns, in its order (SYMBOL, then the MEASURES)
    assert [list(m["attrs"]) for m in out] == [["symbol", "start_tstamp", "bottom_tstamp", "end_tstamp"]] * 3
    # ids are row positions (0-based): 10-Apr (id 9) ends match 1 and starts match 2
    assert [m["ids"] for m in out] == [
        {"STRT": 4, "DOWN": [5], "UP": [6, 7, 8, 9]},
        {"STRT": 9, "DOWN": [10, 11], "UP": [12]},
        {"STRT": 13, "DOWN": [14, 15], "UP": [16, 17]},
    ]
    assert [(m["pattern"], m["start"], m["end"]) for m in out] == [("MR", 5, 10), ("MR", 10, 13), ("MR", 14, 18)]


def test_oracle_v_shape_partitions_do_not_mix() -> None:
    rows = []
    for a, b in zip(ticker("ACME", ACME), ticker("OTHER", [30] * len(ACME))):
        rows += [a, b]
    out = run_sql(V_SHAPE, rows)
    assert [m["attrs"]["start_tstamp"] for m in out] == ["05-Apr-11", "10-Apr-11", "14-Apr-11"]
    assert out[0]["ids"] == {"STRT": 8, "DOWN": [10], "UP": [12, 14, 16, 18]}


def test_oracle_example_20_2_all_rows_per_match() -> None:
    q = oracle(
        """STRT.tstamp AS start_tstamp,
                   FINAL LAST(DOWN.tstamp) AS bottom_tstamp,
                   FINAL LAST(UP.tstamp) AS end_tstamp,
                   MATCH_NUMBER() AS match_num,
                   CLASSIFIER() AS var_match"""
    )
    out = run_sql(q, ticker("ACME", ACME))
    got = [(m["row"], m["attrs"]["match_num"], m["attrs"]["var_match"], m["attrs"]["start_tstamp"],
            m["attrs"]["bottom_tstamp"], m["attrs"]["end_tstamp"]) for m in out]
    m1 = ("05-Apr-11", "06-Apr-11", "10-Apr-11")
    m2 = ("10-Apr-11", "12-Apr-11", "13-Apr-11")
    m3 = ("14-Apr-11", "16-Apr-11", "18-Apr-11")
    assert got == [
        (4, 1, "STRT", *m1), (5, 1, "DOWN", *m1), (6, 1, "UP", *m1), (7, 1, "UP", *m1), (8, 1, "UP", *m1),
        (9, 1, "UP", *m1),
        (9, 2, "STRT", *m2), (10, 2, "DOWN", *m2), (11, 2, "DOWN", *m2), (12, 2, "UP", *m2),
        (13, 3, "STRT", *m3), (14, 3, "DOWN", *m3), (15, 3, "DOWN", *m3), (16, 3, "UP", *m3), (17, 3, "UP", *m3),
    ]


def test_oracle_example_20_3_aggregates() -> None:
    q = oracle(
        """MATCH_NUMBER() AS match_num,
        CLASSIFIER() AS var_match,
        FINAL COUNT(UP.tstamp) AS up_days,
        FINAL COUNT(tstamp) AS total_days,
        RUNNING COUNT(tstamp) AS cnt_days,
        price - STRT.price AS price_dif"""
    )
    out = run_sql(q, ticker("ACME", ACME))
    got = [tuple(m["attrs"][k] for k in ("match_num", "up_days", "total_days", "cnt_days", "price_dif")) for m in out]
    assert got == [
        (1, 4, 6, 1, 0), (1, 4, 6, 2, -13), (1, 4, 6, 3, -10), (1, 4, 6, 4, -5), (1, 4, 6, 5, -1), (1, 4, 6, 6, 0),
        (2, 1, 4, 1, 0), (2, 1, 4, 2, -6), (2, 1, 4, 3, -10), (2, 1, 4, 4, 0),
        (3, 2, 5, 1, 0), (3, 2, 5, 2, -11), (3, 2, 5, 3, -13), (3, 2, 5, 4, -11), (3, 2, 5, 5, -1),
    ]


def test_oracle_example_20_4_w_shape() -> None:
    q = oracle(
        """MATCH_NUMBER() AS match_num,
        CLASSIFIER()  AS  var_match,
        STRT.tstamp AS start_tstamp,
        FINAL LAST(UP.tstamp) AS end_tstamp""",
        pattern="STRT DOWN+ UP+ DOWN+ UP+",
    )
    out = run_sql(q, ticker("ACME", ACME))
    assert [m["attrs"]["var_match"] for m in out] == ["STRT", "DOWN", "UP", "UP", "UP", "UP", "DOWN", "DOWN", "UP"]
    assert {(m["attrs"]["match_num"], m["attrs"]["start_tstamp"], m["attrs"]["end_tstamp"]) for m in out} == {
        (1, "05-Apr-11", "13-Apr-11")
    }
    assert [m["row"] for m in out] == list(range(4, 13))
    assert out[0]["ids"] == {"STRT": 4, "DOWN": [5, 10, 11], "UP": [6, 7, 8, 9, 12]}


# Flink SQL documentation, "Pattern Recognition", the Ticker table
FLINK_TICKER = [(12, 1), (17, 2), (19, 1), (21, 3), (25, 2), (18, 1), (15, 1), (14, 2), (24, 2), (25, 2), (19, 1)]


def _flink_rows(prices: list[tuple[int, int]]) -> list[dict[str, object]]:
    return [
        {"symbol": "ACME", "rowtime": f"01-Apr-11 10:00:{i:02d}", "price": p, "tax": t} for i, (p, t) in enumerate(prices)
    ]


def test_flink_price_drop_start_row_price_down_price_up() -> None:
    q = """
    SELECT *
    FROM Ticker
        MATCH_RECOGNIZE (
            PARTITION BY symbol
            ORDER BY rowtime
            MEASURES
                START_ROW.rowtime AS start_tstamp,
                LAST(PRICE_DOWN.rowtime) AS bottom_tstamp,
                LAST(PRICE_UP.rowtime) AS end_tstamp
            ONE ROW PER MATCH
            AFTER MATCH SKIP TO LAST PRICE_UP
            PATTERN (START_ROW PRICE_DOWN+ PRICE_UP)
            DEFINE
                PRICE_DOWN AS
                    (LAST(PRICE_DOWN.price, 1) IS NULL AND PRICE_DOWN.price < START_ROW.price) OR
                        PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1),
                PRICE_UP AS
                    PRICE_UP.price > LAST(PRICE_DOWN.price, 1)
        ) MR;
    """
    out = run_sql(q, _flink_rows(FLINK_TICKER))
    assert [m["attrs"] for m in out] == [
        {
            "symbol": "ACME",
            "start_tstamp": "01-Apr-11 10:00:04",
            "bottom_tstamp": "01-Apr-11 10:00:07",
            "end_tstamp": "01-Apr-11 10:00:08",
        }
    ]
    assert out[0]["ids"] == {"START_ROW": 4, "PRICE_DOWN": [5, 6, 7], "PRICE_UP": 8}


def test_flink_aggregation_average_below_threshold() -> None:
    prices = [(12, 1), (17, 2), (13, 1), (16, 3), (25, 2), (2, 1), (4, 1), (10, 2), (15, 2), (25, 2), (25, 1), (30, 1)]
    q = """
    SELECT *
    FROM Ticker
        MATCH_RECOGNIZE (
            PARTITION BY symbol
            ORDER BY rowtime
            MEASURES
                FIRST(A.rowtime) AS start_tstamp,
                LAST(A.rowtime) AS end_tstamp,
                AVG(A.price) AS avgPrice
            ONE ROW PER MATCH
            AFTER MATCH SKIP PAST LAST ROW
            PATTERN (A+ B)
            DEFINE
                A AS AVG(A.price) < 15
        ) MR;
    """
    out = run_sql(q, _flink_rows(prices))
    assert [m["attrs"] for m in out] == [
        {"symbol": "ACME", "start_tstamp": "01-Apr-11 10:00:00", "end_tstamp": "01-Apr-11 10:00:03", "avgPrice": 14.5},
        {"symbol": "ACME", "start_tstamp": "01-Apr-11 10:00:05", "end_tstamp": "01-Apr-11 10:00:10", "avgPrice": 13.5},
    ]


FLINK_XYZ = [(10, 1), (11, 2), (12, 1), (13, 2), (14, 1), (16, 2)]


def _greedy_query(quantifier: str) -> str:
    return f"""
    SELECT *
    FROM Ticker
        MATCH_RECOGNIZE(
            PARTITION BY symbol
            ORDER BY rowtime
            MEASURES
                C.price AS lastPrice
            ONE ROW PER MATCH
            AFTER MATCH SKIP PAST LAST ROW
            PATTERN (A B{quantifier} C)
            DEFINE
                A AS A.price > 10,
                B AS B.price < 15,
                C AS C.price > 12
        )
    """


def test_flink_greedy_and_reluctant_quantifiers() -> None:
    rows = [{"symbol": "XYZ", "price": p, "tax": t} for p, t in FLINK_XYZ]
    assert [m["attrs"] for m in run_sql(_greedy_query("*"), rows)] == [{"symbol": "XYZ", "lastPrice": 16}]
    reluctant = run_sql(_greedy_query("*?"), rows)
    assert [m["attrs"] for m in reluctant] == [{"symbol": "XYZ", "lastPrice": 13}, {"symbol": "XYZ", "lastPrice": 16}]
    assert [m["ids"] for m in reluctant] == [{"A": 1, "B": [2], "C": 3}, {"A": 4, "C": 5}]


def test_flink_syntax_example_with_select_list() -> None:
    """The query that opens Flink's page (its data is ours: the page gives none)."""
    q = """
    SELECT T.aid, T.bid, T.cid
    FROM MyTable
        MATCH_RECOGNIZE (
          PARTITION BY userid
          ORDER BY proctime
          MEASURES
            A.id AS aid,
            B.id AS bid,
            C.id AS cid
          PATTERN (A B C)
          DEFINE
            A AS name = 'a',
            B AS name = 'b',
            C AS name = 'c'
        ) AS T
    """
    names = [(1, "a"), (2, "a"), (1, "b"), (2, "b"), (1, "c"), (2, "x"), (2, "a"), (2, "b"), (2, "c")]
    rows = [{"userid": u, "name": n} for u, n in names]
    out = run_sql(q, rows, "MyTable")
    assert [(m["pattern"], m["attrs"]) for m in out] == [("T", {"aid": 0, "bid": 2, "cid": 4}), ("T", {"aid": 6, "bid": 7, "cid": 8})]
