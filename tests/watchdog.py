"""A watchdog for a test that never returns to the interpreter.

pytest-timeout's signal method fails a test past ``timeout`` seconds by raising in the main
thread, and its thread method by running Python code in a timer thread: neither can stop a
loop in compiled code that holds the GIL and never checks for signals (a kernel bug would be
one), so such a test hangs the whole run until CI's own limit ends it, with no word of which
test it was. ``faulthandler``'s watchdog is a C thread: some seconds after pytest-timeout's
limit it writes every thread's stack to a file and ends the process. Under xdist the
controller then reports the worker crashed while running that test (``--max-worker-restart 0``
ends the run), and at the end this module prints the stacks: a worker's own stderr goes
nowhere the run shows.
"""

from __future__ import annotations

import faulthandler
import os
import shutil
import tempfile
from collections.abc import Generator
from typing import IO

import pytest

# seconds past pytest-timeout's own limit: a test it can stop fails there, as before
# (the variable: for the watchdog's own test)
GRACE_S = float(os.environ.get("PETRICEP_TEST_WATCHDOG_GRACE", "60"))
_DIR_ENV = "PETRICEP_TEST_WATCHDOG_DIR"
_file: IO[str] | None = None
_made = False  # this process made the directory (and removes it)


def _limit(config: pytest.Config) -> float:
    """pytest-timeout's ``timeout`` plus the grace; 0 where there is no limit (its plugin
    off or the limit 0)."""
    try:
        timeout = float(config.getini("timeout") or 0)
    except ValueError:  # no such ini: pytest-timeout not loaded
        return 0.0
    return timeout + GRACE_S if timeout > 0 else 0.0


def configure(config: pytest.Config) -> None:
    """The directory of this run's stack files, made by the controller (or the only process)
    and handed to xdist's workers through the environment they inherit."""
    global _made
    if _DIR_ENV not in os.environ:
        os.environ[_DIR_ENV] = tempfile.mkdtemp(prefix="petricep-watchdog-")
        _made = True


def runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    """Arm the watchdog for one test, its fixtures' set-up and tear-down included (the last
    test's tear-down ends the session's fixtures, a Spark session too)."""
    global _file
    limit = _limit(item.config)
    if limit <= 0:
        return (yield)
    if _file is None:
        path = os.path.join(os.environ[_DIR_ENV], f"stacks-{os.getpid()}.txt")
        _file = open(path, "w", encoding="utf-8")  # noqa: SIM115 (open for the process's life)
    _file.write(f"{item.nodeid} ran past {limit:.0f} s; its process was ended. Every thread's stack:\n")
    _file.flush()
    faulthandler.dump_traceback_later(limit, exit=True, file=_file)
    try:
        return (yield)
    finally:
        faulthandler.cancel_dump_traceback_later()
        _file.seek(0)
        _file.truncate()


def terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print what the watchdog wrote (nothing where every test returned), then remove the
    directory; only the process that made it does (xdist's workers share it)."""
    directory = os.environ.get(_DIR_ENV, "")
    if not _made or not os.path.isdir(directory):
        return
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
            text = f.read()
        if "Thread" in text:  # a dump, not only the line naming the test that ran
            terminalreporter.section("watchdog: a test that never returned", sep="=", red=True)
            terminalreporter.write(text)
    shutil.rmtree(directory, ignore_errors=True)
