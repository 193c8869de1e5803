"""The ``petricep`` process ends without the interpreter's teardown (``petricep.cli.main.console``,
issue 16): what it wrote is all there (standard output piped, files committed), its exit
status is the command's, and where something could still run at exit (a profiler, a thread
that is no daemon) it exits as Python does."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from petricep.cli.main import main, may_skip_teardown
from tests.cli.rise import opts

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
PATTERN = "PATTERN rise: SEQ(A a, B b) WHERE b.x > a.x WITHIN 10\n"


def _files(tmp_path: Path, rows: int) -> tuple[str, str]:
    (tmp_path / "p.pcep").write_text(PATTERN)
    lines = ["type,ts,id,x"] + [f"{'AB'[i % 2]},{i // 2},{i},{i % 5}" for i in range(rows)]
    (tmp_path / "ev.csv").write_text("\n".join(lines) + "\n")
    return str(tmp_path / "p.pcep"), str(tmp_path / "ev.csv")


def _petricep(*args: str, prefix: tuple[str, ...] = ("-m", "petricep")) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *prefix, *args], capture_output=True, text=True, cwd=ROOT, env=ENV)


def test_piped_matches_are_all_written_and_the_status_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern, events = _files(tmp_path, 20_000)
    args = ["run", pattern, *opts(events), "--no-progress"]
    proc = _petricep(*args)
    assert proc.returncode == 0, proc.stderr
    assert main(args) == 0  # the same command in this process: the same lines
    assert proc.stdout == capsys.readouterr().out and proc.stdout.count("\n") > 1000
    assert "engine:" in proc.stderr


def test_error_statuses_and_messages_as_before(tmp_path: Path) -> None:
    pattern, events = _files(tmp_path, 10)
    Path(events).write_text("type,ts,id,x\nA,1,1,2\nA,zz,2,3\n")
    proc = _petricep("run", pattern, *opts(events), "--no-progress", "-o", str(tmp_path / "m.jsonl"))
    assert proc.returncode == 3
    assert proc.stderr == f"{events}:3: field 'ts': error: cannot parse timestamp 'zz'\n"
    assert not (tmp_path / "m.jsonl").exists()
    assert _petricep("run", pattern, "--events").returncode == 2  # argparse's usage error
    assert _petricep("--version").stdout.startswith("petricep ")


def test_a_profiler_still_reports(tmp_path: Path) -> None:
    """``python -m cProfile -m petricep ...`` prints its table: it runs at the usual exit."""
    pattern, events = _files(tmp_path, 100)
    proc = _petricep("run", pattern, *opts(events), "--no-progress", prefix=("-m", "cProfile", "-s", "tottime", "-m", "petricep"))
    assert proc.returncode == 0
    assert "function calls" in proc.stdout


def test_the_usual_exit_where_something_may_run_at_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # (this test process may hold Spark or a test runner's threads: the plain case is asserted
    # in a fresh interpreter)
    fresh = subprocess.run(
        [sys.executable, "-c", "from petricep.cli.main import may_skip_teardown as m; print(m())"],
        capture_output=True, text=True, check=True,
    )
    assert fresh.stdout.strip() == "True"
    monkeypatch.delitem(sys.modules, "pyspark", raising=False)
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)  # no daemon: Python waits for it at exit
    worker.start()
    try:
        assert not may_skip_teardown()
    finally:
        stop.set()
        worker.join()
    monkeypatch.setitem(sys.modules, "pyspark", sys)
    assert not may_skip_teardown()
