"""A KernelEngine's state as bytes (petricep.kernel.snapshot): a run cut at random points,
its engine replaced each time by ``loads(dumps(engine))``, gives exactly the uninterrupted
run's (match, emitting position) pairs and live partial matches; the bytes are deterministic;
what cannot be restored says why. The cut runs also take their matches out of the kernel in
slices of a few (``max_out``), which must not change them either."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.compile.net import Net
from petricep.errors import ConfigError, PetricepError, SnapshotError, StateLimitError
from petricep.events import Event
from petricep.kernel import supports
from petricep.kernel.engine import KernelEngine
from petricep.kernel.snapshot import dumps
from petricep.lang import ast as A
from petricep.merge import build_net
from tests.budget import examples
from tests.kernel.compare import ev, fresh
from tests.kernel.cuts import drive, loads
from tests.kernel.test_composite import producer_and_consumer
from tests.kernel.test_kleene_outputs import beside
from tests.strategies import pattern_text, patterns, streams

SETTINGS = settings(
    max_examples=examples(25, "PETRICEP_SNAPSHOT_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
WINDOWED = (A.WIN_TIME, A.WIN_COUNT, A.WIN_DURATION)


def same(data: st.DataObject, pats: list[A.Pattern], events: list[Event], tie: str, conflicts: tuple[Any, ...] = ()) -> None:
    """Cut and uncut runs of ``pats`` agree (random cut points, clock ticks, batch sizes, sweeps)."""
    for p in pats:
        note(pattern_text(p))
    try:
        net = build_net(pats, conflicts=conflicts)
    except PetricepError:  # a combination the compiler refuses (checked elsewhere)
        assume(False)
        raise
    ok, _ = supports(net, tie)
    assume(ok)
    n = len(events)
    plan = {
        "cuts": data.draw(st.sets(st.integers(0, n - 1), max_size=n)),
        "ticks": data.draw(st.sets(st.integers(0, n - 1), max_size=2)),
        "batch": data.draw(st.sampled_from((1, 2, 3, 64))),
        "sweep": data.draw(st.sampled_from((0, 1, 2))),
        "columns": data.draw(st.booleans()),
        "max_out": data.draw(st.sampled_from((1, 2, 5, 65_536))),
    }
    note(f"tie={tie} plan={plan}")
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    assert drive(net, events, tie, plan, True) == drive(net, events, tie, plan, False)


def _tie(data: st.DataObject, pats: list[A.Pattern]) -> str:
    """Every tie rule; either only with skip-till-any-match (the engine's rule)."""
    either = all(p.strategy == "skip-till-any-match" for p in pats)
    return data.draw(st.sampled_from(("arrival", "strict", "either") if either else ("arrival", "strict")))  # type: ignore[no-any-return]


@SETTINGS
@given(st.data())
def test_any_strategy_window_negation_and_tie(data: st.DataObject) -> None:
    """SEQ/AND/OR with guards and [k], negation at start, middle and end (matches waiting on an
    end negation across a cut), every strategy, window kind and tie rule."""
    p = data.draw(patterns(kleene=False, returns=False))
    events = data.draw(streams(max_size=16))
    same(data, [p], events, _tie(data, [p]))


@SETTINGS
@given(st.data())
def test_merged_nets(data: st.DataObject) -> None:
    strategy = data.draw(st.sampled_from(A.STRATEGIES))
    part = data.draw(st.booleans())
    pats = [
        data.draw(patterns(name=f"p{i}", kleene=False, returns=False, strategies=(strategy,), partition=part, types=("A", "B", "C")))
        for i in range(data.draw(st.integers(2, 3)))
    ]
    events = data.draw(streams(types=("A", "B", "C"), max_size=16))
    same(data, pats, events, _tie(data, pats))


@SETTINGS
@given(st.data())
def test_kleene_lists(data: st.DataObject) -> None:
    p = data.draw(patterns(kleene=True, returns=False, negation=False))
    assume(any(r.kleene for r in A.events_of(p.structure)))
    events = data.draw(streams(max_size=16))
    same(data, [p], events, data.draw(st.sampled_from(("arrival", "strict"))))


@SETTINGS
@given(st.data())
def test_timeouts_and_limits(data: st.DataObject) -> None:
    """ON TIMEOUT (deadlines pinning tokens across a cut), LIMIT with DROP OLDEST and REJECT NEW
    (quotas), maybe a second pattern reading the timeouts."""
    p = data.draw(patterns(kleene=False, returns=True, windows=WINDOWED, name="p", types=("A", "B", "C")))
    positives = [r.var for r in A.events_of(p.structure) if not r.negated]
    chosen = data.draw(st.lists(st.sampled_from(positives), max_size=2, unique=True))
    fields = tuple(A.ReturnField(f"x_{v}", A.Attr(v, "x")) for v in chosen)
    limit = None
    if data.draw(st.booleans()):
        limit = A.Limit(data.draw(st.integers(1, 3)), data.draw(st.sampled_from(("drop-oldest", "reject-new"))))
    pats = [dataclasses.replace(p, timeout=A.Return("T", fields), limit=limit)]
    if data.draw(st.booleans()):
        q = data.draw(patterns(name="q", kleene=False, returns=False, max_depth=1, types=("A", "T")))
        assume("T" in {r.type for r in A.events_of(q.structure)})
        pats.append(q)
    events = data.draw(streams(types=("A", "B", "C"), max_size=16))
    same(data, pats, events, data.draw(st.sampled_from(("arrival", "strict"))))


@SETTINGS
@given(st.data())
def test_composite_events_re_entering(data: st.DataObject) -> None:
    pats = producer_and_consumer(data)
    events = data.draw(streams(max_size=14))
    same(data, pats, events, data.draw(st.sampled_from(("arrival", "strict"))))


@SETTINGS
@given(st.data())
def test_consumption(data: st.DataObject) -> None:
    pats = []
    for i in range(data.draw(st.integers(1, 3))):
        p = data.draw(patterns(kleene=False, name=f"p{i}", max_depth=1, types=("A", "B", "C")))
        positives = [r.var for r in A.events_of(p.structure) if not r.negated]
        some = st.lists(st.sampled_from(positives), min_size=1, unique=True).map(tuple)
        pats.append(dataclasses.replace(p, consume=data.draw(st.one_of(st.none(), st.just(("*",)), some))))
    conflicts = (A.Conflict("g", tuple(p.name for p in pats)),) if len(pats) > 1 and data.draw(st.booleans()) else ()
    assume(any(p.consume for p in pats) or conflicts)
    events = data.draw(streams(types=("A", "B", "C"), max_size=14))
    same(data, pats, events, data.draw(st.sampled_from(("arrival", "strict"))), conflicts)


@SETTINGS
@given(st.data())
def test_kleene_lists_with_outputs_event_time_and_consumption(data: st.DataObject) -> None:
    """Kleene lists read by RETURN and ON TIMEOUT fields, under a LIMIT, consumed, beside a
    pattern with the same features (deadlines and quotas pin tokens holding lists), maybe with
    negations (matches waiting on an end negation hold lists across a cut)."""
    pats = beside(data, data.draw(st.integers(1, 2)), windows=WINDOWED, negation=data.draw(st.booleans()))
    if data.draw(st.booleans()):
        pats = [dataclasses.replace(p, consume=("*",)) for p in pats]
    events = data.draw(streams(types=("A", "B", "C"), max_size=16))
    same(data, pats, events, data.draw(st.sampled_from(("arrival", "strict"))))


# ------------------------------------------------------------------ hand cases

END_NEGATION = "PATTERN p: SEQ(A a, B b, !(C c)) WITHIN 5"


def test_empty_engine_round_trip() -> None:
    net = compile_text(END_NEGATION)
    data = dumps(KernelEngine(net))
    engine = loads(data, net)
    assert dumps(engine) == data
    assert engine.live_partial_matches() == 0
    assert engine.flush_pairs() == []


def test_a_match_waiting_on_an_end_negation_crosses_the_cut_and_a_tick_closes_it() -> None:
    net = compile_text(END_NEGATION)
    engine = KernelEngine(net, batch=1)
    assert engine.push_pairs(ev("A", 0, 0)) + engine.push_pairs(ev("B", 1, 1)) == []
    engine = loads(dumps(engine), net)
    assert engine.live_partial_matches() == 1
    out = engine.tick(6, 2)  # the window closes at 5: the match comes out at the tick
    assert [(m.ids, at) for m, at in out] == [({"a": 0, "b": 1}, 2)]


def test_another_net_or_tie_rule_is_refused() -> None:
    data = dumps(KernelEngine(compile_text(END_NEGATION)))
    with pytest.raises(SnapshotError) as err:
        loads(data, compile_text("PATTERN q: SEQ(A a, B b) WITHIN 5"))
    assert str(err.value) == (
        "the snapshot is of another net or tie rule (patterns p under tie 'arrival'; this engine: patterns q "
        "under tie 'arrival', or the same names with other definitions)"
    )
    with pytest.raises(SnapshotError, match="patterns p under tie 'arrival'; this engine: patterns p under tie 'strict'"):
        loads(data, compile_text(END_NEGATION), tie="strict")
    assert issubclass(SnapshotError, ConfigError)


def _busy(text: str = END_NEGATION) -> tuple[Net, bytes]:
    net = compile_text(text)
    engine = KernelEngine(net, batch=1)
    for i in range(6):
        engine.push_pairs(ev("AB"[i % 2], i, i, x=i))
    return net, dumps(engine)


def test_truncated_or_damaged_bytes_are_refused() -> None:
    net, data = _busy()
    with pytest.raises(SnapshotError, match=r"^not a kernel engine snapshot, or a truncated one \(100 bytes\)"):
        loads(data[:100], net)
    with pytest.raises(SnapshotError, match=r"truncated"):
        loads(data[: len(data) - 16], net)  # (the last 8 bytes are the end-of-stream marker)
    with pytest.raises(SnapshotError, match=r"^not a kernel engine snapshot, or a truncated one \(0 bytes\)"):
        loads(b"", net)
    damaged = bytearray(data)
    damaged[len(data) // 2] ^= 0xFF
    with pytest.raises(SnapshotError):
        loads(bytes(damaged), net)


def test_collected_events_must_be_fired_first() -> None:
    net = compile_text(END_NEGATION)
    engine = KernelEngine(net, batch=64)
    engine.push_pairs(ev("A", 0, 0))
    with pytest.raises(SnapshotError) as err:
        dumps(engine)
    assert str(err.value) == (
        "1 collected events are not fired yet: call drain_pairs() first (and keep the matches it returns) "
        "before taking a snapshot"
    )
    assert engine.drain_pairs() == []
    assert loads(dumps(engine), net).live_partial_matches() == 1


def test_limit_fail_after_a_restore_and_no_snapshot_of_a_failed_run() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 100 LIMIT 2 PARTIAL MATCHES FAIL")
    engine = KernelEngine(net, batch=1)
    engine.push_pairs(ev("A", 0, 0, k=1))
    engine.push_pairs(ev("A", 1, 1, k=1))
    engine = loads(dumps(engine), net)
    with pytest.raises(StateLimitError, match="more than 2 live partial matches for key 1 at event 2"):
        engine.push_pairs(ev("A", 2, 2, k=1))
    with pytest.raises(SnapshotError, match="^no snapshot of a run stopped by an error"):
        dumps(engine)


def test_odd_values_round_trip() -> None:
    """Text and huge ids, tuple and None keys, float and int timestamps, a NumPy id (pickled)."""
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 100")
    engine = KernelEngine(net, batch=1)
    engine.push_pairs(Event("A", 0, 0, "first", {"k": ("u", 1), "x": 1}))
    engine.push_pairs(Event("A", 1.5, 1, 2**70, {"k": ("u", 1), "x": 9}))
    engine.push_pairs(Event("A", 2, 2, np.int64(7), {"k": None, "x": 0}))
    data = dumps(engine)
    engine = loads(data, net)
    assert dumps(engine) == data
    out = engine.push_pairs(Event("B", 3, 3, 3, {"k": ("u", 1), "x": 5}))
    assert [(m.ids, m.start, m.end) for m, _ in out] == [({"a": "first", "b": 3}, 0, 3)]


def test_size_follows_the_live_partial_matches() -> None:
    """Only the live part of the arenas: after the partial matches die, the snapshot shrinks."""
    net = compile_text("PATTERN p: SEQ(A a, B b) WITHIN 10")
    engine = KernelEngine(net, batch=1000)
    for i in range(2000):
        engine.push_pairs(ev("A", 0, i))
    engine.drain_pairs()
    big = len(dumps(engine))
    engine.push_pairs(ev("C", 100, 2000))
    engine.drain_pairs()
    small = len(dumps(engine))
    assert big > 2000 * 8 and small < big / 5


KEYED = 'PATTERN p: SEQ(A a, !(C c), B b) WHERE [k] AND a.x < b.x AND a.s <= b.s AND b.s != "zz" WITHIN 50'


def keyed_stream(keys: int) -> list[Event]:
    """An A or a C of each of ``keys`` keys, each with a string of its own (their windows
    close: nothing left of them), then, far later, keys old and new again, with strings old
    and new (matches across the cuts of :func:`drive`; ``<=`` compares strings' ranks)."""
    events = [ev("A" if i % 3 else "C", i // 2, i, k=i // 2, x=1, s=f"v{i // 2}") for i in range(2 * keys)]
    t = keys + 1000
    for j, k in enumerate([0, keys - 1, keys + 5, 7, 0, keys + 5, 3]):
        events.append(ev("A", t + j, 2 * keys + 2 * j, k=k, x=j, s=f"v{j}"))
        events.append(ev("B", t + j + 1, 2 * keys + 2 * j + 1, k=k, x=9, s=("v3", "zz", "a")[j % 3]))
    return events


@pytest.mark.parametrize("keys", [10, 10_000])
def test_a_key_holding_nothing_costs_nothing(keys: int) -> None:
    """Keys and strings whose windows closed leave no trace (issue 39: the key and string
    dictionaries kept every one ever seen: 97 KB at 10,000 keys, none of them live); the run
    restored from there, old keys and strings coming back and new ones, gives the
    uninterrupted run's pairs in order."""
    net = compile_text(KEYED)
    events = keyed_stream(keys)
    engine = KernelEngine(net, batch=64)
    for e in fresh(events[: 2 * keys + 1]):
        engine.push_pairs(e)
    engine.drain_pairs()
    assert len(dumps(engine)) <= 8_000
    plan = {"cuts": {2 * keys, 2 * keys + 5}, "ticks": set(), "batch": 64, "sweep": 0, "columns": keys > 10, "max_out": 65_536}
    assert drive(net, events, "arrival", plan, True) == drive(net, events, "arrival", plan, False)


def test_a_snapshot_an_earlier_petricep_wrote_still_loads() -> None:
    """Written by 97657ea (zstd buffers; now they are written uncompressed: the state store
    compresses): the same state as this petricep's, its checksum (texts not UTF-8 safe
    read from the buffers) still matches, and the run goes on."""
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 100")
    engine = KernelEngine(net, batch=1)
    engine.push_pairs(Event("A", 0, 0, "first", {"k": ("u", 1), "x": 1}))
    engine.push_pairs(Event("A", 1.5, 1, 2**70, {"k": ("u", 1), "x": 9}))
    engine.push_pairs(Event("A", 2, 2, "zwölf", {"k": "ß", "x": 0}))
    old = (Path(__file__).parent / "data" / "snapshot-zstd-97657ea.arrow").read_bytes()
    restored = loads(old, net)
    assert dumps(restored) == dumps(engine) != old
    assert len(old) < len(dumps(engine))  # (compressed)
    out = restored.push_pairs(Event("B", 3, 3, 3, {"k": ("u", 1), "x": 5}))
    assert [(m.ids, m.start, m.end) for m, _ in out] == [({"a": "first", "b": 3}, 0, 3)]
