"""An optional step inside a repeated group read by iteration number (issue 42):
``SEQ(A a, SEQ(B b, C? c, D d)+ g[], E e)`` with ``g[k].c.x`` (iteration k's c), ``g[i-1].c.x``
in an iteration condition (the previous iteration's c) and, for an optional step before the
group's first required one (``SEQ(C? c, B b)+ g[]``), ``g[1].c`` / ``g[last].c`` / ``g[k].c``.
Each event lies in the iteration placed by position (after that iteration's element of the
first required step and before the next one's; for a step before it, after the previous
one's and before its own); the read is unbound where that iteration left ``c`` out or the
group has no such iteration (``null`` in RETURN, a conjunct reading it holds). Hand cases
with exact ids on every matcher (test_groups.py's ``matcher`` fixture: the reference, the
Python engine, the compiled kernel); the hypothesis properties of test_groups.py draw these
reads too (``grouped_patterns``).
"""

from __future__ import annotations

from typing import Any

from petricep.lang.ast import Pattern
from petricep.lang.parser import parse_text
from tests.features.scenario import ids, run, stream, want
from tests.features.test_groups import matcher  # noqa: F401 (the fixture: every matcher)

STEPS = "SEQ(A a, SEQ(B b, C? c, D d)+ g[], E e)"
LEADING = "SEQ(A a, SEQ(C? c, B b)+ g[], E e)"


def P(text: str) -> Pattern:
    (p,) = parse_text(f"PATTERN p: {text}").patterns
    return p


def _attrs(p: Pattern, spec: str) -> list[tuple[Any, Any]]:
    return sorted(((m["ids"]["g"], m["attrs"]) for m in run(p, stream(spec))), key=repr)


def test_return_reads_iteration_k_s_optional_step() -> None:
    # three iterations (b1 d2)(b3 c4 d5)(b6 d7): g[2].c is c4, g[1] and g[3] left c out (null)
    p = P(f"{STEPS} WHERE skip-till-next-match RETURN R(one = g[1].c.x, two = g[2].c.x, three = g[3].c.x)")
    assert _attrs(p, "A@0 B@1 D@2 B@3 C@4:x=7 D@5 B@6 D@7 E@8") == [
        ([{"b": 1, "d": 2}, {"b": 3, "c": 4, "d": 5}, {"b": 6, "d": 7}], {"one": None, "two": 7, "three": None})
    ]


def test_a_condition_on_iteration_k_holds_where_it_left_c_out_or_is_missing() -> None:
    # g[2].c.x > 5: c5 (x 3) in a second iteration breaks it; a second iteration without c, and a
    # group of one iteration (no iteration 2), hold
    p = P(f"{STEPS} WHERE g[2].c.x > 5")
    assert ids(p, stream("A@0 B@1 C@2:x=9 D@3 B@4 C@5:x=3 D@6 E@7")) == want(
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}, {"b": 4, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}], "e": 7},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 1, "c": 5, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 1, "d": 3}], "e": 7},
        {"a": 0, "g": [{"b": 1, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 4, "c": 5, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 4, "d": 6}], "e": 7},
    )


def test_return_reads_null_past_the_group_s_iterations() -> None:
    # two iterations (b1 d2)(b3 c4 d5): g[2].c is c4, g[3].c null (the group has no third)
    p = P(f"{STEPS} WHERE skip-till-next-match RETURN R(two = g[2].c.x, three = g[3].c.x)")
    assert _attrs(p, "A@0 B@1 D@2 B@3 C@4:x=7 D@5 E@6") == [
        ([{"b": 1, "d": 2}, {"b": 3, "c": 4, "d": 5}], {"two": 7, "three": None}),
    ]


def test_the_previous_iteration_s_optional_step() -> None:
    # g[i].b.x > g[i-1].c.x: after (b1 c2 d*) with c.x 5 no later b (x 3, 1) holds; after an
    # iteration without c it holds (unbound), and on the first iteration (none before)
    p = P(f"{STEPS} WHERE g[i].b.x > g[i-1].c.x")
    assert ids(p, stream("A@0 B@1:x=0 C@2:x=5 D@3 B@4:x=3 D@5 B@6:x=1 D@7 E@8")) == want(
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}], "e": 8},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 5}], "e": 8},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 7}], "e": 8},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 5}, {"b": 6, "d": 7}], "e": 8},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 5}], "e": 8},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 7}], "e": 8},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 6, "d": 7}], "e": 8},
        {"a": 0, "g": [{"b": 1, "d": 3}], "e": 8},
        {"a": 0, "g": [{"b": 1, "d": 5}, {"b": 6, "d": 7}], "e": 8},
        {"a": 0, "g": [{"b": 1, "d": 5}], "e": 8},
        {"a": 0, "g": [{"b": 1, "d": 7}], "e": 8},
        {"a": 0, "g": [{"b": 4, "d": 5}, {"b": 6, "d": 7}], "e": 8},
        {"a": 0, "g": [{"b": 4, "d": 5}], "e": 8},
        {"a": 0, "g": [{"b": 4, "d": 7}], "e": 8},
        {"a": 0, "g": [{"b": 6, "d": 7}], "e": 8},
    )


def test_the_previous_iteration_s_c_on_a_step_after_the_current_one_s() -> None:
    # g[i].d.x > g[i-1].c.x checked on d: (b1 c2 d3)(b4 c5 d6) reads c2 (x 7: 6 > 7 no), not its
    # own c5 (x 1); after (b1 d3), without c, the second iteration holds
    p = P(f"{STEPS} WHERE g[i].d.x > g[i-1].c.x")
    assert ids(p, stream("A@0 B@1 C@2:x=7 D@3:x=0 B@4 C@5:x=1 D@6:x=6 E@7")) == want(
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 3}], "e": 7},
        {"a": 0, "g": [{"b": 1, "c": 2, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 1, "c": 5, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "c": 5, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 1, "d": 3}, {"b": 4, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 1, "d": 3}], "e": 7},
        {"a": 0, "g": [{"b": 1, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 4, "c": 5, "d": 6}], "e": 7},
        {"a": 0, "g": [{"b": 4, "d": 6}], "e": 7},
    )


def test_the_previous_iteration_s_c_with_the_step_after_the_group() -> None:
    # b.x > c.x + e.x of the iteration before, decided when e binds (replayed in order): (b1 c2)(b3) no (4 > 5)
    p = P("SEQ(A a, SEQ(B b, C? c)+ g[], E e) WHERE g[i].b.x > g[i-1].c.x + e.x")
    assert ids(p, stream("A@0 B@1:x=0 C@2:x=5 B@3:x=4 B@4:x=1 E@5:x=0")) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}], "e": 5},
        {"a": 0, "g": [{"b": 1}, {"b": 3}, {"b": 4}], "e": 5},
        {"a": 0, "g": [{"b": 1}, {"b": 3}], "e": 5},
        {"a": 0, "g": [{"b": 1}, {"b": 4}], "e": 5},
        {"a": 0, "g": [{"b": 1}], "e": 5},
        {"a": 0, "g": [{"b": 3}, {"b": 4}], "e": 5},
        {"a": 0, "g": [{"b": 3}], "e": 5},
        {"a": 0, "g": [{"b": 4}], "e": 5},
    )


def test_an_optional_first_step_read_by_iteration() -> None:
    # (c? b): c1 belongs to the b2 iteration, c3 to the b4 one; null where one started at b
    p = P(f"{LEADING} WHERE count(g[]) = 2 RETURN R(f = g[1].c.x, l = g[last].c.x, two = g[2].c.x, three = g[3].c.x)")
    assert _attrs(p, "A@0 C@1:x=1 B@2 C@3:x=3 B@4 E@5") == sorted(
        [
            ([{"c": 1, "b": 2}, {"c": 3, "b": 4}], {"f": 1, "l": 3, "two": 3, "three": None}),
            ([{"c": 1, "b": 2}, {"b": 4}], {"f": 1, "l": None, "two": None, "three": None}),
            ([{"b": 2}, {"c": 3, "b": 4}], {"f": None, "l": 3, "two": 3, "three": None}),
            ([{"b": 2}, {"b": 4}], {"f": None, "l": None, "two": None, "three": None}),
        ],
        key=repr,
    )


def test_a_condition_on_an_optional_first_step_s_first_iteration() -> None:
    # g[1].c.x < 2 decided once the first iteration's b binds: (c3 b4) alone breaks it (3), and
    # g[last].c.x > 2: (c1 b4) alone breaks it (1); in (c1 b2)(b4) the last iteration has no c
    p = P(f"{LEADING} WHERE g[last].c.x > 2 AND g[1].c.x < 2")
    assert ids(p, stream("A@0 C@1:x=1 B@2 C@3:x=3 B@4 E@5")) == want(
        {"a": 0, "g": [{"c": 1, "b": 2}, {"c": 3, "b": 4}], "e": 5},
        {"a": 0, "g": [{"c": 1, "b": 2}, {"b": 4}], "e": 5},
        {"a": 0, "g": [{"b": 2}, {"c": 3, "b": 4}], "e": 5},
        {"a": 0, "g": [{"b": 2}, {"b": 4}], "e": 5},
        {"a": 0, "g": [{"b": 2}], "e": 5},
        {"a": 0, "g": [{"b": 4}], "e": 5},
    )


def test_the_previous_iteration_s_last_step_from_an_optional_first_step() -> None:
    # SEQ(C? c, B b, D? d): g[i].c.x > g[i-1].d.x checked on c, before its iteration's b:
    # (c1 b2 d3)(c4 b5) breaks it (3 > 5 no); without d before, or without c, it holds
    p = P("SEQ(A a, SEQ(C? c, B b, D? d)+ g[], E e) WHERE g[i].c.x > g[i-1].d.x")
    assert ids(p, stream("A@0 C@1:x=1 B@2 D@3:x=5 C@4:x=3 B@5 E@6")) == want(
        {"a": 0, "g": [{"c": 1, "b": 2, "d": 3}, {"b": 5}], "e": 6},
        {"a": 0, "g": [{"c": 1, "b": 2, "d": 3}], "e": 6},
        {"a": 0, "g": [{"c": 1, "b": 2}, {"c": 4, "b": 5}], "e": 6},
        {"a": 0, "g": [{"c": 1, "b": 2}, {"b": 5}], "e": 6},
        {"a": 0, "g": [{"c": 1, "b": 2}], "e": 6},
        {"a": 0, "g": [{"b": 2, "d": 3}, {"b": 5}], "e": 6},
        {"a": 0, "g": [{"b": 2, "d": 3}], "e": 6},
        {"a": 0, "g": [{"b": 2}, {"c": 4, "b": 5}], "e": 6},
        {"a": 0, "g": [{"b": 2}, {"b": 5}], "e": 6},
        {"a": 0, "g": [{"b": 2}], "e": 6},
        {"a": 0, "g": [{"c": 1, "b": 5}], "e": 6},
        {"a": 0, "g": [{"c": 4, "b": 5}], "e": 6},
        {"a": 0, "g": [{"b": 5}], "e": 6},
    )


def test_under_skip_till_next_match_iteration_k_s_c_is_decided_where_it_binds() -> None:
    # g[2].c.x > 5 refuses c4 (x 1) as the second iteration's c when it comes, so it is passed
    # over (as v[k] is): (b1 d2)(b3 d5); without the condition c4 cannot be passed over
    p = P(f"{STEPS} WHERE skip-till-next-match AND g[2].c.x > 5")
    assert ids(p, stream("A@0 B@1 D@2 B@3 C@4:x=1 D@5 E@6")) == want({"a": 0, "g": [{"b": 1, "d": 2}, {"b": 3, "d": 5}], "e": 6})
    p = P(f"{STEPS} WHERE skip-till-next-match")
    assert ids(p, stream("A@0 B@1 D@2 B@3 C@4:x=1 D@5 E@6")) == want({"a": 0, "g": [{"b": 1, "d": 2}, {"b": 3, "c": 4, "d": 5}], "e": 6})


def test_under_skip_till_next_match_with_a_later_step_of_iteration_k() -> None:
    # g[2].c.x > g[2].d.x: decided when the second d binds, d5 (x 3 >= c4's 1) is passed over, d7 (x 0) taken
    p = P(f"{STEPS} WHERE skip-till-next-match AND g[2].c.x > g[2].d.x")
    ev = stream("A@0 B@1 D@2 B@3 C@4:x=1 D@5:x=3 C@6:x=9 D@7:x=0 E@8")
    assert ids(p, ev) == want({"a": 0, "g": [{"b": 1, "d": 2}, {"b": 3, "c": 4, "d": 7}], "e": 8})


def test_under_skip_till_next_match_an_optional_first_step_of_iteration_k() -> None:
    # (c? b): c2 (x 1) would begin the second iteration, g[2].c.x > 5 refuses it there: (b1)(b3)
    p = P(f"{LEADING} WHERE skip-till-next-match AND g[2].c.x > 5")
    assert ids(p, stream("A@0 B@1 C@2:x=1 B@3 E@4")) == want({"a": 0, "g": [{"b": 1}, {"b": 3}], "e": 4})
    p = P(f"{LEADING} WHERE skip-till-next-match")
    assert ids(p, stream("A@0 B@1 C@2:x=1 B@3 E@4")) == want({"a": 0, "g": [{"b": 1}, {"c": 2, "b": 3}], "e": 4})
