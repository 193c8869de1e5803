"""A directory of event files watched by Spark Structured Streaming.

    python -m pip install -e ".[spark]"      # PySpark 4; Java 17 or 21 on the PATH
    python examples/spark_stream.py

The stock sample is cut into files of 5,000 events (each row keeps its arrival position
in a ``seq`` column: a stream has no row numbers of its own); the query reads one file
per micro-batch, keeps each key's engine state in the RocksDB state store, checkpoints,
and after the last file the end of the input is flushed from the final state. The union
of what it wrote equals a batch run. The command line does the same:

    petricep stream nets/sase_equal_price.pcep --input DIR --output OUT --checkpoint CK \\
        --type-field type --time-field ts --id-field id --pos-field seq --available-now --flush
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path
from typing import Any

from petricep.api import compile_files
from petricep.io.readers import InputSpec, open_events
from petricep.output.jsonl import match_json
from petricep.runtime.engine import Engine
from petricep.spark import StreamRun, get_session

HERE = Path(__file__).resolve().parent


def write_files(source: Path, directory: Path, per_file: int) -> int:
    rows = list(csv.DictReader(source.open()))
    directory.mkdir(parents=True)
    for i in range(0, len(rows), per_file):
        path = directory / f"stocks-{i // per_file:03d}.csv"
        with path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=[*rows[0], "seq"])
            w.writeheader()
            for seq, row in enumerate(rows[i : i + per_file], start=i):
                w.writerow({**row, "seq": seq})
    return len(rows)


def main(spark: Any = None) -> int:
    own = spark is None
    spark = spark or get_session("local[2]")
    net = compile_files([HERE.parent / "nets" / "sase_equal_price.pcep"])
    sample = HERE / "data" / "stocks.csv"
    with tempfile.TemporaryDirectory(prefix="petricep-stream-") as tmp:
        incoming = Path(tmp) / "incoming"
        n = write_files(sample, incoming, 5000)
        spec = InputSpec(path=str(incoming), type_field="type", time_field="ts", id_field="id")
        run = StreamRun(spark, net, watermark=0)
        checkpoint = str(Path(tmp) / "checkpoint")  # (the files' log too: arrival order)
        events = run.events_from_files(str(incoming), spec, pos_field="seq", max_files=1, checkpoint=checkpoint)
        got: list[str] = []

        def batch(df: Any, batch_id: int) -> None:
            rows = [r.json for r in df.select("json").collect()]
            got.extend(rows)
            print(f"micro-batch {batch_id}: {len(rows)} matches")

        query = (
            run.matches(events)
            .writeStream.foreachBatch(batch)
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        final = [r.json for r in run.flush(checkpoint).select("json").collect()]
        got.extend(final)
        print(f"end of input: {len(final)} more matches")
    want = sorted(
        match_json(m)
        for m in Engine(net).run(
            open_events(InputSpec(str(sample), type_field="type", time_field="ts", id_field="id"))
        )
    )
    print(f"{n} events, {len(got)} matches; the same as a batch run: {sorted(got) == want}")
    if own:
        spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
