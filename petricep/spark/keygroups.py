"""Key groups: a streaming query's state per (group, bucket of keys), not per key.

``groupBy(g, k)`` ran a Python call, ~9 state-store round trips and an output frame per
key and micro-batch: a micro-batch cost seconds and grew with the keys alive. As a batch
run keeps one engine per partition over its keys (:mod:`petricep.spark.partition`), a
stream keeps one engine per (group, *bucket*): ``bucket = crc32(key) mod B``. A keyed
pattern's engine keeps each key's partial matches apart itself, so an engine over many
keys finds exactly what an engine per key finds; advancing it to the watermark when one
of its keys needs it changes nothing for the others (nothing of theirs closes there).

``B`` is fixed by a checkpoint's first run and kept in it (:data:`LAYOUT_FILE`, with the
layout's name): a key must stay in its bucket across restarts, since its partial matches
live in that bucket's engine. A checkpoint an earlier petricep wrote with state per key
has no such file and is refused with one message (its state cannot be read as buckets).

A bucket's state (:class:`BucketState`, one value state: each state variable costs a
registration per task and a round trip per read or write, ~20 ms each on a loaded 2-core
machine, bench/HISTORY.md): the events waiting for the watermark (Arrow
pieces, :mod:`petricep.spark.evpack`: one IPC stream, or several tagged; a buffer an
earlier petricep wrote, of encoded events, reads as a piece of them), the event times at which
its engine is to be advanced again, its one timer (the earliest of those and of the
waiting events) and a *token* naming the engine snapshot last stored: a worker that
stored it keeps the live engine and uses it while the token matches, so the snapshot (the
engine's own Arrow IPC snapshot, :mod:`petricep.spark.keystate`, in the same row)
is taken once per micro-batch a bucket's engine ran, and restored only after a restart, a
replay or a task that ran elsewhere. It holds only the keys (and strings) that hold
something: a key whose windows closed costs nothing in it (:mod:`petricep.kernel.keycodes`,
:func:`petricep.runtime.snapshot.compact`), so its size follows the bucket's live partial
matches, not the keys it ever saw (issue 39).
"""

from __future__ import annotations

import json
import os
import secrets
import zlib
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from petricep.errors import ConfigError

from .evpack import Pieces

LAYOUT = "key-groups/2"  # one value state per bucket ("state": STATE_FIELDS)
LAYOUT_FILE = "petricep-layout.json"
BUCKETS_PER_CORE = 4  # the default number of buckets per core of the session
Row = tuple[Any, ...]  # a value state's row, as pyspark gives it (binary values: bytes or bytearray)
_WAKEUP_SCHEMA = pa.schema([("ms", pa.int64())])
PER_KEY_CHECKPOINT = (
    "{path}: this checkpoint was written by an earlier petricep, which kept a streaming query's state "
    "per key; state is now kept per group of keys and cannot be read from it: restart the query from "
    "a new checkpoint (or finish the old query with the petricep that started it)"
)
TWO_VARIABLES = (
    "{path}: this checkpoint was written by an earlier petricep, which kept a bucket's engine and its waiting "
    "events in two state variables (layout key-groups/1); a bucket's state is now one and cannot be read "
    "from it: restart the query from a new checkpoint (or finish the old query with the petricep that started it)"
)
# what Spark writes into a checkpoint once a query ran (its own files)
_SPARK_ENTRIES = ("offsets", "commits", "state", "metadata", "sources")


def bucket_of(key: str, buckets: int) -> int:
    """The bucket of a routing key (:func:`petricep.spark.plan.key_text`): stable across
    processes and Python versions (crc32 of its UTF-8 bytes, not ``hash``)."""
    if buckets <= 1:
        return 0
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % buckets


def spark_partition(g: int, b: int, partitions: int) -> int:
    """The shuffle partition Spark's hash partitioning sends the grouping key ``(g, b)``
    (two ints) to: ``pmod(hash(g, b), partitions)``, ``hash`` Spark's Murmur3 (x86, 32
    bits, seed 42) -- tested against Spark's own."""
    h = _murmur_int(b, _murmur_int(g, 42))
    return (h - (1 << 32) if h & 0x80000000 else h) % partitions


def _murmur_int(value: int, seed: int) -> int:
    """Spark's ``Murmur3_x86_32.hashInt`` (unsigned 32 bits out)."""
    mask = 0xFFFFFFFF
    k = (value & mask) * 0xCC9E2D51 & mask
    k = ((k << 15) | (k >> 17)) & mask
    k = k * 0x1B873593 & mask
    h = (seed & mask) ^ k
    h = ((h << 13) | (h >> 19)) & mask
    h = (h * 5 + 0xE6546B64) & mask
    h ^= 4
    h ^= h >> 16
    h = h * 0x85EBCA6B & mask
    h ^= h >> 13
    h = h * 0xC2B2AE35 & mask
    return h ^ (h >> 16)


def bucket_labels(groups: int, buckets: int, partitions: int | None) -> tuple[tuple[int, ...], ...]:
    """Per group, the value of the grouping column ``b`` each bucket goes by, chosen so
    that Spark's hash partitioning spreads the buckets evenly over the ``partitions``
    state partitions (bucket ``i`` of group ``g`` to partition ``(i + g) mod partitions``):
    with the bucket numbers themselves, 8 buckets went 5 and 3 to 2 partitions, and the
    stateful stage waited on the larger task. Fixed by ``(groups, buckets, partitions)``
    alone, so the same on every run of a checkpoint that keeps its partitions (else, and
    for one partition: the bucket numbers, ``()``)."""
    if partitions is None or partitions <= 1:
        return ()
    out = []
    for g in range(groups):
        used: set[int] = set()
        labels = []
        for i in range(buckets):
            target, c = (i + g) % partitions, 0
            while c in used or spark_partition(g, c, partitions) != target:
                c += 1
            used.add(c)
            labels.append(c)
        out.append(tuple(labels))
    return tuple(out)


def default_buckets(cores: int) -> int:
    return BUCKETS_PER_CORE * max(1, cores)


def checkpoint_buckets(checkpoint: str | None, requested: int | None, default: int) -> int:
    """The number of buckets of a query on ``checkpoint`` (:func:`checkpoint_layout`)."""
    return checkpoint_layout(checkpoint, requested, default)[0]


def checkpoint_layout(
    checkpoint: str | None, requested: int | None, default: int, partitions: int | None = None
) -> tuple[int, int | None]:
    """The number of buckets of a query on ``checkpoint`` (a local directory; None or
    not local: ``requested`` or ``default``, not kept) and the state partitions its
    buckets are spread over (:func:`bucket_labels`; None: not known). A new checkpoint
    keeps ``requested`` (else ``default``) and ``partitions``; one that has them keeps what
    it has (a different ``requested`` is refused; Spark keeps its partitions too); one a
    query ran on without a layout was written per key, one of layout ``key-groups/1``
    with two state variables: refused."""
    if requested is not None and requested < 1:
        raise ConfigError("the number of key buckets must be at least 1")
    if checkpoint is None:
        return requested or default, None
    path = os.path.join(checkpoint, LAYOUT_FILE)
    if os.path.exists(path):
        return _kept(checkpoint, path, requested)
    if os.path.isdir(checkpoint) and any(os.path.exists(os.path.join(checkpoint, e)) for e in _SPARK_ENTRIES):
        raise ConfigError(PER_KEY_CHECKPOINT.format(path=checkpoint))
    buckets = requested or default
    os.makedirs(checkpoint, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"layout": LAYOUT, "buckets": buckets, **({} if partitions is None else {"partitions": partitions})}, fh)
        fh.write("\n")
    os.replace(tmp, path)
    return buckets, partitions


def _kept(checkpoint: str, path: str, requested: int | None) -> tuple[int, int | None]:
    """The layout a checkpoint's file keeps."""
    with open(path, encoding="utf-8") as fh:
        try:
            layout = json.load(fh)
            kept = int(layout["buckets"])
            name = layout["layout"]
            partitions = None if layout.get("partitions") is None else int(layout["partitions"])
        except (ValueError, KeyError, TypeError, AttributeError):
            raise ConfigError(f"{path}: not a petricep layout file: restart the query from a new checkpoint") from None
    if name == "key-groups/1":
        raise ConfigError(TWO_VARIABLES.format(path=checkpoint))
    if name != LAYOUT:
        raise ConfigError(f"{path}: a state layout this petricep does not know ({name!r}): restart the query from a new checkpoint")
    if requested is not None and requested != kept:
        raise ConfigError(
            f"this checkpoint keeps its keys in {kept} buckets (fixed by its first run), not {requested}: "
            "restart the query from a new checkpoint to change it"
        )
    return kept, partitions


@dataclass
class BucketState:
    """What the state store holds of one (group, bucket): one row of :data:`STATE_FIELDS`."""

    token: int | None = None  # names the stored engine snapshot (None: no engine yet)
    engine: bytes | None = None  # the engine's snapshot (None: no engine yet)
    timer: int | None = None  # the timer set (ms)
    buffer: Pieces = field(default_factory=Pieces)  # the events waiting, as Arrow pieces (evpack)
    wakeups: list[int] = field(default_factory=list)  # ms, ascending: advance the engine then
    stored: bool = False  # the store holds this state

    def next_timer(self) -> int | None:
        """The timer the bucket needs: once the watermark passes its earliest waiting event
        (its event time + 1) or reaches its earliest wake-up."""
        earliest = self.buffer.earliest()
        nxt = [] if earliest is None else [earliest + 1]
        nxt += self.wakeups[:1]
        return min(nxt) if nxt else None

    def empty(self) -> bool:
        return self.token is None and not self.buffer and not self.wakeups and self.timer is None

    def row(self) -> tuple[int | None, int | None, bytes, bytes, bytes | None]:
        """The state as the value state's row (:data:`STATE_FIELDS`)."""
        wake = pa.RecordBatch.from_arrays([pa.array(self.wakeups, pa.int64())], schema=_WAKEUP_SCHEMA)
        return (self.token, self.timer, self.buffer.to_bytes(), _ipc(wake), self.engine)

    @classmethod
    def of_row(cls, row: Row | None) -> BucketState:
        if row is None:
            return cls()
        token, timer, buf, wake, engine = row
        st = cls(token=token, timer=timer, engine=None if engine is None else bytes(engine), stored=True)
        st.buffer = Pieces.of_bytes(buf)
        if wake:
            st.wakeups = _read(wake).column(0).to_pylist()
        return st


STATE_FIELDS = (
    ("token", "long"), ("timer", "long"), ("buffer", "binary"), ("wakeups", "binary"), ("engine", "binary")
)  # fmt: skip
STATE_NAME = "state"  # the value state's name (the state data source's stateVarName)


def new_token() -> int:
    """A token for a newly stored engine snapshot (63 random bits: a Spark long)."""
    return secrets.randbits(63)


def _ipc(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return bytes(sink.getvalue().to_pybytes())


def _read(data: bytes) -> pa.RecordBatch:
    table = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    return table.combine_chunks().to_batches()[0] if table.num_rows else pa.RecordBatch.from_pylist([], schema=table.schema)
