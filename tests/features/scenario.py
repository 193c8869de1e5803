"""Helpers for the hand-written scenarios of tests/features: build patterns, streams and run them.

Every hand case runs on every matcher: the ``matcher`` fixture in conftest.py sets ``CURRENT``
to the reference matcher or to an engine before each test, and ``MATCH``/``run``/``ids`` go
through it.

Every expected match set in the scenarios was worked out by hand from the rules of
docs/SEMANTICS.md; the comment next to it gives the reasoning. Streams are written as
``"A@0 B@1:x=3,k=1"``: type ``@`` timestamp, optional attributes; ``pos`` and ``id`` are
the index in the string.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from petricep.events import Event
from petricep.lang.ast import (
    IDX_CONST,
    IDX_CUR,
    IDX_LAST,
    IDX_PREV,
    WIN_COUNT,
    WIN_TIME,
    Agg,
    And,
    Attr,
    BinOp,
    Compare,
    EventRef,
    Index,
    Num,
    Or,
    Pattern,
    Return,
    ReturnField,
    Seq,
    Str,
    Strategy,
    Window,
)
from tests.reference import reference_run

Matcher = Callable[..., list[dict]]

# The matcher under test; the ``matcher`` fixture (conftest.py) sets it before each test.
CURRENT: Matcher = reference_run


def MATCH(patterns: Sequence[Pattern], events: Sequence[Event], tie: str = "arrival") -> list[dict]:
    """Every match of ``patterns`` over ``events`` on the matcher under test (``CURRENT``)."""
    return CURRENT(patterns, events, tie)


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
    return Pattern(name, structure, tuple(conditions), partition, Strategy(strategy), window, returns)


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


NEXT = Strategy.NEXT
STRICT = Strategy.STRICT
PART = Strategy.PARTITION
