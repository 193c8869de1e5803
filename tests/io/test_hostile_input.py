"""Hostile event input (issue 15), on every reader: CSV, gzip CSV, JSON Lines, Parquet, Arrow
tables and pandas DataFrames. Each case ends in one typed error naming the row and field
(exact text), and with ``on_error="skip"`` in a counted rejection written to the rejects
file, the good rows read as usual (docs/INPUT.md has the rules)."""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from petricep.cli import main
from petricep.errors import EventError
from petricep.events import Event
from petricep.io import InputSpec, events_from_table, open_events
from petricep.io import textfiles as textfiles_mod
from petricep.io.source import EventSource
from petricep.io.values import MAX_NUMBER_CHARS, text_value

LIMIT = "a number must be finite and fit a float64, in at most 400 characters"
KW: dict[str, Any] = {"type_field": "type", "time_field": "ts"}


def long_text(n: int) -> str:
    """How an error quotes a long value: its first 40 characters and its length."""
    return f"{'9' * 40!r}... ({n} characters)"


def csv_file(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    data = text.encode("utf-8")
    p.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return str(p)


def parquet_file(tmp_path: Path, table: pa.Table) -> str:
    p = str(tmp_path / "e.parquet")
    pq.write_table(table, p)
    return p


def source_of(tmp_path: Path, reader: str, data: Any, skip: bool, **kw: Any) -> EventSource:
    """The events of ``data`` (text for files, a table or DataFrame otherwise) by ``reader``."""
    opts = KW | kw
    if skip:
        opts |= {"on_error": "skip", "rejects_path": str(tmp_path / "rejects.jsonl")}
    if reader in ("csv", "csv.gz", "jsonl"):
        return open_events(InputSpec(csv_file(tmp_path, "e." + reader, data), **opts))
    if reader == "parquet":
        return open_events(InputSpec(parquet_file(tmp_path, data), **opts))
    return events_from_table(data, InputSpec("t", **opts))


def outcome(tmp_path: Path, reader: str, data: Any, **kw: Any) -> tuple[Any, Any, list[Any]]:
    """(the error of a failing read, (read, rejected, event ids) of a skipping one, rejects)."""
    with pytest.raises(EventError) as info:
        list(source_of(tmp_path, reader, data, False, **kw))
    e = info.value
    src = source_of(tmp_path, reader, data, True, **kw)
    ids = [ev.id for ev in src]
    assert src.rows_read == len(ids) + src.rows_rejected  # every row accounted for
    lines = (tmp_path / "rejects.jsonl").read_text(encoding="utf-8").splitlines()
    rejects = [(r["row"], r["field"], r["error"]) for r in map(json.loads, lines)]
    return (e.row, e.field, e.message), (src.rows_read, src.rows_rejected, ids), rejects


# --------------------------------------------------------------------------------------
# numbers: 4,301 digits (int() refuses them), 400 digits (too large for a float)


@pytest.mark.parametrize("digits", [4301, 4400, 400, MAX_NUMBER_CHARS + 1])
@pytest.mark.parametrize("reader", ["csv", "csv.gz", "jsonl", "parquet", "table"])
def test_huge_number_cell(tmp_path: Path, reader: str, digits: int) -> None:
    big = "9" * digits
    if reader.startswith("csv"):
        data: Any = f"type,ts,x\nA,1,{big}\nA,2,5\n"
    elif reader == "jsonl":
        data = f'{{"type":"A","ts":1,"x":{big}}}\n{{"type":"A","ts":2,"x":5}}\n'
    elif reader == "parquet":  # typed input: the number as text (no Arrow type holds it), then a float
        data = pa.table({"type": ["A", "A"], "ts": [1, 2], "x": [big, "5"]})
    else:
        data = pd.DataFrame({"type": ["A", "A"], "ts": [1, 2], "x": [big, 5]})
    first = {"csv": 2, "csv.gz": 2, "jsonl": 1}.get(reader, 0)
    error, counts, rejects = outcome(tmp_path, reader, data, numeric={"A": frozenset({"x"})})
    message = f"expected a number, got {long_text(digits)}: {LIMIT}"
    assert error == (first, "x", message)
    if reader == "parquet":  # a text column: "5" is text too
        assert counts == (2, 2, [])
        assert rejects == [(0, "x", message), (1, "x", "expected a number, got '5'")]
    else:
        assert counts == (2, 1, [1])
        assert rejects == [(first, "x", message)]


def test_huge_int_in_a_dataframe(tmp_path: Path) -> None:
    """A Python int beyond the float64 range (an object column): not a number."""
    df = pd.DataFrame({"type": ["A", "A"], "ts": [1, 2], "x": pd.Series([10**400, 5], dtype=object)})
    error, counts, _ = outcome(tmp_path, "table", df, numeric={"A": frozenset({"x"})})
    assert error == (0, "x", f"expected a number, got an integer beyond the float64 range: {LIMIT}")
    assert counts == (2, 1, [1])


def test_number_text_rule() -> None:
    assert text_value("1" + "0" * 308) == 10**308
    assert text_value("2" + "0" * 308) == "2" + "0" * 308  # beyond float64: text
    assert text_value("1e308") == 1e308
    assert text_value("1e309") == "1e309"
    assert text_value("-1e400") == "-1e400"
    assert text_value("0." + "0" * 397 + "1") == 1e-398
    assert text_value("0." + "0" * 398 + "1") == "0." + "0" * 398 + "1"  # 401 characters
    assert text_value("9" * 4301) == "9" * 4301


def test_divided_400_digit_cell_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern = csv_file(tmp_path, "p.pcep", "PATTERN p: SEQ(A a, B b)\nWHERE [k] AND a.x / 3 < b.x\nWITHIN 10\n")
    events = csv_file(tmp_path, "e.csv", f"type,ts,k,x\nA,1,1,{'9' * 400}\nA,2,1,1\nB,3,1,5\n")
    argv = ["run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts", "--no-progress"]
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"{events}:2: field 'x': error: expected a number, got {long_text(400)}: {LIMIT}"
    rejects = str(tmp_path / "bad.jsonl")
    assert main([*argv, "--on-error", "skip", "--rejects", rejects]) == 3
    out, err = capsys.readouterr()
    assert [json.loads(line)["ids"] for line in out.splitlines()] == [{"a": 1, "b": 2}]
    assert "3 events read = 2 processed + 1 rejected + 0 late" in err
    assert [json.loads(line)["row"] for line in Path(rejects).read_text().splitlines()] == [2]


# --------------------------------------------------------------------------------------
# a list or an object where a pattern reads one value


LIST = "expected a single value, got a list"
LIST_KEY: dict[str, tuple[Any, list[tuple[int, str]], tuple[int, int, list[int]]]] = {
    "jsonl": (
        '{"type":"A","ts":1,"k":[1]}\n{"type":"A","ts":2,"k":{"a":1}}\n{"type":"A","ts":3,"k":1}\n',
        [(1, LIST), (2, "expected a single value, got an object")],
        (3, 2, [2]),
    ),
    "parquet": (
        pa.table({"type": ["A", "A", "A"], "ts": [1, 2, 3], "k": [[1], None, [2]]}),
        [(0, LIST), (1, "missing value"), (2, LIST)],
        (3, 3, []),
    ),
    "table": (
        pd.DataFrame({"type": ["A", "A", "A"], "ts": [1, 2, 3], "k": [[1], {"a": 1}, 1]}),
        [(0, LIST), (1, "expected a single value, got an object")],
        (3, 2, [2]),
    ),
}


@pytest.mark.parametrize("reader", list(LIST_KEY))
def test_list_or_object_as_key(tmp_path: Path, reader: str) -> None:
    data, want, want_counts = LIST_KEY[reader]
    error, counts, rejects = outcome(tmp_path, reader, data, required={"*": frozenset({"k"})})
    assert error == (want[0][0], "k", want[0][1])
    assert rejects == [(row, "k", message) for row, message in want]
    assert counts == want_counts


def test_list_key_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern = csv_file(tmp_path, "p.pcep", "PATTERN p: SEQ(A a, B b)\nWHERE [k]\nWITHIN 10\n")
    events = csv_file(tmp_path, "e.jsonl", '{"type":"A","ts":1,"k":[1]}\n{"type":"B","ts":2,"k":[1]}\n')
    argv = ["run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts", "--no-progress"]
    assert main(argv) == 3
    assert capsys.readouterr().err.splitlines()[-1] == f"{events}:1: field 'k': error: expected a single value, got a list"


# --------------------------------------------------------------------------------------
# missing values: empty and null mean the same in every reader


MISSING_KEY: dict[str, Any] = {
    "csv": 'type,ts,k,y\nA,1,,\nA,2,"",""\nA,3,1,\n',
    "csv.gz": 'type,ts,k,y\nA,1,,\nA,2,"",""\nA,3,1,\n',
    "jsonl": '{"type":"A","ts":1,"k":null,"y":null}\n{"type":"A","ts":2,"k":"","y":""}\n{"type":"A","ts":3,"k":1,"y":""}\n',
    "parquet": pa.table({"type": ["A"] * 3, "ts": [1, 2, 3], "k": [None, "", "1"], "y": [None, "", None]}),
    "table": pa.table({"type": ["A"] * 3, "ts": [1, 2, 3], "k": [None, math.nan, 1.0], "y": [math.nan, None, math.nan]}),
    "dataframe": pd.DataFrame({"type": ["A"] * 3, "ts": [1, 2, 3], "k": [None, "", "1"], "y": [math.nan, "", None]}),
}


@pytest.mark.parametrize("reader", list(MISSING_KEY))
def test_empty_and_null_are_missing_values(tmp_path: Path, reader: str) -> None:
    data = MISSING_KEY[reader]
    first = {"csv": 2, "csv.gz": 2, "jsonl": 1}.get(reader, 0)
    error, counts, rejects = outcome(tmp_path, reader, data, required={"A": frozenset({"k"})})
    assert error == (first, "k", "missing value")
    assert rejects == [(first, "k", "missing value"), (first + 1, "k", "missing value")]
    assert counts == (3, 2, [2])
    events = list(source_of(tmp_path, reader, data, False))  # no field required: carried as None
    assert [e.attrs["y"] for e in events] == [None, None, None]
    assert [e.attrs["k"] for e in events][:2] == [None, None]


def test_empty_csv_key_and_null_json_key_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's row: an empty CSV key was matched as a key, a JSON null one an error."""
    pattern = csv_file(tmp_path, "p.pcep", "PATTERN p: SEQ(A a, B b)\nWHERE [k]\nWITHIN 10\n")
    csv_events = csv_file(tmp_path, "e.csv", "type,ts,k\nA,1,\nB,2,\n")
    json_events = csv_file(tmp_path, "e.jsonl", '{"type":"A","ts":1,"k":null}\n{"type":"B","ts":2,"k":null}\n')
    for events, row in ((csv_events, 2), (json_events, 1)):
        argv = ["run", pattern, "--events", events, "--type-field", "type", "--time-field", "ts", "--no-progress"]
        assert main(argv) == 3
        assert capsys.readouterr().err.splitlines()[-1] == f"{events}:{row}: field 'k': error: missing value"
        assert main([*argv, "--on-error", "skip"]) == 3
        out, err = capsys.readouterr()
        assert out == "" and "2 events read = 0 processed + 2 rejected + 0 late" in err


# --------------------------------------------------------------------------------------
# an unterminated quoted value, on the Arrow stream, the chunked reader and the line reader


def _no_stream(self: Any, run: Any) -> Generator[Event, None, int]:
    return 0
    yield  # pragma: no cover


PATHS: dict[str, list[tuple[str, Callable[..., Any]]]] = {
    "stream": [],
    "chunked": [("_stream", _no_stream)],
    "lines": [("_stream", _no_stream), ("_fast", lambda self, run, chunk: None)],
}


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("where", ["middle", "last", "last-no-newline"])
@pytest.mark.parametrize("name", ["e.csv", "e.csv.gz"])
def test_unterminated_quote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, where: str, name: str) -> None:
    for attr, fake in PATHS[path]:
        monkeypatch.setattr(textfiles_mod.CsvSource, attr, fake)
    good = "".join(f"A,{t},{t}\n" for t in range(1, 6))
    if where == "middle":
        text, row = good + 'A,6,"abc\n' + "A,7,7\n", 7
    else:
        text, row = good + 'A,6,"abc' + ("\n" if where == "last" else ""), 7
    data = "type,ts,x\n" + text
    error, counts, rejects = outcome(tmp_path, name.removeprefix("e."), data)
    assert error == (row, None, "invalid CSV: unterminated quoted value")
    assert rejects == [(row, None, "invalid CSV: unterminated quoted value")]
    assert counts == ((7, 1, [0, 1, 2, 3, 4, 6]) if where == "middle" else (6, 1, [0, 1, 2, 3, 4]))


def test_unterminated_quote_in_the_header(tmp_path: Path) -> None:
    p = csv_file(tmp_path, "e.csv", 'type,ts,"x\nA,1,2\n')
    with pytest.raises(EventError) as info:
        open_events(InputSpec(p, **KW))
    assert (info.value.row, info.value.message) == (1, "invalid CSV: unterminated quoted value")


def test_closed_quotes_still_read(tmp_path: Path) -> None:
    p = csv_file(tmp_path, "e.csv", 'type,ts,x\nA,1,"a,b"\nA,2,"say ""hi"""\nA,3,"ab"c\n')
    assert [e.attrs["x"] for e in open_events(InputSpec(p, **KW))] == ["a,b", 'say "hi"', "abc"]


# --------------------------------------------------------------------------------------
# NaN and infinities where a number is needed


NON_FINITE: dict[str, tuple[Any, list[tuple[int, str]]]] = {
    "csv": (
        "type,ts,x\nA,1,nan\nA,2,inf\nA,3,1e400\nA,4,2\n",
        [(2, "expected a number, got 'nan'"), (3, "expected a number, got 'inf'"),
         (4, f"expected a number, got '1e400': {LIMIT}")],
    ),
    "jsonl": (
        '{"type":"A","ts":1,"x":NaN}\n{"type":"A","ts":2,"x":Infinity}\n{"type":"A","ts":3,"x":1e400}\n'
        '{"type":"A","ts":4,"x":2}\n',
        [(1, "expected a number, got 'NaN'"), (2, "expected a number, got 'Infinity'"),
         (3, f"expected a number, got '1e400': {LIMIT}")],
    ),
    "parquet": (
        pa.table({"type": ["A"] * 4, "ts": [1, 2, 3, 4], "x": [math.nan, math.inf, -math.inf, 2.0]}),
        [(0, "missing value"), (1, f"expected a number, got inf: {LIMIT}"), (2, f"expected a number, got -inf: {LIMIT}")],
    ),
    "table": (
        pd.DataFrame({"type": ["A"] * 4, "ts": [1, 2, 3, 4], "x": [math.nan, math.inf, -math.inf, 2.0]}),
        [(0, "missing value"), (1, f"expected a number, got inf: {LIMIT}"), (2, f"expected a number, got -inf: {LIMIT}")],
    ),
}  # fmt: skip


@pytest.mark.parametrize("reader", list(NON_FINITE))
def test_nan_and_infinity_are_no_numbers(tmp_path: Path, reader: str) -> None:
    data, want = NON_FINITE[reader]
    error, counts, rejects = outcome(tmp_path, reader, data, numeric={"A": frozenset({"x"})})
    assert error == (want[0][0], "x", want[0][1])
    assert rejects == [(row, "x", message) for row, message in want]
    assert counts == (4, 3, [3])


def test_finite_float_column_stays_columnar(tmp_path: Path) -> None:
    """A float column of finite numbers passes the batch check (no row checks)."""
    table = pa.table({"type": ["A"] * 3, "ts": [1, 2, 3], "x": [0.5, 1e308, -2.0]})
    events = list(events_from_table(table, InputSpec("t", numeric={"A": frozenset({"x"})}, **KW)))
    assert [e.attrs["x"] for e in events] == [0.5, 1e308, -2.0]


# --------------------------------------------------------------------------------------
# BOM, CRLF, mixed types in a column


def test_bom_and_crlf_read_as_plain(tmp_path: Path) -> None:
    plain = "type,ts,x\nA,1,1\nA,2,x\nA,3,2.5\n"
    want = list(open_events(InputSpec(csv_file(tmp_path, "plain.csv", plain), **KW)))
    for i, text in enumerate(["\ufeff" + plain, plain.replace("\n", "\r\n"), "\ufeff" + plain.replace("\n", "\r\n")]):
        for name in (f"v{i}.csv", f"v{i}.csv.gz"):
            assert list(open_events(InputSpec(csv_file(tmp_path, name, text), **KW))) == want
    assert [e.attrs["x"] for e in want] == [1, "x", 2.5]  # typed per cell, not per column


def test_bom_in_json_lines(tmp_path: Path) -> None:
    p = csv_file(tmp_path, "e.jsonl", '\ufeff{"type":"A","ts":1,"x":1}\r\n{"type":"A","ts":2,"x":"y"}\r\n')
    assert [e.attrs for e in open_events(InputSpec(p, **KW))] == [
        {"type": "A", "ts": 1, "x": 1},
        {"type": "A", "ts": 2, "x": "y"},
    ]


def test_mixed_column_same_on_every_csv_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = ["1", "x", "2.5", "", "1e400", "9" * 401, "-3", "nan"]
    text = "type,ts,x\n" + "".join(f"A,{i},{v}\n" for i, v in enumerate(rows))
    p = csv_file(tmp_path, "e.csv", text)
    want = [None if v == "" else text_value(v) for v in rows]
    assert want == [1, "x", 2.5, None, "1e400", "9" * 401, -3, "nan"]
    for path in PATHS.values():
        with monkeypatch.context() as m:
            for attr, fake in path:
                m.setattr(textfiles_mod.CsvSource, attr, fake)
            assert [e.attrs["x"] for e in open_events(InputSpec(p, **KW))] == want
