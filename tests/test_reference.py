"""Hand cases that pin the brute-force reference matcher — and the engine — to docs/SEMANTICS.md.

Every hand case runs twice: on the reference matcher and on the embedded engine (the
``matcher`` fixture); the hypothesis properties at the end check the reference alone.

Every expected match set below was worked out by hand from the rules of SEMANTICS.md; the
comment next to it gives the reasoning. Streams are written as ``"A@0 B@1:x=3,k=1"``:
type ``@`` timestamp, optional attributes; ``pos`` and ``id`` are the index in the string.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petricep.events import Event
from petricep.lang.ast import (
    IDX_CONST,
    IDX_CUR,
    IDX_LAST,
    IDX_PREV,
    WIN_COUNT,
    WIN_DURATION,
    WIN_TIME,
    Agg,
    And,
    Attr,
    BinOp,
    BoolOp,
    Compare,
    EventRef,
    Index,
    Neg,
    Not,
    Num,
    Or,
    Pattern,
    Return,
    ReturnField,
    Seq,
    Str,
    Window,
)
from tests.engines import matcher_run
from tests.reference import reference_run
from tests.strategies import pattern_text, patterns, streams

# ============================================================================ helpers


MATCH = reference_run


@pytest.fixture(autouse=True, params=["reference", "embedded"])
def matcher(request: pytest.FixtureRequest) -> Any:
    """Hand cases run on every matcher; hypothesis properties only on the reference."""
    global MATCH
    if getattr(request.function, "is_hypothesis_test", False):
        if request.param != "reference":
            pytest.skip("property of the reference matcher")
        MATCH = reference_run
        yield
        return
    MATCH = reference_run if request.param == "reference" else matcher_run(request.param)
    yield
    MATCH = reference_run


def stream(spec: str) -> list[Event]:
    events = []
    for pos, token in enumerate(spec.split()):
        head, _, tail = token.partition(":")
        etype, _, ts = head.partition("@")
        attrs: dict[str, Any] = {}
        for pair in filter(None, tail.split(",")):
            key, _, raw = pair.partition("=")
            attrs[key] = _value(raw)
        events.append(Event(etype, _value(ts), pos, None, attrs))
    return events


def _value(raw: str) -> Any:
    if raw.startswith("'"):
        return raw.strip("'")
    try:
        return int(raw)
    except ValueError:
        return float(raw)


def ref(t: str, v: str) -> EventRef:
    return EventRef(t, v)


def plus(t: str, v: str) -> EventRef:
    return EventRef(t, v, kleene=True)


def neg(t: str, v: str) -> EventRef:
    return EventRef(t, v, negated=True)


def SEQ(*children: Any) -> Seq:
    return Seq(tuple(children))


def AND(*children: Any) -> And:
    return And(tuple(children))


def OR(*children: Any) -> Or:
    return Or(tuple(children))


def lit(v: Any) -> Any:
    if isinstance(v, str):
        return Str(v)
    if isinstance(v, (int, float)):
        return Num(v)
    return v


def f(var: str, field: str = "x", at: Any = None) -> Attr:
    """``var.field``; ``at``: 1, 2, ... / "i" / "i-1" / "last" for a Kleene element."""
    if at is None:
        return Attr(var, field)
    if isinstance(at, int):
        return Attr(var, field, Index(IDX_CONST, at))
    return Attr(var, field, Index({"i": IDX_CUR, "i-1": IDX_PREV, "last": IDX_LAST}[at]))


def cmp(left: Any, op: str, right: Any) -> Compare:
    return Compare(op, lit(left), lit(right))


def arith(left: Any, op: str, right: Any) -> BinOp:
    return BinOp(op, lit(left), lit(right))


def agg(func: str, var: str, field: str | None = "x", prev: bool = False) -> Agg:
    return Agg(func, var, None if func == "count" else field, upto_prev=prev)


def pat(
    structure: Any,
    *conditions: Any,
    partition: tuple[str, ...] = (),
    strategy: str = "skip-till-any-match",
    window: Window | None = None,
    returns: Return | None = None,
    name: str = "p",
) -> Pattern:
    return Pattern(name, structure, tuple(conditions), partition, strategy, window, returns)


def within(n: float) -> Window:
    return Window(WIN_TIME, n)


def within_events(n: int) -> Window:
    return Window(WIN_COUNT, n)


def returns(type_: str, **fields: Any) -> Return:
    return Return(type_, tuple(ReturnField(k, lit(v)) for k, v in fields.items()))


def _key(ids: dict) -> str:
    return json.dumps(ids, sort_keys=True)


def run(pattern: Pattern, events: list[Event], tie: str = "arrival") -> list[dict]:
    out = MATCH([pattern], events, tie)
    assert len({json.dumps(m, sort_keys=True) for m in out}) == len(out), "a match came out twice"
    return out


def ids(pattern: Pattern, events: list[Event], tie: str = "arrival") -> set[str]:
    return {_key(m["ids"]) for m in run(pattern, events, tie)}


def want(*matches: dict) -> set[str]:
    return {_key(m) for m in matches}


NEXT = "skip-till-next-match"
STRICT = "strict-contiguity"
PART = "partition-contiguity"


# ============================================================================ structure


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


# ============================================================================ conditions


def test_comparisons_and_arithmetic():
    evs = stream("A@0:x=1 A@1:x=3 B@2:x=3 B@3:x=5")
    p = pat(SEQ(ref("A", "a"), ref("B", "b")), cmp(f("b"), "=", arith(f("a"), "+", 2)))
    # 1+2 = 3 (b2), 3+2 = 5 (b3); a0-b3 and a1-b2 fail
    assert ids(p, evs) == want({"a": 0, "b": 2}, {"a": 1, "b": 3})


def test_true_division_python_modulo_and_unary_minus():
    one = pat(SEQ(ref("A", "a")), cmp(arith(f("a"), "/", 2), "=", 1.5))
    assert ids(one, stream("A@0:x=3 A@1:x=2")) == want({"a": 0})
    # Python modulo: -1 % 3 == 2 (C would say -1)
    mod = pat(SEQ(ref("A", "a")), cmp(BinOp("%", Neg(f("a")), Num(3)), "=", 2))
    assert ids(mod, stream("A@0:x=1 A@1:x=2")) == want({"a": 0})


def test_boolean_operators():
    evs = stream("A@0:x=0 A@1:x=1 A@2:x=2 A@3:x=3")
    p = pat(
        SEQ(ref("A", "a")),
        BoolOp("or", (cmp(f("a"), "=", 0), BoolOp("and", (cmp(f("a"), ">", 1), Not(cmp(f("a"), "=", 3)))))),
    )
    assert ids(p, evs) == want({"a": 0}, {"a": 2})


def test_ts_and_id_fields():
    evs = stream("A@0 B@2 B@5")
    p = pat(SEQ(ref("A", "a"), ref("B", "b")), cmp(arith(f("b", "ts"), "-", f("a", "ts")), "<=", 2))
    assert ids(p, evs) == want({"a": 0, "b": 1})
    assert ids(pat(SEQ(ref("B", "b")), cmp(f("b", "id"), "=", 2)), evs) == want({"b": 2})


def test_number_never_equals_string_and_ordering_them_is_an_error():
    evs = stream("A@0:s='1' A@1:s=1")
    assert ids(pat(SEQ(ref("A", "a")), cmp(f("a", "s"), "=", 1)), evs) == want({"a": 1})
    assert ids(pat(SEQ(ref("A", "a")), cmp(f("a", "s"), "!=", 1)), evs) == want({"a": 0})
    assert ids(pat(SEQ(ref("A", "a")), cmp(f("a", "s"), "=", "1")), evs) == want({"a": 0})
    with pytest.raises(TypeError):
        run(pat(SEQ(ref("A", "a")), cmp(f("a", "s"), "<", 2)), evs)


def test_conjunct_with_variable_unbound_by_or_holds_vacuously():
    evs = stream("A@0 B@1:x=0 C@2")
    p = pat(SEQ(ref("A", "a"), OR(ref("B", "b"), ref("C", "c"))), cmp(f("b"), "=", 9))
    assert ids(p, evs) == want({"a": 0, "c": 2})


def test_partition_attribute():
    evs = stream("A@0:k=0 B@1:k=1 B@2:k=0 A@3:k=1 B@4:k=1")
    p = pat(SEQ(ref("A", "a"), ref("B", "b")), partition=("k",))
    assert ids(p, evs) == want({"a": 0, "b": 2}, {"a": 3, "b": 4})


# ============================================================================ windows


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


# ============================================================================ tie rules


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


# ============================================================================ negation


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


# ============================================================================ Kleene

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


# ============================================================================ strategies


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


# ============================================================================ composite events


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
    # ids by emission: p1#0 at b1; at b3 (0,3) before (2,3) by positions -> p1#1, p1#2
    p2 = [m for m in out if m["pattern"] == "p2"]
    assert {_key(m["ids"]) for m in p2} == want({"t": "p1#1", "c": 4}, {"t": "p1#2", "c": 4})
    assert all(m["start"] == 3 and m["end"] == 4 for m in p2)  # composite ts = emitting b3


def test_composite_event_follows_its_emitting_event():
    consumer = pat(SEQ(ref("B", "b"), ref("T", "t")), name="p2")
    evs = stream(COMPOSITE_EVENTS)
    out = MATCH([_producer(), consumer], evs)
    assert {_key(m["ids"]) for m in out if m["pattern"] == "p2"} == want(
        {"b": 1, "t": "p1#0"},
        {"b": 1, "t": "p1#1"},
        {"b": 1, "t": "p1#2"},
        {"b": 3, "t": "p1#1"},
        {"b": 3, "t": "p1#2"},
    )
    # strict: same ts as the emitting event is not after it
    out = MATCH([_producer(), consumer], evs, "strict")
    assert {_key(m["ids"]) for m in out if m["pattern"] == "p2"} == want(
        {"b": 1, "t": "p1#1"}, {"b": 1, "t": "p1#2"}
    )


def test_composite_event_uses_pos_of_emitting_event_for_count_windows():
    evs = stream(COMPOSITE_EVENTS)
    for n, expected in ((1, set()), (2, want({"t": "p1#1", "c": 4}, {"t": "p1#2", "c": 4}))):
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
    assert {_key(m["ids"]) for m in out if m["pattern"] == "q"} == want({"t": "p1#0", "u": "p2#0"})
    out = MATCH([two, one, both], stream("A@0:x=1"))
    assert {_key(m["ids"]) for m in out if m["pattern"] == "q"} == want({"t": "p2#0", "u": "p1#0"})


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
    assert {_key(m["ids"]) for m in out if m["pattern"] == "p2"} == want({"t": "p1#0", "b": 3})
    assert [m["start"] for m in out if m["pattern"] == "p2"] == [3]


def test_return_type_cycle_is_rejected():
    p = pat(SEQ(ref("U", "u")), returns=returns("T", x=f("u")), name="p")
    q = pat(SEQ(ref("T", "t")), returns=returns("U", x=f("t")), name="q")
    with pytest.raises(ValueError):
        MATCH([p, q], stream("T@0:x=1 U@1:x=1"))


# ============================================================================ properties


def _set(matches: list[dict]) -> set[str]:
    return {json.dumps(m, sort_keys=True) for m in matches}


def _has_negation(p: Pattern) -> bool:
    return "!(" in pattern_text(p)


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(patterns(), streams())
def test_strategies_only_remove_matches(p, evs):
    any_match = _set(reference_run([dataclasses.replace(p, strategy="skip-till-any-match")], evs))
    nxt = _set(reference_run([dataclasses.replace(p, strategy=NEXT)], evs))
    part = _set(reference_run([dataclasses.replace(p, strategy=PART)], evs))
    strict = _set(reference_run([dataclasses.replace(p, strategy=STRICT)], evs))
    assert nxt <= any_match
    assert strict <= part <= any_match


@SETTINGS
@given(patterns(negation=False, strategies=("skip-till-any-match",)), streams())
def test_tie_rules_nest_without_negation(p, evs):
    strict = _set(reference_run([p], evs, "strict"))
    arrival = _set(reference_run([p], evs, "arrival"))
    either = _set(reference_run([p], evs, "either"))
    assert strict <= arrival <= either


@SETTINGS
@given(patterns(negation=False, strategies=("skip-till-any-match",)), streams())
def test_windows_and_conditions_only_remove_matches_without_negation(p, evs):
    base = _set(reference_run([dataclasses.replace(p, window=None, conditions=())], evs))
    assert _set(reference_run([dataclasses.replace(p, conditions=())], evs)) <= base
    assert _set(reference_run([dataclasses.replace(p, window=None)], evs)) <= base


@SETTINGS
@given(patterns(), streams(), st.sampled_from(("arrival", "strict")))
def test_every_match_is_well_formed(p, evs, tie):
    by_id = {e.id: e for e in evs}
    for m in reference_run([p], evs, tie):
        assert m["pattern"] == "p"
        bound = [by_id[i] for v in m["ids"].values() for i in (v if isinstance(v, list) else [v])]
        assert len({e.pos for e in bound}) == len(bound)
        assert m["start"] == min(e.ts for e in bound) and m["end"] == max(e.ts for e in bound)
        if p.partition:
            assert len({e.attrs["k"] for e in bound}) == 1
        if p.window is not None and p.window.kind == WIN_COUNT:
            assert max(e.pos for e in bound) - min(e.pos for e in bound) < p.window.value
        elif p.window is not None:
            assert m["end"] - m["start"] <= p.window.value
        for v in m["ids"].values():
            if isinstance(v, list):
                assert v == sorted(v)
        assert set(m["attrs"]) == ({f.name for f in p.returns.fields} if p.returns else set())


@SETTINGS
@given(patterns(), streams())
def test_pattern_text_prints_every_pattern(p, evs):
    text = pattern_text(p)
    assert text.startswith("PATTERN p: ")
    assert ("WITHIN" in text) == (p.window is not None)
    assert ("RETURN" in text) == (p.returns is not None)
    if _has_negation(p):
        assert any(r in text for r in ("!(A", "!(B", "!(C", "!(D"))


def test_pattern_text_example():
    p = pat(
        SEQ(ref("A", "a"), plus("B", "b"), neg("C", "c"), ref("D", "d")),
        cmp(f("b", "x", "i"), ">", f("b", "x", "i-1")),
        cmp(f("a"), "=", 3),
        BoolOp("or", (cmp(arith(f("a"), "+", 1), "<", f("d")), Not(cmp(agg("min", "b", prev=True), "=", 2)))),
        partition=("k",),
        strategy=NEXT,
        window=within(5),
        returns=returns("T", x=f("a")),
    )
    assert pattern_text(p) == (
        "PATTERN p: SEQ(A a, B+ b[], !(C c), D d)\n"
        "WHERE skip-till-next-match AND [k] AND b[i].x > b[i-1].x AND a.x = 3"
        " AND (a.x + 1 < d.x OR NOT (min(b[..i-1].x) = 2))\n"
        "WITHIN 5\n"
        "RETURN T(x = a.x)"
    )
    assert "WITHIN 5 EVENTS" in pattern_text(dataclasses.replace(p, window=within_events(5)))
    assert "WITHIN 5 s" in pattern_text(dataclasses.replace(p, window=Window(WIN_DURATION, 5, "s")))


def _unpruned_bindings(pattern: Pattern, events: list[Event], tie: str) -> set[str]:
    """The plain cross product of every variable's candidates, filtered once at the end:
    checks that the pruned search of the reference loses nothing."""
    from tests.reference import _all_items, _env, _holds, _Item, _Matcher

    items = [_Item(e, ((e.pos, 0),), i) for i, e in enumerate(events)]
    m = _Matcher(pattern, items, tie)
    out = set()
    for shape in m.shapes:
        options = []
        for r in shape.refs:
            cands = m.by_type.get(r.type, [])
            if r.kleene:
                subsets = []
                for size in range(1, len(cands) + 1):
                    subsets.extend(itertools.combinations(cands, size))
                options.append(subsets)
            else:
                options.append(cands)
        for combo in itertools.product(*options):
            binding = {r.var: v for r, v in zip(shape.refs, combo)}
            bound = _all_items(binding)
            if len({i.idx for i in bound}) != len(bound):
                continue
            if any(
                not m.before(a, b)
                for u, w in shape.prec
                for a in (binding[u] if isinstance(binding[u], tuple) else (binding[u],))
                for b in (binding[w] if isinstance(binding[w], tuple) else (binding[w],))
            ):
                continue
            if any(
                not m.before(a, b) for v in binding.values() if isinstance(v, tuple) for a, b in zip(v, v[1:])
            ):
                continue
            if not m.in_window(bound) or not m.same_partition(bound):
                continue
            env = _env(binding)
            if not all(_holds(c, env) for c in m.positive_conj if c.vars <= shape.vars):
                continue
            if m.negations_ok(shape, binding) and m.strategy_ok(binding):
                out.add(
                    _key(
                        {
                            v: [i.ev.id for i in x] if isinstance(x, tuple) else x.ev.id
                            for v, x in binding.items()
                        }
                    )
                )
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patterns(max_vars=4), streams(max_size=7), st.sampled_from(("arrival", "strict", "either")))
def test_pruned_search_equals_plain_cross_product(p, evs, tie):
    if tie == "either":
        p = dataclasses.replace(p, strategy="skip-till-any-match")
    assert ids(p, evs, tie) == _unpruned_bindings(p, evs, tie)
