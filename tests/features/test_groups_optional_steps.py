"""Optional steps inside a repeated group (issue 42): ``SEQ(A a, SEQ(B b, C? c, D d)+ g[], E e)``,
``SEQ(A a, SEQ(B b, C? c)+ g[], E e)`` (an iteration may end after its last required step),
``SEQ(A a, SEQ(C? c, B b)+ g[], E e)`` (or start at its first required one).
Each iteration binds ``c`` or leaves it out; its ids list only the steps it bound
(``"g": [{"b": 1, "d": 2}, {"b": 3, "c": 4, "d": 5}]``), an iteration condition reading
``g[i].c`` holds on an iteration without it, an aggregate over ``c`` skips those (and reads
null where no iteration bound one), under skip-till-next-match an optional step that can bind
is not passed over. Hand cases with exact ids on every matcher (the reference, the Python
engine, the compiled kernel as a run drives it: test_groups.py's ``matcher`` fixture); the
hypothesis properties of test_groups.py draw optional steps too (``grouped_patterns``).
(test_groups_optional.py is about groups a match may leave out, ``SEQ(...)* g[]``.)
"""

from __future__ import annotations

from typing import Any

import pytest

from petricep.errors import PatternSemanticError, PatternUnsupportedError
from petricep.kernel.engine import KernelEngine
from petricep.kernel.lowering import supports
from petricep.lang.ast import Pattern
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from tests.features.scenario import ids, run, stream, want
from tests.features.test_groups import matcher  # noqa: F401 (the fixture: every matcher)
from tests.kernel.compare import both

STEPS = "SEQ(A a, SEQ(B b, C? c, D d)+ g[], E e)"


def P(text: str) -> Pattern:
    (p,) = parse_text(f"PATTERN p: {text}").patterns
    return p


def test_each_iteration_binds_the_optional_step_or_leaves_it_out() -> None:
    # b1 b3, c4, d2 d5: one iteration (1,2) (1,5) (1,4,5) (3,5) (3,4,5); two, (1,2) then (3,5) or (3,4,5)
    assert ids(P(STEPS), stream("A@0 B@1 D@2 B@3 C@4 D@5 E@6")) == want(
        {"a": 0, "g": [{"b": 1, "d": 2}], "e": 6},
        {"a": 0, "g": [{"b": 1, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 1, "c": 4, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 3, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 3, "c": 4, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 1, "d": 2}, {"b": 3, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 1, "d": 2}, {"b": 3, "c": 4, "d": 5}], "e": 6},
    )


def test_the_optional_element_belongs_to_its_own_iteration() -> None:
    # c5 lies in the second iteration (after b4): the first one (b1 d3) has none, though c's list
    # then holds one element and b's two (aligned by index, c5 would land in the first iteration)
    p = P(f"{STEPS} WHERE count(g[]) = 2")
    assert ids(p, stream("A@0 B@1 X@2 D@3 B@4 C@5 D@6 E@7")) == want(
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "c": 5, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 6}], "e": 7},
    )


def test_an_iteration_condition_over_the_optional_step_holds_without_it() -> None:
    # c.x > b.x on each iteration that has a c: (b1 c2 d3) breaks it (3 > 5 no), (b1 d3) has no c
    p = P(f"{STEPS} WHERE g[i].c.x > g[i].b.x")
    assert ids(p, stream("A@0 B@1:x=5 C@2:x=3 D@3 E@4")) == want({"a": 0, "g": [{"b": 1, "d": 3}], "e": 4})


def test_an_iteration_condition_on_a_later_step_reads_its_own_iterations_c() -> None:
    # c.x < d.x, checked on d: (b4 d5) has no c, so it holds there (c2's x 5 is another
    # iteration's); (b1 c2 d5) breaks it (5 < 1 no)
    p = P(f"{STEPS} WHERE g[i].c.x < g[i].d.x")
    ev = stream("A@0 B@1 C@2:x=5 D@3:x=9 B@4 D@5:x=1 E@6")
    assert ids(p, ev) == want(
        {"a": 0, "g": [{"b": 1, "d": 3}], "e": 6},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}], "e": 6},
        {"a": 0, "g": [{"b": 1, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 4, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}, {"b": 4, "d": 5}], "e": 6},
    )


def test_an_iteration_condition_against_the_step_after_the_group() -> None:
    # every c below e.x (4): c2 (x 6) no; the iterations without c hold
    p = P(f"{STEPS} WHERE g[i].c.x < e.x")
    assert ids(p, stream("A@0 B@1 C@2:x=6 D@3 E@4:x=4")) == want({"a": 0, "g": [{"b": 1, "d": 3}], "e": 4})


def test_an_iteration_condition_with_the_step_after_the_group_replays_in_order() -> None:
    # b + c > d.x (0) on each iteration with a c, decided when d binds: (b1 c3) 0 + 0 no; in
    # (b1)(b2 c3) c3 is the second iteration's, with b2 (1 + 0): by index it would pair with b1
    p = P("SEQ(A a, SEQ(B b, C? c)+ g[], D d) WHERE g[i].b.x + g[i].c.x > d.x")
    assert ids(p, stream("A@0 B@1:x=0 B@2:x=1 C@3:x=0 D@4:x=0")) == want(
        {"a": 0, "g": [{"b": 1}], "d": 4},
        {"a": 0, "g": [{"b": 2}], "d": 4},
        {"a": 0, "g": [{"b": 2, "c": 3}], "d": 4},
        {"a": 0, "g": [{"b": 1}, {"b": 2}], "d": 4},
        {"a": 0, "g": [{"b": 1}, {"b": 2, "c": 3}], "d": 4},
    )


def test_return_reads_null_for_a_step_no_iteration_bound() -> None:
    # sum and max over c skip the iterations without it: null where none has one, count(g[]) the iterations
    p = P(f"{STEPS} RETURN R(n = count(g[]), s = sum(g[].c.x), m = max(g[].c.x))")
    out = run(p, stream("A@0 B@1 D@2 B@3 C@4:x=7 D@5 E@6"))
    got = sorted(((m["ids"]["g"], m["attrs"]) for m in out), key=repr)
    assert got == sorted(
        [
            ([{"b": 1, "d": 2}], {"n": 1, "s": None, "m": None}),
            ([{"b": 1, "d": 5}], {"n": 1, "s": None, "m": None}),
            ([{"b": 1, "c": 4, "d": 5}], {"n": 1, "s": 7, "m": 7}),
            ([{"b": 3, "d": 5}], {"n": 1, "s": None, "m": None}),
            ([{"b": 3, "c": 4, "d": 5}], {"n": 1, "s": 7, "m": 7}),
            ([{"b": 1, "d": 2}, {"b": 3, "d": 5}], {"n": 2, "s": None, "m": None}),
            ([{"b": 1, "d": 2}, {"b": 3, "c": 4, "d": 5}], {"n": 2, "s": 7, "m": 7}),
        ],
        key=repr,
    )


def test_the_last_and_first_iterations_optional_step_reads_null_without_it() -> None:
    # g[last].c / g[1].c: that iteration's c, null where it left c out (c2 is the first's, c6 the second's)
    p = P(f"{STEPS} WHERE count(g[]) = 2 RETURN R(l = g[last].c.x, f = g[1].c.x)")
    out = run(p, stream("A@0 B@1 C@2:x=5 D@3 B@4 D@5 C@6:x=7 B@7 D@8 E@9"))
    got = sorted(((m["ids"]["g"], m["attrs"]) for m in out), key=repr)
    assert got == sorted(
        [
            ([{"b": 1, "c": 2, "d": 3}, {"b": 4, "c": 6, "d": 8}], {"l": 7, "f": 5}),
            ([{"b": 1, "c": 2, "d": 3}, {"b": 4, "d": 5}], {"l": None, "f": 5}),
            ([{"b": 1, "c": 2, "d": 3}, {"b": 4, "d": 8}], {"l": None, "f": 5}),
            ([{"b": 1, "c": 2, "d": 3}, {"b": 7, "d": 8}], {"l": None, "f": 5}),
            ([{"b": 1, "c": 2, "d": 5}, {"b": 7, "d": 8}], {"l": None, "f": 5}),
            ([{"b": 1, "d": 3}, {"b": 4, "c": 6, "d": 8}], {"l": 7, "f": None}),
            ([{"b": 1, "d": 3}, {"b": 4, "d": 5}], {"l": None, "f": None}),
            ([{"b": 1, "d": 3}, {"b": 4, "d": 8}], {"l": None, "f": None}),
            ([{"b": 1, "d": 3}, {"b": 7, "d": 8}], {"l": None, "f": None}),
            ([{"b": 1, "d": 5}, {"b": 7, "d": 8}], {"l": None, "f": None}),
            ([{"b": 4, "d": 5}, {"b": 7, "d": 8}], {"l": None, "f": None}),
        ],
        key=repr,
    )


def test_a_condition_on_the_last_iteration_holds_without_its_optional_step() -> None:
    # g[last].c.x > 6: (b1 c2 d3)(b4 d5) has no c in its last iteration (c2's 5 is the first's): it holds
    p = P(f"{STEPS} WHERE count(g[]) = 2 AND g[last].c.x > 6 AND g[1].c.x < 6")
    out = ids(p, stream("A@0 B@1 C@2:x=5 D@3 B@4 D@5 C@6:x=7 B@7 D@8 E@9"))
    assert out == want(
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}, {"b": 4, "c": 6, "d": 8}], "e": 9},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}, {"b": 4, "d": 5}], "e": 9},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}, {"b": 4, "d": 8}], "e": 9},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}, {"b": 7, "d": 8}], "e": 9},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 5}, {"b": 7, "d": 8}], "e": 9},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "c": 6, "d": 8}], "e": 9},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 5}], "e": 9},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 8}], "e": 9},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 7, "d": 8}], "e": 9},
        {"a": 0, "g": [{"b": 1, "d": 5}, {"b": 7, "d": 8}], "e": 9},
        {"a": 0, "g": [{"b": 4, "d": 5}, {"b": 7, "d": 8}], "e": 9},
    )


def test_a_whole_group_condition_over_the_optional_step() -> None:
    # sum(g[].c.x) < 5: (b1 c2 d3) 6 no; without any c it holds (a step left out)
    p = P(f"{STEPS} WHERE sum(g[].c.x) < 5")
    assert ids(p, stream("A@0 B@1 C@2:x=6 D@3 E@4")) == want({"a": 0, "g": [{"b": 1, "d": 3}], "e": 4})


def test_skip_till_next_match_does_not_pass_over_an_optional_step_that_can_bind() -> None:
    # c2 can bind: (b1 d3) without it does not exist; with X2 instead the iteration has no c
    p = P(f"{STEPS} WHERE skip-till-next-match")
    assert ids(p, stream("A@0 B@1 C@2 D@3 E@4")) == want({"a": 0, "g": [{"b": 1, "c": 2, "d": 3}], "e": 4})
    assert ids(p, stream("A@0 B@1 X@2 D@3 E@4")) == want({"a": 0, "g": [{"b": 1, "d": 3}], "e": 4})
    # per iteration: the first has no C before its d, the second takes c5
    assert ids(p, stream("A@0 B@1 D@2 B@3 X@4 C@5 D@6 E@7")) == want(
        {"a": 0, "g": [{"b": 1, "d": 2}, {"b": 3, "c": 5, "d": 6}], "e": 7},
    )


def test_skip_till_any_match_may_pass_over_it() -> None:
    # c2 and c3 each may bind or be passed over
    assert ids(P(STEPS), stream("A@0 B@1 C@2 C@3 D@4 E@5")) == want(
        {"a": 0, "g": [{"b": 1, "d": 4}], "e": 5},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 4}], "e": 5},
        {"a": 0, "g": [{"b": 1, "c": 3, "d": 4}], "e": 5},
    )


def test_strict_contiguity_per_iteration() -> None:
    p = P(f"{STEPS} WHERE strict-contiguity")
    assert ids(p, stream("A@0 B@1 D@2 B@3 C@4 D@5 E@6")) == want({"a": 0, "g": [{"b": 1, "d": 2}, {"b": 3, "c": 4, "d": 5}], "e": 6})


def test_two_optional_steps_in_a_row() -> None:
    # either, both or neither of c and d per iteration
    p = P("SEQ(A a, SEQ(B b, C? c, D? d, E e)+ g[])")
    assert ids(p, stream("A@0 B@1 C@2 D@3 E@4")) == want(
        {"a": 0, "g": [{"b": 1, "e": 4}]},
        {"a": 0, "g": [{"b": 1, "c": 2, "e": 4}]},
        {"a": 0, "g": [{"b": 1, "d": 3, "e": 4}]},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3, "e": 4}]},
    )


def test_an_optional_last_step_the_iteration_may_end_without() -> None:
    # after b the iteration is complete: e may follow, or c of the same iteration, or the next b
    p = P("SEQ(A a, SEQ(B b, C? c)+ g[], E e)")
    assert ids(p, stream("A@0 B@1 C@2 B@3 C@4 E@5")) == want(
        {"a": 0, "g": [{"b": 1}], "e": 5},
        {"a": 0, "g": [{"b": 1, "c": 2}], "e": 5},
        {"a": 0, "g": [{"b": 1, "c": 4}], "e": 5},
        {"a": 0, "g": [{"b": 3}], "e": 5},
        {"a": 0, "g": [{"b": 3, "c": 4}], "e": 5},
        {"a": 0, "g": [{"b": 1}, {"b": 3}], "e": 5},
        {"a": 0, "g": [{"b": 1}, {"b": 3, "c": 4}], "e": 5},
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3}], "e": 5},
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "e": 5},
    )


def test_an_optional_last_step_at_the_end_of_the_pattern() -> None:
    # the match is emitted where the iteration may end: at b1, at c2 (its own b1's c), at b3
    p = P("SEQ(A a, SEQ(B b, C? c){1,2} g[]) WHERE g[i].c.x > 0")
    out = run(p, stream("A@0 B@1 C@2:x=1 B@3 C@4:x=0"))
    assert [(m["ids"]["g"], m["end"]) for m in sorted(out, key=lambda m: (m["end"], repr(m["ids"])))] == [
        ([{"b": 1}], 1),
        ([{"b": 1, "c": 2}], 2),
        ([{"b": 1, "c": 2}, {"b": 3}], 3),
        ([{"b": 1}, {"b": 3}], 3),
        ([{"b": 3}], 3),
    ]


def test_an_optional_last_step_under_skip_till_next_match() -> None:
    # c2 can bind after b1: the iteration (b1) without it, then e3 or b, does not exist
    p = P("SEQ(A a, SEQ(B b, C? c)+ g[], E e) WHERE skip-till-next-match")
    assert ids(p, stream("A@0 B@1 C@2 E@3")) == want({"a": 0, "g": [{"b": 1, "c": 2}], "e": 3})
    assert ids(p, stream("A@0 B@1 B@2 C@3 E@4")) == want({"a": 0, "g": [{"b": 1}, {"b": 2, "c": 3}], "e": 4})


def test_an_optional_first_step_the_iteration_may_start_without() -> None:
    # each iteration (c? b): c1 b2, b2, c3 b4, b4 (c3 left out), and two of them in order
    p = P("SEQ(A a, SEQ(C? c, B b)+ g[], E e)")
    assert ids(p, stream("A@0 C@1 B@2 C@3 B@4 E@5")) == want(
        {"a": 0, "g": [{"c": 1, "b": 2}], "e": 5},
        {"a": 0, "g": [{"b": 2}], "e": 5},
        {"a": 0, "g": [{"c": 1, "b": 4}], "e": 5},
        {"a": 0, "g": [{"c": 3, "b": 4}], "e": 5},
        {"a": 0, "g": [{"b": 4}], "e": 5},
        {"a": 0, "g": [{"c": 1, "b": 2}, {"c": 3, "b": 4}], "e": 5},
        {"a": 0, "g": [{"c": 1, "b": 2}, {"b": 4}], "e": 5},
        {"a": 0, "g": [{"b": 2}, {"c": 3, "b": 4}], "e": 5},
        {"a": 0, "g": [{"b": 2}, {"b": 4}], "e": 5},
    )


def test_an_optional_first_step_under_the_tie_rule_strict() -> None:
    # strict: a later iteration's c after the previous one's b by timestamp (c@2 ties b@2: only the b4 iteration)
    p = P("SEQ(A a, SEQ(C? c, B b)+ g[], E e) WHERE count(g[]) = 2")
    assert ids(p, stream("A@0 B@2 C@2 B@4 E@5"), "strict") == want({"a": 0, "g": [{"b": 1}, {"b": 3}], "e": 4})


def test_places_of_a_group_with_an_optional_step() -> None:
    # [c]: c's list has an element (its next one is a take); b,c / b,d: the current iteration's steps
    labels = [pl.label for pl in build_net([P("SEQ(A a, SEQ(B b, C? c, D d)+ g[], E e)")]).patterns[0].places]
    assert labels == ["start", "a", "a;g:b", "a;g[c]:b,c", "a;g+", "a;g+[c]", "a;g+:b", "a;g+;e", "a;g+[c]:b", "a;g+[c];e", "a;g+[c]:b,c"]


def _kernel_and_engine(text: str, spec: str) -> list[dict[str, Any]]:
    net = build_net(list(parse_text(text).patterns))
    assert supports(net) == (True, "covered")
    out = both(net, stream(spec), "arrival", 3, sweep_every=1)
    assert out["kernel"] == out["python"] and out["kernel"][0]
    return out["python"][0]  # type: ignore[no-any-return]


def test_kernel_tables_and_composite_ids_place_the_optional_step() -> None:
    # q reads p's composite events: an iteration's id lists the steps it bound (1;2 then 3;4;5)
    text = f"PATTERN p: {STEPS} WHERE count(g[]) = 2 RETURN R(s = sum(g[].c.x))\nPATTERN q: SEQ(R r)"
    out = _kernel_and_engine(text, "A@0:x=0 B@1:x=0 D@2:x=0 B@3:x=0 C@4:x=2 D@5:x=0 E@6:x=0")
    assert sorted(m["ids"]["r"] for m in out if m["pattern"] == "q") == ["p[0,1;2+3;4;5,6]", "p[0,1;2+3;5,6]"]
    assert [m["ids"] for m in out if m["pattern"] == "p"][0]["g"] in ([{"b": 1, "d": 2}, {"b": 3, "c": 4, "d": 5}], [{"b": 1, "d": 2}, {"b": 3, "d": 5}])


def test_a_negation_after_a_group_ending_with_an_optional_step_blocks_and_is_cleared() -> None:
    """The negation after the group spans from the group's last event (its steps' latest):
    A2 lies after the first iteration's s2 (A1), so B3 cannot be z0, yet under
    skip-till-next-match the partial match is not consumed there: C4 starts the next
    iteration (clearing it) and B5 is z0. (Checked only at emission, the refused z0 at B3
    used to consume the partial match.)"""
    p = P("SEQ(SEQ(C s0, A? s2)+ g[], !(A n), B z0) WHERE skip-till-next-match")
    assert ids(p, stream("C@0 A@0 A@0 B@0 C@0 B@0")) == want({"g": [{"s0": 0, "s2": 1}, {"s0": 4}], "z0": 5}, {"g": [{"s0": 4}], "z0": 5})


def test_a_gap_after_the_optional_step_follows_it_or_the_step_before_it() -> None:
    # d within 2 of the iteration's c, and of b where it left c out: (b1 c4 d5), not (b1 d5) at 4
    # after b1; the second iteration (b6 d7)
    p = P("SEQ(A a, SEQ(B b, C? c, D d AFTER 0 TO 2)+ g[], E e)")
    assert ids(p, stream("A@0 B@1 C@4 D@5 B@6 D@7 E@8")) == want(
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}, {"b": 4, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}], "e": 6},
        {"a": 0, "g": [{"b": 4, "d": 5}], "e": 6},
    )


def test_a_gap_from_the_optional_step_binds_nothing_where_the_iteration_left_it_out() -> None:
    # FROM c: (b3 c4 d5) within 2, (b3 d6) without c holds, (b3 c4 d6) at 4 after c4 does not
    p = P("SEQ(A a, SEQ(B b, C? c, D d AFTER 0 TO 2 FROM c)+ g[], E e) WHERE count(g[]) = 2")
    assert ids(p, stream("A@0 B@1 D@9 B@10 C@11 D@12 D@15 E@20")) == want(
        {"a": 0, "g": [{"b": 1, "d": 2}, {"b": 3, "c": 4, "d": 5}], "e": 7},
        {"a": 0, "g": [{"b": 1, "d": 2}, {"b": 3, "d": 5}], "e": 7},
        {"a": 0, "g": [{"b": 1, "d": 2}, {"b": 3, "d": 6}], "e": 7},
    )

def test_a_timeout_inside_an_iteration_lists_what_it_bound() -> None:
    # the window (4) closes on b3 c4 of the second iteration: its ids keep c4 in it
    text = f"PATTERN p: {STEPS} WITHIN 4 ON TIMEOUT RETURN T(n = count(g[]))"
    out = _kernel_and_engine(text, "A@0:x=0 B@1:x=0 D@2:x=0 B@3:x=0 C@4:x=0 X@9:x=0")
    timeouts = [m["ids"] for m in out if "timeout" in m]
    assert {"a": 0, "g": [{"b": 1, "d": 2}, {"b": 3, "c": 4}]} in timeouts


# ----------------------------------------------------------------------------- refused


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        ("SEQ(A a, SEQ(C? c, D? d)+ g[], E e)", PatternSemanticError, "a repeated group needs at least one step that is not optional (g[])"),
        (
            "SEQ(A a, SEQ(C? c, B b)+ g[] UNTIL U u, E e) WHERE u.x < count(g[])",
            PatternUnsupportedError,
            "a stop condition (UNTIL ... u) of the repeated group g[] starting with an optional step (c) reads the group "
            "so far: not yet (an iteration may begin at c or after it); read the stop event and variables bound before "
            "the group",
        ),
        (
            "SEQ(A a, SEQ(B b, C? c, !(X x))+ g[], E e)",
            PatternUnsupportedError,
            "a negation inside g[] next to an optional step (c) is not supported yet: put it between two required steps",
        ),
        (
            "SEQ(A a, SEQ(C? c, B b)+ g[], E e) WHERE g[i].b.x > g[i-1].c.x",
            PatternUnsupportedError,
            "g[i-1].c.x reads the optional step c before the group's first required step b of the iteration before: "
            "not yet (an iteration may start at either); read it as g[i].c.x, g[k] / g[last] or through an "
            "aggregate, sum(g[].c.x)",
        ),
        (
            f"{STEPS} WHERE g[i].c.x < g[i].d.x + e.x",
            PatternUnsupportedError,
            "an iteration condition reading the optional step g[i].c and a later step (g[i].d) and an event bound "
            "after the group is not supported yet: split it so that the part reading c reads no later step",
        ),
        (  # (only optional steps after it in its iteration: left out, the span would leave the iteration)
            "SEQ(A a, SEQ(B b, !(X x), C? c)+ g[], E e)",
            PatternUnsupportedError,
            "a negation inside g[] next to an optional step (c) is not supported yet: put it between two required steps",
        ),
        (  # (... or before it)
            "SEQ(A a, SEQ(C? c, F? f, !(X x), B b)+ g[], E e)",
            PatternUnsupportedError,
            "a negation inside g[] next to an optional step (f) is not supported yet: put it between two required steps",
        ),
        (  # (between iterations, beside the optional first step)
            "SEQ(A a, SEQ(!(X x), C? c, B b)+ g[], E e)",
            PatternUnsupportedError,
            "a negation inside g[] next to an optional step (c) is not supported yet: put it between two required steps",
        ),
        (
            "SEQ(A a, SEQ(B b, C? c, D d, !(X x), F f)+ g[], E e) WHERE x.v < sum(g[].c.v)",
            PatternUnsupportedError,
            "a condition of the negation 'x' inside g[] reading the optional step 'c' is not supported yet (an "
            "iteration may leave it out)",
        ),
        (  # (between iterations: whether the iteration just completed bound c is not kept)
            "SEQ(A a, SEQ(B b, C? c, D d, !(X x))+ g[], E e) WHERE x.v = g[last].c.v",
            PatternUnsupportedError,
            "a condition of the negation 'x' inside g[] reading the optional step 'c' is not supported yet (an "
            "iteration may leave it out)",
        ),
        (
            "SEQ(A a, SEQ(C? c, B b AFTER 0 TO 2, D d)+ g[], E e)",
            PatternUnsupportedError,
            "a per-step gap inside g[] on b, whose steps before it in the iteration may all be left out (c too), is not "
            "supported yet: it would follow the previous iteration's last bound step; measure FROM a required step",
        ),
    ],
)
def test_what_stays_refused(text: str, kind: type[Exception], message: str) -> None:
    with pytest.raises(kind) as err:
        parse_text(f"PATTERN p: {text}", "t.pcep")
    head, _source, caret = str(err.value).splitlines()
    assert head.split(": error: ")[1] == message and caret.strip() == "^"


def test_tie_rule_either_places_the_optional_element_by_the_order_it_was_bound() -> None:
    # all of b1 c2 d3 b4 d5 at ts 1: under either c2 may lie in either iteration (after b4 too),
    # two matches with the same lists, told apart by the order the partial match bound them
    p = P(f"{STEPS} WHERE count(g[]) = 2")
    assert ids(p, stream("A@0 B@1 C@1 D@1 B@1 D@1 E@2"), "either") == want(
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}, {"b": 4, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "c": 2, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 5}], "e": 6},
    )
    assert ids(p, stream("A@0 B@1 C@1 D@1 B@1 D@1 E@2"), "arrival") == want(
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}, {"b": 4, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 5}], "e": 6},
    )


def test_tie_rule_either_orders_matches_of_equal_lists_by_iteration() -> None:
    # by their events first (c2's two before the one without it), then the two with c2 in the
    # order of the iteration holding it, on both engines alike
    net = build_net([P(f"{STEPS} WHERE count(g[]) = 2")])
    out = both(net, stream("A@0 B@1 C@1 D@1 B@1 D@1 E@2"), "either", 3)
    assert out["kernel"] == out["python"]
    assert [m["ids"] for m in out["python"][0]] == [
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}, {"b": 4, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "c": 2, "d": 5}], "e": 6},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 5}], "e": 6},
    ]


@pytest.mark.parametrize("engine", [Engine, KernelEngine])
def test_tie_rule_either_refuses_a_read_of_the_optional_step_by_iteration(engine: Any) -> None:
    # g[last].c delimits the iterations by the events' positions, not the order they were bound in
    net = build_net(list(parse_text(f"PATTERN p: {STEPS} WHERE g[last].c.x > 0", "t.pcep").patterns))
    with pytest.raises(PatternUnsupportedError) as err:
        engine(net, tie="either")
    assert str(err.value).splitlines() == [
        "t.pcep:1:58: error: pattern 'p': tie rule 'either' joins one timestamp's events in any order, so the "
        "iteration of g[] an event of the optional step c lies in follows the order it was bound in; reading it by "
        "iteration number (g[k].c, g[last].c, g[i-1].c) runs under the tie rules arrival and strict (g[i].c and "
        "aggregates run under either)",
        f"    PATTERN p: {STEPS} WHERE g[last].c.x > 0",
        "                                                             ^",
    ]


def test_the_match_table_holds_every_step_in_order() -> None:
    # a list of structs b, c, d whichever iteration comes first: c null where it was left out
    from petricep.output.table import to_table

    p = P(STEPS)
    net = build_net([p])
    matches = [m for m in Engine(net).run(stream("A@0 B@1 D@2 B@3 C@4 D@5 E@6")) if len(m.ids["g"]) == 2]
    table = to_table(matches, net)
    assert str(table.schema.field("g").type) == "list<item: struct<b: int64, c: int64, d: int64>>"
    assert sorted(table.column("g").to_pylist(), key=repr) == [
        [{"b": 1, "c": None, "d": 2}, {"b": 3, "c": 4, "d": 5}],
        [{"b": 1, "c": None, "d": 2}, {"b": 3, "c": None, "d": 5}],
    ]


def test_merged_with_another_pattern_s_group_of_the_same_name_and_more_steps() -> None:
    """Two patterns naming their groups ``g`` share its column in the kernel's match table:
    it is placed by position for both (the kernel zipped it where the other pattern's steps
    had no positions: s1@2 landed in the first iteration, before s0@1). p's matches of two
    iterations, exactly, on both engines (hypothesis found it: test_groups.py's merged property)."""
    pats = parse_text(
        "PATTERN p: SEQ(SEQ(A s0, A? s1)+ g[]) WHERE [k]\nPATTERN s: SEQ(SEQ(A s0, A s1, A s2)+ g[]) WHERE [k]\n"
    ).patterns
    out = both(build_net(pats), stream("A@0:k=0 A@0:k=0 A@0:k=0"), "arrival", 0, sweep_every=1)
    assert out["kernel"] == out["python"]
    assert [m["ids"]["g"] for m in out["kernel"][0] if m["pattern"] == "p" and len(m["ids"]["g"]) == 2] == [
        [{"s0": 0}, {"s0": 1}],
        [{"s0": 0}, {"s0": 1, "s1": 2}],
        [{"s0": 0, "s1": 1}, {"s0": 2}],
        [{"s0": 0}, {"s0": 2}],
        [{"s0": 1}, {"s0": 2}],
    ]
