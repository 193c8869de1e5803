"""``petricep run -o`` in JSON Lines, Parquet or CSV (issue 18, item 6: ``-o out.parquet``
wrote JSON Lines), ``--output-format`` and ``--with-events``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import petricep
from petricep.cli import main
from tests.cli.rise import LINES, RISE, ROOT, opts, run

# `petricep run nets/sase_equal_price.pcep --events examples/data/stocks.csv --type-field type
# --time-field ts --id-field id -o m.jsonl` as written before the output formats existed
STOCKS_SHA256 = "fc5a81ae5e48ba93955eae35809b07b508362c8764bbe5a1e043131e10d8f2e3"


def test_jsonl_output_is_byte_identical_to_the_stored_expectation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.jsonl"
    rc, _, _ = run(
        capsys, str(ROOT / "nets/sase_equal_price.pcep"), "--events", str(ROOT / "examples/data/stocks.csv"),
        "--type-field", "type", "--time-field", "ts", "--id-field", "id", "-o", str(out),
    )  # fmt: skip
    assert rc == 0
    data = out.read_bytes()
    assert hashlib.sha256(data).hexdigest() == STOCKS_SHA256
    assert data.count(b"\n") == 6525


def test_stdout_and_jsonl_file_hold_the_same_lines(files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = files
    rc, out, _ = run(capsys, pattern, *opts(events))
    assert (rc, out) == (0, LINES)
    for name in ("m.jsonl", "m.ndjson"):
        rc, out, _ = run(capsys, pattern, *opts(events), "-o", str(tmp_path / name))
        assert (rc, out) == (0, "")
        assert (tmp_path / name).read_text() == LINES


def test_parquet_output_read_back_equals_the_match_table(files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = files
    out = tmp_path / "m.parquet"
    rc, stdout, _ = run(capsys, pattern, *opts(events), "-o", str(out))
    assert (rc, stdout) == (0, "")
    table = pq.read_table(out)
    assert table.equals(petricep.match(events, pattern, type_field="type", time_field="ts"))
    assert table.to_pylist() == [
        {"pattern": "rise", "a": 0, "b": 2, "start": 1, "end": 3},
        {"pattern": "rise", "a": 0, "b": 4, "start": 1, "end": 5},
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ev.csv", "m.parquet", "rise.pcep"]


def test_parquet_of_stocks_equals_the_api_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.parquet"
    pattern, events = str(ROOT / "nets/sase_equal_price.pcep"), str(ROOT / "examples/data/stocks.csv")
    argv = ["--events", events, "--type-field", "type", "--time-field", "ts", "--id-field", "id", "-o", str(out)]
    assert run(capsys, pattern, *argv, "--with-events")[0] == 0
    expected = petricep.match(events, pattern, type_field="type", time_field="ts", id_field="id", with_events=True)
    table = pq.read_table(out)
    assert table.num_rows == 6525 and table.equals(expected)


def test_csv_output_and_with_events(files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = files
    out = tmp_path / "m.csv"
    assert run(capsys, pattern, *opts(events), "-o", str(out), "--with-events")[0] == 0
    assert out.read_text().splitlines() == [
        '"pattern","a","b","start","end","events.a","events.b"',
        '"rise",0,2,1,3,"{""type"": ""A"", ""ts"": 1, ""k"": 1, ""x"": 5}","{""type"": ""B"", ""ts"": 3, ""k"": 1, ""x"": 7}"',
        '"rise",0,4,1,5,"{""type"": ""A"", ""ts"": 1, ""k"": 1, ""x"": 5}","{""type"": ""B"", ""ts"": 5, ""k"": 1, ""x"": 9}"',
    ]
    assert pcsv.read_csv(out).column("b").to_pylist() == [2, 4]


def test_with_events_in_jsonl_prints_iso_times_as_the_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rise.pcep").write_text(RISE.replace("WITHIN 10", "WITHIN 10 min"))
    (tmp_path / "ev.csv").write_text("type,ts,k,x\nA,2014-08-01T07:50:00Z,1,5\nB,2014-08-01T07:55:30Z,1,7\n")
    rc, out, _ = run(capsys, str(tmp_path / "rise.pcep"), *opts(str(tmp_path / "ev.csv")), "--with-events")
    assert rc == 0
    assert out == (
        '{"pattern": "rise", "ids": {"a": 0, "b": 1}, "start": "2014-08-01T07:50:00Z", "end": "2014-08-01T07:55:30Z", '
        '"attrs": {}, "events": {"a": {"type": "A", "ts": "2014-08-01T07:50:00Z", "k": 1, "x": 5}, '
        '"b": {"type": "B", "ts": "2014-08-01T07:55:30Z", "k": 1, "x": 7}}}\n'
    )


def test_with_events_of_a_sql_query(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q.sql").write_text(
        "SELECT * FROM A MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(u.x) AS lo ONE ROW PER MATCH "
        "PATTERN (u d) DEFINE d AS d.x < PREV(d.x))"
    )
    (tmp_path / "ev.csv").write_text("ts,x\n1,5\n2,3\n3,4\n")
    argv = ["--events", str(tmp_path / "ev.csv"), "--type", "A", "--time-field", "ts", "--with-events"]
    rc, out, err = run(capsys, str(tmp_path / "q.sql"), *argv)
    assert rc == 0, err
    assert [json.loads(line)["events"] for line in out.splitlines()] == [
        {"u": {"ts": 1, "x": 5}, "d": {"ts": 2, "x": 3}}
    ]


def test_an_unknown_extension_is_refused_unless_the_format_is_given(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pattern, events = files
    out = tmp_path / "m.txt"
    rc, stdout, err = run(capsys, pattern, *opts(events), "-o", str(out))
    assert (rc, stdout) == (2, "")
    assert err == (
        f"cannot tell the match file format from {str(out)!r}: end it in .jsonl .parquet .csv, "
        "or give --output-format jsonl|parquet|csv\n"
    )
    assert not out.exists()
    assert run(capsys, pattern, *opts(events), "-o", str(out), "--output-format", "jsonl")[0] == 0
    assert out.read_text() == LINES
    assert run(capsys, pattern, *opts(events), "-o", str(out), "--output-format", "parquet")[0] == 0
    assert pq.read_table(out).column("b").to_pylist() == [2, 4]


def test_a_table_format_needs_a_file(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = files
    rc, out, err = run(capsys, pattern, *opts(events), "--output-format", "csv")
    assert (rc, out, err) == (2, "", "--output-format csv writes a file: give -o FILE\n")


def test_a_failed_run_leaves_an_old_parquet_file_as_it_was(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.pcep").write_text("PATTERN p: A a WHERE a.s < 5\n")
    (tmp_path / "ev.jsonl").write_text('{"t":"A","ts":4,"s":1}\n{"t":"A","ts":5,"s":"x"}\n')
    out = tmp_path / "m.parquet"
    out.write_bytes(b"an earlier result")
    rc, _, err = run(capsys, str(tmp_path / "p.pcep"), "--events", str(tmp_path / "ev.jsonl"), "--type-field", "t",
                     "--time-field", "ts", "-o", str(out))  # fmt: skip
    assert rc == 3 and err == f"{tmp_path / 'ev.jsonl'}:2: field 's': error: expected a number, got 'x'\n"
    assert out.read_bytes() == b"an earlier result"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ev.jsonl", "m.parquet", "p.pcep"]


def test_help_says_tables_are_kept_in_memory(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "out.parquet or out.csv (a table: every match is kept in memory until the run ends)" in text


@pytest.mark.parametrize("extra", [["-o", "m.parquet"], ["--with-events"]])
def test_spark_refuses_tables_and_events_before_starting(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    pattern, events = files
    rc, out, err = run(capsys, pattern, *opts(events), "--engine", "spark", *extra)
    assert (rc, out) == (2, "")
    assert err == "--engine spark writes JSON Lines only (yet): -o out.jsonl, without --with-events\n"


# a name that is a Kleene list in one pattern and one event in another (issue 41)
LIST_AND_EVENT = "PATTERN kl: SEQ(A+ x[], B y) WHERE [k] WITHIN 10\nPATTERN one: SEQ(B y, A x) WITHIN 10\n"
LIST_AND_EVENT_ROWS = "type,ts,k,v\nA,1,1,1\nA,2,1,2\nB,3,1,3\nA,4,1,5\n"


@pytest.mark.parametrize("engine", ["kernel", "python"])
def test_every_column_has_one_type_whichever_pattern_matched(
    engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pattern, events = tmp_path / "p.pcep", tmp_path / "ev.csv"
    pattern.write_text(LIST_AND_EVENT)
    events.write_text(LIST_AND_EVENT_ROWS)
    args = [str(pattern), "--events", str(events), "--type-field", "type", "--time-field", "ts", "--engine", engine]
    for name in ("m.parquet", "m.csv"):
        rc, _, _ = run(capsys, *args, "--with-events", "-o", str(tmp_path / name))
        assert rc == 0
    table = pq.read_table(tmp_path / "m.parquet")
    event = "struct<type: string, ts: int64, k: int64, v: int64>"
    assert {f.name: str(f.type) for f in table.schema} == {
        "pattern": "string", "x": "list<element: int64>", "y": "int64", "start": "int64", "end": "int64",
        "events.x": f"list<element: {event}>", "events.y": event,
    }  # fmt: skip
    rows = table.to_pylist()
    assert [(r["pattern"], r["x"], [e["v"] for e in r["events.x"]]) for r in rows] == [
        ("kl", [0, 1], [1, 2]), ("kl", [0], [1]), ("kl", [1], [2]), ("one", [3], [5]),
    ]  # fmt: skip
    # CSV: every cell of a list column a JSON list, one's event too
    cells = pcsv.read_csv(tmp_path / "m.csv").to_pylist()
    assert [(r["x"], json.loads(r["events.x"])[0]["v"]) for r in cells] == [
        ("[0, 1]", 1), ("[0]", 1), ("[1]", 2), ("[3]", 5),
    ]  # fmt: skip
    assert all(r["events.x"].startswith("[{") and r["events.y"].startswith("{") for r in cells)
