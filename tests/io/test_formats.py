"""Reading JSON Lines, Parquet, Arrow and pandas tables and Python records: exact events,
exact errors (the CSV reader's tests: test_readers.py)."""

from __future__ import annotations

from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from petricep.errors import EventError
from petricep.io import InputSpec, events_from_records, events_from_table, open_events
from tests.io.reading import E, error_of, read, skip_read, write

# --------------------------------------------------------------------------------------
# JSON Lines


def test_jsonl_basic(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "e.jsonl",
        '{"type": "A", "ts": 1, "price": 2.5, "tags": [1, 2], "ok": true, "s": "5"}\n'
        "\n"
        '{"type": "B", "ts": 1.5, "price": 3, "n": null}\n',
    )
    src = open_events(InputSpec(p, type_field="type", time_field="ts"))
    assert src.columns == ("type", "ts", "price", "tags", "ok", "s")
    assert list(src) == [
        E("A", 1, 0, type="A", ts=1, price=2.5, tags=[1, 2], ok=True, s="5"),
        E("B", 1.5, 1, type="B", ts=1.5, price=3, n=None),
    ]


def test_jsonl_gzip_iso_id(tmp_path: Path) -> None:
    p = write(tmp_path, "e.ndjson.gz", '{"k": "A", "t": "2014-08-01T07:50:00", "id": "e1"}\n')
    src = open_events(InputSpec(p, type_field="k", time_field="t", id_field="id"))
    assert src.time_kind == "datetime"
    assert list(src) == [E("A", 1406879400, 0, "e1", k="A", t="2014-08-01T07:50:00", id="e1")]


def test_jsonl_errors(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "e.jsonl",
        '{"type": "A", "ts": 1, "x": 1}\n'
        '{"type": "A", "x": 2}\n'
        '{"type": "A", "ts": 2, "x": "5"}\n'
        '{"type": "A", "ts": 3, "x": 3\n'
        "[1, 2]\n"
        '{"ts": 4, "x": 4}\n'
        '{"type": "A", "ts": "2014-13-45", "x": 5}\n'
        '{"type": "A", "ts": 0, "x": 6}\n'
        '{"type": "A", "ts": 9}\n'
        '{"type": "A", "ts": 10, "x": null}\n'
        '{"type": "A", "ts": 11, "x": true}\n'
        '{"type": 7, "ts": 12, "x": 7}\n',
    )
    kw: dict[str, Any] = {"type_field": "type", "time_field": "ts", "numeric": {"A": frozenset({"x"})}}
    e = error_of(p, **kw)
    assert (e.message, e.row, e.field) == ("missing field 'ts'", 2, "ts")
    events, src, rejects = skip_read(tmp_path, p, **kw)
    assert [(e.type, e.pos, e.ts) for e in events] == [("A", 0, 1), ("7", 11, 12)]
    assert (src.rows_read, src.rows_rejected) == (12, 10)
    assert [(r["row"], r["field"], r["error"]) for r in rejects] == [
        (2, "ts", "missing field 'ts'"),
        (3, "x", "expected a number, got '5'"),
        (4, None, "invalid JSON: Expecting ',' delimiter (column 30)"),
        (5, None, "invalid JSON: a line must hold one object"),
        (6, "type", "missing field 'type'"),
        (7, "ts", "cannot parse timestamp '2014-13-45'"),
        (8, "ts", "timestamp 0 is before the previous event's 1 (input must be in time order)"),
        (9, "x", "missing field 'x'"),
        (10, "x", "missing value"),
        (11, "x", "expected a number, got true"),
    ]
    assert rejects[2]["raw"] == '{"type": "A", "ts": 3, "x": 3'


def test_jsonl_invalid_first_line(tmp_path: Path) -> None:
    p = write(tmp_path, "e.jsonl", 'nope\n{"type": "A"}\n')
    src = open_events(InputSpec(p, type_field="type"))
    assert src.columns is None
    with pytest.raises(EventError) as info:
        list(src)
    assert (info.value.message, info.value.row) == ("invalid JSON: Expecting value (column 1)", 1)


# --------------------------------------------------------------------------------------
# Parquet, Arrow and pandas tables, records


def _table() -> pa.Table:
    return pa.table(
        {
            "sym": ["A", "B", "A"],
            "ts": [1, 2, 3],
            "price": [1.5, 2.0, None],
            "vol": [10, 20, 30],
        }
    )


def test_parquet(tmp_path: Path) -> None:
    p = str(tmp_path / "e.parquet")
    pq.write_table(_table(), p)
    src = open_events(InputSpec(p, type_field="sym", time_field="ts"))
    assert src.columns == ("sym", "ts", "price", "vol")
    assert list(src) == [
        E("A", 1, 0, sym="A", ts=1, price=1.5, vol=10),
        E("B", 2, 1, sym="B", ts=2, price=2.0, vol=20),
        E("A", 3, 2, sym="A", ts=3, price=None, vol=30),
    ]
    with pytest.raises(EventError) as info:
        open_events(InputSpec(p, type_field="sym", time_field="time", on_error="skip"))
    assert (info.value.message, info.value.row, info.value.field) == ("missing column 'time'", None, "time")
    e = error_of(p, type_field="sym", time_field="ts", numeric={"A": {"price"}})
    assert (e.message, e.row, e.field) == ("missing value", 2, "price")
    events, src, rejects = skip_read(tmp_path, p, type_field="sym", time_field="ts", numeric={"A": {"price"}})
    assert [e.pos for e in events] == [0, 1]
    assert rejects == [
        {
            "row": 2,
            "field": "price",
            "error": "missing value",
            "raw": {"sym": "A", "ts": 3, "price": None, "vol": 30},
        }
    ]


def test_parquet_timestamp_column(tmp_path: Path) -> None:
    t = pa.table(
        {
            "k": pa.array(["A", "A"]).dictionary_encode(),
            "t": pa.array(
                [datetime(2014, 8, 1, 7, 50), datetime(2014, 8, 1, 7, 50, 0, 250000)], pa.timestamp("us")
            ),
            "d": pa.array([date(2014, 8, 1), date(2014, 8, 2)]),
        }
    )
    p = str(tmp_path / "t.pq")
    pq.write_table(t, p)
    src = open_events(InputSpec(p, type_field="k", time_field="t"))
    assert src.time_kind == "datetime"
    assert [e.ts for e in src] == [1406879400, 1406879400.25]
    assert [e.ts for e in read(p, type_field="k", time_field="d")] == [1406851200, 1406937600]


def test_table_and_dataframe() -> None:
    spec = InputSpec("<table>", type_field="sym", time_field="ts", id_field="vol")
    expected = [
        E("A", 1, 0, 10, sym="A", ts=1, price=1.5, vol=10),
        E("B", 2, 1, 20, sym="B", ts=2, price=2.0, vol=20),
        E("A", 3, 2, 30, sym="A", ts=3, price=None, vol=30),
    ]
    assert list(events_from_table(_table(), spec)) == expected
    assert list(events_from_table(_table().to_batches()[0], spec)) == expected
    df = _table().to_pandas()
    assert list(events_from_table(df, spec)) == expected
    with pytest.raises(EventError) as info:
        events_from_table(df, InputSpec("<table>", type_field="nope"))
    assert str(info.value) == "<table>: field 'nope': error: missing column 'nope'"


def test_dataframe_datetime_and_mixed_objects() -> None:
    df = pd.DataFrame(
        {"k": ["A", "B"], "t": pd.to_datetime(["2014-08-01 07:50", "2014-08-01 07:55"]), "o": [1, "x"]}
    )
    src = events_from_table(df, InputSpec("<df>", type_field="k", time_field="t"))
    events = list(src)
    assert [(e.type, e.ts, e.attrs["o"]) for e in events] == [("A", 1406879400, 1), ("B", 1406879700, "x")]
    assert src.time_kind == "datetime"


def test_table_errors_row_index() -> None:
    t = pa.table({"k": ["A", None, "A", "A"], "t": [1, 2, 0, 3]})
    with pytest.raises(EventError) as info:
        list(events_from_table(t, InputSpec("<table>", type_field="k", time_field="t")))
    assert (info.value.row, info.value.field, info.value.message) == (1, "k", "missing value")
    skip = InputSpec("<table>", type_field="k", time_field="t", on_error="skip")
    src = events_from_table(t, skip, sort_by_time=False)  # as a stream's rows: the row back in time is rejected
    assert [(e.pos, e.ts) for e in src] == [(0, 1), (3, 3)]
    assert src.rows_rejected == 2
    src = events_from_table(t, skip)  # a table is read sorted by time: row 2 first
    assert [(e.pos, e.ts, src.input_row(e.pos)) for e in src] == [(0, 0, 2), (1, 1, 0), (3, 3, 3)]
    assert src.rows_rejected == 1


def test_records() -> None:
    recs = [{"k": "A", "t": 1, "v": 1}, {"k": "B", "t": 2, "v": "x"}]
    src = events_from_records(recs, InputSpec("", type_field="k", time_field="t"))
    assert src.columns == ("k", "t", "v")
    assert list(src) == [E("A", 1, 0, k="A", t=1, v=1), E("B", 2, 1, k="B", t=2, v="x")]
    assert len(list(src)) == 2  # a list can be read again
    gen = (r for r in recs)
    src2 = events_from_records(gen, InputSpec("", type_const="X"))
    assert [e.pos for e in src2] == [0, 1]
    with pytest.raises(EventError) as info:
        list(events_from_records([{"k": "A"}, 5], InputSpec("", type_field="k")))  # type: ignore[list-item]
    assert str(info.value) == "<records>:1: error: expected a mapping, got int"
    with pytest.raises(EventError) as info:
        list(
            events_from_records(
                [{"k": "A", "t": 1}, {"k": "A"}], InputSpec("mine", type_field="k", time_field="t")
            )
        )
    assert str(info.value) == "mine:1: field 't': error: missing field 't'"


def test_records_datetime_values() -> None:
    recs = [
        {"k": "A", "t": datetime(2014, 8, 1, 9, 50, tzinfo=timezone.utc)},
        {"k": "A", "t": date(2014, 8, 2)},
    ]
    assert [e.ts for e in events_from_records(recs, InputSpec("", type_field="k", time_field="t"))] == [
        1406886600,
        1406937600,
    ]
