"""The small ``rise`` pattern and stream several CLI tests run, and how they call ``run``."""

from __future__ import annotations

from pathlib import Path

import pytest

from petricep.cli import main

ROOT = Path(__file__).resolve().parents[2]
RISE = "PATTERN rise: SEQ(A a, B b)\nWHERE [k] AND b.x > a.x\nWITHIN 10\n"
EVENTS = "type,ts,k,x\nA,1,1,5\nA,2,2,5\nB,3,1,7\nB,4,2,4\nB,5,1,9\n"
LINES = (
    '{"pattern": "rise", "ids": {"a": 0, "b": 2}, "start": 1, "end": 3, "attrs": {}}\n'
    '{"pattern": "rise", "ids": {"a": 0, "b": 4}, "start": 1, "end": 5, "attrs": {}}\n'
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["run", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def opts(events: str) -> list[str]:
    return ["--events", events, "--type-field", "type", "--time-field", "ts"]
