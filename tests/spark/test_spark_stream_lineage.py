"""A streaming query on Spark (``local[2]``) restarted on its checkpoint with other patterns
(issue 39, item 4; :mod:`petricep.spark.lineage`): the kept pattern's matches are the
uninterrupted run's, the added one's (a prefix of the kept one: one shared net were they
compiled together) a run of it over the events after the restart; the removed one gives
nothing after it; the restart says which is which."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from petricep.api import compile_text
from petricep.events import Event
from tests.spark.test_spark_batch import random_stream
from tests.spark.test_spark_stream import _stream_of, canonical
from tests.spark.test_stream_lineage import P, R, S, embedded

pytestmark = pytest.mark.spark


def _files(indir: Path, events: list[Event], first: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.spark.engines import ID, POS, TS, TYPE

    indir.mkdir(exist_ok=True)
    for i in range(0, len(events), 100):
        part = events[i : i + 100]
        table = pa.table({TYPE: [e.type for e in part], TS: [e.ts for e in part], ID: [e.id for e in part],
                          "k": [e.attrs["k"] for e in part], "x": [e.attrs["x"] for e in part],
                          POS: [e.pos for e in part]})  # fmt: skip
        path = indir / f"ev-{first + i // 100}.parquet"
        pq.write_table(table, path)
        os.utime(path, (1_000_000 + first + i // 100, 1_000_000 + first + i // 100))


def test_a_restart_adds_a_pattern_into_a_shared_net_and_removes_one(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    from petricep.io.readers import InputSpec
    from petricep.spark.streaming import StreamRun
    from tests.spark.engines import ID, POS, TS, TYPE

    events = random_stream(400, seed=11, keys=4)
    events = [Event(e.type if e.type in "ABC" else "A", e.ts, e.pos, e.id, e.attrs) for e in events]
    indir, ck = tmp_path / "in", str(tmp_path / "ck")
    spec = InputSpec(path=str(indir), type_field=TYPE, time_field=TS, id_field=ID)
    got: dict[str, list[str]] = {}
    notes = []
    for text, part, first in ((P + S, events[:200], 0), (P + R, events[200:], 2)):
        _files(indir, part, first)
        schema = spark.read.parquet(str(indir)).schema
        df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(indir))
        run = StreamRun(spark, compile_text(text), watermark=1)
        run.key_buckets(ck)
        notes.append(run.pattern_notes())
        lines, _ = _stream_of(run, run.events_from_dataframe(df, spec, F.col(POS) + 0), ck, starts=1)
        got[text] = lines
    assert notes == [[], ["kept: p; added: r (from the events after the restart); removed: s"]]
    after = [json.loads(x) for x in got[P + R]]
    before = [json.loads(x) for x in got[P + S]]
    # (the first run's flush released what was still open; the kept pattern's come from the second run)
    p_lines = canonical(
        [m for m in after if m["pattern"] == "p"] + [m for m in before if m["pattern"] == "p"]
    )
    assert len(p_lines) > 5
    assert sorted(set(p_lines)) == embedded(P, events, "p")
    assert canonical([m for m in after if m["pattern"] == "r"]) == embedded(R, events[200:], "r")
    assert not [m for m in after if m["pattern"] == "s"]
