"""The distributed algorithm without Spark: key partitions advanced through the stream
clock give exactly the embedded engine's matches (pure Python, runs in the default suite).

* every hand case of tests/features, on 3 partitions;
* random nets — producers whose RETURN carries the key feeding consumers, end negations,
  count windows, every strategy and tie rule, patterns with and without ``[k]`` — over
  random streams with several keys and many equal timestamps.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import tests.features
from petricep.errors import EventOrderError, PetricepError
from petricep.events import Event, EventColumns, TypeColumn
from petricep.io import InputSpec
from petricep.kernel.engine import TICK
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.output.jsonl import match_json
from petricep.output.times import input_times
from petricep.runtime.engine import Engine
from petricep.spark.partition import END, OrderViolation, StreamClock, run_partitioned, runs_of, with_ticks
from petricep.spark.records import MATCH_SCHEMA
from tests.budget import examples
from tests.features import scenario
from tests.spark.engines import run_partitioned as partitioned_matcher
from tests.strategies import _always_bound, pattern_text, patterns

EXAMPLES = examples(300, "PETRICEP_EXAMPLES")
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


# ----------------------------------------------------------------------------- hand cases


def _hand_cases() -> list[Any]:
    cases = []
    for info in pkgutil.iter_modules(tests.features.__path__):
        if not info.name.startswith("test_"):
            continue
        mod = importlib.import_module(f"tests.features.{info.name}")
        for name, fn in sorted(vars(mod).items()):
            if not name.startswith("test_") or not callable(fn) or getattr(fn, "is_hypothesis_test", False):
                continue
            marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
            if not marks:
                cases.append(pytest.param(fn, {}, id=f"{info.name}::{name}"))
                continue
            (mark,) = marks
            names = (
                [n.strip() for n in mark.args[0].split(",")]
                if isinstance(mark.args[0], str)
                else list(mark.args[0])
            )
            for i, values in enumerate(mark.args[1]):
                values = getattr(values, "values", values)
                if len(names) == 1:
                    values = (values,)
                cases.append(pytest.param(fn, dict(zip(names, values)), id=f"{info.name}::{name}[{i}]"))
    return cases


@pytest.mark.parametrize("fn,kwargs", _hand_cases())
def test_hand_cases_on_key_partitions(
    fn: Callable[..., None], kwargs: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scenario, "CURRENT", partitioned_matcher)
    fn(**kwargs)


# ----------------------------------------------------------------------------- random nets


def fresh(events: list[Event]) -> list[Event]:
    return [Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in events]


@st.composite
def keyed_streams(
    draw: Any, types: tuple[str, ...] = ("A", "B", "C", "D"), max_size: int = 16
) -> list[Event]:
    """Like tests.strategies.streams, with up to 4 keys and 18 events."""
    rows = draw(
        st.lists(
            st.tuples(
                st.sampled_from(types), st.sampled_from((0, 0, 1, 2)), st.integers(0, 5), st.integers(0, 3)
            ),
            min_size=1,
            max_size=max_size,
        )
    )
    events, ts = [], 0
    for pos, (etype, step, x, k) in enumerate(rows):
        ts += step if pos else 0
        events.append(Event(etype, ts, pos, pos, {"x": x, "k": k}))
    return events


def keyed_return(p: A.Pattern) -> A.Pattern:
    """RETURN T(k = v.k, ...) so that composite events carry the producer's key."""
    if p.returns is None:
        return p
    always = _always_bound(p.structure)
    plain = [r.var for r in A.events_of(p.structure) if not r.negated and not r.kleene and r.var in always]
    if not plain:
        return A.Pattern(p.name, p.structure, p.conditions, p.partition, p.strategy, p.window, None)
    fields = (A.ReturnField("k", A.Attr(plain[0], "k")), *p.returns.fields)
    return A.Pattern(
        p.name, p.structure, p.conditions, p.partition, p.strategy, p.window, A.Return(p.returns.type, fields)
    )


@st.composite
def nets(draw: Any) -> list[A.Pattern]:
    p = keyed_return(draw(patterns(name="p", partition=True, returns=True)))
    pats = [p]
    if p.returns is not None and draw(st.booleans()):
        out = p.returns.type
        q = draw(patterns(name="q", types=("A", "B", out), partition=draw(st.booleans()), returns=False))
        fields = {f.name for f in p.returns.fields} | {"ts", "id"}
        readers = {r.var for r in A.events_of(q.structure) if r.type == out}
        reads_ok = all(
            not (isinstance(e, (A.Attr, A.Agg)) and e.var in readers and e.field and e.field not in fields)
            for c in q.conditions
            for e in A.walk_expr(c)
        )
        if reads_ok and readers:
            pats.append(q)
    if draw(st.booleans()):
        pats.append(draw(patterns(name="r", partition=draw(st.booleans()), returns=False)))
    return pats


def _tie(draw: Any, pats: list[A.Pattern]) -> str:
    stam = all(p.strategy == "skip-till-any-match" for p in pats)
    return draw(st.sampled_from(["arrival", "strict"] + (["either"] if stam else [])))  # type: ignore[no-any-return]


def random_case(data: st.DataObject, max_size: int = 16) -> tuple[list[A.Pattern], Any, str, list[Event]] | None:
    """A random net (:func:`nets`) with a tie rule its strategies allow and a keyed stream;
    None where the patterns do not build (a drawn set the checks reject)."""
    pats = data.draw(nets())
    try:
        net = build_net(pats)
    except PetricepError:
        return None
    return pats, net, _tie(data.draw, pats), data.draw(keyed_streams(max_size=max_size))


def check(pats: list[A.Pattern], events: list[Event], tie: str, partitions: int) -> None:
    for p in pats:
        note(pattern_text(p))
    note(f"tie={tie} partitions={partitions}")
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    try:
        net = build_net(pats)
    except PetricepError:
        return
    want = sorted(match_json(m) for m in Engine(net, tie=tie).run(fresh(events)))
    got = sorted(match_json(m) for m, _ in run_partitioned(net, fresh(events), tie, partitions))
    assert got == want


@SETTINGS
@given(st.data())
def test_key_partitions_equal_the_whole_stream(data: st.DataObject) -> None:
    pats = data.draw(nets())
    check(pats, data.draw(keyed_streams()), _tie(data.draw, pats), data.draw(st.integers(1, 4)))


@SETTINGS
@given(st.data())
def test_end_negation_producers_feeding_consumers(data: st.DataObject) -> None:
    """The case the stream clock is for: a match waiting on an end negation returns a
    composite event that another pattern reads; its ts and pos are those of the event
    (of any key) that closed the window."""
    window = data.draw(
        st.sampled_from(
            [
                A.Window(A.WIN_TIME, data.draw(st.integers(0, 4))),
                A.Window(A.WIN_COUNT, data.draw(st.integers(1, 6))),
            ]
        )
    )
    first = data.draw(st.sampled_from(["A", "B"]))
    p = A.Pattern(
        "p",
        A.Seq((A.EventRef(first, "a"), A.EventRef("C", "c", negated=True))),
        (A.Compare(">", A.Attr("c", "x"), A.Num(data.draw(st.integers(0, 5)))),),
        ("k",),
        A.Strategy.ANY,
        window,
        A.Return("T", (A.ReturnField("k", A.Attr("a", "k")), A.ReturnField("x", A.Attr("a", "x")))),
    )
    second = data.draw(st.sampled_from(["A", "B", "D"]))
    order = data.draw(st.booleans())
    kids: tuple[A.EventRef, ...] = (
        (A.EventRef("T", "t"), A.EventRef(second, "b"))
        if order
        else (A.EventRef(second, "b"), A.EventRef("T", "t"))
    )
    if data.draw(st.booleans()):  # the reader waits on an end negation too: composite events open windows
        kids = (*kids, A.EventRef("D", "d", negated=True))
    q = A.Pattern(
        "q",
        A.Seq(kids),
        (),
        ("k",),
        A.Strategy.ANY,
        data.draw(st.sampled_from([A.Window(A.WIN_TIME, 3), A.Window(A.WIN_COUNT, 5), None])),
        None,
    )
    tie = data.draw(st.sampled_from(["arrival", "strict", "either"]))
    events = data.draw(keyed_streams(max_size=18))
    partitions = data.draw(st.integers(1, 4))
    check([p, q], events, tie, partitions)
    same_pairs([p, q], events, tie, partitions)  # and on the kernel, where it covers the net


# ----------------------------------------------------------------------------- the clock


def test_ticks_join_numpy_columns_as_numpy() -> None:
    """Tick rows go into numpy columns as numpy (the kernel reads them at C speed): their
    time and position are the tick's, id and attributes repeat the row before (never read)."""
    cols = EventColumns(
        TypeColumn(np.array([0, 1, 0], dtype=np.int32), ("a", "b")),
        np.array([1.0, 2.0, 3.0]),
        np.array([0, 2, 4]),
        np.array([10, 11, 12]),
        {"x": np.array([5, 6, 7]), "s": ["p", None, "q"]},
    )
    out = with_ticks(cols, [(0, 0.5, -1), (2, 2.5, 3)])
    assert isinstance(out.types, TypeColumn) and out.types.tolist() == [TICK, "a", "b", TICK, "a"]
    assert isinstance(out.ts, np.ndarray) and out.ts.tolist() == [0.5, 1.0, 2.0, 2.5, 3.0]
    assert isinstance(out.pos, np.ndarray) and out.pos.tolist() == [-1, 0, 2, 3, 4]
    assert out.ids.tolist() == [10, 10, 11, 11, 12]
    assert out.attrs["x"].tolist() == [5, 5, 6, 6, 7]
    assert out.attrs["s"] == [None, "p", None, None, "q"]


def test_ticks_a_numpy_column_cannot_hold_exactly_make_it_a_list() -> None:
    """An int time column and a float tick (or a type column of names): Python values, as
    the events and ticks hold them."""
    cols = EventColumns(["a", "a"], np.array([1, 3]), [0, 2], [7, 8], {})
    out = with_ticks(cols, [(1, 2.5, 1)])
    assert out.types == ["a", TICK, "a"]
    assert out.ts == [1, 2.5, 3] and type(out.ts[0]) is int and type(out.ts[1]) is float
    assert out.pos == [0, 1, 2] and out.ids == [7, None, 8]
    big = with_ticks(EventColumns(["a"], np.array([1], dtype=np.int64), [0], [7], {}), [(0, 2**70, -1)])
    assert big.ts == [2**70, 1]


def test_stream_clock_points() -> None:
    ts = [0, 0, 1, 1, 1, 4, 7, 7]
    clock = StreamClock.from_runs(runs_of((t, i) for i, t in enumerate(ts)))
    assert clock.ts == [0, 1, 4, 7]
    assert clock.first == [0, 2, 5, 6]
    assert clock.after_time(0) == (1, 2)
    assert clock.after_time(1.5) == (4, 5)
    assert clock.after_time(7) is None
    assert clock.at_or_after(3) == (1, 3)
    assert clock.at_or_after(7) == (7, 7)
    assert clock.at_or_after(8) is None
    assert clock.last == (7, 7)
    assert clock.end() == 8
    assert clock.events == 8


def test_stream_clock_with_missing_positions() -> None:
    # positions 2 and 3 are rejected rows: they exist in no event
    clock = StreamClock.from_runs([(0, 0, 1), (5, 4, 4), (5, 5, 6)])
    assert clock.at_or_after(2) == (5, 4)
    assert clock.after_time(0) == (5, 4)
    assert clock.events == 5


def test_stream_clock_reports_the_first_timestamp_going_back() -> None:
    with pytest.raises(EventOrderError, match=r"timestamp 3 is before the previous event's 5"):
        StreamClock.from_runs([(1, 0, 1), (5, 2, 2), (3, 3, 4), (2, 5, 5)])


def test_an_order_violation_names_date_times_as_the_input_wrote_them(tmp_path: Any) -> None:
    iso = tmp_path / "iso.csv"
    iso.write_text("type,ts\nA,2000-02-01\nB,2000-01-01\n")
    times = input_times(InputSpec(str(iso), type_field="type", time_field="ts"))
    assert times is not None
    assert OrderViolation(1, 946684800, 949363200).message(times) == (
        "timestamp 2000-01-01 is before the previous event's 2000-02-01 (input must be in time order)"
    )
    assert OrderViolation(1, 3, 5).message() == "timestamp 3 is before the previous event's 5 (input must be in time order)"
    numbers = tmp_path / "n.csv"
    numbers.write_text("type,ts\nA,5\nB,3\n")
    assert input_times(InputSpec(str(numbers), type_field="type", time_field="ts")) is None
    of_day = InputSpec(str(iso), type_field="type", time_field="ts", time_format="%H:%M")
    assert input_times(of_day) is None  # (times of day stay seconds, as in the tables)


def test_emission_points() -> None:
    net = build_net(
        [
            A.Pattern(
                "p",
                A.Seq((A.EventRef("A", "a"), A.EventRef("C", "c", negated=True))),
                (),
                ("k",),
                window=A.Window(A.WIN_TIME, 2),
            )
        ]
    )
    events = [
        Event(t, ts, i, i, {"k": k})
        for i, (t, ts, k) in enumerate([("A", 0, 1), ("B", 1, 2), ("B", 3, 2), ("B", 4, 2)])
    ]
    got = [(json.loads(match_json(m))["ids"], at) for m, at in run_partitioned(net, events, partitions=2)]
    assert got == [({"a": 0}, 2)]  # closed by key 2's event at ts 3 > 0 + 2, position 2
    tail = [Event("A", 0, 0, 0, {"k": 1})]
    assert [at for _, at in run_partitioned(net, tail)] == [END]


def _pairs(
    net: Any, events: list[Event], tie: str, partitions: int, kernel: bool, batch: int | None = None
) -> list[tuple[str, int]]:
    found = run_partitioned(net, fresh(events), tie, partitions, kernel=kernel, batch=batch)
    return [(match_json(m), at) for m, at in found]


def same_pairs(pats: list[A.Pattern], events: list[Event], tie: str, partitions: int, batch: int = 1) -> None:
    """The Python engine's tasks' (match, position) pairs, pushed ``batch`` events at a time
    as columns (the firing stage), are its pairs an event at a time; and where the kernel
    covers the net, so are the kernel's, both ways."""
    from petricep import kernel

    for p in pats:
        note(pattern_text(p))
    note(f"tie={tie} partitions={partitions}")
    try:
        net = build_net(pats)
    except PetricepError:
        return
    expected = _pairs(net, events, tie, partitions, False)
    # the Python engine behind a batch's tick rows, as the kernel takes them: what it gives an event at a time
    assert _pairs(net, events, tie, partitions, False, batch) == expected
    if kernel.supports(net, tie)[0]:
        assert _pairs(net, events, tie, partitions, True) == expected
        assert _pairs(net, events, tie, partitions, True, batch) == expected
        found = _task_rows(net, events, tie, partitions, batch, found=True)
        assert found == _task_rows(net, events, tie, partitions, batch, found=False)
        end = StreamClock.from_events(events).end()  # (a row's emission point of the stream's end)
        assert [(json.loads(r["json"]), r["emitted_at"]) for r in found] == [
            (json.loads(m), end if at == END else at) for m, at in expected
        ]


def _task_rows(
    net: Any, events: list[Event], tie: str, partitions: int, batch: int, found: bool
) -> list[dict[str, Any]]:
    """The match rows the firing tasks write (:class:`MatchRows`), in the order of
    :func:`run_partitioned`'s pairs: a batch's kernel matches as record batches made into
    rows a column at a time (``found``), or its (match, position) pairs one by one."""
    import pyarrow as pa

    from petricep.spark.partition import kernel_fields, key_runner, task_of
    from petricep.spark.plan import Router, make_plan
    from petricep.spark.records import MatchRows
    from petricep.spark.shuffle import Layout, handed_over

    plan = make_plan(net)
    clock = StreamClock.from_events(events)
    layout = Layout.of([kernel_fields(net, grp, tie) for grp in plan.groups])
    tasks: dict[tuple[int, int], list[Event]] = {}
    for e in sorted(fresh(events), key=lambda x: x.pos):
        for g, key in Router(plan).route(e):
            tasks.setdefault((task_of(g, key, partitions), g), []).append(e)
    rows: list[dict[str, Any]] = []
    for (task, g), evs in sorted(tasks.items()):
        out = MatchRows(net, task, clock.end())
        runner = key_runner(net, plan.groups[g], clock, tie)
        for i in range(0, len(evs), batch):
            cols = handed_over(evs[i : i + batch], g, layout)
            if found:  # (positions as the Spark task has them: an array)
                pos = np.asarray(cols.pos, dtype=np.int64)
                cols = EventColumns(cols.types, cols.ts, pos, cols.ids, cols.attrs)
            out.add(runner.push_columns_found(cols) if found else runner.push_columns(cols))
        out.add(runner.finish())
        rows += pa.Table.from_batches(out.take(), schema=MATCH_SCHEMA).to_pylist()
    return rows


@SETTINGS
@given(st.data())
def test_key_partitions_on_the_kernel_give_the_engines_pairs(data: st.DataObject) -> None:
    """The Spark firing stage on the compiled kernel (KeyRunner over the kernel): every task's
    (match, emission position) pairs, in order, are the Python engine's -- with ticks (other
    keys' window-closing points) interleaved and batches cut anywhere."""
    from petricep import kernel

    if not kernel.available():
        pytest.skip("the compiled kernel is not built")
    pats = [
        data.draw(patterns(name=f"p{i}", kleene=False, returns=False, partition=True, negation=data.draw(st.booleans())))
        for i in range(data.draw(st.integers(1, 3)))
    ]
    tie = _tie(data.draw, pats)
    events = data.draw(keyed_streams())
    same_pairs(pats, events, tie, data.draw(st.integers(1, 3)), data.draw(st.sampled_from([1, 2, 5, 64])))


@SETTINGS
@given(st.data())
def test_composite_nets_on_the_kernel_give_the_engines_pairs(data: st.DataObject) -> None:
    """Producers whose RETURN carries the key, consumers of their composite events (keyed or
    not), end negations closed by other keys' events or by the end of the stream: the
    kernel's pairs are the Python engine's."""
    from petricep import kernel

    if not kernel.available():
        pytest.skip("the compiled kernel is not built")
    pats = data.draw(nets())
    tie = _tie(data.draw, pats)
    events = data.draw(keyed_streams())
    same_pairs(pats, events, tie, data.draw(st.integers(1, 3)), data.draw(st.sampled_from([1, 2, 5, 64])))


def test_emission_points_on_the_kernel() -> None:
    net = build_net(
        [A.Pattern("p", A.Seq((A.EventRef("A", "a"), A.EventRef("C", "c", negated=True))), (), ("k",),
                   window=A.Window(A.WIN_TIME, 2))]
    )  # fmt: skip
    events = [
        Event(t, ts, i, i, {"k": k})
        for i, (t, ts, k) in enumerate([("A", 0, 1), ("B", 1, 2), ("B", 3, 2), ("B", 4, 2)])
    ]
    got = [(json.loads(m)["ids"], at) for m, at in _pairs(net, events, "arrival", 2, True)]
    assert got == [({"a": 0}, 2)]  # closed by key 2's event (a tick for key 1's task) at position 2
    assert [at for _, at in _pairs(net, [Event("A", 0, 0, 0, {"k": 1})], "arrival", 1, True)] == [END]


@pytest.mark.parametrize("batch", [1, 2, 5])
@pytest.mark.parametrize("stamp", [int, float])
def test_window_points_at_a_window_boundary_on_the_kernel(batch: int, stamp: type) -> None:
    """A window ends exactly at another key's timestamp (0 + 2 = 2): its point is the first
    event after it (position 2, not 1), for each of two windows; the kernel runner's batch
    of ticks finds the points the engine's runner finds event by event."""
    from petricep import kernel

    if not kernel.available():
        pytest.skip("the compiled kernel is not built")
    pats = [
        A.Pattern(name, A.Seq((A.EventRef("A", "a"), A.EventRef("C", "c", negated=True))), (), ("k",),
                  window=A.Window(A.WIN_TIME, w))
        for name, w in (("p", 2), ("q", 3))
    ]  # fmt: skip
    net = build_net(pats)
    rows = [("A", 0, 1), ("B", 2, 2), ("B", 3, 2), ("B", 3, 2), ("B", 4, 2)]
    events = [Event(t, stamp(ts), i, i, {"k": k}) for i, (t, ts, k) in enumerate(rows)]
    want = [(json.loads(m)["pattern"], at) for m, at in _pairs(net, events, "arrival", 2, False)]
    assert want == [("p", 2), ("q", 4)]
    assert [(json.loads(m)["pattern"], at) for m, at in _pairs(net, events, "arrival", 2, True, batch)] == want


def test_composite_events_at_ticks_open_windows_on_the_kernel() -> None:
    """A producer's match closed by another key's event (a tick) returns a composite event
    there; a reader waiting on an end negation after it needs the point where its window
    closes scheduled from the tick, on the kernel runner as on the engine's."""
    from petricep import kernel

    if not kernel.available():
        pytest.skip("the compiled kernel is not built")
    ret = A.Return("T", (A.ReturnField("k", A.Attr("a", "k")), A.ReturnField("x", A.Attr("a", "x"))))
    p = A.Pattern(
        "p", A.Seq((A.EventRef("A", "a"), A.EventRef("C", "c", negated=True))),
        (A.Compare(">", A.Attr("c", "x"), A.Num(2)),), ("k",), A.Strategy.ANY, A.Window(A.WIN_TIME, 2), ret,
    )  # fmt: skip
    q = A.Pattern(
        "q", A.Seq((A.EventRef("T", "t"), A.EventRef("B", "b"), A.EventRef("D", "d", negated=True))),
        (), ("k",), A.Strategy.ANY, A.Window(A.WIN_TIME, 3),
    )  # fmt: skip
    net = build_net([p, q])
    assert kernel.supports(net) == (True, "covered")
    compared = 0
    for seed in range(40):
        rnd = random.Random(seed)
        ts, events = 0, []
        for i in range(18):
            ts += rnd.choice((0, 0, 1, 2))
            events.append(Event(rnd.choice("ABCD"), ts, i, i, {"x": rnd.randint(0, 5), "k": rnd.randint(0, 3)}))
        for partitions in (1, 2, 3):
            pairs = _pairs(net, events, "arrival", partitions, False)
            assert _pairs(net, events, "arrival", partitions, True) == pairs
            assert _pairs(net, events, "arrival", partitions, True, batch=1 + seed % 7) == pairs
            compared += any(json.loads(m)["pattern"] == "q" and at != END for m, at in pairs)
    assert compared >= 3  # q's matches closed by a point scheduled from a tick (seed 28 among them)


def _as_pairs(found: list[Any], net: Any) -> list[tuple[Any, int]]:
    """(match, position) pairs of what a runner found (its record batches' matches too)."""
    import pyarrow as pa

    from petricep.output.table import batch_matches

    out: list[tuple[Any, int]] = []
    for item in found:
        if isinstance(item, pa.RecordBatch):
            out += zip(batch_matches(item, net), item.column("emitted_at").to_pylist())
        else:
            out.append(item)
    return out


@pytest.mark.parametrize("batch", [None, 1, 4])
@pytest.mark.parametrize("found", [False, True])
def test_an_error_keeps_the_pairs_found_before_it(batch: int | None, found: bool) -> None:
    """A condition failing on an event inside a batch: the pairs of the events before it
    still come out (``err.pairs``), and ``err.event`` names it, on both runners."""
    from petricep import kernel
    from petricep.errors import EvaluationError
    from petricep.spark.partition import kernel_fields, key_runner
    from petricep.spark.plan import make_plan
    from petricep.spark.records import decode_columns, encode_fields

    net = build_net(
        [A.Pattern("p", A.Seq((A.EventRef("A", "a"), A.EventRef("B", "b"))),
                   (A.Compare("<", A.Attr("a", "x"), A.Attr("b", "x")),), ("k",), A.Strategy.ANY)]
    )  # fmt: skip
    rows = [("A", 1), ("B", 2), ("B", "text"), ("B", 5)]
    events = [Event(t, i, i, 10 + i, {"x": x, "k": 1}) for i, (t, x) in enumerate(rows)]
    group = make_plan(net).groups[0]
    engines = ["python", "kernel"] if kernel.available() else ["python"]
    for cls in engines:
        runner = key_runner(net, group, StreamClock.from_events(events), engine=cls)
        assert runner.kind == cls
        with pytest.raises(EvaluationError) as info:
            if batch is None:
                for e in fresh(events):
                    runner.push(e)
                runner.finish()
            else:
                fields = kernel_fields(net, group)
                assert fields == ("x", "k")
                for i in range(0, len(events), batch):
                    chunk = events[i : i + batch]
                    blobs = [encode_fields(e, fields) for e in chunk]
                    cols = decode_columns(blobs, [e.pos for e in chunk], False, fields)
                    runner.push_columns_found(cols) if found else runner.push_columns(cols)
        err = info.value
        pairs = [(m.ids, at) for m, at in _as_pairs(getattr(err, "pairs", []), net)]
        failed = getattr(err, "event", None)
        # (the Python engine's push returned the match of event 1 already: batch None)
        before = batch != 1 and not (cls == "python" and batch is None)
        assert pairs == ([({"a": 10, "b": 11}, 1)] if before else []), cls
        assert failed is not None, cls
        assert (failed.pos, failed.id) == (2, 12), cls
