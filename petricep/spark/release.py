"""A streaming bucket's released events fired as columns, its matches out as Arrow.

A micro-batch's handler (:class:`~petricep.spark.streaming.EngineProcessor`) spent most of
its time making each match a Python row (its JSON text by ``json.dumps``, then a pandas
frame of tuples: ~0.4 ms a match, ~0.65 s of a 1,000-event micro-batch of the
``spark_keys`` stream, bench/HISTORY.md). Here a kernel bucket's released events go in
as one batch of columns (:meth:`KeyRunner.push_columns_found
<petricep.spark.partition.KeyRunner.push_columns_found>`), the kernel's matches come out
as record batches, and :class:`~petricep.spark.records.MatchRows` makes their output
columns a column at a time, each row exactly what ``match_row`` makes of its match (the
batch run's firing task does the same). The Python engine, and a lineage engine of a
changed pattern set, keep the event-by-event path: the rows are the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from petricep.events import EventColumns

from .keygroups import Waiting
from .records import Found, columns_of, unpacked_rows


def renumbered(own: Sequence[int], last: int, whole: bool) -> tuple[list[int], dict[int, int]]:
    """The positions an engine fires released events at (in stream order, their ``own``
    positions given), after ``last``; and engine position -> own position. See
    :func:`petricep.spark.streaming.renumber`, which applies it to events."""
    positions: list[int] = []
    origin: dict[int, int] = {}
    for p in own:
        n = last + 1 if whole else max(p, last + 1)
        origin[n] = p
        positions.append(n)
        last = n
    return positions, origin


def released_columns(ready: Sequence[Waiting], last: int, whole: bool) -> tuple[EventColumns, dict[int, int]]:
    """A bucket's released events (its buffer's ready entries) as columns in stream order,
    ``(ts, pos)`` -- as the events :func:`~petricep.spark.records.decode` gives, sorted --
    at their engine positions (:func:`renumbered`); and engine position -> own position."""
    rows = unpacked_rows([ev for _, _, ev in ready])
    own = [x[1] for x in ready]
    order = [i for _, _, i in sorted(zip([r[1] for r in rows], own, range(len(rows))))]  # (ties: as buffered)
    positions, origin = renumbered([own[i] for i in order], last, whole)
    return columns_of([rows[i] for i in order], positions, False), origin


def with_origin(found: list[Found], origin: dict[int, int]) -> list[Found]:
    """``found`` (pairs and the kernel's record batches with an ``emitted_at`` column) with
    each emitting position that is an engine position mapped to the event's own; others
    (the clock's, -1) as they are."""
    if not origin:
        return found
    keys = np.fromiter(origin.keys(), dtype=np.int64, count=len(origin))  # ascending (renumbered)
    vals = np.fromiter(origin.values(), dtype=np.int64, count=len(origin))
    out: list[Found] = []
    for item in found:
        if not isinstance(item, pa.RecordBatch):
            m, at = item
            out.append((m, origin.get(at, at)))
            continue
        at_col = item.column("emitted_at").to_numpy()
        idx = np.minimum(np.searchsorted(keys, at_col), len(keys) - 1)
        mapped = np.where(keys[idx] == at_col, vals[idx], at_col)
        i = item.schema.get_field_index("emitted_at")
        out.append(item.set_column(i, "emitted_at", pa.array(mapped, pa.int64())))
    return out


def match_frame(batches: list[pa.RecordBatch], kind: str, columns: list[str]) -> Any:
    """Match rows (:data:`~petricep.spark.records.MATCH_SCHEMA` batches) as the output
    frame of ``columns``: ``kind`` on every row, ``n`` empty -- the frame the handler
    made of its rows (``(*row, kind, None)``), column for column."""
    df = pa.Table.from_batches(batches).to_pandas()
    df["kind"] = kind
    df["n"] = None
    return df[columns]
