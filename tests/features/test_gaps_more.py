"""Per-step gaps (issue 42) in the forms lifted after the first ones: under a count window, on
and after a Kleene list (the chain), on and after an optional step, after an AND/OR (FROM a
step inside it), and in a pattern with ARCHIVED variables (tests/archive/test_join.py draws
those against the reference).

Hand cases run on every matcher (the ``matcher`` fixture of tests/features/test_gaps.py: the
reference, the Python engine and the compiled kernel) with exact match ids; the partial
matches alive and the ON TIMEOUT deadlines are compared on both engines; the hypothesis
properties draw the new forms and compare the kernel with the Python engine (matches in
order, partial matches alive after every event, counts) and both with the brute-force
reference, alone and merged, under every strategy and tie rule.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.events import Event
from petricep.kernel.lowering import supports
from petricep.lang.ast import (
    And,
    EventRef,
    Gap,
    Group,
    Limit,
    Num,
    Or,
    Pattern,
    Return,
    ReturnField,
    Seq,
    Strategy,
    skippable,
)
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.budget import examples
from tests.features import scenario
from tests.features.scenario import ids, stream, want
from tests.features.test_gaps import _sorted, lives, matcher  # noqa: F401  (every hand case on every matcher)
from tests.reference import reference_run
from tests.strategies import streams, tie_rules


def P(text: str) -> Pattern:
    (p,) = parse_text(f"PATTERN p: {text}").patterns
    return p


# ----------------------------------------------------------------------------- GREEDY / RELUCTANT


def test_a_greedy_list_takes_what_its_chain_admits() -> None:
    # the list takes B@2 (1 after B@1), not B@5 (3 after B@2): c takes B@5; RELUCTANT: c
    # takes the first B it can, the list stays at B@1
    ev = stream("A@0 B@1 B@2 B@5")
    greedy = P("SEQ(A a, B+ b[] GREEDY AFTER 0 TO 1, B c) WHERE skip-till-next-match WITHIN 9")
    assert ids(greedy, ev) == want({"a": 0, "b": [1, 2], "c": 3})
    reluctant = P("SEQ(A a, B+ b[] RELUCTANT AFTER 0 TO 1, B c) WHERE skip-till-next-match WITHIN 9")
    assert ids(reluctant, ev) == want({"a": 0, "b": [1], "c": 2})


# ----------------------------------------------------------------------------- a count window


def test_a_gap_in_time_under_a_count_window() -> None:
    # b 0..5 after a in time, and the match within 3 events: a0 b2 (2 apart in both); a3 b6
    # is 3 events; a7 b8 is 10 in time
    p = P("SEQ(A a, B b AFTER 0 TO 5) WITHIN 3 EVENTS")
    ev = stream("A@0 C@1 B@2 A@3 C@4 C@5 B@6 A@10 B@20")
    assert ids(p, ev) == want({"a": 0, "b": 2})


def test_under_a_count_window_a_gap_still_ends_partial_matches() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b AFTER 0 TO 3) WITHIN 10 EVENTS")
    ev = stream("A@0 C@1 C@4 B@5")
    for engine in ("python", "kernel"):
        got, live, _ = lives(engine, net, ev)
        assert (got, live) == ([], [1, 1, 0, 0]), engine


# ----------------------------------------------------------------------------- a Kleene list


def test_a_gap_on_a_list_is_a_chain() -> None:
    # b[1] 1..2 after a, each later element 1..2 after the one before it: B@3 is 3 after a,
    # B@6 3 after B@3
    p = P("SEQ(A a, B+ b[] AFTER 1 TO 2) WITHIN 20")
    ev = stream("A@0 B@1 B@2 B@3 B@6")
    assert ids(p, ev) == want(
        {"a": 0, "b": [1]}, {"a": 0, "b": [1, 2]}, {"a": 0, "b": [1, 3]}, {"a": 0, "b": [1, 2, 3]},
        {"a": 0, "b": [2]}, {"a": 0, "b": [2, 3]},
    )


def test_a_gap_after_a_list_follows_its_last_element() -> None:
    p = P("SEQ(A a, B+ b[], C c AFTER 0 TO 2) WITHIN 20")
    ev = stream("A@0 B@1 B@4 C@5")
    assert ids(p, ev) == want({"a": 0, "b": [2], "c": 3}, {"a": 0, "b": [1, 2], "c": 3})


def test_a_gap_after_a_list_from_a_named_single_event() -> None:
    p = P("SEQ(A a, B+ b[], C c AFTER 0 TO 5 FROM a) WITHIN 20")
    ev = stream("A@0 B@1 B@4 C@5 C@6")
    assert ids(p, ev) == want({"a": 0, "b": [1], "c": 3}, {"a": 0, "b": [2], "c": 3}, {"a": 0, "b": [1, 2], "c": 3})


def test_a_bounded_list_with_a_chain_gap() -> None:
    p = P("SEQ(A a, B{2} b[] AFTER 0 TO 1, C c) WITHIN 20")
    ev = stream("A@0 B@1 B@2 B@4 C@5")
    assert ids(p, ev) == want({"a": 0, "b": [1, 2], "c": 4})


def test_a_chain_gap_under_skip_till_next_match() -> None:
    # B@1 (pos 2) is too soon after B@1 (pos 1): it does not extend the list, so B@2 does
    # (and the list of B@1 alone, extended, goes no further)
    p = P("SEQ(A a, B+ b[] AFTER 1 TO 2, C c) WHERE skip-till-next-match WITHIN 20")
    ev = stream("A@0 B@1 B@1 B@2 C@3")
    assert ids(p, ev) == want({"a": 0, "b": [1, 3], "c": 4})


def test_a_chain_gap_ends_partial_matches_at_the_last_element() -> None:
    # a0 leaves at 0 + 2; a0 b1 at 1 + max(2, 1): the list's next element or c, both after b1
    net = compile_text("PATTERN p: SEQ(A a, B+ b[] AFTER 0 TO 2, C c AFTER 0 TO 1) WITHIN 50")
    ev = stream("A@0 B@1 X@2 X@3 X@4")
    for engine in ("python", "kernel"):
        assert lives(engine, net, ev)[1] == [1, 2, 2, 1, 0], engine


def test_a_chain_gap_times_a_partial_match_out() -> None:
    # a0 and a0 b1 are extended (by B@2); a0 b2 and a0 b1 b2 time out at 2 + 3 (c's gap and
    # the list's, 2, from the last element: the later end), emitted at X@9
    net = compile_text(
        "PATTERN p: SEQ(A a, B+ b[] AFTER 0 TO 2, C c AFTER 0 TO 3) WITHIN 20 ON TIMEOUT RETURN Late(x = a.x)"
    )
    ev = stream("A@0:x=1 B@1:x=0 B@2:x=0 X@9:x=0")
    for engine in ("python", "kernel"):
        got = [(m["ids"], m["timeout"]["deadline"]) for m in lives(engine, net, ev)[0]]
        assert sorted(got, key=str) == sorted([({"a": 0, "b": [2]}, 5), ({"a": 0, "b": [1, 2]}, 5)], key=str), engine


# ----------------------------------------------------------------------------- an optional step


def test_a_step_after_an_optional_one_follows_it_or_the_step_before() -> None:
    # with b1: c 0..3 after b (c2, c3); without b: after a (c2 is 3, c3 is 4)
    p = P("SEQ(A a, B? b AFTER 1 TO 2, C c AFTER 0 TO 3) WITHIN 20")
    ev = stream("A@0 B@1 C@3 C@4")
    assert ids(p, ev) == want({"a": 0, "b": 1, "c": 2}, {"a": 0, "b": 1, "c": 3}, {"a": 0, "c": 2})


def test_a_gap_on_an_optional_step_binds_only_when_it_is_present() -> None:
    p = P("SEQ(A a, B? b AFTER 5 TO 6, C c) WITHIN 20")
    assert ids(p, stream("A@0 B@1 C@2")) == want({"a": 0, "c": 2})
    assert ids(p, stream("A@0 B@5 C@6")) == want({"a": 0, "b": 1, "c": 2}, {"a": 0, "c": 2})


def test_a_gap_from_an_optional_step_left_out_holds() -> None:
    # as a WHERE conjunct reading an absent step: c5 is 4 after b1, so only without b
    p = P("SEQ(A a, B? b, C c AFTER 0 TO 1 FROM b) WITHIN 20")
    ev = stream("A@0 B@1 C@2 C@5")
    assert ids(p, ev) == want({"a": 0, "b": 1, "c": 2}, {"a": 0, "c": 2}, {"a": 0, "c": 3})


def test_skip_till_next_match_skips_the_optional_step_its_gap_refuses() -> None:
    # B@1 is too soon for b: the optional step cannot take it, so the match without b exists
    p = P("SEQ(A a, B? b AFTER 2 TO 3, C c) WHERE skip-till-next-match WITHIN 20")
    assert ids(p, stream("A@0 B@1 C@2")) == want({"a": 0, "c": 2})
    assert ids(p, stream("A@0 B@2 C@3")) == want({"a": 0, "b": 1, "c": 2})


def test_an_optional_step_ends_a_partial_match_at_the_later_of_its_ways_on() -> None:
    # at a: b within 2 or c within 4, both after a: it leaves past 0 + 4
    net = compile_text("PATTERN p: SEQ(A a, B? b AFTER 0 TO 2, C c AFTER 0 TO 4) WITHIN 50")
    for engine in ("python", "kernel"):
        assert lives(engine, net, stream("A@0 X@3 X@5"))[1] == [1, 1, 0], engine


# ----------------------------------------------------------------------------- after AND / OR


def test_a_gap_after_an_and_from_a_step_inside_it() -> None:
    p = P("SEQ(A a, AND(B b, D d), C c AFTER 0 TO 2 FROM b) WITHIN 20")
    ev = stream("A@0 D@1 B@2 B@3 C@4 C@6")
    assert ids(p, ev) == want({"a": 0, "b": 2, "d": 1, "c": 4}, {"a": 0, "b": 3, "d": 1, "c": 4})


def test_a_gap_from_an_or_branch_not_taken_holds() -> None:
    # c is 3 after b1 (too late); through d the gap reads an unbound b: it holds
    p = P("SEQ(A a, OR(B b, D d), C c AFTER 0 TO 2 FROM b) WITHIN 20")
    assert ids(p, stream("A@0 B@1 D@2 C@4")) == want({"a": 0, "d": 2, "c": 3})


def test_a_gap_after_an_and_ends_partial_matches_once_its_step_is_bound() -> None:
    # a0 and a0 d1 wait for b (no gap): they stay; a0 b2 (every way on binds c) and a0 d1 b2
    # leave past 2 + 2
    net = compile_text("PATTERN p: SEQ(A a, AND(B b, D d), C c AFTER 0 TO 2 FROM b) WITHIN 50")
    for engine in ("python", "kernel"):
        assert lives(engine, net, stream("A@0 D@1 B@2 X@4 X@5"))[1] == [1, 2, 4, 4, 2], engine


def test_a_gap_in_a_seq_inside_an_or() -> None:
    # the branch's b 1..2 after its a; the other branch has no gap
    p = P("SEQ(X x, OR(SEQ(A a, B b AFTER 1 TO 2), C c)) WITHIN 20")
    ev = stream("X@0 A@1 B@2 B@4 C@9")
    assert ids(p, ev) == want({"x": 0, "a": 1, "b": 2}, {"x": 0, "c": 4})


def test_a_gap_in_a_seq_inside_an_and_ends_partial_matches() -> None:
    p = P("AND(SEQ(A a, B b AFTER 0 TO 2), C c) WITHIN 20")
    ev = stream("A@0 C@1 B@2 A@3 B@6")
    assert ids(p, ev) == want({"a": 0, "b": 2, "c": 1})
    # a0 and a0 c1 leave past 0 + 2 (every way on binds b), a3 and c1 a3 past 3 + 2; c1 and
    # a0 b2 (waiting for c, no gap) stay
    net = compile_text("PATTERN p: AND(SEQ(A a, B b AFTER 0 TO 2), C c) WITHIN 20")
    for engine in ("python", "kernel"):
        assert lives(engine, net, ev)[1] == [1, 3, 4, 4, 2], engine


def test_a_gap_on_an_and_child_from_a_step_before_the_and() -> None:
    p = P("SEQ(A a, AND(B b AFTER 0 TO 2 FROM a, C c)) WITHIN 20")
    ev = stream("A@0 C@1 B@2 B@3 C@4")
    assert ids(p, ev) == want({"a": 0, "b": 2, "c": 1}, {"a": 0, "b": 2, "c": 4})


def test_a_gap_after_a_repeated_group_follows_its_last_event() -> None:
    # d at most 2 after the last iteration's c (C@4): g = [b1 c2] alone is 3 before D@5
    ev = stream("A@0 B@1 C@2 B@3 C@4 D@5 D@7")
    for text in ("SEQ(A a, SEQ(B b, C c)+ g[], D d AFTER 0 TO 2) WITHIN 20", "SEQ(A a, SEQ(B b, C c)+ g[], D d AFTER 0 TO 2 FROM g) WITHIN 20"):
        assert ids(P(text), ev) == want(
            {"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3, "c": 4}], "d": 5},
            {"a": 0, "g": [{"b": 1, "c": 4}], "d": 5},
            {"a": 0, "g": [{"b": 3, "c": 4}], "d": 5},
        )


# ----------------------------------------------------------------------------- properties

TYPES = ("A", "B", "C")


@st.composite
def timed_patterns(draw: Any, name: str = "p", modes: bool = True) -> Pattern:
    """A SEQ of 2-4 elements: single events, Kleene lists (GREEDY / RELUCTANT under
    skip-till-next-match), optional steps and lists of no event or more (not first), AND or OR
    of two children (an event, a SEQ of two); gaps after the step before (where that is one event) or FROM an earlier
    variable, a negation not beside an optional step; any strategy, a time or a count
    window, ON TIMEOUT (time windows), LIMIT. (``modes``: not in merged nets, where a GREEDY
    list sharing a prefix with another pattern's steps finds a match it does not alone,
    gaps or not: a bug apart, on main too.)"""
    n = draw(st.integers(2, 4))
    elems: list[Any] = []
    names: list[str] = []
    for i in range(n):
        kind = draw(st.sampled_from(["one", "one", "kleene", "optional", "star", "and", "or", "group"] if i else ["one", "one", "kleene", "and"]))
        v = f"v{i}"
        if kind == "group":  # a gap after it follows its last event; FROM names the group
            # (named apart from the events: the kernel's ids of a merged net whose variable is
            # another pattern's group name lose it, gaps or not, on main too)
            steps = (EventRef(draw(st.sampled_from(TYPES)), f"s{i}"), EventRef(draw(st.sampled_from(TYPES)), f"t{i}"))
            elems.append(Group(Seq(steps), f"g{i}"))
            names.append(f"g{i}")
            continue
        if kind in ("and", "or"):
            kids, inner = _children(draw, v, names)
            elems.append(And(kids) if kind == "and" else Or(kids))
            names += inner
            continue
        gap = None
        if names and draw(st.booleans()):
            lo = draw(st.integers(0, 2))
            hi = lo + draw(st.integers(0, 3))
            back = next((e for e in reversed(elems) if not (isinstance(e, EventRef) and skippable(e))), None)
            after = None if isinstance(back, EventRef) and draw(st.booleans()) else draw(st.sampled_from(names))
            gap = Gap(lo, hi, None, after)
        if kind == "star":  # a list of no event or more (T* v[], T{0,m} v[]): as an optional step
            most = draw(st.sampled_from([None, 1, 2]))
            elems.append(EventRef(draw(st.sampled_from(TYPES)), v, kleene=True, least=0, most=most, gap=gap))
        else:
            elems.append(EventRef(draw(st.sampled_from(TYPES)), v, kleene=kind == "kleene", optional=kind == "optional", gap=gap))
        names.append(v)
    if draw(st.booleans()):
        at = draw(st.integers(0, n))
        beside = elems[max(at - 1, 0) : at + 1]
        if not any(isinstance(e, EventRef) and skippable(e) for e in beside):
            elems.insert(at, EventRef(draw(st.sampled_from(TYPES)), "n", negated=True))
    strategy = draw(st.sampled_from(list(Strategy)))
    if modes and strategy == Strategy.NEXT:  # GREEDY / RELUCTANT on a list with a step after it
        for i, e in enumerate(elems):
            after = [x for x in elems[i + 1 :] if isinstance(x, EventRef) and not x.negated]
            if isinstance(e, EventRef) and e.kleene and after and draw(st.booleans()):
                elems[i] = replace(e, mode=draw(st.sampled_from(["greedy", "reluctant"])))
    partition = ("k",) if strategy == Strategy.PARTITION or draw(st.integers(0, 2)) == 0 else ()
    window = draw(st.sampled_from([None, "t3", "t6", "e4"]))
    win = None if window is None else parse_text(f"PATTERN w: SEQ(A a, B b) WITHIN {window[1:]}{' EVENTS' if window[0] == 'e' else ''}").patterns[0].window
    timeout = Return("Late", (ReturnField("x", Num(1)),)) if window and window[0] == "t" and draw(st.booleans()) else None
    limit = Limit(draw(st.integers(1, 3)), draw(st.sampled_from(["drop-oldest", "reject-new"]))) if draw(st.integers(0, 3)) == 0 else None
    return Pattern(name, Seq(tuple(elems)), (), partition, strategy, win, timeout=timeout, limit=limit)


def _gap(draw: Any, after: Any) -> Gap:
    lo = draw(st.integers(0, 2))
    return Gap(lo, lo + draw(st.integers(0, 3)), None, after)


def _children(draw: Any, v: str, names: list[str]) -> tuple[tuple[Any, ...], list[str]]:
    """An AND's or OR's two children: events (a gap FROM an earlier variable) or, the first, a
    SEQ of two events (the second's gap after the first or FROM an earlier variable)."""
    kids: list[Any] = []
    inner: list[str] = []
    for j in "ab":
        t = draw(st.sampled_from(TYPES))
        if j == "a" and draw(st.integers(0, 2)) == 0:
            one = EventRef(t, f"{v}a1", gap=_gap(draw, draw(st.sampled_from(names))) if names and draw(st.booleans()) else None)
            after = draw(st.sampled_from([None, one.var, *names]))
            two = EventRef(draw(st.sampled_from(TYPES)), f"{v}a2", gap=_gap(draw, after) if draw(st.booleans()) else None)
            kids.append(Seq((one, two)))
            inner += [one.var, two.var]
            continue
        gap = _gap(draw, draw(st.sampled_from(names))) if names and draw(st.integers(0, 2)) == 0 else None
        kids.append(EventRef(t, v + j, gap=gap))
        inner.append(v + j)
    return tuple(kids), inner


def agree(pats: list[Pattern], events: list[Event], tie: str) -> None:
    """Kernel == Python engine (matches in order, partial matches alive, counts), and both
    the reference's matches; a net the kernel does not cover is refused for what is no gap."""
    for p in pats:
        note(pattern_text(p))
    note(f"tie={tie}: " + " ".join(f"{e.type}@{e.ts}{e.attrs}" for e in events))
    net = build_net(pats)
    ok, reason = supports(net, tie)
    assert ok or "gap" not in reason, reason
    python = lives("python", net, events, tie)
    if ok:
        assert lives("kernel", net, events, tie) == python
    if any(p.limit is not None for p in pats):
        return
    assert _sorted([m for m in python[0] if "timeout" not in m]) == _sorted(reference_run(pats, events, tie))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), timed_patterns(), streams(types=TYPES, max_size=9))
def test_kernel_equals_engine_equals_reference_on_the_new_gap_forms(data: Any, p: Pattern, events: list[Event]) -> None:
    (checked,) = parse_text(pattern_text(p)).patterns  # the language accepts what was drawn
    assert checked.structure == p.structure
    agree([p], events, tie_rules(data.draw, [p]))


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), timed_patterns("p", modes=False), streams(types=TYPES, max_size=8))
def test_merged_kernel_equals_engine_equals_reference_on_the_new_gap_forms(data: Any, p: Pattern, events: list[Event]) -> None:
    """The pattern with its gaps widened (front combination shares the prefix) and a third
    drawn apart, in one net."""

    def regap(r: Any) -> Any:
        if isinstance(r, EventRef) and r.gap is not None:
            return replace(r, gap=replace(r.gap, high=r.gap.high + data.draw(st.integers(0, 2))))
        return r

    assert isinstance(p.structure, Seq)
    q = replace(p, name="q", structure=Seq(tuple(regap(c) for c in p.structure.children)))
    pats = [p, q, data.draw(timed_patterns("r", modes=False))]
    agree(pats, events, tie_rules(data.draw, pats))


# ----------------------------------------------------------------------------- strategies, ties, the net


def test_a_chain_gap_with_a_zero_lower_bound_under_each_tie_rule() -> None:
    # b[2] may share b[1]'s time under arrival; strict refuses a tie in a list as in a SEQ
    p = P("SEQ(A a, B+ b[] AFTER 0 TO 1) WITHIN 9")
    ev = stream("A@0 B@1 B@1")
    assert ids(p, ev, tie="arrival") == want({"a": 0, "b": [1]}, {"a": 0, "b": [2]}, {"a": 0, "b": [1, 2]})
    assert ids(p, ev, tie="strict") == want({"a": 0, "b": [1]}, {"a": 0, "b": [2]})


def test_strict_contiguity_with_an_optional_gapped_step() -> None:
    # A B C contiguous: B@1 too soon for b, so the match has no b and the B breaks it
    p = P("SEQ(A a, B? b AFTER 2 TO 3, C c) WHERE strict-contiguity WITHIN 9")
    assert ids(p, stream("A@0 B@1 C@2")) == set()
    assert ids(p, stream("A@0 B@2 C@3 A@4 C@5")) == want({"a": 0, "b": 1, "c": 2}, {"a": 3, "c": 4})


def test_merged_patterns_that_disagree_on_a_chain_keep_the_shared_place_to_the_window() -> None:
    short = P("SEQ(A a, B+ b[] AFTER 0 TO 2, C c AFTER 0 TO 1) WITHIN 50")
    long = replace(P("SEQ(A a, B+ b[] AFTER 0 TO 3, C c AFTER 0 TO 1) WITHIN 50"), name="q")
    (alone,) = build_net([short]).groups
    assert [(p.label, p.gap_expiry) for p in alone.places] == [("start", ()), ("a", ((0, 2),)), ("a;b+", ((1, 2),)), ("a;b+;c", ())]
    (group,) = build_net([short, long]).groups
    assert [p.gap_expiry for p in group.places if p.label == "a"] == [()]
    for tie in ("arrival", "strict", "either"):
        assert supports(build_net([short, long]), tie) == (True, "covered")
    ev = stream("A@0 B@1 B@4 C@4 C@5")
    # B@4 is 3 after B@1: q's chain only; c within 1 of the list's last element
    got = sorted((m["pattern"], str(m["ids"])) for m in scenario.MATCH([short, long], ev))
    assert got == [("q", "{'a': 0, 'b': [1, 2], 'c': 3}"), ("q", "{'a': 0, 'b': [1, 2], 'c': 4}")]


def test_diagram_draws_a_chain_and_a_gap_after_a_list_as_gap_lines() -> None:
    from petricep.export.model import build_diagram

    net = compile_text("PATTERN p: SEQ(A a, B+ b[] AFTER 1 TO 2, C c AFTER 0 TO 3) WHERE b[i].x > 1 WITHIN 20")
    labels = [n.label for n in build_diagram(net, merged=False).nodes if n.label[0] in ("B b[1]", "B+ b[i]", "C c")]
    assert labels == [
        ("B b[1]", "1 to 2 after a", "b[i].x > 1", "within 20"),
        ("B+ b[i]", "1 to 2 after b", "b[i].x > 1", "within 20"),
        ("C c", "0 to 3 after b", "within 20"),
    ]
