"""History-aware patterns: archive + live gives exactly the matches of the equivalent pattern
over the concatenated stream (history, then live), whatever the evaluation (LLAA or SLLAA,
live-first, archive-first or measured order)."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from petricep.archive.join import HistoryRunner
from petricep.archive.store import Archive
from petricep.compile.archived import split
from petricep.errors import ConfigError, PatternSemanticError, PatternUnsupportedError
from petricep.events import Event
from petricep.lang import ast as A
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.reference import reference_run
from tests.strategies import pattern_text

SETTINGS = settings(
    max_examples=examples(300, "PETRICEP_EXAMPLES") // 2,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def ev(etype: str, ts: Any, pos: int, eid: str, **attrs: Any) -> Event:
    return Event(etype, ts, pos, eid, attrs)


def archive_of(history: list[Event]) -> str:
    d = tempfile.mkdtemp(prefix="petricep-archive-")
    a = Archive(d, bucket_seconds=5, batch=4)  # small buckets and batches: many files
    a.extend(Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in history)
    a.flush()
    return d


def run_history(text_or_patterns: Any, path: str, live: list[Event], **options: Any) -> list[dict[str, Any]]:
    pats = parse_text(text_or_patterns).patterns if isinstance(text_or_patterns, str) else text_or_patterns
    runner = HistoryRunner(pats, Archive(path), **options)
    return [m.to_dict() for m in runner.run([Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in live])]


SPEED = """
PATTERN slower: SEQ(ARCHIVED S then, S now)
WHERE [sensor] AND now.ts - then.ts >= 95 AND now.ts - then.ts <= 105 AND now.speed < then.speed / 2
"""


def test_a_live_event_compared_with_the_same_key_in_the_archive() -> None:
    history = [ev("S", 0, 0, "h0", sensor=1, speed=80), ev("S", 2, 1, "h1", sensor=2, speed=60),
               ev("S", 10, 2, "h2", sensor=1, speed=30)]
    live = [ev("S", 100, 0, "l0", sensor=1, speed=30), ev("S", 101, 1, "l1", sensor=2, speed=20),
            ev("S", 112, 2, "l2", sensor=1, speed=10)]
    path = archive_of(history)
    want = [
        {"pattern": "slower", "ids": {"then": "h0", "now": "l0"}, "start": 0, "end": 100, "attrs": {}},
        {"pattern": "slower", "ids": {"then": "h1", "now": "l1"}, "start": 2, "end": 101, "attrs": {}},
        {"pattern": "slower", "ids": {"then": "h2", "now": "l2"}, "start": 10, "end": 112, "attrs": {}},
    ]
    assert run_history(SPEED, path, live, mode="llaa") == want
    # SLLAA emits the same matches once stream time passed them (here: one by one, then at the end)
    assert run_history(SPEED, path, live, mode="sllaa") == want


GAPPED = """
PATTERN slower: SEQ(ARCHIVED S then, S now AFTER 95 TO 105)
WHERE [sensor] AND now.speed < then.speed / 2
"""


def test_a_gap_into_the_archive_joins_as_its_condition_says() -> None:
    """The first live step's gap follows the archived step before it: the same matches as the
    WHERE pair (SPEED), and its bound is the range read; a gap between live steps stays on its
    step."""
    history = [ev("S", 0, 0, "h0", sensor=1, speed=80), ev("S", 2, 1, "h1", sensor=2, speed=60),
               ev("S", 10, 2, "h2", sensor=1, speed=30)]
    live = [ev("S", 100, 0, "l0", sensor=1, speed=30), ev("S", 101, 1, "l1", sensor=2, speed=20),
            ev("S", 112, 2, "l2", sensor=1, speed=10)]
    for mode in ("llaa", "sllaa"):
        assert run_history(GAPPED, archive_of(history), live, mode=mode) == run_history(SPEED, archive_of(history), live, mode=mode)
    # a: 0..110 after h (l0 after h0 and h2, l2 after h2), b at most 2 after a (l3 after l2)
    text = "PATTERN p: SEQ(ARCHIVED S h, S a AFTER 0 TO 110, S b AFTER 0 TO 2) WHERE [sensor]"
    # (l0, live, is in the archive when l2 comes)
    got = run_history(text, archive_of(history), live + [ev("S", 113, 3, "l3", sensor=1, speed=0)], mode="llaa")
    assert [m["ids"] for m in got] == [{"h": "h2", "a": "l2", "b": "l3"}, {"h": "l0", "a": "l2", "b": "l3"}]


@pytest.mark.parametrize("engine", ["python", "kernel"])
def test_a_lists_gap_into_the_archive_joins_its_first_element(engine: str) -> None:
    """``B+ b[] AFTER 1 TO 2`` after an archived ``a``: b[1] is 1..2 after a (the join), each
    later element 1..2 after the one before it (the live chain); ``FROM a`` alike; ``B*``
    with no b: c follows a, with no gap of its own."""
    from petricep import kernel

    if engine == "kernel" and not kernel.available():
        pytest.skip("the compiled kernel is not built")
    history = [ev("A", 0, 0, "h0", k=1), ev("A", 5, 1, "h1", k=1)]
    live = [ev("B", 6, 0, "l0", k=1), ev("B", 7, 1, "l1", k=1), ev("B", 10, 2, "l2", k=1), ev("C", 11, 3, "l3", k=1)]
    lists = [{"a": "h1", "b": ["l0"], "c": "l3"}, {"a": "h1", "b": ["l0", "l1"], "c": "l3"}, {"a": "h1", "b": ["l1"], "c": "l3"}]
    cases: list[tuple[str, list[dict[str, Any]]]] = [
        ("SEQ(ARCHIVED A a, B+ b[] AFTER 1 TO 2, C c)", lists),
        ("SEQ(ARCHIVED A a, D d, B+ b[] AFTER 1 TO 2 FROM a, C c)", []),
        ("SEQ(ARCHIVED A a, B* b[] AFTER 1 TO 2, C c)", [*lists, {"a": "h0", "c": "l3"}, {"a": "h1", "c": "l3"}]),
    ]
    for src, expected in cases:
        text = f"PATTERN p: {src} WHERE [k] AND c.ts - a.ts <= 20"
        for mode in ("llaa", "sllaa"):
            got = run_history(text, archive_of(history), live, mode=mode, engine=engine)
            assert sorted(str(m["ids"]) for m in got) == sorted(str(m) for m in expected), (src, mode)


def test_sllaa_reads_overlapping_ranges_once() -> None:
    history = [ev("S", t, i, f"h{i}", sensor=1, speed=90) for i, t in enumerate(range(0, 20, 2))]
    live = [ev("S", 100 + t, i, f"l{i}", sensor=1, speed=10) for i, t in enumerate(range(0, 10, 2))]
    path = archive_of(history)
    loads = {}
    for mode in ("llaa", "sllaa"):
        runner = HistoryRunner(parse_text(SPEED).patterns, Archive(path), mode=mode, tolerance=10)
        out = sorted(json.dumps(m.to_dict()) for m in runner.run(live))
        loads[mode] = (runner.join.stats.loads, len(out))
    # five live matches, overlapping ranges [now-105, now-95]: LLAA reads five times, SLLAA
    # once; now@100 pairs with then@0,2,4, @102 with 0..6, @104, @106, @108 with five each
    assert loads == {"llaa": (5, 22), "sllaa": (1, 22)}


ERRORS = [
    ("PATTERN p: SEQ(ARCHIVED S a, S b) WHERE b.ts - a.ts >= 1",
     "archived variable 'a' needs a bound on how far back it reaches: add a condition like b.ts - a.ts <= 86400"),
    ("PATTERN p: SEQ(S b, ARCHIVED S a) WHERE b.ts - a.ts <= 1",
     "ARCHIVED variables come first in the SEQ (history precedes the live stream)"),
    ("PATTERN p: SEQ(ARCHIVED S a, S b) WHERE a.ts - b.ts <= 5 AND b.ts - a.ts <= 10",
     "archived variable 'a' must lie before the live match: its lower bound is -5"),
    ("PATTERN p: SEQ(ARCHIVED S a, S b) WHERE skip-till-next-match AND b.ts - a.ts <= 5",
     "a pattern with ARCHIVED variables runs under skip-till-any-match, not skip-till-next-match"),
    ("PATTERN p: SEQ(ARCHIVED S a, S b) WHERE b.ts - a.ts <= 5 RETURN T(x = a.x)",
     "a pattern with ARCHIVED variables cannot have RETURN, ON TIMEOUT or CONSUME (yet)"),
    ("PATTERN p: SEQ(ARCHIVED S a, S? o, S b) WHERE o.ts - a.ts <= 5",
     "archived variable 'a' needs a bound on how far back it reaches: add a condition like b.ts - a.ts <= 86400 "
     "(from a required step: an optional one may be absent)"),
    ("PATTERN p: SEQ(ARCHIVED S a, S? o, !(C c), S b) WHERE b.ts - a.ts <= 5",
     "a negation may not follow the ARCHIVED variables with only optional steps between them"),
    ("PATTERN p: SEQ(ARCHIVED S a, S? o) WHERE o.ts - a.ts <= 5",
     "the live part needs a required step (one that is not optional)"),
    ("PATTERN p: SEQ(ARCHIVED S a, !(C c), S b) WHERE b.ts - a.ts <= 5",
     "a negation may not follow the ARCHIVED variables directly"),
    ("PATTERN p: SEQ(ARCHIVED S a, S+ b[]) WHERE b[1].ts - a.ts <= 5 AND b[1].x > a.x",
     "a condition joining ARCHIVED and live variables cannot read a Kleene variable"),
]


OPTIONAL = "PATTERN p: SEQ(ARCHIVED A h, A l, B? b, !(N n), C c) WHERE l.ts - h.ts <= 5 AND b.x = h.x"
OPTIONAL_LIVE = [ev("A", 1, 0, "x0", x=0), ev("B", 2, 1, "x1", x=2), ev("C", 3, 2, "x2", x=0), ev("B", 4, 3, "x3", x=1),
                 ev("C", 5, 4, "x4", x=0), ev("N", 6, 5, "x5", x=0), ev("C", 7, 6, "x6", x=0)]


@pytest.mark.parametrize("order", ["live-first", "archive-first", "auto"])
def test_an_optional_live_step(order: str) -> None:
    """A live match leaving ``b`` out joins with its history as any (``b.x = h.x`` holds, as
    any conjunct reading a step left out); with ``b``, the condition joins. x1 (x = 2) is no
    ``b`` of h0; N at 6 stands between ``b`` / ``l`` and c6 (the negation beside ``b``)."""
    got = run_history(OPTIONAL, archive_of([ev("A", 0, 0, "h0", x=1)]), OPTIONAL_LIVE, order=order)
    assert [m["ids"] for m in got] == [
        {"h": "h0", "l": "x0", "c": "x2"},
        {"h": "h0", "l": "x0", "b": "x3", "c": "x4"},
        {"h": "h0", "l": "x0", "c": "x4"},
    ]


@pytest.mark.parametrize(("text", "message"), ERRORS, ids=[m[:40] for _, m in ERRORS])
def test_history_pattern_errors(text: str, message: str) -> None:
    from petricep.compile.archived import split_patterns

    with pytest.raises(PatternSemanticError) as err:
        split_patterns(list(parse_text(text, "h.pcep").patterns))
    assert str(err.value).splitlines()[0].endswith("error: " + message)


UNTIL = "PATTERN p: SEQ(ARCHIVED A h, A l, B+ b[] UNTIL C c, D d) WHERE l.ts - h.ts <= 5 AND l.ts - h.ts >= 1"
UNTIL_LIVE = [ev("A", 2, 0, "x0"), ev("B", 3, 1, "x1"), ev("C", 4, 2, "x2"), ev("B", 5, 3, "x3"), ev("D", 6, 4, "x4")]


@pytest.mark.parametrize("order", ["live-first", "archive-first", "auto"])
def test_a_stop_event_in_the_live_part(order: str) -> None:
    """UNTIL on a live list: the stop event x2 lies between live events, so the live part
    sees it; archive-first lets it through as it lets negated events (it starts nothing)."""
    got = run_history(UNTIL, archive_of([ev("A", 0, 0, "h0")]), UNTIL_LIVE, order=order)
    assert [m["ids"] for m in got] == [
        {"h": "h0", "l": "x0", "b": ["x1"], "d": "x4"},
        {"h": "h0", "l": "x0", "b": ["x3"], "d": "x4"},
    ]


def test_a_stop_condition_cannot_read_an_archived_variable() -> None:
    text = "PATTERN p: SEQ(ARCHIVED A h, A l, B+ b[] UNTIL C c) WHERE l.ts - h.ts <= 5 AND c.x > h.x"
    with pytest.raises(PatternUnsupportedError) as err:
        parse_text(text)
    assert str(err.value).splitlines()[0] == (
        "<pattern>:1:80: error: a stop condition (UNTIL ... c) reading the ARCHIVED variable 'h' is not supported "
        "yet: the history is joined after the live part matched"
    )


@pytest.mark.parametrize(
    "text",
    [
        "PATTERN h: SEQ(ARCHIVED A h0, A l0, A l1 AFTER 2 TO 2 FROM h0) WHERE l0.ts - h0.ts <= 2 AND l0.ts - h0.ts >= 1",
        "PATTERN h: SEQ(ARCHIVED A h0, A l0, A l1) WHERE l0.ts - h0.ts <= 2 AND l0.ts - h0.ts >= 1 "
        "AND l1.ts - h0.ts >= 2 AND l1.ts - h0.ts <= 2",
    ],
)
def test_the_range_read_takes_its_bounds_from_one_anchor(text: str) -> None:
    """Bounds from two live variables: the range read is the nearest upper bound's anchor's
    (l0: 1 to 2 back), not l1's lower bound (2) put on l0 (which missed h0 = l0.ts - 1)."""
    (p,) = parse_text(text).patterns
    (r,) = split(p).ranges
    assert (r.var, r.anchor, r.lo, r.hi) == ("h0", "l0", 1.0, 2.0)
    live = [Event("A", t, t, f"x{t}", {"x": 0, "k": 0}) for t in range(3)]
    for mode in ("llaa", "sllaa"):
        got = run_history([p], archive_of([]), live, mode=mode, order="live-first", tolerance=0)
        assert [m["ids"] for m in got] == [{"h0": "x0", "l0": "x1", "l1": "x2"}]


def test_a_history_pattern_needs_an_archive() -> None:
    net = build_net(list(parse_text("PATTERN p: SEQ(ARCHIVED S a, S b) WHERE b.ts - a.ts <= 5").patterns))
    assert [p.name for p in net.patterns] == ["p"] and net.history[0].archived_vars == ("a",)  # draws, checks
    with pytest.raises(ConfigError, match="pattern 'p' has ARCHIVED variables: it runs with an event archive"):
        Engine(net)


# ------------------------------------------------------------------ randomized, against the reference


@st.composite
def history_patterns(draw: Any) -> A.Pattern:
    n_arch = draw(st.integers(1, 2))
    n_live = draw(st.integers(1, 3))
    arch = [A.EventRef(draw(st.sampled_from("AB")), f"h{i}", archived=True) for i in range(n_arch)]
    live: list[A.EventRef] = [A.EventRef(draw(st.sampled_from("ABC")), f"l{i}") for i in range(n_live)]
    conds: list[A.Expr] = []
    if n_live == 2 and draw(st.booleans()):  # a live list, maybe with a stop event (UNTIL)
        live[1] = dataclasses.replace(live[1], kleene=True)
        if draw(st.integers(0, 3)) > 0:
            live[1] = dataclasses.replace(live[1], until=A.EventRef(draw(st.sampled_from("ABC")), "s"))
            kind = draw(st.sampled_from(["none", "const", "before"]))  # (it may not read the archived ones)
            other = A.Num(draw(st.integers(0, 3))) if kind == "const" else A.Attr("l0", "x")
            if kind != "none":
                conds.append(A.Compare(draw(st.sampled_from(["<", "=", ">"])), A.Attr("s", "x"), other))
    if n_live == 3 and draw(st.integers(0, 3)) > 0:  # an optional live step (not the anchor, not the last)
        live[1] = dataclasses.replace(live[1], optional=True)
    # per-step gaps (issue 42): on an archived step or the first live one (a join condition),
    # FROM an archived variable, or between live steps (a list's chain too)
    earlier: list[str] = []
    for i, r in enumerate([*arch, *live]):
        if earlier and draw(st.integers(0, 2)) == 0 and not (r.kleene and i == len(arch)) and not r.optional:
            lo = draw(st.integers(0, 2))
            after = draw(st.sampled_from([None, *earlier]))  # (a list's FROM an archived one: its first element joins)
            gap = A.Gap(lo, lo + draw(st.integers(0, 4)), None, after)
            if i < len(arch):
                arch[i] = dataclasses.replace(r, gap=gap)
            else:
                live[i - len(arch)] = dataclasses.replace(r, gap=gap)
        earlier.append(r.var)
    if n_live >= 2 and draw(st.booleans()):
        live.insert(1, A.EventRef(draw(st.sampled_from("BC")), "n", negated=True))
    anchor = A.Attr("l0", "ts")
    for r in arch:
        lo = draw(st.integers(0, 3))
        hi = lo + draw(st.integers(0, 8))
        diff = A.BinOp("-", anchor, A.Attr(r.var, "ts"))
        conds.append(A.Compare("<=", diff, A.Num(hi)))
        if lo or draw(st.booleans()):
            conds.append(A.Compare(">=", diff, A.Num(lo)))
    names = [r.var for r in arch] + [r.var for r in live if not (r.negated or r.kleene)]
    for _ in range(draw(st.integers(0, 2))):
        a, b = draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True))
        conds.append(A.Compare(draw(st.sampled_from(["<", "<=", "=", "!="])), A.Attr(a, "x"), A.Attr(b, "x")))
    partition = ("k",) if draw(st.booleans()) else ()
    window = A.Window(A.WIN_TIME, draw(st.integers(1, 5))) if n_live > 1 and draw(st.booleans()) else None
    pattern = A.Pattern("h", A.Seq(tuple(arch + live)), tuple(conds), partition, window=window)
    try:
        split(pattern)
    except PatternSemanticError as err:  # a gap and a WHERE bound that leave an archived step no range
        assert "has an empty range" in str(err)
        assume(False)
    return pattern


@st.composite
def two_streams(draw: Any) -> tuple[list[Event], list[Event]]:
    """History then live: small integer timestamps, often equal, x in 0..3, k in 0..1."""
    def events(prefix: str, start: float, n: int) -> list[Event]:
        out, ts = [], start
        for i in range(n):
            ts += draw(st.sampled_from((0, 1, 1, 2)))
            out.append(Event(draw(st.sampled_from("ABC")), ts, i, f"{prefix}{i}",
                             {"x": draw(st.integers(0, 3)), "k": draw(st.integers(0, 1))}))
        return out

    history = events("h", 0, draw(st.integers(0, 10)))
    live = events("l", history[-1].ts if history else 0, draw(st.integers(1, 10)))
    return history, live


def equivalent(p: A.Pattern) -> A.Pattern:
    """The same pattern over one stream: no ARCHIVED marks, the window on the live part only."""
    assert isinstance(p.structure, A.Seq)
    refs = cast("tuple[A.EventRef, ...]", p.structure.children)  # history_patterns: a SEQ of event references
    kids = tuple(dataclasses.replace(k, archived=False) for k in refs)
    conds = p.conditions
    if p.window is not None:
        live = [k for k in kids if not k.negated and k.var.startswith("l")]
        last = A.Attr(live[-1].var, "ts", A.Index(A.IDX_LAST) if live[-1].kleene else None)
        span = A.BinOp("-", last, A.Attr(live[0].var, "ts"))
        conds = conds + (A.Compare("<=", span, A.Num(p.window.value)),)
    return dataclasses.replace(p, structure=A.Seq(kids), conditions=conds, window=None)


@SETTINGS
@given(history_patterns(), two_streams(), st.sampled_from(["llaa", "sllaa"]),
       st.sampled_from(["live-first", "archive-first", "auto"]), st.integers(0, 3))
def test_archive_plus_live_equals_the_concatenated_stream(
    p: A.Pattern, streams: tuple[list[Event], list[Event]], mode: str, order: str, tolerance: int
) -> None:
    history, live = streams
    note(pattern_text(p) + f"\nmode={mode} order={order} tolerance={tolerance}")
    note("\n".join(f"  {e.id}: {e.type} ts={e.ts} {e.attrs}" for e in history + live))
    got = run_history([p], archive_of(history), live, mode=mode, order=order, tolerance=tolerance)
    whole = [Event(e.type, e.ts, n, e.id, dict(e.attrs)) for n, e in enumerate(history + live)]
    live_ids = {e.id for e in live}
    want = [
        m for m in reference_run([equivalent(p)], whole)
        if all(i in live_ids for v in m["ids"] if v.startswith("l") for i in (m["ids"][v] if isinstance(m["ids"][v], list) else [m["ids"][v]]))
    ]
    assert sorted(json.dumps(m, sort_keys=True) for m in got) == sorted(json.dumps(m, sort_keys=True) for m in want)


@pytest.mark.parametrize("order", ["live-first", "archive-first", "auto"])
def test_archive_first_lets_negated_events_through(order: str) -> None:
    """Archive-first holds back live events without history for their key and range; a
    negated event cannot start a match, but it cancels them: it always goes through."""
    text = "PATTERN p: SEQ(ARCHIVED A h, A l0, !(B n), A l1) WHERE l0.ts - h.ts <= 1 AND l0.ts - h.ts >= 1"
    history = [ev("A", 0, 0, "h0")]
    live = [ev("A", 1, 0, "x0"), ev("B", 1, 1, "x1"), ev("A", 1, 2, "x2"), ev("A", 1, 3, "x3")]
    got = run_history(text, archive_of(history), live, order=order)
    assert [m["ids"] for m in got] == [{"h": "h0", "l0": "x2", "l1": "x3"}]
