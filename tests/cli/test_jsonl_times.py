"""JSON Lines write ``start``/``end`` (and a timeout's ``deadline``) in the input's time form
when its time column holds date-times, as the CSV and Parquet match tables do; numbers stay
numbers. The kernel's batches (written a column at a time) and the Python engine's matches
give the same bytes, and ``petricep plot`` reads the file back."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from petricep.cli import main

PATTERN = "PATTERN ab: SEQ(A a, B b) WITHIN 2 d\n"
ISO = "type,ts\nA,2000-01-01\nB,2000-01-02\nA,2000-01-03T10:00:00\nB,2000-01-03T11:30:00.250\n"


def run(tmp_path: Path, events: Path, *options: str, pattern: str = PATTERN) -> str:
    pat = tmp_path / "p.pcep"
    pat.write_text(pattern)
    out = tmp_path / "m.jsonl"
    argv = ["run", str(pat), "--events", str(events), "--type-field", "type", "--time-field", "ts", "-o", str(out)]
    assert main([*argv, *options]) == 0
    return out.read_text()


@pytest.mark.parametrize("engine", ["kernel", "python"])
def test_iso_text_gives_iso_text(tmp_path: Path, engine: str) -> None:
    events = tmp_path / "ev.csv"
    events.write_text(ISO)
    assert run(tmp_path, events, "--engine", engine) == (
        '{"pattern": "ab", "ids": {"a": 0, "b": 1}, "start": "2000-01-01", "end": "2000-01-02", "attrs": {}}\n'
        '{"pattern": "ab", "ids": {"a": 2, "b": 3}, "start": "2000-01-03T10:00:00", '
        '"end": "2000-01-03T11:30:00.25", "attrs": {}}\n'
    )


@pytest.mark.parametrize("engine", ["kernel", "python"])
def test_a_time_format_and_a_timeout_deadline(tmp_path: Path, engine: str) -> None:
    events = tmp_path / "ev.csv"
    events.write_text("type,ts\nA,01/01/2000 10:00\nB,01/01/2000 11:00\nA,02/01/2000 10:00\nC,05/01/2000 10:00\n")
    pattern = "PATTERN ab: SEQ(A a, B b) WITHIN 1 d ON TIMEOUT RETURN Lost(n = 1)\n"
    got = run(tmp_path, events, "--engine", engine, "--time-format", "%d/%m/%Y %H:%M", pattern=pattern)
    assert got == (
        '{"pattern": "ab", "ids": {"a": 0, "b": 1}, "start": "01/01/2000 10:00", "end": "01/01/2000 11:00", "attrs": {}}\n'
        '{"pattern": "ab", "ids": {"a": 2}, "start": "02/01/2000 10:00", "end": "02/01/2000 10:00", "attrs": {"n": 1}, '
        '"timeout": {"type": "Lost", "deadline": "03/01/2000 10:00"}}\n'
    )


def test_arrow_timestamps_give_iso_text_and_numbers_stay_numbers(tmp_path: Path) -> None:
    parquet = tmp_path / "ev.parquet"
    stamps = pa.array([0, 60_000_000], pa.timestamp("us", "UTC"))
    pq.write_table(pa.table({"type": ["A", "B"], "ts": stamps}), parquet)
    assert run(tmp_path, parquet) == (
        '{"pattern": "ab", "ids": {"a": 0, "b": 1}, "start": "1970-01-01T00:00:00+00:00", '
        '"end": "1970-01-01T00:01:00+00:00", "attrs": {}}\n'
    )
    numbers = tmp_path / "n.csv"
    numbers.write_text("type,ts\nA,5\nB,6.5\n")
    assert run(tmp_path, numbers) == '{"pattern": "ab", "ids": {"a": 0, "b": 1}, "start": 5, "end": 6.5, "attrs": {}}\n'


def test_plot_reads_iso_times_back(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    events = tmp_path / "ev.csv"
    events.write_text(ISO)
    run(tmp_path, events)
    assert json.loads((tmp_path / "m.jsonl").read_text().splitlines()[0])["start"] == "2000-01-01"
    assert main(["plot", str(tmp_path / "m.jsonl"), "-o", str(tmp_path / "t.png")]) == 0
    assert (tmp_path / "t.png").stat().st_size > 0
