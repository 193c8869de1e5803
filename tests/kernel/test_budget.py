"""The kernel's budgets hold within a batch (issue 43): the budget of live partial matches is
counted where the token arena allocates, the memory budget where an arena grows, so a run over
either stops at the event that went over it -- the same event, count and words as the Python
engine for the first -- not after the batch of 4,096 events it belongs to, which an explosive
pattern fills with gigabytes. And a partial match costs only the arrays its net reads."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from petricep.api import compile_text
from petricep.errors import StateLimitError
from petricep.events import Event
from petricep.kernel.engine import KernelEngine
from petricep.runtime.engine import Engine

KLEENE = "PATTERN p: SEQ(A a, B+ b[], C c) WITHIN 100000"
LINEAR = "PATTERN p: SEQ(A a, B b) WITHIN 1000000000"
HOW = "bound the pattern with LIMIT n PARTIAL MATCHES, or raise the budget (--max-partial-matches N, Engine(max_partial_matches=N))"


def kleene() -> list[Event]:
    """1 A, 60 B, 1 C: every subset of the Bs is a partial match (2**k after k Bs)."""
    return [Event("A", 0, 0, "a", {}), *(Event("B", i, i, f"b{i}", {}) for i in range(1, 61)), Event("C", 61, 61, "c", {})]


def linear(n: int = 10_000) -> list[Event]:
    return [Event("A", i, i, f"a{i}", {}) for i in range(n)]


def stop(engine: Engine | KernelEngine, events: list[Event]) -> str:
    with pytest.raises(StateLimitError) as info:
        for e in events:
            engine.push(e)
        engine.flush()
    return str(info.value)


ENGINES: dict[str, Callable[..., Engine | KernelEngine]] = {"kernel": KernelEngine, "python": Engine}


@pytest.mark.parametrize("tie", ["arrival", "strict"])
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_an_explosive_kleene_pattern_stops_at_the_event_over_the_budget(engine: str, tie: str) -> None:
    """All 62 events are one kernel batch: checked after it, the kernel held 2**60 partial
    matches' worth of allocations by then (23.7 GB before the OOM killer, issue 43)."""
    run = ENGINES[engine](compile_text(KLEENE), tie=tie, max_partial_matches=1000)
    assert stop(run, kleene()) == (
        f"pattern 'p': 1024 live partial matches, over the run's budget of 1000 (key None holds 1024) at event 'b10'; {HOW}"
    )


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_a_linear_pattern_stops_within_the_budgets_slack(engine: str) -> None:
    """A partial match per event: the run stops 1,014 events after the first (within 1/64 of
    the budget past it, as the engine counts), not at the end of the kernel's batch."""
    run = ENGINES[engine](compile_text(LINEAR), max_partial_matches=1000)
    assert stop(run, linear()) == (
        f"pattern 'p': 1015 live partial matches, over the run's budget of 1000 (key None holds 1015) at event 'a1014'; {HOW}"
    )


def test_the_fullest_key_and_its_pattern_are_named_as_the_engine_names_them() -> None:
    text = "PATTERN burst: SEQ(A+ a[], B b) WHERE [k] WITHIN 100000\nPATTERN calm: SEQ(C c, D d) WITHIN 5"
    events = [Event("C", i, i, f"c{i}", {"k": "x"}) for i in range(5)]
    events += [Event("A", 10 + i, 5 + i, f"a{i}", {"k": "hot" if i % 3 else "cold"}) for i in range(40)]
    texts = {name: stop(make(compile_text(text), max_partial_matches=500), events) for name, make in ENGINES.items()}
    assert texts["kernel"] == texts["python"]
    assert texts["kernel"].startswith(
        "pattern 'burst': 542 live partial matches, over the run's budget of 500 (key 'hot' holds 511) at event 'a13';"
    )


def test_the_matches_before_the_event_over_the_budget_are_returned() -> None:
    text = "PATTERN burst: SEQ(A+ a[], B b) WITHIN 100000"
    events = [Event("B" if i % 10 == 0 else "A", i, i, i, {}) for i in range(20)]
    run = KernelEngine(compile_text(text), max_partial_matches=1000)
    found = [m for e in events for m in run.push(e)] + run.drain()  # (the error comes with the next call)
    with pytest.raises(StateLimitError) as info:
        run.flush()
    assert len(found) == 511  # every non-empty subset of the As 1..9, before the stop at event 11
    assert str(info.value).startswith("pattern 'burst': 1023 live partial matches, over the run's budget of 1000 ")
    assert str(info.value).endswith(f"at event 11; {HOW}")


def test_the_memory_budget_stops_the_run_before_an_arena_grows_past_it() -> None:
    run = KernelEngine(compile_text(KLEENE), max_partial_matches=None, max_memory=20_000_000)
    assert stop(run, kleene()) == (
        "the run's memory budget of 20.0 MB is used up at event 'b18': 14.7 MB held (partial matches 10.5 MB, "
        "Kleene lists 3.8 MB, a step's new partial matches 262.1 KB, matches held 139.3 KB, events they bind 42.0 KB, "
        "per-key lists 52 B), 10.5 MB more asked for; bound the patterns with a window (WITHIN) or LIMIT n PARTIAL "
        "MATCHES, or raise the budget (--max-memory SIZE)"
    )
    held = run.kernel.memory()
    assert sum(held.values()) <= 20_000_000


def test_below_the_budgets_nothing_changes() -> None:
    net = compile_text(KLEENE)
    events = kleene()[:12] + [Event("C", 12, 12, "c", {})]
    bounded = KernelEngine(net, max_partial_matches=2048, max_memory=10**9)  # 2,048 live at the 11th B
    got = [m.to_dict() for e in events for m in bounded.push(e)] + [m.to_dict() for m in bounded.flush()]
    assert len(got) == 2**11 - 1
    assert got == [m.to_dict() for m in Engine(net, max_partial_matches=None).run(events)]


def test_a_partial_match_costs_the_arrays_its_net_reads() -> None:
    """A token of a net without negations, ON TIMEOUT or LIMIT: place and list link (2 x 4
    bytes), first / last time and position, contiguity key, users (6 x 8) and its 3 slots
    (3 x 8): 80 bytes, not the 108 the arrays of blocking, deadlines and quotas added; a
    Kleene list's element without aggregates 29 bytes (event, first, count, link, mark), not
    46 (an unused accumulator)."""
    run = KernelEngine(compile_text(KLEENE), max_partial_matches=None)
    assert run.kernel.memory()["partial matches"] == 1024 * 80
    for e in kleene()[:3]:
        run.push(e)
    run.drain()
    assert run.kernel.memory()["Kleene lists"] == 1024 * 29
    timed = KernelEngine(compile_text(KLEENE.replace("WITHIN 100000", "WITHIN 100000 LIMIT 5 PARTIAL MATCHES")))
    assert timed.kernel.memory()["partial matches"] == 1024 * (80 + 4 + 2 * 8)  # pins, extended, counted
