"""A streaming key group's runner and the bytes Spark's state store keeps of it.

Each (group, bucket of keys) of a streaming query (:mod:`petricep.spark.keygroups`) has
a :class:`~petricep.spark.partition.KeyRunner` that lives across micro-batches -- the batch
run's runner, over the chooser's matcher: between micro-batches only its matcher's
snapshot survives, in the RocksDB state store. Which matcher a new bucket runs is decided
once per group at the driver (:func:`engine_choices`): the compiled kernel where it covers
the group's net exactly and the executor has it built, else the Python engine.

One state format: each engine's own Arrow IPC snapshot (:mod:`petricep.kernel.snapshot`,
:mod:`petricep.runtime.snapshot`; no pickle is loaded from a checkpoint here), which names
the engine that wrote it in its schema's metadata (:func:`state_engine`). A bucket
restores into the engine that wrote it, even when the query restarts on an executor or a
petricep that decides otherwise. Refused with a message saying why: a kernel snapshot where
the kernel is not built, state saved for other patterns or another tie rule (each snapshot
carries its net's fingerprint), and state an earlier petricep wrote in another format.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Generic, TypeVar

import pyarrow as pa

from petricep.compile.net import Net
from petricep.errors import ConfigError
from petricep.kernel import available as kernel_available
from petricep.kernel import snapshot as kernel_snapshot
from petricep.kernel.choice import Budget, Choice
from petricep.kernel.engine import KernelEngine
from petricep.runtime import snapshot as engine_snapshot
from petricep.runtime.engine import Engine

from .partition import KeyRunner, engine_net, group_choice, key_matcher
from .plan import Group, Plan

CLOCK = -1  # the emitting position of matches the stream clock released (not an event)
EARLIER = (
    "this key's state was saved by an earlier petricep (or is not a petricep snapshot): "
    "restart the query from a new checkpoint"
)
OTHER_NET = (
    "this key's state was saved for other patterns or another tie rule: restart the query from a new checkpoint"
)
NO_KERNEL = (
    "this key's state was saved by the compiled kernel, which is not built here: install petricep with a C "
    "compiler on every executor (or restart the query from a new checkpoint)"
)
# the engines' snapshots, by the marker in their schema's metadata
_ENGINES = {kernel_snapshot.MAGIC: "kernel", engine_snapshot.MAGIC: "python"}


def engine_choices(net: Net, plan: Plan, tie: str) -> list[tuple[Group, Choice]]:
    """Each group with the engine its keys run and why (decided at the driver, once)."""
    return [(g, group_choice(net, g, tie)) for g in plan.groups]


def kernel_groups(choices: Sequence[tuple[Group, Choice]]) -> frozenset[int]:
    """The groups whose keys run on the compiled kernel, of :func:`engine_choices`."""
    return frozenset(g.index for g, c in choices if c.kernel)


def state_engine(data: bytes) -> tuple[str, bytes]:
    """Which engine wrote a stored snapshot (``kernel`` or ``python``) and the fingerprint
    of the net and tie rule it was written for, from its Arrow schema's metadata (the
    schema alone is read); ConfigError where it is neither engine's."""
    try:
        meta = pa.ipc.open_stream(pa.py_buffer(data)).schema.metadata or {}
    except (pa.ArrowException, OSError, ValueError):
        raise ConfigError(EARLIER) from None
    engine = _ENGINES.get(meta.get(b"magic", b""))
    if engine is None:
        raise ConfigError(EARLIER)
    return engine, meta.get(b"fingerprint", b"")


R = TypeVar("R")


class LiveRunners(Generic[R]):
    """The live runners a worker keeps between micro-batches, by (group, bucket): one is
    used only when the state store names exactly the snapshot taken of it (its token);
    the last ``size`` used are kept."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.live: OrderedDict[tuple[int, int], tuple[int, R]] = OrderedDict()

    def live_engine(self, key: tuple[int, int], token: int | None) -> R | None:
        """The live runner whose stored snapshot ``token`` names (None: none here)."""
        hit = self.live.pop(key, None)
        if hit is not None and token is not None and hit[0] == token:
            return hit[1]
        return None

    def put(self, key: tuple[int, int], token: int, engine: R) -> None:
        if self.size <= 0:
            return
        self.live[key] = (token, engine)
        if len(self.live) > self.size:
            self.live.popitem(last=False)


class EngineCache(LiveRunners[KeyRunner]):
    """Live runners of the key groups (:mod:`petricep.spark.keygroups`) a Python worker
    served in earlier micro-batches, so that a matcher is not rebuilt from its snapshot
    every micro-batch (nor its snapshot read). A cached runner is used only when the state
    store names exactly the snapshot taken of it (its token) -- after a replay or a task
    that ran elsewhere, the token differs and the runner is rebuilt from the snapshot. One
    cache per net (by its fingerprint), tie rule and kernel groups; each keeps the last
    ``size`` key groups used."""

    _caches: dict[tuple[str, frozenset[int]], EngineCache] = {}

    def __init__(self, net: Net, plan: Plan, tie: str, kernel: frozenset[int], size: int = 4096) -> None:
        self.net = net
        self.plan = plan
        self.tie = tie
        self.kernel = kernel
        super().__init__(size)

    @classmethod
    def of(cls, net: Net, plan: Plan, tie: str, kernel: frozenset[int]) -> EngineCache:
        fingerprint = (engine_snapshot.fingerprint(net, tie), kernel)
        cache = cls._caches.get(fingerprint)
        if cache is None:
            if len(cls._caches) >= 8:
                cls._caches.pop(next(iter(cls._caches)))
            cache = cls._caches[fingerprint] = cls(net, plan, tie, kernel)
        return cache

    def build(self, group: int, stored: bytes | None) -> KeyRunner:
        """A key group's runner from its snapshot (None: a new bucket: the kernel where the
        driver chose it and it is built here; the kernel's keys have no budget of partial
        matches, the Python engine's its default)."""
        grp = self.plan.groups[group]
        if stored is None:
            engine = "kernel" if group in self.kernel else "python"
            return KeyRunner(key_matcher(self.net, grp, self.tie, engine=engine, budgets=(Budget(None), Budget())), grp)
        own = engine_net(self.net, grp)  # the group's own patterns
        written_by, written_for = state_engine(stored)
        if written_by == "kernel":
            if not kernel_available():
                raise ConfigError(NO_KERNEL)
            kernel = KernelEngine(own, tie=self.tie)
            ours = kernel_snapshot.fingerprint(kernel.kernel.lowered, self.tie)
            matcher: KernelEngine | Engine = kernel
        else:
            matcher = Engine(own, self.tie)
            ours = engine_snapshot.fingerprint(own, self.tie)
        if written_for != ours.encode():
            raise ConfigError(OTHER_NET)
        matcher.restore(stored)
        return KeyRunner(matcher, grp)
