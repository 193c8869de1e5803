"""Numbers follow one rule (docs/SEMANTICS.md "Numbers") on every path that evaluates them:
the interpreter's closures, the numpy prefilter and the SQL row
evaluator, on random values including ±inf, NaN, 1e308, huge ints and zero divisors."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_sql, compile_text
from petricep.errors import EvaluationError
from petricep.events import Event
from petricep.lang import ast as A
from petricep.lang import sql_ast as S
from petricep.lang.printer import expr_text
from petricep.runtime.engine import Engine
from petricep.runtime.expr import as_condition, compile_expr
from petricep.runtime.prefilter import column_array, vectorize
from petricep.runtime.rowexpr import MatchView, compile_sexpr
from tests.budget import examples
from tests.runtime.test_differential import fresh

SETTINGS = settings(
    max_examples=examples(300, "PETRICEP_EXAMPLES"), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
INF, NAN = math.inf, math.nan
HUGE = 10**400

SPECIAL = [INF, -INF, NAN, 1e308, -1e308, 0, 0.0, -0.0, 1, -1, 2.5, HUGE, -(10**30), 2**53 + 1, 2**63, 5e-324]
values = st.one_of(
    st.sampled_from(SPECIAL),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**6), 10**6),
    st.integers(min_value=-(10**420), max_value=10**420),
)
# constants a pattern can write (no inf/nan literals; negative numbers are a Neg)
constants = st.one_of(
    st.sampled_from([1e308, 0, 0.0, 1, 2.5, HUGE, 2**53 + 1, 10**30]),
    st.floats(min_value=0, allow_nan=False, allow_infinity=False),
    st.integers(0, 10**6),
)


def exprs(leaves: st.SearchStrategy[A.Expr]) -> st.SearchStrategy[A.Expr]:
    return st.recursive(
        leaves,
        lambda sub: st.one_of(
            st.builds(A.BinOp, st.sampled_from(A.ARITH_OPS), sub, sub),
            st.builds(A.Neg, sub),
        ),
        max_leaves=5,
    )


def conditions(leaves: st.SearchStrategy[A.Expr]) -> st.SearchStrategy[A.Expr]:
    return st.builds(A.Compare, st.sampled_from(A.COMPARE_OPS), exprs(leaves), exprs(leaves))


one_var_leaves = st.one_of(st.builds(A.Num, constants), st.just(A.Attr("a", "x")))

@SETTINGS
@given(conditions(one_var_leaves), st.lists(values, min_size=1, max_size=8))
def test_prefilter_never_contradicts_the_interpreter(cond: A.Expr, xs: list[Any]) -> None:
    """Where the numpy filter decides a row, it decides as the engine; a row the engine fails
    on (an overflow error) is never dropped."""
    note(expr_text(cond))
    vec = vectorize(cond, "a")
    if vec is None:  # + - * and comparisons over one variable are vectorised, / and % not
        assert any(isinstance(n, A.BinOp) and n.op in "/%" for n in A.walk_expr(cond))
        return
    verdict = vec({"x": lambda: column_array(xs)})
    closure = as_condition(compile_expr(cond, {"a": 0}, {}))
    for i, x in enumerate(xs):
        try:
            expected: bool | None = closure((Event("A", 0, i, f"e{i}", {"x": x}),), None)
        except EvaluationError:
            expected = None
        if verdict is None:
            continue
        got = bool(np.broadcast_to(np.asarray(verdict, dtype=bool), (len(xs),))[i])
        assert expected is not None and got == expected or expected is None and got, (x, got, expected)


def test_prefilter_decides_ieee_values_and_declines_inexact_ints() -> None:
    big = A.Compare(">", A.BinOp("*", A.Attr("a", "x"), A.Num(1e308)), A.Num(1.0))
    vec = vectorize(big, "a")
    assert vec is not None
    got = vec({"x": lambda: column_array([10.0, NAN, -INF, 0.0, -1e-300])})
    assert got is not None and got.tolist() == [True, False, False, False, False]
    # int64 would wrap around: 2**40 * 2**40 is beyond 2**53, so the batch is left to the engine
    wrap = A.Compare(">", A.BinOp("*", A.Attr("a", "x"), A.Attr("a", "x")), A.Num(0))
    assert vectorize(wrap, "a")({"x": lambda: column_array([2**40, 3])}) is None  # type: ignore[misc]
    assert vectorize(wrap, "a")({"x": lambda: column_array([2**20, 3])}).tolist() == [True, True]  # type: ignore[misc, union-attr]
    # a big int among floats would be rounded by numpy: left to the engine
    eq = A.Compare(">", A.Attr("a", "x"), A.Num(float(2**53)))
    assert vectorize(eq, "a")({"x": lambda: column_array([2**53 + 1, 0.5])}) is None  # type: ignore[misc]
    assert vectorize(eq, "a")({"x": lambda: column_array([HUGE, 1])}) is None  # type: ignore[misc]
    assert vectorize(A.Compare(">", A.Attr("a", "x"), A.Num(HUGE)), "a")({"x": lambda: column_array([1])}) is None  # type: ignore[misc]


def sql_of(e: A.Expr) -> S.SExpr:
    """The same arithmetic as a SQL expression over literals."""
    if isinstance(e, A.Num):
        return S.Lit(e.value)
    if isinstance(e, A.Neg):
        return S.Op("neg", (sql_of(e.operand),))
    assert isinstance(e, (A.BinOp, A.Compare))
    return S.Op(e.op, (sql_of(e.left), sql_of(e.right)))


def literals(e: A.Expr, xs: list[Any]) -> A.Expr:
    """``e`` with each variable read replaced by the next value of ``xs`` (as a constant)."""
    if isinstance(e, A.Attr):
        return A.Num(xs.pop())
    if isinstance(e, A.Neg):
        return A.Neg(literals(e.operand, xs))
    if isinstance(e, (A.BinOp, A.Compare)):
        return replace(e, left=literals(e.left, xs), right=literals(e.right, xs))
    return e


@SETTINGS
@given(conditions(one_var_leaves), st.lists(values, min_size=12, max_size=12))
def test_rows_follow_the_same_rule(cond: A.Expr, xs: list[Any]) -> None:
    """SQL differs only where SQL says so: a division by zero is NULL (a DEFINE is then not
    TRUE, as a pattern condition reading it is false). Overflow is the same error."""
    e = literals(cond, list(xs))
    note(repr(e))
    closure = as_condition(compile_expr(e, {}, {}))
    try:
        expected: Any = closure((), None)
    except EvaluationError as exc:
        expected = f"error: {str(exc).split(' (')[0]}"
    view = MatchView((), 0, lambda i: None, 1, {})
    try:
        got: Any = compile_sexpr(sql_of(e))(view) is True  # a DEFINE holds when TRUE, not NULL
    except EvaluationError as exc:
        got = f"error: {exc}"
    assert got == expected


# ---------------------------------------------------------------------- the rule, case by case


def run(text: str, rows: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    events = [Event(t, i, i, f"{t.lower()}{i}", {"x": x}) for i, (t, x) in enumerate(rows)]
    return [m.to_dict() for m in Engine(compile_text(text)).run(fresh(events))]


def test_float_overflow_is_infinity_and_nan_compares_false() -> None:
    text = "PATTERN p: SEQ(A a, B b) WHERE a.x * 1e308 > b.x WITHIN 10"
    rows = [("A", 10.0), ("B", 1e308), ("B", INF), ("B", NAN), ("B", -INF)]
    assert [m["ids"] for m in run(text, rows)] == [{"a": "a0", "b": "b1"}, {"a": "a0", "b": "b4"}]
    ne = "PATTERN p: SEQ(A a, B b) WHERE a.x != b.x WITHIN 10"  # IEEE: NaN != anything
    assert [m["ids"]["b"] for m in run(ne, [("A", NAN), ("B", NAN), ("B", 1)])] == ["b1", "b2"]


def test_division_by_zero_is_false_in_conditions_and_null_in_return() -> None:
    text = "PATTERN p: SEQ(A a, B b) WHERE a.x / b.x < 1 OR b.x = 0 WITHIN 10 RETURN R(q = a.x / b.x, r = a.x % b.x)"
    got = run(text, [("A", 1), ("B", 0), ("B", 0.0), ("B", 2)])
    assert [m["attrs"] for m in got] == [{"q": None, "r": None}, {"q": None, "r": None}, {"q": 0.5, "r": 1}]
    assert run("PATTERN p: SEQ(A a, B b) WHERE a.x / b.x < 1 WITHIN 10", [("A", 1), ("B", 0)]) == []


def test_return_keeps_non_finite_floats_in_the_match() -> None:
    text = "PATTERN p: SEQ(A a, B b) WITHIN 10 RETURN R(d = a.x + a.x, n = b.x - b.x)"
    (m,) = run(text, [("A", 1e308), ("B", INF)])
    assert m["attrs"]["d"] == INF and math.isnan(m["attrs"]["n"])


@pytest.mark.parametrize(
    "where, rows, message",
    [
        (
            "a.x * 1e308 > b.x",
            [("A", HUGE), ("B", 1)],
            "pattern 'p': number too large for a float: <integer of 401 digits> * 1e+308 (field 'x' of event 'a0')",
        ),
        # a 401-digit constant in the pattern text is refused by the front end (lang/front.py limits)
        (
            "a.x / 3 > b.x",
            [("A", -HUGE), ("B", 1)],
            "pattern 'p': number too large for a float: <-integer of 401 digits> / 3 (field 'x' of event 'a0')",
        ),
    ],
)
def test_int_too_large_for_a_float_is_a_typed_error(where: str, rows: list[Any], message: str) -> None:
    with pytest.raises(EvaluationError) as info:
        run(f"PATTERN p: SEQ(A a, B b) WHERE {where} WITHIN 10", rows)
    assert str(info.value) == message


def test_overflow_in_return_and_aggregates_names_the_pattern() -> None:
    with pytest.raises(EvaluationError) as info:
        run("PATTERN q: SEQ(A a, B b) WITHIN 10 RETURN R(d = a.x * 0.5)", [("A", HUGE), ("B", 1)])
    assert str(info.value) == (
        "pattern 'q': number too large for a float: <integer of 401 digits> * 0.5 (field 'x' of event 'a0')"
    )
    with pytest.raises(EvaluationError) as info:
        run("PATTERN k: SEQ(A+ a[], B b) WHERE sum(a[].x) > 0 WITHIN 10", [("A", 0.5), ("A", HUGE), ("B", 1)])
    assert str(info.value) == (
        "pattern 'k': number too large for a float: sum(...[].x) adding <integer of 401 digits> (event 'a1')"
    )


def test_min_max_of_a_list_holding_nan_is_nan() -> None:
    text = "PATTERN p: SEQ(A+ a[], B b) WITHIN 10 RETURN R(lo = min(a[].x), hi = max(a[].x))"
    for rows in ([("A", 1.0), ("A", NAN), ("A", 3.0)], [("A", NAN), ("A", 1.0)], [("A", 1.0), ("A", NAN)]):
        got = run(text, [*rows, ("B", 0)])
        full = [m["attrs"] for m in got if len(m["ids"]["a"]) == len(rows)]
        assert len(full) == 1 and math.isnan(full[0]["lo"]) and math.isnan(full[0]["hi"])


def test_sql_overflow_names_the_query() -> None:
    net = compile_sql(
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.x / 3 AS d ONE ROW PER MATCH "
        "PATTERN (A B) DEFINE A AS A.x > 0, B AS B.x > 0)",
        name="q",
    )
    events = [Event("t", 0, 0, "r0", {"x": HUGE}), Event("t", 1, 1, "r1", {"x": 1})]
    with pytest.raises(EvaluationError) as info:
        list(Engine(net).run(fresh(events)))
    assert str(info.value) == "query 'q': number too large for a float: <integer of 401 digits> / 3"


def test_run_command_names_file_position_pattern_and_field(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 15's `a 400-digit cell divided`: one typed error, no traceback."""
    from pathlib import Path

    from petricep.cli import main

    tmp = Path(str(tmp_path))
    (tmp / "p.pcep").write_text("PATTERN p: SEQ(A a, B b) WHERE a.x / 3 > b.x WITHIN 10\n")
    (tmp / "ev.csv").write_text(f"type,ts,id,x\nA,1,a1,{'7' * 400}\nB,2,b1,1\n")
    rc = main(["run", str(tmp / "p.pcep"), "--events", str(tmp / "ev.csv"), "--type-field", "type",
               "--time-field", "ts", "--id-field", "id", "--no-progress"])
    _, err = capsys.readouterr()
    # the reader refuses a numeric cell that does not fit a float64 (docs/INPUT.md), before the
    # engine could divide it: one typed error naming file, line and field
    assert rc == 3
    assert err == (
        f"{tmp / 'ev.csv'}:2: field 'x': error: expected a number, got '{'7' * 40}'... (400 characters): "
        "a number must be finite and fit a float64, in at most 400 characters\n"
    )
