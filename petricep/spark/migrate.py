"""A bucket's engines across pattern changes: one per generation (:mod:`.lineage`).

:class:`LineageEngine` is one (group, bucket)'s runner once a query's patterns changed
(the interface of :class:`~petricep.spark.partition.KeyRunner` that streaming drives): the engine of each generation with a running pattern in
the group, each over the net its generation was built with (so its snapshot restores, and
its partial matches go on exactly as in the uninterrupted run), each taking the events from
its birth on. Matches of removed patterns are dropped as they come out.
:class:`LineageCache` builds them where :class:`~petricep.spark.keystate.EngineCache`
builds plain ones, and keeps the live ones between micro-batches the same way.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Sequence
from typing import Any

from petricep.events import Event
from petricep.runtime.engine import Match

from .keystate import EngineCache, LiveRunners
from .lineage import Lineage, cached_net, pack, retired, unpack
from .partition import KeyRunner, Pair, group_choice
from .plan import Group, Plan


class LineageEngine:
    """The engines of one bucket's generations (gen -> (birth, engine); a generation not in
    ``parts`` is unborn: it takes its first events when the bucket next receives some,
    :meth:`bear`)."""

    def __init__(self, cache: LineageCache, group: Group, parts: dict[int, tuple[int, KeyRunner]]) -> None:
        self.cache = cache
        self.group = group
        self.parts = parts
        self.arrived: dict[int, int] = {}  # engine position -> the event's own (streaming.renumber)
        self.kind = "+".join(sorted({e.kind for _, e in parts.values()})) or "none"

    def unborn(self) -> list[int]:
        return [k for k in self.cache.lineage.gens_of(self.group.index) if k not in self.parts]

    def bear(self, birth: int) -> bool:
        """Start the unborn generations at position ``birth`` (the bucket's first event after
        the restart that added them); whether any was."""
        born = self.unborn()
        for k in born:
            self.parts[k] = (birth, self.cache.part(k, self.group.index, None))
        return bool(born)

    def push_all(self, events: Sequence[Event]) -> list[Pair]:
        out: list[Pair] = []
        for k, (birth, engine) in sorted(self.parts.items()):
            types = None if self.group.all_types else self.cache.types(k, self.group.index)
            mine = [
                e
                for e in events
                if self.arrived.get(e.pos, e.pos) >= birth and (types is None or e.type in types)
            ]
            out += self._live(k, engine.push_all(mine) if mine else [])
        out.sort(key=lambda x: x[1])  # stable: by emitting position, older generations first
        return out

    def _live(self, k: int, pairs: list[Pair]) -> list[Pair]:
        names = self.cache.lineage.live_names(k, self.group.index)
        return [(m, at) for m, at in pairs if m.pattern in names]

    def advance(self, ts: Any, pos: int) -> list[Match]:
        out: list[Match] = []
        for k, (_, engine) in sorted(self.parts.items()):
            out += [m for m, _ in self._live(k, [(m, -1) for m in engine.advance(ts, pos)])]
        return out

    def finish(self) -> list[Pair]:
        out: list[Pair] = []
        for k, (_, engine) in sorted(self.parts.items()):
            out += self._live(k, engine.finish())
        return out

    def snapshot(self) -> bytes:
        return pack({k: (birth, engine.snapshot()) for k, (birth, engine) in self.parts.items()})

    @property
    def last_pos(self) -> int:
        return max((e.last_pos for _, e in self.parts.values()), default=-1)


class LineageCache(LiveRunners[LineageEngine]):
    """:class:`EngineCache`'s interface for a query whose patterns changed: live
    :class:`LineageEngine` objects by (group, bucket) and token, built from their snapshots
    (:func:`.lineage.unpack`) otherwise."""

    def __init__(self, lineage: Lineage, plan: Plan, tie: str, size: int = 4096) -> None:
        self.lineage = lineage
        self.plan = plan
        self.tie = tie
        super().__init__(size)
        self._gens: dict[tuple[int, int], EngineCache] = {}
        self._types: dict[tuple[int, int], frozenset[str]] = {}

    _caches: dict[tuple[bytes, str, str], LineageCache] = {}

    @classmethod
    def of(cls, lineage: Lineage, plan: Plan, tie: str) -> LineageCache:
        """The worker's cache for this query (as :meth:`EngineCache.of`: a Python worker runs
        many tasks, and its live engines spare reading their snapshots every micro-batch)."""
        key = (
            hashlib.sha256(pickle.dumps(plan, protocol=5)).digest(),
            json.dumps(lineage.to_json(), sort_keys=True),
            tie,
        )
        hit = cls._caches.get(key)
        if hit is None:
            if len(cls._caches) >= 8:
                cls._caches.pop(next(iter(cls._caches)))
            hit = cls._caches[key] = cls(lineage, plan, tie)
        return hit

    def build(self, group: int, stored: bytes | None, old: bool = False) -> LineageEngine:
        """A bucket's engines from its snapshot; None: a bucket without one, ``old``: whose
        waiting events were read before the first change (generation 0 takes them, later
        ones are unborn), else a new bucket (every generation from its first event)."""
        g = self.plan.groups[group]
        live = self.lineage.gens_of(group)
        if stored is not None:
            parts = {
                k: (birth, self.part(k, group, data))
                for k, (birth, data) in unpack(stored).items()
                if k in live
            }
        elif old:
            parts = {0: (-1, self.part(0, group, None))} if 0 in live else {}
        else:
            parts = {k: (-1, self.part(k, group, None)) for k in live}
        return LineageEngine(self, g, parts)

    def _gen_cache(self, k: int, group: int) -> EngineCache:
        """The plain engine cache of generation ``k``'s patterns of ``group``: their net, the
        group of them alone at its index (the kernel where it covers them)."""
        hit = self._gens.get((k, group))
        if hit is None:
            net = cached_net(self.lineage.generations[k])
            names = tuple(r.name for r in self.lineage.generations[k] if r.group == group)
            g = self.plan.groups[group]
            mine = Group(
                group, names, g.attrs, g.all_types, frozenset().union(*(p.input_types for p in net.patterns if p.name in names)),
                frozenset(p.name for p in net.patterns if p.name in names and p.produces), g.time_windows,
                g.count_windows, g.clock_sensitive, g.reason, g.waits,
            )  # fmt: skip
            plan = Plan(net, tuple(retired(i) for i in range(group)) + (mine,), ())
            kernel = frozenset([group]) if group_choice(net, mine, self.tie).kernel else frozenset()
            hit = self._gens[(k, group)] = EngineCache(net, plan, self.tie, kernel, size=0)
            self._types[(k, group)] = mine.types
        return hit

    def part(self, k: int, group: int, stored: bytes | None) -> KeyRunner:
        """Generation ``k``'s runner of ``group``: from its snapshot (checked by the engine's
        own fingerprint of the generation's net), or new (None)."""
        return self._gen_cache(k, group).build(group, stored)

    def types(self, k: int, group: int) -> frozenset[str]:
        """The event types generation ``k``'s patterns of ``group`` read (the others are
        routed to the group for newer patterns: they never reached that engine before)."""
        self._gen_cache(k, group)
        return self._types[(k, group)]
