"""What crosses the shuffle between the parse and firing stages (pure Python, no Spark):
a kernel group's events as typed columns, anything they cannot hold exactly as blobs,
and the firing stage's columns hold exactly the events' values and kinds."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.events import Event
from petricep.spark.records import EVENT, encode
from petricep.spark.shuffle import Layout, Rows, columns, handed_over
from tests.budget import examples

FIELDS = ("x", "y", "s")
LAYOUT = Layout.of([("x", "s"), None, ("y", "x")])

values = st.one_of(
    st.integers(-(2**60), 2**60),
    st.integers(-5, 5),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.just(2**53 + 1),
)
stamps = st.one_of(st.integers(0, 2**54), st.floats(0, 1e12))
ids = st.one_of(st.integers(-(2**64), 2**64), st.text(max_size=3))


@st.composite
def events(draw: Any) -> list[Event]:
    out = []
    for pos in range(draw(st.integers(1, 12))):
        attrs = {f: draw(values) for f in FIELDS if draw(st.integers(0, 4))}  # some fields missing
        out.append(Event(draw(st.sampled_from(["A", "B"])), draw(stamps), pos, draw(ids), attrs))
    return out


def rows_of(cols: Any) -> list[tuple[Any, ...]]:
    """Each row's values with their Python types (1, 1.0 and True told apart)."""
    out = []
    for i in range(len(cols)):
        e = cols.event(i)
        out.append((e.type, e.ts, type(e.ts), e.pos, e.id, type(e.id), {k: (v, type(v)) for k, v in e.attrs.items()}))
    return out


def expected(evs: list[Event], names: tuple[str, ...]) -> list[tuple[Any, ...]]:
    return [
        (e.type, e.ts, type(e.ts), e.pos, e.id, type(e.id), {f: (e.attrs.get(f), type(e.attrs.get(f))) for f in names})
        for e in evs
    ]


@settings(max_examples=examples(300), deadline=None)
@given(events(), st.sampled_from([0, 2]))
def test_a_kernel_groups_events_arrive_with_their_values_and_kinds(evs: list[Event], g: int) -> None:
    names = LAYOUT.names_of(g)
    assert names is not None
    assert rows_of(handed_over(evs, g, LAYOUT)) == expected(evs, names)


@settings(max_examples=examples(200), deadline=None)
@given(events(), st.lists(st.integers(0, 2), min_size=1, max_size=12))
def test_typed_rows_among_blob_and_side_rows(evs: list[Event], groups: list[int]) -> None:
    """A batch mixing the groups' rows (typed and blobs) and a side row: each typed
    group's run of rows reads back exactly, and the blob rows keep their blobs."""
    out = Rows(LAYOUT)
    placed = []
    for e, g in zip(evs, groups * len(evs)):
        if LAYOUT.groups[g] is None:
            out.add(EVENT, g, "", e.pos, encode(e))
        else:
            out.add_event(EVENT, g, "", e.pos, e)
        placed.append((g, e))
    out.add(1, -1, "", 0, b"side")
    batch = out.batch()
    assert batch.num_rows == len(placed) + 1
    assert batch.column("ev")[len(placed)].as_py() == b"side"
    for row, (g, e) in enumerate(placed):
        if LAYOUT.groups[g] is None:
            assert batch.column("ev")[row].as_py() == encode(e)
            continue
        names = LAYOUT.names_of(g)
        assert names is not None
        assert rows_of(columns(batch, row, row + 1, [e.pos], LAYOUT, g, False)) == expected([e], names)


def test_values_the_columns_cannot_hold_travel_as_blobs() -> None:
    import datetime

    evs = [
        Event("A", 1, 0, 7, {"x": 1, "s": "a"}),
        Event("A", 2, 1, 8, {"x": 2**53 + 1, "s": "b"}),  # beyond a float64's ints
        Event("A", 3.5, 2, 9.5, {"x": 3, "s": None}),  # a float id
        Event("A", 4, 3, 10, {"x": datetime.date(2020, 1, 1), "s": "c"}),
        Event("A", 5, 4, 11, {"x": True, "s": "d"}),
    ]
    out = Rows(LAYOUT)
    for e in evs:
        out.add_event(EVENT, 0, "", e.pos, e)
    batch = out.batch()
    assert [v is not None for v in batch.column("ev").to_pylist()] == [False, True, True, True, False]
    assert batch.column("tk").to_pylist() == [1, None, None, None, 1]
    cols = columns(batch, 0, 5, [e.pos for e in evs], LAYOUT, 0, False)
    assert [cols.event(i).attrs["x"] for i in range(5)] == [1, 2**53 + 1, 3, datetime.date(2020, 1, 1), True]
    assert [cols.event(i).id for i in range(5)] == [7, 8, 9.5, 10, 11]


def test_one_kind_per_column_arrives_as_numpy() -> None:
    """What makes the firing stage fast: a column of one kind is a numpy array."""
    import numpy as np

    evs = [Event("A", i, i, 100 + i, {"x": i * 2, "s": "t", "y": 0.5 * i}) for i in range(5)]
    cols = handed_over(evs, 2, LAYOUT)
    assert isinstance(cols.ts, np.ndarray) and cols.ts.dtype == np.int64
    assert isinstance(cols.ids, np.ndarray) and cols.ids.dtype == np.int64
    assert cols.attrs["x"].dtype == np.int64 and cols.attrs["y"].dtype == np.float64
    assert LAYOUT.fields == ("x", "s", "y") and LAYOUT.groups == ((0, 1), None, (2, 0))


def as_columns(evs: list[Event]) -> Any:
    """Events as a reader's checked batch: a column of one kind of number as numpy, the
    others as lists of values (None where an event lacks the field)."""
    import numpy as np

    from petricep.events import EventColumns, TypeColumn

    def column(vals: list[Any]) -> Any:
        kinds = set(map(type, vals))
        if kinds == {float}:
            return np.array(vals, dtype=np.float64)
        if kinds == {int} and all(-(2**63) <= v < 2**63 for v in vals):
            return np.array(vals, dtype=np.int64)
        if kinds == {bool}:
            return np.array(vals, dtype=bool)
        return vals

    names = sorted({e.type for e in evs})
    types = TypeColumn(np.array([names.index(e.type) for e in evs], dtype=np.int32), names)
    attrs = {f: column([e.attrs.get(f) for e in evs]) for f in FIELDS if any(f in e.attrs for e in evs)}
    return EventColumns(types, column([e.ts for e in evs]), [e.pos for e in evs], column([e.id for e in evs]), attrs)


@settings(max_examples=examples(200), deadline=None)
@given(events())
def test_packs_of_a_typed_batch_hold_what_rows_hold(evs: list[Event]) -> None:
    """A checked batch packed a column at a time (numpy columns whole) holds exactly the
    typed cells :class:`Rows` makes of it, or (a value the cells cannot hold) is left to Rows."""
    from petricep.spark.shuffle import packed_rows, typed_batch

    cols = as_columns(evs)
    lids = [e.pos for e in evs]
    got = typed_batch(cols, lids, LAYOUT)
    out = Rows(LAYOUT)
    out.add_columns(EVENT, 0, [""] * len(evs), lids, cols)
    want = packed_rows(out.batch(), LAYOUT)
    assert want.schema == LAYOUT.pack_schema()
    if got is None:  # left to Rows: where (and only where) some row goes as a blob
        assert any(v is not None for v in want.column("ev").to_pylist())
        return
    assert got.schema == want.schema
    # (the type column's dictionaries may differ: the reader's names against those seen)
    assert got.column("t").to_pylist() == want.column("t").to_pylist() == [e.type for e in evs]
    assert got.drop_columns(["t"]).equals(want.drop_columns(["t"]))


@settings(max_examples=examples(300), deadline=None)
@given(events(), st.data())
def test_packs_and_rows_of_a_group_unpack_in_order(evs: list[Event], data: st.DataObject) -> None:
    """The parse stage's packs (by key bucket, per checked batch) and single typed rows,
    shuffled to partitions that several buckets share and sorted by (group, first order
    key) as Spark sorts them, come out of :class:`Unpacked` as each partition's events in
    order key order with exactly their values: overlapping packs are merged."""
    import pyarrow as pa

    from petricep.spark.shuffle import Unpacked

    labels = ["a", "b", "c", "d"]
    bucket = [data.draw(st.sampled_from(labels)) for _ in evs]
    where = {b: data.draw(st.integers(0, 1)) for b in labels}  # label -> partition (collisions)
    out = Rows(LAYOUT)
    i = 0
    while i < len(evs):  # consecutive checked batches, each packed or sent row by row
        j = data.draw(st.integers(i + 1, len(evs)))
        chunk = evs[i:j]
        if data.draw(st.booleans()):
            out.add_packs(EVENT, 0, bucket[i:j], [e.pos for e in chunk], as_columns(chunk))
        else:
            for e, label in zip(chunk, bucket[i:j]):
                out.add_event(EVENT, 0, label, e.pos, e)
        i = j
    batch = out.batch()
    names = LAYOUT.names_of(0)
    assert names is not None
    for part in (0, 1):
        rows = [r for r in range(batch.num_rows) if where[batch.column("k")[r].as_py()] == part]
        rows.sort(key=lambda r: batch.column("lid")[r].as_py())
        mine = batch.take(pa.array(rows, type=pa.int64())).drop_columns(["k"])
        unpacked = Unpacked(LAYOUT, data.draw(st.integers(1, 8)))  # (batches out of at least so many rows)
        got: list[Any] = []
        a = 0
        while a < mine.num_rows:  # the firing stage's batches, cut anywhere
            end = data.draw(st.integers(a + 1, mine.num_rows))
            got += list(unpacked.feed(mine, a, end))
            a = end
        got += list(unpacked.flush())
        read = []
        for p in got:
            lids = p.column("lid").to_pylist()
            read += rows_of(columns(p, 0, p.num_rows, lids, LAYOUT, 0, False))
        mine_evs = [e for e, label in zip(evs, bucket) if where[label] == part]
        assert read == expected(mine_evs, names)


@settings(max_examples=examples(60), deadline=None)
@given(st.one_of(st.integers(1, 8), st.integers(64, 200)), st.integers(1, 4), st.integers(1, 900), st.data())
def test_packs_of_spread_chunks_unpack_in_order(chunk: int, tasks: int, n: int, data: st.DataObject) -> None:
    """An input spread over parse tasks in chunks of consecutive rows (task ``t`` gets
    chunks ``t``, ``t + tasks``, ...): each task's pack spans the others', in long runs of
    consecutive rows; unpacked, the events come out in order with their values (the runs
    sliced, or every row gathered where they are short)."""
    import pyarrow as pa

    from petricep.spark.shuffle import Unpacked

    evs = [Event("AB"[i % 2], i // 3, i, i, {"x": data.draw(values), "s": f"s{i}"}) for i in range(n)]
    out = Rows(LAYOUT)
    for t in range(tasks):
        mine = [e for e in evs if (e.pos // chunk) % tasks == t]
        if mine:
            out.add_packs(EVENT, 0, ["a"] * len(mine), [e.pos for e in mine], as_columns(mine))
    batch = out.batch()
    order = sorted(range(batch.num_rows), key=lambda r: batch.column("lid")[r].as_py())
    rows = batch.take(pa.array(order, type=pa.int64())).drop_columns(["k"])
    unpacked = Unpacked(LAYOUT, data.draw(st.sampled_from([1, 100, 65_536])))
    got = [*unpacked.feed(rows, 0, rows.num_rows), *unpacked.flush()]
    read = []
    for p in got:
        read += rows_of(columns(p, 0, p.num_rows, p.column("lid").to_pylist(), LAYOUT, 0, False))
    names = LAYOUT.names_of(0)
    assert names is not None
    assert read == expected(evs, names)


def test_a_pack_is_a_compressed_stream_with_the_type_as_codes() -> None:
    """A pack's bytes are an LZ4-compressed IPC stream (what lets petricep's session turn
    Spark's own shuffle compression off) whose type column is dictionary-encoded, and
    they read back to the batch's rows."""
    import pyarrow as pa

    from petricep.spark.shuffle import pack_bytes, typed_batch

    evs = [Event("AB"[i % 3 // 2], i, i, i, {"x": float(i % 7), "s": "s"}) for i in range(3000)]
    batch = typed_batch(as_columns(evs), [e.pos for e in evs], LAYOUT)
    assert batch is not None
    data = pack_bytes(batch)
    back = pa.ipc.open_stream(data).read_next_batch()
    assert back.equals(batch)
    assert back.schema.field("t").type == pa.dictionary(pa.int32(), pa.string())
    assert back.column("t").to_pylist() == [e.type for e in evs]
    if pa.Codec.is_available("lz4"):
        plain = pa.BufferOutputStream()
        with pa.ipc.new_stream(plain, batch.schema) as writer:
            writer.write_batch(batch)
        assert len(data) * 3 < plain.getvalue().size
