"""One SparkSession for every Spark test (``local[2]``); Spark tests skip without PySpark or Java."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from petricep.spark.session import SparkUnavailable, require_spark

SPARK_CONF = {
    "spark.sql.shuffle.partitions": "3",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.driver.memory": "2g",
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "500",
}


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    try:
        require_spark()
    except SparkUnavailable as e:
        pytest.skip(str(e))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from petricep.spark.session import get_session

    session = get_session("local[2]", app_name="petricep-tests", conf=SPARK_CONF)
    yield session
    session.stop()
