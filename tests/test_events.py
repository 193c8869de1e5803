"""``EventColumns.events()``: every row as the :class:`Event` ``event(i)`` gives, whatever
the columns are (numpy arrays, lists, ranges)."""

from __future__ import annotations

import numpy as np

from petricep.events import EventColumns


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
