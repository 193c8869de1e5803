"""The ``files`` fixture: the rise pattern and its events in the test's directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.rise import EVENTS, RISE


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    """The pattern file and the events file, written into the test's directory."""
    (tmp_path / "rise.pcep").write_text(RISE)
    (tmp_path / "ev.csv").write_text(EVENTS)
    return str(tmp_path / "rise.pcep"), str(tmp_path / "ev.csv")
