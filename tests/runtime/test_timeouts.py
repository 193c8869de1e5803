"""``ON TIMEOUT RETURN T(...)``: partial matches whose window closes before they complete.

A partial match times out for a pattern when its window closes (a later event passes it, or
the stream ends) while it is alive — not cancelled by a negation, not consumed, not dropped —
and no event ever extended it. Hand cases give exact outputs; the randomized test checks
the engine against an independent construction from the brute-force reference: the timeouts
of ``SEQ(v1, ..., vn)`` are the matches of each prefix ``SEQ(v1, ..., vk)`` (the negation
after ``vk``, if any, as an end negation: it cancels the prefix) that no match of
``SEQ(v1, ..., vk+1)`` extends.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, cast

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.events import Event
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.reference import reference_run
from tests.strategies import pattern_text, streams

SETTINGS = settings(
    max_examples=examples(300, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def ev(etype: str, ts: Any, pos: int, **attrs: Any) -> Event:
    return Event(etype, ts, pos, f"{etype}{pos}", attrs)


def run(text: str, events: list[Event], **options: Any) -> list[dict[str, Any]]:
    return [m.to_dict() for m in Engine(compile_text(text), **options).run(events)]


CART = """
PATTERN checkout: SEQ(Add a, Pay b)
WHERE [user]
WITHIN 10
ON TIMEOUT RETURN Abandoned(user = a.user, added = a.ts, paid = b.ts)
"""


def test_a_partial_match_times_out_when_a_later_event_passes_its_window() -> None:
    events = [ev("Add", 0, 0, user="u"), ev("Add", 1, 1, user="v"), ev("Pay", 5, 2, user="v"), ev("Add", 11, 3, user="w")]
    assert run(CART, events) == [
        {"pattern": "checkout", "ids": {"a": "Add1", "b": "Pay2"}, "start": 1, "end": 5, "attrs": {}},
        # Add0's window [0, 10] closes when Add@11 arrives; `b` is not bound: null
        {"pattern": "checkout", "ids": {"a": "Add0"}, "start": 0, "end": 0,
         "attrs": {"user": "u", "added": 0, "paid": None}, "timeout": {"type": "Abandoned", "deadline": 10}},
        # the stream ends: Add3's window closes too
        {"pattern": "checkout", "ids": {"a": "Add3"}, "start": 11, "end": 11,
         "attrs": {"user": "w", "added": 11, "paid": None}, "timeout": {"type": "Abandoned", "deadline": 21}},
    ]


def test_the_window_is_inclusive_an_event_at_the_deadline_still_extends() -> None:
    events = [ev("Add", 0, 0, user="u"), ev("Pay", 10, 1, user="u"), ev("Add", 30, 2, user="x"), ev("Pay", 30, 3, user="x")]
    out = run(CART, events)
    assert [m["ids"] for m in out] == [{"a": "Add0", "b": "Pay1"}, {"a": "Add2", "b": "Pay3"}]
    assert Engine(compile_text(CART)).stats.timeouts == {"checkout": 0}


def test_only_partial_matches_nobody_extended_time_out() -> None:
    text = "PATTERN p: SEQ(A a, B b, C c) WITHIN 5 ON TIMEOUT RETURN T(a = a.id)"
    events = [ev("A", 0, 0), ev("B", 1, 1), ev("A", 2, 2), ev("X", 9, 3)]
    out = run(text, events)
    # {A0} was extended by B1 -> only {A0, B1} times out; {A2} was not extended (B1 is before it)
    assert [(m["ids"], m["timeout"]["deadline"]) for m in out] == [({"a": "A0", "b": "B1"}, 5), ({"a": "A2"}, 7)]


def test_a_completed_prefix_does_not_time_out_under_skip_till_any_match() -> None:
    text = "PATTERN p: SEQ(A a, B b) WITHIN 5 ON TIMEOUT RETURN T()"
    out = run(text, [ev("A", 0, 0), ev("B", 1, 1), ev("X", 9, 2)])
    assert out == [{"pattern": "p", "ids": {"a": "A0", "b": "B1"}, "start": 0, "end": 1, "attrs": {}}]


def test_a_partial_match_cancelled_by_a_negation_does_not_time_out() -> None:
    text = "PATTERN p: SEQ(A a, !(C c), B b) WITHIN 5 ON TIMEOUT RETURN T()"
    out = run(text, [ev("A", 0, 0), ev("C", 1, 1), ev("A", 2, 2), ev("X", 9, 3)])
    assert [m["ids"] for m in out] == [{"a": "A2"}]


def test_timeouts_become_events_other_patterns_consume() -> None:
    text = CART + "PATTERN twice: SEQ(Abandoned x, Abandoned y) WHERE [user] WITHIN 100\n"
    events = [ev("Add", 0, 0, user="u"), ev("Add", 20, 1, user="u"), ev("Other", 40, 2, user="z")]
    out = run(text, events)
    assert [m["ids"] for m in out if m["pattern"] == "twice"] == [
        {"x": "checkout@timeout[Add0]", "y": "checkout@timeout[Add1]"}
    ]
    # a timeout event takes the time of the event that closed the window (like an end negation)
    assert [(m["start"], m["end"]) for m in out if m["pattern"] == "twice"] == [(20, 40)]


def test_count_window_timeouts() -> None:
    text = "PATTERN p: SEQ(A a, B b) WITHIN 3 EVENTS ON TIMEOUT RETURN T(n = a.id)"
    out = run(text, [ev("A", 0, 0), ev("X", 0, 1), ev("X", 0, 2), ev("B", 0, 3)])
    # positions 0..2 are A0's window; B3 is outside it and closes it
    assert out == [{"pattern": "p", "ids": {"a": "A0"}, "start": 0, "end": 0, "attrs": {"n": "A0"},
                    "timeout": {"type": "T", "deadline": 3}}]


def test_skip_till_next_match_consumed_partial_matches_do_not_time_out() -> None:
    text = "PATTERN p: SEQ(A a, B b, C c) WHERE skip-till-next-match WITHIN 5 ON TIMEOUT RETURN T()"
    out = run(text, [ev("A", 0, 0), ev("B", 1, 1), ev("B", 2, 2), ev("X", 9, 3)])
    assert [m["ids"] for m in out] == [{"a": "A0", "b": "B1"}]


def test_merged_patterns_time_out_as_each_does_alone() -> None:
    p = "PATTERN p: SEQ(A a, B b) WITHIN 5 ON TIMEOUT RETURN Tp()\n"
    q = "PATTERN q: SEQ(A a, C c) WITHIN 3 ON TIMEOUT RETURN Tq()\n"
    events = [ev("A", 0, 0), ev("B", 1, 1), ev("A", 2, 2), ev("C", 4, 3), ev("X", 20, 4)]
    together = run(p + q, events)
    alone = run(p, events) + run(q, events)
    key = lambda m: json.dumps(m, sort_keys=True)  # noqa: E731
    assert sorted(together, key=key) == sorted(alone, key=key)
    # q's A0 (deadline 3) closes at C@4; p's A2 (deadline 7) at X@20
    assert [(m["pattern"], m["ids"]) for m in together if "timeout" in m] == [("q", {"a": "A0"}), ("p", {"a": "A2"})]


# ------------------------------------------------------------------ randomized, against the reference


@st.composite
def seq_patterns(draw: Any) -> A.Pattern:
    """SEQ of 2-4 plain positive variables, at most one negation between two of them (its
    conditions read only earlier variables), comparisons of x, maybe [k], a time window."""
    n = draw(st.integers(2, 4))
    names = "abcd"
    kids: list[A.EventRef] = [A.EventRef(draw(st.sampled_from("ABC")), names[i]) for i in range(n)]
    conds: list[A.Expr] = []
    for _ in range(draw(st.integers(0, 2))):
        i, j = sorted(draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True)))
        op = draw(st.sampled_from(["<", "<=", "=", "!="]))
        conds.append(A.Compare(op, A.Attr(names[i], "x"), A.Attr(names[j], "x")))
    if draw(st.booleans()):
        at = draw(st.integers(1, n - 1))
        kids.insert(at, A.EventRef(draw(st.sampled_from("ABC")), "n", negated=True))
        if draw(st.booleans()):
            earlier = names[draw(st.integers(0, at - 1))]
            conds.append(A.Compare(">", A.Attr("n", "x"), A.Attr(earlier, "x")))
    partition = ("k",) if draw(st.booleans()) else ()
    window = A.Window(A.WIN_TIME, draw(st.integers(1, 6)))
    return A.Pattern("p", A.Seq(tuple(kids)), tuple(conds), partition, window=window,
                     timeout=A.Return("T", ()))


def seq_refs(p: A.Pattern) -> list[A.EventRef]:
    """The variables of a pattern of ``seq_patterns``: a SEQ of event references."""
    assert isinstance(p.structure, A.Seq)
    refs = list(p.structure.children)
    assert all(isinstance(c, A.EventRef) for c in refs)
    return cast(list[A.EventRef], refs)


def prefix(p: A.Pattern, k: int, trailing_negation: bool) -> A.Pattern:
    """SEQ of the first k positive variables (with the negations between them, and the one
    after the k-th if asked), with the conditions that read only those and their stop events
    (UNTIL: tests/features/test_until_timeouts.py)."""
    kids: list[A.EventRef] = []
    positives = 0
    for c in seq_refs(p):
        if not c.negated:
            if positives == k:
                break
            positives += 1
        elif positives == k and not trailing_negation:
            break
        kids.append(c)
    names = {c.var for c in kids} | {c.until.var for c in kids if c.until is not None}
    conds = tuple(c for c in p.conditions if A.vars_of(c) <= names)
    return dataclasses.replace(p, structure=A.Seq(tuple(kids)), conditions=conds, timeout=None)


def reference_timeouts(p: A.Pattern, events: list[Event]) -> list[str]:
    n = sum(1 for c in seq_refs(p) if not c.negated)
    assert p.window is not None
    w = p.window.value
    out = []
    for k in range(1, n):
        extended = {
            json.dumps({v: m["ids"][v] for v in list(m["ids"])[:k]}, sort_keys=True)
            for m in reference_run([prefix(p, k + 1, False)], events)
        }
        for m in reference_run([prefix(p, k, True)], events):
            if json.dumps(m["ids"], sort_keys=True) not in extended:
                out.append(json.dumps([m["ids"], m["start"], m["end"], m["start"] + w], sort_keys=True))
    return sorted(out)


@SETTINGS
@given(seq_patterns(), streams(max_size=10))
def test_timeouts_equal_unextended_prefixes_of_the_reference(p: A.Pattern, events: list[Event]) -> None:
    note(pattern_text(p))
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    copies = [Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in events]
    got = sorted(
        json.dumps([m.ids, m.start, m.end, m.timeout[1]], sort_keys=True)
        for m in Engine(build_net([p])).run(copies)
        if m.timeout is not None
    )
    assert got == reference_timeouts(p, events)


@st.composite
def pattern_sets(draw: Any) -> list[A.Pattern]:
    """2-4 overlapping SEQ patterns with timeouts and sometimes a LIMIT, for merging."""
    out = []
    for i in range(draw(st.integers(2, 4))):
        p = draw(seq_patterns())
        limit = A.Limit(draw(st.integers(1, 3)), draw(st.sampled_from(A.OVERFLOW_POLICIES[:2]))) if draw(st.booleans()) else None
        out.append(dataclasses.replace(p, name=f"p{i}", timeout=A.Return(f"T{i}", ()), limit=limit))
    return out


@SETTINGS
@given(pattern_sets(), streams(max_size=12))
def test_timeouts_and_limits_merged_equal_separate(pats: list[A.Pattern], events: list[Event]) -> None:
    for p in pats:
        note(pattern_text(p) + (f" LIMIT {p.limit.count} {p.limit.policy}" if p.limit else ""))
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))

    def outputs(share: bool) -> list[str]:
        copies = [Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in events]
        engine = Engine(build_net(pats, share))
        out = sorted(json.dumps(m.to_dict(), sort_keys=True) for m in engine.run(copies))
        return out + [json.dumps(engine.stats.dropped, sort_keys=True)]

    assert outputs(True) == outputs(False)
