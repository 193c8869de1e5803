"""A streaming key's engine across micro-batches (:mod:`petricep.spark.keystate`): keys on
the compiled kernel, whose state is stored as the kernel's arrays between micro-batches,
give exactly the rows of keys on the Python engine, and both the embedded engine's
matches; without Spark (:mod:`tests.spark.streamsim`), so on random nets and streams."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import ConfigError
from petricep.events import Event
from petricep.kernel import available
from petricep.merge import build_net
from petricep.output.jsonl import match_json
from petricep.runtime.engine import Engine
from petricep.spark import keystate
from petricep.spark.partition import engine_line, engine_report, group_choice
from petricep.spark.plan import make_plan
from petricep.spark.streaming import streaming_plan
from tests.budget import examples
from tests.spark.streamsim import FakeHandle, simulate
from tests.spark.test_partition import fresh, random_case
from tests.spark.test_spark_batch import RICH, random_stream
from tests.strategies import pattern_text

SETTINGS = settings(
    max_examples=examples(150, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
needs_kernel = pytest.mark.skipif(not available(), reason="the compiled kernel is not built")


def canonical(lines: list[str]) -> list[str]:
    return sorted(json.dumps(json.loads(x), sort_keys=True) for x in lines)


def embedded(net: object, events: list[Event], tie: str) -> list[str]:
    return canonical([match_json(m) for m in Engine(net, tie=tie).run(fresh(events))])  # type: ignore[arg-type]


@needs_kernel
@SETTINGS
@given(st.data())
def test_kernel_keys_give_the_python_keys_rows(data: st.DataObject) -> None:
    case = random_case(data)
    if case is None:
        return
    pats, net, tie, events = case
    cuts = data.draw(st.lists(st.integers(1, len(events)), max_size=4))
    delay = data.draw(st.sampled_from([0, 0, 1000, 2000]))
    for p in pats:
        note(pattern_text(p))
    note(f"tie={tie} cuts={sorted(set(cuts))} delay={delay}")
    counts: dict[str, list[int]] = {}
    python = simulate(net, events, tie, cuts, kernel=False, delay_ms=delay, counts=counts)
    kernel = simulate(net, events, tie, cuts, kernel=True, delay_ms=delay)
    assert kernel == python
    assert sum(counts["read"]) == len(events) and counts["late"] == []  # (in order: none late)
    assert canonical([row[0] for row in python]) == embedded(net, events, tie)


@needs_kernel
@pytest.mark.parametrize("tie", ["arrival", "strict"])
def test_a_rich_net_streams_on_the_kernel(tie: str) -> None:
    """Every operator the kernel covers, keyed and not, composite events, timeouts and
    LIMIT, micro-batches of ~60 events."""
    net = build_net([p.source for p in compile_text(RICH).patterns])
    plan, _ = streaming_plan(make_plan(net))
    assert keystate.kernel_groups(keystate.engine_choices(net, plan, tie)) == {0, 1, 2, 3, 4, 5}
    assert engine_line(engine_report([(g, group_choice(net, g, tie)) for g in plan.groups])) == "engine: kernel"
    events = random_stream(400, seed=21)
    cuts = list(range(60, 400, 60))
    kernel = simulate(net, events, tie, cuts, kernel=True)
    assert kernel == simulate(net, events, tie, cuts, kernel=False)
    assert canonical([row[0] for row in kernel]) == embedded(net, events, tie)
    assert len(kernel) > 100


@needs_kernel
def test_a_kernel_snapshot_is_arrow_and_restores_into_the_kernel() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 5")
    plan, _ = streaming_plan(make_plan(net))
    cache = keystate.EngineCache(net, plan, "arrival", keystate.kernel_groups(keystate.engine_choices(net, plan, "arrival")))
    engine = cache.build(0, None)
    assert engine.kind == "kernel"
    assert engine.push_all([Event("A", 0, 0, 0, {"k": 1, "x": 1})]) == []
    data = engine.snapshot()
    assert keystate.state_engine(data)[0] == "kernel"
    again = cache.build(0, data)
    assert again.kind == "kernel" and again.last_pos == 0
    assert [(m.to_dict(), at) for m, at in again.push_all([Event("B", 1, 1, 1, {"k": 1, "x": 2})])] == [
        ({"pattern": "p", "ids": {"a": 0, "b": 1}, "start": 0, "end": 1, "attrs": {}}, 1)
    ]


def test_a_python_snapshot_restores_into_the_python_engine() -> None:
    """A query restarted from a checkpoint written by the Python engine keeps its keys
    there, even where the kernel now covers the group."""
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 5")
    plan, _ = streaming_plan(make_plan(net))
    python = keystate.EngineCache(net, plan, "arrival", frozenset()).build(0, None)
    assert python.kind == "python"
    python.push_all([Event("A", 0, 0, 0, {"k": 1, "x": 1})])
    data = python.snapshot()
    assert data == python.matcher.snapshot()  # (one format: the engine's own Arrow IPC snapshot)
    assert keystate.state_engine(data)[0] == "python"
    restored = keystate.EngineCache(net, plan, "arrival", frozenset({0})).build(0, data)
    assert restored.kind == "python" and restored.last_pos == 0
    assert [m.ids for m, _ in restored.push_all([Event("B", 1, 1, 1, {"k": 1, "x": 2})])] == [{"a": 0, "b": 1}]


def test_a_python_snapshot_of_other_patterns_or_an_earlier_petricep_is_refused() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 5")
    other = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND b.x < a.x WITHIN 5")
    plan, _ = streaming_plan(make_plan(net))
    engine = keystate.EngineCache(net, plan, "arrival", frozenset()).build(0, None)
    assert engine.kind == "python"
    engine.push_all([Event("A", 0, 0, 0, {"k": 1, "x": 1})])
    data = engine.snapshot()
    cases = [
        (keystate.EngineCache(other, plan, "arrival", frozenset()), data,
         "this key's state was saved for other patterns or another tie rule: restart the query from a new checkpoint"),
        (keystate.EngineCache(net, plan, "strict", frozenset()), data,
         "this key's state was saved for other patterns or another tie rule: restart the query from a new checkpoint"),
        (keystate.EngineCache(net, plan, "arrival", frozenset()),  # (an earlier petricep's pickled state)
         b"petricep.engine/1" + bytes(16) + b"\x80\x05N.",
         "this key's state was saved by an earlier petricep (or is not a petricep snapshot): "
         "restart the query from a new checkpoint"),
        (keystate.EngineCache(net, plan, "arrival", frozenset()),  # (an earlier petricep's marked state)
         b"petricep.engine/2" + bytes(16) + data,
         "this key's state was saved by an earlier petricep (or is not a petricep snapshot): "
         "restart the query from a new checkpoint"),
    ]  # fmt: skip
    for cache, stored, message in cases:
        with pytest.raises(ConfigError) as err:
            cache.build(0, stored)
        assert str(err.value) == message


@needs_kernel
def test_a_kernel_snapshot_where_the_kernel_is_not_built(monkeypatch: pytest.MonkeyPatch) -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 5")
    plan, _ = streaming_plan(make_plan(net))
    cache = keystate.EngineCache(net, plan, "arrival", frozenset({0}))
    data = cache.build(0, None).snapshot()
    monkeypatch.setattr(keystate, "kernel_available", lambda: False)
    with pytest.raises(ConfigError) as err:
        cache.build(0, data)
    assert str(err.value) == (
        "this key's state was saved by the compiled kernel, which is not built here: install petricep "
        "with a C compiler on every executor (or restart the query from a new checkpoint)"
    )


@needs_kernel
def test_a_kernel_snapshot_of_other_patterns_or_tie_rule_is_refused() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 5")
    other = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND b.x < a.x WITHIN 5")
    plan, _ = streaming_plan(make_plan(net))
    runner = keystate.EngineCache(net, plan, "arrival", frozenset({0})).build(0, None)
    runner.push_all([Event("A", 0, 0, 0, {"k": 1, "x": 1})])
    data = runner.snapshot()
    for cache in (keystate.EngineCache(other, plan, "arrival", frozenset({0})),
                  keystate.EngineCache(net, plan, "strict", frozenset({0}))):  # fmt: skip
        with pytest.raises(ConfigError) as err:
            cache.build(0, data)
        assert str(err.value) == keystate.OTHER_NET


def test_the_state_store_loads_no_pickle() -> None:
    """One state format, each engine's Arrow IPC snapshot: nothing in petricep/spark
    pickles or unpickles state (an unpickled checkpoint runs code from whoever wrote it)."""
    import pathlib

    import petricep.spark

    root = pathlib.Path(petricep.spark.__file__).parent
    for name in ("keystate.py", "keygroups.py", "streaming.py", "partition.py"):
        text = (root / name).read_text()
        assert "import pickle" not in text and "pickle." not in text, name


@pytest.mark.parametrize("kernel", [pytest.param(True, marks=needs_kernel), False])
def test_a_bucket_stores_only_the_keys_that_hold_something(kernel: bool) -> None:
    """2,000 keys, each with a string of its own, whose windows close, then keys old and
    new again (issue 39): each bucket's stored engine holds only what is live (it held
    every key and string ever seen: ~20-90 KB a bucket here), and the stream restarted on
    its store between micro-batches gives the uninterrupted stream's rows, which are the
    embedded engine's matches."""
    from tests.kernel.test_snapshot import KEYED, keyed_stream

    net = compile_text(KEYED)
    keys = 2_000
    events = keyed_stream(keys)
    cuts = [keys, 2 * keys, 2 * keys + 1, 2 * keys + 6]
    handle = FakeHandle()
    restarted = simulate(net, events, "arrival", cuts, kernel=kernel, restarts=cuts[1:3], handle=handle)
    assert restarted == simulate(net, events, "arrival", cuts, kernel=kernel)
    assert canonical([row[0] for row in restarted]) == embedded(net, events, "arrival")
    assert len(restarted) == 2
    stored = [len(v[4]) for (_, name), v in handle.store.items() if name == "state" and v[4] is not None]
    assert len(stored) == 3 and max(stored) <= 10_000


def test_the_state_bytes_bench_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """bench/spark_state_bytes.py on a small stream (its figures are sizes: exact)."""
    from bench.spark_state_bytes import main

    assert main(["--events", "400", "--file-rows", "200", "--keys", "10", "--engines", "python", "--buckets", "2"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("python, 10 keys: ") and "engine snapshots (2.0 a micro-batch)" in line
