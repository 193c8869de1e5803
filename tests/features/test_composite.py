"""Composite events: RETURN types feeding other patterns.

Every hand case runs on every matcher (the ``matcher`` fixture in conftest.py); the
expected match sets were worked out by hand from docs/SEMANTICS.md.
"""

from __future__ import annotations

import pytest

from petricep.lang.ast import Pattern
from tests.features.scenario import (
    MATCH,
    SEQ,
    _key,
    arith,
    cmp,
    f,
    neg,
    pat,
    ref,
    returns,
    stream,
    want,
    within,
    within_events,
)


def _producer() -> Pattern:
    return pat(
        SEQ(ref("A", "a"), ref("B", "b")),
        returns=returns("T", s=arith(f("a"), "+", f("b"))),
        name="p1",
    )


COMPOSITE_EVENTS = "A@0:x=1 B@1:x=1 A@2:x=2 B@3:x=2 C@4"


def test_composite_events_feed_a_second_pattern():
    consumer = pat(SEQ(ref("T", "t"), ref("C", "c")), cmp(f("t", "s"), ">", 2), name="p2")
    out = MATCH([_producer(), consumer], stream(COMPOSITE_EVENTS))
    p1 = {_key(m["ids"]): m["attrs"] for m in out if m["pattern"] == "p1"}
    assert p1 == {
        _key({"a": 0, "b": 1}): {"s": 2},
        _key({"a": 0, "b": 3}): {"s": 3},
        _key({"a": 2, "b": 3}): {"s": 4},
    }
    # composite ids name the pattern and the ids of its match, in variable order
    p2 = [m for m in out if m["pattern"] == "p2"]
    assert {_key(m["ids"]) for m in p2} == want({"t": "p1[0,3]", "c": 4}, {"t": "p1[2,3]", "c": 4})
    assert all(m["start"] == 3 and m["end"] == 4 for m in p2)  # composite ts = emitting b3


def test_composite_event_follows_its_emitting_event():
    consumer = pat(SEQ(ref("B", "b"), ref("T", "t")), name="p2")
    evs = stream(COMPOSITE_EVENTS)
    out = MATCH([_producer(), consumer], evs)
    assert {_key(m["ids"]) for m in out if m["pattern"] == "p2"} == want(
        {"b": 1, "t": "p1[0,1]"},
        {"b": 1, "t": "p1[0,3]"},
        {"b": 1, "t": "p1[2,3]"},
        {"b": 3, "t": "p1[0,3]"},
        {"b": 3, "t": "p1[2,3]"},
    )
    # strict: same ts as the emitting event is not after it
    out = MATCH([_producer(), consumer], evs, "strict")
    assert {_key(m["ids"]) for m in out if m["pattern"] == "p2"} == want(
        {"b": 1, "t": "p1[0,3]"}, {"b": 1, "t": "p1[2,3]"}
    )


def test_composite_event_uses_pos_of_emitting_event_for_count_windows():
    evs = stream(COMPOSITE_EVENTS)
    for n, expected in ((1, set()), (2, want({"t": "p1[0,3]", "c": 4}, {"t": "p1[2,3]", "c": 4}))):
        consumer = pat(
            SEQ(ref("T", "t"), ref("C", "c")), cmp(f("t", "s"), ">", 2), window=within_events(n), name="p2"
        )
        out = MATCH([consumer, _producer()], evs)  # run order does not matter
        assert {_key(m["ids"]) for m in out if m["pattern"] == "p2"} == expected


def test_composite_events_at_one_point_follow_pattern_order():
    one = pat(SEQ(ref("A", "a")), returns=returns("T", x=f("a")), name="p1")
    two = pat(SEQ(ref("A", "a")), returns=returns("T", x=f("a")), name="p2")
    both = pat(SEQ(ref("T", "t"), ref("T", "u")), name="q")
    out = MATCH([one, two, both], stream("A@0:x=1"))
    assert {_key(m["ids"]) for m in out if m["pattern"] == "q"} == want({"t": "p1[0]", "u": "p2[0]"})
    out = MATCH([two, one, both], stream("A@0:x=1"))
    assert {_key(m["ids"]) for m in out if m["pattern"] == "q"} == want({"t": "p2[0]", "u": "p1[0]"})


def test_end_negation_composite_is_emitted_when_the_window_closes():
    producer = pat(
        SEQ(ref("A", "a"), neg("C", "c")), window=within(2), returns=returns("T", x=f("a")), name="p1"
    )
    consumer = pat(SEQ(ref("T", "t"), ref("B", "b")), name="p2")
    # a0 is emitted at D@3 (first ts > 0 + 2), pos 2: B1 is before it, B3 after.
    # a4 is emitted at end of stream (no event with ts > 7): nothing follows it.
    evs = stream("A@0:x=1 B@1 D@3 B@4 A@5:x=2")
    out = MATCH([producer, consumer], evs)
    assert {_key(m["ids"]) for m in out if m["pattern"] == "p1"} == want({"a": 0}, {"a": 4})
    assert {_key(m["ids"]) for m in out if m["pattern"] == "p2"} == want({"t": "p1[0]", "b": 3})
    assert [m["start"] for m in out if m["pattern"] == "p2"] == [3]


def test_return_type_cycle_is_rejected():
    p = pat(SEQ(ref("U", "u")), returns=returns("T", x=f("u")), name="p")
    q = pat(SEQ(ref("T", "t")), returns=returns("U", x=f("t")), name="q")
    with pytest.raises(ValueError):
        MATCH([p, q], stream("T@0:x=1 U@1:x=1"))
