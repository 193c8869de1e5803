"""SEQ, AND and OR; bound events are distinct; nested SEQ is flattened; output fields.

Every hand case runs on every matcher (the ``matcher`` fixture in conftest.py); the
expected match sets were worked out by hand from docs/SEMANTICS.md.
"""

from __future__ import annotations

from tests.features.scenario import (
    AND,
    OR,
    SEQ,
    _key,
    agg,
    arith,
    f,
    ids,
    neg,
    pat,
    plus,
    ref,
    returns,
    run,
    stream,
    want,
)


def test_seq_pairs_every_earlier_a_with_every_later_b():
    evs = stream("A@0 B@1 A@2 B@3")
    assert ids(pat(SEQ(ref("A", "a"), ref("B", "b"))), evs) == want(
        {"a": 0, "b": 1}, {"a": 0, "b": 3}, {"a": 2, "b": 3}
    )


def test_and_has_no_order():
    evs = stream("A@0 B@1 A@2 B@3")
    assert ids(pat(AND(ref("A", "a"), ref("B", "b"))), evs) == want(
        {"a": 0, "b": 1}, {"a": 0, "b": 3}, {"a": 2, "b": 1}, {"a": 2, "b": 3}
    )


def test_or_binds_exactly_one_child():
    evs = stream("A@0 B@1")
    assert ids(pat(OR(ref("A", "a"), ref("B", "b"))), evs) == want({"a": 0}, {"b": 1})
    evs = stream("A@0 C@1 B@2")
    p = pat(SEQ(ref("A", "a"), OR(ref("B", "b"), ref("C", "c"))))
    assert ids(p, evs) == want({"a": 0, "c": 1}, {"a": 0, "b": 2})


def test_bound_events_are_distinct():
    evs = stream("A@0 A@1 A@2")
    assert ids(pat(SEQ(ref("A", "a"), ref("A", "b"))), evs) == want(
        {"a": 0, "b": 1}, {"a": 0, "b": 2}, {"a": 1, "b": 2}
    )
    # AND over one type: both assignments, never the same event twice
    assert ids(pat(AND(ref("A", "a"), ref("A", "b"))), stream("A@0 A@1")) == want(
        {"a": 0, "b": 1}, {"a": 1, "b": 0}
    )
    assert ids(pat(AND(plus("A", "a"), ref("A", "b"))), stream("A@0 A@1")) == want(
        {"a": [0], "b": 1}, {"a": [1], "b": 0}
    )


def test_nested_seq_in_seq_is_flattened():
    # SEQ(A a, SEQ(!(C c), B b)) == SEQ(A a, !(C c), B b): the C before a does not count.
    # (Were the inner SEQ kept, its negation would have no P and, with no window, would
    # see every C before b.)
    evs = stream("C@0 A@1 B@2")
    p = pat(SEQ(ref("A", "a"), SEQ(neg("C", "c"), ref("B", "b"))))
    assert ids(p, evs) == want({"a": 1, "b": 2})
    assert ids(p, stream("A@0 C@1 B@2")) == set()


def test_seq_of_compound_children_orders_all_their_events():
    # SEQ(AND(A a, B b), C c): both a and b before c, any order between a and b
    evs = stream("B@0 A@1 C@2 A@3 C@4")
    p = pat(SEQ(AND(ref("A", "a"), ref("B", "b")), ref("C", "c")))
    assert ids(p, evs) == want({"a": 1, "b": 0, "c": 2}, {"a": 1, "b": 0, "c": 4}, {"a": 3, "b": 0, "c": 4})


def test_output_fields():
    evs = stream("A@1:x=4 B@3:x=1 B@5:x=2")
    p = pat(
        SEQ(ref("A", "a"), plus("B", "b")),
        returns=returns(
            "T",
            n=agg("count", "b"),
            s=agg("sum", "b"),
            first=f("b", "x", 1),
            last=f("b", "x", "last"),
            half=arith(f("a"), "/", 2),
        ),
    )
    out = {_key(m["ids"]): m for m in run(p, evs)}
    assert set(out) == want({"a": 0, "b": [1]}, {"a": 0, "b": [2]}, {"a": 0, "b": [1, 2]})
    m = out[_key({"a": 0, "b": [1, 2]})]
    assert m["pattern"] == "p" and m["start"] == 1 and m["end"] == 5
    assert m["attrs"] == {"n": 2, "s": 3, "first": 1, "last": 2, "half": 2.0}
    plain = run(pat(SEQ(ref("A", "a"), ref("B", "b"))), evs)
    assert all(m["attrs"] == {} for m in plain)
