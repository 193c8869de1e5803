"""The event archive is a table for Spark: every archived event, its columns as written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from petricep.archive.store import Archive
from petricep.events import Event

pytestmark = pytest.mark.spark


def test_spark_reads_the_archive_as_one_table(spark: Any, tmp_path: Path) -> None:
    archive = Archive(tmp_path / "archive", bucket_seconds=10, batch=3)
    for i in range(7):
        archive.append(Event("A" if i % 2 else "B", i * 4, i, i, {"k": i % 3, "x": float(i)}))
    archive.flush()
    rows = spark.read.parquet(str(tmp_path / "archive")).orderBy("__ts").collect()
    assert [(r["__type"], r["__ts"], r["k"], r["bucket"]) for r in rows] == [
        ("B", 0.0, 0, 0), ("A", 4.0, 1, 0), ("B", 8.0, 2, 0), ("A", 12.0, 0, 1),
        ("B", 16.0, 1, 1), ("A", 20.0, 2, 2), ("B", 24.0, 0, 2),
    ]
