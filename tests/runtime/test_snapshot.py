"""The Python engine's run state as Arrow IPC (runtime/snapshot.py): a run snapshotted mid
stream, restored and continued gives what the uninterrupted run gives (matches, timeouts,
report), on random patterns over negation, Kleene closure, RETURN, ON TIMEOUT and LIMIT,
under the three tie rules; the bytes are deterministic; damaged snapshots, snapshots of
another net and other inputs raise SnapshotError."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import SnapshotError
from petricep.events import Event
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.runtime import snapshot
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.runtime.test_differential import fresh
from tests.runtime.test_timeouts import pattern_sets
from tests.strategies import pattern_text, patterns, streams

SETTINGS = settings(
    max_examples=examples(150, "PETRICEP_EXAMPLES"), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _loads(data: Any, net: Any, **options: Any) -> Engine:
    """A fresh engine over ``net`` holding the snapshot ``data``."""
    engine = Engine(net, **options)
    engine.restore(data)
    return engine


def texts(matches: list[Any]) -> list[str]:
    return [json.dumps(m.to_dict(), sort_keys=True) for m in matches]


def whole(net: Any, events: list[Event], **options: Any) -> tuple[list[str], dict[str, Any]]:
    engine = Engine(net, **options)
    return texts(list(engine.run(fresh(events)))), engine.report()


def resumed(net: Any, events: list[Event], cut: int, **options: Any) -> tuple[list[str], dict[str, Any]]:
    """The first ``cut`` events on one engine, its snapshot restored into a new one, the rest
    there; the snapshot of the restored engine is the same bytes."""
    first = Engine(net, **options)
    evs = fresh(events)
    out: list[Any] = []
    for e in evs[:cut]:
        out += first.push(e)
    data = snapshot.dumps(first)
    assert snapshot.dumps(first) == data  # deterministic
    second = _loads(data, net, **options)
    assert snapshot.dumps(second) == data  # a round trip gives the same bytes
    for e in evs[cut:]:
        out += second.push(e)
    out += second.flush()
    return texts(out), second.report()


def check(net: Any, events: list[Event], cut: int, **options: Any) -> None:
    assert resumed(net, events, cut, **options) == whole(net, events, **options)


@SETTINGS
@given(st.data())
def test_resumed_run_equals_the_uninterrupted_one(data: st.DataObject) -> None:
    tie = data.draw(st.sampled_from(["arrival", "strict", "either"]))
    kw: dict[str, Any] = {"strategies": ["skip-till-any-match"]} if tie == "either" else {}
    pats = [data.draw(patterns(name=f"p{i}", **kw)) for i in range(data.draw(st.integers(1, 2)))]
    for p in pats:
        note(pattern_text(p))
    events = data.draw(streams(max_size=14))
    cut = data.draw(st.integers(0, len(events)))
    check(build_net(pats), events, cut, tie=tie, sweep_every=data.draw(st.integers(1, 5)))


@SETTINGS
@given(pattern_sets(), streams(max_size=12), st.data())
def test_resumed_timeouts_and_limits(pats: list[A.Pattern], events: list[Event], data: st.DataObject) -> None:
    tie = data.draw(st.sampled_from(["arrival", "strict"]))
    for p in pats:
        note(pattern_text(p))
    cut = data.draw(st.integers(0, len(events)))
    check(build_net(pats), events, cut, tie=tie)


@SETTINGS
@given(st.data())
def test_resumed_with_a_slack_and_marking_counters(data: st.DataObject) -> None:
    p = data.draw(patterns())
    events = data.draw(streams(max_size=12))
    order = data.draw(st.permutations(range(len(events))))
    shuffled = [Event(events[i].type, events[i].ts, n, events[i].id, dict(events[i].attrs)) for n, i in enumerate(order)]
    cut = data.draw(st.integers(0, len(events)))
    net = build_net([p])
    late: list[Any] = []
    options = {"slack": 3, "count_marking": True, "on_late": lambda e, w: late.append(e.id)}
    check(net, shuffled, cut, **options)


CONSUMED = """
PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 10 RETURN R(x = a.x)
PATTERN q: SEQ(R r, C c) WITHIN 10
"""


@pytest.mark.parametrize("cut", range(7))
def test_resumed_composite_events(cut: int) -> None:
    events = [Event(t, i, i, f"e{i}", {"x": i, "k": 1}) for i, t in enumerate("ABABCCB")]
    check(compile_text(CONSUMED), events, cut)


def test_a_resumed_run_samples_the_peak_where_the_uninterrupted_one_does() -> None:
    # k=0's D events leave its partition empty on the indexed net; the snapshot's compaction
    # drops it, the uninterrupted run's sweeps do not visit it: the next sample of the peak
    # followed the partitions held, and came an event early after a restore (peak 2 there, 1
    # uninterrupted).
    # Now every sample drops such partitions and the next comes as many events on as it left.
    net = compile_text("PATTERN p: SEQ(OR(B a, A+ b[]), AND(D c, D+ d[])) WHERE skip-till-next-match AND [k] WITHIN 2")
    events = [Event(t, ts, i, i, {"k": k, "x": x}) for i, (t, ts, k, x) in enumerate([("A", 0, 2, 2), ("D", 2, 0, 0), ("D", 2, 0, 5), ("D", 2, 2, 4), ("D", 4, 2, 5)])]
    assert whole(net, events, sweep_every=1)[1]["partial_matches"] == {"alive": 0, "peak": 2, "dropped": 0}
    for cut in range(len(events) + 1):
        check(net, events, cut, sweep_every=1)


def test_a_snapshot_written_before_the_peaks_schedule_was_kept_restores(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run state written without ``sample_span`` (snapshots before 2026-12-07) restores
    it as 0: the next sweep samples the peak."""
    from petricep.runtime.state import RunState

    net, _ = _snap()
    engine = Engine(net)
    events = [Event(t, i, i, f"e{i}", {"k": i % 2, "x": i}) for i, t in enumerate("AABAB")]
    got = [m for e in events[:4] for m in engine.push(e)]
    engine.state.sample_span = 7
    older = tuple(a for a in snapshot.ATTRS[RunState] if a != "sample_span")
    monkeypatch.setitem(snapshot.ATTRS, RunState, older)
    data = snapshot.dumps(engine)
    monkeypatch.undo()
    second = _loads(data, net)
    assert second.state.sample_span == 0
    assert texts(got + second.push(events[4]) + second.flush()) == texts(list(Engine(net).run(fresh(events))))


def _snap() -> tuple[Any, bytes]:
    net = compile_text("PATTERN p: SEQ(A a, !(C c), B+ b[]) WHERE [k] WITHIN 10")
    engine = Engine(net)
    for i, t in enumerate("AABA"):
        engine.push(Event(t, i, i, f"e{i}", {"k": i % 2, "x": i}))
    return net, snapshot.dumps(engine)


def test_a_damaged_snapshot_is_refused() -> None:
    net, data = _snap()
    with pytest.raises(SnapshotError, match="not a Python engine snapshot, or a truncated one"):
        _loads(data[: len(data) // 2], net)
    with pytest.raises(SnapshotError, match="a snapshot is bytes, not str"):
        _loads("x", net)  # type: ignore[arg-type]
    flipped = bytearray(data)
    at = len(data) - 120  # inside the record batch's values
    flipped[at] ^= 0x01
    with pytest.raises(SnapshotError, match="damaged|truncated|inconsistent"):
        _loads(bytes(flipped), net)


def test_a_snapshot_of_another_net_or_tie_is_refused() -> None:
    _, data = _snap()
    other = compile_text("PATTERN p: SEQ(A a, B b) WITHIN 10")
    with pytest.raises(SnapshotError, match=r"of another net or tie rule \(patterns 'p', tie 'arrival'\)"):
        _loads(data, other)
    net, _ = _snap()
    with pytest.raises(SnapshotError, match="not of these patterns under tie 'strict'"):
        _loads(data, net, tie="strict")


def test_a_slack_must_be_loaded_with_a_slack() -> None:
    net, data = _snap()
    with pytest.raises(SnapshotError, match="taken without a slack; load it so"):
        _loads(data, net, slack=2)


def test_what_has_no_snapshot_says_so() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WITHIN 10")
    engine = Engine(net)
    engine.push(Event("A", 0, 0, "a", {"when": object()}))
    with pytest.raises(SnapshotError, match="a run state holding a object has no snapshot"):
        snapshot.dumps(engine)
    engine = Engine(compile_text("PATTERN p: SEQ(A a, B b) WITHIN 10\nPATTERN q: SEQ(A a, C c) WITHIN 10"))
    engine.remove_pattern("q")
    with pytest.raises(SnapshotError, match="patterns removed while it ran"):
        snapshot.dumps(engine)


def test_values_keep_their_types() -> None:
    """Ints past int64, floats (inf, nan), texts with a lone surrogate, None, nested lists and
    dicts in events' fields come back as they were."""
    net = compile_text("PATTERN p: SEQ(A a, B b) WITHIN 10")
    engine = Engine(net)
    attrs = {"big": 1 << 70, "f": float("inf"), "s": "x\udc80", "n": None, "l": [1, (2, "3")], "d": {"a": True}}
    engine.push(Event("A", 0, 0, "a", attrs))
    restored = _loads(snapshot.dumps(engine), net)
    (m,) = restored.push(Event("B", 1, 1, "b"))
    a = m.bindings()["a"]
    assert a.attrs == attrs and a.attrs["s"] == "x\udc80"
    assert type(a.attrs["l"][1]) is tuple and type(a.attrs["big"]) is int


WRITER = """
import sys
from petricep.api import compile_text
from petricep.events import Event
from petricep.runtime import snapshot
from petricep.runtime.engine import Engine
engine = Engine(compile_text(sys.argv[1]))
for i, t in enumerate("AACB"):
    engine.push(Event(t, i, i, f"e{i}", {"k": i % 2, "x": i}))
sys.stdout.buffer.write(snapshot.dumps(engine))
"""


def test_a_snapshot_loads_in_another_process() -> None:
    """The fingerprint and the bytes do not depend on the process (its hash seed)."""
    import subprocess
    import sys

    text = "PATTERN p: SEQ(A a, !(C c), B+ b[]) WHERE [k] AND a.x < 9 WITHIN 10 RETURN R(n = count(b[]))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    data = subprocess.run([sys.executable, "-c", WRITER, text], env=env, capture_output=True, check=True).stdout
    net = compile_text(text)
    events = [Event(t, i, i, f"e{i}", {"k": i % 2, "x": i}) for i, t in enumerate("AACBABB")]
    engine = Engine(net)
    before = [m for e in fresh(events[:4]) for m in engine.push(e)]
    assert snapshot.dumps(engine) == data
    restored = _loads(data, net)
    rest = [m for e in fresh(events[4:]) for m in restored.push(e)] + restored.flush()
    assert texts(before + rest) == whole(net, events)[0]
    assert len(before) == 1 and len(rest) == 3  # the partial matches kept in the snapshot completed


SQL = """
SELECT * FROM Ticker MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES STRT.price AS top, LAST(DOWN.price) AS bottom, COUNT(UP.*) AS ups
  ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP
  PATTERN (STRT DOWN+ UP+)
  DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
) AS v;
SELECT * FROM Ticker MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS n
  ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW
  PATTERN (A{2,3}? B)
  DEFINE A AS A.price >= PREV(A.price), B AS B.price < FIRST(A.price)
  WITHIN 20
) AS w;
"""


@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(prices=st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 6)), max_size=40), cut=st.integers(0, 40))
def test_sql_queries_open_searches_are_kept(prices: list[tuple[str, int]], cut: int) -> None:
    # a SQL query's open searches (rows back as far as PREV reads, attempts in a deque) are
    # run state: a snapshot anywhere, restored, goes on as the uninterrupted run
    from petricep.api import compile_sql

    net = compile_sql(SQL)
    events = [Event("Ticker", i, i, i, {"symbol": s, "price": p}) for i, (s, p) in enumerate(prices)]
    whole = Engine(net)
    want = texts([m for e in events for m in whole.push(e)] + whole.flush())
    first = Engine(net)
    got = [m for e in events[:cut] for m in first.push(e)]
    data = snapshot.dumps(first)
    second = _loads(data, net)
    assert snapshot.dumps(second) == data
    got += [m for e in events[cut:] for m in second.push(e)] + second.flush()
    assert texts(got) == want


@pytest.mark.parametrize("keys", [10, 10_000])
def test_a_key_holding_nothing_costs_nothing(keys: int) -> None:
    """Keys whose windows closed leave no trace (issue 39: every partition since the last
    sweep was written, 395 KB at 10,000 keys, none of them live); a run resumed there, old
    keys coming back and new ones, gives the uninterrupted run's matches and report."""
    from tests.kernel.test_snapshot import KEYED, keyed_stream

    net = compile_text(KEYED)
    events = keyed_stream(keys)
    engine = Engine(net)
    for e in fresh(events[: 2 * keys + 1]):
        engine.push(e)
    assert len(snapshot.dumps(engine)) <= 4_000
    for cut in (2 * keys + 1, 2 * keys + 6):
        check(net, events, cut)
