"""Windows: time, count and duration windows.

Every hand case runs on every matcher (the ``matcher`` fixture in conftest.py); the
expected match sets were worked out by hand from docs/SEMANTICS.md.
"""

from __future__ import annotations

import dataclasses

from petricep.lang.ast import WIN_DURATION, Window
from tests.features.scenario import SEQ, ids, pat, ref, stream, want, within, within_events


def test_time_window_is_inclusive():
    evs = stream("A@0 B@2 B@3")
    assert ids(pat(SEQ(ref("A", "a"), ref("B", "b")), window=within(2)), evs) == want({"a": 0, "b": 1})
    assert ids(pat(SEQ(ref("A", "a"), ref("B", "b")), window=within(0)), stream("A@1 B@1 B@2")) == want(
        {"a": 0, "b": 1}
    )


def test_count_window():
    evs = stream("A@0 B@0 C@0 B@0")
    p = pat(SEQ(ref("A", "a"), ref("B", "b")), window=within_events(2))
    assert ids(p, evs) == want({"a": 0, "b": 1})  # 1-0 < 2, 3-0 >= 2
    p4 = pat(SEQ(ref("A", "a"), ref("B", "b")), window=within_events(4))
    assert ids(p4, evs) == want({"a": 0, "b": 1}, {"a": 0, "b": 3})


def test_count_window_counts_positions_over_the_whole_input():
    # a and b are neighbours in partition k=0, but 3 apart in the input
    evs = stream("A@0:k=0 C@0:k=1 D@0:k=1 B@0:k=0")
    p = pat(SEQ(ref("A", "a"), ref("B", "b")), partition=("k",), window=within_events(3))
    assert ids(p, evs) == set()
    assert ids(dataclasses.replace(p, window=within_events(4)), evs) == want({"a": 0, "b": 3})


def test_duration_window_value_times_unit():
    # reading chosen: Window.value is the number as written, in Window.unit (1 min = 60 s)
    evs = stream("A@0 B@60 B@61")
    p = pat(SEQ(ref("A", "a"), ref("B", "b")), window=Window(WIN_DURATION, 1, "min"))
    assert ids(p, evs) == want({"a": 0, "b": 1})
    p2 = pat(SEQ(ref("A", "a"), ref("B", "b")), window=Window(WIN_DURATION, 61, "s"))
    assert ids(p2, evs) == want({"a": 0, "b": 1}, {"a": 0, "b": 2})
