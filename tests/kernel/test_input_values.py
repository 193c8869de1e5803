"""Values the kernel holds no kind of (a list, an object) in its input (issue 43, items 4 and
7): where no condition or key of the row's type reads them they need none, and the kernel
matches as the Python engine does; where one is read, the row's error."""

from __future__ import annotations

import pyarrow as pa
import pytest

from petricep.api import compile_text
from petricep.errors import EvaluationError, EventError
from petricep.events import Event
from petricep.kernel import KernelRun
from petricep.kernel.engine import KernelEngine
from petricep.runtime.engine import Engine

from .compare import ev

COMPARED = "PATTERN p: SEQ(A a, B b) WHERE b.x > a.x WITHIN 10"
KEYED = "PATTERN p: SEQ(A a, B b) WHERE [k] AND [j] WITHIN 10"


def _both(text: str, events: list[Event]) -> list[dict[str, object]]:
    """The kernel's matches, equal to the Python engine's."""
    net = compile_text(text)
    kernel = KernelEngine(net, batch=3)
    got = [m.to_dict() for e in events for m in kernel.push(e)] + [m.to_dict() for m in kernel.flush()]
    assert got == [m.to_dict() for m in Engine(net).run(iter(events))]
    return got


def test_lists_and_objects_no_condition_of_their_type_reads() -> None:
    events = [ev("A", 1, 0, x=1, k="a", j=1), ev("C", 2, 1, x=[1, 2], k=[1], j={"u": 1}), ev("B", 3, 2, x=5, k="a", j=1),
              ev("C", 4, 3, x={"u": 1}, k={"v": 2}, j=[[3]]), ev("B", 5, 4, x=7, k="a", j=1)]
    assert [m["ids"] for m in _both(COMPARED, events)] == [{"a": 0, "b": 2}, {"a": 0, "b": 4}]
    assert [m["ids"] for m in _both(KEYED, events)] == [{"a": 0, "b": 2}, {"a": 0, "b": 4}]


@pytest.mark.parametrize(("text", "bad", "message"), [
    (COMPARED, ev("B", 3, 2, x=[5], k="a", j=1), "field 'x': expected a single value, got a list"),
    (KEYED, ev("B", 3, 2, x=5, k={"u": 1}, j=1), "field 'k': expected a single value, got an object"),
    (KEYED, ev("B", 3, 2, x=5, k="a", j=[1]), "field 'j': expected a single value, got a list"),
])  # fmt: skip
def test_one_a_condition_or_key_reads_is_the_events_error(text: str, bad: Event, message: str) -> None:
    kernel = KernelEngine(compile_text(text), batch=3)
    with pytest.raises(EvaluationError) as e:
        for x in [ev("A", 1, 0, x=1, k="a", j=1), ev("C", 2, 1, x=[1], k=[1], j=[1]), bad]:
            kernel.push(x)
    assert str(e.value) == message
    assert e.value.event is bad  # type: ignore[attr-defined]


def test_an_arrow_list_column_only_other_types_read() -> None:
    """KernelRun over Arrow: a list column that only D events' conditions read, D or not."""
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE b.y > a.y WITHIN 10\nPATTERN q: SEQ(D d, B b) WHERE d.x = 1 WITHIN 10")
    table = pa.table({"type": ["A", "C", "B"], "ts": [1, 2, 3], "y": [1, 0, 2], "x": pa.array([[1], [2], [3]])})
    got = KernelRun(net).push(table)
    assert (got.column("pattern").to_pylist(), got.column("b").to_pylist()) == (["p"], [2])
    with pytest.raises(EventError) as e:
        KernelRun(net).push(table.set_column(0, "type", pa.array(["A", "C", "D"])))
    assert (e.value.message, e.value.row, e.value.field) == ("the kernel reads numbers and text, not list<item: int64>", 2, "x")
