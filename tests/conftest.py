"""Fixtures the test packages share."""

from __future__ import annotations

from collections.abc import Callable, Generator

import pytest

from petricep.cli.main import main
from petricep.export import dot_available
from tests import watchdog
from tests.budget import load_profile

load_profile()  # HYPOTHESIS_PROFILE: the default share of examples, or deep (tests/budget.py)

DOT_MISSING = (
    "Graphviz's dot is not installed, so the SVG/PNG tests skip (DOT and PNML tests still run): "
    "get them with  apt-get install graphviz  (brew install graphviz, conda install graphviz)"
)


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``petricep`` with these arguments, in process: (exit status, stdout, stderr)."""

    def call(*args: str) -> tuple[int, str, str]:
        rc = main(list(args))
        out, err = capsys.readouterr()
        return rc, out, err

    return call


def _skip_without_dot() -> None:
    if not dot_available():
        pytest.skip(DOT_MISSING)


@pytest.fixture
def needs_dot() -> None:
    """Skip where Graphviz's ``dot`` is missing (the tests that render SVG or PNG)."""
    _skip_without_dot()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Every ``dot`` skip at one location, so that ``-ra``'s summary says it once, not once
    per test (it folds skips by location, and pytest puts each at its test's)."""
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple) and DOT_MISSING in str(report.longrepr[2]):
        report.longrepr = (__file__, _skip_without_dot.__code__.co_firstlineno + 2, DOT_MISSING)
    return report


@pytest.hookimpl(tryfirst=True)  # before xdist reads the group marks into the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests that use the shared SparkSession (the ``spark`` fixture) in one xdist
    group, so that under ``-n`` one worker starts the JVM and runs them all; and the
    Spark tests first (the others keep their order), so that their long ones (a JVM
    each, started and killed) start early beside that group rather than last."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("spark"))
    items.sort(key=lambda item: item.get_closest_marker("spark") is None)


def pytest_configure(config: pytest.Config) -> None:
    watchdog.configure(config)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """A test that never returns to the interpreter ends its process with its stacks
    written (tests/watchdog.py)."""
    return (yield from watchdog.runtest_protocol(item))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    watchdog.terminal_summary(terminalreporter)
