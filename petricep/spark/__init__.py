"""petricep on Apache Spark: the same matches as the embedded engine, partitioned by key
across executors, in batch and Structured Streaming (README, "On Spark").

This package is the only part of petricep that imports PySpark, and only when a Spark
run starts: ``import petricep.spark`` works without it. Install with
``pip install "petricep[spark]"``; a Java runtime (17 or 21) must be on the PATH.

Batch::

    from petricep.api import compile_files
    from petricep.io.readers import InputSpec
    from petricep.spark import match_events, match_file

    net = compile_files(["nets/aarhus_congestion.pcep"])
    spec = InputSpec(path="traffic.csv.gz", type_const="traffic", time_field="TIMESTAMP", id_field="_id")
    matches = match_file(spark, spec, net)          # or match_events(df, net, spec)
    matches.select("json").write.text("out/")

Streaming::

    from petricep.spark import StreamRun

    run = StreamRun(spark, net, watermark=300)      # 300 s of out-of-order arrival
    events = run.events_from_files("incoming/", spec, pos_field="seq", checkpoint="ck/")  # arrival order
    query = run.typed_matches(events, spec).writeStream.option("checkpointLocation", "ck/")...
"""

from __future__ import annotations

from typing import Any

from .session import SparkUnavailable, get_session, require_spark, spark_available

__all__ = [
    "BatchRun",
    "SparkUnavailable",
    "StreamRun",
    "get_session",
    "match_events",
    "match_file",
    "require_spark",
    "spark_available",
]


def __getattr__(name: str) -> Any:
    if name in ("BatchRun", "match_events", "match_file"):
        from . import batch

        return getattr(batch, name)
    if name == "StreamRun":
        from .streaming import StreamRun

        return StreamRun
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
