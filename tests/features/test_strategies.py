"""Selection strategies: skip-till-next-match, strict and partition contiguity.

Every hand case runs on every matcher (the ``matcher`` fixture in conftest.py); the
expected match sets were worked out by hand from docs/SEMANTICS.md.
"""

from __future__ import annotations

import dataclasses

from tests.features.scenario import (
    AND,
    NEXT,
    OR,
    PART,
    SEQ,
    STRICT,
    agg,
    cmp,
    f,
    ids,
    pat,
    plus,
    ref,
    stream,
    want,
)


def test_skip_till_next_match_classic_kleene():
    p = pat(SEQ(plus("A", "a"), ref("B", "b")), strategy=NEXT)
    assert ids(p, stream("A@0 A@1 B@2")) == want({"a": [0, 1], "b": 2}, {"a": [1], "b": 2})


def test_skip_till_next_match_takes_the_next_b():
    p = pat(SEQ(ref("A", "a"), ref("B", "b")), strategy=NEXT)
    # a0-b3 skips b2, which could extend {a0}
    assert ids(p, stream("A@0 A@1 B@2 B@3")) == want({"a": 0, "b": 2}, {"a": 1, "b": 2})


def test_skip_till_next_match_skips_events_that_fail_conditions():
    p = pat(SEQ(ref("A", "a"), ref("B", "b")), cmp(f("b"), ">", f("a")), strategy=NEXT)
    assert ids(p, stream("A@0:x=1 B@1:x=0 B@2:x=2 B@3:x=3")) == want({"a": 0, "b": 2})


def test_skip_till_next_match_kleene_with_iteration_condition():
    p = pat(SEQ(plus("A", "a"), ref("B", "b")), cmp(f("a", "x", "i"), ">", f("a", "x", "i-1")), strategy=NEXT)
    # any-match: [0] [1] [2] [0,2] [1,2] (x = 1, 0, 2). [0]: A2 (2 > 1) extends it; [1]: A2
    # (2 > 0) extends it; [0,2]: A1 (0 > 1 false) does not extend {a0}.
    assert ids(p, stream("A@0:x=1 A@1:x=0 A@2:x=2 B@3")) == want(
        {"a": [2], "b": 3}, {"a": [0, 2], "b": 3}, {"a": [1, 2], "b": 3}
    )


def test_skip_till_next_match_whole_list_condition_waits_for_the_list_to_close():
    # count(a[]) = 1 is not checked while a[] can grow: A1 extends {a: [a0]}
    p = pat(SEQ(plus("A", "a"), ref("B", "b")), cmp(agg("count", "a"), "=", 1), strategy=NEXT)
    assert ids(p, stream("A@0 A@1 B@2")) == want({"a": [1], "b": 2})


def test_skip_till_next_match_first_element_condition_is_checked_at_once():
    # a[1].x = 3 is known as soon as a[] starts: A1 (x=0) cannot start it
    p = pat(SEQ(ref("C", "c"), plus("A", "a"), ref("B", "b")), cmp(f("a", "x", 1), "=", 3), strategy=NEXT)
    assert ids(p, stream("C@0 A@1:x=0 A@2:x=3 B@3")) == want({"c": 0, "a": [2], "b": 3})


def test_skip_till_next_match_with_or():
    # {a0, c2} skips B1, which could extend {a0} through the other OR branch
    p = pat(SEQ(ref("A", "a"), OR(ref("B", "b"), ref("C", "c"))), strategy=NEXT)
    assert ids(p, stream("A@0 B@1 C@2")) == want({"a": 0, "b": 1})


def test_skip_till_next_match_with_partition():
    p = pat(SEQ(ref("A", "a"), ref("B", "b")), partition=("k",), strategy=NEXT)
    assert ids(p, stream("A@0:k=0 B@1:k=1 B@2:k=0")) == want({"a": 0, "b": 2})


def test_skip_till_next_match_with_and():
    # {b0, a2} skips A1, which could take a
    p = pat(AND(ref("A", "a"), ref("B", "b")), strategy=NEXT)
    assert ids(p, stream("B@0 A@1 A@2")) == want({"a": 1, "b": 0})


def test_skip_till_next_match_under_strict_ties():
    # strict: B1 (ts 0) cannot follow a0 (ts 0), so skipping it is fine
    p = pat(SEQ(ref("A", "a"), ref("B", "b")), strategy=NEXT)
    evs = stream("A@0 B@0 B@1")
    assert ids(p, evs, "strict") == want({"a": 0, "b": 2})
    assert ids(p, evs, "arrival") == want({"a": 0, "b": 1})


def test_strict_contiguity():
    p = pat(SEQ(ref("A", "a"), ref("B", "b")), strategy=STRICT)
    assert ids(p, stream("A@0 C@1 B@2 A@3 B@4")) == want({"a": 3, "b": 4})
    k = pat(SEQ(plus("A", "a"), ref("B", "b")), strategy=STRICT)
    assert ids(k, stream("A@0 A@1 B@2")) == want({"a": [0, 1], "b": 2}, {"a": [1], "b": 2})
    assert ids(k, stream("A@0 A@1 C@2 A@3 B@4")) == want({"a": [3], "b": 4})


def test_partition_contiguity():
    evs = stream("A@0:k=0 C@1:k=1 B@2:k=0 A@3:k=1 B@4:k=0")
    p = pat(SEQ(ref("A", "a"), ref("B", "b")), partition=("k",), strategy=PART)
    # a0-b2: only C1 (k=1) between; a0-b4: B2 (k=0) between
    assert ids(p, evs) == want({"a": 0, "b": 2})
    assert ids(dataclasses.replace(p, strategy=STRICT), evs) == set()
    # without [k] it is strict contiguity
    q = pat(SEQ(ref("A", "a"), ref("B", "b")), strategy=PART)
    assert ids(q, stream("A@0 C@1 B@2 A@3 B@4")) == want({"a": 3, "b": 4})
