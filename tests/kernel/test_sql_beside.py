"""SQL ``MATCH_RECOGNIZE`` queries beside patterns in one :class:`KernelEngine` run (the patterns
on the firing kernel, the queries on its row matcher, :mod:`petricep.kernel.sqlside`), under the
tie rules arrival, strict and either: the Python engine's matches exactly (ids, start, end,
attrs, output rows, in its order) and its counts, event by event, in batches of columns, as
record-batch chunks and as (match, position) pairs; its errors after the same matches; the
chooser picks the kernel for the whole net (no split), and ``petricep run`` says so."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from petricep import kernel
from petricep.api import net_of
from petricep.cli import main
from petricep.compile.net import Net
from petricep.errors import EvaluationError, PetricepError, StateLimitError
from petricep.events import Event, EventColumns
from petricep.kernel.choice import Choice, Options, choose, matcher
from petricep.kernel.engine import KernelEngine
from petricep.lang import ast as A
from petricep.lang.parser import parse_text
from petricep.lang.sql import parse_sql
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from petricep.runtime.match import Match
from tests.budget import examples
from tests.sql.test_row_reference import patterns as row_patterns
from tests.sql.test_row_reference import sql_of, vars_of
from tests.strategies import negation_seqs, pattern_text, patterns, streams, tied_streams

pytestmark = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built")

SETTINGS = settings(
    max_examples=examples(100, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TIES = ("arrival", "strict", "either")
TYPES = ("A", "B", "C")
COUNTS = ("matches", "timeouts", "dropped")


# ----------------------------------------------------------------------------- driving


def copy(e: Event) -> Event:
    return Event(e.type, e.ts, e.pos, e.id, dict(e.attrs))


def columns_of(events: list[Event]) -> EventColumns:
    names = sorted({name for e in events for name in e.attrs})
    return EventColumns(
        [e.type for e in events], [e.ts for e in events], [e.pos for e in events], [e.id for e in events],
        {name: [e.attrs.get(name) for e in events] for name in names},
    )


def by_event(engine: Any, events: list[Event], out: list[Any]) -> None:
    for e in events:
        out += engine.push(copy(e))
    out += engine.drain()
    out += engine.flush()


def by_columns(engine: KernelEngine, events: list[Event], out: list[Any], cuts: list[int]) -> None:
    """Batches of columns between ``cuts``, single events at every third batch."""
    bounds = [0, *sorted(set(cuts)), len(events)]
    for n, (a, b) in enumerate(zip(bounds, bounds[1:])):
        if n % 3 == 2:
            for e in events[a:b]:
                out += engine.push(copy(e))
        elif a < b:
            out += engine.push_columns(columns_of(events[a:b]))
    out += engine.drain()
    out += engine.flush()


def by_chunks(engine: KernelEngine, events: list[Event], out: list[Any], cuts: list[int]) -> None:
    """As ``petricep run`` writes a match file: the chunks of a slice of a batch at a time
    (beside SQL queries lists of Match objects: no record batch holds both)."""
    bounds = [0, *sorted(set(cuts)), len(events)]
    for a, b in zip(bounds, bounds[1:]):
        if a < b:
            for chunk in engine.push_columns_stream(columns_of(events[a:b])):
                assert isinstance(chunk, list)
                out += chunk
    for chunk in engine.drain_chunks() + engine.flush_chunks():
        assert isinstance(chunk, list)
        out += chunk


def by_pairs(engine: KernelEngine, events: list[Event], out: list[Any]) -> None:
    """(match, emitting position) as a history runner takes them."""
    for e in events:
        out += engine.push_pairs(copy(e))
    out += engine.drain_pairs()
    out += engine.flush_pairs()


def python_pairs(engine: Engine, events: list[Event], out: list[Any]) -> None:
    for e in events:
        out += [(m, e.pos) for m in engine.push(copy(e))]
    out += [(m, -1) for m in engine.flush()]


def outcome(drive: Any, engine: Any, events: list[Event], *args: Any) -> tuple[list[Any], str | None]:
    """What ``drive`` gets from ``engine`` (matches as text, pairs with their positions) until
    the end or an error, and the error's text (None: none)."""
    out: list[Any] = []
    error = None
    try:
        drive(engine, events, out, *args)
    except (EvaluationError, StateLimitError) as exc:
        out += getattr(exc, "pairs", [])  # (the pairs API: those before the failing event, with the error)
        error = f"{type(exc).__name__}: {exc}"
    return [(repr(x[0].to_dict()), x[1]) if isinstance(x, tuple) else repr(x.to_dict()) for x in out], error


def counts(report: dict[str, Any]) -> dict[str, Any]:
    """What the kernel must count as the Python engine does (the peak is sampled apart)."""
    return {
        "events": report["events"],
        "patterns": {name: {k: p[k] for k in COUNTS} for name, p in report["patterns"].items()},
        "queries": {name: (p["alive"], p["rows"], p["table"]) for name, p in report["patterns"].items() if "rows" in p},
        "alive": report["partial_matches"]["alive"],
        "dropped": report["partial_matches"]["dropped"],
    }


def same_as_python(net: Net, events: list[Event], tie: str, cuts: list[int], batch: int = 4096) -> list[str]:
    """The whole net on one KernelEngine, the chooser's: the Python engine's matches (and
    error, if one stops the run) and counts, by event, by columns (slices of 3 matches), as
    chunks and as pairs. Returns the matches."""
    choice = choose(net, Options(tie))
    assert choice == Choice("kernel", "covered")
    single = Engine(net, tie=tie)
    want = outcome(by_event, single, events)
    engine = matcher(choice, net, Options(tie))
    assert isinstance(engine, KernelEngine)
    assert outcome(by_event, engine, events) == want
    if want[1] is None:
        assert counts(engine.report()) == counts(single.report())
        assert list(engine.report()["patterns"]) == list(single.report()["patterns"])
    batched = KernelEngine(net, tie=tie, batch=batch)
    batched.max_out = 3
    assert outcome(by_columns, batched, events, cuts) == want
    if want[1] is None:
        assert counts(batched.report()) == counts(single.report())
    assert outcome(by_chunks, KernelEngine(net, tie=tie, batch=batch), events, cuts) == want
    pairs = outcome(python_pairs, Engine(net, tie=tie), events)
    assert outcome(by_pairs, KernelEngine(net, tie=tie, batch=batch), events) == pairs
    return want[0]


# ----------------------------------------------------------------------------- random queries

# DEFINE conditions over the streams' fields (x in 0..5, k in 0..2), for variable V: one row and
# PREV (the bytecode), the rows mapped so far (the DEFINE's Python closure)
DEFINES = (
    "{v}.x > {n}",
    "{v}.x < PREV({v}.x)",
    "x >= PREV(x, 2)",
    "x = {n} OR k = {m}",
    "ABS(x - PREV(x)) <= {m}",
    "PREV(x) IS NULL OR x <> PREV(x)",
    "LAST({v}.x, 1) IS NULL OR {v}.x > LAST({v}.x, 1)",
    "COUNT({v}.*) <= {m} + 1",
)
MEASURES = "MATCH_NUMBER() AS mn, CLASSIFIER() AS cls, COUNT(*) AS n, FIRST(x) AS fx, LAST({v}.x) AS la"
SKIPS = ("PAST LAST ROW", "TO NEXT ROW", "TO LAST {v}")


@st.composite
def queries(draw: Any, types: tuple[str, ...] = TYPES, name: str = "q") -> str:
    """A random query over one of the stream's types: a row pattern, DEFINEs, PARTITION BY k
    or not, ONE / ALL ROWS PER MATCH, AFTER MATCH SKIP, WITHIN a time or a count or none."""
    pattern = draw(row_patterns)
    used = sorted(vars_of(pattern))
    defines = [
        f"{v} AS " + draw(st.sampled_from(DEFINES)).format(v=v, n=draw(st.integers(0, 4)), m=draw(st.integers(0, 2)))
        for v in used
        if draw(st.booleans())
    ]
    first = used[0]
    skip = draw(st.sampled_from(SKIPS)).format(v=draw(st.sampled_from(used)))
    within = draw(st.sampled_from(("", "WITHIN {w} ", "WITHIN {w} EVENTS "))).format(w=draw(st.integers(1, 6)))
    return (
        f"SELECT * FROM {draw(st.sampled_from(types))} MATCH_RECOGNIZE ("
        + ("PARTITION BY k ORDER BY ts " if draw(st.booleans()) else "")
        + f"MEASURES {MEASURES.format(v=first)} {draw(st.sampled_from(('ONE ROW', 'ALL ROWS')))} PER MATCH "
        f"AFTER MATCH SKIP {skip} PATTERN ({sql_of(pattern)}) "
        + (f"DEFINE {', '.join(defines)} " if defines else "")
        + within
        + f") AS {name}"
    )


def mixed_net(pats: list[A.Pattern], texts: list[str]) -> Net:
    """The patterns and the queries merged into one net (a query the parser or compiler
    refuses, or a pattern set the merge refuses, is no case)."""
    try:
        found = [q for text in texts for q in parse_sql(text + ";", "<q>").queries]
        return build_net(pats, queries=found)
    except PetricepError:
        assume(False)
        raise


def beside_queries(data: st.DataObject, pats: list[A.Pattern], tie: str) -> Net:
    """The patterns beside one or two random queries, as one net the kernel covers under ``tie``."""
    texts = [data.draw(queries(name=f"q{i}")) for i in range(data.draw(st.integers(1, 2)))]
    for p in pats:
        note(pattern_text(p))
    for text in texts:
        note(text)
    net = mixed_net(pats, texts)
    assume(kernel.supports(net, tie)[0])
    return net


def draw_case(data: st.DataObject, tie: str, merged: bool) -> tuple[Net, list[Event], list[int]]:
    """One or (``merged``) two or three random patterns the kernel covers under ``tie`` beside
    one or two random queries, and a stream (with ties; in timestamp groups for ``either``)."""
    stam = ("skip-till-any-match",) if tie == "either" else ("skip-till-any-match", "skip-till-next-match", "strict-contiguity")
    npat = data.draw(st.integers(2, 3)) if merged else 1
    kleene = data.draw(st.booleans())
    pats = [
        data.draw(patterns(types=TYPES, strategies=stam, kleene=kleene, returns=False, name=f"p{i}", max_depth=1 + (not merged)))
        for i in range(npat)
    ]
    net = beside_queries(data, pats, tie)
    events = data.draw(tied_streams(types=TYPES, max_size=14) if tie == "either" and data.draw(st.booleans()) else streams(types=TYPES, max_size=14))
    note(f"tie={tie}\n" + "\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    return net, events, data.draw(st.lists(st.integers(0, len(events)), max_size=3))


@SETTINGS
@pytest.mark.parametrize("tie", TIES)
@given(data=st.data())
def test_a_pattern_beside_queries(tie: str, data: st.DataObject) -> None:
    net, events, cuts = draw_case(data, tie, merged=False)
    same_as_python(net, events, tie, cuts, batch=data.draw(st.sampled_from((1, 3, 4096))))


@SETTINGS
@pytest.mark.parametrize("tie", TIES)
@given(data=st.data())
def test_merged_patterns_beside_queries(tie: str, data: st.DataObject) -> None:
    net, events, cuts = draw_case(data, tie, merged=True)
    same_as_python(net, events, tie, cuts, batch=data.draw(st.sampled_from((2, 4096))))


# ----------------------------------------------------------------------------- hand cases

PATTERNS = "PATTERN ab: SEQ(A a, B b) WHERE b.x > a.x WITHIN 3\n"
RISE = """SELECT * FROM A MATCH_RECOGNIZE (
    MEASURES FIRST(UP.x) AS lo, LAST(UP.x) AS hi
    ONE ROW PER MATCH
    AFTER MATCH SKIP PAST LAST ROW
    PATTERN (UP{2,})
    DEFINE UP AS UP.x >= PREV(UP.x)
) AS rise;"""


def hand_net() -> Net:
    return net_of([parse_text(PATTERNS, "<p>"), parse_sql(RISE, "<q>")])


def hand_events() -> list[Event]:
    rows = [("A", 1, 1), ("B", 1, 2), ("A", 2, 3), ("A", 3, 4), ("B", 3, 6), ("A", 4, 0), ("B", 5, 1)]
    return [Event(t, ts, i, i, {"x": x}) for i, (t, ts, x) in enumerate(rows)]


@pytest.mark.parametrize(
    ("tie", "want"),
    [
        # ab's matches at the event completing them; rise's (A2, A3) at A5, which ends its run
        ("arrival", [("ab", {"a": 0, "b": 1}, 1), ("ab", {"a": 0, "b": 4}, 4), ("ab", {"a": 2, "b": 4}, 4),
                     ("ab", {"a": 3, "b": 4}, 4), ("rise", {"UP": [2, 3]}, 5), ("ab", {"a": 5, "b": 6}, 6)]),
        # A0 and B1 tie, A3 and B4 tie: not after
        ("strict", [("ab", {"a": 0, "b": 4}, 4), ("ab", {"a": 2, "b": 4}, 4), ("rise", {"UP": [2, 3]}, 5),
                    ("ab", {"a": 5, "b": 6}, 6)]),
        # a timestamp group's matches when the next timestamp comes: A2 ends group 1, A5 group
        # 3 (its matches before rise's match at A5 itself), the end of the stream the last
        ("either", [("ab", {"a": 0, "b": 1}, 2), ("ab", {"a": 0, "b": 4}, 5), ("ab", {"a": 2, "b": 4}, 5),
                    ("ab", {"a": 3, "b": 4}, 5), ("rise", {"UP": [2, 3]}, 5), ("ab", {"a": 5, "b": 6}, -1)]),
    ],
)
def test_hand_case_ids_and_order(tie: str, want: list[tuple[str, dict[str, Any], int]]) -> None:
    net, events = hand_net(), hand_events()
    same_as_python(net, events, tie, [3], batch=2)
    found: list[Match] = []
    by_event(KernelEngine(net, tie=tie, batch=2), events, found)
    assert [(m.pattern, m.ids) for m in found] == [(p, ids) for p, ids, _ in want]
    paired: list[tuple[Match, int]] = []
    by_pairs(KernelEngine(net, tie=tie), events, paired)
    assert [(m.pattern, m.ids, at) for m, at in paired] == want
    assert [m.attrs for m in found if m.pattern == "rise"] == [{"lo": 3, "hi": 4}]


def until_error(feed: Any, engine: Any, events: list[Event]) -> tuple[list[str], Exception, int]:
    """The matches until the error, the error, and the position it names: its event's, or
    (the Python engine) that of the event pushed when it was raised."""
    out: list[Match] = []
    pushed = [-1]
    try:
        for part in feed(engine, events, pushed):
            out += part
    except (EvaluationError, StateLimitError) as exc:
        failed = getattr(exc, "event", None)
        return [repr(m.to_dict()) for m in out], exc, failed.pos if failed is not None else pushed[0]
    raise AssertionError("no error")


def events_one_by_one(engine: Any, events: list[Event], pushed: list[int]) -> Any:
    for e in events:
        pushed[0] = e.pos
        yield engine.push(copy(e))
    pushed[0] = -1
    yield engine.drain()
    yield engine.flush()


def events_in_batches(engine: KernelEngine, events: list[Event], pushed: list[int]) -> Any:
    for a in range(0, len(events), 5):
        yield engine.push_columns(columns_of(events[a : a + 5]))
    yield engine.drain()
    yield engine.flush()


@pytest.mark.parametrize("tie", TIES)
@pytest.mark.parametrize(("at", "field"), [(9, "y"), (9, "z"), (12, "y"), (13, "z"), (2, "z")])
def test_an_error_stops_at_the_first_failing_event(tie: str, at: int, field: str) -> None:
    """A condition failing on the kernel (``y``: ab's) or in a query (``z``: rise's DEFINE):
    the matches before the failing event, then the error naming it, as the Python engine
    gives them (under ``either`` a pattern's error comes when its timestamp group is matched,
    at the next timestamp's event, whose own queries' matches are lost with it)."""
    text = PATTERNS.replace("b.x > a.x", "b.x > a.x AND b.y < 9")
    net = net_of([parse_text(text, "<p>"), parse_sql(RISE.replace("PREV(UP.x)", "PREV(UP.x) AND UP.z < 9"), "<q>")])
    rows = [("A" if i % 3 else "B", i // 2, i % 5) for i in range(20)]
    events = [Event(t, ts, i, i, {"x": x, "y": 1, "z": 1}) for i, (t, ts, x) in enumerate(rows)]
    events[at] = Event("B" if field == "y" else "A", events[at].ts, at, at, {"x": 4, "y": 1, "z": 1, field: "text"})
    want, want_err, where = until_error(events_one_by_one, Engine(net, tie=tie), events)
    group_ends = next(e.pos for e in events if e.ts > events[at].ts)  # (the next timestamp's first event)
    assert where == (group_ends if tie == "either" and field == "y" else at)
    assert at < 9 or (any("'rise'" in m for m in want) and any("'ab'" in m for m in want))
    for feed in (events_one_by_one, events_in_batches):
        for batch in (1, 4, 4096):
            got, err, pos = until_error(feed, KernelEngine(net, tie=tie, batch=batch), events)
            assert got == want
            assert type(err) is type(want_err) and str(err) == str(want_err)
            assert pos == where


def test_no_snapshot_beside_queries() -> None:
    from petricep.errors import SnapshotError

    engine = KernelEngine(hand_net())
    with pytest.raises(SnapshotError, match="SQL queries"):
        engine.snapshot()


def test_the_run_says_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pattern file and a SQL file in one ``petricep run --tie either``: one engine, the
    kernel, and the Python engine's output byte for byte."""
    (tmp_path / "p.pcep").write_text(PATTERNS)
    (tmp_path / "q.sql").write_text(RISE)
    rows = "".join(f"{e.type},{e.ts},{e.attrs['x']}\n" for e in hand_events())
    (tmp_path / "e.csv").write_text("type,ts,x\n" + rows)
    args = ["run", str(tmp_path / "p.pcep"), str(tmp_path / "q.sql"), "--events", str(tmp_path / "e.csv"), "--type-field", "type"]
    args += ["--time-field", "ts", "--tie", "either"]
    assert main([*args, "-o", str(tmp_path / "k.jsonl")]) == 0
    err = capsys.readouterr().err
    assert "engine: kernel\n" in err, err
    assert main([*args, "--engine", "python", "-o", str(tmp_path / "p.jsonl")]) == 0
    assert "engine: python" in capsys.readouterr().err
    got = (tmp_path / "k.jsonl").read_text()
    assert got == (tmp_path / "p.jsonl").read_text()
    assert [(m["pattern"], m["ids"]) for m in map(json.loads, got.splitlines())] == [
        ("ab", {"a": 0, "b": 1}), ("ab", {"a": 0, "b": 4}), ("ab", {"a": 2, "b": 4}), ("ab", {"a": 3, "b": 4}),
        ("rise", {"UP": [2, 3]}), ("ab", {"a": 5, "b": 6}),
    ]
    assert main(["check", str(tmp_path / "p.pcep"), str(tmp_path / "q.sql")]) == 0
    assert "kernel: covers this net (run fires it on the kernel)" in capsys.readouterr().out


# a query matching every C row at once (its matches at the row itself), beside a pattern whose
# matches wait: for its end negation's window to close, or to time out
EVERY_C = (
    "SELECT * FROM C MATCH_RECOGNIZE (MEASURES LAST(X.x) AS cx ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW "
    "PATTERN (X) DEFINE X AS X.x >= 0) AS every;"
)
WAITING = (
    "PATTERN p1: SEQ(A a, B b, !(C c)) WITHIN 5\n",
    "PATTERN p1: SEQ(A a, B b) WITHIN 3 ON TIMEOUT RETURN L(x = a.x)\n",
    "PATTERN p1: SEQ(A a, !(C c)) WITHIN 2 EVENTS\n",
    "PATTERN p1: SEQ(A a, B b) WITHIN 2 EVENTS ON TIMEOUT RETURN L(x = a.x)\n",
)


def waiting_events() -> list[Event]:
    """Timestamp groups whose first event closes windows (C2 at 10, C6 at 20), ties of C with
    B and A, a C where a window closes, count windows closing inside a group."""
    rows = [("A", 0, 1), ("B", 0, 1), ("A", 1, 2), ("C", 10, 3), ("A", 10, 4), ("B", 10, 5), ("A", 11, 1),
            ("B", 11, 2), ("C", 11, 0), ("C", 20, 1), ("B", 21, 3), ("A", 21, 2), ("C", 22, 0)]
    return [Event(t, ts, i, i, {"x": x}) for i, (t, ts, x) in enumerate(rows)]


@pytest.mark.parametrize("text", WAITING)
@pytest.mark.parametrize("tie", TIES)
def test_end_negations_and_timeouts_beside_queries(text: str, tie: str) -> None:
    """An end negation or ON TIMEOUT beside a query, under every tie rule (``either``
    included): the whole net on the kernel, the Python engine's matches in its order, each
    emitted at the same position (the queries' matches of an event after the patterns')."""
    net = net_of([parse_text(text, "<p>"), parse_sql(EVERY_C, "<q>")])
    events = waiting_events()
    for cuts, batch in (([], 4096), ([3], 2), ([1, 4, 9], 1), ([9], 3)):
        found = same_as_python(net, events, tie, cuts, batch=batch)
    assert sum("'every'" in m for m in found) == 4
    assert any("'p1'" in m for m in found)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # A6's window (2 events) closes at C8, inside time 11's group: emitted when the group
        # closes, at C9 (time 20), after the query's match of C8 and before C9's
        (WAITING[2], [("p1", (0,), 2), ("every", (3,), 3), ("p1", (4,), 6), ("every", (8,), 8), ("p1", (6,), 9),
                      ("every", (9,), 9), ("every", (12,), 12)]),
        # A2 times out at A4 (its count window), inside time 10's group: emitted at A6 (time
        # 11) after A4's match; B10 completes A11 at time 21 when C12 (time 22) comes
        (WAITING[3], [("p1", (0, 1), 2), ("every", (3,), 3), ("p1", (4, 5), 6), ("p1", (2,), 6), ("every", (8,), 8),
                      ("p1", (6, 7), 9), ("every", (9,), 9), ("p1", (11, 10), 12), ("every", (12,), 12)]),
        # A2 times out at C3 (time 10 > its deadline 4), the first event of its group, emitted
        # there, before the query's match of C3
        (WAITING[1], [("p1", (0, 1), 2), ("p1", (2,), 3), ("every", (3,), 3), ("p1", (4, 5), 6), ("every", (8,), 8),
                      ("p1", (4, 7), 9), ("p1", (6, 7), 9), ("every", (9,), 9), ("p1", (11, 10), 12), ("every", (12,), 12)]),
    ],
)
def test_either_emits_what_a_group_closes_where_the_python_engine_does(
    text: str, want: list[tuple[str, tuple[int, ...], int]]
) -> None:
    """Under ``either`` the matches a timestamp group closes (an end negation's window, a
    timeout) beside a query: at the emitting positions the Python engine gives them."""
    net = net_of([parse_text(text, "<p>"), parse_sql(EVERY_C, "<q>")])
    for batch in (1, 2, 4096):
        paired: list[tuple[Match, int]] = []
        by_pairs(KernelEngine(net, tie="either", batch=batch), waiting_events(), paired)
        got = [(m.pattern, tuple(v for v in m.ids.values()), at) for m, at in paired]
        assert got == want


def _waiting_pattern(data: st.DataObject, name: str) -> A.Pattern:
    """A pattern whose matches wait: a SEQ with an end negation (or negations anywhere), or
    a random pattern with ON TIMEOUT (fields over its variables, maybe a LIMIT)."""
    if data.draw(st.booleans()):
        return data.draw(negation_seqs(types=TYPES, end=True, kleene=data.draw(st.booleans()), name=name))
    windows = (A.WIN_TIME, A.WIN_COUNT, A.WIN_DURATION)
    p = data.draw(patterns(types=TYPES, strategies=("skip-till-any-match",), kleene=False, windows=windows, name=name, max_depth=1))
    positives = [r.var for r in A.events_of(p.structure) if not r.negated]
    fields = tuple(
        A.ReturnField(f"{field}_{v}", A.Attr(v, field))
        for v in data.draw(st.lists(st.sampled_from(positives), max_size=2, unique=True))
        for field in [data.draw(st.sampled_from(("x", "ts", "k")))]
    )
    limit = None
    if data.draw(st.booleans()):
        limit = A.Limit(data.draw(st.integers(1, 3)), data.draw(st.sampled_from(("drop-oldest", "reject-new"))))
    return dataclasses.replace(p, timeout=A.Return(f"T{name}", fields), limit=limit)


@SETTINGS
@given(data=st.data())
def test_waiting_patterns_beside_queries_under_either(data: st.DataObject) -> None:
    """Random end negations and ON TIMEOUT patterns (alone or merged with a random pattern)
    beside random queries under ``either``, on tied streams: the Python engine's output."""
    pats = [_waiting_pattern(data, "p0")]
    if data.draw(st.booleans()):
        pats.append(data.draw(patterns(types=TYPES, strategies=("skip-till-any-match",), kleene=False, returns=False, name="p1", max_depth=1)))
    net = beside_queries(data, pats, "either")
    events = data.draw(tied_streams(types=TYPES, max_size=14))
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    cuts = data.draw(st.lists(st.integers(0, len(events)), max_size=3))
    same_as_python(net, events, "either", cuts, batch=data.draw(st.sampled_from((1, 3, 4096))))
