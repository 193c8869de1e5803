"""Spark matchers with the reference matcher's interface (see tests/engines.py):
``f(patterns, events, tie) -> list[dict]``, errors mapped the same way (ValueError for a
rejected pattern set or option, TypeError for an ill-typed comparison).

* :func:`run_partitioned` — the distributed algorithm without Spark (pure Python);
* :func:`run_spark_batch` — Spark batch over the events written as a JSON Lines file;
* :func:`run_spark_stream` — Structured Streaming over the events written as several
  JSON Lines files, then the end-of-input flush.

To run the hand cases of tests/features on one of them, add its name to the ``params``
of the ``matcher`` fixture in tests/features/conftest.py and resolve it with
:func:`matcher_run` (Spark ones need the ``spark`` session fixture of
tests/spark/conftest.py to be active).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

from petricep.errors import EvaluationError, PetricepError
from petricep.events import Event
from petricep.lang import ast as A
from petricep.merge import build_net

TYPE, TS, ID, POS = "__type", "__ts", "__id", "__pos"


def _net(patterns: Sequence[A.Pattern], tie: str) -> Any:
    from petricep.runtime.engine import Engine

    try:
        net = build_net(list(patterns))
        Engine(net, tie=tie)
    except PetricepError as e:
        raise ValueError(str(e)) from e
    return net


def _dicts(lines: Sequence[str]) -> list[dict[str, Any]]:
    return [json.loads(x) for x in lines]


def run_partitioned(
    patterns: Sequence[A.Pattern], events: Sequence[Event], tie: str = "arrival", partitions: int = 3
) -> list[dict[str, Any]]:
    from petricep.output.jsonl import match_json
    from petricep.spark.partition import run_partitioned as run

    net = _net(patterns, tie)
    try:
        return _dicts([match_json(m) for m, _ in run(net, list(events), tie, partitions)])
    except EvaluationError as e:
        raise TypeError(str(e)) from e
    except PetricepError as e:
        raise ValueError(str(e)) from e


def write_jsonl(path: str, events: Sequence[Event], pos: bool = False) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for e in events:
            row = {TYPE: e.type, TS: e.ts, ID: e.id, **e.attrs}
            if pos:
                row[POS] = e.pos
            fh.write(json.dumps(row) + "\n")


def _spark() -> Any:
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        raise RuntimeError("no active SparkSession: use the `spark` fixture")
    return spark


def _spark_errors(e: Exception) -> Exception:
    from petricep.spark.batch import task_message

    message = task_message(e)
    if message is not None:
        return TypeError(message)
    if isinstance(e, EvaluationError):
        return TypeError(str(e))
    if isinstance(e, PetricepError):
        return ValueError(str(e))
    return e


def run_spark_batch(
    patterns: Sequence[A.Pattern], events: Sequence[Event], tie: str = "arrival"
) -> list[dict[str, Any]]:
    from petricep.io.readers import InputSpec
    from petricep.spark.batch import BatchRun, ordered_json

    net = _net(patterns, tie)
    tmp = tempfile.mkdtemp(prefix="petricep-test-")
    try:
        path = os.path.join(tmp, "events.jsonl")
        write_jsonl(path, events)
        spec = InputSpec(path=path, format="jsonl", type_field=TYPE, time_field=TS, id_field=ID)
        try:
            # two firing partitions asked for: a small file alone would run in one (SMALL_INPUT),
            # and the differential tests are there to cover keys split across partitions
            run = BatchRun(_spark(), net, tie, partitions=2)
            return _dicts(list(ordered_json(run.fire(run.parse_file(spec), raise_errors=False))))
        except Exception as e:
            raise _spark_errors(e) from e
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_spark_stream(
    patterns: Sequence[A.Pattern],
    events: Sequence[Event],
    tie: str = "arrival",
    files: int = 4,
    watermark: float = 0,
    arrival: Sequence[int] | None = None,
    net: Any = None,
) -> list[dict[str, Any]]:
    """Events in ``files`` JSON Lines files of consecutive events, one file per
    micro-batch, arriving in stream order or in the order of file indexes ``arrival``
    (``net``: a compiled net to run instead of ``patterns``)."""
    from petricep.io.readers import InputSpec
    from petricep.spark.streaming import StreamRun

    net = _net(patterns, tie) if net is None else net
    tmp = tempfile.mkdtemp(prefix="petricep-test-")
    try:
        indir = os.path.join(tmp, "in")
        os.makedirs(indir)
        n = max(1, -(-len(events) // files))
        order = list(arrival) if arrival is not None else list(range(files))
        for i in range(0, len(events), n):
            path = os.path.join(indir, f"ev-{i // n:04d}.jsonl")
            write_jsonl(path, events[i : i + n], pos=True)
            t = 1_000_000 + order.index(i // n)
            os.utime(path, (t, t))
        spec = InputSpec(path=indir, format="jsonl", type_field=TYPE, time_field=TS, id_field=ID)
        got: list[str] = []
        try:
            run = StreamRun(_spark(), net, tie, watermark=watermark)
            checkpoint = os.path.join(tmp, "checkpoint")
            stream = run.matches(run.events_from_files(indir, spec, POS, max_files=1, checkpoint=checkpoint))
            query = (
                stream.writeStream.foreachBatch(
                    lambda df, _id: got.extend(r.json for r in df.select("json").collect())
                )
                .option("checkpointLocation", checkpoint)
                .trigger(availableNow=True)
                .start()
            )
            query.awaitTermination()
            got.extend(r.json for r in run.flush(checkpoint).select("json").collect())
        except Exception as e:
            raise _spark_errors(e) from e
        return _dicts(got)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


MATCHERS: dict[str, Callable[..., list[dict[str, Any]]]] = {
    "partitioned": run_partitioned,
    "spark-batch": run_spark_batch,
    "spark-stream": run_spark_stream,
}


def matcher_run(name: str) -> Callable[..., list[dict[str, Any]]]:
    try:
        return MATCHERS[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r}") from None
