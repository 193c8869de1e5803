"""Starting Spark's JVM and its first Python worker sooner: the fixed costs of a small run.

A 2-event ``run --engine spark`` spent ~3.4 s in its one task, most of it starting the
Python worker (PySpark's daemon, its fork, pyspark's imports, then petricep's and
pyarrow's) after the driver had parsed the file and planned the job; and ~1.3 s in
PySpark's ``launch_gateway``, which runs ``bin/spark-submit``: bash scripts and a
*launcher* JVM (``org.apache.spark.launcher.Main``) whose only output is the real JVM's
command line (bench/HISTORY.md, issue 39 item 5)."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import shlex
import subprocess
import threading
from collections.abc import Iterable, Iterator
from contextlib import suppress
from typing import Any

# what a firing task imports (a small run's first and only Python task)
FIRING_MODULES = ("petricep.spark.batch", "pyarrow", "pandas")


def _import_in_worker(modules: tuple[str, ...], rows: Iterable[Any]) -> Iterator[int]:
    """A task that imports ``modules`` in its Python worker (which Spark then keeps, idle,
    for the next task: ``spark.python.worker.reuse``)."""
    for name in modules:
        with suppress(ImportError):
            importlib.import_module(name)
    yield sum(1 for _ in rows)


# Spark keeps one pool of Python workers per environment a function carries, and its SQL
# runners (the firing's) add this variable to theirs (while the setting below is on, as by
# default): a plain RDD job's worker, without it, was never reused by the firing task.
_SIMPLIFIED = "SPARK_SIMPLIFIED_TRACEBACK"
_SIMPLIFIED_CONF = "spark.sql.execution.pyspark.udf.simplifiedTraceback.enabled"


def sql_worker_rdd(sc: Any, func: Any) -> Any:
    """A one-partition RDD of ``func`` over one row, its Python function carrying the
    environment a SQL runner's carries (so its worker is the SQL tasks' to reuse)."""
    env = sc.environment
    added = _SIMPLIFIED not in env and sc.getConf().get(_SIMPLIFIED_CONF, "true").lower() == "true"
    if added:
        env[_SIMPLIFIED] = "1"
    try:  # the function (and the environment it carries) made now
        rdd = sc.parallelize([0], 1).mapPartitions(func)
        rdd._jrdd  # noqa: B018
    finally:
        if added:
            env.pop(_SIMPLIFIED, None)
    return rdd


class WorkerStart:
    """A one-task job started in a thread as soon as the SparkContext exists: its Python
    worker starts and imports :data:`FIRING_MODULES` while the driver creates the
    SparkSession, parses a small input and plans the firing. :meth:`wait` before the
    firing job, so that its task finds that worker idle and reuses it (a task started
    while the warm-up still ran would start a second worker). A warm-up that fails is
    ignored: the firing task starts its own worker, as without it."""

    def __init__(self, sc: Any, modules: tuple[str, ...] = FIRING_MODULES) -> None:
        self._thread = threading.Thread(target=self._run, args=(sc, modules), name="petricep-worker-start", daemon=True)
        self._thread.start()

    @staticmethod
    def _run(sc: Any, modules: tuple[str, ...]) -> None:
        from functools import partial

        with suppress(Exception):
            sql_worker_rdd(sc, partial(_import_in_worker, modules)).collect()

    def wait(self, timeout: float = 120.0) -> None:
        self._thread.join(timeout)


# The JVM's command line, as Spark's launcher printed it, kept per installation and
# arguments: ``bin/spark-submit`` runs bash scripts and a launcher JVM for each session
# only to compute it. Where a ``spark-env.sh`` would change the environment (a script
# this cannot read) or Spark's test settings are on, spark-submit runs as ever.
_KEYED_ENV = ("SPARK_", "PYSPARK_", "HADOOP_", "YARN_", "JAVA_", "_JAVA_", "CLASSPATH")


def launch_gateway(conf: Any, popen_kwargs: dict[str, Any]) -> Any:
    """PySpark's ``launch_gateway``, with the JVM started by its command line directly
    where it is known (:func:`_direct_command`); PySpark's code does the rest."""
    import pyspark.java_gateway

    jg: Any = pyspark.java_gateway  # its module global ``Popen`` replaced for this call
    real = jg.Popen

    def popen(command: list[str], **kwargs: Any) -> Any:
        direct = _direct_command(command, kwargs["env"], kwargs.get("stderr"))
        if direct is None:
            return real(command, **kwargs)
        args, env = direct
        return real(args, **{**kwargs, "env": {**kwargs["env"], **env}})

    jg.Popen = popen
    try:
        return jg.launch_gateway(conf, popen_kwargs)
    finally:
        jg.Popen = real


def _direct_command(command: list[str], env: dict[str, str], stderr: Any) -> tuple[list[str], dict[str, str]] | None:
    """The JVM's command for ``spark-submit ARGS`` and the variables spark-submit and
    spark-class export to it; None where it is not known here (spark-submit runs)."""
    home = env.get("SPARK_HOME")
    if not home or os.name != "posix" or os.path.realpath(command[0]) != os.path.realpath(os.path.join(home, "bin", "spark-submit")):
        return None
    conf_dir = env.get("SPARK_CONF_DIR") or os.path.join(home, "conf")
    jars = os.path.join(home, "jars")
    if os.path.exists(os.path.join(conf_dir, "spark-env.sh")) or any(env.get(k) for k in ("SPARK_TESTING", "SPARK_SQL_TESTING", "SPARK_PREPEND_CLASSES", "SPARK_ENV_LOADED")):
        return None
    scala = _scala_version(home)
    if scala is None or not os.path.isdir(jars):
        return None
    exported = {"PYTHONHASHSEED": "0", "SPARK_ENV_LOADED": "1", "SPARK_CONF_DIR": conf_dir, "SPARK_SCALA_VERSION": scala}
    java = os.path.join(env["JAVA_HOME"], "bin", "java") if env.get("JAVA_HOME") else "java"
    try:
        key = _launch_key(command[1:], env, java, jars, conf_dir)
        path = os.path.join(_cache_dir(env), f"spark-launch-{key}.json")
    except OSError:
        return None
    with suppress(OSError, ValueError):
        with open(path, encoding="utf-8") as fh:
            cached = json.load(fh)
        if isinstance(cached, list) and all(isinstance(a, str) for a in cached):
            return cached, exported
    found = _launcher_output(java, jars, command[1:], {**env, **exported}, stderr)
    if found is None:
        return None
    with suppress(OSError):
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(found, fh)
        os.replace(tmp, path)
    return found, exported


def _launcher_output(java: str, jars: str, args: list[str], env: dict[str, str], stderr: Any) -> list[str] | None:
    """What ``bin/spark-class`` runs: the launcher's NUL-separated command (None if it failed)."""
    launcher = [java, "-Xmx128m", *shlex.split(env.get("SPARK_LAUNCHER_OPTS", "")), "-cp", os.path.join(jars, "*")]
    try:
        done = subprocess.run(
            [*launcher, "org.apache.spark.launcher.Main", "org.apache.spark.deploy.SparkSubmit", *args],
            env=env, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, timeout=300, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    head, sep, body = done.stdout.partition(b"\0\n")
    if done.returncode != 0 or not sep or head.strip():
        return None
    found = [a.decode() for a in body.split(b"\0")]
    if found and found[-1] == "":
        found.pop()
    main = "org.apache.spark.deploy.SparkSubmit"  # then the arguments (the launcher reorders them)
    tail = found[found.index(main) + 1 :] if main in found else None
    return found if tail is not None and sorted(tail) == sorted(args) else None


def _scala_version(home: str) -> str | None:
    """The Scala version ``load-spark-env.sh`` exports (None: not read here)."""
    with suppress(OSError):
        with open(os.path.join(home, "bin", "load-spark-env.sh"), encoding="utf-8") as fh:
            found = re.findall(r"^export SPARK_SCALA_VERSION=(\S+)$", fh.read(), re.M)
        if len(found) == 1:
            return found[0]
    return None


def _launch_key(args: list[str], env: dict[str, str], java: str, jars: str, conf_dir: str) -> str:
    """What the launcher's output depends on: the arguments, the variables it reads, the
    Java runtime, Spark's jars and configuration directory (their modification times)."""
    exe = os.path.realpath(java if os.sep in java else (_which(java, env) or java))
    confs = sorted((n, os.stat(os.path.join(conf_dir, n)).st_mtime_ns) for n in os.listdir(conf_dir)) if os.path.isdir(conf_dir) else []
    facts = [
        args,
        sorted((k, v) for k, v in env.items() if k.startswith(_KEYED_ENV)),
        exe, os.stat(exe).st_mtime_ns, jars, os.stat(jars).st_mtime_ns, conf_dir, confs,
    ]  # fmt: skip
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:20]


def _which(name: str, env: dict[str, str]) -> str | None:
    import shutil

    return shutil.which(name, path=env.get("PATH"))


def _cache_dir(env: dict[str, str]) -> str:
    cache = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(cache, "petricep")
    os.makedirs(directory, exist_ok=True)
    return directory
