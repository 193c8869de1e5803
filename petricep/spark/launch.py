"""Starting Spark's first Python worker sooner: a fixed cost of a small run.

A 2-event ``run --engine spark`` spent ~3.4 s in its one task, most of it starting the
Python worker (PySpark's daemon, its fork, pyspark's imports, then petricep's and
pyarrow's) after the driver had parsed the file and planned the job (bench/HISTORY.md,
issue 39 item 5)."""

from __future__ import annotations

import importlib
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
