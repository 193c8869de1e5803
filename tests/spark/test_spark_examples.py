"""examples/spark_*.py run and agree with the embedded engine."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]


def test_batch_example(spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert runpy.run_path(str(ROOT / "examples" / "spark_batch.py"))["main"](spark) == 0
    out = capsys.readouterr().out
    assert "matches per pattern: {'sase_equal_price': 6525}; the same as the embedded engine's: True" in out


def test_stream_example(spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert runpy.run_path(str(ROOT / "examples" / "spark_stream.py"))["main"](spark) == 0
    out = capsys.readouterr().out
    assert "20000 events, 6525 matches; the same as a batch run: True" in out
    assert "micro-batch 3:" in out
