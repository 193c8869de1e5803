"""A field no column holds is named with the nearest column (issue 41), in CSV, JSON Lines
and Parquet input, in SQL, and from the library; every such field of a pattern at once."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import petricep
from petricep.cli import main
from petricep.errors import EventError

PATTERN = "PATTERN p: SEQ(A a, B b)\nWHERE [symbl] AND b.presure > a.presure\nWITHIN 10\n"
ROWS = {"type": ["A", "B"], "ts": [1, 2], "pressure": [1, 3], "symbol": ["x", "x"]}
CARETS = [
    "p.pcep:2:19: error: event type 'B' has no field 'presure'; did you mean 'pressure'?",
    "    WHERE [symbl] AND b.presure > a.presure",
    "                      ^",
    "p.pcep:2:31: error: event type 'A' has no field 'presure'; did you mean 'pressure'?",
    "    WHERE [symbl] AND b.presure > a.presure",
    "                                  ^",
]


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], events: str, pattern: str = PATTERN) -> tuple[int, list[str]]:
    (tmp_path / "p.pcep").write_text(pattern)
    rc = main(["run", str(tmp_path / "p.pcep"), "--events", events, "--type-field", "type", "--time-field", "ts"])
    return rc, [line.replace(f"{tmp_path}/", "") for line in capsys.readouterr().err.splitlines()]


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_a_misspelt_field_names_the_nearest_column(tmp_path: Path, capsys: pytest.CaptureFixture[str], ext: str) -> None:
    """A field no column holds is the events' error (exit 3, issue 43), naming the columns
    missing and every place a pattern reads one, each with its caret and nearest column."""
    df = pd.DataFrame(ROWS)
    path = tmp_path / f"ev.{ext}"
    df.to_csv(path, index=False) if ext == "csv" else df.to_parquet(path)
    rc, err = _run(tmp_path, capsys, str(path))
    assert rc == 3
    row = ":1" if ext == "csv" else ""
    assert err == [
        f"ev.{ext}{row}: field 'symbl': error: missing columns 'symbl', 'presure' (the columns: type, ts, pressure, symbol), "
        "read at p.pcep:1:1: event type 'A' has no field 'symbl' (needed by [symbl]); did you mean 'symbol'?",
        "    PATTERN p: SEQ(A a, B b)",
        "    ^",
        "p.pcep:1:1: error: event type 'B' has no field 'symbl' (needed by [symbl]); did you mean 'symbol'?",
        "    PATTERN p: SEQ(A a, B b)",
        "    ^",
        *CARETS,
    ]


def test_a_jsonl_row_without_the_field_names_the_nearest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ev.jsonl"
    pd.DataFrame(ROWS).to_json(path, orient="records", lines=True)
    rc, err = _run(tmp_path, capsys, str(path), PATTERN.replace("[symbl] AND ", ""))
    assert rc == 3 and err == ["ev.jsonl:1: field 'presure': error: missing field 'presure'; did you mean 'pressure'?"]


def test_no_suggestion_when_no_column_is_close(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ev.csv").write_text("type,ts,pressure\nA,1,1\n")
    rc, err = _run(tmp_path, capsys, str(tmp_path / "ev.csv"), "PATTERN p: SEQ(A a, B b) WHERE b.zz > 1 WITHIN 10\n")
    assert rc == 3 and err[0] == (
        "ev.csv:1: field 'zz': error: missing column 'zz' (the columns: type, ts, pressure), "
        "read at p.pcep:1:32: event type 'B' has no field 'zz'"
    )


def test_sql_names_the_nearest_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ev.csv").write_text("type,ts,pressure\nA,1,1\n")
    (tmp_path / "q.sql").write_text("SELECT * FROM A MATCH_RECOGNIZE (PATTERN (X) WITHIN INTERVAL '1' SECOND DEFINE X AS X.Pressure > 1)\n")
    rc = main(["run", str(tmp_path / "q.sql"), "--events", str(tmp_path / "ev.csv"), "--type-field", "type", "--time-field", "ts"])
    err = capsys.readouterr().err.splitlines()
    assert rc == 3 and err[0] == (
        f"{tmp_path}/ev.csv:1: field 'Pressure': error: missing column 'Pressure' (the columns: type, ts, pressure), "
        f"read at {tmp_path}/q.sql:1:85: 'A' has no column 'Pressure'; did you mean 'pressure'?"
    )


def test_the_library_names_the_nearest_column() -> None:
    with pytest.raises(EventError) as err:
        petricep.match(pd.DataFrame(ROWS), PATTERN.replace("[symbl] AND ", ""), type_field="type", time_field="ts")
    assert str(err.value).splitlines()[:2] == [
        "DataFrame column 'presure': error: missing column 'presure' (the columns: type, ts, pressure, symbol), "
        "read at <pattern>:2:7: event type 'B' has no field 'presure'; did you mean 'pressure'?",
        "    WHERE b.presure > a.presure",
    ]
    with pytest.raises(EventError):  # (a good pattern still runs)
        petricep.match(pd.DataFrame(ROWS), "PATTERN p: SEQ(A a, B b) WITHIN 1", type_field="type", time_field="tss")
