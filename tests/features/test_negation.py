"""Negation: in the middle, at the start and at the end, with windows, conditions, partitions and OR.

Every hand case runs on every matcher (the ``matcher`` fixture in conftest.py); the
expected match sets were worked out by hand from docs/SEMANTICS.md.
"""

from __future__ import annotations

from tests.features.scenario import (
    AND,
    OR,
    SEQ,
    cmp,
    f,
    ids,
    neg,
    pat,
    ref,
    stream,
    want,
    within,
    within_events,
)


def test_negation_in_the_middle():
    evs = stream("A@0 C@1 B@2 A@3 B@4")
    p = pat(SEQ(ref("A", "a"), neg("C", "c"), ref("B", "b")))
    assert ids(p, evs) == want({"a": 3, "b": 4})


def test_negation_condition_mentions_the_negated_variable():
    evs = stream("A@0:x=1 C@1:x=0 B@2 C@3:x=5 B@4")
    p = pat(SEQ(ref("A", "a"), neg("C", "c"), ref("B", "b")), cmp(f("c"), ">", f("a")))
    # a0-b2: C1 has 0 > 1 false: no violation. a0-b4: C3 has 5 > 1: violated.
    assert ids(p, evs) == want({"a": 0, "b": 2})


def test_negation_with_partition_only_counts_same_partition():
    evs = stream("A@0:k=0 C@1:k=1 B@2:k=0 A@3:k=1 C@4:k=0 B@5:k=1 B@6:k=0")
    p = pat(SEQ(ref("A", "a"), neg("C", "c"), ref("B", "b")), partition=("k",))
    # a0-b2: C1 is k=1; a0-b6: C4 is k=0 -> violated; a3-b5: C4 is k=0 -> fine
    assert ids(p, evs) == want({"a": 0, "b": 2}, {"a": 3, "b": 5})


def test_negated_type_equal_to_a_positive_type():
    # the negated event is any A not bound in the match
    p = pat(SEQ(ref("A", "a"), neg("A", "n"), ref("A", "b")))
    assert ids(p, stream("A@0 A@1 A@2")) == want({"a": 0, "b": 1}, {"a": 1, "b": 2})


def test_two_negations_between_the_same_positives():
    p = pat(SEQ(ref("A", "a"), neg("C", "c"), neg("D", "d"), ref("B", "b")))
    evs = stream("A@0 D@1 B@2 A@3 B@4 A@5 C@6 B@7")
    # a0-b2: D1 between; a3-b4 clean; a0/a3 with b4 and b7: D1 or C6 between; a5-b7: C6
    assert ids(p, evs) == want({"a": 3, "b": 4})


def test_negation_at_start_with_time_window():
    evs = stream("C@0 A@2 B@3 A@4 B@6")
    p = pat(SEQ(neg("C", "c"), ref("A", "a"), ref("B", "b")), window=within(3))
    # positive matches: a1-b2 (span 1), a3-b4 (span 2); a1-b4 spans 4.
    # a1-b2: C0 has ts >= 3-3 = 0 and is before a1 -> violated. a3-b4: needs ts >= 3.
    assert ids(p, evs) == want({"a": 3, "b": 4})


def test_negation_at_start_without_window_sees_everything_before():
    evs = stream("C@0 A@2 B@3 A@4 B@6")
    assert ids(pat(SEQ(neg("C", "c"), ref("A", "a"), ref("B", "b"))), evs) == set()


def test_negation_at_start_with_count_window():
    p = pat(SEQ(neg("C", "c"), ref("A", "a"), ref("B", "b")), window=within_events(3))
    assert ids(p, stream("C@0 A@0 B@0")) == set()  # C0: 0 > 2-3
    assert ids(p, stream("C@0 D@0 A@0 B@0")) == want({"a": 2, "b": 3})  # C0: 0 > 3-3 fails


def test_negation_at_end_with_time_window():
    evs = stream("A@0 B@1 C@3 A@4 B@5 C@8")
    p = pat(SEQ(ref("A", "a"), ref("B", "b"), neg("C", "c")), window=within(3))
    # a0-b1: C3 has ts <= 0+3 -> violated; a3-b4: C8 > 4+3 -> fine; a0-b4 spans 5
    assert ids(p, evs) == want({"a": 3, "b": 4})


def test_negation_at_end_without_window_looks_to_end_of_stream():
    evs = stream("A@0 B@1 C@3 A@4 B@5 C@8")
    assert ids(pat(SEQ(ref("A", "a"), ref("B", "b"), neg("C", "c"))), evs) == set()
    assert ids(pat(SEQ(ref("A", "a"), ref("B", "b"), neg("C", "c"))), stream("C@0 A@1 B@2")) == want(
        {"a": 1, "b": 2}
    )


def test_negation_at_end_with_count_window():
    p = pat(SEQ(ref("A", "a"), ref("B", "b"), neg("C", "c")), window=within_events(3))
    assert ids(p, stream("A@0 B@0 C@0")) == set()  # C2: 2 < 0+3
    assert ids(p, stream("A@0 B@0 D@0 C@0")) == want({"a": 0, "b": 1})  # C3: 3 < 3 fails


def test_negation_at_end_with_condition_and_partition():
    evs = stream("A@0:x=1,k=0 B@1:k=0 C@2:x=2,k=0 C@3:x=1,k=1 A@4:x=2,k=1 B@5:k=1 C@6:x=2,k=0")
    p = pat(
        SEQ(ref("A", "a"), ref("B", "b"), neg("C", "c")),
        cmp(f("c"), "=", f("a")),
        partition=("k",),
        window=within(4),
    )
    # a0-b1 (k=0): C2 has x 2 != 1, C3 is k=1 -> match.
    # a4-b5 (k=1): C6 is k=0 (and has x = a.x = 2) -> match.
    assert ids(p, evs) == want({"a": 0, "b": 1}, {"a": 4, "b": 5})


def test_negation_condition_with_variable_unbound_by_or_is_vacuous():
    # a0-d2: the conjunct c.x = b.x mentions unbound b: holds, so every C between violates.
    # a0-b3: C1.x = 5 != b.x = 4: no violation.
    evs = stream("A@0 C@1:x=5 D@2 B@3:x=4")
    p = pat(
        SEQ(ref("A", "a"), neg("C", "c"), OR(ref("B", "b"), ref("D", "d"))),
        cmp(f("c"), "=", f("b")),
    )
    assert ids(p, evs) == want({"a": 0, "b": 3})


def test_negation_only_applies_in_its_or_branch():
    p = pat(OR(SEQ(ref("A", "a"), neg("C", "c"), ref("B", "b")), SEQ(ref("A", "d"), ref("D", "e"))))
    assert ids(p, stream("A@0 C@1 B@2 D@3")) == want({"d": 0, "e": 3})


def test_negation_at_end_of_nested_seq_reading():
    # reading chosen: inside AND(SEQ(A a, !(C c)), B b) the negation has P = a and no Q, so
    # it looks from a to first.ts + w (first: the whole match's first event).
    p = pat(AND(SEQ(ref("A", "a"), neg("C", "c")), ref("B", "b")), window=within(3))
    assert ids(p, stream("B@0 A@1 C@3")) == set()  # C3 <= 0 + 3
    assert ids(p, stream("B@0 A@1 C@4")) == want({"a": 1, "b": 0})
