"""Repeated groups beyond a SEQ's flat steps (issue 42, "the rest of the event algebra"): a
group inside AND or OR; a negation inside a group (between two of its steps, or between
iterations); a per-step gap FROM a named step inside a group. Hand cases with exact ids on every matcher (the reference, the Python
engine, the compiled kernel as a run drives it: test_groups.py's ``matcher`` fixture), a merged
net against the reference, and the refusals that stay; the hypothesis properties of
test_groups.py draw these forms too (``grouped_patterns``).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.errors import PatternSemanticError, PatternUnsupportedError
from petricep.kernel.lowering import supports
from petricep.lang.ast import Pattern, Return, ReturnField
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.budget import examples
from tests.engines import run_embedded
from tests.features.scenario import AND, NEXT, OR, SEQ, cmp, f, ids, pat, ref, stream, want, within
from tests.features.test_groups import BC, _types, g, gagg, grouped_patterns, matcher  # noqa: F401 (the fixture: every matcher)
from tests.kernel.compare import both
from tests.reference import reference_run
from tests.strategies import streams, tie_rules


def _sorted(matches: list[dict]) -> list[str]:
    return sorted(json.dumps(m, sort_keys=True) for m in matches)


# ----------------------------------------------------------------------------- AND / OR


def test_group_inside_and_takes_its_sibling_anywhere() -> None:
    # d1 between the group's events: every sequence of iterations of (b0|b3, c2|c4), d beside
    p = pat(AND(BC, ref("D", "d")))
    assert ids(p, stream("B@1 D@2 C@3 B@4 C@5")) == want(
        {"g": [{"b": 0, "c": 2}], "d": 1},
        {"g": [{"b": 0, "c": 4}], "d": 1},
        {"g": [{"b": 3, "c": 4}], "d": 1},
        {"g": [{"b": 0, "c": 2}, {"b": 3, "c": 4}], "d": 1},
    )


def test_group_inside_and_inside_a_seq_reads_what_precedes() -> None:
    # a0 before, e6 after the AND; every iteration's c above a.x (1): c3 (2) yes, c5 (0) no
    p = pat(SEQ(ref("A", "a"), AND(BC, ref("D", "d")), ref("E", "e")), cmp(g("g", "c", "i"), ">", f("a")))
    assert ids(p, stream("A@0:x=1 B@1 D@2 C@3:x=2 B@4 C@5:x=0 E@6")) == want({"a": 0, "g": [{"b": 1, "c": 3}], "d": 2, "e": 6})


def test_whole_group_reads_inside_and_wait_for_the_match() -> None:
    # count(g[]) = 2 and d after the group's last c: decided once the AND is complete
    p = pat(AND(BC, ref("D", "d")), cmp(gagg("count", "g"), "=", 2), cmp(f("d", "ts"), ">", g("g", "c", "last", "ts")))
    assert ids(p, stream("D@0 B@0 C@1 B@2 C@3 D@4")) == want({"g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 5})


def test_tie_rule_strict_inside_and_orders_the_group_only() -> None:
    # strict: c1 ties b0 (refused), c3 does not; d2 ties both and may (AND has no order)
    p = pat(AND(BC, ref("D", "d")))
    ev = stream("B@1 C@1 D@1 C@2")
    assert ids(p, ev, "strict") == want({"g": [{"b": 0, "c": 3}], "d": 2})
    assert ids(p, ev) == want({"g": [{"b": 0, "c": 1}], "d": 2}, {"g": [{"b": 0, "c": 3}], "d": 2})


def test_group_as_a_branch_of_or() -> None:
    # the D branch alone, or any sequence of iterations (g absent from the D match's ids)
    p = pat(OR(BC, ref("D", "d")))
    assert ids(p, stream("B@1 D@2 C@3 B@4 C@5")) == want(
        {"d": 1},
        {"g": [{"b": 0, "c": 2}]},
        {"g": [{"b": 0, "c": 4}]},
        {"g": [{"b": 3, "c": 4}]},
        {"g": [{"b": 0, "c": 2}, {"b": 3, "c": 4}]},
    )


def test_or_branch_conditions_hold_vacuously_on_the_other() -> None:
    # sum(g[].b.x) > 3 only binds the group's branch: d's match stays, (b0 x=1) does not
    p = pat(OR(BC, ref("D", "d")), cmp(gagg("sum", "g", "b"), ">", 3))
    assert ids(p, stream("B@1:x=1 C@2 D@3 B@4:x=5 C@5")) == want(
        {"d": 2}, {"g": [{"b": 3, "c": 4}]}, {"g": [{"b": 0, "c": 1}, {"b": 3, "c": 4}]}
    )


def test_skip_till_next_match_through_an_or_group() -> None:
    # a0 takes b1 (the group's branch: d2, which only the other branch takes, is skipped),
    # then c3, b4, c5, and e6 closes it; the D branch skipped b1, which extended {a}
    p = pat(SEQ(ref("A", "a"), OR(BC, ref("D", "d")), ref("E", "e")), strategy=NEXT)
    assert ids(p, stream("A@0 B@1 D@2 C@3 B@4 C@5 E@6")) == want({"a": 0, "g": [{"b": 1, "c": 3}, {"b": 4, "c": 5}], "e": 6})


def test_a_merged_net_with_groups_inside_and_or() -> None:
    # the group alone, inside AND and inside OR after one shared a: one net, the reference's
    pats = [
        pat(SEQ(ref("A", "a"), BC), name="p"),
        pat(SEQ(ref("A", "a"), AND(BC, ref("D", "d"))), name="q"),
        pat(SEQ(ref("A", "a"), OR(BC, ref("D", "d"))), cmp(gagg("count", "g"), ">=", 2), name="r"),
    ]
    net = build_net(pats)
    assert len(net.groups) == 1 and supports(net) == (True, "covered")
    ev = stream("A@0 B@1 D@2 C@3 B@4 C@5")
    out = run_embedded(pats, ev)
    assert _sorted(out) == _sorted(reference_run(pats, ev))
    # by emission point (d2, c3, c5), then pattern, then the events' positions
    assert [(m["pattern"], m["ids"]) for m in out if m["pattern"] != "p"] == [
        ("r", {"a": 0, "d": 2}),
        ("q", {"a": 0, "g": [{"b": 1, "c": 3}], "d": 2}),
        ("q", {"a": 0, "g": [{"b": 1, "c": 3}, {"b": 4, "c": 5}], "d": 2}),
        ("q", {"a": 0, "g": [{"b": 1, "c": 5}], "d": 2}),
        ("q", {"a": 0, "g": [{"b": 4, "c": 5}], "d": 2}),
        ("r", {"a": 0, "g": [{"b": 1, "c": 3}, {"b": 4, "c": 5}]}),
    ]


# ----------------------------------------------------------------------------- negation inside


def _p(text: str) -> Pattern:
    (p,) = parse_text(f"PATTERN p: {text}").patterns
    return p


NEG = "SEQ(A a, SEQ(B b, !(X x), C c)+ g[])"


def test_negation_inside_a_group_forbids_its_event_within_an_iteration() -> None:
    # x2 lies between b1 and c3 (and c5): only b4 c5 holds
    assert ids(_p(NEG), stream("A@0 B@1 X@2 C@3 B@4 C@5")) == want({"a": 0, "g": [{"b": 4, "c": 5}]})


def test_negation_inside_a_group_checks_every_iteration() -> None:
    # x4 inside b3..c5 (and b1..c5): the second iteration breaks, (b1, c2) alone holds
    assert ids(_p(NEG), stream("A@0 B@1 C@2 B@3 X@4 C@5")) == want({"a": 0, "g": [{"b": 1, "c": 2}]})


def test_negation_inside_a_group_leaves_the_gap_between_iterations_free() -> None:
    # x3 between c2 and b4 breaks no iteration; b1..c5 holds it, so (b1, c5) does not match
    assert ids(_p(NEG), stream("A@0 B@1 C@2 X@3 B@4 C@5")) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}]}, {"a": 0, "g": [{"b": 4, "c": 5}]}, {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 4, "c": 5}]}
    )


def test_negation_inside_a_group_with_its_conditions() -> None:
    # x.x = a.x (1): x2 (2) violates nothing, x5 (1) breaks every iteration around it
    p = _p("SEQ(A a, SEQ(B b, !(X x), C c)+ g[]) WHERE x.x = a.x")
    assert ids(p, stream("A@0:x=1 B@1 X@2:x=2 C@3 B@4 X@5:x=1 C@6")) == want({"a": 0, "g": [{"b": 1, "c": 3}]})


def test_negation_inside_a_group_under_the_tie_rules() -> None:
    # x1 ties b1: after it in arrival order (a violation), not after it in time (strict)
    ev = stream("A@0 B@1 X@1 C@2")
    assert ids(_p(NEG), ev) == want()
    assert ids(_p(NEG), ev, "strict") == want({"a": 0, "g": [{"b": 1, "c": 3}]})


def test_negation_inside_a_group_under_skip_till_next_match() -> None:
    # a0 takes b1 (the next B), which x2 then breaks; b3 c4 would skip b1: no match
    assert ids(_p(NEG + " WHERE skip-till-next-match"), stream("A@0 B@1 X@2 B@3 C@4")) == want()


def test_negation_inside_a_group_inside_and() -> None:
    # d1 beside; x2 breaks b0..c3 and b0..c5: (b4, c5) only
    p = _p("AND(SEQ(B b, !(X x), C c)+ g[], D d)")
    assert ids(p, stream("B@0 D@1 X@2 C@3 B@4 C@5")) == want({"g": [{"b": 4, "c": 5}], "d": 1})


def test_negation_inside_a_group_reading_an_or_branch_not_taken() -> None:
    # x.v = a.v holds vacuously where e was taken (a unbound): then any x breaks the
    # iteration around it; with a0 (v 1) x3 (v 2) breaks nothing
    p = _p("SEQ(OR(A a, E e), SEQ(B b, !(X x), C c)+ g[]) WHERE x.v = a.v")
    assert ids(p, stream("A@0:v=1 E@1 B@2 X@3:v=2 C@4")) == want({"a": 0, "g": [{"b": 2, "c": 4}]})


def test_negations_inside_a_group_are_pushed_without_pushdown_too() -> None:
    """``push_negations=False`` (SASE's check after the match is built) keeps a group's
    negations in the scan, where their intervals are: the same matches."""
    from petricep.runtime.engine import Engine
    from tests.engines import fresh

    pats = [_p("SEQ(A a, SEQ(B b, !(X x), C c)+ g[], !(Y y), D d)"), replace(_p("SEQ(A a, SEQ(B b, C c, !(X x))+ g[], D d)"), name="q")]
    ev = stream("A@0 B@1 C@2 X@3 B@4 X@5 C@6 Y@7 D@8 B@9 C@10 D@11")
    pushed, after = ([m.to_dict() for m in Engine(build_net(pats, push_negations=flag)).run(fresh(ev))] for flag in (True, False))
    assert pushed == after and _sorted(after) == _sorted(reference_run(pats, ev))


def test_a_merged_net_with_a_negation_inside_a_group() -> None:
    # p and q share a;g:b (front combination); only p's iterations are broken by x
    pats = [replace(_p(NEG), name="p"), replace(_p("SEQ(A a, SEQ(B b, C c)+ g[])"), name="q")]
    net = build_net(pats)
    assert len(net.groups) == 1 and supports(net) == (True, "covered")
    ev = stream("A@0 B@1 X@2 C@3 B@4 C@5")
    out = run_embedded(pats, ev)
    assert _sorted(out) == _sorted(reference_run(pats, ev))
    assert [m["ids"]["g"] for m in out if m["pattern"] == "p"] == [[{"b": 4, "c": 5}]]
    assert len([m for m in out if m["pattern"] == "q"]) == 4


@pytest.mark.parametrize("text", ["SEQ(A a, SEQ(B b, C c, !(X x))+ g[], D d)", "SEQ(A a, SEQ(!(X x), B b, C c)+ g[], D d)"])
def test_negation_at_a_groups_end_or_start_lies_between_iterations(text: str) -> None:
    # x3 between c2 and b4 stops (b1, c2) from going on to (b4, c5); every one-iteration
    # binding holds (x3 inside b1..c5 breaks nothing: it is not between two iterations)
    assert ids(_p(text), stream("A@0 B@1 C@2 X@3 B@4 C@5 D@6")) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 6}, {"a": 0, "g": [{"b": 1, "c": 5}], "d": 6}, {"a": 0, "g": [{"b": 4, "c": 5}], "d": 6}
    )


def test_negation_between_iterations_blocks_without_ending_the_match() -> None:
    # skip-till-next-match: b4 cannot start a second iteration after x3 (so skipping it is
    # no choice), the group closes and d6 ends the match
    p = _p("SEQ(A a, SEQ(!(X x), B b, C c)+ g[], D d) WHERE skip-till-next-match")
    assert ids(p, stream("A@0 B@1 C@2 X@3 B@4 C@5 D@6")) == want({"a": 0, "g": [{"b": 1, "c": 2}], "d": 6})


def test_negation_between_iterations_and_timeouts_on_both_engines() -> None:
    # (b1, c2) stopped by x3 is still alive: it times out at the window's end, as a stop
    # event's list does; (b4) alone waits too
    text = "PATTERN p: SEQ(A a, SEQ(B b, C c, !(X x))+ g[], D d) WITHIN 5 ON TIMEOUT RETURN T(n = count(g[]))"
    net = build_net(list(parse_text(text).patterns))
    assert supports(net) == (True, "covered")
    out = both(net, stream("A@0 B@1 C@2 X@3 B@4 Y@9"), "arrival", 3, sweep_every=1)
    assert out["kernel"] == out["python"]
    assert [(m["ids"], m["attrs"]) for m in out["python"][0]] == [
        ({"a": 0, "g": [{"b": 1, "c": 2}]}, {"n": 1}),
        ({"a": 0, "g": [{"b": 4}]}, {"n": None}),
    ]


# ----------------------------------------------------------------------------- gaps FROM a step


def test_gap_from_an_earlier_step_of_the_iteration() -> None:
    # d 0..2 after its own iteration's b (not after c): b1 c2 d3 (2) holds, b4 c5 d7 (3) not
    p = _p("SEQ(A a, SEQ(B b, C c, D d AFTER 0 TO 2 FROM b)+ g[])")
    assert ids(p, stream("A@0 B@1 C@2 D@3 B@4 C@5 D@7")) == want({"a": 0, "g": [{"b": 1, "c": 2, "d": 3}]})


def test_gap_from_a_variable_before_the_group_bounds_every_iteration() -> None:
    # every b 0..3 after a0: b1 and b3, not b5; c after its b as ever
    p = _p("SEQ(A a, SEQ(B b AFTER 0 TO 3 FROM a, C c)+ g[])")
    assert ids(p, stream("A@0 B@1 C@2 B@3 C@4 B@5 C@6")) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}]},
        {"a": 0, "g": [{"b": 1, "c": 4}]},
        {"a": 0, "g": [{"b": 1, "c": 6}]},
        {"a": 0, "g": [{"b": 3, "c": 4}]},
        {"a": 0, "g": [{"b": 3, "c": 6}]},
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}]},
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 6}]},
    )


def test_gap_from_a_step_inside_and_needs_no_event_before_the_group() -> None:
    # inside AND the first step has no event before it, FROM does not need one: c 1..1
    # after its b ((b0, c1) and (b3, c4); b0 c4 is 3 apart), d anywhere
    p = _p("AND(SEQ(B b, C c AFTER 1 TO 1 FROM b)+ g[], D d)")
    assert ids(p, stream("B@0 C@1 D@1 B@2 C@3")) == want(
        {"g": [{"b": 0, "c": 1}], "d": 2}, {"g": [{"b": 3, "c": 4}], "d": 2}, {"g": [{"b": 0, "c": 1}, {"b": 3, "c": 4}], "d": 2}
    )


def test_gap_from_an_or_branch_not_taken_holds_vacuously() -> None:
    # FROM a where e was taken: no bound; from a0, c2 is 2 after it (0..1 refused)
    p = _p("SEQ(OR(A a, E e), SEQ(B b, C c AFTER 0 TO 1 FROM a)+ g[])")
    assert ids(p, stream("A@0 E@1 B@1 C@2")) == want({"e": 1, "g": [{"b": 2, "c": 3}]})


def test_gap_from_a_step_under_skip_till_next_match_and_strict_ties() -> None:
    # next match: a0 takes b1 (the next B); c2 and c4 come too late for it (0..1 after b1's
    # ts 0), and b3 c4 would skip b1: no match
    p = _p("SEQ(A a, SEQ(B b, C c AFTER 0 TO 1 FROM b)+ g[]) WHERE skip-till-next-match")
    assert ids(p, stream("A@0 B@0 C@2 B@3 C@4")) == want()
    # strict: c at b's time is refused (no tie in a SEQ), lo = 0 admits it under arrival
    q = _p("SEQ(A a, SEQ(B b, C c AFTER 0 TO 1 FROM b)+ g[])")
    assert ids(q, stream("A@0 B@1 C@1 C@2"), "strict") == want({"a": 0, "g": [{"b": 1, "c": 3}]})
    assert ids(q, stream("A@0 B@1 C@1 C@2")) == want({"a": 0, "g": [{"b": 1, "c": 2}]}, {"a": 0, "g": [{"b": 1, "c": 3}]})


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        ("SEQ(A a, SEQ(B b AFTER 0 TO 1 FROM c, C c)+ g[])", PatternSemanticError, "c is not before b"),
        ("SEQ(A a, SEQ(B b, C c AFTER 0 TO 1 FROM c)+ g[])", PatternSemanticError, "c is not before c"),
        ("SEQ(A a, SEQ(B b, C c AFTER 0 TO 1 FROM e)+ g[])", PatternSemanticError, "gap FROM: unknown variable 'e'"),
        ("SEQ(A a, SEQ(B b, C c AFTER 0 TO 1 FROM d)+ g[], D d)", PatternUnsupportedError, "not yet 'd' ('d' is not bound before the group"),
        ("SEQ(A+ a[], SEQ(B b, C c AFTER 0 TO 1 FROM a)+ g[])", PatternUnsupportedError, "not yet 'a' (a list's events are many"),
        ("AND(SEQ(B b, C c AFTER 0 TO 1 FROM d)+ g[], D d)", PatternUnsupportedError, "'d' may come after an iteration's c)"),
    ],
)
def test_gaps_from_that_stay_refused(text: str, kind: type[Exception], message: str) -> None:
    with pytest.raises(kind) as err:
        parse_text(f"PATTERN p: {text}", "t.pcep")
    assert message in str(err.value) and "^" in str(err.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("SEQ(A a, SEQ(B b, !(X x), C c)+ g[]) WHERE x.x > g[i].c.x", "reads its iteration's steps before it (b), not g[i].c"),
        ("SEQ(A a, SEQ(B b, !(X x), C c)+ g[], D d) WHERE x.x > d.x", "not 'd': it is decided while the partial match waits"),
        # no single event before a group inside AND / OR: its first step's gap has no base
        ("SEQ(A a, AND(SEQ(B b AFTER 1 TO 2, C c)+ g[], D d))", "on the first iteration the single event before the group"),
    ],
)
def test_what_stays_refused_inside_and_or(text: str, message: str) -> None:
    with pytest.raises(PatternUnsupportedError) as err:
        parse_text(f"PATTERN p: {text}", "t.pcep")
    assert message in str(err.value) and "^" in str(err.value)


# ----------------------------------------------------------------------------- properties


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), grouped_patterns())
def test_kernel_equals_engine_on_grouped_timeouts(data: Any, p: Pattern) -> None:
    """ON TIMEOUT over the grouped patterns test_groups.py draws (groups inside AND / OR,
    negations inside, gaps FROM a step): the kernel's matches and timeouts, tokens and live
    partial matches are the Python engine's (a partial match a negation between iterations
    stopped still times out). The reference has no timeouts."""
    p = replace(p, window=p.window or within(4), timeout=Return("T", (ReturnField("n", gagg("count", "g")),)))
    note(pattern_text(p))
    events = data.draw(streams(types=_types(p), max_size=10, min_size=4))
    tie = tie_rules(data.draw, [p])
    net = build_net([p])
    assert supports(net, tie) == (True, "covered")
    out = both(net, events, tie, data.draw(st.integers(0, len(events))), sweep_every=1)
    assert out["kernel"] == out["python"]
