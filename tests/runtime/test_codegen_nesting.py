"""Generated firing code stays valid for any pattern ``check`` accepts (issue 15): its
nesting does not grow with the number of conditions or of terms, and where source cannot
be compiled the net and event type run the interpreter, which the stats report."""

from __future__ import annotations

import json

import pytest

from petricep.api import compile_text
from petricep.events import Event
from petricep.lang import ast as A
from petricep.runtime import codegen
from petricep.runtime.engine import Engine
from tests.runtime.test_differential import fresh

CONDITIONS_96 = " AND ".join(f"a.x + {i} > b.x - {i % 7}" for i in range(96))
# 100 terms: the front end refuses deeper expressions (lang/front.py limits), and old generated
# code already broke on 96 AND-ed conditions; the nesting of the source must not grow with either.
SUM_100 = " + ".join(["a.x"] * 100)


def stream(n: int = 30) -> list[Event]:
    """A and B events with x cycling through small values, one key."""
    return [Event("A" if i % 3 else "B", i, i, f"e{i}", {"x": (i * 7) % 11, "k": 1}) for i in range(n)]


def outcome(engine: Engine, events: list[Event]) -> tuple[list[str], int]:
    got = [json.dumps(m.to_dict(), sort_keys=True) for m in engine.run(fresh(events))]
    return got, engine.stats.created


def sources_of(monkeypatch: pytest.MonkeyPatch, text: str, tie: str = "arrival") -> list[str]:
    """The generated source of every function built for ``text``."""
    sources: list[str] = []
    original = codegen._Source.compile

    def capture(self: codegen._Source, name: str, label: str = "") -> object:
        sources.append("\n".join(self.lines))
        return original(self, name, label)

    monkeypatch.setattr(codegen._Source, "compile", capture)
    Engine(compile_text(text), tie=tie)
    monkeypatch.undo()
    return sources


def max_indent(sources: list[str]) -> int:
    return max((len(line) - len(line.lstrip(" "))) // 4 for s in sources for line in s.splitlines())


@pytest.mark.parametrize("tie", ["arrival", "strict", "either"])
@pytest.mark.parametrize(
    "where, expected",
    [(CONDITIONS_96, 15), (f"{SUM_100} > b.x * 75", 20)],
    ids=["96-conditions", "sum-of-100-terms"],
)
def test_large_conditions_run_generated_with_the_interpreters_matches(where: str, expected: int, tie: str) -> None:
    net = compile_text(f"PATTERN p: SEQ(A a, B b) WHERE [k] AND {where} WITHIN 10")
    generated = Engine(net, tie=tie)
    assert all(rt.steps for rt in generated.runtimes)
    assert generated.stats.interpreted == {}
    got = outcome(generated, stream())
    assert got == outcome(Engine(net, tie=tie, generated=False), stream())
    assert len(got[0]) == expected


def test_nesting_does_not_grow_with_conditions_or_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    small = sources_of(monkeypatch, "PATTERN p: SEQ(A a, B b) WHERE a.x + 1 > b.x AND a.x > 2 WITHIN 10")
    many = sources_of(monkeypatch, f"PATTERN p: SEQ(A a, B b) WHERE {CONDITIONS_96} WITHIN 10")
    terms = sources_of(monkeypatch, f"PATTERN p: SEQ(A a, B b) WHERE {SUM_100} > b.x WITHIN 10")
    assert max_indent(many) == max_indent(small) + 1  # one `if ok:` around each later test
    assert max_indent(terms) == max_indent(small)
    deepest = max(line.count("(") for s in terms for line in s.splitlines())
    assert deepest < codegen.MAX_DEPTH + 5


def test_deep_expressions_use_locals() -> None:
    src = codegen._Source()
    e: A.Expr = A.Attr("a", "x")
    for _ in range(60):
        e = A.BinOp("+", e, A.Num(1))
    assert codegen.inline_expr(e, {"a": "s[0]"}, src) is None  # too deep for one line, no locals
    pre: list[str] = []
    text = codegen.inline_expr(A.Compare("<", e, A.Num(0)), {"a": "s[0]"}, src, True, pre)
    assert text is not None and len(pre) == 2  # 60 levels: a local every MAX_DEPTH (24) of them
    assert all(line.split(" = ")[0].startswith("v") for line in pre)
    ns = dict(src.ns)
    ns["s"] = (Event("A", 1, 0, "a", {"x": 5}),)
    for line in pre:
        exec(line, ns)  # noqa: S102 - generated from the AST above
    assert eval(text, ns) is False  # noqa: S307 - generated from the AST above
    ns["s"] = (Event("A", 1, 0, "a", {"x": -100}),)
    for line in pre:
        exec(line, ns)  # noqa: S102
    assert eval(text, ns) is True  # noqa: S307


def test_uncompilable_source_falls_back_to_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """A net whose source the compiler refuses runs interpreted for that event type, decided
    when the engine is built; the stats and the report say where and why."""
    original = codegen._step_for

    def refuse_b(rt: object, etype: str, n: int) -> object:
        if etype == "B":
            raise SyntaxError("too many nested parentheses")
        return original(rt, etype, n)  # type: ignore[arg-type]

    monkeypatch.setattr(codegen, "_step_for", refuse_b)
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 10")
    engine = Engine(net)
    assert sorted(engine.runtimes[0].steps) == ["A"]
    assert engine.stats.interpreted == {"net 0, type 'B'": "SyntaxError: too many nested parentheses"}
    got = outcome(engine, stream())
    assert got == outcome(Engine(net, generated=False), stream())
    assert len(got[0]) == 39
    assert engine.report()["interpreted"] == {"net 0, type 'B'": "SyntaxError: too many nested parentheses"}
    monkeypatch.undo()
    assert "interpreted" not in Engine(net).report()


def test_uncompilable_fire_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    original = codegen._Source.compile

    def refuse_fire(self: codegen._Source, name: str, label: str = "") -> object:
        if name == "fire":
            raise RecursionError("maximum recursion depth exceeded during compilation")
        return original(self, name, label)

    monkeypatch.setattr(codegen._Source, "compile", refuse_fire)
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x WITHIN 10")
    engine = Engine(net, tie="either")
    assert engine.runtimes[0].fires == {}
    assert engine.stats.interpreted == {
        f"net 0, transition {tr.id}": "RecursionError: maximum recursion depth exceeded during compilation"
        for tr in engine.runtimes[0].net.transitions
    }
    monkeypatch.undo()
    events = [Event("A" if i % 2 else "B", i // 3, i, f"e{i}", {"x": i % 5, "k": 1}) for i in range(24)]
    got = outcome(engine, events)
    assert got == outcome(Engine(net, tie="either", generated=False), events)
    assert len(got[0]) == 30


@pytest.mark.parametrize("where, expected", [(CONDITIONS_96, 15), (f"{SUM_100} > b.x * 75", 20)])
def test_run_command_on_issue_15s_patterns(
    tmp_path: object, capsys: pytest.CaptureFixture[str], where: str, expected: int
) -> None:
    """`petricep run` on the two patterns that `check` passed and `run` failed on."""
    from pathlib import Path

    from petricep.cli import main

    tmp = Path(str(tmp_path))
    (tmp / "p.pcep").write_text(f"PATTERN p: SEQ(A a, B b) WHERE [k] AND {where} WITHIN 10\n")
    rows = "".join(f"{e.type},{e.ts},{e.id},{e.attrs['x']},1\n" for e in stream())
    (tmp / "ev.csv").write_text("type,ts,id,x,k\n" + rows)
    rc = main(["run", str(tmp / "p.pcep"), "--events", str(tmp / "ev.csv"), "--type-field", "type",
               "--time-field", "ts", "--id-field", "id", "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert len(out.splitlines()) == expected
    assert "Traceback" not in err


def test_a_chain_too_long_for_the_code_generator_runs_interpreted() -> None:
    """A 300-operator chain (built as an AST) with 400 frames of stack left: the interpreter
    evaluates the chain in a loop; generating code for it recurses too deep, which is caught
    when the engine is built and reported."""
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
    finally:
        sys.setrecursionlimit(limit)
    assert list(engine.stats.interpreted) == ["net 0, type 'B'"]
    assert engine.stats.interpreted["net 0, type 'B'"].startswith("RecursionError: maximum recursion depth exceeded")
    got = outcome(engine, stream())
    assert got == outcome(Engine(net, generated=False), stream())
    assert len(got[0]) == 16
