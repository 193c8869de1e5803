"""A kernel evaluation error on a field an event lacks, in the Python engine's words.

The kernel's columns hold a field an event lacks as None (``e.attrs.get``), as they hold a
None the event carries, so a condition reading it fails as ``cannot compare None <= 3``; the
Python engine, reading the event itself, says ``event 3 (type 'B') has no field 'x'``
(runtime/expr.py). Telling the two apart per event would cost every event a check, so it is
done here, only once the kernel has failed: among the events the failing condition may have
read (the failing one first, then those before it), the first that lacks a field the net reads
of its type is the one named.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.kernel.bytecode import ID_ATTR, TS_ATTR
from petricep.kernel.tableplan import TAG_NULL

_NULL_FAILURES = ("compare", "compute", "negate")  # (what the kernel fails at on a None operand)


def missing_field(
    exc: EvaluationError, candidates: Iterable[Event], readers: Mapping[str, frozenset[int]], type_code: Mapping[str, int]
) -> EvaluationError | None:
    """The engine's error for ``exc`` (KernelRun's, with its ``kernel_args``) where one of its
    operands is None and one of ``candidates`` lacks a field the net reads of its type
    (``readers``: the type codes reading each field); None where it is not that error."""
    args = getattr(exc, "kernel_args", None)
    if args is None or args[0] not in _NULL_FAILURES or TAG_NULL not in (args[3], args[5]):
        return None
    fields = [(name, types) for name, types in readers.items() if name not in (TS_ATTR, ID_ATTR)]
    for e in candidates:
        code = type_code.get(e.type)
        for name, types in fields:
            if code in types and name not in e.attrs:
                return EvaluationError(f"event {e.id!r} (type {e.type!r}) has no field {name!r}")
    return None


__all__ = ["missing_field"]
