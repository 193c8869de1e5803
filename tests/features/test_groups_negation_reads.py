"""A negation inside a repeated group reading the group so far (issue 42): between two steps,
``SEQ(B b, !(X x), C c)+ g[]``, its conditions read the iteration it lies in (``g[i].b``,
``g[last].b``), the one before it (``g[i-1].s``, any step; vacuous on the first iteration),
``g[k].s`` and aggregates over the iterations so far (the current one's bound steps too,
``count(g[])`` the iterations begun); between iterations, ``SEQ(B b, C c, !(X x))+ g[]``,
the iteration just completed as ``g[last].s``, ``g[k].s`` and aggregates over the complete
iterations. Each is checked in the scan, where the partial match waits at the negation: a
read of a step the group has not bound yet is a value that does not exist (false). And what
stays refused, with its exact message and caret.

Hand cases with exact ids on every matcher (the reference, the Python engine, the compiled
kernel: test_groups.py's ``matcher`` fixture); test_groups.py's hypothesis properties draw
these conditions too (``grouped_patterns``: kernel == Python engine == reference).
"""

from __future__ import annotations

import pytest

from petricep.errors import PatternUnsupportedError
from petricep.lang.parser import parse_text
from tests.features.scenario import ids, stream, want
from tests.features.test_groups import matcher  # noqa: F401 (the fixture: every matcher)

BETWEEN = "SEQ(A a, SEQ(B b, !(X x), C c)+ g[], D d)"  # a negation between two steps
AFTER = "SEQ(A a, SEQ(B b, C c, !(X x))+ g[], D d)"  # one at the group's end: between iterations


def _ids(structure: str, where: str, spec: str) -> set[str]:
    (p,) = parse_text(f"PATTERN p: {structure} WHERE {where} WITHIN 20").patterns
    return ids(p, stream(spec))  # type: ignore[no-any-return]


def _it(*pairs: tuple[int, int]) -> list[dict[str, int]]:
    return [{"b": b, "c": c} for b, c in pairs]


def _m(*pairs: tuple[int, int], d: int) -> dict:
    return {"a": 0, "g": _it(*pairs), "d": d}


# ----------------------------------------------------------------------------- between two steps


def test_the_previous_iterations_later_step() -> None:
    # x.v = g[i-1].c.v: X4 lies in b3's iteration; after (b1 c2) it is broken where X4's v is
    # c2's (5); as a first iteration (b1 c5, b3 c5) the conjunct holds vacuously: X4 breaks it
    spec = "A@0 B@1 C@2:v=5 B@3 X@4:v={} C@5:v=1 D@6"
    assert _ids(BETWEEN, "x.v = g[i-1].c.v", spec.format(7)) == want(_m((1, 2), d=6), _m((1, 2), (3, 5), d=6))
    assert _ids(BETWEEN, "x.v = g[i-1].c.v", spec.format(5)) == want(_m((1, 2), d=6))


def test_the_previous_iterations_earlier_step() -> None:
    # x.v = g[i-1].b.v: the b before the iteration's own (b1, 3); vacuous on a first iteration
    spec = "A@0 B@1:v=3 C@2 B@3:v=4 X@4:v={} C@5 D@6"
    assert _ids(BETWEEN, "x.v = g[i-1].b.v", spec.format(4)) == want(_m((1, 2), d=6), _m((1, 2), (3, 5), d=6))
    assert _ids(BETWEEN, "x.v = g[i-1].b.v", spec.format(3)) == want(_m((1, 2), d=6))


def test_the_first_iterations_steps() -> None:
    # x.v = g[1].b.v: b1's v (1) breaks (b1 c5) (its own first iteration) and (b1 c2)(b3 c5);
    # (b3 c5) reads b3 (2): kept
    spec = "A@0 B@1:v=1 C@2 B@3:v=2 X@4:v=1 C@5 D@6"
    assert _ids(BETWEEN, "x.v = g[1].b.v", spec) == want(_m((1, 2), d=6), _m((3, 5), d=6))
    # x.v = g[1].c.v: on the first iteration its c is not bound yet (false: X2, X5 forbid
    # nothing there); in b4's second iteration X5 (5) is c3's v: (b1 c3)(b4 c6) broken
    spec = "A@0 B@1 X@2:v=5 C@3:v=5 B@4 X@5:v=5 C@6:v=1 D@7"
    assert _ids(BETWEEN, "x.v = g[1].c.v", spec) == want(_m((1, 3), d=7), _m((1, 6), d=7), _m((4, 6), d=7))


def test_count_is_the_iterations_begun() -> None:
    # x.v = count(g[]), the current iteration counted: X4 (2) breaks b3's iteration only as the
    # second, X7 (1) b6's or c8's only as the first: (1,8) (3,8) (6,8) and (1,2)(3,*) broken
    spec = "A@0 B@1 C@2 B@3 X@4:v=2 C@5 B@6 X@7:v=1 C@8 D@9"
    assert _ids(BETWEEN, "x.v = count(g[])", spec) == want(
        _m((1, 2), d=9),
        _m((1, 5), d=9),
        _m((3, 5), d=9),
        _m((1, 2), (6, 8), d=9),
        _m((1, 5), (6, 8), d=9),
        _m((3, 5), (6, 8), d=9),
    )


def test_an_aggregate_covers_the_current_iterations_bound_steps() -> None:
    # x.v = sum(g[].b.v): b1 + b3 (3) in (b1 c2)(b3 c5), X4's v: broken; b1 or b3 alone: kept
    spec = "A@0 B@1:v=1 C@2 B@3:v=2 X@4:v=3 C@5 D@6"
    assert _ids(BETWEEN, "x.v = sum(g[].b.v)", spec) == want(_m((1, 2), d=6), _m((1, 5), d=6), _m((3, 5), d=6))


def test_an_aggregate_of_a_later_step_covers_the_complete_iterations() -> None:
    # x.v < sum(g[].c.v): on the first iteration no c is bound (no sum: false); in the second,
    # X4 (2) < c2 (3): (b1 c2)(b3 c5) broken
    spec = "A@0 B@1 C@2:v=3 B@3 X@4:v=2 C@5:v=0 D@6"
    assert _ids(BETWEEN, "x.v < sum(g[].c.v)", spec) == want(_m((1, 2), d=6), _m((1, 5), d=6), _m((3, 5), d=6))
    # max over the complete iterations' c (c2: 3), the current b's 9 aside
    spec = "A@0 B@1 C@2:v=3 B@3:v=9 X@4:v=3 C@5:v=0 D@6"
    assert _ids(BETWEEN, "x.v = max(g[].c.v)", spec) == want(_m((1, 2), d=6), _m((1, 5), d=6), _m((3, 5), d=6))


def test_its_iteration_and_the_one_before_in_one_conjunct() -> None:
    # x.v > g[i].b.v - g[i-1].c.v: in (b1 c2)(b3 c5) X4 breaks it where its v > 5 - 4; as a
    # first iteration (b1 c5, b3 c5) the conjunct holds vacuously: X4 breaks those
    spec = "A@0 B@1:v=0 C@2:v=4 B@3:v=5 X@4:v={} C@5 D@6"
    assert _ids(BETWEEN, "x.v > g[i].b.v - g[i-1].c.v", spec.format(1)) == want(_m((1, 2), d=6), _m((1, 2), (3, 5), d=6))
    assert _ids(BETWEEN, "x.v > g[i].b.v - g[i-1].c.v", spec.format(2)) == want(_m((1, 2), d=6))


def test_skip_till_next_match_and_skip_till_any_match() -> None:
    # under skip-till-next-match (a0 b1 c2) takes b3 (a group that may go on is not passed
    # over): X4 (7) spares that second iteration, X4 (5, c2's v) breaks it and nothing is left
    spec = "A@0 B@1 C@2:v=5 B@3 X@4:v={} C@5:v=1 D@6"
    where = "skip-till-next-match AND x.v = g[i-1].c.v"
    assert _ids(BETWEEN, where, spec.format(7)) == want(_m((1, 2), (3, 5), d=6))
    assert _ids(BETWEEN, where, spec.format(5)) == want()
    # skip-till-any-match, said outright: every choice, as the default
    where = "skip-till-any-match AND x.v = g[i-1].c.v"
    assert _ids(BETWEEN, where, spec.format(7)) == want(_m((1, 2), d=6), _m((1, 2), (3, 5), d=6))


# ----------------------------------------------------------------------------- between iterations


def test_between_iterations_the_iteration_just_completed() -> None:
    # x.v = g[last].c.v: X3 (5) after c2 (5) blocks every next iteration after (b1 c2); X6 (5)
    # after c5 (1) blocks none
    spec = "A@0 B@1 C@2:v=5 X@3:v=5 B@4 C@5:v=1 X@6:v=5 B@7 C@8 D@9"
    singles = [_m(p, d=9) for p in ((1, 2), (1, 5), (1, 8), (4, 5), (4, 8), (7, 8))]
    assert _ids(AFTER, "x.v = g[last].c.v", spec) == want(*singles, _m((1, 5), (7, 8), d=9), _m((4, 5), (7, 8), d=9))


def test_between_iterations_count_is_the_iterations_complete() -> None:
    # x.v = count(g[]): X3 and X6 (2) block only a third iteration after two complete ones
    spec = "A@0 B@1 C@2 X@3:v=2 B@4 C@5 X@6:v=2 B@7 C@8 D@9"
    singles = [_m(p, d=9) for p in ((1, 2), (1, 5), (1, 8), (4, 5), (4, 8), (7, 8))]
    doubles = [_m(*p, d=9) for p in (((1, 2), (4, 5)), ((1, 2), (4, 8)), ((1, 2), (7, 8)), ((1, 5), (7, 8)), ((4, 5), (7, 8)))]
    assert _ids(AFTER, "x.v = count(g[])", spec) == want(*singles, *doubles)


def test_between_iterations_the_first_iteration_and_an_aggregate() -> None:
    # x.v = g[1].b.v + sum(g[].c.v): after (b1 c2) 1 + 2 = 3 = X3's v blocks b4; after
    # (b1 c5) 1 + 0 (X6: 3 no); after (b4 c5) 3 + 0 = X6's v blocks b7
    spec = "A@0 B@1:v=1 C@2:v=2 X@3:v=3 B@4:v=3 C@5:v=0 X@6:v=3 B@7 C@8 D@9"
    singles = [_m(p, d=9) for p in ((1, 2), (1, 5), (1, 8), (4, 5), (4, 8), (7, 8))]
    assert _ids(AFTER, "x.v = g[1].b.v + sum(g[].c.v)", spec) == want(*singles, _m((1, 5), (7, 8), d=9))


def test_between_iterations_under_skip_till_next_match() -> None:
    # X3 (c2's v) stops (a0 b1 c2) from starting another iteration: it closes the group at d6
    spec = "A@0 B@1 C@2:v=5 X@3:v=5 B@4 C@5:v=1 D@6"
    assert _ids(AFTER, "skip-till-next-match AND x.v = g[last].c.v", spec) == want(_m((1, 2), d=6))


# ----------------------------------------------------------------------------- refused


def _refused(text: str, message: str, at: str) -> None:
    """``text`` is refused with ``message`` (exactly, after the location) and a caret under ``at``."""
    with pytest.raises(PatternUnsupportedError) as err:
        parse_text(f"PATTERN p: {text}", "t.pcep")
    assert type(err.value) is PatternUnsupportedError
    lines = str(err.value).splitlines()
    assert lines[0].split(": error: ")[1] == message
    assert lines[1][lines[2].index("^") :].startswith(at), lines


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (
            "x.v = g[i].c.v",
            "a condition of the negation 'x' inside g[] reads its iteration's steps before it (b), not g[i].c: that one "
            "is not bound while the iteration waits for it (the previous iteration's is g[i-1].c.v)",
        ),
        (
            "x.v = g[last].c.v",
            "a condition of the negation 'x' inside g[] reads its iteration's steps before it (b), not g[last].c (g[last] "
            "is the iteration it lies in): that one is not bound while the iteration waits for it (the previous "
            "iteration's is g[i-1].c.v)",
        ),
        (
            "x.v = d.v",
            "a condition of the negation 'x' inside the repeated group g[] reads the negated event, variables bound "
            "before the group and the group so far, not 'd': it is decided while the partial match waits for the step "
            "after 'x', when 'd' may not be bound yet",
        ),
    ],
)
def test_what_a_negation_between_two_steps_may_not_read(where: str, message: str) -> None:
    _refused(f"{BETWEEN} WHERE {where}", message, where.split("= ")[1])


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (
            "x.v = g[i-1].c.v",
            "a condition of the negation 'x' at the start or end of g[] lies between two iterations, in neither: read "
            "the iteration just completed as g[last].c.v (g[i-1] names the iteration a condition lies in, or the one "
            "before it)",
        ),
        (
            "x.v = g[i].b.v",
            "a condition of the negation 'x' at the start or end of g[] lies between two iterations, in neither: read "
            "the iteration just completed as g[last].b.v (g[i] names the iteration a condition lies in, or the one "
            "before it)",
        ),
        (
            "x.v = d.v",
            "a condition of the negation 'x' inside the repeated group g[] reads the negated event, variables bound "
            "before the group and the group so far, not 'd': it is decided while the partial match waits for the step "
            "after 'x', when 'd' may not be bound yet",
        ),
    ],
)
def test_what_a_negation_between_iterations_may_not_read(where: str, message: str) -> None:
    _refused(f"{AFTER} WHERE {where}", message, where.split("= ")[1])


def test_a_negation_at_the_groups_start_reads_as_one_at_its_end() -> None:
    # SEQ(!(X x), B b, C c)+ g[] lies between iterations too: the same refusal, the same reads
    _refused(
        "SEQ(A a, SEQ(!(X x), B b, C c)+ g[], D d) WHERE x.v = g[i-1].c.v",
        "a condition of the negation 'x' at the start or end of g[] lies between two iterations, in neither: read the "
        "iteration just completed as g[last].c.v (g[i-1] names the iteration a condition lies in, or the one before it)",
        "g[i-1].c.v",
    )
    spec = "A@0 B@1 C@2:v=5 X@3:v=5 B@4 C@5:v=1 D@6"
    (p,) = parse_text("PATTERN p: SEQ(A a, SEQ(!(X x), B b, C c)+ g[], D d) WHERE x.v = g[last].c.v WITHIN 20").patterns
    assert ids(p, stream(spec)) == want(_m((1, 2), d=6), _m((1, 5), d=6), _m((4, 5), d=6))


def test_an_and_sibling_is_not_bound_before_the_group() -> None:
    # e may come after the iteration's b: not decided while the iteration waits for c
    _refused(
        "SEQ(A a, AND(SEQ(B b, !(X x), C c)+ g[], E e), D d) WHERE x.v = e.v",
        "a condition of the negation 'x' inside the repeated group g[] reads the negated event, variables bound before "
        "the group and the group so far, not 'e': it is decided while the partial match waits for the step after 'x', "
        "when 'e' may not be bound yet",
        "e.v",
    )
