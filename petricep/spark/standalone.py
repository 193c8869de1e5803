"""A Spark standalone cluster on this machine, from the PySpark package (no Spark install):
a master and ``workers`` workers on 127.0.0.1, for the tests, the benchmarks and anyone who
wants ``--master spark://...`` without a cluster at hand::

    with standalone_cluster(workers=2, cores=1, work=Path("scratch")) as url:
        subprocess.run(["petricep", "run", ..., "--engine", "spark", "--master", url])

Each daemon is its own process group, killed when the block ends; the logs stay in ``work``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], log: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the Spark master exited: {log.read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"the Spark master did not listen on {port}: {log.read_text()[-2000:]}")


def daemon_env() -> dict[str, str]:
    """The environment of the daemons and of a ``spark-submit`` against them."""
    import pyspark

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_SUBMIT_ARGS")}
    env.update(
        SPARK_HOME=os.path.dirname(pyspark.__file__),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
        SPARK_DAEMON_MEMORY="256m",
    )
    return env


@contextmanager
def standalone_cluster(work: Path, workers: int = 2, cores: int = 1, memory: str = "1g") -> Iterator[str]:
    """Start the master and the workers (``cores`` and ``memory`` each); yields the master URL."""
    env = daemon_env()
    spark_class = os.path.join(env["SPARK_HOME"], "bin", "spark-class")
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []

    def start(args: list[str], log: Path, cwd: Path) -> subprocess.Popen[bytes]:
        with open(log, "w") as fh:
            proc = subprocess.Popen(
                [spark_class, *args], env=env, stdout=fh, stderr=fh, cwd=cwd, start_new_session=True
            )
        procs.append(proc)
        return proc

    try:
        log = work / "master.log"
        master = start(
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port), "--webui-port", "0"],
            log,
            work,
        )
        _wait_port(port, master, log)
        for i in range(workers):
            wd = work / f"worker-{i}"
            wd.mkdir(exist_ok=True)
            start(
                ["org.apache.spark.deploy.worker.Worker", url, "--cores", str(cores), "--memory", memory,
                 "--webui-port", "0", "--work-dir", str(wd)],
                work / f"worker-{i}.log",
                wd,
            )  # fmt: skip
        yield url
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, 9)
            p.wait()


__all__ = ["daemon_env", "free_port", "standalone_cluster"]
