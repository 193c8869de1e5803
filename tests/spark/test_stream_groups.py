"""Key groups (issue 39, item 1): a streaming query keeps one engine per (group, bucket of
keys), not per key (:mod:`petricep.spark.keygroups`). Without Spark
(:mod:`tests.spark.streamsim`): the stream's matches are the embedded engine's (``run
--slack W`` where files go back in time), whatever the number of buckets, over 100,000
keys, across restarts; a micro-batch's state calls grow with the buckets, not the keys;
the checkpoint keeps the number of buckets and refuses one written per key."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import ConfigError
from petricep.events import Event, EventColumns, TypeColumn
from petricep.kernel import available
from petricep.merge import build_net
from petricep.output.jsonl import match_json
from petricep.spark.evpack import Pieces, blob_piece, event_piece
from petricep.spark.keygroups import (
    LAYOUT_FILE,
    BucketState,
    bucket_labels,
    bucket_of,
    checkpoint_buckets,
    checkpoint_layout,
    spark_partition,
)
from petricep.spark.keystate import EngineCache
from petricep.spark.partition import run_partitioned
from tests.budget import examples
from tests.spark.streamsim import simulate
from tests.spark.test_keystate import canonical
from tests.spark.test_partition import random_case
from tests.spark.test_stream_reorder import back_in_time, slack_run
from tests.strategies import pattern_text

SETTINGS = settings(
    max_examples=examples(150, "PETRICEP_EXAMPLES") // 3,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
ENGINES = [False, pytest.param(True, marks=pytest.mark.skipif(not available(), reason="the kernel is not built"))]
PAIR = "PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 5"
QUIET = "PATTERN q: SEQ(A a, !(C c)) WHERE [k] WITHIN 3"


def test_a_key_has_one_bucket_everywhere() -> None:
    """crc32 of the key's text: the same in every process (``hash`` of a str is not)."""
    assert [bucket_of(k, 8) for k in ("(4,)", "(5,)", "('card-1',)", "")] == [3, 4, 3, 0]
    assert {bucket_of(str(i), 1) for i in range(50)} == {0}
    assert len({bucket_of(f"({i},)", 8) for i in range(1000)}) == 8


def test_many_keys_in_few_buckets(monkeypatch: pytest.MonkeyPatch) -> None:
    """100,000 keys of two or three events each, over 8 buckets, in 5 micro-batches whose
    files go back in time within the watermark, restarting after the second: the matches
    are ``run --slack``'s (each key's alone), and the batch run's over the same events."""
    rng = random.Random(7)
    rows = []
    for k in range(100_000):
        t = rng.randrange(0, 2000)
        rows.append(("A", t, k, rng.randrange(10)))
        rows.append(("B", t + rng.randrange(0, 8), k, rng.randrange(10)))
        if k % 3 == 0:
            rows.append(("C", t + 1, k, 0))
    rows.sort(key=lambda r: r[1])
    # arrival: each event moved back by up to 2 time units (the watermark)
    arrival = sorted(range(len(rows)), key=lambda i: rows[i][1] + 2 * (i % 2) + rng.random())
    events = [Event(t, ts + 2, n, n, {"k": k, "x": x}) for n, (t, ts, k, x) in enumerate(rows[i] for i in arrival)]
    net = build_net([p.source for p in compile_text(PAIR + QUIET).patterns])
    want = slack_run(net, events, "arrival", 2)
    cuts = [len(events) * i // 5 for i in range(1, 5)]
    counts: dict[str, list[int]] = {}
    got = simulate(net, events, "arrival", cuts, kernel=available(), delay_ms=2000, counts=counts,
                   restarts=[cuts[1]], buckets=8)  # fmt: skip
    assert counts["late"] == [] and sum(counts["read"]) == len(events)
    assert canonical([r[0] for r in got]) == want
    assert len(want) > 50_000
    # the batch run's algorithm (key partitions, no Spark) over the stream in time order
    ordered = [Event(e.type, e.ts, n, e.id, e.attrs) for n, e in enumerate(sorted(events, key=lambda e: (e.ts, e.pos)))]
    batch = run_partitioned(net, ordered, "arrival", 4, kernel=available())
    assert canonical([match_json(m) for m, _ in batch]) == want


@pytest.mark.parametrize("kernel", ENGINES)
@pytest.mark.parametrize("buckets", [1, 2, 16])
def test_the_issue_stream_in_any_number_of_buckets(kernel: bool, buckets: int) -> None:
    """The issue's stream (files back in time) and a restart at each file, over 40 keys."""
    rng = random.Random(buckets)
    events = []
    for n in range(600):
        back = rng.randrange(0, 4) if n % 7 == 3 else 0
        events.append(Event(rng.choice("ABC"), 4 + n // 3 - back, n, n, {"k": rng.randrange(40), "x": rng.randrange(5)}))
    net = build_net([p.source for p in compile_text(PAIR + QUIET).patterns])
    cuts = list(range(100, 600, 100))
    counts: dict[str, list[int]] = {}
    got = simulate(net, events, "arrival", cuts, kernel=kernel, delay_ms=4000, counts=counts, restarts=cuts, buckets=buckets)
    assert counts["late"] == [] and sum(counts["read"]) == len(events)
    assert canonical([r[0] for r in got]) == slack_run(net, events, "arrival", 4)


@SETTINGS
@given(st.data())
@pytest.mark.parametrize("kernel", ENGINES)
def test_random_streams_in_few_buckets_equal_the_slack_run(kernel: bool, data: st.DataObject) -> None:
    """Random nets, streams back in time within the watermark, restarts at some cuts, and
    every key in one of 1 or 2 buckets (the keys of a bucket share its engine)."""
    case = random_case(data)
    if case is None:
        return
    pats, net, tie, ordered = case
    slack = data.draw(st.integers(0, 3))
    events = data.draw(back_in_time(ordered, slack))
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(events)), max_size=4))))
    restarts = data.draw(st.lists(st.sampled_from([0, *cuts, len(events)]), max_size=3))
    buckets = data.draw(st.sampled_from([1, 2]))
    for p in pats:
        note(pattern_text(p))
    note(f"tie={tie} slack={slack} cuts={cuts} restarts={sorted(set(restarts))} buckets={buckets}")
    counts: dict[str, list[int]] = {}
    got = simulate(net, events, tie, cuts, kernel=kernel, delay_ms=slack * 1000, counts=counts,
                   restarts=restarts, buckets=buckets)  # fmt: skip
    assert counts["late"] == [] and sum(counts["read"]) == len(events)
    assert canonical([r[0] for r in got]) == slack_run(net, events, tie, slack)


def test_state_calls_grow_with_the_buckets_not_the_keys() -> None:
    """Three micro-batches of 1,000 events over 1,000 keys in 4 buckets, then a no-data
    one: per bucket and micro-batch one read of its state and at most one write (where its
    timer expired, the input releases its events itself: no timer handler), one timer
    deleted and one registered; the engine is restored never (the worker's live one)."""
    from tests.spark import streamsim

    calls: list[tuple[str, str]] = []
    original = streamsim.FakeHandle.__init__

    def spy(self: streamsim.FakeHandle) -> None:
        original(self)
        self.calls = calls

    rng = random.Random(3)
    events = [Event(rng.choice("AB"), n, n, n, {"k": rng.randrange(1000), "x": rng.randrange(9)}) for n in range(3000)]
    net = build_net([p.source for p in compile_text(PAIR).patterns])
    try:
        streamsim.FakeHandle.__init__ = spy  # type: ignore[method-assign]
        restored = EngineCache.build
        built: list[bytes | None] = []
        def build(self: EngineCache, g: int, stored: bytes | None) -> Any:
            built.append(stored)
            return restored(self, g, stored)

        EngineCache.build = build  # type: ignore[method-assign,assignment]
        simulate(net, events, "arrival", [1000, 2000], kernel=available(), buckets=4)
    finally:
        streamsim.FakeHandle.__init__ = original  # type: ignore[method-assign]
        EngineCache.build = restored  # type: ignore[method-assign]
    # each bucket's engine built once, restored never -- but by the end of input (StateFlush)
    assert built[:4] == [None] * 4 and len(built) == 8 and None not in built[4:]
    assert {s for s, _ in calls} == {"state", "timer"}
    assert calls.count(("state", "get")) == 4 * 4 and calls.count(("state", "update")) <= 4 * 4
    assert calls.count(("timer", "delete")) == 2 * 4  # (the micro-batches 2 and 3: the input's release)
    assert calls.count(("timer", "register")) <= 4 * 4


def test_the_checkpoint_keeps_its_buckets(tmp_path: Path) -> None:
    ck = tmp_path / "ck"
    assert checkpoint_buckets(str(ck), None, 8) == 8
    assert json.loads((ck / LAYOUT_FILE).read_text()) == {"layout": "key-groups/2", "buckets": 8}
    assert checkpoint_buckets(str(ck), None, 4) == 8  # fixed by the first run
    assert checkpoint_buckets(str(ck), 8, 4) == 8
    with pytest.raises(ConfigError, match=r"keeps its keys in 8 buckets \(fixed by its first run\), not 3"):
        checkpoint_buckets(str(ck), 3, 4)
    assert checkpoint_buckets(None, 5, 4) == 5 and checkpoint_buckets(None, None, 4) == 4
    with pytest.raises(ConfigError, match="at least 1"):
        checkpoint_buckets(str(ck), 0, 4)


def test_bucket_labels_spread_a_groups_buckets_over_the_partitions(tmp_path: Path) -> None:
    """Each bucket's ``b`` is chosen so that hash partitioning spreads a group's buckets
    evenly (the bucket numbers 0..7 went 5 and 3 to 2 partitions); the labels depend on
    (groups, buckets, partitions) only, and a checkpoint keeps the partitions."""
    assert [spark_partition(0, b, 2) for b in range(8)] == [0, 1, 0, 1, 1, 0, 0, 0]
    for groups, buckets, parts in [(1, 8, 2), (3, 8, 2), (2, 5, 3), (4, 2, 4), (2, 16, 16)]:
        labels = bucket_labels(groups, buckets, parts)
        assert labels == bucket_labels(groups, buckets, parts) and len(labels) == groups
        for g, mine in enumerate(labels):
            assert len(set(mine)) == buckets and min(mine) >= 0
            assert [spark_partition(g, b, parts) for b in mine] == [(i + g) % parts for i in range(buckets)]
    assert bucket_labels(2, 8, 1) == bucket_labels(2, 8, None) == ()
    ck = tmp_path / "ck"
    assert checkpoint_layout(str(ck), None, 8, 2) == (8, 2)
    assert json.loads((ck / LAYOUT_FILE).read_text()) == {"layout": "key-groups/2", "buckets": 8, "partitions": 2}
    assert checkpoint_layout(str(ck), None, 4, 3) == (8, 2)  # (a restart: the first run's)
    assert checkpoint_layout(None, None, 4, 3) == (4, None)


def test_a_checkpoint_written_per_key_is_refused(tmp_path: Path) -> None:
    """An earlier petricep's checkpoint: Spark's entries, no layout file."""
    ck = tmp_path / "old"
    (ck / "offsets").mkdir(parents=True)
    (ck / "state").mkdir()
    with pytest.raises(ConfigError) as err:
        checkpoint_buckets(str(ck), None, 8)
    assert str(err.value) == (
        f"{ck}: this checkpoint was written by an earlier petricep, which kept a streaming query's state "
        "per key; state is now kept per group of keys and cannot be read from it: restart the query from "
        "a new checkpoint (or finish the old query with the petricep that started it)"
    )
    assert not (ck / LAYOUT_FILE).exists()


def test_a_checkpoint_of_two_state_variables_is_refused(tmp_path: Path) -> None:
    """The layout before one value state per bucket (an engine variable and a bucket one):
    refused with one message before the query starts, the checkpoint left as it was."""
    ck = tmp_path / "old"
    (ck / "offsets").mkdir(parents=True)
    (ck / LAYOUT_FILE).write_text('{"layout": "key-groups/1", "buckets": 8}\n')
    for requested in (None, 8, 3):
        with pytest.raises(ConfigError) as err:
            checkpoint_buckets(str(ck), requested, 8)
        assert str(err.value) == (
            f"{ck}: this checkpoint was written by an earlier petricep, which kept a bucket's engine and its "
            "waiting events in two state variables (layout key-groups/1); a bucket's state is now one and "
            "cannot be read from it: restart the query from a new checkpoint (or finish the old query with "
            "the petricep that started it)"
        )
    assert (ck / LAYOUT_FILE).read_text() == '{"layout": "key-groups/1", "buckets": 8}\n'
    (ck / LAYOUT_FILE).write_text('{"layout": "key-groups/9", "buckets": 8}\n')
    with pytest.raises(ConfigError, match=r"a state layout this petricep does not know \('key-groups/9'\)"):
        checkpoint_buckets(str(ck), None, 8)


def test_a_buckets_state_round_trips_without_pickle() -> None:
    blobs = blob_piece([1001, 1001], [0, 3], [b"Vx", b"Dy"])  # (what an earlier petricep's buffer held)
    st0 = BucketState(token=5, timer=1002, buffer=Pieces([blobs]), wakeups=[3002, 7002], engine=b"snap")
    row = st0.row()
    assert row[0] == 5 and row[1] == 1002 and all(r[:4] == b"\xff\xff\xff\xff" for r in row[2:4])  # Arrow IPC
    back = BucketState.of_row((*row[:4], bytearray(b"snap")))  # (pyspark may give a bytearray)
    assert (back.token, back.timer, back.wakeups, back.stored, back.engine) == (5, 1002, [3002, 7002], True, b"snap")
    assert [p.equals(blobs) for p in back.buffer.pieces] == [True]
    cols = EventColumns(TypeColumn.constant("A", 2), np.array([1, 2]), [0, 1], [7, 8], {"k": ["x", None], "v": [1.5, 2.5]})
    typed = event_piece(cols, np.array([4, 5]), np.array([1001, 2001]))
    two = BucketState(buffer=Pieces([typed, blobs, typed.slice(1)])).row()  # two schemas: tagged, one piece each
    back = BucketState.of_row(two)
    assert two[2][:1] == b"L" and [p.num_rows for p in back.buffer.pieces] == [3, 2]
    assert [p.schema for p in back.buffer.pieces] == [typed.schema, blobs.schema]
    sink = pa.BufferOutputStream()  # an earlier petricep's buffer: encoded events, uncompressed, no metadata
    with pa.ipc.new_stream(sink, blobs.schema) as writer:
        writer.write_batch(blobs)
    earlier = BucketState.of_row((5, 1002, sink.getvalue().to_pybytes(), row[3], None))
    assert [p.equals(blobs) for p in earlier.buffer.pieces] == [True] and earlier.buffer.earliest() == 1001
    empty = BucketState.of_row(BucketState().row())
    assert (empty.buffer.pieces, empty.wakeups, empty.token, empty.engine) == ([], [], None, None)
