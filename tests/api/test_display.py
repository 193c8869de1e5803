"""A compiled net shows itself as its diagram in a notebook: :mod:`petricep.export`
registers the SVG display with IPython (the net knows nothing of its drawing), whether or
not ``Net`` has a ``_repr_svg_`` of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from petricep.compile.net import Net
from petricep.export import net_svg, register_notebook_display
from tests.export.helpers import needs_dot

ROOT = Path(__file__).resolve().parents[2]


class FakeFormatter:
    def __init__(self) -> None:
        self.printers: dict[type, Callable[[Any], Any]] = {}

    def for_type(self, cls: type, fn: Callable[[Any], Any]) -> None:
        self.printers[cls] = fn


def test_registers_the_svg_display_of_a_net_with_a_shell() -> None:
    svg = FakeFormatter()
    shell = type("Shell", (), {})()
    shell.display_formatter = type("DF", (), {"formatters": {"image/svg+xml": svg}})()
    assert register_notebook_display(shell) is True
    assert svg.printers == {Net: net_svg}


def test_outside_ipython_nothing_is_registered() -> None:
    if "IPython" in sys.modules:
        pytest.skip("IPython was imported by another test")
    assert register_notebook_display() is False


def test_without_dot_the_display_falls_back_to_text(monkeypatch: pytest.MonkeyPatch) -> None:
    from petricep.api import compile_text

    monkeypatch.setenv("PATH", "")
    assert net_svg(compile_text("PATTERN SEQ(A a, B b) WITHIN 5")) is None


@needs_dot
def test_a_real_ipython_shell_shows_the_diagram_with_or_without_repr_svg() -> None:
    pytest.importorskip("IPython")
    code = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "from petricep.compile.net import Net\n"
        "if hasattr(Net, '_repr_svg_'): del Net._repr_svg_\n"
        "from petricep.api import compile_text\n"  # the API imports export inside IPython
        "data, _ = shell.display_formatter.format(compile_text('PATTERN SEQ(A a, B b) WITHIN 5'))\n"
        "svg = data['image/svg+xml']\n"
        "assert svg.lstrip().startswith('<?xml') and '</svg>' in svg, svg[:200]\n"
        "print('ok')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr
