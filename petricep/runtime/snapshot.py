"""The Python reference engine's run state as bytes, and back (Arrow IPC, never pickle).

What a run changes is one :class:`~petricep.runtime.state.RunState`: a graph of partial
matches (:class:`~petricep.runtime.state.Token` chains sharing prefixes), the events they
bind, per-key markings, heaps of waiting matches and deadlines, LIMIT quotas, counters and
the events a slack holds back. :func:`dumps` writes that graph as an Arrow IPC stream of one
single-row record batch, the kind of format the kernel's snapshots use
(:mod:`petricep.kernel.snapshot`):

* an object table: per object (the run state, its stats, every partition, token, event and
  quota reachable from it, each once, so shared prefixes and shared events stay shared) its
  class code and the node holding its attributes;
* a node table, the attributes' values in pre-order: a kind and an int64 per node (an int, a
  reference to an object, a container's length, an index into the float or text lists), the
  floats, the texts (UTF-8 with lone surrogates kept: binary). The compiled side is referenced,
  never written: a shared net by its index, a role by (net, place, position).

The schema's metadata holds a magic marker, the format version, a fingerprint of the net and
the tie rule (:func:`restore` with another net raises :class:`~petricep.errors.SnapshotError`)
and a checksum of the columns (a damaged snapshot is refused, not half restored). The same
state gives the same bytes, and so does the state a snapshot restored.

SQL queries' open searches (:mod:`petricep.runtime.rows`: per partition its rows back as
far as PREV reads and its attempts) are written too. Not written (refused with
:class:`SnapshotError`): a query on the kernel's row matcher (native state), a run with
spilling, or with patterns removed while it ran.
"""

from __future__ import annotations

import hashlib
import heapq
from collections import deque
from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from typing import Any, Protocol

import pyarrow as pa

from petricep.compile.net import Net
from petricep.errors import SnapshotError
from petricep.events import Event
from petricep.runtime.compiled import Compiled
from petricep.runtime.housekeeping import drop_empty, sweep
from petricep.runtime.limits import Quota
from petricep.runtime.rows import Attempt, RowPartition, RowRuntime
from petricep.runtime.state import Partition, RunState, RunStats, Token

FORMAT = "1"
MAGIC = b"petricep.runtime.snapshot"

# node kinds
N_NONE, N_FALSE, N_TRUE, N_INT, N_BIGINT, N_FLOAT, N_STR, N_TUPLE, N_LIST, N_DICT = range(10)
N_REF, N_RUNTIME, N_ROLE, N_UNSET, N_DEQUE = range(10, 15)
INT64 = (-(1 << 63), (1 << 63) - 1)

# the classes of the object table, by code, and the attributes written of each
CLASSES: tuple[type, ...] = (RunState, RunStats, Partition, Token, Event, Quota, RowPartition, Attempt)
ATTRS: dict[type, tuple[str, ...]] = {
    RunState: tuple(a for a in RunState.__slots__ if a not in ("counters", "order")),
    RunStats: tuple(f.name for f in fields(RunStats)),
    Partition: Partition.__slots__,
    Token: Token.__slots__,
    Event: Event.__slots__,
    Quota: Quota.__slots__,
    RowPartition: RowPartition.__slots__,
    Attempt: Attempt.__slots__,
}
# run-state attributes added since format 1 was first written, with the value an older
# snapshot restores them to (at the end of RunState's slots)
_STATE_LATER = {"sample_span": 0}
ROW_ATTRS = ("parts", "matches", "rows_seen", "closing", "_seq")  # a SQL query's searches (rows.py)
ORDER_ATTRS = ("late", "_heap", "_max_ts", "_arrivals", "_next_pos")  # a slack's state (ordering.py)
COUNTER_ATTRS = ("created", "fired", "peak")  # count_marking's counts (counters.py)
SCHEMA = pa.schema([
    ("classes", pa.list_(pa.int8())),
    ("roots", pa.list_(pa.int32())),
    ("kinds", pa.list_(pa.int8())),
    ("ints", pa.list_(pa.int64())),
    ("floats", pa.list_(pa.float64())),
    ("texts", pa.list_(pa.binary())),
])


class _Holder(Protocol):
    """What holds a run: the compiled side and the run state (the :class:`Engine`; named by
    its shape so that the engine can import this module)."""

    compiled: Compiled
    state: RunState


def dumps(engine: _Holder) -> bytes:
    """``engine``'s run state (between two pushes) as Arrow IPC bytes; :func:`restore`
    puts it back. The same state always gives the same bytes."""
    c = engine.compiled
    _check_supported(c)
    compact(engine)
    writer = _Writer(c)
    columns = writer.encode(engine.state)
    batch = pa.record_batch([pa.array([col], SCHEMA.field(i).type) for i, col in enumerate(columns)], schema=SCHEMA)
    meta = {
        b"magic": MAGIC,
        b"format": FORMAT.encode(),
        b"fingerprint": fingerprint(c.net, c.tie).encode(),
        b"patterns": ",".join(p.name for p in c.net.patterns).encode(),
        b"tie": c.tie.encode(),
        b"checksum": _checksum(batch).encode(),
    }
    batch = batch.replace_schema_metadata(meta)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as out:
        out.write_batch(batch)
    return sink.getvalue().to_pybytes()


def compact(engine: _Holder) -> None:
    """Drop what no later event can use, as a sweep at the last event would (issue 39): a
    streaming bucket's snapshot held every key whose window had closed since the last sweep
    (one every ``sweep_every`` events), and on an indexed net (its sweeps follow the expiry
    index) every partition left empty, with its stale index entries: a snapshot grew with
    the keys ever seen, not with the partial matches. A sweep may come after any event
    without changing a later match; the counts of the sweeps and the sampled peak are kept
    as they were, so that the run goes on exactly as if no snapshot had been taken. Not
    while a timestamp group is open (tie rules strict, either) or marking counters run."""
    c, st = engine.compiled, engine.state
    now = st.last_input
    if now is None or st.group_events or st.group_kills or st.group_emitted or st.group_clocks or st.counters is not None:
        return
    kept = (st.since_sweep, st.sampled_at, st.sample_span, st.stats.peak_partial)
    sweep(c, st, now)
    st.since_sweep, st.sampled_at, st.sample_span, st.stats.peak_partial = kept
    drop_empty(c, st)
    for parts, heap in zip(st.parts, st.expiry):
        if heap is None:
            continue  # (such a sweep visits every partition and drops the empty ones)
        live = [x for x in heap if x[2].due == x[0] and parts.get(x[2].key) is x[2]]
        if len(live) < len(heap):
            heapq.heapify(live)  # (heap entries are unique by their counter: pops in the same order)
            heap[:] = live


def restore(engine: _Holder, data: bytes) -> None:
    """Put the run state :func:`dumps` wrote into ``engine``, a fresh engine over the same net
    (and options) as the run that wrote it: pushing the rest of the stream then gives what the
    uninterrupted run gives. :class:`SnapshotError` where the bytes are not such a snapshot,
    are damaged, or were written for another net or tie rule."""
    batch = _read(data)
    c = engine.compiled
    _check_supported(c)
    meta = batch.schema.metadata or {}
    if meta.get(b"fingerprint", b"").decode() != fingerprint(c.net, c.tie):
        raise SnapshotError(
            f"the snapshot is of another net or tie rule (patterns {meta.get(b'patterns', b'').decode()!r}, "
            f"tie {meta.get(b'tie', b'').decode()!r}), not of these patterns under tie {c.tie!r}"
        )
    if meta.get(b"checksum", b"").decode() != _checksum(batch.replace_schema_metadata({})):
        raise SnapshotError("the snapshot is damaged: its checksum does not match its contents")
    columns = [batch.column(i)[0].values.to_pylist() for i in range(batch.num_columns)]
    try:
        engine.state = _Reader(c, engine.state, columns).decode()
    except (IndexError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise SnapshotError(f"the snapshot is inconsistent: {type(e).__name__}: {e}") from None


def fingerprint(net: Net, tie: str) -> str:
    """What a snapshot must be loaded with: the net's patterns and shared nets (every field
    that takes part in comparing them: not where they were written) and the tie rule. The
    same in every process (sets are fed sorted, never in hash order)."""
    h = hashlib.sha256(f"format {FORMAT}; tie {tie};".encode())
    _feed(h, (net.patterns, net.groups, net.rows))
    return h.hexdigest()


# fields added after snapshots were written, left out of the digest at their defaults, so that
# a net without what they say still restores its older snapshots (optional and Kleene steps
# inside a repeated group, issue 42)
_LATER = frozenset((("Var", "optional"), ("Var", "repeats"), ("Index", "of")))
# fields that follow from others fed already: never fed (GroupNet.ordered_slots, from its
# patterns' variables), so that snapshots written before them restore
_DERIVED = frozenset((("GroupNet", "ordered_slots"),))


def _feed(h: Any, obj: Any) -> None:
    """Feed ``obj`` to ``h`` unambiguously (type, shape, contents)."""
    if is_dataclass(obj) and not isinstance(obj, type):
        h.update(f"<{type(obj).__name__}".encode())
        for f in fields(obj):
            if (type(obj).__name__, f.name) in _DERIVED:
                continue
            if f.compare and not ((type(obj).__name__, f.name) in _LATER and getattr(obj, f.name) == f.default):
                h.update(f"{f.name}=".encode())
                _feed(h, getattr(obj, f.name))
        h.update(b">")
    elif isinstance(obj, (tuple, list)):
        h.update(f"seq {len(obj)}(".encode())
        for x in obj:
            _feed(h, x)
        h.update(b")")
    elif isinstance(obj, (set, frozenset)):
        _feed(h, sorted(map(repr, obj)))
    elif isinstance(obj, dict):
        _feed(h, sorted((repr(k), repr(v)) for k, v in obj.items()))
    else:
        h.update(f"{type(obj).__name__}:{obj!r};".encode("utf-8", "surrogatepass"))


def _check_supported(c: Compiled) -> None:
    if any(type(r) is not RowRuntime for r in c.rows.runtimes):
        raise SnapshotError("a SQL query on the kernel's row matcher has no Python engine snapshot (its state is native)")
    if c.spill is not None:
        raise SnapshotError("a run that spills partial matches has no snapshot")
    if c.removed:
        raise SnapshotError("a run with patterns removed while it ran has no snapshot")


class _Writer:
    """Encodes a run state: objects breadth-first from the state (no recursion along token
    chains), the values of each object's attributes in pre-order."""

    def __init__(self, c: Compiled) -> None:
        self.row_runtimes = c.rows.runtimes
        self.runtimes = {id(rt): i for i, rt in enumerate(c.runtimes)}
        self.roles: dict[int, tuple[int, int, int]] = {}
        for i, rt in enumerate(c.runtimes):
            for place, roles in enumerate(rt.net.places):
                for k, role in enumerate(roles.roles):
                    self.roles.setdefault(id(role), (i, place, k))
        self.objects: dict[int, int] = {}  # id(obj) -> its index
        self.queue: list[Any] = []
        self.classes: list[int] = []
        self.roots: list[int] = []
        self.kinds: list[int] = []
        self.ints: list[int] = []
        self.floats: list[float] = []
        self.texts: list[bytes] = []

    def encode(self, st: RunState) -> list[list[Any]]:
        self._ref(st)
        # first the state of a slack and of the marking counters (configured objects)
        order = st.order
        self._value(None if order is None else tuple(getattr(order, a) for a in ORDER_ATTRS))
        counters = st.counters
        self._value(None if counters is None else tuple(getattr(counters, a) for a in COUNTER_ATTRS))
        self._value(tuple(tuple(getattr(r, a) for a in ROW_ATTRS) for r in self.row_runtimes))
        done = 0
        while done < len(self.queue):
            obj = self.queue[done]
            done += 1
            self.roots.append(len(self.kinds))
            self._value(tuple(getattr(obj, a, _UNSET) for a in ATTRS[type(obj)]))
        return [self.classes, self.roots, self.kinds, self.ints, self.floats, self.texts]

    def _ref(self, obj: Any) -> int:
        n = self.objects.get(id(obj))
        if n is None:
            n = self.objects[id(obj)] = len(self.queue)
            self.queue.append(obj)
            self.classes.append(CLASSES.index(type(obj)))
        return n

    def _node(self, kind: int, value: int = 0) -> None:
        self.kinds.append(kind)
        self.ints.append(value)

    def _value(self, v: Any) -> None:  # noqa: C901 - one branch per kind of value
        t = type(v)
        if v is None:
            self._node(N_NONE)
        elif t is bool:
            self._node(N_TRUE if v else N_FALSE)
        elif t is int:
            if INT64[0] <= v <= INT64[1]:
                self._node(N_INT, v)
            else:
                self._text(N_BIGINT, str(v))
        elif t is float:
            self._node(N_FLOAT, len(self.floats))
            self.floats.append(v)
        elif t is str:
            self._text(N_STR, v)
        elif t is tuple or t is list:
            self._node(N_TUPLE if t is tuple else N_LIST, len(v))
            for x in v:
                self._value(x)
        elif t is deque:
            self._node(N_DEQUE, len(v))
            for x in v:
                self._value(x)
        elif t is dict:
            self._node(N_DICT, len(v))
            for k, x in v.items():
                self._value(k)
                self._value(x)
        elif t in ATTRS:
            self._node(N_REF, self._ref(v))
        elif v is _UNSET:
            self._node(N_UNSET)
        elif id(v) in self.runtimes:
            self._node(N_RUNTIME, self.runtimes[id(v)])
        elif id(v) in self.roles:
            i, place, k = self.roles[id(v)]
            self._node(N_ROLE, (i << 40) | (place << 20) | k)
        else:
            raise SnapshotError(f"a run state holding a {t.__name__} has no snapshot")

    def _text(self, kind: int, s: str) -> None:
        self._node(kind, len(self.texts))
        self.texts.append(s.encode("utf-8", "surrogatepass"))


class _Unset:
    """An optional slot not set on an object (a token's ``extended``, ``counted``)."""

    __slots__ = ()


_UNSET = _Unset()


class _Reader:
    """Decodes what :class:`_Writer` encoded into a new run state; a slack's and the marking
    counters' state go into the objects of ``fresh`` (the new engine's), which hold its
    configuration."""

    def __init__(self, c: Compiled, fresh: RunState, columns: list[list[Any]]) -> None:
        self.c = c
        self.fresh = fresh
        self.classes, self.roots, self.kinds, self.ints, self.floats, self.texts = columns
        self.objects = [CLASSES[k].__new__(CLASSES[k]) for k in self.classes]
        self.at = 0

    def decode(self) -> RunState:
        order = self._value()
        counters = self._value()
        searches = self._value()
        if len(searches) != len(self.c.rows.runtimes):
            raise SnapshotError("the snapshot is inconsistent: another number of SQL queries")
        for r, values in zip(self.c.rows.runtimes, searches, strict=True):
            for name, v in zip(ROW_ATTRS, values, strict=True):
                setattr(r, name, v)
        for obj, root in zip(self.objects, self.roots, strict=True):
            self.at = root
            values = self._value()
            names = ATTRS[type(obj)]
            if type(obj) is RunState and len(values) < len(names):  # (written before these were kept)
                values = (*values, *(_STATE_LATER[a] for a in names[len(values) :]))
            for name, v in zip(names, values, strict=True):
                if v is not _UNSET:
                    setattr(obj, name, v)
        st = self.objects[0]
        if not isinstance(st, RunState):
            raise SnapshotError("the snapshot is inconsistent: its first object is not a run state")
        st.order = _merge(self.fresh.order, order, ORDER_ATTRS, "a slack")
        st.counters = _merge(self.fresh.counters, counters, COUNTER_ATTRS, "count_marking")
        if self.at != len(self.kinds):
            raise SnapshotError("the snapshot is inconsistent: values are left over")
        return st

    def _value(self) -> Any:  # noqa: C901 - one branch per kind of value
        kind, n = self.kinds[self.at], self.ints[self.at]
        self.at += 1
        if kind == N_NONE:
            return None
        if kind in (N_FALSE, N_TRUE):
            return kind == N_TRUE
        if kind == N_INT:
            return n
        if kind == N_BIGINT:
            return int(self.texts[n].decode())
        if kind == N_FLOAT:
            return self.floats[n]
        if kind == N_STR:
            return self.texts[n].decode("utf-8", "surrogatepass")
        if kind == N_TUPLE:
            return tuple(self._value() for _ in range(n))
        if kind == N_LIST:
            return [self._value() for _ in range(n)]
        if kind == N_DEQUE:
            return deque(self._value() for _ in range(n))
        if kind == N_DICT:
            out = {}
            for _ in range(n):
                k = self._value()
                out[k] = self._value()
            return out
        if kind == N_REF:
            return self.objects[n]
        if kind == N_UNSET:
            return _UNSET
        if kind == N_RUNTIME:
            return self.c.runtimes[n]
        if kind == N_ROLE:
            return self.c.runtimes[n >> 40].net.places[(n >> 20) & 0xFFFFF].roles[n & 0xFFFFF]
        raise SnapshotError(f"the snapshot is inconsistent: a value of unknown kind {kind}")


def _merge(into: Any, values: Any, names: tuple[str, ...], what: str) -> Any:
    """A configured object of the new engine (``into``) takes the snapshot's ``values``."""
    if (values is None) != (into is None):
        raise SnapshotError(f"the snapshot was taken {'with' if into is None else 'without'} {what}; load it so")
    if values is not None:
        for name, v in zip(names, values, strict=True):
            setattr(into, name, v)
    return into


def _read(data: bytes) -> pa.RecordBatch:
    """The snapshot's record batch; SnapshotError (not an Arrow traceback) where ``data`` is
    not one."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SnapshotError(f"a snapshot is bytes, not {type(data).__name__}")
    try:
        reader = pa.ipc.open_stream(pa.py_buffer(data))
        batches = list(reader)
    except (pa.ArrowInvalid, OSError) as e:
        raise SnapshotError(f"not a Python engine snapshot, or a truncated one ({len(data)} bytes): {e}") from None
    meta = reader.schema.metadata or {}
    if meta.get(b"magic") != MAGIC:
        raise SnapshotError("not a Python engine snapshot (an Arrow stream without its marker)")
    if meta.get(b"format") != FORMAT.encode():
        raise SnapshotError(f"snapshot format {meta.get(b'format', b'?').decode()!r}; this petricep reads {FORMAT!r}")
    if len(batches) != 1 or batches[0].num_rows != 1 or not batches[0].schema.remove_metadata().equals(SCHEMA):
        raise SnapshotError(f"a truncated or damaged snapshot ({len(data)} bytes)")
    return batches[0].replace_schema_metadata(meta)


def _checksum(batch: pa.RecordBatch) -> str:
    h = hashlib.sha256()
    for part in _parts(batch):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def _parts(batch: pa.RecordBatch) -> Iterator[bytes]:
    """Each column's values as bytes (numbers as their machine bytes, texts one by one)."""
    for i in range(batch.num_columns):
        values = batch.column(i)[0].values
        if pa.types.is_binary(values.type):
            yield from values.to_pylist()
        else:
            yield values.to_numpy(zero_copy_only=False).tobytes()


__all__ = ["dumps", "fingerprint", "restore"]
