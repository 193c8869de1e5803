"""One shared net for many patterns: every pattern keeps exactly its own matches.

Random sets of 2..20 patterns are built to overlap — common prefixes, one pattern a
prefix of another, equal patterns under other names, near-equal ones differing in a
window or a threshold, common suffixes and contained middles — and the merged run must
give, for each pattern, exactly what that pattern gives alone (and, on small inputs,
what the brute-force reference gives).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.events import Event
from petricep.lang import ast as A
from petricep.merge import MAX_SHARED, build_net
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.reference import reference_run
from tests.strategies import pattern_text, streams

SETTINGS = settings(
    max_examples=examples(150, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

TYPES = ("A", "B", "C", "D")


def fresh(events: list[Event]) -> list[Event]:
    return [Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in events]


def run(patterns: list[A.Pattern], events: list[Event], share: bool = True, tie: str = "arrival") -> dict[str, list[str]]:
    engine = Engine(build_net(patterns, share=share), tie=tie)
    out: dict[str, list[str]] = {p.name: [] for p in patterns}
    for m in engine.run(fresh(events)):
        out[m.pattern].append(json.dumps(m.to_dict(), sort_keys=True))
    return out


# ----------------------------------------------------------------------------- overlapping pattern sets

Comp = tuple[str, str]  # (type, kind) kind: "one" | "plus" | "not"


@st.composite
def components(draw: Any, n_min: int = 1, n_max: int = 4) -> list[Comp]:
    n = draw(st.integers(n_min, n_max))
    comps: list[Comp] = []
    for i in range(n):
        kind = draw(st.sampled_from(["one", "one", "one", "plus", "not"]))
        if kind == "not" and (i == 0 or comps[-1][1] == "not"):
            kind = "one"
        comps.append((draw(st.sampled_from(TYPES)), kind))
    if all(k == "not" for _, k in comps):
        comps[0] = (comps[0][0], "one")
    return comps


def make(name: str, comps: list[Comp], conds: list[tuple[int, str, int]], window: A.Window | None, strategy: str, partition: bool) -> A.Pattern:
    refs = []
    for i, (t, kind) in enumerate(comps):
        refs.append(A.EventRef(t, f"v{i}", kleene=kind == "plus", negated=kind == "not"))
    conditions: list[A.Expr] = []
    for i, op, c in conds:
        if i < len(comps):
            var = f"v{i}"
            attr = A.Attr(var, "x", A.Index(A.IDX_CUR) if comps[i][1] == "plus" else None)
            conditions.append(A.Compare(op, attr, A.Num(c)))
    return A.Pattern(
        name,
        A.Seq(tuple(refs)),
        tuple(conditions),
        ("k",) if partition else (),
        A.Strategy(strategy),
        window,
        None,
    )


@st.composite
def overlapping_sets(draw: Any, max_patterns: int = 20, min_patterns: int = 2) -> list[A.Pattern]:
    strategy = draw(st.sampled_from(["skip-till-any-match"] * 3 + ["skip-till-next-match", "partition-contiguity"]))
    partition = draw(st.booleans())
    base = draw(components(2, 4))
    conds = draw(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([">", "<", "!="]), st.integers(0, 5)), max_size=2))
    win = draw(st.integers(1, 6))
    count = draw(st.booleans())

    def window(w: int) -> A.Window:
        return A.Window(A.WIN_COUNT, w + 1, "EVENTS") if count else A.Window(A.WIN_TIME, w)

    n = draw(st.integers(min_patterns, max_patterns))
    out = []
    for k in range(n):
        how = draw(st.sampled_from(["equal", "prefix", "extend", "tail", "window", "threshold", "suffix", "middle", "fresh"]))
        comps, cs, w = list(base), list(conds), win
        if how == "prefix":
            comps = comps[: draw(st.integers(1, len(comps)))]
        elif how == "extend":
            comps = comps + draw(components(1, 2))
        elif how == "tail":
            comps = comps[:-1] + draw(components(1, 1))
        elif how == "window":
            w = draw(st.integers(1, 8))
        elif how == "threshold":
            cs = [(i, op, c + draw(st.integers(-2, 2))) for i, op, c in cs]
        elif how == "suffix":
            comps = draw(components(1, 2)) + comps[1:]
        elif how == "middle":
            comps = comps[1:-1] or comps[:1]
        elif how == "fresh":
            comps = draw(components(1, 4))
        if comps[-1][1] == "not" and len(comps) == 1:
            comps = [(comps[0][0], "one")]
        if all(kind == "not" for _, kind in comps):
            comps[0] = (comps[0][0], "one")
        # a negation needs a positive neighbour inside the SEQ: fix "not" at position 0 followed by not
        out.append(make(f"p{k}", comps, cs, window(w), strategy, partition))
    return out


def show(patterns: list[A.Pattern], events: list[Event]) -> None:
    for p in patterns:
        note(pattern_text(p))
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))


@SETTINGS
@given(overlapping_sets(), streams(types=TYPES, max_size=12))
def test_merged_equals_each_pattern_alone(patterns: list[A.Pattern], events: list[Event]) -> None:
    show(patterns, events)
    merged = run(patterns, events)
    separate = run(patterns, events, share=False)
    assert merged == separate
    for p in patterns[:4]:  # each alone (a few: the others are covered by `separate`)
        assert merged[p.name] == run([p], events)[p.name]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(overlapping_sets(max_patterns=5), streams(types=TYPES, max_size=8))
def test_merged_equals_reference(patterns: list[A.Pattern], events: list[Event]) -> None:
    show(patterns, events)
    merged = run(patterns, events)
    want: dict[str, list[str]] = {p.name: [] for p in patterns}
    for m in reference_run(patterns, fresh(events)):
        want[m["pattern"]].append(json.dumps(m, sort_keys=True))
    assert {k: sorted(v) for k, v in merged.items()} == {k: sorted(v) for k, v in want.items()}


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(overlapping_sets(max_patterns=8), streams(types=TYPES, max_size=10), st.sampled_from(["strict", "either"]))
def test_merged_equals_separate_under_other_tie_rules(patterns: list[A.Pattern], events: list[Event], tie: str) -> None:
    if tie == "either" and patterns[0].strategy != "skip-till-any-match":
        tie = "strict"
    show(patterns, events)
    assert run(patterns, events, tie=tie) == run(patterns, events, share=False, tie=tie)


def test_middle_combination_shares_the_inner_steps() -> None:
    from petricep.api import compile_text
    from petricep.events import Event

    net = compile_text("PATTERN p1: SEQ(A a, B b, C c, D d) WITHIN 10\nPATTERN p2: SEQ(B b, C c, E e) WITHIN 10")
    (group,) = net.groups
    # p2's slots move by one so that its b;c lines up with p1's: the step C c is built once
    shared = [t for t in group.transitions if len(t.users) == 2]
    assert [(t.event_type, t.slot) for t in shared] == [("C", 2)]
    assert [(how, label, users) for how, label, users in group.sharing] == [
        ("middle", "a;b", ("p1", "p2")),
        ("middle", "a;b;c", ("p1", "p2")),
    ]
    events = [Event(t, i, i) for i, t in enumerate(["A", "B", "C", "D", "E"])]
    assert [m.to_dict()["ids"] for m in Engine(net).run(events)] == [
        {"a": 0, "b": 1, "c": 2, "d": 3},
        {"b": 1, "c": 2, "e": 4},
    ]


def test_overlapping_patterns_share_places() -> None:
    from petricep.api import compile_text

    text = """
    PATTERN p1: SEQ(A a, B b, C c, D d) WITHIN 10
    PATTERN p2: SEQ(A a, B b, C c, E e) WITHIN 20
    PATTERN p3: SEQ(A x, B y) WHERE y.v > 3 WITHIN 10
    PATTERN p4: SEQ(A a, B b, C c, D d) WITHIN 10
    PATTERN p5: SEQ(F f, B b, C c, D d) WITHIN 10
    """
    net = compile_text(text)
    stats = net.stats()
    assert (stats["state_places"], stats["transitions"]) == (18, 18)  # start places not counted
    # front: a, a;b, a;b;c shared by the patterns with equal prefixes (p3's a;b has its own
    # guard); p5's f;b;c;d runs through the places of a;b;c;d, its tokens kept apart
    assert (stats["merged_state_places"], stats["merged_transitions"]) == (6, 7)
    (group,) = net.groups
    assert [(how, label, users) for how, label, users in group.sharing] == [
        ("front+middle", "a", ("p1", "p2", "p3", "p4", "p5")),
        ("front+middle", "a;b", ("p1", "p2", "p4", "p5")),
        ("front+middle", "a;b;c", ("p1", "p2", "p4", "p5")),
        ("front+rear", "a;b;c;d", ("p1", "p4", "p5")),
    ]


def test_a_pattern_keeps_its_order_beside_a_returning_pattern() -> None:
    """Matches of one point: a pattern that feeds nothing keeps emission order, merged or alone,
    on both engines (p2's RETURN used to sort p1's matches by their events, b's before a's)."""
    from petricep import kernel
    from petricep.api import compile_text
    from petricep.kernel.engine import KernelEngine

    p1 = "PATTERN p1: OR(A a, A b) WITHIN 10\n"
    p2 = "PATTERN p2: SEQ(B x, A y) WITHIN 10 RETURN R(v = x.v)\n"
    engines: list[Any] = [Engine] + ([KernelEngine] if kernel.available() else [])
    for make in engines:
        for text in (p1, p1 + p2):
            engine = make(compile_text(text))
            evs = [Event("B", 1, 0, 1, {"v": 1}), Event("A", 2, 1, 2, {"v": 1})]
            got = [(m.pattern, m.to_dict()["ids"]) for e in evs for m in engine.push(e)] + [
                (m.pattern, m.to_dict()["ids"]) for m in engine.flush()
            ]
            assert [ids for name, ids in got if name == "p1"] == [{"a": 2}, {"b": 2}], (make, text)


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(overlapping_sets(min_patterns=MAX_SHARED + 1, max_patterns=2 * MAX_SHARED + 5), streams(types=TYPES, max_size=10))
def test_a_wide_class_is_cut_into_shared_nets(patterns: list[A.Pattern], events: list[Event]) -> None:
    """More compatible patterns than one shared net holds (merge._chunks): nets of at most
    MAX_SHARED patterns and negations, of equal size but the last, in pattern order; each pattern's matches
    those of the unmerged net, in order."""
    show(patterns[:3], events)
    net = build_net(patterns)
    sizes = [len(g.patterns) for g in net.groups]
    parts = -(-len(patterns) // MAX_SHARED)
    if sum(len(n.negations) for n in net.patterns) <= MAX_SHARED * parts:
        assert len(sizes) == parts and sizes[:-1] == [-(-len(patterns) // parts)] * (parts - 1)
    assert max(sizes) <= MAX_SHARED
    assert [pi for g in net.groups for pi in g.patterns] == list(range(len(patterns)))
    assert all(len(g.negations) <= MAX_SHARED for g in net.groups)
    merged, alone = run(patterns, events), run(patterns, events, share=False)
    assert merged == alone


# found by tests/kernel/test_wide_nets.py: a pattern with a Kleene list merged with patterns
# its steps line up with emitted the matches of one point in the shared net's firing order,
# not its order alone (the same matches); now every pattern's matches of one point are
# sorted by their events (emission.chain_order), which no layout changes
LIST_ORDER_CASES = [
    (
        "arrival",
        "PATTERN p32: SEQ(D v0, C v1, D+ v2[], C+ v3[], D+ v4[], C v5) WITHIN 6\n"
        "PATTERN p68: SEQ(C+ v0[], C v1) WITHIN 6\nPATTERN p72: SEQ(C+ v0[], D v1, A+ v2[]) WITHIN 6\n",
        [("C", 0), ("A", 2), ("C", 2), ("A", 4), ("A", 6), ("D", 6), ("A", 6), ("D", 6)],
    ),
    (
        "either",
        "PATTERN p0: SEQ(A v0, A v1, A v2, A v3, B+ v4[]) WITHIN 1\nPATTERN p30: SEQ(C v0, B v2, B+ v3[]) WITHIN 1\n",
        [("C", 0), ("B", 0), ("B", 1), ("B", 1), ("B", 1)],
    ),
]


@pytest.mark.parametrize(("tie", "text", "rows"), LIST_ORDER_CASES)
def test_a_list_pattern_keeps_its_order_merged(tie: str, text: str, rows: list[tuple[str, int]]) -> None:
    from petricep.lang.parser import parse_text

    patterns = list(parse_text(text, "<p>").patterns)
    events = [Event(t, ts, i, i, {"x": 1, "k": 0}) for i, (t, ts) in enumerate(rows)]
    merged, alone = run(patterns, events, tie=tie), run(patterns, events, share=False, tie=tie)
    assert {k: sorted(v) for k, v in merged.items()} == {k: sorted(v) for k, v in alone.items()}
    assert merged == alone
