"""Changing the patterns of a running stream: a checkpoint's pattern set and its generations.

A streaming query keeps, per (group, bucket of keys), an engine over its group's patterns
(:mod:`petricep.spark.keygroups`). Restarted on its checkpoint with patterns added or
removed, the query must keep the partial matches of every pattern that stays, start the
new ones on the events after the restart and drop the removed ones -- what
``Engine.extend`` / ``remove_pattern`` do embedded. A snapshot can only be restored into
the net that wrote it (both engines check a fingerprint), and a new pattern compiled with
old ones may share their places, which hold partial matches older than the new pattern.
So, as :func:`petricep.merge.extend_net` does embedded (new patterns share places among
themselves, never with running ones), each restart that adds patterns starts a
*generation*: an engine per bucket over the added patterns alone, beside the engines of
the earlier generations, which keep running the net they were built with:

* the checkpoint records the pattern set (:data:`FILE`): per generation its patterns'
  texts (:func:`~petricep.lang.printer.pattern_text`, parsed back to rebuild the net
  exactly: never evaluated), their consumption and the state index of their group; the
  patterns removed; the routing of every state index;
* a bucket's state is then the snapshots of its generations' engines
  (:class:`LineageEngine`), each with its *birth*: the position of the first event it
  takes (the first arriving in the bucket after the restart; events arrive in position
  order, so every earlier one was read before it). Matches of removed patterns are dropped
  as their old engine emits them; a generation whose patterns are all removed is dropped
  with its state;
* group indices stay: a restarted query's groups take the state index of the group their
  kept patterns ran in (a group of new patterns only gets a new index; an index no group
  keeps is retired: its state is dropped when its timer next fires). Where a kept pattern
  cannot keep its state -- its group now routes otherwise, or joins patterns of another
  group -- a warning names it and it starts again on the events after the restart.

Removed patterns' partial matches that share places with kept ones stay in the old
engine until their windows pass (a shared token serves both); their matches never come
out. SQL queries are not tracked: a query with them refuses a changed pattern set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from petricep.compile.net import Net
from petricep.compile.program import compile_program
from petricep.errors import ConfigError
from petricep.lang.parser import parse_source
from petricep.lang.printer import pattern_text
from petricep.merge import merge_program

from .plan import Group, Plan

FILE = "petricep-patterns.json"
FORMAT = "petricep-patterns/1"


@dataclass(frozen=True)
class Recorded:
    """One pattern as a checkpoint records it."""

    name: str
    text: str  # pattern_text of its source
    consume: tuple[str, ...] | None  # the variables a match consumes, as the program decided
    conflict: str | None  # its consumption domain
    group: int  # the state index of its group

    def same(self, other: Recorded) -> bool:
        return (self.text, self.consume, self.conflict) == (other.text, other.consume, other.conflict)


@dataclass
class Lineage:
    """A checkpoint's pattern history: generations of patterns, the removed ones, and the
    routing of each state index (None: retired)."""

    generations: list[tuple[Recorded, ...]]
    removed: set[tuple[int, str]] = field(default_factory=set)  # (generation, name)
    groups: list[dict[str, Any] | None] = field(default_factory=list)

    @property
    def trivial(self) -> bool:
        """One generation, nothing removed: the state is the plain engines' (no change yet)."""
        return len(self.generations) == 1 and not self.removed

    def live(self) -> dict[str, tuple[int, Recorded]]:
        """Running pattern name -> (its generation, its record)."""
        return {
            r.name: (k, r)
            for k, gen in enumerate(self.generations)
            for r in gen
            if (k, r.name) not in self.removed
        }

    def gens_of(self, group: int) -> list[int]:
        """The generations with a running pattern in state index ``group``."""
        return sorted({k for k, r in self.live().values() if r.group == group})

    def live_names(self, gen: int, group: int) -> frozenset[str]:
        return frozenset(
            r.name for r in self.generations[gen] if r.group == group and (gen, r.name) not in self.removed
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "generations": [[_rec_json(r) for r in gen] for gen in self.generations],
            "removed": sorted([k, n] for k, n in self.removed),
            "groups": self.groups,
        }

    @classmethod
    def of_json(cls, data: Mapping[str, Any], path: str) -> Lineage:
        try:
            if data["format"] != FORMAT:
                raise ConfigError(
                    f"{path}: a pattern record this petricep does not know ({data['format']!r})"
                )
            gens = [tuple(_rec_of(r) for r in gen) for gen in data["generations"]]
            removed = {(int(k), str(n)) for k, n in data["removed"]}
            return cls(gens, removed, list(data["groups"]))
        except (KeyError, TypeError, ValueError) as e:
            raise ConfigError(f"{path}: not a petricep pattern record ({type(e).__name__}: {e})") from None


def _rec_json(r: Recorded) -> dict[str, Any]:
    return {"name": r.name, "text": r.text, "consume": r.consume, "conflict": r.conflict, "group": r.group}


def _rec_of(d: Mapping[str, Any]) -> Recorded:
    consume = d["consume"]
    return Recorded(
        str(d["name"]),
        str(d["text"]),
        None if consume is None else tuple(consume),
        d["conflict"],
        int(d["group"]),
    )


def signature(g: Group) -> dict[str, Any]:
    """What a state index's keys depend on: a key stays in its bucket only if its group
    routes the same way."""
    return {"attrs": list(g.attrs), "all_types": g.all_types, "clock": g.clock_sensitive}


def records(net: Net, plan: Plan) -> dict[str, Recorded]:
    """The net's patterns as a checkpoint records them (groups as ``plan`` numbers them)."""
    group = plan.group_of()
    out = {}
    for p in net.patterns:
        consume = None if not p.consume else tuple(v.name for v in p.vars if v.slot in p.consume)
        out[p.name] = Recorded(p.name, pattern_text(p.source), consume, p.conflict, group[p.name])
    return out


def retired(index: int) -> Group:
    """The group of a retired state index: no pattern, no event routed to it."""
    return Group(index, (), (), False, frozenset(), frozenset(), (), (), False, "retired", False)


# ----------------------------------------------------------------------------- a restart


@dataclass
class Change:
    """What a restart changed, for the message and the plan."""

    kept: list[str]
    added: list[str]
    removed: list[str]
    warnings: list[str]

    def message(self) -> str | None:
        """The line saying which pattern is which (None: nothing changed)."""
        if not self.added and not self.removed:
            return None
        parts = [f"kept: {', '.join(self.kept) or '-'}"]
        if self.added:
            parts.append(f"added: {', '.join(self.added)} (from the events after the restart)")
        if self.removed:
            parts.append(f"removed: {', '.join(self.removed)}")
        return "; ".join(parts)


def bind(checkpoint: str, net: Net, plan: Plan) -> tuple[Lineage, Plan, Change]:
    """The pattern history of the query on ``checkpoint`` (a local directory) with ``net``'s
    patterns now, the plan renumbered to the checkpoint's state indices, and what changed.
    The record is written (first run: ``net``'s patterns as generation 0)."""
    path = os.path.join(checkpoint, FILE)
    now = records(net, plan)
    if not os.path.exists(path):
        lineage = Lineage([tuple(now.values())], set(), [signature(g) for g in plan.groups])
        _save(path, lineage)
        return lineage, plan, Change(list(now), [], [], [])
    with open(path, encoding="utf-8") as fh:
        try:
            lineage = Lineage.of_json(json.load(fh), path)
        except ValueError:
            raise ConfigError(f"{path}: not a petricep pattern record") from None
    live = lineage.live()
    kept = [n for n, r in now.items() if n in live and live[n][1].same(r)]
    if net.rows and (set(kept) != set(now) or set(kept) != set(live)):
        raise ConfigError(
            "a stream with SQL queries cannot change its patterns on a checkpoint: restart it from a new checkpoint"
        )
    warnings = [
        f"warning: pattern {n!r} changed: its partial matches are dropped and it starts again on the events after the restart"
        for n in now
        if n in live and n not in kept
    ]
    index, kept = _renumber(plan, lineage, live, kept, warnings)
    added = [n for n in now if n not in kept]
    removed = [n for n in live if n not in kept]
    lineage.removed |= {(live[n][0], n) for n in removed}
    groups: list[dict[str, Any] | None] = [None] * max(
        len(lineage.groups), max(index.values(), default=-1) + 1
    )
    for g in plan.groups:
        groups[index[g.index]] = signature(g)
    lineage.groups = groups
    if added:
        lineage.generations.append(tuple(replace(now[n], group=index[plan.group_of()[n]]) for n in added))
    _save(path, lineage)
    change = Change([n for n in now if n in kept], added, removed, warnings)
    return lineage, renumbered(plan, index, len(groups)), change


def _renumber(
    plan: Plan,
    lineage: Lineage,
    live: Mapping[str, tuple[int, Recorded]],
    kept: list[str],
    warnings: list[str],
) -> tuple[dict[int, int], list[str]]:
    """Each group's state index: the one its kept patterns ran in, where they all ran in one
    group routed as it is now and no other group claims it; else a new one (its kept
    patterns, named in a warning, start again). Returns the indices and the patterns kept."""
    index: dict[int, int] = {}
    claimed: dict[int, int] = {}
    for g in plan.groups:
        olds = {live[n][1].group for n in g.patterns if n in kept}
        if len(olds) == 1:
            (o,) = olds
            sig = lineage.groups[o] if o < len(lineage.groups) else None
            if sig == signature(g) and o not in claimed:
                claimed[o] = g.index
                index[g.index] = o
    fresh = len(lineage.groups)  # never an index old state may be kept at
    out = list(kept)
    for g in plan.groups:
        if g.index in index:
            continue
        index[g.index] = fresh
        fresh += 1
        lost = [n for n in g.patterns if n in kept]
        for n in lost:
            out.remove(n)
            warnings.append(
                f"warning: pattern {n!r} cannot keep its partial matches: its group now runs with other "
                "patterns or routes its events otherwise; it starts again on the events after the restart"
            )
    return index, out


def renumbered(plan: Plan, index: Mapping[int, int], size: int) -> Plan:
    """``plan`` with its groups at their state indices, retired indices filled (no events)."""
    groups: list[Group] = [retired(i) for i in range(size)]
    for g in plan.groups:
        groups[index[g.index]] = replace(g, index=index[g.index])
    return Plan(plan.net, tuple(groups), plan.warnings)


def _save(path: str, lineage: Lineage) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(lineage.to_json(), fh, indent=1)
        fh.write("\n")
    os.replace(tmp, path)


# ----------------------------------------------------------------------------- nets


def generation_net(gen: Sequence[Recorded]) -> Net:
    """The net generation ``gen``'s patterns were run with: their texts parsed and compiled
    again, each consuming what its program decided (as :func:`petricep.merge.sub_net`
    builds a group's net, so a group's engine net is rebuilt exactly)."""
    pats = [parse_source(r.text, f"<pattern {r.name}>", "pcep").patterns[0] for r in gen]
    program = compile_program(pats)
    by_name = {r.name: r for r in gen}
    nets = []
    for n in program.patterns:
        r = by_name[n.name]
        consume = () if r.consume is None else tuple(n.var(v).slot for v in r.consume)
        nets.append(replace(n, consume=consume, conflict=r.conflict))
    return merge_program(replace(program, patterns=tuple(nets)))


_nets: dict[tuple[Recorded, ...], Net] = {}


def cached_net(gen: tuple[Recorded, ...]) -> Net:
    hit = _nets.get(gen)
    if hit is None:
        if len(_nets) >= 32:
            _nets.clear()
        hit = _nets[gen] = generation_net(gen)
    return hit


_SCHEMA = pa.schema([("gen", pa.int32()), ("birth", pa.int64()), ("state", pa.binary())])
MARKER = b"petricep.lineage/1"


def pack(parts: Mapping[int, tuple[int, bytes]]) -> bytes:
    """A bucket's generations' snapshots (gen -> (birth, engine snapshot)) as bytes."""
    gens = sorted(parts)
    batch = pa.RecordBatch.from_arrays(
        [pa.array(gens, pa.int32()), pa.array([parts[k][0] for k in gens], pa.int64()),
         pa.array([parts[k][1] for k in gens], pa.binary())],
        schema=_SCHEMA,
    )  # fmt: skip
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, _SCHEMA) as w:
        w.write_batch(batch)
    return MARKER + sink.getvalue().to_pybytes()


def unpack(data: bytes) -> dict[int, tuple[int, bytes]]:
    """:func:`pack`'s bytes back; a plain engine snapshot (a checkpoint from before any
    change) is generation 0's, taking every event."""
    if not data.startswith(MARKER):
        return {0: (-1, data)}
    try:
        table = pa.ipc.open_stream(pa.py_buffer(data[len(MARKER) :])).read_all()
    except (pa.ArrowInvalid, OSError) as e:
        raise ConfigError(f"a damaged bucket state (its generations): {e}") from None
    cols = [table.column(i).to_pylist() for i in range(3)]
    return {int(k): (int(b), bytes(s)) for k, b, s in zip(*cols, strict=True)}
