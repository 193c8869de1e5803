"""Repeated groups that may bind no iteration (issue 42): ``SEQ(B b, C c)* g[]`` (zero or
more), ``SEQ(B b, C c)? g[]`` (zero or one), ``{0,m}`` (SQL's ``(B C)*`` / ``(B C)?``, Flink's
``optional()``). A match without an iteration leaves ``g`` out as it leaves out an optional
step ``T? v``: absent from the ids, null in RETURN, a WHERE conjunct reading it holds; under
skip-till-next-match a group that can start is not passed over. Hand cases with exact ids on
every matcher; the properties of test_groups_bounded.py draw these bounds too.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from petricep.errors import PatternSemanticError
from petricep.lang.ast import Group
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from tests.features.scenario import (
    AND,
    NEXT,
    SEQ,
    STRICT,
    cmp,
    ids,
    neg,
    pat,
    ref,
    returns,
    run,
    stream,
    want,
)
from tests.features.test_groups import BC, g, gagg, matcher  # noqa: F401 (the fixture: every matcher)


def zero(most: int | None = None) -> Group:
    return replace(BC, least=0, most=most)


def test_zero_or_more_iterations() -> None:
    # d1 with no iteration, d4 with none or (b2 c3)
    p = pat(SEQ(ref("A", "a"), zero(), ref("D", "d")))
    assert ids(p, stream("A@0 D@1 B@2 C@3 D@4")) == want(
        {"a": 0, "d": 1}, {"a": 0, "d": 4}, {"a": 0, "g": [{"b": 2, "c": 3}], "d": 4}
    )


def test_zero_or_one_iteration() -> None:
    # ?: at most one iteration, so (b1 c2)(b3 c4) is no match
    p = pat(SEQ(ref("A", "a"), zero(1), ref("D", "d")))
    assert ids(p, stream("A@0 B@1 C@2 B@3 C@4 D@5")) == want(
        {"a": 0, "d": 5},
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 5},
        {"a": 0, "g": [{"b": 1, "c": 4}], "d": 5},
        {"a": 0, "g": [{"b": 3, "c": 4}], "d": 5},
    )


def test_a_group_first_or_last_may_be_left_out() -> None:
    first = pat(SEQ(zero(), ref("D", "d")))
    assert ids(first, stream("B@0 C@1 D@2")) == want({"d": 2}, {"g": [{"b": 0, "c": 1}], "d": 2})
    last = pat(SEQ(ref("A", "a"), zero(2)))
    out = run(last, stream("A@0 B@1 C@2"))
    assert [(m["ids"], m["end"]) for m in out] == [({"a": 0}, 0), ({"a": 0, "g": [{"b": 1, "c": 2}]}, 2)]


def test_a_group_left_out_reads_null_and_its_conditions_hold() -> None:
    # without an iteration, g[i].b.x > 5 and count(g[]) = 1 hold (not checked), RETURN reads null
    p = pat(
        SEQ(ref("A", "a"), zero(), ref("D", "d")),
        cmp(g("g", "b", "i"), ">", 5),
        cmp(gagg("count", "g"), "=", 1),
        returns=returns("R", n=gagg("count", "g"), last=g("g", "c", "last")),
    )
    out = run(p, stream("A@0:x=0 D@1:x=0 B@2:x=9 C@3:x=7 D@4:x=0 B@5:x=1 C@6:x=1 D@7:x=0"))
    assert [(m["ids"], m["attrs"]) for m in out] == [
        ({"a": 0, "d": 1}, {"n": None, "last": None}),
        ({"a": 0, "g": [{"b": 2, "c": 3}], "d": 4}, {"n": 1, "last": 7}),
        ({"a": 0, "d": 4}, {"n": None, "last": None}),
        ({"a": 0, "g": [{"b": 2, "c": 3}], "d": 7}, {"n": 1, "last": 7}),
        ({"a": 0, "g": [{"b": 2, "c": 6}], "d": 7}, {"n": 1, "last": 1}),
        ({"a": 0, "d": 7}, {"n": None, "last": None}),
    ]


def test_skip_till_next_match_does_not_pass_over_a_group_that_can_start() -> None:
    # b1 can start the group: the match without it (a0 d3) does not exist
    p = pat(SEQ(ref("A", "a"), zero(), ref("D", "d")), strategy=NEXT)
    assert ids(p, stream("A@0 B@1 C@2 D@3")) == want({"a": 0, "g": [{"b": 1, "c": 2}], "d": 3})
    assert ids(p, stream("A@0 X@1 D@2")) == want({"a": 0, "d": 2})


def test_strict_contiguity_with_a_group_left_out() -> None:
    p = pat(SEQ(ref("A", "a"), zero(), ref("D", "d")), strategy=STRICT)
    assert ids(p, stream("A@0 D@1 A@2 B@3 C@4 D@5 A@6 B@7 D@8")) == want(
        {"a": 0, "d": 1}, {"a": 2, "g": [{"b": 3, "c": 4}], "d": 5}
    )


def test_a_negation_beside_a_group_left_out_spans_the_steps_around_it() -> None:
    # !(N n) before the group: between a and the group's first b, or a and d without it
    p = pat(SEQ(ref("A", "a"), neg("N", "n"), zero(), ref("D", "d")))
    assert ids(p, stream("A@0 N@1 D@2")) == want()
    assert ids(p, stream("A@0 B@1 N@2 C@3 D@4")) == want({"a": 0, "g": [{"b": 1, "c": 3}], "d": 4})


def test_places_of_a_zero_or_one_group() -> None:
    labels = [pl.label for pl in build_net([pat(SEQ(ref("A", "a"), zero(1), ref("D", "d")))]).patterns[0].places]
    assert labels == ["start", "a", "a;g:b", "a;d", "a;g{1}", "a;g{1};d"]


def test_parse_star_and_question_mark() -> None:
    (p,) = parse_text("PATTERN p: SEQ(A a, SEQ(B b, C c)* g[], D d, SEQ(B e, C h)? k[])").patterns
    groups = [c for c in p.structure.children if isinstance(c, Group)]  # type: ignore[union-attr]
    assert [(x.least, x.most, x.quantifier()) for x in groups] == [(0, None, "*"), (0, 1, "?")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("AND(SEQ(B b, C c)* g[], D d)", "a repeated group that may bind no iteration (g[] *) must be an element of a SEQ, as an optional step"),
        ("SEQ(!(N n), SEQ(B b, C c)? g[])", "a SEQ needs at least one step that is not optional"),
    ],
)
def test_a_group_that_may_be_left_out_stands_in_a_seq(text: str, message: str) -> None:
    with pytest.raises(PatternSemanticError) as err:
        parse_text(f"PATTERN p: {text}", "t.pcep")
    assert str(err.value).splitlines()[0].split(": error: ")[1] == message


def test_inside_a_seq_under_and() -> None:
    # a SEQ step inside AND: d anywhere, SEQ(e, g?) with or without its iteration
    p = pat(AND(SEQ(ref("E", "e"), zero(1)), ref("D", "d")))
    assert ids(p, stream("E@0 D@1 B@2 C@3")) == want({"e": 0, "d": 1}, {"e": 0, "g": [{"b": 2, "c": 3}], "d": 1})
