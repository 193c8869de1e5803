"""The parse stage's routing keys of a checked batch, coded per distinct value (numpy for a
number column), are row for row the keys :meth:`Router.key` gives each event; bucket codes
renumbered in first-seen order name the same labels (pure Python, no Spark)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.events import Event, EventColumns, TypeColumn
from petricep.io.readers import InputSpec
from petricep.spark.parse import ParseConfig, Parser, _first_seen, _kept_rows, _recoded
from petricep.spark.plan import Router, make_plan

NET = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 5\n")
SOME = settings(max_examples=200, deadline=None)

floats = st.one_of(st.floats(), st.sampled_from([0.0, -0.0, math.nan, -math.nan, math.inf, 1.0, 2.0**60, 0.1]))
ints = st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-3, 3))
objects = st.one_of(ints, floats, st.booleans(), st.none(), st.text(max_size=3), st.sampled_from(["1", "1.0", ""]))


def parser() -> Parser:
    return Parser(ParseConfig(InputSpec(path="e.csv", type_field="type", time_field="ts")), Router(make_plan(NET)))


def expected(values: list[Any], present: bool) -> list[str]:
    router = Router(make_plan(NET))
    return [router.key(Event("A", 0, i, i, {"k": v} if present else {}), ("k",)) for i, v in enumerate(values)]


def coded(column: Any, n: int, present: bool = True) -> list[str] | None:
    cols = EventColumns(TypeColumn.constant("A", n), np.arange(n), range(n), range(n), {"k": column} if present else {})
    got = parser()._key_codes(cols, "k")
    if got is None:
        return None
    codes, keys = got
    assert len(codes) == n and len(set(keys)) <= len(keys)
    return [keys[c] for c in codes.tolist()]


@SOME
@given(st.lists(ints, min_size=1, max_size=40))
def test_int_columns(values: list[int]) -> None:
    assert coded(np.asarray(values, dtype=np.int64), len(values)) == expected(values, True)


@SOME
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=20))
def test_unsigned_columns(values: list[int]) -> None:
    assert coded(np.asarray(values, dtype=np.uint64), len(values)) == expected(values, True)


@SOME
@given(st.lists(floats, min_size=1, max_size=40))
def test_float_columns(values: list[float]) -> None:
    """0.0 and -0.0 (one numpy value), NaNs (numpy's one distinct NaN): one key each."""
    assert coded(np.asarray(values, dtype=np.float64), len(values)) == expected(values, True)


@SOME
@given(st.lists(objects, max_size=40))
def test_value_lists(values: list[Any]) -> None:
    """Mixed values (1, 1.0 and True: one key), text, None."""
    assert coded(values, len(values)) == expected(values, True)


def test_an_absent_column_and_an_unhashable_value() -> None:
    assert coded(None, 3, present=False) == expected([None] * 3, False)
    assert coded([1, [2], 3], 3) is None


@SOME
@given(st.lists(st.integers(0, 5), max_size=50), st.lists(st.sampled_from("abc"), min_size=6, max_size=6))
def test_bucket_codes_in_first_seen_order(codes: list[int], names: list[str]) -> None:
    arr = np.asarray(codes, dtype=np.intp)
    got, labels = _first_seen(*_recoded(arr, names))
    assert [labels[c] for c in got.tolist()] == [names[c] for c in codes]
    assert labels == list(dict.fromkeys(names[c] for c in codes))


@SOME
@given(st.lists(st.integers(0, 3), max_size=30), st.sets(st.sampled_from("ABCD")))
def test_kept_rows(codes: list[int], gone: set[str]) -> None:
    types = TypeColumn(np.asarray(codes, dtype=np.int32), "ABCD")
    want = [i for i, t in enumerate(types.tolist()) if t not in gone]
    assert _kept_rows(types, gone) == want
    assert _kept_rows(types.tolist(), gone) == want
