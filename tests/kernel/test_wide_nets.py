"""Wide nets on the kernel.

Nets wider than the kernel once ordered (more than 64 variables in a shared net with
RETURN): the matches emitted at one event are ordered by their events' positions, every
position compared (runtime/emission.py ``_ordered``), as the Python engine orders them --
matches whose first 64 positions agree included.

Classes of compatible patterns wider than a shared net holds (``merge.MAX_SHARED`` patterns
or negations: the kernel's int64 bit masks): merge cuts them into several shared nets, each
within the limit, so they run on the kernel, with the Python engine's matches in its order,
and with the matches each pattern has alone (the unmerged net's, in order)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep import kernel, merge
from petricep.api import compile_text
from petricep.cli import main
from petricep.compile.net import Net
from petricep.events import Event
from petricep.kernel import supports
from petricep.kernel.lowering import MAX_ORDERED_SLOTS
from petricep.lang import ast as A
from petricep.lang.parser import parse_text
from petricep.merge import MAX_SHARED, build_net
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.kernel.compare import both, fresh
from tests.strategies import pattern_text, streams
from tests.test_merge import overlapping_sets

pytestmark = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built")

SETTINGS = settings(
    max_examples=int(os.environ.get("PETRICEP_EXAMPLES", "30")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
WIDE = MAX_ORDERED_SLOTS + 2  # variables a0 .. a65


def wide(name: str = "p", extra: str = "") -> str:
    """A chain of ``WIDE`` A events with x = 0, 1, 2, ... then a B: one match per choice of
    the A events where an x value repeats."""
    names = [f"a{i}" for i in range(WIDE)]
    seq = ", ".join(f"A {v}" for v in names)
    chain = " AND ".join(f"{b}.x = {a}.x + 1" for a, b in zip(names, names[1:]))
    return (
        f"PATTERN {name}: SEQ({seq}, B b) WHERE a0.x = 0 AND {chain}{extra} WITHIN 200 EVENTS "
        f"RETURN R{name}(n = b.x)\n"
    )


def chain_events(repeats: dict[int, int], noise: list[int], ts_step: list[int]) -> list[Event]:
    """x = 0 .. WIDE-1 (value ``i`` ``repeats.get(i, 1)`` times), noise C events after the
    rows at ``noise``, then two B events; timestamps rise by ``ts_step`` (cycled: ties)."""
    rows: list[tuple[str, int]] = []
    for i in range(WIDE):
        rows += [("A", i)] * repeats.get(i, 1)
        if i in noise:
            rows.append(("C", i))
    rows += [("B", 1), ("B", 2)]
    out, ts = [], 0
    for pos, (t, x) in enumerate(rows):
        ts += ts_step[pos % len(ts_step)]
        out.append(Event(t, ts, pos, pos, {"x": x}))
    return out


def test_a_wide_net_with_return_is_covered() -> None:
    net = compile_text(wide())
    assert net.groups[0].nslots > MAX_ORDERED_SLOTS
    assert supports(net) == (True, "covered")


@SETTINGS
@given(
    st.dictionaries(st.integers(0, WIDE - 1), st.integers(2, 3), max_size=3),
    st.lists(st.integers(0, WIDE - 1), max_size=3),
    st.lists(st.integers(0, 1), min_size=1, max_size=4),
    st.sampled_from(("arrival", "strict", "either")),
    st.booleans(),
)
def test_wide_nets_order_matches_by_every_position(
    repeats: dict[int, int], noise: list[int], ts_step: list[int], tie: str, two: bool
) -> None:
    """One or two wide patterns (in one shared net), many matches at one B event: the same
    matches in the same order, counts and composite events as the Python engine."""
    text = wide() + (wide("q", " AND b.x > 1") if two else "")
    events = chain_events(repeats, noise, [1] if tie == "strict" else ts_step)  # (strict: equal times never match)
    note(f"repeats={repeats} noise={noise} ts_step={ts_step} tie={tie} two={two}")
    net = compile_text(text)
    assert supports(net, tie) == (True, "covered")
    out = both(net, events, tie, len(events) // 2, sweep_every=7)
    assert out["kernel"] == out["python"]
    assert len(out["python"][0]) >= 2


# ----------------------------------------------------------------------------- classes wider than a net


def hundred() -> str:
    """100 patterns of one class (skip-till-any-match, no partition, time windows): all
    start with ``A a``, thresholds differ, every fourth has the same negation, every tenth a
    RETURN."""
    out = []
    for i in range(100):
        neg = ", !(D d)" if i % 4 == 0 else ""
        ret = f" RETURN R{i}(v = a.x)" if i % 10 == 3 else ""
        out.append(f"PATTERN p{i}: SEQ(A a, B b{neg}, C c) WHERE b.x > a.x + {i % 5} AND c.x != {i % 3} WITHIN 6{ret}\n")
    return "".join(out)


def negated(n: int = 40) -> str:
    """``n`` patterns with two negations each, none equal to another's (2 * ``n`` in all)."""
    return "".join(
        f"PATTERN p{i}: SEQ(A a, !(D d), B b, !(C c)) WHERE d.x = {i} AND c.x = {i + 1} WITHIN 4\n" for i in range(n)
    )


def mixed_events(n: int = 60) -> list[Event]:
    """A fixed pseudo-random stream over A..D, two events per timestamp."""
    xs = [(7 * i + 3) % 6 for i in range(n)]
    return [Event("ABCD"[(5 * i + i // 3) % 4], i // 2, i, i, {"x": x}) for i, x in enumerate(xs)]


def separate(text: str) -> Net:
    return build_net(list(parse_text(text, "<p>").patterns), share=False)


def python_matches(net: Net, events: list[Event], tie: str) -> list[dict[str, Any]]:
    return [m.to_dict() for m in Engine(net, tie=tie).run(fresh(events))]


@pytest.mark.parametrize("tie", ["arrival", "strict", "either"])
def test_a_hundred_compatible_patterns_run_on_the_kernel(tie: str) -> None:
    """One class of 100 patterns: two shared nets of 50, the kernel covers them; its matches,
    counts and composite events are the Python engine's, in order, and the same matches in
    the same order as each pattern run in a net of its own."""
    text = hundred()
    net = compile_text(text)
    assert [len(g.patterns) for g in net.groups] == [50, 50]
    assert [len(g.negations) for g in net.groups] == [1, 1]
    assert supports(net, tie) == (True, "covered")
    events = mixed_events()
    out = both(net, events, tie, 23, sweep_every=5)
    assert out["kernel"] == out["python"]
    assert out["python"][0] == python_matches(separate(text), events, tie)
    assert len({m["pattern"] for m in out["python"][0]}) > 60  # (both nets match)


def test_negations_cut_a_class_too() -> None:
    """40 patterns with 80 different negations: two shared nets, each within the limit."""
    text = negated()
    net = compile_text(text)
    assert len(net.groups) == 2
    assert all(len(g.negations) <= MAX_SHARED and len(g.patterns) <= MAX_SHARED for g in net.groups)
    assert sum(len(g.negations) for g in net.groups) == 80
    assert supports(net) == (True, "covered")
    events = [Event(t, i, i, i, {"x": i % 45}) for i, t in enumerate("ABADBCABCBAB" * 5)]
    out = both(net, events, "arrival", 30)
    assert out["kernel"] == out["python"]
    assert out["python"][0] == python_matches(separate(text), events, "arrival")
    assert len(out["python"][0]) > 10


def test_a_class_within_the_limit_stays_one_net() -> None:
    net = compile_text("".join(f"PATTERN p{i}: SEQ(A a, B b) WHERE b.x > {i} WITHIN 5\n" for i in range(MAX_SHARED)))
    assert [len(g.patterns) for g in net.groups] == [MAX_SHARED]
    net = compile_text("".join(f"PATTERN p{i}: SEQ(A a, B b) WHERE b.x > {i} WITHIN 5\n" for i in range(MAX_SHARED + 1)))
    assert [len(g.patterns) for g in net.groups] == [32, 31]


def test_check_and_run_say_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``petricep check`` says the kernel runs 100 patterns, and ``run`` fires them there,
    byte for byte the Python engine's output."""
    (tmp_path / "p.pcep").write_text(hundred())
    assert main(["check", str(tmp_path / "p.pcep")]) == 0
    assert "kernel: covers this net (run fires it on the kernel)" in capsys.readouterr().out
    rows = "".join(f"{e.type},{e.ts},{e.attrs['x']}\n" for e in mixed_events())
    (tmp_path / "e.csv").write_text("type,ts,x\n" + rows)
    args = ["run", str(tmp_path / "p.pcep"), "--events", str(tmp_path / "e.csv"), "--type-field", "type", "--time-field", "ts"]
    assert main([*args, "-o", str(tmp_path / "k.jsonl")]) == 0
    assert "engine: kernel\n" in capsys.readouterr().err
    assert main([*args, "--engine", "python", "-o", str(tmp_path / "p.jsonl")]) == 0
    assert "engine: python" in capsys.readouterr().err
    got = (tmp_path / "k.jsonl").read_text()
    assert got == (tmp_path / "p.jsonl").read_text() and got.count("\n") > 100


@settings(max_examples=examples(40, "PETRICEP_EXAMPLES"), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(overlapping_sets(min_patterns=MAX_SHARED + 1, max_patterns=100), st.data())
def test_wide_random_classes(patterns: list[A.Pattern], data: st.DataObject) -> None:
    """Random overlapping sets of 63..100 patterns of one class: cut into shared nets within
    the limit; on the kernel the Python engine's output (in order, counts included); on the
    Python engine the matches of the class as one shared net and those of the unmerged net,
    in order."""
    tie = data.draw(st.sampled_from(("arrival", "strict", "either")))
    if tie == "either" and patterns[0].strategy != "skip-till-any-match":
        tie = "strict"
    events = data.draw(streams(types=("A", "B", "C", "D"), max_size=12))
    note(f"tie={tie} patterns={len(patterns)}\n" + "\n".join(pattern_text(p) for p in patterns))
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    net = build_net(patterns)
    assert len(net.groups) >= 2
    assert all(len(g.patterns) <= MAX_SHARED and len(g.negations) <= MAX_SHARED for g in net.groups)
    assert supports(net, tie) == (True, "covered")
    out = both(net, events, tie, data.draw(st.integers(0, len(events))), sweep_every=3)
    assert out["kernel"] == out["python"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(merge, "MAX_SHARED", 10**6)
        whole = build_net(patterns)
    assert len(whole.groups) == 1
    for other in (whole, build_net(patterns, share=False)):
        assert out["python"][0] == python_matches(other, events, tie)
