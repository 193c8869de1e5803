"""``LIMIT n PARTIAL MATCHES [PER KEY] [DROP OLDEST | REJECT NEW | FAIL]``: bounded state.

Live partial matches are counted per pattern and key; expired, cancelled, consumed and
interrupted ones do not count. Exact expected outputs and drop counts.
"""

from __future__ import annotations

from typing import Any

import pytest

from petricep.api import compile_text
from petricep.errors import StateLimitError
from petricep.events import Event
from petricep.runtime.engine import Engine


def ev(etype: str, ts: Any, pos: int, **attrs: Any) -> Event:
    return Event(etype, ts, pos, f"{etype}{pos}", attrs)


def run(text: str, events: list[Event]) -> tuple[list[dict[str, Any]], Engine]:
    engine = Engine(compile_text(text))
    return [m.ids for m in engine.run(events)], engine


A3B = [ev("A", 0, 0, k=1), ev("A", 1, 1, k=1), ev("A", 2, 2, k=1), ev("B", 3, 3, k=1)]


def test_drop_oldest_is_the_default() -> None:
    ids, engine = run("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 100 LIMIT 2 PARTIAL MATCHES", A3B)
    # A2 is the third live partial match: A0, whose first event is oldest, goes
    assert ids == [{"a": "A1", "b": "B3"}, {"a": "A2", "b": "B3"}]
    assert engine.stats.dropped == {"p": 1}


def test_report_counts_live_and_dropped_partial_matches_while_running() -> None:
    engine = Engine(compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 100 LIMIT 2 PARTIAL MATCHES"))
    for e in A3B:
        engine.push(e)
    assert engine.report()["patterns"]["p"] == {"matches": 2, "timeouts": 0, "dropped": 1, "alive": 2}
    engine.flush()
    assert engine.report()["patterns"]["p"]["alive"] == 0  # the stream ended: every window closed


def test_reject_new_keeps_the_old_ones() -> None:
    ids, engine = run("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 100 LIMIT 2 PARTIAL MATCHES REJECT NEW", A3B)
    assert ids == [{"a": "A0", "b": "B3"}, {"a": "A1", "b": "B3"}]
    assert engine.stats.dropped == {"p": 1}


def test_fail_stops_the_run_naming_pattern_key_and_event() -> None:
    engine = Engine(compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 100 LIMIT 2 PARTIAL MATCHES FAIL"))
    with pytest.raises(StateLimitError) as err:
        list(engine.run(A3B))
    assert str(err.value) == (
        "pattern 'p': more than 2 live partial matches for key 1 at event 'A2' (LIMIT 2 PARTIAL MATCHES FAIL)"
    )


def test_the_limit_is_per_key() -> None:
    events = [ev("A", 0, 0, k=1), ev("A", 1, 1, k=2), ev("A", 2, 2, k=1), ev("B", 3, 3, k=2), ev("B", 4, 4, k=1)]
    ids, engine = run("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 100 LIMIT 1 PARTIAL MATCHES PER KEY", events)
    assert ids == [{"a": "A1", "b": "B3"}, {"a": "A2", "b": "B4"}]
    assert engine.stats.dropped == {"p": 1}


def test_a_completed_match_is_emitted_even_when_its_partial_match_is_rejected() -> None:
    text = "PATTERN p: SEQ(A+ a[], B b) WITHIN 100 LIMIT 1 PARTIAL MATCHES REJECT NEW"
    ids, engine = run(text, [ev("A", 0, 0), ev("A", 1, 1), ev("B", 2, 2)])
    # {A0} is kept; {A0 A1} and {A1} are rejected
    assert ids == [{"a": ["A0"], "b": "B2"}]
    assert engine.stats.dropped == {"p": 2}


def test_expired_partial_matches_do_not_count() -> None:
    ids, engine = run(
        "PATTERN p: SEQ(A a, B b) WITHIN 5 LIMIT 1 PARTIAL MATCHES FAIL", [ev("A", 0, 0), ev("A", 10, 1), ev("B", 11, 2)]
    )
    assert ids == [{"a": "A1", "b": "B2"}]
    assert engine.stats.dropped == {"p": 0}


def test_cancelled_partial_matches_do_not_count() -> None:
    ids, engine = run(
        "PATTERN p: SEQ(A a, !(C c), B b) WITHIN 100 LIMIT 1 PARTIAL MATCHES FAIL",
        [ev("A", 0, 0), ev("C", 1, 1), ev("A", 2, 2), ev("B", 3, 3)],
    )
    assert ids == [{"a": "A2", "b": "B3"}]


def test_consumed_partial_matches_do_not_count() -> None:
    text = "PATTERN p: SEQ(A a, B b, C c) WHERE skip-till-next-match WITHIN 100 LIMIT 2 PARTIAL MATCHES"
    ids, engine = run(text, [ev("A", 0, 0), ev("B", 1, 1), ev("A", 2, 2), ev("A", 3, 3), ev("C", 4, 4)])
    # B1 consumed {A0}: live are {A0 B1} and {A2}; A3 makes three and drops {A0 B1}
    assert ids == []
    assert engine.stats.dropped == {"p": 1}


def test_interrupted_partial_matches_do_not_count() -> None:
    text = "PATTERN p: SEQ(A a, B b) WHERE [k] AND partition-contiguity WITHIN 100 LIMIT 1 PARTIAL MATCHES FAIL"
    events = [ev("A", 0, 0, k=1), ev("X", 1, 1, k=1), ev("A", 2, 2, k=1), ev("B", 3, 3, k=1)]
    ids, _ = run(text, events)
    assert ids == [{"a": "A2", "b": "B3"}]


def test_a_limit_binds_its_own_pattern_only_in_a_shared_net() -> None:
    text = (
        "PATTERN p: SEQ(A a, B b) WITHIN 100 LIMIT 1 PARTIAL MATCHES\n"
        "PATTERN q: SEQ(A a, B b) WITHIN 100\n"
    )
    engine = Engine(compile_text(text))
    out = [(m.pattern, m.ids) for m in engine.run([ev("A", 0, 0), ev("A", 1, 1), ev("B", 2, 2)])]
    assert out == [
        ("p", {"a": "A1", "b": "B2"}),
        ("q", {"a": "A0", "b": "B2"}),
        ("q", {"a": "A1", "b": "B2"}),
    ]
    assert engine.stats.dropped == {"p": 1, "q": 0}


def test_dropped_partial_matches_do_not_time_out() -> None:
    text = "PATTERN p: SEQ(A a, B b) WITHIN 5 LIMIT 1 PARTIAL MATCHES ON TIMEOUT RETURN T()"
    engine = Engine(compile_text(text))
    out = [(m.ids, m.timeout) for m in engine.run([ev("A", 0, 0), ev("A", 1, 1), ev("X", 9, 2)])]
    assert out == [({"a": "A1"}, ("T", 6))]
