"""tests/watchdog.py: a test stuck in compiled code that holds the GIL (``sum`` over an
endless C iterator never checks for signals, as a loop in the kernel would not) ends its
xdist worker with its stacks printed and the run over, instead of hanging it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = """
import pytest
from tests import watchdog

def pytest_configure(config):
    watchdog.configure(config)

@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    return (yield from watchdog.runtest_protocol(item))

def pytest_terminal_summary(terminalreporter):
    watchdog.terminal_summary(terminalreporter)
"""

TESTS = """
import itertools

def test_first():
    assert True

def test_stuck_in_c():
    sum(itertools.repeat(1))

def test_last():
    assert True
"""


def test_a_test_stuck_in_compiled_code_ends_the_run_with_its_stacks(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_stuck.py").write_text(TESTS)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PETRICEP_TEST_WATCHDOG_GRACE": "1"}
    env.pop("PETRICEP_TEST_WATCHDOG_DIR", None)
    args = ["-c", os.devnull, "--rootdir", str(tmp_path), "-p", "no:cacheprovider", "-p", "no:benchmark", "-q"]
    args += ["-o", "timeout=1", "-n", "1", "--max-worker-restart", "0", "test_stuck.py"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "worker 'gw0' crashed while running 'test_stuck.py::test_stuck_in_c'" in out
    assert "watchdog: a test that never returned" in out
    assert "test_stuck.py::test_stuck_in_c ran past 2 s; its process was ended. Every thread's stack:" in out
    assert 'test_stuck.py", line 8 in test_stuck_in_c' in out
    assert "1 failed, 1 passed" in out
