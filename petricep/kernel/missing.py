"""A kernel evaluation error on a field an event lacks, in the Python engine's words.

The kernel's columns hold a field an event lacks as None (``e.attrs.get``), as they hold a
None the event carries, so a condition reading it fails as ``cannot compare None <= 3``; the
Python engine, reading the event itself, says ``event 3 (type 'B') has no field 'x'``
(runtime/expr.py). Telling the two apart per event would cost every event a check, so it is
done here, only once the kernel has failed:

* a comparison of attributes (the kernel's superinstructions) says which stored event and
  attribute each operand was read of: the left one is looked at first, as the engine
  evaluates it first; where that event is no longer at hand (an earlier batch, without
  ``with_events``), absent and None cannot be told apart and the kernel's words stay;
* any other failure on a None (arithmetic, a Kleene element read through the interpreter):
  among the events the condition may have read (the failing one first, then those before
  it), the first that lacks a field the net reads of its type is named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.kernel.bytecode import ID_ATTR, TS_ATTR
from petricep.kernel.tableplan import TAG_NULL

_NULL_FAILURES = ("compare", "compute", "negate")  # (what the kernel fails at on a None operand)


def missing_field(
    exc: EvaluationError,
    locate: Callable[[int], Event | None],
    candidates: Iterable[Event],
    readers: Mapping[str, frozenset[int]],
    type_code: Mapping[str, int],
) -> EvaluationError | None:
    """The engine's error for ``exc`` (KernelRun's, with its ``kernel_args``) where one of its
    operands is None read of a field an event lacks; None where it is not that error.
    ``locate(pos)``: the event at an input position, None where not at hand; ``readers``:
    the type codes reading each field the net reads (in the kernel's attribute order)."""
    args = getattr(exc, "kernel_args", None)
    if args is None or args[0] not in _NULL_FAILURES or TAG_NULL not in (args[3], args[5]):
        return None
    if len(args) > 7 and (args[7] >= 0 or args[9] >= 0):
        return _located(args, locate, list(readers))
    fields = [(name, types) for name, types in readers.items() if name not in (TS_ATTR, ID_ATTR)]
    for e in candidates:
        code = type_code.get(e.type)
        for name, types in fields:
            if code in types and name not in e.attrs:
                return _lacks(e, name)
    return None


def _located(args: Sequence[int], locate: Callable[[int], Event | None], attrs: list[str]) -> EvaluationError | None:
    """A comparison's None operands, left first (``args``: the kernel's, each operand's input
    position and attribute after the values)."""
    for tag, pos, attr in ((args[3], args[7], args[8]), (args[5], args[9], args[10])):
        if tag != TAG_NULL or pos < 0:
            continue
        e = locate(pos)
        if e is None:
            return None  # (absent or None: not told)
        if attrs[attr] not in e.attrs:
            return _lacks(e, attrs[attr])
    return None


def _lacks(e: Event, name: str) -> EvaluationError:
    return EvaluationError(f"event {e.id!r} (type {e.type!r}) has no field {name!r}")


__all__ = ["missing_field"]
