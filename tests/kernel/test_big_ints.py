"""Ints beyond 2**53 on the kernel: held exactly (TAG_BIG), not rounded to a float64.

A float64 holds every int up to 2**53 and rounds the ones beyond, so before the kernel held
them apart ``a.x = b.x`` held between 9007199254740992 and 9007199254740993 (16-digit card
numbers are past 2**53) and ``b.x - a.x = 1`` did not. Every case here runs on the kernel's
two input paths (checked events through :class:`KernelEngine`, an Arrow table through
:class:`KernelRun`) and must equal the Python engine, which holds Python ints."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import EvaluationError, EventError
from petricep.events import Event
from petricep.kernel import KernelRun, supports
from petricep.kernel.engine import KernelEngine
from petricep.kernel.snapshot import dumps, restore
from petricep.runtime.engine import Engine
from tests.budget import examples

from .compare import both, ev

E = 2**53  # 9007199254740992: the last int before which every int is a float64


def _engines(text: str, events: list[Event], tie: str = "arrival") -> list[dict[str, object]]:
    """The matches of the Python engine, equal to the kernel's on both input paths."""
    net = compile_text(text)
    assert supports(net, tie) == (True, "covered")
    want = [m.to_dict() for m in Engine(net, tie=tie).run(iter(events))]
    kernel = KernelEngine(net, tie=tie, batch=2)
    got = [m.to_dict() for e in events for m in kernel.push(e)] + [m.to_dict() for m in kernel.flush()]
    assert got == want
    out = both(net, events, tie, len(events) // 2)
    assert out["kernel"] == out["python"]
    return want


def _ids(matches: list[dict[str, object]]) -> list[object]:
    return [m["ids"] for m in matches]


def test_neighbours_of_2_53_are_not_equal() -> None:
    events = [ev("A", 1, 0, x=E), ev("B", 2, 1, x=E + 1), ev("A", 3, 2, x=E + 2), ev("B", 4, 3, x=E + 2)]
    assert _ids(_engines("PATTERN p: SEQ(A a, B b) WHERE a.x = b.x WITHIN 10", events)) == [{"a": 2, "b": 3}]
    assert _ids(_engines("PATTERN p: SEQ(A a, B b) WHERE a.x != b.x WITHIN 10", events)) == [
        {"a": 0, "b": 1}, {"a": 0, "b": 3}]  # fmt: skip
    assert _ids(_engines("PATTERN p: SEQ(A a, B b) WHERE b.x > a.x WITHIN 10", events)) == [
        {"a": 0, "b": 1}, {"a": 0, "b": 3}]  # fmt: skip


def test_arithmetic_and_returns_are_exact() -> None:
    events = [ev("A", 1, 0, x=E), ev("B", 2, 1, x=E + 1), ev("B", 3, 2, x=-(E + 3)), ev("B", 4, 3, x=3)]
    text = (
        "PATTERN p: SEQ(A a, B b) WHERE b.x - a.x = 1 WITHIN 10 RETURN R(d = b.x - a.x, s = a.x + b.x, m = a.x * 3, n = -b.x)\n"
        "PATTERN q: SEQ(A a, B b) WHERE a.x + b.x = -3 WITHIN 10 RETURN Q(h = a.x / 2, r = b.x % 7, f = b.x * 0.5)\n"
        "PATTERN w: SEQ(B b, B c) WHERE b.x * c.x > 27021597764222978 WITHIN 10 RETURN W(p = b.x * c.x)"
    )
    got = _engines(text, events)
    assert [(m["pattern"], m["attrs"]) for m in got] == [
        ("p", {"d": 1, "s": 2 * E + 1, "m": 3 * E, "n": -(E + 1)}),
        ("q", {"h": E / 2, "r": -(E + 3) % 7, "f": -(E + 3) * 0.5}),
        ("w", {"p": 3 * (E + 1)}),
    ]


def test_an_int_result_past_2_53_of_small_ints() -> None:
    """Ints inside the exact range whose product leaves it: the float64 product rounds (to
    the same float as the product less one), the int is exact."""
    square = 94906267 * 94906267  # 9007199326062755289
    events = [ev("A", 1, 0, x=94906267), ev("B", 2, 1, x=94906267), ev("C", 3, 2, x=square - 1), ev("C", 4, 3, x=square)]
    text = "PATTERN p: SEQ(A a, B b, C c) WHERE a.x * b.x = c.x WITHIN 10 RETURN R(v = a.x * b.x, w = c.x - a.x * b.x)"
    got = _engines(text, events)
    assert [(m["ids"], m["attrs"]) for m in got] == [({"a": 0, "b": 1, "c": 3}, {"v": square, "w": 0})]


def test_a_literal_past_2_53_is_on_the_kernel() -> None:
    events = [ev("A", 1, 0, x=E + 1), ev("A", 2, 1, x=E), ev("A", 3, 2, x=E + 2)]
    text = "PATTERN p: SEQ(A a) WHERE a.x = 9007199254740993 OR a.x > 9007199254740993 WITHIN 10"
    assert _ids(_engines(text, events)) == [{"a": 0}, {"a": 2}]


def test_kleene_aggregates_are_exact() -> None:
    events = [ev("A", 1, 0, x=0), ev("B", 2, 1, x=E + 1), ev("B", 3, 2, x=E - 1), ev("B", 4, 3, x=E + 3), ev("C", 5, 4, x=0)]
    text = (
        "PATTERN p: SEQ(A a, B+ b[], C c) WHERE skip_till_next_match AND sum(b[].x) > 27021597764222978 WITHIN 10 "
        "RETURN R(t = sum(b[].x), hi = max(b[].x), lo = min(b[].x), av = avg(b[].x), n = count(b[]))"
    )
    got = _engines(text.replace("skip_till_next_match AND ", ""), events)
    assert got[0]["attrs"] == {"t": 3 * E + 3, "hi": E + 3, "lo": E - 1, "av": (3 * E + 3) / 3, "n": 3}


def test_a_snapshot_keeps_them() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE a.x = b.x WITHIN 10 RETURN R(v = a.x)")
    first, second = [ev("A", 1, 0, x=E + 1), ev("A", 2, 1, x=E + 5)], [ev("B", 3, 2, x=E + 5), ev("B", 4, 3, x=E + 1)]
    kernel = KernelEngine(net)
    for e in first:
        kernel.push(e)
    kernel.drain()
    data = dumps(kernel)
    again = KernelEngine(net)
    restore(again, data)
    got = [m.to_dict() for e in second for m in again.push(e)] + [m.to_dict() for m in again.flush()]
    want = [m.to_dict() for m in Engine(net).run(iter(first + second))]
    assert got == want
    assert [m["attrs"] for m in got] == [{"v": E + 5}, {"v": E + 1}]


def test_a_time_past_2_53_is_refused_not_rounded() -> None:
    """Nanoseconds since 1970 (1.7e18) would round by 256: refused with the row's error."""
    net = compile_text("PATTERN p: SEQ(A a, B b) WITHIN 1")
    kernel = KernelEngine(net)
    bad = ev("A", 1700000000000000001, 0)
    with pytest.raises(EvaluationError) as e:
        kernel.push(bad)
        kernel.flush()
    assert str(e.value) == (
        "time 1700000000000000001 is beyond 2**53, which the compiled kernel cannot hold exactly "
        "(give times in coarser units, or run with --engine python)"
    )
    assert e.value.event is bad  # type: ignore[attr-defined]
    with pytest.raises(EventError) as e2:
        KernelRun(net).push(pa.table({"type": ["A", "B"], "ts": [5, 1700000000000000002]}))
    assert "time 1700000000000000002 is beyond 2**53" in str(e2.value)
    got = Engine(net).run(iter([bad, ev("B", 1700000000000000002, 1), ev("B", 1700000000000000003, 2)]))
    assert [m.ids for m in got] == [{"a": 0, "b": 1}]  # (the Python engine holds them exactly: 2 ns is past WITHIN 1)


NEAR = st.integers(-4, 4).map(lambda d: E + d) | st.integers(-4, 4).map(lambda d: -E + d) | st.integers(-3, 3)
CONDITIONS = [
    "a.x = b.x", "a.x < b.x", "b.x - a.x = 1", "a.x + b.x > 0", "a.x * 2 = b.x * 2", "a.x >= 9007199254740993",
    "-a.x = b.x", "b.x % 3 = a.x % 3", "a.x / 2 < b.x / 2",
]  # fmt: skip


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(st.sampled_from("AB"), NEAR), min_size=1, max_size=9), st.sampled_from(CONDITIONS))
def test_random_values_near_2_53(rows: list[tuple[str, int]], cond: str) -> None:
    events = [ev(t, i, i, x=x) for i, (t, x) in enumerate(rows)]
    text = f"PATTERN p: SEQ(A a, B b) WHERE {cond} WITHIN 4 RETURN R(v = a.x - b.x)"
    net = compile_text(text)
    want = [m.to_dict() for m in Engine(net).run(iter(events))]
    out = both(net, events, "arrival", len(events) // 2)
    assert out["kernel"] == out["python"]
    kernel = KernelEngine(net, batch=3)
    got = [m.to_dict() for e in events for m in kernel.push(e)] + [m.to_dict() for m in kernel.flush()]
    assert got == want

