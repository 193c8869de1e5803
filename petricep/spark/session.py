"""Getting a SparkSession, with one clear message when PySpark or Java is missing."""

from __future__ import annotations

import os
import shutil
import sys
from contextlib import suppress
from typing import Any

from petricep.errors import EXIT_ERROR, ConfigError

INSTALL = 'pip install "petricep[spark]"'


class SparkUnavailable(ConfigError):
    """PySpark or a Java runtime is missing: the message says what to install. An
    installation's problem, not the command line's: exit status 1."""

    exit_code = EXIT_ERROR


def require_pyspark() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkUnavailable(
            f"the Spark engine needs PySpark: install it with  {INSTALL}  (PySpark 4, protobuf)"
        ) from None


def java_executable() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        exe = os.path.join(home, "bin", "java")
        if os.access(exe, os.X_OK):
            return exe
    return shutil.which("java")


def require_java() -> None:
    if java_executable() is None:
        raise SparkUnavailable(
            "the Spark engine needs a Java runtime (17 or 21) and none was found: install one "
            "(e.g. `apt install openjdk-17-jre-headless`, `brew install openjdk@17` or "
            "`conda install -c conda-forge openjdk=17`) and put `java` on PATH or set JAVA_HOME"
        )


def require_spark() -> None:
    """Raise :class:`SparkUnavailable` unless PySpark and Java are both there."""
    require_pyspark()
    require_java()


def spark_available() -> bool:
    try:
        require_spark()
    except SparkUnavailable:
        return False
    return True


# Settings every petricep session needs; the caller's own settings win.
BASE_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.stateStore.providerClass": (
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
    ),
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    # the firing stage's rows are packs of events (a few large values): batches of 10,000
    # of them would reach a Python worker only once the JVM had built a whole partition's
    "spark.sql.execution.arrow.maxBytesPerBatch": "8m",
    # and more lines per batch for the parse stage (each batch's runs of lines are read
    # as one file: its fixed cost was a third of the stage at 10,000)
    "spark.sql.execution.arrow.maxRecordsPerBatch": "65536",
    # a kernel group's events cross the shuffle as packs that are LZ4-compressed already
    # (shuffle.pack_bytes): Spark's own compression did it again on the way out and undid it
    # on the way in (the firing stage on Aarhus: median 1.02 -> 0.86 s on local[1])
    "spark.shuffle.compress": "false",
    # a Python worker connecting back to a busy JVM: Spark's 15 s fails streaming queries
    # on a loaded machine ("Python worker failed to connect back")
    "spark.python.authenticate.socketTimeout": "120s",
}


def get_session(
    master: str | None = None,
    app_name: str = "petricep",
    conf: dict[str, str] | None = None,
    log_level: str = "ERROR",
) -> Any:
    """A SparkSession for petricep (the active one if there is one and no master is given).

    Sets ``PYSPARK_PYTHON`` to this interpreter when unset, so that Python workers can
    import petricep. Spark's log level: ``log_level``, or ``PETRICEP_SPARK_LOG`` when set."""
    require_spark()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    settings = {"spark.ui.enabled": "false", "spark.driver.memory": "4g", **BASE_CONF, **(conf or {})}
    for k, v in settings.items():
        builder = builder.config(k, v)
    try:
        spark = builder.getOrCreate()
    except Exception as e:  # the JVM did not start
        raise SparkUnavailable(
            f"could not start Spark ({master or 'default master'}): {_first_line(e)}"
        ) from None
    spark.sparkContext.setLogLevel(os.environ.get("PETRICEP_SPARK_LOG", log_level))
    return spark


def configure(spark: Any) -> None:
    """Session settings a run relies on (time zone for timestamps, RocksDB state store)."""
    for k in ("spark.sql.session.timeZone", "spark.sql.streaming.stateStore.providerClass"):
        with suppress(Exception):  # a static setting in some deployments: keep theirs
            spark.conf.set(k, BASE_CONF[k])


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
