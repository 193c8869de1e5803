"""Getting a SparkSession, with one clear message when PySpark or Java is missing."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
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


STREAM_CHANGELOG = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
ROW_TRACKING = "spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows"
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
    # a streaming query's state store commits its changes as a changelog file per partition
    # and micro-batch (RocksDB snapshots are uploaded in the background, by maintenance),
    # not a checkpoint of the whole RocksDB instance: the stateful operator's commit was
    # 1.9-3.6 s of a 1,000-event micro-batch's 6-13 s here (summed over its tasks: flush,
    # checkpoint, file sync), 0.5-1.4 s with it (bench/HISTORY.md, stream-cost). A
    # checkpoint written without it is read as ever (Spark switches either way).
    STREAM_CHANGELOG: "true",
    # RocksDB's count of the state rows (the progress' ``numRowsTotal``, then 0) costs a
    # lookup before every write; it is a metric only (SPARK-37224 added the switch for this),
    # and a checkpoint may flip it between runs. Kept on, because they protect data: the
    # state files' checksums (a corrupt file is refused, not read) and the commit validation
    # (a foreachBatch sink that left part of a micro-batch unread fails, not loses state).
    ROW_TRACKING: "false",
    # a Python worker connecting back to a busy JVM: Spark's 15 s fails streaming queries
    # on a loaded machine ("Python worker failed to connect back")
    "spark.python.authenticate.socketTimeout": "120s",
    # PySpark's DataFrame call-site capture: every column function and DataFrame method
    # asked the JVM for a setting and set and cleared an origin there (py4j round trips),
    # and its first call imported IPython (~0.26 s of a 2-event run's driver here) only
    # to filter a notebook's frames out of the call site. Error texts petricep shows are
    # its own (the task's message), not Spark's DataFrame context.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}


# A run on a small input (the CLI knows its size before the JVM starts): the JVM's C1
# compiler only, one GC thread. The C2 compiler spent ~14 of the ~33 CPU seconds of a
# 2-event run (bench/HISTORY.md, issue 39 item 5); on a large input its code pays back.
QUICK_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# and Spark's expressions interpreted: whole-stage code generation (Janino compiling each
# query's Java source) was ~0.5-0.8 of the one task's seconds of a 2-event run here, and
# ~0.7 CPU s of the run (bench/HISTORY.md, issue 39 item 5, spark-costs)
QUICK_CONF = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
# lines the JVM writes before any log configuration is read (``--verbose`` shows them):
# its module warning, and a class archive it cannot use (another JDK; it runs without);
# and the lines (each one followed by a blank line) PySpark's transformWithStateInPandas
# driver-side worker prints at every query start
_JVM_NOISE = (b"WARNING: Using incubator modules", b"Starting Streaming TransformWithState", b"Streaming TransformWithState")
_CDS_NOISE = b"][cds"
# The JVM's own log (unified logging) on stderr, warnings and above: by default it writes
# them to stdout, where they would land among the matches (``-o -``); recording the class
# archive writes hundreds of ``[cds]`` warnings at exit. A user's -Xlog (after ours) wins.
_JVM_LOG = "-Xlog:disable -Xlog:all=warning:stderr"
_LOG4J = """# petricep's log4j2 configuration: Spark's own lines at {level} and above, on stderr.
# The root logger at WARN at least: below it, Spark's shell set-up says it sets WARN
rootLogger.level = {root}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = {level}
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n%ex
"""


def get_session(
    master: str | None = None,
    app_name: str = "petricep",
    conf: dict[str, str] | None = None,
    log_level: str = "ERROR",
    java_options: str = "",
    on_context: Callable[[Any], None] | None = None,
) -> Any:
    """A SparkSession for petricep (the active one if there is one and no master is given).

    Sets ``PYSPARK_PYTHON`` to this interpreter when unset, so that Python workers can
    import petricep. Spark's log level: ``log_level``, or ``PETRICEP_SPARK_LOG`` when set;
    where this call starts the JVM, the level holds from its first line (a log4j2 file:
    Spark's start-up banner and warnings are not printed below WARN), and
    ``java_options`` go to the driver's JVM (e.g. :data:`QUICK_JAVA_OPTIONS`) and
    ``on_context`` is called with the SparkContext as soon as it exists (before the
    SparkSession: e.g. :class:`~petricep.spark.launch.WorkerStart`)."""
    require_spark()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    _set_spark_home()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    level = os.environ.get("PETRICEP_SPARK_LOG", log_level).upper()
    settings = {"spark.ui.enabled": "false", "spark.driver.memory": "4g", **BASE_CONF, **(conf or {})}
    if master is not None:
        settings["spark.master"] = master
    settings["spark.app.name"] = app_name
    try:
        if _starts_jvm():
            sc = _start_jvm(settings, level, java_options)
            if on_context is not None:
                on_context(sc)
        builder = SparkSession.builder
        for k, v in settings.items():
            builder = builder.config(k, v)
        spark = builder.getOrCreate()
    except SparkUnavailable:
        raise
    except Exception as e:  # the JVM did not start
        raise SparkUnavailable(
            f"could not start Spark ({master or 'default master'}): {_first_line(e)}"
        ) from None
    spark.sparkContext.setLogLevel(level)
    return spark


def _set_spark_home() -> None:
    """``SPARK_HOME`` to the pyspark package when unset and it holds Spark (a pip
    install): PySpark's own search for it, and spark-submit's ``find-spark-home`` (which
    starts another Python to look), then have nothing to find. A SPARK_HOME of the
    user's is kept."""
    if "SPARK_HOME" in os.environ:
        return
    with suppress(ImportError, OSError):
        import pyspark

        home = os.path.dirname(pyspark.__file__)
        if os.path.isfile(os.path.join(home, "bin", "spark-submit")) and os.path.isdir(os.path.join(home, "jars")):
            os.environ["SPARK_HOME"] = home


def _starts_jvm() -> bool:
    """Whether the next SparkContext of this process launches a JVM (none launched yet)."""
    from pyspark import SparkContext

    return SparkContext._gateway is None and SparkContext._active_spark_context is None


def _start_jvm(settings: dict[str, str], level: str, java_options: str) -> Any:
    """Launch Spark's JVM with petricep's log configuration and the JVM's stderr read
    through :func:`_forward` (which drops the JVM's own start-up warnings below WARN),
    and create the SparkContext on it (``getOrCreate`` then finds it)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    archive, record = _class_archive()
    cds = f"-XX:SharedArchiveFile={archive}" if not record else f"-XX:ArchiveClassesAtExit={record}"
    ours = f"-Dlog4j2.configurationFile=file:{_log4j_file(level)} {_JVM_LOG} {cds if archive else ''} {java_options}".strip()
    theirs = settings.get("spark.driver.extraJavaOptions", "")
    settings["spark.driver.extraJavaOptions"] = f"{ours} {theirs}".strip()
    conf = SparkConf()
    for k, v in settings.items():
        conf.set(k, v)
    read, write = os.pipe()
    quiet = level not in ("ALL", "TRACE", "DEBUG", "INFO", "WARN")
    threading.Thread(target=_forward, args=(read, quiet), name="petricep-jvm-stderr", daemon=True).start()
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": write})
    finally:
        os.close(write)
    sc = SparkContext(conf=conf, gateway=gateway)
    if record and archive:
        atexit.register(_keep_archive, gateway.proc, record, archive)
    return sc


# The JVM's classes, archived (AppCDS): the JVM maps them rather than loading and
# verifying each of Spark's ~10,000 classes again; a 2-event run 17.8 -> 10.6 CPU s
# (bench/HISTORY.md, issue 39 item 5). The first run of an installation records the
# archive (~170 MB, once; that run takes longer while its JVM writes it at exit), under
# the user's cache; PETRICEP_SPARK_CDS=0 turns it off.
def _class_archive() -> tuple[str | None, str | None]:
    """(the archive to use, the file to record it to: None where it is there)."""
    if os.environ.get("PETRICEP_SPARK_CDS", "1") == "0":
        return None, None
    try:
        import pyspark

        java = os.path.realpath(java_executable() or "java")
        if not _base_archive(java):
            return None, None
        jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
        ident = f"{java}|{os.stat(java).st_mtime_ns}|{pyspark.__version__}|{jars}|{os.stat(jars).st_mtime_ns}"
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        directory = os.path.join(cache, "petricep")
        os.makedirs(directory, exist_ok=True)
    except (OSError, ImportError):
        return None, None
    path = os.path.join(directory, f"spark-classes-{hashlib.sha1(ident.encode()).hexdigest()[:16]}.jsa")
    if os.path.isfile(path):
        return path, None
    return path, f"{path}.{os.getpid()}.tmp"


def _base_archive(java: str) -> bool:
    """Whether the JRE of ``java`` has its base class archive: an archive of Spark's classes
    is recorded on top of it, and a JVM asked to record one without it does not start
    (a ``jlink`` image made without ``--generate-cds-archive``, some distributions' JREs)."""
    server = os.path.join(os.path.dirname(os.path.dirname(java)), "lib", "server")
    return any(os.path.isfile(os.path.join(server, name)) for name in ("classes.jsa", "classes_nocoops.jsa"))


def _keep_archive(proc: Any, record: str, archive: str) -> None:
    """At exit: end the JVM (its stdin closed: it exits and writes the archive), then put
    the archive in place (a JVM that did not end cleanly leaves none)."""
    with suppress(Exception):
        proc.stdin.close()
        if proc.wait(timeout=120) == 0 and os.path.getsize(record) > 0:
            os.replace(record, archive)
    with suppress(OSError):
        os.unlink(record)


def _forward(fd: int, quiet: bool) -> None:
    """Copy the JVM's stderr (its Python workers' too) to ours, line by line; ``quiet``:
    without the JVM's start-up warnings (:data:`_JVM_NOISE`)."""
    dropped = False
    with os.fdopen(fd, "rb") as src, suppress(OSError):
        for line in iter(src.readline, b""):
            if quiet and (line.startswith(_JVM_NOISE) or _CDS_NOISE in line or (dropped and not line.strip())):
                dropped = True
                continue
            dropped = False
            os.write(2, line)


def _log4j_file(level: str) -> str:
    """A log4j2 configuration file at ``level`` (written once per level and user)."""
    level = level if level in _LEVELS else "ERROR"
    path = os.path.join(tempfile.gettempdir(), f"petricep-log4j2-{os.getuid() if hasattr(os, 'getuid') else 0}-{level}.properties")
    root = level if level in _LEVELS[:4] else "WARN"
    text = _LOG4J.format(level=level.lower(), root=root.lower())
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return path
    except OSError:
        pass
    tmp = f"{path}.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return path


_LEVELS = ("ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF")


def configure(spark: Any) -> None:
    """Session settings a run relies on (time zone for timestamps, RocksDB state store),
    and the state store's changelog commits and untracked row count (:data:`BASE_CONF`)
    unless the session says otherwise."""
    for k in ("spark.sql.session.timeZone", "spark.sql.streaming.stateStore.providerClass"):
        with suppress(Exception):  # a static setting in some deployments: keep theirs
            spark.conf.set(k, BASE_CONF[k])
    for k in (STREAM_CHANGELOG, ROW_TRACKING):
        with suppress(Exception):
            if spark.conf.get(k, None) is None:
                spark.conf.set(k, BASE_CONF[k])


def stop_session(spark: Any) -> None:
    """Stop a session this process started, for a command about to exit. PySpark's stop
    waits for its accumulator server's loop to see the request (it polls every 0.5 s):
    0.84 of a 2-event run's 0.95 s of stop here. The loop is told to end and not waited
    for (a daemon thread; the process exits next)."""
    server = getattr(spark.sparkContext, "_accumulatorServer", None)
    if server is not None:
        server.server_shutdown = True
        server._BaseServer__shutdown_request = True  # serve_forever's flag: ends at its next poll
        spark.sparkContext._accumulatorServer = None
    spark.stop()


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
