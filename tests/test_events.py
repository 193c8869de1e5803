"""Events as columns: a batch's types as codes, values as the row's Event holds them, and
``EventColumns.events()`` every row as the :class:`Event` ``event(i)`` gives."""

from __future__ import annotations

import numpy as np

from petricep.events import Event, EventColumns, TypeColumn, value_at


def test_a_type_column_reads_as_its_names() -> None:
    types = TypeColumn(np.array([1, 0, 1, 1], dtype=np.int32), ["buy", "sell"])
    assert len(types) == 4
    assert types[0] == "sell" and types[1] == "buy"
    assert list(types) == types.tolist() == ["sell", "buy", "sell", "sell"]
    assert types.distinct() == {"buy", "sell"}
    assert types[2:].tolist() == ["sell", "sell"]
    assert TypeColumn.constant("tick", 3).tolist() == ["tick"] * 3


def test_a_row_of_numpy_columns_is_the_event_of_python_values() -> None:
    cols = EventColumns(
        TypeColumn.constant("t", 2), np.array([1, 2], dtype=np.int64), range(5, 7), np.array([10.0, 11.5]),
        {"x": np.array([3, 4], dtype=np.int64), "s": ["a", "b"]},
    )
    e = cols.event(1)
    assert e == Event("t", 2, 6, 11.5, {"x": 4, "s": "b"})
    assert type(e.ts) is int and type(e.id) is float and type(e.attrs["x"]) is int
    assert cols.type_names() == {"t"}
    assert value_at(["a"], 0) == "a"


def test_events_are_the_rows_events() -> None:
    cols = EventColumns(
        ["A", "B", "A"],
        np.array([1, 1, 2], dtype=np.int64),
        range(10, 13),
        ["a", np.int64(7), 3],
        {"x": np.array([0.5, 1.0, 2.0]), "s": ["p", None, "q"], "n": [np.int64(4), 5, None]},
    )
    got = [(e.type, e.ts, e.pos, e.id, e.attrs) for e in cols.events()]
    want = [(e.type, e.ts, e.pos, e.id, e.attrs) for e in map(cols.event, range(3))]
    assert got == want
    assert [tuple(map(type, (e.ts, e.pos, e.id, e.attrs["n"]))) for e in cols.events()] == [
        (int, int, str, int), (int, int, int, int), (int, int, int, type(None))
    ]
    assert [e.attrs for e in EventColumns(["A"], [1], [0], [0], {}).events()] == [{}]
