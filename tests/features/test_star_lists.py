"""Lists of no event or more (issue 42): ``T* v[]`` (``T{0,}``) and ``T{0,m} v[]``. A match
whose list binds no event leaves ``v`` out, as a skipped optional step ``T? v`` or a group of no
iteration: absent from the ids, null in RETURN (every read of it: ``count(v[])``, ``sum``,
``v[1].x``), and every WHERE conjunct reading it holds (``v[i]`` conditions vacuously).

Hand cases run on every engine (the brute-force reference, the Python engine, the compiled
kernel: ``repetition.run_on``); the random forms are drawn by ``repetition.repetitions`` in the
properties of test_bounded.py, test_optional.py, test_until.py and the negation tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from petricep.api import compile_text
from petricep.errors import PatternSemanticError, PatternSyntaxError
from petricep.export.model import build_diagram
from petricep.kernel.lowering import supports
from petricep.lang.growth import growth_warnings
from petricep.lang.parser import parse_text
from petricep.lang.printer import pattern_text
from tests.features.repetition import ENGINES, ids_on, matches, use_engine, want
from tests.features.scenario import stream

ABC = "PATTERN p: SEQ(A a, B* b[], C c)"


@pytest.fixture(autouse=True, params=ENGINES)
def matcher(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every engine, in place of conftest.py's two (``repetition.use_engine``)."""
    yield from use_engine(request)


def test_no_b() -> None:
    assert ids_on(ABC, stream("A@0 C@1")) == want({"a": 0, "c": 1})


def test_one_b() -> None:
    assert ids_on(ABC, stream("A@0 B@1 C@2")) == want({"a": 0, "c": 2}, {"a": 0, "b": [1], "c": 2})


def test_three_bs_every_subset() -> None:
    got = ids_on(ABC, stream("A@0 B@1 B@2 B@3 C@4"))
    lists = [[], [1], [2], [3], [1, 2], [1, 3], [2, 3], [1, 2, 3]]
    assert got == want(*({"a": 0, "c": 4} | ({"b": b} if b else {}) for b in lists))


def test_skip_till_next_match_and_strict_contiguity_take_every_b() -> None:
    for strategy in ("skip-till-next-match", "strict-contiguity"):
        got = ids_on(f"{ABC} WHERE {strategy}", stream("A@0 B@1 B@2 B@3 C@4"))
        assert got == want({"a": 0, "b": [1, 2, 3], "c": 4})


def test_up_to_two() -> None:
    got = ids_on("PATTERN p: SEQ(A a, B{0,2} b[], C c)", stream("A@0 B@1 B@2 B@3 C@4"))
    lists = [[], [1], [2], [3], [1, 2], [1, 3], [2, 3]]
    assert got == want(*({"a": 0, "c": 4} | ({"b": b} if b else {}) for b in lists))


def test_at_the_start() -> None:
    got = ids_on("PATTERN p: SEQ(B* b[], C c)", stream("B@0 B@1 C@2"))
    assert got == want({"c": 2}, {"b": [0], "c": 2}, {"b": [1], "c": 2}, {"b": [0, 1], "c": 2})


def test_at_the_end_each_length_is_a_match() -> None:
    got = ids_on("PATTERN p: SEQ(A a, B* b[])", stream("A@0 B@1 B@2"))
    assert got == want({"a": 0}, {"a": 0, "b": [1]}, {"a": 0, "b": [2]}, {"a": 0, "b": [1, 2]})


def test_negation_right_after_the_list() -> None:
    # no D between the list's last element (a where it is empty) and c
    text = "PATTERN p: SEQ(A a, B* b[], !(D d), C c)"
    got = ids_on(text, stream("A@0 D@1 C@2 A@3 B@4 D@5 C@6 A@7 B@8 C@9"))
    assert got == want(
        {"a": 0, "b": [8], "c": 9},
        {"a": 0, "b": [4, 8], "c": 9},
        {"a": 3, "b": [8], "c": 9},
        {"a": 3, "b": [4, 8], "c": 9},
        {"a": 7, "b": [8], "c": 9},
        {"a": 7, "c": 9},
    )


def test_return_reads_null_over_an_empty_list() -> None:
    text = f"{ABC} RETURN T(n = count(b[]), s = sum(b[].x), f = b[1].x, l = b[last].x)"
    out = matches(text, stream("A@0:x=0 C@1:x=0 A@2:x=1 B@3:x=4 C@4:x=0"))
    got = sorted((str(m["ids"]), str(m["attrs"])) for m in out)
    empty = {"n": None, "s": None, "f": None, "l": None}
    assert got == sorted(
        [
            (str({"a": 0, "c": 1}), str(empty)),
            (str({"a": 0, "c": 4}), str(empty)),
            (str({"a": 2, "c": 4}), str(empty)),
            (str({"a": 0, "b": [3], "c": 4}), str({"n": 1, "s": 4, "f": 4, "l": 4})),
            (str({"a": 2, "b": [3], "c": 4}), str({"n": 1, "s": 4, "f": 4, "l": 4})),
        ]
    )


def test_conditions_over_an_empty_list_hold() -> None:
    # b[1].x < 2 refuses [B1] (x=5) as b, not the match without it; so do the other conjuncts
    for cond in ("b[i].x > b[i-1].x AND b[1].x < 2", "sum(b[].x) < 3", "count(b[]) = 0", "c.x > b[last].x"):
        got = ids_on(f"{ABC} WHERE {cond}", stream("A@0:x=0 B@1:x=5 C@2:x=0"))
        assert got == want({"a": 0, "c": 2}), cond


def test_a_gap_after_an_empty_list_follows_the_step_before_it() -> None:
    # C within 2 of the list's last element, or of a where the list is empty
    text = "PATTERN p: SEQ(A a, B* b[] AFTER 0 TO 3, C c AFTER 0 TO 2)"
    got = ids_on(text, stream("A@0 B@2 C@3 C@4 C@5 A@6 C@7"))
    assert got == want({"a": 0, "b": [1], "c": 2}, {"a": 0, "b": [1], "c": 3}, {"a": 5, "c": 6})


def test_until_ends_the_list() -> None:
    got = ids_on("PATTERN p: SEQ(A a, B* b[] UNTIL D d, C c)", stream("A@0 B@1 D@2 B@3 C@4"))
    assert got == want({"a": 0, "c": 4}, {"a": 0, "b": [1], "c": 4}, {"a": 0, "b": [3], "c": 4})


def test_round_trip_kernel_diagram_and_growth_warning() -> None:
    for src in ("SEQ(A a, B* b[], C c)", "SEQ(A a, B{0,2} b[], C c)", "SEQ(A a, B{0,1} b[], C c)"):
        (p,) = parse_text(f"PATTERN p: {src} WITHIN 5").patterns
        assert pattern_text(p).splitlines()[0] == f"PATTERN p: {src}"
    assert pattern_text(parse_text("PATTERN p: SEQ(A a, B{0,} b[], C c)").patterns[0]) == ABC
    star, upto = parse_text(f"{ABC} WITHIN 5\nPATTERN q: SEQ(A a, B{{0,2}} b[], C c) WITHIN 5").patterns
    assert len(growth_warnings([star])) == 1
    assert growth_warnings([upto]) == []
    net = compile_text(f"{ABC} WITHIN 5")
    assert supports(net) == (True, "covered")
    assert [pl.label for pl in net.patterns[0].places] == ["start", "a", "a;b{1,}", "a;c", "a;b{1,};c"]
    labels = {n.label[0] for n in build_diagram(net, merged=False).nodes if n.label}
    assert {"B b[1]", "B+ b[i]", "a;c", "a;b{1,}"} <= labels


@pytest.mark.parametrize(
    ("text", "kind", "message", "column"),
    [
        ("PATTERN p: B* b[]", PatternSemanticError, "a list of no event or more, B* b[], must be an element of a SEQ", 12),
        ("PATTERN p: AND(B* b[], C c)", PatternSemanticError, "a list of no event or more, B* b[], must be an element of a SEQ", 16),
        ("PATTERN p: SEQ(A? a, B* b[])", PatternSemanticError, "a SEQ needs at least one step that is not optional", 12),
        ("PATTERN p: SEQ(B* b[], C{0,2} c[])", PatternSemanticError, "a SEQ needs at least one step that is not optional", 12),
        ("PATTERN p: SEQ(A a, B* b)", PatternSyntaxError, "unexpected ')'; expected '['", 25),
        ("PATTERN p: SEQ(A a, B{0} b[])", PatternSyntaxError, "a repetition {0} binds nothing: leave the step out", 23),
        ("PATTERN p: SEQ(A a, B/ b[])", PatternSyntaxError, "a list's repetition is +, * or {n,m}, not '/'", 22),
        (
            "PATTERN p: SEQ(B* b[], C c AFTER 0 TO 2, D d)",
            PatternSemanticError,
            "the steps before C c are optional (B* b[]): when they are left out it has nothing to follow: name one with FROM",
            28,
        ),
    ],
)
def test_errors_with_carets(text: str, kind: type[Exception], message: str, column: int) -> None:
    with pytest.raises(kind) as err:
        parse_text(text)
    assert message in str(err.value)
    assert f"<pattern>:1:{column}:" in str(err.value)


def test_the_documented_examples_parse_and_run_on_the_kernel() -> None:
    from petricep.merge import build_net

    doc = (Path(__file__).resolve().parents[2] / "docs" / "LANGUAGE.md").read_text()
    block = doc.split("### Bounded and optional steps", 1)[1].split("```", 2)[1]
    parsed = parse_text(block, "LANGUAGE.md")
    assert [p.name for p in parsed.patterns] == ["rise_then_drop", "chased", "retried", "run"]
    assert supports(build_net(list(parsed.patterns))) == (True, "covered")
    chased = "PATTERN chased" + block.split("PATTERN chased", 1)[1].split("PATTERN retried", 1)[0]
    row = "customer=1,ts={}"
    s = " ".join(f"{t}@{i}:{row.format(i)}" for i, t in enumerate(["order", "payment", "order", "reminder", "payment"]))
    out = matches(chased, stream(s))
    assert sorted((str(m["ids"]), m["attrs"]["reminders"]) for m in out) == sorted(
        [
            (str({"o": 0, "p": 1}), None),
            (str({"o": 0, "p": 4}), None),
            (str({"o": 2, "p": 4}), None),
            (str({"o": 0, "r": [3], "p": 4}), 1),
            (str({"o": 2, "r": [3], "p": 4}), 1),
        ]
    )
