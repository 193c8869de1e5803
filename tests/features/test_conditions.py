"""Conditions: comparisons, arithmetic, booleans, ts/id fields, strings, vacuous OR conjuncts, partitions.

Every hand case runs on every matcher (the ``matcher`` fixture in conftest.py); the
expected match sets were worked out by hand from docs/SEMANTICS.md.
"""

from __future__ import annotations

import pytest

from petricep.lang.ast import BinOp, BoolOp, Neg, Not, Num
from tests.features.scenario import OR, SEQ, arith, cmp, f, ids, pat, ref, run, stream, want


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
