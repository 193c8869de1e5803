"""The run's memory budget in bytes (``--max-memory``, ``Engine(max_memory=...)``).

The budget of live partial matches (``--max-partial-matches``) bounds how many partial
matches a shared net holds, whatever they cost; this one bounds the bytes a run's state takes:

* on the compiled kernel, what its arenas hold, counted exactly where they grow, before they
  grow (tokens, Kleene lists' elements, the events they bind, per-key lists, buffered negative
  events and waiting matches, matches buffered before they are taken): a growth that would go
  past the budget stops the run instead;
* on the Python engine, an estimate: its live partial matches at :data:`TOKEN_BYTES` each
  (measured with tracemalloc: ~290 bytes a linear pattern's token, ~320 a Kleene list's,
  bench/RESULTS.md "A memory budget that holds"), and the events a slack holds back at their
  measured size (:func:`event_bytes`), checked when either could have filled the room left.

Either way the run stops with :class:`~petricep.errors.StateLimitError` (exit 3) naming the
budget, what holds the bytes and how to raise it (:func:`memory_error`). A ``MemoryError``
(the machine's own limit reached first) is the same error, worded by :func:`out_of_memory`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import Any

from petricep.errors import ConfigError, StateLimitError
from petricep.events import Event

TOKEN_BYTES = 320  # a Python engine's partial match: its Token and its place in a marking list
HEAP_ENTRY_BYTES = 104  # a held event's entry in the slack's heap: the tuple, its arrival number, the slot
UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*")
HOW = "bound the patterns with a window (WITHIN) or LIMIT n PARTIAL MATCHES, or raise the budget (--max-memory SIZE)"


def parse_size(text: str) -> int:
    """``1GB``, ``512MB``, ``64KiB``, ``1.5GB`` or a number of bytes: the bytes (decimal units
    are powers of 10, ``KiB``... powers of 2); ConfigError for anything else or below 1 byte."""
    m = _SIZE.fullmatch(text)
    unit = m.group(2).upper() if m else None
    if m is None or unit not in UNITS:
        raise ConfigError(f"expected a size such as 512MB, 1GB or 2GiB, not {text!r}")
    n = int(float(m.group(1)) * UNITS[unit])
    if n < 1:
        raise ConfigError(f"the memory budget must be at least 1 byte, not {text!r}")
    return n


def check_size(max_memory: int | None) -> int | None:
    """``max_memory`` as an API takes it: a positive number of bytes, or None (no budget)."""
    if max_memory is not None and (isinstance(max_memory, bool) or not isinstance(max_memory, int) or max_memory < 1):
        raise ConfigError(f"max_memory must be a positive number of bytes or None, not {max_memory!r}")
    return max_memory


def size_text(n: float) -> str:
    """Bytes as a person reads them: ``512.0 MB``, ``1.2 GB``, ``640 B``."""
    if n < 1000:
        return f"{int(n)} B"
    for unit in ("KB", "MB", "GB"):
        n /= 1000
        if n < 1000:
            return f"{n:.1f} {unit}"
    return f"{n / 1000:.1f} TB"


def event_bytes(e: Event) -> int:
    """What a held event costs: the object, its fields' dict and values, its heap entry."""
    attrs = e.attrs
    size = sys.getsizeof(e) + sys.getsizeof(attrs) + HEAP_ENTRY_BYTES + sys.getsizeof(e.id)
    for v in attrs.values():
        size += sys.getsizeof(v)
    return size


def memory_error(budget: int, parts: Mapping[str, int], event_id: Any, more: int = 0) -> StateLimitError:
    """The budget's error: what holds the bytes (the parts that hold any, largest first)."""
    held = sum(parts.values())
    shown = ", ".join(f"{name} {size_text(n)}" for name, n in sorted(parts.items(), key=lambda kv: -kv[1]) if n)
    asked = f", {size_text(more)} more asked for" if more else ""
    return StateLimitError(
        f"the run's memory budget of {size_text(budget)} is used up at event {event_id!r}: {size_text(held)} held "
        f"({shown or 'nothing'}){asked}; {HOW}"
    )


def out_of_memory() -> StateLimitError:
    """A ``MemoryError``: the machine (or the process's address-space limit) ran out first."""
    return StateLimitError(
        "out of memory: the machine (or the process's memory limit) ran out before the run's budgets did; set a "
        "budget below it (--max-memory SIZE, --max-partial-matches N) to stop the run with the state named, or "
        "bound the patterns with a window (WITHIN) or LIMIT n PARTIAL MATCHES"
    )


__all__ = ["TOKEN_BYTES", "check_size", "event_bytes", "memory_error", "out_of_memory", "parse_size", "size_text"]
