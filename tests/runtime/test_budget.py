"""The run's memory budget for partial matches (docs/SEMANTICS.md "Memory budget"): an
explosive pattern stops with a typed error naming pattern, key and the option, before the
machine runs out; below the budget, the check changes nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import ConfigError, StateLimitError
from petricep.events import Event
from petricep.merge import build_net
from petricep.runtime.engine import MAX_PARTIAL_MATCHES, Engine
from tests.budget import examples
from tests.runtime.test_differential import fresh
from tests.strategies import pattern_text, patterns, streams

SETTINGS = settings(
    max_examples=examples(300, "PETRICEP_EXAMPLES"), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
EXPLOSIVE = "PATTERN burst: SEQ(A+ a[], B b) WHERE [k] WITHIN 100000"


def stream(n: int, key: str = "k1") -> list[Event]:
    return [Event("A" if i % 10 else "B", i, i, f"e{i}", {"k": key}) for i in range(n)]


@pytest.mark.parametrize("tie", ["arrival", "strict", "either"])
def test_explosive_kleene_stops_with_a_typed_error(tie: str) -> None:
    engine = Engine(compile_text(EXPLOSIVE), tie=tie, max_partial_matches=1000)
    with pytest.raises(StateLimitError) as info:
        for e in fresh(stream(10_000)):
            engine.push(e)
    at = "e11"  # 2**10 - 1 partial matches of a[] after ten A events (e0 and e10 are Bs)
    assert str(info.value) == (
        f"pattern 'burst': 1023 live partial matches, over the run's budget of 1000 (key 'k1' holds 1023) at event "
        f"'{at}'; bound the pattern with LIMIT n PARTIAL MATCHES, or raise the budget (--max-partial-matches N, Engine(max_partial_matches=N))"
    )


def test_the_budget_is_per_net_and_names_the_fullest_key() -> None:
    text = EXPLOSIVE + "\nPATTERN calm: SEQ(C c, D d) WITHIN 5"
    events = [Event("C", i, i, f"c{i}", {"k": "x"}) for i in range(5)]
    events += [Event("A", 10 + i, 5 + i, f"a{i}", {"k": "hot" if i % 3 else "cold"}) for i in range(40)]
    engine = Engine(compile_text(text), max_partial_matches=500)
    with pytest.raises(StateLimitError) as info:
        list(engine.run(fresh(events)))
    assert str(info.value).startswith(
        "pattern 'burst': 542 live partial matches, over the run's budget of 500 (key 'hot' holds 511) at event 'a13';"
    )


def test_limit_keeps_the_same_pattern_under_budget() -> None:
    limited = EXPLOSIVE.replace("WITHIN 100000", "WITHIN 100000 LIMIT 50 PARTIAL MATCHES")
    engine = Engine(compile_text(limited), max_partial_matches=1000)
    got = list(engine.run(fresh(stream(300))))
    assert len(got) == 1450 and engine.report()["partial_matches"]["dropped"] > 0


def test_budget_option_is_checked() -> None:
    net = compile_text(EXPLOSIVE)
    assert Engine(net).max_partial_matches == MAX_PARTIAL_MATCHES == 5_000_000
    assert Engine(net, max_partial_matches=None).max_partial_matches is None
    for bad in (0, -1, 1.5, "10", True):
        with pytest.raises(ConfigError) as info:
            Engine(net, max_partial_matches=bad)  # type: ignore[arg-type]
        assert str(info.value) == f"max_partial_matches must be a positive integer or None, not {bad!r}"


def outcome(engine: Engine, events: list[Event]) -> list[str] | str:
    try:
        return [json.dumps(m.to_dict(), sort_keys=True) for m in engine.run(fresh(events))]
    except StateLimitError:
        return "over budget"


@SETTINGS
@given(st.data())
def test_checking_the_budget_changes_no_match(data: st.DataObject) -> None:
    """A small budget either stops the run or gives exactly the matches of a run without one
    (its checks sweep at other times than the periodic sweep)."""
    tie = data.draw(st.sampled_from(["arrival", "strict", "either"]))
    pattern = data.draw(patterns(strategies=["skip-till-any-match"]) if tie == "either" else patterns())
    events = data.draw(streams(max_size=14))
    budget = data.draw(st.integers(1, 12))
    note(pattern_text(pattern))
    net = build_net([pattern])
    unbounded = outcome(Engine(net, tie=tie, max_partial_matches=None, sweep_every=1000), events)
    bounded = outcome(Engine(net, tie=tie, max_partial_matches=budget, sweep_every=1000), events)
    assert bounded in (unbounded, "over budget")
