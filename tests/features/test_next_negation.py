"""A negation under skip-till-next-match and GREEDY / RELUCTANT (docs/SEMANTICS.md,
"Strategies"): an event that would bind the step after a negation (its Q) while an event
the negation forbids stands after P does not extend the partial match, where the negation
is decided while the partial match waits (its conditions read what is bound before Q); one
decided on the complete match lets the event extend it, and that match fails.

Hand cases on every engine; a property comparing the Python engine and the kernel with the
brute-force reference (tests/reference_negation.py) on SEQs with a list before a negation and
its conditions reading P, P's list, a step before, Q or a step after.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from petricep.compile.compiler import compile_pattern
from petricep.events import Event
from petricep.kernel.lowering import supports
from petricep.lang import ast as A
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.features.repetition import (
    ENGINES,
    SETTINGS,
    ids_on,
    kernel_built,
    run_on,
    sorted_matches,
    use_engine,
    want,
    with_modes,
)
from tests.features.scenario import stream
from tests.strategies import OPS, streams

LIST = "PATTERN p: SEQ(A+ a[], !(N n), D d) WHERE skip-till-next-match"
SPEC = "A@0:x=0 N@1:x=1 D@2:x=1 A@3:x=0 D@4:x=1"


@pytest.fixture(autouse=True, params=ENGINES)
def matcher(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every engine (``repetition.use_engine``)."""
    yield from use_engine(request)


@pytest.mark.parametrize(
    ("where", "pushed", "expected"),
    [
        # N1 forbids D2 to [a0]: D2 does not extend it, A3 does ([a0, a3], N1 before a3)
        ("", True, [{"a": [0, 3], "d": 4}, {"a": [3], "d": 4}]),
        ("AND n.x > 0", True, [{"a": [0, 3], "d": 4}, {"a": [3], "d": 4}]),
        # decided on the complete match (reads d, or the list still open): D2 extends [a0]
        ("AND n.x = d.x", False, [{"a": [3], "d": 4}]),
        ("AND n.x > a[last].x", False, [{"a": [3], "d": 4}]),
    ],
)
def test_a_list_before_a_negation(where: str, pushed: bool, expected: list[dict[str, Any]]) -> None:
    (p,) = parse_text(f"{LIST} {where}").patterns
    assert compile_pattern(p).negations[0].pushed is pushed
    assert ids_on(f"{LIST} {where}", stream(SPEC)) == want(*expected)


def test_reluctant_with_a_negation_after_the_list() -> None:
    # B1 forbids A2 to b of [a0]: A2 extends the list (no step to leave it to), A3 is b
    text = "PATTERN p: SEQ(A+ a[] RELUCTANT, !(B n), A b) WHERE skip-till-next-match"
    assert ids_on(text, stream("A@0 B@0 A@0 A@0")) == want({"a": [0, 2], "b": 3}, {"a": [2], "b": 3})


# ----------------------------------------------------------------------------- property


@st.composite
def list_negations(draw: Any, name: str = "p") -> A.Pattern:
    """``SEQ([E e,] T+ a[], !(N n), T b[, T c])`` over A and B under skip-till-next-match (a
    mode on the list sometimes), the negation's condition reading the list's first or last
    element, a count, ``e``, ``b``, ``c`` or a constant."""
    t = lambda: draw(st.sampled_from(("A", "B")))  # noqa: E731
    kids: list[A.Node] = [A.EventRef(t(), "a", kleene=True), A.EventRef(t(), "n", negated=True), A.EventRef(t(), "b")]
    if draw(st.booleans()):
        kids.insert(0, A.EventRef(t(), "e"))
    if draw(st.booleans()):
        kids.append(A.EventRef(t(), "c"))
    names = {k.var for k in kids if isinstance(k, A.EventRef)}
    reads: list[A.Expr] = [A.Num(draw(st.integers(0, 5))), A.Attr("a", "x", A.Index(A.IDX_CONST, 1)),
                           A.Attr("a", "x", A.Index(A.IDX_LAST)), A.Agg("count", "a", None), A.Attr("b", "x")]
    reads += [A.Attr(v, "x") for v in ("e", "c") if v in names]
    conds: list[A.Expr] = []
    if draw(st.integers(0, 3)) > 0:
        conds.append(A.Compare(draw(st.sampled_from(OPS)), A.Attr("n", "x"), draw(st.sampled_from(reads))))
    window = A.Window(A.WIN_TIME, draw(st.integers(1, 5))) if draw(st.booleans()) else None
    p = A.Pattern(name, A.Seq(tuple(kids)), tuple(conds), ("k",) if draw(st.integers(0, 2)) == 0 else (),
                  strategy=A.Strategy.NEXT, window=window)
    p = with_modes(draw, p)
    return replace(p, structure=parse_text(pattern_text(p)).patterns[0].structure)


@SETTINGS
@given(st.data(), list_negations("p"), list_negations("q"), streams(types=("A", "B"), max_size=8))
def test_engines_equal_reference(data: Any, p: A.Pattern, q: A.Pattern, events: list[Event]) -> None:
    pats = [p] if data.draw(st.booleans()) else [p, q]
    tie = str(data.draw(st.sampled_from(["arrival", "strict"])))
    assert sorted_matches(run_on("python", pats, events, tie)) == sorted_matches(run_on("reference", pats, events, tie))
    if kernel_built():
        assert supports(build_net(pats), tie) == (True, "covered")
        run_on("kernel", pats, events, tie)
