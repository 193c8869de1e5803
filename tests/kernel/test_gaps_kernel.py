"""Per-step gaps on the compiled kernel (issue 42): what tests/features/test_gaps.py does not
reach there. Snapshots (Arrow IPC) of gapped nets cut at random points give the uninterrupted
run; gapped patterns beside LIMIT and ON TIMEOUT patterns in one net, and with a LIMIT and
ON TIMEOUT of their own (small quotas full of partial matches past their gap), and gaps over float
timestamps (where ``ts - a > hi`` rounds), agree with the Python engine, partial matches
alive after every event included; ``petricep check`` says a gapped net runs on the kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.cli import main
from petricep.errors import StateLimitError
from petricep.events import Event
from petricep.lang import ast as A
from tests.budget import examples
from tests.features.test_gaps import gapped_patterns, lives
from tests.kernel.test_snapshot import SETTINGS, same
from tests.strategies import streams

NETS = Path(__file__).resolve().parents[2] / "nets"
TYPES = ("A", "B", "C")


@SETTINGS
@given(st.data())
def test_snapshots_of_gapped_nets(data: st.DataObject) -> None:
    """A gapped pattern, alone or beside a copy with other gaps and a third one: cut and
    restored at random points (ticks, batch sizes, sweeps, compactions), the same (match,
    position) pairs and partial matches alive."""
    pats = [data.draw(gapped_patterns("p"))]
    if data.draw(st.booleans()):
        pats.append(data.draw(gapped_patterns("q")))
    either = all(p.strategy == A.Strategy.ANY for p in pats)
    tie = data.draw(st.sampled_from(("arrival", "strict", "either") if either else ("arrival", "strict")))
    same(data, pats, data.draw(streams(types=TYPES, max_size=14)), tie)


BESIDE = """
PATTERN gap: SEQ(A a, B b AFTER 1 TO 2, C c AFTER 0 TO 3 FROM a) WHERE [k] WITHIN 8
PATTERN capped: SEQ(A a, B b, C c) WHERE [k] WITHIN 8 LIMIT 2 PARTIAL MATCHES DROP OLDEST
PATTERN late: SEQ(A a, B b) WHERE [k] WITHIN 3 ON TIMEOUT RETURN Late(k = a.k)
PATTERN again: SEQ(Late l, A a AFTER 0 TO 2) WHERE [k]
"""


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(types=TYPES, max_size=14), st.sampled_from(("arrival", "strict")))
def test_gaps_beside_limit_and_timeouts_in_one_net(events: list[Event], tie: str) -> None:
    """A gapped pattern shares its prefix with a LIMIT pattern and an ON TIMEOUT one (their
    shared place keeps its tokens to the window: the patterns there disagree on the gap); a
    gapped reader of the timeouts: the kernel as the engine, event by event."""
    net = compile_text(BESIDE)
    assert lives("kernel", net, events, tie) == lives("python", net, events, tie)


def _lives_or_error(engine: str, net: Any, events: list[Event]) -> Any:
    try:
        return lives(engine, net, events)
    except StateLimitError as exc:  # (LIMIT ... FAIL: the kernel words it as the engine)
        return str(exc)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    streams(types=("A", "A", "A", "B", "C"), max_size=12),
    st.integers(0, 2),
    st.integers(1, 3),
    st.sampled_from(("DROP OLDEST", "REJECT NEW", "FAIL")),
    st.sampled_from(("skip-till-any-match", "skip-till-next-match")),
    st.booleans(),
)
def test_gapped_limits_and_timeouts_on_both_engines(
    events: list[Event], hi: int, n: int, policy: str, strategy: str, timeout: bool
) -> None:
    """A small LIMIT beside short gaps (many A's: full quotas of partial matches past their
    gap), with ON TIMEOUT or not: the engines drop, refuse, fail and time out alike."""
    text = (
        f"PATTERN p: SEQ(A a, B b AFTER 0 TO {hi}, C c AFTER 0 TO {hi + 2} FROM a) WHERE {strategy} WITHIN 6 "
        f"LIMIT {n} PARTIAL MATCHES {policy}" + (" ON TIMEOUT RETURN Late(x = a.x)" if timeout else "")
    )
    net = compile_text(text)
    assert _lives_or_error("kernel", net, events) == _lives_or_error("python", net, events)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(TYPES), st.sampled_from((0.0, 0.1, 0.2, 0.3, 0.7))), min_size=1, max_size=10),
    st.sampled_from((0.1, 0.2, 0.3, 0.6)),
    st.sampled_from(("arrival", "strict", "either")),
)
def test_gaps_over_float_timestamps(rows: list[tuple[str, float]], hi: float, tie: str) -> None:
    """Float times and bounds (0.3 - 0.1 > 0.2 is false in doubles): the kernel tests a gap
    as the engine does, ``ts - a > hi``, so both drop a token at the same event."""
    ts, events = 0.0, []
    for pos, (etype, step) in enumerate(rows):
        ts += step
        events.append(Event(etype, ts, pos, pos, {"x": pos % 3, "k": 0}))
    text = f"PATTERN p: SEQ(A a, B b AFTER 0 TO {hi}, C c AFTER 0.1 TO {hi} FROM a) WITHIN 5"
    net = compile_text(text)
    assert lives("kernel", net, events, tie) == lives("python", net, events, tie)


def test_a_gap_end_that_rounds() -> None:
    # 0.1 + 0.2 - 0.1 = 0.20000000000000004 > 0.2: a B at 0.1 + 0.2 is past a0's gap (no
    # match, a0 leaves), one at 0.3 is not (0.3 - 0.1 = 0.19999999999999998)
    net = compile_text("PATTERN p: SEQ(A a, B b AFTER 0 TO 0.2) WITHIN 5")
    for b, want in ((0.1 + 0.2, ([], [1, 0])), (0.3, ([{"a": 0, "b": 1}], [1, 1]))):
        events = [Event("A", 0.1, 0, 0, {}), Event("B", b, 1, 1, {})]
        got = lives("kernel", net, events)
        assert got == lives("python", net, events)
        assert ([m["ids"] for m in got[0]], got[1]) == want


def test_check_says_the_gapped_net_runs_on_the_kernel(capsys: pytest.CaptureFixture[str]) -> None:
    path = NETS / "timed_stall_recovery.pcep"
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out == (
        f"{path}: 1 pattern\n"
        "  stall_recovery: 3 state places, 3 transitions; inputs traffic; window 1 h; partition [REPORT_ID]; "
        "skip-till-any-match; returns stall\n"
        "net before merging: 1 patterns, 1 input places, 3 state places, 3 transitions\n"
        "net after merging: 1 shared net, 1 input places, 3 state places, 3 transitions\n"
        "kernel: covers this net (run fires it on the kernel)\n"
    )


@SETTINGS
@given(st.data())
def test_snapshots_of_nets_with_the_later_gap_forms(data: st.DataObject) -> None:
    """The later forms (tests/features/test_gaps_more.py: a list's chain, a gap after a list,
    an optional step, an AND/OR, a group; count windows): cut and restored at random points,
    the same (match, position) pairs and partial matches alive (a list's gap reads its node's
    last element, restored with the element arena)."""
    from tests.features.test_gaps_more import timed_patterns

    pats = [data.draw(timed_patterns("p", modes=False))]
    if data.draw(st.booleans()):
        pats.append(data.draw(timed_patterns("q", modes=False)))
    either = all(p.strategy == A.Strategy.ANY for p in pats)
    tie = data.draw(st.sampled_from(("arrival", "strict", "either") if either else ("arrival", "strict")))
    same(data, pats, data.draw(streams(types=TYPES, max_size=14)), tie)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    streams(types=("A", "B", "B", "B", "C"), max_size=12),
    st.integers(0, 2),
    st.integers(1, 3),
    st.sampled_from(("DROP OLDEST", "REJECT NEW", "FAIL")),
    st.sampled_from(("skip-till-any-match", "skip-till-next-match")),
    st.booleans(),
)
def test_chain_gaps_with_limits_and_timeouts_on_both_engines(
    events: list[Event], hi: int, n: int, policy: str, strategy: str, timeout: bool
) -> None:
    """Lists with a chain gap and an optional gapped step after them, a small LIMIT (full
    quotas of partial matches past their gap, read from the list's last element), ON TIMEOUT
    or not: the engines drop, refuse, fail and time out alike."""
    text = (
        f"PATTERN p: SEQ(A a, B+ b[] AFTER 0 TO {hi}, C? c AFTER 0 TO {hi + 1}, A d AFTER 0 TO 3) WHERE {strategy} "
        f"WITHIN 6 LIMIT {n} PARTIAL MATCHES {policy}" + (" ON TIMEOUT RETURN Late(x = a.x)" if timeout else "")
    )
    net = compile_text(text)
    assert _lives_or_error("kernel", net, events) == _lives_or_error("python", net, events)


@SETTINGS
@given(st.data())
def test_snapshots_of_nets_with_the_last_gap_forms(data: st.DataObject) -> None:
    """The last forms (tests/features/test_gaps_rest.py: gaps in EVENTS under a count window,
    with ON TIMEOUT; a step right after an AND/OR, FROM a group's step): cut and restored at
    random points, the same (match, position) pairs and partial matches alive."""
    from tests.features.test_gaps_rest import after_patterns, counted_patterns

    draw = data.draw(st.sampled_from([after_patterns, counted_patterns]))
    pats = [data.draw(draw("p"))]
    if data.draw(st.booleans()):
        pats.append(data.draw(draw("q")))
    either = all(p.strategy == A.Strategy.ANY for p in pats)
    tie = data.draw(st.sampled_from(("arrival", "strict", "either") if either else ("arrival", "strict")))
    same(data, pats, data.draw(streams(types=TYPES, max_size=14)), tie)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    streams(types=("A", "B", "B", "C"), max_size=12),
    st.integers(0, 2),
    st.integers(1, 3),
    st.sampled_from(("DROP OLDEST", "REJECT NEW", "FAIL")),
    st.sampled_from(("skip-till-any-match", "skip-till-next-match")),
)
def test_events_gaps_with_limits_and_timeouts_on_both_engines(events: list[Event], lo: int, quota: int, policy: str, strategy: str) -> None:
    """A gap in EVENTS with a small LIMIT and ON TIMEOUT under a count window (a quota full of
    partial matches past their gap, deadlines at the first position refused): the kernel as
    the engine, event by event, the error included."""
    net = compile_text(
        f"PATTERN p: SEQ(A a, B b AFTER {lo} TO {lo + 1} EVENTS, C c AFTER 0 TO 2 EVENTS) WHERE {strategy} WITHIN 7 EVENTS "
        f"LIMIT {quota} PARTIAL MATCHES {policy} ON TIMEOUT RETURN Late(x = a.x)"
    )
    assert _lives_or_error("kernel", net, events) == _lives_or_error("python", net, events)
