"""Tests of the CSV event reader: exact events, exact errors (JSON Lines, Parquet and tables:
test_formats.py; values and timestamps: test_timestamps.py)."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import itertools
from collections.abc import Generator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petricep.errors import ConfigError, EventError, EventOrderError, PetricepError
from petricep.events import Event
from petricep.io import InputSpec, infer_format, open_events
from petricep.io import textfiles as textfiles_mod
from petricep.io.timestamps import TimeParser
from petricep.io.values import type_text_column
from tests.budget import examples
from tests.io.reading import DATA, E, cell, error_of, read, skip_read, write

OPENCEP_COLUMNS = ("ticker", "ts", "open", "peak", "low", "close", "volume")

# --------------------------------------------------------------------------------------
# CSV with a header


def test_csv_header_basic(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", "type,ts,id,price,name,note\nA,1,10,1.5,x,\nB,2,11,7,y,hi\nA,2,12,-3,,z\n")
    src = open_events(InputSpec(p, type_field="type", time_field="ts", id_field="id"))
    assert src.columns == ("type", "ts", "id", "price", "name", "note")
    assert src.time_kind == "number"
    assert list(src) == [
        E("A", 1, 0, 10, type="A", ts=1, id=10, price=1.5, name="x", note=None),
        E("B", 2, 1, 11, type="B", ts=2, id=11, price=7, name="y", note="hi"),
        E("A", 2, 2, 12, type="A", ts=2, id=12, price=-3, name=None, note="z"),
    ]
    assert (src.rows_read, src.rows_rejected) == (3, 0)


def test_csv_value_types_exact(tmp_path: Path) -> None:
    p = write(
        tmp_path, "v.csv", 'v\n5\n+5\n-0\n007\n1.5\n.5\n5.\n1e3\n-2.5E-2\nnan\ninf\n0x10\n 5\nabc\n""\n'
    )
    events = read(p, type_const="T")
    got = [e.attrs["v"] for e in events]
    assert got == [5, 5, 0, 7, 1.5, 0.5, 5.0, 1000.0, -0.025, "nan", "inf", "0x10", " 5", "abc", None]
    assert [type(v) for v in got[:9]] == [int, int, int, int, float, float, float, float, float]


def test_csv_type_const_positions(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", "a,b\n1,x\n2,y\n")
    src = open_events(InputSpec(p, type_const="stock"))
    assert src.time_kind == "number"
    assert list(src) == [E("stock", 0, 0, 0, a=1, b="x"), E("stock", 1, 1, 1, a=2, b="y")]


def test_csv_iso_timestamps(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "t.csv",
        "k,TIMESTAMP\n"
        "a,2014-08-01T07:50:00\n"
        "a,2014-08-01T07:50:00.5\n"
        "a,2014-08-01 07:51:00Z\n"
        "a,2014-08-01T09:52:00+02:00\n"
        "a,2014-08-02\n",
    )
    src = open_events(InputSpec(p, type_field="k", time_field="TIMESTAMP"))
    assert src.time_kind == "datetime"
    base = 1406879400  # 2014-08-01T07:50:00Z
    assert [e.ts for e in src] == [base, base + 0.5, base + 60, base + 120, 1406937600]
    assert [type(e.ts) for e in src] == [int, float, int, int, int]


def test_csv_headerless_opencep(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "NASDAQ.txt",
        "DRIV,200802010900,33.58,33.59,33.58,33.59,5650\nMSFT,200802010900,31.32,31.32,31.25,31.25,199424\n",
    )
    src = open_events(
        InputSpec(p, columns=OPENCEP_COLUMNS, type_field="ticker", time_field="ts", time_format="%Y%m%d%H%M")
    )
    assert src.columns == OPENCEP_COLUMNS
    assert src.time_kind == "datetime"
    ts = int(datetime(2008, 2, 1, 9, 0, tzinfo=timezone.utc).timestamp())
    assert list(src) == [
        E(
            "DRIV",
            ts,
            0,
            None,
            ticker="DRIV",
            ts=200802010900,
            open=33.58,
            peak=33.59,
            low=33.58,
            close=33.59,
            volume=5650,
        ),
        E(
            "MSFT",
            ts,
            1,
            None,
            ticker="MSFT",
            ts=200802010900,
            open=31.32,
            peak=31.32,
            low=31.25,
            close=31.25,
            volume=199424,
        ),
    ]


def test_csv_space_delimiter_time_of_day(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "trades.txt",
        "ORCL 1258971 900 11.0400 18:41:05.141 B\nORCL 1258972 1022 11.0500 18:41:06 S\n",
    )
    cols = ("symbol", "seq", "volume", "price", "time", "side")
    src = open_events(
        InputSpec(
            p,
            columns=cols,
            delimiter=" ",
            type_field="symbol",
            time_field="time",
            id_field="seq",
            time_format="%H:%M:%S.%f",
        )
    )
    with pytest.raises(EventError) as info:
        list(src)
    # the second line has no fraction: "%H:%M:%S.%f" does not match it
    assert info.value.message == "cannot parse timestamp '18:41:06'"
    assert (info.value.row, info.value.field) == (2, "time")
    p2 = write(
        tmp_path,
        "trades2.txt",
        "ORCL 1258971 900 11.0400 18:41:05.141 B\nORCL 1258972 1022 11.0500 18:41:06.000 S\n",
    )
    events = read(
        p2,
        columns=cols,
        delimiter=" ",
        type_field="symbol",
        time_field="time",
        id_field="seq",
        time_format="%H:%M:%S.%f",
    )
    assert events == [
        E(
            "ORCL",
            18 * 3600 + 41 * 60 + 5.141,
            0,
            1258971,
            symbol="ORCL",
            seq=1258971,
            volume=900,
            price=11.04,
            time="18:41:05.141",
            side="B",
        ),
        E(
            "ORCL",
            18 * 3600 + 41 * 60 + 6,
            1,
            1258972,
            symbol="ORCL",
            seq=1258972,
            volume=1022,
            price=11.05,
            time="18:41:06.000",
            side="S",
        ),
    ]
    assert type(events[1].ts) is int


def test_csv_gzip_and_bz2(tmp_path: Path) -> None:
    text = "type,ts\nA,1\nB,2\n"
    expected = [E("A", 1, 0, type="A", ts=1), E("B", 2, 1, type="B", ts=2)]
    assert read(write(tmp_path, "e.csv.gz", text), type_field="type", time_field="ts") == expected
    p = tmp_path / "e.csv.bz2"
    p.write_bytes(bz2.compress(text.encode()))
    assert read(str(p), type_field="type", time_field="ts") == expected
    # gzip content under a plain name is recognised by its magic bytes
    p2 = tmp_path / "plain.csv"
    p2.write_bytes(gzip.compress(text.encode()))
    assert read(str(p2), type_field="type", time_field="ts") == expected


@pytest.mark.parametrize("name", ["e.csv", "e.csv.gz"])
@pytest.mark.parametrize("width", [10, 70_000])
def test_header_and_first_row_past_the_peek(tmp_path: Path, name: str, width: int) -> None:
    """The header and the first row are peeked at 64 KiB at a time: a header (and a first
    row) longer than that is read whole, and the time kind comes from the first row."""
    pad = [f"c{i}" for i in range(width // 8)]
    text = ",".join(["type", "ts", *pad]) + "\n"
    text += "\n".join(",".join(["A", "2014-08-01T07:50:0" + str(i), *(["x" * 6] * len(pad))]) for i in range(3)) + "\n"
    events = read(write(tmp_path, name, text), type_field="type", time_field="ts")
    assert [(e.type, e.ts, e.pos) for e in events] == [("A", 1406879400 + i, i) for i in range(3)]
    assert len(events[0].attrs) == 2 + len(pad) and events[2].attrs[pad[-1]] == "xxxxxx"


def test_csv_crlf_bom_quotes_blank_lines(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", '\ufefftype,ts,name\r\nA,1,"x, y"\r\n\r\nB,2,"say ""hi"""\r\n\nA,x,z\r\n')
    err = error_of(p, type_field="type", time_field="ts")
    assert (err.row, err.field, err.message) == (6, "ts", "cannot parse timestamp 'x'")
    events, src, rejects = skip_read(tmp_path, p, type_field="type", time_field="ts")
    assert events == [
        E("A", 1, 0, type="A", ts=1, name="x, y"),
        E("B", 2, 1, type="B", ts=2, name='say "hi"'),
    ]
    assert (src.rows_read, src.rows_rejected) == (3, 1)
    assert rejects == [{"row": 6, "field": "ts", "error": "cannot parse timestamp 'x'", "raw": "A,x,z"}]


def test_time_unit(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", "type,ts\nA,1000\nA,1500\nA,2000.0\n")
    assert [e.ts for e in read(p, type_field="type", time_field="ts", time_unit="ms")] == [1, 1.5, 2.0]
    assert [e.ts for e in read(p, type_field="type", time_field="ts")] == [1000, 1500, 2000.0]
    src = open_events(InputSpec(p, type_field="type", time_field="ts", time_unit="ms"))
    assert src.time_kind == "number" and src.ts_in_seconds


# --------------------------------------------------------------------------------------
# errors, fail and skip mode (CSV)

HEADER = "type,ts,id,x\n"


def test_missing_columns_at_open(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", HEADER + "A,1,1,1\n")
    for kw, missing in [
        ({"type_field": "kind"}, "kind"),
        ({"type_field": "type", "time_field": "time"}, "time"),
        ({"type_field": "type", "id_field": "key"}, "key"),
        ({"type_field": "type", "required": {"A": frozenset({"y"})}}, "y"),
        ({"type_field": "type", "numeric": {"*": frozenset({"z"})}}, "z"),
    ]:
        for mode in ("fail", "skip"):
            with pytest.raises(EventError) as info:
                open_events(InputSpec(p, on_error=mode, **kw))  # type: ignore[arg-type]
            e = info.value
            assert (e.message, e.row, e.field, e.file) == (f"missing column {missing!r}", 1, missing, p)
            assert str(e) == f"{p}:1: field {missing!r}: error: missing column {missing!r}"
    # with a constant type, rules of other types do not need their columns
    assert len(read(p, type_const="A", required={"B": frozenset({"nope"})})) == 1
    # headerless: no line to point at
    p2 = write(tmp_path, "e.txt", "A,1\n")
    with pytest.raises(EventError) as info:
        open_events(InputSpec(p2, columns=("type", "ts"), type_field="type", time_field="time"))
    assert (info.value.message, info.value.row, info.value.field) == ("missing column 'time'", None, "time")


def test_bad_timestamp(tmp_path: Path) -> None:
    p = write(
        tmp_path, "e.csv", HEADER + "A,2014-08-01T00:00:00,1,1\nA,2014-13-45,2,2\nA,2014-08-01T00:00:01,3,3\n"
    )
    e = error_of(p, type_field="type", time_field="ts", id_field="id")
    assert (e.message, e.row, e.field) == ("cannot parse timestamp '2014-13-45'", 3, "ts")
    assert str(e) == f"{p}:3: field 'ts': error: cannot parse timestamp '2014-13-45'"
    events, src, rejects = skip_read(tmp_path, p, type_field="type", time_field="ts", id_field="id")
    assert [(e.pos, e.id, e.ts) for e in events] == [(0, 1, 1406851200), (2, 3, 1406851201)]
    assert (src.rows_read, src.rows_rejected) == (3, 1)
    assert rejects == [
        {"row": 3, "field": "ts", "error": "cannot parse timestamp '2014-13-45'", "raw": "A,2014-13-45,2,2"}
    ]


def test_empty_timestamp_and_mixed_kinds(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", "type,ts\nA,1\nA,\nA,2014-08-01T00:00:00\nA,3\n")
    events, src, rejects = skip_read(tmp_path, p, type_field="type", time_field="ts")
    assert [e.ts for e in events] == [1, 3]
    assert rejects == [
        {"row": 3, "field": "ts", "error": "cannot parse timestamp ''", "raw": "A,"},
        {
            "row": 4,
            "field": "ts",
            "error": "cannot parse timestamp '2014-08-01T00:00:00'",
            "raw": "A,2014-08-01T00:00:00",
        },
    ]


def test_non_numeric(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", HEADER + "A,1,1,5\nB,2,2,abc\nA,3,3,abc\nA,4,4,\nA,5,5,2.5\n")
    kw: dict[str, Any] = {
        "type_field": "type",
        "time_field": "ts",
        "id_field": "id",
        "numeric": {"A": frozenset({"x"})},
    }
    e = error_of(p, **kw)
    assert (e.message, e.row, e.field) == ("expected a number, got 'abc'", 4, "x")
    events, src, rejects = skip_read(tmp_path, p, **kw)
    assert [(e.type, e.id, e.attrs["x"]) for e in events] == [("A", 1, 5), ("B", 2, "abc"), ("A", 5, 2.5)]
    assert (src.rows_read, src.rows_rejected) == (5, 2)
    assert rejects == [
        {"row": 4, "field": "x", "error": "expected a number, got 'abc'", "raw": "A,3,3,abc"},
        {"row": 5, "field": "x", "error": "missing value", "raw": "A,4,4,"},
    ]


def test_required_star(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", HEADER + "A,1,1,5\nB,2,2,\n")
    e = error_of(p, type_field="type", time_field="ts", required={"*": {"x"}})
    assert (e.message, e.row, e.field) == ("missing value", 3, "x")


def test_wrong_field_count(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", HEADER + "A,1,1,1\nA,2,2\nA,3,3,3,3\nA,4,4,4\n")
    e = error_of(p, type_field="type", time_field="ts", id_field="id")
    assert (e.message, e.row, e.field) == ("expected 4 fields, got 3", 3, None)
    assert str(e) == f"{p}:3: error: expected 4 fields, got 3"
    events, src, rejects = skip_read(tmp_path, p, type_field="type", time_field="ts", id_field="id")
    assert [(e.pos, e.id) for e in events] == [(0, 1), (3, 4)]
    assert (src.rows_read, src.rows_rejected) == (4, 2)
    assert rejects == [
        {"row": 3, "field": None, "error": "expected 4 fields, got 3", "raw": "A,2,2"},
        {"row": 4, "field": None, "error": "expected 4 fields, got 5", "raw": "A,3,3,3,3"},
    ]


def test_nine_fields_message(tmp_path: Path) -> None:
    cols = tuple(f"c{i}" for i in range(9))
    p = write(tmp_path, "e.txt", "1,2,3,4,5,6,7,8,9\n1,2,3,4,5,6,7\n")
    e = error_of(p, columns=cols, type_const="T")
    assert (e.message, e.row) == ("expected 9 fields, got 7", 2)


def test_order(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", "type,ts\nA,7\nA,7\nA,5\nA,6\nA,8\n")
    with pytest.raises(EventOrderError) as info:
        read(p, type_field="type", time_field="ts")
    e = info.value
    assert e.message == "timestamp 5 is before the previous event's 7 (input must be in time order)"
    assert (e.row, e.field) == (4, "ts")
    assert isinstance(e, EventError)
    events, src, rejects = skip_read(tmp_path, p, type_field="type", time_field="ts")
    assert [(e.pos, e.ts) for e in events] == [(0, 7), (1, 7), (4, 8)]
    assert rejects == [
        {
            "row": 4,
            "field": "ts",
            "error": "timestamp 5 is before the previous event's 7 (input must be in time order)",
            "raw": "A,5",
        },
        {
            "row": 5,
            "field": "ts",
            "error": "timestamp 6 is before the previous event's 7 (input must be in time order)",
            "raw": "A,6",
        },
    ]


def test_missing_type_value_and_id(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", HEADER + ",1,1,1\nA,2,,2\nA,3,3,3\n")
    events, src, rejects = skip_read(tmp_path, p, type_field="type", time_field="ts", id_field="id")
    assert [e.id for e in events] == [3]
    assert rejects == [
        {"row": 2, "field": "type", "error": "missing value", "raw": ",1,1,1"},
        {"row": 3, "field": "id", "error": "missing value", "raw": "A,2,,2"},
    ]


def test_invalid_utf8_row(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", b"type,ts\nA,1\n\xff\xfe,2\nA,3\n")
    e = error_of(p, type_field="type", time_field="ts")
    assert (e.message, e.row, e.field) == ("invalid UTF-8 text", 3, None)
    events, src, rejects = skip_read(tmp_path, p, type_field="type", time_field="ts")
    assert [e.ts for e in events] == [1, 3]
    assert rejects == [{"row": 3, "field": None, "error": "invalid UTF-8 text", "raw": "\ufffd\ufffd,2"}]


def test_fail_mode_yields_good_rows_first(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", "type,ts\nA,1\nA,2\nA,x\nA,4\n")
    src = open_events(InputSpec(p, type_field="type", time_field="ts"))
    got = []
    with pytest.raises(EventError):
        for e in src:
            got.append(e.ts)
    assert got == [1, 2]
    assert src.rows_read == 3


def test_empty_and_header_only_files(tmp_path: Path) -> None:
    assert read(write(tmp_path, "h.csv", "type,ts\n"), type_field="type", time_field="ts") == []
    assert read(write(tmp_path, "h2.csv", "type,ts"), type_field="type", time_field="ts") == []
    assert read(write(tmp_path, "e.csv", ""), type_const="A") == []
    with pytest.raises(EventError) as info:
        open_events(InputSpec(write(tmp_path, "e2.csv", ""), type_field="type"))
    assert info.value.message == "missing column 'type'"
    with pytest.raises(EventError) as info:
        open_events(InputSpec(write(tmp_path, "d.csv", "a,b,a\n1,2,3\n"), type_const="T"))
    assert (info.value.message, info.value.row) == ("duplicate column 'a'", 1)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(EventError) as info:
        open_events(InputSpec(str(tmp_path / "nope.csv"), type_const="A"))
    assert info.value.message == "cannot open file: no such file"


# --------------------------------------------------------------------------------------
# many chunks: the fast (Arrow) and slow (line by line) paths agree


def _big_csv(n: int, bad: dict[int, str]) -> str:
    lines = ["type,ts,id,v,w"]
    for i in range(n):
        lines.append(
            bad.get(i, f"{'AB'[i % 2]},{i // 3},{1000 + i},{i * 0.5},{'w' + str(i % 5) if i % 7 else ''}")
        )
    return "\n".join(lines) + "\n"


def test_chunks_line_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textfiles_mod, "_CHUNK", 257)
    text = _big_csv(500, {100: "A,zz,1100,1,w", 101: "", 350: "A,1,1350"})
    p = write(tmp_path, "big.csv", text)
    events, src, rejects = skip_read(tmp_path, p, type_field="type", time_field="ts", id_field="id")
    # line of data row i is i + 2; row 101 is a blank line (not a row)
    assert rejects == [
        {"row": 102, "field": "ts", "error": "cannot parse timestamp 'zz'", "raw": "A,zz,1100,1,w"},
        {"row": 352, "field": None, "error": "expected 5 fields, got 3", "raw": "A,1,1350"},
    ]
    assert src.rows_read == 499 and src.rows_rejected == 2 and len(events) == 497
    assert [e.pos for e in events[:101]] == list(range(100)) + [101]
    e = events[-1]
    assert (e.type, e.ts, e.pos, e.id, e.attrs) == (
        "B",
        166,
        498,
        1499,
        {"type": "B", "ts": 166, "id": 1499, "v": 249.5, "w": "w4"},
    )


def _no_stream(self: Any, run: Any) -> Generator[Event, None, int]:
    """No Arrow stream (petricep.io.csvstream) either: the slow path reads every line."""
    return 0
    yield  # pragma: no cover


def test_fast_and_slow_paths_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textfiles_mod, "_CHUNK", 1000)
    p = write(tmp_path, "big.csv", _big_csv(2000, {}))
    kw: dict[str, Any] = {"type_field": "type", "time_field": "ts", "id_field": "id"}
    fast = read(p, **kw)
    monkeypatch.setattr(textfiles_mod.CsvSource, "_fast", lambda self, run, chunk: None)
    monkeypatch.setattr(textfiles_mod.CsvSource, "_stream", _no_stream)
    slow = read(p, **kw)
    assert fast == slow and len(fast) == 2000
    assert [type(e.attrs["v"]) for e in fast[:3]] == [float, float, float]



@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(cell, cell, st.integers(0, 3)), min_size=1, max_size=40))
def test_fast_slow_property(tmp_path: Path, rows: list[tuple[str, str, int]]) -> None:
    text = "type,a,b,ts\n" + "".join(f"T,{a},{b},{t}\n" for a, b, t in sorted(rows, key=lambda r: r[2]))
    p = write(tmp_path, "prop.csv", text)
    kw: dict[str, Any] = {"type_field": "type", "time_field": "ts", "on_error": "skip"}
    fast = read(p, **kw)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(textfiles_mod.CsvSource, "_fast", lambda self, run, chunk: None)
        m.setattr(textfiles_mod.CsvSource, "_stream", _no_stream)
        slow = read(p, **kw)
    assert fast == slow
    assert [repr(e) for e in fast] == [repr(e) for e in slow]


# --------------------------------------------------------------------------------------
# options


def test_infer_format() -> None:
    for name, fmt in [
        ("a.csv", "csv"),
        ("a.CSV.gz", "csv"),
        ("x/a.txt", "csv"),
        ("a.dat", "csv"),
        ("a.jsonl", "jsonl"),
        ("a.ndjson.gz", "jsonl"),
        ("a.json", "jsonl"),
        ("a.parquet", "parquet"),
        ("a.pq", "parquet"),
    ]:
        assert infer_format(name) == fmt
    for bad in ("a.xlsx", "a", "a.parquet.gz"):
        with pytest.raises(ConfigError):
            infer_format(bad)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"type_field": "a", "type_const": "A"},
        {"type_const": "A", "format": "xml"},
        {"type_const": "A", "on_error": "ignore"},
        {"type_const": "A", "rejects_path": "r.jsonl"},
        {"type_const": "A", "time_field": "t", "time_unit": "min"},
        {"type_const": "A", "time_unit": "s"},
        {"type_const": "A", "time_field": "t", "time_unit": "s", "time_format": "%Y"},
        {"type_const": "A", "delimiter": ";;"},
        {"type_const": "A", "columns": ("a", "a")},
        {"type_const": "A", "required": {"A": "price"}},
        {"type_const": "A", "format": "jsonl", "delimiter": ";"},
        {"type_const": "A", "format": "jsonl", "columns": ("a",)},
    ],
)
def test_config_errors(tmp_path: Path, kw: dict[str, Any]) -> None:
    p = write(tmp_path, "e.csv", "a,t\n1,2\n")
    with pytest.raises(ConfigError):
        open_events(InputSpec(p, **kw))


def test_time_kind_before_iteration(tmp_path: Path) -> None:
    p = write(tmp_path, "e.csv", "k,t\nA,2014-08-01T07:50:00\n")
    src = open_events(InputSpec(p, type_field="k", time_field="t"))
    assert src.time_kind == "datetime" and src.rows_read == 0
    p2 = write(tmp_path, "e2.csv", "k,t\nA,12.5\n")
    assert open_events(InputSpec(p2, type_field="k", time_field="t")).time_kind == "number"


# --------------------------------------------------------------------------------------
# fuzz: garbage in, only PetricepError out


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.one_of(
        st.binary(max_size=300),
        st.lists(
            st.text(alphabet=st.sampled_from(list('ab1,.:-" \r\n\t{}[]\x00é')), max_size=30), max_size=10
        ).map(lambda ls: "\n".join(ls).encode("utf-8")),
    ),
    fmt=st.sampled_from(["csv", "jsonl"]),
    mode=st.sampled_from(["fail", "skip"]),
    header=st.booleans(),
    gz=st.booleans(),
)
def test_fuzz_readers(tmp_path: Path, data: bytes, fmt: str, mode: str, header: bool, gz: bool) -> None:
    name = f"fuzz.{fmt}" + (".gz" if gz else "")
    p = tmp_path / name
    p.write_bytes(gzip.compress(data) if gz else data)
    kw: dict[str, Any] = {"on_error": mode}
    if fmt == "csv" and not header:
        kw["columns"] = ("a", "b")
    try:
        src = open_events(
            InputSpec(str(p), type_field="a", time_field="b", numeric={"*": frozenset({"a"})}, **kw)
        )
        _ = src.time_kind
        events = list(src)
    except PetricepError:
        return
    for e in events:
        assert isinstance(e, Event) and isinstance(e.type, str)
    # every row read was accepted or rejected
    assert src.rows_read == len(events) + src.rows_rejected


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200))
def test_fuzz_truncated_gzip(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "t.csv.gz"
    p.write_bytes(gzip.compress(b"a,b\n" + data)[: max(3, len(data) // 2)])
    with contextlib.suppress(PetricepError):
        list(open_events(InputSpec(str(p), type_const="T")))


# --------------------------------------------------------------------------------------
# the real data sets


def _need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} not available")


def test_aarhus_first_rows() -> None:
    path = DATA / "aarhus_traffic" / "aarhus_traffic_2014-08-01_to_14.csv.gz"
    _need(path)
    src = open_events(InputSpec(str(path), type_const="traffic", time_field="TIMESTAMP", id_field="_id"))
    assert src.columns == (
        "status", "avgMeasuredTime", "avgSpeed", "extID", "medianMeasuredTime",
        "TIMESTAMP", "vehicleCount", "_id", "REPORT_ID",
    )  # fmt: skip
    assert src.time_kind == "datetime"
    events = list(itertools.islice(src, 10_000))
    assert len(events) == 10_000
    assert events[0] == E(
        "traffic", 1406879400, 0, 20746220,
        status="OK", avgMeasuredTime=74, avgSpeed=50, extID=668, medianMeasuredTime=74,
        TIMESTAMP="2014-08-01T07:50:00", vehicleCount=5, _id=20746220, REPORT_ID=158324,
    )  # fmt: skip
    assert [e.pos for e in events] == list(range(10_000))
    assert all(a.ts <= b.ts for a, b in itertools.pairwise(events))


def test_nasdaq_medium() -> None:
    path = DATA / "opencep_events" / "NASDAQ_MEDIUM.txt"
    _need(path)
    src = open_events(
        InputSpec(
            str(path), columns=OPENCEP_COLUMNS, type_field="ticker", time_field="ts", time_format="%Y%m%d%H%M"
        )
    )
    events = list(itertools.islice(src, 10_000))
    assert len(events) == 1652 and src.rows_rejected == 0
    assert {e.type for e in events} == {"MSFT", "DRIV", "ORLY", "CBRL"}
    assert events[0] == E(
        "DRIV", 1201856400, 0, None,
        ticker="DRIV", ts=200802010900, open=33.58, peak=33.59, low=33.58, close=33.59, volume=5650,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("type,ts\n\n\r\nA,1\nB,2\n", {"type": "A", "ts": "1"}),
        ("type,ts\r\nA,1\r\n", {"type": "A", "ts": "1"}),
        ("type,ts\nA,1", {"type": "A", "ts": "1"}),
        ("type,ts\n\n\n", None),
        ("type,ts\nA,1,2\nB,2\n", None),  # not a whole row
        ("type,ts\n" + "\n" * (5 << 20) + "A,1\n", {"type": "A", "ts": "1"}),  # past the first chunk
    ],
)
def test_first_row_is_the_first_line_that_is_not_blank(tmp_path: Path, text: str, first: dict[str, str] | None) -> None:
    """The first row (the time kind is told from it) is found line by line, not by
    splitting the whole first chunk: the same row as before."""
    p = tmp_path / "ev.csv"
    p.write_text(text)
    assert open_events(InputSpec(str(p), type_field="type")).first_row() == first
    j = tmp_path / "ev.jsonl"
    j.write_text("\n  \n" + "".join(f'{{"type": "{t}", "ts": {n}}}\n' for t, n in (("A", 1), ("B", 2))))
    assert open_events(InputSpec(str(j), type_field="type")).first_row() == {"type": "A", "ts": 1}


@pytest.mark.parametrize(
    "cells",
    [
        ["0", "1", "2"], ["-3", "007", "+4"], ["1.5", ".5", "2e3"], ["1", "2.5"], ["9223372036854775808", "1"],
        ["1e400", "1.0"], ["", "1"], ["2014-08-01T07:50:00", "2014-08-01T07:55:00"], ["0x10", "1"], ["5", "5"],
    ],
)  # fmt: skip
@pytest.mark.parametrize("unit", [None, "ms"])
def test_time_column_taken_as_typed_is_the_parse(cells: list[str], unit: str | None) -> None:
    """The reader hands the time column as it typed its cells: where that is a numbers array
    the parse would give the same (values, dtype, kind); elsewhere the text is parsed."""
    arr = pa.array(cells, pa.string())
    if "" in cells:
        arr = pa.array([c or None for c in cells], pa.string())
    typed, _ = type_text_column(arr)
    parser = TimeParser(None, unit)
    got, want = parser.parse_column(arr, typed), TimeParser(None, unit).parse_column(arr)
    if want is None:
        assert got is None
        return
    assert got is not None and got[1] == want[1]
    assert type(got[0]) is type(want[0]) and list(got[0]) == list(want[0])
    if isinstance(want[0], np.ndarray):
        assert isinstance(got[0], np.ndarray)
        assert got[0].dtype == want[0].dtype


def test_a_lone_surrogate_escape_in_json_is_an_error_of_its_row(tmp_path: Path) -> None:
    """``"\\ud800"`` is valid JSON syntax but not text: no UTF-8 output or Arrow column holds
    it (RETURN and --with-events copied it into a UnicodeEncodeError, issue 43). Its row is
    refused as a line of invalid UTF-8 is; a pair of escapes is one character and is read."""
    lines = ['{"type": "A", "ts": 1, "s": "x\\ud83d\\ude00y"}', '{"type": "A", "ts": 2, "s": "x\\ud800y"}',
             '{"type": "A", "ts": 3, "n": {"\\udc00": 1}}', '{"type": "A", "ts": 4, "s": "\\\\ud800"}']
    p = write(tmp_path, "e.jsonl", "\n".join(lines) + "\n")
    e = error_of(p, type_field="type", time_field="ts")
    message = "invalid JSON: a lone surrogate escape (\\ud800-\\udfff) is not text"
    assert (e.message, e.row, e.field) == (message, 2, None)
    events, src, rejects = skip_read(tmp_path, p, type_field="type", time_field="ts")
    assert [(e.ts, e.attrs.get("s")) for e in events] == [(1, "x\U0001f600y"), (4, "\\ud800")]
    assert [(r["row"], r["error"]) for r in rejects] == [(2, message), (3, message)]
