"""A :class:`~petricep.kernel.engine.KernelEngine`'s state as bytes, and back.

A streaming run keeps, per key, the engine's state between micro-batches; on the kernel that
state is the kernel's arrays, so this is what is kept -- not a pickled engine. :func:`dumps`
encodes it as an Arrow IPC stream of one single-row record batch:

* one column per array of the kernel's state (``list<primitive>``: the event store, per shared
  net its tokens, negative-event buffers, waiting matches and their heap order, Kleene
  elements, deadlines, LIMIT quotas; the open timestamp group, strict cancellations, consumed
  events), one scalar column per counter or clock (``_snapshot.pxi`` lists them); only the
  live part: the store is compacted and each arena renumbered first, so the size follows the
  live partial matches, not what the run once held;
* the Python side as columns too: the string dictionary, the partition-key dictionaries, the
  composite events still bindable, the ids and timestamps of the events the kernel may still
  bind, the counts. A list of Python values (ids, timestamps, keys) is one struct column of a
  kind per value and one list per kind (int64, float64, string -- ints beyond int64 as decimal
  text --, tuples as their length followed by their items); only a value of another type (a
  NumPy scalar id, say) is pickled, into the struct's ``pickled`` list: loading such a
  snapshot unpickles it, so load only snapshots you wrote.

The schema's metadata holds the format version, a fingerprint of the lowered net and the tie
rule (:func:`restore` into another net raises :class:`~petricep.errors.SnapshotError`), the
patterns' names and the tie rule (for that message) and a checksum of the columns' values (a
damaged snapshot is refused, not half restored).

The same state always gives the same bytes (:func:`dumps` twice, or after a round trip).
Taking a snapshot compacts the engine's store as a sweep would: it changes no later match.
"""

from __future__ import annotations

import hashlib
import pickle
import zlib
from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from petricep.errors import SnapshotError
from petricep.kernel.lowering import Lowered, LoweredGroup, LoweredPattern

FORMAT = "1"
MAGIC = b"petricep.kernel.snapshot"

# a value's kind in a list of Python values
K_NONE, K_FALSE, K_TRUE, K_INT, K_FLOAT, K_STR, K_BIGINT, K_TUPLE, K_PICKLED = range(9)
VALUES = pa.struct([
    ("kind", pa.list_(pa.int8())),
    ("int", pa.list_(pa.int64())),
    ("float", pa.list_(pa.float64())),
    ("str", pa.list_(pa.string())),
    ("pickled", pa.list_(pa.binary())),
])
INT64 = (-(1 << 63), (1 << 63) - 1)
# buffers not compressed: where snapshots are kept (a streaming query's state store) they are
# compressed already (RocksDB's blocks: lz4), and per-buffer zstd was 60% of a snapshot's time
# (~1.5 ms of 2 ms a key a micro-batch to write, ~0.7 ms to read; 5.3 -> 8.8 KB an Aarhus
# key). Snapshots written compressed by an earlier petricep load as ever: the stream says so.
_OPTIONS = pa.ipc.IpcWriteOptions(compression=None)
DTYPES = ("float64", "int64", "int32", "int8")  # the arrays' dtypes: one packed column each
_DTYPE_CODES = {np.dtype(d): i for i, d in enumerate(DTYPES)}
E_LIST, E_SCALAR = len(DTYPES), len(DTYPES) + 1  # a directory entry's encoding (else: its dtype's index)


def dumps(engine: Any) -> bytes:
    """``engine``'s state (between batches) as Arrow IPC bytes; :func:`restore` puts it back
    (``KernelEngine.restore``, ``KernelEngine.restored``).

    Events collected but not fired are refused (:class:`SnapshotError`): call
    ``engine.drain_pairs()`` first and keep its matches. So is a run an error stopped."""
    batch = _batch(engine.snapshot_state())
    run = engine.kernel
    meta = {
        b"magic": MAGIC,
        b"format": FORMAT.encode(),
        b"fingerprint": fingerprint(run.lowered, run.tie).encode(),
        b"patterns": ",".join(p.name for p in run.lowered.patterns).encode(),
        b"tie": run.tie.encode(),
        b"checksum": _checksum(batch).encode(),
    }
    batch = batch.replace_schema_metadata(meta)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema, options=_OPTIONS) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def restore(engine: Any, data: bytes) -> None:
    """Restore a fresh :class:`~petricep.kernel.engine.KernelEngine` (typed ``Any`` here:
    the engine's own module imports this one) to the state :func:`dumps` wrote.
    :class:`SnapshotError` where the bytes are not such a snapshot, are truncated or
    damaged, or are of another net or tie rule."""
    batch = _read(data)
    meta = batch.schema.metadata or {}
    run = engine.kernel
    if meta.get(b"fingerprint", b"").decode() != fingerprint(run.lowered, run.tie):
        theirs = (meta.get(b"patterns", b"").decode() or "?", meta.get(b"tie", b"").decode() or "?")
        ours = (",".join(p.name for p in run.lowered.patterns), run.tie)
        raise SnapshotError(
            f"the snapshot is of another net or tie rule (patterns {theirs[0]} under tie {theirs[1]!r}; "
            f"this engine: patterns {ours[0]} under tie {ours[1]!r}, or the same names with other definitions)"
        )
    if meta.get(b"checksum", b"").decode() != _checksum(batch):
        raise SnapshotError("the snapshot is damaged: its checksum does not match its contents")
    try:
        engine.restore_state(_state(batch))
    except (KeyError, ValueError, TypeError, IndexError, pa.ArrowException) as e:
        raise SnapshotError(f"the snapshot is inconsistent: {e}") from None


def fingerprint(lowered: Lowered, tie: str) -> str:
    """A digest of the lowered net (every array and constant) and the tie rule: a snapshot
    restores only into an engine whose kernel interprets the same arrays the same way.
    Computed once per lowered net (frozen) and tie rule: every snapshot carries it."""
    hit = _fingerprints.get((id(lowered), tie))
    if hit is not None and hit[0] is lowered:
        return hit[1]
    h = hashlib.sha256(f"format {FORMAT}; tie {tie};".encode())
    _feed(h, lowered)
    digest = h.hexdigest()
    if len(_fingerprints) >= 16:
        _fingerprints.pop(next(iter(_fingerprints)))
    _fingerprints[(id(lowered), tie)] = (lowered, digest)
    return digest


_fingerprints: dict[tuple[int, str], tuple[Lowered, str]] = {}


# fields a lowered group gained after snapshots were written, saying nothing for a net without
# what they lay out: left out of such a net's digest, so that its older snapshots still restore
# (per-step gaps, issue 42: a gapped net's digest has them)
_GAP_FIELDS = frozenset(("place_gap_start", "gap_slot", "gap_hi", "place_tgap_start", "tgap_bit", "tgap_slot", "tgap_hi"))
# (repeated groups, issue 42: a pattern's ``groups``, likewise only in a grouped pattern's digest;
# GREEDY / RELUCTANT's per-place rules only in the digest of a net that has one)
_REPEAT_FIELDS = frozenset(("pl_repeat_start", "pl_repeat"))
# (integer literals beyond 2**53, ``Lowered.bigs``: only in the digest of a net that has one)
# (stop events, issue 42: ``stop_mask`` only in the digest of a net with an UNTIL)


def _feed(h: Any, obj: Any) -> None:
    """Feed ``obj`` to ``h`` unambiguously (type, shape, contents)."""
    if is_dataclass(obj) and not isinstance(obj, type):
        h.update(f"<{type(obj).__name__}".encode())
        gapless = isinstance(obj, LoweredGroup) and not len(obj.gap_slot) and not len(obj.tgap_slot)
        plain = isinstance(obj, LoweredGroup) and not len(obj.pl_repeat)
        groupless = isinstance(obj, LoweredPattern) and not obj.groups
        bigless = isinstance(obj, Lowered) and not obj.bigs
        stopless = isinstance(obj, LoweredGroup) and not obj.stop_mask
        for f in fields(obj):
            if gapless and f.name in _GAP_FIELDS or plain and f.name in _REPEAT_FIELDS:
                continue
            if stopless and f.name == "stop_mask":
                continue
            if groupless and f.name == "groups" or bigless and f.name == "bigs":
                continue
            if isinstance(obj, LoweredPattern) and f.name == "ordered_groups" and not obj.ordered_groups:
                continue  # (optional steps inside a group: only in the digest of a pattern that has them)
            if isinstance(obj, LoweredPattern) and f.name == "repeating_steps" and not obj.repeating_steps:
                continue  # (Kleene steps inside a group: likewise)
            if isinstance(obj, LoweredGroup) and f.name == "pl_repeat_joined" and not obj.pl_repeat_joined.any():
                continue  # (a group's rule over several steps, issue 42: only in the digest of a net with one)
            if isinstance(obj, LoweredGroup) and f.name == "slot_ordered":
                continue  # (follows from the patterns' ordered_groups and repeating_steps, fed already)
            h.update(f"{f.name}=".encode())
            _feed(h, getattr(obj, f.name))
        h.update(b">")
    elif isinstance(obj, np.ndarray):
        h.update(f"array {obj.dtype.str} {obj.shape}:".encode())
        h.update(np.ascontiguousarray(obj).tobytes())
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
        h.update(f"{type(obj).__name__}:{obj!r};".encode())


# ------------------------------------------------------------------ columns


def _batch(state: dict[str, Any]) -> pa.RecordBatch:
    """The state as one row: a directory (entry names, their encodings and lengths), the
    arrays concatenated per dtype (one ``list<primitive>`` column each), the scalars and lists
    of Python values in one :data:`VALUES` struct."""
    names, codes, lengths = [], [], []
    arrays: dict[str, list[np.ndarray]] = {d: [] for d in DTYPES}
    values: list[Any] = []
    for name, value in state.items():
        names.append(name)
        if isinstance(value, np.ndarray):
            code = _DTYPE_CODES.get(value.dtype)  # (not dtype.name: slow, and ~120 arrays a snapshot)
            if code is None or value.ndim != 1:
                raise TypeError(f"state entry {name!r}: cannot encode a {value.dtype} array of {value.ndim} dimensions")
            arrays[DTYPES[code]].append(value)
            codes.append(code)
            lengths.append(len(value))
        elif isinstance(value, list):
            values.extend(value)
            codes.append(E_LIST)
            lengths.append(len(value))
        else:
            values.append(value)
            codes.append(E_SCALAR)
            lengths.append(1)
    cols = {"name": pa.array(names, pa.string()), "encoding": np.array(codes, np.int8), "length": np.array(lengths, np.int64)}
    cols.update({d: np.concatenate(a) if a else np.empty(0, d) for d, a in arrays.items()})
    columns = [_list(pa.array(v) if isinstance(v, np.ndarray) else v) for v in cols.values()]
    return pa.RecordBatch.from_arrays([*columns, _values_column(values)], names=[*cols, "values"])


def _list(values: pa.Array) -> pa.Array:
    return pa.ListArray.from_arrays(pa.array([0, len(values)], pa.int32()), values)


def _state(batch: pa.RecordBatch) -> dict[str, Any]:
    """:func:`_batch`'s row back as the state dict."""
    if batch.schema.names != ["name", "encoding", "length", *DTYPES, "values"]:
        raise ValueError(f"columns {batch.schema.names}")
    names = batch.column(0).values.to_pylist()
    codes = batch.column(1).values.to_numpy(zero_copy_only=False).tolist()
    lengths = batch.column(2).values.to_numpy(zero_copy_only=False).tolist()
    flat = {d: batch.column(3 + i).values.to_numpy(zero_copy_only=False) for i, d in enumerate(DTYPES)}
    values = _decode_values(batch.column(3 + len(DTYPES)))
    if not len(names) == len(codes) == len(lengths):
        raise ValueError("the directory's columns differ in length")
    at = dict.fromkeys(DTYPES, 0)
    taken = 0
    state: dict[str, Any] = {}
    for name, code, n in zip(names, codes, lengths):
        if code in (E_LIST, E_SCALAR):
            if taken + n > len(values) or n < 0 or (code == E_SCALAR and n != 1):
                raise ValueError(f"entry {name!r}: values missing")
            state[name] = values[taken] if code == E_SCALAR else values[taken : taken + n]
            taken += n
            continue
        if not 0 <= code < len(DTYPES):
            raise ValueError(f"entry {name!r}: unknown encoding {code}")
        d = DTYPES[code]
        if n < 0 or at[d] + n > len(flat[d]):
            raise ValueError(f"entry {name!r}: {d} values missing")
        state[name] = flat[d][at[d] : at[d] + n]
        at[d] += n
    return state


def _values_column(values: list[Any]) -> pa.Array:
    kinds: list[int] = []
    ints: list[int] = []
    floats: list[float] = []
    strs: list[str] = []
    pickled: list[bytes] = []
    kind = _one_kind(values)
    if kind is not None:  # the common case: ids or timestamps of one type
        kinds_arr = np.full(len(values), kind, dtype=np.int8)
        payload: list[Any] = {K_INT: ints, K_FLOAT: floats, K_STR: strs}[kind]  # type: ignore[assignment]
        payload.extend(values)
    else:
        for v in values:
            _encode_value(v, kinds, ints, floats, strs, pickled)
        kinds_arr = np.array(kinds, dtype=np.int8)
    row = {"kind": kinds_arr, "int": ints, "float": floats, "str": strs, "pickled": pickled}
    return pa.array([row], VALUES)


def _one_kind(values: list[Any]) -> int | None:
    """The kind every value has, where it is int (within int64), float or str."""
    types = set(map(type, values))
    if types == {float}:
        return K_FLOAT
    if types == {str}:
        return K_STR
    if types == {int} and INT64[0] <= min(values) and max(values) <= INT64[1]:
        return K_INT
    return None


def _encode_value(v: Any, kinds: list[int], ints: list[int], floats: list[float], strs: list[str], pickled: list[bytes]) -> None:
    t = type(v)
    if v is None:
        kinds.append(K_NONE)
    elif t is bool:
        kinds.append(K_TRUE if v else K_FALSE)
    elif t is int and INT64[0] <= v <= INT64[1]:
        kinds.append(K_INT)
        ints.append(v)
    elif t is int:
        kinds.append(K_BIGINT)
        strs.append(str(v))
    elif t is float:
        kinds.append(K_FLOAT)
        floats.append(v)
    elif t is str:
        kinds.append(K_STR)
        strs.append(v)
    elif t is tuple:
        kinds.append(K_TUPLE)
        ints.append(len(v))
        for x in v:
            _encode_value(x, kinds, ints, floats, strs, pickled)
    else:  # an arbitrary Python value: pickled (see the module docstring)
        kinds.append(K_PICKLED)
        pickled.append(pickle.dumps(v, protocol=4))


def _decode_values(col: pa.Array) -> list[Any]:
    row = col.field("kind").values.to_numpy(zero_copy_only=False)
    payload = {name: col.field(name).values.to_pylist() for name in ("int", "float", "str", "pickled")}
    if len(row) and (row == row[0]).all() and int(row[0]) in (K_INT, K_FLOAT, K_STR):
        out = payload[{K_INT: "int", K_FLOAT: "float", K_STR: "str"}[int(row[0])]]
        if len(out) != len(row):
            raise ValueError("a list of values without its payload")
        return out
    cursor = dict.fromkeys(payload, 0)
    kinds = iter(row.tolist())
    out = []
    for kind in kinds:
        out.append(_decode_value(kind, kinds, payload, cursor))
    return out


def _decode_value(kind: int, kinds: Iterator[int], payload: dict[str, list[Any]], cursor: dict[str, int]) -> Any:
    def take(name: str) -> Any:
        at = cursor[name]
        cursor[name] = at + 1
        return payload[name][at]  # (IndexError where the payload is short)

    if kind == K_NONE:
        return None
    if kind in (K_FALSE, K_TRUE):
        return kind == K_TRUE
    if kind == K_INT:
        return take("int")
    if kind == K_FLOAT:
        return take("float")
    if kind == K_STR:
        return take("str")
    if kind == K_BIGINT:
        return int(take("str"))
    if kind == K_TUPLE:
        return tuple(_decode_value(next(kinds), kinds, payload, cursor) for _ in range(take("int")))
    if kind == K_PICKLED:
        return pickle.loads(take("pickled"))
    raise ValueError(f"unknown value kind {kind}")


# ------------------------------------------------------------------ reading, checking


def _read(data: bytes) -> pa.RecordBatch:
    """The snapshot's one record batch; SnapshotError (not an Arrow traceback) where ``data``
    is not a complete snapshot."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SnapshotError(f"a snapshot is bytes, not {type(data).__name__}")
    try:
        reader = pa.ipc.open_stream(pa.py_buffer(data))
        batches = list(reader)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise SnapshotError(f"not a kernel engine snapshot, or a truncated one ({len(data)} bytes): {e}") from None
    meta = reader.schema.metadata or {}
    if meta.get(b"magic") != MAGIC:
        raise SnapshotError("not a kernel engine snapshot (an Arrow stream without petricep's marker)")
    if meta.get(b"format") != FORMAT.encode():
        raise SnapshotError(f"snapshot format {meta.get(b'format', b'?').decode()!r}; this petricep reads {FORMAT!r}")
    if len(batches) != 1 or batches[0].num_rows != 1:
        raise SnapshotError(f"a truncated snapshot ({len(data)} bytes): its record batch is missing")
    return batches[0].replace_schema_metadata(meta)


def _checksum(batch: pa.RecordBatch) -> str:
    """CRC-32 of every column's name and values (not of the bytes: the metadata holds it)."""
    crc = 0
    for name, col in zip(batch.schema.names, batch.columns):
        crc = zlib.crc32(name.encode(), crc)
        for part in _parts(col):
            crc = zlib.crc32(part, crc)
    return f"{crc:08x}"


def _parts(col: pa.Array) -> Iterator[bytes]:
    t = col.type
    if pa.types.is_list(t):
        yield f"list {len(col.values)}".encode()
        yield from _parts(col.values)
    elif pa.types.is_struct(t):
        for i in range(t.num_fields):
            yield from _parts(col.field(i))
    elif pa.types.is_string(t) or pa.types.is_binary(t):
        yield _texts(col)
    elif pa.types.is_null(t):
        yield b"null"
    else:
        yield f"{t}:".encode() + col.to_numpy(zero_copy_only=False).tobytes()


def _texts(col: pa.Array) -> bytes:
    """A text or binary column's part of the checksum: per value its length (8 bytes, little
    endian) and its bytes, a null as empty. Read from the buffers, so that a damaged
    snapshot's text (not UTF-8, say) is refused as damaged, not failed on."""
    n = len(col)
    _, offsets_buf, data_buf = col.buffers()
    if n == 0 or offsets_buf is None:
        return b""
    offsets = np.frombuffer(offsets_buf, dtype=np.int32, count=n + 1, offset=col.offset * 4).tolist()
    raw = data_buf.to_pybytes() if data_buf is not None else b""
    valid = col.is_valid().to_pylist() if col.null_count else [True] * n
    parts = [raw[a:b] if ok else b"" for a, b, ok in zip(offsets, offsets[1:], valid)]
    return b"".join(len(part).to_bytes(8, "little") + part for part in parts)


__all__ = ["dumps", "fingerprint", "restore"]
