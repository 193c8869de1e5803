"""Patterns with many conditions or long expressions run (issue 15): 96 AND-ed conditions,
a sum of 100 terms, and a 300-operator chain evaluated by the interpreter in a loop, with
the match counts the reference engine finds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from petricep.api import compile_text
from petricep.events import Event
from petricep.lang import ast as A
from petricep.runtime.engine import Engine
from tests.runtime.test_differential import fresh

CONDITIONS_96 = " AND ".join(f"a.x + {i} > b.x - {i % 7}" for i in range(96))
# 100 terms: the front end refuses deeper expressions (lang/front.py limits)
SUM_100 = " + ".join(["a.x"] * 100)


def stream(n: int = 30) -> list[Event]:
    """A and B events with x cycling through small values, one key."""
    return [Event("A" if i % 3 else "B", i, i, f"e{i}", {"x": (i * 7) % 11, "k": 1}) for i in range(n)]


def outcome(engine: Engine, events: list[Event]) -> list[str]:
    return [json.dumps(m.to_dict(), sort_keys=True) for m in engine.run(fresh(events))]


@pytest.mark.parametrize("tie", ["arrival", "strict", "either"])
@pytest.mark.parametrize(
    "where, expected",
    [(CONDITIONS_96, 15), (f"{SUM_100} > b.x * 75", 20)],
    ids=["96-conditions", "sum-of-100-terms"],
)
def test_large_conditions_match(where: str, expected: int, tie: str) -> None:
    net = compile_text(f"PATTERN p: SEQ(A a, B b) WHERE [k] AND {where} WITHIN 10")
    assert len(outcome(Engine(net, tie=tie), stream())) == expected


@pytest.mark.parametrize("where, expected", [(CONDITIONS_96, 15), (f"{SUM_100} > b.x * 75", 20)])
def test_run_command_on_issue_15s_patterns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, expected: int
) -> None:
    """`petricep run` on the two patterns that `check` passed and `run` failed on."""
    from petricep.cli import main

    (tmp_path / "p.pcep").write_text(f"PATTERN p: SEQ(A a, B b) WHERE [k] AND {where} WITHIN 10\n")
    rows = "".join(f"{e.type},{e.ts},{e.id},{e.attrs['x']},1\n" for e in stream())
    (tmp_path / "ev.csv").write_text("type,ts,id,x,k\n" + rows)
    rc = main(["run", str(tmp_path / "p.pcep"), "--events", str(tmp_path / "ev.csv"), "--type-field", "type",
               "--time-field", "ts", "--id-field", "id", "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert len(out.splitlines()) == expected
    assert "Traceback" not in err


def test_a_long_chain_runs_with_little_stack() -> None:
    """A 300-operator chain (built as an AST) with 400 frames of stack left: the interpreter
    evaluates the chain in a loop, never recursing per operator."""
    import sys
    from dataclasses import replace

    from petricep.lang.parser import parse_text
    from petricep.merge import build_net

    chain: A.Expr = A.Attr("a", "x")
    for i in range(300):
        chain = A.BinOp("+" if i % 2 else "-", chain, A.Num(i % 7))
    template = parse_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 10").patterns[0]
    net = build_net([replace(template, conditions=(A.Compare("<", chain, A.Attr("b", "x")),))])
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back  # type: ignore[assignment]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 400)
    try:
        engine = Engine(net)
        got = outcome(engine, stream())
    finally:
        sys.setrecursionlimit(limit)
    assert len(got) == 16
