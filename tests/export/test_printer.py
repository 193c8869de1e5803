"""The expression printer: pattern-file text that parses back to the same AST, and Python."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings

from petricep.lang import ast as A
from petricep.lang.check import flatten_seq
from petricep.lang.parser import parse_file, parse_text
from petricep.lang.printer import conditions_text, expr_text, node_text, pattern_text, window_text
from tests.budget import examples
from tests.strategies import patterns

ROOT = Path(__file__).resolve().parents[2]


def where(text: str) -> A.Expr:
    """One condition (no top-level AND: that would be several conjuncts)."""
    (p,) = parse_text(f"PATTERN SEQ(A a, B+ b[], C c) WHERE {text}").patterns
    (c,) = p.conditions
    return c


def test_shipped_patterns_print_and_parse_back() -> None:
    files = sorted((ROOT / "nets").glob("*.pcep"))
    assert files
    for f in files:
        for p in parse_file(f).patterns:
            (again,) = parse_text(pattern_text(p), f.name).patterns
            assert again == p, pattern_text(p)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patterns(min_window=1))
def test_random_patterns_print_and_parse_back(p: A.Pattern) -> None:
    (again,) = parse_text(pattern_text(p)).patterns
    # the parser flattens SEQ(a, SEQ(b, c)) into SEQ(a, b, c) and keeps the unit "EVENTS" as written
    assert again == replace(p, structure=flatten_seq(p.structure), window=again.window)
    assert window_text(again.window) == window_text(p.window)
    for c in p.conditions:
        compile(expr_text(c, python=True), "<guard>", "eval")  # valid Python


def test_expressions_keep_only_needed_parentheses() -> None:
    cases = {
        "a.x + c.x * 2 > 3": "a.x + c.x * 2 > 3",
        "(a.x + c.x) * 2 > 3": "(a.x + c.x) * 2 > 3",
        "a.x - (c.x - 1) = 0": "a.x - (c.x - 1) = 0",
        "NOT (a.x = 1 OR c.x = 2)": "NOT (a.x = 1 OR c.x = 2)",
        "(a.x = 1 OR c.x = 2)": "a.x = 1 OR c.x = 2",
        "(a.x = 1 AND c.x = 2) OR a.y = 3": "(a.x = 1 AND c.x = 2) OR a.y = 3",
        "b[i].x > b[i-1].x": "b[i].x > b[i-1].x",
        "b[1].x < b[last].x": "b[1].x < b[last].x",
        "count(b[]) >= 2": "count(b[]) >= 2",
        "avg(b[].x) > sum(b[].x) / 2": "avg(b[].x) > sum(b[].x) / 2",
        "b[i].x > min(b[..i-1].x)": "b[i].x > min(b[..i-1].x)",
        "a.x = 1 OR NOT c.x < 2 AND c.y = 1": "a.x = 1 OR (NOT (c.x < 2) AND c.y = 1)",
        'a.s != "it\'s"': 'a.s != "it\'s"',
        "a.x <> -3": "a.x != -3",
        "-(a.x) < 2": "-a.x < 2",
        "a.x == 1.5": "a.x = 1.5",
    }
    for text, printed in cases.items():
        assert expr_text(where(text)) == printed, text


def test_python_rendering() -> None:
    assert expr_text(where("a.x = 1 OR NOT (c.y < 2)"), python=True) == "a.x == 1 or not (c.y < 2)"
    assert expr_text(where("count(b[]) > 2"), python=True) == "len(b) > 2"
    assert expr_text(where("sum(b[].x) > a.x"), python=True) == "sum(_e.x for _e in b) > a.x"
    assert expr_text(where("avg(b[].x) > 1"), python=True) == "(sum(_e.x for _e in b) / len(b)) > 1"
    assert expr_text(where("b[i].x > min(b[..i-1].x)"), python=True) == "b[i].x > min(_e.x for _e in b[:i])"
    assert expr_text(where("b[1].x < b[last].x"), python=True) == "b[0].x < b[-1].x"
    assert expr_text(where("a.s = 'x'"), python=True) == "a.s == 'x'"
    # evaluates like the condition
    env = {"a": SimpleNamespace(x=1), "c": SimpleNamespace(y=3)}
    assert eval(expr_text(where("a.x = 2 OR NOT (c.y < 2)"), python=True), env) is True  # noqa: S307
    assert eval(expr_text(where("a.x = 2 OR NOT (c.y < 4)"), python=True), env) is False  # noqa: S307


def test_names_and_keywords() -> None:
    e = A.Compare(">", A.Attr("#1", "x"), A.Attr("#0", "class"))
    assert expr_text(e, {"#0": "a", "#1": "b"}) == "b.x > a.class"
    assert expr_text(e, {"#0": "a", "#1": "in"}, python=True) == "in_.x > getattr(a, 'class')"


def test_structure_and_window() -> None:
    (p,) = parse_text("PATTERN SEQ(A a, !(N n), OR(B+ b[], AND(C c, D d))) WITHIN 20 EVENTS").patterns
    assert node_text(p.structure) == "SEQ(A a, !(N n), OR(B+ b[], AND(C c, D d)))"
    assert window_text(p.window) == "20 EVENTS"
    assert window_text(A.Window(A.WIN_DURATION, 12, "h")) == "12 h"
    assert window_text(A.Window(A.WIN_TIME, 2.5)) == "2.5"
    assert window_text(None) == ""


def test_conditions_text_keeps_or_conjuncts_apart() -> None:
    (p,) = parse_text("PATTERN SEQ(A a, B b) WHERE (a.x = 1 OR b.x = 2) AND b.y > a.y").patterns
    assert conditions_text(p.conditions) == "(a.x = 1 OR b.x = 2) AND b.y > a.y"
