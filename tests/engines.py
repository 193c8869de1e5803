"""Run patterns on one of petricep's engines with the reference matcher's interface.

``matcher_run(name)`` (``embedded``: the Python engine; ``kernel``: the compiled kernel) returns ``f(patterns, events, tie) -> list[dict]``. Engine errors
are mapped to the exceptions the reference raises for the same misuse (ValueError for a
rejected pattern set or option, TypeError for an ill-typed comparison), so hand cases
can assert the same behaviour on every engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from petricep.errors import EvaluationError, PetricepError
from petricep.events import Event
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.runtime.engine import Engine

ENGINES = ("embedded",)


def fresh(events: Sequence[Event]) -> list[Event]:
    return [Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in events]


def run_embedded(patterns: Sequence[A.Pattern], events: Sequence[Event], tie: str = "arrival") -> list[dict[str, Any]]:
    try:
        engine = Engine(build_net(list(patterns)), tie=tie)
        return [m.to_dict() for m in engine.run(fresh(events))]
    except EvaluationError as e:
        raise TypeError(str(e)) from e
    except PetricepError as e:
        raise ValueError(str(e)) from e


def run_kernel(patterns: Sequence[A.Pattern], events: Sequence[Event], tie: str = "arrival") -> list[dict[str, Any]]:
    """The compiled kernel (which must cover the net: a hand case meant for it fails, not
    falls back) over the events as one Arrow table, its matches as the engine's dicts."""
    from petricep.kernel import KernelRun, supports, to_matches
    from tests.kernel.compare import table

    try:
        net = build_net(list(patterns))
        ok, reason = supports(net, tie)
        assert ok, reason
        run = KernelRun(net, tie=tie, id_field="id")
        got = [run.push(table(events)), run.flush()] if events else [run.flush()]
        return [m.to_dict() for t in got for m in to_matches(t, net)]
    except EvaluationError as e:
        raise TypeError(str(e)) from e
    except PetricepError as e:
        raise ValueError(str(e)) from e


def run_kernel_engine(patterns: Sequence[A.Pattern], events: Sequence[Event], tie: str = "arrival") -> list[dict[str, Any]]:
    """The kernel as a run drives it (:class:`KernelEngine`, event by event, its matches as
    Match objects): events may lack fields no condition reads of their type."""
    from petricep.kernel import supports
    from petricep.kernel.engine import KernelEngine

    try:
        net = build_net(list(patterns))
        ok, reason = supports(net, tie)
        assert ok, reason
        engine = KernelEngine(net, tie=tie)
        out = [m for e in fresh(events) for m in engine.push(e)]
        return [m.to_dict() for m in out + engine.flush()]
    except EvaluationError as e:
        raise TypeError(str(e)) from e
    except PetricepError as e:
        raise ValueError(str(e)) from e


def matcher_run(name: str) -> Callable[..., list[dict[str, Any]]]:
    if name == "embedded":
        return run_embedded
    if name == "kernel":
        return run_kernel
    if name == "kernel-engine":
        return run_kernel_engine
    raise ValueError(f"unknown engine {name!r}")
