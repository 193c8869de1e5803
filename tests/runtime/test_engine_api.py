"""The embedded engine's library API: push/flush/run, advance for key partitions, pickling."""

from __future__ import annotations

import pickle

import pytest

from petricep.api import compile_text
from petricep.errors import ConfigError, EventOrderError
from petricep.events import Event
from petricep.runtime.engine import Engine

PATTERNS = """
PATTERN p: SEQ(A a, !(C c)) WHERE [k] WITHIN 2 RETURN T(k = a.k)
PATTERN q: SEQ(T t, B b) WHERE [k] WITHIN 5
"""
SPEC = [("A", 0, 1), ("A", 0, 2), ("B", 1, 1), ("C", 2, 2), ("D", 3, 9), ("B", 4, 1), ("B", 4, 2), ("A", 5, 1)]


def events() -> list[Event]:
    return [Event(t, ts, i, attrs={"k": k}) for i, (t, ts, k) in enumerate(SPEC)]


def test_whole_stream() -> None:
    out = [m.to_dict() for m in Engine(compile_text(PATTERNS)).run(events())]
    assert out == [
        {"pattern": "p", "ids": {"a": 0}, "start": 0, "end": 0, "attrs": {"k": 1}},
        {"pattern": "q", "ids": {"t": "p[0]", "b": 5}, "start": 3, "end": 4, "attrs": {}},
        {"pattern": "p", "ids": {"a": 7}, "start": 5, "end": 5, "attrs": {"k": 1}},
    ]


def test_key_partitions_with_advance_equal_the_whole_stream() -> None:
    net = compile_text(PATTERNS)
    whole = sorted(repr(m.to_dict()) for m in Engine(net).run(events()))
    parts = []
    for key in (1, 2, 9):
        engine = Engine(net)
        for e in events():
            got = engine.push(e) if e.attrs["k"] == key else engine.advance(e.ts, e.pos)
            parts += [repr(m.to_dict()) for m in got]
        parts += [repr(m.to_dict()) for m in engine.flush((5, 7))]
    assert sorted(parts) == whole


def test_net_pickles_and_runs_the_same() -> None:
    net = compile_text(PATTERNS)
    copy = pickle.loads(pickle.dumps(net))
    assert copy == net
    assert [m.to_dict() for m in Engine(copy).run(events())] == [m.to_dict() for m in Engine(net).run(events())]


def test_backwards_time_is_an_error() -> None:
    engine = Engine(compile_text(PATTERNS))
    engine.push(Event("A", 5, 0, attrs={"k": 1}))
    with pytest.raises(EventOrderError, match=r"timestamp 4 is before the previous event's 5"):
        engine.push(Event("A", 4, 1, attrs={"k": 1}))


def test_either_tie_rule_needs_skip_till_any_match() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE skip-till-next-match WITHIN 3")
    with pytest.raises(ConfigError, match="tie rule 'either' needs skip-till-any-match"):
        Engine(net, tie="either")


def _stream(spec: str, start: int = 0) -> list[Event]:
    return [Event(t, start + i, start + i, attrs={"x": start + i}) for i, t in enumerate(spec.split())]


def test_add_a_pattern_to_a_running_engine() -> None:
    from petricep.lang.parser import parse_text
    from petricep.merge import extend_net

    engine = Engine(compile_text("PATTERN p: SEQ(A a, B b, C c) WITHIN 100"))
    first, second = _stream("A B A"), _stream("B C A B C", start=3)
    out = [m for e in first for m in engine.push(e)]
    new = parse_text("PATTERN q: SEQ(A a, B b, C c) WITHIN 100\nPATTERN r: SEQ(B b, C c) WITHIN 100", "<new>").patterns
    engine.extend(extend_net(engine.net, list(new)))
    out += [m for e in second for m in engine.push(e)] + engine.flush()
    got = {(m.pattern, tuple(m.ids.values())) for m in out}
    # p keeps its partial matches from before (a0, b1, a2): every a<b<c over the whole stream
    alone_p = {("p", tuple(m.ids.values())) for m in Engine(compile_text("PATTERN p: SEQ(A a, B b, C c) WITHIN 100")).run(_stream("A B A B C A B C"))}
    assert {g for g in got if g[0] == "p"} == alone_p
    # q and r see only what came after they were added: exactly their run on that suffix
    for name, text in (("q", "PATTERN q: SEQ(A a, B b, C c) WITHIN 100"), ("r", "PATTERN r: SEQ(B b, C c) WITHIN 100")):
        alone = {(name, tuple(m.ids.values())) for m in Engine(compile_text(text)).run(_stream("B C A B C", start=3))}
        assert {g for g in got if g[0] == name} == alone
    assert {g for g in got if g[0] == "q"} == {("q", (5, 6, 7))}
    assert engine.pattern_names == ["p", "q", "r"]


def test_remove_a_pattern_from_a_running_engine() -> None:
    text = "PATTERN p: SEQ(A a, B b, C c) WITHIN 100\nPATTERN q: SEQ(A a, B b, D d) WITHIN 100"
    engine = Engine(compile_text(text))  # p and q share a and a;b
    stream = _stream("A B C D A B C D")
    out = [m for e in stream[:3] for m in engine.push(e)]
    engine.remove_pattern("q")
    out += [m for e in stream[3:] for m in engine.push(e)] + engine.flush()
    assert [(m.pattern, m.ids) for m in out] == [
        ("p", {"a": 0, "b": 1, "c": 2}),
        ("p", {"a": 0, "b": 1, "c": 6}),
        ("p", {"a": 0, "b": 5, "c": 6}),
        ("p", {"a": 4, "b": 5, "c": 6}),
    ]
    assert engine.pattern_names == ["p"]
    with pytest.raises(ConfigError, match="no running pattern named 'q'"):
        engine.remove_pattern("q")


def test_counting_without_match_objects_equals_collecting() -> None:
    """collect=False counts matches per pattern; patterns with the same checks at a place
    are tallied as a group and added up when stats are read (also across remove_pattern)."""
    text = "".join(
        f"PATTERN q{i}: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN {w}\n" for i, w in enumerate([5, 5, 5, 3, 5])
    ) + "PATTERN r: SEQ(A a, B b) WHERE [k] AND b.x > a.x AND a.x < 2 WITHIN 5\n"
    net = compile_text(text)
    events = [Event("AB"[i % 3 == 2], i, i, i, {"k": i % 2, "x": (i * 7) % 5}) for i in range(40)]
    collecting, counting = Engine(net), Engine(net, collect=False)
    found = {p.name: 0 for p in net.patterns}
    for n, e in enumerate(events):
        for m in collecting.push(Event(e.type, e.ts, e.pos, e.id, dict(e.attrs))):
            found[m.pattern] += 1
        assert counting.push(e) == []
        if n == 20:
            assert counting.stats.matches == found
            collecting.remove_pattern("q1")
            counting.remove_pattern("q1")
    assert counting.stats.matches == found
    assert found == {"q0": 7, "q1": 4, "q2": 7, "q3": 3, "q4": 7, "r": 7}
    assert counting.state.tally == {}  # read: nothing left to add up
