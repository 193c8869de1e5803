"""Stop conditions beside ``ON TIMEOUT`` (issue 42): a partial match whose list a stop event
has stopped is still alive (its next step may come), so when its window closes before any
event extends it, it times out as any partial match does (FlinkCEP's ``until``: a partial
match stopped by ``until`` that never completes is pruned at the window's end as a timed-out
one). A list below its fewest events when stopped has no future: it is cancelled, as a
negation cancels, and does not time out (docs/SEMANTICS.md, "Stop conditions").

Hand cases give exact outputs on the Python engine and the kernel (``run_on("kernel")`` also
checks the kernel against the Python engine in everything). The property checks the Python
engine against a construction from the brute-force reference, as tests/runtime/test_timeouts.py
does for plain SEQs: the timeouts of ``SEQ(s1, ..., sn)`` are the matches of each prefix
``SEQ(s1, ..., sk)`` (a negation after ``sk`` as an end negation) that nothing extends: no
match of ``SEQ(s1, ..., sk+1)`` starts with it and, where ``sk`` is a list, no match of the
prefix has a longer list starting with its list. The reference's stop test is prefix-closed
(a stop event after a list's last element stops nothing), so a stopped list's prefix is a
match of its prefix pattern, and its growth past the stop event is none.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from petricep.events import Event
from petricep.lang import ast as A
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from tests.features import scenario
from tests.features.repetition import SETTINGS, matcher_of, run_on
from tests.features.scenario import stream
from tests.reference import reference_run
from tests.runtime.test_timeouts import prefix, seq_refs
from tests.strategies import streams


@pytest.fixture(autouse=True, params=["python", "kernel"])
def matcher(request: pytest.FixtureRequest) -> Iterator[None]:
    """In place of conftest.py's: the Python engine and the kernel (the reference has no
    timeouts); tests/spark/test_partition.py runs these cases on key partitions too."""
    if getattr(request.function, "is_hypothesis_test", False) and request.param != "python":
        pytest.skip("a property runs once")
    scenario.CURRENT = matcher_of(request.param)
    yield
    scenario.CURRENT = reference_run


TIMED = "PATTERN p: SEQ(A a, {list} UNTIL C c, D d) WITHIN {w} ON TIMEOUT RETURN T(n = count(b[]))"


def outputs(text: str, events: list[Event], tie: str = "arrival") -> list[tuple[str, Any, Any]]:
    """(kind, ids, deadline) of each match and timeout, in output order (the matcher under test)."""
    out = scenario.MATCH(list(parse_text(text).patterns), events, tie)
    return [("timeout" if "timeout" in m else "match", m["ids"], m.get("timeout", {}).get("deadline")) for m in out]


def test_a_stopped_list_times_out_at_its_windows_end() -> None:
    # C3 stops [1], [2], [1,2]; [1] was extended by B2 (no timeout), [1,2] and [2] were not:
    # they time out when X20 passes 0 + 10, as [4], which began after C3, does
    got = outputs(TIMED.format(list="B+ b[]", w=10), stream("A@0 B@1 B@2 C@3 B@4 X@20"))
    assert got == [("timeout", {"a": 0, "b": [1, 2]}, 10), ("timeout", {"a": 0, "b": [2]}, 10), ("timeout", {"a": 0, "b": [4]}, 10)]


def test_a_stopped_list_that_completes_does_not_time_out() -> None:
    # D4 completes the stopped lists; [5] began after it and times out
    got = outputs(TIMED.format(list="B+ b[]", w=10), stream("A@0 B@1 B@2 C@3 D@4 B@5 X@20"))
    assert got == [
        ("match", {"a": 0, "b": [1, 2], "d": 4}, None),
        ("match", {"a": 0, "b": [1], "d": 4}, None),
        ("match", {"a": 0, "b": [2], "d": 4}, None),
        ("timeout", {"a": 0, "b": [5]}, 10),
    ]


def test_a_list_below_its_fewest_events_is_cancelled_and_does_not_time_out() -> None:
    # C2 cancels [1] (one of two events: no future); [3] times out
    got = outputs(TIMED.format(list="B{2,} b[]", w=10), stream("A@0 B@1 C@2 B@3 X@20"))
    assert got == [("timeout", {"a": 0, "b": [3]}, 10)]


@pytest.mark.parametrize("tie", ["arrival", "strict", "either"])
def test_a_stop_event_in_the_timestamp_group_that_closes_the_window(tie: str) -> None:
    # X (pos 3) closes the window of 3 events; C (pos 2) of its timestamp group stops [1]:
    # under strict and either that group's stop events are applied when its timeouts are
    # decided, and a stop (unlike a negation) leaves [1] alive: it times out on every rule
    text = TIMED.format(list="B+ b[]", w="3 EVENTS")
    assert outputs(text, stream("A@0 B@1 C@2 X@2"), tie) == [("timeout", {"a": 0, "b": [1]}, 3)]
    # where the list has no way on without another event, C cancels it: no timeout
    text = TIMED.format(list="B{2,} b[]", w="3 EVENTS")
    assert outputs(text, stream("A@0 B@1 C@2 X@2"), tie) == []


def test_a_negation_after_the_stopped_list_still_cancels_it() -> None:
    # C2 stops [1], E3 after it forbids its D step: blocked for good, no timeout; [4] times out
    text = "PATTERN p: SEQ(A a, B+ b[] UNTIL C c, !(E n), D d) WITHIN 10 ON TIMEOUT RETURN T(n = count(b[]))"
    assert outputs(text, stream("A@0 B@1 C@2 E@3 B@4 X@20")) == [("timeout", {"a": 0, "b": [4]}, 10)]


def test_a_stopped_list_inside_and_times_out() -> None:
    # C1 stops [0] (A may still come): it times out, and B2 starts [2] (no [0,2])
    text = "PATTERN p: AND(A a, B+ b[] UNTIL C c) WITHIN 10 ON TIMEOUT RETURN T(n = count(b[]))"
    assert outputs(text, stream("B@0 C@1 B@2 X@20")) == [("timeout", {"b": [0]}, 10), ("timeout", {"b": [2]}, 12)]


# ----------------------------------------------------------------------------- property

NAMES = "abcd"


@st.composite
def until_seqs(draw: Any) -> A.Pattern:
    """SEQ of 2-4 steps, each a single event or a ``+`` list (a list maybe with a stop event:
    no condition, one on the stop event alone, or one reading a single step before it), at
    most one negation between two steps, comparisons of singles' x, maybe [k], a time or
    count window."""
    n = draw(st.integers(2, 4))
    kids: list[A.EventRef] = []
    conds: list[A.Expr] = []
    for i in range(n):
        kleene = draw(st.integers(0, 2)) == 0
        ref = A.EventRef(draw(st.sampled_from("ABC")), NAMES[i], kleene=kleene)
        singles = [k.var for k in kids if not k.kleene]
        if kleene and draw(st.integers(0, 3)) > 0:
            stop = A.EventRef(draw(st.sampled_from("ABCD")), f"s{i}")
            kind = draw(st.sampled_from(["none", "const", "before"] if singles else ["none", "const"]))
            op = draw(st.sampled_from(("=", "!=", "<", ">")))
            if kind == "const":
                conds.append(A.Compare(op, A.Attr(stop.var, "x"), A.Num(draw(st.integers(0, 5)))))
            elif kind == "before":
                conds.append(A.Compare(op, A.Attr(stop.var, "x"), A.Attr(draw(st.sampled_from(singles)), "x")))
            ref = dataclasses.replace(ref, until=stop)
        kids.append(ref)
    singles = [k.var for k in kids if not k.kleene]
    if len(singles) >= 2 and draw(st.booleans()):
        i, j = draw(st.lists(st.sampled_from(singles), min_size=2, max_size=2, unique=True))
        conds.append(A.Compare(draw(st.sampled_from(["<", "<=", "=", "!="])), A.Attr(i, "x"), A.Attr(j, "x")))
    if draw(st.booleans()):
        kids.insert(draw(st.integers(1, n - 1)), A.EventRef(draw(st.sampled_from("ABCD")), "n", negated=True))
    partition = ("k",) if draw(st.booleans()) else ()
    window = A.Window(draw(st.sampled_from([A.WIN_TIME, A.WIN_COUNT])), draw(st.integers(1, 6)))
    return A.Pattern("p", A.Seq(tuple(kids)), tuple(conds), partition, window=window, timeout=A.Return("T", ()))


def _key(ids: dict[str, Any], names: list[str]) -> str:
    return json.dumps({v: ids[v] for v in names if v in ids}, sort_keys=True)


def reference_timeouts(p: A.Pattern, events: list[Event], tie: str) -> list[str]:
    positives = [c for c in seq_refs(p) if not c.negated]
    assert p.window is not None
    w = p.window.value
    count = p.window.kind == A.WIN_COUNT  # (streams: an event's id is its position)
    out = []
    for k in range(1, len(positives)):
        names = [c.var for c in positives[:k]]
        last = positives[k - 1]
        grown = [m["ids"] for m in reference_run([prefix(p, k, False)], events, tie)]
        extended = {_key(m["ids"], names) for m in reference_run([prefix(p, k + 1, False)], events, tie)}
        if last.kleene:  # a longer list with the same earlier steps extends it
            for ids in grown:
                for cut in range(1, len(ids[last.var])):
                    extended.add(_key({**ids, last.var: ids[last.var][:cut]}, names))
        for m in reference_run([prefix(p, k, True)], events, tie):
            if _key(m["ids"], names) not in extended:
                first = min(i for v in m["ids"].values() for i in (v if isinstance(v, list) else [v])) if count else m["start"]
                out.append(json.dumps([m["ids"], m["start"], m["end"], first + w], sort_keys=True))
    return sorted(out)


@SETTINGS
@given(until_seqs(), streams(max_size=9), st.sampled_from(["arrival", "strict", "either"]))
def test_timeouts_equal_unextended_prefixes_of_the_reference(p: A.Pattern, events: list[Event], tie: str) -> None:
    """Every tie rule: under strict and either the stop events of the timestamp group that
    closes a window are applied before its timeouts are decided."""
    (checked,) = parse_text(pattern_text(p)).patterns  # the language accepts what was drawn
    note(pattern_text(checked))
    out = run_on("python", [checked], events, tie)
    got = sorted(json.dumps([m["ids"], m["start"], m["end"], m["timeout"]["deadline"]], sort_keys=True) for m in out if "timeout" in m)
    assert got == reference_timeouts(p, events, tie)
