"""The kernel behind a slack's reorder stage (``petricep.runtime.matcher.Reordered``) and
the kernel an event at a time (standard input) against the Python engine: on random patterns
and streams shuffled within a bounded disorder, the same matches in the same order, the same
late events (each with its watermark) and the same accounting."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from petricep import kernel
from petricep.api import compile_files
from petricep.api.runner import Run
from petricep.compile.net import Net
from petricep.events import Event
from petricep.io import InputSpec
from petricep.io.textfiles import use_stdin
from petricep.kernel.choice import Budget, Options, choose, matcher
from petricep.kernel.engine import KernelEngine
from petricep.lang.parser import parse_text
from petricep.merge import build_net
from petricep.runtime.matcher import Reordered
from tests.budget import examples
from tests.kernel.compare import fresh
from tests.strategies import pattern_text, patterns, streams

pytestmark = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built")

SETTINGS = settings(
    max_examples=examples(150, "PETRICEP_EXAMPLES"),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def disordered(events: list[Event], seed: int, spread: int) -> list[Event]:
    """``events`` with each one's arrival moved by up to ``spread`` places (ids kept)."""
    rnd = random.Random(seed)
    keyed = sorted(enumerate(events), key=lambda x: x[0] + rnd.uniform(0, spread))
    return [Event(e.type, e.ts, i, e.id, dict(e.attrs)) for i, (_, e) in enumerate(keyed)]


def drive(net: Net, events: list[Event], slack: int, engine: str, stdin: bool = False) -> tuple[Any, ...]:
    """The chooser's matcher for ``engine`` under ``slack``: matches, late events (id and
    watermark), per-pattern counts and the events' accounting."""
    late: list[tuple[Any, Any]] = []
    options = Options(engine=engine, slack=slack, stdin=stdin)
    found = matcher(choose(net, options), net, options, Budget(None, on_late=lambda e, mark: late.append((e.id, mark))))
    assert isinstance(found, Reordered) == (engine == "kernel")
    out = []
    for e in fresh(events):
        out += [m.to_dict() for m in found.push(e)]
    out += [m.to_dict() for m in found.drain() + found.flush()]
    report = found.report()
    counts = {n: (p["matches"], p["timeouts"], p["dropped"]) for n, p in report["patterns"].items()}
    return out, late, counts, report["events"]


@SETTINGS
@given(
    patterns(name="p0", returns=False),
    st.none() | patterns(name="p1", returns=False),
    streams(max_size=14),
    st.integers(0, 3),
    st.integers(0, 10**6),
    st.integers(0, 4),
)
def test_the_kernel_behind_a_reorder_stage_is_the_python_engines_slack(
    first: Any, second: Any, events: list[Event], slack: int, seed: int, spread: int
) -> None:
    pats = [first] if second is None else [first, second]
    for p in pats:
        note(pattern_text(p))
    net = build_net(pats)
    assume(choose(net).kernel)
    shuffled = disordered(events, seed, spread)
    note(f"slack={slack}: " + ", ".join(f"{e.type}@{e.ts}#{e.id}" for e in shuffled))
    k, py = drive(net, shuffled, slack, "kernel"), drive(net, shuffled, slack, "python")
    assert k == py


def test_a_late_event_on_the_kernel_is_the_python_engines() -> None:
    """A fixed case: B@1 arrives after A@4 under slack 2 (watermark 2): late on both."""
    net = build_net([parse_text("PATTERN p: SEQ(A a, B b) WITHIN 5\n").patterns[0]])
    evs = [Event(t, ts, i, i, {}) for i, (t, ts) in enumerate([("A", 0), ("A", 4), ("B", 1), ("B", 3), ("B", 5)])]
    k, py = drive(net, evs, 2, "kernel"), drive(net, evs, 2, "python")
    assert k == py
    assert [m["ids"] for m in k[0]] == [{"a": 0, "b": 3}, {"a": 0, "b": 4}, {"a": 1, "b": 4}]
    assert k[1] == [(2, 2)] and k[3] == {"read": 5, "processed": 4, "rejected": 0, "late": 1, "composite": 0}


class Lines:
    """Standard input that gives one line per read, counting the reads."""

    def __init__(self, text: str) -> None:
        self.lines = [line.encode() for line in text.splitlines(keepends=True)]
        self.reads = 0

    def read1(self, n: int = -1) -> bytes:
        self.reads += 1
        return self.lines.pop(0) if self.lines else b""

    read = read1


def test_standard_input_fires_each_event_as_it_is_read(tmp_path: Path) -> None:
    """Over standard input each match leaves after as many lines are read on the kernel (a
    read's lines at a time) as on ``--engine python`` (the first before the last line is
    read); the report says kernel."""
    pf = tmp_path / "p.pcep"
    pf.write_text("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 5\n")
    text = "type,ts,k\nA,0,1\nB,1,1\nA,2,2\nB,3,2\nA,4,3\n"
    got: dict[str, Any] = {}
    for engine in ("kernel", "python"):
        raw = Lines(text)
        use_stdin(raw)  # type: ignore[arg-type]
        try:
            spec = InputSpec("-", format="csv", type_field="type", time_field="ts")
            run = Run(compile_files([str(pf)]), spec, engine=engine)
            seen = [(m.to_dict()["ids"], raw.reads) for m in run]
        finally:
            use_stdin(None)
        got[engine] = (seen, run.report()["engine"])
        assert isinstance(run.engine, KernelEngine) == (engine == "kernel")
    assert got["kernel"][0] == got["python"][0]
    assert [ids for ids, _ in got["kernel"][0]] == [{"a": 0, "b": 1}, {"a": 2, "b": 3}]
    assert got["kernel"][0][0][1] < 5  # (the first match before the last lines were read)
    assert got["kernel"][1] == {"name": "kernel", "why": "covered"}
