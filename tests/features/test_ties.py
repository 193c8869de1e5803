"""Tie rules (arrival, strict, either) on SEQ, Kleene and negation.

Every hand case runs on every matcher (the ``matcher`` fixture in conftest.py); the
expected match sets were worked out by hand from docs/SEMANTICS.md.
"""

from __future__ import annotations

import pytest

from tests.features.scenario import (
    MATCH,
    NEXT,
    PART,
    SEQ,
    STRICT,
    ids,
    neg,
    pat,
    plus,
    ref,
    run,
    stream,
    want,
    within,
    within_events,
)
from tests.features.scenario import f as field
from tests.features.scenario import returns as returning

TIE_EVENTS = "A@0 B@1 A@1 B@1 B@2"


@pytest.mark.parametrize(
    "tie,expected",
    [
        # arrival: (ts, pos) order; a2=(1,2) is after b1=(1,1)
        ("arrival", [(0, 1), (0, 3), (0, 4), (2, 3), (2, 4)]),
        # strict: only a strictly later ts is after; a2 (ts 1) only before b4 (ts 2)
        ("strict", [(0, 1), (0, 3), (0, 4), (2, 4)]),
        # either: equal ts in either order
        ("either", [(0, 1), (0, 3), (0, 4), (2, 1), (2, 3), (2, 4)]),
    ],
)
def test_tie_rules_on_seq(tie, expected):
    p = pat(SEQ(ref("A", "a"), ref("B", "b")))
    assert ids(p, stream(TIE_EVENTS), tie) == want(*({"a": a, "b": b} for a, b in expected))


@pytest.mark.parametrize(
    "tie,expected",
    [
        ("arrival", [[0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2]]),
        ("strict", [[0], [1], [2], [0, 2], [1, 2]]),  # timestamps strictly increase
        ("either", [[0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2]]),  # lists in stream order
    ],
)
def test_tie_rules_on_kleene(tie, expected):
    p = pat(SEQ(plus("A", "a")))
    assert ids(p, stream("A@0 A@0 A@1"), tie) == want(*({"a": lst} for lst in expected))


@pytest.mark.parametrize("tie,expected", [("arrival", []), ("strict", [(0, 3)]), ("either", [(0, 3)])])
def test_tie_rules_on_negation_bounds(tie, expected):
    # arrival: C1 (ts 0, pos 1) is after a0 and before b3 -> violates.
    # strict/either: the interval is 0 < ts < 1: neither C (ts 0, ts 1) is inside.
    p = pat(SEQ(ref("A", "a"), neg("C", "c"), ref("B", "b")))
    assert ids(p, stream("A@0 C@0 C@1 B@1"), tie) == want(*({"a": a, "b": b} for a, b in expected))


@pytest.mark.parametrize("tie,expected", [("arrival", []), ("strict", [(0, 1)])])
def test_tie_rules_on_end_negation(tie, expected):
    # lower bound after b1: arrival counts C2 (same ts, later pos); strict needs ts > 1
    p = pat(SEQ(ref("A", "a"), ref("B", "b"), neg("C", "c")), window=within(5))
    assert ids(p, stream("A@0 B@1 C@1"), tie) == want(*({"a": a, "b": b} for a, b in expected))


def test_either_only_with_skip_till_any_match():
    for strategy in (NEXT, STRICT, PART):
        with pytest.raises(ValueError):
            run(pat(SEQ(ref("A", "a"), ref("B", "b")), strategy=strategy), stream("A@0 B@1"), "either")


def test_either_end_negation_closed_inside_its_timestamp_group_feeds_a_consumer():
    # p's match {a0} waits for its 2-event window (positions 0..1); A2, of the same timestamp
    # group, closes it, so its composite T takes ts 0 and pairs with every A within 0.
    # ({a1}'s window is closed by B@1: its T has ts 1, too late for q.)
    # (Found by the partitioned-run test: the engine used to emit it at the next timestamp.)
    p = pat(
        SEQ(ref("A", "a"), neg("C", "c")), window=within_events(2), returns=returning("T", k=field("a", "k")), name="p"
    )
    q = pat(SEQ(ref("A", "b"), ref("T", "t")), window=within(0), name="q")
    got = MATCH([p, q], stream("A@0:k=0 A@0:k=0 A@0:k=0 B@1:k=0"), "either")
    assert sorted((m["ids"]["b"], m["ids"]["t"]) for m in got if m["pattern"] == "q") == [
        (0, "p[0]"), (1, "p[0]"), (2, "p[0]"),
    ]


@pytest.mark.parametrize("tie", ["arrival", "strict", "either"])
def test_end_negation_inside_a_count_window_that_a_later_event_of_its_group_closes(tie):
    # issue 43. {a0, b2}: B3 (ts 7 > 5, pos 3 < 0 + 4) lies after b2 inside the window:
    # no match. Under either, A4 of B3's timestamp group closes that window (the engine
    # used to emit {a0, b2} there, before B3's group was matched). {a0, b3}: nothing after
    # b3 inside positions 0..3; {a2, b3}: nothing after b3 inside 2..5. (No two B tie.)
    p = pat(SEQ(ref("B", "a"), ref("B", "b"), neg("B", "n")), window=within_events(4))
    assert ids(p, stream("B@4 A@5 B@5 B@7 A@7"), tie) == want({"a": 0, "b": 3}, {"a": 2, "b": 3})


@pytest.mark.parametrize("tie", ["arrival", "strict", "either"])
def test_end_negation_closed_by_its_own_group_counts_only_the_events_inside_the_window(tie):
    p = pat(SEQ(ref("A", "a"), neg("C", "c")), window=within_events(2))
    # C1 (ts 1 > 0, pos 1 < 0 + 2) is inside a0's window; X2, of C1's group, closes it
    assert ids(p, stream("A@0 C@1 X@1"), tie) == want()
    # here C2, of X1's group, lies past the window (positions 0..1): {a0} stands
    assert ids(p, stream("A@0 X@1 C@1"), tie) == want({"a": 0})
