"""`petricep run / check / draw` with SQL MATCH_RECOGNIZE files (``*.sql`` or ``--lang sql``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from petricep.cli import main
from tests.sql.test_doc_examples import ACME as PRICES
from tests.sql.test_doc_examples import V_SHAPE
from tests.test_cli import kernel_line


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    sql = tmp_path / "vshape.sql"
    sql.write_text(V_SHAPE)
    csv = tmp_path / "ticker.csv"
    csv.write_text("symbol,tstamp,price\n" + "".join(f"ACME,{i + 1},{p}\n" for i, p in enumerate(PRICES)))
    return str(sql), str(csv)


def test_run_sql_file(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    sql, csv = files
    rc = main(["run", sql, "--events", csv, "--type", "Ticker", "--time-field", "tstamp"])
    out, err = capsys.readouterr()
    assert rc == 0
    assert [json.loads(line) for line in out.splitlines()] == [
        {"pattern": "MR", "ids": {"STRT": 4, "DOWN": [5], "UP": [6, 7, 8, 9]}, "start": 5, "end": 10,
         "attrs": {"symbol": "ACME", "start_tstamp": 5, "bottom_tstamp": 6, "end_tstamp": 10}},
        {"pattern": "MR", "ids": {"STRT": 9, "DOWN": [10, 11], "UP": [12]}, "start": 10, "end": 13,
         "attrs": {"symbol": "ACME", "start_tstamp": 10, "bottom_tstamp": 12, "end_tstamp": 13}},
        {"pattern": "MR", "ids": {"STRT": 13, "DOWN": [14, 15], "UP": [16, 17]}, "start": 14, "end": 18,
         "attrs": {"symbol": "ACME", "start_tstamp": 14, "bottom_tstamp": 16, "end_tstamp": 18}},
    ]
    # SELECT *: the PARTITION BY column first, then the MEASURES (the SQL standard's order)
    assert {tuple(json.loads(line)["attrs"]) for line in out.splitlines()} == {
        ("symbol", "start_tstamp", "bottom_tstamp", "end_tstamp")
    }
    assert "MR: 3 matches" in err


def test_lang_switch_and_output_file(files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sql, csv = files
    other = tmp_path / "query.txt"
    other.write_text(Path(sql).read_text())
    result = tmp_path / "m.jsonl"
    argv = ["run", str(other), "--lang", "sql", "--events", csv, "--type", "Ticker", "--time-field", "tstamp"]
    assert main([*argv, "-o", str(result)]) == 0
    assert [json.loads(line)["ids"]["STRT"] for line in result.read_text().splitlines()] == [4, 9, 13]
    assert main(["run", str(other), "--events", csv, "--type", "Ticker", "--time-field", "tstamp"]) == 2
    assert "error: unexpected" in capsys.readouterr().err  # without --lang, a .txt file is the pattern language


def test_check_and_draw(files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sql, _ = files
    assert main(["check", sql]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines() == [
        f"{sql}: 1 pattern",
        "  MR: MATCH_RECOGNIZE, 5 state places, 8 transitions; rows of Ticker; window none; partition by symbol; "
        "one row per match; skip to last UP",
        "net before merging: 1 patterns, 1 input places, 5 state places, 8 transitions",
        "net after merging: 1 shared net, 1 input places, 5 state places, 8 transitions",
        kernel_line(None),
        "warning: query 'MR' has no WITHIN window: a match that keeps growing holds back every later start row "
        "of its partition",
    ]
    dot = tmp_path / "v.dot"
    assert main(["draw", sql, "-o", str(dot)]) == 0
    text = dot.read_text()
    assert "DOWN.price &lt; PREV(DOWN.price)" in text and "emit MR" in text
    assert capsys.readouterr().out == f"{dot}: merged net of 1 pattern, 1 input places, 5 state places, 8 transitions\n"


def test_bad_sql_exit_2_with_caret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text("SELECT * FROM T MATCH_RECOGNIZE (\n  PATTERN (A B)\n  DEFINE B AS B.x > PREV(C.x)\n)\n")
    rc = main(["check", str(bad)])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert err == f"{bad}:3:26: error: unknown pattern variable 'C'\n      DEFINE B AS B.x > PREV(C.x)\n                             ^\n"


def test_missing_column_reported_at_the_query(files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sql, csv = files
    bad = tmp_path / "typo.sql"
    bad.write_text(Path(sql).read_text().replace("UP.price > PREV(UP.price)", "UP.prize > PREV(UP.price)"))
    assert main(["run", str(bad), "--events", csv, "--type", "Ticker", "--time-field", "tstamp"]) == 3
    assert capsys.readouterr().err.splitlines()[-3:] == [  # the events' error (exit 3), naming the query
        f"{csv}:1: field 'prize': error: missing column 'prize' (the columns: symbol, tstamp, price), "
        f"read at {bad}:14:15: 'Ticker' has no column 'prize'; did you mean 'price'?",
        "            UP AS UP.prize > PREV(UP.price)",
        "                  ^",
    ]


def test_summary_says_when_no_row_of_the_table_was_read(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    sql, csv = files
    assert main(["run", sql, "--events", csv, "--type", "Quote", "--time-field", "tstamp"]) == 0
    err = capsys.readouterr().err
    assert "  MR: 0 matches (no event of type 'Ticker' was read: check --type / --type-field)" in err.splitlines()



def test_with_events_refuses_an_id_two_events_have(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A SQL match carries ids only; ``--with-events`` finds its events by them, so an id two
    events share would give one event's fields for the other's: the run stops, naming both
    (before: STRT written with the last event's price). Without ``--with-events`` ids are
    only printed, so the run goes on."""
    sql = tmp_path / "vshape.sql"
    sql.write_text(V_SHAPE)
    csv = tmp_path / "ticker.csv"
    csv.write_text("symbol,tstamp,price,id\n" + "".join(f"ACME,{i + 1},{p},7\n" for i, p in enumerate(PRICES)))
    args = ["run", str(sql), "--events", str(csv), "--type", "Ticker", "--time-field", "tstamp", "--id-field", "id"]
    assert main([*args, "--with-events"]) == 3
    out, err = capsys.readouterr()
    assert (out, err.splitlines(keepends=True)[-1]) == (
        "",
        f"{csv}: field 'id': error: id 7 of the event at position 1 repeats (the event at position 0 has it too): "
        "a SQL match's events are found by id to give their fields, so each id must name one event "
        "(give an id column of unique ids, or none: the positions)\n",
    )
    assert main(args) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3
