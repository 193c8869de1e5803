"""The run's memory budget in bytes on the Python engine (runtime/memory.py, issue 43): its
partial matches and the events a slack holds back, estimated, stop the run with a typed error
naming the budget, what holds the bytes and how to raise it; and a run with many live keys
samples its peak in time linear in the events, not quadratic in the keys."""

from __future__ import annotations

import pytest

from petricep.api import compile_text
from petricep.errors import ConfigError, StateLimitError
from petricep.events import Event
from petricep.runtime.counters import MarkingCounters
from petricep.runtime.engine import Engine
from petricep.runtime.memory import check_size, parse_size, size_text

KLEENE = "PATTERN p: SEQ(A a, B+ b[], C c) WITHIN 100000"
KEYED = "PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 1000000000"
HOW = "bound the patterns with a window (WITHIN) or LIMIT n PARTIAL MATCHES, or raise the budget (--max-memory SIZE)"


@pytest.mark.parametrize(
    ("text", "size"),
    [("1GB", 10**9), ("512MB", 512 * 10**6), ("2GiB", 2 * 2**30), ("64 kib", 65536), ("1.5GB", 1_500_000_000), ("4096", 4096)],
)
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "GB", "1XB", "-1GB", "0", "0.1B", "1e9"])
def test_what_is_not_a_size(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_size(text)
    assert str(info.value) in (
        f"expected a size such as 512MB, 1GB or 2GiB, not {text!r}",
        f"the memory budget must be at least 1 byte, not {text!r}",
    )


def test_the_api_takes_bytes() -> None:
    assert check_size(None) is None and check_size(1) == 1
    for bad in (0, -5, 1.5, "1GB", True):
        with pytest.raises(ConfigError) as info:
            Engine(compile_text(KLEENE), max_memory=bad)  # type: ignore[arg-type]
        assert str(info.value) == f"max_memory must be a positive number of bytes or None, not {bad!r}"
    assert [size_text(n) for n in (640, 1500, 2_500_000, 3 * 10**9)] == ["640 B", "1.5 KB", "2.5 MB", "3.0 GB"]


def test_the_partial_matches_estimate_stops_an_explosive_pattern() -> None:
    engine = Engine(compile_text(KLEENE), max_partial_matches=None, max_memory=20_000_000)
    events = [Event("A", 0, 0, "a", {}), *(Event("B", i, i, f"b{i}", {}) for i in range(1, 61))]
    with pytest.raises(StateLimitError) as info:
        for e in events:
            engine.push(e)
    assert str(info.value) == (
        f"the run's memory budget of 20.0 MB is used up at event 'b16': 21.0 MB held (partial matches 21.0 MB); {HOW}"
    )


def test_the_events_a_huge_slack_holds_count() -> None:
    """Every event arrives before the one it follows: a slack of 10**9 holds them all."""
    engine = Engine(compile_text(KEYED), slack=10**9, max_memory=5_000_000)
    with pytest.raises(StateLimitError) as info:
        for i in range(100_000):
            engine.push(Event("A" if i % 2 == 0 else "B", 100_000 - i, i, f"e{i}", {"k": i // 2, "x": "abc"}))
    assert i == 10_019
    assert str(info.value) == (
        f"the run's memory budget of 5.0 MB is used up at event 'e10019': 5.0 MB held (events the slack holds 5.0 MB); {HOW}"
    )


def test_below_the_budget_nothing_changes() -> None:
    events = [Event("A" if i % 2 == 0 else "B", 1000 - i, i, f"e{i}", {"k": i // 4}) for i in range(1000)]
    free = [m.to_dict() for m in Engine(compile_text(KEYED), slack=10**9).run(events)]
    bounded = [m.to_dict() for m in Engine(compile_text(KEYED), slack=10**9, max_memory=10**8).run(events)]
    assert bounded == free and len(free) == 250


def test_the_peak_is_sampled_in_time_linear_in_the_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key per two events under a long window keeps every key live: sampling all of them at
    every sweep (every 100 events here) made the run quadratic in the keys (--slack runs, which
    the Python engine fires: 100k events 10 s, 200k 36 s, 400k 125 s). The peak is sampled
    once as many events as the last sample left keys have passed (geometric, x1.5 a sample
    here; and at the end), and is still exact here."""
    sampled: list[int] = []
    sample = MarkingCounters.sample

    def counted(self: MarkingCounters, states: list[dict[object, object]]) -> None:
        sampled.append(sum(map(len, states)))
        sample(self, states)  # type: ignore[arg-type]

    monkeypatch.setattr(MarkingCounters, "sample", counted)
    engine = Engine(compile_text(KEYED), count_marking=True, sweep_every=100)
    list(engine.run(Event("A", i, i, i, {"k": i // 2}) for i in range(10_000)))
    assert sampled == [50, 100, 150, 250, 400, 600, 900, 1350, 2050, 3100, 4650, 5000]
    assert engine.stats.peak_partial == 10_000
