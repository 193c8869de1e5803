"""Fixtures the test packages share."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from petricep.cli.main import main


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """``petricep`` with these arguments, in process: (exit status, stdout, stderr)."""

    def call(*args: str) -> tuple[int, str, str]:
        rc = main(list(args))
        out, err = capsys.readouterr()
        return rc, out, err

    return call
