"""History-aware (ARCHIVED) patterns on Spark: the event archive written by the executors,
history looked up per live match in the firing stage.

What ``petricep run --archive DIR`` does embedded (:class:`~petricep.archive.join.HistoryRunner`)
in two Spark stages:

1. **archive**: the parse stage emits every event once more as an ``ARCHIVE`` row; when the
   positions are known, the executors write them into the archive under the run number the
   driver claimed (:meth:`Archive.begin_run`), one file per task and time bucket, named by the
   run and the first position (:func:`~petricep.archive.store.write_events`): the archive then
   holds exactly what the embedded run appends, history first, then this run's stream.
2. **join**: the firing stage runs the history patterns' live parts like any pattern; each
   live match is joined at once with the archive (LLAA: the archived part over the range the
   match needs, for its key), as embedded. The archive holds the whole input by then, but the
   join keeps only archived matches that end before the live match's first event in the
   archive's order ``(ts, run, pos)``, so later events change nothing.

The archive directory must be one every executor can read and write (a local path on a
one-machine cluster, a shared file system otherwise). Embedded, the default SLLAA holds live
matches and joins them later in groups (fewer archive reads, the same matches); on Spark
every live match is joined as it is found, so a joined match comes out at its live match's
event: the same lines as an embedded ``--history-mode llaa`` run (SLLAA: the same lines, in
another order). ``--history-order`` other than ``live-first`` (archive-first skips live events
without history: a speed-up only) is refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from petricep.archive.join import HistoryJoin
from petricep.archive.store import Archive, write_events
from petricep.compile.archived import HistorySpec, split_patterns
from petricep.compile.net import Net
from petricep.errors import ConfigError
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.runtime.engine import Match

from .records import decode

WRITTEN_DDL = "files long, events long"


@dataclass(frozen=True)
class SparkHistory:
    """The archive side of a Spark run (picklable: sent to the executors)."""

    path: str
    run: int  # the run number this Spark run writes and joins as
    bucket_seconds: float
    specs: tuple[HistorySpec, ...]

    @property
    def names(self) -> frozenset[str]:
        return frozenset(s.name for s in self.specs)

    def join(self) -> HistoryJoin:
        """A task's join: LLAA over the archive, as run ``run``."""
        archive = Archive(self.path, self.bucket_seconds)
        archive.run = self.run
        return HistoryJoin(self.specs, archive, "llaa", 0.0, "live-first")


def prepare(
    patterns: Sequence[A.Pattern],
    path: str,
    order: str = "live-first",
    conflicts: Sequence[Any] = (),
    queries: Sequence[Any] = (),
) -> tuple[Net, SparkHistory]:
    """The net a Spark run with ``--archive`` fires (history patterns by their live part) and
    its archive side, this run claimed in the archive (every event is archived, whether or
    not a pattern reads history: as embedded)."""
    if order != "live-first":
        raise ConfigError(
            f"--history-order {order} runs embedded only: on Spark every live match is joined with the archive "
            "(live-first)"
        )
    plain, specs = split_patterns(list(patterns))
    net = build_net(plain, True, list(conflicts), list(queries))
    archive = Archive(path)
    run = archive.begin_run()
    return net, SparkHistory(path, run, archive.bucket_seconds, tuple(specs))


class ArchiveWriter:
    """``mapInArrow`` function of the archive stage: ``(lid, ev)`` rows -> archive files.
    Yields one row per task: the files and events it wrote."""

    def __init__(self, history: SparkHistory, side_bc: Any, id_is_pos: bool, names: tuple[str, ...] | None) -> None:
        self.history = history
        self.side_bc = side_bc
        self.id_is_pos = id_is_pos
        self.names = names

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        _clock, posmap = self.side_bc.value
        events = []
        for batch in batches:
            positions = posmap.positions(batch.column("lid").to_numpy())
            for pos, data in zip(positions, batch.column("ev").to_pylist()):
                events.append(decode(data, pos, self.id_is_pos, self.names))
        events.sort(key=lambda e: e.pos)
        h = self.history
        files = write_events(h.path, h.run, h.bucket_seconds, events) if events else 0
        yield pa.RecordBatch.from_pydict(
            {"files": [files], "events": [len(events)]}, schema=pa.schema([("files", pa.int64()), ("events", pa.int64())])
        )


class TaskJoin:
    """The live matches of a task's history patterns, joined with the archive as they come
    (the other matches pass through): ``(match, emission position)`` pairs in and out."""

    def __init__(self, history: SparkHistory) -> None:
        self.names = history.names
        self.join = history.join()

    def __call__(self, pairs: list[tuple[Match, int]]) -> list[tuple[Match, int]]:
        out: list[tuple[Match, int]] = []
        for m, at in pairs:
            if m.pattern in self.names:
                out.extend((joined, at) for joined in self.join.offer(m, m.end))
            else:
                out.append((m, at))
        return out


__all__ = ["WRITTEN_DDL", "ArchiveWriter", "SparkHistory", "TaskJoin", "prepare"]
