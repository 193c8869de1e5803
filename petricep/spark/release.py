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
Here too: the positions released events are fired at (:func:`renumber`; a column's at
once, :func:`~petricep.spark.evpack.renumbered_array`), the event times its engine is
advanced at again (:func:`wake_times`), and the handler's input read a piece or pack of
events at a time (:func:`input_pieces`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from petricep.errors import EvaluationError
from petricep.events import Event, EventColumns

from .batch import TASK_ERROR
from .evpack import (
    ARROW_TAG,
    Pieces,
    Stored,
    blob_piece,
    event_time_ms,
    first_flags,
    read_piece,
    renumbered_array,
    stored,
)
from .migrate import LineageEngine
from .partition import KeyRunner
from .records import Found, is_pack, unpack_events


def renumbered(own: Sequence[int], last: int, whole: bool) -> tuple[list[int], dict[int, int]]:
    """The positions an engine fires released events at (in stream order, their ``own``
    positions given), after ``last``; and engine position -> own position. See
    :func:`renumber`, which applies it to events."""
    positions: list[int] = []
    origin: dict[int, int] = {}
    for p in own:
        n = last + 1 if whole else max(p, last + 1)
        origin[n] = p
        positions.append(n)
        last = n
    return positions, origin


def renumber(events: list[Event], last: int, whole: bool) -> dict[int, int]:
    """Give a key's released events (in stream order, ``(ts, pos)``) the positions its
    engine fires them at, after ``last`` (the engine's last position); returns engine
    position -> the event's own position (the stream's, for messages and the output).

    The engines bind and order events by position and need it to grow with every event
    pushed, but a file that goes back in time (within the watermark) releases an event
    after others that arrived later: its own position is smaller. As ``run --slack``
    renumbers the events it re-orders, the engine sees the position in the re-ordered
    stream: where its engine sees ``whole`` the stream, exactly that (one more than the last
    event before it); elsewhere the event's own position, moved after the last one where it
    falls behind it (what only count windows could notice, and they run on the whole
    stream where the stream re-orders: :func:`~petricep.spark.streaming.streaming_plan`). In time order, nothing
    changes: positions are the stream's own."""
    positions, origin = renumbered([e.pos for e in events], last, whole)
    for e, n in zip(events, positions):
        e.pos = n
    return origin


def released_columns(ready: Pieces, last: int, whole: bool) -> tuple[EventColumns, dict[int, int]]:
    """A bucket's released events (its buffer's ready pieces) as columns in stream order,
    ``(ts, pos)`` -- as the events :func:`~petricep.spark.records.decode` gives, sorted --
    at their engine positions (:func:`renumbered`); and engine position -> own position."""
    cols, own = ready.columns()
    positions = renumbered_array(own, last, whole)
    origin = dict(zip(positions.tolist(), own.tolist()))
    return EventColumns(cols.types, cols.ts, positions, cols.ids, cols.attrs), origin


def wake_times(stamps: Any, windows: Sequence[Any], at_stamps: bool) -> np.ndarray:
    """The event times (ms) a bucket's engine is advanced at for released events at
    ``stamps``: past each window's end (``ts + w``) and (``at_stamps``) past each
    timestamp's group; once per distinct timestamp, a column at a time where the stamps
    and windows are ints."""
    if isinstance(stamps, np.ndarray) and stamps.dtype.kind == "i" and all(type(w) is int and abs(w) < _EXACT for w in windows):
        distinct = np.unique(stamps)
        if not len(distinct) or (distinct[0] > -_EXACT and distinct[-1] < _EXACT):
            parts = [(distinct + w) * 1000 + 3 for w in windows] + ([distinct * 1000 + 3] if at_stamps else [])
            return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    values = stamps.tolist() if hasattr(stamps, "tolist") else list(stamps)
    once = [ts for _, ts in dict.fromkeys(zip(map(type, values), values))]
    out = {event_time_ms(ts + w) + 2 for ts in once for w in windows}
    if at_stamps:
        out.update(event_time_ms(ts) + 2 for ts in once)
    return np.asarray(sorted(out), dtype=np.int64)


_EXACT = 2**52 // 1000  # |ts + w| * 1000 stays an exact int64


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


def fire(engine: KeyRunner | LineageEngine, ready: Pieces, whole: bool) -> tuple[list[Found], Any, dict[int, int]]:
    """The released events pushed into the bucket's engine, in stream order: what it
    found (emitting positions the engine's), the events' timestamps (a column), and
    engine position -> the event's own. A kernel runner takes them as one batch of
    columns (its matches as record batches), other engines event by event; ``whole``:
    the engine sees the whole stream (:func:`renumber`)."""
    kernel = isinstance(engine, KeyRunner) and engine.kind == "kernel"
    if kernel:
        cols, origin = released_columns(ready, engine.last_pos, whole)
        stamps: Any = cols.ts
    else:
        events = ready.events()
        origin = renumber(events, engine.last_pos, whole)
        stamps = [e.ts for e in events]
        if isinstance(engine, LineageEngine):
            engine.arrived = origin  # its generations take the events from their births on
    try:
        if isinstance(engine, KeyRunner) and kernel:
            found = engine.push_columns_found(cols) if len(cols) else []
            return found + list(engine.drain()), stamps, origin
        return list(engine.push_all(events)), stamps, origin
    except EvaluationError as err:
        raise RuntimeError(TASK_ERROR + f"event at position {failed_at(err, origin)}: {err}") from None


def failed_at(err: EvaluationError, origin: dict[int, int]) -> int:
    """The stream position an evaluation error names: its event's, else the last released
    event's (-1: none), engine positions mapped back to the events' own."""
    failed = getattr(err, "event", None)
    where = failed.pos if failed is not None else (max(origin) if origin else -1)
    return origin.get(where, where)


def input_pieces(frames: Iterator[Any]) -> tuple[list[Stored | tuple[pa.RecordBatch, np.ndarray]], int]:
    """A key's input rows (pandas frames of STREAM_DDL but its key) as pieces of events
    (:mod:`petricep.spark.evpack`) -- an Arrow piece as it came (:class:`Stored`: its
    ``first`` flags are read where some of its events are late), a ``marshal`` pack of
    encoded events or one encoded event as a blob piece with its ``first`` flags -- and
    the events the count rows say were read."""
    pieces: list[Stored | tuple[pa.RecordBatch, np.ndarray]] = []
    read = 0
    for pdf in frames:
        for pos, et, ev, first, reads in zip(
            pdf["pos"].tolist(), pdf["evtime"].tolist(), pdf["ev"].tolist(), pdf["first"].tolist(),
            pdf["reads"].tolist(),
        ):  # fmt: skip
            if ev is None:
                read += reads
                continue
            data = bytes(ev)
            if data[:1] == ARROW_TAG:
                got = stored(data[1:])
                if got is None:
                    raise ValueError("an Arrow piece without its rows and times")
                pieces.append(got)
            elif is_pack(data):
                ps, ets, evs, fs = zip(*unpack_events(data))
                pieces.append((blob_piece(ets, ps, evs), np.asarray(fs, dtype=bool)))
            else:
                pieces.append((blob_piece([et], [pos], [data]), np.asarray([first], dtype=bool)))
    return pieces, read


def with_flags(entry: Stored | tuple[pa.RecordBatch, np.ndarray]) -> tuple[pa.RecordBatch, np.ndarray]:
    """An input piece decoded, with its ``first`` flags."""
    if not isinstance(entry, Stored):
        return entry
    piece, flags = first_flags(read_piece(entry.data))
    if flags is None:
        raise ValueError("an Arrow piece of the parse stage without its first flags")
    return piece, flags
