"""SQL MATCH_RECOGNIZE files on Spark: the same JSON Lines as the embedded engine, each
query distributed by its PARTITION BY (or run in one partition, with a warning)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from petricep.api import compile_sql
from petricep.cli import main
from petricep.spark.plan import make_plan

QUERIES = """
SELECT * FROM Ticker MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES STRT.price AS top, LAST(DOWN.price) AS bottom, COUNT(UP.*) AS ups
  ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
  PATTERN (STRT DOWN+ UP+)
  DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
) AS v;
SELECT * FROM Ticker MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS n
  ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW
  PATTERN (A{2,3}? B)
  DEFINE A AS A.price >= PREV(A.price), B AS B.price < FIRST(A.price)
  WITHIN 20
) AS w;
SELECT * FROM Ticker MATCH_RECOGNIZE (
  MEASURES LAST(Z.symbol) AS sym
  PATTERN (Z Z) DEFINE Z AS Z.price > 95
) AS global;
"""


def _data(path: Path) -> None:
    rng = random.Random(7)
    lines = ["symbol,ts,price"]
    for i in range(600):
        lines.append(f"{rng.choice('ABCDE')},{i // 2},{rng.randint(1, 100)}")
    path.write_text("\n".join(lines) + "\n")


def test_plan_groups_queries_by_partition() -> None:
    plan = make_plan(compile_sql(QUERIES))
    assert [(g.patterns, g.attrs, g.types) for g in plan.groups] == [
        (("v",), ("symbol",), frozenset({"Ticker"})),
        (("w",), ("symbol",), frozenset({"Ticker"})),
        (("global",), (), frozenset({"Ticker"})),
    ]
    assert plan.warnings == ("warning: 'global' runs in one Spark partition: query 'global' has no PARTITION BY",)


def test_a_query_engine_snapshot_keeps_its_open_searches() -> None:
    """The state store round trip: closures are rebuilt, partial matches kept."""
    from petricep.events import Event
    from petricep.runtime.engine import Engine

    net = compile_sql("T MATCH_RECOGNIZE (PARTITION BY k MEASURES LAST(B.x) AS top PATTERN (A B+) DEFINE B AS B.x > PREV(B.x)) m")
    engine = Engine(net)
    for i, x in enumerate([1, 2, 3]):
        assert engine.push(Event("T", i, i, None, {"k": 1, "x": x})) == []
    restored = Engine(net)
    restored.restore(engine.snapshot())
    assert [m.to_dict() for m in restored.push(Event("T", 3, 3, None, {"k": 1, "x": 0}))] == [
        {"pattern": "m", "ids": {"A": 0, "B": [1, 2]}, "start": 0, "end": 2, "attrs": {"k": 1, "top": 3}}
    ]


@pytest.mark.spark
def test_queries_stream_with_the_embedded_result(spark: Any) -> None:
    """Micro-batch by micro-batch, each key's row runtime state goes through the state store."""
    from tests.spark.engines import run_spark_stream
    from tests.spark.test_spark_batch import embedded, random_stream

    text = """
    A MATCH_RECOGNIZE (PARTITION BY k MEASURES COUNT(*) AS n, LAST(U.x) AS top
      ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW
      PATTERN (S U+) DEFINE U AS U.x > PREV(U.x)) AS rises;
    MATCH_RECOGNIZE (PARTITION BY k MEASURES CLASSIFIER() AS c PATTERN (X (Y | Z)+? W)
      DEFINE X AS X.x < 3, W AS W.x > 5 WITHIN 6) AS mixed
    """
    net = compile_sql(text)
    events = random_stream(300, seed=11)
    want = sorted(embedded(net, events))
    got = sorted(json.dumps(m, ensure_ascii=False, separators=(", ", ": ")) for m in run_spark_stream([], events, files=4, net=net))
    assert got == want
    assert len(want) > 20


@pytest.mark.spark
def test_sql_on_spark_writes_what_local_writes(spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sql = tmp_path / "q.sql"
    sql.write_text(QUERIES)
    events = tmp_path / "ticker.csv"
    _data(events)
    local, remote = tmp_path / "local.jsonl", tmp_path / "spark.jsonl"
    args = ["run", str(sql), "--events", str(events), "--type", "Ticker", "--time-field", "ts"]
    assert main([*args, "-o", str(local)]) == 0
    capsys.readouterr()
    assert main([*args, "-o", str(remote), "--engine", "spark", "--master", "local[2]"]) == 0
    err = capsys.readouterr().err
    got, want = remote.read_text().splitlines(), local.read_text().splitlines()
    assert sorted(got) == sorted(want)
    assert len({line.split(",")[0] for line in want}) == 3  # every query matched
    assert "'global' runs in one Spark partition" in err
