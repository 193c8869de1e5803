"""A real Spark standalone cluster, not ``local[*]``: a master and two workers (one core
each) on 127.0.0.1, started from the PySpark package's ``spark-class``; petricep reaches
the executors as a cluster user ships it — the archive ``python -m petricep.spark.pack``
builds, passed with ``spark-submit --py-files`` — and ``run --engine spark --master
spark://...`` over Aarhus rows writes the embedded engine's matches."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.spark.aarhus import PATTERNS, STREAM_ARGS, canonical, embedded, write_all

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # a master, two workers and a driver: the slow tier

N = 12_000
DRIVER = '''
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
where = spark.sparkContext.parallelize(range(2), 2).map(lambda _: __import__("petricep").__file__).collect()
sys.stderr.write("executors import petricep from " + " ".join(sorted(set(where))) + "\\n")
from petricep.cli import main
raise SystemExit(main(sys.argv[1:]))
'''


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    from petricep.spark.standalone import standalone_cluster

    with standalone_cluster(tmp_path, workers=2, cores=1) as url:
        yield url


def test_run_on_a_standalone_cluster_equals_embedded(cluster: str, tmp_path: Path) -> None:
    (tmp_path / "p.pcep").write_text(PATTERNS)
    events = write_all(tmp_path / "aarhus.csv", N)
    want, _ = embedded(tmp_path / "p.pcep", events, tmp_path)
    archive = tmp_path / "dist" / "petricep.zip"
    packed = subprocess.run([sys.executable, "-m", "petricep.spark.pack", str(archive)], capture_output=True, text=True)
    assert packed.returncode == 0 and archive.exists(), packed.stderr
    (tmp_path / "app.py").write_text(DRIVER)
    import pyspark

    submit = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
    out = tmp_path / "cluster.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_SUBMIT_ARGS",)}
    env.update(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    done = subprocess.run(
        [submit, "--master", cluster, "--py-files", str(archive), "--driver-memory", "1g",
         "--executor-memory", "768m", "--conf", "spark.ui.enabled=false", str(tmp_path / "app.py"),
         "run", str(tmp_path / "p.pcep"), "--events", str(events), *STREAM_ARGS[:6], "-o", str(out),
         "--engine", "spark", "--master", cluster],
        env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path,
    )  # fmt: skip
    log = done.stdout + done.stderr  # spark-submit passes the driver's stderr to its stdout
    assert done.returncode == 0, log[-3000:]
    where = next(x for x in log.splitlines() if x.startswith("executors import petricep from "))
    paths = where.split(" from ")[1].split()
    assert paths and all(x.endswith("petricep.zip/petricep/__init__.py") for x in paths), where  # the shipped copy
    assert f"summary: {N} events read = {N} processed + 0 rejected + 0 late; {len(want)} matches" in log
    assert f"on Spark {cluster}" in log
    assert canonical(out.read_text().splitlines()) == canonical(want)
