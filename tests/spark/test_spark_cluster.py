"""A real Spark standalone cluster, not ``local[*]``: a master and two workers (one core
each) on 127.0.0.1, started from the PySpark package's ``spark-class``; petricep reaches
the executors as a cluster user ships it — the archive ``python -m petricep.spark.pack``
builds, passed with ``spark-submit --py-files`` — and ``run --engine spark --master
spark://...`` over Aarhus rows writes the embedded engine's matches."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.spark.aarhus import PATTERNS, STREAM_ARGS, canonical, embedded, write_all

pytestmark = pytest.mark.spark

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], log: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-2000:]
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"the Spark master did not listen on {port}: {log.read_text()[-2000:]}")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    import pyspark

    home = os.path.dirname(pyspark.__file__)
    spark_class = os.path.join(home, "bin", "spark-class")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_SUBMIT_ARGS")}
    env.update(SPARK_HOME=home, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               SPARK_DAEMON_MEMORY="256m")  # fmt: skip
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs = []
    try:
        log = tmp_path / "master.log"
        with open(log, "w") as fh:
            master = subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", "0"],
                env=env, stdout=fh, stderr=fh, cwd=tmp_path, start_new_session=True,
            )  # fmt: skip
        procs.append(master)
        _wait_port(port, master, log)
        for i in range(2):
            work = tmp_path / f"worker-{i}"
            work.mkdir()
            with open(tmp_path / f"worker-{i}.log", "w") as fh:
                procs.append(
                    subprocess.Popen(
                        [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--cores", "1",
                         "--memory", "1g", "--webui-port", "0", "--work-dir", str(work)],
                        env=env, stdout=fh, stderr=fh, cwd=work, start_new_session=True,
                    )  # fmt: skip
                )
        yield url
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, 9)
            p.wait()


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
