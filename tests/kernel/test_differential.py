"""The kernel against the Python engine (the reference) on random patterns and streams:
the same matches in the same order, the same partial matches created and completed, the
same live partial matches mid-stream. Patterns the kernel refuses must say why."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.events import Event
from petricep.kernel import supports
from petricep.lang import ast as A
from petricep.merge import build_net
from tests.budget import examples
from tests.kernel.compare import both, check
from tests.strategies import patterns, streams

SETTINGS = settings(
    max_examples=examples(200, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _tie(draw: object, pats: list[A.Pattern]) -> str:
    """arrival / strict always; either with skip-till-any-match (the engine refuses it otherwise)."""
    stam = all(p.strategy == "skip-till-any-match" for p in pats)
    return draw(st.sampled_from(("arrival", "strict", "either") if stam else ("arrival", "strict")))  # type: ignore[operator,no-any-return]


@SETTINGS
@given(st.data())
def test_either_ties_in_long_groups(data: st.DataObject) -> None:
    """Tie rule either on streams with long runs of equal timestamps (the group fixpoint)."""
    pattern = data.draw(_plain(strategies=("skip-till-any-match",)))
    events = data.draw(streams(max_size=16))
    check([pattern], events, "either", data.draw(st.integers(0, len(events))))


def _plain(**kw: object) -> st.SearchStrategy[A.Pattern]:
    kw.setdefault("negation", False)
    return patterns(kleene=False, returns=False, **kw)  # type: ignore[arg-type]


@SETTINGS
@given(st.data())
def test_negation_start_middle_end(data: st.DataObject) -> None:
    """Negation at the start, middle and end of a SEQ (pushed into the scan, checked at
    emission, waiting for the window), every strategy, ties arrival and strict."""
    pattern = data.draw(_plain(negation=True, max_vars=5))
    assume(any(r.negated for r in A.events_of(pattern.structure)))
    events = data.draw(streams(max_size=14))
    check([pattern], events, data.draw(st.sampled_from(("arrival", "strict"))), data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_merged_sets_with_negation(data: st.DataObject) -> None:
    strategy = data.draw(st.sampled_from(A.STRATEGIES))
    part = data.draw(st.booleans())
    pats = [
        data.draw(_plain(name=f"p{i}", negation=True, strategies=(strategy,), partition=part, types=("A", "B", "C")))
        for i in range(data.draw(st.integers(2, 3)))
    ]
    events = data.draw(streams(types=("A", "B", "C"), max_size=14))
    check(pats, events, data.draw(st.sampled_from(("arrival", "strict"))), data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_seq_and_or_any_strategy(data: st.DataObject) -> None:
    """SEQ/AND/OR with guards, [k], every window kind, every strategy, every tie rule."""
    pattern = data.draw(_plain())
    events = data.draw(streams(max_size=12))
    check([pattern], events, _tie(data.draw, [pattern]), data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_seq_only_longer_streams(data: st.DataObject) -> None:
    """Flat SEQs of up to five variables over longer streams (more partial matches alive)."""
    strategy = data.draw(st.sampled_from(A.STRATEGIES))
    pattern = data.draw(_plain(max_depth=1, max_vars=5, strategies=(strategy,)))
    events = data.draw(streams(max_size=30))
    check([pattern], events, _tie(data.draw, [pattern]), data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_merged_pattern_sets(data: st.DataObject) -> None:
    """Several patterns merged into shared nets (front/middle/rear combination, per-pattern
    windows and roles): each gets its matches, emitted in the engine's order."""
    strategy = data.draw(st.sampled_from(A.STRATEGIES))
    n = data.draw(st.integers(2, 4))
    part = data.draw(st.booleans())
    pats = [
        data.draw(_plain(name=f"p{i}", max_depth=1, strategies=(strategy,), partition=part, types=("A", "B", "C")))
        for i in range(n)
    ]
    events = data.draw(streams(types=("A", "B", "C"), max_size=14))
    check(pats, events, _tie(data.draw, pats), data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_same_query_registered_many_times(data: st.DataObject) -> None:
    pattern = data.draw(_plain(max_depth=1))
    pats = [A.Pattern(f"q{i}", pattern.structure, pattern.conditions, pattern.partition, pattern.strategy, pattern.window) for i in range(3)]
    events = data.draw(streams(max_size=12))
    check(pats, events, _tie(data.draw, pats), data.draw(st.integers(0, len(events))))


@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_return_under_either_is_covered(data: st.DataObject) -> None:
    """RETURN under the tie rule ``either`` (skip-till-any-match, set rather than filtered
    for: the health check failed on drawing too few)."""
    pattern = replace(data.draw(patterns(returns=True)), strategy=A.Strategy.ANY)
    assume(pattern.returns)
    assert supports(build_net([pattern]), "either") == (True, "covered")


@SETTINGS
@given(st.data())
def test_several_shared_nets(data: st.DataObject) -> None:
    """Patterns differing in partition, strategy or window kind run in separate shared nets:
    matches of one event (or one timestamp group) come out in the engine's order."""
    pats = [data.draw(_plain(name=f"p{i}", max_depth=1, types=("A", "B", "C"))) for i in range(data.draw(st.integers(2, 4)))]
    events = data.draw(streams(types=("A", "B", "C"), max_size=14))
    check(pats, events, _tie(data.draw, pats), data.draw(st.integers(0, len(events))))


def test_a_negation_listed_twice_waits_once() -> None:
    """SEQ(A a, SEQ(A b, A c, !(A d)), !(A e)): both negations cover the same interval and
    merge into one, listed twice in the role; its bit is still its own (a match waits for
    it, and event 3 kills (0, 1, 2))."""
    net = compile_text("PATTERN p: SEQ(A a, SEQ(A b, A c, !(A d)), !(A e)) WHERE a.x = 0")
    out = both(net, [Event("A", 0, i, i, {"x": 0}) for i in range(4)], "arrival", 2)
    assert out["kernel"] == out["python"]
    assert [m["ids"] for m in out["kernel"][0]] == [{"a": 0, "b": 1, "c": 3}, {"a": 0, "b": 2, "c": 3}, {"a": 1, "b": 2, "c": 3}]
