"""Conflict groups and consumption policies (exact expected matches, by hand)."""

from __future__ import annotations

import pytest

from petricep import kernel
from petricep.api import compile_text
from petricep.errors import PatternSemanticError
from petricep.events import Event
from petricep.kernel.engine import KernelEngine
from petricep.runtime.engine import Engine


def run(text: str, spec: str, share: bool = True) -> list[tuple[str, dict]]:
    """The Python engine's matches; the compiled kernel, where it covers the net, must give
    the same (every scenario on every engine)."""
    net = compile_text(text, share=share)

    def events() -> list[Event]:
        return [Event(t, i, i, attrs={"x": i}) for i, t in enumerate(spec.split())]

    found = [(m.pattern, m.ids) for m in Engine(net).run(events())]
    if kernel.available() and kernel.supports(net)[0]:
        k = KernelEngine(net, batch=2)
        got = [m for e in events() for m in k.push(e)] + k.drain() + k.flush()
        assert [(m.pattern, m.ids) for m in got] == found
    return found


def test_default_every_pattern_sees_every_event() -> None:
    text = "PATTERN p: SEQ(A a, B b) WITHIN 10\nPATTERN q: SEQ(A a, C c) WITHIN 10"
    assert run(text, "A B C") == [("p", {"a": 0, "b": 1}), ("q", {"a": 0, "c": 2})]


def test_consume_all_within_one_pattern() -> None:
    # at B2 both (a0,b2) and (a1,b2) complete; (a0,b2) comes first by positions and consumes a0, b2
    text = "PATTERN p: SEQ(A a, B b) WITHIN 10 CONSUME ALL"
    assert run(text, "A A B B") == [("p", {"a": 0, "b": 2}), ("p", {"a": 1, "b": 3})]


def test_conflict_group_members_consume_for_each_other() -> None:
    text = "CONFLICT g: p, q\nPATTERN p: SEQ(A a, B b) WITHIN 10\nPATTERN q: SEQ(A a, C c) WITHIN 10"
    # p takes a0 with b1; q's (a0, c2) and (a0, c4) lose a0; (a3, c4) is free
    assert run(text, "A B C A C") == [("p", {"a": 0, "b": 1}), ("q", {"a": 3, "c": 4})]


def test_consumption_of_selected_variables() -> None:
    text = (
        "CONFLICT g: p, q\n"
        "PATTERN p: SEQ(A a, B b) WITHIN 10 CONSUME b\n"
        "PATTERN q: SEQ(A a, C c) WITHIN 10 CONSUME a\n"
    )
    assert run(text, "A B C A C") == [
        ("p", {"a": 0, "b": 1}),
        ("q", {"a": 0, "c": 2}),
        ("q", {"a": 3, "c": 4}),
    ]


def test_same_point_conflict_goes_to_the_earlier_pattern() -> None:
    text = "CONFLICT g: p, q\nPATTERN p: SEQ(A a, B b) WITHIN 10\nPATTERN q: SEQ(A x, B y) WITHIN 10"
    assert run(text, "A B") == [("p", {"a": 0, "b": 1})]


def test_patterns_outside_the_group_are_not_affected() -> None:
    text = (
        "CONFLICT g: p, q\n"
        "PATTERN p: SEQ(A a, B b) WITHIN 10\n"
        "PATTERN q: SEQ(A a, C c) WITHIN 10\n"
        "PATTERN r: SEQ(A a, C c) WITHIN 10\n"
    )
    assert run(text, "A B C") == [("p", {"a": 0, "b": 1}), ("r", {"a": 0, "c": 2})]


def test_consumption_same_merged_or_not() -> None:
    text = "CONFLICT g: p, q\nPATTERN p: SEQ(A a, B b) WITHIN 10\nPATTERN q: SEQ(A a, B b, C c) WITHIN 10"
    spec = "A A B C B C"
    assert run(text, spec) == run(text, spec, share=False)
    assert run(text, spec) == [("p", {"a": 0, "b": 2}), ("p", {"a": 1, "b": 4})]


@pytest.mark.parametrize(
    "text,message",
    [
        ("PATTERN p: SEQ(A a, B b) CONSUME c", "<t>:1:34: error: CONSUME: unknown variable 'c'"),
        ("PATTERN p: SEQ(A a, !B n, C c) CONSUME n", "<t>:1:40: error: CONSUME: a negated variable consumes nothing: 'n'"),
        ("CONFLICT g: p, zz\nPATTERN p: SEQ(A a, B b)", "<t>:1:10: error: conflict group 'g' names unknown pattern 'zz'"),
        ("CONFLICT g: p\nCONFLICT h: p\nPATTERN p: SEQ(A a, B b)", "<t>:2:10: error: pattern 'p' is in two conflict groups ('g', 'h')"),
    ],
)
def test_consumption_errors(text: str, message: str) -> None:
    with pytest.raises(PatternSemanticError) as info:
        compile_text(text, name="t")
    assert str(info.value).splitlines()[0] == message
