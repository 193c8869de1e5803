"""Kleene steps beside optional steps, negations and per-step gaps inside a repeated group
(issue 42): ``SEQ(B b, O? o, D+ d[], F f)+ g[]``, ``SEQ(B b, C+ c[], !(X x), D d)+ g[]``,
``SEQ(B b, C+ c[] AFTER 0 TO 2, D d)+ g[]``, and iteration conditions over the list
(``g[i].c.x > g[i].b.x``, each element). The group's first step every iteration binds once
(neither optional nor a list: ``Group.delimiter``) delimits the iterations where the engines
place a match's elements by position; a negation after a list spans from its last element
(the list may still grow past a violating event, which clears it), one before it to its
first; a gap on the list is its chain in each iteration. Hand cases with exact ids on every
matcher (the reference, the Python engine, the kernel), the kernel's timeouts, LIMIT and
composite events, and hypothesis draws of the combinations on every engine, single and
merged; what stays refused, with its exact text, is in test_groups_kleene_steps.py.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import PatternSemanticError, PatternUnsupportedError
from petricep.kernel import supports
from petricep.lang.ast import Pattern
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from tests.budget import examples
from tests.features.scenario import ids, stream, want
from tests.features.test_gaps import lives
from tests.features.test_groups import (
    _kernel_equals_engine,
    _sorted,
    _types,
    engines_equal_reference,
    matcher,  # noqa: F401 (the fixture: every matcher)
)
from tests.kernel.compare import both
from tests.reference import reference_run
from tests.strategies import streams, tie_rules


def P(text: str) -> Pattern:
    (p,) = parse_text(f"PATTERN p: {text}").patterns
    return p


def test_an_optional_step_beside_a_list() -> None:
    # the first iteration binds o2 and the list [3, 4]; the second leaves o out
    p = P("SEQ(A a, SEQ(B b, O? o, D+ d[], F f)+ g[], E e) STRATEGY skip-till-next-match")
    events = stream("A@0 B@1 O@2 D@3 D@4 F@5 B@6 D@7 F@8 E@9")
    assert ids(p, events) == want({"a": 0, "g": [{"b": 1, "o": 2, "d": [3, 4], "f": 5}, {"b": 6, "d": [7], "f": 8}], "e": 9})


def test_an_optional_step_before_a_list_is_read_by_iteration() -> None:
    """``g[last].o`` is the last iteration's ``o`` (b delimits the iterations, not the list
    before it): o4 (x=2) holds; where the last iteration left o out the read holds too."""
    p = P("SEQ(A a, SEQ(O? o, C+ c[], B b)+ g[], E e) WHERE g[last].o.x > 0 STRATEGY skip-till-next-match")
    events = stream("A@0 O@1:x=0 C@2 B@3 O@4:x=2 C@5 B@6 E@7")
    assert ids(p, events) == want({"a": 0, "g": [{"o": 1, "c": [2], "b": 3}, {"o": 4, "c": [5], "b": 6}], "e": 7})
    # o4's x=0 now: the match that bound it fails; c5 alone (o4 skipped) is no next match
    assert ids(p, stream("A@0 O@1:x=0 C@2 B@3 O@4:x=0 C@5 B@6 E@7")) == want()
    q = P("SEQ(A a, SEQ(O? o, C+ c[], B b)+ g[], E e) WHERE g[last].o.x > 0 AND count(g[]) = 2")
    assert ids(q, stream("A@0 O@1:x=0 C@2 B@3 C@4 B@5 E@6")) == want(
        {"a": 0, "g": [{"o": 1, "c": [2], "b": 3}, {"c": [4], "b": 5}], "e": 6},
        {"a": 0, "g": [{"c": [2], "b": 3}, {"c": [4], "b": 5}], "e": 6},
    )


def test_a_negation_after_a_list_spans_from_its_last_element() -> None:
    # X3 lies after c2 but c4 grows the list past it: [2, 4] holds; X10 after c9 with no c
    # after it breaks the iteration begun at b8
    p = P("SEQ(A a, SEQ(B b, C+ c[], !(X x), D d)+ g[], E e) STRATEGY skip-till-next-match")
    events = stream("A@0 B@1 C@2 X@3 C@4 D@5 E@6 A@7 B@8 C@9 X@10 D@11 E@12")
    assert ids(p, events) == want({"a": 0, "g": [{"b": 1, "c": [2, 4], "d": 5}], "e": 6})


def test_a_negation_before_a_list_spans_to_its_first_element() -> None:
    p = P("SEQ(A a, SEQ(B b, !(X x), C+ c[], D d)+ g[], E e) WHERE count(g[]) = 1")
    assert ids(p, stream("A@0 B@1 C@2 X@3 C@4 D@5 E@6")) == want(
        {"a": 0, "g": [{"b": 1, "c": [2, 4], "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 1, "c": [2], "d": 5}], "e": 6},
    )


def test_a_negation_between_iterations_after_a_last_list() -> None:
    # between the first iteration's last c and b5: [2] leaves X3 in the span, [2, 4] and [4] do not
    p = P("SEQ(A a, SEQ(B b, C+ c[], !(X x))+ g[], E e) WHERE count(g[]) = 2")
    assert ids(p, stream("A@0 B@1 C@2 X@3 C@4 B@5 C@6 E@7")) == want(
        {"a": 0, "g": [{"b": 1, "c": [2, 4]}, {"b": 5, "c": [6]}], "e": 7},
        {"a": 0, "g": [{"b": 1, "c": [4]}, {"b": 5, "c": [6]}], "e": 7},
    )


def test_a_negation_beside_a_list_an_iteration_may_leave_empty() -> None:
    # C* c[] left empty, the span runs from b1 (X2 breaks it); with c3 from c3
    p = P("SEQ(A a, SEQ(B b, C* c[], !(X x), D d)+ g[], E e)")
    assert ids(p, stream("A@0 B@1 X@2 C@3 D@4 E@5")) == want({"a": 0, "g": [{"b": 1, "c": [3], "d": 4}], "e": 5})


def test_a_negations_condition_reads_the_group_so_far() -> None:
    # only an X above the iteration's b breaks it: X3 (x=1) below b1's x=2 does not
    p = P("SEQ(A a, SEQ(B b, C+ c[], !(X x), D d)+ g[], E e) WHERE x.x > g[i].b.x STRATEGY skip-till-next-match")
    assert ids(p, stream("A@0:x=0 B@1:x=2 C@2:x=0 X@3:x=1 D@4:x=0 E@5:x=0")) == want({"a": 0, "g": [{"b": 1, "c": [2], "d": 4}], "e": 5})
    assert ids(p, stream("A@0:x=0 B@1:x=2 C@2:x=0 X@3:x=3 D@4:x=0 E@5:x=0")) == want()


def test_a_gap_on_a_list_is_its_chain_in_each_iteration() -> None:
    # each iteration's first c within 2 of its b, each later c within 2 of the c before it:
    # c7 is 3 after c4 (left out under skip-till-next-match), c10 1 after b9, c12 2 after c10
    p = P("SEQ(A a, SEQ(B b, C+ c[] AFTER 0 TO 2, D d)+ g[], E e) STRATEGY skip-till-next-match")
    events = stream("A@0 B@1 C@2 C@4 C@7 D@8 B@9 C@10 C@12 D@14 E@15")
    assert ids(p, events) == want({"a": 0, "g": [{"b": 1, "c": [2, 3], "d": 5}, {"b": 6, "c": [7, 8], "d": 9}], "e": 10})
    # in EVENTS: a run of c's, each the event right after the one before (c5 is two after c3)
    q = P("SEQ(A a, SEQ(B b, C+ c[] AFTER 1 TO 1 EVENTS, D d)+ g[], E e) WITHIN 10 EVENTS")
    assert ids(q, stream("A@0 B@1 C@2 C@3 X@4 C@5 D@6 E@7")) == want(
        {"a": 0, "g": [{"b": 1, "c": [2, 3], "d": 6}], "e": 7}, {"a": 0, "g": [{"b": 1, "c": [2], "d": 6}], "e": 7}
    )


def test_a_gap_after_a_list_follows_its_last_element() -> None:
    # d within 1 of the iteration's last c: [2, 5] and [5] (c5 at 5, d6 at 6), not [2]
    p = P("SEQ(A a, SEQ(B b, C+ c[], D d AFTER 0 TO 1)+ g[], E e) WHERE count(g[]) = 1")
    assert ids(p, stream("A@0 B@1 C@2 C@5 D@6 E@7")) == want(
        {"a": 0, "g": [{"b": 1, "c": [2, 3], "d": 4}], "e": 5}, {"a": 0, "g": [{"b": 1, "c": [3], "d": 4}], "e": 5}
    )
    # the first step after the last list of the iteration before: b5 within 2 of c4, not of c2
    q = P("SEQ(A a, SEQ(B b AFTER 0 TO 2, C+ c[])+ g[], E e) WHERE count(g[]) = 2")
    assert ids(q, stream("A@0 B@1 C@2 C@4 B@5 C@6 E@7")) == want(
        {"a": 0, "g": [{"b": 1, "c": [2, 3]}, {"b": 4, "c": [5]}], "e": 6}, {"a": 0, "g": [{"b": 1, "c": [3]}, {"b": 4, "c": [5]}], "e": 6}
    )



def test_a_gap_after_a_list_the_iteration_left_empty_follows_the_step_before_it() -> None:
    # d within 2 of c's last element where the iteration listed one, else of b: (b1 [c3] d4), not
    # (b1 d4) at 3 after b1; (b6 [c8] d9) and (b6 d7), not (b6 d9) at 3 after b6
    p = P("SEQ(A a, SEQ(B b, C* c[], D d AFTER 0 TO 2)+ g[], E e) WHERE count(g[]) = 2")
    assert ids(p, stream("A@0 B@1 C@3 D@4 B@6 D@7 C@8 D@9 E@12")) == want(
        {"a": 0, "g": [{"b": 1, "c": [2], "d": 3}, {"b": 4, "c": [6], "d": 7}], "e": 8},
        {"a": 0, "g": [{"b": 1, "c": [2], "d": 3}, {"b": 4, "d": 5}], "e": 8},
    )


@pytest.mark.parametrize("engine", ["python", "kernel"])
def test_a_partial_match_leaves_at_its_lists_gap(engine: str) -> None:
    """Waiting after c9 for another c (within 2) or d (within 3 of the last c), the partial
    match begun at a7 leaves at X15 (past 12), not at its window's end; without the gaps it
    lives on and matches (d16 e17)."""
    gapped = compile_text("PATTERN p: SEQ(A a, SEQ(B b, C+ c[] AFTER 0 TO 2, D d AFTER 0 TO 3)+ g[], E e) WITHIN 50 STRATEGY skip-till-next-match")
    events = stream("A@0 B@1 C@2 C@4 D@5 E@6 A@7 B@8 C@9 X@15 D@16 E@17")
    got, live, _ = lives(engine, gapped, events)
    assert [m["ids"] for m in got] == [{"a": 0, "g": [{"b": 1, "c": [2, 3], "d": 4}], "e": 5}]
    assert live == [1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0]
    plain = compile_text("PATTERN p: SEQ(A a, SEQ(B b, C+ c[], D d)+ g[], E e) WITHIN 50 STRATEGY skip-till-next-match")
    got, live, _ = lives(engine, plain, events)
    assert [m["ids"] for m in got][1:] == [{"a": 6, "g": [{"b": 7, "c": [8], "d": 10}], "e": 11}]
    assert live == [1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0]


def test_the_places_of_a_lists_gap_exit_at_it() -> None:
    # before the first c: b's (slot 1); after a c: the later of the list's next element
    # (within 2) and d (within 3), both from the list's last element (slot 2)
    (group,) = compile_text("PATTERN p: SEQ(A a, SEQ(B b, C+ c[] AFTER 0 TO 2, D d AFTER 0 TO 3)+ g[], E e) WITHIN 50").groups
    assert {p.label: p.gap_expiry for p in group.places} == {
        "start": (), "a": (), "a;g:b": ((1, 2),), "a;g:c": ((2, 3),), "a;g+": (), "a;g+:b": ((1, 2),), "a;g+:c": ((2, 3),), "a;g+;e": (),
    }  # fmt: skip


def test_an_iteration_condition_holds_for_each_element_of_its_list() -> None:
    """``g[i].c.x > g[i].b.x``: each ``c`` above its own iteration's ``b`` (SQL's ``(B C+ D)+``
    with ``DEFINE C AS C.x > B.x``): c3 (x=4) is below b1's 5, c7 above b6's 1."""
    p = P("SEQ(A a, SEQ(B b, C+ c[], D d)+ g[], E e) WHERE g[i].c.x > g[i].b.x AND count(g[]) = 2")
    events = stream("A@0:x=0 B@1:x=5 C@2:x=6 C@3:x=4 C@4:x=7 D@5:x=0 B@6:x=1 C@7:x=2 D@8:x=0 E@9:x=0")
    assert ids(p, events) == want(
        {"a": 0, "g": [{"b": 1, "c": [2, 4], "d": 5}, {"b": 6, "c": [7], "d": 8}], "e": 9},
        {"a": 0, "g": [{"b": 1, "c": [2], "d": 5}, {"b": 6, "c": [7], "d": 8}], "e": 9},
        {"a": 0, "g": [{"b": 1, "c": [4], "d": 5}, {"b": 6, "c": [7], "d": 8}], "e": 9},
    )
    # first in the group, against a and the iteration before's b (vacuous on the first):
    # c3 fails a.x < c.x, c5 (6) is above b2's 5; skip-till-next-match passes over both
    q = P("SEQ(A a, SEQ(C+ c[], B b)+ g[], E e) WHERE g[i].c.x > a.x AND g[i].c.x < g[i-1].b.x STRATEGY skip-till-next-match")
    assert ids(q, stream("A@0:x=0 C@1:x=1 B@2:x=5 C@3:x=0 C@4:x=3 C@5:x=6 B@6:x=0 E@7:x=0")) == want(
        {"a": 0, "g": [{"c": [1], "b": 2}, {"c": [4], "b": 6}], "e": 7}
    )


KERNEL_EVENTS = "A@0:x=0 B@1:x=1 C@2:x=2 C@3:x=3 D@4:x=4 B@5:x=5 C@6:x=6 X@7:x=7 C@8:x=8 D@9:x=9 E@10:x=10 X@30:x=0"


@pytest.mark.parametrize(
    ("text", "first", "reads"),
    [
        # the window (4) closes inside the second iteration's wait: the partial match times out
        # with its lists, RETURN reading them
        (
            "PATTERN p: SEQ(A a, SEQ(B b, C+ c[], D d)+ g[], E e) WITHIN 4 ON TIMEOUT RETURN T(n = count(g[]), s = sum(g[].c.x))",
            {"ids": {"a": 0, "g": [{"b": 1, "c": [2, 3], "d": 4}]}, "attrs": {"n": 1, "s": 5}, "deadline": 4},
            [],
        ),
        # X7 breaks the second iteration's list [6] (c8 grows it past X7: [6, 8] or [8])
        (
            "PATTERN p: SEQ(A a, SEQ(B b, O? o, C+ c[], !(X x), D d)+ g[], E e) WHERE skip-till-next-match WITHIN 10 "
            "LIMIT 2 PARTIAL MATCHES DROP OLDEST",
            {"ids": {"a": 0, "g": [{"b": 1, "c": [2, 3], "d": 4}, {"b": 5, "c": [6, 8], "d": 9}], "e": 10}, "attrs": {}, "deadline": None},
            [],
        ),
        # in the first iteration nothing is complete: count(g[]) is null in the timeout
        (
            "PATTERN p: SEQ(A a, SEQ(B b, C+ c[], D d){2,} g[], E e) WHERE skip-till-next-match WITHIN 6 "
            "ON TIMEOUT RETURN T(n = count(g[]), last = g[last].d.x)\nPATTERN q: SEQ(T t, E e)",
            {"ids": {"a": 0, "g": [{"b": 1, "c": [2, 3], "d": 4}, {"b": 5, "c": [6]}]}, "attrs": {"n": 1, "last": 4}, "deadline": 6},
            [{"t": "p@timeout[0,1;2|3;4+5;6]", "e": 10}],  # (a timeout's composite event: its lists so far)
        ),
        # q reads p's composite events, each iteration's list joined by '|'
        (
            "PATTERN p: SEQ(A a, SEQ(B b, C* c[], !(X x), D d)+ g[], E e) WHERE skip-till-next-match WITHIN 20 "
            "RETURN R(n = count(g[]), s = sum(g[].c.x))\nPATTERN q: SEQ(R r, X y)",
            {"ids": {"a": 0, "g": [{"b": 1, "c": [2, 3], "d": 4}, {"b": 5, "c": [6, 8], "d": 9}], "e": 10}, "attrs": {"n": 2, "s": 19}, "deadline": None},
            [{"r": "p[0,1;2|3;4+5;6|8;9,10]", "y": 11}],
        ),
    ],
)
def test_kernel_timeouts_limits_and_composites_with_lists(text: str, first: dict[str, Any], reads: list[dict[str, Any]]) -> None:
    """The kernel's match tables, ON TIMEOUT, LIMIT and composite events on groups with a
    list beside optional steps and negations: the Python engine's (its first match here, and
    the matches of ``q``, which reads ``p``'s composite events)."""
    net = build_net(list(parse_text(text).patterns))
    assert supports(net) == (True, "covered")
    out = both(net, stream(KERNEL_EVENTS), "arrival", 4, sweep_every=1)
    assert out["kernel"] == out["python"]
    m, *rest = out["python"][0]
    assert {"ids": m["ids"], "attrs": m["attrs"], "deadline": m.get("timeout", {}).get("deadline")} == first
    assert [r["ids"] for r in rest if r["pattern"] == "q"] == reads


# ----------------------------------------------------------------------------- properties

_CONDITIONS = [
    "",
    "WHERE sum(g[].c.x) > 2",
    "WHERE count(g[]) = 2",
    "WHERE g[i].b.x < g[i].d.x",
    "WHERE g[i].b.x < e.x",
    "WHERE g[i].o.x > 0",
    "WHERE g[last].o.x > 0",
    "WHERE sum(g[].o.x) > 1",
    "WHERE x.x > 0",
    "WHERE x.x < g[last].b.x",
    "WHERE x.x > a.x",
    "WHERE x.x = g[i].b.x",
    "WHERE g[i].c.x > g[i].b.x",
    "WHERE g[i].c.x >= a.x",
    "WHERE g[i].c.x < g[i-1].d.x",
    "WHERE g[i].c.x + g[i].o.x > 1",
]


_GAPS = ["", "", " AFTER 0 TO 1", " AFTER 1 TO 2", " AFTER 0 TO 3", " AFTER 0 TO 2 EVENTS"]


@st.composite
def kleene_beside(draw: Any, name: str = "p") -> Pattern:
    """``SEQ(A a, SEQ(B b, C<bound> c[], D d)<bound> g[], E e)`` (the list first, between or
    last) with an optional step ``O? o`` and / or a negation ``!(X x)`` drawn anywhere in the
    group, per-step gaps on b, c (its chain) and d (maybe ``FROM b``; in EVENTS under a count
    window), drawn types (they may repeat), a condition, a strategy, a window, a stop
    condition and GREEDY / RELUCTANT; draws the engines refuse (an optional step first with
    UNTIL, a gap with only skippable steps before it in its iteration, ...) are left out."""
    t = [draw(st.sampled_from("AB")) for _ in range(6)]
    gb, gc, gd = (draw(st.sampled_from(_GAPS)) for _ in range(3))
    if gd and draw(st.booleans()):
        gd += " FROM b"
    steps = [f"{t[1]} b{gb}", f"{t[3]} d{gd}"]
    at = draw(st.sampled_from([1, 0, 2]))
    strategy = draw(st.sampled_from(["", "STRATEGY skip-till-next-match"]))
    own = draw(st.sampled_from(["", " GREEDY", " RELUCTANT"])) if strategy and at < 2 else ""
    bound = draw(st.sampled_from(["+", "{1,2}", "{2,}", "*", "{0,2}"]))
    steps.insert(at, f"{t[2]}{bound} c[]{own}{gc}")
    optional = draw(st.booleans())  # (a gap after it, or after an empty list, follows the latest step bound)
    if optional:
        steps.insert(draw(st.integers(0, 3)), f"{t[5]}? o")
    negated = draw(st.booleans())
    if negated:
        steps.insert(draw(st.integers(0, len(steps))), f"!({draw(st.sampled_from('ABX'))} x)")
    last = draw(st.booleans())
    reads = [c for c in _CONDITIONS if not (last and "e." in c) and (optional or "].o" not in c) and (negated or "x.x" not in c)]
    cond = draw(st.sampled_from(reads))
    window = draw(st.sampled_from(["WITHIN 7 EVENTS"] if "EVENTS" in gb + gc + gd else ["", "WITHIN 6"]))
    tail = "" if last else f", {t[4]} e"
    times = draw(st.sampled_from(["+", "{1,2}", "{2}"]))
    mode = draw(st.sampled_from(["", " GREEDY", " RELUCTANT"])) if strategy and not last else ""
    until = draw(st.sampled_from(["", " UNTIL A u", " UNTIL B u"]))
    text = f"PATTERN {name}: SEQ({t[0]} a, SEQ({', '.join(steps)}){times} g[]{mode}{until}{tail}) {cond} {strategy} {window}"
    try:
        (p,) = parse_text(text).patterns
    except (PatternUnsupportedError, PatternSemanticError):
        assume(False)
    return p


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.data(), kleene_beside())
def test_engine_equals_reference_beside_a_list(data: Any, p: Pattern) -> None:
    engines_equal_reference(data, p)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.data(), kleene_beside("p"), kleene_beside("s"))
def test_merged_engine_equals_reference_beside_a_list(data: Any, p: Pattern, s: Pattern) -> None:
    pats = [p, replace(p, name="q", conditions=()), s]
    events = data.draw(streams(types=_types(*pats), max_size=9, min_size=7))
    tie = tie_rules(data.draw, pats)
    engine = _kernel_equals_engine(pats, events, tie, data.draw(st.integers(0, len(events))))
    assert _sorted(engine) == _sorted(reference_run(pats, events, tie))
