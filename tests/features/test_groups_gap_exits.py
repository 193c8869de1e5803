"""Per-step gaps inside a repeated group as early exits (issue 42): a partial match waiting
for a gapped step of the group leaves once that gap has passed, not at its window's end, as a
gap outside a group does (compile/groups.py ``step_gaps``, compile/gaps.py ``gap_expiry``);
with ON TIMEOUT it times out there. The matches are unchanged (the gap's conditions still
decide them: test_groups.py's properties compare every engine with the reference on random
gapped groups); here the partial matches alive after every event, on the Python engine and
the compiled kernel, against the same pattern before the change (the window's end) by hand.
"""

from __future__ import annotations

import pytest

from petricep.api import compile_text
from tests.features.scenario import stream
from tests.features.test_gaps import lives


def _places(text: str) -> dict[str, tuple[tuple[int, float | int], ...]]:
    (group,) = compile_text(f"PATTERN p: {text}").groups
    return {p.label: p.gap_expiry for p in group.places}


def test_the_places_waiting_for_a_gapped_step_exit_at_its_gap() -> None:
    # c within 3 of its b (slot 1): the places between b and c, first and later iterations
    assert _places("SEQ(A a, SEQ(B b, C c AFTER 0 TO 3)+ g[], D d) WITHIN 50") == {
        "start": (), "a": (), "a;g:b": ((1, 3),), "a;g+": (), "a;g+:b": ((1, 3),), "a;g+;d": (),
    }  # fmt: skip
    # the first step: within 3 of a (slot 0) on the first iteration; later iterations may
    # also end the group (d has no gap): no exit there
    assert _places("SEQ(A a, SEQ(B b AFTER 0 TO 3, C c)+ g[], D d) WITHIN 50")["a"] == ((0, 3),)
    assert _places("SEQ(A a, SEQ(B b AFTER 0 TO 3, C c)+ g[], D d) WITHIN 50")["a;g+"] == ()
    # the group last: its matches leave as the iterations complete, and a complete one waits
    # only for the next iteration's b, within 3 of its c (slot 2)
    assert _places("SEQ(A a, SEQ(B b AFTER 0 TO 3, C c)+ g[]) WITHIN 50")["a;g+"] == ((2, 3),)


def test_from_an_earlier_step_of_the_iteration_in_events() -> None:
    # e within 4 events of its b: waiting for c or for e, b's gap runs (slot ~1: in EVENTS)
    places = _places("SEQ(A a, SEQ(B b, C c, E e AFTER 0 TO 4 EVENTS FROM b)+ g[]) WITHIN 20 EVENTS")
    assert places["a;g:b"] == places["a;g:c"] == places["a;g+:b"] == places["a;g+:c"] == ((~1, 4),)


@pytest.mark.parametrize("engine", ["python", "kernel"])
def test_partial_matches_leave_at_the_gap_not_the_window(engine: str) -> None:
    net = compile_text("PATTERN p: SEQ(A a, SEQ(B b, C c AFTER 0 TO 3)+ g[], D d) WITHIN 50")
    ev = stream("A@0 B@1 C@2 B@3 C@10 D@11 B@20 D@30")
    got, live, _ = lives(engine, net, ev)
    assert [m["ids"] for m in got] == [
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 5},
        {"a": 0, "g": [{"b": 1, "c": 2}], "d": 7},
    ]
    # C@10 ends the b3 and b1 waits (10 > 3 + 3, 1 + 3) and extends none; B@20's wait ends at
    # D@30 (30 > 23); before, the waits stayed to the window: [1, 2, 3, 5, 5, 5, 7, 7]
    assert live == [1, 2, 3, 5, 2, 2, 4, 2]


@pytest.mark.parametrize("engine", ["python", "kernel"])
def test_a_gap_inside_the_group_times_a_partial_match_out_at_its_end(engine: str) -> None:
    # b3 waits for its c until 3 + 3 = 6, not the window's 0 + 20: X@8 is past it, and both
    # partial matches waiting there time out (6; before the change: 20). b1's wait was
    # extended by C@2 (a partial match that moved on does not time out), and so were a0's
    # and the complete iteration's (by B@1, B@3)
    net = compile_text(
        "PATTERN p: SEQ(A a, SEQ(B b, C c AFTER 0 TO 3)+ g[], D d) WITHIN 20 ON TIMEOUT RETURN T(n = count(g[]))"
    )
    got, live, _ = lives(engine, net, stream("A@0 B@1 C@2 B@3 X@8 X@30"))
    assert [(m["ids"], m["timeout"]["deadline"]) for m in got] == [
        ({"a": 0, "g": [{"b": 1, "c": 2}, {"b": 3}]}, 6),
        ({"a": 0, "g": [{"b": 3}]}, 6),
    ]
    assert live == [1, 2, 3, 5, 2, 0]  # (before: [1, 2, 3, 5, 5, 0])
