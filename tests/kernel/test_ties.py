"""The kernel on the mix of issue 43 (tie rules x count windows x negations, events tying
only with other types: tests/strategies.py's ``negation_seqs`` and ``tied_streams``), where
it runs the net: negations (and Kleene lists) under arrival and strict, plain SEQs and
negations under either. The same matches, counts and live partial matches as the Python engine
(tests/kernel/compare.py), and the matches of the brute-force reference (timeouts: the unextended prefixes of
tests/runtime/test_ties.py). Under either a Kleene list sends the run to the Python engine,
with its reason."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from petricep.events import Event
from petricep.kernel import supports
from petricep.lang import ast as A
from petricep.merge import build_net
from tests.budget import examples
from tests.kernel.compare import both, same
from tests.reference import reference_run
from tests.runtime.test_ties import timeout_pattern, unextended_prefixes
from tests.runtime.test_timeouts import seq_refs
from tests.strategies import negation_seqs, pattern_text, streams, tied_streams

SETTINGS = settings(
    max_examples=examples(100, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

TIED = st.one_of(
    tied_streams(types=("A", "B"), max_size=12),
    tied_streams(types=("A", "B", "X"), max_size=12),
    streams(types=("A", "B", "X"), max_size=12),
)


def three_ways(p: A.Pattern, events: list[Event], tie: str, cut: int) -> None:
    note(pattern_text(p))
    note(f"tie={tie} cut={cut}")
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    net = build_net([p])
    ok, reason = supports(net, tie)
    assert ok, reason
    out = both(net, events, tie, cut, sweep_every=1 + cut % 4)
    assert out["kernel"] == out["python"]
    got = sorted(json.dumps(m, sort_keys=True) for m in out["kernel"][0])
    assert got == sorted(json.dumps(m, sort_keys=True) for m in reference_run([p], events, tie))


@SETTINGS
@given(st.data())
def test_negations_and_windows_under_arrival_and_strict(data: st.DataObject) -> None:
    p = data.draw(negation_seqs())
    events = data.draw(TIED)
    three_ways(p, events, data.draw(st.sampled_from(("arrival", "strict"))), data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_either_with_count_and_time_windows(data: st.DataObject) -> None:
    p = data.draw(negation_seqs(kleene=False, negation=False, windows=(A.WIN_COUNT, A.WIN_COUNT, A.WIN_TIME, "none")))
    events = data.draw(TIED)
    three_ways(p, events, "either", data.draw(st.integers(0, len(events))))


@SETTINGS
@given(st.data())
def test_negations_and_windows_under_either(data: st.DataObject) -> None:
    p = data.draw(negation_seqs(kleene=False))
    events = data.draw(TIED)
    three_ways(p, events, "either", data.draw(st.integers(0, len(events))))


def ev(etype: str, ts: Any, pos: int, **attrs: Any) -> Event:
    return Event(etype, ts, pos, pos, {"x": 0, **attrs})


GUARDED = "PATTERN p: SEQ(A a, !(C n), B b) WITHIN 2 EVENTS ON TIMEOUT RETURN T(x = a.x)"


def test_strict_a_negated_event_of_the_group_that_closes_the_window_cancels_the_timeout() -> None:
    # C1 cancels a0 at the end of its timestamp group; X2, of that group, closes a0's window
    # (positions 0..1) first: no timeout (the kernel used to emit one)
    assert same(GUARDED, [ev("A", 0, 0), ev("C", 1, 1), ev("X", 1, 2)], "strict") == []


def test_strict_a_negated_event_past_the_window_leaves_the_timeout() -> None:
    assert same(GUARDED, [ev("A", 0, 0), ev("X", 1, 1), ev("C", 1, 2)], "strict") == [
        {"pattern": "p", "ids": {"a": 0}, "start": 0, "end": 0, "attrs": {"x": 0},
         "timeout": {"type": "T", "deadline": 2}}
    ]


@SETTINGS
@given(st.data())
def test_timeouts_under_arrival_and_strict(data: st.DataObject) -> None:
    p = timeout_pattern(data.draw(negation_seqs(kleene=False, windows=(A.WIN_COUNT, A.WIN_COUNT, A.WIN_TIME))))
    assume(len(seq_refs(p)) > 1)
    events = data.draw(TIED)
    tie = data.draw(st.sampled_from(("arrival", "strict")))
    cut = data.draw(st.integers(0, len(events)))
    note(pattern_text(p))
    note(f"tie={tie} cut={cut}")
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    out = both(build_net([p]), events, tie, cut, sweep_every=1 + cut % 4)
    assert out["kernel"] == out["python"]
    got = sorted(
        json.dumps([m["ids"], m["start"], m["end"], m["timeout"]["deadline"]], sort_keys=True)
        for m in out["kernel"][0]
        if "timeout" in m
    )
    assert got == unextended_prefixes(p, events, tie)
