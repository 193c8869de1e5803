"""A net split between the compiled kernel and the Python engine (``petricep.api.split``):
the single Python engine's matches over the whole net, in its order (ids, start, end, attrs,
timeouts), and its accounting, on random mixes of patterns the kernel covers and patterns it
does not, event by event and as checked batches of columns."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from petricep import kernel
from petricep.api import compile_text, net_of
from petricep.api.split import SplitEngine
from petricep.compile.net import Net
from petricep.errors import EvaluationError, PetricepError, StateLimitError
from petricep.events import Event, EventColumns
from petricep.kernel.parts import KERNEL, PYTHON, SPLIT, SPLIT_PATTERNS, SPLIT_ROWS, plan_engines
from petricep.lang import ast as A
from petricep.lang.parser import parse_text
from petricep.lang.sql import parse_sql
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.strategies import pattern_text, patterns, streams

pytestmark = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built")

SETTINGS = settings(
    max_examples=examples(150, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
COUNTS = ("matches", "timeouts", "dropped")


def exact(matches: list[Any]) -> list[str]:
    """Matches as text, in order: ``1`` and ``1.0`` differ, as in the output files."""
    return [repr(m.to_dict()) for m in matches]


def copy(e: Event) -> Event:
    return Event(e.type, e.ts, e.pos, e.id, dict(e.attrs))


def columns_of(events: list[Event]) -> EventColumns:
    """Events as one checked batch of columns (as a reader hands the kernel)."""
    names = sorted({name for e in events for name in e.attrs})
    return EventColumns(
        [e.type for e in events], [e.ts for e in events], [e.pos for e in events], [e.id for e in events],
        {name: [e.attrs.get(name) for e in events] for name in names},
    )


def drive_events(engine: Any, events: list[Event]) -> list[Any]:
    out = []
    for e in events:
        out += engine.push(copy(e))
    return out + (engine.drain() if isinstance(engine, SplitEngine) else []) + engine.flush()


def drive_columns(engine: SplitEngine, events: list[Event], cuts: list[int]) -> list[Any]:
    """Batches of columns between ``cuts``, single events at every third batch."""
    out: list[Any] = []
    bounds = [0, *sorted(set(cuts)), len(events)]
    for n, (a, b) in enumerate(zip(bounds, bounds[1:])):
        if a >= b:
            continue
        if n % 3 == 2:
            for e in events[a:b]:
                out += engine.push(copy(e))
        else:
            out += engine.push_columns(columns_of(events[a:b]))
    return out + engine.drain() + engine.flush()


def counts(report: dict[str, Any]) -> dict[str, Any]:
    """What a split run must count as the single engine does."""
    return {
        "events": report["events"],
        "patterns": {name: {k: p[k] for k in COUNTS} for name, p in report["patterns"].items()},
        "alive": report["partial_matches"]["alive"],
        "dropped": report["partial_matches"]["dropped"],
    }


def same_as_python(net: Net, events: list[Event], tie: str = "arrival", cuts: list[int] | None = None) -> str:
    """Where ``net`` splits under ``tie``: the split run's matches and counts are the Python
    engine's, event by event and in batches of columns. Returns the plan's name."""
    plan = plan_engines(net, tie)
    if plan.kernel_net is None:  # one engine runs the whole net
        return plan.name
    single = Engine(net, tie=tie)
    want = exact(drive_events(single, events))
    split = SplitEngine(net, plan, tie)
    assert exact(drive_events(split, events)) == want
    assert counts(split.report()) == counts(single.report())
    assert list(split.report()["patterns"]) == list(single.report()["patterns"])
    batched = SplitEngine(net, plan, tie)
    assert exact(drive_columns(batched, events, cuts or [])) == want
    assert counts(batched.report()) == counts(single.report())
    return plan.name


BIG = 1152921504606846976  # an int constant no float64 holds: the kernel refuses the condition reading it


def uncovered(data: st.DataObject, name: str, types: tuple[str, ...]) -> A.Pattern:
    """A random pattern the kernel does not cover alone: any pattern (Kleene, negation), with
    ``v.x < BIG`` (true of every event of the streams) on a single variable."""
    p = data.draw(patterns(types=types, kleene=True, negation=True, max_kleene=1, returns=False, name=name))
    single = [r.var for r in A.events_of(p.structure) if not r.negated and not r.kleene]
    assume(bool(single))
    extra = A.Compare("<", A.Attr(data.draw(st.sampled_from(single)), "x"), A.Num(BIG))
    p = replace(p, conditions=(*p.conditions, extra))
    ok, _ = kernel.supports(build_net([p]), "arrival")
    assume(not ok)
    return p


TIES = st.sampled_from(("arrival", "strict"))


@SETTINGS
@given(st.data())
def test_random_mixes_give_the_python_engines_matches_in_order(data: st.DataObject) -> None:
    """One to three random patterns (any kind: the kernel covers some) beside one it does
    not cover, in random file order."""
    types = ("A", "B", "C", "D")
    pats = [
        data.draw(patterns(types=types, kleene=data.draw(st.booleans()), returns=False, name=f"p{i}"))
        for i in range(data.draw(st.integers(1, 3)))
    ]
    pats.insert(data.draw(st.integers(0, len(pats))), uncovered(data, "u", types))
    events = data.draw(streams(types=types, max_size=16))
    tie = data.draw(TIES)
    for p in pats:
        note(pattern_text(p))
    try:
        net = build_net(pats)
    except PetricepError:
        assume(False)
        raise
    cuts = data.draw(st.lists(st.integers(0, len(events)), max_size=4))
    name = same_as_python(net, events, tie, cuts)
    assert name in (SPLIT, PYTHON)


@SETTINGS
@given(st.data())
def test_random_mixes_with_returns_and_consumption(data: st.DataObject) -> None:
    """Mixes where patterns have RETURN (read by none), ON TIMEOUT or CONSUME: split only
    where every pattern orders its rounds alike, else run whole on the Python engine; either
    way the default run's matches are the Python engine's."""
    types = ("A", "B", "C")
    pats = [
        data.draw(patterns(types=types, kleene=False, returns=True, name=f"p{i}", max_vars=3))
        for i in range(data.draw(st.integers(1, 3)))
    ]
    u = uncovered(data, "u", types)
    pats.append(u)
    special = data.draw(st.booleans())
    consume = data.draw(st.sampled_from(("none", "all", "some")))
    fixed = []
    for p in pats:
        if p.returns is not None:
            p = A.Pattern(**{**p.__dict__, "returns": A.Return("R_" + p.name, p.returns.fields)})
        if consume == "all" or (consume == "some" and p.name == "u"):
            p = A.Pattern(**{**p.__dict__, "consume": ("*",)})
        if special and p.window is not None and p.timeout is None and p.name != "u" and data.draw(st.booleans()):
            p = A.Pattern(**{**p.__dict__, "timeout": A.Return("TO_" + p.name, ())})
        fixed.append(p)
    for p in fixed:
        note(pattern_text(p) + (f" CONSUME {p.consume}" if p.consume else "") + (" ON TIMEOUT" if p.timeout else ""))
    try:
        net = build_net(fixed)
    except PetricepError:
        assume(False)
        raise
    events = data.draw(streams(types=types, max_size=14))
    same_as_python(net, events, data.draw(TIES), data.draw(st.lists(st.integers(0, len(events)), max_size=3)))


def stream(rows: list[tuple[str, Any, dict[str, Any]]]) -> list[Event]:
    return [Event(t, ts, i, i, attrs) for i, (t, ts, attrs) in enumerate(rows)]


def random_stream(n: int, types: str = "ABCD", seed: int = 7) -> list[Event]:
    """``n`` seeded events: ties, ``x`` in 0..5, ``k`` in 0..2."""
    rnd = random.Random(seed)
    rows, ts = [], 0
    for _ in range(n):
        ts += rnd.choice((0, 0, 1, 2))
        rows.append((rnd.choice(types), ts, {"x": rnd.randint(0, 5), "k": rnd.randint(0, 2)}))
    return stream(rows)


KLEENE_NEG = "PATTERN kn: SEQ(A a, B+ b[], !(C n), D d) WHERE [k] AND b[i].x >= a.x AND n.x > 3 AND a.x < 1152921504606846976 WITHIN 6\n"
COVERED = (
    "PATTERN ab: SEQ(A a, B b) WHERE b.x > a.x WITHIN 4\n"
    "PATTERN cd: SEQ(C c, D d) WHERE d.x != c.x WITHIN 3\n"
)


def test_kleene_with_negation_beside_covered_patterns() -> None:
    net = compile_text(COVERED + KLEENE_NEG)
    plan = plan_engines(net)
    assert plan.name == SPLIT and plan.mode == SPLIT_PATTERNS
    assert [(p.patterns, p.engine, p.why) for p in plan.parts] == [
        (("ab", "cd"), "kernel", "covered"),  # (one shared net)
        (("kn",), "python", "integer constant 1152921504606846976 beyond float64 precision"),
    ]
    assert plan.why == "kernel for 'ab', 'cd'; python for 'kn' (integer constant 1152921504606846976 beyond float64 precision)"
    for tie in ("arrival", "strict"):
        assert same_as_python(net, random_stream(3000), tie, [100, 101, 2500]) == SPLIT


def test_end_negation_pending_at_the_end_of_the_stream() -> None:
    """Matches waiting for an end negation's window on both engines: emitted at the events
    closing them and at the end of the stream, merged by pattern."""
    text = (
        "PATTERN e1: SEQ(A a, B b, !(C c)) WHERE [k] WITHIN 5\n"
        + KLEENE_NEG.replace("SEQ(A a, B+ b[], !(C n), D d)", "SEQ(A a, B+ b[], D d, !(C n))")
        + "PATTERN e2: SEQ(B b, !(D d)) WITHIN 3 EVENTS\n"
    )
    net = compile_text(text)
    plan = plan_engines(net)
    assert plan.name == SPLIT and {p.engine for p in plan.parts} == {"kernel", "python"}
    events = random_stream(2000, seed=3)
    end = events[-1].ts
    tail = [("A", end, {"x": 0, "k": 1}), ("B", end, {"x": 4, "k": 1}), ("D", end + 1, {"x": 0, "k": 1})]
    events += [Event(t, ts, len(events) + i, len(events) + i, attrs) for i, (t, ts, attrs) in enumerate(tail)]
    assert same_as_python(net, events) == SPLIT
    single = Engine(net)
    for e in events:
        single.push(copy(e))
    assert {m.pattern for m in single.flush()} >= {"e1", "kn"}  # something was pending at the end


def test_strict_tie_rule() -> None:
    net = compile_text(COVERED + KLEENE_NEG + "PATTERN eq: SEQ(A a, A b) WHERE b.x = a.x WITHIN 2\n")
    rows = [("A", t // 3, {"x": t % 2, "k": t % 3}) for t in range(40)] + [("B", 14, {"x": 5, "k": 0})]
    events = sorted(stream(rows), key=lambda e: e.ts)
    events = [Event(e.type, e.ts, i, i, e.attrs) for i, e in enumerate(events)]
    assert same_as_python(net, events, "strict") == SPLIT
    assert same_as_python(net, random_stream(1500, seed=11), "strict", [7]) == SPLIT


def test_tie_rule_either_runs_whole_on_the_python_engine() -> None:
    plan = plan_engines(compile_text(COVERED + KLEENE_NEG), "either")
    assert plan.name == PYTHON
    assert plan.why == (
        "integer constant 1152921504606846976 beyond float64 precision; "
        "not split: the tie rule 'either' matches timestamp groups as a whole"
    )


SQL = """SELECT * FROM A MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts
    MEASURES FIRST(UP.x) AS lo, LAST(UP.x) AS hi
    ONE ROW PER MATCH
    AFTER MATCH SKIP PAST LAST ROW
    PATTERN (UP{2,})
    DEFINE UP AS UP.x >= PREV(UP.x)
) q;"""


def sql_net(text: str) -> Net:
    return net_of([parse_text(text, "<p>"), parse_sql(SQL, "<q>")])


def test_sql_query_and_patterns_in_one_run() -> None:
    """The kernel runs every pattern, its row matcher the query, in one KernelEngine (no split:
    tests/kernel/test_sql_beside.py). A query the row matcher would not cover runs on the
    Python engine beside the kernel's patterns, saying why."""
    net = sql_net(COVERED)
    plan = plan_engines(net)
    assert plan.name == KERNEL and plan.kernel_net is None and plan.rows_on_kernel
    assert plan.why == "covered"
    events = random_stream(3000, types="ABCD", seed=2)
    refused = "SQL query 'q': refused for this test"
    with pytest.MonkeyPatch.context() as mp:  # (the row matcher covers every query otherwise)
        mp.setattr("petricep.kernel.parts.rows_refusal", lambda net, tie="arrival": refused if net.rows else None)
        mp.setattr("petricep.kernel.lowering.rows_refusal", lambda net, tie="arrival": refused if net.rows else None)
        plan = plan_engines(net)
        assert plan.name == SPLIT and plan.mode == SPLIT_ROWS and not plan.rows_on_kernel
        assert plan.why == f"kernel for 'ab', 'cd'; python for 'q' ({refused})"
        assert same_as_python(net, events, "arrival", [50, 1000]) == SPLIT
    chained = sql_net(
        "PATTERN up: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 4 RETURN Up(k = a.k, x = b.x)\n"
        "PATTERN twice: SEQ(Up u, Up v) WHERE [k] WITHIN 6\n"
        "PATTERN lone: SEQ(C c, D d) WITHIN 2 ON TIMEOUT RETURN Lone(x = c.x)\n"
        "CONFLICT g: up, twice\n"
    )
    assert plan_engines(chained).name == KERNEL and plan_engines(chained).kernel_net is None


CHAIN = (
    "PATTERN up: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 4 RETURN Up(k = a.k, x = b.x)\n"
    "PATTERN runs: SEQ(Up u, Up+ v[], !(C n)) WHERE [k] AND v[i].x >= u.x WITHIN 8\n"
)


def test_a_producer_whose_consumer_is_not_covered_runs_with_it_on_python() -> None:
    """The producer and its consumer are one component: both on the Python engine, where the
    consumer's rounds come; beside covered patterns that cannot merge exactly, so the run is
    whole on the Python engine, saying why; beside SQL only, the whole run is Python's."""
    net = compile_text(COVERED + CHAIN)
    plan = plan_engines(net)
    assert plan.name == PYTHON
    assert plan.why.endswith(
        "; not split: pattern 'runs' reads composite events another pattern returns: the matches they "
        "complete at an event come in later rounds, which cannot be told apart across two engines"
    )
    assert plan_engines(sql_net(CHAIN)).why == kernel.supports(sql_net(CHAIN))[1]


def test_a_consumption_domain_spanning_covered_and_uncovered_patterns() -> None:
    """A CONFLICT group of a covered and an uncovered pattern is one component (Python); the
    other patterns split from it only where they consume too."""
    group = KLEENE_NEG + "PATTERN big: SEQ(A a, D d) WHERE [k] WITHIN 5 CONSUME ALL\nCONFLICT g: kn, big\n"
    net = compile_text(COVERED + group)
    plan = plan_engines(net)
    assert plan.name == PYTHON and "not split: pattern 'kn' has RETURN or consumption and 'ab' has neither" in plan.why
    consuming = COVERED.replace("WITHIN 4", "WITHIN 4 CONSUME ALL").replace("WITHIN 3", "WITHIN 3 CONSUME c")
    net = compile_text(consuming + group)
    plan = plan_engines(net)
    assert plan.name == SPLIT
    assert [(p.patterns, p.engine) for p in plan.parts] == [(("ab", "cd"), "kernel"), (("kn", "big"), "python")]
    for tie in ("arrival", "strict"):
        assert same_as_python(net, random_stream(3000, seed=13), tie, [17, 18]) == SPLIT


def test_on_timeout_on_both_engines() -> None:
    """Every pattern with RETURN (some with ON TIMEOUT too): rounds ordered by positions on
    both engines, timeouts after their pattern's matches at one event. A pattern with ON
    TIMEOUT and no RETURN orders only the rounds where it times out: no split beside it."""
    text = (
        "PATTERN t1: SEQ(A a, B b) WHERE [k] WITHIN 3 RETURN Done1(x = a.x) ON TIMEOUT RETURN Late1(x = a.x)\n"
        "PATTERN t2: SEQ(C c, D d) WITHIN 2 RETURN Done2(x = d.x)\n"
        "PATTERN kt: SEQ(A a, B+ b[], !(C n), D d) WHERE [k] AND b[i].x >= a.x WITHIN 6 RETURN Done3(x = a.x) "
        "ON TIMEOUT RETURN Late2(x = a.x)\n"
    )
    alone = compile_text(text.replace("RETURN Done3(x = a.x) ", ""))
    assert plan_engines(alone).why.endswith(
        "; not split: pattern 'kt' has ON TIMEOUT: the matches emitted at one event are ordered by their "
        "positions only where a timeout is emitted there"
    )
    net = compile_text(text)
    plan = plan_engines(net)
    assert plan.name == SPLIT and plan.mode == SPLIT_PATTERNS
    events = random_stream(3000, seed=17)
    assert same_as_python(net, events, "arrival", [900]) == SPLIT
    single = Engine(net)
    assert any(m.timeout for m in drive_events(single, events))


def failing(events: list[Event], at: int, field: str) -> list[Event]:
    """``events`` where the event at ``at`` holds text in ``field`` (compared with numbers)."""
    out = [copy(e) for e in events]
    for e in out:
        e.attrs["y"] = e.attrs["z"] = 1
    out[at].attrs[field] = "text"
    return out


def until_error(feed: Any, engine: Any, events: list[Event]) -> tuple[list[Any], Exception]:
    """The matches ``feed`` gets from ``engine`` until an error, and the error."""
    out: list[Any] = []
    try:
        for part in feed(engine, events):
            out += part
    except (EvaluationError, StateLimitError) as exc:
        return out, exc
    raise AssertionError("no error")


def by_event(engine: Any, events: list[Event]) -> Any:
    for e in events:
        yield engine.push(copy(e))
    yield engine.drain() if isinstance(engine, SplitEngine) else []
    yield engine.flush()


def by_batch(engine: SplitEngine, events: list[Event]) -> Any:
    for a in range(0, len(events), 97):
        yield engine.push_columns(columns_of(events[a : a + 97]))
    yield engine.drain()
    yield engine.flush()


@pytest.mark.parametrize(("field", "at"), [("y", 150), ("z", 150), ("y", 400), ("z", 97), ("y", 96)])
def test_an_error_stops_at_the_first_failing_event_of_either_engine(field: str, at: int) -> None:
    """A condition failing on one engine (``y``: the kernel's 'ab', ``z``: the Python
    engine's 'kn'): the matches of both engines before the failing event, then the error
    naming it, as the single engine gives them."""
    text = COVERED.replace("b.x > a.x", "b.x > a.x AND b.y < 9") + KLEENE_NEG.replace("n.x > 3", "n.x > 3 AND n.z < 9")
    net = compile_text(text)
    plan = plan_engines(net)
    assert plan.name == SPLIT
    events = random_stream(600, seed=19)
    events[at] = Event("B" if field == "y" else "C", events[at].ts, at, at, dict(events[at].attrs))
    events = failing(events, at, field)
    want, want_err = until_error(by_event, Engine(net), events)
    assert want
    for feed in (by_event, by_batch):
        got, err = until_error(feed, SplitEngine(net, plan), events)
        assert exact(got) == exact(want)
        assert type(err) is type(want_err) and str(err) == str(want_err) and err.event.pos == at  # type: ignore[attr-defined]


def test_limits_beside_a_pattern_sharing_their_places() -> None:
    """LIMIT n PARTIAL MATCHES on the kernel's side, in a shared net whose members differ from
    the whole net's: the same drops, the same matches."""
    text = (
        "PATTERN ab: SEQ(A a, B b, C c) WHERE [k] AND b.x > a.x WITHIN 8 LIMIT 2 PARTIAL MATCHES DROP OLDEST\n"
        "PATTERN ab2: SEQ(A a, B b, D d) WHERE [k] AND b.x > a.x WITHIN 8\n"
        "PATTERN rj: SEQ(A a, C c) WITHIN 5 LIMIT 3 PARTIAL MATCHES REJECT NEW\n" + KLEENE_NEG
    )
    net = compile_text(text)
    for tie in ("arrival", "strict"):
        for seed in range(3):
            assert same_as_python(net, random_stream(2000, seed=seed), tie, [5, 700]) == SPLIT


def test_a_shared_net_runs_whole_on_one_engine() -> None:
    """``p0`` shares a net with the uncovered ``u``: at one event the Python engine emits p0's
    matches in the order that shared net finds them (``c`` before ``b`` here, ``b`` before
    ``c`` with p0 alone), so p0 runs beside u; ``p1``, in a net of its own, on the kernel."""
    text = (
        "PATTERN u: SEQ(!(A e), AND(A+ a[], A b, A c), A d) WHERE skip-till-next-match AND [k] WITHIN 1 EVENTS\n"
        "PATTERN p0: OR(A+ a[], OR(A+ b[], A c)) WHERE skip-till-next-match AND [k] WITHIN 1 EVENTS\n"
        "PATTERN p1: SEQ(A a, A b)\n"
    )
    net = compile_text(text)
    plan = plan_engines(net)
    assert [(p.patterns, p.engine) for p in plan.parts] == [(("u", "p0"), "python"), (("p1",), "kernel")]
    events = [Event("A", 0, 0, 0, {"x": 0, "k": 0}), Event("A", 1, 1, 1, {"x": 0, "k": 0})]
    engine = Engine(net)
    got = [m.to_dict()["ids"] for e in events for m in engine.push(e)]
    assert got[:3] == [{"a": [0]}, {"c": 0}, {"b": [0]}]
    assert same_as_python(net, events) == SPLIT


def test_a_pattern_merging_shifted_consumes_its_own_variables_on_the_python_engine() -> None:
    """``u``'s slots are shifted in the net it shares with ``p1``; its sub-net for the Python
    engine, compiled again, consumes ``a``, ``b`` and ``c`` at its own slots (once, the sub-net
    took the shifted slots and shifted them again: ``u`` consumed nothing it bound, and
    emitted a second match with the consumed ``a``)."""
    text = (
        "PATTERN p0: SEQ(A a, A b) CONSUME ALL\n"
        "PATTERN p1: AND(A a, B b) WITHIN 1 EVENTS CONSUME ALL\n"
        "PATTERN u: SEQ(!(A d), AND(B a, A b), B+ c[]) WHERE b.x < 1152921504606846976 WITHIN 4 EVENTS CONSUME ALL\n"
    )
    net = compile_text(text)
    plan = plan_engines(net)
    assert [(p.patterns, p.engine) for p in plan.parts] == [(("p0",), "kernel"), (("p1", "u"), "python")]
    events = stream([(t, 0, {"x": 0, "k": 0}) for t in "AABBB"])
    engine = Engine(net)
    got = [m.to_dict()["ids"] for e in events for m in engine.push(e)]
    assert got == [{"a": 0, "b": 1}, {"a": 2, "b": 0, "c": [3]}]
    assert same_as_python(net, events) == SPLIT
