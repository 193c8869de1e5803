"""Optional steps (issue 42): ``T? v``, a step of a SEQ that a match may leave out. Its
variable is then unbound: absent from the match's ids (as a variable of an OR branch not
taken), null in RETURN, and every WHERE conjunct reading it holds.

Hand cases run on every engine (the brute-force reference, the Python engine, the kernel:
``repetition.run_on``); the expected ids were worked out by hand from docs/SEMANTICS.md. The
hypothesis properties compare the Python engine and the kernel with the reference on random
patterns with optional steps and bounded lists, alone and merged, under every strategy and tie
rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import PatternSemanticError
from petricep.events import Event
from petricep.export.model import build_diagram
from petricep.kernel.lowering import supports
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from petricep.merge import build_net
from tests.features.repetition import (
    ENGINES,
    SETTINGS,
    has_forms,
    ids_on,
    kernel_built,
    matches,
    repetitions,
    run_on,
    sorted_matches,
    use_engine,
    want,
)
from tests.features.scenario import stream
from tests.strategies import patterns, streams, tie_rules

ABC = "PATTERN p: SEQ(A a, B? b, C c)"


@pytest.fixture(autouse=True, params=ENGINES)
def matcher(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every engine, in place of conftest.py's two (``repetition.use_engine``)."""
    yield from use_engine(request)


# ----------------------------------------------------------------------------- hand cases


def test_with_and_without_the_step() -> None:
    assert ids_on(ABC, stream("A@0 B@1 C@2")) == want({"a": 0, "c": 2}, {"a": 0, "b": 1, "c": 2})


def test_a_condition_reading_an_absent_step_holds() -> None:
    # b.x > 1 refuses B1 as b, not the match without b; B2 is a b
    text = f"{ABC} WHERE b.x > 1 AND c.x >= b.x"
    got = ids_on(text, stream("A@0:x=0 B@1:x=1 B@2:x=2 C@3:x=5"))
    assert got == want({"a": 0, "c": 3}, {"a": 0, "b": 2, "c": 3})


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # B1 can extend {a0}: the match that skips it does not exist; {a0,b1} then takes C2 only
        ("A@0 B@1 C@2 C@3", [{"a": 0, "b": 1, "c": 2}]),
        # C1 ends {a0} without b: the partial match is taken, B2 finds none to extend
        ("A@0 C@1 B@2 C@3", [{"a": 0, "c": 1}]),
    ],
)
def test_skip_till_next_match(spec: str, expected: list[dict[str, int]]) -> None:
    assert ids_on(f"{ABC} WHERE skip-till-next-match", stream(spec)) == want(*expected)


def test_optional_first_step() -> None:
    got = ids_on("PATTERN p: SEQ(A? a, B b)", stream("A@0 B@1 B@2"))
    assert got == want({"b": 1}, {"a": 0, "b": 1}, {"b": 2}, {"a": 0, "b": 2})


def test_optional_last_step_is_null_in_return() -> None:
    # {a0} is complete at A0 (emitted there), {a0,b1} at B1
    text = "PATTERN p: SEQ(A a, B? b) RETURN T(a = a.id, bx = b.x)"
    out = matches(text, stream("A@0:x=1 B@1:x=7"))
    assert [(m["ids"], m["attrs"]) for m in out] == [({"a": 0}, {"a": 0, "bx": None}), ({"a": 0, "b": 1}, {"a": 0, "bx": 7})]


def test_strict_contiguity_with_two_optional_steps() -> None:
    text = "PATTERN p: SEQ(A a, B? b, C? c, D d) WHERE strict-contiguity"
    got = ids_on(text, stream("A@0 B@1 D@2 A@3 D@4 A@5 C@6 D@7 A@8 B@9 C@10 D@11"))
    assert got == want(
        {"a": 0, "b": 1, "d": 2}, {"a": 3, "d": 4}, {"a": 5, "c": 6, "d": 7}, {"a": 8, "b": 9, "c": 10, "d": 11}
    )


def test_tie_rule_strict_refuses_a_tied_optional_step() -> None:
    assert ids_on(ABC, stream("A@0 B@0 C@1"), "strict") == want({"a": 0, "c": 2})
    assert ids_on(ABC, stream("A@0 B@0 C@1"), "arrival") == want({"a": 0, "c": 2}, {"a": 0, "b": 1, "c": 2})


def test_negation_after_the_step_after_an_optional_one() -> None:
    text = "PATTERN p: SEQ(A a, B? b, C c, !(D d), E e)"
    got = ids_on(text, stream("A@0 C@1 D@2 C@3 E@4"))
    assert got == want({"a": 0, "c": 3, "e": 4})


def test_in_an_and_with_a_window() -> None:
    # AND(SEQ(A a, B? b), C c) WITHIN 2: b at most 2 after the earliest bound event
    text = "PATTERN p: AND(SEQ(A a, B? b), C c) WITHIN 2"
    got = ids_on(text, stream("A@0 C@1 B@3"))
    assert got == want({"a": 0, "c": 1})


def test_composite_events_name_the_bound_steps() -> None:
    text = f"{ABC} RETURN T(n = a.ts)\nPATTERN q: SEQ(T t, E e)"
    out = matches(text, stream("A@0 B@1 C@2 E@3"))
    assert sorted(m["ids"]["t"] for m in out if m["pattern"] == "q") == ["p[0,1,2]", "p[0,2]"]


def test_with_a_bounded_list() -> None:
    text = "PATTERN p: SEQ(A{2} a[], B? b, C c)"
    got = ids_on(text, stream("A@0 A@1 B@2 C@3"))
    assert got == want({"a": [0, 1], "c": 3}, {"a": [0, 1], "b": 2, "c": 3})


def test_the_kernel_covers_optional_steps_and_the_net_passes_over_them() -> None:
    net = compile_text("PATTERN p: SEQ(A a, B? b, C c) WHERE b.x > a.x WITHIN 5")
    assert supports(net) == (True, "covered")
    (p,) = net.patterns
    moves = sorted((p.places[t.src].label, t.var, p.places[t.dst].label) for t in p.transitions)
    assert moves == [("a", "b", "a;b"), ("a", "c", "a;c"), ("a;b", "c", "a;b;c"), ("start", "a", "a")]
    labels = {n.label[0] for n in build_diagram(net, merged=False).nodes if n.label}
    assert {"C c", "B b", "a;c", "a;b;c"} <= labels


def test_round_trip() -> None:
    (p,) = parse_text(f"{ABC} WITHIN 5").patterns
    assert pattern_text(p).splitlines()[0] == ABC


@pytest.mark.parametrize(
    ("text", "kind", "message", "column"),
    [
        ("PATTERN p: A? a", PatternSemanticError, "an optional step A? a must be an element of a SEQ", 12),
        ("PATTERN p: SEQ(A? a, B? b)", PatternSemanticError, "a SEQ needs at least one step that is not optional", 12),
    ],
)
def test_errors_with_carets(text: str, kind: type[Exception], message: str, column: int) -> None:
    with pytest.raises(kind) as err:
        parse_text(text)
    assert message in str(err.value)
    assert f"<pattern>:1:{column}:" in str(err.value)


# ----------------------------------------------------------------------------- properties


@st.composite
def optional_patterns(draw: Any, name: str = "p") -> Any:
    p = draw(patterns(max_vars=4, max_kleene=1, name=name, min_window=1))
    return repetitions(draw, p, optional=True, bounded=draw(st.booleans()))


@SETTINGS
@given(st.data(), optional_patterns(), streams(max_size=8))
def test_engine_equals_reference(data: Any, p: Any, events: list[Event]) -> None:
    assume(has_forms(p))
    (checked,) = parse_text(pattern_text(p)).patterns  # the language accepts what was drawn
    assert checked.structure == p.structure
    tie = tie_rules(data.draw, [p])
    assert sorted_matches(run_on("python", [p], events, tie)) == sorted_matches(run_on("reference", [p], events, tie))


@SETTINGS
@given(st.data(), optional_patterns("p"), optional_patterns("q"), streams(max_size=7))
def test_merged_engine_equals_reference(data: Any, p: Any, q: Any, events: list[Event]) -> None:
    assume(has_forms(p) or has_forms(q))
    pats = [p, q]
    tie = tie_rules(data.draw, pats)
    assert sorted_matches(run_on("python", pats, events, tie)) == sorted_matches(run_on("reference", pats, events, tie))


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not built")
@SETTINGS
@given(st.data(), optional_patterns("p"), optional_patterns("q"), streams(max_size=8))
def test_kernel_equals_python_engine(data: Any, p: Any, q: Any, events: list[Event]) -> None:
    """Single and merged (the kernel's run also checks counts and live partial matches)."""
    assume(has_forms(p) or has_forms(q))
    pats = [p] if data.draw(st.booleans()) else [p, q]
    tie = tie_rules(data.draw, pats)
    assert supports(build_net(pats), tie) == (True, "covered")  # (merge keeps a list and an event in slots apart)
    run_on("kernel", pats, events, tie)
