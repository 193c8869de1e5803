"""The matcher contract (``petricep.runtime.matcher``) and the one chooser
(``petricep.kernel.choice``): both engines are driven the same way -- events or column
batches in, matches out, a watermark, a snapshot put back into a fresh matcher -- and give
the same matches; every runner's engine comes from ``choose``."""

from __future__ import annotations

import pytest

from petricep import kernel
from petricep.api import compile_text
from petricep.compile.net import Net
from petricep.events import Event, EventColumns
from petricep.kernel.choice import ARCHIVE, EVENTS, NOT_BUILT, Budget, Choice, Options, choose, matcher
from petricep.kernel.engine import KernelEngine
from petricep.runtime.engine import Engine
from petricep.runtime.matcher import Matcher

pytestmark = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built")

NEG = "PATTERN p: SEQ(A a, B b, !C c) WHERE [k] AND b.x > a.x WITHIN 5\n"


def events() -> list[Event]:
    rows = [("A", 0, 1, 1), ("B", 1, 1, 2), ("A", 2, 2, 5), ("B", 3, 2, 9), ("C", 4, 2, 0), ("A", 9, 1, 0), ("B", 10, 1, 3)]
    return [Event(t, ts, i, 100 + i, {"k": k, "x": x}) for i, (t, ts, k, x) in enumerate(rows)]


def columns(evs: list[Event]) -> EventColumns:
    keys = sorted({k for e in evs for k in e.attrs})
    attrs = {k: [e.attrs[k] for e in evs] for k in keys}
    return EventColumns([e.type for e in evs], [e.ts for e in evs], [e.pos for e in evs], [e.id for e in evs], attrs)


def both(net: Net) -> list[Matcher]:
    """The kernel and the Python engine, as the chooser builds them."""
    out = []
    for engine in ("kernel", "python"):
        options = Options(engine=engine)
        out.append(matcher(choose(net, options), net, options, Budget(None)))
    return out


def test_both_engines_satisfy_the_contract_and_the_chooser_builds_them() -> None:
    net = compile_text(NEG)
    found = both(net)
    assert [type(m) for m in found] == [KernelEngine, Engine]
    assert all(isinstance(m, Matcher) for m in found)
    assert choose(net) == Choice("kernel", "covered")
    assert choose(net, Options(engine="python")) == Choice("python", "asked for")


def test_a_column_batch_a_watermark_and_a_snapshot_give_the_same_matches_on_both() -> None:
    """Push the first four events as one column batch, advance to a watermark that closes
    nothing yet, snapshot, restore into a fresh matcher, push the rest, flush: the kernel's
    matches are the Python engine's, and so is the accounting."""
    net = compile_text(NEG)
    evs = events()
    got = []
    for m in both(net):
        out = [x.to_dict() for x in m.push_columns(columns(evs[:4]))]
        out += [x.to_dict() for x in m.advance(3.5, 3) + m.drain()]
        data = m.snapshot()
        fresh: Matcher = KernelEngine(net) if isinstance(m, KernelEngine) else Engine(net)
        fresh.restore(data)
        for e in evs[4:]:
            out += [x.to_dict() for x in fresh.push(e)]
        out += [x.to_dict() for x in fresh.drain() + fresh.flush()]
        report = fresh.report()
        counts = {n: (p["matches"], p["timeouts"], p["dropped"]) for n, p in report["patterns"].items()}
        got.append((out, counts, fresh.live_partial_matches()))
    assert got[0] == got[1]
    assert got[0][0] == [
        {"pattern": "p", "ids": {"a": 100, "b": 101}, "start": 0, "end": 1, "attrs": {}},
        {"pattern": "p", "ids": {"a": 105, "b": 106}, "start": 9, "end": 10, "attrs": {}},
    ]


def test_the_chooser_says_why_the_python_engine_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    net = compile_text(NEG)
    assert choose(net, Options(engine="python", python_why="told so")) == Choice("python", "told so")
    assert choose(net, Options(archive_order="auto")).why == (
        "the auto history order admits events one by one from the matches so far"
    )
    made = compile_text("PATTERN p: SEQ(A a, B b) RETURN U(x = b.x)\n")
    assert choose(made, Options(bindings=EVENTS)) == Choice("kernel", "covered")  # (composite events' bound events too)
    assert choose(made, Options(bindings=ARCHIVE)).why.startswith("composite events in a run over an archive")
    monkeypatch.setattr("petricep.kernel.choice.available", lambda: False)
    assert choose(net) == Choice("python", NOT_BUILT)
    assert choose(net, Options(anywhere=True)) == Choice("kernel", "covered")  # (the net alone)
