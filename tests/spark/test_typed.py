"""Typed match columns on Spark (issue 14): ``ids`` and ``attrs`` as structs a Spark user
queries, start/end as timestamps when the input's times are date-times; the ``json``
column stays ``petricep run``'s record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from petricep.api import compile_text
from petricep.io.readers import InputSpec, open_events
from petricep.output.jsonl import match_json
from petricep.runtime.engine import Engine
from petricep.spark.batch import match_file
from petricep.spark.typed import Typing

pytestmark = pytest.mark.spark

NET = """
PATTERN rise: SEQ(A a, B+ b[], C c) WHERE [k] AND b[i].x > a.x AND c.x > a.x WITHIN 10
  RETURN Rise(k = a.k, gain = c.x - a.x, n = count(b[]), high = c.x > 5, label = a.tag, top = max(b[].x))
PATTERN again: SEQ(Rise r, A a) WHERE [k] AND a.x > r.gain WITHIN 20
"""
CSV = (
    "type,ts,k,x,tag\n"
    "A,2024-01-01T00:00:00,1,1,u\n"
    "B,2024-01-01T00:00:01,1,3,v\n"
    "B,2024-01-01T00:00:02,1,4,v\n"
    "C,2024-01-01T00:00:03,1,7,w\n"
    "A,2024-01-01T00:00:04,1,9,u\n"
)


def test_the_schema_follows_the_program() -> None:
    typing = Typing(compile_text(NET))
    assert typing.ids_fields() == [("a", "bigint"), ("b", "array<bigint>"), ("c", "bigint"), ("r", "string")]
    assert typing.attrs_fields() == [
        ("k", "string"),
        ("gain", "double"),
        ("n", "bigint"),
        ("high", "boolean"),
        ("label", "string"),
        ("top", "double"),
    ]
    assert Typing(compile_text(NET), text_ids=True).ids_fields()[1] == ("b", "array<string>")


def test_typed_columns_from_a_file(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "ev.csv"
    path.write_text(CSV)
    spec = InputSpec(path=str(path), type_field="type", time_field="ts")
    net = compile_text(NET)
    out = match_file(spark, spec, net)
    assert out.columns == ["pattern", "ids", "start", "end", "attrs", "json", "emitted_at"]
    types = dict(out.dtypes)
    assert types["ids"] == "struct<a:bigint,b:array<bigint>,c:bigint,r:string>"
    assert types["attrs"] == "struct<k:string,gain:double,n:bigint,high:boolean,label:string,top:double>"
    assert types["start"] == types["end"] == "timestamp"
    rows = out.collect()
    assert sorted((r.pattern, r.ids.b) for r in rows) == [
        ("again", None), ("again", None), ("again", None), ("rise", [1]), ("rise", [1, 2]), ("rise", [2])
    ]
    (rise,) = [r for r in rows if r.pattern == "rise" and r.ids.b == [1, 2]]
    assert (rise.ids.a, rise.ids.b, rise.ids.c, rise.ids.r) == (0, [1, 2], 3, None)
    assert (rise.attrs.gain, rise.attrs.n, rise.attrs.high, rise.attrs.label, rise.attrs.top) == (6.0, 2, True, "u", 4.0)
    assert rise.attrs.k == "1"  # a key read only for [k]: its digits, as text
    assert rise.start.isoformat() == "2024-01-01T00:00:00" and rise.end.isoformat() == "2024-01-01T00:00:03"
    assert sorted(r.ids.r for r in rows if r.pattern == "again") == ["rise[0,1+2,3]", "rise[0,1,3]", "rise[0,2,3]"]
    # the typed view reads the record petricep run writes, unchanged
    want = sorted(match_json(m) for m in Engine(net).run(open_events(spec)))
    assert sorted(r.json for r in out.collect()) == want
    assert json.loads(rise.json)["ids"] == {"a": 0, "b": [1, 2], "c": 3}


def test_numbers_stay_numbers_and_text_ids_stay_text(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "ev.jsonl"
    lines = [
        {"type": "A", "ts": 1, "id": "e1", "k": 1, "x": 1, "tag": "u"},
        {"type": "B", "ts": 2, "id": "e2", "k": 1, "x": 2, "tag": "v"},
        {"type": "C", "ts": 3, "id": "e3", "k": 1, "x": 9, "tag": "w"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    spec = InputSpec(path=str(path), type_field="type", time_field="ts", id_field="id")
    out = match_file(spark, spec, compile_text(NET))
    types = dict(out.dtypes)
    assert types["ids"] == "struct<a:string,b:array<string>,c:string,r:string>"
    assert types["start"] == types["end"] == "double"
    (row,) = out.collect()
    assert (row.ids.a, row.ids.b, row.ids.c, row.start, row.end) == ("e1", ["e2"], "e3", 1.0, 3.0)


def test_a_stream_gives_the_same_typed_columns(spark: Any, tmp_path: Path) -> None:
    """StreamRun.typed_matches: the batch API's columns on a streaming query (a date
    format in the input spec makes start/end timestamps)."""
    from petricep.spark.streaming import StreamRun

    indir = tmp_path / "in"
    indir.mkdir()
    rows = CSV.splitlines()
    (indir / "part-0.csv").write_text("seq," + rows[0] + "\n" + "".join(f"{i},{r}\n" for i, r in enumerate(rows[1:])))
    spec = InputSpec(
        path=str(indir), format="csv", type_field="type", time_field="ts", time_format="%Y-%m-%dT%H:%M:%S"
    )
    net = compile_text(NET)
    run = StreamRun(spark, net, watermark=0)
    stream = run.typed_matches(run.events_from_files(str(indir), spec, "seq"), spec)
    assert stream.columns == ["pattern", "ids", "start", "end", "attrs", "json", "emitted_at"]
    assert dict(stream.dtypes)["start"] == "timestamp"
    got: list[Any] = []
    query = (
        stream.writeStream.foreachBatch(lambda df, _id: got.extend(df.collect()))
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    rises = sorted((r.ids.a, r.ids.b, r.ids.c, r.attrs.gain, r.end.isoformat()) for r in got if r.pattern == "rise")
    assert rises == [
        (0, [1], 3, 6.0, "2024-01-01T00:00:03"),
        (0, [1, 2], 3, 6.0, "2024-01-01T00:00:03"),
        (0, [2], 3, 6.0, "2024-01-01T00:00:03"),
    ]
