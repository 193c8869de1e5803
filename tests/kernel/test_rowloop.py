"""The kernel's row loop (_rowloop.pxi) and the plain step (_plainnet.pxi): the input forms
Kernel.run takes (dictionary indices with codes, int64 times, a first position, no ids,
integer keys as a column coded as it is read) give the matches the plain arrays give, and
a plain net (no negation, Kleene list, contiguity, LIMIT, timeout) matches as the engine does
under every tie rule and sweep cadence."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import petricep.kernel as K
from petricep.api import compile_text
from petricep.events import Event
from petricep.runtime.engine import Engine
from tests.kernel.compare import both, ev, same

W1 = "PATTERN q: SEQ(stock1 a, stock2 b, stock3 c) WHERE {strategy} AND [price] WITHIN {w}"


def stocks(n: int, seed: int, symbols: int = 6, prices: int = 7) -> pa.Table:
    """A SASE-style stream (types stock1.., an integer price, ts = id = row) as the bench's."""
    rng = np.random.default_rng(seed)
    names = np.array([f"stock{k}" for k in range(1, symbols + 1)], dtype=object)
    ids = np.arange(n, dtype=np.int64)
    return pa.table({
        "id": ids,
        "ts": ids,
        "type": pa.array(names[rng.integers(0, symbols, n)], pa.string()).dictionary_encode(),
        "price": rng.integers(1, prices + 1, n),
    })


def engine_ids(text: str, table: pa.Table, tie: str = "arrival") -> list[tuple[int, ...]]:
    net = compile_text(text)
    evs = [Event(r["type"], r["ts"], i, r["id"], {"price": r["price"]}) for i, r in enumerate(table.to_pylist())]
    return [tuple(m.ids[v] for v in "abc") for m in Engine(net, tie=tie).run(evs)]


def kernel_ids(text: str, tables: list[pa.Table], tie: str = "arrival", **options: Any) -> list[tuple[int, ...]]:
    run = K.KernelRun(compile_text(text), tie=tie, id_field="id", **options)
    out = pa.concat_tables([run.push(t) for t in tables] + [run.flush()])
    return list(zip(*(out.column(v).to_pylist() for v in "abc")))


@pytest.mark.parametrize("sweep_every", [1, 7, 2048])
@pytest.mark.parametrize("tie", ["arrival", "strict", "either"])
def test_sase_q2_matches_the_engine(sweep_every: int, tie: str) -> None:
    table = stocks(3000, seed=sweep_every)
    strategy = "skip-till-any-match" if tie == "either" else "skip-till-next-match"  # (either needs it)
    text = W1.format(w=40, strategy=strategy)
    want = engine_ids(text, table, tie)
    got = kernel_ids(text, [table.slice(0, 1234), table.slice(1234)], tie, sweep_every=sweep_every, compact_slack=0)
    assert got == want and len(want) > 50


def test_plain_groups_are_the_nets_without_the_other_constructs() -> None:
    def plain(text: str) -> list[bool]:
        return [g.plain for g in K.KernelRun(compile_text(text)).kernel.groups]

    assert plain(W1.format(w=10, strategy="skip-till-next-match")) == [True]
    assert plain(W1.format(w=10, strategy="skip-till-any-match")) == [True]
    assert plain("PATTERN p: SEQ(A a, B b) WHERE a.x < b.x WITHIN 5") == [True]
    assert plain("PATTERN p: SEQ(A a, !(N n), B b) WITHIN 5") == [False]
    assert plain("PATTERN p: SEQ(A a, B+ b[], C c) WITHIN 5") == [False]
    assert plain("PATTERN p: SEQ(A a, B b) WHERE strict-contiguity") == [False]
    assert plain("PATTERN p: SEQ(A a, B b) WITHIN 5 EVENTS") == [False]


ARC_EVENTS = [ev("A", 0, 0, x=1, y=0), ev("A", 1, 1, x=-1, y=0), ev("B", 2, 2, x=0, y=2), ev("B", 3, 3, x=5, y=1), ev("A", 4, 4, x=3, y=0)]


@pytest.mark.parametrize(
    ("text", "arcs", "found"),
    [
        ("PATTERN p: SEQ(A a, B b) WHERE a.x > 0 AND b.y < 2 AND a.x < b.x WITHIN 10", [1, 1], [("p", 0, 3)]),
        ("PATTERN p: SEQ(A a, B b) WHERE a.x < b.x WITHIN 10", [0, 0], [("p", 1, 2), ("p", 0, 3), ("p", 1, 3)]),
        # merged: B leaves the shared place by two transitions, one with an input-arc condition
        (
            "PATTERN p: SEQ(A a, B b) WHERE b.y > 1 WITHIN 10\nPATTERN q: SEQ(A a, B b) WHERE a.x > b.x WITHIN 10",
            [0, 1],
            [("p", 0, 2), ("p", 1, 2), ("q", 0, 2)],
        ),
    ],
)
def test_an_entry_without_arc_conditions_enables_all_its_transitions(
    text: str, arcs: list[int], found: list[tuple[str, int, int]]
) -> None:
    # step reads such an entry's transitions in place (no list per event); the others are
    # filtered by their input-arc conditions per event, as the engine's enabled list
    assert [g.ent_arcs.tolist() for g in K.KernelRun(compile_text(text)).lowered.groups] == [arcs]
    matches = same(text, ARC_EVENTS)
    assert [(m["pattern"], m["ids"]["a"], m["ids"]["b"]) for m in matches] == found


def columns(table: pa.Table, run: K.KernelRun) -> dict[str, Any]:
    """The kernel's columns of ``table`` in the plain forms (arrays) and the compact ones."""
    n = table.num_rows
    codes = {t: i for i, t in enumerate(run.lowered.types)}
    enc = table.column("type").chunk(0)
    lookup = np.array([codes.get(t, -1) for t in enc.dictionary.to_pylist()], dtype=np.int32)
    indices = enc.indices.to_numpy().astype(np.int32)
    ts = table.column("ts").to_numpy()
    values = table.column("price").to_numpy().astype(np.int64)
    lo = int(values.min())
    tab = np.full(int(values.max()) - lo + 1, -1, dtype=np.int64)
    for code, v in enumerate(dict.fromkeys(values.tolist())):  # (first-seen order, as KernelRun codes)
        tab[v - lo] = code
    return {
        "plain": (lookup[indices], ts.astype(np.float64), np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64),
                  tab[values - lo].reshape(1, n)),
        "compact": ((indices, lookup), ts, 0, None, [(values, K._kernel.IntKeys({}))]),
    }


def fired(run: K.KernelRun, cols: tuple[Any, ...], n: int, max_out: int = 0) -> list[tuple[int, ...]]:
    types, ts, pos, ids, keys = cols
    vals, tags = np.zeros((n, 1)), np.zeros((n, 1), dtype=np.int8)
    start = 0
    while start < n:
        start = run.fire(types, ts, pos, ids, vals, tags, keys, start=start, max_out=max_out)
    run.finish()
    arrays = run.take_matches()
    return [tuple(int(x) for x in row) for row in arrays[3]]


@pytest.mark.parametrize("max_out", [0, 1, 3])
def test_input_forms_give_the_same_matches(max_out: int) -> None:
    table = stocks(2000, seed=5)
    net = compile_text(W1.format(w=60, strategy="skip-till-next-match"))
    forms = columns(table, K.KernelRun(net))
    got = {name: fired(K.KernelRun(net, sweep_every=5, compact_slack=0), cols, table.num_rows, max_out)
           for name, cols in forms.items()}
    assert got["plain"] == got["compact"] and len(got["plain"]) > 20


def test_a_dictionary_index_out_of_range_is_an_error() -> None:
    run = K.KernelRun(compile_text("PATTERN p: SEQ(A a, B b)"))
    n = 3
    types = (np.array([0, 5, 1], dtype=np.int32), np.array([0, 1], dtype=np.int32))
    with pytest.raises(IndexError, match="dictionary index 5"):
        run.kernel.run(types, np.arange(n, dtype=np.int64), 0, None, np.zeros((n, 1)), np.zeros((n, 1), dtype=np.int8),
                       np.zeros((1, n), dtype=np.int64))


def test_time_order_and_end_state_after_unread_rows() -> None:
    # runs of rows no pattern reads, then a tick-free end: the state a snapshot keeps is the
    # last row's (its time and position), whether the run ends on an unread row or not
    net = compile_text("PATTERN p: SEQ(A a, B b) WITHIN 10")
    rows = [ev("C", 0, 0), ev("A", 1, 1), ev("C", 2, 2), ev("C", 3, 3), ev("B", 4, 4), ev("C", 5, 5), ev("C", 5, 6)]
    out = both(net, rows, "arrival", 3, sweep_every=2)
    assert out["kernel"] == out["python"] and len(out["python"][0]) == 1
    run = K.KernelRun(net, id_field="id")
    t = pa.table({"type": [e.type for e in rows], "ts": [e.ts for e in rows], "id": [e.id for e in rows]})
    run.push(t)
    state = run.kernel.get_state()
    assert (state["in_ts"], state["in_pos"], state["last_ts"], state["events"]) == (5.0, 6, 5.0, 7)


def test_sweeps_count_the_rows_the_patterns_read() -> None:
    # rows no pattern reads leave nothing to drop: they bring no sweep nearer, so that W1's
    # 850,000 unread rows do not sweep 415 times; the read rows do (every sweep_every)
    net = compile_text("PATTERN p: SEQ(A a, B b) WITHIN 5")
    run = K.KernelRun(net, id_field="id", sweep_every=3, compact_slack=0)
    rows = [("A", 0), ("A", 1)] + [("C", t) for t in range(2, 1002)]
    run.push(pa.table({"type": [r[0] for r in rows], "ts": [r[1] for r in rows], "id": list(range(len(rows)))}))
    group = run.kernel.groups[0]
    assert (run.kernel.since_sweep, group.live_tokens) == (2, 2)  # (expired, not yet dropped)
    run.push(pa.table({"type": ["A"], "ts": [1002], "id": [1002]}))  # the third read row: a sweep
    assert (run.kernel.since_sweep, group.live_tokens) == (0, 1)


def test_emission_buffers_passed_on_fit_the_next_kernel() -> None:
    # a dropped kernel's emission buffers go to the next one made (_emission.pxi adopt_out):
    # one with more slots and RETURN fields gets the capacity they hold for its widths, and
    # grows them as its matches need
    many = stocks(4000, seed=11)
    want_q2 = engine_ids(W1.format(w=400, strategy="skip-till-any-match"), many)
    assert kernel_ids(W1.format(w=400, strategy="skip-till-any-match"), [many]) == want_q2 and len(want_q2) > 5000
    wide = ("PATTERN w: SEQ(stock1 a, stock2 b, stock3 c, stock4 d, stock5 e) WHERE skip-till-any-match AND [price] "
            "WITHIN 200 RETURN Wide(p = a.price, q = e.price + 1, s = e.ts - a.ts)")
    net = compile_text(wide)
    evs = [Event(r["type"], r["ts"], i, r["id"], {"price": r["price"]}) for i, r in enumerate(many.to_pylist())]
    want = [(tuple(m.ids[v] for v in "abcde"), m.attrs) for m in Engine(net).run(evs)]
    run = K.KernelRun(net, id_field="id")
    out = pa.concat_tables([run.push(many), run.flush()])
    ids = list(zip(*(out.column(v).to_pylist() for v in "abcde")))
    got = list(zip(ids, out.column("attrs").to_pylist()))
    assert got == want and len(want) > 2000
