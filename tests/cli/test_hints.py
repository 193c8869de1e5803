"""What ``petricep run`` says where a run could silently be wrong or find nothing (issue 18,
items 3, 4 and 8): epoch milliseconds under a duration window, hints for patterns without
matches, and messages that name the option fixing the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from petricep.api import time_unit_warning
from petricep.cli import main
from petricep.lang.parser import parse_text

JAM = "PATTERN jam: SEQ(A a, B b)\nWHERE [k]\nWITHIN 30 min\n"
MS = "type,ts,k\nA,1406889000000,1\nB,1406889600000,1\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["run", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def write(tmp_path: Path, pattern: str, events: str, name: str = "ev.csv") -> tuple[str, str]:
    (tmp_path / "p.pcep").write_text(pattern)
    (tmp_path / name).write_text(events)
    return str(tmp_path / "p.pcep"), str(tmp_path / name)


def test_epoch_milliseconds_under_a_duration_window_warn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = write(tmp_path, JAM, MS)
    rc, out, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "ts")
    assert (rc, out) == (0, "")
    assert err.splitlines()[0] == (
        "warning: timestamps in 'ts' look like epoch milliseconds (1406889000000) while pattern 'jam' has a "
        "window of 30 min (in seconds): give --time-unit ms"
    )
    rc, out, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "ts", "--time-unit", "ms")
    assert rc == 0 and "warning" not in err
    assert out == '{"pattern": "jam", "ids": {"a": 0, "b": 1}, "start": 1406889000, "end": 1406889600, "attrs": {}}\n'


def test_epoch_microseconds_and_seconds() -> None:
    pats = list(parse_text(JAM, "<p>").patterns)
    assert time_unit_warning(pats, [], "ts", 1406889000000000) == (
        "warning: timestamps in 'ts' look like epoch microseconds (1406889000000000) while pattern 'jam' has a "
        "window of 30 min (in seconds): give --time-unit us"
    )
    assert time_unit_warning(pats, [], "ts", "1406889000") is None  # epoch seconds
    assert time_unit_warning(pats, [], "ts", "x") is None


def test_no_warning_for_a_window_in_timestamp_units(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = write(tmp_path, JAM.replace("30 min", "1800000"), MS)
    rc, out, err = run(capsys, pattern, "--events", events, "--type-field", "type", "--time-field", "ts")
    assert rc == 0 and "warning" not in err and out.count("\n") == 1
