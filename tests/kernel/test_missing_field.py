"""A condition reading a field an event lacks, pushed through the engine API (Event objects):
the kernel fails with the Python engine's typed error in its words, naming the event that
lacks the field (not ``cannot compare None <= 3``), after the same matches; an explicit None
stays ``cannot compare``. (The CLI and petricep.match check their input first.)"""

from __future__ import annotations

from typing import Any

import pytest

from petricep.api import compile_text
from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.kernel.engine import KernelEngine
from petricep.runtime.engine import Engine

from .compare import ev, fresh

SINGLE = "PATTERN p: SEQ(A a, B b) WHERE a.x < b.x"
KLEENE = "PATTERN p: SEQ(B+ b[]) WHERE skip-till-next-match AND b[2].x <= 3"
# (batch, with_events): every event in the failing one's batch; one event a batch, every event kept
KERNELS = [(8, False), (1, True)]


def _failing(engine: Any, events: list[Event], pairs: bool = False) -> tuple[list[Any], EvaluationError]:
    """The matches' ids before the error, and the error (``pairs``: through push_pairs)."""
    got: list[Any] = []
    with pytest.raises(EvaluationError) as caught:
        try:
            for e in fresh(events):
                got += [m for m, _ in engine.push_pairs(e)] if pairs else engine.push(e)
            if isinstance(engine, KernelEngine):  # (the matches before the failing event, then the error)
                got += [m for m, _ in engine.drain_pairs()] if pairs else engine.drain()
            got += engine.flush()
        except EvaluationError as err:  # (push_pairs: the error carries the pairs before it)
            got += [m for m, _ in getattr(err, "pairs", [])]
            raise
    return [m.ids for m in got], caught.value


CASES = [
    # single-step condition: the failing B lacks x
    (SINGLE, [ev("A", 0, 0, x=1), ev("B", 1, 1, x=2), ev("B", 2, 2)], [{"a": 0, "b": 1}],
     "event 2 (type 'B') has no field 'x'"),
    # the bound A lacks it: the event named is the A, not the failing B
    (SINGLE, [ev("A", 0, 0), ev("B", 1, 1, x=2)], [], "event 0 (type 'A') has no field 'x'"),
    # two As lack it: the engine tries the oldest partial match first
    (SINGLE, [ev("A", 0, 0), ev("A", 1, 1), ev("B", 2, 2, x=2)], [], "event 0 (type 'A') has no field 'x'"),
    # both operands lack it: the left one (a) is read first
    (SINGLE, [ev("A", 0, 0), ev("B", 1, 1)], [], "event 0 (type 'A') has no field 'x'"),
    ("PATTERN p: SEQ(A a, B b) WHERE b.x > a.x", [ev("A", 0, 0), ev("B", 1, 1)], [], "event 1 (type 'B') has no field 'x'"),
    # a Kleene element's condition
    (KLEENE, [ev("B", 0, 0, x=1), ev("B", 1, 1, x=2), ev("B", 2, 2), ev("B", 3, 3, x=2)], [{"b": [0, 1]}],
     "event 2 (type 'B') has no field 'x'"),
    # an explicit None is not missing: the comparison's own error on both
    (SINGLE, [ev("A", 0, 0, x=None), ev("B", 1, 1, x=1)], [], "cannot compare None < 1"),
]


@pytest.mark.parametrize(("text", "events", "before", "message"), CASES)
def test_missing_field_is_the_engines_error(text: str, events: list[Event], before: list[Any], message: str) -> None:
    net = compile_text(text)
    got, err = _failing(Engine(net), events)
    assert (got, str(err)) == (before, message)
    for batch, with_events in KERNELS:
        for pairs in (False, True):
            got, err = _failing(KernelEngine(net, batch=batch, with_events=with_events), events, pairs)
            assert (type(err), got, str(err)) == (EvaluationError, before, message), (batch, with_events, pairs)


def test_a_lacking_event_of_an_earlier_batch() -> None:
    """The failing event itself lacking the field is named whatever the batches; a bound
    event of an earlier batch only with ``with_events`` (without, the kernel no longer has
    the event, and cannot tell a field it lacked from a None it carried: its own words)."""
    net = compile_text(SINGLE)
    failing = [ev("A", 0, 0, x=1), ev("B", 1, 1, x=2), ev("B", 2, 2)]
    got, err = _failing(KernelEngine(net, batch=1), failing)
    assert (got, str(err)) == ([{"a": 0, "b": 1}], "event 2 (type 'B') has no field 'x'")
    bound = [ev("A", 0, 0), ev("A", 1, 1, x=1), ev("B", 2, 2, x=2)]
    assert str(_failing(Engine(net), bound)[1]) == "event 0 (type 'A') has no field 'x'"
    assert str(_failing(KernelEngine(net, batch=3), bound)[1]) == "event 0 (type 'A') has no field 'x'"
    assert str(_failing(KernelEngine(net, batch=1, with_events=True), bound)[1]) == "event 0 (type 'A') has no field 'x'"
    assert str(_failing(KernelEngine(net, batch=1), bound)[1]) == "cannot compare None < 2"
