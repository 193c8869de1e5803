"""Bounded repeated groups (issue 42, "bounded and optional components"): ``SEQ(B b, C c){2,4} g[]``,
``{2,}``, ``{3}`` (SQL's ``(B C){2,4}``, Flink's ``times(2, 4)`` / ``timesOrMore(2)``), with a
single-event list's bounds' meaning per strategy and tie rule. Hand cases with exact ids on
every matcher (the reference, the Python engine, the compiled kernel as a run drives it:
test_groups.py's ``matcher`` fixture); hypothesis properties (the kernel against the Python
engine against the reference, alone and merged) over test_groups.py's grouped patterns with
bounds drawn on the group.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.errors import PatternSyntaxError
from petricep.kernel.lowering import supports
from petricep.lang.ast import EventRef, Group, Node, Pattern, Seq, Strategy, groups_of
from petricep.lang.check import flatten_seq
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.budget import examples
from tests.features.scenario import NEXT, SEQ, STRICT, cmp, f, ids, pat, ref, stream, want, within
from tests.features.test_groups import (  # noqa: F401 (the fixture: every matcher)
    BC,
    _kernel_equals_engine,
    _types,
    cut_plan,
    engines_equal_reference,
    g,
    gagg,
    grouped_patterns,
    matcher,
)
from tests.kernel.compare import both
from tests.kernel.cuts import drive
from tests.reference import reference_run
from tests.strategies import streams, tie_rules


def _sorted(matches: list[dict]) -> list[str]:
    return sorted(json.dumps(m, sort_keys=True) for m in matches)


def bounded(least: int, most: int | None) -> Group:
    return replace(BC, least=least, most=most)


ABCD = "A@0 B@1 C@2 B@3 C@4 B@5 C@6 D@7"


# ----------------------------------------------------------------------------- syntax


@pytest.mark.parametrize(
    ("quantifier", "least", "most"), [("{2,4}", 2, 4), ("{2,}", 2, None), ("{3}", 3, 3), ("{1,}", 1, None), ("{1,1}", 1, 1)]
)
def test_bounds_parse_and_print(quantifier: str, least: int, most: int | None) -> None:
    (p,) = parse_text(f"PATTERN p: SEQ(A a, SEQ(B b, C c){quantifier} g[], D d) WITHIN 10").patterns
    (grp,) = [c for c in p.structure.children if isinstance(c, Group)]  # type: ignore[union-attr]
    assert (grp.least, grp.most) == (least, most)
    printed = pattern_text(p).splitlines()[0]
    assert printed == f"PATTERN p: SEQ(A a, SEQ(B b, C c){grp.quantifier()} g[], D d)"
    assert parse_text(pattern_text(p)).patterns[0] == p


@pytest.mark.parametrize(
    ("text", "message", "at"),
    [
        ("SEQ(SEQ(B b, C c){3,2} g[], D d)", "a repetition's upper bound 2 is below its lower bound 3", "2}"),
        ("SEQ(SEQ(B b, C c){0} g[], D d)", "a repetition {0} binds nothing: leave the step out", "0}"),
        ("SEQ(SEQ(B b, C c){2,99} g[], D d)", "a repetition's upper bound is at most 64 (each count is a place of the net): "
         "write {2,} and bound count(v[]) in WHERE", "99"),
        ("SEQ(SEQ(B b, C c)% g[], D d)", "a repeated group's repetition is +, *, ? or {n,m}, not '%'", "%"),
    ],
)
def test_bad_bounds_are_refused_with_a_caret(text: str, message: str, at: str) -> None:
    """The caret at the bound (or the sign) that breaks the rule."""
    line = f"PATTERN p: {text}"
    with pytest.raises(PatternSyntaxError) as err:
        parse_text(line, "t.pcep")
    column = line.index(at) + 1
    assert str(err.value).splitlines() == [f"t.pcep:1:{column}: error: {message}", f"    {line}", " " * (3 + column) + "^"]


# ----------------------------------------------------------------------------- hand cases


def test_two_to_three_iterations() -> None:
    # the chains of (b, c) iterations b < c < b' < c' ...: two or three of them, then d7
    p = pat(SEQ(ref("A", "a"), bounded(2, 3), ref("D", "d")))
    assert ids(p, stream(ABCD)) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 7},
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 6}], "d": 7},
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 5, "c": 6}], "d": 7},
        {"a": 0, "g": [{"b": 1, "c": 4}, {"b": 5, "c": 6}], "d": 7},
        {"a": 0, "g": [{"b": 3, "c": 4}, {"b": 5, "c": 6}], "d": 7},
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}, {"b": 5, "c": 6}], "d": 7},
    )


def test_exactly_three_iterations() -> None:
    p = pat(SEQ(ref("A", "a"), bounded(3, 3), ref("D", "d")))
    assert ids(p, stream(ABCD)) == want({"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}, {"b": 5, "c": 6}], "d": 7})


def test_exactly_one_iteration_is_a_plain_seq() -> None:
    p = pat(SEQ(ref("A", "a"), bounded(1, 1), ref("D", "d")))
    assert ids(p, stream("A@0 B@1 C@2 B@3 C@4 D@5")) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 5},
        {"a": 0, "g": [{"b": 1, "c": 4}], "d": 5},
        {"a": 0, "g": [{"b": 3, "c": 4}], "d": 5},
    )


def test_two_or_more_at_the_end_emits_from_the_second_iteration() -> None:
    # the group complete once it has two iterations: matches at c4 (one) and c6 (five)
    p = pat(SEQ(ref("A", "a"), bounded(2, None)))
    ends = [m["end"] for m in _run(p, ABCD)]
    assert ends == [4, 6, 6, 6, 6, 6]


def test_upper_bound_under_skip_till_next_match() -> None:
    # next match takes b1 c2, b3 c4 and stops at two: b5 c6 cannot extend it, d7 ends it
    p = pat(SEQ(ref("A", "a"), bounded(1, 2), ref("D", "d")), strategy=NEXT)
    assert ids(p, stream(ABCD)) == want({"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 7})


def test_lower_bound_under_skip_till_next_match() -> None:
    # {3,}: one match, all three iterations; {4,}: none
    p = pat(SEQ(ref("A", "a"), bounded(3, None), ref("D", "d")), strategy=NEXT)
    assert ids(p, stream(ABCD)) == want({"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}, {"b": 5, "c": 6}], "d": 7})
    assert ids(pat(SEQ(ref("A", "a"), bounded(4, None), ref("D", "d")), strategy=NEXT), stream(ABCD)) == want()


def test_bounds_under_strict_contiguity() -> None:
    # contiguous: a0 (b1 c2)(b3 c4) d5 only with at most two iterations; three need b5 c6
    p = pat(SEQ(ref("A", "a"), bounded(2, 2), ref("D", "d")), strategy=STRICT)
    assert ids(p, stream("A@0 B@1 C@2 B@3 C@4 D@5 A@6 B@7 C@8 B@9 C@10 B@11 C@12 D@13")) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 5}
    )


def test_bounds_with_iteration_and_whole_group_conditions() -> None:
    # rising b's across iterations (b5's 0 rises from nothing), two to three iterations,
    # the last c above 2: (b1 c2)(b3 c4) and (b1 c2)(b3 c6)
    p = pat(
        SEQ(ref("A", "a"), bounded(2, 3), ref("D", "d")),
        cmp(g("g", "b", "i"), ">", g("g", "b", "i-1")),
        cmp(g("g", "c", "last"), ">", 2),
        window=within(10),
    )
    ev = stream("A@0 B@1:x=1 C@2:x=1 B@3:x=2 C@4:x=3 B@5:x=0 C@6:x=9 D@7")
    assert ids(p, ev) == want(
        {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 7}, {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 6}], "d": 7}
    )


def test_count_of_a_bounded_group() -> None:
    p = pat(SEQ(ref("A", "a"), bounded(2, 3), ref("D", "d")), cmp(gagg("count", "g"), "=", 3))
    assert ids(p, stream(ABCD)) == want({"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}, {"b": 5, "c": 6}], "d": 7})


def _run(p: Pattern, spec: str) -> list[dict[str, Any]]:
    from tests.features.scenario import run

    return run(p, stream(spec))  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- net and check


def test_places_count_the_iterations() -> None:
    labels = [pl.label for pl in build_net([pat(SEQ(ref("A", "a"), bounded(2, 3), ref("D", "d")))]).patterns[0].places]
    assert labels == ["start", "a", "a;g:b", "a;g{1}", "a;g{1}:b", "a;g{2}", "a;g{2}:b", "a;g{2};d", "a;g{3}", "a;g{3};d"]
    open_ = [pl.label for pl in build_net([pat(SEQ(ref("A", "a"), bounded(2, None)))]).patterns[0].places]
    assert open_ == ["start", "a", "a;g:b", "a;g{1}", "a;g{1}:b", "a;g{2,}", "a;g{2,}:b"]


def test_check_warns_only_about_open_groups() -> None:
    from petricep.api.report import warnings_for

    (p,) = parse_text("PATTERN p: SEQ(A a, SEQ(B b, C c){2,} g[]) WITHIN 10").patterns
    assert [w for w in warnings_for([p]) if "repeated group" in w] == [
        "warning: pattern 'p': repeated group g[] ({2,}) under skip-till-any-match keeps every sequence of its "
        "iterations in the window: partial matches can double with each iteration (add LIMIT n PARTIAL MATCHES, "
        "a shorter WITHIN, or skip-till-next-match)"
    ]
    (q,) = parse_text("PATTERN q: SEQ(A a, SEQ(B b, C c){2,4} g[]) WITHIN 10").patterns
    assert [w for w in warnings_for([q]) if "repeated group" in w] == []


# ----------------------------------------------------------------------------- properties

BOUNDS = [(1, 1), (1, 2), (2, 2), (2, 3), (2, None), (3, None), (1, None)]


def _rebound(node: Node, least: int, most: int | None, **more: Any) -> Node:
    """``node`` with its repeated group given these bounds (and ``more``: GREEDY / RELUCTANT
    as ``mode``, UNTIL as ``until``)."""
    if isinstance(node, Group):
        return replace(node, least=least, most=most, **more)
    if isinstance(node, EventRef):
        return node
    return replace(node, children=tuple(_rebound(c, least, most, **more) for c in node.children))


# a group that may bind no iteration (test_groups_optional.py): a step of a SEQ beside another
ZERO = [(0, None), (0, 1), (0, 2)]


def _may_be_left_out(structure: Node) -> bool:
    """Whether the pattern's group is a step of its SEQ beside a positive step (where a group
    of no iteration may stand)."""
    if not isinstance(structure, Seq) or not any(isinstance(c, Group) for c in structure.children):
        return False
    return any(isinstance(c, EventRef) and not c.negated for c in structure.children)


@st.composite
def bounded_patterns(draw: Any, name: str = "p") -> Pattern:
    """test_groups.py's grouped patterns with bounds on the group (some of no iteration)."""
    p = draw(grouped_patterns(name))
    least, most = draw(st.sampled_from(BOUNDS + ZERO if _may_be_left_out(flatten_seq(p.structure)) else BOUNDS))
    structure = _rebound(p.structure, least, most)
    mode = ""
    steps = [c for grp in groups_of(structure) for c in grp.children if isinstance(c, EventRef) and not c.negated]
    ends_optional = steps[0].optional or steps[-1].optional
    # GREEDY / RELUCTANT (test_groups_modes.py; not yet on a group ending in an optional step)
    if p.strategy == Strategy.NEXT and _step_after(flatten_seq(structure)) and not ends_optional:
        mode = draw(st.sampled_from(["", "greedy", "reluctant"]))
    stop = None
    conditions = p.conditions
    if not steps[0].optional and draw(st.integers(0, 2)) == 0:  # UNTIL (test_groups_until.py): a stop of any type, its condition
        stop = EventRef(draw(st.sampled_from(("A", "B", "C"))), "u")
        flat = flatten_seq(structure)
        before = [r.var for r in flat.children if isinstance(r, EventRef) and not r.negated][:1] if isinstance(flat, Seq) else []
        pool = [cmp(f("u"), ">", 1)] + ([cmp(f("u"), "<", f(before[0]))] if before and before[0].startswith("a") else [])
        conditions = (*conditions, *draw(st.lists(st.sampled_from(pool), max_size=1)))
    structure = _rebound(structure, least, most, mode=mode, until=stop)
    return replace(p, structure=structure, conditions=conditions)


def _step_after(structure: Node) -> bool:
    """Whether the pattern's group is a step of its SEQ with a positive step after it."""
    if not isinstance(structure, Seq):
        return False
    kids = structure.children
    at = next((i for i, c in enumerate(kids) if isinstance(c, Group)), None)
    return at is not None and any(isinstance(c, EventRef) and not c.negated for c in kids[at + 1 :])


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), bounded_patterns())
def test_engine_equals_reference_on_bounded_groups(data: Any, p: Pattern) -> None:
    engines_equal_reference(data, p)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), bounded_patterns("p"))
def test_merged_engine_equals_reference_on_bounded_groups(data: Any, p: Pattern) -> None:
    """A bounded group beside the same pattern with other bounds and one drawn apart, in one net."""
    least, most = data.draw(st.sampled_from(BOUNDS + ZERO if _may_be_left_out(flatten_seq(p.structure)) else BOUNDS))
    q = replace(p, name="q", structure=_rebound(p.structure, least, most))
    r = replace(p, name="r", conditions=())
    s = data.draw(bounded_patterns("s"))
    pats = [p, q, r, s]
    events = data.draw(streams(types=_types(*pats), max_size=9, min_size=4))
    tie = tie_rules(data.draw, pats)
    engine = _kernel_equals_engine(pats, events, tie, data.draw(st.integers(0, len(events))))
    assert _sorted(engine) == _sorted(reference_run(pats, events, tie))


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), bounded_patterns())
def test_kernel_snapshot_cuts_on_bounded_groups(data: Any, p: Pattern) -> None:
    """Kernel runs cut at random points (test_groups.py's plan: snapshots restored, ticks,
    batch sizes, sweeps, matches in slices) equal the uncut run, with bounds, modes and stops."""
    events = data.draw(streams(types=_types(p), max_size=12, min_size=4))
    tie = tie_rules(data.draw, [p])
    n = len(events)
    plan = cut_plan(data, n)
    note(pattern_text(p))
    note(f"tie={tie} plan={plan}")
    net = build_net([p])
    assert supports(net, tie) == (True, "covered")
    assert drive(net, events, tie, plan, True) == drive(net, events, tie, plan, False)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), bounded_patterns())
def test_key_partitions_equal_the_reference_on_bounded_groups(data: Any, p: Pattern) -> None:
    """Spark's per-partition runner (without a session) over keyed bounded groups."""
    from tests.spark.engines import run_partitioned

    p = replace(p, partition=("k",))
    events = data.draw(streams(types=_types(p), max_size=10, min_size=4))
    tie = tie_rules(data.draw, [p])
    assert _sorted(run_partitioned([p], events, tie)) == _sorted(reference_run([p], events, tie))


@pytest.mark.parametrize(
    "text",
    [
        "PATTERN p: SEQ(A a, SEQ(B b, C c){2,3} g[]) WHERE count(g[]) >= 2 RETURN R(x = count(g[]))\nPATTERN q: SEQ(R r) RETURN S(m = r.x)",
        "PATTERN p: SEQ(A a, SEQ(B b, C c)* g[], D d) WITHIN 10 LIMIT 2 PARTIAL MATCHES DROP OLDEST",
        "PATTERN p: SEQ(A a, SEQ(B b, C c){2,} g[], D d) WITHIN 4 ON TIMEOUT RETURN T(n = count(g[]), last = g[last].c.x)",
        "PATTERN p: SEQ(A a, SEQ(B b, C c)+ g[] UNTIL U u, D d) WITHIN 5 ON TIMEOUT RETURN T(n = count(g[]))",
        "PATTERN p: SEQ(A a, SEQ(B b, C c)? g[] RELUCTANT, B d) WHERE skip-till-next-match WITHIN 10 RETURN R(n = count(g[]))",
    ],
)
def test_kernel_tables_timeouts_and_limits_on_bounded_groups(text: str) -> None:
    """The kernel's match tables, composite events, LIMIT and ON TIMEOUT on bounded groups,
    groups of no iteration, stops and modes: the Python engine's, with its counts."""
    net = build_net(list(parse_text(text).patterns))
    assert supports(net) == (True, "covered")
    spec = "A@0:x=0 B@1:x=1 C@2:x=2 U@3:x=3 B@4:x=4 C@5:x=5 B@6:x=6 C@7:x=7 D@8:x=8 X@20:x=9"
    out = both(net, stream(spec), "arrival", 4, sweep_every=1)
    assert out["kernel"] == out["python"] and out["kernel"][0]
