"""SIGINT and SIGTERM end ``petricep run`` with a one-line message, the matches found so
far (complete lines, renamed into place, each a match of the whole input) and the
accounting so far; exit 130 / 143."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from petricep.api import compile_files
from petricep.io import InputSpec, open_events
from petricep.output.jsonl import match_json
from petricep.runtime.engine import Engine

ROOT = Path(__file__).resolve().parents[2]
# no window: every B matches every earlier A of its key, so the run outlasts the test
PATTERN = "PATTERN pairs: SEQ(A a, B b)\nWHERE [k] AND b.x >= a.x\n"
WARNING = (
    "warning: pattern 'pairs' has no WITHIN window: its partial matches may grow without bound "
    "(add WITHIN, or LIMIT n PARTIAL MATCHES)"
)


def start(tmp_path: Path) -> tuple[subprocess.Popen[str], list[str]]:
    (tmp_path / "p.pcep").write_text(PATTERN)
    rows = "".join(f"{'AB'[i % 2]},{i},1,{i % 3}\n" for i in range(20000))
    (tmp_path / "ev.csv").write_text("type,ts,k,x\n" + rows)
    argv = [
        sys.executable, "-m", "petricep", "run", str(tmp_path / "p.pcep"), "--events", str(tmp_path / "ev.csv"),
        "--type-field", "type", "--time-field", "ts", "-o", str(tmp_path / "m.jsonl"), "--stats", str(tmp_path / "s.json"),
        # the Python engine stops after the current event; the kernel after the reader's batch it is firing
        # (tests/api/test_run.py): this test's stop points are the Python engine's
        "--engine", "python",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env), argv


def wait_for_matches(tmp_path: Path, proc: subprocess.Popen[str]) -> None:
    """Until matches are being written (the temporary file beside m.jsonl grows)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        temps = [p for p in tmp_path.glob(".m.jsonl.*.tmp") if p.stat().st_size > 0]
        if temps:
            return
        time.sleep(0.05)
    pytest.fail("the run did not start writing matches")


def reference(tmp_path: Path, events: int) -> list[str]:
    """The matches of the first ``events`` events, without the end-of-stream flush."""
    net = compile_files([tmp_path / "p.pcep"])
    engine = Engine(net)
    out = []
    source = open_events(InputSpec(str(tmp_path / "ev.csv"), type_field="type", time_field="ts"))
    for e in source:
        if e.pos >= events:
            break
        out += [match_json(m) for m in engine.push(e)]
    return out


@pytest.mark.parametrize("signum,code,name", [(signal.SIGINT, 130, "SIGINT"), (signal.SIGTERM, 143, "SIGTERM")])
def test_a_signal_ends_the_run_with_the_matches_so_far(tmp_path: Path, signum: int, code: int, name: str) -> None:
    proc, _ = start(tmp_path)
    wait_for_matches(tmp_path, proc)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err
    lines = err.splitlines()
    assert lines[0] == WARNING
    m = re.fullmatch(rf"interrupted by {name} after (\d+) events read: the output holds the matches found so far", lines[1])
    assert m, lines[1]
    read = int(m.group(1))
    out = (tmp_path / "m.jsonl").read_text()
    assert out.endswith("\n")
    got = out.splitlines()
    assert [json.loads(line) for line in got]  # complete lines, valid JSON
    assert re.fullmatch(
        rf"summary: {read} events read = {read} processed \+ 0 rejected \+ 0 late; {len(got)} matches in .*", lines[2]
    )
    assert got == reference(tmp_path, read)
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["events"] == {"read": read, "processed": read, "rejected": 0, "late": 0, "composite": 0}
    assert stats["patterns"]["pairs"]["matches"] == len(got)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ev.csv", "m.jsonl", "p.pcep", "s.json"]
    assert "Traceback" not in err
