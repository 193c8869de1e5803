"""The first Python worker started early (petricep/spark/launch.py): the same worker pool
the firing's SQL tasks use, and a caller's own session left as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from petricep.spark import launch
from petricep.spark.session import spark_available

pytestmark = pytest.mark.skipif(not spark_available(), reason="PySpark or Java missing")

def _environ(rows: Any) -> Any:
    yield dict(os.environ)


@pytest.mark.spark
def test_the_early_workers_environment_is_the_sql_tasks(spark: Any) -> None:
    """Spark pools Python workers by the environment their function carries: the early
    worker's must be the firing's (a SQL Arrow task), or the firing starts another."""
    import pyarrow as pa

    def arrow_environ(batches: Any) -> Any:
        for _ in batches:
            yield pa.RecordBatch.from_pydict({"e": [json.dumps(dict(os.environ))]})

    sql = json.loads(spark.range(1).coalesce(1).mapInArrow(arrow_environ, "e string").collect()[0].e)
    (early,) = launch.sql_worker_rdd(spark.sparkContext, _environ).collect()
    secret = "PYTHON_WORKER_FACTORY_SECRET"  # one per worker pool's daemon
    assert early[secret] == sql[secret]
    assert {k: v for k, v in early.items() if k != secret} == {k: v for k, v in sql.items() if k != secret}
    assert "SPARK_SIMPLIFIED_TRACEBACK" not in spark.sparkContext.environment


@pytest.mark.spark
def test_a_small_run_in_a_session_of_ones_own_leaves_its_settings(spark: Any, tmp_path: Path) -> None:
    """The small job's settings (interpreted expressions) go to a session the command
    starts only, not into the caller's (where every later query would run with them)."""
    from petricep.cli import main

    (tmp_path / "two.csv").write_text("id,type,ts,x\n1,A,1,1\n2,B,2,2\n")
    (tmp_path / "p.pcep").write_text("PATTERN SEQ(A a, B b)\nWHERE a.x < b.x\nWITHIN 10\n")
    before = {k: spark.conf.get(k, None) for k in ("spark.sql.codegen.wholeStage", "spark.sql.codegen.factoryMode")}
    args = ["run", str(tmp_path / "p.pcep"), "--events", str(tmp_path / "two.csv"), "--type-field", "type",
            "--time-field", "ts", "--id-field", "id", "--engine", "spark", "-o", str(tmp_path / "out.jsonl")]  # fmt: skip
    assert main(args) == 0
    assert (tmp_path / "out.jsonl").read_text() == '{"pattern": "p", "ids": {"a": 1, "b": 2}, "start": 1, "end": 2, "attrs": {}}\n'
    assert {k: spark.conf.get(k, None) for k in before} == before
