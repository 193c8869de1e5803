"""The memory budget through the API (issue 43): ``petricep.match(..., max_memory=)`` and
``Run(max_memory=)`` stop an explosive pattern with the budget's typed error, and a
``MemoryError`` while a run iterates is that typed error too (exit 3), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

import petricep
from petricep.api import compile_text
from petricep.api.runner import Run
from petricep.errors import StateLimitError
from petricep.events import Event
from petricep.io import InputSpec
from petricep.runtime.engine import Engine

KLEENE = "PATTERN p: SEQ(A a, B+ b[], C c) WITHIN 100000"
ROWS = [{"type": "A", "ts": 0}, *({"type": "B", "ts": i} for i in range(1, 61)), {"type": "C", "ts": 61}]


@pytest.mark.parametrize("engine", ["kernel", "python"])
def test_match_takes_a_memory_budget(engine: str) -> None:
    with pytest.raises(StateLimitError) as info:
        petricep.match(ROWS, KLEENE, type_field="type", time_field="ts", max_memory="20MB", engine=engine)
    assert str(info.value).startswith("the run's memory budget of 20.0 MB is used up at event ")
    assert str(info.value).endswith("or raise the budget (--max-memory SIZE)")


def test_a_memory_error_is_the_typed_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ev.csv").write_text("type,ts\nA,0\nB,1\nC,2\n")

    def exhausted(self: Engine, e: Event) -> list[object]:
        raise MemoryError

    monkeypatch.setattr(Engine, "push", exhausted)
    spec = InputSpec(path=str(tmp_path / "ev.csv"), format="csv", type_field="type", time_field="ts")
    with pytest.raises(StateLimitError) as info:
        list(Run(compile_text(KLEENE), spec, engine="python"))
    assert info.value.exit_code == 3
    assert str(info.value).startswith("out of memory: the machine (or the process's memory limit) ran out before")
