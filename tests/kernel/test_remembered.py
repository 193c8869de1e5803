"""The kernel's remembered ids and timestamps against a plain list of every event kept."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import petricep.kernel.remembered as R
from petricep.kernel.remembered import EventsOf, Remembered
from tests.budget import examples


def _column(kind: str, values: list[int]) -> Any:
    """The same values as a reader may hand them over: numpy ints or floats, a list, a range."""
    if kind == "ints":
        return np.array(values, dtype=np.int64)
    if kind == "floats":
        return np.array(values, dtype=np.float64)
    if kind == "text":
        return [f"e{v}" for v in values]
    return range(values[0], values[0] + len(values))


def _expected(kind: str, values: list[int]) -> list[Any]:
    col = _column(kind, values)
    return col.tolist() if isinstance(col, np.ndarray) else list(col)


steps = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["add", "again"]), st.integers(1, 6), st.sampled_from(["ints", "floats", "text", "range"]), st.sampled_from(["ints", "floats"])),
        st.tuples(st.just("forget"), st.integers(-1, 40), st.just(""), st.just("")),
    ),
    max_size=12,
)


@settings(max_examples=examples(300), deadline=None)
@given(steps)
def test_lookups_equal_a_list_of_every_event_kept(script: list[tuple[str, int, str, str]]) -> None:
    store = Remembered()
    kept: list[tuple[int, Any, Any]] = []  # (position, id, ts) as Python values
    pos = 0
    for op, n, id_kind, ts_kind in script:
        if op in ("add", "again"):  # (again: the part starts at the last position kept, as a stream's restored state may)
            first = kept[-1][0] if op == "again" and kept else pos
            values = list(range(first, first + n))
            store.add(np.array(values, dtype=np.int64), _column(id_kind, values), _column(ts_kind, values))
            kept += zip(values, _expected(id_kind, values), _expected(ts_kind, values))
            pos = values[-1] + 2  # (positions need not be consecutive)
        else:
            store.forget(n)
            kept = [] if n < 0 else [k for k in kept if k[0] >= n]
        probe = np.arange(-2, pos + 2, dtype=np.int64).reshape(1, -1)  # (every position, kept or not)
        assert store.index_of(probe).tolist() == np.searchsorted(np.array([k[0] for k in kept], dtype=np.int64), probe).tolist()
        assert store.positions.tolist() == [k[0] for k in kept]
        assert len(store) == len(kept)
        assert store.all_ids() == [k[1] for k in kept]
        assert store.all_ts() == [k[2] for k in kept]
        if kept:
            picks = np.array([len(kept) - 1, 0, len(kept) // 2], dtype=np.int64)
            assert store.ids_at(picks) == [kept[i][1] for i in picks.tolist()]
            assert [type(t) for t in store.ts_at(picks)] == [type(kept[i][2]) for i in picks.tolist()]
            for which in (1, 2):  # (numbers: where every one kept is an int, or every one a float)
                values = [k[which] for k in kept]
                numbers = store.numbers_at(which, picks)
                assert (numbers is not None) == ({type(v) for v in values} in ({int}, {float}))
                if numbers is not None:
                    assert [(type(v), v) for v in numbers.tolist()] == [(type(values[i]), values[i]) for i in picks.tolist()]


def test_timestamp_types_are_the_python_types_of_the_values() -> None:
    store = Remembered()
    store.add(np.array([0, 1]), [5, 6], np.array([1, 2], dtype=np.int64))
    assert store.ts_types == {int}
    store.add(np.array([2]), [7], [2.5])
    assert store.ts_types == {int, float}
    assert store.ts_at(np.array([2, 0])) == [2.5, 1]


def test_restore_takes_a_snapshots_lists() -> None:
    store = Remembered()
    store.add(np.array([3, 4, 9]), ["a", "b", "c"], [1.0, 2.0, 2.0])
    again = Remembered()
    again.restore(store.positions, store.all_ids(), store.all_ts(), store.ts_types)
    again.forget(4)
    assert again.positions.tolist() == [4, 9]
    assert again.all_ids() == ["b", "c"]
    assert again.ts_types == {float}



@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "add", "keep"]), st.integers(1, 6), st.integers(0, 2**20), st.booleans()), max_size=12))
def test_keeping_the_stored_positions_equals_a_filtered_list(script: list[tuple[str, int, int, bool]]) -> None:
    # keep(stored): the events at the store's positions (and, while they are few, every one
    # after its oldest); events made on demand (EventsOf) or listed come back as kept
    slack, R.KEEP_SLACK = R.KEEP_SLACK, 0
    try:
        store = Remembered()
        kept: list[tuple[int, Any, Any]] = []
        pos = 0
        for op, n, bits, lazy in script:
            if op == "add":
                values = list(range(pos, pos + n))
                events = EventsOf(lambda i, base=pos: f"ev{base + i}", 0, n) if lazy else [f"ev{v}" for v in values]
                store.add(np.array(values, dtype=np.int64), [f"e{v}" for v in values], np.array(values), events)
                kept += [(v, f"e{v}", f"ev{v}") for v in values]
                pos += n + 2
                continue
            stored = [k[0] for i, k in enumerate(kept) if bits >> (i % 20) & 1]
            store.keep(np.array(stored, dtype=np.int64))
            kept = [k for k in kept if stored and k[0] >= stored[0]]
            if len(kept) > 2 * len(stored):
                kept = [k for k in kept if k[0] in set(stored)]
            assert store.positions.tolist() == [k[0] for k in kept]
            assert store.all_ids() == [k[1] for k in kept]
            assert store.events_at(np.arange(len(kept))) == [k[2] for k in kept]
    finally:
        R.KEEP_SLACK = slack
