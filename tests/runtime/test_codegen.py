"""Firing code generated per net (runtime/codegen.py) against the interpreter it replaces:
same matches in the same order, the same partial matches created, the same errors; and
nothing from a pattern file's text ever enters the generated source."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.lang import ast as A
from petricep.merge import build_net
from petricep.runtime import codegen
from petricep.runtime.engine import Engine
from tests.runtime.test_differential import fresh
from tests.strategies import pattern_text, patterns, streams
from tests.test_merge import overlapping_sets

SETTINGS = settings(
    max_examples=int(os.environ.get("PETRICEP_EXAMPLES", "300")), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def outcome(engine: Engine, events: list[Event]) -> tuple[list[str], int]:
    """Matches in emission order and the partial matches created."""
    got = [json.dumps(m.to_dict(), sort_keys=True) for m in engine.run(fresh(events))]
    return got, engine.stats.created


def both(net: object, events: list[Event], tie: str) -> None:
    generated = Engine(net, tie=tie)  # type: ignore[arg-type]
    assert any(rt.steps for rt in generated.runtimes)
    interpreted = Engine(net, tie=tie, generated=False)  # type: ignore[arg-type]
    assert not any(rt.steps for rt in interpreted.runtimes)
    assert outcome(generated, events) == outcome(interpreted, events)


@SETTINGS
@given(st.data())
def test_generated_equals_interpreter(data: st.DataObject) -> None:
    tie = data.draw(st.sampled_from(["arrival", "strict", "either"]))
    strategies = ["skip-till-any-match"] if tie == "either" else None
    pattern = data.draw(patterns(strategies=strategies) if strategies else patterns())
    events = data.draw(streams(max_size=12))
    note(pattern_text(pattern))
    note("\n".join(f"  {e.pos}: {e.type} ts={e.ts} {e.attrs}" for e in events))
    both(build_net([pattern]), events, tie)


@SETTINGS
@given(overlapping_sets(max_patterns=8), streams(max_size=12), st.sampled_from(["arrival", "strict"]))
def test_generated_equals_interpreter_merged(pats: list[A.Pattern], events: list[Event], tie: str) -> None:
    both(build_net(pats), events, tie)


@pytest.mark.parametrize(
    "text, events, error",
    [
        (  # on the input arc
            "PATTERN p: SEQ(A a, B b) WHERE a.x > 1 WITHIN 10",
            [Event("A", 1, 0, "a1", {"y": 5})],
            "event 'a1' (type 'A') has no field 'x'",
        ),
        (  # a guard
            "PATTERN p: SEQ(A a, B b) WHERE a.x < b.x WITHIN 10",
            [Event("A", 1, 0, "a1", {"x": 5}), Event("B", 2, 1, "b1", {"y": 1})],
            "event 'b1' (type 'B') has no field 'x'",
        ),
    ],
)
def test_missing_field_same_error(text: str, events: list[Event], error: str) -> None:
    errors = []
    for generated in (True, False):
        with pytest.raises(EvaluationError) as info:
            list(Engine(compile_text(text), generated=generated).run(fresh(events)))
        errors.append(str(info.value))
    assert errors == [error, error]


def test_special_cases_fall_back_to_the_closures() -> None:
    """An unbound OR variable (vacuous), a missing Kleene element (false), a division by
    zero (false) and a type error (the closure's error) decide as the interpreter does."""
    text = (
        "PATTERN p: SEQ(A a, OR(B b, C c), D+ d[], E e) "
        "WHERE (b.x > 0 OR c.x > 0) AND (d[3].x = 1 OR e.x > 0) AND e.y / e.x >= 0 WITHIN 20"
    )
    rows = [("A", 1), ("C", 1), ("D", 1), ("D", 1), ("E", 0), ("E", 2), ("B", 3), ("D", 1), ("D", 1), ("D", 1), ("E", 1)]
    events = [Event(t, i, i, f"{t}{i}", {"x": x, "y": 1}) for i, (t, x) in enumerate(rows)]
    net = compile_text(text)
    gen, interp = outcome(Engine(net), events), outcome(Engine(net, generated=False), events)
    assert gen == interp
    assert len(gen[0]) == 41
    bad = events[:5] + [Event("E", 5, 5, "E5", {"x": 1, "y": "text"})]
    errors = []
    for generated in (True, False):
        with pytest.raises(EvaluationError) as info:
            list(Engine(net, generated=generated).run(fresh(bad)))
        errors.append(str(info.value))
    assert errors[0] == errors[1] == "cannot compute 'text' / 1"


def test_pattern_text_never_enters_the_source(monkeypatch: pytest.MonkeyPatch) -> None:
    sources: list[str] = []
    original = codegen._Source.compile

    def capture(self: codegen._Source, name: str, label: str = "") -> object:
        sources.append("\n".join(self.lines))
        return original(self, name, label)

    monkeypatch.setattr(codegen._Source, "compile", capture)
    text = """PATTERN p: SEQ(A a, B b) WHERE a.note = '"); import os; os.system("x'
        AND b.price = a.price AND b.price > 1.5 WITHIN 10"""
    net = compile_text(text)
    events = [
        Event("A", 1, 0, "a", {"note": '"); import os; os.system("x', "price": 2}),
        Event("B", 2, 1, "b", {"price": 2}),
    ]
    got, _ = outcome(Engine(net), events)
    assert [json.loads(m)["ids"] for m in got] == [{"a": "a", "b": "b"}]
    assert sources and not any("import" in s or "system" in s or "1.5" in s or "price" in s for s in sources)


def test_inline_expression_text() -> None:
    src = codegen._Source()
    e = A.Compare("<", A.BinOp("+", A.Attr("a", "x"), A.Num(1)), A.Attr("b", "ts"))
    text = codegen.inline_expr(e, {"a": "s[0]", "b": "e"}, src)
    assert text == "((s[0].attrs[k1] + c2) < e.ts)"
    assert src.ns["k1"] == "x" and src.ns["c2"] == 1
    assert codegen.inline_expr(A.Agg("sum", "a", "x"), {"a": "s[0]"}, src) is None
