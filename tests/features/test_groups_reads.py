"""Repeated groups read from outside them (issue 42): an iteration condition reading a single
event bound after the group or beside it in an AND (``g[i].c.x < d.x``: every iteration,
decided when ``d`` binds for the iterations before it and on the step it is checked on for
the later ones); and the refusals that stay, with their reasons. Hand cases with exact ids
on every matcher (the reference, the Python engine, the compiled kernel as a run drives it:
test_groups.py's ``matcher`` fixture); the hypothesis properties of test_groups.py draw these
conditions too (``grouped_patterns``).
"""

from __future__ import annotations

import pytest

from petricep.errors import PatternUnsupportedError
from petricep.lang.ast import Pattern
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from tests.features.scenario import ids, stream, want
from tests.features.test_groups import matcher  # noqa: F401 (the fixture: every matcher)


def P(text: str) -> Pattern:
    (p,) = parse_text(f"PATTERN p: {text}").patterns
    return p


# ----------------------------------------------------------------------------- after the group


def test_every_iteration_against_the_step_after_the_group() -> None:
    # d5 (x 3): c2 (1) < 3 holds, c4 (5) does not: only the iterations without c4
    p = P("SEQ(A a, SEQ(B b, C c)+ g[], D d) WHERE g[i].c.x < d.x")
    assert ids(p, stream("A@0 B@1 C@2:x=1 B@3 C@4:x=5 D@5:x=3")) == want({"a": 0, "g": [{"b": 1, "c": 2}], "d": 5})


def test_two_steps_of_the_iteration_against_the_step_after() -> None:
    # b + c < d (3): (1,2) 1+1 yes, (1,4) 1+5 no, (3,4) 0+5 no
    p = P("SEQ(A a, SEQ(B b, C c)+ g[], D d) WHERE g[i].b.x + g[i].c.x < d.x")
    assert ids(p, stream("A@0 B@1:x=1 C@2:x=1 B@3:x=0 C@4:x=5 D@5:x=3")) == want({"a": 0, "g": [{"b": 1, "c": 2}], "d": 5})


def test_the_previous_iteration_and_the_step_after() -> None:
    # b(i) > c(i-1) + d (1), vacuous on the first iteration: the six single iterations, and
    # (1,2)(3,4) 3 > 2, (1,2)(3,6) 3 > 2, (1,2)(5,6) 6 > 2; not (1,4)(5,6) or (3,4)(5,6)
    # (6 > 6), nor (1,2)(3,4)(5,6)
    p = P("SEQ(A a, SEQ(B b, C c)+ g[], D d) WHERE g[i].b.x > g[i-1].c.x + d.x")
    ev = stream("A@0 B@1:x=0 C@2:x=1 B@3:x=3 C@4:x=5 B@5:x=6 C@6:x=2 D@7:x=1")
    singles = [{"b": b, "c": c} for b, c in ((1, 2), (1, 4), (1, 6), (3, 4), (3, 6), (5, 6))]
    doubles = [[{"b": 1, "c": 2}, {"b": b, "c": c}] for b, c in ((3, 4), (3, 6), (5, 6))]
    assert ids(p, ev) == want(*({"a": 0, "g": [s], "d": 7} for s in singles), *({"a": 0, "g": d, "d": 7} for d in doubles))


def test_with_a_variable_before_the_group_in_one_conjunct() -> None:
    # a.x (0) < c < d.x (4) in one conjunct: c2 (2) yes, c4 (7) no, c6 (-1) no
    p = P("SEQ(A a, SEQ(B b, C c)+ g[], D d) WHERE g[i].c.x - a.x > 0 AND d.x - g[i].c.x > 0")
    ev = stream("A@0:x=0 B@1 C@2:x=2 B@3 C@4:x=7 B@5 C@6:x=-1 D@7:x=4")
    assert ids(p, ev) == want({"a": 0, "g": [{"b": 1, "c": 2}], "d": 7})


def test_a_step_of_an_or_branch_not_taken_reads_nothing() -> None:
    # the d branch: c2 (5) < d (3) fails; the e branch: the condition is vacuous
    p = P("SEQ(A a, SEQ(B b, C c)+ g[], OR(D d, E e)) WHERE g[i].c.x < d.x")
    assert ids(p, stream("A@0 B@1 C@2:x=5 D@3:x=3 E@4")) == want({"a": 0, "g": [{"b": 1, "c": 2}], "e": 4})


def test_an_optional_step_after_the_group_left_out() -> None:
    # with d3: c2 (5) < 3 fails; without d the conjunct reads a step left out: it holds
    p = P("SEQ(A a, SEQ(B b, C c)+ g[], D? d, E e) WHERE g[i].c.x < d.x")
    assert ids(p, stream("A@0 B@1 C@2:x=5 D@3:x=3 E@4")) == want({"a": 0, "g": [{"b": 1, "c": 2}], "e": 4})


def test_skip_till_next_match_decides_at_the_step_after() -> None:
    # under skip-till-next-match d3 (x 0) extends nothing (c2 1 < 0 fails when it binds), so it
    # is skipped; b4 then starts the next iteration (it may: it is not skipped for d6), c5, d6
    # (5): both c below it
    p = P("SEQ(A a, SEQ(B b, C c)+ g[], D d) WHERE skip-till-next-match AND g[i].c.x < d.x")
    ev = stream("A@0 B@1 C@2:x=1 D@3:x=0 B@4 C@5:x=1 D@6:x=5")
    assert ids(p, ev) == want({"a": 0, "g": [{"b": 1, "c": 2}, {"b": 4, "c": 5}], "d": 6})


# ----------------------------------------------------------------------------- beside it in an AND


def test_and_sibling_bound_between_iterations() -> None:
    # d2 (3) between the first and the second iteration: c1 (1) and c6 (2) below it, c4 (5) not;
    # the iterations before d are checked when it binds, the later ones on their c
    p = P("AND(SEQ(B b, C c)+ g[], D d) WHERE g[i].c.x < d.x")
    assert ids(p, stream("B@1 C@2:x=1 D@3:x=3 B@4 C@5:x=5 B@6 C@7:x=2")) == want(
        {"g": [{"b": 0, "c": 1}], "d": 2},
        {"g": [{"b": 0, "c": 6}], "d": 2},
        {"g": [{"b": 3, "c": 6}], "d": 2},
        {"g": [{"b": 5, "c": 6}], "d": 2},
        {"g": [{"b": 0, "c": 1}, {"b": 3, "c": 6}], "d": 2},
        {"g": [{"b": 0, "c": 1}, {"b": 5, "c": 6}], "d": 2},
    )


def test_and_sibling_bound_inside_an_iteration() -> None:
    # d3 (3) after b2 and before c4 (4): that iteration's c is checked on its own step (4 < 3
    # fails); c1 (1) was bound before d and is checked when d binds
    p = P("AND(SEQ(B b, C c)+ g[], D d) WHERE g[i].c.x < d.x")
    assert ids(p, stream("B@1 C@2:x=1 B@3 D@4:x=3 C@5:x=4")) == want({"g": [{"b": 0, "c": 1}], "d": 3})


def test_and_sibling_and_the_previous_iteration() -> None:
    # b(i) > c(i-1) - d (d 2): (0,1)(2,3) b2 (0) > c1 (3) - 2 = 1 no; with b2 at 2: yes
    text = "AND(SEQ(B b, C c)+ g[], D d) WHERE g[i].b.x > g[i-1].c.x - d.x"
    two = [{"b": 0, "c": 1}, {"b": 2, "c": 3}]
    singles = [{"g": [{"b": b, "c": c}], "d": 4} for b, c in ((0, 1), (0, 3), (2, 3))]
    assert ids(P(text), stream("B@1:x=0 C@2:x=3 B@3:x=0 C@4:x=0 D@5:x=2")) == want(*singles)
    assert ids(P(text), stream("B@1:x=0 C@2:x=3 B@3:x=2 C@4:x=0 D@5:x=2")) == want(*singles, {"g": two, "d": 4})


def test_the_text_round_trips() -> None:
    p = P("SEQ(A a, SEQ(B b, C c)+ g[], D d) WHERE g[i].c.x < d.x")
    assert P(pattern_text(p).partition(": ")[2]).conditions == p.conditions


# ----------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "SEQ(A a, SEQ(B b, C c)+ g[], D+ d[]) WHERE g[i].c.x < d[last].x",
            "an iteration condition over g[i] reads g[], variables bound before the group and single events bound after "
            "it or beside it, not a Kleene list ('d'): not yet",
        ),
        (
            "AND(SEQ(B b, C c)+ g[], SEQ(D d, E e)+ h[]) WHERE g[i].c.x < h[last].d.x",
            "not another repeated group ('h')",
        ),
        (
            "SEQ(A a, SEQ(B b, !(X x), C c)+ g[]) WHERE x.x > g[i].c.x",
            "reads its iteration's steps before it (b), not g[i].c: that one is not bound while the iteration waits for it",
        ),
        (
            "SEQ(A a, AND(SEQ(B b, C c)+ g[] GREEDY, D d)) WHERE skip-till-next-match",
            "not yet as a child of AND or OR itself: put it in a SEQ with the step after it",
        ),
    ],
)
def test_reads_that_stay_refused(text: str, message: str) -> None:
    # (a gap FROM a variable not bound before the group, a stop condition reading a later step,
    # a negation reading a later step: tests/features/test_groups_negation_reads.py, test_groups_until.py)
    with pytest.raises(PatternUnsupportedError) as err:
        parse_text(f"PATTERN p: {text}", "t.pcep")
    assert message in str(err.value)
    assert "^" in str(err.value)
