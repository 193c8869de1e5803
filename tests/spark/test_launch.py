"""Spark's JVM started by its command line directly, and the first Python worker started
early (petricep/spark/launch.py): the same JVM command spark-submit runs, the same worker
pool the firing's SQL tasks use."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from petricep.spark import launch
from petricep.spark.session import _set_spark_home, spark_available

pytestmark = pytest.mark.skipif(not spark_available(), reason="PySpark or Java missing")

ARGS = ["--conf", "spark.master=local[1]", "--conf", "spark.driver.extraJavaOptions=-Da=1 -Db=2", "pyspark-shell"]


def _submit(env: dict[str, str]) -> list[str]:
    return [os.path.join(env["SPARK_HOME"], "bin", "spark-submit"), *ARGS]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    _set_spark_home()
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}


def test_the_jvm_command_is_the_launchers_then_read_from_the_cache(env: dict[str, str], tmp_path: Path) -> None:
    found = launch._direct_command(_submit(env), env, None)
    assert found is not None
    command, exported = found
    assert exported["PYTHONHASHSEED"] == "0" and exported["SPARK_ENV_LOADED"] == "1"
    main = command.index("org.apache.spark.deploy.SparkSubmit")
    assert command[1:3] == ["-cp", command[2]] and "-Da=1" in command[:main] and "-Db=2" in command[:main]
    assert sorted(command[main + 1 :]) == sorted(ARGS)
    (cached,) = (tmp_path / "cache" / "petricep").glob("spark-launch-*.json")
    assert json.loads(cached.read_text()) == command
    cached.write_text(json.dumps(["java", "-version"]))  # read, not computed again
    assert launch._direct_command(_submit(env), env, None) == (["java", "-version"], exported)
    other = [*_submit(env)[:-1], "--conf", "spark.app.name=x", "pyspark-shell"]
    again = launch._direct_command(other, env, None)
    assert again is not None and "spark.app.name=x" in again[0]


def test_a_spark_env_script_or_another_script_keeps_spark_submit(env: dict[str, str], tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-env.sh").write_text("export SPARK_LOCAL_IP=127.0.0.1\n")
    assert launch._direct_command(_submit(env), {**env, "SPARK_CONF_DIR": str(conf)}, None) is None
    assert launch._direct_command(["/bin/spark-submit", *ARGS], env, None) is None
    assert launch._direct_command(_submit(env), {**env, "SPARK_TESTING": "1"}, None) is None
    assert not list((tmp_path / "cache").rglob("spark-launch-*"))


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
