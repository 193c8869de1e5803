"""SASE's three-equal-price query over the shipped stock sample, on Spark.

    python -m pip install -e ".[spark]"      # PySpark 4; Java 17 or 21 on the PATH
    python examples/spark_batch.py

The events are read by Spark, matched per [price] on the executors, and come back as a
DataFrame; the match set is checked against the embedded engine's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from petricep.api import compile_files
from petricep.io.readers import InputSpec, open_events
from petricep.output.jsonl import match_json
from petricep.runtime.engine import Engine
from petricep.spark import get_session, match_file

HERE = Path(__file__).resolve().parent


def main(spark: Any = None) -> int:
    own = spark is None
    spark = spark or get_session("local[2]")
    net = compile_files([HERE.parent / "nets" / "sase_equal_price.pcep"])
    spec = InputSpec(
        path=str(HERE / "data" / "stocks.csv"), type_field="type", time_field="ts", id_field="id"
    )
    matches = match_file(spark, spec, net).cache()  # parsed now; matched when first used
    matches.orderBy("emitted_at").select("pattern", "ids", "start", "end").show(3, truncate=False)
    counts = {r["pattern"]: r["count"] for r in matches.groupBy("pattern").count().collect()}
    embedded = sorted(match_json(m) for m in Engine(net).run(open_events(spec)))
    same = sorted(r.json for r in matches.select("json").collect()) == embedded
    print(f"matches per pattern: {counts}; the same as the embedded engine's: {same}")
    if own:
        spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
