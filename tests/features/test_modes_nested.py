"""GREEDY / RELUCTANT on a list of a SEQ inside AND or OR (issue 42).

The choice is the one a list of the pattern's SEQ makes, among the moves of the partial
match where the list grows: where one event both extends the list and binds another
variable (the step after the list, or inside AND an AND sibling), a greedy list keeps only
the extension, a reluctant one only the other move. So a greedy list's match exists only if
no event of the match bound to another variable while the list is open (started, the step
after it not bound yet) could have extended it; a reluctant list's only if none of its
elements after the first could have bound another variable (docs/SEMANTICS.md).

Hand cases on every engine; properties: the Python engine and the kernel against the
brute-force reference on random AND / OR patterns holding such a list.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from petricep.api import compile_text
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
    matches,
    run_on,
    sorted_matches,
    use_engine,
    want,
)
from tests.features.scenario import stream
from tests.strategies import streams


@pytest.fixture(autouse=True, params=ENGINES)
def matcher(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every engine (``repetition.use_engine``)."""
    yield from use_engine(request)


RISE = "a[i].x > a[i-1].x AND b.x >= a[last].x"
EVENTS = "A@0:x=1 C@1:x=0 A@2:x=2 A@3:x=3 A@4:x=3"


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # without a mode A2 and A3 both extend the list and end it ({c1} cannot skip A2 to
        # start a list at A3)
        ("", [([0], 2), ([0, 2], 3), ([2], 3), ([0, 2, 3], 4), ([2, 3], 4)]),
        # greedy: only A4 (not above 3) ends a list
        ("GREEDY", [([0, 2, 3], 4), ([2, 3], 4)]),
        # reluctant: every list ends at its first event
        ("RELUCTANT", [([0], 2), ([2], 3)]),
    ],
)
def test_in_an_and(mode: str, expected: list[tuple[list[int], int]]) -> None:
    text = f"PATTERN p: AND(SEQ(A+ a[] {mode}, A b), C c) WHERE skip-till-next-match AND {RISE}"
    # {a:[0], b:2} under GREEDY: C1 stands between, but A2 could extend the open list
    assert ids_on(text, stream(EVENTS)) == want(*({"a": a, "b": b, "c": 1} for a, b in expected))


def test_an_and_sibling_is_a_move_beside_the_list() -> None:
    # A1 both extends a = [A0] and binds c: greedy keeps the extension only
    greedy = "PATTERN p: AND(SEQ(A+ a[] GREEDY, B b), A c) WHERE skip-till-next-match"
    assert ids_on(greedy, stream("A@0 A@1 B@2 A@3 B@4")) == want(
        {"a": [0, 1], "b": 2, "c": 3}, {"a": [1], "b": 2, "c": 0}, {"a": [1], "b": 2, "c": 3}, {"a": [3], "b": 4, "c": 1}
    )
    # ... reluctant the binding of c only: no list of two
    reluctant = greedy.replace("GREEDY", "RELUCTANT")
    assert ids_on(reluctant, stream("A@0 A@1 B@2 A@3 B@4")) == want(
        {"a": [0], "b": 2, "c": 1}, {"a": [1], "b": 2, "c": 0}, {"a": [1], "b": 2, "c": 3}, {"a": [3], "b": 4, "c": 1}
    )


def test_in_an_or() -> None:
    text = f"PATTERN p: OR(SEQ(A+ a[] GREEDY, A b), SEQ(C c, A d)) WHERE skip-till-next-match AND {RISE}"
    assert ids_on(text, stream(EVENTS)) == want(
        {"a": [0, 2, 3], "b": 4}, {"a": [2, 3], "b": 4}, {"a": [3], "b": 4}, {"c": 1, "d": 2}
    )


def test_merged_with_the_list_in_another_slot() -> None:
    """Merged, q's list sits in another slot than p's, and p's list place would meet q's plain
    ``c`` list: a GREEDY place is shared only with one alike, its slot moved with the net's."""
    p = "PATTERN p: OR(SEQ(A+ a[] GREEDY, A? b), A+ c[]) WHERE skip-till-next-match"
    q = "PATTERN q: OR(A+ c[], SEQ(A+ a[] GREEDY, A? b)) WHERE skip-till-next-match"
    got = sorted((m["pattern"], str(m["ids"])) for m in matches(f"{p}\n{q}", stream("A@0 A@0")))
    alone = [str(i) for i in ({"a": [0, 1]}, {"a": [0]}, {"a": [1]}, {"c": [0, 1]}, {"c": [0]}, {"c": [1]})]
    assert got == sorted((name, i) for name in ("p", "q") for i in alone)


def test_the_kernel_covers_them() -> None:
    net = compile_text(f"PATTERN p: AND(SEQ(A+ a[] RELUCTANT, A b), C c) WHERE skip-till-next-match AND {RISE}")
    assert supports(net) == (True, "covered")


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("PATTERN p: AND(SEQ(B b, A+ a[] GREEDY), C c) WHERE skip-till-next-match", "GREEDY on a[] needs a step after the list (its choice is between the two)", 25),
        ("PATTERN p: AND(A+ a[] RELUCTANT, C c) WHERE skip-till-next-match", "RELUCTANT on a[] needs a step after the list (its choice is between the two)", 16),
        ("PATTERN p: SEQ(X x, OR(SEQ(A+ a[] GREEDY, !(N n)), C c), D d) WHERE skip-till-next-match", "GREEDY on a[] needs a step after the list", 28),
    ],
)
def test_errors(text: str, message: str, column: int) -> None:
    with pytest.raises(Exception) as err:
        parse_text(text)
    assert message in str(err.value)
    assert f"<pattern>:1:{column}:" in str(err.value)


# ----------------------------------------------------------------------------- properties


@st.composite
def nested_modes(draw: Any, name: str = "p") -> A.Pattern:
    """``AND`` or ``OR`` of a SEQ holding a (maybe bounded) list with GREEDY or RELUCTANT and
    a step after it (maybe a step before it, a negation after it), and a single step or a list
    beside it; over A and B (so one event often both extends the list and binds another
    variable); sometimes a rising list, the step after it at or above its last, ``[k]``, a
    time window; skip-till-next-match."""
    t = lambda: draw(st.sampled_from(("A", "B")))  # noqa: E731
    least = draw(st.integers(1, 2))
    most = draw(st.sampled_from([None, least, least + 1]))
    lst = A.EventRef(t(), "a", kleene=True, least=least, most=most, mode=draw(st.sampled_from(["greedy", "reluctant"])))
    steps: list[A.Node] = [lst, A.EventRef(t(), "b", optional=draw(st.integers(0, 3)) == 0)]
    if draw(st.booleans()):
        steps.insert(0, A.EventRef(t(), "e"))
    if draw(st.booleans()):
        steps.insert(steps.index(lst) + 1, A.EventRef(t(), "n", negated=True))
    other = A.EventRef(t(), "c", kleene=draw(st.integers(0, 3)) == 0)
    kids: list[A.Node] = [A.Seq(tuple(steps)), other]
    if draw(st.booleans()):
        kids.reverse()
    structure: A.Node = A.And(tuple(kids)) if draw(st.booleans()) else A.Or(tuple(kids))
    conds: list[A.Expr] = []
    if draw(st.booleans()):
        conds.append(A.Compare(">", A.Attr("a", "x", A.Index(A.IDX_CUR)), A.Attr("a", "x", A.Index(A.IDX_PREV))))
    if draw(st.booleans()):
        conds.append(A.Compare(">=", A.Attr("b", "x"), A.Attr("a", "x", A.Index(A.IDX_LAST))))
    window = A.Window(A.WIN_TIME, draw(st.integers(1, 5))) if draw(st.booleans()) else None
    part = ("k",) if draw(st.integers(0, 2)) == 0 else ()
    return A.Pattern(name, structure, tuple(conds), part, strategy=A.Strategy.NEXT, window=window)


def _checked(p: A.Pattern) -> A.Pattern:
    (out,) = parse_text(pattern_text(p)).patterns  # the language takes what was drawn
    return out


@SETTINGS
@given(st.data(), nested_modes("p"), nested_modes("q"), streams(types=("A", "B"), max_size=8))
def test_engine_equals_reference(data: Any, p: A.Pattern, q: A.Pattern, events: list[Event]) -> None:
    pats = [_checked(p)] if data.draw(st.booleans()) else [_checked(p), _checked(q)]
    tie = str(data.draw(st.sampled_from(["arrival", "strict"])))
    assert sorted_matches(run_on("python", pats, events, tie)) == sorted_matches(run_on("reference", pats, events, tie))


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not built")
@SETTINGS
@given(st.data(), nested_modes("p"), nested_modes("q"), streams(types=("A", "B"), max_size=8))
def test_kernel_equals_python_engine(data: Any, p: A.Pattern, q: A.Pattern, events: list[Event]) -> None:
    pats = [_checked(p)] if data.draw(st.booleans()) else [_checked(p), _checked(q)]
    tie = str(data.draw(st.sampled_from(["arrival", "strict"])))
    assert supports(build_net(pats), tie) == (True, "covered")
    run_on("kernel", pats, events, tie)
