"""A streaming key group's engine and the bytes Spark's state store keeps of it.

Each (group, bucket of keys) of a streaming query (:mod:`petricep.spark.keygroups`) has
an engine that lives across micro-batches: between them only its snapshot survives, in
the RocksDB state store. Which engine a new bucket runs is decided once per group at the
driver (:func:`engine_choices`): the compiled
kernel where it covers the group's net exactly and the executor has it built (its state
is then the kernel's arrays as an Arrow IPC stream, :mod:`petricep.kernel.snapshot`),
else the Python engine (its snapshot, an Arrow IPC stream as well,
:mod:`petricep.runtime.snapshot`, after a marker and a digest of the net and tie rule; no
pickle is ever loaded from a checkpoint). A snapshot says which it is by its first bytes (an
Arrow IPC stream starts with a continuation marker), so a bucket restores into the engine
that wrote it even when the query restarts on an executor or a petricep that decides
otherwise. Refused with a message saying why: a kernel snapshot where the kernel is not
built, and state saved for other patterns (each kind carries its net's fingerprint) or by
an earlier petricep.

Both engines are driven the same way (:class:`KeyEngine`): push a micro-batch's released
events, then advance the stream clock to the watermark; matches come with the position
that emitted them (``CLOCK`` for the clock).
"""

from __future__ import annotations

import hashlib
import pickle
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from petricep.compile.net import Net
from petricep.errors import ConfigError, EvaluationError
from petricep.events import Event
from petricep.kernel import available as kernel_available
from petricep.kernel.choice import Budget, Choice, choose, matcher
from petricep.kernel.engine import KernelEngine
from petricep.runtime.engine import Engine, Match

from .partition import engine_net, group_choice, group_options
from .plan import Group, Plan

CLOCK = -1  # the emitting position of matches the stream clock released (not an event)
_IPC_MARKER = b"\xff\xff\xff\xff"
_PY_MARKER = b"petricep.engine/2"  # then the net's digest (16 bytes), then the engine's snapshot


def engine_choices(net: Net, plan: Plan, tie: str) -> list[tuple[Group, Choice]]:
    """Each group with the engine its keys run and why (decided at the driver, once)."""
    return [(g, group_choice(net, g, tie)) for g in plan.groups]


def kernel_groups(choices: Sequence[tuple[Group, Choice]]) -> frozenset[int]:
    """The groups whose keys run on the compiled kernel, of :func:`engine_choices`."""
    return frozenset(g.index for g, c in choices if c.kernel)


def is_kernel_state(data: bytes) -> bool:
    """Whether a stored snapshot is the kernel's (an Arrow IPC stream without a marker)."""
    return data[:4] == _IPC_MARKER


def net_digest(net: Net, tie: str) -> bytes:
    """16 bytes naming a net and tie rule: a Python engine's snapshot carries them (the
    kernel's carries its own fingerprint), so that state saved for another net — another
    pattern file, or an earlier petricep's whole-net engines — is refused, not misread."""
    hit = _digests.get((id(net), tie))
    if hit is not None and hit[0] is net:
        return hit[1]
    digest = hashlib.sha256(pickle.dumps(net, protocol=5) + tie.encode()).digest()[:16]
    if len(_digests) >= 64:
        _digests.clear()
    _digests[(id(net), tie)] = (net, digest)
    return digest


_digests: dict[tuple[int, str], tuple[Net, bytes]] = {}


def python_state(data: bytes, net: Net, tie: str) -> bytes:
    """The engine state inside a Python key's snapshot, checked to be ``net``'s."""
    if not data.startswith(_PY_MARKER):
        raise ConfigError(
            "this key's state was saved by an earlier petricep (or is not a petricep snapshot): "
            "restart the query from a new checkpoint"
        )
    if data[len(_PY_MARKER) : len(_PY_MARKER) + 16] != net_digest(net, tie):
        raise ConfigError(
            "this key's state was saved for other patterns or another tie rule: "
            "restart the query from a new checkpoint"
        )
    return data[len(_PY_MARKER) + 16 :]


class KeyEngine(ABC):
    """One key's engine behind the streaming interface: :meth:`push` a micro-batch's
    released events, :meth:`advance` the clock, :meth:`flush` at the end, :meth:`dumps` its
    state for the state store. ``kind``: which engine (the report's word)."""

    kind: str

    @abstractmethod
    def push(self, events: Sequence[Event]) -> list[tuple[Match, int]]:
        """The matches the events complete, each with its emitting event's position. An
        error names the failing event (``err.event``)."""

    @abstractmethod
    def advance(self, ts: Any, pos: int) -> list[Match]:
        """The stream clock reached ``(ts, pos)``: what the closed windows release."""

    @abstractmethod
    def flush(self) -> list[Match]:
        """End of input: what every window still open releases."""

    @abstractmethod
    def dumps(self) -> bytes:
        """The state, as the state store keeps it (its first bytes say which engine)."""

    @abstractmethod
    def last_pos(self) -> int:
        """The position of the last event pushed (-1 before the first), kept in the state:
        the next events must come after it (:func:`petricep.spark.streaming.renumber`)."""


class PythonKeyEngine(KeyEngine):
    """One key's Python engine (the reference)."""

    kind = "python"

    def __init__(self, engine: Engine, tie: str) -> None:
        self.engine = engine
        self.tie = tie

    def push(self, events: Sequence[Event]) -> list[tuple[Match, int]]:
        out: list[tuple[Match, int]] = []
        for e in events:
            try:
                out.extend((m, e.pos) for m in self.engine.push(e))
            except EvaluationError as err:
                err.event = e  # type: ignore[attr-defined]
                raise
        return out

    def advance(self, ts: Any, pos: int) -> list[Match]:
        return self.engine.advance(ts, pos)

    def flush(self) -> list[Match]:
        return self.engine.flush()

    def dumps(self) -> bytes:
        return _PY_MARKER + net_digest(self.engine.net, self.tie) + self.engine.snapshot()

    def last_pos(self) -> int:
        last = self.engine.state.last_input
        return -1 if last is None else last.pos


class KernelKeyEngine(KeyEngine):
    """One key's :class:`KernelEngine`: a micro-batch's events are fired at once."""

    kind = "kernel"

    def __init__(self, engine: KernelEngine) -> None:
        self.kernel = engine

    def push(self, events: Sequence[Event]) -> list[tuple[Match, int]]:
        out: list[tuple[Match, int]] = []
        for e in events:
            out += self.kernel.push_pairs(e)
        return out + self.kernel.drain_pairs()

    def advance(self, ts: Any, pos: int) -> list[Match]:
        pairs = self.kernel.tick(ts, pos) + self.kernel.drain_pairs()
        return [m for m, _ in pairs]

    def flush(self) -> list[Match]:
        return [m for m, _ in self.kernel.flush_pairs()]

    def dumps(self) -> bytes:
        return self.kernel.snapshot()

    def last_pos(self) -> int:
        return self.kernel.last_position


class EngineCache:
    """Live engines of the key groups (:mod:`petricep.spark.keygroups`) a Python worker
    served in earlier micro-batches, so that an engine is not rebuilt from its snapshot
    every micro-batch (nor its snapshot read). A cached engine is used only when the state
    store names exactly the snapshot taken of it (its token) — after a replay or a task
    that ran elsewhere, the token differs and the engine is rebuilt from the snapshot. One
    cache per net (by its pickled bytes), tie rule and kernel groups; each keeps the last
    ``size`` key groups used."""

    _caches: dict[tuple[bytes, str, frozenset[int]], EngineCache] = {}

    def __init__(self, net: Net, plan: Plan, tie: str, kernel: frozenset[int], size: int = 4096) -> None:
        self.net = net
        self.plan = plan
        self.tie = tie
        self.kernel = kernel
        self.size = size
        self.live: OrderedDict[tuple[int, int], tuple[int, KeyEngine]] = OrderedDict()

    @classmethod
    def of(cls, net: Net, plan: Plan, tie: str, kernel: frozenset[int]) -> EngineCache:
        fingerprint = (hashlib.sha256(pickle.dumps(net, protocol=5)).digest(), tie, kernel)
        cache = cls._caches.get(fingerprint)
        if cache is None:
            if len(cls._caches) >= 8:
                cls._caches.pop(next(iter(cls._caches)))
            cache = cls._caches[fingerprint] = cls(net, plan, tie, kernel)
        return cache

    def live_engine(self, key: tuple[int, int], token: int | None) -> KeyEngine | None:
        """The live engine whose stored snapshot ``token`` names (None: none here)."""
        hit = self.live.pop(key, None)
        if hit is not None and token is not None and hit[0] == token:
            return hit[1]
        return None

    def build(self, group: int, stored: bytes | None) -> KeyEngine:
        """A key engine of ``group`` from its snapshot (None: a new key)."""
        own = engine_net(self.net, self.plan.groups[group])  # the group's own patterns
        if stored is None:  # a new key: the kernel where the driver chose it and it is built here
            options = replace(group_options(self.tie), engine="kernel" if group in self.kernel else "python")
            choice = choose(own, options)  # (the kernel's keys had no budget of partial matches, the engine's its default)
            found = matcher(choice, own, options, Budget(None) if choice.kernel else Budget())
            if isinstance(found, KernelEngine):
                return KernelKeyEngine(found)
            assert isinstance(found, Engine)
            return PythonKeyEngine(found, self.tie)
        if not is_kernel_state(stored):
            engine = Engine(own, self.tie)
            engine.restore(python_state(stored, own, self.tie))
            return PythonKeyEngine(engine, self.tie)
        if not kernel_available():
            raise ConfigError(
                "this key's state was saved by the compiled kernel, which is not built here: "
                "install petricep with a C compiler on every executor (or restart the query "
                "from a new checkpoint)"
            )
        return KernelKeyEngine(KernelEngine.restored(stored, own, self.tie))

    def put(self, key: tuple[int, int], token: int, engine: KeyEngine) -> None:
        if self.size <= 0:
            return
        self.live[key] = (token, engine)
        if len(self.live) > self.size:
            self.live.popitem(last=False)
