"""The kernel's value dictionaries (text codes, ints beyond 2**53) compacted in the live run.

A run over many distinct texts or big ints kept every value it ever read; now a dictionary
that outgrew twice its live entries plus a slack is re-coded to what the state holds
(petricep/kernel/valuecodes.py, _valuecodes.pxi). Every case runs the kernel compacting after
every batch (``value_slack=0``) and never (a huge slack) and must equal the Python engine:
equality and ordering of texts (ranks recomputed), partial matches holding values across a
compaction, Kleene lists reading texts and summing big ints, snapshots carrying only live
values and restoring to the same matches."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import StateLimitError
from petricep.events import Event
from petricep.kernel import KernelRun, supports, to_matches
from petricep.kernel.engine import KernelEngine
from petricep.kernel.snapshot import dumps
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.kernel.compare import ev, fresh, table
from tests.kernel.cuts import drive, loads

E = 2**53
NEVER = 10**12  # a value slack no run reaches: no compaction


def _python(text: str, events: list[Event], tie: str = "arrival") -> list[dict[str, Any]]:
    return [m.to_dict() for m in Engine(compile_text(text), tie=tie).run(iter(fresh(events)))]


def _kernel(
    text: str, events: list[Event], batch: int, slack: int, tie: str = "arrival"
) -> tuple[list[dict[str, Any]], KernelRun]:
    """The kernel's matches over ``events`` pushed ``batch`` rows at a time, and the run
    (``slack``: its value and key dictionaries')."""
    net = compile_text(text)
    assert supports(net, tie) == (True, "covered")
    run = KernelRun(net, tie=tie, id_field="id", sweep_every=1, compact_slack=0, value_slack=slack, key_slack=slack)
    t = table(events)
    tables = [run.push(t.slice(i, batch)) for i in range(0, len(events), batch)] + [run.flush()]
    return [m.to_dict() for got in tables for m in to_matches(got, net)], run


def _agree(text: str, events: list[Event], batch: int = 3, tie: str = "arrival") -> list[dict[str, Any]]:
    """The Python engine's matches, equal to the kernel's compacting at every batch and never."""
    want = _python(text, events, tie)
    got, run = _kernel(text, events, batch, 0, tie)
    assert got == want
    assert _kernel(text, events, batch, NEVER, tie)[0] == want
    return want


TEXTS = (
    "PATTERN p: SEQ(A a, B b) WHERE a.s = b.s WITHIN 4\n"
    "PATTERN q: SEQ(A a, B b) WHERE a.s < b.s AND b.s != \"m\" WITHIN 3\n"
    "PATTERN r: SEQ(B a, A b) WHERE a.s >= b.s AND b.s > \"c\" WITHIN 2 RETURN R(s = a.s, t = b.s)"
)


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.tuples(st.sampled_from("AB"), st.text("abcmz", min_size=1, max_size=3)), max_size=40), st.integers(1, 5))
def test_many_distinct_texts_match_as_the_python_engine(rows: list[tuple[str, str]], batch: int) -> None:
    events = [ev(t, i, i, s=s) for i, (t, s) in enumerate(rows)]
    _agree(TEXTS, events, batch)


BIGS = (
    "PATTERN p: SEQ(A a, B b) WHERE a.x = b.x WITHIN 4 RETURN R(d = b.x - a.x)\n"
    "PATTERN q: SEQ(A a, B b) WHERE b.x > a.x WITHIN 3 RETURN Q(s = a.x + b.x)"
)


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.tuples(st.sampled_from("AB"), st.integers(-5, 5)), max_size=40), st.integers(1, 5))
def test_many_distinct_big_ints_match_as_the_python_engine(rows: list[tuple[str, int]], batch: int) -> None:
    events = [ev(t, i, i, x=E + 7 * x) for i, (t, x) in enumerate(rows)]
    _agree(BIGS, events, batch)


def _cards(n: int, start: int = 0, ts: int = 0) -> list[Event]:
    """``n`` C events, each with a card number and a text of its own (no pattern reads a C, but
    their columns are coded: the dictionaries grow with them)."""
    return [ev("C", ts + i, start + i, s=f"card{start + i:07d}", x=E + start + i) for i in range(n)]


HELD = (
    "PATTERN p: SEQ(A a, B b) WHERE a.s = b.s AND a.x = b.x WITHIN 10000\n"
    "PATTERN q: SEQ(A a, B b) WHERE a.s < b.s AND b.x > a.x WITHIN 10000 RETURN Q(s = b.s, x = b.x)"
)


def test_a_partial_match_holds_its_values_across_compactions() -> None:
    """An A waits while 3,000 distinct texts and big ints pass and are dropped; its own text and
    int survive every compaction, re-coded, and the Bs after them (ordering across the old
    and new codes: "card..." < "m" < "zz") match as on the Python engine."""
    events = [ev("A", 0, 0, s="m", x=E + 10**6)] + _cards(3000, 1, 1)
    events += [ev("B", 5000, 3001, s="m", x=E + 10**6), ev("B", 5001, 3002, s="zz", x=E + 10**7),
               ev("B", 5002, 3003, s="card0000005", x=E + 10**7)]  # fmt: skip
    want = _python(HELD, events)
    assert [(m["pattern"], m["ids"]) for m in want] == [
        ("p", {"a": 0, "b": 3001}), ("q", {"a": 0, "b": 3002})]  # fmt: skip
    got, run = _kernel(HELD, events, 100, 0)
    assert got == want
    stats = run.stats["values"]
    assert stats["value_compactions"] >= 10
    assert stats["dict_size"] < 120 and stats["bigs_size"] < 120  # (a batch's values at most)
    never, full = _kernel(HELD, events, 100, NEVER)
    assert never == want
    assert full.stats["values"]["dict_size"] == 3002 and full.stats["values"]["value_compactions"] == 0


def test_compact_values_by_hand_keeps_only_the_live_values() -> None:
    net = compile_text(HELD)
    run = KernelRun(net, id_field="id", value_slack=NEVER)
    run.push(table([ev("A", 0, 0, s="m", x=E + 5)] + _cards(500, 1, 1)))
    assert run.stats["values"]["dict_size"] == 501 and run.stats["values"]["bigs_size"] == 500
    assert run.compact_values() is True
    assert run.strings() == ["m"] and run.kernel.bigs == [E + 5]
    assert run.stats["values"]["dict_slack"] == 0 and run.stats["values"]["value_compactions"] == 1
    got = run.push(table([ev("B", 600, 501, s="m", x=E + 5)]))
    assert [m.ids for m in to_matches(got, net)] == [{"a": 0, "b": 501}]


def test_the_net_s_constants_keep_their_codes() -> None:
    """Texts and big ints the conditions name are coded by the lowering (in the bytecode):
    never dropped, whatever the stream."""
    text = 'PATTERN p: SEQ(A a, B b) WHERE a.s = "card0000003" AND b.x != 9007199254740999 AND a.s < b.s WITHIN 2'
    cards = [Event("A", e.ts, e.pos, e.id, e.attrs) for e in _cards(45)]
    events = [*cards[:4], ev("B", 4, 4, s="card0000004", x=E + 8), *cards[5:]]
    events += [ev("A", 60, 45, s="card0000003", x=1), ev("B", 61, 46, s="card0000009", x=E + 6)]
    want = _agree(text, events, 4)
    assert [m["ids"] for m in want] == [{"a": 3, "b": 4}, {"a": 45, "b": 46}]


KLEENE = (
    "PATTERN p: SEQ(A a, B+ b[], C c) WHERE skip-till-next-match AND b[i].s > b[i-1].s AND c.s = b[1].s WITHIN 50 "
    "RETURN R(first = b[1].s, last = b[last].s, n = count(b[]), t = sum(b[].x), hi = max(b[].x))"
)


def test_kleene_lists_read_texts_and_sum_big_ints_across_compactions() -> None:
    """A list's elements' texts (conditions, RETURN) and its running aggregates over ints
    beyond 2**53 (sum, max: held as big-int codes in the element arena) survive compactions
    while distinct values of unrelated events pass."""
    events = [ev("A", 0, 0, s="a", x=1)]
    for i in range(1, 40):
        events.append(ev("B", i, 2 * i - 1, s=f"b{i:03d}", x=E + i))
        events.append(ev("D", i, 2 * i, s=f"noise{i}", x=E + 1000 + i))
    events.append(ev("C", 45, 79, s="b001", x=0))
    want = _agree(KLEENE, events, 7)
    assert len(want) == 1
    assert want[0]["attrs"] == {"first": "b001", "last": "b039", "n": 39, "t": 39 * E + 780, "hi": E + 39}


def test_snapshots_carry_only_the_live_values_and_restore_to_the_same_matches() -> None:
    text = "PATTERN p: SEQ(A a, B b) WHERE a.s = b.s AND a.x < b.x WITHIN 3000"
    net = compile_text(text)
    events = [ev("A", 0, 0, s="keep", x=E + 1)] + _cards(2000, 1, 1) + [ev("B", 2500, 2001, s="keep", x=E + 2)]
    engine = KernelEngine(net, batch=64)
    for e in fresh(events[:2001]):
        engine.push_pairs(e)
    engine.drain_pairs()
    state = engine.snapshot_state()
    assert state["run.strings"] == ["keep"] and state["run.bigs"] == [E + 1]
    assert b"card" not in dumps(engine)
    restored = loads(dumps(engine), net)
    assert restored.kernel.strings() == ["keep"]
    out = restored.push_pairs(events[2001]) + restored.flush_pairs()
    assert [(m.ids, at) for m, at in out] == [({"a": 0, "b": 2001}, 2001)]
    plan = {"cuts": {100, 1500, 2000}, "ticks": set(), "batch": 64, "sweep": 1, "columns": True, "max_out": 65_536}
    assert drive(net, events, "arrival", plan, True) == drive(net, events, "arrival", plan, False)


def test_the_engine_compacts_after_its_batches() -> None:
    """KernelEngine (checked events, value by value) compacts by itself too."""
    net = compile_text(HELD)
    engine = KernelEngine(net, batch=256)
    engine.kernel.values.slack = 16
    for e in fresh([ev("A", 0, 0, s="m", x=E)] + _cards(5000, 1, 1)):
        engine.push(e)
    engine.drain()
    assert engine.kernel.stats["values"]["dict_size"] < 600 and engine.kernel.stats["values"]["value_compactions"] > 5
    got = engine.push(Event("B", 9000, 5001, 5001, {"s": "zz", "x": E + 1})) + engine.flush()
    assert [(m.pattern, m.ids) for m in got] == [("q", {"a": 0, "b": 5001})]


def test_a_dictionary_column_is_coded_after_a_compaction() -> None:
    """A text column that comes dictionary-encoded is coded through the compacted dictionary."""
    text = "PATTERN p: SEQ(A a, B b) WHERE a.s = b.s WITHIN 5"
    net = compile_text(text)
    run = KernelRun(net, id_field="id", value_slack=0)
    for start in range(0, 300, 30):
        col = pa.array([f"v{i // 2}" for i in range(start, start + 30)]).dictionary_encode()
        batch = pa.table({"type": ["A", "B"] * 15, "ts": list(range(start, start + 30)), "id": list(range(start, start + 30)), "s": col})
        got = run.push(batch)
        assert len(got) == 15
    assert run.stats["values"]["dict_size"] <= 30


TEXT_AGGS = (
    "PATTERN p: SEQ(A a, B+ b[], C c) WHERE min(b[].s) > a.s AND max(b[].s) <= c.s WITHIN 6 "
    "RETURN R(lo = min(b[].s), hi = max(b[].s), n = count(b[]))"
)


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ABBCD"), st.text("bdmxz", min_size=1, max_size=3)), max_size=30), st.integers(1, 4))
def test_kleene_min_and_max_of_texts_across_compactions(rows: list[tuple[str, str]], batch: int) -> None:
    """A list's running min / max of texts are codes in the element arena: re-coded by every
    compaction, compared by the ranks of the kept strings (D: distinct texts no one reads)."""
    events = [ev(t, i, i, s=f"{s}{i}" if t == "D" else s) for i, (t, s) in enumerate(rows)]
    _agree(TEXT_AGGS, events, batch)


def test_a_list_s_text_minimum_survives_compactions() -> None:
    """An A and its list of Bs wait while distinct texts pass (compacted at every batch): the
    list's min and max, codes in the element arena, stay the right texts."""
    text = TEXT_AGGS.replace("WHERE", "WHERE skip-till-next-match AND").replace("WITHIN 6", "WITHIN 50")
    events = [ev("A", 0, 0, s="b")]
    for i in range(1, 20):
        events += [ev("B", i, 2 * i - 1, s=f"m{i % 5}"), ev("D", i, 2 * i, s=f"noise{i}")]
    events.append(ev("C", 21, 39, s="n"))
    want = _agree(text, events, 3)
    assert [m["attrs"] for m in want] == [{"lo": "m0", "hi": "m4", "n": 19}]
    got, run = _kernel(text, events, 3, 0)
    assert run.stats["values"]["value_compactions"] >= 5


CONSTRUCTS = (
    "PATTERN p: SEQ(A a, !(C c), B b) WHERE [k] AND a.s <= b.s AND c.s = a.s WITHIN 4 RETURN T(s = b.s, u = a.s)\n"
    "PATTERN q: SEQ(T t, B b) WHERE t.s < b.s AND t.u != b.s WITHIN 3\n"
    "PATTERN r: SEQ(A a, B b) WHERE a.s > b.s WITHIN 2\nON TIMEOUT RETURN O(s = a.s)\n"
)


@settings(max_examples=examples(30), deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("ABCD"), st.sampled_from((0, 1, 1, 2)), st.text("bmx", min_size=1, max_size=2),
                       st.integers(0, 1)), max_size=30),
    st.integers(1, 4),
    st.sampled_from(("arrival", "strict", "either")),
)
def test_texts_in_negations_composite_events_and_timeouts(rows: list[tuple[str, int, str, int]], batch: int, tie: str) -> None:
    """Texts held by buffered negative events, composite events' RETURN values (re-entering:
    stored events too) and ON TIMEOUT values, under every tie rule, with distinct texts
    passing (D, read by nothing) between them."""
    events, ts = [], 0
    for i, (t, step, s, k) in enumerate(rows):
        ts += step
        text = f"{s}{i}" if t == "D" else s
        events.append(ev(t, ts, i, s=text, u=text, k=k))  # (u: the table has every field a column)
    _agree(CONSTRUCTS, events, batch, tie)


# ------------------------------------------------------------------ partition keys

KEYED = (
    "PATTERN p: SEQ(A a, !(C c), B b) WHERE [k] AND a.x <= b.x WITHIN 4 RETURN T(x = b.x, k = b.k)\n"
    "PATTERN q: SEQ(T t, B b) WHERE [k] AND t.x < b.x WITHIN 3\n"
    "PATTERN r: SEQ(A a, B+ b[]) WHERE [k] AND b[i].x >= a.x WITHIN 3 LIMIT 2 PARTIAL MATCHES DROP OLDEST\n"
    "PATTERN s: SEQ(A a, B b) WHERE [k] AND a.x > b.x WITHIN 2\nON TIMEOUT RETURN O(x = a.x)\n"
)


@settings(max_examples=examples(30), deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("ABC"), st.sampled_from((0, 1, 1, 2)), st.integers(0, 3),
                       st.sampled_from((0, 1, None, None))), max_size=30),
    st.integers(1, 4),
    st.sampled_from(("arrival", "strict", "either")),
    st.booleans(),
)
def test_many_distinct_keys_as_the_python_engine(
    rows: list[tuple[str, int, int, int | None]], batch: int, tie: str, text_keys: bool
) -> None:
    """Keys whose windows close (None: a key of its own) dropped by key compactions after
    every batch: negations, composite events keyed as their producers, LIMIT quotas, ON
    TIMEOUT deadlines, Kleene lists keep theirs; integer keys (the kernel codes them) and text."""
    events, ts = [], 0
    for i, (t, step, x, k) in enumerate(rows):
        ts += step
        key = i + 10 if k is None else k
        events.append(ev(t, ts, i, x=x, k=f"u{key}" if text_keys else key))
    _agree(KEYED, events, batch, tie)


def test_a_key_waiting_survives_key_compactions() -> None:
    """An A of key "u7" waits while 3,000 keys of their own pass (C: no pattern reads them,
    but a text key column is coded whole); the compactions drop them, key "u7"'s partial
    match is re-coded and completes, under the run's budget still."""
    text = "PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 5000"
    net = compile_text(text)
    events = [ev("A", 0, 0, k="u7", x=1)] + [ev("C", i, i, k=f"c{i}", x=0) for i in range(1, 3001)]
    events += [ev("B", 4000, 3001, k="u7", x=2), ev("A", 4001, 3002, k="c5", x=0), ev("B", 4002, 3003, k="c5", x=5)]
    run = KernelRun(net, id_field="id", key_slack=64)
    run.set_budget(10, None)
    t = table(events)
    got = [m.ids for i in range(0, len(events), 200) for m in to_matches(run.push(t.slice(i, 200)), net)]
    assert got == [{"a": 0, "b": 3001}, {"a": 3002, "b": 3003}]
    stats = run.stats["values"]
    assert stats["key_compactions"] >= 5 and stats["keys_size"] < 300
    assert run.budget == (10, None)


def test_the_budget_holds_after_a_key_compaction() -> None:
    """A rebuilt kernel gets the run's budget again: 200 keys' partial matches at one time,
    after compactions, stop the run where the Python engine stops (budget 100)."""
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 10")
    events = [ev("A", 20 * i, i, k=1000 + i) for i in range(200)] + [ev("A", 5000, 200 + i, k=i) for i in range(200)]
    texts = []
    for engine in (Engine(net, max_partial_matches=100), KernelEngine(net, batch=50, max_partial_matches=100)):
        if isinstance(engine, KernelEngine):
            engine.kernel.values.key_slack = 0
        with pytest.raises(StateLimitError) as info:
            for e in fresh(events):
                engine.push(e)
            engine.flush()
        texts.append(str(info.value))
        if isinstance(engine, KernelEngine):
            assert engine.kernel.stats["values"]["key_compactions"] >= 3
    assert texts[0] == texts[1]
    assert texts[1].startswith("pattern 'p': 101 live partial matches, over the run's budget of 100")


@settings(max_examples=examples(20), deadline=None)
@given(st.data())
def test_snapshots_between_compactions_go_on_as_the_uninterrupted_run(data: st.DataObject) -> None:
    """Texts and keys of their own, compacted after every batch (sweep 1: value and key
    slack 0), the run cut and restored at random points: the uncut run's pairs, and those
    the Python engine finds."""
    rows = data.draw(st.lists(st.tuples(st.sampled_from("ABCD"), st.sampled_from((0, 1, 2)), st.text("bmx", min_size=1, max_size=2),
                                        st.sampled_from((0, 1, None))), min_size=1, max_size=30))  # fmt: skip
    events, ts = [], 0
    for i, (t, step, s, k) in enumerate(rows):
        ts += step
        text = f"{s}{i}" if t == "D" else s
        events.append(ev(t, ts, i, s=text, u=text, k=f"k{i}" if k is None else k))
    net = compile_text(CONSTRUCTS)
    n = len(events)
    plan = {"cuts": data.draw(st.sets(st.integers(0, n - 1), max_size=n)), "ticks": set(),
            "batch": data.draw(st.sampled_from((1, 3, 64))), "sweep": 1, "columns": False, "max_out": 65_536}
    cut, whole = drive(net, events, "arrival", plan, True), drive(net, events, "arrival", plan, False)
    assert cut == whole
    want = [repr(m.to_dict()) for m in Engine(net).run(iter(fresh(events)))]
    assert [m for m, _ in whole[0]] == want
