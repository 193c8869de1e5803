"""Paper 002's argument checked by machine on small nets (issue 3).

The merged net and the separate nets are translated into snakes
(:mod:`petricep.export.snakes_model`) with a few events as coloured tokens in their
input places; their state graphs are built in full, and for every pattern the complex
events that can reach its output place must be the same in the merged net, in its
separate net, and in the embedded engine's run. Every state graph must end in exactly
one dead marking (the nets are monotone: firing order does not change the outcome),
and the merged net must hold no more partial matches than the separate nets together.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, replace

import pytest

from petricep.api import compile_text
from petricep.compile.net import Net
from petricep.events import Event
from petricep.export.snakes_model import Exploration, explore, match_key, snakes_net
from petricep.runtime.engine import Engine


@dataclass
class Outcome:
    merged: dict[str, frozenset]
    separate: dict[str, frozenset]
    engine: dict[str, frozenset]
    merged_states: int
    separate_states: int
    merged_tokens: int
    separate_tokens: int
    shared: bool


def events_of(rows: list[tuple[str, int, int]]) -> list[Event]:
    """(type, ts, k) rows -> events with pos = id = row index."""
    return [Event(t, ts, i, attrs={"k": k}) for i, (t, ts, k) in enumerate(rows)]


def engine_matches(net: Net, events: list[Event]) -> dict[str, frozenset]:
    out: dict[str, set] = {p.name: set() for p in net.patterns}
    fresh = [Event(e.type, e.ts, e.pos, e.id, dict(e.attrs)) for e in events]
    for m in Engine(net).run(fresh):
        out[m.pattern].add(match_key([v.name for v in net.pattern(m.pattern).vars], m.ids))
    return {k: frozenset(v) for k, v in out.items()}


def compare(text: str, events: list[Event]) -> Outcome:
    net = compile_text(text)
    merged: dict[str, frozenset] = {}
    separate: dict[str, frozenset] = {}
    explored: list[tuple[str, Exploration]] = []
    for g in net.groups:
        ex = explore(net, g, events, max_states=5000)
        explored.append(("merged", ex))
        merged.update(ex.matches)
    for p in net.patterns:
        ex = explore(net, p, events, max_states=5000)
        explored.append(("separate", ex))
        separate.update(ex.matches)
    for _, ex in explored:
        assert ex.dead == 1, "a monotone net has one dead marking"
    engine = engine_matches(net, events)
    assert merged == separate, "merged and separate nets reach different output markings"
    assert merged == engine, "the snakes nets and the embedded engine disagree"
    shared = any(len(p.users) > 1 for g in net.groups for p in g.places if p.id != g.start)
    outcome = Outcome(
        merged,
        separate,
        engine,
        sum(ex.states for k, ex in explored if k == "merged"),
        sum(ex.states for k, ex in explored if k == "separate"),
        sum(ex.tokens for k, ex in explored if k == "merged"),
        sum(ex.tokens for k, ex in explored if k == "separate"),
        shared,
    )
    assert outcome.merged_tokens <= outcome.separate_tokens
    return outcome


# ----------------------------------------------------------------------------- hand cases

HAND = {
    "front combination, equal guards, different windows": (
        """
        PATTERN p1: SEQ(A a, B b, C c) WHERE [k] WITHIN 10
        PATTERN p2: SEQ(A a, B b) WHERE [k] WITHIN 1
        PATTERN p3: SEQ(A a, B b, D d) WHERE [k] WITHIN 10
        """,
        [("A", 1, 0), ("A", 2, 0), ("B", 3, 0), ("C", 4, 0), ("D", 8, 0)],
    ),
    "identical patterns under two names, and a prefix": (
        """
        PATTERN p1: SEQ(A a, B b, C c) WHERE c.k = a.k
        PATTERN p2: SEQ(A x, B y, C z) WHERE z.k = x.k
        PATTERN p3: SEQ(A a, B b)
        """,
        [("A", 1, 0), ("B", 2, 1), ("A", 3, 1), ("B", 4, 0), ("C", 5, 1)],
    ),
    "common suffix, contained middle": (
        """
        PATTERN p1: SEQ(A a, B b, C c) WHERE [k] WITHIN 6
        PATTERN p2: SEQ(C a, B b, C c) WHERE [k] WITHIN 6
        PATTERN p3: SEQ(B a, C b) WHERE [k] WITHIN 6
        PATTERN p4: SEQ(A a, B b) WHERE [k] WITHIN 2
        """,
        [("A", 1, 1), ("C", 2, 1), ("B", 3, 1), ("C", 4, 1)],
    ),
    "AND and OR configurations": (
        """
        PATTERN p1: SEQ(A a, AND(B b, C c)) WHERE [k] WITHIN 10
        PATTERN p2: SEQ(A a, OR(B b, C c)) WHERE [k] WITHIN 10
        PATTERN p3: SEQ(A a, B b) WHERE [k] WITHIN 10
        """,
        [("A", 1, 0), ("C", 2, 0), ("B", 3, 0), ("C", 4, 0), ("B", 5, 1)],
    ),
    "equality guards across keys": (
        """
        PATTERN p1: SEQ(A a, A b, B c) WHERE b.k = a.k AND c.k = a.k
        PATTERN p2: SEQ(A a, A b) WHERE b.k = a.k
        """,
        [("A", 1, 0), ("A", 2, 1), ("A", 3, 0), ("B", 4, 0), ("B", 5, 1)],
    ),
}


@pytest.mark.parametrize("name", list(HAND))
def test_merged_and_separate_nets_reach_the_same_complex_events(name: str) -> None:
    text, rows = HAND[name]
    out = compare(text, events_of(rows))
    assert out.shared, "the case must share something to test the merge"
    assert any(out.merged.values()), "the case must produce matches"


def test_front_combination_exactly() -> None:
    text, rows = HAND["front combination, equal guards, different windows"]
    out = compare(text, events_of(rows))
    assert out.merged == {
        "p1": {(("a", 0), ("b", 2), ("c", 3)), (("a", 1), ("b", 2), ("c", 3))},
        "p2": {(("a", 1), ("b", 2))},  # its own window: B at 3, A at 2 only
        "p3": {(("a", 0), ("b", 2), ("d", 4)), (("a", 1), ("b", 2), ("d", 4))},
    }
    # a and a;b built once for all three patterns: 2 + 2 partial matches, not 3 * (2 + 2)
    assert out.merged_tokens == 2 + 2 + 2 + 2
    # p2 alone drops (a0, b2) at once (its window 1); the shared transition keeps it for p1, p3
    assert out.separate_tokens == (2 + 2 + 2) + (2 + 1) + (2 + 2 + 2)


# ----------------------------------------------------------------------------- random small sets


def random_case(seed: int) -> tuple[str, list[Event]]:
    """2-4 SEQ patterns built to overlap (a common base: prefixes, suffixes, middles,
    equal ones), all keyed or none, optional equality guards and windows; 3-4 events."""
    rnd = random.Random(seed)
    base = [rnd.choice("ABC") for _ in range(3)]
    keyed = rnd.random() < 0.5
    n = rnd.randint(2, 4)
    patterns = []
    for i in range(n):
        length = rnd.randint(2, 3)
        kind = rnd.choice(("prefix", "suffix", "same", "middle"))
        if kind == "prefix":
            seq = base[: length - 1] + [rnd.choice("ABC")]
        elif kind == "suffix":
            seq = [rnd.choice("ABC")] + base[-(length - 1) :]
        elif kind == "same":
            seq = base[:length]
        else:
            seq = base[1:3]
        names = "abc"[: len(seq)]
        conds = ["[k]"] if keyed else []
        if rnd.random() < 0.5:
            conds.append(f"{names[-1]}.k = a.k")
        window = rnd.choice((None, 2, 3, 5))
        text = f"PATTERN q{i}: SEQ({', '.join(f'{t} {v}' for t, v in zip(seq, names))})"
        text += f" WHERE {' AND '.join(conds)}" if conds else ""
        text += f" WITHIN {window}" if window else ""
        patterns.append(text)
    ts, rows = 0, []
    for _ in range(rnd.randint(3, 4)):
        ts += rnd.randint(1, 2)
        rows.append((rnd.choice(base), ts, rnd.randint(0, 1)))
    return "\n".join(patterns), events_of(rows)


def test_random_small_pattern_sets() -> None:
    started = time.perf_counter()
    shared = matches = states = 0
    for seed in range(60):
        text, events = random_case(seed)
        out = compare(text, events)
        shared += out.shared
        matches += sum(len(v) for v in out.merged.values())
        states += out.merged_states + out.separate_states
    elapsed = time.perf_counter() - started
    print(
        f"60 random sets: {states} states explored, {matches} matches, {shared} with sharing, {elapsed:.1f} s"
    )
    assert shared >= 25 and matches >= 50


def test_model_refuses_what_it_does_not_cover() -> None:
    for text in (
        "PATTERN SEQ(A a, !(N n), B b)",
        "PATTERN SEQ(A+ a[], B b)",
        "PATTERN SEQ(A a, B b) WHERE skip-till-next-match",
        "PATTERN SEQ(A a, B b) WITHIN 3 EVENTS",
    ):
        net = compile_text(text)
        with pytest.raises(ValueError, match="snakes model covers"):
            snakes_net(net, net.groups[0], [])


def test_the_check_catches_a_wrong_merge() -> None:
    """A merged net that forgot a pattern's own window (the shared transitions keep the
    largest, and neither they nor the emission re-check the pattern's) reaches complex
    events the pattern alone never reaches."""
    text, rows = HAND["front combination, equal guards, different windows"]
    net = compile_text(text)
    events = events_of(rows)
    (g,) = net.groups
    broken = replace(
        g,
        windows=(),
        places=tuple(
            replace(p, roles=tuple(replace(r, window=None) for r in p.roles)) if p.roles else p
            for p in g.places
        ),
    )
    wrong = explore(net, broken, events).matches
    right = explore(net, net.pattern("p2"), events).matches
    assert wrong["p2"] == right["p2"] | {(("a", 0), ("b", 2))}
