"""Kleene closure: sub-lists, iteration conditions, indexes and aggregates.

Every hand case runs on every matcher (the ``matcher`` fixture in conftest.py); the
expected match sets were worked out by hand from docs/SEMANTICS.md.
"""

from __future__ import annotations

from typing import Any

from petricep.lang.ast import Not
from tests.features.scenario import SEQ, agg, cmp, f, ids, neg, pat, plus, ref, stream, want

KLEENE_EVENTS = "A@0:x=1 A@1:x=3 A@2:x=2 B@3"


def kleene_ids(*conditions: Any) -> set[str]:
    return ids(pat(SEQ(plus("A", "a"), ref("B", "b")), *conditions), stream(KLEENE_EVENTS))


def lists(*ls: list[int]) -> set[str]:
    return want(*({"a": lst, "b": 3} for lst in ls))


def test_kleene_all_sublists():
    assert kleene_ids() == lists([0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2])


def test_kleene_iteration_condition_with_previous_element():
    # x along the list: 1, 3, 2: increasing sub-lists only
    assert kleene_ids(cmp(f("a", "x", "i"), ">", f("a", "x", "i-1"))) == lists([0], [1], [2], [0, 1], [0, 2])


def test_kleene_iteration_condition_on_current_element():
    # a[i].x >= 2 for every element (also i = 1)
    assert kleene_ids(cmp(f("a", "x", "i"), ">=", 2)) == lists([1], [2], [1, 2])


def test_kleene_first_and_last_element():
    assert kleene_ids(cmp(f("a", "x", 1), "=", 1)) == lists([0], [0, 1], [0, 2], [0, 1, 2])
    assert kleene_ids(cmp(f("a", "x", "last"), "=", 2)) == lists([2], [0, 2], [1, 2], [0, 1, 2])


def test_kleene_constant_index_past_the_end_is_false():
    assert kleene_ids(cmp(f("a", "x", 2), "=", 3)) == lists([0, 1], [0, 1, 2])


def test_kleene_constant_index_past_the_end_reading_under_not():
    # reading chosen: the comparison reading a missing element is false, so NOT makes it
    # true: every list with a[2].x != 3 (all but [0,1], [0,1,2]) including singletons
    assert kleene_ids(Not(cmp(f("a", "x", 2), "=", 3))) == lists([0], [1], [2], [0, 2], [1, 2])


def test_kleene_whole_list_aggregates():
    assert kleene_ids(cmp(agg("count", "a"), "=", 2)) == lists([0, 1], [0, 2], [1, 2])
    assert kleene_ids(cmp(agg("sum", "a"), ">=", 5)) == lists([1, 2], [0, 1, 2])
    # avg 2: [2], [0,1] (1,3), [0,1,2] (1,3,2)
    assert kleene_ids(cmp(agg("avg", "a"), "=", 2)) == lists([2], [0, 1], [0, 1, 2])
    assert kleene_ids(cmp(agg("min", "a"), "=", 2)) == lists([2], [1, 2])
    assert kleene_ids(cmp(agg("max", "a"), "=", 3)) == lists([1], [0, 1], [1, 2], [0, 1, 2])


def test_kleene_prefix_aggregates():
    # a[i].x > min(a[..i-1].x), skipped for i = 1: [1,2] fails (2 > 3), [0,1,2] holds (2 > 1)
    assert kleene_ids(cmp(f("a", "x", "i"), ">", agg("min", "a", prev=True))) == lists(
        [0], [1], [2], [0, 1], [0, 2], [0, 1, 2]
    )
    # a[i].x > max(a[..i-1].x): [0,1,2] fails at i = 3 (2 > 3)
    assert kleene_ids(cmp(f("a", "x", "i"), ">", agg("max", "a", prev=True))) == lists(
        [0], [1], [2], [0, 1], [0, 2]
    )
    # a[i].x > sum(a[..i-1].x): [0,1] (3 > 1), [0,2] (2 > 1); [0,1,2] fails (2 > 4)
    assert kleene_ids(cmp(f("a", "x", "i"), ">", agg("sum", "a", prev=True))) == lists(
        [0], [1], [2], [0, 1], [0, 2]
    )
    # count(a[..i-1]) = i - 1: a[i].x > count(a[..i-1]): [1,2] 2 > 1 ok; [0,1,2]: 1>0, 3>1, 2>2 fails
    assert kleene_ids(cmp(f("a", "x", "i"), ">", agg("count", "a", prev=True))) == lists(
        [0], [1], [2], [0, 1], [0, 2], [1, 2]
    )


def test_kleene_iteration_condition_against_another_variable():
    evs = stream("B@0:x=1 A@1:x=1 A@2:x=2 A@3:x=3")
    p = pat(SEQ(ref("B", "b"), plus("A", "a")), cmp(f("a", "x", "i"), ">", f("b")))
    assert ids(p, evs) == want(*({"b": 0, "a": lst} for lst in ([2], [3], [2, 3])))


def test_kleene_between_negation_uses_last_and_first_elements():
    # SEQ(A+ a[], !(C c), B b): only C after the last element of a counts
    p = pat(SEQ(plus("A", "a"), neg("C", "c"), ref("B", "b")))
    assert ids(p, stream("A@0 C@1 A@2 B@3")) == want({"a": [2], "b": 3}, {"a": [0, 2], "b": 3})
