"""The CSV reader's Arrow streaming path (petricep.io.csvstream) against the chunked reader it
stands in for: the same events (values, types, positions, ids), the same errors (message,
file, line, field), the same rejects, for any text, plain or gzip, with or without a row
filter; and it really is the path that reads a clean file.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import EventError
from petricep.events import Event
from petricep.io import InputSpec, csvstream, open_events
from petricep.io import textfiles as textfiles_mod
from petricep.runtime.prefilter import Prefilter
from tests.budget import examples

EXAMPLES = settings(
    max_examples=examples(300, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
NET = compile_text("PATTERN p: SEQ(A a, B b) WHERE a.x > 1 AND b.y < 3 WITHIN 10")

# cells both readers type alike whatever Arrow makes of them: every spelling of a number,
# numbers too big for int64, words that look like numbers, empty cells, spaces
CLEAN = [
    "1", "-3", "007", "-0", "+3", "0", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
    "123456789012345678901234567890", "2.5", "1.", ".5", "-.5", "1e5", "1E5", "-2.5E-3", "+1.5e+3", "1e400",
    "5e-400", "", "abc", "nan", "NaN", "inf", "-inf", "Infinity", "0x1f", "0X1F", "1_000", " 5", "5 ", " ",
    "x y", "true", "null", "é", "\x00", "2014-08-01T07:50:00",
]  # fmt: skip
# cells that send the reading back to the chunked reader (quotes, line ends, bad UTF-8)
TROUBLE = ['"a,b"', '"q"', '"', 'a"b', '""', '"x\ny"', "\r", "x\ry", "\udcff", "\ufeff"]


def _no_stream(self: Any, run: Any) -> Generator[Any, None, int]:
    """The reader as it was before the Arrow stream: the chunked reader from line 1."""
    return 0
    yield  # pragma: no cover


def usable(e: Event) -> bool:
    """Whether NET can use the event: the rows its filter must keep. It may keep others
    too (a batch it cannot judge), so which of those it keeps depends on the batches."""
    v = e.attrs.get("x" if e.type == "A" else "y")
    if not isinstance(v, (int, float)):
        return False
    return v > 1 if e.type == "A" else v < 3


def outcome(path: str, skip: bool, filtered: bool, **kw: Any) -> tuple[Any, ...]:
    """Everything a read shows: events (by repr: types count), the error, counts, rejects;
    ``filtered``: with NET's row filter, the events NET can use, as NET sees them."""
    rejects = path + ".rejects.jsonl"
    events: list[str] = []
    error = None
    src = None
    try:
        src = open_events(
            InputSpec(path, on_error="skip" if skip else "fail", rejects_path=rejects if skip else None, **kw)
        )
        if filtered:
            src.row_filter = Prefilter(NET)
        for e in src:
            if not filtered:
                events.append(repr(e))
            elif usable(e):  # and only the columns NET reads: the row-by-row reader keeps them all
                read = {"x", "y", kw.get("type_field"), kw.get("time_field"), kw.get("id_field")}
                events.append(repr(Event(e.type, e.ts, e.pos, e.id, {k: v for k, v in e.attrs.items() if k in read})))
    except EventError as e:
        error = (type(e).__name__, str(e), e.file, e.row, e.field)
    counts = (src.rows_read, src.rows_rejected) if src is not None else None
    text = Path(rejects).read_text(encoding="utf-8") if skip and os.path.exists(rejects) else None
    return events, error, counts, text


def both(path: str, skip: bool, filtered: bool, **kw: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    new = outcome(path, skip, filtered, **kw)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(textfiles_mod.CsvSource, "_stream", _no_stream)
        old = outcome(path, skip, filtered, **kw)
    return new, old


@st.composite
def csv_file(draw: st.DrawFn) -> str:
    """Clean rows with at most a couple of troubles in them (a troubled cell, a bad or
    decreasing timestamp, a short or long row, a blank line, a lone or doubled \\r), so
    that the stream reads some rows and the chunked reader the others."""
    # pyarrow's write_csv quotes every header: a quoted header is no trouble (the header
    # reader has checked it), a quote in a row still is
    lines = ['"type","ts","id","x","y","z"' if draw(st.booleans()) else "type,ts,id,x,y,z"]
    ts = 0
    for _ in range(draw(st.integers(0, 40))):
        ts += draw(st.sampled_from([0, 0, 1, 2]))
        row = [draw(st.sampled_from(["A", "B", "B"])), str(ts), str(draw(st.integers(0, 10**20)))]
        lines.append(",".join(row + [draw(st.sampled_from(CLEAN)) for _ in range(3)]))
    for _ in range(draw(st.integers(0, 2)) if len(lines) > 1 else 0):
        i = draw(st.integers(1, len(lines) - 1))
        row = lines[i].split(",")
        how = draw(st.integers(0, 3)) if len(row) == 6 else 2  # a row troubled before has fewer fields
        if how == 0:
            row[draw(st.integers(3, 5))] = draw(st.sampled_from(TROUBLE))
        elif how == 1:
            row[1] = draw(st.sampled_from(["zz", "", "1.5", "nan", "-1"]))
        elif how == 2:
            row = row[: draw(st.integers(0, 5))] if draw(st.booleans()) else row + ["extra"]
        else:
            row[-1] += draw(st.sampled_from(["\n", "\n\n", "\r\n\r\n", "\r", "\r\r", "\ufeff"]))
        lines[i] = ",".join(row)
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = end.join(lines) + draw(st.sampled_from([end, ""]))
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text


@EXAMPLES
@given(
    text=csv_file(),
    gz=st.booleans(),
    skip=st.booleans(),
    filtered=st.booleans(),
    with_id=st.booleans(),
    numeric=st.booleans(),
    chunk=st.one_of(st.integers(8, 300), st.just(4 << 20)),
    block=st.one_of(st.integers(8, 300), st.just(256 << 10)),
    rows=st.sampled_from([1, 5, 65_536]),
)
def test_same_as_the_chunked_reader(
    tmp_path: Path, text: str, gz: bool, skip: bool, filtered: bool, with_id: bool, numeric: bool,
    chunk: int, block: int, rows: int,
) -> None:  # fmt: skip
    data = text.encode("utf-8", "surrogateescape")
    path = tmp_path / ("t.csv.gz" if gz else "t.csv")
    path.write_bytes(gzip.compress(data) if gz else data)
    kw: dict[str, Any] = {"type_field": "type", "time_field": "ts"}
    if with_id:
        kw["id_field"] = "id"
    if numeric:
        kw["numeric"] = {"A": frozenset({"x"})}
    with pytest.MonkeyPatch.context() as m:
        m.setattr(textfiles_mod, "_CHUNK", chunk)
        m.setattr(csvstream, "BLOCK", block)
        m.setattr(csvstream, "ROWS", rows)
        new, old = both(str(path), skip, filtered, **kw)
    note(repr(data))
    assert new == old


@EXAMPLES
@given(
    rows=st.lists(st.lists(st.sampled_from(CLEAN), min_size=3, max_size=3), min_size=1, max_size=30),
    gz=st.booleans(),
    columns=st.booleans(),
)
def test_values_typed_alike(tmp_path: Path, rows: list[list[str]], gz: bool, columns: bool) -> None:
    """Only clean cells: the stream reads it all, and types every cell as the line reader."""
    text = "".join("A,{},{},{},{}\n".format(i, *r) for i, r in enumerate(rows))
    if not columns:
        text = "type,ts,x,y,z\n" + text
    path = tmp_path / ("v.csv.gz" if gz else "v.csv")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    kw: dict[str, Any] = {"type_field": "type", "time_field": "ts"}
    if columns:
        kw["columns"] = ("type", "ts", "x", "y", "z")
    with pytest.MonkeyPatch.context() as m:
        m.setattr(textfiles_mod, "_CHUNK", 64)
        m.setattr(csvstream, "BLOCK", 200)  # a row longer than a block is an error to Arrow
        new, old = both(str(path), True, False, **kw)
        src = open_events(InputSpec(str(path), **kw))
        m.setattr(textfiles_mod, "_read_chunks", _no_chunks)  # the stream reads it all
        assert [repr(e) for e in src] == new[0]
    assert new == old
    assert len(new[0]) == len(rows)


def _no_chunks(path: str, label: str, skip_lines: int = 0) -> Iterator[tuple[bytes, int]]:
    raise AssertionError(f"the chunked reader was asked for the lines after {skip_lines}")


ORIGINAL_READ_CHUNKS = textfiles_mod._read_chunks


# --------------------------------------------------------------------------------------
# the line the chunked reader takes over at, and exact errors through the stream


def _rows(n: int, bad: dict[int, str]) -> str:
    lines = ["type,ts,id,x,y"]
    for i in range(n):
        lines.append(bad.get(i, f"{'AB'[i % 2]},{i // 3},{1000 + i},{i * 0.5},{i % 7}"))
    return "\n".join(lines) + "\n"


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Small chunks and blocks (many batches); records where the chunked reader starts."""
    monkeypatch.setattr(textfiles_mod, "_CHUNK", 1000)
    monkeypatch.setattr(csvstream, "BLOCK", 300)
    monkeypatch.setattr(csvstream, "ROWS", 40)
    starts: list[int] = []

    def spy(
        path: str, label: str, skip_lines: int = 0, size: int | None = None, for_pass: bool = False
    ) -> Iterator[tuple[bytes, int]]:
        starts.append(skip_lines)
        return ORIGINAL_READ_CHUNKS(path, label, skip_lines, size, for_pass)

    monkeypatch.setattr(textfiles_mod, "_read_chunks", spy)
    return starts


KW: dict[str, Any] = {"type_field": "type", "time_field": "ts", "id_field": "id"}


def test_clean_file_is_read_by_the_stream_alone(tmp_path: Path, small_blocks: list[int]) -> None:
    p = tmp_path / "clean.csv.gz"
    p.write_bytes(gzip.compress(_rows(3000, {}).encode()))
    events = list(open_events(InputSpec(str(p), **KW)))
    assert len(events) == 3000 and [e.pos for e in events] == list(range(3000))
    assert events[-1].attrs == {"type": "B", "ts": 999, "id": 3999, "x": 1499.5, "y": 3}
    assert small_blocks == [0]  # only the header, read when the source opened


@pytest.mark.parametrize("header", ['"type","ts","id","x","y"', '"type",ts,"id","x",y', '"type","ts","id","x""","y"'])
def test_quoted_header_is_read_by_the_stream(tmp_path: Path, small_blocks: list[int], header: str) -> None:
    """pyarrow's ``write_csv`` quotes every header (the benchmark's Q2 file): the header
    reader checks it, so the stream reads the rows after it (before: the chunked reader
    read the whole file). The same events as the chunked reader; a quote in the first
    row still hands that row over."""
    p = tmp_path / "quoted.csv"
    p.write_bytes(_rows(300, {}).replace("type,ts,id,x,y", header, 1).encode())
    new = outcome(str(p), False, False, **KW)
    assert small_blocks == [0]  # only the header, read when the source opened
    with pytest.MonkeyPatch.context() as m:
        m.setattr(textfiles_mod.CsvSource, "_stream", _no_stream)
        assert outcome(str(p), False, False, **KW) == new
    p.write_bytes(_rows(300, {0: 'A,0,1000,"0.0",0'}).replace("type,ts,id,x,y", header, 1).encode())
    small_blocks.clear()
    again = outcome(str(p), False, False, **KW)
    assert small_blocks == [0, 1]  # the header, then the chunked reader from the first row
    assert again[0] == new[0] and again[2] == new[2]


BAD_ROWS = [
    ("A,zz,1,2,3", "fail", "ts", "cannot parse timestamp 'zz'"),
    ("A,1,1", "fail", None, "expected 5 fields, got 3"),
    ("A,1,1,2,3,4", "fail", None, "expected 5 fields, got 6"),
    ("A,1,,2,3", "fail", "id", "missing value"),
    (",1,1,2,3", "fail", "type", "missing value"),
    ("A,4\r00,1,2,3", "fail", "ts", "cannot parse timestamp '4\\r00'"),  # a lone \r is text
    (b"A,1,1,\xff,3", "fail", None, "invalid UTF-8 text"),
    ("A,0,1,2,3", "order", "ts", "timestamp 0 is before the previous event's 399 (input must be in time order)"),
]  # fmt: skip


@pytest.mark.parametrize(("bad", "kind", "field", "message"), BAD_ROWS)
def test_exact_errors(tmp_path: Path, small_blocks: list[int], bad: str | bytes, kind: str, field: str | None, message: str) -> None:
    data = _rows(2000, {1200: "@"}).encode()
    data = data.replace(b"@", bad.encode() if isinstance(bad, str) else bad)
    p = tmp_path / "bad.csv"
    p.write_bytes(data)
    with pytest.raises(EventError) as info:
        list(open_events(InputSpec(str(p), **KW)))
    e = info.value
    assert (e.message, e.file, e.row, e.field) == (message, str(p), 1202, field)
    assert type(e).__name__ == ("EventOrderError" if kind == "order" else "EventError")
    # the stream read the rows before; the chunked reader took over at the start of a batch
    assert small_blocks[0] == 0 and 1 < small_blocks[1] <= 1201
    # skip mode: the same as the chunked reader, nothing good lost
    events, rejected, counts = _skip(p)
    assert rejected == [(1202, field, message)]
    assert counts == (2000, 1) and len(events) == 1999
    assert [int(e.split(", pos=")[1].split(",")[0]) for e in events] == [i for i in range(2000) if i != 1200]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(textfiles_mod.CsvSource, "_stream", _no_stream)
        assert _skip(p) == (events, rejected, counts)


def _skip(p: Path) -> tuple[list[str], list[tuple[Any, ...]], tuple[int, int]]:
    rejects = p.with_suffix(".rejects")
    src = open_events(InputSpec(str(p), on_error="skip", rejects_path=str(rejects), **KW))
    events = [repr(e) for e in src]
    rej = [json.loads(line) for line in rejects.read_text(encoding="utf-8").splitlines()]
    return events, [(r["row"], r["field"], r["error"]) for r in rej], (src.rows_read, src.rows_rejected)


def test_blank_lines_and_quotes_keep_line_numbers(tmp_path: Path, small_blocks: list[int]) -> None:
    data = _rows(1000, {300: "", 301: "", 600: 'B,200,1600,"3,5",1', 800: "B,266,1800,x,1,2"})
    p = tmp_path / "blank.csv"
    p.write_bytes(data.encode())
    events, rejected, counts = _skip(p)
    # data row i is on line i + 2; rows 300 and 301 are blank lines (not rows)
    assert rejected == [(802, None, "expected 5 fields, got 6")]
    assert counts == (998, 1)
    e = next(e for e in events if ", pos=598," in e)
    assert e == "Event('B', ts=200, pos=598, id=1600, {'type': 'B', 'ts': 200, 'id': 1600, 'x': '3,5', 'y': 1})"
    assert small_blocks[1] <= 301  # the chunked reader took over before the blank lines


def test_long_line_as_the_chunked_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A field of any length is a value for every reader (Arrow's, the chunked one, the
    line-by-line one a chunk with a bad row goes to): only the bad row is rejected."""
    monkeypatch.setattr(csvstream, "BLOCK", 200_000)  # Arrow fails on a row longer than its block
    monkeypatch.setattr(csvstream, "ROWS", 40)
    p = tmp_path / "long.csv"
    p.write_bytes(_rows(30_000, {1200: "A,400,1," + "x" * 140_000 + ",3", 25_000: "A,zz,1,2,3"}).encode())
    new, old = both(str(p), True, False, **KW)
    assert new == old and new[2] == (30_000, 1)
    assert [(r["row"], r["field"], r["error"]) for r in map(json.loads, new[3].splitlines())] == [
        (25_002, "ts", "cannot parse timestamp 'zz'")
    ]


# every trouble, in a column the run reads and in one it does not (z, under a row filter)
TROUBLED_ROWS = [f"B,400,1,{c},3,4" for c in TROUBLE] + [f"B,400,1,2,3,{c}" for c in TROUBLE] + [
    "", "\r", "B,400,1,2,3,4\r", "B,400,1,2,3,4\r\r", "B,400,1,2,3,4\rB,400,1,2,3,4", "\ufeffB,400,1,2,3,4",
    "B,400,1,2,3", "B,400,1,2,3,4,5", "B,zz,1,2,3,4",
]


@pytest.mark.parametrize("bad", TROUBLED_ROWS)
@pytest.mark.parametrize("filtered", [False, True])
@pytest.mark.parametrize("spec", ["type/time/id", "const"])
def test_each_trouble_as_the_chunked_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str, filtered: bool, spec: str
) -> None:
    monkeypatch.setattr(textfiles_mod, "_CHUNK", 1 << 20)
    monkeypatch.setattr(csvstream, "BLOCK", 300)
    monkeypatch.setattr(csvstream, "ROWS", 40)
    lines = ["type,ts,id,x,y,z"] + [f"{'AB'[i % 2]},{i // 3},{1000 + i},{i * 0.5},{i % 7},z{i}" for i in range(1000)]
    lines[601] = bad
    lines[900] = "B,1"  # so that the chunked reader reads the lines between one by one
    p = tmp_path / "t.csv"
    p.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape"))
    # without a time field or a type column, nothing but the blank-line test sees a blank line
    kw = KW if spec != "const" else {"type_const": "A"}
    new, old = both(str(p), True, filtered, **kw)
    assert new == old


@pytest.mark.parametrize("block", range(8, 40))
def test_crlf_blocks_as_the_chunked_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    monkeypatch.setattr(textfiles_mod, "_CHUNK", 64)
    monkeypatch.setattr(csvstream, "BLOCK", block)
    monkeypatch.setattr(csvstream, "ROWS", 3)
    p = tmp_path / "crlf.csv"
    p.write_bytes(_rows(60, {}).replace("\n", "\r\n").encode())
    new, old = both(str(p), False, False, **KW)
    assert new == old and len(new[0]) == 60


def test_crlf_bom_and_last_line_without_newline(tmp_path: Path, small_blocks: list[int]) -> None:
    text = "\ufeff" + _rows(500, {}).replace("\n", "\r\n").rstrip("\r\n")
    p = tmp_path / "crlf.csv"
    p.write_bytes(text.encode())
    events = list(open_events(InputSpec(str(p), **KW)))
    assert len(events) == 500 and events[0].attrs["type"] == "A" and events[-1].attrs["y"] == 499 % 7
    p.write_bytes(text.encode() + b"\r")  # the file's last \r ends its last line
    assert list(open_events(InputSpec(str(p), **KW))) == events
    assert small_blocks == [0, 0]


def test_big_ints_and_number_spellings(tmp_path: Path) -> None:
    text = "type,ts,a,b\n" + "T,1,9223372036854775808,1.0\nT,2,-5,1e3\nT,3,007, 5\nT,4,+3,nan\nT,5,,0x10\n"
    p = tmp_path / "n.csv"
    p.write_bytes(text.encode())
    got = [e.attrs for e in open_events(InputSpec(str(p), type_field="type", time_field="ts"))]
    assert [(type(a["a"]), a["a"], type(a["b"]), a["b"]) for a in got] == [
        (int, 2**63, float, 1.0),
        (int, -5, float, 1000.0),
        (int, 7, str, " 5"),
        (int, 3, str, "nan"),
        (type(None), None, str, "0x10"),
    ]


def test_truncated_gzip_same_events_then_same_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textfiles_mod, "_CHUNK", 4096)
    monkeypatch.setattr(csvstream, "BLOCK", 1000)
    data = gzip.compress(_rows(5000, {}).encode())
    p = tmp_path / "cut.csv.gz"
    p.write_bytes(data[: len(data) * 2 // 3])
    new, old = both(str(p), False, False, **KW)
    assert new == old
    assert new[1] is not None and new[1][1].startswith(f"{p}: error: cannot read file:")
    assert len(new[0]) > 1000


def test_abandoned_reads_and_filtered_columns(tmp_path: Path) -> None:
    p = tmp_path / "f.csv"
    p.write_bytes(_rows(5000, {}).encode())
    src = open_events(InputSpec(str(p), **KW))
    it = iter(src)
    assert isinstance(it, Generator)  # a pass is a generator: closing it abandons the read
    assert next(it).pos == 0
    with contextlib.closing(it):
        pass
    src.row_filter = Prefilter(compile_text("PATTERN p: SEQ(A a, B b) WHERE a.x > 2000 WITHIN 5"))
    kept = list(src)
    assert {e.type for e in kept} == {"A", "B"}
    assert all(e.attrs["x"] > 2000 for e in kept if e.type == "A")
    assert all("y" not in e.attrs for e in kept)  # a column no pattern reads is not converted
